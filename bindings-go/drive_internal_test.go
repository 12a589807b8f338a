package phaseoagent

import (
	"context"
	"runtime"
	"testing"
)

// A driver's C buffer outlives collections: runs with a collection between each leave the
// number of buffers where it was (a sync.Pool dropped them at every collection, and the C
// memory with them was never freed).
func TestDriverBuffersSurviveCollections(t *testing.T) {
	agent, err := CreateAgent(AgentDefinition{ID: "buffers", Tools: []Tool{{
		ID: "add", Description: "Add.",
		Execute: func(input any, _ RuntimeContext) (any, error) { return 1, nil },
	}}})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	run := func() {
		t.Helper()
		client, err := NewScriptedClient([]map[string]any{
			{"toolCalls": []any{map[string]any{"id": "c1", "name": "add", "arguments": "{}"}}},
			{"text": "done"},
		}, 0)
		if err != nil {
			t.Fatal(err)
		}
		r, err := agent.Run(context.Background(), RunOptions{Input: "go", Client: client})
		if err != nil || r.Output != "done" {
			t.Fatalf("run: %v %v", r.Output, err)
		}
	}
	run()
	before := liveBatches.Load()
	for i := 0; i < 100; i++ {
		runtime.GC()
		run()
	}
	if after := liveBatches.Load(); after > before+1 {
		t.Fatalf("C buffers: %d before 100 runs with a collection before each, %d after", before, after)
	}
}

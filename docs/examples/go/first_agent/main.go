// The first agent: one tool that needs approval, a scripted model, a pause and its continue.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"time"

	pa "github.com/phaseo/agent-sdk-go"
)

func main() {
	deploy := pa.DefineTool(pa.Tool{
		ID:              "deploy",
		Description:     "Deploy a release",
		RequireApproval: true,
		Timeout:         5 * time.Second,
		Parameters: map[string]any{
			"type":       "object",
			"properties": map[string]any{"env": map[string]any{"type": "string"}},
			"required":   []any{"env"},
		},
		Execute: func(input any, rt pa.RuntimeContext) (any, error) { // rt.Ctx ends on timeout
			_ = rt.EmitProgress(map[string]any{"phase": "rolling out"})
			return map[string]any{"deployed": input.(map[string]any)["env"], "key": rt.ToolCall.ID}, nil
		},
	})
	agent, err := pa.CreateAgent(pa.AgentDefinition{ID: "ops", Tools: []pa.Tool{deploy}})
	if err != nil {
		log.Fatal(err)
	}
	defer agent.Close()
	// A scripted model: the first answer calls the tool, the second is the final text.
	client, err := pa.NewScriptedClient([]map[string]any{
		{"toolCalls": []any{map[string]any{"id": "c1", "name": "deploy", "arguments": `{"env":"prod"}`}}},
		{"text": "Deployed."},
	}, 0)
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background() // cancelling ctx cancels the run
	paused, err := agent.Run(ctx, pa.RunOptions{Input: "deploy to prod", Client: client})
	if err != nil {
		log.Fatal(err)
	}
	stored, _ := json.Marshal(paused) // persist anywhere; any language continues it
	var state pa.RunResult
	if err := json.Unmarshal(stored, &state); err != nil {
		log.Fatal(err)
	}
	done, err := agent.Continue(ctx, pa.ContinueOptions{
		Run: state, Client: client, Approvals: []pa.ToolDecision{{ToolCallID: "c1"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(done.Output) // Deployed.
}

package phaseoagent_test

import (
	"context"
	"strings"
	"testing"

	pa "github.com/phaseo/agent-sdk-go"
)

// An agent as a tool (docs/behaviour.md §18): a nested approval pauses the outer run as
// c1/n1, the outer Continue from the stored JSON completes it, and the nested events name
// their parent call.
func TestAgentAsToolNestedApproval(t *testing.T) {
	researcher := mustAgent(t, pa.AgentDefinition{ID: "researcher", Tools: []pa.Tool{
		{ID: "lookup", RequireApproval: true, Execute: func(any, pa.RuntimeContext) (any, error) { return "fact", nil }},
	}})
	boss := mustAgent(t, pa.AgentDefinition{ID: "boss", Tools: []pa.Tool{researcher.AsTool(pa.AsToolOptions{Description: "Researches"})}})
	client := scripted(t, callWith("c1", "researcher", `{"input":"topic"}`), callWith("n1", "lookup", `{}`),
		textResponse("inner done"), textResponse("All done."))
	paused := run(t, boss, pa.RunOptions{Input: "study", Client: client})
	pending := paused.Pending()
	if len(pending) != 1 || pending[0].Call.ID != "c1/n1" || pending[0].Call.Name != "lookup" || pending[0].Kind != "approval" {
		t.Fatalf("pending %+v", pending)
	}
	_, err := boss.Continue(context.Background(), pa.ContinueOptions{StateJSON: paused.JSON(), Client: client,
		Approvals: []pa.ToolDecision{{ToolCallID: "c1/n9"}}})
	if err == nil || !strings.Contains(err.Error(), "Unknown tool call c1/n9") {
		t.Fatalf("refusal: %v", err)
	}
	events := &eventsOf{}
	done, err := boss.Continue(context.Background(), pa.ContinueOptions{StateJSON: paused.JSON(), Client: client,
		OnEvent: events.handler, Approvals: []pa.ToolDecision{{ToolCallID: "c1/n1"}}})
	if err != nil || done.Status() != pa.StatusCompleted || done.Output != "All done." {
		t.Fatalf("continue: %v %v %v", done.Status(), done.Output, err)
	}
	nested := 0
	for _, e := range events.list {
		if e.ParentToolCallID == "c1" {
			nested++
		}
	}
	if nested == 0 || toolMessages(done)["c1"].Content != "inner done" {
		t.Fatalf("%d nested events; c1's message %+v", nested, toolMessages(done)["c1"])
	}
}

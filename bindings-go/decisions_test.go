package phaseoagent_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	pa "github.com/phaseo/agent-sdk-go"
)

// gatedAgent has "deploy" (approval needed, env staging|production) recording the inputs
// it ran with.
func gatedAgent(t *testing.T, ran *[]any, mu *sync.Mutex) *pa.Agent {
	return mustAgent(t, pa.AgentDefinition{ID: "ops", Tools: []pa.Tool{
		pa.DefineTool(pa.Tool{ID: "deploy", RequireApproval: true,
			Parameters: map[string]any{"type": "object", "required": []any{"env"}, "additionalProperties": false,
				"properties": map[string]any{"env": map[string]any{"type": "string", "enum": []any{"staging", "production"}}}},
			Execute: func(input any, rt pa.RuntimeContext) (any, error) {
				mu.Lock()
				defer mu.Unlock()
				*ran = append(*ran, input)
				return input, nil
			}}),
	}})
}

// eventsOf collects a run's events.
type eventsOf struct {
	mu   sync.Mutex
	list []pa.AgentEvent
}

func (e *eventsOf) handler(ev pa.AgentEvent) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, ev)
}

func (e *eventsOf) ofType(typ string) []pa.AgentEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := []pa.AgentEvent{}
	for _, ev := range e.list {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

// An approval with an edited input runs the tool with it; the history shows what ran.
func TestApprovalWithEditedInput(t *testing.T) {
	var ran []any
	var mu sync.Mutex
	agent := gatedAgent(t, &ran, &mu)
	client := scripted(t, callWith("c1", "deploy", `{"env":"production"}`), textResponse("Deployed to staging."))
	paused := run(t, agent, pa.RunOptions{Input: "deploy", Client: client})
	events := &eventsOf{}
	done, err := agent.Continue(context.Background(), pa.ContinueOptions{Run: paused, Client: client, OnEvent: events.handler,
		Approvals: []pa.ToolDecision{{ToolCallID: "c1", EditedInput: map[string]any{"env": "staging"}}}})
	if err != nil || done.Status() != pa.StatusCompleted {
		t.Fatalf("continue: %v %v", done.Status(), err)
	}
	if asJSON(t, ran) != `[{"env":"staging"}]` {
		t.Fatalf("ran with %s", asJSON(t, ran))
	}
	var call pa.ToolCall
	for _, m := range done.Messages {
		if m.Role == "assistant" && len(m.ToolCalls) == 1 {
			call = m.ToolCalls[0]
		}
	}
	if call.ID != "c1" || asJSON(t, call.Input) != `{"env":"staging"}` {
		t.Fatalf("the history's call is %+v", call)
	}
	contains(t, toolMessages(done)["c1"].Content, `"env":"staging"`)
	started := events.ofType("tool.started")
	if len(started) != 1 || started[0].Details["inputEdited"] != true {
		t.Fatalf("tool.started: %+v", started)
	}
	contains(t, asJSON(t, done.StepResults), `"originalInput":{"env":"production"}`)
}

// An edited input the tool's parameters refuse refuses the continue; the state still works.
func TestInvalidEditedInputKeepsState(t *testing.T) {
	var ran []any
	var mu sync.Mutex
	agent := gatedAgent(t, &ran, &mu)
	client := scripted(t, callWith("c1", "deploy", `{"env":"production"}`), textResponse("Deployed."))
	paused := run(t, agent, pa.RunOptions{Input: "deploy", Client: client})
	_, err := agent.Continue(context.Background(), pa.ContinueOptions{Run: paused, Client: client,
		Approvals: []pa.ToolDecision{{ToolCallID: "c1", EditedInput: map[string]any{"env": "moon"}}}})
	var perr *pa.Error
	if !errors.As(err, &perr) || perr.Code != pa.CodeContinueInvalid {
		t.Fatalf("expected continue_invalid, got %v", err)
	}
	contains(t, perr.Message, "Edited input for tool call c1 is invalid")
	if len(ran) != 0 {
		t.Fatalf("the tool ran: %v", ran)
	}
	done, err := agent.Continue(context.Background(), pa.ContinueOptions{Run: paused, Client: client,
		Approvals: []pa.ToolDecision{{ToolCallID: "c1"}}})
	if err != nil || done.Status() != pa.StatusCompleted || asJSON(t, ran) != `[{"env":"production"}]` {
		t.Fatalf("continue after the refusal: %v %v ran %v", done.Status(), err, ran)
	}
}

// A response answers an approval-gated call in the tool's place: the tool never runs.
func TestResponseInsteadOfRunning(t *testing.T) {
	var ran []any
	var mu sync.Mutex
	agent := gatedAgent(t, &ran, &mu)
	client := scripted(t, callWith("c1", "deploy", `{"env":"production"}`), textResponse("Done by hand."))
	paused := run(t, agent, pa.RunOptions{Input: "deploy", Client: client})
	events := &eventsOf{}
	done, err := agent.Continue(context.Background(), pa.ContinueOptions{Run: paused, Client: client, OnEvent: events.handler,
		Responses: []pa.ToolOutput{{ToolCallID: "c1", Output: map[string]any{"deployedBy": "Ada"}}}})
	if err != nil || done.Status() != pa.StatusCompleted || done.Output != "Done by hand." {
		t.Fatalf("continue: %v %v", done.Status(), err)
	}
	if len(ran) != 0 {
		t.Fatalf("the tool ran: %v", ran)
	}
	msg := toolMessages(done)["c1"]
	if msg.IsError || msg.Content != `{"deployedBy":"Ada"}` {
		t.Fatalf("tool message %+v", msg)
	}
	completed := events.ofType("tool.completed")
	if len(events.ofType("tool.started")) != 0 || len(completed) != 1 || completed[0].Details["respondedByHuman"] != true {
		t.Fatalf("events: started %d, completed %+v", len(events.ofType("tool.started")), completed)
	}
	// A second continue of the paused state may not decide c1 twice.
	_, err = agent.Continue(context.Background(), pa.ContinueOptions{Run: paused, Client: client,
		Approvals: []pa.ToolDecision{{ToolCallID: "c1"}}, Responses: []pa.ToolOutput{{ToolCallID: "c1", Output: 1}}})
	var perr *pa.Error
	if !errors.As(err, &perr) || perr.Code != pa.CodeContinueInvalid {
		t.Fatalf("expected continue_invalid, got %v", err)
	}
	contains(t, perr.Message, "Tool call c1 has more than one decision")
}

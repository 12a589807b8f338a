package phaseoagent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	pa "github.com/phaseo/agent-sdk-go"
)

// A tool's MaxCalls refuses the calls beyond it; the model goes on without them.
func TestMaxCallsRefusesBeyondBudget(t *testing.T) {
	var runs int
	var mu sync.Mutex
	agent := mustAgent(t, pa.AgentDefinition{ID: "budget", Tools: []pa.Tool{
		pa.DefineTool(pa.Tool{ID: "search", MaxCalls: pa.Ptr(1), Execute: func(any, pa.RuntimeContext) (any, error) {
			mu.Lock()
			defer mu.Unlock()
			runs++
			return "found", nil
		}}),
	}})
	events := &eventsOf{}
	done := run(t, agent, pa.RunOptions{Input: "go", OnEvent: events.handler,
		Client: scripted(t, calls("search", "search"), textResponse("One search was enough."))})
	if done.Status() != pa.StatusCompleted || runs != 1 {
		t.Fatalf("status %s, runs %d", done.Status(), runs)
	}
	refused := toolMessages(done)["c2"]
	if !refused.IsError || refused.Content != `{"error":"Tool search may be called at most 1 times in a run"}` {
		t.Fatalf("refused call's message %+v", refused)
	}
	if len(events.ofType("tool.started")) != 1 || len(events.ofType("tool.failed")) != 1 {
		t.Fatalf("events: %d started, %d failed", len(events.ofType("tool.started")), len(events.ofType("tool.failed")))
	}
}

// A MaxCalls below 1 is the core's definition_invalid, naming the key.
func TestMaxCallsZeroRefused(t *testing.T) {
	_, err := pa.CreateAgent(pa.AgentDefinition{ID: "budget", Tools: []pa.Tool{
		{ID: "t", MaxCalls: pa.Ptr(0), Execute: func(any, pa.RuntimeContext) (any, error) { return 1, nil }},
	}})
	var perr *pa.Error
	if !errors.As(err, &perr) || perr.Code != pa.CodeDefinitionInvalid {
		t.Fatalf("expected definition_invalid, got %v", err)
	}
	contains(t, perr.Message, "maxCalls must be a whole number of at least 1, got 0")
	_, err = pa.CreateAgent(pa.AgentDefinition{ID: "retry", Tools: []pa.Tool{
		{ID: "t", Retry: &pa.ToolRetry{}, Execute: func(any, pa.RuntimeContext) (any, error) { return 1, nil }},
	}})
	if !errors.As(err, &perr) || perr.Code != pa.CodeDefinitionInvalid || !strings.Contains(perr.Message, "retry.maxAttempts") {
		t.Fatalf("expected definition_invalid naming retry.maxAttempts, got %v", err)
	}
}

// A failing attempt runs again: attempts count from 1, each retry is an event, and the
// idempotency key is the same on every attempt.
func TestRetryAttemptsAndIdempotencyKey(t *testing.T) {
	var attempts []int
	var keys []string
	var mu sync.Mutex
	agent := mustAgent(t, pa.AgentDefinition{ID: "retry", Tools: []pa.Tool{
		pa.DefineTool(pa.Tool{ID: "pay", Retry: &pa.ToolRetry{MaxAttempts: 3, Backoff: 10 * time.Millisecond},
			Execute: func(_ any, rt pa.RuntimeContext) (any, error) {
				mu.Lock()
				defer mu.Unlock()
				attempts = append(attempts, rt.Attempt)
				keys = append(keys, rt.IdempotencyKey)
				if rt.Attempt < 3 {
					return nil, fmt.Errorf("service unavailable %d", rt.Attempt)
				}
				return rt.Attempt, nil
			}}),
	}})
	events := &eventsOf{}
	done := run(t, agent, pa.RunOptions{Input: "pay", OnEvent: events.handler,
		Client: scripted(t, calls("pay"), textResponse("Paid."))})
	if done.Status() != pa.StatusCompleted || toolMessages(done)["c1"].Content != "3" {
		t.Fatalf("status %s, message %+v", done.Status(), toolMessages(done)["c1"])
	}
	if asJSON(t, attempts) != "[1,2,3]" {
		t.Fatalf("attempts %v", attempts)
	}
	want := done.Run.ID + ":c1"
	for _, k := range keys {
		if k != want {
			t.Fatalf("idempotency keys %v, want %q each", keys, want)
		}
	}
	retrying := events.ofType("tool.retrying")
	if len(retrying) != 2 || len(events.ofType("tool.started")) != 1 {
		t.Fatalf("tool.retrying %+v", retrying)
	}
	for i, e := range retrying {
		d := e.Details
		if d["toolCallId"] != "c1" || d["toolName"] != "pay" || d["attempt"] != float64(i+2) ||
			!strings.Contains(fmt.Sprint(d["error"]), fmt.Sprintf("service unavailable %d", i+1)) {
			t.Fatalf("tool.retrying %d: %v", i, d)
		}
	}
}

// A run's own ToolExecution.MaxToolCalls bounds its tool calls (rejections count); a
// continue may set it too.
func TestRunMaxToolCalls(t *testing.T) {
	var ran []any
	var mu sync.Mutex
	agent := gatedAgent(t, &ran, &mu)
	client := scripted(t, callWith("c1", "deploy", `{"env":"staging"}`),
		callWith("c2", "deploy", `{"env":"staging"}`), textResponse("Stopped."))
	paused := run(t, agent, pa.RunOptions{Input: "deploy", Client: client,
		ToolExecution: pa.ToolExecutionConfig{MaxToolCalls: pa.Ptr(1)}})
	done, err := agent.Continue(context.Background(), pa.ContinueOptions{Run: paused, Client: client,
		Rejections:    []pa.ToolDecision{{ToolCallID: "c1", Reason: "no"}},
		ToolExecution: &pa.ToolExecutionConfig{MaxToolCalls: pa.Ptr(1)}})
	if err != nil || done.Status() != pa.StatusCompleted || len(ran) != 0 {
		t.Fatalf("continue: %v %v ran %v", done.Status(), err, ran)
	}
	refused := toolMessages(done)["c2"]
	if !refused.IsError || refused.Content != `{"error":"A run may make at most 1 tool calls"}` {
		t.Fatalf("refused call's message %+v", refused)
	}
	_, err = agent.Run(context.Background(), pa.RunOptions{Input: "x", Client: client,
		ToolExecution: pa.ToolExecutionConfig{MaxToolCalls: pa.Ptr(0)}})
	var perr *pa.Error
	if !errors.As(err, &perr) || !strings.Contains(perr.Message, "toolExecution.maxToolCalls") {
		t.Fatalf("expected an error naming toolExecution.maxToolCalls, got %v", err)
	}
}

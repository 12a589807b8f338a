package phaseoagent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	pa "github.com/phaseo/agent-sdk-go"
)

// calls is a scripted model response calling the given tools (id i+1 = "c<i+1>").
func calls(names ...string) map[string]any {
	list := []any{}
	for i, n := range names {
		list = append(list, map[string]any{"id": fmt.Sprintf("c%d", i+1), "name": n, "arguments": "{}"})
	}
	return map[string]any{"toolCalls": list}
}

func callWith(id, name, args string) map[string]any {
	return map[string]any{"toolCalls": []any{map[string]any{"id": id, "name": name, "arguments": args}}}
}

func textResponse(t string) map[string]any { return map[string]any{"text": t} }

func scripted(t testing.TB, entries ...map[string]any) *pa.ScriptedClient {
	t.Helper()
	c, err := pa.NewScriptedClient(entries, 0)
	if err != nil {
		t.Fatalf("NewScriptedClient: %v", err)
	}
	return c
}

func mustAgent(t testing.TB, def pa.AgentDefinition) *pa.Agent {
	t.Helper()
	a, err := pa.CreateAgent(def)
	if err != nil {
		t.Fatalf("CreateAgent: %v", err)
	}
	t.Cleanup(a.Close)
	return a
}

func run(t testing.TB, a *pa.Agent, o pa.RunOptions) pa.RunResult {
	t.Helper()
	r, err := a.Run(context.Background(), o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return r
}

// toolMessages are the tool messages of a result, by call id.
func toolMessages(r pa.RunResult) map[string]pa.Message {
	out := map[string]pa.Message{}
	for _, m := range r.Messages {
		if m.Role == "tool" {
			out[m.ToolCallID] = m
		}
	}
	return out
}

// recorder is a Go model client recording requests and answering from a script.
type recorder struct {
	mu       sync.Mutex
	script   []pa.ModelResponse
	requests []pa.ModelRequest
}

func (r *recorder) Generate(_ context.Context, req pa.ModelRequest) (pa.ModelResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, req)
	if len(r.script) == 0 {
		return pa.ModelResponse{}, fmt.Errorf("script exhausted")
	}
	next := r.script[0]
	r.script = r.script[1:]
	return next, nil
}

func asJSON(t testing.TB, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(data)
}

func contains(t testing.TB, text, want string) {
	t.Helper()
	if !strings.Contains(text, want) {
		t.Fatalf("expected %q to contain %q", text, want)
	}
}

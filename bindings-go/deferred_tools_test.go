package phaseoagent_test

import (
	"context"
	"encoding/json"
	"reflect"
	"sync/atomic"
	"testing"

	pa "github.com/phaseo/agent-sdk-go"
)

// offeredIDs are the ids of the tools one model request offered, in offered order.
func offeredIDs(req pa.ModelRequest) []string {
	ids := []string{}
	for _, t := range req.Tools {
		ids = append(ids, t.ID)
	}
	return ids
}

func expectOffer(t *testing.T, req pa.ModelRequest, want ...string) {
	t.Helper()
	if got := offeredIDs(req); !reflect.DeepEqual(got, want) {
		t.Fatalf("offered %v, want %v", got, want)
	}
}

func toolCall(id, name, args string) pa.ModelResponse {
	return pa.ModelResponse{ToolCalls: []pa.ModelToolCall{{ID: id, Name: name, Arguments: args}}}
}

// weatherAgent has an always-loaded tool that needs approval (to pause the run) and a
// deferred weather tool that counts its executions.
func weatherAgent(t *testing.T, executions *atomic.Int32) *pa.Agent {
	return mustAgent(t, pa.AgentDefinition{ID: "deferred", Tools: []pa.Tool{
		{ID: "gate", Description: "Needs approval", RequireApproval: true,
			Execute: func(any, pa.RuntimeContext) (any, error) { return "opened", nil }},
		{ID: "lookup_weather", Description: "Current weather of a city", DeferLoading: true,
			Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
			Execute: func(input any, _ pa.RuntimeContext) (any, error) {
				executions.Add(1)
				return "sunny in " + input.(map[string]any)["city"].(string), nil
			}},
	}})
}

// A deferred tool is offered only once tool_search has found it (docs/behaviour.md §17);
// the state keeps it loaded, so a continue in a fresh agent still offers it.
func TestDeferredToolLoadedByToolSearch(t *testing.T) {
	var executions atomic.Int32
	first := &recorder{script: []pa.ModelResponse{
		toolCall("c1", "tool_search", `{"query":"weather"}`),
		toolCall("c2", "lookup_weather", `{"city":"Oslo"}`),
		toolCall("c3", "gate", `{}`),
	}}
	paused := run(t, weatherAgent(t, &executions), pa.RunOptions{Input: "weather?", Client: first})
	if paused.Status() != pa.StatusWaitingForHuman || len(first.requests) != 3 {
		t.Fatalf("status %s after %d requests", paused.Status(), len(first.requests))
	}
	// Not offered at first; tool_search comes after the always-loaded tools and the found
	// tool joins at the end from the next request on.
	expectOffer(t, first.requests[0], "gate", "tool_search")
	expectOffer(t, first.requests[1], "gate", "tool_search", "lookup_weather")
	contains(t, toolMessages(paused)["c1"].Content, `"id":"lookup_weather"`)
	if toolMessages(paused)["c2"].Content != "sunny in Oslo" || executions.Load() != 1 {
		t.Fatalf("weather call %+v, executions %d", toolMessages(paused)["c2"], executions.Load())
	}
	if !reflect.DeepEqual(paused.Run.LoadedTools, []string{"lookup_weather"}) {
		t.Fatalf("loaded tools %v", paused.Run.LoadedTools)
	}
	var state struct {
		Run struct {
			LoadedTools []string `json:"loadedTools"`
		} `json:"run"`
	}
	if err := json.Unmarshal([]byte(paused.JSON()), &state); err != nil || !reflect.DeepEqual(state.Run.LoadedTools, []string{"lookup_weather"}) {
		t.Fatalf("state loadedTools %v (%v)", state.Run.LoadedTools, err)
	}

	// Continued from the state text in a fresh agent, as another process would.
	second := &recorder{script: []pa.ModelResponse{
		toolCall("c4", "lookup_weather", `{"city":"Lima"}`),
		{Text: "done"},
	}}
	done, err := weatherAgent(t, &executions).Continue(context.Background(), pa.ContinueOptions{
		StateJSON: paused.JSON(), Client: second, Approvals: []pa.ToolDecision{{ToolCallID: "c3"}}})
	if err != nil {
		t.Fatal(err)
	}
	if done.Status() != pa.StatusCompleted || done.Output != "done" || executions.Load() != 2 {
		t.Fatalf("status %s output %v executions %d", done.Status(), done.Output, executions.Load())
	}
	expectOffer(t, second.requests[0], "gate", "tool_search", "lookup_weather")
	expectOffer(t, second.requests[1], "gate", "tool_search", "lookup_weather")
	if toolMessages(done)["c4"].Content != "sunny in Lima" {
		t.Fatalf("weather call %+v", toolMessages(done)["c4"])
	}
}

// An MCP server's DeferLoading defers all its tools: only tool_search is offered until it
// finds one, which then runs on the server.
func TestMCPServerDeferredTools(t *testing.T) {
	agent := mustAgent(t, pa.AgentDefinition{ID: "everything", MCPServers: []pa.MCPServer{
		{Name: "everything", Command: everythingServer(t), Args: []string{"stdio"}, ToolPrefix: "ev",
			AllowTools: []string{"echo", "get-sum"}, DeferLoading: true},
	}})
	rec := &recorder{script: []pa.ModelResponse{
		toolCall("c1", "tool_search", `{"query":"echo"}`),
		toolCall("c2", "ev_echo", `{"message":"hi"}`),
		{Text: "echoed"},
	}}
	r := run(t, agent, pa.RunOptions{Input: "echo", Client: rec})
	if r.Output != "echoed" || toolMessages(r)["c2"].Content != "Echo: hi" {
		t.Fatalf("output %v messages %+v", r.Output, r.Messages)
	}
	expectOffer(t, rec.requests[0], "tool_search")
	expectOffer(t, rec.requests[1], "tool_search", "ev_echo")
	if !reflect.DeepEqual(r.Run.LoadedTools, []string{"ev_echo"}) {
		t.Fatalf("loaded tools %v", r.Run.LoadedTools)
	}
}

package phaseoagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pa "github.com/phaseo/agent-sdk-go"
)

func deployAgent(t *testing.T, executions *atomic.Int32, store *pa.RunStore) *pa.Agent {
	return mustAgent(t, pa.AgentDefinition{ID: "ops", Store: store, Tools: []pa.Tool{
		pa.DefineTool(pa.Tool{ID: "deploy", RequireApproval: true,
			Parameters: map[string]any{"type": "object", "properties": map[string]any{"env": map[string]any{"type": "string"}}},
			Execute: func(input any, rt pa.RuntimeContext) (any, error) {
				executions.Add(1)
				return map[string]any{"deployed": input.(map[string]any)["env"], "key": rt.ToolCall.ID}, nil
			}}),
	}})
}

// Pause → JSON → continue, in a fresh agent (as another process would).
func TestPauseJSONContinue(t *testing.T) {
	var executions atomic.Int32
	client := scripted(t, callWith("c1", "deploy", `{"env":"prod"}`), textResponse("Deployed."))
	paused := run(t, deployAgent(t, &executions, nil), pa.RunOptions{Input: "deploy", Client: client})
	if paused.Status() != pa.StatusWaitingForHuman || paused.Run.Pause.Kind != "tool_approval" {
		t.Fatalf("status %s", paused.Status())
	}
	if p := paused.Pending(); len(p) != 1 || p[0].Call.ID != "c1" || p[0].Kind != "approval" {
		t.Fatalf("pending %+v", p)
	}
	stored, err := json.Marshal(paused)
	if err != nil {
		t.Fatal(err)
	}
	var restored pa.RunResult
	if err := json.Unmarshal(stored, &restored); err != nil {
		t.Fatal(err)
	}
	other := deployAgent(t, &executions, nil)
	done, err := other.Continue(context.Background(), pa.ContinueOptions{Run: restored, Client: client,
		Approvals: []pa.ToolDecision{{ToolCallID: "c1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if done.Status() != pa.StatusCompleted || done.Output != "Deployed." || executions.Load() != 1 {
		t.Fatalf("status %s output %v executions %d", done.Status(), done.Output, executions.Load())
	}
	contains(t, toolMessages(done)["c1"].Content, `"deployed":"prod"`)
	// The state text works as well as the parsed value.
	again, err := other.Continue(context.Background(), pa.ContinueOptions{StateJSON: string(stored), Client: scripted(t, textResponse("Again.")),
		Rejections: []pa.ToolDecision{{ToolCallID: "c1", Reason: "not today"}}})
	if err != nil || again.Output != "Again." {
		t.Fatalf("continue from text: %v %v", again.Output, err)
	}
	contains(t, toolMessages(again)["c1"].Content, "not today")
}

// A refused continue raises continue_invalid, carries no state and loses nothing.
func TestRefusedContinues(t *testing.T) {
	var executions atomic.Int32
	agent := deployAgent(t, &executions, nil)
	client := scripted(t, callWith("c1", "deploy", `{"env":"prod"}`), textResponse("Deployed."))
	paused := run(t, agent, pa.RunOptions{Input: "deploy", Client: client})
	cases := []struct {
		opts pa.ContinueOptions
		want string
	}{
		{pa.ContinueOptions{}, "Missing approval decision for tool call c1"},
		{pa.ContinueOptions{Approvals: []pa.ToolDecision{{ToolCallID: "zz"}}}, "Unknown tool call zz"},
		{pa.ContinueOptions{ToolOutputs: []pa.ToolOutput{{ToolCallID: "c1", Output: 1}}}, "requires approval; an output cannot be supplied"},
		{pa.ContinueOptions{Approvals: []pa.ToolDecision{{ToolCallID: "c1"}}, Rejections: []pa.ToolDecision{{ToolCallID: "c1"}}}, "both approved and rejected"},
	}
	for _, c := range cases {
		c.opts.Run, c.opts.Client = paused, client
		_, err := agent.Continue(context.Background(), c.opts)
		var perr *pa.Error
		if !errors.As(err, &perr) || perr.Code != pa.CodeContinueInvalid || perr.Result != nil {
			t.Fatalf("%s: err %#v", c.want, err)
		}
		contains(t, perr.Message, c.want)
	}
	_, err := agent.Continue(context.Background(), pa.ContinueOptions{StateJSON: `{"version":99}`, Client: client})
	if !errors.Is(err, pa.ErrStateInvalid) {
		t.Fatalf("bad state: %v", err)
	}
	if executions.Load() != 0 {
		t.Fatal("a refused continue ran the tool")
	}
	done, err := agent.Continue(context.Background(), pa.ContinueOptions{Run: paused, Client: client, Approvals: []pa.ToolDecision{{ToolCallID: "c1"}}})
	if err != nil || done.Status() != pa.StatusCompleted {
		t.Fatalf("after refusals: %v %v", done.Status(), err)
	}
	// A finished run cannot be continued.
	_, err = agent.Continue(context.Background(), pa.ContinueOptions{Run: done, Client: client})
	if !errors.Is(err, pa.ErrContinueInvalid) {
		t.Fatalf("finished run: %v", err)
	}
	contains(t, err.Error(), "is not waiting for human input")
}

// Streams: replayable events, text deltas, the result; cancellation through the ctx.
func TestStreams(t *testing.T) {
	agent := mustAgent(t, pa.AgentDefinition{ID: "streamer", Tools: []pa.Tool{
		{ID: "step", Execute: func(_ any, rt pa.RuntimeContext) (any, error) {
			_ = rt.EmitProgress("half")
			return "stepped", nil
		}},
	}})
	var seen []string
	s := agent.Stream(context.Background(), pa.RunOptions{Input: "go", Client: scripted(t, calls("step"), textResponse("Hello there")),
		OnEvent: func(e pa.AgentEvent) { seen = append(seen, e.Type) }})
	r, err := s.Result()
	if err != nil || r.Output != "Hello there" {
		t.Fatalf("result %v %v", r.Output, err)
	}
	var types []string
	for e := range s.Events() {
		types = append(types, e.Type)
	}
	joined := strings.Join(types, ",")
	for _, want := range []string{"run.started", "tool.started", "tool.preliminary_result", "tool.completed", "run.completed"} {
		contains(t, joined, want)
	}
	if strings.Join(seen, ",") != joined {
		t.Fatalf("OnEvent saw %v, the stream %v", seen, types)
	}
	var deltas []string
	for d := range s.Text() {
		deltas = append(deltas, d)
	}
	if strings.Join(deltas, "|") != "Hello |there" {
		t.Fatalf("text deltas %q", deltas)
	}

	// Cancelling the stream's ctx cancels the run.
	started := make(chan struct{})
	slow := mustAgent(t, pa.AgentDefinition{ID: "slow", Tools: []pa.Tool{
		{ID: "wait", Execute: func(_ any, rt pa.RuntimeContext) (any, error) {
			close(started)
			<-rt.Ctx.Done()
			return nil, rt.Ctx.Err()
		}},
	}})
	ctx, cancel := context.WithCancel(context.Background())
	s2 := slow.Stream(ctx, pa.RunOptions{Input: "go", Client: scripted(t, calls("wait"))})
	<-started
	cancel()
	r2, err := s2.Result()
	if err != nil || r2.Status() != pa.StatusCancelled {
		t.Fatalf("cancelled stream: %s %v", r2.Status(), err)
	}

	// A paused run continues as a stream.
	var executions atomic.Int32
	ops := deployAgent(t, &executions, nil)
	client := scripted(t, callWith("c1", "deploy", `{"env":"dev"}`), textResponse("ok"))
	paused, err := ops.Stream(context.Background(), pa.RunOptions{Input: "deploy", Client: client}).Result()
	if err != nil || paused.Status() != pa.StatusWaitingForHuman {
		t.Fatalf("paused stream: %v", err)
	}
	done, err := ops.ContinueStream(context.Background(), pa.ContinueOptions{Run: paused, Client: client,
		Approvals: []pa.ToolDecision{{ToolCallID: "c1"}}}).Result()
	if err != nil || done.Status() != pa.StatusCompleted || executions.Load() != 1 {
		t.Fatalf("continued stream: %v %v", done.Status(), err)
	}
}

// A Go ModelClient sees each request and answers it; its errors are model failures.
func TestHostModelClient(t *testing.T) {
	rec := &recorder{script: []pa.ModelResponse{
		{ToolCalls: []pa.ModelToolCall{{ID: "c1", Name: "echo", Arguments: `{"v":1}`}}, Usage: &pa.UsageSummary{InputTokens: 3, OutputTokens: 2}},
		{Text: "fine", Cost: 0.25},
	}}
	agent := mustAgent(t, pa.AgentDefinition{ID: "hosted", Instructions: "Be brief.", Model: "m-1", Tools: []pa.Tool{
		{ID: "echo", Execute: func(input any, _ pa.RuntimeContext) (any, error) { return input, nil }},
	}})
	r := run(t, agent, pa.RunOptions{Input: "hi", Client: rec, Context: map[string]any{"user": "ana"}})
	if r.Output != "fine" || r.Usage.TotalTokens != 5 || r.Usage.Cost != 0.25 {
		t.Fatalf("output %v usage %+v", r.Output, r.Usage)
	}
	if len(rec.requests) != 2 || *rec.requests[0].Instructions != "Be brief." || *rec.requests[0].Model != "m-1" ||
		rec.requests[0].Tools[0].ID != "echo" || rec.requests[0].Context.(map[string]any)["user"] != "ana" {
		t.Fatalf("requests %+v", rec.requests)
	}
	last := rec.requests[1].Messages[len(rec.requests[1].Messages)-1]
	if last.Role != "tool" || last.Content != `{"v":1}` {
		t.Fatalf("last message %+v", last)
	}
	_, err := agent.Run(context.Background(), pa.RunOptions{Input: "hi", Client: &recorder{}})
	if !errors.Is(err, pa.ErrModelFailed) {
		t.Fatalf("exhausted script: %v", err)
	}
	contains(t, err.Error(), "script exhausted")
}

// The HTTP clients against a local server: the OpenAI-compatible client (Chat
// Completions) and the gateway client (Responses API).
func TestHTTPClients(t *testing.T) {
	var mu sync.Mutex
	var paths, auths, clients []string
	var bodies []map[string]any
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(data, &body)
		mu.Lock()
		paths = append(paths, r.URL.Path)
		auths = append(auths, r.Header.Get("Authorization"))
		clients = append(clients, r.Header.Get("X-Phaseo-Client"))
		bodies = append(bodies, body)
		n := len(paths)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		chat := strings.HasSuffix(r.URL.Path, "/chat/completions")
		switch {
		case chat && n%2 == 1:
			_, _ = io.WriteString(w, `{"id":"x","model":"test-model","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"add","arguments":"{\"a\":2,\"b\":3}"}}]}}],"usage":{"prompt_tokens":20,"completion_tokens":5,"total_tokens":25}}`)
		case chat:
			_, _ = io.WriteString(w, `{"id":"y","model":"test-model","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"5"}}],"usage":{"prompt_tokens":30,"completion_tokens":4,"total_tokens":34}}`)
		case n%2 == 1:
			_, _ = io.WriteString(w, `{"id":"r1","model":"test-model","status":"completed","output":[{"type":"function_call","id":"fc_1","call_id":"call_1","name":"add","arguments":"{\"a\":2,\"b\":3}"}],"usage":{"input_tokens":20,"output_tokens":5,"total_tokens":25}}`)
		default:
			_, _ = io.WriteString(w, `{"id":"r2","model":"test-model","status":"completed","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"5"}]}],"usage":{"input_tokens":30,"output_tokens":4,"total_tokens":34}}`)
		}
	}))
	defer server.Close()
	agent := mustAgent(t, pa.AgentDefinition{ID: "calc", Model: "test-model", Tools: []pa.Tool{
		{ID: "add", Parameters: map[string]any{"type": "object", "required": []any{"a", "b"}},
			Execute: func(input any, _ pa.RuntimeContext) (any, error) {
				m := input.(map[string]any)
				return m["a"].(float64) + m["b"].(float64), nil
			}},
	}})
	openai, err := pa.NewOpenAICompatibleClient(pa.HTTPClientOptions{BaseURL: server.URL + "/v1", APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	gateway, err := pa.NewGatewayClient(pa.HTTPClientOptions{BaseURL: server.URL + "/v1", APIKey: "sk-gw"})
	if err != nil {
		t.Fatal(err)
	}
	for _, client := range []pa.ModelClient{openai, gateway} {
		r := run(t, agent, pa.RunOptions{Input: "2+3?", Client: client})
		if r.Output != "5" || toolMessages(r)["call_1"].Content != "5" || r.Usage.TotalTokens != 59 {
			t.Fatalf("output %v usage %+v messages %+v", r.Output, r.Usage, r.Messages)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"/v1/chat/completions", "/v1/chat/completions", "/v1/responses", "/v1/responses"}
	if strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Fatalf("paths %v", paths)
	}
	if auths[0] != "Bearer sk-test" || auths[2] != "Bearer sk-gw" {
		t.Fatalf("auth %v", auths)
	}
	if clients[0] != "phaseo-agent-go" || clients[3] != "phaseo-agent-go" {
		t.Fatalf("X-Phaseo-Client %v", clients)
	}
	if bodies[0]["model"] != "test-model" {
		t.Fatalf("body %v", bodies[0])
	}
	if _, err := pa.NewOpenAICompatibleClient(pa.HTTPClientOptions{Preset: "x"}); !errors.Is(err, pa.ErrDefinitionInvalid) {
		t.Fatalf("preset on openai: %v", err)
	}
	// An HTTP error that retrying cannot fix is a gateway error with its status.
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":{"message":"bad key"}}`)
	}))
	defer failing.Close()
	bad, _ := pa.NewGatewayClient(pa.HTTPClientOptions{BaseURL: failing.URL + "/v1", APIKey: "nope"})
	_, err = agent.Run(context.Background(), pa.RunOptions{Input: "x", Client: bad})
	if !errors.Is(err, pa.ErrGateway) {
		t.Fatalf("401: %v", err)
	}
}

// Run stores: a paused run continues by id (once), from another agent value, in memory
// and in SQLite; the store lists and loads runs.
func TestRunStores(t *testing.T) {
	sqlite, err := pa.OpenSQLiteStore(filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	for name, store := range map[string]*pa.RunStore{"memory": pa.NewMemoryStore(), "sqlite": sqlite} {
		t.Run(name, func(t *testing.T) {
			var executions atomic.Int32
			client := scripted(t, callWith("c1", "deploy", `{"env":"prod"}`), textResponse("Deployed."))
			paused := run(t, deployAgent(t, &executions, store), pa.RunOptions{Input: "deploy", Client: client})
			row, err := store.Load(paused.Run.ID)
			if err != nil || row == nil || row.Status != pa.StatusWaitingForHuman {
				t.Fatalf("load: %+v %v", row, err)
			}
			page, err := store.List(pa.ListQuery{Statuses: []string{pa.StatusWaitingForHuman}})
			if err != nil || len(page.Runs) != 1 || page.Runs[0].RunID != paused.Run.ID {
				t.Fatalf("list: %+v %v", page, err)
			}
			other := deployAgent(t, &executions, store)
			done, err := other.Continue(context.Background(), pa.ContinueOptions{RunID: paused.Run.ID, Client: client,
				Approvals: []pa.ToolDecision{{ToolCallID: "c1"}}})
			if err != nil || done.Status() != pa.StatusCompleted {
				t.Fatalf("continue by id: %v", err)
			}
			_, err = other.Continue(context.Background(), pa.ContinueOptions{RunID: paused.Run.ID, Client: client,
				Approvals: []pa.ToolDecision{{ToolCallID: "c1"}}})
			if !errors.Is(err, pa.ErrContinueInvalid) || executions.Load() != 1 {
				t.Fatalf("second continue: %v (executions %d)", err, executions.Load())
			}
			row, _ = store.Load(paused.Run.ID)
			state, err := row.State()
			if err != nil || state.Status() != pa.StatusCompleted {
				t.Fatalf("stored state: %v", err)
			}
			if n, err := store.Prune([]string{"completed"}, time.Hour); n != 0 || err != nil {
				t.Fatalf("prune of runs older than an hour: %d %v", n, err)
			}
			if _, err := store.Prune([]string{"done"}, 0); err == nil || !strings.Contains(err.Error(), "unknown run status 'done'") {
				t.Fatalf("prune of an unknown status: %v", err)
			}
			if n, err := store.Prune([]string{"completed"}, -time.Minute); n != 1 || err != nil {
				t.Fatalf("prune of every completed run: %d %v", n, err)
			}
			if deleted, err := store.Delete(paused.Run.ID); deleted || err != nil {
				t.Fatalf("delete of a pruned run: %v %v", deleted, err)
			}
			if row, _ := store.Load(paused.Run.ID); row != nil {
				t.Fatal("pruned run still loads")
			}
		})
	}
	_ = time.Second
}

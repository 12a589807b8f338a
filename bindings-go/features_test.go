package phaseoagent_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pa "github.com/phaseo/agent-sdk-go"
)

// streamer is a Go StreamingModelClient: Stream yields deltas then the response; Generate
// answers the same response in one piece.
type streamer struct {
	mu        sync.Mutex
	responses []pa.ModelResponse
	streamed  atomic.Int32
	generated atomic.Int32
}

func (s *streamer) next() pa.ModelResponse {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.responses[0]
	s.responses = s.responses[1:]
	return r
}

func (s *streamer) Generate(context.Context, pa.ModelRequest) (pa.ModelResponse, error) {
	s.generated.Add(1)
	return s.next(), nil
}

func (s *streamer) Stream(ctx context.Context, _ pa.ModelRequest) <-chan pa.ModelStreamEvent {
	s.streamed.Add(1)
	r := s.next()
	out := make(chan pa.ModelStreamEvent)
	go func() {
		defer close(out)
		for _, word := range strings.SplitAfter(r.Text, " ") {
			select {
			case out <- pa.ModelStreamEvent{Type: pa.StreamTextDelta, Delta: word}:
			case <-ctx.Done():
				return
			}
		}
		out <- pa.ModelStreamEvent{Type: pa.StreamCompleted, Response: &r}
	}()
	return out
}

// A Go streaming client: a streamed run hears its deltas live; a run that is not streamed
// calls Generate; a failing or malformed stream fails the request (model_failed).
func TestStreamingHostClient(t *testing.T) {
	agent := mustAgent(t, pa.AgentDefinition{ID: "talker"})
	client := &streamer{responses: []pa.ModelResponse{{Text: "Hello streaming world"}, {Text: "Plain answer"}}}
	s := agent.Stream(context.Background(), pa.RunOptions{Input: "hi", Client: client})
	r, err := s.Result()
	if err != nil || r.Output != "Hello streaming world" {
		t.Fatalf("streamed run: %v %v", r.Output, err)
	}
	var deltas []string
	for d := range s.Text() {
		deltas = append(deltas, d)
	}
	if strings.Join(deltas, "|") != "Hello |streaming |world" {
		t.Fatalf("deltas %q", deltas)
	}
	plain := run(t, agent, pa.RunOptions{Input: "hi", Client: client})
	if plain.Output != "Plain answer" || client.streamed.Load() != 1 || client.generated.Load() != 1 {
		t.Fatalf("plain run %v (streamed %d, generated %d)", plain.Output, client.streamed.Load(), client.generated.Load())
	}

	failing := &failingStreamer{}
	_, err = agent.Stream(context.Background(), pa.RunOptions{Input: "hi", Client: failing}).Result()
	if !errors.Is(err, pa.ErrModelFailed) {
		t.Fatalf("failing stream: %v", err)
	}
	contains(t, err.Error(), "upstream broke")
	failing.bad = true
	_, err = agent.Stream(context.Background(), pa.RunOptions{Input: "hi", Client: failing}).Result()
	if !errors.Is(err, pa.ErrModelFailed) {
		t.Fatalf("bad event: %v", err)
	}
	contains(t, err.Error(), "unknown model stream event type \"sparkle\"")
}

type failingStreamer struct{ bad bool }

func (f *failingStreamer) Generate(context.Context, pa.ModelRequest) (pa.ModelResponse, error) {
	return pa.ModelResponse{}, errors.New("not used")
}

func (f *failingStreamer) Stream(context.Context, pa.ModelRequest) <-chan pa.ModelStreamEvent {
	out := make(chan pa.ModelStreamEvent, 3)
	out <- pa.ModelStreamEvent{Type: pa.StreamTextDelta, Delta: "partial "}
	if f.bad {
		out <- pa.ModelStreamEvent{Type: "sparkle"}
	} else {
		out <- pa.ModelStreamEvent{Err: errors.New("upstream broke")}
	}
	close(out)
	return out
}

// mapAccessor is an application's own state storage (the product's StateAccessor).
type mapAccessor struct {
	mu    sync.Mutex
	rows  map[string]string
	saves int
}

func (m *mapAccessor) Load(_ context.Context, runID string) (*pa.RunResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	text, ok := m.rows[runID]
	if !ok {
		return nil, nil
	}
	r, err := pa.ParseRunResult(text)
	return &r, err
}

func (m *mapAccessor) Save(_ context.Context, state pa.RunResult) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rows[state.Run.ID] = state.JSON()
	m.saves++
	return nil
}

// The product's state accessor (Accessor, or State by the product's name): a run saves its
// checkpoints through the application's Save; a continue by RunID loads it through Load; an unknown id and a failing accessor
// are clear errors.
func TestStateAccessor(t *testing.T) {
	acc := &mapAccessor{rows: map[string]string{}}
	var executions atomic.Int32
	agent := deployAgent(t, &executions, nil)
	client := scripted(t, callWith("c1", "deploy", `{"env":"prod"}`), textResponse("Deployed."))
	paused, err := agent.Run(context.Background(), pa.RunOptions{Input: "deploy", Client: client, State: acc})
	if err != nil || paused.Status() != pa.StatusWaitingForHuman || acc.saves == 0 {
		t.Fatalf("run: %v %v (saves %d)", paused.Status(), err, acc.saves)
	}
	if saved, _ := acc.Load(context.Background(), paused.Run.ID); saved == nil || saved.Status() != pa.StatusWaitingForHuman {
		t.Fatalf("saved state %+v", saved)
	}
	done, err := agent.Continue(context.Background(), pa.ContinueOptions{RunID: paused.Run.ID, Accessor: acc, Client: client,
		Approvals: []pa.ToolDecision{{ToolCallID: "c1"}}})
	if err != nil || done.Output != "Deployed." || executions.Load() != 1 {
		t.Fatalf("continue by id: %v %v", done.Output, err)
	}
	if last, _ := acc.Load(context.Background(), paused.Run.ID); last.Status() != pa.StatusCompleted {
		t.Fatalf("last save: %s", last.Status())
	}
	_, err = agent.Continue(context.Background(), pa.ContinueOptions{RunID: "run_nope", State: acc, Client: client})
	if !errors.Is(err, pa.ErrContinueInvalid) {
		t.Fatalf("unknown run: %v", err)
	}
	contains(t, err.Error(), "run_nope")
	_, err = agent.Run(context.Background(), pa.RunOptions{Input: "x", Client: client, State: acc, Store: pa.NewMemoryStore()})
	if !errors.Is(err, pa.ErrDefinitionInvalid) {
		t.Fatalf("both Store and State: %v", err)
	}
	_, err = agent.Run(context.Background(), pa.RunOptions{Input: "x", Client: client, Accessor: acc, State: acc})
	if !errors.Is(err, pa.ErrDefinitionInvalid) {
		t.Fatalf("both Accessor and State: %v", err)
	}
	contains(t, err.Error(), "pass either Accessor or State")
	broken := brokenAccessor{}
	_, err = agent.Run(context.Background(), pa.RunOptions{Input: "x", Client: scripted(t, textResponse("hi")), Accessor: broken})
	if !errors.Is(err, pa.ErrStoreFailed) {
		t.Fatalf("failing Save: %v", err)
	}
	contains(t, err.Error(), "disk full")
	// As an agent's store.
	store, err := pa.NewAccessorStore(acc)
	if err != nil {
		t.Fatal(err)
	}
	withStore := deployAgent(t, &executions, store)
	p2 := run(t, withStore, pa.RunOptions{Input: "deploy", Client: scripted(t, callWith("c9", "deploy", `{"env":"qa"}`), textResponse("ok"))})
	if saved, _ := acc.Load(context.Background(), p2.Run.ID); saved == nil || saved.Status() != pa.StatusWaitingForHuman {
		t.Fatalf("agent store: %+v", saved)
	}
}

type brokenAccessor struct{}

func (brokenAccessor) Load(context.Context, string) (*pa.RunResult, error) { return nil, nil }
func (brokenAccessor) Save(context.Context, pa.RunResult) error            { return errors.New("disk full") }

// An MCP server's Filter and OnElicitation are Go functions: the filter sees each listed
// tool with its annotations; the reference server's elicitation request reaches the
// handler and its answer reaches the tool's result.
func TestMCPFilterAndElicitation(t *testing.T) {
	bin, _ := filepath.Abs("../tests/mcp/node_modules/.bin/mcp-server-everything")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the MCP reference server is not installed (%v): run `make mcp-servers`", err)
	}
	var mu sync.Mutex
	var seen []string
	var asked []pa.ElicitationRequest
	server := pa.MCPServer{Name: "everything", Command: bin, Args: []string{"stdio"},
		Filter: func(tool pa.MCPToolInfo) (bool, error) {
			mu.Lock()
			seen = append(seen, tool.Name)
			mu.Unlock()
			return tool.Name == "echo" || strings.Contains(tool.Name, "elicitation"), nil
		},
		OnElicitation: func(_ context.Context, req pa.ElicitationRequest) (pa.ElicitationResult, error) {
			mu.Lock()
			asked = append(asked, req)
			mu.Unlock()
			return pa.ElicitationResult{Action: "accept", Content: map[string]any{"name": "Ada Lovelace"}}, nil
		}}
	agent := mustAgent(t, pa.AgentDefinition{ID: "eli", MCPServers: []pa.MCPServer{server}})
	rec := &recorder{script: []pa.ModelResponse{
		{ToolCalls: []pa.ModelToolCall{{ID: "c1", Name: "trigger-elicitation-request", Arguments: `{}`}}},
		{Text: "ok"},
	}}
	r := run(t, agent, pa.RunOptions{Input: "go", Client: rec})
	var offered []string
	for _, tool := range rec.requests[0].Tools {
		offered = append(offered, tool.ID)
	}
	if strings.Join(offered, ",") != "echo,trigger-elicitation-request" || len(seen) < 3 {
		t.Fatalf("offered %v, filter saw %v", offered, seen)
	}
	if len(asked) != 1 || asked[0].Server != "everything" || asked[0].Message != "Please provide inputs for the following fields:" ||
		asked[0].RequestedSchema["type"] != "object" {
		t.Fatalf("elicitation requests %+v", asked)
	}
	contains(t, toolMessages(r)["c1"].Content, "Ada Lovelace")

	// A filter's error fails the listing with mcp_failed.
	server.Filter = func(pa.MCPToolInfo) (bool, error) { return false, errors.New("no listing today") }
	broken := mustAgent(t, pa.AgentDefinition{ID: "eli2", MCPServers: []pa.MCPServer{server}})
	_, err := broken.Run(context.Background(), pa.RunOptions{Input: "go", Client: &recorder{}})
	if !errors.Is(err, pa.ErrMcpFailed) {
		t.Fatalf("failing filter: %v", err)
	}
	contains(t, err.Error(), "no listing today")
}

// Tracing against a local OTLP/HTTP receiver: a run records invoke_agent, chat and
// execute_tool spans; a paused state carries the run span's traceparent, and the continue
// (in a fresh agent) lands in the same trace; RunOptions.Traceparent makes the run a
// child of the caller's span; bad options are definition_invalid.
func TestTracing(t *testing.T) {
	var mu sync.Mutex
	var bodies [][]byte
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || r.Header.Get("X-Token") != "t0k" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		bodies = append(bodies, body)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer receiver.Close()
	exported := func() []byte {
		mu.Lock()
		defer mu.Unlock()
		return bytes.Join(bodies, nil)
	}

	if err := pa.EnableTracing(pa.TracingOptions{Endpoint: "not a url"}); !errors.Is(err, pa.ErrDefinitionInvalid) {
		t.Fatalf("bad endpoint: %v", err)
	}
	if err := pa.EnableTracing(pa.TracingOptions{Endpoint: receiver.URL, ServiceName: "go-test",
		Headers: map[string]string{"X-Token": "t0k"}}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pa.ShutdownTracing() }()
	if !pa.TracingEnabled() {
		t.Fatal("tracing is not on")
	}
	var executions atomic.Int32
	client := scripted(t, callWith("c1", "deploy", `{"env":"prod"}`), textResponse("Deployed."))
	const parentTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	paused, err := deployAgent(t, &executions, nil).Run(context.Background(), pa.RunOptions{Input: "deploy", Client: client,
		Traceparent: "00-" + parentTrace + "-00f067aa0ba902b7-01"})
	if err != nil {
		t.Fatal(err)
	}
	tp := strings.Split(paused.Run.Traceparent, "-")
	if len(tp) != 4 || tp[1] != parentTrace {
		t.Fatalf("the paused state's traceparent %q is not in the caller's trace", paused.Run.Traceparent)
	}
	stored, _ := json.Marshal(paused)
	var state pa.RunResult
	if err := json.Unmarshal(stored, &state); err != nil {
		t.Fatal(err)
	}
	if _, err := deployAgent(t, &executions, nil).Continue(context.Background(), pa.ContinueOptions{Run: state, Client: client,
		Approvals: []pa.ToolDecision{{ToolCallID: "c1"}}}); err != nil {
		t.Fatal(err)
	}
	if err := pa.FlushTracing(); err != nil {
		t.Fatal(err)
	}
	got := exported()
	for _, name := range []string{"invoke_agent ops", "execute_tool deploy", "chat", "go-test", "gen_ai.operation.name"} {
		if !bytes.Contains(got, []byte(name)) {
			t.Fatalf("the export lacks %q", name)
		}
	}
	// Both calls' spans carry the trace id (protobuf holds it as 16 raw bytes).
	traceID, _ := hex.DecodeString(parentTrace)
	if n := bytes.Count(got, traceID); n < 4 {
		t.Fatalf("the trace id appears %d times in the export (expected every span)", n)
	}
	if err := pa.ShutdownTracing(); err != nil || pa.TracingEnabled() {
		t.Fatalf("shutdown: %v", err)
	}
	// With tracing off, a state carries no traceparent.
	off := run(t, deployAgent(t, &executions, nil), pa.RunOptions{Input: "x", Client: scripted(t, textResponse("ok"))})
	if off.Run.Traceparent != "" || strings.Contains(off.JSON(), "traceparent") {
		t.Fatalf("untraced state has a traceparent: %s", off.JSON())
	}
	_ = time.Second
}

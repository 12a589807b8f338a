package phaseoagent_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	pa "github.com/phaseo/agent-sdk-go"
)

// addTool adds two integers.
func addTool() pa.Tool {
	return pa.Tool{ID: "add", Execute: func(input any, _ pa.RuntimeContext) (any, error) {
		m := input.(map[string]any)
		return m["a"].(float64) + m["b"].(float64), nil
	}}
}

var inputPieces = []string{`{"a":`, `2,"b"`, `:3}`}

// inputWriter is a streaming client that writes a call's input in pieces: its first
// attempt fails after part of a call; the second streams call c2 whole, holding the
// rest of it until the consumer saw the first fragment; the third answers.
type inputWriter struct {
	attempts atomic.Int32
	seen     chan struct{}
	live     atomic.Bool
}

func (w *inputWriter) Generate(context.Context, pa.ModelRequest) (pa.ModelResponse, error) {
	return pa.ModelResponse{}, errors.New("a streamed run uses Stream")
}

func (w *inputWriter) Stream(ctx context.Context, _ pa.ModelRequest) <-chan pa.ModelStreamEvent {
	out := make(chan pa.ModelStreamEvent, 8)
	attempt := w.attempts.Add(1)
	go func() {
		defer close(out)
		switch attempt {
		case 1:
			out <- pa.ModelStreamEvent{Type: "tool-input-start", ToolCallID: "lost", ToolName: "add"}
			out <- pa.ModelStreamEvent{Type: "tool-input-delta", ToolCallID: "lost", Delta: `{"a":`}
			out <- pa.ModelStreamEvent{Err: errors.New("connection reset")}
		case 2:
			out <- pa.ModelStreamEvent{Type: pa.StreamToolInputStart, ToolCallID: "c2", ToolName: "add"}
			out <- pa.ModelStreamEvent{Type: pa.StreamToolInputDelta, ToolCallID: "c2", Delta: inputPieces[0]}
			select {
			case <-w.seen:
				w.live.Store(true)
			case <-time.After(60 * time.Second):
			case <-ctx.Done():
				return
			}
			for _, p := range inputPieces[1:] {
				out <- pa.ModelStreamEvent{Type: pa.StreamToolInputDelta, ToolCallID: "c2", Delta: p}
			}
			out <- pa.ModelStreamEvent{Type: pa.StreamCompleted, Response: &pa.ModelResponse{
				ToolCalls: []pa.ModelToolCall{{ID: "c2", Name: "add", Arguments: strings.Join(inputPieces, "")}}}}
		default:
			out <- pa.ModelStreamEvent{Type: pa.StreamCompleted, Response: &pa.ModelResponse{Text: "5"}}
		}
	}()
	return out
}

func inputDeltas(events []pa.AgentEvent, id string) []string {
	var out []string
	for _, e := range events {
		if e.Type == pa.EventToolInputDelta && e.Details["toolCallId"] == id {
			out = append(out, e.Details["delta"].(string))
		}
	}
	return out
}

func indexOf(events []pa.AgentEvent, typ string) int {
	for i, e := range events {
		if e.Type == typ {
			return i
		}
	}
	return -1
}

// A streaming client's tool input reaches the stream live, in order, before
// model.completed; a failed attempt's input stays and only the retried call runs.
func TestToolInputFromAStreamingClient(t *testing.T) {
	agent := mustAgent(t, pa.AgentDefinition{ID: "calc", Tools: []pa.Tool{addTool()},
		ModelRetry: pa.ModelRetryConfig{MaxRetries: 1, Backoff: time.Millisecond}})
	client := &inputWriter{seen: make(chan struct{})}
	s := agent.Stream(context.Background(), pa.RunOptions{Input: "2+3?", Client: client})
	var events []pa.AgentEvent
	released := false
	for e := range s.Events() {
		if e.Type == pa.EventToolInputDelta && e.Details["toolCallId"] == "c2" && !released {
			// The client holds the rest of the call until this fragment is seen here.
			if indexOf(events, "model.completed") >= 0 {
				t.Fatalf("model.completed before the input arrived")
			}
			released = true
			close(client.seen)
		}
		events = append(events, e)
	}
	r, err := s.Result()
	if err != nil || r.Output != "5" {
		t.Fatalf("run: %v %v", r.Output, err)
	}
	if !client.live.Load() {
		t.Fatal("the first fragment did not reach the consumer while the client was still writing")
	}
	if got := inputDeltas(events, "lost"); strings.Join(got, "") != `{"a":` {
		t.Fatalf("failed attempt's input: %q", got)
	}
	if got := inputDeltas(events, "c2"); strings.Join(got, "|") != strings.Join(inputPieces, "|") {
		t.Fatalf("input deltas %q", got)
	}
	var started []any
	for _, e := range events {
		if e.Type == "tool.started" {
			started = append(started, e.Details["toolCallId"])
		}
	}
	if len(started) != 1 || started[0] != "c2" {
		t.Fatalf("calls run: %v", started)
	}
	first := events[indexOf(events, pa.EventToolInputStarted)]
	if first.Details["toolName"] != "add" || first.StepIndex == nil || *first.StepIndex != 0 {
		t.Fatalf("tool.input_started: %s", first.JSON)
	}
}

// The scripted client streams each call's input in pieces; a run that is not streamed
// reports none.
func TestToolInputFromTheScriptedClient(t *testing.T) {
	agent := mustAgent(t, pa.AgentDefinition{ID: "calc", Tools: []pa.Tool{addTool()}})
	args := strings.Join(inputPieces, "")
	s := agent.Stream(context.Background(), pa.RunOptions{Input: "2+3?",
		Client: scripted(t, callWith("c1", "add", args), textResponse("5"))})
	var events []pa.AgentEvent
	for e := range s.Events() {
		events = append(events, e)
	}
	if r, err := s.Result(); err != nil || r.Output != "5" {
		t.Fatalf("run: %v", err)
	}
	deltas := inputDeltas(events, "c1")
	if len(deltas) < 2 || strings.Join(deltas, "") != args {
		t.Fatalf("deltas %q", deltas)
	}
	if indexOf(events, pa.EventToolInputStarted) > indexOf(events, "model.completed") {
		t.Fatal("input reported after model.completed")
	}
	var types []string
	run(t, agent, pa.RunOptions{Input: "2+3?", Client: scripted(t, callWith("c1", "add", args), textResponse("5")),
		OnEvent: func(e pa.AgentEvent) { types = append(types, e.Type) }})
	joined := strings.Join(types, " ")
	if strings.Contains(joined, "tool.input_") || !strings.Contains(joined, "tool.completed") {
		t.Fatalf("a run that is not streamed: %s", joined)
	}
}

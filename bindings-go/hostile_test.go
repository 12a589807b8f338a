package phaseoagent_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	pa "github.com/phaseo/agent-sdk-go"
)

// MyErr is an error whose pointer implements error: a nil *MyErr returned as an error is
// a typed nil (err != nil holds, and its Error method dereferences nil).
type MyErr struct{ Msg string }

func (e *MyErr) Error() string { return e.Msg }

// panickyErr is an error whose Error method panics.
type panickyErr struct{}

func (panickyErr) Error() string { panic("Error() exploded") }

// panickyJSON is a value whose MarshalJSON panics.
type panickyJSON struct{}

func (panickyJSON) MarshalJSON() ([]byte, error) { panic("MarshalJSON exploded") }

func cyclicMap() map[string]any {
	m := map[string]any{"k": 1}
	m["self"] = m
	return m
}

// hostile is what a host callback does instead of behaving: do runs inside the callback
// and its results are the callback's (where the callback has them). class says which
// callbacks it applies to: "error" (needs an error result), "value" (needs a result that
// can hold any value), "any" (panics, Goexit: every callback). want is text the failure
// must show.
type hostile struct {
	name  string
	class string
	do    func() (any, error)
	want  string
}

var hostiles = []hostile{
	{"TypedNilError", "error", func() (any, error) { var err *MyErr; return "ok", err },
		"returned a nil *phaseoagent_test.MyErr as its error"},
	{"PanickingErrorMethod", "error", func() (any, error) { return nil, panickyErr{} },
		"whose Error method panicked: Error() exploded"},
	{"InvalidUTF8Error", "error", func() (any, error) { return nil, errors.New("bad \xff\xfe bytes") },
		"bad \uFFFD bytes"},
	{"PanickingMarshalJSON", "value", func() (any, error) { return map[string]any{"v": panickyJSON{}}, nil },
		"MarshalJSON exploded"},
	{"CyclicMapPanic", "any", func() (any, error) { panic(cyclicMap()) },
		"panic: map[k:1 self:map[k:1 self:map["},
	{"Goexit", "any", func() (any, error) { runtime.Goexit(); return nil, nil },
		"called runtime.Goexit instead of returning"},
}

// hostileKind is one kind of host callback, driven through the public API with a hostile
// behaviour; it returns the observable outcome (errors and tool messages, as text).
type hostileKind struct {
	name    string
	classes string // the hostile classes it can express
	run     func(t *testing.T, h hostile) string
}

// outcome is the text a user sees of a run: its error and its tool messages.
func outcome(r pa.RunResult, err error) string {
	var b strings.Builder
	if err != nil {
		b.WriteString(err.Error() + "\n")
		var perr *pa.Error
		if errors.As(err, &perr) && perr.Result != nil {
			r = *perr.Result
		}
	}
	for _, m := range r.Messages {
		if m.Role == "tool" {
			b.WriteString(m.Content + "\n")
		}
	}
	return b.String()
}

func okTool(id string) pa.Tool {
	return pa.Tool{ID: id, OnError: "return-to-model", Execute: func(any, pa.RuntimeContext) (any, error) { return "fine", nil }}
}

func runOutcome(t *testing.T, def pa.AgentDefinition, o pa.RunOptions) string {
	t.Helper()
	agent := mustAgent(t, def)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := agent.Run(ctx, o)
	if ctx.Err() != nil {
		t.Fatalf("the run hung until its deadline (status %s)", r.Status())
	}
	return outcome(r, err)
}

func everythingServer(t *testing.T) string {
	bin, _ := filepath.Abs("../tests/mcp/node_modules/.bin/mcp-server-everything")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the MCP reference server is not installed (%v): run `make mcp-servers`", err)
	}
	return bin
}

var hostileKinds = []hostileKind{
	{"Execute", "error value any", func(t *testing.T, h hostile) string {
		tool := pa.Tool{ID: "t", OnError: "return-to-model", Execute: func(any, pa.RuntimeContext) (any, error) { return h.do() }}
		return runOutcome(t, pa.AgentDefinition{ID: "a", Tools: []pa.Tool{tool}},
			pa.RunOptions{Input: "go", Client: scripted(t, calls("t"), textResponse("after"))})
	}},
	{"InputSchema", "error value any", func(t *testing.T, h hostile) string {
		tool := okTool("t")
		tool.InputSchema = func(any) (any, error) { return h.do() }
		return runOutcome(t, pa.AgentDefinition{ID: "a", Tools: []pa.Tool{tool}},
			pa.RunOptions{Input: "go", Client: scripted(t, calls("t"), textResponse("after"))})
	}},
	{"OutputSchema", "error value any", func(t *testing.T, h hostile) string {
		tool := okTool("t")
		tool.OutputSchema = func(any) (any, error) { return h.do() }
		return runOutcome(t, pa.AgentDefinition{ID: "a", Tools: []pa.Tool{tool}},
			pa.RunOptions{Input: "go", Client: scripted(t, calls("t"), textResponse("after"))})
	}},
	{"EventSchema", "error value any", func(t *testing.T, h hostile) string {
		tool := pa.Tool{ID: "t", OnError: "return-to-model", EventSchema: func(any) (any, error) { return h.do() },
			Execute: func(_ any, rt pa.RuntimeContext) (any, error) { return "fine", rt.EmitProgress(1) }}
		return runOutcome(t, pa.AgentDefinition{ID: "a", Tools: []pa.Tool{tool}},
			pa.RunOptions{Input: "go", Client: scripted(t, calls("t"), textResponse("after"))})
	}},
	{"Approval", "error any", func(t *testing.T, h hostile) string {
		tool := okTool("t")
		tool.Approval = func(any, pa.RuntimeContext) (bool, error) { _, err := h.do(); return false, err }
		return runOutcome(t, pa.AgentDefinition{ID: "a", Tools: []pa.Tool{tool}},
			pa.RunOptions{Input: "go", Client: scripted(t, calls("t"), textResponse("after"))})
	}},
	{"AgentRequireApproval", "error any", func(t *testing.T, h hostile) string {
		return runOutcome(t, pa.AgentDefinition{ID: "a", Tools: []pa.Tool{okTool("t")},
			RequireApproval: func(pa.ToolCall, pa.RuntimeContext) (bool, error) { _, err := h.do(); return false, err }},
			pa.RunOptions{Input: "go", Client: scripted(t, calls("t"), textResponse("after"))})
	}},
	{"OnToolCalled", "error value any", func(t *testing.T, h hostile) string {
		tool := pa.Tool{ID: "t", OnError: "return-to-model", OnToolCalled: func(any, pa.RuntimeContext) (any, bool, error) {
			v, err := h.do()
			return v, true, err
		}}
		return runOutcome(t, pa.AgentDefinition{ID: "a", Tools: []pa.Tool{tool}},
			pa.RunOptions{Input: "go", Client: scripted(t, calls("t"), textResponse("after"))})
	}},
	{"OnResponseReceived", "error value any", func(t *testing.T, h hostile) string {
		tool := pa.Tool{ID: "t", OnError: "return-to-model",
			OnToolCalled:       func(any, pa.RuntimeContext) (any, bool, error) { return nil, false, nil },
			OnResponseReceived: func(any, pa.RuntimeContext) (any, error) { return h.do() }}
		agent := mustAgent(t, pa.AgentDefinition{ID: "a", Tools: []pa.Tool{tool}})
		client := scripted(t, calls("t"), textResponse("after"))
		paused := run(t, agent, pa.RunOptions{Input: "go", Client: client})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		r, err := agent.Continue(ctx, pa.ContinueOptions{Run: paused, Client: client,
			ToolOutputs: []pa.ToolOutput{{ToolCallID: "c1", Output: "from a person"}}})
		if ctx.Err() != nil {
			t.Fatal("the continue hung until its deadline")
		}
		return outcome(r, err)
	}},
	{"NextTurnFunc", "error any", func(t *testing.T, h hostile) string {
		tool := okTool("t")
		tool.NextTurnFunc = func(any, pa.RuntimeContext) (*pa.NextTurnParams, error) { _, err := h.do(); return nil, err }
		return runOutcome(t, pa.AgentDefinition{ID: "a", Tools: []pa.Tool{tool}},
			pa.RunOptions{Input: "go", Client: scripted(t, calls("t"), textResponse("after"))})
	}},
	{"AgentOutputSchema", "error value any", func(t *testing.T, h hostile) string {
		return runOutcome(t, pa.AgentDefinition{ID: "a", OutputSchema: func(any) (any, error) { return h.do() }},
			pa.RunOptions{Input: "go", Client: scripted(t, textResponse("final"))})
	}},
	{"StopWhenFunc", "any", func(t *testing.T, h hostile) string {
		return runOutcome(t, pa.AgentDefinition{ID: "a", Tools: []pa.Tool{okTool("t")},
			StopWhen: []pa.StopCondition{pa.StopWhenFunc(func(pa.StopState) (string, bool) { _, _ = h.do(); return "", false })}},
			pa.RunOptions{Input: "go", Client: scripted(t, calls("t"), textResponse("after"))})
	}},
	{"HumanReview", "value any", func(t *testing.T, h hostile) string {
		return runOutcome(t, pa.AgentDefinition{ID: "a", HumanReview: func(pa.HumanReviewContext) *pa.HumanReviewRequest {
			v, _ := h.do()
			return &pa.HumanReviewRequest{Reason: "look", Payload: v}
		}}, pa.RunOptions{Input: "go", Client: scripted(t, textResponse("final"))})
	}},
	{"DynamicModel", "any", func(t *testing.T, h hostile) string {
		return runOutcome(t, pa.AgentDefinition{ID: "a", DynamicModel: func(pa.TurnContext) string { _, _ = h.do(); return "m" }},
			pa.RunOptions{Input: "go", Client: scripted(t, textResponse("final"))})
	}},
	{"Generate", "error any", func(t *testing.T, h hostile) string {
		client := clientFunc(func() (pa.ModelResponse, error) { _, err := h.do(); return pa.ModelResponse{Text: "x"}, err })
		return runOutcome(t, pa.AgentDefinition{ID: "a"}, pa.RunOptions{Input: "go", Client: client})
	}},
	{"Stream", "error value any", func(t *testing.T, h hostile) string {
		agent := mustAgent(t, pa.AgentDefinition{ID: "a"})
		s := agent.Stream(context.Background(), pa.RunOptions{Input: "go", Client: hostileStreamer{h}})
		done := make(chan string, 1)
		go func() { r, err := s.Result(); done <- outcome(r, err) }()
		select {
		case text := <-done:
			return text
		case <-time.After(20 * time.Second):
			t.Fatal("the stream hung")
			return ""
		}
	}},
	{"StateSave", "error any", func(t *testing.T, h hostile) string {
		acc := accessorFuncs{save: func() error { _, err := h.do(); return err }}
		return runOutcome(t, pa.AgentDefinition{ID: "a"}, pa.RunOptions{Input: "go", State: acc, Client: scripted(t, textResponse("final"))})
	}},
	{"StateLoad", "error any", func(t *testing.T, h hostile) string {
		acc := accessorFuncs{load: func() error { _, err := h.do(); return err }}
		agent := mustAgent(t, pa.AgentDefinition{ID: "a"})
		_, err := agent.Continue(context.Background(), pa.ContinueOptions{RunID: "r1", State: acc, Client: scripted(t)})
		return outcome(pa.RunResult{}, err)
	}},
	{"MCPFilter", "error any", func(t *testing.T, h hostile) string {
		server := pa.MCPServer{Name: "everything", Command: everythingServer(t), Args: []string{"stdio"},
			Filter: func(pa.MCPToolInfo) (bool, error) { _, err := h.do(); return true, err }}
		return runOutcome(t, pa.AgentDefinition{ID: "a", MCPServers: []pa.MCPServer{server}},
			pa.RunOptions{Input: "go", Client: scripted(t, textResponse("final"))})
	}},
}

// clientFunc is a Go model client answering with a function.
type clientFunc func() (pa.ModelResponse, error)

func (f clientFunc) Generate(context.Context, pa.ModelRequest) (pa.ModelResponse, error) { return f() }

// hostileStreamer streams a hostile: its error as the stream's Err, its value as an item.
type hostileStreamer struct{ h hostile }

func (s hostileStreamer) Generate(context.Context, pa.ModelRequest) (pa.ModelResponse, error) {
	return pa.ModelResponse{}, errors.New("not streamed")
}

func (s hostileStreamer) Stream(context.Context, pa.ModelRequest) <-chan pa.ModelStreamEvent {
	v, err := s.h.do()
	ch := make(chan pa.ModelStreamEvent, 2)
	if err != nil {
		ch <- pa.ModelStreamEvent{Type: pa.StreamTextDelta, Err: err}
	} else {
		ch <- pa.ModelStreamEvent{Type: pa.StreamItem, Item: v}
	}
	close(ch)
	return ch
}

// accessorFuncs is a state accessor whose Load and Save report a function's error.
type accessorFuncs struct{ load, save func() error }

func (a accessorFuncs) Load(context.Context, string) (*pa.RunResult, error) {
	if a.load != nil {
		return nil, a.load()
	}
	return nil, nil
}

func (a accessorFuncs) Save(context.Context, pa.RunResult) error {
	if a.save != nil {
		return a.save()
	}
	return nil
}

// Every kind of host callback, given every hostile behaviour it can express, fails the
// way docs/behaviour.md §2.7 says (an error like any other, whose text says what
// happened), never crashing or hanging the process. Each behaviour runs in a child
// process: before these guards, a typed-nil error or a panicking Error method was a nil
// dereference outside any recover, a cyclic panic value a fatal stack overflow, and
// runtime.Goexit a call never answered.
func TestHostileCallbacks(t *testing.T) {
	for _, h := range hostiles {
		t.Run(h.name, func(t *testing.T) {
			inChild(t, 3*time.Minute, func(t *testing.T) {
				for _, k := range hostileKinds {
					if !strings.Contains(k.classes, h.class) {
						continue
					}
					t.Run(k.name, func(t *testing.T) {
						text := k.run(t, h)
						t.Logf("outcome: %s", text)
						if !strings.Contains(text, h.want) {
							t.Fatalf("the outcome does not show %q:\n%s", h.want, text)
						}
					})
				}
			})
		})
	}
}

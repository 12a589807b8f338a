package phaseoagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"strings"
	"testing"
	"time"

	pa "github.com/phaseo/agent-sdk-go"
)

// Fuzzing the host side of the SDK, as Python's (hypothesis) and Node's (fast-check)
// suites do: hostile Go values through the callback kinds, and mutated states through
// continue. `go test` runs the seed corpora plus a seeded generator loop (a few thousand
// inputs, in a child process so a crash is a failure); `go test -run '^$' -fuzz
// FuzzHostileToolValues` (or FuzzMutatedContinue) runs longer.

// byteSource reads generator choices from fuzz bytes (zeros once they run out).
type byteSource struct {
	data []byte
	i    int
}

func (s *byteSource) next() byte {
	if s.i >= len(s.data) {
		return 0
	}
	b := s.data[s.i]
	s.i++
	return b
}

// bytes reads a length byte, then that many bytes (any bytes: NUL, invalid UTF-8).
func (s *byteSource) bytes() []byte {
	n := int(s.next() % 24)
	out := make([]byte, 0, n)
	for range n {
		out = append(out, s.next())
	}
	return out
}

// badMarshaler's MarshalJSON returns an error that is itself hostile (a typed nil, or a
// text that is not UTF-8).
type badMarshaler struct{ typedNil bool }

func (b badMarshaler) MarshalJSON() ([]byte, error) {
	if b.typedNil {
		var err *MyErr
		return nil, err
	}
	return nil, errors.New("marshal \xff failed")
}

// hostileValue builds a Go value from the bytes: JSON-able values and every kind a host
// can return that JSON cannot hold.
func hostileValue(s *byteSource, depth int) any {
	if depth > 4 {
		return "leaf"
	}
	switch s.next() % 21 {
	case 0:
		return nil
	case 1:
		return s.next()%2 == 0
	case 2:
		return int64(s.next()) << (s.next() % 63)
	case 3:
		return math.NaN()
	case 4:
		return math.Inf(int(s.next()%2)*2 - 1)
	case 5:
		return float64(int8(s.next())) / 7
	case 6:
		return string(s.bytes())
	case 7:
		m := map[string]any{}
		for range int(s.next() % 4) {
			m[string(s.bytes())] = hostileValue(s, depth+1)
		}
		return m
	case 8:
		list := []any{}
		for range int(s.next() % 4) {
			list = append(list, hostileValue(s, depth+1))
		}
		return list
	case 9:
		return cyclicMap()
	case 10:
		return make(chan int)
	case 11:
		return func() {}
	case 12:
		var p *MyErr
		return p
	case 13:
		return panickyJSON{}
	case 14:
		var v any = "bottom"
		for range int(s.next()) * 8 {
			v = []any{v}
		}
		return v
	case 15:
		return strings.Repeat("x\xff", int(s.next())<<10)
	case 16:
		return json.RawMessage(s.bytes())
	case 17:
		return struct {
			A any
			b int
		}{hostileValue(s, depth+1), 1}
	case 18:
		return map[string]any{"n": json.Number(string(s.bytes()))}
	case 19:
		return badMarshaler{typedNil: s.next()%2 == 0}
	default:
		return map[string]any{"ok": hostileValue(s, depth+1)}
	}
}

// hostileError builds an error from the bytes.
func hostileError(s *byteSource) error {
	switch s.next() % 4 {
	case 0:
		var err *MyErr
		return err
	case 1:
		return panickyErr{}
	case 2:
		return errString(s.bytes())
	default:
		return &MyErr{Msg: string(s.bytes())}
	}
}

// knownCodes are the docs/behaviour.md §9 codes an *Error may carry.
var knownCodes = map[string]bool{
	pa.CodeToolInputInvalid: true, pa.CodeToolOutputInvalid: true, pa.CodeToolEventInvalid: true,
	pa.CodeAgentOutputInvalid: true, pa.CodeUnknownTool: true, pa.CodeToolTimeout: true, pa.CodeToolFailed: true,
	pa.CodeMaxSteps: true, pa.CodeContinueInvalid: true, pa.CodeStateInvalid: true, pa.CodeModelFailed: true,
	pa.CodeGateway: true, pa.CodeDefinitionInvalid: true, pa.CodeCancelled: true, pa.CodeStoreFailed: true,
	pa.CodeLeaseLost: true, pa.CodeMcpFailed: true, pa.CodeInvalidArgument: true,
}

// checkSDKError fails unless err is nil or an *Error with a known code.
func checkSDKError(t testing.TB, err error) *pa.Error {
	t.Helper()
	if err == nil {
		return nil
	}
	var perr *pa.Error
	if !errors.As(err, &perr) || !knownCodes[perr.Code] {
		t.Fatalf("an error of no documented kind: %#v", err)
	}
	return perr
}

// hostileRun runs one turn of up to 6 calls, each doing what the bytes say with a hostile
// value (return it, emit it as progress, set it as context, return it as an error, panic
// with it, or Goexit), and an agent output validator returning a hostile value. The run
// must end within its deadline, with nothing but the SDK's documented errors.
func hostileRun(t testing.TB, data []byte) {
	s := &byteSource{data: data}
	n := 1 + int(s.next()%6)
	type behaviour struct {
		mode  byte
		value any
		err   error
	}
	plan := make([]behaviour, n)
	for i := range plan {
		plan[i] = behaviour{mode: s.next() % 7, value: hostileValue(s, 0), err: hostileError(s)}
	}
	final := hostileValue(s, 0)
	tool := pa.Tool{ID: "h", OnError: "return-to-model", Execute: func(input any, rt pa.RuntimeContext) (any, error) {
		i, _ := input.(map[string]any)["i"].(float64)
		b := plan[int(i)]
		switch b.mode {
		case 0:
			return b.value, nil
		case 1:
			return "progress", rt.EmitProgress(b.value)
		case 2:
			return "context", rt.SetContext(b.value)
		case 3:
			return b.value, b.err
		case 4:
			panic(b.value)
		case 5:
			runtime.Goexit()
		}
		return map[string]any{"wrapped": b.value}, nil
	}}
	def := pa.AgentDefinition{ID: "fuzz", Tools: []pa.Tool{tool}, ToolExecution: pa.ToolExecutionConfig{Concurrency: 3}}
	if s.next()%2 == 0 {
		def.OutputSchema = func(any) (any, error) { return final, nil }
	}
	agent, err := pa.CreateAgent(def)
	if err != nil {
		t.Fatalf("CreateAgent: %v", err)
	}
	defer agent.Close()
	list := []any{}
	for i := range n {
		list = append(list, map[string]any{"id": fmt.Sprintf("c%d", i+1), "name": "h", "arguments": fmt.Sprintf(`{"i":%d}`, i)})
	}
	client, err := pa.NewScriptedClient([]map[string]any{{"toolCalls": list}, {"text": "end"}}, 0)
	if err != nil {
		t.Fatalf("NewScriptedClient: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := agent.Run(ctx, pa.RunOptions{Input: "go", Client: client, OnEvent: func(pa.AgentEvent) {}})
	if ctx.Err() != nil {
		t.Fatalf("the run hung (input %x)", data)
	}
	if perr := checkSDKError(t, err); perr == nil && r.Status() != pa.StatusCompleted {
		t.Fatalf("status %s without an error", r.Status())
	} else if perr != nil && (perr.Result == nil || perr.Result.Status() != pa.StatusFailed) {
		t.Fatalf("a failed run without its failed state: %#v", err)
	}
}

// FuzzHostileToolValues feeds generated hostile values through tool results, progress,
// context, errors, panics and the output validator.
func FuzzHostileToolValues(f *testing.F) {
	for _, seed := range [][]byte{
		{}, {0}, {1, 0, 3}, {2, 0, 9, 1, 2, 3, 4, 4}, {5, 4, 13, 0, 3, 12, 2, 6, 5, 0xff, 0xfe, 0, 1, 2},
		{3, 1, 15, 200, 0, 2, 10, 0, 14, 255}, {4, 3, 19, 1, 1, 6, 3, 0xc3, 0x28, 0}, {2, 6, 16, 3, '{', '"', 'a'},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) { hostileRun(t, data) })
}

// mutateState changes a paused state's JSON text as the bytes say: byte edits, or a value
// anywhere in the document replaced by another JSON value.
func mutateState(state string, s *byteSource) string {
	text := []byte(state)
	for range 1 + int(s.next()%3) {
		if len(text) == 0 {
			break
		}
		at := (int(s.next())<<8 | int(s.next())) % len(text)
		switch s.next() % 5 {
		case 0:
			text[at] = s.next()
		case 1:
			end := min(len(text), at+1+int(s.next()%16))
			text = append(text[:at:at], text[end:]...)
		case 2:
			text = append(text[:at:at], append(s.bytes(), text[at:]...)...)
		default:
			var doc any
			if json.Unmarshal(text, &doc) != nil {
				continue
			}
			doc = replaceSomewhere(doc, s)
			if out, err := json.Marshal(doc); err == nil {
				text = out
			}
		}
	}
	return string(text)
}

// replaceSomewhere replaces one value of a JSON document (chosen by the bytes).
func replaceSomewhere(v any, s *byteSource) any {
	switch x := v.(type) {
	case map[string]any:
		if len(x) > 0 && s.next()%4 != 0 {
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sortStrings(keys)
			k := keys[int(s.next())%len(keys)]
			x[k] = replaceSomewhere(x[k], s)
			return x
		}
	case []any:
		if len(x) > 0 && s.next()%4 != 0 {
			i := int(s.next()) % len(x)
			x[i] = replaceSomewhere(x[i], s)
			return x
		}
	}
	choices := []any{nil, "", "c1", -1.0, 1e300, true, map[string]any{}, []any{}, "waiting_for_human", string(s.bytes())}
	return choices[int(s.next())%len(choices)]
}

func sortStrings(list []string) {
	for i := 1; i < len(list); i++ {
		for j := i; j > 0 && list[j] < list[j-1]; j-- {
			list[j], list[j-1] = list[j-1], list[j]
		}
	}
}

// pausedFixture is an agent with an approval-gated tool and one of its paused states.
type pausedFixture struct {
	agent *pa.Agent
	state string
}

func newPausedFixture(t testing.TB) pausedFixture {
	agent := mustAgent(t, pa.AgentDefinition{ID: "fz", Tools: []pa.Tool{{ID: "deploy", RequireApproval: true,
		Execute: func(any, pa.RuntimeContext) (any, error) { return "deployed", nil }}}})
	paused := run(t, agent, pa.RunOptions{Input: "deploy", Client: scripted(t, callWith("c1", "deploy", `{"env":"prod"}`))})
	return pausedFixture{agent: agent, state: paused.JSON()}
}

// continueOnce continues a state text, approving c1; the run must end within its deadline
// with the documented errors only. refused reports a refused continue (no Result).
func (p pausedFixture) continueOnce(t testing.TB, state string) (r pa.RunResult, refused bool) {
	t.Helper()
	client, _ := pa.NewScriptedClient([]map[string]any{{"text": "done"}, {"text": "done"}}, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := p.agent.Continue(ctx, pa.ContinueOptions{StateJSON: state, Client: client,
		Approvals: []pa.ToolDecision{{ToolCallID: "c1"}}})
	if ctx.Err() != nil {
		t.Fatalf("the continue hung on %q", state)
	}
	perr := checkSDKError(t, err)
	if perr != nil && perr.Result == nil {
		// A refused continue: docs/behaviour.md §4 and §9 (continue_invalid, or
		// state_invalid for a state that is not one).
		if perr.Code != pa.CodeContinueInvalid && perr.Code != pa.CodeStateInvalid {
			t.Fatalf("a refused continue with code %s: %v", perr.Code, err)
		}
		return r, true
	}
	return r, false
}

// FuzzMutatedContinue continues mutated paused states: each is refused with
// continue_invalid / state_invalid or runs, and a refusal leaves the state it was given
// (the original) usable.
func FuzzMutatedContinue(f *testing.F) {
	for _, seed := range [][]byte{{}, {0, 0, 0, 0, 'x'}, {1, 0, 40, 3}, {2, 1, 0, 3, 7, 'n', 'u', 'l', 'l'}, {3, 0, 10, 4, 1, 2, 3}} {
		f.Add(seed)
	}
	p := newPausedFixture(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		mutated := mutateState(p.state, &byteSource{data: data})
		if _, refused := p.continueOnce(t, mutated); refused {
			if r, again := p.continueOnce(t, p.state); again || r.Output != "done" {
				t.Fatalf("after a refused continue the original state no longer continues (output %v)", r.Output)
			}
		}
	})
}

// The seeded generator loop of the normal run: a few thousand hostile values and mutated
// states, in a child process (a crash is a test failure, not the end of the test run).
func TestFuzzGeneratedInputs(t *testing.T) {
	inChild(t, 8*time.Minute, func(t *testing.T) {
		rng := rand.New(rand.NewSource(20240601))
		input := func(n int) []byte {
			b := make([]byte, n)
			rng.Read(b)
			return b
		}
		calls := 0
		for range 600 { // ~3.5 calls a run: ~2,000 hostile values
			data := input(8 + rng.Intn(120))
			calls += 1 + int(data[0]%6)
			hostileRun(t, data)
		}
		p := newPausedFixture(t)
		refused := 0
		for range 1000 {
			mutated := mutateState(p.state, &byteSource{data: input(4 + rng.Intn(40))})
			if _, r := p.continueOnce(t, mutated); r {
				refused++
				if out, again := p.continueOnce(t, p.state); again || out.Output != "done" {
					t.Fatalf("after a refused continue the original state no longer continues")
				}
			}
		}
		t.Logf("%d hostile calls; 1000 mutated states, %d refused", calls, refused)
		if refused == 0 {
			t.Fatal("no mutated state was refused: the mutations do not reach the state checks")
		}
	})
}

package phaseoagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	pa "github.com/phaseo/agent-sdk-go"
)

// Every executor form a Go tool can take: values, structs, raw JSON, errors, typed input,
// progress and context, blocking work.
func TestExecutorForms(t *testing.T) {
	type sum struct {
		Total int `json:"total"`
	}
	tools := []pa.Tool{
		{ID: "plain", Execute: func(input any, _ pa.RuntimeContext) (any, error) {
			return map[string]any{"echo": input}, nil
		}},
		{ID: "typed", Parameters: map[string]any{"type": "object", "required": []any{"a", "b"}},
			Execute: func(input any, _ pa.RuntimeContext) (any, error) {
				var args struct{ A, B int }
				if err := pa.Decode(input, &args); err != nil {
					return nil, err
				}
				return sum{Total: args.A + args.B}, nil
			}},
		{ID: "raw", Execute: func(any, pa.RuntimeContext) (any, error) {
			return json.RawMessage(`{"z":1,"a":2}`), nil
		}},
		{ID: "failing", OnError: "return-to-model", Execute: func(any, pa.RuntimeContext) (any, error) {
			return nil, errors.New("disk full")
		}},
		{ID: "progress", Execute: func(_ any, rt pa.RuntimeContext) (any, error) {
			if err := rt.EmitProgress(map[string]any{"pct": 50}); err != nil {
				return nil, err
			}
			if err := rt.SetContext(map[string]any{"seen": rt.ToolCall.ID}); err != nil {
				return nil, err
			}
			return "done", nil
		}},
		{ID: "blocking", Execute: func(any, pa.RuntimeContext) (any, error) {
			time.Sleep(20 * time.Millisecond)
			return nil, nil
		}},
	}
	agent := mustAgent(t, pa.AgentDefinition{ID: "forms", Tools: tools})
	client := scripted(t,
		map[string]any{"toolCalls": []any{
			map[string]any{"id": "c1", "name": "plain", "arguments": `{"x":[1,2]}`},
			map[string]any{"id": "c2", "name": "typed", "arguments": `{"a":2,"b":3}`},
			map[string]any{"id": "c3", "name": "raw", "arguments": `{}`},
			map[string]any{"id": "c4", "name": "failing", "arguments": `{}`},
			map[string]any{"id": "c5", "name": "progress", "arguments": `{}`},
			map[string]any{"id": "c6", "name": "blocking", "arguments": `{}`},
		}},
		textResponse("ok"),
	)
	var events []pa.AgentEvent
	r := run(t, agent, pa.RunOptions{Input: "go", Client: client, OnEvent: func(e pa.AgentEvent) { events = append(events, e) }})
	if r.Status() != pa.StatusCompleted || r.Output != "ok" {
		t.Fatalf("status %s output %v", r.Status(), r.Output)
	}
	msgs := toolMessages(r)
	want := map[string]string{
		"c1": `{"echo":{"x":[1,2]}}`, "c2": `{"total":5}`, "c3": `{"z":1,"a":2}`,
		"c4": `{"error":"disk full"}`, "c5": `done`, "c6": `null`,
	}
	for id, content := range want {
		if msgs[id].Content != content {
			t.Errorf("%s: content %q, want %q", id, msgs[id].Content, content)
		}
	}
	if !msgs["c4"].IsError {
		t.Errorf("c4 should be an error message")
	}
	if ctx, _ := r.Run.Context.(map[string]any); ctx["seen"] != "c5" {
		t.Errorf("context %v", r.Run.Context)
	}
	var progress []any
	for _, e := range events {
		if e.Type == "tool.preliminary_result" {
			progress = append(progress, e.Details["result"])
		}
	}
	if asJSON(t, progress) != `[{"pct":50}]` {
		t.Errorf("progress %s", asJSON(t, progress))
	}
}

// A panic in a tool, a validator or a hook becomes that call's error, never a crash.
func TestPanicsBecomeToolErrors(t *testing.T) {
	agent := mustAgent(t, pa.AgentDefinition{ID: "panics", Tools: []pa.Tool{
		{ID: "boom", OnError: "return-to-model", Execute: func(any, pa.RuntimeContext) (any, error) { panic("boom") }},
		{ID: "nilmap", OnError: "return-to-model", Execute: func(any, pa.RuntimeContext) (any, error) {
			var m map[string]int
			m["x"] = 1
			return m, nil
		}},
		{ID: "badcheck", OnError: "return-to-model", InputSchema: func(any) (any, error) { panic("validator broke") },
			Execute: func(any, pa.RuntimeContext) (any, error) { return "unreached", nil }},
	}})
	r := run(t, agent, pa.RunOptions{Input: "go", Client: scripted(t, calls("boom", "nilmap", "badcheck"), textResponse("survived"))})
	msgs := toolMessages(r)
	contains(t, msgs["c1"].Content, "panic: boom")
	contains(t, msgs["c2"].Content, "assignment to entry in nil map")
	contains(t, msgs["c3"].Content, "validator broke")
	if r.Output != "survived" {
		t.Fatalf("output %v", r.Output)
	}
	// Under fail-run the panic fails the run with tool_failed.
	strict := mustAgent(t, pa.AgentDefinition{ID: "strict", Tools: []pa.Tool{
		{ID: "boom", Execute: func(any, pa.RuntimeContext) (any, error) { panic(errors.New("kaput")) }},
	}})
	_, err := strict.Run(context.Background(), pa.RunOptions{Input: "go", Client: scripted(t, calls("boom"))})
	var perr *pa.Error
	if !errors.As(err, &perr) || perr.Code != pa.CodeToolFailed || perr.Result == nil || perr.Result.Status() != pa.StatusFailed {
		t.Fatalf("err %#v", err)
	}
	contains(t, perr.Message, "kaput")
	if !errors.Is(err, pa.ErrToolFailed) {
		t.Fatalf("errors.Is(ErrToolFailed) is false for %v", err)
	}
}

// A value JSON cannot hold is tool_output_invalid (fatal whatever OnError says).
func TestUnencodableResultIsOutputInvalid(t *testing.T) {
	agent := mustAgent(t, pa.AgentDefinition{ID: "nan", Tools: []pa.Tool{
		{ID: "nan", OnError: "return-to-model", Execute: func(any, pa.RuntimeContext) (any, error) {
			return map[string]any{"ch": make(chan int)}, nil
		}},
	}})
	_, err := agent.Run(context.Background(), pa.RunOptions{Input: "go", Client: scripted(t, calls("nan"))})
	if !errors.Is(err, pa.ErrToolOutputInvalid) {
		t.Fatalf("err %v", err)
	}
	contains(t, err.Error(), "Invalid tool output: ")
}

// A timeout cancels the tool's Ctx and fails the call on time.
func TestTimeoutReachesCtx(t *testing.T) {
	ctxErr := make(chan error, 1)
	agent := mustAgent(t, pa.AgentDefinition{ID: "timeouts", Tools: []pa.Tool{
		{ID: "slow", Timeout: 50 * time.Millisecond, Execute: func(_ any, rt pa.RuntimeContext) (any, error) {
			<-rt.Ctx.Done()
			ctxErr <- rt.Ctx.Err()
			return nil, rt.Ctx.Err()
		}},
	}})
	start := time.Now()
	_, err := agent.Run(context.Background(), pa.RunOptions{Input: "go", Client: scripted(t, calls("slow"))})
	if !errors.Is(err, pa.ErrToolTimeout) {
		t.Fatalf("err %v", err)
	}
	contains(t, err.Error(), "Tool slow timed out after 50ms")
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Fatalf("took %v", elapsed)
	}
	select {
	case e := <-ctxErr:
		if !errors.Is(e, context.Canceled) {
			t.Fatalf("ctx err %v", e)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the tool's Ctx was never cancelled")
	}
}

// A tool that ignores its Ctx and blocks does not hold the run: the run returns on time,
// its concurrency slot frees, and its late result is discarded.
func TestBlockedToolDoesNotHoldTheRun(t *testing.T) {
	release := make(chan struct{})
	var lateReturns atomic.Int32
	t.Cleanup(func() { close(release) })
	agent := mustAgent(t, pa.AgentDefinition{ID: "stuck", Tools: []pa.Tool{
		{ID: "stuck", Timeout: 30 * time.Millisecond, OnError: "return-to-model",
			Execute: func(any, pa.RuntimeContext) (any, error) {
				<-release
				lateReturns.Add(1)
				return "late", nil
			}},
		{ID: "quick", Execute: func(any, pa.RuntimeContext) (any, error) { return "quick", nil }},
	}})
	start := time.Now()
	r := run(t, agent, pa.RunOptions{Input: "go", Client: scripted(t, calls("stuck", "quick"), textResponse("moved on"))})
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Fatalf("the run waited %v for a blocked tool", elapsed)
	}
	msgs := toolMessages(r)
	contains(t, msgs["c1"].Content, "timed out after 30ms")
	if msgs["c2"].Content != "quick" || r.Output != "moved on" {
		t.Fatalf("messages %+v output %v", msgs, r.Output)
	}
}

// A turn of one call runs that call on the goroutine that drives the run; one that
// ignores its Ctx and blocks there holds the run no more than a call on a goroutine of
// its own: its timeout ends it on time and the run goes on to the next turn.
func TestBlockedOnlyCallDoesNotHoldTheRun(t *testing.T) {
	release := make(chan struct{})
	var lateReturns atomic.Int32
	t.Cleanup(func() { close(release) })
	agent := mustAgent(t, pa.AgentDefinition{ID: "stuck-alone", Tools: []pa.Tool{
		{ID: "stuck", Timeout: 30 * time.Millisecond, OnError: "return-to-model",
			Execute: func(any, pa.RuntimeContext) (any, error) {
				<-release
				lateReturns.Add(1)
				return "late", nil
			}},
		{ID: "quick", Execute: func(any, pa.RuntimeContext) (any, error) { return "quick", nil }},
	}})
	start := time.Now()
	r := run(t, agent, pa.RunOptions{Input: "go", Client: scripted(t, calls("stuck"), callWith("c2", "quick", "{}"), textResponse("moved on"))})
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Fatalf("the run waited %v for a blocked tool", elapsed)
	}
	msgs := toolMessages(r)
	contains(t, msgs["c1"].Content, "timed out after 30ms")
	if msgs["c2"].Content != "quick" || r.Output != "moved on" || lateReturns.Load() != 0 {
		t.Fatalf("messages %+v output %v late %d", msgs, r.Output, lateReturns.Load())
	}
}

// Cancelling Run's ctx ends a run whose only call ignores its Ctx and blocks.
func TestRunCtxCancelsARunWhoseOnlyCallBlocks(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	t.Cleanup(func() { close(release) })
	agent := mustAgent(t, pa.AgentDefinition{ID: "cancel-stuck", Tools: []pa.Tool{
		{ID: "stuck", Execute: func(any, pa.RuntimeContext) (any, error) {
			close(started)
			<-release
			return "late", nil
		}},
	}})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	start := time.Now()
	r, err := agent.Run(ctx, pa.RunOptions{Input: "go", Client: scripted(t, calls("stuck"))})
	if err != nil || r.Status() != pa.StatusCancelled {
		t.Fatalf("status %s err %v", r.Status(), err)
	}
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Fatalf("the cancelled run waited %v for a blocked tool", elapsed)
	}
}

// Cancelling the ctx given to Run cancels the run (status cancelled, no error) and
// reaches the running tool's Ctx.
func TestRunCtxCancelsTheRun(t *testing.T) {
	toolCancelled := make(chan struct{})
	started := make(chan struct{})
	agent := mustAgent(t, pa.AgentDefinition{ID: "cancel", Tools: []pa.Tool{
		{ID: "wait", Execute: func(_ any, rt pa.RuntimeContext) (any, error) {
			close(started)
			<-rt.Ctx.Done()
			close(toolCancelled)
			return nil, rt.Ctx.Err()
		}},
	}})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	r, err := agent.Run(ctx, pa.RunOptions{Input: "go", Client: scripted(t, calls("wait"))})
	if err != nil || r.Status() != pa.StatusCancelled {
		t.Fatalf("status %s err %v", r.Status(), err)
	}
	select {
	case <-toolCancelled:
	case <-time.After(2 * time.Second):
		t.Fatal("the tool never saw the cancellation")
	}
}

// 1,000 goroutine tools of one turn run at once (each waits until all have started).
func TestThousandConcurrentGoroutineTools(t *testing.T) {
	const n = 1000
	var running, peak atomic.Int32
	all := make(chan struct{})
	var started atomic.Int32
	agent := mustAgent(t, pa.AgentDefinition{
		ID:            "fanout",
		ToolExecution: pa.ToolExecutionConfig{Concurrency: n},
		Tools: []pa.Tool{{ID: "work", Execute: func(_ any, rt pa.RuntimeContext) (any, error) {
			now := running.Add(1)
			for {
				p := peak.Load()
				if now <= p || peak.CompareAndSwap(p, now) {
					break
				}
			}
			if started.Add(1) == n {
				close(all)
			}
			select {
			case <-all:
			case <-time.After(10 * time.Second):
				return nil, errors.New("not every tool started")
			}
			running.Add(-1)
			return rt.ToolCall.ID, nil
		}}},
	})
	names := make([]string, n)
	for i := range names {
		names[i] = "work"
	}
	r := run(t, agent, pa.RunOptions{Input: "go", Client: scripted(t, calls(names...), textResponse("all done"))})
	if r.Output != "all done" || peak.Load() != n {
		t.Fatalf("output %v peak %d", r.Output, peak.Load())
	}
	// Results are in call order whatever the completion order.
	i := 0
	for _, m := range r.Messages {
		if m.Role == "tool" {
			i++
			if want := `c` + itoa(i); m.ToolCallID != want || m.Content != want {
				t.Fatalf("message %d: %s %s", i, m.ToolCallID, m.Content)
			}
		}
	}
}

func itoa(i int) string { return jsonNumber(i) }

func jsonNumber(i int) string {
	data, _ := json.Marshal(i)
	return string(data)
}

// Bad definitions are definition_invalid errors naming the problem.
func TestDefinitionErrors(t *testing.T) {
	_, err := pa.CreateAgent(pa.AgentDefinition{ID: "bad", Tools: []pa.Tool{{ID: "t", Timeout: -time.Second}}})
	var perr *pa.Error
	if !errors.As(err, &perr) || perr.Code != pa.CodeDefinitionInvalid {
		t.Fatalf("err %v", err)
	}
	_, err = pa.CreateAgent(pa.AgentDefinition{ID: "dup", Tools: []pa.Tool{{ID: "t"}, {ID: "t"}}})
	if !errors.Is(err, pa.ErrDefinitionInvalid) {
		t.Fatalf("duplicate ids: %v", err)
	}
	_, err = pa.CreateAgent(pa.AgentDefinition{ID: "schema", Tools: []pa.Tool{{ID: "t", Parameters: map[string]any{"type": 12}}}})
	if !errors.Is(err, pa.ErrDefinitionInvalid) {
		t.Fatalf("bad schema: %v", err)
	}
	if _, err := pa.JSONSchemaValidator(map[string]any{"type": "nope"}); !errors.Is(err, pa.ErrDefinitionInvalid) {
		t.Fatalf("JSONSchemaValidator: %v", err)
	}
	closed := mustAgent(t, pa.AgentDefinition{ID: "closed"})
	closed.Close()
	if _, err := closed.Run(context.Background(), pa.RunOptions{Input: "x", Client: scripted(t)}); !errors.As(err, &perr) || perr.Code != pa.CodeInvalidArgument {
		t.Fatalf("closed agent: %v", err)
	}
	check, err := pa.JSONSchemaValidator(map[string]any{"type": "object", "required": []any{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := check(map[string]any{}); err == nil || err.Error() != `/: "a" is a required property` {
		t.Fatalf("validator error %v", err)
	}
}

// An interactive hook completing its call with a nil value gives the call a null result;
// only completed == false pauses it.
func TestOnToolCalledCompletedWithNilIsANullResult(t *testing.T) {
	completed := true
	tool := pa.Tool{ID: "ask", OnToolCalled: func(any, pa.RuntimeContext) (any, bool, error) {
		return nil, completed, nil
	}}
	agent := mustAgent(t, pa.AgentDefinition{ID: "a", Tools: []pa.Tool{tool}})
	done := run(t, agent, pa.RunOptions{Input: "go", Client: scripted(t, calls("ask"), textResponse("ok"))})
	if done.Status() != pa.StatusCompleted {
		t.Fatalf("status %q, want completed", done.Status())
	}
	if m := toolMessages(done)["c1"]; m.Content != "null" || m.IsError {
		t.Fatalf("tool message %+v, want the null result", m)
	}
	completed = false
	paused := run(t, agent, pa.RunOptions{Input: "go", Client: scripted(t, calls("ask"))})
	if paused.Status() != pa.StatusWaitingForHuman || paused.Pending()[0].Kind != "hitl" {
		t.Fatalf("status %q, want a hitl pause", paused.Status())
	}
}

package phaseoagent_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	pa "github.com/phaseo/agent-sdk-go"
)

// ctxKey is the type of the test's context keys.
type ctxKey string

const tenantKey ctxKey = "tenant"

// tenantTool answers the tenant its Ctx carries ("" when none).
func tenantTool(id string) pa.Tool {
	return pa.Tool{ID: id, Execute: func(_ any, rt pa.RuntimeContext) (any, error) {
		v, _ := rt.Ctx.Value(tenantKey).(string)
		return "tenant=" + v, nil
	}}
}

// A tool's Ctx derives from the ctx given to Run, Stream, Continue and ContinueStream:
// the caller's values reach the tool, also in a nested agent run.
func TestToolCtxCarriesTheRunCtxValues(t *testing.T) {
	ctx := context.WithValue(context.Background(), tenantKey, "acme")
	agent := mustAgent(t, pa.AgentDefinition{ID: "values", Tools: []pa.Tool{tenantTool("who")}})

	r, err := agent.Run(ctx, pa.RunOptions{Input: "go", Client: scripted(t, calls("who"), textResponse("ok"))})
	if err != nil || toolMessages(r)["c1"].Content != "tenant=acme" {
		t.Fatalf("run: %v %+v", err, toolMessages(r))
	}

	r, err = agent.Stream(ctx, pa.RunOptions{Input: "go", Client: scripted(t, calls("who"), textResponse("ok"))}).Result()
	if err != nil || toolMessages(r)["c1"].Content != "tenant=acme" {
		t.Fatalf("stream: %v %+v", err, toolMessages(r))
	}

	// No value in another run's ctx: the value is the run's, not the agent's.
	r, err = agent.Run(context.Background(), pa.RunOptions{Input: "go", Client: scripted(t, calls("who"), textResponse("ok"))})
	if err != nil || toolMessages(r)["c1"].Content != "tenant=" {
		t.Fatalf("run without value: %v %+v", err, toolMessages(r))
	}

	gated := mustAgent(t, pa.AgentDefinition{ID: "gated", Tools: []pa.Tool{func() pa.Tool {
		tool := tenantTool("who")
		tool.RequireApproval = true
		return tool
	}()}})
	client := scripted(t, calls("who"), textResponse("ok"), calls("who"), textResponse("ok"))
	paused := run(t, gated, pa.RunOptions{Input: "go", Client: client})
	done, err := gated.Continue(ctx, pa.ContinueOptions{StateJSON: paused.JSON(), Client: client,
		Approvals: []pa.ToolDecision{{ToolCallID: "c1"}}})
	if err != nil || toolMessages(done)["c1"].Content != "tenant=acme" {
		t.Fatalf("continue: %v %+v", err, toolMessages(done))
	}
	paused = run(t, gated, pa.RunOptions{Input: "go", Client: client})
	done, err = gated.ContinueStream(ctx, pa.ContinueOptions{StateJSON: paused.JSON(), Client: client,
		Approvals: []pa.ToolDecision{{ToolCallID: "c1"}}}).Result()
	if err != nil || toolMessages(done)["c1"].Content != "tenant=acme" {
		t.Fatalf("continue stream: %v %+v", err, toolMessages(done))
	}

	nestedSeen := make(chan any, 1)
	inner := mustAgent(t, pa.AgentDefinition{ID: "inner", Tools: []pa.Tool{
		{ID: "who", Execute: func(_ any, rt pa.RuntimeContext) (any, error) {
			nestedSeen <- rt.Ctx.Value(tenantKey)
			return "seen", nil
		}},
	}})
	outer := mustAgent(t, pa.AgentDefinition{ID: "outer", Tools: []pa.Tool{inner.AsTool(pa.AsToolOptions{Description: "Asks"})}})
	r, err = outer.Run(ctx, pa.RunOptions{Input: "go", Client: scripted(t,
		callWith("c1", "inner", `{"input":"who?"}`), callWith("n1", "who", `{}`), textResponse("inner done"),
		textResponse("done"))})
	if err != nil || r.Output != "done" {
		t.Fatalf("nested: %v %v", err, r.Output)
	}
	if v := <-nestedSeen; v != "acme" {
		t.Fatalf("the nested run's tool saw %v", v)
	}
}

// The tool's Ctx has the run ctx's deadline, and ends with the run ctx's error and cause.
func TestToolCtxEndsWithTheRunCtx(t *testing.T) {
	deadline := time.Now().Add(time.Hour)
	ctx, cancelDeadline := context.WithDeadline(context.Background(), deadline)
	defer cancelDeadline()
	ctx, cancel := context.WithCancelCause(ctx)
	stop := errors.New("the caller gave up")
	started := make(chan struct{})
	proceed := make(chan struct{})
	type seen struct {
		deadline time.Time
		hasIt    bool
		err      error
		cause    error
	}
	out := make(chan seen, 1)
	agent := mustAgent(t, pa.AgentDefinition{ID: "ends", Tools: []pa.Tool{
		{ID: "wait", Execute: func(_ any, rt pa.RuntimeContext) (any, error) {
			var s seen
			s.deadline, s.hasIt = rt.Ctx.Deadline()
			close(started)
			<-proceed // the run's ctx is cancelled meanwhile
			<-rt.Ctx.Done()
			s.err, s.cause = rt.Ctx.Err(), context.Cause(rt.Ctx)
			out <- s
			return nil, rt.Ctx.Err()
		}},
	}})
	go func() {
		<-started
		cancel(stop)
		close(proceed)
	}()
	// The tool answers with its context's error: the run still ends cancelled.
	r, err := agent.Run(ctx, pa.RunOptions{Input: "go", Client: scripted(t, calls("wait"))})
	if err != nil || r.Status() != pa.StatusCancelled {
		t.Fatalf("status %s err %v", r.Status(), err)
	}
	select {
	case s := <-out:
		if !s.hasIt || !s.deadline.Equal(deadline) {
			t.Fatalf("deadline %v %v, want %v", s.deadline, s.hasIt, deadline)
		}
		if !errors.Is(s.err, context.Canceled) || !errors.Is(s.cause, stop) {
			t.Fatalf("err %v cause %v", s.err, s.cause)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the tool's Ctx never ended")
	}
}

// Cancelling the run's ctx ends a running tool's Ctx (and a context derived from it),
// while the tool waits on it.
func TestRunCtxCancelEndsARunningToolCtx(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	ended := make(chan error, 1)
	agent := mustAgent(t, pa.AgentDefinition{ID: "running", Tools: []pa.Tool{
		{ID: "wait", Execute: func(_ any, rt pa.RuntimeContext) (any, error) {
			child, stopChild := context.WithCancel(rt.Ctx)
			defer stopChild()
			close(started)
			<-child.Done()
			ended <- rt.Ctx.Err()
			return nil, rt.Ctx.Err()
		}},
	}})
	go func() {
		<-started
		cancel()
	}()
	r, err := agent.Stream(ctx, pa.RunOptions{Input: "go", Client: scripted(t, calls("wait"))}).Result()
	if err != nil || r.Status() != pa.StatusCancelled {
		t.Fatalf("status %s err %v", r.Status(), err)
	}
	select {
	case e := <-ended:
		if !errors.Is(e, context.Canceled) {
			t.Fatalf("err %v", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the tool's Ctx never ended")
	}
}

// Two runs of one agent at once, each with its own ctx value: each run's tool sees its
// own (the tools wait for each other, so the runs overlap).
func TestConcurrentRunsSeeTheirOwnCtx(t *testing.T) {
	var arrived sync.WaitGroup
	arrived.Add(2)
	both := make(chan struct{})
	go func() { arrived.Wait(); close(both) }()
	agent := mustAgent(t, pa.AgentDefinition{ID: "pair", Tools: []pa.Tool{
		{ID: "who", Execute: func(_ any, rt pa.RuntimeContext) (any, error) {
			arrived.Done()
			select {
			case <-both:
			case <-time.After(10 * time.Second):
				return nil, errors.New("the other run's tool never started")
			}
			v, _ := rt.Ctx.Value(tenantKey).(string)
			return "tenant=" + v, nil
		}},
	}})
	tenants := []string{"acme", "globex"}
	results := make([]pa.RunResult, len(tenants))
	errs := make([]error, len(tenants))
	var wg sync.WaitGroup
	for i, tenant := range tenants {
		client := scripted(t, calls("who"), textResponse("ok"))
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.WithValue(context.Background(), tenantKey, tenant)
			results[i], errs[i] = agent.Run(ctx, pa.RunOptions{Input: "go", Client: client})
		}()
	}
	wg.Wait()
	for i, tenant := range tenants {
		if errs[i] != nil || toolMessages(results[i])["c1"].Content != "tenant="+tenant {
			t.Fatalf("run %d: %v %+v", i, errs[i], toolMessages(results[i]))
		}
	}
}

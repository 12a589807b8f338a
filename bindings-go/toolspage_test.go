package phaseoagent_test

// The Go samples of the product's Tools page, copied token for token (gofmt only changed
// their indentation), compiled and run against scripted models, each checked against what
// the page says it does.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	phaseoagent "github.com/phaseo/agent-sdk-go"
)

// The application code the samples name (the page leaves it to the reader).
type ticketIndex struct{}

func (ticketIndex) Search(query string) (any, error) {
	return map[string]any{"query": query, "ids": []any{"T-1", "T-7"}}, nil
}

var tickets ticketIndex

func validateSearchInput(input any) (any, error) {
	if q, _ := input.(map[string]any)["query"].(string); q == "" {
		return nil, errors.New("query is required")
	}
	return input, nil
}

var deployed atomic.Int32

func deployRelease(input any, runtime phaseoagent.RuntimeContext) (any, error) {
	deployed.Add(1)
	return map[string]any{"deployed": input.(map[string]any)["environment"]}, nil
}

// "Define a tool": the model calls the tool by its ID, the SDK checks the arguments and
// runs the function, and the result reaches the model in the next turn; the validator's
// failure fails the run with `Invalid tool input: ...`.
func TestToolsPageDefineATool(t *testing.T) {
	search := phaseoagent.DefineTool(phaseoagent.Tool{
		ID:          "search_tickets",
		Description: "Search support tickets by keyword",
		Parameters: map[string]any{
			"type":       "object",
			"properties": map[string]any{"query": map[string]any{"type": "string"}},
			"required":   []string{"query"},
		},
		Timeout:     10 * time.Second,
		InputSchema: validateSearchInput, // func(any) (any, error)
		Execute: func(input any, runtime phaseoagent.RuntimeContext) (any, error) {
			return tickets.Search(input.(map[string]any)["query"].(string))
		},
	})
	agent := mustAgent(t, phaseoagent.AgentDefinition{ID: "support", Tools: []phaseoagent.Tool{search}})
	rec := &recorder{script: []phaseoagent.ModelResponse{
		{ToolCalls: []phaseoagent.ModelToolCall{{ID: "c1", Name: "search_tickets", Arguments: `{"query":"printer"}`}}},
		{Text: "two tickets"},
	}}
	r := run(t, agent, phaseoagent.RunOptions{Input: "printer tickets?", Client: rec})
	if r.Output != "two tickets" || len(rec.requests) != 2 {
		t.Fatalf("output %v after %d requests", r.Output, len(rec.requests))
	}
	if got := rec.requests[0].Tools[0]; got.ID != "search_tickets" || got.Description != "Search support tickets by keyword" {
		t.Fatalf("tool offered as %+v", got)
	}
	last := rec.requests[1].Messages[len(rec.requests[1].Messages)-1]
	if last.Role != "tool" || last.Content != `{"ids":["T-1","T-7"],"query":"printer"}` {
		t.Fatalf("the next turn got %+v", last)
	}
	// The validator refuses: the run fails with tool_input_invalid.
	_, err := agent.Run(context.Background(), phaseoagent.RunOptions{Input: "x",
		Client: scripted(t, callWith("c1", "search_tickets", `{"query":""}`))})
	if !errors.Is(err, phaseoagent.ErrToolInputInvalid) {
		t.Fatalf("err %v", err)
	}
	contains(t, err.Error(), "Invalid tool input: query is required")
	// Arguments that break Parameters never reach the function either.
	_, err = agent.Run(context.Background(), phaseoagent.RunOptions{Input: "x",
		Client: scripted(t, callWith("c1", "search_tickets", `{}`))})
	if !errors.Is(err, phaseoagent.ErrToolInputInvalid) {
		t.Fatalf("err %v", err)
	}
}

// "Require approval": the function decides per call; a call that needs approval pauses
// the run (waiting_for_human) before it runs, the others run at once.
func TestToolsPageRequireApproval(t *testing.T) {
	deploy := phaseoagent.Tool{
		ID:          "deploy",
		Description: "Deploy the selected release",
		Approval: func(input any, runtime phaseoagent.RuntimeContext) (bool, error) {
			return input.(map[string]any)["environment"] == "production", nil
		},
		Execute: deployRelease,
	}
	agent := mustAgent(t, phaseoagent.AgentDefinition{ID: "ops", Tools: []phaseoagent.Tool{deploy}})
	before := deployed.Load()
	r := run(t, agent, phaseoagent.RunOptions{Input: "ship", Client: scripted(t,
		callWith("c1", "deploy", `{"environment":"staging"}`), textResponse("staged"))})
	if r.Output != "staged" || deployed.Load() != before+1 {
		t.Fatalf("staging: output %v, deployed %d", r.Output, deployed.Load()-before)
	}
	client := scripted(t, callWith("c1", "deploy", `{"environment":"production"}`), textResponse("shipped"))
	paused := run(t, agent, phaseoagent.RunOptions{Input: "ship", Client: client})
	if paused.Status() != phaseoagent.StatusWaitingForHuman || len(paused.Pending()) != 1 ||
		paused.Pending()[0].Kind != "approval" || deployed.Load() != before+1 {
		t.Fatalf("production: status %s pending %+v", paused.Status(), paused.Pending())
	}
	done, err := agent.Continue(context.Background(), phaseoagent.ContinueOptions{Run: paused, Client: client,
		Approvals: []phaseoagent.ToolDecision{{ToolCallID: "c1"}}})
	if err != nil || done.Output != "shipped" || deployed.Load() != before+2 {
		t.Fatalf("after approval: %v %v", done.Output, err)
	}
}

// "Report progress and update the context": progress is a tool.preliminary_result
// event, and the context is replaced for the later turns.
func TestToolsPageProgressAndContext(t *testing.T) {
	index := phaseoagent.Tool{ID: "index-repository",
		Execute: func(input any, runtime phaseoagent.RuntimeContext) (any, error) {
			_ = runtime.EmitProgress(map[string]any{"stage": "indexing"})
			runtime.SetContext(map[string]any{"indexed": true})
			return "done", nil
		},
	}
	agent := mustAgent(t, phaseoagent.AgentDefinition{ID: "indexer", Tools: []phaseoagent.Tool{index}})
	rec := &recorder{script: []phaseoagent.ModelResponse{
		{ToolCalls: []phaseoagent.ModelToolCall{{ID: "c1", Name: "index-repository", Arguments: `{}`}}},
		{Text: "indexed"},
	}}
	var progress []any
	r := run(t, agent, phaseoagent.RunOptions{Input: "index", Client: rec, Context: map[string]any{"indexed": false},
		OnEvent: func(e phaseoagent.AgentEvent) {
			if e.Type == "tool.preliminary_result" {
				progress = append(progress, e.Details["result"])
			}
		}})
	if asJSON(t, progress) != `[{"stage":"indexing"}]` || toolMessages(r)["c1"].Content != "done" {
		t.Fatalf("progress %v messages %+v", progress, r.Messages)
	}
	if asJSON(t, rec.requests[1].Context) != `{"indexed":true}` || asJSON(t, r.Run.Context) != `{"indexed":true}` {
		t.Fatalf("context: next turn %v, state %v", rec.requests[1].Context, r.Run.Context)
	}
}

// concurrencyProbe is a tool that records how many of its calls run at once; call i
// sleeps less than call i-1, so later calls finish first, and each sets the context.
func concurrencyProbe(peak *atomic.Int32) phaseoagent.Tool {
	var running atomic.Int32
	var mu sync.Mutex
	return phaseoagent.Tool{ID: "probe", Execute: func(input any, rt phaseoagent.RuntimeContext) (any, error) {
		n := running.Add(1)
		mu.Lock()
		if n > peak.Load() {
			peak.Store(n)
		}
		mu.Unlock()
		i := input.(map[string]any)["i"].(float64)
		time.Sleep(time.Duration(5-i) * 40 * time.Millisecond)
		running.Add(-1)
		if err := rt.SetContext(map[string]any{"by": rt.ToolCall.ID}); err != nil {
			return nil, err
		}
		return fmt.Sprintf("call %v", i), nil
	}}
}

func fourProbeCalls() map[string]any {
	list := []any{}
	for i := 1; i <= 4; i++ {
		list = append(list, map[string]any{"id": fmt.Sprintf("c%d", i), "name": "probe", "arguments": fmt.Sprintf(`{"i":%d}`, i)})
	}
	return map[string]any{"toolCalls": list}
}

// "Run tools concurrently": one at a time until a limit is set, on the agent or in
// RunOptions for one run; results in call order whatever order the calls finish in; of
// concurrent tools setting the context, the last in call order wins.
func TestToolsPageConcurrency(t *testing.T) {
	check := func(t *testing.T, r phaseoagent.RunResult, peak int32, want int32) {
		t.Helper()
		if peak != want {
			t.Fatalf("%d calls ran at once, want %d", peak, want)
		}
		var order []string
		for _, m := range r.Messages {
			if m.Role == "tool" {
				order = append(order, m.ToolCallID+"="+m.Content)
			}
		}
		if fmt.Sprint(order) != "[c1=call 1 c2=call 2 c3=call 3 c4=call 4]" || asJSON(t, r.Run.Context) != `{"by":"c4"}` {
			t.Fatalf("results %v context %v", order, r.Run.Context)
		}
	}
	t.Run("default", func(t *testing.T) {
		var peak atomic.Int32
		agent := mustAgent(t, phaseoagent.AgentDefinition{ID: "seq", Tools: []phaseoagent.Tool{concurrencyProbe(&peak)}})
		r := run(t, agent, phaseoagent.RunOptions{Input: "go", Client: scripted(t, fourProbeCalls(), textResponse("ok"))})
		check(t, r, peak.Load(), 1)
	})
	t.Run("agent", func(t *testing.T) {
		var peak atomic.Int32
		agent := mustAgent(t, phaseoagent.AgentDefinition{ID: "conc", Tools: []phaseoagent.Tool{concurrencyProbe(&peak)},
			ToolExecution: phaseoagent.ToolExecutionConfig{Concurrency: 4},
		})
		r := run(t, agent, phaseoagent.RunOptions{Input: "go", Client: scripted(t, fourProbeCalls(), textResponse("ok"))})
		check(t, r, peak.Load(), 4)
	})
	t.Run("RunOptions", func(t *testing.T) {
		var peak atomic.Int32
		agent := mustAgent(t, phaseoagent.AgentDefinition{ID: "conc-run", Tools: []phaseoagent.Tool{concurrencyProbe(&peak)}})
		r := run(t, agent, phaseoagent.RunOptions{Input: "go", Client: scripted(t, fourProbeCalls(), textResponse("ok")),
			ToolExecution: phaseoagent.ToolExecutionConfig{Concurrency: 4},
		})
		check(t, r, peak.Load(), 4)
		// One run only: the agent's next run is sequential again.
		peak.Store(0)
		r = run(t, agent, phaseoagent.RunOptions{Input: "go", Client: scripted(t, fourProbeCalls(), textResponse("ok"))})
		check(t, r, peak.Load(), 1)
		// The product SDK's pointer form sets it too, and a continue takes it as well.
		peak.Store(0)
		r = run(t, agent, phaseoagent.RunOptions{Input: "go", Client: scripted(t, fourProbeCalls(), textResponse("ok")),
			ToolExecution: &phaseoagent.ToolExecutionConfig{Concurrency: 2}})
		check(t, r, peak.Load(), 2)
	})
}

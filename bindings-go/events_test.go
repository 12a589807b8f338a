package phaseoagent_test

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	pa "github.com/phaseo/agent-sdk-go"
)

// eventLog records event types from any goroutine.
type eventLog struct {
	mu    sync.Mutex
	types []string
}

func (l *eventLog) add(e pa.AgentEvent) {
	l.mu.Lock()
	l.types = append(l.types, e.Type)
	l.mu.Unlock()
}

func (l *eventLog) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.types, ",")
}

// waitFor polls cond for up to limit.
func waitFor(limit time.Duration, cond func() bool) bool {
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

const toolRunEvents = "run.started,step.started,model.requested,model.completed,tool.started,tool.completed," +
	"step.completed,checkpoint.saved,step.started,model.requested,model.completed,step.completed,checkpoint.saved,run.completed"

// An OnEvent handler that blocks does not make the run ignore its ctx: Run (and a stream's
// Result) returns at the deadline, cancelled; once the handler is released it gets the
// events that came meanwhile, in order, up to run.cancelled.
func TestBlockedEventHandlerDoesNotHoldTheRun(t *testing.T) {
	for _, streamed := range []bool{false, true} {
		name := map[bool]string{false: "Run", true: "Stream"}[streamed]
		t.Run(name, func(t *testing.T) {
			release := make(chan struct{})
			var once sync.Once
			t.Cleanup(func() { once.Do(func() { close(release) }) })
			log := &eventLog{}
			handler := func(e pa.AgentEvent) {
				log.add(e)
				if e.Type == "tool.started" {
					<-release
				}
			}
			// The tool never ends by itself (it ignores its Ctx): the run cannot complete, and
			// only its cancellation ends it (the tool's late result is discarded).
			agent := mustAgent(t, pa.AgentDefinition{ID: "blocked", Tools: []pa.Tool{{ID: "t",
				Execute: func(any, pa.RuntimeContext) (any, error) {
					<-release
					return "late", nil
				}}}})
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			opts := pa.RunOptions{Input: "go", Client: scripted(t, calls("t"), textResponse("done")), OnEvent: handler}
			type ended struct {
				r   pa.RunResult
				err error
			}
			out := make(chan ended, 1)
			start := time.Now()
			go func() {
				if streamed {
					r, err := agent.Stream(ctx, opts).Result()
					out <- ended{r, err}
					return
				}
				r, err := agent.Run(ctx, opts)
				out <- ended{r, err}
			}()
			select {
			case e := <-out:
				if e.err != nil || e.r.Status() != pa.StatusCancelled {
					t.Fatalf("status %s err %v", e.r.Status(), e.err)
				}
				if elapsed := time.Since(start); elapsed > 5*time.Second {
					t.Fatalf("returned after %v", elapsed)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("the run ignored its ctx deadline while the handler blocked (events %s)", log.text())
			}
			once.Do(func() { close(release) })
			if !waitFor(5*time.Second, func() bool { return strings.HasSuffix(log.text(), ",run.cancelled") }) {
				t.Fatalf("the released handler did not get the events up to run.cancelled: %s", log.text())
			}
			if text := log.text(); !strings.HasPrefix(text, "run.started,step.started,model.requested,") ||
				strings.Count(text, "tool.started") != 1 || strings.Index(text, "tool.started") > strings.Index(text, "run.cancelled") {
				t.Fatalf("events out of order: %s", text)
			}
		})
	}
}

// A handler that keeps up still sees every event, run.cancelled included, before a
// cancelled Run returns.
func TestCancelledRunDeliversTheLastEvents(t *testing.T) {
	started := make(chan struct{})
	agent := mustAgent(t, pa.AgentDefinition{ID: "cancel-events", Tools: []pa.Tool{{ID: "wait",
		Execute: func(_ any, rt pa.RuntimeContext) (any, error) {
			close(started)
			<-rt.Ctx.Done()
			return nil, rt.Ctx.Err()
		}}}})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	var types []string // no lock: Run returns only after the handler's last call
	r, err := agent.Run(ctx, pa.RunOptions{Input: "go", Client: scripted(t, calls("wait")),
		OnEvent: func(e pa.AgentEvent) { types = append(types, e.Type) }})
	if err != nil || r.Status() != pa.StatusCancelled {
		t.Fatalf("status %s err %v", r.Status(), err)
	}
	if len(types) == 0 || types[len(types)-1] != "run.cancelled" {
		t.Fatalf("events %v", types)
	}
}

// runtime.Goexit or a panic in OnEvent is that handler call's end, nothing more: the run
// completes and the handler gets every event in order. Goexit used to be fatal (the
// handler ran on a core thread Go did not create), so this runs in a child process.
func TestEventHandlerGoexitAndPanic(t *testing.T) {
	inChild(t, 2*time.Minute, func(t *testing.T) {
		for _, mode := range []string{"goexit", "panic"} {
			t.Run(mode, func(t *testing.T) {
				log := &eventLog{}
				agent := mustAgent(t, pa.AgentDefinition{ID: "ev", Tools: []pa.Tool{okTool("t")}})
				r := run(t, agent, pa.RunOptions{Input: "go", Client: scripted(t, calls("t"), textResponse("done")),
					OnEvent: func(e pa.AgentEvent) {
						log.add(e)
						if mode == "goexit" {
							runtime.Goexit()
						}
						panic(cyclicMap()) // a panic value that fmt cannot print
					}})
				if r.Status() != pa.StatusCompleted || log.text() != toolRunEvents {
					t.Fatalf("status %s events %s", r.Status(), log.text())
				}
				// Streams deliver to OnEvent the same way (their pump must survive it).
				log2 := &eventLog{}
				s := agent.Stream(context.Background(), pa.RunOptions{Input: "go", Client: scripted(t, calls("t"), textResponse("done")),
					OnEvent: func(e pa.AgentEvent) {
						log2.add(e)
						runtime.Goexit()
					}})
				done := make(chan struct{})
				go func() { _, _ = s.Result(); close(done) }()
				select {
				case <-done:
				case <-time.After(20 * time.Second):
					t.Fatal("the stream hung after the handler called Goexit")
				}
				if !strings.HasPrefix(log2.text(), "run.started,") || !strings.HasSuffix(log2.text(), ",run.completed") {
					t.Fatalf("stream events %s", log2.text())
				}
			})
		}
	})
}

// An executor's error text that is not UTF-8 is a tool error like any other (docs/
// behaviour.md §2.7), with U+FFFD for the bad bytes: under return-to-model the model gets
// it and the run goes on (it used to be tool_output_invalid, which fails the run).
func TestInvalidUTF8ErrorIsAToolError(t *testing.T) {
	agent := mustAgent(t, pa.AgentDefinition{ID: "utf8", Tools: []pa.Tool{{ID: "t", OnError: "return-to-model",
		Execute: func(any, pa.RuntimeContext) (any, error) { return nil, errString("bad \xff\xfe bytes\x00 end") }}}})
	r := run(t, agent, pa.RunOptions{Input: "go", Client: scripted(t, calls("t"), textResponse("after"))})
	msg := toolMessages(r)["c1"]
	if r.Status() != pa.StatusCompleted || !msg.IsError || msg.Content != `{"error":"bad `+"\uFFFD"+` bytes`+"\uFFFD"+` end"}` {
		t.Fatalf("status %s message %+v", r.Status(), msg)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

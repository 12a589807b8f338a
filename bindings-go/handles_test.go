package phaseoagent_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"

	pa "github.com/phaseo/agent-sdk-go"
)

// TestHandlesSurviveStackMoves: the binding hands the core cgo.Handle values (small integers)
// as the user data of its hosts and callbacks. Go moves a goroutine's stack when it grows or
// shrinks it, and throws ("invalid pointer found on stack") when a frame being moved has a
// small integer where a pointer belongs, so no frame of the binding may hold a handle as a
// pointer. The child process (fresh, so its handles are the small first ones) makes agents,
// runs them with a tool and an event handler, and closes them on several goroutines whose
// stacks grow and shrink all along, with a collection running all the time.
func TestHandlesSurviveStackMoves(t *testing.T) {
	if os.Getenv("PHASEO_GO_STACK_CHILD") == "1" {
		stackMoves(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHandlesSurviveStackMoves$", "-test.count=1", "-test.timeout=0")
	cmd.Env = append(os.Environ(), "PHASEO_GO_STACK_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child process died: %v\n%s\n…\n%s", err, firstChars(string(out), 3000), lastChars(string(out), 1500))
	}
}

// stackMoves is the child's work: 1,000 runs, which make the process's first few thousand
// handles (those below 4,096, the smallest value Go takes for a pointer, are the ones that
// kill the process when a frame holds them as one).
func stackMoves(t *testing.T) {
	debug.SetGCPercent(1)
	var stop atomic.Bool
	go func() {
		for !stop.Load() {
			runtime.GC()
		}
	}()
	defer stop.Store(true)
	add := pa.Tool{ID: "add", Execute: func(in any, _ pa.RuntimeContext) (any, error) {
		return deepThenBack(64, in), nil
	}}
	var wg sync.WaitGroup
	var failed atomic.Value
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 250; i++ {
				// A deep stack, then a shallow one: the next collection shrinks it, moving
				// the frames below, the binding's among them.
				deepThenBack(256, nil)
				if err := oneRun(add, i); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatal(err)
	}
}

// oneRun makes an agent with tool, runs two turns of calls with an event handler, and
// closes the agent: a handle for the agent and one for the run, and every callback kind.
func oneRun(tool pa.Tool, i int) error {
	agent, err := pa.CreateAgent(pa.AgentDefinition{ID: "stack", Tools: []pa.Tool{tool}})
	if err != nil {
		return err
	}
	defer agent.Close()
	client, err := pa.NewScriptedClient([]map[string]any{
		callWith("c1", "add", `{"a":1}`), callWith("c2", "add", `{"a":2}`), textResponse("done"),
	}, 0)
	if err != nil {
		return err
	}
	var events atomic.Int64
	r, err := agent.Run(context.Background(), pa.RunOptions{Input: fmt.Sprint("go ", i), Client: client,
		OnEvent: func(pa.AgentEvent) { events.Add(1); deepThenBack(32, nil) }})
	if err != nil {
		return err
	}
	if r.Output != "done" || events.Load() == 0 {
		return fmt.Errorf("run %d: output %v, %d events", i, r.Output, events.Load())
	}
	return nil
}

// deepThenBack recurses depth frames deep (each with a buffer, so the stack grows) and
// returns v.
func deepThenBack(depth int, v any) any {
	var pad [512]byte
	pad[depth%len(pad)] = byte(depth)
	if depth == 0 {
		return v
	}
	r := deepThenBack(depth-1, v)
	runtime.KeepAlive(pad)
	return r
}

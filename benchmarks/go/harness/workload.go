// Package harness holds the workloads of the Go benchmark and their timing, the same for
// every SDK (the workloads of benchmarks/java/harness/.../Bench.java and
// benchmarks/node/bench.mjs):
//
//   - empty: one model turn that returns the final text (the run loop's floor);
//   - fanout: one turn with FANOUT_N (1000) calls of add(a, b), then the final turn (µs per call);
//   - sequential: SEQ_N (200) turns of one add call each, then the final turn (µs per turn);
//   - sleepy: one turn with SLEEPY_N (100) calls of nap(i), a tool that sleeps 50 ms (wall ms).
//
// Arguments are JSON text and call ids unique, as from a real provider. Setting up a run
// (the scripted model, the agent) is untimed; the whole run call is timed.
package harness

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// SleepMS is how long nap sleeps.
const SleepMS = 50

// Calls counts the tool invocations of the current run (every SDK's tools count here).
var Calls atomic.Int64

// Call is one tool call of a scripted turn: id, tool name, arguments as JSON text.
type Call struct {
	ID, Name, Arguments string
}

// Workload is the scripted turns (each a list of calls; the final text turn "done" is not
// listed), the tool it uses, how many invocations a run makes, and the unit count the
// per-unit figure divides by (0: the figure is the wall time).
type Workload struct {
	Name     string
	Tool     string
	Turns    [][]Call
	Expected int
	PerUnit  int
	Unit     string
}

// MaxSteps is the step limit to give an SDK: every turn plus slack.
func (w Workload) MaxSteps() int { return len(w.Turns) + 5 }

// AddArgs is the JSON text of add's arguments.
func AddArgs(i int) string { return `{"a":` + strconv.Itoa(i) + `,"b":1}` }

// Add is add's body: the sum, counted.
func Add(a, b int) int {
	Calls.Add(1)
	return a + b
}

// Nap is nap's body: sleeps SleepMS, returns i, counted.
func Nap(i int) int {
	Calls.Add(1)
	time.Sleep(SleepMS * time.Millisecond)
	return i
}

// Env is an integer environment variable, or dflt when unset.
func Env(name string, dflt int) int {
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		return dflt
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		panic(fmt.Sprintf("%s=%q is not an integer", name, v))
	}
	return n
}

// Workloads are those selected by WORKLOADS (comma list; default all).
func Workloads() []Workload {
	fanout, seq, sleepy := Env("FANOUT_N", 1000), Env("SEQ_N", 200), Env("SLEEPY_N", 100)
	all := []Workload{{Name: "empty", Unit: "ms wall"}}
	fan := make([]Call, fanout)
	for i := range fan {
		fan[i] = Call{"c" + strconv.Itoa(i), "add", AddArgs(i)}
	}
	all = append(all, Workload{"fanout", "add", [][]Call{fan}, fanout, fanout, "µs/call"})
	turns := make([][]Call, seq)
	for i := range turns {
		turns[i] = []Call{{"c" + strconv.Itoa(i), "add", AddArgs(i)}}
	}
	all = append(all, Workload{"sequential", "add", turns, seq, seq, "µs/turn"})
	naps := make([]Call, sleepy)
	for i := range naps {
		naps[i] = Call{"c" + strconv.Itoa(i), "nap", `{"i":` + strconv.Itoa(i) + `}`}
	}
	all = append(all, Workload{"sleepy", "nap", [][]Call{naps}, sleepy, 0, "ms wall"})
	only := strings.TrimSpace(os.Getenv("WORKLOADS"))
	if only == "" {
		return all
	}
	var out []Workload
	for _, w := range all {
		for _, n := range strings.Split(only, ",") {
			if n == w.Name {
				out = append(out, w)
			}
		}
	}
	return out
}

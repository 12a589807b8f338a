package phaseoagent_test

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	pa "github.com/phaseo/agent-sdk-go"
)

// The workloads of benchmarks/node and benchmarks/python: `add(a, b)` with a JSON Schema,
// toolConcurrency 1000, a scripted model.
func benchAgent(b *testing.B) *pa.Agent {
	return mustAgent(b, pa.AgentDefinition{
		ID:            "bench",
		ToolExecution: pa.ToolExecutionConfig{Concurrency: 1000},
		Tools: []pa.Tool{{
			ID:          "add",
			Description: "Add two numbers.",
			Parameters: map[string]any{"type": "object", "properties": map[string]any{
				"a": map[string]any{"type": "number"}, "b": map[string]any{"type": "number"}},
				"required": []any{"a", "b"}},
			Execute: func(input any, _ pa.RuntimeContext) (any, error) {
				m := input.(map[string]any)
				return m["a"].(float64) + m["b"].(float64), nil
			},
		}},
	})
}

func fanoutScript(n int) []map[string]any {
	list := make([]any, n)
	for i := range list {
		list[i] = map[string]any{"id": fmt.Sprintf("c%d", i), "name": "add", "arguments": `{"a":1,"b":2}`}
	}
	return []map[string]any{{"toolCalls": list}, {"text": "done"}}
}

func seqScript(turns int) []map[string]any {
	out := make([]map[string]any, 0, turns+1)
	for i := 0; i < turns; i++ {
		out = append(out, map[string]any{"toolCalls": []any{map[string]any{"id": fmt.Sprintf("c%d", i), "name": "add", "arguments": `{"a":1,"b":2}`}}})
	}
	return append(out, map[string]any{"text": "done"})
}

// timedRun runs the script once and returns the run's wall time (the result included: a
// RunResult parsed from the final state).
func timedRun(b *testing.B, agent *pa.Agent, script []map[string]any, maxSteps int) time.Duration {
	d, _ := timedRunCPU(b, agent, script, maxSteps)
	return d
}

// timedRunCPU is timedRun also returning the process's CPU time during the run.
func timedRunCPU(b *testing.B, agent *pa.Agent, script []map[string]any, maxSteps int) (time.Duration, time.Duration) {
	client, err := pa.NewScriptedClient(script, 0)
	if err != nil {
		b.Fatal(err)
	}
	cpu := cpuTime()
	start := time.Now()
	r, err := agent.Run(context.Background(), pa.RunOptions{Input: "go", Client: client, RunOverrides: pa.RunOverrides{MaxSteps: maxSteps}})
	elapsed := time.Since(start)
	cpu = cpuTime() - cpu
	if err != nil || r.Output != "done" {
		b.Fatalf("run: %v %v", r.Output, err)
	}
	return elapsed, cpu
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// cpuTime is the process's user + system CPU time so far: on a shared machine the wall
// time of a run depends on the other processes, its CPU time much less.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFanOut1000: one turn of 1,000 tool calls (goroutines), then a final turn;
// reports the cost per call, and net of an empty run (target ≤ 10 µs per call).
func BenchmarkFanOut1000(b *testing.B) {
	agent := benchAgent(b)
	const n = 1000
	for range 20 { // warm-up: a fresh process's first runs fault in the allocators' memory
		timedRun(b, agent, fanoutScript(n), 0)
	}
	var empty, fan []time.Duration
	var cpu time.Duration
	runs := 0
	for b.Loop() {
		empty = append(empty, timedRun(b, agent, []map[string]any{{"text": "done"}}, 0))
		wall, used := timedRunCPU(b, agent, fanoutScript(n), 0)
		fan = append(fan, wall)
		cpu += used
		runs++
	}
	b.ReportMetric(float64(median(fan).Nanoseconds())/n/1000, "µs/call")
	b.ReportMetric(float64((median(fan)-median(empty)).Nanoseconds())/n/1000, "net-µs/call")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(runs)/n/1000, "cpu-µs/call")
}

// BenchmarkTurns: sequential runs of 25 and 400 one-call turns (plus the final turn);
// reports the cost per turn of each and their ratio, and, inside the 400-turn run, the
// time of turn 400 against turn 25 (each the median of the ten turns around it, timed by
// the tool itself; target: flat, ratio ≤ 1.5).
func BenchmarkTurns(b *testing.B) {
	var stamps []time.Time
	agent := mustAgent(b, pa.AgentDefinition{
		ID: "bench",
		Tools: []pa.Tool{{
			ID:         "add",
			Parameters: map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "number"}, "b": map[string]any{"type": "number"}}},
			Execute: func(input any, _ pa.RuntimeContext) (any, error) {
				stamps = append(stamps, time.Now()) // one call per turn: calls never overlap
				m := input.(map[string]any)
				return m["a"].(float64) + m["b"].(float64), nil
			},
		}},
	})
	for range 5 { // warm-up
		timedRun(b, agent, seqScript(400), 500)
	}
	var short, long []time.Duration
	var at25, at400 []time.Duration
	for b.Loop() {
		short = append(short, timedRun(b, agent, seqScript(25), 500))
		stamps = stamps[:0]
		long = append(long, timedRun(b, agent, seqScript(400), 500))
		turn := func(k int) time.Duration { // the median turn time around turn k (1-based)
			var d []time.Duration
			for i := k - 5; i < k+5 && i < len(stamps); i++ {
				d = append(d, stamps[i].Sub(stamps[i-1]))
			}
			return median(d)
		}
		at25 = append(at25, turn(25))
		at400 = append(at400, turn(395)) // turns 390–399: the last ten
	}
	perShort := float64(median(short).Nanoseconds()) / 26 / 1000
	perLong := float64(median(long).Nanoseconds()) / 401 / 1000
	b.ReportMetric(perShort, "µs/turn@25")
	b.ReportMetric(perLong, "µs/turn@400")
	b.ReportMetric(perLong/perShort, "ratio")
	b.ReportMetric(float64(median(at400))/float64(median(at25)), "turn400/turn25")
}

// BenchmarkParseRunResult: reading a run's state text into a RunResult (what every run's end
// does with the state the core hands over, and ParseRunResult with a stored one), the
// state of a 1,000-call turn and of 200 one-call turns; -benchmem shows what it allocates.
func BenchmarkParseRunResult(b *testing.B) {
	for _, w := range []struct {
		name   string
		script []map[string]any
	}{{"fanout1000", fanoutScript(1000)}, {"turns200", seqScript(200)}} {
		b.Run(w.name, func(b *testing.B) {
			client, err := pa.NewScriptedClient(w.script, 0)
			if err != nil {
				b.Fatal(err)
			}
			r, err := benchAgent(b).Run(context.Background(), pa.RunOptions{Input: "go", Client: client, RunOverrides: pa.RunOverrides{MaxSteps: 300}})
			if err != nil {
				b.Fatal(err)
			}
			text := r.JSON()
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				if _, err := pa.ParseRunResult(text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"syscall"
	"time"
)

// Run is one prepared run: it returns the final text.
type Run func() (string, error)

// SDK is one SDK under test.
type SDK interface {
	// Name is its name in the table.
	Name() string
	// Versions are the versions of what is measured.
	Versions() map[string]string
	// Prepare builds one run of w (untimed); the returned run is timed.
	Prepare(w Workload) (Run, error)
}

// Result is one workload's outcome in one process, printed as a RESULT line.
type Result struct {
	SDK      string  `json:"sdk"`
	Workload string  `json:"workload"`
	MedianMS float64 `json:"median_ms"`
	MinMS    float64 `json:"min_ms"`
	CPUMS    float64 `json:"cpu_ms"` // the median run's process CPU time (user + system)
	PerUnit  int     `json:"per_unit"`
	Runs     int     `json:"runs"`
	Warmup   int     `json:"warmup"`
	Mallocs  float64 `json:"mallocs_per_run"`
	Load1    float64 `json:"load1"`
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// Main runs every workload for sdk: WARMUP (3) untimed runs, then RUNS (5) timed ones,
// runtime.GC() before each (no run pays for the garbage of the one before, and each starts
// with cold caches), or none with GC_BEFORE_RUN=0 (runs back to back, as in a busy service;
// use more RUNS); prints one RESULT line per workload and a VERSIONS line. Every run checks
// the final text and the number of tool invocations.
func Main(sdk SDK) {
	if err := run(sdk); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", sdk.Name(), err)
		os.Exit(1)
	}
}

func run(sdk SDK) error {
	runs, warmup := Env("RUNS", 5), Env("WARMUP", 3)
	gcBeforeRun := Env("GC_BEFORE_RUN", 1) != 0
	// CPUPROFILE=file profiles the whole process (the untimed set-up included) for pprof.
	if path := os.Getenv("CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer func() { pprof.StopCPUProfile(); _ = f.Close() }()
	}
	// MEMPROFILE=file records every allocation (slow) and writes them for pprof at the end.
	if path := os.Getenv("MEMPROFILE"); path != "" {
		runtime.MemProfileRate = 1
		defer func() {
			if f, err := os.Create(path); err == nil {
				_ = pprof.Lookup("allocs").WriteTo(f, 0)
				_ = f.Close()
			}
		}()
	}
	for _, w := range Workloads() {
		var samples, cpus []float64
		var mallocs uint64
		for i := 0; i < warmup+runs; i++ {
			Calls.Store(0)
			r, err := sdk.Prepare(w)
			if err != nil {
				return fmt.Errorf("%s: prepare: %w", w.Name, err)
			}
			if gcBeforeRun {
				runtime.GC()
			}
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			c0 := cpuTime()
			t0 := time.Now()
			out, err := r()
			ms := float64(time.Since(t0).Nanoseconds()) / 1e6
			cpu := float64((cpuTime() - c0).Nanoseconds()) / 1e6
			runtime.ReadMemStats(&m1)
			if err != nil {
				return fmt.Errorf("%s: %w", w.Name, err)
			}
			if out != "done" {
				return fmt.Errorf("%s: final text %q", w.Name, out)
			}
			if n := Calls.Load(); n != int64(w.Expected) {
				return fmt.Errorf("%s: %d calls, expected %d", w.Name, n, w.Expected)
			}
			if i >= warmup {
				samples = append(samples, ms)
				cpus = append(cpus, cpu)
				mallocs += m1.Mallocs - m0.Mallocs
			}
		}
		res := Result{SDK: sdk.Name(), Workload: w.Name, MedianMS: median(samples), MinMS: slices.Min(samples), CPUMS: median(cpus),
			PerUnit: w.PerUnit, Runs: runs, Warmup: warmup, Mallocs: float64(mallocs) / float64(runs),
			Load1: Load()[0]}
		b, _ := json.Marshal(res)
		fmt.Println("RESULT " + string(b))
	}
	v := map[string]any{"sdk": sdk.Name(), "versions": sdk.Versions(), "go": runtime.Version()}
	b, _ := json.Marshal(v)
	fmt.Println("VERSIONS " + string(b))
	return nil
}

// ModuleVersion is the version of module path in this binary's build information.
func ModuleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				if d.Replace != nil {
					return d.Version + " => " + d.Replace.Path
				}
				return d.Version
			}
		}
	}
	return "?"
}

// cpuTime is the process's user + system CPU time so far: on a shared machine a run's
// wall time depends on the other processes, its CPU time much less.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

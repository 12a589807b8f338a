// Command driver starts every SDK's program in a process of its own, ROUNDS (3) times, the
// order rotating from round to round (so no SDK always runs first, or always after the
// same neighbour), collects their RESULT lines and prints one table: per SDK the median of
// its rounds' medians, and the ratio of each peer to ours (peer ÷ ours: above 1 we are
// faster). Then one JSON document.
//
//	driver -bin DIR [-check] [-sdks ours,eino-react,eino-adk,adk]
//
// DIR holds the programs run.sh builds (ours, eino, adk). With -check the exit status is 1
// when our fan-out or sequential figure is slower than the best peer's (a ratio below 1).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/phaseo/agent-sdk-bench-go/harness"
)

// sdk is a program, the SDK variable it is started with, and its label in the table.
type sdk struct{ name, program, label string }

var all = []sdk{
	{"ours", "ours", "ours (Go)"},
	{"eino-react", "eino", "Eino react"},
	{"eino-adk", "eino", "Eino ChatModelAgent"},
	{"adk", "adk", "ADK Go"},
}

var guarded = []string{"fanout", "sequential"}

func main() {
	bin := flag.String("bin", "", "folder of the built programs")
	check := flag.Bool("check", false, "exit 1 when our fan-out or sequential figure is behind the best peer's")
	names := flag.String("sdks", "ours,eino-react,eino-adk,adk", "comma list")
	flag.Parse()
	var sdks []sdk
	for _, s := range all {
		if slices.Contains(strings.Split(*names, ","), s.name) {
			sdks = append(sdks, s)
		}
	}
	rounds := harness.Env("ROUNDS", 3)
	loadBefore := harness.Load()
	t0 := time.Now()
	results := map[string]map[string][]harness.Result{}
	versions := map[string]json.RawMessage{}
	var order []string
	for r := 0; r < rounds; r++ {
		for k := range sdks {
			s := sdks[(k+r)%len(sdks)]
			fmt.Fprintf(os.Stderr, "== round %d/%d: %s (load %.2f)\n", r+1, rounds, s.label, harness.Load()[0])
			if err := runOne(filepath.Join(*bin, s.program), s, results, versions, &order); err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", s.name, err)
				os.Exit(2)
			}
		}
	}
	loadAfter := harness.Load()
	elapsed := time.Since(t0).Seconds()

	fig := map[string]map[string]float64{}
	best := map[string]map[string]float64{}
	cpu := map[string]map[string]float64{}
	for _, s := range sdks {
		fig[s.name], best[s.name], cpu[s.name] = map[string]float64{}, map[string]float64{}, map[string]float64{}
		for _, w := range order {
			rs := results[s.name][w]
			if len(rs) == 0 {
				continue
			}
			var meds, cpus []float64
			lo := 0.0
			for i, res := range rs {
				scale := 1.0
				if res.PerUnit > 0 {
					scale = 1000 / float64(res.PerUnit)
				}
				meds = append(meds, res.MedianMS*scale)
				cpus = append(cpus, res.CPUMS*scale)
				if i == 0 || res.MinMS*scale < lo {
					lo = res.MinMS * scale
				}
			}
			fig[s.name][w], best[s.name][w], cpu[s.name][w] = median(meds), lo, median(cpus)
		}
	}

	units := map[string]string{}
	for _, w := range harness.Workloads() {
		units[w.Name] = w.Unit
	}
	header := []string{"workload", "unit"}
	for _, s := range sdks {
		header = append(header, s.label)
	}
	for _, s := range sdks[1:] {
		header = append(header, s.label+" ÷ ours")
	}
	header = append(header, "ours (fastest run)")
	rows := [][]string{header}
	var failures []string
	for _, w := range order {
		row := []string{w, units[w]}
		ours, haveOurs := fig["ours"][w]
		for _, s := range sdks {
			row = append(row, cell(fig[s.name], w))
		}
		bestPeer, have := 0.0, false
		for _, s := range sdks {
			if s.name == "ours" {
				continue
			}
			v, ok := fig[s.name][w]
			if ok && haveOurs {
				row = append(row, fmtNum(v/ours)+"×")
			} else {
				row = append(row, "–")
			}
			if ok && (!have || v < bestPeer) {
				bestPeer, have = v, true
			}
		}
		row = append(row, cell(best["ours"], w))
		rows = append(rows, row)
		if slices.Contains(guarded, w) && haveOurs && have && bestPeer/ours < 1 {
			failures = append(failures, fmt.Sprintf("%s: best peer %s ÷ ours %s = %s×", w, fmtNum(bestPeer), fmtNum(ours), fmtNum(bestPeer/ours)))
		}
	}

	fmt.Println()
	fmt.Printf("Phaseo Agent SDK (Go) vs Go peers: %d rounds, each SDK in its own process per round, order rotating; "+
		"figure = median over rounds of each round's median run; %d CPUs, load before %.2f %.2f %.2f, after %.2f %.2f %.2f; %.0f s\n",
		rounds, runtime.NumCPU(), loadBefore[0], loadBefore[1], loadBefore[2], loadAfter[0], loadAfter[1], loadAfter[2], elapsed)
	vs, _ := json.Marshal(versions)
	fmt.Printf("%s; versions: %s\n\n", runtime.Version(), vs)
	fmt.Print(table(rows))
	// The process's CPU time in the same units (all threads: on a loaded machine it
	// varies much less than the wall time).
	cpuRows := [][]string{{"CPU time", "unit"}}
	for _, s := range sdks {
		cpuRows[0] = append(cpuRows[0], s.label)
	}
	for _, w := range order {
		row := []string{w, strings.Replace(units[w], "wall", "CPU", 1)}
		for _, s := range sdks {
			row = append(row, cell(cpu[s.name], w))
		}
		cpuRows = append(cpuRows, row)
	}
	fmt.Println()
	fmt.Print(table(cpuRows))
	doc, _ := json.Marshal(map[string]any{"load_before": loadBefore, "load_after": loadAfter, "rounds": rounds,
		"figures": fig, "fastest": best, "cpu": cpu, "results": results, "versions": versions})
	fmt.Printf("\nJSON:\n%s\n", doc)
	if *check {
		if len(failures) > 0 {
			fmt.Println("bench-check (Go) FAILED: " + strings.Join(failures, "; "))
			os.Exit(1)
		}
		fmt.Println("bench-check (Go): fan-out and sequential ahead of the best peer")
	}
}

// runOne runs one SDK's program and files its RESULT and VERSIONS lines.
func runOne(program string, s sdk, results map[string]map[string][]harness.Result, versions map[string]json.RawMessage, order *[]string) error {
	cmd := exec.Command(program)
	cmd.Env = append(os.Environ(), "SDK="+s.name)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "RESULT "):
			var res harness.Result
			if err := json.Unmarshal([]byte(line[7:]), &res); err != nil {
				return err
			}
			if !slices.Contains(*order, res.Workload) {
				*order = append(*order, res.Workload)
			}
			if results[s.name] == nil {
				results[s.name] = map[string][]harness.Result{}
			}
			results[s.name][res.Workload] = append(results[s.name][res.Workload], res)
			fmt.Fprintf(os.Stderr, "   %-11s %-11s %10.3f ms (min %.3f; CPU %.3f ms; %.0f allocations per run; load %.2f)\n",
				res.Workload, s.name, res.MedianMS, res.MinMS, res.CPUMS, res.Mallocs, res.Load1)
		case strings.HasPrefix(line, "VERSIONS "):
			versions[s.name] = json.RawMessage(line[9:])
		default:
			fmt.Fprintln(os.Stderr, "   "+line)
		}
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("%s: %w", program, err)
	}
	return nil
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

func cell(m map[string]float64, w string) string {
	if v, ok := m[w]; ok {
		return fmtNum(v)
	}
	return "–"
}

// fmtNum writes a number as the table prints it (as benchmarks/java's Bench.fmt).
func fmtNum(v float64) string {
	switch {
	case v >= 100 || v <= -100:
		return thousands(fmt.Sprintf("%.0f", v))
	case v >= 10 || v <= -10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func thousands(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// table aligns rows: the first two columns left, the rest right, a rule under the header.
func table(rows [][]string) string {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	var b strings.Builder
	for j, r := range rows {
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-len([]rune(c)))
			if i < 2 {
				b.WriteString(c + pad)
			} else {
				b.WriteString(pad + c)
			}
			if i+1 < len(r) {
				b.WriteString("  ")
			}
		}
		b.WriteString("\n")
		if j == 0 {
			for i, w := range widths {
				b.WriteString(strings.Repeat("-", w))
				if i+1 < len(widths) {
					b.WriteString("  ")
				}
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

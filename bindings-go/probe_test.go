package phaseoagent_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pa "github.com/phaseo/agent-sdk-go"
)

// The hostile probe: what a hostile user can do through the public API, each input drawn
// from a seeded generator and run in a child process of this test binary, which a
// supervisor (TestHostileProbe) restarts after the input that killed it. It counts:
//
//   - deaths: the child process ended during an input (a crash no recover caught);
//   - hangs: an input whose run did not return within its deadline plus a grace period
//     (counted by the child), or a child that printed nothing for a long time (counted and
//     killed by the supervisor);
//   - wrong kinds: an error that is not an *Error with a documented code, or a code that
//     does not fit what the input did (see allowedCodes);
//   - lost states: a refused continue after which the state given can no longer be
//     continued;
//   - leaks: goroutines or resident memory that do not return to their level after
//     thousands of runs (a separate child, without the inputs that block for ever).
//
// Every input is one scenario: a callback of some kind (tool executors, progress, context,
// validators, approval predicates, interactive hooks, next-turn functions, stop
// conditions, per-turn functions, human review, OnEvent, host model clients, streaming
// clients, state accessors, MCP filters) doing something hostile (returning a value JSON
// cannot hold, a typed-nil or panicking error, panicking with a cyclic value, Goexit,
// blocking for ever, running another agent), with random option values, cancellation at a
// random moment and concurrent runs; or a paused state mutated (bytes, truncation, deep
// nesting, wrong types) and continued; or a hostile definition.
//
// PHASEO_FUZZ_SEED sets the seed (default probeSeed), PHASEO_PROBE_INPUTS the number of
// inputs (default 1000; `make fuzz-go` runs 20,000), PHASEO_PROBE_CASE runs one input in the
// test process (its number is in every report), PHASEO_PROBE_SHARDS how many ranges of
// inputs run side by side, each in children of its own (default 4).

const probeSeed = 20260514

const (
	probeFromEnv = "PHASEO_GO_PROBE_FROM" // set in a child: the first input it runs
	probeLeakEnv = "PHASEO_GO_PROBE_LEAK" // set in the leak child
)

func probeEnvInt(name string, def int) int {
	if s := os.Getenv(name); s != "" {
		n, err := strconv.Atoi(s)
		if err == nil {
			return n
		}
	}
	return def
}

// probeRelease is closed when a child ends: what "blocks for ever" blocks on.
var probeRelease = make(chan struct{})

// probeReport is one line a child writes to the supervisor.
func probeReport(format string, args ...any) {
	probeOut.Lock()
	defer probeOut.Unlock()
	line := fmt.Sprintf(format, args...)
	line = strings.ReplaceAll(strings.ToValidUTF8(line, "?"), "\n", "\\n")
	if len(line) > 1500 {
		line = line[:1500] + "…"
	}
	fmt.Fprintln(os.Stdout, "PROBE "+line)
}

var probeOut sync.Mutex

// TestHostileProbe is the supervisor (and, in a child process, the prober).
func TestHostileProbe(t *testing.T) {
	seed := int64(probeEnvInt("PHASEO_FUZZ_SEED", probeSeed))
	inputs := probeEnvInt("PHASEO_PROBE_INPUTS", 1000)
	if one := os.Getenv("PHASEO_PROBE_CASE"); one != "" {
		i, _ := strconv.Atoi(one)
		p := newProber(seed)
		r := p.one(i)
		t.Logf("input %d: %s", i, r.desc)
		for _, f := range r.findings {
			t.Errorf("%s", f)
		}
		return
	}
	if os.Getenv(probeLeakEnv) != "" {
		probeLeakChild(t, seed)
		return
	}
	if from := os.Getenv(probeFromEnv); from != "" {
		start, _ := strconv.Atoi(from)
		p := newProber(seed)
		for i := start; i < inputs; i++ {
			probeReport("begin %d", i)
			r := p.one(i)
			for _, f := range r.findings {
				probeReport("finding %d %s | %s", i, f, r.desc)
			}
			probeReport("end %d", i)
		}
		close(probeRelease)
		probeReport("done")
		return
	}

	counts := map[string]int{}
	var findings []string
	// The inputs are split into ranges, each run by children of its own at the same time:
	// most of an input's time is spent waiting (timeouts, sleeping callbacks), so the
	// ranges overlap their waits. Every input still runs exactly once, alone in its child.
	shards := probeEnvInt("PHASEO_PROBE_SHARDS", 4)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for k := 0; k < shards; k++ {
		from, to := k*inputs/shards, (k+1)*inputs/shards
		wg.Add(1)
		go func() {
			defer wg.Done()
			next := from
			for next < to {
				last, lines, exit := probeSupervise(t, seed, next, to)
				mu.Lock()
				for _, l := range lines {
					kind, _, _ := strings.Cut(l, " ")
					counts[kind]++
					findings = append(findings, l)
				}
				switch exit {
				case "done":
					next = to
				case "death", "silent":
					what := map[string]string{"death": "death", "silent": "hang"}[exit]
					counts[what]++
					findings = append(findings, fmt.Sprintf("%s %d (the child process %s)", what, last, map[string]string{"death": "died", "silent": "stopped answering and was killed"}[exit]))
					next = last + 1
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	leaks := probeSuperviseLeak(t, seed)
	counts["leak"] += len(leaks)
	findings = append(findings, leaks...)
	t.Logf("hostile probe, seed %d: %d inputs, %d deaths, %d hangs, %d wrong kinds, %d lost states, %d leaks",
		seed, inputs, counts["death"], counts["hang"], counts["wrong"], counts["lost"], counts["leak"])
	if len(findings) > 0 {
		sort.Strings(findings)
		if len(findings) > 60 {
			findings = append(findings[:60], fmt.Sprintf("… and %d more", len(findings)-60))
		}
		t.Fatalf("the probe found (replay one input with PHASEO_PROBE_CASE=<n> PHASEO_FUZZ_SEED=%d):\n%s", seed, strings.Join(findings, "\n"))
	}
}

// probeSupervise runs a child for the inputs start..end (passed as PHASEO_PROBE_INPUTS).
// It returns the last input begun, the
// findings reported, and how the child ended: "done", "death" (it exited during an input)
// or "silent" (no line for probeSilence: killed).
func probeSupervise(t *testing.T, seed int64, start, end int) (last int, findings []string, exit string) {
	const probeSilence = 3 * time.Minute
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostileProbe$", "-test.count=1", "-test.v", "-test.timeout=0")
	cmd.Env = append(os.Environ(), probeFromEnv+"="+strconv.Itoa(start),
		"PHASEO_FUZZ_SEED="+strconv.FormatInt(seed, 10), "PHASEO_PROBE_INPUTS="+strconv.Itoa(end))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Errorf("probe child: %v", err) // not Fatal: this runs on a range's goroutine
		return start, nil, "done"
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Errorf("probe child: %v", err)
		return start, nil, "done"
	}
	lines := make(chan string)
	var tail []string
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	last = start
	timer := time.NewTimer(probeSilence)
	defer timer.Stop()
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				_ = cmd.Wait()
				t.Logf("child from %d died at input %d: %s\n%s\n…\n%s", start, last, strings.Join(tail, "\n"), firstChars(stderr.String(), 2000), lastChars(stderr.String(), 2000))
				return last, findings, "death"
			}
			timer.Reset(probeSilence)
			if !strings.HasPrefix(l, "PROBE ") {
				tail = append(tail, l)
				if len(tail) > 20 {
					tail = tail[1:]
				}
				continue
			}
			l = strings.TrimPrefix(l, "PROBE ")
			switch {
			case strings.HasPrefix(l, "begin "):
				last, _ = strconv.Atoi(strings.TrimPrefix(l, "begin "))
			case strings.HasPrefix(l, "finding "):
				findings = append(findings, strings.TrimPrefix(l, "finding "))
			case l == "done":
				_ = cmd.Wait()
				return last, findings, "done"
			}
		case <-timer.C:
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Logf("child from %d silent at input %d:\n%s", start, last, lastChars(stderr.String(), 3000))
			return last, findings, "silent"
		}
	}
}

func firstChars(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func lastChars(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// probeSuperviseLeak runs the leak child and returns its findings ("leak …").
func probeSuperviseLeak(t *testing.T, seed int64) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHostileProbe$", "-test.count=1", "-test.v", "-test.timeout=0")
	// The library's allocator gives free memory back to the system 10 s after it was
	// freed (core/src/allocator.rs): the leak child has it given back at once, so that its
	// RSS is what the runs still hold, not what they held in the last seconds.
	cmd.Env = append(os.Environ(), probeLeakEnv+"=1", "PHASEO_FUZZ_SEED="+strconv.FormatInt(seed, 10), "MIMALLOC_PURGE_DELAY=0")
	out, _ := cmd.CombinedOutput()
	var leaks []string
	done := false
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "PROBE leak ") {
			leaks = append(leaks, strings.TrimPrefix(l, "PROBE "))
		}
		if strings.HasPrefix(l, "PROBE measured ") {
			t.Log(l)
		}
		if l == "PROBE done" {
			done = true
		}
	}
	if !done {
		leaks = append(leaks, "leak child did not finish: "+lastChars(string(out), 3000))
	}
	return leaks
}

// probeLeakChild runs inputs without those that block for ever, then checks that
// goroutines and RSS come back to their level.
func probeLeakChild(t *testing.T, seed int64) {
	p := newProber(seed)
	p.noForever = true
	runs := probeEnvInt("PHASEO_PROBE_LEAK_RUNS", 1000)
	base := 1_000_000
	for i := range 300 { // warm-up: pools, caches, the runtime's own goroutines
		p.one(base + i)
	}
	g0, rss0 := probeSettle()
	for i := range runs / 2 {
		p.one(base + 300 + i)
	}
	g1, rss1 := probeSettle()
	for i := range runs / 2 {
		p.one(base + 300 + runs/2 + i)
	}
	g2, rss2 := probeSettle()
	probeReport("measured goroutines %d → %d → %d, RSS %d MB → %d MB → %d MB over %d runs", g0, g1, g2, rss0>>20, rss1>>20, rss2>>20, runs)
	if g2 > g0+10 {
		probeReport("leak goroutines %d after warm-up, %d after %d more runs", g0, g2, runs)
	}
	// The second half may not grow the RSS much more than noise: a leak grows it with every run.
	if rss2 > rss1+24<<20 && rss2-rss1 > (rss1-rss0)/2+8<<20 {
		probeReport("leak RSS %d MB → %d MB → %d MB", rss0>>20, rss1>>20, rss2>>20)
	}
	close(probeRelease)
	probeReport("done")
}

// probeSettle waits until the goroutine count stops falling, then returns it and the RSS.
func probeSettle() (goroutines int, rss int64) {
	prev := -1
	for range 100 {
		runtime.GC()
		n := runtime.NumGoroutine()
		if n == prev {
			break
		}
		prev = n
		time.Sleep(100 * time.Millisecond)
	}
	debug.FreeOSMemory()
	data, _ := os.ReadFile("/proc/self/statm")
	fields := strings.Fields(string(data))
	if len(fields) > 1 {
		pages, _ := strconv.ParseInt(fields[1], 10, 64)
		rss = pages * int64(os.Getpagesize())
	}
	return runtime.NumGoroutine(), rss
}

// prober draws and runs inputs.
type prober struct {
	seed      int64
	noForever bool // no behaviour that blocks for ever (the leak child)
	paused    *probePaused
}

func newProber(seed int64) *prober { return &prober{seed: seed} }

// probeResult is what one input found.
type probeResult struct {
	desc     string
	findings []string
}

// probeRun is one input in the making: its description, findings and deadline.
type probeRun struct {
	rng      *rand.Rand
	desc     []string
	findings []string
	mu       sync.Mutex
	// cancelled: the input cancels its run (any code may then be cancelled).
	cancelled bool
	// blocking: a callback blocks until the run gives up on it.
	blocking bool
	// callerSide: values are drawn for the caller's own arguments (not a callback's).
	callerSide bool
	// allowed are the codes that fit what the input does (nil: any documented code).
	allowed map[string]bool
	p       *prober
}

// intn draws from the input's generator (callbacks draw too, on goroutines of their own).
func (r *probeRun) intn(n int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rng.Intn(n)
}

func (r *probeRun) note(format string, args ...any) {
	r.desc = append(r.desc, fmt.Sprintf(format, args...))
}

func (r *probeRun) find(kind, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.findings = append(r.findings, kind+" "+fmt.Sprintf(format, args...))
}

func (r *probeRun) allow(codes ...string) {
	if r.allowed == nil {
		r.allowed = map[string]bool{}
	}
	for _, c := range codes {
		r.allowed[c] = true
	}
}

// one runs input i: a fresh generator seeded with (seed, i), so any input replays alone.
func (p *prober) one(i int) probeResult {
	r := &probeRun{rng: rand.New(rand.NewSource(p.seed*1_000_003 + int64(i))), p: p}
	func() {
		defer func() {
			// A panic out of the public API is a crash of the application: a death.
			if v := recover(); v != nil {
				r.find("death", "a panic out of the SDK: %v\n%s", v, debug.Stack())
			}
		}()
		switch x := r.intn(100); {
		case x < 68:
			p.callbackInput(r)
		case x < 90:
			p.stateInput(r)
		default:
			p.definitionInput(r)
		}
	}()
	return probeResult{desc: strings.Join(r.desc, "; "), findings: r.findings}
}

// ---- hostile values and behaviours -------------------------------------------------------

type probeStringer struct{}

func (probeStringer) String() string { panic(probeStringer{}) }

type goexitErr struct{}

func (goexitErr) Error() string { runtime.Goexit(); return "" }

type blockingErr struct{}

func (blockingErr) Error() string { <-probeRelease; return "released" }

type hugeErr struct{ n int }

func (e hugeErr) Error() string { return strings.Repeat("é\x00\xff", e.n) }

type goexitJSON struct{}

func (goexitJSON) MarshalJSON() ([]byte, error) { runtime.Goexit(); return nil, nil }

type rawJSON string

func (r rawJSON) MarshalJSON() ([]byte, error) { return []byte(r), nil }

type cyclicNode struct {
	Name string
	Next *cyclicNode
}

// nested is v wrapped n levels deep in arrays (or objects).
func nested(n int, object bool) any {
	var v any = "bottom"
	for range n {
		if object {
			v = map[string]any{"k": v}
		} else {
			v = []any{v}
		}
	}
	return v
}

func (r *probeRun) text() string {
	switch r.intn(7) {
	case 0:
		return ""
	case 1:
		return "\xff\xfe bad \xc3\x28"
	case 2:
		return "nul\x00byte"
	case 3:
		return strings.Repeat("ü", r.intn(5000))
	case 4:
		return "$callback"
	default:
		b := make([]byte, r.intn(16))
		for i := range b {
			b[i] = byte(r.intn(256))
		}
		return string(b)
	}
}

// value is a hostile Go value (and a short description of it).
func (r *probeRun) value(depth int) (any, string) {
	if depth > 3 {
		return "leaf", "leaf"
	}
	switch r.intn(34) {
	case 0:
		return nil, "nil"
	case 1:
		return math.NaN(), "NaN"
	case 2:
		return math.Inf(1 - 2*r.intn(2)), "Inf"
	case 3:
		return uint64(math.MaxUint64), "MaxUint64"
	case 4:
		return json.Number([]string{"1e999", "123456789012345678901234567890", "-0", "0x10", "", "NaN", "1.5e-400"}[r.intn(7)]), "json.Number"
	case 5:
		return r.text(), "text"
	case 6:
		n := []int{60, 62, 63, 64, 65, 66, 10000}[r.intn(7)]
		obj := r.intn(2) == 0
		return nested(n, obj), fmt.Sprintf("nested %d (object %v)", n, obj)
	case 7:
		return cyclicMap(), "cyclic map"
	case 8:
		s := make([]any, 2)
		s[0] = s
		return s, "cyclic slice"
	case 9:
		n := &cyclicNode{Name: "a"}
		n.Next = &cyclicNode{Name: "b", Next: n}
		return n, "cyclic pointers"
	case 10:
		return make(chan int), "channel"
	case 11:
		return func() {}, "func"
	case 12:
		return complex(1, 2), "complex"
	case 13:
		var m map[string]any
		return m, "nil map"
	case 14:
		var s []any
		return s, "nil slice"
	case 15:
		var p *MyErr
		return p, "typed nil pointer"
	case 16:
		return panickyJSON{}, "panicking MarshalJSON"
	case 17:
		if r.callerSide {
			// Goexit on the caller's own goroutine ends it, as it would without the SDK.
			return "no Goexit", "text"
		}
		return goexitJSON{}, "Goexit in MarshalJSON"
	case 18:
		return rawJSON([]string{"{", "", "nul", "[1,]", `{"a":1}{}`, strings.Repeat("[", 100000), `"\ud800"`, "1e999"}[r.intn(8)]), "raw MarshalJSON"
	case 19:
		return badMarshaler{typedNil: r.intn(2) == 0}, "MarshalJSON error"
	case 20:
		return map[string]any{r.text(): r.text(), "\xff": 1}, "bad keys"
	case 21:
		return map[int]any{1: "one", -2: nil}, "int keys"
	case 22:
		return map[any]any{1: "x"}, "any keys"
	case 23:
		return struct {
			A any
			b int
			C chan int `json:"-"`
		}{A: "x", b: 1}, "struct"
	case 24:
		return []byte("\xff\x00bytes"), "[]byte"
	case 25:
		return strings.Repeat("x", 1<<r.intn(24)), "long text"
	case 26:
		return probeStringer{}, "panicking String"
	case 27:
		return errors.New("an error value"), "error value"
	case 28:
		return &pa.Error{Code: pa.CodeCancelled, Message: "fake"}, "*pa.Error value"
	case 29:
		return [3]float64{1, math.MaxFloat64, -math.SmallestNonzeroFloat64}, "array"
	case 30, 31:
		m := map[string]any{}
		for range r.intn(4) {
			v, _ := r.value(depth + 1)
			m[r.text()] = v
		}
		return m, "map"
	default:
		l := []any{}
		for range r.intn(4) {
			v, _ := r.value(depth + 1)
			l = append(l, v)
		}
		return l, "list"
	}
}

// err is a hostile error.
func (r *probeRun) err() (error, string) {
	switch r.intn(12) {
	case 0:
		var e *MyErr
		return e, "typed nil error"
	case 1:
		return panickyErr{}, "panicking Error"
	case 2:
		return goexitErr{}, "Goexit in Error"
	case 3:
		if r.p.noForever {
			return errors.New("x"), "plain error"
		}
		r.blocking = true
		return blockingErr{}, "blocking Error"
	case 4:
		return hugeErr{n: r.intn(200000)}, "huge error"
	case 5:
		return errors.New(r.text()), "text error"
	case 6:
		var e *pa.Error
		return e, "typed nil *pa.Error"
	case 7:
		return &pa.Error{Code: []string{"", "weird", pa.CodeCancelled, pa.CodeLeaseLost}[r.intn(4)], Message: r.text()}, "*pa.Error"
	case 8:
		return fmt.Errorf("wrapped: %w", panickyErr{}), "wrapped panicking"
	case 9:
		return errors.Join(nil, panickyErr{}, errors.New("\xff")), "joined"
	case 10:
		return context.Canceled, "context.Canceled"
	default:
		return &MyErr{Msg: r.text()}, "MyErr"
	}
}

// behaviour is what a hostile callback does.
type behaviour struct {
	kind  int
	value any
	err   error
	what  string
	delay time.Duration
	p     *probeRun
}

const (
	bValue = iota
	bError
	bValueError
	bPanic
	bGoexit
	bBlockCtx     // blocks until its ctx (or the run) gives up on it
	bBlockForever // blocks until the child ends
	bSlow
	bNested
	bCount
)

func (r *probeRun) behaviour() behaviour {
	b := behaviour{kind: r.intn(bCount), p: r, delay: time.Duration(1+r.intn(20)) * time.Millisecond}
	if r.p.noForever && b.kind == bBlockForever {
		b.kind = bSlow
	}
	var vd, ed string
	b.value, vd = r.value(0)
	b.err, ed = r.err()
	switch b.kind {
	case bValue:
		b.what = "returns " + vd
	case bError:
		b.what = "fails with " + ed
	case bValueError:
		b.what = "returns " + vd + " and " + ed
	case bPanic:
		if r.intn(3) == 0 {
			b.value, vd = b.err, ed
		}
		b.what = "panics with " + vd
	case bGoexit:
		b.what = "calls runtime.Goexit"
	case bBlockCtx:
		b.what = "blocks until cancelled"
		r.blocking = true
		if r.p.noForever {
			// Where a callback has no ctx, it would block for ever.
			b.kind = bSlow
		}
	case bBlockForever:
		b.what = "blocks for ever"
		r.blocking = true
	case bSlow:
		b.what = "is slow"
	case bNested:
		b.what = "runs another agent"
	}
	return b
}

// do acts the behaviour out; ctx is the callback's own (nil where it has none).
func (b behaviour) do(ctx context.Context) (any, error) {
	switch b.kind {
	case bValue:
		return b.value, nil
	case bError:
		return nil, b.err
	case bValueError:
		return b.value, b.err
	case bPanic:
		panic(b.value)
	case bGoexit:
		runtime.Goexit()
	case bBlockCtx:
		if ctx == nil {
			ctx = context.Background()
		}
		select {
		case <-ctx.Done():
		case <-probeRelease:
		}
		return "late", nil
	case bBlockForever:
		<-probeRelease
		return "released", nil
	case bSlow:
		time.Sleep(time.Duration(1+b.p.intn(20)) * time.Millisecond)
		return "slow", nil
	case bNested:
		agent, err := pa.CreateAgent(pa.AgentDefinition{ID: "inner", Tools: []pa.Tool{okTool("t")}})
		if err != nil {
			return nil, err
		}
		defer agent.Close()
		client, _ := pa.NewScriptedClient([]map[string]any{calls("t"), textResponse("inner done")}, 0)
		if ctx == nil {
			ctx = context.Background()
		}
		r, err := agent.Run(ctx, pa.RunOptions{Input: "inner", Client: client})
		return r.Output, err
	}
	return nil, nil
}

// ---- callback inputs --------------------------------------------------------------------

// the callback kinds a callback input exercises.
var probeKinds = []string{
	"execute", "progress", "context", "inputSchema", "outputSchema", "eventSchema", "approval",
	"agentApproval", "onToolCalled", "onResponseReceived", "nextTurn", "agentOutputSchema",
	"stopWhen", "humanReview", "perTurn", "onEvent", "generate", "stream", "stateSave",
	"stateLoad", "mcp", "options",
}

func (p *prober) callbackInput(r *probeRun) {
	kind := probeKinds[r.intn(len(probeKinds))]
	b := r.behaviour()
	r.note("%s %s", kind, b.what)
	onError := []string{"", "fail-run", "return-to-model"}[r.intn(3)]
	tool := pa.Tool{ID: "t", OnError: onError, Execute: func(any, pa.RuntimeContext) (any, error) { return "fine", nil }}
	if r.intn(3) == 0 {
		tool.Timeout = time.Duration(1+r.intn(300)) * time.Millisecond
		r.note("tool timeout %v", tool.Timeout)
	}
	def := pa.AgentDefinition{ID: "probe", Tools: []pa.Tool{tool}}
	var model pa.ModelClient
	steps := []map[string]any{calls("t"), textResponse("after")}
	var onEvent pa.EventHandler
	var state pa.StateAccessor
	streamed := r.intn(4) == 0
	cont := false // continue the paused run (onResponseReceived)
	loadRun := false
	t := &def.Tools[0]
	switch kind {
	case "execute":
		t.Execute = func(_ any, rt pa.RuntimeContext) (any, error) { return b.do(rt.Ctx) }
	case "progress":
		t.Execute = func(_ any, rt pa.RuntimeContext) (any, error) { return "ok", rt.EmitProgress(b.value) }
	case "context":
		t.Execute = func(_ any, rt pa.RuntimeContext) (any, error) { return "ok", rt.SetContext(b.value) }
	case "inputSchema":
		t.InputSchema = func(any) (any, error) { return b.do(nil) }
	case "outputSchema":
		t.OutputSchema = func(any) (any, error) { return b.do(nil) }
	case "eventSchema":
		t.EventSchema = func(any) (any, error) { return b.do(nil) }
		t.Execute = func(_ any, rt pa.RuntimeContext) (any, error) { return "ok", rt.EmitProgress(map[string]any{"p": 1}) }
	case "approval":
		t.Approval = func(_ any, rt pa.RuntimeContext) (bool, error) { v, err := b.do(rt.Ctx); return v != nil, err }
	case "agentApproval":
		def.RequireApproval = func(_ pa.ToolCall, rt pa.RuntimeContext) (bool, error) { v, err := b.do(rt.Ctx); return v == nil, err }
	case "onToolCalled":
		completed := r.intn(2) == 0
		t.OnToolCalled = func(_ any, rt pa.RuntimeContext) (any, bool, error) { v, err := b.do(rt.Ctx); return v, completed, err }
	case "onResponseReceived":
		t.Execute = nil
		t.OnResponseReceived = func(_ any, rt pa.RuntimeContext) (any, error) { return b.do(rt.Ctx) }
		cont = true
	case "nextTurn":
		t.NextTurnFunc = func(_ any, rt pa.RuntimeContext) (*pa.NextTurnParams, error) {
			v, err := b.do(rt.Ctx)
			return &pa.NextTurnParams{Model: fmt.Sprint(v == nil), ToolChoice: v, Temperature: pa.Ptr(math.NaN()), MaxOutputTokens: pa.Ptr(-5),
				Tools: []pa.Tool{{ID: "\xff"}, {}}}, err
		}
	case "agentOutputSchema":
		def.OutputSchema = func(any) (any, error) { return b.do(nil) }
	case "stopWhen":
		def.StopWhen = []pa.StopCondition{pa.StopWhenFunc(func(pa.StopState) (string, bool) {
			v, _ := b.do(nil)
			s, _ := v.(string)
			return s, v != nil
		})}
	case "humanReview":
		reason := r.text()
		def.HumanReview = func(pa.HumanReviewContext) *pa.HumanReviewRequest {
			v, err := b.do(nil)
			if err != nil {
				return nil
			}
			return &pa.HumanReviewRequest{Reason: reason, Payload: v}
		}
	case "perTurn":
		switch r.intn(5) {
		case 0:
			def.DynamicModel = func(pa.TurnContext) string { v, _ := b.do(nil); s, _ := v.(string); return s }
		case 1:
			def.DynamicInstructions = func(pa.TurnContext) string { v, _ := b.do(nil); return fmt.Sprintf("%T", v) + "\xff" }
		case 2:
			def.Temperature = func(pa.TurnContext) *float64 { _, _ = b.do(nil); return pa.Ptr(math.NaN()) }
		case 3:
			def.TopP = func(pa.TurnContext) *float64 { _, _ = b.do(nil); return pa.Ptr(math.Inf(1)) }
		default:
			def.MaxOutputTokens = func(pa.TurnContext) *int { _, _ = b.do(nil); return pa.Ptr(-1) }
		}
	case "onEvent":
		var once sync.Once
		at := int32(r.intn(14))
		var n atomic.Int32
		onEvent = func(pa.AgentEvent) {
			if n.Add(1) == at {
				once.Do(func() { _, _ = b.do(nil) })
			}
		}
		if b.kind == bBlockCtx || b.kind == bBlockForever {
			r.cancelled = true // a blocked listener holds the run until its ctx is done
		}
	case "generate":
		model = probeModel{r: r, b: b, steps: r.intn(3)}
		steps = nil
	case "stream":
		st := probeStreamer{probeModel: probeModel{r: r, b: b, steps: r.intn(3)}, shape: r.intn(7)}
		if st.shape == 1 && p.noForever {
			st.shape = 6 // a channel never closed keeps the goroutine reading it: the application's own leak
		}
		if st.shape == 1 {
			r.cancelled = true // a stream that never ends holds its run until cancelled
		}
		model = st
		steps = nil
		streamed = true
	case "stateSave":
		state = probeAccessor{save: b}
	case "stateLoad":
		state = probeAccessor{load: b, paused: p.pausedState(r)}
		loadRun = true
	case "mcp":
		p.mcpServer(r, &def, b)
	case "options":
		r.callerSide = true
		p.hostileOptions(r, &def)
		r.callerSide = false
	}
	if r.intn(8) == 0 && kind != "onEvent" {
		// A second hostile callback: the event listener.
		eb := r.behaviour()
		if eb.kind == bBlockForever || eb.kind == bBlockCtx {
			eb.kind = bPanic
		}
		r.note("onEvent %s", eb.what)
		onEvent = func(pa.AgentEvent) { _, _ = eb.do(nil) }
	}
	agent, err := pa.CreateAgent(def)
	if err != nil {
		r.checkErr(err, "CreateAgent", pa.CodeDefinitionInvalid)
		return
	}
	defer agent.Close()
	if model == nil {
		sc, err := pa.NewScriptedClient(steps, 0)
		if err != nil {
			r.find("wrong", "NewScriptedClient: %v", err)
			return
		}
		model = sc
	}
	ropts := pa.RunOptions{Input: "go", Client: model, OnEvent: onEvent, State: state}
	if kind == "options" {
		r.callerSide = true
		p.hostileRunOptions(r, &ropts)
		r.callerSide = false
	}
	r.callerSide = true
	out, _ := r.value(0) // the output supplied on continue (onResponseReceived)
	r.callerSide = false
	concurrent := 1
	if r.intn(10) == 0 {
		concurrent = 2 + r.intn(6)
		r.note("%d concurrent runs", concurrent)
	}
	var wg sync.WaitGroup
	for range concurrent {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, stop := r.runContext()
			defer stop()
			switch {
			case loadRun:
				r.await(ctx, "Continue by RunID", func() (pa.RunResult, error) {
					return agent.Continue(ctx, pa.ContinueOptions{RunID: "r-probe", State: state, Client: model,
						Approvals: []pa.ToolDecision{{ToolCallID: "c1"}}})
				})
			case cont:
				paused, err := agent.Run(ctx, ropts)
				if err != nil || paused.Status() != pa.StatusWaitingForHuman {
					if err != nil {
						r.checkErr(err, "Run")
					}
					return
				}
				r.await(ctx, "Continue", func() (pa.RunResult, error) {
					return agent.Continue(ctx, pa.ContinueOptions{Run: paused, Client: model,
						ToolOutputs: []pa.ToolOutput{{ToolCallID: "c1", Output: out}}})
				})
			case streamed:
				r.await(ctx, "Stream", func() (pa.RunResult, error) {
					s := agent.Stream(ctx, ropts)
					if r.intn(3) == 0 {
						for e := range s.Events() {
							if e.Type == "step.started" && r.intn(2) == 0 {
								r.mu.Lock()
								r.cancelled = true
								r.mu.Unlock()
								s.Cancel()
							}
						}
					}
					return s.Result()
				})
			default:
				r.await(ctx, "Run", func() (pa.RunResult, error) { return agent.Run(ctx, ropts) })
			}
		}()
	}
	wg.Wait()
}

// runContext is an input's run ctx: a long deadline, or (cancelling inputs, and every
// input with a callback that blocks) a cancellation at a random moment.
func (r *probeRun) runContext() (context.Context, context.CancelFunc) {
	x := r.intn(4)
	d := time.Duration(r.intn(400)) * time.Millisecond
	r.mu.Lock()
	cancelling := r.blocking || r.cancelled || x == 0
	if cancelling {
		r.cancelled = true
	}
	r.mu.Unlock()
	if cancelling {
		if x%2 == 0 {
			return context.WithTimeout(context.Background(), d)
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			time.Sleep(d)
			cancel()
		}()
		return ctx, cancel
	}
	return context.WithTimeout(context.Background(), 60*time.Second)
}

// probeGrace is how long after its ctx is done a run may take to return (the machine is
// loaded: this is far beyond any real delay, and far below a hang).
const probeGrace = 20 * time.Second

// await runs a run-returning call and checks how (and when) it ends.
func (r *probeRun) await(ctx context.Context, what string, call func() (pa.RunResult, error)) {
	type outcome struct {
		res pa.RunResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := call()
		done <- outcome{res, err}
	}()
	var o outcome
	select {
	case o = <-done:
	case <-ctx.Done():
		select {
		case o = <-done:
		case <-time.After(probeGrace):
			r.find("hang", "%s did not return %v after its ctx was done", what, probeGrace)
			return
		}
	}
	if o.err != nil {
		r.checkErr(o.err, what)
		return
	}
	r.mu.Lock()
	cancelled := r.cancelled
	r.mu.Unlock()
	switch st := o.res.Status(); {
	case st == pa.StatusCompleted, st == pa.StatusWaitingForHuman, st == pa.StatusStopped:
	case st == pa.StatusCancelled && cancelled: // docs/behaviour.md §3.4: a cancelled run returns its result
	default:
		r.find("wrong", "%s returned status %q without an error", what, o.res.Status())
	}
}

// checkErr checks an error the API returned: an *Error with a documented code that fits
// (want, or the input's allowed codes; cancelled when the input cancels).
func (r *probeRun) checkErr(err error, what string, want ...string) {
	var perr *pa.Error
	if !errors.As(err, &perr) {
		r.find("wrong", "%s: an error of no documented kind: %T %q", what, err, err.Error())
		return
	}
	if !knownCodes[perr.Code] {
		r.find("wrong", "%s: undocumented code %q: %s", what, perr.Code, perr.Message)
		return
	}
	if perr.Code == pa.CodeInvalidArgument {
		r.find("wrong", "%s: invalid_argument (a misuse of the binding) for a hostile value: %s", what, perr.Message)
		return
	}
	r.mu.Lock()
	cancelled := r.cancelled
	r.mu.Unlock()
	if perr.Code == pa.CodeCancelled && !cancelled {
		r.find("wrong", "%s: cancelled though nothing cancelled it: %s", what, perr.Message)
		return
	}
	if len(want) > 0 {
		for _, w := range want {
			if perr.Code == w {
				return
			}
		}
		r.find("wrong", "%s: code %s, expected %v: %s", what, perr.Code, want, perr.Message)
	}
	if perr.Result != nil && perr.Result.Status() != pa.StatusFailed && perr.Result.Status() != pa.StatusCancelled {
		r.find("wrong", "%s: an error carrying a %q state: %s", what, perr.Result.Status(), perr.Message)
	}
}

// probeModel is a host model client: it calls the tool `steps` times, then behaves.
type probeModel struct {
	r     *probeRun
	b     behaviour
	steps int
}

func (m probeModel) Generate(ctx context.Context, req pa.ModelRequest) (pa.ModelResponse, error) {
	pick := m.r.intn(12)
	if len(req.Messages) < 2*m.steps+1 {
		return m.hostileResponse(pick), nil
	}
	v, err := m.b.do(ctx)
	if err != nil {
		return pa.ModelResponse{}, err
	}
	s, _ := v.(string)
	return pa.ModelResponse{Text: s + "\xff", FinishReason: s}, nil
}

// hostileResponse is a model response calling tools with odd ids and arguments.
func (m probeModel) hostileResponse(pick int) pa.ModelResponse {
	args := []string{"{}", "", "{", "null", "[1]", `{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "}",
		`{"x":"\ud800"}`, "\xff", `{"n":1e999}`, `{"n":123456789012345678901234567890}`, strings.Repeat(" ", 100000) + "{}", `{"$callback":1}`}[pick]
	ids := []string{"c1", "", "c1", "\xff", strings.Repeat("i", 10000)}
	calls := []pa.ModelToolCall{{ID: ids[pick%len(ids)], Name: "t", Arguments: args}}
	if pick%3 == 0 {
		calls = append(calls, pa.ModelToolCall{ID: "c1", Name: []string{"t", "nope", "", "\x00"}[pick%4], Arguments: "{}"})
	}
	return pa.ModelResponse{ToolCalls: calls, Usage: &pa.UsageSummary{InputTokens: -1}, Cost: math.NaN(), FinishReason: "\xff"}
}

// probeStreamer streams hostile events.
type probeStreamer struct {
	probeModel
	shape int
}

func (s probeStreamer) Stream(ctx context.Context, req pa.ModelRequest) <-chan pa.ModelStreamEvent {
	pick := s.r.intn(12)
	shape := s.shape
	if len(req.Messages) < 2*s.steps+1 {
		resp := s.hostileResponse(pick)
		ch := make(chan pa.ModelStreamEvent, 2)
		ch <- pa.ModelStreamEvent{Type: pa.StreamTextDelta, Delta: "\xff"}
		ch <- pa.ModelStreamEvent{Type: pa.StreamCompleted, Response: &resp}
		close(ch)
		return ch
	}
	switch shape {
	case 0:
		return nil
	case 1: // never closed; sends nothing (the input cancels its run)
		return make(chan pa.ModelStreamEvent)
	case 2: // an unbuffered sender nobody may read
		ch := make(chan pa.ModelStreamEvent)
		go func() {
			defer close(ch)
			for i := 0; i < 1000; i++ {
				select {
				case ch <- pa.ModelStreamEvent{Type: pa.StreamTextDelta, Delta: "x"}:
				case <-ctx.Done():
					return
				}
			}
		}()
		return ch
	}
	v, err := s.b.do(ctx)
	ch := make(chan pa.ModelStreamEvent, 4)
	switch {
	case err != nil:
		ch <- pa.ModelStreamEvent{Type: pa.StreamTextDelta, Err: err}
	case shape == 3:
		ch <- pa.ModelStreamEvent{Type: pa.StreamItem, Item: v}
	case shape == 4:
		ch <- pa.ModelStreamEvent{Type: pa.StreamCompleted}
	case shape == 5:
		ch <- pa.ModelStreamEvent{Type: fmt.Sprintf("%T", v), Delta: "\xff"}
	default:
		ch <- pa.ModelStreamEvent{Type: pa.StreamCompleted, Response: &pa.ModelResponse{Text: fmt.Sprintf("%T", v)}}
	}
	close(ch)
	return ch
}

// probeAccessor is a state accessor whose Load or Save behaves.
type probeAccessor struct {
	load, save behaviour
	paused     string
}

func (a probeAccessor) Load(ctx context.Context, runID string) (*pa.RunResult, error) {
	if a.load.p == nil {
		return nil, nil
	}
	v, err := a.load.do(ctx)
	if err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		r, perr := pa.ParseRunResult(a.paused)
		if perr != nil {
			return nil, perr
		}
		return &r, nil
	default:
		if _, ok := x.(bool); ok { // (not fmt: x may be cyclic, a fatal stack overflow in fmt)
			return &pa.RunResult{}, nil
		}
		mut, err := pa.ParseRunResult(probeMutate(a.load.p, a.paused))
		if err != nil {
			return &pa.RunResult{}, nil
		}
		return &mut, nil
	}
}

func (a probeAccessor) Save(ctx context.Context, _ pa.RunResult) error {
	if a.save.p == nil {
		return nil
	}
	_, err := a.save.do(ctx)
	return err
}

// mcpServer adds an MCP server: one that cannot start, or (rarely: it is slow to start)
// the reference server with a hostile Filter.
func (p *prober) mcpServer(r *probeRun, def *pa.AgentDefinition, b behaviour) {
	s := pa.MCPServer{Name: r.text(), Optional: r.intn(2) == 0, TimeoutMs: int64(r.intn(3) - 1),
		ToolPrefix: r.text(), Filter: func(pa.MCPToolInfo) (bool, error) { v, err := b.do(nil); return v != nil, err }}
	switch r.intn(12) {
	case 0:
		bin, _ := os.Getwd()
		s.Command = bin + "/../tests/mcp/node_modules/.bin/mcp-server-everything"
		s.Args = []string{"stdio"}
		r.note("the reference MCP server")
		if b.kind == bBlockForever || b.kind == bBlockCtx {
			r.cancelled = true
		}
	case 1:
		s.URL = "http://127.0.0.1:1/mcp"
	case 2:
		s.URL = r.text()
	case 3:
		s.Command = "/bin/false"
	case 4:
		s.Command = "/bin/sh"
		s.Args = []string{"-c", "echo '{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":" + strings.Repeat("[", 5000) + "'"}
	default:
		s.Command = "/nonexistent/" + r.text()
	}
	r.note("mcp server command %q url %q optional %v", s.Command, s.URL, s.Optional)
	def.MCPServers = []pa.MCPServer{s}
}

// hostileOptions gives a definition odd option values.
func (p *prober) hostileOptions(r *probeRun, def *pa.AgentDefinition) {
	for range 1 + r.intn(3) {
		switch r.intn(12) {
		case 0:
			def.MaxSteps = []int{-1, 1, math.MaxInt, math.MinInt}[r.intn(4)]
			r.note("MaxSteps %d", def.MaxSteps)
		case 1:
			def.ToolExecution = pa.ToolExecutionConfig{Concurrency: -r.intn(3), OnError: r.text(), MaxOutputChars: -1}
			r.note("ToolExecution %+v", def.ToolExecution)
		case 2:
			v, d := r.value(0)
			def.ToolChoice = v
			r.note("ToolChoice %s", d)
		case 3:
			def.ActiveTools = []string{r.text(), ""}
			r.note("ActiveTools")
		case 4:
			def.ModelRetry = pa.ModelRetryConfig{MaxRetries: -3, Backoff: -time.Second}
			r.note("ModelRetry negative")
		case 5:
			def.StopWhen = []pa.StopCondition{pa.StepCountIs(-1), pa.MaxCost(math.NaN()), pa.MaxDuration(-time.Hour), pa.HasToolCall("\xff"), {}}
			r.note("StopWhen odd")
		case 6:
			def.Lease = &pa.LeaseConfig{Duration: -1, RenewEvery: 0}
			def.Store = pa.NewMemoryStore()
			r.note("Lease negative")
		case 7:
			def.StateSecret = r.text()
			def.StateSecrets = []string{"", r.text()}
			r.note("StateSecret odd")
		case 8:
			if len(def.Tools) > 0 {
				def.Tools[0].Timeout = -time.Duration(r.intn(1000))
				r.note("Tool.Timeout negative")
			}
		case 9:
			if len(def.Tools) > 0 {
				def.Tools[0].InputExamples = []any{cyclicMap(), nested(70, true)}
				r.note("InputExamples hostile")
			}
		case 10:
			def.ParallelToolCalls = pa.Ptr(false)
			if len(def.Tools) > 0 {
				def.Tools[0].Strict = true
			}
			r.note("strict")
		default:
			def.Lease = &pa.LeaseConfig{Duration: math.MaxInt64, RenewEvery: math.MaxInt64}
			r.note("Lease huge")
		}
	}
}

// hostileRunOptions gives a run odd option values.
func (p *prober) hostileRunOptions(r *probeRun, o *pa.RunOptions) {
	for range 1 + r.intn(3) {
		switch r.intn(9) {
		case 0:
			o.Input, _ = r.value(0)
			r.note("hostile Input")
		case 1:
			o.Context, _ = r.value(0)
			r.note("hostile Context")
		case 2:
			o.Messages = []pa.Message{{Role: r.text(), Content: r.text()}, {}}
			r.note("odd Messages")
		case 3:
			o.MaxSteps = -1 - r.intn(5)
			o.Temperature = pa.Ptr(math.Inf(-1))
			o.MaxOutputTokens = pa.Ptr(math.MinInt)
			r.note("odd overrides")
		case 4:
			o.ToolExecution = &pa.ToolExecutionConfig{Concurrency: -1}
			r.note("ToolExecution -1")
		case 5:
			var nilCfg *pa.ToolExecutionConfig
			o.ToolExecution = nilCfg
			o.Traceparent = r.text()
			r.note("nil ToolExecution, odd traceparent")
		case 6:
			o.Store = pa.NewMemoryStore()
			r.note("Store and State")
		case 7:
			o.ToolChoice = map[string]any{"toolId": r.text()}
			o.ActiveTools = []string{}
			r.note("odd ToolChoice")
		default:
			o.StopWhen = []pa.StopCondition{pa.StopWhenFunc(nil)}
			r.note("nil StopWhenFunc")
		}
	}
}

// ---- definition inputs ------------------------------------------------------------------

func (p *prober) definitionInput(r *probeRun) {
	r.callerSide = true
	def := pa.AgentDefinition{ID: r.text()}
	n := r.intn(4)
	for i := range n {
		tool := pa.Tool{ID: []string{"t", "", "t", "\xff", "a b", r.text()}[r.intn(6)]}
		if r.intn(2) == 0 {
			tool.Execute = func(any, pa.RuntimeContext) (any, error) { return i, nil }
		}
		switch r.intn(6) {
		case 0:
			tool.Parameters = cyclicMap()
		case 1:
			tool.Parameters = map[string]any{"type": r.text(), "properties": nested(70, true)}
		case 2:
			v, _ := r.value(0)
			tool.Parameters = map[string]any{"type": "object", "x": v}
		case 3:
			tool.Parameters = map[string]any{}
		}
		def.Tools = append(def.Tools, tool)
	}
	p.hostileOptions(r, &def)
	r.note("definition of %d tools", n)
	agent, err := pa.CreateAgent(def)
	if err != nil {
		r.checkErr(err, "CreateAgent", pa.CodeDefinitionInvalid)
		return
	}
	defer agent.Close()
	client, _ := pa.NewScriptedClient([]map[string]any{calls("t"), textResponse("after")}, 0)
	ctx, stop := r.runContext()
	defer stop()
	r.await(ctx, "Run", func() (pa.RunResult, error) { return agent.Run(ctx, pa.RunOptions{Input: "go", Client: client}) })
}

// ---- state inputs -----------------------------------------------------------------------

// probePaused is an agent with an approval-gated, a manual and an interactive tool, and a
// state paused on all three.
type probePaused struct {
	agent *pa.Agent
	state string
}

func (p *prober) pausedState(r *probeRun) string { return p.fixture(r).state }

func (p *prober) fixture(r *probeRun) *probePaused {
	if p.paused != nil {
		return p.paused
	}
	agent, err := pa.CreateAgent(pa.AgentDefinition{ID: "probe-fz", Tools: []pa.Tool{
		{ID: "deploy", RequireApproval: true, Execute: func(any, pa.RuntimeContext) (any, error) { return "deployed", nil }},
		{ID: "manual"},
		{ID: "ask", OnToolCalled: func(any, pa.RuntimeContext) (any, bool, error) { return nil, false, nil }},
	}})
	if err != nil {
		panic(err)
	}
	client, _ := pa.NewScriptedClient([]map[string]any{{"toolCalls": []any{
		map[string]any{"id": "c1", "name": "deploy", "arguments": `{"env":"prod","deep":` + asJSONText(nested(60, false)) + `}`},
		map[string]any{"id": "c2", "name": "manual", "arguments": `{"n":12345678901234567890}`},
		map[string]any{"id": "c3", "name": "ask", "arguments": `{"q":"\u00fc\ud83d\ude00"}`},
	}}}, 0)
	paused, err := agent.Run(context.Background(), pa.RunOptions{Input: "deploy", Client: client})
	if err != nil || paused.Status() != pa.StatusWaitingForHuman {
		panic(fmt.Sprintf("the probe's fixture did not pause: %v", err))
	}
	p.paused = &probePaused{agent: agent, state: paused.JSON()}
	return p.paused
}

func asJSONText(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

// probeMutate changes a state text: byte flips, truncation, insertion, a value replaced by
// a value of another type, deep nesting.
func probeMutate(r *probeRun, state string) string {
	text := []byte(state)
	for range 1 + r.intn(3) {
		if len(text) == 0 {
			break
		}
		at := r.intn(len(text))
		switch r.intn(8) {
		case 0:
			text[at] ^= byte(1 << r.intn(8))
		case 1:
			text = text[:at]
		case 2:
			end := min(len(text), at+1+r.intn(40))
			text = append(text[:at:at], text[end:]...)
		case 3:
			ins := []string{"\xff", "\x00", `"`, "{", "]", strings.Repeat("[", 70), `"\ud800"`, "1e999", ",", "null"}[r.intn(10)]
			text = append(text[:at:at], append([]byte(ins), text[at:]...)...)
		default:
			var doc any
			dec := json.NewDecoder(strings.NewReader(string(text)))
			dec.UseNumber()
			if dec.Decode(&doc) != nil {
				continue
			}
			doc = probeReplace(r, doc, 0)
			if out, err := json.Marshal(doc); err == nil {
				text = out
			}
		}
	}
	return string(text)
}

func probeReplace(r *probeRun, v any, depth int) any {
	switch x := v.(type) {
	case map[string]any:
		if len(x) > 0 && r.intn(5) != 0 {
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			k := keys[r.intn(len(keys))]
			if r.intn(12) == 0 {
				delete(x, k)
			} else {
				x[k] = probeReplace(r, x[k], depth+1)
			}
			return x
		}
	case []any:
		if len(x) > 0 && r.intn(5) != 0 {
			i := r.intn(len(x))
			x[i] = probeReplace(r, x[i], depth+1)
			return x
		}
	}
	choices := []any{nil, "", "c1", "c2", "c4", -1, 1e300, json.Number("18446744073709551616"), true, false, map[string]any{}, []any{},
		"waiting_for_human", "completed", "approval", "manual", "hitl", nested(70, r.intn(2) == 0), nested(10000, false), r.text(), v, []any{v, v}}
	return choices[r.intn(len(choices))]
}

// stateInput continues a mutated state (or the original with hostile decisions); when the
// continue is refused, the original must still continue.
func (p *prober) stateInput(r *probeRun) {
	f := p.fixture(r)
	state := f.state
	mutated := r.intn(5) != 0
	if mutated {
		state = probeMutate(r, state)
	}
	o := pa.ContinueOptions{
		Approvals:   []pa.ToolDecision{{ToolCallID: "c1"}},
		ToolOutputs: []pa.ToolOutput{{ToolCallID: "c2", Output: "manual out"}, {ToolCallID: "c3", Output: "asked"}},
	}
	if !mutated || r.intn(3) == 0 {
		r.callerSide = true
		// Hostile decisions.
		for range 1 + r.intn(3) {
			switch r.intn(7) {
			case 0:
				o.Approvals = append(o.Approvals, pa.ToolDecision{ToolCallID: r.text(), Reason: r.text()})
			case 1:
				o.Rejections = []pa.ToolDecision{{ToolCallID: "c1"}}
			case 2:
				v, _ := r.value(0)
				o.ToolOutputs[r.intn(2)].Output = v
			case 3:
				o.ToolOutputs = append(o.ToolOutputs, pa.ToolOutput{ToolCallID: "c2", Output: 2})
			case 4:
				o.Context, _ = r.value(0)
			case 5:
				o.HumanInput = r.text()
			default:
				o.Approvals = nil
			}
		}
		r.note("hostile decisions")
		r.callerSide = false
	}
	how := r.intn(4)
	r.note("state continued (mutated %v, by %d): %.300q", mutated, how, state)
	client := func() *pa.ScriptedClient {
		c, _ := pa.NewScriptedClient([]map[string]any{textResponse("done"), textResponse("done")}, 0)
		return c
	}
	cont := func(state string, o pa.ContinueOptions) (pa.RunResult, error, bool) {
		ctx, stop := context.WithTimeout(context.Background(), 60*time.Second)
		defer stop()
		o.Client = client()
		switch how {
		case 0:
			parsed, err := pa.ParseRunResult(state)
			if err != nil {
				return pa.RunResult{}, err, true
			}
			o.Run = parsed
		case 1:
			var parsed pa.RunResult
			if err := json.Unmarshal([]byte(state), &parsed); err != nil {
				var perr *pa.Error
				if !errors.As(err, &perr) {
					// encoding/json's own syntax error, before the SDK saw the text.
					return pa.RunResult{}, &pa.Error{Code: pa.CodeStateInvalid, Message: err.Error()}, true
				}
				return pa.RunResult{}, err, true
			}
			o.Run = parsed
		default:
			o.StateJSON = state
		}
		var res pa.RunResult
		var err error
		finished := make(chan struct{})
		go func() {
			if how == 3 {
				s := f.agent.ContinueStream(ctx, o)
				res, err = s.Result()
			} else {
				res, err = f.agent.Continue(ctx, o)
			}
			close(finished)
		}()
		select {
		case <-finished:
		case <-time.After(60*time.Second + probeGrace):
			r.find("hang", "a continue did not return")
			return pa.RunResult{}, nil, false
		}
		var perr *pa.Error
		refused := err != nil && (!errors.As(err, &perr) || perr.Result == nil)
		return res, err, refused
	}
	if state == "" {
		state = " "
	}
	_, err, refused := cont(state, o)
	if err != nil {
		r.checkErr(err, "Continue")
		if refused {
			var perr *pa.Error
			if errors.As(err, &perr) && perr.Code != pa.CodeContinueInvalid && perr.Code != pa.CodeStateInvalid {
				r.find("wrong", "a refused continue with code %s: %s", perr.Code, perr.Message)
			}
			// No lost state: the original, with good decisions, still continues.
			good := pa.ContinueOptions{Approvals: []pa.ToolDecision{{ToolCallID: "c1"}},
				ToolOutputs: []pa.ToolOutput{{ToolCallID: "c2", Output: "manual out"}, {ToolCallID: "c3", Output: "asked"}}}
			saved := how
			how = 2
			res, err2, _ := cont(f.state, good)
			how = saved
			if err2 != nil || res.Status() != pa.StatusCompleted {
				r.find("lost", "after a refused continue (%v) the original no longer continues: %v", err, err2)
			}
		}
	}
}

// An MCP server that closed its stdin: the core's write to it raised SIGPIPE, on a thread
// Go did not create, which ended the whole process. Now the write fails (mcp_failed, or
// the optional server is skipped) and the process lives on. In a child process.
func TestMCPServerWithClosedStdinDoesNotKillTheProcess(t *testing.T) {
	inChild(t, 2*time.Minute, func(t *testing.T) {
		for _, optional := range []bool{false, true} {
			server := pa.MCPServer{Name: "closed", Command: "/bin/sh", Optional: optional,
				Args: []string{"-c", "exec 0<&-; sleep 2"}}
			agent := mustAgent(t, pa.AgentDefinition{ID: "a", MCPServers: []pa.MCPServer{server}})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			r, err := agent.Run(ctx, pa.RunOptions{Input: "go", Client: scripted(t, textResponse("done"))})
			cancel()
			var perr *pa.Error
			switch {
			case optional && err == nil && r.Status() == pa.StatusCompleted:
			case !optional && errors.As(err, &perr) && perr.Code == pa.CodeMcpFailed:
			default:
				t.Fatalf("optional %v: status %q, error %v", optional, r.Status(), err)
			}
		}
	})
}

// blockingAccessor is a state accessor whose Load and Save block until their ctx is done
// (honour) or for ever.
type blockingAccessor struct {
	honour  bool
	release chan struct{}
	state   string
}

func (a blockingAccessor) wait(ctx context.Context) {
	if a.honour {
		select {
		case <-ctx.Done():
		case <-a.release:
		}
		return
	}
	<-a.release
}

func (a blockingAccessor) Load(ctx context.Context, _ string) (*pa.RunResult, error) {
	a.wait(ctx)
	r, err := pa.ParseRunResult(a.state)
	return &r, err
}

func (a blockingAccessor) Save(ctx context.Context, _ pa.RunResult) error {
	a.wait(ctx)
	return nil
}

// A state accessor whose Load or Save blocks (honouring its ctx or not) does not hold a
// cancelled run or continue: the continue's load gives way to the cancellation
// (cancelled, no result), the run's saves too (its final save is waited for 5 s at most,
// then the run fails with store_failed).
func TestBlockingStateAccessorDoesNotHoldACancelledRun(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	f := newProber(1).fixture(&probeRun{rng: rand.New(rand.NewSource(1))})
	for _, honour := range []bool{true, false} {
		acc := blockingAccessor{honour: honour, release: release, state: f.state}
		agent := mustAgent(t, pa.AgentDefinition{ID: "a"})
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		start := time.Now()
		r, err := agent.Run(ctx, pa.RunOptions{Input: "go", State: acc, Client: scripted(t, textResponse("done"))})
		cancel()
		var perr *pa.Error
		if err == nil && r.Status() != pa.StatusCancelled || err != nil && (!errors.As(err, &perr) || perr.Code != pa.CodeStoreFailed) {
			t.Fatalf("honour %v: Run gave status %q, error %v", honour, r.Status(), err)
		}
		if d := time.Since(start); d > time.Minute {
			t.Fatalf("honour %v: the cancelled run took %v", honour, d)
		}
		ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
		_, err = f.agent.Continue(ctx, pa.ContinueOptions{RunID: "r1", State: acc, Client: scripted(t, textResponse("done")),
			Approvals: []pa.ToolDecision{{ToolCallID: "c1"}}})
		cancel()
		if !errors.As(err, &perr) || perr.Code != pa.CodeCancelled || perr.Result != nil {
			t.Fatalf("honour %v: the cancelled continue gave %#v", honour, err)
		}
	}
}

// A caller's own value JSON cannot hold (input, context, a supplied output) is refused as
// state_invalid naming it, before anything runs, and a refused continue leaves the state
// current.
func TestCallerValuesJSONCannotHoldAreStateInvalid(t *testing.T) {
	f := newProber(1).fixture(&probeRun{rng: rand.New(rand.NewSource(1))})
	good := func() pa.ContinueOptions {
		return pa.ContinueOptions{StateJSON: f.state, Client: scripted(t, textResponse("done")),
			Approvals:   []pa.ToolDecision{{ToolCallID: "c1"}},
			ToolOutputs: []pa.ToolOutput{{ToolCallID: "c2", Output: "m"}, {ToolCallID: "c3", Output: "a"}}}
	}
	for _, v := range []any{math.NaN(), cyclicMap(), make(chan int), nested(65, false), nested(10000, true), panickyJSON{},
		json.Number("1e999"), map[string]any{"n": json.Number("123456789012345678901234567890")},
		rawJSON(`"\ud800"`), rawJSON(`["\udc00 alone"]`)} {
		_, err := f.agent.Run(context.Background(), pa.RunOptions{Input: v, Client: scripted(t, textResponse("x"))})
		var perr *pa.Error
		if !errors.As(err, &perr) || perr.Code != pa.CodeStateInvalid || !strings.HasPrefix(perr.Message, "Invalid run input: ") {
			t.Fatalf("input %T: %#v", v, err)
		}
		o := good()
		o.ToolOutputs[0].Output = v
		_, err = f.agent.Continue(context.Background(), o)
		if !errors.As(err, &perr) || perr.Code != pa.CodeStateInvalid || perr.Result != nil || !strings.HasPrefix(perr.Message, "Invalid tool output for c2: ") {
			t.Fatalf("output %T: %#v", v, err)
		}
		o = good()
		o.Context = v
		s := f.agent.ContinueStream(context.Background(), o)
		if _, err = s.Result(); !errors.As(err, &perr) || perr.Code != pa.CodeStateInvalid || !strings.HasPrefix(perr.Message, "Invalid continue context: ") {
			t.Fatalf("context %T: %#v", v, err)
		}
	}
	// 64 levels are a value's limit, and within it.
	if r, err := f.agent.Continue(context.Background(), pa.ContinueOptions{StateJSON: f.state, Client: scripted(t, textResponse("done")),
		Approvals: []pa.ToolDecision{{ToolCallID: "c1"}}, Context: nested(64, false),
		ToolOutputs: []pa.ToolOutput{{ToolCallID: "c2", Output: nested(64, true)}, {ToolCallID: "c3", Output: "a"}}}); err != nil || r.Status() != pa.StatusCompleted {
		t.Fatalf("the original state with 64-level values: %v", err)
	}
}

// A streamed continue of a state text that is not UTF-8 is refused as a continue is:
// state_invalid (it was invalid_argument, an error of the binding's own misuse), and the
// state given stays usable.
func TestContinueStreamOfTextThatIsNotUTF8IsStateInvalid(t *testing.T) {
	f := newProber(1).fixture(&probeRun{rng: rand.New(rand.NewSource(1))})
	bad := f.state[:40] + "\xff" + f.state[40:]
	for _, stream := range []bool{false, true} {
		o := pa.ContinueOptions{StateJSON: bad, Client: scripted(t, textResponse("done")), Approvals: []pa.ToolDecision{{ToolCallID: "c1"}}}
		var err error
		if stream {
			_, err = f.agent.ContinueStream(context.Background(), o).Result()
		} else {
			_, err = f.agent.Continue(context.Background(), o)
		}
		var perr *pa.Error
		if !errors.As(err, &perr) || perr.Code != pa.CodeStateInvalid || perr.Result != nil {
			t.Fatalf("stream %v: %#v", stream, err)
		}
	}
}

package phaseoagent_test

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// childEnv names the scenario a re-executed test binary runs (see inChild).
const childEnv = "PHASEO_GO_CHILD_SCENARIO"

// inChild runs scenario in a fresh process of this test binary, so that a scenario that
// crashes the process (a fatal error no recover catches: a nil dereference outside the
// SDK's guards, a stack overflow, runtime.Goexit on a C thread) fails this test instead of
// ending the whole test run. The child runs only the calling test (t.Name(), subtests
// included) with the scenario selected; it must pass within limit.
func inChild(t *testing.T, limit time.Duration, scenario func(t *testing.T)) {
	t.Helper()
	if os.Getenv(childEnv) == t.Name() {
		scenario(t)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run="+runPattern(t.Name()), "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the scenario did not finish within %v (a hang):\n%s", limit, out)
	}
	if err != nil {
		t.Fatalf("the scenario's process failed (%v):\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()+" ") {
		t.Fatalf("the scenario did not run in the child:\n%s", out)
	}
}

// runPattern is the -test.run pattern selecting exactly the test (or subtest) name.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

package phaseoagent_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	pa "github.com/phaseo/agent-sdk-go"
)

// TestMain lets the test binary serve as the worker process of TestRecoverAfterKilledWorker
// (PHASEO_GO_STORE_WORKER=<mode>), and as an MCP server on stdio (PHASEO_GO_SERVE_STDIO) or Streamable HTTP (PHASEO_GO_SERVE_HTTP): Go cannot kill a goroutine's process half-way, so the
// crashed worker is a real process, SIGKILLed.
func TestMain(m *testing.M) {
	if mode := os.Getenv("PHASEO_GO_SERVE_STDIO"); mode != "" {
		os.Exit(serveStdio(mode))
	}
	if mode := os.Getenv("PHASEO_GO_SERVE_HTTP"); mode != "" {
		os.Exit(serveHTTP(mode))
	}
	if mode := os.Getenv("PHASEO_GO_STORE_WORKER"); mode != "" {
		os.Exit(storeWorker(mode, os.Getenv("PHASEO_GO_STORE_PATH"), os.Getenv("PHASEO_GO_RUN_ID")))
	}
	os.Exit(m.Run())
}

// workerAgent is the agent of every worker: one approval-gated tool, a 1 s lease renewed
// every 250 ms; with hang, the tool reports that it runs, then blocks forever.
func workerAgent(store *pa.RunStore, hang bool) (*pa.Agent, error) {
	return pa.CreateAgent(pa.AgentDefinition{ID: "store-worker", Store: store,
		Lease: &pa.LeaseConfig{Duration: 1000, RenewEvery: 250},
		Tools: []pa.Tool{{ID: "deploy", RequireApproval: true, Execute: func(any, pa.RuntimeContext) (any, error) {
			if hang {
				fmt.Println(`{"executing":true}`)
				select {}
			}
			return "deployed", nil
		}}}})
}

// storeWorker pauses a run ("pause") or continues one by id and hangs in its tool
// ("hang"), printing one JSON line.
func storeWorker(mode, path, runID string) int {
	store, err := pa.OpenSQLiteStore(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	agent, err := workerAgent(store, mode == "hang")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var r pa.RunResult
	switch mode {
	case "pause":
		client, _ := pa.NewScriptedClient([]map[string]any{{"toolCalls": []any{map[string]any{"id": "c1", "name": "deploy", "arguments": "{}"}}}}, 0)
		r, err = agent.Run(context.Background(), pa.RunOptions{Input: "deploy please", Client: client})
	case "hang":
		client, _ := pa.NewScriptedClient([]map[string]any{{"text": "done"}}, 0)
		r, err = agent.Continue(context.Background(), pa.ContinueOptions{RunID: runID, Client: client,
			Approvals: []pa.ToolDecision{{ToolCallID: "c1"}}})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	out, _ := json.Marshal(map[string]string{"runId": r.Run.ID, "status": r.Status()})
	fmt.Println(string(out))
	return 0
}

func startWorker(t *testing.T, mode, path, runID string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PHASEO_GO_STORE_WORKER="+mode, "PHASEO_GO_STORE_PATH="+path, "PHASEO_GO_RUN_ID="+runID)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, bufio.NewReader(stdout)
}

func readLine(t *testing.T, r *bufio.Reader) map[string]any {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("worker output: %v (%q)", err, line)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("worker line %q: %v", line, err)
	}
	return m
}

// Recover (docs/behaviour.md §10): a worker process that claimed a paused run dies (SIGKILL) inside
// the tool; until its lease expires nobody may take the run over; then Recover continues
// it from its last checkpoint, with the approval the dead worker had claimed.
func TestRecoverAfterKilledWorker(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.db")
	pauser, out := startWorker(t, "pause", path, "")
	paused := readLine(t, out)
	if err := pauser.Wait(); err != nil || paused["status"] != pa.StatusWaitingForHuman {
		t.Fatalf("pause worker: %v %v", paused, err)
	}
	runID := paused["runId"].(string)
	hung, out := startWorker(t, "hang", path, runID)
	if line := readLine(t, out); line["executing"] != true {
		t.Fatalf("hang worker: %v", line)
	}
	if err := hung.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = hung.Wait()

	store, err := pa.OpenSQLiteStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	row, err := store.Load(runID)
	if err != nil || row == nil || row.Status != pa.StatusRunning || row.LeaseOwner == nil {
		t.Fatalf("the dead worker's row: %+v %v", row, err)
	}
	rescuer, err := workerAgent(store, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rescuer.Close()
	client := scripted(t, textResponse("done"))
	_, err = rescuer.Recover(context.Background(), runID, pa.ContinueOptions{Client: client})
	if !errors.Is(err, pa.ErrContinueInvalid) {
		t.Fatalf("recover before the lease expired: %v", err)
	}
	time.Sleep(1300 * time.Millisecond) // the dead worker's 1 s lease
	done, err := rescuer.Recover(context.Background(), runID, pa.ContinueOptions{Client: client})
	if err != nil || done.Status() != pa.StatusCompleted || done.Output != "done" {
		t.Fatalf("recover: %v %v", done.Status(), err)
	}
	if msg := toolMessages(done)["c1"].Content; !strings.Contains(msg, "deployed") {
		t.Fatalf("the claimed approval was not used: %q", msg)
	}
	if row, _ := store.Load(runID); row == nil || row.Status != pa.StatusCompleted {
		t.Fatalf("final row %+v", row)
	}
}

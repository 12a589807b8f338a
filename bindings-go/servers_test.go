package phaseoagent_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	pa "github.com/phaseo/agent-sdk-go"
)

// An MCP server's tools are agent tools (docs/behaviour.md §11): the reference server
// `@modelcontextprotocol/server-everything` over stdio (installed by `make mcp-servers`;
// missing, the test FAILS).
func TestMCPServerTools(t *testing.T) {
	bin, _ := filepath.Abs("../tests/mcp/node_modules/.bin/mcp-server-everything")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the MCP reference server is not installed (%v): run `make mcp-servers`", err)
	}
	agent := mustAgent(t, pa.AgentDefinition{ID: "everything", MCPServers: []pa.MCPServer{
		{Name: "everything", Command: bin, Args: []string{"stdio"}, ToolPrefix: "ev", AllowTools: []string{"echo"}},
	}})
	rec := &recorder{script: []pa.ModelResponse{
		{ToolCalls: []pa.ModelToolCall{{ID: "c1", Name: "ev_echo", Arguments: `{"message":"hi"}`}}},
		{Text: "echoed"},
	}}
	r := run(t, agent, pa.RunOptions{Input: "echo", Client: rec})
	if r.Output != "echoed" || toolMessages(r)["c1"].Content != "Echo: hi" {
		t.Fatalf("output %v messages %+v", r.Output, r.Messages)
	}
	if len(rec.requests[0].Tools) != 1 || rec.requests[0].Tools[0].ID != "ev_echo" {
		t.Fatalf("offered %+v", rec.requests[0].Tools)
	}
	// A server that cannot start fails the run with mcp_failed.
	broken := mustAgent(t, pa.AgentDefinition{ID: "broken", MCPServers: []pa.MCPServer{
		{Name: "nowhere", Command: "/nonexistent/mcp-server"},
	}})
	_, err := broken.Run(context.Background(), pa.RunOptions{Input: "x", Client: &recorder{}})
	if !errors.Is(err, pa.ErrMcpFailed) {
		t.Fatalf("err %v", err)
	}
	contains(t, err.Error(), "MCP server 'nowhere' could not start")
}

// The PostgreSQL store (PHASEO_TEST_POSTGRES_URL, set by scripts/with-test-postgres.sh;
// missing, the test FAILS): a paused run continues by id from another agent, once.
func TestPostgresStore(t *testing.T) {
	url := os.Getenv("PHASEO_TEST_POSTGRES_URL")
	if url == "" {
		t.Fatal("PHASEO_TEST_POSTGRES_URL is not set: run under scripts/with-test-postgres.sh (make go-tests does)")
	}
	store, err := pa.ConnectPostgresStore(url)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var executions atomic.Int32
	client := scripted(t, callWith("c1", "deploy", `{"env":"pg"}`), textResponse("Deployed."))
	paused := run(t, deployAgent(t, &executions, store), pa.RunOptions{Input: "deploy", Client: client})
	other := deployAgent(t, &executions, store)
	done, err := other.Continue(context.Background(), pa.ContinueOptions{RunID: paused.Run.ID, Client: client,
		Approvals: []pa.ToolDecision{{ToolCallID: "c1"}}})
	if err != nil || done.Status() != pa.StatusCompleted || executions.Load() != 1 {
		t.Fatalf("continue by id: %v %v", done.Status(), err)
	}
	_, err = other.Continue(context.Background(), pa.ContinueOptions{RunID: paused.Run.ID, Client: client,
		Approvals: []pa.ToolDecision{{ToolCallID: "c1"}}})
	if !errors.Is(err, pa.ErrContinueInvalid) || !strings.Contains(err.Error(), "was already continued") && !strings.Contains(err.Error(), "not waiting") {
		t.Fatalf("second continue: %v", err)
	}
	if bad, err := pa.ConnectPostgresStore("postgres://nobody@127.0.0.1:1/none"); err == nil || !errors.Is(err, pa.ErrStoreFailed) {
		t.Fatalf("unreachable server: %v %v", bad, err)
	}
}

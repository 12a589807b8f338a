package phaseoagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	pa "github.com/phaseo/agent-sdk-go"
)

// python is the dev venv's interpreter, which has the official MCP client (`mcp`); a
// missing venv or package fails these tests.
func python(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../.venvs/py/bin/python")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the Python venv with the mcp package is missing (make python mcp-servers): %v", err)
	}
	return p
}

// servedTools are the tools every serving test exposes; slow records its cancellation
// in cancelled (and in the file $PHASEO_GO_CANCEL_MARK or $CANCEL_MARK when set).
func servedTools(cancelled *atomic.Int32, deleted *atomic.Int32) []pa.Tool {
	out, _ := pa.JSONSchemaValidator(map[string]any{"type": "object",
		"properties": map[string]any{"sum": map[string]any{"type": "number"}}})
	return []pa.Tool{
		{ID: "add", Description: "Adds two numbers",
			Parameters: map[string]any{"type": "object", "required": []any{"a", "b"},
				"properties": map[string]any{"a": map[string]any{"type": "number"}, "b": map[string]any{"type": "number"}}},
			OutputSchema: out,
			Annotations:  map[string]any{"readOnlyHint": true, "title": "Add numbers"},
			Execute: func(in any, _ pa.RuntimeContext) (any, error) {
				m := in.(map[string]any)
				return map[string]any{"sum": m["a"].(float64) + m["b"].(float64)}, nil
			}},
		{ID: "slow", Description: "Waits until cancelled", Execute: func(_ any, rt pa.RuntimeContext) (any, error) {
			_ = rt.EmitProgress("started")
			select {
			case <-rt.Ctx.Done():
				cancelled.Add(1)
				for _, mark := range []string{os.Getenv("PHASEO_GO_CANCEL_MARK"), os.Getenv("CANCEL_MARK")} {
					if mark != "" {
						_ = os.WriteFile(mark, []byte("cancelled"), 0o600)
					}
				}
				return nil, rt.Ctx.Err()
			case <-time.After(10 * time.Minute):
				return "finished", nil
			}
		}},
		{ID: "steps", Description: "Reports progress", Execute: func(_ any, rt pa.RuntimeContext) (any, error) {
			_ = rt.EmitProgress(map[string]any{"progress": 1, "total": 2, "message": "half"})
			_ = rt.EmitProgress("almost")
			return 2, nil
		}},
		{ID: "delete", Description: "Deletes a file", RequireApproval: true,
			Execute: func(in any, _ pa.RuntimeContext) (any, error) {
				deleted.Add(1)
				return fmt.Sprintf("deleted %v", in.(map[string]any)["path"]), nil
			}},
		{ID: "sleepy", Description: "Too slow", Timeout: 200 * time.Millisecond,
			Execute: func(_ any, rt pa.RuntimeContext) (any, error) {
				select {
				case <-rt.Ctx.Done():
				case <-time.After(5 * time.Second):
				}
				return "late", nil
			}},
	}
}

// serveStdio is the test binary as a stdio server (PHASEO_GO_SERVE_STDIO=tools|agent).
func serveStdio(mode string) int {
	return serve(mode, false)
}

// serveHTTP is the test binary as a Streamable HTTP server of the tools
// (PHASEO_GO_SERVE_HTTP=tools, tests/mcp/test_client_matrix.py): the endpoint URL is the
// first line of stdout; the server stops when stdin closes.
func serveHTTP(mode string) int {
	return serve(mode, true)
}

func serve(mode string, overHTTP bool) int {
	var cancelled, deleted atomic.Int32
	opts := pa.MCPServeOptions{Name: "go-tools", Version: "1.0.0",
		ToolExecution: pa.ToolExecutionConfig{Concurrency: 4}}
	if mode == "agent" {
		agent, client, err := researcher(&deleted)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		opts.Agent, opts.Client, opts.Description = agent, client, "Researches"
	} else {
		opts.Tools = servedTools(&cancelled, &deleted)
	}
	if overHTTP {
		opts.HTTP = &pa.MCPHTTPOptions{}
	}
	srv, err := pa.ServeMCP(context.Background(), opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer srv.Close()
	if overHTTP {
		fmt.Println(srv.URL())
		_, _ = io.Copy(io.Discard, os.Stdin)
		return 0
	}
	_ = srv.Wait(context.Background())
	return 0
}

// researcher is an agent whose model calls delete (approval-gated) and then answers.
func researcher(deleted *atomic.Int32) (*pa.Agent, pa.ModelClient, error) {
	tools := servedTools(new(atomic.Int32), deleted)
	agent, err := pa.CreateAgent(pa.AgentDefinition{ID: "researcher", Tools: tools[3:4]})
	if err != nil {
		return nil, nil, err
	}
	client, err := pa.NewScriptedClient([]map[string]any{
		{"toolCalls": []any{map[string]any{"id": "n1", "name": "delete", "arguments": `{"path":"/tmp/x"}`}}},
		{"text": "researched"},
	}, 0)
	return agent, client, err
}

// drive runs the Python MCP client's scenario against target and decodes what it saw.
func drive(t *testing.T, scenario, approve string, target ...string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := append([]string{"../tests/mcp/served_client.py", scenario, approve}, target...)
	cmd := exec.CommandContext(ctx, python(t), args...)
	cmd.Env = append(os.Environ(), "PHASEO_GO_SERVE_STDIO="+scenario)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the MCP client failed: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var seen map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &seen); err != nil {
		t.Fatalf("the MCP client printed %q: %v", out, err)
	}
	return seen
}

// stdioTarget starts this test binary as the stdio server.
func stdioTarget() []string {
	return []string{"--", os.Args[0], "-test.run=^$"}
}

func httpServer(t *testing.T, opts pa.MCPServeOptions) *pa.MCPToolServer {
	t.Helper()
	opts.HTTP = &pa.MCPHTTPOptions{}
	srv, err := pa.ServeMCP(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	if !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") || !strings.HasSuffix(srv.URL(), "/mcp") {
		t.Fatalf("url %q", srv.URL())
	}
	return srv
}

func field(v any, path ...string) any {
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	return v
}

func checkToolsScenario(t *testing.T, seen map[string]any) {
	t.Helper()
	tools := seen["tools"].(map[string]any)
	if len(tools) != 5 {
		t.Fatalf("listed %v", tools)
	}
	if got := field(tools, "add", "inputSchema", "required"); fmt.Sprint(got) != "[a b]" {
		t.Errorf("add inputSchema.required = %v", got)
	}
	if field(tools, "add", "annotations", "readOnlyHint") != true || field(tools, "add", "title") != "Add numbers" {
		t.Errorf("add annotations = %v", field(tools, "add"))
	}
	if field(tools, "delete", "annotations", "destructiveHint") != true {
		t.Errorf("delete annotations = %v", field(tools, "delete"))
	}
	if got := field(seen, "add", "structured"); fmt.Sprint(got) != "map[sum:5]" || field(seen, "add", "isError") != false {
		t.Errorf("add = %v", seen["add"])
	}
	if field(seen, "invalid", "isError") != true || !strings.HasPrefix(field(seen, "invalid", "text").(string), "Invalid tool input") {
		t.Errorf("invalid = %v", seen["invalid"])
	}
	if field(seen, "sleepy", "isError") != true || field(seen, "sleepy", "text") != "Tool sleepy timed out after 200ms" {
		t.Errorf("sleepy = %v", seen["sleepy"])
	}
	if field(seen, "steps", "text") != "2" || fmt.Sprint(seen["progress"]) != "[[1 2 half] [2 <nil> almost]]" {
		t.Errorf("steps = %v, progress %v", seen["steps"], seen["progress"])
	}
}

func TestServeMCPToolsToThePythonClient(t *testing.T) {
	var cancelled, deleted atomic.Int32
	srv := httpServer(t, pa.MCPServeOptions{Name: "go-tools", Tools: servedTools(&cancelled, &deleted)})
	for _, target := range [][]string{stdioTarget(), {"--url", srv.URL()}} {
		seen := drive(t, "tools", "none", target...)
		checkToolsScenario(t, seen)
		if field(seen, "delete", "isError") != true ||
			field(seen, "delete", "text") != "Tool delete requires approval and this client cannot be asked" {
			t.Errorf("%s: delete without elicitation = %v", target[0], seen["delete"])
		}
	}
	if deleted.Load() != 0 {
		t.Fatalf("delete ran %d times without approval", deleted.Load())
	}
}

func TestServeMCPApprovalThroughElicitation(t *testing.T) {
	var cancelled, deleted atomic.Int32
	srv := httpServer(t, pa.MCPServeOptions{Name: "go-tools", Tools: servedTools(&cancelled, &deleted)})
	for _, target := range [][]string{stdioTarget(), {"--url", srv.URL()}} {
		yes := drive(t, "tools", "yes", target...)
		if field(yes, "delete", "isError") != false || field(yes, "delete", "text") != "deleted /x" {
			t.Errorf("%s: approved delete = %v", target[0], yes["delete"])
		}
		asked := fmt.Sprint(yes["asked"])
		if !strings.Contains(asked, "delete") || !strings.Contains(asked, `{"path":"/x"}`) {
			t.Errorf("%s: asked %s", target[0], asked)
		}
		no := drive(t, "tools", "no", target...)
		if field(no, "delete", "isError") != true || field(no, "delete", "text") != "Tool call rejected by human" {
			t.Errorf("%s: declined delete = %v", target[0], no["delete"])
		}
	}
	// Approved once over HTTP (the stdio server counts in its own process).
	if deleted.Load() != 1 {
		t.Fatalf("delete ran %d times, want 1", deleted.Load())
	}
}

func TestServeMCPCancellationReachesTheExecutor(t *testing.T) {
	var cancelled, deleted atomic.Int32
	srv := httpServer(t, pa.MCPServeOptions{Name: "go-tools", Tools: servedTools(&cancelled, &deleted)})
	seen := drive(t, "cancel", "none", "--url", srv.URL())
	if seen["cancelled"] != true || seen["finished"] != nil || field(seen, "add", "structured", "sum") != 2.0 {
		t.Fatalf("saw %v", seen)
	}
	for i := 0; i < 600 && cancelled.Load() == 0; i++ {
		time.Sleep(100 * time.Millisecond)
	}
	if cancelled.Load() != 1 {
		t.Fatal("the executor was not cancelled")
	}
	mark := filepath.Join(t.TempDir(), "cancelled")
	t.Setenv("PHASEO_GO_CANCEL_MARK", mark)
	drive(t, "cancel", "none", stdioTarget()...)
	for i := 0; i < 600; i++ {
		if _, err := os.Stat(mark); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the stdio server's executor was not cancelled")
}

func TestServeMCPAnAgentAsOneTool(t *testing.T) {
	var deleted atomic.Int32
	agent, client, err := researcher(&deleted)
	if err != nil {
		t.Fatal(err)
	}
	srv := httpServer(t, pa.MCPServeOptions{Name: "go-agent", Agent: agent, Client: client, Description: "Researches"})
	seen := drive(t, "agent", "yes", "--url", srv.URL())
	if field(seen, "tools", "researcher", "description") != "Researches" ||
		fmt.Sprint(field(seen, "tools", "researcher", "inputSchema", "required")) != "[input]" {
		t.Errorf("listed %v", seen["tools"])
	}
	if field(seen, "call", "isError") != false || field(seen, "call", "text") != "researched" || deleted.Load() != 1 {
		t.Errorf("call = %v, deleted %d", seen["call"], deleted.Load())
	}
	if !strings.Contains(fmt.Sprint(seen["asked"]), "delete") {
		t.Errorf("asked %v", seen["asked"])
	}
	refused := drive(t, "agent", "none", stdioTarget()...)
	if field(refused, "call", "isError") != true ||
		field(refused, "call", "text") != "Tool delete requires approval and this client cannot be asked" {
		t.Errorf("stdio, no elicitation: %v", refused["call"])
	}
}

func TestServeMCPRefusesBadOptionsAndStops(t *testing.T) {
	_, err := pa.ServeMCP(context.Background(), pa.MCPServeOptions{Name: "x",
		Tools: []pa.Tool{{ID: "ask", Description: "Asks a person"}}})
	var e *pa.Error
	if !errors.As(err, &e) || e.Code != pa.CodeDefinitionInvalid || e.Message != "Tool ask has no execute and cannot be served over MCP" {
		t.Fatalf("manual tool: %v", err)
	}
	agent, _, _ := researcher(new(atomic.Int32))
	_, err = pa.ServeMCP(context.Background(), pa.MCPServeOptions{Name: "x", Agent: agent})
	if !errors.As(err, &e) || !strings.Contains(e.Message, "needs a model client") {
		t.Fatalf("agent without client: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := pa.ServeMCP(ctx, pa.MCPServeOptions{Name: "x", HTTP: &pa.MCPHTTPOptions{},
		Tools: []pa.Tool{{ID: "hi", Execute: func(any, pa.RuntimeContext) (any, error) { return "hi", nil }}}})
	if err != nil {
		t.Fatal(err)
	}
	waitCtx, stopWaiting := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer stopWaiting()
	if err := srv.Wait(waitCtx); err != context.DeadlineExceeded {
		t.Fatalf("Wait on a running server: %v", err)
	}
	cancel()
	if err := srv.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
}

// A Python agent calls an approval-gated tool a Go server serves: the Python run pauses
// for approval, the continue approves it, and the Go server's elicitation is answered
// by the Python agent's on_elicitation hook.
func TestServeMCPToolCalledByAPythonAgent(t *testing.T) {
	var cancelled, deleted atomic.Int32
	srv := httpServer(t, pa.MCPServeOptions{Name: "go-tools", Tools: servedTools(&cancelled, &deleted)})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python(t), "testdata/python_agent.py", srv.URL())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the Python agent failed: %v\n%s", err, stderr.String())
	}
	var seen map[string]any
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &seen); err != nil {
		t.Fatalf("printed %q: %v", out, err)
	}
	if seen["paused"] != "waiting_for_human" || !strings.Contains(fmt.Sprint(seen["pending"]), "delete") {
		t.Errorf("first run: %v", seen)
	}
	if seen["status"] != "completed" || fmt.Sprint(seen["results"]) != "[deleted /tmp/a]" || deleted.Load() != 1 {
		t.Errorf("continued run: %v (deleted %d)", seen, deleted.Load())
	}
	if !strings.Contains(fmt.Sprint(seen["asked"]), `{"path":"/tmp/a"}`) {
		t.Errorf("asked %v", seen["asked"])
	}
}

// sumInput and sumOutput are the types of the typed tool served below.
type sumInput struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

type sumOutput struct {
	Sum float64 `json:"sum"`
}

// A tool made by NewTool is listed with its result type's schema as its outputSchema
// (docs/behaviour.md §19), and its structured result matches it.
func TestServeMCPListsATypedToolsOutputSchema(t *testing.T) {
	add, err := pa.NewTool("add", "Adds two numbers", func(in sumInput, _ pa.RuntimeContext) (sumOutput, error) {
		return sumOutput{Sum: in.A + in.B}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httpServer(t, pa.MCPServeOptions{Name: "go-typed", Tools: []pa.Tool{add}})
	// The driver's tools scenario lists the tools and calls add (its calls of the tools
	// this server does not have are error results, not looked at here).
	seen := drive(t, "tools", "none", "--url", srv.URL())
	if got := field(seen, "tools", "add", "outputSchema", "properties", "sum", "type"); got != "number" {
		t.Errorf("add outputSchema = %v", field(seen, "tools", "add", "outputSchema"))
	}
	if got := field(seen, "add", "structured"); fmt.Sprint(got) != "map[sum:5]" {
		t.Errorf("add = %v", seen["add"])
	}
}

// Command adk runs the workloads on Google's Agent Development Kit for Go: an llmagent
// with functiontool tools (schema inferred from the Go types, arguments checked against
// it), a runner over the in-memory session service, a fresh session per run (ADK runs a
// turn's calls concurrently).
package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/phaseo/agent-sdk-bench-go/harness"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/functiontool"
	"google.golang.org/genai"
)

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type napIn struct {
	I int `json:"i"`
}

type out struct {
	Result int `json:"result"`
}

func tools(name string) ([]tool.Tool, error) {
	switch name {
	case "add":
		t, err := functiontool.New(functiontool.Config{Name: "add", Description: "Add two numbers."},
			func(_ agent.Context, in addIn) (out, error) { return out{harness.Add(in.A, in.B)}, nil })
		return []tool.Tool{t}, err
	case "nap":
		t, err := functiontool.New(functiontool.Config{Name: "nap", Description: "Sleep, then return i."},
			func(_ agent.Context, in napIn) (out, error) { return out{harness.Nap(in.I)}, nil })
		return []tool.Tool{t}, err
	}
	return nil, nil
}

type adk struct{}

func (adk) Name() string { return "adk" }

func (adk) Versions() map[string]string {
	return map[string]string{"adk": harness.ModuleVersion("google.golang.org/adk/v2"),
		"genai": harness.ModuleVersion("google.golang.org/genai")}
}

func (adk) Prepare(w harness.Workload) (harness.Run, error) {
	ctx := context.Background()
	ts, err := tools(w.Tool)
	if err != nil {
		return nil, err
	}
	a, err := llmagent.New(llmagent.Config{Name: "bench", Description: "benchmark",
		Model: &scripted{turns: w.Turns}, Tools: ts})
	if err != nil {
		return nil, err
	}
	sessions := session.InMemoryService()
	s, err := sessions.Create(ctx, &session.CreateRequest{AppName: "bench", UserID: "user"})
	if err != nil {
		return nil, err
	}
	r, err := runner.New(runner.Config{AppName: "bench", Agent: a, SessionService: sessions})
	if err != nil {
		return nil, err
	}
	id := s.Session.ID()
	msg := genai.NewContentFromText("go", genai.RoleUser)
	return func() (string, error) {
		last := ""
		for ev, err := range r.Run(ctx, "user", id, msg, agent.RunConfig{StreamingMode: agent.StreamingModeNone}) {
			if err != nil {
				return "", err
			}
			if ev.Content == nil || ev.Partial {
				continue
			}
			var text strings.Builder
			for _, p := range ev.Content.Parts {
				if p.FunctionCall != nil || p.FunctionResponse != nil {
					text.Reset()
					break
				}
				text.WriteString(p.Text)
			}
			if text.Len() > 0 {
				last = text.String()
			}
		}
		if last == "" {
			return "", fmt.Errorf("no final text")
		}
		return last, nil
	}, nil
}

func main() { harness.Main(adk{}) }

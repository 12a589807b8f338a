// Command eino runs the workloads on CloudWeGo Eino: its ReAct agent
// (flow/agent/react, a compose graph: model node, tools node running a turn's calls in
// parallel) with SDK=eino-react, its ChatModelAgent with an adk.Runner with
// SDK=eino-adk. Tools are utils.InferTool functions (schema from struct tags; arguments
// decoded with encoding/json, not checked against the schema).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"
	"github.com/phaseo/agent-sdk-bench-go/harness"
)

type addIn struct {
	A int `json:"a" jsonschema:"required"`
	B int `json:"b" jsonschema:"required"`
}

type napIn struct {
	I int `json:"i" jsonschema:"required"`
}

func tools(name string) ([]tool.BaseTool, error) {
	var t tool.InvokableTool
	var err error
	switch name {
	case "add":
		t, err = utils.InferTool("add", "Add two numbers.", func(_ context.Context, in addIn) (int, error) {
			return harness.Add(in.A, in.B), nil
		})
	case "nap":
		t, err = utils.InferTool("nap", "Sleep, then return i.", func(_ context.Context, in napIn) (int, error) {
			return harness.Nap(in.I), nil
		})
	default:
		return nil, nil
	}
	return []tool.BaseTool{t}, err
}

type eino struct{ chatModelAgent bool }

func (e eino) Name() string {
	if e.chatModelAgent {
		return "eino-adk"
	}
	return "eino-react"
}

func (eino) Versions() map[string]string {
	return map[string]string{"eino": harness.ModuleVersion("github.com/cloudwego/eino")}
}

func (e eino) Prepare(w harness.Workload) (harness.Run, error) {
	ctx := context.Background()
	ts, err := tools(w.Tool)
	if err != nil {
		return nil, err
	}
	m := newScripted(w)
	input := []*schema.Message{schema.UserMessage("go")}
	if !e.chatModelAgent {
		// A turn is two graph steps (model node, tools node).
		a, err := react.NewAgent(ctx, &react.AgentConfig{ToolCallingModel: m,
			ToolsConfig: compose.ToolsNodeConfig{Tools: ts}, MaxStep: 2*w.MaxSteps() + 2})
		if err != nil {
			return nil, err
		}
		return func() (string, error) {
			out, err := a.Generate(ctx, input)
			if err != nil {
				return "", err
			}
			return out.Content, nil
		}, nil
	}
	cfg := &adk.ChatModelAgentConfig{Name: "bench", Description: "benchmark", Instruction: "",
		Model: m, MaxIterations: w.MaxSteps()}
	if ts != nil {
		cfg.ToolsConfig = adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: ts}}
	}
	a, err := adk.NewChatModelAgent(ctx, cfg)
	if err != nil {
		return nil, err
	}
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: a})
	return func() (string, error) {
		it := runner.Run(ctx, input)
		last := ""
		for {
			ev, ok := it.Next()
			if !ok {
				return last, nil
			}
			if ev.Err != nil {
				return "", ev.Err
			}
			if ev.Output != nil && ev.Output.MessageOutput != nil && ev.Output.MessageOutput.Message != nil {
				if msg := ev.Output.MessageOutput.Message; msg.Role == schema.Assistant && len(msg.ToolCalls) == 0 {
					last = msg.Content
				}
			}
		}
	}, nil
}

func main() {
	switch sdk := os.Getenv("SDK"); sdk {
	case "", "eino-react":
		harness.Main(eino{})
	case "eino-adk":
		harness.Main(eino{chatModelAgent: true})
	default:
		fmt.Fprintf(os.Stderr, "unknown SDK %q\n", sdk)
		os.Exit(2)
	}
}

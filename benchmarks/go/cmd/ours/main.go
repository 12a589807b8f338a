// Command ours runs the workloads on the Phaseo Agent SDK's Go binding: tools as Go
// functions with JSON Schema parameters that the core checks on every call,
// ToolExecution.Concurrency 1000 so that a turn's calls all start at once (as the peers'
// do), and the SDK's built-in scripted client (in the core: no Go code per model turn).
package main

import (
	"context"
	"fmt"

	"github.com/phaseo/agent-sdk-bench-go/harness"
	pa "github.com/phaseo/agent-sdk-go"
)

type ours struct{ agents map[string]*pa.Agent }

func (ours) Name() string { return "ours" }

func (ours) Versions() map[string]string {
	return map[string]string{"phaseo-agent-go": harness.ModuleVersion("github.com/phaseo/agent-sdk-go")}
}

func number(v any) int {
	f, _ := v.(float64)
	return int(f)
}

func newAgent(tool string) (*pa.Agent, error) {
	t := pa.Tool{ID: "add", Description: "Add two numbers.",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{
			"a": map[string]any{"type": "integer"}, "b": map[string]any{"type": "integer"}},
			"required": []any{"a", "b"}},
		Execute: func(input any, _ pa.RuntimeContext) (any, error) {
			m := input.(map[string]any)
			return harness.Add(number(m["a"]), number(m["b"])), nil
		}}
	if tool == "nap" {
		t = pa.Tool{ID: "nap", Description: "Sleep, then return i.",
			Parameters: map[string]any{"type": "object", "properties": map[string]any{
				"i": map[string]any{"type": "integer"}}, "required": []any{"i"}},
			Execute: func(input any, _ pa.RuntimeContext) (any, error) {
				return harness.Nap(number(input.(map[string]any)["i"])), nil
			}}
	}
	def := pa.AgentDefinition{ID: "bench", ToolExecution: pa.ToolExecutionConfig{Concurrency: 1000}}
	if tool != "" {
		def.Tools = []pa.Tool{t}
	}
	return pa.CreateAgent(def)
}

// Prepare reuses one agent per tool (an agent is a definition; every run is independent)
// and builds a fresh scripted client.
func (o ours) Prepare(w harness.Workload) (harness.Run, error) {
	agent, ok := o.agents[w.Tool]
	if !ok {
		var err error
		if agent, err = newAgent(w.Tool); err != nil {
			return nil, err
		}
		o.agents[w.Tool] = agent
	}
	script := make([]map[string]any, 0, len(w.Turns)+1)
	for _, turn := range w.Turns {
		calls := make([]any, len(turn))
		for i, c := range turn {
			calls[i] = map[string]any{"id": c.ID, "name": c.Name, "arguments": c.Arguments}
		}
		script = append(script, map[string]any{"toolCalls": calls})
	}
	script = append(script, map[string]any{"text": "done"})
	client, err := pa.NewScriptedClient(script, 0)
	if err != nil {
		return nil, err
	}
	steps := w.MaxSteps()
	return func() (string, error) {
		r, err := agent.Run(context.Background(), pa.RunOptions{Input: "go", Client: client,
			RunOverrides: pa.RunOverrides{MaxSteps: steps}})
		if err != nil {
			return "", err
		}
		out, ok := r.Output.(string)
		if !ok {
			return "", fmt.Errorf("output %v", r.Output)
		}
		return out, nil
	}, nil
}

func main() { harness.Main(ours{agents: map[string]*pa.Agent{}}) }

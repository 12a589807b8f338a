// The Go quickstart of the README, runnable offline (`make demo`): a tool that needs a
// person's approval pauses the run; the state is stored as JSON and the run continues
// from it (as another process would), and the tool's progress shows in the events.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"time"

	pa "github.com/phaseo/agent-sdk-go"
)

func main() {
	deploy := pa.DefineTool(pa.Tool{
		ID:          "deploy",
		Description: "Deploy a release",
		Parameters: map[string]any{"type": "object", "required": []any{"env"},
			"properties": map[string]any{"env": map[string]any{"type": "string"}}},
		RequireApproval: true,
		Timeout:         5 * time.Second,
		Execute: func(input any, rt pa.RuntimeContext) (any, error) {
			var args struct{ Env string }
			if err := pa.Decode(input, &args); err != nil {
				return nil, err
			}
			_ = rt.EmitProgress(map[string]any{"phase": "rolling out"})
			select { // a long step that honours cancellation and timeouts
			case <-time.After(10 * time.Millisecond):
			case <-rt.Ctx.Done():
				return nil, rt.Ctx.Err()
			}
			return map[string]any{"deployed": args.Env, "key": rt.ToolCall.ID}, nil
		},
	})
	agent, err := pa.CreateAgent(pa.AgentDefinition{ID: "ops", Tools: []pa.Tool{deploy}})
	if err != nil {
		log.Fatal(err)
	}
	client, err := pa.NewScriptedClient([]map[string]any{
		{"toolCalls": []any{map[string]any{"id": "c1", "name": "deploy", "arguments": `{"env":"prod"}`}}},
		{"text": "Deployed."},
	}, 0)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	paused, err := agent.Run(ctx, pa.RunOptions{Input: "deploy to prod", Client: client})
	if err != nil {
		log.Fatal(err)
	}
	stored, _ := json.Marshal(paused) // persist anywhere
	fmt.Printf("paused: %s, waiting for %s\n", paused.Status(), paused.Pending()[0].Call.Name)

	var restored pa.RunResult
	if err := json.Unmarshal(stored, &restored); err != nil {
		log.Fatal(err)
	}
	done, err := agent.Continue(ctx, pa.ContinueOptions{
		Run: restored, Client: client, Approvals: []pa.ToolDecision{{ToolCallID: "c1"}},
		OnEvent: func(e pa.AgentEvent) {
			if e.Type == "tool.preliminary_result" {
				fmt.Printf("progress: %v\n", e.Details["result"])
			}
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %v\n", done.Status(), done.Output)
}

// An approval that edits the call's input, and a tool that is retried with one idempotency key.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"strings"
	"time"

	pa "github.com/phaseo/agent-sdk-go"
)

func main() {
	deploy := pa.DefineTool(pa.Tool{
		ID:              "deploy",
		Description:     "Deploy a release",
		RequireApproval: true,
		Retry:           &pa.ToolRetry{MaxAttempts: 3, Backoff: 10 * time.Millisecond},
		MaxCalls:        pa.Ptr(1), // at most one deploy per run
		Parameters: map[string]any{
			"type":       "object",
			"properties": map[string]any{"env": map[string]any{"enum": []any{"staging", "production"}}},
			"required":   []any{"env"},
		},
		Execute: func(input any, rt pa.RuntimeContext) (any, error) {
			env := input.(map[string]any)["env"]
			if rt.Attempt == 1 { // the first attempt fails; the SDK retries it
				fmt.Printf("attempt 1 to deploy to %v: registry busy\n", env)
				return nil, errors.New("registry busy")
			}
			// The same key on every attempt and after any continue: hand it to the service.
			if !strings.HasSuffix(rt.IdempotencyKey, ":c1") {
				return nil, errors.New("unexpected key")
			}
			fmt.Printf("attempt %d deployed to %v\n", rt.Attempt, env)
			return map[string]any{"deployed": env}, nil
		},
	})
	agent, err := pa.CreateAgent(pa.AgentDefinition{ID: "ops", Tools: []pa.Tool{deploy}})
	if err != nil {
		log.Fatal(err)
	}
	defer agent.Close()
	client, err := pa.NewScriptedClient([]map[string]any{
		{"toolCalls": []any{map[string]any{"id": "c1", "name": "deploy", "arguments": `{"env":"production"}`}}},
		{"text": "Deployed to staging."},
	}, 0)
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	paused, err := agent.Run(ctx, pa.RunOptions{Input: "deploy", Client: client})
	if err != nil {
		log.Fatal(err)
	}
	stored, _ := json.Marshal(paused)
	var state pa.RunResult
	if err := json.Unmarshal(stored, &state); err != nil {
		log.Fatal(err)
	}
	// The person approves, but to staging: the edited input is validated before anything runs.
	done, err := agent.Continue(ctx, pa.ContinueOptions{
		Run: state, Client: client,
		Approvals: []pa.ToolDecision{{ToolCallID: "c1", EditedInput: map[string]any{"env": "staging"}}},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(done.Output)
}

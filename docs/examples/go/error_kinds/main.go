// Errors: a few ways a run fails, each with its code and message.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"

	pa "github.com/phaseo/agent-sdk-go"
)

// call is one scripted model answer: a call of tool name.
func call(name, arguments string) map[string]any {
	return map[string]any{"toolCalls": []any{map[string]any{"id": "c1", "name": name, "arguments": arguments}}}
}

func main() {
	lookup := pa.DefineTool(pa.Tool{
		ID:          "lookup-order",
		Description: "Look up an order",
		Parameters: map[string]any{
			"type":       "object",
			"properties": map[string]any{"order": map[string]any{"type": "string"}},
			"required":   []any{"order"},
		},
		Execute: func(input any, rt pa.RuntimeContext) (any, error) {
			order := input.(map[string]any)["order"]
			if order == "B-0" {
				return nil, errors.New("order service down")
			}
			return map[string]any{"order": order, "status": "shipped"}, nil
		},
	})
	agent, err := pa.CreateAgent(pa.AgentDefinition{ID: "support", MaxSteps: 2, Tools: []pa.Tool{lookup}})
	if err != nil {
		log.Fatal(err)
	}
	defer agent.Close()

	attempts := []struct {
		what    string
		answers []map[string]any
	}{
		{"arguments that fail the schema", []map[string]any{call("lookup-order", `{"order": 7}`)}},
		{"a tool the agent does not have", []map[string]any{call("delete-everything", "{}")}},
		{"a tool that raises", []map[string]any{call("lookup-order", `{"order": "B-0"}`)}},
		{"a model that never answers", []map[string]any{
			call("lookup-order", `{"order": "A-7"}`), call("lookup-order", `{"order": "A-7"}`)}},
	}
	for _, attempt := range attempts {
		client, err := pa.NewScriptedClient(attempt.answers, 0)
		if err != nil {
			log.Fatal(err)
		}
		_, err = agent.Run(context.Background(), pa.RunOptions{Input: "where is my order?", Client: client})
		var agentErr *pa.Error // one family; Code is the same in every language
		if !errors.As(err, &agentErr) {
			log.Fatalf("expected an agent error, got %v", err)
		}
		fmt.Printf("%s\n  %s: %s\n", attempt.what, agentErr.Code, agentErr.Message)
		if agentErr.Result == nil || agentErr.Result.Status() != pa.StatusFailed {
			log.Fatal("the error carries the run's final state")
		}
	}
}

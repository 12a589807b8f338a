// Streaming a run: the event types in order, for a model that calls one tool.
package main

import (
	"context"
	"fmt"
	"log"

	pa "github.com/phaseo/agent-sdk-go"
)

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
			return map[string]any{"order": input.(map[string]any)["order"], "status": "shipped"}, nil
		},
	})
	agent, err := pa.CreateAgent(pa.AgentDefinition{ID: "support", Tools: []pa.Tool{lookup}})
	if err != nil {
		log.Fatal(err)
	}
	defer agent.Close()
	// A scripted model: the first answer calls the tool, the second is the final text.
	client, err := pa.NewScriptedClient([]map[string]any{
		{"toolCalls": []any{map[string]any{"id": "c1", "name": "lookup-order", "arguments": `{"order": "A-7"}`}}},
		{"text": "Order A-7 has shipped."},
	}, 0)
	if err != nil {
		log.Fatal(err)
	}

	stream := agent.Stream(context.Background(), pa.RunOptions{Input: "where is order A-7?", Client: client})
	for event := range stream.Events() {
		// Text, and the tool's arguments as the model writes them, arrive as deltas.
		if delta, ok := event.Details["delta"]; ok {
			fmt.Printf("%s [%v]\n", event.Type, delta)
		} else {
			fmt.Println(event.Type)
		}
	}
	result, err := stream.Result() // replayed: every consumer sees the whole run
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(result.Output)
}

// Tracing: every run records OpenTelemetry spans, exported over OTLP to a collector.
package main

import (
	"context"
	"fmt"
	"log"

	pa "github.com/phaseo/agent-sdk-go"
)

func main() {
	// Every run from now on records spans. The collector's address comes from
	// OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318) unless Endpoint is set.
	if err := pa.EnableTracing(pa.TracingOptions{ServiceName: "orders-bot"}); err != nil {
		log.Fatal(err)
	}
	defer pa.ShutdownTracing() // Go has no exit hook: this exports what is left

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
	client, err := pa.NewScriptedClient([]map[string]any{
		{"toolCalls": []any{map[string]any{"id": "c1", "name": "lookup-order", "arguments": `{"order": "A-7"}`}}},
		{"text": "Order A-7 has shipped."},
	}, 0)
	if err != nil {
		log.Fatal(err)
	}
	result, err := agent.Run(context.Background(), pa.RunOptions{Input: "where is order A-7?", Client: client})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(result.Output)
}

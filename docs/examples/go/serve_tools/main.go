// Two tools served over MCP on this process's stdin and stdout: an MCP client (an IDE, a
// desktop assistant, another agent) starts this program and calls them.
package main

import (
	"context"
	"log"

	pa "github.com/phaseo/agent-sdk-go"
)

func main() {
	order := map[string]any{
		"type":       "object",
		"properties": map[string]any{"order": map[string]any{"type": "string"}},
		"required":   []any{"order"},
	}
	lookup := pa.DefineTool(pa.Tool{
		ID:          "lookup-order",
		Description: "Look up an order",
		Parameters:  order,
		Execute: func(input any, rt pa.RuntimeContext) (any, error) {
			return map[string]any{"order": input.(map[string]any)["order"], "status": "shipped"}, nil
		},
	})
	cancel := pa.DefineTool(pa.Tool{
		ID:          "cancel-order",
		Description: "Cancel an order",
		Parameters:  order,
		Execute: func(input any, rt pa.RuntimeContext) (any, error) {
			return map[string]any{"order": input.(map[string]any)["order"], "cancelled": true}, nil
		},
	})

	// stdout now speaks MCP: log to stderr (the log package's default), never fmt.Println.
	ctx := context.Background()
	server, err := pa.ServeMCP(ctx, pa.MCPServeOptions{Name: "orders", Tools: []pa.Tool{lookup, cancel}})
	if err != nil {
		log.Fatal(err)
	}
	defer server.Close()
	_ = server.Wait(ctx) // until the client closes stdin
}

// Command serve-tools serves two tools over MCP on standard input and output: any MCP
// client (an IDE, another agent, the Python or Node SDK's MCP client) can list and call
// them.
//
//	go run ./serve-tools        (from examples/go; needs `make go-lib`)
//
// addNote runs at once; deleteNotes asks the client for approval through MCP elicitation
// before it runs (docs/behaviour.md §19). The server stops when the client closes its
// input, or on Ctrl-C.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"

	pa "github.com/phaseo/agent-sdk-go"
)

func main() {
	var mu sync.Mutex
	var notes []string
	addNote := pa.Tool{
		ID:          "addNote",
		Description: "Stores a note",
		Parameters: map[string]any{"type": "object", "required": []any{"text"},
			"properties": map[string]any{"text": map[string]any{"type": "string"}}},
		Execute: func(input any, _ pa.RuntimeContext) (any, error) {
			mu.Lock()
			defer mu.Unlock()
			notes = append(notes, input.(map[string]any)["text"].(string))
			return map[string]any{"count": len(notes)}, nil
		},
	}
	deleteNotes := pa.Tool{
		ID:              "deleteNotes",
		Description:     "Deletes every note",
		RequireApproval: true,
		Execute: func(any, pa.RuntimeContext) (any, error) {
			mu.Lock()
			defer mu.Unlock()
			deleted := len(notes)
			notes = nil
			return fmt.Sprintf("deleted %d notes", deleted), nil
		},
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	srv, err := pa.ServeMCP(ctx, pa.MCPServeOptions{Name: "notes", Version: "1.0.0",
		Tools: []pa.Tool{addNote, deleteNotes}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer srv.Close()
	// Standard output carries the protocol: messages for people go to standard error.
	fmt.Fprintln(os.Stderr, "serving addNote and deleteNotes over stdio")
	_ = srv.Wait(context.Background())
}

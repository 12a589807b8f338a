// A durable run: paused by one worker, listed and continued by run id by another, exactly
// once.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	pa "github.com/phaseo/agent-sdk-go"
)

var refund = pa.DefineTool(pa.Tool{
	ID:              "refund",
	Description:     "Refund an order",
	RequireApproval: true,
	Parameters: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"order": map[string]any{"type": "string"}, "amount": map[string]any{"type": "number"},
		},
		"required": []any{"order", "amount"},
	},
	Execute: func(input any, rt pa.RuntimeContext) (any, error) {
		return map[string]any{"refunded": input.(map[string]any)["amount"]}, nil
	},
})

// supportDesk is the agent every worker builds over the same store (another process,
// another day).
func supportDesk(store *pa.RunStore) *pa.Agent {
	agent, err := pa.CreateAgent(pa.AgentDefinition{ID: "support-desk", Tools: []pa.Tool{refund}, Store: store})
	if err != nil {
		log.Fatal(err)
	}
	return agent
}

func main() {
	ctx := context.Background()
	client, err := pa.NewScriptedClient([]map[string]any{
		{"toolCalls": []any{map[string]any{"id": "c1", "name": "refund", "arguments": `{"order": "A-17", "amount": 42}`}}},
		{"text": "Refunded 42 on order A-17."},
	}, 0)
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "phaseo-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "runs.db")

	// The chat worker: the run pauses on the refund; its state is saved in the store.
	chatStore, err := pa.OpenSQLiteStore(path)
	if err != nil {
		log.Fatal(err)
	}
	defer chatStore.Close()
	chat := supportDesk(chatStore)
	defer chat.Close()
	paused, err := chat.Run(ctx, pa.RunOptions{Input: "Refund order A-17", Client: client})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("run status:", paused.Status())

	// The approval desk, later: its inbox lists the waiting runs; it continues one by run id.
	store, err := pa.OpenSQLiteStore(path)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	desk := supportDesk(store)
	defer desk.Close()
	page, err := store.List(pa.ListQuery{Statuses: []string{"waiting_for_human"}})
	if err != nil {
		log.Fatal(err)
	}
	for _, run := range page.Runs {
		state, err := run.State()
		if err != nil {
			log.Fatal(err)
		}
		for _, p := range state.Pending() {
			input := p.Call.Input.(map[string]any)
			fmt.Println("inbox:", p.Call.Name, input["order"], input["amount"])
		}
		decide := pa.ContinueOptions{RunID: run.RunID, Client: client, Approvals: []pa.ToolDecision{{ToolCallID: "c1"}}}
		done, err := desk.Continue(ctx, decide)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(done.Output)
		row, err := store.Load(run.RunID)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("stored status:", row.Status)
		// Any other continue of that pause, by any worker, is refused: the refund ran once.
		var refused *pa.Error
		if _, err := desk.Continue(ctx, decide); errors.As(err, &refused) {
			fmt.Println("again:", refused.Code)
		}
	}
}

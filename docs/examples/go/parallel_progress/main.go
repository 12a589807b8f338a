// Parallel tools with progress: three calls of one model turn run side by side, each
// reporting progress before its result.
package main

import (
	"context"
	"fmt"
	"log"
	"sort"
	"strings"
	"time"

	pa "github.com/phaseo/agent-sdk-go"
)

func main() {
	checkService := pa.DefineTool(pa.Tool{
		ID:          "check-service",
		Description: "Check one service",
		Timeout:     3 * time.Second,
		Parameters: map[string]any{
			"type":       "object",
			"properties": map[string]any{"service": map[string]any{"type": "string"}},
			"required":   []any{"service"},
		},
		Execute: func(input any, rt pa.RuntimeContext) (any, error) {
			service := input.(map[string]any)["service"].(string)
			_ = rt.EmitProgress(map[string]any{"checking": service}) // a tool.preliminary_result event
			return map[string]any{"service": service, "up": service != "db"}, nil
		},
	})
	agent, err := pa.CreateAgent(pa.AgentDefinition{
		ID:    "status",
		Tools: []pa.Tool{checkService},
		// The three calls of one turn run side by side; results keep the model's call order.
		ToolExecution: pa.ToolExecutionConfig{Concurrency: 3},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer agent.Close()
	var calls []any
	for i, service := range []string{"api", "db", "queue"} {
		calls = append(calls, map[string]any{
			"id": fmt.Sprintf("c%d", i+1), "name": "check-service",
			"arguments": fmt.Sprintf(`{"service": %q}`, service),
		})
	}
	client, err := pa.NewScriptedClient([]map[string]any{
		{"toolCalls": calls},
		{"text": "api and queue are up; db is down."},
	}, 0)
	if err != nil {
		log.Fatal(err)
	}

	var progress []string // events arrive one at a time, so no lock is needed
	result, err := agent.Run(context.Background(), pa.RunOptions{
		Input:  "status?",
		Client: client,
		OnEvent: func(e pa.AgentEvent) {
			if e.Type == "tool.preliminary_result" {
				checking := e.Details["result"].(map[string]any)["checking"]
				progress = append(progress, fmt.Sprintf("%v progress: checking %v", e.Details["toolCallId"], checking))
			}
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	sort.Strings(progress) // the calls overlap: their progress arrives in any order
	fmt.Println(strings.Join(progress, "\n"))
	fmt.Println(result.Output)
}

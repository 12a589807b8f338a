// A model client of your own: any type with Generate.
package main

import (
	"context"
	"fmt"
	"log"

	pa "github.com/phaseo/agent-sdk-go"
)

// echoModel answers without calling a real model; ctx ends when the run stops waiting.
type echoModel struct{}

func (echoModel) Generate(ctx context.Context, request pa.ModelRequest) (pa.ModelResponse, error) {
	question := request.Messages[len(request.Messages)-1].Content
	return pa.ModelResponse{Text: request.AgentID + " heard: " + question}, nil
}

func main() {
	agent, err := pa.CreateAgent(pa.AgentDefinition{ID: "support"})
	if err != nil {
		log.Fatal(err)
	}
	defer agent.Close()
	result, err := agent.Run(context.Background(), pa.RunOptions{Input: "where is order A-7?", Client: echoModel{}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(result.Output)
}

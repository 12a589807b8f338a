// MCP tools: an agent offers the tools of an MCP server it starts over stdio.
package main

import (
	"context"
	"fmt"
	"log"

	pa "github.com/phaseo/agent-sdk-go"
)

func main() {
	// An MCP server started as a child process and spoken to over stdio: here the protocol's
	// reference server, installed under tests/mcp; any server's command works the same way.
	everything := pa.MCPServer{
		Name:       "everything",
		Command:    "node",
		Args:       []string{"tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"},
		AllowTools: []string{"echo"}, // offer only these of the server's tools
	}
	// The server starts when a run first needs its tools and stops with the agent.
	agent, err := pa.CreateAgent(pa.AgentDefinition{ID: "assistant", MCPServers: []pa.MCPServer{everything}})
	if err != nil {
		log.Fatal(err)
	}
	defer agent.Close()
	// A scripted model: the first answer calls the server's tool, the second is the final text.
	client, err := pa.NewScriptedClient([]map[string]any{
		{"toolCalls": []any{map[string]any{"id": "c1", "name": "echo", "arguments": `{"message": "hello"}`}}},
		{"text": "The server said hello."},
	}, 0)
	if err != nil {
		log.Fatal(err)
	}

	result, err := agent.Run(context.Background(), pa.RunOptions{
		Input:  "say hello through the server",
		Client: client,
		OnEvent: func(event pa.AgentEvent) {
			if event.Type == "tool.completed" {
				fmt.Printf("%v -> %v\n", event.Details["toolName"], event.Details["output"])
			}
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(result.Output)
}

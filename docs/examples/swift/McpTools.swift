import Foundation
import PhaseoAgent

/// Prints each completed call (the run delivers events one at a time, in order).
final class PrintCompleted: EventListener, @unchecked Sendable {
    func onEvent(eventJson: String) throws {
        let event = try JSONSerialization.jsonObject(with: Data(eventJson.utf8)) as! [String: Any]
        guard event["type"] as? String == "tool.completed" else { return }
        print("\(event["toolName"]!) -> \(event["output"]!)")
    }
}

// An MCP server started as a child process and spoken to over stdio: here the protocol's
// reference server, installed under tests/mcp; any server's command works the same way.
let everything = McpServerConfig(
    name: "everything",
    transport: .stdio(
        command: "node",
        args: ["tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"],
        env: [:], cwd: nil),
    allowTools: ["echo"]) // offer only these of the server's tools
// The server starts when a run first needs its tools and stops with the agent.
let agent = try Agent(definition: AgentDefinition(id: "assistant", mcpServers: [everything]))
// A scripted model: the first answer calls the server's tool, the second is the final text.
let client = Client.scripted(client: try ScriptedClient(responsesJson: #"""
    [{"toolCalls": [{"id": "c1", "name": "echo", "arguments": "{\"message\": \"hello\"}"}]},
     {"text": "The server said hello."}]
    """#))

let result = try await agent.run(options: RunOptions(
    inputJson: #""say hello through the server""#, client: client, onEvent: PrintCompleted()))
print(result.outputText())

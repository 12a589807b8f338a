import Foundation
import PhaseoAgent

/// The tool's body: the generated API passes JSON text in and out.
final class CheckService: ToolExecutor, @unchecked Sendable {
    func execute(inputJson: String, runtime: ToolRuntime) async throws -> String {
        let input = try JSONSerialization.jsonObject(with: Data(inputJson.utf8)) as! [String: Any]
        let service = input["service"] as! String
        // a tool.preliminary_result event
        try runtime.emitProgress(valueJson: #"{"checking":"\#(service)"}"#)
        let output: [String: Any] = ["service": service, "up": service != "db"]
        return String(data: try JSONSerialization.data(withJSONObject: output), encoding: .utf8)!
    }
}

/// Collects the progress events (the run delivers them one at a time, in order).
final class Progress: EventListener, @unchecked Sendable {
    var lines: [String] = []
    func onEvent(eventJson: String) throws {
        let event = try JSONSerialization.jsonObject(with: Data(eventJson.utf8)) as! [String: Any]
        guard event["type"] as? String == "tool.preliminary_result" else { return }
        let checking = (event["result"] as! [String: Any])["checking"] as! String
        lines.append("\(event["toolCallId"] as! String) progress: checking \(checking)")
    }
}

let checkService = try Tool(definition: ToolDefinition(
    id: "check-service",
    description: "Check one service",
    parametersJson: #"{"type":"object","properties":{"service":{"type":"string"}},"required":["service"]}"#,
    execute: CheckService(),
    timeoutMs: 3_000))
// The three calls of one turn run side by side; results keep the model's call order.
let agent = try Agent(definition: AgentDefinition(
    id: "status", tools: [checkService], toolExecution: ToolExecution(toolConcurrency: 3)))
let client = Client.scripted(client: try ScriptedClient(responsesJson: #"""
    [{"toolCalls": [{"id": "c1", "name": "check-service", "arguments": "{\"service\": \"api\"}"},
                    {"id": "c2", "name": "check-service", "arguments": "{\"service\": \"db\"}"},
                    {"id": "c3", "name": "check-service", "arguments": "{\"service\": \"queue\"}"}]},
     {"text": "api and queue are up; db is down."}]
    """#))

let progress = Progress()
let result = try await agent.run(options: RunOptions(inputJson: #""status?""#, client: client, onEvent: progress))
print(progress.lines.sorted().joined(separator: "\n")) // the calls overlap: their progress arrives in any order
print(result.outputText())

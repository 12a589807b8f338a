import Foundation
import PhaseoAgent

/// The tool's body: the generated API passes JSON text in and out.
final class Deploy: ToolExecutor, @unchecked Sendable {
    func execute(inputJson: String, runtime: ToolRuntime) async throws -> String {
        try runtime.emitProgress(valueJson: #"{"phase":"rolling out"}"#)
        let input = try JSONSerialization.jsonObject(with: Data(inputJson.utf8)) as! [String: Any]
        let output: [String: Any] = ["deployed": input["env"]!, "key": runtime.toolCallId()]
        return String(data: try JSONSerialization.data(withJSONObject: output), encoding: .utf8)!
    }
}

let deploy = try Tool(definition: ToolDefinition(
    id: "deploy",
    description: "Deploy a release",
    parametersJson: #"{"type":"object","properties":{"env":{"type":"string"}},"required":["env"]}"#,
    execute: Deploy(),
    timeoutMs: 5_000,
    requireApproval: true))
let agent = try Agent(definition: AgentDefinition(id: "ops", tools: [deploy]))
// A scripted model: the first answer calls the tool, the second is the final text.
let client = Client.scripted(client: try ScriptedClient(responsesJson: #"""
    [{"toolCalls": [{"id": "c1", "name": "deploy", "arguments": "{\"env\":\"prod\"}"}]},
     {"text": "Deployed."}]
    """#))

let paused = try await agent.run(options: RunOptions(inputJson: #""deploy to prod""#, client: client))
let stored = paused.toJson() // persist anywhere; any language continues it
let done = try await agent.continueRun(
    state: try RunResult.fromJson(json: stored),
    options: ContinueOptions(client: client, approvals: [Decision(toolCallId: "c1")]))
print(done.outputText()) // Deployed.

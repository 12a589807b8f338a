import Foundation
import PhaseoAgent

/// The first attempt fails; the SDK retries it with the same idempotency key.
final class Deploy: ToolExecutor, @unchecked Sendable {
    func execute(inputJson: String, runtime: ToolRuntime) async throws -> String {
        let input = try JSONSerialization.jsonObject(with: Data(inputJson.utf8)) as! [String: Any]
        let env = input["env"] as! String
        if runtime.attempt() == 1 {
            print("attempt 1 to deploy to \(env): registry busy")
            throw ToolError.Failed(reason: "registry busy")
        }
        // The same key on every attempt and after any continue: hand it to the service.
        precondition(runtime.idempotencyKey().hasSuffix(":c1"))
        print("attempt \(runtime.attempt()) deployed to \(env)")
        return #"{"deployed":"\#(env)"}"#
    }
}

let deploy = try Tool(definition: ToolDefinition(
    id: "deploy",
    description: "Deploy a release",
    parametersJson: #"{"type":"object","properties":{"env":{"enum":["staging","production"]}},"required":["env"]}"#,
    execute: Deploy(),
    requireApproval: true,
    maxCalls: 1, // at most one deploy per run
    retry: ToolRetry(maxAttempts: 3, backoffMs: 10)))
let agent = try Agent(definition: AgentDefinition(id: "ops", tools: [deploy]))
let client = Client.scripted(client: try ScriptedClient(responsesJson: #"""
    [{"toolCalls": [{"id": "c1", "name": "deploy", "arguments": "{\"env\":\"production\"}"}]},
     {"text": "Deployed to staging."}]
    """#))

let paused = try await agent.run(options: RunOptions(inputJson: #""deploy""#, client: client))
// The person approves, but to staging: the edited input is validated before anything runs.
let done = try await agent.continueRun(
    state: try RunResult.fromJson(json: paused.toJson()),
    options: ContinueOptions(client: client, approvals: [
        Decision(toolCallId: "c1", editedInputJson: #"{"env":"staging"}"#),
    ]))
print(done.outputText())

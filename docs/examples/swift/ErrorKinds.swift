import Foundation
import PhaseoAgent

struct OrderServiceDown: Error, CustomStringConvertible {
    var description: String { "order service down" }
}

/// The tool's body: the generated API passes JSON text in and out.
final class LookupOrder: ToolExecutor, @unchecked Sendable {
    func execute(inputJson: String, runtime: ToolRuntime) async throws -> String {
        let input = try JSONSerialization.jsonObject(with: Data(inputJson.utf8)) as! [String: Any]
        let order = input["order"] as! String
        if order == "B-0" { throw OrderServiceDown() }
        let output: [String: Any] = ["order": order, "status": "shipped"]
        return String(data: try JSONSerialization.data(withJSONObject: output), encoding: .utf8)!
    }
}

/// One scripted model answer: a call of tool `name`.
func call(_ name: String, _ arguments: String) -> [String: Any] {
    ["toolCalls": [["id": "c1", "name": name, "arguments": arguments]]]
}

let lookup = try Tool(definition: ToolDefinition(
    id: "lookup-order",
    description: "Look up an order",
    parametersJson: #"{"type":"object","properties":{"order":{"type":"string"}},"required":["order"]}"#,
    execute: LookupOrder()))
let agent = try Agent(definition: AgentDefinition(id: "support", tools: [lookup], maxSteps: 2))
let attempts: [(String, [[String: Any]])] = [
    ("arguments that fail the schema", [call("lookup-order", #"{"order": 7}"#)]),
    ("a tool the agent does not have", [call("delete-everything", "{}")]),
    ("a tool that raises", [call("lookup-order", #"{"order": "B-0"}"#)]),
    ("a model that never answers", Array(repeating: call("lookup-order", #"{"order": "A-7"}"#), count: 2)),
]
for (what, answers) in attempts {
    let script = String(data: try JSONSerialization.data(withJSONObject: answers), encoding: .utf8)!
    let client = Client.scripted(client: try ScriptedClient(responsesJson: script))
    do {
        _ = try await agent.run(options: RunOptions(inputJson: #""where is my order?""#, client: client))
    } catch PhaseoError.Failed(let code, let message, let stateJson, _) {
        // One family; the code is the same in every language, and stateJson is the failed run.
        print("\(what)\n  \(code): \(message)")
        precondition(stateJson != nil, "the error carries the run's final state")
    }
}

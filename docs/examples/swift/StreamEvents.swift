import Foundation
import PhaseoAgent

/// The tool's body: the generated API passes JSON text in and out.
final class LookupOrder: ToolExecutor, @unchecked Sendable {
    func execute(inputJson: String, runtime: ToolRuntime) async throws -> String {
        let input = try JSONSerialization.jsonObject(with: Data(inputJson.utf8)) as! [String: Any]
        let output: [String: Any] = ["order": input["order"]!, "status": "shipped"]
        return String(data: try JSONSerialization.data(withJSONObject: output), encoding: .utf8)!
    }
}

let lookup = try Tool(definition: ToolDefinition(
    id: "lookup-order",
    description: "Look up an order",
    parametersJson: #"{"type":"object","properties":{"order":{"type":"string"}},"required":["order"]}"#,
    execute: LookupOrder()))
let agent = try Agent(definition: AgentDefinition(id: "support", tools: [lookup]))
// A scripted model: the first answer calls the tool, the second is the final text.
let client = Client.scripted(client: try ScriptedClient(responsesJson: #"""
    [{"toolCalls": [{"id": "c1", "name": "lookup-order", "arguments": "{\"order\": \"A-7\"}"}]},
     {"text": "Order A-7 has shipped."}]
    """#))

let stream = try agent.stream(options: RunOptions(inputJson: #""where is order A-7?""#, client: client))
let cursor = stream.cursor() // each cursor replays the run from its first event
while let json = try await cursor.next() {
    let event = try JSONSerialization.jsonObject(with: Data(json.utf8)) as! [String: Any]
    let type = event["type"] as! String
    if type == "result" { break } // the last item: {"type": "result", "result": <state>}
    // Text, and the tool's arguments as the model writes them, arrive as deltas.
    if let delta = event["delta"] as? String { print("\(type) [\(delta)]") } else { print(type) }
}
print(try await stream.text())

import Foundation
import PhaseoAgent

/// A model client of your own (`StreamingModelClient` adds streaming); this one answers
/// without a real model. The generated API passes the request and response as JSON text.
final class EchoModel: ModelClient, @unchecked Sendable {
    func generate(requestJson: String) async throws -> String {
        let request = try JSONSerialization.jsonObject(with: Data(requestJson.utf8)) as! [String: Any]
        let messages = request["messages"] as! [[String: Any]]
        let question = messages.last!["content"] as! String
        let response: [String: Any] = ["text": "\(request["agentId"]!) heard: \(question)"]
        return String(data: try JSONSerialization.data(withJSONObject: response), encoding: .utf8)!
    }
}

let agent = try Agent(definition: AgentDefinition(id: "support"))
let result = try await agent.run(options: RunOptions(
    inputJson: #""where is order A-7?""#, client: .host(client: EchoModel())))
print(result.outputText())

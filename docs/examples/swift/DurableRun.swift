import Foundation
import PhaseoAgent

/// The tool's body: the generated API passes JSON text in and out.
final class Refund: ToolExecutor, @unchecked Sendable {
    func execute(inputJson: String, runtime: ToolRuntime) async throws -> String {
        let input = try JSONSerialization.jsonObject(with: Data(inputJson.utf8)) as! [String: Any]
        return #"{"refunded":\#(input["amount"]!)}"#
    }
}

let refund = try Tool(definition: ToolDefinition(
    id: "refund",
    description: "Refund an order",
    parametersJson: #"""
        {"type":"object","properties":{"order":{"type":"string"},"amount":{"type":"number"}},
         "required":["order","amount"]}
        """#,
    execute: Refund(),
    requireApproval: true))

/// Every worker builds the same agent over the same store (another process, another day).
func supportDesk(_ store: RunStore) throws -> Agent {
    try Agent(definition: AgentDefinition(id: "support-desk", tools: [refund], store: store))
}

let client = Client.scripted(client: try ScriptedClient(responsesJson: #"""
    [{"toolCalls": [{"id": "c1", "name": "refund", "arguments": "{\"order\": \"A-17\", \"amount\": 42}"}]},
     {"text": "Refunded 42 on order A-17."}]
    """#))
let path = FileManager.default.temporaryDirectory.appendingPathComponent("phaseo-\(UUID()).db").path

// The chat worker: the run pauses on the refund; its state is saved in the store.
let paused = try await supportDesk(try sqliteRunStore(path: path))
    .run(options: RunOptions(inputJson: #""Refund order A-17""#, client: client))
print("run status: \(paused.status() == .waitingForHuman ? "waiting_for_human" : "other")")

// The approval desk, later: its inbox lists the waiting runs; it continues one by run id.
let store = try sqliteRunStore(path: path)
let desk = try supportDesk(store)
for run in try await store.list(statuses: ["waiting_for_human"], agentId: nil, limit: 0, cursor: nil).runs {
    let pending = try JSONSerialization.jsonObject(with: Data(run.state.pendingJson().utf8)) as! [[String: Any]]
    for entry in pending {
        let call = entry["call"] as! [String: Any]
        let input = call["input"] as! [String: Any]
        print("inbox: \(call["name"]!) \(input["order"]!) \(input["amount"]!)")
    }
    let decide = ContinueOptions(client: client, approvals: [Decision(toolCallId: "c1")])
    let done = try await desk.continueById(runId: run.runId, options: decide)
    print(done.outputText())
    print("stored status: \(try await store.load(runId: run.runId)!.status)")
    // Any other continue of that pause, by any worker, is refused: the refund ran once.
    do {
        _ = try await desk.continueById(runId: run.runId, options: decide)
    } catch PhaseoError.Failed(let code, _, _, _) {
        print("again: \(code)")
    }
}
try? FileManager.default.removeItem(atPath: path)

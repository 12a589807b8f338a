// A smoke test for a Mac: `swift test` in bindings-uniffi/swift after building the Rust library.
// Written against the generated API but never compiled on the project's machines (no Swift
// compiler there).
import Foundation
import PhaseoAgent
import XCTest

/// A tool written in Swift: an `async` function of the input JSON and the call's runtime.
final class Add: ToolExecutor, @unchecked Sendable {
    func execute(inputJson: String, runtime: ToolRuntime) async throws -> String {
        let input = try JSONSerialization.jsonObject(with: Data(inputJson.utf8)) as? [String: Any] ?? [:]
        let a = input["a"] as? Int ?? 0
        let b = input["b"] as? Int ?? 0
        return String(a + b)
    }
}

final class Boom: ToolExecutor, @unchecked Sendable {
    func execute(inputJson: String, runtime: ToolRuntime) async throws -> String {
        throw ToolError.Failed(reason: "disk full")
    }
}

final class SmokeTests: XCTestCase {
    func testAScriptedRunCallsASwiftTool() async throws {
        let add = try Tool(definition: ToolDefinition(id: "add", description: "Adds two numbers", execute: Add()))
        let agent = try Agent(definition: AgentDefinition(id: "calculator", tools: [add]))
        let client = try ScriptedClient(responsesJson: #"[{"toolCalls":[{"id":"c1","name":"add","arguments":"{\"a\":2,\"b\":3}"}]},{"text":"5"}]"#)
        let result = try await agent.run(options: RunOptions(inputJson: #""2+3?""#, client: .scripted(client: client)))
        XCTAssertEqual(result.status(), .completed)
        XCTAssertEqual(result.outputText(), "5")
        let restored = try RunResult.fromJson(json: result.toJson())
        XCTAssertEqual(restored.toJson(), result.toJson())
    }

    func testAFailingToolThrowsPhaseoErrorWithTheFailedState() async throws {
        let boom = try Tool(definition: ToolDefinition(id: "boom", execute: Boom()))
        let agent = try Agent(definition: AgentDefinition(id: "a", tools: [boom]))
        let client = try ScriptedClient(responsesJson: #"[{"toolCalls":[{"id":"c1","name":"boom","arguments":"{}"}]}]"#)
        do {
            _ = try await agent.run(options: RunOptions(inputJson: #""go""#, client: .scripted(client: client)))
            XCTFail("the run should have failed")
        } catch let PhaseoError.Failed(code, message, stateJson, _) {
            XCTAssertEqual(code, "tool_failed")
            XCTAssertEqual(message, "disk full")
            XCTAssertNotNil(stateJson)
        }
    }
}

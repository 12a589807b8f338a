package app.phaseo.agent

import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** Signed state (docs/behaviour.md §7) and the value limits at the Kotlin boundary. */
class SignedStateTest {
    private val deploy = defineTool("deploy", "Deploy", requireApproval = true) { _, _ -> JsonPrimitive("deployed") }
    private val script = listOf(callsResponse(call("c1", "deploy")), textResponse("Deployed."))

    @Test
    fun `stateSecret signs the state and an edited or unsigned state is refused`() = runBlocking {
        val agent = createAgent("ops", tools = listOf(deploy), stateSecret = "s3cret")
        val paused = agent.run("deploy", scriptedClient(script))
        val stored = json(paused.toJson()).jsonObject
        val signature = stored["signature"]!!.jsonPrimitive.content
        assertTrue(Regex("[0-9a-f]{64}").matches(signature))

        val run = stored["run"]!!.jsonObject
        val tampered = JsonObject(stored + ("run" to JsonObject(run + ("context" to JsonPrimitive("admin")))))
        val mismatch = assertThrows<AgentException> {
            runBlocking { agent.continueRun(parseState(tampered.toString()), scriptedClient(script, used = 1), approvals = listOf(decision("c1"))) }
        }
        assertEquals("state_invalid", mismatch.code)
        assertEquals("State signature does not match", mismatch.message)

        val stripped = JsonObject(stored - "signature")
        val missing = assertThrows<AgentException> {
            runBlocking { agent.continueRun(parseState(stripped.toString()), scriptedClient(script, used = 1), approvals = listOf(decision("c1"))) }
        }
        assertEquals("State signature is missing", missing.message)

        // Rotation: the first secret signs, any verifies.
        val rotated = createAgent("ops", tools = listOf(deploy), stateSecrets = listOf("new", "s3cret"))
        val done = rotated.continueRun(parseState(paused.toJson()), scriptedClient(script, used = 1), approvals = listOf(decision("c1")))
        assertEquals(RunStatus.COMPLETED, done.status())
        assertNotEquals(signature, json(done.toJson()).jsonObject["signature"]!!.jsonPrimitive.content)
    }

    @Test
    fun `a result nested beyond 64 levels is an invalid output, a throwing message a tool error`() = runBlocking {
        var deep: kotlinx.serialization.json.JsonElement = JsonPrimitive(1)
        repeat(65) { deep = JsonObject(mapOf("a" to deep)) }
        val tooDeep = defineTool("t", "Deep", onError = OnError.RETURN_TO_MODEL) { _, _ -> deep }
        val failed = assertThrows<AgentException> {
            runBlocking { createAgent("a", tools = listOf(tooDeep)).run("go", scriptedClient(listOf(callsResponse(call("c1", "t")), textResponse("x")))) }
        }
        assertEquals("tool_output_invalid", failed.code)
        assertEquals("Invalid tool output: value is nested more than 64 levels deep", failed.message)

        val odd = defineTool("t", "Odd", onError = OnError.RETURN_TO_MODEL) { _, _ ->
            throw object : RuntimeException() {
                override val message: String get() = throw IllegalStateException("no message")
                override fun toString(): String = throw IllegalStateException("no text")
            }
        }
        val model = RecordingModel(listOf(callsResponse(call("c1", "t")), textResponse("ok")))
        val result = createAgent("a", tools = listOf(odd)).run("go", model.client)
        assertEquals(RunStatus.COMPLETED, result.status())
        assertEquals("""{"error":"host callback failed"}""", model.toolMessages(1).single().content)
    }
}

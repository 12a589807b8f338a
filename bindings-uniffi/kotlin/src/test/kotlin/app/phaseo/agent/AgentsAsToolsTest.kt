package app.phaseo.agent

import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** An agent as a tool of another (docs/behaviour.md §18), through the Kotlin and Java APIs. */
class AgentsAsToolsTest {
    private val lookup = defineTool("lookup", "Looks up", requireApproval = true) { _, _ -> JsonPrimitive("fact") }

    @Test
    fun `a nested approval pauses the outer run as c1 slash n1 and the outer continue completes it`() = runBlocking {
        val researcher = createAgent("researcher", tools = listOf(lookup))
        val boss = createAgent("boss", tools = listOf(researcher.asTool(description = "Researches")))
        val script = listOf(
            callsResponse(call("c1", "researcher", """{"input":"topic"}""")), callsResponse(call("n1", "lookup")),
            textResponse("inner done"), textResponse("All done."),
        )
        val paused = boss.run("study", scriptedClient(script))
        assertEquals(RunStatus.WAITING_FOR_HUMAN, paused.status())
        assertEquals(listOf("c1/n1"), ids(paused.pending))
        val refused = assertThrows<AgentException> {
            runBlocking { boss.continueRun(parseState(paused.toJson()), scriptedClient(script, 2), approvals = listOf(decision("c1/n9"))) }
        }
        assertEquals("Unknown tool call c1/n9", refused.message)
        val seen = mutableListOf<JsonObject>()
        val done = boss.continueRun(
            parseState(paused.toJson()), scriptedClient(script, 2), approvals = listOf(decision("c1/n1")),
            onEvent = { seen.add(it) },
        )
        assertEquals(JsonPrimitive("All done."), done.output)
        assertEquals("run.completed", seen.last { it["parentToolCallId"] == JsonPrimitive("c1") }.type)
    }

    @Test
    fun `the Java API makes an agent tool too`() {
        val nested = AgentSdk.createAgent(AgentSdk.AgentDefinition("researcher", emptyList()))
        val tool = nested.asTool("research", "Researches")
        val boss = AgentSdk.createAgent(AgentSdk.AgentDefinition("boss", listOf(AgentSdk.defineTool(tool))))
        val client = AgentSdk.scriptedClient(
            listOf(
                mapOf("toolCalls" to listOf(mapOf("id" to "c1", "name" to "research", "arguments" to """{"input":"q"}"""))),
                mapOf("text" to "inner"), mapOf("text" to "outer"),
            ),
        )
        assertEquals("outer", boss.run("go", client).output())
    }
}

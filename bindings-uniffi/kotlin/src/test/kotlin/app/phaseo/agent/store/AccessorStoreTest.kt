package app.phaseo.agent.store

import app.phaseo.agent.AgentException
import app.phaseo.agent.RunResult
import app.phaseo.agent.RunStatus
import app.phaseo.agent.StateAccessor
import app.phaseo.agent.accessorStore
import app.phaseo.agent.call
import app.phaseo.agent.callsResponse
import app.phaseo.agent.continueRun
import app.phaseo.agent.createAgent
import app.phaseo.agent.decision
import app.phaseo.agent.defineTool
import app.phaseo.agent.listRuns
import app.phaseo.agent.run
import app.phaseo.agent.scriptedClient
import app.phaseo.agent.textResponse
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** The product's `load(runId)` / `save(state)` accessor used as a run store (suspend). */
class AccessorStoreTest {
    /** The application's own storage of states (suspending, as a database call would). */
    private class MapAccessor : StateAccessor {
        val saved = ConcurrentHashMap<String, RunResult>()
        val saves = AtomicInteger()

        override suspend fun load(runId: String): RunResult? {
            delay(1)
            return saved[runId]
        }

        override suspend fun save(state: RunResult) {
            delay(1)
            saves.incrementAndGet()
            saved[state.runId()] = state
        }
    }

    private fun deployAgent(store: app.phaseo.agent.RunStore, ran: AtomicInteger) = createAgent(
        "accessor",
        tools = listOf(defineTool("deploy", "Deploy", requireApproval = true) { _, _ -> ran.incrementAndGet(); JsonPrimitive("deployed") }),
        store = store,
    )

    @Test
    fun `an accessor keeps the run and a pause is continued by run id`() = runBlocking {
        val accessor = MapAccessor()
        val ran = AtomicInteger()
        val agent = deployAgent(accessorStore(accessor), ran)
        val paused = agent.run("deploy", scriptedClient(callsResponse(call("c1", "deploy"))))
        assertEquals(RunStatus.WAITING_FOR_HUMAN, accessor.saved[paused.runId()]!!.status())
        assertEquals(paused.toJson(), accessor.saved[paused.runId()]!!.toJson())
        // Another agent (another process would build its own) continues from the accessor.
        val done = deployAgent(accessorStore(accessor), ran)
            .continueRun(paused.runId(), scriptedClient(textResponse("ok")), approvals = listOf(decision("c1")))
        assertEquals(RunStatus.COMPLETED, done.status())
        assertEquals(RunStatus.COMPLETED, accessor.saved[paused.runId()]!!.status())
        assertEquals(1, ran.get())
        assertTrue(accessor.saves.get() >= 3, "saved at start, pause and end: ${accessor.saves.get()}")
        // An accessor has no queries: listing is refused by name.
        val e = assertThrows<AgentException> { runBlocking { accessorStore(accessor).listRuns() } }
        assertEquals("store_failed", e.code)
        assertEquals("Run store failed: list is not supported by a load/save state accessor", e.message)
    }

    @Test
    fun `a failing accessor is store_failed with the result attached`() = runBlocking {
        val broken = object : StateAccessor {
            override suspend fun load(runId: String): RunResult? = null
            override suspend fun save(state: RunResult) = throw IllegalStateException("disk full")
        }
        val agent = deployAgent(accessorStore(broken), AtomicInteger())
        val e = assertThrows<AgentException> { runBlocking { agent.run("hi", scriptedClient(textResponse("hello"))) } }
        assertEquals("store_failed", e.code)
        assertTrue(e.message!!.contains("disk full"), e.message)
        assertNotNull(e.result)
    }
}

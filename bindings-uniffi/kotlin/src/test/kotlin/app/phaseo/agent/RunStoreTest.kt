package app.phaseo.agent

import java.nio.file.Files
import java.nio.file.Paths
import java.util.UUID
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assertions.fail
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** Run stores (docs/behaviour.md §10) from Kotlin, against SQLite and a real PostgreSQL. */
class RunStoreTest {
    private fun postgresUrl(): String =
        System.getenv("PHASEO_TEST_POSTGRES_URL")
            ?: fail("PHASEO_TEST_POSTGRES_URL is not set: run the Kotlin tests under scripts/with-test-postgres.sh; a PostgreSQL test never skips")

    /**
     * The URL of an empty database of the test PostgreSQL server, so that the store's prune of
     * every completed run sees only this test's runs (a suite's tests may share the server's
     * one database).
     */
    private fun databaseOfItsOwn(): String {
        postgresUrl()
        val script = Paths.get("../../scripts/pg-test-server.sh").toAbsolutePath().normalize()
        val server = ProcessBuilder("bash", script.toString(), "database").redirectErrorStream(true).start()
        val out = server.inputStream.bufferedReader().readText()
        assertTrue(server.waitFor(60, TimeUnit.SECONDS), "pg-test-server.sh database did not finish in 60 s")
        assertEquals(0, server.exitValue(), out)
        return out.trim().lines().last()
    }

    private fun sqlite(): RunStore = sqliteStore(Files.createTempDirectory("phaseo-store").resolve("runs.db").toString())

    private fun deployAgent(store: RunStore?, ran: AtomicInteger, id: String = "store-kotlin") = createAgent(
        id,
        tools = listOf(defineTool("deploy", "Deploy", requireApproval = true) { _, _ -> ran.incrementAndGet(); JsonPrimitive("deployed") }),
        store = store,
        lease = lease(durationMs = 5_000, renewEveryMs = 1_000),
    )

    private suspend fun pause(agent: Agent): RunResult {
        val paused = agent.run("deploy", scriptedClient(callsResponse(call("c1", "deploy"))))
        assertEquals(RunStatus.WAITING_FOR_HUMAN, paused.status())
        return paused
    }

    private suspend fun continueOnce(store: RunStore) {
        val ran = AtomicInteger()
        val agent = deployAgent(store, ran)
        val paused = pause(agent)
        val stored = store.loadRun(paused.runId())!!
        assertEquals("waiting_for_human", stored.status)
        assertEquals(paused.toJson(), stored.state.toJson())
        assertEquals(listOf("c1"), stored.pending.map { it["call"]!!.jsonObject["id"]!!.jsonPrimitive.content })
        assertNull(store.loadRun(UUID.randomUUID().toString()))

        // 8 concurrent continues of one pause: exactly one proceeds.
        val outcomes = coroutineScope {
            (1..8).map {
                async {
                try {
                    agent.continueRun(runId = paused.runId(), client = scriptedClient(textResponse("done")), approvals = listOf(decision("c1"))).status().name
                } catch (e: AgentException) {
                    "${e.code}: ${e.message}"
                }
                }
            }.awaitAll()
        }
        assertEquals(1, outcomes.count { it == "COMPLETED" }, outcomes.toString())
        val pauseId = json(paused.pauseJson()!!).jsonObject["id"]!!.jsonPrimitive.content
        assertEquals(7, outcomes.count { it == "continue_invalid: Pause $pauseId of run ${paused.runId()} was already continued" }, outcomes.toString())
        assertEquals(1, ran.get())
        assertEquals("completed", store.loadRun(paused.runId())!!.status)
    }

    @Test
    fun `sqlite - round trip and continue by id at most once`() = runBlocking { continueOnce(sqlite()) }

    @Test
    fun `postgres - round trip and continue by id at most once`() = runBlocking { continueOnce(postgresStore(postgresUrl())) }

    private suspend fun inbox(store: RunStore) {
        val agentId = "inbox-${UUID.randomUUID()}"
        val agent = deployAgent(store, AtomicInteger(), agentId)
        val paused = (1..5).map { pause(agent).runId() }.toSet()
        val done = agent.run("hi", scriptedClient(textResponse("hello")))
        val seen = mutableListOf<String>()
        var cursor: String? = null
        var pages = 0
        do {
            val page = store.listRuns(listOf("waiting_for_human"), agentId, limit = 2, cursor = cursor)
            pages++
            assertTrue(page.runs.size <= 2)
            seen += page.runs.map { it.runId }
            cursor = page.nextCursor
        } while (cursor != null)
        assertEquals(3, pages)
        assertEquals(paused, seen.toSet())
        assertEquals(1L, store.pruneOlderThan(listOf("completed"), -60_000))
        assertNull(store.loadRun(done.runId()))
        assertTrue(store.deleteRun(paused.first()))
        assertEquals(4, store.listRuns(listOf("waiting_for_human"), agentId).runs.size)
    }

    @Test
    fun `sqlite - inbox pages, prune and delete`() = runBlocking { inbox(sqlite()) }

    @Test
    fun `postgres - inbox pages, prune and delete`() = runBlocking { inbox(postgresStore(databaseOfItsOwn())) }

    @Test
    fun `recover refuses a run no dead worker holds - an unknown status is a store error`() = runBlocking {
        val store = sqlite()
        val agent = deployAgent(store, AtomicInteger())
        val paused = pause(agent)
        // A waiting run has no dead worker to take over from.
        val refused = assertThrows<AgentException> { runBlocking { agent.recover(paused.runId(), scriptedClient(textResponse("x"))) } }
        assertEquals("continue_invalid", refused.code)
        val bad = assertThrows<AgentException> { runBlocking { store.listRuns(listOf("paused")) } }
        assertEquals("store_failed", bad.code)
    }
}

package app.phaseo.agent.store

import app.phaseo.agent.AgentException
import app.phaseo.agent.RunResult
import app.phaseo.agent.RunStatus
import app.phaseo.agent.RunStore
import app.phaseo.agent.call
import app.phaseo.agent.callsResponse
import app.phaseo.agent.continueRun
import app.phaseo.agent.createAgent
import app.phaseo.agent.decision
import app.phaseo.agent.defineTool
import app.phaseo.agent.lease
import app.phaseo.agent.loadRun
import app.phaseo.agent.postgresStore
import app.phaseo.agent.recover
import app.phaseo.agent.run
import app.phaseo.agent.scriptedClient
import app.phaseo.agent.sqliteStore
import app.phaseo.agent.textResponse
import app.phaseo.agent.parseJson
import java.io.File
import java.nio.file.Files
import java.util.UUID
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.fail
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** Runs [command]; its stdout (it must succeed). */
private fun exec(vararg command: String, env: Map<String, String> = emptyMap()): String {
    val p = ProcessBuilder(*command).redirectErrorStream(true).also { it.environment().putAll(env) }.start()
    val out = p.inputStream.bufferedReader().readText()
    assertEquals(0, p.waitFor(), "${command.joinToString(" ")}: $out")
    return out
}

/** One SQL statement on the SQLite file at [path] (Python's sqlite3); the rows as Python prints them. */
private fun sqlite(path: String, statement: String, vararg args: String): String = exec(
    "python3", "-c",
    "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1])\nrows = c.execute(sys.argv[2], sys.argv[3:]).fetchall()\nc.commit()\nprint(repr(rows))",
    path, statement, *args,
).trim()

private fun psql(url: String, statement: String) = exec("psql", url, "-v", "ON_ERROR_STOP=1", "-q", "-c", statement)

private fun tooNew(version: Long) =
    "Run store failed: the database schema is version 99, newer than this SDK supports ($version); upgrade the SDK"

/** A PostgreSQL cluster of one test alone (scripts/pg-test-server.sh in a folder of its own). */
private class OwnServer : AutoCloseable {
    // Not in a root-only temp folder: as root the server runs as the postgres user.
    private val dir = "/tmp/phaseo-pg-kt-${UUID.randomUUID()}"
    private val script = File("../../scripts/pg-test-server.sh").canonicalPath

    fun script(command: String): String = exec(script, command, env = mapOf("PHASEO_PG_DIR" to dir))

    fun start(): String = script("start").trim().removePrefix("export PHASEO_TEST_POSTGRES_URL=")

    override fun close() {
        script("stop")
    }
}

/**
 * Run stores when the database misbehaves (docs/behaviour.md §10): a PostgreSQL stopped mid-run fails
 * the run with `store_failed` and its result, and the run is recovered after a restart; a
 * corrupted row and a newer schema are clear errors that lose nothing.
 */
class StoreFailuresTest {
    private fun halterLease() = lease(durationMs = 300, renewEveryMs = 50)

    @Test
    fun `a stopped PostgreSQL fails the run with its result - after a restart the run is recovered`() = runBlocking {
        postgresUrl() // this test needs what the shared server needs, and fails the same way without it
        OwnServer().use { server ->
            val store = postgresStore(server.start())
            val halt = defineTool("halt", "Stops the database") { _, _ -> server.script("halt"); JsonPrimitive("halted") }
            val agent = createAgent("halter", tools = listOf(halt), store = store, lease = halterLease())
            val failed = assertThrows<AgentException> {
                runBlocking { agent.run("go", scriptedClient(callsResponse(call("h", "halt")), textResponse("never"))) }
            }
            assertEquals("store_failed", failed.code)
            assertTrue(failed.message!!.startsWith("Run store failed:"), failed.message)
            val result = failed.result ?: fail("the result is attached")
            assertEquals(RunStatus.FAILED, result.status())
            val step = parseJson(result.toJson()).jsonObject["stepResults"]!!.jsonArray[0].jsonObject
            assertEquals("h", step["toolResults"]!!.jsonArray[0].jsonObject["toolCallId"]!!.jsonPrimitive.content)

            server.script("resume")
            Thread.sleep(400) // past the dead worker's lease
            val noop = defineTool("halt", "Stops the database") { _, _ -> JsonPrimitive("halted") }
            val rescuer = createAgent("halter", tools = listOf(noop), store = store, lease = halterLease())
            val done = rescuer.recover(result.runId(), scriptedClient(callsResponse(call("h", "halt")), textResponse("done")))
            assertEquals(RunStatus.COMPLETED, done.status())
            assertEquals("completed", store.loadRun(result.runId())!!.status)
        }
    }

    private fun deployAgent(store: RunStore) = createAgent(
        "store-corrupt",
        tools = listOf(defineTool("deploy", "Deploy", requireApproval = true) { _, _ -> JsonPrimitive("deployed") }),
        store = store,
    )

    private suspend fun pause(store: RunStore): RunResult =
        deployAgent(store).run("deploy", scriptedClient(callsResponse(call("c1", "deploy")))).also {
            assertEquals(RunStatus.WAITING_FOR_HUMAN, it.status())
        }

    private fun freshFile() = Files.createTempDirectory("phaseo-store").resolve("runs.db").toString()

    @Test
    fun `a corrupted state names the run and loses nothing`() = runBlocking {
        val path = freshFile()
        val store = sqliteStore(path)
        val broken = pause(store)
        val intact = pause(store)
        sqlite(path, """UPDATE phaseo_runs SET state = '{"run": 42}' WHERE run_id = ?""", broken.runId())
        val loaded = assertThrows<AgentException> { runBlocking { store.loadRun(broken.runId()) } }
        assertEquals("state_invalid", loaded.code)
        assertTrue(loaded.message!!.startsWith("Stored state of run ${broken.runId()} is invalid:"), loaded.message)
        val continued = assertThrows<AgentException> {
            runBlocking { deployAgent(store).continueRun(broken.runId(), scriptedClient(textResponse("no")), approvals = listOf(decision("c1"))) }
        }
        assertTrue(continued.message!!.contains(broken.runId()), continued.message)
        // The refused continue claimed nothing: the row is as the corruption left it.
        assertEquals(
            """[('waiting_for_human', '{"run": 42}')]""",
            sqlite(path, "SELECT status, state FROM phaseo_runs WHERE run_id = ?", broken.runId()),
        )
        val done = deployAgent(store).continueRun(intact.runId(), scriptedClient(textResponse("ok")), approvals = listOf(decision("c1")))
        assertEquals(RunStatus.COMPLETED, done.status())
    }

    @Test
    fun `a corrupted column is a store error naming the run`() = runBlocking {
        val path = freshFile()
        val store = sqliteStore(path)
        val paused = pause(store)
        sqlite(path, "UPDATE phaseo_runs SET version = 'not a number' WHERE run_id = ?", paused.runId())
        val e = assertThrows<AgentException> { runBlocking { store.loadRun(paused.runId()) } }
        assertEquals("store_failed", e.code)
        assertTrue(e.message!!.startsWith("Run store failed: the row of run ${paused.runId()} cannot be read:"), e.message)
    }

    /** The schema version the SDK writes, read back from a fresh file rather than hard-coded. */
    private fun schemaVersion(): Long {
        val path = freshFile()
        sqliteStore(path)
        return Regex("""\[\((\d+),\)]""").find(sqlite(path, "SELECT version FROM phaseo_schema_version"))!!.groupValues[1].toLong()
    }

    @Test
    fun `a newer SQLite schema is refused and nothing is lost`() = runBlocking {
        val path = freshFile()
        val paused = pause(sqliteStore(path))
        sqlite(path, "UPDATE phaseo_schema_version SET version = 99")
        val e = assertThrows<AgentException> { sqliteStore(path) }
        assertEquals("store_failed", e.code)
        assertEquals(tooNew(schemaVersion()), e.message)
        assertEquals("[(1,)]", sqlite(path, "SELECT COUNT(*) FROM phaseo_runs WHERE run_id = ?", paused.runId()))
    }

    @Test
    fun `a newer PostgreSQL schema is refused`() = runBlocking {
        val shared = postgresUrl()
        val db = "schema_" + UUID.randomUUID().toString().replace("-", "")
        psql(shared, "CREATE DATABASE $db")
        val url = shared.substringBeforeLast('/') + "/" + db
        postgresStore(url)
        psql(url, "UPDATE phaseo_schema_version SET version = 99")
        val e = assertThrows<AgentException> { runBlocking { postgresStore(url) } }
        assertEquals("store_failed", e.code)
        assertEquals(tooNew(schemaVersion()), e.message)
    }
}

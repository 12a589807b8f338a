package app.phaseo.agent.store

import app.phaseo.agent.AgentException
import app.phaseo.agent.createAgent
import app.phaseo.agent.loadRun
import app.phaseo.agent.recover
import app.phaseo.agent.scriptedClient
import app.phaseo.agent.textResponse
import org.junit.jupiter.api.assertThrows
import java.util.concurrent.TimeUnit
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.put
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.ValueSource

/**
 * Durable runs across JVM processes (docs/behaviour.md §10), on SQLite and a real PostgreSQL: a pause
 * continued from another process, 8 processes racing for one pause, a SIGKILLed worker
 * recovered elsewhere with its stored approval, a frozen worker whose lease was taken over.
 */
class StoreProcessesTest {
    private fun done(runId: String) = buildJsonObject {
        put("run_id", runId)
        put("status", "completed")
        put("output", "done")
    }


    @ParameterizedTest
    @ValueSource(strings = ["sqlite", "postgres"])
    fun `a pause is continued from another process`(backend: String) {
        val spec = storeSpec(backend)
        val log = ExecLog()
        val paused = worker(spec, log, "pause")
        assertEquals("waiting_for_human", paused["status"]!!.jsonPrimitive.content, paused.toString())
        val runId = paused["run_id"]!!.jsonPrimitive.content
        assertEquals(done(runId), worker(spec, log, "continue", runId))
        assertEquals(1, log.lines.size)
    }

    @ParameterizedTest
    @ValueSource(strings = ["sqlite", "postgres"])
    fun `8 processes race to continue one pause - exactly one proceeds`(backend: String) = runBlocking {
        val spec = storeSpec(backend)
        val log = ExecLog()
        val runId = worker(spec, log, "pause")["run_id"]!!.jsonPrimitive.content
        val pauseId = openStore(spec).loadRun(runId)!!.pauseId!!
        val answers = (1..8).map { startWorker(spec, log, "continue", runId) }.map(::answer)
        assertEquals(1, answers.count { it == done(runId) }, answers.toString())
        val refused = buildJsonObject {
            put("error", "continue_invalid")
            put("message", "Pause $pauseId of run $runId was already continued")
        }
        assertEquals(7, answers.count { it == refused }, answers.toString())
        assertEquals(1, log.lines.size, "the executor ran once")
        assertEquals("completed", openStore(spec).loadRun(runId)!!.status)
    }

    @ParameterizedTest
    @ValueSource(strings = ["sqlite", "postgres"])
    fun `a worker SIGKILLed after its claim is recovered by another process`(backend: String) = runBlocking {
        val spec = storeSpec(backend)
        val log = ExecLog()
        val runId = worker(spec, log, "pause")["run_id"]!!.jsonPrimitive.content
        val hung = startWorker(spec, log, "continue", runId, "--hang")
        assertEquals(buildJsonObject { put("executing", true) }, firstLine(hung.inputStream.bufferedReader()))
        hung.destroyForcibly() // SIGKILL
        assertTrue(hung.waitFor(30, TimeUnit.SECONDS))
        val store = openStore(spec)
        assertEquals("running", store.loadRun(runId)!!.status)
        // Its lease (1 s) has not expired yet: nobody may take over. (Checked from this JVM:
        // starting another one can take longer than the lease on a busy machine.)
        val early = assertThrows<AgentException> {
            runBlocking { createAgent("store-worker", store = store).recover(runId, scriptedClient(textResponse("done"))) }
        }
        assertEquals("continue_invalid", early.code, early.message)
        assertEquals(1, log.lines.size, "nothing ran again")
        Thread.sleep(1_300)
        // The recovery carries no decision: it runs the call with the approval the claim stored.
        assertEquals(done(runId), worker(spec, log, "recover", runId))
        assertEquals(2, log.lines.size)
        assertEquals("completed", store.loadRun(runId)!!.status)
    }

    @ParameterizedTest
    @ValueSource(strings = ["sqlite", "postgres"])
    fun `a worker whose lease was taken over gets lease_lost`(backend: String) = runBlocking {
        val spec = storeSpec(backend)
        val log = ExecLog()
        val runId = worker(spec, log, "pause")["run_id"]!!.jsonPrimitive.content
        val slow = startWorker(spec, log, "continue", runId, "--slow")
        val out = slow.inputStream.bufferedReader()
        assertEquals(buildJsonObject { put("executing", true) }, firstLine(out))
        // Frozen past its 1 s lease, the worker cannot renew it: another process recovers the run.
        signal(slow, "STOP")
        val recovered = try {
            Thread.sleep(1_300)
            worker(spec, log, "recover", runId)
        } finally {
            signal(slow, "CONT")
        }
        assertEquals(done(runId), recovered)
        val lost = buildJsonObject {
            put("error", "lease_lost")
            put("message", "Run $runId was taken over by another worker (lease lost)")
        }
        assertEquals(lost, answer(slow, out))
        assertEquals("completed", openStore(spec).loadRun(runId)!!.status)
    }
}

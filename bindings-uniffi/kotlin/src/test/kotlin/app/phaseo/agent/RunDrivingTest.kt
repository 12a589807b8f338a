package app.phaseo.agent

import java.util.Collections
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.Job
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/**
 * A Kotlin run is driven by the coroutine that awaits it: the run's work, and the calls it
 * hands that coroutine, happen on the coroutine's thread, and the coroutine suspends (its
 * thread free) while the run waits for a model, a timer or a call that suspended.
 */
class RunDrivingTest {
    private fun iOf(input: JsonElement) = input.jsonObject.getValue("i").jsonPrimitive.int

    /** [turns] one-call turns of tool `t` with `{"i": n}`, then the final text "done". */
    private fun sequentialTurns(turns: Int) =
        (0 until turns).map { callsResponse(call("c$it", "t", """{"i":$it}""")) } + textResponse("done")

    @Test
    fun `a run whose tools never suspend runs on the thread of the coroutine that awaits it`() {
        val threads = Collections.synchronizedSet(mutableSetOf<Thread>())
        val tool = defineTool("t") { input, _ ->
            threads.add(Thread.currentThread())
            JsonPrimitive(iOf(input) + 1)
        }
        val agent = createAgent("a", tools = listOf(tool), maxSteps = 50)

        val result = runBlocking { agent.run("go", scriptedClient(sequentialTurns(20))) }

        assertEquals(RunStatus.COMPLETED, result.status())
        assertEquals(JsonPrimitive("done"), result.output)
        assertEquals(setOf(Thread.currentThread()), threads.toSet())
    }

    @Test
    fun `cancelling the awaiting coroutine ends a run that never waits`() = runBlocking {
        val called = AtomicInteger()
        val job = CompletableDeferred<Job>()
        val tool = defineTool("t") { input, _ ->
            // The third call cancels the coroutine that awaits the run.
            if (called.incrementAndGet() == 3) job.await().cancel()
            JsonPrimitive(iOf(input))
        }
        val agent = createAgent("a", tools = listOf(tool), maxSteps = 600)

        val running = launch { agent.run("go", scriptedClient(sequentialTurns(500))) }
        job.complete(running)
        running.join()

        assertTrue(running.isCancelled)
        assertEquals(3, called.get(), "no call after the one that cancelled")
        assertEquals(0, SuspendingCalls.running())
    }

    @Test
    fun `many runs driven at once end, their tools suspending or not`() = runBlocking {
        val tool = defineTool("t") { input, _ ->
            val i = iOf(input)
            if (i % 2 == 0) delay(1)
            JsonPrimitive(i * 10)
        }
        val agent = createAgent("a", tools = listOf(tool), maxSteps = 10, toolExecution = toolExecution(toolConcurrency = 3))
        val turns = (0 until 5).map { t ->
            callsResponse(*(0 until 3).map { c -> call("c$t-$c", "t", """{"i":${t * 3 + c}}""") }.toTypedArray())
        } + textResponse("done")

        val results = (0 until 64).map {
            async(Dispatchers.Default) { agent.run("go $it", scriptedClient(turns)) }
        }.awaitAll()

        for (result in results) {
            assertEquals(RunStatus.COMPLETED, result.status())
            val answers = result.messages.filter { it.jsonObject["role"]?.jsonPrimitive?.content == "tool" }
                .map { json(it.jsonObject.getValue("content").jsonPrimitive.content) }
            assertEquals((0 until 15).map { JsonPrimitive(it * 10) }, answers)
        }
        assertEquals(0, SuspendingCalls.running())
    }

    @Test
    fun `a run awaited where nothing dispatches goes on off the waker thread`() = runBlocking {
        val threads = Collections.synchronizedList(mutableListOf<String>())
        val tool = defineTool("t") { input, _ ->
            threads.add(Thread.currentThread().name)
            JsonPrimitive(iOf(input))
        }
        val responses = sequentialTurns(5)
        val turn = AtomicInteger()
        // The model suspends: the run waits for it, and the waker thread resumes the run.
        val client = modelClient {
            delay(1)
            responses[turn.getAndIncrement()]
        }
        val agent = createAgent("a", tools = listOf(tool), maxSteps = 10)

        val result = withContext(Dispatchers.Unconfined) { agent.run("go", client) }

        assertEquals(RunStatus.COMPLETED, result.status())
        assertEquals(5, threads.size)
        assertTrue(threads.none { it.startsWith("phaseo-agent-waker") }, threads.toString())
    }

    @Test
    fun `a driven run's status and output are its state's`() = runBlocking {
        val gated = defineTool("gated", requireApproval = true) { _, _ -> JsonPrimitive("ok") }
        val agent = createAgent("a", tools = listOf(gated))
        val long = "x".repeat(5000) // longer than what the run's end reads at once
        val results = listOf(
            agent.run("go", scriptedClient(textResponse("done"))),
            agent.run("go", scriptedClient(textResponse(long))),
            agent.run("go", scriptedClient(callsResponse(call("c1", "gated")))),
        )

        for (result in results) {
            val fromState = RunResult.fromJson(result.toJson())
            assertEquals(fromState.status(), result.status())
            assertEquals(fromState.outputJson(), result.outputJson())
        }
        assertEquals(listOf(RunStatus.COMPLETED, RunStatus.COMPLETED, RunStatus.WAITING_FOR_HUMAN), results.map { it.status() })
        assertEquals(listOf(JsonPrimitive("done"), JsonPrimitive(long), JsonNull), results.map { it.output })
    }

    @OptIn(ExperimentalCoroutinesApi::class)
    @Test
    fun `a run waiting for its model holds no thread`() = runBlocking {
        val n = 16
        val asked = AtomicInteger()
        val allAsked = CompletableDeferred<Unit>()
        // Every model call waits until all n runs have asked theirs: with one thread for all
        // the runs, that ends only if no waiting run keeps the thread.
        val client = modelClient {
            if (asked.incrementAndGet() == n) allAsked.complete(Unit)
            allAsked.await()
            textResponse("done")
        }
        val agent = createAgent("a")
        val oneThread = Dispatchers.Default.limitedParallelism(1)

        val outputs = withTimeout(60_000) {
            withContext(oneThread) {
                (0 until n).map { async { agent.run("go $it", client).output } }.awaitAll()
            }
        }

        assertEquals(List(n) { JsonPrimitive("done") }, outputs)
    }
}

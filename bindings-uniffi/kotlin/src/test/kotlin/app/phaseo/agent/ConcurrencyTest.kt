package app.phaseo.agent

import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.async
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.serialization.json.JsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

class ConcurrencyTest {
    @Test
    fun `500 suspend tools run at once with toolConcurrency 500`() = runBlocking {
        val n = 500
        val started = AtomicInteger()
        val running = AtomicInteger()
        val maxRunning = AtomicInteger()
        val allStarted = CompletableDeferred<Unit>()
        val wait = defineTool("wait") { input, runtime ->
            val now = running.incrementAndGet()
            maxRunning.accumulateAndGet(now) { a, b -> maxOf(a, b) }
            if (started.incrementAndGet() == n) allStarted.complete(Unit)
            // A latch: no call returns before every call has started, so they all overlap.
            withTimeout(20_000) { allStarted.await() }
            running.decrementAndGet()
            JsonPrimitive(runtime.toolCall.id)
        }
        val calls = (1..n).map { call("c$it", "wait") }.toTypedArray()
        val model = RecordingModel(listOf(callsResponse(*calls), textResponse("all done")))
        val agent = createAgent("many", tools = listOf(wait), toolExecution = toolExecution(toolConcurrency = n))
        val result = agent.run("go", model.client)

        assertEquals(RunStatus.COMPLETED, result.status())
        assertEquals(n, maxRunning.get())
        // Results come back in call order whatever the completion order.
        assertEquals((1..n).map { "c$it" }, model.toolMessages(1).map { it.content })
    }

    @Test
    fun `concurrent runs of one agent share nothing`() = runBlocking {
        val echo = defineTool("echo") { input, _ -> input }
        val agent = createAgent("echo", tools = listOf(echo))
        val results = (1..20).map { i ->
            async {
                agent.run("r$i", scriptedClient(callsResponse(call("c1", "echo", """{"i":$i}""")), textResponse("done $i")))
            }
        }.map { it.await() }
        results.forEachIndexed { i, r -> assertEquals(JsonPrimitive("done ${i + 1}"), r.output) }
        assertEquals(20, results.map { it.runId() }.toSet().size)
    }
}

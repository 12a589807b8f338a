package app.phaseo.agent

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicReference
import kotlin.coroutines.cancellation.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.yield
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/**
 * Suspend tool bodies, which run on the threads that take the core's calls: a body that
 * never suspends ends there, one that suspends answers from wherever it resumes.
 */
class SuspendingToolsTest {
    private fun iOf(input: JsonElement) = input.jsonObject.getValue("i").jsonPrimitive.int

    /** A tool whose calls count down [begun], wait a minute, and count down [cancelled] when cancelled. */
    private fun waitingTool(begun: CountDownLatch, cancelled: CountDownLatch) = defineTool("wait") { _, _ ->
        try {
            begun.countDown()
            delay(60_000)
            JsonPrimitive("late")
        } catch (e: CancellationException) {
            cancelled.countDown()
            throw e
        }
    }

    @Test
    fun `bodies that suspend and bodies that do not answer every call of a turn, in call order`() = runBlocking {
        val n = 300
        val mixed = defineTool("mixed") { input, _ ->
            val i = iOf(input)
            when (i % 5) {
                0 -> delay((i % 7).toLong())
                1 -> yield()
                2 -> toolError("refused $i")
                3 -> {
                    delay(1)
                    toolError("late refusal $i")
                }
            }
            JsonPrimitive(i * 2)
        }
        val calls = (0 until n).map { call("c$it", "mixed", """{"i":$it}""") }.toTypedArray()
        val model = RecordingModel(listOf(callsResponse(*calls), textResponse("done")))
        val agent = createAgent(
            "a",
            tools = listOf(mixed),
            toolExecution = toolExecution(toolConcurrency = n, onError = OnError.RETURN_TO_MODEL),
        )

        val result = agent.run("go", model.client)

        assertEquals(RunStatus.COMPLETED, result.status())
        val expected = (0 until n).map {
            when (it % 5) {
                2 -> """{"error":"refused $it"}"""
                3 -> """{"error":"late refusal $it"}"""
                else -> "${it * 2}"
            }
        }
        assertEquals(expected.map(::json), model.toolMessages(1).map { json(it.content) })
    }

    @Test
    fun `a cancellation the body makes itself fails only its call, with its message`() = runBlocking {
        val impatient = defineTool("impatient", onError = OnError.RETURN_TO_MODEL) { _, _ ->
            withTimeout(1) { delay(5_000) }
            JsonPrimitive("never")
        }
        val model = RecordingModel(listOf(callsResponse(call("c1", "impatient")), textResponse("ok")))

        val result = createAgent("a", tools = listOf(impatient)).run("go", model.client)

        assertEquals(RunStatus.COMPLETED, result.status())
        assertEquals(json("""{"error":"Timed out waiting for 1 ms"}"""), json(model.toolMessages(1).single().content))
    }

    @Test
    fun `cancelling the coroutine that awaits a run cancels the tools' coroutines`() = runBlocking {
        val begun = CountDownLatch(3)
        val cancelled = CountDownLatch(3)
        val wait = waitingTool(begun, cancelled)
        val client = scriptedClient(callsResponse(call("c1", "wait"), call("c2", "wait"), call("c3", "wait")))
        val agent = createAgent("a", tools = listOf(wait), toolExecution = toolExecution(toolConcurrency = 3))
        val run = async(Dispatchers.Default) { agent.run("go", client) }
        assertTrue(begun.await(20, TimeUnit.SECONDS), "the tools did not begin")

        run.cancel()

        assertTrue(cancelled.await(20, TimeUnit.SECONDS), "a tool's coroutine was not cancelled")
    }

    @Test
    fun `an error thrown after the body resumed fails the call and nothing else`() = runBlocking {
        val broken = defineTool("broken", onError = OnError.RETURN_TO_MODEL) { _, _ ->
            delay(1)
            throw StackOverflowError("too deep")
        }
        val fine = defineTool("fine") { _, _ -> JsonPrimitive("ok") }
        val model = RecordingModel(
            listOf(callsResponse(call("c1", "broken"), call("c2", "fine")), textResponse("done")),
        )

        val result = createAgent("a", tools = listOf(broken, fine)).run("go", model.client)

        assertEquals(RunStatus.COMPLETED, result.status())
        val (first, second) = model.toolMessages(1)
        assertEquals(json("""{"error":"too deep"}"""), json(first.content))
        assertEquals("ok", second.content)
    }

    @Test
    fun `a body that ignores its cancellation answers late, harmlessly`() = runBlocking {
        val finished = CompletableDeferred<Unit>()
        val stubborn = defineTool("stubborn", timeoutMs = 50, onError = OnError.RETURN_TO_MODEL) { _, _ ->
            withContext(NonCancellable) { delay(300) }
            finished.complete(Unit)
            JsonPrimitive("too late")
        }
        val quick = defineTool("quick") { _, _ -> JsonPrimitive("ok") }
        val agent = createAgent("a", tools = listOf(stubborn, quick))
        val model = RecordingModel(listOf(callsResponse(call("c1", "stubborn")), textResponse("moved on")))

        val result = agent.run("go", model.client)

        assertEquals(RunStatus.COMPLETED, result.status())
        assertEquals(json("""{"error":"Tool stubborn timed out after 50ms"}"""), json(model.toolMessages(1).single().content))
        withTimeout(10_000) { finished.await() }
        // The late answer went nowhere; the tools still answer.
        val again = RecordingModel(listOf(callsResponse(call("c2", "quick")), textResponse("fine")))
        assertEquals(RunStatus.COMPLETED, agent.run("again", again.client).status())
        assertEquals("ok", again.toolMessages(1).single().content)
    }

    @Test
    fun `a body's coroutine has a job of its own, which a timeout cancels with the coroutines the body started`() = runBlocking {
        val childrenCancelled = CountDownLatch(2)
        val active = AtomicInteger()
        val threads = ConcurrentHashMap.newKeySet<String>()
        val parent = defineTool("parent", timeoutMs = 100, onError = OnError.RETURN_TO_MODEL) { _, _ ->
            if (currentCoroutineContext()[Job]?.isActive == true) active.incrementAndGet()
            coroutineScope {
                launch {
                    try {
                        delay(60_000)
                    } catch (e: CancellationException) {
                        childrenCancelled.countDown()
                        throw e
                    }
                }
                yield()
                threads.add(Thread.currentThread().name)
            }
            JsonPrimitive("never")
        }
        val model = RecordingModel(
            listOf(callsResponse(call("c1", "parent"), call("c2", "parent")), textResponse("done")),
        )
        val agent = createAgent("a", tools = listOf(parent), toolExecution = toolExecution(toolConcurrency = 2))

        val result = agent.run("go", model.client)

        assertEquals(RunStatus.COMPLETED, result.status())
        assertEquals(2, active.get())
        assertTrue(childrenCancelled.await(20, TimeUnit.SECONDS), "a coroutine the body started was not cancelled")
        // After its first suspension a body resumes on Dispatchers.Default.
        assertTrue(threads.all { it.startsWith("DefaultDispatcher-worker") }, threads.toString())
        val timedOut = json("""{"error":"Tool parent timed out after 100ms"}""")
        assertEquals(listOf(timedOut, timedOut), model.toolMessages(1).map { json(it.content) })
    }

    /** A Java API agent whose only tool is [tool] (a Kotlin one): its runs are driven by their callers. */
    private fun javaAgent(tool: Tool) = AgentSdk.createAgent(
        AgentSdk.AgentDefinition(
            "java", null, null, "java",
            listOf(AgentSdk.Tool(tool.id(), AgentSdk.NestedAgentExecutor(tool), null, null, null)),
            5, null, null, null, null,
        ),
    )

    private fun javaClient(toolId: String) = AgentSdk.scriptedClient(
        listOf(
            mapOf("toolCalls" to listOf(mapOf("id" to "c1", "name" to toolId, "arguments" to """{"i":21}"""))),
            mapOf("text" to "done"),
        ),
    )

    @Test
    fun `a run driven by its caller runs a suspend body that suspends`() {
        val ranOn = AtomicReference<Thread>()
        val double = defineTool("double") { input, _ ->
            ranOn.set(Thread.currentThread())
            delay(20)
            JsonPrimitive(iOf(input) * 2)
        }

        val result = javaAgent(double).run(AgentSdk.RunOptions("go", javaClient("double")))

        assertEquals("completed", result.status())
        val toolMessage = result.messages().single { it["role"] == "tool" }
        assertEquals("42", toolMessage["content"])
        // The caller drives the run and runs its turn's only call (until it ends).
        assertEquals(Thread.currentThread(), ranOn.get())
    }

    @Test
    fun `interrupting the caller of a driven run cancels a suspended body`() {
        val begun = CountDownLatch(1)
        val cancelled = CountDownLatch(1)
        val wait = waitingTool(begun, cancelled)
        val agent = javaAgent(wait)
        val outcome = AtomicReference<Any?>()
        val stillInterrupted = AtomicBoolean()
        val caller = Thread {
            outcome.set(runCatching { agent.run(AgentSdk.RunOptions("go", javaClient("wait"))) }.exceptionOrNull())
            stillInterrupted.set(Thread.currentThread().isInterrupted)
        }
        caller.start()
        assertTrue(begun.await(20, TimeUnit.SECONDS), "the tool did not begin")

        caller.interrupt()

        caller.join(20_000)
        assertFalse(caller.isAlive, "the interrupted run did not return")
        assertTrue(cancelled.await(20, TimeUnit.SECONDS), "the body's coroutine was not cancelled")
        assertEquals("cancelled", (outcome.get() as AgentSdk.AgentException).code())
        assertTrue(stillInterrupted.get(), "the caller's interrupt status was lost")
    }

    @Test
    fun `many runs of quick and suspending bodies leave nothing behind`() = runBlocking {
        val both = defineTool("both") { input, _ ->
            if (iOf(input) % 2 == 0) delay(1)
            input
        }
        val agent = createAgent("a", tools = listOf(both), toolExecution = toolExecution(toolConcurrency = 50))
        repeat(40) {
            val calls = (0 until 50).map { call("c$it", "both", """{"i":$it}""") }.toTypedArray()
            val result = agent.run("go", scriptedClient(callsResponse(*calls), textResponse("ok")))
            assertEquals(RunStatus.COMPLETED, result.status())
        }
        assertEquals(0, SuspendingCalls.running(), "calls still registered after their runs ended")
    }

    @Test
    fun `cancellations that come as calls end leave no mark behind`() = runBlocking {
        // Deadlines about as long as the bodies: many cancellations reach calls that are
        // just ending, or that ended.
        val racy = defineTool("racy", timeoutMs = 2, onError = OnError.RETURN_TO_MODEL) { input, _ ->
            delay((iOf(input) % 3).toLong())
            input
        }
        val agent = createAgent("a", tools = listOf(racy), toolExecution = toolExecution(toolConcurrency = 50))
        repeat(30) {
            val calls = (0 until 50).map { call("c$it", "racy", """{"i":$it}""") }.toTypedArray()
            assertEquals(RunStatus.COMPLETED, agent.run("go", scriptedClient(callsResponse(*calls), textResponse("ok"))).status())
        }
        // The control thread handles a cancellation shortly after the call's timeout.
        val deadline = System.nanoTime() + 10_000_000_000
        while (SuspendingCalls.running() != 0 && System.nanoTime() < deadline) delay(10)
        assertEquals(0, SuspendingCalls.running(), "cancellation marks left behind")
    }
}

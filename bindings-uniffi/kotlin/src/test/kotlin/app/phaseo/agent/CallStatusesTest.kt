package app.phaseo.agent

import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotSame
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertSame
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** The call statuses each thread reuses for its calls through the generated bindings. */
class CallStatusesTest {
    @Test
    fun `a failed call leaves no error behind for the next call on the same thread`() = runBlocking {
        val done = createAgent("a").run("hi", scriptedClient(textResponse("hello")))
        val state = done.toJson()
        repeat(3) {
            val failed = assertThrows<AgentException> { parseState("""{"version":1}""") }
            assertEquals("state_invalid", failed.code)
            // The status the failed call used comes back to this thread with its error set;
            // the next calls must read success from it.
            assertEquals(RunStatus.COMPLETED, parseState(state).status())
            assertEquals("hello", parseState(state).outputText())
        }
        // A failed run's error carries its state, read by a call made while the failed
        // call's status is still in use (a nested call takes a status of its own).
        val failedRun = assertThrows<AgentException> { runBlocking { createAgent("a").run("hi", scriptedClient()) } }
        assertEquals("model_failed", failedRun.code)
        assertEquals(RunStatus.FAILED, failedRun.result!!.status())
        assertEquals(RunStatus.COMPLETED, parseState(state).status())
    }

    @Test
    fun `a thread hands its statuses out again, cleared, and one per nested call`() {
        val outer = CallStatuses.take()
        val nested = CallStatuses.take()
        assertNotSame(outer, nested)
        nested.code = UNIFFI_CALL_ERROR
        nested.error_buf.len = 5
        CallStatuses.give(nested)
        CallStatuses.give(outer)
        val again = CallStatuses.take()
        assertSame(outer, again)
        val reused = CallStatuses.take()
        assertSame(nested, reused)
        assertEquals(UNIFFI_CALL_SUCCESS, reused.code)
        assertEquals(0L, reused.error_buf.len)
        assertEquals(0L, reused.error_buf.capacity)
        assertNull(reused.error_buf.data)
        CallStatuses.give(reused)
        CallStatuses.give(again)
        var other: UniffiRustCallStatus? = null
        Thread { other = CallStatuses.take() }.apply { start(); join() }
        assertNotSame(outer, other)
        assertNotSame(nested, other)
    }
}

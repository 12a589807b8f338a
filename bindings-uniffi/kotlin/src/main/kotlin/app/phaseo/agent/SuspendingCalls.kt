// Kotlin's own tool bodies (suspend functions) on the threads of JvmDispatch: the thread
// that takes a call starts the body's coroutine right there, undispatched, so a body that
// never suspends (most of them) runs to its end on that thread and is answered like a
// blocking body, with no callback, dispatch or thread hop; a body that suspends frees the
// thread and resumes on Dispatchers.Default, and its coroutine answers the call itself.
package app.phaseo.agent

import java.util.concurrent.ConcurrentHashMap
import kotlin.coroutines.Continuation
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.intrinsics.COROUTINE_SUSPENDED
import kotlin.coroutines.intrinsics.startCoroutineUninterceptedOrReturn
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.job
import kotlinx.coroutines.runBlocking

/**
 * The coroutines of the suspend tool bodies running now, by call, so that a cancelled call
 * (a timeout, a cancelled run: docs/behaviour.md §2.5) cancels its coroutine, as the Kotlin
 * API promises (see [ToolContext]).
 */
internal object SuspendingCalls {
    /** Put for a call cancelled before its coroutine began: it must not begin. */
    private val CANCELLED = Any()

    private val calls = ConcurrentHashMap<Long, Any>()

    /** What a call cancelled before it began answers (the core no longer waits for it). */
    private fun cancelledBeforeItBegan(): Result<String> =
        Result.failure(ToolException.Failed("the call was cancelled before it began"))

    /**
     * Starts [block] as call [call] on this thread. When it ends before it first suspends,
     * its outcome is returned; otherwise null is, and [complete] gets the outcome on the
     * thread the coroutine ends on. Exactly one of the two carries it.
     *
     * The body starts as a bare coroutine whose completion is the call's end ([CallEnd]),
     * in a context of a job of its own (the call's cancellation cancels it) and
     * [Dispatchers.Default] (where it resumes after it suspends); in no scope of the host's,
     * as the coroutine belongs to the core's call. A body that never suspends returns its
     * value right here, with no coroutine object, launch or hand-off made around it.
     */
    fun launch(call: Long, block: suspend () -> String, complete: (Result<String>) -> Unit): Result<String>? {
        val end = CallEnd(call, complete)
        if (!begin(call, end.job)) return cancelledBeforeItBegan()
        val outcome = try {
            block.startCoroutineUninterceptedOrReturn(end)
        } catch (e: Throwable) {
            end.finish()
            return Result.failure(e)
        }
        if (outcome === COROUTINE_SUSPENDED) return null
        end.finish()
        return Result.success(outcome as String)
    }

    /** The end of a suspend body's coroutine: where it resumes with its outcome after it suspended. */
    private class CallEnd(private val call: Long, private val complete: (Result<String>) -> Unit) : Continuation<String> {
        val job = Job()
        override val context: CoroutineContext = job + Dispatchers.Default

        /** The call's coroutine is over: it leaves the table of running calls, its job completes. */
        fun finish() {
            calls.remove(call)
            job.complete()
        }

        override fun resumeWith(result: Result<String>) {
            finish()
            complete(result)
        }
    }

    /**
     * Runs [block] as call [call] on this thread until it ends (the thread that drives a
     * run of the Java API: the call is the run's only one, and the run waits for it anyway).
     * Interrupting the thread cancels the coroutine and throws [InterruptedException].
     */
    fun runHere(call: Long, block: suspend () -> String): String = runBlocking {
        if (!begin(call, coroutineContext.job)) throw ToolException.Failed("the call was cancelled before it began")
        try {
            block()
        } catch (e: InterruptedException) {
            // The body's own: only runBlocking's (the thread was interrupted) leaves here.
            throw ToolException.Failed(describe(e))
        } finally {
            calls.remove(call)
        }
    }

    /** Registers the coroutine [job] of call [call]; false when the call was cancelled first. */
    private fun begin(call: Long, job: Job): Boolean {
        if (calls.putIfAbsent(call, job) == null) return true
        calls.remove(call)
        return false
    }

    /** Drops the mark of call [call], cancelled before it began, which has completed. */
    fun forget(call: Long) {
        // No entry, no mark: nothing to look up (nor a boxed key to make).
        if (calls.isEmpty()) return
        calls.remove(call, CANCELLED)
    }

    /** How many calls are registered: running, or cancelled before their coroutine began. */
    fun running(): Int = calls.size

    /** Call [call] was cancelled: its coroutine is cancelled, or must not begin. */
    fun cancel(call: Long) {
        (calls.putIfAbsent(call, CANCELLED) as? Job)?.cancel()
    }
}

// How native threads enter the JVM, and which thread runs which blocking tool call.
// Every call from the native library into Kotlin (a coroutine tool, a hook, a finished
// native future) arrives on a thread of the library (the core's runtime, its blocking
// pool). JNA attaches such a thread to the JVM for the call
// and, by default, detaches it afterwards: every callback then created a new
// java.lang.Thread (two per tool call: the call and its future's release), which cost more
// than the call itself. Kept attached, a thread pays that once.
package app.phaseo.agent

import com.sun.jna.Callback
import com.sun.jna.CallbackThreadInitializer
import com.sun.jna.Native
import com.sun.jna.Structure
import java.util.concurrent.CancellationException
import java.util.concurrent.ConcurrentHashMap

/**
 * The JVM's view of the library's threads: daemon threads (they never end while the library
 * runs, so they must not keep the JVM alive), attached on their first callback and kept
 * attached (JNA detaches a thread when it ends).
 */
private val NATIVE_THREADS = CallbackThreadInitializer(true, false, "phaseo-agent-native")

/**
 * Keeps the threads that call [callbacks] attached. JNA reads the setting when it first
 * hands out a callback's native pointer, so the generated bindings call this before they
 * register anything (`bindings-uniffi/scripts/generate.sh` inserts the calls).
 */
internal fun keepCallbackThreadsAttached(vararg callbacks: Callback) {
    for (callback in callbacks) Native.setCallbackThreadInitializer(callback, NATIVE_THREADS)
}

/** [keepCallbackThreadsAttached] for every callback of a generated vtable (a JNA structure). */
internal fun keepCallbackThreadsAttached(vtable: Structure) {
    var type: Class<*>? = vtable.javaClass
    while (type != null && type != Structure::class.java) {
        for (field in type.declaredFields) {
            if (!Callback::class.java.isAssignableFrom(field.type)) continue
            field.isAccessible = true
            (field.get(vtable) as Callback?)?.let { keepCallbackThreadsAttached(it) }
        }
        type = type.superclass
    }
}

/**
 * The blocking tool bodies running on [JvmDispatch]'s threads: which thread runs which
 * call, so that a cancelled call's thread is interrupted (the behaviour of the Java API: a
 * timeout or a cancelled run interrupts a blocking tool) and no interrupt meant for one
 * call reaches the next call on the same thread.
 */
internal object BlockingCalls {
    /** One running call; [done] and [interrupted] are read and written under its lock. */
    private class Running(val thread: Thread) {
        var done = false
        var interrupted = false
    }

    /**
     * Thrown by [run] for a call run by the thread that drives its run ([onCaller]) when the
     * call ended with an [InterruptedException] that no cancellation caused: the run's
     * caller interrupted its own thread, which cancels the run.
     */
    class CallerInterrupted(cause: InterruptedException) : CancellationException(cause.message ?: "interrupted") {
        init {
            initCause(cause)
        }
    }

    /**
     * Whether [e] was thrown by a blocking method of the JDK, which throws it only when the
     * thread was interrupted; one that the block made itself is the block's own failure.
     */
    private fun thrownByTheJdk(e: InterruptedException): Boolean {
        val top = e.stackTrace.firstOrNull()?.className ?: return false
        return top.startsWith("java.") || top.startsWith("jdk.") || top.startsWith("sun.")
    }

    /** Put for a call cancelled before it began here: it must not begin. */
    private val CANCELLED = Any()

    private val calls = ConcurrentHashMap<Long, Any>()

    /**
     * Runs [block] as call [call] on this thread, unless the call was cancelled first. An
     * [InterruptedException] the block throws while nothing cancelled the call is the
     * block's own failure (its message, as any exception's), except on the thread that
     * drives the call's run ([onCaller]), where one thrown by the JDK is [CallerInterrupted]
     * (the run's caller interrupted its thread); after a
     * cancellation the outcome is dropped by the core.
     */
    fun <T> run(call: Long, onCaller: Boolean = false, block: () -> T): T {
        val me = Running(Thread.currentThread())
        if (calls.putIfAbsent(call, me) != null) {
            calls.remove(call)
            throw ToolException.Failed("the call was cancelled before it began")
        }
        try {
            return block()
        } catch (e: InterruptedException) {
            if (onCaller && !synchronized(me) { me.interrupted } && thrownByTheJdk(e)) throw CallerInterrupted(e)
            throw e
        } finally {
            val interrupted = synchronized(me) {
                me.done = true
                me.interrupted
            }
            calls.remove(call)
            // The interrupt was for this call only: the thread goes on to other calls.
            if (interrupted) Thread.interrupted()
        }
    }

    /** Drops the mark of call [call], cancelled before it began, which has completed. */
    fun forget(call: Long) {
        // No entry, no mark: nothing to look up (nor a boxed key to make).
        if (calls.isEmpty()) return
        calls.remove(call, CANCELLED)
    }

    /**
     * Call [call] was cancelled while it ran: it must not begin here if it has not yet,
     * and its thread is interrupted if [interruptThread] and the call has not returned.
     */
    fun cancel(call: Long, interruptThread: Boolean) {
        val running = calls.putIfAbsent(call, CANCELLED) as? Running ?: return
        if (!interruptThread) return
        synchronized(running) {
            if (!running.done) {
                running.interrupted = true
                running.thread.interrupt()
            }
        }
    }
}

// The tool bodies of the Java API (blocking functions) and of the Kotlin API (suspend
// functions, see SuspendingCalls.kt) run by threads of this JVM that take the core's calls
// themselves, through three C functions JNA maps directly
// (bindings-uniffi/src/jvm_dispatch.rs): no JNA callback, no dispatcher and no thread hop per
// call. A JNA callback builds a reflective proxy call and a structure per argument and costs
// tens of microseconds; a directly mapped call costs well under one.
package app.phaseo.agent

import com.sun.jna.Native
import com.sun.jna.Pointer
import java.lang.ref.Cleaner
import java.util.concurrent.CancellationException
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater
import java.util.concurrent.atomic.AtomicLong
import kotlin.coroutines.ContinuationInterceptor
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.DelicateCoroutinesApi
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.GlobalScope
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import kotlinx.serialization.json.JsonElement

/**
 * Registers tool bodies and runs their calls. The core decides when a thread
 * starts (one thread per call at most while calls block, see jvm_dispatch.rs); threads idle
 * for [KEEP_ALIVE_MS] end. All threads are daemons: the JVM may exit while they wait.
 */
internal object JvmDispatch {
    /** How long a thread with no call waits before it ends. */
    private const val KEEP_ALIVE_MS = 60_000L

    /** The output a driven run's head carries (a longer one is read from the result). */
    private const val HEAD_BYTES = 1024

    /** A registered body. */
    private sealed interface Body

    /** A blocking body, and whether a cancelled call's thread is interrupted. */
    private class Blocking(val run: BlockingToolFunction, val interruptible: Boolean) : Body

    /** A suspend body: a cancelled call's coroutine is cancelled. */
    private class Suspending(val run: ToolFunction) : Body

    private val bodies = ConcurrentHashMap<Long, Body>()

    /** The wake-ups of the runs that coroutines drive, by run key ([driveSuspending]). */
    private val wakeUps = ConcurrentHashMap<Long, Channel<Unit>>()

    /** The thread that resumes the coroutines whose runs were woken; started on first use. */
    private val waker: Thread by lazy { daemon("phaseo-agent-waker") { wake() } }
    private val keys = AtomicLong(1)
    private val threadNumbers = AtomicLong(1)

    /** Releases the runtime handles never made into objects. */
    private val RELEASER: Cleaner = Cleaner.create()

    @JvmStatic private external fun phaseo_jvm_next(keepAliveMs: Long, out: LongArray): Int

    @JvmStatic private external fun phaseo_jvm_complete(call: Long, status: Int, text: ByteArray, len: Long)

    @JvmStatic private external fun phaseo_jvm_control(out: LongArray): Int

    @JvmStatic private external fun phaseo_jvm_taken(call: Long): Int

    @JvmStatic private external fun phaseo_jvm_thread_failed()

    @JvmStatic private external fun phaseo_jvm_release_runtime(handle: Long)

    @JvmStatic private external fun phaseo_jvm_drive(key: Long, out: LongArray): Int

    @JvmStatic private external fun phaseo_jvm_drive_end(key: Long)

    @JvmStatic private external fun phaseo_jvm_complete_and_drive(key: Long, call: Long, status: Int, text: ByteArray, len: Long, out: LongArray): Int

    @JvmStatic private external fun phaseo_jvm_driven_head(key: Long, buf: ByteArray, cap: Long, outLen: LongArray): Int

    @JvmStatic private external fun phaseo_jvm_step(key: Long, out: LongArray): Int

    @JvmStatic private external fun phaseo_jvm_complete_and_step(key: Long, call: Long, status: Int, text: ByteArray, len: Long, out: LongArray): Int

    @JvmStatic private external fun phaseo_jvm_call_left(call: Long)

    @JvmStatic private external fun phaseo_jvm_woken(out: LongArray, cap: Long): Int

    init {
        // The library the generated bindings load, under the same name (and the same
        // override property); UniffiLib first: it checks the library's contract.
        UniffiLib.hashCode()
        val library = System.getProperty("uniffi.component.phaseo_agent_uniffi.libraryOverride") ?: "phaseo_agent_uniffi"
        // The same registration form as the generated bindings' (name plus this class's
        // loader): JNA then hands back the library instance they loaded. Another form would
        // be another instance, which from a JAR is another extracted copy of the library,
        // with its own call queue that nothing fills.
        Native.register(JvmDispatch::class.java, library)
        warmUp()
        daemon("phaseo-agent-control") { control() }
    }

    /**
     * Loads and initializes, once, the classes every call's values pass through (the JSON
     * parser and writer, the Java API's plain values). Left to the first calls, a turn of
     * many calls in a fresh JVM has them wait for one another, one class at a time, and
     * look blocked to the pool's supervisor (bindings-uniffi/src/jvm_dispatch.rs).
     */
    private fun warmUp() {
        try {
            parseJson(toJsonElement(javaValue(parseJson(WARM_UP_JSON))).toString())
            BlockingCalls.hashCode()
        } catch (_: Throwable) {
            // Only a head start: the calls load what they need anyway.
        }
    }

    /** A value of every JSON kind, as [warmUp] reads and writes it. */
    private const val WARM_UP_JSON =
        """{"s":"text","i":1,"l":12345678901,"d":0.5,"e":1e300,"t":true,"n":null,"a":[1,"x",[]],"o":{"k":{}}}"""

    /** Registers [body]; the key goes into the tool's definition (`blockingTool`). */
    fun register(body: BlockingToolFunction, interruptible: Boolean): Long = register(Blocking(body, interruptible))

    /** Registers the suspend [body]; the key goes into the tool's definition (`blockingTool`). */
    fun registerSuspending(body: ToolFunction): Long = register(Suspending(body))

    private fun register(body: Body): Long {
        val key = keys.getAndIncrement()
        bodies[key] = body
        return key
    }

    /** Drops a body whose tool was never made (its definition was refused). */
    fun unregister(key: Long) {
        bodies.remove(key)
    }

    private fun daemon(name: String, body: () -> Unit): Thread =
        Thread(null, body, name).apply {
            isDaemon = true
            start()
        }

    /** The control thread: starts threads, interrupts cancelled calls, drops released bodies. */
    private fun control() {
        val out = LongArray(2)
        while (true) {
            when (phaseo_jvm_control(out)) {
                1 -> repeat(out[0].toInt()) {
                    try {
                        daemon("phaseo-agent-tool-${threadNumbers.getAndIncrement()}") { work() }
                    } catch (_: Throwable) {
                        phaseo_jvm_thread_failed()
                    }
                }
                2 -> cancel(out[0], bodies[out[1]])
                3 -> bodies.remove(out[0])
            }
        }
    }

    /**
     * Cancels call [call] of [body] (null: released): its coroutine is cancelled, or its
     * thread interrupted; one that has not begun here is marked, and does not begin.
     */
    private fun cancel(call: Long, body: Body?) {
        when (body) {
            is Suspending -> SuspendingCalls.cancel(call)
            else -> BlockingCalls.cancel(call, (body as Blocking?)?.interruptible ?: true)
        }
        // Completed before the cancellation came here: the mark (if one was made) goes, as
        // no call will begin and take it (see `complete`, which removes it otherwise).
        if (phaseo_jvm_taken(call) == 0) forget(call)
    }

    /** Drops a cancellation mark of call [call], which has completed. */
    private fun forget(call: Long) {
        SuspendingCalls.forget(call)
        BlockingCalls.forget(call)
    }

    /** A thread that takes calls until none came for [KEEP_ALIVE_MS]. */
    private fun work() {
        val out = LongArray(5)
        while (phaseo_jvm_next(KEEP_ALIVE_MS, out) == 1) {
            val call = out[0]
            // None yet: the call's coroutine suspended, and answers when it ends.
            val answer = answer(out) ?: continue
            complete(call, answer)
        }
    }

    /**
     * Drives the run [key] (started by `runDriven`, `continueDriven`… of the native agent)
     * on this thread until it ends, and returns its result: the run is polled here, and a
     * turn's only call is run here too (bindings-uniffi/src/jvm_drive.rs). A failed run
     * throws its [PhaseoException]; interrupting this thread cancels the run and throws
     * [InterruptedException] (the thread's interrupt status is cleared, as by any method
     * that throws it).
     */
    fun drive(key: ULong): Driven {
        val k = key.toLong()
        val out = LongArray(5)
        try {
            var next = 2 // what phaseo_jvm_drive said: 0 ended, 1 a call in `out`, 2 drive on
            while (next != 0) {
                if (Thread.interrupted()) throw InterruptedException("the thread driving the run was interrupted")
                next = if (next == 1) {
                    val call = out[0]
                    // Never null here: a driver runs a suspend body to its end (runHere).
                    val answer = answer(out, driving = k)!!
                    if (Thread.currentThread().isInterrupted) {
                        // Answered, but the run is not driven on: the loop cancels it.
                        complete(call, answer)
                        2
                    } else {
                        phaseo_jvm_complete_and_drive(k, call, answer.status, answer.text, answer.text.size.toLong(), out)
                            .also { forget(call) }
                    }
                } else {
                    phaseo_jvm_drive(k, out)
                }
            }
        } catch (e: Throwable) {
            // An interrupt, or an error of the JVM's own (a tool's failure is its answer):
            // the run is dropped, which cancels it and its calls.
            phaseo_jvm_drive_end(key.toLong())
            throw e
        }
        val head = head(key.toLong())
        return Driven(drivenResult(key), head?.first, head?.second)
    }

    /**
     * Drives the run [key] (started by `runDriven`, `continueDriven`… of the native agent) in
     * this coroutine until it ends, and returns its result: as [drive] does on a thread, but
     * where a thread would park while the run waits, the coroutine suspends until the waker
     * thread resumes it (bindings-uniffi/src/jvm_drive.rs). A suspend body of a call the run
     * hands to the driver starts here and runs until it first suspends (it then answers from
     * where it resumes, and the driver drives on); a blocking body runs on a thread of its
     * own ([runElsewhere]). Cancelling the coroutine cancels the run.
     */
    suspend fun driveSuspending(key: ULong): RunResult {
        val k = key.toLong()
        val out = LongArray(5)
        val woken = Channel<Unit>(Channel.CONFLATED)
        val context = currentCoroutineContext()
        val resumesWhereWoken = (context[ContinuationInterceptor] as? CoroutineDispatcher)?.isDispatchNeeded(context) != true
        wakeUps[k] = woken
        waker.hashCode()
        try {
            var next = phaseo_jvm_step(k, out) // 0 ended, 1 a call in `out`, 3 wait
            while (next != 0) {
                // A run that never waits is still cancelled with its coroutine.
                context.ensureActive()
                next = if (next == 1) {
                    val call = out[0]
                    val answer = if (bodies[out[1]] is Blocking) runElsewhere(out) else answer(out)
                    if (answer == null) {
                        // The body suspended: it answers when it ends, the run goes on.
                        phaseo_jvm_call_left(call)
                        phaseo_jvm_step(k, out)
                    } else {
                        phaseo_jvm_complete_and_step(k, call, answer.status, answer.text, answer.text.size.toLong(), out)
                            .also { forget(call) }
                    }
                } else {
                    // The waker thread only hands the wake-up over: a coroutine with no
                    // dispatcher of its own (Unconfined, a `suspend fun main`) would go on
                    // on that thread, and run the run there, so it waits on another.
                    if (resumesWhereWoken) withContext(Dispatchers.Default) { woken.receive() } else woken.receive()
                    phaseo_jvm_step(k, out)
                }
            }
        } catch (e: Throwable) {
            // Cancelled, or an error of the JVM's own (a tool's failure is its answer): the
            // run is dropped, which cancels it and its calls.
            phaseo_jvm_drive_end(k)
            throw e
        } finally {
            wakeUps.remove(k)
        }
        // Its status and output, read now in one direct call, spare the caller two calls
        // through the generated bindings (`generate.sh` has the result answer from them).
        val head = head(k)
        return drivenResult(key).also { it.head = head }
    }

    /**
     * Runs the blocking body of the call handed over in [out] on a thread of
     * `Dispatchers.IO`, which answers the call: a body that blocks for ever then holds that
     * thread only, and the run (its timeout, its cancellation, its end) does not wait for it.
     * Returns null, as [answer] does for a body that suspended; or the answer when the body
     * could not be started.
     */
    @OptIn(DelicateCoroutinesApi::class)
    private fun runElsewhere(out: LongArray): Answer? {
        val call = out[0]
        val handed = out.copyOf()
        return runCatching {
            GlobalScope.launch(Dispatchers.IO) { answer(handed)?.let { complete(call, it) } }
            null
        }.getOrElse { e -> answerOf { throw e } }
    }

    /** The waker thread: resumes the coroutines whose runs were woken. */
    private fun wake() {
        val keys = LongArray(64)
        while (true) {
            val n = phaseo_jvm_woken(keys, keys.size.toLong())
            for (i in 0 until n) wakeUps[keys[i]]?.trySend(Unit)
        }
    }

    /**
     * A driven run's result, with its status and its output's JSON when [head] read them
     * (they are then answered without a call through the generated bindings).
     */
    class Driven(val result: RunResult, val status: RunStatus?, val outputJson: String?)

    /** The status and output JSON of the ended run [key] (`phaseo_jvm_driven_head`). */
    private fun head(key: Long): Pair<RunStatus, String?>? {
        val buf = ByteArray(HEAD_BYTES)
        val len = LongArray(1)
        val status = phaseo_jvm_driven_head(key, buf, buf.size.toLong(), len)
        if (status < 0 || status >= RunStatus.entries.size) return null
        val output = if (len[0] <= buf.size) String(buf, 0, len[0].toInt(), Charsets.UTF_8) else null
        return RunStatus.entries[status] to output
    }

    /** A call's answer: its status for `phaseo_jvm_complete` and its text in UTF-8. */
    private class Answer(val status: Int, val text: ByteArray)

    /** Answers call [call], then drops a cancellation mark that came too late for it. */
    private fun complete(call: Long, answer: Answer) {
        phaseo_jvm_complete(call, answer.status, answer.text, answer.text.size.toLong())
        forget(call)
    }

    /**
     * Runs the call handed over in [out] and returns its answer, or null when the call's
     * coroutine suspended (it completes the call when it ends). [driving]: the key of the run
     * this thread drives (0: a thread of the SDK), whose caller's interrupt cancels that run.
     */
    private fun answer(out: LongArray, driving: Long = 0): Answer? {
        val call = out[0]
        // First: from here on the handle is this side's to lift or release.
        val context = context(out[4])
        val body = bodies[out[1]]
        // Whatever fails from here on (the JVM out of memory included) is the call's answer:
        // a call left unanswered would hold its run until a timeout, or for ever.
        val input = runCatching { String(Pointer(out[2]).getByteArray(0, out[3].toInt()), Charsets.UTF_8) }
            .getOrElse { e -> return answerOf { throw e } }
        if (body is Suspending && driving == 0L) {
            val block: suspend () -> String = { hostCall { body.run(parseJson(input), context).toString() } }
            val outcome = runCatching { SuspendingCalls.launch(call, block) { complete(call, answerOf { it.getOrThrow() }) } }
                .getOrElse { e -> return answerOf { throw e } }
            return outcome?.let { answerOf { it.getOrThrow() } }
        }
        var callerInterrupted = false
        val answer = answerOf {
            try {
                when (body) {
                    null -> throw ToolException.Failed("the tool's body was released")
                    is Blocking -> run(call, body, input, context, driving != 0L)
                    is Suspending -> try {
                        SuspendingCalls.runHere(call) { hostCall { body.run(parseJson(input), context).toString() } }
                    } catch (e: InterruptedException) {
                        throw BlockingCalls.CallerInterrupted(e)
                    }
                }
            } catch (e: BlockingCalls.CallerInterrupted) {
                callerInterrupted = true
                throw e
            }
        }
        if (callerInterrupted) {
            // The caller of the run interrupted its thread while the call ran there: the run
            // is cancelled (dropped before the call's answer could reach it), and the thread
            // keeps its interrupt status for `drive` to see.
            phaseo_jvm_drive_end(driving)
            Thread.currentThread().interrupt()
        }
        return answer
    }

    /**
     * The answer of [block] (the body's result as JSON text): a [ToolException] is the
     * call's failure or invalid value, anything else thrown a failure with its message.
     */
    private inline fun answerOf(block: () -> String): Answer {
        var status = 1
        val text = try {
            block()
        } catch (e: ToolException.InvalidValue) {
            status = 2
            e.reason
        } catch (e: ToolException.Failed) {
            status = 0
            e.reason
        } catch (e: Throwable) {
            status = 0
            describe(e)
        }
        // Lone surrogates become U+FFFD, as in every string the bindings send.
        if (isWellFormed(text)) return Answer(status, text.toByteArray(Charsets.UTF_8))
        val bytes = FfiConverterString.toUtf8(text)
        return Answer(status, ByteArray(bytes.remaining()).also { bytes.get(it) })
    }

    /**
     * The context of a call whose runtime handle is [handle]. Most bodies never look at their
     * context, and a `ToolRuntime` object per call cost more than the call: its release
     * through the generated bindings builds a JNA structure (the call status), on the
     * cleaner's thread. So the object is made on first use only; a handle never made into one
     * is dropped by a directly mapped call once the context is unreachable (the body may keep
     * it past the call).
     */
    private fun context(handle: Long): ToolContext {
        val runtime = RuntimeHandle(handle)
        return ToolContext(runtime).also { RELEASER.register(it, runtime) }
    }

    /** A call's runtime handle: made into a `ToolRuntime` on first use, else released. */
    private class RuntimeHandle(private val handle: Long) : Lazy<ToolRuntime>, Runnable {
        /**
         * 1 once the handle was lifted or released (each happens at most once, never both):
         * a field set through [TAKEN], not an `AtomicBoolean` of its own (an object a call).
         */
        @JvmField @Volatile var taken = 0

        @Volatile private var lifted: ToolRuntime? = null

        override val value: ToolRuntime
            get() {
                lifted?.let { return it }
                synchronized(this) {
                    lifted?.let { return it }
                    check(TAKEN.compareAndSet(this, 0, 1)) { "the call's runtime was released" }
                    return FfiConverterTypeToolRuntime.lift(handle).also { lifted = it }
                }
            }

        override fun isInitialized() = lifted != null

        /** The cleaner's action: the context is unreachable. */
        override fun run() {
            if (TAKEN.compareAndSet(this, 0, 1)) phaseo_jvm_release_runtime(handle)
        }

        private companion object {
            val TAKEN: AtomicIntegerFieldUpdater<RuntimeHandle> =
                AtomicIntegerFieldUpdater.newUpdater(RuntimeHandle::class.java, "taken")
        }
    }

    /** One call: the body's result as JSON text, or a [ToolException]. */
    private fun run(call: Long, body: Blocking, input: String, context: ToolContext, onCaller: Boolean): String =
        try {
            hostCall { BlockingCalls.run(call, onCaller) { body.run(parseJson(input), context) }.toString() }
        } catch (e: BlockingCalls.CallerInterrupted) {
            throw e
        } catch (e: CancellationException) {
            // No coroutine here to cancel: a CancellationException the body throws is its
            // own failure, with its message.
            throw ToolException.Failed(describe(e))
        }
}

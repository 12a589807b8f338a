// The Java API's tool bodies (blocking functions) run by threads of this JVM that take the
// core's calls themselves, through three C functions JNA maps directly
// (bindings-uniffi/src/jvm_dispatch.rs): no JNA callback, no coroutine and no dispatcher per
// call. A JNA callback builds a reflective proxy call and a structure per argument and costs
// tens of microseconds; a directly mapped call costs well under one.
package app.phaseo.agent

import com.sun.jna.Native
import com.sun.jna.Pointer
import java.util.concurrent.CancellationException
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicLong
import kotlinx.serialization.json.JsonElement

/**
 * Registers blocking tool bodies and runs their calls. The core decides when a thread
 * starts (one thread per call at most while calls block, see jvm_dispatch.rs); threads idle
 * for [KEEP_ALIVE_MS] end. All threads are daemons: the JVM may exit while they wait.
 */
internal object JvmDispatch {
    /** How long a thread with no call waits before it ends. */
    private const val KEEP_ALIVE_MS = 60_000L

    /** A registered body: what it runs, and whether a cancelled call's thread is interrupted. */
    private class Body(val run: BlockingToolFunction, val interruptible: Boolean)

    private val bodies = ConcurrentHashMap<Long, Body>()
    private val keys = AtomicLong(1)
    private val threadNumbers = AtomicLong(1)

    @JvmStatic private external fun phaseo_jvm_next(keepAliveMs: Long, out: LongArray): Int

    @JvmStatic private external fun phaseo_jvm_complete(call: Long, status: Int, text: ByteArray, len: Long)

    @JvmStatic private external fun phaseo_jvm_control(out: LongArray): Int

    @JvmStatic private external fun phaseo_jvm_thread_failed()

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
        daemon("phaseo-agent-control") { control() }
    }

    /** Registers [body]; the key goes into the tool's definition (`blockingTool`). */
    fun register(body: BlockingToolFunction, interruptible: Boolean): Long {
        val key = keys.getAndIncrement()
        bodies[key] = Body(body, interruptible)
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
                2 -> BlockingCalls.cancel(out[0], bodies[out[1]]?.interruptible ?: true)
                3 -> bodies.remove(out[0])
            }
        }
    }

    /** A thread that takes calls until none came for [KEEP_ALIVE_MS]. */
    private fun work() {
        val out = LongArray(5)
        while (phaseo_jvm_next(KEEP_ALIVE_MS, out) == 1) {
            val call = out[0]
            var status = 1
            val text = try {
                val body = bodies[out[1]] ?: throw ToolException.Failed("the tool's body was released")
                val input = String(Pointer(out[2]).getByteArray(0, out[3].toInt()), Charsets.UTF_8)
                val runtime = FfiConverterTypeToolRuntime.lift(out[4])
                run(call, body, input, runtime)
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
            val bytes = FfiConverterString.toUtf8(text)
            val array = ByteArray(bytes.remaining()).also { bytes.get(it) }
            phaseo_jvm_complete(call, status, array, array.size.toLong())
        }
    }

    /** One call: the body's result as JSON text, or a [ToolException]. */
    private fun run(call: Long, body: Body, input: String, runtime: ToolRuntime): String =
        try {
            hostCall { BlockingCalls.run(call) { body.run(parseJson(input), ToolContext(runtime)) }.toString() }
        } catch (e: CancellationException) {
            // No coroutine here to cancel: a CancellationException the body throws is its
            // own failure, with its message.
            throw ToolException.Failed(describe(e))
        }
}

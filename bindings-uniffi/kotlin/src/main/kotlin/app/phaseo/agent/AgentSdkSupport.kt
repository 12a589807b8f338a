// What the Java API (`AgentSdk`) needs besides its public types: plain Java values ↔ JSON,
// host callbacks on JVM threads (interrupted when the core cancels the call), and the
// Kotlin layer's error as the unchecked `AgentSdk.AgentException`. No run logic.
package app.phaseo.agent

import java.util.concurrent.Callable
import java.util.concurrent.TimeoutException
import java.util.concurrent.atomic.AtomicReference
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.runInterruptible
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.booleanOrNull

/**
 * JSON as plain Java values: objects as insertion-ordered `LinkedHashMap`s, arrays as
 * `ArrayList`s, numbers as [javaNumber] reads them (`Integer`, `Long`, `BigInteger`,
 * `Double`, as Jackson does), strings, booleans and `null`.
 */
internal fun javaValue(element: JsonElement?): Any? = when (element) {
    null, JsonNull -> null
    is JsonObject -> LinkedHashMap<String, Any?>(capacityFor(element.size)).also { map ->
        for ((k, v) in element) map[k] = javaValue(v)
    }
    is JsonArray -> element.mapTo(ArrayList(element.size)) { javaValue(it) }
    is JsonPrimitive -> if (element.isString) element.content else element.booleanOrNull ?: javaNumber(element.content)
}

/**
 * A JSON number as Java reads it from its text (never through a rounding parse): an integer
 * literal as `Integer`, `Long` or `BigInteger`; any other as `Double`, unless Java would
 * print that `Double` as another decimal value (Java 17 prints `5e-324` as `4.9E-324`, which
 * a parser may read as 0), then as the exact `BigDecimal`.
 */
private fun javaNumber(text: String): Any {
    // Most numbers a tool gets are small integers: read those without a BigDecimal (this
    // runs per number of every call's input). Up to 18 digits always fit a Long.
    val start = if (text.startsWith('-')) 1 else 0
    if (text.length - start in 1..18 && (start until text.length).all { text[it] in '0'..'9' }) {
        val whole = text.toLong()
        return if (whole in Int.MIN_VALUE..Int.MAX_VALUE) whole.toInt() else whole
    }
    val exact = text.toBigDecimalOrNull() ?: return text
    if (!text.any { it == '.' || it == 'e' || it == 'E' }) {
        val whole = exact.toBigInteger()
        return when (whole.bitLength()) {
            in 0..31 -> whole.toInt()
            in 32..63 -> whole.toLong()
            else -> whole
        }
    }
    val double = text.toDouble()
    if (double.isInfinite()) return exact
    return if (java.math.BigDecimal(double.toString()).compareTo(exact) == 0) double else exact
}

/** A JSON object as a Java map (an empty map for anything else). */
@Suppress("UNCHECKED_CAST")
internal fun javaMap(element: JsonElement?): Map<String, Any?> =
    (javaValue(element) as? Map<String, Any?>) ?: LinkedHashMap()

/**
 * Where Java callbacks run: an unbounded view of kotlinx's blocking-I/O scheduler (daemon
 * threads, reused). Unbounded, because the core already bounds how many calls of a turn run
 * at once (`ToolExecutionConfig`) and a second bound here would queue calls behind blocked
 * ones and make their timeouts fire while they wait. Not virtual threads: the library
 * targets Java 17.
 *
 * Callbacks start in the order they reach the binding: each waits, without holding a
 * thread, until the one before it has started (or was cancelled before starting), so a slow
 * first call is running before an instant second one can finish, as with coroutine
 * executors. (Tool bodies do not come here: they run on the threads of [JvmDispatch].)
 */
internal object JvmThreads {
    private val elastic = Dispatchers.IO.limitedParallelism(1 shl 20)
    private val last = AtomicReference<CompletableDeferred<Unit>>(CompletableDeferred(Unit))

    /**
     * Runs [block] on a blocking-capable thread. When the coroutine is cancelled (the
     * core's timeout, a cancelled run) the thread is interrupted and whatever the block
     * later returns or throws is dropped.
     */
    suspend fun <T> call(block: Callable<T>): T {
        val started = CompletableDeferred<Unit>()
        val previous = last.getAndSet(started)
        val job = currentCoroutineContext()[Job]
        try {
            previous.await()
            return runInterruptible(elastic) {
                started.complete(Unit)
                try {
                    block.call()
                } catch (e: InterruptedException) {
                    // runInterruptible reads every InterruptedException as the cancellation it
                    // interrupted the thread for. One the callback throws while nothing cancelled
                    // the call is the callback's own failure, with its own message.
                    if (job?.isCancelled == true) throw e
                    throw ToolException.Failed(describe(e))
                }
            }
        } finally {
            started.complete(Unit)
        }
    }
}

/**
 * The Kotlin layer's error as the Java API's unchecked one. A timed-out call's error
 * (`tool_timeout`) has a `java.util.concurrent.TimeoutException` as its cause, so code that
 * looks for the JDK's timeout type finds it; its cause in turn is the Kotlin error.
 */
internal fun AgentException.forJava(): AgentSdk.AgentException {
    val text = message ?: code
    val cause: Throwable = if (code == "tool_timeout") TimeoutException(text).also { it.initCause(this) } else this
    return AgentSdk.AgentException(code, text, result?.let { AgentSdk.RunResult(it) }, cause)
}

/** Runs a call of the Kotlin layer, rethrowing its errors as [AgentSdk.AgentException]. */
internal inline fun <T> javaCall(block: () -> T): T =
    try {
        block()
    } catch (e: AgentException) {
        throw e.forJava()
    } catch (e: PhaseoException) {
        throw e.toAgentException().forJava()
    } catch (e: InterruptedException) {
        // The calling thread was interrupted: the run was cancelled (runBlocking cancelled it).
        // Java declares no checked InterruptedException here, so it becomes the SDK's
        // `cancelled` error, and the thread keeps its interrupt status for its own code.
        Thread.currentThread().interrupt()
        throw AgentSdk.AgentException("cancelled", "Agent run cancelled", null, e)
    }

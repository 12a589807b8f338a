// What the Java API (`AgentSdk`) needs besides its public types: plain Java values ↔ JSON,
// host callbacks on JVM threads (interrupted when the core cancels the call), and the
// Kotlin layer's error as the unchecked `AgentSdk.AgentException`. No run logic.
package app.phaseo.agent

import java.util.concurrent.Callable
import java.util.concurrent.ExecutionException
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executors
import java.util.concurrent.FutureTask
import java.util.concurrent.atomic.AtomicLong
import kotlin.coroutines.resume
import kotlin.coroutines.resumeWithException
import kotlinx.coroutines.suspendCancellableCoroutine
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.booleanOrNull
import kotlinx.serialization.json.doubleOrNull
import kotlinx.serialization.json.longOrNull

/**
 * JSON as plain Java values: objects as insertion-ordered `LinkedHashMap`s, arrays as
 * `ArrayList`s, integers as `Integer` (or `Long` when larger, as Jackson reads them), other
 * numbers as `Double`, strings, booleans and `null`.
 */
internal fun javaValue(element: JsonElement?): Any? = when (element) {
    null, JsonNull -> null
    is JsonObject -> element.entries.associateTo(LinkedHashMap()) { (k, v) -> k to javaValue(v) }
    is JsonArray -> element.mapTo(ArrayList(element.size)) { javaValue(it) }
    is JsonPrimitive -> when {
        element.isString -> element.content
        element.booleanOrNull != null -> element.booleanOrNull
        else -> element.longOrNull?.let { if (it in Int.MIN_VALUE..Int.MAX_VALUE) it.toInt() else it }
            ?: element.doubleOrNull
            ?: element.content
    }
}

/** A JSON object as a Java map (an empty map for anything else). */
@Suppress("UNCHECKED_CAST")
internal fun javaMap(element: JsonElement?): Map<String, Any?> =
    (javaValue(element) as? Map<String, Any?>) ?: LinkedHashMap()

/**
 * Where Java callbacks run: a cached pool of daemon threads. Not bounded, because the core
 * already bounds how many calls of a turn run at once (`ToolExecutionConfig`) and a second,
 * smaller bound here would queue calls behind blocked ones and make their timeouts fire
 * while they wait; not virtual threads, because the library targets Java 17. Threads are
 * reused, so 500 concurrent calls start 500 threads once and then idle out after 60 s.
 */
internal object JvmThreads {
    private val counter = AtomicLong()
    private val pool: ExecutorService = Executors.newCachedThreadPool { task ->
        Thread(task, "phaseo-agent-${counter.incrementAndGet()}").apply { isDaemon = true }
    }

    /**
     * Runs [block] on a pool thread and waits without blocking the caller's thread. When the
     * coroutine is cancelled (the core's timeout, a cancelled run) the thread is interrupted
     * and whatever the block later returns or throws is dropped.
     */
    suspend fun <T> call(block: Callable<T>): T = suspendCancellableCoroutine { cont ->
        val task = object : FutureTask<T>(block) {
            override fun done() {
                if (isCancelled) return
                try {
                    cont.resume(get())
                } catch (e: ExecutionException) {
                    cont.resumeWithException(e.cause ?: e)
                } catch (e: Throwable) {
                    cont.resumeWithException(e)
                }
            }
        }
        cont.invokeOnCancellation { task.cancel(true) }
        pool.execute(task)
    }
}

/** The Kotlin layer's error as the Java API's unchecked one. */
internal fun AgentException.forJava(): AgentSdk.AgentException =
    AgentSdk.AgentException(code, message ?: code, result?.let { AgentSdk.RunResult(it) }, this)

/** Runs a call of the Kotlin layer, rethrowing its errors as [AgentSdk.AgentException]. */
internal inline fun <T> javaCall(block: () -> T): T =
    try {
        block()
    } catch (e: AgentException) {
        throw e.forJava()
    } catch (e: PhaseoException) {
        throw e.toAgentException().forJava()
    }

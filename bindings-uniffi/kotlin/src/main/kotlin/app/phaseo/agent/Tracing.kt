// Tracing: the core's OpenTelemetry GenAI spans, turned on from Kotlin. When the
// OpenTelemetry Java API is on the classpath and a span is current, a run becomes its child
// (read by reflection: no dependency on the API); otherwise pass `traceparent` explicitly.
package app.phaseo.agent

import java.lang.reflect.Method

/**
 * Records a span tree per run (`invoke_agent`, `chat`, `execute_tool`) and exports it over
 * OTLP HTTP/protobuf. Unset options come from the `OTEL_*` environment variables.
 * [captureContent] records tool arguments/results and model messages (off by default).
 * Remaining spans are exported at JVM shutdown; [flushTracing] exports earlier.
 */
fun enableTracing(
    endpoint: String? = null,
    headers: Map<String, String> = emptyMap(),
    serviceName: String? = null,
    captureContent: Boolean = false,
) {
    sdk { tracingEnable(TracingOptions(endpoint, headers, serviceName, captureContent)) }
    TracingHooks.installShutdownHook()
}

/** Exports every span ended so far. */
fun flushTracing() = sdk { tracingFlush() }

/** Exports what is left and turns tracing off. */
fun shutdownTracing() = sdk { tracingShutdown() }

internal object TracingHooks {
    @Volatile private var hooked = false

    @Synchronized
    fun installShutdownHook() {
        if (hooked) return
        hooked = true
        Runtime.getRuntime().addShutdownHook(Thread { runCatching { tracingShutdown() } })
    }

    private val api: Array<Method>? by lazy {
        runCatching {
            val span = Class.forName("io.opentelemetry.api.trace.Span")
            val context = Class.forName("io.opentelemetry.api.trace.SpanContext")
            val flags = Class.forName("io.opentelemetry.api.trace.TraceFlags")
            arrayOf(
                span.getMethod("current"),
                span.getMethod("getSpanContext"),
                context.getMethod("isValid"),
                context.getMethod("getTraceId"),
                context.getMethod("getSpanId"),
                context.getMethod("getTraceFlags"),
                flags.getMethod("isSampled"),
            )
        }.getOrNull()
    }

    /** The `traceparent` of the OpenTelemetry Java API's current span, if any. */
    fun current(): String? {
        val m = api ?: return null
        return runCatching {
            val cx = m[1].invoke(m[0].invoke(null))
            if (m[2].invoke(cx) != true) return null
            val sampled = m[6].invoke(m[5].invoke(cx)) == true
            "00-${m[3].invoke(cx)}-${m[4].invoke(cx)}-${if (sampled) "01" else "00"}"
        }.getOrNull()
    }
}

/** The explicit [traceparent], else the host's current OpenTelemetry span. */
internal fun hostTraceparent(traceparent: String? = null): String? = traceparent ?: TracingHooks.current()

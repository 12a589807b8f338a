using System;
using System.Collections.Generic;
using System.Threading.Tasks;

namespace PhaseoAgentSdk
{
    /// <summary>Options of <see cref="AgentSdk.EnableTracing"/>. Unset fields come from the
    /// standard OpenTelemetry variables (<c>OTEL_EXPORTER_OTLP_ENDPOINT</c>,
    /// <c>OTEL_EXPORTER_OTLP_TRACES_ENDPOINT</c>, <c>OTEL_EXPORTER_OTLP_HEADERS</c>,
    /// <c>OTEL_SERVICE_NAME</c>), then from the OTLP defaults (<c>http://localhost:4318</c>).</summary>
    public sealed class TracingOptions
    {
        /// <summary>The OTLP/HTTP base URL (<c>/v1/traces</c> is appended unless present).</summary>
        public string Endpoint { get; set; }
        /// <summary>Headers sent with every export (e.g. the collector's authorization); never
        /// recorded on a span.</summary>
        public IDictionary<string, string> Headers { get; set; }
        /// <summary>The <c>service.name</c> resource attribute.</summary>
        public string ServiceName { get; set; }
        /// <summary>Records tool arguments and results and the model's messages on the spans
        /// (off by default: they may hold personal data).</summary>
        public bool CaptureContent { get; set; }

        internal Dictionary<string, object> ToJson()
        {
            var m = new Dictionary<string, object>();
            if (Endpoint != null) m["endpoint"] = Endpoint;
            if (Headers != null)
            {
                var h = new Dictionary<string, object>();
                foreach (var kv in Headers) h[kv.Key] = kv.Value;
                m["headers"] = h;
            }
            if (ServiceName != null) m["serviceName"] = ServiceName;
            if (CaptureContent) m["captureContent"] = true;
            return m;
        }
    }

    public static partial class AgentSdk
    {
        /// <summary>Turns OpenTelemetry tracing on for the process: every later run records
        /// GenAI spans (<c>invoke_agent</c>, <c>chat</c>, <c>execute_tool</c>) exported over
        /// OTLP HTTP/protobuf by the core. A bad endpoint or header is a
        /// <c>definition_invalid</c> <see cref="AgentException"/>. Called again, it replaces the
        /// exporter. Call <see cref="ShutdownTracing"/> (or <see cref="FlushTracing"/>) before the
        /// program exits.</summary>
        public static void EnableTracing(TracingOptions options = null)
        {
            var text = Json.Write((options ?? new TracingOptions()).ToJson());
            Native.Check(Native.phaseo_tracing_enable(Native.Utf8(text), out var err), err);
        }

        /// <summary>Whether tracing is on.</summary>
        public static bool TracingEnabled => Native.phaseo_tracing_is_enabled();

        /// <summary>Exports every span ended so far and waits for the export (on the thread
        /// pool); a no-op when tracing is off; an unreachable collector is an error.</summary>
        public static Task FlushTracing() => Task.Run(() =>
        {
            Native.Check(Native.phaseo_tracing_flush(out var err), err);
        });

        /// <summary>Exports what is left and turns tracing off (on the thread pool).</summary>
        public static Task ShutdownTracing() => Task.Run(() =>
        {
            Native.Check(Native.phaseo_tracing_shutdown(out var err), err);
        });
    }
}

package phaseoagent

/*
#include "bridge.h"
*/
import "C"

// TracingOptions configure EnableTracing. Empty fields come from the standard
// OpenTelemetry environment variables (OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME), then
// from the OTLP defaults (http://localhost:4318).
type TracingOptions struct {
	// Endpoint is the OTLP/HTTP base URL ("/v1/traces" is appended unless present).
	Endpoint string
	// Headers are sent with every export (e.g. the collector's authorization); never
	// recorded on a span.
	Headers map[string]string
	// ServiceName is the service.name resource attribute.
	ServiceName string
	// CaptureContent records tool arguments and results and the model's messages on the
	// spans (off by default: they may hold personal data).
	CaptureContent bool
}

// EnableTracing turns OpenTelemetry tracing on for the process: every later run records
// GenAI spans (invoke_agent, chat, execute_tool) and exports them over OTLP HTTP/protobuf
// from a background thread. Called again, it replaces the exporter. A bad endpoint or
// header is a definition_invalid *Error. Go has no exit hook: call ShutdownTracing (or
// FlushTracing) before the program exits, e.g. `defer phaseoagent.ShutdownTracing()`.
//
// A run joins the application's trace through RunOptions.Traceparent (the W3C
// traceparent of the current span; with the OpenTelemetry Go API, inject the span
// context with propagation.TraceContext into a carrier and take its "traceparent").
func EnableTracing(o TracingOptions) error {
	m := map[string]any{}
	if o.Endpoint != "" {
		m["endpoint"] = o.Endpoint
	}
	if o.Headers != nil {
		m["headers"] = o.Headers
	}
	if o.ServiceName != "" {
		m["serviceName"] = o.ServiceName
	}
	if o.CaptureContent {
		m["captureContent"] = true
	}
	text, err := encodeValue(m)
	if err != nil {
		return definitionError("Invalid tracing options: %v", err)
	}
	ct := cString(text)
	defer freeC(ct)
	_, err = status(func(e **C.char) C.enum_PhaseoStatus { return C.phaseo_tracing_enable(ct, e) })
	return err
}

// TracingEnabled reports whether tracing is on.
func TracingEnabled() bool { return bool(C.phaseo_tracing_is_enabled()) }

// FlushTracing exports every span ended so far and waits for the export. A no-op when
// tracing is off; an unreachable collector is an *Error with code "tracing_export_failed".
func FlushTracing() error {
	_, err := status(func(e **C.char) C.enum_PhaseoStatus { return C.phaseo_tracing_flush(e) })
	return err
}

// ShutdownTracing exports what is left and turns tracing off.
func ShutdownTracing() error {
	_, err := status(func(e **C.char) C.enum_PhaseoStatus { return C.phaseo_tracing_shutdown(e) })
	return err
}

'use strict';
// Tracing (OpenTelemetry GenAI spans of every run, exported over OTLP HTTP/protobuf). The
// spans are made by the SDK's core; this module switches them on and, when the application
// uses `@opentelemetry/api` itself, hands the core the active span so a run becomes its
// child. `@opentelemetry/api` is optional: without it runs start root spans.

const native = require('./native.js');

let enabled = false;
let exitHook = false;
let otelApi; // undefined: not looked up yet; null: not installed

function enableTracing(options = {}) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError('enableTracing: options must be an object');
  }
  const known = new Set(['endpoint', 'headers', 'serviceName', 'captureContent']);
  for (const key of Object.keys(options)) {
    if (!known.has(key)) throw new TypeError(`enableTracing: unknown option '${key}'`);
  }
  native.enableTracing({
    endpoint: options.endpoint ?? undefined,
    headers: options.headers ?? undefined,
    serviceName: options.serviceName ?? undefined,
    captureContent: options.captureContent ?? undefined,
  });
  enabled = true;
  if (!exitHook) {
    exitHook = true;
    // A short script exports its last spans before it exits (once: the export itself
    // keeps the loop alive, and its end fires `beforeExit` again).
    process.once('beforeExit', () => {
      if (enabled) shutdownTracing().catch(() => {});
    });
  }
}

function flushTracing() {
  return native.flushTracing();
}

function shutdownTracing() {
  enabled = false;
  return native.shutdownTracing();
}

/** The W3C `traceparent` of `@opentelemetry/api`'s active span, when tracing is on. */
function currentTraceparent() {
  if (!enabled) return undefined;
  if (otelApi === undefined) {
    try {
      otelApi = require('@opentelemetry/api');
    } catch {
      otelApi = null;
    }
  }
  if (otelApi === null) return undefined;
  const span = otelApi.trace.getSpan(otelApi.context.active());
  const cx = span && span.spanContext();
  if (!cx || !otelApi.isSpanContextValid(cx)) return undefined;
  return `00-${cx.traceId}-${cx.spanId}-${(cx.traceFlags & 1) ? '01' : '00'}`;
}

module.exports = { enableTracing, flushTracing, shutdownTracing, currentTraceparent };

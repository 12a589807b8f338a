//! OpenTelemetry spans of runs, following the GenAI semantic conventions: an
//! `invoke_agent {agent}` span per `run`/`continue` call, a `chat {model}` span per model
//! request and an `execute_tool {tool}` span per tool call, exported over OTLP
//! HTTP/protobuf.
//!
//! Off until [`enable`] is called: a run then costs one atomic load. A paused run's state
//! carries the W3C `traceparent` of its run span, so the continue — in any process or
//! language — lands in the same trace (see [`crate::state::RunRecord::traceparent`]).

mod attributes;
mod export;
mod options;
mod run_trace;
mod traceparent;

pub use export::{enable, flush, is_enabled, shutdown};
pub use options::TracingOptions;
pub(crate) use run_trace::{Parents, RunStart, RunTrace};
pub use traceparent::is_valid_traceparent;

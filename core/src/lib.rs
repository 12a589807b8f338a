//! # phaseo-agent
//!
//! The Rust core of the Phaseo Agent SDK: it runs a tool-using agent — sends requests to a
//! model, validates each tool call against its JSON Schema, runs the application's tools
//! (with timeouts, bounded concurrency and cancellation), pauses when a person must approve
//! or supply something, and resumes from a portable, versioned JSON state. Python, Node
//! and Kotlin/Swift bindings are thin adapters over this crate.
//!
//! ```
//! use std::sync::Arc;
//! use phaseo_agent::schemars::{self, JsonSchema};
//! use phaseo_agent::{create_agent, json, AgentDefinition, ModelResponse, RunOptions,
//!                    RunStatus, ScriptedClient, Tool, ToolError};
//! use serde::Deserialize;
//!
//! /// Two numbers to add.
//! #[derive(Deserialize, JsonSchema)]
//! struct Add {
//!     /// The first term.
//!     a: i64,
//!     /// The second term.
//!     b: i64,
//! }
//!
//! # phaseo_agent::exec::block_on(async {
//! // A tool from Rust types (docs/behaviour.md §20): the schema is `Add`'s, the arguments
//! // arrive decoded, the result is `i64`'s JSON.
//! let add = Tool::typed("add", "Adds two numbers", |input: Add, _rt| {
//!     Ok::<_, ToolError>(input.a + input.b)
//! });
//! // The plain form: a written JSON Schema and JSON values.
//! let negate = Tool::new("negate", "Negates a number",
//!     json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
//!     |input, _rt| Ok(json!(-input["n"].as_i64().unwrap_or(0))));
//! let agent = create_agent(AgentDefinition::new("calculator").tool(add).tool(negate)).unwrap();
//! let client = Arc::new(ScriptedClient::from_responses([
//!     ModelResponse::tool_calls([("c1", "add", r#"{"a":2,"b":3}"#)]),
//!     ModelResponse::text("5"),
//! ]));
//! let result = agent.run(RunOptions::new("2+3?", client)).await.unwrap();
//! assert_eq!(result.status(), RunStatus::Completed);
//! assert_eq!(result.output(), &json!("5"));
//! # });
//! ```

#![warn(missing_docs)]

pub mod agent;
pub mod agent_tool;
#[cfg(feature = "mimalloc")]
pub mod allocator;
mod checked_agent;
pub mod clients;
pub mod controls;
mod definition;
pub mod driven;
pub mod duration;
mod engine;
pub mod error;
pub mod events;
pub mod exec;
pub mod host_model;
pub mod host_stream;
pub mod input_path;
pub mod json;
pub mod json_host;
pub mod limits;
#[cfg(feature = "mcp")]
pub mod mcp;
#[cfg(feature = "mcp-server")]
pub mod mcp_server;
pub mod model;
pub mod next_turn;
pub mod options;
pub mod parsed_output;
pub mod review;
pub mod schema;
mod signing;
pub mod spec;
pub mod state;
pub mod stop;
pub mod store;
pub mod stream;
pub mod strict_schema;
#[cfg(feature = "otel")]
pub mod telemetry;
#[cfg(not(feature = "otel"))]
#[path = "telemetry/off.rs"]
mod telemetry;
pub mod tool;
pub mod tool_runtime;
pub mod tool_search;
pub mod truncate;
pub mod turn;
#[cfg(feature = "typed")]
pub mod typed_tool;

pub use agent::{create_agent, Agent, AgentDefinition};
pub use agent_tool::{default_agent_tool_parameters, AsToolOptions, MAX_AGENT_NESTING};
pub use async_trait::async_trait;
#[cfg(feature = "http")]
pub use clients::{GatewayClient, HttpClientOptions, OpenAICompatibleClient};
pub use clients::{ScriptedClient, TestClient};
pub use controls::ToolChoice;
pub use error::{AgentError, ErrorCode, GatewayErrorInfo, ToolError};
pub use events::{AgentEvent, EventData, EventListener, EventType};
pub use host_model::{HostModel, HostModelFunctions};
pub use host_stream::{host_stream, HostStreamEvent, HostStreamReceiver, HostStreamSender};
pub use input_path::{input_problem, json_pointer, json_pointer_of_values, PathStep};
pub use limits::{check_value, parse_json_text, ValueLimitError, MAX_DEPTH, MAX_STATE_DEPTH};
pub use model::{
    is_retryable_status, DeltaSink, ModelClient, ModelError, ModelFailure, ModelMessage,
    ModelRequest, ModelResponse, ModelToolCall, NoDeltas, RetryHint, ToolSpec,
};
pub use next_turn::{NextTurnParams, NextTurnParamsProvider};
pub use options::{
    ContinueOptions, ModelRetry, RunOptions, RunOverrides, ToolDecision, ToolExecutionConfig,
    ToolOutput,
};
pub use review::{human_review_fn, HumanReview, HumanReviewContext, ReviewRequest};
pub use schema::{json_schema_validator, JsonSchema, Validator};
/// The derive and trait a type needs for [`Tool::typed`] (re-exported so a tool's crate
/// uses the same version).
#[cfg(feature = "typed")]
pub use schemars;
pub use serde_json::{json, Value};
pub use state::{
    Item, Message, Pause, PauseKind, PendingKind, PendingToolCall, Role, RunResult, RunStatus,
    StepResult, ToolCall, ToolResult, Usage, STATE_VERSION,
};
pub use stop::{
    finish_reason_is, has_tool_call, max_cost, max_duration, max_tokens_used, step_count_is,
    StopCondition, StopState,
};
pub use stream::{AgentStream, EventCursor, StreamItem};
pub use strict_schema::{drop_strict_nulls, is_strict_compatible, make_strict, strict_problem};
pub use tokio_util::sync::CancellationToken;
pub use tool::{
    check_annotations, validator_fn, Approval, ApprovalPredicate, ExecuteFuture, OnError,
    ResponseReceivedHook, Tool, ToolCalledHook, ToolExecutor, ToolRetry,
};
pub use tool_runtime::ToolRuntime;
pub use turn::{TurnContext, TurnResolver, TurnValue};
#[cfg(feature = "typed")]
pub use typed_tool::{decode_input, schema_for_type};

/// The text of a panic payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_owned()
    }
}

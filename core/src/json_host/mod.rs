//! Host functions called with JSON: the adapters a binding whose host values are not Rust
//! (the C ABI, PHP) needs between the core's traits and one host function that receives a
//! call kind, a JSON array of arguments and (for a tool's calls) the [`ToolRuntime`], and
//! answers JSON.
//!
//! A binding implements [`JsonHostFn`] once (how it reaches its host) and hands
//! [`JsonCallbacks`] to the definition reader ([`crate::spec`]); every argument shape and
//! every reading of an answer is written here.
//!
//! [`ToolRuntime`]: crate::ToolRuntime

mod adapters;
mod args;
mod callbacks;
mod kind;
#[cfg(feature = "mcp")]
mod mcp;
mod model;
#[cfg(test)]
mod tests;

pub use adapters::{
    JsonAgentApproval, JsonApproval, JsonExecutor, JsonNextTurn, JsonResponseReceived, JsonReview,
    JsonStop, JsonToolCalled, JsonTurn, JsonValidator,
};
pub use args::{runtime_value, JsonArgs};
pub use callbacks::JsonCallbacks;
pub use kind::CallKind;
#[cfg(feature = "mcp")]
pub use mcp::{JsonMcpElicitation, JsonMcpFilter};
pub use model::{JsonModel, JsonModelFunctions, JsonStreamingModel};

use async_trait::async_trait;

use crate::{HostStreamSender, ToolError, ToolRuntime, Value};

/// A host function called with JSON: the binding's way to reach one callback of its host.
#[async_trait]
pub trait JsonHostFn: Send + Sync {
    /// Calls the host function with `args` (a JSON array) and waits for its answer;
    /// `runtime` is the tool call's (its cancellation, progress and context).
    async fn call(
        &self,
        kind: CallKind,
        args: JsonArgs<'_>,
        runtime: Option<&ToolRuntime>,
    ) -> Result<Value, ToolError>;

    /// A model client's [`CallKind::Stream`] call: the host passes its events to `events`
    /// until it answers.
    async fn call_streaming(
        &self,
        args: JsonArgs<'_>,
        events: HostStreamSender,
    ) -> Result<Value, ToolError>;

    /// An interactive hook's [`CallKind::ToolCalled`] call: `None` pauses the call for a
    /// person, `Some` is its result (`null` included). The default reads a null answer as
    /// the pause; a host that can answer "pause" apart from a null result overrides it.
    async fn call_tool_called(
        &self,
        args: JsonArgs<'_>,
        runtime: &ToolRuntime,
    ) -> Result<Option<Value>, ToolError> {
        let v = self.call(CallKind::ToolCalled, args, Some(runtime)).await?;
        Ok((!v.is_null()).then_some(v))
    }
}

/// Completes when the call whose runtime is `runtime` is cancelled (a timeout, the run
/// cancelled), for a host to tell its function while the call is awaited; never for a call
/// without a runtime, which its host hears of only when the core drops its wait. Makes no
/// cancellation token (see [`ToolRuntime::cancelled`]).
pub async fn call_cancelled(runtime: Option<&ToolRuntime>) {
    match runtime {
        Some(rt) => rt.cancelled().await,
        None => std::future::pending().await,
    }
}

//! One adapter per core trait, each wrapping a JS callable id.

use phaseo_agent::{
    async_trait, host_stream, stop, AgentEvent, ApprovalPredicate, CancellationToken, DeltaSink,
    EventListener, HumanReview, HumanReviewContext, ModelClient, ModelError, ModelRequest,
    ModelResponse, NextTurnParams, NextTurnParamsProvider, ResponseReceivedHook, ReviewRequest,
    StopCondition, StopState, ToolCalledHook, ToolError, ToolExecutor, ToolRuntime, TurnContext,
    TurnResolver, Validator, Value,
};

use crate::host::{execute, post_event, HostFn};

/// `execute(input, context)`: sync, async or an async generator (handled in JS).
pub struct JsExecutor(pub HostFn);

#[async_trait]
impl ToolExecutor for JsExecutor {
    async fn execute(&self, input: Value, runtime: ToolRuntime) -> Result<Value, ToolError> {
        execute(self.0.id, &input, runtime).await
    }
}

/// A validator normalized by the JS layer to `(value) => value` (throws when invalid).
pub struct JsValidator {
    pub func: HostFn,
    pub schema: Option<Value>,
}

#[async_trait]
impl Validator for JsValidator {
    async fn validate(&self, value: Value) -> Result<Value, ToolError> {
        self.func.call(vec![value]).await
    }

    fn json_schema(&self) -> Option<Value> {
        self.schema.clone()
    }
}

/// Tool-level `requireApproval(input, context)`.
pub struct JsApproval(pub HostFn);

#[async_trait]
impl ApprovalPredicate for JsApproval {
    async fn requires_approval(&self, input: &Value, rt: &ToolRuntime) -> Result<bool, ToolError> {
        Ok(phaseo_agent::tool::approval_from_answer(
            &self.0.call_with_runtime(input.clone(), rt).await?,
        ))
    }
}

/// Agent-level `requireApproval(call, context)`.
pub struct JsAgentApproval(pub HostFn);

#[async_trait]
impl ApprovalPredicate for JsAgentApproval {
    async fn requires_approval(&self, _input: &Value, rt: &ToolRuntime) -> Result<bool, ToolError> {
        let call = serde_json::to_value(rt.tool_call()).unwrap_or(Value::Null);
        Ok(phaseo_agent::tool::approval_from_answer(
            &self.0.call_with_runtime(call, rt).await?,
        ))
    }
}

/// `onToolCalled(input, context)`: null pauses (hitl), a value is the result.
pub struct JsToolCalled(pub HostFn);

#[async_trait]
impl ToolCalledHook for JsToolCalled {
    async fn on_tool_called(
        &self,
        input: Value,
        rt: ToolRuntime,
    ) -> Result<Option<Value>, ToolError> {
        let v = self.0.call_with_runtime(input, &rt).await?;
        Ok((!v.is_null()).then_some(v))
    }
}

/// `onResponseReceived(output, context)`.
pub struct JsResponseReceived(pub HostFn);

#[async_trait]
impl ResponseReceivedHook for JsResponseReceived {
    async fn on_response_received(
        &self,
        output: Value,
        rt: ToolRuntime,
    ) -> Result<Value, ToolError> {
        self.0.call_with_runtime(output, &rt).await
    }
}

/// `nextTurnParams(input, context)`.
pub struct JsNextTurn(pub HostFn);

#[async_trait]
impl NextTurnParamsProvider for JsNextTurn {
    async fn next_turn_params(
        &self,
        input: &Value,
        rt: &ToolRuntime,
    ) -> Result<NextTurnParams, ToolError> {
        let v = self.0.call_with_runtime(input.clone(), rt).await?;
        NextTurnParams::from_value(v).map_err(ToolError::new)
    }
}

/// A `stopWhen` predicate `(state) => boolean | string`.
pub struct JsStop(pub HostFn);

#[async_trait]
impl StopCondition for JsStop {
    async fn check(&self, state: &StopState<'_>) -> Result<Option<String>, ToolError> {
        let answer = self.0.call(vec![state.to_value()]).await?;
        Ok(stop::reason_from_answer(&answer))
    }
}

/// `humanReview(ctx)`.
pub struct JsReview(pub HostFn);

#[async_trait]
impl HumanReview for JsReview {
    async fn review(
        &self,
        ctx: &HumanReviewContext<'_>,
    ) -> Result<Option<ReviewRequest>, ToolError> {
        ReviewRequest::from_answer(self.0.call(vec![ctx.to_value()]).await?)
    }
}

/// A per-turn field `(turn) => value`.
pub struct JsTurn(pub HostFn);

#[async_trait]
impl TurnResolver for JsTurn {
    async fn resolve(&self, turn: &TurnContext<'_>) -> Result<Value, ToolError> {
        self.0.call(vec![turn.to_value()]).await
    }
}

/// `onEvent(event)`: delivered in order through the dispatcher queue.
pub struct JsListener(pub u32);

impl EventListener for JsListener {
    fn on_event(&self, event: &AgentEvent) {
        post_event(self.0, event.to_json());
    }
}

/// A host model client, bound by the JS layer: a function, or an object with
/// `generate(request)` and/or `stream(request)`.
pub struct JsModel {
    /// `generate(request)` (or the function itself).
    pub generate: Option<HostFn>,
    /// `stream(request)`: an (async) iterable of stream events.
    pub stream: Option<HostFn>,
}

/// Ignores deltas (a stream-only client drained for a run that is not streamed).
struct NoDeltas;

impl DeltaSink for NoDeltas {
    fn text_delta(&self, _delta: &str) {}
    fn reasoning_delta(&self, _delta: &str) {}
}

#[async_trait]
impl ModelClient for JsModel {
    async fn generate(
        &self,
        request: &ModelRequest<'_>,
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        let Some(generate) = &self.generate else {
            return self.stream(request, cancel, &NoDeltas).await;
        };
        let v = crate::host::generate(generate.id, &request.to_value())
            .await
            .map_err(|e| ModelError::new(e.message))?;
        ModelResponse::from_script_entry(&v).map_err(ModelError::new)?
    }

    async fn stream(
        &self,
        request: &ModelRequest<'_>,
        cancel: &CancellationToken,
        deltas: &dyn DeltaSink,
    ) -> Result<ModelResponse, ModelError> {
        let Some(stream) = &self.stream else {
            return self.generate(request, cancel).await;
        };
        let (events, receiver) = host_stream();
        let request = request.to_value();
        let host = async move {
            crate::host::stream(stream.id, &request, events)
                .await
                .map(drop)
                .map_err(|e| ModelError::new(e.message))
        };
        receiver.run(host, deltas).await
    }
}

/// An MCP server's `filter(tool)` (`{name, description, annotations}`), called at listing.
pub struct JsMcpFilter(pub HostFn);

#[async_trait]
impl phaseo_agent::mcp::McpToolFilter for JsMcpFilter {
    /// JS cannot be called synchronously from the core's threads; the core calls
    /// `keep_async` (this one is only for callers outside a run, which keep every tool).
    fn keep(&self, _tool: &phaseo_agent::mcp::McpToolInfo) -> bool {
        true
    }

    async fn keep_async(&self, tool: &phaseo_agent::mcp::McpToolInfo) -> Result<bool, ToolError> {
        let info = serde_json::json!({
            "name": tool.name,
            "description": tool.description,
            "annotations": tool.annotations,
        });
        Ok(phaseo_agent::tool::approval_from_answer(
            &self.0.call(vec![info]).await?,
        ))
    }
}

/// An MCP server's `onElicitation(request, {server})`; resolves with an MCP `ElicitResult`.
pub struct JsElicitation(pub HostFn);

#[async_trait]
impl phaseo_agent::mcp::McpElicitationHandler for JsElicitation {
    async fn on_elicitation(&self, server: &str, request: Value) -> Result<Value, ToolError> {
        self.0
            .call(vec![request, serde_json::json!({ "server": server })])
            .await
    }
}

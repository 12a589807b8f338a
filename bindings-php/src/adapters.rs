//! One adapter per core trait, each wrapping a PHP callable ([`HostFn`]).

use phaseo_agent::{
    async_trait, stop, AgentEvent, ApprovalPredicate, CancellationToken, EventListener,
    HumanReview, HumanReviewContext, ModelClient, ModelError, ModelRequest, ModelResponse,
    NextTurnParams, NextTurnParamsProvider, ResponseReceivedHook, ReviewRequest, StopCondition,
    StopState, ToolCalledHook, ToolError, ToolExecutor, ToolRuntime, TurnContext, TurnResolver,
    Validator, Value,
};

use crate::host::{runtime_value, HostFn};

fn with_runtime(value: Value, rt: &ToolRuntime) -> Value {
    Value::Array(vec![value, runtime_value(rt)])
}

/// A tool executor.
pub struct HostExecutor(pub HostFn);

#[async_trait]
impl ToolExecutor for HostExecutor {
    async fn execute(&self, input: Value, runtime: ToolRuntime) -> Result<Value, ToolError> {
        let args = with_runtime(input, &runtime);
        self.0.call("execute", args, Some(&runtime)).await
    }
}

/// A host validator, with the JSON Schema it describes itself with (if any).
pub struct HostValidator {
    /// The callback.
    pub func: HostFn,
    /// Its self-description.
    pub schema: Option<Value>,
}

#[async_trait]
impl Validator for HostValidator {
    async fn validate(&self, value: Value) -> Result<Value, ToolError> {
        self.func
            .call("validate", Value::Array(vec![value]), None)
            .await
    }

    fn json_schema(&self) -> Option<Value> {
        self.schema.clone()
    }
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

/// Tool-level approval predicate `(input, runtime)`.
pub struct HostApproval(pub HostFn);

#[async_trait]
impl ApprovalPredicate for HostApproval {
    async fn requires_approval(&self, input: &Value, rt: &ToolRuntime) -> Result<bool, ToolError> {
        let args = with_runtime(input.clone(), rt);
        Ok(truthy(&self.0.call("approve", args, Some(rt)).await?))
    }
}

/// Agent-level approval predicate `(toolCall, runtime)`.
pub struct HostAgentApproval(pub HostFn);

#[async_trait]
impl ApprovalPredicate for HostAgentApproval {
    async fn requires_approval(&self, _input: &Value, rt: &ToolRuntime) -> Result<bool, ToolError> {
        let call = serde_json::to_value(rt.tool_call()).unwrap_or(Value::Null);
        let args = with_runtime(call, rt);
        Ok(truthy(&self.0.call("agentApprove", args, Some(rt)).await?))
    }
}

/// `onToolCalled(input, runtime)`: null pauses (hitl), a value is the result.
pub struct HostToolCalled(pub HostFn);

#[async_trait]
impl ToolCalledHook for HostToolCalled {
    async fn on_tool_called(
        &self,
        input: Value,
        rt: ToolRuntime,
    ) -> Result<Option<Value>, ToolError> {
        let args = with_runtime(input, &rt);
        let v = self.0.call("toolCalled", args, Some(&rt)).await?;
        Ok((!v.is_null()).then_some(v))
    }
}

/// `onResponseReceived(output, runtime)`.
pub struct HostResponseReceived(pub HostFn);

#[async_trait]
impl ResponseReceivedHook for HostResponseReceived {
    async fn on_response_received(
        &self,
        output: Value,
        rt: ToolRuntime,
    ) -> Result<Value, ToolError> {
        let args = with_runtime(output, &rt);
        self.0.call("responseReceived", args, Some(&rt)).await
    }
}

/// `nextTurnParams(input, runtime)`.
pub struct HostNextTurn(pub HostFn);

#[async_trait]
impl NextTurnParamsProvider for HostNextTurn {
    async fn next_turn_params(
        &self,
        input: &Value,
        rt: &ToolRuntime,
    ) -> Result<NextTurnParams, ToolError> {
        let args = with_runtime(input.clone(), rt);
        let v = self.0.call("nextTurn", args, Some(rt)).await?;
        NextTurnParams::from_value(v).map_err(ToolError::new)
    }
}

/// A stop condition `(state) -> bool | reason`.
pub struct HostStop(pub HostFn);

#[async_trait]
impl StopCondition for HostStop {
    async fn check(&self, state: &StopState<'_>) -> Result<Option<String>, ToolError> {
        let args = Value::Array(vec![state.to_value()]);
        let answer = self.0.call("stop", args, None).await?;
        Ok(stop::reason_from_answer(&answer))
    }
}

/// The human-review hook.
pub struct HostReview(pub HostFn);

#[async_trait]
impl HumanReview for HostReview {
    async fn review(
        &self,
        ctx: &HumanReviewContext<'_>,
    ) -> Result<Option<ReviewRequest>, ToolError> {
        let args = Value::Array(vec![ctx.to_value()]);
        ReviewRequest::from_answer(self.0.call("review", args, None).await?)
    }
}

/// A per-turn value.
pub struct HostTurn(pub HostFn);

#[async_trait]
impl TurnResolver for HostTurn {
    async fn resolve(&self, turn: &TurnContext<'_>) -> Result<Value, ToolError> {
        let args = Value::Array(vec![turn.to_value()]);
        self.0.call("turn", args, None).await
    }
}

/// A host model client: `generate(request)` answers a response object.
pub struct HostModel(pub HostFn);

#[async_trait]
impl ModelClient for HostModel {
    async fn generate(
        &self,
        request: &ModelRequest<'_>,
        _cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        // Dropping this future (cancellation) cancels the call's token, which the host sees.
        let args = Value::Array(vec![request.to_value()]);
        let v = self
            .0
            .call("generate", args, None)
            .await
            .map_err(|e| ModelError::new(e.message))?;
        ModelResponse::from_script_entry(&v).map_err(ModelError::new)?
    }
}

/// A PHP model client with `stream(request)`: when the run is streamed, the events its
/// generator yields reach the run as they come (`phaseo_agent::host_stream`).
pub struct HostStreamingModel {
    /// `generate(request)`.
    pub generate: HostFn,
    /// `stream(request)`, iterated by the PHP layer.
    pub stream: HostFn,
}

#[async_trait]
impl ModelClient for HostStreamingModel {
    async fn generate(
        &self,
        request: &ModelRequest<'_>,
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        HostModel(self.generate.clone())
            .generate(request, cancel)
            .await
    }

    async fn stream(
        &self,
        request: &ModelRequest<'_>,
        _cancel: &CancellationToken,
        deltas: &dyn phaseo_agent::DeltaSink,
    ) -> Result<ModelResponse, ModelError> {
        let (sender, receiver) = phaseo_agent::host_stream();
        let args = Value::Array(vec![request.to_value()]);
        let host = async {
            self.stream
                .call_streaming("stream", args, None, Some(sender))
                .await
                .map(|_| ())
                .map_err(|e| ModelError::new(e.message))
        };
        receiver.run(host, deltas).await
    }
}

/// A run's event listener: events go to the PHP thread through the queue, in order.
pub struct HostListener(pub i64);

impl EventListener for HostListener {
    fn on_event(&self, event: &AgentEvent) {
        crate::host::push(
            serde_json::json!({"t": "event", "run": self.0, "event": event.to_value()}),
        );
    }
}

//! One adapter per core trait of a definition, each over a host function.

use async_trait::async_trait;

use super::{CallKind as Kind, JsonArgs, JsonHostFn};
use crate::tool::approval_from_answer;
use crate::{
    stop, ApprovalPredicate, ExecuteFuture, HumanReview, HumanReviewContext, NextTurnParams,
    NextTurnParamsProvider, ResponseReceivedHook, ReviewRequest, StopCondition, StopState,
    ToolCalledHook, ToolError, ToolExecutor, ToolRuntime, TurnContext, TurnResolver, Validator,
    Value,
};

/// A tool executor `(input, runtime)`.
pub struct JsonExecutor<H>(pub H);

#[async_trait]
impl<H: JsonHostFn> ToolExecutor for JsonExecutor<H> {
    async fn execute(&self, input: Value, runtime: ToolRuntime) -> Result<Value, ToolError> {
        let args = JsonArgs::WithRuntime(&input, &runtime);
        self.0.call(Kind::Execute, args, Some(&runtime)).await
    }

    /// The input is written from the runtime's call as it is: no copy of it is made.
    fn execute_call<'a>(&'a self, runtime: ToolRuntime) -> ExecuteFuture<'a> {
        Box::pin(async move {
            let args = JsonArgs::WithRuntime(&runtime.tool_call().input, &runtime);
            self.0.call(Kind::Execute, args, Some(&runtime)).await
        })
    }

    /// The host receives the arguments as text ([`JsonArgs::to_canonical_text`]).
    fn writes_input_text(&self) -> bool {
        true
    }
}

/// A validator `(value)`, with the JSON Schema it describes itself with (if any).
pub struct JsonValidator<H> {
    /// The host function.
    pub func: H,
    /// Its self-description.
    pub schema: Option<Value>,
}

#[async_trait]
impl<H: JsonHostFn> Validator for JsonValidator<H> {
    async fn validate(&self, value: Value) -> Result<Value, ToolError> {
        let args = JsonArgs::List(vec![value]);
        self.func.call(Kind::Validate, args, None).await
    }

    fn json_schema(&self) -> Option<Value> {
        self.schema.clone()
    }
}

/// A tool-level (or MCP server) approval predicate `(input, runtime)`.
pub struct JsonApproval<H>(pub H);

#[async_trait]
impl<H: JsonHostFn> ApprovalPredicate for JsonApproval<H> {
    async fn requires_approval(&self, input: &Value, rt: &ToolRuntime) -> Result<bool, ToolError> {
        let args = JsonArgs::WithRuntime(input, rt);
        let answer = self.0.call(Kind::Approve, args, Some(rt)).await?;
        Ok(approval_from_answer(&answer))
    }
}

/// The agent-level approval predicate `(toolCall, runtime)`.
pub struct JsonAgentApproval<H>(pub H);

#[async_trait]
impl<H: JsonHostFn> ApprovalPredicate for JsonAgentApproval<H> {
    async fn requires_approval(&self, _input: &Value, rt: &ToolRuntime) -> Result<bool, ToolError> {
        let call = serde_json::to_value(rt.tool_call()).unwrap_or(Value::Null);
        let args = JsonArgs::WithRuntime(&call, rt);
        let answer = self.0.call(Kind::AgentApprove, args, Some(rt)).await?;
        Ok(approval_from_answer(&answer))
    }
}

/// `onToolCalled(input, runtime)`: a pause (hitl) or the result ([`JsonHostFn::call_tool_called`]).
pub struct JsonToolCalled<H>(pub H);

#[async_trait]
impl<H: JsonHostFn> ToolCalledHook for JsonToolCalled<H> {
    async fn on_tool_called(
        &self,
        input: Value,
        rt: ToolRuntime,
    ) -> Result<Option<Value>, ToolError> {
        let args = JsonArgs::WithRuntime(&input, &rt);
        self.0.call_tool_called(args, &rt).await
    }
}

/// `onResponseReceived(output, runtime)`.
pub struct JsonResponseReceived<H>(pub H);

#[async_trait]
impl<H: JsonHostFn> ResponseReceivedHook for JsonResponseReceived<H> {
    async fn on_response_received(
        &self,
        output: Value,
        rt: ToolRuntime,
    ) -> Result<Value, ToolError> {
        let args = JsonArgs::WithRuntime(&output, &rt);
        self.0.call(Kind::ResponseReceived, args, Some(&rt)).await
    }
}

/// `nextTurnParams(input, runtime)`.
pub struct JsonNextTurn<H>(pub H);

#[async_trait]
impl<H: JsonHostFn> NextTurnParamsProvider for JsonNextTurn<H> {
    async fn next_turn_params(
        &self,
        input: &Value,
        rt: &ToolRuntime,
    ) -> Result<NextTurnParams, ToolError> {
        let args = JsonArgs::WithRuntime(input, rt);
        let v = self.0.call(Kind::NextTurn, args, Some(rt)).await?;
        NextTurnParams::from_value(v).map_err(ToolError::new)
    }
}

/// A stop condition `(state) -> bool | reason`.
pub struct JsonStop<H>(pub H);

#[async_trait]
impl<H: JsonHostFn> StopCondition for JsonStop<H> {
    async fn check(&self, state: &StopState<'_>) -> Result<Option<String>, ToolError> {
        let args = JsonArgs::List(vec![state.to_value()]);
        let answer = self.0.call(Kind::Stop, args, None).await?;
        Ok(stop::reason_from_answer(&answer))
    }
}

/// The human-review hook `(context)`.
pub struct JsonReview<H>(pub H);

#[async_trait]
impl<H: JsonHostFn> HumanReview for JsonReview<H> {
    async fn review(
        &self,
        ctx: &HumanReviewContext<'_>,
    ) -> Result<Option<ReviewRequest>, ToolError> {
        let args = JsonArgs::List(vec![ctx.to_value()]);
        ReviewRequest::from_answer(self.0.call(Kind::Review, args, None).await?)
    }
}

/// A per-turn value `(turn)`.
pub struct JsonTurn<H>(pub H);

#[async_trait]
impl<H: JsonHostFn> TurnResolver for JsonTurn<H> {
    async fn resolve(&self, turn: &TurnContext<'_>) -> Result<Value, ToolError> {
        let args = JsonArgs::List(vec![turn.to_value()]);
        self.0.call(Kind::Turn, args, None).await
    }
}

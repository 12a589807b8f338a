//! Human review (docs/behaviour.md §3.3): a hook called after every step that did not pause.

use async_trait::async_trait;
use serde_json::{json, Value};

use crate::error::ToolError;
use crate::state::Message;

/// What the human-review hook sees.
#[derive(Clone, Copy, Debug)]
pub struct HumanReviewContext<'a> {
    /// The run id.
    pub run_id: &'a str,
    /// The agent id.
    pub agent_id: &'a str,
    /// The step just finished.
    pub step_index: usize,
    /// The run's input.
    pub input: &'a Value,
    /// The application context.
    pub context: &'a Value,
    /// The conversation, including this step's assistant message.
    pub messages: &'a [Message],
    /// The step's response: `{message: {content, toolCalls}, usage, finishReason}`.
    pub response: &'a Value,
    /// Whether the step produced the final answer.
    pub is_final: bool,
}

impl HumanReviewContext<'_> {
    /// As camelCase JSON (for host hooks).
    pub fn to_value(&self) -> Value {
        json!({
            "runId": self.run_id,
            "agentId": self.agent_id,
            "stepIndex": self.step_index,
            "input": self.input,
            "context": self.context,
            "messages": self.messages,
            "response": self.response,
            "isFinal": self.is_final,
        })
    }
}

/// A request to pause for human review.
#[derive(Clone, Debug, PartialEq)]
pub struct ReviewRequest {
    /// Why.
    pub reason: String,
    /// Application payload.
    pub payload: Value,
}

impl ReviewRequest {
    /// Parses a host answer: null → no pause, `{reason, payload}` → pause.
    pub fn from_answer(answer: Value) -> Result<Option<Self>, ToolError> {
        match answer {
            Value::Null => Ok(None),
            Value::Object(mut m) => {
                let reason = match m.remove("reason") {
                    Some(Value::String(s)) => s,
                    Some(Value::Null) | None => "Human review requested".to_owned(),
                    Some(other) => other.to_string(),
                };
                Ok(Some(ReviewRequest {
                    reason,
                    payload: m.remove("payload").unwrap_or(Value::Null),
                }))
            }
            other => Err(ToolError::new(format!(
                "humanReview must return null or {{reason, payload}}, got {other}"
            ))),
        }
    }
}

/// Decides after a step whether a person must look at the run before it goes on.
#[async_trait]
pub trait HumanReview: Send + Sync {
    /// `Some` pauses the run with pause kind `human_review`.
    async fn review(
        &self,
        ctx: &HumanReviewContext<'_>,
    ) -> Result<Option<ReviewRequest>, ToolError>;
}

struct FnReview<F>(F);

#[async_trait]
impl<F> HumanReview for FnReview<F>
where
    F: Fn(&HumanReviewContext<'_>) -> Option<ReviewRequest> + Send + Sync,
{
    async fn review(
        &self,
        ctx: &HumanReviewContext<'_>,
    ) -> Result<Option<ReviewRequest>, ToolError> {
        Ok((self.0)(ctx))
    }
}

/// Wraps a closure as a [`HumanReview`] hook.
pub fn human_review_fn<F>(f: F) -> std::sync::Arc<dyn HumanReview>
where
    F: Fn(&HumanReviewContext<'_>) -> Option<ReviewRequest> + Send + Sync + 'static,
{
    std::sync::Arc::new(FnReview(f))
}

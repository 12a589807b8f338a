//! Per-turn values (docs/behaviour.md §3): a field that is either fixed or a function of the turn.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{json, Value};

use crate::error::ToolError;
use crate::state::Message;

/// What a per-turn function sees.
#[derive(Clone, Copy, Debug)]
pub struct TurnContext<'a> {
    /// `stepIndex + 1`.
    pub number_of_turns: usize,
    /// The step about to run.
    pub step_index: usize,
    /// The conversation so far.
    pub messages: &'a [Message],
    /// The application context.
    pub context: &'a Value,
}

impl TurnContext<'_> {
    /// As camelCase JSON (for host functions).
    pub fn to_value(&self) -> Value {
        json!({
            "numberOfTurns": self.number_of_turns,
            "stepIndex": self.step_index,
            "messages": self.messages,
            "context": self.context,
        })
    }
}

/// Computes a field for a turn.
#[async_trait]
pub trait TurnResolver: Send + Sync {
    /// The value for this turn (null = unset).
    async fn resolve(&self, turn: &TurnContext<'_>) -> Result<Value, ToolError>;
}

struct FnResolver<F>(F);

#[async_trait]
impl<F> TurnResolver for FnResolver<F>
where
    F: Fn(&TurnContext<'_>) -> Value + Send + Sync,
{
    async fn resolve(&self, turn: &TurnContext<'_>) -> Result<Value, ToolError> {
        Ok((self.0)(turn))
    }
}

/// A fixed value or a function of the turn.
#[derive(Clone)]
pub enum TurnValue {
    /// The same value every turn.
    Fixed(Value),
    /// Computed per turn.
    Dynamic(Arc<dyn TurnResolver>),
}

impl TurnValue {
    /// A per-turn closure.
    pub fn from_fn<F>(f: F) -> Self
    where
        F: Fn(&TurnContext<'_>) -> Value + Send + Sync + 'static,
    {
        TurnValue::Dynamic(Arc::new(FnResolver(f)))
    }

    pub(crate) async fn resolve(&self, turn: &TurnContext<'_>) -> Result<Value, ToolError> {
        match self {
            TurnValue::Fixed(v) => Ok(v.clone()),
            TurnValue::Dynamic(f) => f.resolve(turn).await,
        }
    }
}

impl<T: Into<Value>> From<T> for TurnValue {
    fn from(v: T) -> Self {
        TurnValue::Fixed(v.into())
    }
}

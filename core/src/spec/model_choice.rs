//! The agent's model under the product's three spellings: `model` (a name, or a function
//! of the turn), `models` (a fallback list, or a function of the turn answering one: the
//! first is used) and `preset` (the gateway preset `@<name>`, when neither names a model).

use std::sync::Arc;

use async_trait::async_trait;
use serde::Deserialize;

use super::forms::{Callback, ValueOrCallback};
use super::{invalid, HostCallbacks};
use crate::{AgentError, ToolError, TurnContext, TurnResolver, TurnValue, Value};

/// `models`: a list of names, or a callback answering one.
#[derive(Deserialize)]
#[serde(untagged)]
pub(crate) enum ModelList {
    /// `{"$callback": id}`.
    Callback(Callback),
    /// Anything else (checked by [`model_of`]).
    Value(Value),
}

/// The model of a definition: `model` wins, then the first of `models`, then `@<preset>`.
pub(crate) fn model_of(
    host: &dyn HostCallbacks,
    model: Option<ValueOrCallback>,
    models: Option<ModelList>,
    preset: Option<Value>,
) -> Result<Option<TurnValue>, AgentError> {
    if let Some(v) = model.and_then(|v| v.turn_value(host)) {
        return Ok(Some(v));
    }
    match models {
        Some(ModelList::Callback(cb)) => {
            let names = host.turn_value(cb.id);
            return Ok(Some(TurnValue::Dynamic(Arc::new(FirstOf(names)))));
        }
        Some(ModelList::Value(Value::Null)) | None => {}
        Some(ModelList::Value(list)) => {
            if let Some(first) = first_model(&list).map_err(|m| definition(&m))? {
                return Ok(Some(TurnValue::Fixed(first)));
            }
        }
    }
    match preset {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(p)) if !p.is_empty() && p != "@" => {
            let name = if p.starts_with('@') {
                p
            } else {
                format!("@{p}")
            };
            Ok(Some(TurnValue::Fixed(Value::String(name))))
        }
        Some(_) => Err(definition("preset must be a non-empty string")),
    }
}

fn definition(message: &str) -> AgentError {
    invalid(format!("Invalid agent definition: {message}"))
}

/// The first name of a `models` list (`None` for an empty list).
fn first_model(list: &Value) -> Result<Option<Value>, String> {
    match list {
        Value::Array(items) if items.iter().all(Value::is_string) => Ok(items.first().cloned()),
        _ => Err(format!("models must be an array of strings, got {list}")),
    }
}

/// `models` as a function of the turn: the first name of the list it answers.
struct FirstOf(Arc<dyn TurnResolver>);

#[async_trait]
impl TurnResolver for FirstOf {
    async fn resolve(&self, turn: &TurnContext<'_>) -> Result<Value, ToolError> {
        let list = self.0.resolve(turn).await?;
        Ok(first_model(&list)
            .map_err(ToolError::new)?
            .unwrap_or(Value::Null))
    }
}

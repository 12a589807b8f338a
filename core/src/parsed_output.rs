//! An agent's `parseOutput` (docs/behaviour.md §3): a host function turning the final text
//! into the output, whose value the agent's `outputSchema` (when set) then checks.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use crate::error::ToolError;
use crate::schema::Validator;
use crate::AgentError;

/// The definition error of a `parseOutput` that is not a host function (a host respells
/// the key with `spec::respell_keys`).
pub fn not_a_function() -> AgentError {
    AgentError::definition_invalid(
        "Invalid agent definition: parseOutput must be a function (text) => output",
    )
}

/// What a `parseOutput` that is handed something else than the final text answers: the
/// run's second try with the text parsed as JSON (structured output) then fails, so the
/// text's own outcome stands.
pub const PARSE_OUTPUT_TAKES_TEXT: &str = "parseOutput takes the final text";

/// The agent's output validator when it has a `parseOutput`: `parse` runs on the final
/// text, `then` (the `outputSchema`) on what it returns.
pub struct ParsedOutput {
    parse: Arc<dyn Validator>,
    then: Option<Arc<dyn Validator>>,
}

impl ParsedOutput {
    /// `parse` (the host function, called with the text) followed by `then`.
    pub fn new(parse: Arc<dyn Validator>, then: Option<Arc<dyn Validator>>) -> Self {
        Self { parse, then }
    }
}

#[async_trait]
impl Validator for ParsedOutput {
    async fn validate(&self, value: Value) -> Result<Value, ToolError> {
        if !value.is_string() {
            return Err(ToolError::new(PARSE_OUTPUT_TAKES_TEXT));
        }
        let parsed = self.parse.validate(value).await?;
        match &self.then {
            Some(check) => check.validate(parsed).await,
            None => Ok(parsed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::JsonSchema;

    struct Length;

    #[async_trait]
    impl Validator for Length {
        async fn validate(&self, value: Value) -> Result<Value, ToolError> {
            Ok(Value::from(value.as_str().map_or(0, str::len)))
        }
    }

    fn schema(s: Value) -> Arc<dyn Validator> {
        Arc::new(JsonSchema::compile(&s).unwrap())
    }

    #[tokio::test]
    async fn parses_the_text_then_checks_the_parsed_value() {
        let parsed = ParsedOutput::new(
            Arc::new(Length),
            Some(schema(serde_json::json!({"maximum": 3}))),
        );
        assert_eq!(
            parsed.validate(Value::from("abc")).await.unwrap(),
            Value::from(3)
        );
        let too_long = parsed.validate(Value::from("abcd")).await.unwrap_err();
        assert!(too_long.message.contains("4"), "{}", too_long.message);
    }

    #[tokio::test]
    async fn refuses_anything_but_the_text() {
        let parsed = ParsedOutput::new(Arc::new(Length), None);
        let refused = parsed
            .validate(serde_json::json!({"a": 1}))
            .await
            .unwrap_err();
        assert_eq!(refused.message, PARSE_OUTPUT_TAKES_TEXT);
        assert_eq!(
            parsed.validate(Value::from("ab")).await.unwrap(),
            Value::from(2)
        );
    }
}

//! Next-turn parameters (docs/behaviour.md §2.6): overrides a tool sets for the next model request.

use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::controls::ToolChoice;
use crate::error::ToolError;
use crate::tool_runtime::ToolRuntime;

/// Overrides for the next model request only. Absent keys change nothing.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NextTurnParams {
    /// Model id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Instructions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Output token limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u64>,
    /// Nucleus sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Tool ids to offer (also read from `activeTools`, its docs/behaviour.md §12 name; one-shot like
    /// every key here).
    #[serde(
        default,
        alias = "activeTools",
        skip_serializing_if = "Option::is_none"
    )]
    pub tools: Option<Vec<String>>,
    /// Which tool the model must call (docs/behaviour.md §12).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
}

impl NextTurnParams {
    /// Parses overrides from JSON; unknown keys are an error naming them.
    pub fn from_value(value: Value) -> Result<Self, String> {
        serde_json::from_value(value).map_err(|e| format!("invalid nextTurnParams: {e}"))
    }

    /// Merges `later` over `self`, per key (later wins).
    pub fn merge(&mut self, later: NextTurnParams) {
        if later.model.is_some() {
            self.model = later.model;
        }
        if later.instructions.is_some() {
            self.instructions = later.instructions;
        }
        if later.temperature.is_some() {
            self.temperature = later.temperature;
        }
        if later.max_output_tokens.is_some() {
            self.max_output_tokens = later.max_output_tokens;
        }
        if later.top_p.is_some() {
            self.top_p = later.top_p;
        }
        if later.tools.is_some() {
            self.tools = later.tools;
        }
        if later.tool_choice.is_some() {
            self.tool_choice = later.tool_choice;
        }
    }
}

/// Computes a call's next-turn overrides from its input and runtime.
#[async_trait]
pub trait NextTurnParamsProvider: Send + Sync {
    /// The overrides this call contributes.
    async fn next_turn_params(
        &self,
        input: &Value,
        runtime: &ToolRuntime,
    ) -> Result<NextTurnParams, ToolError>;
}

/// Where a tool's next-turn overrides come from.
#[derive(Clone)]
pub enum NextTurnSource {
    /// The same overrides for every call.
    Fixed(NextTurnParams),
    /// Computed per call.
    Dynamic(Arc<dyn NextTurnParamsProvider>),
}

impl NextTurnSource {
    pub(crate) async fn resolve(
        &self,
        input: &Value,
        runtime: &ToolRuntime,
    ) -> Result<NextTurnParams, ToolError> {
        match self {
            NextTurnSource::Fixed(p) => Ok(p.clone()),
            NextTurnSource::Dynamic(f) => f.next_turn_params(input, runtime).await,
        }
    }
}

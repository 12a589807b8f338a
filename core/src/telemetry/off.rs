//! Without the `otel` feature: the engine's tracing calls compile to nothing (`RunTrace`
//! has no value, so `Option<Arc<RunTrace>>` is always `None`).

use std::sync::Arc;

use serde_json::Value;

use crate::error::ErrorCode;
use crate::model::ModelResponse;
use crate::state::{Message, RunResult, ToolCall};
use crate::tool::Tool;

/// See the `otel` build (read only there).
#[allow(dead_code)]
#[derive(Clone, Copy, Default)]
pub(crate) struct Parents<'a> {
    pub(crate) stored: Option<&'a str>,
    pub(crate) host: Option<&'a str>,
}

/// See the `otel` build (read only there).
#[allow(dead_code)]
pub(crate) struct RunStart<'a> {
    pub(crate) agent_id: &'a str,
    pub(crate) run_id: &'a str,
    pub(crate) resumed: bool,
    pub(crate) store_claim: Option<&'static str>,
}

/// Never constructed without the `otel` feature.
pub(crate) enum RunTrace {}

#[allow(clippy::unused_self)]
impl RunTrace {
    pub(crate) fn start(_: RunStart<'_>, _: Parents<'_>) -> Option<Arc<RunTrace>> {
        None
    }
    pub(crate) fn traceparent(&self) -> String {
        match *self {}
    }
    pub(crate) fn chat_started(&self, _: Option<&str>, _: usize, _: u32, _: &[Message]) {
        match *self {}
    }
    pub(crate) fn chat_completed(&self, _: &ModelResponse) {
        match *self {}
    }
    pub(crate) fn chat_failed(&self, _: ErrorCode, _: &str) {
        match *self {}
    }
    pub(crate) fn tool_decision(&self, _: &str, _: &'static str) {
        match *self {}
    }
    pub(crate) fn tool_started(&self, _: &ToolCall, _: Option<&Tool>) {
        match *self {}
    }
    pub(crate) fn tool_ended(
        &self,
        _: &ToolCall,
        _: Option<&Tool>,
        _: Result<&Value, (ErrorCode, &str)>,
    ) {
        match *self {}
    }
    pub(crate) fn run_ended(&self, _: &RunResult) {
        match *self {}
    }
    #[allow(dead_code)]
    pub(crate) fn served_call_ended(&self, _: Option<&str>) {
        match *self {}
    }
}

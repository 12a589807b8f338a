//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use phaseo_agent::{
    async_trait, create_agent, json, Agent, AgentDefinition, AgentEvent, CancellationToken,
    ContinueOptions, EventListener, ModelClient, ModelError, ModelRequest, ModelResponse,
    RunOptions, RunResult, ScriptedClient, Tool, Value,
};

pub fn scripted(responses: impl IntoIterator<Item = ModelResponse>) -> Arc<ScriptedClient> {
    Arc::new(ScriptedClient::from_responses(responses))
}

pub fn call(id: &str, name: &str, args: &str) -> ModelResponse {
    ModelResponse::tool_calls([(id, name, args)])
}

pub fn text(t: &str) -> ModelResponse {
    ModelResponse::text(t)
}

/// A multi-thread runtime; `shutdown_background` it to not wait for leftover blocking work.
pub fn runtime(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .unwrap()
}

pub fn echo(id: &str) -> Tool {
    Tool::new(id, "Returns its input", Value::Null, |input, _rt| Ok(input))
}

pub fn agent(def: AgentDefinition) -> Agent {
    create_agent(def).expect("valid definition")
}

#[derive(Clone, Default)]
pub struct Recorder(pub Arc<Mutex<Vec<AgentEvent>>>);

impl Recorder {
    pub fn listener(&self) -> Arc<dyn EventListener> {
        let events = self.0.clone();
        Arc::new(move |e: &AgentEvent| events.lock().unwrap().push(e.clone()))
    }

    pub fn types(&self) -> Vec<&'static str> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|e| e.type_name())
            .collect()
    }

    pub fn events(&self) -> Vec<AgentEvent> {
        self.0.lock().unwrap().clone()
    }
}

/// An agent with an approval-gated tool `t` (echo), a manual tool `m`, an interactive
/// tool `h`, and a run paused on an approval of call `c1`.
pub fn approval_agent() -> Agent {
    agent(
        AgentDefinition::new("pauser")
            .tool(echo("t").require_approval())
            .tool(Tool::external("m", "Manual", Value::Null))
            .tool(echo("h").on_tool_called(|_, _| Ok(None))),
    )
}

pub async fn paused(agent: &Agent, name: &str) -> RunResult {
    let client = scripted([call("c1", name, r#"{"x":1}"#)]);
    agent
        .run(RunOptions::new("go", client).context(json!({"k": 0.3})))
        .await
        .expect("pauses")
}

pub fn cont(responses: impl IntoIterator<Item = ModelResponse>) -> ContinueOptions {
    ContinueOptions::new(scripted(responses))
}

/// Records every request as host clients see it, then answers from a script.
pub struct Recording {
    inner: ScriptedClient,
    requests: Mutex<Vec<Value>>,
}

impl Recording {
    pub fn new(responses: impl IntoIterator<Item = ModelResponse>) -> Arc<Self> {
        Arc::new(Self {
            inner: ScriptedClient::from_responses(responses),
            requests: Mutex::new(Vec::new()),
        })
    }

    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }

    pub fn offered(&self, i: usize) -> Vec<String> {
        self.requests()[i]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap().to_owned())
            .collect()
    }
}

#[async_trait]
impl ModelClient for Recording {
    async fn generate(
        &self,
        request: &ModelRequest<'_>,
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        self.requests.lock().unwrap().push(request.to_value());
        self.inner.generate(request, cancel).await
    }
}

/// Definitions without host functions.
pub struct NoHost;

impl phaseo_agent::spec::HostCallbacks for NoHost {
    fn executor(&self, _: u64) -> Arc<dyn phaseo_agent::ToolExecutor> {
        unreachable!()
    }
    fn validator(&self, _: u64, _: Option<Value>) -> Arc<dyn phaseo_agent::Validator> {
        unreachable!()
    }
    fn tool_approval(&self, _: u64) -> Arc<dyn phaseo_agent::ApprovalPredicate> {
        unreachable!()
    }
    fn agent_approval(&self, _: u64) -> Arc<dyn phaseo_agent::ApprovalPredicate> {
        unreachable!()
    }
    fn tool_called(&self, _: u64) -> Arc<dyn phaseo_agent::ToolCalledHook> {
        unreachable!()
    }
    fn response_received(&self, _: u64) -> Arc<dyn phaseo_agent::ResponseReceivedHook> {
        unreachable!()
    }
    fn next_turn_params(&self, _: u64) -> Arc<dyn phaseo_agent::NextTurnParamsProvider> {
        unreachable!()
    }
    fn stop_condition(&self, _: u64) -> Arc<dyn phaseo_agent::StopCondition> {
        unreachable!()
    }
    fn human_review(&self, _: u64) -> Arc<dyn phaseo_agent::HumanReview> {
        unreachable!()
    }
    fn turn_value(&self, _: u64) -> Arc<dyn phaseo_agent::TurnResolver> {
        unreachable!()
    }
    fn mcp_approval(&self, _: u64) -> Arc<dyn phaseo_agent::ApprovalPredicate> {
        unreachable!()
    }
}

/// Reads a state both ways, from its JSON text and as a value: each refuses it with
/// `state_invalid` and `message`.
pub fn assert_state_refused(state: Value, message: &str) {
    for err in [
        RunResult::from_json(&state.to_string()).unwrap_err(),
        RunResult::from_value(state).unwrap_err(),
    ] {
        assert_eq!(err.code(), phaseo_agent::ErrorCode::StateInvalid);
        assert_eq!(err.message(), message);
    }
}

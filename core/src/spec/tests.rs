//! The reader against a recording host: valid definitions make the callbacks of the right
//! kind, and every refusal names what is wrong.

use std::sync::{Arc, Mutex};

use super::*;
use crate::{
    async_trait, create_agent, json, ApprovalPredicate, HumanReview, HumanReviewContext,
    ModelResponse, NextTurnParams, NextTurnParamsProvider, ResponseReceivedHook, ReviewRequest,
    RunStatus, ScriptedClient, StopCondition, StopState, ToolCalledHook, ToolError, ToolExecutor,
    ToolRuntime, TurnContext, TurnResolver, Validator, Value,
};

/// One fake host function: it answers with its id.
struct Fake(u64);

#[async_trait]
impl ToolExecutor for Fake {
    async fn execute(&self, input: Value, _rt: ToolRuntime) -> Result<Value, ToolError> {
        Ok(json!({"callback": self.0, "input": input}))
    }
}

#[async_trait]
impl Validator for Fake {
    async fn validate(&self, value: Value) -> Result<Value, ToolError> {
        Ok(value)
    }
}

#[async_trait]
impl ApprovalPredicate for Fake {
    async fn requires_approval(
        &self,
        _input: &Value,
        _rt: &ToolRuntime,
    ) -> Result<bool, ToolError> {
        Ok(false)
    }
}

#[async_trait]
impl ToolCalledHook for Fake {
    async fn on_tool_called(
        &self,
        _i: Value,
        _rt: ToolRuntime,
    ) -> Result<Option<Value>, ToolError> {
        Ok(None)
    }
}

#[async_trait]
impl ResponseReceivedHook for Fake {
    async fn on_response_received(&self, v: Value, _rt: ToolRuntime) -> Result<Value, ToolError> {
        Ok(v)
    }
}

#[async_trait]
impl NextTurnParamsProvider for Fake {
    async fn next_turn_params(
        &self,
        _i: &Value,
        _rt: &ToolRuntime,
    ) -> Result<NextTurnParams, ToolError> {
        Ok(NextTurnParams::default())
    }
}

#[async_trait]
impl StopCondition for Fake {
    async fn check(&self, _s: &StopState<'_>) -> Result<Option<String>, ToolError> {
        Ok(None)
    }
}

#[async_trait]
impl HumanReview for Fake {
    async fn review(
        &self,
        _c: &HumanReviewContext<'_>,
    ) -> Result<Option<ReviewRequest>, ToolError> {
        Ok(None)
    }
}

#[async_trait]
impl TurnResolver for Fake {
    async fn resolve(&self, _t: &TurnContext<'_>) -> Result<Value, ToolError> {
        Ok(json!("m"))
    }
}

/// Records which factory each id went to.
#[derive(Default)]
struct Recorder {
    made: Mutex<Vec<(&'static str, u64)>>,
    schemas: Mutex<Vec<Option<Value>>>,
    mcp_callbacks: bool,
}

impl Recorder {
    fn note(&self, kind: &'static str, id: u64) -> Arc<Fake> {
        self.made.lock().unwrap().push((kind, id));
        Arc::new(Fake(id))
    }

    fn made(&self) -> Vec<(&'static str, u64)> {
        self.made.lock().unwrap().clone()
    }
}

impl HostCallbacks for Recorder {
    fn executor(&self, id: u64) -> Arc<dyn ToolExecutor> {
        self.note("executor", id)
    }
    fn validator(&self, id: u64, schema: Option<Value>) -> Arc<dyn Validator> {
        self.schemas.lock().unwrap().push(schema);
        self.note("validator", id)
    }
    fn tool_approval(&self, id: u64) -> Arc<dyn ApprovalPredicate> {
        self.note("tool_approval", id)
    }
    fn agent_approval(&self, id: u64) -> Arc<dyn ApprovalPredicate> {
        self.note("agent_approval", id)
    }
    fn tool_called(&self, id: u64) -> Arc<dyn ToolCalledHook> {
        self.note("tool_called", id)
    }
    fn response_received(&self, id: u64) -> Arc<dyn ResponseReceivedHook> {
        self.note("response_received", id)
    }
    fn next_turn_params(&self, id: u64) -> Arc<dyn NextTurnParamsProvider> {
        self.note("next_turn_params", id)
    }
    fn stop_condition(&self, id: u64) -> Arc<dyn StopCondition> {
        self.note("stop_condition", id)
    }
    fn human_review(&self, id: u64) -> Arc<dyn HumanReview> {
        self.note("human_review", id)
    }
    fn turn_value(&self, id: u64) -> Arc<dyn TurnResolver> {
        self.note("turn_value", id)
    }
    #[cfg(feature = "mcp")]
    fn mcp_approval(&self, id: u64) -> Arc<dyn ApprovalPredicate> {
        self.note("mcp_approval", id)
    }
    #[cfg(feature = "mcp")]
    fn mcp_filter(&self, id: u64) -> Option<Arc<dyn crate::mcp::McpToolFilter>> {
        self.mcp_callbacks.then(|| {
            self.note("mcp_filter", id);
            Arc::new(|_: &crate::mcp::McpToolInfo| true) as Arc<dyn crate::mcp::McpToolFilter>
        })
    }
}

fn definition_error(result: Result<impl Sized, AgentError>) -> String {
    match result {
        Ok(_) => panic!("accepted"),
        Err(e) => {
            assert_eq!(
                e.code(),
                crate::ErrorCode::DefinitionInvalid,
                "{}",
                e.message()
            );
            e.message().to_owned()
        }
    }
}

#[test]
fn a_full_definition_makes_each_callback_with_its_kind() {
    let host = Recorder::default();
    let def = agent_definition(
        &host,
        json!({
            "id": "a",
            "tools": [{
                "id": "t", "description": "d", "parameters": {"type": "object"},
                "execute": {"$callback": 1}, "timeoutMs": 500,
                "requireApproval": {"$callback": 2}, "onError": "return-to-model",
                "inputSchema": {"$callback": 3, "schema": {"type": "object"}},
                "outputSchema": {"type": "string"},
                "eventSchema": {"$callback": 4},
                "onToolCalled": {"$callback": 5}, "onResponseReceived": {"$callback": 6},
                "nextTurnParams": {"$callback": 7}, "strict": false, "inputExamples": [{}]
            }],
            "model": {"$callback": 8}, "instructions": "be brief", "temperature": 0.5,
            "maxSteps": 3, "stopWhen": [{"stepCountIs": 2}, {"$callback": 9}],
            "modelRetry": {"maxRetries": 2, "backoffMs": 10},
            "toolExecution": {"toolConcurrency": 4, "onError": "fail-run", "maxOutputChars": 100},
            "requireApproval": {"$callback": 10}, "humanReview": {"$callback": 11},
            "stateSecret": "s1", "stateSecrets": ["s2"], "toolChoice": "auto",
            "parallelToolCalls": true, "activeTools": ["t"],
            "lease": {"durationMs": 2000, "renewEveryMs": 500}
        }),
    )
    .unwrap();
    assert_eq!(
        host.made(),
        vec![
            ("executor", 1),
            ("tool_approval", 2),
            ("validator", 3),
            ("validator", 4),
            ("tool_called", 5),
            ("response_received", 6),
            ("next_turn_params", 7),
            ("turn_value", 8),
            ("stop_condition", 9),
            ("agent_approval", 10),
            ("human_review", 11),
        ]
    );
    assert_eq!(
        *host.schemas.lock().unwrap(),
        vec![Some(json!({"type": "object"})), None]
    );
    assert_eq!(def.id, "a");
    assert_eq!(def.max_steps, 3);
    assert_eq!(def.stop_when.len(), 2);
    assert_eq!(def.state_secrets, vec!["s1".to_owned(), "s2".to_owned()]);
    assert_eq!(def.tool_execution.tool_concurrency, Some(4));
    assert_eq!(def.tools[0].id(), "t");
    assert!(def.output_schema.is_none());
}

#[test]
fn a_host_executor_runs_when_the_model_calls_its_tool() {
    let host = Recorder::default();
    let def = agent_definition(
        &host,
        json!({"id": "a", "tools": [{"id": "echo", "execute": {"$callback": 42}}]}),
    )
    .unwrap();
    let spec = run_options(
        &host,
        json!({"input": "go", "context": {"k": 1}, "maxSteps": 5}),
    )
    .unwrap();
    assert_eq!(spec.overrides.max_steps, Some(5));
    let client = Arc::new(ScriptedClient::from_responses([
        ModelResponse::tool_calls([("c1", "echo", r#"{"x":1}"#)]),
        ModelResponse::text("done"),
    ]));
    let result = crate::exec::block_on(async {
        create_agent(def)
            .unwrap()
            .run(spec.into_run_options(client))
            .await
            .unwrap()
    });
    assert_eq!(result.status(), RunStatus::Completed);
    let state = result.to_value();
    assert_eq!(state["run"]["context"], json!({"k": 1}));
    let tool_message = state["run"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()
        .clone();
    assert!(
        tool_message.to_string().contains("\\\"callback\\\":42"),
        "{tool_message}"
    );
}

#[test]
fn unknown_fields_are_refused_naming_them() {
    let host = Recorder::default();
    let m = definition_error(agent_definition(&host, json!({"id": "a", "colour": 1})));
    assert!(
        m.starts_with("Invalid agent definition: unknown field `colour`"),
        "{m}"
    );
    let m = definition_error(agent_definition(
        &host,
        json!({"id": "a", "tools": [{"id": "t", "colour": 1}]}),
    ));
    assert!(m.contains("unknown field `colour`"), "{m}");
    let m = definition_error(run_options(&host, json!({"input": 1, "colour": 2})));
    assert_eq!(m, "Invalid run options: unknown field `colour`");
    let m = definition_error(continue_options(&host, json!({"input": 1})));
    assert_eq!(m, "Invalid continue options: unknown field `input`");
    let m = definition_error(agent_definition(
        &host,
        json!({"id": "a", "toolExecution": {"concurrency": 2}}),
    ));
    assert!(m.contains("unknown field `concurrency`"), "{m}");
}

#[test]
fn stop_conditions_are_checked() {
    let host = Recorder::default();
    let stop = |v: Value| definition_error(stop_conditions(&host, v));
    assert_eq!(
        stop(json!({"stepCountIs": -1})),
        "stopWhen stepCountIs: a non-negative number is required"
    );
    assert_eq!(
        stop(json!([{"hasToolCall": 3}])),
        "stopWhen hasToolCall: a string is required"
    );
    assert_eq!(
        stop(json!({"stepCountIs": 1, "maxCost": 2})),
        "stopWhen: each condition is an object with one key, e.g. {\"stepCountIs\": 3}"
    );
    assert_eq!(
        stop(json!({"never": true})),
        "stopWhen: unknown condition \"never\""
    );
    assert_eq!(
        stop_conditions(&host, json!({"maxTokensUsed": 10}))
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn bad_values_are_refused_naming_the_field() {
    let host = Recorder::default();
    let def = |v: Value| definition_error(agent_definition(&host, v));
    let m = def(json!({"id": "a", "tools": [{"id": "t", "onError": "explode"}]}));
    assert!(m.starts_with("Invalid definition of tool 't': "), "{m}");
    let m = def(json!({"id": "a", "tools": [{"id": "t", "inputSchema": {"type": 5}}]}));
    assert!(m.starts_with("Invalid inputSchema: "), "{m}");
    let m = def(json!({"id": "a", "lease": {"durationMs": 100, "renewEveryMs": 200}}));
    assert_eq!(m, "Invalid agent definition: lease needs 0 < renewEveryMs < durationMs (got durationMs=100, renewEveryMs=200)");
    let m = def(json!({"id": "a", "maxSteps": "many"}));
    assert!(m.starts_with("Invalid agent definition: "), "{m}");
    let m = definition_error(run_options(&host, json!({"maxSteps": "many"})));
    assert!(
        m.starts_with("Invalid run options: maxSteps: invalid type"),
        "{m}"
    );
    let m = def(json!({"id": "a", "maxSteps": -1}));
    assert_eq!(
        m,
        "Invalid agent definition: maxSteps: must be a whole number of steps, 0 or more, got -1"
    );
    let m = definition_error(run_options(&host, json!({"maxSteps": 2.5})));
    assert_eq!(
        m,
        "Invalid run options: maxSteps: must be a whole number of steps, 0 or more, got 2.5"
    );
    let m = def(json!({"id": "a", "toolExecution": {"maxOutputChars": -1}}));
    assert_eq!(
        m,
        "Invalid agent definition: toolExecution.maxOutputChars: must be a whole number of characters, 0 or more, got -1"
    );
    let m = definition_error(run_options(
        &host,
        json!({"toolExecution": {"maxOutputChars": 0.5}}),
    ));
    assert_eq!(
        m,
        "Invalid run options: toolExecution.maxOutputChars: must be a whole number of characters, 0 or more, got 0.5"
    );
    // A host's own reader of these numbers says it the same way.
    let e = super::whole_count(-1.0, "Invalid agent definition: max_steps", "steps").unwrap_err();
    assert_eq!(e.code(), crate::ErrorCode::DefinitionInvalid);
    assert_eq!(
        e.message(),
        "Invalid agent definition: max_steps: must be a whole number of steps, 0 or more, got -1"
    );
    assert_eq!(super::whole_count(3.0, "maxSteps", "steps").unwrap(), 3);
    let m = definition_error(continue_options(&host, json!({"maxSteps": -3})));
    assert!(
        m.ends_with("maxSteps: must be a whole number of steps, 0 or more, got -3"),
        "{m}"
    );
    let m = definition_error(run_options(&host, json!([1])));
    assert_eq!(m, "run options must be a JSON object");
    let m = definition_error(run_options(&host, json!({"toolChoice": 7})));
    assert!(m.contains("toolChoice"), "{m}");
    let m = definition_error(continue_options(&host, json!({"approvals": [5]})));
    assert_eq!(
        m,
        "Invalid continue options: approvals[0]: a tool call id or {\"toolCallId\", \"reason\"?, \"editedInput\"?}"
    );
    let m = def(json!({"id": "a", "tools": [{"id": "t", "timeoutMs": "soon"}]}));
    assert!(
        m.starts_with("Invalid agent definition: tools[0].timeoutMs: invalid type: string"),
        "{m}"
    );
    let m = def(json!({"id": "a", "tools": [{"id": "t", "requireApproval": "yes"}]}));
    assert_eq!(
        m,
        "Invalid agent definition: tools[0].requireApproval: true, false or {\"$callback\": id}"
    );
}

#[test]
fn continue_options_read_decisions_outputs_and_overrides() {
    let host = Recorder::default();
    let spec = continue_options(
        &host,
        json!({
            "approvals": ["c1", {"toolCallId": "c2", "reason": "ok"}],
            "rejections": [{"toolCallId": "c3"}],
            "toolOutputs": [{"toolCallId": "c4", "output": {"v": 1}}],
            "humanInput": "more", "context": {"c": 2}, "model": "m2",
            "stopWhen": {"$callback": 5}
        }),
    )
    .unwrap();
    assert_eq!(spec.approvals.len(), 2);
    assert_eq!(spec.approvals[1].reason.as_deref(), Some("ok"));
    assert_eq!(spec.rejections[0].tool_call_id, "c3");
    assert_eq!(spec.tool_outputs[0].output, json!({"v": 1}));
    assert_eq!(spec.human_input.as_deref(), Some("more"));
    assert_eq!(spec.context, Some(json!({"c": 2})));
    assert_eq!(spec.overrides.model.as_deref(), Some("m2"));
    assert_eq!(host.made(), vec![("stop_condition", 5)]);
    let empty = continue_options(&host, Value::Null).unwrap();
    assert!(empty.approvals.is_empty() && empty.context.is_none());
}

#[cfg(feature = "mcp")]
#[test]
fn mcp_servers_are_read_and_checked() {
    let host = Recorder {
        mcp_callbacks: true,
        ..Recorder::default()
    };
    let server = mcp_server(
        &host,
        json!({"name": "fs", "command": "srv", "args": ["-v"], "env": {"A": "1"},
               "allowTools": ["read"], "filter": {"$callback": 1},
               "requireApproval": {"$callback": 2}, "timeoutMs": 1000,
               "toolTimeoutsMs": {"read": 50}, "onError": "return-to-model", "optional": true}),
    )
    .unwrap();
    assert_eq!(server.name(), "fs");
    assert_eq!(host.made(), vec![("mcp_filter", 1), ("mcp_approval", 2)]);
    let bad = |v: Value| definition_error(mcp_server(&host, v));
    assert_eq!(
        bad(json!({"name": "x", "command": "a", "url": "http://h"})),
        "Invalid MCP server 'x': give either a command (stdio) or a url (Streamable HTTP)"
    );
    assert_eq!(
        bad(json!({"name": "x", "command": "a", "timeoutMs": -5})),
        "Invalid MCP server 'x': timeoutMs must be a positive number of milliseconds, got -5"
    );
    assert!(
        bad(json!({"name": "x", "command": "a", "requireApproval": 3}))
            .contains("requireApproval must be true, false, a predicate or \"destructive\", got 3")
    );
    assert!(bad(json!({"name": "x", "command": "a", "port": 3}))
        .starts_with("Invalid MCP server 'x': unknown field 'port' of a stdio server (known: name, command, args, env, cwd, allowTools,"));
    assert!(bad(json!({"name": "x", "url": "http://h", "cwd": "/"}))
        .starts_with("Invalid MCP server 'x': unknown field 'cwd' of an HTTP server (known: name, url, headers, bearer/bearerToken,"));
    for (v, message) in [
        (
            json!({"name": "x", "command": 5}),
            "command must be a string, got 5",
        ),
        (
            json!({"name": "x", "command": "a", "args": "-v"}),
            "args must be an array of strings, got \"-v\"",
        ),
        (
            json!({"name": "x", "command": "a", "env": {"A": 1}}),
            "env must be an object of strings, got {\"A\":1}",
        ),
        (
            json!({"name": "x", "url": "http://h", "bearer": true}),
            "bearer must be a string, got true",
        ),
        (
            json!({"name": "x", "command": "a", "denyTools": "crash"}),
            "denyTools must be an array of strings, got \"crash\"",
        ),
        (
            json!({"name": "x", "command": "a", "filter": "f"}),
            "filter must be a function",
        ),
        (
            json!({"name": "x", "command": "a", "optional": "yes"}),
            "optional must be true or false, got \"yes\"",
        ),
        (
            json!({"name": "x", "command": "a", "toolTimeoutsMs": [1]}),
            "toolTimeoutsMs must be an object {toolName: milliseconds}, got [1]",
        ),
        (
            json!({"name": "x", "command": "a", "toolTimeoutsMs": {"t": "1"}}),
            "toolTimeoutsMs[\"t\"] must be a positive number of milliseconds, got \"1\"",
        ),
        (
            json!({"name": "x", "url": "ftp://h"}),
            "url must start with http:// or https://, got \"ftp://h\"",
        ),
        (
            json!({"name": "x"}),
            "give either a command (stdio) or a url (Streamable HTTP)",
        ),
    ] {
        assert_eq!(bad(v), format!("Invalid MCP server 'x': {message}"));
    }
    assert_eq!(
        bad(json!({"command": "a"})),
        "Invalid MCP server: name must be a string"
    );
    assert_eq!(
        bad(json!(3)),
        "Invalid MCP server: a server must be an object, got 3"
    );
    let without = Recorder::default();
    let m = definition_error(mcp_server(
        &without,
        json!({"name": "x", "command": "a", "filter": {"$callback": 1}}),
    ));
    assert_eq!(
        m,
        "Invalid MCP server 'x': a filter function is not supported here"
    );
    let def = agent_definition(
        &host,
        json!({"id": "a", "mcpServers": [{"name": "h", "url": "http://127.0.0.1:1/mcp"}]}),
    )
    .unwrap();
    assert_eq!(def.mcp_servers.len(), 1);
}

#[test]
fn definition_errors_can_be_respelled_in_a_bindings_names() {
    let host = Recorder::default();
    let e = stop_conditions(&host, json!({"stepCountIs": -1}))
        .err()
        .unwrap();
    let e = respell_keys(e, snake_case);
    assert_eq!(
        e.message(),
        "stop_when step_count_is: a non-negative number is required"
    );
    let e = agent_definition(
        &host,
        json!({"id": "a", "tools": [{"id": "maxSteps", "timeoutMs": "x"}]}),
    )
    .err()
    .unwrap();
    assert!(respell_keys(e, snake_case)
        .message()
        .starts_with("Invalid agent definition: tools[0].timeout_ms: invalid type"),);
    let other = AgentError::state_invalid("maxSteps");
    assert_eq!(respell_keys(other, snake_case).message(), "maxSteps");
    assert_eq!(snake_case("toolCallId"), "tool_call_id");
}

#[test]
fn text_readers_refuse_text_that_is_not_json_and_read_the_rest() {
    let host = Recorder::default();
    let message = definition_error(agent_definition_text(&host, "{\"id\": "));
    assert!(
        message.starts_with("agent definition is not valid JSON: "),
        "{message}"
    );
    let message = definition_error(run_options_text(&host, Some("[1,")));
    assert!(
        message.starts_with("run options are not valid JSON: "),
        "{message}"
    );
    let message = definition_error(continue_options_text(&host, Some("nope")));
    assert!(
        message.starts_with("continue options are not valid JSON: "),
        "{message}"
    );

    let def = agent_definition_text(
        &host,
        r#"{"id": "a", "tools": [{"id": "t", "execute": {"$callback": 7}}]}"#,
    )
    .expect("a definition as text");
    assert_eq!(def.id(), "a");
    assert_eq!(host.made(), vec![("executor", 7)]);
    let run = run_options_text(&host, Some(r#"{"input": "hi", "maxSteps": 3}"#)).expect("run");
    assert_eq!(run.input, serde_json::json!("hi"));
    assert_eq!(run.overrides.max_steps, Some(3));
    let defaults = run_options_text(&host, None).expect("no text: defaults");
    assert_eq!(defaults.input, Value::Null);
    let cont = continue_options_text(&host, Some(r#"{"approvals": ["c1"]}"#)).expect("continue");
    assert_eq!(cont.approvals.len(), 1);
}

#[test]
fn option_texts_carry_values_as_deep_as_a_value_may_be() {
    // `{"input": <64 levels>}` is 65 levels from the text's root: the value is within its
    // limit, so the text is not refused for where the value stands.
    let host = Recorder::default();
    let deep = |levels: usize| "[".repeat(levels) + &"]".repeat(levels);
    let text = format!(
        r#"{{"input": {}, "context": {{"k": {}}}}}"#,
        deep(64),
        deep(63)
    );
    let run = run_options_text(&host, Some(&text)).expect("a 64-level input");
    assert_eq!(crate::limits::check_value(&run.input), Ok(()));
    let text = format!(r#"{{"context": {}}}"#, deep(64));
    continue_options_text(&host, Some(&text)).expect("a 64-level context");
    // Past a state's depth the text itself is refused.
    let text = format!(r#"{{"input": {}}}"#, deep(80));
    let message = definition_error(run_options_text(&host, Some(&text)));
    assert!(
        message.starts_with("run options are not valid JSON: value is nested more than"),
        "{message}"
    );
}

#[test]
fn the_model_may_be_named_by_a_models_list_or_a_preset() {
    let host = Recorder::default();
    let fixed = |v: Value| {
        let def = agent_definition(&host, v).unwrap();
        match def.model {
            Some(crate::TurnValue::Fixed(v)) => Some(v),
            Some(crate::TurnValue::Dynamic(_)) => panic!("a per-turn model"),
            None => None,
        }
    };
    assert_eq!(
        fixed(json!({"id": "a", "models": ["m1", "m2"]})),
        Some(json!("m1"))
    );
    assert_eq!(
        fixed(json!({"id": "a", "preset": "fast"})),
        Some(json!("@fast"))
    );
    assert_eq!(
        fixed(json!({"id": "a", "preset": "@fast"})),
        Some(json!("@fast"))
    );
    assert_eq!(
        fixed(json!({"id": "a", "model": "m0", "models": ["m1"], "preset": "p"})),
        Some(json!("m0"))
    );
    assert_eq!(
        fixed(json!({"id": "a", "models": [], "preset": "p"})),
        Some(json!("@p"))
    );
    assert_eq!(fixed(json!({"id": "a", "models": null})), None);

    let def = agent_definition(&host, json!({"id": "a", "models": {"$callback": 3}})).unwrap();
    assert!(matches!(def.model, Some(crate::TurnValue::Dynamic(_))));
    assert_eq!(host.made(), vec![("turn_value", 3)]);

    let bad = |v: Value| definition_error(agent_definition(&host, v));
    assert_eq!(
        bad(json!({"id": "a", "models": ["m1", 2]})),
        "Invalid agent definition: models must be an array of strings, got [\"m1\",2]"
    );
    assert_eq!(
        bad(json!({"id": "a", "preset": ""})),
        "Invalid agent definition: preset must be a non-empty string"
    );
    assert_eq!(
        bad(json!({"id": "a", "preset": 7})),
        "Invalid agent definition: preset must be a non-empty string"
    );
}

#[test]
fn run_options_name_the_model_by_models_or_preset_too() {
    let host = Recorder::default();
    let model = |v: Value| run_options(&host, v).unwrap().overrides.model;
    assert_eq!(model(json!({"models": ["r1", "r2"]})), Some("r1".into()));
    assert_eq!(model(json!({"preset": "fast"})), Some("@fast".into()));
    assert_eq!(
        model(json!({"model": "m", "models": ["r1"], "preset": "p"})),
        Some("m".into())
    );
    assert_eq!(
        model(json!({"models": [], "preset": "p"})),
        Some("@p".into())
    );
    assert!(definition_error(run_options(&host, json!({"models": [1]})))
        .starts_with("Invalid run options: models"));
    assert_eq!(
        definition_error(run_options(&host, json!({"preset": ""}))),
        "Invalid run options: preset must be a non-empty string"
    );
}

#[cfg(feature = "mcp-server")]
#[test]
fn served_mcp_options_are_read_and_checked() {
    use crate::mcp_server::McpServeTransport;
    let host = Recorder::default();
    let (tools, options) = serve_options(
        &host,
        json!({"name": "srv", "version": "2.0.0",
               "tools": [{"id": "add", "description": "Adds", "execute": {"$callback": 1}}],
               "transport": {"type": "http", "port": 0, "path": "/x", "authToken": "t"},
               "toolExecution": {"toolConcurrency": 3, "maxToolCalls": 9}}),
    )
    .unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(
        (options.name.as_str(), options.version.as_str()),
        ("srv", "2.0.0")
    );
    assert_eq!(options.tool_execution.tool_concurrency, Some(3));
    assert_eq!(options.tool_execution.max_tool_calls, Some(9));
    let McpServeTransport::Http(http) = &options.transport else {
        panic!("an HTTP transport")
    };
    assert_eq!(
        (
            http.host.as_str(),
            http.path.as_str(),
            http.auth_token.as_deref()
        ),
        ("127.0.0.1", "/x", Some("t"))
    );
    let (_, plain) = serve_options(&host, json!({"name": "s", "transport": "stdio"})).unwrap();
    assert!(matches!(plain.transport, McpServeTransport::Stdio));
    let bad = |v: Value| definition_error(serve_options(&host, v));
    assert_eq!(
        bad(json!({"name": "s", "transport": {"type": "tcp"}})),
        "Invalid MCP server options: transport.type must be \"stdio\" or \"http\", got \"tcp\""
    );
    assert_eq!(
        bad(json!({"name": "s", "transport": {"type": "http", "port": "80"}})),
        "Invalid MCP server options: transport.port: invalid type: string \"80\", expected u16"
    );
    assert_eq!(
        bad(json!({"name": "s", "agent": {"id": "a"},
                   "tools": [{"id": "t", "execute": {"$callback": 1}}]})),
        "Invalid MCP server options: give tools or agent (served as one tool), not both"
    );
    assert_eq!(
        bad(json!({"name": "s", "description": "d"})),
        "Invalid MCP server options: description describes a served agent; give agent"
    );
    assert!(
        bad(json!({"name": "s", "agent": {"id": "a", "toolz": []}})).contains("toolz"),
        "an agent definition is checked like any"
    );
    assert_eq!(
        bad(json!({"name": "s", "tool": []})),
        "Invalid MCP server options: unknown field `tool`, expected one of `name`, `version`, `tools`, `agent`, `description`, `transport`, `toolExecution`"
    );
    let (served, _) = serve_options(
        &host,
        json!({"name": "s", "description": "Researches",
               "agent": {"id": "researcher", "instructions": "Research"}}),
    )
    .unwrap();
    assert_eq!(served.len(), 1);
    assert!(served[0].is_agent_tool());
    assert_eq!(
        (served[0].id.as_str(), served[0].description.as_str()),
        ("researcher", "Researches")
    );
    assert_eq!(
        served[0].parameters,
        crate::agent_tool::default_agent_tool_parameters()
    );
}

#[test]
fn tool_annotations_are_read_and_checked() {
    let host = Recorder::default();
    let t = tool(
        &host,
        json!({"id": "t", "execute": {"$callback": 1},
               "annotations": {"readOnlyHint": true, "title": "T"}}),
    )
    .unwrap();
    assert_eq!(
        t.tool_annotations(),
        Some(&json!({"readOnlyHint": true, "title": "T"}))
    );
    let bad = |v: Value| definition_error(tool(&host, v));
    assert_eq!(
        bad(json!({"id": "t", "annotations": {"readOnlyHint": "yes"}})),
        "Invalid definition of tool 't': annotations.readOnlyHint must be a boolean, got \"yes\""
    );
    assert_eq!(
        bad(json!({"id": "t", "annotations": {"hint": true}})),
        "Invalid definition of tool 't': annotations: unknown key 'hint' (readOnlyHint, destructiveHint, idempotentHint, openWorldHint, title)"
    );
}

#[test]
fn numeric_stop_thresholds_fire_when_reached_as_written() {
    use crate::state::{StepResult, Usage};
    use crate::StopState;
    let host = Recorder::default();
    let conditions = stop_conditions(
        &host,
        json!([{"stepCountIs": 1.5}, {"maxTokensUsed": 20.5}, {"maxDuration": 2.5}]),
    )
    .unwrap();
    let fired = |steps: usize, tokens: u64, ms: u64| -> Vec<Option<String>> {
        let usage = Usage {
            total_tokens: tokens,
            ..Usage::default()
        };
        let state = StopState {
            steps: &[] as &[StepResult],
            usage: &usage,
            elapsed_ms: ms,
            step_count: steps,
        };
        conditions
            .iter()
            .map(|c| crate::exec::block_on(c.check(&state)).unwrap())
            .collect()
    };
    // Below each threshold (a cut-off 1.5 → 1 or 20.5 → 20 would fire here).
    assert_eq!(fired(1, 20, 2), [None, None, None]);
    assert_eq!(
        fired(2, 21, 3),
        [
            Some("step_count:1.5".to_owned()),
            Some("max_tokens:20.5".to_owned()),
            Some("max_duration:2.5".to_owned())
        ]
    );
    // Whole thresholds keep their reasons' form.
    let whole = stop_conditions(&host, json!({"stepCountIs": 2})).unwrap();
    let usage = Usage::default();
    let state = StopState {
        steps: &[],
        usage: &usage,
        elapsed_ms: 0,
        step_count: 2,
    };
    assert_eq!(
        crate::exec::block_on(whole[0].check(&state)).unwrap(),
        Some("step_count:2".to_owned())
    );
}

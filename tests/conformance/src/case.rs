//! Builds a case's agent from its JSON description, with real Rust closures as executors,
//! validators, predicates and hooks.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use phaseo_agent::spec;
use phaseo_agent::{
    async_trait, create_agent, finish_reason_is, has_tool_call, human_review_fn, json, max_cost,
    max_duration, max_tokens_used, step_count_is, validator_fn, Agent, AgentDefinition, AgentError,
    ApprovalPredicate, AsToolOptions, JsonSchema, ModelRetry, NextTurnParams, OnError,
    ReviewRequest, Role, StopCondition, Tool, ToolError, ToolExecutionConfig, ToolRuntime,
    Validator, Value,
};

/// What executors record during one case step.
#[derive(Default)]
pub struct Observations {
    pub executed: Mutex<Vec<String>>,
    pub cancelled: Mutex<Vec<String>>,
    pub running: AtomicUsize,
    pub max_running: AtomicUsize,
    pub active: AtomicUsize,
}

impl Observations {
    pub fn reset(&self) {
        self.executed.lock().unwrap().clear();
        self.cancelled.lock().unwrap().clear();
        self.running.store(0, Ordering::SeqCst);
        self.max_running.store(0, Ordering::SeqCst);
    }
}

/// Marks an executor as running until dropped; records a cancellation seen by dropping.
struct RunningGuard {
    obs: Arc<Observations>,
    call_id: String,
    runtime: ToolRuntime,
    sleeping: bool,
}

impl RunningGuard {
    fn start(obs: &Arc<Observations>, runtime: &ToolRuntime) -> Self {
        obs.executed
            .lock()
            .unwrap()
            .push(runtime.tool_call().id.to_string());
        obs.active.fetch_add(1, Ordering::SeqCst);
        let now = obs.running.fetch_add(1, Ordering::SeqCst) + 1;
        obs.max_running.fetch_max(now, Ordering::SeqCst);
        Self {
            obs: obs.clone(),
            call_id: runtime.tool_call().id.to_string(),
            runtime: runtime.clone(),
            sleeping: false,
        }
    }

    fn record_cancelled(&self) {
        self.obs
            .cancelled
            .lock()
            .unwrap()
            .push(self.call_id.clone());
    }
}

impl Drop for RunningGuard {
    fn drop(&mut self) {
        // Rust cancels a future by dropping it: a sleep dropped after its call was
        // cancelled has observed that cancellation.
        if self.sleeping && self.runtime.is_cancelled() {
            self.record_cancelled();
        }
        self.obs.running.fetch_sub(1, Ordering::SeqCst);
        self.obs.active.fetch_sub(1, Ordering::SeqCst);
    }
}

fn runtime_value(rt: &ToolRuntime) -> Result<Value, ToolError> {
    if rt.run_id().is_empty() {
        return Err(ToolError::new("runtime run id is empty"));
    }
    Ok(json!({
        "runId": "<run>",
        "agentId": rt.agent_id(),
        "stepIndex": rt.step_index(),
        "toolCallId": rt.tool_call().id,
    }))
}

async fn perform_async(
    behavior: Arc<Vec<Value>>,
    input: Value,
    rt: ToolRuntime,
    obs: Arc<Observations>,
) -> Result<Value, ToolError> {
    let mut guard = RunningGuard::start(&obs, &rt);
    for action in behavior.iter() {
        let (key, arg) = single_entry(action)?;
        match key {
            "return" => return Ok(arg.clone()),
            "returnInput" => return Ok(input),
            "throw" => return Err(ToolError::new(text(arg))),
            "progress" => rt.emit_progress(arg.clone()),
            "setContext" => rt.set_context(arg.clone()).map_err(|e| e.to_string())?,
            "returnContext" => return Ok(rt.context().clone()),
            "returnRuntime" => return runtime_value(&rt),
            "throwUntilAttempt" => throw_until_attempt(action, arg, &rt)?,
            "returnAttempt" => return Ok(json!(rt.attempt())),
            "returnIdempotencyKey" => return idempotency_key(&rt),
            "sleepMs" => {
                guard.sleeping = true;
                let ms = millis(arg);
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(ms)) => {}
                    _ = rt.cancelled() => {
                        guard.sleeping = false;
                        guard.record_cancelled();
                        return Err(ToolError::new("cancelled"));
                    }
                }
                guard.sleeping = false;
            }
            "blockingSleepMs" => {
                let ms = millis(arg);
                let _ = tokio::task::spawn_blocking(move || {
                    std::thread::sleep(Duration::from_millis(ms))
                })
                .await;
            }
            other => return Err(ToolError::new(format!("unsupported behavior {other}"))),
        }
    }
    Ok(Value::Null)
}

fn perform_sync(
    behavior: &[Value],
    input: Value,
    rt: ToolRuntime,
    obs: &Arc<Observations>,
) -> Result<Value, ToolError> {
    let guard = RunningGuard::start(obs, &rt);
    for action in behavior {
        let (key, arg) = single_entry(action)?;
        match key {
            "return" => return Ok(arg.clone()),
            "returnInput" => return Ok(input),
            "throw" => return Err(ToolError::new(text(arg))),
            "progress" => rt.emit_progress(arg.clone()),
            "setContext" => rt.set_context(arg.clone()).map_err(|e| e.to_string())?,
            "returnContext" => return Ok(rt.context().clone()),
            "returnRuntime" => return runtime_value(&rt),
            "throwUntilAttempt" => throw_until_attempt(action, arg, &rt)?,
            "returnAttempt" => return Ok(json!(rt.attempt())),
            "returnIdempotencyKey" => return idempotency_key(&rt),
            "sleepMs" => {
                let until = std::time::Instant::now() + Duration::from_millis(millis(arg));
                while std::time::Instant::now() < until {
                    if rt.is_cancelled() {
                        guard.record_cancelled();
                        return Err(ToolError::new("cancelled"));
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            "blockingSleepMs" => std::thread::sleep(Duration::from_millis(millis(arg))),
            other => return Err(ToolError::new(format!("unsupported behavior {other}"))),
        }
    }
    Ok(Value::Null)
}

const ACTIONS: &[&str] = &[
    "return",
    "returnInput",
    "throw",
    "progress",
    "setContext",
    "sleepMs",
    "returnContext",
    "returnRuntime",
    "blockingSleepMs",
    "throwUntilAttempt",
    "returnAttempt",
    "returnIdempotencyKey",
];

/// Fails with the action's `message` while the runtime's attempt is below `n`.
fn throw_until_attempt(action: &Value, n: &Value, rt: &ToolRuntime) -> Result<(), ToolError> {
    let n = n
        .as_f64()
        .ok_or_else(|| ToolError::new("throwUntilAttempt: a number is required"))?;
    if f64::from(rt.attempt()) < n {
        return Err(ToolError::new(text(
            action.get("message").unwrap_or(&Value::Null),
        )));
    }
    Ok(())
}

/// The runtime's idempotency key with its run id (checked) written as `<run>`.
fn idempotency_key(rt: &ToolRuntime) -> Result<Value, ToolError> {
    let key = rt.idempotency_key();
    match key
        .strip_prefix(rt.run_id())
        .and_then(|k| k.strip_prefix(':'))
    {
        Some(rest) if !rt.run_id().is_empty() => Ok(json!(format!("<run>:{rest}"))),
        _ => Err(ToolError::new(format!(
            "idempotency key {key:?} does not start with the run id {:?}",
            rt.run_id()
        ))),
    }
}

fn single_entry(action: &Value) -> Result<(&str, &Value), ToolError> {
    action
        .as_object()
        .and_then(|m| m.iter().find(|(k, _)| *k != "message"))
        .map(|(k, v)| (k.as_str(), v))
        .ok_or_else(|| ToolError::new(format!("behavior action must be an object: {action}")))
}

fn text(v: &Value) -> String {
    v.as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| v.to_string())
}

/// A host-native validator backed by the core's public JSON Schema helper.
fn schema_validator(schema: &Value) -> Result<Arc<dyn Validator>, String> {
    let compiled = JsonSchema::compile(schema)?;
    Ok(validator_fn(move |v| {
        compiled.check(&v).map_err(ToolError::from)?;
        Ok(v)
    }))
}

fn input_equals(expected: &Value, input: &Value) -> bool {
    expected.as_object().is_some_and(|m| {
        m.iter()
            .all(|(k, v)| input.get(k).is_some_and(|x| crate::compare::json_eq(x, v)))
    })
}

struct AgentRule(Value);

#[async_trait]
impl ApprovalPredicate for AgentRule {
    async fn requires_approval(&self, input: &Value, rt: &ToolRuntime) -> Result<bool, ToolError> {
        if let Some(ids) = self.0.get("toolIds").and_then(Value::as_array) {
            return Ok(ids
                .iter()
                .any(|id| id.as_str() == Some(&*rt.tool_call().name)));
        }
        if let Some(expected) = self.0.get("inputEquals") {
            return Ok(input_equals(expected, input));
        }
        Err(ToolError::new(format!(
            "unsupported requireApproval {}",
            self.0
        )))
    }
}

fn check_keys(obj: &Value, allowed: &[&str], what: &str) -> Result<(), String> {
    if let Some(m) = obj.as_object() {
        for k in m.keys() {
            if !allowed.contains(&k.as_str()) {
                return Err(format!("{what}: unsupported key {k:?}"));
            }
        }
    }
    Ok(())
}

/// Stop conditions from their declarative form.
pub fn stop_conditions(list: &Value) -> Result<Vec<Arc<dyn StopCondition>>, String> {
    let items: Vec<&Value> = match list {
        Value::Array(a) => a.iter().collect(),
        Value::Object(_) => vec![list],
        Value::Null => vec![],
        other => return Err(format!("stopWhen: unsupported {other}")),
    };
    items
        .into_iter()
        .map(|c| {
            let (k, v) = single_entry(c).map_err(|e| e.message)?;
            Ok(match k {
                "stepCountIs" => step_count_is(whole(v, "stepCountIs")? as usize),
                "maxTokensUsed" => max_tokens_used(whole(v, "maxTokensUsed")?),
                "maxCost" => max_cost(v.as_f64().ok_or("maxCost")?),
                "maxDuration" => max_duration(whole(v, "maxDuration")?),
                "hasToolCall" => has_tool_call(text(v)),
                "finishReasonIs" => finish_reason_is(text(v)),
                other => return Err(format!("stopWhen: unsupported condition {other}")),
            })
        })
        .collect()
}

pub fn tool_execution(v: &Value) -> Result<Result<ToolExecutionConfig, AgentError>, String> {
    check_keys(
        v,
        &[
            "toolConcurrency",
            "onError",
            "maxOutputChars",
            "maxToolCalls",
        ],
        "toolExecution",
    )?;
    let read = || -> Result<Result<ToolExecutionConfig, AgentError>, String> {
        let mut config = ToolExecutionConfig {
            // Values below 1 are raised to 1 (docs/behaviour.md §2.9).
            tool_concurrency: number(v, "toolConcurrency")?.map(|n| n.max(0.0) as usize),
            ..ToolExecutionConfig::default()
        };
        if let Some(p) = v.get("onError").filter(|p| !p.is_null()) {
            let p = p
                .as_str()
                .ok_or("toolExecution.onError: a string is required")?;
            match OnError::parse(p) {
                Ok(policy) => config.on_error = Some(policy),
                Err(m) => return Ok(Err(AgentError::definition_invalid(m))),
            }
        }
        if let Some(n) = number(v, "maxOutputChars")? {
            match spec::whole_count(n, "toolExecution.maxOutputChars", "characters") {
                Ok(n) => config.max_output_chars = Some(n),
                Err(e) => return Ok(Err(e)),
            }
        }
        if let Some(n) = number(v, "maxToolCalls")? {
            match spec::at_least_one(n, "toolExecution.maxToolCalls") {
                Ok(n) => config.max_tool_calls = Some(n as usize),
                Err(e) => return Ok(Err(e)),
            }
        }
        Ok(Ok(config))
    };
    read()
}

/// The number a case wrote under `key` of `v`, compared by value (`2.0` is 2); `Err` for
/// a value that is not a number (the case cannot be expressed as the Rust API takes it).
pub fn number(v: &Value, key: &str) -> Result<Option<f64>, String> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(n) => n
            .as_f64()
            .map(Some)
            .ok_or_else(|| format!("{key}: {n} is not a number")),
    }
}

/// A whole number of 0 or more as a case writes it (`3.0` is 3); `Err` names another value,
/// which the Rust API cannot take.
fn whole(v: &Value, what: &str) -> Result<u64, String> {
    v.as_f64()
        .filter(|n| *n >= 0.0 && n.fract() == 0.0)
        .map(|n| n as u64)
        .ok_or_else(|| format!("{what}: {v} is not a whole number of 0 or more"))
}

/// A tool definition the SDK refuses, named as the definition reader names it.
fn refused(id: &str, message: String) -> AgentError {
    AgentError::definition_invalid(format!("Invalid definition of tool '{id}': {message}"))
}

/// A wait in milliseconds as a case writes it (a negative one is no wait).
fn millis(n: &Value) -> u64 {
    n.as_f64().map_or(0, |n| n.max(0.0) as u64)
}

pub fn model_retry(v: &Value) -> Result<ModelRetry, String> {
    check_keys(v, &["maxRetries", "backoffMs"], "modelRetry")?;
    // As every binding reads a host's numbers.
    Ok(ModelRetry::from_numbers(
        number(v, "maxRetries")?,
        number(v, "backoffMs")?,
    ))
}

fn build_tool(t: &Value, obs: &Arc<Observations>) -> Result<Result<Tool, AgentError>, String> {
    check_keys(
        t,
        &[
            "id",
            "description",
            "parameters",
            "inputSchema",
            "outputSchema",
            "eventSchema",
            "timeoutMs",
            "onError",
            "requireApproval",
            "nextTurnParams",
            "manual",
            "onToolCalled",
            "onResponseReceived",
            "behavior",
            "asGenerator",
            "async",
            "strict",
            "inputExamples",
            "maxCalls",
            "retry",
            "deferLoading",
        ],
        "tool",
    )?;
    let id = t
        .get("id")
        .and_then(Value::as_str)
        .ok_or("tool without id")?
        .to_owned();
    let description = t
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let parameters = t.get("parameters").cloned().unwrap_or(Value::Null);
    let behavior = Arc::new(
        t.get("behavior")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
    );
    for action in behavior.iter() {
        let (key, _) = single_entry(action).map_err(|e| e.message)?;
        let size = action.as_object().map_or(0, |m| m.len());
        let wanted = if key == "throwUntilAttempt" { 2 } else { 1 };
        if !ACTIONS.contains(&key)
            || size != wanted
            || (wanted == 2 && action.get("message").is_none())
        {
            return Err(format!("tool {id:?}: unsupported behavior action {action}"));
        }
    }
    let manual = t.get("manual").and_then(Value::as_bool).unwrap_or(false);
    let sync = t.get("async").and_then(Value::as_bool) == Some(false);
    let mut tool = if manual {
        Tool::external(id.clone(), description, parameters)
    } else if sync {
        let obs = obs.clone();
        let behavior = behavior.clone();
        Tool::new(id.clone(), description, parameters, move |input, rt| {
            perform_sync(&behavior, input, rt, &obs)
        })
    } else {
        let obs = obs.clone();
        Tool::new_async(id.clone(), description, parameters, move |input, rt| {
            perform_async(behavior.clone(), input, rt, obs.clone())
        })
    };
    if let Some(s) = t.get("inputSchema").filter(|v| !v.is_null()) {
        tool = tool.input_schema(schema_validator(s)?);
    }
    if let Some(s) = t.get("outputSchema").filter(|v| !v.is_null()) {
        tool = tool.output_schema(schema_validator(s)?);
    }
    if let Some(s) = t.get("eventSchema").filter(|v| !v.is_null()) {
        tool = tool.event_schema(schema_validator(s)?);
    }
    if let Some(ms) = t.get("timeoutMs").and_then(Value::as_f64) {
        tool = tool.timeout_ms(ms);
    }
    if let Some(p) = t.get("onError").filter(|p| !p.is_null()) {
        let p = p.as_str().ok_or("onError: a string is required")?;
        match OnError::parse(p) {
            Ok(policy) => tool = tool.on_error(policy),
            Err(m) => return Ok(Err(refused(&id, m))),
        }
    }
    match t.get("requireApproval") {
        None | Some(Value::Null) | Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) => tool = tool.require_approval(),
        Some(rule) => {
            let expected = rule
                .get("inputEquals")
                .cloned()
                .ok_or("tool requireApproval: unsupported rule")?;
            tool = tool.approval(move |input, _| input_equals(&expected, input));
        }
    }
    if let Some(p) = t.get("nextTurnParams").filter(|v| !v.is_null()) {
        tool = tool.next_turn_params(NextTurnParams::from_value(p.clone())?);
    }
    if let Some(deferred) = t.get("deferLoading").and_then(Value::as_bool) {
        tool = tool.defer_loading(deferred);
    }
    if let Some(n) = number(t, "maxCalls")? {
        match spec::at_least_one(n, "maxCalls") {
            Ok(n) => tool = tool.max_calls(n),
            Err(e) => return Ok(Err(refused(&id, e.message().to_owned()))),
        }
    }
    if let Some(r) = t.get("retry").filter(|v| !v.is_null()) {
        check_keys(r, &["maxAttempts", "backoffMs"], "retry")?;
        // As the definition format reads it: `maxAttempts` is required.
        let Some(attempts) = number(r, "maxAttempts")? else {
            return Ok(Err(refused(
                &id,
                "retry.maxAttempts is required".to_owned(),
            )));
        };
        match spec::tool_retry(attempts, number(r, "backoffMs")?) {
            Ok(retry) => tool = tool.retry(retry),
            Err(e) => return Ok(Err(refused(&id, e.message().to_owned()))),
        }
    }
    if let Some(strict) = t.get("strict").and_then(Value::as_bool) {
        tool = tool.strict(strict);
    }
    if let Some(examples) = t.get("inputExamples").filter(|v| !v.is_null()) {
        let examples = examples
            .as_array()
            .ok_or("inputExamples: a list is required")?;
        tool = tool.input_examples(examples.clone());
    }
    match t.get("onToolCalled") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if s == "pause" => tool = tool.on_tool_called(|_, _| Ok(None)),
        Some(v) => {
            let value = v
                .get("return")
                .cloned()
                .ok_or("onToolCalled: unsupported form")?;
            tool = tool.on_tool_called(move |_, _| Ok(Some(value.clone())));
        }
    }
    match t.get("onResponseReceived") {
        None | Some(Value::Null) => {}
        Some(v) => {
            let key = v
                .get("wrap")
                .and_then(Value::as_str)
                .ok_or("onResponseReceived: unsupported form")?
                .to_owned();
            tool = tool.on_response_received(move |output, _| Ok(json!({ key.clone(): output })));
        }
    }
    Ok(Ok(tool))
}

/// The case's agent: `Err` when the case cannot be expressed, `Ok(Err)` when the SDK
/// refuses the definition.
pub fn build_agent(
    case: &Value,
    obs: &Arc<Observations>,
) -> Result<Result<Agent, AgentError>, String> {
    let a = case.get("agent").ok_or("case without agent")?;
    check_keys(
        a,
        &[
            "id",
            "model",
            "instructions",
            "maxSteps",
            "stopWhen",
            "modelRetry",
            "toolExecution",
            "temperature",
            "maxOutputTokens",
            "topP",
            "outputSchema",
            "requireApproval",
            "humanReview",
            "stateSecret",
            "toolChoice",
            "parallelToolCalls",
            "activeTools",
        ],
        "agent",
    )?;
    let mut def = AgentDefinition::new(
        a.get("id")
            .and_then(Value::as_str)
            .ok_or("agent without id")?,
    );
    if let Some(m) = a.get("model").and_then(Value::as_str) {
        def = def.model(m);
    }
    if let Some(i) = a.get("instructions").and_then(Value::as_str) {
        def = def.instructions(i);
    }
    if let Some(n) = number(a, "maxSteps")? {
        match spec::whole_count(n, "Invalid agent definition: maxSteps", "steps") {
            Ok(n) => def = def.max_steps(n),
            Err(e) => return Ok(Err(e)),
        }
    }
    for c in stop_conditions(a.get("stopWhen").unwrap_or(&Value::Null))? {
        def = def.stop_when(c);
    }
    if let Some(r) = a.get("modelRetry") {
        def = def.model_retry(model_retry(r)?);
    }
    if let Some(t) = a.get("toolExecution") {
        match tool_execution(t)? {
            Ok(config) => def = def.tool_execution(config),
            Err(e) => return Ok(Err(e)),
        }
    }
    if let Some(v) = a.get("temperature").and_then(Value::as_f64) {
        def = def.temperature(v);
    }
    if let Some(v) = number(a, "maxOutputTokens")?.map(|n| n.max(0.0) as u64) {
        def = def.max_output_tokens(v);
    }
    if let Some(v) = a.get("topP").and_then(Value::as_f64) {
        def = def.top_p(v);
    }
    if let Some(s) = a.get("outputSchema").filter(|v| !v.is_null()) {
        def = def.output_schema(schema_validator(s)?);
    }
    if let Some(v) = a.get("toolChoice").filter(|v| !v.is_null()) {
        def = def.tool_choice(v.clone());
    }
    if let Some(v) = a.get("parallelToolCalls").and_then(Value::as_bool) {
        def = def.parallel_tool_calls(v);
    }
    if let Some(v) = a.get("activeTools").filter(|v| !v.is_null()) {
        def = def.active_tools(v.clone());
    }
    if let Some(rule) = a.get("requireApproval").filter(|v| !v.is_null()) {
        def = def.require_approval(Arc::new(AgentRule(rule.clone())));
    }
    match a.get("stateSecret") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => def = def.state_secret(s.clone()),
        Some(Value::Array(list)) => {
            let secrets = list
                .iter()
                .map(|s| s.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or("stateSecret: a list must hold strings")?;
            def = def.state_secrets(secrets);
        }
        Some(other) => return Err(format!("stateSecret: unsupported {other}")),
    }
    if let Some(review) = a.get("humanReview").filter(|v| !v.is_null()) {
        let spec = review
            .get("pauseOnFinal")
            .cloned()
            .ok_or("humanReview: unsupported form")?;
        def = def.human_review(human_review_fn(move |ctx| {
            let users = ctx.messages.iter().filter(|m| m.role == Role::User).count();
            (ctx.is_final && users == 1).then(|| ReviewRequest {
                reason: spec
                    .get("reason")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
                payload: spec.get("payload").cloned().unwrap_or(Value::Null),
            })
        }));
    }
    for t in case
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let tool = match t.get("asAgent") {
            None => match build_tool(t, obs)? {
                Ok(tool) => tool,
                Err(refused) => return Ok(Err(refused)),
            },
            Some(nested) => match agent_tool(t, nested, obs)? {
                Ok(tool) => tool,
                Err(refused) => return Ok(Err(refused)),
            },
        };
        def = def.tool(tool);
    }
    Ok(create_agent(def))
}

/// A tool `{"id", "description"?, "asAgent": {"agent", "tools"}}`: the nested agent built
/// like the case's own, registered with `as_tool` (docs/behaviour.md §18).
fn agent_tool(
    t: &Value,
    nested: &Value,
    obs: &Arc<Observations>,
) -> Result<Result<Tool, AgentError>, String> {
    check_keys(t, &["id", "description", "asAgent"], "tool")?;
    check_keys(nested, &["agent", "tools"], "asAgent")?;
    let agent = match build_agent(nested, obs)? {
        Ok(agent) => agent,
        Err(refused) => return Ok(Err(refused)),
    };
    let mut options = AsToolOptions::new();
    if let Some(id) = t.get("id").and_then(Value::as_str) {
        options = options.id(id);
    }
    if let Some(d) = t.get("description").and_then(Value::as_str) {
        options = options.description(d);
    }
    Ok(agent.as_tool(options))
}

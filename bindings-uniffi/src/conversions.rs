//! The uniffi records of `defs.rs` turned into core values: definitions, options,
//! clients and their checks.

use std::sync::Arc;

use phaseo_agent as pa;
use phaseo_agent::Value;

use crate::api::CancelToken;
use crate::defs::*;
use crate::errors::PhaseoError;
use crate::traits::*;

/// A caller's value (a run's input or context, an output supplied on continue). Text that
/// is not JSON is a broken argument (`definition_invalid`); a value beyond the limits of
/// docs/behaviour.md §7 is refused as the core refuses the values it is handed, `state_invalid`
/// (`Invalid run input: value is nested more than 64 levels deep`), whatever the host's
/// own conversion let through.
fn parse_value_option(text: &str, what: &str) -> Result<Value, PhaseoError> {
    pa::parse_json_text(text).map_err(|e| {
        if is_limit_error(&e) {
            PhaseoError::new(
                pa::ErrorCode::StateInvalid,
                format!("Invalid run {what}: {e}"),
            )
        } else {
            PhaseoError::definition(format!("{what} is not valid JSON: {e}"))
        }
    })
}

/// Whether `message` is a [`pa::ValueLimitError`]'s (the reader reports them as text).
fn is_limit_error(message: &str) -> bool {
    let integer = pa::ValueLimitError::IntegerTooLarge("\0".to_owned()).to_string();
    let (before, after) = integer.split_once('\0').unwrap_or((&integer, ""));
    message == pa::ValueLimitError::TooDeep.to_string()
        || (message.starts_with(before) && message.ends_with(after))
}

fn count(n: i64) -> usize {
    usize::try_from(n.max(0)).unwrap_or(usize::MAX)
}

impl From<OnError> for pa::OnError {
    fn from(e: OnError) -> Self {
        match e {
            OnError::FailRun => pa::OnError::FailRun,
            OnError::ReturnToModel => pa::OnError::ReturnToModel,
        }
    }
}

impl From<ToolChoice> for pa::ToolChoice {
    fn from(c: ToolChoice) -> Self {
        match c {
            ToolChoice::Auto => pa::ToolChoice::Auto,
            ToolChoice::Required => pa::ToolChoice::Required,
            ToolChoice::None => pa::ToolChoice::None,
            ToolChoice::Tool { tool_id } => pa::ToolChoice::Tool(tool_id),
        }
    }
}

pub(crate) fn core_tool(def: ToolDefinition) -> Result<pa::Tool, PhaseoError> {
    let id = def.id;
    let invalid =
        |e: String| PhaseoError::definition(format!("Invalid definition of tool '{id}': {e}"));
    let parameters = match &def.parameters_json {
        Some(text) => {
            serde_json::from_str(text).map_err(|e| invalid(format!("parameters: {e}")))?
        }
        None => Value::Null,
    };
    let executor: Option<Arc<dyn pa::ToolExecutor>> = match (def.execute, def.blocking_tool) {
        (Some(_), Some(_)) => {
            return Err(invalid("give execute or blockingTool, not both".to_owned()))
        }
        (Some(exec), None) => Some(Arc::new(HostExecutor(exec))),
        (None, Some(tool)) => Some(Arc::new(crate::jvm_dispatch::JvmBlockingExecutor { tool })),
        (None, None) => None,
    };
    let mut tool = match executor {
        Some(exec) => pa::Tool::with_executor(id.clone(), def.description, parameters, exec),
        None => pa::Tool::external(id.clone(), def.description, parameters),
    };
    if let Some(ms) = def.timeout_ms {
        tool = tool.timeout_ms(ms);
    }
    if let Some(p) = def.approval {
        tool = tool.approval_rule(pa::Approval::Predicate(Arc::new(HostApproval(p))));
    } else if def.require_approval {
        tool = tool.require_approval();
    }
    if let Some(policy) = def.on_error {
        tool = tool.on_error(policy.into());
    }
    if let Some(v) = def.input_schema {
        tool = tool.input_schema(Arc::new(HostValidator(v)));
    }
    if let Some(v) = def.output_schema {
        tool = tool.output_schema(Arc::new(HostValidator(v)));
    }
    if let Some(v) = def.event_schema {
        tool = tool.event_schema(Arc::new(HostValidator(v)));
    }
    if let Some(h) = def.on_tool_called {
        tool = tool.on_tool_called_hook(Arc::new(HostToolCalled(h)));
    }
    if let Some(h) = def.on_response_received {
        tool = tool.on_response_received_hook(Arc::new(HostResponseReceived(h)));
    }
    if let Some(p) = def.next_turn_params {
        tool = tool.next_turn_params_provider(Arc::new(HostNextTurn(p)));
    } else if let Some(text) = def.next_turn_params_json {
        let value =
            serde_json::from_str(&text).map_err(|e| invalid(format!("nextTurnParams: {e}")))?;
        tool = tool.next_turn_params(pa::NextTurnParams::from_value(value).map_err(invalid)?);
    }
    tool = tool.strict(def.strict);
    if let Some(text) = def.input_examples_json {
        // Read with the core's limits (depth, 64-bit integers), as host values are.
        let examples =
            match pa::parse_json_text(&text).map_err(|e| invalid(format!("inputExamples: {e}")))? {
                Value::Array(list) => list,
                other => {
                    return Err(invalid(format!(
                        "inputExamples must be a JSON array of objects, got {other}"
                    )))
                }
            };
        tool = tool.input_examples(examples);
    }
    if let Some(n) = def.max_calls {
        let n = pa::spec::at_least_one(n as f64, "maxCalls")
            .map_err(|e| invalid(e.message().to_owned()))?;
        tool = tool.max_calls(n);
    }
    if let Some(r) = def.retry {
        let retry = pa::spec::tool_retry(r.max_attempts as f64, Some(r.backoff_ms as f64))
            .map_err(|e| invalid(e.message().to_owned()))?;
        tool = tool.retry(retry);
    }
    tool = tool.defer_loading(def.defer_loading);
    if let Some(text) = def.annotations_json {
        let value = pa::parse_json_text(&text).map_err(|e| invalid(format!("annotations: {e}")))?;
        pa::check_annotations(&value).map_err(invalid)?;
        tool = tool.annotations(value);
    }
    tool.check()?;
    Ok(tool)
}

fn stop_conditions(items: Vec<StopWhen>) -> Vec<Arc<dyn pa::StopCondition>> {
    items
        .into_iter()
        .map(|s| match s {
            StopWhen::StepCountIs { steps } => pa::step_count_is(count(steps)),
            StopWhen::MaxTokensUsed { tokens } => pa::max_tokens_used(tokens.max(0) as u64),
            StopWhen::MaxCost { cost } => pa::max_cost(cost),
            StopWhen::MaxDuration { ms } => pa::max_duration(ms.max(0) as u64),
            StopWhen::HasToolCall { name } => pa::has_tool_call(name),
            StopWhen::FinishReasonIs { reason } => pa::finish_reason_is(reason),
            StopWhen::Custom { condition } => {
                Arc::new(HostStop(condition)) as Arc<dyn pa::StopCondition>
            }
        })
        .collect()
}

impl From<ModelRetry> for pa::ModelRetry {
    fn from(r: ModelRetry) -> Self {
        pa::ModelRetry::from_numbers(Some(r.max_retries as f64), Some(r.backoff_ms))
    }
}

impl TryFrom<ToolExecution> for pa::ToolExecutionConfig {
    type Error = PhaseoError;

    fn try_from(t: ToolExecution) -> Result<Self, PhaseoError> {
        let max_tool_calls = t
            .max_tool_calls
            .map(|n| pa::spec::at_least_one(n as f64, "toolExecution.maxToolCalls"))
            .transpose()?
            .map(|n| n as usize);
        Ok(pa::ToolExecutionConfig {
            tool_concurrency: t.tool_concurrency.map(count),
            on_error: t.on_error.map(Into::into),
            max_output_chars: t
                .max_output_chars
                .map(|n| {
                    pa::spec::whole_count(n as f64, "toolExecution.maxOutputChars", "characters")
                })
                .transpose()?,
            max_tool_calls,
        })
    }
}

fn turn_value(
    fixed: Option<Value>,
    resolver: Option<Arc<dyn TurnResolver>>,
) -> Option<pa::TurnValue> {
    match (resolver, fixed) {
        (Some(r), _) => Some(pa::TurnValue::Dynamic(Arc::new(HostTurn(r)))),
        (None, Some(v)) => Some(pa::TurnValue::Fixed(v)),
        (None, None) => None,
    }
}

pub(crate) fn core_agent(def: AgentDefinition) -> Result<pa::AgentDefinition, PhaseoError> {
    let mut out = pa::AgentDefinition::new(def.id);
    for tool in def.tools {
        out = out.tool(tool.tool.clone());
    }
    if let Some(v) = turn_value(def.model.map(Value::from), def.model_fn) {
        out = out.model(v);
    }
    if let Some(v) = turn_value(def.instructions.map(Value::from), def.instructions_fn) {
        out = out.instructions(v);
    }
    if let Some(v) = turn_value(def.temperature.map(Value::from), def.temperature_fn) {
        out = out.temperature(v);
    }
    if let Some(v) = turn_value(
        def.max_output_tokens.map(|n| Value::from(n.max(0))),
        def.max_output_tokens_fn,
    ) {
        out = out.max_output_tokens(v);
    }
    if let Some(v) = turn_value(def.top_p.map(Value::from), def.top_p_fn) {
        out = out.top_p(v);
    }
    if let Some(n) = def.max_steps {
        out = out.max_steps(pa::spec::whole_count(
            n as f64,
            "Invalid agent definition: maxSteps",
            "steps",
        )?);
    }
    for c in stop_conditions(def.stop_when) {
        out = out.stop_when(c);
    }
    if let Some(r) = def.model_retry {
        out = out.model_retry(r.into());
    }
    if let Some(t) = def.tool_execution {
        out = out.tool_execution(t.try_into()?);
    }
    if let Some(v) = def.output_schema {
        out = out.output_schema(Arc::new(HostValidator(v)));
    }
    if let Some(p) = def.require_approval {
        out = out.require_approval(Arc::new(HostAgentApproval(p)));
    }
    if let Some(h) = def.human_review {
        out = out.human_review(Arc::new(HostReview(h)));
    }
    if !def.state_secrets.is_empty() {
        out = out.state_secrets(def.state_secrets);
    }
    let choice = def.tool_choice.map(|c| pa::ToolChoice::from(c).to_value());
    if let Some(v) = turn_value(choice, def.tool_choice_fn) {
        out = out.tool_choice(v);
    }
    if let Some(p) = def.parallel_tool_calls {
        out = out.parallel_tool_calls(p);
    }
    if let Some(v) = turn_value(def.active_tools.map(Value::from), def.active_tools_fn) {
        out = out.active_tools(v);
    }
    if let Some(s) = def.store {
        out = out.store(s.store.clone());
    }
    for server in def.mcp_servers {
        out = out.mcp_server(crate::mcp::core_server(server));
    }
    if let Some(l) = def.lease {
        out = out.lease(pa::store::LeaseConfig::from_ms(
            l.duration_ms as f64,
            l.renew_every_ms as f64,
            ["durationMs", "renewEveryMs"],
        )?);
    }
    Ok(out)
}

fn core_overrides(o: Option<RunOverrides>) -> Result<pa::RunOverrides, PhaseoError> {
    let Some(o) = o else {
        return Ok(pa::RunOverrides::default());
    };
    Ok(pa::RunOverrides {
        model: o.model,
        max_steps: o
            .max_steps
            .map(|n| pa::spec::whole_count(n as f64, "Invalid run options: maxSteps", "steps"))
            .transpose()?,
        stop_when: o.stop_when.map(stop_conditions),
        model_retry: o.model_retry.map(Into::into),
        tool_execution: o.tool_execution.map(TryInto::try_into).transpose()?,
        temperature: o.temperature,
        max_output_tokens: o.max_output_tokens.map(|n| n.max(0) as u64),
        top_p: o.top_p,
        tool_choice: o.tool_choice.map(Into::into),
        parallel_tool_calls: o.parallel_tool_calls,
        active_tools: o.active_tools,
    })
}

/// The core's model client of a host's choice.
pub(crate) fn core_client(c: Client) -> Arc<dyn pa::ModelClient> {
    match c {
        Client::Host { client } => Arc::new(HostModel(client)),
        Client::HostStreaming { client } => Arc::new(pa::HostModel(HostStreamingFunctions(client))),
        Client::Scripted { client } => client.client.clone(),
        Client::Test { client } => client.client.clone(),
        Client::Http { client } => client.client.clone(),
    }
}

fn run_token(cancel: Option<Arc<CancelToken>>) -> pa::CancellationToken {
    cancel.map(|c| c.token.child_token()).unwrap_or_default()
}

/// The core options, and the token cancelled when the host stops waiting.
pub(crate) fn core_run_options(
    o: RunOptions,
) -> Result<(pa::RunOptions, pa::CancellationToken), PhaseoError> {
    let token = run_token(o.cancel);
    let mut options = pa::RunOptions::new(
        parse_value_option(&o.input_json, "input")?,
        core_client(o.client),
    )
    .overrides(core_overrides(o.overrides)?)
    .cancel(token.clone());
    options.traceparent = o.traceparent;
    if let Some(text) = o.context_json {
        options = options.context(parse_value_option(&text, "context")?);
    }
    if let Some(text) = o.messages_json {
        let messages: Vec<pa::Message> = serde_json::from_str(&text)
            .map_err(|e| PhaseoError::definition(format!("messages: {e}")))?;
        options = options.messages(messages);
    }
    if let Some(l) = o.on_event {
        options = options.on_event(Arc::new(HostListener(l)));
    }
    if let Some(s) = o.store {
        options = options.store(s.store.clone());
    }
    Ok((options, token))
}

fn decisions(items: Vec<Decision>) -> Result<Vec<pa::ToolDecision>, PhaseoError> {
    items
        .into_iter()
        .map(|d| {
            let edited_input = d
                .edited_input_json
                .map(|text| {
                    parse_value_option(&text, &format!("edited input for {}", d.tool_call_id))
                })
                .transpose()?;
            Ok(pa::ToolDecision {
                tool_call_id: d.tool_call_id,
                reason: d.reason,
                edited_input,
            })
        })
        .collect()
}

pub(crate) fn core_continue_options(
    o: ContinueOptions,
) -> Result<(pa::ContinueOptions, pa::CancellationToken), PhaseoError> {
    let token = run_token(o.cancel);
    let mut options = pa::ContinueOptions::new(core_client(o.client))
        .overrides(core_overrides(o.overrides)?)
        .cancel(token.clone());
    options.approvals = decisions(o.approvals)?;
    options.rejections = decisions(o.rejections)?;
    for out in o.tool_outputs {
        let value = parse_value_option(
            &out.output_json,
            &format!("tool output for {}", out.tool_call_id),
        )?;
        options = options.output(out.tool_call_id, value);
    }
    for answer in o.responses {
        let value = parse_value_option(
            &answer.output_json,
            &format!("response for {}", answer.tool_call_id),
        )?;
        options = options.respond(answer.tool_call_id, value);
    }
    options.human_input = o.human_input;
    options.traceparent = o.traceparent;
    if let Some(text) = o.context_json {
        options.context = Some(parse_value_option(&text, "context")?);
    }
    if let Some(l) = o.on_event {
        options = options.on_event(Arc::new(HostListener(l)));
    }
    if let Some(s) = o.store {
        options = options.store(s.store.clone());
    }
    Ok((options, token))
}

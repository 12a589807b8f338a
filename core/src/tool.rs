//! Tool definitions (docs/behaviour.md §2) and the traits a host implements for them.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};

use crate::error::{AgentError, ToolError};
use crate::next_turn::{NextTurnParams, NextTurnParamsProvider, NextTurnSource};
use crate::schema::{JsonSchema, Validator};
use crate::tool_runtime::ToolRuntime;

/// The future of a tool call's execution ([`ToolExecutor::execute_call`]).
pub type ExecuteFuture<'a> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Value, ToolError>> + Send + 'a>>;

/// Runs a tool call. Bindings wrap host callables (Python `def`/`async def`/generators, JS
/// functions, Kotlin `suspend` functions) in one adapter implementing this trait.
///
/// Cancellation: `runtime.cancellation_token()` is cancelled on timeout or run cancellation;
/// the core also stops polling (drops) the returned future at that moment.
#[async_trait]
pub trait ToolExecutor: Send + Sync {
    /// Executes the call with its validated input.
    async fn execute(&self, input: Value, runtime: ToolRuntime) -> Result<Value, ToolError>;

    /// Executes the call whose validated input is `runtime.tool_call().input`: what the run
    /// loop calls. The default hands a copy of that input to [`execute`](Self::execute); an
    /// executor that only reads its input (one that writes it as JSON for its host)
    /// overrides this and skips the copy.
    /// (Not an `async fn`: the default returns [`execute`](Self::execute)'s own future, with
    /// no second allocation around it.)
    fn execute_call<'a>(&'a self, runtime: ToolRuntime) -> ExecuteFuture<'a> {
        let input = Value::clone(&runtime.tool_call().input);
        self.execute(input, runtime)
    }

    /// Whether this executor writes its input as JSON text (a host that receives text):
    /// then a run keeps each call's argument text when it is already the input's canonical
    /// text, for [`ToolCall::input_text`](crate::ToolCall::input_text) to give it (copying
    /// it costs less than writing the value again). `false` by default.
    fn writes_input_text(&self) -> bool {
        false
    }
}

/// Decides per call whether it needs approval (tool level `(input, runtime)`; agent level
/// `(call, runtime)` with the call's input in `runtime.tool_call()`).
#[async_trait]
pub trait ApprovalPredicate: Send + Sync {
    /// `true` when the call must be approved before it runs.
    async fn requires_approval(
        &self,
        input: &Value,
        runtime: &ToolRuntime,
    ) -> Result<bool, ToolError>;
}

/// A host approval predicate's answer as the decision: null, `false`, `0` and `""` → no
/// approval needed; anything else → needed (one reading for every binding).
pub fn approval_from_answer(answer: &Value) -> bool {
    match answer {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

/// Interactive hook run before an interactive tool: `None` pauses the call for human input
/// (pending kind `hitl`), a value becomes the call's result at once.
#[async_trait]
pub trait ToolCalledHook: Send + Sync {
    /// Called with the validated input.
    async fn on_tool_called(
        &self,
        input: Value,
        runtime: ToolRuntime,
    ) -> Result<Option<Value>, ToolError>;
}

/// Validates or transforms an output supplied on continue for a manual or hitl call.
#[async_trait]
pub trait ResponseReceivedHook: Send + Sync {
    /// Returns the output to use.
    async fn on_response_received(
        &self,
        output: Value,
        runtime: ToolRuntime,
    ) -> Result<Value, ToolError>;
}

/// What happens when a call fails (docs/behaviour.md §2.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum OnError {
    /// The run fails and the error is raised (default).
    #[default]
    FailRun,
    /// The model receives `{"error": "<message>"}` as the tool message and the run goes on.
    ReturnToModel,
}

impl OnError {
    /// Parses `"fail-run"` / `"return-to-model"` (also accepts `_` for `-`).
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.replace('_', "-").as_str() {
            "fail-run" => Ok(OnError::FailRun),
            "return-to-model" => Ok(OnError::ReturnToModel),
            other => Err(format!(
                "onError must be \"fail-run\" or \"return-to-model\", got {other:?}"
            )),
        }
    }

    /// The canonical string.
    pub fn as_str(self) -> &'static str {
        match self {
            OnError::FailRun => "fail-run",
            OnError::ReturnToModel => "return-to-model",
        }
    }
}

/// Whether a tool's calls need approval.
#[derive(Clone, Default)]
pub enum Approval {
    /// Never (default).
    #[default]
    Never,
    /// Always.
    Always,
    /// Decided per call.
    Predicate(Arc<dyn ApprovalPredicate>),
}

/// The JSON Schema used when a tool has no `parameters`.
pub fn default_parameters() -> Value {
    json!({"type": "object", "additionalProperties": true})
}

/// A tool the model may call: its description and schema, its executor (absent for a
/// manual tool), validators, approval, timeout, hooks and error policy.
///
/// ```
/// use phaseo_agent::{Tool, json};
/// let add = Tool::new("add", "Adds two numbers", json!({"type": "object"}), |input, _rt| {
///     Ok(json!(input["a"].as_i64().unwrap_or(0) + input["b"].as_i64().unwrap_or(0)))
/// });
/// assert_eq!(add.id(), "add");
/// ```
#[derive(Clone)]
pub struct Tool {
    pub(crate) id: String,
    pub(crate) description: String,
    pub(crate) parameters: Value,
    pub(crate) parameters_explicit: bool,
    pub(crate) parameters_schema: Option<JsonSchema>,
    pub(crate) executor: Option<Arc<dyn ToolExecutor>>,
    pub(crate) input_schema: Option<Arc<dyn Validator>>,
    pub(crate) output_schema: Option<Arc<dyn Validator>>,
    pub(crate) event_schema: Option<Arc<dyn Validator>>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) approval: Approval,
    pub(crate) on_error: Option<OnError>,
    pub(crate) on_tool_called: Option<Arc<dyn ToolCalledHook>>,
    pub(crate) on_response_received: Option<Arc<dyn ResponseReceivedHook>>,
    pub(crate) next_turn_params: Option<NextTurnSource>,
    pub(crate) strict: bool,
    pub(crate) input_examples: Option<Vec<Value>>,
    pub(crate) annotations: Option<Arc<Value>>,
    /// How many of its calls a run admits (docs/behaviour.md §15).
    pub(crate) max_calls: Option<u32>,
    /// Attempts of a call that throws or times out.
    pub(crate) retry: Option<ToolRetry>,
    /// Offered only once `tool_search` found it (docs/behaviour.md §17).
    pub(crate) defer_loading: bool,
    pub(crate) problems: Vec<String>,
    /// Set on the tools listed from an MCP server (their spans say so).
    pub(crate) mcp: Option<Arc<McpOrigin>>,
    /// The agent an agent tool runs (docs/behaviour.md §18).
    pub(crate) nested: Option<Arc<crate::agent_tool::NestedAgent>>,
    /// `parameters` were generated from a host type (docs/behaviour.md §20): `strict(true)`
    /// then sends their strict form.
    pub(crate) generated_parameters: bool,
    /// The generated schema before its strict form: a `null` the strict form asked for
    /// where this leaves the member optional is dropped before the input validator.
    pub(crate) loose_parameters: Option<Arc<Value>>,
}

/// The MCP server a listed tool comes from.
#[derive(Debug)]
pub(crate) struct McpOrigin {
    /// The server's name in the agent definition.
    #[allow(dead_code)]
    pub(crate) server: String,
    /// The tool's name on the server (the agent's id may carry a prefix).
    #[allow(dead_code)]
    pub(crate) tool: String,
    /// `pipe` (stdio) or `tcp` (Streamable HTTP).
    #[allow(dead_code)]
    pub(crate) transport: &'static str,
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool")
            .field("id", &self.id)
            .field("manual", &self.executor.is_none())
            .finish()
    }
}

struct SyncExecutor<F>(Arc<F>);

#[async_trait]
impl<F> ToolExecutor for SyncExecutor<F>
where
    F: Fn(Value, ToolRuntime) -> Result<Value, ToolError> + Send + Sync + 'static,
{
    async fn execute(&self, input: Value, runtime: ToolRuntime) -> Result<Value, ToolError> {
        let f = Arc::clone(&self.0);
        // Blocking closures run off the async workers so they never stall the loop.
        match tokio::task::spawn_blocking(move || f(input, runtime)).await {
            Ok(result) => result,
            // Re-raised here so the run loop reports it like any executor panic.
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(e) => Err(ToolError::new(e.to_string())),
        }
    }
}

struct AsyncExecutor<F>(F);

#[async_trait]
impl<F, Fut> ToolExecutor for AsyncExecutor<F>
where
    F: Fn(Value, ToolRuntime) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    async fn execute(&self, input: Value, runtime: ToolRuntime) -> Result<Value, ToolError> {
        (self.0)(input, runtime).await
    }
}

struct FnPredicate<F>(F);

#[async_trait]
impl<F> ApprovalPredicate for FnPredicate<F>
where
    F: Fn(&Value, &ToolRuntime) -> bool + Send + Sync + 'static,
{
    async fn requires_approval(
        &self,
        input: &Value,
        runtime: &ToolRuntime,
    ) -> Result<bool, ToolError> {
        Ok((self.0)(input, runtime))
    }
}

struct FnToolCalled<F>(F);

#[async_trait]
impl<F> ToolCalledHook for FnToolCalled<F>
where
    F: Fn(Value, ToolRuntime) -> Result<Option<Value>, ToolError> + Send + Sync + 'static,
{
    async fn on_tool_called(
        &self,
        input: Value,
        runtime: ToolRuntime,
    ) -> Result<Option<Value>, ToolError> {
        (self.0)(input, runtime)
    }
}

struct FnResponseReceived<F>(F);

#[async_trait]
impl<F> ResponseReceivedHook for FnResponseReceived<F>
where
    F: Fn(Value, ToolRuntime) -> Result<Value, ToolError> + Send + Sync + 'static,
{
    async fn on_response_received(
        &self,
        output: Value,
        runtime: ToolRuntime,
    ) -> Result<Value, ToolError> {
        (self.0)(output, runtime)
    }
}

struct FnValidator<F>(F);

#[async_trait]
impl<F> Validator for FnValidator<F>
where
    F: Fn(Value) -> Result<Value, ToolError> + Send + Sync + 'static,
{
    async fn validate(&self, value: Value) -> Result<Value, ToolError> {
        (self.0)(value)
    }
}

/// Checks a tool's own annotations (docs/behaviour.md §19): an object whose keys are
/// `readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint` (booleans) and
/// `title` (a string). The message names the key that is wrong.
pub fn check_annotations(annotations: &Value) -> Result<(), String> {
    let Value::Object(map) = annotations else {
        return Err(format!("annotations must be an object, got {annotations}"));
    };
    for (key, value) in map {
        match key.as_str() {
            "readOnlyHint" | "destructiveHint" | "idempotentHint" | "openWorldHint" => {
                if !value.is_boolean() {
                    return Err(format!("annotations.{key} must be a boolean, got {value}"));
                }
            }
            "title" => {
                if !value.is_string() {
                    return Err(format!("annotations.title must be a string, got {value}"));
                }
            }
            other => {
                return Err(format!(
                    "annotations: unknown key '{other}' (readOnlyHint, destructiveHint, idempotentHint, openWorldHint, title)"
                ))
            }
        }
    }
    Ok(())
}

/// Wraps a closure as a [`Validator`]: it returns the (possibly transformed) value or an
/// error message.
pub fn validator_fn<F>(f: F) -> Arc<dyn Validator>
where
    F: Fn(Value) -> Result<Value, ToolError> + Send + Sync + 'static,
{
    Arc::new(FnValidator(f))
}

/// A tool's retries: `max_attempts` attempts in all (1: no retry), the n-th retry after
/// `backoff × n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolRetry {
    /// Every attempt counts, the first too (at least 1).
    pub max_attempts: u32,
    /// The base delay between attempts (default 0).
    pub backoff: Duration,
}

impl ToolRetry {
    /// `max_attempts` attempts, `backoff_ms × n` ms before the n-th retry.
    pub fn new(max_attempts: u32, backoff_ms: u64) -> Self {
        Self {
            max_attempts,
            backoff: Duration::from_millis(backoff_ms),
        }
    }
}

impl Tool {
    fn base(id: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        let mut tool = Tool {
            id: id.into(),
            description: description.into(),
            parameters: Value::Null,
            parameters_explicit: false,
            parameters_schema: None,
            executor: None,
            input_schema: None,
            output_schema: None,
            event_schema: None,
            timeout: None,
            approval: Approval::Never,
            on_error: None,
            on_tool_called: None,
            on_response_received: None,
            next_turn_params: None,
            strict: false,
            input_examples: None,
            annotations: None,
            max_calls: None,
            defer_loading: false,
            retry: None,
            problems: Vec::new(),
            mcp: None,
            nested: None,
            generated_parameters: false,
            loose_parameters: None,
        };
        if tool.id.is_empty() {
            tool.problems.push("id must not be empty".to_owned());
        }
        tool.set_parameters(parameters);
        tool
    }

    fn set_parameters(&mut self, parameters: Value) {
        self.problems.retain(|p| !p.starts_with("parameters: "));
        self.parameters_explicit = !parameters.is_null();
        let parameters = if parameters.is_null() {
            default_parameters()
        } else {
            parameters
        };
        match JsonSchema::compile(&parameters) {
            Ok(schema) => self.parameters_schema = Some(schema),
            Err(e) => {
                self.parameters_schema = None;
                self.problems.push(format!("parameters: {e}"));
            }
        }
        self.parameters = parameters;
    }

    /// A tool with a synchronous executor. The closure runs on a blocking thread
    /// (`spawn_blocking`), so it may block. `parameters` = `Value::Null` means
    /// `{"type":"object","additionalProperties":true}`.
    pub fn new<F>(
        id: impl Into<String>,
        description: impl Into<String>,
        parameters: Value,
        execute: F,
    ) -> Self
    where
        F: Fn(Value, ToolRuntime) -> Result<Value, ToolError> + Send + Sync + 'static,
    {
        Self::base(id, description, parameters).executor(Arc::new(SyncExecutor(Arc::new(execute))))
    }

    /// A tool with an asynchronous executor (a closure returning a future).
    pub fn new_async<F, Fut>(
        id: impl Into<String>,
        description: impl Into<String>,
        parameters: Value,
        execute: F,
    ) -> Self
    where
        F: Fn(Value, ToolRuntime) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        Self::base(id, description, parameters).executor(Arc::new(AsyncExecutor(execute)))
    }

    /// A tool whose executor is any [`ToolExecutor`] (what bindings use).
    pub fn with_executor(
        id: impl Into<String>,
        description: impl Into<String>,
        parameters: Value,
        executor: Arc<dyn ToolExecutor>,
    ) -> Self {
        Self::base(id, description, parameters).executor(executor)
    }

    /// A manual tool: no executor; each call pauses the run until the application supplies
    /// its output on continue.
    pub fn external(
        id: impl Into<String>,
        description: impl Into<String>,
        parameters: Value,
    ) -> Self {
        Self::base(id, description, parameters)
    }

    fn executor(mut self, executor: Arc<dyn ToolExecutor>) -> Self {
        self.executor = Some(executor);
        self
    }

    /// Descriptive hints about the tool (MCP `annotations`: `readOnlyHint`,
    /// `destructiveHint`, …), shown to approval predicates as
    /// [`ToolRuntime::tool_annotations`].
    pub fn annotations(mut self, annotations: Value) -> Self {
        self.annotations = Some(Arc::new(annotations));
        self
    }

    /// The tool's annotations, if any.
    pub fn tool_annotations(&self) -> Option<&Value> {
        self.annotations.as_deref()
    }

    /// Replaces the `parameters` schema (`Value::Null` restores the default).
    pub fn parameters(mut self, parameters: Value) -> Self {
        self.generated_parameters = false;
        self.loose_parameters = None;
        self.set_parameters(parameters);
        self
    }

    /// Every call needs approval.
    pub fn require_approval(mut self) -> Self {
        self.approval = Approval::Always;
        self
    }

    /// Sets the approval rule.
    pub fn approval_rule(mut self, approval: Approval) -> Self {
        self.approval = approval;
        self
    }

    /// Approval decided per call by a closure of `(input, runtime)`.
    pub fn approval<F>(self, predicate: F) -> Self
    where
        F: Fn(&Value, &ToolRuntime) -> bool + Send + Sync + 'static,
    {
        self.approval_rule(Approval::Predicate(Arc::new(FnPredicate(predicate))))
    }

    /// Per-call time limit.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Per-call time limit in milliseconds, as bindings receive it: a negative or
    /// non-finite value makes the definition invalid.
    pub fn timeout_ms(mut self, ms: f64) -> Self {
        if !ms.is_finite() || ms < 0.0 {
            self.problems
                .push(format!("timeoutMs must be a non-negative number, got {ms}"));
        } else {
            self.timeout = Some(crate::duration::from_ms(ms));
        }
        self
    }

    /// At most `n` (≥ 1) calls of this tool in a run: a call beyond is refused with an
    /// error the model sees, and the run goes on (docs/behaviour.md §15).
    pub fn max_calls(mut self, n: u32) -> Self {
        if n == 0 {
            self.problems
                .push("maxCalls must be a whole number of at least 1, got 0".to_owned());
        } else {
            self.max_calls = Some(n);
        }
        self
    }

    /// Keeps this tool out of the model's offer until the built-in `tool_search` finds
    /// it; from then on it is offered to the end of the run (docs/behaviour.md §17).
    pub fn defer_loading(mut self, deferred: bool) -> Self {
        self.defer_loading = deferred;
        self
    }

    /// Whether this tool is offered only once found by `tool_search`.
    pub fn is_deferred(&self) -> bool {
        self.defer_loading
    }

    /// Retries a call whose executor throws or times out (docs/behaviour.md §15).
    pub fn retry(mut self, retry: ToolRetry) -> Self {
        if retry.max_attempts == 0 {
            self.problems
                .push("retry.maxAttempts must be a whole number of at least 1, got 0".to_owned());
        } else {
            self.retry = Some(retry);
        }
        self
    }

    /// The error policy of this tool (wins over the agent's `toolExecution.onError`).
    pub fn on_error(mut self, policy: OnError) -> Self {
        self.on_error = Some(policy);
        self
    }

    /// A host-native validator of the arguments, run after `parameters`; its returned value
    /// replaces the input. When `parameters` are absent and the validator can describe
    /// itself, its schema is sent to the model.
    ///
    /// A schema taken from the validator is generated (docs/behaviour.md §20): its `$schema`
    /// key is left out, and with `strict` its strict form is sent ([`crate::make_strict`]).
    pub fn input_schema(mut self, validator: Arc<dyn Validator>) -> Self {
        if !self.parameters_explicit {
            if let Some(mut schema) = validator.json_schema() {
                if let Value::Object(m) = &mut schema {
                    m.remove("$schema");
                }
                if self.strict {
                    let strict = crate::make_strict(&schema);
                    self.loose_parameters = Some(Arc::new(std::mem::replace(&mut schema, strict)));
                }
                self.set_parameters(schema);
                self.generated_parameters = true;
            }
        }
        self.input_schema = Some(validator);
        self
    }

    /// Validator of results (and of outputs supplied on continue).
    pub fn output_schema(mut self, validator: Arc<dyn Validator>) -> Self {
        self.output_schema = Some(validator);
        self
    }

    /// Validator of progress values.
    pub fn event_schema(mut self, validator: Arc<dyn Validator>) -> Self {
        self.event_schema = Some(validator);
        self
    }

    /// Interactive hook (closure form): `Ok(None)` pauses for human input.
    pub fn on_tool_called<F>(self, hook: F) -> Self
    where
        F: Fn(Value, ToolRuntime) -> Result<Option<Value>, ToolError> + Send + Sync + 'static,
    {
        self.on_tool_called_hook(Arc::new(FnToolCalled(hook)))
    }

    /// Interactive hook (trait form).
    pub fn on_tool_called_hook(mut self, hook: Arc<dyn ToolCalledHook>) -> Self {
        self.on_tool_called = Some(hook);
        self
    }

    /// Transforms outputs supplied on continue (closure form).
    pub fn on_response_received<F>(self, hook: F) -> Self
    where
        F: Fn(Value, ToolRuntime) -> Result<Value, ToolError> + Send + Sync + 'static,
    {
        self.on_response_received_hook(Arc::new(FnResponseReceived(hook)))
    }

    /// Transforms outputs supplied on continue (trait form).
    pub fn on_response_received_hook(mut self, hook: Arc<dyn ResponseReceivedHook>) -> Self {
        self.on_response_received = Some(hook);
        self
    }

    /// Fixed overrides for the next model request after a call that produced a result.
    pub fn next_turn_params(mut self, params: NextTurnParams) -> Self {
        self.next_turn_params = Some(NextTurnSource::Fixed(params));
        self
    }

    /// Per-call overrides for the next model request.
    pub fn next_turn_params_provider(mut self, provider: Arc<dyn NextTurnParamsProvider>) -> Self {
        self.next_turn_params = Some(NextTurnSource::Dynamic(provider));
        self
    }

    /// Asks the model for schema-exact arguments (docs/behaviour.md §12, OpenAI `strict`). The
    /// `parameters` must then be strict-compatible ([`crate::strict_problem`]), which is
    /// checked when the agent is defined. Parameters generated from a type
    /// ([`Tool::typed`]) are made strict-compatible here ([`crate::make_strict`]).
    pub fn strict(mut self, strict: bool) -> Self {
        if strict && self.generated_parameters && !self.strict {
            let loose = self.parameters.clone();
            self.set_parameters(crate::make_strict(&loose));
            self.loose_parameters = Some(Arc::new(loose));
        }
        self.strict = strict;
        self
    }

    /// Example argument objects sent with the tool where the client supports them. Each
    /// must be a JSON object.
    pub fn input_examples(mut self, examples: Vec<Value>) -> Self {
        self.problems.retain(|p| !p.starts_with("inputExamples"));
        if let Some(i) = examples.iter().position(|e| !e.is_object()) {
            self.problems.push(format!(
                "inputExamples[{i}] must be an object of arguments, got {}",
                crate::json::to_canonical_string(&examples[i])
            ));
        }
        self.input_examples = Some(examples);
        self
    }

    /// Whether the tool asks for schema-exact arguments.
    pub fn is_strict(&self) -> bool {
        self.strict
    }

    /// The example argument objects, if any.
    pub fn examples(&self) -> Option<&[Value]> {
        self.input_examples.as_deref()
    }

    /// The tool id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The description sent to the model.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The JSON Schema sent to the model.
    pub fn parameters_schema(&self) -> &Value {
        &self.parameters
    }

    /// Whether the tool is manual (no executor).
    pub fn is_manual(&self) -> bool {
        self.executor.is_none()
    }

    /// Checks the definition: `definition_invalid` naming every problem.
    pub fn check(&self) -> Result<(), AgentError> {
        let mut problems = self.problems.clone();
        // Checked here, not in `strict()`: `input_schema` may still replace `parameters`.
        if self.strict && self.parameters_schema.is_some() {
            if let Some(p) = crate::strict_schema::strict_problem(&self.parameters) {
                problems.push(format!("strict: parameters are not strict-compatible: {p}"));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(AgentError::definition_invalid(format!(
                "Invalid definition of tool '{}': {}",
                self.id,
                problems.join("; ")
            )))
        }
    }

    pub(crate) fn check_input(&self, input: &Value) -> Result<(), String> {
        match &self.parameters_schema {
            Some(schema) => schema.check(input),
            None => Ok(()),
        }
    }
}

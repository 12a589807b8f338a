//! Agents defined from Python and their run entry points (blocking and asyncio).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use phaseo_agent::spec;
use phaseo_agent::store::LeaseConfig;
use phaseo_agent::{
    create_agent, Agent, AgentDefinition, AgentError, CancellationToken, ContinueOptions, Message,
    ModelRetry, OnError, RunOptions, RunOverrides, RunResult, ToolDecision, ToolExecutionConfig,
    ToolOutput, TurnValue, Value,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{arg_value, camel_keys};
use crate::errors::{no_panic, no_panic_in_definition, to_pyerr};
use crate::hooks::{client_from_py, HostListener, HostReview, HostTurn, PyStopCondition};
use crate::host::{bridge_for, HostFn, EVENT_LOOP};
use crate::mcp::PyMcpServer;
use crate::result::PyRunResult;
use crate::store::PyRunStore;
use crate::stream::PyAgentStream;
use crate::tool::{validator, PyAgentApproval, PyTool};

/// Cancels a run from Python: pass it as `cancel=` and call `cancel()`.
#[pyclass(name = "CancelToken", module = "phaseo_agent", frozen)]
#[derive(Default)]
pub struct PyCancelToken {
    pub token: CancellationToken,
}

#[pymethods]
impl PyCancelToken {
    #[new]
    fn new() -> Self {
        Self::default()
    }

    /// Cancels the run(s) using this token; they end `cancelled`.
    fn cancel(&self) {
        self.token.cancel();
    }

    /// Whether `cancel()` was called.
    fn is_cancelled(&self) -> bool {
        self.token.is_cancelled()
    }
}

fn definition_error(py: Python<'_>, message: String) -> PyErr {
    to_pyerr(py, AgentError::definition_invalid(message))
}

fn turn_value(v: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<TurnValue>> {
    Ok(match v {
        None => None,
        Some(v) if v.is_none() => None,
        Some(v) if v.is_callable() => Some(TurnValue::Dynamic(Arc::new(HostTurn(HostFn::new(
            v.clone().unbind(),
            false,
        ))))),
        Some(v) => Some(TurnValue::Fixed(arg_value(v, what)?)),
    })
}

pub(crate) fn tool_execution(
    py: Python<'_>,
    d: &Bound<'_, PyAny>,
) -> PyResult<ToolExecutionConfig> {
    let get = |k: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
        let v = d.get_item(k).ok();
        Ok(v.filter(|v| !v.is_none()))
    };
    Ok(ToolExecutionConfig {
        tool_concurrency: get("tool_concurrency")?
            .map(|v| v.extract::<f64>())
            .transpose()?
            .map(spec::tool_concurrency),
        on_error: match get("on_error")? {
            Some(v) => {
                Some(OnError::parse(&v.extract::<String>()?).map_err(|e| definition_error(py, e))?)
            }
            None => None,
        },
        max_output_chars: get("max_output_chars")?
            .map(|v| v.extract::<f64>())
            .transpose()?
            .map(|n| spec::whole_count(n, "tool_execution.max_output_chars", "characters"))
            .transpose()
            .map_err(|e| to_pyerr(py, e))?,
        max_tool_calls: get("max_tool_calls")?
            .map(|v| v.extract::<f64>())
            .transpose()?
            .map(|n| spec::at_least_one(n, "toolExecution.maxToolCalls"))
            .transpose()
            .map_err(|e| to_pyerr(py, e))?
            .map(|n| n as usize),
    })
}

/// `AgentModelRetry`: a field left `None` takes the core's default ([`ModelRetry::default`]).
fn model_retry(d: &Bound<'_, PyAny>) -> PyResult<ModelRetry> {
    let field = |key: &str| d.get_item(key).ok().filter(|v| !v.is_none());
    // The core reads the numbers, as it reads them in the definition format (an integral
    // float such as `2.0` is the count it writes).
    let max_retries = field("max_retries")
        .map(|v| v.extract::<f64>())
        .transpose()?;
    let backoff_ms = field("backoff_ms")
        .map(|v| v.extract::<f64>())
        .transpose()?;
    Ok(ModelRetry::from_numbers(max_retries, backoff_ms))
}

fn stop_list(v: &Bound<'_, PyAny>) -> PyResult<Vec<Arc<dyn phaseo_agent::StopCondition>>> {
    let mut out = Vec::new();
    for item in v.try_iter()? {
        let item = item?;
        out.push(item.cast::<PyStopCondition>()?.get().condition.clone());
    }
    Ok(out)
}

fn overrides(py: Python<'_>, d: Option<&Bound<'_, PyDict>>) -> PyResult<RunOverrides> {
    let mut o = RunOverrides::default();
    let Some(d) = d else { return Ok(o) };
    let get = |k: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
        Ok(d.get_item(k)?.filter(|v| !v.is_none()))
    };
    o.model = get("model")?.map(|v| v.extract()).transpose()?;
    o.max_steps = get("max_steps")?
        .map(|v| v.extract::<f64>())
        .transpose()?
        .map(|n| spec::whole_count(n, "Invalid run options: max_steps", "steps"))
        .transpose()
        .map_err(|e| to_pyerr(py, e))?;
    o.stop_when = get("stop_when")?.map(|v| stop_list(&v)).transpose()?;
    o.model_retry = get("model_retry")?.map(|v| model_retry(&v)).transpose()?;
    o.tool_execution = get("tool_execution")?
        .map(|v| tool_execution(py, &v))
        .transpose()?;
    o.temperature = get("temperature")?.map(|v| v.extract()).transpose()?;
    o.max_output_tokens = get("max_output_tokens")?.map(|v| v.extract()).transpose()?;
    o.top_p = get("top_p")?.map(|v| v.extract()).transpose()?;
    if let Some(c) = get("tool_choice")? {
        o.set_tool_choice(&arg_value(&c, "tool_choice")?)
            .map_err(|e| to_pyerr(py, e))?;
    }
    o.parallel_tool_calls = get("parallel_tool_calls")?
        .map(|v| v.extract())
        .transpose()?;
    o.active_tools = get("active_tools")?.map(|v| v.extract()).transpose()?;
    Ok(o)
}

fn decisions(v: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<ToolDecision>> {
    let mut out = Vec::new();
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(out);
    };
    for item in v.try_iter()? {
        let (id, reason, edited): (String, Option<String>, Option<Bound<'_, PyAny>>) =
            item?.extract()?;
        let edited_input = edited
            .filter(|e| !e.is_none())
            .map(|e| arg_value(&e, &format!("edited_input of tool call {id}")))
            .transpose()?;
        out.push(ToolDecision {
            tool_call_id: id,
            reason,
            edited_input,
        });
    }
    Ok(out)
}

/// `(tool_call_id, output)` pairs of `tool_outputs` or `responses` (named `what`).
fn outputs(items: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Vec<ToolOutput>> {
    let mut out = Vec::new();
    for item in items
        .filter(|v| !v.is_none())
        .map(|v| v.try_iter())
        .transpose()?
        .into_iter()
        .flatten()
    {
        let (id, output): (String, Bound<'_, PyAny>) = item?.extract()?;
        let output = arg_value(&output, &format!("{what}: output of tool call {id}"))?;
        out.push(ToolOutput::new(id, output));
    }
    Ok(out)
}

/// An agent defined from Python.
#[pyclass(name = "NativeAgent", module = "phaseo_agent._native", frozen)]
pub struct PyAgent {
    agent: Agent,
}

/// Everything a run needs, gathered under the GIL.
struct Prepared {
    agent: Agent,
    client: Arc<dyn phaseo_agent::ModelClient>,
    overrides: RunOverrides,
    on_event: Option<Arc<dyn phaseo_agent::EventListener>>,
    cancel: CancellationToken,
    /// The host's current span (tracing on, `opentelemetry-api` installed).
    traceparent: Option<String>,
}

/// The options of an entry point: one dict from the package (`_agent.py` builds it from
/// the public keyword arguments); None and a missing key are absent.
struct EntryOptions<'py>(Bound<'py, PyDict>);

impl<'py> EntryOptions<'py> {
    fn any(&self, key: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
        Ok(self.0.get_item(key)?.filter(|v| !v.is_none()))
    }

    /// A value that may be None (a run's input, a client the core refuses).
    fn value(&self, key: &str) -> PyResult<Bound<'py, PyAny>> {
        let py = self.0.py();
        Ok(self
            .0
            .get_item(key)?
            .unwrap_or_else(|| py.None().into_bound(py)))
    }

    fn of<T: pyo3::type_object::PyTypeCheck>(&self, key: &str) -> PyResult<Option<Bound<'py, T>>> {
        self.any(key)?
            .map(|v| v.cast_into::<T>().map_err(PyErr::from))
            .transpose()
    }

    fn string(&self, key: &str) -> PyResult<Option<String>> {
        self.any(key)?.map(|v| v.extract()).transpose()
    }
}

impl PyAgent {
    fn prepare(&self, py: Python<'_>, o: &EntryOptions<'_>) -> PyResult<Prepared> {
        let overrides_dict = o.of::<PyDict>("overrides")?;
        Ok(Prepared {
            agent: self.agent.clone(),
            client: client_from_py(&o.value("client")?)?,
            overrides: overrides(py, overrides_dict.as_ref())?,
            on_event: o.any("on_event")?.map(|f| {
                Arc::new(HostListener(f.unbind())) as Arc<dyn phaseo_agent::EventListener>
            }),
            cancel: o
                .of::<PyCancelToken>("cancel")?
                .map(|c| c.get().token.child_token())
                .unwrap_or_default(),
            traceparent: crate::tracing::host_traceparent(py),
        })
    }

    /// The job of a run entry point: `{input, client, context?, messages?, overrides?,
    /// on_event?, cancel?, store?}`.
    fn run_job(&self, py: Python<'_>, o: &EntryOptions<'_>) -> PyResult<Job> {
        let p = self.prepare(py, o)?;
        let context = match o.any("context")? {
            Some(c) => arg_value(&c, "context")?,
            None => Value::Null,
        };
        let mut options =
            RunOptions::new(arg_value(&o.value("input")?, "input")?, p.client.clone())
                .context(context)
                .overrides(p.overrides.clone())
                .cancel(p.cancel.clone());
        options.traceparent = p.traceparent.clone();
        if let Some(f) = &p.on_event {
            options = options.on_event(f.clone());
        }
        if let Some(m) = o.any("messages")? {
            let list: Vec<Message> = serde_json::from_value(camel_keys(arg_value(&m, "messages")?))
                .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("messages: {e}")))?;
            options = options.messages(list);
        }
        if let Some(s) = o.of::<PyRunStore>("store")? {
            options = options.store(s.get().store.clone());
        }
        Ok(Job::Run(p.agent, options, p.cancel))
    }

    /// The job of a continue entry point: `{state?, run_id?, client, approvals?,
    /// rejections?, tool_outputs?, responses?, human_input?, context?, overrides?,
    /// on_event?, cancel?, store?}`.
    fn continue_job(&self, py: Python<'_>, o: &EntryOptions<'_>) -> PyResult<Job> {
        let p = self.prepare(py, o)?;
        let mut options = Self::continue_options(&p, o)?;
        options.approvals = decisions(o.any("approvals")?.as_ref())?;
        options.rejections = decisions(o.any("rejections")?.as_ref())?;
        options.tool_outputs = outputs(o.any("tool_outputs")?.as_ref(), "tool_outputs")?;
        options.responses = outputs(o.any("responses")?.as_ref(), "responses")?;
        options.human_input = o.string("human_input")?;
        let state = o.of::<PyRunResult>("state")?;
        // Given both, the core checks that they agree (docs/behaviour.md §10).
        if let Some(run_id) = o.string("run_id")? {
            options = options.run_id(run_id);
        } else if state.is_none() {
            return Err(to_pyerr(
                py,
                AgentError::continue_invalid("Invalid continue: pass a state or a run id"),
            ));
        }
        let state = state.map(|s| Box::new(s.get().inner.clone()));
        Ok(Job::Continue(p.agent, state, options, p.cancel))
    }

    /// The job of a recover entry point: `{run_id, client, context?, overrides?,
    /// on_event?, cancel?, store?}`.
    fn recover_job(&self, py: Python<'_>, o: &EntryOptions<'_>) -> PyResult<Job> {
        let p = self.prepare(py, o)?;
        let options = Self::continue_options(&p, o)?;
        let run_id: String = o.value("run_id")?.extract()?;
        Ok(Job::Recover(p.agent, run_id, options, p.cancel))
    }

    /// What a continue and a recover share: client, overrides, cancel, context, events,
    /// store.
    fn continue_options(p: &Prepared, o: &EntryOptions<'_>) -> PyResult<ContinueOptions> {
        let mut options = ContinueOptions::new(p.client.clone())
            .overrides(p.overrides.clone())
            .cancel(p.cancel.clone());
        options.traceparent = p.traceparent.clone();
        options.context = o
            .any("context")?
            .map(|c| arg_value(&c, "context"))
            .transpose()?;
        if let Some(f) = &p.on_event {
            options = options.on_event(f.clone());
        }
        if let Some(s) = o.of::<PyRunStore>("store")? {
            options = options.store(s.get().store.clone());
        }
        Ok(options)
    }
}

/// What a run or continue entry point starts: everything gathered under the GIL.
enum Job {
    Run(Agent, RunOptions, CancellationToken),
    /// A continue of a state, or (`None`) of the stored run `options.run_id`.
    Continue(
        Agent,
        Option<Box<RunResult>>,
        ContinueOptions,
        CancellationToken,
    ),
    Recover(Agent, String, ContinueOptions, CancellationToken),
}

/// How an entry point drives its job: blocking, as an awaitable, or as a stream.
#[derive(Clone, Copy)]
enum Mode {
    Block,
    Await,
    Stream,
}

impl Mode {
    /// The package's name of a mode.
    fn parse(mode: &str) -> PyResult<Self> {
        match mode {
            "block" => Ok(Self::Block),
            "await" => Ok(Self::Await),
            "stream" => Ok(Self::Stream),
            other => Err(pyo3::exceptions::PyValueError::new_err(format!(
                "unknown entry mode {other:?}"
            ))),
        }
    }
}

impl Job {
    fn cancel(&self) -> CancellationToken {
        match self {
            Job::Run(.., c) | Job::Continue(.., c) | Job::Recover(.., c) => c.clone(),
        }
    }

    async fn run(self) -> Result<RunResult, AgentError> {
        match self {
            Job::Run(agent, options, _) => agent.run(options).await,
            Job::Continue(agent, Some(state), options, _) => {
                agent.continue_run(&state, options).await
            }
            Job::Continue(agent, None, options, _) => {
                let run_id = options.run_id.clone().unwrap_or_default();
                agent.continue_by_id(run_id, options).await
            }
            Job::Recover(agent, run_id, options, _) => agent.recover(&run_id, options).await,
        }
    }
}

/// The one place every entry point runs its job: the result (`Block`), an awaitable of
/// it (`Await`) or a stream (`Stream`).
fn launch<'py>(py: Python<'py>, job: Job, mode: Mode) -> PyResult<Bound<'py, PyAny>> {
    let cancel = job.cancel();
    match mode {
        Mode::Block => {
            let outcome = block_interruptible(py, cancel, job.run())?;
            Ok(Py::new(py, finish(py, outcome)?)?.into_bound(py).into_any())
        }
        Mode::Await => run_awaitable(py, cancel, job.run()),
        Mode::Stream => {
            let (stream, driver) = match job {
                Job::Run(agent, options, _) => agent.stream_deferred(options),
                Job::Continue(agent, Some(state), options, _) => {
                    agent.continue_stream_deferred(&state, options)
                }
                Job::Continue(agent, None, options, _) => {
                    let run_id = options.run_id.clone().unwrap_or_default();
                    agent.continue_stream_deferred_by_id(run_id, options)
                }
                Job::Recover(..) => {
                    return Err(pyo3::exceptions::PyTypeError::new_err(
                        "recover has no stream form",
                    ))
                }
            };
            let bridge = current_bridge(py)?;
            phaseo_agent::exec::runtime().spawn(EVENT_LOOP.scope(bridge, driver));
            Ok(Py::new(py, PyAgentStream::new(stream))?
                .into_bound(py)
                .into_any())
        }
    }
}

/// Runs a future on the shared runtime without the GIL, checking for Ctrl-C every 50 ms
/// (KeyboardInterrupt cancels the run and propagates).
fn block_interruptible<F>(
    py: Python<'_>,
    cancel: CancellationToken,
    fut: F,
) -> PyResult<Result<RunResult, AgentError>>
where
    F: Future<Output = Result<RunResult, AgentError>> + Send + 'static,
{
    let rt = phaseo_agent::exec::runtime();
    let bridge = bridge_for(py, None)?;
    let mut handle = rt.spawn(EVENT_LOOP.scope(bridge, fut));
    loop {
        let step = crate::lifecycle::detach(py, || {
            rt.block_on(async {
                tokio::time::timeout(Duration::from_millis(50), &mut handle).await
            })
        });
        match step {
            Ok(Ok(outcome)) => return Ok(outcome),
            Ok(Err(join)) => {
                return Ok(Err(AgentError::new(
                    phaseo_agent::ErrorCode::ToolFailed,
                    format!("internal error: {join}"),
                )))
            }
            Err(_) => {
                if let Err(interrupt) = py.check_signals() {
                    cancel.cancel();
                    handle.abort();
                    return Err(interrupt);
                }
            }
        }
    }
}

fn finish(py: Python<'_>, outcome: Result<RunResult, AgentError>) -> PyResult<PyRunResult> {
    outcome.map(PyRunResult::new).map_err(|e| to_pyerr(py, e))
}

/// The bridge of the running loop, or of the background loop outside asyncio.
fn current_bridge(py: Python<'_>) -> PyResult<Arc<crate::host::BridgeInner>> {
    let running = py.import("asyncio")?.call_method0("get_running_loop").ok();
    bridge_for(py, running.as_ref())
}

fn run_awaitable<'py, F>(
    py: Python<'py>,
    cancel: CancellationToken,
    fut: F,
) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = Result<RunResult, AgentError>> + Send + 'static,
{
    let bridge = current_bridge(py)?;
    crate::driver::drive(
        py,
        bridge.clone(),
        cancel,
        EVENT_LOOP.scope(bridge, fut),
        |py, outcome| Ok(Py::new(py, finish(py, outcome)?)?.into_any()),
    )
}

/// The agent's output validator: `parse_output` (a callable, run on the final text) then
/// `output_schema` on what it returns, as the core composes them (docs/behaviour.md §3).
fn output_validator(
    py: Python<'_>,
    parse_output: Option<&Bound<'_, PyAny>>,
    output_schema: Option<Arc<dyn phaseo_agent::Validator>>,
) -> PyResult<Option<Arc<dyn phaseo_agent::Validator>>> {
    let Some(parse) = parse_output.filter(|v| !v.is_none()) else {
        return Ok(output_schema);
    };
    if !parse.is_callable() {
        let refused = phaseo_agent::spec::respell_keys(
            phaseo_agent::parsed_output::not_a_function(),
            phaseo_agent::spec::snake_case,
        );
        return Err(crate::errors::to_pyerr(py, refused));
    }
    Ok(Some(Arc::new(
        phaseo_agent::parsed_output::ParsedOutput::new(validator(parse, None), output_schema),
    )))
}

#[pymethods]
impl PyAgent {
    #[new]
    #[pyo3(signature = (id, tools, model=None, instructions=None, max_steps=None, stop_when=None, model_retry=None, tool_execution=None, temperature=None, max_output_tokens=None, top_p=None, output_schema=None, parse_output=None, require_approval=None, human_review=None, state_secrets=None, tool_choice=None, parallel_tool_calls=None, active_tools=None, store=None, lease_ms=None, mcp_servers=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        id: String,
        tools: Vec<Bound<'_, PyTool>>,
        model: Option<&Bound<'_, PyAny>>,
        instructions: Option<&Bound<'_, PyAny>>,
        max_steps: Option<f64>,
        stop_when: Option<&Bound<'_, PyAny>>,
        model_retry: Option<&Bound<'_, PyAny>>,
        tool_execution: Option<&Bound<'_, PyAny>>,
        temperature: Option<&Bound<'_, PyAny>>,
        max_output_tokens: Option<&Bound<'_, PyAny>>,
        top_p: Option<&Bound<'_, PyAny>>,
        output_schema: Option<&Bound<'_, PyAny>>,
        parse_output: Option<&Bound<'_, PyAny>>,
        require_approval: Option<&Bound<'_, PyAny>>,
        human_review: Option<&Bound<'_, PyAny>>,
        state_secrets: Option<Vec<String>>,
        tool_choice: Option<&Bound<'_, PyAny>>,
        parallel_tool_calls: Option<bool>,
        active_tools: Option<&Bound<'_, PyAny>>,
        store: Option<&Bound<'_, PyRunStore>>,
        lease_ms: Option<(f64, f64)>,
        mcp_servers: Option<Vec<Bound<'_, PyMcpServer>>>,
    ) -> PyResult<Self> {
        let mut def = AgentDefinition::new(id).tools(tools.iter().map(|t| t.get().tool.clone()));
        if let Some(v) = turn_value(model, "model")? {
            def = def.model(v);
        }
        if let Some(v) = turn_value(instructions, "instructions")? {
            def = def.instructions(v);
        }
        if let Some(v) = turn_value(temperature, "temperature")? {
            def = def.temperature(v);
        }
        if let Some(v) = turn_value(max_output_tokens, "max_output_tokens")? {
            def = def.max_output_tokens(v);
        }
        if let Some(v) = turn_value(top_p, "top_p")? {
            def = def.top_p(v);
        }
        if let Some(n) = max_steps {
            let n = spec::whole_count(n, "Invalid agent definition: max_steps", "steps")
                .map_err(|e| to_pyerr(py, e))?;
            def = def.max_steps(n);
        }
        if let Some(s) = stop_when.filter(|v| !v.is_none()) {
            for c in stop_list(s)? {
                def = def.stop_when(c);
            }
        }
        if let Some(r) = model_retry.filter(|v| !v.is_none()) {
            def = def.model_retry(self::model_retry(r)?);
        }
        if let Some(t) = tool_execution.filter(|v| !v.is_none()) {
            def = def.tool_execution(self::tool_execution(py, t)?);
        }
        let output_schema = output_schema
            .filter(|v| !v.is_none())
            .map(|v| validator(v, None));
        if let Some(v) = output_validator(py, parse_output, output_schema)? {
            def = def.output_schema(v);
        }
        if let Some(f) = require_approval.filter(|v| !v.is_none()) {
            def = def.require_approval(Arc::new(PyAgentApproval(HostFn::new(
                f.clone().unbind(),
                false,
            ))));
        }
        if let Some(f) = human_review.filter(|v| !v.is_none()) {
            def = def.human_review(Arc::new(HostReview(HostFn::new(f.clone().unbind(), false))));
        }
        if let Some(secrets) = state_secrets {
            def = def.state_secrets(secrets);
        }
        if let Some(v) = turn_value(tool_choice, "tool_choice")? {
            def = def.tool_choice(v);
        }
        if let Some(p) = parallel_tool_calls {
            def = def.parallel_tool_calls(p);
        }
        if let Some(v) = turn_value(active_tools, "active_tools")? {
            def = def.active_tools(v);
        }
        if let Some(s) = store {
            def = def.store(s.get().store.clone());
        }
        if let Some((duration, renew_every)) = lease_ms {
            let lease =
                LeaseConfig::from_ms(duration, renew_every, ["duration_ms", "renew_every_ms"])
                    .map_err(|e| to_pyerr(py, e))?;
            def = def.lease(lease);
        }
        for server in mcp_servers.unwrap_or_default() {
            def = def.mcp_server(server.get().server.clone());
        }
        let agent = no_panic_in_definition(py, || create_agent(def).map_err(|e| to_pyerr(py, e)))?;
        Ok(Self { agent })
    }

    /// The agent id.
    #[getter]
    fn id(&self) -> &str {
        self.agent.id()
    }

    /// A tool that runs this agent (docs/behaviour.md §18); `client`: the nested runs' own
    /// model client (default: the outer run's).
    #[pyo3(signature = (id=None, description=None, parameters=None, client=None))]
    fn as_tool(
        &self,
        py: Python<'_>,
        id: Option<String>,
        description: Option<String>,
        parameters: Option<&Bound<'_, PyAny>>,
        client: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTool> {
        let mut options = phaseo_agent::AsToolOptions::new();
        options.id = id;
        options.description = description;
        if let Some(p) = parameters.filter(|p| !p.is_none()) {
            options.parameters = Some(arg_value(p, "parameters")?);
        }
        if let Some(c) = client.filter(|c| !c.is_none()) {
            options.client = Some(client_from_py(c)?);
        }
        let tool = self.agent.as_tool(options).map_err(|e| to_pyerr(py, e))?;
        Ok(PyTool { tool })
    }

    /// Stops the agent's MCP servers (blocking, without the GIL). A later run starts
    /// them again.
    fn close(&self, py: Python<'_>) {
        let agent = self.agent.clone();
        crate::lifecycle::detach(py, || phaseo_agent::exec::runtime().block_on(agent.close()));
    }

    /// Like `close`, awaitable.
    fn close_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let agent = self.agent.clone();
        crate::awaitable::awaitable(py, None, async move { agent.close().await }, |py, ()| {
            Ok(py.None())
        })
    }

    /// Runs the agent: `mode` is `"block"` (the result), `"await"` (an awaitable of it) or
    /// `"stream"`; `options` as `run_job` reads them.
    fn run<'py>(
        &self,
        py: Python<'py>,
        mode: &str,
        options: Bound<'py, PyDict>,
    ) -> PyResult<Bound<'py, PyAny>> {
        no_panic(py, || {
            let job = self.run_job(py, &EntryOptions(options))?;
            launch(py, job, Mode::parse(mode)?)
        })
    }

    /// Continues a paused run (`mode` as `run`; `options` as `continue_job` reads them).
    fn continue_run<'py>(
        &self,
        py: Python<'py>,
        mode: &str,
        options: Bound<'py, PyDict>,
    ) -> PyResult<Bound<'py, PyAny>> {
        no_panic(py, || {
            let job = self.continue_job(py, &EntryOptions(options))?;
            launch(py, job, Mode::parse(mode)?)
        })
    }

    /// Recovers a stored run (`mode` `"block"` or `"await"`; `options` as `recover_job`
    /// reads them).
    fn recover<'py>(
        &self,
        py: Python<'py>,
        mode: &str,
        options: Bound<'py, PyDict>,
    ) -> PyResult<Bound<'py, PyAny>> {
        no_panic(py, || {
            let job = self.recover_job(py, &EntryOptions(options))?;
            launch(py, job, Mode::parse(mode)?)
        })
    }
}

//! Rust conformance runner: runs the cross-language JSON cases through the core's public
//! API with real Rust closures (see tests/conformance/README.md).
//!
//! `cargo run -q -p conformance -- [--stop-after N --save-state DIR | --resume-state DIR
//! --from-step N] PATH...`

mod case;
mod client;
mod compare;
mod expect;
mod patch;

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use phaseo_agent::spec;
use phaseo_agent::{
    json, AgentError, AgentEvent, CancellationToken, ContinueOptions, Message, RunOptions,
    RunOverrides, RunResult, ToolDecision, ToolOutput, Value,
};

use case::Observations;
use client::CaseClient;

/// What one step of a case produced.
pub struct StepOutcome {
    pub state: Option<RunResult>,
    pub error: Option<AgentError>,
    pub events: Vec<AgentEvent>,
    pub requests: Vec<Value>,
    pub executed: Vec<String>,
    pub cancelled: Vec<String>,
    pub max_concurrent: usize,
    pub wall_ms: u128,
}

enum Mode {
    All,
    StopAfter(usize, PathBuf),
    Resume(PathBuf, usize),
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        entries.sort();
        for e in entries {
            collect(&e, out);
        }
    } else if path.extension().is_some_and(|e| e == "json") {
        out.push(path.to_owned());
    }
}

fn decisions(v: Option<&Value>) -> Result<Vec<ToolDecision>, String> {
    let mut out = Vec::new();
    for d in v.and_then(Value::as_array).into_iter().flatten() {
        match d {
            Value::String(id) => out.push(ToolDecision::new(id.clone())),
            Value::Object(m) => out.push(ToolDecision {
                tool_call_id: m
                    .get("toolCallId")
                    .and_then(Value::as_str)
                    .ok_or("decision without toolCallId")?
                    .to_owned(),
                reason: m.get("reason").and_then(Value::as_str).map(str::to_owned),
                edited_input: m.get("editedInput").cloned(),
            }),
            other => return Err(format!("unsupported decision {other}")),
        }
    }
    Ok(out)
}

/// A step's overrides: `Err` when the case cannot be expressed, `Ok(Err)` when the SDK
/// refuses them (as every binding's reader of run options does).
fn overrides(o: &Value) -> Result<Result<RunOverrides, AgentError>, String> {
    let mut r = RunOverrides::default();
    if let Some(m) = o.get("model").and_then(Value::as_str) {
        r.model = Some(m.to_owned());
    }
    if let Some(n) = case::number(o, "maxSteps")? {
        match spec::whole_count(n, "Invalid run options: maxSteps", "steps") {
            Ok(n) => r.max_steps = Some(n),
            Err(e) => return Ok(Err(e)),
        }
    }
    if let Some(s) = o.get("stopWhen") {
        r.stop_when = Some(case::stop_conditions(s)?);
    }
    if let Some(m) = o.get("modelRetry") {
        r.model_retry = Some(case::model_retry(m)?);
    }
    if let Some(t) = o.get("toolExecution") {
        match case::tool_execution(t)? {
            Ok(config) => r.tool_execution = Some(config),
            Err(e) => return Ok(Err(e)),
        }
    }
    r.temperature = o.get("temperature").and_then(Value::as_f64);
    r.max_output_tokens = case::number(o, "maxOutputTokens")?.map(|n| n.max(0.0) as u64);
    r.top_p = o.get("topP").and_then(Value::as_f64);
    if let Some(c) = o.get("toolChoice") {
        r.set_tool_choice(c).map_err(|e| e.to_string())?;
    }
    r.parallel_tool_calls = o.get("parallelToolCalls").and_then(Value::as_bool);
    if let Some(ids) = o.get("activeTools").filter(|v| !v.is_null()) {
        r.active_tools =
            Some(serde_json::from_value(ids.clone()).map_err(|e| format!("activeTools: {e}"))?);
    }
    Ok(Ok(r))
}

const RUN_KEYS: &[&str] = &[
    "input",
    "context",
    "messages",
    "cancelAfterMs",
    "model",
    "maxSteps",
    "stopWhen",
    "modelRetry",
    "toolExecution",
    "temperature",
    "maxOutputTokens",
    "topP",
    "toolChoice",
    "parallelToolCalls",
    "activeTools",
];
const CONTINUE_KEYS: &[&str] = &[
    "approvals",
    "rejections",
    "toolOutputs",
    "responses",
    "humanInput",
    "context",
    "cancelAfterMs",
    "model",
    "maxSteps",
    "stopWhen",
    "modelRetry",
    "toolExecution",
    "temperature",
    "maxOutputTokens",
    "topP",
    "toolChoice",
    "parallelToolCalls",
    "activeTools",
];

const CASE_KEYS: &[&str] = &[
    "name",
    "description",
    "agent",
    "tools",
    "model",
    "steps",
    "expectDefinitionError",
];
const MODEL_ENTRY_KEYS: &[&str] = &["text", "toolCalls", "usage", "cost", "finishReason", "fail"];
const MODEL_CALL_KEYS: &[&str] = &["id", "name", "arguments"];
const STEP_KEYS: &[&str] = &["run", "continue", "expect"];

/// Refuses, before anything runs, a case using a key this runner does not know.
fn check_case(case: &Value) -> Result<(), String> {
    check_keys(case, CASE_KEYS, "case")?;
    if let Some(d) = case.get("expectDefinitionError") {
        check_keys(d, &["code", "messageContains"], "expectDefinitionError")?;
    }
    for entry in case
        .get("model")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        check_keys(entry, MODEL_ENTRY_KEYS, "model entry")?;
        for call in entry
            .get("toolCalls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            check_keys(call, MODEL_CALL_KEYS, "model entry toolCalls")?;
        }
    }
    for (i, step) in case
        .get("steps")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        if step.get("editState").is_some() {
            check_keys(step, &["editState"], &format!("step {i}"))?;
            continue;
        }
        check_keys(step, STEP_KEYS, &format!("step {i}"))?;
        if let Some(run) = step.get("run") {
            check_keys(run, RUN_KEYS, &format!("step {i}: run"))?;
        }
        if let Some(c) = step.get("continue") {
            check_keys(c, CONTINUE_KEYS, &format!("step {i}: continue"))?;
            for d in c
                .get("approvals")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                check_keys(
                    d,
                    &["toolCallId", "reason", "editedInput"],
                    &format!("step {i}: approval"),
                )?;
            }
            for d in c
                .get("rejections")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                check_keys(
                    d,
                    &["toolCallId", "reason"],
                    &format!("step {i}: rejection"),
                )?;
            }
            for o in ["toolOutputs", "responses"]
                .iter()
                .filter_map(|k| c.get(*k).and_then(Value::as_array))
                .flatten()
            {
                check_keys(
                    o,
                    &["toolCallId", "output"],
                    &format!("step {i}: toolOutput"),
                )?;
            }
        }
        expect::check_keys_of(step.get("expect").unwrap_or(&Value::Null))
            .map_err(|e| format!("step {i}: {e}"))?;
    }
    Ok(())
}

fn check_keys(v: &Value, allowed: &[&str], what: &str) -> Result<(), String> {
    for k in v.as_object().into_iter().flat_map(|m| m.keys()) {
        if !allowed.contains(&k.as_str()) {
            return Err(format!("{what}: unsupported key {k:?}"));
        }
    }
    Ok(())
}

struct CaseRun {
    agent: phaseo_agent::Agent,
    client: Arc<CaseClient>,
    obs: Arc<Observations>,
    state: Option<RunResult>,
    /// The state's JSON text after an `editState` step, read by the next continue.
    edited: Option<String>,
}

impl CaseRun {
    async fn step(&mut self, step: &Value) -> Result<StepOutcome, String> {
        self.obs.reset();
        self.client.requests.lock().unwrap().clear();
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = events.clone();
        let listener = Arc::new(move |e: &AgentEvent| sink.lock().unwrap().push(e.clone()));
        let token = CancellationToken::new();
        let started = Instant::now();
        let (cancel_after, outcome) = if let Some(run) = step.get("run") {
            check_keys(run, RUN_KEYS, "run")?;
            let (run_overrides, refused) = match overrides(run)? {
                Ok(o) => (o, None),
                Err(e) => (RunOverrides::default(), Some(e)),
            };
            let mut options = RunOptions::new(
                run.get("input").cloned().unwrap_or(Value::Null),
                self.client.clone(),
            )
            .context(run.get("context").cloned().unwrap_or(Value::Null))
            .overrides(run_overrides)
            .on_event(listener)
            .cancel(token.clone());
            if let Some(m) = run.get("messages") {
                let messages: Vec<Message> =
                    serde_json::from_value(m.clone()).map_err(|e| format!("messages: {e}"))?;
                options = options.messages(messages);
            }
            let cancel_after = case::number(run, "cancelAfterMs")?.map(|n| n.max(0.0) as u64);
            let agent = self.agent.clone();
            (
                cancel_after,
                Box::pin(async move {
                    match refused {
                        Some(e) => Err(e),
                        None => agent.run(options).await,
                    }
                }) as std::pin::Pin<Box<dyn std::future::Future<Output = _>>>,
            )
        } else if let Some(c) = step.get("continue") {
            check_keys(c, CONTINUE_KEYS, "continue")?;
            // An edited state is read as an application reads a stored one; a refusal is
            // this continue's error.
            let stored = self.edited.as_deref().map(RunResult::from_json);
            let state = match &stored {
                Some(Ok(s)) => s,
                Some(Err(_)) | None => self.state.as_ref().ok_or("continue without a state")?,
            };
            let (continue_overrides, refused_overrides) = match overrides(c)? {
                Ok(o) => (o, None),
                Err(e) => (RunOverrides::default(), Some(e)),
            };
            let mut options = ContinueOptions::new(self.client.clone())
                .overrides(continue_overrides)
                .on_event(listener)
                .cancel(token.clone());
            options.approvals = decisions(c.get("approvals"))?;
            options.rejections = decisions(c.get("rejections"))?;
            for o in c
                .get("toolOutputs")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                options.tool_outputs.push(ToolOutput::new(
                    o.get("toolCallId")
                        .and_then(Value::as_str)
                        .ok_or("toolOutput without toolCallId")?,
                    o.get("output").cloned().unwrap_or(Value::Null),
                ));
            }
            for o in c
                .get("responses")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                options.responses.push(ToolOutput::new(
                    o.get("toolCallId")
                        .and_then(Value::as_str)
                        .ok_or("response without toolCallId")?,
                    o.get("output").cloned().unwrap_or(Value::Null),
                ));
            }
            options.human_input = c
                .get("humanInput")
                .and_then(Value::as_str)
                .map(str::to_owned);
            options.context = c.get("context").cloned();
            let cancel_after = case::number(c, "cancelAfterMs")?.map(|n| n.max(0.0) as u64);
            let agent = self.agent.clone();
            let state = state.clone();
            let refused = refused_overrides.or_else(|| stored.and_then(Result::err));
            (
                cancel_after,
                Box::pin(async move {
                    match refused {
                        Some(e) => Err(e),
                        None => agent.continue_run(&state, options).await,
                    }
                }) as std::pin::Pin<Box<dyn std::future::Future<Output = _>>>,
            )
        } else {
            return Err("a step is neither run nor continue".into());
        };
        if let Some(ms) = cancel_after {
            let token = token.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                token.cancel();
            });
        }
        let result: Result<RunResult, AgentError> = outcome.await;
        let wall_ms = started.elapsed().as_millis();
        // Let executors the run stopped waiting for observe their cancellation.
        let deadline = Instant::now() + Duration::from_secs(1);
        while self.obs.active.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let (state, error) = match result {
            Ok(r) => (Some(r), None),
            Err(mut e) => (e.take_result(), Some(e)),
        };
        // Between steps the state always round-trips through its canonical JSON text.
        let state = match state {
            Some(s) => Some(
                RunResult::from_json(&s.to_json()).map_err(|e| format!("state round trip: {e}"))?,
            ),
            None => None,
        };
        if let Some(s) = &state {
            self.state = Some(s.clone());
            self.edited = None;
        }
        let mut executed = self.obs.executed.lock().unwrap().clone();
        executed.sort();
        let mut cancelled = self.obs.cancelled.lock().unwrap().clone();
        cancelled.sort();
        cancelled.dedup();
        let events = events.lock().unwrap().clone();
        Ok(StepOutcome {
            state: state.or_else(|| self.state.clone()),
            error,
            events,
            requests: self.client.requests.lock().unwrap().clone(),
            executed,
            cancelled,
            max_concurrent: self.obs.max_running.load(Ordering::SeqCst),
            wall_ms,
        })
    }
}

fn case_name(case: &Value, path: &Path) -> String {
    case.get("name")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| path.display().to_string())
}

/// Runs one case (or its part for a handoff); `Ok(true)` when it ran.
async fn run_case(path: &Path, mode: &Mode) -> (String, Result<bool, String>) {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => return (path.display().to_string(), Err(format!("cannot read: {e}"))),
    };
    let case: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => return (path.display().to_string(), Err(format!("not JSON: {e}"))),
    };
    let name = case_name(&case, path);
    let outcome = run_case_value(&case, path, mode).await;
    (name, outcome)
}

async fn run_case_value(case: &Value, path: &Path, mode: &Mode) -> Result<bool, String> {
    let steps = case
        .get("steps")
        .and_then(Value::as_array)
        .ok_or("case without steps")?;
    check_case(case)?;
    let obs = Arc::new(Observations::default());
    let built = case::build_agent(case, &obs)?;
    if let Some(want) = case.get("expectDefinitionError") {
        if !matches!(mode, Mode::All) {
            return Ok(false);
        }
        expect::check_definition_error(want, built.as_ref().err())?;
        return Ok(true);
    }
    let agent = built.map_err(|e| format!("agent definition refused: {e}"))?;
    let entries = case
        .get("model")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let file = path.file_name().expect("case files have names");
    let (range, cursor, state) = match mode {
        Mode::All => (0..steps.len(), 0, None),
        Mode::StopAfter(n, _) => {
            if steps.len() <= *n {
                return Ok(false);
            }
            (0..*n, 0, None)
        }
        Mode::Resume(dir, n) => {
            let saved = dir.join(file);
            if !saved.exists() {
                return Ok(false);
            }
            let doc: Value =
                serde_json::from_str(&std::fs::read_to_string(&saved).map_err(|e| e.to_string())?)
                    .map_err(|e| format!("saved state: {e}"))?;
            let state = RunResult::from_value(doc.get("state").cloned().unwrap_or(Value::Null))
                .map_err(|e| format!("saved state refused: {e}"))?;
            let cursor = doc.get("modelCursor").and_then(Value::as_u64).unwrap_or(0) as usize;
            (*n..steps.len(), cursor, Some(state))
        }
    };
    let client = Arc::new(CaseClient::new(entries, cursor));
    let mut run = CaseRun {
        agent,
        client,
        obs,
        state,
        edited: None,
    };
    for i in range {
        let step = &steps[i];
        if let Some(ops) = step.get("editState") {
            let text = match (&run.edited, &run.state) {
                (Some(t), _) => t.clone(),
                (None, Some(s)) => s.to_json(),
                (None, None) => return Err(format!("step {i}: editState without a state")),
            };
            run.edited = Some(patch::apply(&text, ops).map_err(|e| format!("step {i}: {e}"))?);
            continue;
        }
        let outcome = run.step(step).await.map_err(|e| format!("step {i}: {e}"))?;
        let expect = step.get("expect").cloned().unwrap_or(json!({}));
        expect::check(&expect, &outcome).map_err(|e| format!("step {i}: {e}"))?;
    }
    if let Mode::StopAfter(_, dir) = mode {
        let text = match (&run.edited, &run.state) {
            (Some(t), _) => t.clone(),
            (None, Some(s)) => s.to_json(),
            (None, None) => return Err("no state to save".into()),
        };
        let doc = json!({
            "state": serde_json::from_str::<Value>(&text).map_err(|e| e.to_string())?,
            "modelCursor": run.client.cursor.load(Ordering::SeqCst),
        });
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        std::fs::write(
            dir.join(file),
            phaseo_agent::json::to_canonical_string(&doc),
        )
        .map_err(|e| e.to_string())?;
    }
    Ok(true)
}

fn usage() -> ! {
    eprintln!("usage: conformance [--stop-after N --save-state DIR | --resume-state DIR --from-step N] PATH...");
    std::process::exit(2)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut args = std::env::args().skip(1);
    let mut paths = Vec::new();
    let (mut stop_after, mut save_state, mut resume_state, mut from_step) =
        (None, None, None, None);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--" => {}
            "--stop-after" => stop_after = args.next().and_then(|v| v.parse::<usize>().ok()),
            "--save-state" => save_state = args.next().map(PathBuf::from),
            "--resume-state" => resume_state = args.next().map(PathBuf::from),
            "--from-step" => from_step = args.next().and_then(|v| v.parse::<usize>().ok()),
            flag if flag.starts_with("--") => usage(),
            path => paths.push(PathBuf::from(path)),
        }
    }
    let mode = match (stop_after, save_state, resume_state, from_step) {
        (None, None, None, None) => Mode::All,
        (Some(n), Some(dir), None, None) if n >= 1 => Mode::StopAfter(n, dir),
        (None, None, Some(dir), Some(n)) => Mode::Resume(dir, n),
        _ => usage(),
    };
    if paths.is_empty() {
        paths.push(PathBuf::from("tests/conformance/cases"));
    }
    let mut files = Vec::new();
    for p in &paths {
        if !p.exists() {
            eprintln!("no such case file or folder: {}", p.display());
            std::process::exit(2);
        }
        collect(p, &mut files);
    }
    let (mut passed, mut failed) = (0, 0);
    for file in files {
        let (name, outcome) = run_case(&file, &mode).await;
        match outcome {
            Ok(true) => {
                passed += 1;
                println!("PASS {name}");
            }
            Ok(false) => {}
            Err(e) => {
                failed += 1;
                println!("FAIL {name}: {e}");
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    std::process::exit(if failed == 0 { 0 } else { 1 });
}

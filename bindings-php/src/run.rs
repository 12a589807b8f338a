//! Runs: driven by the PHP thread (`run`, `continue`, `recover`; see [`crate::drive`]) or
//! streamed from the core's runtime, reporting their end (and their events) through the
//! PHP thread's queue; agents, options and states as JSON text.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use phaseo_agent::spec as core_spec;
use phaseo_agent::{AgentError, AgentStream, CancellationToken, RunResult, StreamItem};

use crate::adapters::HostListener;
use crate::error::NativeError;
use crate::handles::{Run, AGENTS, CLIENTS, RUNS, STORES};
use crate::host::{callbacks, push, Host};

/// How a run starts.
pub struct Start<'a> {
    /// `run`, `continue`, `recover`, `stream` or `continueStream`.
    pub mode: &'a str,
    /// The agent handle.
    pub agent: i64,
    /// The options' JSON text (the names of docs/behaviour.md).
    pub options: Option<&'a str>,
    /// A state to continue (canonical JSON text), or why its text is no state.
    pub state: Option<Result<String, AgentError>>,
    /// A run id to continue or recover from the store.
    pub run_id: Option<&'a str>,
    /// The model client handle.
    pub client: i64,
    /// A store handle (0: none).
    pub store: i64,
    /// Whether PHP listens to the run's events.
    pub events: bool,
}

fn host() -> Arc<Host> {
    Arc::new(Host)
}

/// The states of runs that ended, by run handle, until PHP takes their text
/// ([`take_state`]) or lets them go ([`drop_state`]): a state's text stays out of the
/// `done` message, where it would be escaped as a string and read twice by PHP (the
/// message, then the state), and is written only when PHP first reads more of the result
/// than its status and output (a 1,000-call turn's state is ~400 KB of text).
fn ended_states() -> &'static Mutex<HashMap<i64, RunResult>> {
    static STATES: OnceLock<Mutex<HashMap<i64, RunResult>>> = OnceLock::new();
    STATES.get_or_init(Mutex::default)
}

fn remove_state(run: i64) -> Option<RunResult> {
    ended_states()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .remove(&run)
}

/// The text of the state of a run that ended (`{"t":"done"}` said it has one), taken once.
pub fn take_state(run: i64) -> Option<String> {
    remove_state(run).map(|state| state.to_json())
}

/// Lets go of the state of a run that ended without its text being taken.
pub fn drop_state(run: i64) {
    drop(remove_state(run));
}

/// The `done` message of a run: its status and output (what most callers read first, so
/// the PHP layer reads the whole state only when asked), the state left for
/// [`take_state`]; or its error.
fn done_message(run: i64, outcome: Result<RunResult, AgentError>) -> serde_json::Value {
    match outcome {
        Ok(result) => {
            let done = serde_json::json!({
                "t": "done",
                "run": run,
                "status": result.status().as_str(),
                "output": result.output(),
            });
            ended_states()
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(run, result);
            done
        }
        Err(e) => {
            serde_json::json!({"t": "done", "run": run, "error": NativeError::from(e).to_value()})
        }
    }
}

/// Starts a run; its handle. The end arrives as `{"t":"done","run":handle,...}`.
pub fn start(s: Start<'_>) -> Result<i64, NativeError> {
    let agent = AGENTS.get(s.agent)?;
    let client = CLIENTS.get(s.client)?.client;
    let store = if s.store == 0 {
        None
    } else {
        Some(STORES.get(s.store)?)
    };
    let cancel = CancellationToken::new();
    let handle_run = Arc::new(Run {
        cancel: cancel.clone(),
    });
    let id = RUNS.insert(handle_run);
    let host = host();
    let rt = phaseo_agent::exec::runtime();
    let listen = s.events && !s.mode.ends_with("tream");
    let fail = |e: NativeError| {
        RUNS.remove(id);
        e
    };
    match s.mode {
        "run" | "stream" => {
            let spec = core_spec::run_options_text(&callbacks(&host), s.options)
                .map_err(|e| fail(e.into()))?;
            let mut options = spec.into_run_options(client).cancel(cancel.clone());
            if let Some(store) = store {
                options = options.store(store);
            }
            if listen {
                options = options.on_event(Arc::new(HostListener(id)));
            }
            if s.mode == "stream" {
                let _enter = rt.enter();
                pump_stream(id, agent.stream(options), cancel);
            } else {
                crate::drive::start(id, async move { finish(id, agent.run(options).await) });
            }
        }
        "continue" | "recover" | "continueStream" => {
            let spec = core_spec::continue_options_text(&callbacks(&host), s.options)
                .map_err(|e| fail(e.into()))?;
            let mut options = spec.into_continue_options(client).cancel(cancel.clone());
            if let Some(store) = store {
                options = options.store(store);
            }
            if listen {
                options = options.on_event(Arc::new(HostListener(id)));
            }
            // Invalid state is the continue's refusal, reported like the others.
            let state = s
                .state
                .map(|text| text.and_then(|text| RunResult::from_json(&text)))
                .transpose();
            let run_id = s.run_id.map(str::to_owned);
            if s.mode == "continueStream" {
                let _enter = rt.enter();
                let stream = match (state, run_id) {
                    (Ok(Some(state)), _) => agent.continue_stream(&state, options),
                    (Ok(None), Some(run_id)) => agent.continue_stream_by_id(run_id, options),
                    (Ok(None), None) => {
                        return Err(fail(NativeError::argument(
                            "continue needs a state or a run id",
                        )))
                    }
                    (Err(e), _) => {
                        rt.spawn(async move { finish(id, Err(e)) });
                        return Ok(id);
                    }
                };
                pump_stream(id, stream, cancel);
                return Ok(id);
            }
            let recover = s.mode == "recover";
            crate::drive::start(id, async move {
                let outcome = match (state, run_id) {
                    (Err(e), _) => Err(e),
                    (Ok(Some(state)), _) => agent.continue_run(&state, options).await,
                    (Ok(None), Some(run_id)) if recover => agent.recover(&run_id, options).await,
                    (Ok(None), Some(run_id)) => agent.continue_by_id(run_id, options).await,
                    (Ok(None), None) => Err(AgentError::state_invalid(
                        "continue needs a state or a run id".to_owned(),
                    )),
                };
                finish(id, outcome);
            });
        }
        other => {
            return Err(fail(NativeError::argument(format!(
                "unknown run mode {other:?}"
            ))))
        }
    }
    Ok(id)
}

/// Hands a stream's events to PHP as they come, then its end.
fn pump_stream(id: i64, stream: AgentStream, cancel: CancellationToken) {
    let mut cursor = stream.cursor();
    phaseo_agent::exec::runtime().spawn(async move {
        let mut cancel_seen = false;
        loop {
            let item = tokio::select! {
                item = cursor.next_item() => item,
                () = cancel.cancelled(), if !cancel_seen => {
                    cancel_seen = true;
                    stream.cancel(None);
                    continue;
                }
            };
            match item {
                Some(Ok(StreamItem::Event(e))) => {
                    let mut event = e.to_value();
                    crate::host::mark_big_integers(&mut event);
                    push(serde_json::json!({"t": "event", "run": id, "event": event}))
                }
                Some(Ok(StreamItem::Result(r))) => return finish(id, Ok(*r)),
                Some(Err(e)) => return finish(id, Err(e)),
                None => return,
            }
        }
    });
}

/// Reports a run's end and forgets its handle.
pub fn finish(id: i64, outcome: Result<RunResult, AgentError>) {
    RUNS.remove(id);
    push(done_message(id, outcome));
}

/// Cancels a run (its result still arrives, `cancelled`); a run that ended is left alone.
pub fn cancel(id: i64) {
    if let Ok(run) = RUNS.get(id) {
        run.cancel.cancel();
    }
}

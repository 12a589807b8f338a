//! `PhaseoAgent`: an agent built from a definition's JSON text, and the functions that
//! start its runs (run, continue by state or by run id, recover).

use std::ffi::c_char;
use std::sync::Arc;

use phaseo_agent::spec as core_spec;
use phaseo_agent::{Agent, CancellationToken, ContinueOptions, ErrorCode, RunOptions, RunResult};

use crate::adapters::HostListener;
use crate::client::{client_arg, PhaseoClient};
use crate::error::{guard, read_opt_str, read_str, CError, PhaseoStatus};
use crate::host::{callbacks, Host, PhaseoHost};
use crate::run::{PhaseoRun, Start};
use crate::store::{store_arg, PhaseoStore};

/// An agent. Thread-safe: any number of runs may use it at once, from any thread.
pub struct PhaseoAgent {
    pub(crate) agent: Agent,
}

/// Builds an agent from `definition_json` (docs/behaviour.md §3 in JSON; functions as
/// `{"$callback": id}`, served by `host.invoke`). `store` (may be NULL) is the agent's run
/// store. On success `*out_agent` is a new handle; `host.release` runs once the agent and
/// every run using its callbacks are gone (also when creation fails).
#[no_mangle]
pub unsafe extern "C" fn phaseo_agent_new(
    definition_json: *const c_char,
    store: *const PhaseoStore,
    host: PhaseoHost,
    out_agent: *mut *mut PhaseoAgent,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    let host = Host::new(host);
    guard(out_error, || {
        let text = read_str(definition_json, "definition_json")?;
        let mut def = core_spec::agent_definition_text(&callbacks(&host), text)?;
        if let Some(store) = store_arg(store) {
            def = def.store(store);
        }
        let agent = phaseo_agent::create_agent(def)?;
        if out_agent.is_null() {
            return Err(CError::argument("out_agent is NULL"));
        }
        *out_agent = Box::into_raw(Box::new(PhaseoAgent { agent }));
        Ok(PhaseoStatus::Ok)
    })
}

/// Frees an agent handle (its runs keep what they use). NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn phaseo_agent_free(agent: *mut PhaseoAgent) {
    if !agent.is_null() {
        drop(Box::from_raw(agent));
    }
}

pub(crate) unsafe fn agent_ref<'a>(agent: *const PhaseoAgent) -> Result<&'a PhaseoAgent, CError> {
    agent
        .as_ref()
        .ok_or_else(|| CError::argument("the agent handle is NULL"))
}

unsafe fn out_run(out: *mut *mut PhaseoRun, run: PhaseoRun) -> Result<PhaseoStatus, CError> {
    if out.is_null() {
        return Err(CError::argument("out_run is NULL"));
    }
    *out = Box::into_raw(Box::new(run));
    Ok(PhaseoStatus::Ok)
}

/// The core run options of a run's options JSON; its callbacks (run-level `stopWhen`
/// functions) are served by the run's `host`, which also receives the events.
pub(crate) unsafe fn run_options(
    options_json: *const c_char,
    client: *const PhaseoClient,
    store: *const PhaseoStore,
    host: &Arc<Host>,
    cancel: &CancellationToken,
) -> Result<RunOptions, CError> {
    let spec = core_spec::run_options_text(
        &callbacks(host),
        read_opt_str(options_json, "options_json")?,
    )?;
    let mut options = spec
        .into_run_options(client_arg(client)?)
        .cancel(cancel.clone());
    if let Some(store) = store_arg(store) {
        options = options.store(store);
    }
    if host.has_listener() {
        options = options.on_event(Arc::new(HostListener(host.clone())));
    }
    options.host_tag = host.tag();
    Ok(options)
}

/// The core continue options of a continue's options JSON.
pub(crate) unsafe fn continue_options(
    options_json: *const c_char,
    client: *const PhaseoClient,
    store: *const PhaseoStore,
    host: &Arc<Host>,
    cancel: &CancellationToken,
) -> Result<ContinueOptions, CError> {
    let spec = core_spec::continue_options_text(
        &callbacks(host),
        read_opt_str(options_json, "options_json")?,
    )?;
    let mut options = spec
        .into_continue_options(client_arg(client)?)
        .cancel(cancel.clone());
    if let Some(store) = store_arg(store) {
        options = options.store(store);
    }
    if host.has_listener() {
        options = options.on_event(Arc::new(HostListener(host.clone())));
    }
    options.host_tag = host.tag();
    Ok(options)
}

/// Reads a state's JSON text (`state_invalid` when it is not a valid state, text that is
/// not UTF-8 included: a continue and a streamed continue refuse it alike).
pub(crate) unsafe fn read_state(state_json: *const c_char) -> Result<Option<RunResult>, CError> {
    let text = read_opt_str(state_json, "state_json").map_err(|e| {
        CError::new(
            ErrorCode::StateInvalid,
            format!("Invalid state: {}", e.message()),
        )
    })?;
    match text {
        None => Ok(None),
        Some(text) => Ok(Some(RunResult::from_json(text)?)),
    }
}

/// Starts a run. `options_json` (NULL = `{}`) is `{input, messages?, context?, …overrides}`
/// (docs/behaviour.md §3); `client` is required; `store` (may be NULL) overrides the agent's. `host`
/// gives the run's `on_event` (synchronous, in order) and `on_done` (once, when it ends);
/// `host.release` runs after `on_done`. `*out_run` must be freed with `phaseo_run_free`.
#[no_mangle]
pub unsafe extern "C" fn phaseo_agent_run(
    agent: *const PhaseoAgent,
    options_json: *const c_char,
    client: *const PhaseoClient,
    store: *const PhaseoStore,
    host: PhaseoHost,
    out_run_ptr: *mut *mut PhaseoRun,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    start_run(
        Start::Spawn,
        agent,
        options_json,
        client,
        store,
        host,
        out_run_ptr,
        out_error,
    )
}

/// As `phaseo_agent_run`, but the run does nothing until the caller drives it with
/// `phaseo_run_poll` on a thread of its own (see there).
#[no_mangle]
pub unsafe extern "C" fn phaseo_agent_run_driven(
    agent: *const PhaseoAgent,
    options_json: *const c_char,
    client: *const PhaseoClient,
    store: *const PhaseoStore,
    host: PhaseoHost,
    out_run_ptr: *mut *mut PhaseoRun,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    start_run(
        Start::Driven,
        agent,
        options_json,
        client,
        store,
        host,
        out_run_ptr,
        out_error,
    )
}

#[allow(clippy::too_many_arguments)]
unsafe fn start_run(
    start: Start,
    agent: *const PhaseoAgent,
    options_json: *const c_char,
    client: *const PhaseoClient,
    store: *const PhaseoStore,
    host: PhaseoHost,
    out_run_ptr: *mut *mut PhaseoRun,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    let host = Host::new(host);
    guard(out_error, || {
        let agent = agent_ref(agent)?;
        let cancel = CancellationToken::new();
        let options = run_options(options_json, client, store, &host, &cancel)?;
        let core = agent.agent.clone();
        let run = PhaseoRun::new(
            start,
            host,
            cancel,
            Box::pin(async move { core.run(options).await }),
        );
        out_run(out_run_ptr, run)
    })
}

/// Continues a paused run: from `state_json` (canonical state text), or, when it is NULL,
/// the stored run `run_id` of the run store (claiming its pause once). `options_json` is
/// `{approvals?, rejections?, toolOutputs?, humanInput?, context?, …overrides}`; a refused
/// continue ends the run handle with `continue_invalid` and no state. Otherwise as
/// `phaseo_agent_run`.
#[no_mangle]
pub unsafe extern "C" fn phaseo_agent_continue(
    agent: *const PhaseoAgent,
    state_json: *const c_char,
    run_id: *const c_char,
    options_json: *const c_char,
    client: *const PhaseoClient,
    store: *const PhaseoStore,
    host: PhaseoHost,
    out_run_ptr: *mut *mut PhaseoRun,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    start_continue(
        Start::Spawn,
        agent,
        state_json,
        run_id,
        options_json,
        client,
        store,
        host,
        out_run_ptr,
        out_error,
    )
}

/// As `phaseo_agent_continue`, driven by the caller with `phaseo_run_poll`.
#[no_mangle]
pub unsafe extern "C" fn phaseo_agent_continue_driven(
    agent: *const PhaseoAgent,
    state_json: *const c_char,
    run_id: *const c_char,
    options_json: *const c_char,
    client: *const PhaseoClient,
    store: *const PhaseoStore,
    host: PhaseoHost,
    out_run_ptr: *mut *mut PhaseoRun,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    start_continue(
        Start::Driven,
        agent,
        state_json,
        run_id,
        options_json,
        client,
        store,
        host,
        out_run_ptr,
        out_error,
    )
}

#[allow(clippy::too_many_arguments)]
unsafe fn start_continue(
    start: Start,
    agent: *const PhaseoAgent,
    state_json: *const c_char,
    run_id: *const c_char,
    options_json: *const c_char,
    client: *const PhaseoClient,
    store: *const PhaseoStore,
    host: PhaseoHost,
    out_run_ptr: *mut *mut PhaseoRun,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    let host = Host::new(host);
    guard(out_error, || {
        let agent = agent_ref(agent)?;
        let cancel = CancellationToken::new();
        let options = continue_options(options_json, client, store, &host, &cancel)?;
        let core = agent.agent.clone();
        let run = match read_state(state_json) {
            Ok(Some(state)) => PhaseoRun::new(
                start,
                host,
                cancel,
                Box::pin(async move { core.continue_run(&state, options).await }),
            ),
            Ok(None) => {
                let id = read_str(run_id, "run_id (state_json is NULL)")?.to_owned();
                PhaseoRun::new(
                    start,
                    host,
                    cancel,
                    Box::pin(async move { core.continue_by_id(id, options).await }),
                )
            }
            // Invalid state is the continue's refusal, reported like the others.
            Err(e) => PhaseoRun::new(
                start,
                host,
                cancel,
                Box::pin(async move {
                    Err(phaseo_agent::AgentError::state_invalid(
                        e.message().to_owned(),
                    ))
                }),
            ),
        };
        out_run(out_run_ptr, run)
    })
}

/// Recovers stored run `run_id` whose worker died (docs/behaviour.md §10): continues it from its last
/// checkpoint. `options_json` may hold overrides only. Otherwise as `phaseo_agent_run`.
#[no_mangle]
pub unsafe extern "C" fn phaseo_agent_recover(
    agent: *const PhaseoAgent,
    run_id: *const c_char,
    options_json: *const c_char,
    client: *const PhaseoClient,
    store: *const PhaseoStore,
    host: PhaseoHost,
    out_run_ptr: *mut *mut PhaseoRun,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    start_recover(
        Start::Spawn,
        agent,
        run_id,
        options_json,
        client,
        store,
        host,
        out_run_ptr,
        out_error,
    )
}

/// As `phaseo_agent_recover`, driven by the caller with `phaseo_run_poll`.
#[no_mangle]
pub unsafe extern "C" fn phaseo_agent_recover_driven(
    agent: *const PhaseoAgent,
    run_id: *const c_char,
    options_json: *const c_char,
    client: *const PhaseoClient,
    store: *const PhaseoStore,
    host: PhaseoHost,
    out_run_ptr: *mut *mut PhaseoRun,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    start_recover(
        Start::Driven,
        agent,
        run_id,
        options_json,
        client,
        store,
        host,
        out_run_ptr,
        out_error,
    )
}

#[allow(clippy::too_many_arguments)]
unsafe fn start_recover(
    start: Start,
    agent: *const PhaseoAgent,
    run_id: *const c_char,
    options_json: *const c_char,
    client: *const PhaseoClient,
    store: *const PhaseoStore,
    host: PhaseoHost,
    out_run_ptr: *mut *mut PhaseoRun,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    let host = Host::new(host);
    guard(out_error, || {
        let agent = agent_ref(agent)?;
        let id = read_str(run_id, "run_id")?.to_owned();
        let cancel = CancellationToken::new();
        let options = continue_options(options_json, client, store, &host, &cancel)?;
        let core = agent.agent.clone();
        let run = PhaseoRun::new(
            start,
            host,
            cancel,
            Box::pin(async move { core.recover(&id, options).await }),
        );
        out_run(out_run_ptr, run)
    })
}

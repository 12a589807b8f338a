//! `run` / `continueRun`, polled on the JavaScript thread.
//!
//! The run's future lives in a [`Driver`]; its waker asks JS (through the dispatcher) to
//! call `pollRun(id)`, and JS takes the calls a poll queued right after it. So a run whose
//! tools are JavaScript functions never waits for a thread wake-up between its turns: the
//! model turn, the calls, their answers and the next turn all happen on the JS thread.
//! Tokio still provides the timers and sockets (each poll enters the module's runtime).

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Wake, Waker};

use napi::bindgen_prelude::*;
use napi::JsDeferred;
use napi_derive::napi;
use phaseo_agent::driven::{DrivenRun, Polled};
use phaseo_agent::{AgentError, ErrorCode, RunResult};

use crate::agent::NativeState;
use crate::errors::to_napi;
use crate::host::{outbox_waiting, request_poll, JsThreadPoll};

type Outcome = std::result::Result<RunResult, AgentError>;
type Resolve = Box<dyn FnOnce(Env) -> napi::Result<NativeState> + Send>;

/// One run driven on the JS thread.
struct Driver {
    id: u32,
    run: Mutex<DrivenRun<Outcome>>,
    /// A poll is requested and has not started yet (wake-ups coalesce).
    scheduled: AtomicBool,
    deferred: Mutex<Option<JsDeferred<NativeState, Resolve>>>,
}

fn drivers() -> &'static Mutex<HashMap<u32, Arc<Driver>>> {
    static DRIVERS: OnceLock<Mutex<HashMap<u32, Arc<Driver>>>> = OnceLock::new();
    DRIVERS.get_or_init(Default::default)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Wake for Driver {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if !self.scheduled.swap(true, Ordering::AcqRel) && !request_poll(self.id) {
            // The dispatcher is gone (Node is exiting): nothing can poll any more.
            self.scheduled.store(false, Ordering::Release);
        }
    }
}

impl Driver {
    fn poll(self: &Arc<Self>) {
        self.scheduled.store(false, Ordering::Release);
        let Ok(mut run) = self.run.try_lock() else {
            self.wake_by_ref();
            return;
        };
        let waker = Waker::from(self.clone());
        let polled = {
            let _js_thread = JsThreadPoll::enter();
            run.poll_once(&mut Context::from_waker(&waker))
        };
        let outcome = match polled {
            Polled::Pending | Polled::Busy => return,
            Polled::Ended(outcome) => outcome,
            Polled::Panicked(message) => Err(AgentError::new(
                ErrorCode::ToolFailed,
                format!("internal error: {message}"),
            )),
        };
        drop(run);
        lock(drivers()).remove(&self.id);
        if let Some(deferred) = lock(&self.deferred).take() {
            match outcome {
                Ok(state) => deferred.resolve(Box::new(move |_| Ok(NativeState::new(state)))),
                Err(e) => deferred.reject(to_napi(e)),
            }
        }
    }
}

/// Starts driving `run` on the JS thread as run `id` (JS polls it first with `pollRun`);
/// returns the promise of its state.
pub fn drive<F>(env: &Env, id: u32, run: F) -> napi::Result<Object<'_>>
where
    F: Future<Output = Outcome> + Send + 'static,
{
    let mut registry = lock(drivers());
    if registry.contains_key(&id) {
        return Err(napi::Error::from_reason(format!("run id {id} is in use")));
    }
    let (deferred, promise) = env.create_deferred::<NativeState, Resolve>()?;
    // The run lives in the runtime napi's async functions use (`lib.rs` builds it), not in
    // the core's: one set of worker threads for the whole module. (Once Node has shut
    // that runtime down, the core's.)
    let runtime = within_runtime_if_available(tokio::runtime::Handle::try_current)
        .unwrap_or_else(|_| phaseo_agent::exec::runtime().handle().clone());
    registry.insert(
        id,
        Arc::new(Driver {
            id,
            run: Mutex::new(DrivenRun::in_runtime(runtime, run)),
            scheduled: AtomicBool::new(true),
            deferred: Mutex::new(Some(deferred)),
        }),
    );
    Ok(promise)
}

/// Polls run `id` (on the JS thread); returns whether calls are queued for JS to take
/// now with `takeOutbox`.
#[napi(js_name = "pollRun")]
pub fn poll_run(id: u32) -> bool {
    let driver = lock(drivers()).get(&id).cloned();
    if let Some(driver) = driver {
        driver.poll();
    }
    outbox_waiting()
}

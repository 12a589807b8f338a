//! Serving the queue after a wait was interrupted.
//!
//! A thread waiting for a run returns when it is interrupted (Ctrl-C, `Timeout.timeout`,
//! `Thread#raise`) once its grace has passed, though the cancelled run may still be ending:
//! it waits up to 5 s for its store's save, and a stream's or store operation's aborted
//! task is dropped after its thread returned. The stop of each callable abandoned then
//! (`Internal.cancel_call`, queued when the core lets go of the call) would wait in the
//! queue until the next run's thread serves it, leaving a blocked accessor or tool thread
//! alive in an application that makes no further call. So an interrupted wait leaves a
//! Ruby thread of the SDK serving the queue for a while: one at a time, its time extended
//! by every later interrupted wait.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use magnus::value::ReprValue;
use magnus::{Error, Ruby};

use crate::host::{pop_job, take_deferred_interrupt};

/// How long the drainer serves after the last interrupted wait: past the 5 s a cancelled
/// run still waits for its store's save, with a margin.
const DRAIN_FOR: Duration = Duration::from_secs(7);

/// Until when the drainer serves, and whether one is running.
static DRAIN: Mutex<(Option<Instant>, bool)> = Mutex::new((None, false));

/// Keeps the queue served for [`DRAIN_FOR`] from now, starting the drainer thread unless
/// one is running.
pub fn after_interrupt(ruby: &Ruby) {
    {
        let mut drain = DRAIN.lock().unwrap_or_else(|e| e.into_inner());
        drain.0 = Some(Instant::now() + DRAIN_FOR);
        if drain.1 {
            return;
        }
        drain.1 = true;
    }
    let thread = ruby.thread_create_from_fn(serve);
    let _: Result<magnus::Value, Error> = thread.funcall("name=", ("phaseo_agent_sdk drain",));
}

/// `PhaseoAgentSdk::Native.stop_drain`: the drainer stops at its next look (at exit).
pub fn stop() {
    DRAIN.lock().unwrap_or_else(|e| e.into_inner()).0 = None;
}

/// The drainer's body: runs queued jobs until its time is up. An interrupt a job raises
/// here belongs to no waiting caller and is dropped.
fn serve(ruby: &Ruby) {
    let wait = crate::adapters::internal(ruby);
    loop {
        while let Some(job) = pop_job() {
            job(ruby);
            let _ = take_deferred_interrupt();
        }
        {
            let mut drain = DRAIN.lock().unwrap_or_else(|e| e.into_inner());
            if drain.0.is_none_or(|until| Instant::now() >= until) {
                drain.1 = false;
                return;
            }
        }
        let waited = match &wait {
            Ok(internal) => internal
                .funcall::<_, _, magnus::Value>("wait", (0.02,))
                .map(|_| ()),
            Err(_) => {
                std::thread::sleep(Duration::from_millis(20));
                Ok(())
            }
        };
        if waited.is_err() {
            // Raised into this thread (`Thread#raise`, `kill`): stop serving.
            DRAIN.lock().unwrap_or_else(|e| e.into_inner()).1 = false;
            return;
        }
    }
}

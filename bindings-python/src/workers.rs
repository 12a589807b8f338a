//! Threads for synchronous Python executors. Each worker attaches to the interpreter once
//! and keeps its thread state, releasing the GIL while it waits for work: far cheaper per
//! call than attaching a fresh thread each time. Like anyio's default thread limiter, at
//! most `MAX_WORKERS` calls run at once; workers start on demand.
//!
//! A call whose waiter went away (timed out, cancelled) is *abandoned*: if it had not
//! started it never runs, and if it is running (a `def` that ignores `runtime.cancelled`
//! and blocks) its thread no longer counts against the limit, so a new call starts at
//! once instead of queueing behind threads that nobody waits for (SPEC §2.2). Interpreter
//! exit does not wait for abandoned calls either (`lifecycle::_shutdown`). When such a
//! thread comes back, it keeps working only if the pool is below its limit again.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};

use pyo3::prelude::*;

/// Synchronous executors running at once (abandoned ones not counted).
const MAX_WORKERS: usize = 40;

/// A call on a worker thread, with the GIL held.
pub type Job = Box<dyn for<'py> FnOnce(Python<'py>) + Send>;

const QUEUED: u8 = 0;
const RUNNING: u8 = 1;
const DONE: u8 = 2;
const ABANDONED: u8 = 3;

#[derive(Default)]
struct State {
    jobs: VecDeque<(Arc<AtomicU8>, Job)>,
    /// Threads alive, including those running an abandoned call.
    workers: usize,
    idle: usize,
    /// Threads running a call whose waiter went away.
    abandoned: usize,
}

impl State {
    /// Threads that count against `MAX_WORKERS`.
    fn live(&self) -> usize {
        self.workers - self.abandoned
    }

    /// Whether a queued call needs a new thread (none idle, room under the limit); if so,
    /// counts it as started.
    fn claim_new_worker(&mut self) -> bool {
        let start = !self.jobs.is_empty() && self.idle == 0 && self.live() < MAX_WORKERS;
        if start {
            self.workers += 1;
        }
        start
    }
}

struct Pool {
    state: Mutex<State>,
    work: Condvar,
}

impl Pool {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool {
        state: Mutex::new(State::default()),
        work: Condvar::new(),
    })
}

/// The waiter's side of a call given to [`run`]: dropping it before [`JobHandle::finish`]
/// abandons the call.
pub struct JobHandle {
    status: Arc<AtomicU8>,
    finished: bool,
}

impl JobHandle {
    /// The waiter got its outcome: nothing to abandon.
    pub fn finish(mut self) {
        self.finished = true;
    }
}

impl Drop for JobHandle {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        // Not started: the worker that takes it skips it (QUEUED → ABANDONED, no count).
        if self
            .status
            .compare_exchange(QUEUED, ABANDONED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            return;
        }
        let pool = pool();
        let start_worker = {
            let mut state = pool.lock();
            // Under the lock, so the worker's decrement (after it sees ABANDONED) always
            // follows this increment.
            if self
                .status
                .compare_exchange(RUNNING, ABANDONED, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                return;
            }
            state.abandoned += 1;
            state.claim_new_worker()
        };
        if start_worker {
            spawn_worker();
        }
    }
}

/// Runs `job` on a worker thread with the GIL held. Keep the handle until the job has
/// reported its outcome and then call [`JobHandle::finish`]; dropping it earlier abandons
/// the job.
pub fn run(job: Job) -> JobHandle {
    let pool = pool();
    let status = Arc::new(AtomicU8::new(QUEUED));
    let start_worker = {
        let mut state = pool.lock();
        state.jobs.push_back((status.clone(), job));
        state.claim_new_worker()
    };
    if start_worker {
        spawn_worker();
    } else {
        pool.work.notify_one();
    }
    JobHandle {
        status,
        finished: false,
    }
}

fn spawn_worker() {
    let spawned = std::thread::Builder::new()
        .name("phaseo-py-worker".into())
        .spawn(worker);
    if spawned.is_err() {
        pool().lock().workers -= 1;
    }
}

fn next_job(py: Python<'_>) -> Option<(Arc<AtomicU8>, Job)> {
    let pool = pool();
    py.detach(|| {
        let mut state = pool.lock();
        loop {
            // A thread back from an abandoned call leaves when the pool is full without it.
            if crate::lifecycle::is_shutting_down() || state.live() > MAX_WORKERS {
                state.workers -= 1;
                return None;
            }
            if let Some(job) = state.jobs.pop_front() {
                return Some(job);
            }
            state.idle += 1;
            state = pool.work.wait(state).unwrap_or_else(|e| e.into_inner());
            state.idle -= 1;
        }
    })
}

fn worker() {
    // Counted for its whole life, so interpreter shutdown waits until it has left Python
    // (except while it runs an abandoned call: see `abandoned`).
    let Some(_counted) = crate::lifecycle::InFlight::start() else {
        pool().lock().workers -= 1;
        return;
    };
    Python::attach(|py| {
        while let Some((status, job)) = next_job(py) {
            if status
                .compare_exchange(QUEUED, RUNNING, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                continue; // abandoned before it started
            }
            job(py);
            if status.swap(DONE, Ordering::AcqRel) == ABANDONED {
                pool().lock().abandoned -= 1;
            }
        }
    });
}

/// Worker threads running an abandoned call: interpreter shutdown does not wait for them.
pub fn abandoned() -> usize {
    pool().lock().abandoned
}

/// Wakes idle workers so they exit (interpreter shutdown).
pub fn wake_all() {
    pool().work.notify_all();
}

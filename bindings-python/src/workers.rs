//! Threads for synchronous Python executors. Like anyio's default thread limiter, at most
//! `MAX_WORKERS` calls run at once; workers start on demand and wait (without the GIL) for
//! more work.
//!
//! The workers are Python threads (`threading`, daemon) running `_workers.work`, which
//! calls the executor itself: while a `def` runs, no Rust frame is on its thread's stack.
//! That is what makes interpreter exit safe. CPython 3.11–3.13 end a daemon thread that
//! takes the GIL back (say, when `time.sleep` returns) once finalization began with
//! `pthread_exit`, a forced unwind: through Rust frames it ran `catch_unwind` and pyo3's
//! destructors (aborting with "FATAL: exception not rethrown", or "Fatal Python error:
//! PyThreadState_Get ... finalizing" from a destructor that touched Python without a thread
//! state). Through the interpreter's own frames it is the ordinary end of a daemon thread.
//! The worker enters Rust only briefly, and counted (`lifecycle`), so exit waits for it.
//!
//! A call whose waiter went away (timed out, cancelled) is *abandoned*: if it had not
//! started it never runs, and if it is running (a `def` that ignores `runtime.cancelled`
//! and blocks) its thread no longer counts against the limit, so a new call starts at
//! once instead of queueing behind threads that nobody waits for (docs/behaviour.md §2.2). Interpreter
//! exit waits for no executor. When such a thread comes back, it keeps working only if the
//! pool is below its limit again.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::lifecycle::InFlight;

/// Synchronous executors running at once (abandoned ones not counted).
const MAX_WORKERS: usize = 40;

/// Builds the call under the GIL: the callable and its arguments.
pub type Prepare = Box<
    dyn for<'py> FnOnce(Python<'py>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> + Send,
>;

/// Takes the call's outcome (or the error building it), under the GIL.
pub type Finish = Box<dyn for<'py> FnOnce(Python<'py>, PyResult<Bound<'py, PyAny>>) + Send>;

/// A call for a worker thread.
pub struct Job {
    /// What to call.
    pub prepare: Prepare,
    /// Where its outcome goes.
    pub finish: Finish,
}

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

    /// Whether a queued call needs a new thread (more calls queued than idle threads to take
    /// them, room under the limit); if so, counts it as started. Idle threads woken for
    /// earlier calls still count as idle until they take one, so calls queued together each
    /// get a thread: with only "none idle" the third of three calls queued behind two idle
    /// threads waited for one of them to finish, and calls that wait on each other never
    /// all ran.
    fn claim_new_worker(&mut self) -> bool {
        let start = self.jobs.len() > self.idle && self.live() < MAX_WORKERS;
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

/// Runs `job` on a worker thread. Keep the handle until the job has reported its outcome
/// and then call [`JobHandle::finish`]; dropping it earlier abandons the job.
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

/// Starts a worker thread (`_workers.start`), already counted in `workers`: from tokio's
/// blocking pool, since starting a Python thread needs the GIL, which tokio's workers never
/// wait for.
fn spawn_worker() {
    phaseo_agent::exec::runtime().spawn_blocking(|| {
        let started = crate::lifecycle::attach(|py| {
            py.import("phaseo_agent._workers")
                .and_then(|m| m.getattr("start")?.call0().map(drop))
                .is_ok()
        });
        if started != Some(true) {
            no_thread();
        }
    });
}

/// A worker thread could not start (interpreter exit, or the system refused one): if no
/// worker is left to take the queued calls, their waiters learn it now rather than at
/// their timeout.
fn no_thread() {
    let orphans = {
        let mut state = pool().lock();
        state.workers -= 1;
        if state.live() == 0 {
            std::mem::take(&mut state.jobs)
        } else {
            VecDeque::new()
        }
    };
    // Dropping a call's `finish` tells its waiter; Python values in it are released
    // when the GIL is next held (pyo3's reference pool).
    drop(orphans);
}

/// The next call for this worker, waiting for one without the GIL; `None` when the thread
/// must leave (it came back from an abandoned call to a full pool).
fn next_job(py: Python<'_>) -> Option<(Arc<AtomicU8>, Job)> {
    let pool = pool();
    crate::lifecycle::detach(py, || {
        let mut state = pool.lock();
        loop {
            if state.live() > MAX_WORKERS {
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

/// Ends a call: back under the limit if it had been abandoned.
fn complete(status: &AtomicU8) {
    if status.swap(DONE, Ordering::AcqRel) == ABANDONED {
        pool().lock().abandoned -= 1;
    }
}

/// `_workers.work`'s next call: `(callable, args, done)`, or `None` when the thread must
/// leave. Blocks (without the GIL) until there is one.
#[pyfunction]
pub fn _next_call(py: Python<'_>) -> Option<(Py<PyAny>, Py<PyTuple>, CallDone)> {
    while let Some((status, job)) = next_job(py) {
        if status
            .compare_exchange(QUEUED, RUNNING, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            continue; // abandoned before it started
        }
        // Counted while it may run Python code from here (building the arguments), so
        // interpreter exit waits for it; at exit the call is dropped instead.
        let Some(_counted) = InFlight::start() else {
            complete(&status);
            continue;
        };
        let Job { prepare, finish } = job;
        match prepare(py) {
            Ok((func, args)) => {
                let done = CallDone {
                    status,
                    finish: Mutex::new(Some(finish)),
                };
                return Some((func.unbind(), args.unbind(), done));
            }
            Err(e) => {
                finish(py, Err(e));
                complete(&status);
            }
        }
    }
    None
}

/// Reports the outcome of a worker's call (called by `_workers.work`).
#[pyclass(name = "CallDone", module = "phaseo_agent._native", frozen)]
pub struct CallDone {
    status: Arc<AtomicU8>,
    finish: Mutex<Option<Finish>>,
}

#[pymethods]
impl CallDone {
    /// `done(True, value)` or `done(False, exception)`.
    fn __call__(&self, py: Python<'_>, ok: bool, value: Bound<'_, PyAny>) {
        let finish = self.finish.lock().unwrap_or_else(|e| e.into_inner()).take();
        // Converting the outcome may run Python code: counted, so exit waits for it. Once
        // the interpreter is exiting nobody needs it: the waiter gets "shutting down".
        if let (Some(finish), Some(_counted)) = (finish, InFlight::start()) {
            let outcome = if ok {
                Ok(value)
            } else {
                Err(PyErr::from_value(value))
            };
            finish(py, outcome);
        }
        complete(&self.status);
    }
}

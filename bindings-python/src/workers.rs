//! Threads for synchronous Python executors. Each worker attaches to the interpreter once
//! and keeps its thread state, releasing the GIL while it waits for work: far cheaper per
//! call than attaching a fresh thread each time. Like anyio's default thread limiter, at
//! most `MAX_WORKERS` run at once; workers start on demand.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, OnceLock};

use pyo3::prelude::*;

/// Synchronous executors running at once.
const MAX_WORKERS: usize = 40;

type Job = Box<dyn for<'py> FnOnce(Python<'py>) + Send>;

#[derive(Default)]
struct State {
    jobs: VecDeque<Job>,
    workers: usize,
    idle: usize,
}

struct Pool {
    state: Mutex<State>,
    work: Condvar,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool {
        state: Mutex::new(State::default()),
        work: Condvar::new(),
    })
}

/// Runs `job` on a worker thread with the GIL held.
pub fn run(job: Job) {
    let pool = pool();
    let start_worker = {
        let mut state = pool.state.lock().unwrap_or_else(|e| e.into_inner());
        state.jobs.push_back(job);
        let start = state.idle == 0 && state.workers < MAX_WORKERS;
        if start {
            state.workers += 1;
        }
        start
    };
    if start_worker {
        let spawned = std::thread::Builder::new()
            .name("phaseo-py-worker".into())
            .spawn(worker);
        if spawned.is_err() {
            pool.state.lock().unwrap_or_else(|e| e.into_inner()).workers -= 1;
        }
    } else {
        pool.work.notify_one();
    }
}

fn next_job(py: Python<'_>) -> Option<Job> {
    let pool = pool();
    py.detach(|| {
        let mut state = pool.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(job) = state.jobs.pop_front() {
                return Some(job);
            }
            if crate::lifecycle::is_shutting_down() {
                state.workers -= 1;
                return None;
            }
            state.idle += 1;
            state = pool.work.wait(state).unwrap_or_else(|e| e.into_inner());
            state.idle -= 1;
        }
    })
}

fn worker() {
    // Counted for its whole life, so interpreter shutdown waits until it has left Python.
    let Some(_counted) = crate::lifecycle::InFlight::start() else {
        let pool = pool();
        pool.state.lock().unwrap_or_else(|e| e.into_inner()).workers -= 1;
        return;
    };
    Python::attach(|py| {
        while let Some(job) = next_job(py) {
            job(py);
        }
    });
}

/// Wakes idle workers so they exit (interpreter shutdown).
pub fn wake_all() {
    pool().work.notify_all();
}

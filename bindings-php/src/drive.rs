//! Runs driven by the PHP thread: a run's future is polled where its calls are served.
//!
//! Why: spawned on the core's runtime, a run hands every call over twice — a core thread
//! queues the call and sleeps, the PHP thread wakes to run it, and its answer wakes a core
//! thread again — so a turn of one trivial call cost two thread wake-ups, far more than the
//! turn itself. A run of `run`, `continue` or `recover` is therefore polled by the PHP
//! thread while it pumps the queue ([`crate::host::poll`]): the calls a poll makes are
//! queued for the same thread, and an answer given there (`phaseo_respond`) marks the run
//! to be polled again before the pump waits, with no thread woken at all.
//!
//! A wake-up from any other thread (a timer: a tool's timeout; a connection of an MCP
//! server; a store) polls the run on the core's runtime instead, as a spawned run would
//! be: the PHP thread may be busy in a call that blocks, and the run must still see its
//! timeout or cancellation on time. Whoever polls takes the run's lock; a wake-up while
//! someone polls is seen by that poller when it lets go (it polls again), so none is lost.

use std::cell::Cell;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, TryLockError};
use std::task::{Context, Wake, Waker};

use phaseo_agent::driven::{DrivenRun, Polled, MAX_ROUNDS};
use phaseo_agent::{AgentError, ErrorCode};

/// A run polled by whoever it woke.
struct Driven {
    /// The run until it ends (it reports its end itself, see `crate::run`).
    future: Mutex<DrivenRun<()>>,
    /// Set by every wake-up; a poller clears it before it polls.
    woken: AtomicBool,
    /// The run's handle (its end is reported under it if polling it panics).
    run: i64,
}

thread_local! {
    /// Whether this thread is the PHP thread (it pumps the queue and answers calls).
    static ON_PHP_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// Marks the calling thread as the PHP thread (the one that pumps the queue).
pub fn mark_php_thread() {
    ON_PHP_THREAD.with(|c| c.set(true));
}

/// The runs in flight that are driven.
fn runs() -> &'static Mutex<Vec<Arc<Driven>>> {
    static RUNS: OnceLock<Mutex<Vec<Arc<Driven>>>> = OnceLock::new();
    RUNS.get_or_init(|| Mutex::new(Vec::new()))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Starts driving a run (its future reports its own end): the PHP thread polls it first,
/// at its next pump.
pub fn start(run: i64, future: impl Future<Output = ()> + Send + 'static) {
    let driven = Arc::new(Driven {
        future: Mutex::new(DrivenRun::new(future)),
        woken: AtomicBool::new(true),
        run,
    });
    lock(runs()).push(driven);
    crate::host::driven_woken();
}

/// Polls every run woken on the PHP thread (called by the pump, on the PHP thread).
pub fn drive_woken() {
    let woken: Vec<Arc<Driven>> = lock(runs())
        .iter()
        .filter(|d| d.woken.load(Ordering::SeqCst))
        .cloned()
        .collect();
    for driven in woken {
        driven.drive();
    }
}

impl Driven {
    /// Polls the run while it is woken, unless another thread polls it now (that thread
    /// polls again when it lets go, having seen the wake-up).
    fn drive(self: &Arc<Self>) {
        for _ in 0..MAX_ROUNDS {
            if !self.woken.load(Ordering::SeqCst) {
                return;
            }
            let mut run = match self.future.try_lock() {
                Ok(run) => run,
                Err(TryLockError::Poisoned(p)) => p.into_inner(),
                Err(TryLockError::WouldBlock) => return,
            };
            if run.has_ended() {
                return;
            }
            self.woken.store(false, Ordering::SeqCst);
            let waker = Waker::from(self.clone());
            let mut cx = Context::from_waker(&waker);
            let polled = run.poll_once(&mut cx);
            drop(run);
            if matches!(polled, Polled::Pending | Polled::Busy) {
                continue;
            }
            lock(runs()).retain(|d| !Arc::ptr_eq(d, self));
            if let Polled::Panicked(message) = polled {
                crate::run::finish(
                    self.run,
                    Err(AgentError::new(
                        ErrorCode::ToolFailed,
                        format!("internal error: {message}"),
                    )),
                );
            }
            return;
        }
        // A run that keeps waking itself: the thread is given back (the PHP thread serves
        // its queue) and the run is polled again after that.
        self.wake_by_ref();
    }
}

impl Wake for Driven {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::SeqCst);
        if ON_PHP_THREAD.with(Cell::get) {
            crate::host::driven_woken();
        } else {
            let driven = self.clone();
            phaseo_agent::exec::runtime().spawn(async move { driven.drive() });
        }
    }
}

//! The bridge between the core's threads and Ruby.
//!
//! Ruby's API may only be called from threads Ruby knows, holding the GVL. The core runs
//! on tokio threads, so every call into Ruby (a tool, a validator, a hook, a listener) is
//! a [`Job`] queued here; a Ruby thread that waits for a run (`run`, `continue_run`, a
//! stream's `next`) serves the queue: it sleeps WITHOUT the GVL until a job or its own
//! outcome arrives, runs the jobs with the GVL, and goes back to sleep. Callables do not run
//! on that thread (event listeners excepted): their job starts a Ruby `Thread` (see
//! `Internal.start_call`), so tools run concurrently, and a validator, hook or model client
//! that blocks cannot keep a cancelled run from returning: the serving thread stays free
//! and the abandoned call's thread is stopped as a timed-out tool's.
//!
//! The serving thread waits in Ruby (`IO#wait_readable` on a wake pipe the queue writes
//! to), not in a custom `rb_thread_call_without_gvl`: Ruby then delivers Ctrl-C and
//! `Thread#raise` to it as to any blocking call (a custom unblocking function is not called
//! for signals while other Ruby threads are sleeping).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use magnus::{Error, Ruby};

/// Work that needs Ruby, run on a Ruby thread holding the GVL.
pub type Job = Box<dyn FnOnce(&Ruby) + Send>;

struct Queue {
    jobs: Mutex<VecDeque<Job>>,
}

fn queue() -> &'static Queue {
    static QUEUE: OnceLock<Queue> = OnceLock::new();
    QUEUE.get_or_init(|| Queue {
        jobs: Mutex::new(VecDeque::new()),
    })
}

fn lock() -> MutexGuard<'static, VecDeque<Job>> {
    queue().jobs.lock().unwrap_or_else(|e| e.into_inner())
}

/// Queues `job` for the next Ruby thread that serves the queue (from any thread).
pub fn post(job: Job) {
    lock().push_back(job);
    write_wake_byte();
}

/// Wakes the serving threads (an outcome arrived).
pub fn wake_all() {
    write_wake_byte();
}

/// Something a Ruby thread waits for (a run's outcome, a stream's next item).
pub trait Waitable: Send + Sync {
    /// Whether the wait is over.
    fn ready(&self) -> bool;
}

/// The write end of the wake pipe (`Internal::WAKE_W`), set when the extension loads.
static WAKE_FD: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);

/// Remembers the wake pipe's write end.
pub fn set_wake_fd(fd: i32) {
    WAKE_FD.store(fd, Ordering::Release);
}

fn write_wake_byte() {
    use std::io::Write as _;
    use std::os::fd::FromRawFd as _;
    let fd = WAKE_FD.load(Ordering::Acquire);
    if fd < 0 {
        return;
    }
    // Borrowed, never closed here; the pipe is non-blocking, so a full pipe (already
    // readable) just drops the byte.
    let mut file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
    let _ = file.write(&[1]);
}

pub(crate) fn pop_job() -> Option<Job> {
    lock().pop_front()
}

fn queued() -> usize {
    lock().len()
}

/// Serves the queue on this Ruby thread until `target` is ready.
///
/// The thread waits in Ruby itself (`Internal.wait`: `IO#wait_readable` on a wake pipe),
/// so the GVL is released and Ruby delivers signals and `Thread#raise` as in any blocking
/// Ruby call. A Ruby interrupt (Ctrl-C, `Thread#raise`, `Timeout`) is returned as its
/// exception after `on_interrupt` ran (the caller cancels its run there); the queue is
/// served a little longer (up to `grace`) so the cancelled run can settle its tools.
pub fn serve_until(
    ruby: &Ruby,
    target: &dyn Waitable,
    on_interrupt: &dyn Fn(),
    grace: Duration,
) -> Result<(), Error> {
    serve_run(ruby, target, None, on_interrupt, grace)
}

/// [`serve_until`] for a run with an `on_event` listener: this thread also delivers the
/// run's events to it, in order, and all of them before returning (unless interrupted).
/// An interrupt or a jump (`throw`, `Thread#kill`, `Thread.exit`) that ends a delivery is
/// the caller's: the run is cancelled and it is re-raised after the grace.
pub fn serve_run(
    ruby: &Ruby,
    target: &dyn Waitable,
    listener: Option<&crate::adapters::Listener>,
    on_interrupt: &dyn Fn(),
    grace: Duration,
) -> Result<(), Error> {
    use magnus::value::ReprValue;
    let internal = crate::adapters::internal(ruby)?;
    let mut pending: Option<Error> = None;
    let mut deadline: Option<Instant> = None;
    loop {
        if pending.is_none() {
            if let Some(Err(e)) = listener.and_then(|l| l.deliver_one(ruby)) {
                on_interrupt();
                pending = Some(e);
                deadline = Some(Instant::now() + grace);
            }
        }
        if let Some(job) = pop_job() {
            job(ruby);
            if let Some(e) = take_deferred_interrupt() {
                if pending.is_none() {
                    on_interrupt();
                    pending = Some(e);
                    deadline = Some(Instant::now() + grace);
                }
            }
            continue;
        }
        let events_left = pending.is_none() && listener.is_some_and(|l| l.pending());
        if (target.ready() && !events_left) || deadline.is_some_and(|d| Instant::now() >= d) {
            // The jobs queued before the outcome (the stop of a callable the cancelled run
            // abandoned) are run before returning, not left for the next run's thread.
            for _ in 0..queued() {
                match pop_job() {
                    Some(job) => job(ruby),
                    None => break,
                }
            }
            if !target.ready() {
                // Interrupted before the outcome: what the ending run lets go of later is
                // stopped by the SDK's drainer thread (crate::drain).
                crate::drain::after_interrupt(ruby);
            }
            return match pending.or_else(take_deferred_interrupt) {
                Some(e) => Err(e),
                None => Ok(()),
            };
        }
        // Every job and outcome writes a wake byte after it is queued, so this wait cannot
        // miss one; the timeout only bounds a wake-up another serving thread drained.
        let waited: Result<magnus::Value, Error> = internal.funcall("wait", (0.02,));
        if let Err(e) = waited {
            if pending.is_none() {
                on_interrupt();
                pending = Some(e);
                deadline = Some(Instant::now() + grace);
            }
        }
    }
}

thread_local! {
    /// An interrupt (Ctrl-C, `Thread#raise`, `exit`) raised into a job run on this serving
    /// thread: the job's own call fails, and the run is cancelled and the interrupt
    /// re-raised to the caller of `run`.
    static DEFERRED: std::cell::RefCell<Option<Error>> = const { std::cell::RefCell::new(None) };
}

/// Keeps `error` for the serving thread when it is an interrupt rather than an error of
/// the callable (`Interrupt`, `SignalException`, `SystemExit`); returns whether it did.
pub fn defer_if_interrupt(ruby: &Ruby, error: &Error) -> bool {
    let is_interrupt = match error.error_type() {
        magnus::error::ErrorType::Exception(exc) => {
            use magnus::value::ReprValue;
            exc.is_kind_of(ruby.exception_signal()) || exc.is_kind_of(ruby.exception_system_exit())
        }
        _ => false,
    };
    if is_interrupt {
        DEFERRED.with(|d| {
            d.borrow_mut().get_or_insert_with(|| error.clone());
        });
    }
    is_interrupt
}

pub(crate) fn take_deferred_interrupt() -> Option<Error> {
    DEFERRED.with(|d| d.borrow_mut().take())
}

/// An outcome a tokio task delivers to a waiting Ruby thread.
pub struct Slot<T> {
    value: Mutex<Option<T>>,
    done: AtomicBool,
}

impl<T: Send> Slot<T> {
    /// An empty slot.
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            value: Mutex::new(None),
            done: AtomicBool::new(false),
        })
    }

    /// Stores the outcome and wakes the waiters.
    pub fn fill(&self, value: T) {
        *self.value.lock().unwrap_or_else(|e| e.into_inner()) = Some(value);
        self.done.store(true, Ordering::Release);
        wake_all();
    }

    /// Takes the outcome.
    pub fn take(&self) -> Option<T> {
        self.value.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

impl<T: Send> Waitable for Slot<T> {
    fn ready(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }
}

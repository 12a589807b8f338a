//! The bridge between the core's threads and Ruby.
//!
//! Ruby's API may only be called from threads Ruby knows, holding the GVL. The core runs
//! on tokio threads, so every call into Ruby (a tool, a validator, a hook, a listener) is
//! a [`Job`] queued here; a Ruby thread that waits for a run (`run`, `continue_run`, a
//! stream's `next`) serves the queue: it sleeps WITHOUT the GVL until a job or its own
//! outcome arrives, runs the jobs with the GVL, and goes back to sleep. Tools do not run
//! on that thread: their job starts a Ruby `Thread` (see `Internal.start_tool`), so
//! tools run concurrently and the serving thread stays free for the short callbacks.
//!
//! A Ruby interrupt (Ctrl-C, `Thread#raise`) wakes the waiting thread through the
//! unblocking function given to `rb_thread_call_without_gvl`.

use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use magnus::{Error, Ruby};

/// Work that needs Ruby, run on a Ruby thread holding the GVL.
pub type Job = Box<dyn FnOnce(&Ruby) + Send>;

struct Queue {
    jobs: Mutex<VecDeque<Job>>,
    ready: Condvar,
}

fn queue() -> &'static Queue {
    static QUEUE: OnceLock<Queue> = OnceLock::new();
    QUEUE.get_or_init(|| Queue {
        jobs: Mutex::new(VecDeque::new()),
        ready: Condvar::new(),
    })
}

fn lock() -> MutexGuard<'static, VecDeque<Job>> {
    queue().jobs.lock().unwrap_or_else(|e| e.into_inner())
}

/// Queues `job` for the next Ruby thread that serves the queue (from any thread).
pub fn post(job: Job) {
    lock().push_back(job);
    queue().ready.notify_all();
}

/// Wakes every serving thread (an outcome arrived, or an interrupt).
pub fn wake_all() {
    let _guard = lock();
    queue().ready.notify_all();
}

/// Something a Ruby thread waits for (a run's outcome, a stream's next item).
pub trait Waitable: Send + Sync {
    /// Whether the wait is over.
    fn ready(&self) -> bool;
}

struct WaitArgs<'a> {
    target: &'a dyn Waitable,
    interrupted: &'a AtomicBool,
    deadline: Option<Instant>,
    job: Option<Job>,
}

unsafe extern "C" fn wait_without_gvl(data: *mut c_void) -> *mut c_void {
    let args = &mut *(data as *mut WaitArgs<'_>);
    let mut jobs = lock();
    loop {
        if let Some(job) = jobs.pop_front() {
            args.job = Some(job);
            break;
        }
        if args.target.ready() || args.interrupted.load(Ordering::Acquire) {
            break;
        }
        if args.deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        // Outcomes are signalled through `wake_all` (under the lock), so a plain wait
        // cannot miss one; the timeout is only a backstop.
        jobs = queue()
            .ready
            .wait_timeout(jobs, Duration::from_millis(50))
            .map(|(g, _)| g)
            .unwrap_or_else(|e| e.into_inner().0);
    }
    std::ptr::null_mut()
}

unsafe extern "C" fn unblock(data: *mut c_void) {
    let flag = &*(data as *const AtomicBool);
    flag.store(true, Ordering::Release);
    wake_all();
}

/// Serves the queue on this Ruby thread until `target` is ready. A Ruby interrupt
/// (Ctrl-C, `Thread#raise`, `Timeout`) is returned as its exception after `on_interrupt`
/// ran (the caller cancels its run there); the queue is served a little longer (up to
/// `grace`) so the cancelled run can settle its tools.
pub fn serve_until(
    ruby: &Ruby,
    target: &dyn Waitable,
    on_interrupt: &dyn Fn(),
    grace: Duration,
) -> Result<(), Error> {
    let interrupted = AtomicBool::new(false);
    let mut pending: Option<Error> = None;
    let mut deadline: Option<Instant> = None;
    loop {
        let mut args = WaitArgs {
            target,
            interrupted: &interrupted,
            deadline,
            job: None,
        };
        unsafe {
            rb_sys::rb_thread_call_without_gvl(
                Some(wait_without_gvl),
                &mut args as *mut WaitArgs<'_> as *mut c_void,
                Some(unblock),
                &interrupted as *const AtomicBool as *mut c_void,
            );
        }
        if let Some(job) = args.job.take() {
            job(ruby);
            continue;
        }
        if interrupted.swap(false, Ordering::AcqRel) && pending.is_none() {
            if let Err(e) = ruby.thread_check_ints() {
                on_interrupt();
                pending = Some(e);
                deadline = Some(Instant::now() + grace);
                continue;
            }
        }
        if target.ready() || deadline.is_some_and(|d| Instant::now() >= d) {
            return match pending {
                Some(e) => Err(e),
                None => Ok(()),
            };
        }
    }
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

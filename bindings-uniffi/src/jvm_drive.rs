//! Runs of the Java API driven by the JVM thread that waits for them (`Agent.run`,
//! `continueRun`, `recover`): the run's future is polled on that thread, through
//! [`phaseo_jvm_drive`], which JNA maps directly (`JvmDispatch.drive`), not on a thread of
//! the core's runtime.
//!
//! Why: a run on the core's runtime hands every blocking tool call over to a JVM thread
//! and back, and in a run that goes turn by turn each hand-over wakes a sleeping thread:
//! two thread wake-ups per turn, far more than the turn itself. Driven, the driver runs
//! its run's oldest queued call itself (a blocking body of the JVM host, `jvm_dispatch.rs`)
//! whenever the run has nothing else to do: a turn of one call then runs on the driving
//! thread alone, with no other thread involved, and in a turn of many calls the driver
//! works through them beside the host's threads, whose answers it takes in between.
//!
//! A call run by the driver may block for any time, and the run must still see its
//! timeout, its cancellation and its other calls' answers on time: a wake-up that comes
//! while the driver is in a call starts a rescue on the core's blocking pool
//! [`RESCUE_AFTER`] later (most calls are over by then), which polls the run until the
//! driver is back (or nothing more is to be done). Polls are serialized by the run's lock,
//! so the driver, once back, takes over where the rescue stopped.
//!
//! A Kotlin run is driven the same way by the coroutine that awaits it
//! (`JvmDispatch.driveSuspending`), through [`phaseo_jvm_step`]: where a thread parks while
//! its run waits, the coroutine suspends, and the run's wake-up is posted to the JVM's waker
//! thread ([`phaseo_jvm_woken`]), which resumes it. A run that never waits (a turn of one
//! call whose body does not suspend, a run with no tool) then costs no thread hop at all.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, LazyLock, Mutex, MutexGuard, Weak};
use std::task::{Context, Wake, Waker};
use std::thread::Thread;
use std::time::{Duration, Instant};

use phaseo_agent as pa;
use phaseo_agent::driven::{DrivenRun, Polled};

use crate::api::{Agent, RunResult, RunStatus};
use crate::conversions::{core_continue_options, core_run_options};
use crate::defs::{ContinueOptions, RunOptions};
use crate::errors::PhaseoError;
use crate::jvm_dispatch;

/// How long the driver waits for its run at most before it returns to the JVM, which looks
/// whether the thread was interrupted (that cancels the run) and calls again: an interrupt
/// is seen this late at most, and a run waiting for a slow model costs 20 looks a second.
const LOOK_AT_INTERRUPTS: Duration = Duration::from_millis(50);

/// How long a wake-up that comes while the driver runs a call waits before a rescue polls
/// the run: a run's timers (a call's timeout) then fire at most this late.
const RESCUE_AFTER: Duration = Duration::from_millis(1);

/// A run driven by a JVM thread.
struct Drive {
    /// The key the host knows the run by.
    key: u64,
    /// The run's future until it ends.
    run: Mutex<DrivenRun<Result<pa::RunResult, pa::AgentError>>>,
    /// Set (before the driver is unparked) once the run's outcome is in `outcome`.
    ended: AtomicBool,
    outcome: Mutex<Option<Result<pa::RunResult, PhaseoError>>>,
    signal: Arc<Signal>,
}

/// The run's waker, and what it must do when woken.
struct Signal {
    state: Mutex<SignalState>,
    /// The JVM thread that drives the run (unparked when the run can make progress).
    driver: Thread,
    drive: Weak<Drive>,
}

#[derive(Default)]
struct SignalState {
    /// The run was woken since its last poll began.
    notified: bool,
    /// The driver runs one of the run's calls in the JVM: a wake-up needs a rescue.
    in_call: bool,
    /// A rescue polls the run (or is about to).
    rescuing: bool,
    /// Driven by a coroutine ([`phaseo_jvm_step`]): its wake-ups go to the waker thread.
    by_coroutine: bool,
    /// The driving coroutine waits for a wake-up (it was told 3 by [`phaseo_jvm_step`]).
    waiting: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing runs host code under these locks: a poisoned one still holds whole data.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Wake for Signal {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let mut state = lock(&self.state);
        if state.notified {
            return;
        }
        state.notified = true;
        if !state.in_call {
            self.tell_driver(state);
            return;
        }
        if state.rescuing {
            return; // the rescue sees `notified` once its poll is over
        }
        state.rescuing = true;
        drop(state);
        if let Some(drive) = self.drive.upgrade() {
            rescue_later(drive);
        }
    }
}

impl Signal {
    /// Tells the driver that its run can go on (`state` is the signal's, held): a thread is
    /// unparked, a waiting coroutine resumed through the waker thread (one that does not
    /// wait is polling, and sees `notified`).
    fn tell_driver(&self, mut state: MutexGuard<'_, SignalState>) {
        if !state.by_coroutine {
            drop(state);
            self.driver.unpark();
            return;
        }
        if !std::mem::take(&mut state.waiting) {
            return;
        }
        drop(state);
        if let Some(drive) = self.drive.upgrade() {
            post_wake_up(drive.key);
        }
    }
}

/// Has a rescue poll `drive` [`RESCUE_AFTER`] from now (its `rescuing` is set): most calls
/// the driver runs are over by then, and are not rescued.
fn rescue_later(drive: Arc<Drive>) {
    pa::exec::runtime().spawn(async move {
        tokio::time::sleep(RESCUE_AFTER).await;
        let _ = tokio::task::spawn_blocking(move || drive.rescue()).await;
    });
}

thread_local! {
    /// The key of the run this thread is polling as its driver (0: none). A call that run
    /// queues while this is set may be run by the driver itself (`jvm_dispatch.rs`).
    static DRIVING: Cell<u64> = const { Cell::new(0) };
    /// The driven runs whose call this thread runs, by call id (a call's body may drive a
    /// run of its own, whose call is then the innermost).
    static IN_CALL: RefCell<Vec<(i64, Arc<Drive>)>> = const { RefCell::new(Vec::new()) };
}

/// The run this thread polls as its driver (0: none).
pub(crate) fn driving() -> u64 {
    DRIVING.with(Cell::get)
}

/// Sets [`DRIVING`] for one poll, then puts back what was there (a hook of the run may
/// drive a run of its own on this thread).
struct DrivingAs(u64);

impl DrivingAs {
    fn set(key: u64) -> Self {
        Self(DRIVING.with(|d| d.replace(key)))
    }
}

impl Drop for DrivingAs {
    fn drop(&mut self) {
        DRIVING.with(|d| d.set(self.0));
    }
}

/// Call `call`, run by this thread as its run's driver, returned: wake-ups from now on
/// are the driver's to handle (the call's own answer among them).
pub(crate) fn call_returned(call: i64) {
    let drive = IN_CALL.with(|calls| {
        let mut calls = calls.borrow_mut();
        let at = calls.iter().rposition(|(id, _)| *id == call)?;
        Some(calls.remove(at).1)
    });
    if let Some(drive) = drive {
        lock(&drive.signal.state).in_call = false;
    }
}

impl Drive {
    /// Polls the run until it is pending and was not woken meanwhile, or ended; true when
    /// it has ended. `as_driver`: polled by the driver (not a rescue).
    fn poll(&self, as_driver: bool) -> bool {
        let mut run = lock(&self.run);
        if run.has_ended() {
            return true;
        }
        let _driving = DrivingAs::set(if as_driver { self.key } else { 0 });
        let waker = Waker::from(Arc::clone(&self.signal));
        let mut cx = Context::from_waker(&waker);
        let signal = &self.signal.state;
        let polled = run.poll(
            &mut cx,
            || lock(signal).notified = false,
            || lock(signal).notified,
        );
        let outcome = match polled {
            // Busy: a run that keeps waking itself; `notified` stays set, it is polled again.
            Polled::Pending | Polled::Busy => return false,
            Polled::Ended(result) => result.map_err(PhaseoError::from),
            Polled::Panicked(message) => Err(PhaseoError::internal(message)),
        };
        // Its future is gone already (what it held is let go before the outcome is told),
        // and the outcome is stored under the run's lock: whoever polls next finds it.
        *lock(&self.outcome) = Some(outcome);
        drop(run);
        self.ended.store(true, Ordering::SeqCst);
        self.signal.tell_driver(lock(&self.signal.state));
        true
    }

    /// Polls until the run ends (`Some(0)`) or hands the driver the run's only queued call
    /// to run (`Some(1)`, `out` as `phaseo_jvm_next`'s); `None` when the run waits and was
    /// not woken meanwhile.
    fn advance(self: &Arc<Self>, out: *mut i64) -> Option<i32> {
        loop {
            if self.poll(true) {
                return Some(0);
            }
            if lock(&self.signal.state).notified {
                continue;
            }
            // Not under the run's signal lock: taking a call may drop cancelled ones, whose
            // answer channels wake their runs (this one too), and the pool's threads take
            // the pool's lock before a run's signal lock.
            let call = jvm_dispatch::take_for_driver(self.key)?;
            let rescue = {
                let mut state = lock(&self.signal.state);
                state.in_call = true;
                // Woken since the last poll: what woke it must not wait for the call.
                let rescue = state.notified && !state.rescuing;
                state.rescuing |= rescue;
                rescue
            };
            if rescue {
                rescue_later(Arc::clone(self));
            }
            IN_CALL.with(|calls| calls.borrow_mut().push((call.id(), Arc::clone(self))));
            // SAFETY: the caller passes 5 writable i64s (`phaseo_jvm_drive`).
            unsafe { jvm_dispatch::hand_over(call, out) };
            return Some(1);
        }
    }

    /// The driver's loop: polls until the run ends (0), hands it the run's only queued
    /// call to run (1, `out` as `phaseo_jvm_next`'s), or has waited [`LOOK_AT_INTERRUPTS`]
    /// for the run (2).
    fn drive(self: &Arc<Self>, out: *mut i64) -> i32 {
        lock(&self.signal.state).in_call = false;
        loop {
            if let Some(next) = self.advance(out) {
                return next;
            }
            let until = Instant::now() + LOOK_AT_INTERRUPTS;
            loop {
                if lock(&self.signal.state).notified || self.ended.load(Ordering::SeqCst) {
                    break;
                }
                let now = Instant::now();
                if now >= until {
                    return 2;
                }
                std::thread::park_timeout(until - now);
            }
        }
    }

    /// The driving coroutine's step: as [`Drive::drive`], but where a thread would park it
    /// returns 3, and the run's next wake-up is posted to the waker thread.
    fn step(self: &Arc<Self>, out: *mut i64) -> i32 {
        {
            let mut state = lock(&self.signal.state);
            state.in_call = false;
            state.by_coroutine = true;
            state.waiting = false;
        }
        loop {
            if let Some(next) = self.advance(out) {
                return next;
            }
            let mut state = lock(&self.signal.state);
            if state.notified || self.ended.load(Ordering::SeqCst) {
                continue;
            }
            state.waiting = true;
            return 3;
        }
    }

    /// Polls the run while the driver is in a call and the run keeps being woken.
    fn rescue(&self) {
        let back = {
            let mut state = lock(&self.signal.state);
            let back = !state.in_call;
            if back {
                state.rescuing = false;
            }
            back
        };
        if back {
            // The driver came back meanwhile: the wake-up is its to handle.
            self.signal.tell_driver(lock(&self.signal.state));
            return;
        }
        loop {
            self.poll(false);
            let mut state = lock(&self.signal.state);
            if state.notified && state.in_call && !self.ended.load(Ordering::SeqCst) {
                continue;
            }
            state.rescuing = false;
            if !state.in_call {
                self.signal.tell_driver(state);
            }
            return;
        }
    }
}

/// The driven runs by key, from their start until their result is taken (or the driver
/// let them go).
fn drives() -> MutexGuard<'static, HashMap<u64, Arc<Drive>>> {
    static DRIVES: LazyLock<Mutex<HashMap<u64, Arc<Drive>>>> = LazyLock::new(Default::default);
    lock(&DRIVES)
}

/// The runs whose driving coroutine waits and was woken, oldest first, until the waker
/// thread takes them ([`phaseo_jvm_woken`]).
struct WakeUps {
    keys: Mutex<VecDeque<u64>>,
    posted: Condvar,
}

static WAKE_UPS: LazyLock<WakeUps> = LazyLock::new(|| WakeUps {
    keys: Mutex::new(VecDeque::new()),
    posted: Condvar::new(),
});

fn post_wake_up(key: u64) {
    lock(&WAKE_UPS.keys).push_back(key);
    WAKE_UPS.posted.notify_one();
}

fn start<F>(run: F) -> u64
where
    F: Future<Output = Result<pa::RunResult, pa::AgentError>> + Send + 'static,
{
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let key = NEXT.fetch_add(1, Ordering::Relaxed);
    let drive = Arc::new_cyclic(|weak| Drive {
        key,
        run: Mutex::new(DrivenRun::new(run)),
        ended: AtomicBool::new(false),
        outcome: Mutex::new(None),
        signal: Arc::new(Signal {
            state: Mutex::new(SignalState::default()),
            driver: std::thread::current(),
            drive: weak.clone(),
        }),
    });
    drives().insert(key, drive);
    key
}

impl Agent {
    /// Starts a driven continue, resumption or recovery: `run` makes its future from the
    /// core agent and the options.
    fn start_continuing<F, Fut>(&self, options: ContinueOptions, run: F) -> Result<u64, PhaseoError>
    where
        F: FnOnce(pa::Agent, pa::ContinueOptions) -> Fut,
        Fut: Future<Output = Result<pa::RunResult, pa::AgentError>> + Send + 'static,
    {
        let (options, _cancel) = core_continue_options(options)?;
        Ok(start(run(self.core().clone(), options)))
    }
}

#[uniffi::export]
impl Agent {
    /// Starts a run that the calling JVM thread drives (`JvmDispatch.drive`, then
    /// [`driven_result`]); returns its key. The Java API's blocking `run`.
    pub fn run_driven(&self, options: RunOptions) -> Result<u64, PhaseoError> {
        let (options, _cancel) = core_run_options(options)?;
        let agent = self.core().clone();
        Ok(start(async move { agent.run(options).await }))
    }

    /// [`Agent::run_driven`] for a continue of `state`.
    pub fn continue_driven(
        &self,
        state: Arc<RunResult>,
        options: ContinueOptions,
    ) -> Result<u64, PhaseoError> {
        self.start_continuing(options, |agent, options| async move {
            agent.continue_run(&state.result, options).await
        })
    }

    /// [`Agent::run_driven`] for a continue of the stored run `run_id`.
    pub fn continue_by_id_driven(
        &self,
        run_id: String,
        options: ContinueOptions,
    ) -> Result<u64, PhaseoError> {
        self.start_continuing(options, |agent, options| async move {
            agent.continue_by_id(run_id, options).await
        })
    }

    /// [`Agent::run_driven`] for a recovery of the stored run `run_id`.
    pub fn recover_driven(
        &self,
        run_id: String,
        options: ContinueOptions,
    ) -> Result<u64, PhaseoError> {
        self.start_continuing(options, |agent, options| async move {
            agent.recover(&run_id, options).await
        })
    }
}

/// The outcome of the driven run `key`, once `JvmDispatch.drive` saw it end; the run is
/// forgotten.
#[uniffi::export]
pub fn driven_result(key: u64) -> Result<Arc<RunResult>, PhaseoError> {
    let drive = drives()
        .remove(&key)
        .ok_or_else(|| PhaseoError::internal(format!("no driven run {key}")))?;
    let outcome = lock(&drive.outcome).take();
    match outcome {
        Some(outcome) => outcome.map(RunResult::wrap),
        None => Err(PhaseoError::internal(format!(
            "the driven run {key} has not ended"
        ))),
    }
}

/// The status and final output of the ended driven run `key`, read before
/// [`driven_result`] takes it: the Java API's blocking run answers `status()` and
/// `output()` from them, without two more calls through the generated bindings (each of
/// those allocates JNA structures, and is the dearest part of a short run while the JVM
/// still interprets it). Returns the status's position in [`RunStatus`] and writes the
/// output's JSON to `buf` when it fits in `cap` bytes, its length to `out_len` in any case;
/// -1 when the run ended without a result (an error) or is unknown.
///
/// # Safety
/// `buf` points to `cap` writable bytes, `out_len` to a writable `i64`.
#[no_mangle]
pub unsafe extern "C" fn phaseo_jvm_driven_head(
    key: i64,
    buf: *mut u8,
    cap: i64,
    out_len: *mut i64,
) -> i32 {
    let head = catch_unwind(|| {
        let drive = drives().get(&(key as u64)).cloned()?;
        let outcome = lock(&drive.outcome);
        let result = outcome.as_ref()?.as_ref().ok()?;
        let status = RunStatus::from(result.status()) as i32;
        Some((status, crate::traits::to_json(result.output())))
    });
    let Ok(Some((status, output))) = head else {
        return -1;
    };
    let len = output.len();
    // SAFETY: the caller's guarantees: `out_len` is writable, `buf` has `cap` bytes.
    unsafe {
        *out_len = len as i64;
        if len as i64 <= cap {
            std::ptr::copy_nonoverlapping(output.as_ptr(), buf, len);
        }
    }
    status
}

/// Drives run `key` on the calling thread: returns 0 when it has ended (take its result
/// with `driven_result`), 1 with `out` = one of its calls for this thread to run, as
/// `phaseo_jvm_next` hands one (then `phaseo_jvm_complete`, then this again), or 2 when the
/// run has waited for something for a while (look at the thread's interrupt status, then
/// call this again). Blocks (parked) while the run waits.
///
/// # Safety
/// `out` points to 5 writable `i64`s.
#[no_mangle]
pub unsafe extern "C" fn phaseo_jvm_drive(key: i64, out: *mut i64) -> i32 {
    with_drive(key, |drive| drive.drive(out))
}

/// `go` on the driven run `key` (0 for an unknown run: `driven_result` names it); a panic
/// ends the run with an internal error.
fn with_drive(key: i64, go: impl FnOnce(&Arc<Drive>) -> i32) -> i32 {
    let Some(drive) = drives().get(&(key as u64)).cloned() else {
        return 0;
    };
    match catch_unwind(AssertUnwindSafe(|| go(&drive))) {
        Ok(status) => status,
        Err(panic) => {
            *lock(&drive.outcome) = Some(Err(PhaseoError::internal(pa::panic_message(
                panic.as_ref(),
            ))));
            drive.ended.store(true, Ordering::SeqCst);
            0
        }
    }
}

/// `phaseo_jvm_complete(call, status, text, len)`, then `phaseo_jvm_drive(key, out)`: the
/// driver answers the call it ran and drives on, in one call from the JVM.
///
/// # Safety
/// `text` points to `len` readable bytes, `out` to 5 writable `i64`s.
#[no_mangle]
pub unsafe extern "C" fn phaseo_jvm_complete_and_drive(
    key: i64,
    call: i64,
    status: i32,
    text: *const u8,
    len: i64,
    out: *mut i64,
) -> i32 {
    // SAFETY: the caller's guarantees, passed on.
    unsafe {
        jvm_dispatch::phaseo_jvm_complete(call, status, text, len);
        phaseo_jvm_drive(key, out)
    }
}

/// [`phaseo_jvm_drive`] for a coroutine (`JvmDispatch.driveSuspending`): 0 and 1 as there,
/// or 3 where that would park: the run waits, and its key will be posted to the waker
/// thread ([`phaseo_jvm_woken`]) when it can go on; call this again then.
///
/// # Safety
/// `out` points to 5 writable `i64`s.
#[no_mangle]
pub unsafe extern "C" fn phaseo_jvm_step(key: i64, out: *mut i64) -> i32 {
    with_drive(key, |drive| drive.step(out))
}

/// `phaseo_jvm_complete(call, status, text, len)`, then `phaseo_jvm_step(key, out)`.
///
/// # Safety
/// `text` points to `len` readable bytes, `out` to 5 writable `i64`s.
#[no_mangle]
pub unsafe extern "C" fn phaseo_jvm_complete_and_step(
    key: i64,
    call: i64,
    status: i32,
    text: *const u8,
    len: i64,
    out: *mut i64,
) -> i32 {
    // SAFETY: the caller's guarantees, passed on.
    unsafe {
        jvm_dispatch::phaseo_jvm_complete(call, status, text, len);
        phaseo_jvm_step(key, out)
    }
}

/// The waker thread's wait: blocks until the run of a waiting coroutine was woken, then
/// writes the keys of such runs to `out` (at most `cap`, oldest first) and returns how many.
///
/// # Safety
/// `out` points to `cap` writable `i64`s.
#[no_mangle]
pub unsafe extern "C" fn phaseo_jvm_woken(out: *mut i64, cap: i64) -> i32 {
    let mut keys = lock(&WAKE_UPS.keys);
    while keys.is_empty() {
        keys = WAKE_UPS
            .posted
            .wait(keys)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
    }
    let n = keys.len().min(cap.max(0) as usize);
    for (i, key) in keys.drain(..n).enumerate() {
        // SAFETY: the caller passes `cap` writable i64s, and `i < n <= cap`.
        unsafe { *out.add(i) = key as i64 };
    }
    n as i32
}

/// The driving thread stops driving run `key` before it ended (an error of the JVM's own):
/// the run is dropped, which cancels its calls.
#[no_mangle]
pub extern "C" fn phaseo_jvm_drive_end(key: i64) {
    let drive = drives().remove(&(key as u64));
    drop(drive);
}

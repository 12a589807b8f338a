//! Blocking tool bodies of the JVM host (the Java API's tools) without a callback per call:
//! the core queues each call, and threads of the host take them oldest first through three
//! plain C functions that JNA maps directly (`bindings-uniffi/kotlin/.../JvmDispatch.kt`):
//! [`phaseo_jvm_next`] (wait for the next call), [`phaseo_jvm_complete`] (its result) and
//! [`phaseo_jvm_control`] (what the host's control thread must do: start threads,
//! interrupt a cancelled call). A JNA callback costs tens of microseconds (a reflective
//! proxy, structures built per argument, a thread to attach), far more than a trivial
//! tool; a directly mapped call costs well under one.
//!
//! Calls begin in the order the core hands them over (docs/behaviour.md §3.1): one FIFO,
//! taken oldest first. A body may block (sleep, I/O, a run of its own), so a call must
//! never wait long behind a blocked one, yet most calls are over in microseconds, and a
//! thread per call (a turn of a thousand calls) costs far more than the calls. So the
//! threads awake take calls back to back; a call handed over while no thread is awake
//! wakes one (or has the host start one); and a supervisor thread, while calls wait, looks
//! every [`SUPERVISE_EVERY`]: the calls running longer than that count as blocked, and when no
//! call was taken since its last look (or every thread awake is blocked) and fewer threads
//! than cores are awake and not blocked, it wakes one more parked thread per blocked one
//! (at least one, at most one per waiting call), and when every thread awake is blocked,
//! every parked thread (as many as calls wait). Where no parked thread is left it has the
//! host start new ones: a core's worth per look, doubling with each look in a row at which
//! no call ended (calls that block for real: a turn of a hundred of them in a fresh process
//! has its threads within about seven looks and the threads' own start-up), back to a
//! core's worth as soon as one does, and none while threads asked for before have not come.
//! A pause of the whole JVM (its collector, a class loaded while every call waits for it)
//! holds every call in progress at once and looks like blocking: it starts a core's worth
//! of threads at most (doubling at every such pause would grow the pool to hundreds of
//! threads within seconds of back-to-back turns of quick calls). The parked threads it
//! wakes that were not needed park again: a thread that ends a call while more threads
//! than cores are awake and not blocked parks instead of taking the next one. One thread
//! out of work first looks at the queue for [`SPIN`] (the next call of a run that goes
//! turn by turn comes within microseconds, and waking a parked thread on a busy machine
//! can cost a time slice), then parks; a thread idle for the host's keep-alive ends.
//! Likewise the run loop looks for the answer of a call that runs alone for
//! [`ANSWER_SPIN`] before it waits (see [`wait_briefly`]). Both look with `yield_now`
//! between looks, not a busy loop: on a machine with more runnable threads than cores, the
//! thread that owes the answer may be waiting for the very core that looks.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use phaseo_agent as pa;
use phaseo_agent::Value;

use crate::api::ToolRuntime;
use crate::start_order::{StartSignal, StartTurn};
use crate::traits::to_json;

/// How often the supervisor looks while calls wait.
const SUPERVISE_EVERY: Duration = Duration::from_micros(250);

/// How long a thread out of work keeps looking at the queue before it parks.
const SPIN: Duration = Duration::from_micros(100);

/// How long the run loop looks for the answer of a call that runs alone before it waits.
const ANSWER_SPIN: Duration = Duration::from_micros(200);

/// Where a call is: queued, running on a host thread, over, or cancelled before it began.
const QUEUED: u8 = 0;
const RUNNING: u8 = 1;
const OVER: u8 = 2;
const CANCELLED: u8 = 3;

/// What a body answered: its result (JSON text), a failure, or a value with no JSON form.
enum Answer {
    Ok(String),
    Failed(String),
    InvalidValue(String),
}

/// A call not yet taken.
pub(crate) struct Queued {
    id: i64,
    /// The driven run whose driver queued it (`jvm_drive.rs`), 0 when none did.
    driver: u64,
    tool: i64,
    input: String,
    runtime: Arc<ToolRuntime>,
    phase: Arc<AtomicU8>,
    started: StartSignal,
    done: tokio::sync::oneshot::Sender<Answer>,
}

/// A call taken by a host thread: its input stays here while the host reads it.
struct Taken {
    _input: String,
    phase: Arc<AtomicU8>,
    done: tokio::sync::oneshot::Sender<Answer>,
}

/// What the host's control thread is asked to do.
enum Control {
    /// Start this many threads that take calls.
    Start(usize),
    /// Call `.0` (of blocking body `.1`) was cancelled while it ran: interrupt its thread.
    Cancel(i64, i64),
    /// The core no longer uses blocking body `.0` (its tool was dropped).
    Release(i64),
}

struct State {
    /// Calls not yet taken, oldest first.
    queue: VecDeque<Queued>,
    /// Calls taken so far (the supervisor's measure of progress).
    taken: u64,
    /// Host threads that take calls (started, or asked to be).
    threads: usize,
    /// Threads asked for that have not yet come for a call: the supervisor asks for no
    /// more until they have.
    starting: usize,
    /// Looks in a row that asked for threads while no call ended: the next asks for
    /// `cores() << streak` (see [`Pool::supervise`]).
    streak: u32,
    /// Threads parked, waiting for work.
    parked: usize,
    /// Wake-ups sent to parked threads and not yet taken (spurious wake-ups take none).
    notified: usize,
    /// Whether the supervisor thread runs.
    supervised: bool,
    /// Whether the supervisor waits for a call to be queued (on `Pool::waiting`): only then
    /// does a submit notify it. A notification is a system call even with no one waiting,
    /// and a turn of a thousand calls made one per call on the thread that queued them.
    supervisor_idle: bool,
    /// Whether a thread out of work is looking at the queue before it parks (one at a
    /// time: a crowd of them would only take the cores from the threads that work).
    spinning: bool,
    /// Threads in a call for longer than [`SUPERVISE_EVERY`], at the supervisor's last look.
    blocked: usize,
    /// Work for the host's control thread.
    control: VecDeque<Control>,
}

impl State {
    /// Threads awake or about to be: running calls, looking for one, or on their way.
    fn awake(&self) -> usize {
        self.threads - self.parked + self.notified
    }
}

struct Pool {
    state: Mutex<State>,
    /// The queue's length, for looking without the lock while out of work.
    queued: AtomicUsize,
    /// Parked threads wait here.
    ready: Condvar,
    /// The supervisor waits here while no call waits.
    waiting: Condvar,
    /// The host's control thread waits here.
    controls: Condvar,
    /// Per thread: when its current call began ([`ticks`]), 0 between calls.
    slots: Mutex<Vec<Arc<AtomicU64>>>,
    /// Calls taken and not yet completed, by id.
    taken: Mutex<HashMap<i64, Taken>>,
    /// Calls completed so far (the supervisor's sign that calls in progress do end).
    completed: AtomicU64,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool {
        state: Mutex::new(State {
            queue: VecDeque::new(),
            taken: 0,
            threads: 0,
            starting: 0,
            streak: 0,
            parked: 0,
            notified: 0,
            supervised: false,
            supervisor_idle: false,
            spinning: false,
            blocked: 0,
            control: VecDeque::new(),
        }),
        queued: AtomicUsize::new(0),
        ready: Condvar::new(),
        waiting: Condvar::new(),
        controls: Condvar::new(),
        slots: Mutex::new(Vec::new()),
        taken: Mutex::new(HashMap::new()),
        completed: AtomicU64::new(0),
    })
}

/// Nanoseconds since the pool's first use, plus one (0 means "no call").
fn ticks() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64 + 1
}

/// How many threads may be awake and not blocked at once: one per core.
fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
}

fn relock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing runs host code under these locks, so a poisoned one only means a thread died
    // between two plain updates: the data is still whole.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

thread_local! {
    /// This host thread's slot in [`Pool::slots`], registered on its first call.
    static SLOT: RefCell<Option<Arc<AtomicU64>>> = const { RefCell::new(None) };
    /// Whether this thread came for calls before (it is then no longer [`State::starting`]).
    static ARRIVED: Cell<bool> = const { Cell::new(false) };
}

fn my_slot(pool: &Pool) -> Arc<AtomicU64> {
    SLOT.with(|slot| {
        Arc::clone(slot.borrow_mut().get_or_insert_with(|| {
            let mine = Arc::new(AtomicU64::new(0));
            relock(&pool.slots).push(Arc::clone(&mine));
            mine
        }))
    })
}

impl Pool {
    fn lock(&self) -> MutexGuard<'_, State> {
        relock(&self.state)
    }

    /// Counts `n` parked threads as woken, and asks the host for threads for the rest.
    /// Returns how many parked threads the caller must wake ([`Pool::notify`]) once it has
    /// let go of the lock: woken under it, each would wait for the lock at once.
    #[must_use]
    fn wake(&self, state: &mut State, n: usize) -> usize {
        let sleeping = state.parked - state.notified;
        let woken = n.min(sleeping);
        state.notified += woken;
        let start = n - woken;
        if start > 0 {
            state.threads += start;
            state.starting += start;
            state.control.push_back(Control::Start(start));
            self.controls.notify_one();
        }
        woken
    }

    /// Wakes `n` parked threads (counted by [`Pool::wake`]).
    fn notify(&self, n: usize) {
        for _ in 0..n {
            self.ready.notify_one();
        }
    }

    fn count_blocked(&self) -> usize {
        let since = ticks().saturating_sub(SUPERVISE_EVERY.as_nanos() as u64);
        relock(&self.slots)
            .iter()
            .filter(|s| {
                let began = s.load(Ordering::Relaxed);
                began != 0 && began < since
            })
            .count()
    }

    /// See the module comment.
    fn supervise(&self) {
        let mut state = self.lock();
        loop {
            while state.queue.is_empty() {
                state.supervisor_idle = true;
                state = self.waiting.wait(state).unwrap_or_else(|p| p.into_inner());
                state.supervisor_idle = false;
            }
            let taken = state.taken;
            let completed = self.completed.load(Ordering::Relaxed);
            drop(state);
            std::thread::sleep(SUPERVISE_EVERY);
            let blocked = self.count_blocked();
            state = self.lock();
            state.blocked = blocked;
            if self.completed.load(Ordering::Relaxed) != completed {
                state.streak = 0;
            }
            let free = state.awake().saturating_sub(blocked);
            // Every thread awake is in a call that blocks: the calls waiting will likely
            // block too, and each waits for a thread. Parked threads cost a wake-up only,
            // so all of them are woken; new threads are still started by doubling.
            let all_blocked = free == 0 && blocked > 0;
            if (state.taken == taken || all_blocked) && !state.queue.is_empty() && free < cores() {
                let parked = state.parked - state.notified;
                let more = if all_blocked {
                    blocked.max(parked)
                } else {
                    blocked.max(1)
                };
                let more = more.min(state.queue.len());
                // New threads: see the module comment.
                let sleeping = state.parked - state.notified;
                let start = if state.starting > 0 {
                    0
                } else {
                    cores() << state.streak.min(16)
                };
                let more = more.min(sleeping + start);
                if more > sleeping {
                    state.streak += 1;
                }
                let woken = self.wake(&mut state, more);
                drop(state);
                self.notify(woken);
                state = self.lock();
            }
        }
    }

    fn submit(&'static self, call: Queued) {
        let mut state = self.lock();
        // The first call queued by a run's driver is the driver's to take (a turn of one
        // call runs on the driver alone): no thread is woken for it. The next one wakes one.
        let for_driver = call.driver != 0 && state.queue.is_empty();
        state.queue.push_back(call);
        self.queued.store(state.queue.len(), Ordering::Relaxed);
        if for_driver {
            return;
        }
        // The supervisor is needed once calls may wait behind busy threads: not for a call
        // that a thread looking for work (or woken for it here) takes at once, as in a run
        // that goes turn by turn, where waking it for every call would cost a thread
        // switch per turn.
        let taker = state.spinning || state.awake() == 0;
        let woken = match state.awake() {
            0 => self.wake(&mut state, 1),
            _ => 0,
        };
        if (!taker || state.queue.len() > 1) && state.supervisor_idle {
            state.supervisor_idle = false;
            self.waiting.notify_one();
        }
        if !state.supervised {
            state.supervised = true;
            let started = std::thread::Builder::new()
                .name("phaseo-jvm-supervisor".into())
                .spawn(move || self.supervise());
            if started.is_err() {
                state.supervised = false;
            }
        }
        drop(state);
        self.notify(woken);
    }

    /// The next call for this host thread, or None when none came for `keep_alive` (the
    /// thread then ends).
    fn next(&self, keep_alive: Duration) -> Option<Queued> {
        let mut state = self.lock();
        if !ARRIVED.replace(true) {
            state.starting = state.starting.saturating_sub(1);
        }
        // A thread that just ended a call parks when more threads than cores are awake
        // and not blocked (it was woken for calls that only seemed blocked).
        let mut park = state.awake().saturating_sub(state.blocked) > cores();
        loop {
            if !park {
                while let Some(call) = state.queue.pop_front() {
                    self.queued.store(state.queue.len(), Ordering::Relaxed);
                    if call
                        .phase
                        .compare_exchange(QUEUED, RUNNING, Ordering::AcqRel, Ordering::Acquire)
                        .is_err()
                    {
                        // Cancelled before it began: it never runs.
                        continue;
                    }
                    state.taken += 1;
                    return Some(call);
                }
                if !state.spinning {
                    // Out of work: one thread looks again for a moment before parking.
                    state.spinning = true;
                    drop(state);
                    let until = Instant::now() + SPIN;
                    while self.queued.load(Ordering::Relaxed) == 0 && Instant::now() < until {
                        std::thread::yield_now();
                    }
                    state = self.lock();
                    state.spinning = false;
                    if !state.queue.is_empty() {
                        continue;
                    }
                }
            }
            park = false;
            state.parked += 1;
            let (guard, wait) = self
                .ready
                .wait_timeout(state, keep_alive)
                .unwrap_or_else(|p| p.into_inner());
            state = guard;
            state.parked -= 1;
            if state.notified > 0 {
                state.notified -= 1;
            } else if wait.timed_out() && state.queue.is_empty() {
                state.threads -= 1;
                return None;
            }
        }
    }
}

impl Queued {
    /// The call's id (the host's name for it).
    pub(crate) fn id(&self) -> i64 {
        self.id
    }
}

/// Numbers the calls of the process (the host finds a running call by it).
static NEXT_CALL: AtomicI64 = AtomicI64::new(1);

/// A blocking body of the JVM host as the core's executor: `tool` is the key the host
/// registered the body under (`JvmDispatch.register`).
pub(crate) struct JvmBlockingExecutor {
    pub tool: i64,
}

impl Drop for JvmBlockingExecutor {
    fn drop(&mut self) {
        let pool = pool();
        pool.lock().control.push_back(Control::Release(self.tool));
        pool.controls.notify_one();
    }
}

/// Cancels the call if the core stops waiting for it before it returned: a queued call
/// never runs, a running one has its thread interrupted by the host.
struct CancelOnDrop<'a> {
    id: i64,
    tool: i64,
    phase: &'a AtomicU8,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        if self
            .phase
            .compare_exchange(QUEUED, CANCELLED, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
            && self.phase.load(Ordering::Acquire) == RUNNING
        {
            let pool = pool();
            let mut state = pool.lock();
            state.control.push_back(Control::Cancel(self.id, self.tool));
            pool.controls.notify_one();
        }
    }
}

#[pa::async_trait]
impl pa::ToolExecutor for JvmBlockingExecutor {
    async fn execute(&self, input: Value, rt: pa::ToolRuntime) -> Result<Value, pa::ToolError> {
        self.run(to_json(&input), rt).await
    }

    /// The input is written from the runtime's call as it is: no copy of it is made.
    fn execute_call<'a>(&'a self, rt: pa::ToolRuntime) -> pa::ExecuteFuture<'a> {
        let input = to_json(&rt.tool_call().input);
        Box::pin(self.run(input, rt))
    }
}

impl JvmBlockingExecutor {
    /// Queues the call whose input is the JSON text `input` and waits for its answer.
    async fn run(&self, input: String, rt: pa::ToolRuntime) -> Result<Value, pa::ToolError> {
        // Before the first await: the core asks for the calls in call order.
        let mut turn = StartTurn::take_pooled();
        turn.wait_queued().await;
        let id = NEXT_CALL.fetch_add(1, Ordering::Relaxed);
        let phase = Arc::new(AtomicU8::new(QUEUED));
        let driver = crate::jvm_drive::driving();
        // A driven run's driver waits for nothing: it runs the call itself or parks.
        let alone = rt.runs_alone() && driver == 0;
        let (done, mut answer) = tokio::sync::oneshot::channel();
        pool().submit(Queued {
            id,
            driver,
            tool: self.tool,
            input,
            runtime: Arc::new(ToolRuntime::new(rt)),
            phase: Arc::clone(&phase),
            started: turn.started_signal(),
            done,
        });
        turn.mark_queued();
        let guard = CancelOnDrop {
            id,
            tool: self.tool,
            phase: &phase,
        };
        let answer = match alone.then(|| wait_briefly(&mut answer)).flatten() {
            Some(answer) => Ok(answer),
            None => answer.await,
        };
        drop(guard);
        let out = match answer {
            Ok(Answer::Ok(out)) => out,
            Ok(Answer::Failed(message)) => return Err(pa::ToolError::new(message)),
            Ok(Answer::InvalidValue(message)) => {
                return Err(pa::ToolError::invalid_output(message))
            }
            Err(_) => return Err(pa::ToolError::new("the host dropped the call")),
        };
        // A result the core cannot store is an invalid output (`tool_output_invalid`).
        pa::parse_json_text(&out).map_err(pa::ToolError::invalid_output)
    }
}

/// The answer of a call that runs alone, if it comes within [`ANSWER_SPIN`]: the run loop
/// has nothing else to do meanwhile, and a quick call's answer then needs no parked thread
/// to be woken on either side (a thread of the host looks at the queue for [`SPIN`] before
/// it parks), which on a busy machine can cost a time slice each.
fn wait_briefly(answer: &mut tokio::sync::oneshot::Receiver<Answer>) -> Option<Answer> {
    let until = Instant::now() + ANSWER_SPIN;
    loop {
        match answer.try_recv() {
            Ok(answer) => return Some(answer),
            Err(tokio::sync::oneshot::error::TryRecvError::Closed) => return None,
            Err(tokio::sync::oneshot::error::TryRecvError::Empty) => {}
        }
        if Instant::now() >= until {
            return None;
        }
        std::thread::yield_now();
    }
}

/// Waits for the next call for the calling host thread, at most `keep_alive_ms`. Returns 1
/// with `out` = `[call, tool, input pointer, input length (UTF-8 bytes), runtime handle]`
/// (the input stays valid until [`phaseo_jvm_complete`]; the runtime handle is a
/// `ToolRuntime` object's, owned by the host from then on: lifted into one, or dropped with
/// [`phaseo_jvm_release_runtime`]), or 0: no call came, the
/// thread must end.
///
/// # Safety
/// `out` points to 5 writable `i64`s.
#[no_mangle]
pub unsafe extern "C" fn phaseo_jvm_next(keep_alive_ms: i64, out: *mut i64) -> i32 {
    let pool = pool();
    let slot = my_slot(pool);
    slot.store(0, Ordering::Relaxed);
    let keep_alive = Duration::from_millis(keep_alive_ms.max(0) as u64);
    let Some(call) = pool.next(keep_alive) else {
        return 0;
    };
    // SAFETY: the caller passes 5 writable i64s.
    unsafe { hand_over(call, out) };
    1
}

/// The oldest queued call, when it is one that the driver of run `driver` queued: taken for
/// the driver to run (`jvm_drive.rs`). Calls cancelled before they began are dropped.
pub(crate) fn take_for_driver(driver: u64) -> Option<Queued> {
    let pool = pool();
    let mut state = pool.lock();
    while let Some(front) = state.queue.front() {
        if front.phase.load(Ordering::Acquire) != CANCELLED {
            break;
        }
        state.queue.pop_front();
    }
    pool.queued.store(state.queue.len(), Ordering::Relaxed);
    if state.queue.front()?.driver != driver {
        return None;
    }
    let call = state.queue.pop_front()?;
    pool.queued.store(state.queue.len(), Ordering::Relaxed);
    call.phase
        .compare_exchange(QUEUED, RUNNING, Ordering::AcqRel, Ordering::Acquire)
        .ok()?;
    state.taken += 1;
    Some(call)
}

/// Hands `call` to the calling host thread: `out` = `[call, tool, input pointer, input
/// length, runtime handle]`, as [`phaseo_jvm_next`] describes.
///
/// # Safety
/// `out` points to 5 writable `i64`s.
pub(crate) unsafe fn hand_over(call: Queued, out: *mut i64) {
    let pool = pool();
    my_slot(pool).store(ticks(), Ordering::Relaxed);
    call.started.fire();
    let runtime = <Arc<ToolRuntime> as uniffi::Lower<crate::UniFfiTag>>::lower(call.runtime);
    let fields = [
        call.id,
        call.tool,
        call.input.as_ptr() as i64,
        call.input.len() as i64,
        runtime.as_raw() as i64,
    ];
    relock(&pool.taken).insert(
        call.id,
        Taken {
            _input: call.input,
            phase: call.phase,
            done: call.done,
        },
    );
    // SAFETY: the caller passes 5 writable i64s.
    unsafe { std::ptr::copy_nonoverlapping(fields.as_ptr(), out, fields.len()) };
}

/// The calling thread is no longer in call `call`, which it took: the call answered, or its
/// body (a coroutine) suspended and answers from wherever it resumes. The pool's
/// supervisor no longer counts the thread as busy, and a driver's wake-ups are its own
/// again (`jvm_drive.rs`).
#[no_mangle]
pub extern "C" fn phaseo_jvm_call_left(call: i64) {
    SLOT.with(|slot| {
        if let Some(slot) = slot.borrow().as_ref() {
            slot.store(0, Ordering::Relaxed);
        }
    });
    crate::jvm_drive::call_returned(call);
}

/// The answer of call `call`: `status` 1 = its result (JSON text), 0 = it failed (the
/// message), 2 = its value has no JSON form (the message); `len` UTF-8 bytes at `text`.
///
/// # Safety
/// `text` points to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn phaseo_jvm_complete(call: i64, status: i32, text: *const u8, len: i64) {
    let pool = pool();
    phaseo_jvm_call_left(call);
    let Some(taken) = relock(&pool.taken).remove(&call) else {
        return;
    };
    pool.completed.fetch_add(1, Ordering::Relaxed);
    taken.phase.store(OVER, Ordering::Release);
    // SAFETY: the caller passes `len` readable bytes.
    let bytes = unsafe { std::slice::from_raw_parts(text, len.max(0) as usize) };
    let text = String::from_utf8_lossy(bytes).into_owned();
    let answer = match status {
        1 => Answer::Ok(text),
        2 => Answer::InvalidValue(text),
        _ => Answer::Failed(text),
    };
    let _ = taken.done.send(answer);
}

/// Whether call `call` was handed over and not yet completed: 1 if so, 0 if not. The host's
/// control thread asks after it marked a call cancelled that had not begun on the host's
/// side: a call completed meanwhile never begins, so the mark must go (the host's completing
/// thread removes it too, once it has completed the call: between them no mark outlives its
/// call).
#[no_mangle]
pub extern "C" fn phaseo_jvm_taken(call: i64) -> i32 {
    i32::from(relock(&pool().taken).contains_key(&call))
}

/// Waits for work for the host's control thread. Returns 1 with `out[0]` = how many
/// threads to start (each calls [`phaseo_jvm_next`] until it returns 0), 2 with `out` =
/// `[call, tool]`: that call was cancelled while it ran (interrupt its thread if it has
/// not returned), or 3 with `out[0]` = a blocking body the core no longer uses.
///
/// # Safety
/// `out` points to 2 writable `i64`s.
#[no_mangle]
pub unsafe extern "C" fn phaseo_jvm_control(out: *mut i64) -> i32 {
    let pool = pool();
    let mut state = pool.lock();
    loop {
        if let Some(control) = state.control.pop_front() {
            let (kind, fields) = match control {
                Control::Start(n) => (1, [n as i64, 0]),
                Control::Cancel(call, tool) => (2, [call, tool]),
                Control::Release(tool) => (3, [tool, 0]),
            };
            // SAFETY: the caller passes 2 writable i64s.
            unsafe { std::ptr::copy_nonoverlapping(fields.as_ptr(), out, 2) };
            return kind;
        }
        state = pool.controls.wait(state).unwrap_or_else(|p| p.into_inner());
    }
}

/// Drops the runtime handle of a call that [`phaseo_jvm_next`] handed over and the host never
/// made into a `ToolRuntime` object (its body did not look at its context). Freeing it
/// through the generated bindings would build a JNA structure for the call status, which
/// cost more than the tool call itself; this call has no status to report.
///
/// # Safety
/// `handle` is a runtime handle from [`phaseo_jvm_next`], released once and not lifted.
#[no_mangle]
pub unsafe extern "C" fn phaseo_jvm_release_runtime(handle: i64) {
    let handle = uniffi::Handle::from_raw_unchecked(handle as u64);
    drop(<Arc<ToolRuntime> as uniffi::Lift<crate::UniFfiTag>>::try_lift(handle));
}

/// The host could not start a thread it was asked for: the calls wait for the others.
#[no_mangle]
pub extern "C" fn phaseo_jvm_thread_failed() {
    let mut state = pool().lock();
    state.threads -= 1;
    state.starting = state.starting.saturating_sub(1);
}

//! Calls start in call order (docs/behaviour.md §3.1). uniffi hands every foreign call to a coroutine
//! (Kotlin) or task (Swift) of its own, and the host's scheduler starts those in whatever
//! order it picks: a quick second call could run and finish before a slow first one began.
//! So an executor call is handed to the host only once the call handed over before it has
//! started (the host marks it through `ToolRuntime::mark_started`), has ended, or has had
//! [`HAND_OVER_GRACE`] to start. The Kotlin layer marks every executor as its body begins;
//! a Swift executor should call `runtime.markStarted()` first (one that never marks is only
//! slower to hand the next call over, never stuck). The grace is long because a JVM can take
//! tens of milliseconds to start a coroutine (JIT, a collection), and a short grace then
//! let a quick second call run to its end before a slow first one began. Once a host has
//! been seen to mark its executors (the Kotlin layer always does), the grace is
//! [`MARKING_HOST_GRACE`]: on a loaded machine a JVM coroutine has taken more than 500 ms to
//! begin, and the quick call after it then started and ended first.
//!
//! The JVM host's blocking bodies go through the FIFO of `jvm_dispatch.rs`, which begins
//! calls in the order they were queued: a pooled call only
//! waits until the call before it was queued (at once, when that one was pooled too), so
//! a turn's pooled calls are handed over back to back; a coroutine call after a pooled one
//! still waits until the pooled one began.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

/// How long a call waits at most for the one before it to be marked started.
const HAND_OVER_GRACE: Duration = Duration::from_millis(500);

/// The same once the host marks its executors: such a call is only ever waited for until it
/// begins, ends or is cancelled, so the bound only guards against a host that stalls.
const MARKING_HOST_GRACE: Duration = Duration::from_secs(10);

/// Whether an executor of this process has marked its start (then every one does).
static HOST_MARKS: AtomicBool = AtomicBool::new(false);

/// Notes that the host marks its executors' starts.
pub(crate) fn host_marks() {
    HOST_MARKS.store(true, Ordering::Relaxed);
}

/// The signals of one handed-over call: `queued` fires once a call after it may be queued
/// in the pool (for a coroutine call: once it began, the same signal as `started`).
#[derive(Clone)]
struct Handed {
    queued: CancellationToken,
    started: CancellationToken,
}

/// The signals of the executor call handed over last (process-wide: the order is the
/// order in which the core asks for the calls).
static LAST_HANDED_OVER: Mutex<Option<Handed>> = Mutex::new(None);

/// One executor call's place in the start order. Dropping it (the call ended, timed out or
/// was cancelled) counts as started, so the calls after it go on.
pub(crate) struct StartTurn {
    previous: Option<Handed>,
    mine: Handed,
}

impl StartTurn {
    /// Takes the next place for a coroutine call. Called synchronously where the core asks
    /// for the call, which it does in call order.
    pub(crate) fn take() -> Self {
        let started = CancellationToken::new();
        Self::take_with(Handed {
            queued: started.clone(),
            started,
        })
    }

    /// Takes the next place for a call of the pool (see the module comment).
    pub(crate) fn take_pooled() -> Self {
        Self::take_with(Handed {
            queued: CancellationToken::new(),
            started: CancellationToken::new(),
        })
    }

    fn take_with(mine: Handed) -> Self {
        let previous = LAST_HANDED_OVER
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .replace(mine.clone());
        Self { previous, mine }
    }

    /// Resolves once the call before this one started or ended (or the grace passed).
    pub(crate) async fn wait_turn(&mut self) {
        if let Some(previous) = self.previous.take() {
            wait(previous.started).await;
        }
    }

    /// Resolves once this pooled call may be queued: the call before it was queued (a
    /// pooled one), began (a coroutine call) or ended.
    pub(crate) async fn wait_queued(&mut self) {
        if let Some(previous) = self.previous.take() {
            wait(previous.queued).await;
        }
    }

    /// Marks this pooled call queued: the next pooled call may be queued behind it.
    pub(crate) fn mark_queued(&self) {
        self.mine.queued.cancel();
    }

    /// The signal the host (or the pool) fires when this call's executor begins.
    pub(crate) fn started_signal(&self) -> CancellationToken {
        self.mine.started.clone()
    }
}

/// Waits for `signal`, at most the grace of [`HAND_OVER_GRACE`] / [`MARKING_HOST_GRACE`].
async fn wait(signal: CancellationToken) {
    if signal.is_cancelled() {
        return;
    }
    let grace = if HOST_MARKS.load(Ordering::Relaxed) {
        MARKING_HOST_GRACE
    } else {
        HAND_OVER_GRACE
    };
    let _ = tokio::time::timeout(grace, signal.cancelled()).await;
}

impl Drop for StartTurn {
    fn drop(&mut self) {
        self.mine.queued.cancel();
        self.mine.started.cancel();
    }
}

//! Calls start in call order (SPEC §3.1). uniffi hands every foreign call to a coroutine
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

/// The start signal of the executor call handed over last (process-wide: the order is the
/// order in which the core asks for the calls).
static LAST_HANDED_OVER: Mutex<Option<CancellationToken>> = Mutex::new(None);

/// One executor call's place in the start order. Dropping it (the call ended, timed out or
/// was cancelled) counts as started, so the calls after it go on.
pub(crate) struct StartTurn {
    previous: Option<CancellationToken>,
    mine: CancellationToken,
}

impl StartTurn {
    /// Takes the next place. Called synchronously where the core asks for the call, which it
    /// does in call order.
    pub(crate) fn take() -> Self {
        let mine = CancellationToken::new();
        let previous = LAST_HANDED_OVER
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .replace(mine.clone());
        Self { previous, mine }
    }

    /// Resolves once the call before this one started or ended (or the grace passed).
    pub(crate) async fn wait_turn(&mut self) {
        if let Some(previous) = self.previous.take() {
            let grace = if HOST_MARKS.load(Ordering::Relaxed) {
                MARKING_HOST_GRACE
            } else {
                HAND_OVER_GRACE
            };
            let _ = tokio::time::timeout(grace, previous.cancelled()).await;
        }
    }

    /// The signal the host fires when this call's executor begins.
    pub(crate) fn started_signal(&self) -> CancellationToken {
        self.mine.clone()
    }
}

impl Drop for StartTurn {
    fn drop(&mut self) {
        self.mine.cancel();
    }
}

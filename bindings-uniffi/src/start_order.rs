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

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

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

/// [`Place::reached`]: a call after it may be queued in the pool.
const QUEUED: u8 = 1;
/// [`Place::reached`]: its executor began, or the call ended.
const STARTED: u8 = 2;

/// Where one handed-over call is in its start: one allocation per call, and no lock but the
/// `Notify`'s when a signal first fires (a pair of cancellation tokens would be two
/// allocations, each token's node locked at every clone, drop and firing).
#[derive(Default)]
struct Place {
    /// The signals fired so far ([`QUEUED`], [`STARTED`]).
    reached: AtomicU8,
    /// Wakes the call after this one, which waits for a signal.
    changed: Notify,
}

impl Place {
    fn has(&self, signal: u8) -> bool {
        self.reached.load(Ordering::Acquire) & signal != 0
    }

    fn fire(&self, signals: u8) {
        let before = self.reached.fetch_or(signals, Ordering::AcqRel);
        if before | signals != before {
            self.changed.notify_waiters();
        }
    }

    /// Waits until `signal` fired, at most the grace of [`HAND_OVER_GRACE`] /
    /// [`MARKING_HOST_GRACE`].
    async fn wait(&self, signal: u8) {
        if self.has(signal) {
            return;
        }
        let grace = if HOST_MARKS.load(Ordering::Relaxed) {
            MARKING_HOST_GRACE
        } else {
            HAND_OVER_GRACE
        };
        let _ = tokio::time::timeout(grace, async {
            loop {
                // Registered before the flag is read: a firing in between is not missed.
                let changed = self.changed.notified();
                if self.has(signal) {
                    return;
                }
                changed.await;
            }
        })
        .await;
    }
}

/// The signal the host (or the pool) fires when a call's executor begins.
#[derive(Clone)]
pub(crate) struct StartSignal {
    place: Arc<Place>,
    /// What beginning fires: a coroutine call lets the next call be queued only then.
    fires: u8,
}

impl StartSignal {
    /// Marks the call begun (harmless when fired twice).
    pub(crate) fn fire(&self) {
        self.place.fire(self.fires);
    }
}

/// The place of the executor call handed over last (process-wide: the order is the order
/// in which the core asks for the calls).
static LAST_HANDED_OVER: Mutex<Option<Arc<Place>>> = Mutex::new(None);

/// One executor call's place in the start order. Dropping it (the call ended, timed out or
/// was cancelled) counts as started, so the calls after it go on.
pub(crate) struct StartTurn {
    previous: Option<Arc<Place>>,
    mine: Arc<Place>,
    /// What this call's beginning fires ([`StartSignal::fires`]).
    fires: u8,
}

impl StartTurn {
    /// Takes the next place for a coroutine call. Called synchronously where the core asks
    /// for the call, which it does in call order.
    pub(crate) fn take() -> Self {
        Self::take_with(QUEUED | STARTED)
    }

    /// Takes the next place for a call of the pool (see the module comment).
    pub(crate) fn take_pooled() -> Self {
        Self::take_with(STARTED)
    }

    fn take_with(fires: u8) -> Self {
        let mine = Arc::new(Place::default());
        let previous = LAST_HANDED_OVER
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .replace(Arc::clone(&mine));
        Self {
            previous,
            mine,
            fires,
        }
    }

    /// Resolves once the call before this one started or ended (or the grace passed).
    pub(crate) async fn wait_turn(&mut self) {
        if let Some(previous) = self.previous.take() {
            previous.wait(STARTED).await;
        }
    }

    /// Resolves once this pooled call may be queued: the call before it was queued (a
    /// pooled one), began (a coroutine call) or ended.
    pub(crate) async fn wait_queued(&mut self) {
        if let Some(previous) = self.previous.take() {
            previous.wait(QUEUED).await;
        }
    }

    /// Marks this pooled call queued: the next pooled call may be queued behind it.
    pub(crate) fn mark_queued(&self) {
        self.mine.fire(QUEUED);
    }

    /// The signal the host (or the pool) fires when this call's executor begins.
    pub(crate) fn started_signal(&self) -> StartSignal {
        StartSignal {
            place: Arc::clone(&self.mine),
            fires: self.fires,
        }
    }
}

impl Drop for StartTurn {
    fn drop(&mut self) {
        self.mine.fire(QUEUED | STARTED);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `wait` ends within `within` (a long bound: the waits tested never end by
    /// their grace, which `host_marks` makes ten seconds).
    async fn ends_within(wait: impl std::future::Future<Output = ()>, within: Duration) -> bool {
        tokio::time::timeout(within, wait).await.is_ok()
    }

    #[tokio::test]
    async fn a_signal_fired_before_the_wait_ends_it_at_once() {
        host_marks();
        let place = Place::default();
        place.fire(QUEUED);
        assert!(ends_within(place.wait(QUEUED), Duration::from_secs(5)).await);
        assert!(!place.has(STARTED));
    }

    #[tokio::test]
    async fn a_waiter_is_woken_by_its_own_signal_only() {
        host_marks();
        let place = Arc::new(Place::default());
        let waiter = tokio::spawn({
            let place = Arc::clone(&place);
            async move { place.wait(STARTED).await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        place.fire(QUEUED);
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiter.is_finished(), "woken by the other signal");
        place.fire(STARTED);
        assert!(ends_within(async { waiter.await.unwrap() }, Duration::from_secs(5)).await);
    }

    /// The one test of the process-wide order (the others use places of their own).
    #[tokio::test]
    async fn calls_are_handed_over_in_the_order_their_places_were_taken() {
        host_marks();
        let first = StartTurn::take_pooled();
        let mut second = StartTurn::take_pooled();
        let mut third = StartTurn::take();
        let mut fourth = StartTurn::take();
        let short = Duration::from_millis(50);
        let long = Duration::from_secs(5);

        // A pooled call is queued once the pooled call before it was. (A wait given up
        // forgets the place it waited for: the test hands it back.)
        assert!(!ends_within(second.wait_queued(), short).await);
        first.mark_queued();
        second.previous = Some(Arc::clone(&first.mine));
        assert!(ends_within(second.wait_queued(), long).await);

        // A coroutine call waits until the pooled call before it began, not until queued.
        second.mark_queued();
        assert!(!ends_within(third.wait_turn(), short).await);
        second.started_signal().fire();
        third.previous = Some(Arc::clone(&second.mine));
        assert!(ends_within(third.wait_turn(), long).await);

        // A coroutine call's start lets the next be queued too; an ended call counts as begun.
        third.started_signal().fire();
        assert!(third.mine.has(QUEUED) && third.mine.has(STARTED));
        drop(third);
        assert!(ends_within(fourth.wait_turn(), long).await);
        drop((first, second, fourth));
    }
}

//! Runs polled by a thread of the host instead of a task of the core's runtime ("driven"
//! runs: the Go, PHP and Java bindings drive their runs where they wait for them, and the
//! Python and Node bindings on their event loop's thread, so that a turn's tool call needs
//! no hand-over between threads).
//!
//! What every driver shares is here: each poll runs inside a runtime (the core's, or the
//! one a binding names: a run's timers, spawned tasks and blocking pool live there), a panic of the run's future stays
//! on this side of the host's boundary, an ended run's future is dropped before its outcome
//! is handed out (whatever it held, a store's claim or the options' callbacks, is let go
//! first, as a spawned run's task is), and a run that keeps waking itself gives the host's
//! thread back after [`MAX_ROUNDS`] polls. How a wake-up reaches the host, and who polls
//! next, is each binding's own.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::runtime::Handle;

/// How many times one [`DrivenRun::poll`] polls a run that was woken while it was polled.
pub const MAX_ROUNDS: usize = 64;

/// How a poll of a driven run ended.
#[derive(Debug)]
pub enum Polled<T> {
    /// The run waits for something: its waker is called when it can go on.
    Pending,
    /// The run was woken during each of [`MAX_ROUNDS`] polls: the host's thread is given
    /// back, and the run must be polled again (its wake-up is not lost).
    Busy,
    /// The run ended with this value; its future is dropped.
    Ended(T),
    /// The run's future panicked (a defect of the core), with the panic's message; its
    /// future is dropped.
    Panicked(String),
}

/// A run's future boxed where it is made. A run's future is several kilobytes before its
/// first poll, and one moved by value through the functions that hand it to its driver is
/// copied by each (the C ABI's was copied three times before it reached its box): make it
/// with `Box::pin(async move { … })` and hand the box to [`DrivenRun::boxed`].
pub type BoxedRun<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// A run's future, polled by the host's thread until it ends.
pub struct DrivenRun<T> {
    future: Option<BoxedRun<T>>,
    /// The runtime every poll and the future's drop run inside.
    runtime: Handle,
}

impl<T> std::fmt::Debug for DrivenRun<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DrivenRun")
            .field("ended", &self.has_ended())
            .finish()
    }
}

impl<T> DrivenRun<T> {
    /// A run to drive inside the core's runtime; nothing of it runs before its first poll.
    pub fn new(run: impl Future<Output = T> + Send + 'static) -> Self {
        Self::in_runtime(crate::exec::runtime().handle().clone(), run)
    }

    /// A run to drive inside `runtime` (a binding whose host library owns the process's
    /// runtime names it here); nothing of it runs before its first poll.
    pub fn in_runtime(runtime: Handle, run: impl Future<Output = T> + Send + 'static) -> Self {
        Self::boxed_in_runtime(runtime, Box::pin(run))
    }

    /// [`new`](Self::new) for a future already boxed (see [`BoxedRun`]).
    pub fn boxed(run: BoxedRun<T>) -> Self {
        Self::boxed_in_runtime(crate::exec::runtime().handle().clone(), run)
    }

    /// [`in_runtime`](Self::in_runtime) for a future already boxed (see [`BoxedRun`]).
    pub fn boxed_in_runtime(runtime: Handle, run: BoxedRun<T>) -> Self {
        Self {
            future: Some(run),
            runtime,
        }
    }

    /// Whether the run has ended (its future is gone).
    pub fn has_ended(&self) -> bool {
        self.future.is_none()
    }

    /// Polls the run once, inside the core's runtime. Polled after it ended, a run answers
    /// [`Polled::Pending`]: its outcome was handed out once.
    pub fn poll_once(&mut self, cx: &mut Context<'_>) -> Polled<T> {
        let Some(future) = self.future.as_mut() else {
            return Polled::Pending;
        };
        let _runtime = self.runtime.enter();
        let polled = match catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
            Ok(Poll::Pending) => return Polled::Pending,
            Ok(Poll::Ready(value)) => Polled::Ended(value),
            Err(panic) => Polled::Panicked(crate::panic_message(panic.as_ref())),
        };
        drop_quietly(self.future.take());
        polled
    }

    /// Polls the run until it is pending and was not woken meanwhile, or has ended:
    /// `before_round` runs before each poll (a binding clears its wake-up flag there) and
    /// `woken_meanwhile` after a poll that left the run pending (true: poll again now).
    /// After [`MAX_ROUNDS`] rounds woken each time, [`Polled::Busy`].
    pub fn poll(
        &mut self,
        cx: &mut Context<'_>,
        mut before_round: impl FnMut(),
        mut woken_meanwhile: impl FnMut() -> bool,
    ) -> Polled<T> {
        for _ in 0..MAX_ROUNDS {
            before_round();
            match self.poll_once(cx) {
                Polled::Pending if !self.has_ended() && woken_meanwhile() => continue,
                polled => return polled,
            }
        }
        Polled::Busy
    }

    /// Lets go of a run before it ended (its host is gone: a closed event loop, an exiting
    /// process): its future is dropped now, inside the runtime where its resources live,
    /// and later polls answer [`Polled::Pending`].
    pub fn abandon(&mut self) {
        if self.future.is_some() {
            let _runtime = self.runtime.enter();
            drop_quietly(self.future.take());
        }
    }
}

impl<T> Drop for DrivenRun<T> {
    fn drop(&mut self) {
        self.abandon();
    }
}

/// Drops a run's future; a panic while dropping it (a defect of the core) must not reach
/// the host.
fn drop_quietly<F>(future: Option<F>) {
    let _ = catch_unwind(AssertUnwindSafe(move || drop(future)));
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::{Wake, Waker};

    use super::*;

    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn waker() -> (Arc<Count>, Waker) {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        (count.clone(), Waker::from(count))
    }

    #[test]
    fn a_run_that_ends_gives_its_value_once() {
        let (_, waker) = waker();
        let mut cx = Context::from_waker(&waker);
        let mut run = DrivenRun::new(async { 7 });
        assert!(!run.has_ended());
        assert!(matches!(
            run.poll(&mut cx, || {}, || false),
            Polled::Ended(7)
        ));
        assert!(run.has_ended());
        assert!(matches!(run.poll_once(&mut cx), Polled::Pending));
    }

    #[test]
    fn a_panicking_run_is_reported_not_propagated() {
        let (_, waker) = waker();
        let mut cx = Context::from_waker(&waker);
        let mut run: DrivenRun<()> = DrivenRun::new(async { panic!("boom") });
        match run.poll_once(&mut cx) {
            Polled::Panicked(message) => assert_eq!(message, "boom"),
            other => panic!("expected a panic, got {other:?}"),
        }
        assert!(run.has_ended());
    }

    #[test]
    fn a_run_waiting_on_the_cores_timer_is_pending_until_woken() {
        let (count, waker) = waker();
        let mut cx = Context::from_waker(&waker);
        let mut run = DrivenRun::new(async {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            "slept"
        });
        // The timer is the core runtime's: polling outside it would panic.
        assert!(matches!(
            run.poll(&mut cx, || {}, || false),
            Polled::Pending
        ));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while count.0.load(Ordering::SeqCst) == 0 {
            assert!(std::time::Instant::now() < deadline, "never woken");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(matches!(
            run.poll(&mut cx, || {}, || false),
            Polled::Ended("slept")
        ));
    }

    #[test]
    fn a_run_woken_during_every_poll_gives_the_thread_back() {
        let (_, waker) = waker();
        let mut cx = Context::from_waker(&waker);
        let mut run = DrivenRun::new(std::future::pending::<()>());
        let mut rounds = 0;
        let polled = run.poll(&mut cx, || rounds += 1, || true);
        assert!(matches!(polled, Polled::Busy));
        assert_eq!(rounds, MAX_ROUNDS);
        assert!(!run.has_ended());
    }

    #[test]
    fn a_run_dropped_before_it_ends_drops_its_future_inside_the_runtime() {
        struct NeedsRuntime;
        impl Drop for NeedsRuntime {
            fn drop(&mut self) {
                // Panics outside a runtime: a drop outside it would be swallowed, and the
                // flag below would stay unset.
                let _ = tokio::runtime::Handle::current();
                DROPPED.store(1, Ordering::SeqCst);
            }
        }
        static DROPPED: AtomicUsize = AtomicUsize::new(0);
        let held = NeedsRuntime;
        let run = DrivenRun::new(async move {
            let _held = held;
            std::future::pending::<()>().await
        });
        drop(run);
        assert_eq!(DROPPED.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn an_abandoned_run_drops_its_future_at_once_and_ends_nothing() {
        struct Held(Arc<AtomicUsize>);
        impl Drop for Held {
            fn drop(&mut self) {
                let _ = tokio::runtime::Handle::current(); // inside a runtime, or panics
                self.0.store(1, Ordering::SeqCst);
            }
        }
        let dropped = Arc::new(AtomicUsize::new(0));
        let held = Held(dropped.clone());
        let (_, waker) = waker();
        let mut cx = Context::from_waker(&waker);
        let mut run = DrivenRun::new(async move {
            let _held = held;
            std::future::pending::<()>().await
        });
        assert!(matches!(run.poll_once(&mut cx), Polled::Pending));
        run.abandon();
        assert_eq!(
            dropped.load(Ordering::SeqCst),
            1,
            "the future was not dropped"
        );
        assert!(run.has_ended());
        assert!(matches!(run.poll_once(&mut cx), Polled::Pending));
    }

    #[test]
    fn a_run_given_a_runtime_is_polled_inside_that_runtime() {
        let own = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        let expected = own.handle().id();
        let (_, waker) = waker();
        let mut cx = Context::from_waker(&waker);
        let mut run = DrivenRun::in_runtime(own.handle().clone(), async {
            tokio::runtime::Handle::current().id()
        });
        match run.poll_once(&mut cx) {
            Polled::Ended(id) => assert_eq!(id, expected),
            other => panic!("expected the run to end, got {other:?}"),
        }
        assert_ne!(expected, crate::exec::runtime().handle().id());
    }
}

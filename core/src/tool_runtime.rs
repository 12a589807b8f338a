//! The runtime passed to executors, predicates and hooks (docs/behaviour.md §2.1).

use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};

use futures::task::AtomicWaker;
use serde_json::Value;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::limits::{check_value, ValueLimitError};
use crate::state::ToolCall;

/// A run's ids, shared by its tool phases, with (made by the run's first call that needs
/// it) their JSON text, which begins every call runtime's text.
pub(crate) struct RunIds {
    pub(crate) run_id: Arc<str>,
    pub(crate) agent_id: Arc<str>,
    json: OnceLock<IdsJson>,
}

impl RunIds {
    /// The ids of a run.
    pub(crate) fn new(run_id: Arc<str>, agent_id: Arc<str>) -> Arc<Self> {
        Arc::new(Self {
            run_id,
            agent_id,
            json: OnceLock::new(),
        })
    }
}

/// A run's ids as the JSON text that begins a call runtime's (`{"runId":…,"agentId":…`),
/// and where the run id's text ends in it (after its closing quote).
pub(crate) struct IdsJson {
    pub(crate) text: String,
    pub(crate) run_id_end: usize,
}

/// What the calls of one tool phase share, in one allocation for all of them: the run's
/// ids, the step, the application context as the phase began, and (made by the first call
/// that needs it) those four as JSON text, for the hosts that receive a call's runtime as
/// JSON text (`json_host::JsonArgs::to_canonical_text`): with a large context, writing it
/// once per phase instead of once per call.
pub(crate) struct PhaseShared {
    ids: Arc<RunIds>,
    step_index: usize,
    /// Boxed: the rest then takes one of mimalloc's small size classes that a run keeps in
    /// use; in a class with no other block in use, each phase's short-lived allocation
    /// would be served from a fresh page (see docs/performance.md, Core).
    context: Box<Value>,
    json_head: OnceLock<PhaseHead>,
    /// The phase's cancellation (the run's, or the phase's own child of it): every call of
    /// the phase is cancelled with it.
    token: CancellationToken,
}

impl PhaseShared {
    /// The shared part of the runtimes of one phase, with a cancellation of its own.
    #[cfg(test)]
    pub(crate) fn new(ids: Arc<RunIds>, step_index: usize, context: Value) -> Arc<Self> {
        Self::with_token(ids, step_index, context, CancellationToken::new())
    }

    /// The shared part of the runtimes of one phase cancelled with `token`.
    pub(crate) fn with_token(
        ids: Arc<RunIds>,
        step_index: usize,
        context: Value,
        token: CancellationToken,
    ) -> Arc<Self> {
        Arc::new(Self {
            ids,
            step_index,
            context: Box::new(context),
            json_head: OnceLock::new(),
            token,
        })
    }

    /// The phase's cancellation token.
    pub(crate) fn token(&self) -> &CancellationToken {
        &self.token
    }

    /// The application context as the phase began.
    pub(crate) fn context(&self) -> &Value {
        &self.context
    }
}

/// The JSON text of the runtime entries the calls of one phase share (`{"runId":…,
/// "agentId":…,"stepIndex":…,"context":…`, its closing brace left off), and where the run
/// id's text ends in it (after its closing quote): a call's idempotency key reuses it.
pub(crate) struct PhaseHead {
    pub(crate) text: String,
    pub(crate) run_id_end: usize,
}

struct RuntimeInner {
    phase: Arc<PhaseShared>,
    tool_call: ToolCall,
    cancellation: CallCancellation,
    /// Progress accepted while the call runs (executor calls only); the run loop drains it.
    progress: Option<ProgressQueue>,
    context_update: Mutex<Option<Value>>,
    annotations: Option<Arc<Value>>,
    /// The executor's attempt (1-based; above 1 when the tool's `retry` runs it again).
    attempt: u32,
    /// No other call of the turn runs while this one does (see [`ToolRuntime::runs_alone`]).
    alone: bool,
    /// The binding's tag of the run (see [`crate::RunOptions::host_tag`]).
    host_tag: Option<u64>,
}

/// A call's cancellation: its phase's (the run's cancellation reaches every call through
/// it) or its own (a timeout). Its own is a flag with a wake-up inside the runtime's
/// allocation, and a `CancellationToken` of the call (a child of the phase's) is made only
/// when something asks for one: a child token costs an allocation and two locks of the
/// phase's token to make and as many to drop (see docs/performance.md, Core), and most
/// calls are never cancelled nor asked for their token.
struct CallCancellation {
    /// The call's token, when given at creation or asked for since.
    token: OnceLock<CancellationToken>,
    /// The call was cancelled on its own.
    cancelled: AtomicBool,
    /// Wakes the waiters of [`ToolRuntime::cancelled`] when `cancelled` is set.
    notify: Notify,
}

impl CallCancellation {
    fn new(token: Option<CancellationToken>) -> Self {
        Self {
            token: token.map(OnceLock::from).unwrap_or_default(),
            cancelled: AtomicBool::new(false),
            notify: Notify::new(),
        }
    }
}

/// Progress values waiting for the run loop, with a wake-up for it. Lives inside the
/// runtime's allocation: a call that never reports progress costs nothing extra.
/// The run loop's task is woken through an `AtomicWaker` it registers each time it polls
/// the call (a few atomic operations), rather than through a waiter list it would join and
/// leave on every call.
#[derive(Default)]
struct ProgressQueue {
    /// A value, or the message of a value the binding could not convert.
    values: Mutex<Vec<Result<Value, String>>>,
    /// Set when a value is queued, cleared when the queue is taken.
    queued: AtomicBool,
    waker: AtomicWaker,
    closed: AtomicBool,
}

/// What a tool call sees of its run: ids, the application context as it was when the tool
/// phase began, the call itself, a cancellation token (cancelled on timeout or when the run
/// is cancelled), and `emit_progress` / `set_context`. Cheap to clone.
#[derive(Clone)]
pub struct ToolRuntime {
    inner: Arc<RuntimeInner>,
}

impl std::fmt::Debug for ToolRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRuntime")
            .field("run_id", &self.inner.phase.ids.run_id)
            .field("step_index", &self.inner.phase.step_index)
            .field("tool_call", &self.inner.tool_call)
            .finish()
    }
}

impl ToolRuntime {
    /// The runtime of `tool_call` in `phase`: cancelled with `token` when one is given,
    /// else with the phase's token or on its own ([`ToolRuntime::cancel`]).
    pub(crate) fn new(
        phase: Arc<PhaseShared>,
        tool_call: ToolCall,
        token: Option<CancellationToken>,
        accepts_progress: bool,
    ) -> Self {
        Self {
            inner: Arc::new(RuntimeInner {
                phase,
                tool_call,
                cancellation: CallCancellation::new(token),
                progress: accepts_progress.then(ProgressQueue::default),
                context_update: Mutex::new(None),
                annotations: None,
                attempt: 1,
                alone: false,
                host_tag: None,
            }),
        }
    }

    /// Sets the called tool's annotations (right after `new`, while unshared).
    pub(crate) fn with_annotations(mut self, annotations: Option<Arc<Value>>) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.annotations = annotations;
        }
        self
    }

    /// Sets the attempt (right after `new`, while unshared).
    pub(crate) fn with_attempt(mut self, attempt: u32) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.attempt = attempt;
        }
        self
    }

    /// Marks the call as running alone (right after `new`, while unshared).
    pub(crate) fn with_alone(mut self, alone: bool) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.alone = alone;
        }
        self
    }

    /// Sets the run's host tag (right after `new`, while unshared).
    pub(crate) fn with_host_tag(mut self, tag: Option<u64>) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.host_tag = tag;
        }
        self
    }

    /// The tag the binding gave the run this call belongs to (`RunOptions::host_tag`,
    /// `ContinueOptions::host_tag`; a nested agent run has its parent's): `None` when
    /// the run has none.
    pub fn host_tag(&self) -> Option<u64> {
        self.inner.host_tag
    }

    /// The executor's attempt: 1, then 2, 3… when the tool's `retry` runs the call again
    /// (docs/behaviour.md §15).
    pub fn attempt(&self) -> u32 {
        self.inner.attempt
    }

    /// `"<runId>:<toolCallId>"`: the same for every attempt of the call, for a call
    /// approved on continue in another process or language, and for a call run again by
    /// `recover`. A side-effecting tool hands it to its service so the effect happens at
    /// most once (docs/behaviour.md §15).
    pub fn idempotency_key(&self) -> String {
        IdempotencyKey(self).to_string()
    }

    /// Whether no other call of the turn runs while this one does (the turn has one call
    /// to run, or its calls run one at a time): the run loop does nothing but wait for this
    /// call, so a binding may wait for its answer actively (spinning briefly instead of
    /// parking a thread) without holding up other calls.
    pub fn runs_alone(&self) -> bool {
        self.inner.alone
    }

    /// The run id.
    pub fn run_id(&self) -> &str {
        &self.inner.phase.ids.run_id
    }

    /// The agent id.
    pub fn agent_id(&self) -> &str {
        &self.inner.phase.ids.agent_id
    }

    /// Index of the step that requested the call.
    pub fn step_index(&self) -> usize {
        self.inner.phase.step_index
    }

    /// The application context as it was when the tool phase began.
    pub fn context(&self) -> &Value {
        &self.inner.phase.context
    }

    /// The JSON text that the calls of this runtime's phase share (`write` makes it, once
    /// per phase; see [`PhaseShared`]).
    pub(crate) fn phase_json_head(&self, write: impl FnOnce() -> PhaseHead) -> &PhaseHead {
        self.inner.phase.json_head.get_or_init(write)
    }

    /// The JSON text of the run's ids (`write` makes it, once per run; see [`RunIds`]).
    pub(crate) fn ids_json(&self, write: impl FnOnce() -> IdsJson) -> &IdsJson {
        self.inner.phase.ids.json.get_or_init(write)
    }

    /// The called tool's annotations (MCP `readOnlyHint`, `destructiveHint`, …), so an
    /// agent-level approval predicate can decide from them (docs/behaviour.md §11).
    pub fn tool_annotations(&self) -> Option<&Value> {
        self.inner.annotations.as_deref()
    }

    /// The call: `{id, name, input}`. `id` is unique in the run: use it as an idempotency key.
    pub fn tool_call(&self) -> &ToolCall {
        &self.inner.tool_call
    }

    /// The call's id and tool name, for the record of its result: taken from the runtime
    /// when nothing else holds it (the host let go of its copy), copied otherwise.
    pub(crate) fn into_id_and_name(self) -> (Arc<str>, Arc<str>) {
        match Arc::try_unwrap(self.inner) {
            Ok(inner) => (inner.tool_call.id, inner.tool_call.name),
            Err(shared) => (shared.tool_call.id.clone(), shared.tool_call.name.clone()),
        }
    }

    /// The call's cancellation token: cancelled when the call times out or the run is
    /// cancelled. Made on the first request (see [`ToolRuntime::cancelled`] and
    /// [`ToolRuntime::is_cancelled`], which need none).
    pub fn cancellation_token(&self) -> &CancellationToken {
        let c = &self.inner.cancellation;
        let mut made = false;
        let token = c.token.get_or_init(|| {
            made = true;
            self.inner.phase.token.child_token()
        });
        // Either `cancel` sees the token made here, or this sees its flag.
        fence(Ordering::SeqCst);
        if c.cancelled.load(Ordering::SeqCst) {
            token.cancel();
        }
        if made {
            // Waiters of `cancelled` wait for the token from now on (whoever holds it may
            // cancel it).
            c.notify.notify_waiters();
        }
        token
    }

    /// Whether the call has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        let c = &self.inner.cancellation;
        c.cancelled.load(Ordering::Acquire)
            || c.token.get().is_some_and(CancellationToken::is_cancelled)
            || self.inner.phase.token.is_cancelled()
    }

    /// Completes when the call is cancelled.
    pub async fn cancelled(&self) {
        let c = &self.inner.cancellation;
        loop {
            // The call's token, once made, is cancelled with it in every way.
            if let Some(token) = c.token.get() {
                return token.cancelled().await;
            }
            let notified = c.notify.notified();
            tokio::pin!(notified);
            // Registered before the flag and the token are read: a `cancel` or a token
            // made in between still wakes it.
            notified.as_mut().enable();
            if c.token.get().is_some() {
                continue;
            }
            if self.is_cancelled() {
                return;
            }
            tokio::select! {
                () = notified => {}
                () = self.inner.phase.token.cancelled() => return,
            }
        }
    }

    /// Cancels the call on its own (its timeout): its token, when one was made, and its
    /// waiters.
    pub(crate) fn cancel(&self) {
        let c = &self.inner.cancellation;
        c.cancelled.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        c.notify.notify_waiters();
        if let Some(token) = c.token.get() {
            token.cancel();
        }
    }

    /// Publishes a progress value (checked by `eventSchema`, emitted as
    /// `tool.preliminary_result`, stored in the step's `preliminaryResults`).
    pub fn emit_progress(&self, value: Value) {
        self.push_progress(Ok(value));
    }

    /// Reports a progress value the binding could not convert (too deep, a cycle, a huge
    /// integer): the call then fails exactly as on an `eventSchema` failure
    /// (`tool_event_invalid`, `Invalid tool event: <message>`).
    pub fn reject_progress(&self, message: impl Into<String>) {
        self.push_progress(Err(message.into()));
    }

    fn push_progress(&self, value: Result<Value, String>) {
        if let Some(queue) = &self.inner.progress {
            // Progress after the call ended is dropped.
            if queue.closed.load(Ordering::Acquire) {
                return;
            }
            queue
                .values
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(value);
            queue.queued.store(true, Ordering::Release);
            queue.waker.wake();
        }
    }

    /// Ready when progress is queued; otherwise `cx` is woken when some is (never for calls
    /// without progress).
    pub(crate) fn poll_progress(&self, cx: &mut Context<'_>) -> Poll<()> {
        let Some(queue) = &self.inner.progress else {
            return Poll::Pending;
        };
        queue.waker.register(cx.waker());
        match queue.queued.load(Ordering::Acquire) {
            true => Poll::Ready(()),
            false => Poll::Pending,
        }
    }

    /// Forgets the waker [`ToolRuntime::poll_progress`] keeps: the run loop's wait for the
    /// call is over (or was dropped), and a runtime a host keeps after its call must not
    /// keep the run's task, nor what the task's waker holds, alive.
    pub(crate) fn forget_waker(&self) {
        if let Some(queue) = &self.inner.progress {
            drop(queue.waker.take());
        }
    }

    /// Takes the queued progress values, in order.
    pub(crate) fn take_progress(&self) -> Vec<Result<Value, String>> {
        match &self.inner.progress {
            Some(queue) => {
                // Cleared before the values are taken: a value queued in between is taken
                // now and leaves the flag set, which costs one empty take later, never a
                // value left behind unseen.
                queue.queued.store(false, Ordering::Release);
                std::mem::take(&mut *queue.values.lock().unwrap_or_else(|e| e.into_inner()))
            }
            None => Vec::new(),
        }
    }

    /// Stops accepting progress (the call ended).
    pub(crate) fn close_progress(&self) {
        if let Some(queue) = &self.inner.progress {
            queue.closed.store(true, Ordering::Release);
        }
    }

    /// Replaces the whole application context for later turns (applied after the tool
    /// phase, in call order). A value beyond the limits of docs/behaviour.md §7 is refused (and the
    /// context left as it was): bindings raise it as a host error in the tool.
    pub fn set_context(&self, value: Value) -> Result<(), ValueLimitError> {
        check_value(&value)?;
        *self
            .inner
            .context_update
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(value);
        Ok(())
    }

    pub(crate) fn take_context_update(&self) -> Option<Value> {
        self.inner
            .context_update
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }
}

/// Writes a call's idempotency key, `<run id>:<call id>` ([`ToolRuntime::idempotency_key`]),
/// where it is needed without building the string first (a call's JSON arguments).
pub(crate) struct IdempotencyKey<'a>(pub(crate) &'a ToolRuntime);

impl std::fmt::Display for IdempotencyKey<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}",
            self.0.inner.phase.ids.run_id, self.0.inner.tool_call.id
        )
    }
}

#[cfg(test)]
mod tests;

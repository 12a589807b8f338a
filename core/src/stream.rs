//! Streaming (docs/behaviour.md §6): a run in the background with a replayable event history that any
//! number of consumers read from the start.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use futures::Stream;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::checked_agent::AgentInner;
use crate::error::AgentError;
use crate::events::{AgentEvent, EventData, EventType};
use crate::options::{ContinueOptions, RunOptions};
use crate::state::{Item, RunResult};

#[derive(Default)]
struct Buffer {
    events: Vec<AgentEvent>,
    outcome: Option<Result<RunResult, AgentError>>,
    cancel_reason: Option<String>,
}

/// The shared history of a streamed run.
#[derive(Default)]
pub struct StreamShared {
    buffer: Mutex<Buffer>,
    notify: Notify,
}

impl StreamShared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Buffer> {
        self.buffer.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn push_event(&self, event: AgentEvent) {
        self.lock().events.push(event);
        self.notify.notify_waiters();
    }

    fn finish(&self, outcome: Result<RunResult, AgentError>) {
        self.lock().outcome = Some(outcome);
        self.notify.notify_waiters();
    }

    pub(crate) fn cancel_reason(&self) -> Option<String> {
        self.lock().cancel_reason.clone()
    }
}

/// One element of the full stream: every event, then the result.
// Events are nearly every item: boxing them to shrink the enum would allocate per event.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum StreamItem {
    /// An event.
    Event(AgentEvent),
    /// The final result (`{type: "result", result}`), always last.
    Result(Box<RunResult>),
}

/// A cursor over the replayable history; each consumer has its own.
pub struct EventCursor {
    shared: Arc<StreamShared>,
    next: usize,
    done: bool,
}

impl EventCursor {
    /// The next item: events in order, then the result; `None` after the result. A failed
    /// run yields its error (once) instead of the result.
    pub async fn next_item(&mut self) -> Option<Result<StreamItem, AgentError>> {
        if self.done {
            return None;
        }
        loop {
            let notified = self.shared.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let buffer = self.shared.lock();
                if let Some(event) = buffer.events.get(self.next) {
                    self.next += 1;
                    return Some(Ok(StreamItem::Event(event.clone())));
                }
                if let Some(outcome) = &buffer.outcome {
                    self.done = true;
                    return Some(match outcome {
                        Ok(result) => Ok(StreamItem::Result(Box::new(result.clone()))),
                        Err(e) => Err(e.clone()),
                    });
                }
            }
            notified.await;
        }
    }

    /// The next event; `None` once the run ended (`Err` if it failed).
    pub async fn next_event(&mut self) -> Option<Result<AgentEvent, AgentError>> {
        match self.next_item().await? {
            Ok(StreamItem::Event(e)) => Some(Ok(e)),
            Ok(StreamItem::Result(_)) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

/// A streamed run: awaitable for its result, with replayable iterators over its events.
#[derive(Clone)]
pub struct AgentStream {
    shared: Arc<StreamShared>,
    cancel: CancellationToken,
}

fn spawn<F>(fut: F)
where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => {
            handle.spawn(fut);
        }
        Err(_) => {
            crate::exec::runtime().spawn(fut);
        }
    }
}

impl AgentStream {
    fn new(cancel: Option<CancellationToken>) -> Self {
        Self {
            shared: Arc::new(StreamShared::default()),
            cancel: cancel.unwrap_or_default(),
        }
    }

    pub(crate) fn start_run(agent: Arc<AgentInner>, options: RunOptions) -> Self {
        let (stream, driver) = Self::deferred_run(agent, options);
        spawn(driver);
        stream
    }

    pub(crate) fn start_continue(
        agent: Arc<AgentInner>,
        state: Option<RunResult>,
        options: ContinueOptions,
    ) -> Self {
        let (stream, driver) = Self::deferred_continue(agent, state, options);
        spawn(driver);
        stream
    }

    pub(crate) fn deferred_run(
        agent: Arc<AgentInner>,
        mut options: RunOptions,
    ) -> (Self, BoxFuture<'static, ()>) {
        let stream = Self::new(options.cancel.take());
        options.cancel = Some(stream.cancel.clone());
        let shared = stream.shared.clone();
        let driver = async move {
            let outcome = crate::engine::run(agent, options, Some(shared.clone())).await;
            shared.finish(outcome);
        };
        (stream, Box::pin(driver))
    }

    pub(crate) fn deferred_continue(
        agent: Arc<AgentInner>,
        state: Option<RunResult>,
        mut options: ContinueOptions,
    ) -> (Self, BoxFuture<'static, ()>) {
        let stream = Self::new(options.cancel.take());
        options.cancel = Some(stream.cancel.clone());
        let shared = stream.shared.clone();
        let driver = async move {
            let outcome =
                crate::engine::continue_run(agent, state.as_ref(), options, Some(shared.clone()))
                    .await;
            shared.finish(outcome);
        };
        (stream, Box::pin(driver))
    }

    /// A new cursor from the start of the history.
    pub fn cursor(&self) -> EventCursor {
        EventCursor {
            shared: self.shared.clone(),
            next: 0,
            done: false,
        }
    }

    /// Waits for the final result (a failed run gives its error).
    pub async fn result(&self) -> Result<RunResult, AgentError> {
        let mut cursor = self.cursor();
        loop {
            match cursor.next_item().await {
                Some(Ok(StreamItem::Result(r))) => return Ok(*r),
                Some(Err(e)) => return Err(e),
                Some(Ok(StreamItem::Event(_))) => {}
                None => unreachable!("a cursor ends with the result or an error"),
            }
        }
    }

    /// The final output as text (`""` when there is none).
    pub async fn text(&self) -> Result<String, AgentError> {
        Ok(self.result().await?.output_text())
    }

    /// Cancels the run; it ends `cancelled` and its result is still returned.
    pub fn cancel(&self, reason: Option<String>) {
        self.shared.lock().cancel_reason = reason;
        self.cancel.cancel();
    }

    /// Every event, then the result.
    pub fn full_stream(&self) -> impl Stream<Item = Result<StreamItem, AgentError>> {
        futures::stream::unfold(self.cursor(), |mut c| async move {
            let item = c.next_item().await?;
            Some((item, c))
        })
    }

    /// Every event (ends when the run ends; yields the error if it failed).
    pub fn events(&self) -> impl Stream<Item = Result<AgentEvent, AgentError>> {
        futures::stream::unfold(self.cursor(), |mut c| async move {
            let item = c.next_event().await?;
            Some((item, c))
        })
    }

    fn filtered<T, F>(&self, pick: F) -> impl Stream<Item = Result<T, AgentError>>
    where
        F: Fn(AgentEvent) -> Option<T> + Clone,
    {
        futures::stream::unfold(self.cursor(), move |mut c| {
            let pick = pick.clone();
            async move {
                loop {
                    match c.next_event().await? {
                        Ok(e) => {
                            if let Some(v) = pick(e) {
                                return Some((Ok(v), c));
                            }
                        }
                        Err(e) => return Some((Err(e), c)),
                    }
                }
            }
        })
    }

    /// Text deltas.
    pub fn text_stream(&self) -> impl Stream<Item = Result<String, AgentError>> {
        self.filtered(|e| match (e.event_type, e.data) {
            (EventType::OutputTextDelta, EventData::Delta { delta }) => Some(delta),
            _ => None,
        })
    }

    /// Reasoning deltas.
    pub fn reasoning_stream(&self) -> impl Stream<Item = Result<String, AgentError>> {
        self.filtered(|e| match (e.event_type, e.data) {
            (EventType::ReasoningDelta, EventData::Delta { delta }) => Some(delta),
            _ => None,
        })
    }

    /// Items.
    pub fn items_stream(&self) -> impl Stream<Item = Result<Item, AgentError>> {
        self.filtered(|e| match e.data {
            EventData::Item { item } => Some(item),
            _ => None,
        })
    }

    /// `tool.*` events.
    pub fn tool_stream(&self) -> impl Stream<Item = Result<AgentEvent, AgentError>> {
        self.filtered(|e| e.event_type.is_tool_event().then_some(e))
    }
}

//! The scripted client: a list of responses, in order.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::model::{DeltaSink, ModelClient, ModelError, ModelRequest, ModelResponse};

/// Answers each request with the next scripted response (or failure), in order; for tests
/// and demos. Running out of responses is an error naming how many were used.
#[derive(Debug)]
pub struct ScriptedClient {
    /// Each response is handed over once, to the request whose turn it is (the cursor gives
    /// every index out once), so it is moved out of its slot rather than copied: a turn of
    /// many calls would otherwise copy every call's id, name and arguments.
    responses: Box<[Slot]>,
    cursor: AtomicUsize,
}

/// A scripted response until it is handed over.
type Slot = Mutex<Option<Result<ModelResponse, ModelError>>>;

impl ScriptedClient {
    /// A client answering with `responses` in order.
    pub fn new(responses: Vec<Result<ModelResponse, ModelError>>) -> Self {
        Self::starting_at(responses, 0)
    }

    /// A client whose first `used` responses were consumed already (e.g. by another
    /// process before a handoff).
    pub fn starting_at(responses: Vec<Result<ModelResponse, ModelError>>, used: usize) -> Self {
        Self {
            responses: responses.into_iter().map(|r| Mutex::new(Some(r))).collect(),
            cursor: AtomicUsize::new(used),
        }
    }

    /// A client answering only with successful responses.
    pub fn from_responses(responses: impl IntoIterator<Item = ModelResponse>) -> Self {
        Self::new(responses.into_iter().map(Ok).collect())
    }

    /// A client from scripted entries in the short form of
    /// [`ModelResponse::from_script_entry`]; the error names the first bad entry.
    pub fn from_script(entries: &[serde_json::Value]) -> Result<Self, String> {
        let responses = entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                ModelResponse::from_script_entry(e).map_err(|m| format!("responses[{i}]: {m}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self::new(responses))
    }

    /// The same client with its first `used` responses marked as consumed.
    pub fn skipping(self, used: usize) -> Self {
        self.cursor.store(used, Ordering::SeqCst);
        self
    }

    /// How many responses have been consumed.
    pub fn cursor(&self) -> usize {
        self.cursor.load(Ordering::SeqCst)
    }

    fn next(&self) -> Result<ModelResponse, ModelError> {
        let i = self.cursor.fetch_add(1, Ordering::SeqCst);
        let taken = self
            .responses
            .get(i)
            .and_then(|slot| slot.lock().unwrap_or_else(|p| p.into_inner()).take());
        match taken {
            Some(r) => r,
            None => Err(ModelError::new(format!(
                "Scripted client has no response left ({} scripted)",
                self.responses.len()
            ))),
        }
    }
}

#[async_trait]
impl ModelClient for ScriptedClient {
    async fn generate(
        &self,
        _request: &ModelRequest<'_>,
        _cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        self.next()
    }

    async fn stream(
        &self,
        _request: &ModelRequest<'_>,
        _cancel: &CancellationToken,
        deltas: &dyn DeltaSink,
    ) -> Result<ModelResponse, ModelError> {
        let response = self.next()?;
        if let Some(reasoning) = &response.message.reasoning {
            deltas.reasoning_delta(reasoning);
        }
        // Word-sized deltas, as a real model would stream them.
        for piece in response.message.content.split_inclusive(' ') {
            deltas.text_delta(piece);
        }
        // Each call's arguments in pieces ending at `,` or `:`, as a model writes them.
        for call in &response.message.tool_calls {
            deltas.tool_input_start(&call.id, &call.name);
            for piece in call.arguments.split_inclusive([',', ':']) {
                deltas.tool_input_delta(&call.id, piece);
            }
        }
        Ok(response)
    }
}

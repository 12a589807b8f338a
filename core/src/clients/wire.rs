//! The one engine both HTTP model clients run on. A client says what differs — its
//! endpoint, its request body, how it reads a JSON reply and an event stream — by
//! implementing [`WireFormat`]; sending, cancellation, key redaction, replaying a plain
//! JSON answer to a streamed run, and the `ModelClient` methods live here once.

use std::future::Future;

use reqwest::header::HeaderMap;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::http::{self, HttpSettings, Reply, SseReader};
use crate::controls::ToolChoice;
use crate::model::{DeltaSink, ModelFailure, ModelRequest, ModelResponse, RetryHint};

/// What distinguishes one HTTP wire format (Responses, chat completions) from another.
pub(crate) trait WireFormat: Send + Sync {
    /// The endpoint under the base URL (`responses`, `chat/completions`).
    const PATH: &'static str;
    /// Headers sent with every request; a header set on the client replaces one of these.
    const HEADERS: &'static [(&'static str, &'static str)] = &[];

    /// The client's settings (base URL, key, timeout, extra headers).
    fn settings(&self) -> &HttpSettings;

    /// Why the request cannot be sent at all (e.g. a required key is missing); such a
    /// failure is never retried.
    fn precheck(&self) -> Option<String> {
        None
    }

    /// The JSON body for `request`; `stream` asks for an event stream.
    fn body(&self, request: &ModelRequest<'_>, stream: bool) -> Value;

    /// Parses a JSON reply; the error says why the body is malformed.
    fn parse(body: &Value, headers: &HeaderMap) -> Result<ModelResponse, String>;

    /// Reads an event stream to its final response, passing deltas on as they arrive.
    fn read_stream(
        reader: SseReader,
        deltas: &dyn DeltaSink,
    ) -> impl Future<Output = Result<ModelResponse, ModelFailure>> + Send + '_;
}

/// Writes the turn's controls that both wire formats send alike, in this order:
/// `tool_choice` (a named tool in the format's own shape, `named_tool`),
/// `parallel_tool_calls`, `temperature`, the output-token limit under the format's key
/// (`max_tokens_key`) and `top_p`; an unset control is left out.
pub(crate) fn insert_controls(
    body: &mut Map<String, Value>,
    request: &ModelRequest<'_>,
    named_tool: impl FnOnce(&str) -> Value,
    max_tokens_key: &str,
) {
    if let Some(choice) = &request.tool_choice {
        let choice = match choice {
            ToolChoice::Tool(name) => named_tool(name),
            other => other.to_value(),
        };
        body.insert("tool_choice".into(), choice);
    }
    if let Some(parallel) = request.parallel_tool_calls {
        body.insert("parallel_tool_calls".into(), Value::Bool(parallel));
    }
    if let Some(t) = request.temperature {
        body.insert("temperature".into(), Value::from(t));
    }
    if let Some(n) = request.max_output_tokens {
        body.insert(max_tokens_key.into(), Value::from(n));
    }
    if let Some(p) = request.top_p {
        body.insert("top_p".into(), Value::from(p));
    }
}

/// One attempt of a model request through `client`'s wire format: streamed when `deltas`
/// is given, cancelled with `cancel`, the API key redacted from any failure.
pub(crate) async fn call<W: WireFormat>(
    client: &W,
    request: &ModelRequest<'_>,
    cancel: &CancellationToken,
    deltas: Option<&dyn DeltaSink>,
) -> Result<ModelResponse, ModelFailure> {
    let settings = client.settings();
    if let Some(reason) = client.precheck() {
        return Err(ModelFailure {
            error: crate::model::ModelError::new(reason),
            retry: RetryHint::NEVER,
        });
    }
    let body = client.body(request, deltas.is_some());
    http::cancellable(cancel, async {
        let reply = http::post(settings, W::PATH, &body, deltas.is_some(), W::HEADERS).await?;
        match reply {
            Reply::Json(value, headers) => {
                http::json_response(&value, &headers, deltas, W::parse).map_err(http::malformed)
            }
            Reply::Events(reader) => W::read_stream(*reader, http::sink_or_none(deltas)).await,
        }
    })
    .await
    .map_err(|f| settings.redact_failure(f))
}

/// `Default` (the client for its default base URL), a redacting `Debug`, and
/// `ModelClient` (every method one [`call`]) for an HTTP client implementing
/// [`WireFormat`] with fields `settings` and `model`.
macro_rules! wire_client_impls {
    ($client:ident) => {
        impl Default for $client {
            fn default() -> Self {
                Self::new()
            }
        }

        impl std::fmt::Debug for $client {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($client))
                    .field("settings", &self.settings)
                    .field("model", &self.model)
                    .finish()
            }
        }

        #[async_trait::async_trait]
        impl $crate::model::ModelClient for $client {
            async fn generate(
                &self,
                request: &$crate::model::ModelRequest<'_>,
                cancel: &tokio_util::sync::CancellationToken,
            ) -> Result<$crate::model::ModelResponse, $crate::model::ModelError> {
                super::wire::call(self, request, cancel, None)
                    .await
                    .map_err(|f| f.error)
            }

            async fn stream(
                &self,
                request: &$crate::model::ModelRequest<'_>,
                cancel: &tokio_util::sync::CancellationToken,
                deltas: &dyn $crate::model::DeltaSink,
            ) -> Result<$crate::model::ModelResponse, $crate::model::ModelError> {
                super::wire::call(self, request, cancel, Some(deltas))
                    .await
                    .map_err(|f| f.error)
            }

            async fn attempt(
                &self,
                request: &$crate::model::ModelRequest<'_>,
                cancel: &tokio_util::sync::CancellationToken,
                deltas: Option<&dyn $crate::model::DeltaSink>,
            ) -> Result<$crate::model::ModelResponse, $crate::model::ModelFailure> {
                super::wire::call(self, request, cancel, deltas).await
            }
        }
    };
}
pub(crate) use wire_client_impls;

//! Host model clients that stream (docs/behaviour.md §8): the events a host client's `stream(request)`
//! yields, and the bridge that hands them to the run live while the host's stream runs.
//!
//! A binding calls the host's `stream`, gives the host's drain loop a [`HostStreamSender`]
//! and awaits [`HostStreamReceiver::run`]: each event the host yields is checked and
//! passed to the run's [`DeltaSink`] in order, at once (so `response.output_text.delta`,
//! `response.reasoning.delta` and `response.item` events appear while the host is still
//! streaming), and the last `response` event is the attempt's response.
//!
//! Event shapes (keys camelCase, as every binding hands them over):
//! `{type: "text-delta", delta}`, `{type: "reasoning-delta", delta}`, `{type:
//! "tool-input-start", toolCallId, toolName}`, `{type: "tool-input-delta", toolCallId,
//! delta}` (docs/behaviour.md §16), `{type: "item", item}` and `{type: "response",
//! response}`; the product's spellings `response.output_text.delta`,
//! `response.reasoning.delta`, `tool.input_started`, `tool.input_delta`, `response.item`
//! and `response.completed` (with `response`) are accepted as well.

use std::future::Future;

use serde_json::Value;
use tokio::sync::mpsc;

use crate::model::{DeltaSink, ModelError, ModelResponse};
use crate::state::Item;

/// One event a host client's stream yields.
#[derive(Clone, Debug, PartialEq)]
pub enum HostStreamEvent {
    /// A piece of the answer's text.
    TextDelta(String),
    /// A piece of the reasoning text.
    ReasoningDelta(String),
    /// The model began writing a call's arguments (`tool.input_started`).
    ToolInputStart {
        /// Call id.
        tool_call_id: String,
        /// Tool id.
        tool_name: String,
    },
    /// A fragment of a call's arguments text (`tool.input_delta`).
    ToolInputDelta {
        /// Call id.
        tool_call_id: String,
        /// The fragment.
        delta: String,
    },
    /// An output item (`message`, `reasoning`, `tool_call`, …).
    Item(Item),
    /// The final response (the last one wins).
    Response(ModelResponse),
}

impl HostStreamEvent {
    /// Reads one yielded event; the error names what is wrong with it.
    pub fn from_value(event: &Value) -> Result<Self, String> {
        let kind = event.get("type").and_then(Value::as_str).ok_or_else(|| {
            format!("a model stream event must be an object with a string \"type\", got {event}")
        })?;
        let field = |name: &str| {
            event
                .get(name)
                .filter(|v| !v.is_null())
                .ok_or_else(|| format!("model stream event \"{kind}\" has no \"{name}\""))
        };
        let delta = || {
            field("delta")?
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("model stream event \"{kind}\": delta must be a string"))
        };
        let text = |name: &str| {
            field(name)?
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("model stream event \"{kind}\": {name} must be a string"))
        };
        match kind {
            "text-delta" | "response.output_text.delta" => Ok(Self::TextDelta(delta()?)),
            "tool-input-start" | "tool.input_started" => Ok(Self::ToolInputStart {
                tool_call_id: text("toolCallId")?,
                tool_name: text("toolName")?,
            }),
            "tool-input-delta" | "tool.input_delta" => Ok(Self::ToolInputDelta {
                tool_call_id: text("toolCallId")?,
                delta: delta()?,
            }),
            "reasoning-delta" | "response.reasoning.delta" => Ok(Self::ReasoningDelta(delta()?)),
            "item" | "response.item" => serde_json::from_value(field("item")?.clone())
                .map(Self::Item)
                .map_err(|e| format!("model stream event \"{kind}\": invalid item: {e}")),
            "response" | "response.completed" => {
                match ModelResponse::from_script_entry(field("response")?) {
                    Ok(Ok(response)) => Ok(Self::Response(response)),
                    Ok(Err(failure)) => Err(failure.message),
                    Err(e) => Err(format!("model stream event \"{kind}\": {e}")),
                }
            }
            other => Err(format!(
                "unknown model stream event type \"{other}\" (expected text-delta, \
                 reasoning-delta, tool-input-start, tool-input-delta, item or response)"
            )),
        }
    }
}

/// A new bridge for one streamed attempt of a host client.
pub fn host_stream() -> (HostStreamSender, HostStreamReceiver) {
    let (tx, rx) = mpsc::unbounded_channel();
    (HostStreamSender(tx), HostStreamReceiver(rx))
}

/// Where the host's drain loop puts the events it reads (cheap to clone, usable from any
/// thread, never blocks).
#[derive(Clone, Debug)]
pub struct HostStreamSender(mpsc::UnboundedSender<HostStreamEvent>);

impl HostStreamSender {
    /// Checks one event and passes it on. `Err` names what is wrong with the event, or
    /// says the attempt is over (then the host should stop reading its stream).
    pub fn send(&self, event: &Value) -> Result<(), String> {
        let event = HostStreamEvent::from_value(event)?;
        self.0
            .send(event)
            .map_err(|_| "the model request is over (cancelled or timed out)".to_owned())
    }

    /// Whether the attempt is over (the host may stop reading its stream).
    pub fn is_closed(&self) -> bool {
        self.0.is_closed()
    }
}

/// The run's end of the bridge.
#[derive(Debug)]
pub struct HostStreamReceiver(mpsc::UnboundedReceiver<HostStreamEvent>);

impl HostStreamReceiver {
    /// Awaits `host` (the host's drain of its stream) while passing each event to `deltas`
    /// in the order it was sent. The response is the last `response` event; a stream that
    /// ends without one, or a host that fails, fails the attempt (deltas already passed
    /// on stay in the history).
    pub async fn run<F>(
        mut self,
        host: F,
        deltas: &dyn DeltaSink,
    ) -> Result<ModelResponse, ModelError>
    where
        F: Future<Output = Result<(), ModelError>>,
    {
        let mut response = None;
        let mut apply = |event: HostStreamEvent| match event {
            HostStreamEvent::TextDelta(d) => deltas.text_delta(&d),
            HostStreamEvent::ReasoningDelta(d) => deltas.reasoning_delta(&d),
            HostStreamEvent::ToolInputStart {
                tool_call_id,
                tool_name,
            } => deltas.tool_input_start(&tool_call_id, &tool_name),
            HostStreamEvent::ToolInputDelta {
                tool_call_id,
                delta,
            } => deltas.tool_input_delta(&tool_call_id, &delta),
            HostStreamEvent::Item(item) => deltas.item(&item),
            HostStreamEvent::Response(r) => response = Some(r),
        };
        tokio::pin!(host);
        let outcome = loop {
            tokio::select! {
                biased;
                Some(event) = self.0.recv() => apply(event),
                outcome = &mut host => break outcome,
            }
        };
        // Everything sent before the host finished is queued by now.
        while let Ok(event) = self.0.try_recv() {
            apply(event);
        }
        self.0.close();
        outcome?;
        response.ok_or_else(|| {
            ModelError::new(
                "the model client's stream ended without a final {\"type\": \"response\", \
                 \"response\": ...} event",
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>);

    impl DeltaSink for Recorder {
        fn text_delta(&self, delta: &str) {
            self.0.lock().unwrap().push(format!("text:{delta}"));
        }
        fn reasoning_delta(&self, delta: &str) {
            self.0.lock().unwrap().push(format!("reasoning:{delta}"));
        }
        fn tool_input_start(&self, id: &str, name: &str) {
            self.0.lock().unwrap().push(format!("start:{id}:{name}"));
        }
        fn tool_input_delta(&self, id: &str, delta: &str) {
            self.0.lock().unwrap().push(format!("input:{id}:{delta}"));
        }
        fn item(&self, item: &Item) {
            self.0.lock().unwrap().push(format!(
                "item:{}",
                serde_json::to_value(item).unwrap()["type"]
            ));
        }
    }

    #[test]
    fn reads_both_spellings_and_names_bad_events() {
        assert_eq!(
            HostStreamEvent::from_value(&json!({"type": "text-delta", "delta": "a"})),
            Ok(HostStreamEvent::TextDelta("a".into()))
        );
        assert_eq!(
            HostStreamEvent::from_value(&json!({"type": "response.reasoning.delta", "delta": "r"})),
            Ok(HostStreamEvent::ReasoningDelta("r".into()))
        );
        assert!(matches!(
            HostStreamEvent::from_value(
                &json!({"type": "item", "item": {"type": "tool_call", "toolCallId": "c", "name": "t", "input": {}}})
            ),
            Ok(HostStreamEvent::Item(Item::ToolCall { .. }))
        ));
        assert!(matches!(
            HostStreamEvent::from_value(&json!({"type": "response", "response": {"text": "hi"}})),
            Ok(HostStreamEvent::Response(r)) if r.message.content == "hi"
        ));
        assert_eq!(
            HostStreamEvent::from_value(
                &json!({"type": "tool-input-start", "toolCallId": "c1", "toolName": "add"})
            ),
            Ok(HostStreamEvent::ToolInputStart {
                tool_call_id: "c1".into(),
                tool_name: "add".into()
            })
        );
        assert_eq!(
            HostStreamEvent::from_value(
                &json!({"type": "tool.input_delta", "toolCallId": "c1", "delta": "{\"a\""})
            ),
            Ok(HostStreamEvent::ToolInputDelta {
                tool_call_id: "c1".into(),
                delta: "{\"a\"".into()
            })
        );
        let err =
            HostStreamEvent::from_value(&json!({"type": "tool-input-start", "toolCallId": "c1"}))
                .unwrap_err();
        assert!(err.contains("has no \"toolName\""), "{err}");
        let err = HostStreamEvent::from_value(
            &json!({"type": "tool-input-delta", "toolCallId": 3, "delta": "x"}),
        )
        .unwrap_err();
        assert!(err.contains("toolCallId must be a string"), "{err}");
        let err = HostStreamEvent::from_value(&json!({"type": "text"})).unwrap_err();
        assert!(
            err.contains("unknown model stream event type \"text\""),
            "{err}"
        );
        let err =
            HostStreamEvent::from_value(&json!({"type": "text-delta", "delta": 3})).unwrap_err();
        assert!(err.contains("delta must be a string"), "{err}");
        let err = HostStreamEvent::from_value(&json!("x")).unwrap_err();
        assert!(err.contains("must be an object"), "{err}");
    }

    #[tokio::test]
    async fn passes_events_on_in_order_while_the_host_runs() {
        let (tx, rx) = host_stream();
        let sink = Recorder::default();
        let host = async move {
            tx.send(&json!({"type": "reasoning-delta", "delta": "r"}))
                .unwrap();
            tokio::task::yield_now().await;
            tx.send(&json!({"type": "text-delta", "delta": "He"}))
                .unwrap();
            tx.send(&json!({"type": "text-delta", "delta": "llo"}))
                .unwrap();
            tx.send(&json!({"type": "tool-input-start", "toolCallId": "c1", "toolName": "add"}))
                .unwrap();
            tx.send(&json!({"type": "tool-input-delta", "toolCallId": "c1", "delta": "{}"}))
                .unwrap();
            tx.send(&json!({"type": "item", "item": {"type": "message", "role": "assistant", "content": "Hello"}}))
                .unwrap();
            tx.send(&json!({"type": "response", "response": {"text": "Hello"}}))
                .unwrap();
            Ok(())
        };
        let response = rx.run(host, &sink).await.unwrap();
        assert_eq!(response.message.content, "Hello");
        assert_eq!(
            *sink.0.lock().unwrap(),
            [
                "reasoning:r",
                "text:He",
                "text:llo",
                "start:c1:add",
                "input:c1:{}",
                "item:\"message\""
            ]
        );
    }

    #[tokio::test]
    async fn a_stream_without_a_response_or_a_failing_host_fails_the_attempt() {
        let sink = Recorder::default();
        let (tx, rx) = host_stream();
        let err = rx
            .run(
                async move {
                    tx.send(&json!({"type": "text-delta", "delta": "x"}))
                        .unwrap();
                    Ok(())
                },
                &sink,
            )
            .await
            .unwrap_err();
        assert!(err.message.contains("without a final"), "{}", err.message);
        let (tx, rx) = host_stream();
        let keep = tx.clone();
        let err = rx
            .run(
                async move {
                    tx.send(&json!({"type": "text-delta", "delta": "y"}))
                        .unwrap();
                    Err(ModelError::new("connection reset"))
                },
                &sink,
            )
            .await
            .unwrap_err();
        assert_eq!(err.message, "connection reset");
        assert_eq!(*sink.0.lock().unwrap(), ["text:x", "text:y"]);
        assert!(keep.is_closed(), "the attempt is over for the host");
        assert!(keep
            .send(&json!({"type": "text-delta", "delta": "z"}))
            .is_err());
    }
}

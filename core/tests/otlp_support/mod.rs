//! A real OTLP/HTTP receiver on 127.0.0.1 for the tracing tests: accepts
//! `POST /v1/traces` (protobuf), decodes with `opentelemetry-proto` and keeps the spans.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;

/// A received span with its resource's `service.name`.
#[derive(Clone, Debug)]
pub struct Received {
    pub span: Span,
    pub service: String,
    /// Every request header of the export that carried it (lower-case names).
    pub headers: HashMap<String, String>,
}

impl Received {
    pub fn name(&self) -> &str {
        &self.span.name
    }
    pub fn trace_id(&self) -> String {
        hex(&self.span.trace_id)
    }
    pub fn span_id(&self) -> String {
        hex(&self.span.span_id)
    }
    pub fn parent_id(&self) -> String {
        hex(&self.span.parent_span_id)
    }
    /// An attribute as text (strings as they are, others in their debug form).
    pub fn attr(&self, key: &str) -> Option<String> {
        self.span
            .attributes
            .iter()
            .find(|kv| kv.key == key)
            .and_then(|kv| kv.value.as_ref()?.value.clone())
            .map(|v| value_text(&v))
    }
    pub fn int(&self, key: &str) -> Option<i64> {
        self.span
            .attributes
            .iter()
            .find(|kv| kv.key == key)
            .and_then(|kv| match kv.value.as_ref()?.value.as_ref()? {
                Any::IntValue(i) => Some(*i),
                _ => None,
            })
    }
    /// Every attribute's text, for "never recorded" checks.
    pub fn all_text(&self) -> String {
        let mut out = format!("{} {:?}", self.span.name, self.span.status);
        for kv in &self.span.attributes {
            if let Some(v) = kv.value.as_ref().and_then(|v| v.value.clone()) {
                out.push_str(&format!(" {}={}", kv.key, value_text(&v)));
            }
        }
        out
    }
    pub fn links(&self) -> Vec<(String, String)> {
        self.span
            .links
            .iter()
            .map(|l| (hex(&l.trace_id), hex(&l.span_id)))
            .collect()
    }
}

fn value_text(v: &Any) -> String {
    match v {
        Any::StringValue(s) => s.clone(),
        Any::BoolValue(b) => b.to_string(),
        Any::IntValue(i) => i.to_string(),
        Any::DoubleValue(d) => d.to_string(),
        Any::ArrayValue(a) => a
            .values
            .iter()
            .filter_map(|v| v.value.as_ref().map(value_text))
            .collect::<Vec<_>>()
            .join(","),
        other => format!("{other:?}"),
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The receiver: its URL and what it got.
#[derive(Clone)]
pub struct Receiver {
    pub base: String,
    spans: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    /// Starts listening on a free port of 127.0.0.1 (a thread per connection).
    pub fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let spans = Arc::new(Mutex::new(Vec::new()));
        let store = spans.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let store = store.clone();
                std::thread::spawn(move || {
                    let _ = serve(stream, &store);
                });
            }
        });
        Receiver { base, spans }
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<Received> {
        self.spans.lock().unwrap().clone()
    }

    /// The spans of one trace, waiting up to 10 s until `count` of them arrived.
    pub fn trace(&self, trace_id: &str, count: usize) -> Vec<Received> {
        let start = Instant::now();
        loop {
            let found: Vec<Received> = self
                .spans()
                .into_iter()
                .filter(|s| s.trace_id() == trace_id)
                .collect();
            if found.len() >= count || start.elapsed() > Duration::from_secs(10) {
                return found;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn serve(stream: std::net::TcpStream, store: &Mutex<Vec<Received>>) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let path_ok = line.starts_with("POST /v1/traces ");
        let mut headers = HashMap::new();
        loop {
            let mut h = String::new();
            reader.read_line(&mut h)?;
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
            }
        }
        let len: usize = headers
            .get("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; len];
        reader.read_exact(&mut body)?;
        let decoded = ExportTraceServiceRequest::decode(body.as_slice());
        let ok = path_ok
            && headers.get("content-type").map(String::as_str) == Some("application/x-protobuf");
        match decoded {
            Ok(req) if ok => {
                let mut out = store.lock().unwrap();
                for rs in req.resource_spans {
                    let service = rs
                        .resource
                        .as_ref()
                        .and_then(|r| r.attributes.iter().find(|kv| kv.key == "service.name"))
                        .and_then(|kv| kv.value.as_ref()?.value.clone())
                        .map(|v| value_text(&v))
                        .unwrap_or_default();
                    for ss in rs.scope_spans {
                        for span in ss.spans {
                            out.push(Received {
                                span,
                                service: service.clone(),
                                headers: headers.clone(),
                            });
                        }
                    }
                }
                drop(out);
                writer.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n",
                )?;
            }
            _ => writer.write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")?,
        }
    }
}

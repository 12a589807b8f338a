//! Property test: a hostile MCP client of a served tool set (docs/behaviour.md §19) over the
//! stdio framing. Whatever lines it writes (bytes that are not JSON, JSON that is not
//! JSON-RPC, requests with ids, methods and parameters of every odd kind, cancellations of
//! requests that do not exist, answers to questions never asked, batches, a second
//! `initialize`) and however it answers the server's own questions (elicitation), the
//! server never panics, writes only JSON-RPC lines and keeps serving: a valid call made
//! afterwards is answered (a client that never completed the handshake may instead have
//! its connection ended); it never hangs. Over Streamable
//! HTTP, raw requests of every odd shape (methods, paths, versions, headers, lengths, chunks,
//! bodies) each get an HTTP answer that is not a server error, and the listener goes on
//! serving a well-behaved client. `PROPTEST_CASES` raises the count (`make fuzz-core`).

mod hostile_support;

use std::sync::OnceLock;
use std::time::Duration;

use hostile_support::{config, json_value, panics};
use phaseo_agent::mcp_server::{
    serve_mcp, serve_mcp_on, McpHttpServeOptions, McpServeOptions, McpServeTransport, McpToolServer,
};
use phaseo_agent::{json, Tool, ToolError, ToolExecutionConfig, Value};
use proptest::prelude::*;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

fn tools() -> Vec<Tool> {
    let add = Tool::new(
        "add",
        "Adds two numbers",
        json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
               "required": ["a", "b"]}),
        |input, _rt| {
            let sum = input["a"].as_f64().unwrap_or(0.0) + input["b"].as_f64().unwrap_or(0.0);
            Ok(json!(sum))
        },
    );
    let slow = Tool::new_async(
        "slow",
        "Waits a moment",
        json!({"type": "object"}),
        |_, rt| async move {
            tokio::select! {
                _ = rt.cancelled() => Err(ToolError::new("cancelled")),
                _ = tokio::time::sleep(Duration::from_millis(30)) => Ok(json!("done")),
            }
        },
    );
    let steps = Tool::new_async(
        "steps",
        "Reports progress",
        json!({"type": "object"}),
        |input, rt| async move {
            rt.emit_progress(input.clone());
            rt.emit_progress(json!({"progress": f64::MAX, "total": -1}));
            Ok(input)
        },
    );
    let delete = Tool::new("delete", "Deletes", json!({"type": "object"}), |_, _| {
        Ok(json!("deleted"))
    })
    .require_approval();
    vec![add, slow, steps, delete]
}

/// Any JSON value of a few levels, odd numbers and strings included.
fn value() -> impl Strategy<Value = Value> + Clone {
    json_value(4, vec![json!("\u{0}"), Value::from("x".repeat(70_000))])
}

/// An id of any JSON kind.
fn id() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0u64..50).prop_map(Value::from),
        Just(json!(-1)),
        Just(json!(1.5)),
        Just(json!(u64::MAX)),
        Just(json!("7")),
        Just(json!("")),
        Just(Value::Null),
        Just(json!(true)),
        Just(json!({"id": 1})),
        Just(json!([1])),
    ]
}

const METHODS: &[&str] = &[
    "initialize",
    "notifications/initialized",
    "tools/list",
    "tools/call",
    "ping",
    "resources/list",
    "prompts/get",
    "logging/setLevel",
    "completion/complete",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/roots/list_changed",
    "nope/unknown",
    "",
];

const TOOL_NAMES: &[&str] = &[
    "add", "slow", "steps", "delete", "", "ADD", "add\u{0}", "missing",
];

/// One line a hostile client writes.
fn line() -> impl Strategy<Value = Vec<u8>> {
    let json_line = |v: Value| serde_json::to_vec(&v).unwrap();
    prop_oneof![
        // Bytes that are not JSON (a newline ends the line, so none inside).
        prop::collection::vec(any::<u8>().prop_filter("no newline", |b| *b != b'\n'), 0..64),
        Just(b"{".to_vec()),
        Just(Vec::new()),
        (1usize..20_000).prop_map(|n| "[".repeat(n).into_bytes()),
        Just(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{}".to_vec()),
        Just(b"{\"jsonrpc\":\"2.0\",\"id\":1e999,\"method\":\"ping\"}".to_vec()),
        Just(b"\xff\xfe{\"jsonrpc\":\"2.0\"}".to_vec()),
        value().prop_map(json_line),
        // A request or notification of any method, id and parameters.
        (prop::sample::select(METHODS), prop::option::of(id()), value(), any::<bool>()).prop_map(
            move |(method, id, params, rpc)| {
                let mut m = json!({"jsonrpc": if rpc { "2.0" } else { "1.0" }, "method": method, "params": params});
                if let Some(id) = id {
                    m["id"] = id;
                }
                json_line(m)
            }
        ),
        // A tool call with odd names, arguments and progress tokens.
        (id(), prop::sample::select(TOOL_NAMES), value(), prop::option::of(value())).prop_map(
            move |(id, name, arguments, token)| {
                let mut params = json!({"name": name, "arguments": arguments});
                if let Some(token) = token {
                    params["_meta"] = json!({"progressToken": token});
                }
                json_line(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
            }
        ),
        // A well-formed call of a real tool, to have calls in flight.
        ((0u64..50), prop::sample::select(&["add", "slow", "steps", "delete"][..])).prop_map(
            move |(id, name)| json_line(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": name, "arguments": {"a": 1, "b": 2}, "_meta": {"progressToken": id}}}))
        ),
        // Cancellations of requests in flight, unknown, or of odd ids.
        (id(), value()).prop_map(move |(request, reason)| json_line(json!({"jsonrpc": "2.0",
            "method": "notifications/cancelled", "params": {"requestId": request, "reason": reason}}))),
        // Answers to requests the server never made.
        (id(), value(), any::<bool>()).prop_map(move |(id, v, ok)| {
            let key = if ok { "result" } else { "error" };
            json_line(json!({"jsonrpc": "2.0", "id": id, key: v}))
        }),
        // A batch.
        prop::collection::vec(value(), 0..4).prop_map(move |items| json_line(Value::from(items))),
    ]
}

/// How the client answers the server's question (an elicitation).
fn answer() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        Just(Some(
            json!({"action": "accept", "content": {"approve": true}})
        )),
        Just(Some(
            json!({"action": "accept", "content": {"approve": "yes"}})
        )),
        Just(Some(json!({"action": "accept"}))),
        Just(Some(json!({"action": "decline"}))),
        Just(Some(json!({"action": "explode"}))),
        value().prop_map(Some),
        Just(None),
    ]
}

/// What one case found: `Ok(true)` the final call was answered, `Ok(false)` the server
/// ended a connection that never completed its handshake, `Err` a defect.
async fn hostile_session(
    handshake: bool,
    elicitation: bool,
    lines: Vec<Vec<u8>>,
    answers: Vec<Option<Value>>,
) -> Result<bool, String> {
    let (client, server) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server);
    let execution = ToolExecutionConfig::default().tool_concurrency(4);
    let served = serve_mcp_on(
        tools(),
        McpServeOptions::new("tools").tool_execution(execution),
        server_read,
        server_write,
    )
    .map_err(|e| format!("serve: {e}"))?;
    let (read, mut write) = tokio::io::split(client);
    let mut incoming = BufReader::new(read).lines();

    // Everything the client writes, and its answers to the server's questions, go out from
    // a task of their own: the server may write more than a pipe holds before it reads on.
    let (to_server, mut outbox) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
    let writer = tokio::spawn(async move {
        while let Some(mut line) = outbox.recv().await {
            line.push(b'\n');
            if write.write_all(&line).await.is_err() {
                break;
            }
        }
        write
    });
    let send = |v: Value| {
        let _ = to_server.send(serde_json::to_vec(&v).unwrap());
    };
    if handshake {
        let capabilities = if elicitation {
            json!({"elicitation": {}})
        } else {
            json!({})
        };
        send(
            json!({"jsonrpc": "2.0", "id": "hs", "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": capabilities,
            "clientInfo": {"name": "hostile", "version": "1"}}}),
        );
        send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }
    for line in lines {
        let _ = to_server.send(line);
    }
    let check = json!({"jsonrpc": "2.0", "id": "final-check", "method": "tools/call",
                       "params": {"name": "add", "arguments": {"a": 1, "b": 2}}});
    send(check);

    let mut answers = answers.into_iter().cycle();
    let outcome = loop {
        let next = tokio::time::timeout(Duration::from_secs(60), incoming.next_line()).await;
        let line = match next {
            Err(_) => break Err("no answer to the final call and no end within 60 s".to_owned()),
            Ok(Err(e)) => break Err(format!("reading the server: {e}")),
            // Only a session that never began may end: an initialized one goes on serving.
            Ok(Ok(None)) if handshake => {
                break Err("the server ended an initialized session".to_owned())
            }
            Ok(Ok(None)) => break Ok(false),
            Ok(Ok(Some(line))) => line,
        };
        let message: Value = match serde_json::from_str(&line) {
            Ok(m) => m,
            Err(e) => {
                break Err(format!(
                    "the server wrote a line that is not JSON ({e}): {line:.200}"
                ))
            }
        };
        if message["jsonrpc"] != "2.0" {
            break Err(format!(
                "the server wrote a message that is not JSON-RPC 2.0: {line:.200}"
            ));
        }
        if message["id"] == "final-check" && message.get("method").is_none() {
            if !handshake {
                // Without a handshake the server may answer or refuse: either is an answer.
                break Ok(true);
            }
            let text = message["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default();
            break if text == "3" || text == "3.0" {
                Ok(true)
            } else {
                Err(format!("the final call was answered with {line:.300}"))
            };
        }
        // A question of the server's: answered as this case says (or not at all).
        if message.get("method").is_some() && message.get("id").is_some() {
            if let Some(Some(result)) = answers.next() {
                send(json!({"jsonrpc": "2.0", "id": message["id"], "result": result}));
            }
        }
    };
    drop(to_server);
    drop(incoming);
    let _ = writer.await;
    // Closing the client ends the server, whatever it was doing.
    if tokio::time::timeout(Duration::from_secs(60), served.wait())
        .await
        .is_err()
    {
        return Err("the server did not stop within 60 s of its client closing".to_owned());
    }
    outcome
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn a_hostile_client_cannot_break_a_served_tool_set(
        handshake in prop::bool::weighted(0.85),
        elicitation in any::<bool>(),
        lines in prop::collection::vec(line(), 0..12),
        answers in prop::collection::vec(answer(), 1..4),
    ) {
        let before = panics();
        let outcome = phaseo_agent::exec::block_on(hostile_session(handshake, elicitation, lines, answers));
        prop_assert_eq!(panics(), before, "a panic in the process");
        prop_assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
    }
}

/// The same server keeps serving a well-behaved session after garbage that does not end it:
/// the property above would pass if every hostile line ended the connection.
#[test]
fn garbage_lines_do_not_end_an_initialized_session() {
    let before = panics();
    let garbage = vec![
        b"not json".to_vec(),
        br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"missing","arguments":{}}}"#.to_vec(),
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}"#.to_vec(),
        br#"{"jsonrpc":"2.0","id":6,"method":"nope/unknown","params":{}}"#.to_vec(),
        br#"{"jsonrpc":"2.0","id":777,"result":{}}"#.to_vec(),
    ];
    let outcome = phaseo_agent::exec::block_on(hostile_session(true, false, garbage, vec![None]));
    assert_eq!(outcome, Ok(true));
    assert_eq!(panics(), before);
}

/// The listener every HTTP case talks to: one server for the whole run, as an application
/// keeps one, so that what a case leaves behind meets the next.
fn http_server() -> &'static (McpToolServer, String) {
    static SERVER: OnceLock<(McpToolServer, String)> = OnceLock::new();
    SERVER.get_or_init(|| {
        phaseo_agent::exec::block_on(async {
            let options = McpServeOptions::new("tools")
                .tool_execution(ToolExecutionConfig::default().tool_concurrency(4))
                .transport(McpServeTransport::Http(McpHttpServeOptions::default()));
            let server = serve_mcp(tools(), options)
                .await
                .expect("the HTTP server starts");
            let url = server.url().expect("an HTTP server has a URL").to_owned();
            (server, url)
        })
    })
}

/// One raw request: its request line, headers and body, written as they are.
fn raw_request() -> impl Strategy<Value = Vec<u8>> {
    let method = prop::sample::select(
        &[
            "POST", "GET", "DELETE", "PUT", "OPTIONS", "HEAD", "P\0ST", "",
        ][..],
    );
    let path = prop_oneof![
        Just("/mcp".to_owned()),
        Just("/mcp?x=1".to_owned()),
        Just("/".to_owned()),
        Just("*".to_owned()),
        Just("/mcp/../mcp".to_owned()),
        Just("/%ff%00".to_owned()),
        (1usize..20_000).prop_map(|n| format!("/{}", "a".repeat(n))),
    ];
    let version = prop::sample::select(
        &[
            "HTTP/1.1",
            "HTTP/1.0",
            "HTTP/2.0",
            "HTTP/9",
            "",
            "HTTP/1.1 extra",
        ][..],
    );
    let header = prop_oneof![
        Just("Host: 127.0.0.1".to_owned()),
        Just("Host: evil.example".to_owned()),
        Just("Host: ".to_owned()),
        Just("Origin: https://evil.example".to_owned()),
        Just("Origin: http://localhost:3000".to_owned()),
        Just("Origin: \u{7f}".to_owned()),
        Just("Content-Type: application/json".to_owned()),
        Just("Content-Type: text/plain".to_owned()),
        Just("Accept: application/json, text/event-stream".to_owned()),
        Just("Accept: text/event-stream".to_owned()),
        Just("Accept: */*".to_owned()),
        Just("Mcp-Session-Id: 00000000-0000-0000-0000-000000000000".to_owned()),
        Just("Mcp-Session-Id: \u{1}".to_owned()),
        Just("Mcp-Protocol-Version: 1999-01-01".to_owned()),
        Just("Authorization: Bearer x".to_owned()),
        Just("Last-Event-ID: 0/abc".to_owned()),
        Just("Content-Length: -1".to_owned()),
        Just("Content-Length: 99999999999999999999".to_owned()),
        Just("Content-Length: 5".to_owned()),
        Just("Transfer-Encoding: chunked".to_owned()),
        Just("Expect: 100-continue".to_owned()),
        Just("Connection: upgrade".to_owned()),
        Just("Upgrade: h2c".to_owned()),
        Just(format!("X-Long: {}", "h".repeat(70_000))),
        Just("no colon here".to_owned()),
        Just(" leading: space".to_owned()),
    ];
    let body = prop_oneof![
        line(),
        Just(b"0\r\n\r\n".to_vec()),
        Just(b"zz\r\nxx\r\n".to_vec()),
        Just(b"ffffffffffffffffff\r\n".to_vec()),
        Just(
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "1"}}}))
            .unwrap()
        ),
    ];
    let anything = (
        method,
        path,
        version,
        prop::collection::vec(header.clone(), 0..7),
        body,
        any::<bool>(),
    );
    // Mostly a well-formed POST whose body and few extra headers are hostile: what reaches
    // the MCP layer.
    let well_formed = (
        prop::collection::vec(header, 0..2),
        line(),
        prop::bool::weighted(0.7),
    )
        .prop_map(|(mut extra, body, in_session)| {
            let mut headers = vec![
                "Host: 127.0.0.1".to_owned(),
                "Content-Type: application/json".to_owned(),
                "Accept: application/json, text/event-stream".to_owned(),
            ];
            if in_session {
                headers.push("Mcp-Session-Id: {SESSION}".to_owned());
            }
            headers.append(&mut extra);
            ("POST", "/mcp".to_owned(), "HTTP/1.1", headers, body, true)
        });
    prop_oneof![1 => anything, 3 => well_formed].prop_map(
        |(method, path, version, headers, body, with_length)| {
            let mut out = format!("{method} {path} {version}\r\n").into_bytes();
            for h in headers {
                out.extend_from_slice(h.as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            if with_length {
                out.extend_from_slice(format!("Content-Length: {}\r\n", body.len()).as_bytes());
            }
            out.extend_from_slice(b"\r\n");
            out.extend_from_slice(&body);
            out
        },
    )
}

/// Sends one raw request on a connection of its own and half-closes it: the server must
/// answer with an HTTP/1 status line within 30 s (an answer that streams, a call's events,
/// need not end).
async fn raw_exchange(address: &str, request: &[u8]) -> Result<(), String> {
    let mut stream = tokio::net::TcpStream::connect(address)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    // The server may answer (and close) before it read everything: a failed write is fine.
    let _ = stream.write_all(request).await;
    let _ = stream.shutdown().await;
    let mut head = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(30), async {
        let mut buffer = [0u8; 1024];
        while !head.windows(2).any(|w| w == b"\r\n") {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => head.extend_from_slice(&buffer[..n]),
            }
        }
    })
    .await;
    let shown = String::from_utf8_lossy(&head[..head.len().min(200)]).into_owned();
    if read.is_err() {
        return Err(format!("no status line within 30 s (read {shown:?})"));
    }
    if !head.starts_with(b"HTTP/1.") {
        return Err(format!("no HTTP/1 status line: {shown:?}"));
    }
    // Whatever a client sends is its own fault: never a server error.
    if head.get(9) == Some(&b'5') {
        return Err(format!("a server error for a client's request: {shown:?}"));
    }
    Ok(())
}

/// A request of a well-behaved client on a connection of its own; its answer's head and
/// body, read to the end (JSON or a finished event stream).
async fn exchange(
    address: &str,
    session: Option<&str>,
    body: &Value,
) -> Result<(String, String), String> {
    let body = body.to_string();
    let session = session.map_or(String::new(), |s| format!("Mcp-Session-Id: {s}\r\n"));
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{session}Connection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(address)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| format!("writing {body:.100}: {e}"))?;
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut answer))
        .await
        .map_err(|_| format!("{body:.100} was not answered within 30 s"))?
        .map_err(|e| format!("reading the answer to {body:.100}: {e}"))?;
    let answer = String::from_utf8_lossy(&answer).into_owned();
    match answer.split_once("\r\n\r\n") {
        Some((head, rest)) => Ok((head.to_owned(), rest.to_owned())),
        None => Err(format!("{body:.100} was answered {answer:.300}")),
    }
}

/// A well-behaved client's session: `initialize` is answered with 200 and a session id,
/// `notifications/initialized` with 202.
async fn open_session(address: &str) -> Result<String, String> {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "check", "version": "1"}}});
    let (head, body) = exchange(address, None, &init).await?;
    if !head.starts_with("HTTP/1.1 200") || !body.contains("\"serverInfo\"") {
        return Err(format!(
            "a valid initialize was answered {head:.200} {body:.200}"
        ));
    }
    let session = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .ok_or_else(|| format!("no session id in {head:.300}"))?;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (head, _) = exchange(address, Some(&session), &initialized).await?;
    if !head.starts_with("HTTP/1.1 202") {
        return Err(format!(
            "notifications/initialized was answered {head:.200}"
        ));
    }
    Ok(session)
}

/// A valid call in `session` is answered with its result.
async fn call_answered(address: &str, session: &str) -> Result<(), String> {
    let call = json!({"jsonrpc": "2.0", "id": "check", "method": "tools/call",
                      "params": {"name": "add", "arguments": {"a": 1, "b": 2}}});
    let (head, body) = exchange(address, Some(session), &call).await?;
    let answered = body.contains(r#""text":"3""#) || body.contains(r#""text":"3.0""#);
    if !head.starts_with("HTTP/1.1 200") || !answered {
        return Err(format!("a valid call was answered {head:.200} {body:.300}"));
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn hostile_http_requests_cannot_break_the_listener(requests in prop::collection::vec(raw_request(), 1..6)) {
        let before = panics();
        let (_, url) = http_server();
        let address = url.trim_start_matches("http://").split('/').next().unwrap().to_owned();
        let outcome = phaseo_agent::exec::block_on(async {
            let session = open_session(&address).await?;
            for request in &requests {
                // `{SESSION}` stands for the session this case opened.
                raw_exchange(&address, &with_session(request, &session)).await?;
            }
            // The session goes on serving, and a new client is served.
            call_answered(&address, &session).await?;
            call_answered(&address, &open_session(&address).await?).await
        });
        prop_assert_eq!(panics(), before, "a panic in the process");
        prop_assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
    }
}

/// `request` with its `{SESSION}` (in a header) replaced by `session`.
fn with_session(request: &[u8], session: &str) -> Vec<u8> {
    let marker = b"{SESSION}";
    match request.windows(marker.len()).position(|w| w == marker) {
        None => request.to_vec(),
        Some(at) => [
            &request[..at],
            session.as_bytes(),
            &request[at + marker.len()..],
        ]
        .concat(),
    }
}

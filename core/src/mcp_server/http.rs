//! The Streamable HTTP listener, guarded as the MCP specification asks: loopback by
//! default, `Host` and `Origin` checked (DNS rebinding), an optional bearer token
//! (docs/behaviour.md §19).

use std::convert::Infallible;
use std::sync::Arc;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::handler::ToolServerHandler;
use super::options::McpHttpServeOptions;
use crate::error::{AgentError, ErrorCode};

type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// The largest request body read (the MCP SDK's own limit).
const MAX_BODY: usize = 4 * 1024 * 1024;

/// A bound listener and what it serves.
pub(crate) struct HttpServer {
    listener: TcpListener,
    service: StreamableHttpService<ToolServerHandler, LocalSessionManager>,
    path: Arc<str>,
    auth: Option<Arc<str>>,
    /// `http://host:port/path`.
    pub(crate) url: String,
}

/// Binds the listener (an unusable address is `definition_invalid`, naming it).
pub(crate) async fn bind(
    options: &McpHttpServeOptions,
    handler: ToolServerHandler,
    cancel: CancellationToken,
) -> Result<HttpServer, AgentError> {
    if !options.path.starts_with('/') {
        return Err(AgentError::new(
            ErrorCode::DefinitionInvalid,
            format!("transport.path must start with '/': {:?}", options.path),
        ));
    }
    let listener = TcpListener::bind((options.host.as_str(), options.port))
        .await
        .map_err(|e| {
            AgentError::new(
                ErrorCode::DefinitionInvalid,
                format!("Cannot listen on {}:{}: {e}", options.host, options.port),
            )
        })?;
    let port = listener
        .local_addr()
        .map_err(|e| AgentError::new(ErrorCode::DefinitionInvalid, e.to_string()))?
        .port();
    let mut config = StreamableHttpServerConfig::default();
    config.cancellation_token = cancel;
    config.legacy_session_mode = true;
    let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    hosts.push(options.host.clone());
    hosts.extend(options.allowed_hosts.iter().cloned());
    config = config.with_allowed_hosts(hosts);
    let origins: Vec<String> = if options.allowed_origins.is_empty() {
        vec![
            "http://localhost:*".into(),
            "http://127.0.0.1:*".into(),
            "http://[::1]:*".into(),
        ]
    } else {
        options.allowed_origins.clone()
    };
    config = config
        .with_allowed_origins(origins)
        .enforce_origin_validation();
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let shown_host = match options.host.contains(':') {
        true => format!("[{}]", options.host),
        false => options.host.clone(),
    };
    Ok(HttpServer {
        listener,
        service,
        path: Arc::from(options.path.as_str()),
        auth: options.auth_token.as_deref().map(Arc::from),
        url: format!("http://{shown_host}:{port}{}", options.path),
    })
}

impl HttpServer {
    /// Accepts connections until `cancel`; open connections end with it.
    pub(crate) async fn run(self, cancel: CancellationToken) {
        let HttpServer {
            listener,
            service,
            path,
            auth,
            ..
        } = self;
        loop {
            let stream = tokio::select! {
                biased;
                _ = cancel.cancelled() => return,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(_) => continue,
                },
            };
            let service = service.clone();
            let path = path.clone();
            let auth = auth.clone();
            let cancel = cancel.clone();
            tokio::spawn(async move {
                let serve = hyper::service::service_fn(move |request: Request<Incoming>| {
                    let service = service.clone();
                    let path = path.clone();
                    let auth = auth.clone();
                    async move {
                        Ok::<_, Infallible>(answer(&service, &path, auth.as_deref(), request).await)
                    }
                });
                // A client may shut down its sending side once its request is written
                // (`nc -N`, a socket's `shutdown(SHUT_WR)`): it still gets its answer.
                let connection = hyper::server::conn::http1::Builder::new()
                    .half_close(true)
                    .serve_connection(TokioIo::new(stream), serve);
                tokio::select! {
                    _ = cancel.cancelled() => {}
                    _ = connection => {}
                }
            });
        }
    }
}

async fn answer(
    service: &StreamableHttpService<ToolServerHandler, LocalSessionManager>,
    path: &str,
    auth: Option<&str>,
    request: Request<Incoming>,
) -> Response<Body> {
    if request.uri().path() != path {
        return plain(StatusCode::NOT_FOUND, "Not found");
    }
    if let Some(token) = auth {
        if !bearer_matches(&request, token) {
            let mut r = plain(StatusCode::UNAUTHORIZED, "Unauthorized");
            r.headers_mut().insert(
                hyper::header::WWW_AUTHENTICATE,
                hyper::header::HeaderValue::from_static("Bearer"),
            );
            return r;
        }
    }
    // The body is read here, so that one the client cannot deliver (a broken chunked
    // encoding, a connection that ends early) is its error, 400, not the server's.
    let (parts, body) = request.into_parts();
    match http_body_util::Limited::new(body, MAX_BODY).collect().await {
        Ok(body) => {
            service
                .handle(Request::from_parts(parts, Full::new(body.to_bytes())))
                .await
        }
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            plain(StatusCode::PAYLOAD_TOO_LARGE, "Payload too large")
        }
        Err(_) => plain(
            StatusCode::BAD_REQUEST,
            "Bad request: the body could not be read",
        ),
    }
}

/// `Authorization: Bearer <token>`, compared in constant time.
fn bearer_matches(request: &Request<Incoming>, token: &str) -> bool {
    let Some(given) = request
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    else {
        return false;
    };
    let (a, b) = (given.as_bytes(), token.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *r.status_mut() = status;
    r
}

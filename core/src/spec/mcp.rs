//! An `mcpServers` entry (docs/behaviour.md §11): `{"name", "command", "args"?, "env"?,
//! "cwd"?}` (stdio) or `{"name", "url", "headers"?, "bearer"?}` (Streamable HTTP), with
//! `allowTools`, `denyTools`, `filter` (a function), `toolPrefix`, `requireApproval`
//! (`true`, `false`, `"destructive"` or a function), `timeoutMs`, `toolTimeoutsMs`,
//! `onError`, `cacheTtlMs`, `optional`, `deferLoading` and `onElicitation` (a function).
//!
//! The product's spellings `bearerToken` (for `bearer`) and `toolTimeouts` (for
//! `toolTimeoutsMs`) are read too. Every check of a declaration is here, each refusal
//! naming the server and the key, so that a binding only respells keys
//! ([`super::respell_keys`]).

use serde_json::Map;

use super::forms::Callback;
use super::{invalid, McpCallbacks};
use crate::mcp::{McpApproval, McpServer};
use crate::{AgentError, OnError, Value};

/// The keys of a stdio server's transport.
const STDIO_KEYS: [&str; 5] = ["name", "command", "args", "env", "cwd"];
/// The keys of a Streamable HTTP server's transport.
const HTTP_KEYS: [&str; 4] = ["name", "url", "headers", "bearer"];
/// The keys of a server's options.
const OPTION_KEYS: [&str; 12] = [
    "allowTools",
    "denyTools",
    "filter",
    "toolPrefix",
    "requireApproval",
    "timeoutMs",
    "toolTimeoutsMs",
    "onError",
    "cacheTtlMs",
    "optional",
    "onElicitation",
    "deferLoading",
];

/// The product's spellings of keys: `(alias, key)`.
const ALIASES: [(&str, &str); 2] = [
    ("bearerToken", "bearer"),
    ("toolTimeouts", "toolTimeoutsMs"),
];

/// One declaration being read: its fields, taken one by one.
struct Fields {
    name: String,
    obj: Map<String, Value>,
}

impl Fields {
    fn bad(&self, message: impl std::fmt::Display) -> AgentError {
        invalid(format!("Invalid MCP server '{}': {message}", self.name))
    }

    /// The value of `key`; absent and null are none.
    fn take(&mut self, key: &str) -> Option<Value> {
        self.obj.remove(key).filter(|v| !v.is_null())
    }

    fn string(&mut self, key: &str) -> Result<Option<String>, AgentError> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.bad(format!("{key} must be a string, got {other}"))),
        }
    }

    fn strings(&mut self, key: &str) -> Result<Option<Vec<String>>, AgentError> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::Array(items)) if items.iter().all(Value::is_string) => Ok(Some(
                items
                    .into_iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect(),
            )),
            Some(other) => Err(self.bad(format!("{key} must be an array of strings, got {other}"))),
        }
    }

    fn string_map(&mut self, key: &str) -> Result<Vec<(String, String)>, AgentError> {
        match self.take(key) {
            None => Ok(Vec::new()),
            Some(Value::Object(map)) if map.values().all(Value::is_string) => Ok(map
                .into_iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k, v.to_owned())))
                .collect()),
            Some(other) => {
                Err(self.bad(format!("{key} must be an object of strings, got {other}")))
            }
        }
    }

    fn millis_of(&self, what: &str, v: &Value) -> Result<u64, AgentError> {
        match v.as_f64() {
            Some(ms) if ms.is_finite() && ms > 0.0 => Ok(ms.ceil() as u64),
            _ => Err(self.bad(format!(
                "{what} must be a positive number of milliseconds, got {v}"
            ))),
        }
    }

    fn millis(&mut self, key: &str) -> Result<Option<u64>, AgentError> {
        self.take(key).map(|v| self.millis_of(key, &v)).transpose()
    }

    fn function(&mut self, key: &str) -> Result<Option<Callback>, AgentError> {
        self.take(key)
            .map(|v| {
                serde_json::from_value::<Callback>(v)
                    .map_err(|_| self.bad(format!("{key} must be a function")))
            })
            .transpose()
    }
}

/// Reads one `mcpServers` entry; its host functions are made by `host` (any
/// [`super::HostCallbacks`], or a binding's [`McpCallbacks`]).
pub fn mcp_server<H: McpCallbacks + ?Sized>(
    host: &H,
    value: Value,
) -> Result<McpServer, AgentError> {
    let Value::Object(mut obj) = value else {
        return Err(invalid(format!(
            "Invalid MCP server: a server must be an object, got {value}"
        )));
    };
    let name = match obj.remove("name") {
        Some(Value::String(name)) => name,
        _ => return Err(invalid("Invalid MCP server: name must be a string")),
    };
    for (alias, key) in ALIASES {
        if let Some(v) = obj.remove(alias) {
            if obj.get(key).is_some_and(|v| !v.is_null()) {
                return Err(invalid(format!(
                    "Invalid MCP server '{name}': give {key} or {alias}, not both"
                )));
            }
            obj.insert(key.to_owned(), v);
        }
    }
    let mut f = Fields { name, obj };
    let stdio = f.obj.get("command").is_some_and(|c| !c.is_null());
    if stdio && f.obj.get("url").is_some_and(|u| !u.is_null()) {
        return Err(f.bad("give either a command (stdio) or a url (Streamable HTTP)"));
    }
    let (transport, kind) = if stdio {
        (&STDIO_KEYS[..], "a stdio")
    } else {
        (&HTTP_KEYS[..], "an HTTP")
    };
    let mut unknown: Vec<&String> = f
        .obj
        .keys()
        .filter(|k| !transport.contains(&k.as_str()) && !OPTION_KEYS.contains(&k.as_str()))
        .collect();
    unknown.sort();
    if let Some(key) = unknown.first() {
        let known: Vec<String> = transport
            .iter()
            .chain(&OPTION_KEYS)
            .map(|k| match ALIASES.iter().find(|(_, key)| key == k) {
                Some((alias, _)) => format!("{k}/{alias}"),
                None => (*k).to_owned(),
            })
            .collect();
        return Err(f.bad(format!(
            "unknown field '{key}' of {kind} server (known: {})",
            known.join(", ")
        )));
    }
    let mut server = if stdio {
        let command = f.string("command")?.unwrap_or_default();
        let mut s = McpServer::stdio(f.name.clone(), command);
        if let Some(args) = f.strings("args")? {
            s = s.args(args);
        }
        for (k, v) in f.string_map("env")? {
            s = s.env(k, v);
        }
        if let Some(dir) = f.string("cwd")? {
            s = s.cwd(dir);
        }
        s
    } else {
        let Some(url) = f.string("url")? else {
            return Err(f.bad("give either a command (stdio) or a url (Streamable HTTP)"));
        };
        let mut s = McpServer::http(f.name.clone(), url);
        for (k, v) in f.string_map("headers")? {
            s = s.header(k, v);
        }
        if let Some(token) = f.string("bearer")? {
            s = s.bearer(token);
        }
        s
    };
    if let Some(names) = f.strings("allowTools")? {
        server = server.allow_tools(names);
    }
    if let Some(names) = f.strings("denyTools")? {
        server = server.deny_tools(names);
    }
    if let Some(cb) = f.function("filter")? {
        let filter = host
            .mcp_filter(cb.id)
            .ok_or_else(|| f.bad("a filter function is not supported here"))?;
        server = server.filter(filter);
    }
    if let Some(prefix) = f.string("toolPrefix")? {
        server = server.tool_prefix(prefix);
    }
    match f.take("requireApproval") {
        None | Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) => server = server.require_approval(McpApproval::Always),
        Some(Value::String(s)) => {
            server = server.require_approval(McpApproval::parse(&s).map_err(|m| f.bad(m))?)
        }
        Some(other) => match serde_json::from_value::<Callback>(other.clone()) {
            Ok(cb) => {
                server = server.require_approval(McpApproval::Predicate(host.mcp_approval(cb.id)))
            }
            Err(_) => {
                return Err(f.bad(format!(
                "requireApproval must be true, false, a predicate or \"destructive\", got {other}"
            )))
            }
        },
    }
    if let Some(t) = f.millis("timeoutMs")? {
        server = server.timeout_ms(t);
    }
    match f.take("toolTimeoutsMs") {
        None => {}
        Some(Value::Object(map)) => {
            for (tool, t) in map {
                let t = f.millis_of(&format!("toolTimeoutsMs[{tool:?}]"), &t)?;
                server = server.tool_timeout_ms(tool, t);
            }
        }
        Some(other) => {
            return Err(f.bad(format!(
                "toolTimeoutsMs must be an object {{toolName: milliseconds}}, got {other}"
            )))
        }
    }
    if let Some(p) = f.string("onError")? {
        server = server.on_error(OnError::parse(&p).map_err(|e| f.bad(e))?);
    }
    if let Some(t) = f.millis("cacheTtlMs")? {
        server = server.cache_ttl_ms(t);
    }
    match f.take("optional") {
        None => {}
        Some(Value::Bool(o)) => server = server.optional(o),
        Some(other) => return Err(f.bad(format!("optional must be true or false, got {other}"))),
    }
    match f.take("deferLoading") {
        None => {}
        Some(Value::Bool(d)) => server = server.defer_loading(d),
        Some(other) => {
            return Err(f.bad(format!("deferLoading must be true or false, got {other}")))
        }
    }
    if let Some(cb) = f.function("onElicitation")? {
        let handler = host
            .mcp_elicitation(cb.id)
            .ok_or_else(|| f.bad("an onElicitation function is not supported here"))?;
        server = server.on_elicitation(handler);
    }
    server.check()?;
    Ok(server)
}

//! Checks a step's `expect` block against what the step produced.

use std::collections::BTreeMap;

use phaseo_agent::{json, EventData, Value};

use crate::compare::{json_eq, show};
use crate::StepOutcome;

fn diff(key: &str, expected: &Value, actual: &Value) -> Result<(), String> {
    if json_eq(expected, actual) {
        Ok(())
    } else {
        Err(format!(
            "{key}: expected {}, got {}",
            show(expected),
            show(actual)
        ))
    }
}

fn tool_message_matches(expected: &Value, actual: &Value) -> bool {
    let null = Value::Null;
    if !json_eq(
        expected.get("toolCallId").unwrap_or(&null),
        actual.get("toolCallId").unwrap_or(&null),
    ) {
        return false;
    }
    let expected_error = expected
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if expected_error
        != actual
            .get("isError")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    {
        return false;
    }
    let content = actual.get("content").and_then(Value::as_str).unwrap_or("");
    if let Some(c) = expected.get("content") {
        let parsed = serde_json::from_str::<Value>(content)
            .unwrap_or_else(|_| Value::String(content.to_owned()));
        if !json_eq(c, &parsed) {
            return false;
        }
    }
    if let Some(c) = expected.get("contentContains").and_then(Value::as_str) {
        if !content.contains(c) {
            return false;
        }
    }
    true
}

fn check_request(i: usize, expected: &Value, actual: &Value) -> Result<(), String> {
    for (key, want) in expected.as_object().into_iter().flatten() {
        let got = actual.get(key).unwrap_or(&Value::Null);
        match key.as_str() {
            "toolMessages" => {
                let want = want.as_array().cloned().unwrap_or_default();
                let got_list = got.as_array().cloned().unwrap_or_default();
                if want.len() != got_list.len()
                    || !want
                        .iter()
                        .zip(&got_list)
                        .all(|(w, g)| tool_message_matches(w, g))
                {
                    return Err(format!(
                        "modelRequests[{i}].toolMessages: expected {}, got {}",
                        show(&Value::Array(want)),
                        show(got)
                    ));
                }
            }
            "tools" | "context" | "temperature" | "model" | "instructions" | "lastUserMessage"
            | "maxOutputTokens" | "topP" | "toolChoice" | "parallelToolCalls" => {
                diff(&format!("modelRequests[{i}].{key}"), want, got)?
            }
            "toolSpecs" => check_tool_specs(i, want, got)?,
            "toolCalls" => check_tool_calls(i, want, got)?,
            other => return Err(format!("modelRequests: unsupported key {other:?}")),
        }
    }
    Ok(())
}

/// Arguments compared as JSON: a text holding JSON stands for that JSON.
fn as_json(v: &Value) -> Value {
    v.as_str()
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or_else(|| v.clone())
}

fn check_tool_calls(i: usize, want: &Value, got: &Value) -> Result<(), String> {
    let want_list = want.as_array().cloned().unwrap_or_default();
    let got_list = got.as_array().cloned().unwrap_or_default();
    let same = want_list.len() == got_list.len()
        && want_list.iter().zip(&got_list).all(|(w, g)| {
            w.get("id") == g.get("id")
                && w.get("name") == g.get("name")
                && json_eq(
                    &as_json(w.get("arguments").unwrap_or(&Value::Null)),
                    &as_json(g.get("arguments").unwrap_or(&Value::Null)),
                )
        });
    if same {
        return Ok(());
    }
    Err(format!(
        "modelRequests[{i}].toolCalls: expected {}, got {}",
        show(want),
        show(got)
    ))
}

const EXPECT_KEYS: &[&str] = &[
    "status",
    "output",
    "stopReason",
    "pauseKind",
    "context",
    "error",
    "pending",
    "executed",
    "cancelled",
    "maxConcurrent",
    "modelRequests",
    "events",
    "toolEvents",
    "preliminaryResults",
    "usage",
    "minWallMs",
    "maxWallMs",
];
const REQUEST_KEYS: &[&str] = &[
    "toolMessages",
    "tools",
    "context",
    "temperature",
    "model",
    "instructions",
    "lastUserMessage",
    "maxOutputTokens",
    "topP",
    "toolChoice",
    "parallelToolCalls",
    "toolSpecs",
    "toolCalls",
];
const USAGE_KEYS: &[&str] = &[
    "inputTokens",
    "outputTokens",
    "cachedTokens",
    "totalTokens",
    "cost",
];

fn keys_in(v: &Value, allowed: &[&str], what: &str) -> Result<(), String> {
    match v {
        Value::Null => Ok(()),
        Value::Object(m) => match m.keys().find(|k| !allowed.contains(&k.as_str())) {
            Some(k) => Err(format!("{what}: unsupported key {k:?}")),
            None => Ok(()),
        },
        other => Err(format!("{what}: expected an object, got {other}")),
    }
}

/// Refuses an `expect` block with a key this runner does not know (checked before the
/// case runs).
pub fn check_keys_of(expect: &Value) -> Result<(), String> {
    keys_in(expect, EXPECT_KEYS, "expect")?;
    keys_in(
        expect.get("error").unwrap_or(&Value::Null),
        &["code", "messageContains"],
        "expect.error",
    )?;
    keys_in(
        expect.get("usage").unwrap_or(&Value::Null),
        USAGE_KEYS,
        "expect.usage",
    )?;
    for r in expect
        .get("modelRequests")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        keys_in(r, REQUEST_KEYS, "expect.modelRequests")?;
        for m in r
            .get("toolMessages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            keys_in(
                m,
                &["toolCallId", "content", "contentContains", "isError"],
                "expect.modelRequests.toolMessages",
            )?;
        }
        for t in r
            .get("toolSpecs")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            keys_in(
                t,
                &["id", "strict", "inputExamples"],
                "expect.modelRequests.toolSpecs",
            )?;
        }
        for c in r
            .get("toolCalls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            keys_in(
                c,
                &["id", "name", "arguments"],
                "expect.modelRequests.toolCalls",
            )?;
        }
    }
    Ok(())
}

/// `toolSpecs`: the same tools in order, each compared on the keys the case gives.
fn check_tool_specs(i: usize, want: &Value, got: &Value) -> Result<(), String> {
    let want_list = want.as_array().cloned().unwrap_or_default();
    let got_list = got.as_array().cloned().unwrap_or_default();
    let same = want_list.len() == got_list.len()
        && want_list.iter().zip(&got_list).all(|(w, g)| {
            w.as_object().into_iter().flatten().all(|(k, v)| {
                if !["id", "strict", "inputExamples"].contains(&k.as_str()) {
                    return false;
                }
                json_eq(v, g.get(k).unwrap_or(&Value::Null))
            })
        });
    if same {
        Ok(())
    } else {
        Err(format!(
            "modelRequests[{i}].toolSpecs: expected {}, got {}",
            show(want),
            show(got)
        ))
    }
}

/// Checks a case's `expectDefinitionError` against the definition's outcome.
pub fn check_definition_error(
    want: &Value,
    refused: Option<&phaseo_agent::AgentError>,
) -> Result<(), String> {
    let Some(e) = refused else {
        return Err(format!(
            "expectDefinitionError: expected {}, but the definition was accepted",
            show(want)
        ));
    };
    if let Some(c) = want.get("code") {
        diff(
            "expectDefinitionError.code",
            c,
            &Value::from(e.code().as_str()),
        )
        .map_err(|d| format!("{d} (message: {})", e.message()))?;
    }
    if let Some(m) = want.get("messageContains").and_then(Value::as_str) {
        if !e.message().contains(m) {
            return Err(format!(
                "expectDefinitionError.message: expected to contain {m:?}, got {:?}",
                e.message()
            ));
        }
    }
    Ok(())
}

/// Checks every key of `expect`; the first difference is the error.
pub fn check(expect: &Value, o: &StepOutcome) -> Result<(), String> {
    let state = o.state.as_ref();
    let run = state
        .map(|s| s.to_value()["run"].clone())
        .unwrap_or(Value::Null);
    for (key, want) in expect.as_object().into_iter().flatten() {
        match key.as_str() {
            "status" => diff(key, want, &run["status"])?,
            "output" => diff(key, want, &run["result"])?,
            "stopReason" => diff(key, want, &run["stopReason"])?,
            "pauseKind" => diff(key, want, &run["pause"]["kind"])?,
            "context" => diff(key, want, &run["context"])?,
            "error" => {
                let (code, message) = match (&o.error, &run["error"]) {
                    (Some(e), _) => (Value::from(e.code().as_str()), e.message().to_owned()),
                    (None, Value::Object(e)) => (
                        e.get("code").cloned().unwrap_or(Value::Null),
                        e.get("message")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned(),
                    ),
                    _ => return Err(format!("error: expected {}, got no error", show(want))),
                };
                if let Some(c) = want.get("code") {
                    diff("error.code", c, &code)
                        .map_err(|e| format!("{e} (message: {message})"))?;
                }
                if let Some(m) = want.get("messageContains").and_then(Value::as_str) {
                    if !message.contains(m) {
                        return Err(format!(
                            "error.message: expected to contain {m:?}, got {message:?}"
                        ));
                    }
                }
            }
            "pending" => {
                let got: Vec<Value> = run["pause"]["pendingToolCalls"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|p| json!({"toolCallId": p["call"]["id"], "toolName": p["call"]["name"], "kind": p["kind"]}))
                    .collect();
                diff(key, want, &Value::Array(got))?
            }
            "executed" => diff(key, want, &json!(o.executed))?,
            "cancelled" => diff(key, want, &json!(o.cancelled))?,
            "maxConcurrent" => diff(key, want, &json!(o.max_concurrent))?,
            "modelRequests" => {
                let want = want.as_array().cloned().unwrap_or_default();
                if want.len() != o.requests.len() {
                    return Err(format!(
                        "modelRequests: expected {} requests, got {}",
                        want.len(),
                        o.requests.len()
                    ));
                }
                for (i, (w, g)) in want.iter().zip(&o.requests).enumerate() {
                    check_request(i, w, g)?;
                }
            }
            "events" => {
                let got: Vec<&str> = o
                    .events
                    .iter()
                    .map(|e| e.type_name())
                    .filter(|t| !t.starts_with("response."))
                    .collect();
                diff(key, want, &json!(got))?
            }
            "toolEvents" => {
                let mut got: BTreeMap<String, Vec<&str>> = BTreeMap::new();
                for e in &o.events {
                    let id = match &e.data {
                        EventData::ToolStarted { tool_call_id, .. }
                        | EventData::ToolPreliminary { tool_call_id, .. }
                        | EventData::ToolCompleted { tool_call_id, .. }
                        | EventData::ToolFailed { tool_call_id, .. }
                        | EventData::ToolRetrying { tool_call_id, .. } => tool_call_id,
                        _ => continue,
                    };
                    got.entry(id.clone()).or_default().push(e.type_name());
                }
                for (id, types) in want.as_object().into_iter().flatten() {
                    let g = got.get(id).cloned().unwrap_or_default();
                    diff(&format!("toolEvents.{id}"), types, &json!(g))?;
                }
            }
            "preliminaryResults" => {
                let mut got: BTreeMap<String, Vec<Value>> = BTreeMap::new();
                for e in &o.events {
                    if let EventData::ToolPreliminary {
                        tool_call_id,
                        result,
                        ..
                    } = &e.data
                    {
                        got.entry(tool_call_id.clone())
                            .or_default()
                            .push(result.clone());
                    }
                }
                for (id, values) in want.as_object().into_iter().flatten() {
                    let g = got.get(id).cloned().unwrap_or_default();
                    diff(
                        &format!("preliminaryResults.{id}"),
                        values,
                        &Value::Array(g),
                    )?;
                }
            }
            "usage" => {
                for (k, v) in want.as_object().into_iter().flatten() {
                    diff(&format!("usage.{k}"), v, &run["usage"][k])?;
                }
            }
            "minWallMs" => {
                let floor = want.as_f64().ok_or("minWallMs: expected a number")? as u128;
                if o.wall_ms < floor {
                    return Err(format!(
                        "minWallMs: took {} ms, at least {floor} ms expected",
                        o.wall_ms
                    ));
                }
            }
            "maxWallMs" => {
                let limit = want.as_f64().ok_or("maxWallMs: expected a number")? as u128;
                if o.wall_ms > limit {
                    return Err(format!(
                        "maxWallMs: took {} ms, limit {limit} ms",
                        o.wall_ms
                    ));
                }
            }
            other => return Err(format!("expect: unsupported key {other:?}")),
        }
    }
    if let Some(e) = &o.error {
        if !expect.as_object().is_some_and(|m| m.contains_key("error")) {
            return Err(format!("unexpected error {}: {}", e.code(), e.message()));
        }
    }
    Ok(())
}

//! What a store writes and reads: one row per run.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::time::iso_to_ms;
use crate::error::AgentError;
use crate::json::to_canonical_string;
use crate::options::{ContinueOptions, ToolDecision, ToolOutput};
use crate::state::{RunResult, RunStatus};

/// The columns written by a save: the canonical state JSON and the values the queries
/// index (taken from the state, never anything else).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSnapshot {
    /// The run id.
    pub run_id: String,
    /// The owning agent's id.
    pub agent_id: String,
    /// The run's status.
    pub status: RunStatus,
    /// The id of the pause while waiting for a human.
    pub pause_id: Option<String>,
    /// Creation time (ms since the epoch).
    pub created_at_ms: i64,
    /// Time of the save (ms since the epoch).
    pub updated_at_ms: i64,
    /// The canonical state JSON.
    pub state_json: String,
}

impl RunSnapshot {
    /// The snapshot of a state, saved at `now_ms`.
    pub fn of(state: &RunResult, now_ms: i64) -> Self {
        Self {
            run_id: state.run.id.clone(),
            agent_id: state.run.agent_id.clone(),
            status: state.run.status,
            pause_id: state.run.pause.as_ref().map(|p| p.id.clone()),
            created_at_ms: iso_to_ms(&state.run.created_at),
            updated_at_ms: now_ms,
            state_json: state.to_json(),
        }
    }
}

/// A stored run: its state JSON and the claim and lease columns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredRun {
    /// The run id.
    pub run_id: String,
    /// The owning agent's id.
    pub agent_id: String,
    /// The row's status: the state's, except `running` once a pause has been claimed.
    pub status: String,
    /// The pause of the stored state, if waiting.
    pub pause_id: Option<String>,
    /// The last pause claimed by a continue (kept after the run moved on).
    pub claimed_pause_id: Option<String>,
    /// The decisions of that claim, as JSON ([`StoredDecisions`]).
    pub decisions_json: Option<String>,
    /// The worker holding the run, if any.
    pub lease_owner: Option<String>,
    /// When that hold ends (ms since the epoch).
    pub lease_expires_at_ms: Option<i64>,
    /// Row version, incremented by every write (the compare-and-set token).
    pub version: i64,
    /// Creation time (ms).
    pub created_at_ms: i64,
    /// Time of the last write (ms).
    pub updated_at_ms: i64,
    /// The canonical state JSON.
    pub state_json: String,
}

impl StoredRun {
    /// The stored state, parsed. A row that does not hold a valid state is refused with
    /// `state_invalid`, naming the run.
    pub fn state(&self) -> Result<RunResult, AgentError> {
        RunResult::from_json(&self.state_json).map_err(|e| {
            AgentError::state_invalid(format!(
                "Stored state of run {} is invalid: {}",
                self.run_id,
                e.message()
            ))
        })
    }

    /// The row as the bindings hand it to applications: JSON text `{runId, agentId,
    /// status, pauseId, version, createdAtMs, updatedAtMs, leaseOwner, leaseExpiresAtMs,
    /// state}`. The state goes in as its stored canonical text, so big integers keep their
    /// digits; a row whose state is not valid is refused with `state_invalid`, naming the
    /// run.
    pub fn to_json(&self) -> Result<String, AgentError> {
        self.state()?;
        let mut head = serde_json::json!({
            "runId": self.run_id,
            "agentId": self.agent_id,
            "status": self.status,
            "pauseId": self.pause_id,
            "version": self.version,
            "createdAtMs": self.created_at_ms,
            "updatedAtMs": self.updated_at_ms,
            "leaseOwner": self.lease_owner,
            "leaseExpiresAtMs": self.lease_expires_at_ms,
        })
        .to_string();
        head.pop();
        head.push_str(",\"state\":");
        head.push_str(&self.state_json);
        head.push('}');
        Ok(head)
    }

    /// The row status, parsed (`state_invalid` for an unknown status).
    pub fn run_status(&self) -> Result<RunStatus, AgentError> {
        serde_json::from_value(Value::String(self.status.clone())).map_err(|_| {
            AgentError::state_invalid(format!(
                "Stored run {} has an unknown status {:?}",
                self.run_id, self.status
            ))
        })
    }

    /// The decisions stored by the claim, parsed.
    pub fn decisions(&self) -> Result<Option<StoredDecisions>, AgentError> {
        self.decisions_json
            .as_deref()
            .map(|text| {
                serde_json::from_str(text).map_err(|e| {
                    AgentError::state_invalid(format!(
                        "Stored decisions of run {} are invalid: {e}",
                        self.run_id
                    ))
                })
            })
            .transpose()
    }
}

/// One decision of a claim.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredDecision {
    /// The call id.
    pub tool_call_id: String,
    /// The reason given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// An approval's edited input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited_input: Option<Value>,
}

/// One supplied output of a claim.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredOutput {
    /// The call id.
    pub tool_call_id: String,
    /// The output.
    pub output: Value,
}

/// The decisions of a continue, stored with its claim so that a recovering worker applies
/// exactly them (camelCase JSON, identical from every language).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredDecisions {
    /// Approved calls.
    #[serde(default)]
    pub approvals: Vec<StoredDecision>,
    /// Rejected calls.
    #[serde(default)]
    pub rejections: Vec<StoredDecision>,
    /// Supplied outputs.
    #[serde(default)]
    pub tool_outputs: Vec<StoredOutput>,
    /// Answers in the place of approval-gated calls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub responses: Vec<StoredOutput>,
    /// Human input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub human_input: Option<String>,
    /// Replacement context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Value>,
}

impl StoredDecisions {
    /// The decisions of a continue.
    pub fn of(options: &ContinueOptions) -> Self {
        let decision = |d: &ToolDecision| StoredDecision {
            tool_call_id: d.tool_call_id.clone(),
            reason: d.reason.clone(),
            edited_input: d.edited_input.clone(),
        };
        let output = |o: &ToolOutput| StoredOutput {
            tool_call_id: o.tool_call_id.clone(),
            output: o.output.clone(),
        };
        Self {
            approvals: options.approvals.iter().map(decision).collect(),
            rejections: options.rejections.iter().map(decision).collect(),
            tool_outputs: options.tool_outputs.iter().map(output).collect(),
            responses: options.responses.iter().map(output).collect(),
            human_input: options.human_input.clone(),
            context: options.context.clone(),
        }
    }

    /// Puts the decisions into continue options.
    pub fn apply(self, mut options: ContinueOptions) -> ContinueOptions {
        let decision = |d: StoredDecision| ToolDecision {
            tool_call_id: d.tool_call_id,
            reason: d.reason,
            edited_input: d.edited_input,
        };
        let output = |o: StoredOutput| ToolOutput::new(o.tool_call_id, o.output);
        options.approvals = self.approvals.into_iter().map(decision).collect();
        options.rejections = self.rejections.into_iter().map(decision).collect();
        options.tool_outputs = self.tool_outputs.into_iter().map(output).collect();
        options.responses = self.responses.into_iter().map(output).collect();
        options.human_input = self.human_input;
        if self.context.is_some() {
            options.context = self.context;
        }
        options
    }

    /// The canonical JSON text.
    pub fn to_json(&self) -> String {
        to_canonical_string(self)
    }
}

/// A compare-and-set claim of a pause (see [`super::RunStore::claim`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PauseClaim {
    /// The run id.
    pub run_id: String,
    /// The pause being continued.
    pub pause_id: String,
    /// The row version the claimer read (ignored when inserting).
    pub expected_version: i64,
    /// The decisions, as JSON.
    pub decisions_json: String,
    /// The claiming worker.
    pub owner: String,
    /// Its lease end (ms).
    pub lease_expires_at_ms: i64,
    /// The claim time (ms).
    pub now_ms: i64,
    /// A paused state the store does not hold yet, inserted before the claim.
    pub insert: Option<RunSnapshot>,
}

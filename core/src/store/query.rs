//! Listing runs: filters and keyset pagination.

use super::row::StoredRun;
use crate::error::AgentError;
use crate::state::RunStatus;

/// Which runs to list (every filter optional), oldest update first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListQuery {
    /// Only these statuses (empty: any). The row status counts: a claimed pause is
    /// `running`.
    pub statuses: Vec<RunStatus>,
    /// Only this agent's runs.
    pub agent_id: Option<String>,
    /// Only runs updated at or after this time (ms).
    pub updated_after_ms: Option<i64>,
    /// Only runs updated before this time (ms).
    pub updated_before_ms: Option<i64>,
    /// Page size (0: the default of 100).
    pub limit: usize,
    /// Where the previous page ended ([`RunPage::next_cursor`]).
    pub cursor: Option<String>,
}

impl ListQuery {
    /// Every run waiting for a human: the approval inbox.
    pub fn waiting() -> Self {
        Self {
            statuses: vec![RunStatus::WaitingForHuman],
            ..Self::default()
        }
    }

    /// Only runs of these statuses.
    pub fn statuses(mut self, statuses: impl IntoIterator<Item = RunStatus>) -> Self {
        self.statuses = statuses.into_iter().collect();
        self
    }

    /// Only this agent's runs.
    pub fn agent_id(mut self, agent_id: impl Into<String>) -> Self {
        self.agent_id = Some(agent_id.into());
        self
    }

    /// Page size.
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }

    /// Continues after a page.
    pub fn cursor(mut self, cursor: Option<String>) -> Self {
        self.cursor = cursor;
        self
    }

    /// A query from its JSON text `{statuses?, agentId?, limit?, cursor?}` (the form of the
    /// text-based hosts: the C ABI, PHP); `None` lists every run. An unknown key or a value
    /// of the wrong type is refused with `definition_invalid`, an unknown status with
    /// `store_failed`, each naming it.
    pub fn from_json(text: Option<&str>) -> Result<Self, AgentError> {
        #[derive(serde::Deserialize, Default)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        struct Spec {
            #[serde(default)]
            statuses: Vec<String>,
            agent_id: Option<String>,
            limit: Option<usize>,
            cursor: Option<String>,
        }
        let spec: Spec = match text {
            None => Spec::default(),
            Some(text) => serde_json::from_str(text)
                .map_err(|e| AgentError::definition_invalid(format!("Invalid store query: {e}")))?,
        };
        let mut query = Self::default()
            .statuses(parse_statuses(&spec.statuses)?)
            .limit(spec.limit.unwrap_or(0))
            .cursor(spec.cursor);
        query.agent_id = spec.agent_id;
        Ok(query)
    }

    /// The page size in effect.
    pub fn page_size(&self) -> usize {
        if self.limit == 0 {
            100
        } else {
            self.limit
        }
    }

    /// The `(updated_at_ms, run_id)` the page starts after.
    pub fn after(&self) -> Result<Option<(i64, String)>, AgentError> {
        let Some(cursor) = &self.cursor else {
            return Ok(None);
        };
        let parsed = cursor
            .split_once(':')
            .and_then(|(t, id)| Some((t.parse::<i64>().ok()?, id.to_owned())));
        match parsed {
            Some(p) => Ok(Some(p)),
            None => Err(AgentError::store_failed(format!(
                "Run store: invalid list cursor {cursor:?}"
            ))),
        }
    }

    /// The status strings of the filter.
    pub(crate) fn status_strings(&self) -> Vec<&'static str> {
        self.statuses.iter().map(|s| s.as_str()).collect()
    }
}

/// One page of a listing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunPage {
    /// The runs, oldest update first (parse each with [`StoredRun::state`]).
    pub runs: Vec<StoredRun>,
    /// Pass as [`ListQuery::cursor`] for the next page; `None` on the last page.
    pub next_cursor: Option<String>,
}

impl RunPage {
    /// The page as JSON text `{runs: [row…], nextCursor}`, each row as
    /// [`StoredRun::to_json`] writes it.
    pub fn to_json(&self) -> Result<String, AgentError> {
        let rows = self
            .runs
            .iter()
            .map(StoredRun::to_json)
            .collect::<Result<Vec<_>, _>>()?;
        let cursor = serde_json::to_string(&self.next_cursor).unwrap_or_else(|_| "null".into());
        Ok(format!(
            "{{\"runs\":[{}],\"nextCursor\":{cursor}}}",
            rows.join(",")
        ))
    }

    /// A page of rows fetched with one extra row to tell whether more follow.
    pub(crate) fn from_rows(mut rows: Vec<StoredRun>, page_size: usize) -> Self {
        let more = rows.len() > page_size;
        rows.truncate(page_size);
        let next_cursor = if more {
            rows.last()
                .map(|r| format!("{}:{}", r.updated_at_ms, r.run_id))
        } else {
            None
        };
        Self {
            runs: rows,
            next_cursor,
        }
    }
}

/// The statuses named by `names` (the snake_case strings of docs/behaviour.md §3.4), for bindings that
/// take statuses as strings; an unknown name is refused with `store_failed`, naming it.
pub fn parse_statuses<S: AsRef<str>>(names: &[S]) -> Result<Vec<RunStatus>, AgentError> {
    names
        .iter()
        .map(|n| {
            RunStatus::parse(n.as_ref()).ok_or_else(|| {
                AgentError::store_failed(format!(
                    "Run store: unknown run status '{}' (expected queued, running, \
                     waiting_for_human, completed, stopped, failed or cancelled)",
                    n.as_ref()
                ))
            })
        })
        .collect()
}

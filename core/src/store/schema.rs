//! The one schema every language reads and writes, versioned and migrated forward when a
//! store is opened.
//!
//! Rows hold the canonical state JSON as text (exact bytes: `jsonb` would reorder keys),
//! the columns the queries filter on, and the claim/lease columns. Times are BIGINT
//! milliseconds since the epoch.

use crate::error::AgentError;

/// The schema version this core writes and reads.
pub const SCHEMA_VERSION: i64 = 1;

/// Migration `i` (0-based) takes a database from version `i` to `i + 1`. The statements
/// are plain SQL valid on SQLite and PostgreSQL alike.
pub(crate) const MIGRATIONS: &[&[&str]] = &[&[
    "CREATE TABLE phaseo_runs (
        run_id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        status TEXT NOT NULL,
        pause_id TEXT,
        claimed_pause_id TEXT,
        decisions TEXT,
        lease_owner TEXT,
        lease_expires_at BIGINT,
        version BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        state TEXT NOT NULL
    )",
    // The inbox, status listings and prune; then the same per agent. Every index costs a
    // page write per save, so a listing without a status filter scans instead.
    "CREATE INDEX phaseo_runs_status_updated ON phaseo_runs (status, updated_at, run_id)",
    "CREATE INDEX phaseo_runs_agent_updated ON phaseo_runs (agent_id, status, updated_at, run_id)",
]];

/// The table holding the schema version (one row).
pub(crate) const VERSION_TABLE: &str =
    "CREATE TABLE IF NOT EXISTS phaseo_schema_version (version BIGINT NOT NULL)";

/// The refusal of a database written by a newer SDK.
pub(crate) fn too_new(found: i64) -> AgentError {
    AgentError::store_failed(format!(
        "Run store failed: the database schema is version {found}, newer than this SDK \
         supports ({SCHEMA_VERSION}); upgrade the SDK"
    ))
}

/// The columns of a `SELECT` that builds a [`super::StoredRun`], in its field order.
pub(crate) const ROW_COLUMNS: &str = "run_id, agent_id, status, pause_id, claimed_pause_id, \
    decisions, lease_owner, lease_expires_at, version, created_at, updated_at, state";

/// The statement of a save: insert, or update only while `owner` holds the lease.
/// Parameters: 1 run_id, 2 agent_id, 3 status, 4 pause_id, 5 lease_owner (kept),
/// 6 lease_expires_at, 7 created_at, 8 updated_at, 9 state, 10 the saving owner.
pub(crate) const SAVE_SQL: &str = "INSERT INTO phaseo_runs (run_id, agent_id, status, \
    pause_id, lease_owner, lease_expires_at, version, created_at, updated_at, state) \
    VALUES ($1, $2, $3, $4, $5, $6, 1, $7, $8, $9) \
    ON CONFLICT (run_id) DO UPDATE SET agent_id = excluded.agent_id, \
    status = excluded.status, pause_id = excluded.pause_id, \
    lease_owner = excluded.lease_owner, lease_expires_at = excluded.lease_expires_at, \
    version = phaseo_runs.version + 1, updated_at = excluded.updated_at, \
    state = excluded.state WHERE phaseo_runs.lease_owner = $10";

/// Insert of a state a claim brings along (nothing if the run is already stored).
/// Parameters: 1 run_id, 2 agent_id, 3 status, 4 pause_id, 5 created_at, 6 updated_at,
/// 7 state.
pub(crate) const INSERT_IF_ABSENT_SQL: &str = "INSERT INTO phaseo_runs (run_id, agent_id, \
    status, pause_id, version, created_at, updated_at, state) \
    VALUES ($1, $2, $3, $4, 1, $5, $6, $7) ON CONFLICT (run_id) DO NOTHING";

/// The compare-and-set of a claim. Parameters: 1 decisions, 2 owner, 3 lease end, 4 now,
/// 5 run_id, 6 pause_id, 7 expected version (NULL: any).
pub(crate) const CLAIM_SQL: &str = "UPDATE phaseo_runs SET status = 'running', \
    claimed_pause_id = pause_id, decisions = $1, lease_owner = $2, lease_expires_at = $3, \
    version = version + 1, updated_at = $4 \
    WHERE run_id = $5 AND pause_id = $6 AND status = 'waiting_for_human' \
    AND (CAST($7 AS BIGINT) IS NULL OR version = $7)";

/// Renewal. Parameters: 1 lease end, 2 run_id, 3 owner.
pub(crate) const RENEW_SQL: &str =
    "UPDATE phaseo_runs SET lease_expires_at = $1 WHERE run_id = $2 AND lease_owner = $3";

/// Take-over of an expired lease. Parameters: 1 owner, 2 lease end, 3 run_id,
/// 4 expected version, 5 now.
pub(crate) const TAKE_OVER_SQL: &str = "UPDATE phaseo_runs SET lease_owner = $1, \
    lease_expires_at = $2, version = version + 1 \
    WHERE run_id = $3 AND version = $4 AND status = 'running' \
    AND (lease_expires_at IS NULL OR lease_expires_at < $5)";

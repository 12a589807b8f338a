//! Durable runs (docs/behaviour.md §10): the [`RunStore`] trait and its stores.
//!
//! A store keeps the canonical state JSON of each run plus the claim and lease columns
//! that make a pause continue at most once across processes. The run loop saves through
//! it at run start, every checkpoint, a pause and the end; `continue_by_id` and
//! `recover` load from it. Stores: [`InMemoryRunStore`] (tests, one process),
//! [`SqliteRunStore`] (feature `sqlite`: one file, several processes on one host),
//! [`PostgresRunStore`] (feature `postgres`: many workers on many machines), and
//! [`AccessorRunStore`] around an application's `load`/`save` (no at-most-once claim).

mod accessor;
mod lease;
mod memory;
#[cfg(feature = "postgres")]
mod postgres;
mod query;
mod row;
mod schema;
#[cfg(feature = "sqlite")]
mod sqlite;
mod time;

pub use accessor::{AccessorRunStore, StateAccessor};
pub use lease::LeaseConfig;
pub use memory::InMemoryRunStore;
#[cfg(feature = "postgres")]
pub use postgres::PostgresRunStore;
pub use query::{parse_statuses, ListQuery, RunPage};
pub use row::{PauseClaim, RunSnapshot, StoredDecisions, StoredRun};
pub use schema::SCHEMA_VERSION;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteRunStore;
pub use time::now_ms;

use async_trait::async_trait;

use crate::error::AgentError;
use crate::state::RunStatus;

/// Where runs are kept between processes (docs/behaviour.md §10).
///
/// Every method is one atomic operation of the store. Contention (another worker won a
/// compare-and-set) is reported as `Ok(false)`, never as an error; `Err` is a failure of
/// the store itself (code `store_failed`), or a row that cannot be read (`state_invalid`).
/// Times are milliseconds since the Unix epoch, from the caller's clock.
#[async_trait]
pub trait RunStore: Send + Sync {
    /// Inserts or updates the row of `snapshot.run_id`, fenced by the lease: an existing
    /// row is only updated while `owner` holds its lease. `lease_expires_at_ms = None`
    /// releases the lease (a pause or an end). `Ok(false)`: another worker holds the run.
    async fn save(
        &self,
        snapshot: &RunSnapshot,
        owner: &str,
        lease_expires_at_ms: Option<i64>,
    ) -> Result<bool, AgentError>;

    /// The row of a run, if stored.
    async fn load(&self, run_id: &str) -> Result<Option<StoredRun>, AgentError>;

    /// Claims a pause: in one atomic step, if the row still has `expected_version`, is
    /// `waiting_for_human` on `pause_id`, sets status `running`, stores the decisions and
    /// gives the lease to `owner`. `claim.insert`: a state the store does not hold yet is
    /// inserted first. `Ok(false)`: the pause was claimed (or changed) by someone else.
    async fn claim(&self, claim: &PauseClaim) -> Result<bool, AgentError>;

    /// Extends `owner`'s lease; `Ok(false)` when `owner` no longer holds it.
    async fn renew(
        &self,
        run_id: &str,
        owner: &str,
        lease_expires_at_ms: i64,
    ) -> Result<bool, AgentError>;

    /// Takes over a `running` run whose lease expired before `now_ms` (a dead worker), if
    /// the row still has `expected_version`; `Ok(false)` when it does not qualify any more.
    async fn take_over(
        &self,
        run_id: &str,
        expected_version: i64,
        owner: &str,
        lease_expires_at_ms: i64,
        now_ms: i64,
    ) -> Result<bool, AgentError>;

    /// Runs matching a query, oldest update first, one page at a time.
    async fn list(&self, query: &ListQuery) -> Result<RunPage, AgentError>;

    /// Deletes a run; `Ok(false)` when it was not stored.
    async fn delete(&self, run_id: &str) -> Result<bool, AgentError>;

    /// Deletes the runs of the given statuses last updated before `older_than_ms`;
    /// returns how many.
    async fn prune(&self, statuses: &[RunStatus], older_than_ms: i64) -> Result<u64, AgentError>;

    /// Whether `claim` is a real compare-and-set (false for a host accessor, which cannot
    /// promise at-most-once).
    fn supports_claims(&self) -> bool {
        true
    }
}

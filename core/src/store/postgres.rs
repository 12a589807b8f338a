//! The shared store: PostgreSQL through a connection pool, for many workers on many
//! machines.

use async_trait::async_trait;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::{NoTls, Row};

use super::query::{ListQuery, RunPage};
use super::row::{PauseClaim, RunSnapshot, StoredRun};
use super::schema::{
    too_new, CLAIM_SQL, INSERT_IF_ABSENT_SQL, MIGRATIONS, RENEW_SQL, ROW_COLUMNS, SAVE_SQL,
    SCHEMA_VERSION, TAKE_OVER_SQL, VERSION_TABLE,
};
use super::RunStore;
use crate::error::AgentError;
use crate::state::RunStatus;

/// The advisory lock key serializing migrations of one database ("phaseo" in ASCII).
const MIGRATION_LOCK: i64 = 0x7068_6173_656f;

/// Default pool size.
const POOL_SIZE: usize = 16;

/// A run store in a PostgreSQL database (tables created and migrated on connect).
#[derive(Clone)]
pub struct PostgresRunStore {
    pool: Pool,
}

fn failed(e: impl std::fmt::Display) -> AgentError {
    AgentError::store_failed(format!("Run store failed: {e}"))
}

/// The full text of a database error (tokio-postgres' `Display` alone says just "db error").
fn pg_failed(e: tokio_postgres::Error) -> AgentError {
    match e.as_db_error() {
        Some(db) => failed(format!("{}: {}", db.code().code(), db.message())),
        None => failed(e),
    }
}

fn read_row(r: &Row) -> Result<StoredRun, AgentError> {
    let run_id: String = r.try_get(0).map_err(pg_failed)?;
    let get = |e: tokio_postgres::Error| {
        AgentError::store_failed(format!(
            "Run store failed: the row of run {run_id} cannot be read: {e}"
        ))
    };
    Ok(StoredRun {
        agent_id: r.try_get(1).map_err(get)?,
        status: r.try_get(2).map_err(get)?,
        pause_id: r.try_get(3).map_err(get)?,
        claimed_pause_id: r.try_get(4).map_err(get)?,
        decisions_json: r.try_get(5).map_err(get)?,
        lease_owner: r.try_get(6).map_err(get)?,
        lease_expires_at_ms: r.try_get(7).map_err(get)?,
        version: r.try_get(8).map_err(get)?,
        created_at_ms: r.try_get(9).map_err(get)?,
        updated_at_ms: r.try_get(10).map_err(get)?,
        state_json: r.try_get(11).map_err(get)?,
        run_id,
    })
}

impl PostgresRunStore {
    /// Connects to `url` (`postgres://user:pass@host:port/db`), with a pool of 16
    /// connections, and migrates the schema forward under a transaction-scoped advisory
    /// lock, so concurrent connectors serialize. A database written by a newer SDK is
    /// refused with `store_failed`.
    pub async fn connect(url: &str) -> Result<Self, AgentError> {
        Self::connect_with_pool_size(url, POOL_SIZE).await
    }

    /// Like [`PostgresRunStore::connect`] with a pool of `size` connections.
    pub async fn connect_with_pool_size(url: &str, size: usize) -> Result<Self, AgentError> {
        let config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| failed(format!("invalid PostgreSQL URL: {e}")))?;
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(size.max(1))
            .build()
            .map_err(failed)?;
        let store = Self { pool };
        store.migrate().await?;
        Ok(store)
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, AgentError> {
        self.pool.get().await.map_err(|e| match e {
            deadpool_postgres::PoolError::Backend(e) => pg_failed(e),
            other => failed(other),
        })
    }

    async fn migrate(&self) -> Result<(), AgentError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_failed)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .await
            .map_err(pg_failed)?;
        tx.batch_execute(VERSION_TABLE).await.map_err(pg_failed)?;
        let found: i64 = tx
            .query_one(
                "SELECT COALESCE(MAX(version), 0)::BIGINT FROM phaseo_schema_version",
                &[],
            )
            .await
            .map_err(pg_failed)?
            .get(0);
        if found > SCHEMA_VERSION {
            return Err(too_new(found));
        }
        for step in &MIGRATIONS[found as usize..] {
            for sql in *step {
                tx.batch_execute(sql).await.map_err(pg_failed)?;
            }
        }
        if found < SCHEMA_VERSION {
            tx.batch_execute(&format!(
                "DELETE FROM phaseo_schema_version; \
                 INSERT INTO phaseo_schema_version (version) VALUES ({SCHEMA_VERSION})"
            ))
            .await
            .map_err(pg_failed)?;
        }
        tx.commit().await.map_err(pg_failed)
    }
}

#[async_trait]
impl RunStore for PostgresRunStore {
    async fn save(
        &self,
        s: &RunSnapshot,
        owner: &str,
        expires: Option<i64>,
    ) -> Result<bool, AgentError> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(SAVE_SQL).await.map_err(pg_failed)?;
        let kept = expires.map(|_| owner);
        let n = client
            .execute(
                &stmt,
                &[
                    &s.run_id,
                    &s.agent_id,
                    &s.status.as_str(),
                    &s.pause_id,
                    &kept,
                    &expires,
                    &s.created_at_ms,
                    &s.updated_at_ms,
                    &s.state_json,
                    &owner,
                ],
            )
            .await
            .map_err(pg_failed)?;
        Ok(n == 1)
    }

    async fn load(&self, run_id: &str) -> Result<Option<StoredRun>, AgentError> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(&format!(
                "SELECT {ROW_COLUMNS} FROM phaseo_runs WHERE run_id = $1"
            ))
            .await
            .map_err(pg_failed)?;
        let row = client
            .query_opt(&stmt, &[&run_id])
            .await
            .map_err(pg_failed)?;
        row.as_ref().map(read_row).transpose()
    }

    async fn claim(&self, c: &PauseClaim) -> Result<bool, AgentError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_failed)?;
        if let Some(s) = &c.insert {
            tx.execute(
                INSERT_IF_ABSENT_SQL,
                &[
                    &s.run_id,
                    &s.agent_id,
                    &s.status.as_str(),
                    &s.pause_id,
                    &s.created_at_ms,
                    &s.updated_at_ms,
                    &s.state_json,
                ],
            )
            .await
            .map_err(pg_failed)?;
        }
        let expected = c.insert.is_none().then_some(c.expected_version);
        // Under READ COMMITTED a concurrent claim waits for the row lock, then re-checks
        // the WHERE clause against the committed row: exactly one claim matches.
        let n = tx
            .execute(
                CLAIM_SQL,
                &[
                    &c.decisions_json,
                    &c.owner,
                    &c.lease_expires_at_ms,
                    &c.now_ms,
                    &c.run_id,
                    &c.pause_id,
                    &expected,
                ],
            )
            .await
            .map_err(pg_failed)?;
        tx.commit().await.map_err(pg_failed)?;
        Ok(n == 1)
    }

    async fn renew(&self, run_id: &str, owner: &str, expires: i64) -> Result<bool, AgentError> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(RENEW_SQL).await.map_err(pg_failed)?;
        let n = client
            .execute(&stmt, &[&expires, &run_id, &owner])
            .await
            .map_err(pg_failed)?;
        Ok(n == 1)
    }

    async fn take_over(
        &self,
        run_id: &str,
        expected_version: i64,
        owner: &str,
        expires: i64,
        now_ms: i64,
    ) -> Result<bool, AgentError> {
        let client = self.client().await?;
        let n = client
            .execute(
                TAKE_OVER_SQL,
                &[&owner, &expires, &run_id, &expected_version, &now_ms],
            )
            .await
            .map_err(pg_failed)?;
        Ok(n == 1)
    }

    async fn list(&self, q: &ListQuery) -> Result<RunPage, AgentError> {
        let after = q.after()?;
        let statuses: Vec<String> = q.status_strings().iter().map(|s| (*s).to_owned()).collect();
        let (after_t, after_id) = match &after {
            Some((t, id)) => (Some(*t), Some(id.clone())),
            None => (None, None),
        };
        let limit = (q.page_size() + 1) as i64;
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(&format!(
                "SELECT {ROW_COLUMNS} FROM phaseo_runs \
                 WHERE (cardinality($1::TEXT[]) = 0 OR status = ANY($1)) \
                 AND ($2::TEXT IS NULL OR agent_id = $2) \
                 AND ($3::BIGINT IS NULL OR updated_at >= $3) \
                 AND ($4::BIGINT IS NULL OR updated_at < $4) \
                 AND ($5::BIGINT IS NULL OR (updated_at, run_id) > ($5, $6::TEXT)) \
                 ORDER BY updated_at, run_id LIMIT $7"
            ))
            .await
            .map_err(pg_failed)?;
        let rows = client
            .query(
                &stmt,
                &[
                    &statuses,
                    &q.agent_id,
                    &q.updated_after_ms,
                    &q.updated_before_ms,
                    &after_t,
                    &after_id,
                    &limit,
                ],
            )
            .await
            .map_err(pg_failed)?;
        let rows = rows.iter().map(read_row).collect::<Result<Vec<_>, _>>()?;
        Ok(RunPage::from_rows(rows, q.page_size()))
    }

    async fn delete(&self, run_id: &str) -> Result<bool, AgentError> {
        let client = self.client().await?;
        let n = client
            .execute("DELETE FROM phaseo_runs WHERE run_id = $1", &[&run_id])
            .await
            .map_err(pg_failed)?;
        Ok(n == 1)
    }

    async fn prune(&self, statuses: &[RunStatus], older_than_ms: i64) -> Result<u64, AgentError> {
        let statuses: Vec<String> = statuses.iter().map(|s| s.as_str().to_owned()).collect();
        let client = self.client().await?;
        client
            .execute(
                "DELETE FROM phaseo_runs WHERE status = ANY($1) AND updated_at < $2",
                &[&statuses, &older_than_ms],
            )
            .await
            .map_err(pg_failed)
    }
}

//! The embedded store: one SQLite file (WAL, `synchronous=NORMAL`), safe for several
//! processes on one host. Every call runs on tokio's blocking pool, never on a worker.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use super::query::{ListQuery, RunPage};
use super::row::{PauseClaim, RunSnapshot, StoredRun};
use super::schema::{
    too_new, CLAIM_SQL, INSERT_IF_ABSENT_SQL, MIGRATIONS, RENEW_SQL, ROW_COLUMNS, SAVE_SQL,
    SCHEMA_VERSION, TAKE_OVER_SQL, VERSION_TABLE,
};
use super::RunStore;
use crate::error::AgentError;
use crate::state::RunStatus;

/// How long a statement waits for another process's write lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// A run store in a SQLite file (created and migrated on open).
#[derive(Clone)]
pub struct SqliteRunStore {
    conn: Arc<Mutex<Connection>>,
    path: Arc<PathBuf>,
}

fn failed(e: impl std::fmt::Display) -> AgentError {
    AgentError::store_failed(format!("Run store failed: {e}"))
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// Retries a statement that SQLite refused as busy without calling the busy handler
/// (switching to WAL on a file another process is creating does that).
fn retry_busy<T>(mut f: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let start = Instant::now();
    loop {
        match f() {
            Err(e) if is_busy(&e) && start.elapsed() < BUSY_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(5));
            }
            other => return other,
        }
    }
}

fn migrate(conn: &mut Connection) -> Result<(), AgentError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(failed)?;
    tx.execute(VERSION_TABLE, []).map_err(failed)?;
    let found: i64 = tx
        .query_row(
            "SELECT COALESCE(MAX(version), 0) FROM phaseo_schema_version",
            [],
            |r| r.get(0),
        )
        .map_err(failed)?;
    if found > SCHEMA_VERSION {
        return Err(too_new(found));
    }
    for step in &MIGRATIONS[found as usize..] {
        for sql in *step {
            tx.execute(sql, []).map_err(failed)?;
        }
    }
    if found < SCHEMA_VERSION {
        tx.execute("DELETE FROM phaseo_schema_version", [])
            .map_err(failed)?;
        tx.execute(
            "INSERT INTO phaseo_schema_version (version) VALUES (?1)",
            [SCHEMA_VERSION],
        )
        .map_err(failed)?;
    }
    tx.commit().map_err(failed)
}

fn read_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredRun> {
    Ok(StoredRun {
        run_id: r.get(0)?,
        agent_id: r.get(1)?,
        status: r.get(2)?,
        pause_id: r.get(3)?,
        claimed_pause_id: r.get(4)?,
        decisions_json: r.get(5)?,
        lease_owner: r.get(6)?,
        lease_expires_at_ms: r.get(7)?,
        version: r.get(8)?,
        created_at_ms: r.get(9)?,
        updated_at_ms: r.get(10)?,
        state_json: r.get(11)?,
    })
}

fn row_error(run_id: &str) -> impl Fn(rusqlite::Error) -> AgentError + '_ {
    move |e| {
        AgentError::store_failed(format!(
            "Run store failed: the row of run {run_id} cannot be read: {e}"
        ))
    }
}

impl SqliteRunStore {
    /// Opens (creating if needed) the database file at `path`: WAL journal,
    /// `synchronous=NORMAL`, a 30 s busy timeout, and the schema migrated forward under
    /// a write lock, so concurrent openers serialize. A database written by a newer SDK
    /// is refused with `store_failed`. Blocking: call it before entering async code, or
    /// on a blocking thread.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, AgentError> {
        let path = path.as_ref().to_path_buf();
        let mut conn = Connection::open(&path)
            .map_err(|e| failed(format!("cannot open {}: {e}", path.display())))?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(failed)?;
        retry_busy(|| conn.pragma_update(None, "journal_mode", "WAL")).map_err(failed)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(failed)?;
        // A 16 MiB page cache keeps the indexes of ~100k runs in memory.
        conn.pragma_update(None, "cache_size", -16384)
            .map_err(failed)?;
        migrate(&mut conn)?;
        Ok(Self {
            conn: Arc::new(Mutex::new(conn)),
            path: Arc::new(path),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `f` with the connection on the blocking pool (inline outside a runtime).
    async fn with<T, F>(&self, f: F) -> Result<T, AgentError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, AgentError> + Send + 'static,
    {
        let conn = self.conn.clone();
        let job = move || {
            let mut guard = conn.lock().unwrap_or_else(|e| e.into_inner());
            f(&mut guard)
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => handle
                .spawn_blocking(job)
                .await
                .map_err(|e| failed(format!("the store task failed: {e}")))?,
            Err(_) => job(),
        }
    }
}

#[async_trait]
impl RunStore for SqliteRunStore {
    async fn save(
        &self,
        s: &RunSnapshot,
        owner: &str,
        expires: Option<i64>,
    ) -> Result<bool, AgentError> {
        let s = s.clone();
        let owner = owner.to_owned();
        self.with(move |conn| {
            let kept = expires.map(|_| owner.as_str());
            let mut stmt = conn.prepare_cached(SAVE_SQL).map_err(failed)?;
            let n = stmt
                .execute(params![
                    s.run_id,
                    s.agent_id,
                    s.status.as_str(),
                    s.pause_id,
                    kept,
                    expires,
                    s.created_at_ms,
                    s.updated_at_ms,
                    s.state_json,
                    owner
                ])
                .map_err(failed)?;
            Ok(n == 1)
        })
        .await
    }

    async fn load(&self, run_id: &str) -> Result<Option<StoredRun>, AgentError> {
        let run_id = run_id.to_owned();
        self.with(move |conn| {
            let mut stmt = conn
                .prepare_cached(&format!(
                    "SELECT {ROW_COLUMNS} FROM phaseo_runs WHERE run_id = ?1"
                ))
                .map_err(failed)?;
            stmt.query_row([&run_id], read_row)
                .optional()
                .map_err(row_error(&run_id))
        })
        .await
    }

    async fn claim(&self, c: &PauseClaim) -> Result<bool, AgentError> {
        let c = c.clone();
        self.with(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(failed)?;
            if let Some(s) = &c.insert {
                tx.execute(
                    INSERT_IF_ABSENT_SQL,
                    params![
                        s.run_id,
                        s.agent_id,
                        s.status.as_str(),
                        s.pause_id,
                        s.created_at_ms,
                        s.updated_at_ms,
                        s.state_json
                    ],
                )
                .map_err(failed)?;
            }
            let expected = c.insert.is_none().then_some(c.expected_version);
            let n = tx
                .execute(
                    CLAIM_SQL,
                    params![
                        c.decisions_json,
                        c.owner,
                        c.lease_expires_at_ms,
                        c.now_ms,
                        c.run_id,
                        c.pause_id,
                        expected
                    ],
                )
                .map_err(failed)?;
            tx.commit().map_err(failed)?;
            Ok(n == 1)
        })
        .await
    }

    async fn renew(&self, run_id: &str, owner: &str, expires: i64) -> Result<bool, AgentError> {
        let (run_id, owner) = (run_id.to_owned(), owner.to_owned());
        self.with(move |conn| {
            let n = conn
                .prepare_cached(RENEW_SQL)
                .and_then(|mut s| s.execute(params![expires, run_id, owner]))
                .map_err(failed)?;
            Ok(n == 1)
        })
        .await
    }

    async fn take_over(
        &self,
        run_id: &str,
        expected_version: i64,
        owner: &str,
        expires: i64,
        now_ms: i64,
    ) -> Result<bool, AgentError> {
        let (run_id, owner) = (run_id.to_owned(), owner.to_owned());
        self.with(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(failed)?;
            let n = tx
                .execute(
                    TAKE_OVER_SQL,
                    params![owner, expires, run_id, expected_version, now_ms],
                )
                .map_err(failed)?;
            tx.commit().map_err(failed)?;
            Ok(n == 1)
        })
        .await
    }

    async fn list(&self, q: &ListQuery) -> Result<RunPage, AgentError> {
        let q = q.clone();
        let after = q.after()?;
        self.with(move |conn| {
            let mut sql = format!("SELECT {ROW_COLUMNS} FROM phaseo_runs WHERE 1 = 1");
            let mut args: Vec<rusqlite::types::Value> = Vec::new();
            let statuses = q.status_strings();
            if !statuses.is_empty() {
                let marks = vec!["?"; statuses.len()].join(", ");
                sql.push_str(&format!(" AND status IN ({marks})"));
                args.extend(statuses.iter().map(|s| (*s).to_owned().into()));
            }
            if let Some(agent) = &q.agent_id {
                sql.push_str(" AND agent_id = ?");
                args.push(agent.clone().into());
            }
            if let Some(t) = q.updated_after_ms {
                sql.push_str(" AND updated_at >= ?");
                args.push(t.into());
            }
            if let Some(t) = q.updated_before_ms {
                sql.push_str(" AND updated_at < ?");
                args.push(t.into());
            }
            if let Some((t, id)) = &after {
                sql.push_str(" AND (updated_at > ? OR (updated_at = ? AND run_id > ?))");
                args.extend([(*t).into(), (*t).into(), id.clone().into()]);
            }
            sql.push_str(" ORDER BY updated_at, run_id LIMIT ?");
            args.push(((q.page_size() + 1) as i64).into());
            let mut stmt = conn.prepare_cached(&sql).map_err(failed)?;
            let rows = stmt
                .query_map(rusqlite::params_from_iter(args), read_row)
                .map_err(failed)?
                .collect::<rusqlite::Result<Vec<_>>>()
                .map_err(|e| failed(format!("a listed row cannot be read: {e}")))?;
            Ok(RunPage::from_rows(rows, q.page_size()))
        })
        .await
    }

    async fn delete(&self, run_id: &str) -> Result<bool, AgentError> {
        let run_id = run_id.to_owned();
        self.with(move |conn| {
            let n = conn
                .execute("DELETE FROM phaseo_runs WHERE run_id = ?1", [&run_id])
                .map_err(failed)?;
            Ok(n == 1)
        })
        .await
    }

    async fn prune(&self, statuses: &[RunStatus], older_than_ms: i64) -> Result<u64, AgentError> {
        if statuses.is_empty() {
            return Ok(0);
        }
        let statuses: Vec<String> = statuses.iter().map(|s| s.as_str().to_owned()).collect();
        self.with(move |conn| {
            let marks = vec!["?"; statuses.len()].join(", ");
            let sql =
                format!("DELETE FROM phaseo_runs WHERE status IN ({marks}) AND updated_at < ?");
            let mut args: Vec<rusqlite::types::Value> =
                statuses.into_iter().map(Into::into).collect();
            args.push(older_than_ms.into());
            let n = conn
                .execute(&sql, rusqlite::params_from_iter(args))
                .map_err(failed)?;
            Ok(n as u64)
        })
        .await
    }
}

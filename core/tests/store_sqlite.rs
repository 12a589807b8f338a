//! The run-store suite against SQLite, plus what only SQLite has: a newer schema, a
//! corrupted column, concurrent openers of a fresh file.
mod store_common;

use std::sync::Arc;

use phaseo_agent::store::{RunStore, SqliteRunStore, SCHEMA_VERSION};
use phaseo_agent::ErrorCode;
use store_common::{Backend, Sqlite};

store_suite!(store_common::Sqlite);

fn path_of(spec: &str) -> &str {
    spec.strip_prefix("sqlite:").unwrap()
}

#[tokio::test]
async fn a_newer_schema_is_refused() {
    let spec = Sqlite.fresh().await;
    drop(SqliteRunStore::open(path_of(&spec)).unwrap());
    let conn = rusqlite::Connection::open(path_of(&spec)).unwrap();
    conn.execute("UPDATE phaseo_schema_version SET version = 99", [])
        .unwrap();
    drop(conn);
    let err = SqliteRunStore::open(path_of(&spec)).err().unwrap();
    assert_eq!(err.code(), ErrorCode::StoreFailed);
    assert_eq!(
        err.message(),
        format!(
            "Run store failed: the database schema is version 99, newer than this SDK \
             supports ({SCHEMA_VERSION}); upgrade the SDK"
        )
    );
}

#[tokio::test]
async fn a_corrupted_column_names_the_run() {
    let spec = Sqlite.fresh().await;
    let store = SqliteRunStore::open(path_of(&spec)).unwrap();
    let conn = rusqlite::Connection::open(path_of(&spec)).unwrap();
    conn.execute(
        "INSERT INTO phaseo_runs (run_id, agent_id, status, version, created_at, updated_at, state) \
         VALUES ('r1', 'a', 'running', 'not a number', 0, 0, '{}')",
        [],
    )
    .unwrap();
    let err = store.load("r1").await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::StoreFailed);
    assert!(
        err.message()
            .starts_with("Run store failed: the row of run r1 cannot be read:"),
        "{}",
        err.message()
    );
}

#[test]
fn concurrent_openers_of_a_fresh_file_all_succeed() {
    let dir = std::env::temp_dir().join(format!("phaseo-open-race-{}", store_common::uuid()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = Arc::new(dir.join("runs.db"));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let path = path.clone();
            std::thread::spawn(move || SqliteRunStore::open(path.as_path()).map(|_| ()))
        })
        .collect();
    for t in threads {
        t.join().unwrap().expect("every opener succeeds");
    }
    let conn = rusqlite::Connection::open(path.as_path()).unwrap();
    let rows: i64 = conn
        .query_row("SELECT COUNT(*) FROM phaseo_schema_version", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(rows, 1);
}

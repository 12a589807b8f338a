//! The run-store suite against a real PostgreSQL (`PHASEO_TEST_POSTGRES_URL`; without it
//! every test here FAILS), plus a newer schema and concurrent migrations.
mod store_common;

use phaseo_agent::store::{PostgresRunStore, SCHEMA_VERSION};
use phaseo_agent::ErrorCode;
use store_common::{Backend, Postgres};

store_suite!(store_common::Postgres);

async fn sql(url: &str, statement: &str) {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    client.batch_execute(statement).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newer_schema_is_refused() {
    let url = Postgres.fresh().await;
    drop(PostgresRunStore::connect(&url).await.unwrap());
    sql(&url, "UPDATE phaseo_schema_version SET version = 99").await;
    let err = PostgresRunStore::connect(&url).await.err().unwrap();
    assert_eq!(err.code(), ErrorCode::StoreFailed);
    assert_eq!(
        err.message(),
        format!(
            "Run store failed: the database schema is version 99, newer than this SDK \
             supports ({SCHEMA_VERSION}); upgrade the SDK"
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_migrations_of_a_fresh_database_all_succeed() {
    let url = Postgres.fresh().await;
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let url = url.clone();
            tokio::spawn(async move { PostgresRunStore::connect(&url).await.map(|_| ()) })
        })
        .collect();
    for t in tasks {
        t.await.unwrap().expect("every connector succeeds");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_server_is_store_failed() {
    let err = PostgresRunStore::connect("postgres://postgres@127.0.0.1:1/none")
        .await
        .err()
        .unwrap();
    assert_eq!(err.code(), ErrorCode::StoreFailed);
    assert!(
        err.message().starts_with("Run store failed:"),
        "{}",
        err.message()
    );
}

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

/// A server of this test alone (stopped and restarted mid-test).
struct OwnServer(std::path::PathBuf);

impl OwnServer {
    fn script(&self, command: &str) -> String {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/pg-test-server.sh");
        let out = std::process::Command::new(script)
            .arg(command)
            .env("PHASEO_PG_DIR", &self.0)
            .output()
            .unwrap();
        assert!(out.status.success(), "{command}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    }
}

impl Drop for OwnServer {
    fn drop(&mut self) {
        self.script("stop");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_server_fails_the_run_and_it_recovers_after_restart() {
    use std::sync::Arc;
    use std::time::Duration;

    use phaseo_agent::store::{LeaseConfig, RunStore};
    use phaseo_agent::{
        create_agent, AgentDefinition, ContinueOptions, ModelResponse, RunOptions, RunStatus, Tool,
        Value,
    };

    // This test needs what the shared server needs (and fails the same way without it).
    let _ = store_common::postgres_url();
    let server = Arc::new(OwnServer(
        std::env::temp_dir().join(format!("phaseo-pg-stop-{}", store_common::uuid())),
    ));
    let url = server
        .script("start")
        .trim()
        .replace("export PHASEO_TEST_POSTGRES_URL=", "");
    let store: Arc<dyn RunStore> = Arc::new(PostgresRunStore::connect(&url).await.unwrap());
    let halting = server.clone();
    let halt = Tool::new("halt", "", Value::Null, move |_, _| {
        halting.script("halt");
        Ok(Value::Null)
    });
    let def = AgentDefinition::new("halter")
        .tool(halt)
        .lease(LeaseConfig::new(
            Duration::from_millis(300),
            Duration::from_millis(50),
        ));
    let agent = create_agent(def.clone().store(store.clone())).unwrap();
    let client = store_common::scripted([
        ModelResponse::tool_calls([("h", "halt", "{}")]),
        ModelResponse::text("never"),
    ]);
    let err = agent.run(RunOptions::new("go", client)).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::StoreFailed, "{}", err.message());
    let result = err.result().expect("the result is attached");
    assert_eq!(result.status(), RunStatus::Failed);
    assert_eq!(&*result.step_results[0].tool_results[0].tool_call_id, "h");
    let id = result.run.id.clone();
    server.script("resume");
    tokio::time::sleep(Duration::from_millis(400)).await;
    // The same store handle (its pool reconnects) recovers the run from its last save.
    let noop = Tool::new("halt", "", Value::Null, |_, _| Ok(Value::Null));
    let rescuer = create_agent(
        AgentDefinition::new("halter")
            .tool(noop)
            .store(store.clone())
            .lease(LeaseConfig::new(
                Duration::from_millis(300),
                Duration::from_millis(50),
            )),
    )
    .unwrap();
    let done = rescuer
        .recover(
            &id,
            ContinueOptions::new(store_common::scripted([
                ModelResponse::tool_calls([("h", "halt", "{}")]),
                ModelResponse::text("done"),
            ])),
        )
        .await
        .unwrap();
    assert_eq!(done.status(), RunStatus::Completed);
    assert_eq!(store.load(&id).await.unwrap().unwrap().status, "completed");
}

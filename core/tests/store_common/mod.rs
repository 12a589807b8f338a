//! One suite of run-store tests, run against every store (docs/behaviour.md §10).
#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use phaseo_agent::store::{
    now_ms, LeaseConfig, ListQuery, PauseClaim, RunSnapshot, RunStore, StoredRun,
};
use phaseo_agent::{
    async_trait, create_agent, json, Agent, AgentDefinition, AgentError, ContinueOptions,
    ErrorCode, ModelResponse, RunOptions, RunResult, RunStatus, ScriptedClient, Tool, Value,
};

/// Opens stores of one kind: `fresh` an empty database, `reopen` the same one again (as
/// another worker would).
#[async_trait]
pub trait Backend: Send + Sync {
    async fn fresh(&self) -> String;
    async fn open(&self, spec: &str) -> Arc<dyn RunStore>;
}

pub struct Memory;

#[async_trait]
impl Backend for Memory {
    async fn fresh(&self) -> String {
        let id = uuid();
        MEMORY.lock().unwrap().push((
            id.clone(),
            Arc::new(phaseo_agent::store::InMemoryRunStore::new()),
        ));
        id
    }
    async fn open(&self, spec: &str) -> Arc<dyn RunStore> {
        MEMORY
            .lock()
            .unwrap()
            .iter()
            .find(|(id, _)| id == spec)
            .map(|(_, s)| s.clone() as Arc<dyn RunStore>)
            .expect("a fresh memory store")
    }
}

type MemoryStores = Vec<(String, Arc<phaseo_agent::store::InMemoryRunStore>)>;
static MEMORY: Mutex<MemoryStores> = Mutex::new(Vec::new());

pub fn uuid() -> String {
    format!("{:032x}", rand_u128())
}

fn rand_u128() -> u128 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .elapsed()
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed) as u64);
    let a = h.finish() as u128;
    let mut h2 = std::collections::hash_map::RandomState::new().build_hasher();
    h2.write_u128(a);
    (a << 64) | h2.finish() as u128
}
static COUNTER: AtomicUsize = AtomicUsize::new(0);

#[cfg(feature = "sqlite")]
pub struct Sqlite;

#[cfg(feature = "sqlite")]
#[async_trait]
impl Backend for Sqlite {
    async fn fresh(&self) -> String {
        let dir = std::env::temp_dir().join(format!("phaseo-store-{}", uuid()));
        std::fs::create_dir_all(&dir).unwrap();
        format!("sqlite:{}", dir.join("runs.db").display())
    }
    async fn open(&self, spec: &str) -> Arc<dyn RunStore> {
        open_spec(spec).await
    }
}

#[cfg(feature = "postgres")]
pub struct Postgres;

/// The admin URL of the test server; without it a Postgres test FAILS (never skips).
#[cfg(feature = "postgres")]
pub fn postgres_url() -> String {
    std::env::var("PHASEO_TEST_POSTGRES_URL").unwrap_or_else(|_| {
        panic!(
            "PHASEO_TEST_POSTGRES_URL is not set: start a server with \
             `eval \"$(scripts/pg-test-server.sh start)\"` or run `make store-tests`"
        )
    })
}

#[cfg(feature = "postgres")]
#[async_trait]
impl Backend for Postgres {
    async fn fresh(&self) -> String {
        let admin = postgres_url();
        let (client, conn) = tokio_postgres::connect(&admin, tokio_postgres::NoTls)
            .await
            .expect("the test PostgreSQL server is reachable");
        tokio::spawn(conn);
        let db = format!("phaseo_t_{}", uuid());
        client
            .batch_execute(&format!("CREATE DATABASE {db}"))
            .await
            .unwrap();
        let base = admin.rsplit_once('/').map(|(b, _)| b).unwrap_or(&admin);
        format!("{base}/{db}")
    }
    async fn open(&self, spec: &str) -> Arc<dyn RunStore> {
        open_spec(spec).await
    }
}

/// Opens a store from its spec: `sqlite:<path>` or a `postgres://` URL.
pub async fn open_spec(spec: &str) -> Arc<dyn RunStore> {
    try_open_spec(spec).await.expect("store opens")
}

pub async fn try_open_spec(spec: &str) -> Result<Arc<dyn RunStore>, AgentError> {
    if let Some(path) = spec.strip_prefix("sqlite:") {
        #[cfg(feature = "sqlite")]
        {
            let path = path.to_owned();
            return tokio::task::spawn_blocking(move || {
                phaseo_agent::store::SqliteRunStore::open(path)
                    .map(|s| Arc::new(s) as Arc<dyn RunStore>)
            })
            .await
            .unwrap();
        }
        #[cfg(not(feature = "sqlite"))]
        panic!("sqlite feature off: {path}");
    }
    #[cfg(feature = "postgres")]
    {
        phaseo_agent::store::PostgresRunStore::connect(spec)
            .await
            .map(|s| Arc::new(s) as Arc<dyn RunStore>)
    }
    #[cfg(not(feature = "postgres"))]
    panic!("postgres feature off: {spec}");
}

pub fn scripted(responses: impl IntoIterator<Item = ModelResponse>) -> Arc<ScriptedClient> {
    Arc::new(ScriptedClient::from_responses(responses))
}

/// Counts executions of the approval-gated tool `send`; `gate` (if set) blocks it until
/// notified.
#[derive(Clone, Default)]
pub struct Counter {
    pub runs: Arc<AtomicUsize>,
    pub gate: Option<Arc<tokio::sync::Semaphore>>,
    pub started: Arc<tokio::sync::Notify>,
}

/// The "mailer" agent: one approval-gated tool `send` counted by `counter`, saved in `store`.
pub fn mailer(store: Arc<dyn RunStore>, counter: &Counter, lease: LeaseConfig) -> AgentDefinition {
    let c = counter.clone();
    let send = Tool::new_async("send", "Sends", Value::Null, move |input: Value, _rt| {
        let c = c.clone();
        async move {
            c.runs.fetch_add(1, Ordering::SeqCst);
            c.started.notify_one();
            if let Some(gate) = &c.gate {
                let _permit = gate.acquire().await.expect("open");
            }
            Ok(json!({"sent": input}))
        }
    })
    .require_approval();
    AgentDefinition::new("mailer")
        .tool(send)
        .store(store)
        .lease(lease)
}

pub fn agent(store: Arc<dyn RunStore>, counter: &Counter, lease: LeaseConfig) -> Agent {
    create_agent(mailer(store, counter, lease)).unwrap()
}

/// Waits until the tool started (a continue that fails before fails the test, not hangs).
pub async fn started(counter: &Counter) {
    tokio::time::timeout(Duration::from_secs(30), counter.started.notified())
        .await
        .expect("the tool started");
}

pub fn short_lease() -> LeaseConfig {
    LeaseConfig::new(Duration::from_millis(300), Duration::from_millis(50))
}

pub async fn paused_run(agent: &Agent) -> RunResult {
    let client = scripted([ModelResponse::tool_calls([(
        "c1",
        "send",
        r#"{"to":"bob"}"#,
    )])]);
    let result = agent
        .run(RunOptions::new("mail bob", client))
        .await
        .expect("pauses");
    assert_eq!(result.status(), RunStatus::WaitingForHuman);
    result
}

pub fn approve() -> ContinueOptions {
    ContinueOptions::new(scripted([ModelResponse::text("sent")])).approve("c1")
}

pub async fn load(store: &Arc<dyn RunStore>, id: &str) -> StoredRun {
    store.load(id).await.unwrap().expect("stored")
}

pub fn already(result: &RunResult) -> String {
    format!(
        "Pause {} of run {} was already continued",
        result.pause().unwrap().id,
        result.run.id
    )
}

// ---- the suite ----

pub async fn round_trip(b: &dyn Backend) {
    let spec = b.fresh().await;
    let store = b.open(&spec).await;
    let counter = Counter::default();
    let result = paused_run(&agent(store.clone(), &counter, LeaseConfig::default())).await;
    let row = load(&store, &result.run.id).await;
    assert_eq!(row.status, "waiting_for_human");
    assert_eq!(
        row.pause_id.as_deref(),
        Some(result.pause().unwrap().id.as_str())
    );
    assert_eq!(row.lease_owner, None, "a pause releases the lease");
    assert_eq!(
        row.state_json,
        result.to_json(),
        "the canonical state, byte for byte"
    );
    assert_eq!(row.state().unwrap(), result);
    assert_eq!(store.load("nope").await.unwrap(), None);
}

pub async fn continue_by_id_from_another_worker(b: &dyn Backend) {
    let spec = b.fresh().await;
    let counter = Counter::default();
    let first = agent(b.open(&spec).await, &counter, LeaseConfig::default());
    let paused = paused_run(&first).await;
    // Another worker: its own store handle and agent.
    let store = b.open(&spec).await;
    let second = agent(store.clone(), &counter, LeaseConfig::default());
    let done = second
        .continue_by_id(paused.run.id.clone(), approve())
        .await
        .unwrap();
    assert_eq!(done.status(), RunStatus::Completed);
    assert_eq!(done.output(), &json!("sent"));
    assert_eq!(counter.runs.load(Ordering::SeqCst), 1);
    let row = load(&store, &paused.run.id).await;
    assert_eq!(row.status, "completed");
    assert_eq!(row.lease_owner, None);
    assert_eq!(row.state().unwrap(), done);
    // Continuing again, by id or with the old state: the documented message, nothing changes.
    let again = second
        .continue_by_id(paused.run.id.clone(), approve())
        .await
        .unwrap_err();
    assert_eq!(again.code(), ErrorCode::ContinueInvalid);
    assert_eq!(again.message(), already(&paused));
    let stale = second.continue_run(&paused, approve()).await.unwrap_err();
    assert_eq!(stale.message(), already(&paused));
    assert_eq!(load(&store, &paused.run.id).await, row);
    assert_eq!(counter.runs.load(Ordering::SeqCst), 1);
    // As a stream, by id.
    let streamed = paused_run(&first).await;
    let stream = second.continue_stream_by_id(streamed.run.id.clone(), approve());
    let mut cursor = stream.cursor();
    let mut types = Vec::new();
    while let Some(event) = cursor.next_event().await {
        types.push(event.unwrap().type_name());
    }
    assert_eq!(types.first(), Some(&"run.resumed"));
    assert_eq!(types.last(), Some(&"run.completed"));
    assert_eq!(
        stream.result().await.unwrap().status(),
        RunStatus::Completed
    );
    assert_eq!(load(&store, &streamed.run.id).await.status, "completed");
    // Given both, they must agree.
    let other = paused_run(&first).await;
    let mismatch = second
        .continue_run(&other, approve().run_id(paused.run.id.clone()))
        .await
        .unwrap_err();
    assert_eq!(
        mismatch.message(),
        format!(
            "The state given is of run {}, not of run {}",
            other.run.id, paused.run.id
        )
    );
}

pub async fn checkpoints_are_saved_before_the_event(b: &dyn Backend) {
    let spec = b.fresh().await;
    let store = b.open(&spec).await;
    let seen: Arc<Mutex<Vec<(String, usize)>>> = Arc::default();
    let agent = create_agent(
        AgentDefinition::new("echo")
            .tool(Tool::new("echo", "", Value::Null, |i, _| Ok(i)))
            .store(store.clone()),
    )
    .unwrap();
    let client = scripted([
        ModelResponse::tool_calls([("a", "echo", "{}")]),
        ModelResponse::tool_calls([("b", "echo", "{}")]),
        ModelResponse::text("done"),
    ]);
    let probe = store.clone();
    let log = seen.clone();
    let handle = tokio::runtime::Handle::current();
    let listener = move |e: &phaseo_agent::AgentEvent| {
        if e.type_name() == "checkpoint.saved" {
            let (probe, id) = (probe.clone(), e.run_id.to_string());
            let row = std::thread::scope(|s| {
                s.spawn(|| handle.block_on(probe.load(&id)).unwrap().unwrap())
                    .join()
                    .unwrap()
            });
            let steps = row.state().unwrap().run.step_count;
            log.lock().unwrap().push((row.status, steps));
        }
    };
    let result = agent
        .run(RunOptions::new("go", client).on_event(Arc::new(listener)))
        .await
        .unwrap();
    assert_eq!(result.status(), RunStatus::Completed);
    assert_eq!(
        *seen.lock().unwrap(),
        vec![
            ("running".to_owned(), 1),
            ("running".to_owned(), 2),
            ("completed".to_owned(), 3)
        ]
    );
}

pub async fn race_of_eight_workers(b: &dyn Backend) {
    let spec = b.fresh().await;
    let counter = Counter::default();
    let paused = paused_run(&agent(
        b.open(&spec).await,
        &counter,
        LeaseConfig::default(),
    ))
    .await;
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let store = b.open(&spec).await;
        let agent = agent(store, &counter, LeaseConfig::default());
        let id = paused.run.id.clone();
        tasks.push(tokio::spawn(async move {
            agent.continue_by_id(id, approve()).await
        }));
    }
    let mut ok = 0;
    for t in tasks {
        match t.await.unwrap() {
            Ok(r) => {
                ok += 1;
                assert_eq!(r.status(), RunStatus::Completed);
            }
            Err(e) => {
                assert_eq!(e.code(), ErrorCode::ContinueInvalid);
                assert_eq!(e.message(), already(&paused));
            }
        }
    }
    assert_eq!(ok, 1, "exactly one continue proceeds");
    assert_eq!(
        counter.runs.load(Ordering::SeqCst),
        1,
        "the executor ran once"
    );
}

pub async fn dead_worker_is_recovered_with_the_stored_approval(b: &dyn Backend) {
    let spec = b.fresh().await;
    let store = b.open(&spec).await;
    let blocked = Counter {
        gate: Some(Arc::new(tokio::sync::Semaphore::new(0))),
        ..Counter::default()
    };
    let worker = agent(store.clone(), &blocked, short_lease());
    let paused = paused_run(&worker).await;
    let id = paused.run.id.clone();
    let task = tokio::spawn({
        let worker = worker.clone();
        let id = id.clone();
        async move { worker.continue_by_id(id, approve()).await }
    });
    started(&blocked).await;
    task.abort(); // the worker dies after its claim, mid-tool
    let _ = task.await;
    let claimed = load(&store, &id).await;
    assert_eq!(claimed.status, "running");
    assert_eq!(
        claimed.claimed_pause_id.as_deref(),
        Some(paused.pause().unwrap().id.as_str())
    );
    assert!(claimed.decisions_json.as_deref().unwrap().contains("c1"));
    // Too early: the lease is alive.
    let counter = Counter::default();
    let rescuer = agent(b.open(&spec).await, &counter, short_lease());
    let early = rescuer
        .recover(
            &id,
            ContinueOptions::new(scripted([ModelResponse::text("sent")])),
        )
        .await
        .unwrap_err();
    assert_eq!(early.code(), ErrorCode::ContinueInvalid);
    assert!(
        early.message().contains("held by a live worker"),
        "{}",
        early.message()
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    let done = rescuer
        .recover(
            &id,
            ContinueOptions::new(scripted([ModelResponse::text("sent")])),
        )
        .await
        .unwrap();
    assert_eq!(done.status(), RunStatus::Completed);
    assert_eq!(
        counter.runs.load(Ordering::SeqCst),
        1,
        "the stored approval ran the tool"
    );
    let results = &done.step_results[0].tool_results;
    assert_eq!(results[0].result, Some(json!({"sent": {"to": "bob"}})));
    // Nothing left to recover; a continue of the old pause is refused.
    let again = rescuer
        .recover(&id, ContinueOptions::new(scripted([])))
        .await
        .unwrap_err();
    assert_eq!(
        again.message(),
        format!("Run {id} is completed; only a running run whose lease expired can be recovered")
    );
    let stale = rescuer
        .continue_by_id(id.clone(), approve())
        .await
        .unwrap_err();
    assert_eq!(stale.message(), already(&paused));
}

pub async fn a_taken_over_worker_gets_lease_lost(b: &dyn Backend) {
    let spec = b.fresh().await;
    let store = b.open(&spec).await;
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let slow = Counter {
        gate: Some(gate.clone()),
        ..Counter::default()
    };
    // Renewal slower than the lease: the lease expires while the tool works.
    let lease = LeaseConfig::new(Duration::from_millis(150), Duration::from_secs(3600));
    let worker = agent(store.clone(), &slow, lease);
    let paused = paused_run(&worker).await;
    let id = paused.run.id.clone();
    let task = tokio::spawn({
        let worker = worker.clone();
        let id = id.clone();
        async move { worker.continue_by_id(id, approve()).await }
    });
    started(&slow).await;
    tokio::time::sleep(Duration::from_millis(250)).await;
    let counter = Counter::default();
    let rescuer = agent(b.open(&spec).await, &counter, short_lease());
    let done = rescuer
        .recover(
            &id,
            ContinueOptions::new(scripted([ModelResponse::text("rescued")])),
        )
        .await
        .unwrap();
    assert_eq!(done.output(), &json!("rescued"));
    let row = load(&store, &id).await;
    gate.add_permits(1);
    let err = task.await.unwrap().unwrap_err();
    assert_eq!(err.code(), ErrorCode::LeaseLost);
    assert_eq!(
        err.message(),
        format!("Run {id} was taken over by another worker (lease lost)")
    );
    assert_eq!(err.result().unwrap().status(), RunStatus::Failed);
    assert_eq!(
        load(&store, &id).await,
        row,
        "the old worker wrote nothing more"
    );
}

/// A store that fails every operation while `down` is set.
pub struct Flaky {
    pub inner: Arc<dyn RunStore>,
    pub down: Arc<std::sync::atomic::AtomicBool>,
    pub saves_before_down: Arc<AtomicUsize>,
}

impl Flaky {
    fn check(&self) -> Result<(), AgentError> {
        if self.down.load(Ordering::SeqCst) {
            return Err(AgentError::store_failed(
                "Run store failed: connection refused",
            ));
        }
        Ok(())
    }
}

#[async_trait]
impl RunStore for Flaky {
    async fn save(&self, s: &RunSnapshot, o: &str, e: Option<i64>) -> Result<bool, AgentError> {
        self.check()?;
        if self.saves_before_down.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.down.store(true, Ordering::SeqCst);
            return Err(AgentError::store_failed(
                "Run store failed: connection refused",
            ));
        }
        self.inner.save(s, o, e).await
    }
    async fn load(&self, id: &str) -> Result<Option<StoredRun>, AgentError> {
        self.check()?;
        self.inner.load(id).await
    }
    async fn claim(&self, c: &PauseClaim) -> Result<bool, AgentError> {
        self.check()?;
        self.inner.claim(c).await
    }
    async fn renew(&self, id: &str, o: &str, e: i64) -> Result<bool, AgentError> {
        self.check()?;
        self.inner.renew(id, o, e).await
    }
    async fn take_over(
        &self,
        id: &str,
        v: i64,
        o: &str,
        e: i64,
        n: i64,
    ) -> Result<bool, AgentError> {
        self.check()?;
        self.inner.take_over(id, v, o, e, n).await
    }
    async fn list(&self, q: &ListQuery) -> Result<phaseo_agent::store::RunPage, AgentError> {
        self.check()?;
        self.inner.list(q).await
    }
    async fn delete(&self, id: &str) -> Result<bool, AgentError> {
        self.check()?;
        self.inner.delete(id).await
    }
    async fn prune(&self, s: &[RunStatus], t: i64) -> Result<u64, AgentError> {
        self.check()?;
        self.inner.prune(s, t).await
    }
}

pub async fn a_failing_store_fails_the_run_and_it_recovers(b: &dyn Backend) {
    let spec = b.fresh().await;
    let real = b.open(&spec).await;
    let flaky = Arc::new(Flaky {
        inner: real.clone(),
        down: Arc::default(),
        saves_before_down: Arc::new(AtomicUsize::new(2)), // run start, then 1st checkpoint fails
    });
    let echo = Tool::new("echo", "", Value::Null, |i, _| Ok(i));
    let def = AgentDefinition::new("echoer")
        .tool(echo)
        .lease(short_lease());
    let agent1 = create_agent(def.clone().store(flaky.clone())).unwrap();
    let client = scripted([
        ModelResponse::tool_calls([("a", "echo", r#"{"n":1}"#)]),
        ModelResponse::text("never"),
    ]);
    let err = agent1.run(RunOptions::new("go", client)).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::StoreFailed);
    assert_eq!(err.message(), "Run store failed: connection refused");
    let result = err.result().expect("the result is attached");
    assert_eq!(result.status(), RunStatus::Failed);
    assert_eq!(
        result.run.step_count, 1,
        "the work done is in the attached result"
    );
    let id = result.run.id.clone();
    // The store comes back: the run is still `running` there, and recoverable once its
    // lease expired, from its last save (the run start).
    flaky.down.store(false, Ordering::SeqCst);
    let row = load(&real, &id).await;
    assert_eq!(row.status, "running");
    tokio::time::sleep(Duration::from_millis(400)).await;
    let agent2 = create_agent(def.store(real.clone())).unwrap();
    let done = agent2
        .recover(
            &id,
            ContinueOptions::new(scripted([
                ModelResponse::tool_calls([("a", "echo", r#"{"n":1}"#)]),
                ModelResponse::text("done"),
            ])),
        )
        .await
        .unwrap();
    assert_eq!(done.status(), RunStatus::Completed);
    assert_eq!(done.run.step_count, 2);
    assert_eq!(load(&real, &id).await.status, "completed");
}

pub async fn corrupted_rows_give_clear_errors(b: &dyn Backend) {
    let spec = b.fresh().await;
    let store = b.open(&spec).await;
    let snapshot = RunSnapshot {
        run_id: "broken".into(),
        agent_id: "mailer".into(),
        status: RunStatus::WaitingForHuman,
        pause_id: Some("p".into()),
        created_at_ms: 0,
        updated_at_ms: now_ms(),
        state_json: "{\"version\": 1, \"run\": tru".into(),
    };
    assert!(store.save(&snapshot, "w", None).await.unwrap());
    let agent = agent(store.clone(), &Counter::default(), LeaseConfig::default());
    let err = agent.continue_by_id("broken", approve()).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::StateInvalid);
    assert!(
        err.message()
            .starts_with("Stored state of run broken is invalid: Invalid state: not JSON"),
        "{}",
        err.message()
    );
    let missing = agent.continue_by_id("ghost", approve()).await.unwrap_err();
    assert_eq!(missing.code(), ErrorCode::ContinueInvalid);
    assert_eq!(missing.message(), "Run ghost is not in the run store");
}

pub async fn list_pagination_inbox_and_prune(b: &dyn Backend) {
    let spec = b.fresh().await;
    let store = b.open(&spec).await;
    let counter = Counter::default();
    let mailer = agent(store.clone(), &counter, LeaseConfig::default());
    let mut ids = Vec::new();
    for _ in 0..5 {
        ids.push(paused_run(&mailer).await.run.id);
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let done = mailer
        .continue_by_id(ids[0].clone(), approve())
        .await
        .unwrap();
    assert_eq!(done.status(), RunStatus::Completed);
    // The inbox: waiting runs with their pending calls, two per page.
    let mut seen = Vec::new();
    let mut cursor = None;
    let mut pages = 0;
    loop {
        let page = store
            .list(
                &ListQuery::waiting()
                    .agent_id("mailer")
                    .limit(2)
                    .cursor(cursor),
            )
            .await
            .unwrap();
        pages += 1;
        for row in &page.runs {
            let state = row.state().unwrap();
            assert_eq!(&*state.pending()[0].call.name, "send");
            seen.push(row.run_id.clone());
        }
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(pages, 2);
    assert_eq!(seen, ids[1..].to_vec(), "oldest first, each once");
    let none = store
        .list(&ListQuery::waiting().agent_id("someone-else"))
        .await
        .unwrap();
    assert!(none.runs.is_empty());
    let all = store.list(&ListQuery::default()).await.unwrap();
    assert_eq!(all.runs.len(), 5);
    let later = store
        .list(&ListQuery {
            updated_after_ms: Some(now_ms() + 60_000),
            ..ListQuery::default()
        })
        .await
        .unwrap();
    assert!(later.runs.is_empty());
    // Prune: only the given statuses, only older than the time.
    assert_eq!(store.prune(&[RunStatus::Completed], 0).await.unwrap(), 0);
    assert_eq!(
        store
            .prune(&[RunStatus::Completed], now_ms() + 1)
            .await
            .unwrap(),
        1
    );
    assert_eq!(store.load(&ids[0]).await.unwrap(), None);
    assert!(store.delete(&ids[1]).await.unwrap());
    assert!(!store.delete(&ids[1]).await.unwrap());
    assert_eq!(
        store.list(&ListQuery::waiting()).await.unwrap().runs.len(),
        3
    );
    let bad = store
        .list(&ListQuery::default().cursor(Some("garbage".into())))
        .await
        .unwrap_err();
    assert_eq!(bad.code(), ErrorCode::StoreFailed);
}

/// An agent with a `state_secret` stores signed states: continuing by id verifies them like
/// a state handed in, so an edited row is refused (docs/behaviour.md §7, §10).
pub async fn signed_states_are_stored_signed_and_checked(b: &dyn Backend) {
    let spec = b.fresh().await;
    let store = b.open(&spec).await;
    let counter = Counter::default();
    let signed = |store: Arc<dyn RunStore>| {
        create_agent(mailer(store, &counter, LeaseConfig::default()).state_secret("s3cret"))
            .unwrap()
    };
    let paused = paused_run(&signed(store.clone())).await;
    let row = load(&store, &paused.run.id).await;
    let stored: Value = serde_json::from_str(&row.state_json).unwrap();
    assert_eq!(
        stored["signature"].as_str(),
        paused.signature(),
        "the stored pause is signed as the returned one"
    );
    // Edit the stored row: the approval-gated call becomes a manual one.
    let mut forged = stored.clone();
    forged["run"]["pause"]["pendingToolCalls"][0]["kind"] = json!("manual");
    let forged = RunResult::from_json(&forged.to_string()).unwrap();
    // As someone with write access to the database would: replace the row.
    assert!(store.delete(&paused.run.id).await.unwrap());
    let snapshot = RunSnapshot::of(&forged, now_ms());
    assert!(store.save(&snapshot, "intruder", None).await.unwrap());
    let err = signed(store.clone())
        .continue_by_id(
            &paused.run.id,
            ContinueOptions::new(scripted([ModelResponse::text("sent")]))
                .output("c1", json!("forged")),
        )
        .await
        .unwrap_err();
    assert_eq!(
        (err.code(), err.message()),
        (ErrorCode::StateInvalid, "State signature does not match")
    );
    assert_eq!(counter.runs.load(Ordering::SeqCst), 0);
    // The genuine state continues by id.
    assert!(store.delete(&paused.run.id).await.unwrap());
    assert!(store
        .save(&RunSnapshot::of(&paused, now_ms()), "owner", None)
        .await
        .unwrap());
    let done = signed(store.clone())
        .continue_by_id(&paused.run.id, approve())
        .await
        .unwrap();
    assert_eq!(done.status(), RunStatus::Completed);
    assert_eq!(counter.runs.load(Ordering::SeqCst), 1);
    let row = load(&store, &paused.run.id).await;
    let stored: Value = serde_json::from_str(&row.state_json).unwrap();
    assert_eq!(stored["signature"].as_str(), done.signature());
}

/// Instantiates the suite for one backend.
#[macro_export]
macro_rules! store_suite {
    ($backend:expr) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn round_trip() {
            store_common::round_trip(&$backend).await
        }
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn continue_by_id_from_another_worker() {
            store_common::continue_by_id_from_another_worker(&$backend).await
        }
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn checkpoints_are_saved_before_the_event() {
            store_common::checkpoints_are_saved_before_the_event(&$backend).await
        }
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn race_of_eight_workers() {
            store_common::race_of_eight_workers(&$backend).await
        }
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn dead_worker_is_recovered_with_the_stored_approval() {
            store_common::dead_worker_is_recovered_with_the_stored_approval(&$backend).await
        }
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_taken_over_worker_gets_lease_lost() {
            store_common::a_taken_over_worker_gets_lease_lost(&$backend).await
        }
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_failing_store_fails_the_run_and_it_recovers() {
            store_common::a_failing_store_fails_the_run_and_it_recovers(&$backend).await
        }
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn corrupted_rows_give_clear_errors() {
            store_common::corrupted_rows_give_clear_errors(&$backend).await
        }
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn signed_states_are_stored_signed_and_checked() {
            store_common::signed_states_are_stored_signed_and_checked(&$backend).await
        }
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn list_pagination_inbox_and_prune() {
            store_common::list_pagination_inbox_and_prune(&$backend).await
        }
    };
}

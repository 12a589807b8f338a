//! Run-store benchmark: `make store-bench` (release, with a throwaway
//! PostgreSQL). Prints the figures; the goals are in the issue:
//! SQLite 10,000 paused runs saved one transaction each (≤ 1 s), loaded by id (≤ 0.5 s),
//! listing the 10,000 waiting runs (≤ 100 ms); PostgreSQL continues (claim + saves) per
//! second with 1, 4 and 8 workers and the race's duplicate count; the overhead of a
//! SQLite store on a 25-turn run.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use phaseo_agent::store::{ListQuery, PostgresRunStore, RunSnapshot, RunStore, SqliteRunStore};
use phaseo_agent::{
    create_agent, json, Agent, AgentDefinition, ContinueOptions, ModelResponse, RunOptions,
    RunResult, RunStatus, ScriptedClient, Tool, Value,
};

fn client(responses: Vec<ModelResponse>) -> Arc<ScriptedClient> {
    Arc::new(ScriptedClient::from_responses(responses))
}

fn mailer(store: Option<Arc<dyn RunStore>>, sent: Arc<AtomicUsize>) -> Agent {
    let send = Tool::new("send", "Sends", Value::Null, move |input, _| {
        sent.fetch_add(1, Ordering::SeqCst);
        Ok(json!({"sent": input}))
    })
    .require_approval();
    let mut def = AgentDefinition::new("mailer").tool(send);
    if let Some(store) = store {
        def = def.store(store);
    }
    create_agent(def).unwrap()
}

async fn paused(agent: &Agent) -> RunResult {
    let c = client(vec![ModelResponse::tool_calls([(
        "c1",
        "send",
        r#"{"to":"bob","subject":"Quarterly report","body":"Please find the figures attached."}"#,
    )])]);
    agent
        .run(RunOptions::new("mail bob the report", c))
        .await
        .unwrap()
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

async fn sqlite_figures(dir: &std::path::Path) {
    let store = Arc::new(SqliteRunStore::open(dir.join("bench.db")).unwrap());
    let template = paused(&mailer(None, Arc::default())).await;
    let n = 10_000;
    let states: Vec<RunResult> = (0..n)
        .map(|_| {
            let mut s = template.clone();
            s.run.id = uuid::Uuid::new_v4().to_string();
            s.run.pause.as_mut().unwrap().id = uuid::Uuid::new_v4().to_string();
            s
        })
        .collect();
    let start = Instant::now();
    for s in &states {
        let snapshot = RunSnapshot::of(s, phaseo_agent::store::now_ms());
        assert!(store.save(&snapshot, "bench", None).await.unwrap());
    }
    let saved = start.elapsed();
    let start = Instant::now();
    for s in &states {
        std::hint::black_box(RunSnapshot::of(s, 0));
    }
    println!(
        "sqlite: {n} paused runs saved, one transaction each: {} (state {} bytes; of which \
         serializing the states {})",
        ms(saved),
        template.to_json().len(),
        ms(start.elapsed())
    );
    let sync_store = SqliteRunStore::open(dir.join("sync.db")).unwrap();
    let snapshots: Vec<RunSnapshot> = states
        .iter()
        .map(|s| RunSnapshot::of(s, phaseo_agent::store::now_ms()))
        .collect();
    // The same saves outside a runtime (no blocking-pool hop): the SQLite cost alone.
    let start = Instant::now();
    std::thread::spawn(move || {
        for s in &snapshots {
            assert!(futures::executor::block_on(sync_store.save(s, "bench", None)).unwrap());
        }
    })
    .join()
    .unwrap();
    println!(
        "sqlite: the same {n} saves without the blocking-pool hop: {}",
        ms(start.elapsed())
    );
    let start = Instant::now();
    for s in &states {
        let row = store.load(&s.run.id).await.unwrap().unwrap();
        assert_eq!(row.run_id, s.run.id);
    }
    let loaded = start.elapsed();
    let start = Instant::now();
    for s in &states[..1000] {
        let row = store.load(&s.run.id).await.unwrap().unwrap();
        assert_eq!(row.state().unwrap().status(), RunStatus::WaitingForHuman);
    }
    println!(
        "sqlite: {n} loaded by id: {} (rows); with the state parsed: {:.1} µs per run",
        ms(loaded),
        start.elapsed().as_secs_f64() * 1e6 / 1000.0
    );
    let start = Instant::now();
    let page = store.list(&ListQuery::waiting().limit(n)).await.unwrap();
    let listed = start.elapsed();
    assert_eq!(page.runs.len(), n);
    let start = Instant::now();
    let page100 = store.list(&ListQuery::waiting().limit(100)).await.unwrap();
    println!(
        "sqlite: listing the {n} waiting runs: {} (one page of 100: {})",
        ms(listed),
        ms(start.elapsed())
    );
    assert_eq!(page100.runs.len(), 100);
}

async fn postgres_figures(url: &str) {
    // A fresh database for the figures.
    let (admin, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let db = format!("phaseo_bench_{}", uuid::Uuid::new_v4().simple());
    admin
        .batch_execute(&format!("CREATE DATABASE {db}"))
        .await
        .unwrap();
    let url = format!("{}/{db}", url.rsplit_once('/').unwrap().0);
    let store: Arc<dyn RunStore> = Arc::new(PostgresRunStore::connect(&url).await.unwrap());
    for workers in [1usize, 4, 8] {
        let runs = 400;
        let sent = Arc::new(AtomicUsize::new(0));
        let agent = mailer(Some(store.clone()), sent.clone());
        let mut ids = Vec::with_capacity(runs);
        for _ in 0..runs {
            ids.push(paused(&agent).await.run.id);
        }
        let queue = Arc::new(Mutex::new(ids));
        let start = Instant::now();
        let tasks: Vec<_> = (0..workers)
            .map(|_| {
                let (agent, queue) = (agent.clone(), queue.clone());
                tokio::spawn(async move {
                    loop {
                        let Some(id) = queue.lock().unwrap().pop() else {
                            break;
                        };
                        let options = ContinueOptions::new(client(vec![ModelResponse::text("ok")]))
                            .approve("c1");
                        let r = agent.continue_by_id(id, options).await.unwrap();
                        assert_eq!(r.status(), RunStatus::Completed);
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "postgres: {workers} worker(s): {:.0} continues/s (each: load + claim + 2 saves), {runs} runs in {:.2} s",
            runs as f64 / secs,
            secs
        );
        assert_eq!(sent.load(Ordering::SeqCst), runs);
    }
    // The race: 8 concurrent continues of each of 50 pauses.
    let sent = Arc::new(AtomicUsize::new(0));
    let agent = mailer(Some(store.clone()), sent.clone());
    let mut duplicates = 0;
    let mut refused = 0;
    for _ in 0..50 {
        let id = paused(&agent).await.run.id;
        let tasks: Vec<_> = (0..8)
            .map(|_| {
                let (agent, id) = (agent.clone(), id.clone());
                tokio::spawn(async move {
                    let options =
                        ContinueOptions::new(client(vec![ModelResponse::text("ok")])).approve("c1");
                    agent.continue_by_id(id, options).await
                })
            })
            .collect();
        let mut ok = 0;
        for t in tasks {
            match t.await.unwrap() {
                Ok(_) => ok += 1,
                Err(e) => {
                    assert!(e.message().ends_with("was already continued"));
                    refused += 1;
                }
            }
        }
        duplicates += ok - 1;
    }
    println!(
        "postgres: race of 8 continues × 50 pauses: {duplicates} duplicates, {refused} refused, executor ran {} times",
        sent.load(Ordering::SeqCst)
    );
    drop(store);
}

async fn overhead_figures(dir: &std::path::Path) {
    let store: Arc<dyn RunStore> = Arc::new(SqliteRunStore::open(dir.join("turns.db")).unwrap());
    let echo = || Tool::new("echo", "", Value::Null, |i, _| Ok(i));
    let plain = create_agent(AgentDefinition::new("t").tool(echo()).max_steps(30)).unwrap();
    let stored = create_agent(
        AgentDefinition::new("t")
            .tool(echo())
            .max_steps(30)
            .store(store),
    )
    .unwrap();
    let responses = || {
        let mut r: Vec<ModelResponse> = (0..24)
            .map(|i| ModelResponse::tool_calls([(format!("c{i}").as_str(), "echo", r#"{"n":1}"#)]))
            .collect();
        r.push(ModelResponse::text("done"));
        r
    };
    let mut times = [Duration::ZERO; 2];
    let rounds = 30;
    for round in 0..rounds + 3 {
        for (i, agent) in [&plain, &stored].into_iter().enumerate() {
            let start = Instant::now();
            let r = agent
                .run(RunOptions::new("go", client(responses())))
                .await
                .unwrap();
            assert_eq!(r.run.step_count, 25);
            if round >= 3 {
                times[i] += start.elapsed();
            }
        }
    }
    let (a, b) = (times[0] / rounds, times[1] / rounds);
    println!(
        "overhead: 25-turn run without store {} , with SQLite {} (+{}, {:.0} µs per save, 26 saves)",
        ms(a),
        ms(b),
        ms(b.saturating_sub(a)),
        b.saturating_sub(a).as_secs_f64() * 1e6 / 26.0
    );
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else to parse.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = std::env::temp_dir().join(format!("phaseo-store-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    rt.block_on(async {
        sqlite_figures(&dir).await;
        overhead_figures(&dir).await;
        match std::env::var("PHASEO_TEST_POSTGRES_URL") {
            Ok(url) => postgres_figures(&url).await,
            Err(_) => panic!("PHASEO_TEST_POSTGRES_URL is not set: run `make store-bench`"),
        }
    });
    let _ = std::fs::remove_dir_all(&dir);
}

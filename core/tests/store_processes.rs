//! Run stores across processes: this test binary re-runs itself as workers (`worker …`
//! arguments). Against SQLite and PostgreSQL: 8 processes race to continue one pause;
//! a worker SIGKILLed after its claim is recovered by another process; processes open a
//! fresh database at once.
mod store_common;

use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use phaseo_agent::store::LeaseConfig;
use phaseo_agent::{
    create_agent, json, Agent, AgentDefinition, ContinueOptions, ModelResponse, RunStatus, Tool,
    Value,
};
use store_common::{open_spec, paused_run, scripted, try_open_spec, Backend, Counter};

fn lease() -> LeaseConfig {
    LeaseConfig::new(Duration::from_millis(500), Duration::from_millis(100))
}

/// The worker's agent: `send` appends a line to `log`, then sleeps `hang` if set.
fn worker_agent(store: Arc<dyn phaseo_agent::store::RunStore>, log: String, hang: bool) -> Agent {
    let send = Tool::new("send", "Sends", Value::Null, move |input, _| {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)?;
        writeln!(f, "{}", std::process::id())?;
        if hang {
            std::thread::sleep(Duration::from_secs(3600));
        }
        Ok(json!({"sent": input}))
    })
    .require_approval();
    create_agent(
        AgentDefinition::new("mailer")
            .tool(send)
            .store(store)
            .lease(lease()),
    )
    .unwrap()
}

fn worker(args: &[String]) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        match args[0].as_str() {
            "open" => match try_open_spec(&args[1]).await {
                Ok(_) => println!("OK"),
                Err(e) => println!("ERR {} {}", e.code(), e.message()),
            },
            mode @ ("continue" | "hang") => {
                let store = open_spec(&args[1]).await;
                let agent = worker_agent(store, args[3].clone(), mode == "hang");
                let options =
                    ContinueOptions::new(scripted([ModelResponse::text("sent")])).approve("c1");
                match agent.continue_by_id(args[2].clone(), options).await {
                    Ok(r) => println!("OK {}", r.status().as_str()),
                    Err(e) => println!("ERR {} {}", e.code(), e.message()),
                }
            }
            other => panic!("unknown worker mode {other}"),
        }
    });
}

fn spawn(args: &[&str]) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .arg("worker")
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

fn output(child: Child) -> String {
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "worker failed: {out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

fn temp_file(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("phaseo-proc-{}", store_common::uuid()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name).display().to_string()
}

fn lines(path: &str) -> usize {
    std::fs::read_to_string(path)
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

async fn race_of_eight_processes(b: &dyn Backend) {
    let spec = b.fresh().await;
    let paused = paused_run(&store_common::agent(
        open_spec(&spec).await,
        &Counter::default(),
        lease(),
    ))
    .await;
    let log = temp_file("executions.log");
    let children: Vec<Child> = (0..8)
        .map(|_| spawn(&["continue", &spec, &paused.run.id, &log]))
        .collect();
    let outs: Vec<String> = children.into_iter().map(output).collect();
    let winners = outs.iter().filter(|o| *o == "OK completed").count();
    let expected = format!("ERR continue_invalid {}", store_common::already(&paused));
    let losers = outs.iter().filter(|o| **o == expected).count();
    assert_eq!((winners, losers), (1, 7), "{outs:#?}");
    assert_eq!(lines(&log), 1, "the executor ran once across processes");
}

async fn sigkilled_worker_is_recovered_by_another_process(b: &dyn Backend) {
    let spec = b.fresh().await;
    let paused = paused_run(&store_common::agent(
        open_spec(&spec).await,
        &Counter::default(),
        lease(),
    ))
    .await;
    let log = temp_file("executions.log");
    let mut child = spawn(&["hang", &spec, &paused.run.id, &log]);
    let start = Instant::now();
    while lines(&log) == 0 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the worker never started"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap(); // SIGKILL, after the claim and mid-tool
    child.wait().unwrap();
    let store = open_spec(&spec).await;
    let row = store.load(&paused.run.id).await.unwrap().unwrap();
    assert_eq!(row.status, "running");
    tokio::time::sleep(Duration::from_millis(600)).await;
    let rescuer = worker_agent(store.clone(), log.clone(), false);
    let done = rescuer
        .recover(
            &paused.run.id,
            ContinueOptions::new(scripted([ModelResponse::text("sent")])),
        )
        .await
        .unwrap();
    assert_eq!(done.status(), RunStatus::Completed);
    assert_eq!(
        done.step_results[0].tool_results[0].result,
        Some(json!({"sent": {"to": "bob"}}))
    );
    assert_eq!(
        lines(&log),
        2,
        "the interrupted tool ran again (at least once)"
    );
    assert_eq!(
        store.load(&paused.run.id).await.unwrap().unwrap().status,
        "completed"
    );
}

async fn processes_open_a_fresh_database_at_once(b: &dyn Backend) {
    let spec = b.fresh().await;
    let children: Vec<Child> = (0..6).map(|_| spawn(&["open", &spec])).collect();
    for out in children.into_iter().map(output) {
        assert_eq!(out, "OK");
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("worker") {
        worker(&args[1..]);
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let backends: Vec<(&str, Box<dyn Backend>)> = vec![
        ("sqlite", Box::new(store_common::Sqlite)),
        ("postgres", Box::new(store_common::Postgres)),
    ];
    let mut passed = 0;
    for (name, b) in &backends {
        rt.block_on(async {
            race_of_eight_processes(b.as_ref()).await;
            println!("test {name}::race_of_eight_processes ... ok");
            sigkilled_worker_is_recovered_by_another_process(b.as_ref()).await;
            println!("test {name}::sigkilled_worker_is_recovered_by_another_process ... ok");
            processes_open_a_fresh_database_at_once(b.as_ref()).await;
            println!("test {name}::processes_open_a_fresh_database_at_once ... ok");
        });
        passed += 3;
    }
    rt.shutdown_background();
    println!("\ntest result: ok. {passed} passed; 0 failed");
}

//! Stdio servers' child processes. The rules (ARCHITECTURE.md "MCP servers"):
//! - a child never outlives its host: on Linux it gets `PR_SET_PDEATHSIG(SIGKILL)`, and
//!   since that signal follows the death of the *thread* that forked it, every child is
//!   forked by one process-lifetime spawner thread, never by a pool thread that may exit;
//! - dropping the [`Child`] kills and reaps it (agent closed or dropped, a restart, a
//!   panic unwinding through the owner);
//! - its stderr is drained by a thread into a short tail kept for error messages.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};

use super::config::McpTransport;

/// Lines of a child's stderr kept for error messages.
const STDERR_TAIL: usize = 20;

/// What to start.
pub(crate) struct Spec {
    pub(crate) command: String,
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) cwd: Option<PathBuf>,
}

impl Spec {
    pub(crate) fn from_transport(t: &McpTransport) -> Option<Self> {
        match t {
            McpTransport::Stdio {
                command,
                args,
                env,
                cwd,
            } => Some(Spec {
                command: command.clone(),
                args: args.clone(),
                env: env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                cwd: cwd.clone(),
            }),
            McpTransport::Http { .. } => None,
        }
    }
}

/// A running child: killed and reaped when dropped.
pub(crate) struct Child {
    child: Mutex<std::process::Child>,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

/// The pipes of a started child.
pub(crate) struct Pipes {
    pub(crate) stdin: tokio::process::ChildStdin,
    pub(crate) stdout: tokio::process::ChildStdout,
}

impl Child {
    /// The last lines the child wrote to stderr, joined (empty when none).
    pub(crate) fn stderr_tail(&self) -> String {
        let lines = self.stderr.lock().map(|l| l.clone()).unwrap_or_default();
        lines.into_iter().collect::<Vec<_>>().join("\n")
    }

    /// Whether the child has exited, with its status text.
    pub(crate) fn exit_status(&self) -> Option<String> {
        let mut child = self.child.lock().ok()?;
        match child.try_wait() {
            Ok(Some(status)) => Some(status.to_string()),
            _ => None,
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if let Ok(child) = self.child.get_mut() {
            let _ = child.kill();
            // SIGKILL is immediate; waiting reaps the zombie.
            let _ = child.wait();
        }
    }
}

type SpawnReply = Result<(std::process::Child, Option<std::process::ChildStderr>), String>;
type SpawnQueue = Mutex<mpsc::Sender<(Spec, mpsc::Sender<SpawnReply>)>>;

/// The spawner thread's queue (started on first use, lives as long as the process).
fn spawner() -> &'static SpawnQueue {
    static SPAWNER: OnceLock<SpawnQueue> = OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<(Spec, mpsc::Sender<SpawnReply>)>();
        std::thread::Builder::new()
            .name("phaseo-mcp-spawner".to_owned())
            .spawn(move || {
                for (spec, reply) in rx {
                    let _ = reply.send(spawn_now(&spec));
                }
            })
            .expect("could not start the MCP spawner thread");
        Mutex::new(tx)
    })
}

fn spawn_now(spec: &Spec) -> SpawnReply {
    let mut cmd = Command::new(&spec.command);
    cmd.args(&spec.args)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = &spec.cwd {
        cmd.current_dir(dir);
    }
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: only async-signal-safe calls (prctl, getppid, _exit) run in the child
        // between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The host died between fork and prctl: nobody will signal us.
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("could not start {:?}: {e}", spec.command))?;
    let stderr = child.stderr.take();
    Ok((child, stderr))
}

/// Starts a child (forked by the spawner thread) and hands back its pipes as tokio I/O.
/// Must be called inside a tokio runtime with I/O enabled.
pub(crate) async fn start(spec: Spec) -> Result<(Child, Pipes), String> {
    let (tx, rx) = mpsc::channel();
    spawner()
        .lock()
        .map_err(|_| "the MCP spawner is poisoned".to_owned())?
        .send((spec, tx))
        .map_err(|_| "the MCP spawner thread is gone".to_owned())?;
    let (mut child, stderr) = tokio::task::spawn_blocking(move || rx.recv())
        .await
        .map_err(|e| e.to_string())?
        .map_err(|_| "the MCP spawner thread is gone".to_owned())??;
    let tail = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL)));
    if let Some(stderr) = stderr {
        let tail = tail.clone();
        // A thread, not a task: it must drain even when no runtime is polling.
        let _ = std::thread::Builder::new()
            .name("phaseo-mcp-stderr".to_owned())
            .spawn(move || {
                for line in BufReader::new(stderr).lines() {
                    let Ok(line) = line else { break };
                    if let Ok(mut t) = tail.lock() {
                        if t.len() == STDERR_TAIL {
                            t.pop_front();
                        }
                        t.push_back(line);
                    }
                }
            });
    }
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let child = Child {
        child: Mutex::new(child),
        stderr: tail,
    };
    let (Some(stdin), Some(stdout)) = (stdin, stdout) else {
        return Err("the child has no stdin/stdout pipe".to_owned());
    };
    let stdin = tokio::process::ChildStdin::from_std(stdin).map_err(|e| e.to_string())?;
    let stdout = tokio::process::ChildStdout::from_std(stdout).map_err(|e| e.to_string())?;
    Ok((child, Pipes { stdin, stdout }))
}

//! The shared tokio runtime used by blocking entry points and bindings.

use std::future::Future;
use std::sync::OnceLock;

use tokio::runtime::Runtime;

static RUNTIME: OnceLock<(u32, Runtime)> = OnceLock::new();

/// The process-wide multi-thread runtime, created on first use. Using it in a child
/// process after `fork` is refused with a panic naming the problem (a forked runtime has
/// no worker threads).
pub fn runtime() -> &'static Runtime {
    let (pid, rt) = RUNTIME.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .thread_name("phaseo-agent")
            .enable_all()
            .build()
            .expect("creating the tokio runtime");
        (std::process::id(), rt)
    });
    assert_eq!(
        *pid,
        std::process::id(),
        "phaseo-agent: the runtime was created before fork(); create agents in the child process"
    );
    rt
}

/// Runs a future to completion on the shared runtime, blocking the calling thread.
pub fn block_on<F: Future>(future: F) -> F::Output {
    runtime().block_on(future)
}

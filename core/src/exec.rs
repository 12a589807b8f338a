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
        #[cfg(feature = "mimalloc")]
        crate::allocator::tune();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .thread_name("phaseo-agent")
            .on_thread_start(block_sigpipe)
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

/// Blocks SIGPIPE on the calling thread (each of the runtime's threads, as it starts).
///
/// A write to a pipe whose reader is gone (an MCP server that exited, or closed its stdin)
/// raises SIGPIPE on the writing thread. Python and Node ignore the signal process-wide,
/// but a Go program only does so on its own threads: on a thread Go did not create, the
/// default action runs and ends the whole process. Blocked, the signal stays pending on
/// the thread and the write fails with `EPIPE`, which the MCP client reports as the
/// server's failure (`mcp_failed`). Children are unaffected: `std::process::Command`
/// starts them with an empty signal mask and SIGPIPE at its default.
fn block_sigpipe() {
    #[cfg(all(unix, feature = "mcp"))]
    // SAFETY: sigemptyset/sigaddset initialise a local set; pthread_sigmask only changes
    // this thread's mask.
    unsafe {
        let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigemptyset(set.as_mut_ptr());
        libc::sigaddset(set.as_mut_ptr(), libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, set.as_ptr(), std::ptr::null_mut());
    }
}

/// Runs a future to completion on the shared runtime, blocking the calling thread.
pub fn block_on<F: Future>(future: F) -> F::Output {
    runtime().block_on(future)
}

#[cfg(all(test, unix, feature = "mcp"))]
mod tests {
    /// Every thread of the runtime has SIGPIPE blocked (see `block_sigpipe`), workers and
    /// the blocking pool alike.
    #[test]
    fn runtime_threads_block_sigpipe() {
        fn blocked() -> bool {
            // SAFETY: reads this thread's signal mask into a local set.
            unsafe {
                let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
                libc::sigemptyset(set.as_mut_ptr());
                libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), set.as_mut_ptr());
                libc::sigismember(set.as_ptr(), libc::SIGPIPE) == 1
            }
        }
        let rt = super::runtime();
        assert!(rt.block_on(rt.spawn(async { blocked() })).unwrap());
        assert!(rt
            .block_on(rt.spawn_blocking(blocked))
            .expect("the blocking task ran"));
    }
}

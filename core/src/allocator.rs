//! How the bindings' allocator gives memory back to the system.
//!
//! Every binding's library allocates with mimalloc. mimalloc returns the memory it holds
//! free to the system (`MADV_DONTNEED`) once its purge delay has passed, and counts that
//! delay from the first free since its last purge: with its default of one second, a
//! process that runs agents back to back hands back, once a second, the pages between two
//! runs, and the next run takes a page fault for every one of them again. Measured in the
//! JVM benchmark (`docs/performance.md`), that was about a seventh of a sequential run's time.
//!
//! So the core sets the delay to [`PURGE_DELAY_MS`] when it first builds its runtime
//! ([`crate::exec::runtime`], which every binding's runs go through): memory freed still
//! goes back, ten seconds after a burst rather than one, and counts in the process's RSS
//! until then. `MIMALLOC_PURGE_DELAY` in the environment (mimalloc's own setting, in
//! milliseconds; `0` gives memory back at once, `-1` never) is left as the process's owner
//! set it: a check of RSS for leaks sets it to 0, as the Go and C# hostile probes do.

/// The purge delay the core sets, in milliseconds.
pub const PURGE_DELAY_MS: i64 = 10_000;

/// mimalloc's environment variable for the delay.
const PURGE_DELAY_VAR: &str = "MIMALLOC_PURGE_DELAY";

/// `mi_option_purge_delay` of mimalloc's `mimalloc.h` (its options are an enum, which
/// `libmimalloc-sys` does not name): the index the delay has in the pinned version.
/// `core/tests/allocator.rs` checks it against the variable mimalloc reads for it.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Sets mimalloc's purge delay to [`PURGE_DELAY_MS`], unless `MIMALLOC_PURGE_DELAY` is
/// set. Called once, as the runtime is built; calling it again changes nothing.
pub(crate) fn tune() {
    if std::env::var_os(PURGE_DELAY_VAR).is_some() {
        return;
    }
    // SAFETY: `mi_option_set` stores a number in mimalloc's option table; the runtime's
    // `OnceLock` runs this once, and a purge that reads the option meanwhile sees either
    // value, both valid.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS as _) };
}

/// The purge delay mimalloc uses now, in milliseconds (`-1`: it never purges).
#[allow(clippy::useless_conversion)] // `c_long` is 32 bits on Windows
pub fn purge_delay_ms() -> i64 {
    // SAFETY: reads mimalloc's option table (initialising the option from the environment
    // on first use, as any allocation's purge does).
    i64::from(unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) })
}

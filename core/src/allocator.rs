//! The bindings' allocator: mimalloc, asked the way its fast paths expect, and how it gives
//! memory back to the system.
//!
//! Every binding's library allocates with mimalloc, through [`MiMalloc`]. Rust gives every
//! allocation an alignment; the `mimalloc` crate passes each one to `mi_malloc_aligned`,
//! which in mimalloc v3 takes its fast path only when the size class's next free block
//! happens to be aligned, and otherwise falls back to a path that over-allocates: a 48-byte
//! value lands in a block of a larger size class. Yet every block mimalloc hands out is
//! aligned to 16 bytes or to a multiple of 8 that fits its size (see `PLAIN_ALIGN`), so
//! [`MiMalloc`] serves a request whose alignment is at most 16 bytes and divides its size
//! with the plain `mi_malloc` family, and only the others with the aligned functions:
//! fewer instructions an allocation and no over-allocation (`docs/performance.md` has the
//! counts).
//!
//! mimalloc returns the memory it holds
//! free to the system (`MADV_DONTNEED`) once its purge delay has passed, and counts that
//! delay from the first free since its last purge: with its default of one second, a
//! process that runs agents back to back hands back, once a second, the pages between two
//! runs, and the next run takes a page fault for every one of them again: in a profile of
//! the Java API's sequential runs with that delay, page faults, `madvise` and the fresh
//! pages' free lists are about a fifth of the native library's time (`docs/performance.md`).
//!
//! So the core sets the delay to [`PURGE_DELAY_MS`] when it first builds its runtime
//! ([`crate::exec::runtime`], which every binding's runs go through): memory freed still
//! goes back, ten seconds after a burst rather than one, and counts in the process's RSS
//! until then. `MIMALLOC_PURGE_DELAY` in the environment (mimalloc's own setting, in
//! milliseconds; `0` gives memory back at once, `-1` never) is left as the process's owner
//! set it: a check of RSS for leaks sets it to 0, as the Go and C# hostile probes do.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys as mi;

/// The largest alignment every mimalloc block of a fitting size has (`MI_MAX_ALIGN_SIZE` of
/// its `types.h`): the first block of a page is aligned to it, every block size is a
/// multiple of 8, and the block size for a multiple of 16 bytes is one too
/// (`core/tests/allocator.rs` checks both).
const PLAIN_ALIGN: usize = 16;

/// Whether a `size`-byte block with `align` is served by the plain (unaligned) functions.
#[inline]
fn plain(size: usize, align: usize) -> bool {
    align <= PLAIN_ALIGN && size.is_multiple_of(align)
}

/// mimalloc as a Rust global allocator, the plain functions for the alignments every block
/// has (see the module comment). Declared by each binding's library:
///
/// ```
/// #[global_allocator]
/// static GLOBAL: phaseo_agent::allocator::MiMalloc = phaseo_agent::allocator::MiMalloc;
///
/// let words: Vec<String> = (0..1000).map(|i| i.to_string()).collect();
/// assert_eq!(words[999], "999");
/// ```
pub struct MiMalloc;

// SAFETY: every function hands mimalloc a layout's size and (where not plain) its
// alignment, a power of two as `Layout` guarantees; a plain request's block is aligned as
// `plain` requires (see `PLAIN_ALIGN`); mimalloc's `mi_free` and `mi_realloc*` take any
// block it returned, whichever function made it.
unsafe impl GlobalAlloc for MiMalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let (size, align) = (layout.size(), layout.align());
        if plain(size, align) {
            unsafe { mi::mi_malloc(size) as *mut u8 }
        } else {
            unsafe { mi::mi_malloc_aligned(size, align) as *mut u8 }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let (size, align) = (layout.size(), layout.align());
        if plain(size, align) {
            unsafe { mi::mi_zalloc(size) as *mut u8 }
        } else {
            unsafe { mi::mi_zalloc_aligned(size, align) as *mut u8 }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        unsafe { mi::mi_free(ptr as *mut c_void) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let align = layout.align();
        if plain(new_size, align) {
            unsafe { mi::mi_realloc(ptr as *mut c_void, new_size) as *mut u8 }
        } else {
            unsafe { mi::mi_realloc_aligned(ptr as *mut c_void, new_size, align) as *mut u8 }
        }
    }
}

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

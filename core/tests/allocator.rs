//! The bindings' allocator (core/src/allocator.rs): `MiMalloc` hands out blocks as aligned
//! as asked, and the purge delay the core gives mimalloc is set when the runtime is built,
//! unless the process's environment sets it.
//!
//! The cases that name an environment run `child_reports_its_delay` in a child process
//! (this test binary again, filtered to that case), so that the delay is read and set in a
//! process whose environment the case chose; run on its own, that case checks this process.

use std::process::Command;

use phaseo_agent::allocator::{purge_delay_ms, PURGE_DELAY_MS};

/// Set in a child: the case it runs prints the delay after building the runtime.
const CHILD: &str = "PHASEO_ALLOCATOR_TEST_CHILD";

/// The delay a child process ends with, given `MIMALLOC_PURGE_DELAY` (or none).
fn delay_in_child(variable: Option<&str>) -> i64 {
    let mut child = Command::new(std::env::current_exe().expect("test binary"));
    child
        .args([
            "--exact",
            "child_reports_its_delay",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1");
    match variable {
        Some(v) => child.env("MIMALLOC_PURGE_DELAY", v),
        None => child.env_remove("MIMALLOC_PURGE_DELAY"),
    };
    let out = child.output().expect("running the child");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed: {text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = text
        .lines()
        .find_map(|l| l.split_once("purge-delay=").map(|(_, delay)| delay))
        .unwrap_or_else(|| panic!("the child printed no delay: {text}"));
    line.trim().parse().expect("a number")
}

#[test]
fn child_reports_its_delay() {
    if std::env::var_os(CHILD).is_none() {
        // Run as a case of its own (not as a child): the delay in this process once the
        // runtime exists is the core's, or the environment's.
        phaseo_agent::exec::runtime();
        let expected = std::env::var("MIMALLOC_PURGE_DELAY")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(PURGE_DELAY_MS);
        assert_eq!(purge_delay_ms(), expected);
        return;
    }
    phaseo_agent::exec::runtime();
    println!("purge-delay={}", purge_delay_ms());
}

#[test]
fn the_runtime_sets_a_ten_second_delay() {
    assert_eq!(PURGE_DELAY_MS, 10_000);
    assert_eq!(delay_in_child(None), PURGE_DELAY_MS);
}

#[test]
fn mimallocs_own_variable_is_left_as_set() {
    // Also what shows that the option the core sets is the one mimalloc reads this
    // variable into: a wrong index would not report the variable's value.
    assert_eq!(delay_in_child(Some("1234")), 1234);
    assert_eq!(delay_in_child(Some("-1")), -1);
}

/// The block size mimalloc gives a request of each size: a multiple of 8, and of 16 for a
/// multiple of 16 bytes. With pages whose first block is 16-aligned, that is what makes
/// every block the plain functions hand out aligned as `MiMalloc` requires.
#[test]
fn block_sizes_keep_the_alignment_the_plain_functions_rely_on() {
    use libmimalloc_sys::mi_good_size;
    let mut size = 8;
    while size <= 4 << 20 {
        // SAFETY: a pure function of its argument.
        let block = unsafe { mi_good_size(size) };
        assert!(block >= size, "{size} → {block}");
        assert_eq!(block % 8, 0, "{size} bytes get a {block}-byte block");
        if size % 16 == 0 {
            assert_eq!(block % 16, 0, "{size} bytes get a {block}-byte block");
        }
        size += if size < 64 << 10 { 8 } else { 4 << 10 };
    }
}

/// Every layout gets a block as aligned as it asks, writable over its whole size, zeroed
/// when asked, and keeps its bytes when it grows or shrinks: the plain functions (alignment
/// up to 16 dividing the size) and the aligned ones (the rest, e.g. 24 bytes aligned to 16)
/// alike, many blocks of each size, so that they come from all over a page rather than its
/// first block only.
#[test]
fn every_layout_gets_an_aligned_block_that_keeps_its_bytes() {
    use phaseo_agent::allocator::MiMalloc;
    use std::alloc::{GlobalAlloc, Layout};

    let sizes = (1..=512usize).chain((520..=4096).step_by(40)).chain([
        6000,
        8192,
        10_000,
        65_536,
        100_000,
        1 << 20,
        5 << 20,
    ]);
    for align in [1usize, 2, 4, 8, 16, 32, 64, 4096] {
        for size in sizes.clone() {
            let layout = Layout::from_size_align(size, align).expect("a valid layout");
            let blocks: Vec<*mut u8> = (0..if size > 65_536 { 2 } else { 24 })
                .map(|i| {
                    // SAFETY: a non-zero size; each block is freed below with its layout.
                    let p = unsafe {
                        if i % 2 == 0 {
                            MiMalloc.alloc(layout)
                        } else {
                            MiMalloc.alloc_zeroed(layout)
                        }
                    };
                    assert!(!p.is_null(), "{size} bytes, align {align}");
                    assert_eq!(p as usize % align, 0, "{size} bytes, align {align}: {p:p}");
                    if i % 2 == 1 {
                        // SAFETY: `size` bytes were just allocated at `p`.
                        let bytes = unsafe { std::slice::from_raw_parts(p, size) };
                        assert!(bytes.iter().all(|b| *b == 0), "zeroed {size} bytes");
                    }
                    // SAFETY: as above.
                    unsafe { std::ptr::write_bytes(p, (size % 251) as u8, size) };
                    p
                })
                .collect();
            for p in blocks {
                let grown = size * 3 + align;
                let grown = grown - grown % align;
                // SAFETY: `p` holds `size` bytes of `layout`; the new size keeps the
                // alignment a multiple of itself.
                let q = unsafe { MiMalloc.realloc(p, layout, grown) };
                assert!(!q.is_null());
                assert_eq!(q as usize % align, 0, "grown to {grown}, align {align}");
                // SAFETY: `q` holds `grown` bytes, the first `size` of them copied.
                let kept = unsafe { std::slice::from_raw_parts(q, size) };
                assert!(
                    kept.iter().all(|b| *b == (size % 251) as u8),
                    "bytes kept growing {size}"
                );
                let grown_layout = Layout::from_size_align(grown, align).expect("valid");
                // SAFETY: `q` is a block of `grown_layout`.
                let r = unsafe { MiMalloc.realloc(q, grown_layout, size) };
                assert_eq!(r as usize % align, 0, "shrunk to {size}, align {align}");
                // SAFETY: `r` holds `size` bytes.
                let kept = unsafe { std::slice::from_raw_parts(r, size) };
                assert!(
                    kept.iter().all(|b| *b == (size % 251) as u8),
                    "bytes kept shrinking {size}"
                );
                // SAFETY: `r` is a block of `layout`, freed once.
                unsafe { MiMalloc.dealloc(r, layout) };
            }
        }
    }
}

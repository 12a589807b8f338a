//! The purge delay the core gives mimalloc (core/src/allocator.rs): set when the runtime is
//! built, unless the process's environment sets it.
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

//! What the hostile-input property tests share: a count of the process's panics (a server's
//! or client's tasks included, which tokio would only print), their proptest configuration
//! and a generator of JSON values.
#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Once;

use phaseo_agent::{json, Value};
use proptest::prelude::*;
use proptest::test_runner::Config;

static PANICS: AtomicUsize = AtomicUsize::new(0);

/// Panics so far in this process (counting from the first call).
pub fn panics() -> usize {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.fetch_add(1, Ordering::SeqCst);
            previous(info);
        }));
    });
    PANICS.load(Ordering::SeqCst)
}

/// `cases` cases, or `PROPTEST_CASES` (`make fuzz-core` raises it); no failure files.
pub fn config(cases: u32) -> Config {
    Config {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(cases),
        failure_persistence: None,
        ..Config::default()
    }
}

/// Any JSON value of up to `depth` levels: odd numbers (2^64 - 1, any float JSON holds),
/// text of any characters, and the `extra` leaves a test cares about.
pub fn json_value(depth: u32, extra: Vec<Value>) -> impl Strategy<Value = Value> + Clone {
    let odd = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        Just(json!(u64::MAX)),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::from)),
        ".{0,12}".prop_map(Value::from),
    ];
    let leaf = if extra.is_empty() {
        odd.boxed()
    } else {
        prop_oneof![4 => odd, 1 => prop::sample::select(extra)].boxed()
    };
    leaf.prop_recursive(depth, 24, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::from),
            prop::collection::btree_map(".{0,8}", inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

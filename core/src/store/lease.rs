//! How long a worker holds a run it works on, and how often it renews that hold.

use std::time::Duration;

/// Lease settings of a store-backed run: a worker holds a run for `duration` and renews
/// every `renew_every` while it works; a run whose lease expired can be recovered by any
/// worker (docs/behaviour.md §10).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaseConfig {
    /// How long a claim or renewal holds the run (default 30 s).
    pub duration: Duration,
    /// How often a working run renews its lease (default 10 s).
    pub renew_every: Duration,
}

impl Default for LeaseConfig {
    fn default() -> Self {
        Self {
            duration: Duration::from_secs(30),
            renew_every: Duration::from_secs(10),
        }
    }
}

impl LeaseConfig {
    /// A lease of `duration`, renewed every `renew_every`.
    pub fn new(duration: Duration, renew_every: Duration) -> Self {
        Self {
            duration,
            renew_every,
        }
    }

    pub(crate) fn duration_ms(&self) -> i64 {
        self.duration.as_millis().min(i64::MAX as u128) as i64
    }
}

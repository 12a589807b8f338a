//! How long a worker holds a run it works on, and how often it renews that hold.

use std::time::Duration;

use crate::AgentError;

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

    /// A lease from a host's numbers of milliseconds, which must satisfy
    /// `0 < renew_every_ms < duration_ms` (a finite duration; one too long for a clock is the
    /// longest, [`crate::duration::from_ms`]); else `definition_invalid` naming the caller's
    /// keys, `keys = [duration key, renewal key]` (`durationMs`, `renew_every_ms`, …).
    pub fn from_ms(
        duration_ms: f64,
        renew_every_ms: f64,
        keys: [&str; 2],
    ) -> Result<Self, AgentError> {
        let [duration_key, renew_key] = keys;
        if !(duration_ms.is_finite()
            && duration_ms > 0.0
            && renew_every_ms > 0.0
            && renew_every_ms < duration_ms)
        {
            return Err(AgentError::definition_invalid(format!(
                "Invalid agent definition: lease needs 0 < {renew_key} < {duration_key} (got {duration_key}={duration_ms}, {renew_key}={renew_every_ms})"
            )));
        }
        Ok(Self::new(
            crate::duration::from_ms(duration_ms),
            crate::duration::from_ms(renew_every_ms),
        ))
    }

    pub(crate) fn duration_ms(&self) -> i64 {
        self.duration.as_millis().min(i64::MAX as u128) as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;

    const KEYS: [&str; 2] = ["duration_ms", "renew_every_ms"];

    #[test]
    fn a_lease_from_numbers_needs_a_renewal_inside_its_duration() {
        let lease = LeaseConfig::from_ms(1_000.0, 250.0, KEYS).unwrap();
        assert_eq!(lease.duration, Duration::from_millis(1_000));
        assert_eq!(lease.renew_every, Duration::from_millis(250));
        // Too long for a clock is the longest lease, not a panic.
        let long = LeaseConfig::from_ms(1e300, 10_000.0, KEYS).unwrap();
        assert_eq!(long.duration, Duration::from_millis(u64::MAX));
        for (duration, renew) in [
            (100.0, 200.0),
            (100.0, 100.0),
            (0.0, -1.0),
            (100.0, 0.0),
            (f64::INFINITY, 10.0),
            (f64::NAN, 10.0),
            (100.0, f64::NAN),
        ] {
            let e = LeaseConfig::from_ms(duration, renew, KEYS).unwrap_err();
            assert_eq!(e.code(), ErrorCode::DefinitionInvalid);
            assert_eq!(
                e.message(),
                format!("Invalid agent definition: lease needs 0 < renew_every_ms < duration_ms (got duration_ms={duration}, renew_every_ms={renew})")
            );
        }
    }
}

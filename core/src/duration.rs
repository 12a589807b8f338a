//! Durations from the numbers hosts pass (milliseconds or seconds, as floats). A number
//! too large for a `Duration` is the longest duration a deadline can hold rather than a
//! panic: a timeout of `1e300` ms means "never", and neither its conversion nor a deadline
//! made from it (`Instant::now() + d`) may bring the process down (docs/behaviour.md §2.2).

use std::time::{Duration, Instant};

/// The longest duration a host's number becomes: `u64::MAX` milliseconds (about 585
/// million years), which can be added to any `Instant` of a running process.
pub const LONGEST: Duration = Duration::from_millis(u64::MAX);

/// `ms` milliseconds: NaN and numbers at or below zero are zero, numbers beyond
/// [`LONGEST`] (infinity included) are [`LONGEST`].
pub fn from_ms(ms: f64) -> Duration {
    from_secs(ms / 1000.0)
}

/// `secs` seconds, saturating as [`from_ms`] does.
pub fn from_secs(secs: f64) -> Duration {
    if secs.is_nan() || secs <= 0.0 {
        return Duration::ZERO;
    }
    Duration::try_from_secs_f64(secs).map_or(LONGEST, |d| d.min(LONGEST))
}

/// The instant `secs` seconds from now (saturating as [`from_secs`]); `None` without a
/// limit.
pub fn deadline_in_secs(secs: Option<f64>) -> Option<Instant> {
    secs.map(|s| Instant::now() + from_secs(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saturates_instead_of_panicking() {
        assert_eq!(from_ms(1500.0), Duration::from_millis(1500));
        assert_eq!(from_ms(0.5), Duration::from_micros(500));
        for zero in [0.0, -1.0, f64::NAN, f64::NEG_INFINITY, -1e300] {
            assert_eq!(from_ms(zero), Duration::ZERO, "{zero}");
        }
        for huge in [1e300, f64::INFINITY, f64::MAX, u64::MAX as f64 * 2.0] {
            assert_eq!(from_ms(huge), LONGEST, "{huge}");
            assert_eq!(from_secs(huge), LONGEST, "{huge}");
        }
        let far = deadline_in_secs(Some(f64::INFINITY)).expect("a deadline");
        assert!(far > Instant::now() + Duration::from_secs(1 << 40));
        assert_eq!(deadline_in_secs(None), None);
    }
}

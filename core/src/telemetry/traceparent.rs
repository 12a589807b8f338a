//! W3C Trace Context `traceparent` values (`00-{trace id}-{span id}-{flags}`).

use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};

/// The `traceparent` header value of a span.
pub(crate) fn format(cx: &SpanContext) -> String {
    format!(
        "00-{}-{}-{:02x}",
        cx.trace_id(),
        cx.span_id(),
        cx.trace_flags().to_u8()
    )
}

/// The remote span context of a `traceparent` value; `None` when it is not one (an
/// unknown future version is read by its first four fields, as the W3C spec asks).
pub(crate) fn parse(value: &str) -> Option<SpanContext> {
    let parts: Vec<&str> = value.trim().split('-').collect();
    if parts.len() < 4 {
        return None;
    }
    let (version, trace, span, flags) = (parts[0], parts[1], parts[2], parts[3]);
    let hex = |s: &str, len: usize| {
        s.len() == len
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    if !hex(version, 2) || version == "ff" || (version == "00" && parts.len() != 4) {
        return None;
    }
    if !hex(trace, 32) || !hex(span, 16) || !hex(flags, 2) {
        return None;
    }
    let trace_id = TraceId::from_hex(trace).ok()?;
    let span_id = SpanId::from_hex(span).ok()?;
    if trace_id == TraceId::INVALID || span_id == SpanId::INVALID {
        return None;
    }
    let flags = u8::from_str_radix(flags, 16).ok()?;
    Some(SpanContext::new(
        trace_id,
        span_id,
        TraceFlags::new(flags & 1),
        true,
        TraceState::NONE,
    ))
}

/// Whether `value` is a valid W3C `traceparent`.
pub fn is_valid_traceparent(value: &str) -> bool {
    parse(value).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let v = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let cx = parse(v).unwrap();
        assert!(cx.is_sampled());
        assert_eq!(format(&cx), v);
    }

    #[test]
    fn refuses_malformed() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",
        ] {
            assert!(parse(bad).is_none(), "{bad}");
        }
    }
}

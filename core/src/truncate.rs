//! Output truncation (docs/behaviour.md §2.8), by Unicode scalar values.

/// Truncates `content` to `max` characters around the notice `…[truncated N chars]…`.
pub fn truncate_output(content: String, max: usize) -> String {
    let len = content.chars().count();
    if len <= max {
        return content;
    }
    let head = max / 2;
    let tail = max - head;
    let head_end = content
        .char_indices()
        .nth(head)
        .map(|(i, _)| i)
        .unwrap_or(content.len());
    let tail_start = if tail == 0 {
        content.len()
    } else {
        content
            .char_indices()
            .nth(len - tail)
            .map(|(i, _)| i)
            .unwrap_or(content.len())
    };
    format!(
        "{}…[truncated {} chars]…{}",
        &content[..head_end],
        len - max,
        &content[tail_start..]
    )
}

#[cfg(test)]
mod tests {
    use super::truncate_output;

    #[test]
    fn keeps_short_content_and_splits_long_content_by_characters() {
        assert_eq!(truncate_output("héllo".into(), 5), "héllo");
        assert_eq!(
            truncate_output("ñandú😀ab".into(), 4),
            "ña…[truncated 4 chars]…ab"
        );
        assert_eq!(
            truncate_output("abcdef".into(), 3),
            "a…[truncated 3 chars]…ef"
        );
        assert_eq!(truncate_output("abc".into(), 0), "…[truncated 3 chars]…");
    }
}

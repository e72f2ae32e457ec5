//! Small text helpers for the pages.

/// `1 h 02 min`, `3 min 04 s`, `12.5 s`, `850 ms`.
pub fn duration(ms: i64) -> String {
    let ms = ms.max(0);
    let secs = ms / 1000;
    match secs {
        0 => format!("{ms} ms"),
        1..60 => format!("{:.1} s", ms as f64 / 1000.0),
        60..3600 => format!("{} min {:02} s", secs / 60, secs % 60),
        _ => format!("{} h {:02} min", secs / 3600, secs % 3600 / 60),
    }
}

/// A rule's or a profile's short id: what follows `_rule_` or `_profile_`.
pub fn short_id(id: &str) -> &str {
    ["_rule_", "_profile_"].iter().find_map(|m| id.find(m).map(|i| &id[i + m.len()..])).unwrap_or(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_ids_read_short() {
        assert_eq!(duration(850), "850 ms");
        assert_eq!(duration(12_500), "12.5 s");
        assert_eq!(duration(184_000), "3 min 04 s");
        assert_eq!(duration(3_720_000), "1 h 02 min");
        assert_eq!(short_id("xccdf_org.ssgproject.content_rule_sshd_set_keepalive"), "sshd_set_keepalive");
        assert_eq!(short_id("xccdf_org.ssgproject.content_profile_standard"), "standard");
        assert_eq!(short_id("plain"), "plain");
    }
}

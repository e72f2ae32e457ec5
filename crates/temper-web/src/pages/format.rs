//! Small text helpers for the pages.

/// A rule's or a profile's short id: what follows `_rule_` or `_profile_`.
pub fn short_id(id: &str) -> &str {
    ["_rule_", "_profile_"].iter().find_map(|m| id.find(m).map(|i| &id[i + m.len()..])).unwrap_or(id)
}

/// A score as a percentage with two decimals (`61.25%`), `-` when not known.
pub fn percent(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.2}%"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_read_short() {
        assert_eq!(short_id("xccdf_org.ssgproject.content_rule_sshd_set_keepalive"), "sshd_set_keepalive");
        assert_eq!(short_id("xccdf_org.ssgproject.content_profile_standard"), "standard");
        assert_eq!(short_id("plain"), "plain");
    }
}

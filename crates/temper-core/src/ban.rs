//! A Reflector's ban, checked before the harness keeps or enforces it. The Reflector reads what
//! the guest wrote, and the guest is hostile: a ban is what a poisoned reflection would use to
//! stop every fix, so a ban that forbids too much is refused, with its reason.
//!
//! A ban is refused when it does not compile (or is too large), when it matches the empty
//! string (`.*`, `a*`, `^`), or when it matches more than half of a corpus of short unrelated
//! scripts (`.`, `\w`). With the fixes it would forbid ([`BanScope`]), it is refused too when it
//! matches any text every derived fix holds (`set -euo pipefail`, the guard functions), every
//! one of a sample derived fix of each family, or every stock fix of the content (or more than
//! half of them).
use regex::{Regex, RegexBuilder};
use temper_scap::Benchmark;

const MAX_BAN_CHARS: usize = 500;

/// Benign, unrelated one-liners a narrow ban must mostly leave alone.
const CORPUS: &[&str] = &[
    "a",
    "true",
    "echo ok",
    "#!/bin/bash\nset -euo pipefail\n",
    "sed -i 's/^#\\?PermitEmptyPasswords.*/PermitEmptyPasswords no/' /etc/ssh/sshd_config",
    "dnf install -y aide",
    "chmod 0600 /etc/shadow",
    "sysctl -w kernel.randomize_va_space=2",
    "printf 'install usb-storage /bin/false\\n' > /etc/modprobe.d/usb-storage.conf",
];

/// Why a ban is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BanRefusal {
    #[error("ban is empty")]
    Empty,
    #[error("ban is longer than {MAX_BAN_CHARS} characters")]
    TooLong,
    #[error("ban is not a valid regex: {0}")]
    Invalid(String),
    #[error("ban matches the empty string, so it would match every script")]
    MatchesEmpty,
    #[error("ban is too broad: it matches {hits} of {of} unrelated sample scripts")]
    TooBroad { hits: usize, of: usize },
    #[error("ban matches `{text}`, which every derived fix holds: it would forbid every derived fix")]
    DerivedPreamble { text: String },
    #[error("ban matches every one of the {of} sample derived fixes (one of each family): it would forbid every derived fix")]
    EveryDerived { of: usize },
    #[error("ban matches {hits} of the content's {of} stock fixes: it would forbid every stock fix, or most of them")]
    StockFixes { hits: usize, of: usize },
}

/// The ban alone: it compiles, is not too large, and matches neither the empty string nor most
/// unrelated scripts.
pub fn check_ban(pattern: &str) -> Result<Regex, BanRefusal> {
    if pattern.trim().is_empty() {
        return Err(BanRefusal::Empty);
    }
    if pattern.chars().count() > MAX_BAN_CHARS {
        return Err(BanRefusal::TooLong);
    }
    let re =
        RegexBuilder::new(pattern).size_limit(1 << 20).dfa_size_limit(1 << 20).build().map_err(|e| BanRefusal::Invalid(e.to_string()))?;
    if re.is_match("") {
        return Err(BanRefusal::MatchesEmpty);
    }
    let hits = CORPUS.iter().filter(|s| re.is_match(s)).count();
    if hits * 2 > CORPUS.len() {
        return Err(BanRefusal::TooBroad { hits, of: CORPUS.len() });
    }
    Ok(re)
}

/// What a ban must leave alone: the derived fixes (their fixed text and a sample of each
/// family) and the content's stock fixes.
#[derive(Debug, Clone)]
pub struct BanScope<'a> {
    stock: Vec<&'a str>,
}

impl<'a> BanScope<'a> {
    /// The stock fixes of `content`'s selected rules.
    pub fn of(content: &'a Benchmark) -> Self {
        Self::with_stock(content.selected_rules.iter().filter_map(|r| r.fix.as_ref()).map(|f| f.script.as_str()))
    }

    pub fn with_stock(stock: impl IntoIterator<Item = &'a str>) -> Self {
        Self { stock: stock.into_iter().filter(|s| !s.trim().is_empty()).collect() }
    }

    /// The ban alone ([`check_ban`]), then against the fixes it would forbid.
    pub fn check(&self, pattern: &str) -> Result<Regex, BanRefusal> {
        let re = check_ban(pattern)?;
        if let Some(text) = temper_derive::fixed_text().iter().find_map(|t| re.find(t).map(|m| line_of(t, m))) {
            return Err(BanRefusal::DerivedPreamble { text });
        }
        let samples = temper_derive::samples();
        if samples.iter().all(|f| re.is_match(&f.fix_script) || re.is_match(&f.revert_script)) {
            return Err(BanRefusal::EveryDerived { of: samples.len() });
        }
        let hits = self.stock.iter().filter(|s| re.is_match(s)).count();
        if !self.stock.is_empty() && hits * 2 > self.stock.len() {
            return Err(BanRefusal::StockFixes { hits, of: self.stock.len() });
        }
        Ok(re)
    }
}

/// The line of `text` the match is on, trimmed (the match itself when it spans lines).
fn line_of(text: &str, m: regex::Match<'_>) -> String {
    let start = text[..m.start()].rfind('\n').map_or(0, |i| i + 1);
    let end = text[m.end()..].find('\n').map_or(text.len(), |i| m.end() + i);
    let line = if m.as_str().contains('\n') { m.as_str() } else { &text[start..end] };
    let line = line.trim();
    match line.char_indices().nth(120) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn match_everything_bans_are_refused() {
        for p in [".*", "a*", "^", "$", "(?:)", ".+", ".", r"[\s\S]", r"\w", r"(?s).*", "x?"] {
            assert!(check_ban(p).is_err(), "{p} should be refused");
        }
    }

    #[test]
    fn narrow_bans_pass() {
        let scope = BanScope::with_stock(["sysctl -q -n -w kernel.x=1", "chmod 0600 /etc/shadow", "apt-get install -y aide"]);
        for p in
            [r"systemctl\s+(stop|disable)\s+sshd", r"\breboot\b", r"rm\s+-rf\s+/\s*$", r"authorized_keys", "sysctl -w", "60-temper-suid"]
        {
            assert!(scope.check(p).is_ok(), "{p} should pass: {:?}", scope.check(p));
        }
    }

    #[test]
    fn invalid_regex_is_refused_with_reason() {
        let e = check_ban("(unclosed").unwrap_err().to_string();
        assert!(e.contains("not a valid regex"), "{e}");
        assert_eq!(check_ban("   ").unwrap_err(), BanRefusal::Empty);
        assert_eq!(check_ban(&"a".repeat(600)).unwrap_err(), BanRefusal::TooLong);
    }

    /// `pipefail` passes the ban alone (one sample script of nine holds it), and every derived
    /// fix starts with `set -euo pipefail`: refused, saying so.
    #[test]
    fn a_ban_on_the_derived_fixes_preamble_is_refused() {
        assert!(check_ban("pipefail").is_ok(), "the ban alone does not show it");
        let scope = BanScope::with_stock([]);
        let e = scope.check("pipefail").unwrap_err();
        assert_eq!(e, BanRefusal::DerivedPreamble { text: "set -euo pipefail".into() });
        assert_eq!(e.to_string(), "ban matches `set -euo pipefail`, which every derived fix holds: it would forbid every derived fix");
        for p in [r"set\s+-e", "Fix derived by temper", "temper_path", "/var/lib/temper/derived", r"realpath -e", "temper_names"] {
            assert!(matches!(scope.check(p), Err(BanRefusal::DerivedPreamble { .. })), "{p}: {:?}", scope.check(p));
        }
    }

    #[test]
    fn a_ban_that_matches_every_sample_derived_fix_is_refused() {
        // In every sample's revert, not in the fixed text: the record files' `.item`.
        let e = BanScope::with_stock([]).check(r"\$state/[0-9a-f]{16}\.").unwrap_err();
        assert_eq!(e, BanRefusal::EveryDerived { of: temper_derive::samples().len() });
    }

    #[test]
    fn a_ban_that_forbids_most_stock_fixes_is_refused() {
        let stock = [
            "if dpkg-query --show linux-base; then\nsysctl -w a=1\nfi",
            "if dpkg-query --show linux-base; then\nchmod 0600 /x\nfi",
            "apt-get install -y aide",
        ];
        let scope = BanScope::with_stock(stock);
        assert_eq!(scope.check("dpkg-query --show linux-base").unwrap_err(), BanRefusal::StockFixes { hits: 2, of: 3 });
        assert!(scope.check("chmod 0600 /x").is_ok(), "one of three");
    }
}

//! Checking a Reflector's ban before the harness may use it.
//!
//! A ban is refused when it does not compile (or is too large), when it matches the empty
//! string (`.*`, `a*`, `^`, `(?:)`...), or when it matches more than half of a corpus of short,
//! unrelated scripts (`.`, `.+`, `\w`, `[\s\S]`...): such a ban would refuse nearly every fix.
use regex::{Regex, RegexBuilder};

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

pub fn check_ban(pattern: &str) -> Result<Regex, String> {
    if pattern.trim().is_empty() {
        return Err("ban is empty".into());
    }
    if pattern.chars().count() > MAX_BAN_CHARS {
        return Err(format!("ban is longer than {MAX_BAN_CHARS} characters"));
    }
    let re = RegexBuilder::new(pattern)
        .size_limit(1 << 20)
        .dfa_size_limit(1 << 20)
        .build()
        .map_err(|e| format!("ban is not a valid regex: {e}"))?;
    if re.is_match("") {
        return Err("ban matches the empty string, so it would match every script".into());
    }
    let hits = CORPUS.iter().filter(|s| re.is_match(s)).count();
    if hits * 2 > CORPUS.len() {
        return Err(format!("ban is too broad: it matches {hits} of {} unrelated sample scripts", CORPUS.len()));
    }
    Ok(re)
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
        for p in [r"systemctl\s+(stop|disable)\s+sshd", r"\breboot\b", r"rm\s+-rf\s+/\s*$", r"authorized_keys"] {
            assert!(check_ban(p).is_ok(), "{p} should pass");
        }
    }

    #[test]
    fn invalid_regex_is_refused_with_reason() {
        let e = check_ban("(unclosed").unwrap_err();
        assert!(e.contains("not a valid regex"), "{e}");
        assert!(check_ban("   ").is_err());
        assert!(check_ban(&"a".repeat(600)).is_err());
    }
}

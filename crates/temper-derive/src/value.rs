//! Reading the evidence: the one value a state's field asks for, an item's field, and the checks
//! on what may reach a script.
use temper_scap::oval::{CollectedItem, Field, Spec, TestEvidence};

use crate::Refusal;

/// The single value `f` is met by: a literal (`equals`, or a case-insensitive one), a variable's
/// one value, or a regex that only a literal meets (`^no$`, `^(?i)yes(?-i)$`, `^/etc/issue.net$`).
/// A variable with several values (every account's uid) is met by any of them: no one value.
pub fn literal(t: &TestEvidence, f: &Field) -> Result<String, Refusal> {
    let value = match &f.var_ref {
        Some(v) if f.value.is_empty() => {
            let mut values: Vec<&str> = t.variables.iter().filter(|(id, _)| id == v).map(|(_, val)| val.as_str()).collect();
            values.sort_unstable();
            values.dedup();
            match values[..] {
                [] => return Err(Refusal::Variable { test: t.id.clone(), var: v.clone() }),
                [one] => one.to_string(),
                _ => return Err(Refusal::ManyValues { test: t.id.clone(), var: v.clone(), n: values.len() }),
            }
        }
        _ => f.value.trim().to_string(),
    };
    match f.operation.as_deref().unwrap_or("equals") {
        "equals" | "case insensitive equals" => Ok(value),
        "pattern match" => {
            regex_literal(&value).ok_or_else(|| Refusal::RegexState { test: t.id.clone(), field: f.name.clone(), pattern: value.clone() })
        }
        op => Err(Refusal::RangeState { test: t.id.clone(), field: f.name.clone(), operation: op.to_string() }),
    }
}

/// The literal a regex is met by, when it has one: anchors, `(?i)` and `(?-i)` and escaped dots
/// aside, nothing but plain characters (a `.` is met by itself).
pub fn regex_literal(pattern: &str) -> Option<String> {
    let p = pattern.strip_prefix('^').unwrap_or(pattern);
    let p = p.strip_suffix('$').unwrap_or(p);
    let p = p.replace("(?i)", "").replace("(?-i)", "").replace("\\.", ".");
    let plain = !p.is_empty() && !p.chars().any(|c| "[](){}*+?|\\^$".contains(c));
    plain.then_some(p)
}

/// A field of a spec, by name.
pub fn field<'a>(s: &'a Spec, name: &str) -> Option<&'a Field> {
    s.fields.iter().find(|f| f.name == name)
}

/// A field of an item, by name.
pub fn item_field<'a>(i: &'a CollectedItem, name: &str) -> Option<&'a str> {
    i.fields.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// The object of a test, and every member of a set object (depth first).
pub fn objects(t: &TestEvidence) -> Vec<&Spec> {
    fn walk<'a>(s: &'a Spec, out: &mut Vec<&'a Spec>) {
        out.push(s);
        s.members.iter().for_each(|m| walk(m, out));
    }
    let mut out = Vec::new();
    if let Some(o) = &t.object {
        walk(o, &mut out);
    }
    out
}

/// The items of a test that are wrong: those the state did not match, or every item a
/// `none_exist` test found. All of them, or a refusal: a fix of a few would be a guess.
pub fn failing_items(t: &TestEvidence) -> Result<Vec<&CollectedItem>, Refusal> {
    if t.items_total > t.items.len() {
        return Err(Refusal::Truncated { test: t.id.clone(), named: t.items.len(), total: t.items_total });
    }
    let none_exist = t.check_existence == temper_scap::oval::Existence::NoneExist;
    let out: Vec<&CollectedItem> =
        t.items.iter().filter(|i| none_exist || i.result == Some(temper_scap::oval::DefinitionResult::False)).collect();
    if out.is_empty() {
        return Err(Refusal::NoItems { test: t.id.clone() });
    }
    Ok(out)
}

/// The trees a derived fix never touches: kernel and device trees, the harness's way in (sudo
/// rules, home directories), boot. The fix checks them again in the guest, on the resolved path.
pub const PROTECTED: &[&str] = &["/proc", "/sys", "/dev", "/run", "/home", "/root", "/etc/sudoers", "/boot"];

/// Paths a derived fix never touches: the [`PROTECTED`] trees, SSH keys anywhere, anything not
/// plainly absolute, and a name that may not be the file's own: oscap and the walk write a byte
/// that is not UTF-8 as the character of its value (U+0080 to U+00FF), or as U+FFFD.
pub fn check_path(path: &str) -> Result<(), Refusal> {
    let unsure = |c: char| ('\u{80}'..='\u{ff}').contains(&c) || c == '\u{fffd}';
    let denied = !path.starts_with('/')
        || path.split('/').any(|c| c == ".." || c == "." || c == ".ssh")
        || PROTECTED.iter().any(|p| path == *p || path.starts_with(&format!("{p}/")) || path.starts_with(&format!("{p}.")))
        || !safe_text(path);
    if denied {
        return Err(Refusal::DeniedPath { path: path.to_string() });
    }
    if path.chars().any(unsure) { Err(Refusal::UnsureName { path: path.to_string() }) } else { Ok(()) }
}

/// Text that may reach a script (single-quoted): printable, one line.
pub fn safe_text(s: &str) -> bool {
    !s.is_empty() && !s.chars().any(|c| c.is_control())
}

/// A name (package, unit, key) of only the characters such names use.
pub fn plain_name(s: &str, extra: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || extra.contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_regex_a_literal_meets_is_a_value() {
        assert_eq!(regex_literal("^no$").as_deref(), Some("no"));
        assert_eq!(regex_literal("^(?i)yes(?-i)$").as_deref(), Some("yes"));
        assert_eq!(regex_literal("^/etc/issue.net$").as_deref(), Some("/etc/issue.net"));
        assert_eq!(regex_literal("^(?i)(syslog|single|halt)(?-i)$"), None);
        assert_eq!(regex_literal("32768\\s*65535"), None);
        assert_eq!(regex_literal("^$"), None);
    }

    #[test]
    fn protected_paths_are_refused() {
        for p in ["/home/temper/.ssh/authorized_keys", "/root/.bashrc", "/etc/sudoers.d/temper", "/etc/sudoers", "/proc/sys/x", "etc/x"] {
            assert!(check_path(p).is_err(), "{p}");
        }
        for p in ["/usr/bin/su", "/etc/shadow", "/usr/local/bin/tools", "/etc/ssh/sshd_config"] {
            assert!(check_path(p).is_ok(), "{p}");
        }
        assert!(check_path("/usr/bin/a\nrm -rf /").is_err(), "a newline never reaches a script");
        assert!(check_path("/usr/../home/x").is_err());
        for p in ["/usr/local/sbin/cmd dir\u{fe}", "/srv/not\u{fffd}utf8", "/srv/caf\u{e9}"] {
            assert!(matches!(check_path(p), Err(Refusal::UnsureName { .. })), "{p}: maybe not the file's own name");
        }
        assert!(check_path("/srv/\u{65e5}\u{672c}").is_ok(), "UTF-8 past Latin-1 is written as it is");
    }
}

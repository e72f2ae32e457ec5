//! `sysctl_test` (the runtime value) and the `textfilecontent54_test`s on the sysctl
//! configuration files that come with it: one action, the runtime value and a drop-in in
//! `/etc/sysctl.d`.
use temper_scap::oval::TestEvidence;

use crate::Refusal;
use crate::action::{Action, SysctlFix};
use crate::value::{check_path, field, item_field, literal, objects, plain_name};

/// The configuration files a drop-in in `/etc/sysctl.d` counts in.
const ETC: [&str; 2] = ["/etc/sysctl.d", "/etc/sysctl.conf"];

/// Where a file that sets the key to another value may be changed: the configuration the
/// administrator owns (systemd-sysctl reads them all at boot). `/usr/lib/sysctl.d` is the
/// packages'.
const CONFIG: [&str; 4] = ["/etc/sysctl.d/", "/run/sysctl.d/", "/usr/local/lib/sysctl.d/", "/etc/sysctl.conf"];

fn key_ok(key: &str) -> bool {
    plain_name(key, "._-/")
}

fn value_ok(v: &str) -> bool {
    plain_name(v, " ._:-") && !v.starts_with(' ')
}

pub fn runtime(t: &TestEvidence) -> Result<Vec<Action>, Refusal> {
    let o = t.object.as_ref().ok_or_else(|| Refusal::NoItems { test: t.id.clone() })?;
    let key = field(o, "name").map(|f| literal(t, f)).transpose()?.unwrap_or_default();
    let value = expected(t)?;
    if !key_ok(&key) {
        return Err(Refusal::Unsupported { test: t.id.clone(), why: format!("sysctl key {key:?}") });
    }
    let was = t.items.iter().find_map(|i| item_field(i, "value")).map(str::to_string);
    Ok(vec![Action::Sysctl(SysctlFix { key, value, was, overrides: Vec::new() })])
}

/// A test on the sysctl configuration files (SSG's `*_static_*`).
pub fn is_static(t: &TestEvidence) -> bool {
    objects(t).iter().any(|o| o.fields.iter().any(|f| (f.name == "path" || f.name == "filepath") && f.value.contains("sysctl")))
}

pub fn config(t: &TestEvidence) -> Result<Vec<Action>, Refusal> {
    let objs = objects(t);
    let seen = objs.iter().flat_map(|o| o.fields.iter()).any(|f| ETC.contains(&f.value.as_str()));
    if !seen {
        return Err(Refusal::Unsupported { test: t.id.clone(), why: "it reads only package-managed sysctl files".into() });
    }
    let key = objs
        .iter()
        .filter_map(|o| field(o, "pattern"))
        .find_map(|f| key_of(&f.value))
        .ok_or_else(|| Refusal::Unsupported { test: t.id.clone(), why: "no sysctl key in its pattern".into() })?;
    let value = expected(t)?;
    // A file that sets another value keeps the check failing whatever the drop-in says, and
    // wins at boot where it is read last: its lines are commented out, as the content's own
    // fixes do, where the administrator owns the file.
    let mut overrides: Vec<String> = Vec::new();
    for i in t.items.iter().filter(|i| item_field(i, "subexpression").is_some_and(|v| v.trim() != value)) {
        let path = item_field(i, "filepath").unwrap_or_default().to_string();
        let owned =
            CONFIG.iter().any(|d| if d.ends_with('/') { path.starts_with(d) && !path[d.len()..].contains('/') } else { path == *d });
        if !owned {
            let why =
                format!("{path} sets {key} to another value, and it lies outside the configuration directories ({})", CONFIG.join(", "));
            return Err(Refusal::Unsupported { test: t.id.clone(), why });
        }
        check_path(&path)?;
        if !overrides.contains(&path) {
            overrides.push(path);
        }
    }
    Ok(vec![Action::Sysctl(SysctlFix { key, value, was: None, overrides })])
}

/// The value the test's state asks for.
fn expected(t: &TestEvidence) -> Result<String, Refusal> {
    let s = t.states.first().ok_or_else(|| Refusal::Unsupported { test: t.id.clone(), why: "no state".into() })?;
    let f = field(s, "value")
        .or_else(|| field(s, "subexpression"))
        .ok_or_else(|| Refusal::Unsupported { test: t.id.clone(), why: format!("state {} has no value", s.id) })?;
    let v = literal(t, f)?;
    if !value_ok(&v) {
        return Err(Refusal::Unsupported { test: t.id.clone(), why: format!("sysctl value {v:?}") });
    }
    Ok(v)
}

/// `kernel.modules_disabled` from `^[\s]*kernel.modules_disabled[\s]*=[\s]*(.*\S)[\s]*$`.
fn key_of(pattern: &str) -> Option<String> {
    let rest = pattern.strip_prefix("^[\\s]*")?;
    let end = rest.find("[\\s]*=")?;
    let key = rest[..end].replace("\\.", ".");
    key_ok(&key).then_some(key)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_key_comes_from_ssg_s_pattern() {
        assert_eq!(super::key_of(r"^[\s]*kernel.modules_disabled[\s]*=[\s]*(.*\S)[\s]*$").as_deref(), Some("kernel.modules_disabled"));
        assert_eq!(super::key_of(r"^[\s]*(.*)[\s]*=").as_deref(), None);
    }
}

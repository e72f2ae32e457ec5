//! `dpkginfo_test`: a package installed (`all_exist`, no state) or removed (`none_exist`).
use temper_scap::oval::{Existence, TestEvidence};

use crate::Refusal;
use crate::action::{Action, PackageFix};
use crate::value::{field, item_field, literal, plain_name};

/// Packages a derived fix never removes: the harness's way in and the system's own tools.
const PROTECTED: &[&str] =
    &["openssh-server", "openssh-client", "ssh", "sudo", "systemd", "bash", "dpkg", "apt", "libc6", "login", "passwd", "coreutils"];

pub fn actions(t: &TestEvidence) -> Result<Vec<Action>, Refusal> {
    let o = t.object.as_ref().ok_or_else(|| Refusal::NoItems { test: t.id.clone() })?;
    let name = field(o, "name").map(|f| literal(t, f)).transpose()?.unwrap_or_default();
    if !plain_name(&name, "+.-") {
        return Err(Refusal::Unsupported { test: t.id.clone(), why: format!("package name {name:?}") });
    }
    if let Some(s) = t.states.first() {
        return Err(Refusal::Unsupported { test: t.id.clone(), why: format!("state {} asks for a version", s.id) });
    }
    let install = match t.check_existence {
        Existence::NoneExist => false,
        Existence::AllExist | Existence::AtLeastOneExists | Existence::AnyExist => true,
        other @ Existence::OnlyOneExists => {
            return Err(Refusal::Unsupported { test: t.id.clone(), why: format!("check_existence {other}") });
        }
    };
    if !install && PROTECTED.contains(&name.as_str()) {
        return Err(Refusal::Protected { what: format!("package {name}") });
    }
    let was_version = t.items.iter().find_map(version);
    Ok(vec![Action::Package(PackageFix { name, install, was_version })])
}

/// `epoch:version-release` as apt takes it, from a `dpkginfo_item`.
fn version(i: &temper_scap::oval::CollectedItem) -> Option<String> {
    let (v, r) = (item_field(i, "version")?, item_field(i, "release")?);
    let full = match item_field(i, "epoch") {
        Some(e) if e != "(none)" && e != "0" && !e.is_empty() => format!("{e}:{v}"),
        _ => v.to_string(),
    };
    let full = if r.is_empty() { full } else { format!("{full}-{r}") };
    plain_name(&full, "+.:~-").then_some(full)
}

/// Whether `script` already does what `p` does: a package manager's install (or removal) that
/// names the package as a word of its own. A derived fix that would only repeat it after it
/// failed is the same try again.
pub fn done_by(script: &str, p: &PackageFix) -> bool {
    let verbs: &[&str] = if p.install { &["install"] } else { &["remove", "purge", "erase"] };
    script.lines().any(|line| {
        let words: Vec<&str> = line.split_whitespace().map(|w| w.trim_matches(|c| c == '"' || c == '\'')).collect();
        let manager = words.iter().position(|w| ["apt-get", "apt", "dnf", "yum", "zypper"].contains(w));
        manager.is_some_and(|m| {
            let rest = &words[m + 1..];
            rest.iter().any(|w| verbs.contains(w)) && rest.iter().any(|w| *w == p.name || w.strip_prefix(&format!("{}=", p.name)).is_some())
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_does_a_package_change_when_a_manager_names_it_as_a_word() {
        let aide = PackageFix { name: "aide".into(), install: true, was_version: None };
        for yes in
            ["DEBIAN_FRONTEND=noninteractive apt-get install -y \"aide\"", "  dnf install -y aide aide-common", "apt install aide=0.18.3-1"]
        {
            assert!(done_by(yes, &aide), "{yes}");
        }
        for no in ["apt-get install -y aide-common", "apt-get remove -y aide", "echo apt-get; install aide-ish", "# aide"] {
            assert!(!done_by(no, &aide), "{no}");
        }
        let telnet = PackageFix { name: "telnet".into(), install: false, was_version: None };
        assert!(done_by("apt-get purge -y 'telnet'", &telnet));
        assert!(!done_by("apt-get install -y telnet", &telnet));
    }
}

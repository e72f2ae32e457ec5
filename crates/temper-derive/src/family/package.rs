//! `dpkginfo_test`: a package installed (`all_exist`, no state) or removed (`none_exist`).
use temper_scap::oval::TestEvidence;

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
    let install = match t.check_existence.as_str() {
        "none_exist" => false,
        "all_exist" | "at_least_one_exists" | "any_exist" => true,
        other => return Err(Refusal::Unsupported { test: t.id.clone(), why: format!("check_existence {other}") }),
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

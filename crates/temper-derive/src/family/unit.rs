//! `systemdunitproperty_test` (`ActiveState`, `LoadState`, `UnitFileState`) and
//! `systemdunitdependency_test` (a target wants the unit): enable and start, or mask and stop.
use temper_scap::oval::TestEvidence;

use crate::Refusal;
use crate::action::{Action, UnitFix};
use crate::value::{failing_items, field, item_field, literal, plain_name};

/// Units a derived fix never stops or masks: the harness's way in and the system's own.
fn protected(unit: &str) -> bool {
    let base = unit.split('.').next().unwrap_or(unit);
    matches!(base, "ssh" | "sshd" | "dbus" | "getty@tty1") || base.starts_with("systemd-")
}

fn unit_ok(t: &TestEvidence, unit: &str) -> Result<(), Refusal> {
    let kinds = [".service", ".socket", ".timer", ".path", ".mount", ".target"];
    if plain_name(unit, "@._:-") && kinds.iter().any(|k| unit.ends_with(k)) {
        Ok(())
    } else {
        Err(Refusal::Unsupported { test: t.id.clone(), why: format!("unit name {unit:?}") })
    }
}

/// What a property's expected value asks of the unit.
enum Want {
    Start,
    Stop,
    Mask,
    Enable,
}

pub fn property(t: &TestEvidence) -> Result<Vec<Action>, Refusal> {
    let o = t.object.as_ref().ok_or_else(|| Refusal::NoItems { test: t.id.clone() })?;
    let property = field(o, "property").map(|f| f.value.trim().to_string()).unwrap_or_default();
    let s = t.states.first().ok_or_else(|| Refusal::Unsupported { test: t.id.clone(), why: "no state".into() })?;
    let f = field(s, "value").ok_or_else(|| Refusal::Unsupported { test: t.id.clone(), why: "state without a value".into() })?;
    // SSG's "not running" is the one regex a unit state is known by.
    let stopped = f.operation.as_deref() == Some("pattern match") && matches!(f.value.trim(), "inactive|failed" | "^(inactive|failed)$");
    let value = if stopped { "inactive".to_string() } else { literal(t, f)? };
    let want = match (property.as_str(), value.as_str()) {
        ("ActiveState", "active") => Want::Start,
        ("ActiveState", "inactive") => Want::Stop,
        ("LoadState", "masked") => Want::Mask,
        ("UnitFileState", "enabled") => Want::Enable,
        ("UnitFileState", "masked") => Want::Mask,
        _ => return Err(Refusal::Unsupported { test: t.id.clone(), why: format!("{property} = {value}: no known way to set it") }),
    };
    // A unit systemd has not loaded (disabled and stopped, or not installed yet) has no item:
    // the check's own pattern names the service to start.
    let units: Vec<(String, Option<String>)> = match (failing_items(t), &want) {
        (Err(Refusal::NoItems { .. }), Want::Start) if t.items_total == 0 => {
            let unit = object_service(t).ok_or_else(|| Refusal::NoItems { test: t.id.clone() })?;
            vec![(unit, None)]
        }
        (items, _) => items?
            .into_iter()
            .map(|i| {
                let was = (property == "ActiveState").then(|| item_field(i, "value").unwrap_or_default().to_string());
                (item_field(i, "unit").unwrap_or_default().to_string(), was)
            })
            .collect(),
    };
    let mut out = Vec::new();
    for (unit, was_active) in units {
        unit_ok(t, &unit)?;
        let mut fix = UnitFix { unit, was_active, ..UnitFix::default() };
        match want {
            Want::Start => fix.start = true,
            Want::Stop => fix.stop = true,
            Want::Mask => fix.mask = true,
            Want::Enable => fix.enable = true,
        }
        if (fix.stop || fix.mask) && protected(&fix.unit) {
            return Err(Refusal::Protected { what: format!("unit {}", fix.unit) });
        }
        out.push(Action::Unit(fix));
    }
    Ok(out)
}

/// `NAME.service` from SSG's unit patterns `^NAME\.(socket|service)$` and `^NAME\.service$`;
/// the service, as the check's "multi-user.target wants NAME.service" names it.
fn object_service(t: &TestEvidence) -> Option<String> {
    let f = field(t.object.as_ref()?, "unit")?;
    let name = f.value.trim().strip_prefix('^')?;
    let name = name.strip_suffix("\\.(socket|service)$").or_else(|| name.strip_suffix("\\.service$"))?;
    plain_name(name, "@_:-").then(|| format!("{name}.service"))
}

/// "multi-user.target wants X": X enabled.
pub fn dependency(t: &TestEvidence) -> Result<Vec<Action>, Refusal> {
    let s = t.states.first().ok_or_else(|| Refusal::Unsupported { test: t.id.clone(), why: "no state".into() })?;
    let f = field(s, "dependency").ok_or_else(|| Refusal::Unsupported { test: t.id.clone(), why: "state without a dependency".into() })?;
    let unit = literal(t, f)?;
    unit_ok(t, &unit)?;
    Ok(vec![Action::Unit(UnitFix { unit, enable: true, ..UnitFix::default() })])
}

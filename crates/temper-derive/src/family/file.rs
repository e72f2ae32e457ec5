//! `file_test`: owner, group and mode bits of exactly the items the scanner found.
//!
//! SSG's checks come in two shapes: a state the items must match (on the test, or as an
//! `exclude` filter: the items left are those that do not match it), or an `include` filter
//! whose state describes what is wrong (`user_id` not equal 0; `gwrite` or `owrite` true): the
//! fix is its negation. States on anything but ownership and mode (a symlink excluded) only
//! scope the object.
use temper_scap::oval::{CollectedItem, Field, FilterAction, Spec, TestEvidence};

use crate::Refusal;
use crate::action::{Action, FileFix, Meta};
use crate::value::{check_path, failing_items, item_field, literal};

/// The permission fields, from the highest bit (setuid, 0o4000) down.
const BITS: [&str; 12] = ["suid", "sgid", "sticky", "uread", "uwrite", "uexec", "gread", "gwrite", "gexec", "oread", "owrite", "oexec"];

/// What the items must become: an owner, a group, bits to set and to clear.
#[derive(Debug, Default, Clone, Copy)]
struct Target {
    uid: Option<u32>,
    gid: Option<u32>,
    set: u32,
    clear: u32,
}

fn bit(name: &str) -> Option<u32> {
    BITS.iter().position(|b| *b == name).map(|i| 1 << (11 - i))
}

fn is_meta(f: &Field) -> bool {
    f.name == "user_id" || f.name == "group_id" || bit(&f.name).is_some()
}

/// A state on ownership or mode only (the others scope the object).
fn is_meta_state(s: &Spec) -> bool {
    !s.fields.is_empty() && s.fields.iter().all(is_meta)
}

pub fn actions(t: &TestEvidence) -> Result<Vec<Action>, Refusal> {
    let mut target = Target::default();
    for s in &t.states {
        if !is_meta_state(s) {
            return Err(Refusal::Unsupported { test: t.id.clone(), why: format!("state {} checks more than ownership and mode", s.id) });
        }
        meet(t, s, &mut target)?;
    }
    for f in t.filters.iter().filter(|f| is_meta_state(&f.state)) {
        match f.action {
            FilterAction::Exclude => meet(t, &f.state, &mut target)?,
            FilterAction::Include => avoid(t, &f.state, &mut target)?,
        }
    }
    if target.uid.is_none() && target.gid.is_none() && target.set == 0 && target.clear == 0 {
        return Err(Refusal::Unsupported { test: t.id.clone(), why: "no owner, group or mode in its states".into() });
    }
    failing_items(t)?.into_iter().map(|i| item(t, i, target).map(Action::File)).collect()
}

/// The state the items must match: each field's one value.
fn meet(t: &TestEvidence, s: &Spec, target: &mut Target) -> Result<(), Refusal> {
    for f in &s.fields {
        let v = literal(t, f)?;
        set(t, f, &v, true, target)?;
    }
    Ok(())
}

/// The state the items are in and must leave: each field negated, which is exact only for a
/// single field or fields ORed (every one must stop holding).
fn avoid(t: &TestEvidence, s: &Spec, target: &mut Target) -> Result<(), Refusal> {
    let ored = s.operator.as_deref() == Some("OR");
    if s.fields.len() > 1 && !ored {
        return Err(Refusal::Unsupported {
            test: t.id.clone(),
            why: format!("state {} to avoid has fields ANDed: which to change is a guess", s.id),
        });
    }
    for f in &s.fields {
        let op = f.operation.as_deref().unwrap_or("equals");
        match (f.name.as_str(), op) {
            ("user_id" | "group_id", "not equal") => {
                let v = literal(t, &Field { operation: None, ..f.clone() })?;
                set(t, f, &v, true, target)?;
            }
            (n, "equals") if bit(n).is_some() => {
                let v = literal(t, f)?;
                set(t, f, &v, false, target)?;
            }
            _ => return Err(Refusal::RangeState { test: t.id.clone(), field: f.name.clone(), operation: format!("not {op}") }),
        }
    }
    Ok(())
}

/// `want`: the field must equal `v` (true), or must not (false; booleans only).
fn set(t: &TestEvidence, f: &Field, v: &str, want: bool, target: &mut Target) -> Result<(), Refusal> {
    let bad = || Refusal::Unsupported { test: t.id.clone(), why: format!("{} = {v:?} is not a value to set", f.name) };
    match f.name.as_str() {
        "user_id" => target.uid = Some(v.parse().map_err(|_| bad())?),
        "group_id" => target.gid = Some(v.parse().map_err(|_| bad())?),
        n => {
            let b = bit(n).ok_or_else(bad)?;
            let on = match v {
                "true" | "1" => want,
                "false" | "0" => !want,
                _ => return Err(bad()),
            };
            if on { target.set |= b } else { target.clear |= b }
        }
    }
    Ok(())
}

/// One failing item: its path, what it was, what it must become.
fn item(t: &TestEvidence, i: &CollectedItem, target: Target) -> Result<FileFix, Refusal> {
    let path = match (item_field(i, "filepath"), item_field(i, "path"), item_field(i, "filename")) {
        (Some(p), _, _) if !p.is_empty() => p.to_string(),
        (_, Some(dir), Some(name)) if !name.is_empty() => format!("{}/{name}", dir.trim_end_matches('/')),
        (_, Some(dir), _) => dir.to_string(),
        _ => return Err(Refusal::Unsupported { test: t.id.clone(), why: format!("item {} has no path", i.id) }),
    };
    check_path(&path)?;
    if item_field(i, "type") == Some("symbolic link") {
        return Err(Refusal::Unsupported { test: t.id.clone(), why: format!("{path} is a symbolic link") });
    }
    let num = |name: &str| item_field(i, name).and_then(|v| v.parse::<u32>().ok());
    let missing = |what: &str| Refusal::Unsupported { test: t.id.clone(), why: format!("item {path} has no {what} recorded") };
    let mut mode = 0;
    for (n, b) in BITS.iter().filter_map(|n| bit(n).map(|b| (*n, b))) {
        match item_field(i, n) {
            Some("true") => mode |= b,
            Some("false") => {}
            _ => return Err(missing(n)),
        }
    }
    let was = Meta { uid: num("user_id").ok_or_else(|| missing("owner"))?, gid: num("group_id").ok_or_else(|| missing("group"))?, mode };
    let want =
        Meta { uid: target.uid.unwrap_or(was.uid), gid: target.gid.unwrap_or(was.gid), mode: (was.mode | target.set) & !target.clear };
    Ok(FileFix { path, was, want })
}

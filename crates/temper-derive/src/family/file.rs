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

/// What the items must become: an owner, a group, bits to set and to clear, and why an id was
/// chosen where the check asks for a range.
#[derive(Debug, Default, Clone)]
struct FileTarget {
    uid: Option<u32>,
    gid: Option<u32>,
    set: u32,
    clear: u32,
    chosen: Option<String>,
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

/// How many exact fixes the test has: the fields of a state to avoid that are ANDed (changing
/// any one of them makes an item escape it), or one.
pub fn choices(t: &TestEvidence) -> usize {
    let anded = |s: &Spec| s.fields.len() > 1 && s.operator.as_deref() != Some("OR");
    t.filters
        .iter()
        .filter(|f| f.action == FilterAction::Include && is_meta_state(&f.state) && anded(&f.state))
        .map(|f| f.state.fields.len())
        .max()
        .unwrap_or(1)
}

/// The actions of fix `choice` (0: the least disruptive; see [`choices`]).
pub fn actions(t: &TestEvidence, choice: usize) -> Result<Vec<Action>, Refusal> {
    let mut target = FileTarget::default();
    for s in &t.states {
        if !is_meta_state(s) {
            return Err(Refusal::Unsupported { test: t.id.clone(), why: format!("state {} checks more than ownership and mode", s.id) });
        }
        meet(t, s, &mut target)?;
    }
    for f in t.filters.iter().filter(|f| is_meta_state(&f.state)) {
        match f.action {
            FilterAction::Exclude => meet(t, &f.state, &mut target)?,
            FilterAction::Include => avoid(t, &f.state, choice, &mut target)?,
        }
    }
    if target.uid.is_none() && target.gid.is_none() && target.set == 0 && target.clear == 0 {
        return Err(Refusal::Unsupported { test: t.id.clone(), why: "no owner, group or mode in its states".into() });
    }
    failing_items(t)?.into_iter().map(|i| item(t, i, &target).map(Action::File)).collect()
}

/// The state the items must match: each field's one value; an id asked for in a range, 0
/// where 0 meets it.
fn meet(t: &TestEvidence, s: &Spec, target: &mut FileTarget) -> Result<(), Refusal> {
    for f in &s.fields {
        let op = f.operation.as_deref().unwrap_or("equals");
        if is_id(f) && RANGES.contains(&op) {
            zero_meets(t, f, op, target)?;
            continue;
        }
        let v = literal(t, f)?;
        set(t, f, &v, true, target)?;
    }
    Ok(())
}

/// The operations on an id whose range 0 may meet.
const RANGES: [&str; 4] = ["less than", "less than or equal", "greater than", "greater than or equal"];

fn is_id(f: &Field) -> bool {
    f.name == "user_id" || f.name == "group_id"
}

/// `f` asks for an id `op` its value: 0, the id the content's own fixes set, where 0 meets it.
fn zero_meets(t: &TestEvidence, f: &Field, op: &str, target: &mut FileTarget) -> Result<(), Refusal> {
    let bound: i64 = literal(t, &Field { operation: None, ..f.clone() })?.parse().map_err(|_| Refusal::RangeState {
        test: t.id.clone(),
        field: f.name.clone(),
        operation: op.to_string(),
    })?;
    let meets = match op {
        "less than" => 0 < bound,
        "less than or equal" => 0 <= bound,
        "greater than" => 0 > bound,
        _ => 0 >= bound,
    };
    if !meets {
        return Err(Refusal::RangeState { test: t.id.clone(), field: f.name.clone(), operation: op.to_string() });
    }
    let who = if f.name == "user_id" { "owner" } else { "group" };
    target.chosen = Some(format!("{who} 0, the id the content's own fixes set: it meets `{op} {bound}`"));
    set(t, f, "0", true, target)
}

/// The state the items are in and must leave. Fields ORed: each negated (every one must stop
/// holding). Fields ANDed: one of them negated, which is enough; `choice` picks which, in
/// [`disruption`] order.
fn avoid(t: &TestEvidence, s: &Spec, choice: usize, target: &mut FileTarget) -> Result<(), Refusal> {
    let ored = s.operator.as_deref() == Some("OR");
    let mut fields: Vec<&Field> = s.fields.iter().collect();
    if fields.len() > 1 && !ored {
        fields.sort_by_key(|f| disruption(f));
        fields = vec![fields[choice.min(fields.len() - 1)]];
    }
    for f in fields {
        let op = f.operation.as_deref().unwrap_or("equals");
        match (f.name.as_str(), op) {
            ("user_id" | "group_id", "not equal") => {
                let v = literal(t, &Field { operation: None, ..f.clone() })?;
                set(t, f, &v, true, target)?;
            }
            // Out of `> b` is `<= b`; out of `>= b` is `< b`.
            ("user_id" | "group_id", "greater than") => zero_meets(t, f, "less than or equal", target)?,
            ("user_id" | "group_id", "greater than or equal") => zero_meets(t, f, "less than", target)?,
            (n, "equals") if bit(n).is_some() => {
                let v = literal(t, f)?;
                set(t, f, &v, false, target)?;
            }
            _ => return Err(Refusal::RangeState { test: t.id.clone(), field: f.name.clone(), operation: format!("not {op}") }),
        }
    }
    Ok(())
}

/// How much leaving a state by this field takes away: a restrictive bit added (the sticky bit;
/// a setuid or setgid bit removed) first, then a permission removed, then an owner or a group
/// changed, then a permission added.
fn disruption(f: &Field) -> u8 {
    let on = f.value.trim() == "true" || f.value.trim() == "1";
    match f.name.as_str() {
        "sticky" if !on => 0,
        "suid" | "sgid" if on => 0,
        n if bit(n).is_some() && on => 1,
        "user_id" | "group_id" => 2,
        _ => 3,
    }
}

/// `want`: the field must equal `v` (true), or must not (false; booleans only).
fn set(t: &TestEvidence, f: &Field, v: &str, want: bool, target: &mut FileTarget) -> Result<(), Refusal> {
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
fn item(t: &TestEvidence, i: &CollectedItem, target: &FileTarget) -> Result<FileFix, Refusal> {
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
    Ok(FileFix { path, was, want, chosen: target.chosen.clone() })
}

//! What the OVAL engine needs from the XCCDF Benchmark and `oscap xccdf eval` uses to
//! decide a rule's result: its checks (system, exports, content refs, negate, multi-check),
//! platforms (its own and its Groups'), `requires`/`conflicts`, and roles. Selection and
//! values come from [`crate::read_benchmark`].
use std::collections::{HashMap, HashSet};

use quick_xml::events::{BytesStart, Event};

use crate::xml::{Xml, local, parse_bool};

use super::cpe::{Cpe, read_platforms};
use super::error::OvalResult;

pub(crate) const OVAL_SYSTEM: &str = "http://oval.mitre.org/XMLSchema/oval-definitions-5";
pub(crate) const SCE_SYSTEM: &str = "http://open-scap.org/page/SCE";

/// One `<check>` of a Rule.
#[derive(Debug, Clone, Default)]
pub(crate) struct XccdfCheck {
    pub system: String,
    pub selector: Option<String>,
    pub multi: bool,
    pub negate: bool,
    /// (value id, export name).
    pub exports: Vec<(String, String)>,
    /// (href, name) of each `check-content-ref`.
    pub refs: Vec<(String, Option<String>)>,
}

/// A Group or Rule, with what decides whether it is evaluated.
#[derive(Debug, Clone, Default)]
pub(crate) struct XccdfItem {
    pub id: String,
    /// Index of the enclosing Group in [`Xccdf::groups`].
    pub parent: Option<usize>,
    pub platforms: Vec<String>,
    /// Each entry is a list of alternatives (`requires idref="a b"`).
    pub requires: Vec<Vec<String>>,
    pub conflicts: Vec<String>,
    /// Rules only.
    pub role: Option<String>,
    pub checks: Vec<XccdfCheck>,
    pub complex_check: bool,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Xccdf {
    pub benchmark_platforms: Vec<String>,
    pub cpe: Cpe,
    pub groups: Vec<XccdfItem>,
    /// Rules by id, in document order.
    pub rules: Vec<XccdfItem>,
    pub rule_index: HashMap<String, usize>,
    /// Rules some Profile gives a `role` with `refine-rule`.
    pub refined_roles: HashSet<String>,
}

impl Xccdf {
    pub fn rule(&self, id: &str) -> Option<&XccdfItem> {
        self.rule_index.get(id).map(|&i| &self.rules[i])
    }

    /// The Groups enclosing a rule, outermost first.
    pub fn ancestors(&self, rule: &XccdfItem) -> Vec<&XccdfItem> {
        let mut out = Vec::new();
        let mut cur = rule.parent;
        while let Some(i) = cur {
            out.push(&self.groups[i]);
            cur = self.groups[i].parent;
        }
        out.reverse();
        out
    }
}

/// Reads the Benchmark whose start tag was just read.
pub(crate) fn walk_benchmark(x: &mut Xml<'_>, out: &mut Xccdf) -> OvalResult<()> {
    let mut open: Vec<usize> = Vec::new();
    loop {
        let (e, empty) = match x.next()? {
            Event::Start(e) => (e, false),
            Event::Empty(e) => (e, true),
            Event::End(_) => match open.pop() {
                Some(_) => continue,
                None => return Ok(()),
            },
            Event::Eof => return Err(x.truncated("Benchmark").into()),
            _ => continue,
        };
        let offset = x.pos();
        match local(&e) {
            "platform-specification" if !empty => read_platforms(x, &mut out.cpe)?,
            "platform" if open.is_empty() => {
                out.benchmark_platforms.extend(x.attr(&e, "idref")?);
                skip(x, &e, empty)?;
            }
            "platform" | "requires" | "conflicts" if !open.is_empty() => {
                let g = open[open.len() - 1];
                item_prop(x, &e, &mut out.groups[g])?;
                skip(x, &e, empty)?;
            }
            "Profile" if !empty => read_profile_roles(x, out)?,
            "Group" => {
                let id = x.attr(&e, "id")?.unwrap_or_default();
                out.groups.push(XccdfItem { id, parent: open.last().copied(), ..XccdfItem::default() });
                if !empty {
                    open.push(out.groups.len() - 1);
                }
            }
            "Rule" => {
                let [id, role] = x.attrs(&e, ["id", "role"])?;
                let mut r = XccdfItem { id: id.unwrap_or_default(), parent: open.last().copied(), role, ..XccdfItem::default() };
                if !empty {
                    read_rule(x, &mut r, offset)?;
                }
                out.rule_index.insert(r.id.clone(), out.rules.len());
                out.rules.push(r);
            }
            _ => skip(x, &e, empty)?,
        }
    }
}

fn skip(x: &mut Xml<'_>, e: &BytesStart<'_>, empty: bool) -> OvalResult<()> {
    if !empty {
        x.skip(e)?;
    }
    Ok(())
}

/// Reads `platform`, `requires` or `conflicts` into an item; false when `e` is none of them.
fn item_prop(x: &Xml<'_>, e: &BytesStart<'_>, item: &mut XccdfItem) -> OvalResult<bool> {
    match local(e) {
        "platform" => item.platforms.extend(x.attr(e, "idref")?),
        "requires" => item.requires.push(x.attr(e, "idref")?.unwrap_or_default().split_whitespace().map(str::to_string).collect()),
        "conflicts" => item.conflicts.extend(x.attr(e, "idref")?),
        _ => return Ok(false),
    }
    Ok(true)
}

fn read_rule(x: &mut Xml<'_>, r: &mut XccdfItem, offset: u64) -> OvalResult<()> {
    loop {
        let Some((e, empty)) = x.child("Rule")? else {
            return Ok(());
        };
        if item_prop(x, &e, r)? {
            skip(x, &e, empty)?;
            continue;
        }
        match local(&e) {
            "check" => {
                let [system, selector, multi, negate] = x.attrs(&e, ["system", "selector", "multi-check", "negate"])?;
                let mut c = XccdfCheck {
                    system: system.unwrap_or_default(),
                    selector: selector.filter(|s| !s.is_empty()),
                    multi: multi.map(|v| parse_bool(&v, "check@multi-check", offset)).transpose()?.unwrap_or(false),
                    negate: negate.map(|v| parse_bool(&v, "check@negate", offset)).transpose()?.unwrap_or(false),
                    ..XccdfCheck::default()
                };
                if !empty {
                    read_check(x, &mut c)?;
                }
                r.checks.push(c);
            }
            "complex-check" => {
                r.complex_check = true;
                skip(x, &e, empty)?;
            }
            _ => skip(x, &e, empty)?,
        }
    }
}

fn read_check(x: &mut Xml<'_>, c: &mut XccdfCheck) -> OvalResult<()> {
    loop {
        let Some((e, empty)) = x.child("check")? else {
            return Ok(());
        };
        match local(&e) {
            "check-export" => {
                let [value, name] = x.attrs(&e, ["value-id", "export-name"])?;
                c.exports.push((value.unwrap_or_default(), name.unwrap_or_default()));
            }
            "check-content-ref" => {
                let [href, name] = x.attrs(&e, ["href", "name"])?;
                c.refs.push((href.unwrap_or_default(), name.filter(|n| !n.is_empty())));
            }
            _ => {}
        }
        skip(x, &e, empty)?;
    }
}

/// Notes every rule a Profile's `refine-rule` gives a role.
fn read_profile_roles(x: &mut Xml<'_>, out: &mut Xccdf) -> OvalResult<()> {
    loop {
        let Some((e, empty)) = x.child("Profile")? else {
            return Ok(());
        };
        if local(&e) == "refine-rule" {
            let [idref, role] = x.attrs(&e, ["idref", "role"])?;
            if let (Some(id), Some(_)) = (idref, role) {
                out.refined_roles.insert(id);
            }
        }
        skip(x, &e, empty)?;
    }
}

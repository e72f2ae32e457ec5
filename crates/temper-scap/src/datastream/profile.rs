//! XCCDF Profiles and what a chosen one does to selection, values and severity.
use std::collections::{HashMap, HashSet};

use quick_xml::events::BytesStart;
use serde::Serialize;

use crate::Severity;
use crate::error::{ScapError, ScapResult};
use crate::text::TextBuilder;
use crate::xml::{Xml, local, parse_bool};

use super::{MAX_PROSE, MAX_TITLE, MAX_VALUE};

/// A profile as listed to the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProfileInfo {
    pub id: String,
    pub title: String,
    pub description: String,
}

/// How a profile picks a Value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ValueChoice {
    /// `refine-value selector=...`: one of the Value's options.
    Selector(String),
    /// `set-value`: a literal.
    Set(String),
}

#[derive(Debug, Clone)]
pub(crate) struct ProfileDef {
    pub info: ProfileInfo,
    pub extends: Option<String>,
    selects: Vec<(String, bool)>,
    values: Vec<(String, ValueChoice)>,
    severities: Vec<(String, Severity)>,
}

pub(crate) fn parse_profile(x: &mut Xml<'_>, e: &BytesStart<'_>, empty: bool) -> ScapResult<ProfileDef> {
    let offset = x.pos();
    let [id, extends] = x.attrs(e, ["id", "extends"])?;
    let id = id.ok_or(ScapError::MissingAttr { element: "Profile", attr: "id", offset })?;
    let mut def = ProfileDef {
        info: ProfileInfo { id, title: String::new(), description: String::new() },
        extends,
        selects: Vec::new(),
        values: Vec::new(),
        severities: Vec::new(),
    };
    if empty {
        return Ok(def);
    }
    loop {
        let Some((c, c_empty)) = x.child("Profile")? else {
            return Ok(def);
        };
        let offset = x.pos();
        match local(&c) {
            "title" if !c_empty => def.info.title = x.plain("title", MAX_TITLE)?,
            "description" if !c_empty => def.info.description = x.plain("description", MAX_PROSE)?,
            "select" => {
                let [idref, selected] = x.attrs(&c, ["idref", "selected"])?;
                let idref = idref.ok_or(ScapError::MissingAttr { element: "select", attr: "idref", offset })?;
                let selected = selected.ok_or(ScapError::MissingAttr { element: "select", attr: "selected", offset })?;
                def.selects.push((idref, parse_bool(&selected, "select@selected", offset)?));
                if !c_empty {
                    x.skip(&c)?;
                }
            }
            "refine-value" => {
                let [idref, selector] = x.attrs(&c, ["idref", "selector"])?;
                let idref = idref.ok_or(ScapError::MissingAttr { element: "refine-value", attr: "idref", offset })?;
                if let Some(s) = selector {
                    def.values.push((idref, ValueChoice::Selector(s)));
                }
                if !c_empty {
                    x.skip(&c)?;
                }
            }
            "set-value" => {
                let idref = x.attr(&c, "idref")?;
                let idref = idref.ok_or(ScapError::MissingAttr { element: "set-value", attr: "idref", offset })?;
                let value = if c_empty { String::new() } else { raw_value(x, "set-value")? };
                def.values.push((idref, ValueChoice::Set(value)));
            }
            "refine-rule" => {
                let [idref, severity] = x.attrs(&c, ["idref", "severity"])?;
                let idref = idref.ok_or(ScapError::MissingAttr { element: "refine-rule", attr: "idref", offset })?;
                if let Some(s) = severity {
                    def.severities.push((idref, Severity::from(s)));
                }
                if !c_empty {
                    x.skip(&c)?;
                }
            }
            _ if !c_empty => x.skip(&c)?,
            _ => {}
        }
    }
}

/// A value's text exactly as written (entities resolved), at most [`MAX_VALUE`] bytes.
pub(crate) fn raw_value(x: &mut Xml<'_>, name: &str) -> ScapResult<String> {
    let offset = x.pos();
    let mut b = TextBuilder::raw(MAX_VALUE);
    x.content(name, &mut b)?;
    if b.truncated() {
        return Err(ScapError::TooLarge { what: format!("<{name}> value"), limit: MAX_VALUE as u64, offset });
    }
    Ok(b.finish().plain())
}

/// Finds a profile by full id, or by its short name (`stig` for `..._profile_stig`).
pub(crate) fn find_profile(defs: &[ProfileDef], name: &str) -> ScapResult<usize> {
    if let Some(i) = defs.iter().position(|d| d.info.id == name) {
        return Ok(i);
    }
    let suffix = format!("_profile_{name}");
    let hits: Vec<usize> = (0..defs.len()).filter(|&i| defs[i].info.id.ends_with(&suffix)).collect();
    match hits.as_slice() {
        [i] => Ok(*i),
        [] => Err(ScapError::ProfileNotFound(name.to_string())),
        _ => {
            Err(ScapError::ProfileAmbiguous { name: name.to_string(), candidates: hits.iter().map(|&i| defs[i].info.id.clone()).collect() })
        }
    }
}

/// The chosen profile, flattened through its `extends` chain.
#[derive(Debug, Default)]
pub(crate) struct Policy {
    /// idref -> (order, selected); later entries win.
    select: HashMap<String, (usize, bool)>,
    order: usize,
    values: HashMap<String, ValueChoice>,
    severity: HashMap<String, Severity>,
}

impl Policy {
    pub fn resolve(defs: &[ProfileDef], index: usize) -> ScapResult<Self> {
        let mut chain = vec![index];
        let mut seen = HashSet::from([index]);
        let mut cur = index;
        while let Some(base) = defs[cur].extends.as_deref() {
            let next = defs.iter().position(|d| d.info.id == base).ok_or_else(|| ScapError::ProfileNotFound(base.to_string()))?;
            if !seen.insert(next) {
                return Err(ScapError::ProfileCycle(defs[index].info.id.clone()));
            }
            chain.push(next);
            cur = next;
        }
        let mut p = Policy::default();
        for &i in chain.iter().rev() {
            p.apply(&defs[i]);
        }
        Ok(p)
    }

    /// A tailoring profile over the Benchmark's `defs`: its base (`extends`, a Benchmark
    /// profile, which may share its id) first, then its own selections and values.
    pub fn resolve_tailored(defs: &[ProfileDef], tailored: &ProfileDef) -> ScapResult<Self> {
        let mut p = match tailored.extends.as_deref() {
            Some(base) => {
                let i = defs.iter().position(|d| d.info.id == base).ok_or_else(|| ScapError::ProfileNotFound(base.to_string()))?;
                Policy::resolve(defs, i)?
            }
            None => Policy::default(),
        };
        p.apply(tailored);
        Ok(p)
    }

    fn apply(&mut self, d: &ProfileDef) {
        for (idref, sel) in &d.selects {
            self.order += 1;
            self.select.insert(idref.clone(), (self.order, *sel));
        }
        for (idref, c) in &d.values {
            self.values.insert(idref.clone(), c.clone());
        }
        for (idref, s) in &d.severities {
            self.severity.insert(idref.clone(), *s);
        }
    }

    /// The item's selection: the latest `select` naming its id or cluster-id, else `default`.
    pub fn selected(&self, id: &str, cluster: Option<&str>, default: bool) -> bool {
        let by_id = self.select.get(id);
        let by_cluster = cluster.and_then(|c| self.select.get(c));
        match (by_id, by_cluster) {
            (Some(a), Some(b)) => {
                if a.0 >= b.0 {
                    a.1
                } else {
                    b.1
                }
            }
            (Some(a), None) | (None, Some(a)) => a.1,
            (None, None) => default,
        }
    }

    pub fn choice(&self, value_id: &str) -> Option<&ValueChoice> {
        self.values.get(value_id)
    }

    pub fn severity(&self, rule_id: &str) -> Option<Severity> {
        self.severity.get(rule_id).copied()
    }
}

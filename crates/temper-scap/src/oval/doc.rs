//! Cuts one small OVAL definitions document out of the datastream: the closure of the root
//! definitions (extend_definition, tests, objects, states, variables) of each component,
//! copied byte for byte. Ids one component shares with an earlier one (the CPE OVAL repeats
//! a few of the main one's, not always with the same content) get a renamed namespace.
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write;
use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::content::OvalContent;
use super::error::{OvalError, OvalResult};
use super::index::{Component, Section};
use super::packages::{self, PackagePart};
use super::plan::CutFor;
use crate::fswalk::plan::{RawElement, WalkPart, cut};

static OVAL_ID: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"oval:([A-Za-z0-9_.\-]+):(def|tst|obj|ste|var):([0-9]+)").unwrap());

/// The document and what it holds.
#[derive(Debug, Clone)]
pub(crate) struct Built {
    pub bytes: Vec<u8>,
    /// Per root component (same order as given): original id -> id in the document.
    pub renamed: Vec<HashMap<String, String>>,
    /// External variables in the document: (id, datatype).
    pub externals: Vec<(String, String)>,
    pub counts: BTreeMap<Section, usize>,
    /// What the walk judges, when the document was cut for it.
    pub walk: Option<WalkPart>,
    /// The package tests the host judges, when the document was cut for them.
    pub packages: Option<PackagePart>,
}

/// The ids reachable from `roots` in one component.
pub(crate) fn closure(comp: &Component, roots: &[String]) -> OvalResult<HashSet<String>> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut stack: Vec<(String, String)> = roots.iter().map(|r| (r.clone(), "the XCCDF check".to_string())).collect();
    while let Some((id, from)) = stack.pop() {
        if seen.contains(&id) {
            continue;
        }
        let e = comp.entry(&id, &from)?;
        stack.extend(e.refs.iter().filter(|r| !seen.contains(*r)).map(|r| (r.clone(), id.clone())));
        seen.insert(id);
    }
    Ok(seen)
}

/// One element picked for the document: its list, component position, offset, text, id (as
/// in the document) and the ids it names.
type PickedElement = (Section, usize, usize, String, String, Vec<String>);

/// Builds the document from (component index, root definition ids), components in order; cut
/// for the one walk ([`crate::fswalk::plan`]) and for the packages ([`packages`]) as `cut` says.
pub(crate) fn build(content: &OvalContent, roots: &[(usize, Vec<String>)], cut_for: CutFor) -> OvalResult<Built> {
    let mut taken: HashSet<String> = HashSet::new();
    let mut renamed = Vec::new();
    let mut picked: Vec<PickedElement> = Vec::new();
    let mut externals = Vec::new();
    for (n, (ci, ids)) in roots.iter().enumerate() {
        let comp = &content.components[*ci];
        let ids = closure(comp, ids)?;
        let map: HashMap<String, String> = ids.iter().filter(|id| taken.contains(*id)).map(|id| (id.clone(), rename(id, n))).collect();
        for id in &ids {
            let e = &comp.entries[id];
            let text = std::str::from_utf8(&content.bytes[e.range.clone()]).expect("the datastream was read as UTF-8");
            let text = if map.is_empty() { text.to_string() } else { rewrite(text, &map) };
            let named = |r: &String| map.get(r).unwrap_or(r).clone();
            picked.push((e.section, n, e.range.start, text, named(id), e.refs.iter().map(named).collect()));
            if let Some(datatype) = &e.external {
                externals.push((map.get(id).unwrap_or(id).clone(), datatype.clone()));
            }
        }
        taken.extend(ids.iter().map(|id| map.get(id).unwrap_or(id).clone()));
        renamed.push(map);
    }
    let walk = cut_for.walk.then(|| {
        let elements = raw(&picked);
        let c = cut(&elements);
        // The first run's document: its probes, and what the variables they read need, as they
        // were before the cut.
        let pre: Vec<PickedElement> = match c.pre_vars.is_empty() {
            true => Vec::new(),
            false => {
                let needed = reach(&elements, &c.pre_vars);
                let mut pre: Vec<PickedElement> = picked.iter().filter(|p| needed.contains(&p.4)).cloned().collect();
                pre.extend(c.pre.iter().cloned().map(added));
                pre
            }
        };
        for p in picked.iter_mut() {
            if let Some(t) = c.replace.get(&p.4) {
                p.3 = t.clone();
            }
        }
        picked.extend(c.add.into_iter().map(added));
        let mut part = c.part;
        if let Some(first) = part.pre.as_mut() {
            first.document = write(content, roots, pre)?.0.into_bytes();
        }
        Ok::<_, OvalError>(part)
    });
    let walk = walk.transpose()?;
    let packages = cut_for.packages.then(|| {
        let c = packages::cut(&raw(&picked));
        for p in picked.iter_mut() {
            if let Some(t) = c.replace.get(&p.4) {
                p.3 = t.clone();
            }
        }
        picked.retain(|p| !c.drop.contains(&p.4));
        c.part
    });
    externals.sort();
    let (out, counts) = write(content, roots, picked)?;
    Ok(Built { bytes: out.into_bytes(), renamed, externals, counts, walk, packages })
}

/// The picked elements as the cuts read them.
fn raw(picked: &[PickedElement]) -> Vec<RawElement> {
    picked.iter().map(|p| RawElement { section: p.0, id: p.4.clone(), local: tag(&p.3), refs: p.5.clone(), text: p.3.clone() }).collect()
}

/// An element the walk adds.
fn added((section, text): (Section, String)) -> PickedElement {
    (section, usize::MAX, 0, text, String::new(), Vec::new())
}

/// The ids reachable from `roots` among `elements`.
fn reach(elements: &[RawElement], roots: &[String]) -> HashSet<String> {
    let by_id: HashMap<&str, &RawElement> = elements.iter().map(|e| (e.id.as_str(), e)).collect();
    let mut seen: HashSet<String> = HashSet::new();
    let mut stack: Vec<&str> = roots.iter().map(String::as_str).collect();
    while let Some(id) = stack.pop() {
        if let Some(e) = by_id.get(id).filter(|_| seen.insert(id.to_string())) {
            stack.extend(e.refs.iter().map(String::as_str));
        }
    }
    seen
}

/// The document of `picked`, with the root, namespaces and generator of `roots`' components.
fn write(
    content: &OvalContent,
    roots: &[(usize, Vec<String>)],
    mut picked: Vec<PickedElement>,
) -> OvalResult<(String, BTreeMap<Section, usize>)> {
    picked.sort_by_key(|a| (a.0, a.1, a.2));
    let first = &content.components[roots.first().map_or(0, |r| r.0)];
    let used: Vec<&Component> = roots.iter().map(|(ci, _)| &content.components[*ci]).collect();
    let mut out = String::with_capacity(picked.iter().map(|p| p.3.len() + 8).sum::<usize>() + 4096);
    out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    write!(out, "<{}", first.root_name).unwrap();
    for (k, v) in namespaces(&used)? {
        write!(out, " {k}=\"{}\"", escape(&v)).unwrap();
    }
    for (k, v) in first.root_attrs.iter().filter(|(k, _)| k != "xmlns" && !k.starts_with("xmlns:")) {
        write!(out, " {k}=\"{}\"", escape(v)).unwrap();
    }
    out.push_str(">\n");
    if let Some(g) = &first.generator {
        out.push_str(std::str::from_utf8(&content.bytes[g.clone()]).expect("UTF-8"));
        out.push('\n');
    }
    let mut counts = BTreeMap::new();
    for s in Section::ALL {
        let items: Vec<&str> = picked.iter().filter(|p| p.0 == s).map(|p| p.3.as_str()).collect();
        if items.is_empty() {
            continue;
        }
        counts.insert(s, items.len());
        let name = first.section_names.get(&s).cloned().unwrap_or_else(|| qualify(&first.root_name, s.local()));
        writeln!(out, "<{name}>").unwrap();
        for i in items {
            out.push_str(i);
            out.push('\n');
        }
        writeln!(out, "</{name}>").unwrap();
    }
    writeln!(out, "</{}>", first.root_name).unwrap();
    Ok((out, counts))
}

/// An element's local name, from its text (`<unix:file_object id=...` -> `file_object`).
pub(crate) fn tag(text: &str) -> String {
    let name = text.trim_start().trim_start_matches('<').split(|c: char| c.is_whitespace() || c == '>' || c == '/').next().unwrap_or("");
    name.rsplit(':').next().unwrap_or(name).to_string()
}

/// `oval:ns:def:1` -> `oval:ns.c1:def:1` for the component at position `n`.
fn rename(id: &str, n: usize) -> String {
    OVAL_ID.replace(id, |c: &Captures| format!("oval:{}.c{n}:{}:{}", &c[1], &c[2], &c[3])).into_owned()
}

pub(crate) fn rewrite(text: &str, map: &HashMap<String, String>) -> String {
    OVAL_ID.replace_all(text, |c: &Captures| map.get(&c[0]).cloned().unwrap_or_else(|| c[0].to_string())).into_owned()
}

/// The namespace declarations of every component used; one prefix must mean one namespace.
fn namespaces(used: &[&Component]) -> OvalResult<Vec<(String, String)>> {
    let mut out: Vec<(String, String)> = Vec::new();
    for c in used {
        for (k, v) in &c.ns {
            match out.iter().find(|(k2, _)| k2 == k) {
                Some((_, v2)) if v2 != v => {
                    return Err(OvalError::NamespaceClash { prefix: k.clone(), first: v2.clone(), second: v.clone() });
                }
                Some(_) => {}
                None => out.push((k.clone(), v.clone())),
            }
        }
    }
    Ok(out)
}

/// The root's prefix on a section name (`oval-def:oval_definitions` -> `oval-def:tests`).
fn qualify(root: &str, local: &str) -> String {
    match root.split_once(':') {
        Some((p, _)) => format!("{p}:{local}"),
        None => local.to_string(),
    }
}

pub(crate) fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renames_only_listed_ids() {
        let map = HashMap::from([("oval:ssg-a:obj:1".to_string(), rename("oval:ssg-a:obj:1", 1))]);
        let text = r#"<t id="oval:ssg-b:tst:1"><object object_ref="oval:ssg-a:obj:1"/></t>"#;
        assert_eq!(rewrite(text, &map), r#"<t id="oval:ssg-b:tst:1"><object object_ref="oval:ssg-a.c1:obj:1"/></t>"#);
    }
}

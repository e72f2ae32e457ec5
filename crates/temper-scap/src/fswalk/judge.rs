//! After oscap has run a document cut for the walk: the variables' values from the probes, each
//! walked test judged on the host, and every definition that names one of them judged again.
use std::collections::HashMap;

use quick_xml::events::Event;

use super::WalkError;
use super::collect::{Flag, Item, collect};
use super::listing::{Entry, Listing};
use super::plan::WalkPart;
use super::state::filter;
use crate::oval::{CollectedItem, Criterion, DefinitionResult, Evidence, OvalReport, OvalResults};
use crate::text::TextBuilder;
use crate::xml::{Xml, local};

/// Items kept per walked test for the evidence, as for oscap's.
const MAX_ITEMS: usize = crate::oval::MAX_ITEMS;

/// Largest variable value read back (a path, an id, a pattern).
const MAX_VALUE: usize = 64 * 1024;

/// A walked test as the host judged it: its result, its object's flag, and its items (the
/// first [`MAX_ITEMS`], each with how it compared with the test's states).
#[derive(Debug, Clone)]
pub struct JudgedTest {
    pub result: DefinitionResult,
    pub flag: Flag,
    pub items: Vec<CollectedItem>,
    pub total: usize,
}

/// A document's results with its walked tests judged on the host.
#[derive(Debug, Clone, Default)]
pub struct Judged {
    pub results: OvalResults,
    pub tests: HashMap<String, JudgedTest>,
}

impl Judged {
    /// `evidence` (what the plan finds in oscap's report) with the walked tests' results,
    /// flags and items from the walk, and their criteria judged again.
    pub fn patch(&self, evidence: &mut [Evidence]) {
        let over = |t: &str| self.tests.get(t).map(|j| j.result);
        for e in evidence {
            if let Some(c) = e.criteria.as_ref().filter(|c| names_any(c, &self.tests)) {
                e.result = c.recompute(&over);
                e.criteria = Some(c.rejudged(&over));
            }
            for t in &mut e.tests {
                if let Some(j) = self.tests.get(&t.id) {
                    t.result = j.result;
                    t.flag = Some(j.flag.oval().to_string());
                    t.items = j.items.clone();
                    t.items_total = j.total;
                }
            }
        }
    }
}

impl WalkPart {
    /// The document's definition results with the walked tests judged on `walk`. `xml` is the
    /// results document `report` was read from.
    pub fn results(&self, xml: &[u8], report: &OvalReport, walk: &Listing) -> Result<OvalResults, WalkError> {
        Ok(self.judge(xml, report, walk)?.results)
    }

    /// As [`WalkPart::results`], with each walked test's judgement, for the evidence.
    pub fn judge(&self, xml: &[u8], report: &OvalReport, walk: &Listing) -> Result<Judged, WalkError> {
        let values = variable_values(xml)?;
        let by_probe: HashMap<&str, &str> = self.probes.iter().map(|(var, obj)| (obj.as_str(), var.as_str())).collect();
        let mut vars: HashMap<&str, Vec<String>> = HashMap::new();
        for (obj, vals) in &values {
            if let Some(var) = by_probe.get(obj.as_str()) {
                vars.insert(var, vals.clone());
            }
        }
        let var = |id: &str| vars.get(id).cloned();
        let mut tests: HashMap<String, JudgedTest> = HashMap::new();
        for t in &self.tests {
            let mut c = collect(&t.object, walk, &var)?;
            let filters: Vec<(bool, &super::FileState)> = t.filters.iter().map(|(x, s)| (*x, s)).collect();
            filter(&mut c, walk, &filters, &var)?;
            let result = DefinitionResult::from(t.test.judge(&c, walk, &t.states, &var)?);
            // As oscap: an item is compared with the states only when there are some and the
            // items met the test's check_existence; otherwise it is `not evaluated`.
            let compares = !t.states.is_empty() && c.flag != Flag::Error && t.test.exists(&c);
            let mut items = Vec::new();
            for i in c.items.iter().take(MAX_ITEMS) {
                let e = walk.entry(i.entry);
                let compared = match compares {
                    true => DefinitionResult::from(t.test.item(i, e, &t.states, &var)?),
                    false => DefinitionResult::NotEvaluated,
                };
                items.push(CollectedItem {
                    id: String::new(),
                    kind: "file_item".into(),
                    status: "exists".into(),
                    result: Some(compared),
                    fields: fields(i, e),
                });
            }
            tests.insert(t.test.id.clone(), JudgedTest { result, flag: c.flag, items, total: c.items.len() });
        }
        let mut results = report.results();
        for (id, r) in results.definitions.iter_mut() {
            if let Some(c) = report.criteria(id).filter(|c| names_any(c, &tests)) {
                *r = c.recompute(&|t| tests.get(t).map(|j| j.result));
            }
        }
        Ok(Judged { results, tests })
    }
}

/// A name as oscap's results give it: UTF-8 as it is, and a byte that is not UTF-8 as the
/// character of its value, as libxml2 writes it (`&#254;`, the document then said to be
/// ISO-8859-1).
pub fn name_text(name: &[u8]) -> String {
    let mut out = String::with_capacity(name.len());
    for chunk in name.utf8_chunks() {
        out.push_str(chunk.valid());
        out.extend(chunk.invalid().iter().map(|b| char::from(*b)));
    }
    out
}

/// An item's fields, named and ordered as oscap's `file_item`s (times and size are not walked).
fn fields(i: &Item, e: &Entry) -> Vec<(String, String)> {
    let mut f = Vec::with_capacity(17);
    if let Some(name) = &i.filename {
        let mut p = i.path.clone();
        if p.last() != Some(&b'/') {
            p.push(b'/');
        }
        p.extend_from_slice(name);
        f.push(("filepath".to_string(), name_text(&p)));
    }
    f.push(("path".into(), name_text(&i.path)));
    f.push(("filename".into(), i.filename.as_deref().map(name_text).unwrap_or_default()));
    f.push(("type".into(), e.kind.oval().into()));
    f.push(("group_id".into(), e.gid.to_string()));
    f.push(("user_id".into(), e.uid.to_string()));
    for (name, bit) in BITS {
        f.push((name.to_string(), (e.mode & bit != 0).to_string()));
    }
    f
}

const BITS: [(&str, u32); 12] = [
    ("suid", 0o4000),
    ("sgid", 0o2000),
    ("sticky", 0o1000),
    ("uread", 0o400),
    ("uwrite", 0o200),
    ("uexec", 0o100),
    ("gread", 0o40),
    ("gwrite", 0o20),
    ("gexec", 0o10),
    ("oread", 0o4),
    ("owrite", 0o2),
    ("oexec", 0o1),
];

fn names_any<V>(c: &Criterion, tests: &HashMap<String, V>) -> bool {
    match c {
        Criterion::Test { test, .. } => tests.contains_key(test),
        Criterion::Criteria { children, .. } => children.iter().any(|c| names_any(c, tests)),
    }
}

/// Each collected object's variable values, by the object's id: the `variable_item`s of the
/// system characteristics, every `value` read whole.
pub(super) fn variable_values(xml: &[u8]) -> Result<HashMap<String, Vec<String>>, WalkError> {
    let mut x = Xml::new(xml)?;
    // item id -> values; object id -> its items.
    let mut items: HashMap<String, Vec<String>> = HashMap::new();
    let mut objects: Vec<(String, Vec<String>)> = Vec::new();
    let mut current: Option<String> = None;
    loop {
        let (e, empty) = match x.next()? {
            Event::Start(e) => (e, false),
            Event::Empty(e) => (e, true),
            Event::Eof => break,
            _ => continue,
        };
        match local(&e) {
            "object" if x.attr(&e, "flag")?.is_some() => {
                let id = x.attr(&e, "id")?.unwrap_or_default();
                objects.push((id, Vec::new()));
                current = (!empty).then(|| objects.len().to_string());
            }
            "reference" if current.is_some() => {
                if let (Some(item), Some(last)) = (x.attr(&e, "item_ref")?, objects.last_mut()) {
                    last.1.push(item);
                }
            }
            "variable_item" if !empty => {
                current = None;
                let id = x.attr(&e, "id")?.unwrap_or_default();
                let mut values = Vec::new();
                while let Some((v, vempty)) = x.child("variable_item")? {
                    if local(&v) == "value" && !vempty {
                        let mut b = TextBuilder::raw(MAX_VALUE);
                        x.content("value", &mut b)?;
                        if b.truncated() {
                            return Err(WalkError::Unsupported { object: id, why: format!("a variable value over {MAX_VALUE} bytes") });
                        }
                        values.push(b.finish().plain());
                    } else if local(&v) == "value" {
                        values.push(String::new());
                    } else if !vempty {
                        x.skip(&v)?;
                    }
                }
                items.insert(id, values);
            }
            _ => {}
        }
    }
    Ok(objects.into_iter().map(|(id, refs)| (id, refs.iter().flat_map(|r| items.get(r).cloned().unwrap_or_default()).collect())).collect())
}

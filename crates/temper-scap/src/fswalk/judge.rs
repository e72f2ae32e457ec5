//! After oscap has run a document cut for the walk: the variables' values from the probes, each
//! walked test judged on the host, and every definition that names one of them judged again.
//! A test whose object the walk cannot complete at run time ([`super::gap`]) is not judged: the
//! object is named in [`JudgedWalk::fallen`], and the rules whose definitions name its tests go to
//! oscap ([`JudgedWalk::rules_to_oscap`]).
use std::collections::{BTreeSet, HashMap};

use quick_xml::events::Event;

use super::WalkError;
use super::collect::{ItemNames, collect};
use super::gap::{Fallback, Gap, GapAt};
use super::listing::{ListedEntry, Listing};
use super::plan::{WalkPart, WalkedTest};
use super::state::filter;
use crate::oval::{CollectedItem, DefinitionResult, Evidence, Flag, ItemStatus, OvalPlan, OvalReport, OvalResults, shown};
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
pub struct JudgedWalk {
    pub results: OvalResults,
    pub tests: HashMap<String, JudgedTest>,
    /// The objects the walk could not complete, each once, with why: oscap walks for them.
    pub fallen: Vec<Fallback>,
    /// The tests on those objects.
    fallen_tests: BTreeSet<String>,
}

impl JudgedWalk {
    /// The rules of `plan` whose definitions (through the extended ones) name a test whose
    /// object fell to oscap: their results in `report` come from the stand-in, which did not
    /// walk, so they are scanned again with oscap walking.
    pub fn rules_to_oscap(&self, plan: &OvalPlan, report: &OvalReport) -> Vec<String> {
        if self.fallen_tests.is_empty() {
            return Vec::new();
        }
        plan.rules
            .iter()
            .filter(|r| {
                r.document_id.as_ref().and_then(|d| report.criteria(d)).is_some_and(|c| c.names_any(&|t| self.fallen_tests.contains(t)))
            })
            .map(|r| r.id.clone())
            .collect()
    }

    /// Each walked test's result as the host judged it, for [`OvalPlan::evidence_judged`].
    pub fn test_results(&self) -> crate::oval::TestResults {
        self.tests.iter().map(|(id, j)| (id.clone(), j.result)).collect()
    }

    /// `evidence` (what the plan finds in oscap's report) with the walked tests' results,
    /// flags and items from the walk, and their criteria judged again.
    pub fn patch(&self, evidence: &mut [Evidence]) {
        let over = |t: &str| self.tests.get(t).map(|j| j.result);
        for e in evidence {
            if let Some(c) = e.criteria.as_ref().filter(|c| c.names_any(&|t| self.tests.contains_key(t))) {
                e.result = c.recompute(&over);
                e.criteria = Some(c.rejudged(&over));
            }
            for t in &mut e.tests {
                if let Some(j) = self.tests.get(&t.id) {
                    t.result = j.result;
                    t.flag = Some(j.flag);
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
    pub fn results(&self, xml: &[u8], report: &OvalReport, walk: &Listing) -> OvalResults {
        self.judge(xml, report, walk).results
    }

    /// No walk to judge over (it failed, `at` says how): every walked test's object falls to
    /// oscap.
    pub fn unwalked(&self, report: &OvalReport, at: &GapAt) -> JudgedWalk {
        let mut j = JudgedWalk { results: report.results(), ..JudgedWalk::default() };
        for t in &self.tests {
            j.fall(t, at);
        }
        j
    }

    /// As [`WalkPart::results`], with each walked test's judgement, for the evidence, and the
    /// objects the walk could not complete.
    pub fn judge(&self, xml: &[u8], report: &OvalReport, walk: &Listing) -> JudgedWalk {
        let mut judged = JudgedWalk::default();
        let values = match variable_values(xml) {
            Ok(v) => v,
            Err(e) => {
                let at = GapAt::new(Gap::Unsupported, format!("the variables' values: {e}"));
                return self.unwalked(report, &at);
            }
        };
        let by_probe: HashMap<&str, &str> = self.probes.iter().map(|(var, obj)| (obj.as_str(), var.as_str())).collect();
        let mut vars: HashMap<&str, Vec<String>> = HashMap::new();
        for (obj, vals) in &values {
            if let Some(var) = by_probe.get(obj.as_str()) {
                vars.insert(var, vals.clone());
            }
        }
        let var = |id: &str| vars.get(id).cloned();
        for t in &self.tests {
            match judge_test(t, walk, &var) {
                Ok(j) => {
                    judged.tests.insert(t.test.id.clone(), j);
                }
                Err(e) => judged.fall(t, &gap_of(&e)),
            }
        }
        let mut results = report.results();
        report.rejudge(&mut results, &|t| judged.tests.contains_key(t), &|t| judged.tests.get(t).map(|j| j.result));
        judged.results = results;
        judged
    }
}

impl JudgedWalk {
    /// Test `t`'s object falls to oscap, `at` says why (named once per object).
    fn fall(&mut self, t: &WalkedTest, at: &GapAt) {
        self.fallen_tests.insert(t.test.id.clone());
        if !self.fallen.iter().any(|f| f.object == t.object.id) {
            self.fallen.push(Fallback::new(&t.object.id, at));
        }
    }
}

/// Why a walk error leaves an object to oscap.
pub(super) fn gap_of(e: &WalkError) -> GapAt {
    match e {
        WalkError::Incomplete { at, .. } => at.clone(),
        other => GapAt::new(Gap::Unsupported, other.to_string()),
    }
}

/// One walked test judged over the walk: its result, flag and first items.
fn judge_test(t: &WalkedTest, walk: &Listing, var: &dyn Fn(&str) -> Option<Vec<String>>) -> Result<JudgedTest, WalkError> {
    let mut c = collect(&t.object, walk, var)?;
    let filters: Vec<(bool, &super::FileState)> = t.filters.iter().map(|(x, s)| (*x, s)).collect();
    filter(&mut c, walk, &filters, var)?;
    let result = DefinitionResult::from(t.test.judge(&c, walk, &t.states, var)?);
    // As oscap: an item is compared with the states only when there are some and the items met
    // the test's check_existence; otherwise it is `not evaluated`.
    let compares = !t.states.is_empty() && c.flag != Flag::Error && t.test.exists(&c);
    let mut items = Vec::new();
    for i in c.items.iter().take(MAX_ITEMS) {
        let (names, e) = (c.names(walk, i), walk.entry(i.entry));
        let compared = match compares {
            true => DefinitionResult::from(t.test.item(&names, e, &t.states, var)?),
            false => DefinitionResult::NotEvaluated,
        };
        items.push(CollectedItem {
            id: String::new(),
            kind: "file_item".into(),
            status: ItemStatus::Exists,
            result: Some(compared),
            fields: fields(&names, e),
        });
    }
    Ok(JudgedTest { result, flag: c.flag, items, total: c.items.len() })
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

/// An item's fields, named and ordered as oscap's `file_item`s (times and size are not walked),
/// each cut as oscap's are for the evidence ([`shown`]).
fn fields(i: &ItemNames<'_>, e: &ListedEntry) -> Vec<(String, String)> {
    let mut f = Vec::with_capacity(17);
    if let Some(p) = i.filepath() {
        f.push(("filepath".to_string(), shown(name_text(&p))));
    }
    f.push(("path".into(), shown(name_text(&i.path))));
    f.push(("filename".into(), i.filename.map(name_text).map(shown).unwrap_or_default()));
    f.push(("type".into(), e.kind.oval().into()));
    f.push(("group_id".into(), e.gid.to_string()));
    f.push(("user_id".into(), e.uid.to_string()));
    for (name, bit) in BITS {
        f.push((name.to_string(), (u32::from(e.mode) & bit != 0).to_string()));
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

//! The packages' part of an OVAL document: each `dpkginfo_test` with no state, on one package
//! named as it is, is judged on the host over the guest's dpkg status ([`crate::dpkg`], as
//! oscap 1.3.7's probe judges it), and oscap sees a stand-in in its place: an `unknown_test`
//! of the same id, with no object. So oscap's dpkginfo probe, which opens APT's cache (about
//! 2 s of each run under TCG, against 0.1 s to read the status file), never starts for it.
//! Any other `dpkginfo_test` (a state, a variable, an operation) stays with oscap.
use std::collections::{HashMap, HashSet};

use quick_xml::events::BytesStart;

use super::doc::escape;
use super::evidence::{CollectedItem, Evidence, OvalReport, TestResults};
use super::results::{DefinitionResult, OvalResults};
use super::vocab::{Existence, Flag};
use crate::dpkg::Dpkg;
use crate::fswalk::plan::RawElement;
use crate::fswalk::state::first;
use crate::xml::{Xml, local};

/// Largest package name read (Debian's are at most a few dozen bytes).
const MAX_NAME: usize = 256;

/// A test the host judges: its id in the document, its package, and its `check_existence`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageTest {
    pub id: String,
    pub package: String,
    pub check_existence: Existence,
}

/// What the host judges of one document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PackagePart {
    pub tests: Vec<PackageTest>,
}

/// The document's changes for the packages' part.
#[derive(Debug, Default)]
pub(crate) struct PackageCut {
    /// A test's id -> its stand-in's text.
    pub replace: HashMap<String, String>,
    /// Objects no element names once their tests are stand-ins: left out of the document.
    pub drop: HashSet<String>,
    pub part: PackagePart,
}

/// The cut: which tests the host judges, their stand-ins, and the objects left unnamed.
pub(crate) fn cut(elements: &[RawElement]) -> PackageCut {
    let by_id: HashMap<&str, &RawElement> = elements.iter().map(|e| (e.id.as_str(), e)).collect();
    let mut c = PackageCut::default();
    for e in elements.iter().filter(|e| e.local == "dpkginfo_test") {
        let Some(t) = read_test(&e.text) else { continue };
        let Some(package) = by_id.get(t.object.as_str()).and_then(|o| read_object(&o.text)) else { continue };
        c.replace.insert(e.id.clone(), stand_in(&e.id, &t.version));
        c.part.tests.push(PackageTest { id: e.id.clone(), package, check_existence: t.check_existence });
    }
    let named: HashSet<&str> =
        elements.iter().filter(|e| !c.replace.contains_key(&e.id)).flat_map(|e| e.refs.iter().map(String::as_str)).collect();
    let judged: HashSet<&str> = c.part.tests.iter().map(|t| t.id.as_str()).collect();
    c.drop = elements
        .iter()
        .filter(|e| e.local == "dpkginfo_object" && !named.contains(e.id.as_str()))
        .filter(|o| elements.iter().any(|t| judged.contains(t.id.as_str()) && t.refs.contains(&o.id)))
        .map(|o| o.id.clone())
        .collect();
    c
}

/// The stand-in oscap evaluates: `unknown` at once, no object, no probe.
fn stand_in(id: &str, version: &str) -> String {
    format!(
        r#"<unknown_test xmlns="http://oval.mitre.org/XMLSchema/oval-definitions-5#independent" id="{}" version="{}" check="all" comment="judged on the host from the guest's dpkg status"/>"#,
        escape(id),
        escape(version)
    )
}

/// What a `dpkginfo_test` says, when the host can judge it.
struct ReadTest {
    version: String,
    check_existence: Existence,
    object: String,
}

/// A test with one object, no state, and a `check_existence` the host reads; `None` otherwise.
fn read_test(text: &str) -> Option<ReadTest> {
    let mut x = Xml::new(text.as_bytes()).ok()?;
    let (root, empty) = first(&mut x).ok()?;
    if empty {
        return None;
    }
    let [version, check_existence] = x.attrs(&root, ["version", "check_existence"]).ok()?;
    let check_existence = Existence::of(check_existence.as_deref()).ok()?;
    let mut object = None;
    while let Some((e, empty)) = x.child("dpkginfo_test").ok()? {
        match local(&e) {
            "object" if object.is_none() => object = x.attr(&e, "object_ref").ok()?,
            _ => return None,
        }
        if !empty {
            x.skip(&e).ok()?;
        }
    }
    Some(ReadTest { version: version.unwrap_or_else(|| "1".into()), check_existence, object: object? })
}

/// The package a `dpkginfo_object` names: one `name`, a literal compared for equality; `None`
/// for anything else (a variable, an operation, a filter, a set, behaviors).
fn read_object(text: &str) -> Option<String> {
    let mut x = Xml::new(text.as_bytes()).ok()?;
    let (root, empty) = first(&mut x).ok()?;
    if empty || local(&root) != "dpkginfo_object" {
        return None;
    }
    let mut name = None;
    while let Some((e, empty)) = x.child("dpkginfo_object").ok()? {
        if local(&e) != "name" || name.is_some() || empty || !plain_entity(&x, &e)? {
            return None;
        }
        name = Some(x.plain("name", MAX_NAME).ok()?);
    }
    name.filter(|n| !n.is_empty() && n.len() < MAX_NAME && !n.contains(char::is_whitespace))
}

/// A `name` with no attribute but `datatype="string"` and `operation="equals"`.
fn plain_entity(x: &Xml<'_>, e: &BytesStart<'_>) -> Option<bool> {
    let attrs = x.all_attrs(e).ok()?;
    Some(attrs.iter().all(|(k, v)| matches!((k.as_str(), v.as_str()), ("datatype", "string") | ("operation", "equals"))))
}

/// The part's tests as the host judged them over one package list.
#[derive(Debug, Clone, Default)]
pub struct JudgedPackages {
    pub tests: HashMap<String, (DefinitionResult, Vec<CollectedItem>)>,
}

impl PackagePart {
    /// Each test judged over `dpkg`, the guest's packages.
    pub fn judge(&self, dpkg: &Dpkg) -> JudgedPackages {
        let tests = self.tests.iter().map(|t| (t.id.clone(), dpkg.judge_name(&t.package, t.check_existence))).collect();
        JudgedPackages { tests }
    }
}

impl JudgedPackages {
    /// Each test's result, for [`super::OvalPlan::evidence_judged`].
    pub fn results(&self) -> TestResults {
        self.tests.iter().map(|(id, (r, _))| (id.clone(), *r)).collect()
    }

    /// `results` (oscap's, or as the walk judged them) with every definition that names one of
    /// these tests judged again, over these and `also` (the walk's tests).
    pub fn rejudge(&self, results: &mut OvalResults, report: &OvalReport, also: Option<&TestResults>) {
        if self.tests.is_empty() {
            return;
        }
        let over = |t: &str| self.tests.get(t).map(|j| j.0).or_else(|| also.and_then(|a| a.get(t).copied()));
        report.rejudge(results, &|t| self.tests.contains_key(t), &over);
    }

    /// The package tests in `evidence` with the host's result, flag and items.
    pub fn patch(&self, evidence: &mut [Evidence]) {
        for t in evidence.iter_mut().flat_map(|e| e.tests.iter_mut()) {
            if let Some((result, items)) = self.tests.get(&t.id) {
                t.result = *result;
                t.flag = Some(Flag::found(items.len()));
                t.items = items.clone();
                t.items_total = items.len();
                t.refused.clear();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oval::index::Section;

    fn el(section: Section, id: &str, local: &str, refs: &[&str], text: &str) -> RawElement {
        RawElement { section, id: id.into(), local: local.into(), refs: refs.iter().map(|r| r.to_string()).collect(), text: text.into() }
    }

    fn test(id: &str, obj: &str, extra: &str) -> RawElement {
        let text = format!(
            r#"<linux:dpkginfo_test id="{id}" version="2" check="all" check_existence="none_exist" comment="c"><linux:object object_ref="{obj}"/>{extra}</linux:dpkginfo_test>"#
        );
        let mut refs = vec![obj];
        if extra.contains("state_ref") {
            refs.push("oval:x:ste:1");
        }
        el(Section::Tests, id, "dpkginfo_test", &refs, &text)
    }

    fn object(id: &str, name: &str) -> RawElement {
        el(
            Section::Objects,
            id,
            "dpkginfo_object",
            &[],
            &format!(r#"<linux:dpkginfo_object id="{id}" version="1">{name}</linux:dpkginfo_object>"#),
        )
    }

    #[test]
    fn a_test_with_no_state_on_a_named_package_becomes_a_stand_in() {
        let els = [test("oval:x:tst:1", "oval:x:obj:1", ""), object("oval:x:obj:1", "<linux:name>telnet</linux:name>")];
        let c = cut(&els);
        assert_eq!(
            c.part.tests,
            [PackageTest { id: "oval:x:tst:1".into(), package: "telnet".into(), check_existence: Existence::NoneExist }]
        );
        let s = &c.replace["oval:x:tst:1"];
        assert!(s.starts_with("<unknown_test ") && s.contains(r#"id="oval:x:tst:1" version="2""#), "{s}");
        assert_eq!(c.drop, HashSet::from(["oval:x:obj:1".to_string()]), "the object no element names any more");
    }

    #[test]
    fn states_variables_operations_and_shared_objects_stay_with_oscap() {
        let els = [
            test("oval:x:tst:1", "oval:x:obj:1", r#"<linux:state state_ref="oval:x:ste:1"/>"#),
            object("oval:x:obj:1", "<linux:name>a</linux:name>"),
            test("oval:x:tst:2", "oval:x:obj:2", ""),
            object("oval:x:obj:2", r#"<linux:name var_ref="oval:x:var:1"/>"#),
            test("oval:x:tst:3", "oval:x:obj:3", ""),
            object("oval:x:obj:3", r#"<linux:name operation="pattern match">^lib</linux:name>"#),
            test("oval:x:tst:4", "oval:x:obj:4", ""),
            object("oval:x:obj:4", r#"<linux:name>b</linux:name><filter action="include">oval:x:ste:2</filter>"#),
        ];
        let c = cut(&els);
        assert!(c.part.tests.is_empty() && c.replace.is_empty() && c.drop.is_empty(), "{:?}", c.part);

        // One object under a judged test and a test oscap keeps: the object stays.
        let els = [
            test("oval:x:tst:1", "oval:x:obj:1", ""),
            test("oval:x:tst:2", "oval:x:obj:1", r#"<linux:state state_ref="oval:x:ste:1"/>"#),
            object("oval:x:obj:1", "<linux:name>a</linux:name>"),
        ];
        let c = cut(&els);
        assert_eq!(c.part.tests.len(), 1);
        assert!(c.drop.is_empty(), "the test oscap keeps still names the object");
    }

    #[test]
    fn a_package_test_is_judged_over_the_status_and_named_in_its_definitions() {
        let dpkg = Dpkg::parse(
            "Package: dpkg\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1.21.22\n\n\
             Package: aide\nStatus: install ok installed\nArchitecture: amd64\nVersion: 0.18.3-1\n",
        );
        let part = PackagePart {
            tests: vec![
                PackageTest { id: "t1".into(), package: "aide".into(), check_existence: Existence::AtLeastOneExists },
                PackageTest { id: "t2".into(), package: "telnet".into(), check_existence: Existence::NoneExist },
            ],
        };
        let j = part.judge(&dpkg);
        assert_eq!(j.tests["t1"].0, DefinitionResult::True);
        assert_eq!(j.tests["t1"].1[0].fields[0], ("name".to_string(), "aide".to_string()));
        assert_eq!(j.tests["t2"], (DefinitionResult::True, Vec::new()));
    }
}

//! The walk's part of an OVAL document: which file tests the walk judges on the host, the
//! document changed so that oscap no longer walks for them, and probes that have oscap report
//! the values of the variables those tests need.
//!
//! Each walking object the walk implements (with every test on it and every state they name)
//! becomes a stand-in: the same object with `recurse_direction="none"`, so oscap looks only at
//! its starting directories, and its variables are still computed. The variables come back
//! through one `variable_object` each. An object variables take values from (an
//! `object_component`) is fed to them from the walk ([`super::feed`]); its own variables come
//! from a first, small run ([`WalkPart::pre`]). An object with anything the walk does not
//! implement is left to oscap, with why.
use std::collections::{BTreeSet, HashMap};

use super::WalkError;
use super::feed::{self, Feed};
use super::object::{EntityValue, ObjectTarget, WalkObject};
use super::state::{FileState, FileTest};
use crate::oval::index::Section;

/// One element of the document: its list, id, the ids it names, and its text.
#[derive(Debug, Clone)]
pub(crate) struct RawElement {
    pub section: Section,
    pub id: String,
    pub local: String,
    pub refs: Vec<String>,
    pub text: String,
}

/// A test the walk judges: the test, its object, the object's filters and the test's states.
#[derive(Debug, Clone)]
pub struct WalkedTest {
    pub test: FileTest,
    pub object: WalkObject,
    pub filters: Vec<(bool, FileState)>,
    pub states: Vec<FileState>,
}

/// What the walk takes over in one document.
#[derive(Debug, Clone, Default)]
pub struct WalkPart {
    pub tests: Vec<WalkedTest>,
    /// A variable's id -> the id of the probe object whose item holds its values.
    pub probes: Vec<(String, String)>,
    /// Walking objects left to oscap: (object id, why).
    pub left: Vec<(String, String)>,
    /// Walking objects variables take values from, filled in before oscap runs.
    pub feeds: Vec<Feed>,
    /// The first run, when the feeds' objects need variables: its document, and each
    /// variable's probe object as in [`WalkPart::probes`].
    pub pre: Option<PrePass>,
}

/// The small run before the main one that gives the feeds' own variables.
#[derive(Debug, Clone)]
pub struct PrePass {
    pub document: Vec<u8>,
    pub probes: Vec<(String, String)>,
}

/// Elements the walk adds to a document: each one's list and text.
pub(crate) type Added = Vec<(Section, String)>;

/// The document's changes: elements whose text is replaced, and elements to add.
#[derive(Debug, Clone, Default)]
pub(crate) struct Cut {
    pub replace: HashMap<String, String>,
    pub add: Vec<(Section, String)>,
    pub part: WalkPart,
    /// The first run's probes (its elements), when the feeds need variables.
    pub pre: Vec<(Section, String)>,
    /// The variables the first run gives: their closure goes in its document.
    pub pre_vars: Vec<String>,
}

const IND: &str = "http://oval.mitre.org/XMLSchema/oval-definitions-5#independent";
const DEF: &str = "http://oval.mitre.org/XMLSchema/oval-definitions-5";

/// Whether an object's text walks down a tree.
pub fn walks_down(local: &str, text: &str) -> bool {
    local == "file_object" && text.contains(r#"recurse_direction="down""#) && !text.contains(r#"max_depth="0""#)
}

/// Plans the walk's part of a document made of `elements`.
pub(crate) fn cut(elements: &[RawElement]) -> Cut {
    let by_id: HashMap<&str, &RawElement> = elements.iter().map(|e| (e.id.as_str(), e)).collect();
    let mut cut = Cut::default();
    let mut vars: BTreeSet<String> = BTreeSet::new();
    let mut fed: BTreeSet<String> = BTreeSet::new();
    for o in elements.iter().filter(|e| e.section == Section::Objects && walks_down(&e.local, &e.text)) {
        let users: Vec<&RawElement> = elements.iter().filter(|e| e.section == Section::Variables && e.refs.contains(&o.id)).collect();
        if !users.is_empty() {
            match feed_of(cut.part.feeds.len(), o, &users, elements, &by_id) {
                Ok((f, add, used)) => {
                    for s in &f.swaps {
                        if let Some(id) = &s.id {
                            cut.replace.insert(id.clone(), s.marker.clone());
                        }
                    }
                    cut.add.extend(add);
                    fed.extend(used);
                    cut.part.feeds.push(f);
                }
                Err(why) => cut.part.left.push((o.id.clone(), why)),
            }
            continue;
        }
        match take(o, elements, &by_id) {
            Ok((tests, used)) => {
                cut.replace.insert(o.id.clone(), o.text.replacen(r#"recurse_direction="down""#, r#"recurse_direction="none""#, 1));
                vars.extend(used);
                cut.part.tests.extend(tests);
            }
            Err(why) => cut.part.left.push((o.id.clone(), why)),
        }
    }
    if !fed.is_empty() {
        let (add, probes) = probes(&fed, 1000, 2);
        cut.pre = add;
        cut.pre_vars = fed.into_iter().collect();
        cut.part.pre = Some(PrePass { document: Vec::new(), probes });
    }
    if !vars.is_empty() {
        let (add, probes) = probes(&vars, 0, 1);
        cut.add.extend(add);
        cut.part.probes = probes;
    }
    cut
}

/// One `variable_object` (with its test) for each of `vars`, under one definition, `def`: the
/// elements, and each variable's probe object. Ids are numbered from `from`.
fn probes(vars: &BTreeSet<String>, from: usize, def: usize) -> (Added, Vec<(String, String)>) {
    let mut add = Vec::new();
    let mut probes = Vec::new();
    let mut criteria = String::new();
    for (n, var) in vars.iter().enumerate() {
        let (obj, tst) = (format!("oval:temper.walk:obj:{}", from + n + 1), format!("oval:temper.walk:tst:{}", from + n + 1));
        add.push((
            Section::Objects,
            format!(
                r#"<ind:variable_object xmlns:ind="{IND}" id="{obj}" version="1"><ind:var_ref>{var}</ind:var_ref></ind:variable_object>"#
            ),
        ));
        add.push((
            Section::Tests,
            format!(
                r#"<ind:variable_test xmlns:ind="{IND}" id="{tst}" version="1" check="all" check_existence="any_exist" comment="the values of {var}, for the walk"><ind:object object_ref="{obj}"/></ind:variable_test>"#
            ),
        ));
        criteria.push_str(&format!(r#"<criterion test_ref="{tst}"/>"#));
        probes.push((var.clone(), obj));
    }
    add.push((
        Section::Definitions,
        format!(
            r#"<definition xmlns="{DEF}" id="oval:temper.walk:def:{def}" version="1" class="miscellaneous"><metadata><title>The values of the variables the walk needs</title><description>Added by temper: the walk judges these on the host.</description></metadata><criteria operator="OR">{criteria}</criteria></definition>"#
        ),
    ));
    (add, probes)
}

/// The feed for walking object `o`, which `users` take values from: the feed, the elements it
/// adds and the variables its object and filters need; or why it stays with oscap.
fn feed_of(
    f: usize,
    o: &RawElement,
    users: &[&RawElement],
    all: &[RawElement],
    by_id: &HashMap<&str, &RawElement>,
) -> Result<(Feed, Added, Vec<String>), String> {
    if let Some(t) = all.iter().find(|e| e.section == Section::Tests && e.refs.contains(&o.id)) {
        return Err(format!("variables take values from its items, and {} {} looks at it", t.local, t.id));
    }
    let object = WalkObject::read(o.text.as_bytes()).map_err(|e| e.to_string())?;
    let mut vars = object_vars(&object);
    let filters =
        object.filters.iter().map(|f| Ok((f.exclude, read_state(&f.state, by_id, &mut vars)?))).collect::<Result<Vec<_>, String>>()?;
    if let Some(x) = vars.iter().find(|v| by_id.get(v.as_str()).is_some_and(|e| e.local == "external_variable")) {
        return Err(format!("its items need external variable {x} before the scan"));
    }
    let (feed, add) = feed::plan(f, o, object, filters, users)?;
    Ok((feed, add, vars))
}

/// The variables an object's own entities name.
fn object_vars(object: &WalkObject) -> Vec<String> {
    let mut vars = Vec::new();
    let mut var_of = |v: &EntityValue| {
        if let EntityValue::Var(id) = v {
            vars.push(id.clone());
        }
    };
    match &object.target {
        ObjectTarget::Dir { path, filename } => {
            var_of(&path.value);
            if let Some(f) = filename {
                var_of(&f.value);
            }
        }
        ObjectTarget::Filepath(fp) => var_of(&fp.value),
    }
    vars
}

/// State `id`, read, with the variables it names added to `vars`.
fn read_state(id: &str, by_id: &HashMap<&str, &RawElement>, vars: &mut Vec<String>) -> Result<FileState, String> {
    let e = by_id.get(id).ok_or_else(|| format!("state {id} is not in the document"))?;
    let s = FileState::read(e.text.as_bytes()).map_err(|e| e.to_string())?;
    vars.extend(s.checks.iter().filter(|c| c.var).map(|c| c.value.clone()));
    Ok(s)
}

/// The tests on walking object `o`, read whole, and the variables they need; or why the
/// object stays with oscap.
fn take(o: &RawElement, all: &[RawElement], by_id: &HashMap<&str, &RawElement>) -> Result<(Vec<WalkedTest>, Vec<String>), String> {
    let why = |e: WalkError| e.to_string();
    let object = WalkObject::read(o.text.as_bytes()).map_err(why)?;
    let mut vars = object_vars(&object);
    let filters =
        object.filters.iter().map(|f| Ok((f.exclude, read_state(&f.state, by_id, &mut vars)?))).collect::<Result<Vec<_>, String>>()?;
    let mut tests = Vec::new();
    for t in all.iter().filter(|e| e.section == Section::Tests && e.refs.contains(&o.id)) {
        if t.local != "file_test" {
            return Err(format!("{} {} looks at it", t.local, t.id));
        }
        let test = FileTest::read(t.text.as_bytes()).map_err(why)?;
        let states = test.states.iter().map(|s| read_state(s, by_id, &mut vars)).collect::<Result<Vec<_>, String>>()?;
        tests.push(WalkedTest { test, object: object.clone(), filters: filters.clone(), states });
    }
    if tests.is_empty() {
        return Err("no test looks at it".into());
    }
    Ok((tests, vars))
}

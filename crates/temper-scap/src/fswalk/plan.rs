//! The walk's part of an OVAL document: which file tests the walk judges on the host, the
//! document changed so that oscap no longer walks for them, and probes that have oscap report
//! the values of the variables those tests need.
//!
//! Each walking object the walk implements (with every test on it and every state they name)
//! becomes a stand-in: the same object with `recurse_direction="none"`, so oscap looks only at
//! its starting directories, and its variables are still computed. The variables come back
//! through one `variable_object` each. An object another element takes values from (a
//! variable's `object_component`), or with anything the walk does not implement, is left to
//! oscap, with why.
use std::collections::{BTreeSet, HashMap};

use super::WalkError;
use super::object::{Target, Value, WalkObject};
use super::state::{FileState, FileTest};
use crate::oval::index::Section;

/// One element of the document: its list, id, the ids it names, and its text.
#[derive(Debug, Clone)]
pub(crate) struct Element {
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
}

/// The document's changes: elements whose text is replaced, and elements to add.
#[derive(Debug, Clone, Default)]
pub(crate) struct Cut {
    pub replace: HashMap<String, String>,
    pub add: Vec<(Section, String)>,
    pub part: WalkPart,
}

const IND: &str = "http://oval.mitre.org/XMLSchema/oval-definitions-5#independent";
const DEF: &str = "http://oval.mitre.org/XMLSchema/oval-definitions-5";

/// Whether an object's text walks down a tree.
pub fn walks_down(local: &str, text: &str) -> bool {
    local == "file_object" && text.contains(r#"recurse_direction="down""#) && !text.contains(r#"max_depth="0""#)
}

/// Plans the walk's part of a document made of `elements`.
pub(crate) fn cut(elements: &[Element]) -> Cut {
    let by_id: HashMap<&str, &Element> = elements.iter().map(|e| (e.id.as_str(), e)).collect();
    let mut cut = Cut::default();
    let mut vars: BTreeSet<String> = BTreeSet::new();
    for o in elements.iter().filter(|e| e.section == Section::Objects && walks_down(&e.local, &e.text)) {
        match take(o, elements, &by_id) {
            Ok((tests, used)) => {
                cut.replace.insert(o.id.clone(), o.text.replacen(r#"recurse_direction="down""#, r#"recurse_direction="none""#, 1));
                vars.extend(used);
                cut.part.tests.extend(tests);
            }
            Err(why) => cut.part.left.push((o.id.clone(), why)),
        }
    }
    if vars.is_empty() {
        return cut;
    }
    let mut criteria = String::new();
    for (n, var) in vars.iter().enumerate() {
        let (obj, tst) = (format!("oval:temper.walk:obj:{}", n + 1), format!("oval:temper.walk:tst:{}", n + 1));
        cut.add.push((
            Section::Objects,
            format!(
                r#"<ind:variable_object xmlns:ind="{IND}" id="{obj}" version="1"><ind:var_ref>{var}</ind:var_ref></ind:variable_object>"#
            ),
        ));
        cut.add.push((
            Section::Tests,
            format!(
                r#"<ind:variable_test xmlns:ind="{IND}" id="{tst}" version="1" check="all" check_existence="any_exist" comment="the values of {var}, for the walk"><ind:object object_ref="{obj}"/></ind:variable_test>"#
            ),
        ));
        criteria.push_str(&format!(r#"<criterion test_ref="{tst}"/>"#));
        cut.part.probes.push((var.clone(), obj));
    }
    cut.add.push((
        Section::Definitions,
        format!(
            r#"<definition xmlns="{DEF}" id="oval:temper.walk:def:1" version="1" class="miscellaneous"><metadata><title>The values of the variables the walk needs</title><description>Added by temper: the walk judges these on the host.</description></metadata><criteria operator="OR">{criteria}</criteria></definition>"#
        ),
    ));
    cut
}

/// The tests on walking object `o`, read whole, and the variables they need; or why the
/// object stays with oscap.
fn take(o: &Element, all: &[Element], by_id: &HashMap<&str, &Element>) -> Result<(Vec<WalkedTest>, Vec<String>), String> {
    let why = |e: WalkError| e.to_string();
    if let Some(v) = all.iter().find(|e| e.section == Section::Variables && e.refs.contains(&o.id)) {
        return Err(format!("variable {} takes values from its items", v.id));
    }
    let object = WalkObject::read(o.text.as_bytes()).map_err(why)?;
    let mut vars = Vec::new();
    let var_of = |v: &Value, vars: &mut Vec<String>| {
        if let Value::Var(id) = v {
            vars.push(id.clone());
        }
    };
    match &object.target {
        Target::Dir { path, filename } => {
            var_of(&path.value, &mut vars);
            if let Some(f) = filename {
                var_of(&f.value, &mut vars);
            }
        }
        Target::Filepath(fp) => var_of(&fp.value, &mut vars),
    }
    let state = |id: &str, vars: &mut Vec<String>| -> Result<FileState, String> {
        let e = by_id.get(id).ok_or_else(|| format!("state {id} is not in the document"))?;
        let s = FileState::read(e.text.as_bytes()).map_err(why)?;
        vars.extend(s.checks.iter().filter(|c| c.var).map(|c| c.value.clone()));
        Ok(s)
    };
    let filters = object.filters.iter().map(|f| Ok((f.exclude, state(&f.state, &mut vars)?))).collect::<Result<Vec<_>, String>>()?;
    let mut tests = Vec::new();
    for t in all.iter().filter(|e| e.section == Section::Tests && e.refs.contains(&o.id)) {
        if t.local != "file_test" {
            return Err(format!("{} {} looks at it", t.local, t.id));
        }
        let test = FileTest::read(t.text.as_bytes()).map_err(why)?;
        let states = test.states.iter().map(|s| state(s, &mut vars)).collect::<Result<Vec<_>, String>>()?;
        tests.push(WalkedTest { test, object: object.clone(), filters: filters.clone(), states });
    }
    if tests.is_empty() {
        return Err("no test looks at it".into());
    }
    Ok((tests, vars))
}

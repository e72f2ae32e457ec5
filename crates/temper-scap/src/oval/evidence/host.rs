//! The definitions evidence is read against: the host's own, from the datastream the scan's
//! document was cut from, never the copy the guest's results document carries. A guest that
//! could write its own definitions there could add a failing test under an AND, change a
//! state's value or a variable's, and so choose what a derived fix changes as root. From the
//! guest come only results and what its probes collected (`parse.rs`).
use std::collections::HashMap;
use std::sync::Arc;

use quick_xml::events::{BytesStart, Event};

use crate::xml::{Xml, local};

use super::super::content::OvalContent;
use super::super::doc::{closure, rewrite};
use super::super::error::{OvalError, OvalResult};
use super::super::index::{Component, Section};
use super::super::vocab::{Check, Existence};
use super::Field;
use super::parts::{Node, children, criteria, metadata_title, text};

/// A test, object or state as the definitions give it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Element {
    pub kind: String,
    pub comment: String,
    /// A test's; the defaults for an object or a state, which have none.
    pub check: Check,
    pub check_existence: Existence,
    /// A state's `operator` (how its fields combine), when given.
    pub operator: Option<String>,
    pub object_ref: Option<String>,
    pub state_refs: Vec<String>,
    pub fields: Vec<Field>,
    /// A set object's `object_reference`s (nested sets included).
    pub set_refs: Vec<String>,
}

/// A variable, and where its value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Variable {
    /// Known on the host: a `constant_variable`'s values, or the profile's value of an
    /// `external_variable` (the one the scan's variables document gave oscap).
    Known(Vec<String>),
    /// An `external_variable` the host bound no value to.
    Unbound,
    /// The value the results give: a `local_variable`'s, computed by the guest's probes from its
    /// own state (an account's uid, a configured directory), so evidence as an item is; and in a
    /// document the host trusts ([`Definitions::parse`]), an external one's.
    Results,
}

/// The OVAL definitions evidence is read against: definitions (their titles and criteria, as
/// written), tests, objects, states and variables, by id.
#[derive(Debug, Clone, Default)]
pub struct Definitions {
    pub(crate) elements: HashMap<String, Element>,
    pub(crate) titles: HashMap<String, String>,
    /// Each definition's criteria as written: their results come from the guest's tests.
    pub(crate) trees: HashMap<String, Vec<Node>>,
    pub(crate) variables: HashMap<String, Variable>,
}

/// Where a plan's host definitions come from: the datastream it was cut from, and how its
/// document renamed ids (an id one component shares with an earlier one).
#[derive(Debug, Clone)]
pub(crate) struct Source {
    pub bytes: Arc<[u8]>,
    pub components: Arc<[Component]>,
    /// A check's `href` -> its component's index.
    pub hrefs: HashMap<String, usize>,
    /// Component index -> original id -> id in the document; only components with renames.
    pub renamed: HashMap<usize, HashMap<String, String>>,
}

impl OvalContent {
    /// The datastream as evidence reads it, ids as it has them.
    pub(crate) fn source(&self) -> Source {
        Source { bytes: self.bytes.clone(), components: self.components.clone(), hrefs: self.hrefs.clone(), renamed: HashMap::new() }
    }
}

impl Definitions {
    /// Every definition, test, object, state and variable of an OVAL definitions document, or
    /// of the one a results document carries. Only for documents the host trusts: results its
    /// own oscap wrote (a test's, `temper scan parse`), whose external variables have the values
    /// the results give.
    pub fn parse(document: &[u8]) -> OvalResult<Self> {
        let mut x = Xml::new(document)?;
        let mut d = Definitions::default();
        // The local name of the list we are in (`tests`, `objects`...), once inside definitions.
        let mut path: Vec<String> = Vec::new();
        loop {
            let (e, empty) = match x.next()? {
                Event::Start(e) => (e, false),
                Event::Empty(e) => (e, true),
                Event::End(_) => {
                    path.pop();
                    continue;
                }
                Event::Eof => return Ok(d),
                _ => continue,
            };
            let name = local(&e).to_string();
            let section = path.last().and_then(|p| section(p)).filter(|_| path.iter().any(|n| n == "oval_definitions"));
            match section {
                Some(s) => d.read(&mut x, &e, empty, s, Variable::Results)?,
                None if name == "results" && !empty => x.skip(&e)?,
                None if !empty => path.push(name),
                None => {}
            }
        }
    }

    /// The check `definition` of component `ci`, and everything it names, read element by
    /// element from the datastream; ids renamed as the scan's document renamed them, and the
    /// profile's values (`exports`: variable id in the datastream, value) bound to the external
    /// variables.
    pub(crate) fn of_check(source: &Source, ci: usize, definition: &str, exports: &[(String, String)]) -> OvalResult<Self> {
        let comp = &source.components[ci];
        let renamed = source.renamed.get(&ci);
        let named = |id: &str| renamed.and_then(|m| m.get(id)).cloned().unwrap_or_else(|| id.to_string());
        let mut d = Definitions::default();
        for id in closure(comp, &[definition.to_string()])? {
            let entry = &comp.entries[&id];
            let text = std::str::from_utf8(&source.bytes[entry.range.clone()]).expect("the datastream was read as UTF-8");
            let text = match renamed {
                Some(m) => rewrite(text, m),
                None => text.to_string(),
            };
            let mut x = Xml::new(text.as_bytes())?;
            loop {
                match x.next()? {
                    Event::Start(e) => break d.read(&mut x, &e, false, entry.section, Variable::Unbound)?,
                    Event::Empty(e) => break d.read(&mut x, &e, true, entry.section, Variable::Unbound)?,
                    Event::Eof => break,
                    _ => {}
                }
            }
        }
        d.bind(exports.iter().map(|(id, v)| (named(id), v.clone())));
        Ok(d)
    }

    /// The profile's values for external variables.
    pub(crate) fn bind(&mut self, values: impl IntoIterator<Item = (String, String)>) {
        for (id, value) in values {
            if let Some(v) = self.variables.get_mut(&id).filter(|v| **v == Variable::Unbound) {
                *v = Variable::Known(vec![value]);
            }
        }
    }

    /// One element of list `section`, whose start tag `e` was just read; an external variable
    /// reads as `external`.
    fn read(&mut self, x: &mut Xml<'_>, e: &BytesStart<'_>, empty: bool, section: Section, external: Variable) -> OvalResult<()> {
        let id = x.attr(e, "id")?.unwrap_or_default();
        match section {
            Section::Definitions => {
                let (title, nodes) = if empty { Default::default() } else { definition(x)? };
                self.titles.insert(id.clone(), title);
                self.trees.insert(id, nodes);
            }
            Section::Variables => {
                let v = match local(e) {
                    "constant_variable" if !empty => Variable::Known(values(x)?),
                    "constant_variable" => Variable::Known(Vec::new()),
                    "external_variable" => {
                        skip_rest(x, e, empty)?;
                        external
                    }
                    _ => {
                        skip_rest(x, e, empty)?;
                        Variable::Results
                    }
                };
                self.variables.insert(id, v);
            }
            Section::Tests | Section::Objects | Section::States => {
                let el = element(x, e, empty)?;
                self.elements.insert(id, el);
            }
        }
        Ok(())
    }
}

fn section(name: &str) -> Option<Section> {
    Section::ALL.into_iter().find(|s| s.local() == name)
}

fn skip_rest(x: &mut Xml<'_>, e: &BytesStart<'_>, empty: bool) -> OvalResult<()> {
    if !empty {
        x.skip(e)?;
    }
    Ok(())
}

/// A definition's title and criteria (their results left unknown), up to its end tag.
fn definition(x: &mut Xml<'_>) -> OvalResult<(String, Vec<Node>)> {
    let mut title = String::new();
    let mut nodes = Vec::new();
    children(x, |x, c, empty| match (local(c), empty) {
        ("metadata", false) => {
            title = metadata_title(x)?;
            Ok(true)
        }
        ("criteria", _) => {
            let [operator, negate] = x.attrs(c, ["operator", "negate"])?;
            let operator = operator.as_deref().map_or(super::Operator::And, super::Operator::parse);
            let children = if empty { Vec::new() } else { criteria(x, 1)? };
            let negate = negate.as_deref() == Some("true");
            nodes.push(Node::Criteria { operator, negate, result: super::DefinitionResult::NotEvaluated, children });
            Ok(true)
        }
        _ => Ok(false),
    })?;
    Ok((title, nodes))
}

/// A `constant_variable`'s values.
fn values(x: &mut Xml<'_>) -> OvalResult<Vec<String>> {
    let mut out = Vec::new();
    children(x, |x, c, empty| match (local(c), empty) {
        ("value", false) => {
            out.push(text(x)?);
            Ok(true)
        }
        ("value", true) => {
            out.push(String::new());
            Ok(false)
        }
        _ => Ok(false),
    })?;
    Ok(out)
}

/// A test, object or state whose start tag `e` was just read.
pub(crate) fn element(x: &mut Xml<'_>, e: &BytesStart<'_>, empty: bool) -> OvalResult<Element> {
    let [comment, check, existence, operator] = x.attrs(e, ["comment", "check", "check_existence", "operator"])?;
    let kind = local(e).to_string();
    // `check` is required of a test; `check_existence` has the schema's default.
    let (check, check_existence) = if kind.ends_with("_test") {
        let bad = |why| OvalError::BadAttribute { element: kind.clone(), why };
        (Check::read(check.as_deref().unwrap_or_default()).map_err(bad)?, Existence::of(existence.as_deref()).map_err(bad)?)
    } else {
        (Check::default(), Existence::default())
    };
    let mut el = Element { kind, comment: comment.unwrap_or_default(), check, check_existence, operator, ..Element::default() };
    if !empty {
        read_fields(x, &mut el)?;
    }
    Ok(el)
}

fn read_fields(x: &mut Xml<'_>, el: &mut Element) -> OvalResult<()> {
    loop {
        let Some((c, empty)) = x.child("OVAL element")? else {
            return Ok(());
        };
        let [object_ref, state_ref, operation, datatype, var_ref, nil] =
            x.attrs(&c, ["object_ref", "state_ref", "operation", "datatype", "var_ref", "xsi:nil"])?;
        match local(&c) {
            "object" if object_ref.is_some() => el.object_ref = object_ref,
            "state" if state_ref.is_some() => el.state_refs.extend(state_ref),
            "notes" | "signature" => {}
            name => {
                let value = match (empty, name) {
                    // Its attributes, as written: `recurse_direction=down max_depth=-1`.
                    (_, "behaviors") => {
                        let attrs: Vec<String> = x.all_attrs(&c)?.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
                        if !empty {
                            x.skip(&c)?;
                        }
                        attrs.join(" ")
                    }
                    (true, _) => String::new(),
                    (false, "set") => {
                        let operator = x.attr(&c, "set_operator")?.unwrap_or_else(|| "UNION".into());
                        read_set(x, &mut el.set_refs)?;
                        format!("{operator} of {}", el.set_refs.join(", "))
                    }
                    (false, _) => text(x)?,
                };
                let name = if name == "filter" {
                    format!("filter ({})", x.attr(&c, "action")?.unwrap_or_else(|| "exclude".into()))
                } else {
                    name.to_string()
                };
                let nil = nil.as_deref() == Some("true");
                el.fields.push(Field { name, value, operation, datatype, var_ref, nil });
                continue;
            }
        }
        if !empty {
            x.skip(&c)?;
        }
    }
}

/// The `object_reference`s of a `set`, through nested sets (a loop, not a recursion: the reader
/// bounds the nesting); filters are skipped.
fn read_set(x: &mut Xml<'_>, refs: &mut Vec<String>) -> OvalResult<()> {
    let mut open = 1usize;
    while open > 0 {
        let Some((c, empty)) = x.child("set")? else {
            open -= 1;
            continue;
        };
        match (local(&c), empty) {
            ("object_reference", false) => refs.push(text(x)?.trim().to_string()),
            ("set", false) => open += 1,
            (_, false) => x.skip(&c)?,
            (_, true) => {}
        }
    }
    Ok(())
}

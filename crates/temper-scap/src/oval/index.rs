//! One OVAL definitions component of a datastream, indexed by id: each element's byte range
//! in the datastream and the ids it references, so a small document can be cut from it
//! without building a DOM.
use std::collections::HashMap;
use std::ops::Range;

use quick_xml::events::{BytesStart, Event};
use serde::Serialize;

use crate::xml::{Xml, local};

use super::error::{OvalError, OvalResult};

/// The five lists of an OVAL definitions document, in the order the schema wants them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Section {
    Definitions,
    Tests,
    Objects,
    States,
    Variables,
}

impl Section {
    pub const ALL: [Section; 5] = [Self::Definitions, Self::Tests, Self::Objects, Self::States, Self::Variables];

    fn from_local(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.local() == name)
    }

    pub fn local(self) -> &'static str {
        match self {
            Self::Definitions => "definitions",
            Self::Tests => "tests",
            Self::Objects => "objects",
            Self::States => "states",
            Self::Variables => "variables",
        }
    }
}

/// An OVAL definition's `class`: `vulnerability` and `patch` turn the XCCDF mapping around.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DefClass {
    Compliance,
    Inventory,
    Miscellaneous,
    Patch,
    Vulnerability,
}

impl DefClass {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "compliance" => Self::Compliance,
            "inventory" => Self::Inventory,
            "miscellaneous" => Self::Miscellaneous,
            "patch" => Self::Patch,
            "vulnerability" => Self::Vulnerability,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone)]
pub(crate) struct IndexEntry {
    pub section: Section,
    /// The element, start tag to end tag, in the datastream's bytes.
    pub range: Range<usize>,
    /// Ids it names: `*_ref` attributes and `filter`, `object_reference`, `var_ref` text.
    pub refs: Vec<String>,
    pub class: Option<DefClass>,
    /// For an `external_variable`: its datatype.
    pub external: Option<String>,
}

/// An `oval_definitions` component.
#[derive(Debug, Clone, Default)]
pub(crate) struct Component {
    /// The datastream component's id.
    pub id: String,
    /// The root's qualified name and attributes, as written.
    pub root_name: String,
    pub root_attrs: Vec<(String, String)>,
    /// Namespace declarations in scope at the root (from its ancestors).
    pub ns: Vec<(String, String)>,
    pub generator: Option<Range<usize>>,
    /// Qualified names of the five lists, as written.
    pub section_names: HashMap<Section, String>,
    pub entries: HashMap<String, IndexEntry>,
}

impl Component {
    pub fn entry(&self, id: &str, from: &str) -> OvalResult<&IndexEntry> {
        self.entries.get(id).ok_or_else(|| OvalError::UnknownId { id: id.into(), from: from.into(), component: self.id.clone() })
    }
}

/// Reads the `oval_definitions` element whose start tag `e` was just read (it started at
/// byte `start`).
pub(crate) fn read_component(x: &mut Xml<'_>, e: &BytesStart<'_>, id: &str, ns: Vec<(String, String)>) -> OvalResult<Component> {
    let mut c = Component {
        id: id.to_string(),
        root_name: e.name().into_inner().to_string(),
        root_attrs: x.all_attrs(e)?,
        ns,
        ..Component::default()
    };
    let mut section: Option<Section> = None;
    loop {
        let before = x.pos() as usize;
        let (el, empty) = match x.next()? {
            Event::Start(el) => (el, false),
            Event::Empty(el) => (el, true),
            Event::End(_) => match section.take() {
                Some(_) => continue,
                None => return Ok(c),
            },
            Event::Eof => return Err(x.truncated("oval_definitions").into()),
            _ => continue,
        };
        match section {
            Some(s) => entry(x, &el, empty, s, before, &mut c)?,
            None if local(&el) == "generator" => {
                if !empty {
                    x.skip(&el)?;
                }
                c.generator = Some(before..x.pos() as usize);
            }
            None => match Section::from_local(local(&el)) {
                Some(s) => {
                    c.section_names.insert(s, el.name().into_inner().to_string());
                    if !empty {
                        section = Some(s);
                    }
                }
                None if !empty => x.skip(&el)?,
                None => {}
            },
        }
    }
}

fn entry(x: &mut Xml<'_>, el: &BytesStart<'_>, empty: bool, section: Section, start: usize, c: &mut Component) -> OvalResult<()> {
    let [id, class, datatype] = x.attrs(el, ["id", "class", "datatype"])?;
    let Some(id) = id else {
        if !empty {
            x.skip(el)?;
        }
        return Ok(());
    };
    let mut refs = Vec::new();
    ref_attrs(x, el, &mut refs)?;
    if !empty {
        refs_inside(x, &mut refs)?;
    }
    let external = (local(el) == "external_variable").then(|| datatype.unwrap_or_else(|| "string".into()));
    let e = IndexEntry { section, range: start..x.pos() as usize, refs, class: class.as_deref().and_then(DefClass::parse), external };
    if c.entries.insert(id.clone(), e).is_some() {
        return Err(OvalError::DuplicateId { id, component: c.id.clone() });
    }
    Ok(())
}

/// Walks an element's content to its end tag, collecting the ids it names.
fn refs_inside(x: &mut Xml<'_>, refs: &mut Vec<String>) -> OvalResult<()> {
    let mut depth = 0usize;
    loop {
        match x.next()? {
            Event::Start(el) => {
                ref_attrs(x, &el, refs)?;
                if matches!(local(&el), "filter" | "object_reference" | "var_ref") {
                    let id = x.plain("ref", 512)?;
                    if !id.is_empty() && !refs.contains(&id) {
                        refs.push(id);
                    }
                } else {
                    depth += 1;
                }
            }
            Event::Empty(el) => ref_attrs(x, &el, refs)?,
            Event::End(_) if depth == 0 => return Ok(()),
            Event::End(_) => depth -= 1,
            Event::Eof => return Err(x.truncated("OVAL element").into()),
            _ => {}
        }
    }
}

fn ref_attrs(x: &Xml<'_>, el: &BytesStart<'_>, refs: &mut Vec<String>) -> OvalResult<()> {
    for (k, v) in x.all_attrs(el)? {
        if k.ends_with("_ref") && !refs.contains(&v) {
            refs.push(v);
        }
    }
    Ok(())
}

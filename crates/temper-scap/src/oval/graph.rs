//! An OVAL definitions document's elements as a graph: each one's list, kind and the ids it
//! names, and for an object the values of its path entities. For a caller that must know what a
//! test looks at, and what it takes values from, before it trusts where the test ran (the verdict
//! from outside the guest, `temper-offline`).
use std::sync::LazyLock;

use quick_xml::events::Event;
use regex::Regex;

use super::error::{OvalError, OvalResult};
use super::index::{Section, read_component};
use crate::xml::{Xml, local};

/// `<unix:path operation="...">/etc</unix:path>`, `<ind:filepath>`: the entity's name, its
/// attributes and its text.
static PATH_ENTITY: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"<(?:[A-Za-z0-9_.\-]+:)?(path|filepath)\b([^>]*)>([^<]*)</").unwrap());
static OPERATION: LazyLock<Regex> = LazyLock::new(|| Regex::new(r#"operation\s*=\s*"([^"]*)""#).unwrap());

/// One element of a definitions document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocElement {
    pub id: String,
    pub section: Section,
    /// Its local name: `textfilecontent54_object`, `sysctl_test`, `local_variable`...
    pub kind: String,
    /// The ids it names (tests, objects, states, variables, filters, set members).
    pub refs: Vec<String>,
    /// For an object: each `path` or `filepath` entity given as a value (not a `var_ref`), with
    /// its `operation` (`equals` when none is given).
    pub paths: Vec<PathEntity>,
    /// For an object: it walks down a directory tree (a `file_object` recursing down).
    pub walks: bool,
}

/// A path entity of an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathEntity {
    pub value: String,
    /// `equals`, `pattern match`...
    pub operation: String,
}

/// The elements of a definitions document (such as a [`super::OvalPlan`]'s), in no order.
pub fn document_elements(document: &[u8]) -> OvalResult<Vec<DocElement>> {
    let mut x = Xml::new(document)?;
    let root = loop {
        match x.next()? {
            Event::Start(e) => break e,
            Event::Empty(e) => return Err(OvalError::NotOvalDefinitions(local(&e).to_string())),
            Event::Eof => return Err(crate::ScapError::NoRootElement.into()),
            _ => {}
        }
    };
    if local(&root) != "oval_definitions" {
        return Err(OvalError::NotOvalDefinitions(local(&root).to_string()));
    }
    let comp = read_component(&mut x, &root, "document", Vec::new())?;
    let text = std::str::from_utf8(document).expect("Xml::new checked UTF-8");
    let mut out = Vec::with_capacity(comp.entries.len());
    for (id, e) in comp.entries {
        let body = &text[e.range.clone()];
        let kind = super::doc::tag(body);
        let paths = match e.section {
            Section::Objects => paths(body),
            _ => Vec::new(),
        };
        let walks = e.section == Section::Objects && crate::fswalk::plan::walks_down(&kind, body);
        out.push(DocElement { id, section: e.section, kind, refs: e.refs, paths, walks });
    }
    Ok(out)
}

fn paths(body: &str) -> Vec<PathEntity> {
    PATH_ENTITY
        .captures_iter(body)
        .filter(|c| !c[2].contains("var_ref"))
        .map(|c| {
            let operation = OPERATION.captures(&c[2]).map_or_else(|| "equals".to_string(), |o| o[1].to_string());
            PathEntity { value: unescape(&c[3]), operation }
        })
        .collect()
}

/// The five XML entities (the document is cut from the host's own datastream).
fn unescape(s: &str) -> String {
    s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&apos;", "'").replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_name_their_kind_refs_and_paths() {
        let doc = br#"<?xml version="1.0"?>
<oval_definitions xmlns="http://oval.mitre.org/XMLSchema/oval-definitions-5" xmlns:ind="i" xmlns:linux="l">
<tests><ind:textfilecontent54_test id="t1" check="all" version="1"><ind:object object_ref="o1"/><ind:state state_ref="s1"/></ind:textfilecontent54_test></tests>
<objects><ind:textfilecontent54_object id="o1" version="1"><ind:filepath operation="pattern match">^/proc/sys/kernel/(osrelease|arch)$</ind:filepath><ind:pattern operation="pattern match">x</ind:pattern><ind:instance datatype="int">1</ind:instance></ind:textfilecontent54_object>
<ind:textfilecontent54_object id="o2" version="1"><ind:path var_ref="v1" var_check="all"/><ind:filename>a&amp;b</ind:filename><ind:pattern>x</ind:pattern><ind:instance datatype="int">1</ind:instance></ind:textfilecontent54_object>
<ind:textfilecontent54_object id="o3" version="1"><ind:path>/etc</ind:path><ind:filename>a</ind:filename><ind:pattern>x</ind:pattern><ind:instance datatype="int">1</ind:instance></ind:textfilecontent54_object></objects>
<states><ind:textfilecontent54_state id="s1" version="1"><ind:subexpression var_ref="v1"/></ind:textfilecontent54_state></states>
<variables><local_variable id="v1" datatype="string" version="1"><object_component object_ref="o3" item_field="text"/></local_variable></variables>
</oval_definitions>"#;
        let mut els = document_elements(doc).unwrap();
        els.sort_by(|a, b| a.id.cmp(&b.id));
        let by = |id: &str| els.iter().find(|e| e.id == id).unwrap();
        assert_eq!(by("t1").kind, "textfilecontent54_test");
        assert_eq!(by("t1").refs, ["o1", "s1"]);
        assert_eq!(by("o1").paths, [PathEntity { value: "^/proc/sys/kernel/(osrelease|arch)$".into(), operation: "pattern match".into() }]);
        assert!(by("o2").paths.is_empty(), "a path from a variable is not a value");
        assert_eq!(by("o2").refs, ["v1"]);
        assert_eq!(by("o3").paths[0].value, "/etc");
        assert_eq!(
            (by("v1").kind.as_str(), by("v1").section, by("v1").refs.clone()),
            ("local_variable", Section::Variables, vec!["o3".to_string()])
        );
        assert_eq!(by("s1").refs, ["v1"]);
    }
}

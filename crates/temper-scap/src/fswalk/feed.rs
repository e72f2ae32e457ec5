//! A walking object that variables take values from (an `object_component`), as
//! `audit_rules_privileged_commands`' setuid files: collected from the walk on the host and
//! written into the document as a constant before oscap runs, so oscap no longer walks for it.
//!
//! The document holds a marker where each changed element goes; [`WalkPart::fill`] puts in
//! the walked text, or the original where the walk's values cannot stand for oscap's (no items,
//! a flag other than complete, a name XML cannot carry as it is).
use std::collections::HashMap;

use super::WalkError;
use super::collect::{ItemNames, collect};
use super::gap::{Fallback, GapAt};
use super::judge::gap_of;
use super::listing::Listing;
use super::object::WalkObject;
use super::plan::{Added, RawElement, WalkPart};
use super::state::{FileState, filter};
use crate::oval::Flag;
use crate::oval::index::Section;

const DEF: &str = "http://oval.mitre.org/XMLSchema/oval-definitions-5";

/// An item field a variable takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemField {
    Filepath,
    Path,
    Filename,
}

impl ItemField {
    fn parse(s: &str) -> Option<Self> {
        match s {
            "filepath" => Some(Self::Filepath),
            "path" => Some(Self::Path),
            "filename" => Some(Self::Filename),
            _ => None,
        }
    }

    /// The item's value of this field, as oscap writes it; none where the item has no such
    /// field (a directory item has no filename or filepath).
    fn of(self, i: &ItemNames<'_>) -> Option<Vec<u8>> {
        match self {
            Self::Path => Some(i.path.to_vec()),
            Self::Filename => i.filename.map(<[u8]>::to_vec),
            Self::Filepath => i.filepath(),
        }
    }
}

/// One element swapped at fill time: the element it stands for (none: one the walk adds), its
/// marker, and its text with the walk and without. A constant's text with the walk is its id,
/// filled with its values.
#[derive(Debug, Clone)]
pub(crate) struct Swap {
    pub id: Option<String>,
    pub marker: String,
    pub walked: String,
    pub original: String,
}

/// A walking object the variables take values from.
#[derive(Debug, Clone)]
pub struct Feed {
    pub object: WalkObject,
    pub filters: Vec<(bool, FileState)>,
    /// Each constant written for it: its id, and the field its values are.
    pub constants: Vec<(String, ItemField)>,
    pub(crate) swaps: Vec<Swap>,
}

/// The marker of swap `n` of feed `f`.
fn marker(f: usize, n: usize) -> String {
    format!("<!--temper.walk:feed:{f}:{n}-->")
}

/// Plans feed number `f` for object `o`, which the variables `users` take values from; the
/// object's own filters are read by the caller. Its constants are written with the walk's
/// values at fill time.
pub(crate) fn plan(
    f: usize,
    o: &RawElement,
    object: WalkObject,
    filters: Vec<(bool, FileState)>,
    users: &[&RawElement],
) -> Result<(Feed, Added), String> {
    let mut constants: Vec<(String, ItemField)> = Vec::new();
    let mut swaps = Vec::new();
    let mut add = Vec::new();
    for v in users {
        if v.local != "local_variable" {
            return Err(format!("{} {} takes values from its items", v.local, v.id));
        }
        let mut text = v.text.clone();
        while let Some((start, end, prefix, field)) = component(&text, &o.id)? {
            let field = ItemField::parse(&field).ok_or_else(|| format!("variable {} takes its item field `{field}`", v.id))?;
            let id = match constants.iter().find(|c| c.1 == field) {
                Some(c) => c.0.clone(),
                None => {
                    let id = format!("oval:temper.walk:var:{}", 1000 * (f + 1) + constants.len() + 1);
                    constants.push((id.clone(), field));
                    id
                }
            };
            text.replace_range(start..end, &format!(r#"<{prefix}variable_component var_ref="{id}"/>"#));
        }
        swaps.push(Swap { id: Some(v.id.clone()), marker: marker(f, swaps.len()), walked: text, original: v.text.clone() });
    }
    let stand_in = o.text.replacen(r#"recurse_direction="down""#, r#"recurse_direction="none""#, 1);
    swaps.push(Swap { id: Some(o.id.clone()), marker: marker(f, swaps.len()), walked: stand_in, original: o.text.clone() });
    for (id, _) in &constants {
        let m = marker(f, swaps.len());
        swaps.push(Swap { id: None, marker: m.clone(), walked: id.clone(), original: String::new() });
        add.push((Section::Variables, m));
    }
    Ok((Feed { object, filters, constants, swaps }, add))
}

/// The next `object_component` naming `object` in `text`: its span, its tag's prefix (with the
/// colon) and its item field.
fn component(text: &str, object: &str) -> Result<Option<(usize, usize, String, String)>, String> {
    let mut from = 0;
    while let Some(at) = text[from..].find("object_component").map(|i| from + i) {
        from = at + 1;
        let Some(open) = text[..at].rfind('<') else { continue };
        let prefix = &text[open + 1..at];
        if prefix.contains(|c: char| c.is_whitespace() || c == '/') {
            continue;
        }
        let end = text[at..].find('>').map(|i| at + i + 1).ok_or("an unclosed object_component")?;
        let tag = &text[open..end];
        if !tag.ends_with("/>") {
            return Err("an object_component with content".into());
        }
        if attr(tag, "object_ref").as_deref() != Some(object) {
            continue;
        }
        let field = attr(tag, "item_field").ok_or("an object_component with no item_field")?;
        return Ok(Some((open, end, prefix.to_string(), field)));
    }
    Ok(None)
}

fn attr(tag: &str, name: &str) -> Option<String> {
    let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    Some(tag[at..at + tag[at..].find('"')?].to_string())
}

/// How a feed's markers are filled.
enum Fill {
    /// With the walk's values: each constant's element by id.
    Walked(HashMap<String, String>),
    /// With the original elements: oscap walks as before. With a gap when the walk could not
    /// complete the object (a fallback, named); without, when its values cannot stand for
    /// oscap's (no items, a flag other than complete, a name XML cannot carry).
    Original(Option<GapAt>),
}

impl Feed {
    /// The constants' elements, with the walk's values, or why oscap walks as before.
    fn constants(&self, walk: &Listing, var: &dyn Fn(&str) -> Option<Vec<String>>) -> Fill {
        let mut c = match collect(&self.object, walk, var) {
            Ok(c) => c,
            Err(e) => return Fill::Original(Some(gap_of(&e))),
        };
        let filters: Vec<(bool, &FileState)> = self.filters.iter().map(|(x, s)| (*x, s)).collect();
        if let Err(e) = filter(&mut c, walk, &filters, var) {
            return Fill::Original(Some(gap_of(&e)));
        }
        if c.flag != Flag::Complete || c.items.is_empty() {
            return Fill::Original(None);
        }
        let mut out = HashMap::new();
        for (id, field) in &self.constants {
            let mut values = String::new();
            for v in c.items.iter().filter_map(|i| field.of(&c.names(walk, i))) {
                let Some(v) = carried(&v) else { return Fill::Original(None) };
                values.push_str(&format!("<value>{}</value>", crate::oval::doc::escape(v)));
            }
            if values.is_empty() {
                return Fill::Original(None);
            }
            let text = format!(
                r#"<constant_variable xmlns="{DEF}" id="{id}" version="1" datatype="string" comment="the items of {}, from the walk">{values}</constant_variable>"#,
                self.object.id
            );
            out.insert(id.clone(), text);
        }
        Fill::Walked(out)
    }
}

/// A value as XML carries it unchanged: UTF-8, no character XML 1.0 forbids, no carriage return
/// (read back as a line feed) and no blank at either end (which a reader may trim).
fn carried(v: &[u8]) -> Option<&str> {
    let s = std::str::from_utf8(v).ok()?;
    let allowed = |c: char| matches!(c, '\t' | '\n') || (c >= ' ' && c != '\u{FFFE}' && c != '\u{FFFF}');
    (s.chars().all(allowed) && s.trim() == s && !s.is_empty()).then_some(s)
}

/// A document filled from the walk ([`WalkPart::fill`]).
#[derive(Debug, Clone, Default)]
pub struct Filled {
    pub document: Vec<u8>,
    /// How many feeds were filled from the walk.
    pub walked: usize,
    /// The feeds' objects the walk could not complete: oscap walks for them.
    pub fallen: Vec<Fallback>,
}

impl WalkPart {
    /// The document `doc` with each feed's markers filled: with the walk's values, where they
    /// stand for oscap's, or with the original elements. `vars` gives the values of the feeds'
    /// own variables (from [`WalkPart::pre`]'s run); `walk` is the walk, or why there is none
    /// (then every feed's object falls to oscap).
    pub fn fill(&self, doc: &[u8], vars: &HashMap<String, Vec<String>>, walk: Result<&Listing, &GapAt>) -> Result<Filled, WalkError> {
        let mut text = String::from_utf8(doc.to_vec())
            .map_err(|_| WalkError::Unsupported { object: "the document".into(), why: "bytes that are not UTF-8".into() })?;
        let var = |id: &str| vars.get(id).cloned();
        let mut filled = Filled::default();
        for feed in &self.feeds {
            let fill = match walk {
                Ok(listing) => feed.constants(listing, &var),
                Err(at) => Fill::Original(Some(at.clone())),
            };
            let constants = match fill {
                Fill::Walked(c) => Some(c),
                Fill::Original(gap) => {
                    filled.fallen.extend(gap.map(|at| Fallback::new(&feed.object.id, &at)));
                    None
                }
            };
            filled.walked += usize::from(constants.is_some());
            for s in &feed.swaps {
                let with = match &constants {
                    Some(c) => c.get(&s.walked).unwrap_or(&s.walked),
                    None => &s.original,
                };
                text = text.replacen(&s.marker, with, 1);
            }
        }
        filled.document = text.into_bytes();
        Ok(filled)
    }
}

impl super::plan::PrePass {
    /// The feeds' own variables' values, by variable id, from the first run's results `xml`.
    pub fn values(&self, xml: &[u8]) -> Result<HashMap<String, Vec<String>>, WalkError> {
        let mut by_object = super::judge::variable_values(xml)?;
        Ok(self.probes.iter().filter_map(|(var, obj)| by_object.remove(obj).map(|v| (var.clone(), v))).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn element(section: Section, id: &str, local: &str, text: &str) -> RawElement {
        RawElement { section, id: id.into(), local: local.into(), refs: Vec::new(), text: text.into() }
    }

    const OBJ: &str = r#"<unix:file_object id="oval:t:obj:1" version="1"><unix:behaviors recurse="directories" recurse_direction="down" max_depth="-1"/><unix:path>/</unix:path><unix:filename operation="pattern match">^\w+</unix:filename></unix:file_object>"#;

    #[test]
    fn each_component_naming_the_object_becomes_one_constant_per_field() {
        let o = element(Section::Objects, "oval:t:obj:1", "file_object", OBJ);
        let v = element(
            Section::Variables,
            "oval:t:var:1",
            "local_variable",
            r#"<oval-def:local_variable id="oval:t:var:1" datatype="int"><oval-def:count><oval-def:object_component item_field="filepath" object_ref="oval:t:obj:1"/></oval-def:count><oval-def:object_component object_ref="oval:t:obj:9" item_field="path"/><oval-def:object_component object_ref="oval:t:obj:1" item_field="filepath"/></oval-def:local_variable>"#,
        );
        let object = WalkObject::read(OBJ.as_bytes()).unwrap();
        let (feed, add) = plan(0, &o, object, Vec::new(), &[&v]).unwrap();
        assert_eq!(feed.constants, vec![("oval:temper.walk:var:1001".to_string(), ItemField::Filepath)]);
        let walked = &feed.swaps[0].walked;
        assert_eq!(walked.matches(r#"<oval-def:variable_component var_ref="oval:temper.walk:var:1001"/>"#).count(), 2, "{walked}");
        assert!(walked.contains(r#"object_ref="oval:t:obj:9""#), "another object's component stays: {walked}");
        assert!(feed.swaps[1].walked.contains(r#"recurse_direction="none""#), "the object's stand-in does not walk");
        assert_eq!(add, vec![(Section::Variables, marker(0, 2))]);
    }

    #[test]
    fn a_field_the_walk_has_not_or_another_kind_of_variable_stays_with_oscap() {
        let o = element(Section::Objects, "oval:t:obj:1", "file_object", OBJ);
        let object = WalkObject::read(OBJ.as_bytes()).unwrap();
        let v = element(
            Section::Variables,
            "oval:t:var:1",
            "local_variable",
            r#"<local_variable id="oval:t:var:1"><object_component item_field="size" object_ref="oval:t:obj:1"/></local_variable>"#,
        );
        let err = plan(0, &o, object.clone(), Vec::new(), &[&v]).unwrap_err();
        assert!(err.contains("size"), "{err}");
        let v = element(Section::Variables, "oval:t:var:1", "constant_variable", "<constant_variable/>");
        assert!(plan(0, &o, object, Vec::new(), &[&v]).is_err());
    }

    #[test]
    fn only_names_xml_carries_unchanged_are_written() {
        assert_eq!(carried(b"/usr/bin/su"), Some("/usr/bin/su"));
        assert_eq!(carried(b"/srv/a b"), Some("/srv/a b"));
        for bad in [&b"/srv/x\xff"[..], b"/srv/cr\rx", b"/srv/trail ", b" /lead", b"/srv/bell\x07", b""] {
            assert_eq!(carried(bad), None, "{bad:?}");
        }
    }

    fn listing(root: &std::path::Path) -> Listing {
        use std::io::Write;
        let mut child = std::process::Command::new("sh")
            .args(["-s", "--", "--"])
            .arg(root)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(super::super::COLLECT.as_bytes()).unwrap();
        Listing::parse(child.wait_with_output().unwrap().stdout).unwrap()
    }

    #[test]
    fn the_document_gets_the_walks_values_or_its_original_elements() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("a1"), b"x").unwrap();
        std::fs::write(t.path().join("b & c"), b"x").unwrap();
        let root = t.path().to_str().unwrap();
        let fill = |pattern: &str| {
            let text = OBJ.replace("<unix:path>/</unix:path>", &format!("<unix:path>{root}</unix:path>")).replace(r"^\w+", pattern);
            let o = element(Section::Objects, "oval:t:obj:1", "file_object", &text);
            let v = element(
                Section::Variables,
                "oval:t:var:1",
                "local_variable",
                r#"<local_variable id="oval:t:var:1"><object_component item_field="filepath" object_ref="oval:t:obj:1"/></local_variable>"#,
            );
            let (feed, _) = plan(0, &o, WalkObject::read(text.as_bytes()).unwrap(), Vec::new(), &[&v]).unwrap();
            let doc: String = feed.swaps.iter().map(|s| s.marker.clone()).collect();
            let part = WalkPart { feeds: vec![feed], ..WalkPart::default() };
            let filled = part.fill(doc.as_bytes(), &HashMap::new(), Ok(&listing(t.path()))).unwrap();
            (String::from_utf8(filled.document).unwrap(), filled.walked)
        };
        let (doc, fed) = fill("^[ab]");
        assert_eq!(fed, 1);
        assert!(doc.contains(&format!("<value>{root}/a1</value><value>{root}/b &amp; c</value>")), "{doc}");
        assert!(doc.contains(r#"<variable_component var_ref="oval:temper.walk:var:1001"/>"#), "{doc}");
        assert!(!doc.contains("temper.walk:feed"), "every marker filled: {doc}");
        let (doc, fed) = fill("^none$");
        assert_eq!(fed, 0, "no items: oscap walks as before");
        assert!(
            doc.contains(r#"<object_component item_field="filepath" object_ref="oval:t:obj:1"/>"#)
                && doc.contains(r#"recurse_direction="down""#),
            "{doc}"
        );
        assert!(!doc.contains("constant_variable"), "{doc}");
    }
}

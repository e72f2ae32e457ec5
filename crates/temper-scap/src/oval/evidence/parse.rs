//! One streaming pass over an OVAL results document (`--results`, with its embedded
//! definitions and system characteristics) into flat maps by id.
use std::collections::HashMap;

use quick_xml::events::{BytesStart, Event};

use crate::xml::{Xml, local};

use super::super::error::{OvalError, Result};
use super::super::results::DefinitionResult;
use super::Field;
use super::parts::{Node, TestResult, children, criteria, definition_title, result_of, test_result, text};

/// A test, object or state as the definitions give it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Element {
    pub kind: String,
    pub comment: String,
    pub check: String,
    pub check_existence: String,
    /// A state's `operator` (how its fields combine), when given.
    pub operator: Option<String>,
    pub object_ref: Option<String>,
    pub state_refs: Vec<String>,
    pub fields: Vec<Field>,
    /// A set object's `object_reference`s (nested sets included).
    pub set_refs: Vec<String>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Item {
    pub kind: String,
    pub status: String,
    pub fields: Vec<(String, String)>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Parsed {
    pub elements: HashMap<String, Element>,
    pub titles: HashMap<String, String>,
    pub definitions: HashMap<String, (DefinitionResult, Vec<Node>)>,
    pub tests: HashMap<String, TestResult>,
    /// Collected object id -> (flag, item ids).
    pub collected: HashMap<String, (String, Vec<String>)>,
    pub items: HashMap<String, Item>,
}

pub(crate) fn parse(input: &[u8]) -> Result<Parsed> {
    let mut x = Xml::new(input)?;
    let mut p = Parsed::default();
    let mut first = true;
    // Where we are: the local names of the open containers that matter.
    let mut path: Vec<String> = Vec::new();
    loop {
        let (e, empty) = match x.next()? {
            Event::Start(e) => (e, false),
            Event::Empty(e) => (e, true),
            Event::End(_) => {
                path.pop();
                continue;
            }
            Event::Eof => break,
            _ => continue,
        };
        let name = local(&e).to_string();
        if first {
            first = false;
            if name != "oval_results" {
                return Err(OvalError::NotOvalResults(name));
            }
            path.push(name);
            continue;
        }
        let parent = path.last().map(String::as_str).unwrap_or("");
        let in_results = path.iter().any(|n| n == "results");
        match (parent, name.as_str()) {
            ("tests" | "objects" | "states", _) if !in_results => element(&mut x, &e, empty, &mut p)?,
            ("definitions", "definition") if !in_results => {
                let id = x.attr(&e, "id")?.unwrap_or_default();
                if !empty {
                    let title = definition_title(&mut x)?;
                    p.titles.insert(id, title);
                }
            }
            ("definitions", "definition") => {
                // As strict as `OvalResults::parse`: the outcomes come from here too.
                let [id, result] = x.attrs(&e, ["definition_id", "result"])?;
                let (Some(id), Some(value)) = (id, result) else {
                    skip_unnamed(empty, &mut x, &e)?;
                    continue;
                };
                let result: DefinitionResult = value.parse().map_err(|_| OvalError::BadResult { id: id.clone(), value })?;
                let nodes = if empty { Vec::new() } else { criteria(&mut x, 0)? };
                p.definitions.insert(id, (result, nodes));
            }
            ("tests", "test") => {
                let id = x.attr(&e, "test_id")?.unwrap_or_default();
                let mut t = TestResult { result: result_of(&x, &e)?, ..TestResult::default() };
                if !empty {
                    test_result(&mut x, &mut t)?;
                }
                p.tests.insert(id, t);
            }
            ("collected_objects", "object") => {
                let [id, flag] = x.attrs(&e, ["id", "flag"])?;
                let mut refs = Vec::new();
                if !empty {
                    children(&mut x, |x, c, _| {
                        refs.extend(x.attr(c, "item_ref")?);
                        Ok(false)
                    })?;
                }
                p.collected.insert(id.unwrap_or_default(), (flag.unwrap_or_default(), refs));
            }
            ("system_data", _) => {
                let [id, status] = x.attrs(&e, ["id", "status"])?;
                let mut item = Item { kind: name.clone(), status: status.unwrap_or_default(), fields: Vec::new() };
                if !empty {
                    children(&mut x, |x, c, c_empty| {
                        let n = x.attr(c, "name")?.filter(|_| local(c) == "field").unwrap_or_else(|| local(c).to_string());
                        let v = if c_empty { String::new() } else { text(x)? };
                        let v = withhold(&n, v);
                        item.fields.push((n, v));
                        Ok(!c_empty)
                    })?;
                }
                p.items.insert(id.unwrap_or_default(), item);
            }
            _ if !empty => path.push(name),
            _ => {}
        }
    }
    Ok(p)
}

/// An item's field without its secrets: a shadow item's `password` keeps only its lock marks
/// (`!`, `*`); any value loses the secrets it holds by kind (`crate::secret`): a `passwd` line
/// read by a `textfilecontent54` object, a GRUB hash, a key. Evidence goes to the journal, the
/// reports and the LLM.
fn withhold(field: &str, value: String) -> String {
    let value = if field == "password" { crate::secret::password_field(&value) } else { value };
    match crate::secret::withhold(&value) {
        std::borrow::Cow::Borrowed(_) => value,
        std::borrow::Cow::Owned(v) => v,
    }
}

/// A definition result without its id or result says nothing: skipped, as `OvalResults` does.
fn skip_unnamed(empty: bool, x: &mut Xml<'_>, e: &BytesStart<'_>) -> Result<()> {
    if !empty {
        x.skip(e)?;
    }
    Ok(())
}

fn element(x: &mut Xml<'_>, e: &BytesStart<'_>, empty: bool, p: &mut Parsed) -> Result<()> {
    let [id, comment, check, existence, operator] = x.attrs(e, ["id", "comment", "check", "check_existence", "operator"])?;
    let mut el = Element {
        kind: local(e).to_string(),
        comment: comment.unwrap_or_default(),
        check: check.unwrap_or_default(),
        // The schema's default, for tests.
        check_existence: existence
            .unwrap_or_else(|| if local(e).ends_with("_test") { "at_least_one_exists".into() } else { String::new() }),
        operator,
        ..Element::default()
    };
    if !empty {
        read_fields(x, &mut el)?;
    }
    p.elements.insert(id.unwrap_or_default(), el);
    Ok(())
}

fn read_fields(x: &mut Xml<'_>, el: &mut Element) -> Result<()> {
    loop {
        let Some((c, empty)) = x.child("OVAL element")? else {
            return Ok(());
        };
        let [object_ref, state_ref, operation, datatype, var_ref] =
            x.attrs(&c, ["object_ref", "state_ref", "operation", "datatype", "var_ref"])?;
        match local(&c) {
            "object" if object_ref.is_some() => el.object_ref = object_ref,
            "state" if state_ref.is_some() => el.state_refs.extend(state_ref),
            "notes" | "signature" => {}
            name => {
                let value = match (empty, name) {
                    (true, _) => String::new(),
                    (false, "set") => {
                        let operator = x.attr(&c, "set_operator")?.unwrap_or_else(|| "UNION".into());
                        read_set(x, &mut el.set_refs)?;
                        format!("{operator} of {}", el.set_refs.join(", "))
                    }
                    (false, "behaviors") => {
                        x.skip(&c)?;
                        String::new()
                    }
                    (false, _) => text(x)?,
                };
                let name = if name == "filter" {
                    format!("filter ({})", x.attr(&c, "action")?.unwrap_or_else(|| "exclude".into()))
                } else {
                    name.to_string()
                };
                el.fields.push(Field { name, value, operation, datatype, var_ref });
                continue;
            }
        }
        if !empty {
            x.skip(&c)?;
        }
    }
}

/// The `object_reference`s of a `set`, through nested sets; filters are skipped.
fn read_set(x: &mut Xml<'_>, refs: &mut Vec<String>) -> Result<()> {
    loop {
        let Some((c, empty)) = x.child("set")? else {
            return Ok(());
        };
        match (local(&c), empty) {
            ("object_reference", false) => refs.push(text(x)?.trim().to_string()),
            ("set", false) => read_set(x, refs)?,
            (_, false) => x.skip(&c)?,
            (_, true) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secret::HASH as WITHHELD;

    #[test]
    fn a_password_hash_never_leaves_the_results_only_its_lock_marks() {
        let doc = |pw: &str| {
            format!(
                r#"<oval_results><results><system><oval_system_characteristics><system_data>
                <shadow_item xmlns="x" id="1" status="exists"><username>root</username><password>{pw}</password></shadow_item>
                </system_data></oval_system_characteristics></system></results></oval_results>"#
            )
        };
        for (pw, shown) in [
            ("$y$j9T$salt$hash", WITHHELD.to_string()),
            ("!$6$salt$hash", format!("!{WITHHELD}")),
            ("!!", "!!".into()),
            ("*", "*".into()),
            ("", "".into()),
        ] {
            let p = parse(doc(pw).as_bytes()).unwrap();
            let fields = &p.items["1"].fields;
            assert_eq!(fields[0], ("username".to_string(), "root".to_string()));
            assert_eq!(fields[1], ("password".to_string(), shown), "{pw}");
        }
    }
}

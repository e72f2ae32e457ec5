//! `textfilecontent54_test` on one file whose pattern is a `key value` or `key = value`
//! setting: the line set to the value the state asks for (a test without a state only asks that
//! the line be there; it takes the value from its sibling, see `action::merge`).
use temper_scap::oval::TestEvidence;

use crate::Refusal;
use crate::action::{Action, LineFix};
use crate::value::{check_path, field, literal, objects, plain_name};

/// The separators SSG's patterns use after the key: whitespace, or `=` with optional whitespace.
const SPACE: [&str; 3] = ["[ \\t]+", "[\\s]+", "\\s+"];
const EQUALS: [&str; 3] = ["[ \\t]*=[ \\t]*", "[\\s]*=[\\s]*", "\\s*=\\s*"];
const LEAD: [&str; 4] = ["[ \\t]*", "[\\s]*", "\\s*", ""];

/// A setting's shape, read from the check's pattern.
#[derive(Debug, PartialEq, Eq)]
struct Shape {
    key: String,
    equals: bool,
    any_case: bool,
}

pub fn actions(t: &TestEvidence) -> Result<Vec<Action>, Refusal> {
    let unsupported = |why: &str| Refusal::Unsupported { test: t.id.clone(), why: why.to_string() };
    // One file: the object, or the one member of a set holding it (SSG's "all confs collection").
    let leaves: Vec<_> = objects(t).into_iter().filter(|o| field(o, "pattern").is_some()).collect();
    let [o] = leaves.as_slice() else { return Err(unsupported("its object is not one file with one pattern")) };
    let path = field(o, "filepath")
        .filter(|f| f.operation.as_deref().is_none_or(|op| op == "equals"))
        .map(|f| literal(t, f))
        .transpose()?
        .ok_or_else(|| unsupported("its object names no single file"))?;
    check_path(&path)?;
    let pattern = field(o, "pattern").map(|f| f.value.as_str()).unwrap_or_default();
    let shape = shape(pattern).ok_or_else(|| unsupported(&format!("the pattern `{pattern}` is not a `key value` setting")))?;
    let value = match t.states.first() {
        None => String::new(),
        Some(s) => {
            let f = field(s, "subexpression").ok_or_else(|| unsupported(&format!("state {} checks no value", s.id)))?;
            let v = literal(t, f)?;
            if !plain_name(&v, " ._,:/@+-") || v.starts_with(' ') || v.ends_with(' ') {
                return Err(unsupported(&format!("the value {v:?} has characters the fix does not write")));
            }
            v
        }
    };
    Ok(vec![Action::Line(LineFix { path, key: shape.key, equals: shape.equals, value, any_case: shape.any_case })])
}

/// `^[ \t]*(?i)PermitRootLogin(?-i)[ \t]+(.+?)[ \t]*(?:$|#)` is `PermitRootLogin value`, any case.
fn shape(pattern: &str) -> Option<Shape> {
    let rest = pattern.strip_prefix('^')?;
    let rest = LEAD.iter().find_map(|l| rest.strip_prefix(l))?;
    let (any_case, rest) = match rest.strip_prefix("(?i)") {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '\\' || c == '.'))?;
    let key = rest[..end].replace("\\.", ".");
    let rest = &rest[end..];
    let rest = if any_case { rest.strip_prefix("(?-i)")? } else { rest };
    let (equals, rest) = match (SPACE.iter().find_map(|s| rest.strip_prefix(s)), EQUALS.iter().find_map(|s| rest.strip_prefix(s))) {
        (_, Some(r)) => (true, r),
        (Some(r), None) => (false, r),
        (None, None) => return None,
    };
    // Then the value's group, and nothing that constrains it.
    let ok = ["(.+?)", "(.*\\S)", "(\\S+)", "(.+)", "(.*)"].iter().any(|g| rest.starts_with(g));
    (ok && plain_name(&key, "_.-") && key.chars().next().is_some_and(|c| c.is_ascii_alphabetic())).then_some(Shape {
        key,
        equals,
        any_case,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssg_s_setting_patterns_have_a_shape() {
        let s = shape(r"^[ \t]*(?i)PermitRootLogin(?-i)[ \t]+(.+?)[ \t]*(?:$|#)").unwrap();
        assert_eq!(s, Shape { key: "PermitRootLogin".into(), equals: false, any_case: true });
        let s = shape(r"^[ \t]*(?i)overflow_action(?-i)[ \t]*=[ \t]*(.+?)[ \t]*(?:$|#)").unwrap();
        assert_eq!(s, Shape { key: "overflow_action".into(), equals: true, any_case: true });
        assert_eq!(shape(r"^\s*PASS_MAX_DAYS\s+(\d+)").map(|s| s.key), None, "a constrained value is not a plain setting");
        assert_eq!(shape(r"^[\s]*kernel.modules_disabled[\s]*=[\s]*(.*\S)[\s]*$").map(|s| s.equals), Some(true));
        assert_eq!(shape(r"^(.*)$"), None);
        let s = shape(r"^[\s]*inet_interfaces[\s]*=[\s]*(.*)[\s]*$").unwrap();
        assert_eq!(s, Shape { key: "inet_interfaces".into(), equals: true, any_case: false });
    }
}

//! Small readers of OVAL documents: a definition's criteria tree, a test's tested items and
//! variables, a definition's title.
use quick_xml::events::BytesStart;

use crate::text::TextBuilder;
use crate::xml::{Xml, local};

use super::super::error::OvalResult;
use super::super::results::DefinitionResult;
use super::{MAX_VALUE, Operator};

/// Deepest `criteria` nesting read.
pub(crate) const MAX_DEPTH: usize = 64;

/// A `criteria` tree node of a definition's result.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    Criteria { operator: Operator, negate: bool, result: DefinitionResult, children: Vec<Node> },
    Test { id: String, negate: bool, result: DefinitionResult },
    Extend { id: String, negate: bool, result: DefinitionResult },
}

#[derive(Debug, Clone, Default)]
pub(crate) struct OvalTestResult {
    pub result: Option<DefinitionResult>,
    pub items: Vec<(String, Option<DefinitionResult>)>,
    pub variables: Vec<(String, String)>,
}

pub(crate) fn result_of(x: &Xml<'_>, e: &BytesStart<'_>) -> OvalResult<Option<DefinitionResult>> {
    Ok(x.attr(e, "result")?.and_then(|r| r.parse().ok()))
}

/// Text of the element just opened, exactly as written, cut at [`MAX_VALUE`].
pub(crate) fn text(x: &mut Xml<'_>) -> OvalResult<String> {
    text_to(x, MAX_VALUE)
}

/// `v` cut at [`MAX_VALUE`] bytes, on a character's boundary, marked `…` as [`text`] marks it.
pub(crate) fn shown(mut v: String) -> String {
    if v.len() > MAX_VALUE {
        let mut at = MAX_VALUE;
        while !v.is_char_boundary(at) {
            at -= 1;
        }
        v.truncate(at);
        v.push('…');
    }
    v
}

/// Largest value read whole for the host's checks (an item's path against its object's, a
/// variable's value): a path is at most 4,096 bytes; beyond this the value is cut, marked `…`,
/// and no longer matches what it is checked against.
pub(crate) const MAX_RAW: usize = 64 * 1024;

/// Text of the element just opened, cut at `max` bytes (marked `…`).
pub(crate) fn text_to(x: &mut Xml<'_>, max: usize) -> OvalResult<String> {
    let mut b = TextBuilder::raw(max);
    x.content("value", &mut b)?;
    let cut = b.truncated();
    let mut s = b.finish().plain();
    if cut {
        s.push('…');
    }
    Ok(s)
}

/// Calls `f` for each child element of the element just opened; `f` says whether it read
/// the child's content (the rest are skipped).
pub(crate) fn children(x: &mut Xml<'_>, mut f: impl FnMut(&mut Xml<'_>, &BytesStart<'_>, bool) -> OvalResult<bool>) -> OvalResult<()> {
    loop {
        let Some((e, empty)) = x.child("element")? else {
            return Ok(());
        };
        if !f(x, &e, empty)? && !empty {
            x.skip(&e)?;
        }
    }
}

/// The `criteria` tree of a result definition, up to its end tag.
/// Nesting beyond [`MAX_DEPTH`] is skipped (hostile input must not exhaust the stack).
pub(crate) fn criteria(x: &mut Xml<'_>, depth: usize) -> OvalResult<Vec<Node>> {
    let mut out = Vec::new();
    children(x, |x, c, empty| {
        let result = result_of(x, c)?.unwrap_or(DefinitionResult::Unknown);
        let [operator, negate] = x.attrs(c, ["operator", "negate"])?;
        let negate = negate.as_deref() == Some("true");
        let node = match local(c) {
            "criteria" if depth >= MAX_DEPTH => return Ok(false),
            "criteria" => {
                let operator = operator.as_deref().map_or(Operator::And, Operator::parse);
                let children = if empty { Vec::new() } else { criteria(x, depth + 1)? };
                Node::Criteria { operator, negate, result, children }
            }
            "criterion" => Node::Test { id: x.attr(c, "test_ref")?.unwrap_or_default(), negate, result },
            "extend_definition" => Node::Extend { id: x.attr(c, "definition_ref")?.unwrap_or_default(), negate, result },
            _ => return Ok(false),
        };
        let read = matches!(node, Node::Criteria { .. });
        out.push(node);
        Ok(read)
    })?;
    Ok(out)
}

pub(crate) fn test_result(x: &mut Xml<'_>, t: &mut OvalTestResult) -> OvalResult<()> {
    children(x, |x, c, empty| match local(c) {
        "tested_item" => {
            let [id, result] = x.attrs(c, ["item_id", "result"])?;
            t.items.push((id.unwrap_or_default(), result.and_then(|r| r.parse().ok())));
            Ok(false)
        }
        "tested_variable" if !empty => {
            let id = x.attr(c, "variable_id")?.unwrap_or_default();
            t.variables.push((id, text_to(x, MAX_RAW)?));
            Ok(true)
        }
        _ => Ok(false),
    })
}

/// The `title` of a definition's `metadata`, whose start tag was just read, up to its end tag.
pub(crate) fn metadata_title(x: &mut Xml<'_>) -> OvalResult<String> {
    let mut title = String::new();
    children(x, |x, m, m_empty| {
        if local(m) == "title" && !m_empty {
            title = x.plain("title", MAX_VALUE)?;
            return Ok(true);
        }
        Ok(false)
    })?;
    Ok(title)
}

//! Reading the calls out of a reply: native `tool_calls`, else a text fallback from `content`.
//!
//! Text fallback, in this order (the first form found wins):
//! 1. `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` blocks (closing tag optional at
//!    the very end);
//! 2. fenced code blocks holding `{"name": ..., "arguments": {...}}`, or a bare object with the
//!    tool's fields; a ```json block that is not valid JSON but names the tool counts as a call
//!    with invalid arguments;
//! 3. the whole content being such a JSON object.
//!
//! `"parameters"` is accepted for `"arguments"`, and arguments may be an object or a JSON string.
//! When the request carried a prefill and the content alone holds no call, the prefill is put in
//! front of the content and parsed again (llama.cpp continues the prefill without repeating it).
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use crate::tools::ToolSpec;
use crate::wire::ResponseMessage;

/// How a reply carried its call: the journal's turn mode.
use temper_journal::TurnMode;

/// One call as it came, arguments still a JSON string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawCall {
    pub name: String,
    pub arguments: String,
}

#[derive(Debug, Clone)]
pub struct Extracted {
    pub mode: TurnMode,
    pub calls: Vec<RawCall>,
}

pub fn extract(msg: &ResponseMessage, tool: &ToolSpec, prefill: Option<&str>) -> Extracted {
    let native: Vec<RawCall> = msg
        .tool_calls
        .iter()
        .flatten()
        .map(|c| RawCall { name: c.function.name.clone(), arguments: c.function.arguments.clone() })
        .collect();
    if !native.is_empty() {
        return Extracted { mode: TurnMode::Native, calls: native };
    }
    let content = msg.content.as_deref().unwrap_or("");
    let mut calls = text_calls(content, tool);
    if calls.is_empty()
        && let Some(p) = prefill
    {
        calls = text_calls(&format!("{p}{content}"), tool);
    }
    let mode = if calls.is_empty() { TurnMode::None } else { TurnMode::Text };
    Extracted { mode, calls }
}

static TAGGED: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?s)<tool_call>\s*(.*?)\s*(?:</tool_call>|\z)").expect("valid regex"));
static FENCED: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?s)```([A-Za-z0-9_-]*)[ \t]*\r?\n(.*?)```").expect("valid regex"));
static NAME: LazyLock<Regex> = LazyLock::new(|| Regex::new(r#""name"\s*:\s*"([^"]*)""#).expect("valid regex"));

pub fn text_calls(content: &str, tool: &ToolSpec) -> Vec<RawCall> {
    let tagged: Vec<RawCall> = TAGGED
        .captures_iter(content)
        .filter_map(|c| {
            let body = c.get(1)?.as_str();
            if body.is_empty() {
                return None;
            }
            Some(from_json_text(body, tool).unwrap_or_else(|| RawCall {
                name: NAME.captures(body).map(|n| n[1].to_owned()).unwrap_or_default(),
                arguments: body.to_owned(),
            }))
        })
        .collect();
    if !tagged.is_empty() {
        return tagged;
    }
    let fenced: Vec<RawCall> = FENCED
        .captures_iter(content)
        .filter_map(|c| {
            let lang = c.get(1).map_or("", |m| m.as_str());
            let body = c.get(2)?.as_str().trim();
            from_json_text(body, tool).or_else(|| {
                // Invalid JSON that still names the tool: a call with bad arguments.
                (lang.eq_ignore_ascii_case("json") && body.contains(tool.name))
                    .then(|| RawCall { name: tool.name.to_owned(), arguments: body.to_owned() })
            })
        })
        .collect();
    if !fenced.is_empty() {
        return fenced;
    }
    from_json_text(content.trim(), tool).into_iter().collect()
}

/// A call from a JSON text: `{"name", "arguments"|"parameters"}` or a bare object of `tool`'s fields.
fn from_json_text(text: &str, tool: &ToolSpec) -> Option<RawCall> {
    let value: Value = serde_json::from_str(text).ok()?;
    let obj = value.as_object()?;
    if let Some(name) = obj.get("name").and_then(Value::as_str) {
        let args = obj.get("arguments").or_else(|| obj.get("parameters"));
        if let Some(args) = args {
            let arguments = match args {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            return Some(RawCall { name: name.to_owned(), arguments });
        }
    }
    if tool.fields.iter().any(|f| obj.contains_key(*f)) {
        return Some(RawCall { name: tool.name.to_owned(), arguments: value.to_string() });
    }
    None
}

#[cfg(test)]
mod tests;

//! What the mock answers, one entry per request, in order.
//!
//! Script file format (for `temper-mockllm --script FILE.json`): a JSON array of entries, each an
//! object tagged by `"kind"`:
//!
//! ```json
//! [
//!   {"kind": "reply", "tool_calls": [{"name": "apply_fix",
//!       "arguments": {"fix_script": "touch /x", "revert_script": "rm -f /x", "description": "d"}}]},
//!   {"kind": "reply", "content": "no tool here", "finish_reason": "stop"},
//!   {"kind": "reply", "tool_calls": [{"name": "apply_fix", "arguments": "{not json"}]},
//!   {"kind": "status", "status": 429, "retry_after": "1"},
//!   {"kind": "hang", "secs": 30, "then": {"kind": "reply", "content": "late"}}
//! ]
//! ```
//!
//! `reply` fields: `content` (string or null), `tool_calls` (list; `arguments` is either a JSON
//! object, serialized into the string the wire carries, or a raw string sent as is, so invalid JSON
//! can be played), `finish_reason` (default `"tool_calls"` when there are calls, else `"stop"`),
//! `prompt_tokens`/`completion_tokens` (default: chars/4 of the request and the reply).
//! `status`: an HTTP error with an OpenAI-style error body, optional `Retry-After` and `message`.
//! `hang`: waits `secs` before answering with `then` (a 504 when absent).
//! When the script runs out the mock answers 410 Gone, which clients do not retry.
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Scripted {
    Reply {
        #[serde(default)]
        content: Option<String>,
        #[serde(default)]
        tool_calls: Vec<ScriptedCall>,
        #[serde(default)]
        finish_reason: Option<String>,
        #[serde(default)]
        prompt_tokens: Option<u32>,
        #[serde(default)]
        completion_tokens: Option<u32>,
    },
    Status {
        status: u16,
        #[serde(default)]
        retry_after: Option<String>,
        #[serde(default)]
        message: Option<String>,
    },
    Hang {
        secs: f64,
        #[serde(default)]
        then: Option<Box<Scripted>>,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedCall {
    pub name: String,
    pub arguments: Arguments,
}

/// Tool-call arguments: the wire always carries a string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Arguments {
    /// Sent verbatim (may be invalid JSON on purpose).
    Raw(String),
    /// Serialized to a JSON string.
    Json(Value),
}

impl Arguments {
    pub fn to_wire(&self) -> String {
        match self {
            Self::Raw(s) => s.clone(),
            Self::Json(v) => v.to_string(),
        }
    }
}

impl ScriptedCall {
    pub fn new(name: &str, arguments: Value) -> Self {
        Self { name: name.into(), arguments: Arguments::Json(arguments) }
    }

    pub fn raw(name: &str, arguments: &str) -> Self {
        Self { name: name.into(), arguments: Arguments::Raw(arguments.into()) }
    }
}

impl Scripted {
    /// One native tool call.
    pub fn tool_call(name: &str, arguments: Value) -> Self {
        Self::tool_calls(vec![ScriptedCall::new(name, arguments)])
    }

    /// Several native tool calls in one reply.
    pub fn tool_calls(calls: Vec<ScriptedCall>) -> Self {
        Self::Reply { content: None, tool_calls: calls, finish_reason: None, prompt_tokens: None, completion_tokens: None }
    }

    /// A plain text reply, no tool calls.
    pub fn text(content: &str) -> Self {
        Self::Reply {
            content: Some(content.into()),
            tool_calls: Vec::new(),
            finish_reason: None,
            prompt_tokens: None,
            completion_tokens: None,
        }
    }

    /// Sets the finish reason of a `Reply` (e.g. "length"); other kinds are returned unchanged.
    pub fn finish(mut self, reason: &str) -> Self {
        if let Self::Reply { finish_reason, .. } = &mut self {
            *finish_reason = Some(reason.into());
        }
        self
    }

    /// Sets the usage a `Reply` reports.
    pub fn usage(mut self, prompt: u32, completion: u32) -> Self {
        if let Self::Reply { prompt_tokens, completion_tokens, .. } = &mut self {
            *prompt_tokens = Some(prompt);
            *completion_tokens = Some(completion);
        }
        self
    }

    /// An HTTP error status.
    pub fn status(status: u16) -> Self {
        Self::Status { status, retry_after: None, message: None }
    }

    /// A 429 with a `Retry-After` in seconds.
    pub fn rate_limited(retry_after_secs: u64) -> Self {
        Self::Status { status: 429, retry_after: Some(retry_after_secs.to_string()), message: None }
    }

    /// Waits before answering with `then` (a 504 when `None`).
    pub fn hang(secs: f64, then: Option<Scripted>) -> Self {
        Self::Hang { secs, then: then.map(Box::new) }
    }

    /// Whether this entry answers a request offering `tools` (none offered: any entry does).
    pub fn fits(&self, tools: &[String]) -> bool {
        match self {
            Self::Reply { tool_calls, .. } => tools.is_empty() || tool_calls.iter().all(|c| tools.contains(&c.name)),
            Self::Hang { then: Some(then), .. } => then.fits(tools),
            Self::Hang { then: None, .. } | Self::Status { .. } => true,
        }
    }
}

/// Reads a script file (JSON array of entries).
pub fn load(path: &std::path::Path) -> Result<Vec<Scripted>, MockScriptError> {
    let text = std::fs::read_to_string(path).map_err(|e| MockScriptError::Read { path: path.display().to_string(), source: e })?;
    serde_json::from_str(&text).map_err(|e| MockScriptError::Parse { path: path.display().to_string(), source: e })
}

#[derive(Debug, thiserror::Error)]
pub enum MockScriptError {
    #[error("cannot read script {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("invalid script {path}: {source}")]
    Parse { path: String, source: serde_json::Error },
}

//! One turn: one fresh request built from sections, one tool offered, at most one call executed.
//!
//! The first call that parses and validates is the one returned. Invalid calls before it are
//! recorded in `tool_calls_dropped` as `invalid:<name>`, every call after it as
//! `tool_call_capped:<name>`. A reply cut at `max_tokens` (`finish_reason: length`) is rejected
//! whole. Nothing goes back to the model: the result of the call is the caller's business.
//!
//! The record's `prompt_chars` counts everything the model is shown: system and user messages,
//! the prefill and the tool schema JSON. `prompt_tokens_est` is the assembled sections' estimate
//! plus the tool schema, template overheads and the prefill ([`crate::prompt::estimate_tokens`]);
//! the budget is `min(role budget, context_tokens - max_tokens - that fixed part)`.
//! `latency_ms` is the whole call, retries and back-off included.
use std::time::Duration;
use temper_journal::TurnRole;
use temper_journal::turn::TurnRecord;

use temper_core::agent::AgentError;

use crate::client::{CallError, LlmClient};
use crate::prompt::{Fence, PromptSection, assemble, estimate_tokens};
use crate::tool_call::{RawCall, extract};
use crate::tools::ToolSpec;
use crate::wire::{ChatRequest, Message};
use temper_journal::TurnMode;

/// Template overhead per message and for the tool block, in tokens (chat-template markers and
/// the "# Tools ... <tools></tools>" preamble Qwen/Hermes templates wrap around the schema).
const MESSAGE_OVERHEAD: u32 = 8;
const TOOLS_OVERHEAD: u32 = 120;

pub struct TurnSpec<'a> {
    pub role: TurnRole,
    pub system: String,
    /// User-message sections; the system prompt is added as a required section.
    pub sections: Vec<PromptSection>,
    /// This prompt's fence around its data sections; the system prompt says what it means.
    pub fence: Fence,
    pub tool: &'a ToolSpec,
    /// The role's budget in estimated prompt tokens.
    pub budget: u32,
}

pub struct Parsed<T> {
    pub value: T,
    pub mode: TurnMode,
    pub record: TurnRecord,
}

/// Why a turn produced no value.
pub enum Failure {
    Unavailable { retries: u32, reason: String, record: TurnRecord },
    Rejected { reason: String, record: TurnRecord, content: Option<String> },
}

impl Failure {
    pub fn into_agent_error(self) -> AgentError {
        match self {
            Self::Unavailable { retries, reason, record } => AgentError::Unavailable { retries, reason, records: vec![record] },
            Self::Rejected { reason, record, .. } => AgentError::Rejected { reason, records: vec![record] },
        }
    }
}

/// The prefill text for `tool`, when configured.
pub fn prefill(client: &LlmClient, tool: &ToolSpec) -> Option<String> {
    let cfg = client.config();
    cfg.prefill_tool_call.then(|| {
        if cfg.prefill_names_tool {
            format!("<tool_call>\n{{\"name\": \"{}\", \"arguments\": {{\"", tool.name)
        } else {
            "<tool_call>\n".to_owned()
        }
    })
}

pub async fn run<T>(
    client: &LlmClient,
    spec: TurnSpec<'_>,
    mut validate: impl FnMut(&str) -> Result<T, String>,
) -> Result<Parsed<T>, Failure> {
    let cfg = client.config();
    let mut record = TurnRecord::new(spec.role, cfg.model.clone());
    let tools = vec![spec.tool.wire()];
    let tools_json = serde_json::to_string(&tools).unwrap_or_default();
    let prefill = prefill(client, spec.tool);
    let fixed = estimate_tokens(&tools_json) + TOOLS_OVERHEAD + 3 * MESSAGE_OVERHEAD + prefill.as_deref().map_or(0, estimate_tokens);
    let room = cfg.context_tokens.saturating_sub(cfg.max_tokens).saturating_sub(fixed);
    let budget = spec.budget.min(room);

    // Fenced data is data: the system prompt says so, with this prompt's fence.
    let system =
        if spec.sections.iter().any(PromptSection::is_data) { format!("{}\n\n{}", spec.system, spec.fence.rule()) } else { spec.system };
    let mut sections = vec![PromptSection::fixed("system", system)];
    sections.extend(spec.sections);
    let assembled = match assemble(sections, budget) {
        Ok(a) => a,
        Err(e) => {
            let reason = format!("{e} (context {} - max_tokens {} - tools ~{fixed})", cfg.context_tokens, cfg.max_tokens);
            record.error = Some(reason.clone());
            return Err(Failure::Unavailable { retries: 0, reason, record });
        }
    };
    record.sections = assembled.fates.clone();
    let system = assembled.part("system").unwrap_or_default().to_owned();
    let user = assembled.join_except(&["system"]);
    record.prompt_chars =
        system.chars().count() + user.chars().count() + prefill.as_deref().map_or(0, |p| p.chars().count()) + tools_json.chars().count();
    record.prompt_tokens_est = assembled.tokens + fixed;

    let mut messages = vec![Message::system(system), Message::user(user)];
    if let Some(p) = &prefill {
        messages.push(Message::assistant(p.clone()));
    }
    let request = ChatRequest {
        model: cfg.model.clone(),
        messages,
        tools,
        tool_choice: Some(cfg.tool_choice.clone()),
        parallel_tool_calls: Some(false),
        max_tokens: cfg.max_tokens,
        temperature: cfg.temperature,
        stream: false,
    };

    let exchange = match client.chat(&request).await {
        Ok(x) => x,
        Err(CallError::Unavailable { retries, reason, latency }) => {
            fill_timing(&mut record, retries, latency);
            record.error = Some(reason.clone());
            return Err(Failure::Unavailable { retries, reason, record });
        }
        Err(CallError::BadReply { retries, reason, latency }) => {
            fill_timing(&mut record, retries, latency);
            return Err(reject(record, reason, None));
        }
    };
    fill_timing(&mut record, exchange.retries, exchange.latency);
    if let Some(u) = exchange.response.usage {
        record.prompt_tokens = u.prompt_tokens;
        record.completion_tokens = u.completion_tokens;
    }
    let Some(choice) = exchange.response.choices.into_iter().next() else {
        return Err(reject(record, "reply has no choices".into(), None));
    };
    record.finish_reason = choice.finish_reason.clone();
    let content = choice.message.content.clone();
    let found = extract(&choice.message, spec.tool, prefill.as_deref());
    record.mode = found.mode;
    record.tool_calls_seen = u32::try_from(found.calls.len()).unwrap_or(u32::MAX);

    if choice.finish_reason.as_deref() == Some("length") {
        let reason = format!(
            "reply cut at max_tokens ({}; finish_reason length): its {} call(s) are not executed",
            cfg.max_tokens,
            found.calls.len()
        );
        return Err(reject(record, reason, content));
    }
    if found.calls.is_empty() {
        let reason = format!("no {} call in the reply", spec.tool.name);
        return Err(reject(record, reason, content));
    }

    let mut first_reason = None;
    for (i, call) in found.calls.iter().enumerate() {
        match check(call, spec.tool, &mut validate) {
            Ok(value) => {
                record.tool_calls_dropped = found.calls[..i]
                    .iter()
                    .map(|c| format!("invalid:{}", c.name))
                    .chain(found.calls[i + 1..].iter().map(|c| format!("tool_call_capped:{}", c.name)))
                    .collect();
                if i > 0 {
                    record.error = first_reason.map(|r| format!("skipped {i} invalid call(s); first: {r}"));
                }
                return Ok(Parsed { value, mode: found.mode, record });
            }
            Err(reason) => {
                first_reason.get_or_insert(reason);
            }
        }
    }
    record.tool_calls_dropped = found.calls[1..].iter().map(|c| format!("tool_call_capped:{}", c.name)).collect();
    let mut reason = first_reason.unwrap_or_default();
    if found.calls.len() > 1 {
        reason.push_str(&format!(" (and {} further call(s), none valid)", found.calls.len() - 1));
    }
    Err(reject(record, reason, content))
}

fn check<T>(call: &RawCall, tool: &ToolSpec, validate: &mut impl FnMut(&str) -> Result<T, String>) -> Result<T, String> {
    if call.name != tool.name {
        return Err(format!("wrong tool name `{}`; the only tool offered is `{}`", call.name, tool.name));
    }
    validate(&call.arguments)
}

fn fill_timing(record: &mut TurnRecord, retries: u32, latency: Duration) {
    record.retries = retries;
    record.latency_ms = u64::try_from(latency.as_millis()).unwrap_or(u64::MAX);
}

fn reject(mut record: TurnRecord, reason: String, content: Option<String>) -> Failure {
    tracing::warn!(role = %record.role, %reason, "llm reply rejected");
    record.error = Some(reason.clone());
    Failure::Rejected { reason, record, content }
}

/// A list of what was learned from the guest as a fenced data section of `- item` lines, or
/// `None` when empty.
pub fn data_bullets(fence: &Fence, name: &str, priority: u8, title: &str, source: &str, items: &[String]) -> Option<PromptSection> {
    (!items.is_empty()).then(|| PromptSection::data(fence, name, priority, &format!("## {title}"), source, &lines(items)))
}

fn lines(items: &[String]) -> String {
    items.iter().map(|i| format!("- {}", i.trim())).collect::<Vec<_>>().join("\n")
}

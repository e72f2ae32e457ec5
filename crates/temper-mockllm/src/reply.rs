//! Chat-completion bodies shaped like vLLM's and llama.cpp's.
//!
//! Checked against llama.cpp (xllamacpp 2026.10): it sends the same keys plus `system_fingerprint`,
//! `timings` and `usage.prompt_tokens_details`; it omits `tool_calls` when there are none and
//! reports the model file path as `model`. vLLM adds `logprobs`, `refusal`, `stop_reason`.
use serde_json::{Value, json};

use crate::script::ScriptedCall;

pub struct ReplyParts<'a> {
    pub seq: u64,
    pub model: &'a str,
    pub content: Option<&'a str>,
    pub tool_calls: &'a [ScriptedCall],
    pub finish_reason: Option<&'a str>,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
}

pub fn completion(p: &ReplyParts<'_>) -> Value {
    let finish = p.finish_reason.unwrap_or(if p.tool_calls.is_empty() { "stop" } else { "tool_calls" });
    let mut message = json!({ "role": "assistant", "content": p.content });
    if !p.tool_calls.is_empty() {
        let calls: Vec<Value> = p
            .tool_calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                json!({
                    "type": "function",
                    "function": { "name": c.name, "arguments": c.arguments.to_wire() },
                    "id": format!("call_mock{}x{}", p.seq, i),
                })
            })
            .collect();
        message["tool_calls"] = Value::Array(calls);
    }
    let created = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    json!({
        "choices": [{ "finish_reason": finish, "index": 0, "message": message }],
        "created": created,
        "model": p.model,
        "system_fingerprint": "temper-mockllm",
        "object": "chat.completion",
        "usage": {
            "completion_tokens": p.completion_tokens,
            "prompt_tokens": p.prompt_tokens,
            "total_tokens": p.prompt_tokens + p.completion_tokens,
        },
        "id": format!("chatcmpl-mock{}", p.seq),
    })
}

/// An OpenAI-style error body, as llama.cpp and vLLM send it.
pub fn error(status: u16, message: &str) -> Value {
    let kind = match status {
        429 => "rate_limit_error",
        400..=499 => "invalid_request_error",
        _ => "server_error",
    };
    json!({ "error": { "code": status, "message": message, "type": kind } })
}

/// The chars/4 estimate used when a script entry gives no usage.
pub fn estimate_tokens(chars: usize) -> u32 {
    u32::try_from(chars.div_ceil(4)).unwrap_or(u32::MAX)
}

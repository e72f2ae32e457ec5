//! What the agents hand the loop and the store keeps: the Worker's fix, the Reflector's tips,
//! the Architect's decision, and each LLM call.
use serde::{Deserialize, Serialize};

use crate::{TipKind, TurnMode, TurnRole};

/// The Worker's one action: the `apply_fix` tool call, as a typed value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApplyFix {
    pub fix_script: String,
    pub revert_script: String,
    pub description: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewTip {
    pub text: String,
    pub kind: TipKind,
    pub mechanism: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Decision {
    Continue { plan: String },
    Pivot { plan: String },
    Escalate { reason: String },
}

/// One LLM call as the store keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TurnRecord {
    pub role: TurnRole,
    pub model: String,
    pub prompt_chars: usize,
    pub prompt_tokens_est: u32,
    pub prompt_tokens: Option<u32>,
    pub completion_tokens: Option<u32>,
    pub latency_ms: u64,
    pub retries: u32,
    pub tool_calls_seen: u32,
    /// Calls after the first, dropped (`tool_call_capped`), with their names.
    pub tool_calls_dropped: Vec<String>,
    pub mode: TurnMode,
    pub finish_reason: Option<String>,
    /// Prompt sections: kept, cut or dropped under the budget.
    pub sections: Vec<SectionFate>,
    pub error: Option<String>,
}

impl TurnRecord {
    /// A call by `role` to `model`, with nothing measured yet.
    pub fn new(role: TurnRole, model: impl Into<String>) -> Self {
        Self {
            role,
            model: model.into(),
            prompt_chars: 0,
            prompt_tokens_est: 0,
            prompt_tokens: None,
            completion_tokens: None,
            latency_ms: 0,
            retries: 0,
            tool_calls_seen: 0,
            tool_calls_dropped: Vec::new(),
            mode: TurnMode::None,
            finish_reason: None,
            sections: Vec::new(),
            error: None,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SectionFate {
    pub name: String,
    pub fate: Fate,
    pub chars: usize,
}

/// What the prompt's budget did with a section: kept whole, cut to fit, or dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fate {
    Kept,
    Cut,
    Dropped,
}

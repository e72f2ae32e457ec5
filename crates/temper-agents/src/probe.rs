//! `temper llm probe`: one Worker-shaped request, reported as JSON.
use serde::Serialize;
use temper_core::agent::{AgentError, FixContext};
use temper_journal::AttemptNo;
use temper_journal::FixSource;
use temper_journal::TurnMode;
use temper_journal::TurnRole;
use temper_journal::turn::TurnRecord;

use crate::client::LlmClient;
use crate::config::LlmConfig;
use crate::llm::propose_with;

/// Serializes exactly as
/// `{"ok", "mode", "dropped_calls", "retries", "error", "prompt_tokens", "completion_tokens", "latency_ms"}`.
/// `mode` is "native" or "text" when a call was parsed, "none" otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProbeReport {
    pub ok: bool,
    pub mode: TurnMode,
    /// Calls after the first, dropped.
    pub dropped_calls: u32,
    pub retries: u32,
    pub error: Option<String>,
    pub prompt_tokens: Option<u32>,
    pub completion_tokens: Option<u32>,
    pub latency_ms: u64,
}

const PROBE_SYSTEM: &str = "You harden a Linux host one rule at a time. Answer with exactly one call \
of the tool named apply_fix, whose arguments are fix_script (an idempotent bash script), \
revert_script (a bash script restoring the prior state) and description (one sentence). \
The tool name is always apply_fix.";

/// Sends one Worker request for a harmless made-up rule and reports how the endpoint answered.
/// Never fails: every problem lands in `error`.
pub async fn probe(config: &LlmConfig) -> ProbeReport {
    let client = match LlmClient::new(config.clone()) {
        Ok(c) => c,
        Err(e) => return failed(e.to_string(), None),
    };
    match propose_with(&client, PROBE_SYSTEM.into(), &probe_context()).await {
        Ok(turn) => {
            let mut r = report(turn.records.first());
            r.ok = true;
            r.mode = if turn.value.1 == FixSource::LlmText { TurnMode::Text } else { TurnMode::Native };
            r
        }
        Err(AgentError::NoFix(reason)) => failed(reason, None),
        Err(e) => failed(e.to_string(), e.records().first()),
    }
}

fn failed(error: String, record: Option<&TurnRecord>) -> ProbeReport {
    let mut r = report(record);
    r.error = Some(error);
    r
}

fn report(record: Option<&TurnRecord>) -> ProbeReport {
    let r = record.cloned().unwrap_or_else(|| TurnRecord::new(TurnRole::Worker, ""));
    ProbeReport {
        ok: false,
        mode: r.mode,
        dropped_calls: u32::try_from(r.tool_calls_dropped.len()).unwrap_or(u32::MAX),
        retries: r.retries,
        error: None,
        prompt_tokens: r.prompt_tokens,
        completion_tokens: r.completion_tokens,
        latency_ms: r.latency_ms,
    }
}

fn probe_context() -> FixContext {
    FixContext {
        rule_id: "temper_probe_motd_banner".into(),
        title: "The file /etc/motd.d/temper-probe contains the line 'authorized use only'".into(),
        severity: "low".into(),
        description: "Create /etc/motd.d/temper-probe holding the single line 'authorized use only'.".into(),
        rationale: String::new(),
        plan: "Write the file if its content differs; the revert removes it.".into(),
        stock_fix: None,
        episodes: Vec::new(),
        lessons: Vec::new(),
        bans: Vec::new(),
        attempt: AttemptNo::FIRST,
        evidence: None,
        tried: Vec::new(),
    }
}

//! Live status for a progress line; `temper status` reads the same from the store.
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Preflight,
    Pick,
    Fix,
    Evaluate,
    Revert,
    Reflect,
    /// The batch's regression rescan, and its bisection when it finds one.
    Regression,
    Finish,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Preflight => "preflight",
            Self::Pick => "pick",
            Self::Fix => "fix",
            Self::Evaluate => "evaluate",
            Self::Revert => "revert",
            Self::Reflect => "reflect",
            Self::Regression => "regression",
            Self::Finish => "finish",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Status {
    pub run: i64,
    pub phase: Phase,
    pub rule: Option<String>,
    pub attempt: u32,
    pub fixed: usize,
    pub escalated: usize,
    /// Failing rules still open.
    pub open: usize,
    pub elapsed: Duration,
}

pub trait Observer: Send + Sync {
    fn update(&self, status: &Status);
}

/// An observer that ignores updates.
pub struct Quiet;

impl Observer for Quiet {
    fn update(&self, _: &Status) {}
}

use serde_json::json;

use super::{LoopResult, Ralph};
use crate::agent::TurnRecord;

impl Ralph<'_> {
    /// Records the phase in the store (for `temper status`) and tells the observer.
    pub(super) async fn phase(&self, run: i64, phase: Phase, rule: Option<&str>, attempt: u32) -> LoopResult<()> {
        self.store.set_phase(run, phase.as_str(), rule).await?;
        tracing::info!(run, phase = phase.as_str(), rule = rule.map(temper_scap::short_rule_id), attempt, "phase");
        let rules = self.store.rules(run).await?;
        let count = |s: &str| rules.iter().filter(|r| r.status == s).count();
        self.observer.update(&Status {
            run,
            phase,
            rule: rule.map(str::to_string),
            attempt,
            fixed: count("fixed"),
            escalated: count("escalated"),
            open: count("pending"),
            elapsed: self.started.elapsed(),
        });
        Ok(())
    }

    /// Stores each LLM call as a turn.
    pub(super) async fn record_turns(&self, run: i64, attempt: Option<i64>, rule: Option<&str>, records: &[TurnRecord]) -> LoopResult<()> {
        for r in records {
            let row = temper_store::TurnRow {
                run_id: run,
                attempt_id: attempt,
                rule_id: rule.map(str::to_string),
                role: r.role.clone(),
                model: r.model.clone(),
                prompt_chars: r.prompt_chars as i64,
                prompt_tokens_est: r.prompt_tokens_est as i64,
                prompt_tokens: r.prompt_tokens.map(i64::from),
                completion_tokens: r.completion_tokens.map(i64::from),
                latency_ms: r.latency_ms as i64,
                retries: r.retries as i64,
                tool_calls_seen: r.tool_calls_seen as i64,
                tool_calls_dropped: json!(r.tool_calls_dropped).to_string(),
                mode: r.mode.clone(),
                finish_reason: r.finish_reason.clone(),
                sections: json!(r.sections).to_string(),
                error: r.error.clone(),
                ..Default::default()
            };
            self.store.add_turn(&row).await?;
            if !r.tool_calls_dropped.is_empty() {
                self.store
                    .event(run, "tool_call_capped", rule, json!({"role": r.role, "dropped": r.tool_calls_dropped}))
                    .await?;
            }
        }
        Ok(())
    }
}

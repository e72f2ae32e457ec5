//! The stock agent: no LLM. It applies the datastream's own fixes, then, where the content has
//! none or it failed, the fix derived from the check (`derived.rs`); it gives up after those.
use async_trait::async_trait;
use temper_core::agent::{
    AgentError, AgentResult, Architect, FixContext, PickContext, ReengageContext, ReflectContext, Reflection, Reflector, Selection, Tried,
    Turn, Worker,
};
use temper_journal::FixSource;
use temper_journal::turn::ApplyFix;
use temper_journal::turn::Decision;

use crate::derived::{self, DERIVED_PLAN};
use crate::text::clip;
use temper_journal::Verdict;

#[derive(Debug, Clone, Copy, Default)]
pub struct StockAgent;

pub const STOCK_ESCALATION: &str = "stock fix failed; no LLM configured";
pub const DERIVED_ESCALATION: &str = "the derived fix failed; no LLM configured";

#[async_trait]
impl Architect for StockAgent {
    /// The first candidate (the harness's order) with a stock fix not tried yet; then the first
    /// untried one without; then one whose kept fix was rolled back later (by the reboot proof
    /// or a batch's regression check). For the last two the Worker derives a fix once, or says
    /// why not.
    async fn select(&self, ctx: &PickContext) -> AgentResult<Selection> {
        let untried = |stock: bool| ctx.candidates.iter().find(|c| c.has_stock_fix == stock && c.attempts == 0);
        if let Some(c) = untried(true) {
            return Ok(Turn::bare(Selection {
                rule_id: c.rule_id.clone(),
                plan: format!("apply the datastream's stock fix for {}", c.rule_id),
            }));
        }
        let c = untried(false)
            .or_else(|| ctx.candidates.iter().find(|c| c.attempts > 0))
            .ok_or_else(|| AgentError::NoFix("no candidate".into()))?;
        Ok(Turn::bare(Selection { rule_id: c.rule_id.clone(), plan: DERIVED_PLAN.into() }))
    }

    /// After a failed stock fix: go on to the derived fix when the check yields one; ESCALATE
    /// when it does not (saying why) or once that was tried too.
    async fn reengage(&self, ctx: &ReengageContext) -> AgentResult<Decision> {
        if ctx.attempts == 0 {
            return Ok(Turn::bare(Decision::Continue { plan: ctx.plan.clone() }));
        }
        // Each derived candidate is one try, in order: go on while one is left.
        let derived_tries = ctx.tried.iter().filter(|s| **s == FixSource::Derived).count();
        let reason = match derived::candidates(ctx.evidence.as_ref()) {
            Ok(all) if derived_tries < all.len() => return Ok(Turn::bare(Decision::Continue { plan: DERIVED_PLAN.into() })),
            Ok(all) if all.len() > 1 => format!("each of the {} derived fixes failed; no LLM configured", all.len()),
            Err(refusal) if derived_tries == 0 => format!("{STOCK_ESCALATION}; no derived fix ({}): {refusal}", refusal.class()),
            _ => DERIVED_ESCALATION.to_string(),
        };
        Ok(Turn::bare(Decision::Escalate { reason: with_stop(reason, ctx) }))
    }
}

/// An escalation after a fix the harness stopped (stalled, or at its cap) says so first: the
/// fix did not fail, it was stopped, and the setting to change is named there.
fn with_stop(reason: String, ctx: &ReengageContext) -> String {
    match &ctx.last {
        Some((Verdict::Stalled | Verdict::TimedOut, why)) => format!("{why}; {reason}"),
        _ => reason,
    }
}

#[async_trait]
impl Worker for StockAgent {
    /// The datastream's resolved fix, once (its revert is the checkpoint snapshot, so
    /// `revert_script` is empty); then the derived fix, once.
    async fn propose(&self, ctx: &FixContext) -> AgentResult<(ApplyFix, FixSource)> {
        let stock = ctx.stock_fix.as_deref().filter(|f| !f.trim().is_empty());
        if let Some(fix) = stock.filter(|f| !Tried::any(&ctx.tried, FixSource::Stock) && !Tried::ran(&ctx.tried, f)) {
            let description = format!("stock fix for {}", ctx.rule_id);
            return Ok(Turn::bare((ApplyFix { fix_script: fix.to_owned(), revert_script: String::new(), description }, FixSource::Stock)));
        }
        match derived::untried(ctx) {
            Some(Ok(fix)) => Ok(Turn::bare((fix, FixSource::Derived))),
            Some(Err(refusal)) => Err(AgentError::NoFix(format!(
                "{} for {}; no derived fix ({}): {refusal}",
                derived::stock_story(ctx),
                ctx.rule_id,
                refusal.class()
            ))),
            None => Err(AgentError::NoFix(format!("{} for {}, and every derived fix was tried", derived::stock_story(ctx), ctx.rule_id))),
        }
    }
}

#[async_trait]
impl Reflector for StockAgent {
    /// Deterministic, from the verdict and the first line of the diagnostics.
    async fn reflect(&self, ctx: &ReflectContext) -> AgentResult<Reflection> {
        let first = ctx.diagnostics.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
        let what = if ctx.fix_script.starts_with(temper_derive::HEADER) { "derived fix" } else { "stock fix" };
        let distilled = if first.is_empty() { format!("{what}: {}", ctx.verdict) } else { format!("{what}: {}: {first}", ctx.verdict) };
        Ok(Turn::bare(Reflection {
            lesson: format!("{what} did not fix {}: {}", ctx.rule_id, ctx.verdict),
            banned: None,
            preferred: String::new(),
            distilled: clip(&distilled, crate::llm::MAX_DISTILLED_CHARS),
            tips: Vec::new(),
        }))
    }
}

//! The stock agent: no LLM. It applies the datastream's own fixes and gives up after one failure.
use async_trait::async_trait;
use temper_core::agent::{
    AgentError, AgentResult, ApplyFix, Architect, Decision, FixContext, FixSource, PickContext, ReengageContext, ReflectContext,
    Reflection, Reflector, Selection, Turn, Worker,
};

use crate::text::clip;

#[derive(Debug, Clone, Copy, Default)]
pub struct StockAgent;

pub const STOCK_ESCALATION: &str = "stock fix failed; no LLM configured";

#[async_trait]
impl Architect for StockAgent {
    /// The first candidate (the harness's order) with a stock fix not tried yet.
    async fn select(&self, ctx: &PickContext) -> AgentResult<Selection> {
        let c = ctx
            .candidates
            .iter()
            .find(|c| c.has_stock_fix && c.attempts == 0)
            .ok_or_else(|| AgentError::NoFix("no candidate with an untried stock fix".into()))?;
        Ok(Turn::bare(Selection { rule_id: c.rule_id.clone(), plan: format!("apply the datastream's stock fix for {}", c.rule_id) }))
    }

    /// ESCALATE once the stock fix has been tried; there is nothing else to try.
    async fn reengage(&self, ctx: &ReengageContext) -> AgentResult<Decision> {
        Ok(Turn::bare(if ctx.attempts >= 1 {
            Decision::Escalate { reason: STOCK_ESCALATION.into() }
        } else {
            Decision::Continue { plan: ctx.plan.clone() }
        }))
    }
}

#[async_trait]
impl Worker for StockAgent {
    /// The datastream's resolved fix; its revert is the checkpoint snapshot, so `revert_script`
    /// is empty.
    async fn propose(&self, ctx: &FixContext) -> AgentResult<(ApplyFix, FixSource)> {
        let fix = ctx
            .stock_fix
            .as_deref()
            .filter(|f| !f.trim().is_empty())
            .ok_or_else(|| AgentError::NoFix(format!("no stock fix for {}", ctx.rule_id)))?;
        Ok(Turn::bare((
            ApplyFix { fix_script: fix.to_owned(), revert_script: String::new(), description: format!("stock fix for {}", ctx.rule_id) },
            FixSource::Stock,
        )))
    }
}

#[async_trait]
impl Reflector for StockAgent {
    /// Deterministic, from the verdict and the first line of the diagnostics.
    async fn reflect(&self, ctx: &ReflectContext) -> AgentResult<Reflection> {
        let first = ctx.diagnostics.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
        let distilled =
            if first.is_empty() { format!("stock fix: {}", ctx.verdict) } else { format!("stock fix: {}: {first}", ctx.verdict) };
        Ok(Turn::bare(Reflection {
            lesson: format!("stock fix did not fix {}: {}", ctx.rule_id, ctx.verdict),
            banned: None,
            preferred: String::new(),
            distilled: clip(&distilled, crate::llm::MAX_DISTILLED_CHARS),
            tips: Vec::new(),
        }))
    }
}

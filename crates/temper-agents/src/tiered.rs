//! Stock first, then the fix derived from the check, then the LLM where those are missing or
//! have already been tried.
use async_trait::async_trait;
use temper_core::agent::{
    AgentResult, Architect, FixContext, PickContext, ReengageContext, ReflectContext, Reflection, Reflector, Selection, Worker,
};
use temper_journal::AttemptNo;
use temper_journal::FixSource;
use temper_journal::turn::ApplyFix;
use temper_journal::turn::Decision;

use crate::llm::LlmAgent;
use crate::stock::StockAgent;

/// Architect, Reflector and later attempts are the LLM's; the Worker's first attempt on a rule
/// with a stock fix is the stock fix.
#[derive(Clone)]
pub struct TieredAgent {
    pub llm: LlmAgent,
    pub stock: StockAgent,
}

impl TieredAgent {
    pub fn new(llm: LlmAgent) -> Self {
        Self { llm, stock: StockAgent }
    }
}

/// The stock fix is used on the first attempt only, when there is one and no earlier attempt
/// on the rule is remembered (a remembered attempt means the stock fix failed or broke something).
pub fn uses_stock(ctx: &FixContext) -> bool {
    ctx.attempt == AttemptNo::FIRST && ctx.episodes.is_empty() && ctx.stock_fix.as_deref().is_some_and(|f| !f.trim().is_empty())
}

#[async_trait]
impl Architect for TieredAgent {
    async fn select(&self, ctx: &PickContext) -> AgentResult<Selection> {
        self.llm.select(ctx).await
    }

    async fn reengage(&self, ctx: &ReengageContext) -> AgentResult<Decision> {
        self.llm.reengage(ctx).await
    }
}

#[async_trait]
impl Worker for TieredAgent {
    /// The stock fix first; then the derived fixes, in order, while the check yields one; then the LLM
    /// (whose prompt shows a derived fix that failed).
    async fn propose(&self, ctx: &FixContext) -> AgentResult<(ApplyFix, FixSource)> {
        if uses_stock(ctx) {
            return self.stock.propose(ctx).await;
        }
        match crate::derived::untried(ctx) {
            Some(Ok(fix)) => Ok(temper_core::agent::Turn::bare((fix, FixSource::Derived))),
            _ => self.llm.propose(ctx).await,
        }
    }
}

#[async_trait]
impl Reflector for TieredAgent {
    async fn reflect(&self, ctx: &ReflectContext) -> AgentResult<Reflection> {
        self.llm.reflect(ctx).await
    }
}

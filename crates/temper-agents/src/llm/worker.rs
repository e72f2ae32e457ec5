//! The Worker: one `apply_fix` per turn.
use async_trait::async_trait;
use temper_core::agent::{AgentResult, FixContext, Turn, Worker};
use temper_journal::FixSource;
use temper_journal::turn::ApplyFix;

use temper_journal::TurnRole;

use super::LlmAgent;
use crate::client::LlmClient;
use crate::prompt::{Fence, PromptSection};
use crate::skill::PromptFile;
use crate::tools::{ApplyFixArgs, apply_fix, parse_args};
use crate::turn::{TurnSpec, data_bullets, run};
use temper_journal::TurnMode;

#[async_trait]
impl Worker for LlmAgent {
    async fn propose(&self, ctx: &FixContext) -> AgentResult<(ApplyFix, FixSource)> {
        let system = self.system(PromptFile::Worker, TurnRole::Worker)?;
        propose_with(&self.client, system, ctx).await
    }
}

/// One Worker turn with the given system prompt (also used by `probe`).
pub async fn propose_with(client: &LlmClient, system: String, ctx: &FixContext) -> AgentResult<(ApplyFix, FixSource)> {
    let tool = apply_fix();
    let fence = Fence::new();
    let sections = sections(&fence, ctx);
    let spec = TurnSpec { role: TurnRole::Worker, system, sections, fence, tool: &tool, budget: client.config().budgets.worker };
    let parsed = run(client, spec, validate_fix(client.config().max_script_bytes)).await.map_err(|f| f.into_agent_error())?;
    let source = if parsed.mode == TurnMode::Text { FixSource::LlmText } else { FixSource::Llm };
    Ok(Turn { value: (parsed.value, source), records: vec![parsed.record] })
}

/// Both scripts must be non-empty: an LLM fix must say how to undo itself (the stock fix alone
/// relies on the checkpoint snapshot). Each script is limited to `max_bytes`.
pub fn validate_fix(max_bytes: usize) -> impl Fn(&str) -> Result<ApplyFix, String> {
    move |arguments| {
        let a: ApplyFixArgs = parse_args("apply_fix", arguments)?;
        for (name, script) in [("fix_script", &a.fix_script), ("revert_script", &a.revert_script)] {
            if script.trim().is_empty() {
                return Err(format!("{name} is empty"));
            }
            if script.len() > max_bytes {
                return Err(format!("{name} is {} bytes, over the limit of {max_bytes}", script.len()));
            }
        }
        let description = if a.description.trim().is_empty() { "(no description)".into() } else { a.description };
        Ok(ApplyFix { fix_script: a.fix_script, revert_script: a.revert_script, description })
    }
}

/// What the guest holds (the scanner's items), and what was made from its output (plans,
/// lessons, bans, earlier attempts): fenced data. The content's own text (title, fix,
/// description, rationale) is not.
pub fn sections(fence: &Fence, ctx: &FixContext) -> Vec<PromptSection> {
    let mut s = vec![PromptSection::fixed(
        "task",
        format!("Rule: {}\nTitle: {}\nSeverity: {}\nAttempt: {}", ctx.rule_id, ctx.title, ctx.severity, ctx.attempt),
    )];
    if !ctx.plan.trim().is_empty() {
        s.push(PromptSection::data(fence, "plan", 1, "## Plan from the Architect", "the Architect's plan", &ctx.plan));
    }
    if let Some(e) = &ctx.evidence {
        let head = "## What the scanner finds wrong now (OVAL: object, expected state, collected items)";
        s.push(PromptSection::data(
            fence,
            "evidence",
            1,
            head,
            "the items the scanner collected on the machine being hardened",
            &e.brief(),
        ));
    }
    let learned = "learned from earlier attempts, made from the machine's output";
    let head = "Refused patterns (scripts matching these regexes are rejected)";
    if let Some(b) = data_bullets(fence, "bans", 1, head, learned, &ctx.bans) {
        s.push(b);
    }
    if let Some(e) = data_bullets(fence, "episodes", 2, "Earlier attempts on this rule (oldest first)", learned, &ctx.episodes) {
        s.push(e.keep_tail());
    }
    if let Some(d) = crate::derived::failed_section(fence, &ctx.tried) {
        s.push(d);
    }
    if let Some(fix) = ctx.stock_fix.as_deref().filter(|f| !f.trim().is_empty()) {
        s.push(PromptSection::optional(
            "stock_fix",
            2,
            format!(
                "## The datastream's own fix (reference; do not repeat it unchanged if it failed before)\n```bash\n{}\n```",
                fix.trim()
            ),
        ));
    }
    if !ctx.description.trim().is_empty() {
        s.push(PromptSection::optional("description", 3, format!("## Description\n{}", ctx.description.trim())));
    }
    if let Some(l) = data_bullets(fence, "lessons", 3, "Lessons", learned, &ctx.lessons) {
        s.push(l);
    }
    if !ctx.rationale.trim().is_empty() {
        s.push(PromptSection::optional("rationale", 4, format!("## Rationale\n{}", ctx.rationale.trim())));
    }
    s.push(PromptSection::fixed("ask", "Call the tool `apply_fix` exactly once, with fix_script, revert_script and description.".into()));
    s
}

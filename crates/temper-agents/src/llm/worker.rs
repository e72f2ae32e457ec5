//! The Worker: one `apply_fix` per turn.
use async_trait::async_trait;
use temper_core::agent::{AgentResult, ApplyFix, FixContext, FixSource, Turn, Worker};

use temper_core::agent::TurnRole;

use super::LlmAgent;
use crate::client::LlmClient;
use crate::prompt::Section;
use crate::skill::PromptFile;
use crate::tool_call::Mode;
use crate::tools::{ApplyFixArgs, apply_fix, parse_args};
use crate::turn::{TurnSpec, bullets, run};

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
    let spec = TurnSpec { role: TurnRole::Worker, system, sections: sections(ctx), tool: &tool, budget: client.config().budgets.worker };
    let parsed = run(client, spec, validate_fix(client.config().max_script_bytes)).await.map_err(|f| f.into_agent_error())?;
    let source = if parsed.mode == Mode::Text { FixSource::LlmText } else { FixSource::Llm };
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

fn sections(ctx: &FixContext) -> Vec<Section> {
    let mut s = vec![Section::fixed(
        "task",
        format!("Rule: {}\nTitle: {}\nSeverity: {}\nAttempt: {}", ctx.rule_id, ctx.title, ctx.severity, ctx.attempt),
    )];
    if !ctx.plan.trim().is_empty() {
        s.push(Section::optional("plan", 1, format!("## Plan from the Architect\n{}", ctx.plan.trim())));
    }
    if let Some(e) = &ctx.evidence {
        let head = "## What the scanner finds wrong now (OVAL: object, expected state, collected items)";
        s.push(Section::optional("evidence", 1, format!("{head}\n```\n{}```", e.brief())));
    }
    if let Some(b) = bullets("Refused patterns (scripts matching these regexes are rejected)", &ctx.bans) {
        s.push(Section::optional("bans", 1, b));
    }
    if let Some(e) = bullets("Earlier attempts on this rule (oldest first)", &ctx.episodes) {
        s.push(Section::optional("episodes", 2, e).keep_tail());
    }
    if let Some(d) = crate::derived::failed_section(&ctx.tried) {
        s.push(Section::optional("derived_fix", 1, d));
    }
    if let Some(fix) = ctx.stock_fix.as_deref().filter(|f| !f.trim().is_empty()) {
        s.push(Section::optional(
            "stock_fix",
            2,
            format!(
                "## The datastream's own fix (reference; do not repeat it unchanged if it failed before)\n```bash\n{}\n```",
                fix.trim()
            ),
        ));
    }
    if !ctx.description.trim().is_empty() {
        s.push(Section::optional("description", 3, format!("## Description\n{}", ctx.description.trim())));
    }
    if let Some(l) = bullets("Lessons", &ctx.lessons) {
        s.push(Section::optional("lessons", 3, l));
    }
    if !ctx.rationale.trim().is_empty() {
        s.push(Section::optional("rationale", 4, format!("## Rationale\n{}", ctx.rationale.trim())));
    }
    s.push(Section::fixed("ask", "Call the tool `apply_fix` exactly once, with fix_script, revert_script and description.".into()));
    s
}

//! The Architect: `select_rule` among the offered candidates; `decide` on re-engagement.
use std::sync::LazyLock;
use temper_journal::TurnMode;
use temper_journal::TurnRole;
use temper_journal::turn::Decision;

use async_trait::async_trait;
use regex::Regex;
use temper_core::agent::{AgentResult, Architect, PickContext, ReengageContext, Selection, Turn};

use super::LlmAgent;
use crate::prompt::{Fence, PromptSection};
use crate::skill::PromptFile;
use crate::tools::{DecideArgs, SelectRuleArgs, decide, parse_args, select_rule};
use crate::turn::{Failure, TurnSpec, data_bullets, run};

#[async_trait]
impl Architect for LlmAgent {
    async fn select(&self, ctx: &PickContext) -> AgentResult<Selection> {
        let system = self.system(PromptFile::Architect, TurnRole::Architect)?;
        let tool = select_rule();
        let fence = Fence::new();
        let spec = TurnSpec {
            role: TurnRole::Architect,
            system,
            sections: select_sections(&fence, ctx),
            fence,
            tool: &tool,
            budget: self.client.config().budgets.architect,
        };
        let parsed = run(&self.client, spec, |args| validate_selection(ctx, args)).await.map_err(Failure::into_agent_error)?;
        Ok(Turn { value: parsed.value, records: vec![parsed.record] })
    }

    /// An unusable reply (no call, bad JSON, unknown decision, cut-off) is not an error here:
    /// the decision defaults to CONTINUE with the current plan, and the record's `error` says so.
    /// An unreachable endpoint still returns `Unavailable`.
    async fn reengage(&self, ctx: &ReengageContext) -> AgentResult<Decision> {
        let system = self.system(PromptFile::Reengage, TurnRole::Reengage)?;
        let tool = decide();
        let fence = Fence::new();
        let spec = TurnSpec {
            role: TurnRole::Reengage,
            system,
            sections: reengage_sections(&fence, ctx),
            fence,
            tool: &tool,
            budget: self.client.config().budgets.reengage,
        };
        match run(&self.client, spec, |args| validate_decision(ctx, args)).await {
            Ok(p) => Ok(Turn { value: p.value, records: vec![p.record] }),
            Err(Failure::Rejected { reason, mut record, content }) => {
                if record.tool_calls_seen == 0
                    && record.finish_reason.as_deref() != Some("length")
                    && let Some(d) = content.as_deref().and_then(|c| text_decision(ctx, c))
                {
                    record.mode = TurnMode::Text;
                    record.error = None;
                    return Ok(Turn { value: d, records: vec![record] });
                }
                record.error = Some(format!("unusable decision ({reason}); defaulted to CONTINUE with the current plan"));
                tracing::warn!(rule = %ctx.rule_id, %reason, "re-engagement reply unusable; CONTINUE");
                Ok(Turn { value: Decision::Continue { plan: ctx.plan.clone() }, records: vec![record] })
            }
            Err(f @ Failure::Unavailable { .. }) => Err(f.into_agent_error()),
        }
    }
}

/// The id must equal one candidate's id exactly (surrounding whitespace aside): never a
/// substring or prefix match.
fn validate_selection(ctx: &PickContext, arguments: &str) -> Result<Selection, String> {
    let a: SelectRuleArgs = parse_args("select_rule", arguments)?;
    let id = a.rule_id.trim();
    if !ctx.candidates.iter().any(|c| c.rule_id == id) {
        return Err(format!("rule_id `{id}` is not one of the {} offered candidates", ctx.candidates.len()));
    }
    Ok(Selection { rule_id: id.to_owned(), plan: a.plan.trim().to_owned() })
}

/// `decision` must be CONTINUE, PIVOT or ESCALATE (ASCII case ignored, nothing else around it).
fn validate_decision(ctx: &ReengageContext, arguments: &str) -> Result<Decision, String> {
    let a: DecideArgs = parse_args("decide", arguments)?;
    to_decision(ctx, a.decision.trim(), a.plan_or_reason.trim())
}

fn to_decision(ctx: &ReengageContext, decision: &str, text: &str) -> Result<Decision, String> {
    match decision.to_ascii_uppercase().as_str() {
        "CONTINUE" => {
            let plan = if text.is_empty() { ctx.plan.clone() } else { text.to_owned() };
            Ok(Decision::Continue { plan })
        }
        "PIVOT" if text.is_empty() => Err("PIVOT without a new plan".into()),
        "PIVOT" => Ok(Decision::Pivot { plan: text.to_owned() }),
        "ESCALATE" => {
            let reason = if text.is_empty() { "escalated without a reason".to_owned() } else { text.to_owned() };
            Ok(Decision::Escalate { reason })
        }
        other => Err(format!("decision `{other}` is not CONTINUE, PIVOT or ESCALATE")),
    }
}

static TEXT_DECISION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?s)\A(CONTINUE|PIVOT|ESCALATE)[ \t]*:[ \t]*(.*)\z").expect("valid regex"));

/// The strict text form: the whole content is `CONTINUE: plan`, `PIVOT: plan` or `ESCALATE: reason`.
fn text_decision(ctx: &ReengageContext, content: &str) -> Option<Decision> {
    let c = TEXT_DECISION.captures(content.trim())?;
    to_decision(ctx, &c[1], c[2].trim()).ok()
}

const LEARNED: &str = "learned from earlier attempts, made from the machine's output";

fn select_sections(fence: &Fence, ctx: &PickContext) -> Vec<PromptSection> {
    let lines: Vec<String> = ctx
        .candidates
        .iter()
        .map(|c| {
            let stig = if c.stig_ids.is_empty() { String::new() } else { format!(" | {}", c.stig_ids.join(",")) };
            format!(
                "- {} | {} | {}{} | stock fix: {} | attempts: {}",
                c.rule_id,
                c.severity,
                c.title,
                stig,
                if c.has_stock_fix { "yes" } else { "no" },
                c.attempts
            )
        })
        .collect();
    let mut s = vec![
        PromptSection::fixed("task", format!("Skill: {}\nProfile: {}", ctx.skill, ctx.profile)),
        PromptSection::optional("candidates", 0, format!("## Candidates (preferred order)\n{}", lines.join("\n"))).required(),
    ];
    if let Some(l) = data_bullets(fence, "lessons", 2, "Lessons", LEARNED, &ctx.lessons) {
        s.push(l);
    }
    s.push(PromptSection::fixed("ask", "Call the tool `select_rule` exactly once; copy rule_id exactly from the candidate list.".into()));
    s
}

fn reengage_sections(fence: &Fence, ctx: &ReengageContext) -> Vec<PromptSection> {
    let mut s = vec![PromptSection::fixed(
        "task",
        format!(
            "Rule: {}\nTitle: {}\nAttempts so far: {}\nPlateau: {}",
            ctx.rule_id,
            ctx.title,
            ctx.attempts,
            if ctx.plateau { "yes" } else { "no" }
        ),
    )];
    if !ctx.plan.trim().is_empty() {
        s.push(PromptSection::data(fence, "plan", 1, "## Current plan", "the Architect's plan", &ctx.plan));
    }
    if let Some(e) = data_bullets(fence, "episodes", 1, "Attempts (oldest first)", LEARNED, &ctx.episodes) {
        s.push(e.keep_tail());
    }
    s.push(PromptSection::fixed(
        "ask",
        "Call the tool `decide` exactly once: CONTINUE, PIVOT or ESCALATE, with the plan or the reason.".into(),
    ));
    s
}

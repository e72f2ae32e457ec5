//! The Reflector: one `reflect` call distilled into a `Reflection`.
use async_trait::async_trait;
use temper_core::agent::{AgentResult, ReflectContext, Reflection, Reflector, Turn};
use temper_core::ban::check_ban;
use temper_journal::turn::NewTip;

use temper_journal::{TipKind, TurnRole};

use super::LlmAgent;
use crate::prompt::{Fence, PromptSection};
use crate::skill::PromptFile;
use crate::text::clip;
use crate::tools::{ReflectArgs, parse_args, reflect};
use crate::turn::{Failure, TurnSpec, data_bullets, run};

pub const MAX_DISTILLED_CHARS: usize = 200;

#[async_trait]
impl Reflector for LlmAgent {
    async fn reflect(&self, ctx: &ReflectContext) -> AgentResult<Reflection> {
        let system = self.system(PromptFile::Reflector, TurnRole::Reflector)?;
        let tool = reflect();
        let fence = Fence::new();
        let spec = TurnSpec {
            role: TurnRole::Reflector,
            system,
            sections: sections(&fence, ctx),
            fence,
            tool: &tool,
            budget: self.client.config().budgets.reflector,
        };
        let mut refused = None;
        let parsed = run(&self.client, spec, |args| {
            let (r, why) = validate_reflection(args)?;
            refused = why;
            Ok(r)
        })
        .await
        .map_err(Failure::into_agent_error)?;
        let mut record = parsed.record;
        if let Some(why) = refused {
            tracing::warn!(rule = %ctx.rule_id, %why, "reflector ban refused");
            record.error = Some(why);
        }
        Ok(Turn { value: parsed.value, records: vec![record] })
    }
}

/// A refused ban is dropped (the rest is kept) and its reason returned for the record.
/// `distilled` is cut to 200 characters; empty, it is taken from the lesson.
pub fn validate_reflection(arguments: &str) -> Result<(Reflection, Option<String>), String> {
    let a: ReflectArgs = parse_args("reflect", arguments)?;
    let lesson = a.lesson.trim().to_owned();
    if lesson.is_empty() {
        return Err("lesson is empty".into());
    }
    let distilled = if a.distilled.trim().is_empty() { &lesson } else { a.distilled.trim() };
    let mut refused = None;
    let banned = match a.banned.as_deref().map(str::trim).filter(|b| !b.is_empty()) {
        None => None,
        Some(b) => match check_ban(b) {
            Ok(_) => Some(b.to_owned()),
            Err(why) => {
                refused = Some(format!("ban `{}` refused: {why}", clip(b, 80)));
                None
            }
        },
    };
    let tips = a
        .tips
        .into_iter()
        .filter(|t| !t.text.trim().is_empty())
        .map(|t| NewTip { text: t.text.trim().into(), kind: TipKind::from_reply(&t.kind), mechanism: t.mechanism.trim().into() })
        .collect();
    let reflection =
        Reflection { distilled: clip(distilled, MAX_DISTILLED_CHARS), lesson, banned, preferred: a.preferred.trim().to_owned(), tips };
    Ok((reflection, refused))
}

/// The fix's output, the checks' findings and the earlier lessons come from the guest, and the
/// fix may quote it: each is fenced data.
pub fn sections(fence: &Fence, ctx: &ReflectContext) -> Vec<PromptSection> {
    let mut s = vec![PromptSection::fixed("task", format!("Rule: {}\nTitle: {}\nVerdict: {}", ctx.rule_id, ctx.title, ctx.verdict))];
    if !ctx.fix_script.trim().is_empty() {
        s.push(PromptSection::data(fence, "fix_script", 1, "## The fix that was tried", "the fix script that was tried", &ctx.fix_script));
    }
    if !ctx.diagnostics.trim().is_empty() {
        let source = "the fix's output on the machine being hardened, and the checks' findings there";
        s.push(PromptSection::data(fence, "diagnostics", 1, "## Diagnostics", source, &ctx.diagnostics));
    }
    let source = "lessons from earlier attempts, made from the machine's output";
    if let Some(e) = data_bullets(fence, "episodes", 2, "Earlier attempts (oldest first)", source, &ctx.episodes) {
        s.push(e.keep_tail());
    }
    s.push(PromptSection::fixed(
        "ask",
        "Call the tool `reflect` exactly once. Leave banned null unless one narrow pattern must never be used again.".into(),
    ));
    s
}

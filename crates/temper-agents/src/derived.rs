//! The derived tier, between the stock fix and the LLM: a fix built from the rule's own OVAL
//! check and the items the scanner found (`temper_derive`), offered once per rule when the
//! content has no fix or its fix failed. Its scripts go through the same deny-list, rescan,
//! guard, regression set and reboot proof as any fix; a rule it cannot fix says why.
use temper_core::agent::{FixContext, Tried};
use temper_derive::Refusal;
use temper_journal::FixSource;
use temper_journal::Verdict;
use temper_journal::turn::ApplyFix;
use temper_scap::oval::Evidence;

use crate::prompt::{Fence, PromptSection};

/// The plan of an attempt at a derived fix.
pub const DERIVED_PLAN: &str = "derive a fix from the rule's OVAL check and the items the scanner found";

/// The derived fixes for `evidence`, least disruptive first, as the Worker's `apply_fix`.
pub fn candidates(evidence: Option<&Evidence>) -> Result<Vec<ApplyFix>, Refusal> {
    let all = temper_derive::candidates(evidence.ok_or(Refusal::NoEvidence)?)?;
    Ok(all.into_iter().map(|d| ApplyFix { fix_script: d.fix_script, revert_script: d.revert_script, description: d.description }).collect())
}

/// A plan's derived step, derived again from this target's own evidence (`temper_core::agent::Derive`):
/// the first fix it calls for that `tried` has not run, or why there is none.
pub fn again(evidence: Option<&Evidence>, tried: &[Tried]) -> Result<ApplyFix, String> {
    match candidates(evidence) {
        Ok(all) => {
            all.into_iter().find(|f| !Tried::ran(tried, &f.fix_script)).ok_or_else(|| "every fix its evidence calls for was tried".into())
        }
        Err(r) => Err(format!("no derived fix ({}): {r}", r.class())),
    }
}

/// The next derived fix for this attempt: the first candidate not tried on the rule yet (a
/// rejected one was reverted before this attempt). A plan step that was this very script (made
/// on another target) counts as tried. `None` once every candidate was tried.
pub fn untried(ctx: &FixContext) -> Option<Result<ApplyFix, Refusal>> {
    let derived_before = Tried::any(&ctx.tried, FixSource::Derived);
    if !derived_before && let Some(r) = repeats(ctx) {
        return Some(Err(r));
    }
    match candidates(ctx.evidence.as_ref()) {
        Ok(all) => all.into_iter().find(|f| !Tried::ran(&ctx.tried, &f.fix_script)).map(Ok),
        Err(_) if derived_before => None,
        Err(r) => Some(Err(r)),
    }
}

/// The derived fix would only do again what a failed try did (install the package the stock
/// install was stopped installing): refused, saying how that try ended.
fn repeats(ctx: &FixContext) -> Option<Refusal> {
    let evidence = ctx.evidence.as_ref()?;
    ctx.tried.iter().rev().filter(|t| t.verdict != Some(Verdict::Fixed)).find_map(|t| {
        let what = temper_derive::repeats(evidence, &t.fix_script)?;
        let ended = match t.verdict {
            Some(Verdict::Stalled | Verdict::TimedOut) => t.reason.strip_prefix("the fix ").unwrap_or(&t.reason).to_string(),
            Some(v) => format!("ended {v}"),
            None => "did not finish".into(),
        };
        Some(Refusal::Repeats { what, ended })
    })
}

/// What the stock fix did, for a reason: "no stock fix in the content", or how it ended.
pub fn stock_story(ctx: &FixContext) -> String {
    let stock = ctx.stock_fix.as_deref().unwrap_or_default();
    match ctx.tried.iter().rfind(|t| t.source == FixSource::Stock || (!stock.trim().is_empty() && t.fix_script == stock)) {
        Some(t) if t.source == FixSource::Plan => {
            format!("the stock fix failed as a plan step ({})", t.verdict.map_or("unfinished", |v| v.as_str()))
        }
        Some(t) if matches!(t.verdict, Some(Verdict::Stalled | Verdict::TimedOut)) => {
            format!("the stock fix was {}", t.reason.strip_prefix("the fix was ").unwrap_or(&t.reason))
        }
        Some(t) => format!("the stock fix failed ({})", t.verdict.map_or("unfinished", |v| v.as_str())),
        None => "no stock fix in the content".into(),
    }
}

/// The Worker prompt's account of a derived fix that failed: why, and its script (both name
/// what the guest holds: fenced).
pub fn failed_section(fence: &Fence, tried: &[Tried]) -> Option<PromptSection> {
    let t = tried.iter().rfind(|t| t.source == FixSource::Derived)?;
    let why = match t.verdict {
        Some(v) => format!("{v}: {}", t.reason),
        None => "it did not finish".into(),
    };
    let heading = "## The fix temper derived from the check failed\nDo not repeat it unchanged; find what it missed.";
    let text = format!("Why: {why}\n\n{}", t.fix_script.trim());
    Some(PromptSection::data(fence, "derived_fix", 1, heading, "the derived fix that failed, and why (from the guest's findings)", &text))
}

//! Which rules the harness held back, and what the handover does with each: from the skill's
//! `[[held]]` entries, the run's final statuses and waivers, and the host's content.
use chrono::NaiveDate;
use serde::Serialize;
use temper_journal::waiver::{self, Waiver};
use temper_journal::{Rule, RuleStatus, ScanResult};
use temper_scap::Benchmark;
use temper_scap::datastream::short_rule_id;

use crate::skill::{HeldApply, Skill};

/// What the handover does with one held rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "settle", rename_all = "snake_case")]
pub enum Settle {
    /// Its fix runs in the handover: the datastream's (`stock`) or the skill's (`script`).
    Apply { apply: HeldApply },
    /// The harness's own sudo rule is what fails it: the harness removing itself is its fix.
    Removal,
    /// It passed at the run's end: nothing to do.
    Passes,
    /// It stays waived: the skill says its fix would lock the image's admins out, or a
    /// waiver not held for the harness (a site's) waives it.
    StaysWaived { reason: String },
    /// `apply = "stock"` and the content has no fix for it: it stays as it is.
    NoFix,
    /// The harness stays (`--keep-harness`): the rule stays held, its waiver with it.
    Kept,
    /// The skill's `[[last]]` script runs on the image as it leaves, after everything else
    /// (`last.rs`).
    Last,
}

impl Settle {
    pub fn label(&self) -> &'static str {
        match self {
            Self::Apply { apply: HeldApply::Stock } => "its stock fix applied at the handover",
            Self::Apply { .. } => "the skill's fix applied at the handover",
            Self::Removal => "the harness's own sudo rule removed at the handover",
            Self::Passes => "passed before the handover",
            Self::StaysWaived { .. } => "stays waived",
            Self::NoFix => "no stock fix in the content: left as it is",
            Self::Kept => "held still: the harness stays (--keep-harness)",
            Self::Last => "its fix run last, on the image as it leaves",
        }
    }
}

/// Why the handover settles a rule: the skill's `[[held]]` or its `[[last]]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HeldFor {
    /// Held back only because the harness needs it.
    Harness,
    /// Its fix records the image itself, so it runs last (`last.rs`).
    Last,
}

/// One rule the harness held back, or whose fix runs last, as the run left it, and how the
/// handover settles it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeldRule {
    pub rule_id: String,
    pub held_for: HeldFor,
    /// Its status at the run's end (waived, escalated...).
    pub status: RuleStatus,
    pub final_result: Option<ScanResult>,
    /// Why the harness holds it, or why it goes last (the skill's `[[held]]` or `[[last]]` reason).
    pub reason: String,
    #[serde(flatten)]
    pub settle: Settle,
    /// A waiver held for the harness waived it; it ended at the handover, with the harness.
    pub harness_waiver_ended: bool,
    /// The step of the handover script that applies its fix (1-based), when one does.
    pub step: Option<usize>,
}

/// One fix the handover script runs: a stock fix for one rule, or a skill's script for all its
/// entry's rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldStep {
    pub rules: Vec<String>,
    pub apply: HeldApply,
    /// The script, the values it reads set first.
    pub script: String,
}

/// The held rules of a run (those the skill marks, that the run judged) and the steps that fix
/// them, in the run's rule order. `day` judges the waivers; `keep_harness` holds them all still.
pub fn held_rules(
    skill: &Skill,
    rules: &[Rule],
    waivers: &[Waiver],
    day: NaiveDate,
    content: Option<&Benchmark>,
    keep_harness: bool,
) -> (Vec<HeldRule>, Vec<HeldStep>) {
    let mut held = Vec::new();
    let mut steps: Vec<(usize, HeldStep)> = Vec::new();
    for r in rules {
        let short = short_rule_id(&r.rule_id);
        let Some((entry_index, entry)) = skill.held(short) else { continue };
        if !judged(r) {
            continue;
        }
        let waiver = (r.status == RuleStatus::Waived).then(|| waiver::active(waivers, short, day)).flatten();
        let passes = r.status.passes() || r.final_result == Some(ScanResult::Pass);
        let settle = match (waiver, entry.apply) {
            _ if passes => Settle::Passes,
            (Some(w), _) if !w.harness => Settle::StaysWaived { reason: w.justification() },
            _ if keep_harness => Settle::Kept,
            (_, HeldApply::Waived) => Settle::StaysWaived { reason: entry.reason.clone() },
            (_, HeldApply::Removal) => Settle::Removal,
            (_, HeldApply::Stock) => match stock_fix(content, &r.rule_id) {
                Some(fix) => {
                    steps.push((usize::MAX, HeldStep { rules: vec![r.rule_id.clone()], apply: HeldApply::Stock, script: fix.to_string() }));
                    Settle::Apply { apply: HeldApply::Stock }
                }
                _ => Settle::NoFix,
            },
            (_, HeldApply::Script) => {
                match steps.iter_mut().find(|(i, _)| *i == entry_index) {
                    Some((_, step)) => step.rules.push(r.rule_id.clone()),
                    None => {
                        let script = with_values(entry.script.as_deref().unwrap_or_default(), &entry.values, content);
                        steps.push((entry_index, HeldStep { rules: vec![r.rule_id.clone()], apply: HeldApply::Script, script }));
                    }
                }
                Settle::Apply { apply: HeldApply::Script }
            }
        };
        let step = steps.iter().position(|(_, s)| s.rules.contains(&r.rule_id)).filter(|_| matches!(settle, Settle::Apply { .. }));
        let harness_waiver_ended = waiver.is_some_and(|w| w.harness) && !matches!(settle, Settle::Kept | Settle::StaysWaived { .. });
        held.push(HeldRule {
            rule_id: r.rule_id.clone(),
            held_for: HeldFor::Harness,
            status: r.status,
            final_result: r.final_result,
            reason: entry.reason.clone(),
            settle,
            harness_waiver_ended,
            step: step.map(|s| s + 1),
        });
    }
    (held, steps.into_iter().map(|(_, s)| s).collect())
}

/// A rule the run judged: one it did not select, found not applicable or left out of scope has
/// nothing for the handover to settle.
pub(super) fn judged(r: &Rule) -> bool {
    !matches!(r.status, RuleStatus::NotSelected | RuleStatus::NotApplicable | RuleStatus::OutOfScope)
}

/// The rule's stock fix in `content`, resolved for the run's profile, when it has one that is
/// not empty.
pub(super) fn stock_fix<'c>(content: Option<&'c Benchmark>, rule_id: &str) -> Option<&'c str> {
    content.and_then(|c| c.rule(rule_id)).and_then(|c| c.fix.as_ref()).map(|f| f.script.as_str()).filter(|s| !s.trim().is_empty())
}

/// `script` with each value it names set first as a shell variable of that name, as the
/// profile resolves it (single-quoted); a value the content lacks is left unset.
fn with_values(script: &str, values: &[String], content: Option<&Benchmark>) -> String {
    let mut out = String::new();
    for v in values {
        let resolved =
            content.and_then(|c| c.resolved_values.iter().find(|(id, _)| id.as_str() == v || id.ends_with(&format!("_value_{v}"))));
        if let Some((_, value)) = resolved {
            out += &format!("{v}={}\n", super::script::q(value));
        }
    }
    out + script
}

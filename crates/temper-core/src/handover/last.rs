//! The rules whose fix records the image itself (the skill's `[[last]]`, an AIDE database): their
//! scripts run after everything else, on the image as it leaves. One built during the run, or
//! before the harness went, would list what the handover then took away.
use temper_journal::Rule;
use temper_scap::Benchmark;
use temper_scap::datastream::short_rule_id;

use super::held::{judged, stock_fix};
use super::{HeldFor, HeldRule, Settle};
use crate::skill::Skill;

/// One `[[last]]` entry's script, for the rules of the run it covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastStep {
    pub rules: Vec<String>,
    /// POSIX sh (virt-customize runs it with `/bin/sh`): a strict header, then the entry's script.
    pub script: String,
}

/// The run's rules that a `[[last]]` entry names (those it judged), and one step per entry: its
/// script, or each rule's stock fix from `content`. With the harness kept the image is not
/// leaving: nothing runs, and each says so.
pub fn last_rules(skill: &Skill, rules: &[Rule], content: Option<&Benchmark>, keep_harness: bool) -> (Vec<HeldRule>, Vec<LastStep>) {
    let mut out = Vec::new();
    let mut steps: Vec<(usize, LastStep)> = Vec::new();
    for r in rules {
        let Some((index, entry)) = skill.last(short_rule_id(&r.rule_id)) else { continue };
        if !judged(r) {
            continue;
        }
        let settle = match (&entry.script, keep_harness) {
            (_, true) => Settle::Kept,
            (Some(script), false) => {
                match steps.iter_mut().find(|(i, _)| *i == index) {
                    Some((_, step)) => step.rules.push(r.rule_id.clone()),
                    None => steps.push((index, LastStep { rules: vec![r.rule_id.clone()], script: strict(script) })),
                }
                Settle::Last
            }
            (None, false) => match stock_fix(content, &r.rule_id) {
                Some(fix) => {
                    steps.push((usize::MAX, LastStep { rules: vec![r.rule_id.clone()], script: strict(fix) }));
                    Settle::Last
                }
                None => Settle::NoFix,
            },
        };
        let step = steps.iter().position(|(_, s)| s.rules.contains(&r.rule_id));
        out.push(HeldRule {
            rule_id: r.rule_id.clone(),
            held_for: HeldFor::Last,
            status: r.status,
            final_result: r.final_result,
            reason: entry.reason.clone(),
            settle,
            harness_waiver_ended: false,
            step: step.map(|s| s + 1),
        });
    }
    (out, steps.into_iter().map(|(_, s)| s).collect())
}

/// `script` after a strict header.
fn strict(script: &str) -> String {
    format!("#!/bin/sh\nset -eu\nexport LC_ALL=C\n{}\n", script.trim_end())
}

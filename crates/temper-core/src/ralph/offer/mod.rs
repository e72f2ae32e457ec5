//! What the harness offers: the open failing rules it allows now (skips, waivers, deferrals and
//! ordering constraints enforced here, whatever a prompt says), in risk order, then severity;
//! the status a failing rule opens with; a proven plan's steps (`plan.rs`); and the rules likely
//! next, whose evidence a rescan may take ahead (`next.rs`).
mod next;
mod plan;

use std::cmp::Reverse;
use temper_journal::FixSource;
use temper_journal::turn::ApplyFix;

use temper_scap::{Benchmark, Severity};

use crate::agent::{Candidate, Derive};
use crate::ralph::error::LoopResult;
use crate::ralph::settings::{PlanBatches, Settings};
use crate::ralph::trial::Preset;
use crate::scan::Scanner;
use crate::skill::Skill;
use temper_journal::plan::PlannedFix;
use temper_journal::{Rule, RuleStatus, RunJournal};

/// Why a rule is `out_of_scope`.
pub(in crate::ralph) const OUT_OF_SCOPE: &str = "outside this run's scope (--rules): not worked on";

/// The rules on offer, and the skill, content and plan that decide it.
pub(in crate::ralph) struct Offer<'a> {
    journal: RunJournal<'a>,
    skill: &'a Skill,
    content: &'a Benchmark,
    scanner: Scanner,
    /// `--rules`: the run's scope (short or full ids); empty: all.
    scope: Vec<String>,
    max_rules: Option<usize>,
    /// A proven plan's steps, in order.
    plan: Vec<PlannedFix>,
    plan_batches: PlanBatches,
    derive: Option<Derive>,
}

/// What the offer is made of.
pub(in crate::ralph) struct OfferParts<'a> {
    pub journal: RunJournal<'a>,
    pub skill: &'a Skill,
    pub content: &'a Benchmark,
    pub scanner: Scanner,
}

impl<'a> Offer<'a> {
    pub fn new(p: OfferParts<'a>, s: &Settings) -> Self {
        Self {
            journal: p.journal,
            skill: p.skill,
            content: p.content,
            scanner: p.scanner,
            scope: s.rules.clone(),
            max_rules: s.max_rules,
            plan: s.plan.clone(),
            plan_batches: s.plan_batches,
            derive: s.derive,
        }
    }

    /// The profile the run hardens against.
    pub fn profile(&self) -> &str {
        &self.scanner.profile
    }
    pub fn max_rules(&self) -> Option<usize> {
        self.max_rules
    }
}

impl Offer<'_> {
    /// Open failing rules the harness allows now, in risk order, then severity.
    pub async fn candidates(&self) -> LoopResult<Vec<Candidate>> {
        let rules = self.journal.rules().await?;
        let open: Vec<&Rule> = rules.iter().filter(|r| r.status == RuleStatus::Pending && self.in_scope(&r.rule_id)).collect();
        let shorts: Vec<&str> = open.iter().map(|r| temper_scap::short_rule_id(&r.rule_id)).collect();
        let mut out: Vec<((usize, Reverse<Severity>), usize, Candidate)> = Vec::new();
        for (i, r) in open.iter().enumerate() {
            let short = shorts[i];
            if self.skill.held_back(short, &shorts).is_some() {
                continue;
            }
            let content = self.content.rule(&r.rule_id);
            out.push((
                self.rank(r),
                i,
                Candidate {
                    rule_id: r.rule_id.clone(),
                    title: r.title.clone(),
                    severity: r.severity,
                    stig_ids: content.map(|c| c.stig_ids.clone()).unwrap_or_default(),
                    has_stock_fix: content.is_some_and(|c| c.has_fix()),
                    attempts: r.attempts as u32,
                },
            ));
        }
        out.sort_by_key(|(rank, i, _)| (*rank, *i));
        Ok(out.into_iter().map(|(_, _, c)| c).collect())
    }

    /// Where a rule stands in the order the harness offers rules: the skill's risk order, then
    /// severity, the most severe first.
    pub fn rank(&self, r: &Rule) -> (usize, Reverse<Severity>) {
        (self.skill.risk_rank(temper_scap::short_rule_id(&r.rule_id)), Reverse(r.severity))
    }

    /// `--rules` narrows the run; ids may be full or short.
    pub fn in_scope(&self, rule_id: &str) -> bool {
        self.scope.is_empty() || self.scope.iter().any(|r| r == rule_id || r == temper_scap::short_rule_id(rule_id))
    }

    /// The status a failing rule opens with (at the first scan, or once it applies): the
    /// skill's disposition, else `out_of_scope` outside the run's scope, else `pending`.
    pub fn opening(&self, rule_id: &str) -> (RuleStatus, Option<String>) {
        match self.skill.disposition(temper_scap::short_rule_id(rule_id)) {
            Some(d) => (d.disposition.status(), Some(d.reason)),
            None if !self.in_scope(rule_id) => (RuleStatus::OutOfScope, Some(OUT_OF_SCOPE.into())),
            None => (RuleStatus::Pending, None),
        }
    }

    /// The rules still not applicable.
    pub async fn not_applicable(&self) -> LoopResult<Vec<String>> {
        let rules = self.journal.rules().await?;
        Ok(rules.into_iter().filter(|r| r.status == RuleStatus::NotApplicable).map(|r| r.rule_id).collect())
    }

    /// Those a regression check watches: all but the rules that would add an `oscap xccdf eval`
    /// to every check (a rule with no check, say); the final scan covers those.
    pub async fn watched(&self) -> LoopResult<Vec<String>> {
        Ok(self.scanner.without_own_xccdf(&self.not_applicable().await?))
    }

    /// Whether `rule`'s check walks a directory tree at a cost of its own (minutes under TCG).
    pub fn walks(&self, rule: &str) -> bool {
        !self.scanner.costly_walkers(&[rule.to_string()]).is_empty()
    }

    /// The content marks the rule's stock fix as taking effect after a reboot.
    pub fn stock_needs_reboot(&self, rule: &str) -> bool {
        self.content.rule(rule).and_then(|r| r.fix.as_ref()).is_some_and(|f| f.reboot)
    }

    /// The content's own fix for `rule`, as a preset attempt; `None` when it has none, or when it
    /// is `tried` already.
    pub fn stock_fix(&self, rule: &str, tried: &str) -> Option<Preset> {
        let script = self.content.rule(rule)?.fix.as_ref()?.script.clone();
        if script.trim().is_empty() || script == tried {
            return None;
        }
        let fix = ApplyFix { fix_script: script, revert_script: String::new(), description: format!("stock fix for {rule}") };
        Some(Preset { fix, source: FixSource::Stock, replayed: false, remembered: None, derived: None })
    }
}

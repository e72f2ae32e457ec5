//! Step 2: the harness offers the open failing rules (skips, waivers, deferrals and
//! ordering constraints enforced here, whatever a prompt says); the Architect picks one.
use super::steps::{Picker, Reflection};
use std::cmp::Reverse;

use temper_scap::Severity;

use super::{LoopResult, Phase, Ralph};
use crate::agent::{AgentError, ApplyFix, Candidate, FixSource, PickContext};
use crate::journal::{Attempt, AttemptState, Escalation, EscalationCause, EventData, Picked, PickedBy, Replayed, Rule, RuleStatus};

/// The rule to work on and the Architect's plan for it.
#[derive(Debug, Clone)]
pub struct Pick {
    pub rule_id: String,
    pub plan: String,
    /// A fix the harness runs as the first attempt instead of asking the Worker.
    pub preset: Option<Preset>,
}

/// A fix chosen by the harness: a replay (rolled back with a regressed batch), the stock fix's
/// second pass, a plan's step (`planned.rs`) or a remembered fix (`reuse.rs`). It keeps the
/// source it had.
#[derive(Debug, Clone)]
pub struct Preset {
    pub fix: ApplyFix,
    pub source: FixSource,
    pub replayed: bool,
    /// The remembered fix it is, whose try is counted.
    pub remembered: Option<i64>,
    /// A plan's derived step (its number): `fix` is the source's, and the attempt derives its
    /// own from this target's evidence (`planned.rs`).
    pub derived: Option<usize>,
}

/// What a pick leaves the loop with.
#[derive(Debug)]
pub(super) enum Next {
    /// A rule to work on.
    Work(Pick),
    /// Rules were escalated, which may free those held back behind them: the loop offers again
    /// (a plan batch may be due).
    Again,
    /// Nothing is left to pick.
    Done,
}

/// Why a rule is `out_of_scope`.
pub(super) const OUT_OF_SCOPE: &str = "outside this run's scope (--rules): not worked on";

impl Ralph<'_> {
    /// Open failing rules the harness allows now, in risk order, then severity.
    pub(super) async fn candidates(&self) -> LoopResult<Vec<Candidate>> {
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
    pub(super) fn rank(&self, r: &Rule) -> (usize, Reverse<Severity>) {
        (self.skill.risk_rank(temper_scap::short_rule_id(&r.rule_id)), Reverse(r.severity))
    }

    /// `--rules` narrows the run; ids may be full or short.
    pub(super) fn in_scope(&self, rule_id: &str) -> bool {
        let rules = &self.settings.rules;
        rules.is_empty() || rules.iter().any(|r| r == rule_id || r == temper_scap::short_rule_id(rule_id))
    }

    /// The status a failing rule opens with (at the first scan, or once it applies): the
    /// skill's disposition, else `out_of_scope` outside the run's scope, else `pending`.
    pub(super) fn opening(&self, rule_id: &str) -> (RuleStatus, Option<String>) {
        match self.skill.disposition(temper_scap::short_rule_id(rule_id)) {
            Some(d) => (d.disposition.status(), Some(d.reason)),
            None if !self.in_scope(rule_id) => (RuleStatus::OutOfScope, Some(OUT_OF_SCOPE.into())),
            None => (RuleStatus::Pending, None),
        }
    }
}

impl Picker<'_, '_> {
    /// The rule to work on next, with its plan (and a fix the harness chose, if any); `Done` when
    /// nothing is left to pick or `--max-rules` is reached.
    #[tracing::instrument(name = "pick", skip_all)]
    pub(super) async fn run(&mut self) -> LoopResult<Next> {
        self.ralph.phase(Phase::Pick, None, 0).await?;
        // Fixes undone with a regressed batch go first; they were picked once already.
        if let Some(a) = self.ralph.journal.fixes_to_replay().await?.into_iter().find(|a| self.ralph.in_scope(&a.spec.rule_id)) {
            self.ralph.note(Some(&a.spec.rule_id), EventData::Replay(Replayed::RolledBack { attempt: a.n, source: a.spec.source })).await?;
            let fix = ApplyFix { fix_script: a.spec.fix_script, revert_script: a.spec.revert_script, description: a.spec.description };
            let preset = Preset { fix, source: a.spec.source, replayed: true, remembered: None, derived: None };
            return Ok(Next::Work(Pick { rule_id: a.spec.rule_id, plan: a.spec.plan, preset: Some(preset) }));
        }
        // A rule whose last attempt a crash interrupted goes next: it was picked, and the
        // interrupted attempt does not count as a try.
        if let Some((rule_id, plan)) = self.interrupted().await? {
            self.ralph
                .note(Some(&rule_id), EventData::Pick(Picked { plan: plan.clone(), by: PickedBy::Interrupted { interrupted: true } }))
                .await?;
            *self.worked += 1;
            return Ok(Next::Work(Pick { rule_id, plan, preset: None }));
        }
        if self.ralph.settings.max_rules.is_some_and(|m| *self.worked >= m) {
            return Ok(Next::Done);
        }
        let candidates = self.ralph.offered().await?;
        if candidates.is_empty() {
            return Ok(self.ralph.second_pass().await?.map_or(Next::Done, Next::Work));
        }
        if let Some(pick) = self.planned_pick(&candidates).await? {
            *self.worked += 1;
            return Ok(Next::Work(pick));
        }
        if let Some(pick) = self.remembered_pick(&candidates).await? {
            *self.worked += 1;
            return Ok(Next::Work(pick));
        }
        let lessons = self.ralph.journal.memory().lessons(self.ralph.recall()).await?.into_iter().take(10).map(|l| l.distilled).collect();
        let ctx =
            PickContext { skill: self.ralph.skill.name().to_string(), profile: self.ralph.scanner.profile.clone(), candidates, lessons };
        let first = &ctx.candidates[0];
        let pick = match self.ralph.agents.architect.select(&ctx).await {
            Ok(turn) => {
                self.ralph.record_turns(None, Some(&turn.value.rule_id), &turn.records).await?;
                Pick { rule_id: turn.value.rule_id, plan: turn.value.plan, preset: None }
            }
            Err(AgentError::Rejected { reason, records }) => {
                self.ralph.record_turns(None, None, &records).await?;
                let plan = "harness default: the first candidate in risk order".to_string();
                self.ralph
                    .note(Some(&first.rule_id), EventData::ArchitectRejected { reason: reason.clone(), default: Some(plan.clone()) })
                    .await?;
                Pick { rule_id: first.rule_id.clone(), plan, preset: None }
            }
            Err(AgentError::Unavailable { reason, records, .. }) => return Err(self.ralph.paused(None, reason, &records).await),
            Err(AgentError::NoFix(reason)) => {
                // Nothing this agent can try: every open candidate goes to a human, with what
                // really happened to it.
                for c in &ctx.candidates {
                    let why = self.why_no_pick(c, &reason).await?;
                    Reflection::new(self.ralph).escalate(&c.rule_id, &Escalation::new(EscalationCause::NoFix, why)).await?;
                }
                // Rules the skill held back behind those are free now: the loop offers them.
                return Ok(Next::Again);
            }
        };
        // Never trust the pick: it must be one of the offered ids, exactly.
        let pick = if ctx.candidates.iter().any(|c| c.rule_id == pick.rule_id) {
            pick
        } else {
            let reason = format!("picked `{}`, which was not offered", pick.rule_id);
            self.ralph.note(Some(&first.rule_id), EventData::ArchitectRejected { reason: reason.clone(), default: None }).await?;
            Pick { rule_id: first.rule_id.clone(), plan: "harness default: the first candidate in risk order".into(), preset: None }
        };
        self.ralph.note(Some(&pick.rule_id), EventData::Pick(Picked { plan: pick.plan.clone(), by: PickedBy::Architect {} })).await?;
        *self.worked += 1;
        Ok(Next::Work(pick))
    }

    /// The open rule (in scope) whose last attempt was interrupted, with that attempt's plan.
    async fn interrupted(&self) -> LoopResult<Option<(String, String)>> {
        let attempts = self.ralph.journal.attempts().await?;
        // A plan step's interrupted attempt is the plan's to apply again (`plan_tried`).
        let redo =
            |a: &&Attempt| a.state == AttemptState::Interrupted && a.spec.source != FixSource::Plan && self.ralph.in_scope(&a.spec.rule_id);
        for a in attempts.iter().filter(redo) {
            let last = attempts.iter().rfind(|b| b.spec.rule_id == a.spec.rule_id).is_some_and(|b| b.id == a.id);
            let open = self.ralph.journal.rule(&a.spec.rule_id).await?.is_some_and(|r| r.status == RuleStatus::Pending);
            if last && open {
                return Ok(Some((a.spec.rule_id.clone(), a.spec.plan.clone())));
            }
        }
        Ok(None)
    }

    /// The escalation reason for a candidate the Architect could not pick: what its attempts
    /// ended in, or that there is no fix to try at all.
    async fn why_no_pick(&self, c: &Candidate, reason: &str) -> LoopResult<String> {
        let tried: Vec<String> = self
            .ralph
            .journal
            .rule_attempts(&c.rule_id)
            .await?
            .into_iter()
            .filter(Attempt::is_try)
            .map(|a| a.verdict.map_or("unfinished".into(), |v| v.to_string()))
            .collect();
        Ok(match (c.has_stock_fix, tried.is_empty()) {
            (false, _) => format!("no stock fix in the content, and the agent offers no other ({reason})"),
            (true, true) => format!("the stock fix was never tried: {reason}"),
            (true, false) => format!("the stock fix was tried ({}) and the agent has nothing else to try ({reason})", tried.join(", ")),
        })
    }
}

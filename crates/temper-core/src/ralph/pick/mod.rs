//! Step 2: the harness offers the open failing rules (skips, waivers, deferrals and
//! ordering constraints enforced here, whatever a prompt says); the Architect picks one.
mod planned;
mod remembered;
mod second_pass;

use crate::agent::{AgentError, Architect, Candidate, PickContext};
use crate::ralph::books::Books;
use crate::ralph::crew::Crew;
use crate::ralph::error::LoopResult;
use crate::ralph::escalate::Escalator;
use crate::ralph::offer::Offer;
use crate::ralph::state::RunState;
use crate::ralph::trial::{Pick, Preset};
use crate::skill::Skill;
use temper_journal::FixSource;
use temper_journal::turn::ApplyFix;
use temper_journal::{Attempt, AttemptState, Escalation, EscalationCause, EventData, Phase, Picked, PickedBy, Replayed, RuleStatus};

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

/// Step 2: the harness offers, the Architect picks. Of the loop's state it moves only the count
/// of rules worked on (`--max-rules`).
pub(super) struct Picker<'r> {
    books: &'r Books<'r>,
    offer: &'r Offer<'r>,
    architect: &'r dyn Architect,
    escalator: Escalator<'r>,
    skill: &'r Skill,
}

impl<'r> Picker<'r> {
    pub(in crate::ralph) fn new(c: &'r Crew<'r>) -> Self {
        Self { books: &c.books, offer: &c.offer, architect: c.agents.architect, escalator: Escalator::new(c), skill: c.skill }
    }
}

impl Picker<'_> {
    /// The rule to work on next, with its plan (and a fix the harness chose, if any); `Done` when
    /// nothing is left to pick or `--max-rules` is reached.
    #[tracing::instrument(name = "pick", skip_all)]
    pub(in crate::ralph) async fn run(&self, state: &mut RunState) -> LoopResult<Next> {
        self.books.enter(Phase::Pick, None, None).await?;
        // Fixes undone with a regressed batch go first; they were picked once already.
        if let Some(a) = self.books.journal().fixes_to_replay().await?.into_iter().find(|a| self.offer.in_scope(&a.spec.rule_id)) {
            self.books.note(Some(&a.spec.rule_id), EventData::Replay(Replayed::RolledBack { attempt: a.n, source: a.spec.source })).await?;
            let fix = ApplyFix { fix_script: a.spec.fix_script, revert_script: a.spec.revert_script, description: a.spec.description };
            let preset = Preset { fix, source: a.spec.source, replayed: true, remembered: None, derived: None };
            return Ok(Next::Work(Pick { rule_id: a.spec.rule_id, plan: a.spec.plan, preset: Some(preset) }));
        }
        // A rule whose last attempt a crash interrupted goes next: it was picked, and the
        // interrupted attempt does not count as a try.
        if let Some((rule_id, plan)) = self.interrupted().await? {
            self.books
                .note(Some(&rule_id), EventData::Pick(Picked { plan: plan.clone(), by: PickedBy::Interrupted { interrupted: true } }))
                .await?;
            *state.worked_mut() += 1;
            return Ok(Next::Work(Pick { rule_id, plan, preset: None }));
        }
        if self.offer.max_rules().is_some_and(|m| state.worked() >= m) {
            return Ok(Next::Done);
        }
        let candidates = self.offer.offered().await?;
        if candidates.is_empty() {
            return Ok(self.second_pass().await?.map_or(Next::Done, Next::Work));
        }
        if let Some(pick) = self.planned_pick(&candidates).await? {
            *state.worked_mut() += 1;
            return Ok(Next::Work(pick));
        }
        if let Some(pick) = self.remembered_pick(&candidates).await? {
            *state.worked_mut() += 1;
            return Ok(Next::Work(pick));
        }
        let lessons = self.books.journal().memory().lessons(self.books.recall()).await?.into_iter().take(10).map(|l| l.distilled).collect();
        let ctx = PickContext { skill: self.skill.name().to_string(), profile: self.offer.profile().to_string(), candidates, lessons };
        let first = &ctx.candidates[0];
        let pick = match self.architect.select(&ctx).await {
            Ok(turn) => {
                self.books.record_turns(None, Some(&turn.value.rule_id), &turn.records).await?;
                Pick { rule_id: turn.value.rule_id, plan: turn.value.plan, preset: None }
            }
            Err(AgentError::Rejected { reason, records }) => {
                self.books.record_turns(None, None, &records).await?;
                let plan = "harness default: the first candidate in risk order".to_string();
                self.books
                    .note(Some(&first.rule_id), EventData::ArchitectRejected { reason: reason.clone(), default: Some(plan.clone()) })
                    .await?;
                Pick { rule_id: first.rule_id.clone(), plan, preset: None }
            }
            Err(AgentError::Unavailable { reason, records, .. }) => return Err(self.books.paused(None, reason, &records).await),
            Err(AgentError::NoFix(reason)) => {
                // Nothing this agent can try: every open candidate goes to a human, with what
                // really happened to it.
                for c in &ctx.candidates {
                    let why = self.why_no_pick(c, &reason).await?;
                    self.escalator.escalate(&c.rule_id, &Escalation::new(EscalationCause::NoFix, why)).await?;
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
            self.books.note(Some(&first.rule_id), EventData::ArchitectRejected { reason: reason.clone(), default: None }).await?;
            Pick { rule_id: first.rule_id.clone(), plan: "harness default: the first candidate in risk order".into(), preset: None }
        };
        self.books.note(Some(&pick.rule_id), EventData::Pick(Picked { plan: pick.plan.clone(), by: PickedBy::Architect {} })).await?;
        *state.worked_mut() += 1;
        Ok(Next::Work(pick))
    }

    /// The open rule (in scope) whose last attempt was interrupted, with that attempt's plan.
    async fn interrupted(&self) -> LoopResult<Option<(String, String)>> {
        let attempts = self.books.journal().attempts().await?;
        // A plan step's interrupted attempt is the plan's to apply again (`plan_tried`).
        let redo =
            |a: &&Attempt| a.state == AttemptState::Interrupted && a.spec.source != FixSource::Plan && self.offer.in_scope(&a.spec.rule_id);
        for a in attempts.iter().filter(redo) {
            let last = attempts.iter().rfind(|b| b.spec.rule_id == a.spec.rule_id).is_some_and(|b| b.id == a.id);
            let open = self.books.journal().rule(&a.spec.rule_id).await?.is_some_and(|r| r.status == RuleStatus::Pending);
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
            .books
            .journal()
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

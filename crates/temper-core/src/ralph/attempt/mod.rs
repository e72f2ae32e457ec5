//! Steps 3 to 5: the Worker's single `apply_fix`, checked, run, evaluated, then kept or reverted.
//! The attempt's records (`context.rs`), the script run and judged (`apply.rs`), the rule before
//! the fix (`evidence.rs`), the rescan after it (`rescan.rs`), then kept (`keep.rs`) or undone
//! (`revert.rs`). [`PlanBatch`](super::batch::PlanBatch) applies and judges its steps through the
//! same surface.
mod apply;
mod context;
mod evidence;
mod keep;
mod rescan;
mod revert;

use std::time::Instant;
use temper_journal::FixSource;
use temper_journal::turn::ApplyFix;

use temper_scap::Benchmark;

pub(super) use apply::{ScriptRun, diagnostics, evaluation};
pub(super) use context::AttemptOrigin;

use crate::agent::{AgentError, Worker};
use crate::ralph::books::Books;
use crate::ralph::check::RegressionCheck;
use crate::ralph::crew::Crew;
use crate::ralph::error::LoopResult;
use crate::ralph::escalate::Escalator;
use crate::ralph::ledger::Ledger;
use crate::ralph::machine::Machine;
use crate::ralph::offer::Offer;
use crate::ralph::state::RunState;
use crate::ralph::state::Seen;
use crate::ralph::trial::Ended;
use crate::ralph::trial::{Pick, Preset};
use crate::skill::Skill;
use temper_journal::Verdict;
use temper_journal::{AttemptNo, AttemptState, Escalation, EscalationCause, EventData, Phase};

/// Steps 3 to 5, one attempt on one rule: from the proposal to the verdict.
#[derive(Clone, Copy)]
pub(super) struct Attempter<'r> {
    books: &'r Books<'r>,
    machine: &'r Machine<'r>,
    offer: &'r Offer<'r>,
    ledger: Ledger<'r>,
    worker: &'r dyn Worker,
    escalator: Escalator<'r>,
    /// Settles the kept fixes when a guard failure shows late.
    check: RegressionCheck<'r>,
    skill: &'r Skill,
    content: &'r Benchmark,
    /// The harness's SSH user: the deny-list protects its sudo and keys.
    user: &'r str,
    /// The run ends with a reboot proof: a stock fix that needs a reboot is kept for it.
    proof: bool,
    /// The most replays a pending fix's state is rebuilt with instead of its own snapshot.
    replay_budget: std::time::Duration,
}

impl<'r> Attempter<'r> {
    pub(in crate::ralph) fn new(c: &'r Crew<'r>) -> Self {
        Self {
            books: &c.books,
            machine: &c.machine,
            offer: &c.offer,
            ledger: Ledger::new(c),
            worker: c.agents.worker,
            escalator: Escalator::new(c),
            check: RegressionCheck::new(c),
            skill: c.skill,
            content: c.content,
            user: &c.settings.user,
            proof: c.settings.reboot.is_some(),
            replay_budget: c.settings.replay_budget,
        }
    }
}

/// What the Worker came back with.
enum Proposal {
    Fix(ApplyFix, FixSource),
    /// An unusable reply: an attempt with its reason, nothing executed.
    Rejected(String),
    /// Nothing to try: escalate.
    NoFix(String),
}

impl Attempter<'_> {
    /// Attempts one rule until it is fixed or escalated.
    #[tracing::instrument(name = "rule", skip_all, fields(rule = %pick.rule_id))]
    pub(in crate::ralph) async fn work_on(&self, state: &mut RunState, pick: Pick) -> LoopResult<()> {
        let rule = pick.rule_id.clone();
        let mut plan = pick.plan;
        let mut preset = pick.preset;
        loop {
            if let Some(e) = self.escalator.budget_spent(&rule).await? {
                return self.escalator.escalate(&rule, &e).await;
            }
            let started = Instant::now();
            let planned = preset.as_ref().is_some_and(|p| p.source == FixSource::Plan);
            let ended = self.attempt(state, &rule, &plan, preset.take()).await?;
            self.books.journal().add_rule_time(&rule, started.elapsed().as_millis() as i64).await?;
            let Some(ended) = ended else { return Ok(()) };
            if self.kept(ended.verdict) {
                return Ok(());
            }
            self.escalator.reflect().reflect(&ended).await?;
            if planned && let Some(stock) = self.offer.stock_fix(&rule, &ended.fix_script) {
                preset = Some(stock);
                continue;
            }
            if let Some(e) = self.escalator.should_escalate(&rule, &mut plan).await? {
                return self.escalator.escalate(&rule, &e).await;
            }
        }
    }

    /// One attempt. `None` when the rule was escalated instead (no fix to try).
    #[tracing::instrument(name = "attempt", skip_all)]
    async fn attempt(&self, state: &mut RunState, rule: &str, plan: &str, preset: Option<Preset>) -> LoopResult<Option<Ended>> {
        let n = AttemptNo::after(self.books.journal().rule(rule).await?.map_or(0, |r| r.attempts));
        self.books.enter(Phase::Fix, Some(rule), Some(n)).await?;
        let before = self.before(state, rule).await?;
        // Read passing right before its fix: other rules' fixes fixed it, and no fix of its own
        // runs, so none is credited with their work.
        if before.seen.as_ref().is_some_and(Seen::passes) {
            self.ledger.passes_already(state, rule).await?;
            state.look_ahead(before.rest);
            return Ok(None);
        }
        let (evidence, looked_ahead, rest) = (before.evidence(), before.looked_ahead, before.rest);
        let ctx = self.fix_context(rule, plan, n, evidence).await?;
        // A plan's derived step: derived again from this target's evidence, never the source's.
        let preset = match preset {
            Some(p) if let Some(step) = p.derived => match self.offer.derive_step(step, &ctx) {
                Ok(fix) => Some(Preset { fix, ..p }),
                Err(why) => {
                    let trial =
                        self.start_attempt(state, &ctx, &p.fix, AttemptOrigin { source: p.source, replayed: false, looked_ahead }).await?;
                    return self.unexecuted(trial, Verdict::Refused, why, &p.fix.fix_script).await;
                }
            },
            p => p,
        };
        let replayed = preset.as_ref().is_some_and(|p| p.replayed);
        let remembered = preset.as_ref().and_then(|p| p.remembered);
        let worker = match preset {
            Some(p) => Ok(crate::agent::Turn::bare((p.fix, p.source))),
            None => self.worker.propose(&ctx).await,
        };
        let (proposal, records) = match worker {
            Ok(t) => (Proposal::Fix(t.value.0, t.value.1), t.records),
            Err(AgentError::Rejected { reason, records }) => (Proposal::Rejected(reason), records),
            Err(AgentError::NoFix(reason)) => (Proposal::NoFix(reason), Vec::new()),
            Err(AgentError::Unavailable { reason, records, .. }) => return Err(self.books.paused(Some(rule), reason, &records).await),
        };
        let (fix, source) = match proposal {
            Proposal::Fix(fix, source) => (fix, source),
            Proposal::NoFix(reason) => {
                self.escalator.escalate(rule, &Escalation::new(EscalationCause::NoFix, format!("no fix to try: {reason}"))).await?;
                let ahead = self.ahead_past(state, rest).await?;
                state.look_ahead(ahead);
                return Ok(None);
            }
            Proposal::Rejected(reason) => {
                let empty = ApplyFix { fix_script: String::new(), revert_script: String::new(), description: String::new() };
                let origin = AttemptOrigin { source: FixSource::Rejected, replayed: false, looked_ahead };
                let trial = self.start_attempt(state, &ctx, &empty, origin).await?;
                self.books.record_turns(Some(trial.id), Some(rule), &records).await?;
                return self.unexecuted(trial, Verdict::ApplyFailed, format!("the Worker's reply was rejected: {reason}"), "").await;
            }
        };
        let trial = self.start_attempt(state, &ctx, &fix, AttemptOrigin { source, replayed, looked_ahead }).await?;
        let id = trial.id;
        self.books.record_turns(Some(id), Some(rule), &records).await?;

        // Step 3: the deny-list, before anything runs.
        let bans = self.books.journal().memory().bans(self.books.recall()).await?;
        self.note_shared_bans(state, rule, &bans).await?;
        let deny = self.deny_list(&bans).await?;
        for script in [&fix.fix_script, &fix.revert_script] {
            if let Err(refusal) = deny.check(script) {
                let reason = refusal.to_string();
                if let Some(id) = remembered {
                    self.books.count_remembered(id, Verdict::Refused).await?;
                }
                return self.unexecuted(trial, Verdict::Refused, reason, &fix.fix_script).await;
            }
        }
        let applied = self.apply(&fix).await;
        self.books.journal().set_attempt_state(id, AttemptState::Applied).await?;

        // Step 4: evaluate.
        self.books.enter(Phase::Evaluate, Some(rule), Some(n)).await?;
        let evaluated = Instant::now();
        let rescan = self.rescan_of(state, rule).await?;
        // The content's own fix: stock, or a plan's step that is the stock fix.
        let stock = ctx.stock_fix.as_deref().is_some_and(|f| source == FixSource::Stock || f == fix.fix_script);
        let (mut e, scan) = self.evaluate(state, &rescan, stock, &applied).await?;
        e.findings.evaluate_ms = Some(evaluated.elapsed().as_millis() as i64);
        let (verdict, reason) = (e.verdict, e.verdict_reason.clone());
        self.books.note(Some(rule), EventData::Verdict { attempt: trial.n, verdict, reason: reason.clone() }).await?;
        if let Some(id) = remembered {
            self.books.count_remembered(id, verdict).await?;
        }

        // Step 5: keep or revert.
        if self.kept(verdict) {
            self.keep(state, id, rule, &e).await?;
            if let Some(scan) = &scan {
                self.take_up(state, &rescan, scan).await?;
            }
        } else {
            e.findings.diagnostics = Some(self.diagnostics(&e).await);
            self.books.enter(Phase::Revert, Some(rule), Some(n)).await?;
            let (method, ms) = self.revert(state, rule, &fix, e.findings.access_ok == Some(true)).await?;
            (e.revert_method, e.findings.revert_ms) = (method, Some(ms));
            if guarded(verdict)
                && let Some(broken) = self.machine.guard_fails_now().await
            {
                // The guard fails without this fix too: the damage came before it (a kept fix's,
                // showing late), so this attempt does not count, and the kept fixes are checked.
                e.verdict = Verdict::Interrupted;
                e.verdict_reason = format!(
                    "the guard failed after this fix ({reason}), and again once it was undone ({}): the damage came before \
                     it; the fixes kept before it are bisected for it, and this rule is tried again",
                    broken.1
                );
                self.books.journal().finish_attempt(id, &e).await?;
                self.books.journal().set_aside_attempts(&[id], &e.verdict_reason).await?;
                let set_aside = EventData::AttemptInterrupted { attempt: trial.n.unwrap_or(n), state: AttemptState::Done };
                self.books.note(Some(rule), set_aside).await?;
                self.check.after_guard_failure(state, broken).await?;
                return Ok(None);
            }
            self.books.journal().finish_attempt(id, &e).await?;
        }
        Ok(Some(Ended { trial, verdict, reason, fix_script: fix.fix_script, diagnostics: e.findings.diagnostics.unwrap_or_default() }))
    }
}

/// A verdict the guard gave: the guest's state, not the rule's, was found wrong.
fn guarded(verdict: Verdict) -> bool {
    matches!(verdict, Verdict::Lockout | Verdict::HealthBroken | Verdict::GuestDown)
}

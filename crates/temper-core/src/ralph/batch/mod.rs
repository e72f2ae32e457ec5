//! A proven plan's steps in batches (`temper run --plan`). The next steps in the plan's order (up
//! to [`PlanBatches`](crate::ralph::settings::PlanBatches): 32, doubled after each clean batch, up to
//! 64) are applied together and checked once: one rescan
//! of their rules with the regression set and the rules not applicable so far, beside the lockout
//! guard and the health check. A clean batch is kept with one snapshot, the new checkpoint. A
//! failing one is bisected over its prefixes, each applied again on the restored checkpoint, to
//! the first step the checks fail with: that step gets its verdict and its rule goes to the
//! normal loop; the other steps are set aside and applied again in the next batch.
//!
//! While a batch applies its steps it takes a stepping stone each time `stone_after` of script
//! time ran since the checkpoint or the last stone: kept with a clean batch, so that the reboot
//! proof's rebuild replays no more than that. A failing batch's probes start from its newest
//! stone within their prefix, then the stones are dropped.
//!
//! A clean batch's check also takes the evidence of the rules the next batch is likely to take
//! (`Ahead`): the guest stays as the check saw it until that batch starts, so the next batch
//! rescans only the rules it lacks.
mod check;

use std::collections::BTreeMap;

use temper_scap::oval::Evidence;

use crate::policy::DenyList;
use crate::ralph::attempt::{AttemptOrigin, Attempter};
use crate::ralph::books::Books;
use crate::ralph::check::RegressionCheck;
use crate::ralph::crew::Crew;
use crate::ralph::error::LoopResult;
use crate::ralph::escalate::Escalator;
use crate::ralph::ledger::Ledger;
use crate::ralph::machine::Machine;
use crate::ralph::offer::Offer;
use crate::ralph::state::Seen;
use crate::ralph::state::{Ahead, RunState};
use crate::ralph::trial::Trial;
use temper_journal::FixSource;
use temper_journal::Verdict;
use temper_journal::plan::PlannedFix;
use temper_journal::{AttemptNo, EventData, Phase, Picked, PickedBy};

/// A proven plan's batch: its due steps applied together, checked once, kept together or
/// bisected. It applies and judges each step through the [`Attempter`].
#[derive(Clone, Copy)]
pub(super) struct PlanBatch<'r> {
    books: &'r Books<'r>,
    machine: &'r Machine<'r>,
    offer: &'r Offer<'r>,
    ledger: Ledger<'r>,
    attempt: Attempter<'r>,
    escalator: Escalator<'r>,
    /// Settles fixes kept since the checkpoint before a batch starts.
    check: RegressionCheck<'r>,
    /// The run ends with a reboot proof: a step that takes effect at boot is kept for it.
    proof: bool,
    /// Fix-script time after which a batch takes a stepping stone (`PlanBatches::stone_after`).
    stone_after: std::time::Duration,
}

impl<'r> PlanBatch<'r> {
    pub(in crate::ralph) fn new(c: &'r Crew<'r>) -> Self {
        Self {
            books: &c.books,
            machine: &c.machine,
            offer: &c.offer,
            ledger: Ledger::new(c),
            attempt: Attempter::new(c),
            escalator: Escalator::new(c),
            check: RegressionCheck::new(c),
            proof: c.settings.reboot.is_some(),
            stone_after: c.settings.plan_batches.stone_after,
        }
    }
}

/// A step of the batch, with its attempt.
pub(super) struct Step {
    pub fix: PlannedFix,
    pub trial: Trial,
}

impl PlanBatch<'_> {
    /// Applies the next batch of plan steps when two or more are due; false when fewer are (a
    /// single step goes the way any pick goes, `pick/planned.rs`), or while the batch waits for the
    /// loop's other rules (`Tail`).
    #[tracing::instrument(name = "plan_batch", skip_all)]
    pub(in crate::ralph) async fn run(&self, state: &mut RunState) -> LoopResult<bool> {
        let clean = self.offer.clean_plan_batches().await?;
        let tail = self.offer.plan_tail(self.room(state, clean)).await?;
        if tail.waits || tail.due.len() < 2 {
            return Ok(false);
        }
        let due = tail.due;
        if !state.pending().is_empty() {
            // A batch starts from a checkpoint: fixes kept since wait for their check first.
            self.check.run(state).await?;
            return Ok(true);
        }
        self.books.enter(Phase::PlanBatch, Some(&due[0].rule), None).await?;
        *state.worked_mut() += due.len();
        let ahead = state.take_ahead().and_then(|a| a.at(state.head()));
        let mut before = self.before_all(&due, ahead).await;
        let bans = self.books.journal().memory().bans(self.books.recall()).await?;
        self.attempt.note_shared_bans(state, &due[0].rule, &bans).await?;
        let deny = self.attempt.deny_list(&bans).await?;
        let watched = self.offer.watched().await?;
        // The next batch's room, should this one be clean.
        let next = self.next_evidence(&tail.after, &watched, self.room(state, clean + 1));
        let mut steps = Vec::new();
        for fix in due {
            let (seen, looked_ahead) = before.remove(&fix.rule).unwrap_or((None, false));
            // Read passing before the batch: other rules' fixes fixed it, and its step, which
            // would do nothing here, is not applied.
            if seen.as_ref().is_some_and(Seen::passes) {
                self.ledger.passes_already(state, &fix.rule).await?;
                continue;
            }
            steps.extend(self.start_step(state, fix, (seen.and_then(|s| s.evidence), looked_ahead), &deny).await?);
        }
        if steps.is_empty() {
            return Ok(true);
        }
        let checked = self.apply_and_check(state, &steps, &watched, &next).await?;
        if checked.clean() {
            self.keep_batch(state, &steps, &checked, &watched).await?;
            let ahead = checked.scan.as_ref().map(|s| Ahead::of(state.head(), s, &next));
            state.look_ahead(ahead);
            return Ok(true);
        }
        self.bisect_batch(state, &steps, checked).await.map(|()| true)
    }

    /// How many steps a batch may take after `clean` clean batches in a row (`Offer::plan_room`),
    /// within what `--max-rules` leaves.
    fn room(&self, state: &RunState, clean: usize) -> usize {
        let room = self.offer.plan_room(clean);
        self.offer.max_rules().map_or(room, |m| m.saturating_sub(state.worked()).min(room))
    }

    /// The rules whose evidence the batch's check takes for the next batch: the first `room` open
    /// steps `after` it, and those of rules not applicable so far (`watched`, rescanned anyway),
    /// which the batch may make applicable. Cheap ones only, as for [`Self::before_all`].
    fn next_evidence(&self, after: &[PlannedFix], watched: &[String], room: usize) -> Vec<String> {
        let next = after.iter().take(room).map(|s| s.rule.clone());
        let applicable_next = self.offer.plan().iter().filter(|s| watched.contains(&s.rule)).map(|s| s.rule.clone());
        self.machine.scanner().cheap_evidence(&next.chain(applicable_next).collect::<Vec<_>>())
    }

    /// The batch's rules as the scanner finds them before any step runs (their results, and
    /// their evidence with the OVAL engine), each with whether the last batch's check looked ahead
    /// to it (`ahead`, valid at the guest's head); the rest in one rescan. Tree walkers are left
    /// out (each takes minutes under TCG, and the batch's check walks them again), as are rules
    /// the OVAL engine sends to an `oscap xccdf eval` of their own (it gives no evidence): their
    /// steps go without.
    async fn before_all(&self, due: &[PlannedFix], mut ahead: Option<Ahead>) -> BTreeMap<String, (Option<Seen>, bool)> {
        let mut out = BTreeMap::new();
        let mut missing = Vec::new();
        for s in due {
            match ahead.as_mut().and_then(|a| a.take(&s.rule)) {
                Some(seen) => {
                    out.insert(s.rule.clone(), (Some(seen), true));
                }
                None => missing.push(s.rule.clone()),
            }
        }
        let rules = self.machine.scanner().cheap_evidence(&missing);
        if rules.is_empty() {
            return out;
        }
        match self.machine.scan(&rules).await {
            Ok(scan) => out.extend(rules.iter().map(|r| (r.clone(), (Some(Seen::of(&scan, r)), false)))),
            Err(e) => tracing::warn!(error = %e, "no evidence before the plan batch"),
        }
        out
    }

    /// Records the step's pick and attempt; `None` when the deny-list refuses its scripts (the
    /// attempt is closed as refused, and its rule goes to the normal loop).
    async fn start_step(
        &self,
        state: &RunState,
        fix: PlannedFix,
        before: (Option<Evidence>, bool),
        deny: &DenyList,
    ) -> LoopResult<Option<Step>> {
        let (evidence, looked_ahead) = before;
        let plan = format!("step {} of the proven plan, in a batch", fix.n);
        self.books.note(Some(&fix.rule), EventData::Pick(Picked { plan: plan.clone(), by: PickedBy::Plan { plan_step: fix.n } })).await?;
        let n = AttemptNo::after(self.books.journal().rule(&fix.rule).await?.map_or(0, |r| r.attempts));
        let ctx = self.attempt.fix_context(&fix.rule, &plan, n, evidence).await?;
        // A derived step: derived again from this target's evidence, never the source's.
        let mut fix = fix;
        let derived = fix.derived.then(|| self.offer.derive_step(fix.n, &ctx));
        if let Some(Ok(again)) = &derived {
            fix.fix = again.clone();
        }
        let origin = AttemptOrigin { source: FixSource::Plan, replayed: false, looked_ahead };
        let trial = self.attempt.start_attempt(state, &ctx, &fix.fix, origin).await?;
        if let Some(Err(why)) = derived {
            if let Some(ended) = self.attempt.unexecuted(trial, Verdict::Refused, why, &fix.fix.fix_script).await? {
                self.escalator.reflect().reflect(&ended).await?;
            }
            return Ok(None);
        }
        for script in [&fix.fix.fix_script, &fix.fix.revert_script] {
            if let Err(refusal) = deny.check(script) {
                if let Some(ended) = self.attempt.unexecuted(trial, Verdict::Refused, refusal.to_string(), &fix.fix.fix_script).await? {
                    self.escalator.reflect().reflect(&ended).await?;
                }
                return Ok(None);
            }
        }
        Ok(Some(Step { fix, trial }))
    }
}

//! Step 4, the regression set, for large profiles: kept fixes wait in a batch, each with its own
//! snapshot, for one check: the regression set rescanned with the rules not applicable so far,
//! beside the lockout guard and the health check. Each fix was proven on its own already (its
//! rule read `pass` right after it, beside the guard); the check proves the batch broke nothing
//! since. A clean batch makes its newest snapshot the checkpoint. A check that finds a rule that
//! passed not reading `pass`, the guard failing or the scan unable to run is bisected over the
//! batch's snapshots, probing only what went wrong: the first fix after which it goes wrong is
//! blamed (`regression`, `scan_broken`, `health_broken`, `lockout`, `guest_down`), and the fixes
//! kept after it are replayed. A check that cannot run is blamed, never a stop: only one that
//! fails at the checkpoint too, where it held before, has no fix to blame.
mod cadence;
mod findings;

use std::time::{Duration, Instant};

use temper_scap::Outcome;

pub(in crate::ralph) use cadence::batch_size;
use cadence::retimed;
use findings::{CheckFindings, blame, expected};

use crate::ralph::books::Books;
use crate::ralph::crew::Crew;
use crate::ralph::error::{LoopError, LoopResult};
use crate::ralph::escalate::Escalator;
use crate::ralph::ledger::Ledger;
use crate::ralph::machine::Machine;
use crate::ralph::offer::Offer;
use crate::ralph::proof::RebootProver;
use crate::ralph::replay::stand_at;
use crate::ralph::retire::retire;
use crate::ralph::state::{Ahead, Kept, RunState};
use crate::ralph::trial::{Ended, Trial};
use temper_journal::Verdict;
use temper_journal::{AttemptId, EventData, Phase, Regressed};

/// One regression check over the kept fixes pending, and its bisection when it finds one.
#[derive(Clone, Copy)]
pub(super) struct RegressionCheck<'r> {
    books: &'r Books<'r>,
    machine: &'r Machine<'r>,
    offer: &'r Offer<'r>,
    ledger: Ledger<'r>,
    escalator: Escalator<'r>,
    /// Bisects the fixes kept since the last booted checkpoint when the guard fails there too.
    proof: RebootProver<'r>,
}

impl<'r> RegressionCheck<'r> {
    pub(in crate::ralph) fn new(c: &'r Crew<'r>) -> Self {
        Self {
            books: &c.books,
            machine: &c.machine,
            offer: &c.offer,
            ledger: Ledger::new(c),
            escalator: Escalator::new(c),
            proof: RebootProver::new(c),
        }
    }
}

impl RegressionCheck<'_> {
    /// Rescans the regression set once for the whole batch, with the rules not applicable so far
    /// (`ledger.rs`), beside the guard; re-derives the cadence from the check's time (unless
    /// rules apply now); promotes the batch (then takes up the rules that apply now), or bisects it.
    #[tracing::instrument(name = "regression_check", skip_all, fields(fixes = state.pending().len()))]
    pub(in crate::ralph) async fn run(&self, state: &mut RunState) -> LoopResult<()> {
        if state.pending().is_empty() {
            return Ok(());
        }
        self.books.enter(Phase::Regression, None, None).await?;
        let watched = self.offer.watched().await?;
        let mut rules: Vec<String> = state.regression_set().iter().chain(&watched).cloned().collect();
        // The next stock fixes' result and evidence before their fixes, for their attempts.
        let next = self.offer.next_stock(state.regression_every() as usize, &rules).await?;
        rules.extend(next.iter().cloned());
        let started = Instant::now();
        let (guard, scan) = self.machine.check_now(&rules).await;
        let took = started.elapsed();
        let found = CheckFindings::read(Some(guard), &scan, state.regression_set());
        let scan = scan.ok().flatten();
        // Rules that apply now had their checks run once (a tree walk, say): not the set's cost.
        let applies = scan.as_ref().is_some_and(|s| watched.iter().any(|r| s.outcome(r).is_some_and(|o| o != Outcome::NotApplicable)));
        let every = if applies || scan.is_none() { state.regression_every() } else { self.retime(state, took).await? };
        let fixes = state.pending().len();
        let stalls = scan.as_ref().map_or(0, |s| s.stalls);
        let (set, watched_n, secs) = (state.regression_set().len(), watched.len(), took.as_secs_f64());
        let failed = found.rule_ids();
        let check =
            EventData::RegressionCheck { fixes, rules: set, watched: watched_n, failed, secs, stalls, every, problem: found.problem() };
        self.books.note(None, check).await?;
        if !found.clean() {
            return self.bisect(state, found, &rules).await;
        }
        self.promote(state).await?;
        if let Some(scan) = scan {
            state.look_ahead(Some(Ahead::of(state.head(), &scan, &next)).filter(|a| !a.is_empty()));
            self.ledger.now_applicable(state, &scan, &watched).await?;
        }
        Ok(())
    }

    /// After a fix's guard failed, and failed again once the fix was undone: the damage is a
    /// kept fix's. With fixes pending, the batch is checked now (its guard fails at the head, so
    /// it is bisected over its snapshots); with none, the fixes kept since the last booted
    /// checkpoint are bisected by replays (`RebootProver::guard_fails`).
    pub(in crate::ralph) async fn after_guard_failure(&self, state: &mut RunState, broken: (Verdict, String)) -> LoopResult<()> {
        if state.pending().is_empty() {
            return self.proof.guard_fails(state, broken).await;
        }
        self.run(state).await
    }

    /// The cadence after a check that took `took`, when preflight measured it: the set grows as
    /// fixes pass, and a rule that joins it may be slow, so the batch follows the set's cost.
    async fn retime(&self, state: &mut RunState, took: Duration) -> LoopResult<u32> {
        if let Some(every) = retimed(state, took)
            && every != state.regression_every()
        {
            state.set_regression_every(every);
            self.books.journal().set_regression_every(every).await?;
        }
        Ok(state.regression_every())
    }

    /// The batch is clean: its head becomes the checkpoint (its snapshot taken now, the guest
    /// standing there, when it went without), the old checkpoint a stepping stone (`retire.rs`);
    /// the batch's older snapshots go.
    async fn promote(&self, state: &mut RunState) -> LoopResult<()> {
        let head = state.head().to_string();
        if let Some(last) = state.pending().last().filter(|k| !k.taken) {
            self.machine.take_snapshot(&head, &format!("{} fixed, its batch checked", last.rule)).await?;
        }
        let confirmed = self.books.journal().pending_fixes().await?;
        self.books.journal().confirm_fixes(&head).await?;
        self.books.remember(confirmed).await?;
        let (old, pending) = state.promote();
        let fixes = pending.len();
        for s in pending.iter().filter_map(Kept::taken_snapshot) {
            if s != head {
                self.machine.drop_snapshot(s).await?;
            }
        }
        if old != head {
            let newer: Vec<AttemptId> = pending.iter().map(|k| k.attempt).collect();
            retire(self.books, self.machine, state, old.clone(), &newer).await?;
        }
        self.books.note(None, EventData::Checkpoint { snapshot: head, replaced: old, fixes: Some(fixes) }).await
    }

    /// Finds the first fix after which what the check `found` goes wrong, by binary search over
    /// the batch's snapshots (s0 is the checkpoint, si the snapshot after pending fix i), probing
    /// only that: the rules that do not pass, the guard, or the whole scan of `scanned`.
    async fn bisect(&self, state: &mut RunState, mut found: CheckFindings, scanned: &[String]) -> LoopResult<()> {
        // At the checkpoint the set passed and access and health held. A rule that fails there
        // too was not broken by this batch (unstable); a guard or a scan that fails there too is
        // not the batch's doing either, and no fix is there to blame.
        let at_checkpoint = self.probe(state, 0, &found, scanned).await?;
        if let Some(broken) = at_checkpoint.guard.clone() {
            // Damage from a fix kept before the batch, showing late: those are bisected.
            return self.proof.guard_fails(state, broken).await;
        }
        if let Some(problem) = at_checkpoint.problem() {
            return Err(LoopError::CheckpointFails { checkpoint: state.checkpoint().to_string(), problem });
        }
        let unstable = at_checkpoint.rule_ids();
        for r in &unstable {
            state.unwatch(r);
            self.ledger.mark_unstable(r, "failed the batch check, and fails again at the checkpoint where it passed").await?;
        }
        found.rules.retain(|(r, _)| !unstable.contains(r));
        if found.clean() {
            stand_at(self.books, self.machine, state.way_to_head()).await?;
            return self.promote(state).await;
        }
        let (mut lo, mut hi, mut probes) = (1, state.pending().len(), 0);
        let mut at_hi = found.clone();
        while lo < hi {
            let mid = (lo + hi) / 2;
            probes += 1;
            let at_mid = self.probe(state, mid, &found, scanned).await?;
            if at_mid.clean() {
                lo = mid + 1;
            } else {
                (hi, at_hi) = (mid, at_mid);
            }
        }
        let (culprit, dropped) = state.blame(lo);
        stand_at(self.books, self.machine, state.way_to_head()).await?;
        self.settle(state, &culprit, &dropped, &at_hi, probes).await
    }

    /// The guest at kept state `i` of the batch (0: the checkpoint), checked for what `wanted`
    /// found at the head: the guard when it failed there; the whole scan of `scanned` when it
    /// could not run there; else only the rules that did not pass there and are expected to pass
    /// at `i`.
    async fn probe(&self, state: &RunState, i: usize, wanted: &CheckFindings, scanned: &[String]) -> LoopResult<CheckFindings> {
        stand_at(self.books, self.machine, state.way_to(i)).await?;
        let expected = expected(state, &wanted.rule_ids(), i);
        let rules = if wanted.scan.is_some() { scanned.to_vec() } else { expected.clone() };
        let (guard, scan) = match wanted.guard {
            Some(_) => {
                let (g, s) = self.machine.check_now(&rules).await;
                (Some(g), s)
            }
            None => (None, self.machine.scan_some(&rules).await),
        };
        Ok(CheckFindings::read(guard, &scan, &expected))
    }

    /// Records the culprit and the dropped fixes, deletes their snapshots, reflects, and maybe
    /// escalates. The dropped fixes' rules reopen; `pick` replays them first.
    async fn settle(&self, state: &mut RunState, culprit: &Kept, dropped: &[Kept], found: &CheckFindings, probes: usize) -> LoopResult<()> {
        let row = self.books.journal().pending_fixes().await?.into_iter().find(|a| a.id == culprit.attempt);
        let trial =
            row.as_ref().map_or_else(|| Trial { id: culprit.attempt, n: None, rule: culprit.rule.clone(), plan: String::new() }, Trial::of);
        let fix_script = row.map(|a| a.spec.fix_script).unwrap_or_default();
        let blame = blame(culprit, found);
        let (reason, diagnostics) = (blame.reason.clone(), blame.diagnostics.clone());
        self.books.journal().roll_back_fixes(&blame, &dropped.iter().map(|k| k.attempt).collect::<Vec<_>>()).await?;
        for k in std::iter::once(culprit).chain(dropped) {
            state.unwatch(&k.rule);
            if let Some(s) = k.taken_snapshot() {
                self.machine.drop_snapshot(s).await?;
            }
        }
        let replay = dropped.iter().map(|k| k.rule.clone()).collect();
        let found = Regressed::Bisected { culprit: culprit.rule.clone(), regressions: found.rule_ids(), probes, replay };
        self.books.note(Some(&culprit.rule), EventData::RegressionFound(found)).await?;

        let ended = Ended { trial, verdict: blame.verdict, reason, fix_script, diagnostics };
        self.escalator.reflect_or_escalate(&ended).await
    }
}

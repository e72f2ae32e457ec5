//! Step 1: restore the checkpoint, check access and health, scan the whole profile.
mod lost;

use std::time::Duration;
use temper_journal::Engine;

use temper_scap::{Benchmark, Outcome};

use crate::checks::GuardFailure;
use crate::ralph::books::Books;
use crate::ralph::crew::Crew;
use crate::ralph::error::{LoopError, LoopResult};
use crate::ralph::ledger::Ledger;
use crate::ralph::machine::Machine;
use crate::ralph::offer::Offer;
use crate::ralph::proof::RebootProver;
use crate::ralph::state::{Ahead, Kept, RunState};
use crate::scan::Scan;
use crate::verdict::Guard;
use temper_journal::Verdict;
use temper_journal::{Booted, Cadence, Event, EventData, EventKind, NewRule, Phase, RescanTimes, RuleStatus, RunId, ScanKind, ScanResult};

/// Step 1, before the loop: the checkpoint restored (or rebuilt), access checked, the first scan
/// or the state a resumed run left, and the regression set's cadence.
pub(super) struct Preflight<'r> {
    books: &'r Books<'r>,
    machine: &'r Machine<'r>,
    offer: &'r Offer<'r>,
    ledger: Ledger<'r>,
    proof: RebootProver<'r>,
    content: &'r Benchmark,
    /// Fixes per regression check when set (`Settings::regression_every`).
    every: Option<u32>,
    /// The plan's cadence, taken instead of measuring one.
    plan_cadence: Option<u32>,
}

impl<'r> Preflight<'r> {
    pub(in crate::ralph) fn new(c: &'r Crew<'r>) -> Self {
        Self {
            books: &c.books,
            machine: &c.machine,
            offer: &c.offer,
            ledger: Ledger::new(c),
            proof: RebootProver::new(c),
            content: c.content,
            every: c.settings.regression_every,
            plan_cadence: c.settings.plan_cadence,
        }
    }
}

impl Preflight<'_> {
    /// The state the loop starts from: a new run's first scan, or what a resumed run left.
    #[tracing::instrument(name = "preflight", skip_all)]
    pub(in crate::ralph) async fn run(&self) -> LoopResult<RunState> {
        self.books.enter(Phase::Preflight, None, None).await?;
        let row = self.books.journal().row().await?;
        if !self.machine.hv().snapshot_exists(&row.baseline).await? {
            return Err(LoopError::NoBaseline(row.baseline.clone()));
        }
        // A crash may have left an attempt half-done: close it, never run it again. It does not
        // count as a try: its rule is picked again first.
        for a in self.books.journal().interrupt_open_attempts().await? {
            self.books.note(Some(&a.spec.rule_id), EventData::AttemptInterrupted { attempt: a.n, state: a.state }).await?;
        }
        // Back to the newest kept state: the last checkpoint (the baseline at first), or a
        // pending fix's snapshot after it; rebuilt when it is gone (`lost.rs`).
        let (checkpoint, prefix) = (row.checkpoint.clone(), checkpoint_prefix(self.books.id(), &row.started_at));
        let pending: Vec<Kept> = self
            .books
            .journal()
            .pending_fixes()
            .await?
            .into_iter()
            .map(|a| Kept {
                snapshot: a.snapshot.clone().unwrap_or_else(|| Kept::name(&prefix, a.id)),
                taken: a.snapshot.is_some(),
                script: Kept::script_time(&a.findings),
                attempt: a.id,
                rule: a.spec.rule_id,
            })
            .collect();
        let events = self.books.journal().events(None).await?;
        let booted = self.booted(&events, &row.baseline).await?;
        let checkpoint = self.restore_head(&checkpoint, &pending, &booted, &prefix).await?;
        let shared_bans = events
            .iter()
            .filter_map(|e| match e.data {
                EventData::BanShared { ban, .. } => Some(ban),
                _ => None,
            })
            .collect();
        let mut keep: Vec<&str> = pending.iter().filter_map(Kept::taken_snapshot).collect();
        keep.extend([checkpoint.as_str(), booted.snapshot.as_str()]);
        for name in self.machine.drop_stale(&prefix, &keep).await? {
            self.books.note(None, EventData::CheckpointDropped { snapshot: name }).await?;
        }

        // A guard that fails where fixes were kept since the last booted checkpoint is a kept
        // fix's damage, showing late (a resume after the run stopped on it): those fixes are
        // bisected below, once the state is built, and the run goes on. With none kept since, the
        // guest was broken before any change of this run's: nothing to blame, and no run.
        let guard = self.machine.guard().await;
        let kept_since = self.books.journal().attempts().await?.iter().any(|a| Some(a.id) > booted.through && a.in_force());
        let broken = match guard {
            Ok(h) if h.ok => None,
            g if kept_since => Guard::from(g).failure(),
            Ok(h) => return Err(LoopError::Preflight(format!("the health check fails before any change: {}", h.output))),
            Err(GuardFailure::Lockout(d)) => return Err(LoopError::Preflight(format!("the harness user has no working sudo: {d}"))),
            Err(GuardFailure::HealthError(e)) => return Err(LoopError::Preflight(format!("the health check could not run: {e}"))),
            Err(GuardFailure::GuestDown(d)) => return Err(LoopError::Preflight(format!("the guest does not run: {d}"))),
        };
        if broken.is_none() {
            self.scanner_checked(&checkpoint, &row.baseline).await?;
        }

        let new_run = self.books.journal().rules().await?.is_empty();
        let first = if new_run { Some(self.first_scan().await?) } else { None };
        // Fixed rules too: on a resume, a walker fixed mid-run stays with the final scan.
        let passing = self.books.journal().rules().await?.into_iter().filter(|r| r.status.passes()).map(|r| r.rule_id);
        let walkers = self.machine.scanner().costly_walkers(&passing.collect::<Vec<_>>());
        let (regression_every, one_rule) = self.regression_every(new_run, &walkers, &events).await?;
        let rules = self.books.journal().rules().await?;
        // A rule whose kept fix awaits the reboot proof still fails: not in the set until then.
        let awaiting: Vec<String> = self
            .books
            .journal()
            .attempts()
            .await?
            .into_iter()
            .filter(|a| a.verdict == Some(Verdict::NeedsReboot) && a.in_force())
            .map(|a| a.spec.rule_id)
            .collect();
        let (final_set, regression_set) = rules
            .iter()
            .filter(|r| r.status.passes() && !awaiting.contains(&r.rule_id))
            .map(|r| r.rule_id.clone())
            .partition(|r| walkers.contains(r));
        let worked = rules.iter().filter(|r| r.attempts > 0 || r.status == RuleStatus::Escalated).count();
        let mut state = RunState::at(checkpoint, booted, prefix)
            .watching(regression_set, final_set)
            .with_pending(pending)
            .with_cadence(regression_every, one_rule)
            .with_history(worked, shared_bans);
        self.proof.replay_unproven(&state).await?;
        if broken.is_some() {
            if let Some(broken) = self.machine.guard_fails_now().await {
                self.proof.guard_fails(&mut state, broken).await?;
            }
            self.scanner_checked(state.checkpoint(), &row.baseline).await?;
        }
        // The first scan serves the first attempts (each rule's result, and its evidence): nothing
        // has run on the guest since. With the OVAL engine, a failing rule it took no evidence of
        // gets a rescan of its own, which may (a derived fix needs it).
        if let Some(scan) = first {
            let oval = self.machine.scanner().engine() == Engine::Oval;
            let failing: Vec<String> = scan.with(Outcome::Fail).into_iter().filter(|r| !oval || scan.evidence_of(r).is_some()).collect();
            state.look_ahead(Some(Ahead::of(state.head(), &scan, &failing)));
        }
        Ok(state)
    }

    /// The guest's scanner works: the preflight event, with its version.
    async fn scanner_checked(&self, checkpoint: &str, baseline: &str) -> LoopResult<()> {
        let oscap = self.machine.scanner().check(self.machine.guest()).await?;
        let engine = self.machine.scanner().engine();
        self.books.note(None, EventData::Preflight { checkpoint: checkpoint.into(), baseline: baseline.into(), oscap, engine }).await
    }

    /// The last checkpoint proven to boot, from the run's events; the baseline before any.
    async fn booted(&self, events: &[Event], baseline: &str) -> LoopResult<Booted> {
        let proven = events.iter().rev().find_map(|e| match &e.data {
            EventData::Booted(b) => Some(b.clone()),
            _ => None,
        });
        match proven {
            Some(b) if self.machine.hv().snapshot_exists(&b.snapshot).await? => Ok(b),
            _ => Ok(Booted { snapshot: baseline.to_string(), through: None }),
        }
    }

    /// Fixes per regression check: the setting, else the run's, else on a new run the plan's or
    /// one measured, else 1; with the one-rule rescan when it was measured (the checks then
    /// re-derive the cadence). A plan run's batches check the regression set from the first, and
    /// find a rule unstable there (`batch/`), as the measurement does.
    /// `walkers` are left to the final scan, so neither their checks nor their cost count here.
    async fn regression_every(&self, new_run: bool, walkers: &[String], events: &[Event]) -> LoopResult<(u32, Option<Duration>)> {
        let stored = self.books.journal().row().await?.regression_every.map(|n| n.max(1) as u32);
        let (every, how, one) = match (self.every, stored, new_run) {
            (Some(n), ..) => (n.max(1), Cadence::Setting, None),
            (None, Some(n), _) => return Ok((n, measured_one_rule(events))),
            (None, None, true) => match self.plan_cadence {
                Some(n) => (n.max(1), Cadence::Plan, None),
                None => {
                    let (one, both) = self.measure_rescans(walkers).await?;
                    (super::check::batch_size(both, one), Cadence::Measured, Some((one, both)))
                }
            },
            (None, None, false) => (1, Cadence::Default, None),
        };
        self.books.journal().set_regression_every(every).await?;
        let secs = one.map(|(one, both)| RescanTimes { one_rule: one.as_secs_f64(), with_set: both.as_secs_f64() });
        self.books.note(None, EventData::RegressionEvery { every, how, secs, final_scan_only: walkers.to_vec() }).await?;
        Ok((every, one.map(|(one, _)| one)))
    }

    /// Times a one-rule rescan, and the same rescan with the regression set (less `walkers`), as
    /// `evaluate` runs them. The second doubles as a stability check: a rule that passed the first
    /// scan and fails now, with nothing changed, is marked `unstable` and left out of the set.
    async fn measure_rescans(&self, walkers: &[String]) -> LoopResult<(Duration, Duration)> {
        let rules = self.books.journal().rules().await?;
        let Some(probe) = rules.iter().find(|r| r.status == RuleStatus::Pending).or(rules.first()) else {
            return Ok((Duration::ZERO, Duration::ZERO));
        };
        let one = self.machine.scan(std::slice::from_ref(&probe.rule_id)).await?.took;
        let set: Vec<String> =
            rules.iter().filter(|r| r.status == RuleStatus::Passing && !walkers.contains(&r.rule_id)).map(|r| r.rule_id.clone()).collect();
        let mut both = vec![probe.rule_id.clone()];
        both.extend(set.iter().filter(|r| **r != probe.rule_id).cloned());
        let scan = self.machine.scan(&both).await?;
        for r in scan.not_passing(&set) {
            self.ledger.mark_unstable(&r, "passed the first scan and failed a rescan with nothing changed").await?;
        }
        Ok((one, scan.took))
    }

    /// The full scan that sets each rule's starting point and disposition.
    #[tracing::instrument(name = "first_scan", skip_all)]
    async fn first_scan(&self) -> LoopResult<Scan> {
        let scan = self.machine.scan(&[]).await?;
        self.books.note_unknown(&scan).await?;
        for r in &scan.results.rule_results {
            if r.result == Outcome::NotSelected {
                continue;
            }
            let title = self.content.rule(&r.idref).map(|c| c.title.as_str()).unwrap_or("");
            let result = ScanResult::from(r.result);
            let (status, reason) = match result {
                ScanResult::Fail => self.offer.opening(&r.idref),
                other => (RuleStatus::of_outcome(other), None),
            };
            let rule = NewRule {
                rule_id: r.idref.clone(),
                title: title.to_string(),
                severity: r.severity,
                initial_result: result,
                status,
                reason,
            };
            self.books.journal().add_rule(&rule).await?;
        }
        let score = scan.results.score().map(|s| s.value);
        self.books.journal().set_scores(score, None).await?;
        let counts = scan.results.counts(false);
        let secs = scan.took.as_secs_f64();
        self.books.note(None, EventData::Scan { kind: ScanKind::Full, counts, score, secs, stalls: scan.stalls }).await?;
        Ok(scan)
    }
}

/// The one-rule rescan the run's preflight measured, from its `regression_every` event.
fn measured_one_rule(events: &[Event]) -> Option<Duration> {
    match &events.iter().find(|e| e.kind == EventKind::RegressionEvery)?.data {
        EventData::RegressionEvery { how: Cadence::Measured, secs: Some(t), .. } => Some(Duration::from_secs_f64(t.one_rule)),
        _ => None,
    }
}

/// The start of a run's snapshot names: its id and its start time to the millisecond, so that
/// runs of different databases on one VM never take (or drop) each other's snapshots.
pub fn checkpoint_prefix(run: RunId, started_at: &str) -> String {
    let stamp: String = started_at.chars().filter(char::is_ascii_digit).collect();
    format!("temper-r{run}-{stamp}-")
}

#[cfg(test)]
mod tests {
    use super::{RunId, checkpoint_prefix};

    #[test]
    fn runs_with_one_id_in_two_databases_have_distinct_snapshot_names() {
        let a = checkpoint_prefix(RunId::new(1).unwrap(), "2026-11-22T07:01:22.123Z");
        let b = checkpoint_prefix(RunId::new(1).unwrap(), "2026-11-22T07:01:22.124Z");
        assert_eq!(a, "temper-r1-20261122070122123-");
        assert!(!b.starts_with(&a) && !a.starts_with(&b), "neither run may take the other's snapshots: {a} {b}");
        assert!(
            !checkpoint_prefix(RunId::new(12).unwrap(), "x").starts_with(&checkpoint_prefix(RunId::new(1).unwrap(), "x")),
            "run 1 never drops run 12's"
        );
    }
}

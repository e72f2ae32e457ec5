//! The reboot proof, at the end of a run: a cold reboot through the hypervisor, then SSH, sudo,
//! the health check and a full scan. A rule that passed before the reboot and fails after it was
//! not fixed for good (`not_persistent`). A guest that does not come back, or comes back broken,
//! has the fixes kept since the last booted checkpoint bisected: each probe reverts to that
//! checkpoint (or the newest stepping stone that holds a prefix of the probe's fixes:
//! `state/stones.rs`), replays the fixes up to the probe and reboots. The blamed fix's rule
//! reopens; the others are replayed once more on the booted checkpoint, rebooted, and that state
//! is the next booted checkpoint. Stock fixes that take effect after a reboot (`needs_reboot`) are kept
//! until then and proven by the same reboot, all of them at once. A guest that comes back whole
//! with a unit failed that had not failed before the reboot blames each fix that names the unit. The final set (rules whose
//! checks walk a directory tree, left out of the rescans) is checked here, with or without the
//! proof, and a rule of it that fails is bisected the same way.
mod rebuild;

use std::collections::BTreeSet;
use std::time::Instant;

use crate::checks::GuardFailure;
use crate::ralph::books::Books;
use crate::ralph::crew::Crew;
use crate::ralph::error::{End, LoopError, LoopResult};
use crate::ralph::escalate::Escalator;
use crate::ralph::ledger::Ledger;
use crate::ralph::machine::Machine;
use crate::ralph::settings::RebootProof;
use crate::ralph::state::RunState;
use crate::scan::Scan;
use crate::units;
use temper_journal::Verdict;
use temper_journal::{Attempt, EventData};

/// Why a guest failed a reboot: the verdict it gives the blamed fix, and what was seen.
pub(super) type Broken = (Verdict, String);

/// Why a fix is blamed when its own rule fails after a cold reboot.
const NOT_PERSISTENT: &str = "the rule passed its rescan after the fix, and fails after a cold reboot: the fix did not persist";

/// What a probe asks of the rebooted guest: that it comes up, and that these rules pass.
pub(super) struct BootProbe<'a> {
    pub fixes: &'a [Attempt],
    pub pass: &'a [String],
}

impl BootProbe<'_> {
    /// The fewest fixes worth probing: up to the last fix of a rule that must pass, since before
    /// its own fix that rule failed anyway (a walker fixed mid-run, say). 1 when there is none.
    fn shortest(&self) -> usize {
        self.fixes.iter().rposition(|a| self.pass.contains(&a.spec.rule_id)).map_or(1, |i| i + 1)
    }
}

/// The reboot proof of a run's end, and the bisections by replay that share its probes.
#[derive(Clone, Copy)]
pub(super) struct RebootProver<'r> {
    books: &'r Books<'r>,
    machine: &'r Machine<'r>,
    ledger: Ledger<'r>,
    escalator: Escalator<'r>,
    /// `None`: the run ends without the proof (the final set is still checked).
    reboot: Option<RebootProof>,
}

impl<'r> RebootProver<'r> {
    pub(in crate::ralph) fn new(c: &'r Crew<'r>) -> Self {
        Self { books: &c.books, machine: &c.machine, ledger: Ledger::new(c), escalator: Escalator::new(c), reboot: c.settings.reboot }
    }
}

/// The fix a bisection blamed, and how many fixes the guest runs now when its last probe, just
/// rebooted, passed (so the state without the culprit may need no second reboot).
pub(super) struct BootCulprit {
    pub culprit: Attempt,
    pub broken: Broken,
    pub live: Option<usize>,
}

impl RebootProver<'_> {
    /// Reboots the guest if fixes were kept since the last booted checkpoint: it holds when the
    /// guest came back whole, and reopens when a fix was blamed (its rule reopened).
    pub(in crate::ralph) async fn prove_boot(&self, state: &mut RunState) -> LoopResult<End> {
        if self.reboot.is_none() {
            return Ok(End::Holds(()));
        }
        let fixes = self.unproven(state).await?;
        if fixes.is_empty() {
            return Ok(End::Holds(()));
        }
        let before = self.machine.failed_units().await;
        let Err(broken) = self.reboot("the run's end", fixes.len()).await? else {
            return self.units_after_boot(state, &fixes, before).await;
        };
        let found = self.bisect_boot(state, &BootProbe { fixes: &fixes, pass: &[] }, broken).await?;
        // The culprit was the newest fix and the last probe, all the others, came up: that is the state.
        let live = found.live == Some(fixes.len() - 1);
        self.rebuild(state, &fixes, &[(found.culprit, found.broken)], live).await?;
        Ok(End::Reopened)
    }

    /// The guest came back whole: a unit that fails now, and did not before the reboot, is
    /// blamed on each fix since the booted checkpoint that names it (it wrote or enabled the
    /// unit), and those fixes' rules reopen. A unit no such fix names blames nothing, nor does a
    /// listing that could not be read.
    async fn units_after_boot(&self, state: &mut RunState, fixes: &[Attempt], before: Option<BTreeSet<String>>) -> LoopResult<End> {
        let (Some(before), Some(after)) = (before, self.machine.failed_units().await) else { return Ok(End::Holds(())) };
        let new: Vec<&String> = after.difference(&before).collect();
        let blamed: Vec<(Attempt, Broken)> = fixes
            .iter()
            .filter_map(|a| {
                let named: Vec<&str> = new.iter().filter(|u| units::named_in(&a.spec.fix_script, u)).map(|u| u.as_str()).collect();
                let why = format!(
                    "{} failed after the cold reboot, and had not before it: this fix names it (it wrote or enabled the unit)",
                    named.join(", ")
                );
                (!named.is_empty()).then(|| (a.clone(), (Verdict::HealthBroken, why)))
            })
            .collect();
        if blamed.is_empty() {
            return Ok(End::Holds(()));
        }
        self.rebuild(state, fixes, &blamed, false).await?;
        Ok(End::Reopened)
    }

    /// After the reboot, the full scan: the rules of the regression set and the final set that
    /// fail now. Each one's own fix is blamed (`not_persistent`); a rule that passed at the
    /// booted checkpoint, or a walker, is bisected over the fixes. Without the proof only the
    /// final set is new here, and its probes replay without a reboot. With any blamed, the rest
    /// are rebuilt on the booted checkpoint: false.
    pub(in crate::ralph) async fn persisted(&self, state: &mut RunState, scan: &Scan) -> LoopResult<End> {
        let proof = self.reboot.is_some();
        if !proof && state.final_set().is_empty() {
            return Ok(End::Holds(()));
        }
        let fixes = self.unproven(state).await?;
        let checked = if proof { [state.regression_set(), state.final_set()].concat() } else { state.final_set().to_vec() };
        let failing = scan.not_passing(&checked);
        let mut blamed: Vec<(Attempt, Broken)> = Vec::new();
        // Stock fixes kept until the reboot: their rule passes now, or the fix never worked.
        for a in fixes.iter().filter(|a| a.verdict == Some(Verdict::NeedsReboot)) {
            if scan.outcome(&a.spec.rule_id) == Some(temper_scap::Outcome::Pass) {
                self.books.journal().prove_fix(a.id, "; the rule passes after the reboot proof").await?;
                self.ledger.now_passes(state, &a.spec.rule_id);
            } else {
                let why = "the stock fix needs a reboot, and the rule still fails after the reboot proof's cold reboot";
                blamed.push((a.clone(), (Verdict::StillFailing, why.into())));
            }
        }
        let mut orphans = Vec::new();
        for rule in &failing {
            match fixes.iter().find(|a| &a.spec.rule_id == rule) {
                // A walker skipped the batch checks: a later fix may have broken it, so bisect.
                Some(a) if proof && !state.final_set().contains(rule) => {
                    blamed.push((a.clone(), (Verdict::NotPersistent, NOT_PERSISTENT.into())));
                }
                _ => orphans.push(rule.clone()),
            }
        }
        if !orphans.is_empty() && fixes.is_empty() {
            for r in &orphans {
                state.unwatch(r);
                self.ledger.mark_unstable(r, "fails at the final scan, with no fix kept since the last checkpoint where it passed").await?;
            }
        } else if !orphans.is_empty() {
            let why = self.final_failure(&orphans);
            let mut found = self.bisect_boot(state, &BootProbe { fixes: &fixes, pass: &orphans }, (Verdict::Regression, why)).await?;
            // A walker's own fix, after which it fails across the reboot: that fix did not persist.
            if proof && found.broken.0 == Verdict::Regression && orphans.contains(&found.culprit.spec.rule_id) {
                found.broken = (Verdict::NotPersistent, NOT_PERSISTENT.into());
            }
            blamed.push((found.culprit, found.broken));
        }
        if blamed.is_empty() {
            if let Some(last) = fixes.last().filter(|_| proof) {
                self.mark_booted(state, Some(last.id)).await?;
            }
            return Ok(End::Holds(()));
        }
        self.rebuild(state, &fixes, &blamed, false).await?;
        Ok(End::Reopened)
    }

    /// The guard fails at the run's head where it held when each fix was kept: a kept fix's
    /// damage, showing late. The fixes kept since the last booted checkpoint (those pending a
    /// batch's check with them) are bisected as for a failed reboot, each probe replayed onto
    /// that checkpoint and guarded (rebooted, with the proof on); the culprit is blamed and the
    /// rest rebuilt. With none kept since, nothing is left to blame.
    pub(in crate::ralph) async fn guard_fails(&self, state: &mut RunState, broken: Broken) -> LoopResult<()> {
        let fixes = self.unproven(state).await?;
        if fixes.is_empty() {
            let checkpoint = state.checkpoint().to_string();
            return Err(LoopError::CheckpointFails { checkpoint, problem: format!("{}: {}", broken.0, broken.1) });
        }
        for k in state.fold_pending() {
            if let Some(s) = k.taken_snapshot().filter(|s| *s != state.checkpoint()) {
                self.machine.drop_snapshot(s).await?;
            }
        }
        let found = self.bisect_boot(state, &BootProbe { fixes: &fixes, pass: &[] }, broken).await?;
        let live = found.live == Some(fixes.len() - 1);
        self.rebuild(state, &fixes, &[(found.culprit, found.broken)], live).await
    }

    /// A cold reboot, then access and health. The guest is up and healthy, or broken.
    async fn reboot(&self, why: &str, fixes: usize) -> LoopResult<Result<(), Broken>> {
        let proof = self.reboot.unwrap_or_default();
        let started = Instant::now();
        let off = self.machine.hv().power_cycle(proof.grace).await?;
        let down_secs = started.elapsed().as_secs_f64();
        let result = match self.machine.guest().reconnect(proof.boot_timeout).await {
            Err(e) => Err((Verdict::BreaksBoot, format!("no SSH within {}s of the start: {e}", proof.boot_timeout.as_secs()))),
            Ok(()) => match self.machine.guard().await {
                Ok(h) if h.ok => Ok(()),
                Ok(h) => Err((Verdict::HealthBroken, format!("the health check fails after the reboot: {}", h.output))),
                Err(GuardFailure::Lockout(d)) => Err((Verdict::Lockout, format!("locked out after the reboot: {d}"))),
                Err(GuardFailure::GuestDown(d)) => Err((Verdict::BreaksBoot, format!("the guest stopped after the reboot: {d}"))),
                Err(GuardFailure::HealthError(e)) => {
                    Err((Verdict::HealthBroken, format!("the health check could not run after the reboot: {e}")))
                }
            },
        };
        let data = EventData::Reboot {
            why: why.to_string(),
            fixes,
            power_off: off,
            down_secs,
            secs: started.elapsed().as_secs_f64(),
            up: result.is_ok(),
            problem: result.as_ref().err().map(|b| b.1.clone()),
        };
        self.books.note(None, data).await?;
        Ok(result)
    }

    /// On resume: a run cut off while it rebuilt on the booted checkpoint restores that checkpoint,
    /// without the fixes kept since it; they are replayed onto it, as the rebuild would have.
    pub(in crate::ralph) async fn replay_unproven(&self, state: &RunState) -> LoopResult<()> {
        if !state.pending().is_empty() || state.checkpoint() != state.booted().snapshot {
            return Ok(());
        }
        let fixes = self.unproven(state).await?;
        if !fixes.is_empty() {
            self.replay_on_booted(state, &fixes).await?;
        }
        Ok(())
    }

    /// Fixes kept since the booted checkpoint, oldest first.
    async fn unproven(&self, state: &RunState) -> LoopResult<Vec<Attempt>> {
        Ok(self.books.journal().attempts().await?.into_iter().filter(|a| Some(a.id) > state.booted().through && a.in_force()).collect())
    }
}

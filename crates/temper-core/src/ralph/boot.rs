//! The reboot proof, at the end of a run: a cold reboot through the hypervisor, then SSH, sudo,
//! the health check and a full scan. A rule that passed before the reboot and fails after it was
//! not fixed for good (`not_persistent`). A guest that does not come back, or comes back broken,
//! has the fixes kept since the last booted checkpoint bisected: each probe reverts to that
//! checkpoint, replays the fixes up to the probe and reboots. The blamed fix's rule reopens; the
//! others are replayed once more on the booted checkpoint, rebooted, and that state is the next
//! booted checkpoint. Stock fixes that take effect after a reboot (`needs_reboot`) are kept
//! until then and proven by the same reboot, all of them at once. The final set (rules whose
//! checks walk a directory tree, left out of the rescans) is checked here, with or without the
//! proof, and a rule of it that fails is bisected the same way.
use std::time::{Duration, Instant};

use super::attempt::{Ended, Trial};
use super::{Booted, End, LoopResult, Ralph, RunState};
use crate::checks::GuardFailure;
use crate::journal::{Attempt, Blamed, Culprit, EventData, EventKind, MemoryKind, Regressed, Replayed};
use crate::ports::Exec;
use crate::scan::{Scan, tail};
use crate::verdict::Verdict;

/// How long a cold reboot may take: the clean shutdown, then the boot up to SSH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RebootProof {
    /// After this the guest is powered off.
    pub grace: Duration,
    /// A guest not reachable over SSH this long after its start does not boot.
    pub boot_timeout: Duration,
}

impl Default for RebootProof {
    fn default() -> Self {
        Self { grace: Duration::from_secs(90), boot_timeout: Duration::from_secs(300) }
    }
}

/// Why a guest failed a reboot: the verdict it gives the blamed fix, and what was seen.
type Broken = (Verdict, String);

/// Why a fix is blamed when its own rule fails after a cold reboot.
const NOT_PERSISTENT: &str = "the rule passed its rescan after the fix, and fails after a cold reboot: the fix did not persist";

/// What a probe asks of the rebooted guest: that it comes up, and that these rules pass.
struct Probe<'a> {
    fixes: &'a [Attempt],
    pass: &'a [String],
}

impl Probe<'_> {
    /// The fewest fixes worth probing: up to the last fix of a rule that must pass, since before
    /// its own fix that rule failed anyway (a walker fixed mid-run, say). 1 when there is none.
    fn shortest(&self) -> usize {
        self.fixes.iter().rposition(|a| self.pass.contains(&a.rule_id)).map_or(1, |i| i + 1)
    }
}

/// The fix a bisection blamed, and how many fixes the guest runs now when its last probe, just
/// rebooted, passed (so the state without the culprit may need no second reboot).
struct Found {
    culprit: Attempt,
    broken: Broken,
    live: Option<usize>,
}

impl Ralph<'_> {
    /// Reboots the guest if fixes were kept since the last booted checkpoint: it holds when the
    /// guest came back whole, and reopens when a fix was blamed (its rule reopened).
    pub(super) async fn prove_boot(&self, state: &mut RunState) -> LoopResult<End> {
        if self.settings.reboot.is_none() {
            return Ok(End::Holds(()));
        }
        let fixes = self.unproven(state).await?;
        if fixes.is_empty() {
            return Ok(End::Holds(()));
        }
        let Err(broken) = self.reboot("the run's end", fixes.len()).await? else { return Ok(End::Holds(())) };
        let found = self.bisect_boot(state, &Probe { fixes: &fixes, pass: &[] }, broken).await?;
        // The culprit was the newest fix and the last probe, all the others, came up: that is the state.
        let live = found.live == Some(fixes.len() - 1);
        self.rebuild(state, &fixes, &[(found.culprit, found.broken)], live).await?;
        Ok(End::Reopened)
    }

    /// After the reboot, the full scan: the rules of the regression set and the final set that
    /// fail now. Each one's own fix is blamed (`not_persistent`); a rule that passed at the
    /// booted checkpoint, or a walker, is bisected over the fixes. Without the proof only the
    /// final set is new here, and its probes replay without a reboot. With any blamed, the rest
    /// are rebuilt on the booted checkpoint: false.
    pub(super) async fn persisted(&self, state: &mut RunState, scan: &Scan) -> LoopResult<End> {
        let proof = self.settings.reboot.is_some();
        if !proof && state.final_set.is_empty() {
            return Ok(End::Holds(()));
        }
        let fixes = self.unproven(state).await?;
        let checked = if proof { [&state.regression_set[..], &state.final_set].concat() } else { state.final_set.clone() };
        let failing = scan.failing(&checked);
        let mut blamed: Vec<(Attempt, Broken)> = Vec::new();
        // Stock fixes kept until the reboot: their rule passes now, or the fix never worked.
        for a in fixes.iter().filter(|a| a.verdict == Some(Verdict::NeedsReboot)) {
            if scan.outcome(&a.rule_id) == Some(temper_scap::Outcome::Pass) {
                self.store.prove_fix(a.id, "; the rule passes after the reboot proof").await?;
                self.now_passes(state, &a.rule_id);
            } else {
                let why = "the stock fix needs a reboot, and the rule still fails after the reboot proof's cold reboot";
                blamed.push((a.clone(), (Verdict::StillFailing, why.into())));
            }
        }
        let mut orphans = Vec::new();
        for rule in &failing {
            match fixes.iter().find(|a| &a.rule_id == rule) {
                // A walker skipped the batch checks: a later fix may have broken it, so bisect.
                Some(a) if proof && !state.final_set.contains(rule) => {
                    blamed.push((a.clone(), (Verdict::NotPersistent, NOT_PERSISTENT.into())));
                }
                _ => orphans.push(rule.clone()),
            }
        }
        if !orphans.is_empty() && fixes.is_empty() {
            for r in &orphans {
                state.regression_set.retain(|x| x != r);
                state.final_set.retain(|x| x != r);
                self.mark_unstable(r, "fails at the final scan, with no fix kept since the last checkpoint where it passed").await?;
            }
        } else if !orphans.is_empty() {
            let why = self.final_failure(&orphans);
            let mut found = self.bisect_boot(state, &Probe { fixes: &fixes, pass: &orphans }, (Verdict::Regression, why)).await?;
            // A walker's own fix, after which it fails across the reboot: that fix did not persist.
            if proof && found.broken.0 == Verdict::Regression && orphans.contains(&found.culprit.rule_id) {
                found.broken = (Verdict::NotPersistent, NOT_PERSISTENT.into());
            }
            blamed.push((found.culprit, found.broken));
        }
        if blamed.is_empty() {
            if let Some(last) = fixes.last().filter(|_| proof) {
                self.mark_booted(state, last.id).await?;
            }
            return Ok(End::Holds(()));
        }
        self.rebuild(state, &fixes, &blamed, false).await?;
        Ok(End::Reopened)
    }

    /// A cold reboot, then access and health. The guest is up and healthy, or broken.
    async fn reboot(&self, why: &str, fixes: usize) -> LoopResult<Result<(), Broken>> {
        let proof = self.settings.reboot.unwrap_or_default();
        let started = Instant::now();
        let off = self.hv.power_cycle(proof.grace).await?;
        let down_secs = started.elapsed().as_secs_f64();
        let result = match self.guest.reconnect(proof.boot_timeout).await {
            Err(e) => Err((Verdict::BreaksBoot, format!("no SSH within {}s of the start: {e}", proof.boot_timeout.as_secs()))),
            Ok(()) => match self.guard().await {
                Ok(h) if h.ok => Ok(()),
                Ok(h) => Err((Verdict::HealthBroken, format!("the health check fails after the reboot: {}", h.output))),
                Err(GuardFailure::Lockout(d)) => Err((Verdict::Lockout, format!("locked out after the reboot: {d}"))),
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
        self.note(None, data).await?;
        Ok(result)
    }

    /// The first fix after which the probe fails: each step reverts to the booted checkpoint,
    /// replays the fixes up to it and reboots. Probing all of them failed already.
    async fn bisect_boot(&self, state: &RunState, probe: &Probe<'_>, mut broken: Broken) -> LoopResult<Found> {
        let (mut lo, mut hi, mut live) = (probe.shortest(), probe.fixes.len(), None);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.probe(state, &probe.fixes[..mid], probe.pass).await? {
                Ok(()) => (lo, live) = (mid + 1, Some(mid)),
                Err(b) => (hi, broken, live) = (mid, b, None),
            }
        }
        Ok(Found { culprit: probe.fixes[lo - 1].clone(), broken, live })
    }

    /// The booted checkpoint with `fixes` replayed, rebooted (with the proof on): up, healthy,
    /// and `pass` passing?
    async fn probe(&self, state: &RunState, fixes: &[Attempt], pass: &[String]) -> LoopResult<Result<(), Broken>> {
        self.replay_on_booted(state, fixes).await?;
        if self.settings.reboot.is_some()
            && let Err(b) = self.reboot("a bisection probe", fixes.len()).await?
        {
            return Ok(Err(b));
        }
        if pass.is_empty() {
            return Ok(Ok(()));
        }
        let failing = self.scanner.scan(self.guest, pass).await?.failing(pass);
        Ok(if failing.is_empty() { Ok(()) } else { Err((Verdict::Regression, self.final_failure(&failing))) })
    }

    /// Why rules that passed at the booted checkpoint fail now.
    fn final_failure(&self, rules: &[String]) -> String {
        let after = if self.settings.reboot.is_some() { ", after a cold reboot" } else { "" };
        format!("rules that passed at the last booted checkpoint fail at the final scan{after}: {}", rules.join(", "))
    }

    /// Reverts to the booted checkpoint and runs `fixes` again, in order.
    async fn replay_on_booted(&self, state: &RunState, fixes: &[Attempt]) -> LoopResult<()> {
        self.restore(&state.booted.snapshot).await?;
        for a in fixes {
            let exec = Exec::script(&a.fix_script).timeout(self.settings.fix_timeout);
            let code = match self.guest.exec(exec).await {
                Ok(out) => out.exit_code,
                Err(e) => {
                    tracing::warn!(rule = %a.rule_id, error = %e, "replaying a kept fix failed");
                    None
                }
            };
            let onto = state.booted.snapshot.clone();
            let data = Replayed::OnBooted { attempt: a.n, onto, exit_code: code, why: "reboot proof".into() };
            self.note(Some(&a.rule_id), EventData::Replay(data)).await?;
        }
        Ok(())
    }

    /// Blames `blamed`, then builds the booted checkpoint plus every other fix, reboots it and
    /// makes it the next booted checkpoint (`live`: the guest runs that already). Should it still
    /// not come up, the next culprit among the rest is found the same way.
    async fn rebuild(&self, state: &mut RunState, fixes: &[Attempt], blamed: &[(Attempt, Broken)], live: bool) -> LoopResult<()> {
        // From here the run's checkpoint is the booted one: a crash before the new one is taken
        // resumes there, and preflight replays the fixes kept since (`replay_unproven`).
        let head = std::mem::replace(&mut state.checkpoint, state.booted.snapshot.clone());
        self.store.confirm_fixes(self.run, &state.booted.snapshot).await?;
        if head != state.booted.snapshot {
            self.drop_snapshot(&head).await?;
        }
        for (a, broken) in blamed {
            self.blame(state, a, broken).await?;
        }
        let mut rest: Vec<Attempt> = fixes.iter().filter(|a| !blamed.iter().any(|(b, _)| b.id == a.id)).cloned().collect();
        if rest.is_empty() {
            // Nothing left to keep: the booted checkpoint is the state.
            return self.back_to_booted(state).await;
        }
        let mut live = live;
        while !live {
            let Err(broken) = self.probe(state, &rest, &[]).await? else { break };
            let found = self.bisect_boot(state, &Probe { fixes: &rest, pass: &[] }, broken).await?;
            self.blame(state, &found.culprit, &found.broken).await?;
            rest.retain(|a| a.id != found.culprit.id);
            if rest.is_empty() {
                return self.back_to_booted(state).await;
            }
            // The last probe came up with exactly the rest (the culprit was the newest).
            live = found.live == Some(rest.len());
        }
        if self.settings.reboot.is_none() {
            return self.checkpoint_here(state, rest.len()).await;
        }
        let through = rest.last().map_or(state.booted.through, |a| a.id);
        self.mark_booted(state, through).await
    }

    /// The verdict on a kept fix, its rule reopened (or escalated), the Reflector told why.
    async fn blame(&self, state: &mut RunState, a: &Attempt, (verdict, reason): &Broken) -> LoopResult<()> {
        let proof = self.settings.reboot.is_some();
        let by = if proof { "The reboot proof" } else { "The final scan" };
        let cold = if proof { " A cold reboot is a clean shutdown through the hypervisor, then a start." } else { "" };
        let diagnostics = format!(
            "The fix passed its own rescan, the health check and the lockout guard, and was kept. {by} then found: {reason}.{cold}"
        );
        let culprit = Culprit {
            id: a.id,
            verdict: *verdict,
            rule_id: a.rule_id.clone(),
            reason: reason.clone(),
            regressions: Vec::new(),
            diagnostics: diagnostics.clone(),
        };
        self.store.roll_back_fixes(self.run, &culprit, &[]).await?;
        state.regression_set.retain(|r| *r != a.rule_id);
        // A fix that does not survive a reboot is never offered to another target.
        if let Some(f) = self.store.remembered_fix(self.skill.name(), &a.rule_id).await?
            && f.fix_script == a.fix_script
        {
            self.store.forget(MemoryKind::Fixes, f.id).await?;
        }
        let blamed = Blamed { attempt: a.n, verdict: *verdict, reason: reason.clone(), fix: tail(&a.description, 200).to_string() };
        let data = if proof { EventData::RebootBlamed(blamed) } else { EventData::RegressionFound(Regressed::AtFinalScan(blamed)) };
        self.note(Some(&a.rule_id), data).await?;
        let ended = Ended { trial: Trial::of(a), verdict: *verdict, reason: reason.clone(), fix_script: a.fix_script.clone(), diagnostics };
        self.reflect_or_escalate(&ended).await
    }

    /// The guest as it runs now, just rebooted, becomes the checkpoint and the booted one.
    async fn mark_booted(&self, state: &mut RunState, through: i64) -> LoopResult<()> {
        let n = self.store.events(self.run, 0).await?.iter().filter(|e| e.kind == EventKind::Booted).count() + 1;
        let name = format!("{}boot{n}", state.prefix);
        self.take_snapshot(&name, "proven to boot").await?;
        let booted = Booted { snapshot: name.clone(), through };
        self.note(None, EventData::Booted(booted.clone())).await?;
        self.store.confirm_fixes(self.run, &name).await?;
        let old = std::mem::replace(&mut state.checkpoint, name);
        let was = std::mem::replace(&mut state.booted, booted);
        self.drop_snapshot(&old).await?;
        if was.snapshot != old {
            self.drop_snapshot(&was.snapshot).await?;
        }
        Ok(())
    }

    /// Without the proof: the guest as it runs now, rebuilt, becomes the checkpoint (not booted).
    async fn checkpoint_here(&self, state: &mut RunState, fixes: usize) -> LoopResult<()> {
        let name = format!("{}rebuilt{}", state.prefix, self.store.attempts(self.run).await?.len());
        self.take_snapshot(&name, "rebuilt after a final-scan regression").await?;
        self.store.confirm_fixes(self.run, &name).await?;
        let old = std::mem::replace(&mut state.checkpoint, name.clone());
        if !state.pinned(&old) {
            self.drop_snapshot(&old).await?;
        }
        self.note(None, EventData::Checkpoint { snapshot: name, replaced: old, fixes: Some(fixes) }).await
    }

    /// The booted checkpoint, as it is, becomes the run's checkpoint again.
    async fn back_to_booted(&self, state: &mut RunState) -> LoopResult<()> {
        let booted = state.booted.snapshot.clone();
        self.restore(&booted).await?;
        self.store.confirm_fixes(self.run, &booted).await?;
        let old = std::mem::replace(&mut state.checkpoint, booted.clone());
        if old != booted {
            self.drop_snapshot(&old).await?;
        }
        Ok(())
    }

    /// On resume: a run cut off while it rebuilt on the booted checkpoint restores that checkpoint,
    /// without the fixes kept since it; they are replayed onto it, as the rebuild would have.
    pub(super) async fn replay_unproven(&self, state: &RunState) -> LoopResult<()> {
        if !state.pending.is_empty() || state.checkpoint != state.booted.snapshot {
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
        Ok(self.store.attempts(self.run).await?.into_iter().filter(|a| a.id > state.booted.through && a.in_force()).collect())
    }
}

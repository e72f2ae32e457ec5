//! The reboot proof's repairs: bisect the fixes a failed reboot or final scan blames, then rebuild
//! the booted checkpoint with the others and prove it again.
use super::{BootCulprit, BootProbe, Broken, RebootProver};
use crate::ralph::error::LoopResult;
use crate::ralph::retire::drop_stones;
use crate::ralph::state::RunState;
use crate::ralph::trial::{Ended, Trial};
use crate::scan::tail;
use temper_journal::Verdict;
use temper_journal::{Attempt, AttemptId, Blamed, Booted, Culprit, EventData, EventKind, MemoryKind, Regressed, ReplayWhy};

impl RebootProver<'_> {
    /// The first fix after which the probe fails: each step reverts to the booted checkpoint (or
    /// the newest stepping stone on the way), replays the fixes up to it and reboots. Probing all
    /// of them failed already.
    pub(super) async fn bisect_boot(&self, state: &RunState, probe: &BootProbe<'_>, mut broken: Broken) -> LoopResult<BootCulprit> {
        let (mut lo, mut hi, mut live) = (probe.shortest(), probe.fixes.len(), None);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.probe(state, &probe.fixes[..mid], probe.pass).await? {
                Ok(()) => (lo, live) = (mid + 1, Some(mid)),
                Err(b) => (hi, broken, live) = (mid, b, None),
            }
        }
        Ok(BootCulprit { culprit: probe.fixes[lo - 1].clone(), broken, live })
    }

    /// The booted checkpoint with `fixes` replayed, rebooted (with the proof on): up, healthy
    /// (the guard, after the reboot or after the replay), and `pass` passing?
    pub(super) async fn probe(&self, state: &RunState, fixes: &[Attempt], pass: &[String]) -> LoopResult<Result<(), Broken>> {
        self.replay_on_booted(state, fixes).await?;
        if self.reboot.is_some() {
            if let Err(b) = self.reboot("a bisection probe", fixes.len()).await? {
                return Ok(Err(b));
            }
        } else if let Some(b) = self.machine.guard_fails_now().await {
            return Ok(Err(b));
        }
        if pass.is_empty() {
            return Ok(Ok(()));
        }
        let failing = self.machine.scan(pass).await?.not_passing(pass);
        Ok(if failing.is_empty() { Ok(()) } else { Err((Verdict::Regression, self.final_failure(&failing))) })
    }

    /// Why rules that passed at the booted checkpoint fail now.
    pub(super) fn final_failure(&self, rules: &[String]) -> String {
        let after = if self.reboot.is_some() { ", after a cold reboot" } else { "" };
        format!("rules that passed at the last booted checkpoint fail at the final scan{after}: {}", rules.join(", "))
    }

    /// The booted checkpoint with `fixes` run again, in order: restored to the newest stepping
    /// stone that holds exactly their first ones (`state/stones.rs`), the rest replayed onto it;
    /// else to the booted checkpoint, all of them replayed.
    pub(super) async fn replay_on_booted(&self, state: &RunState, fixes: &[Attempt]) -> LoopResult<()> {
        let ids: Vec<AttemptId> = fixes.iter().map(|a| a.id).collect();
        let (onto, held) = match state.stone_for(&ids) {
            Some(s) => (&s.snapshot, s.holds.len()),
            None => (&state.booted().snapshot, 0),
        };
        self.machine.restore(onto).await?;
        let replayed: Vec<&Attempt> = fixes[held..].iter().collect();
        crate::ralph::replay::replay(self.books, self.machine, &replayed, onto, ReplayWhy::RebootProof).await
    }

    /// Blames `blamed`, then builds the booted checkpoint plus every other fix, reboots it and
    /// makes it the next booted checkpoint (`live`: the guest runs that already). Should it still
    /// not come up, the next culprit among the rest is found the same way.
    pub(super) async fn rebuild(
        &self,
        state: &mut RunState,
        fixes: &[Attempt],
        blamed: &[(Attempt, Broken)],
        live: bool,
    ) -> LoopResult<()> {
        // From here the run's checkpoint is the booted one: a crash before the new one is taken
        // resumes there, and preflight replays the fixes kept since (`replay_unproven`).
        let head = state.set_checkpoint(state.booted().snapshot.clone());
        self.books.journal().confirm_fixes(&state.booted().snapshot).await?;
        if head != state.booted().snapshot {
            self.machine.drop_snapshot(&head).await?;
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
            let found = self.bisect_boot(state, &BootProbe { fixes: &rest, pass: &[] }, broken).await?;
            self.blame(state, &found.culprit, &found.broken).await?;
            rest.retain(|a| a.id != found.culprit.id);
            if rest.is_empty() {
                return self.back_to_booted(state).await;
            }
            // The last probe came up with exactly the rest (the culprit was the newest).
            live = found.live == Some(rest.len());
        }
        if self.reboot.is_none() {
            return self.checkpoint_here(state, rest.len()).await;
        }
        let through = rest.last().map_or(state.booted().through, |a| Some(a.id));
        self.mark_booted(state, through).await
    }

    /// The verdict on a kept fix, its rule reopened (or escalated), the Reflector told why; the
    /// stepping stones that hold it deleted.
    pub(super) async fn blame(&self, state: &mut RunState, a: &Attempt, (verdict, reason): &Broken) -> LoopResult<()> {
        let proof = self.reboot.is_some();
        let by = if proof { "The reboot proof" } else { "The final scan" };
        let cold = if proof { " A cold reboot is a clean shutdown through the hypervisor, then a start." } else { "" };
        let diagnostics = format!(
            "The fix passed its own rescan, the health check and the lockout guard, and was kept. {by} then found: {reason}.{cold}"
        );
        let culprit = Culprit {
            id: a.id,
            verdict: *verdict,
            rule_id: a.spec.rule_id.clone(),
            reason: reason.clone(),
            regressions: Vec::new(),
            diagnostics: diagnostics.clone(),
            rule_result: None,
        };
        self.books.journal().roll_back_fixes(&culprit, &[]).await?;
        // A stepping stone that holds the fix can serve no replay without it.
        drop_stones(self.machine, state, Some(&[a.id])).await?;
        state.unwatch(&a.spec.rule_id);
        // A fix that does not survive a reboot is never offered to another target.
        if let Some(f) = self.books.journal().memory().remembered_fix(self.books.skill(), &a.spec.rule_id).await?
            && f.fix_script == a.spec.fix_script
        {
            self.books.journal().memory().forget(MemoryKind::Fixes, f.id).await?;
        }
        let blamed = Blamed { attempt: a.n, verdict: *verdict, reason: reason.clone(), fix: tail(&a.spec.description, 200).to_string() };
        let data = if proof { EventData::RebootBlamed(blamed) } else { EventData::RegressionFound(Regressed::AtFinalScan(blamed)) };
        self.books.note(Some(&a.spec.rule_id), data).await?;
        let ended =
            Ended { trial: Trial::of(a), verdict: *verdict, reason: reason.clone(), fix_script: a.spec.fix_script.clone(), diagnostics };
        self.escalator.reflect_or_escalate(&ended).await
    }

    /// The guest as it runs now, just rebooted, becomes the checkpoint and the booted one.
    pub(super) async fn mark_booted(&self, state: &mut RunState, through: Option<AttemptId>) -> LoopResult<()> {
        let n = self.books.journal().events(None).await?.iter().filter(|e| e.kind == EventKind::Booted).count() + 1;
        let name = format!("{}boot{n}", state.prefix());
        self.machine.take_snapshot(&name, "proven to boot").await?;
        let booted = Booted { snapshot: name.clone(), through };
        self.books.note(None, EventData::Booted(booted.clone())).await?;
        self.books.journal().confirm_fixes(&name).await?;
        let old = state.set_checkpoint(name);
        let was = state.set_booted(booted);
        self.machine.drop_snapshot(&old).await?;
        if was.snapshot != old {
            self.machine.drop_snapshot(&was.snapshot).await?;
        }
        // Every stone holds fewer fixes than the new booted checkpoint: none can serve again.
        drop_stones(self.machine, state, None).await
    }

    /// Without the proof: the guest as it runs now, rebuilt, becomes the checkpoint (not booted).
    pub(super) async fn checkpoint_here(&self, state: &mut RunState, fixes: usize) -> LoopResult<()> {
        let name = format!("{}rebuilt{}", state.prefix(), self.books.journal().attempts().await?.len());
        self.machine.take_snapshot(&name, "rebuilt after a final-scan regression").await?;
        self.books.journal().confirm_fixes(&name).await?;
        let old = state.set_checkpoint(name.clone());
        if !state.pinned(&old) {
            self.machine.drop_snapshot(&old).await?;
        }
        self.books.note(None, EventData::Checkpoint { snapshot: name, replaced: old, fixes: Some(fixes) }).await
    }

    /// The booted checkpoint, as it is, becomes the run's checkpoint again.
    pub(super) async fn back_to_booted(&self, state: &mut RunState) -> LoopResult<()> {
        let booted = state.booted().snapshot.clone();
        self.machine.restore(&booted).await?;
        self.books.journal().confirm_fixes(&booted).await?;
        let old = state.set_checkpoint(booted.clone());
        if old != booted {
            self.machine.drop_snapshot(&old).await?;
        }
        Ok(())
    }
}

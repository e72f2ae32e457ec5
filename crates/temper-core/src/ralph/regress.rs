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
use super::boot::Proof;
use super::steps::{Check, Reflection};
use super::trial::{Ended, Trial};
use std::time::{Duration, Instant};

use crate::journal::{Culprit, EventData, Regressed, RuleStatus, ScanResult};
use crate::scan::{Scan, ScanError};
use temper_scap::Outcome;

#[cfg(test)]
use super::Booted;
use super::{Ahead, Kept, LoopError, LoopResult, Phase, Ralph, RunState};
use crate::verdict::{Guard, Verdict};

/// The most fixes a batch holds: the most work one regression can send back to replay.
pub const MAX_BATCH: u32 = 16;

/// What a regression check may cost each fix of its batch, in one-rule rescans. Checks find a
/// regression rarely (none in 146 fixes of the full ANSSI run), and one costs a bisection of a
/// few more checks then; half a rescan keeps the checks at about a third of the verification.
pub const CHECK_SHARE: f64 = 0.5;

/// Fixes per regression check, from a one-rule rescan and the same rescan with the regression set:
/// the set's extra cost over [`CHECK_SHARE`] of a one-rule rescan. 1 means the set is cheap and
/// rides in every rule rescan (standard: 12.3 s with the set vs 9.7 s without → 1; ANSSI high,
/// hardened, in lanes: about 15 s vs 1.7 s → 16).
pub fn batch_size(with_set: Duration, one_rule: Duration) -> u32 {
    let unit = one_rule.as_secs_f64().max(0.1) * CHECK_SHARE;
    let extra = with_set.saturating_sub(one_rule).as_secs_f64();
    ((extra / unit).round() as u32).clamp(1, MAX_BATCH)
}

impl Ralph<'_> {
    /// A rule that passes now joins the regression set; one whose check walks a directory tree
    /// at a cost of its own (made applicable by another fix, say) joins the final set instead.
    pub(super) fn now_passes(&self, state: &mut RunState, rule: &str) {
        let rule = rule.to_string();
        let walks = !self.scanner.costly_walkers(std::slice::from_ref(&rule)).is_empty();
        state.passes(rule, walks);
    }

    /// A rule whose result flips with nothing changed: left out of the regression set from now on.
    pub(super) async fn mark_unstable(&self, rule: &str, why: &str) -> LoopResult<()> {
        self.journal.set_rule_status(rule, RuleStatus::Unstable, Some(why)).await?;
        self.note(Some(rule), EventData::RegressionUnstable { reason: why.to_string() }).await?;
        Ok(())
    }

    /// The rules of `rules` that do not read `pass` at a snapshot, in one oscap call.
    pub(super) async fn not_passing_at(&self, snapshot: &str, rules: &[String]) -> LoopResult<Vec<String>> {
        if rules.is_empty() {
            return Ok(Vec::new());
        }
        self.restore(snapshot).await?;
        Ok(self.scanner.scan(self.guest, rules).await?.not_passing(rules))
    }

    /// The guard beside a scan of `rules` (none when they are none), on the guest as it stands.
    pub(super) async fn check_now(&self, rules: &[String]) -> (Guard, Result<Option<Scan>, ScanError>) {
        let (guard, scan) = tokio::join!(self.guard(), self.scan_some(rules));
        (Guard::from(guard), scan)
    }

    /// A scan of `rules`; none when they are none.
    async fn scan_some(&self, rules: &[String]) -> Result<Option<Scan>, ScanError> {
        if rules.is_empty() { Ok(None) } else { self.scanner.scan(self.guest, rules).await.map(Some) }
    }
}

/// What a check, or a probe of its bisection, found wrong with the guest as it stood.
#[derive(Debug, Clone, Default)]
struct Found {
    /// The guard failed: the verdict it gives a fix, and what it saw.
    guard: Option<(Verdict, String)>,
    /// The scan could not run: its error.
    scan: Option<String>,
    /// Rules expected to pass that do not read `pass`, each with what it read.
    rules: Vec<(String, ScanResult)>,
}

impl Found {
    /// What `guard` (when it ran) and `scan` found, of the rules `expected` to pass.
    fn read(guard: Option<Guard>, scan: &Result<Option<Scan>, ScanError>, expected: &[String]) -> Self {
        let guard = guard.and_then(|g| g.failure());
        match scan {
            Ok(Some(s)) => {
                let rules = s.not_passing(expected).into_iter().map(|r| (r.clone(), ScanResult::from(s.outcome(&r)))).collect();
                Found { guard, scan: None, rules }
            }
            Ok(None) => Found { guard, ..Found::default() },
            Err(e) => Found { guard, scan: Some(e.to_string()), rules: Vec::new() },
        }
    }
    fn clean(&self) -> bool {
        self.guard.is_none() && self.scan.is_none() && self.rules.is_empty()
    }
    /// The guard's failure or the scan's error, in words.
    fn problem(&self) -> Option<String> {
        match (&self.guard, &self.scan) {
            (Some((v, d)), _) => Some(format!("{v}: {d}")),
            (None, Some(e)) => Some(format!("the scan could not run: {e}")),
            (None, None) => None,
        }
    }
    fn rule_ids(&self) -> Vec<String> {
        self.rules.iter().map(|(r, _)| r.clone()).collect()
    }
}

impl Check<'_, '_> {
    /// Rescans the regression set once for the whole batch, with the rules not applicable so far
    /// (`applicable.rs`), beside the guard; re-derives the cadence from the check's time (unless
    /// rules apply now); promotes the batch (then takes up the rules that apply now), or bisects it.
    #[tracing::instrument(name = "regression_check", skip_all, fields(fixes = self.state.pending().len()))]
    pub(super) async fn run(mut self) -> LoopResult<()> {
        if self.state.pending().is_empty() {
            return Ok(());
        }
        self.ralph.phase(Phase::Regression, None, 0).await?;
        let watched = self.ralph.watched().await?;
        let mut rules: Vec<String> = self.state.regression_set().iter().chain(&watched).cloned().collect();
        // The next stock fixes' result and evidence before their fixes, for their attempts.
        let next = self.ralph.next_stock(self.state.regression_every() as usize, &rules).await?;
        rules.extend(next.iter().cloned());
        let started = Instant::now();
        let (guard, scan) = self.ralph.check_now(&rules).await;
        let took = started.elapsed();
        let found = Found::read(Some(guard), &scan, self.state.regression_set());
        let scan = scan.ok().flatten();
        // Rules that apply now had their checks run once (a tree walk, say): not the set's cost.
        let applies = scan.as_ref().is_some_and(|s| watched.iter().any(|r| s.outcome(r).is_some_and(|o| o != Outcome::NotApplicable)));
        let every = if applies || scan.is_none() { self.state.regression_every() } else { self.retime(took).await? };
        let fixes = self.state.pending().len();
        let stalls = scan.as_ref().map_or(0, |s| s.stalls);
        let (set, watched_n, secs) = (self.state.regression_set().len(), watched.len(), took.as_secs_f64());
        let failed = found.rule_ids();
        let check =
            EventData::RegressionCheck { fixes, rules: set, watched: watched_n, failed, secs, stalls, every, problem: found.problem() };
        self.ralph.note(None, check).await?;
        if !found.clean() {
            return self.bisect(found, &rules).await;
        }
        self.promote().await?;
        if let Some(scan) = scan {
            self.state.look_ahead(Some(Ahead::of(self.state.head(), &scan, &next)).filter(|a| !a.is_empty()));
            self.ralph.now_applicable(self.state, &scan, &watched).await?;
        }
        Ok(())
    }

    /// After a fix's guard failed, and failed again once the fix was undone: the damage is a
    /// kept fix's. With fixes pending, the batch is checked now (its guard fails at the head, so
    /// it is bisected over its snapshots); with none, the fixes kept since the last booted
    /// checkpoint are bisected by replays (`Proof::guard_fails`).
    pub(super) async fn after_guard_failure(self, broken: (Verdict, String)) -> LoopResult<()> {
        if self.state.pending().is_empty() {
            return Proof::new(self.ralph, self.state).guard_fails(broken).await;
        }
        self.run().await
    }

    /// The cadence after a check that took `took`, when preflight measured it: the set grows as
    /// fixes pass, and a rule that joins it may be slow, so the batch follows the set's cost.
    async fn retime(&mut self, took: Duration) -> LoopResult<u32> {
        if let Some(every) = retimed(self.state, took)
            && every != self.state.regression_every()
        {
            self.state.set_regression_every(every);
            self.ralph.journal.set_regression_every(every).await?;
        }
        Ok(self.state.regression_every())
    }

    /// The batch is clean: its newest snapshot becomes the checkpoint; older snapshots go.
    async fn promote(&mut self) -> LoopResult<()> {
        let head = self.state.head().to_string();
        let confirmed = self.ralph.journal.pending_fixes().await?;
        self.ralph.journal.confirm_fixes(&head).await?;
        self.ralph.remember(confirmed).await?;
        let (old, pending) = self.state.promote();
        let fixes = pending.len();
        for k in pending {
            if k.snapshot != head {
                self.ralph.drop_snapshot(&k.snapshot).await?;
            }
        }
        if old != head && !self.state.pinned(&old) {
            self.ralph.drop_snapshot(&old).await?;
        }
        self.ralph.note(None, EventData::Checkpoint { snapshot: head, replaced: old, fixes: Some(fixes) }).await
    }

    /// Finds the first fix after which what the check `found` goes wrong, by binary search over
    /// the batch's snapshots (s0 is the checkpoint, si the snapshot after pending fix i), probing
    /// only that: the rules that do not pass, the guard, or the whole scan of `scanned`.
    async fn bisect(&mut self, mut found: Found, scanned: &[String]) -> LoopResult<()> {
        // At the checkpoint the set passed and access and health held. A rule that fails there
        // too was not broken by this batch (unstable); a guard or a scan that fails there too is
        // not the batch's doing either, and no fix is there to blame.
        let at_checkpoint = self.probe(0, &found, scanned).await?;
        if let Some(broken) = at_checkpoint.guard.clone() {
            // Damage from a fix kept before the batch, showing late: those are bisected.
            return Proof::new(self.ralph, self.state).guard_fails(broken).await;
        }
        if let Some(problem) = at_checkpoint.problem() {
            return Err(LoopError::CheckpointFails { checkpoint: self.state.checkpoint().to_string(), problem });
        }
        let unstable = at_checkpoint.rule_ids();
        for r in &unstable {
            self.state.unwatch(r);
            self.ralph.mark_unstable(r, "failed the batch check, and fails again at the checkpoint where it passed").await?;
        }
        found.rules.retain(|(r, _)| !unstable.contains(r));
        if found.clean() {
            self.ralph.restore(self.state.head()).await?;
            return self.promote().await;
        }
        let (mut lo, mut hi, mut probes) = (1, self.state.pending().len(), 0);
        let mut at_hi = found.clone();
        while lo < hi {
            let mid = (lo + hi) / 2;
            probes += 1;
            let at_mid = self.probe(mid, &found, scanned).await?;
            if at_mid.clean() {
                lo = mid + 1;
            } else {
                (hi, at_hi) = (mid, at_mid);
            }
        }
        let (culprit, dropped) = self.state.blame(lo);
        self.ralph.restore(self.state.head()).await?;
        self.settle(&culprit, &dropped, &at_hi, probes).await
    }

    /// The guest at snapshot `i` of the batch (0: the checkpoint), checked for what `wanted`
    /// found at the head: the guard when it failed there; the whole scan of `scanned` when it
    /// could not run there; else only the rules that did not pass there and are expected to pass
    /// at `i`.
    async fn probe(&self, i: usize, wanted: &Found, scanned: &[String]) -> LoopResult<Found> {
        let snapshot = if i == 0 { self.state.checkpoint().to_string() } else { self.state.pending()[i - 1].snapshot.clone() };
        self.ralph.restore(&snapshot).await?;
        let expected = expected(self.state, &wanted.rule_ids(), i);
        let rules = if wanted.scan.is_some() { scanned.to_vec() } else { expected.clone() };
        let (guard, scan) = match wanted.guard {
            Some(_) => {
                let (g, s) = self.ralph.check_now(&rules).await;
                (Some(g), s)
            }
            None => (None, self.ralph.scan_some(&rules).await),
        };
        Ok(Found::read(guard, &scan, &expected))
    }

    /// Records the culprit and the dropped fixes, deletes their snapshots, reflects, and maybe
    /// escalates. The dropped fixes' rules reopen; `pick` replays them first.
    async fn settle(&mut self, culprit: &Kept, dropped: &[Kept], found: &Found, probes: usize) -> LoopResult<()> {
        let row = self.ralph.journal.pending_fixes().await?.into_iter().find(|a| a.id == culprit.attempt);
        let trial =
            row.as_ref().map_or_else(|| Trial { id: culprit.attempt, n: 0, rule: culprit.rule.clone(), plan: String::new() }, Trial::of);
        let fix_script = row.map(|a| a.spec.fix_script).unwrap_or_default();
        let blame = blame(culprit, found);
        let (reason, diagnostics) = (blame.reason.clone(), blame.diagnostics.clone());
        self.ralph.journal.roll_back_fixes(&blame, &dropped.iter().map(|k| k.attempt).collect::<Vec<_>>()).await?;
        for k in std::iter::once(culprit).chain(dropped) {
            self.state.unwatch(&k.rule);
            self.ralph.drop_snapshot(&k.snapshot).await?;
        }
        let replay = dropped.iter().map(|k| k.rule.clone()).collect();
        let found = Regressed::Bisected { culprit: culprit.rule.clone(), regressions: found.rule_ids(), probes, replay };
        self.ralph.note(Some(&culprit.rule), EventData::RegressionFound(found)).await?;

        let ended = Ended { trial, verdict: blame.verdict, reason, fix_script, diagnostics };
        Reflection::new(self.ralph).reflect_or_escalate(&ended).await
    }
}

/// The culprit's verdict from what its probe found: the guard's (`lockout`, `guest_down`,
/// `health_broken`), `scan_broken` when the scan could not run, `still_failing` when its own rule
/// no longer reads `pass` right after it, else a regression of the rules it broke.
fn blame(culprit: &Kept, found: &Found) -> Culprit {
    const BY: &str = "found by the batch's regression check, bisected to this fix";
    let others: Vec<&(String, ScanResult)> = found.rules.iter().filter(|(r, _)| *r != culprit.rule).collect();
    let own = found.rules.iter().find(|(r, _)| *r == culprit.rule).map(|(_, result)| *result);
    let listed = |rules: &[&(String, ScanResult)]| rules.iter().map(|(r, o)| format!("{r} ({o})")).collect::<Vec<_>>().join(", ");
    let (verdict, reason, how) = match (&found.guard, &found.scan, own) {
        (Some((v, detail)), ..) => (*v, format!("{detail} ({BY})"), "the guard failing right after it"),
        (None, Some(e), _) => (Verdict::ScanBroken, format!("the scan could not run: {e} ({BY})"), "the scan failing right after it"),
        (None, None, Some(result)) => {
            let also = if others.is_empty() { String::new() } else { format!("; these do not pass with it either: {}", listed(&others)) };
            (
                Verdict::StillFailing,
                format!("the rule's result after the fix is {result} ({BY}){also}"),
                "its own rule not passing right after it",
            )
        }
        (None, None, None) => (
            Verdict::Regression,
            format!("rules that passed now do not read pass: {} ({BY})", listed(&others)),
            "them passing before this fix and not after it",
        ),
    };
    let regressions: Vec<String> = if verdict == Verdict::Regression || verdict == Verdict::StillFailing {
        others.iter().map(|(r, _)| r.clone()).collect()
    } else {
        Vec::new()
    };
    let what = found.problem().unwrap_or_else(|| format!("{} rule(s) not passing", found.rules.len()));
    let diagnostics = format!(
        "The fix passed its own rescan, the health check and the lockout guard. The batch's regression check then found {what}; \
         probing the batch's snapshots showed {how}.\nrule result: {}\nregressions: {}",
        own.map_or("pass", ScanResult::as_str),
        regressions.join(", ")
    );
    Culprit { id: culprit.attempt, verdict, rule_id: culprit.rule.clone(), reason, regressions, diagnostics, rule_result: own }
}

/// The cadence a check that took `took` calls for; `None` when the cadence is set, not measured.
fn retimed(state: &RunState, took: Duration) -> Option<u32> {
    state.one_rule().map(|one| batch_size(one + took, one))
}

/// The regressed rules expected to pass at snapshot `i`: all but those a later fix in the batch
/// fixed (before that fix they failed, as they did at the baseline).
fn expected(state: &RunState, failed: &[String], i: usize) -> Vec<String> {
    failed.iter().filter(|r| !state.pending()[i..].iter().any(|k| &k.rule == *r)).cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::AttemptId;

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn a_cheap_regression_set_rides_in_every_rescan() {
        // Measured on the test VM: standard, with the set 12.0 s, one rule 9.7 s.
        assert_eq!(batch_size(secs(12.0), secs(9.7)), 1);
        assert_eq!(batch_size(secs(5.0), secs(9.0)), 1, "noise: the set measured faster than one rule");
    }

    #[test]
    fn an_expensive_regression_set_is_batched_and_capped() {
        // ANSSI high: with the set about 170 s, one rule about 10 s.
        assert_eq!(batch_size(secs(170.0), secs(10.0)), MAX_BATCH);
        assert_eq!(batch_size(secs(40.0), secs(10.0)), 6, "30 s more: six fixes pay 5 s each");
        assert_eq!(batch_size(secs(4000.0), secs(10.0)), MAX_BATCH);
        assert_eq!(batch_size(secs(30.0), Duration::ZERO), MAX_BATCH, "no division by zero");
    }

    #[test]
    fn the_cadence_follows_each_checks_time() {
        // ANSSI high: a one-rule rescan 2.6 s; the set's checks 11 s at first, 26 s later.
        let state = state(4).with_cadence(4, Some(secs(2.6)));
        assert_eq!(retimed(&state, secs(5.0)), Some(4));
        assert_eq!(retimed(&state, secs(11.0)), Some(8));
        assert_eq!(retimed(&state, secs(26.0)), Some(MAX_BATCH));
        assert_eq!(retimed(&state, secs(95.0)), Some(MAX_BATCH), "a walker joined the set");
        assert_eq!(retimed(&state, secs(1.0)), Some(1), "a cheap set rides in every rescan again");
        assert_eq!(retimed(&state.with_cadence(4, None), secs(26.0)), None, "a cadence set by hand stays");
    }

    fn kept(rule: &str) -> Kept {
        Kept { attempt: AttemptId(0), rule: rule.into(), snapshot: format!("s-{rule}") }
    }

    fn state(every: u32) -> RunState {
        let booted = Booted { snapshot: "baseline".into(), through: AttemptId(0) };
        RunState::at("c".into(), booted, "temper-r1-".into()).with_cadence(every, None)
    }

    #[test]
    fn a_rule_fixed_later_in_the_batch_is_not_expected_before_its_fix() {
        let state = state(3).with_pending(vec![kept("a"), kept("b"), kept("c")]);
        let failed = vec!["b".to_string(), "x".to_string()];
        assert_eq!(expected(&state, &failed, 0), ["x"], "b failed at the checkpoint: not yet fixed");
        assert_eq!(expected(&state, &failed, 1), ["x"]);
        assert_eq!(expected(&state, &failed, 2), ["b", "x"], "after b's fix, b must pass");
        assert_eq!(expected(&state, &failed, 3), ["b", "x"]);
        assert_eq!(state.head(), "s-c");
        assert!(state.batch_due());
    }
}

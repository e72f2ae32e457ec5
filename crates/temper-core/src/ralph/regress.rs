//! Step 4, the regression set, for large profiles: kept fixes wait in a batch, each with its own
//! snapshot, for one regression rescan. A clean batch makes its newest snapshot the checkpoint.
//! A batch that regressed is bisected over its snapshots (rescanning only the broken rules), the
//! fix that broke them becomes a `regression` verdict, and the fixes kept after it are replayed.
use super::steps::{Check, Reflection};
use super::trial::{Ended, Trial};
use std::time::{Duration, Instant};

use crate::journal::{Culprit, EventData, Regressed, RuleStatus};
use temper_scap::Outcome;

#[cfg(test)]
use super::Booted;
use super::{Ahead, Kept, LoopResult, Phase, Ralph, RunState};
use crate::verdict::Verdict;

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

    /// The rules of `rules` that fail or error now, in one oscap call.
    async fn failing(&self, rules: &[String]) -> LoopResult<Vec<String>> {
        if rules.is_empty() {
            return Ok(Vec::new());
        }
        Ok(self.scanner.scan(self.guest, rules).await?.failing(rules))
    }

    /// `failing`, at a snapshot.
    pub(super) async fn failing_at(&self, snapshot: &str, rules: &[String]) -> LoopResult<Vec<String>> {
        if rules.is_empty() {
            return Ok(Vec::new());
        }
        self.restore(snapshot).await?;
        self.failing(rules).await
    }
}

impl Check<'_, '_> {
    /// Rescans the regression set once for the whole batch, with the rules not applicable so far
    /// (`applicable.rs`); re-derives the cadence from the check's time (unless rules apply now);
    /// promotes the batch (then takes up the rules that apply now), or bisects it.
    #[tracing::instrument(name = "regression_check", skip_all, fields(fixes = self.state.pending().len()))]
    pub(super) async fn run(mut self) -> LoopResult<()> {
        if self.state.pending().is_empty() {
            return Ok(());
        }
        self.ralph.phase(Phase::Regression, None, 0).await?;
        let watched = self.ralph.watched().await?;
        let mut rules: Vec<String> = self.state.regression_set().iter().chain(&watched).cloned().collect();
        // The next stock fixes' evidence, for their attempts: they defer their rescans to the
        // next check, so this one looks ahead for them.
        let next = self.ralph.next_stock(self.state.regression_every() as usize, &rules).await?;
        rules.extend(next.iter().cloned());
        let started = Instant::now();
        let scan = if rules.is_empty() { None } else { Some(self.ralph.scanner.scan(self.ralph.guest, &rules).await?) };
        let took = started.elapsed();
        let failed = scan.as_ref().map(|s| s.failing(self.state.regression_set())).unwrap_or_default();
        let failed = self.await_reboot(failed).await?;
        // Rules that apply now had their checks run once (a tree walk, say): not the set's cost.
        let applies = scan.as_ref().is_some_and(|s| watched.iter().any(|r| s.outcome(r).is_some_and(|o| o != Outcome::NotApplicable)));
        let every = if applies { self.state.regression_every() } else { self.retime(took).await? };
        let fixes = self.state.pending().len();
        let stalls = scan.as_ref().map_or(0, |s| s.stalls);
        let (rules, watched_n, secs) = (self.state.regression_set().len(), watched.len(), took.as_secs_f64());
        let check = EventData::RegressionCheck { fixes, rules, watched: watched_n, failed: failed.clone(), secs, stalls, every, problem: None };
        self.ralph.note(None, check).await?;
        if !failed.is_empty() {
            return self.bisect(failed).await;
        }
        self.promote().await?;
        if let Some(scan) = scan {
            self.state.look_ahead(Some(Ahead::of(self.state.head(), &scan, &next)).filter(|a| !a.evidence.is_empty()));
            self.ralph.now_applicable(self.state, &scan, &watched).await?;
        }
        Ok(())
    }

    /// The batch's deferred stock fixes that take effect after a reboot and whose rules the check
    /// read failing: kept for the run's reboot proof (`needs_reboot`), as `judge` keeps such a fix
    /// read failing live, and out of the regression set until the proof sees them pass. Returns
    /// the rest of `failed`.
    async fn await_reboot(&mut self, failed: Vec<String>) -> LoopResult<Vec<String>> {
        if failed.is_empty() {
            return Ok(failed);
        }
        let pending = self.ralph.journal.pending_fixes().await?;
        let mut rest = Vec::new();
        for rule in failed {
            let Some(a) = pending.iter().rfind(|a| a.spec.rule_id == rule && deferred(a)).filter(|_| self.ralph.stock_needs_reboot(&rule))
            else {
                rest.push(rule);
                continue;
            };
            let reason = "the stock fix takes effect after a reboot and the rule reads fail at the batch's check until then: \
                          kept for the run's reboot proof";
            self.ralph.journal.await_reboot(a.id, reason).await?;
            self.state.unwatch(&rule);
            let verdict = EventData::Verdict { attempt: Some(a.n), verdict: Verdict::NeedsReboot, reason: reason.into() };
            self.ralph.note(Some(&rule), verdict).await?;
        }
        Ok(rest)
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

    /// Finds the first fix after which a regressed rule fails, by binary search over the batch's
    /// snapshots (s0 is the checkpoint, si the snapshot after pending fix i).
    async fn bisect(&mut self, failed: Vec<String>) -> LoopResult<()> {
        // A rule that fails at the checkpoint too was not broken by this batch.
        let at_checkpoint = expected(self.state, &failed, 0);
        let unstable = self.ralph.failing_at(self.state.checkpoint(), &at_checkpoint).await?;
        for r in &unstable {
            self.state.unwatch(r);
            self.ralph.mark_unstable(r, "failed the batch check, and fails again at the checkpoint where it passed").await?;
        }
        let failed: Vec<String> = failed.into_iter().filter(|r| !unstable.contains(r)).collect();
        if failed.is_empty() {
            self.ralph.restore(self.state.head()).await?;
            return self.promote().await;
        }
        let (mut lo, mut hi, mut probes) = (1, self.state.pending().len(), 0);
        while lo < hi {
            let mid = (lo + hi) / 2;
            probes += 1;
            let snapshot = self.state.pending()[mid - 1].snapshot.clone();
            if self.ralph.failing_at(&snapshot, &expected(self.state, &failed, mid)).await?.is_empty() {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let broken = expected(self.state, &failed, lo);
        let (culprit, dropped) = self.state.blame(lo);
        self.ralph.restore(self.state.head()).await?;
        self.settle(&culprit, &dropped, &broken, probes).await
    }

    /// Records the culprit and the dropped fixes, deletes their snapshots, reflects, and maybe
    /// escalates. The dropped fixes' rules reopen; `pick` replays them first.
    async fn settle(&mut self, culprit: &Kept, dropped: &[Kept], broken: &[String], probes: usize) -> LoopResult<()> {
        let row = self.ralph.journal.pending_fixes().await?.into_iter().find(|a| a.id == culprit.attempt);
        let trial =
            row.as_ref().map_or_else(|| Trial { id: culprit.attempt, n: 0, rule: culprit.rule.clone(), plan: String::new() }, Trial::of);
        let deferred = row.as_ref().is_some_and(deferred);
        let fix_script = row.map(|a| a.spec.fix_script).unwrap_or_default();
        let blame = blame(culprit, broken, deferred);
        let (reason, diagnostics) = (blame.reason.clone(), blame.diagnostics.clone());
        self.ralph.journal.roll_back_fixes(&blame, &dropped.iter().map(|k| k.attempt).collect::<Vec<_>>()).await?;
        for k in std::iter::once(culprit).chain(dropped) {
            self.state.unwatch(&k.rule);
            self.ralph.drop_snapshot(&k.snapshot).await?;
        }
        let replays: Vec<&str> = dropped.iter().map(|k| k.rule.as_str()).collect();
        let (regressions, replay) = (broken.to_vec(), replays.iter().map(|r| r.to_string()).collect());
        let found = Regressed::Bisected { culprit: culprit.rule.clone(), regressions, probes, replay };
        self.ralph.note(Some(&culprit.rule), EventData::RegressionFound(found)).await?;

        let ended = Ended { trial, verdict: blame.verdict, reason, fix_script, diagnostics };
        Reflection::new(self.ralph).reflect_or_escalate(&ended).await
    }
}

/// A pending fix whose rescan waited for the batch's check: kept with no rule result yet.
fn deferred(a: &crate::journal::Attempt) -> bool {
    a.findings.rule_result.is_none()
}

/// The culprit's verdict: `still_failing` when its own rule fails right after it (a deferred
/// stock fix, whose rule this check scanned first), else a regression of the rules it broke.
fn blame(culprit: &Kept, broken: &[String], deferred: bool) -> Culprit {
    let others: Vec<&str> = broken.iter().filter(|r| **r != culprit.rule).map(String::as_str).collect();
    let own = broken.contains(&culprit.rule);
    let (verdict, reason, how) = if own {
        let also = if others.is_empty() { String::new() } else { format!("; these fail with it too: {}", others.join(", ")) };
        let reason = format!("the rule's result after the fix is fail (found by the batch's regression check){also}");
        (Verdict::StillFailing, reason, "its own rule failing right after it")
    } else {
        let reason = format!("rules that passed now fail: {} (found by the batch's regression check)", broken.join(", "));
        (Verdict::Regression, reason, "them passing before this fix and failing after it")
    };
    let checked = if deferred {
        "The fix exited 0 and passed the health check and the lockout guard; its rule was left to the batch's check."
    } else {
        "The fix passed its own rescan, the health check and the lockout guard."
    };
    let diagnostics = format!(
        "{checked} The batch's regression rescan then found {} failing; rescanning them on the batch's snapshots \
         showed {how}.\nrule result: {}\nregressions: {}",
        broken.len(),
        if own { "fail" } else { "pass" },
        others.join(", ")
    );
    let rule_result = own.then_some(crate::journal::ScanResult::Fail);
    let regressions = others.iter().map(|r| r.to_string()).collect();
    Culprit { id: culprit.attempt, verdict, rule_id: culprit.rule.clone(), reason, regressions, diagnostics, rule_result }
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

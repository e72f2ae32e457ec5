//! A proven plan's steps in batches (`temper run --plan`). The next steps in the plan's order (up
//! to [`PLAN_BATCH`]) are applied together and checked once: one rescan
//! of their rules with the regression set and the rules not applicable so far, beside the lockout
//! guard and the health check. A clean batch is kept with one snapshot, the new checkpoint. A
//! failing one is bisected over its prefixes, each applied again on the restored checkpoint, to
//! the first step the checks fail with: that step gets its verdict and its rule goes to the
//! normal loop; the other steps are set aside and applied again in the next batch.
//!
//! A clean batch's check also takes the evidence of the rules the next batch is likely to take
//! (`Ahead`): the guest stays as the check saw it until that batch starts, so the next batch
//! rescans only the rules it lacks.
use super::steps::{Batch, Check, Reflection};
use super::trial::{Ended, Trial};
use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

use temper_scap::oval::Evidence;

use super::ahead::Seen;
use super::attempt::{Applied, Origin, diagnostics, evaluation};
use super::pick::Pick;
use super::{Ahead, LoopResult, Phase, RunState};
use crate::agent::FixSource;
use crate::checks;
use crate::journal::{AttemptId, AttemptState, Evaluation, EventData, KeptFix, Picked, PickedBy, PlanBatched, PlanBisected, ScanResult};
use crate::plan::PlannedFix;
use crate::policy::DenyList;
use crate::scan::Scan;
use crate::verdict::{Checks, Guard, Reboot, Rescan, Verdict};

/// The most steps one plan batch applies: twice a regression batch's most, as each step was
/// proven on the plan's source target and a batch fails rarely (none in the ANSSI plan's 95
/// steps for the rules failing at baseline); one that fails costs about log2(32) = 5 checks.
pub const PLAN_BATCH: usize = 2 * super::regress::MAX_BATCH as usize;

/// A step of the batch, with its attempt.
struct Step {
    fix: PlannedFix,
    trial: Trial,
}

/// The batch's first steps, applied on the checkpoint and checked.
struct Checked {
    /// One per step, judged on its own rule with the shared guard.
    evaluations: Vec<Evaluation>,
    /// One per step: its verdict keeps it (fixed, or awaiting the run's reboot proof).
    kept: Vec<bool>,
    /// Regression-set rules that fail.
    regressions: Vec<String>,
    guard: Option<String>,
    scan: Option<Scan>,
    secs: f64,
    /// The guest's journal errors, read when the check failed.
    journal: String,
}

impl Checked {
    fn clean(&self) -> bool {
        self.regressions.is_empty() && self.kept.iter().all(|k| *k)
    }

    /// The steps' rules whose checks failed, then the regression set's.
    fn failed(&self, steps: &[Step]) -> Vec<String> {
        let own = steps.iter().zip(&self.kept).filter(|(_, k)| !**k).map(|(s, _)| s.fix.rule.clone());
        own.chain(self.regressions.iter().cloned()).collect()
    }
}

impl Batch<'_, '_> {
    /// Applies the next batch of plan steps when two or more are due; false when fewer are (a
    /// single step goes the way any pick goes, `planned.rs`), or while the batch waits for the
    /// loop's other rules (`Tail`).
    #[tracing::instrument(name = "plan_batch", skip_all)]
    pub(super) async fn run(&self, state: &mut RunState) -> LoopResult<bool> {
        let tail = self.ralph.plan_tail(self.room(state)).await?;
        if tail.waits || tail.due.len() < 2 {
            return Ok(false);
        }
        let due = tail.due;
        if !state.pending().is_empty() {
            // A batch starts from a checkpoint: fixes kept since wait for their check first.
            Check::new(self.ralph, state).run().await?;
            return Ok(true);
        }
        self.ralph.phase(Phase::PlanBatch, Some(&due[0].rule), 0).await?;
        *state.worked_mut() += due.len();
        let ahead = state.take_ahead().and_then(|a| a.at(state.head()));
        let mut before = self.before_all(&due, ahead).await;
        let bans = self.ralph.journal.memory().bans(self.ralph.recall()).await?;
        self.attempt.note_shared_bans(state, &due[0].rule, &bans).await?;
        let deny = self.attempt.deny_list(&bans).await?;
        let watched = self.ralph.watched().await?;
        let next = self.next_evidence(state, &tail.after, &watched);
        let mut steps = Vec::new();
        for fix in due {
            let (seen, looked_ahead) = before.remove(&fix.rule).unwrap_or((None, false));
            // Read passing before the batch: other rules' fixes fixed it, and its step, which
            // would do nothing here, is not applied.
            if seen.as_ref().is_some_and(Seen::passes) {
                self.ralph.passes_already(state, &fix.rule).await?;
                continue;
            }
            steps.extend(self.start_step(state, fix, (seen.and_then(|s| s.evidence), looked_ahead), &deny).await?);
        }
        if steps.is_empty() {
            return Ok(true);
        }
        let checked = self.apply_and_check(state, &steps, &watched, &next, true).await?;
        if checked.clean() {
            self.keep_batch(state, &steps, &checked, &watched).await?;
            let ahead = checked.scan.as_ref().map(|s| Ahead::of(state.head(), s, &next));
            state.look_ahead(ahead);
            return Ok(true);
        }
        self.bisect_batch(state, &steps, checked).await.map(|()| true)
    }

    /// How many steps the next batch may take: [`PLAN_BATCH`], or what `--max-rules` leaves.
    fn room(&self, state: &RunState) -> usize {
        self.ralph.settings.max_rules.map_or(PLAN_BATCH, |m| m.saturating_sub(state.worked()).min(PLAN_BATCH))
    }

    /// The rules whose evidence the batch's check takes for the next batch: the first open steps
    /// `after` it, and those of rules not applicable so far (`watched`, rescanned anyway), which
    /// the batch may make applicable. Cheap ones only, as for [`Self::before_all`].
    fn next_evidence(&self, state: &RunState, after: &[PlannedFix], watched: &[String]) -> Vec<String> {
        let next = after.iter().take(self.room(state)).map(|s| s.rule.clone());
        let applicable_next = self.ralph.settings.plan.iter().filter(|s| watched.contains(&s.rule)).map(|s| s.rule.clone());
        self.ralph.scanner.cheap_evidence(&next.chain(applicable_next).collect::<Vec<_>>())
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
        let rules = self.ralph.scanner.cheap_evidence(&missing);
        if rules.is_empty() {
            return out;
        }
        match self.ralph.scanner.scan(self.ralph.guest, &rules).await {
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
        self.ralph.note(Some(&fix.rule), EventData::Pick(Picked { plan: plan.clone(), by: PickedBy::Plan { plan_step: fix.n } })).await?;
        let n = self.ralph.journal.rule(&fix.rule).await?.map_or(0, |r| r.attempts as u32) + 1;
        let ctx = self.attempt.fix_context(&fix.rule, &plan, n, evidence).await?;
        // A derived step: derived again from this target's evidence, never the source's.
        let mut fix = fix;
        let derived = fix.derived.then(|| self.ralph.derive_step(fix.n, &ctx));
        if let Some(Ok(again)) = &derived {
            fix.fix = again.clone();
        }
        let origin = Origin { source: FixSource::Plan, replayed: false, looked_ahead };
        let trial = self.attempt.start_attempt(state, &ctx, &fix.fix, origin).await?;
        if let Some(Err(why)) = derived {
            if let Some(ended) = self.attempt.unexecuted(trial, Verdict::Refused, why, &fix.fix.fix_script).await? {
                Reflection::new(self.ralph).reflect(&ended).await?;
            }
            return Ok(None);
        }
        for script in [&fix.fix.fix_script, &fix.fix.revert_script] {
            if let Err(refusal) = deny.check(script) {
                if let Some(ended) = self.attempt.unexecuted(trial, Verdict::Refused, refusal.to_string(), &fix.fix.fix_script).await? {
                    Reflection::new(self.ralph).reflect(&ended).await?;
                }
                return Ok(None);
            }
        }
        Ok(Some(Step { fix, trial }))
    }

    /// Applies `steps` in order on the guest as it stands, then checks them: their rules, the
    /// regression set and `watched` in one rescan, beside the guard, which also takes the
    /// evidence of `ahead`. `first`: the batch's own application (its attempts become `applied`,
    /// and its check is journaled), not a probe.
    async fn apply_and_check(
        &self,
        state: &RunState,
        steps: &[Step],
        watched: &[String],
        ahead: &[String],
        first: bool,
    ) -> LoopResult<Checked> {
        let mut applied = Vec::new();
        for s in steps {
            applied.push(self.attempt.apply(&s.fix.fix).await);
            if first {
                self.ralph.journal.set_attempt_state(s.trial.id, AttemptState::Applied).await?;
            }
        }
        let checked = self.check(state, steps, &applied, watched, ahead).await?;
        if first {
            let (rules, watched, secs) = (state.regression_set().len(), watched.len(), checked.secs);
            let (steps_n, failed, guard) = (steps.iter().map(|s| s.fix.n).collect(), checked.failed(steps), checked.guard.clone());
            self.ralph.note(None, EventData::PlanBatch(PlanBatched { steps: steps_n, rules, watched, failed, guard, secs })).await?;
        }
        Ok(checked)
    }

    async fn check(
        &self,
        state: &RunState,
        steps: &[Step],
        applied: &[Applied],
        watched: &[String],
        ahead: &[String],
    ) -> LoopResult<Checked> {
        let mut rules: Vec<String> = steps.iter().map(|s| s.fix.rule.clone()).collect();
        for r in state.regression_set().iter().chain(watched).chain(ahead) {
            if !rules.contains(r) {
                rules.push(r.clone());
            }
        }
        let started = Instant::now();
        let (guard, scan) = tokio::join!(self.ralph.guard(), self.ralph.scanner.scan(self.ralph.guest, &rules));
        let secs = started.elapsed().as_secs_f64();
        let guard = Guard::from(guard);
        let regressions = scan.as_ref().map(|s| s.not_passing(state.regression_set())).unwrap_or_default();
        let evaluations = steps
            .iter()
            .zip(applied)
            .map(|(s, a)| {
                let rescan = match &scan {
                    Ok(scan) => Rescan::Read(ScanResult::from(scan.outcome(&s.fix.rule))),
                    Err(e) => Rescan::Failed(e.to_string()),
                };
                // A step that takes effect at boot (its content says so, or the run kept it for its
                // proof) is kept for the proof when its rule still fails live, as any fix is.
                let reboot = match (s.fix.needs_reboot, self.ralph.settings.reboot.is_some()) {
                    (false, _) => Reboot::No,
                    (true, true) => Reboot::WithProof,
                    (true, false) => Reboot::WithoutProof,
                };
                let checks = Checks { exit: a.exit(), guard: guard.clone(), rescan, regressions: Vec::new(), reboot, batched: false };
                let mut e = evaluation(a, &checks, scan.as_ref().ok(), &s.fix.rule);
                // The check is shared: each step is charged its share, so the run's times add up.
                e.findings.evaluate_ms = Some((secs * 1000.0 / steps.len() as f64) as i64);
                e
            })
            .collect::<Vec<Evaluation>>();
        let kept = evaluations.iter().map(|e| self.attempt.kept(e.verdict)).collect();
        let problem = guard.failure().map(|(_, d)| d);
        let mut checked = Checked { evaluations, kept, regressions, guard: problem, scan: scan.ok(), secs, journal: String::new() };
        if !checked.clean() {
            checked.journal = checks::journal_errors(self.ralph.guest).await;
        }
        Ok(checked)
    }

    /// A clean batch: one snapshot, the new checkpoint, with every step kept in one transaction.
    async fn keep_batch(&self, state: &mut RunState, steps: &[Step], checked: &Checked, watched: &[String]) -> LoopResult<()> {
        let name = format!("{}a{}", state.prefix(), steps[0].trial.id);
        let (first, last) = (steps[0].fix.n, steps[steps.len() - 1].fix.n);
        self.ralph.take_snapshot(&name, &format!("plan steps {first} to {last} fixed")).await?;
        let fixes: Vec<KeptFix> = steps
            .iter()
            .zip(&checked.evaluations)
            .map(|(s, evaluation)| KeptFix { id: s.trial.id, rule_id: s.fix.rule.clone(), evaluation: evaluation.clone() })
            .collect();
        self.ralph.journal.record_fixes(&fixes, &name).await?;
        let share = (checked.secs * 1000.0) as i64 / steps.len() as i64;
        for f in &fixes {
            let (verdict, reason) = (f.evaluation.verdict, f.evaluation.verdict_reason.clone());
            let n = steps.iter().find(|s| s.trial.id == f.id).map_or(0, |s| i64::from(s.trial.n));
            self.ralph.note(Some(&f.rule_id), EventData::Verdict { attempt: Some(n), verdict, reason }).await?;
            self.ralph.journal.add_rule_time(&f.rule_id, share).await?;
            // One awaiting its reboot joins the regression set once the proof sees its rule pass.
            if verdict == Verdict::Fixed {
                self.ralph.now_passes(state, &f.rule_id);
            }
        }
        let ids: Vec<AttemptId> = steps.iter().map(|s| s.trial.id).collect();
        self.ralph.remember(self.ralph.journal.attempts().await?.into_iter().filter(|a| ids.contains(&a.id))).await?;
        let old = state.set_checkpoint(name.clone());
        if !state.pinned(&old) {
            self.ralph.drop_snapshot(&old).await?;
        }
        self.ralph.note(None, EventData::Checkpoint { snapshot: name, replaced: old, fixes: Some(steps.len()) }).await?;
        if let Some(scan) = &checked.scan {
            self.ralph.now_applicable(state, scan, watched).await?;
        }
        Ok(())
    }

    /// Finds the first step the checks fail with, by binary search over the batch's prefixes,
    /// each applied again on the checkpoint; that step's rule goes to the normal loop.
    async fn bisect_batch(&self, state: &mut RunState, steps: &[Step], mut full: Checked) -> LoopResult<()> {
        // A regression-set rule that fails at the checkpoint too was not broken by the batch.
        let unstable = self.ralph.not_passing_at(state.checkpoint(), &full.regressions).await?;
        for r in &unstable {
            state.unwatch(r);
            self.ralph.mark_unstable(r, "failed a plan batch's check, and fails again at the checkpoint where it passed").await?;
        }
        full.regressions.retain(|r| !unstable.contains(r));
        if full.clean() {
            self.ralph.restore(state.checkpoint()).await?;
            let why = "applied in a plan batch whose check failed only on rules that fail at the checkpoint too (unstable): \
                       applied again in the next batch";
            return self
                .ralph
                .journal
                .set_aside_attempts(&steps.iter().map(|s| s.trial.id).collect::<Vec<_>>(), why)
                .await
                .map_err(Into::into);
        }
        let (mut lo, mut hi, mut probes, mut at_hi) = (1, steps.len(), 0, full);
        while lo < hi {
            let mid = (lo + hi) / 2;
            probes += 1;
            self.ralph.restore(state.checkpoint()).await?;
            let c = self.apply_and_check(state, &steps[..mid], &[], &[], false).await?;
            if c.clean() {
                lo = mid + 1;
            } else {
                (hi, at_hi) = (mid, c);
            }
        }
        self.ralph.restore(state.checkpoint()).await?;
        let culprit = &steps[lo - 1];
        let e = blamed(&steps[..lo], at_hi);
        let (verdict, reason) = (e.verdict, e.verdict_reason.clone());
        self.ralph.journal.finish_attempt(culprit.trial.id, &e).await?;
        self.ralph
            .note(
                Some(&culprit.fix.rule),
                EventData::Verdict { attempt: Some(i64::from(culprit.trial.n)), verdict, reason: reason.clone() },
            )
            .await?;
        let again: Vec<&Step> = steps.iter().filter(|s| s.trial.id != culprit.trial.id).collect();
        let why = format!(
            "applied in a plan batch that failed its check; bisection found step {} ({}) failing it, so the batch was undone \
             and this step is applied again in a later batch",
            culprit.fix.n, culprit.fix.rule
        );
        self.ralph.journal.set_aside_attempts(&again.iter().map(|s| s.trial.id).collect::<Vec<_>>(), &why).await?;
        let (step, rule, again) = (culprit.fix.n, culprit.fix.rule.clone(), again.iter().map(|s| s.fix.n).collect());
        self.ralph
            .note(
                Some(&rule),
                EventData::PlanBisected(PlanBisected { step, rule: rule.clone(), verdict, reason: reason.clone(), probes, again }),
            )
            .await?;
        let diagnostics = e.findings.diagnostics.clone().unwrap_or_default();
        let ended = Ended { trial: culprit.trial.clone(), verdict, reason, fix_script: culprit.fix.fix.fix_script.clone(), diagnostics };
        Reflection::new(self.ralph).reflect(&ended).await?;
        // The normal loop takes the rule up now, as after a single step: the content's fix first.
        let preset = self.ralph.stock_after_plan(&rule, &culprit.fix.fix.fix_script);
        if preset.is_some() {
            let plan = format!("step {} of the proven plan failed; the normal loop takes the rule up", culprit.fix.n);
            self.attempt.work_on(state, Pick { rule_id: rule, plan, preset }).await?;
        }
        Ok(())
    }

    /// The rules with a plan attempt that counts (not one set aside or interrupted).
    pub(super) async fn plan_tried(&self) -> LoopResult<HashSet<String>> {
        let attempts = self.ralph.journal.attempts().await?;
        let counts = |a: &crate::journal::Attempt| a.spec.source == FixSource::Plan && a.state != AttemptState::Interrupted;
        Ok(attempts.into_iter().filter(counts).map(|a| a.spec.rule_id).collect())
    }
}

/// The culprit's evaluation (the last of `steps`) from the check of the first prefix that failed:
/// its own verdict when it failed on its own; else a regression of the rules the checks found
/// failing with it (the steps before it passed without it, as did the regression set).
fn blamed(steps: &[Step], at: Checked) -> Evaluation {
    let last = steps.len() - 1;
    let broken = at.failed(&steps[..last]);
    let own_failure = !at.kept[last];
    let mut e = at.evaluations.into_iter().nth(last).expect("a prefix has its last step");
    if !own_failure {
        e.verdict = Verdict::Regression;
        e.verdict_reason =
            format!("rules that passed now fail: {} (found by a plan batch's check, bisected to this step)", broken.join(", "));
        e.findings.regressions = broken;
    }
    e.revert_method = crate::journal::RevertMethod::Snapshot;
    e.findings.diagnostics = Some(diagnostics(&e, &at.journal));
    e
}

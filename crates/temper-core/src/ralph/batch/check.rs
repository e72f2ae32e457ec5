//! A plan batch's check: its steps applied and judged together, then kept with one snapshot or
//! bisected over their prefixes.
use std::time::Instant;
use temper_journal::Verdict;

use super::{PlanBatch, Step};
use crate::ralph::attempt::{ScriptRun, diagnostics, evaluation};
use crate::ralph::error::LoopResult;
use crate::ralph::retire::{retire, retire_passed};
use crate::ralph::state::{RunState, Stone, Stones};
use crate::ralph::trial::Ended;
use crate::ralph::trial::Pick;
use crate::scan::Scan;
use crate::verdict::{Checks, Guard, Reboot, Rescan};
use temper_journal::{AttemptId, AttemptState, Evaluation, EventData, KeptFix, PlanBatched, PlanBisected, ScanResult};

/// The batch's first steps, applied on the checkpoint and checked.
pub(super) struct BatchChecked {
    /// One per step, judged on its own rule with the shared guard.
    pub evaluations: Vec<Evaluation>,
    /// One per step: its verdict keeps it (fixed, or awaiting the run's reboot proof).
    pub kept: Vec<bool>,
    /// Regression-set rules that fail.
    pub regressions: Vec<String>,
    pub guard: Option<String>,
    pub scan: Option<Scan>,
    pub secs: f64,
    /// The guest's journal errors, read when the check failed.
    pub journal: String,
    /// Stepping stones taken while the steps were applied, each holding a prefix of the steps
    /// (at most 8 at once, thinned as the run's are: `state/stones.rs`).
    pub stones: Stones,
    /// The steps' scripts as they ran in the batch's own application.
    pub applied: Vec<ScriptRun>,
}

impl BatchChecked {
    pub(super) fn clean(&self) -> bool {
        self.regressions.is_empty() && self.kept.iter().all(|k| *k)
    }

    /// The steps' rules whose checks failed, then the regression set's.
    pub(super) fn failed(&self, steps: &[Step]) -> Vec<String> {
        let own = steps.iter().zip(&self.kept).filter(|(_, k)| !**k).map(|(s, _)| s.fix.rule.clone());
        own.chain(self.regressions.iter().cloned()).collect()
    }
}

impl PlanBatch<'_> {
    /// The batch's own application: `steps` applied in order on the checkpoint (their attempts
    /// become `applied`; a stepping stone each `stone_after` of script time), then checked: their
    /// rules, the regression set and `watched` in one rescan, beside the guard, which also takes
    /// the evidence of `ahead`. The check is journaled.
    pub(super) async fn apply_and_check(
        &self,
        state: &RunState,
        steps: &[Step],
        watched: &[String],
        ahead: &[String],
    ) -> LoopResult<BatchChecked> {
        let (mut applied, mut stones, mut since) = (Vec::new(), Stones::default(), std::time::Duration::ZERO);
        for (i, s) in steps.iter().enumerate() {
            let run = self.attempt.apply(&s.fix.fix).await;
            since += run.took();
            applied.push(run);
            self.books.journal().set_attempt_state(s.trial.id, AttemptState::Applied).await?;
            if i + 1 < steps.len() && since >= self.stone_after {
                let name = format!("{}s{}", state.prefix(), s.trial.id);
                self.machine.take_snapshot(&name, &format!("plan steps {} to {} applied", steps[0].fix.n, s.fix.n)).await?;
                let holds = steps[..=i].iter().map(|s| s.trial.id).collect();
                for gone in stones.add(Stone { snapshot: name, holds }) {
                    self.machine.drop_snapshot(&gone.snapshot).await?;
                }
                since = std::time::Duration::ZERO;
            }
        }
        let mut checked = self.check(state, steps, &applied, watched, ahead).await?;
        (checked.stones, checked.applied) = (stones, applied);
        let (rules, watched, secs) = (state.regression_set().len(), watched.len(), checked.secs);
        let (steps_n, failed, guard) = (steps.iter().map(|s| s.fix.n).collect(), checked.failed(steps), checked.guard.clone());
        self.books.note(None, EventData::PlanBatch(PlanBatched { steps: steps_n, rules, watched, failed, guard, secs })).await?;
        Ok(checked)
    }

    /// A bisection probe of `prefix`: the guest at the newest of the batch's `stones` that holds
    /// only steps of it (else at the checkpoint), the prefix's other steps applied again, then
    /// checked. A step the stone holds is judged by its first run (`first`), whose state it is.
    async fn probe(&self, state: &RunState, prefix: &[Step], stones: &Stones, first: &[ScriptRun]) -> LoopResult<BatchChecked> {
        let stone = stones.iter().rev().find(|s| s.holds.len() <= prefix.len());
        let (onto, held) = stone.map_or((state.checkpoint(), 0), |s| (s.snapshot.as_str(), s.holds.len()));
        self.machine.restore(onto).await?;
        let mut applied = first[..held].to_vec();
        for s in &prefix[held..] {
            applied.push(self.attempt.apply(&s.fix.fix).await);
        }
        self.check(state, prefix, &applied, &[], &[]).await
    }

    /// Deletes a failing batch's stones, once its probes are done.
    async fn drop_stones(&self, stones: &Stones) -> LoopResult<()> {
        for s in stones.iter() {
            self.machine.drop_snapshot(&s.snapshot).await?;
        }
        Ok(())
    }

    async fn check(
        &self,
        state: &RunState,
        steps: &[Step],
        applied: &[ScriptRun],
        watched: &[String],
        ahead: &[String],
    ) -> LoopResult<BatchChecked> {
        let mut rules: Vec<String> = steps.iter().map(|s| s.fix.rule.clone()).collect();
        for r in state.regression_set().iter().chain(watched).chain(ahead) {
            if !rules.contains(r) {
                rules.push(r.clone());
            }
        }
        let started = Instant::now();
        let (guard, scan) = tokio::join!(self.machine.guard(), self.machine.scan(&rules));
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
                let reboot = Reboot::of(s.fix.needs_reboot, self.proof);
                let checks = Checks { exit: a.exit(), guard: guard.clone(), rescan, regressions: Vec::new(), reboot, batched: false };
                let mut e = evaluation(a, &checks, scan.as_ref().ok(), &s.fix.rule);
                // The check is shared: each step is charged its share, so the run's times add up.
                e.findings.evaluate_ms = Some((secs * 1000.0 / steps.len() as f64) as i64);
                e
            })
            .collect::<Vec<Evaluation>>();
        let kept = evaluations.iter().map(|e| self.attempt.kept(e.verdict)).collect();
        let problem = guard.failure().map(|(_, d)| d);
        let mut checked = BatchChecked {
            evaluations,
            kept,
            regressions,
            guard: problem,
            scan: scan.ok(),
            secs,
            journal: String::new(),
            stones: Stones::default(),
            applied: Vec::new(),
        };
        if !checked.clean() {
            checked.journal = self.machine.journal_errors().await;
        }
        Ok(checked)
    }

    /// A clean batch: one snapshot, the new checkpoint, with every step kept in one transaction.
    pub(super) async fn keep_batch(
        &self,
        state: &mut RunState,
        steps: &[Step],
        checked: &BatchChecked,
        watched: &[String],
    ) -> LoopResult<()> {
        let name = format!("{}a{}", state.prefix(), steps[0].trial.id);
        let (first, last) = (steps[0].fix.n, steps[steps.len() - 1].fix.n);
        self.machine.take_snapshot(&name, &format!("plan steps {first} to {last} fixed")).await?;
        let fixes: Vec<KeptFix> = steps
            .iter()
            .zip(&checked.evaluations)
            .map(|(s, evaluation)| KeptFix { id: s.trial.id, rule_id: s.fix.rule.clone(), evaluation: evaluation.clone() })
            .collect();
        self.books.journal().record_fixes(&fixes, &name).await?;
        let share = (checked.secs * 1000.0) as i64 / steps.len() as i64;
        for f in &fixes {
            let (verdict, reason) = (f.evaluation.verdict, f.evaluation.verdict_reason.clone());
            let n = steps.iter().find(|s| s.trial.id == f.id).and_then(|s| s.trial.n);
            self.books.note(Some(&f.rule_id), EventData::Verdict { attempt: n, verdict, reason }).await?;
            self.books.journal().add_rule_time(&f.rule_id, share).await?;
            // One awaiting its reboot joins the regression set once the proof sees its rule pass.
            if verdict == Verdict::Fixed {
                self.ledger.now_passes(state, &f.rule_id);
            }
        }
        let ids: Vec<AttemptId> = steps.iter().map(|s| s.trial.id).collect();
        self.books.remember(self.books.journal().attempts().await?.into_iter().filter(|a| ids.contains(&a.id))).await?;
        let old = state.set_checkpoint(name.clone());
        retire(self.books, self.machine, state, old.clone(), &ids).await?;
        let passed = checked.stones.iter().map(|s| (s.snapshot.clone(), ids[s.holds.len()..].to_vec())).collect();
        retire_passed(self.books, self.machine, state, passed).await?;
        self.books.note(None, EventData::Checkpoint { snapshot: name, replaced: old, fixes: Some(steps.len()) }).await?;
        if let Some(scan) = &checked.scan {
            self.ledger.now_applicable(state, scan, watched).await?;
        }
        Ok(())
    }

    /// Finds the first step the checks fail with, by binary search over the batch's prefixes,
    /// each applied again on the checkpoint; that step's rule goes to the normal loop.
    pub(super) async fn bisect_batch(&self, state: &mut RunState, steps: &[Step], mut full: BatchChecked) -> LoopResult<()> {
        // The batch's stones serve its probes, then go: they hold steps not kept as they stand.
        let (stones, first) = (std::mem::take(&mut full.stones), std::mem::take(&mut full.applied));
        // A regression-set rule that fails at the checkpoint too was not broken by the batch.
        let unstable = self.machine.not_passing_at(state.checkpoint(), &full.regressions).await?;
        for r in &unstable {
            state.unwatch(r);
            self.ledger.mark_unstable(r, "failed a plan batch's check, and fails again at the checkpoint where it passed").await?;
        }
        full.regressions.retain(|r| !unstable.contains(r));
        if full.clean() {
            self.machine.restore(state.checkpoint()).await?;
            self.drop_stones(&stones).await?;
            let why = "applied in a plan batch whose check failed only on rules that fail at the checkpoint too (unstable): \
                       applied again in the next batch";
            return self
                .books
                .journal()
                .set_aside_attempts(&steps.iter().map(|s| s.trial.id).collect::<Vec<_>>(), why)
                .await
                .map_err(Into::into);
        }
        let (mut lo, mut hi, mut probes, mut at_hi) = (1, steps.len(), 0, full);
        while lo < hi {
            let mid = (lo + hi) / 2;
            probes += 1;
            let c = self.probe(state, &steps[..mid], &stones, &first).await?;
            if c.clean() {
                lo = mid + 1;
            } else {
                (hi, at_hi) = (mid, c);
            }
        }
        self.machine.restore(state.checkpoint()).await?;
        self.drop_stones(&stones).await?;
        let culprit = &steps[lo - 1];
        let e = blamed(&steps[..lo], at_hi);
        let (verdict, reason) = (e.verdict, e.verdict_reason.clone());
        self.books.journal().finish_attempt(culprit.trial.id, &e).await?;
        self.books.note(Some(&culprit.fix.rule), EventData::Verdict { attempt: culprit.trial.n, verdict, reason: reason.clone() }).await?;
        let again: Vec<&Step> = steps.iter().filter(|s| s.trial.id != culprit.trial.id).collect();
        let why = format!(
            "applied in a plan batch that failed its check; bisection found step {} ({}) failing it, so the batch was undone \
             and this step is applied again in a later batch",
            culprit.fix.n, culprit.fix.rule
        );
        self.books.journal().set_aside_attempts(&again.iter().map(|s| s.trial.id).collect::<Vec<_>>(), &why).await?;
        let (step, rule, again) = (culprit.fix.n, culprit.fix.rule.clone(), again.iter().map(|s| s.fix.n).collect());
        self.books
            .note(
                Some(&rule),
                EventData::PlanBisected(PlanBisected { step, rule: rule.clone(), verdict, reason: reason.clone(), probes, again }),
            )
            .await?;
        let diagnostics = e.findings.diagnostics.clone().unwrap_or_default();
        let ended = Ended { trial: culprit.trial.clone(), verdict, reason, fix_script: culprit.fix.fix.fix_script.clone(), diagnostics };
        self.escalator.reflect().reflect(&ended).await?;
        // The normal loop takes the rule up now, as after a single step: the content's fix first.
        let preset = self.offer.stock_fix(&rule, &culprit.fix.fix.fix_script);
        if preset.is_some() {
            let plan = format!("step {} of the proven plan failed; the normal loop takes the rule up", culprit.fix.n);
            self.attempt.work_on(state, Pick { rule_id: rule, plan, preset }).await?;
        }
        Ok(())
    }
}

/// The culprit's evaluation (the last of `steps`) from the check of the first prefix that failed:
/// its own verdict when it failed on its own; else a regression of the rules the checks found
/// failing with it (the steps before it passed without it, as did the regression set).
fn blamed(steps: &[Step], at: BatchChecked) -> Evaluation {
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
    e.revert_method = temper_journal::RevertMethod::Snapshot;
    e.findings.diagnostics = Some(diagnostics(&e, &at.journal));
    e
}

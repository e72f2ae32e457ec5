//! Steps 3 to 5: the Worker's single `apply_fix`, checked, run, evaluated, then kept or reverted.
use super::steps::{Attempter, Check, Reflection};
use super::trial::{Ended, Trial};
use std::time::Instant;

use super::ahead::Seen;
use super::pick::{Pick, Preset};
use super::rescan::Rescan;
use super::{LoopResult, Phase, Ralph, RunState};
use crate::agent::{AgentError, ApplyFix, FixContext, FixSource, Tried};
use crate::ban::BanScope;
use crate::checks::{self, GuardFailure};
use crate::journal::{AttemptSpec, AttemptState, Ban, Escalation, EscalationCause, Evaluation, EventData, Findings, ScanResult};
use crate::policy::{DenyList, DenySource};
use crate::scan::{Scan, tail};
use crate::script::{self, ScriptError};
use crate::verdict::{self, Checks, Exit, Guard, Reboot, Verdict};
use temper_scap::oval::Evidence;

/// What the fix script did.
pub(super) struct Applied {
    pub exit_code: Option<i64>,
    stdout: Option<String>,
    stderr: Option<String>,
    ms: i64,
    /// How the script ended, for the verdict.
    exit: Exit,
}

impl Applied {
    /// How the script ended, for the verdict.
    pub fn exit(&self) -> Exit {
        self.exit.clone()
    }
}

/// Where an attempt's fix and its evidence before came from.
pub(super) struct Origin {
    pub source: FixSource,
    pub replayed: bool,
    /// The evidence came from the previous fix's rescan (`evidence.rs`), not a rescan of its own.
    pub looked_ahead: bool,
}

/// What the Worker came back with.
enum Proposal {
    Fix(ApplyFix, FixSource),
    /// An unusable reply: an attempt with its reason, nothing executed.
    Rejected(String),
    /// Nothing to try: escalate.
    NoFix(String),
}

pub(super) const OUTPUT_CAP: usize = 256 * 1024;

impl Ralph<'_> {
    /// The lockout guard, then the health check; cut short when the hypervisor says the guest
    /// stopped running (a crash is not a lockout, and no login will come).
    pub(super) async fn guard(&self) -> Result<checks::Health, GuardFailure> {
        tokio::select! {
            g = checks::access_then_health(self.guest, self.settings.ssh_ready, &self.settings.health_command) => g,
            () = self.stopped() => Err(GuardFailure::GuestDown("the hypervisor says the guest is not running: it crashed or was powered off".into())),
        }
    }

    /// The guard's failure on the guest as it stands (the verdict it gives, and what it saw);
    /// `None` when it holds.
    pub(super) async fn guard_fails_now(&self) -> Option<(Verdict, String)> {
        Guard::from(self.guard().await).failure()
    }

    /// The content marks the rule's stock fix as taking effect after a reboot.
    pub(super) fn stock_needs_reboot(&self, rule: &str) -> bool {
        self.content.rule(rule).and_then(|r| r.fix.as_ref()).is_some_and(|f| f.reboot)
    }

    /// Resolves once the hypervisor says the domain no longer runs; asked every 2 s.
    async fn stopped(&self) {
        while !matches!(self.hv.is_running().await, Ok(false)) {
            tokio::time::sleep(std::time::Duration::from_secs(2)).await;
        }
    }
}

impl Attempter<'_, '_> {
    /// Attempts one rule until it is fixed or escalated.
    #[tracing::instrument(name = "rule", skip_all, fields(rule = %pick.rule_id))]
    pub(super) async fn work_on(&self, state: &mut RunState, pick: Pick) -> LoopResult<()> {
        let rule = pick.rule_id.clone();
        let mut plan = pick.plan;
        let mut preset = pick.preset;
        loop {
            if let Some(e) = Reflection::new(self.ralph).budget_spent(&rule).await? {
                return Reflection::new(self.ralph).escalate(&rule, &e).await;
            }
            let started = Instant::now();
            let planned = preset.as_ref().is_some_and(|p| p.source == FixSource::Plan);
            let ended = self.attempt(state, &rule, &plan, preset.take()).await?;
            self.ralph.journal.add_rule_time(&rule, started.elapsed().as_millis() as i64).await?;
            let Some(ended) = ended else { return Ok(()) };
            if self.kept(ended.verdict) {
                return Ok(());
            }
            Reflection::new(self.ralph).reflect(&ended).await?;
            if planned && let Some(stock) = self.ralph.stock_after_plan(&rule, &ended.fix_script) {
                preset = Some(stock);
                continue;
            }
            if let Some(e) = Reflection::new(self.ralph).should_escalate(&rule, &mut plan).await? {
                return Reflection::new(self.ralph).escalate(&rule, &e).await;
            }
        }
    }

    /// One attempt. `None` when the rule was escalated instead (no fix to try).
    #[tracing::instrument(name = "attempt", skip_all)]
    async fn attempt(&self, state: &mut RunState, rule: &str, plan: &str, preset: Option<Preset>) -> LoopResult<Option<Ended>> {
        let n = self.ralph.journal.rule(rule).await?.map_or(0, |r| r.attempts as u32) + 1;
        self.ralph.phase(Phase::Fix, Some(rule), n).await?;
        let before = self.before(state, rule).await;
        // Read passing right before its fix: other rules' fixes fixed it, and no fix of its own
        // runs, so none is credited with their work.
        if before.seen.as_ref().is_some_and(Seen::passes) {
            self.ralph.passes_already(state, rule).await?;
            state.look_ahead(before.rest);
            return Ok(None);
        }
        let (evidence, looked_ahead, rest) = (before.evidence(), before.looked_ahead, before.rest);
        let ctx = self.fix_context(rule, plan, n, evidence).await?;
        // A plan's derived step: derived again from this target's evidence, never the source's.
        let preset = match preset {
            Some(p) if let Some(step) = p.derived => match self.ralph.derive_step(step, &ctx) {
                Ok(fix) => Some(Preset { fix, ..p }),
                Err(why) => {
                    let trial = self.start_attempt(state, &ctx, &p.fix, Origin { source: p.source, replayed: false, looked_ahead }).await?;
                    return self.unexecuted(trial, Verdict::Refused, why, &p.fix.fix_script).await;
                }
            },
            p => p,
        };
        let replayed = preset.as_ref().is_some_and(|p| p.replayed);
        let remembered = preset.as_ref().and_then(|p| p.remembered);
        let worker = match preset {
            Some(p) => Ok(crate::agent::Turn::bare((p.fix, p.source))),
            None => self.ralph.agents.worker.propose(&ctx).await,
        };
        let (proposal, records) = match worker {
            Ok(t) => (Proposal::Fix(t.value.0, t.value.1), t.records),
            Err(AgentError::Rejected { reason, records }) => (Proposal::Rejected(reason), records),
            Err(AgentError::NoFix(reason)) => (Proposal::NoFix(reason), Vec::new()),
            Err(AgentError::Unavailable { reason, records, .. }) => return Err(self.ralph.paused(Some(rule), reason, &records).await),
        };
        let (fix, source) = match proposal {
            Proposal::Fix(fix, source) => (fix, source),
            Proposal::NoFix(reason) => {
                Reflection::new(self.ralph)
                    .escalate(rule, &Escalation::new(EscalationCause::NoFix, format!("no fix to try: {reason}")))
                    .await?;
                let ahead = self.ahead_past(state, rest).await?;
                state.look_ahead(ahead);
                return Ok(None);
            }
            Proposal::Rejected(reason) => {
                let empty = ApplyFix { fix_script: String::new(), revert_script: String::new(), description: String::new() };
                let origin = Origin { source: FixSource::Rejected, replayed: false, looked_ahead };
                let trial = self.start_attempt(state, &ctx, &empty, origin).await?;
                self.ralph.record_turns(Some(trial.id), Some(rule), &records).await?;
                return self.unexecuted(trial, Verdict::ApplyFailed, format!("the Worker's reply was rejected: {reason}"), "").await;
            }
        };
        let trial = self.start_attempt(state, &ctx, &fix, Origin { source, replayed, looked_ahead }).await?;
        let id = trial.id;
        self.ralph.record_turns(Some(id), Some(rule), &records).await?;

        // Step 3: the deny-list, before anything runs.
        let bans = self.ralph.journal.memory().bans(self.ralph.recall()).await?;
        self.note_shared_bans(state, rule, &bans).await?;
        let deny = self.deny_list(&bans).await?;
        for script in [&fix.fix_script, &fix.revert_script] {
            if let Err(refusal) = deny.check(script) {
                let reason = refusal.to_string();
                if let Some(id) = remembered {
                    self.ralph.count_remembered(id, Verdict::Refused).await?;
                }
                return self.unexecuted(trial, Verdict::Refused, reason, &fix.fix_script).await;
            }
        }
        let applied = self.apply(&fix).await;
        self.ralph.journal.set_attempt_state(id, AttemptState::Applied).await?;

        // Step 4: evaluate.
        self.ralph.phase(Phase::Evaluate, Some(rule), n).await?;
        let evaluated = Instant::now();
        let rescan = self.rescan_of(state, rule).await?;
        // The content's own fix: stock, or a plan's step that is the stock fix.
        let stock = ctx.stock_fix.as_deref().is_some_and(|f| source == FixSource::Stock || f == fix.fix_script);
        let (mut e, scan) = self.evaluate(state, &rescan, stock, &applied).await?;
        e.findings.evaluate_ms = Some(evaluated.elapsed().as_millis() as i64);
        let (verdict, reason) = (e.verdict, e.verdict_reason.clone());
        self.ralph.note(Some(rule), EventData::Verdict { attempt: Some(i64::from(trial.n)), verdict, reason: reason.clone() }).await?;
        if let Some(id) = remembered {
            self.ralph.count_remembered(id, verdict).await?;
        }

        // Step 5: keep or revert.
        if self.kept(verdict) {
            self.keep(state, id, rule, &e).await?;
            if let Some(scan) = &scan {
                self.take_up(state, &rescan, scan).await?;
            }
        } else {
            e.findings.diagnostics = Some(self.diagnostics(&e).await);
            self.ralph.phase(Phase::Revert, Some(rule), n).await?;
            let (method, ms) = self.revert(state, rule, &fix, e.findings.access_ok == Some(true)).await?;
            (e.revert_method, e.findings.revert_ms) = (method, Some(ms));
            if guarded(verdict)
                && let Some(broken) = self.ralph.guard_fails_now().await
            {
                // The guard fails without this fix too: the damage came before it (a kept fix's,
                // showing late), so this attempt does not count, and the kept fixes are checked.
                e.verdict = Verdict::Interrupted;
                e.verdict_reason = format!(
                    "the guard failed after this fix ({reason}), and again once it was undone ({}): the damage came before \
                     it; the fixes kept before it are bisected for it, and this rule is tried again",
                    broken.1
                );
                self.ralph.journal.finish_attempt(id, &e).await?;
                self.ralph.journal.set_aside_attempts(&[id], &e.verdict_reason).await?;
                let set_aside = EventData::AttemptInterrupted { attempt: i64::from(trial.n), state: AttemptState::Done };
                self.ralph.note(Some(rule), set_aside).await?;
                Check::new(self.ralph, state).after_guard_failure(broken).await?;
                return Ok(None);
            }
            self.ralph.journal.finish_attempt(id, &e).await?;
        }
        Ok(Some(Ended { trial, verdict, reason, fix_script: fix.fix_script, diagnostics: e.findings.diagnostics.unwrap_or_default() }))
    }

    /// Runs the fix script in the guest, on stdin, watched (`crate::script`).
    pub(super) async fn apply(&self, fix: &ApplyFix) -> Applied {
        let started = Instant::now();
        let out = script::run(self.ralph.guest, &fix.fix_script, OUTPUT_CAP, self.ralph.settings.fix_watch).await;
        let ms = started.elapsed().as_millis() as i64;
        let unfinished = |exit| Applied { exit_code: None, stdout: None, stderr: None, ms, exit };
        match out {
            Ok(out) => Applied {
                exit_code: out.exit_code.map(i64::from),
                stdout: Some(capped(&out.stdout_str(), out.stdout_truncated)),
                stderr: Some(capped(&out.stderr_str(), out.stderr_truncated)),
                ms,
                exit: match out.exit_code {
                    Some(0) => Exit::Zero,
                    Some(c) => Exit::NonZero(format!("the fix exited {c}")),
                    None => Exit::Unfinished("the fix ended without an exit code".into()),
                },
            },
            Err(ScriptError::Stopped(stop)) => unfinished(Exit::Stopped(stop)),
            Err(ScriptError::Port(e)) => unfinished(Exit::Unfinished(format!("the fix did not finish: {e}"))),
        }
    }

    /// The guard (lockout, then health) beside the rescan (`rescan.rs`), judged (`verdict::judge`):
    /// the verdict and everything measured on the way, and the scan when the checks got that far.
    #[tracing::instrument(name = "evaluate", skip_all)]
    async fn evaluate(&self, state: &RunState, rescan: &Rescan, stock: bool, applied: &Applied) -> LoopResult<(Evaluation, Option<Scan>)> {
        let rule = rescan.rule.as_str();
        let rules = rescan.rules(state);
        // The guard logs in afresh beside the live session, so the rescan runs alongside it; a
        // script that did not finish is never rescanned.
        let (guard, scan) = if applied.exit_code.is_some() {
            let (g, s) = tokio::join!(self.ralph.guard(), self.ralph.scanner.scan(self.ralph.guest, &rules));
            (g, Some(s))
        } else {
            (self.ralph.guard().await, None)
        };
        let exit = applied.exit();
        let (reading, scan) = match scan {
            None => (verdict::Rescan::NotRun, None),
            Some(Err(e)) => (verdict::Rescan::Failed(e.to_string()), None),
            Some(Ok(s)) => (verdict::Rescan::Read(ScanResult::from(s.outcome(rule))), Some(s)),
        };
        let needs_reboot = stock && self.ralph.stock_needs_reboot(rule);
        let reboot = match (needs_reboot, self.ralph.settings.reboot.is_some()) {
            (false, _) => Reboot::No,
            (true, true) => Reboot::WithProof,
            (true, false) => Reboot::WithoutProof,
        };
        let regressions = scan.as_ref().map(|s| s.not_passing(&rescan.regression_rules(state))).unwrap_or_default();
        let checks = Checks { exit, guard: Guard::from(guard), rescan: reading, regressions, reboot, batched: state.batched() };
        let e = evaluation(applied, &checks, scan.as_ref(), rule);
        let scan = if e.findings.rule_result.is_some() { scan } else { None };
        Ok((e, scan))
    }

    pub(super) async fn start_attempt(
        &self,
        state: &RunState,
        ctx: &FixContext,
        fix: &ApplyFix,
        Origin { source, replayed, looked_ahead }: Origin,
    ) -> LoopResult<Trial> {
        let rule = ctx.rule_id.as_str();
        let (id, n) = self
            .ralph
            .journal
            .start_attempt(&AttemptSpec {
                rule_id: rule.to_string(),
                plan: ctx.plan.clone(),
                source,
                replayed,
                fix_script: fix.fix_script.clone(),
                revert_script: fix.revert_script.clone(),
                description: fix.description.clone(),
                checkpoint: state.head().to_string(),
                evidence_before: ctx.evidence.clone(),
            })
            .await?;
        let data = EventData::Attempt { attempt: n, source, replayed, evidence_looked_ahead: looked_ahead };
        self.ralph.note(Some(rule), data).await?;
        Ok(Trial { id, n: n as u32, rule: rule.to_string(), plan: ctx.plan.clone() })
    }

    /// An attempt that ran nothing (refused or rejected): recorded with its reason.
    pub(super) async fn unexecuted(&self, trial: Trial, verdict: Verdict, reason: String, script: &str) -> LoopResult<Option<Ended>> {
        let e = Evaluation::new(verdict, reason.clone()).found(Findings { diagnostics: Some(reason.clone()), ..Findings::default() });
        self.ralph.journal.finish_attempt(trial.id, &e).await?;
        self.ralph.note(Some(&trial.rule), EventData::Verdict { attempt: None, verdict, reason: reason.clone() }).await?;
        Ok(Some(Ended { trial, verdict, reason: reason.clone(), fix_script: script.to_string(), diagnostics: reason }))
    }

    pub(super) async fn fix_context(&self, rule: &str, plan: &str, attempt: u32, evidence: Option<Evidence>) -> LoopResult<FixContext> {
        if let Some(refused) = evidence.as_ref().map(Evidence::refused).filter(|r| !r.is_empty()) {
            self.ralph.note(Some(rule), EventData::EvidenceRefused { refused }).await?;
        }
        let c = self.ralph.content.rule(rule);
        let text = |f: fn(&temper_scap::Rule) -> &str| c.map(f).unwrap_or("").to_string();
        let episodes = Reflection::new(self.ralph).episodes(rule).await?;
        let lessons = self
            .ralph
            .journal
            .memory()
            .lessons(self.ralph.recall())
            .await?
            .into_iter()
            .filter(|l| l.rule_id.as_deref() != Some(rule))
            .take(8)
            .map(|l| format!("{} (prefer: {})", l.distilled, l.preferred))
            .collect();
        let bans = self.ralph.journal.memory().bans(self.ralph.recall()).await?.into_iter().map(|b| b.pattern).collect();
        let tried = self
            .ralph
            .journal
            .rule_attempts(rule)
            .await?
            .into_iter()
            .filter(crate::journal::Attempt::is_try)
            .map(|a| Tried {
                source: a.spec.source,
                verdict: a.verdict,
                reason: a.verdict_reason.unwrap_or_default(),
                fix_script: a.spec.fix_script,
            })
            .collect();
        Ok(FixContext {
            rule_id: rule.to_string(),
            title: text(|r| &r.title),
            severity: c.map(|r| r.severity).unwrap_or_default(),
            description: text(|r| &r.description),
            rationale: text(|r| &r.rationale),
            plan: plan.to_string(),
            stock_fix: c.and_then(|r| r.fix.as_ref()).map(|f| f.script.clone()),
            episodes,
            lessons,
            bans,
            attempt,
            evidence,
            tried,
        })
    }

    /// A fix that is kept: verified, or a stock fix that needs a reboot, kept for the proof.
    pub(super) fn kept(&self, verdict: Verdict) -> bool {
        verdict == Verdict::Fixed || (verdict == Verdict::NeedsReboot && self.ralph.settings.reboot.is_some())
    }

    /// Built-in rules, the skill's, and `bans`: every active ban of the skill (this run's and
    /// any other run's, in another lane or on another worker). A ban that would forbid every
    /// derived or stock fix is not enforced, however it reached the store.
    pub(super) async fn deny_list(&self, bans: &[Ban]) -> LoopResult<DenyList> {
        let mut deny = DenyList::builtin(&self.ralph.settings.user);
        for d in &self.ralph.skill.manifest.deny {
            let _ = deny.add(&d.pattern, &d.reason, DenySource::Skill);
        }
        let scope = BanScope::of(self.ralph.content);
        for b in bans {
            let added = match scope.check(&b.pattern) {
                Ok(_) => deny.add(&b.pattern, &b.reason, DenySource::Ban).map_err(|e| e.to_string()),
                Err(why) => Err(why.to_string()),
            };
            if let Err(reason) = added {
                self.ralph.note(b.rule_id.as_deref(), EventData::BanInvalid { pattern: b.pattern.clone(), reason }).await?;
            }
        }
        Ok(deny)
    }

    /// Records each ban made by another run the first time it is in force in this run.
    pub(super) async fn note_shared_bans(&self, state: &mut RunState, rule: &str, bans: &[Ban]) -> LoopResult<()> {
        for b in bans.iter().filter(|b| b.run_id != Some(self.ralph.journal.id())) {
            if !state.note_shared_ban(b.id) {
                continue;
            }
            let data = EventData::BanShared {
                ban: b.id,
                from_run: b.run_id,
                made_for: b.rule_id.clone(),
                pattern: b.pattern.clone(),
                made_at: b.created_at.clone(),
            };
            self.ralph.note(Some(rule), data).await?;
        }
        Ok(())
    }

    /// What the Reflector sees, captured before the revert.
    pub(super) async fn diagnostics(&self, o: &Evaluation) -> String {
        diagnostics(o, &checks::journal_errors(self.ralph.guest).await)
    }
}

/// A verdict the guard gave: the guest's state, not the rule's, was found wrong.
fn guarded(verdict: Verdict) -> bool {
    matches!(verdict, Verdict::Lockout | Verdict::HealthBroken | Verdict::GuestDown)
}

/// The verdict on one fix from its checks (`verdict::judge`), with what was measured on the way;
/// the rule's result, regressions and evidence only when the checks got that far.
pub(super) fn evaluation(applied: &Applied, checks: &Checks, scan: Option<&Scan>, rule: &str) -> Evaluation {
    let j = verdict::judge(checks);
    let mut f = Findings {
        fix_exit_code: applied.exit_code,
        fix_stdout: applied.stdout.clone(),
        fix_stderr: applied.stderr.clone(),
        apply_ms: Some(applied.ms),
        access_ok: Some(checks.guard.access_ok()),
        ..Findings::default()
    };
    if let Guard::Health { ok, output } = &checks.guard {
        (f.health_ok, f.health_output) = (Some(*ok), Some(output.clone()));
    }
    if let (Some(scan), verdict::Rescan::Read(result), true) = (scan, &checks.rescan, j.read) {
        (f.rule_result, f.regressions, f.evidence_after) = (Some(*result), checks.regressions.clone(), scan.evidence_of(rule).cloned());
    }
    Evaluation::new(j.verdict, j.reason).found(f)
}

/// What the Reflector sees of a failed fix: its output, the checks, and the guest's journal errors.
pub(super) fn diagnostics(o: &Evaluation, journal: &str) -> String {
    let found =
        o.findings.evidence_after.as_ref().map_or(String::new(), |e| format!("\nwhat the scanner found after the fix:\n{}", e.brief()));
    format!(
        "fix exit code: {:?}\nfix stdout:\n{}\nfix stderr:\n{}\nrule result: {}{found}\nhealth: {}\nregressions: {}\njournal errors:\n{}",
        o.findings.fix_exit_code,
        tail(o.findings.fix_stdout.as_deref().unwrap_or(""), 2000),
        tail(o.findings.fix_stderr.as_deref().unwrap_or(""), 2000),
        o.findings.rule_result.map_or("not scanned", ScanResult::as_str),
        o.findings.health_output.as_deref().unwrap_or("not run"),
        o.findings.regressions.join(", "),
        tail(&temper_scap::secret::withhold(journal), 3000),
    )
}

/// A fix's output as the journal keeps it: its secrets withheld by kind (a hash it printed, a
/// key it showed), and marked where the cap cut it.
fn capped(s: &str, truncated: bool) -> String {
    let s = temper_scap::secret::withhold(s);
    if truncated { format!("{s}\n[output cut at {OUTPUT_CAP} bytes]") } else { s.into_owned() }
}

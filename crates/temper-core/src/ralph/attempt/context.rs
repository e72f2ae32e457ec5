//! An attempt's records: started with its origin, closed when nothing ran, and what the Worker
//! is told (`FixContext`); the deny-list it is checked against.
use temper_journal::FixSource;
use temper_journal::turn::ApplyFix;
use temper_scap::oval::Evidence;

use super::Attempter;
use crate::agent::{FixContext, Tried};
use crate::ban::BanScope;
use crate::policy::{DenyList, DenySource};
use crate::ralph::error::LoopResult;
use crate::ralph::state::RunState;
use crate::ralph::trial::{Ended, Trial};
use temper_journal::Verdict;
use temper_journal::{AttemptNo, AttemptSpec, Ban, Evaluation, EventData, Findings};

/// Where an attempt's fix and its evidence before came from.
pub(in crate::ralph) struct AttemptOrigin {
    pub source: FixSource,
    pub replayed: bool,
    /// The evidence came from the previous fix's rescan (`evidence.rs`), not a rescan of its own.
    pub looked_ahead: bool,
}

impl Attempter<'_> {
    pub(in crate::ralph) async fn start_attempt(
        &self,
        state: &RunState,
        ctx: &FixContext,
        fix: &ApplyFix,
        AttemptOrigin { source, replayed, looked_ahead }: AttemptOrigin,
    ) -> LoopResult<Trial> {
        let rule = ctx.rule_id.as_str();
        let (id, n) = self
            .books
            .journal()
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
        self.books.note(Some(rule), data).await?;
        Ok(Trial { id, n: Some(n), rule: rule.to_string(), plan: ctx.plan.clone() })
    }

    /// An attempt that ran nothing (refused or rejected): recorded with its reason.
    pub(in crate::ralph) async fn unexecuted(
        &self,
        trial: Trial,
        verdict: Verdict,
        reason: String,
        script: &str,
    ) -> LoopResult<Option<Ended>> {
        let e = Evaluation::new(verdict, reason.clone()).found(Findings { diagnostics: Some(reason.clone()), ..Findings::default() });
        self.books.journal().finish_attempt(trial.id, &e).await?;
        self.books.note(Some(&trial.rule), EventData::Verdict { attempt: None, verdict, reason: reason.clone() }).await?;
        Ok(Some(Ended { trial, verdict, reason: reason.clone(), fix_script: script.to_string(), diagnostics: reason }))
    }

    pub(in crate::ralph) async fn fix_context(
        &self,
        rule: &str,
        plan: &str,
        attempt: AttemptNo,
        evidence: Option<Evidence>,
    ) -> LoopResult<FixContext> {
        if let Some(refused) = evidence.as_ref().map(Evidence::refused).filter(|r| !r.is_empty()) {
            self.books.note(Some(rule), EventData::EvidenceRefused { refused }).await?;
        }
        let c = self.content.rule(rule);
        let text = |f: fn(&temper_scap::ContentRule) -> &str| c.map(f).unwrap_or("").to_string();
        let episodes = self.books.episodes(rule).await?;
        let lessons = self
            .books
            .journal()
            .memory()
            .lessons(self.books.recall())
            .await?
            .into_iter()
            .filter(|l| l.rule_id.as_deref() != Some(rule))
            .take(8)
            .map(|l| format!("{} (prefer: {})", l.distilled, l.preferred))
            .collect();
        let bans = self.books.journal().memory().bans(self.books.recall()).await?.into_iter().map(|b| b.pattern).collect();
        let tried = self
            .books
            .journal()
            .rule_attempts(rule)
            .await?
            .into_iter()
            .filter(temper_journal::Attempt::is_try)
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
    pub(in crate::ralph) fn kept(&self, verdict: Verdict) -> bool {
        verdict == Verdict::Fixed || (verdict == Verdict::NeedsReboot && self.proof)
    }

    /// Built-in rules, the skill's, and `bans`: every active ban of the skill (this run's and
    /// any other run's, in another lane or on another worker). A ban that would forbid every
    /// derived or stock fix is not enforced, however it reached the store.
    pub(in crate::ralph) async fn deny_list(&self, bans: &[Ban]) -> LoopResult<DenyList> {
        let mut deny = DenyList::builtin(self.user);
        for d in &self.skill.manifest.deny {
            let _ = deny.add(&d.pattern, &d.reason, DenySource::Skill);
        }
        let scope = BanScope::of(self.content);
        for b in bans {
            let added = match scope.check(&b.pattern) {
                Ok(_) => deny.add(&b.pattern, &b.reason, DenySource::Ban).map_err(|e| e.to_string()),
                Err(why) => Err(why.to_string()),
            };
            if let Err(reason) = added {
                self.books.note(b.rule_id.as_deref(), EventData::BanInvalid { pattern: b.pattern.clone(), reason }).await?;
            }
        }
        Ok(deny)
    }

    /// Records each ban made by another run the first time it is in force in this run.
    pub(in crate::ralph) async fn note_shared_bans(&self, state: &mut RunState, rule: &str, bans: &[Ban]) -> LoopResult<()> {
        for b in bans.iter().filter(|b| b.run_id != Some(self.books.id())) {
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
            self.books.note(Some(rule), data).await?;
        }
        Ok(())
    }

    /// What the Reflector sees, captured before the revert.
    pub(super) async fn diagnostics(&self, o: &Evaluation) -> String {
        super::diagnostics(o, &self.machine.journal_errors().await)
    }
}

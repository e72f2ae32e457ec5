//! Step 6b: escalate a rule on budget, on a plateau, or when the Architect says so.

use temper_journal::turn::Decision;
use temper_scap::Benchmark;

use crate::agent::{AgentError, Architect, ReengageContext};
use crate::ralph::books::Books;
use crate::ralph::crew::Crew;
use crate::ralph::error::LoopResult;
use crate::ralph::reflect::Reflect;
use crate::ralph::settings::Budget;
use crate::ralph::trial::Ended;
use temper_journal::Verdict;
use temper_journal::{Attempt, Escalation, EscalationCause, EventData};

/// Step 6b: the budgets, a plateau, the Architect re-engaged; a rule escalated to a human.
#[derive(Clone, Copy)]
pub(super) struct Escalator<'r> {
    books: &'r Books<'r>,
    architect: &'r dyn Architect,
    content: &'r Benchmark,
    budget: Budget,
    reflect: Reflect<'r>,
}

impl<'r> Escalator<'r> {
    pub(in crate::ralph) fn new(c: &'r Crew<'r>) -> Self {
        let budget = Budget::of(&c.settings);
        Self { books: &c.books, architect: c.agents.architect, content: c.content, budget, reflect: Reflect::new(c) }
    }

    /// The reflection it follows.
    pub(in crate::ralph) fn reflect(&self) -> Reflect<'r> {
        self.reflect
    }
}

impl Escalator<'_> {
    /// The attempt or wall-clock budget, checked before each attempt.
    pub(in crate::ralph) async fn budget_spent(&self, rule: &str) -> LoopResult<Option<Escalation>> {
        let Some(r) = self.books.journal().rule(rule).await? else { return Ok(None) };
        let max = self.budget.max_attempts;
        if r.attempts as u32 >= max {
            let why = format!("attempt budget spent: {} of {max} attempts failed", r.attempts);
            return Ok(Some(Escalation::new(EscalationCause::AttemptBudget, why)));
        }
        let budget = self.budget.rule_budget;
        if r.elapsed_ms as u128 >= budget.as_millis() {
            let why = format!("wall-clock budget spent: {}s of {}s", r.elapsed_ms / 1000, budget.as_secs());
            return Ok(Some(Escalation::new(EscalationCause::WallClockBudget, why)));
        }
        Ok(None)
    }

    /// A kept fix found wanting later (a batch's regression, the reboot proof): the Reflector's
    /// lesson, then the escalation checks.
    pub(in crate::ralph) async fn reflect_or_escalate(&self, ended: &Ended) -> LoopResult<()> {
        self.reflect.reflect(ended).await?;
        let (rule, mut plan) = (ended.trial.rule.as_str(), ended.trial.plan.clone());
        if let Some(e) = self.should_escalate(rule, &mut plan).await? {
            self.escalate(rule, &e).await?;
        }
        Ok(())
    }

    /// After a failed attempt: the budget, a plateau, or the Architect re-engaged.
    pub(in crate::ralph) async fn should_escalate(&self, rule: &str, plan: &mut String) -> LoopResult<Option<Escalation>> {
        if let Some(e) = self.budget_spent(rule).await? {
            return Ok(Some(e));
        }
        // An interrupted attempt was never judged: it does not count.
        let attempts: Vec<Attempt> = self.books.journal().rule_attempts(rule).await?.into_iter().filter(Attempt::is_try).collect();
        let n = attempts.len();
        let plateau = self.plateau(rule, &attempts).await?;
        let every = self.budget.reengage_every.max(1) as usize;
        if plateau.is_none() && !n.is_multiple_of(every) {
            return Ok(None);
        }
        let ctx = ReengageContext {
            rule_id: rule.to_string(),
            title: self.content.rule(rule).map(|r| r.title.clone()).unwrap_or_default(),
            plan: plan.clone(),
            episodes: self.books.episodes(rule).await?,
            attempts: n as u32,
            plateau: plateau.is_some(),
            tried: attempts.iter().map(|a| a.spec.source).collect(),
            evidence: attempts.last().and_then(|a| a.spec.evidence_before.clone()),
            last: attempts.last().and_then(|a| Some((a.verdict?, a.verdict_reason.clone().unwrap_or_default()))),
        };
        let decision = match self.architect.reengage(&ctx).await {
            Ok(t) => {
                self.books.record_turns(None, Some(rule), &t.records).await?;
                t.value
            }
            Err(AgentError::Unavailable { reason, records, .. }) => return Err(self.books.paused(Some(rule), reason, &records).await),
            Err(e) => {
                self.books.record_turns(None, Some(rule), e.records()).await?;
                let default = Decision::Continue { plan: plan.clone() };
                self.books.note(Some(rule), EventData::ReengageDefault { reason: e.to_string(), default: default.clone() }).await?;
                default
            }
        };
        self.books.note(Some(rule), EventData::Reengage { decision: decision.clone(), plateau: plateau.clone() }).await?;
        match (decision, plateau) {
            (Decision::Escalate { reason }, _) => {
                Ok(Some(Escalation::new(EscalationCause::Architect, format!("the Architect escalated: {reason}"))))
            }
            (Decision::Pivot { plan: p }, _) => {
                *plan = p;
                Ok(None)
            }
            (Decision::Continue { .. }, Some(p)) => {
                Ok(Some(Escalation::new(EscalationCause::Plateau, format!("{p}, and the Architect offered no new approach"))))
            }
            (Decision::Continue { plan: p }, None) => {
                *plan = p;
                Ok(None)
            }
        }
    }

    /// The same verdict and the same lesson in the last few attempts.
    async fn plateau(&self, rule: &str, attempts: &[Attempt]) -> LoopResult<Option<String>> {
        let w = self.budget.plateau_window;
        if w < 2 || attempts.len() < w {
            return Ok(None);
        }
        let last = &attempts[attempts.len() - w..];
        let verdicts: Vec<Option<Verdict>> = last.iter().map(|a| a.verdict).collect();
        let lessons: Vec<String> = self
            .books
            .journal()
            .memory()
            .lessons(self.books.recall().rule(rule))
            .await?
            .into_iter()
            .filter(|l| l.run_id == Some(self.books.journal().id()))
            .take(w)
            .map(|l| normalize(&l.distilled))
            .collect();
        let same_verdict = verdicts.windows(2).all(|p| p[0] == p[1]);
        let same_lesson = lessons.len() == w && lessons.windows(2).all(|p| p[0] == p[1]);
        let same_script = last.windows(2).all(|p| p[0].spec.fix_script == p[1].spec.fix_script);
        Ok((same_verdict && (same_lesson || same_script)).then(|| {
            format!(
                "plateau: the last {w} attempts ended `{}` with the same lesson or script",
                verdicts[0].map_or("unfinished", Verdict::as_str)
            )
        }))
    }

    /// Escalates `rule` to a human, with why.
    pub(in crate::ralph) async fn escalate(&self, rule: &str, e: &Escalation) -> LoopResult<()> {
        self.books.journal().escalate_rule(rule, e).await?;
        self.books.note(Some(rule), EventData::Escalate { reason: e.reason.clone(), cause: Some(e.cause) }).await?;
        Ok(())
    }
}

/// Lessons compared without digits, case or spacing ("attempt 3" equals "attempt 4").
fn normalize(s: &str) -> String {
    s.chars().filter(|c| !c.is_ascii_digit()).collect::<String>().to_lowercase().split_whitespace().collect::<Vec<_>>().join(" ")
}

//! Where a run stands: its phase, the rule being worked on, the attempts made and its rules in
//! scope counted ([`Tally`]). The loop's progress line, `temper status` (text and JSON) and the
//! web view's progress all show it, and only it, built by [`Standing::of`].
use serde::Serialize;

use crate::{Phase, Rule, Run, Tally};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Standing {
    pub phase: Phase,
    /// The rule being worked on.
    pub rule: Option<String>,
    /// The tries made on the rule being worked on.
    pub attempt: Option<i64>,
    /// The tries made in the run, as its rules count them: an attempt a crash interrupted, or
    /// one undone with its batch, is not one.
    pub attempts: i64,
    /// Its rules in scope, each in its state; they add up to `in_scope` (see [`Tally`]).
    #[serde(flatten)]
    pub tally: Tally,
}

impl Standing {
    /// The run at `phase` on `rule`, with its `rules` as the journal has them now.
    pub fn of(phase: Phase, rule: Option<&str>, rules: &[Rule]) -> Self {
        let attempt = rule.and_then(|id| rules.iter().find(|r| r.rule_id == id)).map(|r| r.attempts);
        Self { phase, rule: rule.map(str::to_string), attempt, attempts: rules.iter().map(|r| r.attempts).sum(), tally: Tally::of(rules) }
    }

    /// `run` at the phase and rule its row records.
    pub fn of_run(run: &Run, rules: &[Rule]) -> Self {
        Self::of(run.phase, run.current_rule.as_deref(), rules)
    }

    /// `fixed 85 escalated 0 open 21`: the states of the rules in scope, by name
    /// ([`Tally::states`]).
    pub fn states(&self) -> String {
        self.tally.states().iter().map(|(name, n)| format!("{name} {n}")).collect::<Vec<_>>().join(" ")
    }

    /// `21 of 106 in scope (85 failing at baseline, 21 became applicable)`: the rules open, of
    /// what the states add up to.
    pub fn open_of(&self) -> String {
        format!("{} of {}", self.tally.open, self.tally.scope())
    }

    /// `fixed 85 escalated 0 open 21 of 106 in scope (85 failing at baseline, 21 became
    /// applicable)`: the states of the rules in scope, and what they add up to.
    pub fn counts(&self) -> String {
        format!("{} of {}", self.states(), self.tally.scope())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RuleStatus, RunId, ScanResult};

    fn rule(id: &str, initial: ScanResult, status: RuleStatus, attempts: i64) -> Rule {
        Rule {
            id: 0,
            run_id: RunId::new(1).unwrap(),
            rule_id: id.into(),
            title: String::new(),
            severity: Default::default(),
            initial_result: initial,
            final_result: None,
            status,
            reason: None,
            escalation_cause: None,
            attempts,
            elapsed_ms: 0,
            final_evidence: None,
            offline_verdict: None,
        }
    }

    /// Mid-run: three rules failing at baseline, two that other fixes made applicable (one open,
    /// one fixed), one out of scope, and rules that never failed.
    fn mid_run() -> Vec<Rule> {
        use {RuleStatus as S, ScanResult as R};
        vec![
            rule("fixed", R::Fail, S::Fixed, 1),
            rule("escalated", R::Fail, S::Escalated, 3),
            rule("open", R::Fail, S::Pending, 1),
            rule("skipped", R::Fail, S::Skipped, 0),
            rule("applies-open", R::NotApplicable, S::Pending, 0),
            rule("applies-fixed", R::NotApplicable, S::Fixed, 2),
            rule("applies-passing", R::NotApplicable, S::Passing, 0),
            rule("still-na", R::NotApplicable, S::NotApplicable, 0),
            rule("elsewhere", R::Fail, S::OutOfScope, 0),
            rule("passing", R::Pass, S::Passing, 0),
            rule("flips", R::Pass, S::Unstable, 0),
        ]
    }

    /// The invariant of [`Tally`]: the states add up to the scope, and the scope is the rules
    /// failing at baseline and those that became applicable; open never exceeds it.
    fn adds_up(t: &Tally) {
        let states: usize = t.states().iter().map(|(_, n)| n).sum();
        let all = t.open + t.fixed + t.escalated + t.still_failing + t.skipped + t.waived + t.deferred + t.unstable + t.other;
        assert_eq!((states, all, t.failing_at_start + t.became_applicable), (t.in_scope, t.in_scope, t.in_scope), "{t:?}");
    }

    #[test]
    fn rules_that_became_applicable_count_in_the_scope_and_the_states_add_up_to_it() {
        let s = Standing::of(Phase::Fix, Some("open"), &mid_run());
        let t = s.tally;
        adds_up(&t);
        assert_eq!((t.failing_at_start, t.became_applicable, t.in_scope, t.out_of_scope), (4, 2, 6, 1), "{t:?}");
        assert_eq!((t.open, t.fixed, t.escalated, t.skipped), (2, 2, 1, 1), "{t:?}");
        assert_eq!((s.attempt, s.attempts), (Some(1), 7));
        assert_eq!(
            s.counts(),
            "fixed 2 escalated 1 open 2 skipped 1 of 6 in scope (4 failing at baseline, 2 became applicable; 1 out of scope)"
        );
    }

    #[test]
    fn the_counts_add_up_at_every_step_of_a_run() {
        use {RuleStatus as S, ScanResult as R};
        // The run's rules at the first scan, then each change the loop makes, in order.
        let mut rules = vec![
            rule("a", R::Fail, S::Pending, 0),
            rule("b", R::Fail, S::Pending, 0),
            rule("c", R::NotApplicable, S::NotApplicable, 0),
            rule("d", R::NotApplicable, S::NotApplicable, 0),
            rule("e", R::Fail, S::Waived, 0),
        ];
        let steps = [
            ("a", S::Fixed),
            ("c", S::Pending),
            ("d", S::Passing),
            ("b", S::Escalated),
            ("a", S::Unstable),
            ("c", S::Fixed),
            ("b", S::StillFailing),
            ("a", S::Error),
        ];
        adds_up(&Tally::of(&rules));
        for (id, status) in steps {
            rules.iter_mut().find(|r| r.rule_id == id).unwrap().status = status;
            let t = Tally::of(&rules);
            adds_up(&t);
            assert!(t.open <= t.in_scope, "{t:?}");
        }
        let t = Tally::of(&rules);
        assert_eq!((t.in_scope, t.became_applicable, t.fixed, t.still_failing, t.waived, t.other), (4, 1, 1, 1, 1, 1), "{t:?}");
    }

    #[test]
    fn no_rule_became_applicable_and_none_out_of_scope_says_less() {
        let rules = [rule("a", ScanResult::Fail, RuleStatus::Pending, 0), rule("b", ScanResult::Pass, RuleStatus::Passing, 0)];
        let s = Standing::of(Phase::Pick, None, &rules);
        assert_eq!((s.attempt, s.counts().as_str()), (None, "fixed 0 escalated 0 open 1 of 1 in scope (1 failing at baseline)"));
    }
}

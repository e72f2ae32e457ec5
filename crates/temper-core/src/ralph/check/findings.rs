//! What a check, or a probe of its bisection, found wrong, and the verdict on the fix it blames.
use crate::ralph::state::{Kept, RunState};
use crate::scan::{Scan, ScanError};
use crate::verdict::Guard;
use temper_journal::Verdict;
use temper_journal::{Culprit, ScanResult};

/// What a check, or a probe of its bisection, found wrong with the guest as it stood.
#[derive(Debug, Clone, Default)]
pub(super) struct CheckFindings {
    /// The guard failed: the verdict it gives a fix, and what it saw.
    pub guard: Option<(Verdict, String)>,
    /// The scan could not run: its error.
    pub scan: Option<String>,
    /// Rules expected to pass that do not read `pass`, each with what it read.
    pub rules: Vec<(String, ScanResult)>,
}

impl CheckFindings {
    /// What `guard` (when it ran) and `scan` found, of the rules `expected` to pass.
    pub(super) fn read(guard: Option<Guard>, scan: &Result<Option<Scan>, ScanError>, expected: &[String]) -> Self {
        let guard = guard.and_then(|g| g.failure());
        match scan {
            Ok(Some(s)) => {
                let rules = s.not_passing(expected).into_iter().map(|r| (r.clone(), ScanResult::from(s.outcome(&r)))).collect();
                CheckFindings { guard, scan: None, rules }
            }
            Ok(None) => CheckFindings { guard, ..CheckFindings::default() },
            Err(e) => CheckFindings { guard, scan: Some(e.to_string()), rules: Vec::new() },
        }
    }
    pub(super) fn clean(&self) -> bool {
        self.guard.is_none() && self.scan.is_none() && self.rules.is_empty()
    }
    /// The guard's failure or the scan's error, in words.
    pub(super) fn problem(&self) -> Option<String> {
        match (&self.guard, &self.scan) {
            (Some((v, d)), _) => Some(format!("{v}: {d}")),
            (None, Some(e)) => Some(format!("the scan could not run: {e}")),
            (None, None) => None,
        }
    }
    pub(super) fn rule_ids(&self) -> Vec<String> {
        self.rules.iter().map(|(r, _)| r.clone()).collect()
    }
}

/// The culprit's verdict from what its probe found: the guard's (`lockout`, `guest_down`,
/// `health_broken`), `scan_broken` when the scan could not run, `still_failing` when its own rule
/// no longer reads `pass` right after it, else a regression of the rules it broke.
pub(in crate::ralph) fn blame(culprit: &Kept, found: &CheckFindings) -> Culprit {
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

/// The regressed rules expected to pass at snapshot `i`: all but those a later fix in the batch
/// fixed (before that fix they failed, as they did at the baseline).
pub(in crate::ralph) fn expected(state: &RunState, failed: &[String], i: usize) -> Vec<String> {
    failed.iter().filter(|r| !state.pending()[i..].iter().any(|k| &k.rule == *r)).cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use temper_journal::{AttemptId, Booted};

    fn kept(rule: &str) -> Kept {
        Kept {
            attempt: AttemptId::new(1).unwrap(),
            rule: rule.into(),
            snapshot: format!("s-{rule}"),
            taken: true,
            script: Default::default(),
        }
    }

    fn state(every: u32) -> RunState {
        let booted = Booted { snapshot: "baseline".into(), through: None };
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

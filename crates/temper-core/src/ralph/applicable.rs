//! Rules that other rules' fixes changed. Rules not applicable at the first scan that other
//! fixes made applicable (installing auditd makes the `audit_rules_*` rules apply): each batch's
//! regression check scans them too (their platforms cost little), and one that applies now is
//! worked on in this pass, not after the final scan and its reboot; the final scan catches the
//! rest. And open rules read passing before their own fix ran: fixed by the others.

use super::{LoopResult, Ralph, RunState};
use crate::journal::{EventData, RuleStatus, ScanResult};
use crate::scan::Scan;

impl Ralph<'_> {
    /// The rules still not applicable.
    pub(super) async fn not_applicable(&self) -> LoopResult<Vec<String>> {
        let rules = self.journal.rules().await?;
        Ok(rules.into_iter().filter(|r| r.status == RuleStatus::NotApplicable).map(|r| r.rule_id).collect())
    }

    /// Those a regression check watches: all but the rules that would add an `oscap xccdf eval`
    /// to every check (a rule with no check, say); the final scan covers those.
    pub(super) async fn watched(&self) -> LoopResult<Vec<String>> {
        Ok(self.scanner.without_own_xccdf(&self.not_applicable().await?))
    }

    /// `rule`, open, reads pass right before its own fix would run (a look-ahead or a rescan at
    /// the guest as it stands): other rules' fixes fixed it. It is fixed with no fix of its own
    /// (none is tried, so none is credited or exported) and joins the regression set.
    pub(super) async fn passes_already(&self, state: &mut RunState, rule: &str) -> LoopResult<()> {
        let why = "reads pass before its own fix ran: other rules' fixes fixed it (no fix of its own tried or credited)";
        self.journal.set_rule_status(rule, RuleStatus::Fixed, Some(why)).await?;
        self.note(Some(rule), EventData::RulePasses { head: state.head().to_string() }).await?;
        self.now_passes(state, rule);
        Ok(())
    }

    /// Of `watched`, those `scan` finds applicable: one that fails reopens as pending (or takes
    /// the skill's disposition, or is out of scope), one that passes joins the regression (or
    /// final) set. The number reopened as pending.
    pub(super) async fn now_applicable(&self, state: &mut RunState, scan: &Scan, watched: &[String]) -> LoopResult<usize> {
        let mut reopened = 0;
        for rule in watched {
            let (status, reason) = match ScanResult::from(scan.outcome(rule)) {
                ScanResult::Fail => match self.opening(rule) {
                    (status, Some(reason)) => (status, reason),
                    (status, None) => {
                        (status, "not applicable at the first scan; fails since other rules' fixes made it applicable".into())
                    }
                },
                ScanResult::Pass => {
                    self.now_passes(state, rule);
                    (RuleStatus::Passing, "not applicable at the first scan; passes since other rules' fixes made it applicable".into())
                }
                _ => continue,
            };
            reopened += usize::from(status == RuleStatus::Pending);
            self.journal.set_rule_status(rule, status, Some(&reason)).await?;
            self.note(Some(rule), EventData::RuleApplicable { status }).await?;
        }
        Ok(reopened)
    }
}

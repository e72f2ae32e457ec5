//! The rules' ledger: where a rule moves when the guest is seen anew. A rule that passes joins the
//! regression set (or the final set, when its check walks a tree); one whose result flips with
//! nothing changed is unstable. And rules that other rules' fixes changed. Rules not applicable at the first scan that other
//! fixes made applicable (installing auditd makes the `audit_rules_*` rules apply): each batch's
//! regression check scans them too (their platforms cost little), and one that applies now is
//! worked on in this pass, not after the final scan and its reboot; the final scan catches the
//! rest. And open rules read passing before their own fix ran: fixed by the others.

use crate::ralph::books::Books;
use crate::ralph::crew::Crew;
use crate::ralph::error::LoopResult;
use crate::ralph::offer::Offer;
use crate::ralph::state::RunState;
use crate::scan::Scan;
use temper_journal::{EventData, RuleStatus, ScanResult};

/// The rules' moves, written to the books as the offer decides them.
#[derive(Clone, Copy)]
pub(super) struct Ledger<'r> {
    books: &'r Books<'r>,
    offer: &'r Offer<'r>,
}

impl<'r> Ledger<'r> {
    pub fn new(c: &'r Crew<'r>) -> Self {
        Self { books: &c.books, offer: &c.offer }
    }
}

impl Ledger<'_> {
    /// A rule that passes now joins the regression set; one whose check walks a directory tree
    /// at a cost of its own (made applicable by another fix, say) joins the final set instead.
    pub fn now_passes(&self, state: &mut RunState, rule: &str) {
        state.passes(rule.to_string(), self.offer.walks(rule));
    }

    /// A rule whose result flips with nothing changed: left out of the regression set from now on.
    pub async fn mark_unstable(&self, rule: &str, why: &str) -> LoopResult<()> {
        self.books.journal().set_rule_status(rule, RuleStatus::Unstable, Some(why)).await?;
        self.books.note(Some(rule), EventData::RegressionUnstable { reason: why.to_string() }).await
    }

    /// `rule`, open, reads pass right before its own fix would run (a look-ahead or a rescan at
    /// the guest as it stands): other rules' fixes fixed it. It is fixed with no fix of its own
    /// (none is tried, so none is credited or exported) and joins the regression set.
    pub async fn passes_already(&self, state: &mut RunState, rule: &str) -> LoopResult<()> {
        let why = "reads pass before its own fix ran: other rules' fixes fixed it (no fix of its own tried or credited)";
        self.books.journal().set_rule_status(rule, RuleStatus::Fixed, Some(why)).await?;
        self.books.note(Some(rule), EventData::RulePasses { head: state.head().to_string() }).await?;
        self.now_passes(state, rule);
        Ok(())
    }

    /// Of `watched`, those `scan` finds applicable: one that fails reopens as pending (or takes
    /// the skill's disposition, or is out of scope), one that passes joins the regression (or
    /// final) set. The number reopened as pending.
    pub async fn now_applicable(&self, state: &mut RunState, scan: &Scan, watched: &[String]) -> LoopResult<usize> {
        let mut reopened = 0;
        for rule in watched {
            let (status, reason) = match ScanResult::from(scan.outcome(rule)) {
                ScanResult::Fail => match self.offer.opening(rule) {
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
            self.books.journal().set_rule_status(rule, status, Some(&reason)).await?;
            self.books.note(Some(rule), EventData::RuleApplicable { status }).await?;
        }
        Ok(reopened)
    }
}

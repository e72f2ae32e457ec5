//! What the rescan after a fix covers: the fixed rule; the regression set when it is cheap
//! enough to ride along (else it waits for the batch, `regress.rs`) and with it the rules not
//! applicable so far (`applicable.rs`); and the rule likely next, for its evidence
//! (`evidence.rs`). Once the fix is kept, the rescan's word on those is taken up.
use super::steps::Attempter;
use super::{Ahead, LoopResult, RunState};
use crate::scan::Scan;

/// The rules one rescan after a fix of `rule` covers.
pub(super) struct Rescan {
    pub rule: String,
    pub next: Option<String>,
    /// Rides along only when the regression set does.
    pub watched: Vec<String>,
    /// Nothing is rescanned now: the batch's check scans the rule (`Attempter::defers`).
    pub deferred: bool,
}

impl Rescan {
    /// Every rule to scan, the fixed one first.
    pub fn rules(&self, state: &RunState) -> Vec<String> {
        let mut rules = vec![self.rule.clone()];
        if !state.batched() {
            rules.extend(state.regression_set().iter().filter(|r| **r != self.rule).cloned());
            rules.extend(self.watched.iter().cloned());
        }
        rules.extend(self.next.clone());
        rules
    }
}

impl Attempter<'_, '_> {
    pub(super) async fn rescan_of(&self, state: &RunState, rule: &str, deferred: bool) -> LoopResult<Rescan> {
        let watched = if state.batched() { Vec::new() } else { self.ralph.watched().await? };
        let next = if deferred { None } else { self.ralph.next_up(rule).await? };
        Ok(Rescan { rule: rule.to_string(), next, watched, deferred })
    }

    /// After the fix is kept: the next rule's evidence, and the rules that apply now.
    pub(super) async fn take_up(&self, state: &mut RunState, rescan: &Rescan, scan: &Scan) -> LoopResult<()> {
        let head = state.head().to_string();
        state.look_ahead(rescan.next.as_ref().map(|n| Ahead::of(&head, scan, std::slice::from_ref(n))));
        self.ralph.now_applicable(state, scan, &rescan.watched).await?;
        Ok(())
    }
}

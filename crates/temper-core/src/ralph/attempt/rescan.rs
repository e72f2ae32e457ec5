//! What the rescan after a fix covers: the fixed rule, read right after its fix, before any
//! other fix runs (so its result is its own fix's doing); the regression set when it is cheap
//! enough to ride along (else it waits for the batch, `check/`) and with it the rules not
//! applicable so far (`ledger.rs`); and the rule likely next, for its result and evidence
//! before its own fix (`evidence.rs`). Once the fix is kept, the rescan's word on those is taken
//! up.
use super::Attempter;
use crate::ralph::error::LoopResult;
use crate::ralph::state::{Ahead, RunState};
use crate::scan::Scan;

/// The rules one rescan after a fix of `rule` covers.
pub(in crate::ralph) struct RescanScope {
    pub rule: String,
    pub next: Option<String>,
    /// Rides along only when the regression set does.
    pub watched: Vec<String>,
}

impl RescanScope {
    /// Every rule to scan, the fixed one first.
    pub(super) fn rules(&self, state: &RunState) -> Vec<String> {
        let mut rules = vec![self.rule.clone()];
        rules.extend(self.regression_rules(state));
        if !state.batched() {
            rules.extend(self.watched.iter().cloned());
        }
        rules.extend(self.next.clone());
        rules
    }

    /// The regression set's rules this rescan covers: all of them, unless the set waits for the
    /// batch's check.
    pub(super) fn regression_rules(&self, state: &RunState) -> Vec<String> {
        if state.batched() {
            return Vec::new();
        }
        state.regression_set().iter().filter(|r| **r != self.rule).cloned().collect()
    }
}

impl Attempter<'_> {
    pub(super) async fn rescan_of(&self, state: &RunState, rule: &str) -> LoopResult<RescanScope> {
        let watched = if state.batched() { Vec::new() } else { self.offer.watched().await? };
        let next = self.offer.next_up(rule).await?;
        Ok(RescanScope { rule: rule.to_string(), next, watched })
    }

    /// After the fix is kept: the next rule as the rescan saw it, and the rules that apply now.
    pub(super) async fn take_up(&self, state: &mut RunState, rescan: &RescanScope, scan: &Scan) -> LoopResult<()> {
        let head = state.head().to_string();
        state.look_ahead(rescan.next.as_ref().map(|n| Ahead::of(&head, scan, std::slice::from_ref(n))));
        self.ledger.now_applicable(state, scan, &rescan.watched).await?;
        Ok(())
    }
}

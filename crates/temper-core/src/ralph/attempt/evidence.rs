//! The rule before a fix: its result now, after every fix kept since the first scan (an attempt
//! runs only on a rule that still reads failing then, so no fix is credited with another's
//! work), and with the OVAL engine what the scanner finds wrong, for the Worker, the journal and
//! the report.
//!
//! It costs a one-rule rescan, unless a rescan looked ahead to the rule:
//! - the rescan after a fix also evaluates the rule likely to be picked next, and once the fix is
//!   kept the machine is just as the next attempt starts from;
//! - a rule escalated with no fix to try ran nothing on the guest, and the rules likely to follow
//!   it the same way (open, untried, no stock fix) are evaluated together, once (`ahead_past`).
use std::collections::BTreeMap;
use temper_journal::{Engine, EventData, ScanKind};

use temper_scap::oval::Evidence;

use super::Attempter;
use crate::ralph::error::LoopResult;
use crate::ralph::state::RunState;
use crate::ralph::state::{Ahead, Seen};
use crate::scan::{Scan, ScanError};

/// The rule before an attempt, as the guest stands now.
pub(in crate::ralph) struct BeforeFix {
    /// Its result and evidence; `None` when the rescan failed (the attempt goes on: the rescan
    /// after the fix judges it).
    pub seen: Option<Seen>,
    /// Taken by a rescan that looked ahead, not one of its own.
    pub looked_ahead: bool,
    /// What that rescan took for other rules, still valid while nothing runs on the guest.
    pub rest: Option<Ahead>,
}

impl BeforeFix {
    pub(super) fn evidence(&self) -> Option<Evidence> {
        self.seen.as_ref().and_then(|s| s.evidence.clone())
    }
}

impl Attempter<'_> {
    /// The rule as a rescan of its own sees it now. Not with the xccdf engine for a rule that
    /// walks a directory tree (minutes under TCG, and no evidence): its attempt goes without.
    async fn seen_now(&self, rule: &str) -> LoopResult<Option<Seen>> {
        let rules = [rule.to_string()];
        if self.machine.scanner().engine() == Engine::Xccdf && !self.machine.scanner().costly_walkers(&rules).is_empty() {
            return Ok(None);
        }
        Ok(match self.scan_before(Some(rule), &rules).await? {
            Ok(scan) => Some(Seen::of(&scan, rule)),
            Err(e) => {
                tracing::warn!(rule, error = %e, "no result before the fix: the rescan failed");
                None
            }
        })
    }

    /// A rescan before a fix, timed in the journal (`ScanKind::Before`: a part of the run's
    /// time of its own, not the rest).
    async fn scan_before(&self, rule: Option<&str>, rules: &[String]) -> LoopResult<Result<Scan, ScanError>> {
        let started = std::time::Instant::now();
        let scan = self.machine.scan(rules).await;
        let secs = started.elapsed().as_secs_f64();
        let (counts, stalls) = scan.as_ref().map_or_else(|_| (BTreeMap::new(), 0), |s| (s.results.counts(false), s.stalls));
        self.books.note(rule, EventData::Scan { kind: ScanKind::Before, counts, score: None, secs, stalls }).await?;
        Ok(scan)
    }
}

impl Attempter<'_> {
    /// The rule before a fix: looked ahead when that is still the state, else rescanned.
    pub(super) async fn before(&self, state: &mut RunState, rule: &str) -> LoopResult<BeforeFix> {
        let head = state.head().to_string();
        let mut ahead = state.take_ahead().and_then(|a| a.at(&head));
        Ok(match ahead.as_mut().and_then(|a| a.take(rule)) {
            Some(seen) => BeforeFix { seen: Some(seen), looked_ahead: true, rest: ahead },
            None => BeforeFix { seen: self.seen_now(rule).await?, looked_ahead: false, rest: ahead },
        })
    }

    /// After `rule` was escalated with nothing run on the guest: `rest`, with the evidence of the
    /// open untried rules with no stock fix that it lacks, taken by one rescan (the stock Worker
    /// derives their fixes from it, or escalates them as well). Tree walkers and rules that need
    /// an `oscap xccdf eval` of their own are left to a rescan each. `None` with the xccdf engine.
    pub(super) async fn ahead_past(&self, state: &RunState, rest: Option<Ahead>) -> LoopResult<Option<Ahead>> {
        if self.machine.scanner().engine() != Engine::Oval {
            return Ok(None);
        }
        let head = state.head();
        let mut ahead = rest.and_then(|a| a.at(head)).unwrap_or_else(|| Ahead { head: head.to_string(), seen: BTreeMap::new() });
        let alike: Vec<String> =
            self.offer.offered().await?.into_iter().filter(|c| !c.has_stock_fix && c.attempts == 0).map(|c| c.rule_id).collect();
        let missing = self.machine.scanner().cheap_evidence(&alike.into_iter().filter(|r| !ahead.seen.contains_key(r)).collect::<Vec<_>>());
        if !missing.is_empty() {
            match self.scan_before(None, &missing).await? {
                Ok(scan) => ahead.seen.extend(Ahead::of(head, &scan, &missing).seen),
                Err(e) => tracing::warn!(rules = missing.len(), error = %e, "no evidence looked ahead: the rescan failed"),
            }
        }
        Ok((!ahead.is_empty()).then_some(ahead))
    }
}

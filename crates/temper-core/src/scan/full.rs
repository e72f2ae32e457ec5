//! A full profile scan with the OVAL engine, split. Under TCG a few checks that walk the whole
//! file system take most of an `oscap xccdf eval` of a profile (ANSSI high, hardened: 194 s of
//! 222 s), one after another. Here they leave that eval (`--skip-rule`) and go to the scanner's
//! lanes beside it: one `oscap oval eval` per rule, the next rule to whichever lane is free,
//! the costliest first as measured by an earlier full scan of this scanner (the run's first).
//! Their results replace the skipped ones, and the default score is computed again over the
//! merged results (`ScoreTree`), after checking that it gives oscap's own score on the xccdf part.
use std::cmp::Reverse;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use temper_journal::Engine;

use futures_util::future::join_all;
use tokio::time::Instant;

use super::engine::{OvalScan, OvalSide};
use super::{Scan, ScanError, Scanner};
use crate::ports::Guest;

impl Scanner {
    /// The profile's tree walkers that the OVAL engine evaluates itself: those a full scan
    /// splits off. None with the xccdf engine, nor with one lane (one oscap at a time) and no
    /// walk: beside the eval they would only share its CPU, and each walks its tree alone (with
    /// both TCG guests busy on two cores, ANSSI high: 454 to 480 s split, 342 to 359 s whole).
    /// With the one walk they go in one scan, beside the eval.
    pub fn split_from_full(&self) -> Vec<String> {
        let Some(side) = self.oval.as_ref().filter(|_| self.lanes > 1 || self.walk) else { return Vec::new() };
        let selected: Vec<String> = side.benchmark.selected_rules.iter().map(|r| r.id.clone()).collect();
        self.without_own_xccdf(&self.tree_walkers(&selected))
    }

    /// The whole profile: one `oscap xccdf eval` without `split` (the tree walkers, see
    /// [`Self::split_from_full`]), and those in the lanes beside it.
    pub(super) async fn full(&self, guest: &dyn Guest, side: &OvalSide, split: &[String]) -> Result<Scan, ScanError> {
        let start = Instant::now();
        tracing::debug!(walkers = split.len(), lanes = self.lanes, "full scan: tree walkers beside oscap xccdf eval");
        // Each lane takes the next batch: with the one walk, every walker in one scan (one walk
        // for them all); without it, one rule at a time, the costliest first.
        let batches: VecDeque<Vec<String>> = match self.walk {
            true => Some(split.to_vec()).filter(|s| !s.is_empty()).into_iter().collect(),
            false => self.walk_costs.costliest_first(split).into_iter().map(|r| vec![r]).collect(),
        };
        let queue = Mutex::new(batches);
        let lane = || async {
            let mut done = Vec::new();
            loop {
                let Some(batch) = queue.lock().expect("queue lock").pop_front() else { break };
                let at = Instant::now();
                let scan = self.scan_oval(guest, side, &batch).await;
                if let [rule] = batch.as_slice() {
                    self.walk_costs.took(rule.clone(), at.elapsed().as_millis());
                }
                done.push(scan);
            }
            done
        };
        let (xccdf, lanes) = tokio::join!(self.xccdf(guest, &[], split), join_all((0..self.lanes.max(1)).map(|_| lane())));
        let xccdf = xccdf?;
        let (mut results, mut stalls, mut evidence) = (xccdf.results, xccdf.stalls, xccdf.evidence);
        let walked: Vec<OvalScan> = lanes.into_iter().flatten().collect::<Result<_, _>>()?;
        let walk = walked.iter().find_map(|w| w.walk.clone());
        let ours = side.benchmark.score_tree.default_score(&results);
        let theirs = results.score().map(|s| s.value);
        if let (Some(a), Some(b)) = (ours, theirs)
            && (a - b).abs() > 1e-3
        {
            tracing::warn!(ours = a, oscap = b, "the default score computed over oscap's results differs from oscap's own");
        }
        for w in walked {
            stalls += w.stalls;
            evidence.extend(w.evidence);
            for r in w.results.rule_results {
                match results.rule_results.iter_mut().find(|x| x.idref == r.idref) {
                    Some(x) => *x = r,
                    None => results.rule_results.push(r),
                }
            }
        }
        side.benchmark.score_tree.rescore(&mut results);
        Ok(Scan {
            results,
            took: start.elapsed(),
            stalls,
            engine: Engine::Oval,
            evidence,
            routed: Vec::new(),
            walk,
            packages: 0,
            unknown: Vec::new(),
        })
    }
}

/// What each split-off rule took in this scanner's last full scan (shared by its clones).
#[derive(Debug, Clone, Default)]
pub(super) struct WalkCosts(Arc<Mutex<HashMap<String, u128>>>);

impl WalkCosts {
    fn took(&self, rule: String, ms: u128) {
        self.0.lock().expect("costs lock").insert(rule, ms);
    }

    /// `rules` with the costliest known first; those never measured before all of them, in order.
    fn costliest_first(&self, rules: &[String]) -> VecDeque<String> {
        let known = self.0.lock().expect("costs lock");
        let mut out = rules.to_vec();
        out.sort_by_key(|r| Reverse(known.get(r).copied().unwrap_or(u128::MAX)));
        out.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_costliest_walker_goes_first_once_measured() {
        let c = WalkCosts::default();
        let rules: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        assert_eq!(c.costliest_first(&rules), rules, "nothing measured: as given");
        c.took("a".into(), 2_000);
        c.took("b".into(), 72_000);
        c.took("d".into(), 60_000);
        assert_eq!(c.costliest_first(&rules), ["c", "b", "d", "a"].map(String::from), "unmeasured first, then by cost");
    }
}

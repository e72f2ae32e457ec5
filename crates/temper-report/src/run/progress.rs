//! A run's progress over time, from its events: the rules fixed so far after each verdict, and
//! the score of each scan that had one. `html::chart` draws it for the HTML report and the web
//! view.

use std::collections::BTreeSet;

use serde::Serialize;
use temper_journal::Verdict;
use temper_journal::{Event, EventData, Regressed, ScanKind};

/// The points of the chart, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProgressChart {
    pub fixed: Vec<FixPoint>,
    pub scores: Vec<ScorePoint>,
    /// Where the time axis ends: the last event, or now for a run still going on (`to_now`).
    pub until: f64,
}

/// A rule fixed, or a fix lost (a regression, the reboot proof), and the count after it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FixPoint {
    /// Seconds since the run's first event.
    pub secs: f64,
    pub rule_id: String,
    /// Rules fixed after this point.
    pub fixed: usize,
    /// False when the rule lost its fix here.
    pub gained: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScorePoint {
    pub secs: f64,
    pub score: f64,
    pub kind: ScanKind,
}

impl ProgressChart {
    pub fn of(events: &[Event]) -> Self {
        let start = events.first().and_then(|e| stamp(&e.ts));
        let secs = |i: usize, e: &Event| match (start, stamp(&e.ts)) {
            (Some(a), Some(b)) => ((b - a).num_milliseconds() as f64 / 1000.0).max(0.0),
            // Stamps that do not parse: one second per event keeps the order.
            _ => i as f64,
        };
        let mut fixed: BTreeSet<String> = BTreeSet::new();
        let mut p = Self::default();
        for (i, e) in events.iter().enumerate() {
            let change = match &e.data {
                EventData::Verdict { verdict: Verdict::Fixed, .. } | EventData::RulePasses { .. } => e.rule_id.clone().map(|r| (r, true)),
                EventData::Verdict { verdict: Verdict::Regression | Verdict::NotPersistent | Verdict::BreaksBoot, .. } => {
                    e.rule_id.clone().map(|r| (r, false))
                }
                EventData::RebootBlamed(_) | EventData::RegressionFound(Regressed::AtFinalScan(_)) => e.rule_id.clone().map(|r| (r, false)),
                EventData::RegressionFound(Regressed::Bisected { culprit, .. }) => Some((culprit.clone(), false)),
                EventData::Scan { kind, score: Some(score), .. } => {
                    p.scores.push(ScorePoint { secs: secs(i, e), score: *score, kind: *kind });
                    None
                }
                _ => None,
            };
            p.until = p.until.max(secs(i, e));
            let Some((rule_id, gained)) = change else { continue };
            let changed = if gained { fixed.insert(rule_id.clone()) } else { fixed.remove(&rule_id) };
            if changed {
                p.fixed.push(FixPoint { secs: secs(i, e), rule_id, fixed: fixed.len(), gained });
            }
        }
        p
    }

    /// The time axis runs to `now`: for a run still going on, whose last event may be long ago.
    pub fn to_now(mut self, events: &[Event], now: chrono::DateTime<chrono::FixedOffset>) -> Self {
        if let Some(start) = events.first().and_then(|e| stamp(&e.ts)) {
            self.until = self.until.max((now - start).num_milliseconds() as f64 / 1000.0);
        }
        self
    }

    /// Nothing to draw: no rule fixed and no scan scored yet.
    pub fn is_empty(&self) -> bool {
        self.fixed.is_empty() && self.scores.is_empty()
    }
}

fn stamp(ts: &str) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    chrono::DateTime::parse_from_rfc3339(ts).ok()
}

//! What the runs of a skill remember for the ETA: each rule's time in each finished run
//! ([`rule_times`], as the ETA measures its samples), kept in the store for the run's skill
//! (`MemoryLog::remember_times`), and recalled over the skill's newest [`RECALL_RUNS`] runs as
//! each rule's spread ([`Remembered`]).
use std::collections::BTreeMap;

use serde::Serialize;

use super::Measured;
use crate::{Event, RunId};

/// How many of a skill's newest runs the ETA recalls: the median over a few runs keeps one run
/// on a loaded machine (twice as slow) from setting every later prediction.
pub const RECALL_RUNS: i64 = 5;

/// One rule's time in one run: from the rule settled before it (or the end of the first scan and
/// the cadence's measurement) to its own settlement (kept, or escalated), all of it: its fix,
/// its checks, its snapshot, its share of the batch's check when that came before it. Rules
/// settled together (a plan's batch) leave the batch's time to the first of them.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "sqlx", derive(sqlx::FromRow))]
pub struct RuleTime {
    pub run_id: RunId,
    pub rule_id: String,
    pub secs: f64,
}

/// Each settled rule's time in run `run`, whose events (oldest first) these are; a rule settled
/// twice (a fix blamed after it was kept, then fixed again) has the two times summed. None
/// before the first scan.
pub fn rule_times(run: RunId, events: &[Event]) -> Vec<RuleTime> {
    let Some(m) = Measured::of(events) else { return Vec::new() };
    let mut out: Vec<RuleTime> = Vec::new();
    for s in m.samples {
        match out.iter_mut().find(|t| t.rule_id == s.rule) {
            Some(t) => t.secs += s.secs,
            None => out.push(RuleTime { run_id: run, rule_id: s.rule, secs: s.secs }),
        }
    }
    out
}

/// A time's range: the least, the median and the most of the runs remembered; a time remembered
/// from one run only is a prior, half to twice it (as the run's own prior is).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Spread {
    pub low: f64,
    pub mid: f64,
    pub high: f64,
}

impl Spread {
    /// The same at `pace` (this run's time over the remembered).
    pub fn times(self, pace: f64) -> Self {
        Self { low: self.low * pace, mid: self.mid * pace, high: self.high * pace }
    }
}

/// What a skill remembers: each rule's time in the runs recalled, as its spread.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Remembered {
    rules: BTreeMap<String, Spread>,
}

static NONE: Remembered = Remembered { rules: BTreeMap::new() };

impl Remembered {
    /// Nothing remembered: a skill's first run.
    pub fn none() -> &'static Self {
        &NONE
    }

    /// From the times of the runs recalled (each rule once a run).
    pub fn of(times: &[RuleTime]) -> Self {
        let mut by_rule: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        for t in times {
            by_rule.entry(&t.rule_id).or_default().push(t.secs);
        }
        let rules = by_rule
            .into_iter()
            .map(|(rule, mut xs)| {
                xs.sort_by(f64::total_cmp);
                let n = xs.len();
                let mid = if n % 2 == 1 { xs[n / 2] } else { (xs[n / 2 - 1] + xs[n / 2]) / 2.0 };
                let spread = match n {
                    1 => Spread { low: 0.5 * mid, mid, high: 2.0 * mid },
                    _ => Spread { low: xs[0], mid, high: xs[n - 1] },
                };
                (rule.to_string(), spread)
            })
            .collect();
        Self { rules }
    }

    /// How many rules it remembers.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The rule's remembered time, in seconds (the median over the runs recalled).
    pub fn secs(&self, rule: &str) -> Option<f64> {
        self.get(rule).map(|s| s.mid)
    }

    pub(super) fn get(&self, rule: &str) -> Option<Spread> {
        self.rules.get(rule).copied()
    }
}

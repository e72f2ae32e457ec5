//! Where a run's wall time went: its fix scripts, the work every tool pays, and the proof around
//! them (scans, each fix's checks, reverts, regression and plan batch checks, the reboot proof,
//! and the rest: snapshots, restores, picks, the store). One place for the reports and the
//! benches.
use serde::Serialize;

use crate::{Attempt, Event, EventData, ScanKind};

/// A part of a run's time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    FirstScan,
    /// The regression cadence's two timed rescans.
    Cadence,
    FixScripts,
    /// Each fix's rescan, health check and lockout guard.
    Evaluation,
    Reverts,
    RegressionChecks,
    PlanBatchChecks,
    /// The reboot proof's cold reboots.
    Reboots,
    FinalScan,
}

impl Part {
    pub const ALL: [Part; 9] = [
        Part::FirstScan,
        Part::Cadence,
        Part::FixScripts,
        Part::Evaluation,
        Part::Reverts,
        Part::RegressionChecks,
        Part::PlanBatchChecks,
        Part::Reboots,
        Part::FinalScan,
    ];

    pub fn says(self) -> &'static str {
        match self {
            Part::FirstScan => "first full scan",
            Part::Cadence => "regression cadence measurement",
            Part::FixScripts => "fix scripts",
            Part::Evaluation => "evaluation (rescan, health, guard)",
            Part::Reverts => "reverts",
            Part::RegressionChecks => "regression checks",
            Part::PlanBatchChecks => "plan batch checks",
            Part::Reboots => "reboots (the proof)",
            Part::FinalScan => "final full scan",
        }
    }
}

/// One part: how many times it ran and its seconds in all.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Share {
    pub part: Part,
    pub count: usize,
    pub secs: f64,
}

/// A run's time, split.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimeSplit {
    pub wall_secs: f64,
    /// In [`Part::ALL`]'s order.
    pub parts: Vec<Share>,
    /// The wall time no part accounts for: snapshots, restores, picks, the store.
    pub rest_secs: f64,
    /// Everything but the fix scripts.
    pub proof_secs: f64,
    /// The proof over the fix scripts' time (`None` while no fix script has run).
    pub proof_ratio: Option<f64>,
}

impl TimeSplit {
    /// From a run's events and attempts; `wall_secs` is its wall time over all its segments.
    pub fn of(events: &[Event], attempts: &[Attempt], wall_secs: f64) -> Self {
        let parts: Vec<Share> = Part::ALL.iter().map(|&part| share(part, events, attempts)).collect();
        let known: f64 = parts.iter().map(|s| s.secs).sum();
        let scripts = parts.iter().find(|s| s.part == Part::FixScripts).map_or(0.0, |s| s.secs);
        let proof_secs = (wall_secs - scripts).max(0.0);
        let proof_ratio = (scripts > 0.0).then(|| proof_secs / scripts);
        TimeSplit { wall_secs, parts, rest_secs: (wall_secs - known).max(0.0), proof_secs, proof_ratio }
    }

    pub fn secs(&self, part: Part) -> f64 {
        self.parts.iter().find(|s| s.part == part).map_or(0.0, |s| s.secs)
    }
}

fn share(part: Part, events: &[Event], attempts: &[Attempt]) -> Share {
    let from_events = |f: &dyn Fn(&EventData) -> Option<f64>| {
        let v: Vec<f64> = events.iter().filter_map(|e| f(&e.data)).collect();
        // Not `sum`: an empty one is -0.0, printed as such.
        (v.len(), v.iter().fold(0.0, |a, b| a + b))
    };
    let from_attempts = |f: fn(&Attempt) -> Option<i64>| {
        let v: Vec<i64> = attempts.iter().filter_map(f).collect();
        (v.len(), v.iter().sum::<i64>() as f64 / 1000.0)
    };
    let scan = |which: ScanKind| {
        move |d: &EventData| match d {
            EventData::Scan { kind, secs, .. } if *kind == which => Some(*secs),
            _ => None,
        }
    };
    let (count, secs) = match part {
        Part::FirstScan => from_events(&scan(ScanKind::Full)),
        Part::FinalScan => from_events(&scan(ScanKind::Final)),
        Part::Cadence => from_events(&|d| match d {
            EventData::RegressionEvery { secs: Some(t), .. } => Some(t.one_rule + t.with_set),
            _ => None,
        }),
        Part::FixScripts => from_attempts(|a| a.findings.apply_ms),
        Part::Evaluation => {
            // A clean plan batch's check is charged to its steps in equal shares (so that each
            // attempt shows one); it is counted once, as a plan batch check.
            let (n, secs) = from_attempts(|a| a.findings.evaluate_ms);
            let (steps, shared) = clean_batches(events);
            (n.saturating_sub(steps), (secs - shared).max(0.0))
        }
        Part::Reverts => from_attempts(|a| a.findings.revert_ms),
        Part::RegressionChecks => from_events(&|d| match d {
            EventData::RegressionCheck { secs, .. } => Some(*secs),
            _ => None,
        }),
        Part::PlanBatchChecks => from_events(&|d| match d {
            EventData::PlanBatch(b) => Some(b.secs),
            _ => None,
        }),
        Part::Reboots => from_events(&|d| match d {
            EventData::Reboot { secs, .. } => Some(*secs),
            _ => None,
        }),
    };
    Share { part, count, secs }
}

/// The steps and seconds of the clean plan batches' checks.
fn clean_batches(events: &[Event]) -> (usize, f64) {
    events.iter().fold((0, 0.0), |(n, secs), e| match &e.data {
        EventData::PlanBatch(b) if b.failed.is_empty() && b.guard.is_none() => (n + b.steps.len(), secs + b.secs),
        _ => (n, secs),
    })
}

#[cfg(test)]
mod tests;

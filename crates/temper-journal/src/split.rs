//! Where a run's wall time went: its fix scripts, the work every tool pays, and the proof around
//! them (scans, each fix's checks, reverts, regression and plan batch checks, the reboot proof,
//! and the rest). The rest is named in its parts as far as they were measured ([`Overhead`]):
//! the snapshots taken and dropped, the restores outside a revert, the replays of kept fixes and
//! the loop's bookkeeping (the loop's `spent` events), and the LLM's calls (its turns); what
//! none names is left unnamed (picks, each fix's evidence and context, the store's writes, the final summary). One
//! place for the reports and the benches.
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{Attempt, Event, EventData, ScanKind, StoredTurn};

/// A part of a run's time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    FirstScan,
    /// Rules read before their fix where no rescan looked ahead to them.
    ReadsBefore,
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
    pub const ALL: [Part; 10] = [
        Part::FirstScan,
        Part::ReadsBefore,
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
            Part::ReadsBefore => "rescans before a fix (none looked ahead)",
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

/// A part of "the rest" of a run's time, measured where it is spent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Overhead {
    /// Snapshots taken (with memory): each kept fix's, a rebuilt or proven checkpoint's.
    SnapshotsTaken,
    /// Snapshots deleted once no longer in force: a batch's older ones, the checkpoint replaced.
    SnapshotsDropped,
    /// The guest restored to a snapshot, SSH back, outside a revert (which counts its own): at
    /// preflight, in a bisection, in the reboot proof's rebuilds.
    Restores,
    /// Kept fixes run again onto an older state: the reboot proof's bisection probes and
    /// rebuilds, and a resume whose checkpoint was lost (their fix scripts, run once more).
    Replays,
    /// The loop's bookkeeping at each phase change: the lease, the run's phase in the store, the
    /// tally and the ETA for the progress line.
    Bookkeeping,
    /// The LLM's calls (the Architect's, the Worker's and the Reflector's turns). Read from the
    /// turns, never recorded in a `spent` event.
    Llm,
}

impl Overhead {
    pub const ALL: [Overhead; 6] =
        [Overhead::SnapshotsTaken, Overhead::SnapshotsDropped, Overhead::Restores, Overhead::Replays, Overhead::Bookkeeping, Overhead::Llm];

    pub fn says(self) -> &'static str {
        match self {
            Overhead::SnapshotsTaken => "snapshots taken",
            Overhead::SnapshotsDropped => "snapshots dropped",
            Overhead::Restores => "restores (outside reverts)",
            Overhead::Replays => "replays of kept fixes",
            Overhead::Bookkeeping => "bookkeeping (phase, tally, ETA)",
            Overhead::Llm => "LLM calls",
        }
    }
}

/// How many times a part of the rest ran, and its seconds in all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Spend {
    pub count: u32,
    pub secs: f64,
}

/// What the loop measured of the rest since its last `spent` event, by part.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Spending {
    pub parts: BTreeMap<Overhead, Spend>,
}

/// One part: how many times it ran and its seconds in all.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Share<P = Part> {
    pub part: P,
    pub count: usize,
    pub secs: f64,
}

/// A run's time, split.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimeSplit {
    pub wall_secs: f64,
    /// In [`Part::ALL`]'s order.
    pub parts: Vec<Share>,
    /// The wall time no part accounts for: snapshots, restores, picks, the store, the LLM.
    pub rest_secs: f64,
    /// The rest's measured parts, in [`Overhead::ALL`]'s order.
    pub rest: Vec<Share<Overhead>>,
    /// The rest that none of them names.
    pub unnamed_secs: f64,
    /// Everything but the fix scripts.
    pub proof_secs: f64,
    /// The proof over the fix scripts' time (`None` while no fix script has run).
    pub proof_ratio: Option<f64>,
}

impl TimeSplit {
    /// From a run's events, attempts and turns; `wall_secs` is its wall time over all its
    /// segments.
    pub fn of(events: &[Event], attempts: &[Attempt], turns: &[StoredTurn], wall_secs: f64) -> Self {
        let parts: Vec<Share> = Part::ALL.iter().map(|&part| share(part, events, attempts)).collect();
        let known: f64 = parts.iter().map(|s| s.secs).sum();
        let scripts = parts.iter().find(|s| s.part == Part::FixScripts).map_or(0.0, |s| s.secs);
        let proof_secs = (wall_secs - scripts).max(0.0);
        let proof_ratio = (scripts > 0.0).then(|| proof_secs / scripts);
        let rest_secs = (wall_secs - known).max(0.0);
        let rest = rest_shares(events, turns);
        let unnamed_secs = (rest_secs - rest.iter().map(|s| s.secs).sum::<f64>()).max(0.0);
        TimeSplit { wall_secs, parts, rest_secs, rest, unnamed_secs, proof_secs, proof_ratio }
    }

    pub fn secs(&self, part: Part) -> f64 {
        self.parts.iter().find(|s| s.part == part).map_or(0.0, |s| s.secs)
    }

    /// The seconds of one part of the rest.
    pub fn rest_secs_of(&self, part: Overhead) -> f64 {
        self.rest.iter().find(|s| s.part == part).map_or(0.0, |s| s.secs)
    }
}

/// The rest's parts: the `spent` events' sums, and the LLM's turns.
fn rest_shares(events: &[Event], turns: &[StoredTurn]) -> Vec<Share<Overhead>> {
    let mut sums: BTreeMap<Overhead, Spend> = BTreeMap::new();
    for e in events {
        if let EventData::Spent(s) = &e.data {
            for (part, spend) in s.parts.iter().filter(|(p, _)| **p != Overhead::Llm) {
                let sum = sums.entry(*part).or_default();
                (sum.count, sum.secs) = (sum.count + spend.count, sum.secs + spend.secs);
            }
        }
    }
    let llm = Spend { count: turns.len() as u32, secs: turns.iter().map(|t| t.latency_ms).sum::<i64>() as f64 / 1000.0 };
    sums.insert(Overhead::Llm, llm);
    Overhead::ALL
        .iter()
        .map(|&part| {
            let s = sums.get(&part).copied().unwrap_or_default();
            Share { part, count: s.count as usize, secs: s.secs }
        })
        .collect()
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
        Part::ReadsBefore => from_events(&scan(ScanKind::Before)),
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

//! The larger parts of [`crate::EventData`]: a pick, a replay, a blame, a checkpoint proven to boot.
use serde::{Deserialize, Serialize};

use crate::Verdict;
use crate::{AttemptId, AttemptNo, FixSource, MemoryId, RunId};

/// A checkpoint that survived a cold reboot, and the newest attempt whose fix it holds (`None`:
/// the baseline, no fix yet; written as 0).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Booted {
    pub snapshot: String,
    #[serde(with = "crate::id::zero_is_none")]
    pub through: Option<AttemptId>,
}

/// A rule picked, with its plan and what picked it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Picked {
    pub plan: String,
    #[serde(flatten)]
    pub by: PickedBy,
}

/// What picked a rule. Stored as the extra fields of its pick (none for the Architect).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PickedBy {
    /// A fix remembered from another target of the skill.
    Memory {
        memory: MemoryId,
        from_run: RunId,
        tried: i64,
        kept: i64,
    },
    /// The stock fix again, after fixes kept since its first try.
    SecondPass {
        second_pass: bool,
        kept_since: usize,
    },
    /// A step of the proven plan the run applies (`temper run --plan`).
    Plan {
        plan_step: usize,
    },
    /// The rule whose attempt a crash interrupted, picked again first.
    Interrupted {
        interrupted: bool,
    },
    Architect {},
}

/// A kept fix run again: before the next pick (its batch was rolled back), or onto an older kept
/// state (`onto`: the reboot proof's rebuild, or a resume whose checkpoint was gone).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Replayed {
    Onto { attempt: AttemptNo, onto: String, exit_code: Option<u32>, why: ReplayWhy },
    RolledBack { attempt: AttemptNo, source: FixSource },
}

/// Why kept fixes were replayed onto an older state. Stored as the text it always was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReplayWhy {
    /// The reboot proof rebuilt the checkpoint proven to boot, or bisected onto it.
    #[serde(rename = "reboot proof")]
    RebootProof,
    /// A resume found the run's checkpoint (or a pending fix's snapshot) gone, and rebuilt it.
    #[serde(rename = "checkpoint lost")]
    CheckpointLost,
    /// A pending fix's state, stood at again (a revert's fallback, a bisection's probe), has no
    /// snapshot of its own: the newest one before it was restored and the fixes since replayed.
    #[serde(rename = "no snapshot")]
    NoSnapshot,
}

/// A kept fix blamed after the fact: by the reboot proof, or by the final scan without it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Blamed {
    pub attempt: AttemptNo,
    pub verdict: Verdict,
    pub reason: String,
    /// The fix's description, cut to its last 200 characters.
    pub fix: String,
}

/// A regression found: by a batch's bisection, or by the final scan (with no reboot proof).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Regressed {
    Bisected { culprit: String, regressions: Vec<String>, probes: usize, replay: Vec<String> },
    AtFinalScan(Blamed),
}

/// Which full scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScanKind {
    /// The first scan of a run.
    Full,
    Final,
    /// A rescan of named rules before a fix, where no rescan after the last fix looked ahead to
    /// them: the rule about to be attempted, or the rules likely next after an escalation.
    Before,
}

/// The rescans preflight timed to set the regression cadence.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RescanTimes {
    pub one_rule: f64,
    pub with_set: f64,
}

/// A batch of a proven plan's steps, applied together and checked once (`temper run --plan`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanBatched {
    /// The plan's step numbers, in the order applied.
    pub steps: Vec<usize>,
    /// The regression set's rules, and the rules not applicable so far, scanned with the steps'.
    pub rules: usize,
    pub watched: usize,
    /// The rules the check found failing (steps' rules and the regression set's); empty when clean.
    pub failed: Vec<String>,
    /// What the lockout guard or the health check found, when either failed.
    pub guard: Option<String>,
    pub secs: f64,
}

/// A plan batch that failed its check, bisected to the first step the checks fail with. That
/// step is reverted (the checkpoint restored) and its rule goes to the normal loop; `again` are
/// the other steps applied, set aside and applied again in a later batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanBisected {
    pub step: usize,
    pub rule: String,
    pub verdict: Verdict,
    pub reason: String,
    pub probes: usize,
    pub again: Vec<usize>,
}

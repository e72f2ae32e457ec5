//! What each kind of event carries: one variant per [`EventKind`], its fields typed. The store
//! keeps the kind in its column and the fields as JSON (the same shapes as ever, so older runs
//! read back); [`EventData::parse`] turns them back into the variant.
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::PowerOff;
use crate::Verdict;
use crate::turn::Decision;
use crate::{AttemptNo, Engine, MemoryId, RunId};
use crate::{AttemptState, EscalationCause, EventKind, FixSource, JournalError, RevertMethod, RuleStatus, RunSummary, TurnRole};

pub use crate::event_parts::{
    Blamed, Booted, Picked, PickedBy, PlanBatched, PlanBisected, Regressed, ReplayWhy, Replayed, RescanTimes, ScanKind,
};

/// One event's data. Serialized adjacently (`{"kind": …, "data": {…}}`); the store splits the two.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "data", rename_all = "snake_case")]
pub enum EventData {
    /// The Architect's pick was refused; `default` is the plan taken instead, if any.
    ArchitectRejected {
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        default: Option<String>,
    },
    Attempt {
        attempt: AttemptNo,
        source: FixSource,
        replayed: bool,
        #[serde(default)]
        evidence_looked_ahead: bool,
    },
    AttemptInterrupted {
        attempt: AttemptNo,
        state: AttemptState,
    },
    /// A ban refused: it does not compile, or it would forbid too much (`reason` says which;
    /// empty in runs from before it was kept).
    BanInvalid {
        pattern: String,
        #[serde(default)]
        reason: String,
    },
    /// A ban another run made is in force here from this attempt on: once per run and ban.
    BanShared {
        ban: MemoryId,
        from_run: Option<RunId>,
        made_for: Option<String>,
        pattern: String,
        made_at: String,
    },
    /// A new checkpoint; `fixes` confirmed with it when a batch or a rebuild made it.
    Checkpoint {
        snapshot: String,
        replaced: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fixes: Option<usize>,
    },
    CheckpointDropped {
        snapshot: String,
    },
    /// The guest's final scan against its disk, judged from outside the guest.
    CrossExamined(Box<crate::offline::CrossExam>),
    /// On resume, snapshots of the run's kept state were gone (`missing`): the guest was rebuilt
    /// from `from`, the newest older kept state left, by replaying `replayed` kept fixes.
    CheckpointLost {
        missing: Vec<String>,
        from: String,
        replayed: usize,
    },
    Error {
        error: String,
    },
    /// `cause` is absent in runs older than the escalation causes.
    Escalate {
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cause: Option<EscalationCause>,
    },
    /// Items of the evidence before an attempt that their objects (the host's definitions)
    /// could not have collected: left out, each as `"ITEM" of test TEST: WHY`. No fix is derived
    /// from those tests.
    EvidenceRefused {
        refused: Vec<String>,
    },
    Finish(Box<RunSummary>),
    /// A fix kept pending its batch's check; `snapshot`: its own, when one was taken (else its
    /// state is rebuilt from the newest one before it).
    KeptPending {
        snapshot: Option<String>,
        pending: usize,
        every: u32,
    },
    LeaseTaken {
        driver: String,
        previous: Option<String>,
    },
    Paused {
        reason: String,
    },
    Pick(Picked),
    PlanBatch(PlanBatched),
    PlanBisected(PlanBisected),
    Preflight {
        checkpoint: String,
        baseline: String,
        oscap: String,
        engine: Engine,
    },
    /// A cold reboot through the hypervisor, and whether the guest came back.
    Reboot {
        why: String,
        fixes: usize,
        power_off: PowerOff,
        down_secs: f64,
        secs: f64,
        up: bool,
        problem: Option<String>,
    },
    /// A checkpoint proven to boot: the reboot proof passed on it.
    Booted(Booted),
    /// A kept fix blamed by the reboot proof (`not_persistent` or `breaks_boot`).
    RebootBlamed(Blamed),
    /// The Architect re-engaged on a rule; `plateau` says why, when attempts stopped improving.
    Reengage {
        decision: Decision,
        plateau: Option<String>,
    },
    ReengageDefault {
        reason: String,
        default: Decision,
    },
    Reflect {
        distilled: String,
        banned: Option<String>,
        tips: usize,
    },
    ReflectFailed {
        reason: String,
    },
    RegressionCheck {
        fixes: usize,
        rules: usize,
        watched: usize,
        failed: Vec<String>,
        secs: f64,
        #[serde(default)]
        stalls: u32,
        every: u32,
        /// What else the check found wrong: the guard's failure, or the scan's error (the batch
        /// is bisected for it as for a rule that fails).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        problem: Option<String>,
    },
    RegressionEvery {
        every: u32,
        how: Cadence,
        secs: Option<RescanTimes>,
        final_scan_only: Vec<String>,
    },
    RegressionFound(Regressed),
    RegressionUnstable {
        reason: String,
    },
    Replay(Replayed),
    /// `temper resume` took the run up where it stood.
    Resume {
        was: crate::RunStatus,
        phase: crate::Phase,
        checkpoint: String,
    },
    Revert {
        method: RevertMethod,
        ms: i64,
        checkpoint: String,
    },
    RevertScriptFailed {
        reason: String,
    },
    RuleApplicable {
        status: RuleStatus,
    },
    /// An open rule read pass at `head` before its own fix ran: other rules' fixes fixed it.
    RulePasses {
        head: String,
    },
    /// Results for rules the content does not have, dropped before anything read them: the
    /// guest writes the results document. Each id in plain characters (`?` for any other).
    RulesUnknown {
        ids: Vec<String>,
    },
    /// What the loop measured of the rest of the run's time since its last `spent` event.
    Spent(crate::Spending),
    Scan {
        kind: ScanKind,
        counts: BTreeMap<String, usize>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        score: Option<f64>,
        secs: f64,
        #[serde(default)]
        stalls: u32,
    },
    ToolCallCapped {
        role: TurnRole,
        dropped: Vec<String>,
    },
    /// An attempt's verdict; `attempt` is absent when nothing ran (refused or rejected).
    Verdict {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        attempt: Option<AttemptNo>,
        verdict: Verdict,
        reason: String,
    },
    /// Objects the one walk could not complete in a scan (a directory it could not read, an
    /// entry that vanished, a file system it leaves out, a path past PATH_MAX, no usable walk),
    /// each with why and where: oscap walked for them, and `rules` (full ids) were scanned
    /// again so, in the same scan (docs/scan-engines.md, "One walk").
    WalkFallback {
        objects: Vec<temper_scap::fswalk::Fallback>,
        rules: Vec<String>,
    },
}

/// How the regression cadence was set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cadence {
    Setting,
    Measured,
    /// The cadence the applied plan's source run ended with.
    Plan,
    Default,
}

impl EventData {
    pub fn kind(&self) -> EventKind {
        use EventData as D;
        match self {
            D::ArchitectRejected { .. } => EventKind::ArchitectRejected,
            D::Attempt { .. } => EventKind::Attempt,
            D::AttemptInterrupted { .. } => EventKind::AttemptInterrupted,
            D::BanInvalid { .. } => EventKind::BanInvalid,
            D::BanShared { .. } => EventKind::BanShared,
            D::Checkpoint { .. } => EventKind::Checkpoint,
            D::CheckpointDropped { .. } => EventKind::CheckpointDropped,
            D::CheckpointLost { .. } => EventKind::CheckpointLost,
            D::CrossExamined(_) => EventKind::CrossExamined,
            D::Error { .. } => EventKind::Error,
            D::Escalate { .. } => EventKind::Escalate,
            D::EvidenceRefused { .. } => EventKind::EvidenceRefused,
            D::Finish(_) => EventKind::Finish,
            D::KeptPending { .. } => EventKind::KeptPending,
            D::LeaseTaken { .. } => EventKind::LeaseTaken,
            D::Paused { .. } => EventKind::Paused,
            D::Pick(_) => EventKind::Pick,
            D::PlanBatch(_) => EventKind::PlanBatch,
            D::PlanBisected(_) => EventKind::PlanBisected,
            D::Preflight { .. } => EventKind::Preflight,
            D::Reboot { .. } => EventKind::Reboot,
            D::Booted(_) => EventKind::Booted,
            D::RebootBlamed(_) => EventKind::RebootBlamed,
            D::Reengage { .. } => EventKind::Reengage,
            D::ReengageDefault { .. } => EventKind::ReengageDefault,
            D::Reflect { .. } => EventKind::Reflect,
            D::ReflectFailed { .. } => EventKind::ReflectFailed,
            D::RegressionCheck { .. } => EventKind::RegressionCheck,
            D::RegressionEvery { .. } => EventKind::RegressionEvery,
            D::RegressionFound(_) => EventKind::RegressionFound,
            D::RegressionUnstable { .. } => EventKind::RegressionUnstable,
            D::Replay(_) => EventKind::Replay,
            D::Resume { .. } => EventKind::Resume,
            D::Revert { .. } => EventKind::Revert,
            D::RevertScriptFailed { .. } => EventKind::RevertScriptFailed,
            D::RuleApplicable { .. } => EventKind::RuleApplicable,
            D::RulePasses { .. } => EventKind::RulePasses,
            D::RulesUnknown { .. } => EventKind::RulesUnknown,
            D::Scan { .. } => EventKind::Scan,
            D::Spent(_) => EventKind::Spent,
            D::ToolCallCapped { .. } => EventKind::ToolCallCapped,
            D::Verdict { .. } => EventKind::Verdict,
            D::WalkFallback { .. } => EventKind::WalkFallback,
        }
    }

    /// The fields alone, as the store keeps them beside the kind.
    pub fn fields(&self) -> serde_json::Value {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(mut o)) => o.remove("data").unwrap_or(serde_json::Value::Null),
            _ => serde_json::Value::Null,
        }
    }

    /// The event a stored row holds: its kind and its fields (JSON text).
    pub fn parse(kind: EventKind, fields: &str) -> Result<Self, JournalError> {
        let bad = |e: serde_json::Error| JournalError::Db(format!("a stored `{kind}` event does not read: {e}: {fields}"));
        let data: serde_json::Value = serde_json::from_str(fields).map_err(bad)?;
        serde_json::from_value(serde_json::json!({"kind": kind, "data": data})).map_err(bad)
    }
}

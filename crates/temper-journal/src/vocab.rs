//! The store's vocabulary: every status, source, method and kind as an enum, kept in the
//! database as snake_case text (each column a foreign key to a lookup table, e.g. `verdicts`,
//! that holds the same values: a new value is one INSERT in a new migration).
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A value the code does not know, read from the database or from input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} `{value}`")]
pub struct UnknownValue {
    pub kind: &'static str,
    pub value: String,
}

/// Defines a text-backed enum: `as_str`, `FromStr`, `Display`, serde, `ALL`, and (with the
/// `sqlx` feature) `sqlx::Type`, `Encode` and `Decode` as text for every database.
macro_rules! text_enum {
    ($(#[$m:meta])* pub enum $name:ident { $($(#[$vm:meta])* $var:ident = $s:literal,)* }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
        pub enum $name {
            $($(#[$vm])* #[serde(rename = $s)] $var,)*
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$var,)*];
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$var => $s,)*
                }
            }
        }

        impl std::str::FromStr for $name {
            type Err = $crate::UnknownValue;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($s => Ok($name::$var),)*
                    _ => Err($crate::UnknownValue { kind: stringify!($name), value: s.to_string() }),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        #[cfg(feature = "sqlx")]
        impl<DB: sqlx::Database> sqlx::Type<DB> for $name
        where
            str: sqlx::Type<DB>,
        {
            fn type_info() -> DB::TypeInfo {
                <str as sqlx::Type<DB>>::type_info()
            }
            fn compatible(ty: &DB::TypeInfo) -> bool {
                <str as sqlx::Type<DB>>::compatible(ty)
            }
        }

        #[cfg(feature = "sqlx")]
        impl<'q, DB: sqlx::Database> sqlx::Encode<'q, DB> for $name
        where
            &'q str: sqlx::Encode<'q, DB>,
        {
            fn encode_by_ref(&self, buf: &mut DB::ArgumentBuffer) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
                <&'q str as sqlx::Encode<'q, DB>>::encode(self.as_str(), buf)
            }
        }

        #[cfg(feature = "sqlx")]
        impl<'r, DB: sqlx::Database> sqlx::Decode<'r, DB> for $name
        where
            &'r str: sqlx::Decode<'r, DB>,
        {
            fn decode(value: DB::ValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
                Ok(<&'r str as sqlx::Decode<'r, DB>>::decode(value)?.parse::<$name>()?)
            }
        }
    };
}
pub(crate) use text_enum;

text_enum! {
    /// Where a run stands.
    pub enum RunStatus {
        Running = "running",
        /// The LLM stayed unavailable; `temper resume` continues.
        Paused = "paused",
        /// Its driver stopped (an error, a kill); `temper resume` continues.
        Interrupted = "interrupted",
        Finished = "finished",
        Failed = "failed",
    }
}

text_enum! {
    /// A fleet queue item's state (`temper fleet enqueue`, `temper worker`).
    pub enum QueueState {
        /// Waiting for a worker.
        Queued = "queued",
        /// A worker took it; its run (once created) goes on under the run's own lease.
        Claimed = "claimed",
        /// Its run finished.
        Done = "done",
        /// Claimed too many times without its run finishing.
        Failed = "failed",
    }
}

text_enum! {
    /// The loop's step, for `temper status` and the progress line.
    pub enum Phase {
        Preflight = "preflight",
        Pick = "pick",
        Fix = "fix",
        Evaluate = "evaluate",
        Revert = "revert",
        Reflect = "reflect",
        /// The batch's regression rescan, and its bisection when it finds one.
        Regression = "regression",
        /// A proven plan's steps applied together and checked once (`ralph/batch/`).
        PlanBatch = "plan_batch",
        Finish = "finish",
        Done = "done",
    }
}

text_enum! {
    /// A rule's standing in a run. The scanner's other outcomes (notapplicable...) are kept as
    /// they came from the first scan.
    pub enum RuleStatus {
        Pending = "pending",
        Passing = "passing",
        Fixed = "fixed",
        Escalated = "escalated",
        Skipped = "skipped",
        Waived = "waived",
        Deferred = "deferred",
        StillFailing = "still_failing",
        /// Failing, but outside the run's scope (`--rules`, a plan's scope): not worked on, and
        /// counted in no progress, summary or exit code.
        OutOfScope = "out_of_scope",
        /// Its result flips with nothing changed: left out of the regression set.
        Unstable = "unstable",
        NotApplicable = "notapplicable",
        NotChecked = "notchecked",
        NotSelected = "notselected",
        Error = "error",
        Unknown = "unknown",
        Informational = "informational",
    }
}

impl RuleStatus {
    /// Set aside by the skill (or a waiver): not worked on, not counted as remaining.
    pub fn dispositioned(self) -> bool {
        matches!(self, Self::Skipped | Self::Waived | Self::Deferred)
    }
    /// Not worked on in this run, and not counted as remaining: dispositioned, or out of scope.
    pub fn set_aside(self) -> bool {
        self.dispositioned() || self == Self::OutOfScope
    }
    /// Passes now: at the first scan, or fixed since.
    pub fn passes(self) -> bool {
        matches!(self, Self::Passing | Self::Fixed)
    }
    /// The status of a rule the first scan found with `outcome`, before any disposition.
    pub fn of_outcome(outcome: ScanResult) -> Self {
        match outcome {
            ScanResult::Fail => Self::Pending,
            ScanResult::Pass | ScanResult::Fixed => Self::Passing,
            ScanResult::Error => Self::Error,
            ScanResult::NotApplicable => Self::NotApplicable,
            ScanResult::NotChecked => Self::NotChecked,
            ScanResult::NotSelected => Self::NotSelected,
            ScanResult::Informational => Self::Informational,
            ScanResult::Unknown | ScanResult::Missing => Self::Unknown,
        }
    }
}

text_enum! {
    /// Why a rule was handed to a human (its reason says it in words).
    pub enum EscalationCause {
        /// Its attempt budget is spent.
        AttemptBudget = "attempt_budget",
        /// Its wall-clock budget is spent.
        WallClockBudget = "wall_clock_budget",
        /// The same verdict with the same lesson or script, and no new approach.
        Plateau = "plateau",
        /// The Architect, re-engaged, said so.
        Architect = "architect",
        /// Nothing to try: no fix in the content, and the agent offers none.
        NoFix = "no_fix",
    }
}

text_enum! {
    /// A rule's result in a scan: the XCCDF outcomes, and `missing` when the scan had none.
    pub enum ScanResult {
        Pass = "pass",
        Fail = "fail",
        Error = "error",
        Unknown = "unknown",
        NotApplicable = "notapplicable",
        NotChecked = "notchecked",
        NotSelected = "notselected",
        Informational = "informational",
        Fixed = "fixed",
        Missing = "missing",
    }
}

impl From<temper_scap::Outcome> for ScanResult {
    fn from(o: temper_scap::Outcome) -> Self {
        o.as_str().parse().unwrap_or(Self::Unknown)
    }
}

impl From<Option<temper_scap::Outcome>> for ScanResult {
    fn from(o: Option<temper_scap::Outcome>) -> Self {
        o.map_or(Self::Missing, Self::from)
    }
}

text_enum! {
    /// How far an attempt got; `started` is committed before the fix touches the guest.
    pub enum AttemptState {
        Started = "started",
        Applied = "applied",
        Done = "done",
        /// A crash or kill stopped it; it is closed on resume and never run again.
        Interrupted = "interrupted",
    }
}

text_enum! {
    /// Where an attempt's fix came from. A replay keeps its original source (and is marked
    /// `replayed` on the attempt).
    pub enum FixSource {
        /// The datastream's `<fix>`; its revert is the checkpoint snapshot.
        Stock = "stock",
        /// An LLM's native `tool_calls` entry.
        Llm = "llm",
        /// An LLM's call parsed from the message content (`<tool_call>` or fenced JSON).
        LlmText = "llm_text",
        /// The Worker's reply was unusable: nothing ran.
        Rejected = "rejected",
        /// A fix an LLM wrote for another target with the same skill, kept there and past its
        /// regression check: tried before the LLM is asked.
        Memory = "memory",
        /// Built by temper from the rule's own OVAL check and the items the scanner found
        /// (`temper-derive`): when the content has no fix or its fix failed.
        Derived = "derived",
        /// A step of a proven plan another run exported (`temper run --plan`), applied and
        /// checked as any fix.
        Plan = "plan",
    }
}

text_enum! {
    /// How a failed attempt was undone.
    pub enum RevertMethod {
        /// Nothing to undo (kept, refused or rejected).
        None = "none",
        /// The Worker's revert script, verified.
        Script = "script",
        /// The revert script failed its verification; the snapshot was restored.
        ScriptThenSnapshot = "script_then_snapshot",
        Snapshot = "snapshot",
    }
}

text_enum! {
    /// A kept fix's standing with respect to the regression set.
    pub enum KeptState {
        /// Verified on its own, awaiting the batch's regression check.
        Pending = "pending",
        /// The regression set passed with it in place.
        Confirmed = "confirmed",
        /// Undone with its batch (its own regression, or kept after one).
        RolledBack = "rolled_back",
    }
}

text_enum! {
    /// The LLM role a turn was for.
    pub enum TurnRole {
        Architect = "architect",
        /// The Architect, re-engaged on a rule.
        Reengage = "reengage",
        Worker = "worker",
        Reflector = "reflector",
    }
}

text_enum! {
    /// How the reply carried its tool call.
    pub enum TurnMode {
        Native = "native",
        Text = "text",
        None = "none",
    }
}

text_enum! {
    /// The kinds of events in a run's journal.
    pub enum EventKind {
        ArchitectRejected = "architect_rejected",
        Attempt = "attempt",
        AttemptInterrupted = "attempt_interrupted",
        BanInvalid = "ban_invalid",
        /// A ban another run made (another lane, worker or an earlier run of the skill) is in
        /// force here from this attempt on: recorded once per run and ban.
        BanShared = "ban_shared",
        Checkpoint = "checkpoint",
        CheckpointDropped = "checkpoint_dropped",
        /// On resume, the run's checkpoint was gone: rebuilt from an older kept state.
        CheckpointLost = "checkpoint_lost",
        /// The guest's final scan held against its disk, judged from outside the guest.
        CrossExamined = "cross_examined",
        Error = "error",
        Escalate = "escalate",
        /// The evidence a fix was to start from held items the guest gave that their objects, as
        /// the host defines them, could not have collected: refused, each with why.
        EvidenceRefused = "evidence_refused",
        Finish = "finish",
        KeptPending = "kept_pending",
        LeaseTaken = "lease_taken",
        Paused = "paused",
        Pick = "pick",
        /// A batch of a proven plan's steps, applied together and checked once.
        PlanBatch = "plan_batch",
        /// A plan batch that failed its check, bisected to the step the checks fail with.
        PlanBisected = "plan_bisected",
        Preflight = "preflight",
        /// A cold reboot through the hypervisor, and whether the guest came back.
        Reboot = "reboot",
        /// A checkpoint proven to boot: the reboot proof passed on it.
        Booted = "booted",
        /// A kept fix blamed by the reboot proof (`not_persistent` or `breaks_boot`).
        RebootBlamed = "reboot_blamed",
        Reengage = "reengage",
        ReengageDefault = "reengage_default",
        Reflect = "reflect",
        ReflectFailed = "reflect_failed",
        RegressionCheck = "regression_check",
        RegressionEvery = "regression_every",
        RegressionFound = "regression_found",
        RegressionUnstable = "regression_unstable",
        Replay = "replay",
        Resume = "resume",
        Revert = "revert",
        RevertScriptFailed = "revert_script_failed",
        RuleApplicable = "rule_applicable",
        /// An open rule read pass before its own fix ran: other rules' fixes fixed it, and no fix
        /// of its own is tried or credited.
        RulePasses = "rule_passes",
        /// A full scan's results named rules the content does not have: dropped at the scanner.
        RulesUnknown = "rules_unknown",
        Scan = "scan",
        /// What the loop measured of the rest of the run's time (snapshots, restores, its
        /// bookkeeping) since the last such event.
        Spent = "spent",
        ToolCallCapped = "tool_call_capped",
        Verdict = "verdict",
        /// A scan's walk could not complete some objects: oscap walked for them.
        WalkFallback = "walk_fallback",
    }
}

text_enum! {
    /// The kinds of semantic memory.
    #[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
    pub enum MemoryKind {
        Lessons = "lessons",
        Bans = "bans",
        Tips = "tips",
        /// Verified fixes reused across targets, with how often each was tried and kept.
        Fixes = "fixes",
    }
}

text_enum! {
    /// What a Reflector's tip is about.
    pub enum TipKind {
        Package = "package",
        Config = "config",
        Service = "service",
        Permission = "permission",
        Kernel = "kernel",
        Other = "other",
    }
}

impl TipKind {
    /// The word an LLM gave (`type` in the `reflect` call), in any case; a word outside the
    /// list, or none, is `other`: the tip is kept, its text says the rest.
    pub fn from_reply(word: &str) -> Self {
        word.trim().to_ascii_lowercase().parse().unwrap_or(Self::Other)
    }
}

text_enum! {
    /// How the guest went down in a cold reboot.
    pub enum PowerOff {
        /// It shut down cleanly on the hypervisor's request (ACPI).
        Clean = "clean",
        /// It did not within the grace time, and was powered off.
        Forced = "forced",
    }
}

/// Which evaluator a scan of named rules uses (`temper_core::scan`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Engine {
    #[default]
    Xccdf,
    Oval,
}

impl Engine {
    pub const ALL: [Self; 2] = [Self::Xccdf, Self::Oval];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Xccdf => "xccdf",
            Self::Oval => "oval",
        }
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Engine {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL.into_iter().find(|e| e.as_str() == s).ok_or_else(|| format!("unknown scan engine `{s}`: use oval or xccdf"))
    }
}

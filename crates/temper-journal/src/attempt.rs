//! An attempt, described once: what it tries ([`AttemptSpec`]), what its checks found
//! ([`Findings`]), and its verdict. The loop's [`Evaluation`] and the store's [`Attempt`] row are
//! built from these parts.
use serde::Serialize;
use temper_scap::oval::Evidence;

use crate::Verdict;
use crate::id::{AttemptId, AttemptNo, RunId};
use crate::vocab::{AttemptState, FixSource, KeptState, RevertMethod, ScanResult};

/// What an attempt tries: the rule, the fix and where it starts from. Written (state `started`)
/// before the fix touches the guest, and read back as part of its row.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "sqlx", derive(sqlx::FromRow))]
pub struct AttemptSpec {
    pub rule_id: String,
    pub plan: String,
    pub source: FixSource,
    /// A fix rolled back with its batch, run again.
    pub replayed: bool,
    pub fix_script: String,
    pub revert_script: String,
    pub description: String,
    pub checkpoint: String,
    /// What the scanner found wrong with the rule before the fix (OVAL engine only).
    #[cfg_attr(feature = "sqlx", sqlx(json(nullable)))]
    pub evidence_before: Option<Evidence>,
}

/// What an attempt's fix, checks and revert measured. Empty until the attempt is judged.
#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(feature = "sqlx", derive(sqlx::FromRow))]
pub struct Findings {
    pub fix_exit_code: Option<i64>,
    pub fix_stdout: Option<String>,
    pub fix_stderr: Option<String>,
    pub rule_result: Option<ScanResult>,
    pub health_ok: Option<bool>,
    pub health_output: Option<String>,
    pub access_ok: Option<bool>,
    /// The rules the fix broke (stored as a JSON list).
    #[cfg_attr(feature = "sqlx", sqlx(try_from = "RuleList"))]
    pub regressions: Vec<String>,
    pub revert_ms: Option<i64>,
    pub apply_ms: Option<i64>,
    pub evaluate_ms: Option<i64>,
    pub diagnostics: Option<String>,
    /// What the rescan after the fix found wrong with the rule (OVAL engine, rule still failing).
    #[cfg_attr(feature = "sqlx", sqlx(json(nullable)))]
    pub evidence_after: Option<Evidence>,
}

/// A list of rule ids as the store keeps it: JSON text, or NULL for none.
#[cfg(feature = "sqlx")]
#[derive(sqlx::Type)]
#[sqlx(transparent)]
pub struct RuleList(Option<String>);

#[cfg(feature = "sqlx")]
impl TryFrom<RuleList> for Vec<String> {
    type Error = serde_json::Error;
    fn try_from(l: RuleList) -> Result<Self, Self::Error> {
        l.0.map_or(Ok(Vec::new()), |s| serde_json::from_str(&s))
    }
}

/// An attempt judged: what was found, the verdict and how the guest was put back.
#[derive(Debug, Clone)]
pub struct Evaluation {
    pub findings: Findings,
    pub verdict: Verdict,
    pub verdict_reason: String,
    pub revert_method: RevertMethod,
}

impl Evaluation {
    /// An evaluation that ends in `verdict`, with nothing measured yet.
    pub fn new(verdict: Verdict, reason: impl Into<String>) -> Self {
        Self { findings: Findings::default(), verdict, verdict_reason: reason.into(), revert_method: RevertMethod::None }
    }
    /// The same, with `findings`.
    pub fn found(self, findings: Findings) -> Self {
        Self { findings, ..self }
    }
}

/// One fix of a batch kept together ([`AttemptLog::record_fixes`](crate::AttemptLog::record_fixes)).
#[derive(Debug, Clone)]
pub struct KeptFix {
    pub id: AttemptId,
    pub rule_id: String,
    pub evaluation: Evaluation,
}

/// The fix a bisected batch blames for its regressions.
#[derive(Debug, Clone)]
pub struct Culprit {
    pub id: AttemptId,
    /// From a batch check: `regression`, `still_failing`, `scan_broken`, or the guard's
    /// (`lockout`, `guest_down`, `health_broken`); `not_persistent`, `breaks_boot` and the rest
    /// from the reboot proof.
    pub verdict: crate::Verdict,
    pub rule_id: String,
    pub reason: String,
    pub regressions: Vec<String>,
    pub diagnostics: String,
    /// The rule's own result where the check read it not passing; else the attempt's stays.
    pub rule_result: Option<crate::ScanResult>,
}

/// An attempt as the journal holds it: its spec, its findings once judged, and where it stands.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "sqlx", derive(sqlx::FromRow))]
pub struct Attempt {
    pub id: AttemptId,
    pub run_id: RunId,
    /// Its number on its rule.
    pub n: AttemptNo,
    pub state: AttemptState,
    #[serde(flatten)]
    #[cfg_attr(feature = "sqlx", sqlx(flatten))]
    pub spec: AttemptSpec,
    #[serde(flatten)]
    #[cfg_attr(feature = "sqlx", sqlx(flatten))]
    pub findings: Findings,
    pub verdict: Option<Verdict>,
    pub verdict_reason: Option<String>,
    pub revert_method: Option<RevertMethod>,
    pub started_at: String,
    pub ended_at: Option<String>,
    /// The snapshot taken after this fix was kept.
    pub snapshot: Option<String>,
    pub kept: Option<KeptState>,
}

impl Attempt {
    /// How it ended: its verdict, else its state (`started`, `interrupted`...).
    pub fn outcome(&self) -> String {
        self.verdict.map_or_else(|| self.state.to_string(), |v| v.to_string())
    }
    /// Its source, marked when it was a replay.
    pub fn source_label(&self) -> String {
        if self.spec.replayed { format!("{} (replayed)", self.spec.source) } else { self.spec.source.to_string() }
    }
    /// A try on its rule: judged, not closed by a crash (an interrupted attempt never counts).
    pub fn is_try(&self) -> bool {
        self.state != AttemptState::Interrupted
    }
    /// A try of the content's stock fix, picked for itself (not a replay).
    pub fn is_stock_try(&self) -> bool {
        self.is_try() && self.spec.source == FixSource::Stock && !self.spec.replayed
    }
    /// The stock fix run again by the second pass: the same rule had a stock try before it.
    /// `others` may hold any attempts of the run.
    pub fn is_second_pass<'a>(&self, others: impl IntoIterator<Item = &'a Attempt>) -> bool {
        self.is_stock_try() && others.into_iter().any(|b| b.spec.rule_id == self.spec.rule_id && b.id < self.id && b.is_stock_try())
    }
    /// The source, with `(replayed)` or `(second pass)` where it applies.
    pub fn label<'a>(&self, others: impl IntoIterator<Item = &'a Attempt>) -> String {
        if self.is_second_pass(others) { format!("{} (second pass)", self.spec.source) } else { self.source_label() }
    }
    /// A kept fix whose script exited non-zero: the checks kept it, the exit code is a warning.
    pub fn warning(&self) -> Option<String> {
        let f = &self.findings;
        let code = f.fix_exit_code.filter(|c| *c != 0 && self.verdict == Some(Verdict::Fixed))?;
        let stderr = f.fix_stderr.as_deref().map(str::trim).filter(|e| !e.is_empty());
        let said = stderr.map(|e| format!(": {}", e.lines().last().unwrap_or(e))).unwrap_or_default();
        Some(format!("the fix exited {code}{said}; kept because the rule, the health check, access and the regression set all passed"))
    }
    /// Kept and still in force: `fixed`, or a `needs_reboot` stock fix kept for the reboot proof,
    /// and not rolled back (by a batch's regression or the reboot proof).
    pub fn in_force(&self) -> bool {
        matches!(self.verdict, Some(Verdict::Fixed | Verdict::NeedsReboot)) && self.kept.is_some_and(|k| k != KeptState::RolledBack)
    }
}

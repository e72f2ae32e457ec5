//! What passes between the steps: a pick and the fix the harness chose for it, what the pick
//! hands the attempt; an attempt's identity and how it ended, what the attempt hands the
//! reflection, the regression check and the reboot proof.
use temper_journal::FixSource;
use temper_journal::Verdict;
use temper_journal::turn::ApplyFix;
use temper_journal::{Attempt, AttemptId, AttemptNo, MemoryId};

/// The rule to work on and the Architect's plan for it.
#[derive(Debug, Clone)]
pub(in crate::ralph) struct Pick {
    pub rule_id: String,
    pub plan: String,
    /// A fix the harness runs as the first attempt instead of asking the Worker.
    pub preset: Option<Preset>,
}

/// A fix chosen by the harness: a replay (rolled back with a regressed batch), the stock fix's
/// second pass, a plan's step (`pick/planned.rs`) or a remembered fix (`pick/remembered.rs`). It keeps the
/// source it had.
#[derive(Debug, Clone)]
pub(in crate::ralph) struct Preset {
    pub fix: ApplyFix,
    pub source: FixSource,
    pub replayed: bool,
    /// The remembered fix it is, whose try is counted.
    pub remembered: Option<MemoryId>,
    /// A plan's derived step (its number): `fix` is the source's, and the attempt derives its
    /// own from this target's evidence (`offer/plan.rs`).
    pub derived: Option<usize>,
}

/// One attempt's identity, from its start through the reflection and the escalation checks.
#[derive(Debug, Clone)]
pub(super) struct Trial {
    pub id: AttemptId,
    /// Its number on its rule (1 for the first try); `None` for a kept fix whose row the
    /// journal no longer lists.
    pub n: Option<AttemptNo>,
    pub rule: String,
    pub plan: String,
}

impl Trial {
    /// The trial an attempt's row records (a kept fix blamed later).
    pub fn of(a: &Attempt) -> Self {
        Self { id: a.id, n: Some(a.n), rule: a.spec.rule_id.clone(), plan: a.spec.plan.clone() }
    }
}

/// How an attempt ended, for the reflection and the escalation checks.
pub(super) struct Ended {
    pub trial: Trial,
    pub verdict: Verdict,
    pub reason: String,
    pub fix_script: String,
    pub diagnostics: String,
}

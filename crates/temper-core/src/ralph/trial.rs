//! One attempt's identity and how it ended: what the attempt step hands to the reflection, the
//! regression check and the reboot proof.
use crate::journal::{Attempt, AttemptId};
use crate::verdict::Verdict;

/// One attempt's identity, from its start through the reflection and the escalation checks.
#[derive(Debug, Clone)]
pub(super) struct Trial {
    pub id: AttemptId,
    /// Its number on its rule (1 for the first try).
    pub n: u32,
    pub rule: String,
    pub plan: String,
}

impl Trial {
    /// The trial an attempt's row records (a kept fix blamed later).
    pub fn of(a: &Attempt) -> Self {
        Self { id: a.id, n: a.n as u32, rule: a.spec.rule_id.clone(), plan: a.spec.plan.clone() }
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

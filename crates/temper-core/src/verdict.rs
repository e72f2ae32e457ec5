//! The verdict on one attempt.
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The rule passes, health and access are intact, no regression.
    Fixed,
    StillFailing,
    /// The fix script exited non-zero, timed out, or the agent's call was invalid.
    ApplyFailed,
    HealthBroken,
    /// SSH or `sudo -n true` no longer works.
    Lockout,
    /// A rule that passed before now fails.
    Regression,
    /// The deny-list or a ban refused the script before it ran.
    Refused,
    /// The fix asks for a reboot, which the harness never does.
    NeedsReboot,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fixed => "fixed",
            Self::StillFailing => "still_failing",
            Self::ApplyFailed => "apply_failed",
            Self::HealthBroken => "health_broken",
            Self::Lockout => "lockout",
            Self::Regression => "regression",
            Self::Refused => "refused",
            Self::NeedsReboot => "needs_reboot",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::Fixed,
            Self::StillFailing,
            Self::ApplyFailed,
            Self::HealthBroken,
            Self::Lockout,
            Self::Regression,
            Self::Refused,
            Self::NeedsReboot,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

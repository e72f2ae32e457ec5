//! The verdict on one attempt.
use crate::journal::text_enum;

text_enum! {
    pub enum Verdict {
        /// The rule passes, health and access are intact, no regression.
        Fixed = "fixed",
        StillFailing = "still_failing",
        /// The fix script exited non-zero, timed out, or the agent's call was invalid.
        ApplyFailed = "apply_failed",
        HealthBroken = "health_broken",
        /// SSH or `sudo -n true` no longer works.
        Lockout = "lockout",
        /// A rule that passed before now fails.
        Regression = "regression",
        /// The deny-list or a ban refused the script before it ran.
        Refused = "refused",
        /// The fix asks for a reboot, which the harness never does.
        NeedsReboot = "needs_reboot",
        /// The harness stopped during the attempt; it was closed on resume and does not count.
        Interrupted = "interrupted",
    }
}

impl Verdict {
    pub fn parse(s: &str) -> Option<Self> {
        s.parse().ok()
    }
}

//! The verdict on one attempt (`temper_core::verdict::judge` decides it from the checks after
//! a fix).
use crate::text_enum;

text_enum! {
    pub enum Verdict {
        /// The rule passes, health and access are intact, no regression.
        Fixed = "fixed",
        StillFailing = "still_failing",
        /// The rule's check could not run with the fix in force: the scan failed after it (its
        /// own rescan, or a batch's check bisected to it). The fix is reverted.
        ScanBroken = "scan_broken",
        /// The fix script exited non-zero, did not finish, or the agent's call was invalid.
        ApplyFailed = "apply_failed",
        /// The fix's processes made no progress (no CPU, nothing written, or a lock waited on)
        /// for `fix_stall_secs`: stopped and killed.
        Stalled = "stalled",
        /// The fix was still working at the hard cap, `fix_timeout_secs`: stopped and killed.
        TimedOut = "timed_out",
        HealthBroken = "health_broken",
        /// SSH or `sudo -n true` no longer works.
        Lockout = "lockout",
        /// A rule that passed before now fails.
        Regression = "regression",
        /// The deny-list or a ban refused the script before it ran.
        Refused = "refused",
        /// The stock fix says it takes effect after a reboot, and the rule still fails live.
        NeedsReboot = "needs_reboot",
        /// The rule passed live, then failed after a cold reboot: the fix did not persist.
        NotPersistent = "not_persistent",
        /// With this fix the guest no longer boots to SSH and health (found by the reboot proof).
        BreaksBoot = "breaks_boot",
        /// The harness stopped during the attempt; it was closed on resume and does not count.
        Interrupted = "interrupted",
        /// The guest stopped running during the checks (it crashed or was powered off): the
        /// hypervisor says so, so it is not judged a lockout.
        GuestDown = "guest_down",
    }
}

impl Verdict {
    pub fn parse(s: &str) -> Option<Self> {
        s.parse().ok()
    }
}

//! The verdict from the checks after a fix: a pure function, whose table is `docs/verdicts.md`.
use super::Verdict;
use crate::checks::{GuardFailure, Health};
use temper_journal::ScanResult;

/// How the fix script ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    Zero,
    /// A non-zero exit, with its error ("the fix exited 1").
    NonZero(String),
    /// Cut off mid-way (connection lost, no exit code), with its error.
    Unfinished(String),
    /// Stopped by the harness: stalled, or at the hard cap (`crate::script`).
    Stopped(crate::script::Stop),
}

/// The guard after the fix: the lockout check, then the health check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Guard {
    /// SSH or `sudo -n true` no longer works, with the detail.
    Lockout(String),
    /// The guest stopped running (the hypervisor says so), with the detail.
    Down(String),
    /// Access works, but the health check could not run, with its error.
    HealthError(String),
    /// Access works and the health check ran.
    Health { ok: bool, output: String },
}

/// The rescan of the rule after the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rescan {
    Read(ScanResult),
    /// The rescan's error.
    Failed(String),
    /// A fix that did not finish is never rescanned.
    NotRun,
}

/// Whether the fix takes effect only after a reboot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reboot {
    No,
    /// The stock fix says so, and the run's reboot proof will prove it later.
    WithProof,
    /// The stock fix says so, and the run has no reboot proof.
    WithoutProof,
}

impl Reboot {
    /// A fix that takes effect at boot (`needs_reboot`), in a run with the reboot proof or not.
    pub fn of(needs_reboot: bool, proof: bool) -> Self {
        match (needs_reboot, proof) {
            (false, _) => Reboot::No,
            (true, true) => Reboot::WithProof,
            (true, false) => Reboot::WithoutProof,
        }
    }
}

/// What the verdict is decided from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checks {
    pub exit: Exit,
    pub guard: Guard,
    pub rescan: Rescan,
    /// Rules that passed before and now fail.
    pub regressions: Vec<String>,
    pub reboot: Reboot,
    /// The regression set is checked with the batch, not here (for the reason only).
    pub batched: bool,
}

/// The verdict and its reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    pub verdict: Verdict,
    pub reason: String,
    /// The checks got to the rule's result: it and the regressions count, and are recorded.
    pub read: bool,
}

impl From<Result<Health, GuardFailure>> for Guard {
    fn from(guard: Result<Health, GuardFailure>) -> Self {
        match guard {
            Ok(h) => Guard::Health { ok: h.ok, output: h.output },
            Err(GuardFailure::Lockout(detail)) => Guard::Lockout(detail),
            Err(GuardFailure::HealthError(e)) => Guard::HealthError(e),
            Err(GuardFailure::GuestDown(detail)) => Guard::Down(detail),
        }
    }
}

impl Guard {
    pub fn access_ok(&self) -> bool {
        !matches!(self, Guard::Lockout(_) | Guard::Down(_))
    }

    /// The guard's failure, as the verdict it gives a fix and its reason (as `judge` gives them);
    /// `None` when access works and the guest is healthy.
    pub fn failure(&self) -> Option<(Verdict, String)> {
        match self {
            Guard::Lockout(detail) => Some((Verdict::Lockout, detail.clone())),
            Guard::Down(detail) => Some((Verdict::GuestDown, detail.clone())),
            Guard::HealthError(e) => Some((Verdict::HealthBroken, format!("the health check could not run: {e}"))),
            Guard::Health { ok: false, output } => Some((Verdict::HealthBroken, format!("health check: {output}"))),
            Guard::Health { ok: true, .. } => None,
        }
    }
}

/// The verdict on a fix from the checks after it, in order: access, health, the exit, the
/// rule's result, the regressions.
pub fn judge(c: &Checks) -> Judgement {
    let done = |(verdict, reason): (Verdict, String)| Judgement { verdict, reason, read: false };
    // A check that cannot run after a fix is a failed fix (it gets reverted), not a stopped run.
    let (healthy, output) = match &c.guard {
        Guard::Health { ok, output } => (*ok, output),
        g => return done(g.failure().expect("a guard that is not a health reading failed")),
    };
    // A script that did not finish was cut off mid-way: never judged by the checks. One that
    // exited non-zero is: its exit code is evidence, and the checks give the verdict.
    let error = match &c.exit {
        Exit::Unfinished(err) => return done((Verdict::ApplyFailed, err.clone())),
        Exit::Stopped(stop) => {
            let verdict = match stop {
                crate::script::Stop::Stalled { .. } => Verdict::Stalled,
                crate::script::Stop::Cap(_) => Verdict::TimedOut,
            };
            return done((verdict, format!("the fix was {stop}")));
        }
        Exit::Zero => None,
        Exit::NonZero(err) => Some(err),
    };
    let failed = |verdict: Verdict, reason: String| match error {
        Some(err) => (Verdict::ApplyFailed, format!("{err}, and {reason}")),
        None => (verdict, reason),
    };
    if !healthy {
        return done(failed(Verdict::HealthBroken, format!("health check: {output}")));
    }
    let result = match &c.rescan {
        Rescan::Read(result) => *result,
        // A check that cannot run proves nothing: the fix is blamed for it and reverted.
        Rescan::Failed(e) => return done(failed(Verdict::ScanBroken, format!("the rule's check could not run after the fix: {e}"))),
        Rescan::NotRun => return done(failed(Verdict::StillFailing, "the rule was not rescanned after the fix".into())),
    };
    let regressed = !c.regressions.is_empty();
    let (verdict, reason) = match (result, c.reboot) {
        (ScanResult::Pass, _) | (_, Reboot::WithProof) if regressed => {
            failed(Verdict::Regression, format!("rules that passed now fail: {}", c.regressions.join(", ")))
        }
        (ScanResult::Pass, _) => {
            let checks = if c.batched {
                "the rule passes, the health check is HEALTHY, access works; the regression set is checked with the batch"
            } else {
                "the rule passes, the health check is HEALTHY, access works, no regression"
            };
            let warning = error.map(|err| format!("; kept on the checks' word, with a warning: {err}")).unwrap_or_default();
            (Verdict::Fixed, format!("{checks}{warning}"))
        }
        (_, Reboot::WithProof) => failed(
            Verdict::NeedsReboot,
            format!("the stock fix takes effect after a reboot and the rule reads {result} until then: kept for the run's reboot proof"),
        ),
        (_, Reboot::WithoutProof) => failed(Verdict::NeedsReboot, format!("the rule's result after the fix is {result}")),
        (_, Reboot::No) => failed(Verdict::StillFailing, format!("the rule's result after the fix is {result}")),
    };
    Judgement { verdict, reason, read: true }
}

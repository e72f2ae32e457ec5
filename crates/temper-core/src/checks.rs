//! The checks after every fix: the mission-app health check and the lockout guard.
use std::time::Duration;

use crate::ports::{Exec, Guest, PortError};

/// The token the health check prints when all is well.
pub const HEALTHY: &str = "HEALTHY";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Health {
    pub ok: bool,
    pub exit_code: Option<u32>,
    pub output: String,
}

/// Runs the health check: healthy only on exit 0 *and* the exact token as the last line.
pub async fn health(guest: &dyn Guest, command: &str) -> Result<Health, PortError> {
    let out = guest.exec(Exec::new([command]).timeout(Duration::from_secs(60))).await?;
    let stdout = out.stdout_str();
    let last = stdout.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    let mut output = stdout.trim().to_string();
    if !out.stderr.is_empty() {
        output.push_str(&format!("\n[stderr] {}", out.stderr_str().trim()));
    }
    Ok(Health { ok: out.exit_code == Some(0) && last == HEALTHY, exit_code: out.exit_code, output })
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    pub ok: bool,
    pub detail: String,
}

/// The lockout guard: a fresh SSH login works and `sudo -n true` succeeds on it.
pub async fn access(guest: &dyn Guest, within: Duration) -> Access {
    match guest.exec_fresh(Exec::new(["true"]).timeout(Duration::from_secs(30)), within).await {
        Ok(o) if o.success() => Access { ok: true, detail: "a fresh ssh login and sudo -n true work".into() },
        Ok(o) => Access { ok: false, detail: format!("sudo -n true exited {:?}: {}", o.exit_code, o.stderr_str().trim()) },
        Err(e @ (PortError::Connect { .. } | PortError::Unreachable(_) | PortError::HostKey(_))) => {
            Access { ok: false, detail: format!("a fresh ssh login failed: {e}") }
        }
        Err(e) => Access { ok: false, detail: format!("sudo -n true: {e}") },
    }
}

/// Why the guard after a change failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuardFailure {
    /// SSH or `sudo -n true` no longer works.
    Lockout(String),
    /// The health check could not run at all.
    HealthError(String),
    /// The hypervisor says the guest stopped running (crashed, powered off): not a lockout.
    GuestDown(String),
}

/// The checks after every change: the lockout guard, then the health check. The health check
/// runs on the live session beside the guard's fresh login (the login is most of the guard's
/// time) and counts only once access works: a lockout is judged first, without waiting for it.
/// An unhealthy guest is `Ok` with `ok: false`; the caller decides what that means.
pub async fn access_then_health(guest: &dyn Guest, within: Duration, command: &str) -> Result<Health, GuardFailure> {
    let health = health(guest, command);
    let access = access(guest, within);
    tokio::pin!(health, access);
    let mut read = None;
    let access = loop {
        tokio::select! {
            a = &mut access => break a,
            h = &mut health, if read.is_none() => read = Some(h),
        }
    };
    if !access.ok {
        return Err(GuardFailure::Lockout(access.detail));
    }
    let health = match read {
        Some(h) => h,
        None => health.await,
    };
    health.map_err(|e| GuardFailure::HealthError(e.to_string()))
}

/// Recent errors from the journal, for the Reflector (captured before any revert).
pub async fn journal_errors(guest: &dyn Guest) -> String {
    let exec = Exec::new(["journalctl", "-p", "err", "-n", "30", "--no-pager", "--since", "-10min"])
        .timeout(Duration::from_secs(30))
        .max_output(16 * 1024);
    match guest.exec(exec).await {
        Ok(o) => o.stdout_str(),
        Err(e) => format!("(journal unavailable: {e})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::{ExecOutput, PortResult};
    use std::time::Duration;
    use tokio::time::{Instant, sleep};

    /// A fresh login that takes `login` (and works or not), and a health check on the live
    /// session that takes `health`; on tokio's paused clock.
    struct Slow {
        login: Duration,
        login_works: bool,
        health: Duration,
    }

    fn out(stdout: &str) -> ExecOutput {
        ExecOutput { exit_code: Some(0), stdout: stdout.as_bytes().to_vec(), ..ExecOutput::default() }
    }

    #[async_trait::async_trait]
    impl Guest for Slow {
        async fn exec(&self, _: Exec) -> PortResult<ExecOutput> {
            sleep(self.health).await;
            Ok(out("HEALTHY\n"))
        }
        async fn reconnect(&self, _: Duration) -> PortResult<()> {
            Ok(())
        }
        async fn exec_fresh(&self, _: Exec, _: Duration) -> PortResult<ExecOutput> {
            sleep(self.login).await;
            if self.login_works {
                Ok(out(""))
            } else {
                Err(PortError::Connect { target: "guest".into(), reason: "connection refused".into() })
            }
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_health_check_runs_beside_the_fresh_login() {
        let guest = Slow { login: Duration::from_secs(2), login_works: true, health: Duration::from_secs(1) };
        let t = Instant::now();
        let h = access_then_health(&guest, Duration::from_secs(5), "health").await.expect("access works");
        assert!(h.ok, "{h:?}");
        assert_eq!(t.elapsed(), Duration::from_secs(2), "the login's time, not the login's and the health check's");
    }

    #[tokio::test(start_paused = true)]
    async fn a_lockout_is_judged_without_waiting_for_the_health_check() {
        let guest = Slow { login: Duration::from_secs(1), login_works: false, health: Duration::from_secs(60) };
        let t = Instant::now();
        let got = access_then_health(&guest, Duration::from_secs(5), "health").await;
        assert!(matches!(&got, Err(GuardFailure::Lockout(d)) if d.contains("a fresh ssh login failed")), "{got:?}");
        assert_eq!(t.elapsed(), Duration::from_secs(1));
    }
}

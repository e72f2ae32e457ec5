//! The watchdog. oscap 1.3's probes can deadlock (every thread parked on a futex, the scan
//! never ends), so a run whose CPU time has not grown for `stall_after` is killed and run
//! again. It is found and killed by its own PID, from its pid file, never by name: a scan of
//! another run in the same guest goes on untouched.
use std::time::Duration;

use tokio::time::Instant;

use super::Scanner;
use super::files::ScanFiles;
use crate::ports::{Exec, Guest, PortResult};

impl Scanner {
    /// Returns once the oscap of `files` has not gained CPU time (`ps -o times`, all its
    /// threads) for `stall_after`. A sample that cannot be read never counts as a stall.
    pub(super) async fn watch(&self, guest: &dyn Guest, files: &ScanFiles) {
        tokio::time::sleep(self.watch_every * 2).await;
        let (mut pid, mut last, mut since) = (None, None, Instant::now());
        loop {
            if pid.is_none() {
                pid = read_pid(guest, &files.pid).await;
            }
            let cpu = match pid {
                Some(pid) => cpu_seconds(guest, pid).await,
                None => None,
            };
            match cpu {
                Some(_) if cpu != last => (last, since) = (cpu, Instant::now()),
                Some(_) if since.elapsed() >= self.stall_after => return,
                _ => {}
            }
            tokio::time::sleep(self.watch_every).await;
        }
    }

    /// Kills the process in the pid file of `files`, if it is still an oscap (a PID is reused
    /// only once its process is gone).
    pub(super) async fn kill(&self, guest: &dyn Guest, files: &ScanFiles) -> PortResult<()> {
        guest.exec(Exec::new(["pkill", "-KILL", "-x", "oscap", "-F", files.pid.as_str()])).await.map(drop)
    }
}

async fn read_pid(guest: &dyn Guest, file: &str) -> Option<u32> {
    let out = guest.exec(Exec::new(["cat", "--", file]).timeout(Duration::from_secs(30))).await.ok()?;
    out.success().then(|| out.stdout_str().trim().parse().ok()).flatten()
}

async fn cpu_seconds(guest: &dyn Guest, pid: u32) -> Option<u64> {
    let probe = Exec::new(["ps", "-o", "times=", "-p", &pid.to_string()]).as_user().timeout(Duration::from_secs(30));
    guest.exec(probe).await.ok().and_then(|o| parse_times(&o.stdout_str()))
}

/// The CPU seconds in `ps -o times=` output; `None` when the process is gone.
pub(super) fn parse_times(ps: &str) -> Option<u64> {
    ps.split_whitespace().next()?.parse().ok()
}

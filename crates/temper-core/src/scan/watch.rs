//! The watchdog. oscap 1.3's probes can deadlock (every thread parked on a futex, the scan
//! never ends), so a run whose CPU time has not grown for `stall_after` is killed and run
//! again; sooner, after `parked_after`, when every one of its threads is parked on a futex,
//! the deadlock's own picture. It is found and killed by its own PID, from its pid file, never
//! by name: a scan of another run in the same guest goes on untouched.
use std::time::Duration;

use tokio::time::Instant;

use super::Scanner;
use super::files::ScanFiles;
use crate::ports::{Exec, Guest, PortResult};

/// Why the watchdog gave up on a run: how long its CPU time had stood still, and whether every
/// thread was parked on a futex then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stall {
    pub idle: Duration,
    pub parked: bool,
}

impl Scanner {
    /// Returns once the oscap of `files` has not gained CPU time (`ps -o times`, all its
    /// threads) for `stall_after`, or for `parked_after` with all its threads parked on a
    /// futex. A sample that cannot be read never counts as a stall.
    pub(super) async fn watch(&self, guest: &dyn Guest, files: &ScanFiles) -> Stall {
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
            let idle = since.elapsed();
            match (cpu, pid) {
                (Some(_), _) if cpu != last => (last, since) = (cpu, Instant::now()),
                (Some(_), _) if idle >= self.stall_after => return Stall { idle, parked: false },
                (Some(_), Some(pid)) if idle >= self.parked_after && parked(guest, pid).await == Some(true) => {
                    return Stall { idle, parked: true };
                }
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

/// Whether every thread of `pid` is parked on a futex. Read as root (a thread's wait channel
/// of another user's process reads `0`), and only once its CPU time stood still.
async fn parked(guest: &dyn Guest, pid: u32) -> Option<bool> {
    let probe = Exec::new(["ps", "-L", "-o", "stat=,wchan:32=", "-p", &pid.to_string()]).timeout(Duration::from_secs(30));
    let out = guest.exec(probe).await.ok()?;
    out.success().then(|| all_parked(&out.stdout_str())).flatten()
}

/// The CPU seconds in `ps -o times=` output; `None` when the process is gone.
pub(super) fn parse_times(ps: &str) -> Option<u64> {
    ps.split_whitespace().next()?.parse().ok()
}

/// From `ps -L -o stat=,wchan:32=`: true when every thread sleeps (`S`) in a futex wait
/// (`futex_wait_queue`, `futex_wait_queue_me` on kernels before 5.16). A thread running, or
/// waiting on a pipe, a child or the disk, is work going on. `None` with no thread listed.
pub(super) fn all_parked(ps: &str) -> Option<bool> {
    let threads: Vec<(&str, &str)> = ps
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            Some((w.next()?, w.next().unwrap_or("-")))
        })
        .collect();
    (!threads.is_empty()).then(|| threads.iter().all(|(stat, wchan)| stat.starts_with('S') && wchan.starts_with("futex_")))
}

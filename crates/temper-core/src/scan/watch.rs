//! The watchdog. oscap 1.3's probes can deadlock (every thread parked on a futex, the scan
//! never ends), so a run whose CPU time has not grown for `stall_after` is killed and run
//! again; sooner, after `parked_after`, when every one of its threads is parked on a futex,
//! the deadlock's own picture. A probe can also spin: one thread running in user space, making
//! no system call, for as long as it is let (19 minutes on a scan that takes one, in a local
//! run of `.ci/run`'s fleet test). Its CPU time grows and its system time does not; after `spin_after` so, it is
//! killed and run again too. It is found and killed by its own PID, from its pid file, never
//! by name: a scan of another run in the same guest goes on untouched.
use std::fmt;
use std::time::Duration;

use tokio::time::Instant;

use super::Scanner;
use super::files::ScanFiles;
use crate::ports::{Exec, Guest, PortResult};

/// Why the watchdog gave up on a run, and for how long it had been so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stall {
    pub idle: Duration,
    pub kind: StallKind,
}

/// The picture the watchdog saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StallKind {
    /// Its CPU time stood still, its threads not all parked.
    Still,
    /// Its CPU time stood still, every thread parked on a futex.
    Parked,
    /// Its CPU time grew in user space only: no system call took a tick.
    Spinning,
}

impl fmt::Display for StallKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Still => "its CPU time stood still, its threads not all parked",
            Self::Parked => "its CPU time stood still, every thread parked on a futex",
            Self::Spinning => "its CPU time grew in user space only, with no system time",
        })
    }
}

/// A process's CPU time so far, all its threads, in clock ticks (`/proc/PID/stat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Times {
    pub user: u64,
    pub system: u64,
}

impl Scanner {
    /// Returns once the oscap of `files` has not gained CPU time (all its threads) for
    /// `stall_after`, or for `parked_after` with all its threads parked on a futex; or has gained
    /// it with no system time for `spin_after`. A sample that cannot be read never counts as a
    /// stall.
    pub(super) async fn watch(&self, guest: &dyn Guest, files: &ScanFiles) -> Stall {
        tokio::time::sleep(self.watch_every * 2).await;
        let (mut pid, mut last, mut since, mut kernel_since) = (None, None::<Times>, Instant::now(), Instant::now());
        loop {
            if pid.is_none() {
                pid = read_pid(guest, &files.pid).await;
            }
            let now = match pid {
                Some(pid) => cpu_times(guest, pid).await,
                None => None,
            };
            let idle = since.elapsed();
            match (now, pid) {
                // Both counters only grow: a change in either is CPU time gained.
                (Some(t), _) if last != now => {
                    if last.is_none_or(|l| l.system != t.system) {
                        kernel_since = Instant::now();
                    }
                    (last, since) = (now, Instant::now());
                    let user_only = kernel_since.elapsed();
                    if user_only >= self.spin_after {
                        return Stall { idle: user_only, kind: StallKind::Spinning };
                    }
                }
                (Some(_), _) if idle >= self.stall_after => return Stall { idle, kind: StallKind::Still },
                (Some(_), Some(pid)) if idle >= self.parked_after && parked(guest, pid).await == Some(true) => {
                    return Stall { idle, kind: StallKind::Parked };
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

async fn cpu_times(guest: &dyn Guest, pid: u32) -> Option<Times> {
    let probe = Exec::new(["cat", "--", &format!("/proc/{pid}/stat")]).as_user().timeout(Duration::from_secs(30));
    guest.exec(probe).await.ok().filter(|o| o.success()).and_then(|o| parse_stat(&o.stdout_str()))
}

/// Whether every thread of `pid` is parked on a futex. Read as root (a thread's wait channel
/// of another user's process reads `0`), and only once its CPU time stood still.
async fn parked(guest: &dyn Guest, pid: u32) -> Option<bool> {
    let probe = Exec::new(["ps", "-L", "-o", "stat=,wchan:32=", "-p", &pid.to_string()]).timeout(Duration::from_secs(30));
    let out = guest.exec(probe).await.ok()?;
    out.success().then(|| all_parked(&out.stdout_str())).flatten()
}

/// The user and system time in a `/proc/PID/stat` line (its 14th and 15th fields, read after
/// the command's name, which may hold spaces and parentheses); `None` when it is not one.
pub(super) fn parse_stat(stat: &str) -> Option<Times> {
    let (_, rest) = stat.trim_end().rsplit_once(") ")?;
    let mut fields = rest.split(' ').skip(11);
    Some(Times { user: fields.next()?.parse().ok()?, system: fields.next()?.parse().ok()? })
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

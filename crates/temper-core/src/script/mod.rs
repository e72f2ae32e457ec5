//! A fix, revert or replayed script in the guest, watched as the scans are: a script is stopped
//! for stalling, never for being slow. Its bash runs as `temper-fix-TAG`; every `every` the
//! probe (`probe.sh`, on stdin) sums the CPU ticks and the bytes written of it and every process
//! under it, by parent, and names the package-manager lock one of them waits on. No change in
//! either for `stall_after`, or a lock waited on that long, is a stall: the tree is stopped and
//! killed. A script that keeps working runs until the hard cap (`cap`).
use std::fmt;
use std::time::Duration;

use tokio::time::Instant;

use crate::ports::{Exec, ExecOutput, Guest, PortError};

#[cfg(test)]
mod tests;

/// The probe, run as root with bash, on stdin.
pub const PROBE: &str = include_str!("probe.sh");

/// The launcher: the script, on stdin, runs in a bash named after its tag (`$0`).
pub const LAUNCH: &str = r#"exec -a "$0" bash -s"#;

/// The temper.toml key of the stall time, named in every stop it causes.
pub const STALL_KEY: &str = "fix_stall_secs";
/// The temper.toml key of the hard cap.
pub const CAP_KEY: &str = "fix_timeout_secs";

/// How a script is watched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watch {
    /// No CPU and nothing written by its processes for this long, or a lock waited on: stalled.
    pub stall_after: Duration,
    /// Never longer than this, however busy.
    pub cap: Duration,
    /// How often the probe looks.
    pub every: Duration,
}

impl Default for Watch {
    /// 5 minutes without progress; 3 hours at most. aide's install took 1188 to 1513 s under
    /// TCG, working all the while.
    fn default() -> Self {
        Self { stall_after: Duration::from_secs(300), cap: Duration::from_secs(3 * 3600), every: Duration::from_secs(15) }
    }
}

/// A package-manager (or any blocking) lock one of the script's processes waits on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockWait {
    /// The lock file, or `inode:N` for a blocking wait on another file.
    pub lock: String,
    /// The process holding it (0 when the probe could not tell), and its name.
    pub holder: u32,
    pub name: String,
}

/// Why a script was stopped before it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// Its processes made no progress for `idle`: no CPU and nothing written, or `lock` waited on.
    Stalled { idle: Duration, lock: Option<LockWait> },
    /// It reached the hard cap while still working.
    Cap(Duration),
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Stalled { idle, lock: Some(l) } => write!(
                f,
                "stopped as stalled: it waited {}s on the lock {} held by process {} ({}); temper waits {STALL_KEY} for a lock",
                idle.as_secs(),
                l.lock,
                l.holder,
                l.name
            ),
            Self::Stalled { idle, lock: None } => {
                write!(f, "stopped as stalled: its processes used no CPU and wrote nothing for {}s ({STALL_KEY})", idle.as_secs())
            }
            Self::Cap(cap) => write!(f, "stopped at the hard cap of {}s while still working ({CAP_KEY})", cap.as_secs()),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("{0}")]
    Stopped(Stop),
    #[error(transparent)]
    Port(PortError),
}

/// Runs `script` as root in the guest, on stdin, watched; its output capped at `max_output`.
pub async fn run(guest: &dyn Guest, script: &str, max_output: usize, watch: Watch) -> Result<ExecOutput, ScriptError> {
    let tag = crate::scan::random_tag();
    let exec = Exec::new(["bash", "-c", LAUNCH, &format!("temper-fix-{tag}")])
        .stdin(script.as_bytes().to_vec())
        .timeout(watch.cap)
        .max_output(max_output);
    tokio::select! {
        out = guest.exec(exec) => match out {
            Ok(out) => Ok(out),
            Err(PortError::Timeout(cap)) => Err(ScriptError::Stopped(Stop::Cap(cap))),
            Err(e) => Err(ScriptError::Port(e)),
        },
        (stop, root) = stalled(guest, &tag, watch) => {
            tracing::warn!(%stop, "a script in the guest made no progress: killed");
            if let Err(e) = guest.exec(probe(&tag, Some(root), ProbeMode::Kill)).await {
                tracing::warn!(error = %e, "killing the stalled script");
            }
            Err(ScriptError::Stopped(stop))
        }
    }
}

/// Resolves once the script of `tag` stalls: why, and its PID. A sample that cannot be read, or
/// a script not (or no longer) found, never counts as a stall.
async fn stalled(guest: &dyn Guest, tag: &str, w: Watch) -> (Stop, u32) {
    let (mut root, mut last, mut since) = (None, None, Instant::now());
    loop {
        tokio::time::sleep(w.every).await;
        let Some(s) = sample(guest, tag, root).await else { continue };
        root = Some(s.root);
        let now = (s.ticks, s.written);
        if last != Some(now) && s.lock.is_none() {
            since = Instant::now();
        }
        last = Some(now);
        if since.elapsed() >= w.stall_after {
            return (Stop::Stalled { idle: since.elapsed(), lock: s.lock }, s.root);
        }
    }
}

/// One look at the script's processes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcSample {
    pub root: u32,
    pub procs: u32,
    pub ticks: u64,
    pub written: u64,
    pub lock: Option<LockWait>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeMode {
    Sample,
    Kill,
}

/// The probe's command for the script of `tag`.
pub fn probe(tag: &str, root: Option<u32>, mode: ProbeMode) -> Exec {
    let root = root.map_or("-".to_string(), |p| p.to_string());
    let mode = match mode {
        ProbeMode::Sample => "sample",
        ProbeMode::Kill => "kill",
    };
    Exec::new(["bash", "-s", tag, root.as_str(), mode])
        .stdin(PROBE.as_bytes().to_vec())
        .timeout(Duration::from_secs(30))
        .max_output(64 * 1024)
}

async fn sample(guest: &dyn Guest, tag: &str, root: Option<u32>) -> Option<ProcSample> {
    let out = guest.exec(probe(tag, root, ProbeMode::Sample)).await.ok()?;
    out.success().then(|| ProcSample::parse(&out.stdout_str())).flatten()
}

/// The package-manager locks the probe names; anything else it says is not believed.
const LOCKS: &[&str] = &[
    "/var/lib/dpkg/lock-frontend",
    "/var/lib/dpkg/lock",
    "/var/lib/apt/lists/lock",
    "/var/cache/apt/archives/lock",
    "/var/lib/rpm/.rpm.lock",
    "/var/cache/dnf/metadata_lock.pid",
    "/run/dnf/rpmdb.lock",
];

impl ProcSample {
    /// Reads the probe's output, which comes from the guest: numbers must be numbers, a lock
    /// one of [`LOCKS`] or `inode:N`, a name at most 32 plain characters. `None` when it is
    /// not a sample (`gone`, or anything malformed).
    pub fn parse(out: &str) -> Option<Self> {
        let mut lines = out.lines();
        let root = lines.next()?.strip_prefix("root ")?.parse().ok()?;
        let tree: Vec<&str> = lines.next()?.strip_prefix("tree ")?.split(' ').collect();
        let [procs, ticks, written] = tree[..] else { return None };
        let mut s = ProcSample { root, procs: procs.parse().ok()?, ticks: ticks.parse().ok()?, written: written.parse().ok()?, lock: None };
        for line in lines {
            let Some(rest) = line.strip_prefix("lock ") else { continue };
            let w: Vec<&str> = rest.split(' ').collect();
            let [lock, holder, name] = w[..] else { continue };
            let known = LOCKS.contains(&lock)
                || lock.strip_prefix("inode:").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
            let plain = name.len() <= 32 && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.-?".contains(&b));
            if let (true, true, Ok(holder)) = (known, plain, holder.parse()) {
                s.lock = Some(LockWait { lock: lock.to_string(), holder, name: name.to_string() });
                break;
            }
        }
        Some(s)
    }
}

/// The tag in a launcher's argv (`bash -c LAUNCH temper-fix-TAG`), for a scripted guest.
pub fn launched(argv: &[String]) -> Option<&str> {
    match argv {
        [bash, c, launch, name] if bash == "bash" && c == "-c" && launch == LAUNCH => name.strip_prefix("temper-fix-"),
        _ => None,
    }
}

/// The tag, PID and mode of a probe's argv and stdin, for a scripted guest.
pub fn probed<'a>(argv: &'a [String], stdin: &[u8]) -> Option<(&'a str, Option<u32>, ProbeMode)> {
    match argv {
        [bash, s, tag, root, mode] if bash == "bash" && s == "-s" && stdin == PROBE.as_bytes() => {
            let mode = match mode.as_str() {
                "sample" => ProbeMode::Sample,
                "kill" => ProbeMode::Kill,
                _ => return None,
            };
            Some((tag, root.parse().ok(), mode))
        }
        _ => None,
    }
}

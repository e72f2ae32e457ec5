//! Port traits: the hardware (hypervisor, guest shell) behind interfaces, so the loop
//! can be tested fast and then again on the real VM.
use std::time::Duration;

use async_trait::async_trait;

use crate::claim::Claim;
use temper_journal::PowerOff;

/// Errors from the hypervisor or the guest.
#[derive(Debug, thiserror::Error)]
pub enum PortError {
    #[error("hypervisor: {0}")]
    Hypervisor(String),
    #[error("snapshot `{0}` does not exist")]
    NoSnapshot(String),
    #[error("ssh connect to {target} failed: {reason}")]
    Connect { target: String, reason: String },
    #[error("ssh session dropped: {0}")]
    Dropped(String),
    #[error("command timed out after {0:?} and was killed in the guest")]
    Timeout(Duration),
    #[error("guest not reachable within {0:?}")]
    Unreachable(Duration),
    /// The guest's SSH host key is not the one recorded (or none is): nothing was sent to it.
    #[error("{0}")]
    HostKey(String),
    #[error("{0}")]
    Other(String),
}

pub type PortResult<T> = Result<T, PortError>;

/// The hypervisor: domain state and snapshots (with memory).
#[async_trait]
pub trait Hypervisor: Send + Sync {
    /// True when the domain is running.
    async fn is_running(&self) -> PortResult<bool>;
    async fn snapshot_list(&self) -> PortResult<Vec<String>>;
    /// Takes a snapshot of the running domain, memory included.
    async fn snapshot_create(&self, name: &str, description: &str) -> PortResult<()>;
    async fn snapshot_revert(&self, name: &str) -> PortResult<()>;
    async fn snapshot_delete(&self, name: &str) -> PortResult<()>;
    async fn snapshot_exists(&self, name: &str) -> PortResult<bool> {
        Ok(self.snapshot_list().await?.iter().any(|s| s == name))
    }
    /// A cold reboot: a clean shutdown through the hypervisor (powered off after `grace`), then
    /// a start. It returns once the domain runs; the guest is then still booting.
    async fn power_cycle(&self, grace: Duration) -> PortResult<PowerOff>;
    /// The run claiming the domain, kept where the domain lives (`claim`); none by default.
    async fn read_claim(&self) -> PortResult<Option<Claim>> {
        Ok(None)
    }
    /// Writes the domain's claim, or removes it (`None`).
    async fn write_claim(&self, _claim: Option<&Claim>) -> PortResult<()> {
        Ok(())
    }
}

/// The verdict from outside the guest: a snapshot's disk read on the host, read-only, and
/// judged by the host's own content and scanner (`temper-offline`, wired in `temper-target`).
#[async_trait]
pub trait OfflineJudge: Send + Sync {
    /// Every rule of the run's profile, judged from the disk of snapshot `name`; the verdicts
    /// carry no live result (the loop sets them).
    async fn judge_snapshot(&self, name: &str) -> Result<temper_journal::offline::DiskJudgement, temper_journal::offline::JudgeError>;
}

/// One command in the guest. `argv` is quoted by the implementation; `stdin` is passed as
/// data, byte for byte, so scripts never go through shell quoting.
#[derive(Debug, Clone)]
pub struct Exec {
    pub argv: Vec<String>,
    pub stdin: Vec<u8>,
    pub timeout: Duration,
    /// Bytes kept from each of stdout and stderr; the rest is cut and marked.
    pub max_output: usize,
    /// Bytes kept from stderr, when not `max_output`.
    pub max_stderr: Option<usize>,
    /// Run through `sudo -n`.
    pub sudo: bool,
}

impl Exec {
    pub fn new<I, S>(argv: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            argv: argv.into_iter().map(Into::into).collect(),
            stdin: Vec::new(),
            timeout: Duration::from_secs(60),
            max_output: 256 * 1024,
            max_stderr: None,
            sudo: true,
        }
    }
    /// A bash script as root, passed on stdin (`sudo -n bash -s`).
    pub fn script(script: &str) -> Self {
        Self::new(["bash", "-s"]).stdin(script.as_bytes().to_vec())
    }
    pub fn stdin(mut self, data: Vec<u8>) -> Self {
        self.stdin = data;
        self
    }
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = t;
        self
    }
    pub fn max_output(mut self, n: usize) -> Self {
        self.max_output = n;
        self
    }
    /// Keeps at most `n` bytes of stderr (stdout keeps `max_output`).
    pub fn max_stderr(mut self, n: usize) -> Self {
        self.max_stderr = Some(n);
        self
    }
    pub fn as_user(mut self) -> Self {
        self.sudo = false;
        self
    }
}

/// What the guest produced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExecOutput {
    pub exit_code: Option<u32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    pub duration: Duration,
}

impl ExecOutput {
    pub fn success(&self) -> bool {
        self.exit_code == Some(0)
    }
    pub fn stdout_str(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
    pub fn stderr_str(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

/// How long a running guest may take to answer SSH again (after a revert, or a dropped session).
pub const SSH_READY: Duration = Duration::from_secs(120);

/// A shell in the guest, over SSH.
#[async_trait]
pub trait Guest: Send + Sync {
    async fn exec(&self, exec: Exec) -> PortResult<ExecOutput>;
    /// Drops the connection and waits for SSH again with a bounded back-off (after a revert).
    async fn reconnect(&self, within: Duration) -> PortResult<()>;
    /// Runs `exec` on a new login (waiting for SSH as `reconnect` does), then closes it. The
    /// live connection stays open beside it: the lockout guard proves a fresh session works
    /// after a change while the old one is still there for the revert.
    async fn exec_fresh(&self, exec: Exec, within: Duration) -> PortResult<ExecOutput> {
        self.reconnect(within).await?;
        self.exec(exec).await
    }
}

/// Time spent in the guest and the hypervisor, as measured by [`Timed`]: wall time during which
/// at least one call is in flight, so calls that overlap (a scan and its watchdog) count once.
#[derive(Debug, Default)]
pub struct Clock {
    state: std::sync::Mutex<ClockState>,
}

#[derive(Debug, Default)]
struct ClockState {
    in_flight: u32,
    since: Option<std::time::Instant>,
    total: Duration,
}

impl Clock {
    /// Counts from now until the guard is dropped (a finished or cancelled call).
    pub fn enter(&self) -> InFlight<'_> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.in_flight == 0 {
            s.since = Some(std::time::Instant::now());
        }
        s.in_flight += 1;
        InFlight(self)
    }
    pub fn total(&self) -> Duration {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.total + s.since.filter(|_| s.in_flight > 0).map_or(Duration::ZERO, |t| t.elapsed())
    }
}

/// One call in flight on a [`Clock`].
pub struct InFlight<'a>(&'a Clock);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let mut s = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
        s.in_flight -= 1;
        if s.in_flight == 0
            && let Some(t) = s.since.take()
        {
            s.total += t.elapsed();
        }
    }
}

/// Wraps a port and counts the time of its calls on a [`Clock`].
pub struct Timed<'a, T: ?Sized> {
    pub inner: &'a T,
    pub clock: &'a Clock,
}

macro_rules! timed {
    ($self:ident, $e:expr) => {{
        let _in_flight = $self.clock.enter();
        $e.await
    }};
}

#[async_trait]
impl<T: Guest + ?Sized> Guest for Timed<'_, T> {
    async fn exec(&self, exec: Exec) -> PortResult<ExecOutput> {
        timed!(self, self.inner.exec(exec))
    }
    async fn reconnect(&self, within: Duration) -> PortResult<()> {
        timed!(self, self.inner.reconnect(within))
    }
    async fn exec_fresh(&self, exec: Exec, within: Duration) -> PortResult<ExecOutput> {
        timed!(self, self.inner.exec_fresh(exec, within))
    }
}

#[async_trait]
impl<T: Hypervisor + ?Sized> Hypervisor for Timed<'_, T> {
    async fn is_running(&self) -> PortResult<bool> {
        timed!(self, self.inner.is_running())
    }
    async fn snapshot_list(&self) -> PortResult<Vec<String>> {
        timed!(self, self.inner.snapshot_list())
    }
    async fn snapshot_create(&self, name: &str, description: &str) -> PortResult<()> {
        timed!(self, self.inner.snapshot_create(name, description))
    }
    async fn snapshot_revert(&self, name: &str) -> PortResult<()> {
        timed!(self, self.inner.snapshot_revert(name))
    }
    async fn snapshot_delete(&self, name: &str) -> PortResult<()> {
        timed!(self, self.inner.snapshot_delete(name))
    }
    async fn power_cycle(&self, grace: Duration) -> PortResult<PowerOff> {
        timed!(self, self.inner.power_cycle(grace))
    }
    async fn read_claim(&self) -> PortResult<Option<Claim>> {
        self.inner.read_claim().await
    }
    async fn write_claim(&self, claim: Option<&Claim>) -> PortResult<()> {
        self.inner.write_claim(claim).await
    }
}

#[cfg(test)]
mod tests {
    use std::thread::sleep;
    use std::time::{Duration, Instant};

    use super::Clock;

    #[test]
    fn overlapping_calls_count_once() {
        let clock = Clock::default();
        let step = Duration::from_millis(20);
        let t0 = Instant::now();
        let a = clock.enter();
        sleep(step);
        let (b, tb) = (clock.enter(), Instant::now());
        sleep(step);
        drop(a);
        let a_took = t0.elapsed();
        sleep(step);
        drop(b);
        let (b_took, whole) = (tb.elapsed(), t0.elapsed());
        let total = clock.total();
        assert!(total <= whole, "no more than the wall time: {total:?} > {whole:?}");
        assert!(total >= a_took.max(b_took), "at least the longest call: {total:?}");
        assert!(total < a_took + b_took, "the overlap counts once: {total:?} vs {:?}", a_took + b_took);
        sleep(step);
        assert_eq!(clock.total(), total, "nothing counts while no call is in flight");
    }
}

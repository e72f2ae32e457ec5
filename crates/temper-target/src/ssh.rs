//! `Guest` over SSH (russh): key auth, one session shared by all commands, one channel per
//! command. The script goes in as stdin data; argv is quoted word by word (see `command.rs`).
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use russh::client::{self, Handle};
use russh::keys::{HashAlg, PrivateKey, PrivateKeyWithHashAlg, PublicKeyOrCertificate, load_secret_key};
use russh::{ChannelMsg, Disconnect};
use temper_core::ports::{Exec, ExecOutput, Guest, PortError, PortResult};
use temper_core::target::Target;
use tokio::sync::Mutex;

use crate::command::{KILL_AFTER_SECS, remote_command};

/// How to reach the guest. Holds the key's path, never its contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshConfig {
    pub host: String,
    pub port: u16,
    pub user: String,
    /// OpenSSH private key file (unencrypted ed25519 for the test VM).
    pub key_path: PathBuf,
    /// Bound on one TCP connect + handshake + auth.
    pub connect_timeout: Duration,
    /// Pinned host key, as `ssh-keygen -lf` prints it (`SHA256:...`). `None` accepts any key
    /// and logs its fingerprint: the test VM listens on loopback only and gets a new host key
    /// with each image build.
    pub known_host_fingerprint: Option<String>,
    /// Keepalive period; three unanswered ones close the session.
    pub keepalive: Duration,
    /// After `reconnect`, set the guest clock to the host's: a memory snapshot resumes with
    /// the clock it was taken with, so a reverted guest runs behind.
    pub sync_clock: bool,
}

impl Default for SshConfig {
    /// The default target's host, port, user and key (`temper_core::target`).
    fn default() -> Self {
        Self::for_target(&Target::default())
    }
}

impl SshConfig {
    /// How to reach `t`, with the default timeouts.
    pub fn for_target(t: &Target) -> Self {
        Self {
            host: t.ssh_host.clone(),
            port: t.ssh_port,
            user: t.ssh_user.clone(),
            key_path: t.ssh_key.clone(),
            connect_timeout: Duration::from_secs(15),
            known_host_fingerprint: None,
            keepalive: Duration::from_secs(10),
            sync_clock: true,
        }
    }

    /// Defaults overridden by `TEMPER_SSH_HOST`, `TEMPER_SSH_PORT`, `TEMPER_SSH_USER`,
    /// `TEMPER_SSH_KEY` and `TEMPER_SSH_FINGERPRINT`.
    pub fn from_env() -> PortResult<Self> {
        let mut c = Self::default();
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        if let Some(h) = var("TEMPER_SSH_HOST") {
            c.host = h;
        }
        if let Some(p) = var("TEMPER_SSH_PORT") {
            c.port = p.parse().map_err(|_| PortError::Other(format!("TEMPER_SSH_PORT `{p}` is not a port number")))?;
        }
        if let Some(u) = var("TEMPER_SSH_USER") {
            c.user = u;
        }
        if let Some(k) = var("TEMPER_SSH_KEY") {
            c.key_path = k.into();
        }
        c.known_host_fingerprint = var("TEMPER_SSH_FINGERPRINT");
        Ok(c)
    }

    fn target(&self) -> String {
        format!("{}@{}:{}", self.user, self.host, self.port)
    }
}

/// The guest shell. Connects on first use; after a snapshot revert call `reconnect`.
pub struct SshGuest {
    cfg: SshConfig,
    key: Arc<PrivateKey>,
    conn: Mutex<Option<Arc<Handle<HostKey>>>>,
    announced: Arc<AtomicBool>,
}

impl fmt::Debug for SshGuest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SshGuest").field("target", &self.cfg.target()).finish_non_exhaustive()
    }
}

/// Client side of the extra time a command gets beyond its own timeout: `timeout -k` and
/// sudo need a moment, and TCG is slow.
const CLIENT_GRACE: Duration = Duration::from_secs(KILL_AFTER_SECS + 6);

impl SshGuest {
    /// Loads the key; does not connect yet.
    pub fn new(cfg: SshConfig) -> PortResult<Self> {
        let key = load_secret_key(&cfg.key_path, None).map_err(|e| PortError::Connect {
            target: cfg.target(),
            reason: format!("cannot load private key {}: {e}", cfg.key_path.display()),
        })?;
        Ok(Self { cfg, key: Arc::new(key), conn: Mutex::new(None), announced: Arc::default() })
    }

    /// Loads the key and connects once.
    pub async fn connect(cfg: SshConfig) -> PortResult<Self> {
        let g = Self::new(cfg)?;
        g.handle().await?;
        Ok(g)
    }

    pub fn config(&self) -> &SshConfig {
        &self.cfg
    }

    /// Sets the guest clock to the host's (as root).
    pub async fn sync_clock(&self) -> PortResult<()> {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_err(|e| PortError::Other(format!("host clock: {e}")))?;
        let at = format!("@{}.{:03}", now.as_secs(), now.subsec_millis());
        let out = self.exec(Exec::new(["date", "-u", "-s", at.as_str()]).timeout(Duration::from_secs(30))).await?;
        if !out.success() {
            return Err(PortError::Other(format!("date -s in the guest: {}", out.stderr_str().trim())));
        }
        Ok(())
    }

    /// One connect + handshake + key auth, bounded by `connect_timeout`.
    async fn open(&self) -> PortResult<Handle<HostKey>> {
        let target = self.cfg.target();
        let fail = |reason: String| PortError::Connect { target: target.clone(), reason };
        let config = Arc::new(client::Config {
            keepalive_interval: Some(self.cfg.keepalive),
            keepalive_max: 3,
            nodelay: true,
            ..Default::default()
        });
        let handler =
            HostKey { pinned: self.cfg.known_host_fingerprint.clone(), announced: self.announced.clone(), target: target.clone() };
        let attempt = async {
            let addr = (self.cfg.host.as_str(), self.cfg.port);
            let mut h = client::connect(config, addr, handler).await.map_err(|e| fail(e.to_string()))?;
            let hash = h.best_supported_rsa_hash().await.map_err(|e| fail(e.to_string()))?.flatten();
            let key = PrivateKeyWithHashAlg::new(self.key.clone(), hash);
            let auth = h.authenticate_publickey(self.cfg.user.as_str(), key).await.map_err(|e| fail(format!("auth: {e}")))?;
            if !auth.success() {
                return Err(fail(format!("public key for `{}` rejected", self.cfg.user)));
            }
            Ok(h)
        };
        tokio::time::timeout(self.cfg.connect_timeout, attempt)
            .await
            .map_err(|_| fail(format!("no session within {:?}", self.cfg.connect_timeout)))?
    }

    /// A new login, retried with a bounded back-off until `within` (sshd may be restarting).
    async fn open_within(&self, within: Duration) -> PortResult<Handle<HostKey>> {
        let start = Instant::now();
        let mut delay = Duration::from_millis(100);
        loop {
            let left = within.saturating_sub(start.elapsed());
            if left.is_zero() {
                return Err(PortError::Unreachable(within));
            }
            match tokio::time::timeout(left, self.open()).await {
                Ok(Ok(h)) => return Ok(h),
                Ok(Err(e)) => tracing::debug!(error = %e, "guest not answering yet"),
                Err(_) => return Err(PortError::Unreachable(within)),
            }
            tokio::time::sleep(delay.min(within.saturating_sub(start.elapsed()))).await;
            delay = (delay * 2).min(Duration::from_secs(2));
        }
    }

    /// The live session, connecting (once) when there is none or it has closed.
    async fn handle(&self) -> PortResult<Arc<Handle<HostKey>>> {
        let mut conn = self.conn.lock().await;
        if let Some(h) = conn.as_ref().filter(|h| !h.is_closed()) {
            return Ok(h.clone());
        }
        *conn = None;
        let h = Arc::new(self.open().await?);
        *conn = Some(h.clone());
        Ok(h)
    }

    /// Drops `h` so the next call connects afresh.
    async fn forget(&self, h: &Arc<Handle<HostKey>>) {
        let mut conn = self.conn.lock().await;
        if conn.as_ref().is_some_and(|c| Arc::ptr_eq(c, h)) {
            *conn = None;
        }
    }
}

#[async_trait]
impl Guest for SshGuest {
    async fn exec(&self, exec: Exec) -> PortResult<ExecOutput> {
        let cmd = remote_command(&exec)?;
        let h = self.handle().await?;
        let res = run(&h, &cmd, exec, self.cfg.connect_timeout).await;
        if matches!(res, Err(PortError::Dropped(_))) || h.is_closed() {
            self.forget(&h).await;
        }
        res
    }

    async fn reconnect(&self, within: Duration) -> PortResult<()> {
        let start = Instant::now();
        if let Some(old) = self.conn.lock().await.take() {
            // The old TCP connection is usually dead after a revert: do not wait on it.
            let bye = old.disconnect(Disconnect::ByApplication, "", "en");
            let _ = tokio::time::timeout(Duration::from_millis(300), bye).await;
        }
        let h = self.open_within(within).await?;
        *self.conn.lock().await = Some(Arc::new(h));
        tracing::debug!(target_host = %self.cfg.target(), took = ?start.elapsed(), "ssh reconnected");
        if self.cfg.sync_clock
            && let Err(e) = self.sync_clock().await
        {
            tracing::warn!(error = %e, "could not set the guest clock");
        }
        Ok(())
    }

    async fn exec_fresh(&self, exec: Exec, within: Duration) -> PortResult<ExecOutput> {
        let cmd = remote_command(&exec)?;
        let h = self.open_within(within).await?;
        let res = run(&h, &cmd, exec, self.cfg.connect_timeout).await;
        let bye = h.disconnect(Disconnect::ByApplication, "", "en");
        let _ = tokio::time::timeout(Duration::from_millis(300), bye).await;
        res
    }
}

/// Runs one command on its own channel: stdin written alongside, stdout and stderr kept apart
/// up to the cap (the rest is read and dropped), bounded by a client-side deadline.
async fn run(h: &Handle<HostKey>, cmd: &str, exec: Exec, open_timeout: Duration) -> PortResult<ExecOutput> {
    let start = Instant::now();
    let channel = match tokio::time::timeout(open_timeout, h.channel_open_session()).await {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => return Err(PortError::Dropped(format!("open channel: {e}"))),
        Err(_) => {
            return Err(PortError::Dropped(format!("open channel: no answer within {open_timeout:?}")));
        }
    };
    channel.exec(true, cmd.as_bytes()).await.map_err(|e| PortError::Dropped(format!("send command: {e}")))?;
    let (mut rx, tx) = channel.split();
    let tx = Arc::new(tx);
    let writer = {
        let (tx, stdin) = (tx.clone(), exec.stdin);
        tokio::spawn(async move {
            tx.data_bytes(stdin).await?;
            tx.eof().await
        })
    };

    let (cap, err_cap) = (exec.max_output, exec.max_stderr.unwrap_or(exec.max_output));
    let mut out = ExecOutput::default();
    let mut finished = false;
    let read = async {
        while let Some(msg) = rx.wait().await {
            match msg {
                ChannelMsg::Data { data } => keep(&mut out.stdout, &mut out.stdout_truncated, &data, cap),
                ChannelMsg::ExtendedData { data, ext: 1 } => keep(&mut out.stderr, &mut out.stderr_truncated, &data, err_cap),
                ChannelMsg::ExitStatus { exit_status } => {
                    out.exit_code = Some(exit_status);
                    finished = true;
                }
                ChannelMsg::ExitSignal { signal_name, .. } => {
                    tracing::warn!(signal = ?signal_name, "guest command killed by a signal");
                    finished = true;
                }
                ChannelMsg::Failure => {
                    return Err(PortError::Other("the guest refused to run the command".into()));
                }
                ChannelMsg::Close => {
                    finished = true;
                    break;
                }
                _ => {}
            }
        }
        Ok(())
    };
    let deadline = exec.timeout + CLIENT_GRACE;
    let read = tokio::time::timeout(deadline, read).await;
    writer.abort();
    match read {
        Err(_) => {
            let _ = tokio::time::timeout(Duration::from_secs(1), tx.close()).await;
            return Err(PortError::Timeout(exec.timeout));
        }
        Ok(r) => r?,
    }
    out.duration = start.elapsed();
    // A live session ends every channel with Close; no Close and no exit status means it died.
    if !finished {
        return Err(PortError::Dropped("session closed while the command ran".into()));
    }
    // `timeout` exits 124 (TERM) or 137 (KILL after -k) once the time is up.
    if matches!(out.exit_code, Some(124 | 137)) && out.duration >= exec.timeout {
        return Err(PortError::Timeout(exec.timeout));
    }
    Ok(out)
}

/// Appends what fits under `cap` and marks the stream cut when something did not.
fn keep(buf: &mut Vec<u8>, cut: &mut bool, data: &[u8], cap: usize) {
    let room = cap.saturating_sub(buf.len());
    if data.len() > room {
        *cut = true;
    }
    buf.extend_from_slice(&data[..data.len().min(room)]);
}

/// Host key policy: the pinned fingerprint when given, otherwise accept and log it.
struct HostKey {
    pinned: Option<String>,
    announced: Arc<AtomicBool>,
    target: String,
}

impl client::Handler for HostKey {
    type Error = russh::Error;

    async fn check_server_key(&mut self, key: &PublicKeyOrCertificate) -> Result<bool, Self::Error> {
        let fp = key.public_key().fingerprint(HashAlg::Sha256).to_string();
        match &self.pinned {
            Some(want) if *want != fp => {
                tracing::warn!(target_host = %self.target, got = %fp, want = %want, "guest host key does not match the pinned one");
                Ok(false)
            }
            Some(_) => Ok(true),
            None => {
                if !self.announced.swap(true, Ordering::Relaxed) {
                    tracing::info!(target_host = %self.target, fingerprint = %fp, "accepting guest host key (not pinned: loopback test VM)");
                }
                Ok(true)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_caps_and_marks() {
        let (mut b, mut cut) = (Vec::new(), false);
        keep(&mut b, &mut cut, b"hello", 8);
        assert!(!cut);
        keep(&mut b, &mut cut, b"world", 8);
        assert_eq!((b.as_slice(), cut), (&b"hellowor"[..], true));
        keep(&mut b, &mut cut, b"more", 8);
        assert_eq!(b, b"hellowor");
    }

    #[test]
    fn missing_key_is_a_clear_error() {
        let cfg = SshConfig { key_path: "/nonexistent/key".into(), ..Default::default() };
        match SshGuest::new(cfg) {
            Err(PortError::Connect { reason, .. }) => {
                assert!(reason.contains("/nonexistent/key"), "{reason}")
            }
            other => panic!("want Connect error, got {other:?}"),
        }
    }
}

//! `Guest` over SSH (russh): key auth, one session shared by all commands, one channel per
//! command. The script goes in as stdin data; argv is quoted word by word (see `command.rs`).
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use russh::client::{self, Handle};
use russh::keys::{PrivateKey, PrivateKeyWithHashAlg, PublicKey, PublicKeyOrCertificate, load_secret_key};
use russh::{ChannelMsg, Disconnect};
use temper_core::ports::{Exec, ExecOutput, Guest, PortError, PortResult};
use temper_journal::target::Target;
use tokio::sync::Mutex;

use crate::command::{KILL_AFTER_SECS, remote_command};
use crate::known_hosts::{HostKeyError, KnownHosts, fingerprint};

/// How the guest's host key is checked, before anything is sent to it (authentication included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostKeyCheck {
    /// Against the keys recorded for the guest's host and port (the default).
    Recorded(KnownHosts),
    /// Against one fingerprint, `SHA256:...` as `ssh-keygen -lf` prints it (`TEMPER_SSH_FINGERPRINT`).
    Fingerprint(String),
}

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
    /// How the guest's host key is checked: a key not recorded, or another, stops the connection
    /// before authentication.
    pub host_key: HostKeyCheck,
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
            host_key: HostKeyCheck::Recorded(KnownHosts::from_env()),
            keepalive: Duration::from_secs(10),
            sync_clock: true,
        }
    }

    /// Defaults overridden by `TEMPER_SSH_HOST`, `TEMPER_SSH_PORT`, `TEMPER_SSH_USER`,
    /// `TEMPER_SSH_KEY` and `TEMPER_SSH_FINGERPRINT` (else the keys recorded in
    /// `TEMPER_KNOWN_HOSTS_FILE`, or its default).
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
        if let Some(fp) = var("TEMPER_SSH_FINGERPRINT") {
            c.host_key = HostKeyCheck::Fingerprint(fp);
        }
        Ok(c)
    }

    /// The same, checking the guest's key against `known_hosts`.
    pub fn pinned_in(self, known_hosts: KnownHosts) -> Self {
        Self { host_key: HostKeyCheck::Recorded(known_hosts), ..self }
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

/// The host key a guest offers, read in its key exchange alone: nothing is sent to it after.
pub async fn offered_host_key(cfg: &SshConfig) -> PortResult<PublicKey> {
    let target = cfg.target();
    let handler = HostKey::look(cfg);
    let seen = handler.seen.clone();
    let config = Arc::new(client::Config::default());
    let attempt = client::connect(config, (cfg.host.as_str(), cfg.port), handler);
    // The handler refuses the key once it has it: the connection ends there.
    let ended = tokio::time::timeout(cfg.connect_timeout, attempt).await;
    let key = seen.lock().map_err(|_| PortError::Other("host key lock".into()))?.clone();
    key.ok_or_else(|| {
        let reason = match ended {
            Err(_) => format!("no SSH key exchange within {:?}", cfg.connect_timeout),
            Ok(Err(e)) => format!("the connection ended before the key exchange: {e}"),
            Ok(Ok(_)) => "the key exchange offered no host key".into(),
        };
        PortError::Connect { target, reason }
    })
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

    /// Connects, checks the guest's host key, and disconnects: nothing else is sent. The
    /// fingerprint of the recorded key it offered, or why not (`PortError::HostKey`).
    pub async fn check_host_key(&self) -> PortResult<String> {
        let handler = HostKey::check(&self.cfg, self.announced.clone());
        let (seen, refused) = (handler.seen.clone(), handler.refused.clone());
        let addr = (self.cfg.host.as_str(), self.cfg.port);
        let connected =
            tokio::time::timeout(self.cfg.connect_timeout, client::connect(Arc::new(client::Config::default()), addr, handler)).await;
        if let Some(e) = refused.lock().ok().and_then(|mut r| r.take()) {
            return Err(PortError::HostKey(e.to_string()));
        }
        let h = match connected {
            Ok(Ok(h)) => h,
            Ok(Err(e)) => return Err(PortError::Connect { target: self.cfg.target(), reason: e.to_string() }),
            Err(_) => return Err(PortError::Unreachable(self.cfg.connect_timeout)),
        };
        let _ = tokio::time::timeout(Duration::from_millis(300), h.disconnect(Disconnect::ByApplication, "", "en")).await;
        let key = seen.lock().ok().and_then(|k| k.clone());
        Ok(key.as_ref().map(fingerprint).unwrap_or_default())
    }

    /// Runs `command` as the login user on a terminal, as a person's login has one: once its
    /// output shows `prompt`, `answer` is typed (a password, never logged). Returns its exit
    /// code and what the terminal showed (stdout and stderr together).
    pub async fn exec_tty(&self, command: &str, prompt: &str, answer: &str, within: Duration) -> PortResult<(Option<u32>, String)> {
        let h = self.handle().await?;
        let dropped = |what: &str, e: russh::Error| PortError::Dropped(format!("{what}: {e}"));
        let mut channel = h.channel_open_session().await.map_err(|e| dropped("open channel", e))?;
        channel.request_pty(true, "xterm", 120, 40, 0, 0, &[]).await.map_err(|e| dropped("request a terminal", e))?;
        channel.exec(true, command.as_bytes()).await.map_err(|e| dropped("send command", e))?;
        let (mut shown, mut answered, mut code) = (Vec::new(), false, None);
        let read = async {
            while let Some(msg) = channel.wait().await {
                match msg {
                    ChannelMsg::Data { data } | ChannelMsg::ExtendedData { data, .. } => {
                        shown.extend_from_slice(&data);
                        if !answered && String::from_utf8_lossy(&shown).contains(prompt) {
                            answered = true;
                            channel.data_bytes(format!("{answer}\n").into_bytes()).await.map_err(|e| dropped("type the answer", e))?;
                        }
                    }
                    ChannelMsg::ExitStatus { exit_status } => code = Some(exit_status),
                    ChannelMsg::Close | ChannelMsg::Eof if code.is_some() => break,
                    ChannelMsg::Close => break,
                    _ => {}
                }
            }
            Ok::<_, PortError>(())
        };
        tokio::time::timeout(within, read).await.map_err(|_| PortError::Timeout(within))??;
        Ok((code, String::from_utf8_lossy(&shown).into_owned()))
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
        let handler = HostKey::check(&self.cfg, self.announced.clone());
        let refused = handler.refused.clone();
        // The key exchange's refusal is the reason, not russh's "unknown key".
        let why = |e: russh::Error| match refused.lock().ok().and_then(|mut r| r.take()) {
            Some(k) => PortError::HostKey(k.to_string()),
            None => fail(e.to_string()),
        };
        let attempt = async {
            let addr = (self.cfg.host.as_str(), self.cfg.port);
            let mut h = client::connect(config, addr, handler).await.map_err(why)?;
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
                // Another key will not become the recorded one by waiting.
                Ok(Err(e @ PortError::HostKey(_))) => return Err(e),
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

/// The host key check of one connection: the key the guest offers (`seen`), and why it was
/// refused (`refused`). Without a check (`look`), every key is refused once seen.
struct HostKey {
    check: Option<HostKeyCheck>,
    host: String,
    port: u16,
    target: String,
    announced: Arc<AtomicBool>,
    seen: Arc<std::sync::Mutex<Option<PublicKey>>>,
    refused: Arc<std::sync::Mutex<Option<HostKeyError>>>,
}

impl HostKey {
    fn check(cfg: &SshConfig, announced: Arc<AtomicBool>) -> Self {
        Self { check: Some(cfg.host_key.clone()), ..Self::look(cfg) }.announcing(announced)
    }

    fn look(cfg: &SshConfig) -> Self {
        Self {
            check: None,
            host: cfg.host.clone(),
            port: cfg.port,
            target: cfg.target(),
            announced: Arc::default(),
            seen: Arc::default(),
            refused: Arc::default(),
        }
    }

    fn announcing(self, announced: Arc<AtomicBool>) -> Self {
        Self { announced, ..self }
    }

    fn verdict(&self, key: &PublicKey) -> Result<(), HostKeyError> {
        match &self.check {
            None => Err(HostKeyError::Unknown { host: self.target.clone(), file: "(looked at only)".into() }),
            Some(HostKeyCheck::Recorded(kh)) => kh.check(&self.host, self.port, key),
            Some(HostKeyCheck::Fingerprint(want)) if *want == fingerprint(key) => Ok(()),
            Some(HostKeyCheck::Fingerprint(want)) => Err(HostKeyError::Changed {
                host: self.target.clone(),
                file: "TEMPER_SSH_FINGERPRINT".into(),
                offered: fingerprint(key),
                recorded: want.clone(),
            }),
        }
    }
}

impl client::Handler for HostKey {
    type Error = russh::Error;

    async fn check_server_key(&mut self, key: &PublicKeyOrCertificate) -> Result<bool, Self::Error> {
        let key = key.public_key().clone();
        let verdict = self.verdict(&key);
        let fp = fingerprint(&key);
        if let Ok(mut seen) = self.seen.lock() {
            *seen = Some(key);
        }
        match verdict {
            Ok(()) => {
                if !self.announced.swap(true, Ordering::Relaxed) {
                    tracing::debug!(target_host = %self.target, fingerprint = %fp, "the guest's host key is the one recorded");
                }
                Ok(true)
            }
            Err(e) => {
                if self.check.is_some() {
                    tracing::debug!(target_host = %self.target, offered = %fp, "{e}");
                }
                if let Ok(mut r) = self.refused.lock() {
                    *r = Some(e);
                }
                Ok(false)
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

    #[tokio::test]
    async fn a_refused_connection_is_said_as_such_not_as_a_timeout() {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let cfg = SshConfig { host: "127.0.0.1".into(), port, connect_timeout: Duration::from_secs(15), ..Default::default() };
        match offered_host_key(&cfg).await {
            Err(PortError::Connect { reason, .. }) => {
                assert!(reason.contains("ended before the key exchange") && !reason.contains("15s"), "{reason}")
            }
            other => panic!("want Connect error, got {other:?}"),
        }
    }
}

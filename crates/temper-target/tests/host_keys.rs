//! The guest's host key checked at every connection, against a real sshd: the tests' loopback
//! sshd (`tests/sshd/start.sh`, started here; no VM needed), reached as a guest, as root with its
//! own key. A key not recorded, or another one, stops the connection before authentication: the
//! sshd's log shows no login. The recorded key lets it in.
use std::path::PathBuf;
use std::time::Duration;

use temper_core::ports::{Exec, Guest, PortError};
use temper_target::{HostKeyCheck, KnownHosts, SshConfig, SshGuest, fingerprint, offered_host_key, parse_key};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The sshd's folder (its keys and log), started when it is not running.
fn sshd() -> PathBuf {
    let out = std::process::Command::new("bash").arg(repo().join("tests/sshd/start.sh")).output().unwrap();
    assert!(out.status.success(), "tests/sshd/start.sh: {}", String::from_utf8_lossy(&out.stderr));
    PathBuf::from(std::env::var("TEMPER_SSHD_DIR").unwrap_or_else(|_| "/var/tmp/temper-sshd".into()))
}

fn logins(dir: &std::path::Path) -> usize {
    std::fs::read_to_string(dir.join("sshd.log")).unwrap_or_default().matches("Accepted publickey for root").count()
}

fn config(dir: &std::path::Path, known: &std::path::Path) -> SshConfig {
    let port = std::env::var("TEMPER_SSHD_PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(2200);
    SshConfig {
        host: "127.0.0.1".into(),
        port,
        user: "root".into(),
        key_path: dir.join("id_ed25519"),
        connect_timeout: Duration::from_secs(15),
        sync_clock: false,
        ..SshConfig::default()
    }
    .pinned_in(KnownHosts::new(known))
}

/// A key that is not the sshd's.
const OTHER: &str = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJv46ZhVQW205MOZks/v2T+6AgnpQNw9ThoZbXcNuFcD other";

#[tokio::test]
async fn a_key_not_recorded_or_another_stops_the_connection_before_it_logs_in() {
    let dir = sshd();
    let tmp = tempfile::tempdir().unwrap();
    let known = tmp.path().join("pins/known_hosts");
    let cfg = config(&dir, &known);
    let real = parse_key(&std::fs::read_to_string(dir.join("host_ed25519.pub")).unwrap()).unwrap();
    assert_eq!(offered_host_key(&cfg).await.unwrap().key_data(), real.key_data(), "the key exchange alone reads the key");
    let before = logins(&dir);

    // Nothing recorded: refused, and said how to record it.
    let g = SshGuest::new(cfg.clone()).unwrap();
    match g.exec(Exec::new(["true"]).as_user()).await {
        Err(PortError::HostKey(why)) => {
            assert!(why.contains("no SSH host key is recorded") && why.contains("temper target trust"), "{why}")
        }
        other => panic!("want HostKey, got {other:?}"),
    }
    // Another key recorded: refused, both fingerprints said; a reconnect does not wait it out.
    let other = parse_key(OTHER).unwrap();
    KnownHosts::new(&known).record(&cfg.host, cfg.port, std::slice::from_ref(&other), "other").unwrap();
    let t0 = std::time::Instant::now();
    match g.reconnect(Duration::from_secs(30)).await {
        Err(PortError::HostKey(why)) => {
            assert!(why.contains(&fingerprint(&real)) && why.contains(&fingerprint(&other)) && why.contains("nothing was run"), "{why}")
        }
        other => panic!("want HostKey, got {other:?}"),
    }
    assert!(t0.elapsed() < Duration::from_secs(10), "refused at once, not retried for 30 s: {:?}", t0.elapsed());
    assert!(matches!(g.check_host_key().await, Err(PortError::HostKey(_))));
    // A fingerprint given (TEMPER_SSH_FINGERPRINT) is held the same way.
    let pinned_fp = SshConfig { host_key: HostKeyCheck::Fingerprint(fingerprint(&other)), ..cfg.clone() };
    assert!(matches!(SshGuest::new(pinned_fp).unwrap().exec(Exec::new(["true"]).as_user()).await, Err(PortError::HostKey(_))));
    assert_eq!(logins(&dir), before, "the sshd accepted no login");

    // The recorded key lets it in.
    KnownHosts::new(&known).record(&cfg.host, cfg.port, std::slice::from_ref(&real), "the sshd").unwrap();
    assert_eq!(g.check_host_key().await.unwrap(), fingerprint(&real));
    let out = g.exec(Exec::new(["true"]).as_user()).await.unwrap();
    assert!(out.success(), "{out:?}");
    assert_eq!(logins(&dir), before + 1, "one login, with the recorded key");
}

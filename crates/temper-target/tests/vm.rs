//! Against the real test VM (bring it up with `bash vm/up.sh`). Settings come from
//! TEMPER_SSH_PORT / TEMPER_SSH_KEY / TEMPER_DOMAIN / TEMPER_LIBVIRT_URI, defaults as in vm/lib.sh.
//! The cases take turns on the VM through one lock.
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use temper_core::ports::{Exec, ExecOutput, Guest, Hypervisor, PortError};
use temper_target::{LibvirtConfig, LibvirtHypervisor, SshConfig, SshGuest};
use tokio::sync::Mutex;

static VM: Mutex<()> = Mutex::const_new(());
const BASELINE: &str = "baseline";

fn ssh_config() -> SshConfig {
    let mut cfg = SshConfig::from_env().expect("ssh settings");
    // Long keepalive: the session must still look alive when the first exec after a revert runs.
    cfg.keepalive = Duration::from_secs(120);
    cfg
}

async fn guest() -> SshGuest {
    let cfg = ssh_config();
    let target = format!("{}@{}:{}", cfg.user, cfg.host, cfg.port);
    match SshGuest::connect(cfg).await {
        Ok(g) => g,
        Err(e) => panic!("test VM not reachable at {target}: {e}. run bash vm/up.sh first"),
    }
}

async fn hypervisor() -> LibvirtHypervisor {
    let h = LibvirtHypervisor::new(LibvirtConfig::from_env());
    match h.snapshot_exists(BASELINE).await {
        Ok(true) => h,
        Ok(false) => panic!("domain {} has no `{BASELINE}` snapshot: run bash vm/up.sh first", h.config().domain),
        Err(e) => panic!("libvirt domain {} not usable: {e}. run bash vm/up.sh first", h.config().domain),
    }
}

async fn run(g: &SshGuest, e: Exec) -> ExecOutput {
    let what = format!("{:?}", e.argv);
    g.exec(e).await.unwrap_or_else(|err| panic!("exec {what}: {err}"))
}

fn unique(prefix: &str) -> String {
    let ns = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().subsec_nanos();
    format!("{prefix}-{}-{ns:x}", std::process::id())
}

/// Fails the surrounding `async` block (which returns `Result<_, String>`) instead of
/// panicking, so the clean-up after it still runs.
macro_rules! check {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(format!($($msg)+));
        }
    };
}

#[tokio::test]
async fn revert_removes_a_marker_written_after_the_snapshot() {
    let _turn = VM.lock().await;
    let h = hypervisor().await;
    let g = guest().await;
    let snap = unique("t");
    let marker = format!("/var/tmp/{snap}.marker");
    h.snapshot_create(&snap, "temper-target test: temporary").await.unwrap();
    let e = |e: PortError| e.to_string();
    let body = async {
        check!(h.snapshot_list().await.map_err(e)?.contains(&snap), "new snapshot not listed");
        let w = g.exec(Exec::new(["touch", marker.as_str()])).await.map_err(e)?;
        check!(w.success(), "touch: {}", w.stderr_str());
        let there = g.exec(Exec::new(["test", "-e", marker.as_str()])).await.map_err(e)?;
        check!(there.success(), "marker not written");

        h.snapshot_revert(&snap).await.map_err(e)?;
        // The old session died with the revert. The next exec either notices a closed session
        // and connects afresh, or runs into the dead one and says Dropped; then the one after
        // connects afresh.
        let after = match g.exec(Exec::new(["test", "-e", marker.as_str()])).await {
            Err(PortError::Dropped(_)) => g.exec(Exec::new(["test", "-e", marker.as_str()])).await,
            r => r,
        }
        .map_err(e)?;
        check!(after.exit_code == Some(1), "marker still there after revert: {after:?}");
        // An explicit reconnect works too, and puts the guest clock right.
        g.reconnect(Duration::from_secs(60)).await.map_err(e)?;
        let date = g.exec(Exec::new(["date", "+%s"])).await.map_err(e)?;
        let guest_now: u64 = date.stdout_str().trim().parse().map_err(|_| format!("date: {date:?}"))?;
        let host_now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
        check!(guest_now.abs_diff(host_now) <= 10, "guest clock {guest_now} vs host {host_now}");
        Ok::<_, String>(())
    }
    .await;
    // Clean up whatever happened: drop the temporary snapshot, go back to baseline.
    let deleted = h.snapshot_delete(&snap).await;
    h.snapshot_revert(BASELINE).await.expect("revert to baseline");
    g.reconnect(Duration::from_secs(60)).await.expect("ssh after baseline revert");
    body.expect("revert case");
    deleted.expect("delete temporary snapshot");
    assert!(!h.snapshot_exists(&snap).await.unwrap(), "temporary snapshot left behind");
    assert!(h.snapshot_exists(BASELINE).await.unwrap(), "baseline gone");
    let health = run(&g, Exec::new(["/usr/local/bin/mission-healthcheck"])).await;
    assert_eq!(health.stdout_str(), "HEALTHY\n");
}

#[tokio::test]
async fn dropped_session_is_reported_and_the_next_exec_reconnects() {
    let _turn = VM.lock().await;
    let g = guest().await;
    // Kill the sshd process that serves this very connection (the nearest sshd ancestor).
    let kill_own_sshd = r#"p=$$
while [ "$p" -gt 1 ]; do
  if [ "$(ps -o comm= -p "$p")" = sshd ]; then kill -KILL "$p"; sleep 5; exit 0; fi
  p=$(ps -o ppid= -p "$p" | tr -d ' ')
done
echo "no sshd ancestor" >&2; exit 9
"#;
    match g.exec(Exec::script(kill_own_sshd)).await {
        Err(PortError::Dropped(_)) => {}
        other => panic!("want Dropped, got {other:?}"),
    }
    assert!(run(&g, Exec::new(["true"])).await.success(), "no automatic reconnect");
}

/// The pid of the sshd process that serves the connection a script runs on.
const OWN_SSHD: &str = r#"p=$$
while [ "$p" -gt 1 ]; do
  if [ "$(ps -o comm= -p "$p")" = sshd ]; then echo "$p"; exit 0; fi
  p=$(ps -o ppid= -p "$p" | tr -d ' ')
done
exit 9
"#;

/// The lockout guard's login: a new connection beside the live one, which stays in use.
#[tokio::test]
async fn a_fresh_login_runs_beside_the_live_session_which_stays() {
    let _turn = VM.lock().await;
    let g = guest().await;
    let live = run(&g, Exec::script(OWN_SSHD)).await.stdout_str();
    let fresh = g.exec_fresh(Exec::script(OWN_SSHD), Duration::from_secs(60)).await.expect("a fresh login").stdout_str();
    assert!(!live.trim().is_empty() && !fresh.trim().is_empty(), "live {live:?} fresh {fresh:?}");
    assert_ne!(live, fresh, "the fresh login has its own connection");
    assert_eq!(run(&g, Exec::script(OWN_SSHD)).await.stdout_str(), live, "the live connection is still the one in use");
    let gone = format!("test -d /proc/{}", fresh.trim());
    let mut closed = false;
    for _ in 0..20 {
        if !run(&g, Exec::new(["sh", "-c", gone.as_str()])).await.success() {
            closed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(closed, "the fresh login's sshd ({}) is gone once it returned", fresh.trim());
}

/// Bytes that break any naive quoting: quotes, expansions, heredoc markers, backslashes,
/// unicode, control characters and bytes that are not UTF-8 (no NUL).
fn torture_bytes() -> Vec<u8> {
    let mut b = br#"#!/bin/bash
echo 'single' "double" `backtick` $(subshell) ${BRACE} $HOME $1 $@ $$ !! !-1 \n \\ \'
cat <<'EOF'
EOF
EOF2 * ? [a-z] ~ {a,b} ; && || | > < >> 2>&1 & # not a comment?
"#
    .to_vec();
    b.extend("ünïcødé ✓ 漢字 🦀 \u{202e}rtl\r\n".as_bytes());
    b.extend((1u8..=255).filter(|c| *c != b'\n'));
    b.extend(b"\nno trailing newline");
    b
}

#[tokio::test]
async fn torture_bytes_go_through_stdin_byte_for_byte() {
    let _turn = VM.lock().await;
    let g = guest().await;
    let data = torture_bytes();
    for e in [Exec::new(["cat"]), Exec::new(["cat"]).as_user()] {
        let out = run(&g, e.stdin(data.clone())).await;
        assert!(out.success(), "cat: {}", out.stderr_str());
        assert_eq!(out.stdout, data, "cat changed the bytes");
    }
    // Bigger than a channel window (2 MiB): flow control both ways.
    let big: Vec<u8> = data.iter().copied().cycle().take(3 * 1024 * 1024 + 17).collect();
    let out = run(&g, Exec::new(["sha256sum"]).stdin(big.clone())).await;
    let local = std::process::Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().expect("stdin").write_all(&big)?;
            c.wait_with_output()
        })
        .expect("local sha256sum");
    assert_eq!(out.stdout_str(), String::from_utf8_lossy(&local.stdout), "3 MiB stdin differs");
}

#[tokio::test]
async fn torture_script_runs_as_written() {
    let _turn = VM.lock().await;
    let g = guest().await;
    let script = r#"set -u
X='dollar $notavar `nope` $(nope)'
printf '%s\n' 'single "double" $HOME `id` $(id) \ back!slash * ? [a-z] {a,b}'
echo "$X"
echo 'it'\''s'
echo "a\\b \"q\" \$HOME"
cat <<'EOF'
heredoc $HOME `x` $(y) \n "q" 'q' ünïcødé ✓ !!
EOF
cat <<EOF
expanded: ${X}
EOF
printf '%s|' "$(printf 'sub %s' "shell")" !; echo
echo "$((6 * 7))" >&2
exit 3
"#;
    let want = r#"single "double" $HOME `id` $(id) \ back!slash * ? [a-z] {a,b}
dollar $notavar `nope` $(nope)
it's
a\b "q" $HOME
heredoc $HOME `x` $(y) \n "q" 'q' ünïcødé ✓ !!
expanded: dollar $notavar `nope` $(nope)
sub shell|!|
"#;
    for e in [Exec::script(script), Exec::script(script).as_user()] {
        let out = g.exec(e).await.unwrap();
        assert_eq!(out.stdout_str(), want);
        assert_eq!(out.stderr_str(), "42\n");
        assert_eq!(out.exit_code, Some(3));
    }
}

#[tokio::test]
async fn argv_elements_come_back_verbatim() {
    let _turn = VM.lock().await;
    let g = guest().await;
    let nasty = "it's \"quoted\" $HOME `id` $(whoami) ${X:-y} \\ ! * ?[x] ~ ; | & ü\ttab\nnew line -n --";
    for e in [Exec::new(["printf", "%s", nasty]), Exec::new(["printf", "%s", nasty]).as_user()] {
        assert_eq!(run(&g, e).await.stdout_str(), nasty);
    }
    // A leading dash, an empty word and a glob stay single literal words.
    let out = run(&g, Exec::new(["printf", "[%s]", "-e", "", "*"])).await;
    assert_eq!(out.stdout_str(), "[-e][][*]");
}

#[tokio::test]
async fn timeout_kills_the_command_in_the_guest() {
    let _turn = VM.lock().await;
    let g = guest().await;
    let cases = [Exec::new(["sleep", "600"]), Exec::new(["sleep", "600"]).as_user(), Exec::script("sleep 601 &\nsleep 600\n")];
    for e in cases {
        let argv = e.argv.clone();
        let t0 = Instant::now();
        match g.exec(e.timeout(Duration::from_secs(5))).await {
            Err(PortError::Timeout(t)) => assert_eq!(t, Duration::from_secs(5)),
            other => panic!("{argv:?}: want Timeout, got {other:?}"),
        }
        let took = t0.elapsed();
        assert!(took >= Duration::from_secs(5) && took < Duration::from_secs(15), "{argv:?}: took {took:?}");
    }
    // Nothing left running: pgrep exits 1 when no process matches.
    let left = run(&g, Exec::new(["pgrep", "-a", "-f", "^sleep 60[01]$"])).await;
    assert_eq!(left.exit_code, Some(1), "left behind: {}", left.stdout_str());
}

#[tokio::test]
async fn streams_and_exit_code_stay_apart() {
    let _turn = VM.lock().await;
    let g = guest().await;
    let out = g.exec(Exec::script("echo out; echo err >&2; printf more; printf ' again' >&2; exit 42")).await.unwrap();
    assert_eq!(out.exit_code, Some(42));
    assert_eq!(out.stdout_str(), "out\nmore");
    assert_eq!(out.stderr_str(), "err\n again");
    assert!(!out.stdout_truncated && !out.stderr_truncated);

    // 5 MB on stdout against a 1000 byte cap: cut, marked, and the command still finishes.
    let e = Exec::script("head -c 5000000 /dev/urandom; echo done >&2").max_output(1000);
    let out = run(&g, e).await;
    assert!(out.success(), "exit {:?}", out.exit_code);
    assert_eq!(out.stdout.len(), 1000);
    assert!(out.stdout_truncated && !out.stderr_truncated);
    assert_eq!(out.stderr_str(), "done\n");

    let out = run(&g, Exec::script("printf abcdef >&2").max_output(4)).await;
    assert_eq!((out.stderr_str().as_str(), out.stderr_truncated), ("abcd", true));
    assert_eq!((out.stdout.len(), out.stdout_truncated), (0, false));
    // Exactly at the cap is not cut.
    let out = run(&g, Exec::new(["printf", "abcd"]).max_output(4)).await;
    assert_eq!((out.stdout_str().as_str(), out.stdout_truncated), ("abcd", false));
}

#[tokio::test]
async fn sudo_and_plain_user() {
    let _turn = VM.lock().await;
    let g = guest().await;
    assert_eq!(run(&g, Exec::new(["id", "-un"])).await.stdout_str(), "root\n");
    assert_eq!(run(&g, Exec::new(["id", "-un"]).as_user()).await.stdout_str(), "temper\n");
    let s = run(&g, Exec::new(["sudo", "-n", "true"]).as_user()).await;
    assert!(s.success(), "sudo -n true: {}", s.stderr_str());
    // A missing command is the guest's answer (127), not a transport error.
    let out = run(&g, Exec::new(["no-such-command-xyz"])).await;
    assert_eq!(out.exit_code, Some(127));
}

#[tokio::test]
async fn hypervisor_reports_state_and_missing_snapshots() {
    let _turn = VM.lock().await;
    let h = hypervisor().await;
    assert!(h.is_running().await.unwrap());
    match h.snapshot_revert("no-such-snapshot").await {
        Err(PortError::NoSnapshot(n)) => assert_eq!(n, "no-such-snapshot"),
        other => panic!("want NoSnapshot, got {other:?}"),
    }
    assert!(!h.snapshot_exists("no-such-snapshot").await.unwrap());
}

#[tokio::test]
async fn closed_port_is_a_connect_error_and_reconnect_is_bounded() {
    let mut cfg = ssh_config();
    cfg.port = 1; // nothing listens there
    cfg.connect_timeout = Duration::from_secs(2);
    match SshGuest::connect(cfg.clone()).await {
        Err(PortError::Connect { target, .. }) => assert!(target.ends_with(":1"), "{target}"),
        other => panic!("want Connect error, got {other:?}"),
    }
    let g = SshGuest::new(cfg).unwrap();
    let t0 = Instant::now();
    match g.reconnect(Duration::from_secs(2)).await {
        Err(PortError::Unreachable(d)) => assert_eq!(d, Duration::from_secs(2)),
        other => panic!("want Unreachable, got {other:?}"),
    }
    assert!(t0.elapsed() < Duration::from_secs(5), "reconnect overran: {:?}", t0.elapsed());
    match g.exec_fresh(Exec::new(["true"]), Duration::from_secs(2)).await {
        Err(PortError::Unreachable(d)) => assert_eq!(d, Duration::from_secs(2)),
        other => panic!("a fresh login to a closed port: want Unreachable, got {other:?}"),
    }
}

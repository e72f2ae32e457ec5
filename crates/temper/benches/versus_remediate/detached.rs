//! One `oscap --remediate` pass run in a transient systemd unit of the guest's, outside the SSH
//! session that starts it, and watched from the host. A pass held on an SSH channel ended with
//! the session: on 2026-11-29 goal 2's dropped after 284 s ("session closed while the command
//! ran") while oscap ran on for 38 minutes, and the pass was judged mid-way.
use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use temper_core::ports::{Exec, Guest};
use temper_target::SshGuest;

/// The unit's name in the guest.
const UNIT: &str = "temper-bench-remediate";

/// How a pass ended.
pub enum Pass {
    /// oscap exited with this status after this long (the unit's own start and exit times);
    /// `started`: the unit's start, in the guest's clock (Unix seconds).
    Exited { status: i32, took: Duration, started: i64 },
    /// oscap and everything under it used under 5 s of CPU in [`IDLE_FOR`] (deadlocked).
    Idle,
}

/// A pass with no CPU used for this long is deadlocked (oscap 1.3.7 among its probe threads:
/// seen here 40 minutes asleep, 13 s of CPU).
pub const IDLE_FOR: Duration = Duration::from_secs(300);

const EVERY: Duration = Duration::from_secs(30);

/// Runs `argv` (as root, `HOME=/root` as under sudo) in the unit and waits for it to end or idle;
/// the unit is stopped either way, which kills what is left of it.
pub async fn run(guest: &SshGuest, argv: &[String]) -> Pass {
    stop(guest).await;
    let mut start: Vec<String> =
        ["systemd-run", "--unit", UNIT, "--property=RemainAfterExit=yes", "--property=CPUAccounting=yes"].map(String::from).to_vec();
    start.extend(["--setenv=HOME=/root".into(), "--".into()]);
    start.extend(argv.iter().cloned());
    let out = guest.exec(Exec::new(start)).await.expect("systemd-run in the guest");
    assert!(out.success(), "systemd-run: {}", out.stderr_str().trim());
    let pass = watch(guest).await;
    stop(guest).await;
    pass
}

/// Polls the unit every [`EVERY`]. Its CPU time is that of its whole cgroup, so of oscap's probe
/// threads, the fix scripts and what they start: dpkg under apt included, which a count by process
/// group missed (apt gives it a session of its own) and a live pass was killed.
async fn watch(guest: &SshGuest) -> Pass {
    let keep = (IDLE_FOR.as_secs() / EVERY.as_secs()) as usize + 1;
    let mut cpu: VecDeque<u64> = VecDeque::new();
    loop {
        tokio::time::sleep(EVERY).await;
        let props = match show(guest).await {
            Ok(p) => p,
            Err(e) => {
                println!("oscap --remediate: could not read its unit ({e}); the pass runs on");
                continue;
            }
        };
        let get = |k: &str| props.get(k).map(String::as_str).unwrap_or("");
        match get("SubState") {
            "running" => {}
            // RemainAfterExit keeps the unit: `exited` after status 0, `failed` after any other.
            "exited" | "failed" => {
                let us = |k: &str| get(k).parse::<u64>().unwrap_or_else(|_| panic!("the unit's {k}: {props:?}"));
                let took = us("ExecMainExitTimestampMonotonic").saturating_sub(us("ExecMainStartTimestampMonotonic"));
                let status = get("ExecMainStatus").parse().unwrap_or_else(|_| panic!("the unit's exit status: {props:?}"));
                let started =
                    get("ExecMainStartTimestamp").trim_start_matches('@').parse().unwrap_or_else(|_| panic!("the unit's start: {props:?}"));
                return Pass::Exited { status, took: Duration::from_micros(took), started };
            }
            other => panic!("the unit is `{other}`, neither running nor ended: {props:?}"),
        }
        let Ok(used) = get("CPUUsageNSec").parse::<u64>() else { continue };
        cpu.push_back(used);
        if cpu.len() > keep {
            cpu.pop_front();
        }
        if cpu.len() == keep && cpu.back().unwrap().saturating_sub(*cpu.front().unwrap()) < 5_000_000_000 {
            return Pass::Idle;
        }
    }
}

async fn show(guest: &SshGuest) -> Result<BTreeMap<String, String>, String> {
    let keys = "SubState,ExecMainStatus,ExecMainStartTimestamp,ExecMainStartTimestampMonotonic,ExecMainExitTimestampMonotonic,CPUUsageNSec";
    let argv = ["systemctl", "show", UNIT, "--timestamp=unix", "--property", keys];
    let out = guest.exec(Exec::new(argv)).await.map_err(|e| e.to_string())?;
    if !out.success() {
        return Err(out.stderr_str().trim().to_string());
    }
    Ok(out.stdout_str().lines().filter_map(|l| l.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect())
}

/// Stops the unit if it is there (killing what runs in it) and forgets it.
async fn stop(guest: &SshGuest) {
    let _ = guest.exec(Exec::new(["systemctl", "stop", UNIT])).await;
    let _ = guest.exec(Exec::new(["systemctl", "reset-failed", UNIT])).await;
}

/// A pass's two parts, from its results: oscap evaluates every rule first, then runs the fixes
/// of those that fail, one after another. Each rule's result carries a time, to the second: when
/// it was evaluated, or, for a failing rule, when the remediation took it up. The evaluation ends
/// with the last rule judged passing or not applicable (none of them is remediated), give or take
/// the failing rules evaluated after it.
pub struct DetachedSplit {
    pub evaluation: Duration,
    pub fixes: Duration,
    /// Rules whose fix ran: `fixed`, or `error` when it failed.
    pub fixed: usize,
    pub errors: usize,
}

/// The split of a pass that started at `started` (the guest's clock) and took `took`, from the
/// results it left at `path` in the guest.
pub async fn split(guest: &SshGuest, path: &str, started: i64, took: Duration) -> Result<DetachedSplit, String> {
    use temper_scap::Outcome;
    let out = guest.exec(Exec::new(["cat", path]).max_output(512 << 20)).await.map_err(|e| e.to_string())?;
    if !out.success() || out.stdout_truncated {
        return Err(format!("could not read {path}: {}", out.stderr_str().trim()));
    }
    let results = temper_scap::results::parse_results_bytes(&out.stdout).map_err(|e| e.to_string())?;
    let at = |t: &Option<String>| t.as_deref().and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok()).map(|t| t.timestamp());
    let untouched = |o: Outcome| matches!(o, Outcome::Pass | Outcome::NotApplicable | Outcome::NotChecked | Outcome::Informational);
    let judged = results.rule_results.iter().filter(|r| untouched(r.result));
    let Some(evaluated) = judged.filter_map(|r| at(&r.time)).max() else { return Err(format!("no rule in {path} passed with a time")) };
    let evaluation = Duration::from_secs(evaluated.saturating_sub(started).max(0) as u64).min(took);
    let count = |o: Outcome| results.rule_results.iter().filter(|r| r.result == o).count();
    Ok(DetachedSplit { evaluation, fixes: took - evaluation, fixed: count(Outcome::Fixed), errors: count(Outcome::Error) })
}

//! `temper schedule`: the units it writes pass Debian's `systemd-analyze verify` (and a broken
//! one does not), `--at` is checked, `remove` deletes, and `fire` never overlaps itself,
//! resumes an unfinished run and leaves a driven one alone. PID 1 here is not systemd, so no
//! timer is started; every `fire` points at libvirt's `test:///default` and at a missing
//! content folder, so it fails before it could reach a VM.
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use support::*;
use temper_journal::{NewRun, RunStatus};

const ANALYZE: &str = "/usr/bin/systemd-analyze";

fn world() -> World {
    let mut w = World::new();
    let missing = w.dir.path().join("no-content").to_str().unwrap().to_string();
    for (k, v) in [("TEMPER_CONTENT_DIR", missing.as_str()), ("TEMPER_LIBVIRT_URI", "test:///default"), ("TEMPER_DOMAIN", "absent")] {
        w.env.push((k.into(), v.into()));
    }
    w.env.push(("TEMPER_SSH_PORT".into(), "1".into()));
    w
}

fn temper(w: &World, args: &[&str]) -> Output {
    let out = w.temper().args(args).output().unwrap();
    eprintln!("temper {}: exit {:?}\n{}{}", args.join(" "), out.status.code(), text(&out.stdout), text(&out.stderr));
    out
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `systemd-analyze verify` on unit files, as it works without systemd as PID 1: no man page
/// lookups, and (for user units) a runtime directory of its own. Returns (success, output).
fn verify(files: &[PathBuf], user: bool, runtime: &Path) -> (bool, String) {
    let mut c = Command::new(ANALYZE);
    if user {
        c.arg("--user").env("XDG_RUNTIME_DIR", runtime);
    }
    let out = c.args(["verify", "--man=no"]).args(files).env("SYSTEMD_LOG_LEVEL", "notice").output().unwrap();
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    eprintln!("systemd-analyze {}verify {files:?}: {:?}\n{said}", if user { "--user " } else { "" }, out.status.code());
    (out.status.success(), said)
}

fn units(dir: &Path, name: &str) -> [PathBuf; 2] {
    [dir.join(format!("temper-{name}.service")), dir.join(format!("temper-{name}.timer"))]
}

#[test]
fn installed_units_pass_systemd_analyze_verify_and_broken_ones_do_not() {
    let w = world();
    let dir = w.dir.path().join("units");
    let d = dir.to_str().unwrap();
    let out = temper(
        &w,
        &["schedule", "install", "--at", "02:00", "--unit-dir", d, "--", "--agent", "stock", "--profile", "my profile", "--quiet"],
    );
    assert_eq!(out.status.code(), Some(0));
    let files = units(&dir, "nightly");
    let service = std::fs::read_to_string(&files[0]).unwrap();
    let timer = std::fs::read_to_string(&files[1]).unwrap();
    let exe = Path::new(env!("CARGO_BIN_EXE_temper")).canonicalize().unwrap();
    let exec = format!("ExecStart={} --config {} --log-format text", exe.display(), w.dir.path().join("none.toml").display());
    assert!(service.contains(&exec), "{service}");
    assert!(service.contains(" schedule fire --name nightly -- --agent stock --profile \"my profile\" --quiet\n"), "{service}");
    let cwd = w.dir.path().canonicalize().unwrap();
    for line in ["Type=oneshot", "SuccessExitStatus=2", "Restart=on-failure", "RestartPreventExitStatus=1", "RestartSec=15min"] {
        assert!(service.lines().any(|l| l == line), "{line} in\n{service}");
    }
    assert!(service.lines().any(|l| l == format!("WorkingDirectory={}", cwd.display())), "{service}");
    for line in ["OnCalendar=*-*-* 02:00:00", "Persistent=true", "Unit=temper-nightly.service"] {
        assert!(timer.lines().any(|l| l == line), "{line} in\n{timer}");
    }
    let runtime = tempfile::tempdir().unwrap();
    let (ok, said) = verify(&files, false, runtime.path());
    assert!(ok && !said.contains("temper-nightly"), "systemd-analyze verify found problems:\n{said}");

    // The same for a user unit, weekdays, through `systemd-analyze calendar`.
    let user_dir = w.dir.path().join("user-units");
    let out =
        temper(&w, &["schedule", "install", "--user", "--at", "Mon..Fri 01:30", "--name", "wd", "--unit-dir", user_dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let user_files = units(&user_dir, "wd");
    assert!(std::fs::read_to_string(&user_files[1]).unwrap().contains("OnCalendar=Mon..Fri 01:30\n"));
    let (ok, said) = verify(&user_files, true, runtime.path());
    assert!(ok && !said.contains("temper-wd"), "systemd-analyze --user verify found problems:\n{said}");

    // verify can fail: a bad calendar, and a service whose binary is not there.
    let broken = w.dir.path().join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    let bad = units(&broken, "nightly");
    std::fs::write(&bad[0], &service).unwrap();
    std::fs::write(&bad[1], timer.replace("OnCalendar=*-*-* 02:00:00", "OnCalendar=*-*-* 25:00:00")).unwrap();
    let (ok, said) = verify(&bad, false, runtime.path());
    assert!(!ok && said.contains("Failed to parse calendar specification"), "{said}");
    std::fs::write(&bad[1], &timer).unwrap();
    std::fs::write(&bad[0], service.replace(&exe.display().to_string(), "/nonexistent/temper")).unwrap();
    let (ok, said) = verify(&bad, false, runtime.path());
    assert!(!ok && said.contains("/nonexistent/temper is not executable"), "{said}");
}

#[test]
fn a_bad_at_or_bad_run_arguments_are_a_clear_error() {
    let w = world();
    let dir = w.dir.path().join("units");
    let d = dir.to_str().unwrap();
    for (at, says) in
        [("25:00", "the hour is 25; it must be 00 to 23"), ("12:75", "the minute is 75"), ("sometime", "systemd-analyze calendar")]
    {
        let out = temper(&w, &["schedule", "install", "--at", at, "--unit-dir", d]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(&format!("--at {at:?}")) && err.contains(says), "{err}");
    }
    let out = temper(&w, &["schedule", "install", "--at", "02:00", "--unit-dir", d, "--", "--bogus"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("the run arguments") && text(&out.stderr).contains("--bogus"));
    let out = temper(&w, &["schedule", "install", "--at", "02:00", "--name", "a/b", "--unit-dir", d]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!dir.exists(), "nothing written");
}

#[test]
fn show_lists_and_remove_deletes_the_units() {
    let w = world();
    let dir = w.dir.path().join("units");
    let d = dir.to_str().unwrap();
    for name in ["nightly", "weekly"] {
        assert!(temper(&w, &["schedule", "install", "--at", "03:15", "--name", name, "--unit-dir", d]).status.success());
    }
    let wants = dir.join("timers.target.wants");
    std::fs::create_dir_all(&wants).unwrap();
    std::os::unix::fs::symlink(dir.join("temper-nightly.timer"), wants.join("temper-nightly.timer")).unwrap();

    let shown: Value = serde_json::from_slice(&temper(&w, &["schedule", "show", "--unit-dir", d, "--json"]).stdout).unwrap();
    let names: Vec<&str> = shown["schedules"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["nightly", "weekly"]);
    assert_eq!(shown["schedules"][0]["on_calendar"], "*-*-* 03:15:00");
    assert_eq!(shown["systemd_pid1"], Path::new("/run/systemd/system").exists());
    let plain = text(&temper(&w, &["schedule", "show", "--name", "weekly", "--unit-dir", d]).stdout);
    assert!(plain.contains("temper-weekly.service") && !plain.contains("temper-nightly.service"), "{plain}");

    let out = temper(&w, &["schedule", "remove", "--name", "nightly", "--unit-dir", d]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("daemon-reload"));
    for gone in units(&dir, "nightly").iter().chain([&wants.join("temper-nightly.timer")]) {
        assert!(gone.symlink_metadata().is_err(), "{} still there", gone.display());
    }
    assert!(units(&dir, "weekly").iter().all(|f| f.is_file()), "the other schedule is kept");
    let again = temper(&w, &["schedule", "remove", "--name", "nightly", "--unit-dir", d]);
    assert_eq!(again.status.code(), Some(1));
    assert!(text(&again.stderr).contains("no schedule named nightly"));
    assert_eq!(temper(&w, &["schedule", "show", "--name", "nightly", "--unit-dir", d]).status.code(), Some(1));
}

fn new_run() -> NewRun {
    let options = serde_json::json!({"skill": "debian12-anssi", "profile": STANDARD, "rules": [], "max_rules": null, "rule_budget_secs": 60,
        "max_attempts": 1, "regression_every": null, "llm_url": null, "llm_model": null, "quiet": true, "json": false});
    NewRun {
        skill: "debian12-anssi".into(),
        profile: STANDARD.into(),
        datastream: "ssg-debian12-ds.xml".into(),
        content_version: None,
        target: "test".into(),
        agent: "stock".into(),
        options_json: options.to_string(),
        baseline: "baseline".into(),
    }
}

/// While another process holds the schedule's lock, a fire does nothing and exits 0; once it
/// is free, the fire runs (and fails here, on the missing content, with the run's exit code).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_fire_does_not_run_while_the_first_holds_the_lock() {
    let w = world();
    let lock_path = w.dir.path().join("schedule-nightly.lock");
    // Another process holds the lock (util-linux's flock, `-o`: its child does not inherit it).
    // Held here instead, its file could outlive `drop` in a child another test forked and has
    // not yet exec'd, on a loaded host.
    let mut holder = std::process::Command::new("flock").arg("-o").arg(&lock_path).args(["sleep", "120"]).spawn().unwrap();
    let free = || std::process::Command::new("flock").args(["-n"]).arg(&lock_path).arg("true").status().unwrap().success();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while free() {
        assert!(std::time::Instant::now() < deadline, "flock never took the lock");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = temper(&w, &["schedule", "fire", "--", "--quiet"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stderr).contains("this one did not run"), "{}", text(&out.stderr));
    assert!(!Path::new(w.db()).exists(), "the fire did not even open the store");
    holder.kill().unwrap();
    holder.wait().unwrap();

    let out = temper(&w, &["schedule", "fire", "--", "--quiet"]);
    assert_eq!(out.status.code(), Some(1), "it ran, and the run failed on the missing content");
    assert!(text(&out.stderr).contains("run 1 started"), "{}", text(&out.stderr));
    assert_eq!(w.store().await.list_runs(10).await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fire_resumes_an_unfinished_run_and_leaves_a_driven_one_alone() {
    use std::sync::Arc;
    use temper_core::lease::Lease;
    let w = world();
    let store = Arc::new(w.store().await);
    let run = store.create_run(&new_run()).await.unwrap();
    store.set_status(run, RunStatus::Paused, Some("llm unavailable")).await.unwrap();
    let out = temper(&w, &["schedule", "fire", "--", "--quiet"]);
    let err = text(&out.stderr);
    assert!(err.contains(&format!("resuming run {run} from checkpoint baseline (was paused")), "{err}");
    assert_eq!(store.list_runs(10).await.unwrap().len(), 1, "no new run");

    let lease = Lease::take(store.clone(), run, Arc::new(temper_core::ports::Clock::default())).await.unwrap();
    let out = temper(&w, &["schedule", "fire", "--", "--quiet"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains(&format!("run {run} is being driven by another process")) && err.contains("not running"), "{err}");
    assert_eq!(store.list_runs(10).await.unwrap().len(), 1, "no new run");
    lease.release().await.unwrap();

    store.finish_run(run, &temper_journal::RunSummary { run: Some(run), exit_code: 0, ..Default::default() }).await.unwrap();
    let out = temper(&w, &["schedule", "fire", "--", "--quiet"]);
    assert!(text(&out.stderr).contains(&format!("run {} started", run.get() + 1)), "a finished run is not resumed");
}

#[test]
fn help_has_examples_and_the_exit_code_mapping() {
    let w = world();
    for sub in ["install", "show", "remove", "fire"] {
        let out = w.temper().args(["schedule", sub, "--help"]).output().unwrap();
        let help = text(&out.stdout);
        assert!(out.status.success() && help.contains("Example"), "{sub}: {help}");
        if matches!(sub, "install" | "fire") {
            assert!(help.contains("SuccessExitStatus=2") && help.contains("RestartPreventExitStatus=1") && help.contains("75"), "{help}");
        }
    }
}

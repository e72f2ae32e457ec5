//! The read commands of the CLI, on a real SQLite file filled through the store's API, on the
//! real SSG content and results, and `llm probe` against the scripted server. No VM needed.
mod support;

use serde_json::{Value, json};
use support::*;
use temper_journal::RunId;
use temper_journal::Verdict;
use temper_journal::{AttemptSpec, Evaluation, Findings, FixSource, NewRule, NewRun, RevertMethod, RuleStatus, RunSummary, ScanResult};

async fn seeded(w: &World) -> RunId {
    let s = w.store().await;
    let run = s
        .create_run(&NewRun {
            skill: "debian12-anssi".into(),
            profile: STANDARD.into(),
            datastream: "ssg-debian12-ds.xml".into(),
            content_version: Some("0.1.76".into()),
            target: "test".into(),
            agent: "llm".into(),
            options_json: "{}".into(),
            baseline: "baseline".into(),
        })
        .await
        .unwrap();
    let rule = |rule_id: &str, title: &str, severity: &str| NewRule {
        rule_id: rule_id.into(),
        title: title.into(),
        severity: severity.into(),
        initial_result: ScanResult::Fail,
        status: RuleStatus::Pending,
        reason: None,
    };
    s.add_rule(run, &rule(SUID, "suid", "medium")).await.unwrap();
    s.add_rule(run, &rule(SYSTEMMAP, "System.map", "low")).await.unwrap();
    let new = |rule: &str, fix: &str| AttemptSpec {
        rule_id: rule.into(),
        plan: "plan".into(),
        source: FixSource::Llm,
        replayed: false,
        fix_script: fix.into(),
        revert_script: "true".into(),
        description: "d".into(),
        checkpoint: "baseline".into(),
        evidence_before: None,
    };
    let (a, _) = s.start_attempt(run, &new(SUID, SUID_FIX)).await.unwrap();
    let o = Evaluation {
        revert_method: RevertMethod::None,
        findings: Findings { rule_result: Some(ScanResult::Pass), ..Findings::default() },
        ..Evaluation::new(Verdict::Fixed, "")
    };
    s.record_fix(run, a, &o, SUID, "temper-r1-a1").await.unwrap();
    let remembered = temper_journal::NewRememberedFix {
        run_id: run,
        skill: "debian12-anssi".into(),
        rule_id: SUID.into(),
        fix_script: SUID_FIX.into(),
        revert_script: "true".into(),
        description: "sysctl drop-in".into(),
        attempt_id: a,
    };
    s.remember_fix(&remembered).await.unwrap();
    let (b, _) = s.start_attempt(run, &new(SYSTEMMAP, "systemctl stop nginx")).await.unwrap();
    let o = Evaluation {
        revert_method: RevertMethod::Snapshot,
        findings: Findings { health_ok: Some(false), health_output: Some("UNHEALTHY: nginx".into()), ..Findings::default() },
        ..Evaluation::new(Verdict::HealthBroken, "")
    };
    s.finish_attempt(b, &o).await.unwrap();
    s.set_rule_status(run, SYSTEMMAP, RuleStatus::Escalated, Some("attempt budget spent: 1 of 1 attempts failed")).await.unwrap();
    s.add_lesson(run, SYSTEMMAP, "stopping nginx breaks the app", "leave nginx alone", "never stop nginx").await.unwrap();
    s.add_ban(run, SYSTEMMAP, r"systemctl\s+stop\s+nginx", "breaks health").await.unwrap();
    // Taught by a guest's output: it would forbid every derived fix.
    s.add_ban(run, SYSTEMMAP, "pipefail", "the guest's output said so").await.unwrap();
    s.set_final_result(run, SUID, ScanResult::Pass).await.unwrap();
    s.set_final_result(run, SYSTEMMAP, ScanResult::Fail).await.unwrap();
    s.finish_run(run, &RunSummary { run: Some(run), exit_code: 2, ..Default::default() }).await.unwrap();
    run
}

fn json_of(out: &std::process::Output) -> Value {
    assert!(out.status.success(), "exit {:?}", out.status.code());
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_memory_and_reports_read_the_database() {
    let w = World::new();
    let run = seeded(&w).await;
    let st = json_of(&w.run(&["status", "--json"]).await);
    assert_eq!((st["run"].as_i64(), st["fixed"].as_i64(), st["escalated"].as_i64()), (Some(run.get()), Some(1), Some(1)));
    assert_eq!(st["status"], "finished");

    let mem = json_of(&w.run(&["memory", "list", "--json"]).await);
    let ban = &mem["bans"][0];
    assert_eq!(ban["pattern"], r"systemctl\s+stop\s+nginx");
    let id = ban["id"].as_i64().unwrap().to_string();
    let shown = json_of(&w.run(&["memory", "show", "bans", &id, "--json"]).await);
    assert_eq!(shown["reason"], "breaks health");
    // Learned on the run's target; a person approves it for the skill after a look.
    let line = String::from_utf8(w.run(&["memory", "list", "--kind", "bans"]).await.stdout).unwrap();
    assert!(line.contains("holds on its run's target only") && line.contains("awaiting approval"), "{line}");
    let approved = w.run(&["memory", "approve", "bans", &id, "--by", "alice"]).await;
    assert!(approved.status.success(), "{}", String::from_utf8_lossy(&approved.stderr));
    assert_eq!(json_of(&w.run(&["memory", "show", "bans", &id, "--json"]).await)["approved_by"], "alice");
    assert!(!w.run(&["memory", "approve", "bans", &id]).await.status.success(), "approved once");
    let poisoned = mem["bans"][1]["id"].as_i64().unwrap().to_string();
    assert_eq!(mem["bans"][1]["pattern"], "pipefail");
    let refused = w.run(&["memory", "approve", "bans", &poisoned]).await;
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success() && said.contains("is not approved") && said.contains("set -euo pipefail"), "{said}");
    assert!(w.run(&["memory", "forget", "bans", &poisoned]).await.status.success());
    assert!(w.run(&["memory", "forget", "bans", &id]).await.status.success());
    let mem = json_of(&w.run(&["memory", "list", "--kind", "bans", "--json"]).await);
    assert_eq!(mem["bans"].as_array().unwrap().len(), 0, "forgotten");
    assert!(!w.run(&["memory", "forget", "bans", &id]).await.status.success(), "twice is an error");
    let fixes = json_of(&w.run(&["memory", "list", "--kind", "fixes", "--json"]).await);
    let fix = &fixes["fixes"][0];
    assert_eq!((fix["rule_id"].as_str(), fix["tried"].as_i64(), fix["fix_script"].as_str()), (Some(SUID), Some(0), Some(SUID_FIX)));
    let line = String::from_utf8(w.run(&["memory", "list", "--kind", "fixes"]).await.stdout).unwrap();
    assert!(line.contains("in force, kept 0 of 0 tries elsewhere") && line.contains("sysctl drop-in"), "{line}");
    let id = fix["id"].as_i64().unwrap().to_string();
    assert!(w.run(&["memory", "forget", "fixes", &id]).await.status.success());
    let line = String::from_utf8(w.run(&["memory", "list", "--kind", "fixes"]).await.stdout).unwrap();
    assert!(line.contains("retired"), "a forgotten fix is retired, still listed: {line}");

    let md = w.run(&["report", "latest", "--format", "md"]).await;
    let md = String::from_utf8(md.stdout).unwrap();
    assert!(md.contains("file_permissions_systemmap") && md.contains("attempt budget spent"), "{md}");
    let html = w.dir.path().join("r.html");
    assert!(w.run(&["report", &run.to_string(), "--format", "html", "-o", html.to_str().unwrap()]).await.status.success());
    assert!(std::fs::read_to_string(&html).unwrap().contains("UNHEALTHY: nginx"));
    let ckl = String::from_utf8(w.run(&["report", "latest", "--format", "ckl"]).await.stdout).unwrap();
    assert!(ckl.contains("<CHECKLIST>") && ckl.contains("sysctl_fs_suid_dumpable"), "{ckl}");
    assert!(!w.run(&["report", "99", "--format", "md"]).await.status.success(), "unknown run is an error");
    let fleet = w.run(&["report", "fleet", "--format", "html"]).await;
    assert!(String::from_utf8_lossy(&fleet.stderr).contains("no fleet run in the store yet"), "the run belongs to no fleet");
    let extra = w.run(&["report", "latest", "night"]).await;
    assert!(String::from_utf8_lossy(&extra.stderr).contains("only `temper report fleet` takes a second name"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_and_results_commands_read_real_files() {
    let w = World::new();
    let ds = std::path::Path::new(&temper_journal::target::vm_dir()).join("ssg/usr/share/xml/scap/ssg/content/ssg-rhel9-ds.xml");
    let ds = ds.to_str().unwrap();
    let rules = json_of(&w.run(&["content", "rules", ds, "--profile", "xccdf_org.ssgproject.content_profile_stig", "--json"]).await);
    let rules = rules.as_array().unwrap();
    assert!((450..=530).contains(&rules.len()), "{}", rules.len());
    let root = rules.iter().find(|r| r["id"] == "xccdf_org.ssgproject.content_rule_sshd_disable_root_login").unwrap();
    assert_eq!(root["stig_ids"][0], "RHEL-09-255045");
    assert_eq!(root["has_fix"], true);
    let profiles = json_of(&w.run(&["content", "profiles", ds, "--json"]).await);
    assert!(profiles.as_array().unwrap().iter().any(|p| p["id"] == "xccdf_org.ssgproject.content_profile_stig"));

    let shared = repo().join("../shared/data/debian12-standard-results.xml");
    let shared = if shared.is_file() { shared } else { "/work/shared/data/debian12-standard-results.xml".into() };
    let r = json_of(&w.run(&["scan", "parse", shared.to_str().unwrap(), "--json"]).await);
    assert_eq!(
        (r["counts"]["fail"].as_i64(), r["counts"]["pass"].as_i64(), r["counts"]["notapplicable"].as_i64()),
        (Some(19), Some(19), Some(6))
    );
    assert!(r["counts"].get("notselected").is_none(), "notselected only with --all");
    let all = json_of(&w.run(&["scan", "parse", shared.to_str().unwrap(), "--all", "--json"]).await);
    assert_eq!(all["counts"]["notselected"], 547);
    let bad = w.dir.path().join("bad.xml");
    std::fs::write(&bad, "<TestResult><rule-result idref=").unwrap();
    let out = w.run(&["scan", "parse", bad.to_str().unwrap(), "--json"]).await;
    assert_eq!(out.status.code(), Some(1), "malformed XML is a clear error, not a panic");
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad.xml"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_rules_lists_what_a_tailored_profile_selects() {
    let w = World::new();
    let ds = std::path::Path::new(&temper_journal::target::vm_dir()).join("ssg/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml");
    let tailoring = w.dir.path().join("tailoring.xml");
    let made = std::process::Command::new("autotailor")
        .args(["-u", "sshd_disable_root_login", "-o"])
        .arg(&tailoring)
        .arg(&ds)
        .arg("standard")
        .status()
        .expect("autotailor (openscap-utils: bash vm/host-deps.sh)");
    assert!(made.success());
    let ids = |v: Value| v.as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    let ds = ds.to_str().unwrap();
    let plain = ids(json_of(&w.run(&["content", "rules", ds, "--profile", STANDARD, "--json"]).await));
    let tailored = ids(json_of(&w.run(&["content", "rules", ds, "--tailoring-file", tailoring.to_str().unwrap(), "--json"]).await));
    let root = "xccdf_org.ssgproject.content_rule_sshd_disable_root_login".to_string();
    assert!(plain.contains(&root), "the profile selects it");
    assert!(!tailored.contains(&root), "the tailoring unselects it");
    assert_eq!(tailored.len(), plain.len() - 1, "and nothing else changes");
    let none = w.run(&["content", "rules", ds]).await;
    assert!(!none.status.success() && String::from_utf8_lossy(&none.stderr).contains("--profile"), "a profile or a tailoring is needed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_probe_reports_native_mode_and_dropped_calls() {
    let w = World::new();
    let two = temper_mockllm::Scripted::tool_calls(vec![
        temper_mockllm::ScriptedCall::new("apply_fix", json!({"fix_script": "true", "revert_script": "true", "description": "a"})),
        temper_mockllm::ScriptedCall::new("apply_fix", json!({"fix_script": "false", "revert_script": "true", "description": "b"})),
    ]);
    let llm = mock(vec![temper_mockllm::Scripted::rate_limited(0), two]).await;
    let url = llm.url();
    let p = json_of(&w.run(&["llm", "probe", "--llm", &url, "--model", "m", "--json"]).await);
    assert_eq!(p["ok"], true);
    assert_eq!(p["mode"], "native");
    assert_eq!(p["dropped_calls"], 1);
    assert_eq!(p["retries"], 1);
    assert!(p["completion_tokens"].as_u64().unwrap() > 0);
}

#[test]
fn every_subcommand_has_help_with_an_example() {
    let w = World::new();
    for sub in [
        "vm",
        "doctor",
        "run",
        "resume",
        "status",
        "report",
        "scan run",
        "scan parse",
        "content rules",
        "content profiles",
        "llm probe",
        "memory list",
        "memory forget",
    ] {
        let mut args: Vec<&str> = sub.split(' ').collect();
        args.push("--help");
        let out = w.temper().args(&args).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && text.contains("Example"), "{sub}: {text}");
    }
}

/// One driver at a time: `temper resume` on a run a live process holds says so and exits 1; a
/// run whose driver died shows in `temper status` as interrupted, with the command to go on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_run_is_refused_and_a_dead_drivers_run_shows_interrupted() {
    use std::sync::Arc;
    use temper_core::lease::Lease;
    use temper_journal::now_ms;
    let w = World::new();
    let store = Arc::new(w.store().await);
    let new = NewRun {
        skill: "debian12-anssi".into(),
        profile: STANDARD.into(),
        datastream: "ssg-debian12-ds.xml".into(),
        content_version: None,
        target: "test".into(),
        agent: "stock".into(),
        options_json: serde_json::to_string(&json!({"skill": "debian12-anssi", "profile": STANDARD, "rules": [], "max_rules": null,
            "rule_budget_secs": 60, "max_attempts": 1, "regression_every": null, "llm_url": null, "llm_model": null, "quiet": true, "json": false}))
        .unwrap(),
        baseline: "baseline".into(),
    };
    let run = store.create_run(&new).await.unwrap();
    let lease = Lease::take(store.clone(), run, Arc::new(temper_core::ports::Clock::default())).await.unwrap();
    let out = w.run(&["resume", &run.to_string()]).await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("being driven by another process"), "{err}");
    assert_eq!(json_of(&w.run(&["status", "--json"]).await)["status"], "running", "a live driver's run is running");
    lease.release().await.unwrap();

    // A driver on this host whose process is gone (no such pid), its lease still in time.
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let dead = format!("{}:{}:0", host.trim(), u32::MAX - 1);
    assert!(store.claim_run(run, &dead, None, now_ms(), now_ms() + 60_000).await.unwrap());
    let st = json_of(&w.run(&["status", "--json"]).await);
    assert_eq!((st["status"].as_str(), st["driver_gone"].as_bool()), (Some("interrupted"), Some(true)), "{st}");
    assert_eq!(st["next"], format!("temper resume {run}"));
}

/// `temper image export` refuses a run whose final state never passed the reboot proof, before
/// it asks the hypervisor anything; `--unproven` lets it through to the hypervisor (which, with
/// no such domain here, is what fails next).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unproven_run_is_not_exported_without_unproven() {
    let mut w = World::new();
    let run = seeded(&w).await.to_string();
    // No libvirt here: a domain that cannot exist, so a call that got through would fail on it.
    w.env.push(("TEMPER_LIBVIRT_URI".into(), "test:///default".into()));
    w.env.push(("TEMPER_DOMAIN".into(), "no-such-domain".into()));
    let image = w.dir.path().join("out.qcow2");
    let image_arg = image.to_str().unwrap();
    let out = w.run(&["image", "export", &run, "-o", image_arg]).await;
    let why = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{why}");
    assert!(why.contains(&format!("run {run}'s final state has not passed the reboot proof")) && why.contains("--unproven"), "{why}");
    assert!(!image.exists() && !image.with_extension("ckl").exists(), "nothing written");
    let out = w.run(&["image", "export", &run, "-o", image_arg, "--unproven"]).await;
    let why = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{why}");
    assert!(!why.contains("reboot proof") && why.contains("no-such-domain"), "past the proof, stopped at the hypervisor: {why}");
}

/// One HTTP/1.1 request with this `Host`, over a plain socket: the status line and the body.
async fn get_with_host(port: u16, host: &str, path: &str) -> (String, String) {
    get_with(port, host, path, "").await
}

/// As [`get_with_host`], with `headers` (each line ending in CRLF) sent too.
async fn get_with(port: u16, host: &str, path: &str, headers: &str) -> (String, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n{headers}Connection: close\r\n\r\n").as_bytes()).await.unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    (head.lines().next().unwrap_or("").to_string(), body.to_string())
}

/// DNS rebinding: a page on evil.example whose name resolves to 127.0.0.1 reaches `temper
/// serve` with `Host: evil.example` and gets a 421, not the journal. The server's own address,
/// `localhost` and a name given with `--allow-host` get the page.
#[tokio::test]
async fn serve_refuses_a_host_that_is_not_its_own() {
    let w = World::new();
    let run = seeded(&w).await;
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut serve = tokio::process::Command::from(w.temper());
    let bind = format!("127.0.0.1:{port}");
    let mut child = serve.args(["serve", "--bind", &bind, "--allow-host", "temper.lab.test"]).kill_on_drop(true).spawn().unwrap();
    let path = format!("/runs/{run}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        assert!(std::time::Instant::now() < deadline, "temper serve did not listen on {bind}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    for host in ["evil.example", "evil.example:8080", "localhost.evil.example", "127.0.0.1.nip.io"] {
        let (status, body) = get_with_host(port, host, &path).await;
        assert!(status.contains(" 421 "), "{host}: {status}");
        assert!(body.contains("is not this server") && !body.contains(SUID), "{host}: {body}");
    }
    for host in [bind.as_str(), &format!("localhost:{port}"), "temper.lab.test"] {
        let (status, body) = get_with_host(port, host, &path).await;
        assert!(status.contains(" 200 "), "{host}: {status}");
        assert!(body.contains(SUID), "{host}: the run page, its rules");
    }
    child.kill().await.unwrap();
}

/// `temper serve` with a token (as off loopback it must have one) answers no request without it,
/// nor with another: the real server, its middleware as the CLI wires it.
#[tokio::test]
async fn serve_with_a_token_answers_no_request_without_it() {
    let w = World::new();
    let run = seeded(&w).await;
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let token = w.dir.path().join("token");
    std::fs::write(&token, "s3cret-Token-42\n").unwrap();
    let bind = format!("127.0.0.1:{port}");
    let mut serve = tokio::process::Command::from(w.temper());
    let mut child = serve.args(["serve", "--bind", &bind, "--token-file", token.to_str().unwrap()]).kill_on_drop(true).spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        assert!(std::time::Instant::now() < deadline, "temper serve did not listen on {bind}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let path = format!("/runs/{run}");
    for auth in ["", "Authorization: Bearer s3cret-Token-43\r\n", "Authorization: Bearer \r\n", "Authorization: Basic s3cret-Token-42\r\n"]
    {
        let (status, body) = get_with(port, &bind, &path, auth).await;
        assert!(status.contains(" 401 "), "{auth:?}: {status}");
        assert!(!body.contains(SUID) && !body.contains("s3cret"), "{auth:?}: {body}");
    }
    let (status, body) = get_with(port, &bind, &path, "Authorization: Bearer s3cret-Token-42\r\n").await;
    assert!(status.contains(" 200 ") && body.contains(SUID), "with the token: {status}");
    child.kill().await.unwrap();
}

//! Fleets on two real TCG guests: `temper-test` (SSH 2222) and a second domain made the same
//! way (`TEMPER_DOMAIN2`, default `temper-test2`; `TEMPER_SSH_PORT2`, default 2223), as two
//! `[[target]]` tables in one temper.toml. Lanes run both targets at once in one process; a fix
//! the LLM wrote on one target is reused on the other with no LLM turn.
//!
//! They need both guests at once (`bash vm/up.sh --count 2`). `tests/run.sh` runs the workers'
//! test in its fleet phase, once its other suites are done with the guests; the lanes tests are
//! run by hand: `cargo test -p temper --test e2e_fleet -- --ignored --test-threads=1`. The
//! workers' test also needs PostgreSQL (`tests/pg/start.sh`, `TEMPER_TEST_PG`) and the loopback
//! sshd that libvirt's remote driver goes through (`tests/sshd/start.sh`, which it starts).
mod support;

use std::time::Duration;

use serde_json::Value;
use support::*;
use temper_core::ports::{Exec, Guest, Hypervisor};
use temper_journal::FixSource;
use temper_target::{LibvirtConfig, LibvirtHypervisor, SshConfig, SshGuest};

const RULES: [&str; 3] = ["sysctl_fs_suid_dumpable", "sysctl_kernel_randomize_va_space", "file_permissions_systemmap"];

fn second() -> (String, u16) {
    let domain = std::env::var("TEMPER_DOMAIN2").unwrap_or_else(|_| "temper-test2".into());
    let port = std::env::var("TEMPER_SSH_PORT2").ok().and_then(|p| p.parse().ok()).unwrap_or(2223);
    (domain, port)
}

fn second_guest() -> SshGuest {
    SshGuest::new(SshConfig { port: second().1, ..SshConfig::from_env().unwrap() }).unwrap()
}

fn second_hypervisor() -> LibvirtHypervisor {
    LibvirtHypervisor::new(LibvirtConfig { uri: "qemu:///system".into(), domain: second().0 })
}

/// Both guests answer, each at its baseline; the world's config names them `a` and `b`.
async fn two_targets() -> World {
    require_vm().await;
    let (domain, port) = second();
    let g = second_guest();
    g.reconnect(Duration::from_secs(60))
        .await
        .unwrap_or_else(|e| panic!("the second guest ({domain} on {port}) does not answer ({e}): bash vm/up.sh {domain} {port}"));
    for hv in [hypervisor(), second_hypervisor()] {
        hv.snapshot_revert("baseline").await.unwrap();
    }
    let mut w = World::new();
    let config = w.dir.path().join("temper.toml");
    let toml = format!("[[target]]\nname = \"a\"\n\n[[target]]\nname = \"b\"\ndomain = \"{domain}\"\nssh_port = {port}\n");
    std::fs::write(&config, toml).unwrap();
    w.env.push(("TEMPER_CONFIG".into(), config.to_str().unwrap().into()));
    w
}

/// An independent rescan of `rules` on target `name` (`oscap xccdf eval`, not temper's data).
async fn rescan_on(w: &World, name: &str, rules: &[String]) -> Vec<(String, String)> {
    let mut args = vec!["scan", "run", "--target", name, "--engine", "xccdf", "--profile", STANDARD, "--json"];
    for r in rules {
        args.extend(["--rule", r.as_str()]);
    }
    let out = w.run(&args).await;
    assert!(out.status.success(), "scan of {name}: {}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let found = v["rules"].as_array().unwrap().iter();
    found.filter(|r| rules.iter().any(|x| r["id"] == x.as_str())).map(|r| (r["id"].to_string(), r["result"].to_string())).collect()
}

async fn both_healthy() {
    for g in [guest(), second_guest()] {
        g.reconnect(Duration::from_secs(120)).await.unwrap();
        let out = g.exec(Exec::new(["/usr/local/bin/mission-healthcheck"])).await.unwrap();
        assert!(out.success() && out.stdout_str().trim().ends_with("HEALTHY"), "unhealthy: {}", out.stdout_str());
    }
}

/// Puts both guests back at their baselines, deleting this world's snapshots.
async fn cleanup(w: &World) {
    let mine = w.snapshot_prefixes().await;
    for hv in [hypervisor(), second_hypervisor()] {
        for s in hv.snapshot_list().await.unwrap_or_default() {
            if mine.iter().any(|p| s.starts_with(p)) {
                let _ = hv.snapshot_delete(&s).await;
            }
        }
        hv.snapshot_revert("baseline").await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "about 10 min on both guests, which CI's other suites hold: run by hand, see the file's header"]
async fn two_targets_in_two_lanes_both_finish_and_their_fixes_hold() {
    let w = two_targets().await;
    let rules = RULES.join(",");
    let started = std::time::Instant::now();
    let out = w
        .run(&["fleet", "run", "--fleet", "night", "--lanes", "2", "--", "--agent", "stock", "--profile", STANDARD, "--rules", &rules])
        .await;
    let wall = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "the worst lane's code: every rule in scope fixed on both\n{stdout}");
    let store = w.store().await;
    let runs = store.list_runs(10).await.unwrap();
    assert_eq!(runs.len(), 2, "one run per target");
    for run in &runs {
        assert_eq!(run.status.as_str(), "finished", "run {} on {}", run.id, run.target);
        let options: Value = serde_json::from_str(&run.options_json).unwrap();
        assert_eq!(options["fleet"], "night", "grouped by fleet");
        let fixed: Vec<String> =
            store.rules(run.id).await.unwrap().into_iter().filter(|r| r.status.as_str() == "fixed").map(|r| r.rule_id).collect();
        assert_eq!(fixed.len(), 3, "run {}: {fixed:?}", run.id);
        let name = run.target_config.as_ref().expect("the run's target, stored").name.as_str();
        for (rule, result) in rescan_on(&w, name, &fixed).await {
            assert_eq!(result, "\"pass\"", "{name}: {rule}");
        }
    }
    let targets: std::collections::BTreeSet<&str> = runs.iter().filter_map(|r| r.target_config.as_ref()).map(|t| t.name.as_str()).collect();
    assert_eq!(targets, ["a", "b"].into(), "each target ran once");
    println!("two lanes, two targets, 3 stock fixes each: {:.1} s", wall.as_secs_f64());
    both_healthy().await;
    cleanup(&w).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "about 10 min on both guests, which CI's other suites hold: run by hand, see the file's header"]
async fn a_fix_kept_on_one_target_is_reused_on_the_other_without_an_llm_turn() {
    let w = two_targets().await;
    let llm = mock(vec![select(SUID, "persist fs.suid_dumpable=0"), apply_fix(SUID_FIX, SUID_REVERT, "sysctl drop-in")]).await;
    let out = llm_run(&w, &llm, SUID, &["--target", "a"]).await;
    assert!(out.status.code().is_some(), "{}", String::from_utf8_lossy(&out.stderr));
    let store = w.store().await;
    let run_a = store.latest_run().await.unwrap().unwrap().id;
    assert_eq!(store.rule(run_a, SUID).await.unwrap().unwrap().status.as_str(), "fixed");
    let remembered = store.remembered_fixes().await.unwrap();
    assert_eq!(remembered.len(), 1, "the kept LLM fix is remembered");
    assert_eq!((remembered[0].tried, remembered[0].run_id), (0, run_a));

    // Target B: an LLM that has nothing to say; the remembered fix does the work.
    let silent = mock(vec![]).await;
    llm_run(&w, &silent, SUID, &["--target", "b"]).await;
    let run_b = store.latest_run().await.unwrap().unwrap().id;
    assert_ne!(run_a, run_b);
    assert_eq!(store.rule(run_b, SUID).await.unwrap().unwrap().status.as_str(), "fixed");
    let tries = store.rule_attempts(run_b, SUID).await.unwrap();
    assert_eq!(tries.iter().map(|a| a.spec.source).collect::<Vec<_>>(), [FixSource::Memory]);
    let turns = store.turns(run_b).await.unwrap();
    assert!(turns.iter().all(|t| t.rule_id.as_deref() != Some(SUID)), "no LLM turn for the rule on B: {turns:?}");
    assert!(silent.requests().is_empty(), "the LLM was not called on B");
    let f = &store.remembered_fixes().await.unwrap()[0];
    assert_eq!((f.tried, f.kept, f.failed_in_row), (1, 1, 0), "the try is counted");
    let listed = w.run(&["memory", "list", "--kind", "fixes"]).await;
    assert!(String::from_utf8_lossy(&listed.stdout).contains("kept 1 of 1"));
    assert_eq!(rescan_on(&w, "b", &[SUID.to_string()]).await, [(format!("\"{SUID}\""), "\"pass\"".to_string())]);
    both_healthy().await;
    cleanup(&w).await;
}

/// Two `temper worker` processes share the PostgreSQL queue; target b's hypervisor is reached
/// through libvirt's remote driver (`qemu+ssh://`, through the tests' loopback sshd, whose log
/// shows the logins). The worker driving target a's run is killed with SIGKILL mid-attempt; a
/// third worker takes the target over once the run's lease runs out and resumes the run. Both
/// targets end fixed and healthy, each rule tried exactly as often as the kill explains.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives both guests: tests/run.sh runs it in its fleet phase, once the other suites are done with them"]
async fn workers_share_the_queue_and_a_killed_workers_target_is_resumed_by_another() {
    let mut w = World::postgres().await;
    let sshd = std::process::Command::new("bash").arg(repo().join("tests/sshd/start.sh")).output().unwrap();
    assert!(sshd.status.success(), "tests/sshd/start.sh: {}", String::from_utf8_lossy(&sshd.stderr));
    let remote = String::from_utf8_lossy(&sshd.stdout).trim().to_string();
    let sshd_log =
        std::path::PathBuf::from(std::env::var("TEMPER_SSHD_DIR").unwrap_or_else(|_| "/var/tmp/temper-sshd".into())).join("sshd.log");
    let logins = || std::fs::read_to_string(&sshd_log).unwrap_or_default().matches("Accepted publickey for root").count();
    let logins_before = logins();
    let plain = two_targets().await;
    let (domain, port) = second();
    let config = w.dir.path().join("temper.toml");
    let toml = format!(
        "[[target]]\nname = \"a\"\n\n[[target]]\nname = \"b\"\nlibvirt_uri = \"{remote}\"\ndomain = \"{domain}\"\nssh_port = {port}\n"
    );
    std::fs::write(&config, toml).unwrap();
    w.env.push(("TEMPER_CONFIG".into(), config.to_str().unwrap().into()));
    drop(plain);
    let rules = RULES.join(",");
    let enqueue = ["fleet", "enqueue", "--fleet", "night", "--targets", "a,b", "--", "--agent", "stock", "--profile", STANDARD];
    let out = w.run(&[&enqueue[..], &["--rules", &rules]].concat()).await;
    assert!(out.status.success());

    let spawn = |name: &str| {
        let mut c = tokio::process::Command::from(w.temper());
        c.args(["worker", "--once", "--poll-secs", "1", "--name", name]).kill_on_drop(true).spawn().unwrap()
    };
    let (mut w1, mut w2) = (spawn("w1"), spawn("w2"));
    // Kill whichever worker drives target a's run once an attempt there is under way.
    let store = w.store().await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(900);
    let (victim, cut_rule, run_a) = loop {
        assert!(tokio::time::Instant::now() < deadline, "no attempt on target a within 15 minutes");
        tokio::time::sleep(Duration::from_millis(250)).await;
        let items = store.queue(Some("night")).await.unwrap();
        let Some(a) = items.iter().find(|i| i.target.name == "a" && i.run_id.is_some()) else { continue };
        let attempts = store.attempts(a.run_id.unwrap()).await.unwrap();
        if let Some(x) = attempts.iter().find(|x| matches!(x.state.as_str(), "started" | "applied")) {
            break (a.worker.clone().unwrap(), x.spec.rule_id.clone(), a.run_id.unwrap());
        }
    };
    let killed = if victim == "w1" { &mut w1 } else { &mut w2 };
    killed.start_kill().unwrap();
    let st = killed.wait().await.unwrap();
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&st), Some(9), "the victim died of SIGKILL: {st}");
    let survivor = if victim == "w1" { &mut w2 } else { &mut w1 };
    // `temper status` knows the killed worker's run is interrupted, not running.
    let status = w.run(&["status", &run_a.to_string(), "--json"]).await;
    let v: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!((v["status"].as_str(), v["driver_gone"].as_bool()), (Some("interrupted"), Some(true)), "{v}");
    // Past the run's 30 s lease: a worker with `--once` that looked earlier found nothing to take.
    tokio::time::sleep(Duration::from_secs(35)).await;
    let mut w3 = spawn("w3");
    let both = async { tokio::join!(survivor.wait(), w3.wait()) };
    let (s, t) = tokio::time::timeout(Duration::from_secs(1800), both).await.expect("the workers ended within 30 minutes");
    // A worker's code is its worst run's: 0, every rule in scope fixed (the rest out of scope).
    assert_eq!((s.unwrap().code(), t.unwrap().code()), (Some(0), Some(0)), "the survivor's and the taker's exit codes");

    let items = store.queue(Some("night")).await.unwrap();
    for i in &items {
        assert_eq!(i.state.as_str(), "done", "{} ({:?})", i.target.name, i.worker);
        let run = store.run(i.run_id.unwrap()).await.unwrap();
        let fixed = store.rules(run.id).await.unwrap().into_iter().filter(|r| r.status.as_str() == "fixed").count();
        assert_eq!(fixed, 3, "target {}: run {}", i.target.name, run.id);
        // Each rule: one kept attempt; the rule cut on target a also its interrupted one first.
        for rule in RULES {
            let tries: Vec<String> = store
                .attempts(run.id)
                .await
                .unwrap()
                .into_iter()
                .filter(|x| temper_scap::short_rule_id(&x.spec.rule_id) == rule)
                .map(|x| x.verdict.map_or(x.state.as_str().to_string(), |v| v.as_str().to_string()))
                .collect();
            let cut = i.target.name == "a" && temper_scap::short_rule_id(&cut_rule) == rule;
            let want: &[&str] = if cut { &["interrupted", "fixed"] } else { &["fixed"] };
            assert_eq!(tries, want, "target {}, rule {rule}", i.target.name);
        }
    }
    let a = items.iter().find(|i| i.target.name == "a").unwrap();
    assert!(a.tries >= 2 && a.worker.as_deref() != Some(victim.as_str()), "taken over: {a:?}");
    let resumed = store.events(a.run_id.unwrap(), None).await.unwrap().iter().any(|e| e.kind.as_str() == "resume");
    assert!(resumed, "the killed worker's run was resumed, not started again");
    killed_run_is_whole(&w, &store, run_a).await;
    let b = store.run(items.iter().find(|i| i.target.name == "b").unwrap().run_id.unwrap()).await.unwrap();
    assert!(b.target_config.unwrap().libvirt_uri.starts_with("qemu+ssh://"), "b's stored target is the remote driver's");
    assert!(logins() > logins_before, "libvirt's remote driver logged in through the loopback sshd ({sshd_log:?})");
    both_healthy().await;
    cleanup(&w).await;
}

//! Shared setup for the end-to-end tests: the real `temper` binary, the real VM, a real SQLite
//! file, and the scripted OpenAI-compatible server (the only double).
#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::{Value, json};
use temper_core::ports::{Exec, Guest, Hypervisor};
pub use temper_journal::prelude::*;
use temper_journal::{AttemptState, RunId};
use temper_mockllm::{MockLlm, Scripted};
use temper_store::Store;
use temper_target::{LibvirtConfig, LibvirtHypervisor, SshConfig, SshGuest};

pub mod ansible;
pub mod keys;
mod otlp;
#[allow(unused_imports)] // each test binary uses some of it
pub use otlp::{Attr, OtlpSink, OtlpSpan, otlp_sink};

pub const STANDARD: &str = "xccdf_org.ssgproject.content_profile_standard";
/// A rule's full XCCDF id from its short one.
pub fn full(rule: &str) -> String {
    format!("xccdf_org.ssgproject.content_rule_{rule}")
}

pub const SUID: &str = "xccdf_org.ssgproject.content_rule_sysctl_fs_suid_dumpable";
pub const SYSTEMMAP: &str = "xccdf_org.ssgproject.content_rule_file_permissions_systemmap";

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// One test's world: its own database (a SQLite file under a temp dir, or a fresh PostgreSQL
/// database).
pub struct World {
    pub dir: tempfile::TempDir,
    /// Extra environment for every `temper` this world starts.
    pub env: Vec<(String, String)>,
    db: String,
    /// Runs measure their regression cadence (two rescans in the preflight), as by default;
    /// otherwise they are given one, as `regression_every` in temper.toml would.
    measure_cadence: bool,
}

impl World {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("temper.db").to_str().unwrap().to_string();
        Self { dir, env: Vec::new(), db, measure_cadence: false }
    }

    /// The reboot proof on, with bounds that fit TCG (a boot to SSH takes about 50 s alone, twice
    /// that with one vCPU beside the other guest).
    pub fn with_reboot_proof(&mut self) {
        let proof = [("TEMPER_REBOOT_PROOF", "true"), ("TEMPER_BOOT_TIMEOUT_SECS", "300"), ("TEMPER_SHUTDOWN_GRACE_SECS", "60")];
        self.env.extend(proof.map(|(k, v)| (k.to_string(), v.to_string())));
    }

    /// This world's runs measure their cadence, as a run does by default (see `measure_cadence`).
    pub fn measuring_cadence(mut self) -> Self {
        self.measure_cadence = true;
        self
    }

    /// A world whose SQLite file is `db` (a file system of the test's choosing).
    pub fn sqlite_at(db: &str) -> Self {
        Self { db: db.into(), ..Self::new() }
    }

    /// A world whose database is a new, empty one on the test PostgreSQL server.
    pub async fn postgres() -> Self {
        let url = temper_store::testing::scratch_database(&temper_store::testing::server_url(), "temper_e2e").await.unwrap();
        Self { db: url, ..Self::new() }
    }

    /// The `db` setting: a file path, or a `postgres://` URL.
    pub fn db(&self) -> &str {
        &self.db
    }

    /// True once the database exists (a SQLite file is created by the first `temper run`).
    pub fn has_db(&self) -> bool {
        !self.db.starts_with('/') || std::path::Path::new(&self.db).exists()
    }

    /// `temper` with this world's database, the repo's skills, and the VM's defaults.
    pub fn temper(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_temper"));
        c.current_dir(self.dir.path())
            .env("TEMPER_CONFIG", self.dir.path().join("none.toml"))
            .env("TEMPER_DB", self.db())
            .env("TEMPER_SKILLS_DIR", repo().join("skills"))
            .env("TEMPER_SKILL", "debian12-anssi")
            .env("TEMPER_LOG", "warn,temper=info")
            // Each cold reboot costs about a minute under TCG: only `e2e_reboot` proves it.
            .env("TEMPER_REBOOT_PROOF", "false")
            // The disk judged from outside at each run's end: `e2e_offline` proves it.
            .env("TEMPER_CROSS_EXAMINE", "false");
        // The cadence's two rescans cost about 15 s a run under TCG, and decide nothing in a run
        // of a few rules: one check at the end either way. `e2e_plan`'s stock run measures it.
        if !self.measure_cadence {
            c.env("TEMPER_REGRESSION_EVERY", "16");
        }
        c.envs(self.env.iter().map(|(k, v)| (k, v)));
        c
    }

    pub async fn run(&self, args: &[&str]) -> Output {
        let mut c = tokio::process::Command::from(self.temper());
        let out = c.args(args).output().await.unwrap();
        eprintln!("temper {}:\n{}\n{}", args.join(" "), String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        out
    }

    pub async fn store(&self) -> Store {
        Store::open(self.db()).await.unwrap()
    }

    /// The snapshot names of this world's runs start with one of these; no other database's do.
    pub async fn snapshot_prefixes(&self) -> Vec<String> {
        let runs = self.store().await.list_runs(i64::MAX).await.unwrap_or_default();
        runs.iter().map(|r| temper_core::ralph::checkpoint_prefix(r.id, &r.started_at)).collect()
    }

    /// Deletes this world's snapshots (no one else's) and puts the VM back at its baseline.
    pub async fn cleanup(&self) {
        let hv = hypervisor();
        let mine = self.snapshot_prefixes().await;
        for s in hv.snapshot_list().await.unwrap_or_default() {
            if mine.iter().any(|p| s.starts_with(p)) {
                let _ = hv.snapshot_delete(&s).await;
            }
        }
        hv.snapshot_revert("baseline").await.unwrap();
    }
}

pub fn guest() -> SshGuest {
    SshGuest::new(SshConfig::from_env().unwrap()).unwrap()
}

pub fn hypervisor() -> LibvirtHypervisor {
    LibvirtHypervisor::new(LibvirtConfig::from_env())
}

/// The host's copy of the guest's datastream (SSG 0.1.76, Debian 12).
pub fn datastream() -> PathBuf {
    temper_journal::target::vm_dir().join("ssg/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml")
}

/// `profile` cut by `autotailor` (openscap-utils) to `keep` (full rule ids), as profile
/// `temper_<id>`, written under `dir`; returns the file's path. Every scan of it is short.
pub fn cut_profile(dir: &Path, profile: &str, id: &str, keep: &[String]) -> String {
    let out = dir.join(format!("{id}.xml"));
    let mut c = Command::new("autotailor");
    c.args(["-p", &format!("temper_{id}"), "-o"]).arg(&out);
    for r in temper_scap::read_benchmark(datastream(), Some(profile)).unwrap().selected_rules {
        if !keep.contains(&r.id) {
            c.args(["-u", &r.id]);
        }
    }
    assert!(c.arg(datastream()).arg(profile).status().expect("autotailor (openscap-utils): run bash vm/host-deps.sh").success());
    out.to_str().unwrap().to_string()
}

/// A snapshot of the baseline broken by `script` (run as root), named `temper-e2e-<tag>-` and the
/// script's hash: made once, reverted to when it exists. The VM is left running in it.
pub async fn broken_snapshot(tag: &str, script: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    script.hash(&mut h);
    let name = format!("temper-e2e-{tag}-{:08x}", h.finish() as u32);
    let hv = hypervisor();
    if hv.snapshot_exists(&name).await.unwrap() {
        hv.snapshot_revert(&name).await.unwrap();
    } else {
        hv.snapshot_revert("baseline").await.unwrap();
        guest().reconnect(Duration::from_secs(180)).await.unwrap();
        let t = std::time::Instant::now();
        // apt in the guest, under TCG: minutes, not `sh`'s 60 s.
        let out = guest().exec(Exec::script(script).timeout(Duration::from_secs(900))).await.unwrap();
        assert!(out.success(), "breaking the rules: {}\n{}", out.stdout_str(), out.stderr_str());
        hv.snapshot_create(&name, &format!("temper e2e: {tag}, broken")).await.unwrap();
        println!("broken snapshot {name} made in {:.0}s", t.elapsed().as_secs_f64());
    }
    guest().reconnect(Duration::from_secs(180)).await.unwrap();
    name
}

/// Fails loudly when the VM is not there: these tests need the real one.
pub async fn require_vm() {
    let hv = hypervisor();
    let ok = hv.snapshot_exists("baseline").await.unwrap_or(false);
    assert!(ok, "the test VM or its baseline snapshot is missing: run `bash vm/up.sh` first");
}

/// The mission-app health check, run independently of temper.
pub async fn healthy() -> bool {
    let g = guest();
    g.reconnect(Duration::from_secs(120)).await.unwrap();
    let out = g.exec(Exec::new(["/usr/local/bin/mission-healthcheck"])).await.unwrap();
    out.success() && out.stdout_str().trim().ends_with("HEALTHY")
}

/// A root command in the guest; returns (exit code, stdout).
pub async fn sh(script: &str) -> (Option<u32>, String) {
    let g = guest();
    g.reconnect(Duration::from_secs(120)).await.unwrap();
    let out = g.exec(Exec::script(script)).await.unwrap();
    (out.exit_code, out.stdout_str())
}

/// An independent rescan of one rule through `temper scan run --engine xccdf` (oscap's own
/// XCCDF evaluation and XML, not temper's run data nor its OVAL engine).
pub async fn rescan(w: &World, rule: &str) -> String {
    rescan_in(w, STANDARD, rule).await
}

/// `rescan`, in another profile.
pub async fn rescan_in(w: &World, profile: &str, rule: &str) -> String {
    rescan_with(w, rule, &["--profile", profile]).await
}

/// `rescan` with more `temper scan run` options (`--profile P`, `--tailoring-file F`).
pub async fn rescan_with(w: &World, rule: &str, extra: &[&str]) -> String {
    rescan_all_with(w, [rule], extra).await.remove(0)
}

/// What one independent `oscap xccdf eval` of all of `rules`, in the standard profile, finds for
/// each, in the order given.
pub async fn rescan_all<R: AsRef<str>>(w: &World, rules: impl IntoIterator<Item = R>) -> Vec<String> {
    rescan_all_with(w, rules, &["--profile", STANDARD]).await
}

/// `rescan_all` with more `temper scan run` options: one scan for all of `rules`.
pub async fn rescan_all_with<R: AsRef<str>>(w: &World, rules: impl IntoIterator<Item = R>, extra: &[&str]) -> Vec<String> {
    let rules: Vec<String> = rules.into_iter().map(|r| r.as_ref().to_string()).collect();
    let mut args = vec!["scan", "run", "--engine", "xccdf", "--json"];
    for r in &rules {
        args.extend(["--rule", r.as_str()]);
    }
    args.extend_from_slice(extra);
    let out = w.run(&args).await;
    assert!(out.status.success(), "scan {extra:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let found = v["rules"].as_array().unwrap();
    let result = |rule: &str| found.iter().find(|r| r["id"] == rule).map(|r| r["result"].as_str().unwrap().to_string());
    rules.iter().map(|r| result(r).unwrap_or_else(|| panic!("the scan has no result for {r}: {v}"))).collect()
}

/// Waits until a fix that creates `marker` runs in the guest, then kills temper (SIGKILL).
pub async fn kill_during_fix(w: &World, child: &mut tokio::process::Child, marker: &str) {
    let mut running = false;
    for _ in 0..900 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        if w.has_db() {
            let store = w.store().await;
            if let Some(run) = store.latest_run().await.unwrap()
                && store.attempts(run.id).await.unwrap().iter().any(|a| a.state == AttemptState::Started)
            {
                running = sh(&format!("test -e {marker}")).await.0 == Some(0);
                if running {
                    break;
                }
            }
        }
        if let Ok(Some(st)) = child.try_wait() {
            panic!("temper exited before the kill: {st}");
        }
    }
    assert!(running, "the slow fix never started");
    child.start_kill().unwrap();
    child.wait().await.unwrap();
}

/// Waits until an attempt on `rule` is under way (started or applied), then kills temper (SIGKILL).
pub async fn kill_during_attempt(w: &World, child: &mut tokio::process::Child, rule: &str) {
    let mut caught = false;
    for _ in 0..3600 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        if w.has_db() {
            let store = w.store().await;
            if let Some(run) = store.latest_run().await.unwrap() {
                let attempts = store.attempts(run.id).await.unwrap();
                caught = attempts.iter().any(|a| a.spec.rule_id == rule && matches!(a.state.as_str(), "started" | "applied"));
                if caught {
                    break;
                }
            }
        }
        if let Ok(Some(st)) = child.try_wait() {
            panic!("temper exited before the kill: {st}");
        }
    }
    assert!(caught, "no attempt on {rule} was ever under way");
    child.start_kill().unwrap();
    child.wait().await.unwrap();
}

pub fn select(rule: &str, plan: &str) -> Scripted {
    Scripted::tool_call("select_rule", json!({"rule_id": rule, "plan": plan}))
}

pub fn apply_fix(fix: &str, revert: &str, description: &str) -> Scripted {
    Scripted::tool_call("apply_fix", json!({"fix_script": fix, "revert_script": revert, "description": description}))
}

pub fn reflect(lesson: &str, banned: Option<&str>, distilled: &str) -> Scripted {
    Scripted::tool_call(
        "reflect",
        json!({"lesson": lesson, "banned": banned, "preferred": "persist sysctl settings under /etc/sysctl.d", "distilled": distilled,
               "tips": [{"text": "sysctl rules check both runtime and config", "type": "config", "mechanism": "sysctl.d drop-in"}]}),
    )
}

/// The Architect's answer when re-engaged: `CONTINUE` with a new plan, or `ESCALATE` with why.
pub fn decide(decision: &str, plan_or_reason: &str) -> Scripted {
    Scripted::tool_call("decide", json!({"decision": decision, "plan_or_reason": plan_or_reason}))
}

/// The correct fix for `sysctl_fs_suid_dumpable`, and its revert.
pub const SUID_FIX: &str =
    "set -e\nprintf 'fs.suid_dumpable = 0\\n' > /etc/sysctl.d/60-temper-suid.conf\nsysctl -q -w fs.suid_dumpable=0\n";
pub const SUID_REVERT: &str = "rm -f /etc/sysctl.d/60-temper-suid.conf\nsysctl -q --system >/dev/null\n";

pub const ASLR: &str = "xccdf_org.ssgproject.content_rule_sysctl_kernel_randomize_va_space";
/// The correct fix for `sysctl_kernel_randomize_va_space`, and its revert.
pub const ASLR_FIX: &str =
    "set -e\nprintf 'kernel.randomize_va_space = 2\\n' > /etc/sysctl.d/60-temper-aslr.conf\nsysctl -q -w kernel.randomize_va_space=2\n";
pub const ASLR_REVERT: &str = "rm -f /etc/sysctl.d/60-temper-aslr.conf\n";

pub async fn mock(script: Vec<Scripted>) -> MockLlm {
    MockLlm::start(script).await.unwrap()
}

/// `temper run` with the scripted LLM, restricted to `rules`.
pub async fn llm_run(w: &World, llm: &MockLlm, rules: &str, extra: &[&str]) -> Output {
    let url = llm.url();
    let mut args = vec![
        "run",
        "--agent",
        "llm",
        "--llm",
        url.as_str(),
        "--model",
        "scripted",
        "--profile",
        STANDARD,
        "--rules",
        rules,
        "--quiet",
        "--json",
    ];
    args.extend_from_slice(extra);
    w.run(&args).await
}

/// A run on PostgreSQL killed mid-attempt, once resumed: every try counted once (the interrupted
/// one not at all), two processes and their two leases, a wall time over both, its JSON report
/// naming the interrupted rule, and every panel of the PostgreSQL dashboard reads it.
pub async fn killed_run_is_whole(w: &World, store: &Store, run: RunId) {
    let attempts = store.attempts(run).await.unwrap();
    for r in store.rules(run).await.unwrap().iter().filter(|r| r.attempts > 0) {
        let done = attempts.iter().filter(|a| a.spec.rule_id == r.rule_id && a.state.as_str() == "done").count() as i64;
        assert_eq!(r.attempts, done, "{}: every try counted once, the interrupted one not at all", r.rule_id);
    }
    let row = store.run(run).await.unwrap();
    let summary: Value = serde_json::from_str(row.summary_json.as_deref().unwrap()).unwrap();
    assert_eq!(summary["segments"], 2, "{summary}");
    let leases = store.events(run, None).await.unwrap().into_iter().filter(|e| e.kind.as_str() == "lease_taken").count();
    assert_eq!(leases, 2, "two processes drove it, one after the other");
    let wall = summary["wall_secs"].as_f64().unwrap();
    let span = chrono::DateTime::parse_from_rfc3339(row.ended_at.as_deref().unwrap()).unwrap()
        - chrono::DateTime::parse_from_rfc3339(&row.started_at).unwrap();
    assert!(wall > 0.5 * span.num_seconds() as f64, "wall {wall}s counts both segments of a {span} run");
    assert!(span.num_milliseconds() as f64 / 1000.0 - wall >= -1.0, "wall {wall}s is no more than start to end ({span})");
    let json = report_of(w, &run.to_string(), "json", "killed-run.json").await;
    let cut = attempts.iter().find(|a| a.state.as_str() == "interrupted").expect("the interrupted attempt");
    assert!(json.contains(temper_scap::short_rule_id(&cut.spec.rule_id)));
    dashboard_reads(store, "temper-runs-postgres.json").await;
}

/// Every panel's query of the Grafana dashboard `file` (under `dashboards/`) runs on `store`.
pub async fn dashboard_reads(store: &Store, file: &str) {
    let mut queries = 0;
    let d: Value = serde_json::from_str(&std::fs::read_to_string(repo().join("dashboards").join(file)).unwrap()).unwrap();
    for p in d["panels"].as_array().unwrap() {
        for t in p["targets"].as_array().into_iter().flatten() {
            let Some(sql) = t["rawSql"].as_str() else { continue };
            let rows = store.raw_rows(sql).await;
            assert!(rows.is_ok(), "{file}, panel {}: {:?}", p["title"], rows.err());
            queries += 1;
        }
    }
    assert!(queries >= 10, "{file}: {queries} queries");
}

/// `temper plan export RUN --sign` with a key made by the real `ssh-keygen`: the plan's folder
/// under the world's, and an allowed-signers file naming the key.
pub async fn export_signed(w: &World, run: &str) -> (PathBuf, PathBuf) {
    let (key, signers) = keys::signing_key(w.dir.path(), "ops@example.com");
    let plan = w.dir.path().join("plan");
    let out = w.run(&["plan", "export", run, "-o", plan.to_str().unwrap(), "--sign", key.to_str().unwrap()]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    (plan, signers)
}

/// Writes the latest run's report in `format` under `target/test-artifacts/` and returns it.
pub async fn report(w: &World, format: &str, name: &str) -> String {
    report_of(w, "latest", format, name).await
}

/// Writes run `run`'s report (an id, or `latest`) in `format` as `name` under
/// `target/test-artifacts/` and returns it.
pub async fn report_of(w: &World, run: &str, format: &str, name: &str) -> String {
    let dir = repo().join("target/test-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let out = w.run(&["report", run, "--format", format, "-o", path.to_str().unwrap()]).await;
    assert!(out.status.success(), "report {run} {format}: {}", String::from_utf8_lossy(&out.stderr));
    std::fs::read_to_string(path).unwrap()
}

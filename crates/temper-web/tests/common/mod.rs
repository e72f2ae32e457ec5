//! A run in progress in a real SQLite store, written through the journal's traits, and the web
//! view serving it on a loopback port.
#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use temper_journal::Verdict;
pub use temper_journal::prelude::*;
use temper_journal::{AttemptId, RunId};
pub use temper_journal::{
    AttemptSpec, AttemptState, Evaluation, EventData, Findings, FixSource, NewRule, NewRun, Phase, Picked, PickedBy, RuleStatus,
    RunSummary, ScanResult,
};
use temper_journal::{RevertMethod, driver_id, now_ms};
use temper_store::Store;
use temper_web::{Server, Token, WebConfig};

mod plan;
mod progress;
mod scope;
#[allow(unused_imports)]
pub use progress::hostile_rule_id;
#[allow(unused_imports)]
pub use scope::{APPLIES, APPLIES_PASSING, NOT_APPLICABLE};

/// Markup that runs script if a page ever writes it unescaped.
pub const PWN_SCRIPT: &str = "<script>window.__pwned=1</script>";
pub const PWN_IMG: &str = "<img src=x onerror=\"window.__pwned=1\">";

pub const FIXED: &str = "xccdf_org.ssgproject.content_rule_sshd_disable_root_login";
/// Its title, reason, attempt and output are hostile.
pub const HOSTILE: &str = "xccdf_org.ssgproject.content_rule_file_owner_sshd_drop_in_config";
pub const OPEN: &str = "xccdf_org.ssgproject.content_rule_sshd_set_keepalive";
/// Not on this host: checklists cannot be made, reports can.
pub const DATASTREAM: &str = "/nonexistent/ssg-debian12-ds.xml";

/// What the final scan found wrong with `rule`: a file whose owner is `owner`, not root.
pub fn found(rule: &str, owner: &str) -> temper_scap::oval::Evidence {
    let test = serde_json::json!({
        "id": "oval:t:1", "kind": "file_test", "comment": "drop-in files are owned by root", "result": "false",
        "check": "all", "check_existence": "any_exist",
        "object": {"id": "oval:o:1", "kind": "file_object", "comment": "", "fields": [{"name": "path", "value": "/etc/ssh/sshd_config.d"}]},
        "flag": "complete",
        "states": [{"id": "oval:s:1", "kind": "file_state", "comment": "", "fields": [{"name": "user_id", "value": "0"}]}],
        "variables": [], "items_total": 1,
        "items": [{"id": "1", "kind": "file_item", "status": "exists", "result": "false", "fields": [["filepath", "/etc/ssh/sshd_config.d/evil.conf"], ["user", owner]]}],
    });
    let e = serde_json::json!({"rule": rule, "outcome": "fail", "definition": "oval:d:1", "title": "owner", "result": "false", "tests": [test]});
    serde_json::from_value(e).unwrap()
}

pub fn hostile() -> String {
    format!("{PWN_SCRIPT} {PWN_IMG} & \"quotes\"")
}

pub struct WebFixture {
    _dir: tempfile::TempDir,
    pub store: Store,
    pub run: RunId,
}

impl WebFixture {
    /// A run being driven now (its driver holds the lease): one rule fixed, one escalated with
    /// hostile text everywhere, one open and being worked on.
    pub async fn running() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("temper.db").to_str().unwrap()).await.unwrap();
        let run = store
            .create_run(&NewRun {
                skill: "debian12-anssi".into(),
                profile: "xccdf_org.ssgproject.content_profile_standard".into(),
                datastream: DATASTREAM.into(),
                content_version: Some("0.1.76".into()),
                target: "libvirt:temper-test".into(),
                agent: "stock".into(),
                options_json: "{}".into(),
                baseline: "baseline".into(),
            })
            .await
            .unwrap();
        assert!(store.claim_run(run, &driver_id(), None, now_ms(), now_ms() + 600_000).await.unwrap());
        store.set_scores(run, Some(61.25), None).await.unwrap();
        let evil = hostile();
        for (id, title) in [(FIXED, "Disable SSH root login"), (HOSTILE, evil.as_str()), (OPEN, "Set SSH keepalive")] {
            let rule = NewRule {
                rule_id: id.into(),
                title: title.into(),
                severity: "medium".into(),
                initial_result: ScanResult::Fail,
                status: RuleStatus::Pending,
                reason: None,
            };
            store.add_rule(run, &rule).await.unwrap();
        }
        let f = Self { _dir: dir, store, run };
        let fixed =
            f.attempt(FIXED, "PermitRootLogin no in a drop-in", "echo 'PermitRootLogin no' > /etc/ssh/sshd_config.d/01.conf\n").await;
        let kept = Evaluation::new(Verdict::Fixed, "the rule passes").found(Findings {
            fix_exit_code: Some(0),
            rule_result: Some(ScanResult::Pass),
            health_ok: Some(true),
            access_ok: Some(true),
            apply_ms: Some(1200),
            evaluate_ms: Some(21_000),
            ..Findings::default()
        });
        f.store.record_fix(run, fixed, &kept, FIXED, &format!("temper-r{run}-a{fixed}")).await.unwrap();
        f.store.add_rule_time(run, FIXED, 40_000).await.unwrap();

        let bad = f.attempt(HOSTILE, &evil, &format!("# {evil}\nchown root: /etc/ssh/sshd_config.d/*.conf\n")).await;
        let failed = Evaluation {
            revert_method: RevertMethod::Script,
            findings: Findings {
                fix_exit_code: Some(1),
                fix_stdout: Some(format!("{evil}\n")),
                fix_stderr: Some(format!("chown: {PWN_IMG}\n")),
                rule_result: Some(ScanResult::Fail),
                health_ok: Some(true),
                access_ok: Some(true),
                regressions: vec![FIXED.to_string()],
                revert_ms: Some(9_000),
                ..Findings::default()
            },
            ..Evaluation::new(Verdict::StillFailing, evil.clone())
        };
        f.store.finish_attempt(bad, &failed).await.unwrap();
        f.store.add_lesson(run, HOSTILE, &evil, "create the file first", "attempt 1: still failing").await.unwrap();
        f.store.set_rule_status(run, HOSTILE, RuleStatus::Escalated, Some(&format!("escalated: {evil}"))).await.unwrap();
        f.store.add_rule_time(run, HOSTILE, 20_000).await.unwrap();
        f.store.set_final_evidence(run, HOSTILE, &found(HOSTILE, &evil)).await.unwrap();

        f.store.set_phase(run, Phase::Fix, Some(OPEN)).await.unwrap();
        f.store.event(run, Some(OPEN), &EventData::Pick(Picked { plan: evil.clone(), by: PickedBy::Architect {} })).await.unwrap();
        f
    }

    async fn attempt(&self, rule: &str, description: &str, fix: &str) -> AttemptId {
        self.attempt_with(rule, description, fix, FixSource::Stock).await
    }

    /// An applied attempt on `rule` whose fix came from `source`.
    async fn attempt_from(&self, rule: &str, source: FixSource) -> AttemptId {
        self.attempt_with(rule, "from the plan", "true\n", source).await
    }

    async fn attempt_with(&self, rule: &str, description: &str, fix: &str, source: FixSource) -> AttemptId {
        let (id, _) = self
            .store
            .start_attempt(
                self.run,
                &AttemptSpec {
                    rule_id: rule.into(),
                    plan: "apply the fix".into(),
                    source,
                    replayed: false,
                    fix_script: fix.into(),
                    revert_script: format!("# undo {rule}\n"),
                    description: description.into(),
                    checkpoint: "baseline".into(),
                    evidence_before: None,
                },
            )
            .await
            .unwrap();
        self.store.set_attempt_state(id, AttemptState::Applied).await.unwrap();
        id
    }
}

/// The web view on 127.0.0.1, a free port, polling the journal every 100 ms.
pub struct WebServer {
    pub base: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for WebServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub async fn serve(store: &Store, token: Option<Token>) -> WebServer {
    let mut config = WebConfig::new("127.0.0.1:0".parse().unwrap(), token, PathBuf::from("/nonexistent"));
    config.poll = Duration::from_millis(100);
    let journal: Arc<dyn Journal> = Arc::new(store.clone());
    let server = Server::bind(journal, config).await.unwrap();
    let base = format!("http://{}", server.local_addr().unwrap());
    let task = tokio::spawn(async move { server.run().await.unwrap() });
    WebServer { base, task }
}

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// `target/test-artifacts`, created.
pub fn artifacts() -> PathBuf {
    let target = std::env::var("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|_| repo_root().join("target"));
    let dir = target.join("test-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const SETUP: &str = "run bash tests/report/setup.sh";

/// node, Chromium and puppeteer-core, or a failed test that says how to get them.
pub fn tools() -> (PathBuf, PathBuf) {
    let which = |name: &str| {
        let out = std::process::Command::new("which").arg(name).output().ok().filter(|o| o.status.success())?;
        Some(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
    };
    let node = which("node").unwrap_or_else(|| panic!("node is not installed: {SETUP}"));
    let chromium = which("chromium").unwrap_or_else(|| panic!("chromium is not installed: {SETUP}"));
    let modules = repo_root().join("tests/report/node_modules/puppeteer-core");
    assert!(modules.is_dir(), "{} is missing: {SETUP}", modules.display());
    (node, chromium)
}

/// Runs `tests/web/SCRIPT` under node against Chromium with `args`, within 90 s, and returns
/// the JSON it prints (printed again, pretty, for the test's log).
pub async fn puppeteer(script: &str, args: &[&str]) -> serde_json::Value {
    let (node, chromium) = tools();
    let run = tokio::process::Command::new(node)
        .arg(repo_root().join("tests/web").join(script))
        .args(args)
        .env("CHROMIUM", chromium)
        .kill_on_drop(true)
        .output();
    let done = tokio::time::timeout(Duration::from_secs(90), run).await.unwrap_or_else(|_| panic!("{script} ends")).expect("node starts");
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(done.status.success(), "{script} failed: {}\n{stderr}", done.status);
    let report: serde_json::Value = serde_json::from_slice(&done.stdout).unwrap_or_else(|e| panic!("{script} prints JSON ({e}): {stderr}"));
    println!("{}", serde_json::to_string_pretty(&report).unwrap());
    report
}

#![allow(dead_code)]
//! A finished loop run's plan, exported as `temper plan export` writes it, and the tools the plan
//! tests run it with (`loop_plan`, `loop_plan_seal`).
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::json;
use temper_journal::plan::{Plan, Terms, sha256_file};
use temper_journal::{RuleStatus, RunId};
use temper_mockllm::{MockLlm, Scripted};

use crate::sim::*;

/// The rules the LLM fixes, in the order it picks them; the second fix exits 1 and is kept.
pub const RULES: [&str; 3] = ["sysctl_fs_suid_dumpable", "sshd_set_keepalive", "file_permissions_systemmap"];

/// An LLM-written fix that appends `word` to `log`; its `# sim` lines say what it does to the
/// modelled guest.
pub fn fix(log: &Path, word: &str, rule: &str, exit: u32) -> String {
    let exit_line = if exit == 0 { String::new() } else { format!("exit {exit}\n# sim exit {exit}\n") };
    format!("echo {word} >> '{}'\n{exit_line}# sim pass {rule}\n", log.display())
}

/// A finished LLM run over `RULES` whose plan is exported to `dir/plan`; its fixes write to `dir/log`.
pub struct Exported {
    pub sim: Sim,
    pub run: RunId,
    pub plan: Plan,
    pub dir: PathBuf,
    pub log: PathBuf,
    pub _tmp: tempfile::TempDir,
}

pub async fn exported(name: &str) -> Exported {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("log");
    let mut sim = Sim::new(name).await;
    sim.settings.rules = RULES.map(String::from).to_vec();
    let mut script = Vec::new();
    for (i, (rule, word)) in RULES.iter().zip(["one", "two", "three"]).enumerate() {
        script.push(Scripted::tool_call("select_rule", json!({"rule_id": full(rule), "plan": "a plan"})));
        let body = fix(&log, word, rule, if i == 1 { 1 } else { 0 });
        script.push(Scripted::tool_call("apply_fix", json!({"fix_script": body, "revert_script": "true\n", "description": word})));
    }
    let llm = MockLlm::start(script).await.unwrap();
    let run = sim.new_run("llm").await;
    let summary = sim.llm(run, &llm.url()).await.unwrap();
    assert_eq!(llm.remaining(), 0, "every scripted reply was asked for");
    assert_eq!(summary.rebooted, Some(true), "{summary:?}");
    for r in RULES {
        assert_eq!(sim.rule(run, r).await.status, RuleStatus::Fixed, "{r}");
    }
    let data = temper_report::load(sim.store.as_ref(), run).await.unwrap();
    let plan = temper_journal::plan::build(data.records(), Some(content()), Some(sha256_file(&datastream()).unwrap())).unwrap();
    let dir = tmp.path().join("plan");
    temper_report::plan::write(&plan, &dir, &Terms::default()).unwrap();
    Exported { sim, run, plan, dir, log, _tmp: tmp }
}

pub fn text(out: &Output) -> (String, String) {
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

pub fn ansible(program: &str, args: &[&str], dir: &Path) -> Output {
    let out = Command::new(program).args(args).current_dir(dir).env("ANSIBLE_NOCOLOR", "1").env("NO_COLOR", "1").output();
    out.unwrap_or_else(|e| panic!("{program}: {e}: run `bash tests/plan/setup.sh` (tests/run.sh does)"))
}

/// `temper ARGS` with its database in `work`, on a target that does not exist (`default`,
/// domain `temper-no-such-domain`): its output, and the database's path.
pub fn temper(work: &Path, args: &[&str]) -> (Output, PathBuf) {
    let db = work.join("temper.db");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new(env!("CARGO_BIN_EXE_temper"))
        .args(args)
        .env("TEMPER_CONFIG", work.join("none.toml"))
        .env("TEMPER_DB", &db)
        .env("TEMPER_SKILLS_DIR", repo.join("skills"))
        .env("TEMPER_SKILL", "debian12-anssi")
        .env("TEMPER_CONTENT_DIR", datastream().parent().unwrap())
        .env("TEMPER_DOMAIN", "temper-no-such-domain")
        .env("TEMPER_SSH_PORT", "1")
        .env("TEMPER_PLAN_KEY_FILE", work.join("state/plan_ed25519"))
        .output()
        .unwrap();
    (out, db)
}

/// `temper run --agent stock --plan DIR ARGS`, as [`temper`] runs it.
pub fn temper_run(plan: &Path, work: &Path, args: &[&str]) -> (Output, PathBuf) {
    temper(work, &[&["run", "--agent", "stock", "--quiet", "--plan", plan.to_str().unwrap()], args].concat())
}

/// Copies a plan's folder (files and one level of folders).
pub fn copy_dir(from: &Path, to: &Path) {
    for entry in walk(from) {
        let rel = entry.strip_prefix(from).unwrap();
        std::fs::create_dir_all(to.join(rel).parent().unwrap()).unwrap();
        std::fs::copy(&entry, to.join(rel)).unwrap();
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() { out.extend(walk(&p)) } else { out.push(p) }
    }
    out
}

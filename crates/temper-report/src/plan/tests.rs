//! The plan's folder as `write` makes it, run for real: `replay.sh` with bash and the playbook
//! with `ansible-playbook` against this host (`-c local`), each step writing a word to a log in a
//! throwaway folder. Each refuses, with nothing run, a folder that holds what the plan does not
//! list (a `group_vars/all.yml` setting `temper_unsigned`, a `verify.sh` that exits 0, an
//! `ansible.cfg`, a link, an empty plugin folder), a plan past its expiry and a machine the plan
//! does not name; and no text from a rule id, a title or a description runs anywhere.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use chrono::{Duration, Utc};
use temper_journal::RunId;
use temper_journal::plan::{ContentRef, Header, PlanStep, Script, ScriptKind, SourceRun, Terms};

use super::*;

/// A plan of two steps, each appending its word to `log`, written into `tmp/plan` with `terms`,
/// and a `SHA256SUMS` beside it (this crate does not seal: `temper_core::plan::seal` does).
struct Written {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    log: PathBuf,
    /// A file only a hostile text would make.
    owned: PathBuf,
}

fn step(n: usize, rule: &str, fix: &str) -> PlanStep {
    PlanStep {
        n,
        rule: rule.to_string(),
        title: format!("step {n}"),
        source: temper_journal::FixSource::Stock,
        attempt: temper_journal::AttemptNo::FIRST,
        description: String::new(),
        fix: Script::new(n, rule, ScriptKind::Fix, fix),
        revert: Script::new(n, rule, ScriptKind::Revert, "true\n"),
        exit_code: Some(0),
        accepted_nonzero_exit: false,
        needs_reboot: false,
        one_way: None,
        derived: false,
        evidence_before: None,
        evidence_after: None,
    }
}

fn plan(steps: Vec<PlanStep>) -> Plan {
    let header = Header {
        skill: "s".into(),
        profile: "xccdf_org.ssgproject.content_profile_standard".into(),
        tailoring: None,
        content: ContentRef { datastream: "ds.xml".into(), version: "0.1.76".into(), sha256: "a".repeat(64) },
        source: SourceRun {
            target: "t".into(),
            run: RunId::new(1).unwrap(),
            started_at: "x".into(),
            ended_at: None,
            regression_every: None,
        },
        temper_version: "0".into(),
        reboot_proven: true,
        exported_at: "x".into(),
    };
    Plan { version: temper_journal::plan::VERSION, header, steps }
}

fn written(terms: &Terms, rules: [&str; 2]) -> Written {
    written_with(terms, rules, |_, _| {})
}

/// As [`written`], each step changed by `edit` (given the file only hostile text would make).
fn written_with(terms: &Terms, rules: [&str; 2], edit: impl Fn(&mut PlanStep, &Path)) -> Written {
    let tmp = tempfile::tempdir().unwrap();
    let (log, owned) = (tmp.path().join("log"), tmp.path().join("owned"));
    let mut steps: Vec<PlanStep> = rules
        .iter()
        .zip(["one", "two"])
        .enumerate()
        .map(|(i, (rule, word))| {
            step(i + 1, &format!("xccdf_org.ssgproject.content_rule_{rule}"), &format!("echo {word} >> '{}'\n", log.display()))
        })
        .collect();
    steps.iter_mut().for_each(|s| edit(s, &owned));
    let dir = tmp.path().join("plan");
    write(&plan(steps), &dir, terms).unwrap();
    let sums = Command::new("bash")
        .arg("-c")
        .arg("find . -type f -printf '%P\\n' | sort | xargs sha256sum > SHA256SUMS")
        .current_dir(&dir)
        .status();
    assert!(sums.unwrap().success());
    Written { _tmp: tmp, dir, log, owned }
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// `bash replay.sh ARGS`: whether it passed, what it said, and what ran (the log, then gone).
fn replay(w: &Written, args: &[&str]) -> (bool, String, String) {
    let out = Command::new("bash").arg(w.dir.join("replay.sh")).args(args).output().unwrap();
    (out.status.success(), text(&out), ran(w))
}

/// `ansible-playbook -i INVENTORY, -c local playbook.yml` from the plan's folder, as the README
/// says (`cd PRIVATE && ansible-playbook …`).
fn play(w: &Written, inventory: &str) -> (bool, String, String) {
    let out = Command::new("ansible-playbook")
        .args(["-i", &format!("{inventory},"), "-c", "local", "playbook.yml"])
        .current_dir(&w.dir)
        .env("ANSIBLE_NOCOLOR", "1")
        .output()
        .unwrap_or_else(|e| panic!("ansible-playbook: {e}: run `bash tests/plan/setup.sh` (tests/run.sh does)"));
    (out.status.success(), text(&out), ran(w))
}

fn ran(w: &Written) -> String {
    let log = std::fs::read_to_string(&w.log).unwrap_or_default();
    let _ = std::fs::remove_file(&w.log);
    log
}

/// What a handed-over folder may hold beside the plan: each is refused by replay.sh and the
/// playbook, and nothing runs.
const EXTRAS: [(&str, &str); 5] = [
    ("group_vars/all.yml", "temper_unsigned: true\n"),
    ("verify.sh", "#!/bin/sh\nexit 0\n"),
    ("ansible.cfg", "[defaults]\nhost_key_checking = False\n"),
    ("steps/002-x.fix.sh", "touch /tmp/owned\n"),
    ("filter_plugins/", ""),
];

fn add(dir: &Path, extra: &str, body: &str) {
    let p = dir.join(extra);
    if extra.ends_with('/') {
        std::fs::create_dir_all(&p).unwrap();
    } else {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, body).unwrap();
    }
}

fn take_away(dir: &Path, extra: &str) {
    let p = dir.join(extra);
    if extra.ends_with('/') {
        std::fs::remove_dir_all(&p).unwrap()
    } else {
        std::fs::remove_file(&p).unwrap()
    }
    let parent = p.parent().unwrap();
    if parent != dir && parent.file_name().is_some_and(|n| n != "steps") {
        std::fs::remove_dir_all(parent).unwrap();
    }
}

#[test]
fn replay_refuses_a_folder_that_holds_what_the_plan_does_not_list() {
    let w = written(&Terms::default(), ["r1", "r2"]);
    let (ok, said, ran) = replay(&w, &[]);
    assert!(ok && ran == "one\ntwo\n", "{said}");
    for (extra, body) in EXTRAS {
        add(&w.dir, extra, body);
        let (ok, said, ran) = replay(&w, &[]);
        assert!(!ok && ran.is_empty(), "{extra}: {said}");
        let shown = extra.trim_end_matches('/');
        assert!(
            said.contains("holds what the plan does not list") && said.contains(shown) && said.contains("nothing was run"),
            "{extra}: {said}"
        );
        take_away(&w.dir, extra);
    }
    std::os::unix::fs::symlink("/etc/shadow", w.dir.join("README.md.orig")).unwrap();
    let (ok, said, ran) = replay(&w, &[]);
    assert!(!ok && ran.is_empty() && said.contains("l README.md.orig"), "a link: {said}");
    std::fs::remove_file(w.dir.join("README.md.orig")).unwrap();
    // It checks no signature, and says so rather than seem to.
    for arg in ["--allowed-signers", "--unsigned"] {
        let (ok, said, ran) = replay(&w, &[arg, "/etc/temper/allowed_signers"]);
        assert!(!ok && ran.is_empty() && said.contains("checks no signature") && said.contains("temper plan unpack"), "{said}");
    }
    let (ok, said, ran) = replay(&w, &[]);
    assert!(ok && ran == "one\ntwo\n", "and clean again: {said}");
}

#[test]
fn replay_refuses_a_plan_past_its_expiry_or_for_another_machine() {
    let machine = String::from_utf8(Command::new("uname").arg("-n").output().unwrap().stdout).unwrap().trim().to_string();
    let cases = [
        (Terms { expires: Some(Utc::now() - Duration::minutes(1)), ..Terms::default() }, "the plan expired at"),
        (
            Terms { targets: vec!["web1".into(), "web2".into()], ..Terms::default() },
            "the plan is for the targets web1, web2, not this machine",
        ),
        (Terms { fleet: Some("night".into()), ..Terms::default() }, "the plan is for the runs of fleet night"),
    ];
    for (terms, why) in cases {
        let w = written(&terms, ["r1", "r2"]);
        let (ok, said, ran) = replay(&w, &[]);
        assert!(!ok && ran.is_empty() && said.contains(why) && said.contains("nothing was run"), "{why}: {said}");
    }
    let ok_terms = Terms { expires: Some(Utc::now() + Duration::days(1)), targets: vec!["web1".into(), machine.clone()], fleet: None };
    let w = written(&ok_terms, ["r1", "r2"]);
    let (ok, said, ran) = replay(&w, &[]);
    assert!(ok && ran == "one\ntwo\n", "for {machine}, not expired: {said}");
}

#[test]
fn the_playbook_refuses_a_folder_that_holds_what_the_plan_does_not_list() {
    let w = written(&Terms::default(), ["r1", "r2"]);
    let (ok, said, ran) = play(&w, "localhost");
    assert!(ok && ran == "one\ntwo\n", "{said}");
    for (extra, body) in EXTRAS {
        add(&w.dir, extra, body);
        let (ok, said, ran) = play(&w, "localhost");
        assert!(!ok && ran.is_empty(), "{extra}: {said}");
        let shown = extra.trim_end_matches('/');
        assert!(
            said.contains("holds what the plan does not list") && said.contains(shown) && said.contains("nothing was run"),
            "{extra}: {said}"
        );
        take_away(&w.dir, extra);
    }
    let (ok, said, ran) = play(&w, "localhost");
    assert!(ok && ran == "one\ntwo\n", "and clean again: {said}");
}

#[test]
fn the_playbook_refuses_a_plan_past_its_expiry_or_for_another_host() {
    let cases = [
        (Terms { expires: Some(Utc::now() - Duration::minutes(1)), ..Terms::default() }, "the plan expired at"),
        (Terms { targets: vec!["web1".into()], ..Terms::default() }, "the plan is for the targets web1, not localhost"),
        (Terms { fleet: Some("night".into()), ..Terms::default() }, "the plan is for the runs of fleet night"),
    ];
    for (terms, why) in cases {
        let w = written(&terms, ["r1", "r2"]);
        let (ok, said, ran) = play(&w, "localhost");
        assert!(!ok && ran.is_empty() && said.contains(why) && said.contains("nothing was run"), "{why}: {said}");
    }
    let w = written(&Terms { expires: Some(Utc::now() + Duration::days(1)), targets: vec!["localhost".into()], fleet: None }, ["r1", "r2"]);
    let (ok, said, ran) = play(&w, "localhost");
    assert!(ok && ran == "one\ntwo\n", "{said}");
}

/// A rule id, a title or a description from the guest reaches `replay.sh` and the playbook as
/// text: bash and Ansible (which evaluates Jinja in task names and tags on the controller) run
/// none of it. The writers' own callers are checked here, not only the helpers they call.
#[test]
fn no_text_from_a_step_runs_in_bash_or_ansible() {
    let hostile = |owned: &Path| {
        let o = owned.display();
        (format!("{{{{ lookup('ansible.builtin.pipe', 'touch {o}') }}}}"), format!("$(touch {o})'`touch {o}`"))
    };
    let w = written_with(&Terms::default(), ["x", "y"], |s, owned| {
        let (jinja, shell) = hostile(owned);
        s.rule = format!("{}{}", s.rule, if s.n == 1 { &jinja } else { &shell });
        s.title = format!("a title\ntouch {}\n{jinja}", owned.display());
        s.description = format!("{shell}\n{jinja}");
    });
    let (ok, said, ran) = play(&w, "localhost");
    assert!(ok && ran == "one\ntwo\n", "{said}");
    assert!(!w.owned.exists(), "the playbook ran text from a step: {said}");
    let (ok, said, ran) = replay(&w, &[]);
    assert!(ok && ran == "one\ntwo\n", "{said}");
    assert!(!w.owned.exists(), "replay.sh ran text from a step: {said}");
}

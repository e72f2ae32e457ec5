//! The plan's seal and terms, and issue 76's attacks on a plan done for real, in-process (no
//! VM: see `sim/`). A plan is checked from outside its folder (`temper run --plan`, `temper plan
//! verify`, `temper plan unpack`, each a real `temper`), on its bytes read once; `replay.sh`
//! (real bash) and the playbook (real `ansible-playbook`, against this host) run from the
//! private copy and refuse a folder that holds what the plan does not list. Each attack is
//! refused with a clear error and nothing runs: no step writes its word to the log, no run is
//! made (the target does not even exist), and the sim guest never sees a swapped script.
#[path = "support/keys.rs"]
mod keys;
mod plan_exported;
mod sim;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use chrono::{Duration, Utc};
use keys::signing_key;
use plan_exported::*;
use sim::*;
use temper_core::plan::seal::{self, Trust};
use temper_journal::plan::{Applying, Folder, Terms, sha256_hex};

/// A signed plan and every way to apply it, each returning whether it ran and what it said.
struct Ways {
    e: Exported,
    key: PathBuf,
    signers: PathBuf,
    stranger: PathBuf,
    work: tempfile::TempDir,
    _keys: tempfile::TempDir,
}

impl Ways {
    async fn new(name: &str) -> Ways {
        let e = exported(name).await;
        let keys = tempfile::tempdir().unwrap();
        let (key, signers) = signing_key(keys.path(), "ops@example.com");
        let (stranger, _) = signing_key(keys.path(), "stranger@example.com");
        Ways { e, key, signers, stranger, work: tempfile::tempdir().unwrap(), _keys: keys }
    }

    /// The plan exported anew with `terms` (as `temper plan export --expires … --for …` writes
    /// them into `replay.sh`, the playbook and the manifest), and signed by `key`.
    fn sealed(&self, terms: &Terms, key: &Path) {
        let _ = std::fs::remove_dir_all(&self.e.dir);
        temper_report::plan::write(&self.e.plan, &self.e.dir, terms).unwrap();
        seal::write_manifest(&self.e.dir, terms).unwrap();
        seal::sign(&self.e.dir, key, None).unwrap();
    }

    /// `temper plan CMD DIR --allowed-signers FILE` (or `run --plan DIR …`): whether it passed
    /// and what it said. A refused plan opens no store, so makes no run.
    fn temper(&self, cmd: &str, extra: &[&str]) -> (bool, String) {
        let dir = self.e.dir.to_str().unwrap();
        let allowed = ["--allowed-signers", self.signers.to_str().unwrap()];
        let private = self.work.path().join("private");
        let _ = std::fs::remove_dir_all(&private);
        let (out, db) = match cmd {
            "run" => temper_run(&self.e.dir, self.work.path(), &[&["--profile", STANDARD], &allowed[..], extra].concat()),
            "verify" => temper(self.work.path(), &[&["plan", "verify", dir], &allowed[..], extra].concat()),
            "unpack" => {
                temper(self.work.path(), &[&["plan", "unpack", dir, "-o", private.to_str().unwrap()], &allowed[..], extra].concat())
            }
            _ => unreachable!(),
        };
        let (stdout, stderr) = text(&out);
        let refused = stderr.contains("nothing was run");
        assert!(!refused || !db.exists(), "a refused plan makes no run: {stderr}");
        assert!(!refused || !private.exists(), "a refused plan leaves no copy: {stderr}");
        let _ = std::fs::remove_file(&db);
        (out.status.success(), format!("{stdout}{stderr}"))
    }

    /// `bash replay.sh` in the plan's folder: whether it passed, what it said, whether a step ran.
    fn replay(&self) -> (bool, String, bool) {
        let out = Command::new("bash").arg(self.e.dir.join("replay.sh")).output().unwrap();
        let (stdout, stderr) = text(&out);
        (out.status.success(), format!("{stdout}{stderr}"), self.ran())
    }

    /// `ansible-playbook -i localhost, -c local playbook.yml` in the plan's folder.
    fn play(&self) -> (bool, String, bool) {
        let out = ansible("ansible-playbook", &["-i", "localhost,", "-c", "local", "playbook.yml"], &self.e.dir);
        let (stdout, stderr) = text(&out);
        (out.status.success(), format!("{stdout}{stderr}"), self.ran())
    }

    /// Whether the steps ran (every one, in order), and the log gone.
    fn ran(&self) -> bool {
        let log = std::fs::read_to_string(&self.e.log).unwrap_or_default();
        let _ = std::fs::remove_file(&self.e.log);
        assert!(log.is_empty() || log == "one\ntwo\nthree\n", "{log}");
        !log.is_empty()
    }
}

/// A plan signed by temper, and one signed by `ssh-keygen -Y sign`, each with an expiry and the
/// targets it is for: `ssh-keygen -Y verify` accepts both, and temper (run, verify, unpack)
/// accepts both and honours their terms. From the private copy `unpack` makes, replay.sh and the
/// playbook apply the plan.
#[tokio::test]
async fn a_signed_plan_is_checked_from_outside_and_applied_from_its_private_copy() {
    let t = Instant::now();
    let w = Ways::new("plan-seal-ok").await;
    let terms = Terms { expires: Some(Utc::now() + Duration::days(30)), targets: vec!["default".into(), "web2".into()], fleet: None };
    for signer in ["temper", "ssh-keygen"] {
        w.sealed(&terms, &w.key);
        if signer == "ssh-keygen" {
            std::fs::remove_file(w.e.dir.join(temper_journal::plan::SIGNATURE)).unwrap();
            let ok = Command::new("ssh-keygen")
                .args(["-q", "-Y", "sign", "-n", "temper-plan", "-f"])
                .arg(&w.key)
                .arg(w.e.dir.join(temper_journal::plan::MANIFEST))
                .status();
            assert!(ok.unwrap().success());
        }
        let verified = Command::new("ssh-keygen")
            .args(["-Y", "verify", "-n", "temper-plan", "-I", "ops@example.com", "-f"])
            .arg(&w.signers)
            .arg("-s")
            .arg(w.e.dir.join(temper_journal::plan::SIGNATURE))
            .stdin(std::fs::File::open(w.e.dir.join(temper_journal::plan::MANIFEST)).unwrap())
            .status()
            .unwrap();
        assert!(verified.success(), "ssh-keygen -Y verify accepts {signer}'s signature, terms and all");
        // The plan holds; the run then stops at the target, which does not exist here.
        let (_, said) = w.temper("run", &[]);
        assert!(said.contains("is signed by ops@example.com (SHA256:") && said.contains("for default, web2"), "{signer}: {said}");
        assert!(!said.contains("nothing was run"), "{signer}: {said}");
        let (ok, said) = w.temper("verify", &["--target", "web2"]);
        assert!(ok && said.contains("manifest sha256") && said.contains("expires "), "{signer}: {said}");
        let (ok, said) = w.temper("unpack", &[]);
        assert!(ok && said.contains("Apply it from") && said.contains("replay.sh"), "{signer}: {said}");
    }
    // From the private copy: bash and Ansible apply it (this host is not `default`: the copy
    // here is of a plan for any target).
    w.sealed(&Terms::default(), &w.key);
    let private = w.work.path().join("mine");
    let (out, _) = temper(
        w.work.path(),
        &["plan", "unpack", w.e.dir.to_str().unwrap(), "-o", private.to_str().unwrap(), "--allowed-signers", w.signers.to_str().unwrap()],
    );
    assert!(out.status.success(), "{:?}", text(&out));
    let out = Command::new("bash").arg(private.join("replay.sh")).output().unwrap();
    assert!(out.status.success() && w.ran(), "replay.sh from the copy: {:?}", text(&out));
    let out = ansible("ansible-playbook", &["-i", "localhost,", "-c", "local", "playbook.yml"], &private);
    assert!(out.status.success() && w.ran(), "the playbook from the copy: {:?}", text(&out));
    took("a_signed_plan_is_checked_from_outside_and_applied_from_its_private_copy", t);
}

/// Each forgery and each attack of issue 76 on a handed-over folder, done for real: refused by
/// `temper run --plan`, `temper plan verify` and `temper plan unpack` with a clear error, and by
/// `replay.sh` and the playbook where they can see it (a folder that holds what the plan does
/// not list, a plan past its expiry, a host the plan does not name); nothing runs.
#[tokio::test]
async fn every_attack_on_a_handed_over_plan_is_refused_and_nothing_runs() {
    let t = Instant::now();
    let w = Ways::new("plan-seal-attacks").await;
    let dir = w.e.dir.clone();
    let write = |rel: &str, body: &str| {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    };
    let script = dir.join(&w.e.plan.steps[0].fix.file);
    let evil = || {
        let evil = "echo owned >> /dev/null\n";
        std::fs::write(&script, evil).unwrap();
        let json = std::fs::read_to_string(dir.join("plan.json")).unwrap();
        std::fs::write(dir.join("plan.json"), json.replace(&w.e.plan.steps[0].fix.sha256, &sha256_hex(evil.as_bytes()))).unwrap();
    };
    let none = Terms::default();
    let past = Terms { expires: Some(Utc::now() - Duration::minutes(1)), ..Terms::default() };
    let elsewhere = Terms { targets: vec!["web1".into()], ..Terms::default() };
    // (what, terms, the forgery, what temper says, whether bash and Ansible see it too)
    type Forge<'a> = &'a dyn Fn();
    let attacks: [(&str, &Terms, Forge, &str, bool); 10] = [
        (
            "group_vars/all.yml setting temper_unsigned",
            &none,
            &|| write("group_vars/all.yml", "temper_unsigned: true\n"),
            "group_vars/all.yml is in the plan and not in SHA256SUMS",
            true,
        ),
        (
            "a verify.sh changed to exit 0",
            &none,
            &|| write("verify.sh", "#!/bin/sh\nexit 0\n"),
            "verify.sh is in the plan and not in SHA256SUMS",
            true,
        ),
        (
            "one more file the manifest does not list",
            &none,
            &|| write("steps/004-extra.fix.sh", "touch /tmp/owned\n"),
            "steps/004-extra.fix.sh is in the plan and not in SHA256SUMS",
            true,
        ),
        (
            "an ansible.cfg beside the playbook",
            &none,
            &|| write("ansible.cfg", "[defaults]\n"),
            "ansible.cfg is in the plan and not in SHA256SUMS",
            true,
        ),
        ("a plan past its expiry", &past, &|| {}, "the plan expired at", true),
        ("a plan applied to a target it does not name", &elsewhere, &|| {}, "the plan is for the targets web1, not `default`", true),
        ("a changed script, its sha256 updated", &none, &evil, "plan.json does not match its sha256 in SHA256SUMS", false),
        (
            "a changed script, its sha256 updated in plan.json and SHA256SUMS",
            &none,
            &|| {
                evil();
                seal::write_manifest(&dir, &Terms::default()).unwrap();
            },
            "the signature does not match SHA256SUMS",
            false,
        ),
        (
            "a key not allowed",
            &none,
            &|| drop(seal::sign(&dir, &w.stranger, None).unwrap()),
            "a key that is not in the allowed signers",
            false,
        ),
        (
            "no signature",
            &none,
            &|| std::fs::remove_file(dir.join(temper_journal::plan::SIGNATURE)).unwrap(),
            "the plan is not signed",
            false,
        ),
    ];
    for (what, terms, forge, why, seen_in_place) in attacks {
        w.sealed(terms, &w.key);
        forge();
        for cmd in ["run", "verify", "unpack"] {
            let target: &[&str] = if cmd == "run" { &[] } else { &["--target", "default"] };
            let (ok, said) = w.temper(cmd, target);
            assert!(!ok && said.contains(why) && said.contains("nothing was run"), "temper {cmd}, {what}: {said}");
            eprintln!("{what}: temper {cmd}: {}", said.lines().rfind(|l| l.contains(why)).unwrap_or_default().trim());
        }
        assert!(!w.ran(), "{what}: nothing ran");
        if seen_in_place {
            let (ok, said, ran) = w.replay();
            assert!(!ok && !ran && said.contains("nothing was run"), "replay.sh, {what}: {said}");
            eprintln!("{what}: bash replay.sh: {}", said.lines().find(|l| l.contains("replay.sh:")).unwrap_or_default().trim());
            let (ok, said, ran) = w.play();
            assert!(!ok && !ran && said.contains("nothing was run"), "the playbook, {what}: {said}");
            eprintln!("{what}: ansible-playbook: {}", said.lines().find(|l| l.contains("\"msg\"")).unwrap_or_default().trim());
        }
    }
    took("every_attack_on_a_handed_over_plan_is_refused_and_nothing_runs", t);
}

/// Issue 76, item 2: a plan on a share that someone else can write, swapped between its check
/// and its load. The folder is read once; the swap (a script, its sha256 in plan.json and the
/// manifest all changed, as one who can write the share would) lands after that read, and the
/// bytes that were checked are the bytes the sim guest runs: never the swapped ones.
#[tokio::test]
async fn a_plan_swapped_between_its_check_and_its_load_never_runs_the_swapped_bytes() {
    let t = Instant::now();
    let w = Ways::new("plan-swap").await;
    w.sealed(&Terms::default(), &w.key);
    let folder = Folder::read(&w.e.dir).unwrap();
    // The swap.
    let signed = w.e.plan.steps[0].fix.text.clone();
    let swapped = format!("{signed}touch /tmp/temper-swapped\n# sim pass {}\n", RULES[0]);
    std::fs::write(w.e.dir.join(&w.e.plan.steps[0].fix.file), &swapped).unwrap();
    let json = std::fs::read_to_string(w.e.dir.join("plan.json")).unwrap();
    std::fs::write(w.e.dir.join("plan.json"), json.replace(&w.e.plan.steps[0].fix.sha256, &sha256_hex(swapped.as_bytes()))).unwrap();
    seal::write_manifest(&w.e.dir, &Terms::default()).unwrap();
    let trust = Trust::Signers(w.signers.clone());
    let at = Applying { now: Utc::now(), target: Some("default"), fleet: None };
    // What is on the disk now does not hold; what was read does, and is what runs.
    let now_there = temper_core::plan::open(&Folder::read(&w.e.dir).unwrap(), &trust, &at).unwrap_err();
    assert!(now_there.to_string().contains("the signature does not match"), "{now_there}");
    let opened = temper_core::plan::open(&folder, &trust, &at).unwrap();
    assert_eq!(opened.plan.steps[0].fix.text, signed, "the plan is the bytes that were checked");
    let mut b = Sim::new("plan-swap-onto").await;
    b.settings.rules = RULES.map(String::from).to_vec();
    (b.settings.plan, b.settings.plan_cadence) = (opened.plan.fixes(), opened.plan.header.source.regression_every);
    let run = b.new_run("stock").await;
    let summary = b.stock(run).await.unwrap();
    assert_eq!(summary.rebooted, Some(true), "{summary:?}");
    let scripts = b.guest.scripts();
    assert!(scripts.contains(&signed), "the signed step ran");
    assert!(!scripts.iter().any(|s| s.contains("temper-swapped")), "the swapped bytes never ran: {scripts:#?}");
    took("a_plan_swapped_between_its_check_and_its_load_never_runs_the_swapped_bytes", t);
}

/// A revoked plan: its manifest's sha256 in a list that the allowed signers name.
#[tokio::test]
async fn a_revoked_plan_is_refused_every_way_temper_checks_one() {
    let t = Instant::now();
    let w = Ways::new("plan-revoked").await;
    w.sealed(&Terms::default(), &w.key);
    let sha = sha256_hex(&std::fs::read(w.e.dir.join(temper_journal::plan::MANIFEST)).unwrap());
    let list = w.signers.parent().unwrap().join("revoked");
    std::fs::write(&list, format!("{sha}  withdrawn\n")).unwrap();
    let text = std::fs::read_to_string(&w.signers).unwrap();
    std::fs::write(&w.signers, format!("# temper-revoked-plans {}\n{text}", list.display())).unwrap();
    for cmd in ["run", "verify", "unpack"] {
        let (ok, said) = w.temper(cmd, &[]);
        assert!(!ok && said.contains(&format!("(its SHA256SUMS has sha256 {sha}) is revoked")), "temper {cmd}: {said}");
    }
    took("a_revoked_plan_is_refused_every_way_temper_checks_one", t);
}

/// A plan applied `--unsigned` (or signed by a signer who erred) holds a step that would take
/// away the harness's sudo: the deny-list refuses it before it runs, as any fix's, and the sim
/// guest is never sent it; the plan's other steps are applied.
#[tokio::test]
async fn a_plan_step_the_deny_list_refuses_never_runs() {
    let t = Instant::now();
    let e = exported("plan-denied").await;
    let mut fixes = e.plan.fixes();
    fixes[1].fix.fix_script = format!("rm -f /etc/sudoers.d/temper\n# sim pass {}\n", RULES[1]);
    let mut b = Sim::new("plan-denied-onto").await;
    b.settings.rules = RULES.map(String::from).to_vec();
    (b.settings.plan, b.settings.plan_cadence) = (fixes, e.plan.header.source.regression_every);
    let run = b.new_run("stock").await;
    b.stock(run).await.unwrap();
    let refused = b.attempts(run, RULES[1]).await.into_iter().find(|a| a.spec.source == temper_journal::FixSource::Plan).unwrap();
    assert_eq!(refused.verdict, Some(temper_journal::Verdict::Refused), "{refused:?}");
    assert!(refused.verdict_reason.as_deref().unwrap_or_default().contains("sudo"), "{:?}", refused.verdict_reason);
    assert!(!b.guest.scripts().iter().any(|s| s.contains("sudoers.d/temper")), "the guest was sent the refused step");
    for rule in [RULES[0], RULES[2]] {
        assert_eq!(b.rule(run, rule).await.status, temper_journal::RuleStatus::Fixed, "{rule}");
    }
    took("a_plan_step_the_deny_list_refuses_never_runs", t);
}

//! The proven plan, in-process (no VM: see `sim/`). `temper plan export` of a loop run: plan.json
//! against its schema, the steps in the order kept with their sha256s and accepted exit codes;
//! replay.sh run here with bash against fixes that only write a log under a temp dir; the Ansible
//! playbook linted, syntax-checked and run against this host (`-c local`). `temper run --plan`:
//! refused when it does not fit, before anything runs; applied in order on another guest, where a
//! step that fails goes to the normal loop.
#[path = "support/keys.rs"]
mod keys;
mod plan_shown;
mod sim;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use keys::signing_key;
use serde_json::{Value, json};
use sim::*;
use temper_core::journal::{EventKind, FixSource, RuleStatus, RunId};
use temper_core::plan::{Plan, PlanError, sha256_file, sha256_hex};
use temper_core::verdict::Verdict;
use temper_mockllm::{MockLlm, Scripted};

/// The rules the LLM fixes, in the order it picks them; the second fix exits 1 and is kept.
const RULES: [&str; 3] = ["sysctl_fs_suid_dumpable", "sshd_set_keepalive", "file_permissions_systemmap"];

/// An LLM-written fix that appends `word` to `log`; its `# sim` lines say what it does to the
/// modelled guest.
fn fix(log: &Path, word: &str, rule: &str, exit: u32) -> String {
    let exit_line = if exit == 0 { String::new() } else { format!("exit {exit}\n# sim exit {exit}\n") };
    format!("echo {word} >> '{}'\n{exit_line}# sim pass {rule}\n", log.display())
}

/// A finished LLM run over `RULES` whose plan is exported to `dir/plan`; its fixes write to `dir/log`.
struct Exported {
    sim: Sim,
    run: RunId,
    plan: Plan,
    dir: PathBuf,
    log: PathBuf,
    _tmp: tempfile::TempDir,
}

async fn exported(name: &str) -> Exported {
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
    let plan = temper_report::plan::build(&data, Some(content()), Some(sha256_file(&datastream()).unwrap())).unwrap();
    let dir = tmp.path().join("plan");
    temper_report::plan::write(&plan, &dir).unwrap();
    Exported { sim, run, plan, dir, log, _tmp: tmp }
}

fn schema_errors(doc: &Value) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas/plan.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let v = jsonschema::options().should_validate_formats(true).build(&schema).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    v.iter_errors(doc).map(|e| format!("{}: {e}", e.instance_path())).collect()
}

fn text(out: &Output) -> (String, String) {
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[tokio::test]
async fn the_plan_holds_the_kept_fixes_in_order_and_keeps_to_its_schema() {
    let t = Instant::now();
    let e = exported("plan-json").await;
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(e.dir.join("plan.json")).unwrap()).unwrap();
    assert_eq!(schema_errors(&doc), Vec::<String>::new());
    assert_eq!(doc["version"], 1);
    let h = &e.plan.header;
    assert_eq!((h.source.run, h.profile.as_str(), h.reboot_proven), (e.run, STANDARD, true));
    assert_eq!(h.content.sha256, sha256_file(&datastream()).unwrap());
    assert_eq!(h.tailoring, None);
    let cadence = e.sim.store.run(e.run).await.unwrap().regression_every;
    assert!(cadence.is_some() && h.source.regression_every.map(i64::from) == cadence, "the source run's cadence: {cadence:?}");

    let attempts = e.sim.store.attempts(e.run).await.unwrap();
    let rules: Vec<&str> = e.plan.steps.iter().map(|s| s.short_rule()).collect();
    assert_eq!(rules, RULES, "in the order kept");
    for (i, s) in e.plan.steps.iter().enumerate() {
        let a = attempts.iter().find(|a| a.spec.rule_id == s.rule).unwrap();
        assert_eq!((s.n, s.source, s.attempt), (i + 1, FixSource::Llm, a.n));
        for (script, text) in [(&s.fix, &a.spec.fix_script), (&s.revert, &a.spec.revert_script)] {
            assert_eq!(script.sha256, sha256_hex(text.as_bytes()));
            assert_eq!(sha256_file(&e.dir.join(&script.file)).unwrap(), script.sha256, "{}", script.file);
        }
    }
    let codes: Vec<(Option<i64>, bool, Vec<i64>)> =
        e.plan.steps.iter().map(|s| (s.exit_code, s.accepted_nonzero_exit, s.accepted_exit_codes())).collect();
    assert_eq!(codes, [(Some(0), false, vec![0]), (Some(1), true, vec![0, 1]), (Some(0), false, vec![0])]);
    // Read back: the same plan, each script checked against its sha256.
    assert_eq!(Plan::load(&e.dir).unwrap(), e.plan);
    std::fs::write(e.dir.join(&e.plan.steps[2].fix.file), "echo changed\n").unwrap();
    match Plan::load(&e.dir) {
        Err(err @ PlanError::Tampered { step: 3, .. }) => assert!(err.to_string().contains("nothing was run"), "{err}"),
        other => panic!("a changed script must be refused: {other:?}"),
    }
    let readme = std::fs::read_to_string(e.dir.join("README.md")).unwrap();
    assert!(readme.contains(&format!("temper plan: run {}", e.run)) && readme.contains("ansible-playbook -i inventory playbook.yml"));
    took("the_plan_holds_the_kept_fixes_in_order_and_keeps_to_its_schema", t);
}

/// The ANSSI plan the goal-1 bench applies (`tests/plan/beside-oscap.sh`) is one this temper
/// still reads: it keeps to the schema, loads with every script matching its sha256, and fits
/// the content `vm/fetch-ssg.sh` installs. A change to the plan's format fails here until the
/// archive is exported again.
#[test]
fn the_committed_anssi_plan_still_loads() {
    let archive = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/plan/anssi-bp28-high.tgz");
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new("tar").arg("xzf").arg(&archive).arg("-C").arg(dir.path()).args(["--strip-components=1"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("plan.json")).unwrap()).unwrap();
    assert_eq!(schema_errors(&doc), Vec::<String>::new());
    let plan = Plan::load(dir.path()).unwrap_or_else(|e| panic!("{}: {e}", archive.display()));
    assert_eq!((plan.steps.len(), plan.header.reboot_proven), (146, true));
    assert_eq!(plan.header.profile, "xccdf_org.ssgproject.content_profile_anssi_bp28_high");
    assert_eq!(sha256_file(&datastream()).unwrap(), plan.header.content.sha256, "the content vm/fetch-ssg.sh installs");
}

/// The schema names every fix source temper has, no more.
#[test]
fn the_schema_knows_every_fix_source() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas/plan.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let names: Vec<&str> = FixSource::ALL.iter().map(|s| s.as_str()).collect();
    assert_eq!(schema["$defs"]["step"]["properties"]["source"]["enum"], json!(names));
}

#[tokio::test]
async fn replay_goes_past_an_accepted_exit_and_refuses_a_changed_script() {
    let t = Instant::now();
    let e = exported("plan-replay").await;
    let replay = e.dir.join("replay.sh");
    let run = || Command::new("bash").arg(&replay).arg("--unsigned").output().unwrap();
    let out = run();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert_eq!(std::fs::read_to_string(&e.log).unwrap(), "one\ntwo\nthree\n", "every step, in order");
    assert!(stdout.contains("step 2 (xccdf_org.ssgproject.content_rule_sshd_set_keepalive) exited 1, as it did in the run"), "{stdout}");
    assert!(stdout.contains("== done: 3 steps"), "{stdout}");

    // A step that exits with a code the run did not keep it with stops the replay there.
    std::fs::remove_file(&e.log).unwrap();
    let script = std::fs::read_to_string(&replay).unwrap();
    let swap = |from: &str, to: &str| {
        assert!(script.contains(from), "{from}");
        std::fs::write(&replay, script.replace(from, to)).unwrap();
    };
    swap("'xccdf_org.ssgproject.content_rule_sshd_set_keepalive' 1\n", "'xccdf_org.ssgproject.content_rule_sshd_set_keepalive' 0\n");
    let out = run();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("step 2 (xccdf_org.ssgproject.content_rule_sshd_set_keepalive) failed with exit code 1"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&e.log).unwrap(), "one\ntwo\n");

    // A changed script: refused before any step runs.
    std::fs::remove_file(&e.log).unwrap();
    swap("echo three >>", "echo THREE >>");
    let out = run();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("003.sh: FAILED") && stderr.contains("does not match its sha256"), "{stderr}");
    assert!(!stdout.contains("== step"), "{stdout}");
    assert!(!e.log.exists(), "nothing ran");
    took("replay_goes_past_an_accepted_exit_and_refuses_a_changed_script", t);
}

fn ansible(program: &str, args: &[&str], dir: &Path) -> Output {
    let out = Command::new(program).args(args).current_dir(dir).env("ANSIBLE_NOCOLOR", "1").env("NO_COLOR", "1").output();
    out.unwrap_or_else(|e| panic!("{program}: {e}: run `bash tests/plan/setup.sh` (tests/run.sh does)"))
}

#[tokio::test]
async fn the_playbook_lints_clean_and_applies_the_steps_in_order() {
    let t = Instant::now();
    let e = exported("plan-ansible").await;
    let lint = ansible("ansible-lint", &["--nocolor", "playbook.yml"], &e.dir);
    let (stdout, stderr) = text(&lint);
    assert!(lint.status.success(), "ansible-lint:\n{stdout}\n{stderr}");
    let check = ansible("ansible-playbook", &["--syntax-check", "-i", "localhost,", "playbook.yml"], &e.dir);
    assert!(check.status.success(), "{:?}", text(&check));
    let play = || ansible("ansible-playbook", &["-i", "localhost,", "-c", "local", "playbook.yml", "-e", "temper_unsigned=true"], &e.dir);
    let out = play();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert_eq!(std::fs::read_to_string(&e.log).unwrap(), "one\ntwo\nthree\n", "every step, in order, past step 2's exit 1");
    assert!(stdout.contains("changed=3") && stdout.contains("failed=0"), "{stdout}");

    // A changed script: the first task refuses the plan, no step runs.
    std::fs::remove_file(&e.log).unwrap();
    std::fs::write(e.dir.join(&e.plan.steps[1].fix.file), "echo changed\n").unwrap();
    let out = play();
    let (stdout, stderr) = text(&out);
    assert!(!out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("does not match its sha256 in plan.json"), "{stdout}");
    assert!(!e.log.exists(), "nothing ran");

    // Steps that take effect at boot: a last task reboots the host, only when asked. Long
    // descriptions and many at-boot rules still fit ansible-lint's line length (ANSSI's did not).
    let mut plan = e.plan.clone();
    for s in plan.steps.iter_mut() {
        s.needs_reboot = true;
        s.description = format!("{} {}", "a long word list ".repeat(20), "x".repeat(300));
    }
    for _ in 0..20 {
        let mut more = plan.steps[2].clone();
        more.n = plan.steps.len() + 1;
        plan.steps.push(more);
    }
    let yml = temper_report::plan::playbook(&plan);
    assert!(yml.contains("ansible.builtin.reboot:") && yml.contains("when: temper_reboot | default(false) | bool"), "{yml}");
    std::fs::write(e.dir.join("reboot.yml"), yml).unwrap();
    let lint = ansible("ansible-lint", &["--nocolor", "reboot.yml"], &e.dir);
    assert!(lint.status.success(), "ansible-lint:\n{:?}", text(&lint));
    std::fs::write(e.dir.join(&e.plan.steps[1].fix.file), &e.plan.steps[1].fix.text).unwrap();
    let out = ansible("ansible-playbook", &["-i", "localhost,", "-c", "local", "reboot.yml", "-e", "temper_unsigned=true"], &e.dir);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success() && stdout.contains("skipping: [localhost]"), "not asked, so no reboot:\n{stdout}\n{stderr}");
    took("the_playbook_lints_clean_and_applies_the_steps_in_order", t);
}

/// The plan of one guest applied on another, where step 2's fix fails: steps 1 and 3 are kept
/// as `plan` fixes, in the plan's order; step 2 is reverted and its rule goes to the normal loop,
/// whose stock fix fixes it (`loop_plan_batch.rs` tests the batches). The reboot proof passes as
/// in any run.
#[tokio::test]
async fn a_plan_applies_in_order_and_a_step_that_fails_goes_to_the_loop() {
    let t = Instant::now();
    let e = exported("plan-from").await;
    let mut b = Sim::new("plan-onto").await;
    b.settings.rules = RULES.map(String::from).to_vec();
    let plan = Plan::load(&e.dir).unwrap();
    (b.settings.plan, b.settings.plan_cadence) = (plan.fixes(), plan.header.source.regression_every);
    // On this guest step 2's fix changes nothing and exits 3.
    b.guest.stock_fix(&e.plan.steps[1].fix.text, vec![Effect::Exit(3)]);
    // Stored as `temper run --plan` stores it, for the reports and the web view.
    let run = b.new_run_with("stock", &plan_shown::options(e.run, &b.settings.plan)).await;
    let summary = b.stock(run).await.unwrap();
    assert_eq!(summary.rebooted, Some(true), "{summary:?}");
    let seen: Vec<(String, FixSource, Option<Verdict>)> = b
        .store
        .attempts(run)
        .await
        .unwrap()
        .into_iter()
        .map(|a| (temper_scap::short_rule_id(&a.spec.rule_id).to_string(), a.spec.source, a.verdict))
        .collect();
    // The three steps go in one batch; its check fails, bisection finds step 2, whose rule the
    // stock fix then fixes; steps 1 and 3 were set aside with the batch, and are kept together.
    let want = [
        (RULES[0], FixSource::Plan, Verdict::Interrupted),
        (RULES[1], FixSource::Plan, Verdict::ApplyFailed),
        (RULES[2], FixSource::Plan, Verdict::Interrupted),
        (RULES[1], FixSource::Stock, Verdict::Fixed),
        (RULES[0], FixSource::Plan, Verdict::Fixed),
        (RULES[2], FixSource::Plan, Verdict::Fixed),
    ];
    assert_eq!(seen, want.map(|(r, s, v)| (r.to_string(), s, Some(v))));
    for r in RULES {
        assert_eq!(b.rule(run, r).await.status, RuleStatus::Fixed, "{r}");
    }
    let steps: Vec<Value> = b.events(run, EventKind::Pick).await.into_iter().filter_map(|p| p.get("plan_step").cloned()).collect();
    assert_eq!(steps, [json!(1), json!(2), json!(3), json!(1), json!(3)], "in order; the set-aside steps again");
    // The applied fixes are the plan's, byte for byte.
    assert!(b.guest.scripts().iter().filter(|s| e.plan.steps.iter().any(|p| &p.fix.text == *s)).count() >= 3);
    plan_shown::plan_shown(&b, run, e.run, RULES).await;
    took("a_plan_applies_in_order_and_a_step_that_fails_goes_to_the_loop", t);
}

/// `temper run --agent stock --plan DIR ARGS` with its database in `work`, on a target that does
/// not exist: its output, and the database's path.
fn temper_run(plan: &Path, work: &Path, args: &[&str]) -> (Output, PathBuf) {
    let db = work.join("temper.db");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new(env!("CARGO_BIN_EXE_temper"))
        .args(["run", "--agent", "stock", "--quiet", "--plan"])
        .arg(plan)
        .args(args)
        .env("TEMPER_CONFIG", work.join("none.toml"))
        .env("TEMPER_DB", &db)
        .env("TEMPER_SKILLS_DIR", repo.join("skills"))
        .env("TEMPER_SKILL", "debian12-anssi")
        .env("TEMPER_CONTENT_DIR", datastream().parent().unwrap())
        .env("TEMPER_DOMAIN", "temper-no-such-domain")
        .env("TEMPER_SSH_PORT", "1")
        .output()
        .unwrap();
    (out, db)
}

/// `temper run --plan` on a plan that does not fit: a changed script, another profile, other
/// content. Each is refused with a clear error before the run exists (no database is even made)
/// and so before anything touches a guest (the target here does not exist).
#[tokio::test]
async fn temper_run_refuses_a_plan_that_does_not_fit_and_runs_nothing() {
    let t = Instant::now();
    let e = exported("plan-refused").await;
    let work = tempfile::tempdir().unwrap();
    let run = |profile: &str| {
        let (out, db) = temper_run(&e.dir, work.path(), &["--profile", profile, "--unsigned"]);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
        assert!(!db.exists(), "no run was made: {stderr}");
        stderr
    };
    let other = "xccdf_org.ssgproject.content_profile_anssi_bp28_high";
    let said = run(other);
    assert!(
        said.contains(&format!("the plan was made for the profile `{STANDARD}`, and this run uses `{other}`: nothing was run")),
        "{said}"
    );

    let plan_json = e.dir.join("plan.json");
    let original = std::fs::read_to_string(&plan_json).unwrap();
    std::fs::write(&plan_json, original.replace(&e.plan.header.content.sha256, &"0".repeat(64))).unwrap();
    let said = run(STANDARD);
    assert!(said.contains("the plan was made for the content `ssg-debian12-ds.xml"), "{said}");
    std::fs::write(&plan_json, &original).unwrap();

    let step = &e.plan.steps[1].fix;
    std::fs::write(e.dir.join(&step.file), "echo changed\n").unwrap();
    let said = run(STANDARD);
    assert!(
        said.contains(&format!("step 2 (xccdf_org.ssgproject.content_rule_{}): {} does not match its sha256", RULES[1], step.file)),
        "{said}"
    );
    assert!(said.contains("nothing was run"), "{said}");
    took("temper_run_refuses_a_plan_that_does_not_fit_and_runs_nothing", t);
}

/// The plan's seal, each way it is applied: `temper run --plan`, replay.sh and the playbook each
/// apply a plan signed by temper, and one signed by `ssh-keygen -Y sign`, with the allowed
/// signers; each refuses, with nothing run, a changed script whose sha256 in plan.json was
/// updated (and in SHA256SUMS too, which only the signature catches), a changed header, a key not in the allowed signers, and no signature without
/// `--unsigned`.
#[tokio::test]
async fn a_signed_plan_is_checked_every_way_before_anything_runs() {
    use temper_core::plan::seal;
    let t = Instant::now();
    let e = exported("plan-sealed").await;
    let keys = tempfile::tempdir().unwrap();
    let (key, signers) = signing_key(keys.path(), "ops@example.com");
    let (stranger, _) = signing_key(keys.path(), "stranger@example.com");
    let pristine = keys.path().join("pristine");
    copy_dir(&e.dir, &pristine);
    // The three ways, with the allowed signers; each returns (ran, what it said).
    let replay = || {
        let out = Command::new("bash").arg(e.dir.join("replay.sh")).arg("--allowed-signers").arg(&signers).output().unwrap();
        (out.status.success(), format!("{:?}", text(&out)))
    };
    let play = || {
        let allowed = format!("temper_allowed_signers={}", signers.display());
        let out = ansible("ansible-playbook", &["-i", "localhost,", "-c", "local", "playbook.yml", "-e", &allowed], &e.dir);
        (out.status.success(), format!("{:?}", text(&out)))
    };
    let work = tempfile::tempdir().unwrap();
    let temper = |args: &[&str]| {
        let (out, db) = temper_run(&e.dir, work.path(), &[&["--profile", STANDARD], args].concat());
        let _ = std::fs::remove_file(&db);
        format!("{:?}", text(&out))
    };
    let allowed = ["--allowed-signers", signers.to_str().unwrap()];
    let ran = |how: &str| {
        let log = std::fs::read_to_string(&e.log).unwrap_or_default();
        let _ = std::fs::remove_file(&e.log);
        assert!(log.is_empty() || log == "one\ntwo\nthree\n", "{how}: {log}");
        !log.is_empty()
    };
    let reset = || {
        std::fs::remove_dir_all(&e.dir).unwrap();
        copy_dir(&pristine, &e.dir);
    };

    // Signed by temper: ssh-keygen verifies it, and every way applies it.
    seal::sign(&e.dir, &key, None).unwrap();
    let sig = e.dir.join(seal::SIGNATURE);
    let verified = Command::new("ssh-keygen")
        .args(["-Y", "verify", "-n", "temper-plan", "-I", "ops@example.com", "-f"])
        .arg(&signers)
        .arg("-s")
        .arg(&sig)
        .stdin(std::fs::File::open(e.dir.join(seal::MANIFEST)).unwrap())
        .status()
        .unwrap();
    assert!(verified.success(), "ssh-keygen -Y verify accepts temper's signature");
    let said = temper(&allowed);
    assert!(said.contains("is signed by ops@example.com (SHA256:") && !said.contains("nothing was run"), "{said}");
    let (ok, said) = replay();
    assert!(ok && ran("replay.sh") && said.contains("verify.sh: the plan is signed by ops@example.com"), "{said}");
    let (ok, said) = play();
    assert!(ok && ran("playbook"), "{said}");

    // Signed by ssh-keygen: temper and the others verify it.
    std::fs::remove_file(&sig).unwrap();
    let signed =
        Command::new("ssh-keygen").args(["-q", "-Y", "sign", "-n", "temper-plan", "-f"]).arg(&key).arg(e.dir.join(seal::MANIFEST)).status();
    assert!(signed.unwrap().success());
    let said = temper(&allowed);
    assert!(said.contains("is signed by ops@example.com") && !said.contains("nothing was run"), "{said}");
    let (ok, said) = replay();
    assert!(ok && ran("replay.sh, ssh-keygen's signature"), "{said}");

    // Each forgery: refused every way, nothing run.
    let script = e.dir.join(&e.plan.steps[0].fix.file);
    let evil = || {
        let evil = "echo owned >> /dev/null\n";
        std::fs::write(&script, evil).unwrap();
        let json = std::fs::read_to_string(e.dir.join("plan.json")).unwrap();
        std::fs::write(e.dir.join("plan.json"), json.replace(&e.plan.steps[0].fix.sha256, &sha256_hex(evil.as_bytes()))).unwrap();
    };
    let forgeries: [(&str, &dyn Fn(), &str); 5] = [
        ("a changed script, its sha256 updated", &evil, "plan.json does not match its sha256 in SHA256SUMS"),
        (
            "a changed script, its sha256 updated in plan.json and in SHA256SUMS",
            &|| {
                evil();
                seal::write_manifest(&e.dir).unwrap();
            },
            "the signature does not match SHA256SUMS",
        ),
        (
            "a changed header",
            &|| {
                let json = std::fs::read_to_string(e.dir.join("plan.json")).unwrap();
                std::fs::write(e.dir.join("plan.json"), json.replace("\"reboot_proven\": true", "\"reboot_proven\": false")).unwrap();
            },
            "plan.json does not match its sha256 in SHA256SUMS",
        ),
        ("a key not allowed", &|| drop(seal::sign(&e.dir, &stranger, None).unwrap()), "a key that is not in the allowed signers"),
        ("no signature", &|| std::fs::remove_file(e.dir.join(seal::SIGNATURE)).unwrap(), "the plan is not signed"),
    ];
    for (what, forge, why) in forgeries {
        reset();
        seal::sign(&e.dir, &key, None).unwrap();
        forge();
        let said = temper(&allowed);
        assert!(said.contains(why) && said.contains("nothing was run"), "temper, {what}: {said}");
        let (ok, said) = replay();
        assert!(!ok && !ran(what) && said.contains("nothing was run"), "replay.sh, {what}: {said}");
        let (ok, said) = play();
        assert!(!ok && !ran(what) && said.contains("nothing was run"), "playbook, {what}: {said}");
    }
    // No signature, and no allowed signers given: temper says the plan is not signed.
    let said = temper(&[]);
    assert!(said.contains("the plan is not signed") && said.contains("--unsigned"), "{said}");
    took("a_signed_plan_is_checked_every_way_before_anything_runs", t);
}

/// Copies a plan's folder (files and one level of folders).
fn copy_dir(from: &Path, to: &Path) {
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

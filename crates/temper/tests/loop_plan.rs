//! The proven plan, in-process (no VM: see `sim/`). `temper plan export` of a loop run: plan.json
//! against its schema, the steps in the order kept with their sha256s and accepted exit codes;
//! replay.sh run here with bash against fixes that only write a log under a temp dir; the Ansible
//! playbook linted, syntax-checked and run against this host (`-c local`). `temper run --plan`:
//! refused when it does not fit, before anything runs; applied in order on another guest, where a
//! step that fails goes to the normal loop.
//! The plan's seal, its terms and the attacks on them: `loop_plan_seal`.
mod plan_exported;
mod plan_shown;
mod sim;

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use plan_exported::*;
use serde_json::{Value, json};
use sim::*;
use temper_journal::Verdict;
use temper_journal::plan::{Plan, PlanError, Terms, sha256_file, sha256_hex};
use temper_journal::{EventKind, FixSource, RuleStatus};

fn schema_errors(doc: &Value) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas/plan.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let v = jsonschema::options().should_validate_formats(true).build(&schema).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    v.iter_errors(doc).map(|e| format!("{}: {e}", e.instance_path())).collect()
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
    assert!(
        readme.contains(&format!("temper plan: run {}", e.run))
            && readme.contains("ansible-playbook -i INVENTORY playbook.yml")
            && readme.contains("temper plan unpack PLAN_DIR -o PRIVATE")
    );
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
    let run = || Command::new("bash").arg(&replay).output().unwrap();
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

#[tokio::test]
async fn the_playbook_lints_clean_and_applies_the_steps_in_order() {
    let t = Instant::now();
    let e = exported("plan-ansible").await;
    let lint = ansible("ansible-lint", &["--nocolor", "playbook.yml"], &e.dir);
    let (stdout, stderr) = text(&lint);
    assert!(lint.status.success(), "ansible-lint:\n{stdout}\n{stderr}");
    let check = ansible("ansible-playbook", &["--syntax-check", "-i", "localhost,", "playbook.yml"], &e.dir);
    assert!(check.status.success(), "{:?}", text(&check));
    let play = || ansible("ansible-playbook", &["-i", "localhost,", "-c", "local", "playbook.yml"], &e.dir);
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
    let yml = temper_report::plan::playbook(&plan, &Terms::default());
    assert!(
        yml.contains("ansible.builtin.reboot:") && yml.contains("when: temper_reboot | default(false) | ansible.builtin.bool"),
        "{yml}"
    );
    // In a folder of its own: the plan's refuses a file it does not list.
    std::fs::write(e.dir.join(&e.plan.steps[1].fix.file), &e.plan.steps[1].fix.text).unwrap();
    let other = e.dir.parent().unwrap().join("reboot-plan");
    temper_report::plan::write(&plan, &other, &Terms::default()).unwrap();
    let lint = ansible("ansible-lint", &["--nocolor", "playbook.yml"], &other);
    assert!(lint.status.success(), "ansible-lint:\n{:?}", text(&lint));
    let out = ansible("ansible-playbook", &["-i", "localhost,", "-c", "local", "playbook.yml"], &other);
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

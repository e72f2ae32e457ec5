//! Markdown, HTML and JSON reports of a real store, and the replay script run for real.
mod common;

use std::process::Command;

use common::*;
use temper_journal::RunId;
use temper_report::{Format, LoadError, ReportError, load, render, replay_script, resolve_run};

#[tokio::test]
async fn markdown_has_the_summary_and_a_section_per_escalated_rule() {
    let f = ReportFixture::rhel9_run().await;
    let data = load(&f.store, f.run).await.unwrap();
    let md = render(&data, Some(rhel9()), Format::Md).unwrap();
    std::fs::write(artifacts().join("report.md"), &md).unwrap();

    assert!(md.contains("# temper report: run 1"));
    assert!(md.contains("| Target | libvirt:temper-rhel9 |"));
    assert!(md.contains("DISA STIG for Red Hat Enterprise Linux 9"), "profile title from the content");
    assert!(md.contains("61.25 → 68.50"), "scores before and after");
    for (name, after) in [("fixed", 3), ("escalated", 5), ("still failing", 1), ("skipped", 1), ("waived", 1), ("deferred", 1)] {
        assert!(
            md.contains(&format!("| {name} | "))
                && md.lines().any(|l| l.starts_with(&format!("| {name} |")) && l.ends_with(&format!("| {after} |"))),
            "{name} after = {after}"
        );
    }
    assert!(md.contains("| worker | 8 |"), "worker turns: one per attempt");
    assert!(md.contains("Reverts by method: 1 script, 1 script\\_then\\_snapshot, 2 snapshot."));

    let c = rhel9();
    let sections: Vec<&str> = md.split("\n### ").skip(1).collect();
    for short in ESCALATED {
        let rule = c.rule(short).unwrap();
        let section = sections
            .iter()
            .find(|s| s.lines().next().unwrap().ends_with(&format!("({short})")))
            .unwrap_or_else(|| panic!("no section for {short}"));
        for id in rule.stig_ids.iter().chain(&rule.sv_ids).chain(&rule.v_ids) {
            assert!(section.contains(&id.replace('_', "\\_")), "{short}: DISA id {id}");
        }
        assert!(section.contains("**Why it matters.**"), "{short}: rationale");
        assert!(section.contains("**Next step for a human.**"), "{short}: next step");
        assert!(section.contains("Escalated because:"), "{short}: reason");
    }
    let section = |short: &str| *sections.iter().find(|s| s.lines().next().unwrap().ends_with(&format!("({short})"))).unwrap();
    let dropin = section(ESC_DROPIN);
    assert!(dropin.contains("#### Attempt 1: still\\_failing (llm fix)") && dropin.contains("#### Attempt 2: health\\_broken (llm fix)"));
    assert!(dropin.contains("Inspect `nginx.service`"), "the next step names the broken service, as code");
    assert!(dropin.contains("glob matched nothing &lt;no files&gt;"), "the lesson, escaped");
    assert!(dropin.contains("Bans learned"));
    assert!(dropin.contains("reverted by its revert script"));
    assert!(section(ESC_KEEPALIVE).contains("deny-list refused"));
    assert!(section(ESC_KEEPALIVE).contains("stops or disables sshd"));
    assert!(section(ESC_FAILLOCK).contains("console"));
    assert!(section(ESC_GRUB).contains("reboot"));
    assert!(section(ESC_NOFIX).contains("No automatic fix was tried"));

    // Outside code blocks nothing is raw HTML; inside, the scripts are verbatim.
    let prose = prose_only(&md);
    assert!(!prose.contains("<script>"), "raw HTML outside a code block");
    assert!(md.contains("</pre><script>alert(1)</script>"), "scripts verbatim in code blocks");
    assert!(prose.contains("waiver W-17 &lt;approved by the ISSO&gt;"));
}

#[tokio::test]
async fn html_escapes_everything_and_loads_nothing() {
    let f = ReportFixture::rhel9_run().await;
    let data = load(&f.store, f.run).await.unwrap();
    let html = render(&data, Some(rhel9()), Format::Html).unwrap();
    assert!(!html.contains("<script>alert(1)"), "a script from the data reached the page unescaped");
    assert!(
        html.contains("&lt;&#x2f;pre&gt;&lt;script&gt;alert(1)&lt;&#x2f;script&gt;")
            || html.contains("&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;")
    );
    assert_eq!(html.matches("<script").count(), 1, "only the report's own inline script");
    assert!(html.contains("&quot;dq&quot;") || html.contains("&#34;dq&#34;"));
    let lower = html.to_lowercase();
    for bad in ["<link", " src=", "href=\"http", "href='http", "@import", "<iframe", "<img"] {
        assert!(!lower.contains(bad), "network load: {bad}");
    }
    // CSS url(...): `URL.createObjectURL(` in the script is fine.
    for (i, _) in lower.match_indices("url(") {
        assert!(lower[..i].ends_with("object"), "CSS url() at {i}: {}", &html[i.saturating_sub(40)..i + 20]);
    }
    for short in ESCALATED {
        assert!(html.contains(&format!("id=\"rule-{}\"", short.replace('_', "-"))), "{short}");
    }
    assert_eq!(html.matches("<details class=\"rule\"").count(), 5);
    assert!(html.contains("@media print"));
}

#[tokio::test]
async fn json_carries_the_report() {
    let f = ReportFixture::rhel9_run().await;
    let data = load(&f.store, f.run).await.unwrap();
    let v: serde_json::Value = serde_json::from_str(&render(&data, Some(rhel9()), Format::Json).unwrap()).unwrap();
    assert_eq!(
        v["schema"], "temper-report/10",
        "2: `reboot` is a value with its reason; 3: `plan`; 4: `interruptions`; 5: the verdicts `stalled` and `timed_out`"
    );
    assert_eq!(v["reboot"], serde_json::json!({"proof": "not_run", "reason": "not proven: the run skipped the reboot proof"}));
    assert_eq!(v["escalated"].as_array().unwrap().len(), 5);
    let fixed: Vec<&str> = v["fixed"].as_array().unwrap().iter().map(|f| f["info"]["short_id"].as_str().unwrap()).collect();
    assert_eq!(fixed, [FIXED_ROOT, FIXED_OWNER, FIXED_EMPTY]);
    assert_eq!(v["rules"].as_array().unwrap().len(), 20);
    assert_eq!(v["score_before"], 61.25);
    let dropin = v["escalated"].as_array().unwrap().iter().find(|e| e["info"]["short_id"] == ESC_DROPIN).unwrap();
    assert_eq!(dropin["verdicts"], serde_json::json!(["still_failing", "health_broken"]));
    assert_eq!(dropin["attempts"][0]["regressions"], serde_json::json!([]));
    assert!(dropin["attempts"][0]["stdout"].as_str().unwrap().contains('\u{1b}'), "output kept as it was");
}

#[tokio::test]
async fn reports_work_without_content_but_checklists_need_it() {
    let f = ReportFixture::rhel9_run().await;
    let data = load(&f.store, f.run).await.unwrap();
    let md = render(&data, None, Format::Md).unwrap();
    assert!(md.contains(&format!("({ESC_DROPIN})")), "titles come from the store");
    let html = render(&data, None, Format::Html).unwrap();
    assert_eq!(html.matches("<details class=\"rule\"").count(), 5);
    let json: serde_json::Value = serde_json::from_str(&render(&data, None, Format::Json).unwrap()).unwrap();
    assert_eq!(json["run"]["content_version"], rhel9().version.as_str(), "from the run row");
    for format in [Format::Ckl, Format::Cklb] {
        assert!(matches!(render(&data, None, format), Err(ReportError::NeedsContent(_))));
    }
}

#[tokio::test]
async fn runs_and_formats_resolve_with_clear_errors() {
    let (_dir, empty) = empty_store().await;
    assert!(matches!(resolve_run(&empty, "latest").await, Err(LoadError::NoRuns)));
    let f = ReportFixture::rhel9_run().await;
    assert_eq!(resolve_run(&f.store, "latest").await.unwrap(), f.run);
    assert_eq!(resolve_run(&f.store, "1").await.unwrap(), RunId::new(1).unwrap());
    assert!(matches!(resolve_run(&f.store, "99").await, Err(LoadError::Store(_))));
    for no_run in ["0", "-1"] {
        assert!(matches!(resolve_run(&f.store, no_run).await, Err(LoadError::BadRun(_))), "no run is numbered {no_run}");
    }
    let e = resolve_run(&f.store, "abc").await.unwrap_err();
    assert!(e.to_string().contains("give a run number or `latest`"), "{e}");
    assert_eq!("CKLB".parse::<Format>().unwrap(), Format::Cklb);
    assert!("pdf".parse::<Format>().unwrap_err().to_string().contains("md, html, json, ckl, cklb, oscal-ar, oscal-poam or hdf"));
}

#[tokio::test]
async fn replay_script_is_valid_bash_with_the_fixes_in_order() {
    let f = ReportFixture::rhel9_run().await;
    let data = load(&f.store, f.run).await.unwrap();
    let script = replay_script(data.records(), Some(rhel9()));
    let path = artifacts().join("replay.sh");
    std::fs::write(&path, &script).unwrap();
    run(Command::new("bash").arg("-n").arg(&path));
    let c = rhel9();
    let pos: Vec<usize> = [FIXED_ROOT, FIXED_OWNER, FIXED_EMPTY]
        .iter()
        .map(|s| {
            script
                .find(&format!("step {} '{}'", 1 + [FIXED_ROOT, FIXED_OWNER, FIXED_EMPTY].iter().position(|x| x == s).unwrap(), full(c, s)))
                .unwrap()
        })
        .collect();
    assert!(pos[0] < pos[1] && pos[1] < pos[2], "in the order fixed: {pos:?}");
    assert!(script.contains("chown 0 /etc/ssh/sshd_config\n"));
    assert!(script.contains("idempotent by design"));
    assert!(script.contains("set -u\n"));
    assert!(script.contains("<<'TEMPER_FIX_1_END_'"), "delimiter moved off the script's own line");
    assert!(!script.contains(ESC_DROPIN), "escalated rules are not replayed");
}

/// A run whose fixes append to a log: the replay runs them, in order, verbatim; resumes from
/// a step; stops at a failing step.
#[tokio::test]
async fn replay_script_runs_the_fixes_verbatim() {
    let c = rhel9();
    let f = ReportFixture::open(&new_run("s", STIG, "ds.xml", None, "t", "a")).await;
    let steps = [
        ("sshd_disable_root_login", "printf '%s\\n' \"one <a & b> 'q' $((1+1))\" >> \"$LOG\"\n"),
        ("file_owner_sshd_config", "cat >> \"$LOG\" <<'EOF'\ntwo `not run` $HOME\nEOF\n"),
        ("sshd_disable_empty_passwords", "echo three >> \"$LOG\"; exit ${FAIL_AT_3:-0}"),
    ];
    for (short, script) in steps {
        let id = full(c, short);
        f.store.add_rule(f.run, &new_rule(&id, "", "medium", ScanResult::Fail, RuleStatus::Pending, None)).await.unwrap();
        let (aid, _) = f
            .store
            .start_attempt(
                f.run,
                &AttemptSpec {
                    rule_id: id.clone(),
                    plan: String::new(),
                    source: FixSource::Llm,
                    replayed: false,
                    fix_script: script.into(),
                    revert_script: String::new(),
                    description: "d".into(),
                    checkpoint: "baseline".into(),
                    evidence_before: None,
                },
            )
            .await
            .unwrap();
        let o = Evaluation { revert_method: RevertMethod::None, ..Evaluation::new(Verdict::Fixed, "") };
        f.store.record_fix(f.run, aid, &o, &id, "cp").await.unwrap();
    }
    let data = load(&f.store, f.run).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("replay.sh");
    std::fs::write(&path, replay_script(data.records(), Some(c))).unwrap();
    let log = dir.path().join("log");
    let replay = |args: &[&str], fail3: bool| {
        let mut cmd = Command::new("bash");
        cmd.arg(&path).args(args).env("LOG", &log).env("HOME", "/home/x");
        if fail3 {
            cmd.env("FAIL_AT_3", "3");
        }
        cmd.output().unwrap()
    };
    let root = run(Command::new("id").arg("-u")).trim() == "0";
    if !root {
        let out = replay(&[], false);
        assert_eq!(out.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&out.stderr).contains("run as root"));
        return;
    }
    let out = replay(&[], false);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "one <a & b> 'q' 2\ntwo `not run` $HOME\nthree\n");
    std::fs::remove_file(&log).unwrap();
    let out = replay(&["2"], false);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("step 1 ("), "step 1 skipped and said so");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "two `not run` $HOME\nthree\n");
    std::fs::remove_file(&log).unwrap();
    let out = replay(&[], true);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("step 3 ("), "names the failing step");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("== done"));
}

/// A rule escalated because no fix is left after the ones tried gets the no-fix step too: from its
/// stored escalation cause, whatever its reason says.
#[tokio::test]
async fn a_rule_with_no_fix_left_after_tries_gets_the_no_fix_step() {
    let f = ReportFixture::rhel9_run().await;
    let keep = full(rhel9(), ESC_KEEPALIVE);
    let why = "the stock fix was tried (refused) and the agent has nothing else to try";
    f.store.escalate_rule(f.run, &keep, &Escalation::new(EscalationCause::NoFix, why)).await.unwrap();
    let md = render(&load(&f.store, f.run).await.unwrap(), Some(rhel9()), Format::Md).unwrap();
    let section = md.split("\n### ").find(|s| s.lines().next().unwrap().ends_with(&format!("({ESC_KEEPALIVE})"))).unwrap();
    assert!(section.contains("deny-list refused"), "the tried attempt's own step stays");
    assert!(section.contains(&format!("No other automatic fix to try: {why}.")), "{section}");
}

/// Where a finished run's time went: each part from its own record, and the proof (all but the
/// fix scripts) beside the fix scripts, in the Markdown, the HTML and the JSON.
#[tokio::test]
async fn the_time_split_gives_the_proofs_share_in_every_format() {
    use temper_journal::Part;
    let f = ReportFixture::rhel9_run().await;
    let data = load(&f.store, f.run).await.unwrap();
    let t = data.split.clone().expect("a finished run has its split");
    let applied: Vec<i64> = data.attempts.iter().filter_map(|a| a.findings.apply_ms).collect();
    let scripts = applied.iter().sum::<i64>() as f64 / 1000.0;
    assert!(scripts > 0.0, "the fixture's fixes ran");
    assert_eq!((t.wall_secs, t.secs(Part::FixScripts)), (1234.5, scripts));
    assert_eq!(t.proof_secs, 1234.5 - scripts);
    let ratio = (1234.5 - scripts) / scripts;
    assert_eq!(t.proof_ratio, Some(ratio));

    let md = render(&data, Some(rhel9()), Format::Md).unwrap();
    assert!(md.contains(&format!("| fix scripts | {} | {scripts:.0} s |", applied.len())), "{md}");
    let said =
        format!("The proof (everything but the fix scripts): {:.0} s, {ratio:.2}× the fix scripts' {scripts:.0} s.", 1234.5 - scripts);
    assert!(md.contains(&said), "{said}\n{md}");
    let doc: serde_json::Value = serde_json::from_str(&render(&data, None, Format::Json).unwrap()).unwrap();
    assert_eq!(doc["time_split"]["proof_ratio"].as_f64(), Some(ratio));
    let at = Part::ALL.iter().position(|p| *p == Part::FixScripts).unwrap();
    assert_eq!(doc["time_split"]["parts"][at], serde_json::json!({"part": "fix_scripts", "count": applied.len(), "secs": scripts}));
    let html = render(&data, None, Format::Html).unwrap();
    assert!(html.contains("<tr data-part=\"fix_scripts\"><td>fix scripts</td>"), "{html}");
    assert!(html.contains(&format!("<td class=\"num\">{:.0} s</td>", (1234.5 - scripts).round())), "the proof's seconds: {html}");
    assert!(html.contains("× the fix scripts</td>"), "{html}");
}

/// The rest of a finished run's time in its measured parts (the loop's `spent` events, the LLM's
/// turns) and what none names, in the Markdown, the HTML and the JSON.
#[tokio::test]
async fn the_rest_is_named_in_its_parts_in_every_format() {
    use temper_journal::prelude::*;
    use temper_journal::{EventData, Overhead, Spend, Spending};
    let f = ReportFixture::rhel9_run().await;
    let parts = [(Overhead::SnapshotsTaken, Spend { count: 3, secs: 4.6 }), (Overhead::Restores, Spend { count: 1, secs: 7.0 })];
    f.store.event(f.run, None, &EventData::Spent(Spending { parts: parts.into_iter().collect() })).await.unwrap();
    let data = load(&f.store, f.run).await.unwrap();
    let t = data.split.clone().expect("a finished run has its split");
    assert_eq!((t.rest_secs_of(Overhead::SnapshotsTaken), t.rest_secs_of(Overhead::Restores)), (4.6, 7.0));
    let llm = t.rest_secs_of(Overhead::Llm);
    assert_eq!(llm, data.turns.iter().map(|x| x.latency_ms).sum::<i64>() as f64 / 1000.0);
    assert_eq!(t.unnamed_secs, (t.rest_secs - 4.6 - 7.0 - llm).max(0.0));

    let md = render(&data, Some(rhel9()), Format::Md).unwrap();
    assert!(md.contains("| … of it, snapshots taken | 3 | 5 s |"), "{md}");
    assert!(md.contains("| … of it, restores (outside reverts) | 1 | 7 s |"), "{md}");
    assert!(!md.contains("snapshots dropped"), "a part never measured is not shown: {md}");
    let html = render(&data, None, Format::Html).unwrap();
    assert!(html.contains("<tr data-rest=\"snapshots_taken\"><td>… of it, snapshots taken</td><td class=\"num\">3</td>"), "{html}");
    assert!(html.contains("<tr data-rest=\"unnamed\">"), "{html}");
    let doc: serde_json::Value = serde_json::from_str(&render(&data, None, Format::Json).unwrap()).unwrap();
    assert_eq!(doc["time_split"]["rest"][0], serde_json::json!({"part": "snapshots_taken", "count": 3, "secs": 4.6}));
    assert_eq!(doc["time_split"]["unnamed_secs"].as_f64(), Some(t.unnamed_secs));
}

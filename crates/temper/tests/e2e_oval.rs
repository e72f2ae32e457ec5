//! The OVAL engine on the real VM: it agrees with `oscap xccdf eval` on every rule of
//! `standard`, and in a run (the default engine) the scanner's failing items reach the Worker's
//! prompt, the Reflector's diagnostics, the journal and the report.
mod support;

use std::sync::Arc;
use temper_journal::Engine;

use support::*;
use temper_core::ports::{Guest, Hypervisor};
use temper_core::scan::{OvalSide, Scanner};
use temper_journal::{EventKind, Recall};
use temper_scap::Outcome;
use temper_scap::oval::{OvalContent, OvalEngine};

const DS: &str = "/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml";
const ROOT: &str = "xccdf_org.ssgproject.content_rule_sshd_disable_root_login";
const ROOT_FIX: &str = "set -e\nsed -i '1i PermitRootLogin no' /etc/ssh/sshd_config\nsshd -t\n";
const ROOT_REVERT: &str = "sed -i '/^PermitRootLogin no$/d' /etc/ssh/sshd_config\n";
const WRONG: &str = "printf 'PermitRootLogin no\\n' > /root/not-sshd-config\n";
const LESSON: &str = "set PermitRootLogin no in /etc/ssh/sshd_config itself";

fn host_datastream() -> std::path::PathBuf {
    temper_journal::target::vm_dir().join("ssg/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_oval_engine_agrees_with_xccdf_eval_on_every_rule_of_standard() {
    require_vm().await;
    let hv = hypervisor();
    hv.snapshot_revert("baseline").await.unwrap();
    let g = guest();
    g.reconnect(std::time::Duration::from_secs(120)).await.unwrap();
    let benchmark = temper_scap::read_benchmark(host_datastream(), Some(STANDARD)).unwrap();
    let content = OvalContent::read(host_datastream()).unwrap();
    let xccdf = Scanner::new(DS, STANDARD);
    let oval = xccdf.clone().with_oval(OvalSide { engine: Arc::new(OvalEngine::new(content)), benchmark: Arc::new(benchmark) });
    oval.check(&g).await.expect("the VM's datastream is the host's");
    let want = xccdf.scan(&g, &[]).await.unwrap();
    let rules: Vec<String> =
        want.results.rule_results.iter().filter(|r| r.result != Outcome::NotSelected).map(|r| r.idref.clone()).collect();
    let got = oval.scan(&g, &rules).await.unwrap();
    assert_eq!(got.engine, Engine::Oval);
    let differ = want.differences(&got, &rules);
    assert!(differ.is_empty(), "{} of {} rules differ:\n{}", differ.len(), rules.len(), differ.join("\n"));
    let failing = got.with(Outcome::Fail);
    assert!(!failing.is_empty() && !got.with(Outcome::Pass).is_empty(), "the baseline has both: {:?}", got.results.counts(false));
    assert!(got.evidence_of(ROOT).is_some(), "the failing root-login rule has evidence");
    println!("{} rules: xccdf full scan {:.1}s, oval {:.1}s", rules.len(), want.took.as_secs_f64(), got.took.as_secs_f64());

    // A full scan split: rules named as tree walkers (cheap ones here, one failing, one passing)
    // go beside the profile's eval. Every rule's result, and the score, are xccdf eval's.
    let pass = got.with(Outcome::Pass)[0].clone();
    let split = oval.clone().with_tree_walkers(vec![ROOT.into(), pass.clone()]).scan(&g, &[]).await.unwrap();
    assert_eq!(split.engine, Engine::Oval);
    let all: Vec<String> = want.results.rule_results.iter().map(|r| r.idref.clone()).collect();
    let differ = want.differences(&split, &all);
    assert!(differ.is_empty(), "split full scan: {} of {} rules differ:\n{}", differ.len(), all.len(), differ.join("\n"));
    assert_eq!(split.results.rule_results.len(), all.len());
    let (a, b) = (want.results.score().unwrap().value, split.results.score().unwrap().value);
    assert!((a - b).abs() < 1e-3, "score: xccdf eval {a}, split {b}");
    assert!(split.evidence_of(ROOT).is_some(), "the split-off failing rule has its evidence");
    println!("split full scan ({ROOT}, {pass} beside): {:.1}s, score {b}", split.took.as_secs_f64());
}

/// The default engine in a run: a wrong fix is reverted by its script, reflected on (a ban, a
/// lesson fed to the next Worker), then the right one is kept; the scanner's failing items reach
/// the Worker, the Reflector, the journal and the report.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_fix_is_reverted_reflected_on_then_fixed_with_the_failing_items_as_evidence() {
    require_vm().await;
    let w = World::new();
    let llm = mock(vec![
        select(ROOT, "forbid root logins over SSH"),
        apply_fix(WRONG, "rm -f /root/not-sshd-config\n", "wrong place"),
        reflect("sshd reads /etc/ssh/sshd_config, not files in /root", Some(r"/root/not-sshd-config"), LESSON),
        apply_fix(ROOT_FIX, ROOT_REVERT, "PermitRootLogin no, first in sshd_config"),
    ])
    .await;
    let out = llm_run(&w, &llm, ROOT, &[]).await;
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert_eq!(summary["statuses"]["fixed"], 1, "{summary}\n{}", String::from_utf8_lossy(&out.stderr));
    let store = w.store().await;
    let run = store.latest_run().await.unwrap().unwrap().id;
    let started = store.events(run, None).await.unwrap().into_iter().find(|e| e.kind == EventKind::Preflight).unwrap();
    let started: serde_json::Value = serde_json::from_str(&started.json()).unwrap();
    assert_eq!(started["engine"], "oval", "the default engine");
    let a = store.attempts(run).await.unwrap();
    assert_eq!(a.iter().map(|a| a.outcome()).collect::<Vec<_>>(), ["still_failing", "fixed"]);
    assert_eq!(a[0].revert_method.map(|v| v.as_str()), Some("script"), "the revert script was run and verified");
    assert!(a[0].findings.diagnostics.as_deref().unwrap_or("").contains("rule result: fail"));
    let (code, _) = sh("test -e /root/not-sshd-config").await;
    assert_ne!(code, Some(0), "the failed fix was reverted");

    // Before each attempt, and after the one that left the rule failing: PermitRootLogin is absent.
    for e in [&a[0].spec.evidence_before, &a[0].findings.evidence_after, &a[1].spec.evidence_before] {
        let e = e.as_ref().expect("evidence recorded");
        assert_eq!(e.rule, ROOT);
        assert!(e.to_text().contains("PermitRootLogin"), "{}", e.to_text());
    }
    assert!(a[1].findings.evidence_after.is_none(), "the rule passes after the kept fix: nothing wrong to show");

    // The lesson reached memory; the Worker's prompts and the Reflector's carry the evidence.
    assert_eq!(store.bans(Recall::all()).await.unwrap()[0].pattern, "/root/not-sshd-config");
    let requests: Vec<String> = llm.requests().iter().map(|r| r.to_string()).collect();
    assert!(requests[1].contains("What the scanner finds wrong now") && requests[1].contains("PermitRootLogin"), "{}", requests[1]);
    assert!(requests[2].contains("what the scanner found after the fix"), "{}", requests[2]);
    assert!(requests[3].contains("What the scanner finds wrong now"));
    assert!(requests[3].contains(LESSON), "the episode fed to the next attempt");

    let md = report(&w, "md", "oval-evidence.md").await;
    let found = md.split("### What the scanner found before each fix").nth(1).expect("the fixed rules' evidence section");
    assert!(found.contains("test_PermitRootLogin_present_sshd_disable_root_login"), "the failing test, by id");
    assert!(found.contains("member oval:") && found.contains("/etc/ssh/sshd_config"), "the file it looked in");
    assert_eq!(rescan(&w, ROOT).await, "pass", "independent: xccdf eval agrees the kept fix works");
    assert!(healthy().await);
    w.cleanup().await;
}

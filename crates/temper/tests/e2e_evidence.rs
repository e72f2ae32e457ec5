//! Evidence for a rule no tier can fix, on the real VM (issue 32). `no_files_unowned_by_user`,
//! broken in a snapshot of its own by a file whose owner no account has (as ComplianceAsCode's
//! scenario breaks it), has no fix in the content, and the derived tier will not guess one: it
//! never walks a tree on its own. `temper run --agent stock` escalates it without an attempt,
//! and every report format, the checklists' finding details and the web view's rule page name
//! the file the scanner found; the escalation's next step is grounded in it.
mod support;

use std::time::{Duration, Instant};

use support::*;
use temper_core::ports::Hypervisor;
use temper_journal::{RuleStatus, RunId};

const ANSSI: &str = "xccdf_org.ssgproject.content_profile_anssi_bp28_high";
const RULE: &str = "xccdf_org.ssgproject.content_rule_no_files_unowned_by_user";
/// The file the test leaves with an owner no account has.
const ORPHAN: &str = "/srv/temper-e2e-orphan";
const BREAK: &str = "set -e\ntouch /srv/temper-e2e-orphan\nchown 4242:0 /srv/temper-e2e-orphan\n";
/// Rules that pass in the broken snapshot: the run's regression set.
const PASSING: [&str; 3] = ["file_owner_etc_passwd", "file_permissions_etc_shadow", "package_telnet_removed"];
const FORMATS: [&str; 8] = ["md", "html", "json", "ckl", "cklb", "oscal-ar", "oscal-poam", "hdf"];

/// How often `text` names the orphaned file, HTML's escaped slashes (`&#x2f;`) read as slashes.
fn mentions(text: &str) -> usize {
    text.replace("&#x2f;", "/").replace("&#x2F;", "/").matches(ORPHAN).count()
}

/// The rule's page on `temper serve`, bound to a free loopback port, for `run`.
async fn rule_page(w: &World, run: RunId) -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut serve = tokio::process::Command::from(w.temper());
    let mut child = serve.args(["serve", "--bind", &format!("127.0.0.1:{port}")]).kill_on_drop(true).spawn().unwrap();
    let url = format!("http://127.0.0.1:{port}/runs/{run}/rules/{RULE}");
    let deadline = Instant::now() + Duration::from_secs(60);
    let page = loop {
        match reqwest::get(&url).await {
            Ok(r) if r.status().is_success() => break r.text().await.unwrap(),
            Ok(r) => panic!("{url}: {}", r.status()),
            Err(e) => {
                assert!(Instant::now() < deadline, "temper serve did not answer on {url} in 60 s: {e}");
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
        }
    };
    child.kill().await.unwrap();
    page
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a tree-walking check under TCG, minutes a scan, out of CI's hour: `bash tests/vm-long.sh` runs it"]
async fn a_rule_no_tier_can_fix_is_escalated_with_the_items_found_in_every_format() {
    require_vm().await;
    let snap = broken_snapshot("evidence", BREAK).await;
    let mut w = World::new();
    let keep: Vec<String> =
        std::iter::once(RULE.to_string()).chain(PASSING.iter().map(|r| format!("xccdf_org.ssgproject.content_rule_{r}"))).collect();
    let t = cut_profile(w.dir.path(), ANSSI, "evidence", &keep);
    w.env.extend([("TEMPER_BASELINE", snap.as_str()), ("TEMPER_REBOOT_PROOF", "false")].map(|(k, v)| (k.to_string(), v.to_string())));
    assert_eq!(rescan_with(&w, RULE, &["--profile", ANSSI, "--tailoring-file", &t]).await, "fail", "broken in the snapshot");

    let started = Instant::now();
    let args = ["run", "--agent", "stock", "--profile", ANSSI, "--tailoring-file", &t, "--rules", RULE, "--quiet", "--json"];
    let out = w.run(&args).await;
    println!("run: {:.0}s", started.elapsed().as_secs_f64());
    assert_eq!(out.status.code(), Some(2), "a rule left escalated: {}", String::from_utf8_lossy(&out.stderr));
    let store = w.store().await;
    let run = store.latest_run().await.unwrap().unwrap().id;
    assert!(store.attempts(run).await.unwrap().is_empty(), "no tier offered a fix, so nothing ran on the guest");
    let row = store.rule(run, RULE).await.unwrap().unwrap();
    assert_eq!(row.status, RuleStatus::Escalated);
    let reason = row.reason.clone().unwrap_or_default();
    println!("escalated: {reason}");
    assert!(reason.contains("no stock fix in the content") && reason.contains("no derived fix"), "{reason}");
    for format in FORMATS {
        let text = report(&w, format, &format!("e2e-evidence.{format}")).await;
        let n = mentions(&text);
        println!("{format}: {n} mention(s) of {ORPHAN}");
        assert!(n > 0, "{format} names the file the scanner found");
    }
    let json: serde_json::Value = serde_json::from_str(&report(&w, "json", "e2e-evidence-steps.json").await).unwrap();
    let section =
        json["escalated"].as_array().unwrap().iter().find(|e| e["info"]["rule_id"] == RULE).expect("the rule among the escalated");
    assert!(section["next_steps"].to_string().contains(ORPHAN), "the next step names the file found: {}", section["next_steps"]);
    let ckl = report(&w, "ckl", "e2e-evidence-details.ckl").await;
    let details =
        ckl.split("<FINDING_DETAILS>").skip(1).map(|d| d.split("</FINDING_DETAILS>").next().unwrap()).find(|d| d.contains(ORPHAN));
    assert!(details.is_some(), "the checklist's FINDING_DETAILS name the file");
    let page = rule_page(&w, run).await;
    assert!(mentions(&page) > 0, "the web view's rule page names the file");

    // Nothing was touched: oscap still finds the file, and the guest is healthy.
    assert_eq!(rescan_with(&w, RULE, &["--profile", ANSSI, "--tailoring-file", &t]).await, "fail");
    assert!(healthy().await);
    let _ = hypervisor().snapshot_delete(&snap).await;
    w.cleanup().await;
}

//! The verdict from outside the guest, on the real VM (issue 74): the guest's disk read on the
//! host, judged by the host's oscap and content, held against the guest's own scan.
//!
//! 1. A guest that lies: its `oscap` wrapped so that every XCCDF result `fail` reads `pass` and
//!    every OVAL `false` reads `true`. `temper run` on it finds nothing to fix; the disk judged
//!    from outside fails what the guest's real oscap (`oscap.real`, the oracle) fails, so the
//!    report names each such rule at the top, and the run exits 3, not 0.
//! 2. An honest guest: `temper image verdict --snapshot baseline --live RESULTS` against the
//!    guest's own results of the same state: no rule disagrees.
mod support;

use std::collections::BTreeSet;
use std::time::Duration;

use support::*;
use temper_core::ports::{Exec, Guest, Hypervisor};
use temper_journal::ScanResult;
use temper_journal::offline::{CrossExam, OfflineVerdict};

const DS: &str = "/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml";

/// oscap wrapped: what it writes says every rule passes.
const LIAR: &str = r##"mv /usr/bin/oscap /usr/bin/oscap.real
cat > /usr/bin/oscap <<'EOF'
#!/bin/sh
/usr/bin/oscap.real "$@"
rc=$?
prev=""
for a in "$@"; do
  if [ "$prev" = --results ] && [ -f "$a" ]; then
    sed -i -e 's#<result>fail</result>#<result>pass</result>#g' -e 's#result="false"#result="true"#g' "$a"
  fi
  prev="$a"
done
for f in ./*.result.xml; do [ -f "$f" ] && sed -i 's#result="false"#result="true"#g' "$f"; done
[ "$rc" = 2 ] && rc=0
exit $rc
EOF
chmod 0755 /usr/bin/oscap
"##;

/// The guest's own scan of `standard` with `oscap` (the real one, however it is named): its
/// results document, and each rule's result.
async fn guest_scan(oscap: &str) -> (Vec<u8>, Vec<(String, ScanResult)>) {
    let g = guest();
    g.reconnect(Duration::from_secs(120)).await.unwrap();
    let script = format!(
        "{oscap} xccdf eval --profile {STANDARD} --results /tmp/e2e-offline.xml {DS} >/dev/null 2>&1; cat /tmp/e2e-offline.xml; rm -f /tmp/e2e-offline.xml"
    );
    let out = g.exec(Exec::script(&script).timeout(Duration::from_secs(900)).max_output(32 << 20)).await.unwrap();
    let results = temper_scap::parse_results_bytes(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stderr_str()));
    let each = results.rule_results.iter().map(|r| (r.idref.clone(), ScanResult::from(r.result))).collect();
    (out.stdout, each)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guest_that_lies_is_named_and_its_run_does_not_end_as_a_success() {
    require_vm().await;
    let snap = broken_snapshot("lying", LIAR).await;
    let (_, truth) = guest_scan("/usr/bin/oscap.real").await;
    let failing: BTreeSet<String> = truth.iter().filter(|(_, r)| *r == ScanResult::Fail).map(|(id, _)| id.clone()).collect();
    assert!(failing.len() > 10, "the baseline fails rules of standard: {failing:?}");
    let (_, lied) = guest_scan("/usr/bin/oscap").await;
    assert!(lied.iter().all(|(_, r)| *r != ScanResult::Fail), "the wrapped oscap reports no rule failing");

    let mut w = World::new();
    w.env.extend([("TEMPER_CROSS_EXAMINE".into(), "true".into()), ("TEMPER_BASELINE".into(), snap.clone())]);
    let out = w.run(&["run", "--agent", "stock", "--profile", STANDARD, "--quiet", "--json"]).await;
    assert_eq!(out.status.code(), Some(3), "a run whose guest lies does not end as a success");

    let store = w.store().await;
    let run = store.latest_run().await.unwrap().unwrap();
    let summary: temper_journal::RunSummary = serde_json::from_str(run.summary_json.as_deref().unwrap()).unwrap();
    let Some(CrossExam::Done(x)) = &summary.cross_examination else { panic!("{:?}", summary.cross_examination) };
    let lies: BTreeSet<String> = x.lies.iter().map(|d| d.rule.clone()).collect();
    // The oracle: every rule the real oscap fails that the disk judges is named, and only those.
    let rules = store.rules(run.id).await.unwrap();
    let judged_offline: BTreeSet<String> =
        rules.iter().filter(|r| matches!(r.offline_verdict, Some(OfflineVerdict::Offline { .. }))).map(|r| r.rule_id.clone()).collect();
    let want: BTreeSet<String> = failing.intersection(&judged_offline).cloned().collect();
    assert_eq!(lies, want, "named: each rule the guest's real oscap fails and the disk judges");
    for known in ["sshd_set_keepalive", "file_permissions_systemmap", "package_audit_installed", "sysctl_kernel_randomize_va_space"] {
        assert!(lies.contains(&full(known)), "{known} is among the findings: {lies:?}");
    }
    eprintln!(
        "{} lies named of {} rules the real oscap fails; {} of {} judged live also judged offline; the disk judged in {:.1} s",
        lies.len(),
        failing.len(),
        x.both,
        x.live_judged,
        x.times.total_secs
    );

    let md = report(&w, "md", "e2e-offline-lies.md").await;
    let top = &md[..md.find("## Summary").expect("a summary")];
    assert!(top.contains(&format!("## FINDING: the guest's scan disagrees with its disk ({})", lies.len())), "{md}");
    for id in &lies {
        assert!(top.contains(&format!("`{}`", temper_scap::short_rule_id(id))), "{id} named at the top");
    }
    let json: serde_json::Value = serde_json::from_str(&report(&w, "json", "e2e-offline-lies.json").await).unwrap();
    assert_eq!(json["cross_examination"]["lies"].as_array().unwrap().len(), lies.len());
    let html = report(&w, "html", "e2e-offline-lies.html").await;
    assert_eq!(html.matches("<tr class=\"lie\">").count(), lies.len());
    w.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_disk_of_an_honest_guest_agrees_with_its_scan() {
    require_vm().await;
    let hv = hypervisor();
    hv.snapshot_revert("baseline").await.unwrap();
    let (xml, live) = guest_scan("oscap").await;
    let w = World::new();
    let path = w.dir.path().join("live.xml");
    std::fs::write(&path, xml).unwrap();
    let out =
        w.run(&["image", "verdict", "--snapshot", "baseline", "--profile", STANDARD, "--live", path.to_str().unwrap(), "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let x = &v["cross_examination"];
    assert_eq!(x["lies"].as_array().unwrap().len(), 0, "{x}");
    assert_eq!(x["differ"].as_array().unwrap().len(), 0, "{x}");
    let judged_live = live.iter().filter(|(_, r)| matches!(r, ScanResult::Pass | ScanResult::Fail)).count();
    assert_eq!(x["live_judged"].as_u64(), Some(judged_live as u64));
    assert!(x["both"].as_u64().unwrap() * 10 >= judged_live as u64 * 7, "most rules judged offline too: {x}");
    eprintln!("honest guest: {} of {} judged offline too, {} agree", x["both"], x["live_judged"], x["agree"]);
}

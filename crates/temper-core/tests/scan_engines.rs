//! The scanner's two engines, with this machine as the guest (real oscap, SSG's Debian 12
//! datastream). For the same rules the OVAL engine must give every rule the result that
//! `oscap xccdf eval --rule` gives, in one `oscap oval eval` (plus one `xccdf eval` for the rules
//! it routes there); each failing OVAL rule carries evidence; no file is left behind; and a
//! guest whose datastream is not the host's is refused.
mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use temper_journal::Engine;

use common::{Here, datastream};
use temper_core::scan::{DPKG_STATUS, OvalSide, SCAN_LANES, ScanError, Scanner, two_stages};
use temper_scap::oval::{OvalContent, OvalEngine};
use temper_scap::{Outcome, read_benchmark};

const PREFIX: &str = "xccdf_org.ssgproject.content_profile_";

fn side(ds: &str, profile: &str) -> OvalSide {
    let benchmark = read_benchmark(ds, Some(profile)).unwrap();
    OvalSide { engine: Arc::new(OvalEngine::new(OvalContent::read(ds).unwrap())), benchmark: Arc::new(benchmark) }
}

fn leftovers(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect()
}

/// Scans `rules` with both engines; returns the OVAL scan after checking it against xccdf's.
async fn both(profile: &str, pick: impl Fn(&OvalSide) -> Vec<String>) -> (temper_core::scan::Scan, usize) {
    let (ds, dir) = (datastream(), tempfile::tempdir().unwrap());
    let side = side(&ds, profile);
    let rules = pick(&side);
    let two = two_stages(&side, &rules);
    let routed = side.engine.plan(&side.benchmark, &rules).unwrap().xccdf_rules().len();
    let mut xccdf = Scanner::new(&ds, format!("{PREFIX}{profile}"));
    xccdf.dir = dir.path().to_str().unwrap().into();
    let oval = xccdf.clone().with_oval(side);
    let guest = Here::default();
    oval.check(&guest).await.expect("the host's datastream is the guest's");

    let want = xccdf.scan(&guest, &rules).await.unwrap();
    let got = oval.scan(&guest, &rules).await.unwrap();
    assert_eq!((want.engine, got.engine), (Engine::Xccdf, Engine::Oval));
    let differ = want.differences(&got, &rules);
    assert!(differ.is_empty(), "{} of {} rules differ:\n{}", differ.len(), rules.len(), differ.join("\n"));
    assert_eq!(got.results.rule_results.len(), rules.len(), "one result per rule asked, none other");
    let order: Vec<&str> = got.results.rule_results.iter().map(|r| r.idref.as_str()).collect();
    assert_eq!(order, rules.iter().map(String::as_str).collect::<Vec<_>>(), "in the order asked");

    // One `oscap oval eval` (one a lane for a large set; after one for the platforms, for a
    // large set or a tree walker), and one `oscap xccdf eval` only for the rules routed there.
    let trips = guest.trips.lock().unwrap().clone();
    let runs = |sub: &str| trips.iter().filter(|t| t.args[0] == sub).count();
    let lanes = runs("oval") - usize::from(two);
    assert!((1..=SCAN_LANES).contains(&lanes), "{lanes} oval runs past the platforms'");
    assert_eq!(runs("xccdf"), 1 + usize::from(routed > 0), "xccdf's own scan, and one for the {routed} routed rules");
    assert_eq!(leftovers(dir.path()), Vec::<PathBuf>::new(), "every scan file was removed");
    (got, routed)
}

/// Every failing rule the OVAL path decided has evidence, naming what was looked at.
fn check_evidence(scan: &temper_core::scan::Scan) {
    for e in &scan.evidence {
        assert_eq!(scan.outcome(&e.rule), Some(e.outcome));
        assert!(matches!(e.outcome, Outcome::Fail | Outcome::Error), "{}: {:?}", e.rule, e.outcome);
        assert!(!e.tests.is_empty(), "{}: evidence names the tests that failed", e.rule);
        assert!(e.tests.iter().any(|t| t.object.is_some()), "{}: and what they looked at\n{}", e.rule, e.to_text());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oval_agrees_with_xccdf_on_every_rule_of_standard_in_two_stages() {
    let (scan, _) = both("standard", |s| s.benchmark.selected_rules.iter().map(|r| r.id.clone()).collect()).await;
    // This host passes what applies of `standard`; platforms (CPE) make the rest not applicable.
    let counts = scan.results.counts(false);
    assert!(counts.contains_key("pass") && counts.contains_key("notapplicable"), "{counts:?}");
    check_evidence(&scan);
    // The package tests (the rules' and their platforms') were judged on the host, from this
    // machine's dpkg status, and agree with oscap's probe above.
    assert!(scan.packages >= 10, "package tests judged on the host: {}", scan.packages);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oval_agrees_with_xccdf_on_a_few_anssi_rules_some_routed_to_xccdf() {
    let (scan, routed) = both("anssi_bp28_high", |s| {
        let all: Vec<String> = s.benchmark.selected_rules.iter().map(|r| r.id.clone()).collect();
        let plan = s.engine.plan(&s.benchmark, &all).unwrap();
        let mut rules: Vec<String> = plan.xccdf_rules().iter().take(3).map(|(id, _)| id.to_string()).collect();
        let more: Vec<String> = all.iter().filter(|r| !rules.contains(r)).take(9).cloned().collect();
        rules.extend(more);
        rules
    })
    .await;
    assert!(routed > 0, "the sample has rules whose check is not one OVAL definition");
    let failing = scan.with(Outcome::Fail);
    assert!(
        !scan.evidence.is_empty() && scan.evidence.len() <= failing.len(),
        "{} evidence, {} failing",
        scan.evidence.len(),
        failing.len()
    );
    check_evidence(&scan);
}

/// Every ANSSI high rule that does not walk the tree (its package rules and the platforms that
/// name packages among them): the package tests judged on the host from this machine's dpkg
/// status give each rule oscap's result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn package_tests_judged_on_the_host_agree_with_oscap_on_anssi_high() {
    let (scan, _) = both("anssi_bp28_high", |s| {
        let all: Vec<String> = s.benchmark.selected_rules.iter().map(|r| r.id.clone()).collect();
        let walkers = s.engine.tree_walkers(&s.benchmark, &all);
        all.into_iter().filter(|r| !walkers.contains(r)).collect()
    })
    .await;
    assert!(scan.packages >= 50, "package tests judged on the host: {}", scan.packages);
    let packaged = |p: &str| scan.results.rule_results.iter().any(|r| r.idref.contains(&format!("rule_package_{p}")));
    assert!(packaged("aide_installed") && packaged("telnet_removed"), "the profile's package rules are among them");
    check_evidence(&scan);
}

/// A rule whose check walks the whole tree goes platforms first however few rules a scan names:
/// where its platform is not met (no auditd on this host), the walk is never sent to the guest.
#[tokio::test]
async fn a_tree_walker_alone_goes_platforms_first() {
    let (ds, dir) = (datastream(), tempfile::tempdir().unwrap());
    let side = side(&ds, "anssi_bp28_high");
    let rules = ["xccdf_org.ssgproject.content_rule_audit_rules_privileged_commands".to_string()];
    let rule = &rules[0];
    assert_eq!(side.engine.tree_walkers(&side.benchmark, &rules), rules, "it walks the tree");
    assert!(!Path::new("/sbin/auditctl").exists(), "this test needs a host without auditd");
    let mut scanner = Scanner::new(&ds, format!("{PREFIX}anssi_bp28_high"));
    scanner.dir = dir.path().to_str().unwrap().into();
    let scanner = scanner.with_oval(side);
    let guest = Here::default();
    let scan = scanner.scan(&guest, &rules).await.unwrap();
    assert_eq!(scan.outcome(rule), Some(Outcome::NotApplicable));
    let trips = guest.trips.lock().unwrap().clone();
    let walk = |bytes: &[u8]| String::from_utf8_lossy(bytes).contains(r#"recurse_direction="down""#);
    assert_eq!(trips.iter().filter(|t| t.args[0] == "oval").count(), 1, "the platforms' run alone: {trips:?}");
    assert!(trips.iter().all(|t| t.inputs.iter().all(|(_, b)| !walk(b))), "no document sent holds the walk");
}

/// The one walk (`scan_walk`): the tree walkers' results, judged on the host over one `find` of
/// this machine, are those oscap gives walking for each, and no document sent to oscap walks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_one_walk_gives_oscaps_results_and_oscap_walks_no_more() {
    let (ds, dir) = (datastream(), tempfile::tempdir().unwrap());
    let side = side(&ds, "anssi_bp28_high");
    let rules: Vec<String> = [
        "dir_system_commands_root_owned",
        "accounts_users_home_files_ownership",
        "accounts_users_home_files_groupownership",
        "accounts_users_home_files_permissions",
    ]
    .map(|r| format!("xccdf_org.ssgproject.content_rule_{r}"))
    .to_vec();
    assert_eq!(side.engine.tree_walkers(&side.benchmark, &rules).len(), rules.len(), "each walks a tree");
    let mut plain = Scanner::new(&ds, format!("{PREFIX}anssi_bp28_high"));
    plain.dir = dir.path().to_str().unwrap().into();
    let plain = plain.with_oval(side);
    let mut walked = plain.clone();
    walked.walk = true;
    let (oscap_walks, one_walk) = (Here::default(), Here::default());
    let want = plain.scan(&oscap_walks, &rules).await.unwrap();
    let got = walked.scan(&one_walk, &rules).await.unwrap();
    let differ = want.differences(&got, &rules);
    assert!(differ.is_empty(), "{} of {} rules differ:\n{}", differ.len(), rules.len(), differ.join("\n"));
    let walks =
        one_walk.log.lock().unwrap().iter().filter(|a| a.first().is_some_and(|c| c == "sh") && a.last().is_some_and(|r| r == "/")).count();
    assert_eq!(walks, 1, "one walk of the file system");
    let w = got.walk.as_ref().expect("the scan says what its walk did");
    assert!(w.entries > 1000 && w.tests >= rules.len() && w.left.is_empty(), "{w:?}");
    assert_eq!(want.walk, None, "no walk without scan_walk");
    let down = |bytes: &[u8]| String::from_utf8_lossy(bytes).contains(r#"recurse_direction="down""#);
    let sent = |g: &Here| g.trips.lock().unwrap().iter().any(|t| t.inputs.iter().any(|(_, b)| down(b)));
    assert!(sent(&oscap_walks), "without the walk, oscap walks");
    assert!(!sent(&one_walk), "with it, no document sent to oscap walks");
    assert_eq!(leftovers(dir.path()), Vec::<PathBuf>::new(), "every scan file was removed");
}

#[tokio::test]
async fn a_guest_with_other_content_is_refused() {
    let ds = datastream();
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("ds.xml");
    let mut bytes = std::fs::read(&ds).unwrap();
    bytes.extend(b"\n<!-- changed -->\n");
    std::fs::write(&other, bytes).unwrap();
    let scanner = Scanner::new(other.to_str().unwrap(), format!("{PREFIX}standard")).with_oval(side(&ds, "standard"));
    match scanner.check(&Here::default()).await {
        Err(ScanError::ContentMismatch { host, guest }) => {
            assert_eq!(host.len(), 64);
            assert!(guest.len() == 64 && guest != host, "{guest}");
        }
        other => panic!("expected a content mismatch, got {other:?}"),
    }
}

/// This machine as a guest whose dpkg status cannot be read.
#[derive(Default)]
struct NoStatus(Here);

#[async_trait::async_trait]
impl temper_core::ports::Guest for NoStatus {
    async fn exec(&self, exec: temper_core::ports::Exec) -> temper_core::ports::PortResult<temper_core::ports::ExecOutput> {
        if exec.argv.iter().any(|a| a == DPKG_STATUS) {
            let denied = format!("cat: {DPKG_STATUS}: Permission denied");
            return Ok(temper_core::ports::ExecOutput { exit_code: Some(1), stderr: denied.into_bytes(), ..Default::default() });
        }
        self.0.exec(exec).await
    }
    async fn reconnect(&self, within: std::time::Duration) -> temper_core::ports::PortResult<()> {
        self.0.reconnect(within).await
    }
}

/// A package list that cannot be read is no empty one: the scan runs again with oscap's own
/// probe for the package tests, and gives oscap's results.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_package_list_oscaps_own_probe_judges_the_package_tests() {
    let (ds, dir) = (datastream(), tempfile::tempdir().unwrap());
    let side = side(&ds, "standard");
    let rules: Vec<String> = side.benchmark.selected_rules.iter().map(|r| r.id.clone()).collect();
    let mut xccdf = Scanner::new(&ds, format!("{PREFIX}standard"));
    xccdf.dir = dir.path().to_str().unwrap().into();
    let oval = xccdf.clone().with_oval(side);
    let guest = NoStatus::default();
    let want = xccdf.scan(&guest, &rules).await.unwrap();
    let got = oval.scan(&guest, &rules).await.unwrap();
    let differ = want.differences(&got, &rules);
    assert!(differ.is_empty(), "{} of {} rules differ:\n{}", differ.len(), rules.len(), differ.join("\n"));
    assert_eq!(got.packages, 0, "no package test judged without the list");
    let trips = guest.0.trips.lock().unwrap().clone();
    let last = trips.iter().rev().find(|t| t.args[0] == "oval").expect("an oval run");
    let sent = String::from_utf8_lossy(&last.inputs[0].1).into_owned();
    assert!(sent.contains("dpkginfo_object") && !sent.contains("<unknown_test"), "the last run's document leaves the packages to oscap");
    assert!(
        trips.iter().any(|t| t.inputs.first().is_some_and(|(_, d)| String::from_utf8_lossy(d).contains("<unknown_test"))),
        "it tried first"
    );
}

//! What a rescan costs on the real VM with each engine: `oscap xccdf eval --rule ...` (loads the
//! whole datastream) against the OVAL engine (one small document cut on the host, `oscap oval
//! eval` in the guest). One rule, ten rules, and the loop's regression set (every rule passing
//! now; then without the checks that walk a directory tree, which the loop leaves to the final
//! scan), each against a full profile scan. Prints min / median / max; every OVAL scan is
//! checked against xccdf's results for the same rules, and a mismatch stops the bench.
//!
//! TEMPER_BENCH_PROFILE (default anssi_bp28_high), TEMPER_BENCH_RUNS (default 3). Needs the test VM (`bash vm/up.sh`) and the
//! host's copy of the same datastream (`bash vm/fetch-ssg.sh`).
use std::sync::Arc;
use std::time::{Duration, Instant};

use temper_core::ports::{Exec, Guest};
use temper_core::scan::{OvalSide, Scan, Scanner};
use temper_scap::Outcome;
use temper_scap::oval::{OvalContent, OvalEngine};
use temper_target::{SshConfig, SshGuest};

const DS: &str = "/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml";
const PREFIX: &str = "xccdf_org.ssgproject.content_profile_";
const RULE: &str = "xccdf_org.ssgproject.content_rule_";
/// Scans per row (`TEMPER_BENCH_RUNS`, default 3).
fn runs() -> usize {
    std::env::var("TEMPER_BENCH_RUNS").ok().and_then(|n| n.parse().ok()).filter(|n| *n > 0).unwrap_or(3)
}

fn stats(name: &str, mut t: Vec<Duration>) -> f64 {
    t.sort();
    let s = |d: Duration| d.as_secs_f64();
    println!("{name:<52} min {:>7.2}s  median {:>7.2}s  max {:>7.2}s  (n={})", s(t[0]), s(t[t.len() / 2]), s(t[t.len() - 1]), t.len());
    s(t[t.len() / 2])
}

/// Scans `rules` [`runs`] times; the times and the last scan.
async fn time_scan(guest: &SshGuest, scanner: &Scanner, rules: &[String]) -> (Vec<Duration>, Scan) {
    let mut out = Vec::new();
    let mut last = None;
    for _ in 0..runs() {
        let t = Instant::now();
        let scan = scanner.scan(guest, rules).await.expect("scan");
        out.push(t.elapsed());
        last = Some(scan);
    }
    (out, last.unwrap())
}

fn same(rules: &[String], xccdf: &Scan, oval: &Scan) {
    let differ = xccdf.differences(oval, rules);
    assert!(differ.is_empty(), "the engines disagree:\n{}", differ.join("\n"));
}

#[tokio::main]
async fn main() {
    let profile = std::env::var("TEMPER_BENCH_PROFILE").unwrap_or_else(|_| "anssi_bp28_high".into());
    let profile = if profile.starts_with(PREFIX) { profile } else { format!("{PREFIX}{profile}") };
    let guest = SshGuest::new(SshConfig::from_env().unwrap()).unwrap();
    guest.exec(Exec::new(["true"])).await.expect("the test VM answers over SSH: run `bash vm/up.sh`");
    let host_ds = temper_journal::target::vm_dir().join("ssg/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml");
    let t = Instant::now();
    let content = OvalContent::read(&host_ds).expect("the host's datastream: run `bash vm/fetch-ssg.sh`");
    let index = t.elapsed();
    let benchmark = temper_scap::read_benchmark(&host_ds, Some(&profile)).unwrap();
    let xccdf = Scanner::new(DS, profile.clone());
    let side = OvalSide { engine: Arc::new(OvalEngine::new(content)), benchmark: Arc::new(benchmark) };
    let oval = xccdf.clone().with_oval(side.clone());
    oval.check(&guest).await.expect("the guest's datastream is the host's");

    let t = Instant::now();
    let full = xccdf.scan(&guest, &[]).await.unwrap();
    let full_secs = t.elapsed().as_secs_f64();
    let with = |o: Outcome| full.with(o);
    let (passing, failing) = (with(Outcome::Pass), with(Outcome::Fail));
    let selected = side.benchmark.selected_rules.len();
    println!(
        "rescan cost on the test VM (TCG), profile {} ({selected} rules: {} pass, {} fail now), oscap in the guest over SSH",
        profile.trim_start_matches(PREFIX),
        passing.len(),
        failing.len()
    );
    println!("{:<52} {full_secs:>7.2}s", "full profile scan (xccdf), once");
    println!("{:<52} {:>7.2}s", "OVAL engine: indexing the datastream on the host", index.as_secs_f64());

    // One rule: five failing rules (what the loop rescans after a fix), each scanned runs() times.
    let mut one = (Vec::new(), Vec::new());
    for r in failing.iter().take(5) {
        let rule = std::slice::from_ref(r);
        let (x, xs) = time_scan(&guest, &xccdf, rule).await;
        let (o, os) = time_scan(&guest, &oval, rule).await;
        same(rule, &xs, &os);
        one.0.extend(x);
        one.1.extend(o);
    }
    let one_x = stats("1 rule, xccdf (5 failing rules)", one.0);
    let one_o = stats("1 rule, oval (the same 5)", one.1);

    let ten: Vec<String> = passing.iter().take(10).cloned().collect();
    let (x, xs) = time_scan(&guest, &xccdf, &ten).await;
    let (o, os) = time_scan(&guest, &oval, &ten).await;
    same(&ten, &xs, &os);
    let ten_x = stats("10 rules, xccdf", x);
    let ten_o = stats("10 rules, oval", o);

    let t = Instant::now();
    let plan = side.engine.plan(&side.benchmark, &passing).unwrap();
    let planned = t.elapsed();
    let (x, xs) = time_scan(&guest, &xccdf, &passing).await;
    let (o, os) = time_scan(&guest, &oval, &passing).await;
    same(&passing, &xs, &os);
    let set_x = stats(&format!("regression set ({} rules), xccdf", passing.len()), x);
    let set_o = stats(&format!("regression set ({} rules), oval", passing.len()), o);
    println!(
        "regression set plan: {} rules by OVAL, {} routed to xccdf, {} fixed; document {} KB of {} KB; built in {:.2}s (then cached)",
        plan.stats.oval_rules,
        plan.stats.xccdf_rules,
        plan.stats.fixed_rules,
        plan.stats.document_bytes / 1024,
        plan.stats.datastream_bytes / 1024,
        planned.as_secs_f64()
    );
    println!(
        "median speed-up oval over xccdf: 1 rule {:.1}x, 10 rules {:.1}x, regression set {:.1}x",
        one_x / one_o,
        ten_x / ten_o,
        set_x / set_o
    );

    // The loop leaves the checks that walk a directory tree to the final scan (`RunState::final_set`).
    let walkers = oval.tree_walkers(&passing);
    let checked: Vec<String> = passing.iter().filter(|r| !walkers.contains(r)).cloned().collect();
    let (x, xs) = time_scan(&guest, &xccdf, &checked).await;
    let (o, os) = time_scan(&guest, &oval, &checked).await;
    same(&checked, &xs, &os);
    stats(&format!("regression set as the loop checks it ({} rules), xccdf", checked.len()), x);
    let loop_o = stats(&format!("regression set as the loop checks it ({} rules), oval", checked.len()), o);
    let (o1, os1) = time_scan(&guest, &oval.clone().with_lanes(1), &checked).await;
    same(&checked, &os1, &os);
    let loop_1 = stats(&format!("the same, oval in 1 lane (default {})", oval.lanes), o1);
    println!("{:<52} {:>7.1}x", format!("speed-up of {} lanes over 1", oval.lanes), loop_1 / loop_o);
    let t = Instant::now();
    oval.scan(&guest, &walkers).await.expect("scan");
    println!("{:<52} {:>7.2}s  (n=1)", format!("tree walkers, final scan only ({} rules), oval", walkers.len()), t.elapsed().as_secs_f64());
    println!("  {}", walkers.iter().map(|r| r.trim_start_matches(RULE)).collect::<Vec<_>>().join(", "));
    println!(
        "goals under TCG: 1 rule <= 3 s ({}), regression set <= 30 s (whole set {}; as the loop checks it {})",
        verdict(one_o <= 3.0),
        verdict(set_o <= 30.0),
        verdict(loop_o <= 30.0)
    );
}

fn verdict(ok: bool) -> &'static str {
    if ok { "met" } else { "NOT met" }
}

//! The OVAL engine against `oscap xccdf eval` on the real VM, rule by rule: for each state (a
//! snapshot) and each profile, one full `oscap xccdf eval` of the profile, then every rule it
//! selects through the OVAL engine (one `oscap oval eval`, plus one `xccdf eval` for the rules
//! routed there). Any rule whose result differs is listed, and the bench exits 1.
//!
//! TEMPER_BENCH_STATES: snapshots, comma separated (default `baseline`; add a stock run's last
//! checkpoint, e.g. from the versus_remediate bench's database, to cover rules that pass). A
//! state `SNAPSHOT+broken` or `SNAPSHOT+hostile` is the snapshot with `states/broken.sh` (every
//! tree walker failing) or `states/hostile.sh` (names with spaces, newlines, non-UTF-8 bytes) run
//! in the guest after its revert.
//! TEMPER_BENCH_PROFILES: default `anssi_bp28_high,standard`. TEMPER_BENCH_WALK=1: a third scan,
//! the OVAL engine with the one walk (`scan_walk`), compared and timed the same way; and the
//! profile's tree walkers rescanned alone, by oscap walking and by the walk, their results and
//! their failing tests' items compared (TEMPER_BENCH_WALK=walkers: only that).
//! TEMPER_BENCH_ALONE=RULE,...: instead, each rule rescanned alone, twice each way in turn:
//! `oscap xccdf eval --rule`, and the OVAL engine with the walk. Needs the test VM and the host's
//! copy of the datastream (`bash vm/up.sh`, `bash vm/fetch-ssg.sh`).
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use temper_core::ports::{Exec, Guest, Hypervisor};
use temper_core::scan::{OvalSide, Scanner};
use temper_scap::Outcome;
use temper_scap::oval::{OvalContent, OvalEngine};
use temper_target::{LibvirtConfig, LibvirtHypervisor, SshConfig, SshGuest};

#[path = "support/items.rs"]
mod items;

const DS: &str = "/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml";
const PREFIX: &str = "xccdf_org.ssgproject.content_profile_";
const RULE: &str = "xccdf_org.ssgproject.content_rule_";

fn list(var: &str, default: &str) -> Vec<String> {
    std::env::var(var).unwrap_or_else(|_| default.into()).split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect()
}

#[tokio::main]
async fn main() {
    let hv = LibvirtHypervisor::new(LibvirtConfig::from_env());
    let guest = SshGuest::new(SshConfig::from_env().unwrap()).unwrap();
    let host_ds = temper_journal::target::vm_dir().join("ssg/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml");
    let engine = Arc::new(OvalEngine::new(OvalContent::read(&host_ds).expect("the host's datastream: run `bash vm/fetch-ssg.sh`")));
    let mut mismatches = 0;
    println!(
        "{:<18} {:<28} {:>6} {:>30} {:>10} {:>10} {:>6} {:>9}",
        "profile", "state", "rules", "results (oval = xccdf)", "xccdf", "oval", "routed", "differ"
    );
    for state in list("TEMPER_BENCH_STATES", "baseline") {
        let (snapshot, script) = state.split_once('+').unwrap_or((&state, ""));
        hv.snapshot_revert(snapshot).await.unwrap_or_else(|e| panic!("snapshot {snapshot}: {e}"));
        guest.reconnect(Duration::from_secs(180)).await.unwrap();
        if !script.is_empty() {
            set_up(&guest, script).await;
        }
        for profile in list("TEMPER_BENCH_PROFILES", "anssi_bp28_high,standard") {
            let id = if profile.starts_with(PREFIX) { profile.clone() } else { format!("{PREFIX}{profile}") };
            let benchmark = Arc::new(temper_scap::read_benchmark(&host_ds, Some(&id)).unwrap());
            let xccdf = Scanner::new(DS, id.clone());
            let oval = xccdf.clone().with_oval(OvalSide { engine: engine.clone(), benchmark: benchmark.clone() });
            oval.check(&guest).await.expect("the guest's datastream is the host's");
            if let Ok(alone) = std::env::var("TEMPER_BENCH_ALONE") {
                mismatches += rescans(&guest, &xccdf, &oval, &alone, &state).await;
                continue;
            }
            if std::env::var("TEMPER_BENCH_WALK").is_ok_and(|v| v == "walkers") {
                let selected: Vec<String> = benchmark.selected_rules.iter().map(|r| r.id.clone()).collect();
                mismatches += walkers_alone(&guest, &oval, &selected).await;
                continue;
            }
            let t = Instant::now();
            let want = xccdf.scan(&guest, &[]).await.unwrap();
            let xccdf_secs = t.elapsed().as_secs_f64();
            let rules: Vec<String> =
                want.results.rule_results.iter().filter(|r| r.result != Outcome::NotSelected).map(|r| r.idref.clone()).collect();
            let t = Instant::now();
            let got = oval.scan(&guest, &rules).await.unwrap();
            let oval_secs = t.elapsed().as_secs_f64();
            let routed = engine.plan(&benchmark, &rules).unwrap().xccdf_rules().len();
            let differ = want.differences(&got, &rules);
            let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
            for r in rules.iter().filter(|r| want.outcome(r) == got.outcome(r)) {
                *counts.entry(want.outcome(r).map_or("none", Outcome::as_str)).or_default() += 1;
            }
            let summary: Vec<String> = counts.iter().map(|(k, v)| format!("{k} {v}")).collect();
            println!(
                "{:<18} {:<28} {:>6} {:>30} {:>9.1}s {:>9.1}s {:>6} {:>9}",
                profile.trim_start_matches(PREFIX),
                state,
                rules.len(),
                summary.join(", "),
                xccdf_secs,
                oval_secs,
                routed,
                differ.len()
            );
            for d in &differ {
                println!("  {d}");
            }
            mismatches += differ.len();
            if std::env::var("TEMPER_BENCH_WALK").is_ok_and(|v| v == "1") {
                mismatches += walked(&guest, &oval, &want, &rules).await;
            }
        }
    }
    if let Err(e) = hv.snapshot_revert("baseline").await {
        println!("reverting to baseline at the end: {e}");
    }
    println!("{mismatches} rule result(s) differ between the engines");
    if mismatches > 0 {
        std::process::exit(1);
    }
}

/// Each rule of `alone` (short ids) rescanned alone by oscap (`xccdf`) and by the OVAL engine
/// with the walk, twice each in turn. Returns how many results differ.
async fn rescans(guest: &SshGuest, xccdf: &Scanner, oval: &Scanner, alone: &str, state: &str) -> usize {
    let walk = walking(oval);
    let mut differ = 0;
    for short in alone.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let rule = [format!("{RULE}{short}")];
        let (mut theirs, mut ours) = (Vec::new(), Vec::new());
        let mut walked = None;
        for _ in 0..2 {
            for (scanner, secs) in [(xccdf, &mut theirs), (&walk, &mut ours)] {
                let t = Instant::now();
                let scan = scanner.scan(guest, &rule).await.unwrap();
                secs.push((t.elapsed().as_secs_f64(), scan.outcome(&rule[0])));
                walked = scan.walk.clone().or(walked);
            }
        }
        let mean = |v: &[(f64, Option<Outcome>)]| v.iter().map(|(s, _)| s).sum::<f64>() / v.len() as f64;
        let same = theirs.iter().chain(&ours).all(|(_, o)| *o == theirs[0].1);
        differ += usize::from(!same);
        println!(
            "  {short} alone at {state}: oscap {:?} {:.1}s, the walk {:?} {:.1}s: {:.2}x{}{}",
            theirs.iter().map(|(_, o)| o).collect::<Vec<_>>(),
            mean(&theirs),
            ours.iter().map(|(_, o)| o).collect::<Vec<_>>(),
            mean(&ours),
            mean(&ours) / mean(&theirs),
            walked.map_or(String::new(), |w| format!(
                " (its walk {:.1}s, {} entries; {} test(s) judged, {} object(s) fed, {} left to oscap, {} at run time)",
                w.secs,
                w.entries,
                w.tests,
                w.fed,
                w.left.len(),
                w.fell_back.len()
            )),
            if same { "" } else { "; results differ" }
        );
    }
    differ
}

/// `oval` with the one walk on.
fn walking(oval: &Scanner) -> Scanner {
    let mut walk = oval.clone();
    walk.walk = true;
    walk
}

/// Runs a state's script (`states/NAME.sh`) in the guest as root, from stdin.
async fn set_up(guest: &SshGuest, name: &str) {
    let script = match name {
        "broken" => include_str!("states/broken.sh"),
        "hostile" => include_str!("states/hostile.sh"),
        _ => panic!("no state script {name}: broken or hostile"),
    };
    let t = Instant::now();
    let out = guest.exec(Exec::script(script).timeout(Duration::from_secs(1200))).await.unwrap();
    assert!(out.success(), "states/{name}.sh: {:?}: {}", out.exit_code, out.stderr_str());
    println!("  {} ({:.1}s)", out.stdout_str().trim(), t.elapsed().as_secs_f64());
}

/// The one walk against oscap's results (`want`): the whole rule set, then the tree walkers
/// alone, each way timed. Returns how many results differ.
async fn walked(guest: &SshGuest, oval: &Scanner, want: &temper_core::scan::Scan, rules: &[String]) -> usize {
    let walk = walking(oval);
    let t = Instant::now();
    let got = walk.scan(guest, rules).await.unwrap();
    let all_secs = t.elapsed().as_secs_f64();
    let differ = want.differences(&got, rules);
    println!("  with the walk: {} rules in {all_secs:.1}s; {} differ", rules.len(), differ.len());
    for d in &differ {
        println!("    {d}");
    }
    differ.len() + walkers_alone(guest, oval, rules).await
}

/// The tree walkers of `rules` rescanned alone, by oscap walking and by the walk: their results
/// and their failing tests' items compared. Returns how many differ.
async fn walkers_alone(guest: &SshGuest, oval: &Scanner, rules: &[String]) -> usize {
    let walk = walking(oval);
    let walkers = oval.tree_walkers(rules);
    if walkers.is_empty() {
        println!("  no tree walkers");
        return 0;
    }
    let t = Instant::now();
    let alone = oval.scan(guest, &walkers).await.unwrap();
    let oscap_secs = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let walked = walk.scan(guest, &walkers).await.unwrap();
    let walk_secs = t.elapsed().as_secs_f64();
    let mut differ = alone.differences(&walked, &walkers);
    let (compared, item_differ) = items::differences(&alone, &walked, &walkers);
    differ.extend(item_differ);
    let failing = alone.failing(&walkers).len();
    println!(
        "  the {} tree walkers alone ({failing} failing): oscap walking {oscap_secs:.1}s, the walk {walk_secs:.1}s; {compared} failing tests' items compared; {} differ",
        walkers.len(),
        differ.len()
    );
    for w in &walkers {
        println!("    {:<60} {:?}", w.trim_start_matches(RULE), alone.outcome(w));
    }
    if let Some(w) = walked.walk.as_ref().filter(|w| !w.fell_back.is_empty()) {
        println!("    the walk ({} entries) could not complete {} object(s), so oscap walked for them:", w.entries, w.fell_back.len());
        for f in &w.fell_back {
            println!("      {f}");
        }
        println!("    rescanned so: {}", w.to_oscap.iter().map(|r| r.trim_start_matches(RULE)).collect::<Vec<_>>().join(", "));
    }
    for d in &differ {
        println!("    {d}");
    }
    differ.len()
}

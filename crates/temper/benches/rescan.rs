//! What a rescan costs on the real VM, against a full scan, and what makes it cheaper.
//! Prints min / median / max over several runs. Needs the test VM (`bash vm/up.sh`).
use std::time::{Duration, Instant};

use temper_core::ports::{Exec, Guest};
use temper_core::scan::Scanner;
use temper_target::{SshConfig, SshGuest};

const DS: &str = "/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml";
const STANDARD: &str = "xccdf_org.ssgproject.content_profile_standard";
const RUNS: usize = 3;

fn stats(name: &str, mut t: Vec<Duration>) -> f64 {
    t.sort();
    let s = |d: Duration| d.as_secs_f64();
    println!("{name:<58} min {:>6.2}s  median {:>6.2}s  max {:>6.2}s  (n={})", s(t[0]), s(t[t.len() / 2]), s(t[t.len() - 1]), t.len());
    s(t[t.len() / 2])
}

async fn time_scan(guest: &SshGuest, scanner: &Scanner, rules: &[String]) -> Vec<Duration> {
    let mut out = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        let scan = scanner.scan(guest, rules).await.expect("scan");
        assert!(rules.iter().all(|r| scan.outcome(r).is_some()), "every asked rule has a result");
        out.push(t.elapsed());
    }
    out
}

#[tokio::main]
async fn main() {
    let guest = SshGuest::new(SshConfig::from_env().unwrap()).unwrap();
    guest.exec(Exec::new(["true"])).await.expect("the test VM answers over SSH: run `bash vm/up.sh`");
    let mut validating = Scanner::new(DS, STANDARD);
    validating.skip_valid_rescans = false;
    let fast = Scanner::new(DS, STANDARD);

    let full = validating.scan(&guest, &[]).await.unwrap();
    let ids: Vec<String> =
        full.results.rule_results.iter().filter(|r| r.result.as_str() != "notselected").map(|r| r.idref.clone()).collect();
    let one = vec![ids[0].clone()];
    let ten: Vec<String> = ids.iter().take(10).cloned().collect();
    println!("rescan cost on the test VM (TCG), profile standard ({} rules), oscap in the guest over SSH", ids.len());
    let full_med = stats("full profile scan", time_scan(&guest, &validating, &[]).await);
    let one_med = stats("1 rule (--rule)", time_scan(&guest, &validating, &one).await);
    let one_fast = stats("1 rule, --skip-valid", time_scan(&guest, &fast, &one).await);
    stats("10 rules in one call", time_scan(&guest, &validating, &ten).await);
    stats("10 rules in one call, --skip-valid", time_scan(&guest, &fast, &ten).await);
    let all_fast = stats(&format!("all {} rules as --rule list, --skip-valid", ids.len()), time_scan(&guest, &fast, &ids).await);
    let mut load = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        guest.exec(Exec::new(["oscap", "info", DS]).timeout(Duration::from_secs(300))).await.unwrap();
        load.push(t.elapsed());
    }
    stats("oscap info (loading and validating the datastream only)", load);
    println!("1-rule rescan / full scan: {:.2}; with --skip-valid: {:.2}", one_med / full_med, one_fast / full_med);
    println!("rule + whole regression set in one call (--skip-valid) / full scan: {:.2}", all_fast / full_med);
}

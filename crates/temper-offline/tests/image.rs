//! The test VM's baseline image judged from outside: real qemu-img, the real file system, the
//! host's real oscap and SSG content.
mod common;

use temper_journal::offline::{NotJudged, OfflineBasis, OfflineVerdict};
use temper_offline::{DiskSource, Judge};

#[tokio::test(flavor = "multi_thread")]
async fn the_baseline_image_is_judged_from_outside() {
    let content = temper_scap::oval::OvalContent::read(common::datastream()).unwrap();
    let profile = std::env::var("TEMPER_OFFLINE_PROFILE").unwrap_or_else(|_| common::STANDARD.into());
    let benchmark = temper_scap::read_benchmark(common::datastream(), Some(&profile)).unwrap();
    let judge = Judge { content: &content, benchmark: &benchmark, scratch: None };
    let judged = judge.judge(&DiskSource::Image(common::base_image())).await.unwrap();
    let j = &judged.judgement;
    let (offline, live, not) = j.counts();
    eprintln!(
        "{} rules: {offline} offline, {live} live only, {not} not judged; tests {:?}; {} packages; tree {} entries {} bytes, {} special, {} skipped; {:.1} s ({:.1} s raw, {:.1} s extract+raw, {:.1} s scan)",
        j.verdicts.len(),
        judged.tests,
        judged.packages,
        judged.tree.entries,
        judged.tree.bytes,
        judged.tree.special,
        judged.tree.skipped.len(),
        j.times.total_secs,
        judged.raw_secs,
        j.times.extract_secs,
        j.times.scan_secs
    );
    for v in &j.verdicts {
        eprintln!("  {} {}", v.rule, v.verdict.line());
    }
    // The in-process loop tests replay a judgement recorded so (crates/temper/tests/data).
    if let Ok(path) = std::env::var("TEMPER_OFFLINE_RECORD") {
        std::fs::write(&path, serde_json::to_string_pretty(j).unwrap() + "\n").unwrap();
    }
    assert!(judged.packages > 100, "dpkg's status read: {} packages", judged.packages);
    assert!(judged.tree.skipped.is_empty(), "the copy is complete: {:?}", judged.tree.skipped);
    assert!(
        j.verdicts.iter().any(|v| matches!(v.verdict, OfflineVerdict::Offline { basis: OfflineBasis::Host, .. })),
        "rules whose platform is a package are judged from dpkg's status"
    );
    let errors: Vec<&str> = j
        .verdicts
        .iter()
        .filter(|v| {
            matches!(v.verdict, OfflineVerdict::NotJudged { why: NotJudged::Error | NotJudged::Unknown | NotJudged::Unsupported, .. })
        })
        .map(|v| v.rule.as_str())
        .collect();
    assert!(errors.is_empty(), "every rule is judged, live only or on the xccdf path: {errors:?}");
}

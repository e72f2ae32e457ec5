//! A fleet of two with `temper fleet run --plan-from a` (issue 31): `a` runs the full loop alone,
//! then `b` applies `a`'s proven plan. Then `b` runs the full loop alone (`--no-plan`), from its
//! baseline again.
//! Prints each run's wall time, what it fixed, escalated and left failing, how `b`'s plan steps
//! ended, and `b`'s time with the plan over its time with the full loop, from `temper report
//! fleet NAME --format json`.
//!
//! The stock agent on TEMPER_BENCH_PROFILE (default `standard`; `anssi_bp28_high` takes about
//! two hours under TCG), the `debian12-anssi` skill. Needs both guests: `bash vm/up.sh --count 2`.
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

#[path = "support/guests.rs"]
mod guests;
#[path = "support/settings.rs"]
mod settings;

/// `temper fleet run ARGS` from both guests' baselines, and its wall time; the guests go back to
/// their baselines after.
async fn fleet(dir: &Path, db: &Path, domains: &[String], args: &[&str]) -> Duration {
    let had = guests::at_baseline(domains);
    let started = Instant::now();
    let out = guests::temper(dir, db, &[&["fleet", "run"], args].concat()).await;
    let wall = started.elapsed();
    guests::tidy(domains, &had);
    // 2: rules are left failing (escalated), as on any real profile.
    assert!(
        matches!(out.status.code(), Some(0 | 2)),
        "temper fleet run {args:?}: {:?}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    wall
}

/// The fleet report's row for `target`.
async fn row(dir: &Path, db: &Path, fleet: &str, target: &str) -> Value {
    let out = guests::temper(dir, db, &["report", "fleet", fleet, "--format", "json"]).await;
    assert!(out.status.success(), "temper report fleet {fleet}: {}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).expect("the fleet report's JSON");
    let rows = report["targets"].as_array().expect("targets");
    rows.iter().find(|r| r["target"] == target).unwrap_or_else(|| panic!("no row for {target} in fleet {fleet}: {report}")).clone()
}

/// One run's row; the numbers as text, since a JSON value ignores the width.
fn print_row(how: &str, r: &Value) {
    println!(
        "{:<28} {:>9.1} s {:>6} {:>10} {:>14} {:>8}",
        how,
        r["wall_secs"].as_f64().unwrap_or(f64::NAN),
        r["fixed"].to_string(),
        r["escalated"].to_string(),
        r["still_failing"].to_string(),
        r["healthy"].to_string()
    );
}

#[tokio::main]
async fn main() {
    let profile = std::env::var("TEMPER_BENCH_PROFILE").unwrap_or_else(|_| "standard".into());
    let profile = format!("xccdf_org.ssgproject.content_profile_{profile}");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("temper.db");
    let domains = guests::two_targets(dir.path());
    let run_args = ["--", "--agent", "stock", "--profile", profile.as_str()];

    println!("a fleet of two (stock, {profile}): a's full loop, then b with a's plan; then b's full loop alone (--no-plan)");
    let with_plan = fleet(dir.path(), &db, &domains, &[&["--fleet", "plan", "--plan-from", "a"][..], &run_args].concat()).await;
    // b's run with a's plan is b's last proven run of this job: --no-plan, or b would apply it.
    let alone = fleet(dir.path(), &db, &domains, &[&["--fleet", "full", "--targets", "b"][..], &run_args, &["--no-plan"]].concat()).await;

    let a = row(dir.path(), &db, "plan", "a").await;
    let b_plan = row(dir.path(), &db, "plan", "b").await;
    let b_full = row(dir.path(), &db, "full", "b").await;
    assert_eq!(b_plan["plan_from"]["kind"], "applied", "b was handed a's plan: {}", b_plan["plan_from"]);

    println!("{:<28} {:>11} {:>6} {:>10} {:>14} {:>8}", "run", "wall", "fixed", "escalated", "still failing", "healthy");
    print_row("a: full loop", &a);
    print_row("b: a's plan", &b_plan);
    print_row("b: full loop, alone", &b_full);
    println!("b's plan steps: {}", b_plan["plan_counts"]);
    println!("b's plan: {}", b_plan["plan"].as_str().unwrap_or("-"));
    let (p, f) = (b_plan["wall_secs"].as_f64().unwrap(), b_full["wall_secs"].as_f64().unwrap());
    println!("{}", settings::line());
    println!("b with a's plan over b with the full loop: {:.2}x ({p:.1} s against {f:.1} s)", p / f);
    println!(
        "fleet wall times: --plan-from a {:.1} s (a, then b); b alone with the full loop {:.1} s",
        with_plan.as_secs_f64(),
        alone.as_secs_f64()
    );
}

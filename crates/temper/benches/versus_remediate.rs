//! `temper run --agent stock` against `oscap xccdf eval --remediate`, on the same VM and profile,
//! each from the baseline snapshot and each followed by an independent full rescan and the
//! health check. Prints rules fixed, still failing, newly failing (failing at the end, not at
//! baseline: another fix made them applicable), health and wall time for both, and the ratio.
//!
//! TEMPER_BENCH_PROFILE (default anssi_bp28_high; `standard` is a quick one) and optionally
//! TEMPER_BENCH_RULES (comma-separated short ids) restrict both sides alike. Rules the skill
//! skips, waives or defers (partitioning, the grub password, the sudo settings that would lock
//! the harness out, the hours-long AIDE database build) are out of scope for both: oscap gets
//! them as `--skip-rule`. TEMPER_BENCH_BASELINE (default `baseline`) starts both sides from
//! another snapshot: a state of your own, with rules you broke.
//!
//! TEMPER_BENCH_ARGS (space-separated) go to `temper run` as they are, say `--no-reboot-proof`,
//! and name the database's folder apart; with TEMPER_BENCH_TEMPER_ONLY=1 the oscap side is left
//! out (to set one temper run against another).
//!
//! Each oscap pass runs in a transient systemd unit of the guest's (`detached.rs`), so that an SSH
//! drop neither ends it nor its timing; a pass that idles five minutes (deadlocked) runs again.
//!
//! oscap's one pass leaves failing the rules its own fixes made applicable (installing auditd or
//! aide brings in their rules); temper fixes those in its run. So that both sides are also set
//! side by side on the same work, oscap then runs again from where its last pass left off, until
//! a pass leaves no more rules newly failing or fixes nothing more (at most
//! [`MORE_PASSES`] more): the table's `oscap --remediate xN` row, timed over all its passes (the
//! scans between them not counted), and a second ratio. TEMPER_BENCH_ONE_PASS=1 leaves them out.
//!
//! TEMPER_BENCH_SCOPE=baseline sets them side by side on oscap's one pass instead: temper gets
//! `--rules` with every rule failing at baseline, so that it leaves the rules fixes make
//! applicable as oscap's pass does (its scans, checks and proof stay those of the whole
//! profile); oscap runs its one pass as ever. Its database has a folder of its own.
//!
//! A full ANSSI run takes 36 to 51 min for temper's side under TCG. With TEMPER_BENCH_CONTINUE=1 a run
//! cut off during temper's side (its database is kept under `target/bench/<profile>/`) goes on
//! with `temper resume`; temper's wall time is then the sum of its segments, read from the
//! run's event timestamps (a segment ends at its last event). With TEMPER_BENCH_READ=1 nothing
//! runs: the bench reads the last run in that database and prints its time table and first pass.
//!
//! TEMPER_BENCH_OSCAP_ONLY=1 runs oscap's side alone: its rules failing at baseline and its scope
//! are taken from the last temper run in the database the other settings name, or, with none
//! there, from its own scan of the baseline and the skill's skips, waivers and deferrals
//! (TEMPER_BENCH_SKILL, default `debian12-anssi`), as a run of that skill takes them. With it, the
//! two sides can run at once, one per guest (`TEMPER_DOMAIN`, `TEMPER_SSH_PORT`), under the same
//! load: say the full loop's plan on one guest beside oscap on the other. TEMPER_BENCH_SYNC=DIR
//! lines up their starts: each side, once its untimed baseline scan is done, leaves a file in DIR
//! and waits for TEMPER_BENCH_SYNC_SIDES (2) of them before its timed part
//! (`tests/plan/beside-oscap.sh`).
use std::collections::BTreeSet;
use std::time::Duration;

use temper_core::checks;
use temper_core::ports::{Exec, Guest, Hypervisor};
use temper_core::scan::Scanner;
use temper_journal::prelude::*;
use temper_journal::{Event, EventData, EventKind, RuleStatus, ScanKind, StoredTurn};
use temper_target::{LibvirtConfig, LibvirtHypervisor, SshConfig, SshGuest};

#[path = "versus_remediate/detached.rs"]
mod detached;
#[path = "support/settings.rs"]
mod settings;

const DS: &str = "/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml";
const PREFIX: &str = "xccdf_org.ssgproject.content_profile_";

struct BenchOutcome {
    judged: BenchJudged,
    wall: Duration,
    harness_pct: Option<f64>,
}

/// What the independent full scan and health check found after one side.
struct BenchJudged {
    fixed: BTreeSet<String>,
    still_failing: usize,
    /// Failing at the end, passing or not applicable at baseline (other fixes made them apply).
    newly_failing: usize,
    healthy: bool,
}

const TEMPER: &str = "temper run --agent stock";

fn row(name: &str, o: &BenchOutcome) -> String {
    format!(
        "{name:<26} {:>7} {:>14} {:>14} {:>9} {:>10.1}s {:>10}",
        o.judged.fixed.len(),
        o.judged.still_failing,
        o.judged.newly_failing,
        o.judged.healthy,
        o.wall.as_secs_f64(),
        o.harness_pct.map(|p| format!("{p:.2}%")).unwrap_or("-".into())
    )
}

/// The run's wall time over its segments: from its start, or a `resume` event, to the last event
/// before the next resume (or the end).
fn active_time(started_at: &str, events: &[Event]) -> Duration {
    let at = |s: &str| chrono::DateTime::parse_from_rfc3339(s).unwrap();
    let (mut total, mut start, mut last) = (chrono::TimeDelta::zero(), at(started_at), at(started_at));
    for e in events {
        if e.kind == EventKind::Resume {
            total += last - start;
            start = at(&e.ts);
        }
        last = at(&e.ts);
    }
    (total + (last - start)).to_std().unwrap_or_default()
}

/// temper's time up to its first final scan, and the rules that scan reopened: the one pass over
/// the rules failing at baseline that oscap makes too. `None` when the run was resumed (segments).
fn first_pass(started_at: &str, events: &[Event]) -> Option<(Duration, usize)> {
    let at = |s: &str| chrono::DateTime::parse_from_rfc3339(s).ok();
    if events.iter().any(|e| e.kind == EventKind::Resume) {
        return None;
    }
    let i = events.iter().position(|e| matches!(e.data, EventData::Scan { kind: ScanKind::Final, .. }))?;
    let reopened = events[i + 1..]
        .iter()
        .take_while(|e| e.kind != EventKind::Pick)
        .filter(|e| matches!(e.data, EventData::RuleApplicable { status: RuleStatus::Pending }))
        .count();
    (at(&events[i].ts)? - at(started_at)?).to_std().ok().map(|d| (d, reopened))
}

/// Where temper's wall time went (`journal::TimeSplit`, as the report gives it): each part, the
/// rest (snapshots, restores, picks), and the proof (all but the fix scripts) over the fix scripts.
fn time_table(events: &[Event], attempts: &[temper_journal::Attempt], turns: &[StoredTurn], wall: Duration) {
    use temper_journal::{Part, TimeSplit};
    let t = TimeSplit::of(events, attempts, turns, wall.as_secs_f64());
    let total = t.wall_secs;
    println!("where temper's {total:.0} s went:");
    println!("  {:<38} {:>6} {:>10} {:>9} {:>7}", "step", "count", "total", "each", "share");
    for p in &t.parts {
        let (name, n, s) = (p.part.says(), p.count, p.secs);
        let each = if n > 0 { format!("{:.1}s", s / n as f64) } else { "-".into() };
        println!("  {name:<38} {n:>6} {s:>9.1}s {each:>9} {:>6.1}%", 100.0 * s / total);
    }
    let rest = "the rest";
    println!("  {rest:<38} {:>6} {:>9.1}s {:>9} {:>6.1}%", "", t.rest_secs, "", 100.0 * t.rest_secs / total);
    for p in &t.rest {
        let (name, n, s) = (format!("  {}", p.part.says()), p.count, p.secs);
        let each = if n > 0 { format!("{:.2}s", s / n as f64) } else { "-".into() };
        println!("  {name:<38} {n:>6} {s:>9.1}s {each:>9} {:>6.1}%", 100.0 * s / total);
    }
    let unnamed = "  unnamed (picks, evidence, the store)";
    println!("  {unnamed:<38} {:>6} {:>9.1}s {:>9} {:>6.1}%", "", t.unnamed_secs, "", 100.0 * t.unnamed_secs / total);
    if let Some(r) = t.proof_ratio {
        println!(
            "the proof (all but the fix scripts): {:.1}s, {r:.2} times the fix scripts' {:.1}s",
            t.proof_secs,
            t.secs(Part::FixScripts)
        );
    }
}

/// One temper run's figures without oscap's side: its first pass and where its time went.
/// The fixes in force at the end by where they came from, the rules derived fixes fixed, and
/// every rule left escalated with its reason (oscap's content has no fix for the derived ones).
fn by_source(attempts: &[temper_journal::Attempt], rows: &[temper_journal::Rule]) {
    let kept: Vec<_> = attempts.iter().filter(|a| a.in_force()).collect();
    let mut n: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for a in &kept {
        *n.entry(a.spec.source.as_str()).or_default() += 1;
    }
    let counts: Vec<String> = n.iter().map(|(s, k)| format!("{s} {k}")).collect();
    println!("fixes in force at the end, by source: {}", counts.join(", "));
    let derived = kept.iter().filter(|a| a.spec.source == temper_journal::FixSource::Derived);
    let derived: Vec<&str> = derived.map(|a| temper_scap::short_rule_id(&a.spec.rule_id)).collect();
    println!("fixed by derived fixes ({}): {}", derived.len(), derived.join(", "));
    let escalated: Vec<_> = rows.iter().filter(|r| r.status == RuleStatus::Escalated).collect();
    println!("escalated ({}):", escalated.len());
    let mut classes: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for r in escalated {
        let reason = r.reason.as_deref().unwrap_or("");
        let class = derived_class(reason).unwrap_or("-");
        *classes.entry(class).or_default() += 1;
        println!("  {} [{class}]: {reason}", temper_scap::short_rule_id(&r.rule_id));
    }
    let by_class: Vec<String> = classes.iter().map(|(c, k)| format!("{c} {k}")).collect();
    println!("escalated by the derived tier's class: {}", by_class.join(", "));
}

/// The derived tier's class in an escalation's reason (`no derived fix (CLASS)`).
fn derived_class(reason: &str) -> Option<&str> {
    reason.split_once("no derived fix (").and_then(|(_, rest)| rest.split_once(')')).map(|(class, _)| class)
}

fn solo_figures(events: &[Event], attempts: &[temper_journal::Attempt], turns: &[StoredTurn], started_at: &str) {
    if let Some((d, reopened)) = first_pass(started_at, events) {
        println!("temper's first pass (to its first final scan): {:.1}s; that scan reopened {reopened} rules", d.as_secs_f64());
    }
    time_table(events, attempts, turns, active_time(started_at, events));
}

fn flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| v == "1")
}

/// The snapshot both sides start from.
fn baseline() -> String {
    std::env::var("TEMPER_BENCH_BASELINE").unwrap_or_else(|_| "baseline".into())
}

async fn restore(hv: &LibvirtHypervisor, guest: &SshGuest) {
    hv.snapshot_revert(&baseline()).await.unwrap();
    guest.reconnect(Duration::from_secs(180)).await.unwrap();
}

/// `oscap --remediate` from the baseline, timed, or (`again`) from where its last pass left
/// off, in a unit of its own ([`detached`]). A pass that idles (deadlocked) is killed and run
/// again from the same start, up to three times. The time is that of the pass that finished.
async fn remediate(hv: &LibvirtHypervisor, guest: &SshGuest, argv: &[String], again: bool) -> Duration {
    for tried in 1..=3 {
        if !again {
            restore(hv, guest).await;
        }
        // A pass that leaves no results must not be split by the last pass's.
        guest.exec(Exec::new(["rm", "-f", RESULTS])).await.expect("rm in the guest");
        match detached::run(guest, argv).await {
            detached::Pass::Exited { status, took, started } => {
                println!("oscap --remediate: exited {status} after {:.1}s", took.as_secs_f64());
                match detached::split(guest, RESULTS, started, took).await {
                    Ok(s) => println!(
                        "  of it: evaluation {:.0}s, then fixes {:.0}s ({} fixed, {} failed)",
                        s.evaluation.as_secs_f64(),
                        s.fixes.as_secs_f64(),
                        s.fixed,
                        s.errors
                    ),
                    Err(e) => println!("  its split is unknown: {e}"),
                }
                return took;
            }
            detached::Pass::Idle => {
                println!("oscap --remediate try {tried}: idled for {:?} (deadlocked): killed", detached::IDLE_FOR);
            }
        }
    }
    panic!("oscap --remediate deadlocked three times");
}

/// Where a pass leaves its results in the guest.
const RESULTS: &str = "/var/tmp/remediate.xml";

/// `oscap xccdf eval --remediate` of the profile (or `rules`), leaving the rules out of scope.
fn remediate_argv(profile: &str, rules: &[String], out_of_scope: &[String]) -> Vec<String> {
    let mut argv: Vec<String> = ["oscap", "xccdf", "eval", "--remediate", "--profile", profile].map(String::from).to_vec();
    for r in rules {
        argv.extend(["--rule".into(), r.clone()]);
    }
    for r in out_of_scope {
        argv.extend(["--skip-rule".into(), r.clone()]);
    }
    argv.extend(["--results".into(), RESULTS.into(), DS.into()]);
    argv
}

/// What the independent scan after each side is judged against: `ignore` is failing at
/// baseline or out of scope, so not newly failing.
struct BenchJudge<'a> {
    scanner: &'a Scanner,
    failing: &'a BTreeSet<String>,
    ignore: &'a BTreeSet<String>,
}

/// oscap's passes from the baseline, each timed from the first's start (the judging scans left
/// out), then the guest restored: one pass, or (not `one_pass`) more while rules are left newly
/// failing and the last pass got somewhere. Each row is printed as soon as it is known.
async fn oscap_passes(hv: &LibvirtHypervisor, guest: &SshGuest, argv: &[String], j: &BenchJudge<'_>, one_pass: bool) -> Vec<BenchOutcome> {
    let mut passes: Vec<BenchOutcome> = Vec::new();
    while passes.len() <= MORE_PASSES {
        let last = passes.last();
        let wall = last.map_or(Duration::ZERO, |o| o.wall) + remediate(hv, guest, argv, last.is_some()).await;
        let next = BenchOutcome { judged: judge(j, guest).await, wall, harness_pct: None };
        println!("{}", row(&oscap_name(passes.len() + 1), &next));
        let gained =
            last.is_none_or(|l| next.judged.newly_failing < l.judged.newly_failing || next.judged.fixed.len() > l.judged.fixed.len());
        let go_on = gained && next.judged.newly_failing > 0 && !one_pass;
        passes.push(next);
        if !go_on {
            break;
        }
    }
    restore(hv, guest).await;
    passes
}

/// oscap's passes after its first, at most.
const MORE_PASSES: usize = 3;

/// The table's name for oscap after `n` passes.
fn oscap_name(n: usize) -> String {
    if n == 1 { "oscap --remediate".into() } else { format!("oscap --remediate x{n}") }
}

/// The rules of `scan` the skill skips, waives or defers, as a run of it takes them out of scope.
fn dispositioned(scan: &temper_core::scan::Scan, repo: &std::path::Path) -> Vec<String> {
    let name = std::env::var("TEMPER_BENCH_SKILL").unwrap_or_else(|_| "debian12-anssi".into());
    let skill = temper_core::skill::Skill::load(repo.join("skills").join(&name)).unwrap();
    let all = scan.results.rule_results.iter().map(|r| &r.idref);
    all.filter(|r| skill.disposition(temper_scap::short_rule_id(r)).is_some()).cloned().collect()
}

/// With TEMPER_BENCH_SYNC=DIR, waits until TEMPER_BENCH_SYNC_SIDES (2) sides have left a file
/// there, this one included, so that their timed parts start together.
async fn sync_start() {
    let Ok(dir) = std::env::var("TEMPER_BENCH_SYNC") else { return };
    let sides: usize = std::env::var("TEMPER_BENCH_SYNC_SIDES").ok().and_then(|n| n.parse().ok()).unwrap_or(2);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(std::path::Path::new(&dir).join(std::process::id().to_string()), b"").unwrap();
    while std::fs::read_dir(&dir).unwrap().count() < sides {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    println!("started with the other side at {}", chrono::Utc::now().format("%H:%M:%S"));
}

/// Independent check: a full scan and the health check. A VM that can no longer be scanned
/// (SSH or sudo gone) counts as nothing fixed and unhealthy.
async fn judge(&BenchJudge { scanner, failing, ignore }: &BenchJudge<'_>, guest: &SshGuest) -> BenchJudged {
    let scan = match guest.reconnect(Duration::from_secs(180)).await {
        Ok(()) => scanner.scan(guest, &[]).await.map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    let scan = match scan {
        Ok(s) => s,
        Err(e) => {
            println!("  the VM could not be scanned after this side: {e}");
            return BenchJudged { fixed: BTreeSet::new(), still_failing: failing.len(), newly_failing: 0, healthy: false };
        }
    };
    let now_failing: BTreeSet<String> = scan.with(temper_scap::Outcome::Fail).into_iter().collect();
    let fixed = failing.iter().filter(|r| scan.outcome(r) == Some(temper_scap::Outcome::Pass)).cloned().collect();
    let healthy = checks::health(guest, "/usr/local/bin/mission-healthcheck").await.map(|h| h.ok).unwrap_or(false);
    let (still_failing, newly_failing) = (now_failing.intersection(failing).count(), now_failing.difference(ignore).count());
    BenchJudged { fixed, still_failing, newly_failing, healthy }
}

#[tokio::main]
async fn main() {
    let profile = std::env::var("TEMPER_BENCH_PROFILE").unwrap_or_else(|_| "anssi_bp28_high".into());
    let profile = if profile.starts_with(PREFIX) { profile } else { format!("{PREFIX}{profile}") };
    let rules: Vec<String> = std::env::var("TEMPER_BENCH_RULES")
        .map(|r| r.split(',').filter(|s| !s.is_empty()).map(|s| format!("xccdf_org.ssgproject.content_rule_{s}")).collect())
        .unwrap_or_default();
    let hv = LibvirtHypervisor::new(LibvirtConfig::from_env());
    let guest = SshGuest::new(SshConfig::from_env().unwrap()).unwrap();
    let scanner = Scanner::new(DS, profile.clone());
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    // Kept after the run, to read what temper did: `temper --db … report latest`.
    let extra: Vec<String> = std::env::var("TEMPER_BENCH_ARGS").unwrap_or_default().split_whitespace().map(String::from).collect();
    let baseline_scope = std::env::var("TEMPER_BENCH_SCOPE").is_ok_and(|v| v == "baseline");
    // On oscap's one pass, more passes would do work temper leaves.
    let one_pass = flag("TEMPER_BENCH_ONE_PASS") || baseline_scope;
    // A folder name: an argument's slashes (a plan's path) never make it climb or nest.
    let mut tag: String = extra.iter().map(|a| format!("-{}", a.trim_start_matches('-').replace(['/', '.'], "_"))).collect();
    if baseline_scope {
        tag.push_str("-baseline-scope");
    }
    let db = repo.join("target/bench").join(format!("{}-{}{tag}", profile.trim_start_matches(PREFIX), baseline()));
    let saved = db.join("failing-at-baseline.json");
    if flag("TEMPER_BENCH_READ") {
        let store = temper_store::Store::open(db.join("temper.db").to_str().unwrap()).await.unwrap();
        let run = store.latest_run().await.unwrap().expect("no run in this database");
        let events = store.events(run.id, None).await.unwrap();
        println!("run {} in {}", run.id, db.display());
        let attempts = store.attempts(run.id).await.unwrap();
        solo_figures(&events, &attempts, &store.turns(run.id).await.unwrap(), &run.started_at);
        by_source(&attempts, &store.rules(run.id).await.unwrap());
        return;
    }
    let oscap_only = flag("TEMPER_BENCH_OSCAP_ONLY");
    let go_on = (flag("TEMPER_BENCH_CONTINUE") || oscap_only) && saved.exists();
    let skill_scope = db.join("out-of-scope-by-skill.json");

    // Every rule failing at baseline; `failing` is those of them in the run's scope.
    let at_baseline: BTreeSet<String> = if go_on {
        serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap()
    } else {
        let _ = std::fs::remove_dir_all(&db);
        std::fs::create_dir_all(&db).unwrap();
        restore(&hv, &guest).await;
        let before = scanner.scan(&guest, &[]).await.unwrap();
        let at_baseline = before.with(temper_scap::Outcome::Fail).into_iter().collect();
        std::fs::write(&saved, serde_json::to_vec(&at_baseline).unwrap()).unwrap();
        if oscap_only {
            std::fs::write(&skill_scope, serde_json::to_vec(&dispositioned(&before, &repo)).unwrap()).unwrap();
        }
        at_baseline
    };
    let mut failing = at_baseline.clone();
    if !rules.is_empty() {
        failing.retain(|r| rules.contains(r));
    }
    println!("profile {profile}: {} rules failing at baseline{}", failing.len(), if rules.is_empty() { "" } else { " (restricted)" });

    // temper, stock agent.
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_temper"));
    if oscap_only {
        let from =
            if skill_scope.exists() { "the skill's".to_string() } else { format!("that of the last temper run in {}", db.display()) };
        println!("oscap's side alone; the scope is {from}");
    } else if go_on {
        println!("continuing temper's run with `temper resume`");
        cmd.args(["resume", "--quiet", "--json"]);
    } else {
        cmd.args(["run", "--agent", "stock", "--profile", &profile, "--quiet", "--json"]);
        if extra.iter().any(|a| a == "--plan") {
            println!("temper runs with the plan in TEMPER_BENCH_ARGS: {}", extra.join(" "));
        } else {
            // The full loop, as the README's first run on a fresh machine: this database's earlier
            // run would otherwise hand on its proven plan (the default on a second run).
            cmd.arg("--no-plan");
            println!("temper runs with --no-plan: the full loop, as a first run (no earlier run's plan)");
        }
        if baseline_scope {
            let scope: Vec<&str> = failing.iter().map(String::as_str).collect();
            cmd.args(["--rules", &scope.join(",")]);
            println!("temper's scope: the {} rules failing at baseline, as oscap's one pass", scope.len());
        } else if !rules.is_empty() {
            cmd.args(["--rules", &rules.join(",")]);
        }
        cmd.args(&extra);
    }
    // The README's settings: a fix is stopped for stalling, not for being slow (aide-common's
    // postinst works for 20 minutes under TCG), so no limit is raised here.
    println!("{}", settings::line());
    cmd.env("TEMPER_BASELINE", baseline());
    cmd.env("TEMPER_CONFIG", db.join("none.toml")).env("TEMPER_DB", db.join("temper.db")).env("TEMPER_SKILLS_DIR", repo.join("skills"));
    if !oscap_only {
        sync_start().await;
    }
    let (summary, stderr) = match oscap_only {
        true => (serde_json::Value::Null, String::new()),
        false => {
            let out = cmd.output().await.unwrap();
            (serde_json::from_slice(&out.stdout).unwrap_or_default(), String::from_utf8_lossy(&out.stderr).into_owned())
        }
    };
    let store = temper_store::Store::open(db.join("temper.db").to_str().unwrap()).await.unwrap();
    // None on oscap's side alone with the scope from the skill.
    let run = match store.latest_run().await.unwrap() {
        Some(r) => Some(r.id),
        None if oscap_only => None,
        None => panic!("temper recorded no run: {stderr}"),
    };
    let rows = match run {
        Some(run) => store.rules(run).await.unwrap(),
        None => Vec::new(),
    };
    let out_of_scope: Vec<String> = match skill_scope.exists() {
        true => serde_json::from_slice(&std::fs::read(&skill_scope).unwrap()).unwrap(),
        false => rows.iter().filter(|r| r.status.dispositioned()).map(|r| r.rule_id.clone()).collect(),
    };
    let mut ignore = at_baseline.clone();
    ignore.extend(out_of_scope.iter().cloned());
    failing.retain(|r| !out_of_scope.contains(r));
    println!("{} rules failing at baseline are in scope ({} skipped, waived or deferred by the skill)", failing.len(), out_of_scope.len());
    let argv = remediate_argv(&profile, &rules, &out_of_scope);
    let j = BenchJudge { scanner: &scanner, failing: &failing, ignore: &ignore };
    if oscap_only {
        sync_start().await;
        oscap_passes(&hv, &guest, &argv, &j, one_pass).await;
        return;
    }
    let run = run.expect("temper's side recorded its run");
    let events = store.events(run, None).await.unwrap();
    let temper_wall = active_time(&store.run(run).await.unwrap().started_at, &events);
    let segments = 1 + events.iter().filter(|e| e.kind == EventKind::Resume).count();
    let batch = store.run(run).await.unwrap().regression_every;
    let count = |kind: EventKind| events.iter().filter(|e| e.kind == kind).count();
    let temper = BenchOutcome { judged: judge(&j, &guest).await, wall: temper_wall, harness_pct: summary["harness_pct"].as_f64() };
    // Each side's figures as soon as they are known: a long run may be cut off before the other.
    println!("{}", row(TEMPER, &temper));
    println!("  {}", settings::line());
    println!("  temper ran in {segments} segment(s); its wall time is their sum");
    if flag("TEMPER_BENCH_TEMPER_ONLY") {
        println!("temper statuses: {}; rebooted: {}", summary["statuses"], summary["rebooted"]);
        let attempts = store.attempts(run).await.unwrap();
        solo_figures(&events, &attempts, &store.turns(run).await.unwrap(), &store.run(run).await.unwrap().started_at);
        by_source(&attempts, &rows);
        return;
    }

    // oscap --remediate, from the same baseline.
    let passes = oscap_passes(&hv, &guest, &argv, &j, one_pass).await;
    let oscap = &passes[0];

    println!("{:<26} {:>7} {:>14} {:>14} {:>9} {:>11} {:>10}", "", "fixed", "still failing", "newly failing", "healthy", "wall", "harness");
    println!("{}", row(TEMPER, &temper));
    let ratio = |o: &BenchOutcome| temper.wall.as_secs_f64() / o.wall.as_secs_f64();
    for (n, o) in passes.iter().enumerate().filter(|(n, _)| *n == 0 || *n == passes.len() - 1) {
        println!("{}", row(&oscap_name(n + 1), o));
        let of = if n == 0 { "oscap".to_string() } else { format!("oscap's {} passes", n + 1) };
        println!("wall time ratio temper / {of}: {:.2}", ratio(o));
    }
    if let Some((d, reopened)) = first_pass(&store.run(run).await.unwrap().started_at, &events) {
        println!(
            "temper's first pass (to its first final scan, reboot proof included): {:.1}s, ratio {:.2}; that scan reopened {reopened} rules other fixes made applicable",
            d.as_secs_f64(),
            d.as_secs_f64() / oscap.wall.as_secs_f64()
        );
    }
    println!("temper statuses: {}", summary["statuses"]);
    println!(
        "temper regression checks: every {batch:?} fixes; {} batch checks, {} regressions found; database {}",
        count(EventKind::RegressionCheck),
        count(EventKind::RegressionFound),
        db.join("temper.db").display()
    );
    let attempts = store.attempts(run).await.unwrap();
    time_table(&events, &attempts, &store.turns(run).await.unwrap(), temper_wall);
    by_source(&attempts, &rows);
    let status =
        |r: &String| rows.iter().find(|x| &x.rule_id == r).map(|x| format!("{} {}", x.status, x.reason.clone().unwrap_or_default()));
    for r in oscap.judged.fixed.difference(&temper.judged.fixed) {
        println!("  fixed by oscap, not temper: {} (temper: {})", temper_scap::short_rule_id(r), status(r).unwrap_or_default());
    }
    for r in temper.judged.fixed.difference(&oscap.judged.fixed) {
        println!("  fixed by temper, not oscap: {}", temper_scap::short_rule_id(r));
    }
}

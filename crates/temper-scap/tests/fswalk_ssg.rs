//! The one walk on real SSG 0.1.76 content, against oscap on this host: each tree-walking rule's
//! result from the document cut for the walk (oscap no longer walks; the variables come back
//! through probes; the walked tests are judged on the host over one `find`), and from oscap
//! walking as it always has. They must agree rule for rule.
mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use temper_scap::fswalk::{COLLECT, Listing};
use temper_scap::oval::{CollectedItem, Criterion, MAX_ITEMS, OvalContent, OvalPlan, OvalReport};
use temper_scap::{Outcome, read_benchmark};

const DS: &str = "ssg-debian12-ds.xml";
const PROFILE: &str = "anssi_bp28_high";

fn rule(short: &str) -> String {
    format!("xccdf_org.ssgproject.content_rule_{short}")
}

/// `oscap oval eval` of a plan, its schema checked: the results document, and oscap's seconds.
fn oval_eval(dir: &Path, stem: &str, plan: &OvalPlan) -> (Vec<u8>, f64) {
    let (results, took) = common::oval::oval_eval_files(dir, stem, plan, false);
    (std::fs::read(&results).unwrap(), took.as_secs_f64())
}

fn walk(roots: &[&str]) -> (Listing, f64) {
    let t = Instant::now();
    let mut child = Command::new("sh").args(["-s", "--", "--"]).args(roots).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(COLLECT.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    (Listing::parse(out.stdout).expect("the walk parses"), t.elapsed().as_secs_f64())
}

/// Each rule's result both ways, and how many walked tests' items were compared with oscap's.
struct Both {
    results: Vec<(String, Outcome, Outcome)>,
    items_compared: usize,
    /// Tests oscap ran both ways whose results were compared.
    tests_compared: usize,
}

/// Both ways for `rules`, the walk over `roots`: each rule's results and times, and each walked
/// test's items (path, name, their result against the states) against those oscap lists.
fn both(label: &str, rules: &[String], roots: &[&str]) -> Both {
    let content = OvalContent::read(common::ssg(DS)).unwrap();
    let bench = read_benchmark(common::ssg(DS), Some(PROFILE)).unwrap();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fswalk_ssg").join(label);
    std::fs::create_dir_all(&dir).unwrap();

    let plain = OvalPlan::build(&content, &bench, rules).unwrap();
    let (xml, oscap_secs) = oval_eval(&dir, "plain", &plain);
    let plain_report = OvalReport::parse(&xml).unwrap();
    let theirs = plain.outcomes(&plain_report.results());

    let mut walked = OvalPlan::build_walked(&content, &bench, rules).unwrap();
    let part = walked.walk.clone().expect("a walk part");
    assert!(part.left.is_empty(), "walking objects left to oscap: {:?}", part.left);
    assert!(!part.tests.is_empty() || !part.feeds.is_empty(), "the walk takes some objects");
    let (listing, walk_secs) = walk(roots);
    // The feeds: their own variables from the first run, their constants from the walk.
    let mut pre_secs = 0.0;
    let vars = match &part.pre {
        Some(pre) => {
            let mut first = walked.clone();
            (first.document, first.variables) = (Some(pre.document.clone()), None);
            let (xml, secs) = oval_eval(&dir, "pre", &first);
            pre_secs = secs;
            pre.values(&xml).unwrap()
        }
        None => Default::default(),
    };
    let filled = part.fill(walked.document.as_ref().unwrap(), &vars, Ok(&listing)).unwrap();
    assert_eq!(filled.walked, part.feeds.len(), "every feed filled from the walk");
    walked.document = Some(filled.document);
    let (xml, cut_secs) = oval_eval(&dir, "walked", &walked);
    let cut_secs = cut_secs + pre_secs;
    let report = OvalReport::parse(&xml).unwrap();
    let judged = part.judge(&xml, &report, &listing);
    assert!(judged.fallen.is_empty(), "objects the walk could not complete here: {:?}", judged.fallen);
    let ours = walked.outcomes(&judged.results);
    let mut items_compared = 0;
    let mut tests_compared = 0;
    for (id, t) in &judged.tests {
        let oscap = plain_report.test(id).expect("oscap's report has each walked test");
        assert_eq!(t.total, oscap.items_total, "{id}: items");
        if t.total <= MAX_ITEMS && t.total > 0 {
            let key = |i: &CollectedItem| {
                let f = |n: &str| i.fields.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
                (f("path"), f("filename").filter(|n| !n.is_empty()), i.result.map(|r| r.to_string()))
            };
            let (mut a, mut b): (Vec<_>, Vec<_>) = (oscap.items.iter().map(key).collect(), t.items.iter().map(key).collect());
            a.sort();
            b.sort();
            assert_eq!(a, b, "{id}: oscap's items, then the walk's");
            items_compared += 1;
        }
    }
    // Every test oscap still runs gives what it gave walking.
    for r in walked.rules.iter().filter_map(|r| r.document_id.as_ref()) {
        let mut ids = Vec::new();
        if let Some(c) = plain_report.criteria(r) {
            tests_of(&c, &mut ids);
        }
        for id in ids.iter().filter(|id| !judged.tests.contains_key(*id)) {
            let (a, b) = (plain_report.test(id).map(|t| t.result), report.test(id).map(|t| t.result));
            assert_eq!(a, b, "{id}: oscap walking, then fed by the walk");
            tests_compared += 1;
        }
    }
    eprintln!(
        "[{label}] {} rules: oscap walking {oscap_secs:.1} s; cut {cut_secs:.1} s + walk {walk_secs:.1} s ({} entries), {} tests judged on the host, {} objects fed, {tests_compared} of oscap's tests compared",
        rules.len(),
        listing.len(),
        part.tests.len(),
        part.feeds.len()
    );
    Both {
        results: theirs.iter().zip(&ours).map(|(t, o)| (t.rule.clone(), t.outcome, o.outcome)).collect(),
        items_compared,
        tests_compared,
    }
}

fn tests_of(c: &Criterion, out: &mut Vec<String>) {
    match c {
        Criterion::Test { test, .. } => out.push(test.clone()),
        Criterion::Criteria { children, .. } => children.iter().for_each(|c| tests_of(c, out)),
    }
}

fn assert_agree(got: &[(String, Outcome, Outcome)]) {
    let diff: Vec<_> = got.iter().filter(|(_, t, o)| t != o).collect();
    assert!(diff.is_empty(), "{} of {} rules differ (rule, oscap, walk): {diff:?}", diff.len(), got.len());
}

/// The walkers with fixed roots (the system command directories) and those whose roots come
/// from `/etc/passwd` through variables (home directories): quick on this host.
#[test]
fn the_walk_gives_oscaps_results_for_ssg_walkers_with_small_roots() {
    let rules: Vec<String> = [
        "dir_system_commands_root_owned",
        "accounts_users_home_files_ownership",
        "accounts_users_home_files_groupownership",
        "accounts_users_home_files_permissions",
    ]
    .map(rule)
    .to_vec();
    let got = both("small", &rules, &["/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin", "/home"]).results;
    assert_agree(&got);
    assert!(got.iter().any(|(_, t, _)| *t == Outcome::Pass), "a rule passes here: {got:?}");
}

/// Every tree walker of ANSSI high, over the whole file system.
#[test]
#[ignore = "oscap walks this host's whole file system (600,000 entries) several times: minutes; run by hand with --ignored"]
fn the_walk_gives_oscaps_results_for_every_anssi_walker() {
    let rules: Vec<String> = [
        "accounts_users_home_files_groupownership",
        "accounts_users_home_files_ownership",
        "accounts_users_home_files_permissions",
        "dir_perms_world_writable_root_owned",
        "dir_perms_world_writable_sticky_bits",
        "dir_system_commands_root_owned",
        "file_permissions_unauthorized_world_writable",
        "file_permissions_ungroupowned",
        "no_files_unowned_by_user",
    ]
    .map(rule)
    .to_vec();
    // A world-writable file and an unowned one, so that those walkers list items (oscap's
    // `not evaluated`: their tests have no state) and both sides' items are compared.
    let t = tempfile::tempdir().unwrap();
    let ww = t.path().join("world writable");
    std::fs::write(&ww, b"x").unwrap();
    std::fs::set_permissions(&ww, std::os::unix::fs::PermissionsExt::from_mode(0o666)).unwrap();
    std::os::unix::fs::chown(&ww, Some(4242), Some(4242)).expect("chown: run as root, as CI does");
    let got = both("anssi", &rules, &["/"]);
    assert_agree(&got.results);
    assert!(got.items_compared >= 3, "the walkers' items were compared: {}", got.items_compared);
}

/// `audit_rules_privileged_commands`: its setuid and setgid files feed variables (their paths,
/// their count) that the audit rules are compared with. The walk collects them and oscap is
/// given them as constants; the result must be oscap's own.
#[test]
#[ignore = "oscap walks this host's whole file system for the setuid files: minutes; run by hand with --ignored"]
fn the_walk_feeds_the_privileged_commands_variables_as_oscap_finds_them() {
    let rules = vec![rule("audit_rules_privileged_commands")];
    let got = both("privileged", &rules, &["/"]);
    assert_agree(&got.results);
    assert!(got.tests_compared >= 6, "the tests on the fed variables were compared: {}", got.tests_compared);
}

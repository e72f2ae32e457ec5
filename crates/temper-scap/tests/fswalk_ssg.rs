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
use temper_scap::oval::{OvalContent, OvalReport, Plan};
use temper_scap::{Outcome, read_benchmark};

const DS: &str = "ssg-debian12-ds.xml";
const PROFILE: &str = "anssi_bp28_high";

fn rule(short: &str) -> String {
    format!("xccdf_org.ssgproject.content_rule_{short}")
}

/// `oscap oval eval` of a plan, its schema checked: the results document, and oscap's seconds.
fn oval_eval(dir: &Path, stem: &str, plan: &Plan) -> (Vec<u8>, f64) {
    let (results, took) = common::oval::oval_eval_files(dir, stem, plan, false);
    (std::fs::read(&results).unwrap(), took.as_secs_f64())
}

fn walk(roots: &[&str]) -> (Listing, f64) {
    let t = Instant::now();
    let mut child = Command::new("sh").args(["-s", "--", "--"]).args(roots).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(COLLECT.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    (Listing::parse(&out.stdout).expect("the walk parses"), t.elapsed().as_secs_f64())
}

/// Both ways for `rules`, the walk over `roots`: (rule, oscap's, the walk's), and the times.
fn both(label: &str, rules: &[String], roots: &[&str]) -> Vec<(String, Outcome, Outcome)> {
    let content = OvalContent::read(common::ssg(DS)).unwrap();
    let bench = read_benchmark(common::ssg(DS), Some(PROFILE)).unwrap();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fswalk_ssg").join(label);
    std::fs::create_dir_all(&dir).unwrap();

    let plain = Plan::build(&content, &bench, rules).unwrap();
    let (xml, oscap_secs) = oval_eval(&dir, "plain", &plain);
    let theirs = plain.outcomes(&OvalReport::parse(&xml).unwrap().results());

    let walked = Plan::build_walked(&content, &bench, rules).unwrap();
    let part = walked.walk.as_ref().expect("a walk part");
    assert!(part.left.is_empty(), "walking objects left to oscap: {:?}", part.left);
    assert!(!part.tests.is_empty(), "the walk judges some tests");
    let (xml, cut_secs) = oval_eval(&dir, "walked", &walked);
    let (listing, walk_secs) = walk(roots);
    let report = OvalReport::parse(&xml).unwrap();
    let results = part.results(&xml, &report, &listing).expect("the walk judges");
    let ours = walked.outcomes(&results);
    eprintln!(
        "[{label}] {} rules: oscap walking {oscap_secs:.1} s; cut {cut_secs:.1} s + walk {walk_secs:.1} s ({} entries), {} tests judged on the host",
        rules.len(),
        listing.len(),
        part.tests.len()
    );
    theirs.iter().zip(&ours).map(|(t, o)| (t.rule.clone(), t.outcome, o.outcome)).collect()
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
    let got = both("small", &rules, &["/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin", "/home"]);
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
    assert_agree(&both("anssi", &rules, &["/"]));
}

//! The one walk over hostile trees (`tests/walk/hostile.sh`), with this machine as the guest,
//! in a mount namespace of the test's own: the scan with the walk must finish wherever oscap
//! alone finishes, and give every rule oscap's result. Its clean trees (a bind mount, a tmpfs, a
//! loop-mounted ext4, a tree 1,900 levels deep) are in a user's home, where the walk judges the
//! home-directory rules itself: their failing tests' items are oscap's, item for item. Its gaps
//! (a user's FUSE mount, a directory of mode 000, a proc, a tree past PATH_MAX, files that
//! vanish) are in `/usr/local/sbin`, where `dir_system_commands_root_owned` looks.
mod common;

#[path = "../../../tests/walk/ns.rs"]
mod ns;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use common::{Here, datastream};
use temper_core::scan::{OvalSide, Scan, Scanner};
use temper_scap::oval::{MAX_ITEMS, OvalContent, OvalEngine, TestEvidence};
use temper_scap::read_benchmark;

const PROFILE: &str = "xccdf_org.ssgproject.content_profile_anssi_bp28_high";
const RULE: &str = "xccdf_org.ssgproject.content_rule_";
/// The user whose home holds the clean trees.
const USER: &str = "temperwalk:x:4243:4243::/home/temperwalk:/bin/bash";

/// The home-directory rules (the clean trees) and the system-command directories' (the gaps),
/// tree walkers ANSSI high selects.
const HOME_RULES: [&str; 3] =
    ["accounts_users_home_files_ownership", "accounts_users_home_files_groupownership", "accounts_users_home_files_permissions"];
const BIN_RULES: [&str; 1] = ["dir_system_commands_root_owned"];

/// The namespace with its trees: tmpfs over /home and /usr/local/sbin, a passwd with the user.
fn hostile(dir: &Path) -> ns::Namespace {
    let mut ns = ns::Namespace::new();
    let passwd = dir.join("passwd");
    let mut text = std::fs::read_to_string("/etc/passwd").unwrap();
    text.push_str(USER);
    text.push('\n');
    std::fs::write(&passwd, text).unwrap();
    ns.run(&[
        "sh",
        "-c",
        &format!(
            "mount -t tmpfs temper-walk /home && mount -t tmpfs temper-walk /usr/local/sbin && mount --bind {} /etc/passwd \
             && mkdir -p /home/temperwalk && chown 4243:4243 /home/temperwalk",
            passwd.display()
        ),
    ]);
    println!("{}", ns.trees("clean", Path::new("/home/temperwalk")).trim());
    println!("{}", ns.trees("deep", Path::new("/home/temperwalk")).trim());
    println!("{}", ns.trees("gaps", Path::new("/usr/local/sbin")).trim());
    println!("{}", ns.trees("churn", Path::new("/usr/local/sbin")).trim());
    ns
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_one_walk_finishes_over_hostile_trees_with_oscaps_results_and_items() {
    let (ds, dir) = (datastream(), tempfile::tempdir().unwrap());
    let ns = hostile(dir.path());
    let benchmark = read_benchmark(&ds, Some(PROFILE)).unwrap();
    let side = OvalSide { engine: Arc::new(OvalEngine::new(OvalContent::read(&ds).unwrap())), benchmark: Arc::new(benchmark) };
    let full = |r: &&str| format!("{RULE}{r}");
    let home: Vec<String> = HOME_RULES.iter().map(full).collect();
    let rules: Vec<String> = HOME_RULES.iter().chain(&BIN_RULES).map(full).collect();
    assert_eq!(side.engine.tree_walkers(&side.benchmark, &rules).len(), rules.len(), "each walks a tree");
    let mut plain = Scanner::new(&ds, PROFILE);
    plain.dir = dir.path().to_str().unwrap().into();
    let plain = plain.with_oval(side);
    let mut walked = plain.clone();
    walked.walk = true;
    let (oscap_walks, one_walk) = (Here::within(ns.pid()), Here::within(ns.pid()));
    let want = plain.scan(&oscap_walks, &rules).await.expect("oscap alone finishes");
    let got = walked.scan(&one_walk, &rules).await.expect("the scan with the walk finishes where oscap does");
    let differ = want.differences(&got, &rules);
    assert!(differ.is_empty(), "{} of {} rules differ:\n{}", differ.len(), rules.len(), differ.join("\n"));
    for r in &rules {
        println!("{:<45} {:?}", r.trim_start_matches(RULE), got.outcome(r));
    }
    let failing = want.failing(&home);
    assert!(!failing.is_empty(), "the clean trees break a home-directory rule: {home:?}");
    let (compared, items) = item_differences(&want, &got, &failing);
    assert!(compared > 0 && items.is_empty(), "{compared} tests compared; items differ:\n{}", items.join("\n"));
}

/// For each of `rules`, oscap's failing tests (it walked) against the walk's: the result, the
/// flag, the number of items and, where all are kept, the items with the fields the walk
/// reports. How many tests were compared, and each difference.
fn item_differences(oscap: &Scan, walk: &Scan, rules: &[String]) -> (usize, Vec<String>) {
    let (mut compared, mut out) = (0, Vec::new());
    for rule in rules {
        let (Some(a), Some(b)) = (oscap.evidence_of(rule), walk.evidence_of(rule)) else {
            out.push(format!("{rule}: evidence from one side only"));
            continue;
        };
        for t in &a.tests {
            let Some(u) = b.tests.iter().find(|u| u.id == t.id) else {
                out.push(format!("{rule} {}: not in the walk's evidence", t.id));
                continue;
            };
            compared += 1;
            if (t.result, &t.flag, t.items_total) != (u.result, &u.flag, u.items_total) {
                out.push(format!(
                    "{rule} {}: oscap {:?} {:?} {}, the walk {:?} {:?} {}",
                    t.id, t.result, t.flag, t.items_total, u.result, u.flag, u.items_total
                ));
            }
            if t.items_total <= MAX_ITEMS && u.items_total <= MAX_ITEMS {
                for i in items(t, u).symmetric_difference(&items(u, u)) {
                    out.push(format!("{rule} {}: on one side only: {i}", t.id));
                }
            }
        }
    }
    (compared, out)
}

/// A test's items, each with the fields `like`'s first item has (the walk's).
fn items(t: &TestEvidence, like: &TestEvidence) -> BTreeSet<String> {
    let names: Vec<&str> = like.items.first().map(|i| i.fields.iter().map(|(n, _)| n.as_str()).collect()).unwrap_or_default();
    t.items
        .iter()
        .map(|i| {
            let f: Vec<String> =
                names.iter().map(|n| format!("{n}={}", i.fields.iter().find(|(k, _)| k == n).map_or("-", |(_, v)| v))).collect();
            format!("{:?} {}", i.result, f.join(" "))
        })
        .collect()
}

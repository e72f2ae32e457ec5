//! The engines bench's item check: for each failing tree walker, oscap's evidence (it walked)
//! against the walk's, test by test: the result, the flag, how many items, and, where every
//! item is kept (at most `MAX_ITEMS`), the items themselves with the fields the walk reports.
use std::collections::BTreeSet;

use temper_core::scan::Scan;
use temper_scap::oval::{CollectedItem, MAX_ITEMS, TestEvidence};

/// How many tests were compared, and each difference found.
pub fn differences(oscap: &Scan, walk: &Scan, walkers: &[String]) -> (usize, Vec<String>) {
    let (mut compared, mut out) = (0, Vec::new());
    for rule in walkers {
        let (Some(a), Some(b)) = (oscap.evidence_of(rule), walk.evidence_of(rule)) else {
            if oscap.evidence_of(rule).is_some() != walk.evidence_of(rule).is_some() {
                out.push(format!("{rule}: evidence from one side only"));
            }
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
                    "{rule} {}: oscap {:?} {:?} {} items, the walk {:?} {:?} {} items",
                    t.id, t.result, t.flag, t.items_total, u.result, u.flag, u.items_total
                ));
            } else if t.items_total <= MAX_ITEMS {
                let (x, y) = (items(t, u), items(u, u));
                for i in x.symmetric_difference(&y) {
                    out.push(format!("{rule} {}: item on one side only: {i:?}", t.id));
                }
            }
        }
    }
    (compared, out)
}

/// A test's items, each as the fields `like`'s first item has (the walk's), with the item's
/// result against the state.
fn items(t: &TestEvidence, like: &TestEvidence) -> BTreeSet<String> {
    let names: Vec<&str> = like.items.first().map(|i| i.fields.iter().map(|(n, _)| n.as_str()).collect()).unwrap_or_default();
    t.items.iter().map(|i| render(i, &names)).collect()
}

fn render(i: &CollectedItem, names: &[&str]) -> String {
    let fields: Vec<String> =
        names.iter().map(|n| format!("{n}={}", i.fields.iter().find(|(f, _)| f == n).map_or("-", |(_, v)| v.as_str()))).collect();
    format!("{:?} {}", i.result, fields.join(" "))
}

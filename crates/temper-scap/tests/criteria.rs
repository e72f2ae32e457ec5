//! A definition's criteria judged again on the host, with some tests' results replaced, give
//! what oscap gives when those tests really come out so: every operator, negation on a
//! criterion, on criteria and on an extended definition, and error and false among the rest.
//! The one walk's tests are judged on the host, and their definitions' results so.
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use temper_scap::oval::{DefinitionResult, OvalReport};

const NS: &str = r#"xmlns="http://oval.mitre.org/XMLSchema/oval-definitions-5" xmlns:unix="http://oval.mitre.org/XMLSchema/oval-definitions-5#unix" xmlns:oval="http://oval.mitre.org/XMLSchema/oval-common-5" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance""#;

/// Tests: 1 true, 2 false, 3 error (an int against a pattern), 4 true only once
/// the toggle file exists.
fn doc(root: &str) -> (String, Vec<String>) {
    let test = |n: u32, state: &str| {
        format!(
            r#"<unix:file_test check="all" check_existence="all_exist" id="oval:t:tst:{n}" version="1" comment="t"><unix:object object_ref="oval:t:obj:{n}"/>{state}</unix:file_test>"#
        )
    };
    let file = |n: u32, name: &str| {
        format!(r#"<unix:file_object id="oval:t:obj:{n}" version="1"><unix:filepath>{root}/{name}</unix:filepath></unix:file_object>"#)
    };
    let objects = [file(1, "present"), file(2, "absent"), file(3, "present"), file(4, "toggle")];
    // Test 3's state cannot be judged against any item: an int compared with a pattern.
    let tests = [test(1, ""), test(2, ""), test(3, r#"<unix:state state_ref="oval:t:ste:1"/>"#), test(4, "")];
    let states = r#"<unix:file_state id="oval:t:ste:1" version="1"><unix:user_id datatype="int" operation="pattern match">x</unix:user_id></unix:file_state>"#;
    let c = |n: u32, neg: bool| format!(r#"<criterion test_ref="oval:t:tst:{n}" negate="{neg}"/>"#);
    let e = |d: u32, neg: bool| format!(r#"<extend_definition definition_ref="oval:t:def:{d}" negate="{neg}"/>"#);
    let crit = |op: &str, neg: bool, inner: &[String]| format!(r#"<criteria operator="{op}" negate="{neg}">{}</criteria>"#, inner.concat());
    let bodies = vec![
        crit("AND", false, &[c(1, false), c(4, false)]),
        crit("OR", false, &[c(2, false), c(4, false)]),
        crit("ONE", false, &[c(1, false), c(4, false), c(2, false)]),
        crit("XOR", false, &[c(1, false), c(4, false), c(1, false)]),
        crit("AND", false, &[c(4, true), c(1, false)]),
        crit("OR", true, &[c(2, false), c(4, false)]),
        crit("AND", false, &[c(3, false), c(4, false)]),
        crit("OR", false, &[c(3, false), c(4, false)]),
        crit("AND", false, &[e(1, true), crit("OR", false, &[c(2, false), c(4, false)])]),
        crit("ONE", false, &[c(3, false), c(4, false), c(1, false)]),
        crit("XOR", true, &[c(4, false), c(2, false), e(2, false)]),
    ];
    let defs: String = bodies
        .iter()
        .enumerate()
        .map(|(i, b)| {
            format!(
                r#"<definition class="compliance" id="oval:t:def:{}" version="1"><metadata><title>t</title><description>d</description></metadata>{b}</definition>"#,
                i + 1
            )
        })
        .collect();
    let ids = (1..=bodies.len()).map(|i| format!("oval:t:def:{i}")).collect();
    let xml = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><oval_definitions {NS}><generator><oval:schema_version>5.11.2</oval:schema_version><oval:timestamp>2026-12-02T00:00:00</oval:timestamp></generator><definitions>{defs}</definitions><tests>{}</tests><objects>{}</objects><states>{states}</states></oval_definitions>"#,
        tests.concat(),
        objects.concat()
    );
    (xml, ids)
}

fn eval(doc: &str, out: &Path) -> OvalReport {
    std::fs::write(out.join("doc.xml"), doc).unwrap();
    let run = Command::new("oscap")
        .args(["oval", "eval", "--results"])
        .arg(out.join("res.xml"))
        .arg(out.join("doc.xml"))
        .output()
        .expect("oscap: install it with `bash vm/host-deps.sh`");
    assert!(run.status.success(), "oscap: {}", String::from_utf8_lossy(&run.stderr));
    OvalReport::read(out.join("res.xml")).unwrap()
}

#[test]
fn criteria_judged_again_with_new_test_results_give_oscaps_results() {
    let tree = tempfile::tempdir().unwrap();
    let r = tree.path();
    std::fs::write(r.join("present"), b"x").unwrap();
    let (xml, defs) = doc(r.to_str().unwrap());
    let out = tempfile::tempdir().unwrap();
    let before = eval(&xml, out.path());
    std::fs::write(r.join("toggle"), b"x").unwrap();
    let after = eval(&xml, out.path());

    let tests: HashMap<String, DefinitionResult> =
        (1..=4).map(|n| format!("oval:t:tst:{n}")).map(|id| (id.clone(), after.test(&id).unwrap().result)).collect();
    assert_eq!(tests["oval:t:tst:3"], DefinitionResult::Error, "test 3 is oscap's error");
    assert_ne!(before.test("oval:t:tst:4").unwrap().result, tests["oval:t:tst:4"], "the toggle changed test 4");
    let (want_before, want_after) = (before.results(), after.results());
    let mut diff = Vec::new();
    let mut changed = 0;
    for d in &defs {
        let c = before.criteria(d).unwrap();
        let same = c.recompute(&|_| None);
        let again = c.recompute(&|t| tests.get(t).copied());
        if same != want_before.definitions[d] || again != want_after.definitions[d] {
            diff.push(format!("{d}: oscap {} then {}; host {same} then {again}", want_before.definitions[d], want_after.definitions[d]));
        }
        changed += usize::from(want_before.definitions[d] != want_after.definitions[d]);
    }
    assert!(diff.is_empty(), "{} of {} definitions differ:\n{}", diff.len(), defs.len(), diff.join("\n"));
    assert!(changed >= 5, "the toggle changes most definitions: {changed}");
}

//! temper's dpkginfo probe against oscap's own, on this host's packages: oscap 1.3.7's probe
//! reads the host's APT cache (it has no offline mode), temper's reads the host's dpkg status;
//! each package's items must be the same, and so must the packages found and not found.
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;
use std::process::Command;

use temper_scap::dpkg::Dpkg;
use temper_scap::oval::{DefinitionResult, OvalReport};

#[test]
fn temper_reads_the_packages_oscaps_probe_reads() {
    let status = std::fs::read_to_string("/var/lib/dpkg/status").expect("a Debian host");
    let mut names: Vec<String> = status
        .lines()
        .filter_map(|l| l.strip_prefix("Package: "))
        .map(str::to_string)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    // A name no package has, and names with an architecture.
    names.extend(["temper-no-such-package", "bash:amd64", "bash:i386", "tzdata:amd64"].map(str::to_string));
    let mut tests = String::new();
    let mut objects = String::new();
    let mut criteria = String::new();
    for (i, n) in names.iter().enumerate() {
        let i = i + 1;
        write!(tests, r#"<linux:dpkginfo_test id="oval:t:tst:{i}" version="1" check="all" check_existence="at_least_one_exists" comment="c"><linux:object object_ref="oval:t:obj:{i}"/></linux:dpkginfo_test>"#).unwrap();
        write!(objects, r#"<linux:dpkginfo_object id="oval:t:obj:{i}" version="1"><linux:name>{n}</linux:name></linux:dpkginfo_object>"#)
            .unwrap();
        write!(criteria, r#"<criterion test_ref="oval:t:tst:{i}"/>"#).unwrap();
    }
    let doc = format!(
        r#"<?xml version="1.0"?>
<oval_definitions xmlns="http://oval.mitre.org/XMLSchema/oval-definitions-5" xmlns:oval="http://oval.mitre.org/XMLSchema/oval-common-5" xmlns:linux="http://oval.mitre.org/XMLSchema/oval-definitions-5#linux">
<generator><oval:schema_version>5.11.2</oval:schema_version><oval:timestamp>2024-01-01T00:00:00</oval:timestamp></generator>
<definitions><definition id="oval:t:def:1" version="1" class="inventory"><metadata><title>p</title><description>p</description></metadata><criteria operator="OR">{criteria}</criteria></definition></definitions>
<tests>{tests}</tests><objects>{objects}</objects></oval_definitions>"#
    );
    let dir = tempfile::tempdir().unwrap();
    let (path, results) = (dir.path().join("pkgs.xml"), dir.path().join("pkgs-results.xml"));
    std::fs::write(&path, doc).unwrap();
    let out = Command::new("oscap").args(["oval", "eval", "--results"]).arg(&results).arg(&path).output().expect("oscap on the host");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = OvalReport::read(&results).unwrap();
    let dpkg = Dpkg::read(Path::new("/")).unwrap();

    let (mut found, mut missing) = (0, 0);
    for (i, n) in names.iter().enumerate() {
        let t = report.test(&format!("oval:t:tst:{}", i + 1)).unwrap();
        let theirs: Vec<BTreeMap<String, String>> = t
            .items
            .iter()
            .filter(|i| i.status == temper_scap::oval::ItemStatus::Exists)
            .map(|i| i.fields.iter().cloned().collect())
            .collect();
        let judged = dpkg.judge(&t).unwrap();
        let ours: Vec<BTreeMap<String, String>> = judged.1.iter().map(|i| i.fields.iter().cloned().collect()).collect();
        assert_eq!(ours, theirs, "package `{n}`");
        assert_eq!(judged.0, t.result, "package `{n}`: the test's result");
        if judged.0 == DefinitionResult::True {
            found += 1;
        } else {
            missing += 1;
        }
    }
    eprintln!("{found} packages found by both, {missing} found by neither");
    assert!(found > 100 && missing >= 2, "{found} found, {missing} not");
}

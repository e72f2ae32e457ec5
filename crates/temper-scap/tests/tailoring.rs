//! Tailoring files made by `autotailor`, read by temper and by oscap (the oracle): the same
//! rules are offered, and a refined value reaches the stock fix's script.
mod common;

use common::{autotailor, oscap_fixes_with, ssg};
use temper_scap::{ScapError, Tailoring, read_benchmark, read_benchmark_tailored};

const STANDARD: &str = "xccdf_org.ssgproject.content_profile_standard";

/// temper's selection and scripts through the tailoring equal oscap's; returns the benchmark.
fn same_as_oscap(ds: &std::path::Path, tailoring: &std::path::Path, profile: &str) -> temper_scap::Benchmark {
    let t = Tailoring::read(tailoring).unwrap();
    let b = read_benchmark_tailored(ds, &t, Some(profile)).unwrap();
    let id = t.pick(Some(profile)).unwrap();
    // oscap reads the copy temper hands it (see `Tailoring::for_oscap`).
    let handed = tailoring.with_extension("oscap.xml");
    std::fs::write(&handed, t.for_oscap()).unwrap();
    let expected = oscap_fixes_with(ds.to_str().unwrap(), &id, &["--tailoring-file", handed.to_str().unwrap()]);
    let ours: Vec<&str> = b.selected_rules.iter().map(|r| r.id.as_str()).collect();
    let theirs: Vec<&str> = expected.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ours, theirs, "tailored selection differs from oscap's");
    for (r, (_, script)) in b.selected_rules.iter().zip(&expected) {
        let ours = r.fix.as_ref().map(|f| f.script.trim_end());
        assert_eq!(ours, script.as_deref().map(str::trim_end), "script of {} differs from oscap's", r.id);
    }
    b
}

#[test]
fn autotailor_changes_the_rules_offered_as_oscap_does() {
    let dir = tempfile::tempdir().unwrap();
    let ds = ssg("ssg-debian12-ds.xml");
    let plain = read_benchmark(&ds, Some(STANDARD)).unwrap();
    let t = autotailor(
        dir.path(),
        &ds,
        "standard",
        &["-u", "package_telnetd_removed", "-u", "package_nis_removed", "-u", "file_owner_etc_shadow", "-s", "sshd_disable_x11_forwarding"],
    );
    let b = same_as_oscap(&ds, &t, "standard");
    assert_eq!(b.selected_rules.len(), plain.selected_rules.len() - 2, "3 unselected, 1 selected");
    assert!(b.rule("sshd_disable_x11_forwarding").is_some() && plain.rule("sshd_disable_x11_forwarding").is_none());
    assert!(b.rule("package_nis_removed").is_none() && plain.rule("package_nis_removed").is_some());
    let info = b.tailoring.as_ref().expect("the tailoring is named");
    assert_eq!(info.profiles.len(), 1);
    assert!(b.profile.as_ref().unwrap().title.contains("(tailored)"), "{:?}", b.profile);
}

#[test]
fn a_refined_value_reaches_the_stock_fix() {
    let dir = tempfile::tempdir().unwrap();
    let ds = ssg("ssg-debian12-ds.xml");
    let plain = read_benchmark(&ds, Some(STANDARD)).unwrap();
    let t = autotailor(dir.path(), &ds, "standard", &["-p", "temper_night", "-v", "sshd_idle_timeout_value=840"]);
    let b = same_as_oscap(&ds, &t, "standard");
    assert_eq!(b.profile.as_ref().unwrap().id, "xccdf_org.ssgproject.content_profile_temper_night");
    let value = "xccdf_org.ssgproject.content_value_sshd_idle_timeout_value";
    assert_eq!(b.resolved_values[value], "840");
    assert_ne!(plain.resolved_values[value], "840");
    let script = |b: &temper_scap::Benchmark| b.rule("sshd_set_idle_timeout").unwrap().fix.as_ref().unwrap().script.clone();
    assert!(script(&b).contains("sshd_idle_timeout_value='840'"), "{}", script(&b));
    assert!(!script(&plain).contains("'840'"));
}

#[test]
fn a_tailoring_without_profiles_or_of_another_kind_is_a_clear_error() {
    let empty = br#"<xccdf-1.2:Tailoring xmlns:xccdf-1.2="http://checklists.nist.gov/xccdf/1.2" id="t"><xccdf-1.2:version>1</xccdf-1.2:version></xccdf-1.2:Tailoring>"#;
    assert!(matches!(Tailoring::parse(empty), Err(ScapError::Invalid { what: "tailoring", .. })));
    let other = br#"<Benchmark id="b"/>"#;
    assert!(matches!(Tailoring::parse(other), Err(ScapError::NotTailoring(n)) if n == "Benchmark"));
    assert!(Tailoring::parse(b"<Tailoring id='t'><Profile id='p'>").is_err());
}

#[test]
fn the_profile_is_picked_by_id_by_base_or_alone() {
    let dir = tempfile::tempdir().unwrap();
    let ds = ssg("ssg-debian12-ds.xml");
    let t = Tailoring::read(autotailor(dir.path(), &ds, "standard", &["-p", "mine", "-u", "package_nis_removed"])).unwrap();
    let mine = "xccdf_org.ssgproject.content_profile_mine";
    assert_eq!(t.pick(None).unwrap(), mine);
    assert_eq!(t.pick(Some("mine")).unwrap(), mine);
    assert_eq!(t.pick(Some(STANDARD)).unwrap(), mine, "the base profile's id picks the profile that extends it");
    let err = t.pick(Some("anssi_bp28_high")).unwrap_err().to_string();
    assert!(err.contains("anssi_bp28_high") && err.contains(mine), "{err}");
}

#[test]
fn the_copy_for_oscap_only_adds_line_breaks_between_elements() {
    let dir = tempfile::tempdir().unwrap();
    let ds = ssg("ssg-debian12-ds.xml");
    let t =
        Tailoring::read(autotailor(dir.path(), &ds, "standard", &["-u", "package_nis_removed", "-u", "package_telnetd_removed"])).unwrap();
    let raw = std::fs::read(dir.path().join("tailoring.xml")).unwrap();
    let copy = t.for_oscap();
    assert!(copy.len() > raw.len());
    let squeezed: Vec<u8> = copy.iter().copied().filter(|&b| b != b'\n').collect();
    let raw_squeezed: Vec<u8> = raw.iter().copied().filter(|&b| b != b'\n').collect();
    assert_eq!(squeezed, raw_squeezed, "only line breaks are added");
    let again = Tailoring::parse(&copy).unwrap();
    assert_eq!(again.info(), t.info());
}

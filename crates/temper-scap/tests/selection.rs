//! XCCDF selection and value semantics on small hand-written benchmarks (SSG content does
//! not use `extends`, `cluster-id` or nested deselected Groups, so they are checked here).
use temper_scap::{ScapError, Severity, read_benchmark_bytes};

const DOC: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<ds:data-stream-collection xmlns:ds="http://scap.nist.gov/schema/scap/source/1.2" xmlns:x="http://checklists.nist.gov/xccdf/1.2" xmlns:h="http://www.w3.org/1999/xhtml">
  <ds:data-stream id="d"/>
  <ds:component id="oval"><oval_definitions><definitions><Rule id="not-xccdf"/></definitions></oval_definitions></ds:component>
  <ds:component id="xccdf">
    <x:Benchmark id="b1">
      <x:title>Test &amp; bench</x:title>
      <x:version>1.2.3</x:version>
      <x:Profile id="base">
        <x:title>Base</x:title>
        <x:select idref="r_off" selected="true"/>
        <x:select idref="r_base_only" selected="true"/>
        <x:refine-value idref="v_mode" selector="strict"/>
      </x:Profile>
      <x:Profile id="derived" extends="base">
        <x:title>Derived</x:title>
        <x:description>Line one
of <h:code>two</h:code>.</x:description>
        <x:select idref="r_base_only" selected="false"/>
        <x:select idref="g_off" selected="true"/>
        <x:select idref="g_on" selected="false"/>
        <x:select idref="cl" selected="true"/>
        <x:set-value idref="v_text">set by profile</x:set-value>
        <x:refine-value idref="v_num" selector="no_such_selector"/>
        <x:refine-rule idref="r_off" severity="high"/>
      </x:Profile>
      <x:Profile id="loop_a" extends="loop_b"/>
      <x:Profile id="loop_b" extends="loop_a"/>
      <x:Profile id="x_profile_dup"/>
      <x:Profile id="y_profile_dup"/>
      <x:Value id="v_mode"><x:value>lax</x:value><x:value selector="strict">very strict</x:value></x:Value>
      <x:Value id="v_num" type="number"><x:value selector="one">1</x:value><x:value>7</x:value></x:Value>
      <x:Rule id="r_default_on" severity="low"><x:title>On by default</x:title></x:Rule>
      <x:Rule id="r_off" selected="false" severity="medium">
        <x:title>Off unless selected</x:title>
        <x:fix system="urn:xccdf:fix:script:sh" reboot="true">mode='<x:sub idref="v_mode" use="legacy"/>' n=<x:sub idref="v_num"/> t="<x:sub idref="v_text"/>" gone=<x:sub idref="v_missing"/> &lt;&amp;&gt; &#x41;</x:fix>
      </x:Rule>
      <x:Rule id="r_base_only" selected="false"/>
      <x:Group id="g_off" selected="false">
        <x:Rule id="r_in_off_group"/>
        <x:Rule id="r_in_off_group_unselected" selected="false"/>
      </x:Group>
      <x:Group id="g_on">
        <x:Value id="v_text"><x:value>default text</x:value></x:Value>
        <x:Rule id="r_in_deselected_group" selected="true"/>
        <x:Group id="g_inner"><x:Rule id="r_deep"/></x:Group>
      </x:Group>
      <x:Rule id="r_cluster" selected="false" cluster-id="cl"/>
    </x:Benchmark>
  </ds:component>
</ds:data-stream-collection>"#;

fn ids(profile: Option<&str>) -> Vec<String> {
    let b = read_benchmark_bytes(DOC.as_bytes(), profile).unwrap();
    b.selected_rules.into_iter().map(|r| r.id).collect()
}

#[test]
fn default_selection_honours_groups() {
    assert_eq!(ids(None), ["r_default_on", "r_in_deselected_group", "r_deep"]);
    let b = read_benchmark_bytes(DOC.as_bytes(), None).unwrap();
    assert_eq!(b.id, "b1");
    assert_eq!(b.title, "Test & bench");
    assert_eq!(b.version, "1.2.3");
    assert_eq!(b.rule_count, 8, "the OVAL component's <Rule> is not XCCDF");
}

#[test]
fn base_profile() {
    assert_eq!(ids(Some("base")), ["r_default_on", "r_off", "r_base_only", "r_in_deselected_group", "r_deep"]);
}

#[test]
fn derived_profile_extends_base() {
    let b = read_benchmark_bytes(DOC.as_bytes(), Some("derived")).unwrap();
    let got: Vec<&str> = b.selected_rules.iter().map(|r| r.id.as_str()).collect();
    // g_off selected: its default-on rule comes in; g_on deselected: its whole subtree goes.
    assert_eq!(got, ["r_default_on", "r_off", "r_in_off_group", "r_cluster"]);
    assert_eq!(b.profile.as_ref().unwrap().title, "Derived");
    assert_eq!(b.profile.as_ref().unwrap().description, "Line one of two.");

    let r = &b.selected_rules[1];
    assert_eq!(r.severity, Severity::High, "refine-rule");
    let f = r.fix.as_ref().unwrap();
    assert!(f.reboot);
    assert_eq!(f.disruption, "unknown");
    // refine-value from base, set-value from derived, unknown selector -> default.
    assert_eq!(f.script, r#"mode='very strict' n=7 t="set by profile" gone= <&> A"#);
    assert_eq!(f.unresolved, ["v_missing"]);
    assert_eq!(b.resolved_values["v_mode"], "very strict");
    assert_eq!(b.values["v_num"].value_type, "number");
}

#[test]
fn profile_errors() {
    let e = read_benchmark_bytes(DOC.as_bytes(), Some("loop_a")).unwrap_err();
    assert!(matches!(e, ScapError::ProfileCycle(_)), "{e}");
    let e = read_benchmark_bytes(DOC.as_bytes(), Some("dup")).unwrap_err();
    assert!(matches!(e, ScapError::ProfileAmbiguous { ref candidates, .. } if candidates.len() == 2), "{e}");
    assert!(read_benchmark_bytes(DOC.as_bytes(), Some("x_profile_dup")).is_ok());
    let e = read_benchmark_bytes(DOC.as_bytes(), Some("nope")).unwrap_err();
    assert!(matches!(e, ScapError::ProfileNotFound(_)), "{e}");
}

#[test]
fn profiles_listed() {
    let p = temper_scap::list_profiles_bytes(DOC.as_bytes()).unwrap();
    let ids: Vec<&str> = p.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, ["base", "derived", "loop_a", "loop_b", "x_profile_dup", "y_profile_dup"]);
}

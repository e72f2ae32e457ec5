//! Malformed, truncated and hostile input: a clear error, never a panic.
mod common;

use temper_scap::{ScapError, parse_results_bytes, read_benchmark_bytes};

fn ds_err(input: &[u8]) -> ScapError {
    read_benchmark_bytes(input, None).expect_err("datastream reader accepted bad input")
}

fn res_err(input: &[u8]) -> ScapError {
    parse_results_bytes(input).expect_err("results reader accepted bad input")
}

#[test]
fn empty_and_blank() {
    for input in [&b""[..], b"  \n\t ", b"\xEF\xBB\xBF"] {
        assert!(matches!(ds_err(input), ScapError::Empty));
        assert!(matches!(res_err(input), ScapError::Empty));
    }
}

#[test]
fn not_xml() {
    let e = ds_err(b"this is not XML at all");
    assert!(matches!(e, ScapError::NoRootElement), "{e}");
    let e = res_err(b"{\"json\": true}");
    assert!(matches!(e, ScapError::NoRootElement), "{e}");
    let e = ds_err(b"\x7fELF\x02\x01\x01\x00\xff\xfe");
    assert!(matches!(e, ScapError::NotUtf8 { offset: 8 }), "{e}");
    let e = res_err(b"<TestResult id=\"t\">\xC3\x28</TestResult>");
    assert!(matches!(e, ScapError::NotUtf8 { .. }), "{e}");
    let e = ds_err(br#"<Benchmark id="b"><Rule id="r"></Benchmark>"#);
    assert!(matches!(e, ScapError::Xml { .. }), "{e}");
    assert!(e.to_string().contains("at byte"), "{e}");
}

#[test]
fn wrong_root() {
    let e = ds_err(b"<?xml version=\"1.0\"?><html><body/></html>");
    assert!(matches!(e, ScapError::NotADatastream(ref r) if r == "html"), "{e}");
    let e = res_err(b"<oval_definitions/>");
    assert!(matches!(e, ScapError::NotResults(ref r) if r == "oval_definitions"), "{e}");
    // A datastream without a Benchmark.
    let e = ds_err(b"<ds:data-stream-collection xmlns:ds=\"x\"><ds:component><oval/></ds:component></ds:data-stream-collection>");
    assert!(matches!(e, ScapError::NoBenchmark), "{e}");
}

#[test]
fn truncated_real_content() {
    let ds = std::fs::read(common::ssg("ssg-debian12-ds.xml")).unwrap();
    let bench_end = find(&ds, b"</xccdf-1.2:Benchmark>");
    for cut in [100, 5000, bench_end / 2, bench_end - 10, bench_end] {
        let e = ds_err(&ds[..cut]);
        assert!(matches!(e, ScapError::Truncated { .. } | ScapError::Xml { .. }), "cut {cut}: {e}");
    }
    let res = std::fs::read(common::shared_results()).unwrap();
    let tr = find(&res, b"<TestResult");
    for cut in [tr / 2, tr + 10, tr + 5000, res.len() - 30] {
        let e = res_err(&res[..cut]);
        assert!(matches!(e, ScapError::Truncated { .. } | ScapError::Xml { .. }), "cut {cut}: {e}");
    }
}

#[test]
fn every_prefix_of_a_small_document_fails_cleanly() {
    let doc = br#"<Benchmark id="b"><Profile id="p"><select idref="r" selected="true"/></Profile><Value id="v"><value>1</value></Value><Group id="g"><Rule id="r" severity="low"><title>T &amp; t</title><fix system="urn:xccdf:fix:script:sh">x=<sub idref="v"/></fix></Rule></Group><TestResult id="t"><rule-result idref="r"><result>pass</result></rule-result></TestResult></Benchmark>"#;
    let b = read_benchmark_bytes(doc, Some("p")).unwrap();
    assert_eq!(b.selected_rules[0].fix.as_ref().unwrap().script, "x=1");
    assert!(parse_results_bytes(doc).is_ok());
    for cut in 0..doc.len() {
        assert!(read_benchmark_bytes(&doc[..cut], Some("p")).is_err(), "prefix {cut} accepted");
        assert!(parse_results_bytes(&doc[..cut]).is_err(), "prefix {cut} accepted");
    }
}

const LAUGHS: &str = r#"<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
"#;

#[test]
fn billion_laughs() {
    let ds = format!(r#"{LAUGHS}<Benchmark id="b"><Rule id="r"><title>&lol9;</title></Rule></Benchmark>"#);
    let e = ds_err(ds.as_bytes());
    assert!(matches!(e, ScapError::Dtd { .. }), "{e}");
    let res = format!(r#"{LAUGHS}<TestResult id="t"><rule-result idref="r"><result>&lol9;</result></rule-result></TestResult>"#);
    assert!(matches!(res_err(res.as_bytes()), ScapError::Dtd { .. }));
}

#[test]
fn undeclared_entities() {
    let e = ds_err(br#"<Benchmark id="b"><Rule id="r"><title>a &lol9; b</title></Rule></Benchmark>"#);
    assert!(matches!(e, ScapError::UnknownEntity { ref name, .. } if name == "lol9"), "{e}");
    let e = res_err(br#"<TestResult id="t"><rule-result idref="r"><result>&lol9;</result></rule-result></TestResult>"#);
    assert!(matches!(e, ScapError::UnknownEntity { .. }), "{e}");
    let e = ds_err(br#"<Benchmark id="&lol9;"/>"#);
    assert!(matches!(e, ScapError::Xml { .. }), "{e}");
    let e = ds_err(br#"<Benchmark id="b"><Rule id="r"><fix system="urn:xccdf:fix:script:sh">&#0;</fix></Rule></Benchmark>"#);
    assert!(matches!(e, ScapError::Xml { .. }), "{e}");
}

#[test]
fn invalid_values() {
    let e = ds_err(br#"<Benchmark id="b"><Rule id="r" selected="maybe"/></Benchmark>"#);
    assert!(matches!(e, ScapError::Invalid { what: "selected", .. }), "{e}");
    let e = ds_err(br#"<Benchmark id="b"><Rule selected="true"/></Benchmark>"#);
    assert!(matches!(e, ScapError::MissingAttr { element: "Rule", attr: "id", .. }), "{e}");
    let e = ds_err(br#"<Benchmark id="b"><Rule id="r"/><Profile id="late"/></Benchmark>"#);
    assert!(matches!(e, ScapError::Invalid { what: "Profile position", .. }), "{e}");
}

/// Nesting far deeper than any SCAP document's (SSG's datastream nests 12 deep) is a clear error
/// from every reader, never a stack overflow: here 100,000 levels of prose, of Groups (whose
/// scores the loop computes again over the tree), of OVAL `set`s in a results document's
/// definitions, and of `criteria` in its results.
const DEEP: usize = 100_000;

fn deep(what: &str) {
    assert!(what.contains("nested deeper than"), "not the depth's error: {what}");
}

#[test]
fn deep_prose_is_a_clear_error() {
    let prose = format!(
        r#"<Benchmark id="b"><Rule id="r"><description>{}deep{}</description></Rule></Benchmark>"#,
        "<b>".repeat(DEEP),
        "</b>".repeat(DEEP)
    );
    deep(&ds_err(prose.as_bytes()).to_string());
}

#[test]
fn deep_groups_are_a_clear_error() {
    let groups = format!(
        r#"<Benchmark id="b"><Rule id="r"/>{}<Rule id="in"/>{}</Benchmark>"#,
        "<Group id=\"g\">".repeat(DEEP),
        "</Group>".repeat(DEEP)
    );
    match read_benchmark_bytes(groups.as_bytes(), None) {
        Err(e) => deep(&e.to_string()),
        Ok(b) => {
            // Accepted: the default score recurses over the Groups, as the loop computes it.
            let results =
                parse_results_bytes(br#"<TestResult id="t"><rule-result idref="in"><result>pass</result></rule-result></TestResult>"#);
            let score = b.score_tree.default_score(&results.unwrap());
            panic!("100,000 nested Groups read, and scored {score:?}");
        }
    }
}

#[test]
fn deep_sets_are_a_clear_error() {
    let sets = format!(
        r#"<oval_results><oval_definitions><objects><textfilecontent54_object id="o">{}<object_reference>x</object_reference>{}</textfilecontent54_object></objects></oval_definitions><results/></oval_results>"#,
        "<set>".repeat(DEEP),
        "</set>".repeat(DEEP)
    );
    deep(&temper_scap::oval::OvalReport::parse(sets.as_bytes()).map(|r| r.results()).unwrap_err().to_string());
}

#[test]
fn deep_criteria_are_a_clear_error() {
    let criteria = format!(
        "<oval_results><results><system><definitions><definition definition_id='d' result='false'>{}{}</definition></definitions></system></results></oval_results>",
        "<criteria result='false'>".repeat(DEEP),
        "</criteria>".repeat(DEEP)
    );
    deep(&temper_scap::oval::OvalReport::parse(criteria.as_bytes()).map(|r| r.results()).unwrap_err().to_string());
    deep(&temper_scap::oval::OvalResults::parse(criteria.as_bytes()).unwrap_err().to_string());
}

fn find(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).position(|w| w == needle).expect("marker present")
}

//! A 100 MB text node: prose is cut at its cap, a script over its cap is an error, and
//! memory stays near the input's own size. One test only, so the peak is this test's.
use temper_scap::datastream::{MAX_PROSE, MAX_SCRIPT};
use temper_scap::{ScapError, parse_results_bytes, read_benchmark_bytes};

const BIG: usize = 100 * 1024 * 1024;

/// Peak resident memory of this process, in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

#[test]
fn hundred_megabyte_text_nodes() {
    let filler = "lorem ipsum\r\n".repeat(BIG / 13);
    let wrap = |head: &str, tail: &str| {
        let mut s = String::with_capacity(filler.len() + head.len() + tail.len());
        s.push_str(head);
        s.push_str(&filler);
        s.push_str(tail);
        s
    };

    let doc = wrap(r#"<Benchmark id="b"><Rule id="r"><description>"#, "</description></Rule></Benchmark>");
    let b = read_benchmark_bytes(doc.as_bytes(), None).unwrap();
    let d = &b.selected_rules[0].description;
    assert!(d.len() <= MAX_PROSE + 32, "{} bytes kept", d.len());
    assert!(d.starts_with("lorem ipsum lorem ipsum"));
    assert!(d.ends_with("[truncated]"));
    drop(doc);

    let doc = wrap(r#"<Benchmark id="b"><Rule id="r"><fix system="urn:xccdf:fix:script:sh">"#, "</fix></Rule></Benchmark>");
    let e = read_benchmark_bytes(doc.as_bytes(), None).unwrap_err();
    assert!(matches!(e, ScapError::TooLarge { limit, .. } if limit == MAX_SCRIPT as u64), "{e}");
    drop(doc);

    let doc = wrap(r#"<TestResult id="t"><target>"#, r#"</target><rule-result idref="r"><result>pass</result></rule-result></TestResult>"#);
    let t = parse_results_bytes(doc.as_bytes()).unwrap();
    assert!(t.target.as_ref().unwrap().len() < 8192);
    assert_eq!(t.counts(true).get("pass"), Some(&1));
    drop(doc);

    // The filler plus one document at a time is about 200 MB; the readers add little.
    let peak = peak_rss();
    eprintln!("peak RSS {} MiB", peak >> 20);
    assert!(peak < 2 * BIG as u64 + 60 * 1024 * 1024, "peak RSS {} MiB", peak >> 20);
}

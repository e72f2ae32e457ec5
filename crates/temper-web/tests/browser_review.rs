//! The run page's progress chart and its filter by status in headless Chromium, driven by
//! puppeteer-core (`tests/web/review.js`): screenshots web-run-chart.png and
//! web-rules-fixed.png under target/test-artifacts, the rows in review order, the filter working
//! with JavaScript off, and a hostile rule id in the chart left inert.
mod common;

use common::*;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_progress_chart_and_the_filtered_rules_in_chromium() {
    let f = WebFixture::running().await;
    f.with_progress().await;
    let web = serve(&f.store, None).await;
    let out = artifacts();
    for name in ["web-run-chart.png", "web-rules-fixed.png"] {
        let _ = std::fs::remove_file(out.join(name));
    }

    let report = puppeteer("review.js", &[&web.base, &f.run.to_string(), "fixed", out.to_str().unwrap()]).await;

    // The chart: a point per change of the count (fixed, hostile fixed, hostile lost), the score.
    let all = &report["all"];
    let chart = &all["chart"];
    assert_eq!(chart["fixed"], json!([1, 2, 1]));
    assert_eq!(chart["scores"], json!([61.25]));
    assert!(chart["width"].as_f64().unwrap() > 300.0, "drawn, not collapsed: {chart}");
    assert_eq!(chart["elements"], json!(["circle", "g", "line", "polyline", "rect", "text", "title"]), "no injected element");
    let titles: Vec<&str> = chart["titles"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    assert!(titles[0].starts_with("sshd_disable_root_login fixed at"), "{titles:?}");
    assert!(titles[1].starts_with(&format!("{PWN_SCRIPT}\\x01\\x07 {PWN_IMG} 'sq' \"dq\" fixed at")), "the hostile id as text: {titles:?}");
    assert_eq!(all["rows"], json!(["escalated", "fixed", "pending"]), "review order");
    assert_eq!(all["filter"], Value::Null);

    // Following the `fixed` count: only fixed rows, the filter said, a way back.
    let filtered = &report["filtered"];
    assert_eq!(filtered["url"], format!("/runs/{}?status=fixed", f.run));
    assert_eq!(filtered["rows"], json!(["fixed"]));
    assert!(filtered["filter"].as_str().unwrap().starts_with("Showing the 1 fixed rules of 3"), "{filtered}");
    assert_eq!(filtered["back"], true);
    assert_eq!(filtered["current"], json!(["fixed 1"]));
    // The same without JavaScript: the server filters.
    assert_eq!(report["no_script"]["rows"], json!(["fixed"]));

    for (name, page) in [("run", all), ("filtered", filtered)] {
        assert_eq!(page["pwned"], "undefined", "{name} page: script ran");
        assert_eq!(page["imgs"], 0, "{name} page: an <img> from the data");
        assert_eq!(page["onerror"], 0, "{name} page: an onerror handler");
        assert_eq!(page["inline_scripts"], 0, "{name} page: an inline script");
        assert_eq!(page["csp_violations"], json!([]), "{name} page: CSP had to block something");
    }
    assert_eq!(report["errors"], json!([]), "page errors");

    for name in ["web-run-chart.png", "web-rules-fixed.png"] {
        let png = std::fs::read(out.join(name)).unwrap_or_else(|_| panic!("{name} was written"));
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{name}: a PNG");
        assert!(png.len() > 20_000, "{name}: a page, not a blank: {} bytes", png.len());
    }
}

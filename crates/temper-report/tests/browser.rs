//! The HTML report in a real browser: headless Chromium runs its script, and the DOM it
//! builds is checked; a screenshot is kept under target/test-artifacts/report.png.
mod common;

use std::process::Command;

use common::*;
use temper_report::{Format, load, render};

#[tokio::test]
async fn the_html_report_renders_in_chromium() {
    let f = ReportFixture::rhel9_run().await;
    let data = load(&f.store, f.run).await.unwrap();
    let html = render(&data, Some(rhel9()), Format::Html).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    std::fs::write(&page, &html).unwrap();
    std::fs::write(artifacts().join("report.html"), &html).unwrap();
    let url = format!("file://{}", page.display());

    let dom = run(browser(&dir.path().join("p1")).args(["--dump-dom", "--virtual-time-budget=3000"]).arg(&url));
    assert!(dom.contains("temper report"), "the page rendered");
    assert!(dom.contains("<h2>Summary</h2>"));
    assert!(dom.contains("61.25 → 68.50"));
    assert!(dom.contains("Escalated rules"));
    let c = rhel9();
    for short in ESCALATED {
        let rule = c.rule(short).unwrap();
        assert!(dom.contains(&format!("id=\"rule-{}\"", short.replace('_', "-"))), "{short}: section");
        assert!(dom.contains(&rule.stig_ids[0]), "{short}: STIG id on the page");
    }
    assert!(dom.contains("Next step for a human"));
    assert!(dom.contains("Inspect <code>nginx.service</code>"), "backticks become code");
    // The inline script ran: it counts the rows the filter shows.
    assert!(dom.contains("20 of 20 shown"), "the report's script did not run");
    // And the data's script did not: it is text.
    assert!(dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!dom.contains("<script>alert(1)"));

    let png = artifacts().join("report.png");
    let _ = std::fs::remove_file(&png);
    run(browser(&dir.path().join("p2"))
        .arg(format!("--screenshot={}", png.display()))
        .args(["--window-size=1280,2000", "--virtual-time-budget=3000"])
        .arg(&url));
    let bytes = std::fs::read(&png).expect("chromium wrote the screenshot");
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
    assert!(bytes.len() > 50_000, "a page, not a blank: {} bytes", bytes.len());

    // Printed, every fold is open: an attempt's revert script (inside a closed <details>)
    // is in the PDF's text.
    let pdf = artifacts().join("report.pdf");
    let _ = std::fs::remove_file(&pdf);
    run(browser(&dir.path().join("p3"))
        .arg(format!("--print-to-pdf={}", pdf.display()))
        .args(["--no-pdf-header-footer", "--virtual-time-budget=3000"])
        .arg(&url));
    let text = run(Command::new("pdftotext").arg(&pdf).arg("-"));
    assert!(text.contains("chown -R 1000 /etc/ssh/sshd_config.d"), "a folded revert script is printed");
    assert!(!text.contains("Download replay.sh"), "controls are hidden in print");
}

/// The rules grouped by status in review order, and the progress chart, as Chromium shows them
/// (screenshot report-review.png); the hostile rule id in the chart
/// stays text.
#[tokio::test]
async fn the_grouped_rules_and_the_progress_chart_in_chromium() {
    let f = ReportFixture::rhel9_review().await;
    let data = load(&f.store, f.run).await.unwrap();
    let html = render(&data, Some(rhel9()), Format::Html).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    std::fs::write(&page, &html).unwrap();
    let url = format!("file://{}", page.display());

    let dom = run(browser(&dir.path().join("p1")).args(["--dump-dom", "--virtual-time-budget=3000"]).arg(&url));
    assert!(dom.contains("20 of 20 shown"), "the report's script ran over every group");
    let chart = &dom[dom.find("<svg").expect("the chart in the DOM")..dom.find("</svg>").unwrap()];
    assert_eq!(chart.matches("class=\"fixed-point\"").count(), 5);
    assert_eq!(chart.matches("class=\"score-point\"").count(), 2);
    assert!(chart.contains("&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;"), "the hostile rule id as text");
    assert!(!dom.contains("<script>alert(1)"), "no injected script");
    let groups: Vec<&str> = dom
        .match_indices("<details class=\"status-group\" id=\"status-")
        .map(|(i, m)| {
            let rest = &dom[i + m.len()..];
            &rest[..rest.find('"').unwrap()]
        })
        .collect();
    assert_eq!(groups[..4], ["escalated", "still_failing", "fixed", "error"]);
    assert!(!dom.contains("status-group\" hidden") && !dom.contains("hidden=\"\" id=\"status-"), "no group hidden");

    // The whole page, chart near the top and the groups at the bottom (Chromium's --screenshot
    // does not scroll reliably to an anchor).
    let png = artifacts().join("report-review.png");
    let _ = std::fs::remove_file(&png);
    run(browser(&dir.path().join("p2"))
        .arg(format!("--screenshot={}", png.display()))
        .args(["--window-size=1280,6000", "--virtual-time-budget=3000"])
        .arg(&url));
    let bytes = std::fs::read(&png).expect("chromium wrote the screenshot");
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
    assert!(bytes.len() > 100_000, "a page, not a blank: {} bytes", bytes.len());
}

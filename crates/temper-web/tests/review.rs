//! The run page's rules in review order, its filter by status (`?status=`, no script needed)
//! and its progress chart, over HTTP.
mod common;

use common::*;
use reqwest::StatusCode;

async fn page(url: &str) -> (StatusCode, String) {
    let r = reqwest::get(url).await.unwrap_or_else(|e| panic!("GET {url}: {e}"));
    (r.status(), r.text().await.unwrap())
}

/// The statuses of the rules table's rows, top to bottom.
fn rows(page: &str) -> Vec<String> {
    page.split("<tr data-status=\"").skip(1).map(|r| r[..r.find('"').unwrap()].to_string()).collect()
}

#[tokio::test]
async fn rules_come_in_review_order_and_filter_by_status() {
    let f = WebFixture::running().await;
    let web = serve(&f.store, None).await;
    let run = f.run;

    let (status, all) = page(&format!("{}/runs/{run}", web.base)).await;
    assert_eq!(status, StatusCode::OK);
    // Content order is fixed, escalated, pending: review order puts escalated first.
    assert_eq!(rows(&all), ["escalated", "fixed", "pending"]);
    let counts = &all[all.find("id=\"counts\"").unwrap()..all.find("</ul>").unwrap()];
    for s in ["escalated", "fixed", "pending"] {
        assert!(counts.contains(&format!("<a href=\"/runs/{run}?status={s}#rules\">{s} <b>1</b></a>")), "a link per count: {counts}");
    }
    assert!(counts.find("escalated").unwrap() < counts.find("fixed").unwrap(), "counts in review order");
    assert!(!all.contains("id=\"filter\""), "no filter shown");

    let (status, fixed) = page(&format!("{}/runs/{run}?status=fixed", web.base)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(rows(&fixed), ["fixed"]);
    assert!(fixed.contains("Showing the 1 <b>fixed</b> rules of 3"), "the filter shown");
    assert!(fixed.contains(&format!("<a href=\"/runs/{run}#rules\">show all rules</a>")), "a way back to all");
    assert!(fixed.contains(&format!("<a href=\"/runs/{run}?status=fixed#rules\" aria-current=\"true\">")), "the current one marked");

    let (status, none) = page(&format!("{}/runs/{run}?status=waived", web.base)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(rows(&none).is_empty() && none.contains("No waived rules in this run."));
    let (_, empty) = page(&format!("{}/runs/{run}?status=", web.base)).await;
    assert_eq!(rows(&empty).len(), 3, "an empty filter is no filter");
}

#[tokio::test]
async fn a_bad_status_is_a_clear_400() {
    let f = WebFixture::running().await;
    let web = serve(&f.store, None).await;
    for bad in ["fixd", "%3Cscript%3E", "Fixed"] {
        let (status, body) = page(&format!("{}/runs/{}?status={bad}", web.base, f.run)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
        assert!(body.contains("is not a rule status: use one of escalated, still_failing, fixed, pending"), "{body}");
    }
}

#[tokio::test]
async fn the_progress_chart_is_inline_svg_with_its_points() {
    let f = WebFixture::running().await;
    let web = serve(&f.store, None).await;
    let url = format!("{}/runs/{}", web.base, f.run);
    let (_, before) = page(&url).await;
    assert!(before.contains("No progress yet") && !before.contains("<svg"), "no fix and no score yet: a note");

    f.with_progress().await;
    let (_, after) = page(&url).await;
    let svg = &after[after.find("<svg").expect("the chart")..after.find("</svg>").unwrap()];
    assert_eq!(svg.matches("class=\"fixed-point\"").count(), 3, "fixed, hostile fixed, hostile lost");
    assert_eq!(svg.matches("class=\"score-point\"").count(), 1);
    assert!(svg.contains("sshd_disable_root_login fixed at"));
    // The hostile rule id is text: escaped, its control characters made visible.
    assert!(
        svg.contains("&lt;script&gt;window.__pwned=1&lt;/script&gt;\\x01\\x07 &lt;img src=x onerror=&quot;window.__pwned=1&quot;&gt;"),
        "{svg}"
    );
    assert!(!after.contains(PWN_SCRIPT) && !after.contains("<img src=x"), "nothing hostile unescaped");
    assert!(!svg.chars().any(|c| c.is_control()));
}

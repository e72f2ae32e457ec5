//! The reports in review order (escalated, still failing, fixed, then the rest), the HTML
//! report's rules grouped by status, and its progress chart drawn from the run's events.
mod common;

use common::*;
use serde_json::Value;
use temper_report::{Format, load, render};

fn rank(status: &Value) -> usize {
    status.as_str().unwrap().parse::<RuleStatus>().unwrap().review_rank()
}

#[tokio::test]
async fn json_and_markdown_list_the_rules_in_review_order() {
    let f = ReportFixture::rhel9_review().await;
    let data = load(&f.store, f.run).await.unwrap();
    let v: Value = serde_json::from_str(&render(&data, Some(rhel9()), Format::Json).unwrap()).unwrap();
    let rules = v["rules"].as_array().unwrap();
    let statuses: Vec<&str> = rules.iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(statuses[..9], ["escalated"; 5].into_iter().chain(["still_failing"]).chain(["fixed"; 3]).collect::<Vec<_>>()[..]);
    assert!(rules.windows(2).all(|w| rank(&w[0]["status"]) <= rank(&w[1]["status"])), "{statuses:?}");
    // Within a status, the content's order.
    let short = |s: &str| rules.iter().filter(|r| r["status"] == s).map(|r| r["short_id"].as_str().unwrap()).collect::<Vec<_>>();
    assert_eq!(short("escalated"), ESCALATED);
    assert_eq!(short("fixed"), [FIXED_ROOT, FIXED_OWNER, FIXED_EMPTY]);
    let groups: Vec<(&str, u64)> =
        v["groups"].as_array().unwrap().iter().map(|g| (g["status"].as_str().unwrap(), g["n"].as_u64().unwrap())).collect();
    assert_eq!(groups[..3], [("escalated", 5), ("still_failing", 1), ("fixed", 3)]);
    assert_eq!(groups.iter().map(|g| g.1).sum::<u64>(), 20);
    assert_eq!(v["progress"]["fixed"].as_array().unwrap().len(), 5, "three fixes, a hostile one gained and lost");
    assert_eq!(v["progress"]["scores"][1]["score"], 68.5);

    let md = render(&data, Some(rhel9()), Format::Md).unwrap();
    let table = &md[md.find("## All rules").unwrap()..];
    let at = |short: &str| table.find(&format!("| `{short}` |")).unwrap_or_else(|| panic!("{short} in the table"));
    assert!(at(ESC_NOFIX) < at("sshd_set_idle_timeout"));
    assert!(at("sshd_set_idle_timeout") < at(FIXED_ROOT));
    assert!(at(FIXED_EMPTY) < at("directory_owner_sshd_config_d"), "passing after fixed");
}

#[tokio::test]
async fn the_html_report_groups_rules_by_status_and_draws_the_progress() {
    let f = ReportFixture::rhel9_review().await;
    let data = load(&f.store, f.run).await.unwrap();
    let html = render(&data, Some(rhel9()), Format::Html).unwrap();
    let at = |s: &str| html.find(&format!("id=\"status-{s}\"")).unwrap_or_else(|| panic!("a group for {s}"));
    assert!(
        at("escalated") < at("still_failing")
            && at("still_failing") < at("fixed")
            && at("fixed") < at("skipped")
            && at("skipped") < at("passing")
    );
    assert!(html.contains("<a href=\"#status-fixed\">"), "a jump link per status");
    assert_eq!(html.matches("<details class=\"status-group\"").count(), statuses(&data));

    let svg = &html[html.find("<svg").expect("the chart")..html.find("</svg>").unwrap()];
    assert_eq!(svg.matches("class=\"fixed-point\"").count(), 5);
    assert_eq!(svg.matches("class=\"score-point\"").count(), 2);
    assert!(svg.contains("Progress: 3 rules fixed; score 61.25% → 68.50%"));
    // The hostile rule id is text in the chart: no element, no control character.
    assert!(svg.contains("&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;"), "{svg}");
    assert!(svg.contains("\\x01\\x07"));
    assert!(!svg.contains("<script") && !svg.chars().any(|c| c.is_control()));
    assert_eq!(html.matches("<script").count(), 1, "only the report's own inline script");
}

#[tokio::test]
async fn a_run_without_events_has_no_chart_but_a_note() {
    let f = ReportFixture::rhel9_run().await;
    let data = load(&f.store, f.run).await.unwrap();
    let html = render(&data, Some(rhel9()), Format::Html).unwrap();
    assert!(!html.contains("<svg"));
    assert!(html.contains("No progress yet"));
}

/// How many statuses the run's rules have.
fn statuses(data: &temper_report::RunData) -> usize {
    data.rules.iter().map(|r| r.status).collect::<std::collections::BTreeSet<_>>().len()
}

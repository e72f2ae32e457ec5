//! A plan run's page in headless Chromium (`tests/web/plan.js`): the Plan section's rows in the
//! plan's order with their outcomes and why the loop redid step 2, the link to that rule's page
//! and its plan line, and the hostile reason and plan folder left inert (screenshot
//! web-plan.png under target/test-artifacts).
mod common;

use common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plan_of_a_run_and_a_redone_step_in_chromium() {
    let f = WebFixture::planned().await;
    let web = serve(&f.store, None).await;
    let out = artifacts();
    let _ = std::fs::remove_file(out.join("web-plan.png"));

    let report = puppeteer("plan.js", &[&web.base, &f.run.to_string(), out.to_str().unwrap()]).await;

    let page = &report["run"];
    let rows = page["rows"].as_array().unwrap();
    let got: Vec<(i64, &str, &str, bool)> = rows
        .iter()
        .map(|r| {
            (r["step"].as_i64().unwrap(), r["outcome"].as_str().unwrap(), r["badge"].as_str().unwrap(), r["visible"].as_bool().unwrap())
        })
        .collect();
    assert_eq!(got, [(1, "kept", "kept", true), (2, "redone", "redone", true), (3, "not_applied", "not applied", true)]);
    let redone = rows[1]["text"].as_str().unwrap();
    let why =
        format!("redone by the loop: the plan's fix (attempt 1) was apply_failed ({}); fixed by the stock fix (attempt 2)", hostile());
    assert_eq!(redone, why, "the hostile reason as text");
    assert_eq!(rows[2]["text"], "not needed: the rule passed already on this target");
    assert_eq!(page["counts"], "1 applied from the plan and kept, 1 redone by the loop, 0 escalated, 0 not fixed, 1 not applied.");
    assert!(page["heading"].as_str().unwrap().contains(&format!("exported from run 7, applied from {}", hostile())), "{page}");

    let rule = &report["rule"];
    assert_eq!(rule["url"], format!("/runs/{}/rules/{}", f.run, HOSTILE));
    assert_eq!(rule["rule_plan"], json!({"outcome": "redone", "text": format!("step 2 of the proven plan: {why}")}));

    for (name, page) in [("run", page), ("rule", rule)] {
        assert_eq!(page["pwned"], "undefined", "{name} page: script ran");
        assert_eq!(page["imgs"], 0, "{name} page: an <img> from the data");
        assert_eq!(page["onerror"], 0, "{name} page: an onerror handler");
        assert_eq!(page["inline_scripts"], 0, "{name} page: an inline script");
        assert_eq!(page["csp_violations"], json!([]), "{name} page: CSP had to block something");
    }
    assert_eq!(report["errors"], json!([]), "page errors");
    let png = std::fs::read(out.join("web-plan.png")).expect("web-plan.png was written");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000, "the plan section, not a blank: {} bytes", png.len());
}

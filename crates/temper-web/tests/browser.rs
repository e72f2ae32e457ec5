//! The web view in a real browser: headless Chromium, driven by puppeteer-core
//! (`tests/web/live.js`), watches a run move on without a reload, opens a rule page (its
//! screenshot kept under target/test-artifacts/web-rule.png), and runs none of the hostile text
//! the store holds.
mod common;

use std::process::Stdio;
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use temper_journal::Verdict;
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{ChildStdout, Command};

/// The script's next line of stdout.
async fn line(lines: &mut Lines<BufReader<ChildStdout>>, what: &str) -> String {
    match tokio::time::timeout(Duration::from_secs(60), lines.next_line()).await {
        Ok(Ok(Some(l))) => l,
        other => panic!("live.js: no {what} line ({other:?}); its stderr follows the test output"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_run_page_and_a_rule_page_in_chromium() {
    let (node, chromium) = tools();
    let f = WebFixture::running().await;
    let web = serve(&f.store, None).await;
    let shot = artifacts().join("web-rule.png");
    let _ = std::fs::remove_file(&shot);

    let mut child = Command::new(node)
        .arg(repo_root().join("tests/web/live.js"))
        .args([&web.base, &f.run.to_string(), HOSTILE])
        .arg(&shot)
        .env("CHROMIUM", chromium)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("node starts");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert_eq!(line(&mut lines, "`loaded`").await, "loaded");

    // The run goes on while the page is open: a new phase and rule, events, one of them hostile.
    f.store.set_phase(f.run, Phase::Regression, Some(FIXED)).await.unwrap();
    f.store.event(f.run, Some(HOSTILE), &EventData::Reflect { distilled: hostile(), banned: None, tips: 0 }).await.unwrap();
    // A rule fixed while the page is open: the chart is drawn again, with one more.
    let verdict =
        EventData::Verdict { attempt: Some(temper_journal::AttemptNo::FIRST), verdict: Verdict::Fixed, reason: "the rule passes".into() };
    f.store.event(f.run, Some(FIXED), &verdict).await.unwrap();
    f.store
        .event(
            f.run,
            None,
            &EventData::RegressionCheck { fixes: 1, rules: 2, watched: 0, failed: vec![], secs: 1.0, stalls: 0, every: 1, problem: None },
        )
        .await
        .unwrap();

    let report: Value = serde_json::from_str(&line(&mut lines, "report").await).expect("live.js prints JSON");
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait()).await.expect("live.js ends").unwrap();
    assert!(status.success(), "live.js failed: {status}");
    println!("{}", serde_json::to_string_pretty(&report).unwrap());

    // The phase changed on the page, without a reload.
    assert_eq!(report["before"], "fix");
    let live = &report["live"];
    assert_eq!(live["phase"], "regression");
    assert_eq!(live["rule"], "sshd_disable_root_login");
    assert_eq!(live["status"], "running");
    assert_eq!(live["first_event"], "regression_check", "the newest event on top");
    assert_eq!(live["marker"], "same page", "the page was not reloaded");
    assert_eq!(live["navigations"], 1);
    assert!(live["updates"].as_u64().unwrap() >= 2, "a state on connect, then one for the change");
    let (before, after) = (report["chart_before"].as_str().unwrap(), live["chart"].as_str().unwrap());
    assert!(live["chart_redraws"].as_u64().unwrap() >= 1, "the chart was fetched again");
    // "Progress: N rules fixed…"; no title while nothing was drawn.
    let fixed = |title: &str| if title.is_empty() { Some(0) } else { title.split(' ').nth(1).and_then(|n| n.parse::<usize>().ok()) };
    assert_eq!(fixed(after), fixed(before).map(|n| n + 1), "one more rule fixed on the chart: {before:?} → {after:?}");

    // Nothing hostile ran or became markup; it shows as text, and no policy had to block anything.
    for (name, page) in [("run", &report["run_page"]), ("rule", &report["rule_page"])] {
        assert_eq!(page["pwned"], "undefined", "{name} page: script ran");
        assert_eq!(page["imgs"], 0, "{name} page: an <img> from the data");
        assert_eq!(page["img_onerror"], 0, "{name} page: an onerror handler");
        assert_eq!(page["inline_scripts"], 0, "{name} page: an inline script");
        assert_eq!(page["csp_violations"], json!([]), "{name} page: CSP had to block something");
        assert_eq!(page["shows_script"], true, "{name} page: the <script> text is not shown literally");
    }
    assert_eq!(report["rule_page"]["shows_img"], true, "the <img> text is shown literally");
    assert_eq!(report["rule_page"]["title"].as_str().unwrap(), hostile());
    assert_eq!(report["errors"], json!([]), "page errors");

    let png = std::fs::read(&shot).expect("the screenshot was written");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
    assert!(png.len() > 20_000, "a page, not a blank: {} bytes", png.len());
}

//! A run that was killed and resumed twice says so in every report: when, where it stood, the
//! attempt the stop cut short, and the kept state rebuilt when its snapshots were gone. A run
//! that went through in one go says that instead.
mod common;

use std::path::Path;

use common::*;
use serde_json::Value;
use temper_journal::{AttemptNo, EventData, Phase, ReplayWhy, Replayed, RunStatus};
use temper_report::{Format, load, render};

/// A snapshot name with markup and a table's cell separator: code in Markdown, text in HTML.
const HOSTILE: &str = "temper-r1-a2<script>alert(1)</script>|x";

/// The rhel9 fixture run, killed during an attempt, resumed with its checkpoint gone, then
/// killed again during a regression check and resumed.
async fn resumed_twice() -> (ReportFixture, String) {
    let f = ReportFixture::rhel9_run().await;
    let rule = full(rhel9(), FIXED_ROOT);
    let note = |data: EventData, rule: Option<String>| {
        let (store, run) = (&f.store, f.run);
        async move { store.event(run, rule.as_deref(), &data).await.unwrap() }
    };
    note(EventData::Error { error: "the driver was killed".into() }, None).await;
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    note(EventData::Resume { was: RunStatus::Interrupted, phase: Phase::Fix, checkpoint: HOSTILE.into() }, None).await;
    note(EventData::AttemptInterrupted { attempt: AttemptNo::new(2).unwrap(), state: AttemptState::Started }, Some(rule.clone())).await;
    note(EventData::CheckpointLost { missing: vec![HOSTILE.into()], from: "baseline".into(), replayed: 3 }, None).await;
    let replayed =
        Replayed::Onto { attempt: AttemptNo::FIRST, onto: "baseline".into(), exit_code: Some(0), why: ReplayWhy::CheckpointLost };
    note(EventData::Replay(replayed), Some(rule.clone())).await;
    note(EventData::Resume { was: RunStatus::Running, phase: Phase::Regression, checkpoint: "temper-r1-lost3".into() }, None).await;
    (f, rule)
}

fn schema_errors(doc: &Value) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas/report.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let v = jsonschema::options().build(&schema).unwrap();
    v.iter_errors(doc).map(|e| format!("{}: {e}", e.instance_path())).collect()
}

#[tokio::test]
async fn each_resume_is_in_every_report_with_what_it_cut_short_and_rebuilt() {
    let (f, rule) = resumed_twice().await;
    let data = load(&f.store, f.run).await.unwrap();
    let events = f.store.events(f.run, None).await.unwrap();

    let doc: Value = serde_json::from_str(&render(&data, Some(rhel9()), Format::Json).unwrap()).unwrap();
    assert_eq!(schema_errors(&doc), Vec::<String>::new());
    let all = doc["interruptions"].as_array().expect("interruptions is a list");
    assert_eq!(all.len(), 2, "{all:#?}");
    let (first, second) = (&all[0], &all[1]);
    assert_eq!((first["was"].as_str(), first["phase"].as_str()), (Some("interrupted"), Some("fix")));
    assert_eq!(first["cut_short"][0]["rule_id"], rule.as_str());
    assert_eq!(first["cut_short"][0]["short_id"], FIXED_ROOT);
    assert_eq!((first["cut_short"][0]["attempt"].as_i64(), first["cut_short"][0]["state"].as_str()), (Some(2), Some("started")));
    assert_eq!(first["rebuilt"]["missing"][0], HOSTILE);
    assert_eq!((first["rebuilt"]["from"].as_str(), first["rebuilt"]["replayed"].as_u64()), (Some("baseline"), Some(3)));
    // The stop is dated by the last event before the resume.
    let resume = events.iter().position(|e| matches!(e.data, EventData::Resume { .. })).unwrap();
    assert_eq!(first["stopped_at"], events[resume - 1].ts.as_str());
    assert_eq!(first["resumed_at"], events[resume].ts.as_str());
    assert!(first["down_for"].as_str().unwrap().ends_with(" s"), "down for over a second: {}", first["down_for"]);
    assert_eq!((second["was"].as_str(), second["phase"].as_str()), (Some("running"), Some("regression")));
    assert_eq!(second["cut_short"], Value::Array(Vec::new()), "the second stop cut no attempt short");
    assert_eq!(second["rebuilt"], Value::Null, "its checkpoint was there");
    assert!(second["says"].as_str().unwrap().starts_with("stopped during regression (run status running), down "), "{}", second["says"]);

    let md = render(&data, Some(rhel9()), Format::Md).unwrap();
    assert!(md.contains("| Resumed | 2 time(s): see Interruptions |"), "the header says so");
    assert!(md.contains("## Interruptions (2)"));
    let row = md.lines().find(|l| l.starts_with("| ") && l.contains("cut short")).expect("a row names the attempt cut short");
    assert!(row.contains("attempt \\#2 on"), "{row}");
    assert!(row.contains(&format!("`{FIXED_ROOT}`")) && row.contains("running 3 kept fix(es) again"), "{row}");
    assert!(row.contains("`temper-r1-a2<script>alert(1)</script>\\|x`"), "the snapshot name is code, its `|` escaped: {row}");
    assert_eq!(row.matches(" | ").count(), 2, "three cells: {row}");

    let html = render(&data, Some(rhel9()), Format::Html).unwrap();
    assert_eq!(html.matches("<tr class=\"interruption\"").count(), 2);
    assert!(html.contains("data-phase=\"fix\" data-rebuilt=\"yes\"") && html.contains("data-phase=\"regression\" data-rebuilt=\"no\""));
    assert!(!html.contains("<script>alert(1)"), "the snapshot name is escaped");
    assert!(html.contains("<code>temper-r1-a2&lt;script&gt;alert(1)&lt;/script&gt;|x</code>"), "shown as code, escaped");
}

#[tokio::test]
async fn a_run_that_went_through_in_one_go_says_so() {
    let f = ReportFixture::rhel9_run().await;
    let data = load(&f.store, f.run).await.unwrap();
    let doc: Value = serde_json::from_str(&render(&data, Some(rhel9()), Format::Json).unwrap()).unwrap();
    assert_eq!(schema_errors(&doc), Vec::<String>::new());
    assert_eq!(doc["interruptions"], Value::Array(Vec::new()));
    let md = render(&data, Some(rhel9()), Format::Md).unwrap();
    assert!(md.contains("| Resumed | no: it went through in one go |") && !md.contains("## Interruptions"));
    let html = render(&data, Some(rhel9()), Format::Html).unwrap();
    assert!(html.contains("no: it went through in one go") && !html.contains("id=\"interruptions\""));
}

/// As Chromium shows it: the header's link to the section, two rows, the snapshot name as text
/// in a code element (screenshot report-interruptions.png).
#[tokio::test]
async fn the_interruptions_in_chromium() {
    let (f, _) = resumed_twice().await;
    let html = render(&load(&f.store, f.run).await.unwrap(), Some(rhel9()), Format::Html).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    std::fs::write(&page, &html).unwrap();
    let url = format!("file://{}", page.display());
    let dom = run(browser(&dir.path().join("p1")).args(["--dump-dom", "--virtual-time-budget=3000"]).arg(&url));
    assert!(dom.contains("<a href=\"#interruptions\">2 time(s)</a>"), "the header links to the section");
    let section = &dom[dom.find("<section id=\"interruptions\">").expect("the section in the DOM")..];
    let section = &section[..section.find("</section>").unwrap()];
    assert_eq!(section.matches("<tr class=\"interruption\"").count(), 2);
    assert!(section.contains("<code>temper-r1-a2&lt;script&gt;alert(1)&lt;/script&gt;|x</code>"), "{section}");
    assert!(!dom.contains("<script>alert(1)"), "no injected script");
    let png = artifacts().join("report-interruptions.png");
    let _ = std::fs::remove_file(&png);
    run(browser(&dir.path().join("p2"))
        .arg(format!("--screenshot={}", png.display()))
        .args(["--window-size=1280,1600"])
        .arg(format!("{url}#interruptions")));
    assert!(std::fs::read(&png).expect("chromium wrote the screenshot").starts_with(b"\x89PNG\r\n\x1a\n"));
}

//! The web view over HTTP: its pages, 404s, downloads, the live event stream, and the bind
//! and token rules.
mod common;

use std::time::Duration;

use common::*;
use reqwest::StatusCode;
use temper_web::{Server, Token, WebConfig, WebError};

/// `s` as an HTML page writes it escaped (minijinja escapes `/` too).
fn html(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            '/' => out.push_str("&#x2f;"),
            c => out.push(c),
        }
    }
    out
}

async fn get(url: &str) -> reqwest::Response {
    reqwest::get(url).await.unwrap_or_else(|e| panic!("GET {url}: {e}"))
}

async fn text(url: &str) -> (StatusCode, String) {
    let r = get(url).await;
    let csp = r.headers().get("content-security-policy").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    assert!(csp.contains("default-src 'self'"), "{url}: no CSP ({csp})");
    (r.status(), r.text().await.unwrap())
}

#[tokio::test]
async fn pages_answer_and_escape_what_they_show() {
    let f = WebFixture::running().await;
    let web = serve(&f.store, None).await;
    let run = f.run;

    let (status, index) = text(&format!("{}/", web.base)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(index.contains(&format!("href=\"/runs/{run}\"")), "the run is listed");
    assert!(index.contains("id=\"fleets\""), "a place for fleets");

    let (status, page) = text(&format!("{}/runs/{run}", web.base)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("<dd id=\"phase\">fix</dd>"), "the phase");
    assert!(page.contains("<dd id=\"score\">61.25% → -</dd>"), "the score as a percentage");
    assert!(page.contains("sshd_set_keepalive"), "the current rule");
    assert!(page.contains("<script src=\"/static/live.js\" defer></script>"));
    // Escaped: the hostile title, reason and event data show as text.
    assert!(page.contains(&html(&hostile())), "the hostile title, escaped");
    assert!(!page.contains(PWN_SCRIPT) && !page.contains("<img src=x"), "nothing hostile unescaped");
    // One rule fixed and one escalated, and no first scan recorded: too little measured for a
    // prediction (`journal::predict_end` wants the first scan and three settled rules), so no
    // figure is made up.
    assert!(page.contains("<dd id=\"eta\">-</dd>"), "no ETA from two rules");
    // No inline script or handler anywhere.
    assert_eq!(page.matches("<script").count(), 1, "only the static script");
    assert!(!page.contains("onerror=\"") && !page.contains("onclick=\"") && !page.contains("<img"));

    let (status, rule) = text(&format!("{}/runs/{run}/rules/{HOSTILE}", web.base)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(rule.contains("still_failing"), "the verdict");
    assert!(rule.contains(&format!("<dt>regressions</dt><dd>{}</dd>", html(FIXED))), "the attempt's own regressions");
    assert!(rule.contains(&html("chown root: /etc/ssh/sshd_config.d/*.conf")), "the fix script");
    assert!(rule.contains(&html(&format!("# undo {HOSTILE}"))), "the revert script");
    assert!(rule.contains(&html(&format!("chown: {PWN_IMG}"))), "stderr, escaped");
    assert!(rule.contains(&html(&hostile())), "output, escaped");
    assert!(!rule.contains(PWN_IMG) && !rule.contains(PWN_SCRIPT));
    assert!(!rule.contains("<script"), "the rule page has no script at all");
    assert!(rule.contains("What the final scan found") && rule.contains(&html("user_id = \"0\"")), "the state expected");
    assert!(rule.contains(&html(&format!("user={:?}", hostile()))), "the item found, escaped");

    let (status, js) = text(&format!("{}/static/live.js", web.base)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(js.contains("EventSource"));
}

/// A resumed run says so on its page: how many times, and each stop in a line, escaped.
#[tokio::test]
async fn a_resumed_run_shows_each_stop() {
    use temper_journal::{AttemptState, EventData, Phase, RunStatus};
    let f = WebFixture::running().await;
    let web = serve(&f.store, None).await;
    let page = |web: &str| format!("{web}/runs/{}", f.run);
    assert!(text(&page(&web.base)).await.1.contains("<dd id=\"resumed\">no</dd>"), "not resumed yet");
    let resume = EventData::Resume { was: RunStatus::Interrupted, phase: Phase::Fix, checkpoint: "baseline".into() };
    f.store.event(f.run, None, &resume).await.unwrap();
    let cut = EventData::AttemptInterrupted { attempt: temper_journal::AttemptNo::FIRST, state: AttemptState::Applied };
    f.store.event(f.run, Some(HOSTILE), &cut).await.unwrap();
    let (status, body) = text(&page(&web.base)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.contains("<dd id=\"resumed\">1</dd>"), "the count");
    let line = body.split("<li class=\"interruption\" data-phase=\"fix\">").nth(1).expect("a line for the stop");
    let line = &line[..line.find("</li>").unwrap()];
    assert!(line.contains("stopped during fix (run status interrupted)") && line.contains("attempt #1 on"), "{line}");
    assert!(line.contains(&html(temper_scap::short_rule_id(HOSTILE))), "the rule cut short, escaped: {line}");
    assert!(!body.contains(PWN_SCRIPT) && !body.contains("<img src=x"), "nothing hostile unescaped");
}

#[tokio::test]
async fn unknown_runs_rules_and_pages_are_404() {
    let f = WebFixture::running().await;
    let web = serve(&f.store, None).await;
    for (path, says) in [
        ("/runs/999".to_string(), "no run 999"),
        ("/runs/999/events".to_string(), "no run 999"),
        ("/runs/999/report.md".to_string(), "no run 999"),
        (format!("/runs/{}/rules/xccdf_nope", f.run), "has no rule xccdf_nope"),
        (format!("/runs/{}/report.pdf", f.run), "no such page"),
        ("/static/nope.js".to_string(), "no such page"),
        ("/nope".to_string(), "no such page"),
    ] {
        let r = get(&format!("{}{path}", web.base)).await;
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{path}");
        assert!(r.headers()["content-type"].to_str().unwrap().starts_with("text/plain"), "{path}");
        let body = r.text().await.unwrap();
        assert!(body.contains(says), "{path}: {body}");
    }
}

#[tokio::test]
async fn reports_download_and_checklists_need_the_datastream() {
    let f = WebFixture::running().await;
    let web = serve(&f.store, None).await;
    for (ext, kind, has) in
        [("md", "text/markdown", "sshd_disable_root_login"), ("html", "text/html", "<html"), ("json", "application/json", "\"rules\"")]
    {
        let r = get(&format!("{}/runs/{}/report.{ext}", web.base, f.run)).await;
        assert_eq!(r.status(), StatusCode::OK, "{ext}");
        assert!(r.headers()["content-type"].to_str().unwrap().starts_with(kind), "{ext}");
        let disposition = r.headers()["content-disposition"].to_str().unwrap().to_string();
        assert_eq!(disposition, format!("attachment; filename=\"temper-run-{}.{ext}\"", f.run));
        let body = r.text().await.unwrap();
        assert!(body.contains(has), "{ext}: {}", &body[..body.len().min(300)]);
        if ext == "json" {
            let v: serde_json::Value = serde_json::from_str(&body).unwrap();
            assert!(v.is_object());
        }
    }
    // The assessors' formats work without the datastream, and download as .json files.
    for (name, has) in
        [("oscal-ar", "\"assessment-results\""), ("oscal-poam", "\"plan-of-action-and-milestones\""), ("hdf", "\"profiles\"")]
    {
        let r = get(&format!("{}/runs/{}/report.{name}", web.base, f.run)).await;
        assert_eq!(r.status(), StatusCode::OK, "{name}");
        assert!(r.headers()["content-type"].to_str().unwrap().starts_with("application/json"), "{name}");
        let disposition = r.headers()["content-disposition"].to_str().unwrap().to_string();
        assert_eq!(disposition, format!("attachment; filename=\"temper-run-{}.{name}.json\"", f.run));
        let body = r.text().await.unwrap();
        assert!(body.contains(has), "{name}: {}", &body[..body.len().min(300)]);
        assert!(serde_json::from_str::<serde_json::Value>(&body).unwrap().is_object(), "{name}");
    }
    for ext in ["ckl", "cklb"] {
        let r = get(&format!("{}/runs/{}/report.{ext}", web.base, f.run)).await;
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{ext}");
        let body = r.text().await.unwrap();
        assert!(body.contains(&format!("a {ext} checklist needs the run's datastream")) && body.contains(DATASTREAM), "{body}");
    }
}

/// Reads the stream until `done` holds for what came so far.
async fn read_until(r: &mut reqwest::Response, seen: &mut String, done: impl Fn(&str) -> bool) {
    let wait = async {
        while !done(seen) {
            let chunk = r.chunk().await.unwrap().expect("the stream ended early");
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
    };
    tokio::time::timeout(Duration::from_secs(10), wait).await.unwrap_or_else(|_| panic!("timed out; the stream so far:\n{seen}"));
}

#[tokio::test]
async fn the_event_stream_sends_state_and_events_as_the_run_moves() {
    let f = WebFixture::running().await;
    let web = serve(&f.store, None).await;
    let mut r = get(&format!("{}/runs/{}/events", web.base, f.run)).await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let mut seen = String::new();
    read_until(&mut r, &mut seen, |s| s.contains("event: state")).await;
    assert!(seen.contains("\"phase\":\"fix\""), "{seen}");
    assert!(seen.contains("event: event") && seen.contains("\"kind\":\"pick\""), "the journal so far: {seen}");

    // The loop moves on: a state event with the new phase and rule, then the new event.
    seen.clear();
    f.store.set_phase(f.run, Phase::Regression, Some(FIXED)).await.unwrap();
    f.store
        .event(
            f.run,
            None,
            &EventData::RegressionCheck { fixes: 1, rules: 2, watched: 0, failed: vec![], secs: 1.0, stalls: 0, every: 1, problem: None },
        )
        .await
        .unwrap();
    read_until(&mut r, &mut seen, |s| s.contains("\"phase\":\"regression\"") && s.contains("regression_check")).await;
    assert!(seen.contains("event: state"), "{seen}");
    assert!(seen.contains(&format!("\"rule\":\"{FIXED}\"")), "{seen}");
    assert_eq!(seen.matches("event: state").count(), 1, "one state for one change: {seen}");

    // Nothing changed: no new state event (keep-alives only).
    seen.clear();
    let quiet = tokio::time::timeout(Duration::from_millis(600), r.chunk()).await;
    if let Ok(Ok(Some(chunk))) = quiet {
        assert!(!String::from_utf8_lossy(&chunk).contains("event: state"), "a state without a change");
    }

    // A reconnect after the last event sees only what came after it.
    let events = f.store.events(f.run, None).await.unwrap();
    let last = events.last().unwrap().id;
    let mut again = reqwest::Client::new()
        .get(format!("{}/runs/{}/events", web.base, f.run))
        .header("Last-Event-ID", (last.get() - 1).to_string())
        .send()
        .await
        .unwrap();
    let mut seen = String::new();
    read_until(&mut again, &mut seen, |s| s.contains("event: state")).await;
    assert_eq!(seen.matches("event: event").count(), 1, "{seen}");
    assert!(seen.contains(&format!("id: {last}")), "{seen}");
}

/// The one `state` event's JSON the stream sends first.
async fn first_state(web: &WebServer, run: temper_journal::RunId) -> serde_json::Value {
    let mut r = get(&format!("{}/runs/{run}/events", web.base)).await;
    let mut seen = String::new();
    read_until(&mut r, &mut seen, |s| s.split("event: state\ndata: ").nth(1).is_some_and(|d| d.contains('\n'))).await;
    let data = seen.split("event: state\ndata: ").nth(1).and_then(|d| d.lines().next()).unwrap();
    serde_json::from_str(data).unwrap_or_else(|e| panic!("{e}: {data}"))
}

/// The text of the `<dd id="ID">` of `page`.
fn dd<'a>(page: &'a str, id: &str) -> &'a str {
    let from = page.split(&format!("<dd id=\"{id}\">")).nth(1).unwrap_or_else(|| panic!("no dd {id}"));
    &from[..from.find("</dd>").unwrap()]
}

/// Mid-run, a rule that other fixes made applicable is open: the page, the index and the state
/// event count it in the run's scope, the states add up to the scope (never `open 2 of 1`), and
/// the attempts are the tries the rules count (one undone with its batch is none), as `temper
/// status` and the loop's progress line show them: one [`temper_journal::Standing`].
#[tokio::test]
async fn rules_made_applicable_count_in_the_scope_the_page_and_the_stream_show() {
    let f = WebFixture::running().await;
    f.with_rules_made_applicable().await;
    let web = serve(&f.store, None).await;
    let (run, rules) = (f.store.run(f.run).await.unwrap(), f.store.rules(f.run).await.unwrap());
    let at = temper_journal::Standing::of_run(&run, &rules);
    let t = at.tally;
    assert_eq!((t.failing_at_start, t.became_applicable, t.in_scope, t.open, t.fixed, t.escalated), (3, 1, 4, 2, 1, 1), "{t:?}");
    assert_eq!(f.store.attempts(f.run).await.unwrap().len(), 3, "three attempts recorded, two of them tries");

    let (_, page) = text(&format!("{}/runs/{}", web.base, f.run)).await;
    assert_eq!(dd(&page, "open"), "2 of 4 in scope (3 failing at baseline, 1 became applicable)");
    assert_eq!(dd(&page, "attempts"), "2");
    assert_eq!(dd(&page, "phase"), "fix");
    let (_, index) = text(&format!("{}/", web.base)).await;
    let row = index.split(&format!("href=\"/runs/{}\"", f.run)).nth(1).unwrap();
    let cells: Vec<&str> = row.split("<td>").skip(7).take(6).map(|c| &c[..c.find("</td>").unwrap()]).collect();
    assert_eq!(cells, ["3", "4", "1", "1", "2", "2"], "failing at baseline, in scope, fixed, escalated, open, attempts");

    let state = first_state(&web, f.run).await;
    let standing = serde_json::to_value(&at).unwrap();
    for (key, want) in standing.as_object().unwrap() {
        assert_eq!(&state[key], want, "{key}: {state}");
    }
    assert_eq!((state["open"].as_u64(), state["in_scope"].as_u64(), state["attempts"].as_u64()), (Some(2), Some(4), Some(2)), "{state}");
    assert_eq!(state["rule"], APPLIES);
}

#[tokio::test]
async fn a_non_loopback_bind_needs_a_token() {
    let f = WebFixture::running().await;
    let journal: std::sync::Arc<dyn Journal> = std::sync::Arc::new(f.store.clone());
    let open = WebConfig::new("0.0.0.0:0".parse().unwrap(), None, "/nonexistent".into());
    let err = Server::bind(journal, open).await.err().expect("refused");
    assert!(matches!(err, WebError::OpenWithoutToken(_)), "{err}");
    assert!(err.to_string().contains("--token-file") && err.to_string().contains("TEMPER_WEB_TOKEN"), "{err}");
    let token = Token::new("t0ken").unwrap();
    temper_web::check_bind("0.0.0.0:8080".parse().unwrap(), Some(&token)).unwrap();
    temper_web::check_bind("[::1]:8080".parse().unwrap(), None).unwrap();
    assert!(temper_web::check_bind("192.168.1.4:8080".parse().unwrap(), None).is_err());
}

#[tokio::test]
async fn with_a_token_every_request_needs_it() {
    let f = WebFixture::running().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    std::fs::write(&file, "s3cret-Token-42\n").unwrap();
    let token = Token::from_file(&file).unwrap();
    assert!(!format!("{token:?}").contains("s3cret"), "the token is never printed");
    let web = serve(&f.store, Some(token)).await;
    let client = reqwest::Client::new();
    for path in ["/".to_string(), format!("/runs/{}", f.run), "/static/live.js".into(), format!("/runs/{}/events", f.run)] {
        let url = format!("{}{path}", web.base);
        let none = client.get(&url).send().await.unwrap();
        assert_eq!(none.status(), StatusCode::UNAUTHORIZED, "{path} without a token");
        assert_eq!(none.headers()["www-authenticate"], "Bearer");
        let wrong = client.get(&url).bearer_auth("s3cret-Token-43").send().await.unwrap();
        assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED, "{path} with a wrong token");
        let body = wrong.text().await.unwrap();
        assert!(!body.contains("s3cret"), "{body}");
        let right = client.get(&url).bearer_auth("s3cret-Token-42").send().await.unwrap();
        assert_eq!(right.status(), StatusCode::OK, "{path} with the token");
    }
}

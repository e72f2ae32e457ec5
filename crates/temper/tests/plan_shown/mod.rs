//! What the reports (JSON, Markdown, HTML) and the web view show of a plan run: each step, its
//! outcome, and why the loop redid one.
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use temper_journal::Verdict;
use temper_journal::{FixSource, Journal, RunId};
use temper_report::Format;
use temper_report::{PlanTry, StepOutcome};

use crate::sim::{Sim, content};

/// Markup that must reach every page as text: the plan's folder as the run was given it.
pub const HOSTILE_DIR: &str = "/srv/plans/<img src=x onerror=alert(1)>&\"plan\"";

/// The options `temper run --plan` stores for a plan from run `from`.
pub fn options(from: RunId, fixes: &[temper_journal::plan::PlannedFix]) -> String {
    json!({"plan": {"dir": HOSTILE_DIR, "from_run": from, "fixes": fixes}}).to_string()
}

/// Run `run` applied run `from`'s plan: steps 1 and 3 kept, step 2 failed (`apply_failed`) and
/// the loop fixed its rule with the stock fix (`rules`: the three steps' short ids).
pub async fn plan_shown(sim: &Sim, run: RunId, from: RunId, rules: [&str; 3]) {
    let data = temper_report::load(sim.store.as_ref(), run).await.unwrap();
    let plan = data.plan.as_ref().expect("a plan run has a plan");
    let kinds: Vec<&str> = plan.steps.iter().map(|s| s.outcome.kind()).collect();
    assert_eq!(kinds, ["kept", "redone", "kept"]);
    match &plan.steps[1].outcome {
        StepOutcome::Redone {
            plan: PlanTry { verdict: Some(Verdict::ApplyFailed), rolled_back: false, .. },
            fixed_by: FixSource::Stock,
            attempt,
        } if attempt.get() == 2 => {}
        other => panic!("step 2 is redone by the stock fix after the plan's apply_failed: {other:?}"),
    }
    let says = plan.steps[1].says.clone();
    assert!(says.starts_with("redone by the loop: the plan's fix (attempt 1) was apply_failed"), "{says}");
    assert!(says.ends_with("fixed by the stock fix (attempt 2)"), "{says}");

    // JSON: to its schema, the outcomes typed.
    let doc: Value = serde_json::from_str(&temper_report::render(&data, Some(content()), Format::Json).unwrap()).unwrap();
    assert_eq!(schema_errors(&doc), Vec::<String>::new());
    assert_eq!(doc["schema"], "temper-report/10");
    let p = &doc["plan"];
    assert_eq!((&p["from_run"], &p["dir"]), (&json!(from), &json!(HOSTILE_DIR)));
    assert_eq!(p["counts"], json!({"steps": 3, "kept": 2, "redone": 1, "escalated": 0, "open": 0, "not_applied": 0}));
    // Step 1 went first in a batch that was set aside (attempt 1, interrupted), then was kept.
    assert_eq!(p["steps"][0]["outcome"], json!({"kind": "kept", "attempt": 2}));
    assert_eq!(p["steps"][0]["interrupted"], json!(1));
    let redone = &p["steps"][1]["outcome"];
    assert_eq!((&redone["kind"], &redone["fixed_by"], &redone["attempt"]), (&json!("redone"), &json!("stock"), &json!(2)));
    assert_eq!((&redone["plan"]["verdict"], &redone["plan"]["attempt"]), (&json!("apply_failed"), &json!(1)));
    let ids: Vec<&str> = p["steps"].as_array().unwrap().iter().map(|s| s["short_id"].as_str().unwrap()).collect();
    assert_eq!(ids, rules);

    // Markdown.
    let md = temper_report::render(&data, Some(content()), Format::Md).unwrap();
    assert!(md.contains(&format!("## Plan (3 steps, exported from run {from})")), "{md}");
    assert!(md.contains("2 applied from the plan and kept, 1 redone by the loop, 0 escalated, 0 not fixed, 0 not applied."), "{md}");
    let md_says = says.replace('_', "\\_");
    assert!(md.contains(&format!("| 2 | {} | redone | {md_says} |", rules[1].replace('_', "\\_"))), "{md}");
    assert!(!md.contains("<img"), "the folder escaped: {md}");

    // HTML: the rows in the plan's order, the folder as text.
    let html = temper_report::render(&data, Some(content()), Format::Html).unwrap();
    assert_eq!(outcomes(&html), ["1 kept", "2 redone", "3 kept"]);
    assert!(html.contains(&html_text(&says)), "{says}");
    assert_hostile_escaped(&html, "report.html");

    // The web view: the run page and each rule's page.
    let web = PlanWeb::serve(sim.store.clone()).await;
    let page = web.get(&format!("/runs/{run}")).await;
    assert_eq!(outcomes(&page), ["1 kept", "2 redone", "3 kept"]);
    assert!(page.contains("2 applied from the plan and kept, 1 redone by the loop"), "{page}");
    assert_hostile_escaped(&page, "run page");
    for (i, rule) in rules.iter().enumerate() {
        let page = web.get(&format!("/runs/{run}/rules/{}", crate::sim::full(rule))).await;
        let step = &plan.steps[i];
        let again = match step.interrupted {
            0 => String::new(),
            n => format!(" (applied again after {n} earlier try set aside with its batch or cut off by a crash)"),
        };
        let want = format!(
            "<dd id=\"plan\" data-outcome=\"{}\">step {} of the proven plan: {}{again}</dd>",
            step.outcome.kind(),
            i + 1,
            html_text(&step.says)
        );
        assert!(page.contains(&want), "{rule}'s page says: {want}\n{page}");
    }
}

/// `N kind` for each plan row of a page, in the page's order.
fn outcomes(html: &str) -> Vec<String> {
    html.split("<tr class=\"plan-step\" data-step=\"")
        .skip(1)
        .map(|row| {
            let n = &row[..row.find('"').unwrap()];
            let kind = row.split("data-outcome=\"").nth(1).and_then(|r| r.split('"').next()).unwrap();
            format!("{n} {kind}")
        })
        .collect()
}

/// `s` as minijinja's auto-escaping writes it.
fn html_text(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#x27;").replace('/', "&#x2f;")
}

fn assert_hostile_escaped(html: &str, what: &str) {
    assert!(!html.contains("<img"), "{what}: the plan's folder became markup");
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;&amp;"), "{what}: the plan's folder shown as text");
}

fn schema_errors(doc: &Value) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas/report.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let v = jsonschema::options().build(&schema).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    v.iter_errors(doc).map(|e| format!("{}: {e}", e.instance_path())).collect()
}

/// The web view over the sim's store on a loopback port.
struct PlanWeb {
    base: String,
    task: tokio::task::JoinHandle<()>,
}

impl PlanWeb {
    async fn serve(store: Arc<temper_store::Store>) -> Self {
        let config = temper_web::WebConfig::new("127.0.0.1:0".parse().unwrap(), None, PathBuf::from("/nonexistent"));
        let journal: Arc<dyn Journal> = store;
        let server = temper_web::Server::bind(journal, config).await.unwrap();
        let base = format!("http://{}", server.local_addr().unwrap());
        let task = tokio::spawn(async move { server.run().await.unwrap() });
        Self { base, task }
    }

    async fn get(&self, path: &str) -> String {
        let r = reqwest::get(format!("{}{path}", self.base)).await.unwrap();
        assert!(r.status().is_success(), "{path}: {}", r.status());
        r.text().await.unwrap()
    }
}

impl Drop for PlanWeb {
    fn drop(&mut self) {
        self.task.abort();
    }
}

//! The guest is untrusted input: what it returns is checked at the edge, before it reaches a
//! report, a plan or a prompt. In-process, with a guest that forges its results document.
mod sim;

use sim::*;
use temper_core::journal::EventKind;
use temper_scap::Outcome;

const PIPE: &str = "xccdf_org.ssgproject.content_rule_x{{ lookup('pipe','touch /tmp/owned') }}";
/// As the results document carries it: `<script>` escaped for XML, read back as `<script>`.
const SCRIPT_XML: &str = "xccdf_org.ssgproject.content_rule_&lt;script&gt;alert(1)&lt;/script&gt;";

#[tokio::test]
async fn rule_ids_the_content_lacks_are_dropped_at_the_scanner_and_reach_no_output() {
    let mut sim = Sim::new("forged").await;
    sim.settings.rules = vec!["sshd_set_keepalive".into()];
    sim.guest.forge_result(PIPE, Outcome::Fail);
    sim.guest.forge_result(SCRIPT_XML, Outcome::Fail);
    let run = sim.new_run("stock").await;
    sim.stock(run).await.unwrap();

    let rules = sim.rules(run).await;
    assert!(!rules.is_empty());
    for r in &rules {
        assert!(sim::content().rule(&r.rule_id).is_some(), "only the content's rules: {}", r.rule_id);
    }
    let dropped = sim.events(run, EventKind::RulesUnknown).await;
    assert_eq!(dropped.len(), 2, "the first scan and the final scan: {dropped:?}");
    for e in &dropped {
        let ids: Vec<&str> = e["ids"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert_eq!(ids.len(), 2, "{ids:?}");
        assert!(ids.iter().all(|id| id.chars().all(|c| c.is_ascii_alphanumeric() || "_.-:?".contains(c))), "plain: {ids:?}");
    }
    let data = temper_report::load(sim.store.as_ref(), run).await.unwrap();
    for format in temper_report::Format::ALL {
        let out = temper_report::render(&data, Some(sim::content()), format).unwrap();
        for bad in ["lookup(", "{{", "<script>alert", "&lt;script&gt;alert", "touch /tmp/owned"] {
            assert!(!out.contains(bad), "{format:?} carries {bad:?}");
        }
    }
}

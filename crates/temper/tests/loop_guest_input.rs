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

/// A fix whose output holds a password hash, an old DES `passwd` line, a GRUB hash and a
/// private key: the journal keeps its output with each withheld, so no report carries them.
#[tokio::test]
async fn secrets_in_a_fixs_output_are_withheld_by_kind() {
    const HASH: &str = "$6$saltsalt$Zr2hN1vXfP0tQ8kLmA3sYw.uB5cD7eF9gH1iJ3kL5mN7oP9qR1sT3uV5wX7yZ9";
    const DES: &str = "Xy3fT8aB9cD0e";
    const GRUB: &str = "grub.pbkdf2.sha512.10000.0A1B2C3D4E5F.6A7B8C9D0E1F";
    const KEY_BODY: &str = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ";
    let mut sim = Sim::new("secrets").await;
    let rule = "sshd_set_keepalive";
    sim.settings.rules = vec![rule.into()];
    let printed = format!(
        "root:{HASH}:19000:0:99999:7:::\nold:{DES}:1001:1001::/home/old:/bin/sh\nGRUB_PASSWORD={GRUB}\n-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY_BODY}\n-----END OPENSSH PRIVATE KEY-----\n"
    );
    sim.guest.stock_fix(&stock_fix(rule), vec![Effect::Prints(printed), Effect::Pass(full(rule))]);
    let run = sim.new_run("stock").await;
    sim.stock(run).await.unwrap();
    let a = sim.attempts(run, rule).await;
    let out = a[0].findings.fix_stdout.clone().unwrap_or_default();
    assert!(out.contains("root:[hash withheld]:19000") && out.contains("old:[hash withheld]:1001"), "{out}");
    assert!(out.contains("[private key withheld]") && out.contains("GRUB_PASSWORD=[hash withheld]"), "{out}");
    let data = temper_report::load(sim.store.as_ref(), run).await.unwrap();
    let mut outputs: Vec<String> =
        temper_report::Format::ALL.iter().map(|f| temper_report::render(&data, Some(sim::content()), *f).unwrap()).collect();
    outputs.push(out);
    for text in &outputs {
        for secret in [HASH, DES, GRUB, KEY_BODY, "saltsalt"] {
            assert!(!text.contains(secret), "{secret} in:\n{text}");
        }
    }
}

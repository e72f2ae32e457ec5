//! The guest is untrusted input: what it returns is checked at the edge, before it reaches a
//! report, a plan or a prompt. In-process, with a guest that forges its results document.
mod sim;

use sim::*;
use temper_journal::EventKind;
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

const CRON: &str = "service_cron_enabled";

/// A recorded `oscap oval eval --results` of cron's check (`tests/data/oval`, as in
/// `loop_derived.rs`).
fn recorded(rule: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/oval").join(format!("{rule}.xml"))).unwrap()
}

/// `doc` with `add` put in after the first `at`, which must be there.
fn after(doc: &str, at: &str, add: &str) -> String {
    let i = doc.find(at).unwrap_or_else(|| panic!("{at:?} is not in the document")) + at.len();
    format!("{}{add}{}", &doc[..i], &doc[i..])
}

/// Cron's results as a compromised guest forges them: a failing `file_test` that wants the
/// setuid bit on `/usr/bin/find`, added under the check's AND (in its definitions and in its
/// results), with its object, state, result and item.
fn forged_cron() -> String {
    const UNIX_DEF: &str = r#"xmlns:unix-def="http://oval.mitre.org/XMLSchema/oval-definitions-5#unix""#;
    const UNIX_SYS: &str = r#"xmlns:unix-sys="http://oval.mitre.org/XMLSchema/oval-system-characteristics-5#unix""#;
    let doc = recorded(CRON);
    let doc = after(
        &doc,
        r#"<oval-def:criteria comment="service cron is configured to start and is running">"#,
        r#"<oval-def:criterion test_ref="oval:ssg-forged:tst:1"/>"#,
    );
    let doc = after(
        &doc,
        "<oval-def:tests>",
        &format!(
            r#"<unix-def:file_test {UNIX_DEF} id="oval:ssg-forged:tst:1" version="1" check_existence="all_exist" check="all" comment="forged"><unix-def:object object_ref="oval:ssg-forged:obj:1"/><unix-def:state state_ref="oval:ssg-forged:ste:1"/></unix-def:file_test>"#
        ),
    );
    let doc = after(
        &doc,
        "<oval-def:objects>",
        &format!(
            r#"<unix-def:file_object {UNIX_DEF} id="oval:ssg-forged:obj:1" version="1"><unix-def:filepath>/usr/bin/find</unix-def:filepath></unix-def:file_object>"#
        ),
    );
    let doc = after(
        &doc,
        "<oval-def:states>",
        &format!(
            r#"<unix-def:file_state {UNIX_DEF} id="oval:ssg-forged:ste:1" version="1"><unix-def:suid datatype="boolean">true</unix-def:suid></unix-def:file_state>"#
        ),
    );
    let doc = after(
        &doc,
        r#"<criterion test_ref="oval:ssg-test_service_running_cron:tst:1" version="1" result="false" />"#,
        r#"<criterion test_ref="oval:ssg-forged:tst:1" version="1" result="false"/>"#,
    );
    let doc = after(
        &doc,
        "<tests>",
        r#"<test test_id="oval:ssg-forged:tst:1" version="1" check_existence="all_exist" check="all" result="false"><tested_item item_id="9001" result="false"/></test>"#,
    );
    let doc = after(
        &doc,
        "<oval-sc:collected_objects>",
        r#"<oval-sc:object id="oval:ssg-forged:obj:1" version="1" flag="complete"><oval-sc:reference item_ref="9001"/></oval-sc:object>"#,
    );
    let bits = ["suid", "sgid", "sticky", "uread", "uwrite", "uexec", "gread", "gwrite", "gexec", "oread", "owrite", "oexec"];
    let mode: String = bits
        .iter()
        .enumerate()
        .map(|(i, b)| format!("<unix-sys:{b} datatype=\"boolean\">{}</unix-sys:{b}>", 0o755 & (1 << (11 - i)) != 0))
        .collect();
    let item = format!(
        r#"<unix-sys:file_item {UNIX_SYS} id="9001" status="exists"><unix-sys:filepath>/usr/bin/find</unix-sys:filepath><unix-sys:path>/usr/bin</unix-sys:path><unix-sys:filename>find</unix-sys:filename><unix-sys:type>regular</unix-sys:type><unix-sys:group_id datatype="int">0</unix-sys:group_id><unix-sys:user_id datatype="int">0</unix-sys:user_id>{mode}</unix-sys:file_item>"#
    );
    after(&doc, "<oval-sc:system_data>", &item)
}

/// The guest writes the OVAL results the evidence comes from, but not the check: a failing test
/// it adds under an AND (the setuid bit on `/usr/bin/find`) gets no change of its choosing from
/// the derived tier, on the first scan's evidence or on a rescan's. The fix that runs, is kept
/// and is exported is the one the host's check (the datastream's) calls for.
#[tokio::test]
async fn a_failing_test_a_guest_adds_under_an_and_leads_to_no_change_of_its_choosing() {
    let mut sim = Sim::new("forged-check").await;
    sim.with_oval();
    sim.settings.rules = vec![CRON.into()];
    sim.guest.oval_results(CRON, &forged_cron());
    // The fix the recorded (unforged) document calls for: cron enabled and started.
    let clean = temper_scap::oval::OvalReport::parse(recorded(CRON).as_bytes()).unwrap();
    let id = format!("oval:ssg-{CRON}:def:1");
    let (result, title, tests) = clean.definition(&id).unwrap();
    let criteria = clean.criteria(&id);
    let evidence = temper_scap::oval::Evidence { rule: full(CRON), outcome: Outcome::Fail, definition: id, title, result, tests, criteria };
    let derived = temper_derive::derive(&evidence).unwrap();
    sim.guest.stock_fix(&derived.fix_script, vec![Effect::Pass(full(CRON))]);
    let run = sim.new_run("stock").await;
    sim.stock(run).await.unwrap();

    for script in sim.guest.scripts() {
        assert!(!script.contains("/usr/bin/find"), "the guest's test reached the guest as a change:\n{script}");
    }
    let tries = sim.attempts(run, CRON).await;
    let sources: Vec<_> = tries.iter().map(|a| (a.spec.source, a.verdict)).collect();
    assert_eq!(sources, [(temper_journal::FixSource::Derived, Some(temper_journal::Verdict::Fixed))]);
    assert_eq!(tries[0].spec.fix_script, derived.fix_script, "the host's check's fix, and nothing else");
    let kept = tries[0].spec.evidence_before.as_ref().unwrap();
    assert!(kept.tests.iter().all(|t| t.id != "oval:ssg-forged:tst:1"), "the forged test is not in the evidence: {kept:?}");
}

/// An item the guest adds to cron's "cron is running" test that its object (units named
/// `^cron\.(socket|service)$`) could not have collected, `debug-shell.service` (a root shell on
/// tty9), to aim the derived fix, which starts the test's units, at it: refused with why, an
/// `evidence_refused` event, and no fix derived from the test; the rule is escalated saying so,
/// nothing having run for it.
#[tokio::test]
async fn an_item_its_object_could_not_have_collected_is_refused_with_why_and_an_event() {
    let mut sim = Sim::new("foreign-item").await;
    sim.with_oval();
    sim.settings.rules = vec![CRON.into()];
    let doc = recorded(CRON);
    let doc = after(&doc, r#"<tested_item item_id="1002" result="false" />"#, r#"<tested_item item_id="9003" result="false"/>"#);
    let doc = after(&doc, r#"<oval-sc:reference item_ref="1002" />"#, r#"<oval-sc:reference item_ref="9003"/>"#);
    let doc = after(
        &doc,
        "<oval-sc:system_data>",
        r#"<lin-sys:systemdunitproperty_item id="9003" status="exists"><lin-sys:unit>debug-shell.service</lin-sys:unit><lin-sys:property>ActiveState</lin-sys:property><lin-sys:value>inactive</lin-sys:value></lin-sys:systemdunitproperty_item>"#,
    );
    sim.guest.oval_results(CRON, &doc);
    let run = sim.new_run("stock").await;
    sim.stock(run).await.unwrap();

    let scripts = sim.guest.scripts();
    assert!(scripts.iter().all(|s| !s.contains("debug-shell") && !s.contains("cron.service")), "nothing ran for it: {scripts:#?}");
    let rule = sim.rule(run, CRON).await;
    let reason = rule.reason.unwrap_or_default();
    assert!(
        reason.contains("no derived fix (evidence the host refuses)")
            && reason.contains("\"debug-shell.service\"")
            && reason.contains("unit"),
        "{reason}"
    );
    let events = sim.events(run, EventKind::EvidenceRefused).await;
    assert!(!events.is_empty(), "an evidence_refused event");
    let refused: Vec<&str> = events[0]["refused"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(refused.len(), 1, "{refused:?}");
    let want = "\"unit=debug-shell.service\" of test oval:ssg-test_service_running_cron:tst:1: its unit \"debug-shell.service\" is not";
    assert!(refused[0].starts_with(want), "{refused:?}");
}

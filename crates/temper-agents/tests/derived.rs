//! The derived tier in the stock and tiered agents: offered where the content has no fix or its
//! fix failed, each exact candidate once, in order; a refusal is the escalation's reason, with
//! its class; a failed one is shown to the LLM.
mod common;

use std::path::Path;
use temper_journal::FixSource;
use temper_journal::turn::Decision;

use common::*;
use temper_agents::derived::DERIVED_PLAN;
use temper_agents::{StockAgent, TieredAgent};
use temper_core::agent::{AgentError, Architect, Tried, Worker};
use temper_journal::AttemptNo;
use temper_journal::Verdict;
use temper_mockllm::{MockLlm, Scripted};
use temper_scap::Outcome;
use temper_scap::oval::{Evidence, OvalReport};

/// The evidence of one of temper-derive's recorded results (SSG 0.1.76, Debian 12).
fn evidence(rule: &str) -> Evidence {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../temper-derive/tests/data").join(format!("{rule}.xml"));
    let report = OvalReport::read(&path).unwrap();
    let id = format!("oval:ssg-{rule}:def:1");
    let (result, title, tests) = report.definition(&id).unwrap();
    let rule = format!("xccdf_org.ssgproject.content_rule_{rule}");
    Evidence { rule, outcome: Outcome::Fail, definition: id.clone(), title, result, tests, criteria: report.criteria(&id) }
}

fn tried(source: FixSource, verdict: Verdict, script: &str) -> Tried {
    Tried { source, verdict: Some(verdict), reason: "the rule still fails".into(), fix_script: script.into() }
}

#[tokio::test]
async fn stock_offers_the_derived_fix_after_its_own_once() {
    let mut ctx = fix_context();
    ctx.evidence = Some(evidence("sshd_disable_root_login"));
    let (_, source) = StockAgent.propose(&ctx).await.unwrap().value;
    assert_eq!(source, FixSource::Stock, "the content's fix first");
    ctx.tried = vec![tried(FixSource::Stock, Verdict::StillFailing, "sed ...")];
    let (fix, source) = StockAgent.propose(&ctx).await.unwrap().value;
    assert_eq!(source, FixSource::Derived);
    assert!(fix.fix_script.contains("PermitRootLogin no") && fix.revert_script.contains("cp -p --"), "{fix:?}");
    assert!(fix.description.starts_with("derived fix for sshd_disable_root_login"), "{}", fix.description);
    ctx.tried.push(tried(FixSource::Derived, Verdict::StillFailing, &fix.fix_script));
    let Err(AgentError::NoFix(why)) = StockAgent.propose(&ctx).await else { panic!("nothing left") };
    assert!(why.contains("the stock fix failed (still_failing)") && why.contains("every derived fix was tried"), "{why}");
}

/// On a plan's target: a failed plan step that was the stock fix, or the very derived fix this
/// target's evidence gives, is not offered again under its own source.
#[tokio::test]
async fn a_failed_plan_step_counts_as_the_fix_it_was() {
    let mut ctx = fix_context();
    ctx.evidence = Some(evidence("sshd_disable_root_login"));
    let stock = ctx.stock_fix.clone().unwrap();
    ctx.tried = vec![tried(FixSource::Plan, Verdict::Regression, &stock)];
    let (derived, source) = StockAgent.propose(&ctx).await.unwrap().value;
    assert_eq!(source, FixSource::Derived, "the stock fix failed as the plan's step");
    ctx.tried = vec![tried(FixSource::Plan, Verdict::StillFailing, "echo another target's fix")];
    assert_eq!(StockAgent.propose(&ctx).await.unwrap().value.1, FixSource::Stock, "a plan step with another script is no stock try");
    ctx.tried = vec![tried(FixSource::Plan, Verdict::Regression, &stock), tried(FixSource::Plan, Verdict::Regression, &derived.fix_script)];
    let Err(AgentError::NoFix(why)) = StockAgent.propose(&ctx).await else { panic!("both fixes failed as plan steps") };
    assert!(why.contains("the stock fix failed as a plan step (regression)") && why.contains("every derived fix was tried"), "{why}");
}

#[tokio::test]
async fn stock_says_why_no_fix_is_derived() {
    let mut ctx = fix_context();
    ctx.stock_fix = None;
    ctx.evidence = Some(evidence("auditd_overflow_action"));
    let Err(AgentError::NoFix(why)) = StockAgent.propose(&ctx).await else { panic!("refused") };
    assert!(why.starts_with("no stock fix in the content for "), "{why}");
    assert!(
        why.contains(
            "no derived fix (no exact value): test oval:ssg-test_auditd_overflow_action:tst:1 expects subexpression to match the regex"
        ),
        "{why}"
    );
}

#[tokio::test]
async fn stock_reengage_goes_on_to_a_derived_fix_only_when_there_is_one() {
    let mut ctx = reengage_context();
    ctx.attempts = 1;
    ctx.tried = vec![FixSource::Stock];
    ctx.evidence = Some(evidence("package_telnet_removed"));
    assert_eq!(StockAgent.reengage(&ctx).await.unwrap().value, Decision::Continue { plan: DERIVED_PLAN.into() });
    ctx.evidence = Some(evidence("partition_for_tmp"));
    let Decision::Escalate { reason } = StockAgent.reengage(&ctx).await.unwrap().value else { panic!("escalates") };
    assert!(
        reason
            .contains("no derived fix (a kind of check the tier does not fix): test oval:ssg-testtmp_partition:tst:1 is a partition_test"),
        "{reason}"
    );
    ctx.attempts = 2;
    ctx.tried = vec![FixSource::Stock, FixSource::Derived];
    ctx.evidence = Some(evidence("package_telnet_removed"));
    let d = StockAgent.reengage(&ctx).await.unwrap().value;
    assert_eq!(d, Decision::Escalate { reason: "the derived fix failed; no LLM configured".into() });
}

/// Several exact fixes (a world-writable folder without its sticky bit): the sticky bit first;
/// once the checks rejected it (and it was reverted), the world's write removed; then none. The
/// Architect goes on while one is left.
#[tokio::test]
async fn the_derived_candidates_are_offered_in_order_each_once() {
    let mut ctx = fix_context();
    ctx.stock_fix = None;
    ctx.evidence = Some(evidence("dir_perms_world_writable_sticky_bits"));
    let (first, source) = StockAgent.propose(&ctx).await.unwrap().value;
    assert_eq!(source, FixSource::Derived);
    assert!(first.fix_script.contains("chmod 1777 -- '/srv/share'"), "{}", first.fix_script);
    ctx.tried = vec![tried(FixSource::Derived, Verdict::HealthBroken, &first.fix_script)];
    let (second, _) = StockAgent.propose(&ctx).await.unwrap().value;
    assert!(second.fix_script.contains("chmod 0775 -- '/srv/share'"), "{}", second.fix_script);
    ctx.tried.push(tried(FixSource::Derived, Verdict::HealthBroken, &second.fix_script));
    let Err(AgentError::NoFix(why)) = StockAgent.propose(&ctx).await else { panic!("both tried") };
    assert!(why.contains("every derived fix was tried"), "{why}");

    let mut re = reengage_context();
    re.attempts = 1;
    re.evidence = ctx.evidence.clone();
    re.tried = vec![FixSource::Derived];
    assert_eq!(StockAgent.reengage(&re).await.unwrap().value, Decision::Continue { plan: DERIVED_PLAN.into() }, "one is left");
    re.tried = vec![FixSource::Derived, FixSource::Derived];
    let d = StockAgent.reengage(&re).await.unwrap().value;
    assert_eq!(d, Decision::Escalate { reason: "each of the 2 derived fixes failed; no LLM configured".into() });
}

#[tokio::test]
async fn tiered_tries_the_derived_fix_then_shows_the_llm_why_it_failed() {
    let mock = MockLlm::start(vec![Scripted::tool_call("apply_fix", fix_args())]).await.unwrap();
    let tiered = TieredAgent::new(agent(&mock.url()));
    let mut ctx = fix_context();
    ctx.stock_fix = None;
    ctx.attempt = AttemptNo::FIRST;
    ctx.evidence = Some(evidence("service_auditd_enabled"));
    let (fix, source) = tiered.propose(&ctx).await.unwrap().value;
    assert_eq!(source, FixSource::Derived);
    assert!(mock.requests().is_empty(), "no LLM call for it");

    ctx.attempt = AttemptNo::new(2).unwrap();
    ctx.tried = vec![tried(FixSource::Derived, Verdict::HealthBroken, &fix.fix_script)];
    let (_, source) = tiered.propose(&ctx).await.unwrap().value;
    assert_eq!(source, FixSource::Llm);
    let req = &mock.requests()[0];
    let user = messages(req)[1]["content"].as_str().unwrap();
    assert!(user.contains("## The fix temper derived from the check failed"), "{user}");
    assert!(user.contains("Why: health_broken: the rule still fails"), "{user}");
    assert!(user.contains("systemctl enable 'auditd.service'"), "the derived script is shown: {user}");
}

/// The stock fix for package_telnet_removed was stopped as stalled (dpkg's lock held elsewhere):
/// the derived fix would only remove telnet again, so it is not offered, and the reason says
/// how the stock fix ended. A stock fix that did something else leaves the derived one offered.
#[tokio::test]
async fn a_derived_fix_that_repeats_the_failed_stock_fix_is_not_offered() {
    let mut ctx = fix_context();
    ctx.rule_id = "xccdf_org.ssgproject.content_rule_package_telnet_removed".into();
    ctx.evidence = Some(evidence("package_telnet_removed"));
    let stock = "if dpkg-query --show telnet; then\nDEBIAN_FRONTEND=noninteractive apt-get remove -y \"telnet\"\nfi\n";
    ctx.stock_fix = Some(stock.into());
    let stalled = "the fix was stopped as stalled: it waited 300s on the lock /var/lib/dpkg/lock-frontend held by process 812 (unattended-upgr); temper waits fix_stall_secs for a lock";
    ctx.tried = vec![Tried { source: FixSource::Stock, verdict: Some(Verdict::Stalled), reason: stalled.into(), fix_script: stock.into() }];
    let Err(AgentError::NoFix(why)) = StockAgent.propose(&ctx).await else { panic!("the same removal is not tried again") };
    assert!(why.contains("the stock fix was stopped as stalled") && why.contains("it would remove telnet, as an earlier fix did"), "{why}");
    assert!(why.contains("fix_stall_secs"), "{why}");
    ctx.tried = vec![tried(FixSource::Stock, Verdict::StillFailing, "echo a fix that removes nothing")];
    assert_eq!(StockAgent.propose(&ctx).await.unwrap().value.1, FixSource::Derived, "another stock fix: the derived one is its own try");
}

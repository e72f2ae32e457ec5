//! The Ralph loop end to end on the real VM, driven by the scripted LLM server. What needs no
//! guest (a refused script, an Architect pick outside the offer) is in `loop_llm`, in-process.
mod support;

use serde_json::Value;
use support::*;

fn summary(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("summary JSON: {e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_try_fix_is_kept_and_verified() {
    require_vm().await;
    let mut w = World::new();
    let llm = mock(vec![select(SUID, "persist fs.suid_dumpable=0"), apply_fix(SUID_FIX, SUID_REVERT, "sysctl drop-in")]).await;
    let otlp = otlp_sink().await;
    w.env.push(("TEMPER_OTLP_ENDPOINT".into(), otlp.url.clone()));
    let out = llm_run(&w, &llm, SUID, &[]).await;
    // The run's spans reached the OTLP endpoint.
    for span in ["preflight", "attempt", "evaluate", "oscap", "keep", "finish"] {
        assert!(!otlp.spans(span).is_empty(), "no `{span}` span exported: {:?}", otlp.names());
    }
    assert!(otlp.spans("rule").iter().any(|s| s.str("rule") == Some(SUID)), "a `rule` span names the rule");
    for s in otlp.spans("oscap") {
        assert!(matches!(s.str("engine"), Some("oval" | "split" | "xccdf")), "oscap span: {s:?}");
    }
    // One `chat scripted` span per LLM call, with the GenAI semantic conventions.
    let chats = otlp.spans("chat scripted");
    assert_eq!(chats.len(), 2, "the Architect's call and the Worker's: {:?}", otlp.names());
    for c in &chats {
        assert_eq!(c.str("gen_ai.operation.name"), Some("chat"), "{c:?}");
        assert_eq!(c.str("gen_ai.request.model"), Some("scripted"), "{c:?}");
    }
    let mut exported: Vec<_> = chats.iter().map(|c| (c.int("gen_ai.usage.input_tokens"), c.int("gen_ai.usage.output_tokens"))).collect();
    let s = summary(&out);
    assert_eq!(s["statuses"]["fixed"], 1, "{s}");
    let store = w.store().await;
    let run = store.latest_run().await.unwrap().unwrap();
    let attempts = store.attempts(run.id).await.unwrap();
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].verdict.map(|v| v.as_str()), Some("fixed"));
    assert_eq!(attempts[0].findings.rule_result.map(|v| v.as_str()), Some("pass"));
    assert_eq!(attempts[0].findings.health_ok, Some(true));
    let prefix = temper_core::ralph::checkpoint_prefix(run.id, &run.started_at);
    assert!(run.checkpoint.starts_with(&prefix), "a checkpoint was taken, named for this run: {}", run.checkpoint);
    assert!(hypervisor_has(&run.checkpoint).await);
    let turns = store.turns(run.id).await.unwrap();
    assert_eq!(turns.iter().map(|t| t.role.as_str()).collect::<Vec<_>>(), ["architect", "worker"]);
    assert!(turns.iter().all(|t| t.completion_tokens.unwrap_or(0) > 0));
    // The spans carry the usage the journal recorded, call for call.
    let mut journaled: Vec<_> = turns.iter().map(|t| (t.prompt_tokens, t.completion_tokens)).collect();
    exported.sort();
    journaled.sort();
    assert_eq!(exported, journaled, "token counts on the chat spans");
    assert_eq!(llm.remaining(), 0, "every scripted reply was used");
    // Independent: oscap in the guest says pass, and the mission app is healthy.
    assert_eq!(rescan(&w, SUID).await, "pass");
    assert!(healthy().await);
    w.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fix_that_breaks_health_is_reverted_and_the_vm_is_healthy() {
    require_vm().await;
    let w = World::new();
    // The revert script does not restart nginx, so its verification fails and the snapshot is used.
    let llm = mock(vec![
        select(SYSTEMMAP, "tighten System.map"),
        apply_fix("chmod 0600 /boot/System.map* || true\nsystemctl stop nginx\n", "true\n", "breaks nginx"),
        reflect("stopping nginx breaks the mission app", Some(r"systemctl\s+stop\s+nginx"), "never stop nginx"),
    ])
    .await;
    let s = summary(&llm_run(&w, &llm, SYSTEMMAP, &["--max-attempts", "1"]).await);
    assert_eq!(s["statuses"]["escalated"], 1, "{s}");
    let store = w.store().await;
    let run = store.latest_run().await.unwrap().unwrap().id;
    let a = &store.attempts(run).await.unwrap()[0];
    assert_eq!(a.verdict.map(|v| v.as_str()), Some("health_broken"));
    assert_eq!(a.findings.health_ok, Some(false));
    assert!(a.findings.health_output.as_deref().unwrap_or("").contains("UNHEALTHY"));
    assert_eq!(a.revert_method.map(|v| v.as_str()), Some("script_then_snapshot"));
    let rule = store.rule(run, SYSTEMMAP).await.unwrap().unwrap();
    assert!(rule.reason.unwrap().contains("attempt budget"));
    assert!(healthy().await, "the VM is healthy after the revert");
    // The escalation report a reviewer reads: the attempt, its evidence, the lesson, a next step.
    let md = report(&w, "md", "escalation-run.md").await;
    for needle in [
        "file_permissions_systemmap",
        "health broken",
        "systemctl stop nginx",
        "UNHEALTHY",
        "stopping nginx breaks the mission app",
        "attempt budget",
    ] {
        assert!(md.contains(needle), "report lacks `{needle}`");
    }
    report(&w, "html", "escalation-run.html").await;
    w.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long under TCG, out of CI's hour: `bash tests/vm-long.sh` runs it (the loop's side is in-process in CI)"]
async fn a_rule_is_escalated_when_its_budget_runs_out() {
    require_vm().await;
    let w = World::new();
    let llm = mock(vec![
        select(SUID, "try"),
        apply_fix("true\n", "true\n", "does nothing"),
        reflect("doing nothing fixes nothing", None, "attempt did nothing"),
        apply_fix("echo still nothing\n", "true\n", "does nothing again"),
        reflect("still nothing", None, "attempt did nothing again"),
    ])
    .await;
    let out = llm_run(&w, &llm, SUID, &["--max-attempts", "2"]).await;
    assert_eq!(out.status.code(), Some(2), "some rules remain");
    let s = summary(&out);
    assert_eq!(s["statuses"]["escalated"], 1, "{s}");
    let store = w.store().await;
    let run = store.latest_run().await.unwrap().unwrap().id;
    let r = store.rule(run, SUID).await.unwrap().unwrap();
    assert_eq!(r.status.as_str(), "escalated");
    assert_eq!(r.attempts, 2);
    assert!(r.reason.unwrap().contains("attempt budget spent: 2 of 2"));
    assert_eq!(store.lessons(Recall::all().rule(SUID)).await.unwrap().len(), 2);
    w.cleanup().await;
}

async fn hypervisor_has(name: &str) -> bool {
    use temper_core::ports::Hypervisor;
    hypervisor().snapshot_exists(name).await.unwrap()
}

//! `temper status`: a run's progress, read from the database.
use serde_json::json;
use temper_core::journal::prelude::*;
use temper_core::journal::{RuleStatus, RunStatus, ScanResult, now_ms};

use super::print_json;
use crate::config::Config;

pub async fn run(config: &Config, run: Option<i64>, json_out: bool) -> anyhow::Result<u8> {
    let store = crate::wiring::store(config).await?;
    let row = match run {
        Some(id) => store.run(id).await?,
        None => match store.latest_run().await? {
            Some(r) => r,
            None => anyhow::bail!("no runs in {}", store.describe()),
        },
    };
    let rules = store.rules(row.id).await?;
    let count = |s: RuleStatus| rules.iter().filter(|r| r.status == s).count();
    let attempts = store.attempts(row.id).await?;
    let failing = rules.iter().filter(|r| r.initial_result == ScanResult::Fail).count();
    let done = count(RuleStatus::Fixed) + count(RuleStatus::Escalated) + count(RuleStatus::StillFailing);
    // A run marked running whose process is gone is interrupted, whatever the row says.
    let gone = row.driver_gone(now_ms());
    let status = if gone { RunStatus::Interrupted } else { row.status };
    let next = matches!(status, RunStatus::Interrupted | RunStatus::Paused).then(|| format!("temper resume {}", row.id));
    // Seconds from the run's start to its end, or to now while it goes on.
    let parse = |t: &str| chrono::DateTime::parse_from_rfc3339(t).ok();
    let end = row.ended_at.as_deref().and_then(parse).unwrap_or_else(|| chrono::Utc::now().fixed_offset());
    let elapsed = parse(&row.started_at).map_or(0, |start| (end - start).num_seconds());
    let open = count(RuleStatus::Pending);
    let eta = (done > 0 && open > 0).then(|| elapsed * open as i64 / done as i64);
    let current_attempt = row.current_rule.as_deref().and_then(|r| rules.iter().find(|x| x.rule_id == r)).map(|r| r.attempts);
    let v = json!({
        "run": row.id,
        "status": status,
        "driver": row.driver,
        "driver_gone": gone,
        "next": next,
        "phase": row.phase,
        "rule": row.current_rule,
        "attempt": current_attempt,
        "target": row.target_config.as_ref().map(|t| &t.name),
        "skill": row.skill,
        "profile": row.profile,
        "agent": row.agent,
        "failing_at_start": failing,
        "fixed": count(RuleStatus::Fixed),
        "escalated": count(RuleStatus::Escalated),
        "skipped": count(RuleStatus::Skipped),
        "waived": count(RuleStatus::Waived),
        "deferred": count(RuleStatus::Deferred),
        "still_failing": count(RuleStatus::StillFailing),
        "open": open,
        "attempts": attempts.len(),
        "elapsed_secs": elapsed,
        "eta_secs": eta,
        "checkpoint": row.checkpoint,
        "heartbeat_at": row.heartbeat_at,
        "exit_code": row.exit_code,
        "error": row.error,
    });
    if json_out {
        print_json(&v)?;
    } else {
        println!(
            "run {} {} | phase {} | rule {} | fixed {} escalated {} open {} of {} failing | {} attempts | {}s elapsed{}",
            row.id,
            status,
            row.phase,
            row.current_rule.as_deref().map(temper_scap::short_rule_id).unwrap_or("-"),
            count(RuleStatus::Fixed),
            count(RuleStatus::Escalated),
            open,
            failing,
            attempts.len(),
            elapsed,
            eta.map(|e| format!(", eta {e}s")).unwrap_or_default(),
        );
        if let Some(next) = &next {
            println!("{} run: `{next}` continues it", if gone { "its process is gone; an interrupted" } else { "a stopped" });
        }
    }
    Ok(0)
}

//! `temper status`: a run's progress, read from the database.
use serde_json::json;

use super::print_json;
use crate::config::Config;

pub async fn run(config: &Config, run: Option<i64>, json_out: bool) -> anyhow::Result<u8> {
    let store = temper_store::Store::open(&config.db).await?;
    let row = match run {
        Some(id) => store.run(id).await?,
        None => match store.latest_run().await? {
            Some(r) => r,
            None => anyhow::bail!("no runs in {}", config.db.display()),
        },
    };
    let rules = store.rules(row.id).await?;
    let count = |s: &str| rules.iter().filter(|r| r.status == s).count();
    let attempts = store.attempts(row.id).await?;
    let failing = rules.iter().filter(|r| r.initial_result == "fail").count();
    let done = count("fixed") + count("escalated") + count("still_failing");
    // Seconds from the run's start to its end, or to now while it goes on.
    let parse = |t: &str| chrono::DateTime::parse_from_rfc3339(t).ok();
    let end = row.ended_at.as_deref().and_then(parse).unwrap_or_else(|| chrono::Utc::now().fixed_offset());
    let elapsed = parse(&row.started_at).map_or(0, |start| (end - start).num_seconds());
    let open = count("pending");
    let eta = (done > 0 && open > 0).then(|| elapsed * open as i64 / done as i64);
    let current_attempt = row.current_rule.as_deref().and_then(|r| rules.iter().find(|x| x.rule_id == r)).map(|r| r.attempts);
    let v = json!({
        "run": row.id,
        "status": row.status,
        "phase": row.phase,
        "rule": row.current_rule,
        "attempt": current_attempt,
        "skill": row.skill,
        "profile": row.profile,
        "agent": row.agent,
        "failing_at_start": failing,
        "fixed": count("fixed"),
        "escalated": count("escalated"),
        "skipped": count("skipped"),
        "waived": count("waived"),
        "deferred": count("deferred"),
        "still_failing": count("still_failing"),
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
            row.status,
            row.phase,
            row.current_rule.as_deref().map(temper_scap::short_rule_id).unwrap_or("-"),
            count("fixed"),
            count("escalated"),
            open,
            failing,
            attempts.len(),
            elapsed,
            eta.map(|e| format!(", eta {e}s")).unwrap_or_default(),
        );
    }
    Ok(0)
}

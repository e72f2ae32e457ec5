//! `temper status`: a run's progress, read from the database.
use serde_json::json;
use temper_journal::prelude::*;
use temper_journal::{Outlook, Remembered, RunStatus, Standing, now_ms, open_and_not_applicable, predict_end};

use super::print_json;
use crate::config::Config;
use temper_journal::RunId;

pub async fn run(config: &Config, run: Option<RunId>, json_out: bool) -> anyhow::Result<u8> {
    let store = crate::wiring::store(config).await?;
    let row = match run {
        Some(id) => store.run(id).await?,
        None => match store.latest_run().await? {
            Some(r) => r,
            None => anyhow::bail!("no runs in {}", store.describe()),
        },
    };
    let rules = store.rules(row.id).await?;
    // Where it stands, as the loop's progress line and the web view show it; counts and the ETA
    // speak of the run's scope only.
    let at = Standing::of_run(&row, &rules);
    // A run marked running whose process is gone is interrupted, whatever the row says.
    let gone = row.driver_gone(now_ms());
    let status = if gone { RunStatus::Interrupted } else { row.status };
    let next = matches!(status, RunStatus::Interrupted | RunStatus::Paused).then(|| format!("temper resume {}", row.id));
    // Seconds from the run's start to its end, or to now while it goes on.
    let parse = |t: &str| chrono::DateTime::parse_from_rfc3339(t).ok();
    let end = row.ended_at.as_deref().and_then(parse).unwrap_or_else(|| chrono::Utc::now().fixed_offset());
    let elapsed = parse(&row.started_at).map_or(0, |start| (end - start).num_seconds());
    let eta = match status {
        RunStatus::Running => {
            let (open, not_applicable) = open_and_not_applicable(&rules);
            let memory = Remembered::of(&store.recalled_times(&row.skill).await?);
            predict_end(&Outlook::new(&store.events(row.id, None).await?, &open).remembering(&not_applicable, &memory), end)
        }
        _ => None,
    };
    let mut v = json!({
        "run": row.id,
        "status": status,
        "driver": row.driver,
        "driver_gone": gone,
        "next": next,
        "target": row.target_config.as_ref().map(|t| &t.name),
        "skill": row.skill,
        "profile": row.profile,
        "agent": row.agent,
        "elapsed_secs": elapsed,
        "eta_secs": eta.map(|e| e.secs),
        "eta_low_secs": eta.map(|e| e.low),
        "eta_high_secs": eta.map(|e| e.high),
        "checkpoint": row.checkpoint,
        "heartbeat_at": row.heartbeat_at,
        "exit_code": row.exit_code,
        "error": row.error,
    });
    // The standing's own keys: phase, rule, attempt, attempts and the counts (`failing_at_start`,
    // `became_applicable`, `in_scope`, `open`, `fixed`...).
    if let (Some(v), serde_json::Value::Object(at)) = (v.as_object_mut(), serde_json::to_value(&at)?) {
        v.extend(at);
    }
    if json_out {
        print_json(&v)?;
    } else {
        println!(
            "run {} {} | phase {} | rule {} | {} | {} attempts | {}s elapsed{}",
            row.id,
            status,
            at.phase,
            at.rule.as_deref().map(temper_scap::short_rule_id).unwrap_or("-"),
            at.counts(),
            at.attempts,
            elapsed,
            eta.map(|e| format!(", eta {}", e.human())).unwrap_or_default(),
        );
        if let Some(next) = &next {
            println!("{} run: `{next}` continues it", if gone { "its process is gone; an interrupted" } else { "a stopped" });
        }
    }
    Ok(0)
}

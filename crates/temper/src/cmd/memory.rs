//! `temper memory list|show|forget|approve`: what temper has learned (lessons, bans, tips and
//! the verified fixes it reuses across targets), for review. A lesson, ban or tip holds on the
//! target of the run that learned it until a person approves it for the skill.
use serde_json::{Value, json};

use temper_core::ban::BanScope;
use temper_journal::MemoryKind;
use temper_journal::prelude::*;

use super::print_json;
use crate::cli::MemoryCmd;
use crate::config::Config;

async fn items(store: &temper_store::Store, kind: MemoryKind) -> anyhow::Result<Vec<Value>> {
    Ok(match kind {
        MemoryKind::Lessons => store.lessons(Recall::all()).await?.into_iter().map(|r| json!(r)).collect(),
        MemoryKind::Bans => store.bans(Recall::all()).await?.into_iter().map(|r| json!(r)).collect(),
        MemoryKind::Tips => store.tips(Recall::all()).await?.into_iter().map(|r| json!(r)).collect(),
        MemoryKind::Fixes => store.remembered_fixes().await?.into_iter().map(|r| json!(r)).collect(),
    })
}

fn line(kind: MemoryKind, v: &Value) -> String {
    if let MemoryKind::Fixes = kind {
        let state = if v["retired_at"].is_null() { "in force" } else { "retired" };
        let (tried, kept) = (&v["tried"], &v["kept"]);
        let what = format!(
            "{state}, kept {kept} of {tried} tries elsewhere, from run {}: {}",
            v["run_id"],
            v["description"].as_str().unwrap_or("")
        );
        return format!("{}\t{}\t{}\t{what}", kind.as_str(), v["id"], v["rule_id"].as_str().unwrap_or("-"));
    }
    let text = match kind {
        MemoryKind::Lessons => v["distilled"].as_str().filter(|s| !s.is_empty()).or(v["lesson"].as_str()),
        MemoryKind::Bans => v["pattern"].as_str(),
        MemoryKind::Tips => v["text"].as_str(),
        MemoryKind::Fixes => None,
    };
    format!("{}\t{}\t{}\t{}\t{}", kind.as_str(), v["id"], v["rule_id"].as_str().unwrap_or("-"), text.unwrap_or(""), scope(v))
}

/// Where a lesson, ban or tip holds: approved for the skill, or its run's target alone.
fn scope(v: &Value) -> String {
    match (v["approved_at"].as_str(), v["approved_by"].as_str()) {
        (Some(at), by) => format!("approved for the skill by {} at {at}", by.unwrap_or("?")),
        (None, _) => format!("holds on its run's target only (run {}), awaiting approval", v["run_id"]),
    }
}

/// The login name of whoever runs this (under sudo, the one who called sudo).
fn login() -> String {
    ["SUDO_USER", "USER", "LOGNAME"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        .unwrap_or_else(|| "unknown".into())
}

pub async fn run(config: &Config, cmd: MemoryCmd) -> anyhow::Result<u8> {
    let store = crate::wiring::store(config).await?;
    match cmd {
        MemoryCmd::List { kind, json } => {
            let kinds = kind.map_or(MemoryKind::ALL.to_vec(), |k| vec![k]);
            let mut all = serde_json::Map::new();
            for k in kinds {
                let list = items(&store, k).await?;
                if !json {
                    list.iter().for_each(|v| println!("{}", line(k, v)));
                }
                all.insert(k.as_str().into(), Value::Array(list));
            }
            if json {
                print_json(&all)?;
            }
        }
        MemoryCmd::Show { kind, id, json } => {
            let item = items(&store, kind).await?.into_iter().find(|v| v["id"] == id.get());
            let Some(item) = item else { anyhow::bail!("no active {} with id {id}", kind.as_str()) };
            if json {
                print_json(&item)?;
            } else {
                for (k, v) in item.as_object().into_iter().flatten() {
                    println!("{k}: {}", v.as_str().map_or(v.to_string(), str::to_string));
                }
            }
        }
        MemoryCmd::Forget { kind, id } => {
            store.forget(kind, id).await?;
            println!("forgot {} {id}", kind.as_str());
        }
        MemoryCmd::Approve { kind, id, by } => {
            let item = items(&store, kind).await?.into_iter().find(|v| v["id"] == id.get());
            let Some(item) = item else { anyhow::bail!("no active {} with id {id}", kind.as_str()) };
            // A ban is checked again, against every derived fix (the runs check the content's
            // stock fixes too, each time they load it).
            if let Some(pattern) = item["pattern"].as_str().filter(|_| kind == MemoryKind::Bans)
                && let Err(why) = BanScope::with_stock([]).check(pattern)
            {
                anyhow::bail!("ban {id} (`{pattern}`) is not approved: {why}");
            }
            let by = by.unwrap_or_else(login);
            store.approve(kind, id, &by).await?;
            println!("approved {} {id} for its skill, by {by}: it holds on every target from the next attempt", kind.as_str());
        }
    }
    Ok(0)
}

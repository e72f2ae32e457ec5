//! `temper memory list|show|forget`: what temper has learned (lessons, bans, tips and the
//! verified fixes it reuses across targets), for review.
use serde_json::{Value, json};

use temper_core::journal::MemoryKind;
use temper_core::journal::prelude::*;

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
    format!("{}\t{}\t{}\t{}", kind.as_str(), v["id"], v["rule_id"].as_str().unwrap_or("-"), text.unwrap_or(""))
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
            let item = items(&store, kind).await?.into_iter().find(|v| v["id"] == id);
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
    }
    Ok(0)
}

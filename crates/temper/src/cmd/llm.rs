//! `temper llm probe`: can this endpoint drive temper?
use super::print_json;
use crate::cli::LlmCmd;
use crate::config::Config;
use crate::wiring;

pub async fn run(config: &Config, cmd: LlmCmd) -> anyhow::Result<u8> {
    let LlmCmd::Probe { llm, model, json } = cmd;
    let Some(llm) = wiring::llm_config(config, llm, model) else {
        anyhow::bail!("no LLM endpoint: pass --llm URL or set llm_url in temper.toml");
    };
    let report = temper_agents::probe(&llm).await;
    if json {
        print_json(&report)?;
    } else {
        println!("{}", serde_json::to_string(&report)?);
    }
    Ok(if report.ok { 0 } else { 1 })
}

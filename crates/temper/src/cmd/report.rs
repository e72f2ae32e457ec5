//! `temper report`: the run's report or checklist, rendered by temper-report.
use std::path::PathBuf;

use anyhow::Context;
use temper_report::{Format, load, render, resolve_run};

use crate::cli::ReportFormat;
use crate::config::Config;

pub async fn run(config: &Config, run: &str, format: ReportFormat, output: Option<PathBuf>) -> anyhow::Result<u8> {
    let store = crate::wiring::store(config).await?;
    let id = resolve_run(&store, run).await?;
    let data = load(&store, id).await?;
    // The datastream, read with the run's profile, gives titles, rationale and DISA ids.
    let ds = config.content_dir.join(&data.run.datastream);
    let content = match temper_report::run_content(&data.run, &ds) {
        Ok(b) => Some(b),
        Err(e) => {
            eprintln!("temper: report without content details ({}: {e})", ds.display());
            None
        }
    };
    let format = match format {
        ReportFormat::Md => Format::Md,
        ReportFormat::Html => Format::Html,
        ReportFormat::Json => Format::Json,
        ReportFormat::Ckl => Format::Ckl,
        ReportFormat::Cklb => Format::Cklb,
    };
    let text = render(&data, content.as_ref(), format)?;
    match output {
        Some(path) => {
            std::fs::write(&path, text.as_bytes()).with_context(|| format!("writing {}", path.display()))?;
            eprintln!("temper: wrote {} ({} report of run {id})", path.display(), format.as_str());
        }
        None => print!("{text}"),
    }
    Ok(0)
}

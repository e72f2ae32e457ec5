//! `temper report`: a run's report or checklist, or a fleet's report, rendered by temper-report.
use std::path::PathBuf;

use anyhow::Context;
use temper_report::{Format, load, load_fleet, render, render_fleet, resolve_run};

use crate::config::Config;

/// What to report on: a run (`latest`, a number), or `fleet` and the fleet's name.
pub struct Which {
    pub run: String,
    pub fleet: Option<String>,
}

pub async fn run(config: &Config, which: Which, format: Format, output: Option<PathBuf>) -> anyhow::Result<u8> {
    let store = crate::wiring::store(config).await?;
    if which.run == "fleet" {
        let fleet = load_fleet(&store, which.fleet.as_deref()).await?;
        let what = format!("{} report of fleet {}", format.as_str(), fleet.fleet);
        return write(&render_fleet(&fleet, format)?, output, &what);
    }
    if let Some(extra) = which.fleet {
        anyhow::bail!("`{extra}`: only `temper report fleet` takes a second name");
    }
    let id = resolve_run(&store, &which.run).await?;
    let data = load(&store, id).await?;
    let text = render(&data, content(config, &data.run).as_ref(), format)?;
    write(&text, output, &format!("{} report of run {id}", format.as_str()))
}

/// The datastream, read with the run's profile: titles, rationale and DISA ids for a report.
pub fn content(config: &Config, run: &temper_journal::Run) -> Option<temper_scap::Benchmark> {
    let ds = config.content_dir.join(&run.datastream);
    match temper_journal::controls::RunControls::run_content(run, &ds) {
        Ok(b) => Some(b),
        Err(e) => {
            eprintln!("temper: report without content details ({}: {e})", ds.display());
            None
        }
    }
}

fn write(text: &str, output: Option<PathBuf>, what: &str) -> anyhow::Result<u8> {
    match output {
        Some(path) => {
            std::fs::write(&path, text.as_bytes()).with_context(|| format!("writing {}", path.display()))?;
            eprintln!("temper: wrote {} ({what})", path.display());
        }
        None => print!("{text}"),
    }
    Ok(0)
}

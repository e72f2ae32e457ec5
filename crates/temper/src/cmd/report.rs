//! `temper report`: the run's report or checklist (temper-report renders it).
use std::path::PathBuf;

use crate::cli::ReportFormat;
use crate::config::Config;

pub async fn run(_config: &Config, _run: &str, _format: ReportFormat, _output: Option<PathBuf>) -> anyhow::Result<u8> {
    anyhow::bail!("reports are being wired to temper-report")
}

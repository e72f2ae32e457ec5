//! One module per subcommand. Each returns the process exit code.
mod content;
mod doctor;
mod enroll;
pub mod fleet;
pub mod image;
mod last_plan;
mod llm;
mod memory;
pub mod plan;
#[cfg(test)]
mod recorded;
mod report;
pub mod run;
mod scan;
pub mod schedule;
pub mod serve;
mod status;
pub mod target;
mod trust;
mod verdict;
mod vm;

use crate::cli::{Cli, Cmd};
use crate::config::Config;

/// Exit codes: 0 done, 1 error, 2 rules remain, 75 paused (the LLM was unavailable).
pub const EXIT_ERROR: u8 = 1;
pub const EXIT_PAUSED: u8 = 75;

pub async fn dispatch(cli: Cli, config: Config) -> u8 {
    let result = match cli.cmd {
        Cmd::Vm { action, target, json } => vm::run(&config, action, target.name.as_deref(), json).await,
        Cmd::Doctor { target, all, json } => doctor::run(&config, target.name.as_deref(), all, json).await,
        Cmd::Target(c) => target::run(&config, c).await,
        Cmd::Scan(c) => scan::run(&config, c).await,
        Cmd::Content(c) => content::run(c),
        Cmd::Run(args) => run::start(&config, args).await,
        Cmd::Resume { run, agent, quiet, json } => run::resume(&config, run, agent, quiet, json).await,
        Cmd::Status { run, json } => status::run(&config, run, json).await,
        Cmd::Report { run, fleet, format, output } => report::run(&config, report::Which { run, fleet }, format, output).await,
        Cmd::Image(c) => image::run(&config, c).await,
        Cmd::Plan(c) => plan::run(&config, c).await,
        Cmd::Llm(c) => llm::run(&config, c).await,
        Cmd::Memory(c) => memory::run(&config, c).await,
        Cmd::Schedule(c) => schedule::run(schedule::Ctx { config: &config, config_file: &cli.config, log_format: cli.log_format }, c).await,
        Cmd::Serve(args) => serve::run(&config, args).await,
        Cmd::Fleet(c) => fleet::run(&config, c).await,
        Cmd::Worker(args) => fleet::worker(&config, args).await,
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            crate::telemetry::notice(tracing::Level::ERROR, format_args!("{e:#}"));
            EXIT_ERROR
        }
    }
}

/// Prints a value as pretty JSON.
pub fn print_json(v: &impl serde::Serialize) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

//! `temper fleet run` (lanes in one process), `temper fleet enqueue|list` and `temper worker`: many targets a night, on any number of
//! hosts, through one PostgreSQL. The queue is `temper_store`'s (PostgreSQL only); each worker
//! takes one target at a time and drives its run with `temper run` / `temper resume`, so a run
//! taken over from a dead worker resumes from its last checkpoint.
mod lanes;
mod plan_from;
mod worker;

use clap::{Args, Subcommand};
use temper_journal::QueueItem;

pub use lanes::{LaneArgs, lanes};
pub use worker::{WorkerArgs, worker};

use super::print_json;
use crate::cli::parse_run_args;
use crate::config::Config;
use crate::wiring;

#[derive(Debug, Subcommand)]
pub enum FleetCmd {
    /// Run targets at once in this process, in lanes (either database).
    #[command(
        after_help = "Examples:\n  temper fleet run --targets web,db --lanes 2 -- --agent stock --rules sshd_disable_root_login\n  temper fleet run --targets golden,web,db --plan-from golden -- --agent stock"
    )]
    Run(LaneArgs),
    /// Put targets on the queue, each to be run with the same `temper run` arguments.
    #[command(
        after_help = "Example:\n  temper fleet enqueue --fleet night --targets web,db -- --agent stock --rules sshd_disable_root_login"
    )]
    Enqueue(EnqueueArgs),
    /// The queue: each item's target, state, worker, tries and run.
    #[command(after_help = "Examples:\n  temper fleet list\n  temper fleet list --fleet night --json")]
    List {
        #[arg(long)]
        fleet: Option<String>,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub struct EnqueueArgs {
    /// The fleet's name, to list and report its runs together.
    #[arg(long, default_value = "default")]
    pub fleet: String,
    /// Targets of temper.toml (`temper target list`), comma separated or repeated.
    #[arg(long, value_delimiter = ',', required = true)]
    pub targets: Vec<String>,
    /// `temper run` arguments for every target (after `--`); not `--target`.
    #[arg(last = true)]
    pub run_args: Vec<String>,
}

pub async fn run(config: &Config, cmd: FleetCmd) -> anyhow::Result<u8> {
    match cmd {
        FleetCmd::Run(a) => lanes(config, a).await,
        FleetCmd::Enqueue(a) => enqueue(config, a).await,
        FleetCmd::List { fleet, json } => list(config, fleet, json).await,
    }
}

async fn enqueue(config: &Config, a: EnqueueArgs) -> anyhow::Result<u8> {
    let store = wiring::store(config).await?;
    let run_args = parse_run_args(&a.run_args).map_err(anyhow::Error::msg)?;
    anyhow::ensure!(run_args.target.name.is_none(), "`--target` in the run arguments: name the targets with `--targets`");
    // Every target first, so a typo enqueues nothing.
    let targets = a.targets.iter().map(|t| config.target(Some(t))).collect::<Result<Vec<_>, _>>()?;
    for t in &targets {
        let id = store.enqueue(&a.fleet, t, &a.run_args).await?;
        println!("{id}\t{}\t{}", t.name, t.label());
    }
    Ok(0)
}

async fn list(config: &Config, fleet: Option<String>, json: bool) -> anyhow::Result<u8> {
    let items = wiring::store(config).await?.queue(fleet.as_deref()).await?;
    if json {
        print_json(&items)?;
    } else {
        items.iter().for_each(|i| println!("{}", line(i)));
    }
    Ok(0)
}

fn line(i: &QueueItem) -> String {
    let run = i.run_id.map_or("-".into(), |r| r.to_string());
    let exit = i.exit_code.map_or("-".into(), |c| c.to_string());
    format!(
        "{}\t{}\t{}\t{}\tworker {}\ttries {}\trun {run}\texit {exit}",
        i.id,
        i.fleet,
        i.target.name,
        i.state,
        i.worker.as_deref().unwrap_or("-"),
        i.tries
    )
}

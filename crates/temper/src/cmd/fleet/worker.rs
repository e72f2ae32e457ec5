//! `temper worker`: takes targets off the fleet queue, one at a time, and drives each one's
//! run. Start as many as you like, on any hosts sharing the PostgreSQL database.
use std::time::Duration;

use clap::Args;
use temper_journal::prelude::*;
use temper_journal::{QueueClaim, driver_id};
use tracing::Level;

use crate::cli::AgentArgs;
use crate::cli::parse_run_args;
use crate::cmd::run;
use crate::config::Config;
use crate::telemetry::notice;
use crate::wiring;

/// How long a taken target is held before its run exists (reading content, the first lease).
const HOLD: Duration = Duration::from_secs(600);
/// A run that stopped unfinished waits this long before a worker takes it again.
const PAUSE: Duration = Duration::from_secs(60);

#[derive(Debug, Clone, Args)]
pub struct WorkerArgs {
    /// This worker's name in the queue (default: host:pid:nonce).
    #[arg(long)]
    pub name: Option<String>,
    /// Exit once nothing can be taken, instead of waiting for more.
    #[arg(long)]
    pub once: bool,
    /// Seconds between looks at an empty queue.
    #[arg(long, default_value_t = 5)]
    pub poll_secs: u64,
    /// A target taken this many times without its run finishing is marked failed.
    #[arg(long, default_value_t = 3)]
    pub max_tries: i64,
}

/// Runs targets until the queue is empty (`--once`) or forever; the exit code is the worst run's.
pub async fn worker(config: &Config, args: WorkerArgs) -> anyhow::Result<u8> {
    let store = wiring::store(config).await?;
    let name = args.name.clone().unwrap_or_else(driver_id);
    store.queue(None).await?;
    notice(Level::INFO, format_args!("worker {name} taking targets from {}", store.describe()));
    let mut worst = 0;
    loop {
        let Some(claim) = store.claim(&name, HOLD, args.max_tries).await? else {
            if args.once {
                return Ok(worst);
            }
            tokio::time::sleep(Duration::from_secs(args.poll_secs)).await;
            continue;
        };
        let (item, code) = match claim {
            QueueClaim::Start(item) => {
                notice(Level::INFO, format_args!("worker {name}: target {} (queue item {}), starting its run", item.target.name, item.id));
                let code = match parse_run_args(&item.args) {
                    Ok(a) => {
                        let origin = run::RunOrigin { fleet: Some(item.fleet.clone()), queue_item: Some(item.id), plan_from: None };
                        run::start_on(config, item.target.clone(), a, origin).await
                    }
                    Err(e) => Err(anyhow::anyhow!("queue item {}: bad run arguments: {e}", item.id)),
                };
                (item, code)
            }
            QueueClaim::Resume(item) => {
                notice(
                    Level::INFO,
                    format_args!("worker {name}: target {}, resuming run {:?} (try {})", item.target.name, item.run_id, item.tries),
                );
                let agent = AgentArgs { agent: None, llm: None, model: None };
                let code = run::resume(config, item.run_id, agent, false, false).await;
                (item, code)
            }
        };
        store.release_item(item.id, PAUSE).await?;
        worst = worst.max(match code {
            Ok(c) => c,
            Err(e) => {
                notice(Level::ERROR, format_args!("worker {name}: target {}: {e:#}", item.target.name));
                super::super::EXIT_ERROR
            }
        });
    }
}

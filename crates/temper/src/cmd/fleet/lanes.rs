//! `temper fleet run`: several targets at once in this process, in lanes. Each lane is a whole
//! `temper run` (its own hypervisor connection, SSH session, clock and lease), quiet; the fleet
//! prints a line as each lane starts and ends, and every minute a line per lane saying where its
//! run is. Works with either database.
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use temper_core::journal::Run;
use temper_core::journal::prelude::*;
use tracing::Level;

use crate::cli::parse_run_args;
use crate::cmd::EXIT_ERROR;
use crate::cmd::run::{self, Origin};
use crate::config::Config;
use crate::telemetry::notice;
use crate::wiring;

#[derive(Debug, Args)]
pub struct LaneArgs {
    /// Groups the runs (default: `fleet-` and the start time).
    #[arg(long)]
    pub fleet: Option<String>,
    /// Targets of temper.toml, comma separated or repeated (default: all of them).
    #[arg(long, value_delimiter = ',')]
    pub targets: Vec<String>,
    /// Runs at once. Under TCG, one guest per core is the ceiling.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub lanes: u16,
    /// How often to print where each lane is, in seconds.
    #[arg(long, default_value_t = 60)]
    pub every_secs: u64,
    /// `temper run` arguments for every target (after `--`); not `--target`.
    #[arg(last = true)]
    pub run_args: Vec<String>,
}

pub async fn lanes(config: &Config, a: LaneArgs) -> anyhow::Result<u8> {
    let mut args = parse_run_args(&a.run_args).map_err(anyhow::Error::msg)?;
    anyhow::ensure!(args.target.name.is_none(), "`--target` in the run arguments: name the targets with `--targets`");
    args.quiet = true;
    let all = config.targets()?;
    let targets = if a.targets.is_empty() {
        all.all().to_vec()
    } else {
        a.targets.iter().map(|t| config.target(Some(t))).collect::<Result<Vec<_>, _>>()?
    };
    let fleet = a.fleet.unwrap_or_else(|| format!("fleet-{}", chrono::Utc::now().format("%Y%m%dT%H%M%SZ")));
    notice(Level::INFO, format_args!("fleet {fleet}: {} target(s) in {} lane(s)", targets.len(), a.lanes));
    let config = Arc::new(config.clone());
    let lanes = Arc::new(tokio::sync::Semaphore::new(a.lanes.into()));
    let mut set = tokio::task::JoinSet::new();
    for t in targets {
        let (config, lanes, args, origin) =
            (config.clone(), lanes.clone(), args.clone(), Origin { fleet: Some(fleet.clone()), queue_item: None });
        set.spawn(async move {
            let _lane = lanes.acquire_owned().await.expect("the lanes are never closed");
            let name = t.name.clone();
            (name, run::start_on(&config, t, args, origin).await)
        });
    }
    let ticker = tokio::spawn(tell_every(config.clone(), fleet.clone(), Duration::from_secs(a.every_secs.max(1))));
    let mut codes = Vec::new();
    while let Some(done) = set.join_next().await {
        let (name, code) = done?;
        let code = code.unwrap_or_else(|e| {
            notice(Level::ERROR, format_args!("fleet {fleet}: target {name}: {e:#}"));
            EXIT_ERROR
        });
        notice(Level::INFO, format_args!("fleet {fleet}: target {name} done, exit code {code}"));
        codes.push((name, code));
    }
    ticker.abort();
    codes.sort();
    for (name, code) in &codes {
        println!("{fleet}\t{name}\texit {code}");
    }
    Ok(worst(codes.iter().map(|c| c.1)))
}

/// The worst exit code: an error (1), then paused (75), then rules left (2), then 0.
pub fn worst(codes: impl IntoIterator<Item = u8>) -> u8 {
    let rank = |c: u8| match c {
        0 => 0,
        2 => 1,
        75 => 2,
        _ => 3,
    };
    codes.into_iter().max_by_key(|c| rank(*c)).unwrap_or(0)
}

/// Every `every`, a line per run of the fleet: its target, status, phase and rule.
async fn tell_every(config: Arc<Config>, fleet: String, every: Duration) {
    let Ok(store) = wiring::store(&config).await else { return };
    loop {
        tokio::time::sleep(every).await;
        let Ok(runs) = store.list_runs(1000).await else { continue };
        for r in runs.iter().filter(|r| of_fleet(r, &fleet)) {
            let target = r.target_config.as_ref().map_or(r.target.as_str(), |t| t.name.as_str());
            let rule = r.current_rule.as_deref().map(temper_scap::short_rule_id).unwrap_or("-");
            notice(Level::INFO, format_args!("fleet {fleet}: {target} run {} {} {} {rule}", r.id, r.status, r.phase));
        }
    }
}

/// True when the run's stored options name `fleet`.
pub fn of_fleet(r: &Run, fleet: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(&r.options_json).is_ok_and(|o| o["fleet"] == fleet)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_worst_exit_code_wins() {
        assert_eq!(super::worst([0, 2, 0]), 2);
        assert_eq!(super::worst([2, 75]), 75);
        assert_eq!(super::worst([75, 1, 2]), 1);
        assert_eq!(super::worst([]), 0);
    }
}

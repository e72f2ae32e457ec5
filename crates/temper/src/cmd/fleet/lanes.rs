//! `temper fleet run`: several targets at once in this process, in lanes. Each lane is a whole
//! `temper run` (its own hypervisor connection, SSH session, clock and lease), quiet; the fleet
//! prints a line as each lane starts and ends, and every minute a line per lane saying where its
//! run is. Works with either database. With `--plan-from FIRST`, FIRST runs alone first and
//! the others apply its plan once its run has passed the reboot proof (`plan_from`).
use std::sync::Arc;
use std::time::Duration;
use temper_journal::plan_from::PlanFrom;

use anyhow::Context;
use clap::Args;
use temper_journal::Run;
use temper_journal::prelude::*;
use temper_journal::target::Target;
use tracing::Level;

use super::plan_from::{self};
use crate::cli::{RunArgs, parse_run_args};
use crate::cmd::EXIT_ERROR;
use crate::cmd::run::{self, RunOrigin};
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
    /// This target (one of `--targets`) runs the full loop first; once its run has passed the
    /// reboot proof, its plan is exported under the fleet's folder and the others apply it
    /// (`--plan`). An unproven plan is not handed on: the others run the full loop.
    #[arg(long, value_name = "TARGET")]
    pub plan_from: Option<String>,
    /// `temper run` arguments for every target (after `--`); not `--target`.
    #[arg(last = true)]
    pub run_args: Vec<String>,
}

pub async fn lanes(config: &Config, a: LaneArgs) -> anyhow::Result<u8> {
    let mut args = parse_run_args(&a.run_args).map_err(anyhow::Error::msg)?;
    anyhow::ensure!(args.target.name.is_none(), "`--target` in the run arguments: name the targets with `--targets`");
    args.quiet = true;
    let all = config.targets()?;
    let mut targets = if a.targets.is_empty() {
        all.all().to_vec()
    } else {
        a.targets.iter().map(|t| config.target(Some(t))).collect::<Result<Vec<_>, _>>()?
    };
    let first = match &a.plan_from {
        Some(name) => {
            anyhow::ensure!(
                args.plan.is_none(),
                "`--plan-from` and `--plan` in the run arguments: the others' plan comes from one of them"
            );
            let i = targets
                .iter()
                .position(|t| &t.name == name)
                .with_context(|| format!("--plan-from {name}: not one of the fleet's targets"))?;
            Some(targets.remove(i))
        }
        None => None,
    };
    let fleet = a.fleet.unwrap_or_else(|| format!("fleet-{}", chrono::Utc::now().format("%Y%m%dT%H%M%SZ")));
    let n = targets.len() + usize::from(first.is_some());
    notice(Level::INFO, format_args!("fleet {fleet}: {n} target(s) in {} lane(s)", a.lanes));
    let config = Arc::new(config.clone());
    let ticker = tokio::spawn(tell_every(config.clone(), fleet.clone(), Duration::from_secs(a.every_secs.max(1))));
    let origin = |plan_from| RunOrigin { fleet: Some(fleet.clone()), queue_item: None, plan_from };
    let mut codes = Vec::new();
    let mut plan_from = None;
    if let Some(first) = first {
        notice(Level::INFO, format_args!("fleet {fleet}: target {} runs the full loop first; the others wait for its plan", first.name));
        let code = lane(&config, &fleet, first.clone(), args.clone(), origin(None)).await;
        codes.push((first.name.clone(), code));
        let d = plan_from::decide(&config, &wiring::store(&config).await?, &fleet, &first, code).await;
        let level = if matches!(d, PlanFrom::Applied { .. }) { Level::INFO } else { Level::WARN };
        notice(level, format_args!("fleet {fleet}: {}", d.says()));
        args = plan_from::follow(&config, &d, args);
        plan_from = Some(d);
    }
    let lanes = Arc::new(tokio::sync::Semaphore::new(a.lanes.into()));
    let mut set = tokio::task::JoinSet::new();
    for t in targets {
        let (config, lanes, args, origin, fleet) = (config.clone(), lanes.clone(), args.clone(), origin(plan_from.clone()), fleet.clone());
        set.spawn(async move {
            let _lane = lanes.acquire_owned().await.expect("the lanes are never closed");
            (t.name.clone(), lane(&config, &fleet, t, args, origin).await)
        });
    }
    while let Some(done) = set.join_next().await {
        codes.push(done?);
    }
    ticker.abort();
    codes.sort();
    for (name, code) in &codes {
        println!("{fleet}\t{name}\texit {code}");
    }
    Ok(worst(codes.iter().map(|c| c.1)))
}

/// One target's whole `temper run`; its exit code, an error counting as [`EXIT_ERROR`].
async fn lane(config: &Config, fleet: &str, t: Target, args: RunArgs, origin: RunOrigin) -> u8 {
    let name = t.name.clone();
    let code = run::start_on(config, t, args, origin).await.unwrap_or_else(|e| {
        notice(Level::ERROR, format_args!("fleet {fleet}: target {name}: {e:#}"));
        EXIT_ERROR
    });
    notice(Level::INFO, format_args!("fleet {fleet}: target {name} done, exit code {code}"));
    code
}

/// The worst exit code: an error (1), then a guest whose scan disagrees with its disk (3), then
/// paused (75), then rules left (2), then 0.
pub fn worst(codes: impl IntoIterator<Item = u8>) -> u8 {
    let rank = |c: u8| match c {
        0 => 0,
        2 => 1,
        75 => 2,
        3 => 3,
        _ => 4,
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
        assert_eq!(super::worst([2, 3, 75]), 3, "a guest that lies over a pause");
        assert_eq!(super::worst([3, 1]), 1);
        assert_eq!(super::worst([]), 0);
    }
}

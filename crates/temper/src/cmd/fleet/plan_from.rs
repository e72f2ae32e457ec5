//! `temper fleet run --plan-from FIRST`: the first target runs the full loop alone; once its run
//! has passed the reboot proof, its plan is exported under the fleet's folder and every other
//! target's run applies it (`--plan DIR`). A plan that is not proven is never handed on: the
//! others run the full loop, and the fleet says why, in its log and in each of their runs'
//! stored options (`plan_from`).
use serde::{Deserialize, Serialize};
use temper_core::journal::prelude::*;
use temper_core::journal::{RebootProof, RunStatus, reboot_line};
use temper_core::target::Target;

use crate::cli::RunArgs;
use crate::config::Config;

/// What the fleet did with the first target's plan, stored with each other target's run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PlanFrom {
    /// The first target's run passed its reboot proof: its plan, exported to `dir`, is applied.
    Applied { target: String, run: i64, dir: String, steps: usize },
    /// Not handed on: this run goes through the full loop.
    Withheld { target: String, run: Option<i64>, why: Withheld },
}

/// Why the first target's plan was not handed on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Withheld {
    #[error("its run was never recorded (exit code {exit_code})")]
    NoRun { exit_code: u8 },
    #[error("its run did not finish (it is {status}, exit code {exit_code})")]
    Unfinished { status: RunStatus, exit_code: u8 },
    #[error("its reboot proof did not pass ({})", proof_words(*proof))]
    NotProven { proof: RebootProof },
    #[error("its plan could not be exported: {error}")]
    Export { error: String },
}

/// The reboot proof as the reports say it.
fn proof_words(proof: RebootProof) -> &'static str {
    reboot_line(match proof {
        RebootProof::Proven => Some(true),
        RebootProof::NotProven => Some(false),
        RebootProof::NotRun => None,
    })
}

impl PlanFrom {
    /// The log line.
    pub fn says(&self) -> String {
        match self {
            Self::Applied { target, run, dir, steps } => {
                format!("target {target}'s run {run} passed its reboot proof: the other targets apply its plan ({steps} steps, {dir})")
            }
            Self::Withheld { target, run, why } => {
                let run = run.map(|r| format!(" (run {r})")).unwrap_or_default();
                format!("target {target}{run}: its plan is not handed on, {why}; the other targets run the full loop")
            }
        }
    }

    /// `args` for the other targets: with `--plan DIR` when the plan is handed on.
    pub fn follow(&self, mut args: RunArgs) -> RunArgs {
        if let Self::Applied { dir, .. } = self {
            args.plan = Some(dir.into());
        }
        args
    }
}

/// After the first target's run (`exit_code`): its plan, exported under `fleet_dir`, or why not.
pub async fn decide(config: &Config, store: &temper_store::Store, fleet: &str, first: &Target, exit_code: u8) -> PlanFrom {
    let target = first.name.clone();
    let Some(run) = first_run(store, fleet, first).await else {
        return PlanFrom::Withheld { target, run: None, why: Withheld::NoRun { exit_code } };
    };
    let withheld = |why| PlanFrom::Withheld { target: target.clone(), run: Some(run.id), why };
    let summary = run.summary_json.as_deref().and_then(|s| serde_json::from_str::<temper_core::journal::RunSummary>(s).ok());
    let Some(summary) = summary.filter(|_| run.status == RunStatus::Finished) else {
        return withheld(Withheld::Unfinished { status: run.status, exit_code });
    };
    let proof = RebootProof::of(summary.rebooted);
    if proof != RebootProof::Proven {
        return withheld(Withheld::NotProven { proof });
    }
    let dir = store.fleet_dir(fleet).join(format!("plan-from-run{}", run.id));
    match super::super::plan::export(config, store, run.id, &dir).await {
        Ok(p) => PlanFrom::Applied { target, run: run.id, dir: dir.display().to_string(), steps: p.steps.len() },
        Err(e) => withheld(Withheld::Export { error: format!("{e:#}") }),
    }
}

/// The newest run of `fleet` on `target`.
async fn first_run(store: &temper_store::Store, fleet: &str, target: &Target) -> Option<temper_core::journal::Run> {
    let runs = store.list_runs(1000).await.ok()?;
    runs.into_iter()
        .filter(|r| super::lanes::of_fleet(r, fleet) && r.target_config.as_ref().is_some_and(|t| t.name == target.name))
        .max_by_key(|r| r.id)
}

#[cfg(test)]
mod tests;

//! `temper fleet run --plan-from FIRST`: the first target runs the full loop alone; once its run
//! has passed the reboot proof, its plan is exported under the fleet's folder and every other
//! target's run applies it (`--plan DIR`). A plan that is not proven is never handed on: the
//! others run the full loop, and the fleet says why, in its log and in each of their runs'
//! stored options (`plan_from`).
use temper_core::journal::prelude::*;
use temper_core::journal::{RebootProof, RunStatus};
pub use temper_core::plan_from::{PlanFrom, Withheld};
use temper_core::target::Target;

use crate::cli::RunArgs;
use crate::config::Config;

/// The other targets' run arguments: `args`, with `--plan DIR` when the plan is handed on.
pub fn follow(d: &PlanFrom, mut args: RunArgs) -> RunArgs {
    if let PlanFrom::Applied { dir, .. } = d {
        // The plan this fleet exported itself, moments ago, into its own folder: no signature.
        (args.plan, args.unsigned, args.allowed_signers) = (Some(dir.into()), true, None);
    }
    args
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

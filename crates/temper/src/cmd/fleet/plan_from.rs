//! `temper fleet run --plan-from FIRST`: the first target runs the full loop alone; once its run
//! has passed the reboot proof, its plan is handed on and every other target's run applies it
//! (`--plan DIR`). A plan that is not proven is never handed on: the others run the full loop,
//! and the fleet says why, in its log and in each of their runs' stored options (`plan_from`).
//!
//! Never unsigned: the plan the first run sealed at its end with the host's own key is verified
//! and matched against the store (`last_plan::proven`), exported under the fleet's folder bound
//! to the fleet's runs (`# temper-plan fleet NAME`), sealed with that key again, and each other
//! run verifies it with that key as it would any plan.
use temper_core::plan::own_key::OwnKey;
use temper_core::plan::seal::{self, Trust};
use temper_journal::plan::{Applying, Terms};
use temper_journal::plan_from::{PlanFrom, Withheld};
use temper_journal::prelude::*;
use temper_journal::target::Target;
use temper_journal::{RebootOutcome, RunStatus};

use super::super::last_plan::{self, Job};
use super::super::plan::{ForRun, export, for_run};
use crate::cli::RunArgs;
use crate::config::Config;

/// The other targets' run arguments: `args`, with `--plan DIR` when the plan is handed on,
/// checked against the host's own key.
pub fn follow(config: &Config, d: &PlanFrom, mut args: RunArgs) -> RunArgs {
    if let PlanFrom::Applied { dir, .. } = d {
        (args.plan, args.unsigned, args.allowed_signers) = (Some(dir.into()), false, Some(OwnKey::signers_of(&config.plan_key_file)));
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
    let summary = run.summary_json.as_deref().and_then(|s| serde_json::from_str::<temper_journal::RunSummary>(s).ok());
    let Some(summary) = summary.filter(|_| run.status == RunStatus::Finished) else {
        return withheld(Withheld::Unfinished { status: run.status, exit_code });
    };
    let proof = RebootOutcome::of(summary.rebooted);
    if proof != RebootOutcome::Proven {
        return withheld(Withheld::NotProven { proof });
    }
    let dir = store.fleet_dir(fleet).join(format!("plan-from-run{}", run.id));
    match hand_on(config, store, fleet, first, &run, &dir).await {
        Ok(steps) => PlanFrom::Applied { target, run: run.id, dir: dir.display().to_string(), steps },
        Err(e) => withheld(Withheld::Refused { error: format!("{e:#}") }),
    }
}

/// The first run's sealed plan, verified and matched against the store, written to `dir` for
/// the fleet's runs and sealed with the host's own key; its number of steps.
async fn hand_on(
    config: &Config,
    store: &temper_store::Store,
    fleet: &str,
    first: &Target,
    run: &temper_journal::Run,
    dir: &std::path::Path,
) -> anyhow::Result<usize> {
    let sealed = last_plan::dir(store, run.id);
    anyhow::ensure!(sealed.join(temper_journal::plan::SIGNATURE).exists(), "{} holds no sealed plan", sealed.display());
    let job: Job = serde_json::from_str(&run.options_json)?;
    let now = chrono::Utc::now();
    let proven = last_plan::proven(config, store, run.id, &sealed, &job, Applying { now, target: Some(&first.name), fleet: None }).await?;
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    export(config, store, run.id, dir, &Terms { fleet: Some(temper_journal::plan::terms::name(fleet)?), ..Terms::default() }).await?;
    let key = OwnKey::open(&config.plan_key_file)?;
    seal::sign(dir, &key.key, None)?;
    // What the others will read is what was proven.
    let trust = Trust::Signers(key.signers);
    let at = Applying { now, target: None, fleet: Some(fleet) };
    let r = ForRun { trust: &trust, profile: &job.profile, controls: &job.controls, content_sha256: job.content_sha256.as_deref(), at };
    let handed = for_run(dir, &r)?;
    anyhow::ensure!(handed.fixes == proven.fixes, "the store changed while the plan was written for the fleet");
    Ok(handed.fixes.len())
}

/// The newest run of `fleet` on `target`.
async fn first_run(store: &temper_store::Store, fleet: &str, target: &Target) -> Option<temper_journal::Run> {
    let runs = store.list_runs(1000).await.ok()?;
    runs.into_iter()
        .filter(|r| super::lanes::of_fleet(r, fleet) && r.target_config.as_ref().is_some_and(|t| t.name == target.name))
        .max_by_key(|r| r.id)
}

#[cfg(test)]
mod tests;

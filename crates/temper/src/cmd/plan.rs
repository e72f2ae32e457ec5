//! `temper plan export`: a finished run's proven plan as a folder (`plan.json`, `steps/`,
//! `replay.sh`, `playbook.yml`, `README.md`), written by temper-report.
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Subcommand;
use serde::{Deserialize, Serialize};
use temper_core::controls::RunControls;
use temper_core::journal::Journal;
use temper_core::plan::seal::{self, Trust};
use temper_core::plan::{Expect, Plan, PlanOrigin, PlannedFix};
use temper_report::{load, plan, resolve_run};

use crate::config::Config;
use temper_core::journal::RunId;

#[derive(Debug, Subcommand)]
pub enum PlanCmd {
    /// Write a finished run's kept fixes, in the order it kept them, as a plan: plan.json, the
    /// scripts under steps/, replay.sh, playbook.yml (Ansible) and README.md.
    #[command(after_help = "Examples:\n  temper plan export -o plan\n  temper plan export 3 -o run3-plan")]
    Export {
        /// A run id, or `latest`.
        #[arg(default_value = "latest")]
        run: String,
        /// The folder to write (new, or empty).
        #[arg(short, long)]
        output: PathBuf,
        /// Sign the plan with this OpenSSH private key: SHA256SUMS.sig, an SSH signature (as
        /// `ssh-keygen -Y sign -n temper-plan` makes) over SHA256SUMS, which covers every file.
        /// An encrypted key is read with TEMPER_SIGN_PASSPHRASE.
        #[arg(long, value_name = "KEY")]
        sign: Option<PathBuf>,
    },
}

pub async fn run(config: &Config, cmd: PlanCmd) -> anyhow::Result<u8> {
    let PlanCmd::Export { run, output, sign } = cmd;
    let store = crate::wiring::store(config).await?;
    let id = resolve_run(&store, &run).await?;
    let p = export(config, &store, id, &output).await?;
    match sign {
        Some(key) => {
            let passphrase = std::env::var("TEMPER_SIGN_PASSPHRASE").ok();
            let s =
                seal::sign(&output, &key, passphrase.as_deref()).with_context(|| format!("signing the plan in {}", output.display()))?;
            eprintln!("temper: signed the plan with {} ({}): {}", key.display(), s.fingerprint, output.join(seal::SIGNATURE).display());
        }
        None => eprintln!(
            "temper: the plan is not signed: `temper run --plan` and replay.sh apply it only with --unsigned (sign it with --sign KEY)"
        ),
    }
    let accepted = p.steps.iter().filter(|s| s.accepted_nonzero_exit).count();
    eprintln!(
        "temper: wrote the plan of run {id} to {}: {} steps ({accepted} kept despite a non-zero exit), reboot proof {}",
        output.display(),
        p.steps.len(),
        if p.header.reboot_proven { "passed" } else { "NOT passed" }
    );
    Ok(0)
}

/// Writes finished run `id`'s plan into `output` (new, or empty): `temper plan export`, and
/// `temper fleet run --plan-from` once its first run has passed the reboot proof.
pub async fn export(config: &Config, store: &dyn Journal, id: RunId, output: &Path) -> anyhow::Result<Plan> {
    let data = load(store, id).await?;
    let content = super::report::content(config, &data.run);
    // Runs record their datastream's sha256 when they start; for older ones, the file's now.
    let ds = config.content_dir.join(&data.run.datastream);
    let sha = plan::recorded_content_sha256(&data.run).or_else(|| temper_core::plan::sha256_file(&ds).ok());
    let mut p = plan::build(&data, content.as_ref(), sha)?;
    match crate::wiring::skill(config, &data.run.skill) {
        Ok(skill) => p.mark_one_way(|id| skill.one_way(id)),
        Err(e) => eprintln!("temper: no step is marked one-way: {e:#}"),
    }
    plan::write(&p, output)?;
    seal::write_manifest(output)?;
    Ok(p)
}

/// A plan a run applies (`temper run --plan`), kept with the run's options so that a resume
/// applies the same steps.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Applied {
    pub dir: String,
    /// The run it was exported from.
    pub from_run: RunId,
    pub fixes: Vec<PlannedFix>,
    /// The source run's cadence.
    #[serde(default)]
    pub regression_every: Option<u32>,
    /// Who signed it (`PRINCIPALS (SHA256:…)`); `None`: applied with `--unsigned`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signed_by: Option<String>,
    /// Given (`--plan`), or the last proven plan of the job, applied by default.
    #[serde(default)]
    pub origin: PlanOrigin,
}

/// Checks the plan in `dir` as `trust` asks (its seal: signature, then every file), reads it
/// (each script against its sha256) and refuses it unless it was made with this content, profile
/// and tailoring. Nothing has touched the guest yet. Applied as given (`--plan`): the caller says
/// otherwise.
pub fn for_run(dir: &Path, trust: &Trust, profile: &str, controls: &RunControls, content_sha256: Option<&str>) -> anyhow::Result<Applied> {
    let within = || format!("the plan in {}", dir.display());
    let signed_by = match trust {
        Trust::Signers(signers) => {
            let s = seal::verify(dir, signers).with_context(within)?;
            eprintln!(
                "temper: the plan in {} is signed by {} ({}), allowed by {}",
                dir.display(),
                s.principals,
                s.fingerprint,
                signers.display()
            );
            Some(format!("{} ({})", s.principals, s.fingerprint))
        }
        Trust::Unsigned => None,
    };
    let plan = Plan::load(dir).with_context(within)?;
    let content_sha256 = content_sha256.context("the datastream could not be read to check the plan's content against it")?;
    let tailoring = controls.tailoring.as_ref().map(|t| (t.file.as_str(), t.sha256.as_str()));
    plan.check(&Expect { profile, content_sha256, tailoring }).with_context(|| format!("the plan in {}", dir.display()))?;
    let (from_run, regression_every) = (plan.header.source.run, plan.header.source.regression_every);
    Ok(Applied { dir: dir.display().to_string(), from_run, fixes: plan.fixes(), regression_every, signed_by, origin: PlanOrigin::Given })
}

/// What `temper run --plan` asks of the plan: `--unsigned`, or a signature by a key of
/// `--allowed-signers` (or `allowed_signers_file`).
pub fn trust(unsigned: bool, signers: Option<PathBuf>, dir: &Path) -> anyhow::Result<Trust> {
    match (unsigned, signers) {
        (true, _) => Ok(Trust::Unsigned),
        (false, Some(f)) => Ok(Trust::Signers(f)),
        (false, None) if !dir.join(seal::SIGNATURE).exists() => {
            Err(seal::SealError::NotSigned).with_context(|| format!("the plan in {}", dir.display()))
        }
        (false, None) => anyhow::bail!(
            "the plan in {} is signed: give --allowed-signers FILE (or allowed_signers_file in temper.toml) to check it; nothing was run",
            dir.display()
        ),
    }
}

//! `temper plan export|verify|unpack`: a finished run's proven plan as a folder (`plan.json`,
//! `steps/`, `replay.sh`, `playbook.yml`, `README.md`, written by temper-report; sealed by
//! `temper_core::plan::seal`), checked from outside it, and copied into a private folder to be
//! applied from there.
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Subcommand;
use serde::{Deserialize, Serialize};
use temper_core::plan::Opened;
use temper_core::plan::seal::{self, Trust};
use temper_journal::Journal;
use temper_journal::controls::RunControls;
use temper_journal::plan::{
    Applying, Folder, Plan, PlanOrigin, PlannedFix, RunInputs, Terms, build, recorded_content_sha256, sha256_file, terms,
};
use temper_report::{load, resolve_run};

use crate::config::Config;
use temper_journal::RunId;

#[derive(Debug, Subcommand)]
pub enum PlanCmd {
    /// Write a finished run's kept fixes, in the order it kept them, as a plan: plan.json, the
    /// scripts under steps/, replay.sh, playbook.yml (Ansible), README.md and SHA256SUMS.
    #[command(
        after_help = "Examples:\n  temper plan export -o plan --sign ~/.ssh/id_ed25519 --expires 30d --for web1,web2\n  temper plan export 3 -o run3-plan"
    )]
    Export {
        /// A run id, or `latest`.
        #[arg(default_value = "latest")]
        run: String,
        /// The folder to write (new, or empty).
        #[arg(short, long)]
        output: PathBuf,
        /// Sign the plan with this OpenSSH private key: SHA256SUMS.sig, an SSH signature (as
        /// `ssh-keygen -Y sign -n temper-plan` makes) over SHA256SUMS, which covers every file
        /// and the terms. An encrypted key is read with TEMPER_SIGN_PASSPHRASE.
        #[arg(long, value_name = "KEY")]
        sign: Option<PathBuf>,
        #[command(flatten)]
        terms: TermsArgs,
    },
    /// Check a plan's folder from outside it, changing nothing and running nothing: the
    /// signature, the revocation lists, every file against SHA256SUMS, nothing that SHA256SUMS
    /// does not list, no link, and the terms (expiry; with --target, the target).
    #[command(
        after_help = "Example:\n  temper plan verify /mnt/share/plan --allowed-signers ~/.config/temper/allowed_signers --target web1"
    )]
    Verify {
        dir: PathBuf,
        #[command(flatten)]
        check: CheckArgs,
    },
    /// Copy a plan's folder into a new private folder (0700) without following a link, check the
    /// copy as `verify` does, and say how to apply it from there with temper, bash or Ansible.
    #[command(after_help = "Example:\n  temper plan unpack /mnt/share/plan -o /root/plan --allowed-signers /etc/temper/allowed_signers")]
    Unpack {
        dir: PathBuf,
        /// The private folder to make (it must not exist).
        #[arg(short, long)]
        output: PathBuf,
        #[command(flatten)]
        check: CheckArgs,
    },
}

/// What a signer binds a plan to, inside what is signed (SHA256SUMS).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TermsArgs {
    /// The plan is refused from then on: RFC 3339 (2027-01-31T00:00:00Z), a day (its start,
    /// UTC) or a span from now (90d, 12h, 30m).
    #[arg(long, value_name = "WHEN")]
    pub expires: Option<String>,
    /// The targets the plan is for (temper's target names; bash and Ansible match them against
    /// the machine's name and the inventory's); it is refused on any other.
    #[arg(long = "for", value_name = "TARGETS", value_delimiter = ',')]
    pub targets: Vec<String>,
    /// The fleet whose runs the plan is for (`temper fleet run|enqueue --fleet`); it is refused
    /// in any other run.
    #[arg(long, value_name = "FLEET")]
    pub for_fleet: Option<String>,
}

impl TermsArgs {
    pub fn terms(&self) -> anyhow::Result<Terms> {
        let now = chrono::Utc::now();
        let expires = self.expires.as_deref().map(|e| terms::expiry(e, now)).transpose()?;
        if let Some(t) = expires.filter(|t| *t <= now) {
            anyhow::bail!("--expires {} is in the past ({t})", self.expires.as_deref().unwrap_or_default());
        }
        let targets = self.targets.iter().map(|t| terms::name(t.trim())).collect::<Result<Vec<_>, _>>()?;
        let fleet = self.for_fleet.as_deref().map(terms::name).transpose()?;
        Ok(Terms { expires, targets, fleet })
    }
}

/// How `verify` and `unpack` check a plan.
#[derive(Debug, Clone, clap::Args)]
pub struct CheckArgs {
    /// The keys the plan may be signed by (an allowed-signers file). Default: allowed_signers_file.
    #[arg(long, value_name = "FILE")]
    pub allowed_signers: Option<PathBuf>,
    /// Check all but the signature (a plan that is not signed).
    #[arg(long, conflicts_with = "allowed_signers")]
    pub unsigned: bool,
    /// The target it is to be applied to: refused when the plan's terms do not name it.
    #[arg(long, value_name = "NAME")]
    pub target: Option<String>,
    /// The fleet whose runs it is to be applied in.
    #[arg(long, value_name = "FLEET")]
    pub fleet: Option<String>,
}

pub async fn run(config: &Config, cmd: PlanCmd) -> anyhow::Result<u8> {
    match cmd {
        PlanCmd::Export { run, output, sign, terms } => export_cmd(config, &run, &output, sign, &terms.terms()?).await,
        PlanCmd::Verify { dir, check } => {
            let (_, opened) = checked(config, &dir, &check)?;
            said(&dir, &opened, &check);
            Ok(0)
        }
        PlanCmd::Unpack { dir, output, check } => unpack(config, &dir, &output, &check),
    }
}

async fn export_cmd(config: &Config, run: &str, output: &Path, sign: Option<PathBuf>, terms: &Terms) -> anyhow::Result<u8> {
    let store = crate::wiring::store(config).await?;
    let id = resolve_run(&store, run).await?;
    let p = export(config, &store, id, output, terms).await?;
    match sign {
        Some(key) => {
            let passphrase = std::env::var("TEMPER_SIGN_PASSPHRASE").ok();
            let s = seal::sign(output, &key, passphrase.as_deref()).with_context(|| format!("signing the plan in {}", output.display()))?;
            eprintln!(
                "temper: signed the plan with {} ({}): {}",
                key.display(),
                s.fingerprint,
                output.join(temper_journal::plan::SIGNATURE).display()
            );
        }
        None if !terms.is_empty() => eprintln!(
            "temper: the plan is not signed: its terms ({}) bind it once SHA256SUMS is signed (`ssh-keygen -Y sign -f KEY -n temper-plan SHA256SUMS` in {})",
            terms.says(),
            output.display()
        ),
        None => eprintln!(
            "temper: the plan is not signed: `temper run --plan` applies it only with --unsigned (sign it with --sign KEY, or ssh-keygen -Y sign)"
        ),
    }
    let accepted = p.steps.iter().filter(|s| s.accepted_nonzero_exit).count();
    eprintln!(
        "temper: wrote the plan of run {id} to {}: {} steps ({accepted} kept despite a non-zero exit), reboot proof {}; terms: {}",
        output.display(),
        p.steps.len(),
        if p.header.reboot_proven { "passed" } else { "NOT passed" },
        terms.says()
    );
    Ok(0)
}

/// Writes finished run `id`'s plan into `output` (new, or empty), with its manifest and
/// `terms`: `temper plan export`, and the plan a run's end seals with the host's own key.
pub async fn export(config: &Config, store: &dyn Journal, id: RunId, output: &Path, terms: &Terms) -> anyhow::Result<Plan> {
    let data = load(store, id).await?;
    let content = super::report::content(config, &data.run);
    // Runs record their datastream's sha256 when they start; for older ones, the file's now.
    let ds = config.content_dir.join(&data.run.datastream);
    let sha = recorded_content_sha256(&data.run).or_else(|| sha256_file(&ds).ok());
    let mut p = build(data.records(), content.as_ref(), sha)?;
    match crate::wiring::skill(config, &data.run.skill) {
        Ok(skill) => p.mark_one_way(|id| skill.one_way(id)),
        Err(e) => eprintln!("temper: no step is marked one-way: {e:#}"),
    }
    temper_report::plan::write(&p, output, terms)?;
    seal::write_manifest(output, terms)?;
    Ok(p)
}

/// `verify` and `unpack`'s check of the folder `dir`, read once: what it holds, and the plan.
fn checked(config: &Config, dir: &Path, check: &CheckArgs) -> anyhow::Result<(Folder, Opened)> {
    let trust = trust(check.unsigned, check.allowed_signers.clone().or(config.allowed_signers_file.clone()), dir)?;
    let folder = Folder::read(dir).with_context(|| format!("the plan in {}", dir.display()))?;
    let at = Applying { now: chrono::Utc::now(), target: check.target.as_deref(), fleet: check.fleet.as_deref() };
    let opened = temper_core::plan::open(&folder, &trust, &at).with_context(|| format!("the plan in {}", dir.display()))?;
    Ok((folder, opened))
}

/// What the check found, on stdout.
fn said(dir: &Path, opened: &Opened, check: &CheckArgs) {
    let (plan, sealed) = (&opened.plan, &opened.sealed);
    let h = &plan.header;
    match &sealed.signer {
        Some(s) => println!("the plan in {} is signed by {} ({})", dir.display(), s.principals, s.fingerprint),
        None => println!("the plan in {}: its signature was not checked (--unsigned)", dir.display()),
    }
    if let Some(sha) = &sealed.manifest_sha256 {
        println!("  manifest sha256 {sha} (what a revocation list names it by)");
    }
    println!("  terms: {}", sealed.terms.says());
    if check.target.is_none() && !sealed.terms.targets.is_empty() {
        println!("  (give --target NAME to check the target it is to be applied to)");
    }
    println!(
        "  run {}'s plan on {}: {} steps, profile {}, content {} {}",
        h.source.run,
        h.source.target,
        plan.steps.len(),
        h.profile,
        h.content.datastream,
        h.content.version
    );
    println!("  every file matches, and the folder holds nothing else; nothing was run");
}

/// `temper plan unpack`: the folder's bytes, read once and checked, written into `output` (new,
/// 0700), then the copy read back and checked again.
fn unpack(config: &Config, dir: &Path, output: &Path, check: &CheckArgs) -> anyhow::Result<u8> {
    let (folder, _) = checked(config, dir, check)?;
    folder.write_private(output).with_context(|| format!("copying the plan into {}", output.display()))?;
    let copied = checked(config, output, check).with_context(|| format!("the copy in {}", output.display()));
    let (_, opened) = match copied {
        Ok(c) => c,
        Err(e) => {
            let _ = std::fs::remove_dir_all(output);
            return Err(e);
        }
    };
    said(output, &opened, check);
    let o = output.display();
    println!("Apply it from {o}, and only from there:");
    let signers = check.allowed_signers.clone().or(config.allowed_signers_file.clone());
    match (&signers, check.unsigned) {
        (Some(f), false) => println!("  temper run --plan {o} --allowed-signers {}", f.display()),
        _ => println!("  temper run --plan {o} --unsigned"),
    }
    println!("  sudo bash {o}/replay.sh            # on the machine, as root");
    println!("  cd {o} && ansible-playbook -i INVENTORY playbook.yml");
    Ok(0)
}

/// A plan a run applies (`temper run --plan`), kept with the run's options so that a resume
/// applies the same steps.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AppliedPlan {
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

/// What `temper run --plan` checks of the plan in `dir`, and where it applies it.
pub struct ForRun<'a> {
    pub trust: &'a Trust,
    pub profile: &'a str,
    pub controls: &'a RunControls,
    pub content_sha256: Option<&'a str>,
    /// The target and fleet the run is for, and now: the plan's terms must allow them.
    pub at: Applying<'a>,
}

/// Reads the plan in `dir` once, checks it on those bytes as `trust` asks (its seal: signature,
/// revocation, every file; its terms), takes the plan from the same bytes (each script against
/// its sha256) and refuses it unless it was made with this content, profile and tailoring.
/// Nothing has touched the guest yet, and nothing is read from `dir` again. Applied as given
/// (`--plan`): the caller says otherwise.
pub fn for_run(dir: &Path, r: &ForRun<'_>) -> anyhow::Result<AppliedPlan> {
    let within = || format!("the plan in {}", dir.display());
    let folder = Folder::read(dir).with_context(within)?;
    let opened = temper_core::plan::open(&folder, r.trust, &r.at).with_context(within)?;
    let signed_by = opened.sealed.signer.as_ref().map(|s| format!("{} ({})", s.principals, s.fingerprint));
    if let (Some(s), Trust::Signers(signers)) = (&opened.sealed.signer, r.trust) {
        eprintln!(
            "temper: the plan in {} is signed by {} ({}), allowed by {}; terms: {}",
            dir.display(),
            s.principals,
            s.fingerprint,
            signers.display(),
            opened.sealed.terms.says()
        );
    }
    let plan = opened.plan;
    let content_sha256 = r.content_sha256.context("the datastream could not be read to check the plan's content against it")?;
    let tailoring = r.controls.tailoring.as_ref().map(|t| (t.file.as_str(), t.sha256.as_str()));
    plan.check(&RunInputs { profile: r.profile, content_sha256, tailoring }).with_context(within)?;
    let (from_run, regression_every) = (plan.header.source.run, plan.header.source.regression_every);
    Ok(AppliedPlan {
        dir: dir.display().to_string(),
        from_run,
        fixes: plan.fixes(),
        regression_every,
        signed_by,
        origin: PlanOrigin::Given,
    })
}

/// What `temper run --plan` asks of the plan: `--unsigned`, or a signature by a key of
/// `--allowed-signers` (or `allowed_signers_file`).
pub fn trust(unsigned: bool, signers: Option<PathBuf>, dir: &Path) -> anyhow::Result<Trust> {
    match (unsigned, signers) {
        (true, _) => Ok(Trust::Unsigned),
        (false, Some(f)) => Ok(Trust::Signers(f)),
        (false, None) if !dir.join(temper_journal::plan::SIGNATURE).exists() => {
            Err(seal::SealError::NotSigned).with_context(|| format!("the plan in {}", dir.display()))
        }
        (false, None) => anyhow::bail!(
            "the plan in {} is signed: give --allowed-signers FILE (or allowed_signers_file in temper.toml) to check it; nothing was run",
            dir.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_takes_its_terms_from_the_flags_and_refuses_bad_ones() {
        let args = |expires: Option<&str>, targets: &[&str], fleet: Option<&str>| TermsArgs {
            expires: expires.map(String::from),
            targets: targets.iter().map(|t| t.to_string()).collect(),
            for_fleet: fleet.map(String::from),
        };
        let t = args(Some("30d"), &["web1", " web2"], Some("night")).terms().unwrap();
        assert!(t.expires.is_some_and(|e| e > chrono::Utc::now() + chrono::Duration::days(29)));
        assert_eq!((t.targets, t.fleet), (vec!["web1".to_string(), "web2".to_string()], Some("night".to_string())));
        assert!(args(None, &[], None).terms().unwrap().is_empty());
        let e = args(Some("2020-01-01"), &[], None).terms().unwrap_err().to_string();
        assert!(e.contains("is in the past"), "{e}");
        assert!(args(None, &["web1;reboot"], None).terms().is_err());
        assert!(args(None, &[], Some("-night")).terms().is_err());
    }
}

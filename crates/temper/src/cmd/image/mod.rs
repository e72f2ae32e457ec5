//! `temper image export`: a run's final state as a standalone, compressed qcow2 that holds nothing
//! of temper's. The handover (`handover.rs`) settles the rules held for the harness and removes
//! everything temper put on the target, the harness last; virt-sysprep makes the copy ready to
//! be cloned; the host reads it to check; the boot proof (`prove.rs`) boots it without the
//! harness, and a unit that failed at its boot is traced to the kept fix that names it
//! (`units.rs`). Beside it: the manifest (`FILE.json`, `manifest.rs`), the CKL, CKLB and HTML report.
//! A state that has not passed the reboot proof is refused unless `--unproven` is given.
//! `temper image prove IMAGE`: the boot proof alone.
mod evidence;
mod handover;
mod manifest;
mod prove;
mod units;
mod verdicts;

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Subcommand;
use temper_report::{Format, load, render, resolve_run};

use crate::config::Config;
pub use manifest::manifest_path;
use manifest::{ImageManifest, ProofRecord, Reports};

#[derive(Debug, Subcommand)]
pub enum ImageCmd {
    /// Write a run's final state as a standalone qcow2 with nothing of temper's in it, proven to
    /// boot without the harness, with FILE.json, the CKL, CKLB and HTML report beside it.
    #[command(
        after_help = "Examples:\n  temper image export -o hardened.qcow2\n  temper image export 3 -o run3.qcow2 --unproven --keep-harness\n  \
                      temper image export -o hardened.qcow2 --compression zstd"
    )]
    Export(ExportArgs),
    /// Boot an exported image in a throwaway overlay and prove it: multi-user.target, its admin's
    /// sudo, the harness refused. The image is never written.
    Prove {
        image: PathBuf,
        #[command(flatten)]
        proof: ProofArgs,
    },
    /// Judge a disk from outside the guest: a run's final checkpoint, a snapshot, or an image;
    /// against live results, the guest's scan cross-examined (exit 3: it disagrees with its disk).
    #[command(after_help = "Examples:\n  temper image verdict latest\n  temper image verdict --image hardened.qcow2\n  \
                             temper image verdict --snapshot baseline --live results.xml --live-secs 412")]
    Verdict(super::verdict::VerdictArgs),
}

#[derive(Debug, Clone, clap::Args)]
pub struct ExportArgs {
    /// A run id, or `latest`.
    #[arg(default_value = "latest")]
    run: String,
    #[arg(short, long)]
    output: PathBuf,
    /// Export a final state that has not passed the reboot proof.
    #[arg(long)]
    unproven: bool,
    /// Keep the harness (its user, key, sudo rule, the scanner and content): the rules held
    /// for it stay held, and the manifest says it is there.
    #[arg(long)]
    keep_harness: bool,
    /// Do not boot the image to prove it.
    #[arg(long)]
    no_boot_proof: bool,
    /// How the qcow2 is compressed: zlib, which every qcow2 reader reads; zstd, about five times
    /// faster to write, which needs qemu 5.1 or newer to read; or none.
    #[arg(long, value_enum, default_value_t)]
    compression: temper_target::Compression,
    #[command(flatten)]
    proof: ProofArgs,
}

#[derive(Debug, Clone, clap::Args)]
pub struct ProofArgs {
    /// The image's admin the proof logs in as (default: the first of the skill's admin group).
    #[arg(long)]
    admin: Option<String>,
    /// The loopback port for the proof's SSH (default: a free one).
    #[arg(long)]
    proof_port: Option<u16>,
}

pub async fn run(config: &Config, cmd: ImageCmd) -> anyhow::Result<u8> {
    match cmd {
        ImageCmd::Export(args) => export(config, &args).await,
        ImageCmd::Prove { image, proof } => prove_only(config, &image, proof).await,
        ImageCmd::Verdict(args) => super::verdict::run(config, args).await,
    }
}

async fn export(config: &Config, args: &ExportArgs) -> anyhow::Result<u8> {
    let (output, keep_harness) = (args.output.as_path(), args.keep_harness);
    let proof = (!args.no_boot_proof).then_some(&args.proof);
    let store = crate::wiring::store(config).await?;
    let id = resolve_run(&store, &args.run).await?;
    let data = load(&store, id).await?;
    let Some(summary) = data.summary.clone() else { bail!("run {id} has not finished: it has no final state to export") };
    let proven = summary.rebooted == Some(true);
    if !proven && !args.unproven {
        bail!(
            "run {id}'s final state has not passed the reboot proof ({}); pass --unproven to export it anyway",
            temper_journal::reboot_line(summary.rebooted)
        );
    }
    let target = match &data.run.target_config {
        Some(t) => t.clone(),
        None => config.target(None)?,
    };
    let skill = crate::wiring::skill(config, &data.run.skill)?;
    let datastream = config.content_dir.join(&data.run.datastream);
    let content = super::report::content(config, &data.run)
        .with_context(|| format!("the host's content ({}) judges the image: it is needed", datastream.display()))?;
    let content = Some(content);
    let work = output.with_extension("handover.qcow2");
    let ask = handover::Ask { data: &data, target: &target, skill: &skill, content: content.as_ref(), work: &work, keep_harness };
    let done = handover::hand_over(&ask).await;
    let done = match done {
        Ok(d) => d,
        Err(e) => {
            let _ = std::fs::remove_file(&work);
            return Err(e);
        }
    };
    let bytes = temper_target::compress(&done.work, output, args.compression).await;
    let _ = std::fs::remove_file(&done.work);
    let bytes = bytes?;
    let sha256 = temper_target::sha256(output)?;
    let h = &done.record;
    eprintln!(
        "temper: wrote {} ({bytes} bytes, {}, sha256 {sha256}) from snapshot {} of {}: harness {}, {} thing(s) of temper's removed, {} held rule(s) settled",
        output.display(),
        args.compression.said(),
        data.run.checkpoint,
        target.domain,
        if keep_harness { "kept" } else { "removed" },
        h.removed.iter().filter(|r| r.removed).count(),
        h.held.len(),
    );
    if !keep_harness && h.admins.is_empty() {
        eprintln!("temper: warning: the image has no admin in group `{}`: only root can use sudo in it", h.admin_group);
    }

    // The image's evidence: its own disk judged on the host, and the checkpoint's for the score
    // before the handover.
    let judged = verdicts::judge(
        &data,
        content.as_ref().expect("required above"),
        &datastream,
        (done.source_disk.clone(), &data.run.checkpoint),
        output,
        &h.held,
    )
    .await?;
    let evidence = evidence::image_data(&data, &judged.after, &h.held);
    let beside = |ext: &str| output.with_extension(ext);
    for format in [Format::Ckl, Format::Cklb, Format::OscalAr, Format::Hdf, Format::Html] {
        let path = beside(format.extension());
        std::fs::write(&path, render(&evidence, content.as_ref(), format)?).with_context(|| format!("writing {}", path.display()))?;
    }
    let verdict_file = beside("verdict.json");
    std::fs::write(&verdict_file, serde_json::to_string_pretty(&judged.after)? + "\n")
        .with_context(|| format!("writing {}", verdict_file.display()))?;

    let proof = match proof {
        None => None,
        Some(args) => {
            let admin = args.admin.clone().or_else(|| h.admins.first().cloned());
            let Some(admin) = admin else {
                bail!(
                    "the boot proof needs an admin of the image to log in as: the group `{}` has none; pass --admin NAME, or --no-boot-proof",
                    h.admin_group
                )
            };
            let harness = (!keep_harness).then(|| (target.ssh_user.clone(), target.ssh_key.clone()));
            let subject = prove::Subject {
                image: output,
                libvirt_uri: &target.libvirt_uri,
                direct_boot: done.direct_boot.clone(),
                admin,
                harness,
                port: args.proof_port,
                boot_within: first_boot(config),
            };
            let p = prove::prove(subject).await?;
            let kept: Vec<(&str, &str)> = temper_journal::plan::kept(&data.attempts)
                .into_iter()
                .map(|a| (a.spec.rule_id.as_str(), a.spec.fix_script.as_str()))
                .collect();
            let failed_from = units::named_by(&p.failed_units, &kept);
            for (unit, rules) in &failed_from {
                match rules.as_slice() {
                    [] => eprintln!("temper: boot proof: {unit} failed; no kept fix of run {id} names it"),
                    rules => eprintln!("temper: boot proof: {unit} failed; the kept fix of {} names it: start there", rules.join(", ")),
                }
            }
            Some(ProofRecord { passed: p.passed(), failed_from: Some(failed_from), proof: p })
        }
    };
    let name = |p: PathBuf| p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let passed = proof.as_ref().is_none_or(|p| p.passed);
    let manifest = ImageManifest {
        image: name(output.to_path_buf()),
        format: "qcow2",
        compression: args.compression,
        bytes,
        sha256,
        domain: target.domain.clone(),
        libvirt_uri: target.libvirt_uri.clone(),
        snapshot: data.run.checkpoint.clone(),
        source_disk: done.source_disk.display().to_string(),
        direct_boot: done.direct_boot.clone(),
        run: id,
        target: data.run.target.clone(),
        skill: data.run.skill.clone(),
        profile: data.run.profile.clone(),
        datastream: data.run.datastream.clone(),
        score_before: summary.score_before,
        score_after: summary.score_after,
        statuses: summary.statuses.clone(),
        results_before: summary.before.clone(),
        results_after: summary.after.clone(),
        reboot_proven: proven,
        temper_version: env!("CARGO_PKG_VERSION"),
        reports: Reports {
            ckl: name(beside("ckl")),
            cklb: name(beside("cklb")),
            oscal_ar: name(beside(Format::OscalAr.extension())),
            hdf: name(beside(Format::Hdf.extension())),
            html: name(beside("html")),
            verdict: name(verdict_file.clone()),
        },
        handover: done.record,
        offline: judged.record,
        boot_proof: proof,
    };
    let path = manifest_path(output);
    std::fs::write(&path, serde_json::to_string_pretty(&manifest)? + "\n").with_context(|| format!("writing {}", path.display()))?;
    eprintln!(
        "temper: wrote {} and beside it the image's CKL, CKLB, OSCAL assessment results, HDF and HTML report, from its disk's verdict",
        path.display()
    );
    if !passed {
        eprintln!("temper: the boot proof failed: see `boot_proof` in {}", path.display());
        return Ok(1);
    }
    Ok(0)
}

/// The boot proof's bound on a first boot: twice `boot_timeout_secs` (it makes host keys too).
fn first_boot(config: &Config) -> std::time::Duration {
    std::time::Duration::from_secs(2 * config.boot_timeout_secs)
}

/// `temper image prove IMAGE`: the proof alone, with what the image's manifest says of it (its
/// kernel, its admins, its harness).
async fn prove_only(config: &Config, image: &Path, args: ProofArgs) -> anyhow::Result<u8> {
    let path = manifest_path(image);
    let manifest: serde_json::Value = match std::fs::read_to_string(&path) {
        Ok(t) => serde_json::from_str(&t).with_context(|| format!("reading {}", path.display()))?,
        Err(_) => serde_json::Value::Null,
    };
    let direct_boot = serde_json::from_value(manifest["direct_boot"].clone()).ok();
    let admin = args
        .admin
        .clone()
        .or_else(|| manifest["handover"]["admins"][0].as_str().map(String::from))
        .context("no admin to log in as: pass --admin NAME (the image's manifest names none)")?;
    // The harness it removed, with the configured target's key when that is its user's.
    let harness = match (manifest["handover"]["harness"].as_str(), manifest["handover"]["user"].as_str(), config.target(None)) {
        (Some("removed"), Some(user), Ok(t)) if t.ssh_user == user => Some((t.ssh_user, t.ssh_key)),
        _ => None,
    };
    let uri = config.base.libvirt_uri.clone();
    let subject =
        prove::Subject { image, libvirt_uri: &uri, direct_boot, admin, harness, port: args.proof_port, boot_within: first_boot(config) };
    let p = prove::prove(subject).await?;
    println!("{}", serde_json::to_string_pretty(&ProofRecord { passed: p.passed(), failed_from: None, proof: p.clone() })?);
    Ok(if p.passed() { 0 } else { 1 })
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use temper_target::Compression;

    use super::ImageCmd;

    #[derive(Parser)]
    struct Line {
        #[command(subcommand)]
        cmd: ImageCmd,
    }

    fn compression(extra: &[&str]) -> Result<Compression, String> {
        let line = [&["temper", "export", "-o", "hardened.qcow2"][..], extra].concat();
        match Line::try_parse_from(line).map_err(|e| e.to_string())?.cmd {
            ImageCmd::Export(args) => Ok(args.compression),
            other => Err(format!("not an export: {other:?}")),
        }
    }

    #[test]
    fn an_export_is_zlib_compressed_unless_told_otherwise() {
        assert_eq!(compression(&[]), Ok(Compression::Zlib), "every qcow2 reader reads it");
        assert_eq!(compression(&["--compression", "zstd"]), Ok(Compression::Zstd));
        assert_eq!(compression(&["--compression", "none"]), Ok(Compression::None));
        let err = compression(&["--compression", "lz4"]).unwrap_err();
        assert!(err.contains("zlib") && err.contains("zstd") && err.contains("none"), "the choices are named: {err}");
    }
}

//! `temper image export`: a run's final checkpoint as a standalone, compressed qcow2, with a
//! manifest (`FILE.json`) and the run's CKL, CKLB and HTML report beside it. A state that has not
//! passed the reboot proof is refused unless `--unproven` is given.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Subcommand;
use serde::Serialize;
use temper_core::target::Target;
use temper_report::{Format, load, render, resolve_run};
use temper_target::{DirectBoot, LibvirtConfig, LibvirtHypervisor};

use crate::config::Config;
use temper_core::journal::RunId;

#[derive(Debug, Subcommand)]
pub enum ImageCmd {
    /// Write a run's final state as a standalone qcow2, with FILE.json, the CKL, CKLB and HTML
    /// report beside it.
    #[command(after_help = "Examples:\n  temper image export -o hardened.qcow2\n  temper image export 3 -o run3.qcow2 --unproven")]
    Export {
        /// A run id, or `latest`.
        #[arg(default_value = "latest")]
        run: String,
        #[arg(short, long)]
        output: PathBuf,
        /// Export a final state that has not passed the reboot proof.
        #[arg(long)]
        unproven: bool,
    },
    /// Judge a disk from outside the guest: a run's final checkpoint, a snapshot, or an image;
    /// against live results, the guest's scan cross-examined (exit 3: it disagrees with its disk).
    #[command(after_help = "Examples:\n  temper image verdict latest\n  temper image verdict --image hardened.qcow2\n  \
                             temper image verdict --snapshot baseline --live results.xml --live-secs 412")]
    Verdict(super::verdict::VerdictArgs),
}

/// `hardened.qcow2.json`: what the image is, where it came from, and what was proven of it.
#[derive(Debug, Serialize)]
struct Manifest {
    image: String,
    format: &'static str,
    bytes: u64,
    sha256: String,
    domain: String,
    libvirt_uri: String,
    snapshot: String,
    source_disk: String,
    /// Set when the domain boots a host kernel: the image is a root filesystem for it.
    direct_boot: Option<DirectBoot>,
    run: RunId,
    target: String,
    skill: String,
    profile: String,
    datastream: String,
    score_before: Option<f64>,
    score_after: Option<f64>,
    /// Rules by the run's status (fixed, escalated...), and scan results before and after.
    statuses: BTreeMap<String, usize>,
    results_before: BTreeMap<String, usize>,
    results_after: BTreeMap<String, usize>,
    /// The final state survived a cold reboot (false: exported with `--unproven`).
    reboot_proven: bool,
    temper_version: &'static str,
    reports: Reports,
}

#[derive(Debug, Serialize)]
struct Reports {
    ckl: String,
    cklb: String,
    html: String,
}

pub async fn run(config: &Config, cmd: ImageCmd) -> anyhow::Result<u8> {
    let (run, output, unproven) = match cmd {
        ImageCmd::Export { run, output, unproven } => (run, output, unproven),
        ImageCmd::Verdict(args) => return super::verdict::run(config, args).await,
    };
    let store = crate::wiring::store(config).await?;
    let id = resolve_run(&store, &run).await?;
    let data = load(&store, id).await?;
    let Some(summary) = data.summary.clone() else { bail!("run {id} has not finished: it has no final state to export") };
    let proven = summary.rebooted == Some(true);
    if !proven && !unproven {
        bail!(
            "run {id}'s final state has not passed the reboot proof ({}); pass --unproven to export it anyway",
            temper_core::journal::reboot_line(summary.rebooted)
        );
    }
    let target = match &data.run.target_config {
        Some(t) => t.clone(),
        None => config.target(None)?,
    };
    let snapshot = data.run.checkpoint.clone();
    let exported = hypervisor(&target).export_snapshot(&snapshot, &output).await?;
    let sha256 = sha256_of(&output)?;
    eprintln!(
        "temper: wrote {} ({} bytes, sha256 {sha256}) from snapshot {snapshot} of {}",
        output.display(),
        exported.bytes,
        target.domain
    );

    let content = super::report::content(config, &data.run);
    let beside = |ext: &str| output.with_extension(ext);
    for (format, ext) in [(Format::Ckl, "ckl"), (Format::Cklb, "cklb"), (Format::Html, "html")] {
        let path = beside(ext);
        std::fs::write(&path, render(&data, content.as_ref(), format)?).with_context(|| format!("writing {}", path.display()))?;
    }
    let name = |p: PathBuf| p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let manifest = Manifest {
        image: name(output.clone()),
        format: "qcow2",
        bytes: exported.bytes,
        sha256,
        domain: target.domain.clone(),
        libvirt_uri: target.libvirt_uri.clone(),
        snapshot,
        source_disk: exported.source_disk.display().to_string(),
        direct_boot: exported.direct_boot,
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
        reports: Reports { ckl: name(beside("ckl")), cklb: name(beside("cklb")), html: name(beside("html")) },
    };
    let path = manifest_path(&output);
    std::fs::write(&path, serde_json::to_string_pretty(&manifest)? + "\n").with_context(|| format!("writing {}", path.display()))?;
    eprintln!("temper: wrote {} and the run's CKL, CKLB and HTML report beside it", path.display());
    Ok(0)
}

fn hypervisor(t: &Target) -> LibvirtHypervisor {
    LibvirtHypervisor::new(LibvirtConfig::for_target(t))
}

/// `hardened.qcow2` → `hardened.qcow2.json`.
pub fn manifest_path(image: &Path) -> PathBuf {
    let mut s = image.as_os_str().to_owned();
    s.push(".json");
    PathBuf::from(s)
}

fn sha256_of(path: &Path) -> anyhow::Result<String> {
    temper_core::plan::sha256_file(path).with_context(|| format!("reading {}", path.display()))
}

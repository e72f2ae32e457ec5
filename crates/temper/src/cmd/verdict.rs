//! `temper image verdict`: a disk judged from outside the guest (`temper-offline`): a run's final
//! checkpoint, a snapshot of a target's domain, or an image file. Against live results (the
//! run's, or `--live RESULTS.xml`), the guest's scan is cross-examined: a rule the guest passes
//! and its disk fails is a finding, and the exit code says so.
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;
use serde::Serialize;
use temper_journal::offline::{CrossExamination, OfflineVerdict};
use temper_journal::prelude::*;
use temper_journal::{EventData, ScanKind, ScanResult};
use temper_offline::{DiskSource, Judge, Judged};
use temper_report::{load, resolve_run};

use crate::cli::TargetArg;
use crate::config::Config;
use crate::wiring;

/// The exit code when the guest's scan disagrees with its disk (`temper run` ends so too).
pub const EXIT_GUEST_DISAGREES: u8 = 3;

#[derive(Debug, Clone, Args)]
pub struct VerdictArgs {
    /// A run id, or `latest`: its final checkpoint, judged with its profile against its final
    /// scan. Not with --image or --snapshot, which judge with --profile or the skill's.
    pub run: Option<String>,
    /// An image file (qcow2 without a backing file, or raw), such as `temper image export` writes.
    #[arg(long, conflicts_with_all = ["run", "snapshot"])]
    pub image: Option<PathBuf>,
    /// An internal snapshot of the target's domain.
    #[arg(long, conflicts_with = "run")]
    pub snapshot: Option<String>,
    #[command(flatten)]
    pub target: TargetArg,
    /// The profile (with --image or --snapshot; default: the target's, else its skill's).
    #[arg(long)]
    pub profile: Option<String>,
    #[arg(long)]
    pub tailoring_file: Option<PathBuf>,
    /// The live results of the same state (XCCDF results or ARF, as `oscap xccdf eval
    /// --results` writes them), to cross-examine.
    #[arg(long)]
    pub live: Option<PathBuf>,
    /// The live scan's time in seconds, for the figure "offline time against the live scan's".
    #[arg(long)]
    pub live_secs: Option<f64>,
    /// Each rule's verdict, with the figures, as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Also write each rule's verdict (JSON) to this file.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Where the private working folder goes (it holds a copy of the disk's files).
    #[arg(long)]
    pub scratch: Option<PathBuf>,
}

/// What `--json` prints.
#[derive(Debug, Serialize)]
struct Printed<'a> {
    judged: &'a Judged,
    #[serde(skip_serializing_if = "Option::is_none")]
    cross_examination: Option<&'a CrossExamination>,
    #[serde(skip_serializing_if = "Option::is_none")]
    live_secs: Option<f64>,
}

pub async fn run(config: &Config, args: VerdictArgs) -> anyhow::Result<u8> {
    let by_run = args.image.is_none() && args.snapshot.is_none();
    let (source, benchmark, skill, mut live, mut live_secs) = if by_run {
        let store = wiring::store(config).await?;
        let id = resolve_run(&store, args.run.as_deref().unwrap_or("latest")).await?;
        let data = load(&store, id).await?;
        let target = match &data.run.target_config {
            Some(t) => t.clone(),
            None => config.target(None)?,
        };
        let skill = wiring::skill(config, &data.run.skill)?;
        let ds = config.content_dir.join(&data.run.datastream);
        let benchmark = temper_journal::controls::RunControls::run_content(&data.run, &ds).with_context(|| ds.display().to_string())?;
        let disk = wiring::hypervisor(&target).disk_file().await?;
        let live: HashMap<String, ScanResult> =
            data.rules.iter().map(|r| (r.rule_id.clone(), r.final_result.unwrap_or(r.initial_result))).collect();
        let events = store.events(id, None).await?;
        let secs = events.iter().rev().find_map(|e| match &e.data {
            EventData::Scan { kind: ScanKind::Final, secs, .. } => Some(*secs),
            _ => None,
        });
        (DiskSource::Snapshot { disk, name: data.run.checkpoint.clone() }, benchmark, skill, Some(live), secs)
    } else {
        let target = config.target(args.target.name.as_deref())?;
        let skill = wiring::skill(config, &target.skill)?;
        let profile = args.profile.clone().or(target.profile.clone()).unwrap_or(skill.manifest.profile.clone());
        let tailoring = args.tailoring_file.as_deref().or(config.tailoring_file.as_deref());
        let (controls, profile) = crate::controls::read(&skill, &profile, tailoring, None)?;
        let ds = wiring::host_datastream(config, &skill);
        let benchmark = controls.read_content(&profile, &ds).with_context(|| ds.display().to_string())?;
        let source = match (&args.image, &args.snapshot) {
            (Some(image), _) => DiskSource::Image(image.clone()),
            (None, Some(name)) => DiskSource::Snapshot { disk: wiring::hypervisor(&target).disk_file().await?, name: name.clone() },
            (None, None) => bail!("give --image FILE or --snapshot NAME, or a run"),
        };
        (source, benchmark, skill, None, None)
    };
    if let Some(path) = &args.live {
        let results = temper_scap::parse_results(path).with_context(|| path.display().to_string())?;
        live = Some(results.rule_results.iter().map(|r| (r.idref.clone(), ScanResult::from(r.result))).collect());
    }
    live_secs = args.live_secs.or(live_secs);

    let ds = wiring::host_datastream(config, &skill);
    let content = temper_scap::oval::OvalContent::read(&ds).with_context(|| format!("indexing {}", ds.display()))?;
    let judge = Judge { content: &content, benchmark: &benchmark, scratch: args.scratch.clone() };
    let mut judged = judge.judge(&source).await.with_context(|| format!("judging {source}"))?;
    let cross = live.as_ref().map(|l| CrossExamination::of(&judged.judgement, l));
    if let Some(l) = &live {
        judged.judgement = judged.judgement.clone().with_live(l);
    }
    if let Some(path) = &args.output {
        std::fs::write(path, serde_json::to_string_pretty(&judged.judgement)? + "\n")
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("temper: wrote {}", path.display());
    }
    if args.json {
        super::print_json(&Printed { judged: &judged, cross_examination: cross.as_ref(), live_secs })?;
    } else {
        print!("{}", summary(&judged, cross.as_ref(), live_secs));
    }
    Ok(if cross.as_ref().is_some_and(|x| !x.lies.is_empty()) { EXIT_GUEST_DISAGREES } else { 0 })
}

/// The figures, in a few lines.
fn summary(judged: &Judged, cross: Option<&CrossExamination>, live_secs: Option<f64>) -> String {
    let j = &judged.judgement;
    let t = &j.times;
    let mut by: BTreeMap<String, usize> = BTreeMap::new();
    for v in &j.verdicts {
        let key = match &v.verdict {
            OfflineVerdict::Offline { result, .. } => format!("offline {result}"),
            OfflineVerdict::LiveOnly { needs, .. } => {
                format!("live only ({})", needs.iter().map(|n| n.as_str()).collect::<Vec<_>>().join("+"))
            }
            OfflineVerdict::NotJudged { why, .. } => format!("not judged ({why})"),
        };
        *by.entry(key).or_default() += 1;
    }
    let (offline, live_only, not) = j.counts();
    let mut s = format!(
        "{}: judged from outside the guest in {:.1} s (disk read and copied {:.1} s, of which qemu-img {:.1} s; scan {:.1} s)\n",
        j.source, t.total_secs, t.extract_secs, judged.raw_secs, t.scan_secs
    );
    s += &format!(
        "  copy: {} entries, {} bytes, {} device nodes/FIFOs/sockets left out, {} entries skipped; {} packages in dpkg's status\n",
        judged.tree.entries,
        judged.tree.bytes,
        judged.tree.special,
        judged.tree.skipped.len(),
        judged.packages
    );
    s += &format!("  {} rules: {offline} judged offline, {live_only} live only, {not} not judged\n", j.verdicts.len());
    for (k, n) in &by {
        s += &format!("    {n:>4}  {k}\n");
    }
    let tc = &judged.tests;
    s += &format!(
        "  tests: {} by the host's oscap over the disk, {} by temper's probes, {} live only, {} not implemented\n",
        tc.disk, tc.host, tc.live, tc.unsupported
    );
    if let Some(x) = cross {
        s += &format!(
            "  against the live scan: {} rules judged live (pass or fail), {} of them judged offline ({:.1}%), {} agree, {} disagree\n",
            x.live_judged,
            x.both,
            100.0 * x.coverage(),
            x.agree,
            x.disagreements()
        );
        for d in &x.lies {
            s += &format!("  FINDING: the guest's scan disagrees with its disk: {} live {}, disk {}\n", d.rule, d.live, d.offline);
        }
        for d in &x.differ {
            s += &format!("  differs: {} live {}, disk {}\n", d.rule, d.live, d.offline);
        }
    }
    if let Some(l) = live_secs.filter(|l| *l > 0.0) {
        s += &format!("  time against the live scan's {l:.1} s: {:.3}x\n", t.total_secs / l);
    }
    s
}

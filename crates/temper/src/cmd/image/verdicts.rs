//! Where the handover meets the verdict from outside the guest (`temper-offline`): the run's
//! final checkpoint and the exported image are each judged on the host, read-only, with the
//! host's content; their scores are the image's score before and after the handover, and the
//! image's judgement is its evidence (`evidence.rs`).
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Serialize;
use temper_core::handover::HeldRule;
use temper_journal::ScanResult;
use temper_journal::offline::{DiskJudgement, OfflineVerdict};
use temper_offline::{DiskSource, Judge};
use temper_report::RunData;
use temper_scap::Benchmark;

use super::evidence;

/// Both judgements, and what the manifest says of them.
pub struct ImageVerdicts {
    pub after: DiskJudgement,
    pub record: OfflineRecord,
}

/// The manifest's `offline`.
#[derive(Debug, Serialize)]
pub struct OfflineRecord {
    /// The run's final checkpoint, before the handover.
    pub before: DiskRecord,
    /// The exported image.
    pub after: DiskRecord,
    /// Each held rule's verdict on the exported image.
    pub held: Vec<HeldVerdict>,
}

#[derive(Debug, Serialize)]
pub struct DiskRecord {
    pub source: String,
    /// The XCCDF default score: each rule's result from the disk, else its last live result.
    pub score: Option<f64>,
    pub judged_offline: usize,
    pub live_only: usize,
    pub not_judged: usize,
    /// Of those judged offline.
    pub pass: usize,
    pub fail: usize,
    pub secs: f64,
}

#[derive(Debug, Serialize)]
pub struct HeldVerdict {
    pub rule_id: String,
    /// What the handover did.
    pub settle: &'static str,
    pub verdict: Option<OfflineVerdict>,
}

/// Judges the checkpoint (`snapshot` of `disk`) and the image on the host.
pub async fn judge(
    data: &RunData,
    content: &Benchmark,
    datastream: &Path,
    (disk, snapshot): (PathBuf, &str),
    image: &Path,
    held: &[HeldRule],
) -> anyhow::Result<ImageVerdicts> {
    let oval = temper_scap::oval::OvalContent::read(datastream).with_context(|| format!("indexing {}", datastream.display()))?;
    let judge = Judge { content: &oval, benchmark: content, scratch: image.parent().map(Path::to_path_buf) };
    let live: HashMap<String, ScanResult> =
        data.rules.iter().map(|r| (r.rule_id.clone(), r.final_result.unwrap_or(r.initial_result))).collect();
    let mut each = Vec::new();
    for source in [DiskSource::Snapshot { disk, name: snapshot.to_string() }, DiskSource::Image(image.to_path_buf())] {
        let judged = judge.judge(&source).await.with_context(|| format!("judging {source} from outside the guest"))?;
        let j = judged.judgement.with_live(&live);
        let record = disk_record(&source.to_string(), &j, &live, content);
        eprintln!(
            "temper: {} judged on the host in {:.1} s: {} rules offline ({} pass, {} fail), {} live only, {} not judged; score {}",
            record.source,
            record.secs,
            record.judged_offline,
            record.pass,
            record.fail,
            record.live_only,
            record.not_judged,
            record.score.map_or("none".into(), |s| format!("{s:.1}"))
        );
        each.push((j, record));
    }
    let (after, after_record) = each.pop().expect("two judged");
    let (_, before_record) = each.pop().expect("two judged");
    let verdicts: HashMap<&str, &OfflineVerdict> = after.verdicts.iter().map(|v| (v.rule.as_str(), &v.verdict)).collect();
    let held = held
        .iter()
        .map(|h| HeldVerdict {
            rule_id: h.rule_id.clone(),
            settle: h.settle.label(),
            verdict: verdicts.get(h.rule_id.as_str()).map(|v| (*v).clone()),
        })
        .collect();
    Ok(ImageVerdicts { record: OfflineRecord { before: before_record, after: after_record, held }, after })
}

fn disk_record(source: &str, j: &DiskJudgement, live: &HashMap<String, ScanResult>, content: &Benchmark) -> DiskRecord {
    let (judged_offline, live_only, not_judged) = j.counts();
    let n = |want: ScanResult| j.verdicts.iter().filter(|v| v.verdict.offline() == Some(want)).count();
    DiskRecord {
        source: source.to_string(),
        score: evidence::score(j, live, content),
        judged_offline,
        live_only,
        not_judged,
        pass: n(ScanResult::Pass),
        fail: n(ScanResult::Fail),
        secs: j.times.total_secs,
    }
}

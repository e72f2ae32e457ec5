//! The handover of `temper image export`: the held rules settled (the skill's `[[held]]`, the
//! run's statuses and waivers), the script run on the target's domain from the run's final
//! checkpoint (temper-target), the copy made ready to be cloned (virt-sysprep), the skill's
//! `[[last]]` fixes on it (an AIDE database), then the host's own read of it: nothing of
//! temper's may be left, and nothing of one machine's.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use temper_core::handover::{self, Expect, Handover, ImageView, Removal, leftovers, not_clone_ready};
use temper_core::skill::Skill;
use temper_journal::target::Target;
use temper_report::RunData;
use temper_scap::Benchmark;
use temper_target::{DirectBoot, DiskFiles, HandoverJob, LibvirtConfig, LibvirtHypervisor, SshConfig};

use super::manifest::{HandoverRecord, HarnessInImage, Operation};

/// The handed-over disk (uncompressed, ready to clone) and what the handover did.
pub struct HandedOverDisk {
    pub work: PathBuf,
    pub record: HandoverRecord,
    pub source_disk: PathBuf,
    pub direct_boot: Option<DirectBoot>,
}

/// What the export asks of the handover.
pub struct Ask<'a> {
    pub data: &'a RunData,
    pub target: &'a Target,
    pub skill: &'a Skill,
    pub content: Option<&'a Benchmark>,
    /// Where the uncompressed copy goes.
    pub work: &'a Path,
    pub keep_harness: bool,
}

pub async fn hand_over(ask: &Ask<'_>) -> anyhow::Result<HandedOverDisk> {
    let (data, target) = (ask.data, ask.target);
    let hv = LibvirtHypervisor::new(LibvirtConfig::for_target(target));
    let controls = temper_journal::controls::RunControls::of(&data.run);
    let day = run_day(&data.run.started_at);
    let (mut held, steps) = handover::held_rules(ask.skill, &data.rules, &controls.waivers, day, ask.content, ask.keep_harness);
    let (last, last_steps) = handover::last_rules(ask.skill, &data.rules, ask.content, ask.keep_harness);
    held.extend(last);
    let public_key = public_key(&target.ssh_key);
    let footprint = &target.footprint;
    let admin_group = ask.skill.manifest.admin_group.clone();
    let mut secs = BTreeMap::new();
    let checkpoint = data.run.checkpoint.clone();
    // Kept or not, the disk is copied from a clean power-off: a live snapshot's ext4 still needs
    // its journal replayed, and an image should leave as a shut-down machine does.
    let (report, source_disk, direct_boot) = {
        let (script, what) = match ask.keep_harness {
            true => (handover::render_kept(&admin_group)?, "the harness kept, a clean power-off".to_string()),
            false => (
                handover::render(&Handover {
                    user: &target.ssh_user,
                    public_key: public_key.as_deref(),
                    footprint,
                    admin_group: &admin_group,
                    steps: &steps,
                })?,
                format!("the handover: {} held fix(es), then the harness removes itself", steps.len()),
            ),
        };
        eprintln!("temper: from snapshot {checkpoint} of {}: {what}", target.domain);
        let job = HandoverJob {
            checkpoint: &checkpoint,
            script: &script,
            ssh: SshConfig::for_target(target),
            out: ask.work,
            script_timeout: Duration::from_secs(1800),
            off_within: Duration::from_secs(180),
        };
        let done = hv.hand_over(&job).await?;
        secs.insert("script", done.script_secs);
        secs.insert("power_off", done.power_off_secs);
        secs.insert("copy", done.copy_secs);
        (handover::parse(&done.output.stdout_str()), done.source_disk, done.direct_boot)
    };

    let scratch = ask.work.with_extension("raw");
    let started = Instant::now();
    let (ssh_unit, logs) = {
        let files = DiskFiles::open(ask.work, &scratch).await?;
        let unit = ["/usr/lib/systemd/system/ssh.service", "/lib/systemd/system/ssh.service"].iter().any(|u| files.exists(u));
        (unit, temper_target::rsyslog_logs(&files))
    };
    let scratch_dir = ask.work.parent().unwrap_or(Path::new("."));
    temper_target::sysprep(ask.work, ssh_unit, &logs, scratch_dir).await.context("virt-sysprep on the handed-over copy")?;
    secs.insert("sysprep", started.elapsed().as_secs_f64());

    // Last: what records the image itself, on the image as it now is.
    let started = Instant::now();
    let last = temper_target::run_last(ask.work, &last_steps, scratch_dir).await;
    for l in &last {
        let what = l.rules.iter().map(|r| temper_scap::datastream::short_rule_id(r)).collect::<Vec<_>>().join(", ");
        match &l.said {
            None => eprintln!("temper: last: {what} in {:.1} s", l.secs),
            Some(said) => eprintln!("temper: warning: last: {what} FAILED after {:.1} s; it stays failing in the image: {said}", l.secs),
        }
    }
    if !last.is_empty() {
        secs.insert("last", started.elapsed().as_secs_f64());
    }

    let started = Instant::now();
    let files = DiskFiles::open(ask.work, &scratch).await?;
    let deps: Vec<String> = report.removals.iter().filter(|r| r.item == handover::Item::Dependency).map(|r| r.what.clone()).collect();
    let expect = Expect { user: &target.ssh_user, public_key: public_key.as_deref(), footprint, dependencies: &deps };
    let mut kept = Vec::new();
    if ask.keep_harness {
        kept = leftovers(&files, &expect).into_iter().map(|l| format!("{} {} ({})", l.item.as_str(), l.what, l.found_in)).collect();
    } else {
        let left = leftovers(&files, &expect);
        if !left.is_empty() {
            let lines: Vec<String> = left.iter().map(|l| format!("  {} {} in {}", l.item.as_str(), l.what, l.found_in)).collect();
            bail!("the handed-over image still holds temper's:\n{}", lines.join("\n"));
        }
    }
    let unready = not_clone_ready(&files);
    if !unready.is_empty() {
        bail!("the image is not ready to be cloned after virt-sysprep:\n  {}", unready.join("\n  "));
    }
    let admins = match report.admins.is_empty() {
        false => report.admins.clone(),
        true => group_members(&files, &admin_group),
    };
    drop(files);
    secs.insert("check", started.elapsed().as_secs_f64());

    let mut removed: Vec<Removal> = report.removals.clone();
    removed.sort();
    let record = HandoverRecord {
        harness: if ask.keep_harness { HarnessInImage::Kept } else { HarnessInImage::Removed },
        user: target.ssh_user.clone(),
        footprint: footprint.clone(),
        removed,
        kept,
        held,
        admin_group,
        admins,
        left: report.left.clone(),
        last,
        clone_prep: Operation::all(temper_target::SYSPREP_APPLIED),
        clone_prep_left_out: Operation::all(temper_target::SYSPREP_LEFT_OUT),
        secs,
    };
    Ok(HandedOverDisk { work: ask.work.to_path_buf(), record, source_disk, direct_boot })
}

/// The members of `group` in the image's /etc/group.
pub fn group_members(files: &dyn ImageView, group: &str) -> Vec<String> {
    let text = files.read("/etc/group").map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
    text.lines()
        .find(|l| l.split(':').next() == Some(group))
        .and_then(|l| l.rsplit(':').next())
        .map(|m| m.split(',').filter(|u| !u.is_empty()).map(String::from).collect())
        .unwrap_or_default()
}

/// `KEY.pub`'s `TYPE BASE64`, when it is there.
fn public_key(private: &Path) -> Option<String> {
    let mut p = private.as_os_str().to_owned();
    p.push(".pub");
    let text = std::fs::read_to_string(PathBuf::from(p)).ok()?;
    let parts: Vec<&str> = text.split_whitespace().take(2).collect();
    (parts.len() == 2).then(|| parts.join(" "))
}

/// The day the run started: its waivers are judged on it, as its reports judge them.
fn run_day(started_at: &str) -> chrono::NaiveDate {
    chrono::DateTime::parse_from_rfc3339(started_at).map(|t| t.date_naive()).unwrap_or_else(|_| chrono::Local::now().date_naive())
}

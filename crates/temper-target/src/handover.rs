//! The handover on a libvirt domain (`temper image export`): the domain goes back to the run's
//! final checkpoint; the handover script (`temper_core::handover::script`) runs there over one
//! SSH connection, as root through the harness's sudo, and powers the guest off; the disk as it
//! is then is copied out; and the domain goes back to the checkpoint again. The checkpoint is
//! never changed, so a handover that stops halfway leaves the target as it found it.
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use temper_core::ports::{Exec, ExecOutput, Guest, Hypervisor, PortError, SSH_READY};

use crate::image::{DirectBoot, ImageError, direct_boot, disk_source};
use crate::{LibvirtHypervisor, SshConfig, SshGuest};

#[derive(Debug, thiserror::Error)]
pub enum HandoverError {
    #[error("libvirt: {0}")]
    Libvirt(String),
    #[error("the checkpoint's guest over SSH: {0}")]
    Ssh(PortError),
    #[error("the handover stopped ({why}); nothing was exported. What it printed last:\n{tail}")]
    Stopped { why: String, tail: String },
    #[error("the guest did not power off within {0:?} after the handover")]
    NoPowerOff(Duration),
    #[error(transparent)]
    Image(#[from] ImageError),
    #[error("{first}; and going back to snapshot `{checkpoint}` failed: {revert}")]
    NotRestored { first: Box<HandoverError>, checkpoint: String, revert: String },
}

/// One handover.
#[derive(Debug, Clone)]
pub struct HandoverJob<'a> {
    /// The run's final checkpoint: the handover starts there, and the domain ends there.
    pub checkpoint: &'a str,
    pub script: &'a str,
    /// The harness's way in.
    pub ssh: SshConfig,
    /// Where the handed-over disk is written (qcow2, uncompressed).
    pub out: &'a Path,
    pub script_timeout: Duration,
    /// How long the guest may take to power off once the script is done.
    pub off_within: Duration,
}

/// What the handover did and where its disk went.
#[derive(Debug, Clone)]
pub struct HandedOver {
    /// The script's exit, stdout (its `temper-handover` lines) and stderr.
    pub output: ExecOutput,
    pub script_secs: f64,
    pub power_off_secs: f64,
    pub copy_secs: f64,
    /// The domain's disk file.
    pub source_disk: PathBuf,
    pub direct_boot: Option<DirectBoot>,
}

impl LibvirtHypervisor {
    /// Runs the handover; the domain is back at `job.checkpoint` afterwards, whatever happened.
    pub async fn hand_over(&self, job: &HandoverJob<'_>) -> Result<HandedOver, HandoverError> {
        let done = self.hand_over_once(job).await;
        let back = self.snapshot_revert(job.checkpoint).await;
        match (done, back) {
            (Ok(h), Ok(())) => Ok(h),
            (Err(e), Ok(())) => Err(e),
            (Ok(_), Err(revert)) => Err(HandoverError::Libvirt(format!("going back to snapshot `{}`: {revert}", job.checkpoint))),
            (Err(first), Err(revert)) => {
                Err(HandoverError::NotRestored { first: Box::new(first), checkpoint: job.checkpoint.into(), revert: revert.to_string() })
            }
        }
    }

    async fn hand_over_once(&self, job: &HandoverJob<'_>) -> Result<HandedOver, HandoverError> {
        let lv = |e: PortError| HandoverError::Libvirt(e.to_string());
        self.snapshot_revert(job.checkpoint).await.map_err(lv)?;
        let guest = SshGuest::new(job.ssh.clone()).map_err(HandoverError::Ssh)?;
        guest.reconnect(SSH_READY).await.map_err(HandoverError::Ssh)?;
        let started = Instant::now();
        let ran = guest.exec(Exec::script(job.script).timeout(job.script_timeout).max_output(4 << 20)).await;
        let script_secs = started.elapsed().as_secs_f64();
        let output = match ran {
            Ok(o) => o,
            // Its power-off waits two seconds past its exit: a session that dropped before the
            // exit came back says nothing of how far it got.
            Err(PortError::Dropped(why)) => {
                return Err(HandoverError::Stopped { why: format!("the session dropped: {why}"), tail: String::new() });
            }
            Err(e) => return Err(HandoverError::Ssh(e)),
        };
        let said = temper_core::handover::parse(&output.stdout_str());
        if !output.success() || !said.done {
            let why = said.failed.clone().unwrap_or_else(|| format!("exit {:?} before its end", output.exit_code));
            let tail = tail(&format!("{}{}", output.stdout_str(), output.stderr_str()), 40);
            // It did not reach its power-off: the guest still runs, and the revert takes it back.
            return Err(HandoverError::Stopped { why, tail });
        }
        drop(guest);
        let started = Instant::now();
        while self.is_running().await.map_err(lv)? {
            if started.elapsed() > job.off_within {
                return Err(HandoverError::NoPowerOff(job.off_within));
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        let power_off_secs = started.elapsed().as_secs_f64();
        let xml =
            self.with_domain("xml", |dom| dom.xml_desc(0).map_err(|e| PortError::Hypervisor(e.message().into()))).await.map_err(lv)?;
        let disk = disk_source(&xml).ok_or_else(|| ImageError::NoDisk(self.config().domain.clone()))?;
        let started = Instant::now();
        copy_current(Path::new(&disk), job.out).await?;
        Ok(HandedOver {
            output,
            script_secs,
            power_off_secs,
            copy_secs: started.elapsed().as_secs_f64(),
            source_disk: disk.into(),
            direct_boot: direct_boot(&xml),
        })
    }
}

/// The disk's current state (not a snapshot's) as a new qcow2 without snapshots, uncompressed.
async fn copy_current(disk: &Path, out: &Path) -> Result<(), ImageError> {
    let result = tokio::process::Command::new("qemu-img")
        .args(["convert", "-q", "-O", "qcow2"])
        .arg(disk)
        .arg(out)
        .stdin(Stdio::null())
        .output()
        .await
        .map_err(|source| ImageError::Io { path: "qemu-img".into(), source })?;
    if !result.status.success() {
        let _ = std::fs::remove_file(out);
        return Err(ImageError::QemuImg(String::from_utf8_lossy(&result.stderr).trim().to_string()));
    }
    Ok(())
}

/// The last `n` lines of `text`.
fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

//! The loop's [`OfflineJudge`]: a snapshot of the domain's disk judged on the host
//! (`temper-offline`). The snapshot's clusters are the snapshot's own while it exists (qemu
//! copies on write around them), so `qemu-img -U` reads it while the domain runs.
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use temper_core::ports::{OfflineJudge, PortError};
use temper_journal::offline::{DiskJudgement, JudgeError};
use temper_offline::{DiskSource, Judge};
use temper_scap::Benchmark;
use temper_scap::oval::OvalEngine;

use crate::LibvirtHypervisor;
use crate::image::{ImageError, disk_source, is_local};

impl LibvirtHypervisor {
    /// The domain's disk file (its first file-backed disk), on this host.
    pub async fn disk_file(&self) -> Result<PathBuf, ImageError> {
        let cfg = self.config().clone();
        if !is_local(&cfg.uri) {
            return Err(ImageError::Remote { uri: cfg.uri });
        }
        let xml = self
            .with_domain("disk", |dom| dom.xml_desc(0).map_err(|e| PortError::Hypervisor(e.message().to_string())))
            .await
            .map_err(|e| ImageError::Libvirt(e.to_string()))?;
        disk_source(&xml).map(PathBuf::from).ok_or(ImageError::NoDisk(cfg.domain))
    }
}

/// Judges the domain's snapshots with the host's content and the run's profile.
pub struct DiskJudge {
    pub hv: LibvirtHypervisor,
    pub engine: Arc<OvalEngine>,
    pub benchmark: Arc<Benchmark>,
    /// Where the private working folder goes (`$TMPDIR` when `None`).
    pub scratch: Option<PathBuf>,
}

#[async_trait]
impl OfflineJudge for DiskJudge {
    async fn judge_snapshot(&self, name: &str) -> Result<DiskJudgement, JudgeError> {
        let disk = self.hv.disk_file().await.map_err(|e| JudgeError::host(e.to_string()))?;
        let judge = Judge { content: self.engine.content(), benchmark: &self.benchmark, scratch: self.scratch.clone() };
        let source = DiskSource::Snapshot { disk, name: name.to_string() };
        let judged = judge.judge(&source).await.map_err(|e| JudgeError { cause: e.cause(), reason: format!("judging {source}: {e}") })?;
        let mut j = judged.judgement;
        j.source = format!("snapshot {name} of domain {}", self.hv.config().domain);
        Ok(j)
    }
}

//! The sim's judge of the disk from outside the guest: a judgement the real one made of the test
//! VM's baseline image (`tests/data/standard-disk.json`: `temper-offline`'s `tests/image.rs` with
//! `TEMPER_OFFLINE_RECORD`), replayed, as the sim guest replays recorded oscap results.
use std::path::Path;
use std::sync::Mutex;

use async_trait::async_trait;
use temper_core::ports::OfflineJudge;
use temper_journal::offline::{DiskJudgement, JudgeError, JudgeFailure};

pub struct RecordedJudge {
    judgement: Result<DiskJudgement, JudgeError>,
    /// The snapshots it was asked to judge.
    pub asked: Mutex<Vec<String>>,
}

impl RecordedJudge {
    /// The baseline disk, judged with `standard`.
    pub fn baseline() -> Self {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/standard-disk.json");
        let judgement = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        Self { judgement: Ok(judgement), asked: Mutex::new(Vec::new()) }
    }

    /// A judge that fails on `cause`'s side with the real one's words: the host's tool missing,
    /// or a disk with no root file system.
    pub fn failing(cause: JudgeFailure) -> Self {
        let reason = match cause {
            JudgeFailure::Host => "`qemu-img` could not be run: No such file or directory (os error 2) (is it installed on the host?)",
            JudgeFailure::Disk => {
                "the disk has no ext2/3/4 file system with /etc/os-release (partitions looked at: the whole disk: no /etc/os-release)"
            }
        };
        Self { judgement: Err(JudgeError { cause, reason: reason.into() }), asked: Mutex::new(Vec::new()) }
    }
}

#[async_trait]
impl OfflineJudge for RecordedJudge {
    async fn judge_snapshot(&self, name: &str) -> Result<DiskJudgement, JudgeError> {
        self.asked.lock().unwrap().push(name.to_string());
        self.judgement.clone()
    }
}

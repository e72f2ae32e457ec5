//! The sim's judge of the disk from outside the guest: a judgement the real one made of the test
//! VM's baseline image (`tests/data/standard-disk.json`: `temper-offline`'s `tests/image.rs` with
//! `TEMPER_OFFLINE_RECORD`), replayed, as the sim guest replays recorded oscap results.
use std::path::Path;
use std::sync::Mutex;

use async_trait::async_trait;
use temper_core::journal::offline::DiskJudgement;
use temper_core::ports::{OfflineJudge, PortError, PortResult};

pub struct RecordedJudge {
    judgement: Option<DiskJudgement>,
    /// The snapshots it was asked to judge.
    pub asked: Mutex<Vec<String>>,
}

impl RecordedJudge {
    /// The baseline disk, judged with `standard`.
    pub fn baseline() -> Self {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/standard-disk.json");
        let judgement = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        Self { judgement: Some(judgement), asked: Mutex::new(Vec::new()) }
    }

    /// A judge whose disk never reads.
    pub fn broken() -> Self {
        Self { judgement: None, asked: Mutex::new(Vec::new()) }
    }
}

#[async_trait]
impl OfflineJudge for RecordedJudge {
    async fn judge_snapshot(&self, name: &str) -> PortResult<DiskJudgement> {
        self.asked.lock().unwrap().push(name.to_string());
        self.judgement.clone().ok_or_else(|| PortError::Other("qemu-img: Could not open the disk: No such file or directory".into()))
    }
}

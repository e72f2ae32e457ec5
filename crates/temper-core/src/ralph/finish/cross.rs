//! The guest cross-examined: at the end of a run, the final state's disk is judged from outside
//! the guest (the [`OfflineJudge`] port) and the guest's final scan is held against it. A rule the
//! guest reports passing while its disk fails it is a finding, and so is a disk that does not
//! read (the guest controls it): the run ends with [`super::EXIT_GUEST_DISAGREES`]
//! ([`CrossExam::is_finding`]).
//!
//! The disk judged is the running guest's after a `sync`, through a snapshot of its own, dropped
//! once read: the final checkpoint's disk can lack what the guest still held in its page cache
//! when the checkpoint was taken. A guest that will not sync is read as its disk stands.
use std::collections::HashMap;
use std::time::Duration;

use super::Finisher;
use crate::ports::{Exec, OfflineJudge};
use crate::ralph::error::LoopResult;
use crate::ralph::state::RunState;
use crate::scan::Scan;
use temper_journal::offline::{CrossExam, CrossExamination, DiskJudgement, JudgeError};
use temper_journal::{EventData, ScanResult};

/// How long the guest's `sync` may take.
const SYNC_TIMEOUT: Duration = Duration::from_secs(120);

impl Finisher<'_> {
    /// Judges the final state's disk from outside and holds `scan` against it; records the
    /// verdicts and the event. `None` when the run has no judge.
    pub(super) async fn cross_examine(&self, state: &RunState, scan: &Scan) -> LoopResult<Option<CrossExam>> {
        let Some(judge) = self.offline else { return Ok(None) };
        let exam = match self.judge_now(judge, state, scan).await {
            Ok((exam, judged)) => {
                self.books.journal().set_offline_verdicts(&judged.verdicts).await?;
                CrossExam::Done(Box::new(exam))
            }
            Err(e) => {
                tracing::warn!(reason = %e.reason, cause = %e.cause, "the disk could not be judged from outside the guest");
                CrossExam::Failed { reason: e.reason, cause: e.cause }
            }
        };
        self.books.note(None, EventData::CrossExamined(Box::new(exam.clone()))).await?;
        Ok(Some(exam))
    }

    /// The cross-examination, and the verdicts with their last live results.
    async fn judge_now(
        &self,
        judge: &dyn OfflineJudge,
        state: &RunState,
        scan: &Scan,
    ) -> Result<(CrossExamination, DiskJudgement), JudgeError> {
        let unflushed = match self.machine.guest().exec(Exec::new(["sync"]).timeout(SYNC_TIMEOUT)).await {
            Ok(out) if out.success() => None,
            Ok(out) => Some(format!("sync in the guest exited {:?}: {}", out.exit_code, out.stderr_str())),
            Err(e) => Some(format!("sync in the guest: {e}")),
        };
        let name = format!("{}disk", state.prefix());
        self.machine.take_snapshot(&name, "its disk, judged from outside the guest").await.map_err(|e| JudgeError::host(e.to_string()))?;
        let judged = judge.judge_snapshot(&name).await;
        let dropped =
            self.machine.hv().snapshot_delete(&name).await.map_err(|e| JudgeError::host(format!("dropping snapshot {name}: {e}")));
        let judged = judged?;
        dropped?;
        let live: HashMap<String, ScanResult> =
            judged.verdicts.iter().map(|v| (v.rule.clone(), ScanResult::from(scan.outcome(&v.rule)))).collect();
        let mut exam = CrossExamination::of(&judged, &live);
        exam.unflushed = unflushed;
        Ok((exam, judged.with_live(&live)))
    }
}

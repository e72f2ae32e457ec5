//! The verdict from outside the guest: each rule as the hardening host judged it from the guest's
//! disk (read on the host, read-only, no code of the guest run: `temper-offline`), and the
//! guest's own scan cross-examined against it. The guest is treated as hostile: what its `oscap`
//! reports is evidence, the disk judged with the host's content and scanner is the check on it.
use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use temper_scap::oval::Evidence;

use crate::ScanResult;
use crate::text_enum;

text_enum! {
    /// What judged a rule from the disk.
    pub enum OfflineBasis {
        /// The host's `oscap` over the disk's files alone.
        Disk = "disk",
        /// With temper's own reading of the disk where oscap has no offline probe (installed
        /// packages from dpkg's status file).
        Host = "host",
    }
}

text_enum! {
    /// What only the running system can tell, which a rule's result hangs on.
    pub enum LiveNeed {
        /// A kernel parameter's running value (`sysctl`).
        Sysctl = "sysctl",
        /// A systemd unit's state or dependencies, as systemd reports them.
        Unit = "unit",
        /// The mounted file systems and their options.
        Mounts = "mounts",
        /// Running processes, or their environment.
        Process = "process",
        /// The running kernel: `uname`, `/proc`, `/sys`, `/dev`.
        Kernel = "kernel",
        /// SELinux's running state.
        Selinux = "selinux",
        /// Network interfaces, routes or listening sockets.
        Network = "network",
        /// A probe temper does not know to be faithful on a disk: never trusted offline.
        Probe = "probe",
    }
}

text_enum! {
    /// Why a rule has no offline result although no live state decides it.
    pub enum NotJudged {
        /// Its check is not one OVAL definition (several checks, SCE, OCIL, no check): left to
        /// `oscap xccdf eval`, which cannot judge platforms offline.
        XccdfPath = "xccdf_path",
        /// The host's scan of the disk gave `error`.
        Error = "error",
        /// The host's scan of the disk gave `unknown` or did not evaluate the check.
        Unknown = "unknown",
        /// A construct temper's own probes do not implement (a package state, a name from a
        /// variable), or a probe with no offline mode that the disk could answer (`shadow`).
        Unsupported = "unsupported",
        /// Its check walks a directory tree, and the disk's copy is incomplete (an entry did
        /// not read).
        Incomplete = "incomplete",
    }
}

text_enum! {
    /// Why a disk could not be judged: the host's side (a tool missing, a remote hypervisor), or
    /// the disk itself (no root file system, one that does not read). A guest controls its disk:
    /// a disk that does not read cannot vouch for the guest's scan.
    pub enum JudgeFailure {
        Host = "host",
        Disk = "disk",
    }
}

/// A disk that could not be judged, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct JudgeError {
    pub cause: JudgeFailure,
    pub reason: String,
}

impl JudgeError {
    pub fn host(reason: impl Into<String>) -> Self {
        Self { cause: JudgeFailure::Host, reason: reason.into() }
    }
}

/// One rule's verdict from outside the guest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "judged", rename_all = "snake_case")]
pub enum OfflineVerdict {
    /// Judged from the disk: its result, and what judged it.
    Offline { result: ScanResult, basis: OfflineBasis },
    /// Only the running system can decide it: what it needs, and its last live result (the
    /// guest's own scan) before the disk was read.
    LiveOnly {
        needs: Vec<LiveNeed>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        live: Option<ScanResult>,
    },
    /// Not judged offline, and not for want of the running system: why.
    NotJudged {
        why: NotJudged,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        live: Option<ScanResult>,
    },
}

impl OfflineVerdict {
    /// The result from the disk, when it was judged there.
    pub fn offline(&self) -> Option<ScanResult> {
        match self {
            Self::Offline { result, .. } => Some(*result),
            _ => None,
        }
    }

    /// With the last live result set on a verdict that is not the disk's.
    pub fn with_live(self, last: Option<ScanResult>) -> Self {
        match self {
            Self::LiveOnly { needs, .. } => Self::LiveOnly { needs, live: last },
            Self::NotJudged { why, .. } => Self::NotJudged { why, live: last },
            v => v,
        }
    }

    /// A short line for tables and logs.
    pub fn line(&self) -> String {
        match self {
            Self::Offline { result, basis } => format!("{result} (offline, {basis})"),
            Self::LiveOnly { needs, live } => {
                let needs: Vec<&str> = needs.iter().map(|n| n.as_str()).collect();
                let live = live.map_or("none".to_string(), |r| r.to_string());
                format!("judged live only ({}); last live result {live}", needs.join(", "))
            }
            Self::NotJudged { why, .. } => format!("not judged offline ({why})"),
        }
    }
}

/// A rule's verdict, named.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleVerdict {
    pub rule: String,
    pub verdict: OfflineVerdict,
}

/// Where the time of one offline judgement went.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OfflineTimes {
    /// The disk read out of its qcow2 and its file system copied to a private host folder.
    pub extract_secs: f64,
    /// The host's `oscap` over that folder, and temper's own probes.
    pub scan_secs: f64,
    pub total_secs: f64,
}

/// One disk judged: every rule of the profile, the evidence of each rule the disk fails, and
/// the time it took.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DiskJudgement {
    /// What was read: `snapshot NAME of DOMAIN`, or an image's path.
    pub source: String,
    pub verdicts: Vec<RuleVerdict>,
    /// What the disk shows for each rule it fails (the host's OVAL results).
    pub evidence: Vec<Evidence>,
    pub times: OfflineTimes,
}

impl DiskJudgement {
    /// Counts by kind: (judged offline, live only, not judged).
    pub fn counts(&self) -> (usize, usize, usize) {
        let n = |f: fn(&OfflineVerdict) -> bool| self.verdicts.iter().filter(|v| f(&v.verdict)).count();
        (
            n(|v| matches!(v, OfflineVerdict::Offline { .. })),
            n(|v| matches!(v, OfflineVerdict::LiveOnly { .. })),
            n(|v| matches!(v, OfflineVerdict::NotJudged { .. })),
        )
    }

    /// Each verdict with the last live result of its rule set where the disk did not judge it.
    pub fn with_live(mut self, live: &HashMap<String, ScanResult>) -> Self {
        for v in &mut self.verdicts {
            v.verdict = v.verdict.clone().with_live(live.get(&v.rule).copied());
        }
        self
    }
}

/// A rule whose live result and disk result differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Disagreement {
    pub rule: String,
    /// What the guest's own scan reported.
    pub live: ScanResult,
    /// What its disk shows, judged on the host.
    pub offline: ScanResult,
    /// The disk's evidence, when the disk fails the rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Evidence>,
}

/// The guest's scan against its disk, on one state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CrossExamination {
    pub source: String,
    /// Rules of the profile.
    pub rules: usize,
    /// Rules the live scan judged (pass or fail).
    pub live_judged: usize,
    /// Of those, the rules the disk judged too.
    pub both: usize,
    pub agree: usize,
    /// The guest reports the rule passing, its disk shows it failing: the guest's scan disagrees
    /// with its disk. A finding: the run does not end as a success.
    pub lies: Vec<Disagreement>,
    /// Other disagreements between a decided live result and a decided disk result (the live
    /// scan fails what the disk passes, or one of them says `notapplicable`).
    pub differ: Vec<Disagreement>,
    /// Rules of the profile judged live only, and not judged offline for another reason.
    pub live_only: usize,
    pub not_judged: usize,
    pub times: OfflineTimes,
    /// The guest's `sync` before its disk was read failed: what its page cache held may be
    /// missing from the disk (a finding may then be a write not yet on the disk).
    pub unflushed: Option<String>,
}

/// A result that decides a rule: pass, fail or not applicable.
fn decided(r: ScanResult) -> bool {
    matches!(r, ScanResult::Pass | ScanResult::Fail | ScanResult::NotApplicable)
}

impl CrossExamination {
    /// Compares `disk` with the `live` results of the same state, rule by rule.
    pub fn of(disk: &DiskJudgement, live: &HashMap<String, ScanResult>) -> Self {
        let (_, live_only, not_judged) = disk.counts();
        let mut x = CrossExamination {
            source: disk.source.clone(),
            rules: disk.verdicts.len(),
            live_only,
            not_judged,
            times: disk.times.clone(),
            ..Self::default()
        };
        for v in &disk.verdicts {
            let Some(&l) = live.get(&v.rule) else { continue };
            let judged_live = matches!(l, ScanResult::Pass | ScanResult::Fail);
            x.live_judged += usize::from(judged_live);
            let Some(o) = v.verdict.offline() else { continue };
            x.both += usize::from(judged_live);
            if l == o {
                x.agree += usize::from(judged_live);
                continue;
            }
            let d = || Disagreement {
                rule: v.rule.clone(),
                live: l,
                offline: o,
                evidence: disk.evidence.iter().find(|e| e.rule == v.rule).cloned(),
            };
            if l == ScanResult::Pass && o == ScanResult::Fail {
                x.lies.push(d());
            } else if decided(l) && decided(o) {
                x.differ.push(d());
            }
        }
        x
    }

    /// The share of the rules the live scan judged that the disk judged too.
    pub fn coverage(&self) -> f64 {
        if self.live_judged == 0 { 0.0 } else { self.both as f64 / self.live_judged as f64 }
    }

    /// The rules that disagree, of both kinds.
    pub fn disagreements(&self) -> usize {
        self.lies.len() + self.differ.len()
    }
}

/// How the cross-examination of a run's final state went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum CrossExam {
    Done(Box<CrossExamination>),
    /// The disk could not be judged: why, and whose side it was on.
    Failed {
        reason: String,
        #[serde(default = "host_side")]
        cause: JudgeFailure,
    },
    /// Not attempted (a remote hypervisor, or switched off): why.
    Skipped {
        why: String,
    },
}

fn host_side() -> JudgeFailure {
    JudgeFailure::Host
}

impl CrossExam {
    /// Rules the guest reports passing that its disk fails.
    pub fn lies(&self) -> &[Disagreement] {
        match self {
            Self::Done(x) => &x.lies,
            _ => &[],
        }
    }

    /// A finding: the guest's scan disagrees with its disk, or its disk does not read (a guest
    /// that spoils its disk does not escape the check so). The run then exits 3.
    pub fn is_finding(&self) -> bool {
        match self {
            Self::Done(x) => !x.lies.is_empty(),
            Self::Failed { cause, .. } => *cause == JudgeFailure::Disk,
            Self::Skipped { .. } => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(rule: &str, verdict: OfflineVerdict) -> RuleVerdict {
        RuleVerdict { rule: rule.into(), verdict }
    }

    fn off(result: ScanResult) -> OfflineVerdict {
        OfflineVerdict::Offline { result, basis: OfflineBasis::Disk }
    }

    #[test]
    fn a_rule_the_guest_passes_and_the_disk_fails_is_a_lie_and_the_rest_are_counted() {
        use ScanResult as R;
        let disk = DiskJudgement {
            source: "snapshot s".into(),
            verdicts: vec![
                v("a", off(R::Pass)),
                v("b", off(R::Fail)),
                v("c", off(R::Pass)),
                v("d", OfflineVerdict::LiveOnly { needs: vec![LiveNeed::Sysctl], live: None }),
                v("e", off(R::NotApplicable)),
                v("f", OfflineVerdict::NotJudged { why: NotJudged::XccdfPath, live: None }),
                v("g", off(R::Fail)),
            ],
            ..DiskJudgement::default()
        };
        let live: HashMap<String, R> =
            [("a", R::Pass), ("b", R::Pass), ("c", R::Fail), ("d", R::Pass), ("e", R::Pass), ("f", R::Fail), ("g", R::Fail)]
                .into_iter()
                .map(|(k, r)| (k.to_string(), r))
                .collect();
        let x = CrossExamination::of(&disk, &live);
        assert_eq!((x.rules, x.live_judged, x.both, x.agree), (7, 7, 5, 2));
        assert_eq!(x.lies.iter().map(|d| d.rule.as_str()).collect::<Vec<_>>(), ["b"]);
        assert_eq!(x.differ.iter().map(|d| d.rule.as_str()).collect::<Vec<_>>(), ["c", "e"]);
        assert_eq!((x.live_only, x.not_judged), (1, 1));
        assert!((x.coverage() - 5.0 / 7.0).abs() < 1e-9);
        let filled = disk.with_live(&live);
        assert_eq!(filled.verdicts[3].verdict, OfflineVerdict::LiveOnly { needs: vec![LiveNeed::Sysctl], live: Some(R::Pass) });
        assert_eq!(filled.verdicts[0].verdict, off(R::Pass), "a verdict from the disk keeps its own result");
    }

    #[test]
    fn verdicts_read_back_as_written() {
        let all = [
            off(ScanResult::Fail),
            OfflineVerdict::LiveOnly { needs: vec![LiveNeed::Unit, LiveNeed::Mounts], live: Some(ScanResult::Pass) },
            OfflineVerdict::NotJudged { why: NotJudged::Unsupported, live: None },
        ];
        for v in all {
            let json = serde_json::to_string(&v).unwrap();
            assert_eq!(serde_json::from_str::<OfflineVerdict>(&json).unwrap(), v, "{json}");
        }
        let done = CrossExam::Done(Box::default());
        assert_eq!(serde_json::from_str::<CrossExam>(&serde_json::to_string(&done).unwrap()).unwrap(), done);
        assert!(!done.is_finding());
        let spoiled = CrossExam::Failed { reason: "no root".into(), cause: JudgeFailure::Disk };
        assert!(spoiled.is_finding(), "a disk that does not read is a finding");
        assert!(!CrossExam::Failed { reason: "no qemu-img".into(), cause: JudgeFailure::Host }.is_finding());
        let old: CrossExam = serde_json::from_str(r#"{"outcome":"failed","reason":"x"}"#).unwrap();
        assert_eq!(old, CrossExam::Failed { reason: "x".into(), cause: JudgeFailure::Host }, "an event written before `cause` reads");
    }
}

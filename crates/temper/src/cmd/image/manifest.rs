//! `hardened.qcow2.json`: what the image is, where it came from, what was taken out of it at the
//! handover and what was proven of it.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use temper_core::handover::{HeldRule, Removal};
use temper_journal::RunId;
use temper_journal::footprint::Footprint;
use temper_target::{BootProof, DirectBoot};

#[derive(Debug, Serialize)]
pub struct ImageManifest {
    pub image: String,
    pub format: &'static str,
    /// zlib, zstd (qemu 5.1 or newer reads it) or none.
    pub compression: temper_target::Compression,
    pub bytes: u64,
    pub sha256: String,
    pub domain: String,
    pub libvirt_uri: String,
    pub snapshot: String,
    pub source_disk: String,
    /// Set when the domain boots a host kernel: the image is a root filesystem for it.
    pub direct_boot: Option<DirectBoot>,
    pub run: RunId,
    pub target: String,
    pub skill: String,
    pub profile: String,
    pub datastream: String,
    /// The run's live scores (the guest's own scans), first and last; the image's are `offline`'s.
    pub score_before: Option<f64>,
    pub score_after: Option<f64>,
    /// Rules by the run's status (fixed, escalated...), and scan results before and after.
    pub statuses: BTreeMap<String, usize>,
    pub results_before: BTreeMap<String, usize>,
    pub results_after: BTreeMap<String, usize>,
    /// The final state survived a cold reboot (false: exported with `--unproven`).
    pub reboot_proven: bool,
    pub temper_version: &'static str,
    pub reports: Reports,
    pub handover: HandoverRecord,
    /// The checkpoint and the image judged from outside the guest: the scores before and after
    /// the handover, and each held rule's verdict on the image.
    pub offline: super::verdicts::OfflineRecord,
    /// The image booted without the harness (None: `--no-boot-proof`).
    pub boot_proof: Option<ProofRecord>,
}

/// The evidence beside the image: from its disk's verdict, not the guest's scans.
#[derive(Debug, Serialize)]
pub struct Reports {
    pub ckl: String,
    pub cklb: String,
    pub oscal_ar: String,
    pub hdf: String,
    pub html: String,
    /// Each rule's verdict from the image's disk (temper-offline's judgement).
    pub verdict: String,
}

/// Whether the harness is in the image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HarnessInImage {
    /// Taken away at the handover (the default).
    Removed,
    /// Still there (`--keep-harness`): its user, key, sudo rule, scanner and content.
    Kept,
}

/// What the handover did.
#[derive(Debug, Serialize)]
pub struct HandoverRecord {
    pub harness: HarnessInImage,
    /// The harness user.
    pub user: String,
    /// What temper recorded it put on the target (vm/build-image.sh or `temper target enroll`).
    pub footprint: Footprint,
    /// Each thing of temper's the handover found, and whether it removed it; the host read the
    /// image afterwards and found none of those removed.
    pub removed: Vec<Removal>,
    /// With `--keep-harness`: what of temper's the image still holds.
    pub kept: Vec<String>,
    /// The rules held back for the harness, and those whose fix runs last (`settle: last`), and
    /// what the handover did with each.
    pub held: Vec<HeldRule>,
    /// The image's admins (the skill's admin group's members) after the held fixes.
    pub admin_group: String,
    pub admins: Vec<String>,
    /// Files the harness's uid still owned after it was removed (none expected).
    pub left: Vec<String>,
    /// The `[[last]]` fixes, run after virt-sysprep in libguestfs' appliance: each one's rules,
    /// whether it ran, how long, and what it said when it failed.
    pub last: Vec<temper_target::LastRun>,
    /// What made the image ready to be cloned (virt-sysprep), and why each.
    pub clone_prep: Vec<Operation>,
    /// virt-sysprep's default operations not applied, and why.
    pub clone_prep_left_out: Vec<Operation>,
    /// Seconds: the script, the power-off, the copy, virt-sysprep, the last fixes, the host's check.
    pub secs: BTreeMap<&'static str, f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Operation {
    pub operation: &'static str,
    pub why: &'static str,
}

impl Operation {
    pub fn all(ops: &[(&'static str, &'static str)]) -> Vec<Self> {
        ops.iter().map(|(operation, why)| Self { operation, why }).collect()
    }
}

/// The boot proof, and whether every check passed.
#[derive(Debug, Serialize)]
pub struct ProofRecord {
    pub passed: bool,
    /// Each unit that failed at the boot, with the rules whose kept fix names it (`units.rs`);
    /// absent from `temper image prove`, which has no run to trace them to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_from: Option<std::collections::BTreeMap<String, Vec<String>>>,
    #[serde(flatten)]
    pub proof: BootProof,
}

/// `hardened.qcow2` → `hardened.qcow2.json`.
pub fn manifest_path(image: &Path) -> PathBuf {
    let mut s = image.as_os_str().to_owned();
    s.push(".json");
    PathBuf::from(s)
}

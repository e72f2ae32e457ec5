//! temper-offline: the verdict from outside the guest. A checkpoint's disk (a libvirt domain's
//! internal snapshot) or an exported image is read on the host, read-only, with no mount and no
//! code from the guest run ([`disk`]); the host's own content and scanner then judge every rule
//! of the profile that the disk can answer ([`Judge`]): the host's `oscap-chroot` over the copy,
//! temper's own probes where oscap has no offline one ([`probe`]). A rule whose result hangs on
//! the running system (a sysctl's running value, a unit's state) is judged live only.
//!
//! The verdicts are `temper_journal::offline`'s: the journal keeps them, the reports show them,
//! and [`temper_journal::offline::CrossExamination`] holds the guest's own scan against them.
pub mod disk;
mod error;
mod judge;
pub mod probe;

pub use disk::{DiskSource, Tree};
pub use error::{OfflineError, OfflineResult};
pub use judge::{Judge, Judged, TestCounts, TreeStats};

//! The handover: the last thing temper does to a target, when its image leaves
//! (`temper image export`). The rules held back only for the harness get their fixes, then
//! everything temper put there goes, the harness itself last, in one script on one SSH
//! connection ([`script`]). The rules whose fix records the image itself go after everything
//! ([`last_rules`]). The host then reads the image itself ([`leftover`]): the manifest calls a
//! thing removed only when none of it is found.
mod held;
mod last;
pub mod leftover;
mod report;
pub mod script;

pub use held::{HeldFor, HeldRule, HeldStep, Settle, held_rules};
pub use last::{LastStep, last_rules};
pub use leftover::{Expect, ImageView, Leftover, dpkg_installed, leftovers, not_clone_ready};
pub use report::{GuestReport, Item, Removal, parse};
pub use script::{Handover, HandoverScriptError, render, render_kept};

/// What runs leave in every guest, on any target: the derived fixes' records
/// (`temper_derive::script::STATE_DIR` is below the first) and the scanner's files
/// (`crate::scan::ScanFiles`, in `/var/tmp`). A trailing `*` is a glob.
pub const RUN_TRACES: &[&str] = &["/var/lib/temper", "/var/tmp/temper-*"];

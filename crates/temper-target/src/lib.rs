//! temper-target: the real hypervisor (libvirt through `virt`) and the guest shell (SSH
//! through russh) behind `temper_core::ports::{Hypervisor, Guest}`.
//!
//! The defaults are the default target's (`temper_core::target::Target::default`), which match
//! `vm/lib.sh`.
mod claim;
mod command;
mod domain;
mod enroll;
mod image;
mod libvirt;
mod offline;
mod ssh;

pub use command::remote_command;
pub use domain::DomainSpec;
pub use enroll::{EnrollError, Harness, Inspection, inspect, prepare};
pub use image::{DirectBoot, Exported, ImageError, convert_snapshot};
pub use libvirt::{LibvirtConfig, LibvirtHypervisor};
pub use offline::DiskJudge;
pub use ssh::{SshConfig, SshGuest};

pub use temper_core::target::vm_dir;

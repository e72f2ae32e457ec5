//! temper-target: the real hypervisor (libvirt through `virt`) and the guest shell (SSH
//! through russh) behind `temper_core::ports::{Hypervisor, Guest}`.
//!
//! The defaults are the default target's (`temper_core::target::Target::default`), which match
//! `vm/lib.sh`.
mod claim;
mod command;
mod disk;
mod domain;
mod enroll;
mod handover;
mod image;
mod known_hosts;
mod last;
mod libvirt;
mod offline;
mod proof;
mod ssh;
mod sysprep;

pub use command::remote_command;
pub use disk::{DiskEntry, DiskError, DiskFiles};
pub use domain::DomainSpec;
pub use enroll::{EnrollError, Harness, Inspection, inspect, prepare};
pub use handover::{HandedOver, HandoverError, HandoverJob};
pub use image::{Compression, DirectBoot, ImageError, compress};
pub use known_hosts::{DEFAULT_KNOWN_HOSTS, HostKeyError, KnownHosts, fingerprint, host_pattern, parse_key};
pub use last::{LastRun, run_last};
pub use libvirt::{LibvirtConfig, LibvirtHypervisor};
pub use offline::DiskJudge;
pub use proof::{BootProof, ProofError, ProofJob, prove, sha256};
pub use russh::keys::PublicKey;
pub use ssh::{HostKeyCheck, SshConfig, SshGuest, offered_host_key};
pub use sysprep::{APPLIED as SYSPREP_APPLIED, KeptLog, LEFT_OUT as SYSPREP_LEFT_OUT, SSH_DROP_IN, rsyslog_logs, sysprep};

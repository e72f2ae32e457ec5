//! temper-target: the real hypervisor (libvirt through `virt`) and the guest shell (SSH
//! through russh) behind `temper_core::ports::{Hypervisor, Guest}`.
//!
//! Defaults match `vm/lib.sh`: domain `temper-test` on `qemu:///system`, SSH as `temper` on
//! 127.0.0.1:2222 with the key in `/var/cache/temper/vm/keys/id_ed25519`.
mod command;
mod libvirt;
mod ssh;

pub use command::remote_command;
pub use libvirt::{LibvirtConfig, LibvirtHypervisor};
pub use ssh::{SshConfig, SshGuest};

/// Where `vm/lib.sh` keeps the image, key and overlay (`TEMPER_VM_DIR` overrides it).
pub fn vm_dir() -> std::path::PathBuf {
    std::env::var_os("TEMPER_VM_DIR").map(Into::into).unwrap_or_else(|| "/var/cache/temper/vm".into())
}

//! The guest's packages for the OVAL engine's package tests ([`temper_scap::oval::packages`]):
//! its dpkg status file, read as data once per scan (as root, as oscap reads it), and judged on
//! the host as oscap 1.3.7's dpkginfo probe judges it. A list that cannot be read is no empty
//! list: the scan is run again with oscap's own probe (`engine.rs`).
use std::time::Duration;

use temper_scap::dpkg::{Dpkg, MAX_STATUS};
use tokio::sync::OnceCell;

use super::tail;
use crate::ports::{Exec, Guest};

/// dpkg's status file: what APT's cache, and so oscap's probe, reads the installed packages from.
pub const DPKG_STATUS: &str = "/var/lib/dpkg/status";

/// One scan's package list: read when the first plan that needs it runs, then shared.
#[derive(Default)]
pub(super) struct PackageList {
    read: OnceCell<Result<Dpkg, String>>,
}

impl PackageList {
    /// Reads the list beside other work when `needed`; what it found waits for [`Self::get`].
    pub async fn warm(&self, guest: &dyn Guest, needed: bool) {
        if needed {
            let _ = self.get(guest).await;
        }
    }

    /// The guest's installed packages, or why they could not be read.
    pub async fn get(&self, guest: &dyn Guest) -> Result<&Dpkg, String> {
        self.read.get_or_init(|| read(guest)).await.as_ref().map_err(Clone::clone)
    }
}

async fn read(guest: &dyn Guest) -> Result<Dpkg, String> {
    let exec = Exec::new(["cat", "--", DPKG_STATUS]).timeout(Duration::from_secs(120)).max_output(MAX_STATUS as usize);
    let out = guest.exec(exec).await.map_err(|e| e.to_string())?;
    if !out.success() {
        return Err(format!("reading {DPKG_STATUS} exited {:?}: {}", out.exit_code, tail(&out.stderr_str(), 300)));
    }
    if out.stdout_truncated {
        return Err(format!("{DPKG_STATUS} is over {MAX_STATUS} bytes"));
    }
    Ok(Dpkg::parse(&String::from_utf8_lossy(&out.stdout)))
}

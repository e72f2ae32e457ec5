//! The real parts the tests read: the SSG content, the test VM's cached image.
#![allow(dead_code)]
use std::path::PathBuf;

pub const DEFAULT_SSG_DIR: &str = "/var/cache/temper/vm/ssg/usr/share/xml/scap/ssg/content";
pub const ANSSI_HIGH: &str = "xccdf_org.ssgproject.content_profile_anssi_bp28_high";
pub const STANDARD: &str = "xccdf_org.ssgproject.content_profile_standard";

/// The debian12 datastream; fails the test when it is missing.
pub fn datastream() -> PathBuf {
    let dir = std::env::var("TEMPER_SSG_DIR").unwrap_or_else(|_| DEFAULT_SSG_DIR.into());
    let p = PathBuf::from(dir).join("ssg-debian12-ds.xml");
    assert!(p.is_file(), "SSG content missing: {} not found. Run `bash vm/fetch-ssg.sh` (or set TEMPER_SSG_DIR).", p.display());
    p
}

/// The test VM's baseline image as `vm/setup.sh` built it (the one the domain runs on).
pub fn base_image() -> PathBuf {
    let vm = temper_journal::target::vm_dir();
    let domain = std::env::var("TEMPER_DOMAIN").unwrap_or_else(|_| "temper-test".into());
    let named = std::fs::read_to_string(vm.join("run").join(format!("{domain}.image"))).ok();
    let hash = named.as_deref().and_then(|s| s.split_whitespace().next()).map(str::to_string);
    let by_hash = hash.map(|h| vm.join("img").join(h).join("guest.qcow2")).filter(|p| p.is_file());
    let any = || std::fs::read_dir(vm.join("img")).ok()?.flatten().map(|e| e.path().join("guest.qcow2")).find(|p| p.is_file());
    by_hash.or_else(any).unwrap_or_else(|| panic!("no test VM image under {}: run `bash vm/setup.sh`", vm.display()))
}

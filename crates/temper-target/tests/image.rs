//! `convert_snapshot` with the real qemu-img: a disk with an internal snapshot, written over
//! after it, exports the snapshot's bytes, not the newer ones, as a standalone qcow2.
use std::path::Path;
use std::process::Command;

use temper_target::{ImageError, convert_snapshot};

fn qemu(tool: &str, args: &[&str]) -> String {
    let out = Command::new(tool).args(args).output().unwrap_or_else(|e| panic!("{tool}: {e} (vm/host-deps.sh installs qemu-utils)"));
    assert!(out.status.success(), "{tool} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[tokio::test]
async fn a_snapshot_exports_as_a_standalone_qcow2_with_the_snapshots_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let (disk, out) = (dir.path().join("disk.qcow2"), dir.path().join("hardened.qcow2"));
    qemu("qemu-img", &["create", "-q", "-f", "qcow2", s(&disk), "16M"]);
    qemu("qemu-io", &["-c", "write -P 0xab 0 1M", s(&disk)]);
    qemu("qemu-img", &["snapshot", "-c", "temper-r1-boot1", s(&disk)]);
    qemu("qemu-io", &["-c", "write -P 0xcd 0 1M", s(&disk)]);

    let bytes = convert_snapshot(&disk, "temper-r1-boot1", &out).await.unwrap();
    assert_eq!(bytes, std::fs::metadata(&out).unwrap().len());
    let info: serde_json::Value = serde_json::from_str(&qemu("qemu-img", &["info", "--output=json", s(&out)])).unwrap();
    assert_eq!(info["format"], "qcow2");
    assert!(info["snapshots"].as_array().is_none_or(|a| a.is_empty()), "no snapshots in the export: {info}");
    assert!(info["backing-filename"].is_null(), "standalone: {info}");
    // qemu-io's read -P fails unless every byte matches.
    qemu("qemu-io", &["-r", "-c", "read -P 0xab 0 1M", s(&out)]);
    assert!(!dir.path().join("hardened.part").exists(), "the temporary file is gone");

    match convert_snapshot(&disk, "absent", &dir.path().join("x.qcow2")).await {
        Err(ImageError::QemuImg(m)) => assert!(m.contains("absent") || m.contains("snapshot"), "{m}"),
        other => panic!("want a qemu-img error, got {other:?}"),
    }
    assert!(!dir.path().join("x.qcow2").exists() && !dir.path().join("x.part").exists(), "nothing half-written is left");
}

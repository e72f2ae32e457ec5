//! `temper target enroll` on a real image: the plain variant of the test image (`vm/build-image.sh
//! --plain`: no temper user, key or sudo rule) is enrolled with libguestfs, defined, booted and
//! snapshotted; `temper doctor` on it is all green, and a stock run fixes three `standard` rules.
//! The test first purges openscap-scanner from its copy of the image, so enroll's branch that
//! installs it from the image's own package source runs for real.
mod support;

use std::process::Command;

use support::*;

const NAME: &str = "temper-enroll-e2e";
const PORT: &str = "2297";
const RULES: &str = "sysctl_fs_suid_dumpable,sysctl_kernel_randomize_va_space,file_permissions_systemmap";

/// Powers off and forgets the domain and its key, whatever the test got to.
struct Cleanup;

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = Command::new("virsh").args(["-q", "destroy", NAME]).output();
        let _ = Command::new("virsh").args(["-q", "undefine", NAME, "--snapshots-metadata"]).output();
        let keys = temper_journal::target::vm_dir().join("keys");
        let _ = std::fs::remove_file(keys.join(format!("{NAME}_ed25519")));
        let _ = std::fs::remove_file(keys.join(format!("{NAME}_ed25519.pub")));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_image_is_enrolled_then_doctor_is_green_and_a_stock_run_fixes_three_rules() {
    let _cleanup = Cleanup;
    let w = World::new();
    let built = Command::new("bash").arg(repo().join("vm/build-image.sh")).arg("--plain").output().unwrap();
    assert!(built.status.success(), "vm/build-image.sh --plain: {}", String::from_utf8_lossy(&built.stderr));
    let plain = std::path::PathBuf::from(String::from_utf8_lossy(&built.stdout).trim());
    let image = w.dir.path().join("plain.qcow2");
    std::fs::copy(&plain, &image).unwrap();
    // As temper's own libguestfs calls: the direct backend under TCG (this host's /dev/kvm hangs).
    let purge = Command::new("virt-customize")
        .env("LIBGUESTFS_BACKEND", "direct")
        .env("LIBGUESTFS_BACKEND_SETTINGS", "force_tcg")
        .args(["--no-network", "--no-logfile", "-a"])
        .arg(&image)
        .args(["--run-command", "dpkg --purge openscap-scanner && ! test -e /usr/bin/oscap"])
        .output()
        .unwrap();
    assert!(purge.status.success(), "virt-customize: {}", String::from_utf8_lossy(&purge.stderr));
    let dir = plain.parent().unwrap();
    let (kernel, initrd) = (dir.join("vmlinuz"), dir.join("initrd.img"));
    let mut args = vec!["target", "enroll", "--image", image.to_str().unwrap(), "--name", NAME, "--ssh-port", PORT];
    args.extend(["--kernel", kernel.to_str().unwrap(), "--initrd", initrd.to_str().unwrap()]);
    args.extend(["--cmdline", "root=/dev/vda rw console=ttyS0 net.ifnames=0 quiet"]);

    let check: Vec<&str> = args.iter().copied().chain(["--check"]).collect();
    let out = w.run(&check).await;
    assert_eq!(out.status.code(), Some(2), "--check: something is missing");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("MISSING the harness user\n") && said.contains("MISSING the harness user's NOPASSWD sudo rule"), "{said}");
    assert!(said.contains("MISSING openscap-scanner (/usr/bin/oscap)"), "{said}");

    let out = w.run(&args).await;
    assert!(out.status.success(), "enroll: {}", String::from_utf8_lossy(&out.stderr));
    let said = String::from_utf8_lossy(&out.stdout);
    let added = said.lines().find(|l| l.starts_with("added: ")).unwrap_or_default();
    assert!(added.contains("openscap-scanner (/usr/bin/oscap)"), "enroll installed openscap-scanner: {said}");
    let table = &said[said.find("[[target]]").expect("the [[target]] table is printed")..];
    std::fs::write(w.dir.path().join("none.toml"), table).unwrap();

    let out = w.run(&["doctor", "--target", NAME]).await;
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && said.contains("all green"), "doctor: {said}");

    let out = w.run(&["run", "--target", NAME, "--agent", "stock", "--profile", STANDARD, "--rules", RULES, "--quiet", "--json"]).await;
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert_eq!(summary["statuses"]["fixed"], 3, "{summary}");
    assert_eq!(summary["healthy"], true);
}

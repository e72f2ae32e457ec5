//! A hostile guest's file system read on the host: a real ext4 image (`mkfs.ext4 -d`), in a
//! real qcow2 (`qemu-img`), copied by temper-offline, then read by the host's real oscap in
//! offline mode. The copy keeps owners and set-user-ID bits, creates no device node, and no link
//! of the guest leads the host's oscap out of the copy.
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::Path;
use std::process::Command;

use temper_offline::{DiskSource, disk};

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(out.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A guest tree with what a hostile guest would plant, as an ext4 image in a qcow2.
fn hostile_image(dir: &Path) -> std::path::PathBuf {
    let src = dir.join("src");
    for d in ["etc", "usr/bin", "dev", "home/alice"] {
        fs::create_dir_all(src.join(d)).unwrap();
    }
    fs::write(src.join("etc/os-release"), "ID=debian\n").unwrap();
    fs::write(src.join("etc/hostname"), "guest-name\n").unwrap();
    // An absolute link, and a relative one that climbs past the root.
    symlink("/etc/hostname", src.join("etc/escape")).unwrap();
    symlink("../../../../../../../../etc/hostname", src.join("usr/bin/climb")).unwrap();
    // A link through a link to the root: `a/../..` lexically stays put, the kernel climbs.
    symlink("/", src.join("usr/bin/up")).unwrap();
    symlink("up/../../../../../../etc/hostname", src.join("usr/bin/through")).unwrap();
    fs::write(src.join("usr/bin/prog"), b"\x7fELF").unwrap();
    fs::set_permissions(src.join("usr/bin/prog"), fs::Permissions::from_mode(0o4755)).unwrap();
    fs::write(src.join("home/alice/notes"), "x").unwrap();
    std::os::unix::fs::chown(src.join("home/alice/notes"), Some(1234), Some(5678)).unwrap();
    fs::set_permissions(src.join("home/alice/notes"), fs::Permissions::from_mode(0o2640)).unwrap();
    fs::write(src.join("etc").join(std::ffi::OsStr::from_bytes(b"bad\xfename")), "odd").unwrap();
    run(Command::new("mknod").arg(src.join("dev/mem")).args(["c", "1", "1"]));
    run(Command::new("mkfifo").arg(src.join("dev/fifo")));
    let raw = dir.join("guest.raw");
    run(Command::new("mkfs.ext4").args(["-q", "-F", "-d"]).arg(&src).arg(&raw).arg("16M"));
    let qcow = dir.join("guest.qcow2");
    run(Command::new("qemu-img").args(["convert", "-q", "-f", "raw", "-O", "qcow2"]).arg(&raw).arg(&qcow));
    qcow
}

#[tokio::test]
async fn the_copy_keeps_owners_and_modes_creates_no_device_and_no_link_leaves_it() {
    let dir = tempfile::tempdir().unwrap();
    let image = hostile_image(dir.path());
    let work = dir.path().join("work");
    fs::create_dir(&work).unwrap();
    let d = disk::read(&DiskSource::Image(image), &work).await.unwrap();
    let root = &d.tree.root;
    assert!(d.tree.complete(), "{:?}", d.tree.skipped);
    assert_eq!(d.tree.special, 2, "the device node and the FIFO are not created");
    assert!(!root.join("dev/mem").exists() && fs::symlink_metadata(root.join("dev/mem")).is_err());

    let prog = fs::metadata(root.join("usr/bin/prog")).unwrap();
    assert_eq!(prog.mode() & 0o7777, 0o4755, "set-user-ID is kept");
    let notes = fs::metadata(root.join("home/alice/notes")).unwrap();
    assert_eq!((notes.uid(), notes.gid(), notes.mode() & 0o7777), (1234, 5678, 0o2640), "owner, group and set-group-ID are kept");
    assert_eq!(fs::read_to_string(root.join("etc").join(std::ffi::OsStr::from_bytes(b"bad\xfename"))).unwrap(), "odd");

    for link in ["etc/escape", "usr/bin/climb", "usr/bin/through"] {
        let p = root.join(link);
        assert!(fs::symlink_metadata(&p).unwrap().file_type().is_symlink(), "{link} stays a link");
        let resolved = fs::canonicalize(&p).unwrap();
        assert!(resolved.starts_with(fs::canonicalize(root).unwrap()), "{link} resolves inside the copy: {}", resolved.display());
        assert_eq!(fs::read_to_string(&p).unwrap(), "guest-name\n", "{link} reads the guest's file");
    }

    // The host's own oscap, in offline mode, reads the guest's file through the guest's link.
    let doc = dir.path().join("links.xml");
    fs::write(&doc, LINKS_OVAL).unwrap();
    let results = dir.path().join("links-results.xml");
    let out = Command::new("oscap-chroot").arg(root).args(["oval", "eval", "--results"]).arg(&results).arg(&doc).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let xml = fs::read_to_string(&results).unwrap();
    let texts: Vec<&str> = xml.split("<ind-sys:text>").skip(1).map(|s| s.split('<').next().unwrap()).collect();
    assert_eq!(texts, ["guest-name", "guest-name", "guest-name"], "oscap read the guest's file through every link, never the host's");
}

#[tokio::test]
async fn an_image_with_a_backing_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base.qcow2");
    run(Command::new("qemu-img").args(["create", "-q", "-f", "qcow2"]).arg(&base).arg("16M"));
    let top = dir.path().join("top.qcow2");
    run(Command::new("qemu-img").args(["create", "-q", "-f", "qcow2", "-F", "qcow2", "-b"]).arg(&base).arg(&top));
    let work = dir.path().join("work");
    fs::create_dir(&work).unwrap();
    let e = disk::read(&DiskSource::Image(top), &work).await.unwrap_err().to_string();
    assert!(e.contains("backing file"), "{e}");
    let e = disk::read(&DiskSource::Image(base), &work).await.unwrap_err().to_string();
    assert!(e.contains("no ext2/3/4 file system"), "an empty disk has no root: {e}");
}

const LINKS_OVAL: &str = r#"<?xml version="1.0"?>
<oval_definitions xmlns="http://oval.mitre.org/XMLSchema/oval-definitions-5" xmlns:oval="http://oval.mitre.org/XMLSchema/oval-common-5" xmlns:ind="http://oval.mitre.org/XMLSchema/oval-definitions-5#independent">
<generator><oval:schema_version>5.11.2</oval:schema_version><oval:timestamp>2024-01-01T00:00:00</oval:timestamp></generator>
<definitions><definition id="oval:t:def:1" version="1" class="compliance"><metadata><title>links</title><description>links</description></metadata>
<criteria><criterion test_ref="oval:t:tst:1"/><criterion test_ref="oval:t:tst:2"/><criterion test_ref="oval:t:tst:3"/></criteria></definition></definitions>
<tests>
<ind:textfilecontent54_test id="oval:t:tst:1" version="1" check="all" comment="escape"><ind:object object_ref="oval:t:obj:1"/></ind:textfilecontent54_test>
<ind:textfilecontent54_test id="oval:t:tst:2" version="1" check="all" comment="climb"><ind:object object_ref="oval:t:obj:2"/></ind:textfilecontent54_test>
<ind:textfilecontent54_test id="oval:t:tst:3" version="1" check="all" comment="through"><ind:object object_ref="oval:t:obj:3"/></ind:textfilecontent54_test>
</tests>
<objects>
<ind:textfilecontent54_object id="oval:t:obj:1" version="1"><ind:filepath>/etc/escape</ind:filepath><ind:pattern operation="pattern match">^(.*)$</ind:pattern><ind:instance datatype="int">1</ind:instance></ind:textfilecontent54_object>
<ind:textfilecontent54_object id="oval:t:obj:2" version="1"><ind:filepath>/usr/bin/climb</ind:filepath><ind:pattern operation="pattern match">^(.*)$</ind:pattern><ind:instance datatype="int">1</ind:instance></ind:textfilecontent54_object>
<ind:textfilecontent54_object id="oval:t:obj:3" version="1"><ind:filepath>/usr/bin/through</ind:filepath><ind:pattern operation="pattern match">^(.*)$</ind:pattern><ind:instance datatype="int">1</ind:instance></ind:textfilecontent54_object>
</objects>
</oval_definitions>
"#;

//! A disk image's files read on the host, read-only: `qemu-img convert` to a sparse raw copy,
//! then e2fsprogs' `debugfs` on the ext4 file system that holds `/etc/passwd`. No mount, no loop
//! device, no libguestfs appliance, and no code from the guest runs.
use std::path::{Path, PathBuf};
use std::process::Stdio;

use temper_core::handover::ImageView;

#[derive(Debug, thiserror::Error)]
pub enum DiskError {
    #[error("{tool} could not run: {reason} (install qemu-utils and e2fsprogs: bash vm/host-deps.sh)")]
    Tool { tool: &'static str, reason: String },
    #[error("qemu-img convert of {image}: {stderr}")]
    Convert { image: PathBuf, stderr: String },
    #[error("{image}: no ext4 file system with /etc/passwd on it, whole or in a partition (LVM is not read)")]
    NoRoot { image: PathBuf },
    #[error("{image}: its file system was not shut down cleanly (the journal holds changes): read it after a clean power-off")]
    Dirty { image: PathBuf },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

/// One entry of a folder, as `debugfs ls -p` gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiskEntry {
    pub name: String,
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
}

/// The raw copy of an image and where its root file system starts in it. The copy is removed
/// when this is dropped.
#[derive(Debug)]
pub struct DiskFiles {
    raw: PathBuf,
    /// `RAW` or `RAW?offset=BYTES`, as debugfs opens it.
    spec: String,
}

impl Drop for DiskFiles {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.raw);
    }
}

impl DiskFiles {
    /// Copies `image` (any format qemu-img reads) to `raw` and finds its root file system.
    pub async fn open(image: &Path, raw: &Path) -> Result<Self, DiskError> {
        let out = tokio::process::Command::new("qemu-img")
            .args(["convert", "-U", "-O", "raw"])
            .arg(image)
            .arg(raw)
            .stdin(Stdio::null())
            .output()
            .await
            .map_err(|e| DiskError::Tool { tool: "qemu-img", reason: e.to_string() })?;
        if !out.status.success() {
            let _ = std::fs::remove_file(raw);
            return Err(DiskError::Convert { image: image.into(), stderr: String::from_utf8_lossy(&out.stderr).trim().into() });
        }
        let mut files = Self { raw: raw.to_path_buf(), spec: raw.display().to_string() };
        let mut offsets = vec![0];
        offsets.extend(partitions(raw).await);
        for offset in offsets {
            files.spec = if offset == 0 { raw.display().to_string() } else { format!("{}?offset={offset}", raw.display()) };
            if files.read("/etc/passwd").is_some() {
                if files.debugfs("stats").contains("needs_recovery") {
                    return Err(DiskError::Dirty { image: image.into() });
                }
                return Ok(files);
            }
        }
        Err(DiskError::NoRoot { image: image.into() })
    }

    /// `debugfs -R REQUEST` on the file system, read-only; its stdout (stderr says what failed).
    fn debugfs(&self, request: &str) -> String {
        self.debugfs_bytes(request).0.map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default()
    }

    /// stdout, or `None` when debugfs said the path is not there; and stderr.
    fn debugfs_bytes(&self, request: &str) -> (Option<Vec<u8>>, String) {
        let out = std::process::Command::new("debugfs")
            .env("PAGER", "__none__")
            .env("DEBUGFS_PAGER", "__none__")
            .arg("-R")
            .arg(request)
            .arg(&self.spec)
            .stdin(Stdio::null())
            .output();
        match out {
            Ok(o) => {
                let err = String::from_utf8_lossy(&o.stderr).into_owned();
                let missing = err.contains("File not found") || err.contains("not a directory") || !o.status.success();
                ((!missing).then_some(o.stdout), err)
            }
            Err(e) => (None, e.to_string()),
        }
    }

    /// A folder's entries (without `.` and `..`); `None` when it is not there.
    pub fn entries(&self, dir: &str) -> Option<Vec<DiskEntry>> {
        let (out, _) = self.debugfs_bytes(&format!("ls -p {}", quoted(dir)?));
        Some(parse_ls(&String::from_utf8_lossy(&out?)))
    }
}

impl ImageView for DiskFiles {
    fn read(&self, path: &str) -> Option<Vec<u8>> {
        let q = quoted(path)?;
        // `cat` prints nothing for a folder: a file must be one.
        let stat = self.debugfs(&format!("stat {q}"));
        if !stat.contains("Type: regular") {
            return None;
        }
        self.debugfs_bytes(&format!("cat {q}")).0
    }

    fn list(&self, dir: &str) -> Option<Vec<String>> {
        self.entries(dir).map(|e| e.into_iter().map(|e| e.name).collect())
    }

    fn exists(&self, path: &str) -> bool {
        quoted(path).is_some_and(|q| self.debugfs_bytes(&format!("stat {q}")).0.is_some_and(|o| !o.is_empty()))
    }
}

/// A path as one debugfs argument; `None` for one it cannot take (a `"` or a control character).
fn quoted(path: &str) -> Option<String> {
    (path.starts_with('/') && !path.contains('"') && !path.chars().any(|c| c.is_control())).then(|| format!("\"{path}\""))
}

/// `debugfs ls -p` lines: `/INODE/MODE/UID/GID/NAME/SIZE/`, without `.` and `..`.
pub fn parse_ls(out: &str) -> Vec<DiskEntry> {
    out.lines()
        .filter_map(|l| {
            let inner = l.trim_end().strip_prefix('/')?.strip_suffix('/')?;
            let mut f = inner.splitn(5, '/');
            let (_ino, mode, uid, gid, rest) = (f.next()?, f.next()?, f.next()?, f.next()?, f.next()?);
            let name = rest.rsplit_once('/').map_or(rest, |(n, _size)| n);
            (name != "." && name != "..").then(|| DiskEntry {
                name: name.to_string(),
                mode: u32::from_str_radix(mode, 8).unwrap_or(0),
                uid: uid.parse().unwrap_or(0),
                gid: gid.parse().unwrap_or(0),
            })
        })
        .collect()
}

/// The byte offsets of a raw disk's partitions (`sfdisk --json`), largest first; none for a
/// disk that is one file system.
async fn partitions(raw: &Path) -> Vec<u64> {
    let Ok(out) = tokio::process::Command::new("sfdisk").arg("--json").arg(raw).stdin(Stdio::null()).output().await else {
        return Vec::new();
    };
    parse_sfdisk(&String::from_utf8_lossy(&out.stdout))
}

fn parse_sfdisk(json: &str) -> Vec<u64> {
    let v: serde_json::Value = serde_json::from_str(json).unwrap_or_default();
    let table = &v["partitiontable"];
    let sector = table["sectorsize"].as_u64().unwrap_or(512);
    let mut parts: Vec<(u64, u64)> = table["partitions"]
        .as_array()
        .map(|ps| ps.iter().filter_map(|p| Some((p["start"].as_u64()? * sector, p["size"].as_u64().unwrap_or(0)))).collect())
        .unwrap_or_default();
    parts.sort_by_key(|(_, size)| std::cmp::Reverse(*size));
    parts.into_iter().map(|(start, _)| start).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ls_lines_give_names_modes_and_owners() {
        let out = "/2/040755/0/0/.//\n/2/040755/0/0/..//\n/12/040755/0/0/a b//\n/14/100600/1000/1000/authorized_keys/92/\n\n";
        let e = parse_ls(out);
        assert_eq!(e.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(), ["a b", "authorized_keys"]);
        assert_eq!((e[1].mode, e[1].uid, e[1].gid), (0o100600, 1000, 1000));
    }

    #[test]
    fn partitions_come_largest_first_in_bytes() {
        let json = r#"{"partitiontable":{"label":"gpt","sectorsize":512,"partitions":[
            {"node":"d1","start":2048,"size":1024,"type":"x"},{"node":"d2","start":4096,"size":900000,"type":"y"}]}}"#;
        assert_eq!(parse_sfdisk(json), [4096 * 512, 2048 * 512]);
        assert_eq!(parse_sfdisk(""), Vec::<u64>::new(), "no table: the disk is one file system");
    }

    #[test]
    fn only_plain_absolute_paths_reach_debugfs() {
        assert_eq!(quoted("/a b/c").as_deref(), Some("\"/a b/c\""));
        assert_eq!(quoted("/a\"; rm"), None);
        assert_eq!(quoted("relative"), None);
        assert_eq!(quoted("/a\nb"), None);
    }

    /// A real ext4 file system, made by mkfs.ext4 from a folder, read back through debugfs.
    #[tokio::test]
    async fn a_real_file_system_is_read_without_mounting_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("etc/sudoers.d")).unwrap();
        std::fs::write(root.join("etc/passwd"), "root:x:0:0::/root:/bin/sh\n").unwrap();
        std::fs::write(root.join("etc/sudoers.d/a b"), "x\n").unwrap();
        let img = dir.path().join("fs.raw");
        std::fs::File::create(&img).unwrap().set_len(32 << 20).unwrap();
        let mkfs = std::process::Command::new("mkfs.ext4").args(["-q", "-F", "-d"]).arg(&root).arg(&img).status().unwrap();
        assert!(mkfs.success());
        let qcow = dir.path().join("fs.qcow2");
        let conv = std::process::Command::new("qemu-img").args(["convert", "-O", "qcow2"]).arg(&img).arg(&qcow).status().unwrap();
        assert!(conv.success());
        let files = DiskFiles::open(&qcow, &dir.path().join("copy.raw")).await.unwrap();
        assert_eq!(files.read("/etc/passwd").unwrap(), b"root:x:0:0::/root:/bin/sh\n");
        assert_eq!(files.read("/etc/sudoers.d/a b").unwrap(), b"x\n");
        assert_eq!(files.read("/etc/sudoers.d"), None, "a folder is no file");
        assert_eq!(files.read("/etc/shadow"), None);
        assert_eq!(files.list("/etc/sudoers.d").unwrap(), ["a b"]);
        assert!(files.list("/nope").is_none() && files.exists("/etc") && !files.exists("/etc/nope"));
        let raw = dir.path().join("copy.raw");
        assert!(raw.exists());
        drop(files);
        assert!(!raw.exists(), "the raw copy goes with it");
        assert!(DiskFiles::open(&img, &dir.path().join("x.raw")).await.is_ok(), "a raw image reads too");
    }
}

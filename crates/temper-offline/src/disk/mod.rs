//! A disk read on the host: a qcow2's internal snapshot (a libvirt domain's checkpoint) or a
//! standalone image, made raw with the host's `qemu-img` (read-only: `-U`, the source never
//! written), its root file system found and copied into a private folder ([`extract`]).
mod extract;
mod parts;

use std::fmt;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ext4_view::{Ext4, Ext4Read};
use serde::Deserialize;
use tokio::process::Command;

pub use extract::{Skipped, Tree};

use crate::error::{OfflineError, OfflineResult};

/// Where a disk is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiskSource {
    /// A standalone image: a qcow2 without a backing file (as `temper image export` writes
    /// one), or a raw disk.
    Image(PathBuf),
    /// Internal snapshot `name` of the qcow2 `disk` (a libvirt domain's checkpoint).
    Snapshot { disk: PathBuf, name: String },
}

impl fmt::Display for DiskSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Image(p) => write!(f, "image {}", p.display()),
            Self::Snapshot { disk, name } => write!(f, "snapshot {name} of {}", disk.display()),
        }
    }
}

/// The disk's root file system, copied; and the time each part took.
#[derive(Debug, Clone)]
pub struct Disk {
    pub tree: Tree,
    /// 0 when the file system is the whole disk, else its partition's number.
    pub partition: usize,
    /// `qemu-img convert` to raw (zero for a raw image, read where it is).
    pub raw: Duration,
    pub extract: Duration,
}

/// Reads `source` into a folder `root` under `work` (both private: 0700), through a raw copy
/// in `work` that is removed once read.
pub async fn read(source: &DiskSource, work: &Path) -> OfflineResult<Disk> {
    let started = Instant::now();
    let (raw, owned) = raw_disk(source, work).await?;
    let raw_took = started.elapsed();
    let root = work.join("root");
    let extracted = {
        let (raw, root) = (raw.clone(), root.clone());
        tokio::task::spawn_blocking(move || extract_root(&raw, &root)).await.map_err(|e| OfflineError::Ext4(e.to_string()))?
    };
    if owned {
        let _ = std::fs::remove_file(&raw);
    }
    let (tree, partition) = extracted?;
    Ok(Disk { tree, partition, raw: raw_took, extract: started.elapsed() - raw_took })
}

#[derive(Debug, Deserialize)]
struct ImageInfo {
    format: String,
    #[serde(rename = "backing-filename")]
    backing: Option<String>,
}

/// A raw form of the disk: (its path, whether it is a copy to remove).
async fn raw_disk(source: &DiskSource, work: &Path) -> OfflineResult<(PathBuf, bool)> {
    let out = work.join("disk.raw");
    match source {
        DiskSource::Image(path) => {
            let info = qemu_img(&["info".as_ref(), "-U".as_ref(), "--output=json".as_ref(), path.as_os_str()]).await?;
            let info: ImageInfo = serde_json::from_slice(&info)
                .map_err(|e| OfflineError::Image { path: path.clone(), why: format!("qemu-img info does not read: {e}") })?;
            if let Some(b) = info.backing {
                let why = format!("it has a backing file ({b}): judge a standalone image (`temper image export` writes one)");
                return Err(OfflineError::Image { path: path.clone(), why });
            }
            match info.format.as_str() {
                "raw" => Ok((path.clone(), false)),
                "qcow2" => {
                    let args = ["convert", "-U", "-q", "-f", "qcow2", "-O", "raw"];
                    let mut argv: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
                    argv.extend([path.as_os_str(), out.as_os_str()]);
                    qemu_img(&argv).await?;
                    Ok((out, true))
                }
                other => Err(OfflineError::Image { path: path.clone(), why: format!("format {other}: only qcow2 and raw are read") }),
            }
        }
        DiskSource::Snapshot { disk, name } => {
            if name.contains(',') {
                return Err(OfflineError::BadSnapshotName(name.clone()));
            }
            let snap = format!("snapshot.name={name}");
            let args = ["convert", "-U", "-q", "-f", "qcow2", "-O", "raw", "-l", snap.as_str()];
            let mut argv: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
            argv.extend([disk.as_os_str(), out.as_os_str()]);
            qemu_img(&argv).await?;
            Ok((out, true))
        }
    }
}

async fn qemu_img(args: &[&std::ffi::OsStr]) -> OfflineResult<Vec<u8>> {
    let out = Command::new("qemu-img")
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .map_err(|source| OfflineError::Spawn { tool: "qemu-img", source })?;
    if !out.status.success() {
        return Err(OfflineError::Tool { tool: "qemu-img", detail: String::from_utf8_lossy(&out.stderr).trim().to_string() });
    }
    Ok(out.stdout)
}

/// A byte range of the raw disk, for the file system reader.
struct Window {
    file: File,
    offset: u64,
    len: u64,
}

impl Ext4Read for Window {
    fn read(&mut self, start: u64, dst: &mut [u8]) -> Result<(), Box<dyn std::error::Error + Send + Sync + 'static>> {
        start.checked_add(dst.len() as u64).filter(|&e| e <= self.len).ok_or("a read past the file system's end")?;
        self.file.read_exact_at(dst, self.offset + start)?;
        Ok(())
    }
}

/// The file system holding `/etc/os-release`, copied into `root`: (the copy, its partition).
fn extract_root(raw: &Path, root: &Path) -> OfflineResult<(Tree, usize)> {
    let mut f = File::open(raw).map_err(OfflineError::io(raw))?;
    let size = f.metadata().map_err(OfflineError::io(raw))?.len();
    let volumes = parts::volumes(&mut f, size).map_err(OfflineError::io(raw))?;
    let mut looked = Vec::new();
    for v in volumes {
        let file = f.try_clone().map_err(OfflineError::io(raw))?;
        let fs = match Ext4::load(Box::new(Window { file, offset: v.offset, len: v.len })) {
            Ok(fs) => fs,
            Err(e) => {
                looked.push(format!("{}: {e}", name(v.partition)));
                continue;
            }
        };
        if !fs.exists("/etc/os-release").unwrap_or(false) {
            looked.push(format!("{}: no /etc/os-release", name(v.partition)));
            continue;
        }
        make_private(root)?;
        let tree = extract::extract(&fs, root, v.len)?;
        return Ok((tree, v.partition));
    }
    if looked.is_empty() {
        looked.push("none with an ext2/3/4 superblock".into());
    }
    Err(OfflineError::NoRoot { looked: looked.join("; ") })
}

fn name(partition: usize) -> String {
    match partition {
        0 => "the whole disk".into(),
        n => format!("partition {n}"),
    }
}

/// Creates `dir`, empty, readable by its owner alone.
pub(crate) fn make_private(dir: &Path) -> OfflineResult<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().mode(0o700).create(dir).map_err(OfflineError::io(dir))
}

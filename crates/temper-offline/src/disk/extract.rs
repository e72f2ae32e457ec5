//! The guest's file system copied into a private host folder, read by a memory-safe reader
//! (`ext4-view`, which replays the journal in memory): no mount, no guest code, nothing written to
//! the disk. Owners and modes are kept, set-user-ID and set-group-ID bits included (set after the
//! owner: `debugfs rdump` sets the mode first, and the kernel's `chown` then clears those bits).
//!
//! Symbolic links are written so that they resolve inside the folder: the host's `oscap` in
//! offline mode (`OSCAP_PROBE_ROOT`) only prefixes the paths it is given, and the kernel then
//! follows a guest's `/etc/x -> /etc/shadow` to the *host's* file. Each link's target is the
//! guest path it resolves to in the guest's own file system (as `chroot` would), written relative
//! to the link, with no `..` past the folder's root.
//!
//! Device nodes, FIFOs and sockets are not created (a guest's device node would open the host's
//! device). Entries that cannot be read are listed, and the copy is then incomplete.
use std::ffi::OsStr;
use std::fs::{self, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, lchown, symlink};
use std::path::{Path, PathBuf};

use ext4_view::{Ext4, FileType};
use serde::Serialize;

use crate::error::{OfflineError, OfflineResult};

/// A file larger than the file system holds is sparse: its length is kept, its content not read.
const CHUNK: usize = 1 << 16;

/// What the copy holds, and what it left out.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Tree {
    pub root: PathBuf,
    /// Entries copied (directories, files, links).
    pub entries: u64,
    pub bytes: u64,
    /// Device nodes, FIFOs and sockets, not created.
    pub special: u64,
    /// Entries that could not be copied whole: the copy is incomplete.
    pub skipped: Vec<Skipped>,
}

impl Tree {
    /// Whether every entry but the special files was copied whole.
    pub fn complete(&self) -> bool {
        self.skipped.is_empty()
    }
}

/// An entry left out or cut short, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    /// The guest path, lossily as UTF-8.
    pub path: String,
    pub why: String,
}

/// Copies the whole of `fs` into `dest` (which must exist and be empty).
pub(crate) fn extract(fs: &Ext4, dest: &Path, fs_bytes: u64) -> OfflineResult<Tree> {
    let mut tree = Tree { root: dest.to_path_buf(), ..Tree::default() };
    // Directories get their owner and mode last: they stay writable while they are filled.
    let mut dirs: Vec<(PathBuf, u32, u32, u16)> = Vec::new();
    let root_meta = fs.metadata("/").map_err(ext4)?;
    dirs.push((dest.to_path_buf(), root_meta.uid(), root_meta.gid(), root_meta.mode()));
    // (guest path, host path, depth of the directory's entries).
    let mut stack: Vec<(Vec<u8>, PathBuf, usize)> = vec![(b"/".to_vec(), dest.to_path_buf(), 0)];
    while let Some((guest, host, depth)) = stack.pop() {
        let entries = match fs.read_dir(guest.as_slice()) {
            Ok(e) => e,
            Err(e) => {
                tree.skip(&guest, format!("directory does not read: {e}"));
                continue;
            }
        };
        for entry in entries {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    tree.skip(&guest, format!("an entry does not read: {e}"));
                    continue;
                }
            };
            let name = entry.file_name();
            let name: &[u8] = name.as_ref();
            if name == b"." || name == b".." {
                continue;
            }
            let gpath = join(&guest, name);
            let hpath = host.join(OsStr::from_bytes(name));
            let meta = match entry.metadata() {
                Ok(m) => m,
                Err(e) => {
                    tree.skip(&gpath, format!("its inode does not read: {e}"));
                    continue;
                }
            };
            let ft = meta.file_type();
            if ft.is_dir() {
                fs::create_dir(&hpath).map_err(OfflineError::io(&hpath))?;
                fs::set_permissions(&hpath, fs::Permissions::from_mode(0o700)).map_err(OfflineError::io(&hpath))?;
                dirs.push((hpath.clone(), meta.uid(), meta.gid(), meta.mode()));
                stack.push((gpath, hpath, depth + 1));
            } else if ft.is_symlink() {
                let target = match fs.read_link(gpath.as_slice()) {
                    Ok(t) => t,
                    Err(e) => {
                        tree.skip(&gpath, format!("link does not read: {e}"));
                        continue;
                    }
                };
                let inside = contained(fs, &guest, target.as_ref(), depth);
                symlink(OsStr::from_bytes(&inside), &hpath).map_err(OfflineError::io(&hpath))?;
                lchown(&hpath, Some(meta.uid()), Some(meta.gid())).map_err(OfflineError::io(&hpath))?;
            } else if ft == FileType::Regular {
                let len = meta.len();
                let mut out = OpenOptions::new().write(true).create_new(true).open(&hpath).map_err(OfflineError::io(&hpath))?;
                if len > fs_bytes {
                    out.set_len(len).map_err(OfflineError::io(&hpath))?;
                    tree.skip(&gpath, format!("sparse file of {len} bytes, larger than the file system: content not read"));
                } else {
                    match copy(fs, &gpath, &mut out) {
                        Ok(n) => tree.bytes += n,
                        Err(why) => tree.skip(&gpath, why),
                    }
                }
                drop(out);
                lchown(&hpath, Some(meta.uid()), Some(meta.gid())).map_err(OfflineError::io(&hpath))?;
                // After the owner: chown clears set-user-ID and set-group-ID.
                fs::set_permissions(&hpath, fs::Permissions::from_mode(meta.mode().into())).map_err(OfflineError::io(&hpath))?;
            } else {
                tree.special += 1;
                continue;
            }
            tree.entries += 1;
        }
    }
    for (path, uid, gid, mode) in dirs.into_iter().rev() {
        lchown(&path, Some(uid), Some(gid)).map_err(OfflineError::io(&path))?;
        fs::set_permissions(&path, fs::Permissions::from_mode(mode.into())).map_err(OfflineError::io(&path))?;
    }
    Ok(tree)
}

impl Tree {
    fn skip(&mut self, guest: &[u8], why: String) {
        self.skipped.push(Skipped { path: String::from_utf8_lossy(guest).into_owned(), why });
    }
}

fn ext4(e: ext4_view::Ext4Error) -> OfflineError {
    OfflineError::Ext4(e.to_string())
}

fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    let mut p = dir.to_vec();
    if p.last() != Some(&b'/') {
        p.push(b'/');
    }
    p.extend_from_slice(name);
    p
}

/// Copies a regular file's content, all-zero chunks as holes; the bytes read, or why it failed.
fn copy(fs: &Ext4, guest: &[u8], out: &mut fs::File) -> Result<u64, String> {
    use std::io::{Seek, SeekFrom};
    let mut f = fs.open(guest).map_err(|e| format!("does not open: {e}"))?;
    let mut buf = vec![0u8; CHUNK];
    let (mut n, mut hole) = (0u64, false);
    loop {
        let got = f.read(&mut buf).map_err(|e| format!("does not read at byte {n}: {e}"))?;
        if got == 0 {
            break;
        }
        if buf[..got].iter().all(|&b| b == 0) {
            out.seek(SeekFrom::Current(got as i64)).map_err(|e| e.to_string())?;
            hole = true;
        } else {
            out.write_all(&buf[..got]).map_err(|e| e.to_string())?;
            hole = false;
        }
        n += got as u64;
    }
    if hole {
        out.set_len(n).map_err(|e| e.to_string())?;
    }
    Ok(n)
}

/// The target to write for a link in guest directory `dir` (at `depth` below the root) pointing
/// at `target`: the guest path it resolves to in the guest's file system (or, when it resolves to
/// nothing, its lexical form with `..` stopped at the root), relative to `dir` and with no `..`
/// past the root, so the host's kernel never leaves the copy following it.
pub(crate) fn contained(fs: &Ext4, dir: &[u8], target: &[u8], depth: usize) -> Vec<u8> {
    let joined = if target.starts_with(b"/") { target.to_vec() } else { join(dir, target) };
    let parts = match fs.canonicalize(joined.as_slice()) {
        Ok(p) => components(p.as_ref()),
        Err(_) => components(&joined),
    };
    relative(&parts, depth)
}

/// An absolute path's components, `.` dropped and `..` taken back (never past the root).
fn components(path: &[u8]) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    for c in path.split(|&b| b == b'/') {
        match c {
            b"" | b"." => {}
            b".." => {
                out.pop();
            }
            c => out.push(c.to_vec()),
        }
    }
    out
}

/// `../` up to the root from `depth` directories down, then `parts`.
fn relative(parts: &[Vec<u8>], depth: usize) -> Vec<u8> {
    let mut out: Vec<u8> = Vec::new();
    for _ in 0..depth {
        out.extend_from_slice(b"../");
    }
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            out.push(b'/');
        }
        out.extend_from_slice(p);
    }
    if out.is_empty() {
        out.push(b'.');
    }
    if out.ends_with(b"/") {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_never_climbs_past_the_root() {
        assert_eq!(components(b"/a/../../../etc/./shadow"), [b"etc".to_vec(), b"shadow".to_vec()]);
        assert_eq!(relative(&components(b"/etc/shadow"), 2), b"../../etc/shadow");
        assert_eq!(relative(&components(b"/usr/lib"), 0), b"usr/lib");
        assert_eq!(relative(&[], 0), b".");
        assert_eq!(relative(&[], 3), b"../../..");
    }
}

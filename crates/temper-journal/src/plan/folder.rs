//! A plan's folder, read once into memory. Everything temper checks of a plan (its seal, its
//! scripts' sha256) and everything it applies comes from these bytes, never from the disk
//! again: a folder on a share that someone else can write cannot serve one thing to the check
//! and another to the run. No link is followed: a link, a device or a pipe anywhere in the
//! folder is refused.
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};

/// A file larger than this is no plan's (the ANSSI plan's largest file is under 200 KiB).
pub const MAX_FILE: u64 = 16 << 20;
/// Nor a folder larger than this, all files together.
pub const MAX_TOTAL: u64 = 128 << 20;

#[derive(Debug, thiserror::Error)]
pub enum FolderError {
    #[error("reading {}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("writing {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    #[error("{0} is not a plain file or folder (a link, a device or a pipe): a plan holds only files, and no link is followed")]
    NotAFile(String),
    #[error("`{0}`: a plan's file names are UTF-8 with no newline or backslash")]
    BadName(String),
    #[error("{file} is larger than {cap} bytes: no plan's file is")]
    TooLarge { file: String, cap: u64 },
    #[error("the plan's files come to more than {0} bytes: no plan does")]
    TooMuch(u64),
}

/// Every file of a plan's folder, by its path relative to the folder (`steps/001-x.fix.sh`),
/// with its bytes; and its folders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folder {
    root: PathBuf,
    files: BTreeMap<String, Vec<u8>>,
    dirs: BTreeSet<String>,
}

impl Folder {
    /// Reads `dir` whole, once: each file opened without following a link.
    pub fn read(dir: &Path) -> Result<Folder, FolderError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| FolderError::Io { path, source }
        };
        let top = std::fs::symlink_metadata(dir).map_err(io(dir))?;
        if !top.is_dir() {
            return Err(FolderError::NotAFile(dir.display().to_string()));
        }
        let mut folder = Folder { root: dir.to_path_buf(), files: BTreeMap::new(), dirs: BTreeSet::new() };
        let (mut todo, mut total) = (vec![String::new()], 0u64);
        while let Some(rel) = todo.pop() {
            let path = dir.join(&rel);
            for e in std::fs::read_dir(&path).map_err(io(&path))? {
                let e = e.map_err(io(&path))?;
                let raw = Path::new(&rel).join(e.file_name());
                let name = raw
                    .to_str()
                    .filter(|n| !n.contains(['\n', '\r', '\\']))
                    .ok_or_else(|| FolderError::BadName(raw.display().to_string()))?
                    .to_string();
                let kind = e.file_type().map_err(io(&e.path()))?;
                if kind.is_dir() {
                    folder.dirs.insert(name.clone());
                    todo.push(name);
                } else if kind.is_file() {
                    let bytes = read_file(&e.path(), &name)?;
                    total += bytes.len() as u64;
                    if total > MAX_TOTAL {
                        return Err(FolderError::TooMuch(MAX_TOTAL));
                    }
                    folder.files.insert(name, bytes);
                } else {
                    return Err(FolderError::NotAFile(name));
                }
            }
        }
        Ok(folder)
    }

    /// The folder it was read from.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The bytes of the file at `rel` (`plan.json`, `steps/001-x.fix.sh`), as read.
    pub fn file(&self, rel: &str) -> Option<&[u8]> {
        self.files.get(rel).map(Vec::as_slice)
    }

    /// Every file's path, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    /// Every folder's path (`steps`), sorted.
    pub fn dirs(&self) -> impl Iterator<Item = &str> {
        self.dirs.iter().map(String::as_str)
    }

    /// Writes these bytes into `dest`, a new folder only this user can read (0700; each file
    /// 0600): a private copy nobody else can change after it is checked. `dest` must not exist.
    pub fn write_private(&self, dest: &Path) -> Result<(), FolderError> {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| FolderError::Write { path, source }
        };
        let mut mkdir = std::fs::DirBuilder::new();
        mkdir.mode(0o700);
        mkdir.create(dest).map_err(io(dest))?;
        for d in &self.dirs {
            let p = dest.join(d);
            mkdir.create(&p).map_err(io(&p))?;
        }
        for (name, bytes) in &self.files {
            let p = dest.join(name);
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&p)
                .map_err(io(&p))?;
            std::io::Write::write_all(&mut f, bytes).map_err(io(&p))?;
        }
        Ok(())
    }
}

/// A file's bytes, opened without following a link and without blocking on a pipe, refused
/// when it is no plain file or is too large.
fn read_file(path: &Path, name: &str) -> Result<Vec<u8>, FolderError> {
    use std::os::unix::fs::OpenOptionsExt;
    let io = |source| FolderError::Io { path: path.to_path_buf(), source };
    let f = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path);
    let f = match f {
        Ok(f) => f,
        // A link swapped in after the folder was listed.
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err(FolderError::NotAFile(name.to_string())),
        Err(e) => return Err(io(e)),
    };
    let meta = f.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(FolderError::NotAFile(name.to_string()));
    }
    let mut bytes = Vec::with_capacity(meta.len().min(MAX_FILE) as usize);
    f.take(MAX_FILE + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(FolderError::TooLarge { file: name.to_string(), cap: MAX_FILE });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_file_once_and_refuses_links_and_pipes() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("plan");
        std::fs::create_dir_all(dir.join("steps")).unwrap();
        std::fs::write(dir.join("plan.json"), "{}").unwrap();
        std::fs::write(dir.join("steps/001-r.fix.sh"), "true\n").unwrap();
        let f = Folder::read(&dir).unwrap();
        assert_eq!(f.names().collect::<Vec<_>>(), ["plan.json", "steps/001-r.fix.sh"]);
        assert_eq!(f.dirs().collect::<Vec<_>>(), ["steps"]);
        // What was read stays what was read.
        std::fs::write(dir.join("plan.json"), "changed").unwrap();
        assert_eq!(f.file("plan.json"), Some(&b"{}"[..]));

        std::os::unix::fs::symlink("/etc/shadow", dir.join("steps/002-r.fix.sh")).unwrap();
        assert!(matches!(Folder::read(&dir), Err(FolderError::NotAFile(n)) if n == "steps/002-r.fix.sh"));
        std::fs::remove_file(dir.join("steps/002-r.fix.sh")).unwrap();
        std::os::unix::fs::symlink("/etc", dir.join("group_vars")).unwrap();
        assert!(matches!(Folder::read(&dir), Err(FolderError::NotAFile(n)) if n == "group_vars"));
        std::fs::remove_file(dir.join("group_vars")).unwrap();
        assert!(std::process::Command::new("mkfifo").arg(dir.join("pipe")).status().unwrap().success());
        assert!(matches!(Folder::read(&dir), Err(FolderError::NotAFile(n)) if n == "pipe"), "refused, without blocking");
        std::fs::remove_file(dir.join("pipe")).unwrap();
        // The folder itself must not be a link either.
        std::os::unix::fs::symlink(&dir, tmp.path().join("link")).unwrap();
        assert!(matches!(Folder::read(&tmp.path().join("link")), Err(FolderError::NotAFile(_))));
    }

    #[test]
    fn a_private_copy_holds_the_same_bytes_for_its_owner_alone() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("plan");
        std::fs::create_dir_all(dir.join("steps")).unwrap();
        std::fs::write(dir.join("plan.json"), "{}").unwrap();
        std::fs::write(dir.join("steps/001-r.fix.sh"), "true\n").unwrap();
        let f = Folder::read(&dir).unwrap();
        let copy = tmp.path().join("private");
        f.write_private(&copy).unwrap();
        let back = Folder::read(&copy).unwrap();
        assert_eq!((back.files, back.dirs), (f.files.clone(), f.dirs.clone()));
        for p in [copy.clone(), copy.join("steps"), copy.join("plan.json")] {
            let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode & 0o077, 0, "{}: {mode:o}", p.display());
        }
        assert!(f.write_private(&copy).is_err(), "an existing folder is not written into");
    }
}

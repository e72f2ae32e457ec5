//! The walk itself: one `find` in the guest, run as data, every entry under the roots it is
//! given (pruned ones listed but not entered), and the host's reading of what it printed.
use std::collections::HashMap;

use super::WalkError;

/// The collector, sent to the guest as data (`sh -s -- -- ROOT...`). GNU find only, which every
/// Debian and RHEL image has. One record per entry, NUL-terminated fields, so that any byte of a
/// name (a space, a newline, a byte that is not UTF-8) comes back as it is:
/// `TYPE MODE UID GID DEV FSTYPE\0PATH\0LINK\0`. A directory on a file system of [`PRUNED`]'s
/// types is listed but not entered (`/proc`, `/sys`, network mounts): no walk oscap makes for
/// local files enters them either. Arguments before `--` are more types to leave out.
pub const COLLECT: &str = r#"set -eu
fmt='%y %m %U %G %D %F\0%p\0%l\0'
prune='-fstype proc -o -fstype sysfs -o -fstype autofs -o -fstype nfs -o -fstype nfs4 -o -fstype cifs -o -fstype smb3 -o -fstype smbfs -o -fstype ceph -o -fstype glusterfs -o -fstype fuse.sshfs -o -fstype afs -o -fstype lustre'
while [ "$#" -gt 0 ] && [ "$1" != -- ]; do
  prune="$prune -o -fstype $1"; shift
done
[ "$#" -gt 0 ] && shift
# shellcheck disable=SC2086  # the prune list is words: -fstype T -o -fstype U
LC_ALL=C exec find -P "$@" \( $prune \) -printf "$fmt" -prune -o -printf "$fmt"
"#;

/// The file system types [`COLLECT`] lists but does not enter.
pub const PRUNED: &[&str] =
    &["proc", "sysfs", "autofs", "nfs", "nfs4", "cifs", "smb3", "smbfs", "ceph", "glusterfs", "fuse.sshfs", "afs", "lustre"];

/// What an entry is, as `find -printf %y` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Regular,
    Directory,
    Symlink,
    Block,
    Char,
    Fifo,
    Socket,
}

impl Kind {
    fn from_find(c: u8) -> Option<Self> {
        Some(match c {
            b'f' => Self::Regular,
            b'd' => Self::Directory,
            b'l' => Self::Symlink,
            b'b' => Self::Block,
            b'c' => Self::Char,
            b'p' => Self::Fifo,
            b's' => Self::Socket,
            _ => return None,
        })
    }

    /// The name OVAL's file items give it (`type`).
    pub fn oval(self) -> &'static str {
        match self {
            Self::Regular => "regular",
            Self::Directory => "directory",
            Self::Symlink => "symbolic link",
            Self::Block => "block special",
            Self::Char => "character special",
            Self::Fifo => "named pipe",
            Self::Socket => "socket",
        }
    }
}

/// One entry of the walk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: Vec<u8>,
    pub kind: Kind,
    /// Permission bits with setuid, setgid and sticky (`mode & 0o7777`).
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    pub dev: u64,
    /// The file system's type (`ext4`, `tmpfs`, `proc`).
    pub fs: String,
    /// A symlink's target, as stored.
    pub link: Option<Vec<u8>>,
}

impl Entry {
    /// The last component of the path (the root `/` is its own name).
    pub fn name(&self) -> &[u8] {
        match self.path.iter().rposition(|&b| b == b'/') {
            Some(i) if i + 1 < self.path.len() => &self.path[i + 1..],
            _ => &self.path,
        }
    }
}

/// Every entry of one walk, by path, with each directory's children.
#[derive(Debug, Default)]
pub struct Listing {
    entries: Vec<Entry>,
    by_path: HashMap<Vec<u8>, usize>,
    children: HashMap<usize, Vec<usize>>,
}

impl Listing {
    /// Reads what [`COLLECT`] printed. A record cut short or a field that does not parse is an
    /// error naming the record's number: a walk read in part would be evidence of nothing.
    pub fn parse(out: &[u8]) -> Result<Self, WalkError> {
        if out.last().is_some_and(|&b| b != 0) {
            return Err(WalkError::Record { n: out.iter().filter(|&&b| b == 0).count() / 3 + 1, why: "cut short".into() });
        }
        let mut fields = out.split(|&b| b == 0);
        let mut l = Listing::default();
        let mut n = 0usize;
        while let Some(head) = fields.next() {
            if head.is_empty() && fields.clone().next().is_none() {
                break; // the NUL that ends the last record
            }
            n += 1;
            let (path, link) = match (fields.next(), fields.next()) {
                (Some(p), Some(k)) => (p.to_vec(), k.to_vec()),
                _ => return Err(WalkError::Record { n, why: "cut short".into() }),
            };
            let e = entry(head, path, link).map_err(|why| WalkError::Record { n, why })?;
            l.push(e);
        }
        l.link_children();
        Ok(l)
    }

    fn push(&mut self, mut e: Entry) {
        e.path = normal(&e.path);
        let path = e.path.clone();
        if self.by_path.contains_key(&path) {
            return; // a root given twice, or inside another root
        }
        self.by_path.insert(path, self.entries.len());
        self.entries.push(e);
    }

    fn link_children(&mut self) {
        for (i, e) in self.entries.iter().enumerate() {
            let p = normal(&e.path);
            if p == b"/" {
                continue;
            }
            let parent = match p.iter().rposition(|&b| b == b'/') {
                Some(0) => b"/".to_vec(),
                Some(j) => p[..j].to_vec(),
                None => continue,
            };
            if let Some(&pi) = self.by_path.get(&parent) {
                self.children.entry(pi).or_default().push(i);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The entry at `path` (no symlink followed), if the walk saw it.
    pub fn get(&self, path: &[u8]) -> Option<usize> {
        self.by_path.get(&normal(path)).copied()
    }

    pub fn entry(&self, i: usize) -> &Entry {
        &self.entries[i]
    }

    /// The entries directly in directory `i`.
    pub fn children(&self, i: usize) -> &[usize] {
        self.children.get(&i).map_or(&[], Vec::as_slice)
    }

    /// `path` with its symlinks resolved as the kernel would. A step above the walk's roots is
    /// taken as a plain directory. `None`: the path is not in the walk, or its links loop.
    pub fn resolve(&self, path: &[u8]) -> Option<usize> {
        let mut todo: Vec<Vec<u8>> = components(path).into_iter().rev().collect();
        let mut cur: Vec<u8> = b"/".to_vec();
        let mut hops = 0;
        while let Some(c) = todo.pop() {
            match c.as_slice() {
                b"." => continue,
                b".." => {
                    cur = parent(&cur);
                    continue;
                }
                _ => {}
            }
            let next = join(&cur, &c);
            let Some(i) = self.get(&next) else {
                cur = next;
                continue;
            };
            let e = self.entry(i);
            match (&e.kind, &e.link) {
                (Kind::Symlink, Some(target)) => {
                    hops += 1;
                    if hops > 40 {
                        return None;
                    }
                    if target.starts_with(b"/") {
                        cur = b"/".to_vec();
                    }
                    todo.extend(components(target).into_iter().rev());
                }
                _ => cur = next,
            }
        }
        self.get(&cur)
    }
}

fn entry(head: &[u8], path: Vec<u8>, link: Vec<u8>) -> Result<Entry, String> {
    let head = std::str::from_utf8(head).map_err(|_| "its head is not text".to_string())?;
    let f: Vec<&str> = head.split(' ').collect();
    let [kind, mode, uid, gid, dev, fs] = f.as_slice() else {
        return Err(format!("its head has {} fields, not 6: {head:?}", f.len()));
    };
    let kind = kind.bytes().next().filter(|_| kind.len() == 1).and_then(Kind::from_find).ok_or_else(|| format!("type {kind:?}"))?;
    let num = |v: &str, what: &str| v.parse::<u64>().map_err(|_| format!("{what} {v:?}"));
    let mode = u32::from_str_radix(mode, 8).map_err(|_| format!("mode {mode:?}"))?;
    if path.is_empty() {
        return Err("an empty path".into());
    }
    Ok(Entry {
        path,
        kind,
        mode: mode & 0o7777,
        uid: u32::try_from(num(uid, "uid")?).map_err(|_| format!("uid {uid:?}"))?,
        gid: u32::try_from(num(gid, "gid")?).map_err(|_| format!("gid {gid:?}"))?,
        dev: num(dev, "device")?,
        fs: fs.to_string(),
        link: (kind == Kind::Symlink).then_some(link),
    })
}

/// `path` without a trailing `/` (but `/` itself) and without doubled ones.
pub(crate) fn normal(path: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(path.len());
    for &b in path {
        if b == b'/' && out.last() == Some(&b'/') {
            continue;
        }
        out.push(b);
    }
    if out.len() > 1 && out.last() == Some(&b'/') {
        out.pop();
    }
    out
}

fn components(path: &[u8]) -> Vec<Vec<u8>> {
    path.split(|&b| b == b'/').filter(|c| !c.is_empty()).map(<[u8]>::to_vec).collect()
}

pub(crate) fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    let mut p = dir.to_vec();
    if p.last() != Some(&b'/') {
        p.push(b'/');
    }
    p.extend_from_slice(name);
    p
}

fn parent(path: &[u8]) -> Vec<u8> {
    match path.iter().rposition(|&b| b == b'/') {
        Some(0) | None => b"/".to_vec(),
        Some(i) => path[..i].to_vec(),
    }
}

//! The walk itself: one `find` in the guest, run as data, every entry under the roots it is
//! given (pruned ones listed but not entered), and the host's reading of what it printed.
//!
//! The listing keeps the walk's output as it came (one buffer) and, per entry, 40 bytes that
//! point into it, with the entries of each directory in one shared array, sorted by name: no
//! allocation per entry, and no recursion over it (the tree is built from `find`'s order with a
//! stack of its own). Its bounds: [`MAX_ENTRIES`] entries; the output itself is capped by the
//! caller (the scanner's `MAX_WALK`).
use std::collections::HashMap;

use super::WalkError;
use super::gap::{Gap, GapAt};

/// The collector, sent to the guest as data (`sh -s -- [TYPE...] -- ROOT...`). GNU find only, which
/// every Debian and RHEL image has. One record per entry, NUL-terminated fields, so that any
/// byte of a name (a space, a newline, a byte that is not UTF-8) comes back as it is:
/// `TYPE MODE UID GID DEV FSTYPE\0PATH\0LINK\0`. A directory on a file system of [`PRUNED`]'s
/// types is listed but not entered (`/proc`, `/sys`, network mounts): no walk oscap makes for
/// local files enters them either. Arguments before `--` are more types to leave out. What
/// `find` could not read it says on stderr (`find: 'PATH': WHY`), and exits 1
/// ([`Listing::read_errors`]).
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

/// Most entries a listing holds: past it the walk is not used, and oscap walks. A host with
/// build trees had 699,437 here; 8 Mi entries take 320 MiB of index beside the output.
pub const MAX_ENTRIES: usize = 8 << 20;

/// Most distinct file systems (device and type) a listing tells apart.
const MAX_MOUNTS: usize = u16::MAX as usize;

/// What an entry is, as `find -printf %y` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryKind {
    Regular,
    Directory,
    Symlink,
    Block,
    Char,
    Fifo,
    Socket,
}

impl EntryKind {
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

/// A run of bytes of the walk's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Span {
    at: u32,
    len: u32,
}

/// One entry of the walk: what it is, its mode and owners; its path, link target, file system
/// and children through the [`Listing`] (`path`, `name`, `link`, `fs`, `dev`, `children`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListedEntry {
    path: Span,
    link: Span,
    /// Its children in [`Listing::kids`].
    kids: Span,
    pub uid: u32,
    pub gid: u32,
    /// Its file system, in [`Listing::mounts`].
    mount: u16,
    /// Permission bits with setuid, setgid and sticky (`mode & 0o7777`).
    pub mode: u16,
    pub kind: EntryKind,
}

/// Every entry of one walk, as a tree.
#[derive(Debug, Default)]
pub struct Listing {
    /// What the walk printed; paths and link targets are read from it (paths normalized in
    /// place: no doubled `/`, none at the end).
    out: Vec<u8>,
    entries: Vec<ListedEntry>,
    /// Each directory's entries, one run per directory, sorted by name.
    kids: Vec<u32>,
    /// (device, type) of each file system seen.
    mounts: Vec<(u64, String)>,
    /// Directories whose listing is incomplete (`find` could not read them or something in
    /// them), with why: see [`Listing::read_errors`].
    gaps: HashMap<u32, GapAt>,
    /// The roots `find` was given, none under another.
    roots: Vec<u32>,
}

impl Listing {
    /// Reads what [`COLLECT`] printed. A record cut short, a field that does not parse, an
    /// entry out of `find`'s order (each one directly under an earlier directory, or a root
    /// under no earlier root) or none at all is an error naming the record's number: a walk
    /// read in part would be evidence of nothing.
    pub fn parse(out: impl Into<Vec<u8>>) -> Result<Self, WalkError> {
        let out: Vec<u8> = out.into();
        let nuls = out.iter().filter(|&&b| b == 0).count();
        if out.last().is_some_and(|&b| b != 0) || nuls % 3 != 0 {
            return Err(WalkError::Record { n: nuls / 3 + 1, why: "cut short".into() });
        }
        let n = nuls / 3;
        if n == 0 {
            return Err(WalkError::Record { n: 1, why: "no entries, not even a root".into() });
        }
        if n > MAX_ENTRIES {
            return Err(WalkError::TooLarge(format!("{n} entries, over {MAX_ENTRIES}")));
        }
        if u32::try_from(out.len()).is_err() {
            return Err(WalkError::TooLarge(format!("{} bytes, over 4 GiB", out.len())));
        }
        let mut l = Listing { out, entries: Vec::with_capacity(n), ..Listing::default() };
        // The parent of each entry, while the tree is built.
        let mut parents: Vec<u32> = Vec::with_capacity(n);
        let mut stack: Vec<u32> = Vec::new();
        let mut mounts: HashMap<(u64, Vec<u8>), u16> = HashMap::new();
        let mut at = 0usize;
        for k in 0..n {
            let bad = |why: String| WalkError::Record { n: k + 1, why };
            let head_end = at + l.out[at..].iter().position(|&b| b == 0).expect("counted");
            let path_end = head_end + 1 + l.out[head_end + 1..].iter().position(|&b| b == 0).expect("counted");
            let link_end = path_end + 1 + l.out[path_end + 1..].iter().position(|&b| b == 0).expect("counted");
            let head = head_fields(&l.out[at..head_end]).map_err(bad)?;
            if path_end == head_end + 1 {
                return Err(bad("an empty path".into()));
            }
            let path = normalize(&mut l.out, head_end + 1, path_end);
            let key = (head.dev, l.out[head.fs.0 + at..head.fs.1 + at].to_vec());
            let mount = match mounts.get(&key) {
                Some(&m) => m,
                None if mounts.len() < MAX_MOUNTS => {
                    let m = mounts.len() as u16;
                    l.mounts.push((head.dev, String::from_utf8_lossy(&key.1).into_owned()));
                    mounts.insert(key, m);
                    m
                }
                None => return Err(WalkError::TooLarge(format!("over {MAX_MOUNTS} file systems"))),
            };
            let link = if head.kind == EntryKind::Symlink { span(path_end + 1, link_end) } else { Span::default() };
            let i = k as u32;
            l.entries.push(ListedEntry {
                path,
                link,
                kids: Span::default(),
                uid: head.uid,
                gid: head.gid,
                mount,
                mode: head.mode,
                kind: head.kind,
            });
            let dir = parent(l.bytes(path));
            while let Some(&top) = stack.last() {
                if l.bytes(l.entries[top as usize].path) == dir && l.bytes(path) != b"/" {
                    break;
                }
                stack.pop();
            }
            match stack.last() {
                Some(&p) => parents.push(p),
                // A root: under no earlier one (`find` lists each root's tree before the next).
                None if l.root_of(l.bytes(path)).is_none() => {
                    parents.push(u32::MAX);
                    l.roots.push(i);
                }
                None => return Err(bad("an entry not directly under a directory listed before it".into())),
            }
            if head.kind == EntryKind::Directory {
                stack.push(i);
            }
            at = link_end + 1;
        }
        l.link_children(&parents)?;
        Ok(l)
    }

    /// Each directory's children in one array, a run per directory, sorted by name; a name
    /// listed twice in one directory is an error.
    fn link_children(&mut self, parents: &[u32]) -> Result<(), WalkError> {
        let mut count = vec![0u32; self.entries.len()];
        for &p in parents.iter().filter(|&&p| p != u32::MAX) {
            count[p as usize] += 1;
        }
        let mut next = 0u32;
        for (e, c) in self.entries.iter_mut().zip(&count) {
            e.kids = Span { at: next, len: 0 };
            next += c;
        }
        self.kids = vec![0; next as usize];
        for (i, &p) in parents.iter().enumerate().filter(|(_, p)| **p != u32::MAX) {
            let e = &mut self.entries[p as usize];
            self.kids[(e.kids.at + e.kids.len) as usize] = i as u32;
            e.kids.len += 1;
        }
        let (out, entries) = (&self.out, &self.entries);
        let name = |i: u32| last(bytes(out, entries[i as usize].path));
        for e in entries {
            let run = &mut self.kids[e.kids.at as usize..(e.kids.at + e.kids.len) as usize];
            run.sort_unstable_by(|&a, &b| name(a).cmp(name(b)));
            if let Some(w) = run.windows(2).find(|w| name(w[0]) == name(w[1])) {
                return Err(WalkError::Record { n: w[1] as usize + 1, why: "a name listed twice in one directory".into() });
            }
        }
        Ok(())
    }

    fn bytes(&self, s: Span) -> &[u8] {
        bytes(&self.out, s)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The bytes this listing holds: the walk's output and its index.
    pub fn size(&self) -> usize {
        self.out.capacity() + self.entries.capacity() * size_of::<ListedEntry>() + self.kids.capacity() * size_of::<u32>()
    }

    pub fn entry(&self, i: usize) -> &ListedEntry {
        &self.entries[i]
    }

    /// The entry's path, as the walk printed it (normalized).
    pub fn path(&self, i: usize) -> &[u8] {
        self.bytes(self.entries[i].path)
    }

    /// The last component of the entry's path (the root `/` is its own name).
    pub fn name(&self, i: usize) -> &[u8] {
        last(self.path(i))
    }

    /// A symlink's target, as stored.
    pub fn link(&self, i: usize) -> Option<&[u8]> {
        let e = &self.entries[i];
        (e.kind == EntryKind::Symlink).then(|| self.bytes(e.link))
    }

    /// The type of the entry's file system (`ext4`, `tmpfs`, `proc`).
    pub fn fs(&self, i: usize) -> &str {
        &self.mounts[self.entries[i].mount as usize].1
    }

    /// The device of the entry's file system.
    pub fn dev(&self, i: usize) -> u64 {
        self.mounts[self.entries[i].mount as usize].0
    }

    /// The entries directly in directory `i`, sorted by name.
    pub fn children(&self, i: usize) -> impl ExactSizeIterator<Item = usize> + '_ {
        let k = self.entries[i].kids;
        self.kids[k.at as usize..(k.at + k.len) as usize].iter().map(|&c| c as usize)
    }

    /// Every directory of the walk.
    pub fn directories(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.entries.len()).filter(|&i| self.entries[i].kind == EntryKind::Directory)
    }

    /// The entry at `path` (no symlink followed), if the walk saw it.
    pub fn get(&self, path: &[u8]) -> Option<usize> {
        match self.locate(path) {
            Located::At(i) => Some(i),
            _ => None,
        }
    }

    /// The root `path` is at or under, and the rest of `path` below it (empty at the root).
    fn root_of<'p>(&self, path: &'p [u8]) -> Option<(usize, &'p [u8])> {
        self.roots.iter().map(|&r| r as usize).find_map(|r| {
            let root = self.path(r);
            if path == root {
                Some((r, &path[path.len()..]))
            } else if root == b"/" {
                Some((r, &path[1..]))
            } else if path.starts_with(root) && path.get(root.len()) == Some(&b'/') {
                Some((r, &path[root.len() + 1..]))
            } else {
                None
            }
        })
    }

    /// Where `path` (no symlink followed) is in the walk: an entry, or not there, or not known
    /// because the directory it would be in is a gap (its listing incomplete).
    pub fn locate(&self, path: &[u8]) -> Located {
        let path = normal(path);
        let Some((mut cur, rest)) = self.root_of(&path) else { return Located::Missing };
        if rest.is_empty() {
            return Located::At(cur);
        }
        for c in rest.split(|&b| b == b'/') {
            let k = self.entries[cur].kids;
            let run = &self.kids[k.at as usize..(k.at + k.len) as usize];
            match run.binary_search_by(|&i| self.name(i as usize).cmp(c)) {
                Ok(j) => cur = run[j] as usize,
                Err(_) if self.gaps.contains_key(&(cur as u32)) => return Located::Behind(cur),
                Err(_) => return Located::Missing,
            }
        }
        Located::At(cur)
    }

    /// `path` with its symlinks resolved as the kernel would. A step above the walk's root is
    /// taken as a plain directory. `None`: the path is not in the walk, or its links loop.
    pub fn resolve(&self, path: &[u8]) -> Option<usize> {
        match self.resolve_located(path) {
            Located::At(i) => Some(i),
            _ => None,
        }
    }

    /// As [`Listing::resolve`], saying whether a path not found lies behind a gap.
    pub fn resolve_located(&self, path: &[u8]) -> Located {
        let mut todo: Vec<&[u8]> = components(path).rev().collect();
        let mut cur: Vec<u8> = b"/".to_vec();
        let mut hops = 0;
        while let Some(c) = todo.pop() {
            match c {
                b"." => continue,
                b".." => {
                    cur = parent(&cur).to_vec();
                    continue;
                }
                _ => {}
            }
            let next = join(&cur, c);
            let i = match self.locate(&next) {
                Located::At(i) => i,
                Located::Behind(g) => return Located::Behind(g),
                Located::Missing => {
                    cur = next;
                    continue;
                }
            };
            match self.link(i) {
                Some(target) => {
                    hops += 1;
                    if hops > 40 {
                        return Located::Missing;
                    }
                    if target.starts_with(b"/") {
                        cur = b"/".to_vec();
                    }
                    todo.extend(components(target).rev());
                }
                None => cur = next,
            }
        }
        self.locate(&cur)
    }

    /// What `find` said on stderr, where it could not read a directory or stat an entry, read
    /// into gaps: the directory named (when it is one the walk listed) and the directory it is
    /// in, whose listing may then lack it, or show a directory `find` could not enter as one it
    /// did. A line that does not read as `find: 'PATH': WHY`, or a path outside the walk's root,
    /// is an error: the walk is then not used at all.
    pub fn read_errors(&mut self, stderr: &[u8]) -> Result<(), WalkError> {
        for line in stderr.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let (path, why) = super::gap::find_error(line)
                .ok_or_else(|| WalkError::Errors(String::from_utf8_lossy(&line[..line.len().min(300)]).into_owned()))?;
            let gap = Gap::of_find(&why);
            let at = GapAt { gap, path: super::judge::name_text(&path) };
            let mut marked = false;
            if let Located::At(i) = self.locate(&path).or_nearest(self, &path)
                && self.entries[i].kind == EntryKind::Directory
            {
                self.gaps.entry(i as u32).or_insert_with(|| at.clone());
                marked = true;
            }
            let up = parent(&normal(&path)).to_vec();
            if let Located::At(i) = self.locate(&up).or_nearest(self, &up) {
                self.gaps.entry(i as u32).or_insert(at);
                marked = true;
            }
            if !marked {
                return Err(WalkError::Errors(format!("an error outside the walk: {}", String::from_utf8_lossy(&path))));
            }
        }
        Ok(())
    }

    /// Whether directory `i`'s listing is incomplete, and why.
    pub fn gap(&self, i: usize) -> Option<&GapAt> {
        self.gaps.get(&(i as u32))
    }

    /// The first gap of the walk, if any (by entry, so the same walk names the same one).
    pub fn any_gap(&self) -> Option<&GapAt> {
        self.gaps.iter().min_by_key(|(i, _)| **i).map(|(_, g)| g)
    }
}

/// Where a path is in a walk ([`Listing::locate`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Located {
    At(usize),
    Missing,
    /// Not in the walk, and directory `.0`, where it would be, is a gap.
    Behind(usize),
}

impl Located {
    /// The nearest directory the walk has at or above `path`, when `path` is not in it.
    fn or_nearest(self, walk: &Listing, path: &[u8]) -> Located {
        match self {
            Located::At(_) => self,
            Located::Behind(d) => Located::At(d),
            Located::Missing => {
                let mut p = normal(path);
                while p.len() > 1 {
                    p = parent(&p).to_vec();
                    if let Some(i) = walk.get(&p) {
                        return Located::At(i);
                    }
                }
                Located::Missing
            }
        }
    }
}

/// A record's head: `TYPE MODE UID GID DEV FSTYPE`, the type's span relative to the head.
struct Head {
    kind: EntryKind,
    mode: u16,
    uid: u32,
    gid: u32,
    dev: u64,
    fs: (usize, usize),
}

fn head_fields(head: &[u8]) -> Result<Head, String> {
    let text = std::str::from_utf8(head).map_err(|_| "its head is not text".to_string())?;
    let f: Vec<&str> = text.split(' ').collect();
    let [kind, mode, uid, gid, dev, fs] = f.as_slice() else {
        return Err(format!("its head has {} fields, not 6: {text:?}", f.len()));
    };
    let kind = kind.bytes().next().filter(|_| kind.len() == 1).and_then(EntryKind::from_find).ok_or_else(|| format!("type {kind:?}"))?;
    let num = |v: &str, what: &str| v.parse::<u64>().map_err(|_| format!("{what} {v:?}"));
    let mode = u32::from_str_radix(mode, 8).map_err(|_| format!("mode {mode:?}"))?;
    let fs_at = text.len() - fs.len();
    Ok(Head {
        kind,
        mode: (mode & 0o7777) as u16,
        uid: u32::try_from(num(uid, "uid")?).map_err(|_| format!("uid {uid:?}"))?,
        gid: u32::try_from(num(gid, "gid")?).map_err(|_| format!("gid {gid:?}"))?,
        dev: num(dev, "device")?,
        fs: (fs_at, text.len()),
    })
}

fn span(from: usize, to: usize) -> Span {
    Span { at: from as u32, len: (to - from) as u32 }
}

fn bytes(out: &[u8], s: Span) -> &[u8] {
    &out[s.at as usize..(s.at + s.len) as usize]
}

/// Normalizes the path at `out[from..to]` in place (see [`normal`]); its span.
fn normalize(out: &mut [u8], from: usize, to: usize) -> Span {
    let mut w = from;
    for r in from..to {
        let b = out[r];
        if b == b'/' && w > from && out[w - 1] == b'/' {
            continue;
        }
        out[w] = b;
        w += 1;
    }
    if w - from > 1 && out[w - 1] == b'/' {
        w -= 1;
    }
    span(from, w)
}

/// `path` without a trailing `/` (but `/` itself) and without doubled ones.
pub(crate) fn normal(path: &[u8]) -> Vec<u8> {
    let mut out = path.to_vec();
    let s = normalize(&mut out, 0, path.len());
    out.truncate(s.len as usize);
    out
}

/// The last component of a normalized path (`/` is its own).
fn last(path: &[u8]) -> &[u8] {
    match path.iter().rposition(|&b| b == b'/') {
        Some(i) if i + 1 < path.len() => &path[i + 1..],
        _ => path,
    }
}

fn components(path: &[u8]) -> impl DoubleEndedIterator<Item = &[u8]> {
    path.split(|&b| b == b'/').filter(|c| !c.is_empty())
}

pub(crate) fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    let mut p = dir.to_vec();
    if p.last() != Some(&b'/') {
        p.push(b'/');
    }
    p.extend_from_slice(name);
    p
}

/// The directory a normalized path is in (`/` for `/` and what is directly under it).
pub(crate) fn parent(path: &[u8]) -> &[u8] {
    match path.iter().rposition(|&b| b == b'/') {
        Some(0) | None => b"/",
        Some(i) => &path[..i],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(records: &[(&str, &str)]) -> Result<Listing, WalkError> {
        let mut out = Vec::new();
        for (head, path) in records {
            out.extend_from_slice(head.as_bytes());
            out.push(0);
            out.extend_from_slice(path.as_bytes());
            out.extend_from_slice(b"\0\0");
        }
        Listing::parse(out)
    }

    const D: &str = "d 755 0 0 1 ext4";
    const F: &str = "f 644 0 0 1 ext4";

    #[test]
    fn the_tree_is_read_from_finds_order_with_each_directorys_entries_by_name() {
        let l = listing(&[(D, "/r/"), (D, "/r/b"), (F, "/r/b/x"), (F, "/r//a"), (D, "/r/c")]).unwrap();
        assert_eq!(l.path(0), b"/r");
        let names: Vec<&[u8]> = l.children(0).map(|i| l.name(i)).collect();
        assert_eq!(names, [&b"a"[..], b"b", b"c"]);
        assert_eq!(l.get(b"/r/b/x").map(|i| l.path(i)), Some(&b"/r/b/x"[..]));
        assert_eq!(l.get(b"/r//b/"), l.get(b"/r/b"));
        assert_eq!((l.get(b"/r/b/y"), l.get(b"/other")), (None, None));
        assert_eq!(l.fs(2), "ext4");
    }

    #[test]
    fn an_entry_out_of_finds_order_or_listed_twice_is_an_error() {
        let e = listing(&[(D, "/r"), (F, "/r/d/x")]).unwrap_err().to_string();
        assert!(e.contains("record 2") && e.contains("not directly under"), "a file in a directory never listed: {e}");
        let e = listing(&[(D, "/r"), (D, "/s"), (F, "/r/x")]).unwrap_err().to_string();
        assert!(e.contains("record 3"), "back under an earlier root: {e}");
        let two = listing(&[(D, "/r"), (F, "/r/x"), (D, "/s"), (F, "/s/y")]).unwrap();
        assert_eq!((two.get(b"/r/x"), two.get(b"/s/y"), two.get(b"/t")), (Some(1), Some(3), None), "two roots");
        let e = listing(&[(D, "/r"), (F, "/r/x"), (F, "/r/x")]).unwrap_err().to_string();
        assert!(e.contains("twice"), "{e}");
    }

    #[test]
    fn finds_errors_make_gaps_of_the_directories_they_name_and_those_they_are_in() {
        let mut l = listing(&[(D, "/r"), (D, "/r/home"), (D, "/r/home/u"), (D, "/r/locked"), (D, "/r/ok")]).unwrap();
        l.read_errors(b"find: '/r/home/u/fuse': Permission denied\nfind: '/r/locked': Permission denied\n").unwrap();
        let gap = |p: &[u8]| l.get(p).and_then(|i| l.gap(i)).map(|g| (g.gap, g.path.clone()));
        assert_eq!(gap(b"/r/home/u"), Some((Gap::Unreadable, "/r/home/u/fuse".to_string())));
        assert_eq!(gap(b"/r/locked").map(|g| g.0), Some(Gap::Unreadable));
        assert_eq!(gap(b"/r").map(|g| g.0), Some(Gap::Unreadable), "the directory /r/locked is in");
        assert_eq!((gap(b"/r/home"), gap(b"/r/ok")), (None, None));
        assert_eq!(l.locate(b"/r/home/u/fuse/x"), Located::Behind(l.get(b"/r/home/u").unwrap()));
        assert_eq!(l.locate(b"/r/ok/x"), Located::Missing);
        for bad in [&b"find: something else\n"[..], b"find: '/elsewhere': Permission denied\n"] {
            assert!(listing(&[(D, "/r")]).unwrap().read_errors(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn more_entries_than_the_bound_are_refused_before_any_is_read() {
        let mut out = Vec::new();
        for _ in 0..=MAX_ENTRIES {
            out.extend_from_slice(b"\0\0\0");
        }
        let e = Listing::parse(out).unwrap_err().to_string();
        assert!(e.contains(&format!("{} entries", MAX_ENTRIES + 1)), "{e}");
    }
}

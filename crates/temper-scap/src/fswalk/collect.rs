//! A walking object's items, collected from the walk on the host as oscap's file probe would
//! collect them in the guest: the same paths, the same order of no importance, the same flag.
//! Where the walk cannot give what oscap's walk would (a gap in its reach, a file system it
//! leaves out, a path past PATH_MAX), the object is refused with why: it goes to oscap.
//!
//! An item is 16 bytes (the entry, and how its path is shown), its names read from the walk:
//! a set of every file under `/` costs no allocation per item. Directories are visited from a
//! stack of their own, not by recursion.
use std::borrow::Cow;

use super::WalkError;
use super::gap::{Gap, GapAt};
use super::listing::{EntryKind, Listing, Located, PRUNED, normal, parent};
use super::object::{Entity, EntityOp, EntityValue, FsScope, ObjectTarget, WalkObject};
use super::pattern::{NotUtf8, Pattern};
use crate::oval::Flag;

/// The longest path oscap's file probe reaches (PATH_MAX less its NUL): past it, the object
/// goes to oscap.
pub const PATH_MAX: usize = 4095;

/// An item whose path is the entry's own (no start through a symlink).
const OWN: u32 = u32::MAX;

/// One collected item: the entry it stands for, what kind of item it is, and the start it was
/// found from ([`Collected::names`] gives its path and file name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalkItem {
    pub entry: usize,
    role: Role,
    start: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A starting directory as the object writes it (perhaps a symlink to one).
    Start,
    /// A directory found under a start.
    Dir,
    /// A file: named by the directory it is in, and its name.
    File,
}

impl WalkItem {
    /// Whether it is a file item (with a file name), not a directory item.
    pub fn is_file(&self) -> bool {
        self.role == Role::File
    }
}

/// A start reached through a symlink: its path as the object writes it, and the directory it is.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Start {
    shown: Vec<u8>,
    dir: usize,
}

/// An item's names as oscap writes them: its path (the directory, for a file item) and its file
/// name (none for a directory item).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemNames<'a> {
    pub path: Cow<'a, [u8]>,
    pub filename: Option<&'a [u8]>,
}

impl ItemNames<'_> {
    /// The file path (`path/filename`); none for a directory item.
    pub fn filepath(&self) -> Option<Vec<u8>> {
        self.filename.map(|name| {
            let mut p = self.path.to_vec();
            if p.last() != Some(&b'/') {
                p.push(b'/');
            }
            p.extend_from_slice(name);
            p
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collected {
    pub items: Vec<WalkItem>,
    pub flag: Flag,
    starts: Vec<Start>,
}

impl Collected {
    /// The item `i`'s path and file name, as oscap names them: under the object's start as written,
    /// even where that is a symlink.
    pub fn names<'a>(&'a self, walk: &'a Listing, i: &WalkItem) -> ItemNames<'a> {
        let own = walk.path(i.entry);
        match i.role {
            Role::Start => ItemNames { path: Cow::Borrowed(&self.starts[i.start as usize].shown), filename: None },
            Role::Dir => ItemNames { path: self.shown(walk, i.start, own), filename: None },
            Role::File => ItemNames { path: self.shown(walk, i.start, parent(own)), filename: Some(walk.name(i.entry)) },
        }
    }

    /// `path` (an entry's, or the directory it is in) as shown under start `s`.
    fn shown<'a>(&'a self, walk: &'a Listing, s: u32, path: &'a [u8]) -> Cow<'a, [u8]> {
        if s == OWN {
            return Cow::Borrowed(path);
        }
        let start = &self.starts[s as usize];
        Cow::Owned(under(&start.shown, walk.path(start.dir), path))
    }

    /// Sorts the items by path and file name, and drops those named twice (one entry reached
    /// from two starts).
    fn settle(&mut self, walk: &Listing) {
        let mut items = std::mem::take(&mut self.items);
        let key = |i: &WalkItem| self.names(walk, i);
        items.sort_unstable_by(|a, b| {
            let (x, y) = (key(a), key(b));
            x.path.cmp(&y.path).then(x.filename.cmp(&y.filename)).then(a.entry.cmp(&b.entry))
        });
        items.dedup_by(|a, b| key(a) == key(b));
        self.items = items;
    }
}

/// `path`, which is `real` or under it, as shown under `shown`.
fn under(shown: &[u8], real: &[u8], path: &[u8]) -> Vec<u8> {
    let rest = if real == b"/" { path } else { &path[real.len()..] };
    let mut p = shown.to_vec();
    if !rest.is_empty() && rest != b"/" {
        if p.last() == Some(&b'/') {
            p.pop();
        }
        p.extend_from_slice(rest);
    }
    p
}

/// The file system types that oscap (1.3) does not count as local: pseudo and network ones.
const NOT_LOCAL: &[&str] = &[
    "proc",
    "sysfs",
    "autofs",
    "afs",
    "auristorfs",
    "ceph",
    "cifs",
    "smb3",
    "smbfs",
    "sshfs",
    "ncpfs",
    "ncp",
    "nfs",
    "nfs4",
    "gfs",
    "gfs2",
    "glusterfs",
    "gpfs",
    "pvfs2",
    "ocfs2",
    "lustre",
    "davfs",
];

fn is_local(fs: &str) -> bool {
    let fs = fs.strip_prefix("fuse.").unwrap_or(fs);
    !NOT_LOCAL.contains(&fs)
}

/// The values of an entity: its own, or its variable's (from `var`).
fn values(e: &Entity, var: &dyn Fn(&str) -> Option<Vec<String>>, object: &str) -> Result<Vec<String>, WalkError> {
    match &e.value {
        EntityValue::Literal(v) => Ok(vec![v.clone()]),
        EntityValue::Var(id) => {
            var(id).ok_or_else(|| WalkError::Unsupported { object: object.into(), why: format!("variable {id} has no value here") })
        }
    }
}

/// Collects `obj`'s items from `walk`. `var` gives a variable's values (none: unsupported).
/// [`WalkError::Incomplete`]: the walk cannot give what oscap's would here.
pub fn collect(obj: &WalkObject, walk: &Listing, var: &dyn Fn(&str) -> Option<Vec<String>>) -> Result<Collected, WalkError> {
    let mut c = Collector { walk, obj, items: Vec::new(), starts: Vec::new(), bad_name: false, filename: None, nil: true, refused: None };
    match &obj.target {
        ObjectTarget::Dir { path, filename } => {
            if let Some(f) = filename {
                c.nil = false;
                c.filename = Some(Matcher::new(f, &values(f, var, &obj.id)?, &obj.id)?);
            }
            let starts = values(path, var, &obj.id)?;
            match path.op {
                EntityOp::Equals => {
                    for p in &starts {
                        c.start(p.as_bytes());
                    }
                }
                EntityOp::NotEqual | EntityOp::PatternMatch => {
                    // Any directory may match: one the walk could not list may too.
                    if let Some(g) = walk.any_gap() {
                        c.refuse(g.clone());
                    }
                    let m = Matcher::new(path, &starts, &obj.id)?;
                    for d in walk.directories() {
                        if c.refused.is_some() {
                            break;
                        }
                        if c.check(&m, walk.path(d)) {
                            c.start(walk.path(d));
                        }
                    }
                }
            }
        }
        ObjectTarget::Filepath(fp) => {
            if fp.op != EntityOp::Equals {
                return Err(WalkError::Unsupported { object: obj.id.clone(), why: "a filepath that is not `equals`".into() });
            }
            for p in values(fp, var, &obj.id)? {
                let p = normal(p.as_bytes());
                match walk.locate(&p) {
                    Located::At(i) if walk.entry(i).kind != EntryKind::Directory => {
                        if p.len() > PATH_MAX {
                            c.refuse(GapAt::new(Gap::TooLong, super::judge::name_text(&p)));
                        }
                        c.items.push(WalkItem { entry: i, role: Role::File, start: OWN });
                    }
                    Located::Behind(d) => c.refuse_at(d),
                    _ => {}
                }
            }
        }
    }
    if let Some(at) = c.refused {
        return Err(WalkError::Incomplete { object: obj.id.clone(), at });
    }
    // A name that could not be matched (it is not UTF-8) is oscap's `error`, items kept.
    let flag = if c.bad_name { Flag::Error } else { Flag::found(c.items.len()) };
    let mut out = Collected { items: c.items, flag, starts: c.starts };
    out.settle(walk);
    Ok(out)
}

/// An entity compared with names: equal to one of its values, equal to none, or matching one.
struct Matcher {
    op: EntityOp,
    literal: Vec<Vec<u8>>,
    patterns: Vec<Pattern>,
}

impl Matcher {
    fn new(e: &Entity, values: &[String], object: &str) -> Result<Self, WalkError> {
        let patterns = if e.op == EntityOp::PatternMatch {
            values
                .iter()
                .map(|v| Pattern::new(v))
                .collect::<Result<_, _>>()
                .map_err(|why| WalkError::Unsupported { object: object.into(), why })?
        } else {
            Vec::new()
        };
        Ok(Self { op: e.op, literal: values.iter().map(|v| v.as_bytes().to_vec()).collect(), patterns })
    }

    fn is_match(&self, name: &[u8]) -> Result<bool, NotUtf8> {
        Ok(match self.op {
            EntityOp::Equals => self.literal.iter().any(|l| l == name),
            EntityOp::NotEqual => self.literal.iter().all(|l| l != name),
            EntityOp::PatternMatch => {
                let mut hit = false;
                for p in &self.patterns {
                    hit |= p.is_match(name)?;
                }
                hit
            }
        })
    }
}

struct Collector<'a> {
    walk: &'a Listing,
    obj: &'a WalkObject,
    items: Vec<WalkItem>,
    starts: Vec<Start>,
    bad_name: bool,
    filename: Option<Matcher>,
    /// No filename: the directories are the items.
    nil: bool,
    /// Why the walk cannot stand in for oscap here, where it first found so.
    refused: Option<GapAt>,
}

impl Collector<'_> {
    fn check(&mut self, m: &Matcher, name: &[u8]) -> bool {
        m.is_match(name).unwrap_or_else(|NotUtf8| {
            self.bad_name = true;
            false
        })
    }

    fn refuse(&mut self, at: GapAt) {
        self.refused.get_or_insert(at);
    }

    /// Refused: directory `d`, where the object looks, is a gap.
    fn refuse_at(&mut self, d: usize) {
        let at = self.walk.gap(d).cloned().unwrap_or_else(|| GapAt::new(Gap::Failed, super::judge::name_text(self.walk.path(d))));
        self.refuse(at);
    }

    /// One starting directory, as the object writes it.
    fn start(&mut self, path: &[u8]) {
        if self.refused.is_some() {
            return;
        }
        let shown = normal(path);
        let at = match self.walk.locate(&shown) {
            Located::At(i) => i,
            Located::Behind(d) => return self.refuse_at(d),
            Located::Missing => match self.walk.resolve_located(&shown) {
                Located::At(i) => i,
                Located::Behind(d) => return self.refuse_at(d),
                Located::Missing => return,
            },
        };
        let dir = match self.walk.entry(at).kind {
            EntryKind::Directory => at,
            EntryKind::Symlink => match self.walk.resolve_located(&shown) {
                Located::At(t) if self.walk.entry(t).kind == EntryKind::Directory => t,
                Located::Behind(d) => return self.refuse_at(d),
                _ => return,
            },
            _ => return,
        };
        if self.obj.behaviors.fs == FsScope::Local && !is_local(self.walk.fs(dir)) {
            return;
        }
        if self.pruned(dir) {
            return;
        }
        if shown.len() > PATH_MAX {
            return self.refuse(GapAt::new(Gap::TooLong, super::judge::name_text(&shown)));
        }
        let s = if shown == self.walk.path(dir) {
            OWN
        } else {
            self.starts.push(Start { shown, dir });
            (self.starts.len() - 1) as u32
        };
        if self.nil {
            if s == OWN {
                self.items.push(WalkItem { entry: at, role: Role::Dir, start: OWN });
            } else {
                self.items.push(WalkItem { entry: at, role: Role::Start, start: s });
            }
        }
        self.visit(dir, s);
    }

    /// Whether directory `d` is one the walk listed but did not enter: refused when so.
    fn pruned(&mut self, d: usize) -> bool {
        let fs = self.walk.fs(d);
        let out = PRUNED.contains(&fs);
        if out {
            let at = format!("{} ({fs})", super::judge::name_text(self.walk.path(d)));
            self.refuse(GapAt::new(Gap::Pruned, at));
        }
        out
    }

    /// The length of the path of entry `e` shown under start `s`.
    fn shown_len(&self, s: u32, e: usize) -> usize {
        let own = self.walk.path(e).len();
        if s == OWN {
            return own;
        }
        let start = &self.starts[s as usize];
        let real = self.walk.path(start.dir);
        let rest = if real == b"/" { own } else { own - real.len() };
        start.shown.len() + rest
    }

    /// Every directory under `from` (start `s`) the object reaches, from a stack of its own.
    fn visit(&mut self, from: usize, s: u32) {
        let b = self.obj.behaviors;
        let walk = self.walk;
        let dev = walk.dev(from);
        let mut todo: Vec<(usize, i64)> = vec![(from, 0)];
        while let Some((dir, depth)) = todo.pop() {
            let deeper = b.down && (b.max_depth < 0 || depth < b.max_depth);
            if !deeper && self.filename.is_none() {
                continue;
            }
            if walk.gap(dir).is_some() {
                return self.refuse_at(dir);
            }
            for c in walk.children(dir) {
                let e = walk.entry(c);
                if e.kind != EntryKind::Directory {
                    let Some(m) = self.filename.take() else { continue };
                    let hit = self.check(&m, walk.name(c));
                    self.filename = Some(m);
                    if hit {
                        if self.shown_len(s, c) > PATH_MAX {
                            return self.refuse(GapAt::new(Gap::TooLong, super::judge::name_text(walk.path(c))));
                        }
                        self.items.push(WalkItem { entry: c, role: Role::File, start: s });
                    }
                    continue;
                }
                if !deeper {
                    continue;
                }
                if self.shown_len(s, c) > PATH_MAX {
                    return self.refuse(GapAt::new(Gap::TooLong, super::judge::name_text(walk.path(c))));
                }
                if self.nil {
                    self.items.push(WalkItem { entry: c, role: Role::Dir, start: s });
                }
                let enter = match b.fs {
                    FsScope::All => true,
                    FsScope::Local => is_local(walk.fs(c)),
                    FsScope::Defined => walk.dev(c) == dev,
                };
                if enter && !self.pruned(c) {
                    todo.push((c, depth + 1));
                }
                if self.refused.is_some() {
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(fs: &str) -> WalkObject {
        let xml = format!(
            r#"<file_object xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" id="oval:t:obj:1" version="1"><behaviors recurse="directories" recurse_direction="down" max_depth="-1" recurse_file_system="{fs}"/><path>/r</path><filename xsi:nil="true"/></file_object>"#
        );
        WalkObject::read(xml.as_bytes()).unwrap()
    }

    fn paths(c: &Collected, walk: &Listing) -> Vec<Vec<u8>> {
        c.items.iter().map(|i| c.names(walk, i).path.into_owned()).collect()
    }

    #[test]
    fn a_file_system_the_walk_left_out_is_refused_where_oscap_would_enter_it() {
        let walk = Listing::parse(&b"d 755 0 0 1 ext4\0/r\0\0d 555 0 0 2 proc\0/r/p\0\0d 755 0 0 1 ext4\0/r/d\0\0"[..]).unwrap();
        let none = |_: &str| None;
        match collect(&object("all"), &walk, &none) {
            Err(WalkError::Incomplete { at, .. }) => assert_eq!((at.gap, at.path.as_str()), (Gap::Pruned, "/r/p (proc)")),
            other => panic!("{other:?}"),
        }
        // Local and defined walks do not enter it: its directory is an item, as in oscap.
        for fs in ["local", "defined"] {
            let c = collect(&object(fs), &walk, &none).unwrap();
            assert_eq!(paths(&c, &walk), [b"/r".to_vec(), b"/r/d".to_vec(), b"/r/p".to_vec()], "{fs}");
        }
    }

    #[test]
    fn a_gap_in_reach_is_refused_and_one_out_of_reach_is_not() {
        let walk =
            Listing::parse(&b"d 755 0 0 1 ext4\0/\0\0d 755 0 0 1 ext4\0/r\0\0d 755 0 0 1 ext4\0/r/d\0\0d 755 0 0 1 ext4\0/s\0\0"[..]);
        let mut walk = walk.unwrap();
        walk.read_errors(b"find: '/s/fuse': Permission denied\n").unwrap();
        let none = |_: &str| None;
        assert!(collect(&object("all"), &walk, &none).is_ok(), "/r is complete");
        let s = WalkObject::read(br#"<file_object xmlns:xsi="x" id="oval:t:obj:2" version="1"><behaviors recurse="directories" recurse_direction="down"/><path>/s</path><filename xsi:nil="true"/></file_object>"#).unwrap();
        match collect(&s, &walk, &none) {
            Err(WalkError::Incomplete { object, at }) => {
                assert_eq!((object.as_str(), at.gap, at.path.as_str()), ("oval:t:obj:2", Gap::Unreadable, "/s/fuse"))
            }
            other => panic!("{other:?}"),
        }
        let missing = WalkObject::read(br#"<file_object xmlns:xsi="x" id="oval:t:obj:3" version="1"><path>/s/fuse/deeper</path><filename xsi:nil="true"/></file_object>"#).unwrap();
        assert!(matches!(collect(&missing, &walk, &none), Err(WalkError::Incomplete { .. })), "a start behind the gap");
        let absent = WalkObject::read(
            br#"<file_object xmlns:xsi="x" id="oval:t:obj:4" version="1"><path>/r/none</path><filename xsi:nil="true"/></file_object>"#,
        )
        .unwrap();
        assert_eq!(collect(&absent, &walk, &none).unwrap().flag, Flag::DoesNotExist, "a start missing where the listing is whole");
    }
}

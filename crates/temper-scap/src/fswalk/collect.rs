//! A walking object's items, collected from the walk on the host as oscap's file probe would
//! collect them in the guest: the same paths, the same order of no importance, the same flag.
use std::collections::BTreeSet;

use super::WalkError;
use super::listing::{Entry, Kind, Listing, PRUNED, join, normal};
use super::object::{Entity, FsScope, Op, Target, Value, WalkObject};
use super::pattern::{NotUtf8, Pattern};

/// One collected item: the directory as oscap names it (under the object's path as written,
/// even where that path is a symlink), the file's name (none for a directory item), and the
/// entry it stands for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Item {
    pub path: Vec<u8>,
    pub filename: Option<Vec<u8>>,
    pub entry: usize,
}

/// The object's flag in the system characteristics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flag {
    Complete,
    DoesNotExist,
    /// A name could not be matched (it is not UTF-8): oscap's `error`, items kept.
    Error,
}

impl Flag {
    /// The flag as oscap writes it.
    pub fn oval(self) -> &'static str {
        match self {
            Self::Complete => "complete",
            Self::DoesNotExist => "does not exist",
            Self::Error => "error",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collected {
    pub items: Vec<Item>,
    pub flag: Flag,
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
        Value::Literal(v) => Ok(vec![v.clone()]),
        Value::Var(id) => {
            var(id).ok_or_else(|| WalkError::Unsupported { object: object.into(), why: format!("variable {id} has no value here") })
        }
    }
}

/// Collects `obj`'s items from `walk`. `var` gives a variable's values (none: unsupported).
pub fn collect(obj: &WalkObject, walk: &Listing, var: &dyn Fn(&str) -> Option<Vec<String>>) -> Result<Collected, WalkError> {
    let mut c = Collector { walk, obj, items: BTreeSet::new(), bad_name: false, filename: None, nil: true, refused: None };
    match &obj.target {
        Target::Dir { path, filename } => {
            if let Some(f) = filename {
                c.nil = false;
                c.filename = Some(Matcher::new(f, &values(f, var, &obj.id)?, &obj.id)?);
            }
            let starts = values(path, var, &obj.id)?;
            match path.op {
                Op::Equals => {
                    for p in &starts {
                        c.start(p.as_bytes());
                    }
                }
                Op::NotEqual | Op::PatternMatch => {
                    let m = Matcher::new(path, &starts, &obj.id)?;
                    let dirs: Vec<Vec<u8>> = walk.entries().iter().filter(|e| e.kind == Kind::Directory).map(|e| e.path.clone()).collect();
                    for d in dirs {
                        if c.check(&m, &d) {
                            c.start(&d);
                        }
                    }
                }
            }
        }
        Target::Filepath(fp) => {
            if fp.op != Op::Equals {
                return Err(WalkError::Unsupported { object: obj.id.clone(), why: "a filepath that is not `equals`".into() });
            }
            for p in values(fp, var, &obj.id)? {
                let p = normal(p.as_bytes());
                if let Some(i) = walk.get(&p).filter(|&i| walk.entry(i).kind != Kind::Directory) {
                    let (dir, name) = split(&p);
                    c.items.insert(Item { path: dir, filename: Some(name), entry: i });
                }
            }
        }
    }
    if let Some(why) = c.refused {
        return Err(WalkError::Unsupported { object: obj.id.clone(), why });
    }
    let flag = if c.bad_name {
        Flag::Error
    } else if c.items.is_empty() {
        Flag::DoesNotExist
    } else {
        Flag::Complete
    };
    Ok(Collected { items: c.items.into_iter().collect(), flag })
}

/// An entity compared with names: equal to one of its values, equal to none, or matching one.
struct Matcher {
    op: Op,
    literal: Vec<Vec<u8>>,
    patterns: Vec<Pattern>,
}

impl Matcher {
    fn new(e: &Entity, values: &[String], object: &str) -> Result<Self, WalkError> {
        let patterns = if e.op == Op::PatternMatch {
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
            Op::Equals => self.literal.iter().any(|l| l == name),
            Op::NotEqual => self.literal.iter().all(|l| l != name),
            Op::PatternMatch => {
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
    items: BTreeSet<Item>,
    bad_name: bool,
    filename: Option<Matcher>,
    /// No filename: the directories are the items.
    nil: bool,
    /// Why the walk cannot stand in for oscap here: it would enter a file system the walk left out.
    refused: Option<String>,
}

impl Collector<'_> {
    fn check(&mut self, m: &Matcher, name: &[u8]) -> bool {
        m.is_match(name).unwrap_or_else(|NotUtf8| {
            self.bad_name = true;
            false
        })
    }

    /// One starting directory, as the object writes it.
    fn start(&mut self, path: &[u8]) {
        let shown = normal(path);
        let Some(at) = self.walk.get(&shown).or_else(|| self.walk.resolve(&shown)) else { return };
        let e = self.walk.entry(at);
        let dir = match e.kind {
            Kind::Directory => at,
            Kind::Symlink => match self.walk.resolve(&shown) {
                Some(t) if self.walk.entry(t).kind == Kind::Directory => t,
                _ => return,
            },
            _ => return,
        };
        let d = self.walk.entry(dir);
        if self.obj.behaviors.fs == FsScope::Local && !is_local(&d.fs) {
            return;
        }
        if self.pruned(d) {
            return;
        }
        if self.nil {
            self.items.insert(Item { path: shown.clone(), filename: None, entry: at });
        }
        let dev = d.dev;
        self.visit(dir, &shown, 0, dev);
    }

    /// Whether `d` is a directory the walk listed but did not enter: refused when so.
    fn pruned(&mut self, d: &Entry) -> bool {
        let out = PRUNED.contains(&d.fs.as_str());
        if out && self.refused.is_none() {
            self.refused = Some(format!("a walk into {} ({}), which the walk leaves out", String::from_utf8_lossy(&d.path), d.fs));
        }
        out
    }

    fn visit(&mut self, dir: usize, shown: &[u8], depth: i64, dev: u64) {
        let b = self.obj.behaviors;
        let deeper = b.down && (b.max_depth < 0 || depth < b.max_depth);
        for &c in self.walk.children(dir) {
            let e: &Entry = self.walk.entry(c);
            let here = join(shown, e.name());
            if e.kind != Kind::Directory {
                if let Some(m) = self.filename.take() {
                    if self.check(&m, e.name()) {
                        self.items.insert(Item { path: shown.to_vec(), filename: Some(e.name().to_vec()), entry: c });
                    }
                    self.filename = Some(m);
                }
                continue;
            }
            if !deeper {
                continue;
            }
            if self.nil {
                self.items.insert(Item { path: here.clone(), filename: None, entry: c });
            }
            let enter = match b.fs {
                FsScope::All => true,
                FsScope::Local => is_local(&e.fs),
                FsScope::Defined => e.dev == dev,
            };
            if enter && !self.pruned(e) {
                self.visit(c, &here, depth + 1, dev);
            }
        }
    }
}

fn split(p: &[u8]) -> (Vec<u8>, Vec<u8>) {
    match p.iter().rposition(|&b| b == b'/') {
        Some(0) => (b"/".to_vec(), p[1..].to_vec()),
        Some(i) => (p[..i].to_vec(), p[i + 1..].to_vec()),
        None => (Vec::new(), p.to_vec()),
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

    #[test]
    fn a_file_system_the_walk_left_out_is_refused_where_oscap_would_enter_it() {
        let walk = Listing::parse(b"d 755 0 0 1 ext4\0/r\0\0d 555 0 0 2 proc\0/r/p\0\0d 755 0 0 1 ext4\0/r/d\0\0").unwrap();
        let none = |_: &str| None;
        let e = collect(&object("all"), &walk, &none).unwrap_err().to_string();
        assert!(e.contains("/r/p (proc)"), "{e}");
        // Local and defined walks do not enter it: its directory is an item, as in oscap.
        for fs in ["local", "defined"] {
            let c = collect(&object(fs), &walk, &none).unwrap();
            let paths: Vec<&[u8]> = c.items.iter().map(|i| i.path.as_slice()).collect();
            assert_eq!(paths, [&b"/r"[..], b"/r/d", b"/r/p"], "{fs}");
        }
    }
}

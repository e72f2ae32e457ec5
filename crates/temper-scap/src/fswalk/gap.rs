//! Where the walk falls short of oscap at run time. An object it takes over whose items it
//! cannot give as oscap's own walk would (a directory it could not read, an entry that
//! vanished, a file system it leaves out, a path past PATH_MAX, or no usable walk at all) goes
//! to oscap: the scanner evaluates its rules with oscap walking, and says which object and why
//! ([`Fallback`], the `walk_fallback` event).
use serde::{Deserialize, Serialize};

/// Why an object the walk takes over goes to oscap at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Gap {
    /// `find` could not read a directory in its reach, or look at an entry (a user's FUSE
    /// mount, to root: `Permission denied`).
    Unreadable,
    /// An entry in its reach vanished while `find` listed it (`No such file or directory`).
    Vanished,
    /// Another error of `find` in its reach (an I/O error, say).
    Failed,
    /// It would enter a file system the walk lists but does not enter (`/proc`, network ones).
    Pruned,
    /// A path in its reach of PATH_MAX (4096) bytes or more, past which oscap's probe does not go.
    TooLong,
    /// The walk as a whole could not be used: `find` failed, its output was cut short or over
    /// its bounds, or its errors did not read.
    Walk,
    /// Something only the run shows that the walk does not implement (a variable with no
    /// value, a pattern it cannot compile).
    Unsupported,
}

impl Gap {
    /// The gap a `find` error message (after `'PATH': `) says.
    pub(super) fn of_find(why: &[u8]) -> Self {
        match why {
            b"Permission denied" => Self::Unreadable,
            b"No such file or directory" => Self::Vanished,
            _ => Self::Failed,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unreadable => "unreadable",
            Self::Vanished => "vanished",
            Self::Failed => "failed",
            Self::Pruned => "pruned",
            Self::TooLong => "too_long",
            Self::Walk => "walk",
            Self::Unsupported => "unsupported",
        }
    }
}

impl std::fmt::Display for Gap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A gap and where it is: the path `find` named (as oscap writes names), or what failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GapAt {
    pub gap: Gap,
    pub path: String,
}

impl GapAt {
    pub fn new(gap: Gap, path: impl Into<String>) -> Self {
        Self { gap, path: path.into() }
    }
}

/// An object that went to oscap at run time, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fallback {
    /// The walking object's id.
    pub object: String,
    pub gap: Gap,
    /// Where: a path, or what failed.
    pub at: String,
}

impl Fallback {
    pub fn new(object: impl Into<String>, at: &GapAt) -> Self {
        Self { object: object.into(), gap: at.gap, at: at.path.clone() }
    }
}

impl std::fmt::Display for Fallback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({} at {})", self.object, self.gap, self.at)
    }
}

/// A line of `find`'s stderr, `find: 'PATH': WHY` (GNU find under `LC_ALL=C`, the path quoted
/// with C escapes): the path, its escapes undone, and why. `None`: the line is something else.
pub(super) fn find_error(line: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    let rest = line.strip_prefix(b"find: '")?;
    let mut path = Vec::new();
    let mut i = 0;
    loop {
        match *rest.get(i)? {
            b'\'' => break,
            b'\\' => {
                let c = *rest.get(i + 1)?;
                i += 2;
                path.push(match c {
                    b'\\' | b'\'' | b'"' | b'?' => c,
                    b'a' => 0x07,
                    b'b' => 0x08,
                    b'f' => 0x0c,
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    b'v' => 0x0b,
                    b'0'..=b'7' => {
                        let d = rest.get(i - 1..i + 2)?;
                        if !d.iter().all(|b| (b'0'..=b'7').contains(b)) {
                            return None;
                        }
                        i += 2;
                        u8::try_from(d.iter().fold(0u32, |v, b| v * 8 + u32::from(b - b'0'))).ok()?
                    }
                    _ => return None,
                });
            }
            b => {
                path.push(b);
                i += 1;
            }
        }
    }
    let why = rest[i + 1..].strip_prefix(b": ")?;
    (!path.is_empty()).then(|| (path, why.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_error_lines_read_back_with_their_escapes_undone() {
        let read = |l: &[u8]| find_error(l).map(|(p, w)| (p, String::from_utf8(w).unwrap()));
        assert_eq!(read(b"find: '/home/u/fuse': Permission denied"), Some((b"/home/u/fuse".to_vec(), "Permission denied".into())));
        // As GNU find 4.9 quotes them (seen on this host): a newline, a tab, a quote, a
        // backslash, bytes that are not ASCII.
        assert_eq!(read(br"find: 'q/nl\nx': No such file or directory").unwrap().0, b"q/nl\nx");
        assert_eq!(read(br"find: 'q/tab\tx': x").unwrap().0, b"q/tab\tx");
        assert_eq!(read(br"find: 'q/qu\'ote': x").unwrap().0, b"q/qu'ote");
        assert_eq!(read(br"find: 'q/back\\slash': x").unwrap().0, br"q/back\slash");
        assert_eq!(read(br#"find: 'q/dq"x': x"#).unwrap().0, br#"q/dq"x"#);
        assert_eq!(read(br"find: 'q/bad\377': x").unwrap().0, b"q/bad\xff");
        assert_eq!(read(br"find: 'q/\303\274n': x").unwrap().0, "q/ün".as_bytes());
        assert_eq!(read(b"find: '/a: b': Input/output error").unwrap(), (b"/a: b".to_vec(), "Input/output error".into()));
        for bad in [&b"find: warning: something"[..], b"find: '/x' Permission denied", br"find: '/x\q': x", br"find: '/x\38': x", b"oops"] {
            assert_eq!(read(bad), None, "{}", String::from_utf8_lossy(bad));
        }
        assert_eq!((Gap::of_find(b"Permission denied"), Gap::of_find(b"No such file or directory")), (Gap::Unreadable, Gap::Vanished));
        assert_eq!(Gap::of_find(b"Input/output error"), Gap::Failed);
    }
}

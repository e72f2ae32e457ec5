//! The records a fix keeps for its revert, and how each names its item.
//!
//! A record's file is named by its item (a hash of the path, key, unit or package), never by the
//! item's position in the fix: a record left by an earlier fix of the same rule on another item
//! is never read as this item's. Beside each record, `REC.item` names the item it was taken
//! from: a file by its path, device, inode and birth time (`file`: a file made at the same path
//! may be given the inode just freed, never the birth time), a copied file by its path and device
//! (`copy`: the fix itself may give the file a new inode, as `sed -i` does), a key, unit or
//! package by its name (`name`). The revert restores a record only onto the item it names, as
//! that item is now; any other is refused for that item (the reason on stderr, the item and its
//! record left as they are), the other items are restored, and the revert exits 3.
use sha2::{Digest, Sha256};

/// How a record names its item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Names {
    /// A file, by path, device, inode and birth time: its owner, group and mode are restored onto it.
    File,
    /// A file copied whole, by path and device: its copy is restored onto the path.
    Copy,
    /// A sysctl key, a unit or a package, by name.
    Name,
}

impl Names {
    fn as_str(self) -> &'static str {
        match self {
            Self::File => "file",
            Self::Copy => "copy",
            Self::Name => "name",
        }
    }
}

/// One record of one item: where it is kept (`path`, a shell word under `$state`), and how it
/// names its item (`item`: a shell word).
#[derive(Debug, Clone)]
pub struct Record {
    pub path: String,
    names: Names,
    item: String,
}

impl Record {
    /// The record `what` of the item that `key` names (its path, key, unit or package; for a
    /// copy kept for another key, both), naming `item` (a shell word) as `names` says.
    pub fn new(what: &str, key: &[&str], names: Names, item: &str) -> Self {
        Self { path: format!("\"$state/{}\"", file_name(what, key)), names, item: item.to_string() }
    }

    /// `[ -e R ] || { NOTE; COMMAND > R; }`: the first record stays, and names its item.
    pub fn keep_first(&self, command: &str) -> String {
        format!("[ -e {r} ] || {{ {}; {command} > {r}; }}\n", self.note(), r = self.path)
    }

    /// `[ -e R ] || { NOTE; cp -p -- ITEM R; }`: the first copy stays, and names its item.
    pub fn keep_first_copy(&self, file: &str) -> String {
        format!("[ -e {r} ] || {{ {}; cp -p -- {file} {r}; }}\n", self.note(), r = self.path)
    }

    /// Writes `R.item`.
    fn note(&self) -> String {
        format!("temper_note {} {} {}", self.path, self.names.as_str(), self.item)
    }

    /// True (in the script) when the record names its item as the item is now; else false, the
    /// reason on stderr.
    pub fn names_its_item(&self) -> String {
        format!("temper_names {} {} {}", self.path, self.names.as_str(), self.item)
    }

    /// Removes the record and its `.item`.
    pub fn remove(&self) -> String {
        format!("rm -f -- {} {}.item\"", self.path, self.path.trim_end_matches('"'))
    }
}

/// The file name of the record `what` of the item `key` names, under the fix's state folder.
pub fn file_name(what: &str, key: &[&str]) -> String {
    format!("{}.{what}", tag(key))
}

/// The item's share of a record's name: 16 hex digits of the SHA-256 of its key's parts.
pub fn tag(key: &[&str]) -> String {
    let mut h = Sha256::new();
    for part in key {
        h.update(part.as_bytes());
        h.update([0]);
    }
    h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// The functions that write and check what a record names, as script text.
pub const FUNCTIONS: &str = r#"temper_refused=0
temper_note() {
  case "$2" in
    file) { printf '%s\n' "$3"; stat -c '%d %i %w' -- "$3"; } ;;
    copy) { printf '%s\n' "$3"; stat -c '%d' -- "$3"; } ;;
    *) printf '%s\n' "$3" ;;
  esac > "$1.item"
}
temper_names() {
  local rec="$1" kind="$2" item="$3" name="" was="" now=""
  if [ ! -f "$rec.item" ]; then
    echo "temper: the record $rec names no item: $item left as it is" >&2; temper_refused=1; return 1
  fi
  { IFS= read -r name || true; IFS= read -r was || true; } < "$rec.item"
  if [ "$name" != "$item" ]; then
    echo "temper: the record $rec is of $name, not of $item: $item left as it is" >&2; temper_refused=1; return 1
  fi
  case "$kind" in
    file) now="$(stat -c '%d %i %w' -- "$item" 2>/dev/null)" || now="none" ;;
    copy) now="$(stat -c '%d' -- "$item" 2>/dev/null)" || now="none" ;;
  esac
  if [ "$was" != "$now" ]; then
    echo "temper: the record $rec is of another file at $item (device, inode and birth $was; now $now): $item left as it is" >&2
    temper_refused=1; return 1
  fi
}
"#;

/// The revert's last lines: exit 3 when a record was refused for its item.
pub const REFUSED_EXIT: &str = "if [ \"$temper_refused\" != 0 ]; then\n  echo 'temper: a record above does not name its item: that item was left as it is' >&2\n  exit 3\nfi\n";

//! One walk of the file system per scan: the entries under the roots the scan's walking objects
//! need, collected in the guest by one `find` ([`listing::COLLECT`], sent as data), and those
//! objects' items collected from it on the host ([`collect::collect`]) as oscap's file probe
//! collects them. What the walk does not implement is a [`WalkError::Unsupported`] naming the
//! construct, and that rule stays with oscap. What it cannot complete at run time (a gap in the
//! walk, a file system it leaves out, a path past PATH_MAX) is a [`WalkError::Incomplete`], and
//! the object goes to oscap then ([`gap`]).
//!
//! Agreement with oscap is tested item for item against the host's oscap
//! (`tests/fswalk.rs`, with the hostile trees, and `tests/fswalk_ssg.rs`). The scanner uses it
//! with `scan_walk` on (docs/scan-engines.md, "One walk").
pub mod collect;
pub mod feed;
pub mod gap;
pub mod judge;
pub mod listing;
pub mod object;
pub mod pattern;
pub mod plan;
pub mod state;

pub use collect::{Collected, ItemNames, PATH_MAX, WalkItem, collect};
pub use feed::{Feed, Filled, ItemField};
pub use gap::{Fallback, Gap, GapAt};
pub use judge::{JudgedTest, JudgedWalk, name_text};
pub use listing::{COLLECT, EntryKind, ListedEntry, Listing, Located, MAX_ENTRIES};
pub use object::{Behaviors, Entity, EntityOp, EntityValue, FsScope, ObjectTarget, StateFilter, WalkObject};
pub use plan::{PrePass, WalkPart, WalkedTest};
pub use state::{FileState, FileTest, Truth, filter};

/// Why a walk or an object could not be used.
#[derive(Debug, thiserror::Error)]
pub enum WalkError {
    #[error("the walk's record {n} does not parse: {why}")]
    Record { n: usize, why: String },
    #[error("the walk is over its bounds: {0}")]
    TooLarge(String),
    #[error("find's errors do not read: {0}")]
    Errors(String),
    #[error("object {object}: the walk does not implement {why}")]
    Unsupported { object: String, why: String },
    #[error("object {object}: the walk cannot complete it ({} at {})", at.gap, at.path)]
    Incomplete { object: String, at: GapAt },
    #[error(transparent)]
    Xml(#[from] crate::ScapError),
}

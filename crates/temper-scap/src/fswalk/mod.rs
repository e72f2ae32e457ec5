//! One walk of the file system per scan: the entries under every root the scan's walking
//! objects need, collected in the guest by one `find` ([`listing::COLLECT`], sent as data), and
//! those objects' items collected from it on the host ([`collect::collect`]) as oscap's file
//! probe collects them. What the walk does not implement is a [`WalkError::Unsupported`]
//! naming the construct, and that rule stays with oscap.
//!
//! Agreement with oscap is tested item for item against the host's oscap
//! (`tests/fswalk.rs`, `tests/fswalk_ssg.rs`). The scanner uses it with `scan_walk` on
//! (docs/scan-engines.md, "One walk").
pub mod collect;
pub mod feed;
pub mod judge;
pub mod listing;
pub mod object;
pub mod pattern;
pub mod plan;
pub mod state;

pub use collect::{Collected, Flag, Item, collect};
pub use feed::{Feed, ItemField};
pub use judge::{Judged, JudgedTest, name_text};
pub use listing::{COLLECT, Entry, Kind, Listing};
pub use object::{Behaviors, Entity, FsScope, Op, StateFilter, Target, Value, WalkObject};
pub use plan::{PrePass, WalkPart, WalkedTest};
pub use state::{Existence, FileState, FileTest, Truth, filter};

/// Why a walk or an object could not be used.
#[derive(Debug, thiserror::Error)]
pub enum WalkError {
    #[error("the walk's record {n} does not parse: {why}")]
    Record { n: usize, why: String },
    #[error("object {object}: the walk does not implement {why}")]
    Unsupported { object: String, why: String },
    #[error(transparent)]
    Xml(#[from] crate::ScapError),
}

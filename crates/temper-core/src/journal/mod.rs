//! The journal: every state change of a run, written through the traits of `temper-journal`
//! (its records, events and vocabularies, re-exported here) and read back by the loop, the
//! reports and the CLI. Here too the lease a driver holds on its run.
mod lease;

pub use lease::{LEASE_FOR, Lease, LeaseError, Term};
pub use temper_journal::*;

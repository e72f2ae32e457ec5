//! The proven plan. Its model (`Plan`, its steps, its folder read once, loading and checking it)
//! is `temper_journal::plan`, which the reports read too; here is what only the loop and the CLI
//! do with it: seal it and check its seal (`seal`, `signers`), open a folder as every way
//! temper applies a plan does (`open`), and the host's own key that seals the plans temper hands
//! itself (`own_key`). The model is imported from `temper_journal::plan`: nothing of it is
//! re-exported here.
mod open;
pub mod own_key;
pub mod seal;
pub mod signers;

pub use open::{OpenError, Opened, open};

//! The proven plan. Its model (`Plan`, its steps, loading and checking a folder) is
//! `temper_journal::plan`, which the reports read too; here is what only the loop and the CLI
//! do with it: sign it and check its signature (`seal`, `signers`).
pub mod seal;
pub mod signers;

pub use temper_journal::plan::*;

//! temper-core: the Ralph loop, its policies, and the port traits it runs on.
pub mod agent;
pub mod ban;
pub mod checks;
pub mod claim;
pub mod handover;
pub mod lease;
pub mod plan;
pub mod policy;
pub mod ports;
pub mod ralph;
pub mod scan;
pub mod script;
pub mod skill;
pub mod units;
pub mod verdict;

pub use ports::{Exec, ExecOutput, Guest, Hypervisor, PortError, PortResult};

//! temper-core: the Ralph loop, its policies, and the port traits it runs on.
pub mod agent;
pub mod checks;
pub mod policy;
pub mod ralph;
pub mod ports;
pub mod scan;
pub mod skill;
pub mod verdict;

pub use ports::{Exec, ExecOutput, Guest, Hypervisor, PortError, PortResult};
pub use verdict::Verdict;

//! temper-core: the Ralph loop, its policies, and the port traits it runs on.
pub mod agent;
pub mod ports;
pub mod verdict;

pub use ports::{Exec, ExecOutput, Guest, Hypervisor, PortError, PortResult};
pub use verdict::Verdict;

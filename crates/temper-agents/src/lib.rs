//! temper-agents

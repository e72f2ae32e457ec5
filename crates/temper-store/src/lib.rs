//! temper-store

//! temper-target

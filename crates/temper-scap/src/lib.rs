//! temper-scap

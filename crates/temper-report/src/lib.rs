//! temper-report

//! temper-mockllm

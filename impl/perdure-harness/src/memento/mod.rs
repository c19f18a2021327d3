//! Memento's checking harness: [`scenarios`] for the crash explorer (every
//! detectable structure and primitive) and the protocol-trace producer
//! [`trace`].

pub mod scenarios;
pub mod trace;

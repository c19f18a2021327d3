//! The PTMs' checking harness: [`scenarios`] for the crash explorer and the
//! protocol-trace producer [`trace`].

pub mod scenarios;
pub mod trace;

//! RELAX's checking harness: [`scenarios`] for the crash explorer (every
//! structure × tracking variant × DRAM fill) and the protocol-trace
//! producer [`trace`]; the reclamation [`audit`]'s checker.

pub mod audit;
pub mod scenarios;
pub mod trace;

//! The Memento explorer under x86's persistency model for locked RMWs (Px86: a locked CAS, even a failed one, completes the
//! thread's pending write-backs — `SimOptions::rmw_completes_flushes`), where the code leaves out the
//! fences `Msync`-like backends need; the default runs check the latter.
//! One binary per setting: the scenarios read it from the environment.

mod common;
#[macro_use]
mod explore_suite;

setting_suite!("PERDURE_SIM_RMW" = "1", "@x86");

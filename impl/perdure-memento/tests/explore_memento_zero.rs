//! The Memento explorer under the seed's memento clearing (§6.3 as written: `ClearMode::Zero`, zeroing under the crash-safe
//! clearing flag) instead of the default O(1) timestamp floor.
//! One binary per setting: the scenarios read it from the environment.

mod common;
#[macro_use]
mod explore_suite;

setting_suite!("PERDURE_CLEAR" = "zero", "@zero-clear");

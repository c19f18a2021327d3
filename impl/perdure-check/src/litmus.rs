//! Placeholder until this module lands: the command exits 2 and says so.

use std::process::ExitCode;

/// Entry point of `perdure litmus`.
pub fn cli_main(_args: &[String]) -> ExitCode {
    eprintln!("perdure: `litmus` is not implemented in this build yet");
    ExitCode::from(2)
}

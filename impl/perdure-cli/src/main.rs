//! `perdure`: the command-line tool of the perdure project.
//!
//! The command line is parsed with clap ([`Cli`]); each command hands typed
//! options to the library that does the work: the pool commands to
//! perdure-pm ([`pool`]), the database commands to perdure-kv ([`kv`]), the checking commands to perdure-check
//! ([`check`]), the trace producers to perdure-check and perdure-harness
//! ([`trace`]). `perdure completions SHELL` prints a completion script.
//! Usage errors exit 2 with clap's message (and a suggestion for a typo).

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod check;
mod kv;
mod pool;
mod trace;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser, Subcommand};
use std::process::ExitCode;

const COMMANDS: &str = "\
EXAMPLES:
    perdure pool info PATH
    perdure pool create PATH --layout NAME --size 64M
    perdure kv create fruit.db --size 64M
    perdure kv put fruit.db apple red
    perdure kv scan fruit.db --from a --to c
    perdure litmus modelcheck/litmus
    perdure check-history FILE
    perdure explore --list
    perdure trace-to-tla FILE --module NAME
    perdure trace redo-ptm --seed 1 --runs 20 --crash
    perdure completions bash

EXIT STATUS:
    0 success, 1 the file, check or operation failed (the message says why),
    2 wrong usage; each command's --help gives its own.";

/// perdure — persistent-memory constructions, specified, proved and checked.
#[derive(Debug, Parser)]
#[command(name = "perdure", version, after_help = COMMANDS, arg_required_else_help = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
enum Command {
    /// Inspect or create a pool file (`pool info PATH`, `pool create PATH --layout NAME --size SIZE`).
    #[command(subcommand)]
    Pool(pool::PoolCommand),
    /// A perdure-kv database: create, put, get, del, scan, stat, check, import, export.
    #[command(subcommand)]
    Kv(kv::KvCommand),
    /// Run Px86 litmus tests.
    Litmus(check::LitmusArgs),
    /// Decide durable linearizability of a history.
    CheckHistory(check::CheckHistoryArgs),
    /// Crash-explore a scenario on the simulated Px86 backend.
    Explore(check::ExploreArgs),
    /// Turn an ndjson trace into a TLA+ module.
    TraceToTla(check::TraceToTlaArgs),
    /// Record a protocol-level trace of the tutorial log or a construction.
    #[command(subcommand)]
    Trace(trace::TraceCommand),
    /// Print a shell completion script.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// Exits 2 with clap's usage error `msg` for the subcommand path `path`
/// (`["trace", "relax"]`): what clap does for an error it finds itself.
pub(crate) fn usage_error(path: &[&str], msg: String) -> ! {
    let mut cmd = Cli::command();
    cmd.build();
    for name in path {
        match cmd.find_subcommand(name) {
            Some(sub) => cmd = sub.clone(),
            None => break,
        }
    }
    cmd.error(ErrorKind::ValueValidation, msg).exit()
}

fn main() -> ExitCode {
    // A closed pipe ends the command quietly, as it ends any Unix filter
    // (`perdure trace ... | head`): Rust starts with SIGPIPE ignored, which
    // turns the next write into EPIPE and every `print!` into a panic.
    #[cfg(unix)]
    // SAFETY: the first statement of main, before any other thread exists;
    // SIG_DFL is a valid disposition for SIGPIPE, and nothing in perdure
    // installs a handler of its own.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    match Cli::parse().command {
        Command::Pool(c) => pool::run(c),
        Command::Kv(c) => kv::run(c),
        Command::Litmus(a) => check::litmus(a),
        Command::CheckHistory(a) => check::check_history(a),
        Command::Explore(a) => check::explore(a, perdure_harness::construction_scenarios()),
        Command::TraceToTla(a) => check::trace_to_tla(a),
        Command::Trace(c) => trace::run(c),
        Command::Completions { shell } => {
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "perdure",
                &mut std::io::stdout(),
            );
            ExitCode::SUCCESS
        }
    }
}

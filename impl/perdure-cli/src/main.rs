//! `perdure`: the command-line tool of the perdure project.
//!
//! This build has the pool commands; the checking commands (`litmus`,
//! `explore`, `check-history`, `trace-to-tla`) and the construction commands
//! arrive with their crates. A command that does not exist yet says so and
//! exits non-zero; none pretends to succeed.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

use perdure_pm::{MapMode, NoFlush, Pool, PoolError, PoolInfo};
use std::process::ExitCode;

const HELP: &str = "\
perdure — persistent-memory constructions, specified, proved and checked

USAGE:
    perdure <COMMAND> [ARGS]

COMMANDS:
    pool info PATH                         Print a pool's header, roots and mapping mode.
                                           A bad file prints the typed error and exits 1.
    pool create PATH --layout NAME --size SIZE
                                           Create an empty pool (SIZE in bytes, or with a
                                           K/M/G suffix; a multiple of 4 KiB, at least 8 KiB).
    litmus FILE|DIR...                     Run Px86 litmus tests (see `perdure litmus --help`).
    check-history FILE                     Decide durable linearizability of a history
                                           (see `perdure check-history --help`).
    explore SCENARIO [OPTIONS]             Crash-explore a scenario on the simulated Px86
                                           backend (see `perdure explore --help`).
    trace-to-tla FILE --module NAME        Turn an ndjson trace into a TLA+ module.
    trace log [OPTIONS]                    Record a protocol-level trace of the tutorial log
                                           (see `perdure trace --help`).
    trace memento-cas|memento-queue [OPTIONS]
                                           Record traces of Memento's detectable CAS or queue
                                           (see `perdure trace memento-cas --help`).
    trace redo-ptm|redo-timed|redo-opt|cx-ptm|cx-puc [OPTIONS]
                                           Record traces of Redo-PTM, RedoTimed-PTM,
                                           RedoOpt-PTM, CX-PTM or CX-PUC
                                           (see `perdure trace redo-ptm --help`).
    trace relax [OPTIONS]                  Record traces of one Mirror/RELAX field
                                           (see `perdure trace relax --help`).
    help, --help, -h                       Print this help.
    --version, -V                          Print the version.

EXIT STATUS:
    0 success, 1 the file or operation failed (the message says why),
    2 wrong usage.
";

fn usage(msg: &str) -> ExitCode {
    eprintln!("perdure: {msg}");
    eprintln!("run `perdure --help` for usage");
    ExitCode::from(2)
}

fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (digits, mult) = match s.char_indices().last()? {
        (i, 'k' | 'K') => (&s[..i], 1u64 << 10),
        (i, 'm' | 'M') => (&s[..i], 1 << 20),
        (i, 'g' | 'G') => (&s[..i], 1 << 30),
        (i, 't' | 'T') => (&s[..i], 1 << 40),
        _ => (s, 1),
    };
    digits.parse::<u64>().ok()?.checked_mul(mult)
}

fn print_info(info: &PoolInfo) {
    let h = &info.header;
    println!("pool        {}", info.path.display());
    println!("format      version {}", h.version);
    println!("layout      {:?}", h.layout);
    println!(
        "size        {} bytes ({} MiB)",
        h.pool_size,
        h.pool_size >> 20
    );
    println!("data area   [{:#x}, {:#x})", h.data_offset, h.pool_size);
    println!("pool id     {:016x}", h.pool_id);
    println!("created     {} (Unix seconds)", h.created_unix);
    println!("checksum    {:#010x} (valid)", h.checksum);
    println!("incarnation {} (times opened)", info.incarnation);
    println!("mapping     {}", info.mode.describe());
    if info.mode == MapMode::Shared {
        println!("            use the msync backend for durability against power loss on this file system");
    }
    println!(
        "in use      {}",
        if info.in_use {
            "yes (another handle holds the lock)"
        } else {
            "no"
        }
    );
    let set: Vec<_> = info.roots.iter().filter(|(_, v, _)| *v != 0).collect();
    println!("roots       {} of {} set", set.len(), info.roots.len());
    for (i, v, ok) in set {
        match ok {
            Ok(()) => println!("  root {i:2}  {v:#x}"),
            Err(e) => println!("  root {i:2}  {v:#x}  {e}"),
        }
    }
}

fn pool_info(args: &[String]) -> ExitCode {
    let [path] = args else {
        return usage("`pool info` takes exactly one PATH");
    };
    match PoolInfo::read(path) {
        Ok(info) => {
            print_info(&info);
            if info.roots.iter().any(|(_, _, ok)| ok.is_err()) {
                eprintln!("perdure: {path}: some root slots are corrupt (see above)");
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("perdure: {path}: {e}");
            ExitCode::from(1)
        }
    }
}

fn pool_create(args: &[String]) -> ExitCode {
    let mut path = None;
    let mut layout = None;
    let mut size = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--layout" => match it.next() {
                Some(v) => layout = Some(v.clone()),
                None => return usage("--layout needs a NAME"),
            },
            "--size" => match it.next().map(|v| (v, parse_size(v))) {
                Some((_, Some(n))) => size = Some(n),
                Some((v, None)) => return usage(&format!("--size {v:?} is not a size (e.g. 64M)")),
                None => return usage("--size needs a SIZE"),
            },
            s if s.starts_with('-') => return usage(&format!("unknown option {s}")),
            s if path.is_none() => path = Some(s.to_owned()),
            s => return usage(&format!("unexpected argument {s:?}")),
        }
    }
    let (Some(path), Some(layout), Some(size)) = (path, layout, size) else {
        return usage("`pool create` needs PATH, --layout NAME and --size SIZE");
    };
    match Pool::<NoFlush>::create(&path, &layout, size) {
        Ok(pool) => {
            let mode = pool.mode();
            drop(pool);
            println!(
                "created {path}: {size} bytes, layout {layout:?}, mapping {}",
                mode.describe()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("perdure: {e}");
            ExitCode::from(
                if matches!(
                    e,
                    PoolError::InvalidSize { .. } | PoolError::InvalidLayout { .. }
                ) {
                    2
                } else {
                    1
                },
            )
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let strs: Vec<&str> = args.iter().map(String::as_str).collect();
    match strs.as_slice() {
        [] | ["help" | "--help" | "-h", ..] => {
            print!("{HELP}");
            ExitCode::SUCCESS
        }
        ["--version" | "-V"] => {
            println!("perdure {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        ["pool", "info", ..] => pool_info(&args[2..]),
        ["pool", "create", ..] => pool_create(&args[2..]),
        ["pool", ..] => usage("`pool` takes `info` or `create`"),
        ["litmus", ..] => perdure_check::litmus::cli_main(&args[1..]),
        ["check-history", ..] => perdure_check::history::cli_main(&args[1..]),
        ["explore", ..] => perdure_check::explore::cli_main_with(
            &args[1..],
            perdure_harness::construction_scenarios(),
        ),
        ["trace-to-tla", ..] => perdure_check::trace::cli_main(&args[1..]),
        ["trace", "memento-cas" | "memento-queue", ..] => {
            perdure_harness::memento::trace::cli_main(&args[1..])
        }
        ["trace", "redo-ptm" | "redo-timed" | "redo-opt" | "cx-ptm" | "cx-puc", ..] => {
            perdure_harness::ptm::trace::cli_main(&args[1..])
        }
        ["trace", "relax", ..] => perdure_harness::relax::trace::cli_main(&args[1..]),
        ["trace", ..] => perdure_check::trace::trace_cli_main(&args[1..]),
        [other, ..] => usage(&format!("unknown command {other:?}")),
    }
}

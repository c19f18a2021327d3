//! `perdure pool info|create`: a pool file's header, roots and mapping mode.

use clap::{Args, Subcommand};
use perdure_pm::{MapMode, NoFlush, Pool, PoolError, PoolInfo};
use std::process::ExitCode;

/// `perdure pool`.
#[derive(Debug, Subcommand)]
pub enum PoolCommand {
    /// Print a pool's header, roots and mapping mode (a bad file prints the typed error and exits 1).
    Info {
        /// The pool file.
        path: String,
    },
    /// Create an empty pool.
    Create(CreateArgs),
}

/// `perdure pool create PATH --layout NAME --size SIZE`.
#[derive(Debug, Args)]
pub struct CreateArgs {
    /// The pool file to create.
    path: String,
    /// The layout name stored in the header.
    #[arg(long, value_name = "NAME")]
    layout: String,
    /// Bytes, or with a K/M/G/T suffix; a multiple of 4 KiB, at least 8 KiB.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    size: u64,
}

/// Runs a pool command.
pub fn run(cmd: PoolCommand) -> ExitCode {
    match cmd {
        PoolCommand::Info { path } => info(&path),
        PoolCommand::Create(a) => create(&a),
    }
}

pub(crate) fn parse_size(s: &str) -> Result<u64, String> {
    let bad = || format!("{s:?} is not a size (e.g. 64M)");
    let t = s.trim();
    let (digits, mult) = match t.char_indices().last().ok_or_else(bad)? {
        (i, 'k' | 'K') => (&t[..i], 1u64 << 10),
        (i, 'm' | 'M') => (&t[..i], 1 << 20),
        (i, 'g' | 'G') => (&t[..i], 1 << 30),
        (i, 't' | 'T') => (&t[..i], 1 << 40),
        _ => (t, 1),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(bad)
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

fn info(path: &str) -> ExitCode {
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

fn create(a: &CreateArgs) -> ExitCode {
    let (path, layout, size) = (&a.path, &a.layout, a.size);
    match Pool::<NoFlush>::create(path, layout, size) {
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
            // A size or layout the format refuses is wrong usage.
            let usage = matches!(
                e,
                PoolError::InvalidSize { .. } | PoolError::InvalidLayout { .. }
            );
            ExitCode::from(if usage { 2 } else { 1 })
        }
    }
}

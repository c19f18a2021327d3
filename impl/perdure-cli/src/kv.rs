//! `perdure kv`: a perdure-kv database from the command line, the
//! database file first (`perdure kv put DB KEY VALUE`).
//!
//! Keys and values are the arguments' bytes. `get` prints the value and a
//! newline (`--raw`: the exact bytes, nothing added); `scan` prints one
//! `key<TAB>value` line per entry in key order, with `\\`, tab, newline,
//! carriage return and bytes that are not UTF-8 or are control characters
//! escaped (`\t`, `\n`, `\r`, `\xNN`). `export` writes ndjson, one
//! `{"key": ..., "value": ...}` object per entry (strings when the bytes
//! are UTF-8, `key_hex`/`value_hex` otherwise); `import` reads it back,
//! all lines in batches of 1,000 (each batch atomic). Exit status: 0
//! success, 1 a failed operation, a bad file or an absent key (`get`), 2
//! wrong usage.

use clap::{Args, Subcommand};
use perdure_kv::{Construction, Db, Durability, KvError, Options, WriteBatch};
use std::ffi::OsString;
use std::io::{BufRead, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::process::ExitCode;

/// `perdure kv`.
#[derive(Debug, Subcommand)]
pub enum KvCommand {
    /// Create a database file.
    Create(CreateArgs),
    /// Set KEY to VALUE.
    Put {
        /// The database file.
        db: PathBuf,
        /// The key.
        key: OsString,
        /// The value.
        value: OsString,
    },
    /// Print the value of KEY (exit 1 when absent, 2 when the database cannot answer).
    Get {
        /// The database file.
        db: PathBuf,
        /// The key.
        key: OsString,
        /// Print the value's exact bytes, without escapes or a newline.
        #[arg(long)]
        raw: bool,
    },
    /// Delete KEY (exit 1 when absent, 2 when the database cannot answer).
    Del {
        /// The database file.
        db: PathBuf,
        /// The key.
        key: OsString,
    },
    /// Print entries in key order: all, those with PREFIX, or those in [--from, --to).
    Scan(ScanArgs),
    /// Print the entry count, the space used, the construction and the backend.
    Stat {
        /// The database file.
        db: PathBuf,
    },
    /// Walk the structure and check its invariants (exit 1, naming the damage, if one fails or the file is no database).
    Check {
        /// The database file.
        db: PathBuf,
    },
    /// Add the entries of an ndjson file (`-` for standard input).
    Import {
        /// The database file.
        db: PathBuf,
        /// The ndjson file.
        file: PathBuf,
    },
    /// Write every entry as ndjson to standard output.
    Export {
        /// The database file.
        db: PathBuf,
    },
    /// Run db_bench's workloads on perdure-kv (the stores beside it: `make bench`).
    Bench(BenchArgs),
}

/// `perdure kv bench [--num N] [--threads 1,2] [--construction C,...] [--durability D] [--dir DIR]`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Keys (db_bench's --num; the seed's 1000000).
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    num: u64,
    /// Thread counts, comma-separated.
    #[arg(
        long,
        value_name = "T,...",
        value_delimiter = ',',
        default_value = "1,2"
    )]
    threads: Vec<usize>,
    /// Constructions, comma-separated.
    #[arg(
        long,
        value_name = "C,...",
        value_delimiter = ',',
        default_value = "redo-opt"
    )]
    construction: Vec<Construction>,
    /// pmem (cache-line flushes; the database on --dir, /dev/shm by default) or msync.
    #[arg(long, value_name = "D", default_value = "pmem")]
    durability: Durability,
    /// Workloads, comma-separated (default: all of db_bench's).
    #[arg(long, value_name = "W,...", value_delimiter = ',')]
    workloads: Vec<perdure_harness::kvbench::Workload>,
    /// Where the databases go (default: /dev/shm for pmem, the temp dir for msync).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Write the measures as JSON here, and SVG plots beside it.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

/// `perdure kv create DB [--size SIZE] [--construction C] [--durability D] [--threads N]`.
#[derive(Debug, Args)]
pub struct CreateArgs {
    /// The database file to create.
    db: PathBuf,
    /// The file's size: bytes, or with a K/M/G/T suffix (the PTM splits it into replicas).
    #[arg(long, value_name = "SIZE", value_parser = crate::pool::parse_size, default_value = "256M")]
    size: u64,
    /// The construction: redo-opt, redo, redo-timed or cx-ptm.
    #[arg(long, value_name = "C", default_value = "redo-opt")]
    construction: Construction,
    /// Durability: auto (pmem on tmpfs and DAX, msync elsewhere), pmem or msync.
    #[arg(long, value_name = "D", default_value = "auto")]
    durability: Durability,
    /// How many threads may use the database at once.
    #[arg(long, value_name = "N", default_value_t = 4)]
    threads: usize,
}

/// `perdure kv scan DB [PREFIX] [--from A] [--to B] [--limit N]`.
#[derive(Debug, Args)]
pub struct ScanArgs {
    /// The database file.
    db: PathBuf,
    /// Only keys that start with this.
    #[arg(conflicts_with_all = ["from", "to"])]
    prefix: Option<OsString>,
    /// The first key (inclusive).
    #[arg(long, value_name = "A")]
    from: Option<OsString>,
    /// The end (exclusive).
    #[arg(long, value_name = "B")]
    to: Option<OsString>,
    /// At most this many entries.
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
}

/// Durability of the commands other than `create`: the file's own, auto.
fn open(db: &PathBuf) -> Result<Db, KvError> {
    Db::open(
        db,
        &Options {
            create_if_missing: false,
            ..Options::default()
        },
    )
}

/// Runs a kv command. Exit status: 0 when it did its job; 1 for a key
/// `get` or `del` did not find, and for a database `check` did not pass
/// (damage found, or a file it could not open as a database: the message
/// says which); 2 for every other failure (a missing, foreign, damaged,
/// locked or full database, bad input, an I/O error), as for wrong usage —
/// so a script tells "absent" from "could not answer".
pub fn run(cmd: KvCommand) -> ExitCode {
    let failed = if matches!(cmd, KvCommand::Check { .. }) {
        ExitCode::FAILURE
    } else {
        ExitCode::from(2)
    };
    match exec(cmd) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("perdure kv: {e}");
            failed
        }
    }
}

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
enum Failure {
    #[error(transparent)]
    Kv(#[from] KvError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{file}:{line}: {what}")]
    Input {
        file: String,
        line: usize,
        what: String,
    },
}

fn exec(cmd: KvCommand) -> Result<ExitCode, Failure> {
    let mut out = std::io::stdout().lock();
    match cmd {
        KvCommand::Create(a) => {
            let db = Db::create(
                &a.db,
                &Options {
                    construction: a.construction,
                    durability: a.durability,
                    size: a.size,
                    threads: a.threads,
                    ..Options::default()
                },
            )?;
            writeln!(
                out,
                "created {} ({}, {}, {} bytes, {} threads)",
                a.db.display(),
                db.construction().name(),
                db.backend().name(),
                a.size,
                a.threads
            )?;
        }
        KvCommand::Put { db, key, value } => {
            open(&db)?.put(key.as_bytes(), value.as_bytes())?;
        }
        KvCommand::Get { db, key, raw } => match open(&db)?.get(key.as_bytes())? {
            Some(v) if raw => out.write_all(&v)?,
            Some(v) => writeln!(out, "{}", escape(&v))?,
            None => {
                eprintln!("perdure kv: no key {}", escape(key.as_bytes()));
                return Ok(ExitCode::FAILURE);
            }
        },
        KvCommand::Del { db, key } => {
            if !open(&db)?.delete(key.as_bytes())? {
                eprintln!("perdure kv: no key {}", escape(key.as_bytes()));
                return Ok(ExitCode::FAILURE);
            }
        }
        KvCommand::Scan(a) => {
            let db = open(&a.db)?;
            let limit = a.limit.unwrap_or(usize::MAX);
            let entries = match (&a.prefix, &a.from, &a.to) {
                (Some(p), _, _) => db.scan_prefix(p.as_bytes(), limit)?,
                (None, from, to) => {
                    use std::ops::Bound::{Excluded, Included, Unbounded};
                    let lo = from.as_ref().map_or(Unbounded, |f| Included(f.as_bytes()));
                    let hi = to.as_ref().map_or(Unbounded, |t| Excluded(t.as_bytes()));
                    db.scan::<&[u8]>((lo, hi), limit)?
                }
            };
            for (k, v) in entries {
                writeln!(out, "{}\t{}", escape(&k), escape(&v))?;
            }
        }
        KvCommand::Stat { db } => {
            let s = open(&db)?.stat()?;
            writeln!(out, "database      {}", db.display())?;
            writeln!(out, "entries       {}", s.entries)?;
            writeln!(
                out,
                "bytes used    {} of {} in the region ({:.1}%)",
                s.bytes_used,
                s.region_bytes,
                100.0 * s.bytes_used as f64 / s.region_bytes.max(1) as f64
            )?;
            writeln!(out, "file          {} bytes", s.file_bytes)?;
            writeln!(out, "construction  {}", s.construction.name())?;
            writeln!(out, "backend       {}", s.backend)?;
        }
        KvCommand::Check { db } => {
            let n = open(&db)?.check()?;
            writeln!(out, "ok: {n} entries, every invariant holds")?;
        }
        KvCommand::Import { db, file } => {
            let db = open(&db)?;
            let name = file.display().to_string();
            let reader: Box<dyn BufRead> = if file.as_os_str() == "-" {
                Box::new(std::io::stdin().lock())
            } else {
                Box::new(std::io::BufReader::new(
                    std::fs::File::open(&file).map_err(|e| Failure::Input {
                        file: name.clone(),
                        line: 0,
                        what: e.to_string(),
                    })?,
                ))
            };
            // Every line is parsed before anything is written, so a bad
            // line leaves the database unchanged.
            let mut entries = Vec::new();
            for (i, line) in reader.lines().enumerate() {
                let line = line?;
                if line.trim().is_empty() {
                    continue;
                }
                entries.push(parse_entry(&line).map_err(|what| Failure::Input {
                    file: name.clone(),
                    line: i + 1,
                    what,
                })?);
            }
            for chunk in entries.chunks(1000) {
                let mut b = WriteBatch::new();
                for (k, v) in chunk {
                    b.put(k, v)?;
                }
                db.write(b)?;
            }
            writeln!(out, "imported {} entries", entries.len())?;
        }
        KvCommand::Bench(a) => bench(a, &mut out)?,
        KvCommand::Export { db } => {
            for (k, v) in open(&db)?.scan_prefix(b"", usize::MAX)? {
                let field = |name: &str, b: &[u8]| match std::str::from_utf8(b) {
                    Ok(s) => format!("{}:{}", json_str(name), json_str(s)),
                    Err(_) => format!("{}:{}", json_str(&format!("{name}_hex")), json_str(&hex(b))),
                };
                writeln!(out, "{{{},{}}}", field("key", &k), field("value", &v))?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn bench(a: BenchArgs, out: &mut impl Write) -> Result<(), Failure> {
    use perdure_harness::kvbench::{self, Config, PerdureKv, Workload};
    let base = match &a.dir {
        Some(d) => d.clone(),
        None if a.durability == Durability::Msync => std::env::temp_dir(),
        None => PathBuf::from("/dev/shm"),
    };
    let dir = tempfile::Builder::new()
        .prefix("perdure-kv-bench")
        .tempdir_in(&base)?;
    let mut all = Vec::new();
    for &c in &a.construction {
        for &t in &a.threads {
            let cfg = Config {
                num: a.num,
                threads: t,
                workloads: if a.workloads.is_empty() {
                    Workload::ALL.to_vec()
                } else {
                    a.workloads.clone()
                },
                progress: true,
                ..Config::default()
            };
            let subject = PerdureKv {
                construction: c,
                durability: a.durability,
            };
            let m = kvbench::run(&subject, dir.path(), &cfg, &mut |_| {}).map_err(|what| {
                Failure::Input {
                    file: subject_name(&subject),
                    line: 0,
                    what,
                }
            })?;
            all.extend(m);
        }
    }
    write!(out, "{}", kvbench::table(&all))?;
    if let Some(path) = &a.json {
        std::fs::write(path, kvbench::json(&all))?;
        let svg = path.with_extension("svg");
        std::fs::write(&svg, kvbench::throughput_svg("perdure-kv db_bench", &all))?;
        writeln!(out, "wrote {} and {}", path.display(), svg.display())?;
    }
    Ok(())
}

fn subject_name(s: &dyn perdure_harness::kvbench::Subject) -> String {
    s.name()
}

/// Bytes for a line of output (see the module docs).
fn escape(b: &[u8]) -> String {
    let mut s = String::new();
    for chunk in b.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => s.push_str("\\\\"),
                '\t' => s.push_str("\\t"),
                '\n' => s.push_str("\\n"),
                '\r' => s.push_str("\\r"),
                c if c.is_control() => {
                    let mut buf = [0u8; 4];
                    for byte in c.encode_utf8(&mut buf).bytes() {
                        s.push_str(&format!("\\x{byte:02x}"));
                    }
                }
                c => s.push(c),
            }
        }
        for byte in chunk.invalid() {
            s.push_str(&format!("\\x{byte:02x}"));
        }
    }
    s
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Result<Vec<u8>, String> {
    if s.len() % 2 != 0 || !s.bytes().all(|c| c.is_ascii_hexdigit()) {
        return Err(format!("{s:?} is not hex"));
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|e| e.to_string()))
        .collect()
}

fn json_str(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

/// One ndjson line: its key and value.
fn parse_entry(line: &str) -> Result<(Vec<u8>, Vec<u8>), String> {
    let v: serde_json::Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let obj = v.as_object().ok_or("not a JSON object")?;
    let field = |name: &str| -> Result<Vec<u8>, String> {
        match (obj.get(name), obj.get(&format!("{name}_hex"))) {
            (Some(s), None) => s
                .as_str()
                .map(|s| s.as_bytes().to_vec())
                .ok_or_else(|| format!("{name:?} is not a string")),
            (None, Some(h)) => unhex(
                h.as_str()
                    .ok_or_else(|| format!("{name}_hex is not a string"))?,
            ),
            (Some(_), Some(_)) => Err(format!("both {name:?} and \"{name}_hex\"")),
            (None, None) => Err(format!("no {name:?} (or \"{name}_hex\")")),
        }
    };
    Ok((field("key")?, field("value")?))
}

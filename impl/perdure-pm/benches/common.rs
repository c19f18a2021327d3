//! Shared helpers of the benchmarks: where results go, table printing.

#![allow(dead_code)]

use std::path::PathBuf;

/// `out/bench/` at the repository root (or `$PERDURE_OUT/bench`).
pub fn out_dir() -> PathBuf {
    let base = std::env::var_os("PERDURE_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../out"));
    let dir = base.join("bench");
    std::fs::create_dir_all(&dir).expect("create out/bench");
    dir
}

/// A directory for pool files: `$PERDURE_BENCH_DIR`, else the system temp dir.
pub fn pool_dir() -> tempfile::TempDir {
    match std::env::var_os("PERDURE_BENCH_DIR") {
        Some(d) => tempfile::tempdir_in(d).expect("tempdir in PERDURE_BENCH_DIR"),
        None => tempfile::tempdir().expect("tempdir"),
    }
}

/// Escapes a string for JSON.
pub fn json_str(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Whether `cargo bench` was asked for a quick run (`PERDURE_BENCH_QUICK=1`).
pub fn quick() -> bool {
    std::env::var_os("PERDURE_BENCH_QUICK").is_some()
}

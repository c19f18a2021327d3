//! How deep a test run explores: `make verify DEPTH=deep` sets
//! `PERDURE_DEPTH=deep`, and a count can be set outright by its own
//! variable (`PERDURE_KILLS`, `PERDURE_SHUTTLE_ITERS`, ...). Shared by the
//! test support files of perdure-pm and perdure-ptm (included by `#[path]`).

#![allow(dead_code)]

/// Whether `PERDURE_DEPTH=deep` asked for the deeper bounds.
pub fn deep() -> bool {
    std::env::var("PERDURE_DEPTH").is_ok_and(|d| d == "deep")
}

/// Whether `PERDURE_DEPTH=mutants` asked for the mutation tier (the test
/// command of `make mutants`, docs/MUTANTS.md): the first tenth of the
/// schedules, since a mutant that breaks an algorithm is nearly always caught
/// by its first ones.
pub fn mutants() -> bool {
    std::env::var("PERDURE_DEPTH").is_ok_and(|d| d == "mutants")
}

/// The count in variable `var` if it is set to a number, else `normal`
/// (`deep` under `PERDURE_DEPTH=deep`).
pub fn count<T: std::str::FromStr>(var: &str, normal: T, deep: T) -> T {
    let deep = if self::deep() { deep } else { normal };
    std::env::var(var)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(deep)
}

//! Shared machinery of the proptest model suites that crash on the `Sim`
//! backend (perdure-relax's and perdure-memento's `tests/proptest_*.rs`
//! include it with `#[path]`): the runner's configuration and the choice of
//! one crash image of a crash point.

#![allow(dead_code)]

use perdure_pm::sim::{CrashPoint, VolatileFill};
use proptest::test_runner::{Config, RngSeed};

/// proptest's configuration from the environment (`PROPTEST_CASES`,
/// `PROPTEST_RNG_SEED`), else `cases` cases from seed 1, so that a run is
/// reproducible; no failure files.
pub fn runner_config(cases: u32) -> Config {
    let (set, env) = (|v| std::env::var_os(v).is_some(), Config::default());
    Config {
        cases: if set("PROPTEST_CASES") {
            env.cases
        } else {
            cases
        },
        rng_seed: if set("PROPTEST_RNG_SEED") {
            env.rng_seed
        } else {
            RngSeed::Fixed(1)
        },
        failure_persistence: None,
        ..env
    }
}

/// The words of image `image` of crash point `cp`: one of up to 8 images
/// sampled with seed `image` (the last if the point allows fewer).
pub fn image_words(cp: &CrashPoint, image: u8) -> Vec<u64> {
    let (_, images) = cp.images(8, u64::from(image));
    let images: Vec<_> = images.collect();
    let img = &images[usize::from(image).min(images.len() - 1)];
    cp.materialize(img, VolatileFill::Zeroed)
}

//! Shared set-up of the perdure-relax tests.
#![allow(dead_code)]

use perdure_pm::{Backend, Pool};
use perdure_relax::{Config, DramInit, OpenOptions, Space, Tracking};

/// Pool size of the tests.
pub const POOL: u64 = 8 << 20;

/// A small space configuration.
pub fn cfg(msb: bool) -> Config {
    Config {
        threads: 6,
        roots: 4,
        heap_bytes: 4 << 20,
        msb_sequences: msb,
    }
}

/// The space's base in a pool.
pub fn base<B: Backend>(pool: &Pool<B>) -> u64 {
    pool.data_offset().next_multiple_of(4096)
}

/// Options for a variant, with garbage DRAM where the variant allows it.
pub fn opts(t: Tracking, garbage_seed: Option<u64>) -> OpenOptions {
    OpenOptions {
        tracking: t,
        dram: match garbage_seed {
            Some(seed) if !t.needs_zeroed_dram() => DramInit::Garbage { seed },
            _ => DramInit::Zeroed,
        },
    }
}

/// Creates a space for variant `t` (MSB sequences iff PseudoBitset).
pub fn create<B: Backend>(pool: &Pool<B>, t: Tracking) -> Space<'_, B> {
    Space::create(
        pool,
        base(pool),
        &cfg(t == Tracking::PseudoBitset),
        OpenOptions::new(t),
    )
    .expect("create space")
}

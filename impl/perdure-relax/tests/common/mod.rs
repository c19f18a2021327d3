//! Shared set-up of the perdure-relax tests.
#![allow(dead_code)]

use perdure_pm::{Backend, Pool};
use perdure_relax::ds::{HarrisList, HashTable};
use perdure_relax::{Config, DramInit, Handle, OpenOptions, RelaxError, Space, Tracking};

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

/// Which structure a test runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// Harris's list.
    List,
    /// The hash table (4 buckets).
    Hash,
}

/// An opened structure of either kind, with one interface.
#[derive(Clone, Copy)]
pub enum Ds {
    /// A list.
    List(HarrisList),
    /// A hash table.
    Hash(HashTable),
}

impl Ds {
    pub fn create<B: Backend>(k: Kind, h: &mut Handle<'_, '_, B>) -> Ds {
        match k {
            Kind::List => Ds::List(HarrisList::create(h, 0).unwrap()),
            Kind::Hash => Ds::Hash(HashTable::create(h, 0, 4).unwrap()),
        }
    }
    pub fn open<B: Backend>(k: Kind, s: &Space<'_, B>) -> Result<Ds, RelaxError> {
        Ok(match k {
            Kind::List => Ds::List(HarrisList::open(s, 0)?),
            Kind::Hash => Ds::Hash(HashTable::open(s, 0)?),
        })
    }
    pub fn insert<B: Backend>(self, h: &mut Handle<'_, '_, B>, k: u64) -> Result<bool, RelaxError> {
        match self {
            Ds::List(l) => l.insert(h, k),
            Ds::Hash(t) => t.insert(h, k),
        }
    }
    pub fn remove<B: Backend>(self, h: &mut Handle<'_, '_, B>, k: u64) -> Result<bool, RelaxError> {
        match self {
            Ds::List(l) => l.remove(h, k),
            Ds::Hash(t) => t.remove(h, k),
        }
    }
    pub fn contains<B: Backend>(
        self,
        h: &mut Handle<'_, '_, B>,
        k: u64,
    ) -> Result<bool, RelaxError> {
        match self {
            Ds::List(l) => l.contains(h, k),
            Ds::Hash(t) => t.contains(h, k),
        }
    }
    pub fn keys<B: Backend>(self, h: &mut Handle<'_, '_, B>) -> Result<Vec<u64>, RelaxError> {
        let mut v = match self {
            Ds::List(l) => l.keys(h)?,
            Ds::Hash(t) => t.keys(h)?,
        };
        v.sort_unstable();
        Ok(v)
    }
}

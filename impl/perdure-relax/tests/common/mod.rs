//! Shared set-up of the perdure-relax tests: the space configuration, and
//! one interface ([`Ds`]) over the four set structures of `src/ds` — Harris's
//! list, the hash table, the skip list and the BST — with the tracking
//! variants each admits and the NVMM fields a full traversal reads.
#![allow(dead_code)]

use perdure_pm::{Backend, NoFlush, Pool};
use perdure_relax::ds::{Bst, HarrisList, HashTable, SkipList};
use perdure_relax::{Config, DramInit, Handle, OpenOptions, RelaxError, Space, Tracking};
use std::collections::BTreeSet;

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

/// Which set structure a test runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Harris's list.
    List,
    /// The hash table (4 buckets).
    Hash,
    /// The skip list.
    Skip,
    /// The Natarajan–Mittal BST.
    Bst,
}

impl Kind {
    /// Every structure.
    pub const ALL: [Kind; 4] = [Kind::List, Kind::Hash, Kind::Skip, Kind::Bst];

    /// A short name for messages and PERDURE-CHECK rows.
    pub fn name(self) -> &'static str {
        match self {
            Kind::List => "list",
            Kind::Hash => "hash",
            Kind::Skip => "skiplist",
            Kind::Bst => "bst",
        }
    }

    /// The tracking variants that apply to the structure (the skip list
    /// refuses `MarkableAtomicPointer`, §6.4.3).
    pub fn variants(self) -> Vec<Tracking> {
        Tracking::ALL
            .into_iter()
            .filter(|&t| !(self == Kind::Skip && t == Tracking::Markable))
            .collect()
    }
}

/// An opened structure of any kind, with one interface.
#[derive(Clone, Copy, Debug)]
pub enum Ds {
    /// A list.
    List(HarrisList),
    /// A hash table.
    Hash(HashTable),
    /// A skip list.
    Skip(SkipList),
    /// A BST.
    Bst(Bst),
}

impl Ds {
    /// Creates a structure of kind `k` at root object `root`.
    pub fn create<B: Backend>(
        k: impl Into<Kind>,
        h: &mut Handle<'_, '_, B>,
        root: usize,
    ) -> Result<Ds, RelaxError> {
        Ok(match k.into() {
            Kind::List => Ds::List(HarrisList::create(h, root)?),
            Kind::Hash => Ds::Hash(HashTable::create(h, root, 4)?),
            Kind::Skip => Ds::Skip(SkipList::create(h, root)?),
            Kind::Bst => Ds::Bst(Bst::create(h, root)?),
        })
    }
    /// Opens the structure of kind `k` at root object `root`.
    pub fn open<B: Backend>(
        k: impl Into<Kind>,
        s: &Space<'_, B>,
        root: usize,
    ) -> Result<Ds, RelaxError> {
        Ok(match k.into() {
            Kind::List => Ds::List(HarrisList::open(s, root)?),
            Kind::Hash => Ds::Hash(HashTable::open(s, root)?),
            Kind::Skip => Ds::Skip(SkipList::open(s, root)?),
            Kind::Bst => Ds::Bst(Bst::open(s, root)?),
        })
    }
    pub fn insert<B: Backend>(self, h: &mut Handle<'_, '_, B>, k: u64) -> Result<bool, RelaxError> {
        match self {
            Ds::List(l) => l.insert(h, k),
            Ds::Hash(t) => t.insert(h, k),
            Ds::Skip(l) => l.insert(h, k),
            Ds::Bst(t) => t.insert(h, k),
        }
    }
    pub fn remove<B: Backend>(self, h: &mut Handle<'_, '_, B>, k: u64) -> Result<bool, RelaxError> {
        match self {
            Ds::List(l) => l.remove(h, k),
            Ds::Hash(t) => t.remove(h, k),
            Ds::Skip(l) => l.remove(h, k),
            Ds::Bst(t) => t.remove(h, k),
        }
    }
    /// `insert` if `ins`, else `remove`.
    pub fn update<B: Backend>(
        self,
        h: &mut Handle<'_, '_, B>,
        ins: bool,
        k: u64,
    ) -> Result<bool, RelaxError> {
        if ins {
            self.insert(h, k)
        } else {
            self.remove(h, k)
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
            Ds::Skip(l) => l.contains(h, k),
            Ds::Bst(t) => t.contains(h, k),
        }
    }
    /// The keys in ascending order (the hash table's sorted).
    pub fn keys<B: Backend>(self, h: &mut Handle<'_, '_, B>) -> Result<Vec<u64>, RelaxError> {
        match self {
            Ds::List(l) => l.keys(h),
            Ds::Hash(t) => t.keys(h).map(|mut v| {
                v.sort_unstable();
                v
            }),
            Ds::Skip(l) => l.keys(h),
            Ds::Bst(t) => t.keys(h),
        }
    }
    /// The keys as a set; an error if the traversal repeats one or returns
    /// them out of order.
    pub fn key_set<B: Backend>(
        self,
        h: &mut Handle<'_, '_, B>,
    ) -> Result<BTreeSet<u64>, RelaxError> {
        let v = self.keys(h)?;
        let s: BTreeSet<u64> = v.iter().copied().collect();
        if s.len() != v.len() || !v.windows(2).all(|w| w[0] < w[1]) {
            return Err(RelaxError::Config(format!(
                "keys not strictly sorted: {v:?}"
            )));
        }
        Ok(s)
    }
}

/// The sequential model of [`Ds::update`]: what it must return.
pub fn model_update(model: &mut BTreeSet<u64>, ins: bool, k: u64) -> bool {
    if ins {
        model.insert(k)
    } else {
        model.remove(&k)
    }
}

/// The fields a full `keys()` traversal (after any operation) has read, by
/// walking the NVMM replica from root object `root`: for the list and the
/// hash table every bucket pointer, and `next` of every head, `key`, `next`
/// of every node (not the sentinels' keys nor the bucket count, which
/// field-tracking variants never recover); for the skip list every `next`
/// of the head and `key`, `next[0]` of every level-0 node; for the BST
/// `key`, `left`, `right` of every reachable node.
pub fn traversed_fields<B: Backend>(pool: &Pool<B>, kind: Kind, root: u64) -> Vec<u64> {
    let w = |off: u64| {
        pool.word(off)
            .unwrap()
            .load(std::sync::atomic::Ordering::Acquire)
    };
    let mut fields = vec![];
    let mut heads = vec![];
    match kind {
        Kind::List => heads.push(root),
        Kind::Hash => {
            let n = w(root);
            fields.extend((1..=n).map(|i| root + 16 * i));
            heads.extend((1..=n).map(|i| w(root + 16 * i)));
        }
        Kind::Skip => {
            let h = w(root + 16);
            fields.extend((0..h).map(|i| root + 32 + 16 * i));
            let mut n = w(root + 32) & !0xf;
            while n != 0 {
                fields.extend([n, n + 32]);
                n = w(n + 32) & !0xf;
            }
        }
        Kind::Bst => {
            let mut stack = vec![root];
            while let Some(n) = stack.pop() {
                fields.extend([n, n + 16, n + 32]);
                for c in [w(n + 16) & !0xf, w(n + 32) & !0xf] {
                    if c != 0 {
                        stack.push(c);
                    }
                }
            }
        }
    }
    for head in heads {
        fields.push(head + 16);
        let mut n = w(head + 16) & !0xf;
        while n != 0 {
            fields.extend([n, n + 16]);
            n = w(n + 16) & !0xf;
        }
    }
    fields
}

/// Whether the run is a deep one: `PERDURE_DEPTH=deep` (`make verify
/// DEPTH=deep`).
pub fn deep() -> bool {
    std::env::var("PERDURE_DEPTH").is_ok_and(|d| d == "deep")
}

/// Whether the run is the mutation tier: `PERDURE_DEPTH=mutants` (the test
/// command of `make mutants`, docs/MUTANTS.md): a twentieth of the shuttle schedules,
/// one image per crash point of the crash tests.
pub fn mutants() -> bool {
    std::env::var("PERDURE_DEPTH").is_ok_and(|d| d == "mutants")
}

/// Schedules per model-checker configuration and scheduler:
/// `PERDURE_SHUTTLE_ITERS`, else `default`, or `deep_runs` in a [`deep`]
/// run, or a twentieth of `default` (at least 2) in the [`mutants`] tier.
pub fn shuttle_iterations(default: usize, deep_runs: usize) -> usize {
    let normal = if mutants() {
        (default / 20).max(2)
    } else if deep() {
        deep_runs
    } else {
        default
    };
    std::env::var("PERDURE_SHUTTLE_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(normal)
}

/// The draws of a splitmix64 generator seeded with `seed`, without end:
/// the random operations of a test, one draw each.
pub fn draws(seed: u64) -> impl Iterator<Item = u64> {
    let mut s = seed;
    std::iter::repeat_with(move || splitmix(&mut s))
}

/// A pool of `size` bytes leaked for the `'static` threads of a
/// model-checker schedule, and the space's base in it.
pub fn leaked_pool(name: &str, size: u64) -> (&'static Pool<NoFlush>, u64) {
    let pool: &'static Pool<NoFlush> =
        Box::leak(Box::new(Pool::volatile(name, size, NoFlush).unwrap()));
    (pool, base(pool))
}

/// `#[test]` functions that each call `$run` with their own argument: a
/// suite written once, one named test per structure, shape or mode
/// (`tests_calling!(explore => { list_test(Kind::List); })`).
#[allow(unused_macros)]
macro_rules! tests_calling {
    ($run:expr => { $($name:ident($arg:expr);)+ }) => {
        $(
            #[test]
            fn $name() {
                ($run)($arg);
            }
        )+
    };
}
#[allow(unused_imports)]
pub(crate) use tests_calling;

/// splitmix64.
pub fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

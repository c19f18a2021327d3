//! Helpers of the data-structure tests (`tests/ds_*.rs`): the list of
//! constructions every test runs on, a seeded generator, sizes.
//!
//! [`for_each_ptm!`] runs a test on Redo-PTM, RedoTimed-PTM and RedoOpt-PTM
//! (the `redo::Config` variants), CX-PTM and CX-PUC; to add a construction,
//! add one arm.

#![allow(dead_code)]

/// Runs `$body` once per construction, with `$name` the construction's
/// name and `$p` a fresh PTM for `$threads` thread ids on a volatile
/// `NoFlush` pool of `$size` bytes. `$body` is usually a call of a function
/// generic over `P: Ptm`.
#[macro_export]
macro_rules! for_each_ptm {
    ($threads:expr, $size:expr, |$name:ident, $p:ident| $body:block) => {{
        use perdure_pm::{NoFlush, Pool};
        {
            let $name = "Redo-PTM";
            let pool = Pool::volatile("ds-test", $size, NoFlush).unwrap();
            let cfg = perdure_ptm::redo::Config {
                threads: $threads,
                ..perdure_ptm::redo::Config::small()
            };
            let $p = perdure_ptm::RedoPtm::create(pool, &cfg).unwrap();
            $body
        }
        for (name, variant) in [
            ("RedoTimed-PTM", perdure_ptm::redo::Variant::Timed),
            ("RedoOpt-PTM", perdure_ptm::redo::Variant::Opt),
        ] {
            let $name = name;
            let pool = Pool::volatile("ds-test", $size, NoFlush).unwrap();
            let cfg = perdure_ptm::redo::Config {
                threads: $threads,
                variant,
                ..perdure_ptm::redo::Config::small()
            };
            let $p = perdure_ptm::RedoPtm::create(pool, &cfg).unwrap();
            $body
        }
        {
            let $name = "CX-PTM";
            let pool = Pool::volatile("ds-test", $size, NoFlush).unwrap();
            let $p =
                perdure_ptm::CxPtm::create(pool, &$crate::ds_common::cx_config($threads)).unwrap();
            $body
        }
        {
            let $name = "CX-PUC";
            let pool = Pool::volatile("ds-test", $size, NoFlush).unwrap();
            let $p = perdure_ptm::CxPuc::<_, u64>::create(
                pool,
                &$crate::ds_common::cx_config($threads),
                0,
            )
            .unwrap();
            $body
        }
    }};
}

/// The small CX configuration with `threads` threads.
pub fn cx_config(threads: usize) -> perdure_ptm::cx::Config {
    perdure_ptm::cx::Config {
        threads,
        ..perdure_ptm::cx::Config::small()
    }
}

/// A seeded xorshift generator (tests must be reproducible).
pub struct Rng(pub u64);

impl Rng {
    /// The next number.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Operations in a test: fewer in debug builds.
pub fn scaled(release: u64) -> u64 {
    if cfg!(debug_assertions) {
        (release / 10).max(1)
    } else {
        release
    }
}

/// The operations the three sets offer, so that one test covers all three.
pub trait SetOps: Copy + Send + Sync {
    /// `insert`, unwrapped.
    fn insert<P: perdure_ptm::Ptm>(&self, p: &P, k: u64) -> bool;
    /// `remove`, unwrapped.
    fn remove<P: perdure_ptm::Ptm>(&self, p: &P, k: u64) -> bool;
    /// `contains`, unwrapped.
    fn contains<P: perdure_ptm::Ptm>(&self, p: &P, k: u64) -> bool;
    /// `check`, unwrapped: the size.
    fn check<P: perdure_ptm::Ptm>(&self, p: &P) -> u64;
    /// `destroy`, unwrapped.
    fn destroy<P: perdure_ptm::Ptm>(self, p: &P);
}

macro_rules! set_ops {
    ($($t:ty),*) => {$(
        impl SetOps for $t {
            fn insert<P: perdure_ptm::Ptm>(&self, p: &P, k: u64) -> bool {
                <$t>::insert(self, p, k).unwrap()
            }
            fn remove<P: perdure_ptm::Ptm>(&self, p: &P, k: u64) -> bool {
                <$t>::remove(self, p, k).unwrap()
            }
            fn contains<P: perdure_ptm::Ptm>(&self, p: &P, k: u64) -> bool {
                <$t>::contains(self, p, k).unwrap()
            }
            fn check<P: perdure_ptm::Ptm>(&self, p: &P) -> u64 {
                <$t>::check(self, p).unwrap()
            }
            fn destroy<P: perdure_ptm::Ptm>(self, p: &P) {
                <$t>::destroy(self, p).unwrap()
            }
        }
    )*};
}
set_ops!(
    perdure_ptm::ds::ListSet,
    perdure_ptm::ds::RbTreeSet,
    perdure_ptm::ds::HashSet
);

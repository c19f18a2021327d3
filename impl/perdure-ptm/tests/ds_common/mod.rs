//! Helpers of the data-structure tests (`tests/ds_*.rs`): a seeded
//! generator, sizes, the sets' common operations. The constructions they
//! run on are `tests/common/ptms.rs`'s.

#![allow(dead_code)]

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

//! Shared set-up of the skip-list and BST tests: one interface over both
//! structures, the variants each applies to, and the NVMM fields a full
//! traversal reads (for the replica check after recovery).
#![allow(dead_code)]

use perdure_pm::{Backend, Pool};
use perdure_relax::ds::{Bst, SkipList};
use perdure_relax::{Handle, RelaxError, Space, Tracking};
use std::collections::BTreeSet;

/// Which structure a test runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// The skip list.
    Skip,
    /// The Natarajan–Mittal BST.
    Bst,
}

impl Shape {
    /// Both shapes.
    pub const ALL: [Shape; 2] = [Shape::Skip, Shape::Bst];

    /// A short name for messages and PERDURE-CHECK rows.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Skip => "skiplist",
            Shape::Bst => "bst",
        }
    }

    /// The tracking variants that apply to the shape (the skip list refuses
    /// `MarkableAtomicPointer`, §6.4.3).
    pub fn variants(self) -> Vec<Tracking> {
        Tracking::ALL
            .into_iter()
            .filter(|&t| !(self == Shape::Skip && t == Tracking::Markable))
            .collect()
    }
}

/// An opened structure of either shape, with one interface.
#[derive(Clone, Copy, Debug)]
pub enum Set {
    /// A skip list.
    Skip(SkipList),
    /// A BST.
    Bst(Bst),
}

impl Set {
    pub fn create<B: Backend>(
        s: Shape,
        h: &mut Handle<'_, '_, B>,
        root: usize,
    ) -> Result<Set, RelaxError> {
        Ok(match s {
            Shape::Skip => Set::Skip(SkipList::create(h, root)?),
            Shape::Bst => Set::Bst(Bst::create(h, root)?),
        })
    }
    pub fn open<B: Backend>(s: Shape, sp: &Space<'_, B>, root: usize) -> Result<Set, RelaxError> {
        Ok(match s {
            Shape::Skip => Set::Skip(SkipList::open(sp, root)?),
            Shape::Bst => Set::Bst(Bst::open(sp, root)?),
        })
    }
    pub fn insert<B: Backend>(self, h: &mut Handle<'_, '_, B>, k: u64) -> Result<bool, RelaxError> {
        match self {
            Set::Skip(l) => l.insert(h, k),
            Set::Bst(t) => t.insert(h, k),
        }
    }
    pub fn remove<B: Backend>(self, h: &mut Handle<'_, '_, B>, k: u64) -> Result<bool, RelaxError> {
        match self {
            Set::Skip(l) => l.remove(h, k),
            Set::Bst(t) => t.remove(h, k),
        }
    }
    pub fn contains<B: Backend>(
        self,
        h: &mut Handle<'_, '_, B>,
        k: u64,
    ) -> Result<bool, RelaxError> {
        match self {
            Set::Skip(l) => l.contains(h, k),
            Set::Bst(t) => t.contains(h, k),
        }
    }
    pub fn keys<B: Backend>(self, h: &mut Handle<'_, '_, B>) -> Result<Vec<u64>, RelaxError> {
        match self {
            Set::Skip(l) => l.keys(h),
            Set::Bst(t) => t.keys(h),
        }
    }
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

/// The fields a full `keys()` traversal (after any operation) has read, by
/// walking the NVMM replica from root object `root`: for the skip list
/// every `next` of the head and `key`, `next[0]` of every level-0 node; for
/// the BST `key`, `left`, `right` of every reachable node.
pub fn traversed_fields<B: Backend>(pool: &Pool<B>, s: Shape, root: u64) -> Vec<u64> {
    let w = |off: u64| {
        pool.word(off)
            .unwrap()
            .load(std::sync::atomic::Ordering::Acquire)
    };
    let mut fields = vec![];
    match s {
        Shape::Skip => {
            let h = w(root + 16);
            fields.extend((0..h).map(|i| root + 32 + 16 * i));
            let mut n = w(root + 32) & !0xf;
            while n != 0 {
                fields.extend([n, n + 32]);
                n = w(n + 32) & !0xf;
            }
        }
        Shape::Bst => {
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
    fields
}

/// splitmix64.
pub fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

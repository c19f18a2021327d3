//! A persistent array of `u64` cells (the thesis's array benchmark,
//! Chapter 8): the non-recursive structure that `BitsetAtomic` (§6.4.1) and
//! `PseudoBitsetAtomic` (§6.4.5) exist for. No pointers lead to the cells,
//! so the pointer-marking variants cannot track them: opening an array
//! under `Markable`, `Hybrid` or `ZMarkable` is a configuration error.
//! Eager Mirror recovery copies every cell at open.
//!
//! One node: field 0 the length (written once, before the root is set),
//! fields 1..=n the cells, each a Mirror [`PAtomic`]. Every cell operation
//! is the persistent atomic's (Algorithm 4.1), so it is durable and
//! linearisable on its own.

use super::common::{create_counted, open_counted};
use crate::error::RelaxError;
use crate::patomic::PAtomic;
use crate::space::{Handle, Space, Tracking};
use perdure_pm::Backend;

/// Most cells (the array is one heap block of at most 64 KiB).
pub const MAX_CELLS: usize = crate::node::MAX_COUNTED;

node_type! {
    /// The array node: `[n, cell 0, …, cell n−1]`, every field data.
    ArrayNode {
        child: ArrayNode,
        count: |space, node| crate::node::counted_field_count(space, node, "array"),
        values: usize::MAX,
    }
}

/// A persistent array of `u64` cells at a root of a space.
#[derive(Clone, Copy, Debug)]
pub struct PArray {
    node: u64,
    n: u64,
}

fn trackable(t: Tracking) -> Result<(), RelaxError> {
    if t.marks_pointers() {
        return Err(RelaxError::Config(format!(
            "{} tracks nodes through pointers; an array has none (use BitsetAtomic, PseudoBitsetAtomic or eager recovery)",
            t.seed_name()
        )));
    }
    Ok(())
}

impl PArray {
    /// Creates an array of `n` zero cells (1..=[`MAX_CELLS`]) at root `root`.
    pub fn create<B: Backend>(
        h: &mut Handle<'_, '_, B>,
        root: usize,
        n: usize,
    ) -> Result<Self, RelaxError> {
        trackable(h.space().tracking())?;
        let node = create_counted::<ArrayNode, B>(h, root, n, ("an array", "cells"), |_| Ok(0))?;
        Ok(PArray { node, n: n as u64 })
    }

    /// Opens the array at root `root` after a crash (O(1) for the lazy
    /// variants; eager copies every cell).
    pub fn open<B: Backend>(space: &Space<'_, B>, root: usize) -> Result<Self, RelaxError> {
        trackable(space.tracking())?;
        let (node, n) = open_counted::<ArrayNode, B>(space, root)?;
        Ok(PArray { node, n })
    }

    /// The number of cells.
    pub fn len(&self) -> usize {
        self.n as usize
    }

    /// Whether the array has no cells (never: arrays have at least one).
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Cell `i`, or a configuration error if `i` is out of range.
    pub fn cell(&self, i: usize) -> Result<PAtomic, RelaxError> {
        if i as u64 >= self.n {
            return Err(RelaxError::Config(format!(
                "cell {i} is beyond the array's {} cells",
                self.n
            )));
        }
        Ok(PAtomic::at(self.node + 16 * (1 + i as u64)))
    }
}

//! The red-black tree set of the seed's §6 set benchmarks ("a sequential
//! implementation of a balanced red-black tree ... with 10^6 keys", Figure 6
//! centre, Table 1 "Tree"): `u64` keys, sequential code run inside a
//! transaction.
//!
//! The algorithm is the textbook one (Cormen, Leiserson, Rivest and Stein,
//! ch. 13) with null leaves, in the formulation of Java's `TreeMap`
//! (`fixAfterInsertion`, `deleteEntry`, `fixAfterDeletion`): a node with two
//! children is removed by moving its in-order successor's key into it and
//! removing the successor, and a leaf being removed serves as its own
//! phantom leaf during the fix-up, so no sentinel node is needed. An update
//! stores O(log n) words (more for the rotations), which is why the seed
//! finds the tree at 100% updates to scale negatively (§6).
//!
//! Layout (region words): header `[MAGIC, root, len]`; node
//! `[key, left, right, parent, color]` (40 bytes: the allocator's 64-byte
//! class), `color` [`BLACK`] or [`RED`]. A removed node is freed in the
//! transaction that unlinks it.
//!
//! Invariant ([`check_in`]): in-order keys strictly increase; the root is
//! black and has no parent; every colour is red or black; a red node has
//! black children; every path from the root to a leaf holds the same number
//! of black nodes; every child's `parent` is the node it hangs from; the
//! node count is `len`.

use super::{
    alloc, create_header, create_root, free, header, ld, open_root, read, st, step_bound, update,
    DsError, Fault, Violation,
};
use crate::tx::{Ptm, Transaction, TxRead};

/// The tree's header magic.
pub const MAGIC: u64 = u64::from_le_bytes(*b"PDRBTRE1");
/// The colour word of a black node (and of null leaves).
pub const BLACK: u64 = 0;
/// The colour word of a red node.
pub const RED: u64 = 1;
const KIND: &str = "red-black tree set";
// The header and node words of the module docs' layout, in order.
perdure_pm::word_offsets!(_, ROOT, LEN);
perdure_pm::word_offsets!(_, LEFT, RIGHT, PARENT, COLOR);
/// A node's size: it ends after its colour word.
const NODE: u64 = COLOR + 8;
// The layout is persistent: pools written before stay readable.
const _: () = assert!(ROOT == 8 && LEN == 16 && LEFT == 8 && COLOR == 32 && NODE == 40);

/// A red-black tree set in a root slot. See the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RbTreeSet {
    root: usize,
}

set_handle!(RbTreeSet);

/// Creates an empty tree in root slot `root` if the slot is 0; returns the
/// header's offset.
pub fn create_in<T: Transaction>(tx: &T, root: usize) -> Result<u64, Fault> {
    create_header(tx, root, MAGIC, 3)
}

/// The tree of one transaction: its header and the null-safe accessors of
/// `TreeMap` (`colorOf`, `parentOf`, `leftOf`, `rightOf`, `setColor`).
struct Tree<'t, T> {
    tx: &'t T,
    h: u64,
    /// Steps left before a walk is declared a cycle.
    budget: std::cell::Cell<u64>,
}

impl<T: TxRead> Tree<'_, T> {
    fn step(&self) -> Result<(), Fault> {
        let b = self.budget.get();
        if b == 0 {
            return Err(Fault::Invariant(Violation::Cycle));
        }
        self.budget.set(b - 1);
        Ok(())
    }
    fn top(&self) -> Result<u64, Fault> {
        ld(self.tx, self.h + ROOT)
    }
    fn field(&self, p: u64, f: u64) -> Result<u64, Fault> {
        if p == 0 {
            Ok(0)
        } else {
            ld(self.tx, p + f)
        }
    }
    fn key(&self, p: u64) -> Result<u64, Fault> {
        ld(self.tx, p)
    }
    fn left(&self, p: u64) -> Result<u64, Fault> {
        self.field(p, LEFT)
    }
    fn right(&self, p: u64) -> Result<u64, Fault> {
        self.field(p, RIGHT)
    }
    fn parent(&self, p: u64) -> Result<u64, Fault> {
        self.field(p, PARENT)
    }
    fn color(&self, p: u64) -> Result<u64, Fault> {
        // Null leaves are black.
        self.field(p, COLOR)
    }
    /// The node holding `key`, or 0.
    fn find(&self, key: u64) -> Result<u64, Fault> {
        let mut p = self.top()?;
        while p != 0 {
            self.step()?;
            let k = self.key(p)?;
            p = if key < k {
                self.left(p)?
            } else if key > k {
                self.right(p)?
            } else {
                return Ok(p);
            };
        }
        Ok(0)
    }
}

impl<T: Transaction> Tree<'_, T> {
    fn set(&self, p: u64, f: u64, v: u64) -> Result<(), Fault> {
        st(self.tx, p + f, v)
    }
    fn set_color(&self, p: u64, c: u64) -> Result<(), Fault> {
        if p == 0 {
            Ok(())
        } else {
            self.set(p, COLOR, c)
        }
    }
    fn set_top(&self, p: u64) -> Result<(), Fault> {
        st(self.tx, self.h + ROOT, p)
    }

    /// Replaces `p` by `q` in `p`'s parent (or as the root).
    fn replace_in_parent(&self, p: u64, q: u64) -> Result<(), Fault> {
        let pp = self.parent(p)?;
        if pp == 0 {
            self.set_top(q)
        } else if self.left(pp)? == p {
            self.set(pp, LEFT, q)
        } else {
            self.set(pp, RIGHT, q)
        }
    }

    /// `rotateLeft(p)` when `(near, far)` is `(LEFT, RIGHT)`, `rotateRight(p)`
    /// when it is `(RIGHT, LEFT)`: `p`'s `far` child takes its place and `p`
    /// becomes that child's `near` child.
    fn rotate(&self, p: u64, near: u64, far: u64) -> Result<(), Fault> {
        if p == 0 {
            return Ok(());
        }
        let r = self.field(p, far)?;
        let rn = self.field(r, near)?;
        self.set(p, far, rn)?;
        if rn != 0 {
            self.set(rn, PARENT, p)?;
        }
        self.set(r, PARENT, self.parent(p)?)?;
        self.replace_in_parent(p, r)?;
        self.set(r, near, p)?;
        self.set(p, PARENT, r)
    }

    /// `fixAfterInsertion(x)`. `TreeMap` writes each case twice, "with
    /// left and right exchanged"; here `(near, far)` is `(LEFT, RIGHT)` when
    /// `x`'s parent is a left child and `(RIGHT, LEFT)` when it is a right
    /// one, and `rotate(_, near, far)` is `rotateLeft` in the first case.
    fn fix_after_insertion(&self, mut x: u64) -> Result<(), Fault> {
        self.set(x, COLOR, RED)?;
        while x != 0 && x != self.top()? && self.color(self.parent(x)?)? == RED {
            self.step()?;
            let xp = self.parent(x)?;
            let xpp = self.parent(xp)?;
            let (near, far) = if xp == self.left(xpp)? {
                (LEFT, RIGHT)
            } else {
                (RIGHT, LEFT)
            };
            let y = self.field(xpp, far)?;
            if self.color(y)? == RED {
                self.set_color(xp, BLACK)?;
                self.set_color(y, BLACK)?;
                self.set_color(xpp, RED)?;
                x = xpp;
            } else {
                if x == self.field(xp, far)? {
                    x = xp;
                    self.rotate(x, near, far)?;
                }
                let xp = self.parent(x)?;
                self.set_color(xp, BLACK)?;
                self.set_color(self.parent(xp)?, RED)?;
                self.rotate(self.parent(xp)?, far, near)?;
            }
        }
        self.set_color(self.top()?, BLACK)
    }

    /// `fixAfterDeletion(x)`, with `(near, far)` as in
    /// [`Tree::fix_after_insertion`]: `(LEFT, RIGHT)` when `x` is a left
    /// child.
    fn fix_after_deletion(&self, mut x: u64) -> Result<(), Fault> {
        while x != self.top()? && self.color(x)? == BLACK {
            self.step()?;
            let xp = self.parent(x)?;
            let (near, far) = if x == self.left(xp)? {
                (LEFT, RIGHT)
            } else {
                (RIGHT, LEFT)
            };
            let mut sib = self.field(xp, far)?;
            if self.color(sib)? == RED {
                self.set_color(sib, BLACK)?;
                self.set_color(xp, RED)?;
                self.rotate(xp, near, far)?;
                sib = self.field(self.parent(x)?, far)?;
            }
            if self.color(self.field(sib, near)?)? == BLACK
                && self.color(self.field(sib, far)?)? == BLACK
            {
                self.set_color(sib, RED)?;
                x = self.parent(x)?;
            } else {
                if self.color(self.field(sib, far)?)? == BLACK {
                    self.set_color(self.field(sib, near)?, BLACK)?;
                    self.set_color(sib, RED)?;
                    self.rotate(sib, far, near)?;
                    sib = self.field(self.parent(x)?, far)?;
                }
                let xp = self.parent(x)?;
                self.set_color(sib, self.color(xp)?)?;
                self.set_color(xp, BLACK)?;
                self.set_color(self.field(sib, far)?, BLACK)?;
                self.rotate(xp, near, far)?;
                x = self.top()?;
            }
        }
        self.set_color(x, BLACK)
    }

    /// `deleteEntry(p)`: unlinks node `p` and frees the node removed.
    fn delete(&self, mut p: u64) -> Result<(), Fault> {
        if self.left(p)? != 0 && self.right(p)? != 0 {
            // The successor: the leftmost node of the right subtree.
            let mut s = self.right(p)?;
            while self.left(s)? != 0 {
                self.step()?;
                s = self.left(s)?;
            }
            self.set(p, 0, self.key(s)?)?;
            p = s;
        }
        let l = self.left(p)?;
        let replacement = if l != 0 { l } else { self.right(p)? };
        if replacement != 0 {
            self.set(replacement, PARENT, self.parent(p)?)?;
            self.replace_in_parent(p, replacement)?;
            if self.color(p)? == BLACK {
                self.fix_after_deletion(replacement)?;
            }
        } else if self.parent(p)? == 0 {
            self.set_top(0)?;
        } else {
            if self.color(p)? == BLACK {
                self.fix_after_deletion(p)?;
            }
            let pp = self.parent(p)?;
            if pp != 0 {
                if self.left(pp)? == p {
                    self.set(pp, LEFT, 0)?;
                } else if self.right(pp)? == p {
                    self.set(pp, RIGHT, 0)?;
                }
            }
        }
        free(self.tx, p)
    }
}

fn tree<T: TxRead>(tx: &T, root: usize) -> Result<Tree<'_, T>, Fault> {
    let h = header(tx, root, MAGIC)?;
    Ok(Tree {
        tx,
        h,
        budget: std::cell::Cell::new(step_bound(tx)),
    })
}

/// Adds `key`; whether it was absent.
pub fn insert_in<T: Transaction>(tx: &T, root: usize, key: u64) -> Result<bool, Fault> {
    let t = tree(tx, root)?;
    let mut p = t.top()?;
    let mut parent = 0;
    let mut go_left = false;
    while p != 0 {
        t.step()?;
        parent = p;
        let k = t.key(p)?;
        if key == k {
            return Ok(false);
        }
        go_left = key < k;
        p = if go_left { t.left(p)? } else { t.right(p)? };
    }
    let e = alloc(tx, NODE)?;
    for (f, v) in [
        (0, key),
        (LEFT, 0),
        (RIGHT, 0),
        (PARENT, parent),
        (COLOR, BLACK),
    ] {
        t.set(e, f, v)?;
    }
    if parent == 0 {
        t.set_top(e)?;
    } else {
        t.set(parent, if go_left { LEFT } else { RIGHT }, e)?;
        t.fix_after_insertion(e)?;
    }
    st(tx, t.h + LEN, ld(tx, t.h + LEN)? + 1)?;
    Ok(true)
}

/// Removes `key`; whether it was present.
pub fn remove_in<T: Transaction>(tx: &T, root: usize, key: u64) -> Result<bool, Fault> {
    let t = tree(tx, root)?;
    let p = t.find(key)?;
    if p == 0 {
        return Ok(false);
    }
    t.delete(p)?;
    st(tx, t.h + LEN, ld(tx, t.h + LEN)?.wrapping_sub(1))?;
    Ok(true)
}

/// Whether `key` is in the set.
pub fn contains_in<T: TxRead>(tx: &T, root: usize, key: u64) -> Result<bool, Fault> {
    Ok(tree(tx, root)?.find(key)? != 0)
}

/// Checks the red-black invariant of the module docs; returns the size.
pub fn check_in<T: TxRead>(tx: &T, root: usize) -> Result<u64, Fault> {
    let t = tree(tx, root)?;
    let top = t.top()?;
    let bad = |v| Err(Fault::Invariant(v));
    if top != 0 && (t.color(top)? != BLACK) {
        return bad(Violation::RedRoot);
    }
    if t.parent(top)? != 0 {
        return bad(Violation::BadParent);
    }
    // Depth-first, with each node's exclusive key bounds and the black
    // nodes above it; every null leaf reports its path's black count.
    let mut stack = vec![(top, None::<u64>, None::<u64>, 0u64)];
    let mut leaf_black = None;
    let mut n = 0u64;
    while let Some((p, lo, hi, above)) = stack.pop() {
        if p == 0 {
            match leaf_black {
                None => leaf_black = Some(above),
                Some(b) if b != above => return bad(Violation::BlackHeight),
                Some(_) => {}
            }
            continue;
        }
        t.step()?;
        n += 1;
        let (k, c) = (t.key(p)?, t.color(p)?);
        if lo.is_some_and(|lo| k <= lo) || hi.is_some_and(|hi| k >= hi) {
            return bad(Violation::Unordered);
        }
        if c != BLACK && c != RED {
            return bad(Violation::BadColor);
        }
        let (l, r) = (t.left(p)?, t.right(p)?);
        for child in [l, r] {
            if child != 0 {
                if t.parent(child)? != p {
                    return bad(Violation::BadParent);
                }
                if c == RED && t.color(child)? == RED {
                    return bad(Violation::RedRed);
                }
            }
        }
        let below = above + u64::from(c == BLACK);
        stack.push((r, Some(k), hi, below));
        stack.push((l, lo, Some(k), below));
    }
    if n != ld(tx, t.h + LEN)? {
        return bad(Violation::CountMismatch);
    }
    Ok(n)
}

/// Frees every node and the header; clears the root slot.
pub fn destroy_in<T: Transaction>(tx: &T, root: usize) -> Result<(), Fault> {
    check_in(tx, root)?;
    let t = tree(tx, root)?;
    let mut stack = vec![t.top()?];
    while let Some(p) = stack.pop() {
        if p != 0 {
            stack.push(t.left(p)?);
            stack.push(t.right(p)?);
            free(tx, p)?;
        }
    }
    free(tx, t.h)?;
    st(tx, crate::tx::root_offset(root), 0)
}

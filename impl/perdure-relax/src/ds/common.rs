//! What the five structures share, written once: the node-type
//! declaration ([`Node`] from a field list, §6.4.2's `recoverNode`), the
//! public set methods around each structure's `insert_at`, `remove_at`,
//! `contains_at` and `keys_at` (every operation in one epoch critical
//! section), the key field, the mark-free address of a link, opening a
//! root, creating and opening a counted node (the hash table's buckets, the
//! array's cells), the scan of one level of a list (Harris's list, level 0
//! of the skip list), and the bound that turns a walk round a cycle of a
//! corrupt pool into a corrupt-space error. The algorithm steps of each
//! structure (its `find` or `seek`, its CASes, its helping) stay in its own
//! module, with their citations.

use crate::error::RelaxError;
use crate::node::{Node, MAX_COUNTED};
use crate::patomic::{PAtomic, PAtomicPtr, LOW_BITS};
use crate::space::{Handle, Space};
use perdure_pm::Backend;

/// Declares a node type, a unit struct implementing [`Node`]: its children
/// are `$child`, its field count is `$count` (an expression over the
/// parameters named `$space` and `$node`), and its first `$values` fields
/// are data, the rest pointers. The short form `Name: N fields, V values`
/// is a node of `N` fields whose children are `Name`s.
macro_rules! node_type {
    // A node of a fixed number of fields, whose children are its own type.
    ($(#[$doc:meta])* $name:ident: $fields:literal fields, $values:literal values) => {
        node_type! {
            $(#[$doc])*
            $name {
                child: $name,
                count: |_, _| Ok($fields),
                values: $values,
            }
        }
    };
    (
        $(#[$doc:meta])*
        $name:ident {
            child: $child:ty,
            count: |$space:tt, $node:tt| $count:expr,
            values: $values:expr $(,)?
        }
    ) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name;

        impl crate::node::Node for $name {
            type Child = $child;

            fn field_count<B: perdure_pm::Backend>(
                $space: &crate::space::Space<'_, B>,
                $node: u64,
            ) -> Result<usize, crate::error::RelaxError> {
                $count
            }

            fn field_kind(i: usize) -> crate::node::FieldKind {
                crate::node::FieldKind::values_then_pointers(i, $values)
            }
        }
    };
}

/// The public `insert`, `remove` and `contains` of a set structure, inside
/// its `impl`: each runs the module's `insert_at`, `remove_at` or
/// `contains_at` through `self.$run(h, key, op)`. The form
/// `at $root` also writes `$run` as "in a critical section, at the node in
/// field `$root`, after `$check(key)`", and `keys` (documented by
/// `$keys_doc`) as the module's `keys_at` at that node in a critical
/// section; `doc` adds a line to the docs of the three key operations.
macro_rules! set_methods {
    (
        at $root:ident as $run:ident $(, check $check:path)? $(, doc $doc:literal)?,
        keys $keys_doc:literal $(,)?
    ) => {
        /// Runs `op` on `key` at the structure's root node, in a critical
        /// section.
        fn $run<B: Backend>(
            &self,
            h: &mut Handle<'_, '_, B>,
            key: u64,
            op: impl FnOnce(&mut Handle<'_, '_, B>, u64, u64) -> Result<bool, RelaxError>,
        ) -> Result<bool, RelaxError> {
            $($check(key)?;)?
            h.critical(|h| op(h, self.$root, key))
        }

        set_methods!(via $run $(, doc $doc)?);

        #[doc = $keys_doc]
        pub fn keys<B: Backend>(&self, h: &mut Handle<'_, '_, B>) -> Result<Vec<u64>, RelaxError> {
            let mut out = Vec::new();
            h.critical(|h| keys_at(h, self.$root, &mut out))?;
            Ok(out)
        }
    };
    (via $run:ident $(, doc $doc:literal)?) => {
        set_methods!(@one $run, insert, insert_at, "Inserts `key`; false if present." $(, $doc)?);
        set_methods!(@one $run, remove, remove_at, "Removes `key`; false if absent." $(, $doc)?);
        set_methods!(@one $run, contains, contains_at, "Whether `key` is present." $(, $doc)?);
    };
    (@one $run:ident, $name:ident, $op:ident, $($doc:literal),+) => {
        $(#[doc = $doc])+
        pub fn $name<B: Backend>(
            &self,
            h: &mut Handle<'_, '_, B>,
            key: u64,
        ) -> Result<bool, RelaxError> {
            self.$run(h, key, $op)
        }
    };
}

/// Field 0 of a node of the list, the BST or the skip list: its key.
pub(super) fn key_of(n: u64) -> PAtomic {
    PAtomic::at(n)
}

/// The address bits of a loaded pointer (its marks cleared).
pub(super) fn addr(v: u64) -> u64 {
    v & !LOW_BITS
}

/// The node that root `root` designates, or [`RelaxError::EmptyRoot`].
pub(super) fn root_node<B: Backend>(space: &Space<'_, B>, root: usize) -> Result<u64, RelaxError> {
    space
        .root(root)?
        .ok_or(RelaxError::EmptyRoot { index: root })
}

/// Opens a counted node (field 0 its entry count `n`, then `n` entries) at
/// root `root` after a crash: checks that its `n + 1` fields lie in the
/// pool and recovers it (O(1) for the lazy variants; eager recovers
/// everything below it). Returns the node and `n`.
pub(super) fn open_counted<N, B>(
    space: &Space<'_, B>,
    root: usize,
) -> Result<(u64, u64), RelaxError>
where
    N: Node,
    N::Child: Node<Child = N::Child>,
    B: Backend,
{
    let node = root_node(space, root)?;
    let n = N::field_count(space, node)? as u64 - 1;
    space.pool().check_range(node, 16 * (n + 1), 16)?;
    space.recover_root::<N>(node)?;
    Ok((node, n))
}

/// Creates a counted node of `n` entries (checked by [`check_count`]; the
/// `i`-th from `entry(h)`, called in order) and stores it in root `root`.
/// Returns the node.
pub(super) fn create_counted<N, B>(
    h: &mut Handle<'_, '_, B>,
    root: usize,
    n: usize,
    (what, entries): (&str, &str),
    mut entry: impl FnMut(&mut Handle<'_, '_, B>) -> Result<u64, RelaxError>,
) -> Result<u64, RelaxError>
where
    N: Node,
    B: Backend,
{
    check_count(n, what, entries)?;
    let mut init = Vec::with_capacity(n + 1);
    init.push(n as u64);
    for _ in 0..n {
        init.push(entry(h)?);
    }
    let node = h.alloc_node::<N>(&init)?;
    h.space().set_root(root, node)?;
    Ok(node)
}

/// The bound on a walk through nodes of at least `node_bytes` bytes: more
/// steps than the pool holds such nodes means the walk is going round a
/// cycle, which only a corrupt pool has.
pub(super) struct WalkBound {
    steps: u64,
    most: u64,
}

impl WalkBound {
    pub(super) fn new<B: Backend>(sp: &Space<'_, B>, node_bytes: u64) -> Self {
        WalkBound {
            steps: 0,
            most: sp.pool().size() / node_bytes,
        }
    }

    /// Counts a step; a corrupt-space error with `reason()` past the
    /// bound.
    pub(super) fn step<B: Backend>(
        &mut self,
        sp: &Space<'_, B>,
        reason: impl FnOnce() -> String,
    ) -> Result<(), RelaxError> {
        self.steps += 1;
        if self.steps > self.most {
            return Err(corrupt(sp, reason()));
        }
        Ok(())
    }
}

/// [`RelaxError::Config`] unless a counted node's entry count `n` is in
/// `1..=`[`MAX_COUNTED`]: "`what` needs 1..=MAX_COUNTED `entries`, not `n`".
fn check_count(n: usize, what: &str, entries: &str) -> Result<(), RelaxError> {
    if n == 0 || n > MAX_COUNTED {
        return Err(RelaxError::Config(format!(
            "{what} needs 1..={MAX_COUNTED} {entries}, not {n}"
        )));
    }
    Ok(())
}

/// a corrupt-space error for the space `sp`.
pub(super) fn corrupt<B: Backend>(sp: &Space<'_, B>, reason: String) -> RelaxError {
    RelaxError::corrupt(sp.base(), reason)
}

/// The keys of the nodes along one level of a list, from the node after
/// `head` to the null that ends it, in order: `next(n)` is node `n`'s link
/// on that level, whose bit 0 marks `n` deleted (such nodes are left out)
/// and whose bits in `marks` are cleared to follow it. `node_bytes` bounds
/// the walk ([`WalkBound`]); `what` names the list in the error.
/// Linearisable only when no update runs concurrently.
pub(super) fn level_keys<B: Backend, N: Node>(
    sp: &Space<'_, B>,
    head: u64,
    next: impl Fn(u64) -> PAtomicPtr<N>,
    marks: u64,
    node_bytes: u64,
    what: &str,
    out: &mut Vec<u64>,
) -> Result<(), RelaxError> {
    const DELETED: u64 = 1;
    let mut curr = next(head).load(sp)? & !marks;
    let mut bound = WalkBound::new(sp, node_bytes);
    while curr != 0 {
        let link = next(curr).load(sp)?;
        if link & DELETED == 0 {
            out.push(key_of(curr).load(sp)?);
        }
        curr = link & !marks;
        bound.step(sp, || format!("the {what} at {head:#x} has a cycle"))?;
    }
    Ok(())
}

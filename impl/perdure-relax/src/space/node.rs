//! Nodes: what RELAX needs to know about a structure's objects.
//!
//! §6.4.2: "This algorithm requires that the programmer provides a simple
//! `recoverNode` method. This method receives a pointer to a node, and it
//! calls `recoverField` for each field in the node. This method can be
//! automatically generated when the programming language provides a
//! reflection operation that can generate a list of fields." Here each
//! structure's node type implements [`Node`] by listing its fields (field
//! `i` is the persistent atomic at `node + 16·i`); [`Node::recover_node`] is
//! generated from that list, and Mirror's eager recovery uses the same list
//! as its trace function (Chapter 4: "a tracing operation must be
//! provided").

use crate::error::RelaxError;
use crate::space::Space;
use crate::sync::atomic::Ordering;
use perdure_pm::Backend;

/// Most entries of a counted node (one heap block of at most 64 KiB:
/// 4096 fields, the count among them).
pub const MAX_COUNTED: usize = 4095;

/// The field count of a *counted* node — field 0 holds its entry count `n`
/// (written once, durable before the node is published), fields 1..=n the
/// entries — read from the NVMM replica, which is authoritative for an
/// immutable field at any time, and checked against `1..=MAX_COUNTED`.
/// `what` names the node in the error.
pub fn counted_field_count<B: Backend>(
    space: &Space<'_, B>,
    node: u64,
    what: &str,
) -> Result<usize, RelaxError> {
    let n = space.pool().word(node)?.load(Ordering::Acquire);
    if n == 0 || n > MAX_COUNTED as u64 {
        return Err(RelaxError::corrupt(
            space.base(),
            format!("{what} at {node:#x} claims {n} entries"),
        ));
    }
    Ok(n as usize + 1)
}

/// What a field of a node holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// Data (`patomic`).
    Value,
    /// A pointer to a node of the type's [`Node::Child`]
    /// (`MarkablePatomicPointer` under the markable variants).
    Pointer,
}

impl FieldKind {
    /// The kind of field `i` of a node whose first `values` fields are data
    /// and the rest pointers (a key, then links; a counted node's count,
    /// then its entries).
    pub fn values_then_pointers(i: usize, values: usize) -> FieldKind {
        if i < values {
            FieldKind::Value
        } else {
            FieldKind::Pointer
        }
    }
}

/// A node type of a structure on a RELAX space.
pub trait Node: 'static {
    /// The type of the nodes this node's pointer fields point to.
    type Child: Node;

    /// How many 16-byte fields the node at `node` has. Most types have a
    /// constant count; a variable-size node (a bucket array) reads its
    /// count from an immutable NVMM field and must check it.
    fn field_count<B: Backend>(space: &Space<'_, B>, node: u64) -> Result<usize, RelaxError>;

    /// The kind of field `i`.
    fn field_kind(i: usize) -> FieldKind;

    /// `recoverNode` (§6.4.2): recovers every field of the node in order,
    /// data fields with Algorithm 6.2 and pointer fields with Algorithm 6.3
    /// (their write-backs batched under shared fences:
    /// [`Space::recover_fields`]). The order matters to `ZMarkable`
    /// (§6.4.4), which takes a node whose last field is recovered as
    /// recovered.
    fn recover_node<B: Backend>(space: &Space<'_, B>, node: u64) -> Result<(), RelaxError>
    where
        Self: Sized,
    {
        let n = Self::field_count(space, node)?;
        space.recover_fields::<Self>(node, n)
    }
}

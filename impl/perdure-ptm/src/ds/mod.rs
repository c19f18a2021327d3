//! Data structures written once against the [`Ptm`] interface: the
//! sequential objects of the seed's evaluation (§6).
//!
//! | module | seed §6 workload | what |
//! | --- | --- | --- |
//! | [`queue`] | "persistent linked-list based queue pre-filled with 1,000 elements" | [`Queue`]: a FIFO of `u64` values |
//! | [`list`] | "ordered linked list set of 10^4 keys" | [`ListSet`]: a sorted singly linked list of `u64` keys |
//! | [`rbtree`] | "balanced red-black tree ... 10^6 keys" | [`RbTreeSet`]: a red-black tree of `u64` keys |
//! | [`hash`] | "resizable hash set of 10^6 keys"; RedoDB's "resizable hash map" | [`HashSet`] and [`HashMap`]: separate chaining, doubling |
//! | [`mod@array`] | SPS, "an array of 10^6 64-bit integers" | [`PArray`]: a fixed array with transactional swaps |
//! | [`plain`] | CX-PUC (§4), "no annotation" | [`plain::PlainQueue`], [`plain::PlainSet`]: the queue and the set as plain Rust values for [`crate::CxPuc::update`] |
//!
//! Every structure is sequential code: it runs inside one transaction of
//! any construction ([`crate::RedoPtm`], [`crate::CxPtm`], and
//! [`crate::CxPuc`] through its annotated interface), which makes it
//! durable linearizable and as wait-free as the construction. The code never
//! knows which construction runs it: loads and stores go through the
//! transaction ([`TxRead::try_load`], [`Transaction::try_store`]), and nodes
//! come from and go back to the region allocator inside the same transaction
//! ([`Transaction::alloc`], [`Transaction::free`]) — a removed node is freed
//! in the transaction that unlinks it, so nothing leaks across a crash.
//!
//! ## Shape of each structure
//!
//! * It lives in a **root slot** (`0..ROOTS`): the slot holds the offset of
//!   a header block whose first word is the structure's magic, so opening a
//!   slot that holds another kind of structure is an error
//!   ([`DsError::WrongKind`]), not undefined behaviour.
//! * Its handle ([`Queue`], [`ListSet`], …) is just the root index: `Copy`,
//!   `'static`, so the closures it builds satisfy the `'static` bound of
//!   [`Ptm::update_tx`]. The handle's methods run one transaction each.
//! * The `*_in` functions of each module are the same operations on a
//!   transaction the caller already has, to compose several operations
//!   atomically (the SPS and queue benchmarks do).
//! * `check` walks the whole structure in one read-only transaction and
//!   verifies its invariant (sortedness, red-black properties, bucket
//!   placement and counts, queue length and tail), returning the number of
//!   elements or the first [`Violation`] found. Tests run it after every
//!   phase; the crash explorer can run it on a recovered image
//!   ([`check_in`](queue::check_in) functions take any [`TxRead`]).
//!
//! ## Keys and values
//!
//! Keys and values are `u64`. A transaction returns one 64-bit word (the
//! constructions return results as the seed's `results` array does), so the
//! operations that return a *value* (a dequeue, a map lookup) encode "none"
//! and the failures in the top 64 words: values stored in a [`Queue`] or a
//! [`HashMap`] must be at most [`MAX_VALUE`] ([`DsError::ReservedValue`]
//! otherwise). Set keys and map keys are unrestricted.
//!
//! ## Bad input
//!
//! Every load checks its offset (a pointer outside the region is
//! [`Violation::BadPointer`]) and every walk is bounded by the number of
//! blocks the region can hold (a cycle is [`Violation::Cycle`]), so a
//! damaged structure gives an error, never a panic or a hang. An operation
//! allocates before it stores anything, so running out of region space
//! ([`DsError::OutOfSpace`]) leaves the structure unchanged.

/// The methods every structure handle in a root slot has: `open`, `root`,
/// `check` (one read-only transaction of `$check`) and `destroy` (one update
/// transaction of `$destroy`), for the structure `$kind` with header magic
/// `$magic`.
macro_rules! handle_basics {
    ($ty:ident, $kind:expr, $magic:expr, $check:path, $destroy:path) => {
        impl $ty {
            /// The structure already in root slot `root`.
            pub fn open<P: Ptm>(ptm: &P, root: usize) -> Result<$ty, DsError> {
                open_root(ptm, root, $kind, $magic)?;
                Ok($ty { root })
            }

            /// Its root slot.
            pub fn root(&self) -> usize {
                self.root
            }

            /// Walks the structure in one read-only transaction and checks
            /// its invariant (see the module docs); returns its size.
            pub fn check<P: Ptm>(&self, ptm: &P) -> Result<u64, DsError> {
                let root = self.root;
                read(ptm, root, $kind, move |tx| $check(tx, root))
            }

            /// Frees every node and the header, and clears the root slot.
            pub fn destroy<P: Ptm>(self, ptm: &P) -> Result<(), DsError> {
                let root = self.root;
                update(ptm, root, $kind, move |tx| $destroy(tx, root).map(|()| 0)).map(drop)
            }
        }
    };
}

/// The membership methods of a set handle (sorted sets and the hash set):
/// `insert`, `remove` (update transactions of `$insert`, `$remove`) and
/// `contains` (a read-only transaction of `$contains`).
macro_rules! set_membership {
    ($ty:ident, $kind:expr, $insert:path, $remove:path, $contains:path) => {
        impl $ty {
            /// Adds `key`; whether it was absent.
            pub fn insert<P: Ptm>(&self, ptm: &P, key: u64) -> Result<bool, DsError> {
                let root = self.root;
                update(ptm, root, $kind, move |tx| {
                    $insert(tx, root, key).map(u64::from)
                })
                .map(|b| b != 0)
            }

            /// Removes `key`; whether it was present.
            pub fn remove<P: Ptm>(&self, ptm: &P, key: u64) -> Result<bool, DsError> {
                let root = self.root;
                update(ptm, root, $kind, move |tx| {
                    $remove(tx, root, key).map(u64::from)
                })
                .map(|b| b != 0)
            }

            /// Whether `key` is in the set (a read-only transaction).
            pub fn contains<P: Ptm>(&self, ptm: &P, key: u64) -> Result<bool, DsError> {
                let root = self.root;
                read(ptm, root, $kind, move |tx| {
                    $contains(tx, root, key).map(u64::from)
                })
                .map(|b| b != 0)
            }
        }
    };
}

/// The handle of a sorted set in a root slot ([`ListSet`], [`RbTreeSet`]):
/// each method runs one transaction of the invoking module's `create_in`,
/// `insert_in`, `remove_in`, `contains_in`, `check_in` or `destroy_in`
/// (the names resolve where the macro is invoked), with the module's `KIND`,
/// `MAGIC` and `LEN`.
macro_rules! set_handle {
    ($ty:ident) => {
        impl $ty {
            /// The set in root slot `root`, created empty if the slot is 0.
            pub fn create<P: Ptm>(ptm: &P, root: usize) -> Result<$ty, DsError> {
                create_root(ptm, root, KIND, move |tx| create_in(tx, root))?;
                Ok($ty { root })
            }

            /// The stored count.
            pub fn len<P: Ptm>(&self, ptm: &P) -> Result<u64, DsError> {
                let root = self.root;
                read(ptm, root, KIND, move |tx| {
                    ld(tx, header(tx, root, MAGIC)? + LEN)
                })
            }
        }
        handle_basics!($ty, KIND, MAGIC, check_in, destroy_in);
        set_membership!($ty, KIND, insert_in, remove_in, contains_in);
    };
}

pub mod array;
pub mod hash;
pub mod list;
pub mod plain;
pub mod queue;
pub mod rbtree;

pub use array::PArray;
pub use hash::{HashMap, HashSet};
pub use list::ListSet;
pub use queue::Queue;
pub use rbtree::RbTreeSet;

use crate::error::PtmError;
use crate::replica::ALLOC_BASE;
use crate::tx::{Ptm, Transaction, TxRead, ROOTS};

/// The largest value a [`Queue`] or [`HashMap`] can hold: the 64 words
/// above it encode "none" and failures in a transaction's one result word.
pub const MAX_VALUE: u64 = u64::MAX - 64;
const FAULT_BASE: u64 = u64::MAX - 63;
const NONE_WORD: u64 = u64::MAX;

/// A broken invariant of a structure, as `check` reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Violation {
    /// A pointer is not an 8-aligned offset inside the region.
    BadPointer,
    /// A walk took more steps than the region has blocks: a cycle.
    Cycle,
    /// A list's keys are not strictly increasing.
    Unsorted,
    /// The stored element count differs from the elements found.
    CountMismatch,
    /// A queue's tail is not its last node, or head and tail disagree on
    /// emptiness.
    BadTail,
    /// The red-black tree's root is red.
    RedRoot,
    /// A red node has a red child.
    RedRed,
    /// Two paths from a node to its leaves hold different numbers of black
    /// nodes.
    BlackHeight,
    /// A node's parent pointer does not point at the node it hangs from.
    BadParent,
    /// A tree's in-order keys are not strictly increasing.
    Unordered,
    /// A node's colour word is neither red nor black.
    BadColor,
    /// A hash table's bucket count is not a power of two, or is zero.
    BadBuckets,
    /// A key sits in a bucket its hash does not select.
    WrongBucket,
    /// A key appears twice.
    Duplicate,
    /// An array's length word is not the length of its block.
    BadLength,
}

impl Violation {
    const ALL: [Violation; 15] = [
        Violation::BadPointer,
        Violation::Cycle,
        Violation::Unsorted,
        Violation::CountMismatch,
        Violation::BadTail,
        Violation::RedRoot,
        Violation::RedRed,
        Violation::BlackHeight,
        Violation::BadParent,
        Violation::Unordered,
        Violation::BadColor,
        Violation::BadBuckets,
        Violation::WrongBucket,
        Violation::Duplicate,
        Violation::BadLength,
    ];

    fn describe(self) -> &'static str {
        match self {
            Violation::BadPointer => "a pointer is not an 8-aligned offset inside the region",
            Violation::Cycle => "a walk did not end within the region's block count (a cycle)",
            Violation::Unsorted => "the keys are not strictly increasing",
            Violation::CountMismatch => "the stored count differs from the elements found",
            Violation::BadTail => "the tail is not the last node",
            Violation::RedRoot => "the root is red",
            Violation::RedRed => "a red node has a red child",
            Violation::BlackHeight => "two paths hold different numbers of black nodes",
            Violation::BadParent => "a parent pointer does not match the tree",
            Violation::Unordered => "the in-order keys are not strictly increasing",
            Violation::BadColor => "a colour word is neither red nor black",
            Violation::BadBuckets => "the bucket count is not a non-zero power of two",
            Violation::WrongBucket => "a key sits in a bucket its hash does not select",
            Violation::Duplicate => "a key appears twice",
            Violation::BadLength => "the length word does not match the block",
        }
    }
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.describe())
    }
}

/// Why an operation inside a transaction failed (the `*_in` functions).
/// It travels out of the transaction in its result word and becomes a
/// [`DsError`] naming the root and the structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The root slot is 0.
    NotCreated,
    /// The root slot's header does not carry this structure's magic.
    WrongKind,
    /// The region allocator had no room (nothing was changed).
    OutOfSpace,
    /// The structure is damaged.
    Invariant(Violation),
}

impl Fault {
    fn code(self) -> u64 {
        match self {
            Fault::NotCreated => 0,
            Fault::WrongKind => 1,
            Fault::OutOfSpace => 2,
            Fault::Invariant(v) => {
                16 + Violation::ALL
                    .iter()
                    .position(|&w| w == v)
                    .expect("every violation is listed") as u64
            }
        }
    }

    fn from_code(code: u64) -> Option<Fault> {
        match code {
            0 => Some(Fault::NotCreated),
            1 => Some(Fault::WrongKind),
            2 => Some(Fault::OutOfSpace),
            c if c >= 16 => Violation::ALL
                .get((c - 16) as usize)
                .map(|&v| Fault::Invariant(v)),
            _ => None,
        }
    }

    /// The error naming the structure `kind` in root slot `root`.
    pub fn at(self, root: usize, kind: &'static str) -> DsError {
        match self {
            Fault::NotCreated => DsError::NotCreated { root, kind },
            Fault::WrongKind => DsError::WrongKind { root, kind },
            Fault::OutOfSpace => DsError::OutOfSpace { root, kind },
            Fault::Invariant(violation) => DsError::Invariant {
                root,
                kind,
                violation,
            },
        }
    }
}

impl From<PtmError> for Fault {
    fn from(_: PtmError) -> Fault {
        // The only errors a load or store returns are bad offsets.
        Fault::Invariant(Violation::BadPointer)
    }
}

/// Errors of the data structures.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DsError {
    /// The PTM refused the transaction.
    #[error(transparent)]
    Ptm(#[from] PtmError),
    /// The root slot holds nothing.
    #[error("root slot {root} holds no {kind}: create one first")]
    NotCreated {
        /// The root slot.
        root: usize,
        /// The structure looked for.
        kind: &'static str,
    },
    /// The root slot holds something else.
    #[error(
        "root slot {root} holds something that is not a {kind} (its header lacks the {kind} magic)"
    )]
    WrongKind {
        /// The root slot.
        root: usize,
        /// The structure looked for.
        kind: &'static str,
    },
    /// The region has no room for the block the operation needs.
    #[error("the region has no room for another block of the {kind} in root slot {root}; the {kind} is unchanged")]
    OutOfSpace {
        /// The root slot.
        root: usize,
        /// The structure.
        kind: &'static str,
    },
    /// A root index outside `0..ROOTS`.
    #[error("root slot {root} does not exist: there are {count} root slots")]
    BadRoot {
        /// The index asked for.
        root: usize,
        /// [`ROOTS`].
        count: usize,
    },
    /// A value above [`MAX_VALUE`].
    #[error("value {value:#x} is above MAX_VALUE ({max:#x}): the top 64 words encode 'none' and failures in a transaction's result")]
    ReservedValue {
        /// The value given.
        value: u64,
        /// [`MAX_VALUE`].
        max: u64,
    },
    /// A bad size asked for at creation.
    #[error("invalid size for a {kind}: {reason}")]
    BadSize {
        /// The structure.
        kind: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// `check` found the structure damaged.
    #[error("the {kind} in root slot {root} is damaged: {violation}")]
    Invariant {
        /// The root slot.
        root: usize,
        /// The structure.
        kind: &'static str,
        /// The first broken invariant found.
        violation: Violation,
    },
}

/// A result inside a transaction, as the one word it returns.
fn encode(r: Result<u64, Fault>) -> u64 {
    match r {
        Ok(v) => {
            debug_assert!(v <= MAX_VALUE);
            v
        }
        Err(f) => FAULT_BASE + f.code(),
    }
}

/// An optional value inside a transaction, as one word.
fn encode_opt(r: Result<Option<u64>, Fault>) -> u64 {
    match r {
        Ok(None) => NONE_WORD,
        Ok(Some(v)) => encode(Ok(v)),
        Err(f) => encode(Err(f)),
    }
}

fn decode(word: u64) -> Result<u64, Fault> {
    if word < FAULT_BASE {
        Ok(word)
    } else {
        Err(Fault::from_code(word - FAULT_BASE).unwrap_or(Fault::Invariant(Violation::BadPointer)))
    }
}

fn decode_opt(word: u64) -> Result<Option<u64>, Fault> {
    if word == NONE_WORD {
        Ok(None)
    } else {
        decode(word).map(Some)
    }
}

fn check_root(root: usize) -> Result<(), DsError> {
    if root < ROOTS {
        Ok(())
    } else {
        Err(DsError::BadRoot { root, count: ROOTS })
    }
}

fn check_value(value: u64) -> Result<(), DsError> {
    if value <= MAX_VALUE {
        Ok(())
    } else {
        Err(DsError::ReservedValue {
            value,
            max: MAX_VALUE,
        })
    }
}

/// What an operation returns: a value or an optional value, carried out of
/// its transaction as one word ([`encode`]/[`encode_opt`]).
trait Outcome: Sized {
    fn encode(r: Result<Self, Fault>) -> u64;
    fn decode(word: u64) -> Result<Self, Fault>;
}

impl Outcome for u64 {
    fn encode(r: Result<u64, Fault>) -> u64 {
        encode(r)
    }
    fn decode(word: u64) -> Result<u64, Fault> {
        decode(word)
    }
}

impl Outcome for Option<u64> {
    fn encode(r: Result<Option<u64>, Fault>) -> u64 {
        encode_opt(r)
    }
    fn decode(word: u64) -> Result<Option<u64>, Fault> {
        decode_opt(word)
    }
}

/// Checks root slot `root`, then runs `create` (creating the structure
/// `kind` if the slot is 0) as one update transaction of `ptm`.
fn create_root<P, F>(ptm: &P, root: usize, kind: &'static str, create: F) -> Result<(), DsError>
where
    P: Ptm,
    F: for<'t> Fn(&P::Tx<'t>) -> Result<u64, Fault> + Send + Sync + 'static,
{
    check_root(root)?;
    update(ptm, root, kind, move |tx| create(tx).map(|_| 0))?;
    Ok(())
}

/// Runs `f` as one update transaction of `ptm` and returns its value; a
/// fault becomes the [`DsError`] naming root slot `root` and `kind`.
fn update<T, P, F>(ptm: &P, root: usize, kind: &'static str, f: F) -> Result<T, DsError>
where
    T: Outcome,
    P: Ptm,
    F: for<'t> Fn(&P::Tx<'t>) -> Result<T, Fault> + Send + Sync + 'static,
{
    let w = ptm.update_tx(move |tx| T::encode(f(tx)))?;
    T::decode(w).map_err(|f| f.at(root, kind))
}

/// Runs `f` as one read-only transaction of `ptm`, as [`update`].
fn read<T, P, F>(ptm: &P, root: usize, kind: &'static str, f: F) -> Result<T, DsError>
where
    T: Outcome,
    P: Ptm,
    F: for<'t> Fn(&P::ReadTx<'t>) -> Result<T, Fault> + Send + Sync + 'static,
{
    let w = ptm.read_tx(move |tx| T::encode(f(tx)))?;
    T::decode(w).map_err(|f| f.at(root, kind))
}

/// Checks that root slot `root` holds a structure with magic `magic`.
fn open_root<P: Ptm>(ptm: &P, root: usize, kind: &'static str, magic: u64) -> Result<(), DsError> {
    check_root(root)?;
    read(ptm, root, kind, move |tx| {
        header(tx, root, magic).map(|_| 0)
    })
    .map(drop)
}

/// The word at `off`, or [`Violation::BadPointer`].
#[inline]
fn ld<T: TxRead>(tx: &T, off: u64) -> Result<u64, Fault> {
    tx.try_load(off).map_err(Fault::from)
}

/// Stores `val` at `off`, or [`Violation::BadPointer`].
#[inline]
fn st<T: Transaction>(tx: &T, off: u64, val: u64) -> Result<(), Fault> {
    tx.try_store(off, val).map_err(Fault::from)
}

/// A block from the region allocator (nothing is stored if there is none).
fn alloc<T: Transaction>(tx: &T, size: u64) -> Result<u64, Fault> {
    tx.alloc(size).map_err(|_| Fault::OutOfSpace)
}

/// Returns a block to the region allocator.
fn free<T: Transaction>(tx: &T, off: u64) -> Result<(), Fault> {
    tx.free(off)
        .map_err(|_| Fault::Invariant(Violation::BadPointer))
}

/// The header of the structure with magic `magic` in root slot `root`.
fn header<T: TxRead>(tx: &T, root: usize, magic: u64) -> Result<u64, Fault> {
    let h = ld(tx, crate::tx::root_offset(root))?;
    if h == 0 {
        return Err(Fault::NotCreated);
    }
    if ld(tx, h)? != magic {
        return Err(Fault::WrongKind);
    }
    Ok(h)
}

/// The header of the structure with magic `magic` in root slot `root`, or,
/// if the slot is 0, the one `make` creates (and links into the slot).
fn header_or_create<T: TxRead>(
    tx: &T,
    root: usize,
    magic: u64,
    make: impl FnOnce() -> Result<u64, Fault>,
) -> Result<u64, Fault> {
    match header(tx, root, magic) {
        Err(Fault::NotCreated) => make(),
        r => r,
    }
}

/// Creates the header (`words` words, the first the magic, the rest 0) of
/// a structure in root slot `root`, or finds the one already there.
/// Returns the header's offset.
fn create_header<T: Transaction>(
    tx: &T,
    root: usize,
    magic: u64,
    words: u64,
) -> Result<u64, Fault> {
    header_or_create(tx, root, magic, || {
        let h = alloc(tx, 8 * words)?;
        st(tx, h, magic)?;
        for w in 1..words {
            st(tx, h + 8 * w, 0)?;
        }
        st(tx, crate::tx::root_offset(root), h)?;
        Ok(h)
    })
}

/// Frees the chain of nodes starting at `node`, linked by the word `next`
/// bytes into each.
/// Frees the chain of nodes linked through word `next` that starts at
/// word `first` of the header in root slot `root` (magic `magic`), then the
/// header, and clears the slot (a list's or a queue's `destroy_in`, after
/// its check).
fn destroy_chain<T: Transaction>(
    tx: &T,
    root: usize,
    magic: u64,
    first: u64,
    next: u64,
) -> Result<(), Fault> {
    let h = header(tx, root, magic)?;
    free_chain(tx, ld(tx, h + first)?, next)?;
    free(tx, h)?;
    st(tx, crate::tx::root_offset(root), 0)
}

fn free_chain<T: Transaction>(tx: &T, mut node: u64, next: u64) -> Result<(), Fault> {
    let bound = step_bound(tx);
    for _ in 0..bound {
        if node == 0 {
            return Ok(());
        }
        let after = ld(tx, node + next)?;
        free(tx, node)?;
        node = after;
    }
    Err(Fault::Invariant(Violation::Cycle))
}

/// An upper bound on the blocks the region can hold: bounds every walk.
fn step_bound<T: TxRead>(tx: &T) -> u64 {
    tx.region_len() / 32 + 1
}

/// Bytes in live blocks of the region allocator: what a leak test compares
/// before and after (the allocator keeps this count in its metadata, see
/// [`perdure_pm::region`]).
pub fn live_bytes_in<T: TxRead>(tx: &T) -> u64 {
    tx.try_load(ALLOC_BASE + 24).unwrap_or(0)
}

/// [`live_bytes_in`] in a read-only transaction of `ptm`.
pub fn live_bytes<P: Ptm>(ptm: &P) -> Result<u64, DsError> {
    Ok(ptm.read_tx(|tx| live_bytes_in(tx))?)
}

/// A 64-bit mix (the SplitMix64 finalizer): the hash of the hash tables.
#[inline]
pub fn mix(key: u64) -> u64 {
    let mut z = key.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_words_round_trip() {
        for v in [0, 1, MAX_VALUE] {
            assert_eq!(decode(encode(Ok(v))), Ok(v));
            assert_eq!(decode_opt(encode_opt(Ok(Some(v)))), Ok(Some(v)));
        }
        assert_eq!(decode_opt(encode_opt(Ok(None))), Ok(None));
        let mut faults = vec![Fault::NotCreated, Fault::WrongKind, Fault::OutOfSpace];
        faults.extend(Violation::ALL.iter().map(|&v| Fault::Invariant(v)));
        for f in faults {
            let w = encode(Err(f));
            assert!(w > MAX_VALUE && w != NONE_WORD, "{f:?} -> {w:#x}");
            assert_eq!(decode(w), Err(f));
            assert_eq!(decode_opt(encode_opt(Err(f))), Err(f));
        }
    }
}

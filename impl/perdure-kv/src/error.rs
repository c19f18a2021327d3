//! The store's typed errors.

use perdure_pm::PoolError;
use perdure_ptm::PtmError;
use std::path::PathBuf;

/// Errors of [`crate::Store`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KvError {
    /// The PTM refused the transaction.
    #[error(transparent)]
    Ptm(#[from] PtmError),
    /// The pool file could not be created or opened (not found, locked by
    /// another process, truncated, damaged header, ...).
    #[error(transparent)]
    Pool(#[from] PoolError),
    /// The file is a perdure pool of another layout.
    #[error(
        "{path} is a perdure pool of layout {layout:?}, not a perdure-kv database; check the path"
    )]
    Foreign {
        /// The file.
        path: PathBuf,
        /// Its layout name.
        layout: String,
    },
    /// A file operation failed.
    #[error("cannot stat {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The machine lacks what the options ask for.
    #[error("{0}")]
    Unsupported(&'static str),
    /// The root slot does not hold a store (create one first).
    #[error("root slot {root} holds no perdure-kv store: create one with Store::create")]
    NotCreated {
        /// The root slot.
        root: usize,
    },
    /// The root slot holds something else.
    #[error("root slot {root} holds something that is not a perdure-kv store (its header lacks the magic)")]
    NotAStore {
        /// The root slot.
        root: usize,
    },
    /// The root slot holds a store of an earlier perdure-kv format.
    #[error("root slot {root} holds a store of an earlier perdure-kv format (PDKVMAP2, an ordered treap; PDKVMAP3 or PDKVMAP4, an earlier layout of the B+tree and header), which this version does not read: export it with the perdure that wrote it (perdure kv export) and import it into a new database")]
    OldFormat {
        /// The root slot.
        root: usize,
    },
    /// The root slot already holds something.
    #[error("root slot {root} is not empty: open the store there, or create it in an empty slot")]
    Exists {
        /// The root slot.
        root: usize,
    },
    /// A root index outside the PTM's root slots.
    #[error("root slot {root} does not exist: there are {count} root slots")]
    BadRoot {
        /// The index asked for.
        root: usize,
        /// The PTM's root slots.
        count: usize,
    },
    /// A key longer than [`crate::MAX_KEY_BYTES`].
    #[error("a key of {len} bytes is over the limit of {max} bytes")]
    KeyTooLarge {
        /// The key's length.
        len: usize,
        /// [`crate::MAX_KEY_BYTES`].
        max: usize,
    },
    /// A value longer than [`crate::MAX_VALUE_BYTES`].
    #[error("a value of {len} bytes is over the limit of {max} bytes")]
    ValueTooLarge {
        /// The value's length.
        len: usize,
        /// [`crate::MAX_VALUE_BYTES`].
        max: usize,
    },
    /// The region had no room for the entry (the store is unchanged).
    #[error("the store's region has no room for a block of {needed} bytes; the store is unchanged: create it on a larger pool")]
    Full {
        /// The block the operation needed.
        needed: u64,
    },
    /// The store's structure is damaged.
    #[error("the store in root slot {root} is damaged: {what}")]
    Corrupt {
        /// The root slot.
        root: usize,
        /// The first damage found.
        what: &'static str,
    },
    /// A transaction's result was not where its run left it (a bug of
    /// perdure-kv: please report it).
    #[error("a transaction's result was lost (a bug of perdure-kv: please report it)")]
    Lost,
}

//! Typed errors of `perdure-ptm`.
//!
//! Bad input — a pool without a PTM, a damaged header, a layout made for
//! another program, a pool too small for the replicas asked for, a bad
//! configuration — is an error value with a message saying what is wrong,
//! never a panic.

use perdure_pm::PmError;

/// Errors of the persistent transactional memories.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PtmError {
    /// The pool, its allocator, or the PTM's header: a pool without a PTM,
    /// damaged metadata, an allocation refused inside a transaction
    /// ([`PmError`]: `NotFormatted`, `Corrupt`, `Region`, `Pool`).
    #[error(transparent)]
    Pm(#[from] PmError),

    /// The pool was written by an incompatible version of the construction.
    #[error(
        "the {kind} in this pool has format version {found}; this build reads version {supported}"
    )]
    UnsupportedVersion {
        /// The construction.
        kind: &'static str,
        /// The version in the pool.
        found: u64,
        /// The version this build reads.
        supported: u64,
    },

    /// The pool cannot hold the replicas the configuration asks for.
    #[error("a pool of {pool_size} bytes is too small: {threads} threads need {replicas} replicas of at least {min_replica} bytes, {needed} bytes in all")]
    PoolTooSmall {
        /// The pool's size.
        pool_size: u64,
        /// Threads configured.
        threads: usize,
        /// Replicas needed.
        replicas: usize,
        /// Smallest replica.
        min_replica: u64,
        /// Smallest pool that fits.
        needed: u64,
    },

    /// A configuration value out of range.
    #[error("invalid configuration: {0}")]
    Config(String),

    /// More threads than the PTM was created for are using it at once.
    #[error("all {max} thread ids of this PTM are in use; drop a handle or end a thread, or create the PTM with more threads")]
    TooManyThreads {
        /// Thread ids of the PTM.
        max: usize,
    },

    /// An update transaction was started inside a read-only one.
    #[error("update_tx called inside read_tx: a read-only transaction cannot contain updates")]
    UpdateInReadTx,

    /// An offset outside the region, or not aligned to 8 bytes.
    #[error("offset {offset:#x} is not an 8-aligned word inside the {len}-byte region")]
    BadOffset {
        /// The offset.
        offset: u64,
        /// The region's length.
        len: u64,
    },

    /// A typed object that does not fit where CX-PUC was asked to find it.
    #[error("no {size}-byte object aligned to {align} fits at offset {offset:#x} of the {used}-byte allocated part of the region")]
    BadObject {
        /// The offset.
        offset: u64,
        /// The object's size.
        size: usize,
        /// Its alignment.
        align: usize,
        /// The allocated part of the region (what holds the object's state).
        used: u64,
    },

    /// A transaction of a PTM was started inside a CX-PUC closure that holds
    /// its plain value mutably.
    #[error("a CX-PUC update on the plain value (CxPuc::update) cannot nest another transaction of the same PTM; use update_tx for nesting")]
    NestedInPlainTx,

    /// A root index beyond the root table.
    #[error("root {index} does not exist: there are {count} root slots")]
    BadRoot {
        /// The index.
        index: usize,
        /// Root slots.
        count: usize,
    },
}

perdure_pm::pm_error_conversions!(PtmError::Pm);

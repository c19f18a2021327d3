//! Typed errors of `perdure-relax`. Bad input (a pool that holds no RELAX
//! space, a corrupt header, a pointer out of the pool) is an error value with
//! a message, never a panic.

use perdure_pm::PmError;

/// Errors of the Mirror/RELAX space and the structures on it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RelaxError {
    /// The pool, the heap, or the space's header: no RELAX space at that
    /// offset, damaged metadata, an offset out of the pool, the heap out
    /// of memory ([`PmError`]).
    #[error(transparent)]
    Pm(#[from] PmError),
    /// A configuration the seed does not support, or an argument out of
    /// range.
    #[error("invalid RELAX configuration: {0}")]
    Config(String),
    /// A root slot index beyond the space's root table.
    #[error("root {index} does not exist: the space has {count} root slots")]
    NoSuchRoot {
        /// The index asked for.
        index: usize,
        /// The number of root slots.
        count: usize,
    },
    /// A root slot that holds nothing.
    #[error("root {index} is empty: create the structure first")]
    EmptyRoot {
        /// The index.
        index: usize,
    },
    /// A field whose two replicas never agree: it was accessed without being
    /// recovered (a tracking bug) or its memory is not a persistent atomic.
    #[error("the persistent atomic at {off:#x} does not converge (NVMM seq {nvmm_seq:#x}, DRAM seq {dram_seq:#x}): not recovered, or not a persistent atomic")]
    Diverged {
        /// The field's offset.
        off: u64,
        /// Its NVMM sequence.
        nvmm_seq: u64,
        /// Its DRAM sequence.
        dram_seq: u64,
    },
    /// Every thread slot of the space is taken.
    #[error("all {0} thread slots of the space are in use; drop a Handle or create the space with more threads")]
    NoFreeThread(usize),
}

perdure_pm::pm_error_conversions!(RelaxError::Pm);

impl RelaxError {
    /// The RELAX space at `base` (or a structure in it) is damaged.
    pub(crate) fn corrupt(base: u64, reason: impl Into<String>) -> RelaxError {
        RelaxError::Pm(PmError::corrupt("RELAX space", base, reason))
    }
}

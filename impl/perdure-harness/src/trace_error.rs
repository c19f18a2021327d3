//! The errors of the trace producers (`perdure trace redo-ptm|…|memento-…`),
//! written once for the PTMs' ([`crate::ptm::trace`]) and Memento's
//! ([`crate::memento::trace`]).

use perdure_memento::MementoError;
use perdure_ptm::PtmError;
use std::fmt::Debug;

/// A construction's own error, as a traced run reports it: `PREFIX: message`.
pub trait ConstructionError: std::error::Error + 'static {
    /// What its messages are prefixed with.
    const PREFIX: &'static str;
}

impl ConstructionError for PtmError {
    const PREFIX: &'static str = "ptm";
}

impl ConstructionError for MementoError {
    const PREFIX: &'static str = "memento";
}

/// Errors of a traced run of a construction that fails with `E`, whose
/// traces are tampered with by a `T`.
#[derive(Debug, thiserror::Error)]
pub enum TraceError<E: ConstructionError, T: Debug> {
    /// The construction failed.
    #[error("{prefix}: {0}", prefix = E::PREFIX)]
    Construction(#[source] E),
    /// The pool could not be built.
    #[error("pool: {0}")]
    Pool(#[from] perdure_pm::PoolError),
    /// Bad options.
    #[error("{0}")]
    Options(String),
    /// A run did something the mapping does not know.
    #[error("run with seed {seed}: {reason}")]
    Unmapped {
        /// The run's seed.
        seed: u64,
        /// What happened.
        reason: String,
    },
    /// A worker thread panicked.
    #[error("a worker thread panicked")]
    Panicked,
    /// The tampering asked for found nothing to change.
    #[error("the trace has nothing to tamper with ({0:?}); try another seed")]
    NothingToTamper(T),
}

impl<T: Debug> From<PtmError> for TraceError<PtmError, T> {
    fn from(e: PtmError) -> Self {
        TraceError::Construction(e)
    }
}

impl<T: Debug> From<MementoError> for TraceError<MementoError, T> {
    fn from(e: MementoError) -> Self {
        TraceError::Construction(e)
    }
}

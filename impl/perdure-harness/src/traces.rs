//! What the trace producers of the PTMs ([`crate::ptm::trace`]) and of
//! Memento ([`crate::memento::trace`]) share (`perdure trace
//! redo-ptm|…|memento-…`): their error type and the choice of the crash
//! image a traced run is recovered from.

use perdure_memento::MementoError;
use perdure_pm::sim::{CrashPoint, VolatileFill};
use perdure_ptm::PtmError;
use std::fmt::Debug;

/// Crash images drawn from when a crash point has more than this many.
const IMAGE_SAMPLE: u64 = 256;

/// One of the crash images Px86 allows at `cp` (volatile memory zeroed):
/// of a sample of them drawn with `sample_seed`, the one `pick` selects;
/// `None` when there is none.
pub(crate) fn crash_image(cp: &CrashPoint, sample_seed: u64, pick: u64) -> Option<Vec<u64>> {
    let (_, images) = cp.images(IMAGE_SAMPLE, sample_seed);
    let all: Vec<_> = images.collect();
    if all.is_empty() {
        return None;
    }
    let choice = &all[(pick % all.len() as u64) as usize];
    Some(cp.materialize(choice, VolatileFill::Zeroed))
}

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

impl<E: ConstructionError, T: Debug> TraceError<E, T> {
    /// `Ok` if the seeded scheduler kept run `seed`'s threads serialised;
    /// else the run cannot be mapped.
    pub fn serialised(serial: bool, seed: u64) -> Result<(), Self> {
        if serial {
            Ok(())
        } else {
            Err(Self::unmapped(
                seed,
                "the scheduler gave up serialising the threads",
            ))
        }
    }

    /// Run `seed` did something the mapping does not know: `reason`.
    pub fn unmapped(seed: u64, reason: impl Into<String>) -> Self {
        TraceError::Unmapped {
            seed,
            reason: reason.into(),
        }
    }
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

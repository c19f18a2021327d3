//! [`PmError`]: what the constructions meet below their own logic, in one
//! type above the pool, the heap, the region allocator and the header
//! reader whose errors it gathers.

use crate::error::PoolError;

/// What a construction built on this crate meets below its own logic: the
/// pool, the heap or the region allocator refused something, or the object
/// it looks for at an offset is missing or damaged. Each construction's
/// error wraps it in one variant (`PtmError::Pm`, `MementoError::Pm`,
/// `RelaxError::Pm`) and converts the errors it wraps with
/// [`pm_error_conversions!`](crate::pm_error_conversions), so `?` works on
/// each of them.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PmError {
    /// The pool refused an access, a range or an operation.
    #[error(transparent)]
    Pool(#[from] PoolError),
    /// The heap refused an allocation or a free (out of memory, no free
    /// thread slot, a bad block, corrupt metadata).
    #[error(transparent)]
    Heap(#[from] crate::heap::HeapError),
    /// The region allocator (a transaction's allocations) refused.
    #[error(transparent)]
    Region(#[from] crate::region::RegionError),
    /// No object of the kind looked for at that offset.
    #[error("{0}; create one first")]
    NotFormatted(#[from] crate::meta::NotFormatted),
    /// The object's persistent metadata is damaged.
    #[error("the {what} at offset {base:#x} is corrupt: {reason}")]
    Corrupt {
        /// The kind of object ("Memento runtime", "RELAX space", "CX-PTM").
        what: &'static str,
        /// The offset of its header.
        base: u64,
        /// What is wrong.
        reason: String,
    },
}

impl PmError {
    /// The object `what` at `base` is damaged: `reason`.
    pub fn corrupt(what: &'static str, base: u64, reason: impl Into<String>) -> PmError {
        PmError::Corrupt {
            what,
            base,
            reason: reason.into(),
        }
    }
}

/// `pm_error_conversions!(MyError::Pm)`: `From` the pool's, the heap's, the
/// region allocator's and [`NotFormatted`](crate::meta::NotFormatted)
/// errors into `MyError`, through its variant wrapping [`PmError`].
#[macro_export]
macro_rules! pm_error_conversions {
    ($err:ident :: $variant:ident) => {
        $crate::pm_error_conversions!(@one $err $variant $crate::PoolError);
        $crate::pm_error_conversions!(@one $err $variant $crate::heap::HeapError);
        $crate::pm_error_conversions!(@one $err $variant $crate::region::RegionError);
        $crate::pm_error_conversions!(@one $err $variant $crate::meta::NotFormatted);
    };
    (@one $err:ident $variant:ident $from:ty) => {
        impl From<$from> for $err {
            fn from(e: $from) -> $err {
                $err::$variant($crate::PmError::from(e))
            }
        }
    };
}

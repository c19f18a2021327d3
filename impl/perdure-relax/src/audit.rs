//! The reclamation audit's hook (feature `check`): a log of what happened
//! to each node block — allocated, retired, freed. The checker that reads
//! it against the set of nodes reachable at the end of a run is
//! `perdure_harness::relax::audit::check`.
//!
//! The epoch-based reclamation of [`Space`](crate::Space) promises two things: a
//! node is retired only once it is unreachable and never again (so it is
//! freed once), and a retired node goes back to the heap only after every
//! thread that could still read it has left its critical section. The
//! second is the epoch argument; the first is each structure's to keep (the
//! skip list's `LINKED` hand-off, the BST's one successful cleanup CAS per
//! segment). The audit checks the first, and the heap's half of "no block
//! is handed out twice", on whatever runs a test drives:
//!
//! * per block, the events follow `Alloc (Retire Free | FreeUnpublished)*`,
//!   where a block first seen without an `Alloc` was allocated before the
//!   log started (by an earlier incarnation): a second `Retire` or `Free`,
//!   a `Free` of a live block, or an `Alloc` of a block not freed, is an
//!   error;
//! * every node reachable at the end is live (allocated, not retired);
//! * every node allocated under the log and unreachable at the end was
//!   retired or freed (a *leak* otherwise; counted, not an error, since
//!   crashes leak by design — see [`Space`](crate::Space) and the skip list's
//!   docs — but a test without a crash inside an operation may demand zero).
//!
//! A space logs only after [`Space::audit_start`](crate::Space::audit_start).
//! The log is a `std` mutex, not the `sync` facade's: it is the test's
//! instrument, not part of the algorithm, and must add no scheduling point
//! to a shuttle run (nothing blocks inside it).

/// What happened to a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockEvent {
    /// [`Handle::alloc_node`](crate::Handle::alloc_node) handed it out.
    Alloc,
    /// [`Handle::retire`](crate::Handle::retire): unlinked, waiting for
    /// its grace period.
    Retire,
    /// The grace period ended and the block went back to the heap.
    Free,
    /// [`Handle::free_unpublished`](crate::Handle::free_unpublished): never
    /// published, returned at once.
    FreeUnpublished,
}

/// The log of a space (see the module docs).
///
/// The two switches are read on every allocation, retirement and critical
/// section's end, so they are plain flags read without the lock; only a
/// started log takes it. They are `std` atomics on purpose, outside the
/// crate's `sync` facade: test instrumentation, not algorithm state, and
/// under shuttle they must not add scheduling points to every operation.
#[derive(Debug, Default)]
pub(crate) struct Log {
    pub(crate) on: std::sync::atomic::AtomicBool,
    /// Free retired nodes as soon as the epoch allows (advance the epoch at
    /// every critical section's end instead of every 8th).
    pub(crate) eager_reclaim: std::sync::atomic::AtomicBool,
    pub(crate) events: std::sync::Mutex<Vec<(BlockEvent, u64)>>,
}

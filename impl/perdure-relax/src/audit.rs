//! The reclamation audit (feature `check`): a log of what happened to each
//! node block — allocated, retired, freed — and a checker that reads it
//! against the set of nodes reachable at the end of a run.
//!
//! The epoch-based reclamation of [`crate::space`] promises two things: a
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
//!   crashes leak by design — see [`crate::space`] and the skip list's
//!   docs — but a test without a crash inside an operation may demand zero).
//!
//! A space logs only after [`Space::audit_start`](crate::Space::audit_start).
//! The log is a `std` mutex, not the `sync` facade's: it is the test's
//! instrument, not part of the algorithm, and must add no scheduling point
//! to a shuttle run (nothing blocks inside it).

use std::collections::{BTreeSet, HashMap};

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

/// What the audit found on a correct run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AuditSummary {
    /// Events read.
    pub events: usize,
    /// Blocks freed after their grace period.
    pub freed: usize,
    /// Blocks retired and still waiting at the end.
    pub retired_pending: usize,
    /// Blocks allocated under the log, unreachable at the end, never
    /// retired.
    pub leaked: usize,
    /// Reachable nodes checked live.
    pub reachable: usize,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Live,
    Retired,
    Freed,
}

/// Checks `events` (in the order they happened, earlier incarnations'
/// logs first) against `reachable`, the nodes reachable at the end: see the
/// module docs. Errors name the block and what went wrong.
pub fn check(
    events: &[(BlockEvent, u64)],
    reachable: &BTreeSet<u64>,
) -> Result<AuditSummary, String> {
    let mut st: HashMap<u64, (State, bool)> = HashMap::new();
    let mut sum = AuditSummary {
        events: events.len(),
        reachable: reachable.len(),
        ..AuditSummary::default()
    };
    for (i, &(ev, b)) in events.iter().enumerate() {
        // A block first seen without an Alloc was live from before the log.
        let (s, logged) = st.get(&b).copied().unwrap_or((State::Live, false));
        let next = match (ev, s) {
            (BlockEvent::Alloc, State::Freed) => State::Live,
            (BlockEvent::Alloc, _) if !st.contains_key(&b) => State::Live,
            (BlockEvent::Retire, State::Live) => State::Retired,
            (BlockEvent::Free, State::Retired) => {
                sum.freed += 1;
                State::Freed
            }
            (BlockEvent::FreeUnpublished, State::Live) => State::Freed,
            _ => {
                return Err(format!(
                    "block {b:#x}: event {i} {ev:?} while it is {s:?} (a double retire or free, a free of a live node, or a block handed out twice)"
                ))
            }
        };
        st.insert(b, (next, logged || ev == BlockEvent::Alloc));
    }
    for &n in reachable {
        if let Some((s, _)) = st.get(&n) {
            if *s != State::Live {
                return Err(format!("node {n:#x} is reachable at the end but {s:?}"));
            }
        }
    }
    for (b, (s, logged)) in &st {
        match s {
            State::Retired => sum.retired_pending += 1,
            State::Live if *logged && !reachable.contains(b) => sum.leaked += 1,
            _ => {}
        }
    }
    Ok(sum)
}

#[cfg(test)]
mod tests {
    use super::*;
    use BlockEvent::*;

    #[test]
    fn a_clean_life_passes_and_is_counted() {
        let ev = [
            (Alloc, 64),
            (Alloc, 128),
            (Retire, 64),
            (Free, 64),
            (Alloc, 64),
        ];
        let sum = check(&ev, &BTreeSet::from([64])).unwrap();
        assert_eq!((sum.freed, sum.leaked, sum.retired_pending), (1, 1, 0));
    }

    #[test]
    fn double_retire_double_free_and_reachable_retired_are_caught() {
        let reach = BTreeSet::new();
        assert!(check(&[(Alloc, 64), (Retire, 64), (Retire, 64)], &reach).is_err());
        let ev = [(Alloc, 64), (Retire, 64), (Free, 64), (Free, 64)];
        assert!(check(&ev, &reach).is_err());
        assert!(check(&[(Alloc, 64), (Alloc, 64)], &reach).is_err());
        assert!(check(&[(Alloc, 64), (Free, 64)], &reach).is_err());
        // A node retired before the log started (an earlier incarnation's)
        // and reachable at the end.
        assert!(check(&[(Retire, 64)], &BTreeSet::from([64])).is_err());
    }
}

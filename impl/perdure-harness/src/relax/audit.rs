//! The reclamation audit's checker: reads the log of block events that
//! `perdure_relax::Space` keeps under its feature `check`
//! (`Space::audit_start`, `Space::audit_events`) against the set of nodes
//! reachable at the end of a run. What it checks, and why, is in the docs
//! of `perdure_relax::audit`.

use perdure_relax::audit::BlockEvent;
use std::collections::{BTreeSet, HashMap};

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

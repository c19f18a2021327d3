//! Mutants of the seed's algorithms, for checking the checks (feature
//! `mutants`; never in a normal build).
//!
//! Each [`Mutant`] removes or reorders one step the seed says is needed. A
//! hook at that step (`mutant!(Name)` in the algorithm's code, a constant
//! `false` without the feature) asks [`active`] whether to take the mutated
//! path. `tests/mutants_memento.rs` switches each mutant on, runs the check
//! that must catch it, and expects a violation; `MUTANTS.md` records which
//! check catches which mutant and the counterexample.
//!
//! The switch is process-global: tests that use it must run one at a time
//! ([`lock`]). With no mutant switched on ([`set`]`(None)`, the initial
//! state) the code behaves exactly as without the feature.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, MutexGuard};

/// One mutation of a seed step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Mutant {
    /// Algorithm 1, L33: the location is not flushed after the first plain
    /// CAS, before the memento is checkpointed.
    NoFlushLocL33 = 1,
    /// Algorithm 1, L35: the memento is not flushed (`flushopt`) after
    /// `ts_succ` is stored in it.
    NoFlushMementoL35 = 2,
    /// Algorithm 2, L13–L16: LOADHELP helps the second plain CAS without
    /// raising HELP\[p\]\[tid\] (the CAS on HELP and its flush are skipped).
    SkipHelpUpdate = 3,
    /// Algorithm 3, L24–L25: INSERT clears the persist bit (L25) before it
    /// flushes the location (L24).
    ClearBeforeFlushL25 = 4,
    /// §2.2 step 5: the checkpoint's timestamp is written back (`pwb`) but
    /// the `pfence` perdure defers to the thread's next write
    /// ([`crate::runtime::Handle::defer_fence`]) is never owed.
    CheckpointNoFence = 5,
}

impl Mutant {
    /// Every mutant.
    pub const ALL: [Mutant; 5] = [
        Mutant::NoFlushLocL33,
        Mutant::NoFlushMementoL35,
        Mutant::SkipHelpUpdate,
        Mutant::ClearBeforeFlushL25,
        Mutant::CheckpointNoFence,
    ];

    /// Short name (`mutant:memento/<name>` in reports).
    pub fn name(self) -> &'static str {
        match self {
            Mutant::NoFlushLocL33 => "cas-no-flush-loc-L33",
            Mutant::NoFlushMementoL35 => "cas-no-flush-memento-L35",
            Mutant::SkipHelpUpdate => "loadhelp-skip-help-update",
            Mutant::ClearBeforeFlushL25 => "insert-clear-before-flush",
            Mutant::CheckpointNoFence => "checkpoint-no-fence",
        }
    }
}

static ACTIVE: AtomicU8 = AtomicU8::new(0);
static LOCK: Mutex<()> = Mutex::new(());

/// Switches mutant `m` on (`None`: all off).
pub fn set(m: Option<Mutant>) {
    ACTIVE.store(m.map_or(0, |m| m as u8), Ordering::SeqCst);
}

/// Whether mutant `m` is switched on.
#[inline]
pub fn active(m: Mutant) -> bool {
    ACTIVE.load(Ordering::Relaxed) == m as u8
}

/// Serialises the users of the process-global switch: hold the guard while
/// a mutant is on (and while checking the unmutated code).
pub fn lock() -> MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

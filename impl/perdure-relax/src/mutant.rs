//! Mutants of the seed's steps, for checking the checks (feature
//! `mutants`; never in a normal build).
//!
//! Each [`Mutant`] removes one step the seed says is needed. The algorithm
//! asks `mutant!(Name)` at that step (a constant `false` without the feature)
//! whether to take the mutated path. The switch is process-global: tests that
//! use it hold [`lock`]. With no mutant switched on the code behaves exactly
//! as without the feature.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, MutexGuard};

/// One mutation of a seed step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Mutant {
    /// Algorithm 4.1, L41–L42: the NVMM replica is not written back and
    /// fenced before the DRAM replica is updated.
    NoFlushBeforeDram = 1,
    /// Algorithm 6.2, L4: the sequence window is not enforced (a garbage
    /// DRAM sequence may be reached again by later writes).
    NoSeqWindow = 2,
    /// Algorithm 6.3, L4: the recovered pointer is copied without the
    /// recovery mark, so its referent is never recovered.
    NoRecoveryMark = 3,
    /// Algorithm 6.4, L2.2: a marked pointer is unmarked without its
    /// referent being recovered.
    UnmarkWithoutRecover = 4,
}

impl Mutant {
    /// Every mutant.
    pub const ALL: [Mutant; 4] = [
        Mutant::NoFlushBeforeDram,
        Mutant::NoSeqWindow,
        Mutant::NoRecoveryMark,
        Mutant::UnmarkWithoutRecover,
    ];

    /// Short name (`mutant:relax/<name>` in reports).
    pub fn name(self) -> &'static str {
        match self {
            Mutant::NoFlushBeforeDram => "mirror-no-flush-before-dram-L41",
            Mutant::NoSeqWindow => "recover-field-no-seq-window-L4",
            Mutant::NoRecoveryMark => "recover-ptr-no-mark-L4",
            Mutant::UnmarkWithoutRecover => "load-unmark-without-recover-L2.2",
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

/// Serialises the users of the process-global switch.
pub fn lock() -> MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

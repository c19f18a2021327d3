//! Mutants of the seed's steps, and pause points for deterministic
//! schedules, for checking the checks (feature `mutants`; never in a normal
//! build).
//!
//! Each [`Mutant`] removes one step the seed says is needed, or puts back a
//! step of the seed *as written* that a model check found wrong
//! (`specs/relax/README.md`, Findings M1, R1, R2; M2 in `src/patomic.rs`).
//! [`MIRROR`] are the mutants of Mirror and RELAX themselves
//! (`tests/mutants_relax.rs`); [`SETS`] break a step of the skip
//! list or the BST (`tests/shuttle_sets.rs`); [`EQUIVALENT`] change
//! the code without changing what the checks can see; [`TSO`] are wrong
//! under x86-TSO only (`tests/shuttle_tso_mutants_relax.rs`). The algorithm asks
//! `mutant!(Name)` at that step (a constant `false` without the feature)
//! whether to take the mutated path. The switch is process-global: tests that
//! use it hold [`lock`]. With no mutant switched on the code behaves exactly
//! as without the feature.
//!
//! A [`Point`] is a place between two steps of Algorithm 4.1 or 6.2 (or of
//! the skip list's `find`) where the algorithm calls `pause!(Name)`
//! (nothing without the feature). A test installs a hook for one thread
//! with [`set_hook`]; the hook runs on that thread at every point it
//! passes, and may block it there (on a channel) while the test runs other
//! threads' steps: a schedule forced step by step, as the counterexamples
//! of the TLA+ models are written (the points and hooks of every
//! construction are `perdure_pm::hooks::pause`).

pub use perdure_pm::hooks::mutants::{active, lock, set, Mutant};
pub use perdure_pm::hooks::pause::{at, set_hook, Point};

/// The mutants of Mirror and RELAX themselves, each caught by
/// `tests/mutants_relax.rs` with its own deterministic schedules.
pub const MIRROR: [Mutant; 9] = [
    Mutant::NoFlushBeforeDram,
    Mutant::NoSeqWindow,
    Mutant::NoRecoveryMark,
    Mutant::UnmarkWithoutRecover,
    Mutant::Line47AsWritten,
    Mutant::RecoverNoFlush,
    Mutant::RecoverNoReread,
    Mutant::Line44Once,
    Mutant::TrackBeforeRecover,
];
/// The mutants of the skip list and the BST, each caught by
/// `tests/shuttle_sets.rs` (not in [`MIRROR`], which
/// `tests/mutants_relax.rs` checks with its own deterministic schedules).
pub const SETS: [Mutant; 4] = [
    Mutant::SkipLinkUpperFirst,
    Mutant::SkipRemoveNoMark,
    Mutant::BstCleanupNoTag,
    Mutant::BstInsertNoHelp,
];
/// Mutants that change the code but, as far as the checks here can
/// tell, not its histories (equivalent mutants, kept as evidence for a
/// claim of the docs; `tests/shuttle_sets.rs` runs them and expects no
/// violation).
pub const EQUIVALENT: [Mutant; 1] = [Mutant::BstFlaggedLeafPresent];
/// The TSO-only mutants: correct under sequential consistency, caught only
/// with store buffers (`tests/shuttle_tso_mutants_relax.rs`, shuttle build).
pub const TSO: [Mutant; 1] = [Mutant::SpacePinNoFence];

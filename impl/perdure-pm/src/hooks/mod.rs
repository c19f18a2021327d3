//! The hooks a construction crate offers its checking harness, written once
//! for all of them (hidden from the docs: not part of the API a user of a
//! pool or a construction needs).
//!
//! A construction never depends on the checker. It marks the places the
//! checks need with four macros, each compiled out unless the construction
//! crate's own cargo feature is on (the `#[cfg]` in a macro's expansion is
//! evaluated in the crate that expands it):
//!
//! * [`mutants`] is the catalogue of every construction's mutants of the
//!   seed's steps, with the process-global switch ([`MutantSwitch`]) that
//!   turns one on; each construction's `mutant` module (feature `mutants`)
//!   re-exports it;
//! * [`mutant!(Name)`](crate::mutant) at a seed step asks whether mutant
//!   `Name` is on (a constant `false` without the feature);
//! * [`pause!(Name)`](crate::pause) between two steps lets a test hold the
//!   calling thread there ([`pause`]; nothing without the feature);
//! * [`trace_step!`](crate::trace_step) at a protocol step reports it to
//!   the [`Recorder`] a trace producer installed (feature `trace`; nothing,
//!   not even the arguments' evaluation, without it).
//!
//! With no mutant on and no recorder installed, a build with the features
//! behaves exactly as one without them; the cost is one relaxed load per
//! hook.

use crate::backend::Backend;
use crate::pool::Pool;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

// --- Mutants -----------------------------------------------------------------------

/// The process-global switch of the mutants: at most one is on.
///
/// Tests that switch mutants hold [`MutantSwitch::lock`] while one is on
/// (and while they check the unmutated code), so that they run one at a
/// time. A `std` atomic, not the [`crate::sync`] facade: the switch is not
/// part of any protocol the models explore, and loom atomics cannot be
/// statics.
#[derive(Debug)]
pub struct MutantSwitch {
    active: AtomicU8,
    lock: Mutex<()>,
}

impl MutantSwitch {
    /// A switch with every mutant off.
    pub const fn new() -> MutantSwitch {
        MutantSwitch {
            active: AtomicU8::new(0),
            lock: Mutex::new(()),
        }
    }

    /// Switches the mutant numbered `code` on (`0`: all off).
    pub fn set(&self, code: u8) {
        self.active.store(code, Ordering::SeqCst);
    }

    /// Whether the mutant numbered `code` is on.
    #[inline]
    pub fn is(&self, code: u8) -> bool {
        self.active.load(Ordering::Relaxed) == code
    }

    /// Serialises the switch's users (a poisoned lock is taken over: a
    /// failed test must not fail the ones after it).
    pub fn lock(&self) -> MutexGuard<'_, ()> {
        self.lock.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Default for MutantSwitch {
    fn default() -> MutantSwitch {
        MutantSwitch::new()
    }
}

/// Declares the mutant catalogue ([`mutants`]): `pub enum Mutant` (one
/// variant per entry, with its number and its short name), grouped by
/// construction; `Mutant::ALL` (every variant, in order), `Mutant::name`,
/// `Mutant::construction`, and the switch's functions `set`, `active` and
/// `lock` (see [`MutantSwitch`]).
macro_rules! declare_mutants {
    ($( $(#[$cdoc:meta])* $construction:ident {
        $( $(#[$doc:meta])* $name:ident = $code:literal => $label:literal ),+ $(,)?
    } )+) => {
        /// One mutation of a seed step.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u8)]
        pub enum Mutant {
            $($( $(#[$doc])* $name = $code, )+)+
        }

        impl Mutant {
            /// Every mutant, in declaration order.
            pub const ALL: [Mutant; [$($($label),+),+].len()] = [$($(Mutant::$name),+),+];

            /// Short name (`mutant:<construction>/<name>` in reports).
            pub fn name(self) -> &'static str {
                match self {
                    $($( Mutant::$name => $label, )+)+
                }
            }

            /// The mutants of `construction` (`"memento"`, `"ptm"`,
            /// `"relax"`), in declaration order.
            pub fn of(construction: &str) -> impl Iterator<Item = Mutant> + '_ {
                Mutant::ALL.into_iter().filter(move |m| m.construction() == construction)
            }

            /// The construction crate whose step it mutates (`"memento"`,
            /// `"ptm"`, `"relax"`).
            pub fn construction(self) -> &'static str {
                match self {
                    $($( Mutant::$name => stringify!($construction), )+)+
                }
            }
        }

        static SWITCH: $crate::hooks::MutantSwitch = $crate::hooks::MutantSwitch::new();

        /// Switches mutant `m` on (`None`: all off).
        pub fn set(m: Option<Mutant>) {
            SWITCH.set(m.map_or(0, |m| m as u8));
        }

        /// Whether mutant `m` is switched on.
        #[inline]
        pub fn active(m: Mutant) -> bool {
            SWITCH.is(m as u8)
        }

        /// Serialises the users of the process-global switch: hold the guard
        /// while a mutant is on (and while checking the unmutated code).
        pub fn lock() -> ::std::sync::MutexGuard<'static, ()> {
            SWITCH.lock()
        }
    };
}

pub mod mutants;

/// `mutant!(Name)`: whether the expanding crate's mutant `Name` is switched
/// on (its `crate::mutant::active`); a constant `false` unless that crate
/// is built with its feature `mutants`. (`crate` here is deliberately the
/// expanding crate: each construction declares its own mutants.)
#[macro_export]
#[allow(clippy::crate_in_macro_def)]
macro_rules! mutant {
    ($m:ident) => {{
        #[cfg(feature = "mutants")]
        let on = crate::mutant::active(crate::mutant::Mutant::$m);
        #[cfg(not(feature = "mutants"))]
        let on = false;
        on
    }};
}

pub mod pause;

/// `pause!(Name)`: the calling thread passes pause point
/// [`pause::Point`]`::Name`, where a test's hook may hold it (see
/// [`pause`]); nothing unless the expanding crate is built with its feature
/// `mutants`, whose `crate::mutant` module re-exports [`pause::at`].
#[macro_export]
#[allow(clippy::crate_in_macro_def)]
macro_rules! pause {
    ($p:ident) => {{
        #[cfg(feature = "mutants")]
        crate::mutant::at($crate::hooks::pause::Point::$p);
    }};
}

// --- Protocol-step traces -------------------------------------------------------------

/// A value a traced step carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceVal {
    /// A number (thread ids, tickets, offsets, values).
    Int(u64),
    /// A truth value (whether a CAS succeeded ...).
    Bool(bool),
    /// Nothing (an `Option` that was `None`).
    None,
}

impl From<u64> for TraceVal {
    fn from(v: u64) -> TraceVal {
        TraceVal::Int(v)
    }
}

impl From<usize> for TraceVal {
    fn from(v: usize) -> TraceVal {
        TraceVal::Int(v as u64)
    }
}

impl From<bool> for TraceVal {
    fn from(v: bool) -> TraceVal {
        TraceVal::Bool(v)
    }
}

impl<T: Into<TraceVal>> From<Option<T>> for TraceVal {
    fn from(v: Option<T>) -> TraceVal {
        v.map_or(TraceVal::None, Into::into)
    }
}

/// One protocol step reported by a [`trace_step!`](crate::trace_step) hook.
#[derive(Clone, Copy, Debug)]
pub struct TraceStep<'a> {
    /// The step's name, as the seed's listing or the spec names it
    /// (`"Announce"`, `"L43"` ...).
    pub action: &'static str,
    /// The number of events the pool's [`Sim`](crate::Sim) backend had
    /// recorded when the step was reported (`None`: the hook names no pool,
    /// or its pool is on another backend).
    pub sim_pos: Option<usize>,
    /// The step's named values.
    pub fields: &'a [(&'static str, TraceVal)],
}

impl TraceStep<'_> {
    /// The value of field `name`, if the step has it.
    pub fn field(&self, name: &str) -> Option<TraceVal> {
        self.fields
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| *v)
    }
}

/// What a trace producer installs to receive the reported steps. It runs on
/// the reporting thread, inside the construction's code: it must not call
/// back into the construction.
pub type Recorder = Arc<dyn Fn(&TraceStep<'_>) + Send + Sync>;

static RECORDING: AtomicBool = AtomicBool::new(false);
static RECORDER: Mutex<Option<Recorder>> = Mutex::new(None);

fn recorder() -> MutexGuard<'static, Option<Recorder>> {
    RECORDER.lock().unwrap_or_else(|e| e.into_inner())
}

/// Installs `r` as the process's recorder of traced steps (`None`: stops
/// recording); returns the one it replaces.
pub fn set_recorder(r: Option<Recorder>) -> Option<Recorder> {
    let mut g = recorder();
    RECORDING.store(r.is_some(), Ordering::SeqCst);
    std::mem::replace(&mut *g, r)
}

/// Whether a recorder is installed (the hooks' fast path).
#[inline]
pub fn recording() -> bool {
    RECORDING.load(Ordering::Relaxed)
}

/// Reports a step to the installed recorder (the entry point of
/// [`trace_step!`](crate::trace_step)).
pub fn report(action: &'static str, sim_pos: Option<usize>, fields: &[(&'static str, TraceVal)]) {
    let Some(r) = recorder().clone() else {
        return;
    };
    r(&TraceStep {
        action,
        sim_pos,
        fields,
    });
}

/// The number of events `pool`'s backend has recorded, if it is the
/// [`Sim`](crate::Sim) backend (the position of a step among the memory
/// events, for a producer that merges the two).
pub fn sim_pos<B: Backend + 'static>(pool: &Pool<B>) -> Option<usize> {
    (pool.backend() as &dyn std::any::Any)
        .downcast_ref::<crate::Sim>()
        .map(crate::Sim::trace_len)
}

/// `trace_step!([pool = &pool;] "Action", key = value, …)`: reports
/// protocol step `Action` with its values to the installed [`Recorder`]
/// (with `pool`, at the position of the pool's `Sim` events so far). Nothing
/// — its arguments are not even evaluated — unless the expanding crate is
/// built with its feature `trace`, and not under loom or shuttle, whose
/// models do not trace.
#[macro_export]
macro_rules! trace_step {
    (pool = $pool:expr; $action:literal $(, $k:ident = $v:expr)* $(,)?) => {
        #[cfg(all(feature = "trace", not(any(perdure_loom, perdure_shuttle))))]
        if $crate::hooks::recording() {
            $crate::hooks::report(
                $action,
                $crate::hooks::sim_pos($pool),
                &[$((stringify!($k), $crate::hooks::TraceVal::from($v))),*],
            );
        }
    };
    ($action:literal $(, $k:ident = $v:expr)* $(,)?) => {
        #[cfg(all(feature = "trace", not(any(perdure_loom, perdure_shuttle))))]
        if $crate::hooks::recording() {
            $crate::hooks::report(
                $action,
                None,
                &[$((stringify!($k), $crate::hooks::TraceVal::from($v))),*],
            );
        }
    };
}

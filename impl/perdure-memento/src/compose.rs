//! Stable composition (seed 001, §2.3–2.4): mementos built from
//! sub-mementos so that the seed's three requirements hold by construction.
//!
//! A detectable operation receives a *memento*, a small object in persistent
//! memory where it checkpoints its progress. A composite operation's memento
//! is a record of its sub-operations' mementos, declared with
//! [`memento!`](crate::memento):
//!
//! ```
//! use perdure_memento::{memento, Checkpoint, CasMmt};
//! memento! {
//!     /// The memento of a push onto a detectable Treiber stack.
//!     pub struct PushMmt {
//!         /// Checkpoints the allocated node (a non-deterministic value).
//!         pub node: Checkpoint<1>,
//!         /// The loop context: the top the CAS expects.
//!         pub top: Checkpoint<1>,
//!         /// The detectable CAS on the stack's top.
//!         pub cas: CasMmt,
//!     }
//! }
//! ```
//!
//! * **Requirement 1 (stable memento)** — every field is its own region of
//!   persistent memory, laid out by the macro; a handle cannot be copied or
//!   cloned, so one sub-memento serves one call site. (Rust cannot stop a
//!   function from calling two operations with the same `&mut` field one
//!   after the other; the field name at each call site is the review check.)
//! * **Requirement 2 (stable value)** — the inputs a detectable operation
//!   needs stable (the expected and new values of a CAS, the node of an
//!   insert) are either stable inputs of the root operation or outputs of
//!   earlier detectable sub-operations: [`Checkpoint`](crate::Checkpoint)
//!   turns any non-deterministic value (an allocation, a load) into one.
//! * **Requirement 3 (stable loop)** — a loop containing detectable
//!   sub-operations is written with [`Handle::detectable_loop`](crate::Handle::detectable_loop),
//!   which checkpoints the loop's single φ-node (its context tuple) at the
//!   head of every iteration, atomically.
//!
//! [`Memento::scan`] lets the runtime find every timestamp a memento holds
//! (for §2.5's calibration) and the thread's last CAS (to initialise OWN,
//! §3.1); clearing a memento is zeroing its region (every memento type reads
//! all-zero as "nothing checkpointed").

use crate::word::{CasTs, TS_MASK};
use perdure_pm::{Backend, Pool};

/// What [`Memento::scan`] collects.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Scan {
    /// The largest timestamp seen (T_max of §2.5).
    pub t_max: u64,
    /// The successful CAS checkpoint with the largest timestamp (OWN's
    /// initial value, §3.1).
    pub own: Option<CasTs>,
}

impl Scan {
    /// Notes a timestamp.
    pub fn timestamp(&mut self, ts: u64) {
        self.t_max = self.t_max.max(ts & TS_MASK);
    }

    /// Notes a CAS memento word.
    pub fn cas(&mut self, m: CasTs) {
        self.timestamp(m.ts);
        if !m.fail && m.ts != 0 && self.own.map_or(true, |o| m.ts > o.ts) {
            self.own = Some(m);
        }
    }
}

/// A memento type: a fixed-size record in persistent memory.
///
/// Handles are plain offsets; they are neither `Copy` nor `Clone`, so a
/// composite's sub-memento belongs to one place in the code.
pub trait Memento: Sized + Send {
    /// Size in bytes.
    const SIZE: u64;
    /// Required alignment in bytes (64 for anything with cache-line-sized
    /// parts).
    const ALIGN: u64;
    /// The handle of the memento at pool offset `off` (laid out by the
    /// runtime or an enclosing composite).
    #[doc(hidden)]
    fn at(off: u64) -> Self;
    /// Its pool offset.
    fn offset(&self) -> u64;
    /// Collects the timestamps and CAS checkpoints it holds.
    fn scan<B: Backend>(&self, pool: &Pool<B>, scan: &mut Scan);
}

/// Rounds `x` up to a multiple of `a` (a power of two).
#[doc(hidden)]
pub const fn align_up(x: u64, a: u64) -> u64 {
    (x + a - 1) & !(a - 1)
}

/// Implements [`Memento`] for a leaf memento — a struct holding only its
/// pool offset `off` ([`NoMmt`], [`CasMmt`](crate::CasMmt),
/// [`Checkpoint`](crate::Checkpoint)) — of `size` bytes aligned to `align`,
/// whose [`Memento::scan`] runs `body` with the memento, the pool and the
/// [`Scan`] bound to the three names given.
macro_rules! leaf_memento {
    (
        $name:ident $(<const $n:ident: usize>)?,
        size: $size:expr,
        align: $align:expr,
        scan: |$me:ident, $pool:ident, $scan:ident| $body:expr
    ) => {
        impl$(<const $n: usize>)? $crate::compose::Memento for $name$(<$n>)? {
            const SIZE: u64 = $size;
            const ALIGN: u64 = $align;
            fn at(off: u64) -> Self {
                $name { off }
            }
            fn offset(&self) -> u64 {
                self.off
            }
            fn scan<B: perdure_pm::Backend>(
                &self,
                $pool: &perdure_pm::Pool<B>,
                $scan: &mut $crate::compose::Scan,
            ) {
                let $me = self;
                $body
            }
        }
    };
}
pub(crate) use leaf_memento;

/// The memento of an operation that checkpoints nothing.
#[derive(Debug)]
pub struct NoMmt {
    off: u64,
}

leaf_memento!(NoMmt, size: 0, align: 8, scan: |_me, _pool, _scan| ());

/// Declares a composite memento: a struct whose fields are sub-mementos,
/// each in its own region (Requirement 1 of §2.3). See the module
/// docs of perdure-memento's `compose` (the crate page's example). The
/// struct may take type parameters, each a [`Memento`](crate::Memento) (as
/// [`RootMmt`](crate::ds::RootMmt)).
#[macro_export]
macro_rules! memento {
    ($(#[$m:meta])* $vis:vis struct $name:ident $(<$($g:ident),+>)? {
        $($(#[$fm:meta])* $fvis:vis $field:ident : $ty:ty),* $(,)?
    }) => {
        $(#[$m])*
        #[derive(Debug)]
        $vis struct $name $(<$($g),+>)? {
            __off: u64,
            $($(#[$fm])* $fvis $field: $ty,)*
        }

        impl $(<$($g: $crate::Memento),+>)? $crate::Memento for $name $(<$($g),+>)? {
            const SIZE: u64 = {
                #[allow(unused_mut)]
                let mut o: u64 = 0;
                $(o = $crate::__align_up(o, <$ty as $crate::Memento>::ALIGN)
                    + <$ty as $crate::Memento>::SIZE;)*
                $crate::__align_up(o, 64)
            };
            const ALIGN: u64 = 64;
            #[allow(unused_mut, unused_assignments)]
            fn at(off: u64) -> Self {
                let mut o = off;
                $(
                    o = $crate::__align_up(o, <$ty as $crate::Memento>::ALIGN);
                    let $field = <$ty as $crate::Memento>::at(o);
                    o += <$ty as $crate::Memento>::SIZE;
                )*
                $name { __off: off, $($field,)* }
            }
            fn offset(&self) -> u64 {
                self.__off
            }
            #[allow(unused_variables)]
            fn scan<B: $crate::__Backend>(&self, pool: &$crate::__Pool<B>, scan: &mut $crate::Scan) {
                $(<$ty as $crate::Memento>::scan(&self.$field, pool, scan);)*
            }
        }
    };
}

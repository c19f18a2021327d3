//! The user-facing part every construction shares: `update_tx`/`read_tx`
//! with leased thread ids and flattened nesting ([`crate::registry`]), and
//! [`Handle`]s. A construction implements [`Front`] (how to run a closure
//! for a given thread id) and gets the rest: CX-PTM, CX-PUC, and the Redo
//! family (`redo/front.rs`).

use crate::error::PtmError;
use crate::registry::{self, Current, Kind, TidPool};

/// A construction's pool of thread ids (opaque).
#[doc(hidden)]
pub struct TidPoolRef {
    pub(crate) pool: Arc<TidPool>,
    pub(crate) n: usize,
}

impl TidPoolRef {
    pub(crate) fn new(n: usize) -> TidPoolRef {
        TidPoolRef {
            pool: TidPool::new(n),
            n,
        }
    }
}
use crate::tx::{PWord, Ptm, Transaction, TxRead};
use std::marker::PhantomData;
use std::sync::Arc;

mod sealed {
    /// Only this crate's constructions implement [`super::Front`].
    pub trait Sealed {}
}
pub(crate) use sealed::Sealed;

/// What a construction provides to get [`Handle`]s and the nesting rules
/// (implemented by this crate's constructions only).
pub trait Front: Sealed + Send + Sync + Sized {
    /// What an update closure gets; `as_ref` is its read-only view (what
    /// a `read_tx` nested in it gets).
    type Tx<'t>: Transaction + AsRef<Self::ReadTx<'t>>
    where
        Self: 't;
    /// What a read-only closure gets.
    type ReadTx<'t>: TxRead
    where
        Self: 't;

    #[doc(hidden)]
    fn uid(&self) -> u64;
    #[doc(hidden)]
    fn tid_pool(&self) -> &TidPoolRef;
    #[doc(hidden)]
    fn update_with<R, F>(&self, tid: usize, f: F) -> R
    where
        R: PWord,
        F: for<'t> Fn(&Self::Tx<'t>) -> R + Send + Sync + 'static;
    #[doc(hidden)]
    fn read_with<R, F>(&self, tid: usize, f: F) -> R
    where
        R: PWord,
        F: for<'t> Fn(&Self::ReadTx<'t>) -> R + Send + Sync + 'static;
    /// A handle speaking for one of the PTM's thread ids until it is
    /// dropped.
    fn handle(&self) -> Result<Handle<'_, Self>, PtmError> {
        Handle::new(self)
    }

    /// What [`Ptm::events`] reports.
    #[doc(hidden)]
    fn event_counts(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
}

/// Every construction with a front is a [`Ptm`]: its transactions go
/// through `update_tx` and `read_tx`.
impl<P: Front> Ptm for P {
    type ReadTx<'t>
        = P::ReadTx<'t>
    where
        Self: 't;
    type Tx<'t>
        = P::Tx<'t>
    where
        Self: 't;

    fn update_tx<R, F>(&self, f: F) -> Result<R, PtmError>
    where
        R: PWord,
        F: for<'t> Fn(&P::Tx<'t>) -> R + Send + Sync + 'static,
    {
        update_tx(self, f)
    }

    fn read_tx<R, F>(&self, f: F) -> Result<R, PtmError>
    where
        R: PWord,
        F: for<'t> Fn(&P::ReadTx<'t>) -> R + Send + Sync + 'static,
    {
        read_tx(self, f)
    }

    fn events(&self) -> Vec<(&'static str, u64)> {
        self.event_counts()
    }
}

/// The inherent `handle`, `update_tx` and `read_tx` of a construction that
/// implements [`Front`] (so that callers need not import [`Ptm`]); expanded
/// inside its `impl` block.
macro_rules! inherent_api {
    () => {
        /// A handle speaking for one of the `N` thread ids until it is
        /// dropped.
        pub fn handle(&self) -> Result<$crate::front::Handle<'_, Self>, $crate::PtmError> {
            $crate::front::Handle::new(self)
        }

        /// Runs `f` as an update transaction with the calling thread's
        /// leased thread id (see `registry`); see `tx`
        /// for what `f` must satisfy. Nested in a transaction of this PTM,
        /// it runs inline.
        ///
        /// # Panics
        ///
        /// If `f` panicked (on whichever thread ran it).
        pub fn update_tx<R, F>(&self, f: F) -> Result<R, $crate::PtmError>
        where
            R: $crate::PWord,
            F: for<'t> Fn(&<Self as $crate::front::Front>::Tx<'t>) -> R + Send + Sync + 'static,
        {
            $crate::front::update_tx(self, f)
        }

        /// Runs `f` as a read-only transaction with the calling thread's
        /// leased thread id.
        ///
        /// # Panics
        ///
        /// If `f` panicked.
        pub fn read_tx<R, F>(&self, f: F) -> Result<R, $crate::PtmError>
        where
            R: $crate::PWord,
            F: for<'t> Fn(&<Self as $crate::front::Front>::ReadTx<'t>) -> R + Send + Sync + 'static,
        {
            $crate::front::read_tx(self, f)
        }
    };
}
pub(crate) use inherent_api;

/// The result of a transaction a construction ran: `word` as an `R`, or,
/// if its closure panicked, a panic on the submitting thread (the closure's
/// own message was printed where it ran; an update's stores are undone).
pub(crate) fn result_of<R: PWord>(kind: Kind, (word, panicked): (u64, bool)) -> R {
    if panicked {
        match kind {
            Kind::Update => panic!("the update transaction's closure panicked (its message was printed where it ran); its stores were rolled back"),
            Kind::Read => panic!("the read transaction's closure panicked (its message was printed where it ran)"),
        }
    }
    R::from_word(word)
}

/// Marks the calling thread as running `tx`, a transaction of PTM `uid`,
/// until the guard drops. (A null `tx` marks a transaction that cannot be
/// nested in: [`PtmError::NestedInPlainTx`].)
pub(crate) fn enter<T>(uid: u64, kind: Kind, tx: &T) -> registry::Enter {
    registry::Enter::new(Current {
        uid,
        kind,
        ptr: tx as *const T as *const (),
    })
}

fn max(p: &impl Front) -> PtmError {
    PtmError::TooManyThreads {
        max: p.tid_pool().n,
    }
}

/// `update_tx` with the calling thread's leased id, or inline when nested.
pub(crate) fn update_tx<P: Front, R, F>(p: &P, f: F) -> Result<R, PtmError>
where
    R: PWord,
    F: for<'t> Fn(&P::Tx<'t>) -> R + Send + Sync + 'static,
{
    if let Some(cur) = registry::current(p.uid()) {
        return nested_update(cur, f);
    }
    let tid = registry::leased_tid(p.uid(), &p.tid_pool().pool).ok_or_else(|| max(p))?;
    Ok(p.update_with(tid, f))
}

/// `read_tx` with the calling thread's leased id, or inline when nested.
pub(crate) fn read_tx<P: Front, R, F>(p: &P, f: F) -> Result<R, PtmError>
where
    R: PWord,
    F: for<'t> Fn(&P::ReadTx<'t>) -> R + Send + Sync + 'static,
{
    if let Some(cur) = registry::current(p.uid()) {
        return nested_read::<P, _, _>(cur, f);
    }
    let tid = registry::leased_tid(p.uid(), &p.tid_pool().pool).ok_or_else(|| max(p))?;
    Ok(p.read_with(tid, f))
}

fn nested_update<P: Front, R, F>(cur: Current, f: F) -> Result<R, PtmError>
where
    F: for<'t> Fn(&P::Tx<'t>) -> R,
{
    if cur.ptr.is_null() {
        return Err(PtmError::NestedInPlainTx);
    }
    match cur.kind {
        // SAFETY: `cur` was set with `enter` by this PTM (same uid, so the
        // same `P`) around a call on this thread that is still on the stack
        // below us; the `Tx` it points to lives in that frame, and `f`,
        // being generic over the lifetimes, cannot keep the reference.
        Kind::Update => Ok(f(unsafe { &*(cur.ptr as *const P::Tx<'_>) })),
        Kind::Read => Err(PtmError::UpdateInReadTx),
    }
}

fn nested_read<P: Front, R, F>(cur: Current, f: F) -> Result<R, PtmError>
where
    F: for<'t> Fn(&P::ReadTx<'t>) -> R,
{
    if cur.ptr.is_null() {
        return Err(PtmError::NestedInPlainTx);
    }
    Ok(match cur.kind {
        // SAFETY: as in `nested_update`.
        Kind::Update => f(unsafe { &*(cur.ptr as *const P::Tx<'_>) }.as_ref()),
        // SAFETY: as in `nested_update`, for a `ReadTx` set by a read.
        Kind::Read => f(unsafe { &*(cur.ptr as *const P::ReadTx<'_>) }),
    })
}

/// One of a PTM's thread ids, held until dropped. Not `Send`: it speaks for
/// the thread that took it.
pub struct Handle<'p, P: Front> {
    ptm: &'p P,
    tid: usize,
    _not_send: PhantomData<*const ()>,
}

impl<P: Front> std::fmt::Debug for Handle<'_, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Handle(tid {})", self.tid)
    }
}

impl<'p, P: Front> Handle<'p, P> {
    /// Claims a free thread id of `ptm`.
    pub(crate) fn new(ptm: &'p P) -> Result<Handle<'p, P>, PtmError> {
        let tid = ptm.tid_pool().pool.claim().ok_or_else(|| max(ptm))?;
        Ok(Handle {
            ptm,
            tid,
            _not_send: PhantomData,
        })
    }

    /// The thread id.
    pub fn tid(&self) -> usize {
        self.tid
    }

    /// The PTM.
    pub fn ptm(&self) -> &'p P {
        self.ptm
    }

    /// Runs `f` as an update transaction (see `tx`).
    ///
    /// # Panics
    ///
    /// If `f` panicked, or if called inside a read-only transaction of the
    /// same PTM.
    pub fn update_tx<R, F>(&self, f: F) -> R
    where
        R: PWord,
        F: for<'t> Fn(&P::Tx<'t>) -> R + Send + Sync + 'static,
    {
        if let Some(cur) = registry::current(self.ptm.uid()) {
            return nested_update::<P, _, _>(cur, f).unwrap_or_else(|e| panic!("{e}"));
        }
        self.ptm.update_with(self.tid, f)
    }

    /// Runs `f` as a read-only transaction.
    ///
    /// # Panics
    ///
    /// If `f` panicked.
    pub fn read_tx<R, F>(&self, f: F) -> R
    where
        R: PWord,
        F: for<'t> Fn(&P::ReadTx<'t>) -> R + Send + Sync + 'static,
    {
        if let Some(cur) = registry::current(self.ptm.uid()) {
            return nested_read::<P, _, _>(cur, f).unwrap_or_else(|e| panic!("{e}"));
        }
        self.ptm.read_with(self.tid, f)
    }
}

impl<P: Front> Drop for Handle<'_, P> {
    fn drop(&mut self) {
        self.ptm.tid_pool().pool.release(self.tid);
    }
}

//! CX-PTM (seed §4, "CX-PTM"): CX with annotated loads and stores.
//!
//! A closure gets a [`Tx`]: every load and store names a region offset, which
//! the transaction adjusts to the replica being worked on (the seed's
//! `tl_start`: "all 2N regions contain pointers that refer to the first
//! persistent region, named MAIN region … pointer offset adjustment on load
//! interposition"; in perdure every persistent reference is a region offset,
//! so the adjustment is adding the replica's pool offset, for loads and
//! stores alike). A store goes straight to the replica the thread holds
//! exclusively and records its cache line; before the `cur_comb` CAS, one
//! `pwb` per recorded line (the published `flushDeferredPWBs`). The
//! allocator is annotated the same way (`replica`).
//!
//! Dirty lines belong to the replica (`DirtyLines`, shared with
//! Redo-PTM): a thread that leaves a replica without installing it (its node
//! was already in `cur_comb`) leaves its lines for whoever installs the
//! replica next, whose `pwb`s and `pfence` then cover them.
//!
//! A closure that panics is rolled back from a per-thread undo log of
//! `(offset, old value)` pairs ([`Config::undo_entries_per_thread`]); if it
//! stored more than that, its partial effects stay (every replica running it
//! makes the same ones, closures being deterministic).

use super::core::{Comb, Cx, Flavor};
use super::Config;
use crate::error::PtmError;
use crate::front::{self, Front, Sealed};
use crate::layout::{self, Kind};
use crate::redo::state::DirtyLines;
use crate::redo::ReadTx;
use crate::registry::Kind as TxKind;
use crate::replica::word;
use crate::tx::PWord;
use perdure_pm::sync::atomic::Ordering;
use perdure_pm::{Backend, Pool};
use std::cell::{Cell, RefCell};
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};

const KIND: Kind = Kind {
    name: "CX-PTM",
    magic: MAGIC,
    replicas: |n| 2 * n,
};
/// Magic of a CX-PTM header.
pub const MAGIC: u64 = u64::from_le_bytes(*b"PDCXPTM1");

type UpdateFn<B> = Box<dyn for<'t> Fn(&Tx<'t, B>) -> u64 + Send + Sync>;
type ReadFn<B> = Box<dyn for<'t> Fn(&ReadTx<'t, B>) -> u64 + Send + Sync>;

/// What a node of CX-PTM's queue runs.
pub(crate) enum Job<B: Backend> {
    Update(UpdateFn<B>),
    Read(ReadFn<B>),
}

/// The CX-PTM flavour of the consensus.
pub(crate) struct Annotated<B>(PhantomData<B>);

/// A thread's undo log: the old values of the current closure's stores.
///
/// Written through `&self` by every store of the closure (a [`Tx`] is
/// shared): cells and a preallocated array, so that recording a store is a
/// few instructions (no borrow flag, no growth check) — it is on the path of
/// every CX-PTM store.
pub(crate) struct UndoLog {
    entries: Box<[Cell<(u64, u64)>]>,
    len: Cell<usize>,
    overflow: Cell<bool>,
}

/// One thread applying nodes to the replica it holds. The replica's dirty
/// lines and the thread's undo log are taken out for the session and put
/// back when it ends.
pub(crate) struct Session<'a, B: Backend> {
    pool: &'a Pool<B>,
    base: u64,
    len: u64,
    uid: u64,
    w: Writer,
    comb: &'a std::sync::Mutex<DirtyLines>,
    scratch: &'a mut UndoLog,
}

impl<B: Backend> Drop for Session<'_, B> {
    fn drop(&mut self) {
        let dirty = std::mem::replace(self.w.dirty.get_mut(), DirtyLines::new(0));
        *self.comb.lock().unwrap_or_else(|e| e.into_inner()) = dirty;
        std::mem::swap(self.scratch, &mut self.w.undo);
    }
}

/// What a [`Tx`] writes through: the replica's dirty lines and the undo log.
pub(crate) struct Writer {
    dirty: RefCell<DirtyLines>,
    undo: UndoLog,
}

impl Writer {
    /// Records the old value of a store in the undo log (the new value is
    /// not needed: a panicking closure's stores are rolled back, never
    /// replayed), or marks the log overflowed when it is full.
    #[inline]
    fn log(&self, off: u64, old: u64, _new: u64) {
        let u = &self.undo;
        let n = u.len.get();
        match u.entries.get(n) {
            Some(e) => {
                e.set((off, old));
                u.len.set(n + 1);
            }
            None => u.overflow.set(true),
        }
    }
}

impl UndoLog {
    /// A log of `cap` entries.
    fn new(cap: usize) -> UndoLog {
        UndoLog {
            entries: (0..cap).map(|_| Cell::new((0, 0))).collect(),
            len: Cell::new(0),
            overflow: Cell::new(false),
        }
    }

    /// A placeholder while the real log is taken (no allocation).
    fn empty() -> UndoLog {
        UndoLog::new(0)
    }

    /// Forgets the entries (a new closure starts).
    fn clear(&self) {
        self.len.set(0);
        self.overflow.set(false);
    }
}

impl<B: Backend> Flavor<B> for Annotated<B> {
    type Job = Job<B>;
    type CombState = std::sync::Mutex<DirtyLines>;
    type Scratch = UndoLog;
    type Session<'a> = Session<'a, B>;

    fn comb_state(config: &Config) -> Self::CombState {
        std::sync::Mutex::new(DirtyLines::filtered(config.dirty_lines_per_replica))
    }

    fn scratch(config: &Config, _region_len: u64) -> UndoLog {
        UndoLog::new(config.undo_entries_per_thread)
    }

    fn begin<'a>(
        cx: &'a Cx<B, Self>,
        comb: &'a Comb<B, Self>,
        scratch: &'a mut UndoLog,
    ) -> Session<'a, B> {
        let dirty = std::mem::replace(
            &mut *comb.state.lock().unwrap_or_else(|e| e.into_inner()),
            DirtyLines::new(0),
        );
        let undo = std::mem::replace(scratch, UndoLog::empty());
        Session {
            pool: &cx.pool,
            base: comb.replica,
            len: cx.region_len,
            uid: cx.uid,
            w: Writer {
                dirty: RefCell::new(dirty),
                undo,
            },
            comb: &comb.state,
            scratch,
        }
    }

    fn run(_cx: &Cx<B, Self>, s: &mut Session<'_, B>, job: &Job<B>) -> (u64, bool) {
        let read = ReadTx::new(s.pool, s.base, s.len);
        match job {
            Job::Update(f) => {
                s.w.undo.clear();
                let tx = Tx { read, w: &s.w };
                let out = {
                    let _in = front::enter(s.uid, TxKind::Update, &tx);
                    catch_unwind(AssertUnwindSafe(|| f(&tx)))
                };
                match out {
                    Ok(v) => (v, false),
                    Err(_) => {
                        tx.roll_back();
                        (0, true)
                    }
                }
            }
            Job::Read(f) => run_read(s.uid, &read, f),
        }
    }

    fn copy_from(cx: &Cx<B, Self>, s: &mut Session<'_, B>, src: &Comb<B, Self>) {
        let used = cx.used_len(src.replica);
        for off in (0..used).step_by(8) {
            let v = word(s.pool, src.replica + off).load(Ordering::Relaxed);
            word(s.pool, s.base + off).store(v, Ordering::Relaxed);
        }
        s.w.dirty.borrow_mut().add_range(s.base, s.base + used);
    }

    fn settle(_cx: &Cx<B, Self>, _s: &mut Session<'_, B>) {}

    fn write_back(_cx: &Cx<B, Self>, s: &mut Session<'_, B>) {
        s.w.dirty.borrow_mut().flush(s.pool);
    }
}

/// Runs a read-only closure on `read`, as the current transaction.
fn run_read<B: Backend>(uid: u64, read: &ReadTx<'_, B>, f: &ReadFn<B>) -> (u64, bool) {
    let _in = front::enter(uid, TxKind::Read, read);
    match catch_unwind(AssertUnwindSafe(|| f(read))) {
        Ok(v) => (v, false),
        Err(_) => (0, true),
    }
}

/// An update transaction on the replica the running thread holds: what a
/// CX-PTM `update_tx` closure gets. Not `Send` or `Sync`.
pub struct Tx<'t, B: Backend> {
    read: ReadTx<'t, B>,
    w: &'t Writer,
}

crate::redo::update_tx_in_place!(Tx);

impl<B: Backend> Tx<'_, B> {
    fn roll_back(&self) {
        let u = &self.w.undo;
        if u.overflow.get() {
            return;
        }
        for e in u.entries[..u.len.get()].iter().rev() {
            let (off, old) = e.get();
            word(self.read.pool(), self.read.base() + off).store(old, Ordering::Relaxed);
        }
    }
}

/// CX-PTM over a pool. See the module docs of [`crate::cx`].
pub struct CxPtm<B: Backend> {
    cx: Cx<B, Annotated<B>>,
}

impl<B: Backend> std::fmt::Debug for CxPtm<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CxPtm")
            .field("threads", &self.cx.n)
            .field("replica_len", &self.cx.region_len)
            .field("cur_comb", &self.cur_comb_word())
            .finish()
    }
}

impl<B: Backend> CxPtm<B> {
    /// Formats `pool` for CX-PTM with `config.threads` threads (`2N`
    /// replicas splitting the pool) and opens it. Crash-atomic like
    /// [`crate::RedoPtm::create`]: the header is written last.
    pub fn create(pool: Pool<B>, config: &Config) -> Result<CxPtm<B>, PtmError> {
        layout::create_empty(&pool, &KIND, config.threads, config)?;
        CxPtm::open(pool, config)
    }

    /// Opens the CX-PTM in `pool` (null recovery: the replica `cur_comb`
    /// designates is the state, every other replica is invalid). The thread
    /// count comes from the pool; the rest of `config` sizes the volatile
    /// structures.
    pub fn open(pool: Pool<B>, config: &Config) -> Result<CxPtm<B>, PtmError> {
        let (g, cur, config) = layout::open_with_config(&pool, &KIND, 0, config)?;
        Ok(CxPtm {
            cx: Cx::build(pool, config, &g, cur),
        })
    }

    /// Opens the CX-PTM in `pool`, creating one if the pool holds none.
    /// "None" is a 0 word where the header's magic goes (a fresh pool, or a
    /// create a crash cut off); any other word is opened and, if it is not
    /// the magic, reported: a damaged header is never formatted over.
    pub fn open_or_create(pool: Pool<B>, config: &Config) -> Result<CxPtm<B>, PtmError> {
        layout::open_or_create(
            pool,
            &KIND,
            |pool| CxPtm::open(pool, config),
            |pool| CxPtm::create(pool, config),
        )
    }

    super::accessors!();

    /// An upper bound on the volatile memory this PTM uses, per
    /// [`Config::volatile_bytes_ptm`] (closures' captures not included).
    pub fn volatile_bytes(&self) -> u64 {
        self.cx.config.volatile_bytes_ptm()
    }

    front::inherent_api!();
}

impl<B: Backend> Sealed for CxPtm<B> {}

impl<B: Backend> Front for CxPtm<B> {
    type Tx<'t> = Tx<'t, B>;
    type ReadTx<'t> = ReadTx<'t, B>;

    super::front_ids!();

    fn update_with<R, F>(&self, tid: usize, f: F) -> R
    where
        R: PWord,
        F: for<'t> Fn(&Tx<'t, B>) -> R + Send + Sync + 'static,
    {
        let out = self
            .cx
            .apply_update(tid, Job::Update(Box::new(move |tx| f(tx).into_word())));
        front::result_of(TxKind::Update, out)
    }

    fn read_with<R, F>(&self, tid: usize, f: F) -> R
    where
        R: PWord,
        F: for<'t> Fn(&ReadTx<'t, B>) -> R + Send + Sync + 'static,
    {
        let direct = |cx: &Cx<B, Annotated<B>>, base: u64, _: &mut UndoLog| {
            read_on(cx, base, &|rt: &ReadTx<'_, B>| f(rt))
        };
        if let Some(r) = self.cx.apply_read(tid, &direct) {
            return r;
        }
        let published = |cx: &Cx<B, Annotated<B>>, job: &Job<B>, base: u64, _: &mut UndoLog| {
            let Job::Read(g) = job else {
                unreachable!("a read publishes a read job")
            };
            read_on(cx, base, &|rt: &ReadTx<'_, B>| g(rt))
        };
        let job = Job::Read(Box::new(move |rt| f(rt).into_word()));
        front::result_of(
            TxKind::Read,
            self.cx.apply_published_read(tid, job, &published),
        )
    }
}

/// Runs `f` on the replica at pool offset `base` as the current read-only
/// transaction (R{3}: on the designated replica, under a shared lock).
fn read_on<B: Backend, R>(
    cx: &Cx<B, Annotated<B>>,
    base: u64,
    f: &dyn Fn(&ReadTx<'_, B>) -> R,
) -> R {
    let read = ReadTx::new(&cx.pool, base, cx.region_len);
    let _in = front::enter(cx.uid, TxKind::Read, &read);
    f(&read)
}

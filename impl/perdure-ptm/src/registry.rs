//! Thread ids and nesting: which of a PTM's `N` thread ids the calling
//! thread speaks for, and whether it is already inside one of the PTM's
//! transactions.
//!
//! The seed's constructions index their per-thread arrays (announce, the
//! requests, the read indicators, `stMatrix`) by a thread id in `0..N`. A
//! thread gets one either explicitly, as a [`crate::front::Handle`], or
//! implicitly through the PTM's `update_tx`/`read_tx`, which lease one for
//! the calling thread on first use and give it back when the thread exits.
//!
//! Nesting (see [`crate::tx`]): while a thread runs a transaction's closure,
//! a thread-local records which PTM and which transaction it is in, so an
//! `update_tx`/`read_tx` on the same PTM from inside runs inline.

use crate::sync::atomic::{AtomicBool, Ordering};
use std::cell::{Cell, RefCell};
use std::sync::Arc;

/// A unique id for each PTM instance in this process (never reused), so a
/// thread-local can tell instances apart.
pub(crate) fn next_uid() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// The claimed flags of a PTM's thread ids.
pub(crate) struct TidPool {
    claimed: Box<[AtomicBool]>,
}

impl TidPool {
    pub(crate) fn new(n: usize) -> Arc<TidPool> {
        Arc::new(TidPool {
            claimed: (0..n).map(|_| AtomicBool::new(false)).collect(),
        })
    }

    /// Claims a free id (lowest first).
    pub(crate) fn claim(&self) -> Option<usize> {
        self.claimed.iter().position(|c| {
            !c.load(Ordering::Relaxed)
                && c.compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
        })
    }

    /// Gives `tid` back.
    pub(crate) fn release(&self, tid: usize) {
        self.claimed[tid].store(false, Ordering::Release);
    }
}

/// A thread id leased to the current thread, given back when the thread's
/// locals are destroyed (or when the lease list is pruned after its PTM is
/// gone).
struct Lease {
    uid: u64,
    tid: usize,
    pool: Arc<TidPool>,
}

impl Drop for Lease {
    fn drop(&mut self) {
        // The cache must not outlive the lease (at thread exit the leases
        // are dropped first; a transaction run by a later thread-local
        // destructor then leases again rather than reuse a released id).
        let _ = LAST.try_with(|l| {
            if l.get().0 == self.uid {
                l.set((0, 0));
            }
        });
        self.pool.release(self.tid);
    }
}

// Under the model checkers a model thread is not an OS thread: their own
// thread-locals (which take no `const` initialisers).
// `LAST` caches the lease found last, `(uid, tid)` (uid 0: none; uids start
// at 1), so that a thread working with one PTM finds its id with one load.
#[cfg(not(any(perdure_loom, perdure_shuttle)))]
std::thread_local! {
    static LEASES: RefCell<Vec<Lease>> = const { RefCell::new(Vec::new()) };
    static LAST: Cell<(u64, usize)> = const { Cell::new((0, 0)) };
    static CURRENT: Cell<Packed> = const { Cell::new(NONE) };
}
#[cfg(perdure_loom)]
loom::thread_local! {
    static LEASES: RefCell<Vec<Lease>> = RefCell::new(Vec::new());
    static LAST: Cell<(u64, usize)> = Cell::new((0, 0));
    static CURRENT: Cell<Packed> = Cell::new(NONE);
}
#[cfg(all(perdure_shuttle, not(perdure_loom)))]
shuttle::thread_local! {
    static LEASES: RefCell<Vec<Lease>> = RefCell::new(Vec::new());
    static LAST: Cell<(u64, usize)> = Cell::new((0, 0));
    static CURRENT: Cell<Packed> = Cell::new(NONE);
}

/// The calling thread's id for PTM `uid`, leasing one from `pool` on first
/// use.
#[inline]
pub(crate) fn leased_tid(uid: u64, pool: &Arc<TidPool>) -> Option<usize> {
    let (last_uid, last_tid) = LAST.with(|l| l.get());
    if last_uid == uid {
        return Some(last_tid);
    }
    let tid = find_or_lease(uid, pool)?;
    LAST.with(|l| l.set((uid, tid)));
    Some(tid)
}

/// The lease of PTM `uid` in the thread's list, or a new one.
fn find_or_lease(uid: u64, pool: &Arc<TidPool>) -> Option<usize> {
    LEASES.with(|leases| {
        let mut leases = leases.borrow_mut();
        if let Some(l) = leases.iter().find(|l| l.uid == uid) {
            return Some(l.tid);
        }
        // Leases of PTMs that no longer exist hold only their id pool.
        leases.retain(|l| Arc::strong_count(&l.pool) > 1);
        let tid = pool.claim()?;
        leases.push(Lease {
            uid,
            tid,
            pool: pool.clone(),
        });
        Some(tid)
    })
}

/// Gives back every thread id the calling thread has leased, from every
/// PTM; its next `update_tx`/`read_tx` leases afresh. Returns how many it
/// gave back, or `None` (giving back nothing) when called from inside a
/// transaction's closure.
///
/// A lease is given back when its thread's locals are destroyed, which is
/// after the thread's closure returns: `std::thread::scope` can return
/// before that happens for the threads it did not join explicitly, and a
/// pooled worker thread never exits. A thread that is done with a PTM and
/// whose id others need next calls this as its last step (or is joined
/// through its handle, which waits for its locals).
pub fn release_thread_ids() -> Option<usize> {
    if CURRENT.with(|c| c.get()).0 != 0 {
        return None;
    }
    Some(LEASES.with(|leases| {
        let gone = std::mem::take(&mut *leases.borrow_mut());
        gone.len()
    }))
}

/// What kind of transaction a thread is inside.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An update: `ptr` points to the construction's update-transaction type.
    Update,
    /// A read-only transaction: `ptr` points to its read-transaction type.
    Read,
}

/// The transaction the current thread is running a closure of.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Current {
    pub uid: u64,
    pub kind: Kind,
    pub ptr: *const (),
}

/// [`Current`] as the thread-local holds it: `(uid, ptr | kind bit)`, uid 0
/// for none. Two aligned words, so that a transaction entering and leaving
/// stores and loads whole words (an `Option<Current>` is copied in pieces of
/// odd sizes, and a later load of the whole spans them: a store-forwarding
/// stall on every transaction, measured on the read path).
type Packed = (u64, usize);
const NONE: Packed = (0, 0);
/// The kind bit of a packed pointer (transaction types are 8-aligned).
const READ_BIT: usize = 1;

fn pack(cur: Current) -> Packed {
    debug_assert!(cur.uid != 0 && cur.ptr as usize & READ_BIT == 0);
    let bit = match cur.kind {
        Kind::Update => 0,
        Kind::Read => READ_BIT,
    };
    (cur.uid, cur.ptr as usize | bit)
}

/// The transaction of PTM `uid` the calling thread is inside, if any.
#[inline]
pub(crate) fn current(uid: u64) -> Option<Current> {
    let (u, p) = CURRENT.with(|c| c.get());
    (u == uid && u != 0).then_some(Current {
        uid: u,
        kind: if p & READ_BIT == 0 {
            Kind::Update
        } else {
            Kind::Read
        },
        ptr: (p & !READ_BIT) as *const (),
    })
}

/// Marks the calling thread as inside `cur` until the guard drops (also on
/// unwinding), restoring what was there before.
pub(crate) struct Enter {
    prev: Packed,
}

impl Enter {
    #[inline]
    pub(crate) fn new(cur: Current) -> Enter {
        Enter {
            prev: CURRENT.with(|c| c.replace(pack(cur))),
        }
    }
}

impl Drop for Enter {
    #[inline]
    fn drop(&mut self) {
        let prev = self.prev;
        CURRENT.with(|c| c.set(prev));
    }
}

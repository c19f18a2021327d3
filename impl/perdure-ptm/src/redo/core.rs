//! The volatile side of a Redo-PTM (seed §5, Algorithm 1: `stMatrix`,
//! `combs`, the ring, `announce`, `req`) and null recovery's rebuild of it
//! from the replica `cur_comb` designates; the durability watermark and the
//! threads' counters. The steps run in [`super::update`] (Algorithm 3) and
//! [`super::read`] (Algorithm 2).

use super::config::{Config, RedoStats, Variant};
use super::state::{Combined, DirtyLines, LogArena, State};
use super::tx::{ReadTx, Tx};
use super::wordset::WordSet;
use crate::front::TidPoolRef;
use crate::layout::Geometry;
use crate::registry;
use crate::replica::word;
use crate::sti::{self, INVALID};
use crate::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use crate::sync::CachePadded;
use perdure_pm::{Backend, PmWord, Pool};
use std::cell::RefCell;

#[derive(Default)]
#[repr(align(128))]
pub(super) struct ThreadStats {
    pub(super) commits: std::sync::atomic::AtomicU64,
    pub(super) rollbacks: std::sync::atomic::AtomicU64,
    pub(super) replays: std::sync::atomic::AtomicU64,
    pub(super) replayed_states: std::sync::atomic::AtomicU64,
    pub(super) copies: std::sync::atomic::AtomicU64,
    pub(super) copies_invalid: std::sync::atomic::AtomicU64,
    pub(super) copies_lapped: std::sync::atomic::AtomicU64,
    pub(super) copies_reused: std::sync::atomic::AtomicU64,
    pub(super) copies_log: std::sync::atomic::AtomicU64,
    pub(super) helped: std::sync::atomic::AtomicU64,
    pub(super) reads_direct: std::sync::atomic::AtomicU64,
    pub(super) reads_published: std::sync::atomic::AtomicU64,
    pub(super) log_entries: std::sync::atomic::AtomicU64,
    pub(super) backoffs: std::sync::atomic::AtomicU64,
    pub(super) timed_fallbacks: std::sync::atomic::AtomicU64,
}

/// Counts one on a thread's own statistics counter. Only the thread that
/// holds the thread id writes its counters (a thread id passes from one
/// thread to the next through the id pool's acquire/release), so a load and
/// a store do: a `fetch_add` would be a locked instruction on every
/// transaction, which on x86 also waits for the thread's pending
/// write-backs.
#[inline]
pub(super) fn bump(c: &std::sync::atomic::AtomicU64) {
    add(c, 1);
}

/// Adds `n` to a thread's own statistics counter (see [`bump`]).
#[inline]
pub(super) fn add(c: &std::sync::atomic::AtomicU64, n: u64) {
    use std::sync::atomic::Ordering::Relaxed;
    c.store(c.load(Relaxed).wrapping_add(n), Relaxed);
}

pub(super) type UpdateFn<B> = Box<dyn for<'t> Fn(&Tx<'t, B>) -> u64 + Send + Sync>;
pub(super) type ReadFn<B> = Box<dyn for<'t> Fn(&ReadTx<'t, B>) -> u64 + Send + Sync>;

/// What a published request runs.
pub(super) enum Job<B: Backend> {
    Update(UpdateFn<B>),
    Read(ReadFn<B>),
}

/// A published operation (`req[tid]`): the closure and its sequence number.
pub(super) struct Request<B: Backend> {
    pub(super) seq: u64,
    pub(super) job: Job<B>,
}

/// A retired request, owned by its thread's list until no hazard pointer
/// names it.
pub(super) struct Retired<B: Backend>(pub(super) *mut Request<B>);

// SAFETY: a `Request` holds only `Send + Sync` closures; the pointer is the
// unique owner of a leaked `Box` (see `RedoPtm::reclaim`).
unsafe impl<B: Backend> Send for Retired<B> {}

/// Per thread id, touched only by the thread holding the id.
pub(super) struct Slot<B: Backend> {
    /// `stMatrix[tid].lastIdx`: the next state this thread fills.
    pub(super) last_idx: usize,
    pub(super) retired: Vec<Retired<B>>,
}

/// A `Combined` held exclusively by the running thread, with its dirty
/// lines taken out.
pub(super) struct Held {
    pub(super) idx: usize,
    pub(super) dirty: RefCell<DirtyLines>,
}

/// How an attempt ended.
pub(super) enum Attempt {
    /// This thread's CAS committed a state with its request.
    Committed(u64, bool),
    /// The request was found applied in the state this thread read.
    Applied(u64, bool),
    /// Neither: collect the result from the designated state.
    GaveUp,
}

/// Redo-PTM over a pool (seed §5). See [`crate::redo`].
pub struct RedoPtm<B: Backend> {
    pub(super) pool: Pool<B>,
    pub(super) uid: u64,
    pub(super) config: Config,
    pub(super) n: usize,
    pub(super) cur_comb_off: u64,
    pub(super) replica_len: u64,
    pub(super) combs: Box<[Combined]>,
    /// `stMatrix`: `states[tid][idx]`.
    pub(super) states: Box<[Box<[State]>]>,
    pub(super) arenas: Box<[LogArena]>,
    pub(super) ring: Box<[AtomicU64]>,
    /// Per-thread slots, each on its own lines ([`CachePadded`]).
    pub(super) announce: Box<[CachePadded<AtomicU64>]>,
    pub(super) req: Box<[CachePadded<AtomicPtr<Request<B>>>]>,
    pub(super) hp: Box<[CachePadded<AtomicPtr<Request<B>>>]>,
    pub(super) slots: Box<[CachePadded<std::sync::Mutex<Slot<B>>>]>,
    pub(super) durable: AtomicU64,
    pub(super) tids: TidPoolRef,
    pub(super) stats: Box<[ThreadStats]>,
    /// RedoOpt: each thread's store set (store aggregation).
    pub(super) store_sets: Box<[CachePadded<std::sync::Mutex<RefCell<WordSet>>>]>,
    /// RedoTimed/RedoOpt: when each thread's update started (ns after
    /// `epoch`), and the average copy time (ns) that sizes the window.
    pub(super) epoch: std::time::Instant,
    pub(super) update_start: Box<[CachePadded<std::sync::atomic::AtomicU64>]>,
    pub(super) copy_ns: std::sync::atomic::AtomicU64,
}

impl<B: Backend> std::fmt::Debug for RedoPtm<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedoPtm")
            .field("threads", &self.n)
            .field("replica_len", &self.replica_len)
            .field("cur_comb", &self.cur_comb().load(Ordering::Relaxed))
            .finish()
    }
}

impl<B: Backend> RedoPtm<B> {
    /// The volatile side, after null recovery from `cur`.
    pub(super) fn build(pool: Pool<B>, config: Config, g: &Geometry, cur: u64) -> RedoPtm<B> {
        let n = g.threads;
        let rsize = config.states_per_thread;
        let s = sti::seq(cur);
        let designated = sti::idx(cur);
        let ticket0 = sti::pack(s, 0, 0);
        let combs: Box<[Combined]> = (0..=n)
            .map(|r| {
                let dirty = config
                    .variant
                    .dirty_lines(config.dirty_lines_per_replica, g.replica_len);
                Combined::new(g.replica(r), n, dirty)
            })
            .collect();
        combs[designated].head.store(ticket0, Ordering::SeqCst);
        combs[designated].lock.set_read_lock();
        let states: Box<[Box<[State]>]> = (0..n)
            .map(|_| (0..rsize).map(|_| State::new(n)).collect())
            .collect();
        states[0][0].reset(ticket0);
        let ring: Box<[AtomicU64]> = (0..config.ring_len())
            .map(|_| AtomicU64::new(INVALID))
            .collect();
        ring[(s as usize) & (ring.len() - 1)].store(ticket0, Ordering::SeqCst);
        let slots = (0..n)
            .map(|t| {
                CachePadded(std::sync::Mutex::new(Slot {
                    last_idx: usize::from(t == 0),
                    retired: Vec::with_capacity(n + 1),
                }))
            })
            .collect();
        RedoPtm {
            uid: registry::next_uid(),
            n,
            cur_comb_off: g.cur_comb(),
            replica_len: g.replica_len,
            combs,
            states,
            arenas: (0..n)
                .map(|_| LogArena::new(config.log_entries_per_thread))
                .collect(),
            ring,
            announce: (0..n).map(|_| CachePadded(AtomicU64::new(0))).collect(),
            req: (0..n)
                .map(|_| CachePadded(AtomicPtr::new(std::ptr::null_mut())))
                .collect(),
            hp: (0..n)
                .map(|_| CachePadded(AtomicPtr::new(std::ptr::null_mut())))
                .collect(),
            slots,
            durable: AtomicU64::new(s),
            tids: TidPoolRef::new(n),
            stats: (0..n).map(|_| ThreadStats::default()).collect(),
            store_sets: (0..n)
                .map(|_| {
                    CachePadded(std::sync::Mutex::new(RefCell::new(
                        if config.variant.opt() {
                            WordSet::new(2 * config.log_entries_per_thread)
                        } else {
                            WordSet::none()
                        },
                    )))
                })
                .collect(),
            epoch: std::time::Instant::now(),
            update_start: (0..n)
                .map(|_| CachePadded(std::sync::atomic::AtomicU64::new(0)))
                .collect(),
            copy_ns: std::sync::atomic::AtomicU64::new(0),
            config,
            pool,
        }
    }

    /// The pool.
    pub fn pool(&self) -> &Pool<B> {
        &self.pool
    }

    /// `N`: the thread ids.
    pub fn threads(&self) -> usize {
        self.n
    }

    /// The transactional region's length (one replica).
    pub fn region_len(&self) -> u64 {
        self.replica_len
    }

    /// The configuration in effect.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// RedoOpt: the thread's store set, for its next simulation.
    pub(super) fn store_set(
        &self,
        tid: usize,
    ) -> Option<std::sync::MutexGuard<'_, RefCell<WordSet>>> {
        self.config.variant.opt().then(|| {
            self.store_sets[tid]
                .lock()
                .unwrap_or_else(|e| e.into_inner())
        })
    }

    /// The volatile memory this PTM allocated, per [`Config::volatile_bytes`].
    pub fn volatile_bytes(&self) -> u64 {
        self.config.volatile_bytes()
    }

    /// The raw `cur_comb` word (for tests and tools).
    pub fn cur_comb_word(&self) -> u64 {
        self.cur_comb().load(Ordering::SeqCst)
    }

    /// The counters of all threads, summed.
    pub fn stats(&self) -> RedoStats {
        let mut s = RedoStats::default();
        crate::sum_counters!(s += self.stats;
            commits, rollbacks, replays, replayed_states, copies, copies_invalid,
            copies_lapped, copies_reused, copies_log, helped, reads_direct, reads_published,
            log_entries, backoffs, timed_fallbacks);
        s
    }

    /// Per replica, the `cur_comb` CASes that designated it since the PTM
    /// was opened (RedoTimed-PTM keeps to `combs[0]` and `combs[1]`).
    pub fn replica_commits(&self) -> Vec<u64> {
        self.combs
            .iter()
            .map(|c| c.commits.load(std::sync::atomic::Ordering::Relaxed))
            .collect()
    }

    /// The variant running.
    pub fn variant(&self) -> Variant {
        self.config.variant
    }

    #[inline]
    pub(super) fn cur_comb(&self) -> PmWord<'_, B> {
        word(&self.pool, self.cur_comb_off)
    }

    #[inline]
    pub(super) fn ring_slot(&self, seq: u64) -> &AtomicU64 {
        &self.ring[(seq as usize) & (self.ring.len() - 1)]
    }

    /// The state a ticket names, if its fields are in range.
    #[inline]
    pub(super) fn state_of(&self, ticket: u64) -> Option<&State> {
        self.states
            .get(sti::tid(ticket))
            .and_then(|row| row.get(sti::idx(ticket)))
    }

    pub(super) fn slot(&self, tid: usize) -> std::sync::MutexGuard<'_, Slot<B>> {
        self.slots[tid].lock().unwrap_or_else(|e| e.into_inner())
    }

    // --- Persistence ---------------------------------------------------------

    /// Raises the durability watermark to `seq` (one attempt: a lower value
    /// left behind only costs a later reader a redundant sync).
    pub(super) fn note_durable(&self, seq: u64) {
        let d = self.durable.load(Ordering::SeqCst);
        if sti::seq_after(seq, d) {
            let _ = self
                .durable
                .compare_exchange(d, seq, Ordering::SeqCst, Ordering::SeqCst);
        }
    }

    /// Returns once `cur_comb` at `seq` or later is durable: at once if the
    /// watermark says so, else after `pwb(cur_comb); psync()` (Alg. 2
    /// L15–L16, L20–L21; Alg. 3 L44–L45).
    pub(super) fn ensure_durable(&self, seq: u64) {
        if sti::seq_at_least(self.durable.load(Ordering::SeqCst), seq) {
            return;
        }
        let _t = crate::breakdown::timer(crate::breakdown::Bucket::Flush);
        let now = self.cur_comb().load(Ordering::SeqCst);
        self.pool.pwb(self.cur_comb_off, 8);
        self.pool.psync();
        self.note_durable(sti::seq(now));
    }
}

impl<B: Backend> Drop for RedoPtm<B> {
    fn drop(&mut self) {
        for r in self.req.iter() {
            let p = r.swap(std::ptr::null_mut(), Ordering::SeqCst);
            if !p.is_null() {
                // SAFETY: no transaction is running (we have `&mut self`);
                // `p` came from `Box::into_raw` and was never retired.
                drop(unsafe { Box::from_raw(p) });
            }
        }
        for s in self.slots.iter() {
            let mut s = s.lock().unwrap_or_else(|e| e.into_inner());
            for r in s.retired.drain(..) {
                // SAFETY: retired requests are owned by this list alone and
                // no helper is running.
                drop(unsafe { Box::from_raw(r.0) });
            }
        }
    }
}

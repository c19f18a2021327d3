//! CX's consensus (seed §4, `applyUpdate` steps 1–6 and `applyRead` steps
//! 1–3), once for both CX-PTM and CX-PUC: they differ only in how a node's
//! closure runs on a replica and what reaches persistent memory before the
//! `cur_comb` CAS, which a [`Flavor`] supplies.
//!
//! The walk-through, the persistence rules and the deviations are in the
//! module docs of [`crate::cx`]; steps are cited as {1}–{6} (update) and
//! R{1}–R{3} (read).

use super::queue::{Node, Retirer, TurnQueue, Walk, HP_MY};
use super::{Config, CxStats, Geometry};
use crate::breakdown::Bucket;
use crate::front::TidPoolRef;
use crate::registry;
use crate::replica::{self, word};
use crate::rwlock::StrongTryRwLock;
use crate::sti;
use crate::sync::atomic::{AtomicPtr, AtomicU64, Ordering::SeqCst};
use crate::sync::CachePadded;
use perdure_pm::{Backend, PmWord, Pool};

/// What distinguishes CX-PTM from CX-PUC.
pub(crate) trait Flavor<B: Backend>: Sized + 'static {
    /// A published closure (update, or a read published by R{2}).
    type Job: Send + Sync + 'static;
    /// Volatile state of each `Combined` beyond head, replica and lock.
    type CombState: Send + Sync;
    /// Per-thread scratch memory.
    type Scratch: Send;
    /// The state of one thread applying nodes to the replica it holds.
    type Session<'a>;

    fn comb_state(config: &Config) -> Self::CombState;
    fn scratch(config: &Config, region_len: u64) -> Self::Scratch;
    /// Starts applying nodes to `comb`'s replica (held exclusively; its
    /// content is the state at its head, unless the head is null).
    fn begin<'a>(
        cx: &'a Cx<B, Self>,
        comb: &'a Comb<B, Self>,
        scratch: &'a mut Self::Scratch,
    ) -> Self::Session<'a>;
    /// {4}: runs one node's closure on the replica; `(result, panicked)`.
    fn run(cx: &Cx<B, Self>, s: &mut Self::Session<'_>, job: &Self::Job) -> (u64, bool);
    /// {3}: the replica becomes a copy of `src`'s (held under a shared lock).
    fn copy_from(cx: &Cx<B, Self>, s: &mut Self::Session<'_>, src: &Comb<B, Self>);
    /// The replica's words now hold the state the session reached (CX-PUC
    /// writes its working copy back; CX-PTM stored in place).
    fn settle(cx: &Cx<B, Self>, s: &mut Self::Session<'_>);
    /// `pwb` of everything the replica needs durable before a CAS may
    /// designate it.
    fn write_back(cx: &Cx<B, Self>, s: &mut Self::Session<'_>);
}

/// Runs a published read's job directly on a replica (pool offset).
pub(crate) type PublishedRead<'a, B, F> =
    dyn Fn(&Cx<B, F>, &<F as Flavor<B>>::Job, u64, &mut <F as Flavor<B>>::Scratch) -> u64 + 'a;

/// A `Combined` instance (seed §4: head, obj, rwlock).
pub(crate) struct Comb<B: Backend, F: Flavor<B>> {
    /// The last node applied to the replica; null if its content is not
    /// known to be any state (after an open, or never used).
    pub head: AtomicPtr<Node<F::Job>>,
    /// Pool offset of the replica (`obj`).
    pub replica: u64,
    pub lock: StrongTryRwLock,
    pub state: F::CombState,
}

impl<B: Backend, F: Flavor<B>> Comb<B, F> {
    /// `updateHead` of the published code: `new` gains the head's
    /// reference, the old head loses it. By the lock's writer only, with
    /// `new` protected (a hazard pointer or another head).
    fn update_head(&self, new: *mut Node<F::Job>) {
        if !new.is_null() {
            // SAFETY: the caller protects `new`.
            unsafe { &*new }.refcnt.fetch_add(1, SeqCst);
        }
        let old = self.head.swap(new, SeqCst);
        if !old.is_null() {
            // SAFETY: `old` carried this head's reference until now, so no
            // scan could free it; after the decrement we no longer touch it.
            unsafe { &*old }.refcnt.fetch_sub(1, SeqCst);
        }
    }
}

/// Per thread id, touched only by the thread holding the id.
pub(crate) struct Slot<B: Backend, F: Flavor<B>> {
    pub retirer: Retirer<F::Job>,
    pub scratch: F::Scratch,
}

/// A thread's [`Slot`] behind its lock, on its own lines.
pub(crate) type SlotCell<B, F> = CachePadded<std::sync::Mutex<Slot<B, F>>>;

/// The consensus over a pool laid out by [`crate::layout`].
pub(crate) struct Cx<B: Backend, F: Flavor<B>> {
    pub pool: Pool<B>,
    pub uid: u64,
    pub config: Config,
    pub n: usize,
    pub cur_comb_off: u64,
    pub region_len: u64,
    pub combs: Box<[Comb<B, F>]>,
    pub queue: TurnQueue<F::Job>,
    /// Per thread, each on its own lines (an uncontended lock per
    /// transaction; neighbours would share a line).
    pub slots: Box<[SlotCell<B, F>]>,
    /// The highest `cur_comb` sequence known durable.
    durable: AtomicU64,
    pub tids: TidPoolRef,
    pub stats: Box<[ThreadStats]>,
}

#[derive(Default)]
#[repr(align(128))]
pub(crate) struct ThreadStats {
    commits: std::sync::atomic::AtomicU64,
    copies: std::sync::atomic::AtomicU64,
    applied: std::sync::atomic::AtomicU64,
    helped: std::sync::atomic::AtomicU64,
    reads_direct: std::sync::atomic::AtomicU64,
    reads_published: std::sync::atomic::AtomicU64,
    reads_collected: std::sync::atomic::AtomicU64,
    cas_retries: std::sync::atomic::AtomicU64,
}

/// Counts one on a thread's own statistics counter. Only the thread that
/// holds the thread id writes its counters (a thread id passes from one
/// thread to the next through the id pool's acquire/release), so a load and
/// a store do: a `fetch_add` would be a locked instruction on every
/// transaction, which on x86 also waits for the thread's pending
/// write-backs.
#[inline]
fn bump(c: &std::sync::atomic::AtomicU64) {
    use std::sync::atomic::Ordering::Relaxed;
    c.store(c.load(Relaxed).wrapping_add(1), Relaxed);
}

/// A `Combined` held exclusively, released on every path.
struct Held<'c, B: Backend, F: Flavor<B>> {
    idx: usize,
    comb: &'c Comb<B, F>,
}

impl<B: Backend, F: Flavor<B>> Cx<B, F> {
    /// The volatile side after null recovery from `cur`: `cur_comb`'s
    /// replica is valid with a fresh sentinel (ticket = `cur`'s sequence) as
    /// its head, read-locked; every other head is null (invalid).
    pub(crate) fn build(pool: Pool<B>, config: Config, g: &Geometry, cur: u64) -> Cx<B, F> {
        let n = g.threads;
        let queue = TurnQueue::new(n, sti::seq(cur));
        let combs: Box<[Comb<B, F>]> = (0..g.replicas())
            .map(|r| Comb {
                head: AtomicPtr::new(std::ptr::null_mut()),
                replica: g.replica(r),
                lock: StrongTryRwLock::new(n),
                state: F::comb_state(&config),
            })
            .collect();
        let designated = &combs[sti::idx(cur)];
        designated.head.store(queue.first(), SeqCst);
        designated.lock.set_read_lock();
        let region_len = g.replica_len;
        Cx {
            uid: registry::next_uid(),
            n,
            cur_comb_off: g.cur_comb(),
            region_len,
            combs,
            queue,
            slots: (0..n)
                .map(|_| {
                    CachePadded(std::sync::Mutex::new(Slot {
                        retirer: Retirer::new(),
                        scratch: F::scratch(&config, region_len),
                    }))
                })
                .collect(),
            durable: AtomicU64::new(sti::seq(cur)),
            tids: TidPoolRef::new(n),
            stats: (0..n).map(|_| ThreadStats::default()).collect(),
            config,
            pool,
        }
    }

    #[inline]
    pub(crate) fn cur_comb(&self) -> PmWord<'_, B> {
        word(&self.pool, self.cur_comb_off)
    }

    pub(crate) fn slot(&self, tid: usize) -> std::sync::MutexGuard<'_, Slot<B, F>> {
        self.slots[tid].lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn stats(&self) -> CxStats {
        let get = |c: &std::sync::atomic::AtomicU64| c.load(std::sync::atomic::Ordering::Relaxed);
        let mut s = CxStats {
            disposed: get(&self.queue.disposed),
            freed: get(&self.queue.freed),
            ..CxStats::default()
        };
        crate::sum_counters!(s += self.stats;
            commits, copies, applied, helped, reads_direct, reads_published, reads_collected,
            cas_retries);
        s
    }

    // --- Persistence ---------------------------------------------------------

    fn note_durable(&self, seq: u64) {
        let d = self.durable.load(SeqCst);
        if sti::seq_after(seq, d) {
            let _ = self.durable.compare_exchange(d, seq, SeqCst, SeqCst);
        }
    }

    /// Returns once a `cur_comb` of sequence `seq` or later is durable:
    /// at once if the watermark says so, else after `pwb(cur_comb)` and
    /// `psync` (the published code's exits: `PWB(&per->curComb); PSYNC()`).
    /// `cur_comb` must already be at `seq` or later.
    pub(crate) fn ensure_durable(&self, seq: u64) {
        if sti::seq_at_least(self.durable.load(SeqCst), seq) {
            return;
        }
        let _t = crate::breakdown::timer(Bucket::Flush);
        let now = self.cur_comb().load(SeqCst);
        self.pool.pwb(self.cur_comb_off, 8);
        self.pool.psync();
        self.note_durable(sti::seq(now));
    }

    // --- applyUpdate -----------------------------------------------------------

    /// A node for `job`, enqueued {1}, protected by `tid`'s [`HP_MY`] until
    /// [`Cx::release_my`].
    fn publish(&self, tid: usize, job: F::Job) -> (*mut Node<F::Job>, u64) {
        let my = Node::boxed(Some(job), tid);
        self.queue.protect(tid, HP_MY, my);
        self.queue.enqueue(my, tid);
        // SAFETY: ours, protected.
        (my, unsafe { &*my }.ticket())
    }

    fn release_my(&self, tid: usize) {
        self.queue.clear(tid, HP_MY);
    }

    /// `applyUpdate` (§4 steps 1–6): `(result, panicked)` of `job`.
    pub(crate) fn apply_update(&self, tid: usize, job: F::Job) -> (u64, bool) {
        let _t = crate::breakdown::update();
        let mut slot = self.slot(tid);
        let (my, my_t) = self.publish(tid, job);
        crate::trace_ev!(&self.pool, Enqueue(tid, my_t));
        let out = loop {
            if let Some(held) = self.lock_any() {
                crate::trace_ev!(&self.pool, Lock(tid, Some(held.idx)));
                break self.update_on(tid, &mut slot, held, my, my_t);
            }
            // Every `Combined` was taken during the scan. Each thread holds
            // at most one exclusively and one shared, but a winner keeps the
            // replica it superseded read-locked until its `psync`, so for a
            // moment all 2N can be busy: scan again until one is free or
            // another thread has installed our node.
            if sti::seq_at_least(sti::seq(self.cur_comb().load(SeqCst)), my_t) {
                break self.collect(my, my_t);
            }
            crate::breakdown::timed(Bucket::Wait, crate::sync::spin_loop);
        };
        self.release_my(tid);
        out
    }

    /// {2}: the first `Combined` the strong trylock gives, `combs[0]` to
    /// `combs[2N-1]`.
    fn lock_any(&self) -> Option<Held<'_, B, F>> {
        self.combs
            .iter()
            .enumerate()
            .find(|(_, c)| c.lock.exclusive_try_lock())
            .map(|(idx, comb)| Held { idx, comb })
    }

    /// {3}–{6} on the held `Combined`.
    fn update_on(
        &self,
        tid: usize,
        slot: &mut Slot<B, F>,
        held: Held<'_, B, F>,
        my: *mut Node<F::Job>,
        my_t: u64,
    ) -> (u64, bool) {
        let c = held.comb;
        let mut mn = c.head.load(SeqCst);
        // SAFETY: a head is kept alive by its reference count while the
        // lock is held.
        if !mn.is_null() && sti::seq_at_least(unsafe { &*mn }.ticket(), my_t) {
            // Someone applied our node on this replica already, and a
            // replica is released only once `cur_comb` holds its head.
            crate::trace_ev!(&self.pool, Unlock(tid, held.idx));
            c.lock.exclusive_unlock();
            return self.collect(my, my_t);
        }
        let mut session = F::begin(self, c, &mut slot.scratch);
        let mut copied = false;
        let mut walk = Walk::new();
        // {3}, {4}: apply every node after the head, up to ours.
        while mn != my {
            // SAFETY (all derefs of `mn` below): `mn` is the head (kept by
            // its reference count) or protected by `walk`'s hazard pointer.
            let stale = mn.is_null() || unsafe { &*mn }.is_self_linked() || {
                let behind = sti::seq_dist(my_t, unsafe { &*mn }.ticket());
                !copied && behind > self.config.replay_window as u64
            };
            if stale {
                match self.get_combined(tid, my_t) {
                    None => {
                        // Our node is in `cur_comb` already: leave the
                        // replica at the state it reached.
                        F::settle(self, &mut session);
                        drop(session);
                        c.update_head(mn);
                        crate::trace_ev!(&self.pool, Unlock(tid, held.idx));
                        c.lock.exclusive_unlock();
                        return self.collect(my, my_t);
                    }
                    Some(src_idx) => {
                        let src = &self.combs[src_idx];
                        crate::breakdown::timed(Bucket::Copy, || {
                            F::copy_from(self, &mut session, src)
                        });
                        mn = src.head.load(SeqCst);
                        // `mn` keeps `src`'s reference while we hold its
                        // shared lock; ours is added before we let go.
                        c.update_head(mn);
                        src.lock.shared_unlock(tid);
                        copied = true;
                        bump(&self.stats[tid].copies);
                        continue;
                    }
                }
            }
            // SAFETY: see above.
            let m = unsafe { &*mn };
            let Some(next) = walk.step(&self.queue, tid, m) else {
                // Self-linked (the next turn copies), or no successor, which
                // the queue order rules out (ours follows).
                debug_assert!(m.is_self_linked(), "a gap before our node");
                continue;
            };
            // SAFETY: `next` was `mn.next` after our hazard pointer named
            // it, with `mn` not yet disposed of: `next` is in no retired
            // list, so no scan frees it while the hazard pointer stays.
            let nx = unsafe { &*next };
            if let Some(job) = nx.job.as_ref() {
                let (r, p) =
                    crate::breakdown::timed(Bucket::Lambda, || F::run(self, &mut session, job));
                nx.result.store(r, SeqCst);
                nx.panicked.store(p, SeqCst);
                bump(&self.stats[tid].applied);
                if nx.enq_tid != tid {
                    bump(&self.stats[tid].helped);
                }
            }
            mn = next;
        }
        c.update_head(my);
        self.queue.clear_walk(tid);
        F::settle(self, &mut session);
        if !mutant!(CxFlushAfterCas) {
            crate::breakdown::timed(Bucket::Flush, || F::write_back(self, &mut session));
        }
        drop(session);
        c.lock.downgrade(); // {5}
        if !self.pool.rmw_completes_flushes() && !mutant!(CxNoFenceBeforeCas) {
            crate::breakdown::timed(Bucket::Flush, || self.pool.pfence());
        }
        self.install(tid, slot, held.idx, my, my_t)
    }

    /// {6}: CAS `cur_comb` to the held replica, retried until it succeeds
    /// or the designated head is at or after our node.
    fn install(
        &self,
        tid: usize,
        slot: &mut Slot<B, F>,
        idx: usize,
        my: *mut Node<F::Job>,
        my_t: u64,
    ) -> (u64, bool) {
        let c = &self.combs[idx];
        let mut tries = 0usize;
        loop {
            // Each failed try means `cur_comb` moved during it; at most
            // N - 1 moves can leave our node out (one per other thread's
            // earlier node), so this runs at most N times.
            tries += 1;
            debug_assert!(tries <= self.n + 1, "the CAS loop outran its bound");
            let cur = self.cur_comb().load(SeqCst);
            let lc = &self.combs[sti::idx(cur)];
            if !lc.lock.shared_try_lock(tid) {
                bump(&self.stats[tid].cas_retries);
                continue;
            }
            let lh = lc.head.load(SeqCst);
            if lh.is_null() {
                lc.lock.shared_unlock(tid);
                continue;
            }
            // SAFETY: `lc`'s head cannot change while we hold its shared
            // lock, and its reference keeps it alive.
            if sti::seq_at_least(unsafe { &*lh }.ticket(), my_t) {
                lc.lock.shared_unlock(tid);
                if cur != self.cur_comb().load(SeqCst) {
                    continue;
                }
                break; // another thread's replica holds our node
            }
            let next = sti::pack(my_t, tid, idx);
            if self
                .cur_comb()
                .compare_exchange(cur, next, SeqCst, SeqCst)
                .is_ok()
            {
                if mutant!(CxFlushAfterCas) {
                    self.pool.pwb(c.replica, self.used_len(c.replica));
                }
                let flush = crate::breakdown::timer(Bucket::Flush);
                if !mutant!(CxNoSyncAfterCas) {
                    self.pool.pwb(self.cur_comb_off, 8);
                    self.pool.psync();
                }
                drop(flush);
                self.note_durable(my_t);
                // The superseded replica is released only now that the new
                // `cur_comb` is durable (as Redo-PTM; see the module docs).
                // Releasing it before the psync is equivalent here, as long as
                // the shared hold below lasts (`MUTANTS.md`, "Removed").
                lc.lock.downgrade_unlock();
                // SAFETY: our CAS moved the designated head from `lh` to
                // `my`; we hold `lc` shared (so `lh` lives) and `my` is
                // protected.
                unsafe {
                    self.queue.retire_range(
                        &mut slot.retirer,
                        lh,
                        my,
                        self.config.replay_window as u64,
                    )
                };
                lc.lock.shared_unlock(tid);
                bump(&self.stats[tid].commits);
                // SAFETY: ours, protected.
                let m = unsafe { &*my };
                return (m.result.load(SeqCst), m.panicked.load(SeqCst));
            }
            lc.lock.shared_unlock(tid);
            bump(&self.stats[tid].cas_retries);
        }
        crate::trace_ev!(&self.pool, Unlock(tid, idx));
        c.lock.downgrade_unlock();
        self.collect(my, my_t)
    }

    /// `getCombined`: the designated replica under a shared lock, to copy
    /// from, if it does not hold our node yet; `None` once `cur_comb` does.
    /// Each try that returns neither means `cur_comb` moved.
    fn get_combined(&self, tid: usize, my_t: u64) -> Option<usize> {
        loop {
            let cur = self.cur_comb().load(SeqCst);
            if sti::seq_at_least(sti::seq(cur), my_t) {
                return None;
            }
            let idx = sti::idx(cur);
            let lc = &self.combs[idx];
            if !lc.lock.shared_try_lock(tid) {
                continue;
            }
            // Still designated with our shared lock on it: its head and
            // content are `cur`'s state, and stay so until we unlock.
            let head = lc.head.load(SeqCst);
            // SAFETY: a head lives while its `Combined` names it.
            if cur == self.cur_comb().load(SeqCst)
                && !head.is_null()
                && !unsafe { &*head }.is_self_linked()
            {
                return Some(idx);
            }
            lc.lock.shared_unlock(tid);
        }
    }

    /// Our node's result, once `cur_comb` holds it, made durable.
    fn collect(&self, my: *mut Node<F::Job>, my_t: u64) -> (u64, bool) {
        // Every caller has seen `cur_comb` at or past our node.
        debug_assert!(sti::seq_at_least(
            sti::seq(self.cur_comb().load(SeqCst)),
            my_t
        ));
        self.ensure_durable(my_t);
        // SAFETY: the caller's node, protected by its `HP_MY`.
        let m = unsafe { &*my };
        (m.result.load(SeqCst), m.panicked.load(SeqCst))
    }

    // --- applyRead -------------------------------------------------------------

    /// `applyRead` (§4, R{1} and R{3}), the first `max_read_tries` tries:
    /// `direct` runs the closure on a replica (pool offset) under a shared
    /// lock. `None`: every try found `cur_comb` moving, publish the read
    /// ([`Cx::apply_published_read`]).
    pub(crate) fn apply_read<R>(
        &self,
        tid: usize,
        direct: &dyn Fn(&Self, u64, &mut F::Scratch) -> R,
    ) -> Option<R> {
        let mut slot = self.slot(tid);
        for _ in 0..self.config.max_read_tries {
            if let Some(r) = self.read_designated(tid, &mut slot.scratch, direct) {
                bump(&self.stats[tid].reads_direct);
                return Some(r);
            }
        }
        None
    }

    /// R{2}: the read enqueued as a node; `published` runs its job directly
    /// in up to `N` more tries, else an updater has run it by then (each
    /// failed try means `cur_comb` moved, and at most `N - 1` moves leave
    /// the node out). `(word, panicked)`.
    pub(crate) fn apply_published_read(
        &self,
        tid: usize,
        job: F::Job,
        published: &PublishedRead<'_, B, F>,
    ) -> (u64, bool) {
        let mut slot = self.slot(tid);
        bump(&self.stats[tid].reads_published);
        let (my, my_t) = self.publish(tid, job);
        crate::trace_ev!(&self.pool, Enqueue(tid, my_t));
        // SAFETY: ours, protected; its job is `Some` (set by `publish`).
        let job = unsafe { &*my }.job.as_ref().expect("a published job");
        let run = |cx: &Self, base: u64, sc: &mut F::Scratch| published(cx, job, base, sc);
        let mut tries = 0;
        let out = loop {
            // After `N` tries an updater has run the node (the argument
            // above); collect only once `cur_comb` shows it.
            if tries >= self.n && sti::seq_at_least(sti::seq(self.cur_comb().load(SeqCst)), my_t) {
                bump(&self.stats[tid].reads_collected);
                break self.collect(my, my_t);
            }
            tries += 1;
            if let Some(w) = self.read_designated(tid, &mut slot.scratch, &run) {
                break (w, false);
            }
        };
        self.release_my(tid);
        out
    }

    /// R{1}, R{3}: one try on the designated replica.
    fn read_designated<R>(
        &self,
        tid: usize,
        scratch: &mut F::Scratch,
        run: &dyn Fn(&Self, u64, &mut F::Scratch) -> R,
    ) -> Option<R> {
        let cur = self.cur_comb().load(SeqCst);
        let lc = &self.combs[sti::idx(cur)];
        if !lc.lock.shared_try_lock(tid) {
            return None;
        }
        if cur != self.cur_comb().load(SeqCst) {
            lc.lock.shared_unlock(tid);
            return None;
        }
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run(self, lc.replica, scratch)
        }));
        lc.lock.shared_unlock(tid);
        match out {
            Ok(r) => {
                self.ensure_durable(sti::seq(cur));
                Some(r)
            }
            Err(p) => std::panic::resume_unwind(p),
        }
    }

    // --- Copies ----------------------------------------------------------------

    /// The used prefix of the replica at pool offset `base` (all of it if
    /// its allocator is damaged: a closure may store anywhere in the region,
    /// and a damaged replica must still be copied whole).
    pub(crate) fn used_len(&self, base: u64) -> u64 {
        replica::used_len(&self.pool, base, self.region_len).unwrap_or(self.region_len)
    }
}

impl<B: Backend, F: Flavor<B>> Drop for Cx<B, F> {
    fn drop(&mut self) {
        let mut retirers: Vec<Retirer<F::Job>> = self
            .slots
            .iter_mut()
            .map(|s| {
                let s = s.0.get_mut().unwrap_or_else(|e| e.into_inner());
                std::mem::replace(&mut s.retirer, Retirer::new())
            })
            .collect();
        self.queue.free_all(retirers.iter_mut());
    }
}

//! Algorithm 3 of the seed (§5), `applyUpdate`: publish, combine, commit.
//!
//! Steps are numbered as in the seed ({1}–{9}; L* are its lines); the
//! module docs of [`crate::redo`] summarize it; `docs/redo-ptm.md` gives the
//! walk-through, the persistence rules and the deviations.

use super::core::{add, bump, Attempt, Held, Job, RedoPtm, Request, Retired, Slot};
use super::state::{State, LOG_OVERFLOW, PANICKED};
use super::tx::{ReadTx, Tx, Writer};
use crate::breakdown::{self, Bucket};
use crate::front;
use crate::registry::Kind;
use crate::replica::{self, word};
use crate::sti::{self, INVALID};
use crate::sync::atomic::{fence, Ordering};
use perdure_pm::Backend;
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Why {6} could not replay a replica's missing states (each copy is
/// counted under one of these in [`super::RedoStats`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Unreplayable {
    /// The head is `INVALID`, or not before the designated state.
    Invalid,
    /// More than the ring's length behind, or a ring slot lapped.
    Lapped,
    /// A pending `State` was reused by its owner.
    Reused,
    /// A pending log overflowed its arena or was overwritten in it.
    Log,
}

impl<B: Backend> RedoPtm<B> {
    /// {1}: publish `job` in `req[tid]` and announce it; returns its sequence
    /// number. Retires the previous request and frees those no hazard
    /// pointer names.
    pub(super) fn publish(&self, tid: usize, slot: &mut Slot<B>, job: Job<B>) -> u64 {
        let seq = self.announce[tid].load(Ordering::Relaxed) + 1;
        let p = Box::into_raw(Box::new(Request { seq, job }));
        let old = self.req[tid].swap(p, Ordering::SeqCst);
        if !old.is_null() {
            slot.retired.push(Retired(old));
        }
        let order = if mutant!(RedoAnnounceRelease) {
            Ordering::Release
        } else {
            Ordering::SeqCst
        };
        self.announce[tid].store(seq, order);
        crate::trace_ev!(&self.pool, Announce(tid, seq));
        self.reclaim(slot);
        seq
    }

    /// Frees the retired requests no hazard pointer names.
    pub(super) fn reclaim(&self, slot: &mut Slot<B>) {
        slot.retired.retain(|r| {
            if self.hp.iter().any(|h| h.load(Ordering::SeqCst) == r.0) {
                return true;
            }
            // SAFETY: `r.0` came from `Box::into_raw` in `publish`, was
            // replaced in `req[tid]` before it was retired (so no helper can
            // newly find it: a helper re-reads `req[i]` after publishing its
            // hazard pointer), and no hazard pointer names it now; it is
            // freed once, here, and dropped from the list.
            drop(unsafe { Box::from_raw(r.0) });
            false
        });
    }

    pub(super) fn apply_update(&self, tid: usize, job: Job<B>) -> (u64, bool) {
        let _t = breakdown::update();
        let mut slot = self.slot(tid);
        let my_seq = self.publish(tid, &mut slot, job);
        self.note_update_start(tid);
        // "Two transitions since the announcement: applied" ({2}) rests on
        // a Dekker pair of SeqCst accesses: this thread's `announce` store
        // then `cur_comb` load, against a committer's `cur_comb` CAS, a later
        // committer's `cur_comb` load then `announce` load (in `simulate`).
        // In the single total order of SeqCst accesses, the second committer
        // sees the announcement. loom models SeqCst accesses as AcqRel (its
        // documented limitation), under which that committer may miss it and
        // this thread spin forever (`tests/loom_redo_consensus.rs`, 3
        // updaters); loom does model SeqCst fences, so under `--cfg
        // perdure_loom` a fence here and one in `simulate` restore the order
        // the real build's SeqCst accesses give. Other builds: no fence.
        #[cfg(perdure_loom)]
        fence(Ordering::SeqCst);
        let init = self.cur_comb().load(Ordering::SeqCst);
        let new_idx = slot.last_idx;
        loop {
            match self.attempt_update(tid, my_seq, init, new_idx) {
                Attempt::Committed(r, p) => {
                    slot.last_idx = (new_idx + 1) % self.config.states_per_thread;
                    return (r, p);
                }
                Attempt::Applied(r, p) => return (r, p),
                Attempt::GaveUp => {}
            }
            if let Some(out) = self.collect(tid, my_seq) {
                return out;
            }
            breakdown::timed(Bucket::Wait, crate::sync::spin_loop);
        }
    }

    /// Steps {2}–{9}, at most two attempts (Algorithm 3 L7–L42).
    pub(super) fn attempt_update(
        &self,
        tid: usize,
        my_seq: u64,
        init: u64,
        new_idx: usize,
    ) -> Attempt {
        let new_st = &self.states[tid][new_idx];
        let store_set = self.store_set(tid);
        let mut held: Option<Held> = None;
        let mut outcome = Attempt::GaveUp;
        for _ in 0..2 {
            // {2}
            let cur = self.cur_comb().load(Ordering::SeqCst);
            if sti::seq_dist(sti::seq(cur), sti::seq(init)) >= 2 {
                break; // two transitions since the announcement: applied
            }
            let comb = &self.combs[sti::idx(cur)];
            let tail = comb.head.load(Ordering::SeqCst);
            if tail == INVALID || sti::seq(tail) != sti::seq(cur) {
                continue; // the designated replica was already reused
            }
            let Some(tail_st) = self.state_of(tail) else {
                continue;
            };
            let tkt = sti::pack(sti::seq_add(sti::seq(cur), 1), tid, new_idx);
            // {3}
            new_st.copy_from(tkt, tail_st, self.arenas[tid].position());
            // The copy read `tail_st` with relaxed loads, and its owner may
            // be reusing it (`copy_from`: a new ticket, a release fence, then
            // the new `applied[]`/`results[]`): a seqlock read. Re-reading
            // `cur_comb` alone does not validate it — the relaxed loads may
            // see the reuse's writes while that load still returns the old
            // `cur` — so after an acquire fence the state's ticket must still
            // be `tail` (else the copy may pair a new `applied` with an old
            // `result`: found by loom, `tests/loom_redo_consensus.rs`, on a
            // weakly ordered memory; x86's TSO cannot reorder those loads).
            fence(Ordering::Acquire);
            if tail_st.ticket.load(Ordering::Relaxed) != tail
                || cur != self.cur_comb().load(Ordering::SeqCst)
            {
                continue;
            }
            let mine = new_st.applied[tid].load(Ordering::Relaxed);
            if mine & !PANICKED >= my_seq {
                self.ensure_durable(sti::seq(cur));
                let r = new_st.results[tid].load(Ordering::Relaxed);
                outcome = Attempt::Applied(r, mine & PANICKED != 0);
                break;
            }
            // {4}
            let ring = self.ring_slot(sti::seq(tail));
            let rt = ring.load(Ordering::SeqCst);
            if rt != tail {
                if rt != INVALID && sti::seq_after(sti::seq(rt), sti::seq(tail)) {
                    continue;
                }
                let _ = ring.compare_exchange(rt, tail, Ordering::SeqCst, Ordering::SeqCst);
            }
            // {5}
            if held.is_none() {
                held = self.lock_combined(tid, cur);
                crate::trace_ev!(&self.pool, Lock(tid, held.as_ref().map(|h| h.idx)));
            }
            let Some(h) = held.as_ref() else {
                break;
            };
            let c = &self.combs[h.idx];
            // {6}
            if !self.bring_up_to_date(h, cur, tail, tid) {
                continue;
            }
            // {7}
            c.head.store(INVALID, Ordering::SeqCst);
            crate::trace_ev!(&self.pool, Simulate(tid, h.idx));
            let writer = Writer::new(&self.arenas[tid], &h.dirty, store_set.as_deref());
            let complete = self.simulate(tid, c.replica, new_st, &writer, cur);
            if complete && cur == self.cur_comb().load(Ordering::SeqCst) {
                // L26: every line of the replica written since it was last
                // designated, by this thread or by earlier holders.
                if !mutant!(RedoFlushAfterCas) {
                    self.flush_dirty(h);
                }
                new_st
                    .log_len
                    .store(writer.published_len(), Ordering::Release);
                c.head.store(tkt, Ordering::SeqCst);
                c.lock.downgrade(); // {8}
                self.fence_before_cas();
                let next = sti::pack(sti::seq(tkt), tid, h.idx);
                // {9}
                if self
                    .cur_comb()
                    .compare_exchange(cur, next, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
                {
                    if mutant!(RedoReleaseBeforeSync) {
                        comb.lock.downgrade_unlock();
                    }
                    if mutant!(RedoFlushAfterCas) {
                        self.flush_dirty(h);
                    }
                    let flush = breakdown::timer(Bucket::Flush);
                    if !mutant!(RedoNoSyncAfterCas) {
                        self.pool.pwb(self.cur_comb_off, 8);
                        self.pool.psync();
                    }
                    drop(flush);
                    self.note_durable(sti::seq(tkt));
                    // L31, after durability (module docs).
                    if !mutant!(RedoReleaseBeforeSync) {
                        comb.lock.downgrade_unlock();
                    }
                    // L32–L35
                    let ring = self.ring_slot(sti::seq(tkt));
                    let rt = ring.load(Ordering::SeqCst);
                    if rt == INVALID || sti::seq_after(sti::seq(tkt), sti::seq(rt)) {
                        let _ = ring.compare_exchange(rt, tkt, Ordering::SeqCst, Ordering::SeqCst);
                    }
                    self.note_commit(tid, c, &writer);
                    if let Some(h) = held.take() {
                        c.put_dirty(h.dirty.into_inner());
                    }
                    bump(&self.stats[tid].commits);
                    let mine = new_st.applied[tid].load(Ordering::Relaxed);
                    let r = new_st.results[tid].load(Ordering::Relaxed);
                    return Attempt::Committed(r, mine & PANICKED != 0);
                }
            }
            // L38–L39: roll the replica back to `tail`. If the log
            // overflowed it cannot be undone: the replica holds this
            // attempt's uncommitted state, which its head must not claim
            // (after a lost CAS the head is still `tkt`, and a later replay
            // from `tkt` would build on it), so it is marked invalid.
            bump(&self.stats[tid].rollbacks);
            let undone = mutant!(RedoNoUndoOnFailedCas) || writer.undo_to(&self.pool, c.replica, 0);
            c.head
                .store(if undone { tail } else { INVALID }, Ordering::SeqCst);
        }
        // L41–L42
        if let Some(h) = held {
            let c = &self.combs[h.idx];
            c.put_dirty(h.dirty.into_inner());
            crate::trace_ev!(&self.pool, Unlock(tid, h.idx));
            c.lock.exclusive_unlock();
        }
        outcome
    }

    /// {5}: the first `Combined` the strong trylock gives (never the
    /// designated one, which is read-only).
    pub(super) fn lock_any(&self, cur: u64) -> Option<Held> {
        self.combs
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != sti::idx(cur))
            .find(|(_, c)| c.lock.exclusive_try_lock())
            .map(|(i, c)| Held {
                idx: i,
                dirty: RefCell::new(c.take_dirty()),
            })
    }

    /// {6} (`applyRedologs`): brings the held replica to `tail`, by replay
    /// or by copy. False if neither was possible (`cur_comb` moved).
    pub(super) fn bring_up_to_date(&self, h: &Held, cur: u64, tail: u64, tid: usize) -> bool {
        let c = &self.combs[h.idx];
        let head = c.head.load(Ordering::SeqCst);
        if head == tail {
            return true;
        }
        // Whether the replica holds a state before `tail` (replayable).
        let behind = match head {
            INVALID => false,
            _ if sti::seq_after(sti::seq(head), sti::seq(tail)) => {
                // The replica holds a state after `tail`: it was designated
                // after this attempt read `cur`, then superseded and
                // released. `cur` is stale; leave the replica as it is (its
                // content is `head`'s state, which the next attempt replays
                // from or finds current) instead of invalidating it, which
                // would make the next attempt copy the whole replica (found
                // by the SPS bench: most copies of two-thread runs came from
                // here).
                return false;
            }
            _ => sti::seq_after(sti::seq(tail), sti::seq(head)),
        };
        c.head.store(INVALID, Ordering::SeqCst);
        let why = if behind {
            match self.replay(h, head, tail) {
                Ok(()) => {
                    bump(&self.stats[tid].replays);
                    add(
                        &self.stats[tid].replayed_states,
                        sti::seq_dist(sti::seq(tail), sti::seq(head)),
                    );
                    c.head.store(tail, Ordering::SeqCst);
                    return true;
                }
                Err(why) => why,
            }
        } else {
            Unreplayable::Invalid
        };
        if self.copy_designated(h, cur, tail, tid) {
            let st = &self.stats[tid];
            bump(&st.copies);
            bump(match why {
                Unreplayable::Invalid => &st.copies_invalid,
                Unreplayable::Lapped => &st.copies_lapped,
                Unreplayable::Reused => &st.copies_reused,
                Unreplayable::Log => &st.copies_log,
            });
            c.head.store(tail, Ordering::SeqCst);
            return true;
        }
        false
    }

    /// Applies the redo logs of the states after `head` up to `tail`, in
    /// order, to the held replica. Fails (leaving the replica to be copied)
    /// if a state is missing from the ring or lapped, reused, or its log
    /// overflowed or was overwritten; the error says which.
    pub(super) fn replay(&self, h: &Held, head: u64, tail: u64) -> Result<(), Unreplayable> {
        let _t = breakdown::timer(Bucket::Apply);
        let n = sti::seq_dist(sti::seq(tail), sti::seq(head));
        if n > self.ring.len() as u64 {
            return Err(Unreplayable::Lapped);
        }
        let base = self.combs[h.idx].replica;
        let mut dirty = h.dirty.borrow_mut();
        for k in 1..=n {
            let s = sti::seq_add(sti::seq(head), k);
            let t = self.ring_slot(s).load(Ordering::SeqCst);
            if t == INVALID || (sti::seq(t) != s && !mutant!(RedoReplayWithoutValidity)) {
                return Err(Unreplayable::Lapped);
            }
            let Some(st) = self.state_of(t) else {
                return Err(Unreplayable::Reused);
            };
            if st.ticket.load(Ordering::SeqCst) != t && !mutant!(RedoReplayWithoutValidity) {
                return Err(Unreplayable::Reused);
            }
            let len = st.log_len.load(Ordering::Acquire);
            let start = st.log_start.load(Ordering::Acquire);
            let arena = &self.arenas[sti::tid(t)];
            if len == LOG_OVERFLOW || len > arena.cap() {
                return Err(Unreplayable::Log);
            }
            for p in start..start + len {
                let [off, _, new] = arena.read(p);
                if off % 8 != 0 || off >= self.replica_len {
                    return Err(Unreplayable::Log); // a lapped slot: garbage
                }
                word(&self.pool, base + off).store(new, Ordering::Relaxed);
                if dirty.at_capacity() {
                    // A long replay: write back what it has dirtied so far
                    // rather than let the set become one range over the
                    // replica (the lines written from here on are tracked
                    // again for L26).
                    dirty.flush(&self.pool);
                }
                dirty.add(base + off);
            }
            if mutant!(RedoReplayWithoutValidity) {
                continue;
            }
            // `still_holds` fences before both validating loads.
            let held_log = arena.still_holds(start, len);
            if st.ticket.load(Ordering::Relaxed) != t {
                return Err(Unreplayable::Reused);
            }
            if !held_log {
                return Err(Unreplayable::Log);
            }
        }
        Ok(())
    }

    /// The optimistic copy (§5): the designated replica, under a shared
    /// lock, into the held one. False if `cur_comb` has moved from `cur`.
    pub(super) fn copy_designated(&self, h: &Held, cur: u64, tail: u64, tid: usize) -> bool {
        let src = &self.combs[sti::idx(cur)];
        if !src.lock.shared_try_lock(tid) {
            return false;
        }
        // While `cur_comb` is still `cur`, `src` has been designated (and so
        // read-only) since `tail` was read; our shared hold keeps writers out
        // from now on even if `cur_comb` moves.
        let ok = cur == self.cur_comb().load(Ordering::SeqCst)
            && src.head.load(Ordering::SeqCst) == tail;
        if ok {
            // A damaged allocator in the source (a closure may store
            // anywhere in the region) must not stop progress: copy it all.
            let used = replica::used_len(&self.pool, src.replica, self.replica_len)
                .unwrap_or(self.replica_len);
            let dst = self.combs[h.idx].replica;
            self.copy_words(src.replica, dst, used, h);
        }
        src.lock.shared_unlock(tid);
        ok
    }

    /// {7}: runs every announced, unapplied request on the replica at pool
    /// offset `base`, recording applied sequence numbers and results in
    /// `new_st`. False if the attempt is doomed (a request was replaced
    /// under it, or `cur_comb` moved): the caller rolls back.
    pub(super) fn simulate(
        &self,
        tid: usize,
        base: u64,
        new_st: &State,
        writer: &Writer<'_>,
        cur: u64,
    ) -> bool {
        // loom only (see `apply_update`): the other half of the Dekker pair.
        #[cfg(perdure_loom)]
        fence(Ordering::SeqCst);
        for i in 0..self.n {
            let applied = new_st.applied[i].load(Ordering::Relaxed) & !PANICKED;
            if self.announce[i].load(Ordering::SeqCst) <= applied {
                continue;
            }
            let p = self.req[i].load(Ordering::SeqCst);
            if p.is_null() {
                return false;
            }
            self.hp[tid].store(p, Ordering::SeqCst);
            if self.req[i].load(Ordering::SeqCst) != p
                || cur != self.cur_comb().load(Ordering::SeqCst)
            {
                self.hp[tid].store(std::ptr::null_mut(), Ordering::Release);
                return false;
            }
            // SAFETY: `p` was in `req[i]` after our hazard pointer named it,
            // so its owner had not retired it then, and will not free it
            // while the hazard pointer stays (see `reclaim`).
            let req = unsafe { &*p };
            if req.seq > applied {
                let (res, panicked) = self.execute(req, base, writer);
                crate::trace_ev!(&self.pool, Apply(tid, i, req.seq));
                new_st.results[i].store(res, Ordering::Relaxed);
                new_st.applied[i].store(
                    req.seq | if panicked { PANICKED } else { 0 },
                    Ordering::Relaxed,
                );
                if i != tid {
                    bump(&self.stats[tid].helped);
                }
            }
            // Release, not SeqCst: clearing a hazard pointer orders only this
            // thread's reads of `*p` before it (a `reclaim` that sees the
            // null frees after them); no later load of this thread must wait
            // for it. A SeqCst store is an `xchg`, which would wait here for
            // the closure's stores to the replica to drain.
            self.hp[tid].store(std::ptr::null_mut(), Ordering::Release);
        }
        true
    }

    /// Calls a request's closure on the replica at pool offset `base`
    /// (L23), catching a panic; an update's stores are rolled back then.
    pub(super) fn execute(&self, req: &Request<B>, base: u64, writer: &Writer<'_>) -> (u64, bool) {
        let _t = breakdown::timer(Bucket::Lambda);
        let read = ReadTx::new(&self.pool, base, self.replica_len);
        match &req.job {
            Job::Update(f) => {
                let tx = Tx { read, w: writer };
                let mark = writer.begin_closure();
                let _in = front::enter(self.uid, Kind::Update, &tx);
                match catch_unwind(AssertUnwindSafe(|| f(&tx))) {
                    Ok(v) => (v, false),
                    Err(_) => {
                        writer.undo_to(&self.pool, base, mark);
                        (0, true)
                    }
                }
            }
            Job::Read(f) => {
                let _in = front::enter(self.uid, Kind::Read, &read);
                match catch_unwind(AssertUnwindSafe(|| f(&read))) {
                    Ok(v) => (v, false),
                    Err(_) => (0, true),
                }
            }
        }
    }

    /// L43–L50: the result of request `my_seq` of `tid` from the designated
    /// state (or, if its replica was already reused, the ring's), once that
    /// state is durable; `None` if the state read does not (yet) show the
    /// request applied.
    pub(super) fn collect(&self, tid: usize, my_seq: u64) -> Option<(u64, bool)> {
        let cur = self.cur_comb().load(Ordering::SeqCst);
        let mut t = self.combs[sti::idx(cur)].head.load(Ordering::SeqCst);
        if t == INVALID || sti::seq(t) != sti::seq(cur) {
            t = self.ring_slot(sti::seq(cur)).load(Ordering::SeqCst);
        }
        if t == INVALID || !sti::seq_at_least(sti::seq(t), sti::seq(cur)) {
            return None;
        }
        let st = self.state_of(t)?;
        if st.ticket.load(Ordering::SeqCst) != t {
            return None;
        }
        let applied = st.applied[tid].load(Ordering::Relaxed);
        let result = st.results[tid].load(Ordering::Relaxed);
        fence(Ordering::Acquire);
        if st.ticket.load(Ordering::Relaxed) != t || applied & !PANICKED < my_seq {
            return None;
        }
        self.ensure_durable(sti::seq(t));
        Some((result, applied & PANICKED != 0))
    }
}

//! Detectable insertion and deletion (seed 001, §4: Algorithm 3 LOAD,
//! INSERT, DELETE; Algorithm 4 LOADHELP).
//!
//! Cheaper than the general detectable CAS for the two updates most
//! pointer-based structures need: *insert* replaces a null pointer,
//! *delete* detaches a block. Their progress is checkpointed in the blocks
//! themselves, so they need no memento, and contention is spread over the
//! blocks instead of the location.
//!
//! * A **location** is a word with a *persist bit* (link-and-persist, David
//!   et al. 2018): invariant — if the bit is clear, the value is persisted.
//!   [`InsDelAtomic::load`] never returns an unpersisted value: it waits
//!   PATIENCE for the writer to clear the bit, then flushes and clears it
//!   itself (Algorithm 3, L1–L15).
//! * Every block has a **`repl`** word: thread id · value of the block that
//!   replaced it (0: not replaced). A delete *commits* when its CAS on the
//!   old block's `repl` (L34) persists; the location catches up later (L38,
//!   or any thread's LOADHELP).
//! * **INSERT** (L16–L26): CAS null → new with the persist bit; flush; clear
//!   the bit (a failure there means someone else persisted and cleared it).
//!   Recovery (L17–L19): the insert took effect iff the block is still in the
//!   structure (a traversal, `contains`) or its `repl` is set (it was
//!   inserted and since deleted); otherwise it reports a (spurious) failure
//!   and the caller retries normally.
//! * **DELETE** (L27–L40): CAS the old block's `repl` from null to (tid,
//!   new); `flushopt` it; CAS the location old → new; DEFERFLUSH the location
//!   and RETIRE the old block (§6.1: the location is flushed before the block
//!   can be freed). Recovery (L28–L31): the delete took effect iff `repl`
//!   names this thread.
//! * **LOADHELP** (Algorithm 4): a location whose block has been replaced
//!   (`repl` set) is helped forward after PATIENCE.
//!
//! Both operations need their inputs stable (the block inserted, the block
//! deleted and its replacement: checkpoint them). Each block can be
//! inserted once and deleted once; the structure must be traversable for
//! insert's recovery.
//!
//! Progress: lock-free. Costs: insert 2 CASes, 1 `pwb` (its `pfence` only
//! where a locked CAS does not complete write-backs); delete 2
//! CASes, 1 `pwb` (the `flushopt` of `repl` completes at the locked CAS of
//! L38; a `pfence` on backends whose RMWs are not fences), plus one deferred
//! `pwb` per critical section.
//!
//! Deviation: Algorithm 4's L4 decodes `old`; it means the loaded `repl`
//! word (`new`), which is what is decoded here.

use crate::compose::Memento;
use crate::patience::{self, Waited};
use crate::runtime::Handle;
use crate::word::{insdel_decode, insdel_encode, repl_decode, repl_encode};
use perdure_pm::sync::atomic::Ordering;
use perdure_pm::{Backend, Pool};

/// A persistent location supporting detectable insert and delete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InsDelAtomic {
    off: u64,
}

impl InsDelAtomic {
    /// The location at pool offset `off`.
    pub fn at(off: u64) -> InsDelAtomic {
        InsDelAtomic { off }
    }

    /// Its pool offset.
    pub fn offset(&self) -> u64 {
        self.off
    }

    /// Initialises the location (before publication; not detectable).
    pub fn init<B: Backend>(&self, pool: &Pool<B>, value: u64) {
        crate::runtime::pm_word(pool, self.off)
            .store(insdel_encode(false, value), Ordering::Release);
        pool.pwb(self.off, 8);
    }

    /// The raw value and persist bit (inspection, recovery-time traversal).
    pub fn peek<B: Backend>(&self, pool: &Pool<B>) -> (bool, u64) {
        insdel_decode(crate::runtime::pm_load(pool, self.off))
    }

    /// LOAD (Algorithm 3, L1–L15): a value that is persisted.
    pub fn load<B: Backend, M: Memento>(&self, h: &mut Handle<'_, '_, B, M>) -> u64 {
        let patience = h.runtime().patience();
        let mut old = h.load(self.off); // L2
        'l3: loop {
            let (p_old, o_old) = insdel_decode(old); // L3
            if !p_old {
                return o_old; // L4
            }
            let t = h.now(); // L5
            let clean = |w| {
                let (p_cur, o_cur) = insdel_decode(w); // L7: clean when not p
                (!p_cur).then_some(o_cur)
            };
            // L6–L10.
            match patience::wait(h, self.off, old, t, patience, clean) {
                Waited::Clean(v) => return v, // L8
                Waited::Changed(cur) => {
                    old = cur; // L9
                    continue 'l3;
                }
                Waited::Expired => {} // L10
            }
            h.flush(self.off, 8); // L11
            let cleared = insdel_encode(false, o_old); // L12
            match h.cas(self.off, old, cleared) {
                Ok(_) => return o_old, // L14
                Err(cur) => old = cur, // L13
            }
        }
    }

    /// INSERT (Algorithm 3, L16–L26): replaces null by `new`. `contains`
    /// tells, in recovery, whether a block is in the structure. `Err` holds
    /// the current (persisted) value.
    pub fn insert<B: Backend, M: Memento>(
        &self,
        new: u64,
        repl_of_new: u64,
        h: &mut Handle<'_, '_, B, M>,
        contains: impl FnOnce(&mut Handle<'_, '_, B, M>, u64) -> bool,
    ) -> Result<(), u64> {
        if h.rec() {
            // L17–L19.
            if contains(h, new) || h.load(repl_of_new) != 0 {
                return Ok(());
            }
            h.set_rec(false);
            return Err(self.load(h));
        }
        // L21–L23.
        if h.cas(self.off, 0, insdel_encode(true, new)).is_err() {
            return Err(self.load(h));
        }
        if mutant!(ClearBeforeFlushL25) {
            let _ = h.cas(
                self.off,
                insdel_encode(true, new),
                insdel_encode(false, new),
            );
            h.flush(self.off, 8);
            return Ok(());
        }
        // L24: flush loc. Only the persist bit's clearing (L25) must wait for
        // it, and on x86 the locked CAS does: pwb, and a pfence only where
        // RMWs do not complete write-backs.
        h.pwb(self.off, 8);
        h.fence_unless_rmw_fences();
        // L25: a failure means a LOAD or DELETE persisted and cleared it.
        let _ = h.cas(
            self.off,
            insdel_encode(true, new),
            insdel_encode(false, new),
        );
        Ok(())
    }

    /// DELETE (Algorithm 3, L27–L40): replaces `old` (whose `repl` word is at
    /// `repl_of_old`) by `new`, retiring `old`. `Err` holds a current value.
    pub fn delete<B: Backend, M: Memento>(
        &self,
        old: u64,
        new: u64,
        repl_of_old: u64,
        h: &mut Handle<'_, '_, B, M>,
    ) -> Result<u64, u64> {
        let tid = h.tid();
        if h.rec() {
            // L28–L31.
            let (tid_new, _) = repl_decode(h.load(repl_of_old));
            if tid != tid_new {
                h.set_rec(false);
                return Err(self.load_help(h, old, repl_of_old));
            }
        } else {
            // L33–L36.
            let new_r = repl_encode(tid, new);
            if h.cas(repl_of_old, 0, new_r).is_err() {
                return Err(self.load_help(h, old, repl_of_old));
            }
        }
        // L37: flushopt old.repl — completed by the locked CAS below on x86
        // (succeeding or not), by a pfence first elsewhere: the location must
        // not persist `new` before `repl` commits the delete, or a crash
        // would keep the effect without the record recovery looks for.
        h.pwb(repl_of_old, 8);
        h.fence_unless_rmw_fences();
        // L38.
        let _ = h.cas(
            self.off,
            insdel_encode(false, old),
            insdel_encode(false, new),
        );
        h.defer_flush(self.off);
        h.retire(old);
        Ok(old) // L39
    }

    /// LOADHELP (Algorithm 4): `old` was read from the location; if its block
    /// was replaced, help the location forward after PATIENCE. Returns a
    /// current value.
    pub fn load_help<B: Backend, M: Memento>(
        &self,
        h: &mut Handle<'_, '_, B, M>,
        old: u64,
        repl_of_old: u64,
    ) -> u64 {
        if old == 0 {
            return old; // L2
        }
        let (tid_new, o_new) = repl_decode(h.load(repl_of_old)); // L3–L4
        if tid_new == 0 {
            return old; // L5
        }
        let patience = h.runtime().patience();
        let t = h.now(); // L6
        loop {
            let cur = h.load(self.off); // L7
            let (_, o_cur) = insdel_decode(cur);
            if o_cur != old {
                return o_cur; // L8
            }
            if h.now() < t.saturating_add(patience) {
                perdure_pm::sync::spin_loop();
                continue; // L9
            }
            break;
        }
        // L10: flushopt old.repl, completed by the locked CAS of L11.
        h.pwb(repl_of_old, 8);
        h.fence_unless_rmw_fences();
        match h.cas(
            self.off,
            insdel_encode(false, old),
            insdel_encode(false, o_new),
        ) {
            Err(e) => insdel_decode(e).1, // L11
            Ok(_) => o_new,               // L12
        }
    }
}

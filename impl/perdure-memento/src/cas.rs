//! Detectable compare-and-swap in O(1) persistent space per location (seed
//! 001, §3: Algorithm 1 LOAD/CAS/CASMEMENTOCLEAR, Algorithm 2 LOADHELP).
//!
//! A location is one 64-bit word: parity · thread id · user tag · offset
//! ([`crate::word::CasWord`]); users see only tag and offset (54 bits). A
//! CAS memento is one word: parity · failure flag · timestamp
//! ([`crate::word::CasTs`]). Per thread, OWN\[tid\] (DRAM: parity and
//! timestamp of its last successful CAS), LOCAL\[tid\] (DRAM) and HELP\[2\]\[tid\]
//! (persistent: the largest timestamp of a help of tid's CASes, per parity).
//!
//! ## Normal execution (Algorithm 1, L5–L39)
//!
//! 1. read OWN (L6) and toggle its parity for this CAS (L8);
//! 2. first plain CAS: `old` → `new` annotated with the parity and tid (L26);
//! 3. on failure get a stable current value with LOADHELP; retry if it
//!    equals `old` (the failure was only an annotation), else checkpoint the
//!    failure in the memento, flush it, and return it (L27–L31);
//! 4. flush the location (L33): the first CAS is durable;
//! 5. checkpoint parity and a fresh timestamp in the memento, `flushopt`
//!    (L34–L35);
//! 6. OWN := that (L36);
//! 7. second plain CAS removing the annotation (L37–L38); it may fail (a
//!    helper did it). The memento's `flushopt` must complete before the
//!    un-annotated word can persist: on x86 the locked CAS completes it,
//!    succeeding or not; on backends whose RMWs do not
//!    ([`perdure_pm::Backend::rmw_completes_flushes`], e.g. `Msync`) a
//!    `pfence` goes before the CAS.
//!
//! ## Recovery (L9–L25), the seed's cases ①–⑨ of §3.3
//!
//! Lines 19–24 of the seed's Algorithm 1 are garbled in the published text;
//! this follows the prose of §3.3 (and the authors' Rust code):
//! memento older than LOCAL → not this CAS's, go to L21 (③); failure
//! checkpointed → return the failure again (④); a success checkpointed that
//! is not the thread's last CAS → OK (⑤); the thread's last CAS → redo the
//! second plain CAS (⑥); the location still holds this CAS's annotated value
//! → resume at step 4 (⑦); HELP\[¬p_own\]\[tid\] > t_own, the CAS was helped →
//! resume at step 5 (⑧); otherwise resume normal execution (⑨).
//!
//! ## Helping (Algorithm 2, §3.4)
//!
//! A load that sees an annotated value waits PATIENCE for its owner, then
//! flushes the location, raises HELP\[p\]\[tid\] to its own timestamp taken
//! *before* it loaded (CAS, then flush), and removes the annotation. The
//! invariant (§3.4): t_{n−1} < HELP\[p_n\]\[tid\] iff the n-th (or a later) CAS
//! of tid with parity p_n was helped — which is what recovery's ⑧ relies
//! on. It is model-checked in `specs/memento/DetectableCAS.tla` and proved
//! on the abstract model in `proofs/theories/Memento/DetCas.v`.
//!
//! Progress: lock-free (a CAS retries only when another CAS succeeded).
//! Costs per successful CAS without contention: 2 plain CASes, 3 `pwb`, 1
//! `pfence` (up to two more on backends whose RMWs are not fences): the third
//! `pwb` writes back the un-annotated word (after L38, see below).
//!
//! ## Precondition: no ABA on an annotated word
//!
//! The §3.4 invariant, and with it recovery's ⑧, assumes a helper holding
//! an annotated word `(p, tid, new)` never completes its help on a *later*
//! CAS of `tid` that wrote the same word. If `tid` could CAS the location
//! away from `new` and back to `new` with the same parity while a slow
//! helper still holds the first annotated word, the helper's L15 would
//! raise HELP\[p\]\[tid\] for the later CAS and recovery could report it
//! helped (`specs/memento/README.md`, mutant AbaDirtyWord). The seed does
//! not address this; perdure keeps the seed's algorithm and states the
//! precondition: **a thread never re-installs the same value with the same
//! parity while a helper may hold its earlier annotated word**. MSQ-mmt-cas
//! meets it: its locations only move forward to blocks never installed
//! there before (`next` goes from null to a fresh node once; `head` and
//! `tail` advance along the list, and reclamation keeps a block from being
//! reused while a pinned helper may hold it, §6). A Treiber stack's top,
//! untagged, would not: a thread that pushes B over A, pops B, pushes C and
//! pops C installs A twice with the same parity. The stacks here
//! ([`crate::ds::treiber`], [`crate::ds::elim`]) therefore carry a 9-bit
//! version in the top's user tag, so the same word returns only after a
//! multiple of 512 CASes on the top while one helper stays stalled — the
//! classic tag bound, not an exclusion (a wider version needs a wider word).
//! Users storing plain integers in a location should tag them likewise.
//!
//! Deviations, each explained where it is made: the location is written
//! back after the second plain CAS (L38; without it a full crash can bring
//! back an old annotated word whose help recovery's ⑧ misreads); the
//! failure checkpoint carries the current timestamp (as the authors' code
//! does) instead of `encodeTs(Fail, 0)` at L29, so LOCAL never moves
//! backwards; case ⑥ re-derives the annotation from the memento's parity;
//! OWN survives memento clearing through `own_floor` ([`crate::runtime`]);
//! recovery's L14 is strict (`>` LOCAL), and LOCAL starts at the root
//! operation's floor.

use crate::compose::Memento;
use crate::patience::{self, Waited};
use crate::runtime::Handle;
use crate::word::{CasTs, CasWord, CAS_VALUE_MASK};
use perdure_pm::sync::atomic::Ordering;
use perdure_pm::{Backend, Pool};

/// The memento of one detectable CAS: one word.
#[derive(Debug)]
pub struct CasMmt {
    off: u64,
}

impl CasMmt {
    /// CASMEMENTOCLEAR (L41–L44): reset to timestamp 0, `flushopt`. The
    /// runtime clears whole root mementos itself; this is for a composite
    /// that reuses a CAS memento within one operation.
    pub fn clear<B: Backend, M: Memento>(&mut self, h: &mut Handle<'_, '_, B, M>) {
        h.store(self.off, CasTs::CLEAR.encode());
        h.pwb(self.off, 8);
    }

    /// The checkpointed word (for inspection and tests).
    pub fn peek<B: Backend>(&self, pool: &Pool<B>) -> CasTs {
        CasTs::decode(crate::runtime::pm_load(pool, self.off))
    }
}

crate::compose::leaf_memento!(CasMmt, size: 8, align: 8, scan: |me, pool, scan| {
    scan.cas(me.peek(pool))
});

/// An atomic persistent location supporting detectable CAS: a pool offset
/// (8-aligned) holding a [`CasWord`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DetectableCasAtomic {
    off: u64,
}

impl DetectableCasAtomic {
    /// The location at pool offset `off`.
    pub fn at(off: u64) -> DetectableCasAtomic {
        DetectableCasAtomic { off }
    }

    /// Its pool offset.
    pub fn offset(&self) -> u64 {
        self.off
    }

    /// Initialises the location with a stable value (before it is
    /// published; not detectable).
    pub fn init<B: Backend>(&self, pool: &Pool<B>, value: u64) {
        crate::runtime::pm_word(pool, self.off)
            .store(CasWord::stable(value).encode(), Ordering::Release);
        pool.pwb(self.off, 8);
    }

    /// The raw word (for inspection and recovery-time validation).
    pub fn peek<B: Backend>(&self, pool: &Pool<B>) -> CasWord {
        CasWord::decode(crate::runtime::pm_load(pool, self.off))
    }

    /// LOAD (Algorithm 1, L1–L4): a stable value, helping a CAS in progress.
    pub fn load<B: Backend, M: Memento>(&self, h: &mut Handle<'_, '_, B, M>) -> u64 {
        let cur = h.load(self.off);
        self.load_help(h, cur)
    }

    /// Detectable CAS (Algorithm 1, L5–L40) of `old` to `new` (values of at
    /// most 54 bits; both must be stable across crashes — checkpointed or
    /// inputs of the root operation). `Err` holds a stable current value.
    pub fn cas<B: Backend, M: Memento>(
        &self,
        old: u64,
        new: u64,
        h: &mut Handle<'_, '_, B, M>,
        mmt: &mut CasMmt,
    ) -> Result<(), u64> {
        debug_assert!(old <= CAS_VALUE_MASK && new <= CAS_VALUE_MASK);
        let tid = h.tid();
        let rt = h.runtime();
        // L6–L8.
        let own = rt.own(tid);
        let p_new = !own.parity;
        let old_w = CasWord::stable(old).encode();
        let new_w = CasWord {
            parity: p_new,
            tid,
            value: new,
        }
        .encode();
        // L9–L25: recovery.
        enum Resume {
            FirstCas,
            FlushLoc,
            Checkpoint,
        }
        let mut resume = Resume::FirstCas;
        if h.rec() {
            let pt = h.load(mmt.off); // L10
            let m = CasTs::decode(pt); // L11
            let cur = h.load(self.off); // L12
            let t_local = h.local(); // L13
                                     // L14, strict: a memento is this CAS's only if newer than LOCAL (the seed's
                                     // `<` misreads a memento reused in a loop; proofs/theories/Memento/DetCas.v).
            if m.ts > t_local && (m.ts != 0 || m.fail) {
                // L15–L18 (④): the memento checkpointed a failure.
                if m.fail {
                    h.set_local(m.ts);
                    return Err(self.load_help(h, cur));
                }
                // L19 (⑤): a success that is not the thread's last CAS.
                if m.ts < own.ts {
                    h.set_local(m.ts);
                    return Ok(());
                }
                // L20 (⑥): the thread's last CAS; redo the second plain CAS.
                // The annotation is re-derived from the memento's parity (a
                // thread crash between L35 and L36 leaves OWN behind it).
                if m.ts > own.ts {
                    rt.set_own(tid, m);
                }
                // Re-flush the memento: a crashed thread's flushopt has no
                // ordering left (specs/memento, mutant AsWrittenL20).
                h.pwb(mmt.off, 8);
                let annotated = CasWord {
                    parity: m.parity,
                    tid,
                    value: new,
                }
                .encode();
                self.second_cas(h, annotated, new);
                h.set_local(m.ts);
                return Ok(());
            }
            // L21–L22 (⑦): our first plain CAS is still in the location.
            let c = CasWord::decode(cur);
            if c.tid == tid && c.value == new && c.parity == p_new {
                resume = Resume::FlushLoc;
            } else {
                // L23–L24 (⑧): helped since our last CAS.
                let t_help = h.load(rt.help_off(p_new, tid));
                if own.ts < t_help {
                    resume = Resume::Checkpoint;
                } else {
                    h.set_rec(false); // ⑨
                }
            }
        }
        if let Resume::FirstCas = resume {
            // L26–L32.
            loop {
                match h.cas(self.off, old_w, new_w) {
                    Ok(_) => break,
                    Err(cur) => {
                        let cur = self.load_help(h, cur); // L27
                        if cur == old {
                            continue; // L28
                        }
                        // L29–L31, with the current timestamp (see the module
                        // docs) so that LOCAL stays monotone.
                        let ts_fail = CasTs {
                            parity: false,
                            fail: true,
                            ts: h.now(),
                        };
                        h.store(mmt.off, ts_fail.encode());
                        h.flush(mmt.off, 8);
                        h.set_local(ts_fail.ts);
                        return Err(cur);
                    }
                }
            }
            resume = Resume::FlushLoc;
        }
        if let Resume::FlushLoc = resume {
            if !mutant!(NoFlushLocL33) {
                h.flush(self.off, 8); // L33
            }
        }
        // L34–L35.
        let ts_succ = CasTs {
            parity: p_new,
            fail: false,
            ts: h.now(),
        };
        h.store(mmt.off, ts_succ.encode());
        if !mutant!(NoFlushMementoL35) {
            h.pwb(mmt.off, 8);
        }
        // L36.
        rt.set_own(tid, ts_succ);
        // L37–L38.
        self.second_cas(h, new_w, new);
        // L39.
        h.set_local(ts_succ.ts);
        Ok(())
    }

    /// L37–L38: remove the annotation. The memento's `flushopt` (L35) must
    /// complete before the un-annotated word can persist — otherwise a crash
    /// could keep the CAS's effect without its memento and recovery would
    /// report a failure. On x86 the locked CAS itself completes it, succeeding
    /// or not; elsewhere a `pfence` goes first.
    ///
    /// Then, not in the seed: the un-annotated word (ours, or a helper's if
    /// our CAS failed) is written back, fenced before the thread's next
    /// write to the pool — on x86 the next locked RMW, its next CAS's L26,
    /// completes it for free. The seed never flushes it, so a full crash
    /// can bring back the annotated word of any earlier CAS of the thread.
    /// A LOADHELP after the crash then helps it and raises HELP\[p\]\[tid\] to
    /// a post-crash t_h, later than every pre-crash timestamp: §3.4's
    /// property (2), t_h < t_{n+1}, held only because this second plain CAS
    /// came before t_{n+1}, and the crash undid it. The next CAS of parity
    /// p recovered before its L26 then takes that help for its own at
    /// L23–L24 (⑧) and returns OK without taking effect (MSQ-mmt-cas lost an
    /// enqueue and kept a dequeued value: `tests/proptest_memento.rs`,
    /// `msq_mmt_cas_findings`; mutant `NoFlushLocL38`). With the write-back,
    /// only the thread's last CAS can leave its annotated word in a crash
    /// image: its root operation is then not committed (the commit is a
    /// write), and its recovery (⑥, ⑦ or ⑧) redoes this second plain CAS
    /// before the thread's next CAS, as the seed's argument needs.
    fn second_cas<B: Backend, M: Memento>(
        &self,
        h: &mut Handle<'_, '_, B, M>,
        annotated: u64,
        new: u64,
    ) {
        h.fence_unless_rmw_fences();
        let _ = h.cas(self.off, annotated, CasWord::stable(new).encode());
        if !mutant!(NoFlushLocL38) {
            h.pwb(self.off, 8);
            h.defer_fence();
        }
    }

    /// LOADHELP (Algorithm 2): from a loaded word `old`, a stable value,
    /// helping the second plain CAS of a CAS in progress after PATIENCE.
    pub fn load_help<B: Backend, M: Memento>(&self, h: &mut Handle<'_, '_, B, M>, old: u64) -> u64 {
        let patience = h.runtime().patience();
        let mut old = old;
        'l2: loop {
            let o = CasWord::decode(old); // L2
            if o.tid == 0 {
                return o.value; // L3
            }
            let t_cur = loop {
                let t_cur = h.now(); // L4 (rdtscp; lfence)
                let clean = |w| {
                    let c = CasWord::decode(w); // L6: clean when it names no thread
                    (c.tid == 0).then_some(c.value)
                };
                // L5–L9.
                match patience::wait(h, self.off, old, t_cur, patience, clean) {
                    Waited::Clean(v) => return v,      // L7
                    Waited::Changed(cur) => old = cur, // L8
                    Waited::Expired => break t_cur,    // L9
                }
            };
            let o = CasWord::decode(old);
            let help = h.runtime().help_off(o.parity, o.tid);
            let t_help = h.load(help); // L10
            if t_cur <= t_help {
                old = h.load(self.off); // L11
                continue 'l2;
            }
            // L12: flushopt loc, completed by the locked CAS of L13 on x86.
            h.pwb(self.off, 8);
            h.fence_unless_rmw_fences();
            if !mutant!(SkipHelpUpdate) {
                if h.cas(help, t_help, t_cur).is_err() {
                    old = h.load(self.off); // L13–L14
                    continue 'l2;
                }
                // L16: flushopt HELP, completed by the locked CAS of L18.
                h.pwb(help, 8);
                h.fence_unless_rmw_fences();
            }
            let stable = CasWord::stable(o.value).encode(); // L17
            match h.cas(self.off, old, stable) {
                Ok(_) => return o.value, // L21
                Err(cur) => {
                    old = cur; // L19
                    continue 'l2;
                }
            }
        }
    }
}

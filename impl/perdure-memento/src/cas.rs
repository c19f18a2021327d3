//! Detectable compare-and-swap in O(1) persistent space per location (seed
//! 001, §3: Algorithm 1 LOAD/CAS/CASMEMENTOCLEAR, Algorithm 2 LOADHELP).
//!
//! A location is the seed's 64-bit word — parity · thread id · user tag ·
//! offset ([`crate::word::CasWord`]) — plus, in the default two-word form, a
//! nonce word (below); users see only tag and offset (54 bits). A
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
//! `pwb` writes back the un-annotated word (after L38, see below). Both
//! forms below have the same counts (a 16-byte location is in one line).
//!
//! ## The two-word location: exactly once for any caller
//!
//! The §3.4 invariant, and with it recovery's ⑧, assumes that a helper
//! holding an annotated word never completes its help on a *later* CAS that
//! wrote the same word. With the seed's one-word location that happens: a
//! thread that CASes a location `0 → 1`, `1 → 0`, `0 → 1` writes the
//! annotated word `(p, tid, 1)` twice (same parity every other CAS); a
//! helper that read the first, took its timestamp t_h (L4) before the
//! thread's second CAS, and loads again (L5) after the third one's first
//! plain CAS sees "the same" word, raises HELP\[p\]\[tid\] to t_h < t_own and
//! cleans the third CAS's word; a crash of the thread before L33 then makes
//! recovery re-execute a CAS that took effect (`specs/memento/README.md`,
//! Finding 4, TLC config `mutants/AbaDirtyWord.cfg`; the same schedule forced
//! on this code: `tests/aba_memento.rs`). No check between two 8-byte loads
//! closes that window.
//!
//! [`DetectableCasAtomic`] (the default, [`TwoWord`]) is a 16-byte location
//! written with `cmpxchg16b` ([`perdure_pm::PmDword`]): the seed's word and
//! a nonce ([`CasPair`]). The first plain CAS (L26) writes the nonce t_own,
//! the timestamp of the thread's previous successful CAS, which L6 reads
//! from OWN anyway. A thread's CASes that make a first plain CAS have
//! distinct t_own (OWN moves to t_n at L36 before CAS n + 1 starts), so an
//! annotated pair never recurs; LOADHELP compares whole pairs (L5, L8, L18),
//! so a stalled helper can only ever help the CAS whose pair it read, and
//! §3.4's properties (1) and (2) hold as the seed argues them. Recovery
//! re-derives the pair where it needs it: ⑦ from OWN (which still holds
//! t_own until the memento records t_n), ⑥ from the location itself (OWN
//! may hold t_n by then; an annotated pair of `tid` there can only be this
//! CAS's, since every earlier CAS of `tid` removed its own before
//! returning and wrote that removal back before the thread's next write).
//! Model-checked as `Form = "twoWord"` of `specs/memento/DetectableCAS.tla`
//! (`DetectableCAS_TwoWord*.cfg`). **Contract: for any sequence of CASes
//! by any threads on any values, each CAS takes effect at most once, and
//! reports, before and after any number of thread and full crashes, `Ok`
//! iff it took effect.** The one assumption on the platform: a 16-byte
//! aligned `cmpxchg16b` persists atomically (it writes one cache line in one
//! locked instruction; Px86 persists a line's stores in order). The value is
//! 54 bits as in the seed (the nonce word has no room for values).
//!
//! [`UniqueCasAtomic`] ([`OneWord`]) keeps the seed's 8-byte location for
//! the structures that never reinstall a value: its constructor is an
//! `unsafe fn` whose `# Safety` states the precondition. MSQ-mmt-cas uses it
//! (its links go from null to a fresh node once; head and tail advance to
//! blocks never installed there before, and reclamation keeps a block from
//! being reused while a helper that read it is pinned, §6).
//!
//! One implementation serves both: the algorithm below is generic over the
//! sealed [`CasForm`] (how a location is loaded, compared and swapped).
//!
//! Deviations, each explained where it is made: the location is written
//! back after the second plain CAS (L38; without it a full crash can bring
//! back an old annotated word whose help recovery's ⑧ misreads); the
//! failure checkpoint carries the current timestamp (as the authors' code
//! does) instead of `encodeTs(Fail, 0)` at L29, so LOCAL never moves
//! backwards; case ⑥ re-derives the annotation from the memento's parity;
//! OWN survives memento clearing through `own_floor` ([`crate::runtime`]);
//! recovery's L14 is strict (`>` LOCAL), and LOCAL starts at the root
//! operation's floor; the two-word location (above).

use crate::compose::Memento;
use crate::patience::{self, Waited};
use crate::runtime::Handle;
use crate::word::{CasPair, CasTs, CasWord, CAS_VALUE_MASK};
use perdure_pm::sync::atomic::Ordering;
use perdure_pm::{Backend, Pool};
use std::marker::PhantomData;

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

mod sealed {
    use crate::compose::Memento;
    use crate::runtime::Handle;
    use crate::word::CasWord;
    use perdure_pm::{Backend, Pool};

    /// What the algorithm needs of a location's representation.
    pub trait Form: Copy + std::fmt::Debug + Eq + Send + Sync + 'static {
        /// The location's content (`u64` or `u128`).
        type Raw: Copy + Eq + std::fmt::Debug;
        /// Bytes of a location, and its alignment.
        const BYTES: u64;
        /// ENCODE: the §3.1 word, with `nonce` where the form has room.
        fn encode(w: CasWord, nonce: u64) -> Self::Raw;
        /// The §3.1 word of a content (the low 8 bytes).
        fn first(r: Self::Raw) -> u64;
        /// An atomic load of the whole location.
        fn load<B: Backend, M: Memento>(h: &Handle<'_, '_, B, M>, off: u64) -> Self::Raw;
        /// The whole location, given its first word `w0` just loaded: `w0`
        /// itself for one word, a fresh 16-byte load for two.
        fn widen<B: Backend, M: Memento>(h: &Handle<'_, '_, B, M>, off: u64, w0: u64) -> Self::Raw;
        /// A plain CASPLAIN of the whole location (a crash point).
        fn cas<B: Backend, M: Memento>(
            h: &mut Handle<'_, '_, B, M>,
            off: u64,
            current: Self::Raw,
            new: Self::Raw,
        ) -> Result<Self::Raw, Self::Raw>;
        /// Writes `r` before the location is published (not detectable).
        fn init<B: Backend>(pool: &Pool<B>, off: u64, r: Self::Raw);
    }
}

/// How a detectable-CAS location is laid out: [`TwoWord`] (the default,
/// exactly once for any caller) or [`OneWord`] (the seed's word, for
/// locations that never see a value installed twice). Sealed.
pub trait CasForm: sealed::Form {}

/// The 16-byte location: the seed's word and a nonce ([`CasPair`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TwoWord;

/// The seed's 8-byte location ([`CasWord`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OneWord;

impl CasForm for TwoWord {}
impl CasForm for OneWord {}

impl sealed::Form for OneWord {
    type Raw = u64;
    const BYTES: u64 = 8;
    fn encode(w: CasWord, _nonce: u64) -> u64 {
        w.encode()
    }
    fn first(r: u64) -> u64 {
        r
    }
    fn load<B: Backend, M: Memento>(h: &Handle<'_, '_, B, M>, off: u64) -> u64 {
        h.load(off)
    }
    fn widen<B: Backend, M: Memento>(_h: &Handle<'_, '_, B, M>, _off: u64, w0: u64) -> u64 {
        w0
    }
    fn cas<B: Backend, M: Memento>(
        h: &mut Handle<'_, '_, B, M>,
        off: u64,
        current: u64,
        new: u64,
    ) -> Result<u64, u64> {
        h.cas(off, current, new)
    }
    fn init<B: Backend>(pool: &Pool<B>, off: u64, r: u64) {
        crate::runtime::pm_word(pool, off).store(r, Ordering::Release);
    }
}

impl sealed::Form for TwoWord {
    type Raw = u128;
    const BYTES: u64 = 16;
    fn encode(w: CasWord, nonce: u64) -> u128 {
        let nonce = if w.tid == 0 { 0 } else { nonce };
        CasPair { word: w, nonce }.encode()
    }
    fn first(r: u128) -> u64 {
        r as u64
    }
    fn load<B: Backend, M: Memento>(h: &Handle<'_, '_, B, M>, off: u64) -> u128 {
        h.load16(off)
    }
    fn widen<B: Backend, M: Memento>(h: &Handle<'_, '_, B, M>, off: u64, _w0: u64) -> u128 {
        h.load16(off)
    }
    fn cas<B: Backend, M: Memento>(
        h: &mut Handle<'_, '_, B, M>,
        off: u64,
        current: u128,
        new: u128,
    ) -> Result<u128, u128> {
        h.cas16(off, current, new)
    }
    fn init<B: Backend>(pool: &Pool<B>, off: u64, r: u128) {
        // Unpublished: two plain stores; the caller's fence publishes both.
        crate::runtime::pm_word(pool, off).store(r as u64, Ordering::Release);
        crate::runtime::pm_word(pool, off + 8).store((r >> 64) as u64, Ordering::Release);
    }
}

/// An atomic persistent location supporting detectable CAS: a pool offset
/// holding a location of form `F` — by default the 16-byte [`TwoWord`]
/// location (16-aligned), exactly once for any caller (module docs).
#[derive(Debug, PartialEq, Eq)]
pub struct DetectableCasAtomic<F: CasForm = TwoWord> {
    off: u64,
    _form: PhantomData<F>,
}

impl<F: CasForm> Clone for DetectableCasAtomic<F> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<F: CasForm> Copy for DetectableCasAtomic<F> {}

/// The seed's one-word location, for structures that never install a value
/// twice ([`DetectableCasAtomic::at_unique`]).
pub type UniqueCasAtomic = DetectableCasAtomic<OneWord>;

impl DetectableCasAtomic<TwoWord> {
    /// The two-word location at pool offset `off` (16-aligned: a detectable
    /// operation on a misaligned location panics).
    pub fn at(off: u64) -> DetectableCasAtomic<TwoWord> {
        debug_assert!(off % 16 == 0, "a two-word location is 16-aligned");
        DetectableCasAtomic {
            off,
            _form: PhantomData,
        }
    }
}

impl DetectableCasAtomic<OneWord> {
    /// The seed's one-word location at pool offset `off` (8-aligned).
    ///
    /// # Safety
    ///
    /// Detectability (and with it the memory safety of a structure that
    /// frees what a CAS unlinked) rests on this precondition, which the
    /// two-word [`DetectableCasAtomic::at`] does not have: **no thread
    /// installs the same value on this location twice while a thread that
    /// read the location during the first installation may still be in the
    /// root operation in which it read it.** E.g. every value installed is a
    /// block allocated after every such reader started (fresh nodes freed
    /// only through the runtime's reclamation, §6), or each value is
    /// installed at most once in the pool's lifetime. Otherwise a stalled
    /// helper can complete its help on the later installation, and a crash
    /// makes recovery report a CAS that took effect as failed, or the
    /// reverse (module docs; `specs/memento/README.md`, Finding 4).
    pub unsafe fn at_unique(off: u64) -> UniqueCasAtomic {
        DetectableCasAtomic {
            off,
            _form: PhantomData,
        }
    }
}

impl<F: CasForm> DetectableCasAtomic<F> {
    /// Its pool offset.
    pub fn offset(&self) -> u64 {
        self.off
    }

    /// Bytes the location takes (8 or 16), also its alignment.
    pub const BYTES: u64 = F::BYTES;

    /// Initialises the location with a stable value (before it is
    /// published; not detectable).
    pub fn init<B: Backend>(&self, pool: &Pool<B>, value: u64) {
        F::init(pool, self.off, F::encode(CasWord::stable(value), 0));
        pool.pwb(self.off, F::BYTES);
    }

    /// The §3.1 word (for inspection and recovery-time validation).
    pub fn peek<B: Backend>(&self, pool: &Pool<B>) -> CasWord {
        CasWord::decode(crate::runtime::pm_load(pool, self.off))
    }

    /// LOAD (Algorithm 1, L1–L4): a stable value, helping a CAS in progress.
    /// The first word says whether the value is stable; only an annotated
    /// one costs a 16-byte load.
    pub fn load<B: Backend, M: Memento>(&self, h: &mut Handle<'_, '_, B, M>) -> u64 {
        let w0 = h.load(self.off);
        let c = CasWord::decode(w0);
        if c.tid == 0 {
            return c.value;
        }
        let cur = F::widen(h, self.off, w0);
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
        // L6–L8; the two-word form's nonce is t_own (module docs).
        let own = rt.own(tid);
        let p_new = !own.parity;
        let old_w = F::encode(CasWord::stable(old), 0);
        let annotation = |parity| CasWord {
            parity,
            tid,
            value: new,
        };
        let new_w = F::encode(annotation(p_new), own.ts);
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
            let cur = F::load(h, self.off); // L12
            let t_local = h.local(); // L13

            // L14, strict: a memento is this CAS's only if newer than LOCAL
            // (the seed's `<` takes a memento whose timestamp equals LOCAL,
            // proofs/theories/Memento/DetCas.v). A CAS memento used twice
            // with nothing checkpointed between is not exactly-once with
            // either comparison (the first CAS's replay takes the second's
            // checkpoint): loops put a φ checkpoint between uses
            // (Requirement 3; `perdure-memento/MUTANTS.md`, `cas.rs:195:21`).
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
                // The two-word nonce was t_{n-1}, which OWN may no longer
                // hold: an annotated pair of this thread in the location can
                // only be this CAS's, so it is taken from there (module docs).
                let word = annotation(m.parity).encode();
                let annotated = if F::first(cur) == word {
                    cur
                } else {
                    F::encode(annotation(m.parity), own.ts)
                };
                self.second_cas(h, annotated, new);
                h.set_local(m.ts);
                return Ok(());
            }
            // L21–L22 (⑦): our first plain CAS is still in the location
            // (two words: the nonce too, which OWN still holds).
            if cur == new_w {
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
                match F::cas(h, self.off, old_w, new_w) {
                    Ok(_) => break,
                    Err(cur) => {
                        let cur = self.load_help(h, cur); // L27
                        if cur == old {
                            continue; // L28
                        }
                        // L29–L31, with the current timestamp (see the module
                        // docs) so that LOCAL stays monotone, read right
                        // after the failed CAS as the specs order it. Not in
                        // the seed: if the memento holds the thread's last
                        // success, OWN is made durable in `own_floor` before
                        // the memento is overwritten
                        // (`Handle::keep_own_durable`).
                        let ts_fail = CasTs {
                            parity: false,
                            fail: true,
                            ts: h.now(),
                        };
                        h.keep_own_durable(CasTs::decode(h.load(mmt.off)));
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
                h.flush(self.off, F::BYTES); // L33
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
    /// enqueue and kept a dequeued value: `tests/suite/proptest_memento.rs`,
    /// `msq_mmt_cas_findings`; mutant `NoFlushLocL38`). With the write-back,
    /// only the thread's last CAS can leave its annotated word in a crash
    /// image: its root operation is then not committed (the commit is a
    /// write), and its recovery (⑥, ⑦ or ⑧) redoes this second plain CAS
    /// before the thread's next CAS, as the seed's argument needs.
    fn second_cas<B: Backend, M: Memento>(
        &self,
        h: &mut Handle<'_, '_, B, M>,
        annotated: F::Raw,
        new: u64,
    ) {
        h.fence_unless_rmw_fences();
        let _ = F::cas(h, self.off, annotated, F::encode(CasWord::stable(new), 0));
        if !mutant!(NoFlushLocL38) {
            h.pwb(self.off, F::BYTES);
            h.defer_fence();
        }
    }

    /// LOADHELP (Algorithm 2): from a loaded location `old`, a stable value,
    /// helping the second plain CAS of a CAS in progress after PATIENCE.
    /// In the two-word form every comparison is of whole pairs: the PATIENCE
    /// wait (L5–L9) watches the first word, and when it runs out one more
    /// 16-byte load must still find `old` (else L8: start again from it).
    fn load_help<B: Backend, M: Memento>(&self, h: &mut Handle<'_, '_, B, M>, old: F::Raw) -> u64 {
        let patience = h.runtime().patience();
        let mut old = old;
        'l2: loop {
            let o = CasWord::decode(F::first(old)); // L2
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
                match patience::wait(h, self.off, F::first(old), t_cur, patience, clean) {
                    Waited::Clean(v) => return v,                           // L7
                    Waited::Changed(w0) => old = F::widen(h, self.off, w0), // L8
                    Waited::Expired => {
                        // L5 of the whole location, after t_cur (two words).
                        let cur = F::widen(h, self.off, F::first(old));
                        if cur == old {
                            break t_cur; // L9
                        }
                        old = cur; // L8
                        if CasWord::decode(F::first(old)).tid == 0 {
                            continue 'l2; // L7
                        }
                    }
                }
            };
            let o = CasWord::decode(F::first(old));
            let help = h.runtime().help_off(o.parity, o.tid);
            let t_help = h.load(help); // L10
            if t_cur <= t_help {
                old = F::load(h, self.off); // L11
                continue 'l2;
            }
            // L12: flushopt loc, completed by the locked CAS of L13 on x86.
            h.pwb(self.off, F::BYTES);
            h.fence_unless_rmw_fences();
            if !mutant!(SkipHelpUpdate) {
                if h.cas(help, t_help, t_cur).is_err() {
                    old = F::load(h, self.off); // L13–L14
                    continue 'l2;
                }
                // L16: flushopt HELP, completed by the locked CAS of L18.
                h.pwb(help, 8);
                h.fence_unless_rmw_fences();
            }
            let stable = F::encode(CasWord::stable(o.value), 0); // L17
            match F::cas(h, self.off, old, stable) {
                Ok(_) => return o.value, // L21
                Err(cur) => {
                    old = cur; // L19
                    continue 'l2;
                }
            }
        }
    }
}

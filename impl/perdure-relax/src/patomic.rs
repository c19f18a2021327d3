//! Mirror's persistent atomic (thesis Chapter 4, Algorithm 4.1) and RELAX's
//! field recovery (Chapter 6, Algorithms 6.2–6.4).
//!
//! A persistent atomic is a 16-byte, 16-aligned `(value, sequence)` pair
//! held twice at the same offset: in NVMM (the pool; word 0 the value, word 1
//! the sequence) and in DRAM ([`crate::dram::Dram`]). Every write is a
//! double-width CAS on NVMM, then a write-back and a fence, then a
//! double-width CAS on DRAM; every read is a read of DRAM.
//!
//! Mirror's invariants (Chapter 7, Claim 2), which the tests check:
//!
//! 1. `NVMM.seq ∈ {DRAM.seq, DRAM.seq + 1}` once a field is recovered;
//! 2. NVMM is modified only when `NVMM.seq = DRAM.seq` (then the two
//!    replicas hold the same pair, up to a recovery mark on a pointer);
//! 3. a DRAM pair is never ahead of the *durable* NVMM: the NVMM line is
//!    written back and fenced before DRAM catches up with it. Loads read
//!    DRAM, so a load never returns a value a crash could lose.
//!
//! ## Four fixes of the seed's algorithms
//!
//! The TLA+ models of `specs/relax` find three places where the seed's
//! listings, as written, are wrong (two-thread counterexamples, 14–20
//! states), and check a fix for each (`specs/relax/README.md`, "Findings";
//! `proofs/theories/Relax/RecoverFieldPx.v`, on Px86's line-granular
//! persistence, proves Claim 2 and durability with the fixes of R1 and R2
//! and refutes each without). This module implements the fixed algorithms:
//!
//! - **M1** (Algorithm 4.1, L46–L47): when L40's DWCAS on NVMM fails, the
//!   CAS retries from the top (`continue`). As written, L47 helps with the
//!   DRAM pair read at L9–L11 and returns false; if DRAM moved on since (a
//!   write of the value the field already held), the help fails, DRAM still
//!   shows `expected`, and a load after the false return reads it: not
//!   linearizable.
//! - **R1** (Algorithm 6.2, before line 5; 6.3, before line 4): the NVMM
//!   line is written back and fenced before the DRAM DWCAS, as Mirror's own
//!   helping step does (L19–L20). As written, a redundant `recoverField`
//!   overlapping a Mirror write copies that write's pair to DRAM before it
//!   is durable; loads return it and a crash loses it.
//! - **R2** (Algorithm 6.2, after line 2; 6.3 likewise): the DRAM pair is
//!   read again and the call goes back to line 1 if it is no longer line 1's
//!   `(V_D, S_D)`. As written, a thread that read garbage just outside the
//!   window at line 1, then NVMM after another thread recovered the field
//!   and wrote it once, finds itself inside the window and its line 4.1
//!   moves NVMM's sequence after recovery (Mirror's first invariant breaks
//!   and the field is wedged).
//!
//! - **M2** (Algorithm 4.1, L44, with the recovery mark of Algorithm 6.3):
//!   when L44's DWCAS on DRAM fails because the mark was set or cleared
//!   since L9 (a late, redundant `recoverField` of the node re-marks the
//!   pointer, or a load unmarks it), DRAM is left at the old sequence while
//!   the CAS reports success; the next load reads the old pointer (the
//!   mark, if set, even sends it to recover the old referent) until some
//!   later write helps. An insert that returned true is then not seen by
//!   its own thread's remove. Found by the shuttle tests of the skip list
//!   and the BST after a crash (`tests/shuttle_sets.rs`); fixed by retrying
//!   L44 from DRAM's current pair while it is still the same pointer at the
//!   old sequence (`finish_dram_half`). Pure Mirror has no mark, and the
//!   TLA+ models none, so neither can show it.
//!
//! Each has a mutant putting the listing back as written
//! (`src/mutant.rs`, feature `mutants`: `Line47AsWritten`,
//! `RecoverNoFlush`, `RecoverNoReread`), and a deterministic schedule in
//! `tests/mutants_relax.rs` that reproduces the TLA+ counterexample and
//! catches it.
//!
//! ## Algorithm 4.1 (`compare_exchange_strong`), line by line
//!
//! `Space::mirror_cas` follows the listing: L5–L7 read NVMM (sequence,
//! value, sequence again), L9–L11 read DRAM the same way, L14 retry if
//! either read was torn, L18–L24 help a write whose NVMM half is done
//! (flush, fence, DRAM DWCAS, retry), L27 retry unless the sequences agree,
//! L30–L33 fail if NVMM holds another value, L37–L40 NVMM DWCAS to
//! `(new, seq + 1)`, L41–L42 flush and fence, L44 DWCAS DRAM on success,
//! L46–L47 on failure retry (fix M1).
//!
//! One deliberate difference: the DRAM DWCAS of L44 expects the pair *read
//! from DRAM* at L9–L11, where the listing writes `before` (read from NVMM).
//! They are the same pair in Mirror (L27 made the sequences equal and equal
//! sequences carry equal values); under RELAX the DRAM value of a pointer
//! may additionally carry the recovery mark (Algorithm 6.3), and expecting
//! NVMM's unmarked value would make every first write after recovery fail
//! its DRAM half and leave the update to a helper. (The Mirror model of
//! `specs/relax` has no mark, so there the two readings coincide.)
//!
//! ## Algorithms 6.2 and 6.3 (`recoverField`)
//!
//! [`Space::recover_field`] and [`Space::recover_field_ptr`] follow the
//! listings with fixes R2 and R1 (the pointer variant drops line 3 and
//! writes `mark(V_NV)` at its line 4, which is 6.2's line 5): line 1 reads
//! DRAM, line 2 NVMM, line 3 returns on equal pairs, then the DRAM re-read
//! (R2, goto 1 if it changed), the **sequence window** of line 4, the
//! write-back and fence of the NVMM line (R1), and line 5's DWCAS (goto 1 if
//! it fails). The window: if the garbage DRAM sequence `S_D` is at most
//! 2^63 updates ahead of `S_NV`, NVMM's sequence is moved to `S_D + 1` (an
//! 8-byte CAS on NVMM's sequence word), so that no later write can bring
//! NVMM back to the garbage pair and let a delayed recoverer's DRAM DWCAS
//! succeed (Figure 6.2). R1's write-back comes after line 4.1 and so also
//! makes the moved sequence durable, as in the checked model (step `R43`
//! of `RelaxRecoverField.tla`).
//!
//! Before these fixes this module wrote back and fenced only when the NVMM
//! pair was exactly one write ahead of DRAM (`S_NV = S_D + 1`), an addition
//! of ours aimed at R1's situation. It is replaced by the checked fix: the
//! write-back and fence run before every line-5 DWCAS, i.e. on every call
//! that copies (about once per field per crash, more under the cascade of
//! §6.4.3); a call that returns at line 3 pays nothing.
//!
//! [`Tracking::PseudoBitset`] skips line 4: with zeroed DRAM an unrecovered
//! DRAM sequence is 0 and every NVMM sequence has its MSB set, so no later
//! write can recreate the DRAM pair.
//!
//! ## Algorithm 6.4 (`load` of a markable pointer)
//!
//! `Space::load_ptr` ([`PAtomicPtr::load`]): read DRAM; if the recovery mark (bit 2) is set,
//! recover the referent with its [`Node::recover_node`] (for `Hybrid`, only
//! if the bitset says it is not recovered; for `ZMarkable`, only if its last
//! field's DRAM sequence is 0), then DWCAS the mark away (same sequence) and
//! return the unmarked pointer; retry from line 1 if the DWCAS fails.
//!
//! Progress: every operation is lock-free, as in Mirror: a retry happens
//! only when another thread's write (or recovery) changed the field.

use crate::dram::{pack, unpack, Replica};
use crate::error::RelaxError;
use crate::node::{FieldKind, Node};
use crate::space::{Space, Tracking, SEQ_MSB};
use crate::sync::atomic::Ordering;
use perdure_pm::Backend;
use std::marker::PhantomData;

/// The recovery mark: the third least significant bit of a pointer (§6.4.2;
/// bits 0 and 1 are left to the structures, e.g. Harris's deletion mark).
pub const RECOVERY_MARK: u64 = 0b100;
/// The low bits of a pointer that are not address (nodes are 16-aligned).
pub const LOW_BITS: u64 = 0b1111;

/// How one attempt of `recover_field` up to its line 5 ended.
#[derive(Clone, Copy)]
enum Attempt {
    /// Line 3: the replicas are equal; nothing to do.
    Equal,
    /// Goto 1 (line 4.1's CAS failed, or DRAM changed since line 1).
    Retry,
    /// Line 5 is next: DWCAS DRAM from the first pair to the second.
    Copy(Replica, Replica),
}

/// Fields of one node whose write-backs share a fence in
/// [`Space::recover_fields`].
pub const RECOVER_BATCH: usize = 64;

/// How many times a field operation retries before it declares the field
/// divergent (only a tracking bug or a corrupt pool can make the two
/// replicas disagree that long; correct contention resolves in a few).
const PATIENCE: u64 = 1 << 26;

/// Mirror's `patomic<u64>`: a data field (§6.2: "other non-pointer atomic
/// fields use the type `patomic`"). A copyable offset; operations take the
/// space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PAtomic {
    off: u64,
}

/// A persistent pointer field to a node of type `N`: RELAX's
/// `MarkablePatomicPointer<N>` (and its hybrid and zeroed-DRAM siblings,
/// chosen by the space's [`Tracking`]). The value is a pool offset (0 =
/// null) whose bits 0–1 the structure may use.
pub struct PAtomicPtr<N: Node> {
    off: u64,
    _n: PhantomData<fn() -> N>,
}

impl<N: Node> Clone for PAtomicPtr<N> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<N: Node> Copy for PAtomicPtr<N> {}
impl<N: Node> std::fmt::Debug for PAtomicPtr<N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PAtomicPtr({:#x})", self.off)
    }
}

impl PAtomic {
    /// The field at pool offset `off` (16-aligned; checked at each access).
    pub fn at(off: u64) -> Self {
        PAtomic { off }
    }

    /// The field's offset.
    pub fn offset(self) -> u64 {
        self.off
    }

    /// Atomic load (from DRAM, after recovery if tracking says so).
    pub fn load<B: Backend>(self, s: &Space<'_, B>) -> Result<u64, RelaxError> {
        let v = self.tracked_val(s)?;
        trace_ev!(self.off, "LD", val = v);
        Ok(v)
    }

    /// DRAM's value of the field, after the tracking step of the variant
    /// (recovering the field first if it says so).
    fn tracked_val<B: Backend>(self, s: &Space<'_, B>) -> Result<u64, RelaxError> {
        s.track_field(self.off)?;
        Ok(s.dram.val(self.off))
    }

    /// Mirror's `compare_exchange_strong`: `Ok(expected)` if the field held
    /// `expected` and now holds `new`, else `Err(current)`.
    pub fn compare_exchange<B: Backend>(
        self,
        s: &Space<'_, B>,
        expected: u64,
        new: u64,
    ) -> Result<Result<u64, u64>, RelaxError> {
        s.track_field(self.off)?;
        s.mirror_cas(self.off, expected, new)
    }

    /// Atomic store (a CAS loop, as Mirror's `store`).
    pub fn store<B: Backend>(self, s: &Space<'_, B>, v: u64) -> Result<(), RelaxError> {
        s.cas_loop(self.off, self.expected(s)?, |_| v).map(|_| ())
    }

    /// The CAS loop's first `expected` (a tracked load of DRAM's value).
    fn expected<B: Backend>(self, s: &Space<'_, B>) -> Result<u64, RelaxError> {
        let v = self.tracked_val(s)?;
        trace_ev!(self.off, "S0", val = v);
        Ok(v)
    }

    /// Atomic add, wrapping; returns the previous value (a CAS loop, as
    /// Mirror's `fetch_add`).
    pub fn fetch_add<B: Backend>(self, s: &Space<'_, B>, d: u64) -> Result<u64, RelaxError> {
        s.cas_loop(self.off, self.expected(s)?, |c| c.wrapping_add(d))
    }
}

impl<N: Node> PAtomicPtr<N> {
    /// The pointer field at pool offset `off`.
    pub fn at(off: u64) -> Self {
        PAtomicPtr {
            off,
            _n: PhantomData,
        }
    }

    /// The field's offset.
    pub fn offset(self) -> u64 {
        self.off
    }

    /// Load: the referent is recovered before the pointer is returned
    /// (Algorithm 6.4 under the markable variants).
    pub fn load<B: Backend>(self, s: &Space<'_, B>) -> Result<u64, RelaxError> {
        s.load_ptr::<N>(self.off)
    }

    /// Mirror CAS on the pointer. `expected` must be unmarked for recovery
    /// (as every loaded pointer is). On failure the current value is
    /// re-loaded (so its referent is recovered and it may be followed).
    pub fn compare_exchange<B: Backend>(
        self,
        s: &Space<'_, B>,
        expected: u64,
        new: u64,
    ) -> Result<Result<u64, u64>, RelaxError> {
        match PAtomic::at(self.off).compare_exchange(s, expected, new)? {
            Ok(v) => Ok(Ok(v)),
            Err(_) => Ok(Err(self.load(s)?)),
        }
    }

    /// Atomic store.
    pub fn store<B: Backend>(self, s: &Space<'_, B>, v: u64) -> Result<(), RelaxError> {
        s.cas_loop(self.off, self.load(s)?, |_| v).map(|_| ())
    }
}

impl<B: Backend> Space<'_, B> {
    /// The sequence a fresh field starts with: 1 (never 0, so that zeroed
    /// DRAM is told apart, §6.4.4), with the MSB in an MSB-sequence space.
    pub(crate) fn seq_init(&self) -> u64 {
        if self.msb_seq {
            SEQ_MSB | 1
        } else {
            1
        }
    }

    /// The sequence after `s`: +1, in the low 63 bits with the MSB kept in
    /// an MSB-sequence space (§6.4.5).
    #[inline]
    pub(crate) fn next_seq(&self, s: u64) -> u64 {
        if self.msb_seq {
            (s & SEQ_MSB) | (s.wrapping_add(1) & !SEQ_MSB)
        } else {
            s.wrapping_add(1)
        }
    }

    /// Mirror's `store` and `fetch_add` (Chapter 4: "As store and fetch_add
    /// may never fail, they keep calling the CAS operation until they
    /// succeed"): CAS from `cur` to `f(cur)` until it succeeds; returns the
    /// value replaced.
    fn cas_loop(&self, off: u64, mut cur: u64, f: impl Fn(u64) -> u64) -> Result<u64, RelaxError> {
        loop {
            match self.mirror_cas(off, cur, f(cur))? {
                Ok(_) => return Ok(cur),
                Err(now) => cur = now,
            }
        }
    }

    fn check_field(&self, off: u64) -> Result<(), RelaxError> {
        self.pool.check_range(off, 16, 16)?;
        Ok(())
    }

    /// A consistent `(value, sequence)` of the NVMM replica: sequence,
    /// value, sequence again (Algorithm 4.1, L5–L7), retried until torn-free.
    ///
    /// Where the pool's 16-byte CAS is emulated (not one event to 8-byte
    /// loads: `perdure_pm::dword::is_native`), three 8-byte loads can see a
    /// CAS's new value with its old sequence between its two stores — a torn
    /// pair the re-read of the sequence does not catch (GenMC,
    /// `modelcheck/genmc/relax_read_nvmm.c`): there the pair is read with a
    /// 16-byte CAS-load instead.
    fn read_nvmm(&self, off: u64) -> Result<(u64, u64), RelaxError> {
        if !self.pool.dword_cas_atomic_with_words() {
            let w = self.pool.dword(off)?.load();
            return Ok((w as u64, (w >> 64) as u64));
        }
        let val = self.pool.word(off)?;
        let seq = self.pool.word(off + 8)?;
        loop {
            let s = seq.load(Ordering::SeqCst);
            let v = val.load(Ordering::SeqCst);
            if seq.load(Ordering::SeqCst) == s {
                return Ok((v, s));
            }
            crate::sync::spin_loop();
        }
    }

    /// The (value, sequence) pairs of both replicas of the field at `off`,
    /// read one after the other (a test's view; exact only when quiescent).
    pub fn replicas(&self, off: u64) -> Result<(Replica, Replica), RelaxError> {
        self.check_field(off)?;
        Ok((self.read_nvmm(off)?, self.dram.read_pair(off)))
    }

    /// Makes sure the field at `off` is recovered before it is accessed,
    /// for the variants that track fields (§6.4.1, §6.4.5); the pointer
    /// variants track nodes instead (see [`Space::load_ptr`]).
    #[inline]
    pub(crate) fn track_field(&self, off: u64) -> Result<(), RelaxError> {
        self.check_field(off)?;
        let needed = match self.tracking {
            Tracking::Bitset => self.bitset.as_ref().is_some_and(|b| !b.test(off)),
            Tracking::PseudoBitset => self.dram.seq(off) & SEQ_MSB == 0,
            _ => false,
        };
        // The operation's invocation, at the moment tracking decides.
        trace_ev!(off, "Invoke", recover = needed);
        if needed {
            self.recover_tracked(Tracking::Bitset, off, || self.recover_field(off))?;
        }
        Ok(())
    }

    /// Runs `recover` for the field or node at `slot`, then, if the space
    /// tracks with a bitset under `variant` (BitsetAtomic for fields,
    /// HybridAtomicPointer for nodes), sets its bit: Claim 1, the bit is set
    /// only once the recovery returned (the mutant `TrackBeforeRecover` sets
    /// it before).
    fn recover_tracked(
        &self,
        variant: Tracking,
        slot: u64,
        recover: impl FnOnce() -> Result<(), RelaxError>,
    ) -> Result<(), RelaxError> {
        let bitset = self.bitset.as_ref().filter(|_| self.tracking == variant);
        let early = mutant!(TrackBeforeRecover);
        if let (true, Some(b)) = (early, bitset) {
            b.set(slot);
        }
        pause!(TrackBeforeRecover);
        recover()?;
        if let (false, Some(b)) = (early, bitset) {
            b.set(slot);
        }
        Ok(())
    }

    /// Algorithm 4.1, Mirror's `compare_exchange_strong` (see the module
    /// docs for the line mapping).
    pub(crate) fn mirror_cas(
        &self,
        off: u64,
        expected: u64,
        new: u64,
    ) -> Result<Result<u64, u64>, RelaxError> {
        let nvmm = self.pool.dword(off)?;
        let mut tries = 0u64;
        loop {
            tries += 1;
            // L5–L7 and L9–L11 (each retried internally until untorn: L14).
            let (pv, ps) = self.read_nvmm(off)?;
            trace_ev!(off, "L5", v = pv, s = ps);
            let (vv, vs) = self.dram.read_pair(off);
            trace_ev!(off, "L9", v = vv, s = vs);
            if tries > PATIENCE {
                return Err(RelaxError::Diverged {
                    off,
                    nvmm_seq: ps,
                    dram_seq: vs,
                });
            }
            // L18–L24: help the write whose NVMM half is done.
            if ps == self.next_seq(vs) && ps != vs {
                self.pool.pwb(off, 16);
                self.pool.pfence();
                let _helped = self.dram.dwcas(off, (vv, vs), (pv, ps));
                trace_ev!(off, "L24", ok = _helped);
                continue;
            }
            // L27.
            if ps != vs {
                crate::sync::spin_loop();
                continue;
            }
            // L30–L33.
            if pv != expected {
                return Ok(Err(pv));
            }
            pause!(CasBeforeNvmmDwcas);
            // L37–L40.
            let after = (new, self.next_seq(ps));
            let res = nvmm.compare_exchange(pack((pv, ps)), pack(after));
            trace_ev!(off, "L40", ok = res.is_ok());
            if res.is_ok() {
                pause!(CasAfterNvmmDwcas);
            }
            // L41–L42.
            if !mutant!(NoFlushBeforeDram) {
                self.pool.pwb(off, 16);
                self.pool.pfence();
            }
            // No hook here: the trace producer derives L41–L42 (and L20–L21,
            // R1's write-back and fence) from the simulator's own pwb and
            // pfence events, so a mutant that skips them leaves no step.
            match res {
                // L44.
                Ok(_) => {
                    let done = self.dram.dwcas(off, (vv, vs), after);
                    trace_ev!(off, "L43", ok = done);
                    if !done && !mutant!(Line44Once) {
                        self.finish_dram_half(off, (vv, vs), after);
                    }
                    return Ok(Ok(expected));
                }
                Err(actual) if mutant!(Line47AsWritten) => {
                    // L46–L47 as the seed writes them (Finding M1).
                    let (av, aseq) = unpack(actual);
                    if av == expected {
                        continue;
                    }
                    self.dram.dwcas(off, (vv, vs), (av, aseq));
                    return Ok(Err(av));
                }
                // L46–L47 with the fix of Finding M1: retry from the top.
                // The next round helps the write that beat us through
                // L18–L24 (write-back, fence, DRAM DWCAS) or fails at L30
                // on a pair that readers already see.
                Err(_) => {
                    trace_ev!(off, "L43", ok = false);
                    continue;
                }
            }
        }
    }

    /// Fix M2 (see the module docs): L44's DWCAS failed, yet DRAM may still
    /// be at the sequence L9 read, the same pointer with the recovery mark
    /// set or cleared since (a late `recoverField` of Algorithm 6.3 marked
    /// it, or a load of Algorithm 6.4 unmarked it). NVMM is already at
    /// `after`, and no write can touch NVMM until DRAM catches up, so the
    /// DWCAS is retried from DRAM's current pair as long as it is that same
    /// pointer at the old sequence. Stops once a helper (L18–L24, or line 5
    /// of a recoverer) has copied `after`, or DRAM shows anything else.
    fn finish_dram_half(&self, off: u64, before: Replica, after: Replica) {
        loop {
            let now = self.dram.read_pair(off);
            if now.1 != before.1 || now.0 & !RECOVERY_MARK != before.0 & !RECOVERY_MARK {
                return;
            }
            let done = self.dram.dwcas(off, now, after);
            // Never on a data field (only pointers carry the mark), so the
            // traces of `trace_relax.rs` never show it.
            trace_ev!(off, "L44m", ok = done);
            if done {
                return;
            }
        }
    }

    /// Whether the sequence window of Algorithm 6.2, line 4 applies:
    /// `0 < (S_D − S_NV) mod 2^64 ≤ 2^63`.
    #[inline]
    fn in_window(sd: u64, snv: u64) -> bool {
        let d = sd.wrapping_sub(snv);
        d != 0 && d <= SEQ_MSB
    }

    /// One attempt of Algorithms 6.2/6.3 up to line 5, with the fixes of
    /// Findings R2 and R1 (see the module docs): line 1, line 2, line 3 (if
    /// `line3`, i.e. for Algorithm 6.2), the DRAM re-read of R2, lines
    /// 4–4.2, the write-back and fence of R1.
    fn recover_attempt(&self, off: u64, line3: bool, flush: bool) -> Result<Attempt, RelaxError> {
        let d = self.dram.read_pair(off); // L1
        trace_ev!(off, "R1", v = d.0, s = d.1);
        pause!(RecoverAfterLine1);
        let (vnv, mut snv) = self.read_nvmm(off)?; // L2
        trace_ev!(off, "R2", v = vnv, s = snv);
        if line3 && (vnv, snv) == d {
            return Ok(Attempt::Equal); // L3
        }
        // Finding R2: DRAM still holds line 1's pair, or goto 1. Then both
        // pairs were in memory together at line 2.
        if !mutant!(RecoverNoReread) {
            let same = self.dram.read_pair(off) == d;
            trace_ev!(off, "R22", same = same);
            if !same {
                return Ok(Attempt::Retry);
            }
        } else {
            // The mutant claims the re-read found DRAM unchanged.
            trace_ev!(off, "R22", same = true);
        }
        let (_, sd) = d;
        let window = self.tracking != Tracking::PseudoBitset && !mutant!(NoSeqWindow);
        if window && Self::in_window(sd, snv) {
            // L4.1: move NVMM's sequence beyond the garbage one. Where the
            // 16-byte CAS is emulated, an 8-byte CAS of the sequence can slip
            // between a concurrent 16-byte CAS's two stores and be lost (the
            // race of `read_nvmm`'s torn pair, on a write): there L4.1 is a
            // 16-byte CAS of the pair read at line 1 (every write moves the
            // sequence, so the pair is unchanged iff the sequence is).
            let bumped = if self.pool.dword_cas_atomic_with_words() {
                self.pool
                    .word(off + 8)?
                    .compare_exchange(snv, sd.wrapping_add(1), Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
            } else {
                let pair = |v: u64, s: u64| u128::from(v) | u128::from(s) << 64;
                self.pool
                    .dword(off)?
                    .compare_exchange(pair(vnv, snv), pair(vnv, sd.wrapping_add(1)))
                    .is_ok()
            };
            trace_ev!(off, "R41", ok = bumped);
            if !bumped {
                return Ok(Attempt::Retry); // goto 1
            }
            snv = sd.wrapping_add(1); // L4.2
        }
        if !flush {
            // `recover_fields` writes the batch back with one fence.
            return Ok(Attempt::Copy(d, (vnv, snv)));
        }
        pause!(RecoverBeforeLine5);
        // Finding R1: the pair line 5 publishes is durable first.
        if !mutant!(RecoverNoFlush) {
            self.pool.pwb(off, 16);
            self.pool.pfence();
        }
        Ok(Attempt::Copy(d, (vnv, snv)))
    }

    /// Algorithm 6.2, `RecoverField`, for a data field, with the fixes of
    /// Findings R1 and R2 (see the module docs).
    pub fn recover_field(&self, off: u64) -> Result<(), RelaxError> {
        self.check_field(off)?;
        for _ in 0..PATIENCE {
            match self.recover_attempt(off, true, true)? {
                Attempt::Equal => return Ok(()), // L3
                Attempt::Retry => continue,      // goto 1
                Attempt::Copy(d, nv) => {
                    let copied = self.dram.dwcas(off, d, nv);
                    trace_ev!(off, "R5", ok = copied);
                    if copied {
                        return Ok(()); // L5
                    }
                }
            }
        }
        self.diverged(off)
    }

    /// Algorithm 6.3, `RecoverField` for a pointer to an `N`: as 6.2 without
    /// line 3, copying `mark(V_NV)` (null is not marked; under `ZMarkable` a
    /// referent already recovered is not marked either, §6.4.4). The fixes
    /// of Findings R1 and R2 apply as in 6.2 (its lines 1–3.2 are 6.2's lines
    /// 1–4.2).
    pub fn recover_field_ptr<N: Node>(&self, off: u64) -> Result<(), RelaxError> {
        self.check_field(off)?;
        for _ in 0..PATIENCE {
            let (d, (vnv, snv)) = match self.recover_attempt(off, false, true)? {
                Attempt::Copy(d, nv) => (d, nv),
                Attempt::Equal | Attempt::Retry => continue,
            };
            let v = self.marked::<N>(vnv)?;
            let copied = self.dram.dwcas(off, d, (v, snv));
            trace_ev!(off, "R5", ok = copied);
            if copied {
                return Ok(()); // L4
            }
        }
        self.diverged(off)
    }

    /// Algorithm 6.3, line 4's `mark(V_NV)`: null is not marked; under
    /// `ZMarkable` a referent already recovered is not marked either
    /// (§6.4.4).
    fn marked<N: Node>(&self, vnv: u64) -> Result<u64, RelaxError> {
        let target = vnv & !LOW_BITS;
        let mark = target != 0
            && !mutant!(NoRecoveryMark)
            && (self.tracking != Tracking::ZMarkable || !self.node_recovered_z::<N>(target)?);
        Ok(if mark { vnv | RECOVERY_MARK } else { vnv })
    }

    /// `recoverNode`'s loop (§6.4.2) over the `n` fields of the `N` at
    /// `node`, in order, with the write-backs of Finding R1 batched: for up
    /// to `RECOVER_BATCH` fields at a time, lines 1–4.2 of Algorithm
    /// 6.2/6.3 run for each field, then every field about to be copied is
    /// written back and **one** fence covers them all, then line 5's DRAM
    /// DWCASes run in field order. Each field still has its own NVMM pair
    /// durable before its DRAM DWCAS (R1), read after its DRAM pair (R2);
    /// the batch only delays a field's line 5, as a stalled thread would
    /// (the seed's stall bound is in writes to the field, not in time).
    /// A field whose attempt must go back to line 1 (or whose DWCAS fails)
    /// is finished by the one-field algorithm before the next field's line
    /// 5, so fields complete in order, as `ZMarkable` needs.
    ///
    /// A node of `k` fields costs one `pfence` per batch instead of `k`
    /// (the bucket array of a hash table, 4095 pointers, was 4095 fences
    /// on the first operation after a restart).
    pub fn recover_fields<N: Node>(&self, node: u64, n: usize) -> Result<(), RelaxError> {
        let mut start = 0;
        while start < n {
            let end = (start + RECOVER_BATCH).min(n);
            let mut plan = [Attempt::Equal; RECOVER_BATCH];
            for i in start..end {
                let f = node + 16 * i as u64;
                self.check_field(f)?;
                let line3 = N::field_kind(i) == FieldKind::Value;
                plan[i - start] = self.recover_attempt(f, line3, false)?;
            }
            let mut any = false;
            for (k, a) in plan.iter().enumerate().take(end - start) {
                if let Attempt::Copy(..) = a {
                    any = true;
                    if !mutant!(RecoverNoFlush) {
                        self.pool.pwb(node + 16 * (start + k) as u64, 16);
                    }
                }
            }
            if any {
                pause!(RecoverBeforeLine5);
                if !mutant!(RecoverNoFlush) {
                    self.pool.pfence();
                }
            }
            for (k, a) in plan.iter().enumerate().take(end - start) {
                let i = start + k;
                let f = node + 16 * i as u64;
                let pointer = N::field_kind(i) == FieldKind::Pointer;
                let copied = match *a {
                    Attempt::Equal => continue,
                    Attempt::Retry => false,
                    Attempt::Copy(d, (vnv, snv)) => {
                        let v = if pointer {
                            self.marked::<N::Child>(vnv)?
                        } else {
                            vnv
                        };
                        let ok = self.dram.dwcas(f, d, (v, snv));
                        trace_ev!(f, "R5", ok = ok);
                        ok
                    }
                };
                if !copied {
                    if pointer {
                        self.recover_field_ptr::<N::Child>(f)?;
                    } else {
                        self.recover_field(f)?;
                    }
                }
            }
            start = end;
        }
        Ok(())
    }

    fn diverged<T>(&self, off: u64) -> Result<T, RelaxError> {
        let ((_, nvmm_seq), (_, dram_seq)) = self.replicas(off)?;
        Err(RelaxError::Diverged {
            off,
            nvmm_seq,
            dram_seq,
        })
    }

    /// §6.4.4: under zeroed DRAM a node is recovered iff its last field's
    /// DRAM sequence is non-zero (every thread recovers a node's fields in
    /// order, so the last one is recovered only after all the others; fresh
    /// nodes start at sequence 1).
    fn node_recovered_z<N: Node>(&self, node: u64) -> Result<bool, RelaxError> {
        let n = N::field_count(self, node)? as u64;
        let last = node + 16 * n.saturating_sub(1);
        self.check_field(last)?;
        Ok(self.dram.seq(last) != 0)
    }

    /// Loads a pointer field whose referents are `N`s: under the markable
    /// variants Algorithm 6.4, otherwise a tracked plain load.
    pub(crate) fn load_ptr<N: Node>(&self, off: u64) -> Result<u64, RelaxError> {
        self.track_field(off)?;
        if !self.tracking.marks_pointers() {
            return Ok(self.dram.val(off));
        }
        for _ in 0..PATIENCE {
            let v = self.dram.val(off); // L1
            if v & RECOVERY_MARK == 0 {
                return Ok(v); // L3
            }
            let s = self.dram.seq(off); // L2.1
            let node = v & !LOW_BITS;
            let needed = match self.tracking {
                Tracking::Hybrid => !self.bitset.as_ref().is_some_and(|b| b.test(node)),
                Tracking::ZMarkable => !self.node_recovered_z::<N>(node)?,
                _ => true,
            };
            if needed && !mutant!(UnmarkWithoutRecover) {
                // L2.2
                self.recover_tracked(Tracking::Hybrid, node, || N::recover_node(self, node))?;
            }
            let plain = v & !RECOVERY_MARK;
            if self.dram.dwcas(off, (v, s), (plain, s)) {
                return Ok(plain); // L2.3–L2.4
            }
        }
        self.diverged(off)
    }

    /// Mirror's recovery (Chapter 4): copies every node reachable from
    /// `root` (an `N`, whose pointers lead to `N::Child`s) from NVMM to DRAM,
    /// before any operation runs. Returns the number of nodes copied.
    pub(crate) fn eager_trace<N: Node>(&self, root: u64) -> Result<u64, RelaxError>
    where
        N::Child: Node<Child = N::Child>,
    {
        let mut children = Vec::new();
        self.copy_node::<N>(root, &mut children)?;
        let mut seen = std::collections::HashSet::new();
        seen.insert(root);
        let mut copied = 1u64;
        while let Some(n) = children.pop() {
            if !seen.insert(n) {
                continue;
            }
            self.copy_node::<N::Child>(n, &mut children)?;
            copied += 1;
        }
        Ok(copied)
    }

    fn copy_node<N: Node>(&self, node: u64, children: &mut Vec<u64>) -> Result<(), RelaxError> {
        let n = N::field_count(self, node)?;
        for i in 0..n {
            let f = node + 16 * i as u64;
            self.check_field(f)?;
            let (v, s) = self.read_nvmm(f)?;
            self.dram.store_pair(f, (v, s));
            if N::field_kind(i) == crate::node::FieldKind::Pointer && v & !LOW_BITS != 0 {
                self.check_field(v & !LOW_BITS)?;
                children.push(v & !LOW_BITS);
            }
        }
        Ok(())
    }
}

//! CHECKPOINT (seed 001, §2.2): stabilise a possibly non-deterministic
//! value across crashes.
//!
//! The memento holds two slots, each a timestamp and an `N`-word buffer.
//! An execution:
//!
//! 1. compares the two timestamps: the larger is the *latest* slot, the
//!    other the *stale* one;
//! 2. in recovery mode, if the latest timestamp exceeds LOCAL (the largest
//!    timestamp of the thread's sub-operations replayed so far), the value
//!    was checkpointed by this operation before the crash: LOCAL takes that
//!    timestamp and the checkpointed value is returned — whatever the
//!    expression would compute now. Otherwise the thread leaves recovery mode;
//! 3. writes the value to the stale slot's buffer;
//! 4. if the slot spans more than one cache line, flushes the buffer
//!    (`pwb`; `pfence`) so it persists before the timestamp — within one line
//!    Px86 persists stores in order and the flush is unnecessary (§2.2);
//! 5. writes the current timestamp into the stale slot and flushes it.
//!
//! Step 5's flush is a `pwb` whose `pfence` is deferred to the thread's next
//! write to the pool ([`Handle::defer_fence`]): the checkpoint must persist
//! before anything that follows it persists — an effect persisted without
//! its checkpoint would be redone by recovery — and only a write can
//! persist. When that write is a locked CAS on x86 (an INSERT, a DELETE, a
//! detectable CAS, as in every queue and stack here), the CAS completes the
//! write-back by itself and the fence costs nothing. The explorer checks
//! this under both RMW semantics (`tests/explore_memento*.rs`).
//!
//! A crash before step 5's timestamp persists leaves the latest slot as it
//! was, so recovery sees either the old value or the new one, never a mix.
//! Stability across any number of crashes is proved on an abstract model in
//! `proofs/theories/Memento/Checkpoint.v` and model-checked in
//! `specs/memento/Checkpoint.tla`.
//!
//! Cost: one `pwb` and one (deferred) `pfence` per checkpoint when `N ≤ 7`
//! (a slot is one line), two of each otherwise; [`Checkpoint::checkpoint_with`]
//! one `pfence` more. Progress: wait-free.

use crate::compose::{align_up, Memento};
use crate::runtime::Handle;
use perdure_pm::{Backend, Pool};

/// A checkpoint variable memento holding `N` words.
#[derive(Debug)]
pub struct Checkpoint<const N: usize> {
    off: u64,
}

impl<const N: usize> Checkpoint<N> {
    /// Bytes per slot: the timestamp and `N` words, rounded to lines.
    const STRIDE: u64 = align_up(8 * (N as u64 + 1), 64);

    fn ts_off(&self, slot: u64) -> u64 {
        self.off + slot * Self::STRIDE
    }

    fn val_off(&self, slot: u64, i: usize) -> u64 {
        self.off + slot * Self::STRIDE + 8 * (1 + i as u64)
    }

    /// CHECKPOINT(e, mmt): checkpoints `value` and returns it, or, in
    /// recovery, returns what this operation checkpointed here before the
    /// crash.
    pub fn checkpoint<B: Backend, M: Memento>(
        &mut self,
        h: &mut Handle<'_, '_, B, M>,
        value: [u64; N],
    ) -> [u64; N] {
        // A plain value has no effects to order before the checkpoint: no
        // fence between them.
        match self.checkpoint_impl(h, false, |_| Ok::<_, std::convert::Infallible>(value)) {
            Ok(v) => v,
            Err(e) => match e {},
        }
    }

    /// CHECKPOINT of an expression that is only evaluated when nothing is
    /// checkpointed: in recovery the checkpointed value is returned and `e`
    /// does not run (use it for allocations, so that a recovering operation
    /// reuses its block instead of allocating another).
    ///
    /// A `pfence` separates `e` from the checkpoint: the timestamp's store
    /// may persist as soon as it is issued, so without it the checkpoint
    /// could survive a crash that loses what `e` did — the heap's record of
    /// an allocation (the block would be handed out twice), or a block's
    /// contents that `e` wrote and `pwb`ed (recovery skips `e`, so they
    /// would never be written again). `e` needs only `pwb`s.
    pub fn checkpoint_with<B: Backend, M: Memento, E>(
        &mut self,
        h: &mut Handle<'_, '_, B, M>,
        e: impl FnOnce(&mut Handle<'_, '_, B, M>) -> Result<[u64; N], E>,
    ) -> Result<[u64; N], E> {
        self.checkpoint_impl(h, true, e)
    }

    fn checkpoint_impl<B: Backend, M: Memento, E>(
        &mut self,
        h: &mut Handle<'_, '_, B, M>,
        fence_effects: bool,
        e: impl FnOnce(&mut Handle<'_, '_, B, M>) -> Result<[u64; N], E>,
    ) -> Result<[u64; N], E> {
        // Step 1.
        let t0 = h.load(self.ts_off(0));
        let t1 = h.load(self.ts_off(1));
        let (latest, t_latest) = if t0 >= t1 { (0, t0) } else { (1, t1) };
        // Step 2.
        if h.rec() {
            if t_latest > h.local() {
                // Persist what is returned: a thread crash between step 5's
                // store and its flush leaves it visible but not durable, and
                // a later full crash would lose it (specs/memento, mutant
                // CheckpointAsWrittenRecovery).
                h.flush(self.ts_off(latest), Self::STRIDE);
                h.set_local(t_latest);
                return Ok(std::array::from_fn(|i| h.load(self.val_off(latest, i))));
            }
            h.set_rec(false);
        }
        let value = e(h)?;
        if fence_effects {
            h.pfence();
        }
        let stale = 1 - latest;
        // Step 3.
        for (i, v) in value.iter().enumerate() {
            h.store_private(self.val_off(stale, i), *v);
        }
        // Step 4: only when the slot does not fit in one line.
        if Self::STRIDE > 64 {
            h.flush(self.val_off(stale, 0), 8 * N as u64);
        }
        // Step 5.
        let ts = h.now();
        h.store_private(self.ts_off(stale), ts);
        h.pwb(self.ts_off(stale), 8);
        if !mutant!(CheckpointNoFence) {
            h.defer_fence();
        }
        h.set_local(ts);
        Ok(value)
    }

    /// The latest checkpointed value and its timestamp (0: none), without
    /// touching recovery state: for inspection and tests.
    pub fn peek<B: Backend>(&self, pool: &Pool<B>) -> ([u64; N], u64) {
        let w = |off| crate::runtime::pm_load(pool, off);
        let (t0, t1) = (w(self.ts_off(0)), w(self.ts_off(1)));
        let (slot, t) = if t0 >= t1 { (0, t0) } else { (1, t1) };
        (std::array::from_fn(|i| w(self.val_off(slot, i))), t)
    }
}

crate::compose::leaf_memento!(
    Checkpoint<const N: usize>,
    size: 2 * Self::STRIDE,
    align: 64,
    scan: |me, pool, scan| {
        let w = |off| crate::runtime::pm_load(pool, off);
        scan.timestamp(w(me.ts_off(0)));
        scan.timestamp(w(me.ts_off(1)));
    }
);

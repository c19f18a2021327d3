//! Algorithm 2 of the seed (§5), `applyRead`: a read-only transaction on
//! the replica `cur_comb` designates, or, after `MAX_READ_TRIES` failures,
//! published for an updater to run.

use super::core::{bump, Job, RedoPtm};
use super::tx::ReadTx;
use crate::front;
use crate::registry::Kind;
use crate::sti::{self, INVALID};
use crate::sync::atomic::Ordering;
use crate::tx::PWord;
use perdure_pm::Backend;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

impl<B: Backend> RedoPtm<B> {
    /// Runs `run` on the designated replica under a shared lock, if that
    /// works right away (Alg. 2 {3}–{4}).
    #[inline]
    pub(super) fn try_read_direct<R, G>(&self, tid: usize, run: &G) -> Option<R>
    where
        G: Fn(&ReadTx<'_, B>) -> R + ?Sized,
    {
        let cur = self.cur_comb().load(Ordering::SeqCst);
        let comb = &self.combs[sti::idx(cur)];
        if !comb.lock.shared_try_lock(tid) {
            return None;
        }
        let head = comb.head.load(Ordering::SeqCst);
        if head == INVALID
            || sti::seq(head) != sti::seq(cur)
            || cur != self.cur_comb().load(Ordering::SeqCst)
        {
            comb.lock.shared_unlock(tid);
            return None;
        }
        let read = ReadTx::new(&self.pool, comb.replica, self.replica_len);
        let out = {
            let _in = front::enter(self.uid, Kind::Read, &read);
            catch_unwind(AssertUnwindSafe(|| run(&read)))
        };
        comb.lock.shared_unlock(tid);
        match out {
            Ok(r) => {
                if !mutant!(RedoReadWithoutSync) {
                    self.ensure_durable(sti::seq(cur));
                }
                bump(&self.stats[tid].reads_direct);
                Some(r)
            }
            Err(p) => resume_unwind(p),
        }
    }

    pub(super) fn apply_read<R, F>(&self, tid: usize, f: F) -> R
    where
        R: PWord,
        F: for<'t> Fn(&ReadTx<'t, B>) -> R + Send + Sync + 'static,
    {
        for _ in 0..self.config.max_read_tries {
            if let Some(r) = self.try_read_direct(tid, &f) {
                return r;
            }
        }
        // {1}: publish, so that an updater runs it.
        bump(&self.stats[tid].reads_published);
        let my_seq = {
            let mut slot = self.slot(tid);
            self.publish(
                tid,
                &mut slot,
                Job::Read(Box::new(move |rt| f(rt).into_word())),
            )
        };
        let init = self.cur_comb().load(Ordering::SeqCst);
        let p = self.req[tid].load(Ordering::SeqCst);
        // SAFETY: `p` is this thread's own request, just published; only
        // this thread retires it, at its next publish.
        let req = unsafe { &*p };
        let Job::Read(job) = &req.job else {
            unreachable!("a read publishes a read job")
        };
        for _ in 0..2 {
            if sti::seq_dist(
                sti::seq(self.cur_comb().load(Ordering::SeqCst)),
                sti::seq(init),
            ) >= 2
            {
                break;
            }
            if let Some(w) = self.try_read_direct(tid, &|rt: &ReadTx<'_, B>| job(rt)) {
                return R::from_word(w);
            }
        }
        // {2}
        loop {
            if let Some(out) = self.collect(tid, my_seq) {
                return front::result_of(Kind::Read, out);
            }
            crate::sync::spin_loop();
        }
    }
}

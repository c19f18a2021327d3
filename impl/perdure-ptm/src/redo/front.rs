//! Redo-PTM's side of the shared front ([`crate::front`]): how a closure
//! runs for a given thread id — published as `req[tid]` and applied by
//! Algorithm 3 (`applyUpdate`), or run by Algorithm 2 (`applyRead`) — and
//! the public `update_tx`/`read_tx`/`handle`, which lease thread ids and
//! flatten nesting exactly as for CX-PTM and CX-PUC.

use super::core::{Job, RedoPtm};
use super::tx::{ReadTx, Tx};
use crate::front::{self, Front, Sealed, TidPoolRef};
use crate::registry::Kind;
use crate::tx::PWord;
use perdure_pm::Backend;

/// One of a [`RedoPtm`]'s thread ids, held until dropped (the shared
/// [`front::Handle`]).
pub type Handle<'p, B> = front::Handle<'p, RedoPtm<B>>;

impl<B: Backend> RedoPtm<B> {
    front::inherent_api!();
}

impl<B: Backend> Sealed for RedoPtm<B> {}

impl<B: Backend> Front for RedoPtm<B> {
    type Tx<'t> = Tx<'t, B>;
    type ReadTx<'t> = ReadTx<'t, B>;

    fn event_counts(&self) -> Vec<(&'static str, u64)> {
        let s = self.stats();
        vec![
            ("commits", s.commits),
            ("helped", s.helped),
            ("backoffs", s.backoffs),
            ("copies", s.copies),
            ("copies_invalid", s.copies_invalid),
            ("copies_lapped", s.copies_lapped),
            ("copies_reused", s.copies_reused),
            ("copies_log", s.copies_log),
            ("replays", s.replays),
            ("replayed_states", s.replayed_states),
            ("rollbacks", s.rollbacks),
            ("timed_fallbacks", s.timed_fallbacks),
        ]
    }

    fn uid(&self) -> u64 {
        self.uid
    }

    fn tid_pool(&self) -> &TidPoolRef {
        &self.tids
    }

    fn update_with<R, F>(&self, tid: usize, f: F) -> R
    where
        R: PWord,
        F: for<'t> Fn(&Tx<'t, B>) -> R + Send + Sync + 'static,
    {
        let out = self.apply_update(tid, Job::Update(Box::new(move |tx| f(tx).into_word())));
        front::result_of(Kind::Update, out)
    }

    fn read_with<R, F>(&self, tid: usize, f: F) -> R
    where
        R: PWord,
        F: for<'t> Fn(&ReadTx<'t, B>) -> R + Send + Sync + 'static,
    {
        self.apply_read(tid, f)
    }
}

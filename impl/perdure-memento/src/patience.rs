//! The PATIENCE wait of the two helping loads (seed 001): LOADHELP of the
//! detectable CAS (§3, Algorithm 2, L4–L9) and LOAD of insert/delete (§4,
//! Algorithm 3, L5–L10).
//!
//! Both read a location whose word is in a transient state — an annotated
//! CAS word whose second plain CAS has not happened, an inserted link whose
//! persist bit is still set — and give its writer PATIENCE clock units to
//! finish before helping: re-read the word until it is clean (return its
//! value), another transient word replaces it (restart from that one), or
//! PATIENCE runs out with the same word (help it). Wait-free: bounded by
//! PATIENCE.

use crate::compose::Memento;
use crate::runtime::Handle;
use perdure_pm::Backend;

/// How a PATIENCE wait ended.
pub(crate) enum Waited {
    /// The word became clean (Algorithm 2 L7, Algorithm 3 L8): its value.
    Clean(u64),
    /// Another transient word replaced the one waited on (L8, L9).
    Changed(u64),
    /// PATIENCE ran out with the word unchanged (L9, L10): help it.
    Expired,
}

/// Waits at `off`, from `t_start` for `patience` clock units, while its word
/// stays `old`; `clean(word)` is the word's value if it is clean.
pub(crate) fn wait<B: Backend, M: Memento>(
    h: &mut Handle<'_, '_, B, M>,
    off: u64,
    old: u64,
    t_start: u64,
    patience: u64,
    clean: impl Fn(u64) -> Option<u64>,
) -> Waited {
    loop {
        let cur = h.load(off);
        if let Some(v) = clean(cur) {
            return Waited::Clean(v);
        }
        if cur != old {
            return Waited::Changed(cur);
        }
        if h.now() < t_start.saturating_add(patience) {
            perdure_pm::sync::spin_loop();
            continue;
        }
        return Waited::Expired;
    }
}

//! Redo-PTM's volatile structures (seed §5, Algorithm 1): `Combined`,
//! `State`, the write-set log, and the ring.
//!
//! ## The log: one circular arena per thread
//!
//! The seed's `State` keeps its physical log as a linked list of
//! `WriteSetNode` chunks of `MAXLOGSIZE` `WriteSetEntry {addr, oldval, val}`,
//! allocated on demand and kept (Algorithm 1 L10–L25). perdure keeps the
//! entries the same, with region offsets for addresses, but lays each
//! thread's chunks out as one circular arena of
//! [`Config::log_entries_per_thread`](super::config::Config::log_entries_per_thread)
//! entries, allocated when the PTM is opened: the states of a thread are
//! used in turn, so their logs follow each other in the arena, and a
//! state's log is a contiguous run `[log_start, log_start + log_len)` of
//! absolute positions (slot = position mod capacity). Nothing is allocated
//! while transactions run, and the footprint is fixed.
//!
//! A log in the arena is overwritten once its thread has written a
//! capacity's worth of later entries. A thread replaying another's log
//! checks afterwards (seqlock style) that the state still holds the same
//! ticket and that the owner's write position has not lapped the log; if
//! either fails, what it applied may be garbage and it copies the replica
//! instead, as it does when a `State` has been reused (§5: "a replica
//! invalidation can occur when a State instance is reused").
//!
//! A transaction with more stores than the arena holds stops logging
//! (`LOG_OVERFLOW`): it still commits, but no replica can replay it (they
//! copy), and if its commit fails its replica cannot be rolled back and is
//! marked invalid.

use super::wordset::WordSet;
use crate::rwlock::StrongTryRwLock;
use crate::sti;
use crate::sync::atomic::{fence, AtomicU64, Ordering};
use perdure_pm::{Backend, Pool, CACHE_LINE};

/// `State::log_len` of a transaction whose log did not fit the arena.
pub(crate) const LOG_OVERFLOW: u64 = u64::MAX;
/// Bit of `State::applied[i]` set when the request's closure panicked.
pub(crate) const PANICKED: u64 = 1 << 63;

/// One thread's circular log arena. Entries are `[offset, old, new]`.
/// Aligned to 128 bytes: the owner raises `written` on every log entry, and
/// the arenas of different threads sit side by side in `RedoPtm::arenas`.
#[repr(align(128))]
pub(crate) struct LogArena {
    entries: Box<[[AtomicU64; 3]]>,
    /// The absolute position after the last entry written (or being
    /// written): raised *before* a slot is overwritten.
    written: AtomicU64,
}

impl LogArena {
    pub(crate) fn new(cap: usize) -> LogArena {
        LogArena {
            entries: (0..cap)
                .map(|_| [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)])
                .collect(),
            written: AtomicU64::new(0),
        }
    }

    pub(crate) fn cap(&self) -> u64 {
        self.entries.len() as u64
    }

    /// The owner's next write position.
    pub(crate) fn position(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }

    fn slot(&self, pos: u64) -> &[AtomicU64; 3] {
        &self.entries[(pos % self.cap()) as usize]
    }

    /// Writes the entry at absolute position `pos` (by the owner only, in
    /// increasing positions).
    pub(crate) fn write(&self, pos: u64, entry: [u64; 3]) {
        self.written.store(pos + 1, Ordering::Relaxed);
        // Readers that see this entry's words also see the raised position.
        fence(Ordering::Release);
        let s = self.slot(pos);
        for (w, v) in s.iter().zip(entry) {
            w.store(v, Ordering::Relaxed);
        }
    }

    /// Rewrites the new value of the entry at `pos`, written earlier in the
    /// running transaction (RedoOpt's store aggregation; by the owner only,
    /// before the log is published).
    pub(crate) fn set_new(&self, pos: u64, new: u64) {
        self.slot(pos)[2].store(new, Ordering::Relaxed);
    }

    /// The entry at `pos`, as last written (possibly by a later lap).
    pub(crate) fn read(&self, pos: u64) -> [u64; 3] {
        let s = self.slot(pos);
        [
            s[0].load(Ordering::Relaxed),
            s[1].load(Ordering::Relaxed),
            s[2].load(Ordering::Relaxed),
        ]
    }

    /// After reading `[start, start + len)`: whether none of it had been
    /// overwritten yet.
    pub(crate) fn still_holds(&self, start: u64, len: u64) -> bool {
        fence(Ordering::Acquire);
        let w = self.written.load(Ordering::Relaxed);
        len <= self.cap() && w <= start.saturating_add(self.cap())
    }
}

/// The consensus object of Herlihy's construction for one `cur_comb`
/// transition (Algorithm 1 L7–L14), pre-allocated in `stMatrix`.
pub(crate) struct State {
    /// The transition this state describes (`seq`, owner, own index).
    pub ticket: AtomicU64,
    /// Per thread: the sequence number of its last request applied (plus
    /// [`PANICKED`]). The seed has one bit per thread (`applied[N]`,
    /// compared with a toggling `announce` bit); see `docs/redo-ptm.md`
    /// ("Deviations from the seed") for why perdure counts.
    pub applied: Box<[AtomicU64]>,
    /// Per thread: the result of its last request applied.
    pub results: Box<[AtomicU64]>,
    /// First position of the log in its owner's arena.
    pub log_start: AtomicU64,
    /// Entries in the log, published before the `cur_comb` CAS;
    /// [`LOG_OVERFLOW`] if it did not fit.
    pub log_len: AtomicU64,
}

impl State {
    pub(crate) fn new(threads: usize) -> State {
        State {
            ticket: AtomicU64::new(sti::INVALID),
            applied: (0..threads).map(|_| AtomicU64::new(0)).collect(),
            results: (0..threads).map(|_| AtomicU64::new(0)).collect(),
            log_start: AtomicU64::new(0),
            log_len: AtomicU64::new(0),
        }
    }

    /// `cpySt` (Algorithm 3 L12, step {3}): this state becomes `ticket`,
    /// with `from`'s applied requests and results, and an empty log starting
    /// at `log_start`. The ticket is written first and fenced, so a reader
    /// that sees any of the new contents also sees the new ticket.
    pub(crate) fn copy_from(&self, ticket: u64, from: &State, log_start: u64) {
        self.ticket.store(ticket, Ordering::SeqCst);
        fence(Ordering::Release);
        for (a, b) in self.applied.iter().zip(from.applied.iter()) {
            a.store(b.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        for (a, b) in self.results.iter().zip(from.results.iter()) {
            a.store(b.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        self.log_start.store(log_start, Ordering::Relaxed);
        self.log_len.store(0, Ordering::Relaxed);
    }

    /// The state as it is when a pool is opened: `ticket`, nothing applied.
    pub(crate) fn reset(&self, ticket: u64) {
        self.ticket.store(ticket, Ordering::SeqCst);
        for a in self.applied.iter().chain(self.results.iter()) {
            a.store(0, Ordering::Relaxed);
        }
        self.log_start.store(0, Ordering::Relaxed);
        self.log_len.store(0, Ordering::Release);
    }
}

/// The cache lines of a replica written since it was last flushed, which
/// must be written back before a `cur_comb` CAS designates the replica.
///
/// They belong to the replica, not to the thread that wrote them: a writer
/// that gives a replica up (a lost CAS, a rollback) leaves lines it wrote
/// and undid, which may have reached persistent memory with the undone
/// values; the next writer to commit the replica writes them back with its
/// own. When there are more lines than `cap`, the set degrades to one range
/// covering them all.
///
/// RedoOpt-PTM ([`DirtyLines::distinct`]) keeps the lines distinct with a
/// hash set (flush aggregation by cache line) and, once more than
/// `full_after` distinct lines are dirty, marks the replica for a complete
/// flush ([`DirtyLines::full_flush_pending`]).
///
/// Redo-PTM and RedoTimed-PTM ([`DirtyLines::new`]) keep the published
/// code's list of deferred `pwb`s: every store's line unless it repeats the
/// last one; the flush sorts it and writes each line back once
/// (`flushDeferredPWBs` skips repeats too). CX-PTM
/// ([`DirtyLines::filtered`]) keeps repeats out with a small hash set of the
/// period's lines, [`FILTER_SLOTS`] slots, so that its flush need not sort;
/// when that set fills, repeats may get in for the rest of the period and
/// the flush sorts. Either way a flush issues one `pwb` per distinct line.
#[derive(Debug)]
pub(crate) struct DirtyLines {
    lines: Vec<u64>,
    cap: usize,
    /// `[lo, hi)` in pool offsets, written back whole.
    range: Option<(u64, u64)>,
    /// The lines in `lines`, to keep them distinct (RedoOpt's set,
    /// CX-PTM's filter).
    seen: Option<WordSet>,
    /// `lines` may hold a line twice: the flush sorts it and drops repeats.
    repeats: bool,
    /// RedoOpt: distinct lines beyond which the whole replica is flushed.
    full_after: usize,
    /// RedoOpt: the whole replica must be flushed at the next commit.
    full: bool,
}

impl DirtyLines {
    pub(crate) fn new(cap: usize) -> DirtyLines {
        DirtyLines {
            lines: Vec::with_capacity(cap),
            cap,
            range: None,
            seen: None,
            repeats: true,
            full_after: usize::MAX,
            full: false,
        }
    }

    /// CX-PTM's list: as [`DirtyLines::new`], with the filter that keeps
    /// repeated lines out (see the type's docs).
    pub(crate) fn filtered(cap: usize) -> DirtyLines {
        DirtyLines {
            seen: Some(WordSet::new(FILTER_SLOTS)),
            repeats: false,
            ..DirtyLines::new(cap)
        }
    }

    /// Bytes of the filter of [`DirtyLines::filtered`].
    pub(crate) fn filter_bytes() -> u64 {
        WordSet::bytes_for(FILTER_SLOTS)
    }

    /// RedoOpt's set: distinct lines, up to `full_after` (at most `cap`),
    /// then a complete flush.
    pub(crate) fn distinct(cap: usize, full_after: usize) -> DirtyLines {
        DirtyLines {
            seen: Some(WordSet::new(2 * cap)),
            repeats: false,
            full_after: full_after.min(cap),
            ..DirtyLines::new(cap)
        }
    }

    /// Whether the replica is marked for a complete flush (RedoOpt).
    pub(crate) fn full_flush_pending(&self) -> bool {
        self.full
    }

    /// Whether the set holds `cap` single lines and no range (Redo-PTM,
    /// RedoTimed-PTM): one more new line would degrade it to a range that
    /// spans them all, which for scattered lines (a long replay on SPS) is
    /// most of the replica. A replay writes them back first
    /// ([`DirtyLines::flush`]; the published code's deferred-`pwb` log does
    /// the same when it fills).
    #[inline]
    pub(crate) fn at_capacity(&self) -> bool {
        self.seen.is_none() && self.range.is_none() && self.lines.len() >= self.cap
    }

    /// Lines tracked one by one (for tests).
    #[cfg(all(test, not(any(perdure_loom, perdure_shuttle))))]
    pub(crate) fn tracked(&self) -> usize {
        self.lines.len()
    }

    /// The line holding pool offset `off` was written.
    #[inline]
    pub(crate) fn add(&mut self, off: u64) {
        let line = off & !(CACHE_LINE as u64 - 1);
        // (`lines` is empty while the set is a range.)
        if self.lines.last() == Some(&line) {
            return;
        }
        // The common case, on the path of every store: a list with room.
        if self.range.is_none() {
            match &mut self.seen {
                None if self.lines.len() < self.cap => {
                    self.lines.push(line);
                    return;
                }
                Some(seen) if !self.repeats => {
                    let found = seen.find(line);
                    if let Some(Ok(_)) = found {
                        return;
                    }
                    let room = self.lines.len() < self.cap.min(self.full_after);
                    if room && seen.insert_found(found, line, 0) {
                        self.lines.push(line);
                        return;
                    }
                }
                _ => {}
            }
        }
        self.add_slow(line);
    }

    /// `add` of `line` when the set is a range, is full, or is a distinct
    /// set that could not take it.
    #[cold]
    #[inline(never)]
    fn add_slow(&mut self, line: u64) {
        if let Some((lo, hi)) = &mut self.range {
            *lo = (*lo).min(line);
            *hi = (*hi).max(line + CACHE_LINE as u64);
            return;
        }
        match &mut self.seen {
            Some(seen) if self.full_after != usize::MAX => {
                // RedoOpt past `full_after` distinct lines (a tenth of the
                // replica): flush all of it (§5, "Postpone issuing pwbs").
                self.full = true;
                seen.clear();
            }
            Some(_) if self.lines.len() < self.cap => {
                // CX-PTM's filter is full: repeats may get in from now on,
                // the flush sorts.
                self.repeats = true;
                self.lines.push(line);
                return;
            }
            _ => {}
        }
        // A full list: one range spanning its lines.
        let lo = self.lines.iter().copied().min().unwrap_or(line).min(line);
        let hi = self.lines.iter().copied().max().unwrap_or(line).max(line) + CACHE_LINE as u64;
        self.lines.clear();
        self.range = Some((lo, hi));
    }

    /// Forgets every tracked line without writing any back (only for the
    /// mutant `RedoOptFullFlushShort`).
    #[cfg(feature = "mutants")]
    pub(crate) fn discard(&mut self) {
        self.lines.clear();
        self.range = None;
    }

    /// `[lo, hi)` (pool offsets) was written.
    pub(crate) fn add_range(&mut self, lo: u64, hi: u64) {
        let (lo, hi) = self.lines.drain(..).fold((lo, hi), |(l, h), line| {
            (l.min(line), h.max(line + CACHE_LINE as u64))
        });
        self.range = Some(match self.range {
            Some((l, h)) => (l.min(lo), h.max(hi)),
            None => (lo, hi),
        });
    }

    /// `pwb` of every dirty line, once each (Algorithm 3 L26
    /// `flushDeferredPWBs`, which also skips repeated lines). The order of
    /// the `pwb`s is free: only the fence after them orders them (the
    /// specs' `PW` takes any pending line). A distinct set's lines go in the
    /// order they were first stored; a list that may repeat a line is sorted
    /// to drop the repeats.
    pub(crate) fn flush<B: Backend>(&mut self, pool: &Pool<B>) {
        if self.repeats {
            self.lines.sort_unstable();
            self.lines.dedup();
        }
        for &line in &self.lines {
            pool.pwb(line, CACHE_LINE as u64);
        }
        self.lines.clear();
        if let Some(seen) = &mut self.seen {
            let opt = self.full_after != usize::MAX;
            if !(opt && mutant!(RedoOptLineSetNotReset)) {
                seen.clear();
            }
            self.repeats = false;
        }
        self.full = false;
        if let Some((lo, hi)) = self.range.take() {
            pool.pwb(lo, hi - lo);
        }
    }
}

/// A replica and what describes it (Algorithm 1 L1–L5).
pub(crate) struct Combined {
    /// The ticket of the state the replica holds, or [`sti::INVALID`].
    pub head: AtomicU64,
    /// Pool offset of the replica (the seed's `root`).
    pub replica: u64,
    /// The strong try reader-writer lock.
    pub lock: StrongTryRwLock,
    /// Lines to write back before this replica is next designated; taken
    /// by the writer holding the lock (never contended).
    pub dirty: std::sync::Mutex<DirtyLines>,
    /// `cur_comb` CASes that designated this replica (statistics: which
    /// replicas RedoTimed-PTM uses).
    pub commits: std::sync::atomic::AtomicU64,
}

impl Combined {
    pub(crate) fn new(replica: u64, threads: usize, dirty: DirtyLines) -> Combined {
        Combined {
            head: AtomicU64::new(sti::INVALID),
            replica,
            lock: StrongTryRwLock::new(threads),
            dirty: std::sync::Mutex::new(dirty),
            commits: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Takes the dirty-line set (by the lock's writer).
    pub(crate) fn take_dirty(&self) -> DirtyLines {
        let mut d = self.dirty.lock().unwrap_or_else(|e| e.into_inner());
        let cap = d.cap;
        std::mem::replace(&mut *d, DirtyLines::new_empty(cap))
    }

    /// Gives the dirty-line set back before releasing the lock.
    pub(crate) fn put_dirty(&self, lines: DirtyLines) {
        *self.dirty.lock().unwrap_or_else(|e| e.into_inner()) = lines;
    }
}

impl DirtyLines {
    /// A placeholder while the real set is taken (no allocation).
    fn new_empty(cap: usize) -> DirtyLines {
        DirtyLines {
            lines: Vec::new(),
            cap,
            range: None,
            seen: None,
            repeats: true,
            full_after: usize::MAX,
            full: false,
        }
    }
}

/// Slots of CX-PTM's filter of repeated lines ([`DirtyLines::filtered`]):
/// it keeps up to half as many lines per flush period out of the sort.
pub(crate) const FILTER_SLOTS: usize = 512;

#[cfg(all(test, not(any(perdure_loom, perdure_shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn dirty_lines_degrade_to_a_range() {
        let mut d = DirtyLines::new(2);
        d.add(64);
        d.add(70);
        d.add(640);
        assert_eq!(d.lines, vec![64, 640]);
        d.add(6400);
        assert!(d.lines.is_empty());
        assert_eq!(d.range, Some((64, 6464)));
        d.add(0);
        assert_eq!(d.range, Some((0, 6464)));
    }

    #[test]
    fn only_plain_sets_of_single_lines_reach_capacity() {
        let mut d = DirtyLines::new(2);
        d.add(64);
        assert!(!d.at_capacity());
        d.add(640);
        assert!(d.at_capacity());
        d.add(6400);
        assert!(!d.at_capacity(), "a range has no capacity to reach");
        let mut o = DirtyLines::distinct(2, 2);
        o.add(64);
        o.add(640);
        assert!(!o.at_capacity(), "RedoOpt switches to a full flush instead");
    }

    #[test]
    fn distinct_lines_switch_to_a_full_flush() {
        let mut d = DirtyLines::distinct(8, 3);
        d.add(64);
        d.add(640);
        d.add(70);
        d.add(64);
        assert_eq!(d.tracked(), 2, "repeated lines are kept once");
        assert!(!d.full_flush_pending());
        d.add(1280);
        assert_eq!(d.tracked(), 3);
        d.add(1920);
        assert!(
            d.full_flush_pending(),
            "a fourth line passes full_after = 3"
        );
        assert_eq!(d.range, Some((64, 1984)));
        let mut plain = DirtyLines::new(8);
        let mut cx = DirtyLines::filtered(8);
        for off in [64, 640, 64, 640, 64] {
            plain.add(off);
            cx.add(off);
        }
        assert_eq!(
            plain.tracked(),
            5,
            "Redo-PTM drops only consecutive repeats"
        );
        assert_eq!(cx.tracked(), 2, "CX-PTM's filter drops every repeat");
        assert!(!plain.full_flush_pending());
        assert!(!cx.full_flush_pending());
    }

    #[test]
    fn a_full_filter_lets_repeats_in_and_the_flush_still_writes_each_line_once() {
        let n = FILTER_SLOTS / 2;
        let mut d = DirtyLines::filtered(4 * n);
        for i in 0..n as u64 {
            d.add(64 * i);
        }
        assert_eq!(d.tracked(), n);
        assert!(!d.repeats, "half the slots: the filter holds every line");
        d.add(64 * n as u64);
        assert!(d.repeats, "one more: the filter is full");
        d.add(0);
        assert_eq!(d.tracked(), n + 2, "a repeat gets in past the filter");
        let pool = Pool::volatile("dirty-lines", 1 << 20, perdure_pm::NoFlush).unwrap();
        let before = perdure_pm::stats::thread_counts();
        d.flush(&pool);
        let pwbs = perdure_pm::stats::thread_counts().pwb - before.pwb;
        assert_eq!(pwbs, n as u64 + 1, "one pwb per distinct line");
        assert!(!d.repeats, "a new period filters again");
        for _ in 0..3 {
            d.add(64);
            d.add(128);
            d.add(64);
        }
        assert_eq!(d.tracked(), 2, "the flush emptied the filter");
        let mut full = DirtyLines::filtered(2);
        full.add(64);
        full.add(640);
        full.add(6400);
        assert_eq!(
            full.range,
            Some((64, 6464)),
            "a full list degrades to a range"
        );
    }

    #[test]
    fn arena_detects_laps() {
        let a = LogArena::new(4);
        for p in 0..3 {
            a.write(p, [p, 0, 0]);
        }
        assert!(a.still_holds(0, 3));
        a.write(3, [3, 0, 0]);
        assert!(a.still_holds(0, 3), "position 3 is a fresh slot");
        a.write(4, [4, 0, 0]);
        assert!(!a.still_holds(0, 3), "position 4 overwrote position 0");
        assert!(a.still_holds(1, 3));
        assert!(!a.still_holds(1, 5), "longer than the arena");
    }
}

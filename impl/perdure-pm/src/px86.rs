//! The line-granular persistence rules of Px86, implemented once.
//!
//! This module is the single home of the rules of `PX86.md` ("Operational
//! reading"): for every 64-byte cache line, the sequence of stores that
//! became visible to it, and a *mark*, the length of the prefix of that
//! sequence guaranteed persisted (a crash keeps, for each line
//! independently, the result of some prefix of its sequence at least as long
//! as its mark); and for every thread, its FIFO store buffer and its pending
//! write-backs, with the rules that say what may leave the buffer or take
//! effect when. Both the Px86 litmus engine (`perdure-check`, which explores
//! every choice) and the simulated PM backend (`Sim`, which runs the real
//! code and lets a seeded scheduler choose) are built on it; what they add
//! is *which* enabled step happens next.
//!
//! * [`ThreadBuffer`] — one thread's store buffer ([`Buffered`] entries:
//!   stores, `clflush`es, `sfence`s) and pending [`Pending`] write-backs and
//!   non-temporal stores, with the rules: [`ThreadBuffer::forward`] (a load
//!   reads its own newest buffered store), [`ThreadBuffer::head_may_leave`],
//!   [`ThreadBuffer::may_take_effect`], [`ThreadBuffer::is_drained`] (an
//!   `mfence` or locked RMW may execute).
//!
//! * [`LineHistory`] — one line's visible stores and mark. A flush that takes
//!   effect calls [`LineHistory::flush_takes_effect`] (raises the mark to the
//!   current length); a non-temporal store calls
//!   [`LineHistory::visible_and_persisted`].
//! * [`CrashImages`] — given, per line, the range of prefix lengths a crash may
//!   keep, either enumerates every combination (when there are at most a
//!   limit of them) or draws a seeded uniform sample, and reports the total
//!   count either way.
//!
//! Consequences the callers rely on: stores to one line persist in the order
//! they became visible; an aligned 8-byte store persists atomically (a write
//! is never split by this module — a caller that wants a 16-byte store to
//! persist as two independent halves records two writes).

use std::collections::VecDeque;
use std::ops::RangeInclusive;

/// One cache line's persistence state: the writes that became visible to it,
/// in order, and the mark.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LineHistory<W> {
    writes: Vec<W>,
    mark: usize,
}

impl<W> Default for LineHistory<W> {
    fn default() -> Self {
        LineHistory {
            writes: Vec::new(),
            mark: 0,
        }
    }
}

impl<W> LineHistory<W> {
    /// An empty history (nothing written since the line's initial content).
    pub fn new() -> Self {
        Self::default()
    }

    /// A store became visible to the line (PX86.md: "appended to the
    /// sequence of `line(x)`").
    pub fn visible(&mut self, write: W) {
        self.writes.push(write);
    }

    /// A `clflush`, `clflushopt` or `clwb` of the line takes effect: the mark
    /// rises to the current length of the sequence.
    pub fn flush_takes_effect(&mut self) {
        self.mark = self.writes.len();
    }

    /// A flush issued when the sequence had `len` writes is known to have
    /// taken effect by now (its thread fenced): the mark rises to at least
    /// `len`. Taking effect at the issue time is the least constraining
    /// choice Px86 allows, so a simulator that settles flushes this way at
    /// the fence produces exactly the allowed crash images.
    pub fn flush_issued_at(&mut self, len: usize) {
        self.mark = self.mark.max(len.min(self.writes.len()));
    }

    /// The number of writes in the sequence.
    pub fn len(&self) -> usize {
        self.writes.len()
    }

    /// Whether no write became visible since the line's base content.
    pub fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }

    /// A non-temporal store: visible and persisted together.
    pub fn visible_and_persisted(&mut self, write: W) {
        self.writes.push(write);
        self.mark = self.writes.len();
    }

    /// The writes, oldest first.
    pub fn writes(&self) -> &[W] {
        &self.writes
    }

    /// The mark: how many writes are guaranteed persisted.
    pub fn mark(&self) -> usize {
        self.mark
    }

    /// The prefix lengths a crash may keep: `mark..=len`.
    pub fn persistable(&self) -> RangeInclusive<usize> {
        self.mark..=self.writes.len()
    }

    /// Whether every write is guaranteed persisted (a crash has one choice).
    pub fn is_settled(&self) -> bool {
        self.mark == self.writes.len()
    }

    /// Forgets the guaranteed-persisted prefix, handing it to `absorb` (e.g.
    /// to fold it into a base snapshot): keeps long runs cheap. Only the
    /// writes before the mark are removed; the choice a crash has is
    /// unchanged.
    pub fn compact(&mut self, mut absorb: impl FnMut(W)) {
        let keep = self.writes.split_off(self.mark);
        for w in std::mem::replace(&mut self.writes, keep) {
            absorb(w);
        }
        self.mark = 0;
    }
}

/// The crash images allowed by per-line ranges of persisted prefix lengths:
/// enumerated when few, sampled (seeded, uniform) when many.
#[derive(Clone, Debug)]
pub struct CrashImages {
    ranges: Vec<RangeInclusive<usize>>,
    total: u128,
    mode: Mode,
}

#[derive(Clone, Debug)]
enum Mode {
    /// Next combination in odometer order; `None` when done.
    Exhaustive(Option<Vec<usize>>),
    /// Remaining samples and the generator state.
    Sampled { left: u64, rng: u64 },
}

/// How a [`CrashImages`] covers the space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coverage {
    /// Every allowed image is produced once.
    Exhaustive,
    /// A seeded uniform sample (with replacement) of this many images.
    Sampled(u64),
}

impl CrashImages {
    /// The images for `ranges` (one per line): all of them if there are at
    /// most `limit`, else `limit` uniform samples drawn with `seed`.
    pub fn new(ranges: Vec<RangeInclusive<usize>>, limit: u64, seed: u64) -> CrashImages {
        let total = ranges
            .iter()
            .map(|r| (r.end() + 1).saturating_sub(*r.start()) as u128)
            .fold(1u128, |a, n| a.saturating_mul(n));
        let mode = if total <= u128::from(limit) {
            Mode::Exhaustive((total > 0).then(|| ranges.iter().map(|r| *r.start()).collect()))
        } else {
            Mode::Sampled {
                left: limit,
                rng: seed | 1,
            }
        };
        CrashImages {
            ranges,
            total,
            mode,
        }
    }

    /// How many images Px86 allows in all (saturating at `u128::MAX`).
    pub fn total(&self) -> u128 {
        self.total
    }

    /// Whether the images are enumerated or sampled.
    pub fn coverage(&self) -> Coverage {
        match &self.mode {
            Mode::Exhaustive(_) => Coverage::Exhaustive,
            Mode::Sampled { left, .. } => Coverage::Sampled(*left),
        }
    }
}

/// The xorshift64 step the simulator's seeded choices draw from.
pub(crate) fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

impl Iterator for CrashImages {
    /// Per line, the number of writes the image keeps.
    type Item = Vec<usize>;

    fn next(&mut self) -> Option<Vec<usize>> {
        match &mut self.mode {
            Mode::Exhaustive(cur) => {
                let out = cur.clone()?;
                // Advance the odometer.
                let mut carry = true;
                if let Some(c) = cur.as_mut() {
                    for (digit, range) in c.iter_mut().zip(&self.ranges) {
                        if *digit < *range.end() {
                            *digit += 1;
                            carry = false;
                            break;
                        }
                        *digit = *range.start();
                    }
                }
                if carry {
                    *cur = None;
                }
                Some(out)
            }
            Mode::Sampled { left, rng } => {
                if *left == 0 {
                    return None;
                }
                *left -= 1;
                Some(
                    self.ranges
                        .iter()
                        .map(|r| {
                            let width = (r.end() + 1 - r.start()) as u64;
                            // Rejection sampling keeps the choice uniform.
                            let zone = u64::MAX - u64::MAX % width;
                            loop {
                                let x = xorshift(rng);
                                if x < zone {
                                    return r.start() + (x % width) as usize;
                                }
                            }
                        })
                        .collect(),
                )
            }
        }
    }
}

/// An entry of a thread's FIFO store buffer. `seq` is the instruction's
/// place in the thread's program order (any increasing numbering).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Buffered<L, V> {
    /// `store x v`: "enters the thread's store buffer and later becomes
    /// visible, in FIFO order".
    Store {
        /// Program-order index.
        seq: u32,
        /// The location.
        loc: L,
        /// The value.
        val: V,
    },
    /// `clflush x`: "ordered like a store (FIFO with the thread's stores)".
    Clflush {
        /// Program-order index.
        seq: u32,
        /// The line flushed.
        line: L,
    },
    /// `sfence`: it enters the FIFO, so no younger store leaves the buffer
    /// before it, and leaves only once the thread's older pending
    /// write-backs and non-temporal stores have taken effect.
    Sfence {
        /// Program-order index.
        seq: u32,
    },
}

impl<L, V> Buffered<L, V> {
    /// The entry's program-order index.
    pub fn seq(&self) -> u32 {
        match self {
            Buffered::Store { seq, .. }
            | Buffered::Clflush { seq, .. }
            | Buffered::Sfence { seq } => *seq,
        }
    }
}

/// An executed `clflushopt`/`clwb` or `ntstore` that has not taken effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pending<L, V> {
    /// `clflushopt x` / `clwb x` (same semantics here).
    Flush {
        /// Program-order index.
        seq: u32,
        /// The line written back.
        line: L,
    },
    /// `ntstore x v`: "becomes visible and persisted together".
    Nt {
        /// Program-order index.
        seq: u32,
        /// The location.
        loc: L,
        /// The value.
        val: V,
    },
}

impl<L, V> Pending<L, V> {
    /// The entry's program-order index.
    pub fn seq(&self) -> u32 {
        match self {
            Pending::Flush { seq, .. } | Pending::Nt { seq, .. } => *seq,
        }
    }
}

/// One thread's TSO state under Px86: its FIFO store buffer and its pending
/// write-backs and non-temporal stores, in program order. The rules of
/// `PX86.md` that concern one thread are its methods; `line_of` maps a
/// location to its cache line.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ThreadBuffer<L, V> {
    buffer: VecDeque<Buffered<L, V>>,
    pending: Vec<Pending<L, V>>,
}

impl<L, V> Default for ThreadBuffer<L, V> {
    fn default() -> Self {
        ThreadBuffer {
            buffer: VecDeque::new(),
            pending: Vec::new(),
        }
    }
}

impl<L: Copy + PartialEq, V: Copy> ThreadBuffer<L, V> {
    /// An empty buffer, nothing pending.
    pub fn new() -> Self {
        Self::default()
    }

    /// A store, `clflush` or `sfence` enters the buffer.
    pub fn push(&mut self, entry: Buffered<L, V>) {
        self.buffer.push_back(entry);
    }

    /// A `clflushopt`/`clwb` or `ntstore` executes: pending until it takes
    /// effect.
    pub fn push_pending(&mut self, p: Pending<L, V>) {
        self.pending.push(p);
    }

    /// The buffer, oldest first.
    pub fn buffered(&self) -> impl Iterator<Item = &Buffered<L, V>> {
        self.buffer.iter()
    }

    /// The pending write-backs and non-temporal stores, in program order.
    pub fn pending(&self) -> &[Pending<L, V>] {
        &self.pending
    }

    /// Whether the buffer is empty.
    pub fn is_empty(&self) -> bool {
        self.buffer.is_empty()
    }

    /// "`mfence` and locked RMWs (`cas`, `xchg`, `faa`) also drain the store
    /// buffer", and pending write-backs and ntstores complete "no later than
    /// the thread's next `sfence`, `mfence` or locked RMW": an `mfence` or
    /// locked RMW may execute (and completes at once) only when this holds.
    pub fn is_drained(&self) -> bool {
        self.buffer.is_empty() && self.pending.is_empty()
    }

    /// "`load r x` reads the newest own buffered store to `x`, else visible
    /// memory": the newest own store to `loc` still buffered, or pending as
    /// an `ntstore` (a thread always reads its own latest write), if any.
    pub fn forward(&self, loc: L) -> Option<V> {
        let buffered = self.buffer.iter().filter_map(|e| match *e {
            Buffered::Store { seq, loc: l, val } if l == loc => Some((seq, val)),
            _ => None,
        });
        let nt = self.pending.iter().filter_map(|p| match *p {
            Pending::Nt { seq, loc: l, val } if l == loc => Some((seq, val)),
            _ => None,
        });
        buffered
            .chain(nt)
            .max_by_key(|&(seq, _)| seq)
            .map(|(_, v)| v)
    }

    /// The head of the buffer, if it may leave now:
    /// * a store — unless an older pending write-back of its line has not
    ///   taken effect ("Younger stores (to other lines) may become visible
    ///   before it takes effect": a younger store to the flushed line may
    ///   not), or an older `ntstore` to its location (coherence);
    /// * a `clflush` — always (it takes effect when it leaves);
    /// * an `sfence` — once every older pending entry has taken effect.
    pub fn head_may_leave(&self, line_of: impl Fn(L) -> L) -> Option<Buffered<L, V>> {
        let head = *self.buffer.front()?;
        let held = match head {
            Buffered::Store { seq, loc, .. } => {
                let line = line_of(loc);
                self.pending.iter().any(|p| match *p {
                    Pending::Flush { seq: s, line: l } => s < seq && l == line,
                    Pending::Nt { seq: s, loc: l, .. } => s < seq && l == loc,
                })
            }
            Buffered::Clflush { .. } => false,
            Buffered::Sfence { seq } => self.pending.iter().any(|p| p.seq() < seq),
        };
        (!held).then_some(head)
    }

    /// Removes the head of the buffer (after [`ThreadBuffer::head_may_leave`]
    /// allowed it; the caller applies its effect).
    pub fn pop_head(&mut self) -> Option<Buffered<L, V>> {
        self.buffer.pop_front()
    }

    /// Whether pending entry `i` may take effect now:
    /// * "`clflushopt x` and `clwb x` take effect at some point after all
    ///   older stores of the thread to `line(x)`, all older loads and RMWs of
    ///   the thread, and all older fences have taken effect". Loads and RMWs
    ///   take effect when they execute, in program order, and an `mfence`
    ///   completes when it executes, so what can still hold it is an older
    ///   `sfence` in the buffer, an older buffered store to the line, or an
    ///   older pending `ntstore` to the line.
    /// * An `ntstore` "becomes visible and persisted together, at some point
    ///   before the thread's next fence or locked RMW completes; it is not
    ///   ordered with younger stores before that", nor with older stores to
    ///   other locations; older stores and ntstores to its location go
    ///   first (coherence), and an older `sfence` must complete first.
    pub fn may_take_effect(&self, i: usize, line_of: impl Fn(L) -> L) -> bool {
        let Some(&p) = self.pending.get(i) else {
            return false;
        };
        let seq = p.seq();
        let older_sfence = self
            .buffer
            .iter()
            .any(|e| matches!(*e, Buffered::Sfence { seq: s } if s < seq));
        if older_sfence {
            return false;
        }
        match p {
            Pending::Flush { line, .. } => {
                !(self.buffer.iter().any(|e| {
                    matches!(*e, Buffered::Store { seq: s, loc, .. } if s < seq && line_of(loc) == line)
                }) || self.pending.iter().any(|q| {
                    matches!(*q, Pending::Nt { seq: s, loc, .. } if s < seq && line_of(loc) == line)
                }))
            }
            Pending::Nt { loc, .. } => {
                !(self.buffer.iter().any(
                    |e| matches!(*e, Buffered::Store { seq: s, loc: l, .. } if s < seq && l == loc),
                ) || self.pending.iter().any(
                    |q| matches!(*q, Pending::Nt { seq: s, loc: l, .. } if s < seq && l == loc),
                ))
            }
        }
    }

    /// Removes pending entry `i` (after [`ThreadBuffer::may_take_effect`]
    /// allowed it; the caller applies its effect).
    pub fn take_pending(&mut self, i: usize) -> Pending<L, V> {
        self.pending.remove(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_keeps_a_prefix_at_least_its_mark() {
        let mut l = LineHistory::new();
        l.visible(1);
        l.visible(2);
        assert_eq!(l.persistable(), 0..=2);
        l.flush_takes_effect();
        l.visible(3);
        assert_eq!(l.persistable(), 2..=3);
        l.visible_and_persisted(4);
        assert!(l.is_settled());
        let mut absorbed = vec![];
        l.compact(|w| absorbed.push(w));
        assert_eq!(absorbed, vec![1, 2, 3, 4]);
        assert_eq!(l.persistable(), 0..=0);
    }

    /// Locations 0..8 share line 0, 8..16 line 8.
    fn line(l: u32) -> u32 {
        l & !7
    }

    #[test]
    fn a_load_forwards_the_newest_own_store() {
        let mut t: ThreadBuffer<u32, i64> = ThreadBuffer::new();
        assert_eq!(t.forward(1), None);
        t.push(Buffered::Store {
            seq: 1,
            loc: 1,
            val: 5,
        });
        t.push(Buffered::Store {
            seq: 2,
            loc: 1,
            val: 6,
        });
        t.push(Buffered::Store {
            seq: 3,
            loc: 2,
            val: 7,
        });
        assert_eq!(t.forward(1), Some(6));
        t.push_pending(Pending::Nt {
            seq: 4,
            loc: 1,
            val: 8,
        });
        assert_eq!(
            t.forward(1),
            Some(8),
            "a pending ntstore is the thread's latest write"
        );
        assert!(!t.is_drained());
    }

    #[test]
    fn a_write_back_waits_for_older_stores_to_its_line_and_holds_younger_ones() {
        let mut t: ThreadBuffer<u32, i64> = ThreadBuffer::new();
        t.push(Buffered::Store {
            seq: 1,
            loc: 1,
            val: 1,
        });
        t.push_pending(Pending::Flush { seq: 2, line: 0 });
        t.push(Buffered::Store {
            seq: 3,
            loc: 9,
            val: 1,
        });
        t.push(Buffered::Store {
            seq: 4,
            loc: 2,
            val: 1,
        });
        assert!(
            !t.may_take_effect(0, line),
            "the older store to its line is buffered"
        );
        assert!(t.head_may_leave(line).is_some());
        t.pop_head();
        assert!(t.may_take_effect(0, line));
        // The store to another line may leave before the write-back acts;
        // the younger store to the flushed line may not.
        assert!(matches!(
            t.head_may_leave(line),
            Some(Buffered::Store { loc: 9, .. })
        ));
        t.pop_head();
        assert!(t.head_may_leave(line).is_none());
        t.take_pending(0);
        assert!(t.head_may_leave(line).is_some());
    }

    #[test]
    fn an_sfence_holds_younger_stores_until_older_write_backs_act() {
        let mut t: ThreadBuffer<u32, i64> = ThreadBuffer::new();
        t.push_pending(Pending::Flush { seq: 1, line: 0 });
        t.push(Buffered::Sfence { seq: 2 });
        t.push(Buffered::Store {
            seq: 3,
            loc: 9,
            val: 1,
        });
        t.push_pending(Pending::Flush { seq: 4, line: 8 });
        assert!(
            t.head_may_leave(line).is_none(),
            "the sfence waits for the older clwb"
        );
        assert!(
            !t.may_take_effect(1, line),
            "a clwb younger than a buffered sfence waits"
        );
        t.take_pending(0);
        assert!(matches!(
            t.head_may_leave(line),
            Some(Buffered::Sfence { .. })
        ));
        t.pop_head();
        t.pop_head();
        assert!(t.may_take_effect(0, line));
        t.take_pending(0);
        assert!(t.is_drained());
    }

    #[test]
    fn exhaustive_enumeration_is_the_product() {
        let images: Vec<_> = CrashImages::new(vec![0..=1, 2..=2, 0..=2], 100, 7).collect();
        assert_eq!(images.len(), 6);
        assert!(images.contains(&vec![1, 2, 2]));
        assert!(images.iter().all(|i| i[1] == 2));
        let mut dedup = images.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(dedup.len(), 6, "each image once");
        assert_eq!(
            CrashImages::new(vec![], 1, 0).count(),
            1,
            "no lines: the one empty image"
        );
    }

    #[test]
    fn sampling_when_there_are_too_many_is_seeded_and_in_range() {
        let ranges: Vec<_> = (0..40).map(|_| 0..=3).collect();
        let a: Vec<_> = CrashImages::new(ranges.clone(), 50, 9).collect();
        let b: Vec<_> = CrashImages::new(ranges.clone(), 50, 9).collect();
        assert_eq!(a, b, "same seed, same sample");
        assert_eq!(a.len(), 50);
        assert_eq!(CrashImages::new(ranges, 50, 9).total(), 4u128.pow(40));
        assert!(a.iter().flatten().all(|&k| k <= 3));
        assert!(a.iter().flatten().any(|&k| k == 3) && a.iter().flatten().any(|&k| k == 0));
    }
}

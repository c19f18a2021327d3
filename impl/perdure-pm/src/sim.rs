//! The simulated Px86 backend: records every persistent-memory access and
//! produces the crash images Px86 allows at any point.
//!
//! `Sim` is a [`Backend`] like `Pmem` or `Msync`, so the code under test is
//! the production code, unchanged. Through the pool's access hooks it sees
//! every load, store, compare-and-swap, 16-byte compare-and-swap, swap,
//! fetch-add, non-temporal store, `pwb`, `pfence` and `psync`, and keeps:
//!
//! * its own copy of the pool's memory, updated by every recorded write;
//! * per cache line, a [`px86::LineHistory`](crate::px86::LineHistory) of the
//!   writes since the line last settled, and the line's persisted base
//!   content (the persistence rules themselves live in [`crate::px86`], shared
//!   with the litmus engine);
//! * per thread, the write-backs it issued and has not yet fenced.
//!
//! ## The model
//!
//! Threads run under sequentially consistent interleavings (each access is
//! atomic and immediately visible; there are no store buffers), with Px86's
//! line-granular persistence on top:
//!
//! * a write becomes visible to its line at once (appended to the line's
//!   sequence);
//! * a `pwb` of a line is *pending* until its thread's next `pfence` or
//!   `psync`; then it has certainly taken effect, and the line's mark rises
//!   to the sequence length at the time of the `pwb` (Px86 lets a `clwb`
//!   take effect as early as its issue; the earliest effect constrains
//!   crashes least, so this yields exactly the allowed images);
//! * a non-temporal store is visible and persisted together;
//! * with [`SimOptions::rmw_completes_flushes`], a locked read-modify-write
//!   (successful or not) also completes the thread's pending write-backs, as
//!   Px86 says of `lock`-prefixed instructions. It is off by default: the
//!   `Msync` backend gives RMWs no such power, so code that must run on
//!   both needs an explicit `pfence` — and `Sim` finds the code that forgot.
//!
//! A crash at any point keeps, for every line independently, a prefix of its
//! sequence at least as long as its mark. With
//! [`SimOptions::dword_persists_atomically`] off, a 16-byte CAS persists as
//! two independent 8-byte halves: a crash may keep either half of the last
//! kept write without the other.
//!
//! Where this differs from the full Px86 of the litmus engine: there are no
//! store buffers, so behaviours that need a store to be visible to its own
//! thread but not yet to others (TSO store→load reordering) do not occur.
//! Persistence behaviours do: every crash image that an SC interleaving plus
//! Px86's persistence rules allow is produced.
//!
//! ## Crash points and images
//!
//! [`Sim::capture`] (or a [crash hook](Sim::set_crash_hook) called after
//! every persistence event) captures a [`CrashPoint`]: the memory and the
//! unsettled lines at that moment. [`CrashPoint::images`] enumerates the
//! allowed images, or draws a seeded uniform sample when there are more than
//! a limit, and [`CrashPoint::materialize`] turns one into the words of a
//! pool, with the [declared volatile regions](Sim::declare_volatile) zeroed
//! or filled with seeded garbage. `Pool::volatile_from_words` then gives a
//! pool on which recovery runs.
//!
//! One `Sim` serves one pool: a pool constructor [attaches](Backend::attach)
//! it, which resets its state.

use crate::backend::{Backend, BackendKind};
use crate::px86::{Coverage, CrashImages, LineHistory};
use crate::sync::atomic::{AtomicU64, Ordering};
use std::collections::BTreeMap;

const LINE: u64 = 64;

/// Options of the simulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimOptions {
    /// Whether a 16-byte CAS persists atomically (default) or as two
    /// independent 8-byte halves.
    pub dword_persists_atomically: bool,
    /// Whether a locked RMW (even a failed CAS) completes the thread's
    /// pending write-backs (Px86; default off, see the module docs).
    pub rmw_completes_flushes: bool,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            dword_persists_atomically: true,
            rmw_completes_flushes: false,
        }
    }
}

/// What volatile memory holds after a crash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VolatileFill {
    /// Zeroes.
    Zeroed,
    /// Arbitrary bytes, drawn from this seed.
    Garbage {
        /// The seed.
        seed: u64,
    },
}

/// How many accesses of each kind the simulator has recorded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SimCounts {
    /// Loads.
    pub loads: u64,
    /// Plain stores.
    pub stores: u64,
    /// Compare-and-swaps (successful or not).
    pub cas: u64,
    /// Swaps and fetch-adds.
    pub rmw: u64,
    /// 16-byte compare-and-swaps.
    pub dword_cas: u64,
    /// Non-temporal stores.
    pub ntstores: u64,
    /// Cache lines written back.
    pub pwb: u64,
    /// Fences.
    pub pfence: u64,
    /// Syncs.
    pub psync: u64,
    /// Persistence events: writes, write-backs, fences and syncs (the points
    /// at which the set of crash images can change).
    pub events: u64,
}

/// What a recorded event did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SimOp {
    /// A load (value read).
    Load,
    /// A store (value written).
    Store,
    /// A successful compare-and-swap (value written).
    Cas,
    /// A failed compare-and-swap (value found).
    CasFailed,
    /// A swap or fetch-add (value written).
    Rmw,
    /// A non-temporal store (value written).
    NtStore,
    /// A successful 16-byte compare-and-swap (low word written; the high
    /// word is a second event at `off + 8`).
    DwordCas,
    /// A write-back of the line at `off`.
    Pwb,
    /// A fence.
    Pfence,
    /// A sync.
    Psync,
}

/// One recorded event, for traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SimEvent {
    /// The thread, numbered in order of first appearance from 0.
    pub thread: usize,
    /// What happened.
    pub op: SimOp,
    /// The pool offset (0 for fences).
    pub off: u64,
    /// The value written or read (0 for write-backs and fences).
    pub val: u64,
}

fn trace_event(st: &mut State, op: SimOp, off: u64, val: u64) {
    if st.trace.is_none() {
        return;
    }
    let me = crate::sync::thread::current().id();
    let thread = match st.threads.iter().position(|t| *t == me) {
        Some(i) => i,
        None => {
            st.threads.push(me);
            st.threads.len() - 1
        }
    };
    if let Some(t) = st.trace.as_mut() {
        t.push(SimEvent {
            thread,
            op,
            off,
            val,
        });
    }
}

/// One write to a line: up to two words (a 16-byte CAS writes two).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LineWrite {
    words: [(u8, u64); 2],
    n: u8,
    /// The two words persist independently.
    split: bool,
}

#[derive(Clone, Debug, Default)]
struct Line {
    /// Persisted content of the words written since tracking began, as of
    /// before the writes in `hist`.
    base: [Option<u64>; 8],
    hist: LineHistory<LineWrite>,
    /// Writes folded into `base` so far (pending write-backs hold absolute
    /// sequence lengths).
    folded: usize,
}

impl Line {
    fn settle(&mut self) {
        let base = &mut self.base;
        let mut folded = 0;
        self.hist.compact(|w| {
            folded += 1;
            for &(idx, val) in &w.words[..w.n as usize] {
                base[idx as usize] = Some(val);
            }
        });
        self.folded += folded;
    }
}

type ThreadKey = crate::sync::thread::ThreadId;

/// A hook called after every persistence event with its index.
type CrashHook = Box<dyn FnMut(u64, &SimView<'_>) + Send>;

#[derive(Default)]
struct State {
    /// Recorded events, if tracing is on.
    trace: Option<Vec<SimEvent>>,
    /// Threads in order of their first recorded event.
    threads: Vec<ThreadKey>,
    memory: Vec<u64>,
    lines: BTreeMap<u64, Line>,
    pending: Vec<(ThreadKey, Vec<(u64, usize)>)>,
    counts: SimCounts,
    volatile: Vec<(u64, u64)>,
}

/// The simulated Px86 backend. See the module docs.
pub struct Sim {
    options: SimOptions,
    state: std::sync::Mutex<State>,
    hook: std::sync::Mutex<Option<CrashHook>>,
    yield_hook: std::sync::OnceLock<fn()>,
}

impl std::fmt::Debug for Sim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sim")
            .field("options", &self.options)
            .finish()
    }
}

impl Default for Sim {
    fn default() -> Self {
        Sim::new(SimOptions::default())
    }
}

/// Read access to the simulator's state inside a crash hook.
pub struct SimView<'a> {
    state: &'a State,
}

impl SimView<'_> {
    /// Captures the crash point at this moment.
    pub fn capture(&self) -> CrashPoint {
        capture(self.state)
    }

    /// The counts so far.
    pub fn counts(&self) -> SimCounts {
        self.state.counts
    }

    /// Events recorded so far if tracing is on (a prefix length of the
    /// trace [`Sim::take_trace`] will return).
    pub fn trace_len(&self) -> usize {
        self.state.trace.as_ref().map_or(0, Vec::len)
    }
}

impl Sim {
    /// A simulator with `options`.
    pub fn new(options: SimOptions) -> Sim {
        Sim {
            options,
            state: std::sync::Mutex::new(State::default()),
            hook: std::sync::Mutex::new(None),
            yield_hook: std::sync::OnceLock::new(),
        }
    }

    /// Calls `hook` before every recorded access, write-back and fence,
    /// outside the simulator's locks: a scheduling point. The crash explorer
    /// sets it to shuttle's `yield_now`, so that shuttle's schedulers
    /// interleave threads at every persistent-memory access even though the
    /// code runs on `std` atomics. Set at most once; returns false if a hook
    /// was already set.
    pub fn set_yield_hook(&self, hook: fn()) -> bool {
        self.yield_hook.set(hook).is_ok()
    }

    #[inline]
    fn yield_point(&self) {
        if let Some(h) = self.yield_hook.get() {
            h();
        }
    }

    /// The options.
    pub fn options(&self) -> SimOptions {
        self.options
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Calls `hook` after every persistence event (inside the simulator's
    /// lock: the hook must not touch the pool). The explorer uses it to
    /// capture crash points in the middle of operations.
    pub fn set_crash_hook(&self, hook: impl FnMut(u64, &SimView<'_>) + Send + 'static) {
        *self.hook.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::new(hook));
    }

    /// Removes the crash hook.
    pub fn clear_crash_hook(&self) {
        *self.hook.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Declares `[off, off + len)` volatile: after a crash it holds zeroes
    /// or garbage (see [`CrashPoint::materialize`]), whatever was written.
    pub fn declare_volatile(&self, off: u64, len: u64) {
        self.state().volatile.push((off, len));
    }

    /// The counts so far.
    pub fn counts(&self) -> SimCounts {
        self.state().counts
    }

    /// Starts recording every event (discarding any earlier recording).
    pub fn start_trace(&self) {
        self.state().trace = Some(Vec::new());
    }

    /// Events recorded since [`Sim::start_trace`] so far (0 if tracing is
    /// off): where an event recorded outside the simulator (a protocol
    /// step a traced library reports) falls among the simulator's own.
    pub fn trace_len(&self) -> usize {
        self.state().trace.as_ref().map_or(0, Vec::len)
    }

    /// Stops recording and returns the events since [`Sim::start_trace`].
    pub fn take_trace(&self) -> Vec<SimEvent> {
        self.state().trace.take().unwrap_or_default()
    }

    /// The crash point at this moment.
    pub fn capture(&self) -> CrashPoint {
        capture(&self.state())
    }

    /// Runs `op` and records its effect with `record`, atomically with
    /// respect to other recorded accesses. With OS threads the lock is held
    /// across both; under loom/shuttle the atomic `op` is a scheduling point
    /// and must run outside the lock (nothing preempts between it and the
    /// recording, which touches no model-checked primitive).
    #[inline]
    fn access<R>(&self, op: impl FnOnce() -> R, record: impl FnOnce(&mut State, &R) -> bool) -> R {
        self.yield_point();
        #[cfg(not(any(perdure_loom, perdure_shuttle)))]
        let (r, event) = {
            let mut st = self.state();
            let r = op();
            let event = record(&mut st, &r);
            drop(st);
            (r, event)
        };
        #[cfg(any(perdure_loom, perdure_shuttle))]
        let (r, event) = {
            let r = op();
            let event = record(&mut self.state(), &r);
            (r, event)
        };
        if event {
            self.fire_hook();
        }
        r
    }

    fn fire_hook(&self) {
        let mut hook = self.hook.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(h) = hook.as_mut() {
            let st = self.state();
            h(st.counts.events, &SimView { state: &st });
        }
    }

    fn pending_of(st: &mut State) -> &mut Vec<(u64, usize)> {
        let me = crate::sync::thread::current().id();
        let i = match st.pending.iter().position(|(t, _)| *t == me) {
            Some(i) => i,
            None => {
                st.pending.push((me, Vec::new()));
                st.pending.len() - 1
            }
        };
        &mut st.pending[i].1
    }

    /// A locked read-modify-write that always writes (`swap`, `fetch_add`):
    /// `op` performs it and returns the old value, `new_of(old)` is the value
    /// it wrote. Counted, traced and recorded as one write; it completes the
    /// thread's pending write-backs when the model says a locked RMW does.
    fn rmw(&self, off: u64, op: impl FnOnce() -> u64, new_of: impl Fn(u64) -> u64) -> u64 {
        let completes = self.options.rmw_completes_flushes;
        self.access(op, |st, old| {
            let new = new_of(*old);
            st.counts.rmw += 1;
            trace_event(st, SimOp::Rmw, off, new);
            record_write(st, &[(off, new)], &[*old], false, false);
            if completes {
                Sim::complete_flushes(st);
            }
            true
        })
    }

    /// The calling thread's pending write-backs have taken effect.
    fn complete_flushes(st: &mut State) {
        let pending = std::mem::take(Self::pending_of(st));
        for (line_off, abs_len) in pending {
            if let Some(line) = st.lines.get_mut(&line_off) {
                line.hist
                    .flush_issued_at(abs_len.saturating_sub(line.folded));
                if line.hist.is_settled() {
                    line.settle();
                }
            }
        }
    }
}

/// Records a write of `words` (pool offsets and values; one or two words in
/// one line) whose previous values were `old`.
fn record_write(st: &mut State, words: &[(u64, u64)], old: &[u64], split: bool, persisted: bool) {
    let line_off = words[0].0 & !(LINE - 1);
    let line = st.lines.entry(line_off).or_default();
    let mut w = LineWrite {
        words: [(0, 0); 2],
        n: words.len() as u8,
        split: split && words.len() == 2,
    };
    for (i, (&(off, val), &prev)) in words.iter().zip(old).enumerate() {
        let idx = ((off - line_off) / 8) as u8;
        if line.base[idx as usize].is_none() {
            line.base[idx as usize] = Some(prev);
        }
        w.words[i] = (idx, val);
        if let Some(slot) = st.memory.get_mut((off / 8) as usize) {
            *slot = val;
        }
    }
    if persisted {
        line.hist.visible_and_persisted(w);
        line.settle();
    } else {
        line.hist.visible(w);
    }
    st.counts.events += 1;
}

fn capture(st: &State) -> CrashPoint {
    let lines = st
        .lines
        .iter()
        .filter(|(_, l)| !l.hist.is_settled())
        .map(|(&off, l)| {
            let writes = l.hist.writes().to_vec();
            let mut options = Vec::new();
            for k in l.hist.persistable() {
                options.push((k, Torn::No));
                // A split 16-byte write just past the kept prefix may have
                // persisted one half alone.
                if let Some(w) = writes.get(k) {
                    if w.split && k < writes.len() {
                        options.push((k, Torn::FirstOnly));
                        options.push((k, Torn::SecondOnly));
                    }
                }
            }
            LineSnap {
                off,
                base: l.base,
                writes,
                options,
            }
        })
        .collect();
    CrashPoint {
        event: st.counts.events,
        memory: st.memory.clone(),
        lines,
        volatile: st.volatile.clone(),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Torn {
    No,
    FirstOnly,
    SecondOnly,
}

#[derive(Clone, Debug)]
struct LineSnap {
    off: u64,
    base: [Option<u64>; 8],
    writes: Vec<LineWrite>,
    options: Vec<(usize, Torn)>,
}

/// The state of persistent memory at one moment, from which the crash
/// images Px86 allows there are drawn.
#[derive(Clone, Debug)]
pub struct CrashPoint {
    /// The persistence event this point follows.
    pub event: u64,
    memory: Vec<u64>,
    lines: Vec<LineSnap>,
    volatile: Vec<(u64, u64)>,
}

/// One crash image: per unsettled line, which of its options persisted.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ImageChoice(pub Vec<usize>);

/// What one crash image kept of one line whose persisted content the crash
/// point did not determine ([`CrashPoint::image_lines`]): the line's writes
/// since it was last settled, of which the image kept a prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageLine {
    /// Pool offset of the line.
    pub offset: u64,
    /// The writes to the line not yet settled, oldest first: each one or two
    /// (pool offset, value) words.
    pub writes: Vec<Vec<(u64, u64)>>,
    /// How many of them were guaranteed persisted (flushed and fenced): every
    /// image keeps at least these.
    pub guaranteed: usize,
    /// How many of them this image kept (a prefix, at least `guaranteed`);
    /// the rest were lost.
    pub kept: usize,
    /// A split 16-byte write just past the kept prefix of which one half
    /// persisted alone: 0 for its first word, 1 for its second.
    pub torn_half: Option<usize>,
}

impl CrashPoint {
    /// How many crash images Px86 allows here (saturating).
    pub fn total_images(&self) -> u128 {
        self.lines
            .iter()
            .fold(1u128, |a, l| a.saturating_mul(l.options.len() as u128))
    }

    /// Lines whose persisted content is not determined.
    pub fn unsettled_lines(&self) -> usize {
        self.lines.len()
    }

    /// The allowed images: all of them if there are at most `limit`, else a
    /// seeded uniform sample of `limit`.
    pub fn images(&self, limit: u64, seed: u64) -> (Coverage, impl Iterator<Item = ImageChoice>) {
        let ranges = self.lines.iter().map(|l| 0..=l.options.len() - 1).collect();
        let it = CrashImages::new(ranges, limit, seed);
        (it.coverage(), it.map(ImageChoice))
    }

    /// Which writes image `choice` kept and lost, per line it chose for
    /// (the unsettled lines, in pool order).
    pub fn image_lines(&self, choice: &ImageChoice) -> Vec<ImageLine> {
        self.lines
            .iter()
            .zip(&choice.0)
            .map(|(line, &opt)| {
                let (kept, torn) = line.options[opt];
                ImageLine {
                    offset: line.off,
                    writes: line
                        .writes
                        .iter()
                        .map(|w| {
                            w.words[..w.n as usize]
                                .iter()
                                .map(|&(idx, val)| (line.off + 8 * idx as u64, val))
                                .collect()
                        })
                        .collect(),
                    guaranteed: line.options.first().map_or(0, |o| o.0),
                    kept,
                    torn_half: match torn {
                        Torn::No => None,
                        Torn::FirstOnly => Some(0),
                        Torn::SecondOnly => Some(1),
                    },
                }
            })
            .collect()
    }

    /// The pool words of image `choice`, with volatile regions filled per
    /// `fill`.
    pub fn materialize(&self, choice: &ImageChoice, fill: VolatileFill) -> Vec<u64> {
        let mut words = self.memory.clone();
        for (line, &opt) in self.lines.iter().zip(&choice.0) {
            let (keep, torn) = line.options[opt];
            let mut content = line.base;
            for w in &line.writes[..keep] {
                for &(idx, val) in &w.words[..w.n as usize] {
                    content[idx as usize] = Some(val);
                }
            }
            match torn {
                Torn::No => {}
                Torn::FirstOnly | Torn::SecondOnly => {
                    let w = &line.writes[keep];
                    let (idx, val) = w.words[if torn == Torn::FirstOnly { 0 } else { 1 }];
                    content[idx as usize] = Some(val);
                }
            }
            for (i, v) in content.iter().enumerate() {
                if let Some(v) = v {
                    if let Some(slot) = words.get_mut((line.off / 8) as usize + i) {
                        *slot = *v;
                    }
                }
            }
        }
        let mut rng = match fill {
            VolatileFill::Zeroed => 0,
            VolatileFill::Garbage { seed } => seed | 1,
        };
        for &(off, len) in &self.volatile {
            for i in (off / 8)..((off + len).div_ceil(8)) {
                if let Some(slot) = words.get_mut(i as usize) {
                    *slot = if rng == 0 {
                        0
                    } else {
                        rng ^= rng << 13;
                        rng ^= rng >> 7;
                        rng ^= rng << 17;
                        rng
                    };
                }
            }
        }
        words
    }
}

// SAFETY: Sim performs no real persistence and claims none: it is a model
// used for checking; its documentation says what it models.
unsafe impl Backend for Sim {
    fn kind(&self) -> BackendKind {
        BackendKind::Sim
    }

    fn rmw_completes_flushes(&self) -> bool {
        self.options.rmw_completes_flushes
    }

    unsafe fn raw_pwb(&self, _addr: *const u8) {}

    fn raw_pfence(&self) {
        self.yield_point();
        let event = {
            let mut st = self.state();
            st.counts.pfence += 1;
            trace_event(&mut st, SimOp::Pfence, 0, 0);
            Sim::complete_flushes(&mut st);
            st.counts.events += 1;
            true
        };
        if event {
            self.fire_hook();
        }
    }

    fn raw_psync(&self) {
        self.yield_point();
        {
            let mut st = self.state();
            st.counts.psync += 1;
            trace_event(&mut st, SimOp::Psync, 0, 0);
            Sim::complete_flushes(&mut st);
            st.counts.events += 1;
        }
        self.fire_hook();
    }

    fn attach(&self, pool_size: u64, initial: &mut dyn FnMut() -> Vec<u64>) {
        let mut st = self.state();
        *st = State::default();
        st.memory = initial();
        st.memory.resize((pool_size / 8) as usize, 0);
    }

    fn load(&self, word: &AtomicU64, off: u64, order: Ordering) -> u64 {
        self.access(
            || word.load(order),
            |st, v| {
                st.counts.loads += 1;
                trace_event(st, SimOp::Load, off, *v);
                false
            },
        )
    }

    fn store(&self, word: &AtomicU64, off: u64, val: u64, order: Ordering) {
        // A swap, so that the previous value is known atomically.
        let order = match order {
            Ordering::Relaxed => Ordering::Relaxed,
            _ => Ordering::AcqRel,
        };
        self.access(
            || word.swap(val, order),
            |st, old| {
                st.counts.stores += 1;
                trace_event(st, SimOp::Store, off, val);
                record_write(st, &[(off, val)], &[*old], false, false);
                true
            },
        );
    }

    fn compare_exchange(
        &self,
        word: &AtomicU64,
        off: u64,
        current: u64,
        new: u64,
        success: Ordering,
        failure: Ordering,
    ) -> Result<u64, u64> {
        let completes = self.options.rmw_completes_flushes;
        self.access(
            || word.compare_exchange(current, new, success, failure),
            |st, r| {
                st.counts.cas += 1;
                match r {
                    Ok(_) => trace_event(st, SimOp::Cas, off, new),
                    Err(found) => trace_event(st, SimOp::CasFailed, off, *found),
                }
                // A locked instruction completes pending write-backs whether
                // or not it succeeds (Px86); only a success writes.
                let wrote = r.is_ok();
                if wrote {
                    record_write(st, &[(off, new)], &[current], false, false);
                }
                if completes {
                    Sim::complete_flushes(st);
                }
                wrote
            },
        )
    }

    fn swap(&self, word: &AtomicU64, off: u64, val: u64, order: Ordering) -> u64 {
        self.rmw(off, || word.swap(val, order), |_| val)
    }

    fn fetch_add(&self, word: &AtomicU64, off: u64, val: u64, order: Ordering) -> u64 {
        self.rmw(
            off,
            || word.fetch_add(val, order),
            |old| old.wrapping_add(val),
        )
    }

    fn ntstore(&self, word: &AtomicU64, off: u64, val: u64) {
        self.access(
            || word.swap(val, Ordering::AcqRel),
            |st, old| {
                st.counts.ntstores += 1;
                trace_event(st, SimOp::NtStore, off, val);
                record_write(st, &[(off, val)], &[*old], false, true);
                true
            },
        );
    }

    fn compare_exchange_16(
        &self,
        words: &[AtomicU64; 2],
        off: u64,
        current: u128,
        new: u128,
    ) -> Result<u128, u128> {
        let split = !self.options.dword_persists_atomically;
        let completes = self.options.rmw_completes_flushes;
        self.access(
            || crate::dword::compare_exchange_16(words, current, new),
            |st, r| {
                st.counts.dword_cas += 1;
                let wrote = r.is_ok() && current != new;
                if wrote {
                    trace_event(st, SimOp::DwordCas, off, new as u64);
                    trace_event(st, SimOp::DwordCas, off + 8, (new >> 64) as u64);
                    record_write(
                        st,
                        &[(off, new as u64), (off + 8, (new >> 64) as u64)],
                        &[current as u64, (current >> 64) as u64],
                        split,
                        false,
                    );
                }
                if completes {
                    Sim::complete_flushes(st);
                }
                wrote
            },
        )
    }

    fn record_pwb(&self, off: u64, len: u64) {
        self.yield_point();
        {
            let mut st = self.state();
            let first = off & !(LINE - 1);
            let mut line_off = first;
            while line_off < off + len {
                st.counts.pwb += 1;
                trace_event(&mut st, SimOp::Pwb, line_off, 0);
                if let Some(line) = st.lines.get(&line_off) {
                    if !line.hist.is_settled() {
                        let abs = line.folded + line.hist.len();
                        Sim::pending_of(&mut st).push((line_off, abs));
                    }
                }
                line_off += LINE;
            }
            st.counts.events += 1;
        }
        self.fire_hook();
    }
}

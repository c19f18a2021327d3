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
//! Two models, chosen by [`SimOptions::model`]:
//!
//! * [`SimModel::Px86`]: the full Px86 of `PX86.md`, with the per-thread
//!   rules of [`crate::px86::ThreadBuffer`] (shared with the litmus engine).
//!   A plain store (any ordering but `SeqCst`) enters its thread's FIFO
//!   store buffer; the thread's own loads forward from it; buffered stores
//!   become visible to their line (and to other threads) in order, when the
//!   simulator *drains* them. Drains happen at scheduling points: before
//!   every recorded access of any thread, each thread's buffer head leaves
//!   with a probability ([`SimOptions::drain_percent`]) drawn from a seeded
//!   generator ([`SimOptions::drain_seed`]) — the explorer varies both per
//!   schedule. Locked RMWs (CAS, 16-byte CAS, swap, fetch-add) and `SeqCst`
//!   stores (an `xchg` on x86-64) drain the thread's buffer first. A `pwb`
//!   is pending until the thread's older stores to its line have left the
//!   buffer and its older `pfence`s completed ([`ThreadBuffer::may_take_effect`](crate::px86::ThreadBuffer::may_take_effect));
//!   from then on it counts as taken effect at that moment (the earliest
//!   effect constrains crashes least), and it is *certain* once the thread's
//!   next `pfence` completes, or once a younger store of the thread to its
//!   line becomes visible (which Px86 lets happen only after the write-back
//!   took effect). A `pfence` is an `sfence`: it enters the
//!   buffer, no younger store leaves before it, and it completes when it
//!   leaves; the thread does not wait for it. A `psync` is an `sfence` the
//!   thread waits for (its whole buffer drains): the durability point of
//!   Izraelevitz et al.'s model, which the constructions use before they
//!   report an operation durable. A crash loses every buffered store.
//!   [`Sim::drain_thread`] drains the calling thread's buffer: the explorer
//!   calls it when an operation returns (a caller observes a response only
//!   through a locked instruction or a system call, which drain the buffer).
//!   In the `std` build only pool memory is buffered; what is not in the
//!   pool (volatile structures, `std::sync::atomic::fence`) is outside the
//!   simulator. In the `--cfg perdure_shuttle` build the facade's DRAM
//!   atomics, fences and mutexes join the model while a simulator is
//!   installed with [`crate::sync::with_dram_tso`]: a DRAM store enters the
//!   same FIFO buffer as the thread's pool stores (`sync/tso.rs`).
//! * [`SimModel::Sc`]: sequentially consistent interleavings (each access
//!   is atomic and immediately visible; no store buffers), with Px86's
//!   line-granular persistence on top: a `pwb` of a line is pending until
//!   its thread's next `pfence` or `psync`, and then certain, from the
//!   sequence length at the time of the `pwb`.
//!
//! In both models:
//!
//! * a non-temporal store is visible and persisted together (under Px86 at
//!   the earliest moment the rules allow);
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
//! Threads are told apart by the facade's thread id, or by
//! [`SimOptions::thread_id`]: the explorer runs its threads as shuttle tasks
//! on one OS thread and passes shuttle's task id (the facade's thread id,
//! `std`'s in a `std` build, is the same for all of them).
//!
//! Under Px86 the simulator's own copy of the pool's words is the visible
//! memory: every access is served from it (and from the thread's buffer)
//! under the simulator's lock, and each write becomes visible there. In a
//! `std` build the pool's real words are written through at the same
//! moment; in a `--cfg perdure_shuttle` build they are not (a shuttle
//! atomic is a scheduling point and may not run under the lock), and
//! nothing reads them past the simulator. In a `--cfg perdure_loom` build
//! the simulator runs `Sc` whatever the options say (loom explores its own
//! memory model; [`Sim::model`] tells).
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
//! The simulator's memory, a crash point's and an image's are copy-on-write
//! 4 KiB pages (`pages.rs`): a capture shares the pages instead of copying
//! the pool, and [`CrashPoint::image`] with [`crate::Pool::volatile_from_image`]
//! builds the recovery's pool from the image's written pages only, its `Sim`
//! sharing them. On the explorer's Memento scenarios (2 MiB pools) this
//! made a crash image about 14 times cheaper to check than copying the pool
//! at every step (`perdure explore clevel-mmt --schedules 4 --images 4`:
//! 10.2 s, 7 of them in the kernel's page faults, before; 0.73 s after).
//!
//! One `Sim` serves one pool: a pool constructor [attaches](Backend::attach)
//! it, which resets its state.

use crate::backend::{Backend, BackendKind};
pub use crate::pages::CrashImage;
use crate::pages::Pages;
use crate::px86::{xorshift, Buffered, Coverage, CrashImages, LineHistory, Pending, ThreadBuffer};
use crate::site::{self, Site};
use crate::sync::atomic::{AtomicU64, Ordering};
use std::collections::BTreeMap;

const LINE: u64 = 64;

/// The top bit of a buffered DRAM store's location ([`Sim::dram_loc`]).
#[cfg(all(perdure_shuttle, not(perdure_loom)))]
const DRAM_TAG: u64 = 1 << 63;

/// A DRAM atomic's value cell (the shuttle build's facade atomics,
/// `sync/tso.rs`): what a buffered DRAM store writes when it drains.
type DramCell = std::sync::Arc<std::sync::atomic::AtomicU64>;

fn line_of(off: u64) -> u64 {
    off & !(LINE - 1)
}

/// The memory model the simulator runs the code under (module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SimModel {
    /// Sequentially consistent interleavings, Px86 persistence.
    #[default]
    Sc,
    /// Px86 in full: TSO store buffers and Px86 persistence.
    Px86,
}

impl SimModel {
    /// `"sc"` or `"px86"`.
    pub fn name(self) -> &'static str {
        match self {
            SimModel::Sc => "sc",
            SimModel::Px86 => "px86",
        }
    }

    /// The model a simulator asked for this one runs in this build: `Sc`
    /// in a `--cfg perdure_loom` build (loom explores its own memory
    /// model; module docs), else this one.
    pub fn in_this_build(self) -> SimModel {
        if cfg!(perdure_loom) {
            SimModel::Sc
        } else {
            self
        }
    }

    /// The model named `s` (`"sc"` or `"px86"`).
    pub fn parse(s: &str) -> Option<SimModel> {
        match s {
            "sc" => Some(SimModel::Sc),
            "px86" => Some(SimModel::Px86),
            _ => None,
        }
    }
}

/// Options of the simulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(unpredictable_function_pointer_comparisons)] // equal options, same thread-id function
pub struct SimOptions {
    /// Whether a 16-byte CAS persists atomically (default) or as two
    /// independent 8-byte halves.
    pub dword_persists_atomically: bool,
    /// Whether a locked RMW (even a failed CAS) completes the thread's
    /// pending write-backs (Px86; default off, see the module docs).
    pub rmw_completes_flushes: bool,
    /// The memory model (default [`SimModel::Sc`]; the explorer's default is
    /// Px86).
    pub model: SimModel,
    /// Under Px86, the seed of the choices of when buffered stores drain.
    pub drain_seed: u64,
    /// Under Px86, the chance (in percent) that a thread's buffer head
    /// leaves at a scheduling point.
    pub drain_percent: u8,
    /// How threads are told apart: `None`, by the facade's thread id; else
    /// by what this returns. The explorer runs its threads as shuttle tasks
    /// on one OS thread and passes shuttle's task id (module docs).
    pub thread_id: Option<fn() -> usize>,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            dword_persists_atomically: true,
            rmw_completes_flushes: false,
            model: SimModel::Sc,
            drain_seed: 1,
            drain_percent: 50,
            thread_id: None,
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
    let me = st.me;
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

/// A thread, as the simulator tells threads apart (module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
enum ThreadKey {
    /// Not yet known (no access made since the state was created).
    #[default]
    Unknown,
    /// The facade's thread id.
    Facade(crate::sync::thread::ThreadId),
    /// What the thread hook returned.
    Hooked(usize),
}

/// One thread's Px86 state: its store buffer and pending entries (the
/// rules are [`ThreadBuffer`]'s), its next program-order index, and its
/// write-backs that have taken effect but are not yet certain (line offset
/// and the absolute sequence length they cover).
#[derive(Debug, Default)]
struct TsoThread {
    tb: ThreadBuffer<u64, u64>,
    /// The site of each entry of `tb`'s FIFO, in the same order
    /// ([`crate::site`]): the event an entry causes when it leaves is
    /// attributed to the call that buffered it.
    sites: std::collections::VecDeque<Option<Site>>,
    /// For each entry of `tb`'s FIFO, in the same order, the DRAM atomic's
    /// cell a buffered DRAM store goes to (`None`: a pool entry). See
    /// [`Sim::dram_store`].
    dram: std::collections::VecDeque<Option<DramCell>>,
    next_seq: u32,
}

impl TsoThread {
    /// Buffers `entry`, made by the call at `site`.
    fn push(&mut self, entry: Buffered<u64, u64>, site: Option<Site>) {
        self.tb.push(entry);
        self.sites.push_back(site);
        self.dram.push_back(None);
    }

    /// Buffers a store to the DRAM atomic whose cell is `cell`.
    #[cfg(all(perdure_shuttle, not(perdure_loom)))]
    fn push_dram(&mut self, entry: Buffered<u64, u64>, cell: DramCell) {
        self.tb.push(entry);
        self.sites.push_back(None);
        self.dram.push_back(Some(cell));
    }

    fn seq(&mut self) -> u32 {
        self.next_seq = self.next_seq.wrapping_add(1);
        self.next_seq
    }
}

/// A hook called after every persistence event with its index.
type CrashHook = Box<dyn FnMut(u64, &SimView<'_>) + Send>;

#[derive(Default)]
struct State {
    /// Recorded events, if tracing is on.
    trace: Option<Vec<SimEvent>>,
    /// Threads in order of their first recorded event.
    threads: Vec<ThreadKey>,
    memory: Pages,
    lines: BTreeMap<u64, Line>,
    /// Per thread, its write-backs that have taken effect (at the earliest)
    /// but are not yet certain: line offset and absolute sequence length.
    pending: Vec<(ThreadKey, Vec<(u64, usize)>)>,
    /// Per thread, its Px86 store buffer (Px86 model only).
    tso: Vec<(ThreadKey, TsoThread)>,
    /// The address of pool offset 0 in the attached pool's memory (0: not
    /// seen yet), learnt from the words the accessors are handed: where a
    /// buffered store's word is when it drains.
    mem_base: usize,
    /// The generator of drain choices.
    rng: u64,
    /// The thread of the access in progress.
    me: ThreadKey,
    /// The site of the last persistence event ([`crate::site`]).
    site: Option<Site>,
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

    /// The call that caused the event this hook runs for ([`crate::site`]).
    pub fn site(&self) -> Option<Site> {
        self.state.site
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
        let options = SimOptions {
            model: options.model.in_this_build(),
            ..options
        };
        Sim {
            options,
            state: std::sync::Mutex::new(State::fresh(&options)),
            hook: std::sync::Mutex::new(None),
            yield_hook: std::sync::OnceLock::new(),
        }
    }

    /// The model this simulator runs (module docs: a model-checker build
    /// runs `Sc`).
    pub fn model(&self) -> SimModel {
        self.options.model
    }

    fn thread_key(&self) -> ThreadKey {
        match self.options.thread_id {
            Some(h) => ThreadKey::Hooked(h()),
            None => ThreadKey::Facade(crate::sync::thread::current().id()),
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

    /// The state, locked, with [`State::me`] the calling thread.
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        let me = self.thread_key();
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.me = me;
        st
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

    /// Under Sc, runs `op` on the pool's word and records its effect with
    /// `record`, atomically with respect to other recorded accesses (Px86
    /// serves accesses from the simulator's memory instead, `px86_begin`).
    /// With OS threads the lock is held across both; under loom/shuttle the
    /// atomic `op` is a scheduling point and must run outside the lock
    /// (nothing preempts between it and the recording, which touches no
    /// model-checked primitive).
    #[inline]
    fn access<R>(&self, op: impl FnOnce() -> R, record: impl FnOnce(&mut State, &R) -> bool) -> R {
        self.yield_point();
        #[cfg(not(any(perdure_loom, perdure_shuttle)))]
        let r = {
            let mut st = self.state();
            let r = op();
            if record(&mut st, &r) {
                self.fire_locked(&st);
            }
            r
        };
        #[cfg(any(perdure_loom, perdure_shuttle))]
        let r = {
            let r = op();
            let mut st = self.state();
            if record(&mut st, &r) {
                self.fire_locked(&st);
            }
            r
        };
        r
    }

    fn px86(&self) -> bool {
        self.options.model == SimModel::Px86
    }

    /// Calls the crash hook, if any, with the state `st` (locked by the
    /// caller: the lock order is state, then hook).
    fn fire_locked(&self, st: &State) {
        let mut hook = self.hook.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(h) = hook.as_mut() {
            h(st.counts.events, &SimView { state: st });
        }
    }

    fn pending_of(st: &mut State) -> &mut Vec<(u64, usize)> {
        let me = st.me;
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
    fn rmw(
        &self,
        word: &AtomicU64,
        off: u64,
        op: impl FnOnce() -> u64,
        new_of: impl Fn(u64) -> u64,
    ) -> u64 {
        let at = site::take();
        if self.px86() {
            let mut st = self.px86_begin(true);
            Sim::note_word(&mut st, off, word);
            let old = Sim::visible(&st, off);
            let new = new_of(old);
            st.counts.rmw += 1;
            trace_event(&mut st, SimOp::Rmw, off, new);
            self.px86_locked_write(&mut st, &[(off, new)], false);
            st.site = at;
            self.fire_locked(&st);
            return old;
        }
        let completes = self.options.rmw_completes_flushes;
        self.access(op, |st, old| {
            let new = new_of(*old);
            st.counts.rmw += 1;
            trace_event(st, SimOp::Rmw, off, new);
            record_write(st, &[(off, new)], &[*old], false, false);
            if completes {
                Sim::complete_flushes(st);
            }
            st.site = at;
            true
        })
    }

    /// The calling thread's write-backs that have taken effect are certain.
    fn complete_flushes(st: &mut State) {
        Self::complete_flushes_where(st, |_| true);
    }

    /// The calling thread's write-backs of the lines `which` selects that
    /// have taken effect are certain.
    fn complete_flushes_where(st: &mut State, which: impl Fn(u64) -> bool) {
        let mine = Self::pending_of(st);
        let (pending, keep): (Vec<_>, Vec<_>) = mine.drain(..).partition(|&(l, _)| which(l));
        *mine = keep;
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

    // ---- Px86: store buffers -------------------------------------------

    /// The index of `who`'s Px86 state in `st.tso`, created if new.
    fn tso_index(st: &mut State, who: ThreadKey) -> usize {
        match st.tso.iter().position(|(t, _)| *t == who) {
            Some(i) => i,
            None => {
                st.tso.push((who, TsoThread::default()));
                st.tso.len() - 1
            }
        }
    }

    /// The index of the calling thread's Px86 state.
    fn my_index(st: &mut State) -> usize {
        let me = st.me;
        Self::tso_index(st, me)
    }

    /// A scheduling point under Px86: each thread's buffer head leaves with
    /// probability `drain_percent`, repeatedly; every leaving is an event
    /// (a crash point).
    fn scheduling_point(&self, st: &mut State) {
        if !self.px86() || st.tso.iter().all(|(_, t)| t.tb.is_empty()) {
            return;
        }
        let percent = u64::from(self.options.drain_percent.min(100));
        for i in 0..st.tso.len() {
            loop {
                if st.tso[i].1.tb.is_empty() {
                    break;
                }
                let roll = xorshift(&mut st.rng) % 100;
                if roll >= percent || !self.drain_one(st, i) {
                    break;
                }
            }
        }
    }

    /// Drains the calling thread's whole buffer (in order, each leaving an
    /// event).
    fn drain_own(&self, st: &mut State) {
        if !self.px86() {
            return;
        }
        let i = Sim::my_index(st);
        while !st.tso[i].1.tb.is_empty() {
            if !self.drain_one(st, i) {
                // The rules always let the head of a swept buffer leave;
                // not leaving would be a bug in this module.
                debug_assert!(false, "a swept buffer's head must be able to leave");
                break;
            }
        }
    }

    /// The head of thread `i`'s buffer leaves, if the rules let it: a store
    /// becomes visible (written to its word and appended to its line), a
    /// `pfence`/`psync` completes the thread's write-backs that took
    /// effect. Then the thread's pending entries that may take effect do.
    fn drain_one(&self, st: &mut State, i: usize) -> bool {
        let Some(head) = st.tso[i].1.tb.head_may_leave(line_of) else {
            return false;
        };
        st.tso[i].1.tb.pop_head();
        let site = st.tso[i].1.sites.pop_front().flatten();
        let who = st.tso[i].0;
        let me = std::mem::replace(&mut st.me, who);
        if let Some(cell) = st.tso[i].1.dram.pop_front().flatten() {
            // A DRAM store becomes visible: not a persistence event.
            if let Buffered::Store { val, .. } = head {
                cell.store(val, Ordering::SeqCst);
            }
            self.sweep(st, i);
            st.me = me;
            return true;
        }
        st.site = site;
        match head {
            Buffered::Store { loc, val, .. } => {
                // "Younger stores (to other lines) may become visible before
                // [a clwb] takes effect": a younger store to its line may
                // not, so the thread's write-backs of this line that have
                // taken effect are certain before this store is visible.
                Sim::complete_flushes_where(st, |l| l == line_of(loc));
                let old = self.write_word(st, loc, val);
                record_write(st, &[(loc, val)], &[old], false, false);
            }
            Buffered::Clflush { line, .. } => {
                Sim::flush_line_now(st, line);
                st.counts.events += 1;
            }
            Buffered::Sfence { .. } => {
                Sim::complete_flushes(st);
                st.counts.events += 1;
            }
        }
        self.sweep(st, i);
        st.me = me;
        self.fire_locked(st);
        true
    }

    /// A flush of `line` takes effect now: its mark rises to its length.
    fn flush_line_now(st: &mut State, line: u64) {
        if let Some(l) = st.lines.get_mut(&line) {
            l.hist.flush_takes_effect();
            if l.hist.is_settled() {
                l.settle();
            }
        }
    }

    /// A write-back of `line` by the calling thread takes effect now: until
    /// it is certain, it covers the line's writes so far.
    fn write_back_takes_effect(st: &mut State, line: u64) {
        if let Some(l) = st.lines.get(&line) {
            if !l.hist.is_settled() {
                let abs = l.folded + l.hist.len();
                Sim::pending_of(st).push((line, abs));
            }
        }
    }

    /// A locked instruction completed: it completes the thread's
    /// write-backs when the model says so.
    fn locked_completes(&self, st: &mut State) {
        if self.options.rmw_completes_flushes {
            Sim::complete_flushes(st);
        }
    }

    /// The visible value of the word at `off` (Px86: the simulator's memory).
    fn visible(st: &State, off: u64) -> u64 {
        st.memory.get((off / 8) as usize).unwrap_or(0)
    }

    /// Under Px86, `val` becomes visible at the word at `off` (written
    /// through to the pool's real word in a `std` build); returns the
    /// previous visible value. The caller records the write.
    fn write_word(&self, st: &mut State, off: u64, val: u64) -> u64 {
        let old = Self::visible(st, off);
        // Only the `std` build writes the real word (module docs).
        #[cfg(any(perdure_loom, perdure_shuttle))]
        let _ = val;
        #[cfg(not(any(perdure_loom, perdure_shuttle)))]
        if st.mem_base != 0 {
            // SAFETY: `mem_base` is the address of offset 0 of the mapping
            // of the pool this simulator is attached to (a `std` build maps
            // the pool contiguously, and `note_word` learnt the base from a
            // word of it); `off` is a word offset inside the pool, so this
            // is one of its aligned `AtomicU64`s. That pool owns this
            // simulator, so the mapping lives while its methods run, and
            // `attach` forgets the base when a pool takes the simulator.
            unsafe { &*((st.mem_base + off as usize) as *const AtomicU64) }
                .store(val, Ordering::Release);
        }
        old
    }

    /// Learns where the pool's memory is from `word`, the word at `off`
    /// (for [`Sim::write_word`]).
    fn note_word(st: &mut State, off: u64, word: &AtomicU64) {
        let base = (std::ptr::from_ref(word) as usize).wrapping_sub(off as usize);
        debug_assert!(
            st.mem_base == 0 || st.mem_base == base,
            "one contiguous pool"
        );
        st.mem_base = base;
    }

    /// Under Px86, the start of an access by the calling thread: the
    /// scheduling point, then (for a locked instruction) its buffer drains.
    fn px86_begin(&self, locked: bool) -> std::sync::MutexGuard<'_, State> {
        self.yield_point();
        let mut st = self.state();
        self.scheduling_point(&mut st);
        if locked {
            self.drain_own(&mut st);
        }
        st
    }

    /// Under Px86, a locked write of `words` (one or two, one line) that
    /// became visible at once, with its recording and the crash hook.
    fn px86_locked_write(&self, st: &mut State, words: &[(u64, u64)], split: bool) {
        let old: Vec<u64> = words
            .iter()
            .map(|&(off, val)| self.write_word(st, off, val))
            .collect();
        record_write(st, words, &old, split, false);
        self.locked_completes(st);
    }

    /// Thread `i`'s pending entries that the rules let take effect do so, at
    /// the earliest: a write-back counts as taken effect now (certain at the
    /// thread's next completed `pfence`), a non-temporal store becomes
    /// visible and persisted.
    fn sweep(&self, st: &mut State, i: usize) {
        let who = st.tso[i].0;
        let me = std::mem::replace(&mut st.me, who);
        let mut k = 0;
        while k < st.tso[i].1.tb.pending().len() {
            if !st.tso[i].1.tb.may_take_effect(k, line_of) {
                k += 1;
                continue;
            }
            match st.tso[i].1.tb.take_pending(k) {
                Pending::Flush { line, .. } => Sim::write_back_takes_effect(st, line),
                Pending::Nt { loc, val, .. } => {
                    let old = self.write_word(st, loc, val);
                    record_write(st, &[(loc, val)], &[old], false, true);
                }
            }
        }
        st.me = me;
    }

    /// [`Sim::sweep`] of the calling thread.
    fn sweep_own(&self, st: &mut State) {
        let i = Sim::my_index(st);
        self.sweep(st, i);
    }

    /// The calling thread's buffer, under Px86, with a fresh program-order
    /// index for its next entry.
    fn own(st: &mut State) -> (&mut TsoThread, u32) {
        let i = Sim::my_index(st);
        let t = &mut st.tso[i].1;
        let seq = t.seq();
        (t, seq)
    }

    // ---- Px86: DRAM atomics (`sync/tso.rs`, shuttle build) --------------

    /// The location a DRAM atomic's buffered stores carry: its cell's
    /// address with the top bit set, which no pool offset has (so no pool
    /// load forwards from it and no `pwb` of a pool line waits for it). The
    /// cell is kept alive by the entries naming it, so the address is not
    /// reused while any is buffered.
    #[cfg(all(perdure_shuttle, not(perdure_loom)))]
    fn dram_loc(cell: &DramCell) -> u64 {
        DRAM_TAG | (std::sync::Arc::as_ptr(cell) as u64)
    }

    /// A load of a DRAM atomic by the calling thread: a scheduling point,
    /// then its newest own buffered store to it, else memory (Px86; under
    /// Sc, memory).
    #[cfg(all(perdure_shuttle, not(perdure_loom)))]
    pub(crate) fn dram_load(&self, cell: &DramCell) -> u64 {
        if !self.px86() {
            return cell.load(Ordering::SeqCst);
        }
        let mut st = self.state();
        self.scheduling_point(&mut st);
        let i = Sim::my_index(&mut st);
        st.tso[i]
            .1
            .tb
            .forward(Self::dram_loc(cell))
            .unwrap_or_else(|| cell.load(Ordering::SeqCst))
    }

    /// A store of `val` to a DRAM atomic by the calling thread: into its
    /// store buffer, behind its pool stores (Px86), unless `locked` (a
    /// `SeqCst` store, an `xchg`: the buffer drains and the store is visible
    /// at once). Under Sc, visible at once.
    #[cfg(all(perdure_shuttle, not(perdure_loom)))]
    pub(crate) fn dram_store(&self, cell: &DramCell, val: u64, locked: bool) {
        if !self.px86() {
            cell.store(val, Ordering::SeqCst);
            return;
        }
        if locked {
            self.dram_locked(|| cell.store(val, Ordering::SeqCst));
            return;
        }
        let mut st = self.state();
        self.scheduling_point(&mut st);
        let loc = Self::dram_loc(cell);
        let (t, seq) = Self::own(&mut st);
        t.push_dram(Buffered::Store { seq, loc, val }, cell.clone());
    }

    /// A locked instruction `op` on DRAM by the calling thread: a
    /// scheduling point, then its buffer drains, `op` runs, and the thread's
    /// write-backs complete if the model says a locked RMW completes them.
    #[cfg(all(perdure_shuttle, not(perdure_loom)))]
    pub(crate) fn dram_locked<R>(&self, op: impl FnOnce() -> R) -> R {
        if !self.px86() {
            return op();
        }
        let mut st = self.state();
        self.scheduling_point(&mut st);
        self.drain_own(&mut st);
        let r = op();
        self.locked_completes(&mut st);
        r
    }

    /// A `fence(SeqCst)` (an `mfence`) of the calling thread under Px86: its
    /// buffer drains, and its write-backs complete when the model says a
    /// locked instruction completes them ([`SimOptions::rmw_completes_flushes`],
    /// x86's rule for `mfence` and locked RMWs alike; off by default, as
    /// `Msync` gives neither any persistence power, so portable code needs
    /// its `pfence`). Not an event of its own. Nothing under Sc (as in the
    /// `std` build, where the simulator does not see `std`'s fences).
    #[cfg(all(perdure_shuttle, not(perdure_loom)))]
    pub(crate) fn dram_fence(&self) {
        if !self.px86() {
            return;
        }
        let mut st = self.state();
        self.scheduling_point(&mut st);
        self.drain_own(&mut st);
        self.locked_completes(&mut st);
    }

    /// Drains the calling thread's store buffer (Px86; nothing under Sc):
    /// the explorer calls it when an operation returns, the point at which
    /// a caller could observe the response (module docs).
    pub fn drain_thread(&self) {
        if !self.px86() {
            return;
        }
        let mut st = self.state();
        self.drain_own(&mut st);
    }

    /// Drains every thread's store buffer (Px86; nothing under Sc).
    pub fn drain_all(&self) {
        if !self.px86() {
            return;
        }
        let mut st = self.state();
        for i in 0..st.tso.len() {
            while self.drain_one(&mut st, i) {}
        }
    }

    /// An `mfence` of the calling thread (not a [`Backend`] operation: code
    /// reaches `mfence` through `std`, outside the simulator; the litmus
    /// cross-check uses it): under Px86 the buffer drains and the thread's
    /// write-backs complete; under Sc the write-backs complete.
    pub fn mfence(&self) {
        self.yield_point();
        let mut st = self.state();
        self.scheduling_point(&mut st);
        self.drain_own(&mut st);
        if self.px86() {
            let i = Sim::my_index(&mut st);
            // Pending entries all took effect with the drain's sweeps.
            debug_assert!(st.tso[i].1.tb.is_drained());
        }
        Sim::complete_flushes(&mut st);
        st.site = None;
        st.counts.events += 1;
        self.fire_locked(&st);
    }

    /// A `clflush` of the line of `off` by the calling thread (not a
    /// [`Backend`] operation; the litmus cross-check uses it): ordered like
    /// a store under Px86, immediate under Sc. Either way, when it takes
    /// effect the line's mark rises to its current length.
    pub fn clflush(&self, off: u64) {
        self.yield_point();
        let mut st = self.state();
        self.scheduling_point(&mut st);
        if self.px86() {
            let (t, seq) = Self::own(&mut st);
            t.push(
                Buffered::Clflush {
                    seq,
                    line: line_of(off),
                },
                None,
            );
        } else {
            Sim::flush_line_now(&mut st, line_of(off));
            st.site = None;
            st.counts.events += 1;
            self.fire_locked(&st);
        }
    }
}

impl State {
    fn fresh(options: &SimOptions) -> State {
        State {
            rng: options.drain_seed | 1,
            ..State::default()
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
        st.memory.set((off / 8) as usize, val);
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
        site: st.site,
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
    /// The call that caused that event ([`crate::site`]), if it came
    /// through a `#[track_caller]` primitive.
    pub site: Option<Site>,
    memory: Pages,
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
        self.image(choice, fill).words()
    }

    /// Image `choice` with volatile regions filled per `fill`, as a
    /// [`CrashImage`]: the words [`CrashPoint::materialize`] returns, sharing
    /// the pages the crash point's memory and the image agree on (a pool is
    /// made from it with [`crate::Pool::volatile_from_image`] without copying
    /// the pool's untouched pages).
    pub fn image(&self, choice: &ImageChoice, fill: VolatileFill) -> CrashImage {
        site::crashed(self.site);
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
                    words.set((line.off / 8) as usize + i, *v);
                }
            }
        }
        let mut rng = match fill {
            VolatileFill::Zeroed => 0,
            VolatileFill::Garbage { seed } => seed | 1,
        };
        for &(off, len) in &self.volatile {
            for i in (off / 8)..((off + len).div_ceil(8)) {
                words.set(i as usize, if rng == 0 { 0 } else { xorshift(&mut rng) });
            }
        }
        CrashImage::new(words)
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

    fn note_site(&self, site: &'static std::panic::Location<'static>) {
        site::note(site);
    }

    unsafe fn raw_pwb(&self, _addr: *const u8) {}

    fn raw_pfence(&self) {
        let at = site::take();
        self.yield_point();
        let mut st = self.state();
        self.scheduling_point(&mut st);
        st.counts.pfence += 1;
        trace_event(&mut st, SimOp::Pfence, 0, 0);
        if self.px86() {
            // An sfence: into the buffer; it completes when it leaves.
            let (t, seq) = Sim::own(&mut st);
            t.push(Buffered::Sfence { seq }, at);
            self.sweep_own(&mut st);
        } else {
            Sim::complete_flushes(&mut st);
            st.site = at;
            st.counts.events += 1;
            self.fire_locked(&st);
        }
    }

    fn raw_psync(&self) {
        let at = site::take();
        self.yield_point();
        let mut st = self.state();
        self.scheduling_point(&mut st);
        st.counts.psync += 1;
        trace_event(&mut st, SimOp::Psync, 0, 0);
        if self.px86() {
            // An sfence the thread waits for: its whole buffer drains.
            let (t, seq) = Sim::own(&mut st);
            t.push(Buffered::Sfence { seq }, at);
            self.drain_own(&mut st);
        } else {
            Sim::complete_flushes(&mut st);
            st.site = at;
            st.counts.events += 1;
            self.fire_locked(&st);
        }
    }

    fn attach(&self, pool_size: u64, initial: &mut dyn FnMut() -> Vec<u64>) {
        let mut st = self.state();
        *st = State::fresh(&self.options);
        st.memory = Pages::from_words(&initial(), (pool_size / 8) as usize);
    }

    fn attach_image(&self, pool_size: u64, image: &CrashImage) {
        if image.len() as u64 * 8 != pool_size {
            return self.attach(pool_size, &mut || image.words());
        }
        let mut st = self.state();
        *st = State::fresh(&self.options);
        st.memory = image.pages().clone();
    }

    fn load(&self, word: &AtomicU64, off: u64, order: Ordering) -> u64 {
        if self.px86() {
            // "`load r x` reads the newest own buffered store to `x`, else
            // visible memory."
            let mut st = self.px86_begin(false);
            let i = Sim::my_index(&mut st);
            let v = st.tso[i]
                .1
                .tb
                .forward(off)
                .unwrap_or_else(|| Sim::visible(&st, off));
            st.counts.loads += 1;
            trace_event(&mut st, SimOp::Load, off, v);
            return v;
        }
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
        let at = site::take();
        if self.px86() {
            // A `SeqCst` store is an `xchg` on x86-64: locked, visible at
            // once; any other is a plain `mov`: into the store buffer.
            let locked = order == Ordering::SeqCst;
            let mut st = self.px86_begin(locked);
            st.counts.stores += 1;
            trace_event(&mut st, SimOp::Store, off, val);
            Sim::note_word(&mut st, off, word);
            if locked {
                self.px86_locked_write(&mut st, &[(off, val)], false);
                st.site = at;
                self.fire_locked(&st);
            } else {
                let (t, seq) = Sim::own(&mut st);
                t.push(Buffered::Store { seq, loc: off, val }, at);
            }
            return;
        }
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
                // A store to a line the thread wrote back is visible only
                // after the write-back took effect (see Px86 above).
                Sim::complete_flushes_where(st, |l| l == line_of(off));
                record_write(st, &[(off, val)], &[*old], false, false);
                st.site = at;
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
        let at = site::take();
        if self.px86() {
            let mut st = self.px86_begin(true);
            Sim::note_word(&mut st, off, word);
            st.counts.cas += 1;
            let found = Sim::visible(&st, off);
            let r = if found == current {
                trace_event(&mut st, SimOp::Cas, off, new);
                self.px86_locked_write(&mut st, &[(off, new)], false);
                Ok(found)
            } else {
                trace_event(&mut st, SimOp::CasFailed, off, found);
                // A failed CAS is still a locked instruction.
                self.locked_completes(&mut st);
                Err(found)
            };
            if r.is_ok() {
                st.site = at;
                self.fire_locked(&st);
            }
            return r;
        }
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
                    st.site = at;
                }
                if completes {
                    Sim::complete_flushes(st);
                }
                wrote
            },
        )
    }

    fn swap(&self, word: &AtomicU64, off: u64, val: u64, order: Ordering) -> u64 {
        self.rmw(word, off, || word.swap(val, order), |_| val)
    }

    fn fetch_add(&self, word: &AtomicU64, off: u64, val: u64, order: Ordering) -> u64 {
        self.rmw(
            word,
            off,
            || word.fetch_add(val, order),
            |old| old.wrapping_add(val),
        )
    }

    fn ntstore(&self, word: &AtomicU64, off: u64, val: u64) {
        let at = site::take();
        if self.px86() {
            // Pending; it takes effect (visible and persisted) at the
            // earliest moment the rules allow.
            let mut st = self.px86_begin(false);
            st.counts.ntstores += 1;
            trace_event(&mut st, SimOp::NtStore, off, val);
            Sim::note_word(&mut st, off, word);
            let (t, seq) = Sim::own(&mut st);
            t.tb.push_pending(Pending::Nt { seq, loc: off, val });
            let before = st.counts.events;
            self.sweep_own(&mut st);
            if st.counts.events != before {
                // Swept now, it is this call's event; swept later (behind
                // older stores of its line), the event is attributed to the
                // entry whose leaving let it take effect.
                st.site = at;
                self.fire_locked(&st);
            }
            return;
        }
        self.access(
            || word.swap(val, Ordering::AcqRel),
            |st, old| {
                st.counts.ntstores += 1;
                trace_event(st, SimOp::NtStore, off, val);
                record_write(st, &[(off, val)], &[*old], false, true);
                st.site = at;
                true
            },
        );
    }

    /// Under Px86 every access is served from the simulator's memory under
    /// its lock, and in a `std` build an Sc access holds the lock across the
    /// word's operation: a 16-byte CAS is one event to 8-byte accesses. In a
    /// loom or shuttle build an Sc access runs the (emulated) operation
    /// outside the lock: not.
    fn dword_cas_atomic_with_words(&self) -> bool {
        self.px86() || !cfg!(any(perdure_loom, perdure_shuttle))
    }

    fn compare_exchange_16(
        &self,
        words: &[AtomicU64; 2],
        off: u64,
        current: u128,
        new: u128,
    ) -> Result<u128, u128> {
        let at = site::take();
        let split = !self.options.dword_persists_atomically;
        if self.px86() {
            let mut st = self.px86_begin(true);
            Sim::note_word(&mut st, off, &words[0]);
            st.counts.dword_cas += 1;
            let found =
                u128::from(Sim::visible(&st, off)) | u128::from(Sim::visible(&st, off + 8)) << 64;
            if found != current {
                self.locked_completes(&mut st);
                return Err(found);
            }
            if current != new {
                trace_event(&mut st, SimOp::DwordCas, off, new as u64);
                trace_event(&mut st, SimOp::DwordCas, off + 8, (new >> 64) as u64);
                let pair = [(off, new as u64), (off + 8, (new >> 64) as u64)];
                self.px86_locked_write(&mut st, &pair, split);
                st.site = at;
                self.fire_locked(&st);
            } else {
                self.locked_completes(&mut st);
            }
            return Ok(found);
        }
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
                    st.site = at;
                }
                if completes {
                    Sim::complete_flushes(st);
                }
                wrote
            },
        )
    }

    fn record_pwb(&self, off: u64, len: u64) {
        let at = site::take();
        self.yield_point();
        let mut st = self.state();
        self.scheduling_point(&mut st);
        let first = line_of(off);
        let mut line_off = first;
        while line_off < off + len {
            st.counts.pwb += 1;
            trace_event(&mut st, SimOp::Pwb, line_off, 0);
            if self.px86() {
                let (t, seq) = Sim::own(&mut st);
                t.tb.push_pending(Pending::Flush {
                    seq,
                    line: line_off,
                });
            } else {
                Sim::write_back_takes_effect(&mut st, line_off);
            }
            line_off += LINE;
        }
        if self.px86() {
            self.sweep_own(&mut st);
        }
        st.site = at;
        st.counts.events += 1;
        self.fire_locked(&st);
    }
}

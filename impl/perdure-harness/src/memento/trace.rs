//! Protocol-level traces of Memento's detectable CAS and of MSQ-mmt-indel
//! (feature `check`; `perdure trace memento-cas`, `perdure trace
//! memento-queue`), for trace validation against `specs/memento/` with
//! TLC (`traces/memento/`, `traces/SCHEMA.md`).
//!
//! The real Rust code runs unmodified on the [`Sim`] backend with its event
//! trace on. Threads are serialised by a seeded scheduler (Sim's yield hook:
//! at every persistent access the running thread may hand over to another,
//! drawn from the seed), so a seed is one reproducible interleaving; the
//! timestamp source is the deterministic counter clock. With `--crash`, a
//! full crash is taken at a persistence event drawn from the seed: the
//! simulator's state there is captured, one allowed crash image is drawn,
//! the runtime is recovered on it ([`Runtime::open_with`]) and every thread
//! resumes its root operations (in recovery mode), traced too.
//!
//! **Markers.** Each thread announces the start and end of its root
//! operations by plain stores to a per-thread marker word outside the
//! runtime's area (one line per thread). They go through the simulator like
//! every access, so they are ordered with the protocol's events, and they
//! name the simulator's thread numbers (Memento thread ids are not in
//! [`SimEvent`]). Nothing in the library is instrumented.
//!
//! **Detectable CAS** (`traces/memento/DetectableCASTrace.tla`, which
//! replays a trace through `INSTANCE DetectableCAS`). One location,
//! `threads` threads, each running `ops` root operations of one detectable
//! CAS each; the runs alternate between x86's locked RMWs completing the
//! thread's write-backs (`SimOptions::rmw_completes_flushes`, as the spec's
//! CASPLAIN does) and Sim's default (the code fences before each locked RMW
//! it relies on), with the seed's CASMEMENTOCLEAR between root operations
//! (`ClearMode::Zero`, the spec's E0–E3). Every Sim event of a protocol
//! word or line is one step: loads of the location (`LoadLoc`) and of HELP
//! (`LoadHelp`), CASes on them (`FirstCas`/`SecondCas`/`HelpClean`/`CasFail`,
//! `HelpCas`/`HelpCasFail`), the memento's stores (`Checkpoint`), the
//! status line's (`OwnFloor`, `Status`), every `Pwb` of those lines and
//! every `Fence` of a Memento thread, `Invoke`/`Return` from the markers
//! and `Crash` with the image's words.
//!
//! **Queue** (`traces/memento/queue/InsDelQueueTrace.tla`, which replays a
//! trace through `INSTANCE InsDelQueue`). MSQ-mmt-indel, each thread
//! enqueueing and dequeueing in a seeded order; the trace is the operations'
//! history (`invoke`/`return`/`crash`/`recover`, `traces/SCHEMA.md`) and,
//! until a crash, one step per Sim event of a queue word (`QueueMap`),
//! ending with a drain of the (recovered) queue.
//!
//! Several runs go into one trace, each opening with a `Begin` step: the
//! validation spec restarts there, so one TLC run checks them all.

mod clevel;

use crate::traces::crash_image;
use perdure_memento::ds::decode_opt;
use perdure_memento::ds::msq::{Msq, MsqKind, QueueMmt};
use perdure_memento::word::{CasTs, CasWord};
use perdure_memento::ClockKind;
use perdure_memento::{CasMmt, InsDelAtomic, UniqueCasAtomic};
use perdure_memento::{ClearMode, Config, MementoError, Runtime};
use perdure_pm::sim::{SimEvent, SimOp};
use perdure_pm::{Pool, Sim, SimOptions};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

const BASE: u64 = 4096;
const HEAP: u64 = 4 << 20;
const LINE: u64 = 64;
/// Marker kinds (low bits of a marker word; the operation index above).
const MK_INVOKE: u64 = 1;
const MK_RETURN: u64 = 2;
/// Errors of a traced run.
pub type TraceError = crate::traces::TraceError<MementoError, Tamper>;

/// The most threads a trace has.
pub const MAX_THREADS: usize = 4;
/// The most root operations per thread.
pub const MAX_OPS: u64 = 6;

/// What to trace: threads 1..=[`MAX_THREADS`], root operations per
/// thread 1..=[`MAX_OPS`]; the tampering alters the recorded trace ([`tamper`]).
pub type TraceOptions = perdure_check::trace::TraceOptions<Object, Tamper>;

use perdure_check::sched::mix;
use perdure_check::trace::Named;

/// The seeded scheduler (shared with the other trace producers).
use perdure_check::sched;

fn config(threads: usize) -> Config {
    Config {
        threads,
        heap_bytes: HEAP,
        clock: ClockKind::Counter,
    }
}

/// The area after the runtime: line 0 the CAS location, line `t` thread
/// `t`'s marker (word 0: kind and index, word 1: result).
fn extra<M: perdure_memento::Memento>(threads: usize) -> u64 {
    perdure_memento::__align_up(
        BASE + Runtime::<Sim, M>::required_bytes(&config(threads)),
        LINE,
    )
}

fn pool_size<M: perdure_memento::Memento>(threads: usize) -> u64 {
    perdure_memento::__align_up(extra::<M>(threads) + LINE * (threads as u64 + 1), 4096)
}

/// The runtime on `pool` as the traced runs use it, clearing mementos the
/// `clear` way.
fn open_runtime<M: perdure_memento::Memento>(
    pool: &Pool<Sim>,
    patience: u64,
    clear: ClearMode,
) -> Result<Runtime<'_, Sim, M>, TraceError> {
    let mut rt = Runtime::<Sim, M>::open_with(pool, BASE, ClockKind::Counter)?;
    rt.set_clear_mode(clear);
    rt.set_patience(patience);
    Ok(rt)
}

/// The queue's runtime and the recovered queue.
fn open_queue(
    pool: &Pool<Sim>,
    patience: u64,
) -> Result<(Runtime<'_, Sim, QueueMmt>, Msq), TraceError> {
    let rt = open_runtime::<QueueMmt>(pool, patience, ClearMode::Floor)?;
    let q = Msq::at(MsqKind::Indel, rt.object_root());
    q.recover(pool)?;
    Ok((rt, q))
}

/// The simulator of a run: with x86's locked RMWs completing the thread's
/// write-backs (as `DetectableCAS.tla` models every CASPLAIN), or Sim's
/// default (the code then fences before each locked RMW it relies on).
fn sim(rmw_fences: bool) -> Sim {
    Sim::new(SimOptions {
        rmw_completes_flushes: rmw_fences,
        ..SimOptions::default()
    })
}

/// Whether the CAS run `run` uses x86's locked RMWs: the runs alternate,
/// the first (and every even one) does.
fn cas_rmw_fences(run: u64) -> bool {
    run % 2 == 0
}

fn new_pool(size: u64, rmw_fences: bool) -> Result<Pool<Sim>, TraceError> {
    Ok(Pool::volatile("trace-memento", size, sim(rmw_fences))?)
}

/// A marker store by thread `tid` through its handle.
fn mark<M: perdure_memento::Memento>(
    h: &mut perdure_memento::Handle<'_, '_, Sim, M>,
    at: u64,
    kind: u64,
    index: u64,
    result: u64,
) {
    h.store(at + 8, result);
    h.store(at, kind | (index << 2));
}

/// Runs thread `tid`'s root operations from its next one up to `ops`, each
/// between its invoke and return markers in the thread's marker line at
/// `markers`; `body` is the operation of the given index.
fn run_marked<M: perdure_memento::Memento>(
    rt: &Runtime<'_, Sim, M>,
    tid: usize,
    markers: u64,
    ops: u64,
    mut body: impl FnMut(&mut perdure_memento::Handle<'_, '_, Sim, M>, &mut M, u64) -> u64,
) {
    let Ok(mut h) = rt.handle(tid) else {
        return;
    };
    let at = markers + LINE * tid as u64;
    loop {
        let i = rt.next_op(tid);
        if i >= ops {
            break;
        }
        mark(&mut h, at, MK_INVOKE, i, 0);
        let r = h.run_root(|h, mmt, _| body(h, mmt, i)).result;
        mark(&mut h, at, MK_RETURN, i, r);
    }
}

/// The events of one run, cut at the crash point if there is one, and the
/// crash image's words.
struct Part {
    events: Vec<SimEvent>,
}

/// Runs `body` for workers `1..=threads` under the scheduler; returns
/// whether the schedule stayed the seed's.
fn scheduled(threads: usize, seed: u64, body: impl Fn(usize) + Sync) -> Result<bool, TraceError> {
    sched::start(threads, seed);
    let panicked = std::thread::scope(|s| {
        let hs: Vec<_> = (1..=threads)
            .map(|tid| {
                let body = &body;
                s.spawn(move || {
                    sched::enter(tid - 1);
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(tid)));
                    sched::exit(tid - 1);
                    r.is_err()
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap_or(true))
            .fold(false, |a, b| a | b)
    });
    let serial = sched::stop();
    if panicked {
        return Err(TraceError::Panicked);
    }
    Ok(serial)
}

/// Records a run of `work` on `pool`, crashing (capturing) at event `crash_at`
/// if given: the events up to the crash, and the crash image (words).
fn record(
    pool: &Pool<Sim>,
    threads: usize,
    seed: u64,
    crash_at: Option<u64>,
    image_seed: u64,
    work: impl Fn(usize) + Sync,
) -> Result<(Part, Option<Vec<u64>>, u64), TraceError> {
    let captured: Arc<Mutex<Option<(perdure_pm::sim::CrashPoint, usize)>>> =
        Arc::new(Mutex::new(None));
    let start = pool.backend().counts().events;
    if let Some(at) = crash_at {
        let c = captured.clone();
        pool.backend().set_crash_hook(move |event, view| {
            let mut c = c.lock().unwrap_or_else(|e| e.into_inner());
            if c.is_none() && event >= start + at {
                *c = Some((view.capture(), view.trace_len()));
            }
        });
    }
    pool.backend().set_yield_hook(sched::yield_now);
    pool.backend().start_trace();
    let serial = scheduled(threads, seed, work)?;
    pool.backend().clear_crash_hook();
    let mut events = pool.backend().take_trace();
    let total = pool.backend().counts().events - start;
    TraceError::serialised(serial, seed)?;
    let image = match captured.lock().unwrap_or_else(|e| e.into_inner()).take() {
        None => None,
        Some((cp, len)) => {
            events.truncate(len);
            let image = crash_image(&cp, image_seed, mix(image_seed));
            Some(image.ok_or_else(|| TraceError::unmapped(seed, "no crash image"))?)
        }
    };
    Ok((Part { events }, image, total))
}

/// Simulator thread → Memento thread id, learnt from the markers.
#[derive(Default)]
struct Threads {
    of: HashMap<usize, usize>,
}

impl Threads {
    fn learn(&mut self, e: &SimEvent, markers: u64, threads: usize) -> Option<(usize, u64)> {
        if e.op != SimOp::Store || e.off < markers + LINE {
            return None;
        }
        let rel = e.off - markers;
        let tid = (rel / LINE) as usize;
        if tid == 0 || tid > threads {
            return None;
        }
        self.of.insert(e.thread, tid);
        Some((tid, rel % LINE))
    }
}

// ---------------------------------------------------------------------------
// Detectable CAS.

/// The arguments of thread `tid`'s operation `i` in run `seed`: `new` is
/// unique to (tid, i) — no value comes back, so the ABA precondition of
/// `cas.rs` holds — and `old` is the thread's previous value, another
/// thread's, or 0, as the seed draws.
fn cas_args(seed: u64, tid: usize, i: u64, threads: usize) -> (u64, u64) {
    let val = |t: u64, j: u64| if j == 0 { 0 } else { t * 100 + j };
    let r = mix(seed ^ ((tid as u64) << 32) ^ i);
    let old = match r % 4 {
        0 | 1 => val(tid as u64, i),
        2 => val(1 + (r >> 8) % threads as u64, i),
        _ => val(1 + (r >> 16) % threads as u64, i.saturating_sub(1)),
    };
    (old, val(tid as u64, i + 1))
}

fn loc_json(w: u64) -> Value {
    let c = CasWord::decode(w);
    json!({"par": c.parity as u8, "tid": c.tid, "val": c.value})
}

fn ts_json(w: u64) -> Value {
    let m = CasTs::decode(w);
    json!({"par": m.parity as u8, "fail": m.fail, "ts": m.ts})
}

fn step(action: &str, thread: usize, mut fields: Value) -> Value {
    fields["type"] = json!("step");
    fields["action"] = json!(action);
    fields["thread"] = json!(thread);
    fields
}

/// The words of a thread's status line the mapping reads (`runtime.rs`):
/// `status` = (next operation, clearing) and `own_floor`.
const ST_STATUS: u64 = 0;
const ST_OWN_FLOOR: u64 = 32;

fn status_json(w: u64) -> Value {
    json!({"next": w >> 1, "clr": w & 1 == 1})
}

/// Maps the CAS run's events to steps, one step per Sim event of a
/// protocol word or line (`DetectableCASTrace.tla` matches each to one
/// action of `DetectableCAS.tla`); `loc` and `help` hold the words as the
/// mapping last saw them.
struct CasMap {
    seed: u64,
    threads: usize,
    loc_off: u64,
    markers: u64,
    /// Per thread: its CAS memento word (the root memento) and status line.
    mmt: Vec<u64>,
    status: Vec<u64>,
    help_line: Vec<u64>,
    loc: u64,
    help: Vec<[u64; 2]>,
    tids: Threads,
    result: Vec<u64>,
    /// Per thread, the operation it is in (invoked, not returned).
    open: Vec<Option<u64>>,
    /// Per thread, the (owner, parity) of its last HELP CAS, until its next
    /// CAS on the location.
    helping: Vec<Option<(usize, usize)>>,
}

/// Which protocol word or line an event touches.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Loc,
    /// Thread u's memento word (`word`) or another word of its line.
    Mmt {
        u: usize,
        word: bool,
    },
    /// HELP\[par\]\[u\] (one line for both parities).
    Help {
        u: usize,
        par: usize,
    },
    /// A word of thread u's status line, at this offset in the line.
    Status {
        u: usize,
        at: u64,
    },
}

impl Target {
    fn line(self) -> (&'static str, usize) {
        match self {
            Target::Loc => ("loc", 0),
            Target::Mmt { u, .. } => ("mmt", u),
            Target::Help { u, .. } => ("help", u),
            Target::Status { u, .. } => ("status", u),
        }
    }
}

impl CasMap {
    fn target(&self, off: u64) -> Option<Target> {
        let l = off / LINE * LINE;
        if l == self.loc_off {
            return Some(Target::Loc);
        }
        if let Some(t) = self.mmt.iter().position(|&m| m / LINE * LINE == l) {
            return Some(Target::Mmt {
                u: t + 1,
                word: off == self.mmt[t],
            });
        }
        if let Some(u) = self.help_line.iter().position(|&h| h == l) {
            return Some(Target::Help {
                u: u + 1,
                par: ((off % LINE) / 8) as usize,
            });
        }
        if let Some(u) = self.status.iter().position(|&h| h == l) {
            return Some(Target::Status {
                u: u + 1,
                at: off % LINE,
            });
        }
        None
    }

    fn err(&self, reason: String) -> TraceError {
        TraceError::unmapped(self.seed, reason)
    }

    /// A marker store: `Invoke` or `Return` (or the result word, kept).
    fn marker(&mut self, e: &SimEvent, tid: usize, word: u64, out: &mut Vec<Value>) {
        if word == 8 {
            self.result[tid] = e.val;
            return;
        }
        let (kind, i) = (e.val & 3, e.val >> 2);
        if kind == MK_INVOKE {
            let (old, new) = cas_args(self.seed, tid, i, self.threads);
            self.open[tid] = Some(i);
            out.push(step(
                "Invoke",
                tid,
                json!({"op": i, "old": old, "new": new}),
            ));
        } else if kind == MK_RETURN {
            self.open[tid] = None;
            let res = if self.result[tid] == 1 { "OK" } else { "Err" };
            out.push(step("Return", tid, json!({"op": i, "res": res})));
        }
    }

    /// A CAS on the location: which of the seed's CASes it is, by the words.
    fn loc_cas(&mut self, t: usize, e: &SimEvent) -> Value {
        let (o, n) = (CasWord::decode(self.loc), CasWord::decode(e.val));
        // A clean by a thread right after its HELP CAS is LOADHELP's L17,
        // even on its own word (left over from before a crash).
        let helped = self.helping[t].take() == Some((o.tid, o.parity as usize));
        let s = match (o.tid, n.tid) {
            (0, nt) if nt != 0 => step(
                "FirstCas",
                t,
                json!({"par": n.parity as u8, "old": o.value, "new": n.value}),
            ),
            (ot, 0) if ot == t && !helped => step(
                "SecondCas",
                t,
                json!({"par": o.parity as u8, "val": o.value}),
            ),
            (ot, 0) if ot != 0 => step(
                "HelpClean",
                t,
                json!({"owner": ot, "par": o.parity as u8, "val": o.value}),
            ),
            _ => step("Unknown", t, json!({"from": self.loc, "to": e.val})),
        };
        self.loc = e.val;
        s
    }

    fn map(&mut self, events: &[SimEvent], out: &mut Vec<Value>) -> Result<(), TraceError> {
        for e in events {
            if let Some((tid, word)) = self.tids.learn(e, self.markers, self.threads) {
                self.marker(e, tid, word, out);
                continue;
            }
            if matches!(e.op, SimOp::Pfence | SimOp::Psync) {
                // Every fence of a Memento thread: the spec drains the thread's
                // pending write-backs there (or it has none: a stuttering step).
                if let Some(&t) = self.tids.of.get(&e.thread) {
                    out.push(step("Fence", t, json!({})));
                }
                continue;
            }
            let Some(target) = self.target(e.off) else {
                continue;
            };
            if let (SimOp::Load, Target::Status { .. }) = (e.op, target) {
                continue; // the next operation's index, read before its marker
            }
            let Some(&t) = self.tids.of.get(&e.thread) else {
                return Err(self.err(format!("{e:?} by a thread without a marker")));
            };
            let s = match (e.op, target) {
                (SimOp::Pwb, _) => {
                    let (line, of) = target.line();
                    Some(step("Pwb", t, json!({"line": line, "of": of})))
                }
                (SimOp::Load, Target::Loc) => {
                    Some(step("LoadLoc", t, json!({"word": loc_json(e.val)})))
                }
                (SimOp::Cas, Target::Loc) => Some(self.loc_cas(t, e)),
                (SimOp::CasFailed, Target::Loc) => {
                    self.helping[t] = None;
                    Some(step("CasFail", t, json!({"found": loc_json(e.val)})))
                }
                (SimOp::Store, Target::Mmt { u, word: true }) if u == t => {
                    let m = CasTs::decode(e.val);
                    Some(step(
                        "Checkpoint",
                        t,
                        json!({"par": m.parity as u8, "fail": m.fail, "ts": m.ts}),
                    ))
                }
                // The other words of the root memento's line (zeroed with it).
                (SimOp::Store, Target::Mmt { u, word: false }) if u == t => None,
                (SimOp::Load, Target::Mmt { .. }) => None,
                (SimOp::Load, Target::Help { u, par }) => Some(step(
                    "LoadHelp",
                    t,
                    json!({"owner": u, "par": par, "ts": e.val}),
                )),
                (SimOp::Cas, Target::Help { u, par }) => {
                    let from = self.help[u][par];
                    self.help[u][par] = e.val;
                    self.helping[t] = Some((u, par));
                    Some(step(
                        "HelpCas",
                        t,
                        json!({"owner": u, "par": par, "from": from, "to": e.val}),
                    ))
                }
                (SimOp::CasFailed, Target::Help { u, par }) => {
                    self.help[u][par] = e.val;
                    Some(step(
                        "HelpCasFail",
                        t,
                        json!({"owner": u, "par": par, "found": e.val}),
                    ))
                }
                (
                    SimOp::Store,
                    Target::Status {
                        u,
                        at: ST_OWN_FLOOR,
                    },
                ) if u == t => Some(step("OwnFloor", t, ts_json(e.val))),
                (SimOp::Store, Target::Status { u, at: ST_STATUS }) if u == t => {
                    Some(step("Status", t, status_json(e.val)))
                }
                // The status line's other words (result, floors).
                (SimOp::Store, Target::Status { u, .. }) if u == t => None,
                (op, _) => {
                    let (line, of) = target.line();
                    Some(step(
                        "Unknown",
                        t,
                        json!({"op": format!("{op:?}"), "line": line, "of": of}),
                    ))
                }
            };
            out.extend(s);
        }
        Ok(())
    }
}

fn cas_run(
    seed: u64,
    run: u64,
    opts: &TraceOptions,
    out: &mut Vec<Value>,
) -> Result<(), TraceError> {
    let rmw_fences = cas_rmw_fences(run);
    let threads = opts.threads;
    let ops = opts.ops;
    let size = pool_size::<CasMmt>(threads);
    let ex = extra::<CasMmt>(threads);
    let patience = 1 + mix(seed ^ 0xbeef) % 24;
    // The seed's CASMEMENTOCLEAR between root operations (§6.3), as
    // DetectableCAS's E0-E3 model it; ClearMode::Floor is not traced.
    let clear = ClearMode::Zero;
    // The one-word location: the traces replay through DetectableCAS.tla
    // with Form = "oneWord".
    // SAFETY: every value is installed at most once on the location in the
    // pool's lifetime: CAS i of thread t installs t * 100 + i + 1
    // (`cas_args`), so no reader can see a value installed twice.
    let loc = unsafe { UniqueCasAtomic::at_unique(ex) };
    let setup = |pool: &Pool<Sim>| -> Result<(), TraceError> {
        let rt = Runtime::<Sim, CasMmt>::create(pool, BASE, &config(threads))?;
        loc.init(pool, 0);
        drop(rt);
        pool.pfence();
        Ok(())
    };
    let work = |rt: &Runtime<'_, Sim, CasMmt>, tid: usize| {
        run_marked(rt, tid, ex, ops, |h, mmt, i| {
            let (old, new) = cas_args(seed, tid, i, threads);
            loc.cas(old, new, h, mmt).map_or(0, |()| 1)
        });
    };
    // The crash point: drawn among the events of the same run without one.
    let crash_at = if opts.crash {
        let pool = new_pool(size, rmw_fences)?;
        setup(&pool)?;
        let rt = open_runtime::<CasMmt>(&pool, patience, clear)?;
        let (_, _, total) = record(&pool, threads, seed, None, 0, |t| work(&rt, t))?;
        Some(1 + mix(seed ^ 0xc4a5) % total.max(1))
    } else {
        None
    };
    let pool = new_pool(size, rmw_fences)?;
    setup(&pool)?;
    let rt = open_runtime::<CasMmt>(&pool, patience, clear)?;
    // The status line precedes the root memento in a thread's slot.
    let mmt: Vec<u64> = (1..=threads).map(|t| rt.root_memento_offset(t)).collect();
    let mut m = CasMap {
        seed,
        threads,
        loc_off: ex,
        markers: ex,
        status: mmt.iter().map(|&o| o / LINE * LINE - LINE).collect(),
        mmt,
        help_line: (1..=threads)
            .map(|t| rt.help_off(false, t) / LINE * LINE)
            .collect(),
        loc: CasWord::stable(0).encode(),
        help: vec![[0; 2]; threads + 1],
        tids: Threads::default(),
        result: vec![0; threads + 1],
        open: vec![None; threads + 1],
        helping: vec![None; threads + 1],
    };
    out.push(
        json!({"type":"step","action":"Begin","seed":seed,"threads":threads,
                    "crash":opts.crash,"patience":patience,"rmw_fences":rmw_fences}),
    );
    let (part, image, _) = record(&pool, threads, seed, crash_at, seed ^ 0x1a6e, |t| {
        work(&rt, t)
    })?;
    m.map(&part.events, out)?;
    drop(rt);
    let Some(words) = image else {
        return Ok(());
    };
    // The crash: the image's words, then recovery on it.
    let word = |off: u64| words.get((off / 8) as usize).copied().unwrap_or(0);
    let mmts: Vec<Value> = m.mmt.iter().map(|&o| ts_json(word(o))).collect();
    let helps: Vec<Value> = m
        .help_line
        .iter()
        .map(|&l| json!([word(l), word(l + 8)]))
        .collect();
    let floors: Vec<Value> = m
        .status
        .iter()
        .map(|&l| ts_json(word(l + ST_OWN_FLOOR)))
        .collect();
    let status: Vec<Value> = m
        .status
        .iter()
        .map(|&l| status_json(word(l + ST_STATUS)))
        .collect();
    out.push(
        json!({"type":"step","action":"Crash","loc":loc_json(word(ex)),
                    "mmt":mmts,"help":helps,"own_floor":floors,"status":status}),
    );
    m.loc = word(ex);
    for (u, &l) in m.help_line.iter().enumerate() {
        m.help[u + 1] = [word(l), word(l + 8)];
    }
    m.tids = Threads::default();
    m.helping = vec![None; threads + 1];
    let after = Pool::volatile_from_words(&words, sim(rmw_fences))?;
    after.reincarnate();
    // Runtime::open_with finishes interrupted clearings (untraced: before any
    // thread runs; the trace spec does them as silent steps).
    let rt = open_runtime::<CasMmt>(&after, patience, clear)?;
    // Operations cut off whose commit persisted: their stored result.
    for tid in 1..=threads {
        if let Some(i) = m.open[tid].take() {
            if rt.next_op(tid) > i {
                let res = if rt.last_result(tid) == 1 {
                    "OK"
                } else {
                    "Err"
                };
                out.push(step("Return", tid, json!({"op": i, "res": res})));
            }
        }
    }
    let (part, _, _) = record(&after, threads, seed ^ 0x5eed, None, 0, |t| work(&rt, t))?;
    m.map(&part.events, out)
}

// ---------------------------------------------------------------------------
// Queue.

/// Thread `tid`'s operation `i`: `Some(v)` enqueues v, `None` dequeues.
fn queue_op(seed: u64, tid: usize, i: u64) -> Option<u64> {
    let enq_first = (mix(seed ^ tid as u64) & 1) == 0;
    if (i % 2 == 0) == enq_first {
        Some(10 * tid as u64 + i + 1)
    } else {
        None
    }
}

fn op_json(seed: u64, tid: usize, i: u64) -> (&'static str, Value) {
    match queue_op(seed, tid, i) {
        Some(v) => ("enq", json!([v])),
        None => ("deq", json!([])),
    }
}

fn result_json(seed: u64, tid: usize, i: u64, w: u64) -> Value {
    match queue_op(seed, tid, i) {
        Some(_) => Value::Null,
        None => decode_opt(w).map_or(Value::Null, |v| json!(v)),
    }
}

/// Maps the queue run's events to the trace: the markers to history events
/// (`invoke`/`return`, and `recover` for an operation a crash cut off), and,
/// before a crash, every Sim event of a protocol word to one step
/// (`InsDelQueueTrace.tla` replays each through `INSTANCE InsDelQueue`):
/// loads, CASes and failed CASes of `head`, `tail` and each node's `next`
/// and `repl`, the store of a fresh node's value (which names the node: node
/// `t` is thread `t`'s enqueue's, 0 the sentinel), the load of a dequeued
/// value, every `pwb` of the queue's lines and every fence of a Memento
/// thread. Memento, status-line and allocator words are not steps (the spec
/// has no counterpart). Pointers are node numbers (null: null).
struct QueueMap {
    seed: u64,
    threads: usize,
    markers: u64,
    tids: Threads,
    result: Vec<u64>,
    open: Vec<Option<u64>>,
    /// Operations a crash cut off: their result is a `recover`.
    cut: Vec<Option<u64>>,
    run: u64,
    /// The queue block (head in line 0, tail in line 1).
    block: u64,
    /// Node offsets to node numbers (the sentinel is 0).
    nodes: HashMap<u64, usize>,
    /// Whether protocol steps are mapped (until the crash).
    steps: bool,
}

impl QueueMap {
    fn id(&self, tid: usize, i: u64) -> u64 {
        self.run * 1000 + tid as u64 * 10 + i
    }

    fn err(&self, reason: String) -> TraceError {
        TraceError::unmapped(self.seed, reason)
    }

    /// A node pointer as a node number (null for null).
    fn node_of(&self, ptr: u64) -> Result<Value, TraceError> {
        if ptr == 0 {
            return Ok(Value::Null);
        }
        let off = perdure_memento::word::offset_of(ptr);
        self.nodes
            .get(&off)
            .map(|&n| json!(n))
            .ok_or_else(|| self.err(format!("pointer {ptr:#x} to no known node")))
    }

    fn link(&self, w: u64) -> Result<Value, TraceError> {
        let (p, ptr) = perdure_memento::word::insdel_decode(w);
        Ok(json!({"p": p, "ptr": self.node_of(ptr)?}))
    }

    fn repl(&self, w: u64) -> Result<Value, TraceError> {
        let (tid, ptr) = perdure_memento::word::repl_decode(w);
        Ok(json!({"tid": tid, "ptr": self.node_of(ptr)?}))
    }

    fn marker(&mut self, e: &SimEvent, tid: usize, word: u64, out: &mut Vec<Value>) {
        if word == 8 {
            self.result[tid] = e.val;
            return;
        }
        let (kind, i) = (e.val & 3, e.val >> 2);
        if kind == MK_INVOKE {
            if self.cut[tid] == Some(i) {
                return; // the resumption of a cut-off operation
            }
            let (op, args) = op_json(self.seed, tid, i);
            self.open[tid] = Some(i);
            out.push(json!({"type":"invoke","id":self.id(tid, i),"thread":tid,
                            "op":op,"args":args}));
        } else if kind == MK_RETURN {
            let v = result_json(self.seed, tid, i, self.result[tid]);
            if self.cut[tid].take() == Some(i) {
                out.push(json!({"type":"recover","id":self.id(tid, i),"value":v}));
            } else {
                self.open[tid] = None;
                out.push(json!({"type":"return","id":self.id(tid, i),"value":v}));
            }
        }
    }

    /// The step of a protocol word's event by thread `t`, if it is one.
    fn protocol(&mut self, e: &SimEvent, t: usize) -> Result<Option<Value>, TraceError> {
        let line = e.off / LINE * LINE;
        let (what, of) = if line == self.block {
            ("head", Value::Null)
        } else if line == self.block + LINE {
            ("tail", Value::Null)
        } else if let Some(&n) = self.nodes.get(&line) {
            match e.off - line {
                0 => ("value", json!(n)),
                8 => ("next", json!(n)),
                16 => ("repl", json!(n)),
                _ => return Ok(None),
            }
        } else {
            // A fresh node's value names it (allocation zeroes it first:
            // those stores are not steps).
            if e.op == SimOp::Store && e.off == line {
                let ours = (0..MAX_OPS).any(|i| queue_op(self.seed, t, i) == Some(e.val));
                if ours && e.val != 0 {
                    self.nodes.insert(line, t);
                    return Ok(Some(step("NodeValue", t, json!({"of": t, "val": e.val}))));
                }
            }
            return Ok(None);
        };
        let s = match (e.op, what) {
            (SimOp::Pwb, "head" | "tail") => step("Pwb", t, json!({"line": what, "of": of})),
            (SimOp::Pwb, _) => step("Pwb", t, json!({"line": "node", "of": of})),
            (SimOp::Load, "head") => step("LoadHead", t, self.link(e.val)?),
            (SimOp::Load, "tail") => step("LoadTail", t, self.link(e.val)?),
            (SimOp::Load, "next") => step("LoadNext", t, json!({"of": of, "w": self.link(e.val)?})),
            (SimOp::Load, "repl") => step("LoadRepl", t, json!({"of": of, "w": self.repl(e.val)?})),
            (SimOp::Load, "value") => step("LoadValue", t, json!({"of": of, "val": e.val})),
            (SimOp::Cas | SimOp::CasFailed, "head" | "tail") => step(
                if what == "head" { "CasHead" } else { "CasTail" },
                t,
                json!({"ok": e.op == SimOp::Cas, "w": self.link(e.val)?}),
            ),
            (SimOp::Cas | SimOp::CasFailed, "next") => step(
                "CasNext",
                t,
                json!({"of": of, "ok": e.op == SimOp::Cas, "w": self.link(e.val)?}),
            ),
            (SimOp::Cas | SimOp::CasFailed, "repl") => step(
                "CasRepl",
                t,
                json!({"of": of, "ok": e.op == SimOp::Cas, "w": self.repl(e.val)?}),
            ),
            (op, _) => step(
                "Unknown",
                t,
                json!({"op": format!("{op:?}"), "word": what, "of": of}),
            ),
        };
        Ok(Some(s))
    }

    fn map(&mut self, events: &[SimEvent], out: &mut Vec<Value>) -> Result<(), TraceError> {
        for e in events {
            if let Some((tid, word)) = self.tids.learn(e, self.markers, self.threads) {
                self.marker(e, tid, word, out);
                continue;
            }
            if !self.steps {
                continue;
            }
            let Some(&t) = self.tids.of.get(&e.thread) else {
                continue; // before the thread's first marker: the runtime's set-up
            };
            if matches!(e.op, SimOp::Pfence | SimOp::Psync) {
                out.push(step("Fence", t, json!({})));
                continue;
            }
            if let Some(s) = self.protocol(e, t)? {
                out.push(s);
            }
        }
        Ok(())
    }
}

impl QueueMap {
    /// The crash: the image's head and every known node's `next` and `repl`.
    fn crash_step(&self, words: &[u64]) -> Result<Value, TraceError> {
        let word = |off: u64| words.get((off / 8) as usize).copied().unwrap_or(0);
        let mut nodes: Vec<(usize, u64)> = self.nodes.iter().map(|(&o, &n)| (n, o)).collect();
        nodes.sort_unstable();
        let nodes = nodes
            .into_iter()
            .map(|(n, o)| {
                Ok(json!({"of": n, "next": self.link(word(o + 8))?,
                          "repl": self.repl(word(o + 16))?}))
            })
            .collect::<Result<Vec<Value>, TraceError>>()?;
        Ok(
            json!({"type":"step","action":"Crash","head":self.link(word(self.block))?,
                  "nodes":nodes}),
        )
    }
}

/// Each thread's operation kinds in run `seed` ("enq"/"deq", in order).
fn queue_work(seed: u64, threads: usize, ops: u64) -> Value {
    let w: Vec<Vec<&str>> = (1..=threads)
        .map(|t| {
            (0..ops)
                .map(|i| {
                    if queue_op(seed, t, i).is_some() {
                        "enq"
                    } else {
                        "deq"
                    }
                })
                .collect()
        })
        .collect();
    json!(w)
}

fn queue_run(
    seed: u64,
    run: u64,
    opts: &TraceOptions,
    out: &mut Vec<Value>,
) -> Result<(), TraceError> {
    let threads = opts.threads;
    let ops = opts.ops;
    let size = pool_size::<QueueMmt>(threads);
    let ex = extra::<QueueMmt>(threads);
    let patience = 1 + mix(seed ^ 0xbeef) % 24;
    let setup = |pool: &Pool<Sim>| -> Result<(), TraceError> {
        let rt = Runtime::<Sim, QueueMmt>::create(pool, BASE, &config(threads))?;
        let mut h = rt.handle(1)?;
        let q = Msq::create(MsqKind::Indel, &mut h)?;
        drop(h);
        pool.psync();
        rt.set_object_root(q.offset())?;
        Ok(())
    };
    let work = |rt: &Runtime<'_, Sim, QueueMmt>, q: &Msq, tid: usize| {
        run_marked(rt, tid, ex, ops, |h, mmt, i| {
            q.run(h, mmt, queue_op(seed, tid, i)).unwrap_or(u64::MAX)
        });
    };
    let crash_at = if opts.crash {
        let pool = new_pool(size, false)?;
        setup(&pool)?;
        let (rt, q) = open_queue(&pool, patience)?;
        let (_, _, total) = record(&pool, threads, seed, None, 0, |t| work(&rt, &q, t))?;
        Some(1 + mix(seed ^ 0xc4a5) % total.max(1))
    } else {
        None
    };
    let pool = new_pool(size, false)?;
    setup(&pool)?;
    let (rt, q) = open_queue(&pool, patience)?;
    let sentinel = perdure_memento::word::offset_of(InsDelAtomic::at(q.offset()).peek(&pool).1);
    let mut m = QueueMap {
        seed,
        threads,
        markers: ex,
        tids: Threads::default(),
        result: vec![0; threads + 1],
        open: vec![None; threads + 1],
        cut: vec![None; threads + 1],
        run,
        block: q.offset(),
        nodes: HashMap::from([(sentinel, 0)]),
        steps: true,
    };
    out.push(
        json!({"type":"step","action":"Begin","seed":seed,"threads":threads,
                    "crash":opts.crash,"patience":patience,
                    "work":queue_work(seed, threads, ops)}),
    );
    let (part, image, _) = record(&pool, threads, seed, crash_at, seed ^ 0x1a6e, |t| {
        work(&rt, &q, t)
    })?;
    m.map(&part.events, out)?;
    drop(rt);
    let Some(words) = image else {
        return drain(&q, &pool, m.id(threads + 1, 0), out);
    };
    {
        out.push(m.crash_step(&words)?);
        out.push(json!({"type":"crash"}));
        m.steps = false;
        let after = Pool::volatile_from_words(&words, sim(false))?;
        after.reincarnate();
        let (rt, q) = open_queue(&after, patience)?;
        m.tids = Threads::default();
        for tid in 1..=threads {
            if let Some(i) = m.open[tid].take() {
                if rt.next_op(tid) > i {
                    let v = result_json(seed, tid, i, rt.last_result(tid));
                    out.push(json!({"type":"recover","id":m.id(tid, i),"value":v}));
                } else {
                    m.cut[tid] = Some(i);
                }
            }
        }
        let (part, _, _) = record(&after, threads, seed ^ 0x5eed, None, 0, |t| {
            work(&rt, &q, t)
        })?;
        m.map(&part.events, out)?;
        drain(&q, &after, m.id(threads + 1, 0), out)
    }
}

/// The final drain: the queue's contents as dequeues of an extra thread.
fn drain(q: &Msq, pool: &Pool<Sim>, id0: u64, out: &mut Vec<Value>) -> Result<(), TraceError> {
    let mut vals = q.contents(pool)?;
    vals.push(u64::MAX);
    let thread = (id0 % 1000) / 10;
    for (k, v) in vals.into_iter().enumerate() {
        let id = id0 + k as u64;
        let value = if v == u64::MAX { Value::Null } else { json!(v) };
        out.push(json!({"type":"invoke","id":id,"thread":thread,"op":"deq","args":[]}));
        out.push(json!({"type":"return","id":id,"value":value}));
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Traces and tampering.

/// Which protocol.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Object {
    /// Detectable CAS on one location.
    #[default]
    Cas,
    /// MSQ-mmt-indel.
    Queue,
    /// Clevel-mmt.
    Clevel,
}

/// The trace of `opts.runs` runs, as ndjson, tampered with if
/// `opts.tamper` says so.
pub fn trace(opts: &TraceOptions) -> Result<String, TraceError> {
    opts.check_bounds(MAX_THREADS, MAX_OPS)
        .map_err(TraceError::Options)?;
    let _one = sched::RUN.lock().unwrap_or_else(|e| e.into_inner());
    let mut out = Vec::new();
    for r in 0..opts.runs {
        let seed = opts.seed.wrapping_add(r);
        match opts.object {
            Object::Cas => cas_run(seed, r, opts, &mut out)?,
            Object::Queue => queue_run(seed, r, opts, &mut out)?,
            Object::Clevel => clevel::clevel_run(seed, r, opts, &mut out)?,
        }
    }
    let mut s = String::new();
    for l in out {
        s.push_str(&l.to_string());
        s.push('\n');
    }
    match opts.tamper {
        None => Ok(s),
        Some(t) => tamper(&s, t).ok_or(TraceError::NothingToTamper(t)),
    }
}

/// Ways to tamper with a correct trace, for checking that validation
/// rejects what it must.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tamper {
    /// Delete the first `FirstCas` step followed by a successful return:
    /// a CAS reports OK though its first plain CAS never happened.
    DropFirstCas,
    /// Turn the first `Err` result into `OK`.
    FlipErr,
    /// In the first crash image whose location holds a value written by a
    /// CAS, put the initial word back: a lost write, though the location's
    /// line was persisted past it.
    LostWrite,
    /// Make a second successful dequeue return the value of the first one.
    DequeueTwice,
    /// Delete the write-back of the node line after the first successful
    /// CAS on a `repl` (DELETE's L37 flushopt): the deleter's CAS on head
    /// (L38) follows without it.
    DropReplFlush,
    /// In the first crash image after an insert's link was written back
    /// and fenced (L21, L24: `CasNext` setting the persist bit, `Pwb` of the
    /// line, `Fence`, all by the inserter), put the link back to null: an
    /// image that lost a persisted link.
    LostLink,
    /// Turn the first insert that returned true (1) into one that returned false.
    FlipInsert,
    /// In the first crash image holding an item whose insert wrote it back and fenced it
    /// (`DCas` of the slot, `Pwb` of its line, `Fence`, all by the inserter), empty the slot:
    /// an image that lost a persisted item.
    LostItem,
}

impl Tamper {
    /// The modes that apply to `object`'s traces.
    pub fn of(object: Object) -> &'static [Tamper] {
        match object {
            Object::Cas => &[Tamper::DropFirstCas, Tamper::FlipErr, Tamper::LostWrite],
            Object::Queue => &[
                Tamper::DequeueTwice,
                Tamper::DropReplFlush,
                Tamper::LostLink,
            ],
            Object::Clevel => &[Tamper::FlipInsert, Tamper::LostItem],
        }
    }
}

impl Named for Tamper {
    const ALL: &'static [Self] = &[
        Tamper::DropFirstCas,
        Tamper::FlipErr,
        Tamper::LostWrite,
        Tamper::DequeueTwice,
        Tamper::DropReplFlush,
        Tamper::LostLink,
        Tamper::FlipInsert,
        Tamper::LostItem,
    ];

    fn name(self) -> &'static str {
        match self {
            Tamper::DropFirstCas => "drop-first-cas",
            Tamper::FlipErr => "flip-err",
            Tamper::LostWrite => "lost-write",
            Tamper::DequeueTwice => "dequeue-twice",
            Tamper::DropReplFlush => "drop-repl-flush",
            Tamper::LostLink => "lost-link",
            Tamper::FlipInsert => "flip-insert",
            Tamper::LostItem => "lost-item",
        }
    }
}

/// Applies `t` to an ndjson trace; `None` if the trace has nothing to
/// tamper with.
pub fn tamper(ndjson: &str, t: Tamper) -> Option<String> {
    let mut lines: Vec<Value> = ndjson
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    match t {
        Tamper::DropFirstCas => {
            let k = lines.iter().position(|v| v["action"] == "FirstCas")?;
            lines.remove(k);
        }
        Tamper::FlipErr => {
            let v = lines
                .iter_mut()
                .find(|v| v["action"] == "Return" && v["res"] == "Err")?;
            v["res"] = json!("OK");
        }
        Tamper::LostWrite => {
            let v = lines.iter_mut().find(|v| {
                v["action"] == "Crash" && v["loc"]["val"].as_u64().is_some_and(|x| x != 0)
            })?;
            v["loc"] = json!({"par": 0, "tid": 0, "val": 0});
        }
        Tamper::DequeueTwice => {
            let deqs: Vec<u64> = lines
                .iter()
                .filter(|v| v["type"] == "invoke" && v["op"] == "deq")
                .filter_map(|v| v["id"].as_u64())
                .collect();
            let got: Vec<usize> = lines
                .iter()
                .enumerate()
                .filter(|(_, v)| {
                    (v["type"] == "return" || v["type"] == "recover")
                        && v["value"].is_u64()
                        && v["id"].as_u64().is_some_and(|id| deqs.contains(&id))
                })
                .map(|(k, _)| k)
                .collect();
            let (&a, &b) = (got.first()?, got.get(1)?);
            lines[b]["value"] = lines[a]["value"].clone();
        }
        Tamper::DropReplFlush => {
            let a = lines
                .iter()
                .position(|v| v["action"] == "CasRepl" && v["ok"] == true)?;
            let (t, of) = (lines[a]["thread"].clone(), lines[a]["of"].clone());
            let b = a + lines[a..].iter().position(|v| {
                v["action"] == "Pwb" && v["line"] == "node" && v["of"] == of && v["thread"] == t
            })?;
            lines.remove(b);
        }
        Tamper::LostLink => {
            // Per run (from its Begin), the links written back and fenced by
            // their inserter: (node, inserter, stage 0 CAS / 1 pwb / 2 fenced).
            let mut links: Vec<(Value, Value, u8)> = Vec::new();
            let mut hit = None;
            for (k, v) in lines.iter().enumerate() {
                let (a, t) = (&v["action"], &v["thread"]);
                if a == "Begin" {
                    links.clear();
                } else if a == "CasNext" && v["ok"] == true && v["w"]["p"] == true {
                    links.push((v["of"].clone(), t.clone(), 0));
                } else if a == "Pwb" && v["line"] == "node" {
                    for l in links
                        .iter_mut()
                        .filter(|l| l.0 == v["of"] && &l.1 == t && l.2 == 0)
                    {
                        l.2 = 1;
                    }
                } else if a == "Fence" {
                    for l in links.iter_mut().filter(|l| &l.1 == t && l.2 == 1) {
                        l.2 = 2;
                    }
                } else if a == "Crash" {
                    if let Some(l) = links.iter().find(|l| l.2 == 2) {
                        hit = Some((k, l.0.clone()));
                        break;
                    }
                }
            }
            let (k, of) = hit?;
            let nodes = lines[k]["nodes"].as_array_mut()?;
            let n = nodes.iter_mut().find(|n| n["of"] == of)?;
            n["next"] = json!({"p": false, "ptr": null});
        }
        Tamper::FlipInsert => {
            let ins: Vec<Value> = lines
                .iter()
                .filter(|v| v["type"] == "invoke" && v["op"][0] == "ins")
                .map(|v| v["id"].clone())
                .collect();
            let v = lines.iter_mut().find(|v| {
                (v["type"] == "return" || v["type"] == "recover")
                    && v["value"] == 1
                    && ins.contains(&v["id"])
            })?;
            v["value"] = json!(0);
        }
        Tamper::LostItem => {
            // Per run, the slots an insert's CAS wrote (slot, thread, stage 0 CAS / 1 pwb /
            // 2 fenced), and the first crash image holding one of them fenced.
            let mut placed: Vec<(Value, Value, Value, u8)> = Vec::new();
            let mut hit = None;
            for (k, v) in lines.iter().enumerate() {
                let (a, t) = (&v["action"], &v["thread"]);
                if a == "Begin" {
                    placed.clear();
                } else if a == "DCas" && v["w"]["it"] != 0 && v["w"]["mv"] == false {
                    placed.push((v["s"].clone(), t.clone(), v["w"].clone(), 0));
                } else if a == "Pwb" {
                    for p in placed.iter_mut().filter(|p| &p.1 == t && p.3 == 0) {
                        let (l, j) = (&p.0[0], &p.0[1]);
                        if v["lines"]
                            .as_array()
                            .is_some_and(|ls| ls.iter().any(|x| x == &json!(["s", l, j])))
                        {
                            p.3 = 1;
                        }
                    }
                } else if a == "Fence" {
                    for p in placed.iter_mut().filter(|p| &p.1 == t && p.3 == 1) {
                        p.3 = 2;
                    }
                } else if a == "Crash" {
                    let slots = v["slots"].as_array()?;
                    if let Some((i, _)) = slots.iter().enumerate().find(|(_, s)| {
                        placed
                            .iter()
                            .any(|p| p.3 == 2 && s[0] == p.0[0] && s[1] == p.0[1] && s[2] == p.2)
                    }) {
                        hit = Some((k, i));
                        break;
                    }
                }
            }
            let (k, i) = hit?;
            lines[k]["slots"][i][2] = json!({"it": 0, "mv": false, "dn": false});
        }
    }
    Some(lines.iter().map(|l| format!("{l}\n")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cas_traces_have_steps_and_crashes() {
        let opts = TraceOptions {
            object: Object::Cas,
            crash: true,
            runs: 2,
            ..Default::default()
        };
        let t = trace(&opts).unwrap();
        assert!(t.contains("\"FirstCas\"") && t.contains("\"Crash\""));
        assert!(!t.contains("\"Unknown\""), "{t}");
        let dropped = tamper(&t, Tamper::DropFirstCas);
        assert!(dropped.is_some());
        let tampered = TraceOptions {
            tamper: Some(Tamper::DropFirstCas),
            ..opts
        };
        assert_eq!(trace(&tampered).ok(), dropped);
        assert!(matches!(
            trace(&TraceOptions {
                tamper: Some(Tamper::DequeueTwice),
                ..opts
            }),
            Err(TraceError::NothingToTamper(Tamper::DequeueTwice))
        ));
    }

    #[test]
    fn queue_traces_have_steps_and_histories() {
        // The CI cases' shape: 5 runs of 2 threads with one enqueue and one dequeue each.
        let opts = TraceOptions {
            object: Object::Queue,
            crash: true,
            runs: 5,
            ops: 2,
            ..Default::default()
        };
        let t = trace(&opts).unwrap();
        assert!(t.contains("\"invoke\"") && t.contains("\"crash\"") && t.contains("\"Crash\""));
        assert!(tamper(&t, Tamper::LostLink).is_some());
        assert!(
            t.contains("\"CasNext\"") && t.contains("\"LoadTail\""),
            "{t}"
        );
        assert!(!t.contains("\"Unknown\""), "{t}");
        let no_crash = trace(&TraceOptions {
            crash: false,
            ..opts
        })
        .unwrap();
        let dropped = tamper(&no_crash, Tamper::DropReplFlush).unwrap();
        assert_eq!(dropped.lines().count() + 1, no_crash.lines().count());
    }

    #[test]
    fn clevel_traces_grow_resize_and_crash() {
        // The CI cases' shape: 2 threads of 2 operations (the second thread's second a resize).
        let opts = TraceOptions {
            object: Object::Clevel,
            crash: true,
            runs: 5,
            ops: 2,
            ..Default::default()
        };
        let t = trace(&opts).unwrap();
        for a in [
            "\"DCas\"",
            "\"DCasLast\"",
            "\"CasNext\"",
            "\"CasSlot\"",
            "\"Crash\"",
        ] {
            assert!(t.contains(a), "no {a} in {t}");
        }
        assert!(t.contains("\"type\":\"crash\""));
        assert!(!t.contains("\"Unknown\""), "{t}");
        assert!(tamper(&t, Tamper::LostItem).is_some());
        let no_crash = trace(&TraceOptions {
            crash: false,
            ..opts
        })
        .unwrap();
        assert!(tamper(&no_crash, Tamper::FlipInsert).is_some());
        assert!(tamper(&no_crash, Tamper::LostItem).is_none());
    }
}

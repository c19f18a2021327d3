//! Protocol-level traces of one Mirror/RELAX field (`perdure trace
//! relax`), for trace validation against
//! `specs/relax/RelaxRecoverField.tla` (and through it `Mirror.tla`) with
//! TLC (`traces/relax/`).
//!
//! **Where the steps come from.** One-line hooks (`trace_ev!`, empty
//! without perdure-relax's feature `trace`) in perdure-relax's `patomic`
//! report, through `perdure_pm::trace_step!` to this module's recorder
//! (with the field's offset as `field`), the steps of
//! Algorithm 4.1 and of Algorithm 6.2 (with fixes M1, R1, R2) that the
//! specs name, on the traced field only, with what each step read or
//! whether its CAS succeeded:
//!
//! | step | where | spec action |
//! | --- | --- | --- |
//! | `Invoke{recover}` | `track_field`, when tracking decides | `RInvoke(t, c)` with first step `R1` iff `recover` |
//! | `S0{val}` / `LD{val}` | `store`'s first load / `load` | `S0` / `LD` |
//! | `L5{v,s}` / `L9{v,s}` | `mirror_cas` after `read_nvmm` / the DRAM read | `L5atomic` / `L9atomic` (and its branch) |
//! | `L24{ok}` | the helping case's DRAM DWCAS | `L24` |
//! | `L40{ok}`, `L43{ok}` | NVMM DWCAS; the DRAM DWCAS (or the retry) | `L40`, `L43` |
//! | `R1{v,s}`, `R2{v,s}`, `R22{same}`, `R41{ok}`, `R5{ok}` | `recover_attempt`, `recover_field` | the same names |
//!
//! The persistence steps are not hooks: `L21` (L20–L21's write-back and
//! fence of a helper), `L42` (L41–L42's) and `R43` (fix R1's, before line
//! 5 of Algorithm 6.2) come from the simulator's own events. The Sim's
//! crash hook, called on the worker right after each of its persistence
//! events, puts a marker among the reported steps; after the phase the
//! markers are resolved against [`Sim::take_trace`]: a `pfence`/`psync` of
//! a worker that wrote back the field's line since its previous fence is
//! the step its last reported step leads to (`L40` → `L42`, `L9` → `L21`,
//! `R22`/`R41` → `R43`; anything else → `Fence`, which no spec action
//! takes). A mutant that skips the write-back or the fence thus leaves no
//! step, and the spec rejects the step that needed it.
//!
//! The producer adds `Begin{v,s}` (a fresh field), `Ret{val}` (the
//! operation returned: 1/0 for a CAS, 0 for a store, the value for a load)
//! and `Crash{img,dram}` (the NVMM pair of the crash image the simulator
//! chose, and the garbage DRAM pair the producer put in the fresh volatile
//! region). The seeded scheduler ([`perdure_check::sched`]) runs one
//! worker at a time and hands over only at persistent-memory accesses, so a
//! hook's step and the accesses around it happen in the recorded order.
//!
//! **A run.** A fresh pool on the [`Sim`] backend, a space with
//! `BitsetAtomic` tracking, one field (value 0, sequence 1). `threads`
//! workers each run `ops` seeded calls from `{load, store(v), cas(a, b)}`
//! over values 0–3. With `crash`, a crash-free pass of the same seed counts
//! the persistence events, one is drawn, the run is repeated and the
//! simulator's state captured after it; the trace is cut at the next
//! scheduling point (nothing touches persistent memory in between); one of
//! the crash images Px86 allows there is drawn; the space is reopened on it
//! (a new incarnation, fresh DRAM), the field's DRAM pair is set to garbage
//! drawn near the NVMM pair (equal, just below, or inside the sequence
//! window of Algorithm 6.2 line 4, so every branch of `recover_field`
//! happens), and `threads` workers run `ops` more calls each, concurrently,
//! each recovering the field lazily on its first access.
//!
//! Values stay small so that TLC's integers hold them: sequences count from
//! 1 and the garbage sequence is at most 3 above NVMM's, so the trace spec's
//! `SeqMod` (2^30) never wraps and its window test agrees with the 64-bit
//! one of the implementation.
//!
//! With [`Recovery::Eager`], the space runs Mirror's own recovery instead
//! (`Tracking::Eager`: the node is copied to DRAM when the space is
//! reopened, before any call; the `Crash` step then reports the copied
//! pair), and the trace is one of `specs/relax/Mirror.tla`
//! (`traces/relax/mirror/`).
//!
//! **Tampered traces** (`--tamper`): `lost-write` replaces the crash image
//! by the field's initial pair although a write was fenced before the
//! crash; `no-recover` makes the first access after the crash skip
//! `recover_field` (its `Invoke` says no recovery and its R-steps are
//! deleted); `wrong-load` changes the value of the first `LD`.

use perdure_check::sched::{self, mix};
use perdure_check::trace::Named;
use perdure_pm::hooks::{self, TraceStep, TraceVal};
use perdure_pm::sim::{CrashPoint, SimEvent, SimOp, SimView, VolatileFill};
use perdure_pm::{Pool, Sim, SimOptions};
use perdure_relax::ds::ListNode;
use perdure_relax::{Config, OpenOptions, PAtomic, RelaxError, Space, Tracking};
use serde_json::{json, Map, Value};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// Values the workload writes: 0..NVALS (the trace spec's `Vals`).
pub const NVALS: u64 = 4;
/// The most threads a trace has.
pub const MAX_THREADS: usize = 3;
/// The most calls per worker (before the crash, and again after it).
pub const MAX_OPS: u64 = 6;

struct Recorder {
    field: u64,
    events: Vec<Value>,
}

static REC: Mutex<Option<Recorder>> = Mutex::new(None);
/// The crash point was captured: the trace is cut at the next scheduling
/// point.
static CAPTURED: AtomicBool = AtomicBool::new(false);
/// Events are not recorded: no run is recording, or the crash is behind
/// them (the hooks' fast path is this one load).
static CUT: AtomicBool = AtomicBool::new(true);

thread_local! {
    static ME: Cell<Option<u64>> = const { Cell::new(None) };
}

fn rec() -> std::sync::MutexGuard<'static, Option<Recorder>> {
    REC.lock().unwrap_or_else(|e| e.into_inner())
}

/// The recorder of reported steps: the step of the field at offset
/// `field`, its other values as JSON.
fn record_step(step: &TraceStep<'_>) {
    let Some(TraceVal::Int(off)) = step.field("field") else {
        return;
    };
    let fields: Vec<(&str, Value)> = step
        .fields
        .iter()
        .filter(|(k, _)| *k != "field")
        .map(|&(k, v)| {
            let v = match v {
                TraceVal::Int(n) => json!(n),
                TraceVal::Bool(b) => json!(b),
                TraceVal::None => Value::Null,
            };
            (k, v)
        })
        .collect();
    emit(off, step.action, &fields);
}

/// The calling worker took step `action` on the field at `off`.
fn emit(off: u64, action: &str, fields: &[(&str, Value)]) {
    if CUT.load(Ordering::Relaxed) {
        return;
    }
    let Some(t) = ME.with(Cell::get) else {
        return;
    };
    let mut g = rec();
    let Some(r) = g.as_mut() else {
        return;
    };
    if r.field != off {
        return;
    }
    r.events.push(step(Some(t), action, fields));
}

fn step(thread: Option<u64>, action: &str, fields: &[(&str, Value)]) -> Value {
    let mut m = Map::new();
    m.insert("action".into(), json!(action));
    if let Some(t) = thread {
        m.insert("thread".into(), json!(t));
    }
    for (k, v) in fields {
        m.insert((*k).into(), v.clone());
    }
    Value::Object(m)
}

/// A step the producer itself records (not a hook).
fn push(thread: Option<u64>, action: &str, fields: &[(&str, Value)]) {
    if CUT.load(Ordering::SeqCst) {
        return;
    }
    if let Some(r) = rec().as_mut() {
        r.events.push(step(thread, action, fields));
    }
}

/// The part of a crash hook that records where the calling worker's
/// persistence events fall among the reported steps: a `@sim` marker with
/// the range of Sim events since the previous call (`last`), resolved by
/// [`derive_persistence`] once the phase's Sim trace is taken.
fn mark_sim_events(last: &mut usize, view: &SimView<'_>) {
    let (from, to) = (*last, view.trace_len());
    *last = to;
    if CUT.load(Ordering::SeqCst) {
        return;
    }
    let Some(t) = ME.with(Cell::get) else {
        return;
    };
    if let Some(r) = rec().as_mut() {
        r.events
            .push(json!({"action": SIM_MARK, "thread": t, "from": from, "to": to}));
    }
}

const SIM_MARK: &str = "@sim";
const LINE: u64 = 64;

/// Replaces the `@sim` markers of `steps` by the persistence steps the Sim
/// events they cover make (see the module docs): a fence of a worker that
/// wrote back `field`'s line since its previous fence.
fn derive_persistence(steps: Vec<Value>, sim: &[SimEvent], field: u64) -> Vec<Value> {
    use std::collections::{HashMap, HashSet};
    let mut last: HashMap<u64, String> = HashMap::new();
    let mut written_back: HashSet<u64> = HashSet::new();
    let mut out = Vec::with_capacity(steps.len());
    for v in steps {
        let t = v.get("thread").and_then(Value::as_u64);
        if action(&v) == "Crash" {
            last.clear();
            written_back.clear();
        }
        if action(&v) != SIM_MARK {
            if let Some(t) = t {
                last.insert(t, action(&v).to_string());
            }
            out.push(v);
            continue;
        }
        let Some(t) = t else { continue };
        let idx = |k: &str| v[k].as_u64().unwrap_or(0) as usize;
        for e in sim.get(idx("from")..idx("to")).unwrap_or(&[]) {
            match e.op {
                SimOp::Pwb if e.off == field & !(LINE - 1) => {
                    written_back.insert(t);
                }
                SimOp::Pfence | SimOp::Psync if written_back.remove(&t) => {
                    let after = last.get(&t).map_or("", String::as_str);
                    out.push(match after {
                        "L40" => step(Some(t), "L42", &[]),
                        "L9" => step(Some(t), "L21", &[]),
                        "R22" | "R41" => step(Some(t), "R43", &[]),
                        _ => step(Some(t), "Fence", &[("after", json!(after))]),
                    });
                }
                _ => {}
            }
        }
    }
    out
}

/// Resolves the markers of the steps recorded so far against `sim`'s
/// events since [`Sim::start_trace`] (the markers of one phase).
fn resolve_phase(sim: &Sim, field: u64) {
    let events = sim.take_trace();
    if let Some(r) = rec().as_mut() {
        let steps = std::mem::take(&mut r.events);
        r.events = derive_persistence(steps, &events, field);
    }
}

/// The simulator's yield hook of a traced run: the seeded scheduler, after
/// cutting the trace if the crash point is behind.
fn yield_hook() {
    if CAPTURED.load(Ordering::SeqCst) {
        CUT.store(true, Ordering::SeqCst);
    }
    sched::yield_now();
}

/// A tampering of the recorded trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tamper {
    /// The crash image replaced by the field's initial pair although a
    /// write was fenced before the crash.
    LostWrite,
    /// The first access after the crash skips `recover_field`.
    NoRecover,
    /// The first `LD` reports another value.
    WrongLoad,
}

impl Named for Tamper {
    const ALL: &'static [Self] = &[Tamper::LostWrite, Tamper::NoRecover, Tamper::WrongLoad];

    fn name(self) -> &'static str {
        match self {
            Tamper::LostWrite => "lost-write",
            Tamper::NoRecover => "no-recover",
            Tamper::WrongLoad => "wrong-load",
        }
    }
}

/// Which recovery the space runs after a crash.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Recovery {
    /// RELAX's lazy `recover_field` on each field's first access;
    /// `traces/relax/RelaxTrace.tla`.
    #[default]
    Lazy,
    /// Mirror's eager recovery (`Tracking::Eager`: the field is copied to
    /// DRAM when the space is reopened, before any call);
    /// `traces/relax/mirror/MirrorTrace.tla`.
    Eager,
}

/// What to record: workers 1..=[`MAX_THREADS`], calls per worker
/// 1..=[`MAX_OPS`] (before and again after the crash), runs each starting
/// with `Begin`.
pub type TraceOptions = perdure_check::trace::TraceOptions<Recovery, Tamper>;

/// A call of the workload: `(op, old, new)` as the spec's `Call`.
#[derive(Clone, Copy, Debug)]
struct TCall {
    op: &'static str,
    old: u64,
    new: u64,
}

fn calls(seed: u64, thread: u64, n: u64) -> Vec<TCall> {
    let mut r = mix(seed ^ (thread + 1).wrapping_mul(0x5151));
    (0..n)
        .map(|_| {
            r = mix(r);
            let a = (r >> 8) % NVALS;
            let b = (a + 1 + (r >> 16) % (NVALS - 1)) % NVALS;
            match r % 3 {
                0 => TCall {
                    op: "load",
                    old: 0,
                    new: 0,
                },
                1 => TCall {
                    op: "store",
                    old: 0,
                    new: b,
                },
                _ => TCall {
                    op: "cas",
                    old: a,
                    new: b,
                },
            }
        })
        .collect()
}

fn perform(f: PAtomic, s: &Space<'_, Sim>, c: TCall) -> Result<u64, RelaxError> {
    Ok(match c.op {
        "load" => f.load(s)?,
        "store" => {
            f.store(s, c.new)?;
            0
        }
        _ => u64::from(f.compare_exchange(s, c.old, c.new)?.is_ok()),
    })
}

/// Runs `threads` workers of `ops` calls on field `f` of `space` under the
/// seeded scheduler; `round` tells the calls of the two phases apart.
fn workers(
    space: &Space<'_, Sim>,
    f: PAtomic,
    o: &TraceOptions,
    seed: u64,
    round: u64,
) -> Result<(), String> {
    let errors: Mutex<Vec<String>> = Mutex::new(Vec::new());
    sched::start(o.threads, mix(seed ^ round));
    std::thread::scope(|sc| {
        for w in 0..o.threads {
            let errors = &errors;
            sc.spawn(move || {
                sched::enter(w);
                ME.with(|m| m.set(Some(w as u64)));
                let r = (|| -> Result<(), RelaxError> {
                    let _h = space.handle()?;
                    for c in calls(seed ^ round, w as u64, o.ops) {
                        push(
                            None,
                            "Call",
                            &[
                                ("thread", json!(w)),
                                ("op", json!(c.op)),
                                ("old", json!(c.old)),
                                ("new", json!(c.new)),
                            ],
                        );
                        let v = perform(f, space, c)?;
                        push(Some(w as u64), "Ret", &[("val", json!(v))]);
                    }
                    Ok(())
                })();
                if let Err(e) = r {
                    errors
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(e.to_string());
                }
                ME.with(|m| m.set(None));
                sched::exit(w);
            });
        }
    });
    if !sched::stop() {
        return Err(
            "the run left the seeded schedule (a worker waited outside the simulator)".into(),
        );
    }
    match errors
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .first()
    {
        Some(e) => Err(format!("a call failed: {e}")),
        None => Ok(()),
    }
}

const POOL: u64 = 4 << 20;

fn base(pool: &Pool<Sim>) -> u64 {
    pool.data_offset().next_multiple_of(4096)
}

fn nvmm_pair(pool: &Pool<Sim>, off: u64) -> Result<(u64, u64), String> {
    let w = |o: u64| {
        pool.word(o)
            .map(|w| w.load(Ordering::SeqCst))
            .map_err(|e| e.to_string())
    };
    Ok((w(off)?, w(off + 8)?))
}

/// One run: its steps, and how many persistence events its first phase had.
fn run(o: &TraceOptions, seed: u64, crash_at: Option<u64>) -> Result<(Vec<Value>, u64), String> {
    let e = |e: RelaxError| e.to_string();
    let pool = Pool::volatile("relax-trace", POOL, Sim::new(SimOptions::default()))
        .map_err(|e| e.to_string())?;
    let cfg = Config {
        threads: o.threads + 1,
        roots: 1,
        heap_bytes: 8 * perdure_pm::heap::CHUNK_SIZE,
        msb_sequences: false,
    };
    let b = base(&pool);
    let tracking = if o.object == Recovery::Eager {
        Tracking::Eager
    } else {
        Tracking::Bitset
    };
    let space = Space::create(&pool, b, &cfg, OpenOptions::new(tracking)).map_err(e)?;
    let off = {
        let mut h = space.handle().map_err(e)?;
        h.alloc_node::<ListNode>(&[0, 0]).map_err(e)?
    };
    let f = PAtomic::at(off);
    let (v0, s0) = nvmm_pair(&pool, off)?;
    CUT.store(false, Ordering::SeqCst);
    CAPTURED.store(false, Ordering::SeqCst);
    *rec() = Some(Recorder {
        field: off,
        events: vec![json!({"action": "Begin", "v": v0, "s": s0})],
    });
    hooks::set_recorder(Some(std::sync::Arc::new(record_step)));
    let events = std::sync::Arc::new(AtomicU64::new(0));
    let point: std::sync::Arc<Mutex<Option<CrashPoint>>> = Default::default();
    {
        let (events, point) = (events.clone(), point.clone());
        let mut last = 0;
        pool.backend().set_crash_hook(move |_, view| {
            mark_sim_events(&mut last, view);
            let n = events.fetch_add(1, Ordering::SeqCst) + 1;
            if Some(n) == crash_at {
                *point.lock().unwrap_or_else(|e| e.into_inner()) = Some(view.capture());
                CAPTURED.store(true, Ordering::SeqCst);
            }
        });
    }
    pool.backend().set_yield_hook(yield_hook);
    pool.backend().start_trace();
    let phase1 = workers(&space, f, o, seed, 1);
    pool.backend().clear_crash_hook();
    CUT.store(true, Ordering::SeqCst);
    resolve_phase(pool.backend(), off);
    phase1?;
    let total = events.load(Ordering::SeqCst);
    let captured = point.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(cp) = captured {
        let (_, images) = cp.images(256, mix(seed ^ 0x1a9e));
        let images: Vec<_> = images.collect();
        let img = &images[(mix(seed ^ 0x77) % images.len() as u64) as usize];
        let words = cp.materialize(img, VolatileFill::Zeroed);
        drop(space);
        let pool2 = Pool::volatile_from_words(&words, Sim::new(SimOptions::default()))
            .map_err(|e| e.to_string())?;
        pool2.reincarnate();
        let space2 = Space::open(&pool2, b, OpenOptions::new(tracking)).map_err(e)?;
        let (v, s) = nvmm_pair(&pool2, off)?;
        // Garbage near the NVMM pair: equal (line 3), below (outside the
        // window), or 1–3 above (inside it).
        let g = mix(seed ^ 0x9a4b);
        let gs = match g % 6 {
            0 => s,
            1 => s.saturating_sub(1),
            k => s + k - 1,
        };
        let gv = if g % 6 == 0 { v } else { (g >> 8) % NVALS };
        space2.dram().store_pair(off, (gv, gs));
        if o.object == Recovery::Eager {
            // Mirror's recovery (Chapter 4): the node copied before any call.
            space2.recover_root::<ListNode>(off).map_err(e)?;
        }
        let (gv, gs) = space2.dram().read_pair(off);
        CUT.store(false, Ordering::SeqCst);
        CAPTURED.store(false, Ordering::SeqCst);
        push(
            None,
            "Crash",
            &[("img", json!([v, s])), ("dram", json!([gv, gs]))],
        );
        pool2.backend().set_yield_hook(yield_hook);
        let mut last = 0;
        pool2
            .backend()
            .set_crash_hook(move |_, view| mark_sim_events(&mut last, view));
        pool2.backend().start_trace();
        let phase2 = workers(&space2, f, o, seed, 2);
        pool2.backend().clear_crash_hook();
        CUT.store(true, Ordering::SeqCst);
        resolve_phase(pool2.backend(), off);
        phase2?;
    }
    hooks::set_recorder(None);
    let steps = rec().take().map(|r| r.events).unwrap_or_default();
    Ok((merge_calls(steps), total))
}

/// Puts each worker's call (recorded by the producer just before it) into
/// the `Invoke` step its tracking decision recorded; a call the crash cut
/// off before that step is dropped.
fn merge_calls(steps: Vec<Value>) -> Vec<Value> {
    let mut pending: std::collections::HashMap<u64, Value> = Default::default();
    let mut out = Vec::with_capacity(steps.len());
    for mut v in steps {
        let t = v.get("thread").and_then(Value::as_u64);
        match (action(&v), t) {
            ("Call", Some(t)) => {
                pending.insert(t, v);
            }
            ("Invoke", Some(t)) => {
                if let Some(c) = pending.remove(&t) {
                    for k in ["op", "old", "new"] {
                        v[k] = c[k].clone();
                    }
                }
                out.push(v);
            }
            ("Crash", _) => {
                pending.clear();
                out.push(v);
            }
            _ => out.push(v),
        }
    }
    out
}

/// Records the trace `o` asks for, as ndjson.
pub fn trace(o: &TraceOptions) -> Result<String, String> {
    o.check_bounds(MAX_THREADS, MAX_OPS)?;
    let _one = sched::RUN.lock().unwrap_or_else(|e| e.into_inner());
    let mut all: Vec<Vec<Value>> = Vec::new();
    for k in 0..o.runs {
        let seed = o.seed + k;
        let steps = if o.crash {
            let (_, total) = run(o, seed, None)?;
            if total == 0 {
                return Err("the run had no persistence event to crash at".into());
            }
            let at = 1 + mix(seed ^ 0xc7a5) % total;
            run(o, seed, Some(at))?.0
        } else {
            run(o, seed, None)?.0
        };
        all.push(steps);
    }
    if let Some(t) = o.tamper {
        tamper(&mut all, t)?;
    }
    let mut out = String::new();
    for v in all.into_iter().flatten() {
        out.push_str(&v.to_string());
        out.push('\n');
    }
    Ok(out)
}

fn action(v: &Value) -> &str {
    v.get("action").and_then(Value::as_str).unwrap_or("")
}

/// Applies `t` to the first run where it applies.
fn tamper(runs: &mut [Vec<Value>], t: Tamper) -> Result<(), String> {
    for run in runs.iter_mut() {
        let Some(crash) = run.iter().position(|v| action(v) == "Crash") else {
            if t == Tamper::WrongLoad {
                if let Some(i) = run.iter().position(|v| action(v) == "LD") {
                    let val = run[i]["val"].as_u64().unwrap_or(0);
                    run[i]["val"] = json!((val + 1) % NVALS);
                    return Ok(());
                }
            }
            continue;
        };
        match t {
            Tamper::LostWrite => {
                // A write fenced before the crash: an L42 after an L40 that
                // succeeded, by the same thread.
                let fenced = run[..crash].iter().enumerate().any(|(i, v)| {
                    action(v) == "L42"
                        && run[..i]
                            .iter()
                            .rev()
                            .find(|u| u.get("thread") == v.get("thread") && action(u) == "L40")
                            .is_some_and(|u| u["ok"] == json!(true))
                });
                if !fenced {
                    continue;
                }
                let init = json!([run[0]["v"], run[0]["s"]]);
                if run[crash]["img"] == init {
                    continue;
                }
                if run[crash]["dram"] == run[crash]["img"] {
                    // Eager recovery copied the image: the copy goes too.
                    run[crash]["dram"] = init.clone();
                }
                run[crash]["img"] = init;
                return Ok(());
            }
            Tamper::NoRecover => {
                let Some(i) = (crash..run.len())
                    .find(|&i| action(&run[i]) == "Invoke" && run[i]["recover"] == json!(true))
                else {
                    continue;
                };
                let th = run[i]["thread"].clone();
                run[i]["recover"] = json!(false);
                let mut j = i + 1;
                while j < run.len() {
                    if run[j]["thread"] == th {
                        if action(&run[j]).starts_with('R') && action(&run[j]) != "Ret" {
                            run.remove(j);
                            continue;
                        }
                        break;
                    }
                    j += 1;
                }
                return Ok(());
            }
            Tamper::WrongLoad => {
                if let Some(i) = run.iter().position(|v| action(v) == "LD") {
                    let val = run[i]["val"].as_u64().unwrap_or(0);
                    run[i]["val"] = json!((val + 1) % NVALS);
                    return Ok(());
                }
            }
        }
    }
    Err(format!(
        "--tamper {t:?}: no run of this trace has the step it changes"
    ))
}

//! Traces of Clevel-mmt (`perdure trace memento-clevel`), for
//! `traces/memento/clevel/ClevelTrace.tla`, which replays them through
//! `INSTANCE ClevelMmt` (`specs/memento/ClevelMmt.tla`).
//!
//! The table (`perdure_memento::ds::clevel`) runs unmodified on the `Sim`
//! backend: created with one bucket of one slot at the bottom and two above
//! it, two items of a third party bulk-loaded (keys 1 and 2), so that the
//! threads' inserts fill it and grow the chain (a level of 4 slots makes the
//! bottom one drainable, and the last thread's second operation is a
//! resize). The workload is fixed by `threads` and `ops` (the seed draws the
//! schedule and the crash point): thread `t` inserts its own key `10t + 1`
//! first, then alternates a delete of the next thread's first key and an
//! insert of another own key; the last thread's second operation is a
//! resize. Keys are each thread's own, as `clevel.rs`'s caller contract asks.
//!
//! Every Sim event of a table word is one step: loads, detectable CASes
//! (`DCas`: the first plain CAS, its word annotated; `Stable`: the CAS that
//! removes an annotation), plain CASes (`CasSlot`: seal, done; `CasNext`:
//! the link and its dirty bit), write-backs of the lines holding table words
//! (`Pwb` with the spec lines they hold) and every fence of a worker;
//! markers give `invoke`/`return` (`recover` for an operation a crash cut
//! off). With `--crash` the run crashes at a seeded persistence event; the
//! `Crash` step carries the image's table words, the table is attached
//! (`ClevelTable::attach`, not traced: the spec's crash step settles the
//! moves itself) and the threads resume their operations, traced too.
//! Item blocks are named by the insert that wrote them (`10t + i + 1` for
//! thread `t`'s operation `i`; bulk-loaded ones `900 + j`), levels by the
//! order they are made (1 the bottom).

use super::{
    config, extra, new_pool, open_runtime, pool_size, record, sched, sim, step, Threads,
    TraceError, TraceOptions, BASE, LINE, MK_INVOKE, MK_RETURN,
};
use perdure_memento::ds::clevel::{ClevelMmt, ClevelOp, ClevelTable};
use perdure_memento::word::{offset_of, tag_of, CasWord};
use perdure_memento::{ClearMode, DetectableCasAtomic, Runtime};
use perdure_pm::sim::{SimEvent, SimOp};
use perdure_pm::{Pool, Sim};
use serde_json::{json, Value};
use std::collections::HashMap;

/// The bulk-loaded keys.
const PRE: [(u64, u64); 2] = [(1, 1), (2, 2)];
/// Buckets of the levels in the order they are made (one slot each).
const SIZES: [u64; 4] = [1, 2, 4, 8];
/// Offsets inside the header and a level (clevel.rs's layout).
const H_LAST: u64 = 16;
const L_BUCKETS: u64 = 0;
const L_NEXT: u64 = 8;
const L_SEG0: u64 = 24;
const SLOT: u64 = 16;

/// Thread `tid`'s operation `i` (module docs).
pub(super) fn clevel_op(threads: usize, tid: usize, i: u64) -> ClevelOp {
    let own = 10 * tid as u64;
    let next = 10 * (tid % threads + 1) as u64 + 1;
    match i {
        0 => ClevelOp::Insert(own + 1, 100 + own + 1),
        1 if tid == threads => ClevelOp::Resize,
        _ if i % 2 == 1 => ClevelOp::Delete(next),
        _ => ClevelOp::Insert(own + i + 1, 100 + own + i + 1),
    }
}

fn op_json(op: ClevelOp) -> Value {
    match op {
        ClevelOp::Insert(k, _) => json!(["ins", k]),
        ClevelOp::Delete(k) => json!(["del", k]),
        ClevelOp::Lookup(k) => json!(["get", k]),
        ClevelOp::Resize => json!(["rsz", 0]),
    }
}

/// A raw word of the pool.
fn raw(pool: &Pool<Sim>, off: u64) -> u64 {
    pool.word(off)
        .map(|w| w.load(std::sync::atomic::Ordering::Acquire))
        .unwrap_or(0)
}

/// Maps a run's events to steps (module docs).
struct ClevelMap {
    seed: u64,
    threads: usize,
    markers: u64,
    tids: Threads,
    result: Vec<u64>,
    open: Vec<Option<u64>>,
    cut: Vec<Option<u64>>,
    /// The operation each thread is in (for naming the items it writes).
    cur: Vec<Option<u64>>,
    run: u64,
    last: u64,
    /// Level directories → level numbers (1 the bottom), and their slots.
    levels: HashMap<u64, usize>,
    slots: HashMap<u64, (usize, u64)>,
    /// Item blocks → item numbers.
    items: HashMap<u64, u64>,
    /// The workers' stores to other words (a fresh level's directory).
    fresh: HashMap<u64, u64>,
    steps: bool,
}

impl ClevelMap {
    fn id(&self, tid: usize, i: u64) -> u64 {
        self.run * 1000 + tid as u64 * 10 + i
    }

    fn err(&self, reason: String) -> TraceError {
        TraceError::unmapped(self.seed, reason)
    }

    fn add_level(&mut self, dir: u64, n: u64, seg: u64) {
        let l = self.levels.len() + 1;
        self.levels.insert(dir, l);
        for j in 0..n {
            self.slots.insert(seg + j * SLOT, (l, j));
        }
    }

    fn level_of(&self, dir: u64) -> Result<usize, TraceError> {
        if dir == 0 {
            return Ok(0);
        }
        self.levels
            .get(&dir)
            .copied()
            .ok_or_else(|| self.err(format!("no known level at {dir:#x}")))
    }

    /// A slot's value (the stable or annotated word's value) as the spec's word.
    fn slot_word(&self, v: u64) -> Result<Value, TraceError> {
        let off = offset_of(v);
        let it = if off == 0 {
            0
        } else {
            *self
                .items
                .get(&off)
                .ok_or_else(|| self.err(format!("slot word {v:#x} names no known item")))?
        };
        Ok(json!({"it": it, "mv": tag_of(v) & 1 != 0, "dn": tag_of(v) & 2 != 0}))
    }

    fn link_word(&self, w: u64) -> Result<Value, TraceError> {
        Ok(json!({"to": self.level_of(w & !1)?, "dirty": w & 1 != 0}))
    }

    fn last_word(&self, w: u64) -> Result<Value, TraceError> {
        Ok(json!(self.level_of(offset_of(CasWord::decode(w).value))?))
    }

    fn marker(&mut self, e: &SimEvent, tid: usize, word: u64, out: &mut Vec<Value>) {
        if word == 8 {
            self.result[tid] = e.val;
            return;
        }
        let (kind, i) = (e.val & 3, e.val >> 2);
        if kind == MK_INVOKE {
            self.cur[tid] = Some(i);
            if self.cut[tid] == Some(i) {
                return; // the resumption of a cut-off operation
            }
            self.open[tid] = Some(i);
            let op = clevel_op(self.threads, tid, i);
            out.push(json!({"type":"invoke","id":self.id(tid, i),"thread":tid,
                            "op":op_json(op)}));
        } else if kind == MK_RETURN {
            let v = self.result[tid];
            self.cur[tid] = None;
            if self.cut[tid].take() == Some(i) {
                out.push(json!({"type":"recover","id":self.id(tid, i),"value":v}));
            } else {
                self.open[tid] = None;
                out.push(json!({"type":"return","id":self.id(tid, i),"value":v}));
            }
        }
    }

    /// The spec lines a write-back of the line at `line` holds.
    fn lines_in(&self, line: u64) -> Vec<Value> {
        let mut v: Vec<(u8, usize, u64)> = Vec::new();
        for (&off, &(l, j)) in &self.slots {
            if off / LINE * LINE == line {
                v.push((0, l, j));
            }
        }
        for (&dir, &l) in &self.levels {
            if (dir + L_NEXT) / LINE * LINE == line {
                v.push((1, l, 0));
            }
        }
        if self.last / LINE * LINE == line {
            v.push((2, 0, 0));
        }
        v.sort_unstable();
        v.into_iter()
            .map(|(k, l, j)| match k {
                0 => json!(["s", l, j]),
                1 => json!(["n", l]),
                _ => json!(["last"]),
            })
            .collect()
    }

    fn protocol(&mut self, e: &SimEvent, t: usize) -> Result<Option<Value>, TraceError> {
        if e.op == SimOp::Pwb {
            let lines = self.lines_in(e.off / LINE * LINE);
            return Ok((!lines.is_empty()).then(|| step("Pwb", t, json!({"lines": lines}))));
        }
        if let Some(&(l, j)) = self.slots.get(&e.off) {
            let s = json!([l, j]);
            let v = CasWord::decode(e.val);
            let st = match e.op {
                SimOp::Load => step(
                    "LoadSlot",
                    t,
                    json!({"s": s, "w": self.slot_word(v.value)?}),
                ),
                SimOp::DwordCas if v.tid != 0 => {
                    step("DCas", t, json!({"s": s, "w": self.slot_word(v.value)?}))
                }
                SimOp::DwordCas => {
                    step("Stable", t, json!({"s": s, "w": self.slot_word(v.value)?}))
                }
                SimOp::Cas | SimOp::CasFailed => step(
                    "CasSlot",
                    t,
                    json!({"s": s, "ok": e.op == SimOp::Cas, "w": self.slot_word(v.value)?}),
                ),
                op => step("Unknown", t, json!({"op": format!("{op:?}"), "s": s})),
            };
            return Ok(Some(st));
        }
        if e.off == self.last {
            let v = CasWord::decode(e.val);
            let st = match e.op {
                SimOp::Load => step("LoadLast", t, json!({"w": self.last_word(e.val)?})),
                SimOp::DwordCas if v.tid != 0 => {
                    step("DCasLast", t, json!({"w": self.last_word(e.val)?}))
                }
                SimOp::DwordCas => step("StableLast", t, json!({"w": self.last_word(e.val)?})),
                op => step(
                    "Unknown",
                    t,
                    json!({"op": format!("{op:?}"), "word": "last"}),
                ),
            };
            return Ok(Some(st));
        }
        if e.off >= L_NEXT {
            if let Some(&l) = self.levels.get(&(e.off - L_NEXT)) {
                if matches!(e.op, SimOp::Cas)
                    && e.val & !1 != 0
                    && !self.levels.contains_key(&(e.val & !1))
                {
                    // A grown level, linked: its directory as the grower wrote it.
                    let dir = e.val & !1;
                    let n = self.fresh.get(&(dir + L_BUCKETS)).copied().unwrap_or(0);
                    let seg = self.fresh.get(&(dir + L_SEG0)).copied().unwrap_or(0);
                    if n == 0 || seg == 0 {
                        return Err(self.err(format!("linked level {dir:#x} never written")));
                    }
                    self.add_level(dir, n, seg);
                }
                let st = match e.op {
                    SimOp::Load => {
                        step("LoadNext", t, json!({"of": l, "w": self.link_word(e.val)?}))
                    }
                    SimOp::Cas | SimOp::CasFailed => step(
                        "CasNext",
                        t,
                        json!({"of": l, "ok": e.op == SimOp::Cas, "w": self.link_word(e.val)?}),
                    ),
                    op => step("Unknown", t, json!({"op": format!("{op:?}"), "next": l})),
                };
                return Ok(Some(st));
            }
        }
        if e.op == SimOp::Store {
            self.fresh.insert(e.off, e.val);
            // An item block: its key, stored by the thread whose insert it is.
            if let Some(i) = self.cur.get(t).copied().flatten() {
                if let ClevelOp::Insert(k, _) = clevel_op(self.threads, t, i) {
                    if e.val == k && e.off % 16 == 0 && !self.items.contains_key(&e.off) {
                        self.items.insert(e.off, 10 * t as u64 + i + 1);
                    }
                }
            }
        }
        Ok(None)
    }

    fn map(&mut self, events: &[SimEvent], out: &mut Vec<Value>) -> Result<(), TraceError> {
        for e in events {
            if let Some((tid, word)) = self.tids.learn(e, self.markers, self.threads) {
                self.marker(e, tid, word, out);
                continue;
            }
            let Some(&t) = self.tids.of.get(&e.thread) else {
                continue;
            };
            if !self.steps {
                continue;
            }
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

    /// The crash: the image's slot words, links and `last`.
    fn crash_step(&self, words: &[u64]) -> Result<Value, TraceError> {
        let word = |off: u64| words.get((off / 8) as usize).copied().unwrap_or(0);
        let mut slots: Vec<(&(usize, u64), &u64)> =
            self.slots.iter().map(|(o, s)| (s, o)).collect();
        slots.sort_unstable();
        let slots = slots
            .into_iter()
            .map(|(&(l, j), &o)| {
                Ok(json!([
                    l,
                    j,
                    self.slot_word(CasWord::decode(word(o)).value)?
                ]))
            })
            .collect::<Result<Vec<Value>, TraceError>>()?;
        let mut links: Vec<(usize, u64)> = self.levels.iter().map(|(&d, &l)| (l, d)).collect();
        links.sort_unstable();
        let links = links
            .into_iter()
            .map(|(l, d)| Ok(json!([l, self.link_word(word(d + L_NEXT))?])))
            .collect::<Result<Vec<Value>, TraceError>>()?;
        Ok(
            json!({"type":"step","action":"Crash","slots":slots,"links":links,
                  "last":self.last_word(word(self.last))?}),
        )
    }
}

fn work_json(threads: usize, ops: u64) -> Value {
    json!((1..=threads)
        .map(|t| (0..ops)
            .map(|i| op_json(clevel_op(threads, t, i)))
            .collect::<Vec<_>>())
        .collect::<Vec<_>>())
}

/// The runtime on `pool` and its (attached) table.
fn open_table(pool: &Pool<Sim>) -> Result<(Runtime<'_, Sim, ClevelMmt>, ClevelTable), TraceError> {
    let rt = open_runtime::<ClevelMmt>(pool, 8, ClearMode::Floor)?;
    let t = ClevelTable::attach(pool, rt.object_root())?;
    Ok((rt, t))
}

pub(super) fn clevel_run(
    seed: u64,
    run: u64,
    opts: &TraceOptions,
    out: &mut Vec<Value>,
) -> Result<(), TraceError> {
    let (threads, ops) = (opts.threads, opts.ops);
    let size = pool_size::<ClevelMmt>(threads);
    let ex = extra::<ClevelMmt>(threads);
    let setup = |pool: &Pool<Sim>| -> Result<(), TraceError> {
        let rt = Runtime::<Sim, ClevelMmt>::create(pool, BASE, &config(threads))?;
        let mut h = rt.handle(1)?;
        let t = ClevelTable::create_with(&mut h, 1, 1, &PRE)?;
        drop(h);
        pool.psync();
        rt.set_object_root(t.offset())?;
        Ok(())
    };
    let work = |rt: &Runtime<'_, Sim, ClevelMmt>, tab: &ClevelTable, tid: usize| {
        super::run_marked(rt, tid, ex, ops, |h, mmt, i| {
            tab.run(h, mmt, clevel_op(threads, tid, i))
                .expect("Clevel operation")
        });
    };
    let crash_at = if opts.crash {
        let pool = new_pool(size, false)?;
        setup(&pool)?;
        let (rt, tab) = open_table(&pool)?;
        let (_, _, total) = record(&pool, threads, seed, None, 0, |t| work(&rt, &tab, t))?;
        Some(1 + sched::mix(seed ^ 0xc1e7) % total.max(1))
    } else {
        None
    };
    let pool = new_pool(size, false)?;
    setup(&pool)?;
    let (rt, tab) = open_table(&pool)?;
    let hdr = tab.offset();
    let mut m = ClevelMap {
        seed,
        threads,
        markers: ex,
        tids: Threads::default(),
        result: vec![0; threads + 1],
        open: vec![None; threads + 1],
        cut: vec![None; threads + 1],
        cur: vec![None; threads + 1],
        run,
        last: hdr + H_LAST,
        levels: HashMap::new(),
        slots: HashMap::new(),
        items: HashMap::new(),
        fresh: HashMap::new(),
        steps: true,
    };
    // The two levels create made, and the bulk-loaded items where they are.
    let mut dir = offset_of(DetectableCasAtomic::at(hdr + H_LAST).peek(&pool).value);
    let mut pre = Vec::new();
    while dir != 0 {
        let n = raw(&pool, dir + L_BUCKETS);
        let seg = raw(&pool, dir + L_SEG0);
        m.add_level(dir, n, seg);
        let l = m.levels.len();
        for j in 0..n {
            let v = CasWord::decode(raw(&pool, seg + j * SLOT)).value;
            let item = offset_of(v);
            if item != 0 {
                let key = raw(&pool, item);
                let k = PRE
                    .iter()
                    .position(|&(pk, _)| pk == key)
                    .ok_or_else(|| m.err(format!("bulk-loaded key {key} unknown")))?;
                m.items.insert(item, 901 + k as u64);
                pre.push((k, json!([[l, j], key])));
            }
        }
        dir = raw(&pool, dir + L_NEXT) & !1;
    }
    pre.sort_by_key(|p| p.0);
    out.push(
        json!({"type":"step","action":"Begin","seed":seed,"threads":threads,
                    "crash":opts.crash,"work":work_json(threads, ops),
                    "pre":pre.into_iter().map(|p| p.1).collect::<Vec<_>>(),
                    "size":SIZES}),
    );
    let (part, image, _) = record(&pool, threads, seed, crash_at, seed ^ 0x1a6e, |t| {
        work(&rt, &tab, t)
    })?;
    m.map(&part.events, out)?;
    drop(rt);
    let Some(words) = image else {
        return Ok(());
    };
    out.push(m.crash_step(&words)?);
    out.push(json!({"type":"crash"}));
    let after = Pool::volatile_from_words(&words, sim(false))?;
    after.reincarnate();
    let (rt, tab) = open_table(&after)?;
    m.tids = Threads::default();
    for tid in 1..=threads {
        m.cur[tid] = None;
        if let Some(i) = m.open[tid].take() {
            if rt.next_op(tid) > i {
                out.push(json!({"type":"recover","id":m.id(tid, i),"value":rt.last_result(tid)}));
            } else {
                m.cut[tid] = Some(i);
            }
        }
    }
    let (part, _, _) = record(&after, threads, seed ^ 0x5eed, None, 0, |t| {
        work(&rt, &tab, t)
    })?;
    m.map(&part.events, out)
}

//! Seeded generation of histories that are durably linearizable by
//! construction, for tests and benchmarks.
//!
//! The generator runs a sequential reference object ([`ReferenceObject`], a
//! plain implementation independent of the checker's models) and a set of
//! simulated threads. Each step either invokes an operation on an idle
//! thread, makes a pending operation *take effect* (applies it to the
//! reference object: its linearization point, which emits no event),
//! returns an operation that took effect with the reference result, crashes,
//! or acts on an operation a crash cut off. Since every result comes from
//! applying the operation at a point between its invocation and its return,
//! the history is linearizable, with randomly overlapping intervals.
//!
//! At a crash every pending operation is cut off. One that had already taken
//! effect is later `recover`ed with its result (with probability
//! [`GenConfig::recover_percent`]) or left without `recover`; one that had
//! not is dropped (never takes effect) or takes effect at a random later
//! step — after the crash, as recovery may complete it — and may then be
//! `recover`ed too. That covers every case `HISTORY.md` allows.

use super::parse::ObjectKind;
use serde_json::{json, Value};
use std::collections::{BTreeMap, VecDeque};

/// SplitMix64: a small, seedable, reproducible random number generator.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`0` if `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }

    /// `true` with probability `percent`/100.
    pub fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < u64::from(percent)
    }
}

/// A sequential object on JSON values: the generator's reference semantics,
/// written independently of the checker's models.
#[derive(Clone, Debug)]
pub enum ReferenceObject {
    /// A register.
    Register(Value),
    /// A counter.
    Counter(i128),
    /// A queue, front first.
    Queue(VecDeque<Value>),
    /// A stack, top last.
    Stack(Vec<Value>),
    /// A set, keyed by the key's JSON text.
    Set(BTreeMap<String, Value>),
    /// A map, keyed by the key's JSON text.
    Map(BTreeMap<String, (Value, Value)>),
}

impl ReferenceObject {
    /// The object described by a header's `object` and `init` (defaults as in
    /// the checker: register `0`, counter `0`, empty collections; queue and
    /// stack arrays list the front/top first; map `init` as `[key, value]`
    /// pairs). `None` if `init` does not fit.
    pub fn new(object: ObjectKind, init: Option<&Value>) -> Option<ReferenceObject> {
        Some(match (object, init) {
            (ObjectKind::Register, None) => ReferenceObject::Register(json!(0)),
            (ObjectKind::Register, Some(v)) => ReferenceObject::Register(v.clone()),
            (ObjectKind::Counter, None) => ReferenceObject::Counter(0),
            (ObjectKind::Counter, Some(v)) => ReferenceObject::Counter(i128::from(v.as_i64()?)),
            (ObjectKind::Queue, None) => ReferenceObject::Queue(VecDeque::new()),
            (ObjectKind::Queue, Some(v)) => {
                ReferenceObject::Queue(v.as_array()?.iter().cloned().collect())
            }
            (ObjectKind::Stack, None) => ReferenceObject::Stack(Vec::new()),
            (ObjectKind::Stack, Some(v)) => {
                ReferenceObject::Stack(v.as_array()?.iter().rev().cloned().collect())
            }
            (ObjectKind::Set, None) => ReferenceObject::Set(BTreeMap::new()),
            (ObjectKind::Set, Some(v)) => ReferenceObject::Set(
                v.as_array()?
                    .iter()
                    .map(|k| (k.to_string(), k.clone()))
                    .collect(),
            ),
            (ObjectKind::Map, None) => ReferenceObject::Map(BTreeMap::new()),
            (ObjectKind::Map, Some(v)) => {
                let mut m = BTreeMap::new();
                for pair in v.as_array()? {
                    let kv = pair.as_array()?;
                    if kv.len() != 2 {
                        return None;
                    }
                    m.insert(kv[0].to_string(), (kv[0].clone(), kv[1].clone()));
                }
                ReferenceObject::Map(m)
            }
        })
    }

    /// Applies operation `op(args)` and returns its result, or `None` if the
    /// object has no such operation with that many arguments.
    pub fn apply(&mut self, op: &str, args: &[Value]) -> Option<Value> {
        Some(match (self, op, args) {
            (ReferenceObject::Register(v), "read", []) => v.clone(),
            (ReferenceObject::Register(v), "write", [w]) => {
                *v = w.clone();
                Value::Null
            }
            (ReferenceObject::Register(v), "cas", [old, new]) => {
                if v == old {
                    *v = new.clone();
                    json!(true)
                } else {
                    json!(false)
                }
            }
            (ReferenceObject::Counter(c), "add", [d]) => {
                *c += i128::from(d.as_i64()?);
                Value::Null
            }
            (ReferenceObject::Counter(c), "get", []) => json!(i64::try_from(*c).ok()?),
            (ReferenceObject::Queue(q), "enq", [v]) => {
                q.push_back(v.clone());
                Value::Null
            }
            (ReferenceObject::Queue(q), "deq", []) => q.pop_front().unwrap_or(Value::Null),
            (ReferenceObject::Stack(s), "push", [v]) => {
                s.push(v.clone());
                Value::Null
            }
            (ReferenceObject::Stack(s), "pop", []) => s.pop().unwrap_or(Value::Null),
            (ReferenceObject::Set(s), "insert", [k]) => {
                json!(s.insert(k.to_string(), k.clone()).is_none())
            }
            (ReferenceObject::Set(s), "remove", [k]) => json!(s.remove(&k.to_string()).is_some()),
            (ReferenceObject::Set(s), "contains", [k]) => json!(s.contains_key(&k.to_string())),
            (ReferenceObject::Map(m), "put", [k, v]) => m
                .insert(k.to_string(), (k.clone(), v.clone()))
                .map_or(Value::Null, |(_, old)| old),
            (ReferenceObject::Map(m), "get", [k]) => m
                .get(&k.to_string())
                .map_or(Value::Null, |(_, v)| v.clone()),
            (ReferenceObject::Map(m), "remove", [k]) => {
                m.remove(&k.to_string()).map_or(Value::Null, |(_, v)| v)
            }
            _ => return None,
        })
    }
}

/// What to generate.
#[derive(Clone, Debug)]
pub struct GenConfig {
    /// The object.
    pub object: ObjectKind,
    /// Number of threads.
    pub threads: u64,
    /// Approximate number of events (the final returns and recovers may add
    /// up to two per thread and per cut-off operation).
    pub events: usize,
    /// Number of crash events, spread over the history.
    pub crashes: usize,
    /// Keys are drawn from `0..keys` (`set`, `map`).
    pub keys: u64,
    /// Register values are drawn from `0..values` (queue, stack and map
    /// values are unique).
    pub values: u64,
    /// Probability (percent) that a cut-off operation that took effect is
    /// `recover`ed.
    pub recover_percent: u32,
    /// Start from a random non-default `init`.
    pub random_init: bool,
    /// The seed.
    pub seed: u64,
}

impl GenConfig {
    /// Defaults: 4 threads, 200 events, 2 crashes, 8 keys, 4 register
    /// values, 50% recovered, random `init`.
    pub fn new(object: ObjectKind, seed: u64) -> GenConfig {
        GenConfig {
            object,
            threads: 4,
            events: 200,
            crashes: 2,
            keys: 8,
            values: 4,
            recover_percent: 50,
            random_init: true,
            seed,
        }
    }
}

struct Pending {
    id: u64,
    op: &'static str,
    args: Vec<Value>,
    /// `Some(result)` once it took effect.
    result: Option<Value>,
}

struct CutOffOp {
    id: u64,
    op: &'static str,
    args: Vec<Value>,
    result: Option<Value>,
    /// Whether it may still take effect (if it has not).
    may_take_effect: bool,
    /// Whether it is `recover`ed once it took effect.
    recover: bool,
}

/// Generates a durably linearizable history as ndjson (one event per line,
/// newline-terminated).
pub fn generate(config: &GenConfig) -> String {
    let mut rng = SplitMix64::new(config.seed ^ 0x0068_6973_746f_7279);
    let mut fresh = 1_000u64; // unique values for enq/push/put
    let init = if config.random_init {
        random_init(config, &mut rng)
    } else {
        None
    };
    let mut object = match ReferenceObject::new(config.object, init.as_ref()) {
        Some(o) => o,
        None => ReferenceObject::new(config.object, None).unwrap_or(ReferenceObject::Counter(0)),
    };
    let mut out = String::new();
    let mut header = json!({"type": "header", "object": config.object.name()});
    if let Some(init) = init {
        header["init"] = init;
    }
    out.push_str(&header.to_string());
    out.push('\n');
    let mut events = 1usize;

    let threads = config.threads.max(1) as usize;
    let mut pending: Vec<Option<Pending>> = (0..threads).map(|_| None).collect();
    let mut cut_off: Vec<CutOffOp> = Vec::new();
    let mut next_id = 1u64;
    let crash_every = config.events / (config.crashes + 1);
    let mut crashes_left = config.crashes;

    let emit = |out: &mut String, events: &mut usize, v: Value| {
        out.push_str(&v.to_string());
        out.push('\n');
        *events += 1;
    };

    while events < config.events {
        if crashes_left > 0 && events >= crash_every * (config.crashes - crashes_left + 1) {
            crashes_left -= 1;
            emit(&mut out, &mut events, json!({"type": "crash"}));
            for slot in pending.iter_mut() {
                if let Some(p) = slot.take() {
                    cut_off.push(CutOffOp {
                        id: p.id,
                        op: p.op,
                        args: p.args,
                        result: p.result,
                        may_take_effect: rng.chance(50),
                        recover: rng.chance(config.recover_percent),
                    });
                }
            }
            continue;
        }
        if !cut_off.is_empty() && rng.chance(10) {
            let k = rng.below(cut_off.len() as u64) as usize;
            let c = &mut cut_off[k];
            match (&c.result, c.may_take_effect, c.recover) {
                (None, true, _) => c.result = object.apply(c.op, &c.args),
                (Some(result), _, true) => {
                    let line = json!({"type": "recover", "id": c.id, "value": result});
                    cut_off.swap_remove(k);
                    emit(&mut out, &mut events, line);
                }
                _ => {
                    cut_off.swap_remove(k);
                }
            }
            continue;
        }
        let t = rng.below(threads as u64) as usize;
        match &mut pending[t] {
            None => {
                let (op, args) = random_call(config, &mut rng, &mut fresh);
                let id = next_id;
                next_id += 1;
                emit(
                    &mut out,
                    &mut events,
                    json!({"type": "invoke", "id": id, "thread": t, "op": op, "args": args}),
                );
                pending[t] = Some(Pending {
                    id,
                    op,
                    args,
                    result: None,
                });
            }
            Some(p) if p.result.is_none() => p.result = object.apply(p.op, &p.args),
            Some(p) => {
                let line = json!({"type": "return", "id": p.id, "value": p.result});
                pending[t] = None;
                emit(&mut out, &mut events, line);
            }
        }
    }
    // Finish: return every pending operation, recover those meant to be;
    // an operation that has not taken effect yet takes it now.
    let mut settle = |kind: &str, id: u64, result: Option<Value>, op: &str, args: &[Value]| {
        let value = result.or_else(|| object.apply(op, args));
        emit(
            &mut out,
            &mut events,
            json!({"type": kind, "id": id, "value": value}),
        );
    };
    for p in pending.into_iter().flatten() {
        settle("return", p.id, p.result, p.op, &p.args);
    }
    for c in cut_off {
        if c.recover && (c.result.is_some() || c.may_take_effect) {
            settle("recover", c.id, c.result, c.op, &c.args);
        }
    }
    out
}

fn random_init(config: &GenConfig, rng: &mut SplitMix64) -> Option<Value> {
    let n = rng.below(4);
    let v = match config.object {
        ObjectKind::Register => json!(rng.below(config.values.max(1))),
        ObjectKind::Counter => json!(rng.below(10) as i64 - 5),
        ObjectKind::Queue | ObjectKind::Stack => {
            Value::Array((0..n).map(|i| json!(100 + i)).collect())
        }
        ObjectKind::Set => {
            let mut keys: Vec<u64> = (0..config.keys.max(1)).filter(|_| rng.chance(30)).collect();
            keys.dedup();
            json!(keys)
        }
        ObjectKind::Map => Value::Array(
            (0..config.keys.max(1))
                .filter(|_| rng.chance(30))
                .map(|k| json!([k, 100 + k]))
                .collect(),
        ),
    };
    Some(v)
}

fn random_call(
    config: &GenConfig,
    rng: &mut SplitMix64,
    fresh: &mut u64,
) -> (&'static str, Vec<Value>) {
    let mut unique = || {
        *fresh += 1;
        json!(*fresh)
    };
    let key = json!(rng.below(config.keys.max(1)));
    let value = json!(rng.below(config.values.max(1)));
    match config.object {
        ObjectKind::Register => match rng.below(5) {
            0 | 1 => ("read", vec![]),
            2 | 3 => ("write", vec![value]),
            _ => ("cas", vec![value, json!(rng.below(config.values.max(1)))]),
        },
        ObjectKind::Counter => {
            if rng.chance(60) {
                ("add", vec![json!(rng.below(9) as i64 - 3)])
            } else {
                ("get", vec![])
            }
        }
        ObjectKind::Queue => {
            if rng.chance(50) {
                ("enq", vec![unique()])
            } else {
                ("deq", vec![])
            }
        }
        ObjectKind::Stack => {
            if rng.chance(50) {
                ("push", vec![unique()])
            } else {
                ("pop", vec![])
            }
        }
        ObjectKind::Set => match rng.below(3) {
            0 => ("insert", vec![key]),
            1 => ("remove", vec![key]),
            _ => ("contains", vec![key]),
        },
        ObjectKind::Map => match rng.below(3) {
            0 => ("put", vec![key, unique()]),
            1 => ("get", vec![key]),
            _ => ("remove", vec![key]),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_is_reproducible_and_sized() {
        let mut c = GenConfig::new(ObjectKind::Queue, 7);
        c.events = 500;
        let a = generate(&c);
        assert_eq!(a, generate(&c));
        let lines = a.lines().count();
        assert!((500..540).contains(&lines), "{lines} lines");
        assert_eq!(a.lines().filter(|l| l.contains("\"crash\"")).count(), 2);
        c.seed = 8;
        assert_ne!(a, generate(&c));
    }

    #[test]
    fn reference_object_semantics() {
        let mut q = ReferenceObject::new(ObjectKind::Stack, Some(&json!([1, 2]))).unwrap();
        assert_eq!(q.apply("pop", &[]), Some(json!(1)));
        assert_eq!(q.apply("push", &[json!(3)]), Some(Value::Null));
        assert_eq!(q.apply("pop", &[]), Some(json!(3)));
        assert_eq!(q.apply("pop", &[]), Some(json!(2)));
        assert_eq!(q.apply("pop", &[]), Some(Value::Null));
        assert_eq!(q.apply("deq", &[]), None);
        let mut m = ReferenceObject::new(ObjectKind::Map, Some(&json!([[1, "a"]]))).unwrap();
        assert_eq!(m.apply("put", &[json!(1), json!("b")]), Some(json!("a")));
        assert_eq!(m.apply("remove", &[json!(1)]), Some(json!("b")));
        assert_eq!(m.apply("get", &[json!(1)]), Some(Value::Null));
    }
}

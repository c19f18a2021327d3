//! Property tests on large seeded histories that are durably linearizable by
//! construction (`history::generate`): they pass, every relaxation of them
//! passes, and mutations that make them impossible are rejected exactly
//! where they must be.

use perdure_check::history::generate::{generate, GenConfig, SplitMix64};
use perdure_check::history::{
    check_text, CheckOptions, CheckReport, ObjectKind, ParseOptions, Verdict,
};
use serde_json::{json, Value};

fn check(text: &str) -> CheckReport {
    check_text(text, &ParseOptions::default(), &CheckOptions::default())
        .unwrap_or_else(|e| panic!("generated history is malformed: {e}"))
}

fn config(object: ObjectKind, seed: u64, rng: &mut SplitMix64) -> GenConfig {
    let mut c = GenConfig::new(object, seed);
    c.threads = 3 + rng.below(10);
    c.events = 400 + rng.below(1600) as usize;
    c.crashes = 1 + rng.below(5) as usize;
    c.keys = 1 + rng.below(12);
    c.values = 2 + rng.below(4);
    c.recover_percent = 30 + rng.below(60) as u32;
    c
}

fn lines_of(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).expect("generated JSON"))
        .collect()
}

fn join(events: &[Value]) -> String {
    events.iter().map(|e| e.to_string() + "\n").collect()
}

/// Asserts what the minimal failing prefix promises: the history cut after
/// `end` fails, cut one line earlier it passes.
#[track_caller]
fn assert_minimal_prefix(events: &[Value], end: usize) {
    let cut = |n: usize| check(&join(&events[..n])).verdict;
    assert!(
        matches!(cut(end), Verdict::NotDurablyLinearizable(_)),
        "the prefix to line {end} passes"
    );
    assert_eq!(
        cut(end - 1),
        Verdict::DurablyLinearizable,
        "the prefix to line {} fails",
        end - 1
    );
}

/// 0-based indices of the `return` and `recover` events.
fn completions(events: &[Value]) -> Vec<usize> {
    (0..events.len())
        .filter(|&k| events[k]["type"] == "return" || events[k]["type"] == "recover")
        .collect()
}

#[test]
fn generated_histories_are_durably_linearizable() {
    let mut rng = SplitMix64::new(1);
    let mut ops = 0usize;
    for round in 0..10 {
        for object in ObjectKind::ALL {
            let text = generate(&config(object, rng.next_u64(), &mut rng));
            let report = check(&text);
            assert_eq!(
                report.verdict,
                Verdict::DurablyLinearizable,
                "{object} round {round}\n{text}"
            );
            ops += text.lines().filter(|l| l.contains("\"invoke\"")).count();
        }
    }
    assert!(ops > 30_000, "{ops} operations checked");
}

#[test]
fn generated_histories_contain_every_kind_of_crash_outcome() {
    // The generator must actually exercise cut-off, recovered and
    // taken-effect-after-crash operations, or the other tests are weak.
    let mut rng = SplitMix64::new(2);
    let (mut recovered, mut cut_off) = (0, 0);
    for object in ObjectKind::ALL {
        let text = generate(&config(object, rng.next_u64(), &mut rng));
        let h = perdure_check::history::parse_history(&text, &ParseOptions::default()).unwrap();
        for op in h.operations() {
            match op.outcome {
                perdure_check::history::Outcome::Recovered { .. } => recovered += 1,
                perdure_check::history::Outcome::CutOff { .. } => cut_off += 1,
                _ => {}
            }
        }
    }
    assert!(
        recovered >= 10 && cut_off >= 10,
        "{recovered} recovered, {cut_off} cut off"
    );
}

#[test]
fn impossible_results_are_rejected_exactly_at_their_line() {
    // No model ever produces the string "impossible" (the generator uses
    // integers, null and booleans), so the mutated operation can never be
    // linearized; every earlier prefix is unchanged and durably
    // linearizable, so the minimal failing prefix ends at the mutated line.
    let mut rng = SplitMix64::new(3);
    for round in 0..60 {
        let object = ObjectKind::ALL[round % 6];
        let text = generate(&config(object, rng.next_u64(), &mut rng));
        let mut events = lines_of(&text);
        let candidates = completions(&events);
        let k = candidates[rng.below(candidates.len() as u64) as usize];
        events[k]["value"] = json!("impossible");
        let id = events[k]["id"].as_u64().unwrap();
        let mutated = join(&events);
        let h = perdure_check::history::parse_history(&mutated, &ParseOptions::default()).unwrap();
        match check(&mutated).verdict {
            Verdict::NotDurablyLinearizable(v) => {
                assert_eq!(
                    v.prefix_end_line,
                    k + 1,
                    "{object} round {round}: {}",
                    v.explain(&h)
                );
                assert_eq!(h.operations()[v.culprit].id, id);
                assert!(v.prefix_is_minimal);
            }
            other => panic!(
                "{object} round {round}: mutated line {} accepted: {other:?}",
                k + 1
            ),
        }
    }
}

#[test]
fn relaxations_stay_durably_linearizable() {
    // Dropping a recover (the operation becomes cut off: optional) and
    // cutting the history anywhere (pending operations become optional) only
    // remove constraints.
    let mut rng = SplitMix64::new(4);
    for round in 0..30 {
        let object = ObjectKind::ALL[round % 6];
        let text = generate(&config(object, rng.next_u64(), &mut rng));
        let events = lines_of(&text);
        let recovers: Vec<usize> = (0..events.len())
            .filter(|&k| events[k]["type"] == "recover")
            .collect();
        if let Some(&k) = recovers.get(rng.below(recovers.len().max(1) as u64) as usize) {
            let mut fewer = events.clone();
            fewer.remove(k);
            assert_eq!(
                check(&join(&fewer)).verdict,
                Verdict::DurablyLinearizable,
                "{object} without line {}",
                k + 1
            );
        }
        let cut = 1 + rng.below(events.len() as u64) as usize;
        assert_eq!(
            check(&join(&events[..cut])).verdict,
            Verdict::DurablyLinearizable,
            "{object} cut at {cut}"
        );
    }
}

#[test]
fn flipping_the_first_result_on_a_set_key_is_rejected() {
    // The first operation on a key, if it completed before any other
    // operation on that key was invoked, sees the initial state: its boolean
    // result is forced, and the opposite one must be rejected at its line.
    let mut rng = SplitMix64::new(5);
    let mut flipped = 0;
    for _ in 0..40 {
        let mut c = config(ObjectKind::Set, rng.next_u64(), &mut rng);
        c.keys = 40; // many keys, so many have an isolated first operation
        let text = generate(&c);
        let events = lines_of(&text);
        // key -> (invoke index, id) of its first operation
        let mut first: std::collections::BTreeMap<String, (usize, u64)> = Default::default();
        let mut candidates = Vec::new();
        for (k, e) in events.iter().enumerate() {
            if e["type"] == "invoke" {
                let key = e["args"][0].to_string();
                first.entry(key).or_insert((k, e["id"].as_u64().unwrap()));
            }
        }
        for (&(inv, id), key) in first.values().zip(
            first
                .keys()
                .map(|k| serde_json::from_str::<Value>(k).unwrap()),
        ) {
            let Some(done) = (inv + 1..events.len()).find(|&k| {
                events[k]["id"].as_u64() == Some(id)
                    && (events[k]["type"] == "return" || events[k]["type"] == "recover")
            }) else {
                continue;
            };
            let isolated = (inv + 1..done)
                .all(|k| !(events[k]["type"] == "invoke" && events[k]["args"][0] == key));
            if isolated {
                candidates.push(done);
            }
        }
        candidates.sort_unstable();
        let Some(&k) = candidates.get(rng.below(candidates.len().max(1) as u64) as usize) else {
            continue;
        };
        let mut mutated = events.clone();
        let v = mutated[k]["value"]
            .as_bool()
            .expect("set results are booleans");
        mutated[k]["value"] = json!(!v);
        match check(&join(&mutated)).verdict {
            Verdict::NotDurablyLinearizable(v) => assert_eq!(v.prefix_end_line, k + 1),
            other => panic!("flipped line {} accepted: {other:?}", k + 1),
        }
        flipped += 1;
    }
    assert!(
        flipped >= 30,
        "only {flipped} histories had an isolated first operation"
    );
}

#[test]
fn a_queue_element_dequeued_twice_is_rejected() {
    // Enqueued values are unique; two completed deqs returning the same one
    // cannot both have taken it.
    let mut rng = SplitMix64::new(6);
    let mut tried = 0;
    for _ in 0..40 {
        let text = generate(&config(ObjectKind::Queue, rng.next_u64(), &mut rng));
        let mut events = lines_of(&text);
        let deqs: Vec<usize> = completions(&events)
            .into_iter()
            .filter(|&k| !events[k]["value"].is_null())
            .collect();
        if deqs.len() < 2 {
            continue;
        }
        let a = deqs[rng.below(deqs.len() as u64) as usize];
        let b = deqs[rng.below(deqs.len() as u64) as usize];
        // Only deq results are non-null in a queue history.
        if a == b || events[a]["value"] == events[b]["value"] {
            continue;
        }
        events[b]["value"] = events[a]["value"].clone();
        match check(&join(&events)).verdict {
            Verdict::NotDurablyLinearizable(v) => {
                assert!(
                    v.prefix_end_line <= a.max(b) + 1,
                    "{} > {}",
                    v.prefix_end_line,
                    a.max(b) + 1
                )
            }
            other => panic!(
                "duplicate deq result at lines {} and {} accepted: {other:?}",
                a + 1,
                b + 1
            ),
        }
        tried += 1;
    }
    assert!(tried >= 30, "{tried}");
}

#[test]
fn register_reads_of_values_never_written_are_rejected() {
    let mut rng = SplitMix64::new(7);
    for _ in 0..20 {
        let mut c = config(ObjectKind::Register, rng.next_u64(), &mut rng);
        c.values = 3; // written values are 0..3
        let text = generate(&c);
        let mut events = lines_of(&text);
        let reads: Vec<usize> = completions(&events)
            .into_iter()
            .filter(|&k| {
                let id = events[k]["id"].as_u64();
                events
                    .iter()
                    .any(|e| e["type"] == "invoke" && e["id"].as_u64() == id && e["op"] == "read")
            })
            .collect();
        let k = reads[rng.below(reads.len() as u64) as usize];
        events[k]["value"] = json!(99);
        match check(&join(&events)).verdict {
            Verdict::NotDurablyLinearizable(v) => assert_eq!(v.prefix_end_line, k + 1),
            other => panic!("read of 99 at line {} accepted: {other:?}", k + 1),
        }
    }
}

/// The completed operation with this id: (op name, invoke index, completion index).
fn completed_ops(events: &[Value]) -> std::collections::BTreeMap<u64, (String, usize, usize)> {
    let mut ops = std::collections::BTreeMap::new();
    let mut invoked = std::collections::BTreeMap::new();
    for (k, e) in events.iter().enumerate() {
        let Some(id) = e["id"].as_u64() else { continue };
        if e["type"] == "invoke" {
            invoked.insert(id, (e["op"].as_str().unwrap_or("").to_string(), k));
        } else if let Some((op, inv)) = invoked.get(&id) {
            ops.insert(id, (op.clone(), *inv, k));
        }
    }
    ops
}

#[test]
fn swapped_results_of_ordered_consumers_are_rejected_at_a_minimal_prefix() {
    // In a queue, take two elements a and b whose enqueues are ordered in
    // real time (a's completed before b's started) and whose dequeues are
    // too; swap the two dequeue results. FIFO then forbids the history — the
    // search has to prove it (nothing is impossible in isolation). The same
    // for a stack with pushes and pops nested LIFO. The reported prefix must
    // be minimal.
    let mut rng = SplitMix64::new(8);
    let mut tried = 0;
    for round in 0..80 {
        let object = if round % 2 == 0 {
            ObjectKind::Queue
        } else {
            ObjectKind::Stack
        };
        let mut c = config(object, rng.next_u64(), &mut rng);
        c.events = 300 + rng.below(500) as usize;
        let text = generate(&c);
        let mut events = lines_of(&text);
        let ops = completed_ops(&events);
        // producer of each value: (invoke, completion)
        let mut producer = std::collections::BTreeMap::new();
        for (id, (op, inv, done)) in &ops {
            if op == "enq" || op == "push" {
                let k = events
                    .iter()
                    .position(|e| e["type"] == "invoke" && e["id"].as_u64() == Some(*id))
                    .unwrap();
                producer.insert(events[k]["args"][0].to_string(), (*inv, *done));
            }
        }
        let consumers: Vec<(usize, usize, String)> = ops
            .values()
            .filter(|(op, _, done)| {
                (op == "deq" || op == "pop") && !events[*done]["value"].is_null()
            })
            .map(|(_, inv, done)| (*inv, *done, events[*done]["value"].to_string()))
            .collect();
        let mut pair = None;
        'search: for (i1, d1, v1) in &consumers {
            for (i2, d2, v2) in &consumers {
                let (Some(&(_, pd1)), Some(&(pi2, pd2))) = (producer.get(v1), producer.get(v2))
                else {
                    continue;
                };
                let consumers_ordered = d1 < i2;
                let ordered = if object == ObjectKind::Queue {
                    // enq(v1) < enq(v2), deq(v1) < deq(v2)
                    pd1 < pi2
                } else {
                    // push(v2) < push(v1) < pop(v1) < pop(v2), with push(v1)
                    // completing before pop(v1) starts
                    let pi1 = producer[v1].0;
                    pd2 < pi1 && pd1 < *i1
                };
                if consumers_ordered && ordered && pd2 < *i2 {
                    pair = Some((*d1, *d2));
                    break 'search;
                }
            }
        }
        let Some((d1, d2)) = pair else { continue };
        let v1 = events[d1]["value"].clone();
        events[d1]["value"] = events[d2]["value"].clone();
        events[d2]["value"] = v1;
        match check(&join(&events)).verdict {
            Verdict::NotDurablyLinearizable(v) => {
                assert!(
                    v.prefix_end_line <= d2 + 1,
                    "{object}: {} > {}",
                    v.prefix_end_line,
                    d2 + 1
                );
                assert_minimal_prefix(&events, v.prefix_end_line);
            }
            other => panic!(
                "{object}: swapped results at lines {} and {} accepted: {other:?}",
                d1 + 1,
                d2 + 1
            ),
        }
        tried += 1;
    }
    assert!(tried >= 50, "{tried}");
}

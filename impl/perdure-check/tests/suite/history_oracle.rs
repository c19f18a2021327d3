//! Differential test of the checker against a brute-force oracle that
//! follows the definition of durable linearizability literally.
//!
//! The oracle enumerates every sequence of distinct operations that contains
//! all completed and recovered operations (and any subset of the cut-off and
//! pending ones, anywhere after their invocation), keeps those that respect
//! real-time order, and runs them on the generator's reference object — a
//! separate implementation of the six objects, on whole objects (no per-key
//! partitioning, no memoization, no just-in-time candidate order, no
//! pruning of useless optional operations). On thousands of small random
//! histories — generated durably linearizable, then perturbed (results
//! changed, recovers dropped, adjacent lines swapped) — the checker must agree
//! with it, and on every violation its minimal failing prefix must fail
//! under the oracle while the prefix one line shorter passes.

use perdure_check::history::generate::{generate, GenConfig, ReferenceObject, SplitMix64};
use perdure_check::history::{
    check_history, parse_history, Call, CheckOptions, History, ObjectKind, Outcome, ParseOptions,
    Verdict,
};
use serde_json::{json, Value};
use std::collections::HashSet;

use crate::common;

/// How many times the default number of cases to run: 5 under
/// `PERDURE_DEPTH=deep`.
fn depth() -> usize {
    if std::env::var("PERDURE_DEPTH").as_deref() == Ok("deep") {
        5
    } else {
        1
    }
}

/// A passing row of the verification report, printed after the test's
/// assertions held.
fn report(name: &str, explored: &str, detail: &str) {
    let row = common::report_row(name, "cargo", "pass", explored, detail, None);
    println!("{row}");
}

/// Checks the well-formed history `text` with the checker and the oracle and
/// asserts that they agree: `None` (not checked) if it has more than
/// `max_ops` operations, else whether it is durably linearizable.
fn agreement(case: usize, text: &str, max_ops: usize) -> Option<bool> {
    let history = parse_history(text, &ParseOptions::default()).expect("well-formed");
    if history.operations().len() > max_ops {
        return None;
    }
    let expected = oracle(&history, header_init(text).as_ref());
    let verdict = check_history(&history, &CheckOptions::default()).verdict;
    let got = verdict == Verdict::DurablyLinearizable;
    assert_eq!(got, expected, "case {case}: checker {verdict:?}\n{text}");
    Some(got)
}

/// How many checked histories were durably linearizable and how many not.
#[derive(Default)]
struct Tally {
    pass: u32,
    fail: u32,
}

impl Tally {
    /// Counts one [`agreement`].
    fn add(&mut self, verdict: Option<bool>) {
        match verdict {
            Some(true) => self.pass += 1,
            Some(false) => self.fail += 1,
            None => {}
        }
    }

    /// Asserts that both verdicts were common, then reports the row `name`
    /// for the `histories` checked.
    fn report(&self, name: &str, histories: &str, detail: &str) {
        let (pass, fail) = (self.pass, self.fail);
        eprintln!("{pass} durably linearizable, {fail} not");
        assert!(pass > 400 && fail > 400, "{pass} pass, {fail} fail");
        report(
            name,
            &format!(
                "{} {histories}: {pass} durably linearizable, {fail} not",
                pass + fail
            ),
            detail,
        );
    }
}

/// The JSON arguments of a call, as written in the history.
fn args_of(call: &Call) -> Vec<Value> {
    call.map_args(Value::clone, |d| json!(d as i64))
}

struct OracleOp {
    name: &'static str,
    args: Vec<Value>,
    invoke: usize,
    /// `Some((line, result))` for completed and recovered operations.
    done: Option<(usize, Value)>,
}

fn header_init(text: &str) -> Option<Value> {
    let header: Value = serde_json::from_str(text.lines().next()?).ok()?;
    header.get("init").cloned()
}

/// Durably linearizable, by exhaustive enumeration.
fn oracle(history: &History, init: Option<&Value>) -> bool {
    let ops: Vec<OracleOp> = history
        .operations()
        .iter()
        .map(|op| OracleOp {
            name: op.call.name(),
            args: args_of(&op.call),
            invoke: op.invoke_line,
            done: match &op.outcome {
                Outcome::Returned { value, line } | Outcome::Recovered { value, line, .. } => {
                    Some((*line, value.clone()))
                }
                Outcome::CutOff { .. } | Outcome::Pending => None,
            },
        })
        .collect();
    let object = ReferenceObject::new(history.object(), init).expect("the generator's init fits");
    let mut used = vec![false; ops.len()];
    let mut failed = HashSet::new();
    extend(&ops, &mut used, &object, &mut failed)
}

/// Can the sequence built so far (`used`, ending in `object`) be extended
/// to a durable linearization? `failed` remembers (used, object) pairs
/// already known not to extend: the answer depends on nothing else.
fn extend(
    ops: &[OracleOp],
    used: &mut [bool],
    object: &ReferenceObject,
    failed: &mut HashSet<String>,
) -> bool {
    if ops
        .iter()
        .zip(used.iter())
        .all(|(op, &u)| u || op.done.is_none())
    {
        return true;
    }
    let key = format!("{used:?}{object:?}");
    if failed.contains(&key) {
        return false;
    }
    for x in 0..ops.len() {
        if used[x] {
            continue;
        }
        // x may come next only if no unplaced completed operation returned
        // before x was invoked.
        let blocked = ops.iter().enumerate().any(|(y, op)| {
            y != x
                && !used[y]
                && op
                    .done
                    .as_ref()
                    .is_some_and(|(line, _)| *line < ops[x].invoke)
        });
        if blocked {
            continue;
        }
        let mut next = object.clone();
        let result = next
            .apply(ops[x].name, &ops[x].args)
            .expect("operation of the object");
        if let Some((_, want)) = &ops[x].done {
            if *want != result {
                continue;
            }
        }
        used[x] = true;
        if extend(ops, used, &next, failed) {
            return true;
        }
        used[x] = false;
    }
    failed.insert(key);
    false
}

fn oracle_text(text: &str) -> bool {
    let history =
        parse_history(text, &ParseOptions::default()).expect("prefix of a well-formed history");
    oracle(&history, header_init(text).as_ref())
}

/// A small random history: generated durably linearizable, then perturbed.
fn random_history(rng: &mut SplitMix64) -> String {
    let object = ObjectKind::ALL[rng.below(6) as usize];
    let mut config = GenConfig::new(object, rng.next_u64());
    config.threads = 1 + rng.below(3);
    config.events = 6 + rng.below(12) as usize;
    config.crashes = rng.below(3) as usize;
    config.keys = 1 + rng.below(2);
    config.values = 3;
    let text = generate(&config);
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let domain = [
        json!(null),
        json!(true),
        json!(false),
        json!(0),
        json!(1),
        json!(2),
        json!(100),
        json!(1001),
        json!(1002),
        json!(1003),
    ];
    let mut k = 1;
    while k < lines.len() {
        let mut event: Value = serde_json::from_str(&lines[k]).expect("generated JSON");
        let ty = event["type"].as_str().unwrap_or("").to_string();
        if (ty == "return" || ty == "recover") && rng.chance(20) {
            event["value"] = domain[rng.below(domain.len() as u64) as usize].clone();
            lines[k] = event.to_string();
        }
        if ty == "recover" && rng.chance(15) {
            lines.remove(k);
            continue;
        }
        if k + 1 < lines.len() && rng.chance(4) {
            lines.swap(k, k + 1);
        }
        k += 1;
    }
    lines.join("\n") + "\n"
}

#[test]
fn checker_agrees_with_brute_force_on_small_random_histories() {
    let mut rng = SplitMix64::new(0x0a11_ce5e_ed00_0001);
    let (mut pass, mut fail, mut malformed) = (0u32, 0u32, 0u32);
    let mut per_object_fail = [0u32; 6];
    for case in 0..12_000 * depth() {
        let text = random_history(&mut rng);
        let Ok(history) = parse_history(&text, &ParseOptions::default()) else {
            malformed += 1; // a swap put a return before its invoke, etc.
            continue;
        };
        let expected = oracle(&history, header_init(&text).as_ref());
        let verdict = check_history(&history, &CheckOptions::default()).verdict;
        match (&verdict, expected) {
            (Verdict::DurablyLinearizable, true) => pass += 1,
            (Verdict::NotDurablyLinearizable(v), false) => {
                fail += 1;
                per_object_fail[ObjectKind::ALL.iter().position(|&o| o == history.object()).unwrap()] += 1;
                // The minimal failing prefix fails, one line less passes.
                let lines: Vec<&str> = text.lines().collect();
                let end = v.prefix_end_line;
                assert!(v.prefix_is_minimal);
                let prefix = lines[..end].join("\n");
                assert!(!oracle_text(&prefix), "case {case}: prefix to line {end} passes the oracle\n{text}");
                let shorter = lines[..end - 1].join("\n");
                assert!(
                    oracle_text(&shorter),
                    "case {case}: prefix to line {} already fails the oracle\n{text}",
                    end - 1
                );
                let culprit = &history.operations()[v.culprit];
                assert_eq!(culprit.outcome.completion_line(), Some(end), "case {case}");
                assert!(v.involved.contains(&v.culprit));
            }
            _ => panic!("case {case}: checker says {verdict:?}, oracle says durably linearizable = {expected}\n{text}"),
        }
    }
    eprintln!("{pass} durably linearizable, {fail} not, {malformed} malformed; failures per object {per_object_fail:?}");
    // The test means something only if both verdicts are common, for every
    // object.
    assert!(pass > 2_000 && fail > 2_000, "{pass} pass, {fail} fail");
    assert!(
        per_object_fail.iter().all(|&f| f > 100),
        "{per_object_fail:?}"
    );
    report(
        "history:oracle-small",
        &format!("{} histories of all six objects (<= 7 operations): {pass} durably linearizable, {fail} not", pass + fail),
        "verdict, minimal failing prefix and culprit agree with a brute-force enumeration",
    );
}

#[test]
fn checker_agrees_with_brute_force_on_crash_heavy_histories() {
    // Many crashes and few threads: most operations are cut off, recovered or
    // not, and many take effect after the crash that cut them off.
    let mut rng = SplitMix64::new(0x0c4a_5400_0000_0002);
    let mut tally = Tally::default();
    for case in 0..4_000 * depth() {
        let object = ObjectKind::ALL[case % 6];
        let mut config = GenConfig::new(object, rng.next_u64());
        config.threads = 2 + rng.below(2);
        config.events = 10 + rng.below(6) as usize;
        config.crashes = 2 + rng.below(3) as usize;
        config.keys = 1;
        config.values = 2;
        config.recover_percent = 60;
        let text = generate(&config);
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        // Change one result to a plausible value.
        let completions: Vec<usize> = (1..lines.len())
            .filter(|&k| lines[k].contains("\"return\"") || lines[k].contains("\"recover\""))
            .collect();
        if !completions.is_empty() && rng.chance(60) {
            let k = completions[rng.below(completions.len() as u64) as usize];
            let mut event: Value = serde_json::from_str(&lines[k]).unwrap();
            event["value"] = [
                json!(null),
                json!(true),
                json!(false),
                json!(0),
                json!(1),
                json!(1001),
                json!(1002),
            ][rng.below(7) as usize]
                .clone();
            lines[k] = event.to_string();
        }
        let text = lines.join("\n");
        // At most 7 operations: keep the factorial oracle fast.
        tally.add(agreement(case, &text, 7));
    }
    tally.report(
        "history:oracle-crashes",
        "crash-heavy histories (2-4 crashes, <= 7 operations)",
        "verdict agrees with a brute-force enumeration",
    );
}

#[test]
fn checker_agrees_with_brute_force_on_queue_and_stack_histories_with_crashes() {
    // Larger histories (up to 13 operations) of the two objects whose
    // search uses the producer-order rules; results are mutated to values
    // that other operations produce, so violations are subtle, and produced
    // values are sometimes made null or duplicated.
    let mut rng = SplitMix64::new(0x5eed_0000_0003);
    let mut tally = Tally::default();
    for case in 0..2_000 * depth() {
        let object = if case % 2 == 0 {
            ObjectKind::Queue
        } else {
            ObjectKind::Stack
        };
        let mut config = GenConfig::new(object, rng.next_u64());
        config.threads = 2 + rng.below(3);
        config.events = 14 + rng.below(12) as usize;
        config.crashes = rng.below(4) as usize;
        config.recover_percent = rng.below(100) as u32;
        let text = generate(&config);
        let mut lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let produced: Vec<Value> = lines
            .iter()
            .filter(|e| e["type"] == "invoke" && !e["args"].as_array().unwrap().is_empty())
            .map(|e| e["args"][0].clone())
            .chain([Value::Null])
            .collect();
        let completions: Vec<usize> = (1..lines.len())
            .filter(|&k| lines[k]["type"] == "return" || lines[k]["type"] == "recover")
            .collect();
        for _ in 0..rng.below(3) {
            if completions.is_empty() {
                break;
            }
            let k = completions[rng.below(completions.len() as u64) as usize];
            lines[k]["value"] = produced[rng.below(produced.len() as u64) as usize].clone();
        }
        if rng.chance(20) {
            if let Some(k) = (1..lines.len()).find(|&k| lines[k]["type"] == "recover") {
                lines.remove(k);
            }
        }
        // Sometimes make values non-unique or null, which the unique-value
        // rules must notice and leave alone.
        let producers: Vec<usize> = (1..lines.len())
            .filter(|&k| {
                lines[k]["type"] == "invoke" && !lines[k]["args"].as_array().unwrap().is_empty()
            })
            .collect();
        if !producers.is_empty() && rng.chance(25) {
            let k = producers[rng.below(producers.len() as u64) as usize];
            lines[k]["args"][0] = if rng.chance(50) {
                Value::Null
            } else {
                produced[rng.below(produced.len() as u64) as usize].clone()
            };
        }
        let text: String = lines.iter().map(|e| e.to_string() + "\n").collect();
        tally.add(agreement(case, &text, 13));
    }
    tally.report(
        "history:oracle-queue-stack",
        "queue/stack histories (<= 13 operations, crashes, null and duplicate values)",
        "verdict agrees with a memoized brute-force enumeration",
    );
}

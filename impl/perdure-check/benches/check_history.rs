//! How fast `perdure check-history` decides large histories with crashes.
//!
//! Every history is generated (seeded, `history::generate`) durably
//! linearizable by construction: a sequential reference object and threads
//! whose operations take effect at random points of randomly overlapping
//! intervals, with crashes that cut off pending operations — some recovered,
//! some left without `recover`, some taking effect after the crash, some
//! never. The headline row is a 60,000-event, 12-thread `set` history with 6
//! crashes; the others are a few thousand events of each other object, and
//! two violations (a flipped `set` result, a `queue` element lost by a
//! crash) to time the minimal-failing-prefix search.
//!
//! Prints a table and writes `out/bench/check_history.json` (under
//! `$PERDURE_OUT`, else `<repo>/out`). `PERDURE_BENCH_QUICK=1` shrinks the
//! histories tenfold.

use perdure_check::history::generate::{generate, GenConfig};
use perdure_check::history::{
    check_history, parse_history, CheckOptions, ObjectKind, ParseOptions, Verdict,
};
use perdure_harness::bench;
use serde_json::{json, Value};
use std::time::Instant;

struct Case {
    name: &'static str,
    config: GenConfig,
    /// Turns the generated history into a violation (or leaves it alone).
    mutate: fn(&mut [Value]),
    expect_violation: bool,
}

fn no_mutation(_: &mut [Value]) {}

/// Flips the result of the first `set` operation on key 0 that completes
/// before any other operation on key 0 starts: it saw `init`, so its result
/// was forced.
fn flip_first_set_result(events: &mut [Value]) {
    let Some(inv) = events
        .iter()
        .position(|e| e["type"] == "invoke" && e["args"][0] == json!(0))
    else {
        return;
    };
    let id = events[inv]["id"].clone();
    if let Some(done) =
        (inv + 1..events.len()).find(|&k| events[k]["id"] == id && events[k]["type"] != "invoke")
    {
        if let Some(b) = events[done]["value"].as_bool() {
            events[done]["value"] = json!(!b);
        }
    }
}

/// Makes the last `deq` that returned an element return `null` instead,
/// as if a crash had lost the element.
fn lose_queue_element(events: &mut [Value]) {
    let deqs: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| e["type"] == "return" && !e["value"].is_null())
        .map(|(k, _)| k)
        .collect();
    if let Some(&k) = deqs.get(deqs.len().saturating_sub(20)) {
        events[k]["value"] = Value::Null;
    }
}

fn config(
    object: ObjectKind,
    events: usize,
    threads: u64,
    crashes: usize,
    keys: u64,
    seed: u64,
) -> GenConfig {
    let mut c = GenConfig::new(object, seed);
    c.events = events;
    c.threads = threads;
    c.crashes = crashes;
    c.keys = keys;
    c.values = 8;
    c.recover_percent = 50;
    c
}

fn main() {
    let quick = bench::quick();
    let scale = |n: usize| if quick { n / 10 } else { n };
    let cases = vec![
        Case {
            name: "set 60k events, 12 threads, 6 crashes, 64 keys",
            config: config(ObjectKind::Set, scale(60_000), 12, 6, 64, 1),
            mutate: no_mutation,
            expect_violation: false,
        },
        Case {
            name: "set 60k events, 12 threads, 6 crashes, 4 keys",
            config: config(ObjectKind::Set, scale(60_000), 12, 6, 4, 2),
            mutate: no_mutation,
            expect_violation: false,
        },
        Case {
            name: "map 60k events, 12 threads, 6 crashes, 64 keys",
            config: config(ObjectKind::Map, scale(60_000), 12, 6, 64, 3),
            mutate: no_mutation,
            expect_violation: false,
        },
        Case {
            name: "register 4k events, 8 threads, 3 crashes",
            config: config(ObjectKind::Register, scale(4_000), 8, 3, 1, 4),
            mutate: no_mutation,
            expect_violation: false,
        },
        Case {
            name: "counter 4k events, 8 threads, 3 crashes",
            config: config(ObjectKind::Counter, scale(4_000), 8, 3, 1, 5),
            mutate: no_mutation,
            expect_violation: false,
        },
        Case {
            name: "queue 4k events, 8 threads, 3 crashes",
            config: config(ObjectKind::Queue, scale(4_000), 8, 3, 1, 6),
            mutate: no_mutation,
            expect_violation: false,
        },
        Case {
            name: "queue 20k events, 12 threads, 6 crashes",
            config: config(ObjectKind::Queue, scale(20_000), 12, 6, 1, 7),
            mutate: no_mutation,
            expect_violation: false,
        },
        Case {
            name: "stack 4k events, 8 threads, 3 crashes",
            config: config(ObjectKind::Stack, scale(4_000), 8, 3, 1, 8),
            mutate: no_mutation,
            expect_violation: false,
        },
        Case {
            name: "set 60k events, 64 keys, one flipped result",
            config: config(ObjectKind::Set, scale(60_000), 12, 6, 64, 9),
            mutate: flip_first_set_result,
            expect_violation: true,
        },
        Case {
            name: "queue 4k events, one element lost",
            config: config(ObjectKind::Queue, scale(4_000), 8, 3, 1, 10),
            mutate: lose_queue_element,
            expect_violation: true,
        },
    ];

    println!(
        "{:<48} {:>7} {:>6} {:>5} {:>10} {:>9} {:>10} {:>12}  verdict",
        "history", "events", "ops", "parts", "parse s", "check s", "search st", "events/s"
    );
    let mut rows = Vec::new();
    for case in cases {
        let text = generate(&case.config);
        let mut events: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("generated JSON"))
            .collect();
        (case.mutate)(&mut events);
        let text: String = events.iter().map(|e| e.to_string() + "\n").collect();

        // Best of three: parsing, then checking.
        let mut best_parse = f64::INFINITY;
        let mut best_check = f64::INFINITY;
        let mut report = None;
        let mut history = None;
        for _ in 0..3 {
            let t = Instant::now();
            let h =
                parse_history(&text, &ParseOptions::default()).expect("generated history parses");
            best_parse = best_parse.min(t.elapsed().as_secs_f64());
            let t = Instant::now();
            let r = check_history(&h, &CheckOptions::default());
            best_check = best_check.min(t.elapsed().as_secs_f64());
            report = Some(r);
            history = Some(h);
        }
        let (Some(report), Some(history)) = (report, history) else {
            continue;
        };
        let verdict = match &report.verdict {
            Verdict::DurablyLinearizable => "durably linearizable".to_string(),
            Verdict::NotDurablyLinearizable(v) => format!(
                "not durably linearizable (prefix to line {})",
                v.prefix_end_line
            ),
            Verdict::Undecided { .. } => "undecided".to_string(),
        };
        let violated = matches!(report.verdict, Verdict::NotDurablyLinearizable(_));
        assert_eq!(violated, case.expect_violation, "{}: {verdict}", case.name);
        let n_events = history.event_count();
        let total = best_parse + best_check;
        let rate = n_events as f64 / total;
        println!(
            "{:<48} {:>7} {:>6} {:>5} {:>10.4} {:>9.4} {:>10} {:>12.0}  {}",
            case.name,
            n_events,
            history.operations().len(),
            report.stats.partitions,
            best_parse,
            best_check,
            report.stats.search.steps,
            rate,
            verdict
        );
        rows.push(json!({
            "history": case.name,
            "object": history.object().name(),
            "events": n_events,
            "operations": history.operations().len(),
            "crashes": history.crash_lines().len(),
            "threads": case.config.threads,
            "partitions": report.stats.partitions,
            "largest_partition": report.stats.largest_partition,
            "search_steps": report.stats.search.steps,
            "memoized_states": report.stats.search.states,
            "prefix_searches": report.stats.prefix_searches,
            "parse_seconds": best_parse,
            "check_seconds": best_check,
            "events_per_second": rate,
            "verdict": verdict,
        }));
    }
    let out = bench::out_dir().join("check_history.json");
    let doc = json!({ "bench": "check_history", "quick": quick, "rows": rows });
    std::fs::write(
        &out,
        serde_json::to_string_pretty(&doc).expect("JSON") + "\n",
    )
    .expect("write results");
    println!("wrote {}", out.display());
}

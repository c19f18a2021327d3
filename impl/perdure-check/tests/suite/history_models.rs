//! Hand-written histories for every model: durably linearizable ones and
//! violations, each violation with the line its minimal failing prefix ends
//! at and the operation that completes there.
//!
//! Histories are written in a shorthand (see [`hist`]); the header is line 1
//! and event `k` (0-based) of the list is line `k + 2`.

use perdure_check::history::{
    check_history, parse_history, CheckOptions, History, ParseOptions, Verdict,
};
use serde_json::{json, Value};

/// Builds an ndjson history. `init` is JSON text, or `""` for none. Events:
/// `i ID THREAD OP ARG...` invoke (each ARG one JSON value without spaces),
/// `r ID VALUE` return, `c` crash, `v ID VALUE` recover.
fn hist(object: &str, init: &str, events: &[&str]) -> String {
    let mut header = json!({"type": "header", "object": object});
    if !init.is_empty() {
        header["init"] = serde_json::from_str(init).expect("init JSON");
    }
    let mut out = header.to_string() + "\n";
    for e in events {
        let t: Vec<&str> = e.split(' ').collect();
        let j = |s: &str| -> Value {
            serde_json::from_str(s).unwrap_or_else(|_| panic!("bad JSON {s:?} in {e:?}"))
        };
        let id = |s: &str| -> u64 { s.parse().unwrap() };
        let v = match t[0] {
            "i" => json!({"type": "invoke", "id": id(t[1]), "thread": id(t[2]), "op": t[3],
                          "args": t[4..].iter().map(|a| j(a)).collect::<Vec<_>>()}),
            "r" => json!({"type": "return", "id": id(t[1]), "value": j(t[2])}),
            "c" => json!({"type": "crash"}),
            "v" => json!({"type": "recover", "id": id(t[1]), "value": j(t[2])}),
            other => panic!("unknown shorthand {other:?}"),
        };
        out += &(v.to_string() + "\n");
    }
    out
}

fn check(text: &str) -> (History, Verdict) {
    let h = parse_history(text, &ParseOptions::default())
        .unwrap_or_else(|e| panic!("malformed: {e}\n{text}"));
    let v = check_history(&h, &CheckOptions::default()).verdict;
    (h, v)
}

#[track_caller]
fn assert_dl(text: &str) {
    let (_, v) = check(text);
    assert_eq!(v, Verdict::DurablyLinearizable, "\n{text}");
}

/// Asserts a violation whose minimal failing prefix ends at `line`, where
/// operation `culprit` completes.
#[track_caller]
fn assert_fails(text: &str, line: usize, culprit: u64) {
    let (h, v) = check(text);
    match v {
        Verdict::NotDurablyLinearizable(v) => {
            assert_eq!(
                v.prefix_end_line,
                line,
                "prefix end\n{}\n{text}",
                v.explain(&h)
            );
            assert_eq!(
                h.operations()[v.culprit].id,
                culprit,
                "culprit\n{}",
                v.explain(&h)
            );
            assert!(v.prefix_is_minimal);
        }
        other => panic!("expected a violation at line {line}, got {other:?}\n{text}"),
    }
}

// ---------------------------------------------------------------- register

#[test]
fn register_sequential_operations() {
    assert_dl(&hist(
        "register",
        "",
        &[
            "i 1 0 read",
            "r 1 0",
            "i 2 0 write 1",
            "r 2 null",
            "i 3 0 cas 1 2",
            "r 3 true",
            "i 4 0 cas 1 3",
            "r 4 false",
            "i 5 0 read",
            "r 5 2",
        ],
    ));
}

#[test]
fn register_default_init_is_zero_and_init_is_any_value() {
    assert_dl(&hist("register", "", &["i 1 0 read", "r 1 0"]));
    assert_fails(&hist("register", "", &["i 1 0 read", "r 1 null"]), 3, 1);
    assert_dl(&hist(
        "register",
        r#"{"a":[1,2]}"#,
        &["i 1 0 read", r#"r 1 {"a":[1,2.0]}"#],
    ));
    assert_dl(&hist("register", "null", &["i 1 0 read", "r 1 null"]));
}

#[test]
fn register_real_time_order_is_respected() {
    // write(1) returned before the read was invoked: the read must see 1.
    assert_fails(
        &hist(
            "register",
            "",
            &["i 1 0 write 1", "r 1 null", "i 2 1 read", "r 2 0"],
        ),
        5,
        2,
    );
    // Overlapping: either order.
    assert_dl(&hist(
        "register",
        "",
        &["i 1 0 write 1", "i 2 1 read", "r 2 0", "r 1 null"],
    ));
    assert_dl(&hist(
        "register",
        "",
        &["i 1 0 write 1", "i 2 1 read", "r 2 1", "r 1 null"],
    ));
    // A read cannot see a write invoked after it returned.
    assert_fails(
        &hist(
            "register",
            "",
            &["i 2 1 read", "r 2 1", "i 1 0 write 1", "r 1 null"],
        ),
        3,
        2,
    );
}

#[test]
fn register_completed_write_lost_by_a_crash() {
    assert_fails(
        &hist(
            "register",
            "",
            &["i 1 0 write 5", "r 1 null", "c", "i 2 0 read", "r 2 0"],
        ),
        6,
        2,
    );
    assert_dl(&hist(
        "register",
        "",
        &["i 1 0 write 5", "r 1 null", "c", "i 2 0 read", "r 2 5"],
    ));
}

#[test]
fn register_cut_off_write_may_take_effect_after_the_crash_but_only_once() {
    let late = [
        "i 1 0 write 5",
        "c",
        "i 2 0 read",
        "r 2 0",
        "i 3 1 read",
        "r 3 5",
    ];
    assert_dl(&hist("register", "", &late));
    // Once 5 is visible, nothing can bring 0 back.
    let mut back = late.to_vec();
    back.extend(["i 4 1 read", "r 4 0"]);
    assert_fails(&hist("register", "", &back), 9, 4);
    // Or it never takes effect.
    assert_dl(&hist(
        "register",
        "",
        &["i 1 0 write 5", "c", "i 2 0 read", "r 2 0"],
    ));
}

#[test]
fn register_recovered_cas_result_must_match_the_state() {
    // cas(0, 1) on 0 with nothing else going on must succeed.
    assert_fails(
        &hist("register", "", &["i 1 0 cas 0 1", "c", "v 1 false"]),
        4,
        1,
    );
    assert_dl(&hist(
        "register",
        "",
        &["i 1 0 cas 0 1", "c", "v 1 true", "i 2 0 read", "r 2 1"],
    ));
    // Recovered true: it took effect before the recover, so a later read sees 1.
    assert_fails(
        &hist(
            "register",
            "",
            &["i 1 0 cas 0 1", "c", "v 1 true", "i 2 0 read", "r 2 0"],
        ),
        6,
        2,
    );
    // A cas whose old value differs fails.
    assert_fails(&hist("register", "", &["i 1 0 cas 7 1", "r 1 true"]), 3, 1);
}

#[test]
fn register_write_returns_null() {
    assert_fails(&hist("register", "", &["i 1 0 write 5", "r 1 5"]), 3, 1);
}

// ---------------------------------------------------------------- counter

#[test]
fn counter_concurrent_adds() {
    let base = ["i 1 0 add 2", "i 2 1 add 3", "i 3 2 get"];
    for ok in [0, 2, 3, 5] {
        let mut e = base.to_vec();
        let ret = format!("r 3 {ok}");
        e.extend([ret.as_str(), "r 1 null", "r 2 null"]);
        assert_dl(&hist("counter", "", &e));
    }
    let mut e = base.to_vec();
    e.extend(["r 3 1", "r 1 null", "r 2 null"]);
    assert_fails(&hist("counter", "", &e), 5, 3);
}

#[test]
fn counter_recovered_add_observed_twice() {
    // The recovered add took effect exactly once: the counter is 1, not 2.
    assert_fails(
        &hist(
            "counter",
            "",
            &["i 1 0 add 1", "c", "v 1 null", "i 2 0 get", "r 2 2"],
        ),
        6,
        2,
    );
    assert_dl(&hist(
        "counter",
        "",
        &["i 1 0 add 1", "c", "v 1 null", "i 2 0 get", "r 2 1"],
    ));
}

#[test]
fn counter_cut_off_add_takes_effect_at_most_once() {
    let e = [
        "i 1 0 add 1",
        "c",
        "i 2 0 get",
        "r 2 0",
        "i 3 0 get",
        "r 3 1",
        "i 4 1 get",
        "r 4 1",
    ];
    assert_dl(&hist("counter", "", &e));
    let mut twice = e.to_vec();
    twice.extend(["i 5 0 get", "r 5 2"]);
    assert_fails(&hist("counter", "", &twice), 11, 5);
}

#[test]
fn counter_recovered_add_takes_effect_before_its_recover() {
    // A get between the crash and the recover may still see 0...
    assert_dl(&hist(
        "counter",
        "",
        &[
            "i 1 0 add 5",
            "c",
            "i 2 1 get",
            "r 2 0",
            "v 1 null",
            "i 3 1 get",
            "r 3 5",
        ],
    ));
    // ...but not one invoked after the recover.
    assert_fails(
        &hist(
            "counter",
            "",
            &["i 1 0 add 5", "c", "v 1 null", "i 2 1 get", "r 2 0"],
        ),
        6,
        2,
    );
}

#[test]
fn counter_init_and_result_types() {
    assert_dl(&hist(
        "counter",
        "-3",
        &["i 1 0 add 1", "r 1 null", "i 2 0 get", "r 2 -2.0"],
    ));
    assert_fails(&hist("counter", "", &["i 1 0 get", r#"r 1 "0""#]), 3, 1);
    assert_fails(&hist("counter", "", &["i 1 0 add 1", "r 1 0"]), 3, 1);
}

// ---------------------------------------------------------------- queue

#[test]
fn queue_example_of_history_md() {
    assert_dl(&hist(
        "queue",
        "[]",
        &[
            "i 1 0 enq 5",
            "i 2 1 deq",
            "r 1 null",
            "c",
            "v 2 5",
            "i 3 0 deq",
            "r 3 null",
        ],
    ));
}

#[test]
fn queue_completed_enq_lost_by_a_crash() {
    assert_fails(
        &hist(
            "queue",
            "",
            &["i 1 0 enq 5", "r 1 null", "c", "i 2 0 deq", "r 2 null"],
        ),
        6,
        2,
    );
}

#[test]
fn queue_cut_off_enq_may_take_effect_after_the_crash() {
    assert_dl(&hist(
        "queue",
        "",
        &[
            "i 1 0 enq 5",
            "c",
            "i 2 0 deq",
            "r 2 null",
            "i 3 1 deq",
            "r 3 5",
            "i 4 1 deq",
            "r 4 null",
        ],
    ));
}

#[test]
fn queue_cut_off_enq_dequeued_twice() {
    assert_fails(
        &hist(
            "queue",
            "",
            &[
                "i 1 0 enq 5",
                "c",
                "i 2 0 deq",
                "r 2 5",
                "i 3 1 deq",
                "r 3 5",
            ],
        ),
        7,
        3,
    );
}

#[test]
fn queue_fifo_order() {
    let enqs = ["i 1 0 enq 1", "r 1 null", "i 2 0 enq 2", "r 2 null"];
    let mut bad = enqs.to_vec();
    bad.extend(["i 3 1 deq", "r 3 2"]);
    assert_fails(&hist("queue", "", &bad), 7, 3);
    // Concurrent enqueues may be dequeued in either order.
    let both = [
        "i 1 0 enq 1",
        "i 2 1 enq 2",
        "r 1 null",
        "r 2 null",
        "i 3 0 deq",
        "r 3 2",
        "i 4 0 deq",
        "r 4 1",
    ];
    assert_dl(&hist("queue", "", &both));
    // init lists the front first.
    assert_dl(&hist(
        "queue",
        "[7,8]",
        &[
            "i 1 0 deq",
            "r 1 7",
            "i 2 0 deq",
            "r 2 8",
            "i 3 0 deq",
            "r 3 null",
        ],
    ));
    assert_fails(&hist("queue", "[7,8]", &["i 1 0 deq", "r 1 8"]), 3, 1);
}

#[test]
fn queue_recovered_deq_result_contradicts_the_state() {
    assert_fails(
        &hist(
            "queue",
            "",
            &["i 1 0 enq 5", "r 1 null", "i 2 1 deq", "c", "v 2 6"],
        ),
        6,
        2,
    );
    assert_dl(&hist(
        "queue",
        "",
        &["i 1 0 enq 5", "r 1 null", "i 2 1 deq", "c", "v 2 5"],
    ));
}

#[test]
fn queue_null_elements_are_not_confused_with_empty() {
    assert_dl(&hist(
        "queue",
        "[null]",
        &[
            "i 1 0 deq",
            "r 1 null",
            "i 2 0 enq 3",
            "r 2 null",
            "i 3 0 deq",
            "r 3 3",
        ],
    ));
    // With [null, 3] the second deq must return 3, not null.
    assert_fails(
        &hist(
            "queue",
            "[null,3]",
            &["i 1 0 deq", "r 1 null", "i 2 0 deq", "r 2 null"],
        ),
        5,
        2,
    );
}

// ---------------------------------------------------------------- stack

#[test]
fn stack_lifo_order_and_init_top_first() {
    assert_dl(&hist(
        "stack",
        "[7,8]",
        &[
            "i 1 0 push 1",
            "r 1 null",
            "i 2 0 pop",
            "r 2 1",
            "i 3 0 pop",
            "r 3 7",
            "i 4 0 pop",
            "r 4 8",
            "i 5 0 pop",
            "r 5 null",
        ],
    ));
    assert_fails(&hist("stack", "[7,8]", &["i 1 0 pop", "r 1 8"]), 3, 1);
    assert_fails(
        &hist(
            "stack",
            "",
            &[
                "i 1 0 push 1",
                "r 1 null",
                "i 2 0 push 2",
                "r 2 null",
                "i 3 0 pop",
                "r 3 1",
            ],
        ),
        7,
        3,
    );
}

#[test]
fn stack_completed_push_lost_by_a_crash() {
    assert_fails(
        &hist(
            "stack",
            "",
            &["i 1 0 push 1", "r 1 null", "c", "i 2 1 pop", "r 2 null"],
        ),
        6,
        2,
    );
}

#[test]
fn stack_cut_off_pop_may_or_may_not_have_taken_effect() {
    let base = ["i 1 0 push 1", "r 1 null", "i 2 0 pop", "c"];
    for ok in ["null", "1"] {
        let mut e = base.to_vec();
        let ret = format!("r 3 {ok}");
        e.extend(["i 3 1 pop", ret.as_str()]);
        assert_dl(&hist("stack", "", &e));
    }
    // Recovered with 1: the element is gone.
    let mut e = base.to_vec();
    e.extend(["v 2 1", "i 3 1 pop", "r 3 1"]);
    assert_fails(&hist("stack", "", &e), 8, 3);
}

// ---------------------------------------------------------------- set

#[test]
fn set_operations_and_init() {
    assert_dl(&hist(
        "set",
        r#"["a"]"#,
        &[
            r#"i 1 0 contains "a""#,
            "r 1 true",
            r#"i 2 0 insert "a""#,
            "r 2 false",
            r#"i 3 0 remove "a""#,
            "r 3 true",
            r#"i 4 0 remove "a""#,
            "r 4 false",
            r#"i 5 0 insert "b""#,
            "r 5 true",
            r#"i 6 0 contains "b""#,
            "r 6 true",
        ],
    ));
    assert_fails(
        &hist("set", r#"["a"]"#, &[r#"i 1 0 insert "a""#, "r 1 true"]),
        3,
        1,
    );
}

#[test]
fn set_completed_insert_lost_by_a_crash() {
    assert_fails(
        &hist(
            "set",
            "",
            &[
                "i 1 0 insert 1",
                "r 1 true",
                "c",
                "i 2 0 contains 1",
                "r 2 false",
            ],
        ),
        6,
        2,
    );
}

#[test]
fn set_recovered_insert_result_contradicts_the_state() {
    // Absent and untouched: the insert must report true.
    assert_fails(
        &hist("set", "", &["i 1 0 insert 1", "c", "v 1 false"]),
        4,
        1,
    );
    // Reported true twice without a remove between: one insert is a lie.
    assert_fails(
        &hist(
            "set",
            "",
            &[
                "i 1 0 insert 1",
                "c",
                "v 1 true",
                "i 2 0 insert 1",
                "r 2 true",
            ],
        ),
        6,
        2,
    );
}

#[test]
fn set_keys_are_independent() {
    // Interleaved keys, each sequentially consistent on its own.
    assert_dl(&hist(
        "set",
        "",
        &[
            "i 1 0 insert 1",
            "i 2 1 insert 2",
            "r 1 true",
            "i 3 0 remove 2",
            "r 2 true",
            "r 3 true",
            "i 4 1 contains 1",
            "r 4 true",
        ],
    ));
    // Key 2 fails first (line 7); key 1 fails later (line 9).
    let (h, v) = check(&hist(
        "set",
        "",
        &[
            "i 1 0 insert 1",
            "r 1 true",
            "i 2 0 insert 2",
            "r 2 true",
            "i 3 0 contains 2",
            "r 3 false",
            "i 4 0 contains 1",
            "r 4 false",
        ],
    ));
    let Verdict::NotDurablyLinearizable(v) = v else {
        panic!("{v:?}")
    };
    assert_eq!(
        (v.prefix_end_line, v.key.clone(), v.failing_partitions),
        (7, Some(json!(2)), 2)
    );
    assert_eq!(h.operations()[v.culprit].id, 3);
    assert_eq!(v.involved.len(), 2, "{}", v.explain(&h));
}

#[test]
fn set_cut_off_insert_may_appear_late() {
    let e = [
        "i 1 0 insert 1",
        "c",
        "i 2 0 contains 1",
        "r 2 false",
        "i 3 0 contains 1",
        "r 3 true",
    ];
    assert_dl(&hist("set", "", &e));
    // A recovered one cannot appear after its recover.
    let recovered = [
        "i 1 0 insert 1",
        "c",
        "v 1 true",
        "i 2 0 contains 1",
        "r 2 false",
    ];
    assert_fails(&hist("set", "", &recovered), 6, 2);
}

// ---------------------------------------------------------------- map

#[test]
fn map_operations_return_previous_values() {
    assert_dl(&hist(
        "map",
        "",
        &[
            r#"i 1 0 put "k" 1"#,
            "r 1 null",
            r#"i 2 0 put "k" 2"#,
            "r 2 1",
            r#"i 3 0 get "k""#,
            "r 3 2",
            r#"i 4 0 remove "k""#,
            "r 4 2",
            r#"i 5 0 remove "k""#,
            "r 5 null",
            r#"i 6 0 get "k""#,
            "r 6 null",
        ],
    ));
    assert_fails(
        &hist(
            "map",
            "",
            &[
                r#"i 1 0 put "k" 1"#,
                "r 1 null",
                r#"i 2 0 put "k" 2"#,
                "r 2 null",
            ],
        ),
        5,
        2,
    );
}

#[test]
fn map_init_as_object_or_pairs() {
    assert_dl(&hist("map", r#"{"a":1}"#, &[r#"i 1 0 get "a""#, "r 1 1"]));
    assert_dl(&hist(
        "map",
        r#"[[1,"x"],[{"p":1,"q":2},3]]"#,
        &[
            "i 1 0 get 1",
            r#"r 1 "x""#,
            r#"i 2 0 remove {"q":2,"p":1}"#,
            "r 2 3",
        ],
    ));
    assert_fails(
        &hist("map", r#"{"a":1}"#, &[r#"i 1 0 get "a""#, "r 1 null"]),
        3,
        1,
    );
}

#[test]
fn map_completed_put_lost_by_a_crash() {
    assert_fails(
        &hist(
            "map",
            "",
            &["i 1 0 put 1 9", "r 1 null", "c", "i 2 0 get 1", "r 2 null"],
        ),
        6,
        2,
    );
}

#[test]
fn map_recovered_put_with_a_wrong_previous_value() {
    assert_fails(
        &hist(
            "map",
            "",
            &[
                "i 1 0 put 1 9",
                "r 1 null",
                "i 2 1 put 1 10",
                "c",
                "v 2 null",
            ],
        ),
        6,
        2,
    );
    assert_dl(&hist(
        "map",
        "",
        &[
            "i 1 0 put 1 9",
            "r 1 null",
            "i 2 1 put 1 10",
            "c",
            "v 2 9",
            "i 3 0 get 1",
            "r 3 10",
        ],
    ));
}

// ---------------------------------------------------------------- threads and crashes

#[test]
fn threads_start_again_after_a_crash_and_recover_may_follow_later_crashes() {
    assert_dl(&hist(
        "queue",
        "",
        &[
            "i 1 0 enq 1",
            "i 2 1 enq 2",
            "c",
            "i 3 0 deq",
            "c",
            "v 2 null",
            "i 4 0 deq",
            "r 4 2",
        ],
    ));
    // Op 2 recovered after the second crash: it took effect before line 6,
    // so a deq invoked after that cannot find the queue empty.
    assert_fails(
        &hist(
            "queue",
            "",
            &[
                "i 1 0 enq 1",
                "i 2 1 enq 2",
                "c",
                "c",
                "v 2 null",
                "i 4 0 deq",
                "r 4 null",
            ],
        ),
        8,
        4,
    );
    // Unless a cut-off deq (op 3, no recover) took it.
    assert_dl(&hist(
        "queue",
        "",
        &[
            "i 1 0 enq 1",
            "i 2 1 enq 2",
            "c",
            "i 3 0 deq",
            "c",
            "v 2 null",
            "i 4 0 deq",
            "r 4 null",
        ],
    ));
}

#[test]
fn pending_operations_at_the_end_are_optional() {
    assert_dl(&hist("counter", "", &["i 1 0 add 4", "i 2 1 get", "r 2 4"]));
    assert_dl(&hist("counter", "", &["i 1 0 add 4", "i 2 1 get", "r 2 0"]));
    assert_fails(
        &hist("counter", "", &["i 1 0 add 4", "i 2 1 get", "r 2 8"]),
        4,
        2,
    );
}

#[test]
fn an_empty_history_and_one_without_completions_are_durably_linearizable() {
    assert_dl(&hist("stack", "", &[]));
    assert_dl(&hist("stack", "", &["i 1 0 push 1", "c", "i 2 0 pop", "c"]));
}

#[test]
fn minimal_prefix_is_the_earliest_failure_not_the_last() {
    // Two independent violations on a register; the first one is reported.
    assert_fails(
        &hist(
            "register",
            "",
            &[
                "i 1 0 read",
                "r 1 9",
                "i 2 0 write 1",
                "r 2 null",
                "i 3 0 read",
                "r 3 7",
            ],
        ),
        3,
        1,
    );
}

#[test]
fn involved_operations_are_bounded_on_long_histories() {
    // 200 sequential enq/deq pairs, then a deq that sees an element twice.
    let mut events = Vec::new();
    for k in 0..200 {
        events.push(format!("i {} 0 enq {k}", 2 * k + 1));
        events.push(format!("r {} null", 2 * k + 1));
        events.push(format!("i {} 1 deq", 2 * k + 2));
        events.push(format!("r {} {k}", 2 * k + 2));
    }
    events.push("i 1000 1 deq".into());
    events.push("r 1000 199".into());
    let refs: Vec<&str> = events.iter().map(String::as_str).collect();
    let text = hist("queue", "", &refs);
    let (h, v) = check(&text);
    let Verdict::NotDurablyLinearizable(v) = v else {
        panic!("{v:?}")
    };
    assert_eq!(v.prefix_end_line, 803);
    assert_eq!(h.operations()[v.culprit].id, 1000);
    assert!(
        v.involved.len() <= 16 && v.involved.contains(&v.culprit),
        "{}",
        v.explain(&h)
    );
    assert_eq!(v.not_listed + v.involved.len(), 401);
    let explained = v.explain(&h);
    assert!(
        explained.contains("more operations on the object in the prefix not listed"),
        "{explained}"
    );
}

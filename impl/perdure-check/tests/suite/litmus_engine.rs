//! The litmus engine on small programs: outcome sets, registers, witnesses,
//! the state limit.

use perdure_check::litmus::{parse, run, run_with, Key, Limits, Status};

fn test(src: &str) -> perdure_check::litmus::Test {
    parse(src, "inline.litmus").unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn ss_reaches_exactly_the_four_persisted_combinations() {
    let t = test("name SS\nthread 0\n store x 1\n store y 1\nend\nallow x=0 y=1\n");
    let r = run(&t);
    let mut got: Vec<String> = r
        .outcomes
        .iter()
        .map(|o| perdure_check::litmus::engine::outcome_text(&t, &r.keys, o))
        .collect();
    got.sort();
    assert_eq!(got, ["x=0 y=0", "x=0 y=1", "x=1 y=0", "x=1 y=1"]);
    assert!(r.stats.complete);
    // States: initial; x buffered; x,y buffered; x visible + y buffered;
    // both visible; plus x visible before y executes.
    assert!(r.stats.states >= 5, "{:?}", r.stats);
    assert_eq!(r.stats.crash_points, r.stats.states);
    assert!(r.stats.persisted_states >= u128::from(r.stats.states));
}

#[test]
fn sameline_removes_the_out_of_order_combination() {
    let t = test("name S\nline x y\nthread 0\n store x 1\n store y 1\nend\nforbid x=0 y=1\n");
    let r = run(&t);
    assert_eq!(r.outcomes.len(), 3);
    assert!(!r.outcomes.contains(&vec![Some(0), Some(1)]));
    assert!(r.all_met());
}

#[test]
fn unwritten_registers_are_none_and_match_nothing() {
    let t = test("name R\nthread 0\n load r1 x\nend\nallow r1=0\nforbid r1=1\n");
    let r = run(&t);
    assert_eq!(r.keys, vec![Key::Reg { thread: 0, reg: 0 }]);
    assert_eq!(r.outcomes, vec![vec![None], vec![Some(0)]]);
    assert!(r.all_met());
}

#[test]
fn registers_are_per_thread_and_qualified_when_shared() {
    let src = "name Q\nthread 0\n store x 1\n load r1 y\nthread 1\n store y 1\n load r1 x\nend\n\
               allow 0:r1=0 1:r1=0\nforbid 0:r1=2\n";
    let t = test(src);
    assert_eq!(t.key_name(Key::Reg { thread: 1, reg: 0 }), "1:r1");
    let r = run(&t);
    assert!(r.all_met());
    // The SB outcome is reached through both threads' r1.
    assert!(r.outcomes.contains(&vec![Some(0), Some(0)]));
    // Thread ids need not be 0..n: `thread 7` is `7:r`.
    let t = test("name T\nthread 7\n load r x\nthread 3\n load r x\nend\nallow 7:r=0 3:r=0\n");
    assert_eq!(t.key_name(Key::Reg { thread: 0, reg: 0 }), "7:r");
    assert!(run(&t).all_met());
}

#[test]
fn a_met_allow_has_a_witness_that_ends_in_its_outcome() {
    let t = test(
        "name W\nthread 0\n store x 1\n clflushopt x\n store y 1\nend\nallow x=0 y=1\nforbid x=5\n",
    );
    let r = run(&t);
    let w = r.verdicts[0].witness.as_ref().expect("witness");
    assert_eq!(r.verdicts[0].status, Status::Met);
    assert!(w.crash.contains("x=0 y=1"), "{}", w.crash);
    // y must have become visible in the witness.
    assert!(
        w.steps
            .iter()
            .any(|s| s.contains("`store y 1` becomes visible")),
        "{:#?}",
        w.steps
    );
    // A met forbid has no counterexample.
    assert_eq!(r.verdicts[1].status, Status::Met);
    assert!(r.verdicts[1].witness.is_none());
}

#[test]
fn an_unmet_forbid_comes_with_a_counterexample() {
    let t = test("name C\nthread 0\n store x 1\n clflushopt x\n store y 1\nend\nforbid x=0 y=1\n");
    let r = run(&t);
    assert_eq!(r.verdicts[0].status, Status::NotMet);
    let w = r.verdicts[0].witness.as_ref().expect("counterexample");
    let y_visible = w
        .steps
        .iter()
        .position(|s| s.contains("`store y 1` becomes visible"))
        .expect("y visible");
    // The clflushopt has not taken effect before y became visible.
    assert!(!w.steps[..y_visible]
        .iter()
        .any(|s| s.contains("`clflushopt x` takes effect")));
}

#[test]
fn the_state_limit_leaves_forbids_undecided_and_says_so() {
    let src = "name L\nthread 0\n store x 1\n store y 1\n store z 1\nthread 1\n store w 1\n store v 1\nend\n\
               forbid x=7\nallow x=0\n";
    let t = test(src);
    let full = run(&t);
    assert!(full.stats.complete && full.all_met());
    let cut = run_with(&t, Limits { max_states: 3 });
    assert!(!cut.stats.complete);
    assert!(cut.stats.states <= 3);
    assert_eq!(cut.verdicts[0].status, Status::Undecided);
    // The initial state is explored first, so `allow x=0` is still decided.
    assert_eq!(cut.verdicts[1].status, Status::Met);
    assert!(!cut.all_met());
}

#[test]
fn memoization_merges_interleavings() {
    // Four independent threads of one store each: 4! orders of execution but
    // only 3^4 combinations of (not executed, buffered, visible) per thread.
    let src = "name M\nthread 0\n store a 1\nthread 1\n store b 1\nthread 2\n store c 1\nthread 3\n store d 1\nend\nallow a=1 b=1 c=1 d=1\n";
    let r = run(&test(src));
    assert_eq!(r.stats.states, 81);
    assert_eq!(r.outcomes.len(), 16);
    assert!(r.all_met());
}

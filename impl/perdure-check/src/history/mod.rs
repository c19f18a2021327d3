//! # The durable-linearizability and detectability checker
//!
//! `perdure check-history FILE` reads a history with crashes in the ndjson
//! format of `HISTORY.md` and decides whether it is *durably linearizable*
//! with respect to one of six sequential objects, honouring the
//! *detectability* claims that `recover` events make.
//!
//! ```
//! use perdure_check::history::{check_text, CheckOptions, ParseOptions, Verdict};
//! let history = r#"{"type":"header","object":"queue","init":[]}
//! {"type":"invoke","id":1,"thread":0,"op":"enq","args":[5]}
//! {"type":"invoke","id":2,"thread":1,"op":"deq","args":[]}
//! {"type":"return","id":1,"value":null}
//! {"type":"crash"}
//! {"type":"recover","id":2,"value":5}
//! {"type":"invoke","id":3,"thread":0,"op":"deq","args":[]}
//! {"type":"return","id":3,"value":null}
//! "#;
//! let report = check_text(history, &ParseOptions::default(), &CheckOptions::default())?;
//! assert_eq!(report.verdict, Verdict::DurablyLinearizable);
//! # Ok::<(), perdure_check::history::MalformedHistory>(())
//! ```
//!
//! ## Interface
//!
//! * [`parse_history`] (or [`parse_events`] + [`History::from_events`]) →
//!   [`History`] of [`Operation`]s with line numbers, or [`MalformedHistory`]
//!   (line + [`MalformedReason`]);
//! * [`check_history`] → [`CheckReport`]: the [`Verdict`] (with a
//!   [`Violation`]: minimal failing prefix, culprit, operations involved, and
//!   [`Violation::explain`] / [`Violation::verdict_line`] for people) and
//!   [`CheckStats`];
//! * [`check_and_report`]: what `perdure check-history FILE|- [--model M]
//!   [--ignore-type T]... [--max-states N] [--quiet]` prints, verdict on the
//!   last line, and its exit status 0 / 1 / 2 (malformed) / 3 (undecided);
//! * [`render_html`]: the history and its verdict as one self-contained HTML
//!   page (lanes per thread, bars per operation, crash lines, the minimal
//!   failing prefix highlighted), written by `check-history --html OUT` and
//!   beside every failing history the crash explorer writes;
//! * [`generate`]: seeded durably-linearizable histories for tests and
//!   benchmarks.
//!
//! ## What is checked
//!
//! Remove the crash events. Every operation then falls in one of three
//! classes (`HISTORY.md`):
//!
//! * **completed** (`return`): took effect exactly once, between its `invoke`
//!   and its `return`, and its result is the returned value;
//! * **recovered** (cut off by a crash, then `recover`ed): took effect
//!   exactly once, between its `invoke` and its `recover`, and its result is
//!   the recovered value — the detectability claim of the recovery;
//! * **cut off without `recover`** (and, the same, **pending** at the end of
//!   the history): took effect at most once, anywhere after its invocation —
//!   before the crash, during recovery or later — with any result, or not at
//!   all. Such an operation has no return time: its interval extends to the
//!   end of the history, and nothing is required of its result.
//!
//! The history is durably linearizable when there is one sequence of the
//! completed and recovered operations plus some of the others that (1)
//! respects real-time order — `a` precedes `b` whenever `a` completed before
//! `b` was invoked; a crash adds no other constraint — and (2) is a legal run
//! of the sequential object from its initial state, producing exactly the
//! reported results. This is Izraelevitz, Mendes & Scott's durable
//! linearizability (DISC 2016) with the detectable operations of Friedman et
//! al. (PPoPP 2018) as `HISTORY.md` phrases them.
//!
//! ## Models
//!
//! | object | operations | `init` (default) |
//! | --- | --- | --- |
//! | `register` | `read() -> v`, `write(v) -> null`, `cas(old, new) -> bool` | any value (`0`) |
//! | `counter` | `add(d) -> null`, `get() -> v` (integers) | an integer (`0`) |
//! | `queue` | `enq(v) -> null`, `deq() -> v`, `null` when empty | array, **front first** (`[]`) |
//! | `stack` | `push(v) -> null`, `pop() -> v`, `null` when empty | array, **top first** (`[]`) |
//! | `set` | `insert(k)`, `remove(k)`, `contains(k)`, each `-> bool` (whether it changed / is present) | array of keys (`[]`) |
//! | `map` | `put(k, v)`, `remove(k) -> previous or null`, `get(k) -> v or null` | object (string keys) or array of `[k, v]` pairs (`{}`) |
//!
//! Queue and stack `init` both list elements in the order they would be
//! removed. Values are JSON and compare as JSON: objects regardless of key
//! order, numbers by numeric value (`1` = `1.0`). A queue `deq` of a `null`
//! element and a `deq` of an empty queue both return `null`; the model keeps
//! them apart by state, so that ambiguity is handled exactly.
//!
//! ## The algorithm
//!
//! 1. **Parse** ([`parse_history`]): every line is typed, every rule of
//!    `HISTORY.md` enforced; any violation is [`MalformedHistory`] with its
//!    line (verdict `malformed`, exit 2).
//! 2. **Partition** (P-compositionality, Horn & Kroening, *Faster
//!    linearizability checking via P-compositionality*, FORTE 2015): a `set`
//!    or `map` operation touches exactly one key and the object is the
//!    product of independent per-key objects, so the history is durably
//!    linearizable iff each key's sub-history is (real-time order restricted
//!    to one key is the same relation, and cut-off operations stay optional
//!    per key). One search per key; the other objects are one partition.
//! 3. **Reduce** each partition (`reduce`, all exact): reject at once a
//!    completed operation whose result is impossible (of the wrong kind, a
//!    value nothing produced before it completed, a queue/stack element
//!    returned twice, or hidden behind an element certainly in its way);
//!    merge the values no completed operation observes into one anonymous
//!    value; drop cut-off producers of such values; make a cut-off
//!    `enq`/`push` whose element a completed `deq`/`pop` returns required; and
//!    derive the orders in which uniquely produced queue and stack elements
//!    must be produced.
//! 4. **Search** each partition: Wing & Gong's backtracking search for a
//!    linearization (*Testing and verifying concurrent objects*, JPDC 1993)
//!    in the just-in-time form of Lowe (*Testing for linearizability*, CCPE
//!    2017) with the memoization of (linearized set, model state) that
//!    Porcupine uses, extended with *optional* operations for the cut-off
//!    ones, candidates ordered by when their effect is observed, and the
//!    exact prunings of the search module (twin chains, producer orders),
//!    which also documents why it is sound and complete.
//! 5. On failure, find the **minimal failing prefix**: the shortest prefix of
//!    the history (in lines) that is already not durably linearizable, where
//!    operations that have not completed by the end of the prefix are treated
//!    as pending (optional) — exactly what checking the truncated file would
//!    decide. Durable linearizability is prefix-closed (cutting a durable
//!    linearization of the history after the last operation that completes in
//!    the prefix gives one of the prefix, since later-invoked operations come
//!    after every operation completed before them), so failure is monotone in
//!    the prefix length and changes only at `return`/`recover` lines: a binary
//!    search over the failing partitions' completion lines finds it. The
//!    operation completing on the last line of that prefix is the *culprit*:
//!    with its result, nothing linearizes. The report lists it and the
//!    operations involved ([`Violation::involved`]).
//!
//! ## Complexity
//!
//! Deciding linearizability is NP-complete (Gibbons & Korach 1997); the search
//! is exponential in the worst case. With bounded concurrency (a fixed number
//! of threads) and memoization it is close to linear in the number of
//! operations in practice: the benchmark `benches/check_history.rs` decides a
//! 60,000-event, 12-thread `set` history with 6 crashes in under 0.1 s
//! (parsing included), and a few thousand events of every other object in
//! milliseconds. Parsing is linear; the reductions are O(n log n). Each
//! cut-off operation without `recover` can at most double the configurations
//! of its partition, and is tried only after the required operations, so one
//! that never took effect costs almost nothing. A failing history must have
//! its configurations explored exhaustively, which the reductions keep small
//! for the usual failures (a lost or duplicated element, an impossible
//! result); the minimal-prefix search adds O(log n) searches of the failing
//! partitions. [`CheckOptions::max_states`] bounds the memo of each search
//! (default 5,000,000 configurations, about 1 GB); reaching it gives the
//! verdict `undecided` (exit 3), never a wrong one.
//!
//! ## Not covered
//!
//! * Only the six objects above; no user-defined models, no
//!   non-deterministic specifications.
//! * A `recover` asserts that the operation took effect; an operation whose
//!   recovery reports "did not take effect" must be written as cut off
//!   (no `recover`), and then the checker allows but does not require that
//!   it took effect: it cannot check a claim of *non*-effect.
//! * A `recover` may come after later crashes and after its thread started
//!   new operations; the checker only requires that the operation took effect
//!   before the `recover` line. It does not check which thread reports it.
//! * Buffered durable linearizability (where a crash may lose completed
//!   operations) is not this check: a completed operation lost by a crash is
//!   a violation.
//! * Histories that combine many threads (12 or more) with many cut-off
//!   `add`s, `pop`s or `deq`s whose effect falls long after their crash can
//!   exceed the search bound on counters and stacks (verdict `undecided`);
//!   the generated stress histories of the benchmark and the tests, and the
//!   crash explorer's, stay far below it.

mod check;
pub mod generate;
mod html;
mod model;
mod parse;
mod reduce;
mod report;
mod search;
mod value;

pub use check::{check_history, CheckOptions, CheckReport, CheckStats, Verdict, Violation};
pub use html::{render_html, write_page, HtmlPage, PageWriteError};
pub use parse::{
    parse_events, parse_history, Call, Event, EventKind, History, InitialState, MalformedHistory,
    MalformedReason, ObjectKind, Operation, Outcome, ParseOptions,
};
pub use report::{check_and_report, check_report_html};
pub use search::SearchCounters;

/// Parses `text` and checks it: [`parse_history`] then [`check_history`].
pub fn check_text(
    text: &str,
    parse: &ParseOptions,
    check: &CheckOptions,
) -> Result<CheckReport, MalformedHistory> {
    let history = parse_history(text, parse)?;
    Ok(check_history(&history, check))
}

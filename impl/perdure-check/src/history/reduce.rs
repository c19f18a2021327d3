//! Exact reductions of a partition before its search, the necessary
//! orders the search enforces on queues and stacks, and the order in which
//! it tries candidates.
//!
//! None of this changes the answer; it changes how fast the search finds it.
//! The plain just-in-time search is slow on queues and stacks whose
//! operations overlap a lot: it guesses the order of two concurrent `enq`s
//! when it linearizes them and learns that the guess was wrong only when the
//! elements reach the front, possibly hundreds of operations later, after
//! trying every order of everything in between. And a history that fails
//! must have its whole configuration space explored. The remedies, each
//! with the reason it is exact:
//!
//! 0. **Impossible results** ([`has_impossible_result`]). A completed
//!    operation whose result is of the wrong kind (`enq` returning `5`,
//!    `insert` returning `null`), or a value that neither `init` nor any
//!    operation invoked before the completion wrote, enqueued, pushed or put,
//!    or a queue/stack value returned by more completed operations than were
//!    produced, or a `deq`/`pop` whose result an element certainly in its
//!    way throughout hides (see [`consumer_blocked`]), has no linearization: the partition fails without a search. These are
//!    necessary conditions, checked in O(n log n).
//! 1. **Anonymous values**. A value that no completed operation reports as
//!    its result and no `cas` compares against is never *observed*: renaming
//!    it changes no output the search compares, so all such values are
//!    merged into one [`ANON`] value ("equal after renaming unobserved
//!    values" is a bisimulation of every model that preserves each
//!    comparison with a reported result). States that differ only in where
//!    unobserved elements sit become one memo entry.
//! 2. **Useless optional producers**. A cut-off (or pending) `enq`, `push` or
//!    `put` of an anonymous value is dropped: no completed operation can
//!    return that value, so in any linearization using it, the element is
//!    either never removed (it only blocks others) or removed by another
//!    optional operation (whose result is unconstrained); dropping both
//!    leaves every other output unchanged. (Not for registers: an anonymous
//!    write can make a later `cas` fail, so it may be needed.)
//! 3. **Producers that must have taken effect**. In a queue or stack whose
//!    value `v` is produced by exactly one `enq`/`push` (and is not in
//!    `init`) and returned by exactly one completed `deq`/`pop` `c`, the
//!    producer precedes `c` in every linearization. So a cut-off producer of
//!    `v` is made required, with `c`'s completion line as its deadline: every
//!    linearization of the original satisfies the new constraint, which is
//!    only stricter.
//! 4. **Necessary producer orders** ([`ProducerOrder`], enforced by the
//!    search). With unique values as in 3, each element is removed by its
//!    consumer or, if no completed operation returns it, only by an optional
//!    `deq`/`pop`, which removes at most one element:
//!    * *Q (queue)*: `enq(x)` waits for every unlinearized unique `enq(y)`
//!      whose consumer completes before `x`'s consumer is invoked (or, if
//!      nothing consumes `x`, before the first remaining optional `deq` is
//!      invoked): `y` must leave the queue first, so it must be ahead.
//!    * *S1 (stack)*: `push(x)` may not bury an element of the current stack
//!      whose consumer completes before `x`'s consumer is invoked (same
//!      fallback): that element must be popped while `x` is still above it.
//!    * *S2 (stack)*: `push(x)` waits for every unlinearized unique
//!      `push(y)` that completed before `x`'s pop was invoked and whose pop
//!      comes after `x`'s (then `y` must be below `x`).
//!    * *S3 (stack)*: if more unlinearized `push`es of elements nothing
//!      consumes must complete before `x`'s pop is invoked (so would sit
//!      above `x`) than there are unlinearized optional `pop`s invoked
//!      before it completes, `push(x)` waits.
//!
//!    Each rule forbids only configurations that no linearization passes
//!    through.
//! 5. **Candidate order** (a heuristic; any order is correct). Candidates
//!    are tried in increasing [`SearchOp::order`]: by invocation line (the
//!    just-in-time default), except that unique producers come after the
//!    other candidates and, among themselves, in the order their values are
//!    consumed — a queue's `enq`s in the order of their `deq`s' completion
//!    lines, a stack's `push`es in the reverse order of their `pop`s —
//!    and never-consumed ones last.
//!
//! The differential tests against a brute-force oracle
//! (`tests/suite/history_oracle.rs`) exercise every rule; each of them, loosened
//! by a few lines, makes those tests fail.

use super::model::{Expected, SeqCall, State};
use super::value::{ValueId, FALSE, NULL, TRUE};
use std::collections::{HashMap, HashSet};

/// One operation of a partition, as the search sees it.
#[derive(Clone, Debug)]
pub(crate) struct SearchOp {
    pub(crate) call: SeqCall,
    /// [`Expected::Any`] for optional operations.
    pub(crate) expected: Expected,
    pub(crate) invoke_line: usize,
    /// `Some` for required operations (the `return` or `recover` line),
    /// `None` for optional ones.
    pub(crate) complete_line: Option<usize>,
    /// Candidates of one configuration are tried in increasing `order`
    /// (required before optional); see this module. Any order is
    /// correct; a good one finds a linearization sooner.
    pub(crate) order: u64,
}

/// The value all unobserved values are renamed to. The interner allocates
/// ids from 0 and never reaches it.
pub(crate) const ANON: ValueId = ValueId::MAX;

/// `order` keys at or above this are unique producers.
const PRODUCER: u64 = 1 << 62;

/// Which necessary order among unique producers applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Discipline {
    /// Not a queue or stack: no producer order.
    None,
    /// FIFO.
    Queue,
    /// LIFO.
    Stack,
}

/// Orders between unique producers that every linearization obeys (item 4
/// of the module docs), for the search to enforce.
#[derive(Clone, Debug)]
pub(crate) struct ProducerOrder {
    pub(crate) discipline: Discipline,
    /// Per operation: whether it is the only producer of its value, and the
    /// value is not in `init`.
    pub(crate) unique: Vec<bool>,
    /// Per operation: for a unique producer whose value exactly one
    /// completed consumer returns, that consumer's invoke and completion
    /// lines.
    pub(crate) consumer: Vec<Option<(usize, usize)>>,
    /// For a stack: the completion line of the consumer of each uniquely
    /// produced, uniquely consumed value.
    pub(crate) release_of_value: HashMap<ValueId, usize>,
}

impl ProducerOrder {
    /// No producer order (any object).
    pub(crate) fn none(ops: usize) -> ProducerOrder {
        ProducerOrder {
            discipline: Discipline::None,
            unique: vec![false; ops],
            consumer: vec![None; ops],
            release_of_value: HashMap::new(),
        }
    }
}

/// Applies the reductions of the module docs to one partition and returns
/// the producer order the search must enforce, or `None` if some result is
/// impossible (item 0): the partition is not linearizable.
pub(crate) fn prepare(ops: &mut Vec<SearchOp>, init: &mut State) -> Option<ProducerOrder> {
    if has_impossible_result(ops, init) {
        return None;
    }
    let mut order = order_producers(ops, init);
    anonymize(ops, init);
    // Item 2: drop optional producers of unobserved values.
    let keep: Vec<bool> = ops
        .iter()
        .map(|op| {
            op.complete_line.is_some()
                || !matches!(
                    op.call,
                    SeqCall::Enq(ANON) | SeqCall::Push(ANON) | SeqCall::Put(ANON)
                )
        })
        .collect();
    if keep.iter().any(|k| !k) {
        let mut k = keep.iter();
        ops.retain(|_| *k.next().unwrap_or(&true));
        let mut k = keep.iter();
        order.unique.retain(|_| *k.next().unwrap_or(&true));
        let mut k = keep.iter();
        order.consumer.retain(|_| *k.next().unwrap_or(&true));
    }
    Some(order)
}

/// Whether some completed operation reports a result that no linearization
/// can give it (item 0 of the module docs): a result of the wrong kind for
/// the call, a value that nothing written, enqueued, pushed or put before the
/// operation completed (nor `init`), or a queue or stack value returned more
/// often than it was produced.
fn has_impossible_result(ops: &[SearchOp], init: &State) -> bool {
    // Values that may be the result of a read/deq/pop/get, with the first
    // line from which they may be: `init` values from the start, produced
    // values from their producer's invocation.
    let mut available: HashMap<ValueId, usize> = HashMap::new();
    let initially = |v: ValueId, available: &mut HashMap<ValueId, usize>| {
        available.insert(v, 0);
    };
    let mut supply: HashMap<ValueId, usize> = HashMap::new();
    match init {
        State::Register(v) => initially(*v, &mut available),
        State::Queue(q) => q.iter().for_each(|v| {
            initially(*v, &mut available);
            *supply.entry(*v).or_default() += 1;
        }),
        State::Stack(s) => s.iter().for_each(|v| {
            initially(*v, &mut available);
            *supply.entry(*v).or_default() += 1;
        }),
        State::MapKey(Some(v)) => initially(*v, &mut available),
        State::Counter(_) | State::SetKey(_) | State::MapKey(None) => {}
    }
    for op in ops {
        let produced = match op.call {
            SeqCall::Write(v) | SeqCall::Cas(_, v) | SeqCall::Put(v) => Some(v),
            SeqCall::Enq(v) | SeqCall::Push(v) => {
                *supply.entry(v).or_default() += 1;
                Some(v)
            }
            _ => None,
        };
        if let Some(v) = produced {
            let since = available.entry(v).or_insert(op.invoke_line);
            *since = (*since).min(op.invoke_line);
        }
    }
    let mut demand: HashMap<ValueId, usize> = HashMap::new();
    for op in ops {
        let Some(done) = op.complete_line else {
            continue;
        };
        let possible = match (op.call, op.expected) {
            (_, Expected::Any) => true,
            (_, Expected::Never) => false,
            (SeqCall::CounterGet, e) => matches!(e, Expected::Int(_)),
            (_, Expected::Int(_)) => false,
            (
                SeqCall::Write(_) | SeqCall::Add(_) | SeqCall::Enq(_) | SeqCall::Push(_),
                Expected::Value(v),
            ) => v == NULL,
            (
                SeqCall::Cas(..) | SeqCall::Insert | SeqCall::SetRemove | SeqCall::Contains,
                Expected::Value(v),
            ) => v == TRUE || v == FALSE,
            (SeqCall::Read, Expected::Value(v)) => {
                available.get(&v).is_some_and(|&since| since < done)
            }
            (SeqCall::Deq | SeqCall::Pop, Expected::Value(v)) => {
                if v != NULL {
                    *demand.entry(v).or_default() += 1;
                }
                v == NULL || available.get(&v).is_some_and(|&since| since < done)
            }
            (SeqCall::Put(_) | SeqCall::MapGet | SeqCall::MapRemove, Expected::Value(v)) => {
                v == NULL || available.get(&v).is_some_and(|&since| since < done)
            }
        };
        if !possible {
            return true;
        }
    }
    // Each produced element is removed at most once.
    if demand
        .iter()
        .any(|(v, &n)| n > supply.get(v).copied().unwrap_or(0))
    {
        return true;
    }
    consumer_blocked(ops, init)
}

/// Whether a completed `deq`/`pop` could not reach its result because some
/// element was certainly in its way during its whole interval.
///
/// An element `x` produced once (and not also in `init`) by a completed
/// producer is present from the producer's completion (from the start for an
/// `init` element) until it is removed: by its consumer — the one completed
/// operation returning `x`, no earlier than that consumer's invocation — or,
/// if there is none, by an optional `deq`/`pop`, each of which removes at most
/// one element. A completed consumer `D` over `[i, c]` must find, at its
/// linearization point, every element *in its way* gone:
///
/// * for an empty (`null`) result, every element present before `i`;
/// * for a queue `deq` returning `v` (produced once, not in `init`, its
///   producer invoked at `p`), every element present before `p` (enqueued
///   before `v`, so ahead of it);
/// * for a stack `pop` returning `v` (its producer completed at `q`), every
///   element whose producer was invoked after `q` and completed before `i`
///   (pushed after `v`, so above it).
///
/// `D` is impossible if an element in its way has a consumer invoked after
/// `c`, or if more elements in its way have no consumer than optional
/// consumers are invoked before `c`. (Empty results are not judged when
/// `null` can be an element.)
fn consumer_blocked(ops: &[SearchOp], init: &State) -> bool {
    let (lifo, initial): (bool, Vec<ValueId>) = match init {
        State::Queue(q) => (false, q.iter().copied().collect()),
        State::Stack(s) => (true, s.clone()),
        _ => return false,
    };
    let null_element = initial.contains(&NULL)
        || ops
            .iter()
            .any(|op| matches!(op.call, SeqCall::Enq(NULL) | SeqCall::Push(NULL)));
    let mut optional_consumers: Vec<usize> = ops
        .iter()
        .filter(|op| op.complete_line.is_none() && matches!(op.call, SeqCall::Deq | SeqCall::Pop))
        .map(|op| op.invoke_line)
        .collect();
    optional_consumers.sort_unstable();
    let optional_before = |line: usize| optional_consumers.partition_point(|&invoke| invoke < line);

    // value -> (number of producers incl. init, producer invoke, producer
    // completion); `init` elements are produced at line 0.
    let mut produced: HashMap<ValueId, (usize, usize, Option<usize>)> = HashMap::new();
    for &v in &initial {
        produced.entry(v).or_insert((0, 0, Some(0))).0 += 1;
    }
    for op in ops {
        if let SeqCall::Enq(v) | SeqCall::Push(v) = op.call {
            produced
                .entry(v)
                .or_insert((0, op.invoke_line, op.complete_line))
                .0 += 1;
        }
    }
    let unique = |v: &ValueId| v != &NULL && produced.get(v).is_some_and(|p| p.0 == 1);
    let mut consumer_invoke: HashMap<ValueId, usize> = HashMap::new();
    for op in ops {
        if let (SeqCall::Deq | SeqCall::Pop, Expected::Value(v), Some(_)) =
            (op.call, op.expected, op.complete_line)
        {
            if unique(&v) {
                consumer_invoke.insert(v, op.invoke_line);
            }
        }
    }
    // The certainly present elements: (present from, producer invoke,
    // removable from), by `from`.
    let mut present: Vec<(usize, usize, usize)> = produced
        .iter()
        .filter(|(v, _)| unique(v))
        .filter_map(|(v, &(_, invoke, done))| {
            Some((
                done?,
                invoke,
                consumer_invoke.get(v).copied().unwrap_or(usize::MAX),
            ))
        })
        .collect();
    present.sort_unstable();
    // Prefix maxima of the consumed elements' removal lines and prefix counts
    // of the unconsumed elements, for the queue and empty cases.
    let mut max_removal = Vec::with_capacity(present.len());
    let mut unconsumed_count = Vec::with_capacity(present.len());
    let (mut max, mut count) = (0usize, 0usize);
    for &(_, _, removable) in &present {
        if removable == usize::MAX {
            count += 1;
        } else {
            max = max.max(removable);
        }
        max_removal.push(max);
        unconsumed_count.push(count);
    }
    // Elements present before `line`: is one stuck past `done`, or are there
    // too many unconsumed ones?
    let in_the_way_before = |line: usize, done: usize| {
        let n = present.partition_point(|&(from, _, _)| from < line);
        n > 0 && (max_removal[n - 1] > done || unconsumed_count[n - 1] > optional_before(done))
    };
    // Bounded work for the stack case, which scans a window per `pop`.
    let mut budget: usize = 20_000_000;
    ops.iter().any(|op| {
        let (Some(done), SeqCall::Deq | SeqCall::Pop, Expected::Value(v)) =
            (op.complete_line, op.call, op.expected)
        else {
            return false;
        };
        if v == NULL {
            return !null_element && in_the_way_before(op.invoke_line, done);
        }
        let Some(&(1, producer_invoke, producer_done)) = produced.get(&v) else {
            return false;
        };
        if v == NULL || initial.contains(&v) {
            return false;
        }
        if !lifo {
            return in_the_way_before(producer_invoke, done);
        }
        // Stack: pushed after v (invoked after v's push completed) and
        // present before this pop started.
        let Some(after) = producer_done else {
            return false;
        };
        let lo = present.partition_point(|&(from, _, _)| from <= after);
        let hi = present.partition_point(|&(from, _, _)| from < op.invoke_line);
        if hi <= lo || hi - lo > budget {
            return false;
        }
        budget -= hi - lo;
        let mut unconsumed = 0usize;
        for &(_, invoke, removable) in &present[lo..hi] {
            if invoke > after {
                if removable == usize::MAX {
                    unconsumed += 1;
                } else if removable > done {
                    return true;
                }
            }
        }
        unconsumed > optional_before(done)
    })
}

fn order_producers(ops: &mut [SearchOp], init: &State) -> ProducerOrder {
    let mut order = ProducerOrder::none(ops.len());
    let (lifo, initial): (bool, HashSet<ValueId>) = match init {
        State::Queue(q) => (false, q.iter().copied().collect()),
        State::Stack(s) => (true, s.iter().copied().collect()),
        _ => return order,
    };
    order.discipline = if lifo {
        Discipline::Stack
    } else {
        Discipline::Queue
    };
    let mut producers: HashMap<ValueId, Vec<usize>> = HashMap::new();
    let mut consumers: HashMap<ValueId, Vec<usize>> = HashMap::new();
    for (i, op) in ops.iter().enumerate() {
        match (op.call, op.expected) {
            (SeqCall::Enq(v) | SeqCall::Push(v), _) => producers.entry(v).or_default().push(i),
            (SeqCall::Deq | SeqCall::Pop, Expected::Value(v)) if v != NULL => {
                consumers.entry(v).or_default().push(i)
            }
            _ => {}
        }
    }
    for (v, producing) in producers {
        // `null` is what an empty queue returns too: not a usable witness.
        if producing.len() != 1 || initial.contains(&v) || v == NULL {
            continue;
        }
        let p = producing[0];
        match consumers.get(&v).map(Vec::as_slice) {
            Some(&[c]) => {
                let Some(done) = ops[c].complete_line else {
                    continue;
                };
                order.unique[p] = true;
                order.consumer[p] = Some((ops[c].invoke_line, done));
                if lifo {
                    order.release_of_value.insert(v, done);
                }
                let key = (done as u64).min(PRODUCER - 1);
                ops[p].order = PRODUCER + if lifo { PRODUCER - 1 - key } else { key };
                if ops[p].complete_line.is_none() && ops[p].invoke_line < done {
                    ops[p].complete_line = Some(done);
                    ops[p].expected = Expected::Any;
                }
            }
            // Never consumed: behind everything in a queue, at the bottom of
            // a stack.
            None => {
                order.unique[p] = true;
                ops[p].order = PRODUCER + PRODUCER - 1;
            }
            // Consumed twice: a violation the search will find.
            Some(_) => {}
        }
    }
    order
}

fn anonymize(ops: &mut [SearchOp], init: &mut State) {
    let mut observed: HashSet<ValueId> = HashSet::new();
    for op in ops.iter() {
        if let Expected::Value(v) = op.expected {
            observed.insert(v);
        }
        if let SeqCall::Cas(old, _) = op.call {
            observed.insert(old);
        }
    }
    let rename = |v: ValueId| if observed.contains(&v) { v } else { ANON };
    for op in ops.iter_mut() {
        op.call = match op.call {
            SeqCall::Write(v) => SeqCall::Write(rename(v)),
            SeqCall::Cas(old, new) => SeqCall::Cas(old, rename(new)),
            SeqCall::Enq(v) => SeqCall::Enq(rename(v)),
            SeqCall::Push(v) => SeqCall::Push(rename(v)),
            SeqCall::Put(v) => SeqCall::Put(rename(v)),
            other => other,
        };
    }
    match init {
        State::Register(v) => *v = rename(*v),
        State::Queue(q) => q.iter_mut().for_each(|v| *v = rename(*v)),
        State::Stack(s) => s.iter_mut().for_each(|v| *v = rename(*v)),
        State::MapKey(Some(v)) => *v = rename(*v),
        State::Counter(_) | State::SetKey(_) | State::MapKey(None) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    fn op(call: SeqCall, expected: Expected, inv: usize, done: Option<usize>) -> SearchOp {
        SearchOp {
            call,
            expected,
            invoke_line: inv,
            complete_line: done,
            order: inv as u64,
        }
    }

    #[test]
    fn unobserved_values_are_merged() {
        let mut ops = vec![
            op(SeqCall::Enq(10), Expected::Value(NULL), 1, Some(2)),
            op(SeqCall::Enq(11), Expected::Value(NULL), 3, Some(4)),
            op(SeqCall::Enq(12), Expected::Any, 5, None),
            op(SeqCall::Deq, Expected::Value(11), 6, Some(7)),
        ];
        let mut init = State::Queue(VecDeque::from([13, 11]));
        anonymize(&mut ops, &mut init);
        assert_eq!(ops[0].call, SeqCall::Enq(ANON));
        assert_eq!(ops[1].call, SeqCall::Enq(11));
        assert_eq!(ops[2].call, SeqCall::Enq(ANON));
        assert_eq!(init, State::Queue(VecDeque::from([ANON, 11])));
        // cas compares its old value with the state: observed.
        let mut ops = vec![
            op(SeqCall::Cas(5, 6), Expected::Value(1), 1, Some(2)),
            op(SeqCall::Write(5), Expected::Any, 3, None),
        ];
        let mut init = State::Register(7);
        anonymize(&mut ops, &mut init);
        assert_eq!(ops[0].call, SeqCall::Cas(5, ANON));
        assert_eq!(ops[1].call, SeqCall::Write(5));
        assert_eq!(init, State::Register(ANON));
    }

    #[test]
    fn cut_off_producer_of_a_consumed_value_becomes_required() {
        let mut ops = vec![
            op(SeqCall::Enq(10), Expected::Any, 1, None),
            op(SeqCall::Enq(11), Expected::Any, 2, None),
            op(SeqCall::Deq, Expected::Value(10), 4, Some(6)),
            op(SeqCall::Enq(12), Expected::Value(NULL), 7, Some(8)),
        ];
        let mut init = State::Queue(VecDeque::new());
        let order = order_producers(&mut ops, &init);
        assert_eq!(order.consumer[0], Some((4, 6)));
        assert!(order.unique[1] && order.consumer[1].is_none());
        assert!(!order.unique[2] && order.unique[3]);
        assert_eq!(ops[0].complete_line, Some(6));
        assert_eq!(ops[0].order, PRODUCER + 6);
        // Never consumed: stays optional, tried last.
        assert_eq!(ops[1].complete_line, None);
        assert_eq!(ops[1].order, PRODUCER + PRODUCER - 1);
        assert_eq!(ops[2].order, 4);
        // A producer invoked after its consumer completed is left alone.
        let mut late = vec![
            op(SeqCall::Deq, Expected::Value(10), 1, Some(2)),
            op(SeqCall::Enq(10), Expected::Any, 3, None),
        ];
        order_producers(&mut late, &init);
        assert_eq!(late[1].complete_line, None);
        // Stacks order producers by decreasing consumption line.
        init = State::Stack(vec![]);
        let mut ops = vec![
            op(SeqCall::Push(10), Expected::Value(NULL), 1, Some(5)),
            op(SeqCall::Push(11), Expected::Value(NULL), 2, Some(6)),
            op(SeqCall::Pop, Expected::Value(10), 7, Some(8)),
            op(SeqCall::Pop, Expected::Value(11), 9, Some(10)),
        ];
        order_producers(&mut ops, &init);
        assert!(
            ops[1].order < ops[0].order,
            "11 is popped later, so pushed first"
        );
    }

    #[test]
    fn values_produced_twice_or_in_init_keep_the_default_order() {
        let mut ops = vec![
            op(SeqCall::Enq(10), Expected::Any, 1, None),
            op(SeqCall::Enq(10), Expected::Value(NULL), 2, Some(3)),
            op(SeqCall::Enq(11), Expected::Any, 4, None),
            op(SeqCall::Deq, Expected::Value(10), 5, Some(6)),
            op(SeqCall::Deq, Expected::Value(11), 7, Some(8)),
        ];
        let order = order_producers(&mut ops, &State::Queue(VecDeque::from([11])));
        assert!(order.unique.iter().all(|u| !u));
        assert_eq!((ops[0].order, ops[0].complete_line), (1, None));
        assert_eq!((ops[2].order, ops[2].complete_line), (4, None));
    }
}

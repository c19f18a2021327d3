//! The linearizability search over one partition (one key, or the whole
//! object), after Wing & Gong (1993) with Lowe's just-in-time linearization
//! (2017) and memoization of (linearized set, state), as in Porcupine.
//!
//! # Operations
//!
//! Each [`SearchOp`] is either *required* — it completed (`return`, or
//! `recover` after a crash), so it must take effect exactly once between its
//! invocation line and its completion line, with its reported result — or
//! *optional* — it has no completion (cut off without `recover`, or pending at
//! the end), so it may take effect at most once, anywhere after its
//! invocation, with any result, or not at all.
//!
//! # Just-in-time linearization
//!
//! A linearization is a sequence of operations in which `a` precedes `b`
//! whenever `a` completed before `b` was invoked. Build it one operation at a
//! time: after a prefix, the operations that may come next are exactly the
//! unlinearized ones invoked before the earliest completion line of an
//! unlinearized *required* operation (optional operations have no completion,
//! so they never force anything). The search keeps
//!
//! * a doubly linked list, in line order, of the invocation and completion
//!   entries of the unlinearized required operations: the candidates are the
//!   invocation entries before the first completion entry;
//! * a second list of the invocations of the unlinearized optional
//!   operations: the optional candidates are those invoked before that same
//!   first completion entry.
//!
//! It tries required candidates first, then optional ones (an optional
//! operation that never took effect then costs nothing on the way to a
//! success). Trying a candidate applies it to the model; if the output admits
//! the reported result, the candidate's entries are unlinked (dancing links)
//! and the search descends; if the first list's head is a completion entry and
//! no candidate works, it backtracks. It succeeds as soon as every required
//! operation is linearized — the remaining optional ones do not take effect —
//! and fails when backtracking empties the stack. Every sequence it can
//! produce is a valid linearization and every valid linearization (restricted
//! to the operations up to the last required one) is one it can produce, so
//! the search is sound and complete.
//!
//! Two prunings keep it fast, both exact:
//! * **Memoization**: a configuration is (set of linearized operations, model
//!   state); what can follow depends on nothing else, so a configuration seen
//!   before (and necessarily failed, or the search would have stopped) is not
//!   explored again. The set is kept as two bitsets (required, optional) with
//!   an incrementally maintained Zobrist hash; the memo stores each set
//!   compactly as "number of leading all-ones words + the words up to the
//!   last non-zero one", which for a search that linearizes roughly in
//!   invocation order is a handful of words however long the history.
//!   Entries are compared exactly (the hash only selects the bucket).
//! * **Useless optional operations**: an optional operation that leaves the
//!   state unchanged (a cut-off `read`, `contains`, failed `cas`, ...) is never
//!   linearized — any continuation with it is a continuation without it.
//!
//! Complexity: the problem is NP-complete in general; the search is
//! exponential in the worst case (many mutually concurrent operations whose
//! order matters), and linear-ish in the number of operations for histories
//! whose concurrency is bounded, as those of a fixed number of threads are.
//! Memory is one memo entry per configuration reached.

use super::model::{apply, Expected, FxBuild, FxHasher, SeqCall, State};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

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
}

/// The answer of one search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SearchResult {
    Linearizable,
    NotLinearizable,
    /// The memo reached its size limit before the search decided.
    LimitReached,
}

/// What one or more searches did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SearchCounters {
    /// Candidate operations tried (applied to the model).
    pub steps: u64,
    /// Configurations (linearized set, state) memoized.
    pub states: u64,
}

const END: u32 = 0;

/// Circular doubly linked list over nodes `1..=n` with sentinel `0`, whose
/// unlinked nodes keep their links so they can be relinked in reverse order.
struct Links {
    next: Vec<u32>,
    prev: Vec<u32>,
}

impl Links {
    fn new(n: usize) -> Links {
        let len = n + 1;
        let next = (0..len).map(|i| ((i + 1) % len) as u32).collect();
        let prev = (0..len).map(|i| ((i + len - 1) % len) as u32).collect();
        Links { next, prev }
    }
    fn first(&self) -> u32 {
        self.next[0]
    }
    fn next(&self, node: u32) -> u32 {
        self.next[node as usize]
    }
    fn unlink(&mut self, node: u32) {
        let (p, n) = (self.prev[node as usize], self.next[node as usize]);
        self.next[p as usize] = n;
        self.prev[n as usize] = p;
    }
    fn relink(&mut self, node: u32) {
        let (p, n) = (self.prev[node as usize], self.next[node as usize]);
        self.next[p as usize] = node;
        self.prev[n as usize] = node;
    }
}

/// A bitset that tracks its number of leading all-ones words and its length
/// up to the last non-zero word, so the memo can store it compactly.
struct TrackedBits {
    words: Vec<u64>,
    /// `words[..full]` are all ones.
    full: usize,
    /// `words[top..]` are all zero.
    top: usize,
}

impl TrackedBits {
    fn new(bits: usize) -> TrackedBits {
        TrackedBits {
            words: vec![0; bits.div_ceil(64)],
            full: 0,
            top: 0,
        }
    }
    fn set(&mut self, bit: usize) {
        let w = bit / 64;
        self.words[w] |= 1 << (bit % 64);
        self.top = self.top.max(w + 1);
        while self.full < self.words.len() && self.words[self.full] == u64::MAX {
            self.full += 1;
        }
    }
    fn clear(&mut self, bit: usize) {
        let w = bit / 64;
        self.words[w] &= !(1 << (bit % 64));
        self.full = self.full.min(w);
        while self.top > 0 && self.words[self.top - 1] == 0 {
            self.top -= 1;
        }
    }
    /// The words between the leading full ones and the trailing zero ones.
    fn middle(&self) -> &[u64] {
        &self.words[self.full..self.top.max(self.full)]
    }
}

struct MemoEntry {
    /// Next entry with the same hash, or `u32::MAX`.
    next: u32,
    required_full: u32,
    optional_full: u32,
    required_len: u32,
    /// The required middle words, then the optional middle words.
    words: Box<[u64]>,
    state: State,
}

/// The set of configurations reached so far.
struct Memo {
    heads: HashMap<u64, u32, FxBuild>,
    entries: Vec<MemoEntry>,
}

impl Memo {
    /// Records the configuration; `false` if it was already there.
    fn insert(
        &mut self,
        hash: u64,
        required: &TrackedBits,
        optional: &TrackedBits,
        state: &State,
    ) -> bool {
        let (req, opt) = (required.middle(), optional.middle());
        let head = self.heads.get(&hash).copied().unwrap_or(u32::MAX);
        let mut at = head;
        while at != u32::MAX {
            let e = &self.entries[at as usize];
            let split = e.required_len as usize;
            if e.required_full as usize == required.full
                && e.optional_full as usize == optional.full
                && e.words[..split] == *req
                && e.words[split..] == *opt
                && e.state == *state
            {
                return false;
            }
            at = e.next;
        }
        let mut words = Vec::with_capacity(req.len() + opt.len());
        words.extend_from_slice(req);
        words.extend_from_slice(opt);
        self.entries.push(MemoEntry {
            next: head,
            required_full: required.full as u32,
            optional_full: optional.full as u32,
            required_len: req.len() as u32,
            words: words.into_boxed_slice(),
            state: state.clone(),
        });
        self.heads.insert(hash, (self.entries.len() - 1) as u32);
        true
    }
}

/// Where the search is among the candidates of the current configuration.
#[derive(Clone, Copy, Debug)]
enum Cursor {
    /// At a node of the required list (a candidate invocation, or the first
    /// completion, which ends the required candidates).
    Required(u32),
    /// At a node of the optional list; candidates must be invoked before
    /// line `limit` (the first completion entry of the required list).
    Optional { node: u32, limit: usize },
}

struct Frame {
    /// The candidate that was linearized, to continue after it on backtrack.
    cursor: Cursor,
    op: u32,
    /// The state before it, if it changed the state.
    saved_state: Option<State>,
}

/// SplitMix64: the Zobrist keys.
fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Decides whether `ops` (one partition, in any order) starting from `init`
/// are linearizable in the sense of the module docs. `max_states` bounds the
/// memo; `counters` accumulates the work done.
pub(crate) fn search(
    ops: &[SearchOp],
    init: &State,
    max_states: Option<u64>,
    counters: &mut SearchCounters,
) -> SearchResult {
    let n = ops.len();
    // Dense indices per kind, for the bitsets.
    let mut slot = vec![0usize; n];
    let (mut n_required, mut n_optional) = (0usize, 0usize);
    for (i, op) in ops.iter().enumerate() {
        if op.complete_line.is_some() {
            slot[i] = n_required;
            n_required += 1;
        } else {
            slot[i] = n_optional;
            n_optional += 1;
        }
    }
    if n_required == 0 {
        return SearchResult::Linearizable;
    }

    // The required list: invocation and completion entries in line order.
    let mut entries: Vec<(usize, bool, u32)> = Vec::with_capacity(2 * n_required);
    for (i, op) in ops.iter().enumerate() {
        if let Some(done) = op.complete_line {
            entries.push((op.invoke_line, false, i as u32));
            entries.push((done, true, i as u32));
        }
    }
    entries.sort_unstable();
    let mut req_op = vec![0u32; entries.len() + 1];
    let mut req_is_completion = vec![false; entries.len() + 1];
    let mut req_line = vec![0usize; entries.len() + 1];
    let mut invoke_node = vec![END; n];
    let mut completion_node = vec![END; n];
    for (k, &(line, is_completion, op)) in entries.iter().enumerate() {
        let node = k + 1;
        req_op[node] = op;
        req_is_completion[node] = is_completion;
        req_line[node] = line;
        if is_completion {
            completion_node[op as usize] = node as u32;
        } else {
            invoke_node[op as usize] = node as u32;
        }
    }
    let mut required_links = Links::new(entries.len());

    // The optional list: invocations in line order.
    let mut optional: Vec<(usize, u32)> = ops
        .iter()
        .enumerate()
        .filter(|(_, op)| op.complete_line.is_none())
        .map(|(i, op)| (op.invoke_line, i as u32))
        .collect();
    optional.sort_unstable();
    let mut opt_op = vec![0u32; optional.len() + 1];
    let mut opt_line = vec![0usize; optional.len() + 1];
    for (k, &(line, op)) in optional.iter().enumerate() {
        opt_op[k + 1] = op;
        opt_line[k + 1] = line;
        invoke_node[op as usize] = (k + 1) as u32;
    }
    let mut optional_links = Links::new(optional.len());

    let zobrist: Vec<u64> = (0..n)
        .map(|i| splitmix(i as u64 ^ 0x5eed_0000_0000))
        .collect();
    let mut required_bits = TrackedBits::new(n_required);
    let mut optional_bits = TrackedBits::new(n_optional);
    let mut set_hash = 0u64;
    let mut memo = Memo {
        heads: HashMap::default(),
        entries: Vec::new(),
    };

    let mut state = init.clone();
    let mut remaining = n_required;
    let mut frames: Vec<Frame> = Vec::new();
    let mut cursor = Cursor::Required(required_links.first());

    let result = loop {
        // The candidate at the cursor, if any is left in this configuration.
        let candidate = match cursor {
            Cursor::Required(node) if node == END => None,
            Cursor::Required(node) if req_is_completion[node as usize] => {
                cursor = Cursor::Optional {
                    node: optional_links.first(),
                    limit: req_line[node as usize],
                };
                continue;
            }
            Cursor::Required(node) => Some(req_op[node as usize]),
            Cursor::Optional { node, limit } => {
                if node == END || opt_line[node as usize] >= limit {
                    None
                } else {
                    Some(opt_op[node as usize])
                }
            }
        };

        let Some(op) = candidate else {
            // No candidate left: undo the last linearization and try the
            // candidate after it.
            let Some(frame) = frames.pop() else {
                break SearchResult::NotLinearizable;
            };
            let i = frame.op as usize;
            if ops[i].complete_line.is_some() {
                required_links.relink(completion_node[i]);
                required_links.relink(invoke_node[i]);
                required_bits.clear(slot[i]);
                remaining += 1;
            } else {
                optional_links.relink(invoke_node[i]);
                optional_bits.clear(slot[i]);
            }
            set_hash ^= zobrist[i];
            if let Some(saved) = frame.saved_state {
                state = saved;
            }
            cursor = match frame.cursor {
                Cursor::Required(node) => Cursor::Required(required_links.next(node)),
                Cursor::Optional { node, limit } => Cursor::Optional {
                    node: optional_links.next(node),
                    limit,
                },
            };
            continue;
        };

        counters.steps += 1;
        let i = op as usize;
        let required = ops[i].complete_line.is_some();
        let accepted = match apply(&state, ops[i].call) {
            Some(t) if ops[i].expected.admits(t.output) => {
                let changes = t.next.as_ref().is_some_and(|next| *next != state);
                if !required && !changes {
                    None
                } else {
                    let next_ref = t.next.as_ref().unwrap_or(&state);
                    if required {
                        required_bits.set(slot[i]);
                    } else {
                        optional_bits.set(slot[i]);
                    }
                    let mut h = FxHasher::default();
                    next_ref.hash(&mut h);
                    let hash = splitmix(h.finish() ^ set_hash ^ zobrist[i]);
                    if memo.insert(hash, &required_bits, &optional_bits, next_ref) {
                        Some(t.next)
                    } else {
                        if required {
                            required_bits.clear(slot[i]);
                        } else {
                            optional_bits.clear(slot[i]);
                        }
                        None
                    }
                }
            }
            _ => None,
        };

        match accepted {
            Some(next) => {
                set_hash ^= zobrist[i];
                if required {
                    required_links.unlink(invoke_node[i]);
                    required_links.unlink(completion_node[i]);
                    remaining -= 1;
                } else {
                    optional_links.unlink(invoke_node[i]);
                }
                let saved_state = next.map(|next| std::mem::replace(&mut state, next));
                frames.push(Frame {
                    cursor,
                    op,
                    saved_state,
                });
                if remaining == 0 {
                    break SearchResult::Linearizable;
                }
                if max_states.is_some_and(|max| memo.entries.len() as u64 >= max) {
                    break SearchResult::LimitReached;
                }
                cursor = Cursor::Required(required_links.first());
            }
            None => {
                cursor = match cursor {
                    Cursor::Required(node) => Cursor::Required(required_links.next(node)),
                    Cursor::Optional { node, limit } => Cursor::Optional {
                        node: optional_links.next(node),
                        limit,
                    },
                };
            }
        }
    };
    counters.states += memo.entries.len() as u64;
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::model::Output;
    use crate::history::value::{FALSE, NULL, TRUE};
    use std::collections::VecDeque;

    fn req(call: SeqCall, out: u32, inv: usize, ret: usize) -> SearchOp {
        SearchOp {
            call,
            expected: Expected::Value(out),
            invoke_line: inv,
            complete_line: Some(ret),
        }
    }
    fn opt(call: SeqCall, inv: usize) -> SearchOp {
        SearchOp {
            call,
            expected: Expected::Any,
            invoke_line: inv,
            complete_line: None,
        }
    }
    fn run(ops: &[SearchOp], init: State) -> SearchResult {
        let mut c = SearchCounters::default();
        search(ops, &init, None, &mut c)
    }
    const A: u32 = 10;

    #[test]
    fn sequential_queue() {
        let q = || State::Queue(VecDeque::new());
        let ok = [req(SeqCall::Enq(A), NULL, 1, 2), req(SeqCall::Deq, A, 3, 4)];
        assert_eq!(run(&ok, q()), SearchResult::Linearizable);
        let lost = [
            req(SeqCall::Enq(A), NULL, 1, 2),
            req(SeqCall::Deq, NULL, 3, 4),
        ];
        assert_eq!(run(&lost, q()), SearchResult::NotLinearizable);
    }

    #[test]
    fn concurrency_allows_either_order_but_real_time_does_not() {
        let r = || State::Register(NULL);
        // write(A) overlaps read -> null: read may go first.
        let overlap = [
            req(SeqCall::Write(A), NULL, 1, 4),
            req(SeqCall::Read, NULL, 2, 3),
        ];
        assert_eq!(run(&overlap, r()), SearchResult::Linearizable);
        // write(A) returned before the read started: the read must see A.
        let ordered = [
            req(SeqCall::Write(A), NULL, 1, 2),
            req(SeqCall::Read, NULL, 3, 4),
        ];
        assert_eq!(run(&ordered, r()), SearchResult::NotLinearizable);
    }

    #[test]
    fn optional_ops_may_take_effect_late_once_or_never() {
        let s = || State::Stack(vec![]);
        // A cut-off push (line 1) is seen by a pop that starts after
        // everything else: fine (it took effect late).
        let late = [
            opt(SeqCall::Push(A), 1),
            req(SeqCall::Pop, NULL, 2, 3),
            req(SeqCall::Pop, A, 4, 5),
        ];
        assert_eq!(run(&late, s()), SearchResult::Linearizable);
        // ...or never.
        let never = [opt(SeqCall::Push(A), 1), req(SeqCall::Pop, NULL, 2, 3)];
        assert_eq!(run(&never, s()), SearchResult::Linearizable);
        // ...but at most once.
        let twice = [
            opt(SeqCall::Push(A), 1),
            req(SeqCall::Pop, A, 2, 3),
            req(SeqCall::Pop, A, 4, 5),
        ];
        assert_eq!(run(&twice, s()), SearchResult::NotLinearizable);
        // ...and not before its invocation.
        let early = [req(SeqCall::Pop, A, 1, 2), opt(SeqCall::Push(A), 3)];
        assert_eq!(run(&early, s()), SearchResult::NotLinearizable);
    }

    #[test]
    fn useless_optional_ops_are_skipped_without_changing_the_answer() {
        let ops = [
            opt(SeqCall::Contains, 1),
            opt(SeqCall::Insert, 2),
            req(SeqCall::Contains, TRUE, 3, 4),
            req(SeqCall::Insert, FALSE, 5, 6),
        ];
        assert_eq!(run(&ops, State::SetKey(false)), SearchResult::Linearizable);
        let bad = [
            opt(SeqCall::Contains, 1),
            req(SeqCall::Contains, TRUE, 3, 4),
        ];
        assert_eq!(
            run(&bad, State::SetKey(false)),
            SearchResult::NotLinearizable
        );
    }

    #[test]
    fn counter_get_compares_integers() {
        let ops = [
            req(SeqCall::Add(2), NULL, 1, 5),
            req(SeqCall::Add(3), NULL, 2, 6),
            SearchOp {
                call: SeqCall::CounterGet,
                expected: Expected::Int(3),
                invoke_line: 3,
                complete_line: Some(4),
            },
        ];
        assert_eq!(run(&ops, State::Counter(0)), SearchResult::Linearizable);
        let mut bad = ops.clone();
        bad[2].expected = Expected::Int(1);
        assert_eq!(run(&bad, State::Counter(0)), SearchResult::NotLinearizable);
        assert!(Expected::Int(5).admits(Output::Int(5)));
    }

    #[test]
    fn memo_limit_reports_undecided() {
        // Many concurrent writes and a read of the last: small limit trips.
        let mut ops: Vec<SearchOp> = (0..12)
            .map(|k| {
                req(
                    SeqCall::Write(100 + k),
                    NULL,
                    1 + k as usize,
                    100 + k as usize,
                )
            })
            .collect();
        ops.push(req(SeqCall::Read, 7, 200, 201));
        let mut c = SearchCounters::default();
        assert_eq!(
            search(&ops, &State::Register(NULL), Some(5), &mut c),
            SearchResult::LimitReached
        );
        let mut c = SearchCounters::default();
        assert_eq!(
            search(&ops, &State::Register(NULL), None, &mut c),
            SearchResult::NotLinearizable
        );
        assert!(c.states > 5);
    }

    #[test]
    fn many_overlapping_ops_stay_fast() {
        // 2,000 enq/deq pairs, each deq overlapping the next pair.
        let mut ops = Vec::new();
        for k in 0..2000usize {
            let v = 1000 + k as u32;
            ops.push(req(SeqCall::Enq(v), NULL, 10 * k + 1, 10 * k + 3));
            ops.push(req(SeqCall::Deq, v, 10 * k + 2, 10 * k + 14));
        }
        let mut c = SearchCounters::default();
        assert_eq!(
            search(&ops, &State::Queue(VecDeque::new()), None, &mut c),
            SearchResult::Linearizable
        );
        assert!(c.steps < 20_000, "{c:?}");
    }
}

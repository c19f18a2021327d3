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
//! Each configuration's candidates are collected once, in that order —
//! required ones first, then optional ones (an optional operation that never
//! took effect then costs nothing on the way to a success), each group sorted
//! by [`SearchOp::order`] (see `reduce`) — and tried one by one. Trying a
//! candidate applies it to the model; if the output admits the reported
//! result, the candidate's entries are unlinked (dancing links) and the
//! search descends into the new configuration; when every candidate of a
//! configuration has failed, it backtracks. It succeeds as soon as every
//! required operation is linearized — the remaining optional ones do not take
//! effect — and fails when backtracking empties the stack. Every sequence it
//! can produce is a valid linearization and every valid linearization
//! (restricted to the operations up to the last required one) is one it can
//! produce, so the search is sound and complete.
//!
//! # Prunings
//!
//! All exact: each skips only configurations from which no linearization
//! can be completed, or that another explored configuration covers.
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
//! * **Twins** ([`twins`]): of two operations with the same call and the same
//!   requirement on the result, the one whose interval starts and ends no
//!   later goes first.
//! * **Producer orders** ([`producer_blocked`]): the necessary orders among
//!   uniquely produced queue and stack elements of `reduce`.
//!
//! Complexity: the problem is NP-complete in general; the search is
//! exponential in the worst case (many mutually concurrent operations whose
//! order matters, or many cut-off operations whose effect may fall anywhere
//! after their invocation), and close to linear in the number of operations
//! for histories whose concurrency is bounded, as those of a fixed number of
//! threads are. Memory is one memo entry per configuration reached, bounded
//! by `max_states`.

use super::model::{apply, Expected, FxBuild, FxHasher, SeqCall, State};
use super::reduce::{Discipline, ProducerOrder};
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
    /// Candidates of one configuration are tried in increasing `order`
    /// (required before optional); see [`super::reduce`]. Any order is
    /// correct; a good one finds a linearization sooner.
    pub(crate) order: u64,
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

/// One linearized operation on the search stack.
struct Frame {
    op: u32,
    /// The state before it, if it changed the state.
    saved_state: Option<State>,
}

/// The required list as [`producer_blocked`] reads it.
struct RequiredList<'a> {
    links: &'a Links,
    op: &'a [u32],
    is_completion: &'a [bool],
    line: &'a [usize],
}

/// The optional list as [`producer_blocked`] reads it.
struct OptionalList<'a> {
    links: &'a Links,
    /// Per node: whether the operation is a `deq` or `pop`.
    is_consumer: &'a [bool],
    line: &'a [usize],
}

/// Whether the necessary producer order of `reduce` forbids linearizing
/// operation `x` in the current configuration. `min_release` is, for a queue,
/// the smallest consumer completion line of an unlinearized unique producer;
/// `first_optional_consumer` the invocation line of the first unlinearized
/// optional `deq`/`pop` (`usize::MAX` if none): only those can still remove
/// an element no completed operation consumes.
fn producer_blocked(
    x: usize,
    order: &ProducerOrder,
    state: &State,
    min_release: Option<usize>,
    first_optional_consumer: usize,
    required: &RequiredList<'_>,
    optional: &OptionalList<'_>,
) -> bool {
    if !order.unique[x] {
        return false;
    }
    // An element that must be removed before x's consumer starts (or, for
    // an x no completed operation consumes, before any remaining optional
    // consumer starts) cannot be behind x in a queue nor under x in a stack.
    let threshold = match order.consumer[x] {
        Some((invoke, _)) => invoke,
        None => first_optional_consumer,
    };
    match order.discipline {
        Discipline::None => false,
        // Rule Q: x waits for every unique producer whose element must
        // leave the queue before x's consumer starts.
        Discipline::Queue => min_release.is_some_and(|release| release < threshold),
        Discipline::Stack => {
            // Rule S1: pushing x now would bury an element that must be
            // popped before anything can pop x.
            if let State::Stack(elements) = state {
                let buries = elements.iter().any(|v| {
                    order
                        .release_of_value
                        .get(v)
                        .is_some_and(|&release| release < threshold)
                });
                if buries {
                    return true;
                }
            }
            // Rules S2 and S3 look at the unlinearized unique pushes that
            // completed before x's pop started: pushed after x, each sits
            // above x when that pop runs.
            let Some((pop_invoke, pop_done)) = order.consumer[x] else {
                return false;
            };
            let mut unconsumed_above = 0usize;
            let mut node = required.links.first();
            while node != END && required.line[node as usize] < pop_invoke {
                let y = required.op[node as usize] as usize;
                if required.is_completion[node as usize] && y != x && order.unique[y] {
                    match order.consumer[y] {
                        // S2: y is popped after x, so it must be below x.
                        Some((invoke, _)) if pop_done < invoke => return true,
                        Some(_) => {}
                        None => unconsumed_above += 1,
                    }
                }
                node = required.links.next(node);
            }
            // S3: elements no completed pop returns can only be removed by
            // optional pops, one each, invoked before x's pop completes.
            if unconsumed_above > 0 {
                let mut removers = 0usize;
                let mut node = optional.links.first();
                while node != END && optional.line[node as usize] < pop_done {
                    if optional.is_consumer[node as usize] {
                        removers += 1;
                    }
                    node = optional.links.next(node);
                }
                if unconsumed_above > removers {
                    return true;
                }
            }
            false
        }
    }
}

/// For each operation, a *twin* that may be assumed linearized before it,
/// or `u32::MAX`: the previous operation with the same call and the same
/// requirement on its result whose interval starts no later and ends no
/// later (for optional operations, which have no end: starts no later).
///
/// Exact symmetry reduction: two such operations have the same effect and
/// output in every state, so in any linearization where the later one comes
/// first, exchanging the two gives another linearization (the earlier one
/// may take the first place since it was invoked no later, the later one the
/// second since it completes no earlier); and an optional operation used
/// while its optional twin is not can be replaced by the twin. So only
/// linearizations that respect the twin chains need to be searched. This
/// collapses, for example, the 2^k subsets of k cut-off `add(1)`s of a
/// counter into k + 1 prefixes of a chain.
fn twins(ops: &[SearchOp]) -> Vec<u32> {
    let mut groups: HashMap<(SeqCall, Expected, bool), Vec<u32>, FxBuild> = HashMap::default();
    for (i, op) in ops.iter().enumerate() {
        groups
            .entry((op.call, op.expected, op.complete_line.is_some()))
            .or_default()
            .push(i as u32);
    }
    let mut twin = vec![u32::MAX; ops.len()];
    for members in groups.values_mut() {
        // Optional operations end at infinity: `None` sorts first, so map it.
        let end = |i: u32| ops[i as usize].complete_line.unwrap_or(usize::MAX);
        members.sort_by_key(|&i| (ops[i as usize].invoke_line, end(i), i));
        for pair in members.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            if end(a) <= end(b) {
                twin[b as usize] = a;
            }
        }
    }
    twin
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
    producer_order: &ProducerOrder,
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

    // The required list: invocation and completion entries in line order
    // (at equal lines, invocations first; completions by operation).
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
    let opt_is_consumer: Vec<bool> = opt_op
        .iter()
        .enumerate()
        .map(|(node, &op)| node > 0 && matches!(ops[op as usize].call, SeqCall::Deq | SeqCall::Pop))
        .collect();

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

    // Queue producer order: the unique producers whose value a completed
    // deq returns, by that deq's completion line ("release"), and the first
    // of them not linearized yet. A producer `x` is blocked while an
    // unlinearized producer's release is below its threshold (its own
    // consumer's invocation, or the first optional consumer if it has none).
    let mut linearized = vec![false; n];
    let twin = twins(ops);
    let mut by_release: Vec<(usize, u32)> = Vec::new();
    let mut release_position = vec![u32::MAX; n];
    if producer_order.discipline == Discipline::Queue {
        by_release = (0..n)
            .filter_map(|i| producer_order.consumer[i].map(|(_, done)| (done, i as u32)))
            .collect();
        by_release.sort_unstable();
        for (k, &(_, op)) in by_release.iter().enumerate() {
            release_position[op as usize] = k as u32;
        }
    }
    let mut first_unreleased = 0usize;
    let mut state = init.clone();
    let mut remaining = n_required;
    let mut frames: Vec<Frame> = Vec::new();
    // The candidates of every configuration on the current path, back to
    // back: level `d` owns `candidates[level_start[d]..level_start[d + 1]]`
    // (the last level up to the end), and `level_next[d]` is the next one to
    // try.
    let mut candidates: Vec<u32> = Vec::new();
    let mut level_start: Vec<usize> = Vec::new();
    let mut level_next: Vec<usize> = Vec::new();

    // Pushes the candidates of the current configuration: the required
    // invocations before the first completion entry, in `order`, then the
    // optional invocations before that completion line, in `order`.
    let push_level = |candidates: &mut Vec<u32>,
                      level_start: &mut Vec<usize>,
                      level_next: &mut Vec<usize>,
                      required_links: &Links,
                      optional_links: &Links| {
        let start = candidates.len();
        level_start.push(start);
        level_next.push(start);
        let mut node = required_links.first();
        let mut limit = usize::MAX;
        while node != END {
            if req_is_completion[node as usize] {
                limit = req_line[node as usize];
                break;
            }
            candidates.push(req_op[node as usize]);
            node = required_links.next(node);
        }
        candidates[start..].sort_by_key(|&op| ops[op as usize].order);
        let optional_start = candidates.len();
        let mut node = optional_links.first();
        while node != END && opt_line[node as usize] < limit {
            candidates.push(opt_op[node as usize]);
            node = optional_links.next(node);
        }
        candidates[optional_start..].sort_by_key(|&op| ops[op as usize].order);
    };
    push_level(
        &mut candidates,
        &mut level_start,
        &mut level_next,
        &required_links,
        &optional_links,
    );

    let result = loop {
        let depth = level_next.len() - 1;
        let next = level_next[depth];
        if next == candidates.len() {
            // Every candidate of this configuration failed: leave it and
            // undo the linearization that led to it.
            candidates.truncate(level_start[depth]);
            level_start.pop();
            level_next.pop();
            let Some(frame) = frames.pop() else {
                break SearchResult::NotLinearizable;
            };
            let i = frame.op as usize;
            linearized[i] = false;
            if release_position[i] != u32::MAX {
                first_unreleased = first_unreleased.min(release_position[i] as usize);
            }
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
            continue;
        }
        level_next[depth] = next + 1;
        let op = candidates[next];

        counters.steps += 1;
        let i = op as usize;
        let required = ops[i].complete_line.is_some();
        let required_list = RequiredList {
            links: &required_links,
            op: &req_op,
            is_completion: &req_is_completion,
            line: &req_line,
        };
        let min_release = by_release
            .get(first_unreleased)
            .map(|&(release, _)| release);
        let first_optional_consumer = if producer_order.discipline == Discipline::None {
            usize::MAX
        } else {
            let mut node = optional_links.first();
            while node != END && !opt_is_consumer[node as usize] {
                node = optional_links.next(node);
            }
            if node == END {
                usize::MAX
            } else {
                opt_line[node as usize]
            }
        };
        if twin[i] != u32::MAX && !linearized[twin[i] as usize] {
            // Its twin must go first (see `twins`).
            continue;
        }
        if producer_blocked(
            i,
            producer_order,
            &state,
            min_release,
            first_optional_consumer,
            &required_list,
            &OptionalList {
                links: &optional_links,
                is_consumer: &opt_is_consumer,
                line: &opt_line,
            },
        ) {
            continue;
        }
        let Some(t) = apply(&state, ops[i].call) else {
            continue;
        };
        if !ops[i].expected.admits(t.output) {
            continue;
        }
        let changes = t.next.as_ref().is_some_and(|next| *next != state);
        if !required && !changes {
            // A useless optional operation: leaving it out is as good.
            continue;
        }
        let next_ref = t.next.as_ref().unwrap_or(&state);
        if required {
            required_bits.set(slot[i]);
        } else {
            optional_bits.set(slot[i]);
        }
        let mut h = FxHasher::default();
        next_ref.hash(&mut h);
        let hash = splitmix(h.finish() ^ set_hash ^ zobrist[i]);
        if !memo.insert(hash, &required_bits, &optional_bits, next_ref) {
            // Seen (and failed) before.
            if required {
                required_bits.clear(slot[i]);
            } else {
                optional_bits.clear(slot[i]);
            }
            continue;
        }

        set_hash ^= zobrist[i];
        linearized[i] = true;
        while first_unreleased < by_release.len()
            && linearized[by_release[first_unreleased].1 as usize]
        {
            first_unreleased += 1;
        }
        if required {
            required_links.unlink(invoke_node[i]);
            required_links.unlink(completion_node[i]);
            remaining -= 1;
        } else {
            optional_links.unlink(invoke_node[i]);
        }
        let saved_state = t.next.map(|next| std::mem::replace(&mut state, next));
        frames.push(Frame { op, saved_state });
        if remaining == 0 {
            break SearchResult::Linearizable;
        }
        if max_states.is_some_and(|max| memo.entries.len() as u64 >= max) {
            break SearchResult::LimitReached;
        }
        push_level(
            &mut candidates,
            &mut level_start,
            &mut level_next,
            &required_links,
            &optional_links,
        );
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
            order: inv as u64,
        }
    }
    fn opt(call: SeqCall, inv: usize) -> SearchOp {
        SearchOp {
            call,
            expected: Expected::Any,
            invoke_line: inv,
            complete_line: None,
            order: inv as u64,
        }
    }
    fn run(ops: &[SearchOp], init: State) -> SearchResult {
        let mut c = SearchCounters::default();
        search(ops, &init, &ProducerOrder::none(ops.len()), None, &mut c)
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
                order: 3,
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
            search(
                &ops,
                &State::Register(NULL),
                &ProducerOrder::none(ops.len()),
                Some(5),
                &mut c
            ),
            SearchResult::LimitReached
        );
        let mut c = SearchCounters::default();
        assert_eq!(
            search(
                &ops,
                &State::Register(NULL),
                &ProducerOrder::none(ops.len()),
                None,
                &mut c
            ),
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
            search(
                &ops,
                &State::Queue(VecDeque::new()),
                &ProducerOrder::none(ops.len()),
                None,
                &mut c
            ),
            SearchResult::Linearizable
        );
        assert!(c.steps < 20_000, "{c:?}");
    }
}

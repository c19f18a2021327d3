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
//! produce, so the search is sound and complete. [`Search`] holds one
//! search: `run` is the loop, `try_candidate` and `accept` the descent,
//! `backtrack` the way back.
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

use super::model::{apply, Expected, FxBuild, FxHasher, SeqCall, State, Transition};
use super::reduce::{Discipline, ProducerOrder, SearchOp};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

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

/// The required list: the invocation and completion entries of the
/// unlinearized required operations, in line order. Node 0 is the sentinel;
/// the per-node vectors are indexed by node.
struct RequiredEntries {
    links: Links,
    /// The operation of each entry.
    op: Vec<u32>,
    /// Whether the entry is a completion (else an invocation).
    is_completion: Vec<bool>,
    /// The entry's line.
    line: Vec<usize>,
}

impl RequiredEntries {
    /// Builds the list over the `n_required` required operations of `ops`
    /// (at equal lines, invocations first; completions by operation) and
    /// records each operation's two nodes.
    fn new(
        ops: &[SearchOp],
        n_required: usize,
        invoke_node: &mut [u32],
        completion_node: &mut [u32],
    ) -> RequiredEntries {
        let mut entries: Vec<(usize, bool, u32)> = Vec::with_capacity(2 * n_required);
        for (i, op) in ops.iter().enumerate() {
            if let Some(done) = op.complete_line {
                entries.push((op.invoke_line, false, i as u32));
                entries.push((done, true, i as u32));
            }
        }
        entries.sort_unstable();
        let mut op = vec![0u32; entries.len() + 1];
        let mut is_completion = vec![false; entries.len() + 1];
        let mut line = vec![0usize; entries.len() + 1];
        for (k, &(at, completion, i)) in entries.iter().enumerate() {
            let node = k + 1;
            op[node] = i;
            is_completion[node] = completion;
            line[node] = at;
            if completion {
                completion_node[i as usize] = node as u32;
            } else {
                invoke_node[i as usize] = node as u32;
            }
        }
        RequiredEntries {
            links: Links::new(entries.len()),
            op,
            is_completion,
            line,
        }
    }

    /// Pushes the required candidates — the invocations before the first
    /// completion entry — and returns that entry's line (`usize::MAX` if
    /// there is none).
    fn push_candidates(&self, candidates: &mut Vec<u32>) -> usize {
        let mut node = self.links.first();
        while node != END {
            if self.is_completion[node as usize] {
                return self.line[node as usize];
            }
            candidates.push(self.op[node as usize]);
            node = self.links.next(node);
        }
        usize::MAX
    }
}

/// The optional list: the invocations of the unlinearized optional
/// operations, in line order. Node 0 is the sentinel.
struct OptionalEntries {
    links: Links,
    /// The operation of each entry.
    op: Vec<u32>,
    /// Whether the operation is a `deq` or `pop`.
    is_consumer: Vec<bool>,
    /// The invocation line.
    line: Vec<usize>,
}

impl OptionalEntries {
    /// Builds the list over the optional operations of `ops` and records
    /// each one's node.
    fn new(ops: &[SearchOp], invoke_node: &mut [u32]) -> OptionalEntries {
        let mut optional: Vec<(usize, u32)> = ops
            .iter()
            .enumerate()
            .filter(|(_, op)| op.complete_line.is_none())
            .map(|(i, op)| (op.invoke_line, i as u32))
            .collect();
        optional.sort_unstable();
        let mut op = vec![0u32; optional.len() + 1];
        let mut line = vec![0usize; optional.len() + 1];
        for (k, &(at, i)) in optional.iter().enumerate() {
            op[k + 1] = i;
            line[k + 1] = at;
            invoke_node[i as usize] = (k + 1) as u32;
        }
        let is_consumer = op
            .iter()
            .enumerate()
            .map(|(node, &i)| {
                node > 0 && matches!(ops[i as usize].call, SeqCall::Deq | SeqCall::Pop)
            })
            .collect();
        OptionalEntries {
            links: Links::new(optional.len()),
            op,
            is_consumer,
            line,
        }
    }

    /// Pushes the optional candidates: the invocations before line `limit`.
    fn push_candidates(&self, limit: usize, candidates: &mut Vec<u32>) {
        let mut node = self.links.first();
        while node != END && self.line[node as usize] < limit {
            candidates.push(self.op[node as usize]);
            node = self.links.next(node);
        }
    }

    /// The invocation line of the first unlinearized optional `deq`/`pop`
    /// (`usize::MAX` if none).
    fn first_consumer_line(&self) -> usize {
        let mut node = self.links.first();
        while node != END && !self.is_consumer[node as usize] {
            node = self.links.next(node);
        }
        if node == END {
            usize::MAX
        } else {
            self.line[node as usize]
        }
    }
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
    required: &RequiredEntries,
    optional: &OptionalEntries,
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
            buries_released(order, state, threshold)
                || pushed_above_blocks(x, order, required, optional)
        }
    }
}

/// Rule S1: pushing now would bury an element of `state` that must be
/// popped before `threshold`, before anything can pop the pushed one.
fn buries_released(order: &ProducerOrder, state: &State, threshold: usize) -> bool {
    let State::Stack(elements) = state else {
        return false;
    };
    elements.iter().any(|v| {
        order
            .release_of_value
            .get(v)
            .is_some_and(|&release| release < threshold)
    })
}

/// Rules S2 and S3 for push `x`: they look at the unlinearized unique pushes
/// that completed before x's pop started; pushed after x, each sits above x
/// when that pop runs.
fn pushed_above_blocks(
    x: usize,
    order: &ProducerOrder,
    required: &RequiredEntries,
    optional: &OptionalEntries,
) -> bool {
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
    // S3: elements no completed pop returns can only be removed by optional
    // pops, one each, invoked before x's pop completes.
    if unconsumed_above == 0 {
        return false;
    }
    let mut removers = 0usize;
    let mut node = optional.links.first();
    while node != END && optional.line[node as usize] < pop_done {
        if optional.is_consumer[node as usize] {
            removers += 1;
        }
        node = optional.links.next(node);
    }
    unconsumed_above > removers
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
    let Some(mut search) = Search::new(ops, init, producer_order, max_states) else {
        return SearchResult::Linearizable;
    };
    let result = search.run();
    counters.steps += search.steps;
    counters.states += search.memo.entries.len() as u64;
    result
}

/// The queue producer order as the search tracks it: the unique producers
/// whose value a completed `deq` returns, by that `deq`'s completion line
/// ("release"), and the first of them not linearized yet. A producer `x` is
/// blocked while an unlinearized producer's release is below its threshold
/// (its own consumer's invocation, or the first optional consumer if it has
/// none).
struct Releases {
    by_release: Vec<(usize, u32)>,
    /// Per operation: its index in `by_release`, or `u32::MAX`.
    position: Vec<u32>,
    first_unreleased: usize,
}

impl Releases {
    /// The release order of `order` over `n` operations (empty unless it is
    /// a queue's).
    fn new(order: &ProducerOrder, n: usize) -> Releases {
        let mut by_release: Vec<(usize, u32)> = Vec::new();
        let mut position = vec![u32::MAX; n];
        if order.discipline == Discipline::Queue {
            by_release = (0..n)
                .filter_map(|i| order.consumer[i].map(|(_, done)| (done, i as u32)))
                .collect();
            by_release.sort_unstable();
            for (k, &(_, op)) in by_release.iter().enumerate() {
                position[op as usize] = k as u32;
            }
        }
        Releases {
            by_release,
            position,
            first_unreleased: 0,
        }
    }

    /// The smallest release of an unlinearized producer.
    fn min_release(&self) -> Option<usize> {
        self.by_release
            .get(self.first_unreleased)
            .map(|&(release, _)| release)
    }

    /// After a linearization: skips the producers now linearized.
    fn advance(&mut self, linearized: &[bool]) {
        while self.first_unreleased < self.by_release.len()
            && linearized[self.by_release[self.first_unreleased].1 as usize]
        {
            self.first_unreleased += 1;
        }
    }

    /// After operation `op` is unlinearized.
    fn undo(&mut self, op: usize) {
        if self.position[op] != u32::MAX {
            self.first_unreleased = self.first_unreleased.min(self.position[op] as usize);
        }
    }
}

/// The candidates of every configuration on the current path, back to back:
/// level `d` owns `candidates[start[d]..start[d + 1]]` (the last level up to
/// the end), and `next[d]` is the next one to try.
#[derive(Default)]
struct Levels {
    candidates: Vec<u32>,
    start: Vec<usize>,
    next: Vec<usize>,
}

impl Levels {
    /// Opens a level after the deepest; returns where its candidates start.
    fn open(&mut self) -> usize {
        let start = self.candidates.len();
        self.start.push(start);
        self.next.push(start);
        start
    }

    /// The deepest level's next untried candidate, or `None` when every one
    /// has been tried.
    fn next_candidate(&mut self) -> Option<u32> {
        let depth = self.next.len() - 1;
        let next = self.next[depth];
        if next == self.candidates.len() {
            return None;
        }
        self.next[depth] = next + 1;
        Some(self.candidates[next])
    }

    /// Leaves the deepest level.
    fn close(&mut self) {
        if let Some(start) = self.start.pop() {
            self.candidates.truncate(start);
        }
        self.next.pop();
    }
}

/// One search: the current configuration (linearized set, model state), the
/// stack of linearized operations and of candidate levels that led to it,
/// the lists the candidates come from, and the memo.
struct Search<'a> {
    ops: &'a [SearchOp],
    producer_order: &'a ProducerOrder,
    max_states: Option<u64>,
    /// Per operation: its index among the required or among the optional
    /// operations (its bit in `required_bits` or `optional_bits`).
    slot: Vec<usize>,
    /// Per operation: its invocation node (in the required or the optional
    /// list).
    invoke_node: Vec<u32>,
    /// Per required operation: its completion node.
    completion_node: Vec<u32>,
    required: RequiredEntries,
    optional: OptionalEntries,
    /// See [`twins`].
    twin: Vec<u32>,
    releases: Releases,
    /// Per operation: its Zobrist key.
    zobrist: Vec<u64>,
    linearized: Vec<bool>,
    required_bits: TrackedBits,
    optional_bits: TrackedBits,
    /// The Zobrist hash of the linearized set.
    set_hash: u64,
    memo: Memo,
    state: State,
    /// Required operations not linearized yet.
    remaining: usize,
    frames: Vec<Frame>,
    levels: Levels,
    /// Candidates tried.
    steps: u64,
}

impl<'a> Search<'a> {
    /// Sets up the search of `ops` from `init` at the empty linearization;
    /// `None` if no operation is required (the empty one is then complete).
    fn new(
        ops: &'a [SearchOp],
        init: &State,
        producer_order: &'a ProducerOrder,
        max_states: Option<u64>,
    ) -> Option<Search<'a>> {
        let n = ops.len();
        // Dense indices per kind, for the bitsets.
        let mut slot = vec![0usize; n];
        let (mut n_required, mut n_optional) = (0usize, 0usize);
        for (i, op) in ops.iter().enumerate() {
            let count = if op.complete_line.is_some() {
                &mut n_required
            } else {
                &mut n_optional
            };
            slot[i] = *count;
            *count += 1;
        }
        if n_required == 0 {
            return None;
        }
        let mut invoke_node = vec![END; n];
        let mut completion_node = vec![END; n];
        let required =
            RequiredEntries::new(ops, n_required, &mut invoke_node, &mut completion_node);
        let optional = OptionalEntries::new(ops, &mut invoke_node);
        Some(Search {
            ops,
            producer_order,
            max_states,
            slot,
            invoke_node,
            completion_node,
            required,
            optional,
            twin: twins(ops),
            releases: Releases::new(producer_order, n),
            zobrist: (0..n)
                .map(|i| splitmix(i as u64 ^ 0x5eed_0000_0000))
                .collect(),
            linearized: vec![false; n],
            required_bits: TrackedBits::new(n_required),
            optional_bits: TrackedBits::new(n_optional),
            set_hash: 0,
            memo: Memo {
                heads: HashMap::default(),
                entries: Vec::new(),
            },
            state: init.clone(),
            remaining: n_required,
            frames: Vec::new(),
            levels: Levels::default(),
            steps: 0,
        })
    }

    /// The search loop: tries the deepest level's candidates one by one,
    /// descending on each accepted one and backtracking when a level is
    /// exhausted.
    fn run(&mut self) -> SearchResult {
        self.push_level();
        loop {
            let Some(op) = self.levels.next_candidate() else {
                if self.backtrack() {
                    continue;
                }
                return SearchResult::NotLinearizable;
            };
            self.steps += 1;
            let Some(transition) = self.try_candidate(op as usize) else {
                continue;
            };
            self.accept(op, transition);
            if self.remaining == 0 {
                return SearchResult::Linearizable;
            }
            if self
                .max_states
                .is_some_and(|max| self.memo.entries.len() as u64 >= max)
            {
                return SearchResult::LimitReached;
            }
            self.push_level();
        }
    }

    /// Opens a level with the current configuration's candidates: the
    /// required invocations before the first completion entry, in `order`,
    /// then the optional invocations before that completion line, in
    /// `order`.
    fn push_level(&mut self) {
        let ops = self.ops;
        let start = self.levels.open();
        let candidates = &mut self.levels.candidates;
        let limit = self.required.push_candidates(candidates);
        candidates[start..].sort_by_key(|&op| ops[op as usize].order);
        let optional_start = candidates.len();
        self.optional.push_candidates(limit, candidates);
        candidates[optional_start..].sort_by_key(|&op| ops[op as usize].order);
    }

    /// Tries candidate `i` in the current configuration: the twin and
    /// producer-order prunings allow it, the model admits its reported
    /// result, it is not a useless optional operation, and the configuration
    /// it leads to is new (it is then memoized). Returns the transition.
    fn try_candidate(&mut self, i: usize) -> Option<Transition> {
        if self.twin[i] != u32::MAX && !self.linearized[self.twin[i] as usize] {
            // Its twin must go first (see `twins`).
            return None;
        }
        if self.producer_blocked(i) {
            return None;
        }
        let t = apply(&self.state, self.ops[i].call)?;
        if !self.ops[i].expected.admits(t.output) {
            return None;
        }
        let required = self.ops[i].complete_line.is_some();
        let changes = t.next.as_ref().is_some_and(|next| *next != self.state);
        if !required && !changes {
            // A useless optional operation: leaving it out is as good.
            return None;
        }
        // Not new: seen (and failed) before.
        self.memoize(i, t.next.as_ref()).then_some(t)
    }

    /// Whether the producer order forbids `i` now (see [`producer_blocked`]).
    fn producer_blocked(&self, i: usize) -> bool {
        let first_optional_consumer = if self.producer_order.discipline == Discipline::None {
            usize::MAX
        } else {
            self.optional.first_consumer_line()
        };
        producer_blocked(
            i,
            self.producer_order,
            &self.state,
            self.releases.min_release(),
            first_optional_consumer,
            &self.required,
            &self.optional,
        )
    }

    /// Memoizes the configuration that linearizing `i` leads to, with state
    /// `next` (`None`: the current one), and sets `i`'s bit; `false`, with
    /// the bit left clear, if the configuration was reached before.
    fn memoize(&mut self, i: usize, next: Option<&State>) -> bool {
        self.set_bit(i, true);
        let next = next.unwrap_or(&self.state);
        let mut h = FxHasher::default();
        next.hash(&mut h);
        let hash = splitmix(h.finish() ^ self.set_hash ^ self.zobrist[i]);
        if self
            .memo
            .insert(hash, &self.required_bits, &self.optional_bits, next)
        {
            return true;
        }
        self.set_bit(i, false);
        false
    }

    /// Sets or clears operation `i`'s bit in the bitset of its kind.
    fn set_bit(&mut self, i: usize, on: bool) {
        let bits = if self.ops[i].complete_line.is_some() {
            &mut self.required_bits
        } else {
            &mut self.optional_bits
        };
        if on {
            bits.set(self.slot[i]);
        } else {
            bits.clear(self.slot[i]);
        }
    }

    /// Linearizes `op` (already memoized) by `transition`: unlinks its
    /// entries and pushes it on the stack with the state it replaces.
    fn accept(&mut self, op: u32, transition: Transition) {
        let i = op as usize;
        self.set_hash ^= self.zobrist[i];
        self.linearized[i] = true;
        self.releases.advance(&self.linearized);
        if self.ops[i].complete_line.is_some() {
            self.required.links.unlink(self.invoke_node[i]);
            self.required.links.unlink(self.completion_node[i]);
            self.remaining -= 1;
        } else {
            self.optional.links.unlink(self.invoke_node[i]);
        }
        let saved_state = transition
            .next
            .map(|next| std::mem::replace(&mut self.state, next));
        self.frames.push(Frame { op, saved_state });
    }

    /// Every candidate of the deepest configuration failed: leaves it and
    /// undoes the linearization that led to it. `false` if none did (the
    /// search has failed).
    fn backtrack(&mut self) -> bool {
        self.levels.close();
        let Some(frame) = self.frames.pop() else {
            return false;
        };
        let i = frame.op as usize;
        self.linearized[i] = false;
        self.releases.undo(i);
        if self.ops[i].complete_line.is_some() {
            self.required.links.relink(self.completion_node[i]);
            self.required.links.relink(self.invoke_node[i]);
            self.remaining += 1;
        } else {
            self.optional.links.relink(self.invoke_node[i]);
        }
        self.set_bit(i, false);
        self.set_hash ^= self.zobrist[i];
        if let Some(saved) = frame.saved_state {
            self.state = saved;
        }
        true
    }
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
        run_counted(ops, init, None).0
    }
    /// Searches without producer orders, with the memo bounded by `max_states`.
    fn run_counted(
        ops: &[SearchOp],
        init: State,
        max_states: Option<u64>,
    ) -> (SearchResult, SearchCounters) {
        let mut c = SearchCounters::default();
        let result = search(
            ops,
            &init,
            &ProducerOrder::none(ops.len()),
            max_states,
            &mut c,
        );
        (result, c)
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
        let (result, _) = run_counted(&ops, State::Register(NULL), Some(5));
        assert_eq!(result, SearchResult::LimitReached);
        let (result, c) = run_counted(&ops, State::Register(NULL), None);
        assert_eq!(result, SearchResult::NotLinearizable);
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
        let (result, c) = run_counted(&ops, State::Queue(VecDeque::new()), None);
        assert_eq!(result, SearchResult::Linearizable);
        assert!(c.steps < 20_000, "{c:?}");
    }
}

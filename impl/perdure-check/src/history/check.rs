//! From a [`History`] to a [`Verdict`]: partitioning, one search per
//! partition, and on failure the minimal failing prefix and the operations
//! involved.

use super::model::{Expected, SeqCall, State};
use super::parse::{Call, History, InitialState, Operation, Outcome};
use super::reduce;
use super::reduce::SearchOp;
use super::search::{search, SearchCounters, SearchResult};
use super::value::{json_integer, render, Interner, ValueId};
use serde_json::Value;
use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt::Write as _;

/// Options of [`check_history`].
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Give up on a partition (verdict [`Verdict::Undecided`], unless another
    /// partition fails) once one search has memoized this many
    /// configurations. `None`: no limit. Default
    /// [`CheckOptions::DEFAULT_MAX_STATES`].
    pub max_states: Option<u64>,
}

impl CheckOptions {
    /// The default bound on memoized configurations per search: about 1 GB
    /// of memory for small model states, reached only by histories whose
    /// search is exponential (many mutually concurrent operations whose
    /// order matters, in a history that fails or nearly fails).
    pub const DEFAULT_MAX_STATES: u64 = 5_000_000;
}

impl Default for CheckOptions {
    fn default() -> CheckOptions {
        CheckOptions {
            max_states: Some(CheckOptions::DEFAULT_MAX_STATES),
        }
    }
}

/// The answer for a whole history.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// `durably linearizable` (exit 0).
    DurablyLinearizable,
    /// `not durably linearizable` (exit 1).
    NotDurablyLinearizable(Box<Violation>),
    /// The search limit of [`CheckOptions::max_states`] was reached on some
    /// partition and no partition failed (exit 3). Not a verdict on the
    /// history.
    Undecided {
        /// The partition's key (`set`, `map`), if any.
        key: Option<Value>,
        /// The limit.
        max_states: u64,
    },
}

impl Verdict {
    /// The process exit status of this verdict (`malformed` is 2).
    pub fn exit_status(&self) -> u8 {
        match self {
            Verdict::DurablyLinearizable => 0,
            Verdict::NotDurablyLinearizable(_) => 1,
            Verdict::Undecided { .. } => 3,
        }
    }
}

/// Why a history is not durably linearizable.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    /// The last line of the minimal failing prefix: the history up to this
    /// line is not durably linearizable, and (if
    /// [`Violation::prefix_is_minimal`]) up to any earlier line it is.
    pub prefix_end_line: usize,
    /// `false` only when the search limit kept a shorter prefix from being
    /// decided; the prefix then still fails, but may not be the shortest.
    pub prefix_is_minimal: bool,
    /// The key whose sub-history fails (`set` and `map`).
    pub key: Option<Value>,
    /// Index (into [`History::operations`]) of the operation that completes
    /// at [`Violation::prefix_end_line`]: with its result, the prefix has no
    /// durable linearization.
    pub culprit: usize,
    /// Indices of the operations involved, in invocation order (the culprit
    /// included): all operations of the failing key in the prefix if they are
    /// few, otherwise those overlapping the culprit, the ones without result
    /// invoked before it, and the last ones completed before it.
    pub involved: Vec<usize>,
    /// How many operations of the failing key in the prefix are not listed.
    pub not_listed: usize,
    /// How many partitions (keys) fail on the whole history.
    pub failing_partitions: usize,
}

impl Violation {
    /// A multi-line explanation: the prefix, the key and one line per
    /// operation involved.
    pub fn explain(&self, history: &History) -> String {
        let mut out = String::new();
        let ops = history.operations();
        let _ = writeln!(
            out,
            "minimal failing prefix: lines {}-{}; the history up to line {} is not durably linearizable{}",
            history.header_line(),
            self.prefix_end_line,
            self.prefix_end_line,
            if self.prefix_is_minimal {
                ", every shorter prefix is"
            } else {
                " (the search limit kept shorter prefixes undecided: it may not be the shortest)"
            }
        );
        if let Some(key) = &self.key {
            let _ = writeln!(
                out,
                "failing key: {} ({} key{} fail{} on the whole history; this one fails first)",
                render(key),
                self.failing_partitions,
                if self.failing_partitions == 1 {
                    ""
                } else {
                    "s"
                },
                if self.failing_partitions == 1 {
                    "s"
                } else {
                    ""
                },
            );
        }
        let _ = writeln!(
            out,
            "operations involved ({}in the prefix; * marks the one whose result cannot be linearized):",
            match &self.key {
                Some(k) => format!("on key {}, ", render(k)),
                None => String::new(),
            }
        );
        let rows: Vec<(String, String)> = self
            .involved
            .iter()
            .map(|&i| {
                let op = &ops[i];
                let mark = if i == self.culprit { "*" } else { " " };
                (
                    format!(
                        "{mark} id {} (thread {}): {}",
                        op.id,
                        op.thread,
                        describe_at(op, self.prefix_end_line)
                    ),
                    lines_at(op, self.prefix_end_line),
                )
            })
            .collect();
        let width = rows
            .iter()
            .map(|(a, _)| a.chars().count())
            .max()
            .unwrap_or(0);
        for (a, b) in rows {
            let _ = writeln!(out, "  {a:<width$}  {b}");
        }
        if self.not_listed > 0 {
            let _ = writeln!(
                out,
                "  ({} more operation{} on {} in the prefix not listed)",
                self.not_listed,
                if self.not_listed == 1 { "" } else { "s" },
                if self.key.is_some() {
                    "this key"
                } else {
                    "the object"
                }
            );
        }
        out
    }

    /// The verdict line: `not durably linearizable: ...`.
    pub fn verdict_line(&self, history: &History) -> String {
        let op = &history.operations()[self.culprit];
        format!(
            "not durably linearizable: the minimal failing prefix ends at line {}, where operation {} (thread {}, {}{}) completes",
            self.prefix_end_line,
            op.id,
            op.thread,
            describe_at(op, self.prefix_end_line),
            match &self.key {
                Some(k) => format!(", key {}", render(k)),
                None => String::new(),
            },
        )
    }
}

/// `deq() -> 5`, or `enq(3) -> (no result)` for an operation with no result
/// in the prefix ending at `cut`.
fn describe_at(op: &Operation, cut: usize) -> String {
    match op.outcome.completion_line() {
        Some(line) if line <= cut => op.describe(),
        _ => format!("{} -> (no result)", op.call),
    }
}

/// Where an operation starts and ends, relative to the prefix ending at `cut`.
fn lines_at(op: &Operation, cut: usize) -> String {
    let invoked = format!("invoked line {}", op.invoke_line);
    match &op.outcome {
        Outcome::Returned { line, .. } if *line <= cut => {
            format!("{invoked}, returned line {line}")
        }
        Outcome::Recovered {
            line, crash_line, ..
        } if *line <= cut => {
            format!("{invoked}, cut off by the crash at line {crash_line}, recovered line {line}")
        }
        Outcome::Recovered { crash_line, .. } | Outcome::CutOff { crash_line }
            if *crash_line <= cut =>
        {
            format!("{invoked}, cut off by the crash at line {crash_line}, no recover in the prefix (optional)")
        }
        _ => format!("{invoked}, pending at the end of the prefix (optional)"),
    }
}

/// Counts of what a check did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CheckStats {
    /// Partitions checked independently (keys for `set` and `map`, else 1).
    pub partitions: usize,
    /// Operations in the largest partition.
    pub largest_partition: usize,
    /// Work of the searches over the whole history.
    pub search: SearchCounters,
    /// Extra searches run to find the minimal failing prefix.
    pub prefix_searches: usize,
}

/// The verdict and what it took.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckReport {
    /// The verdict.
    pub verdict: Verdict,
    /// What the check did.
    pub stats: CheckStats,
}

/// One independently checked part of the history.
struct Partition {
    key: Option<Value>,
    init: State,
    /// Indices into the history's operations, in invocation order.
    members: Vec<usize>,
}

fn seq_call(call: &Call, interner: &mut Interner) -> SeqCall {
    match call {
        Call::Read => SeqCall::Read,
        Call::Write(v) => SeqCall::Write(interner.intern(v)),
        Call::Cas { old, new } => SeqCall::Cas(interner.intern(old), interner.intern(new)),
        Call::Add(d) => SeqCall::Add(*d),
        Call::CounterGet => SeqCall::CounterGet,
        Call::Enq(v) => SeqCall::Enq(interner.intern(v)),
        Call::Deq => SeqCall::Deq,
        Call::Push(v) => SeqCall::Push(interner.intern(v)),
        Call::Pop => SeqCall::Pop,
        Call::Insert(_) => SeqCall::Insert,
        Call::SetRemove(_) => SeqCall::SetRemove,
        Call::Contains(_) => SeqCall::Contains,
        Call::Put { value, .. } => SeqCall::Put(interner.intern(value)),
        Call::MapGet(_) => SeqCall::MapGet,
        Call::MapRemove(_) => SeqCall::MapRemove,
    }
}

/// The operation as the search sees it in the prefix ending at `cut`
/// (`None`: the whole history): required if it completed by `cut`, optional
/// otherwise. `None` if it is invoked after `cut`.
fn search_op(op: &Operation, interner: &mut Interner, cut: Option<usize>) -> Option<SearchOp> {
    let within = |line: usize| cut.map_or(true, |c| line <= c);
    if !within(op.invoke_line) {
        return None;
    }
    let call = seq_call(&op.call, interner);
    let (expected, complete_line) = match (op.outcome.value(), op.outcome.completion_line()) {
        (Some(value), Some(line)) if within(line) => {
            let expected = if call == SeqCall::CounterGet {
                json_integer(value).map_or(Expected::Never, Expected::Int)
            } else {
                Expected::Value(interner.intern(value))
            };
            (expected, Some(line))
        }
        _ => (Expected::Any, None),
    };
    Some(SearchOp {
        call,
        expected,
        invoke_line: op.invoke_line,
        complete_line,
        order: op.invoke_line as u64,
    })
}

/// Splits the history into independently checkable partitions: one per key
/// for `set` and `map`, the whole history otherwise.
fn partitions(history: &History, interner: &mut Interner) -> Vec<Partition> {
    let ops = history.operations();
    match history.initial_state() {
        InitialState::Set(keys) => {
            let present: HashSet<ValueId> = keys.iter().map(|k| interner.intern(k)).collect();
            keyed(ops, interner, |key| State::SetKey(present.contains(&key)))
        }
        InitialState::Map(entries) => {
            let values: HashMap<ValueId, ValueId> = entries
                .iter()
                .map(|(k, v)| (interner.intern(k), interner.intern(v)))
                .collect();
            keyed(ops, interner, |key| {
                State::MapKey(values.get(&key).copied())
            })
        }
        whole => {
            let init = match whole {
                InitialState::Register(v) => State::Register(interner.intern(v)),
                InitialState::Counter(c) => State::Counter(*c),
                InitialState::Queue(items) => State::Queue(
                    items
                        .iter()
                        .map(|v| interner.intern(v))
                        .collect::<VecDeque<_>>(),
                ),
                // `init` lists the top first; the state keeps the top last.
                InitialState::Stack(items) => {
                    State::Stack(items.iter().rev().map(|v| interner.intern(v)).collect())
                }
                InitialState::Set(_) | InitialState::Map(_) => State::SetKey(false),
            };
            vec![Partition {
                key: None,
                init,
                members: (0..ops.len()).collect(),
            }]
        }
    }
}

fn keyed(
    ops: &[Operation],
    interner: &mut Interner,
    init: impl Fn(ValueId) -> State,
) -> Vec<Partition> {
    let mut index: HashMap<ValueId, usize> = HashMap::new();
    let mut parts: Vec<Partition> = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let key = op.call.key().cloned().unwrap_or(Value::Null);
        let id = interner.intern(&key);
        let at = *index.entry(id).or_insert_with(|| {
            parts.push(Partition {
                key: Some(key),
                init: init(id),
                members: Vec::new(),
            });
            parts.len() - 1
        });
        parts[at].members.push(i);
    }
    parts
}

fn search_partition(
    history: &History,
    part: &Partition,
    interner: &mut Interner,
    cut: Option<usize>,
    options: &CheckOptions,
    counters: &mut SearchCounters,
) -> SearchResult {
    let mut ops: Vec<SearchOp> = part
        .members
        .iter()
        .filter_map(|&i| search_op(&history.operations()[i], interner, cut))
        .collect();
    let mut init = part.init.clone();
    match reduce::prepare(&mut ops, &mut init) {
        None => SearchResult::NotLinearizable,
        Some(producer_order) => search(&ops, &init, &producer_order, options.max_states, counters),
    }
}

/// Decides whether `history` is durably linearizable (see the module docs of
/// [`crate::history`] for the definition), and if not finds the minimal
/// failing prefix and the operations involved.
pub fn check_history(history: &History, options: &CheckOptions) -> CheckReport {
    let mut interner = Interner::new();
    let parts = partitions(history, &mut interner);
    let mut stats = CheckStats {
        partitions: parts.len(),
        largest_partition: parts.iter().map(|p| p.members.len()).max().unwrap_or(0),
        ..CheckStats::default()
    };

    let mut failing = Vec::new();
    let mut undecided = None;
    for (p, part) in parts.iter().enumerate() {
        match search_partition(
            history,
            part,
            &mut interner,
            None,
            options,
            &mut stats.search,
        ) {
            SearchResult::Linearizable => {}
            SearchResult::NotLinearizable => failing.push(p),
            SearchResult::LimitReached => {
                undecided.get_or_insert(p);
            }
        }
    }

    if failing.is_empty() {
        let verdict = match (undecided, options.max_states) {
            (Some(p), Some(max_states)) => Verdict::Undecided {
                key: parts[p].key.clone(),
                max_states,
            },
            _ => Verdict::DurablyLinearizable,
        };
        return CheckReport { verdict, stats };
    }

    // The minimal failing prefix. Durable linearizability is prefix-closed (a
    // durable linearization of a history, cut after the last operation that
    // completes within a prefix, is one of the prefix), so "the prefix up to
    // line L fails" is monotone in L, and it can only change at a line where
    // an operation completes. Binary search per failing partition, over its
    // completion lines, and take the earliest.
    // A partition left undecided, or a prefix search that hit the limit, may
    // hide a shorter failing prefix.
    let mut minimal = undecided.is_none();
    let mut best: Option<(usize, usize)> = None; // (line, partition)
    for &p in &failing {
        let part = &parts[p];
        let mut lines: Vec<usize> = part
            .members
            .iter()
            .filter_map(|&i| history.operations()[i].outcome.completion_line())
            .collect();
        lines.sort_unstable();
        // Only prefixes shorter than the best so far can improve on it.
        if let Some((best_line, _)) = best {
            lines.retain(|&l| l < best_line);
        }
        let Some(&last) = lines.last() else { continue };
        let mut fails_at = |cut: usize, minimal: &mut bool, stats: &mut CheckStats| {
            stats.prefix_searches += 1;
            match search_partition(
                history,
                part,
                &mut interner,
                Some(cut),
                options,
                &mut stats.search,
            ) {
                SearchResult::NotLinearizable => true,
                SearchResult::Linearizable => false,
                SearchResult::LimitReached => {
                    *minimal = false;
                    false
                }
            }
        };
        if best.is_some() && !fails_at(last, &mut minimal, &mut stats) {
            continue;
        }
        // Invariant: the prefix up to lines[hi] fails; every prefix up to a
        // line in lines[..lo] was found to pass.
        let (mut lo, mut hi) = (0, lines.len() - 1);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if fails_at(lines[mid], &mut minimal, &mut stats) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        let line = lines[hi];
        if best.map_or(true, |(b, _)| line < b) {
            best = Some((line, p));
        }
    }

    let Some((cut, p)) = best else {
        // Unreachable: the first failing partition always sets `best`.
        return CheckReport {
            verdict: Verdict::Undecided {
                key: None,
                max_states: options.max_states.unwrap_or(0),
            },
            stats,
        };
    };
    let part = &parts[p];
    let (culprit, involved, not_listed) = involved_operations(history, &part.members, cut);
    CheckReport {
        verdict: Verdict::NotDurablyLinearizable(Box::new(Violation {
            prefix_end_line: cut,
            prefix_is_minimal: minimal,
            key: part.key.clone(),
            culprit,
            involved,
            not_listed,
            failing_partitions: failing.len(),
        })),
        stats,
    }
}

/// The culprit (the operation completing at `cut`) and the operations to
/// show with it; see [`Violation::involved`].
fn involved_operations(
    history: &History,
    members: &[usize],
    cut: usize,
) -> (usize, Vec<usize>, usize) {
    const SHOW_ALL_UP_TO: usize = 16;
    const CONTEXT_BEFORE: usize = 8;
    const MAX_LISTED: usize = 48;
    let ops = history.operations();
    let in_prefix: Vec<usize> = members
        .iter()
        .copied()
        .filter(|&i| ops[i].invoke_line <= cut)
        .collect();
    let culprit = in_prefix
        .iter()
        .copied()
        .find(|&i| ops[i].outcome.completion_line() == Some(cut))
        .unwrap_or_else(|| in_prefix.last().copied().unwrap_or(0));
    if in_prefix.len() <= SHOW_ALL_UP_TO {
        return (culprit, in_prefix, 0);
    }
    // End of an operation within the prefix (usize::MAX: no result in it).
    let end = |i: usize| match ops[i].outcome.completion_line() {
        Some(l) if l <= cut => l,
        _ => usize::MAX,
    };
    let start = ops[culprit].invoke_line;
    let mut chosen: Vec<usize> = in_prefix
        .iter()
        .copied()
        .filter(|&i| end(i) > start)
        .collect();
    let mut before: Vec<usize> = in_prefix
        .iter()
        .copied()
        .filter(|&i| end(i) < start)
        .collect();
    before.sort_by_key(|&i| end(i));
    chosen.extend(before.iter().rev().take(CONTEXT_BEFORE));
    chosen.sort_by_key(|&i| ops[i].invoke_line);
    chosen.dedup();
    if chosen.len() > MAX_LISTED {
        // Keep the culprit and the operations invoked closest before it.
        let at = chosen.iter().position(|&i| i == culprit).unwrap_or(0);
        let from = at.saturating_sub(MAX_LISTED - 1);
        let mut kept: Vec<usize> = chosen[from..=at].to_vec();
        kept.extend(
            chosen[at + 1..]
                .iter()
                .take(MAX_LISTED.saturating_sub(kept.len())),
        );
        chosen = kept;
    }
    let not_listed = in_prefix.len() - chosen.len();
    (culprit, chosen, not_listed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::parse::{parse_history, ParseOptions};

    /// The history `text` and the violation the checker must find in it.
    fn violation(text: &str) -> (History, Box<Violation>) {
        let h = parse_history(text, &ParseOptions::default()).expect("well-formed");
        let v = check_history(&h, &CheckOptions::default()).verdict;
        let Verdict::NotDurablyLinearizable(v) = v else {
            panic!("expected a violation, got {v:?}")
        };
        (h, v)
    }

    #[test]
    fn violation_names_the_prefix_and_culprit() {
        let (h, v) = violation(concat!(
            "{\"type\":\"header\",\"object\":\"queue\"}\n",
            "{\"type\":\"invoke\",\"id\":1,\"thread\":0,\"op\":\"enq\",\"args\":[5]}\n",
            "{\"type\":\"return\",\"id\":1,\"value\":null}\n",
            "{\"type\":\"crash\"}\n",
            "{\"type\":\"invoke\",\"id\":2,\"thread\":0,\"op\":\"deq\",\"args\":[]}\n",
            "{\"type\":\"return\",\"id\":2,\"value\":null}\n",
            "{\"type\":\"invoke\",\"id\":3,\"thread\":0,\"op\":\"deq\",\"args\":[]}\n",
            "{\"type\":\"return\",\"id\":3,\"value\":5}\n",
        ));
        assert_eq!(v.prefix_end_line, 6);
        assert!(v.prefix_is_minimal);
        assert_eq!(h.operations()[v.culprit].id, 2);
        assert_eq!(v.involved, vec![0, 1]);
        let text = v.explain(&h);
        assert!(text.contains("lines 1-6"), "{text}");
        assert!(text.contains("* id 2"), "{text}");
        assert!(v
            .verdict_line(&h)
            .starts_with("not durably linearizable: the minimal failing prefix ends at line 6, where operation 2"));
    }

    #[test]
    fn earliest_failing_key_wins() {
        let (h, v) = violation(concat!(
            "{\"type\":\"header\",\"object\":\"set\",\"init\":[\"b\"]}\n",
            "{\"type\":\"invoke\",\"id\":1,\"thread\":0,\"op\":\"contains\",\"args\":[\"a\"]}\n",
            "{\"type\":\"return\",\"id\":1,\"value\":false}\n",
            "{\"type\":\"invoke\",\"id\":2,\"thread\":0,\"op\":\"insert\",\"args\":[\"b\"]}\n",
            "{\"type\":\"return\",\"id\":2,\"value\":true}\n",
            "{\"type\":\"invoke\",\"id\":3,\"thread\":0,\"op\":\"remove\",\"args\":[\"a\"]}\n",
            "{\"type\":\"return\",\"id\":3,\"value\":true}\n",
        ));
        assert_eq!(v.prefix_end_line, 5);
        assert_eq!(v.key, Some(Value::from("b")));
        assert_eq!(v.failing_partitions, 2);
        assert_eq!(h.operations()[v.culprit].id, 2);
    }
}

//! The six sequential specifications, over interned values.
//!
//! Each model is deterministic: a state and a call give exactly one next
//! state and one output ([`apply`]). For `set` and `map` a [`State`] is the
//! state of *one key* (present or not; its value or none): the checker splits
//! those histories by key and runs one search per key
//! (P-compositionality), so a whole set or map is never materialized.
//!
//! | object | state | initial state from `init` |
//! | --- | --- | --- |
//! | register | one value | the value (default `0`) |
//! | counter | an integer | the integer (default `0`) |
//! | queue | elements, front first | array, front first |
//! | stack | elements, top last (a `Vec`) | array, **top first** |
//! | set, per key | present? | whether the key is in the array |
//! | map, per key | value or none | the key's entry, if any |

use super::value::{ValueId, FALSE, NULL, TRUE};
use std::collections::VecDeque;
use std::hash::{BuildHasherDefault, Hasher};

/// The state of a sequential object (of one key for `set` and `map`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum State {
    Register(ValueId),
    Counter(i128),
    /// Front at the front.
    Queue(VecDeque<ValueId>),
    /// Top at the end.
    Stack(Vec<ValueId>),
    SetKey(bool),
    MapKey(Option<ValueId>),
}

/// A call with interned arguments. Set and map calls do not carry their key:
/// the key selects the partition the call is checked in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum SeqCall {
    Read,
    Write(ValueId),
    Cas(ValueId, ValueId),
    Add(i128),
    CounterGet,
    Enq(ValueId),
    Deq,
    Push(ValueId),
    Pop,
    Insert,
    SetRemove,
    Contains,
    Put(ValueId),
    MapGet,
    MapRemove,
}

/// What a call returns in the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Output {
    Value(ValueId),
    /// A counter's `get`: compared with the reported result as integers.
    Int(i128),
}

/// What the history requires of a call's output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Expected {
    /// No requirement: the operation has no reported result (cut off without
    /// `recover`, or pending).
    Any,
    /// Exactly this value.
    Value(ValueId),
    /// A counter `get` reported this integer.
    Int(i128),
    /// The reported result is one no model output can equal (a counter `get`
    /// that reported a non-integer).
    Never,
}

impl Expected {
    pub(crate) fn admits(self, out: Output) -> bool {
        match (self, out) {
            (Expected::Any, _) => true,
            (Expected::Value(want), Output::Value(got)) => want == got,
            (Expected::Int(want), Output::Int(got)) => want == got,
            _ => false,
        }
    }
}

/// The effect of one call: the next state (`None` when the call leaves the
/// state unchanged, which saves a clone) and the output.
pub(crate) struct Transition {
    pub(crate) next: Option<State>,
    pub(crate) output: Output,
}

fn bool_id(b: bool) -> ValueId {
    if b {
        TRUE
    } else {
        FALSE
    }
}

/// Applies `call` to `state`. Returns `None` only if the call does not belong
/// to the state's object (impossible for a partition built from a parsed
/// history) or a counter would overflow `i128`; the search treats both as "the
/// call cannot take effect here", which can never turn a violation into a
/// pass.
pub(crate) fn apply(state: &State, call: SeqCall) -> Option<Transition> {
    let unchanged = |output| Some(Transition { next: None, output });
    let to = |next: State, output| {
        Some(Transition {
            next: Some(next),
            output,
        })
    };
    match (state, call) {
        (State::Register(v), SeqCall::Read) => unchanged(Output::Value(*v)),
        (State::Register(v), SeqCall::Write(w)) => {
            if *v == w {
                unchanged(Output::Value(NULL))
            } else {
                to(State::Register(w), Output::Value(NULL))
            }
        }
        (State::Register(v), SeqCall::Cas(old, new)) => {
            if *v != old {
                unchanged(Output::Value(FALSE))
            } else if new == *v {
                unchanged(Output::Value(TRUE))
            } else {
                to(State::Register(new), Output::Value(TRUE))
            }
        }
        (State::Counter(c), SeqCall::Add(d)) => {
            if d == 0 {
                unchanged(Output::Value(NULL))
            } else {
                to(State::Counter(c.checked_add(d)?), Output::Value(NULL))
            }
        }
        (State::Counter(c), SeqCall::CounterGet) => unchanged(Output::Int(*c)),
        (State::Queue(q), SeqCall::Enq(v)) => {
            let mut q = q.clone();
            q.push_back(v);
            to(State::Queue(q), Output::Value(NULL))
        }
        (State::Queue(q), SeqCall::Deq) => match q.front() {
            None => unchanged(Output::Value(NULL)),
            Some(&front) => {
                let mut q = q.clone();
                q.pop_front();
                to(State::Queue(q), Output::Value(front))
            }
        },
        (State::Stack(s), SeqCall::Push(v)) => {
            let mut s = s.clone();
            s.push(v);
            to(State::Stack(s), Output::Value(NULL))
        }
        (State::Stack(s), SeqCall::Pop) => match s.last() {
            None => unchanged(Output::Value(NULL)),
            Some(&top) => {
                let mut s = s.clone();
                s.pop();
                to(State::Stack(s), Output::Value(top))
            }
        },
        (State::SetKey(present), SeqCall::Insert) => {
            if *present {
                unchanged(Output::Value(FALSE))
            } else {
                to(State::SetKey(true), Output::Value(TRUE))
            }
        }
        (State::SetKey(present), SeqCall::SetRemove) => {
            if *present {
                to(State::SetKey(false), Output::Value(TRUE))
            } else {
                unchanged(Output::Value(FALSE))
            }
        }
        (State::SetKey(present), SeqCall::Contains) => unchanged(Output::Value(bool_id(*present))),
        (State::MapKey(current), SeqCall::Put(v)) => {
            let previous = Output::Value(current.unwrap_or(NULL));
            if *current == Some(v) {
                unchanged(previous)
            } else {
                to(State::MapKey(Some(v)), previous)
            }
        }
        (State::MapKey(current), SeqCall::MapGet) => {
            unchanged(Output::Value(current.unwrap_or(NULL)))
        }
        (State::MapKey(current), SeqCall::MapRemove) => match current {
            None => unchanged(Output::Value(NULL)),
            Some(v) => to(State::MapKey(None), Output::Value(*v)),
        },
        _ => None,
    }
}

/// The Fx hash (rotate, xor, multiply) used by rustc: fast, not
/// DoS-resistant, which a checker of its own inputs does not need.
#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher {
    hash: u64,
}

const FX_SEED: u64 = 0xf135_7aea_2e62_a9c5;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(26) ^ word).wrapping_mul(FX_SEED);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word) ^ ((rest.len() as u64) << 56));
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    fn write_u128(&mut self, i: u128) {
        self.add(i as u64);
        self.add((i >> 64) as u64);
    }
    fn write_i128(&mut self, i: i128) {
        self.write_u128(i as u128);
    }
    fn finish(&self) -> u64 {
        self.hash
    }
}

/// `BuildHasher` for [`FxHasher`].
pub(crate) type FxBuild = BuildHasherDefault<FxHasher>;

#[cfg(test)]
mod tests {
    use super::*;

    fn run(mut state: State, calls: &[SeqCall]) -> (State, Vec<Output>) {
        let mut outs = Vec::new();
        for &c in calls {
            let t = apply(&state, c).expect("call belongs to the model");
            if let Some(next) = t.next {
                state = next;
            }
            outs.push(t.output);
        }
        (state, outs)
    }

    const A: ValueId = 10;
    const B: ValueId = 11;

    #[test]
    fn register_cas_swaps_only_on_match() {
        let (s, o) = run(
            State::Register(A),
            &[
                SeqCall::Cas(B, A),
                SeqCall::Cas(A, B),
                SeqCall::Read,
                SeqCall::Write(A),
                SeqCall::Read,
            ],
        );
        assert_eq!(s, State::Register(A));
        assert_eq!(o, [FALSE, TRUE, B, NULL, A].map(Output::Value).to_vec());
    }

    #[test]
    fn counter_adds_and_gets() {
        let (s, o) = run(State::Counter(5), &[SeqCall::Add(-7), SeqCall::CounterGet]);
        assert_eq!(s, State::Counter(-2));
        assert_eq!(o, vec![Output::Value(NULL), Output::Int(-2)]);
        assert!(apply(&State::Counter(i128::MAX), SeqCall::Add(1)).is_none());
    }

    #[test]
    fn queue_is_fifo_and_stack_is_lifo() {
        let (_, o) = run(
            State::Queue(VecDeque::new()),
            &[
                SeqCall::Enq(A),
                SeqCall::Enq(B),
                SeqCall::Deq,
                SeqCall::Deq,
                SeqCall::Deq,
            ],
        );
        assert_eq!(o, [NULL, NULL, A, B, NULL].map(Output::Value).to_vec());
        let (_, o) = run(
            State::Stack(vec![]),
            &[
                SeqCall::Push(A),
                SeqCall::Push(B),
                SeqCall::Pop,
                SeqCall::Pop,
                SeqCall::Pop,
            ],
        );
        assert_eq!(o, [NULL, NULL, B, A, NULL].map(Output::Value).to_vec());
    }

    #[test]
    fn set_and_map_keys() {
        let (s, o) = run(
            State::SetKey(false),
            &[
                SeqCall::Contains,
                SeqCall::Insert,
                SeqCall::Insert,
                SeqCall::Contains,
                SeqCall::SetRemove,
                SeqCall::SetRemove,
            ],
        );
        assert_eq!(s, State::SetKey(false));
        assert_eq!(
            o,
            [FALSE, TRUE, FALSE, TRUE, TRUE, FALSE]
                .map(Output::Value)
                .to_vec()
        );
        let (s, o) = run(
            State::MapKey(None),
            &[
                SeqCall::MapGet,
                SeqCall::Put(A),
                SeqCall::Put(B),
                SeqCall::MapGet,
                SeqCall::MapRemove,
                SeqCall::MapRemove,
            ],
        );
        assert_eq!(s, State::MapKey(None));
        assert_eq!(o, [NULL, NULL, A, B, B, NULL].map(Output::Value).to_vec());
    }

    #[test]
    fn calls_of_another_object_do_not_apply() {
        assert!(apply(&State::SetKey(true), SeqCall::Deq).is_none());
        assert!(apply(&State::Register(A), SeqCall::Add(1)).is_none());
    }

    #[test]
    fn expected_matches_kind_and_value() {
        assert!(Expected::Any.admits(Output::Int(3)));
        assert!(Expected::Int(3).admits(Output::Int(3)));
        assert!(!Expected::Int(3).admits(Output::Value(3)));
        assert!(!Expected::Never.admits(Output::Value(NULL)));
        assert!(Expected::Value(A).admits(Output::Value(A)));
        assert!(!Expected::Value(A).admits(Output::Value(B)));
    }
}

//! Reading a history: ndjson lines into typed [`Event`]s, and events into a
//! [`History`] of [`Operation`]s, enforcing every rule of `HISTORY.md`.
//!
//! Parsing is two passes, both line-numbered:
//!
//! 1. [`parse_events`] turns each non-blank line into an [`Event`]: it must be
//!    a JSON object with a known `type` and the fields that type needs, of the
//!    right JSON types. Fields this checker does not know are ignored (the
//!    schema in `traces/SCHEMA.md` may add some); event types it does not know
//!    are an error unless [`ParseOptions::ignored_event_types`] lists them.
//! 2. [`History::from_events`] replays the events and enforces the rules: the
//!    header comes first and only once and names a known object with a valid
//!    `init`; every `invoke` names an operation of that object with the right
//!    number and kind of arguments, a fresh id, and a thread with no pending
//!    operation; every `return` completes a pending operation that no crash
//!    cut off; every `recover` completes an operation that a crash cut off and
//!    that nothing completed yet.
//!
//! The first violation is returned as a [`MalformedHistory`] naming the line
//! and the reason; nothing here panics on bad input.

use super::value::{canonical_json, json_integer, render};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::fmt;

/// The sequential object a history is checked against (`object` in the
/// header).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ObjectKind {
    /// `read() -> v`, `write(v) -> null`, `cas(old, new) -> bool`.
    Register,
    /// `add(d) -> null`, `get() -> v` (integers).
    Counter,
    /// `enq(v) -> null`, `deq() -> v or null when empty`.
    Queue,
    /// `push(v) -> null`, `pop() -> v or null when empty`.
    Stack,
    /// `insert(k)`, `remove(k)`, `contains(k)`, each `-> bool`.
    Set,
    /// `put(k, v)`, `get(k)`, `remove(k)`, each `-> previous/current value or
    /// null`.
    Map,
}

impl ObjectKind {
    /// Every supported object, in the order `HISTORY.md` lists them.
    pub const ALL: [ObjectKind; 6] = [
        ObjectKind::Register,
        ObjectKind::Counter,
        ObjectKind::Queue,
        ObjectKind::Stack,
        ObjectKind::Set,
        ObjectKind::Map,
    ];

    /// The name used in the header (`"register"`, `"queue"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ObjectKind::Register => "register",
            ObjectKind::Counter => "counter",
            ObjectKind::Queue => "queue",
            ObjectKind::Stack => "stack",
            ObjectKind::Set => "set",
            ObjectKind::Map => "map",
        }
    }

    /// The object named `name` in a header, if this checker knows it.
    pub fn from_name(name: &str) -> Option<ObjectKind> {
        ObjectKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The object's operations with their number of arguments.
    pub fn operations(self) -> &'static [(&'static str, usize)] {
        match self {
            ObjectKind::Register => &[("read", 0), ("write", 1), ("cas", 2)],
            ObjectKind::Counter => &[("add", 1), ("get", 0)],
            ObjectKind::Queue => &[("enq", 1), ("deq", 0)],
            ObjectKind::Stack => &[("push", 1), ("pop", 0)],
            ObjectKind::Set => &[("insert", 1), ("remove", 1), ("contains", 1)],
            ObjectKind::Map => &[("put", 2), ("get", 1), ("remove", 1)],
        }
    }

    /// Whether operations on different keys are independent, so that the
    /// history can be checked one key at a time (`set` and `map`).
    pub fn is_keyed(self) -> bool {
        matches!(self, ObjectKind::Set | ObjectKind::Map)
    }
}

impl fmt::Display for ObjectKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One operation call with its arguments, typed by object.
///
/// Values are JSON values; they compare as JSON with numbers by numeric value
/// (see the module docs of [`crate::history`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Call {
    /// Register `read()`.
    Read,
    /// Register `write(v)`.
    Write(Value),
    /// Register `cas(old, new)`.
    Cas {
        /// The value the register must hold for the swap to happen.
        old: Value,
        /// The value written when it does.
        new: Value,
    },
    /// Counter `add(d)`.
    Add(i128),
    /// Counter `get()`.
    CounterGet,
    /// Queue `enq(v)`.
    Enq(Value),
    /// Queue `deq()`.
    Deq,
    /// Stack `push(v)`.
    Push(Value),
    /// Stack `pop()`.
    Pop,
    /// Set `insert(k)`.
    Insert(Value),
    /// Set `remove(k)`.
    SetRemove(Value),
    /// Set `contains(k)`.
    Contains(Value),
    /// Map `put(k, v)`.
    Put {
        /// The key.
        key: Value,
        /// The value stored under it.
        value: Value,
    },
    /// Map `get(k)`.
    MapGet(Value),
    /// Map `remove(k)`.
    MapRemove(Value),
}

impl Call {
    /// The operation's name as it appears in the history.
    pub fn name(&self) -> &'static str {
        match self {
            Call::Read => "read",
            Call::Write(_) => "write",
            Call::Cas { .. } => "cas",
            Call::Add(_) => "add",
            Call::CounterGet | Call::MapGet(_) => "get",
            Call::Enq(_) => "enq",
            Call::Deq => "deq",
            Call::Push(_) => "push",
            Call::Pop => "pop",
            Call::Insert(_) => "insert",
            Call::SetRemove(_) | Call::MapRemove(_) => "remove",
            Call::Contains(_) => "contains",
            Call::Put { .. } => "put",
        }
    }

    /// The key a `set` or `map` operation touches (`None` for other objects).
    pub fn key(&self) -> Option<&Value> {
        match self {
            Call::Insert(k)
            | Call::SetRemove(k)
            | Call::Contains(k)
            | Call::MapGet(k)
            | Call::MapRemove(k) => Some(k),
            Call::Put { key, .. } => Some(key),
            _ => None,
        }
    }

    /// Parses operation `op` of `object` applied to `args`.
    fn parse(object: ObjectKind, op: &str, args: Vec<Value>) -> Result<Call, MalformedReason> {
        let Some(&(_, arity)) = object.operations().iter().find(|(name, _)| *name == op) else {
            return Err(MalformedReason::UnknownOperation {
                object,
                op: op.to_string(),
            });
        };
        if args.len() != arity {
            return Err(MalformedReason::WrongArity {
                object,
                op: op.to_string(),
                expected: arity,
                found: args.len(),
            });
        }
        let mut args = args.into_iter();
        let mut arg = || args.next().unwrap_or(Value::Null);
        Ok(match (object, op) {
            (ObjectKind::Register, "read") => Call::Read,
            (ObjectKind::Register, "write") => Call::Write(arg()),
            (ObjectKind::Register, "cas") => {
                let old = arg();
                Call::Cas { old, new: arg() }
            }
            (ObjectKind::Counter, "add") => {
                let d = arg();
                match json_integer(&d) {
                    Some(d) => Call::Add(d),
                    None => {
                        return Err(MalformedReason::BadArgument {
                            op: "add".to_string(),
                            reason: format!("a counter adds integers, got {}", render(&d)),
                        })
                    }
                }
            }
            (ObjectKind::Counter, "get") => Call::CounterGet,
            (ObjectKind::Queue, "enq") => Call::Enq(arg()),
            (ObjectKind::Queue, "deq") => Call::Deq,
            (ObjectKind::Stack, "push") => Call::Push(arg()),
            (ObjectKind::Stack, "pop") => Call::Pop,
            (ObjectKind::Set, "insert") => Call::Insert(arg()),
            (ObjectKind::Set, "remove") => Call::SetRemove(arg()),
            (ObjectKind::Set, "contains") => Call::Contains(arg()),
            (ObjectKind::Map, "put") => {
                let key = arg();
                Call::Put { key, value: arg() }
            }
            (ObjectKind::Map, "get") => Call::MapGet(arg()),
            (ObjectKind::Map, "remove") => Call::MapRemove(arg()),
            _ => {
                return Err(MalformedReason::UnknownOperation {
                    object,
                    op: op.to_string(),
                })
            }
        })
    }
}

impl Call {
    /// The call's arguments in order, each value mapped by `value` and an
    /// `add`'s integer by `add`.
    pub fn map_args<T>(&self, value: impl Fn(&Value) -> T, add: impl Fn(i128) -> T) -> Vec<T> {
        match self {
            Call::Read | Call::CounterGet | Call::Deq | Call::Pop => vec![],
            Call::Write(v)
            | Call::Enq(v)
            | Call::Push(v)
            | Call::Insert(v)
            | Call::SetRemove(v)
            | Call::Contains(v)
            | Call::MapGet(v)
            | Call::MapRemove(v) => vec![value(v)],
            Call::Add(d) => vec![add(*d)],
            Call::Cas { old, new } => vec![value(old), value(new)],
            Call::Put { key, value: v } => vec![value(key), value(v)],
        }
    }
}

impl fmt::Display for Call {
    /// `enq(5)`, `put("a", 1)`, `get()`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let args = self.map_args(render, |d| d.to_string());
        write!(f, "{}({})", self.name(), args.join(", "))
    }
}

/// The initial state of the object (`init` in the header), typed by object.
///
/// Defaults when `init` is absent: register `0`, counter `0`, and empty
/// queue, stack, set and map.
#[derive(Clone, Debug, PartialEq)]
pub enum InitialState {
    /// The register's value (any JSON value; default `0`).
    Register(Value),
    /// The counter's value (an integer; default `0`).
    Counter(i128),
    /// The queue's elements, front (next to be dequeued) first.
    Queue(Vec<Value>),
    /// The stack's elements, top (next to be popped) first.
    Stack(Vec<Value>),
    /// The set's keys (no duplicates).
    Set(Vec<Value>),
    /// The map's entries (no duplicate keys), from a JSON object (string keys)
    /// or an array of `[key, value]` pairs (any JSON keys).
    Map(Vec<(Value, Value)>),
}

impl InitialState {
    /// Parses `init` for `object`; `None` gives the default.
    fn parse(object: ObjectKind, init: Option<Value>) -> Result<InitialState, MalformedReason> {
        let bad = |reason: String| MalformedReason::BadInit { object, reason };
        let Some(init) = init else {
            return Ok(match object {
                ObjectKind::Register => InitialState::Register(Value::from(0)),
                ObjectKind::Counter => InitialState::Counter(0),
                ObjectKind::Queue => InitialState::Queue(vec![]),
                ObjectKind::Stack => InitialState::Stack(vec![]),
                ObjectKind::Set => InitialState::Set(vec![]),
                ObjectKind::Map => InitialState::Map(vec![]),
            });
        };
        match object {
            ObjectKind::Register => Ok(InitialState::Register(init)),
            ObjectKind::Counter => json_integer(&init)
                .map(InitialState::Counter)
                .ok_or_else(|| bad(format!("expected an integer, got {}", render(&init)))),
            ObjectKind::Queue | ObjectKind::Stack => match init {
                Value::Array(items) if object == ObjectKind::Queue => {
                    Ok(InitialState::Queue(items))
                }
                Value::Array(items) => Ok(InitialState::Stack(items)),
                other => Err(bad(format!(
                    "expected an array of elements ({} first), got {}",
                    if object == ObjectKind::Queue {
                        "front"
                    } else {
                        "top"
                    },
                    render(&other)
                ))),
            },
            ObjectKind::Set => match init {
                Value::Array(keys) => match first_duplicate(keys.iter()) {
                    Some(k) => Err(bad(format!("key {} appears twice", render(k)))),
                    None => Ok(InitialState::Set(keys)),
                },
                other => Err(bad(format!(
                    "expected an array of keys, got {}",
                    render(&other)
                ))),
            },
            ObjectKind::Map => {
                let entries = map_entries(init).map_err(bad)?;
                match first_duplicate(entries.iter().map(|(k, _)| k)) {
                    Some(k) => Err(bad(format!("key {} appears twice", render(k)))),
                    None => Ok(InitialState::Map(entries)),
                }
            }
        }
    }
}

/// A map's `init` as entries: a JSON object (string keys) or an array of
/// `[key, value]` pairs; else what is wrong with it.
fn map_entries(init: Value) -> Result<Vec<(Value, Value)>, String> {
    match init {
        Value::Object(map) => Ok(map
            .into_iter()
            .map(|(k, v)| (Value::String(k), v))
            .collect()),
        Value::Array(pairs) => {
            let mut entries = Vec::with_capacity(pairs.len());
            for pair in pairs {
                match pair {
                    Value::Array(kv) if kv.len() == 2 => {
                        let mut kv = kv.into_iter();
                        let k = kv.next().unwrap_or(Value::Null);
                        entries.push((k, kv.next().unwrap_or(Value::Null)));
                    }
                    other => {
                        return Err(format!(
                            "expected [key, value] pairs, got {}",
                            render(&other)
                        ))
                    }
                }
            }
            Ok(entries)
        }
        other => Err(format!(
            "expected an object or an array of [key, value] pairs, got {}",
            render(&other)
        )),
    }
}

/// The first key that appears a second time (compared as canonical JSON).
fn first_duplicate<'a>(mut keys: impl Iterator<Item = &'a Value>) -> Option<&'a Value> {
    let mut seen = HashSet::new();
    keys.find(|k| !seen.insert(canonical_json(k)))
}

/// One line of a history, parsed but not yet checked against the others.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// 1-based line number in the input.
    pub line: usize,
    /// What happened.
    pub kind: EventKind,
}

/// The event types of `HISTORY.md`.
#[derive(Clone, Debug, PartialEq)]
pub enum EventKind {
    /// `{"type":"header","object":O,"init":I}`; `init` is optional.
    Header {
        /// The object's name as written.
        object: String,
        /// The initial state, if given.
        init: Option<Value>,
    },
    /// `{"type":"invoke","id":N,"thread":T,"op":NAME,"args":[...]}`.
    Invoke {
        /// The operation's id (unique in the history).
        id: u64,
        /// The invoking thread.
        thread: u64,
        /// The operation's name.
        op: String,
        /// Its arguments.
        args: Vec<Value>,
    },
    /// `{"type":"return","id":N,"value":V}`.
    Return {
        /// The operation that returns.
        id: u64,
        /// Its result.
        value: Value,
    },
    /// `{"type":"crash"}`: every pending operation is cut off.
    Crash,
    /// `{"type":"recover","id":N,"value":V}`: a cut-off operation took effect,
    /// with result `V`.
    Recover {
        /// The cut-off operation.
        id: u64,
        /// The result its recovery reported.
        value: Value,
    },
}

impl EventKind {
    /// The `type` field of this event.
    pub fn type_name(&self) -> &'static str {
        match self {
            EventKind::Header { .. } => "header",
            EventKind::Invoke { .. } => "invoke",
            EventKind::Return { .. } => "return",
            EventKind::Crash => "crash",
            EventKind::Recover { .. } => "recover",
        }
    }
}

/// Options of [`parse_events`] and [`parse_history`].
#[derive(Clone, Debug, Default)]
pub struct ParseOptions {
    /// Check against this object instead of the header's `object` (which
    /// must still be present, but may then name an object this checker does
    /// not know).
    pub object_override: Option<ObjectKind>,
    /// Event types to skip instead of rejecting, for traces that carry extra
    /// event types (e.g. state snapshots) beside the history.
    pub ignored_event_types: Vec<String>,
}

/// Why a history is malformed; see [`MalformedHistory`] for the line.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum MalformedReason {
    /// The input holds no event at all.
    Empty,
    /// The line is not valid JSON.
    InvalidJson(String),
    /// The line is JSON but not an object.
    NotAnObject,
    /// A field the event needs is absent.
    MissingField {
        /// The event type (or `"event"` when `type` itself is missing).
        event: &'static str,
        /// The missing field.
        field: &'static str,
    },
    /// A field has the wrong JSON type.
    WrongFieldType {
        /// The field.
        field: &'static str,
        /// What it must be.
        expected: &'static str,
        /// What it is.
        found: String,
    },
    /// `type` names no event this checker knows.
    UnknownEventType(String),
    /// The first event is not the header.
    MissingHeader {
        /// The type of the event found first.
        found: &'static str,
    },
    /// A second header.
    DuplicateHeader {
        /// Where the first one is.
        first_line: usize,
    },
    /// The header's `object` is not one of the supported models.
    UnknownObject(String),
    /// The header's `init` does not fit the object.
    BadInit {
        /// The object.
        object: ObjectKind,
        /// What is wrong.
        reason: String,
    },
    /// The object has no such operation.
    UnknownOperation {
        /// The object.
        object: ObjectKind,
        /// The operation named.
        op: String,
    },
    /// The operation takes a different number of arguments.
    WrongArity {
        /// The object.
        object: ObjectKind,
        /// The operation.
        op: String,
        /// How many it takes.
        expected: usize,
        /// How many were given.
        found: usize,
    },
    /// An argument has a type the operation does not accept.
    BadArgument {
        /// The operation.
        op: String,
        /// What is wrong.
        reason: String,
    },
    /// An `invoke` reuses an id.
    DuplicateId {
        /// The id.
        id: u64,
        /// The line that first invoked it.
        first_line: usize,
    },
    /// An `invoke` on a thread that already has a pending operation.
    ThreadBusy {
        /// The thread.
        thread: u64,
        /// Its pending operation.
        pending_id: u64,
        /// Where that operation was invoked.
        pending_line: usize,
    },
    /// A `return` or `recover` names an id never invoked before it.
    UnknownId {
        /// The event type.
        event: &'static str,
        /// The id.
        id: u64,
    },
    /// A `return` for an operation that a crash cut off.
    ReturnAfterCrash {
        /// The operation.
        id: u64,
        /// The crash that cut it off.
        crash_line: usize,
    },
    /// A `recover` for an operation that no crash cut off (it is still
    /// pending).
    RecoverWithoutCrash {
        /// The operation.
        id: u64,
        /// Where it was invoked.
        invoke_line: usize,
    },
    /// A `return` or `recover` for an operation already completed.
    AlreadyCompleted {
        /// The event type.
        event: &'static str,
        /// The operation.
        id: u64,
        /// The line that completed it.
        completed_line: usize,
    },
}

impl fmt::Display for MalformedReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MalformedReason::Empty => write!(f, "the history is empty: it needs at least a header line"),
            MalformedReason::InvalidJson(e) => write!(f, "not valid JSON: {e}"),
            MalformedReason::NotAnObject => write!(f, "an event must be a JSON object"),
            MalformedReason::MissingField { event, field } => {
                write!(f, "the {event} event has no `{field}` field")
            }
            MalformedReason::WrongFieldType { field, expected, found } => {
                write!(f, "`{field}` must be {expected}, got {found}")
            }
            MalformedReason::UnknownEventType(t) => write!(
                f,
                "unknown event type {t:?} (known: header, invoke, return, crash, recover)"
            ),
            MalformedReason::MissingHeader { found } => {
                write!(f, "the first event must be the header, found a `{found}` event")
            }
            MalformedReason::DuplicateHeader { first_line } => {
                write!(f, "a second header (the header is at line {first_line})")
            }
            MalformedReason::UnknownObject(o) => write!(
                f,
                "unknown object {o:?} (known: register, counter, queue, stack, set, map)"
            ),
            MalformedReason::BadInit { object, reason } => {
                write!(f, "bad `init` for a {object}: {reason}")
            }
            MalformedReason::UnknownOperation { object, op } => {
                let known: Vec<&str> = object.operations().iter().map(|(n, _)| *n).collect();
                write!(f, "a {object} has no operation {op:?} (it has {})", known.join(", "))
            }
            MalformedReason::WrongArity { object, op, expected, found } => write!(
                f,
                "{object} `{op}` takes {expected} argument{}, got {found}",
                if *expected == 1 { "" } else { "s" }
            ),
            MalformedReason::BadArgument { op, reason } => write!(f, "bad argument to `{op}`: {reason}"),
            MalformedReason::DuplicateId { id, first_line } => {
                write!(f, "operation id {id} is already used (invoked at line {first_line})")
            }
            MalformedReason::ThreadBusy { thread, pending_id, pending_line } => write!(
                f,
                "thread {thread} already has a pending operation (id {pending_id}, invoked at line {pending_line}); a thread has at most one"
            ),
            MalformedReason::UnknownId { event, id } => {
                write!(f, "{event} for operation id {id}, which was never invoked")
            }
            MalformedReason::ReturnAfterCrash { id, crash_line } => write!(
                f,
                "return for operation {id}, which the crash at line {crash_line} cut off; a cut-off operation can only complete with `recover`"
            ),
            MalformedReason::RecoverWithoutCrash { id, invoke_line } => write!(
                f,
                "recover for operation {id} (invoked at line {invoke_line}), which no crash cut off; a pending operation completes with `return`"
            ),
            MalformedReason::AlreadyCompleted { event, id, completed_line } => write!(
                f,
                "{event} for operation {id}, which already completed at line {completed_line}"
            ),
        }
    }
}

/// A malformed history: the line and the reason. Verdict `malformed`, exit
/// status 2.
#[derive(Clone, Debug, PartialEq)]
pub struct MalformedHistory {
    /// 1-based line number of the offending line.
    pub line: usize,
    /// What is wrong with it.
    pub reason: MalformedReason,
}

impl fmt::Display for MalformedHistory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

impl std::error::Error for MalformedHistory {}

/// How an operation ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// It returned `value` at `line`: it took effect exactly once between its
    /// invocation and `line`, with that result.
    Returned {
        /// The result.
        value: Value,
        /// The `return` line.
        line: usize,
    },
    /// A crash cut it off and its recovery reported `value` at `line`: it
    /// took effect exactly once between its invocation and `line`, with that
    /// result.
    Recovered {
        /// The recovered result.
        value: Value,
        /// The `recover` line.
        line: usize,
        /// The crash that cut it off.
        crash_line: usize,
    },
    /// A crash cut it off and nothing reported its outcome: it took effect at
    /// most once, anywhere after its invocation, with any result.
    CutOff {
        /// The crash that cut it off.
        crash_line: usize,
    },
    /// Still pending when the history ends: like [`Outcome::CutOff`], it took
    /// effect at most once after its invocation.
    Pending,
}

impl Outcome {
    /// The line that completed the operation (`return` or `recover`), if any.
    pub fn completion_line(&self) -> Option<usize> {
        match self {
            Outcome::Returned { line, .. } | Outcome::Recovered { line, .. } => Some(*line),
            Outcome::CutOff { .. } | Outcome::Pending => None,
        }
    }

    /// The result the operation reported, if it completed.
    pub fn value(&self) -> Option<&Value> {
        match self {
            Outcome::Returned { value, .. } | Outcome::Recovered { value, .. } => Some(value),
            Outcome::CutOff { .. } | Outcome::Pending => None,
        }
    }
}

/// One operation of a history.
#[derive(Clone, Debug, PartialEq)]
pub struct Operation {
    /// Its id.
    pub id: u64,
    /// The thread that invoked it.
    pub thread: u64,
    /// What it does.
    pub call: Call,
    /// The `invoke` line.
    pub invoke_line: usize,
    /// How it ended.
    pub outcome: Outcome,
}

impl Operation {
    /// `deq() -> 5`, `enq(3) -> (no result)`.
    pub fn describe(&self) -> String {
        match self.outcome.value() {
            Some(v) => format!("{} -> {}", self.call, render(v)),
            None => format!("{} -> (no result)", self.call),
        }
    }
}

/// A well-formed history: the object, its initial state and the operations
/// in invocation order. Built only by [`History::from_events`] (or
/// [`parse_history`]), so every operation belongs to the object.
#[derive(Clone, Debug)]
pub struct History {
    object: ObjectKind,
    init: InitialState,
    header_line: usize,
    ops: Vec<Operation>,
    crash_lines: Vec<usize>,
    event_count: usize,
    last_line: usize,
}

impl History {
    /// The object the history is checked against.
    pub fn object(&self) -> ObjectKind {
        self.object
    }

    /// The object's initial state.
    pub fn initial_state(&self) -> &InitialState {
        &self.init
    }

    /// The header's line.
    pub fn header_line(&self) -> usize {
        self.header_line
    }

    /// The operations, in invocation order.
    pub fn operations(&self) -> &[Operation] {
        &self.ops
    }

    /// The lines of the `crash` events.
    pub fn crash_lines(&self) -> &[usize] {
        &self.crash_lines
    }

    /// How many events (non-blank, non-ignored lines) the history has.
    pub fn event_count(&self) -> usize {
        self.event_count
    }

    /// The line of the last event.
    pub fn last_line(&self) -> usize {
        self.last_line
    }

    /// Replays `events` (in input order) and enforces the rules of
    /// `HISTORY.md`; see the module docs.
    pub fn from_events(
        events: Vec<Event>,
        options: &ParseOptions,
    ) -> Result<History, MalformedHistory> {
        History::build(events.into_iter().map(Ok), options)
    }

    /// Replays events as they are parsed, so that the first bad line — by
    /// syntax or by rule — is the one reported: the header, then every other
    /// event through a [`Replay`].
    fn build(
        mut events: impl Iterator<Item = Result<Event, MalformedHistory>>,
        options: &ParseOptions,
    ) -> Result<History, MalformedHistory> {
        let Some(first) = events.next().transpose()? else {
            return Err(malformed(1, MalformedReason::Empty));
        };
        let header_line = first.line;
        let (object, init) = read_header(first, options)?;
        let mut replay = Replay::new(object, header_line);
        let mut event_count = 1;
        let mut last_line = header_line;
        for event in events {
            let event = event?;
            event_count += 1;
            last_line = event.line;
            replay.event(event)?;
        }
        Ok(History {
            object,
            init,
            header_line,
            ops: replay.ops,
            crash_lines: replay.crash_lines,
            event_count,
            last_line,
        })
    }
}

/// The error for `line`.
fn malformed(line: usize, reason: MalformedReason) -> MalformedHistory {
    MalformedHistory { line, reason }
}

/// The header phase of [`History::build`]: the first event must be the
/// header, naming a known object (or overridden by the options) with a valid
/// `init`.
fn read_header(
    first: Event,
    options: &ParseOptions,
) -> Result<(ObjectKind, InitialState), MalformedHistory> {
    let line = first.line;
    match first.kind {
        EventKind::Header { object, init } => {
            let kind = match options.object_override {
                Some(kind) => kind,
                None => ObjectKind::from_name(&object)
                    .ok_or_else(|| malformed(line, MalformedReason::UnknownObject(object)))?,
            };
            let init = InitialState::parse(kind, init).map_err(|r| malformed(line, r))?;
            Ok((kind, init))
        }
        other => Err(malformed(
            line,
            MalformedReason::MissingHeader {
                found: other.type_name(),
            },
        )),
    }
}

/// The replay phase of [`History::build`]: the operations so far and what
/// the rules of `HISTORY.md` need to know about them, one event at a time.
struct Replay {
    object: ObjectKind,
    header_line: usize,
    ops: Vec<Operation>,
    /// id -> index into `ops`.
    by_id: HashMap<u64, usize>,
    /// thread -> index of its pending (not cut off) operation.
    busy: HashMap<u64, usize>,
    crash_lines: Vec<usize>,
}

impl Replay {
    /// The replay after the header of a history of `object`.
    fn new(object: ObjectKind, header_line: usize) -> Replay {
        Replay {
            object,
            header_line,
            ops: Vec::new(),
            by_id: HashMap::new(),
            busy: HashMap::new(),
            crash_lines: Vec::new(),
        }
    }

    /// Applies one event after the header, or says which rule it breaks.
    fn event(&mut self, event: Event) -> Result<(), MalformedHistory> {
        let line = event.line;
        match event.kind {
            EventKind::Header { .. } => Err(malformed(
                line,
                MalformedReason::DuplicateHeader {
                    first_line: self.header_line,
                },
            )),
            EventKind::Invoke {
                id,
                thread,
                op,
                args,
            } => self.invoke(line, id, thread, &op, args),
            EventKind::Return { id, value } => self.complete(line, id, value),
            EventKind::Crash => {
                for (_, index) in self.busy.drain() {
                    self.ops[index].outcome = Outcome::CutOff { crash_line: line };
                }
                self.crash_lines.push(line);
                Ok(())
            }
            EventKind::Recover { id, value } => self.recover(line, id, value),
        }
    }

    /// An `invoke`: a fresh id, a thread with no pending operation, and an
    /// operation of the object.
    fn invoke(
        &mut self,
        line: usize,
        id: u64,
        thread: u64,
        op: &str,
        args: Vec<Value>,
    ) -> Result<(), MalformedHistory> {
        if let Some(&first) = self.by_id.get(&id) {
            return Err(malformed(
                line,
                MalformedReason::DuplicateId {
                    id,
                    first_line: self.ops[first].invoke_line,
                },
            ));
        }
        if let Some(&pending) = self.busy.get(&thread) {
            return Err(malformed(
                line,
                MalformedReason::ThreadBusy {
                    thread,
                    pending_id: self.ops[pending].id,
                    pending_line: self.ops[pending].invoke_line,
                },
            ));
        }
        let call = Call::parse(self.object, op, args).map_err(|r| malformed(line, r))?;
        self.by_id.insert(id, self.ops.len());
        self.busy.insert(thread, self.ops.len());
        self.ops.push(Operation {
            id,
            thread,
            call,
            invoke_line: line,
            outcome: Outcome::Pending,
        });
        Ok(())
    }

    /// A `return`: completes a pending operation that no crash cut off.
    fn complete(&mut self, line: usize, id: u64, value: Value) -> Result<(), MalformedHistory> {
        let index = self.named(line, "return", id)?;
        let op = &mut self.ops[index];
        match op.outcome {
            Outcome::Pending => {
                self.busy.remove(&op.thread);
                op.outcome = Outcome::Returned { value, line };
                Ok(())
            }
            Outcome::CutOff { crash_line } => Err(malformed(
                line,
                MalformedReason::ReturnAfterCrash { id, crash_line },
            )),
            Outcome::Returned { line: done, .. } | Outcome::Recovered { line: done, .. } => {
                Err(already_completed(line, "return", id, done))
            }
        }
    }

    /// A `recover`: completes an operation that a crash cut off.
    fn recover(&mut self, line: usize, id: u64, value: Value) -> Result<(), MalformedHistory> {
        let index = self.named(line, "recover", id)?;
        let op = &mut self.ops[index];
        match op.outcome {
            Outcome::CutOff { crash_line } => {
                op.outcome = Outcome::Recovered {
                    value,
                    line,
                    crash_line,
                };
                Ok(())
            }
            Outcome::Pending => Err(malformed(
                line,
                MalformedReason::RecoverWithoutCrash {
                    id,
                    invoke_line: op.invoke_line,
                },
            )),
            Outcome::Returned { line: done, .. } | Outcome::Recovered { line: done, .. } => {
                Err(already_completed(line, "recover", id, done))
            }
        }
    }

    /// The index of the operation that `event` (`return` or `recover`) at
    /// `line` names: one invoked before it.
    fn named(&self, line: usize, event: &'static str, id: u64) -> Result<usize, MalformedHistory> {
        self.by_id
            .get(&id)
            .copied()
            .ok_or_else(|| malformed(line, MalformedReason::UnknownId { event, id }))
    }
}

/// A `return` or `recover` (`event`) at `line` for operation `id`, which
/// already completed at line `done`.
fn already_completed(line: usize, event: &'static str, id: u64, done: usize) -> MalformedHistory {
    malformed(
        line,
        MalformedReason::AlreadyCompleted {
            event,
            id,
            completed_line: done,
        },
    )
}

/// Parses ndjson `text` into events, one per non-blank line (lines holding
/// only whitespace are skipped; line numbers count them). Events of a type in
/// [`ParseOptions::ignored_event_types`] are dropped.
pub fn parse_events(text: &str, options: &ParseOptions) -> Result<Vec<Event>, MalformedHistory> {
    let mut events = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        if raw.trim().is_empty() {
            continue;
        }
        match parse_event(raw, options) {
            Ok(Some(kind)) => events.push(Event { line, kind }),
            Ok(None) => {}
            Err(reason) => return Err(MalformedHistory { line, reason }),
        }
    }
    Ok(events)
}

/// Parses and validates a whole history: [`parse_events`] then
/// [`History::from_events`], line by line, so the error reported is the one
/// on the earliest bad line.
pub fn parse_history(text: &str, options: &ParseOptions) -> Result<History, MalformedHistory> {
    let events = text
        .lines()
        .enumerate()
        .filter(|(_, raw)| !raw.trim().is_empty())
        .filter_map(|(index, raw)| {
            let line = index + 1;
            match parse_event(raw, options) {
                Ok(Some(kind)) => Some(Ok(Event { line, kind })),
                Ok(None) => None,
                Err(reason) => Some(Err(MalformedHistory { line, reason })),
            }
        });
    History::build(events, options)
}

fn parse_event(raw: &str, options: &ParseOptions) -> Result<Option<EventKind>, MalformedReason> {
    let value: Value =
        serde_json::from_str(raw).map_err(|e| MalformedReason::InvalidJson(e.to_string()))?;
    let Value::Object(mut obj) = value else {
        return Err(MalformedReason::NotAnObject);
    };
    let ty = match obj.get("type") {
        None => {
            return Err(MalformedReason::MissingField {
                event: "event",
                field: "type",
            })
        }
        Some(Value::String(s)) => s.clone(),
        Some(other) => return Err(wrong_type("type", "a string", other)),
    };
    Ok(Some(match ty.as_str() {
        "header" => {
            let object = match take(&mut obj, "header", "object")? {
                Value::String(s) => s,
                other => return Err(wrong_type("object", "a string", &other)),
            };
            EventKind::Header {
                object,
                init: obj.remove("init"),
            }
        }
        "invoke" => {
            let id = id_field(&obj, "invoke", "id")?;
            let thread = id_field(&obj, "invoke", "thread")?;
            let op = match take(&mut obj, "invoke", "op")? {
                Value::String(s) => s,
                other => return Err(wrong_type("op", "a string", &other)),
            };
            let args = match take(&mut obj, "invoke", "args")? {
                Value::Array(a) => a,
                other => return Err(wrong_type("args", "an array", &other)),
            };
            EventKind::Invoke {
                id,
                thread,
                op,
                args,
            }
        }
        "return" => EventKind::Return {
            id: id_field(&obj, "return", "id")?,
            value: take(&mut obj, "return", "value")?,
        },
        "crash" => EventKind::Crash,
        "recover" => EventKind::Recover {
            id: id_field(&obj, "recover", "id")?,
            value: take(&mut obj, "recover", "value")?,
        },
        _ if options.ignored_event_types.contains(&ty) => return Ok(None),
        _ => return Err(MalformedReason::UnknownEventType(ty)),
    }))
}

fn take(
    obj: &mut Map<String, Value>,
    event: &'static str,
    field: &'static str,
) -> Result<Value, MalformedReason> {
    obj.remove(field)
        .ok_or(MalformedReason::MissingField { event, field })
}

fn id_field(
    obj: &Map<String, Value>,
    event: &'static str,
    field: &'static str,
) -> Result<u64, MalformedReason> {
    match obj.get(field) {
        None => Err(MalformedReason::MissingField { event, field }),
        Some(v) => v
            .as_u64()
            .ok_or_else(|| wrong_type(field, "a non-negative integer", v)),
    }
}

fn wrong_type(field: &'static str, expected: &'static str, found: &Value) -> MalformedReason {
    MalformedReason::WrongFieldType {
        field,
        expected,
        found: render(found),
    }
}

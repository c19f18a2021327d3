//! The `*.litmus` format of `PX86.md` ("Litmus file format"): the test as
//! the engine sees it ([`Test`]) and its parser ([`parse`], [`parse_file`]).
//!
//! A file is a header (`name`, `line`, `init`), one or more `thread N`
//! blocks of instructions, `end`, then `allow`/`forbid` outcome lines.
//! `#` starts a comment anywhere on a line. Every name is resolved while
//! parsing, so a [`Test`] refers to locations, lines and registers by index
//! and the engine never looks a name up.
//!
//! Choices the format leaves open, fixed here (and in
//! `modelcheck/litmus/README.md`):
//!
//! * `name` is required and given once; `line`, `init` and `name` belong to
//!   the header, before the first `thread`.
//! * `line a b c` puts its locations on one cache line; two `line`
//!   directives that share a location merge their lines (sharing a line is
//!   an equivalence). A location that is in no `line` directive has a line of
//!   its own. Locations are declared by use: in an instruction, `init` or
//!   `line`.
//! * Thread numbers are distinct non-negative integers, in any order; a
//!   thread may be empty.
//! * Registers are per thread. In an outcome, `N:r` names register `r` of
//!   `thread N`; plain `r` is accepted when exactly one thread writes a
//!   register called `r`, and is an error ([`ParseErrorKind::AmbiguousRegister`])
//!   otherwise. A name cannot be both a location and a register.
//! * `cas` takes an optional register: `cas LOC OLD NEW` (three operands) or
//!   `cas REG LOC OLD NEW` (four).
//! * Values are signed 64-bit integers (`faa` wraps).
//! * A file has at least one outcome line; an outcome names at least one
//!   location or register, each at most once.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::Path;

/// A value held by a location or register.
pub type Value = i64;

/// A parsed litmus test, with every name resolved to an index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Test {
    /// The `name` directive.
    pub name: String,
    /// Where the test was read from (for messages).
    pub file: String,
    /// Location names; a location is an index into this vector, numbered in
    /// order of first mention.
    pub locations: Vec<String>,
    /// The cache line of each location (an index into [`Test::lines`]).
    pub line_of: Vec<usize>,
    /// The locations of each cache line, in location order.
    pub lines: Vec<Vec<usize>>,
    /// The initial (and initially persisted) value of each location.
    pub init: Vec<Value>,
    /// The threads, in the order the file declares them.
    pub threads: Vec<Thread>,
    /// The `allow`/`forbid` lines, in file order.
    pub expectations: Vec<Expectation>,
}

/// One `thread N` block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Thread {
    /// The `N` of `thread N`.
    pub id: u32,
    /// The thread's register names; a register is an index into this vector.
    pub registers: Vec<String>,
    /// The program, in program order.
    pub instrs: Vec<Instr>,
    /// The source line of each instruction.
    pub source_lines: Vec<usize>,
}

/// One instruction. `loc` fields index [`Test::locations`]; `reg` fields
/// index the thread's [`Thread::registers`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Instr {
    /// `store LOC VAL`
    Store { loc: usize, val: Value },
    /// `load REG LOC`
    Load { reg: usize, loc: usize },
    /// `clflush LOC`
    Clflush { loc: usize },
    /// `clflushopt LOC`
    Clflushopt { loc: usize },
    /// `clwb LOC` (same semantics as `clflushopt`)
    Clwb { loc: usize },
    /// `sfence`
    Sfence,
    /// `mfence`
    Mfence,
    /// `cas [REG] LOC OLD NEW` (locked; REG gets 1 on success, 0 on failure)
    Cas {
        reg: Option<usize>,
        loc: usize,
        old: Value,
        new: Value,
    },
    /// `xchg REG LOC VAL` (locked; REG gets the old value)
    Xchg { reg: usize, loc: usize, val: Value },
    /// `faa REG LOC VAL` (locked fetch-and-add; REG gets the old value)
    Faa { reg: usize, loc: usize, val: Value },
    /// `ntstore LOC VAL` (non-temporal)
    Ntstore { loc: usize, val: Value },
}

/// What an outcome constrains: a location's persisted value, or a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    /// The persisted value of a location (an index into [`Test::locations`]).
    Loc(usize),
    /// A register: `thread` indexes [`Test::threads`], `reg` that thread's
    /// [`Thread::registers`].
    Reg {
        /// Index of the thread in [`Test::threads`].
        thread: usize,
        /// Index of the register in the thread's [`Thread::registers`].
        reg: usize,
    },
}

/// `allow` or `forbid`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Polarity {
    /// Some execution and crash point yields the outcome.
    Allow,
    /// No execution and crash point yields the outcome.
    Forbid,
}

/// One `allow O` / `forbid O` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expectation {
    /// `allow` or `forbid`.
    pub polarity: Polarity,
    /// The constraints of `O`, in the order written.
    pub outcome: Vec<(Key, Value)>,
    /// The source line.
    pub line: usize,
}

/// Why a litmus file was rejected, with where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The file (as given).
    pub file: String,
    /// 1-based line number; 0 when the file could not be read at all.
    pub line: usize,
    /// The reason.
    pub kind: ParseErrorKind,
}

/// The reasons a litmus file is rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseErrorKind {
    /// The file could not be read.
    Io(String),
    /// A header keyword that is not `name`, `line`, `init`, `thread`, `end`,
    /// `allow` or `forbid` (outside a thread).
    UnknownDirective(String),
    /// Inside a thread, a word that is not an instruction or `thread`/`end`.
    UnknownInstruction(String),
    /// Wrong number of operands; `usage` is the expected form.
    WrongOperands {
        /// The keyword.
        keyword: String,
        /// The expected form, e.g. `store LOC VAL`.
        usage: &'static str,
    },
    /// A value that is not a 64-bit integer.
    BadInteger(String),
    /// A name that is not an identifier (`[A-Za-z_][A-Za-z0-9_]*`).
    BadName(String),
    /// A `thread` number that is not a non-negative integer.
    BadThreadNumber(String),
    /// `thread N` given twice.
    DuplicateThread(u32),
    /// `name` given twice.
    DuplicateName,
    /// No `name` directive.
    MissingName,
    /// `init` of a location given twice.
    DuplicateInit(String),
    /// A header directive (`name`, `line`, `init`) after the first `thread`.
    HeaderAfterThread(String),
    /// An instruction before the first `thread`.
    InstructionOutsideThread(String),
    /// `end` before any `thread`.
    NoThreads,
    /// The file ends before `end`.
    MissingEnd,
    /// A second `end`.
    DuplicateEnd,
    /// An instruction or `thread` after `end`.
    AfterEnd(String),
    /// `allow`/`forbid` before `end`.
    OutcomeBeforeEnd,
    /// The file has no `allow`/`forbid` line.
    NoExpectations,
    /// `allow`/`forbid` with nothing after it.
    EmptyOutcome,
    /// An outcome or `init` item that is not `NAME=VAL` (or `N:REG=VAL`).
    BadItem(String),
    /// An outcome names something that is neither a location (mentioned by
    /// an instruction, `init` or `line`) nor a register some thread writes.
    UnknownName(String),
    /// An outcome names `N:r` where there is no `thread N` or it does not
    /// write `r`.
    UnknownRegister(String),
    /// A plain register name written by several threads.
    AmbiguousRegister {
        /// The register name.
        name: String,
        /// The threads that write it.
        threads: Vec<u32>,
    },
    /// An outcome names the same location or register twice.
    DuplicateOutcomeKey(String),
    /// A name used both as a location and as a register.
    NameClash(String),
    /// A thread has more instructions than the engine can number.
    TooManyInstructions,
}

impl fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ParseErrorKind::*;
        match self {
            Io(e) => write!(f, "cannot read the file: {e}"),
            UnknownDirective(w) => write!(
                f,
                "unknown directive `{w}` (expected name, line, init, thread, end, allow or forbid)"
            ),
            UnknownInstruction(w) => write!(f, "unknown instruction `{w}`"),
            WrongOperands { keyword, usage } => {
                write!(f, "wrong operands for `{keyword}`: expected `{usage}`")
            }
            BadInteger(s) => write!(f, "bad integer `{s}` (expected a signed 64-bit integer)"),
            BadName(s) => write!(f, "bad name `{s}` (expected [A-Za-z_][A-Za-z0-9_]*)"),
            BadThreadNumber(s) => write!(f, "bad thread number `{s}`"),
            DuplicateThread(n) => write!(f, "duplicate thread {n}"),
            DuplicateName => write!(f, "duplicate `name` directive"),
            MissingName => write!(f, "missing `name` directive"),
            DuplicateInit(l) => write!(f, "location `{l}` initialised twice"),
            HeaderAfterThread(w) => {
                write!(
                    f,
                    "`{w}` after the first `thread` (header directives come first)"
                )
            }
            InstructionOutsideThread(w) => {
                write!(f, "instruction `{w}` before any `thread`")
            }
            NoThreads => write!(f, "`end` before any `thread`"),
            MissingEnd => write!(f, "missing `end` after the threads"),
            DuplicateEnd => write!(f, "second `end`"),
            AfterEnd(w) => write!(f, "`{w}` after `end` (only allow/forbid may follow)"),
            OutcomeBeforeEnd => write!(f, "outcome before `end`"),
            NoExpectations => write!(f, "no `allow` or `forbid` line"),
            EmptyOutcome => write!(f, "empty outcome (name at least one location or register)"),
            BadItem(s) => write!(f, "bad item `{s}` (expected NAME=VAL or THREAD:REG=VAL)"),
            UnknownName(n) => write!(
                f,
                "outcome names `{n}`, which is neither a location nor a register of any thread"
            ),
            UnknownRegister(r) => write!(f, "outcome names unknown register `{r}`"),
            AmbiguousRegister { name, threads } => {
                let ts: Vec<String> = threads.iter().map(|t| format!("{t}:{name}")).collect();
                write!(
                    f,
                    "ambiguous register `{name}` (written by threads {}); write {}",
                    threads
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(", "),
                    ts.join(" or ")
                )
            }
            DuplicateOutcomeKey(k) => write!(f, "outcome names `{k}` twice"),
            NameClash(n) => write!(f, "`{n}` is used both as a location and as a register"),
            TooManyInstructions => write!(f, "too many instructions in one thread"),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.kind)
    }
}

impl std::error::Error for ParseError {}

impl Test {
    /// How an outcome names `key`: the location name, the plain register
    /// name when exactly one thread writes a register of that name, else
    /// `N:reg`.
    pub fn key_name(&self, key: Key) -> String {
        match key {
            Key::Loc(l) => self.locations[l].clone(),
            Key::Reg { thread, reg } => {
                let name = &self.threads[thread].registers[reg];
                if self.register_writers(name).len() == 1 {
                    name.clone()
                } else {
                    format!("{}:{name}", self.threads[thread].id)
                }
            }
        }
    }

    /// The indices of the threads that write a register called `name`.
    fn register_writers(&self, name: &str) -> Vec<usize> {
        (0..self.threads.len())
            .filter(|&t| self.threads[t].registers.iter().any(|r| r == name))
            .collect()
    }

    /// The source text of an instruction, normalised (`store x 1`).
    pub fn instr_text(&self, thread: usize, pc: usize) -> String {
        let t = &self.threads[thread];
        let loc = |l: usize| self.locations[l].as_str();
        let reg = |r: usize| t.registers[r].as_str();
        match t.instrs[pc] {
            Instr::Store { loc: l, val } => format!("store {} {val}", loc(l)),
            Instr::Load { reg: r, loc: l } => format!("load {} {}", reg(r), loc(l)),
            Instr::Clflush { loc: l } => format!("clflush {}", loc(l)),
            Instr::Clflushopt { loc: l } => format!("clflushopt {}", loc(l)),
            Instr::Clwb { loc: l } => format!("clwb {}", loc(l)),
            Instr::Sfence => "sfence".into(),
            Instr::Mfence => "mfence".into(),
            Instr::Cas {
                reg: Some(r),
                loc: l,
                old,
                new,
            } => format!("cas {} {} {old} {new}", reg(r), loc(l)),
            Instr::Cas {
                reg: None,
                loc: l,
                old,
                new,
            } => format!("cas {} {old} {new}", loc(l)),
            Instr::Xchg {
                reg: r,
                loc: l,
                val,
            } => format!("xchg {} {} {val}", reg(r), loc(l)),
            Instr::Faa {
                reg: r,
                loc: l,
                val,
            } => format!("faa {} {} {val}", reg(r), loc(l)),
            Instr::Ntstore { loc: l, val } => format!("ntstore {} {val}", loc(l)),
        }
    }

    /// An outcome as written in a file (`x=0 y=1 r1=1`).
    pub fn outcome_text(&self, outcome: &[(Key, Value)]) -> String {
        outcome
            .iter()
            .map(|&(k, v)| format!("{}={v}", self.key_name(k)))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Reads and parses a litmus file; `path` as given is used in messages.
pub fn parse_file(path: &Path) -> Result<Test, ParseError> {
    let file = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(src) => parse(&src, &file),
        Err(e) => Err(ParseError {
            file,
            line: 0,
            kind: ParseErrorKind::Io(e.to_string()),
        }),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    Header,
    Threads,
    Outcomes,
}

struct Parser<'a> {
    file: &'a str,
    line: usize,
    section: Section,
    name: Option<String>,
    locations: Vec<String>,
    loc_index: HashMap<String, usize>,
    /// Union-find parent of each location (the `line` directive).
    parent: Vec<usize>,
    init: HashMap<usize, Value>,
    threads: Vec<Thread>,
    /// Every register name, for the location/register clash check.
    register_names: HashSet<String>,
    expectations: Vec<Expectation>,
}

fn is_ident(s: &str) -> bool {
    let mut cs = s.chars();
    matches!(cs.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && cs.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The instruction keywords, in the order `LITMUS.md` lists them.
pub const INSTRUCTIONS: &[&str] = &[
    "store",
    "load",
    "clflush",
    "clflushopt",
    "clwb",
    "sfence",
    "mfence",
    "cas",
    "xchg",
    "faa",
    "ntstore",
];

impl<'a> Parser<'a> {
    fn err(&self, kind: ParseErrorKind) -> ParseError {
        ParseError {
            file: self.file.to_string(),
            line: self.line,
            kind,
        }
    }

    fn value(&self, s: &str) -> Result<Value, ParseError> {
        s.parse::<Value>()
            .map_err(|_| self.err(ParseErrorKind::BadInteger(s.to_string())))
    }

    /// The location called `name`, declaring it on first use.
    fn location(&mut self, name: &str) -> Result<usize, ParseError> {
        if !is_ident(name) {
            return Err(self.err(ParseErrorKind::BadName(name.to_string())));
        }
        if self.register_names.contains(name) {
            return Err(self.err(ParseErrorKind::NameClash(name.to_string())));
        }
        if let Some(&l) = self.loc_index.get(name) {
            return Ok(l);
        }
        let l = self.locations.len();
        self.locations.push(name.to_string());
        self.loc_index.insert(name.to_string(), l);
        self.parent.push(l);
        Ok(l)
    }

    /// Register `name` of the current thread, declaring it on first use.
    fn register(&mut self, name: &str) -> Result<usize, ParseError> {
        if !is_ident(name) {
            return Err(self.err(ParseErrorKind::BadName(name.to_string())));
        }
        if self.loc_index.contains_key(name) {
            return Err(self.err(ParseErrorKind::NameClash(name.to_string())));
        }
        self.register_names.insert(name.to_string());
        let t = self.threads.last_mut().expect("inside a thread");
        if let Some(r) = t.registers.iter().position(|r| r == name) {
            return Ok(r);
        }
        t.registers.push(name.to_string());
        Ok(t.registers.len() - 1)
    }

    fn root(&mut self, mut l: usize) -> usize {
        while self.parent[l] != l {
            self.parent[l] = self.parent[self.parent[l]];
            l = self.parent[l];
        }
        l
    }

    fn statement(&mut self, words: &[&str]) -> Result<(), ParseError> {
        let kw = words[0];
        let args = &words[1..];
        match kw {
            "name" | "line" | "init" => {
                match self.section {
                    Section::Header => {}
                    Section::Threads => {
                        return Err(self.err(ParseErrorKind::HeaderAfterThread(kw.into())))
                    }
                    Section::Outcomes => return Err(self.err(ParseErrorKind::AfterEnd(kw.into()))),
                }
                self.header(kw, args)
            }
            "thread" => {
                if self.section == Section::Outcomes {
                    return Err(self.err(ParseErrorKind::AfterEnd(kw.into())));
                }
                let [n] = args else {
                    return Err(self.err(ParseErrorKind::WrongOperands {
                        keyword: kw.into(),
                        usage: "thread N",
                    }));
                };
                let id: u32 = n
                    .parse()
                    .map_err(|_| self.err(ParseErrorKind::BadThreadNumber(n.to_string())))?;
                if self.threads.iter().any(|t| t.id == id) {
                    return Err(self.err(ParseErrorKind::DuplicateThread(id)));
                }
                self.threads.push(Thread {
                    id,
                    registers: vec![],
                    instrs: vec![],
                    source_lines: vec![],
                });
                self.section = Section::Threads;
                Ok(())
            }
            "end" => match self.section {
                Section::Header => Err(self.err(ParseErrorKind::NoThreads)),
                Section::Outcomes => Err(self.err(ParseErrorKind::DuplicateEnd)),
                Section::Threads => {
                    if !args.is_empty() {
                        return Err(self.err(ParseErrorKind::WrongOperands {
                            keyword: kw.into(),
                            usage: "end",
                        }));
                    }
                    self.section = Section::Outcomes;
                    Ok(())
                }
            },
            "allow" | "forbid" => {
                if self.section != Section::Outcomes {
                    return Err(self.err(ParseErrorKind::OutcomeBeforeEnd));
                }
                let polarity = if kw == "allow" {
                    Polarity::Allow
                } else {
                    Polarity::Forbid
                };
                self.outcome(polarity, args)
            }
            _ if INSTRUCTIONS.contains(&kw) => match self.section {
                Section::Header => {
                    Err(self.err(ParseErrorKind::InstructionOutsideThread(kw.into())))
                }
                Section::Outcomes => Err(self.err(ParseErrorKind::AfterEnd(kw.into()))),
                Section::Threads => self.instruction(kw, args),
            },
            _ => Err(self.err(if self.section == Section::Threads {
                ParseErrorKind::UnknownInstruction(kw.into())
            } else {
                ParseErrorKind::UnknownDirective(kw.into())
            })),
        }
    }

    fn header(&mut self, kw: &str, args: &[&str]) -> Result<(), ParseError> {
        match kw {
            "name" => {
                let [n] = args else {
                    return Err(self.err(ParseErrorKind::WrongOperands {
                        keyword: kw.into(),
                        usage: "name NAME",
                    }));
                };
                if self.name.is_some() {
                    return Err(self.err(ParseErrorKind::DuplicateName));
                }
                self.name = Some(n.to_string());
            }
            "line" => {
                if args.len() < 2 {
                    return Err(self.err(ParseErrorKind::WrongOperands {
                        keyword: kw.into(),
                        usage: "line LOC LOC...",
                    }));
                }
                let first = self.location(args[0])?;
                for a in &args[1..] {
                    let l = self.location(a)?;
                    let (ra, rb) = (self.root(first), self.root(l));
                    self.parent[rb] = ra;
                }
            }
            _ => {
                if args.is_empty() {
                    return Err(self.err(ParseErrorKind::WrongOperands {
                        keyword: kw.into(),
                        usage: "init LOC=VAL...",
                    }));
                }
                for item in args {
                    let Some((name, val)) = item.split_once('=') else {
                        return Err(self.err(ParseErrorKind::BadItem(item.to_string())));
                    };
                    let val = self.value(val)?;
                    let l = self.location(name)?;
                    if self.init.insert(l, val).is_some() {
                        return Err(self.err(ParseErrorKind::DuplicateInit(name.to_string())));
                    }
                }
            }
        }
        Ok(())
    }

    fn instruction(&mut self, kw: &str, args: &[&str]) -> Result<(), ParseError> {
        let wrong = |p: &Self, usage: &'static str| {
            p.err(ParseErrorKind::WrongOperands {
                keyword: kw.into(),
                usage,
            })
        };
        let instr = match (kw, args) {
            ("store", [l, v]) => Instr::Store {
                loc: self.location(l)?,
                val: self.value(v)?,
            },
            ("store", _) => return Err(wrong(self, "store LOC VAL")),
            ("ntstore", [l, v]) => Instr::Ntstore {
                loc: self.location(l)?,
                val: self.value(v)?,
            },
            ("ntstore", _) => return Err(wrong(self, "ntstore LOC VAL")),
            ("load", [r, l]) => Instr::Load {
                reg: self.register(r)?,
                loc: self.location(l)?,
            },
            ("load", _) => return Err(wrong(self, "load REG LOC")),
            ("clflush", [l]) => Instr::Clflush {
                loc: self.location(l)?,
            },
            ("clflush", _) => return Err(wrong(self, "clflush LOC")),
            ("clflushopt", [l]) => Instr::Clflushopt {
                loc: self.location(l)?,
            },
            ("clflushopt", _) => return Err(wrong(self, "clflushopt LOC")),
            ("clwb", [l]) => Instr::Clwb {
                loc: self.location(l)?,
            },
            ("clwb", _) => return Err(wrong(self, "clwb LOC")),
            ("sfence", []) => Instr::Sfence,
            ("sfence", _) => return Err(wrong(self, "sfence")),
            ("mfence", []) => Instr::Mfence,
            ("mfence", _) => return Err(wrong(self, "mfence")),
            ("cas", [l, o, n]) => Instr::Cas {
                reg: None,
                loc: self.location(l)?,
                old: self.value(o)?,
                new: self.value(n)?,
            },
            ("cas", [r, l, o, n]) => {
                // Values first: `cas x 0 1 2` must say "bad integer", not
                // declare `x` a register.
                let (old, new) = (self.value(o)?, self.value(n)?);
                Instr::Cas {
                    reg: Some(self.register(r)?),
                    loc: self.location(l)?,
                    old,
                    new,
                }
            }
            ("cas", _) => return Err(wrong(self, "cas [REG] LOC OLD NEW")),
            ("xchg", [r, l, v]) => Instr::Xchg {
                reg: self.register(r)?,
                loc: self.location(l)?,
                val: self.value(v)?,
            },
            ("xchg", _) => return Err(wrong(self, "xchg REG LOC VAL")),
            ("faa", [r, l, v]) => Instr::Faa {
                reg: self.register(r)?,
                loc: self.location(l)?,
                val: self.value(v)?,
            },
            ("faa", _) => return Err(wrong(self, "faa REG LOC VAL")),
            _ => unreachable!("only called with a keyword of INSTRUCTIONS"),
        };
        let line = self.line;
        let t = self.threads.last_mut().expect("inside a thread");
        if t.instrs.len() >= u32::MAX as usize {
            return Err(self.err(ParseErrorKind::TooManyInstructions));
        }
        t.instrs.push(instr);
        t.source_lines.push(line);
        Ok(())
    }

    fn outcome(&mut self, polarity: Polarity, args: &[&str]) -> Result<(), ParseError> {
        if args.is_empty() {
            return Err(self.err(ParseErrorKind::EmptyOutcome));
        }
        let mut outcome: Vec<(Key, Value)> = vec![];
        for item in args {
            let Some((name, val)) = item.split_once('=') else {
                return Err(self.err(ParseErrorKind::BadItem(item.to_string())));
            };
            let val = self.value(val)?;
            let key = self.key(name)?;
            if outcome.iter().any(|&(k, _)| k == key) {
                return Err(self.err(ParseErrorKind::DuplicateOutcomeKey(name.to_string())));
            }
            outcome.push((key, val));
        }
        self.expectations.push(Expectation {
            polarity,
            outcome,
            line: self.line,
        });
        Ok(())
    }

    /// Resolves an outcome name: `loc`, `reg` or `N:reg`.
    fn key(&self, name: &str) -> Result<Key, ParseError> {
        if let Some((t, r)) = name.split_once(':') {
            let id: u32 = t
                .parse()
                .map_err(|_| self.err(ParseErrorKind::BadItem(name.to_string())))?;
            if !is_ident(r) {
                return Err(self.err(ParseErrorKind::BadName(r.to_string())));
            }
            let unknown = || self.err(ParseErrorKind::UnknownRegister(name.to_string()));
            let thread = self
                .threads
                .iter()
                .position(|th| th.id == id)
                .ok_or_else(unknown)?;
            let reg = self.threads[thread]
                .registers
                .iter()
                .position(|x| x == r)
                .ok_or_else(unknown)?;
            return Ok(Key::Reg { thread, reg });
        }
        if !is_ident(name) {
            return Err(self.err(ParseErrorKind::BadName(name.to_string())));
        }
        if let Some(&l) = self.loc_index.get(name) {
            return Ok(Key::Loc(l));
        }
        let writers: Vec<(usize, usize)> = self
            .threads
            .iter()
            .enumerate()
            .filter_map(|(t, th)| th.registers.iter().position(|x| x == name).map(|r| (t, r)))
            .collect();
        match writers.as_slice() {
            [] => Err(self.err(ParseErrorKind::UnknownName(name.to_string()))),
            [(thread, reg)] => Ok(Key::Reg {
                thread: *thread,
                reg: *reg,
            }),
            many => Err(self.err(ParseErrorKind::AmbiguousRegister {
                name: name.to_string(),
                threads: many.iter().map(|&(t, _)| self.threads[t].id).collect(),
            })),
        }
    }
}

/// Parses the text of a litmus file; `file` is used in error messages.
pub fn parse(source: &str, file: &str) -> Result<Test, ParseError> {
    let mut p = Parser {
        file,
        line: 0,
        section: Section::Header,
        name: None,
        locations: vec![],
        loc_index: HashMap::new(),
        parent: vec![],
        init: HashMap::new(),
        threads: vec![],
        register_names: HashSet::new(),
        expectations: vec![],
    };
    let mut last_line = 0;
    for (i, raw) in source.lines().enumerate() {
        p.line = i + 1;
        last_line = i + 1;
        let text = raw.split('#').next().unwrap_or("");
        let words: Vec<&str> = text.split_whitespace().collect();
        if words.is_empty() {
            continue;
        }
        p.statement(&words)?;
    }
    // Errors about the whole file point at its last line.
    p.line = last_line.max(1);
    if p.section != Section::Outcomes {
        return Err(
            p.err(if p.threads.is_empty() && p.section == Section::Header {
                ParseErrorKind::NoThreads
            } else {
                ParseErrorKind::MissingEnd
            }),
        );
    }
    let Some(name) = p.name.take() else {
        p.line = 1;
        return Err(p.err(ParseErrorKind::MissingName));
    };
    if p.expectations.is_empty() {
        return Err(p.err(ParseErrorKind::NoExpectations));
    }
    // Number the lines in order of their first location.
    let n = p.locations.len();
    let mut lines: Vec<Vec<usize>> = vec![];
    let mut line_of_root: HashMap<usize, usize> = HashMap::new();
    let line_of = (0..n)
        .map(|l| {
            let r = p.root(l);
            let idx = *line_of_root.entry(r).or_insert_with(|| {
                lines.push(vec![]);
                lines.len() - 1
            });
            lines[idx].push(l);
            idx
        })
        .collect();
    let init = (0..n)
        .map(|l| p.init.get(&l).copied().unwrap_or(0))
        .collect();
    Ok(Test {
        name,
        file: file.to_string(),
        locations: p.locations,
        line_of,
        lines,
        init,
        threads: p.threads,
        expectations: p.expectations,
    })
}

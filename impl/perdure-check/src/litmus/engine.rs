//! The Px86 machine of `PX86.md` ("Operational reading") and its exhaustive
//! explorer with a crash at every point.
//!
//! A `Machine` is one state of the operational model: per thread its
//! program counter, registers, FIFO store buffer and the set of *pending*
//! `clflushopt`/`clwb`/`ntstore`s; per cache line a
//! [`perdure_pm::px86::LineHistory`] (the stores that became visible to the
//! line, and the mark) over a base snapshot. `Model::successors` lists
//! every machine step enabled in a state; each rule of `PX86.md` is quoted
//! next to the code that implements it. [`run`] explores every reachable
//! state once (a hash set of machines), and in every state — the initial
//! one, every intermediate one, the final ones — crashes: it enumerates with
//! [`perdure_pm::px86::CrashImages`] every persisted image the lines allow
//! (each line independently keeps a prefix of its sequence at least as long
//! as its mark) and records the outcome over the locations and registers the
//! test's expectations name.

use super::syntax::{Instr, Key, Polarity, Test, Value};
use perdure_pm::px86::{self, CrashImages, LineHistory, ThreadBuffer};
use std::collections::{BTreeMap, HashSet};
use std::hash::{Hash, Hasher};

/// A store in a line's sequence: (slot of the location in its line, value).
type Write = (u32, Value);

/// One cache line: the content it had when its last guaranteed-persisted
/// store was folded in (`base`, one value per location of the line), and
/// the stores that became visible since, with the mark.
///
/// After every flush or non-temporal store the guaranteed-persisted prefix
/// is folded into `base` ([`LineHistory::compact`]), so two executions that
/// differ only in what is already certainly persisted meet in one state.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Line {
    base: Vec<Value>,
    history: LineHistory<Write>,
}

impl Hash for Line {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.base.hash(h);
        self.history.writes().hash(h);
        self.history.mark().hash(h);
    }
}

impl Line {
    /// The value of `slot` after the first `keep` writes of the sequence.
    fn value_after(&self, slot: u32, keep: usize) -> Value {
        self.history.writes()[..keep]
            .iter()
            .rev()
            .find(|w| w.0 == slot)
            .map_or(self.base[slot as usize], |w| w.1)
    }

    /// Visible memory: every write of the sequence applied.
    fn visible_value(&self, slot: u32) -> Value {
        self.value_after(slot, self.history.writes().len())
    }

    fn compact(&mut self) {
        let base = &mut self.base;
        self.history.compact(|(slot, v)| base[slot as usize] = v);
    }
}

/// A thread's buffered entry and pending entry, over the test's locations
/// (and lines) and values; the rules are [`ThreadBuffer`]'s.
type Buffered = px86::Buffered<u32, Value>;
type Pending = px86::Pending<u32, Value>;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct ThreadState {
    /// The next instruction to execute.
    pc: u32,
    /// `None`: not written yet.
    regs: Vec<Option<Value>>,
    /// The store buffer and the pending write-backs and ntstores.
    tb: ThreadBuffer<u32, Value>,
}

/// One state of the operational model.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Machine {
    threads: Vec<ThreadState>,
    lines: Vec<Line>,
}

/// One machine step, for witnesses. `thread` indexes [`Test::threads`];
/// `pc` is the instruction concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The thread executes its next instruction; `read` is the value a load
    /// or locked RMW read.
    Execute {
        /// Thread index.
        thread: usize,
        /// Instruction index.
        pc: usize,
        /// The value read, for loads and RMWs.
        read: Option<Value>,
    },
    /// The head of the thread's store buffer leaves it: a store becomes
    /// visible, a `clflush` takes effect, an `sfence` completes.
    Drain {
        /// Thread index.
        thread: usize,
        /// Instruction index.
        pc: usize,
    },
    /// A pending `clflushopt`/`clwb` takes effect, or a pending `ntstore`
    /// becomes visible and persisted.
    TakeEffect {
        /// Thread index.
        thread: usize,
        /// Instruction index.
        pc: usize,
    },
}

impl Step {
    /// The step in words, e.g. ``T1: `store y 1` becomes visible``.
    pub fn describe(&self, test: &Test) -> String {
        let (thread, pc) = match *self {
            Step::Execute { thread, pc, .. }
            | Step::Drain { thread, pc }
            | Step::TakeEffect { thread, pc } => (thread, pc),
        };
        let instr = test.threads[thread].instrs[pc];
        let text = test.instr_text(thread, pc);
        let what = match *self {
            Step::Execute { read: Some(v), .. } => format!("executes `{text}`, reading {v}"),
            Step::Execute { read: None, .. } => match instr {
                Instr::Store { .. } | Instr::Clflush { .. } | Instr::Sfence => {
                    format!("executes `{text}` (into the store buffer)")
                }
                Instr::Clflushopt { .. } | Instr::Clwb { .. } | Instr::Ntstore { .. } => {
                    format!("executes `{text}` (pending)")
                }
                _ => format!("executes `{text}`"),
            },
            Step::Drain { .. } => match instr {
                Instr::Store { .. } => format!("`{text}` becomes visible"),
                Instr::Clflush { .. } => format!("`{text}` takes effect"),
                _ => format!("`{text}` completes"),
            },
            Step::TakeEffect { .. } => match instr {
                Instr::Ntstore { .. } => format!("`{text}` becomes visible and persisted"),
                _ => format!("`{text}` takes effect"),
            },
        };
        format!("T{}: {what}", test.threads[thread].id)
    }
}

/// The test compiled for the machine: where each location lives.
pub(crate) struct Model<'t> {
    test: &'t Test,
    /// Each location's index within its line.
    slot: Vec<u32>,
}

fn sat_u32(n: usize) -> u32 {
    u32::try_from(n).expect("the parser bounds indices to u32")
}

impl<'t> Model<'t> {
    pub(crate) fn new(test: &'t Test) -> Self {
        let mut slot = vec![0; test.locations.len()];
        for locs in &test.lines {
            for (i, &l) in locs.iter().enumerate() {
                slot[l] = sat_u32(i);
            }
        }
        Model { test, slot }
    }

    fn line_of(&self, loc: u32) -> u32 {
        sat_u32(self.test.line_of[loc as usize])
    }

    /// The initial state: every location holds its `init` value, which is
    /// also what every line persistently holds.
    pub(crate) fn initial(&self) -> Machine {
        Machine {
            threads: self
                .test
                .threads
                .iter()
                .map(|t| ThreadState {
                    pc: 0,
                    regs: vec![None; t.registers.len()],
                    tb: ThreadBuffer::new(),
                })
                .collect(),
            lines: self
                .test
                .lines
                .iter()
                .map(|locs| Line {
                    base: locs.iter().map(|&l| self.test.init[l]).collect(),
                    history: LineHistory::new(),
                })
                .collect(),
        }
    }

    fn visible(&self, m: &Machine, loc: u32) -> Value {
        m.lines[self.line_of(loc) as usize].visible_value(self.slot[loc as usize])
    }

    /// A store becomes visible: "When it becomes visible it is appended to
    /// the sequence of `line(x)`."
    fn make_visible(&self, m: &mut Machine, loc: u32, val: Value) {
        m.lines[self.line_of(loc) as usize]
            .history
            .visible((self.slot[loc as usize], val));
    }

    /// The value `load r x` reads in thread `t`.
    ///
    /// PX86.md: "`load r x` reads the newest own buffered store to `x`, else
    /// visible memory." A pending `ntstore` to `x` counts as an own buffered
    /// store (a thread always reads its own latest write; see the module
    /// docs, "Resolved ambiguities").
    fn load_value(&self, m: &Machine, t: usize, loc: u32) -> Value {
        m.threads[t]
            .tb
            .forward(loc)
            .unwrap_or_else(|| self.visible(m, loc))
    }

    /// Every step enabled in `m`, with the state it leads to.
    pub(crate) fn successors(&self, m: &Machine, out: &mut Vec<(Step, Machine)>) {
        for t in 0..m.threads.len() {
            self.execute(m, t, out);
            self.drain(m, t, out);
            self.take_effect(m, t, out);
        }
    }

    /// Thread `t` executes its next instruction, if the instruction may
    /// execute now.
    fn execute(&self, m: &Machine, t: usize, out: &mut Vec<(Step, Machine)>) {
        let ts = &m.threads[t];
        let pc = ts.pc as usize;
        let Some(&instr) = self.test.threads[t].instrs.get(pc) else {
            return;
        };
        // "`mfence` and locked RMWs (`cas`, `xchg`, `faa`) also drain the
        // store buffer", and a pending clflushopt/clwb takes effect "no
        // later than the thread's next `sfence`, `mfence` or locked RMW
        // completes", an ntstore "before the thread's next fence or locked
        // RMW completes": an mfence or RMW executes (and completes, at once)
        // only when the buffer is empty and nothing is pending.
        let drained = ts.tb.is_drained();
        let locked = matches!(
            instr,
            Instr::Mfence | Instr::Cas { .. } | Instr::Xchg { .. } | Instr::Faa { .. }
        );
        if locked && !drained {
            return;
        }
        let mut n = m.clone();
        let read = if locked {
            self.execute_locked(m, &mut n, t, instr)
        } else {
            self.issue(m, &mut n, t, instr)
        };
        n.threads[t].pc += 1;
        out.push((
            Step::Execute {
                thread: t,
                pc,
                read,
            },
            n,
        ));
    }

    /// [`Model::execute`] of an instruction that is not locked, by thread
    /// `t` of `m` into `n`: a store, flush or fence enters the store buffer
    /// or becomes pending, a load reads. Returns the value read.
    fn issue(&self, m: &Machine, n: &mut Machine, t: usize, instr: Instr) -> Option<Value> {
        let nt = &mut n.threads[t];
        let seq = nt.pc;
        match instr {
            // "`store x v` enters the thread's store buffer".
            Instr::Store { loc, val } => nt.tb.push(Buffered::Store {
                seq,
                loc: sat_u32(loc),
                val,
            }),
            // "`clflush x` is ordered like a store (FIFO with the
            // thread's stores)".
            Instr::Clflush { loc } => nt.tb.push(Buffered::Clflush {
                seq,
                line: self.line_of(sat_u32(loc)),
            }),
            // "`sfence` waits for the thread's older
            // `clflushopt`/`clwb`/non-temporal stores to take effect
            // before any younger store becomes visible": it enters the
            // FIFO, so no younger store or clflush leaves the buffer
            // before it; it leaves (completes) only when the older
            // pending flushes and ntstores have taken effect (`drain`).
            // Younger loads do not wait for it.
            Instr::Sfence => nt.tb.push(Buffered::Sfence { seq }),
            // "`clflushopt x` and `clwb x` (same semantics here)": both
            // become pending; `take_effect` says when they may act.
            Instr::Clflushopt { loc } | Instr::Clwb { loc } => nt.tb.push_pending(Pending::Flush {
                seq,
                line: self.line_of(sat_u32(loc)),
            }),
            // "`ntstore x v` (non-temporal) becomes visible and
            // persisted together, at some point before the thread's next
            // fence or locked RMW completes": pending until then.
            Instr::Ntstore { loc, val } => nt.tb.push_pending(Pending::Nt {
                seq,
                loc: sat_u32(loc),
                val,
            }),
            Instr::Load { reg, loc } => {
                let v = self.load_value(m, t, sat_u32(loc));
                nt.regs[reg] = Some(v);
                return Some(v);
            }
            // Locked: `execute_locked`.
            Instr::Mfence | Instr::Cas { .. } | Instr::Xchg { .. } | Instr::Faa { .. } => {}
        }
        None
    }

    /// [`Model::execute`] of an `mfence` or a locked RMW, by thread `t` of
    /// `m` into `n`, once its buffer is drained and nothing is pending.
    /// Returns the value read.
    fn execute_locked(
        &self,
        m: &Machine,
        n: &mut Machine,
        t: usize,
        instr: Instr,
    ) -> Option<Value> {
        // Locked RMWs: with the buffer drained they read visible memory and
        // make their write visible atomically, in one step.
        match instr {
            Instr::Cas { reg, loc, old, new } => {
                let loc = sat_u32(loc);
                let cur = self.visible(m, loc);
                let success = cur == old;
                if success {
                    self.make_visible(n, loc, new);
                }
                // A failed cas writes nothing (module docs, "Resolved
                // ambiguities").
                if let Some(r) = reg {
                    n.threads[t].regs[r] = Some(Value::from(success));
                }
                Some(cur)
            }
            Instr::Xchg { reg, loc, val } => {
                let loc = sat_u32(loc);
                let cur = self.visible(m, loc);
                self.make_visible(n, loc, val);
                n.threads[t].regs[reg] = Some(cur);
                Some(cur)
            }
            Instr::Faa { reg, loc, val } => {
                let loc = sat_u32(loc);
                let cur = self.visible(m, loc);
                self.make_visible(n, loc, cur.wrapping_add(val));
                n.threads[t].regs[reg] = Some(cur);
                Some(cur)
            }
            _ => None,
        }
    }

    /// The head of thread `t`'s store buffer leaves it, if it may
    /// ([`ThreadBuffer::head_may_leave`]).
    fn drain(&self, m: &Machine, t: usize, out: &mut Vec<(Step, Machine)>) {
        let Some(head) = m.threads[t].tb.head_may_leave(|l| self.line_of(l)) else {
            return;
        };
        let mut n = m.clone();
        n.threads[t].tb.pop_head();
        match head {
            // "[a store] later becomes visible, in FIFO order (TSO). When it
            // becomes visible it is appended to the sequence of `line(x)`."
            Buffered::Store { loc, val, .. } => self.make_visible(&mut n, loc, val),
            // "When [clflush x] takes effect, the mark of `line(x)` is
            // raised to the current length of its sequence."
            Buffered::Clflush { line, .. } => {
                let l = &mut n.lines[line as usize];
                l.history.flush_takes_effect();
                l.compact();
            }
            // The sfence completes: the thread's older write-backs and
            // ntstores have taken effect.
            Buffered::Sfence { .. } => {}
        }
        out.push((
            Step::Drain {
                thread: t,
                pc: head.seq() as usize,
            },
            n,
        ));
    }

    /// A pending clflushopt/clwb/ntstore of thread `t` takes effect, for
    /// each one that may ([`ThreadBuffer::may_take_effect`]).
    fn take_effect(&self, m: &Machine, t: usize, out: &mut Vec<(Step, Machine)>) {
        let ts = &m.threads[t];
        for i in 0..ts.tb.pending().len() {
            if !ts.tb.may_take_effect(i, |l| self.line_of(l)) {
                continue;
            }
            let mut n = m.clone();
            let p = n.threads[t].tb.take_pending(i);
            let l = match p {
                // "When it takes effect, it raises the mark of `line(x)` as
                // `clflush` does."
                Pending::Flush { line, .. } => {
                    let l = &mut n.lines[line as usize];
                    l.history.flush_takes_effect();
                    l
                }
                Pending::Nt { loc, val, .. } => {
                    let l = &mut n.lines[self.line_of(loc) as usize];
                    l.history
                        .visible_and_persisted((self.slot[loc as usize], val));
                    l
                }
            };
            l.compact();
            out.push((
                Step::TakeEffect {
                    thread: t,
                    pc: p.seq() as usize,
                },
                n,
            ));
        }
    }
}

/// Bounds on one exploration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Stop (and report the exploration incomplete) after this many distinct
    /// machine states.
    pub max_states: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_states: 2_000_000,
        }
    }
}

/// What an exploration covered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Distinct machine states reached. Each is a crash point.
    pub states: u64,
    /// Machine steps taken (edges of the state graph, including those into
    /// states already seen).
    pub transitions: u64,
    /// Crash points evaluated (= `states` when complete).
    pub crash_points: u64,
    /// Sum over crash points of the number of persisted images Px86 allows
    /// there (over all lines; saturating).
    pub persisted_states: u128,
    /// Whether every reachable state was explored (false: `max_states` hit).
    pub complete: bool,
}

/// The verdict on one expectation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The expectation holds.
    Met,
    /// It does not (an `allow` never reached, or a `forbid` reached).
    NotMet,
    /// The exploration stopped early and did not reach the outcome, so an
    /// `allow` or `forbid` cannot be decided.
    Undecided,
}

/// A path to an outcome: the steps from the initial state, then the crash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Witness {
    /// The steps, described ([`Step::describe`]).
    pub steps: Vec<String>,
    /// The crash image: the persisted values and registers of the outcome.
    pub crash: String,
}

/// One expectation's verdict, with a witness when an outcome matched (the
/// reaching execution of an `allow`, or the counterexample to a `forbid`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Index into [`Test::expectations`].
    pub expectation: usize,
    /// Met, not met, or undecided.
    pub status: Status,
    /// An execution and crash yielding the outcome, if one was found.
    pub witness: Option<Witness>,
}

/// The result of exploring a test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// The locations and registers named by the expectations, in order of
    /// first mention: the coordinates of [`Report::outcomes`].
    pub keys: Vec<Key>,
    /// Every reachable outcome over `keys` (a register that was not written
    /// before the crash is `None`).
    pub outcomes: Vec<Vec<Option<Value>>>,
    /// One per expectation, in file order.
    pub verdicts: Vec<Verdict>,
    /// What was explored.
    pub stats: Stats,
}

impl Report {
    /// Whether every expectation is met.
    pub fn all_met(&self) -> bool {
        self.verdicts.iter().all(|v| v.status == Status::Met)
    }
}

/// Explores `test` with the default [`Limits`].
pub fn run(test: &Test) -> Report {
    run_with(test, Limits::default())
}

/// Where an outcome was first reached: the state and the crash image.
struct Found {
    state: u32,
    crash: String,
}

/// Explores every execution of `test` with a crash at every state and every
/// persisted image there; see the module docs.
pub fn run_with(test: &Test, limits: Limits) -> Report {
    let mut exploration = Exploration::new(test);
    exploration.explore(limits);
    let verdicts = exploration.verdicts();
    Report {
        keys: exploration.keys,
        outcomes: exploration.outcomes.into_keys().collect(),
        verdicts,
        stats: exploration.stats,
    }
}

/// One run of [`run_with`]: the state graph explored so far and the crash
/// outcomes reached in it.
struct Exploration<'t> {
    test: &'t Test,
    model: Model<'t>,
    /// The locations and registers the expectations name, in order of first
    /// mention.
    keys: Vec<Key>,
    /// The lines a crash outcome depends on (those of the located keys),
    /// sorted.
    rel_lines: Vec<usize>,
    stats: Stats,
    outcomes: BTreeMap<Vec<Option<Value>>, Found>,
    /// Crash outcomes depend only on the relevant lines and registers: the
    /// projections already evaluated.
    evaluated: HashSet<(Vec<Line>, Vec<Option<Value>>)>,
    /// Per state (by number): its parent and the step from it.
    parents: Vec<(u32, Option<Step>)>,
}

impl<'t> Exploration<'t> {
    /// The setup phase: the keys of the expectations and the lines they
    /// live on; nothing explored yet.
    fn new(test: &'t Test) -> Exploration<'t> {
        let mut keys: Vec<Key> = vec![];
        for e in &test.expectations {
            for &(k, _) in &e.outcome {
                if !keys.contains(&k) {
                    keys.push(k);
                }
            }
        }
        let mut rel_lines: Vec<usize> = keys
            .iter()
            .filter_map(|k| match *k {
                Key::Loc(l) => Some(test.line_of[l]),
                Key::Reg { .. } => None,
            })
            .collect();
        rel_lines.sort_unstable();
        rel_lines.dedup();
        Exploration {
            test,
            model: Model::new(test),
            keys,
            rel_lines,
            stats: Stats {
                complete: true,
                ..Stats::default()
            },
            outcomes: BTreeMap::new(),
            evaluated: HashSet::new(),
            parents: vec![(0, None)],
        }
    }

    /// The exploration phase: every reachable state once, depth first,
    /// crashing in each, until `limits` stops it.
    fn explore(&mut self, limits: Limits) {
        let init = self.model.initial();
        let mut visited: HashSet<Machine> = HashSet::new();
        visited.insert(init.clone());
        let mut stack = vec![(init, 0u32)];
        let mut succ = vec![];
        'explore: while let Some((m, idx)) = stack.pop() {
            self.crash_at(&m, idx);
            succ.clear();
            self.model.successors(&m, &mut succ);
            for (step, n) in succ.drain(..) {
                self.stats.transitions += 1;
                if visited.contains(&n) {
                    continue;
                }
                if visited.len() >= limits.max_states {
                    self.stats.complete = false;
                    break 'explore;
                }
                visited.insert(n.clone());
                self.parents.push((idx, Some(step)));
                stack.push((n, sat_u32(self.parents.len() - 1)));
            }
        }
        self.stats.states = visited.len() as u64;
    }

    /// The crash phase, in state `m` (number `idx`): counts the persisted
    /// images Px86 allows there and records the outcome of each, once per
    /// projection of `m` onto the relevant lines and registers.
    fn crash_at(&mut self, m: &Machine, idx: u32) {
        self.stats.crash_points += 1;
        self.stats.persisted_states = self.stats.persisted_states.saturating_add(
            m.lines
                .iter()
                .map(|l| {
                    let r = l.history.persistable();
                    (r.end() + 1 - r.start()) as u128
                })
                .fold(1u128, u128::saturating_mul),
        );
        let regs: Vec<Option<Value>> = self
            .keys
            .iter()
            .filter_map(|k| match *k {
                Key::Reg { thread, reg } => Some(m.threads[thread].regs[reg]),
                Key::Loc(_) => None,
            })
            .collect();
        let lines: Vec<Line> = self.rel_lines.iter().map(|&l| m.lines[l].clone()).collect();
        if self.evaluated.contains(&(lines.clone(), regs.clone())) {
            return;
        }
        let ranges = lines.iter().map(|l| l.history.persistable()).collect();
        // Exhaustive: the limit is never below the total.
        for image in CrashImages::new(ranges, u64::MAX, 0) {
            let outcome = self.outcome(m, &lines, &image);
            let (test, keys) = (self.test, &self.keys);
            self.outcomes.entry(outcome).or_insert_with_key(|o| Found {
                state: idx,
                crash: describe_crash(test, keys, o),
            });
        }
        self.evaluated.insert((lines, regs));
    }

    /// The outcome over the keys of a crash in `m` whose image keeps
    /// `image[i]` stores of relevant line `lines[i]`.
    fn outcome(&self, m: &Machine, lines: &[Line], image: &[usize]) -> Vec<Option<Value>> {
        self.keys
            .iter()
            .map(|k| match *k {
                Key::Loc(l) => {
                    let li = self
                        .rel_lines
                        .binary_search(&self.test.line_of[l])
                        .expect("relevant line");
                    Some(lines[li].value_after(self.model.slot[l], image[li]))
                }
                Key::Reg { thread, reg } => m.threads[thread].regs[reg],
            })
            .collect()
    }

    /// The verdict phase: each expectation against the outcomes reached,
    /// with the path to a matching one as its witness.
    fn verdicts(&self) -> Vec<Verdict> {
        self.test
            .expectations
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let matching = self.outcomes.iter().find(|(o, _)| {
                    e.outcome.iter().all(|&(k, v)| {
                        let at = self
                            .keys
                            .iter()
                            .position(|&x| x == k)
                            .expect("key collected");
                        o[at] == Some(v)
                    })
                });
                let witness = matching.map(|(_, f)| Witness {
                    steps: self.path(f.state),
                    crash: f.crash.clone(),
                });
                let status = match (e.polarity, witness.is_some(), self.stats.complete) {
                    (Polarity::Allow, true, _) | (Polarity::Forbid, false, true) => Status::Met,
                    (Polarity::Allow, false, true) | (Polarity::Forbid, true, _) => Status::NotMet,
                    (_, false, false) => Status::Undecided,
                };
                Verdict {
                    expectation: i,
                    status,
                    witness,
                }
            })
            .collect()
    }

    /// The steps from the initial state to state `s`, described.
    fn path(&self, mut s: u32) -> Vec<String> {
        let mut steps = vec![];
        while let (p, Some(step)) = self.parents[s as usize] {
            steps.push(step.describe(self.test));
            s = p;
        }
        steps.reverse();
        steps
    }
}

/// `crash; persisted x=0 y=1; registers r1=1` for an outcome over `keys`.
fn describe_crash(test: &Test, keys: &[Key], outcome: &[Option<Value>]) -> String {
    let mut locs = vec![];
    let mut regs = vec![];
    for (k, v) in keys.iter().zip(outcome) {
        let v = v.map_or("_".to_string(), |v| v.to_string());
        match k {
            Key::Loc(_) => locs.push(format!("{}={v}", test.key_name(*k))),
            Key::Reg { .. } => regs.push(format!("{}={v}", test.key_name(*k))),
        }
    }
    let mut s = "crash".to_string();
    if !locs.is_empty() {
        s += &format!("; persisted {}", locs.join(" "));
    }
    if !regs.is_empty() {
        s += &format!("; registers {}", regs.join(" "));
    }
    s
}

/// An outcome over `keys` as text: `x=0 y=1 r1=_` (`_`: not written).
pub fn outcome_text(test: &Test, keys: &[Key], outcome: &[Option<Value>]) -> String {
    keys.iter()
        .zip(outcome)
        .map(|(k, v)| {
            format!(
                "{}={}",
                test.key_name(*k),
                v.map_or("_".to_string(), |v| v.to_string())
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

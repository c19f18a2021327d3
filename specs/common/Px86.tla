-------------------------------- MODULE Px86 --------------------------------
(***************************************************************************)
(* The Px86 persistency model of PX86.md ("Operational reading"), line-    *)
(* granular, with full x86-TSO store buffers: the model the litmus engine  *)
(* `perdure litmus` implements (impl/perdure-check/src/litmus/engine.rs),  *)
(* written independently so the two can be cross-checked                   *)
(* (impl/perdure-check/tests/suite/tla_litmus_crosscheck.rs). After Raad,        *)
(* Wickerson, Neiger and Vafeiadis (POPL 2020), with clwb and non-temporal *)
(* stores after Raad, Maranget and Vafeiadis (POPL 2022).                  *)
(*                                                                         *)
(* Parameters: a program (per thread, a tuple of instruction records built *)
(* with Store, Load, Clflush, Clflushopt, Clwb, Sfence, Mfence, Cas, Xchg, *)
(* Faa, NtStore below), the cache line of each location, and the initial   *)
(* (and initially persisted) memory. A litmus test is a module that        *)
(* EXTENDS Px86 and gives the three constants in its cfg (see              *)
(* Px86_MP_clflush.tla); LitmusOutcome / NeverPersisted state its allow    *)
(* and forbid lines.                                                       *)
(*                                                                         *)
(* State (PX86.md: "a FIFO store buffer per thread (x86-TSO), the visible  *)
(* memory, and for each 64-byte cache line the sequence of stores that     *)
(* became visible to it, plus a mark"):                                    *)
(*   buf[t]   the store buffer, oldest first: the program indices of the   *)
(*            thread's executed store, clflush and sfence instructions     *)
(*            that have not left it                                        *)
(*   pend[t]  executed clflushopt/clwb/ntstore instructions that have not  *)
(*            taken effect yet (program indices: program order is index    *)
(*            order, so "older" is "smaller")                              *)
(*   lseq[l]  the stores that became visible to line l, in order, as       *)
(*            <<location, value>>; visible memory is InitMem updated by    *)
(*            every line's whole sequence                                  *)
(*   mark[l]  "the length of that sequence that is guaranteed persisted"   *)
(*   regs[t]  registers: <<>> not yet written, <<v>> holding v             *)
(*   crashed, image: the Crash action's persisted memory                   *)
(*                                                                         *)
(* A crash may happen in every state (the initial one, every intermediate *)
(* one, and the final ones, with or without buffered stores left); Crash   *)
(* picks any image PersistedStates allows and stops the machine.           *)
(*                                                                         *)
(* Ambiguities of PX86.md, resolved as the Rust engine's module docs       *)
(* resolve them (so that the cross-check compares the same model):         *)
(*  - "Younger stores (to other lines) may become visible before it        *)
(*    [clflushopt/clwb] takes effect": a younger store of the thread to    *)
(*    the SAME line may not (DrainStore).                                  *)
(*  - ntstore has only an upper bound: it may take effect before older     *)
(*    buffered stores to other locations become visible; older stores and *)
(*    ntstores to the same location go first, a younger store to the       *)
(*    location does not overtake it (coherence), and a younger sfence      *)
(*    orders it (TakeEffectNt, DrainStore).                                *)
(*  - A load reads a pending ntstore of its own thread like a buffered     *)
(*    store (LoadValue).                                                   *)
(*  - A failed cas is a locked read: it drains like any locked RMW, writes *)
(*    nothing, and sets its register to 0 (ExecRmw).                       *)
(*  - A locked RMW's write becomes visible at once but is not persisted by *)
(*    it: only a flush or a later ntstore to the line raises the mark.     *)
(*  - "ntstore x v becomes visible and persisted together": the mark rises *)
(*    to the new length of the line's sequence, so the older stores of the *)
(*    line are persisted with it (a line persists a prefix).               *)
(*  - Registers in an outcome are their value at the crash (the latest     *)
(*    write); one not yet written matches no reg=val.                      *)
(*  - A clflush has no ordering with the thread's pending clflushopt/clwb/ *)
(*    ntstores (PX86.md gives none; an sfence or mfence orders them).       *)
(*                                                                         *)
(* Not covered: lfence, string operations, memory types other than         *)
(* write-back, accesses wider than one location (a location is an          *)
(* indivisible word: a 16-byte store is two stores), and reorderings that  *)
(* are unobservable in TSO. Loads and RMWs take effect when they execute   *)
(* and threads execute in program order, so "after all older loads and    *)
(* RMWs" holds by construction.                                            *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS
    Program,  \* [Threads -> Seq(Instr)]: the instructions of each thread
    LineOf,   \* [Locs -> line ids]: the cache line of each location
    InitMem   \* [Locs -> Int]: the initial and initially persisted memory

Threads == DOMAIN Program
Locs == DOMAIN LineOf
Lines == {LineOf[x] : x \in Locs}

-----------------------------------------------------------------------------
(* Instructions (PX86.md, litmus format: "Instructions: ...").             *)

NoReg == "_"   \* a cas without a result register

Store(x, v)         == [op |-> "store", loc |-> x, val |-> v]
Load(r, x)          == [op |-> "load", reg |-> r, loc |-> x]
Clflush(x)          == [op |-> "clflush", loc |-> x]
Clflushopt(x)       == [op |-> "clflushopt", loc |-> x]
Clwb(x)             == [op |-> "clwb", loc |-> x]
Sfence              == [op |-> "sfence"]
Mfence              == [op |-> "mfence"]
Cas(r, x, old, new) == [op |-> "cas", reg |-> r, loc |-> x, old |-> old, new |-> new]
Xchg(r, x, v)       == [op |-> "xchg", reg |-> r, loc |-> x, val |-> v]
Faa(r, x, v)        == [op |-> "faa", reg |-> r, loc |-> x, val |-> v]
NtStore(x, v)       == [op |-> "ntstore", loc |-> x, val |-> v]

BufferedOps == {"store", "clflush", "sfence"}        \* enter the store buffer
PendingOps  == {"clflushopt", "clwb", "ntstore"}     \* become pending
FlushOptOps == {"clflushopt", "clwb"}                \* "same semantics here"
LockedOps   == {"mfence", "cas", "xchg", "faa"}      \* drain before they execute
RmwOps      == {"cas", "xchg", "faa"}
Ops == BufferedOps \cup PendingOps \cup LockedOps \cup {"load"}

Ins(t, i) == Program[t][i]
Idx(t) == 1 .. Len(Program[t])
\* The line an instruction's location lives on.
LineAt(t, i) == LineOf[Ins(t, i).loc]

\* The registers of thread t.
Regs(t) == {Ins(t, i).reg : i \in {j \in Idx(t) : "reg" \in DOMAIN Ins(t, j)}} \ {NoReg}

\* A bound on any line's sequence (every instruction appends at most once).
MaxSeq == Cardinality(UNION {{<<t, i>> : i \in Idx(t)} : t \in Threads})

ProgramOK ==
    /\ \A t \in Threads : \A i \in Idx(t) :
          /\ Ins(t, i).op \in Ops
          /\ "loc" \in DOMAIN Ins(t, i) => Ins(t, i).loc \in Locs
    /\ InitMem \in [Locs -> Int]
ASSUME ProgramOK

-----------------------------------------------------------------------------
VARIABLES pc, buf, pend, regs, lseq, mark, crashed, image

vars == <<pc, buf, pend, regs, lseq, mark, crashed, image>>

LOCAL Range(s) == {s[i] : i \in DOMAIN s}
LOCAL Max(S) == CHOOSE m \in S : \A n \in S : n <= m

TypeOK ==
    /\ pc \in [Threads -> Nat] /\ \A t \in Threads : pc[t] \in 1 .. Len(Program[t]) + 1
    /\ \A t \in Threads :
          /\ buf[t] \in Seq(Idx(t)) /\ \A j \in Range(buf[t]) : Ins(t, j).op \in BufferedOps
          /\ pend[t] \subseteq Idx(t) /\ \A j \in pend[t] : Ins(t, j).op \in PendingOps
          /\ DOMAIN regs[t] = Regs(t)
          /\ \A r \in Regs(t) : regs[t][r] = <<>> \/ (Len(regs[t][r]) = 1 /\ regs[t][r][1] \in Int)
    /\ DOMAIN lseq = Lines /\ DOMAIN mark = Lines
    /\ \A l \in Lines :
          /\ \A k \in DOMAIN lseq[l] : lseq[l][k][1] \in Locs /\ LineOf[lseq[l][k][1]] = l
          /\ mark[l] \in 0 .. Len(lseq[l])
    /\ crashed \in BOOLEAN
    /\ image \in [Locs -> Int]

-----------------------------------------------------------------------------
(* Memory.                                                                 *)

\* The value of location x after the first k stores of sequence s of its line.
ValueAfter(x, s, k) ==
    LET W == {i \in 1 .. k : s[i][1] = x}
    IN IF W = {} THEN InitMem[x] ELSE s[Max(W)][2]

\* Visible memory: each line's whole sequence applied.
Visible(x) == ValueAfter(x, lseq[LineOf[x]], Len(lseq[LineOf[x]]))

\* PX86.md, Crash: "Each line's persisted content is the result of some
\* prefix of its sequence whose length is at least its mark; lines are
\* chosen independently."
Cuts == {k \in [Lines -> 0 .. MaxSeq] : \A l \in Lines : mark[l] <= k[l] /\ k[l] <= Len(lseq[l])}
ImageOf(k) == [x \in Locs |-> ValueAfter(x, lseq[LineOf[x]], k[LineOf[x]])]
PersistedStates == {ImageOf(k) : k \in Cuts}

\* "When it becomes visible it is appended to the sequence of line(x)."
AppendVisible(x, v) == lseq' = [lseq EXCEPT ![LineOf[x]] = Append(@, <<x, v>>)]

\* "the mark of line(x) is raised to the current length of its sequence"
RaiseMark(l) == mark' = [mark EXCEPT ![l] = Len(lseq[l])]

\* "load r x reads the newest own buffered store to x, else visible memory"
\* (a pending ntstore of the thread counts as buffered: see the header).
LoadValue(t, x) ==
    LET own == {j \in Range(buf[t]) \cup pend[t] : Ins(t, j).op \in {"store", "ntstore"} /\ Ins(t, j).loc = x}
    IN IF own = {} THEN Visible(x) ELSE Ins(t, Max(own)).val

SetReg(t, r, v) == regs' = [regs EXCEPT ![t][r] = <<v>>]

Drained(t) == buf[t] = <<>> /\ pend[t] = {}

-----------------------------------------------------------------------------
(* Executing the next instruction of thread t (program order).             *)

Next1(t) == Ins(t, pc[t])
Advance(t) == pc' = [pc EXCEPT ![t] = @ + 1]
Running(t) == ~crashed /\ pc[t] <= Len(Program[t])

\* "store x v enters the thread's store buffer"; "clflush x is ordered like
\* a store (FIFO with the thread's stores)"; an sfence enters the FIFO too,
\* so no younger store or clflush leaves the buffer before it ("sfence waits
\* for the thread's older clflushopt/clwb/non-temporal stores to take effect
\* before any younger store becomes visible"). Younger loads do not wait.
ExecBuffered(t) ==
    /\ Running(t) /\ Next1(t).op \in BufferedOps
    /\ buf' = [buf EXCEPT ![t] = Append(@, pc[t])]
    /\ Advance(t)
    /\ UNCHANGED <<pend, regs, lseq, mark, crashed, image>>

\* "clflushopt x and clwb x (same semantics here) take effect at some point
\* after ..."; "ntstore x v (non-temporal) becomes visible and persisted
\* together, at some point before the thread's next fence or locked RMW
\* completes": both are pending until TakeEffectFlush / TakeEffectNt.
ExecPending(t) ==
    /\ Running(t) /\ Next1(t).op \in PendingOps
    /\ pend' = [pend EXCEPT ![t] = @ \cup {pc[t]}]
    /\ Advance(t)
    /\ UNCHANGED <<buf, regs, lseq, mark, crashed, image>>

\* "load r x reads the newest own buffered store to x, else visible memory."
ExecLoad(t) ==
    /\ Running(t) /\ Next1(t).op = "load"
    /\ SetReg(t, Next1(t).reg, LoadValue(t, Next1(t).loc))
    /\ Advance(t)
    /\ UNCHANGED <<buf, pend, lseq, mark, crashed, image>>

\* "mfence and locked RMWs (cas, xchg, faa) also drain the store buffer",
\* and pending clflushopt/clwb take effect "no later than the thread's next
\* sfence, mfence or locked RMW completes", ntstores "before the thread's
\* next fence or locked RMW completes": an mfence executes (and completes at
\* once) only when the buffer is empty and nothing is pending.
ExecMfence(t) ==
    /\ Running(t) /\ Next1(t).op = "mfence" /\ Drained(t)
    /\ Advance(t)
    /\ UNCHANGED <<buf, pend, regs, lseq, mark, crashed, image>>

\* Locked RMWs: with the buffer drained and nothing pending (as mfence),
\* read visible memory and make their write visible in one step. A failed
\* cas writes nothing; its register gets 0 (success 1). The write is not
\* persisted by the RMW itself (no rule says so).
ExecRmw(t) ==
    /\ Running(t) /\ Next1(t).op \in RmwOps /\ Drained(t)
    /\ LET ins == Next1(t)
           x == ins.loc
           cur == Visible(x)
       IN CASE ins.op = "cas" ->
                 /\ IF cur = ins.old THEN AppendVisible(x, ins.new) ELSE UNCHANGED lseq
                 /\ IF ins.reg = NoReg THEN UNCHANGED regs
                    ELSE SetReg(t, ins.reg, IF cur = ins.old THEN 1 ELSE 0)
            [] ins.op = "xchg" -> AppendVisible(x, ins.val) /\ SetReg(t, ins.reg, cur)
            [] ins.op = "faa"  -> AppendVisible(x, cur + ins.val) /\ SetReg(t, ins.reg, cur)
    /\ Advance(t)
    /\ UNCHANGED <<buf, pend, mark, crashed, image>>

Execute(t) == ExecBuffered(t) \/ ExecPending(t) \/ ExecLoad(t) \/ ExecMfence(t) \/ ExecRmw(t)

-----------------------------------------------------------------------------
(* The head of thread t's store buffer leaves it (FIFO: TSO).              *)

Head1(t) == Head(buf[t])
Pop(t) == buf' = [buf EXCEPT ![t] = Tail(@)]
Draining(t) == ~crashed /\ buf[t] # <<>>

\* "[store x v] later becomes visible, in FIFO order (TSO). When it becomes
\* visible it is appended to the sequence of line(x)." Held back by an older
\* pending clflushopt/clwb of the same line ("Younger stores (to other lines)
\* may become visible before it takes effect": not to the same line) and by
\* an older pending ntstore to the same location (coherence).
DrainStore(t) ==
    /\ Draining(t)
    /\ LET i == Head1(t) IN
       /\ Ins(t, i).op = "store"
       /\ ~\E p \in pend[t] :
             /\ p < i
             /\ \/ Ins(t, p).op \in FlushOptOps /\ LineAt(t, p) = LineAt(t, i)
                \/ Ins(t, p).op = "ntstore" /\ Ins(t, p).loc = Ins(t, i).loc
       /\ AppendVisible(Ins(t, i).loc, Ins(t, i).val)
    /\ Pop(t)
    /\ UNCHANGED <<pc, pend, regs, mark, crashed, image>>

\* "When [clflush x] takes effect, the mark of line(x) is raised to the
\* current length of its sequence."
DrainClflush(t) ==
    /\ Draining(t)
    /\ Ins(t, Head1(t)).op = "clflush"
    /\ RaiseMark(LineAt(t, Head1(t)))
    /\ Pop(t)
    /\ UNCHANGED <<pc, pend, regs, lseq, crashed, image>>

\* "sfence waits for the thread's older clflushopt/clwb/non-temporal stores
\* to take effect before any younger store becomes visible": it completes
\* (leaves the buffer, letting younger entries go) once none is pending.
DrainSfence(t) ==
    /\ Draining(t)
    /\ Ins(t, Head1(t)).op = "sfence"
    /\ ~\E p \in pend[t] : p < Head1(t)
    /\ Pop(t)
    /\ UNCHANGED <<pc, pend, regs, lseq, mark, crashed, image>>

Drain(t) == DrainStore(t) \/ DrainClflush(t) \/ DrainSfence(t)

-----------------------------------------------------------------------------
(* A pending clflushopt/clwb/ntstore p of thread t takes effect.           *)

\* An older sfence still in the buffer has not completed ("all older
\* fences have taken effect"; "a younger sfence orders it").
OlderSfenceBuffered(t, p) == \E j \in Range(buf[t]) : j < p /\ Ins(t, j).op = "sfence"

\* "clflushopt x and clwb x take effect at some point after all older
\* stores of the thread to line(x), all older loads and RMWs of the thread,
\* and all older fences have taken effect ... When it takes effect, it
\* raises the mark of line(x) as clflush does." Older stores to the line:
\* plain ones still buffered, non-temporal ones still pending. (Loads and
\* RMWs took effect when they executed; an older mfence completed when it
\* executed.) The upper bound, "no later than the thread's next sfence,
\* mfence or locked RMW completes", is enforced by DrainSfence, ExecMfence
\* and ExecRmw.
TakeEffectFlush(t, p) ==
    /\ ~crashed /\ p \in pend[t] /\ Ins(t, p).op \in FlushOptOps
    /\ ~OlderSfenceBuffered(t, p)
    /\ ~\E j \in Range(buf[t]) : j < p /\ Ins(t, j).op = "store" /\ LineAt(t, j) = LineAt(t, p)
    /\ ~\E j \in pend[t] : j < p /\ Ins(t, j).op = "ntstore" /\ LineAt(t, j) = LineAt(t, p)
    /\ RaiseMark(LineAt(t, p))
    /\ pend' = [pend EXCEPT ![t] = @ \ {p}]
    /\ UNCHANGED <<pc, buf, regs, lseq, crashed, image>>

\* "ntstore x v (non-temporal) becomes visible and persisted together, at
\* some point before the thread's next fence or locked RMW completes; it is
\* not ordered with younger stores before that." Older stores and ntstores
\* to the same location go first (coherence); an older sfence orders it.
\* Visible and persisted together: appended, and the mark raised to the new
\* length.
TakeEffectNt(t, p) ==
    /\ ~crashed /\ p \in pend[t] /\ Ins(t, p).op = "ntstore"
    /\ ~OlderSfenceBuffered(t, p)
    /\ ~\E j \in Range(buf[t]) : j < p /\ Ins(t, j).op = "store" /\ Ins(t, j).loc = Ins(t, p).loc
    /\ ~\E j \in pend[t] : j < p /\ Ins(t, j).op = "ntstore" /\ Ins(t, j).loc = Ins(t, p).loc
    /\ LET l == LineAt(t, p) IN
       /\ AppendVisible(Ins(t, p).loc, Ins(t, p).val)
       /\ mark' = [mark EXCEPT ![l] = Len(lseq[l]) + 1]
    /\ pend' = [pend EXCEPT ![t] = @ \ {p}]
    /\ UNCHANGED <<pc, buf, regs, crashed, image>>

TakeEffect(t) == \E p \in pend[t] : TakeEffectFlush(t, p) \/ TakeEffectNt(t, p)

-----------------------------------------------------------------------------
(* Crash (PX86.md): "at any point. Each line's persisted content is the    *)
(* result of some prefix of its sequence whose length is at least its     *)
(* mark; lines are chosen independently. Registers, store buffers, caches *)
(* and all volatile (DRAM) memory are lost." The machine stops; the other *)
(* variables keep their values at the crash so that an outcome can name   *)
(* registers (their value when the crash happened) and TLC's traces show  *)
(* where the crash hit.                                                    *)
Crash ==
    /\ ~crashed
    /\ crashed' = TRUE
    /\ image' \in PersistedStates
    /\ UNCHANGED <<pc, buf, pend, regs, lseq, mark>>

Init ==
    /\ pc = [t \in Threads |-> 1]
    /\ buf = [t \in Threads |-> <<>>]
    /\ pend = [t \in Threads |-> {}]
    /\ regs = [t \in Threads |-> [r \in Regs(t) |-> <<>>]]
    /\ lseq = [l \in Lines |-> <<>>]
    /\ mark = [l \in Lines |-> 0]
    /\ crashed = FALSE
    /\ image = InitMem

Next == (\E t \in Threads : Execute(t) \/ Drain(t) \/ TakeEffect(t)) \/ Crash

\* Every behaviour ends, after at most 2 steps per instruction, in a crash
\* (or in a final state if none happens): check with CHECK_DEADLOCK FALSE.
Spec == Init /\ [][Next]_vars

\* The machine has run to completion (every buffer drained, nothing pending).
Finished == \A t \in Threads : pc[t] = Len(Program[t]) + 1 /\ Drained(t)

-----------------------------------------------------------------------------
(* Litmus outcomes (PX86.md, "Litmus file format"): "An outcome line lists *)
(* persisted location values and, optionally, register values. allow O:   *)
(* some execution and some crash point yield a persisted state matching   *)
(* every location in O, in which every register named in O was written    *)
(* before the crash with that value. forbid O means no execution and      *)
(* crash point does. Locations not named are unconstrained."              *)

\* O with persisted values locs (a function from some locations to values)
\* and register values rs (a set of <<thread, register, value>>).
LitmusOutcome(locs, rs) == [loc |-> locs, reg |-> rs]

\* The crash has happened and yielded outcome o.
CrashedInto(o) ==
    /\ crashed
    /\ \A x \in DOMAIN o.loc : image[x] = o.loc[x]
    /\ \A e \in o.reg : regs[e[1]][e[2]] = <<e[3]>>

\* Invariant form of "forbid O" (and, expected to FAIL, of "allow O").
NeverPersisted(o) == ~CrashedInto(o)

-----------------------------------------------------------------------------
(* The ordering rules of PX86.md restated as state predicates, as checks   *)
(* of the actions above (Px86MC.tla checks them on a program with every    *)
(* instruction).                                                           *)

\* A line persists a prefix of its sequence no shorter than its mark.
MarkWithinSequence == \A l \in Lines : mark[l] <= Len(lseq[l])

\* TSO: the store buffer holds executed instructions in program order.
BufferFIFO ==
    \A t \in Threads : \A i, j \in DOMAIN buf[t] :
        i < j => buf[t][i] < buf[t][j] /\ buf[t][j] < pc[t]

\* "mfence and locked RMWs also drain the store buffer" and complete the
\* older clflushopt/clwb/ntstores: nothing older than an executed mfence or
\* RMW is still buffered or pending.
LockedDrains ==
    \A t \in Threads : \A j \in Range(buf[t]) \cup pend[t] :
        ~\E m \in (j + 1) .. (pc[t] - 1) : Ins(t, m).op \in LockedOps

\* "sfence waits for the thread's older clflushopt/clwb/non-temporal stores
\* to take effect before any younger store becomes visible": once an sfence
\* has left the buffer, nothing older is pending.
SfenceCompletes ==
    \A t \in Threads : \A p \in pend[t] :
        ~\E s \in (p + 1) .. (pc[t] - 1) : Ins(t, s).op = "sfence" /\ s \notin Range(buf[t])

\* Visible memory is one of the images a crash may persist (every line
\* keeping its whole sequence), and so is the guaranteed part alone.
VisibleIsPersistable ==
    ~crashed => /\ [x \in Locs |-> Visible(x)] \in PersistedStates
                /\ ImageOf(mark) \in PersistedStates
=============================================================================

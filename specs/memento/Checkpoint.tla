------------------------------ MODULE Checkpoint ------------------------------
(***************************************************************************)
(* Memento's CHECKPOINT (seed 001, §2.2): a memento of two timestamped     *)
(* slots, each a value buffer and a timestamp.  CHECKPOINT(e, mmt):        *)
(*   step 1  compare the two timestamps: which slot is stale, which latest *)
(*   step 2  in recovery, if the latest timestamp exceeds LOCAL (the       *)
(*           timestamps of the thread's previous operations), return its   *)
(*           value (and LOCAL := it)                                        *)
(*   step 3  write the value to the stale slot's buffer                    *)
(*   step 4  flush the buffer if the memento does not fit in one line      *)
(*   step 5  write the current timestamp to the stale slot and flush it    *)
(* (kaist-cp/memento's checkpoint.rs; in a normal run LOCAL := the new      *)
(* timestamp; recovery mode is on after a crash until a checkpoint runs    *)
(* steps 3-5).                                                              *)
(*                                                                         *)
(* Each thread runs one composite (root) operation: Ops checkpoints of     *)
(* nondeterministic values, each with its own memento (Mementos = Ops), or *)
(* all with one memento (Mementos = 1): a loop of Ops iterations whose     *)
(* phi-node is checkpointed at the head of each iteration (§2.3,           *)
(* Requirement 3); the value then carries its iteration number, and a      *)
(* recovery that exits early at the loop head continues in the iteration  *)
(* the value names (a value of iteration j is returned "for iteration j"). *)
(* A                                                                       *)
(* thread crash or a full-system crash restarts the root operation in      *)
(* recovery mode with LOCAL = 0.                                            *)
(*                                                                         *)
(* A value is two words (w1, w2).  Layout "sameLine": w1, w2 and the       *)
(* timestamp of a slot share one cache line.  Layout "crossLine": w1 is on *)
(* one line, w2 and the timestamp on another (the memento exceeds a line). *)
(* Px86 (PX86.md): stores to one line persist in order, a crash keeps any  *)
(* prefix of each line's stores since its last flush, lines independently; *)
(* flush = clflush (synchronous).  FlushBuffer is step 4's flush (needed   *)
(* only for crossLine; the mutant removes it).                             *)
(*                                                                         *)
(* RecoveryFlush (the fix of Finding 5): step 2 flushes the latest slot   *)
(* before returning its value.  Without it, a thread crash between step   *)
(* 5's store and its flush lets the recovering thread return a value that  *)
(* is visible but not durable; a full crash then loses it and the          *)
(* checkpoint returns another value.                                       *)
(*                                                                         *)
(* Values carry a ghost tag: the checkpoint that chose them (so a value   *)
(* of an earlier loop iteration, or a mix of two, is recognisable).        *)
(*                                                                         *)
(* Property Stability: every value a checkpoint ever returns, before or    *)
(* after crashes, is one and the same, and it is a whole value chosen by  *)
(* that checkpoint (never torn, never another checkpoint's).  For a        *)
(* checkpoint that returned before a crash, re-execution therefore returns *)
(* exactly what it returned then.                                          *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC

CONSTANTS
    Threads,          \* model values, symmetric
    Vals,             \* values e may evaluate to
    Ops,              \* checkpoints per root operation
    Mementos,         \* checkpoint mementos per thread (< Ops: reuse in a loop)
    Layout,           \* "sameLine" | "crossLine"
    FlushBuffer,      \* step 4 (only meaningful for crossLine)
    RecoveryFlush,    \* FALSE: as written; TRUE: step 2 flushes the latest slot before
                      \* it returns its value (see README.md, Finding 5)
    MaxCrashes,       \* full-system crashes
    MaxThreadCrashes  \* thread crashes

ASSUME Layout \in {"sameLine", "crossLine"} /\ FlushBuffer \in BOOLEAN /\ RecoveryFlush \in BOOLEAN
       /\ Ops >= 1 /\ Mementos \in {1, Ops}
Loop == Mementos < Ops

OpIdx == 1 .. Ops
MmtOf(i) == ((i - 1) % Mementos) + 1

\* A value word: its payload and the checkpoint that chose it (for a loop, the
\* iteration: part of the checkpointed phi-node value; otherwise a ghost).
\* A timestamp is stored as Word(ts, 0).
NoVal == [v |-> 0, op |-> 0]
Word(v, i) == [v |-> v, op |-> i]

\* Lines.  sameLine: <<"slot", t, m, j>> holds w1, w2, ts.  crossLine:
\* <<"buf", t, m, j>> holds w1, <<"slot", t, m, j>> holds w2 and ts.
SlotLine(t, m, j) == <<"slot", t, m, j>>
BufLine(t, m, j) == IF Layout = "sameLine" THEN SlotLine(t, m, j) ELSE <<"buf", t, m, j>>
LineIds == {SlotLine(t, m, j) : t \in Threads, m \in 1 .. Mementos, j \in {0, 1}}
           \cup {BufLine(t, m, j) : t \in Threads, m \in 1 .. Mementos, j \in {0, 1}}
EmptyContent(ln) == IF ln[1] = "buf" THEN [w1 |-> NoVal]
                    ELSE IF Layout = "sameLine" THEN [w1 |-> NoVal, w2 |-> NoVal, ts |-> NoVal]
                    ELSE [w2 |-> NoVal, ts |-> NoVal]

RECURSIVE ApplyStores(_, _)
ApplyStores(c, s) == IF s = <<>> THEN c
                     ELSE ApplyStores([c EXCEPT ![Head(s).f] = Head(s).v], Tail(s))
VisC(m, ln) == ApplyStores(m[ln].p, m[ln].s)
StoreTo(m, ln, f, v) == [m EXCEPT ![ln].s = Append(@, [f |-> f, v |-> v])]
Flush(m, ln) == [m EXCEPT ![ln] = [p |-> VisC(m, ln), s |-> <<>>]]

VARIABLES
    pm,        \* [LineIds -> [p: content, s: Seq([f, v])]]
    local,     \* [Threads -> Nat] (DRAM): LOCAL
    clock,     \* rdtscp
    th,        \* [Threads -> [pc, i, rec, slot, val, ts]]
    crashes, tcrashes,
    chosen,    \* ghost [Threads -> [OpIdx -> SUBSET values]]: values each checkpoint chose
    ret        \* ghost [Threads -> [OpIdx -> SUBSET values]]: values each checkpoint returned

vars == <<pm, local, clock, th, crashes, tcrashes, chosen, ret>>

\* A slot as read from memory m: [val |-> <<w1, w2>>, ts].
Slot(m, t, k, j) == [val |-> <<VisC(m, BufLine(t, k, j)).w1, VisC(m, SlotLine(t, k, j)).w2>>,
                     ts |-> VisC(m, SlotLine(t, k, j)).ts.v]
\* Step 1: (stale, latest) as in checkpoint.rs: slot 1 is latest iff ts0 < ts1.
Latest(m, t, k) == IF Slot(m, t, k, 0).ts < Slot(m, t, k, 1).ts THEN 1 ELSE 0

Restart(rec) == [pc |-> "C1", i |-> 1, rec |-> rec, slot |-> 0, val |-> NoVal, ts |-> 0]

Init ==
    /\ pm = [ln \in LineIds |-> [p |-> EmptyContent(ln), s |-> <<>>]]
    /\ local = [t \in Threads |-> 0]
    /\ clock = 0
    /\ th = [t \in Threads |-> Restart(FALSE)]
    /\ crashes = 0 /\ tcrashes = 0
    /\ chosen = [t \in Threads |-> [i \in OpIdx |-> {}]]
    /\ ret = [t \in Threads |-> [i \in OpIdx |-> {}]]

\* Return value v from checkpoint i of t and move on.
Return(t, v) ==
    /\ ret' = [ret EXCEPT ![t][th[t].i] = @ \cup {v}]
    /\ th' = [th EXCEPT ![t] = IF th[t].i < Ops
                               THEN [Restart(th[t].rec) EXCEPT !.i = th[t].i + 1]
                               ELSE [Restart(FALSE) EXCEPT !.pc = "Done"]]

\* Steps 1-3: in recovery, steps 1-2 (return the latest value if its
\* timestamp exceeds LOCAL); otherwise evaluate e (a value of Vals),
\* rdtscp, and write the value to the stale slot's buffer (w1 then w2).
C1(t) ==
    /\ th[t].pc = "C1"
    /\ LET k == MmtOf(th[t].i)
           lat == Latest(pm, t, k)
           sl == Slot(pm, t, k, lat)
       IN IF th[t].rec /\ sl.ts > local[t]
          THEN \* step 2: exit early with the checkpointed value.  In a loop
               \* the value is the iteration's context (phi-node): the thread
               \* continues in the iteration it names.
               \* (A value that names no iteration is garbage returned here.)
               LET j == IF Loop /\ sl.val[1].op \in OpIdx THEN sl.val[1].op ELSE th[t].i
               IN /\ local' = [local EXCEPT ![t] = sl.ts]
                  /\ ret' = [ret EXCEPT ![t][j] = @ \cup {sl.val}]
                  /\ th' = [th EXCEPT ![t] = IF j < Ops
                                             THEN [Restart(th[t].rec) EXCEPT !.i = j + 1]
                                             ELSE [Restart(FALSE) EXCEPT !.pc = "Done"]]
                  /\ pm' = IF RecoveryFlush
                           THEN Flush(Flush(pm, BufLine(t, k, lat)), SlotLine(t, k, lat))
                           ELSE pm
                  /\ UNCHANGED <<clock, chosen>>
          ELSE \E v \in Vals :
               LET w == Word(v, th[t].i)
                   j == 1 - lat                         \* the stale slot
               IN /\ pm' = StoreTo(StoreTo(pm, BufLine(t, k, j), "w1", w), SlotLine(t, k, j), "w2", w)
                  /\ clock' = clock + 1
                  /\ chosen' = [chosen EXCEPT ![t][th[t].i] = @ \cup {<<w, w>>}]
                  /\ th' = [th EXCEPT ![t] = [@ EXCEPT !.rec = FALSE, !.slot = j, !.val = w,
                                                       !.ts = clock + 1,
                                                       !.pc = IF Layout = "crossLine" /\ FlushBuffer
                                                              THEN "C4" ELSE "C5"]]
                  /\ UNCHANGED <<local, ret>>
    /\ UNCHANGED <<crashes, tcrashes>>

\* Step 4: flush the stale buffer (crossLine: both of its lines).
C4(t) ==
    /\ th[t].pc = "C4"
    /\ LET k == MmtOf(th[t].i) IN
       pm' = Flush(Flush(pm, BufLine(t, k, th[t].slot)), SlotLine(t, k, th[t].slot))
    /\ th' = [th EXCEPT ![t].pc = "C5"]
    /\ UNCHANGED <<local, clock, crashes, tcrashes, chosen, ret>>

\* Step 5a: write the timestamp to the stale slot.
C5(t) ==
    /\ th[t].pc = "C5"
    /\ pm' = StoreTo(pm, SlotLine(t, MmtOf(th[t].i), th[t].slot), "ts", Word(th[t].ts, 0))
    /\ th' = [th EXCEPT ![t].pc = "C6"]
    /\ UNCHANGED <<local, clock, crashes, tcrashes, chosen, ret>>

\* Step 5b: flush it; LOCAL := ts; return the value.
C6(t) ==
    /\ th[t].pc = "C6"
    /\ pm' = Flush(pm, SlotLine(t, MmtOf(th[t].i), th[t].slot))
    /\ local' = [local EXCEPT ![t] = th[t].ts]
    /\ Return(t, <<th[t].val, th[t].val>>)
    /\ UNCHANGED <<clock, crashes, tcrashes, chosen>>

ThreadCrash(t) ==
    /\ tcrashes < MaxThreadCrashes /\ th[t].pc # "Done"
    /\ tcrashes' = tcrashes + 1
    /\ th' = [th EXCEPT ![t] = Restart(TRUE)]
    /\ local' = [local EXCEPT ![t] = 0]
    /\ UNCHANGED <<pm, clock, crashes, chosen, ret>>

\* A full crash: each line keeps a prefix of its unflushed stores; LOCAL is
\* lost; the clock is calibrated (it keeps counting, §2.5).
Dirty == {ln \in LineIds : pm[ln].s # <<>>}
MaxPending == LET ls == {Len(pm[ln].s) : ln \in LineIds} IN CHOOSE x \in ls : \A y \in ls : y <= x
Images == {c \in [Dirty -> 0 .. MaxPending] : \A ln \in Dirty : c[ln] <= Len(pm[ln].s)}
Crash ==
    /\ crashes < MaxCrashes /\ \E t \in Threads : th[t].pc # "Done"
    /\ crashes' = crashes + 1
    /\ \E c \in Images :
         pm' = [ln \in LineIds |->
                  IF ln \in Dirty THEN [p |-> ApplyStores(pm[ln].p, SubSeq(pm[ln].s, 1, c[ln])), s |-> <<>>]
                  ELSE pm[ln]]
    /\ th' = [t \in Threads |-> IF th[t].pc = "Done" THEN th[t] ELSE Restart(TRUE)]
    /\ local' = [t \in Threads |-> 0]
    /\ UNCHANGED <<clock, tcrashes, chosen, ret>>

Next ==
    \/ \E t \in Threads : C1(t) \/ C4(t) \/ C5(t) \/ C6(t) \/ ThreadCrash(t)
    \/ Crash

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
TypeOK ==
    /\ \A t \in Threads :
         /\ th[t].pc \in {"C1", "C4", "C5", "C6", "Done"}
         /\ th[t].i \in OpIdx /\ th[t].rec \in BOOLEAN /\ th[t].slot \in {0, 1}
         /\ local[t] \in 0 .. clock
    /\ \A ln \in LineIds : DOMAIN pm[ln].p = DOMAIN EmptyContent(ln)
    /\ crashes \in 0 .. MaxCrashes /\ tcrashes \in 0 .. MaxThreadCrashes

\* Every value checkpoint i ever returns is the same one, a whole value
\* that checkpoint i chose.
Stability ==
    \A t \in Threads : \A i \in OpIdx :
        /\ Cardinality(ret[t][i]) <= 1
        /\ ret[t][i] \subseteq chosen[t][i]

Symmetry == Permutations(Threads)
=============================================================================

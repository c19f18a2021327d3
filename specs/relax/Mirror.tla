------------------------------- MODULE Mirror -------------------------------
(***************************************************************************)
(* Mirror's persistent atomic (`patomic`), seed 002 Chapter 4, Algorithm   *)
(* 4.1 (compare_exchange_strong), with load, store and fetch_add built on  *)
(* it as the seed says ("As store and fetch_add may never fail, they keep *)
(* calling the CAS operation until they succeed"), full-system crashes at *)
(* any point with every crash image Px86 allows, and Mirror's eager        *)
(* recovery (copy NVMM to DRAM before any operation runs).                 *)
(*                                                                         *)
(* One field: a (value, sequence) pair in NVMM (`nvP`, `nvS`) and its      *)
(* replica in DRAM (`dram`).  Algorithm 4.1 touches one field per          *)
(* operation, so fields are independent and one field is the whole         *)
(* protocol; the allocator and the mirrored offsets are not modelled.      *)
(* Sequence numbers count modulo SeqMod (RelaxRecoverField needs that);    *)
(* Mirror's CI model takes SeqMod larger than the number of updates, so    *)
(* nothing wraps there.                                                    *)
(*                                                                         *)
(* The machine (../../../shared/design/PX86.md, as in specs/memento):      *)
(*  - The NVMM pair is one 16-byte aligned word in one cache line, kept    *)
(*    as [p, s]: `nvP` the pair the line's mark guarantees persisted,      *)
(*    `nvS` the pairs that became visible since, in order; the visible     *)
(*    pair is the last.  A 16-byte store persists atomically (the seed's   *)
(*    DWCAS on an aligned pair; PX86.md asks that this be stated).         *)
(*  - Every write is a DWCAS (a locked RMW: it drains the store buffer);  *)
(*    every other access is a load.  With no plain stores, TSO and         *)
(*    sequential consistency agree, so each access is one atomic step.     *)
(*  - FLUSH (clwb/clflushopt) records the pair visible when it is issued   *)
(*    (`pwb`); the next FENCE (sfence) persists the line up to that pair.  *)
(*    Until the fence a crash may keep any prefix, after it at least the   *)
(*    recorded pair: every image Px86 allows, whenever between issue and   *)
(*    fence the write-back really happens.  Line 41's FLUSH follows line   *)
(*    40's DWCAS with nothing in between, so it is merged into that step   *)
(*    (recording the pair right after the DWCAS is the earliest, weakest   *)
(*    choice); line 20's FLUSH likewise into the step that reads line 11.  *)
(*  - A crash keeps any prefix of `nvS` at least the mark (`nvP`); DRAM,   *)
(*    caches and registers are lost; recovery copies the persisted pair    *)
(*    into DRAM (one step with the crash: recovery is sequential, runs     *)
(*    before any operation and is idempotent, so a crash during it is the  *)
(*    same as a crash right after it).  Each thread's operation in flight  *)
(*    is cut off and the thread goes on with its next one.                 *)
(*                                                                         *)
(* Algorithm 4.1, line by line (the pc values are its line numbers, the   *)
(* listing numbered from `template` = 1, which matches the seed's text:    *)
(* "lines 5-16", "line 19", "line 29", "line 40", "line 44", "line 47"):   *)
(*  L5-L7   read rep_p: seq, val, seq again (three loads)                  *)
(*  L9-L11  read rep_v: seq, val, seq again; L11's step also takes the     *)
(*          branch of lines 14-35, which only compares registers           *)
(*  L21     FENCE of the helping case (line 19: rep_p_seq = rep_v_seq+1)   *)
(*  L24     DWCAS(this, rep_v, rep_p): help the ongoing write, continue    *)
(*  L40     DWCAS(rep_p_addr, before, after) (+ line 41's FLUSH); on       *)
(*          failure `before` receives rep_p's current content (C++         *)
(*          compare_exchange semantics, which lines 46-47 rely on)         *)
(*  L42     FENCE                                                          *)
(*  L43     lines 43-48: on success DWCAS(this, before, after) (line 44);  *)
(*          on failure continue if before.val = expected (line 46), else   *)
(*          DWCAS(this, rep_v, before) (line 47) and return false          *)
(*  Ret     line 49: return (the history's return event)                   *)
(* Line47 = "retry" is the fix of Finding M1 (README.md): lines 46-47     *)
(* become `continue` (the next iteration helps through line 19 or fails   *)
(* at line 32 on a consistent pair); "asWritten" is the seed's code.       *)
(* SplitReads = FALSE reads lines 5-7 and 9-11 atomically (the reduction   *)
(* is argued at L5atomic).                                                 *)
(* store/fetch_add: S0 loads `expected` from DRAM, then the CAS loop: a    *)
(* failure at line 32 adopts rep_p_val (line 33) and retries; a failure at *)
(* line 47 retries.  load (LD): one load of DRAM's value ("Mirror reads   *)
(* all data from the volatile replica").                                   *)
(*                                                                         *)
(* Correctness, checked by TLC:                                            *)
(*  - Mirror's invariants (seed Chapter 7): SeqWindow (NVMM seq equals     *)
(*    DRAM seq or exceeds it by one), NvmmChangesOnlyWhenEqual (an action  *)
(*    property: NVMM changes only when the seqs are equal),                *)
(*    EqualSeqsEqualValues; and DramDurable (DRAM only holds a persisted   *)
(*    pair or the one before it: no reader sees what a crash can lose).    *)
(*  - Refinement of DurableRegister (PROPERTY Refinement): the ghost       *)
(*    variables areg/aop/alast are the abstract register, changed at the   *)
(*    linearization points below, and AbsIsDram ties areg to DRAM's value *)
(*    in every state.  Linearization points: a load at its read (LD); an   *)
(*    update when DRAM catches up with the NVMM pair it wrote (line 44 of  *)
(*    its own, or a helper's line 24, 47, or RELAX's recoverField line 5), *)
(*    or at a crash that keeps that pair; a failed CAS at a moment its     *)
(*    `seen` flag records.  `nvOwner` (ghost) is the thread whose line-40  *)
(*    DWCAS wrote the NVMM pair DRAM has not caught up with yet.           *)
(*                                                                         *)
(* Actions a trace maps to (per thread t): Invoke(t, c), S0(t), LD(t),     *)
(* L5(t) L6(t) L7(t) L9(t) L10(t) L11(t) (or, with SplitReads = FALSE,    *)
(* L5atomic(t) L9atomic(t)), L21(t), L24(t), L40(t), L42(t), L43(t),       *)
(* Ret(t); and Crash.  The ghost variables are not in a trace: a trace     *)
(* validator computes them with the same actions.                          *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets, TLC

CONSTANTS
    Threads,          \* thread ids (model values; SYMMETRY)
    NoThread,         \* a model value: no thread
    Vals,             \* field values: 0 .. n-1 (fetch_add adds modulo n)
    InitVal,          \* the field's value before the first operation
    SeqMod,           \* sequence numbers count modulo SeqMod
    OpKinds,          \* the operations threads invoke: subset of {"cas", "load", "store", "faa"}
    OpsPerThread,     \* operations each thread invokes (a cut-off one counts)
    MaxCrashes,       \* full-system crashes
    FlushBeforeDram,  \* line 41's FLUSH (FALSE: the mutant that skips it)
    Line47,           \* "asWritten" | "retry" (the fix of Finding M1, README.md)
    SplitReads        \* lines 5-7 and 9-11 as three loads each (FALSE: one atomic read each)

ASSUME
    /\ Vals = 0 .. (Cardinality(Vals) - 1) /\ Cardinality(Vals) >= 2
    /\ InitVal \in Vals
    /\ SeqMod \in Nat /\ SeqMod >= 2
    /\ OpKinds \subseteq {"cas", "load", "store", "faa"}
    /\ OpsPerThread \in Nat /\ MaxCrashes \in Nat
    /\ FlushBeforeDram \in BOOLEAN
    /\ Line47 \in {"asWritten", "retry"}
    /\ SplitReads \in BOOLEAN

VARIABLES
    nvP,      \* the NVMM pair the line's mark guarantees persisted
    nvS,      \* the NVMM pairs that became visible since, oldest first
    dram,     \* the DRAM replica's pair
    pc,       \* [Threads -> step label]
    lc,       \* [Threads -> local registers]
    done,     \* [Threads -> operations invoked and finished or cut off]
    crashes,  \* crashes so far
    areg,     \* ghost: the abstract register (DurableRegister)
    aop,      \* ghost: the abstract operation of each thread
    alast,    \* ghost: the last result each thread returned
    nvOwner   \* ghost: the thread whose line-40 write DRAM has not caught up with

mvars == <<nvP, nvS, dram, pc, lc, done, crashes, areg, aop, alast, nvOwner>>

Seqs == 0 .. (SeqMod - 1)
Pairs == Vals \X Seqs
PVal(p) == p[1]
PSeq(p) == p[2]
NoPair == <<-1, -1>>
Inc(s) == (s + 1) % SeqMod
NVals == Cardinality(Vals)

Call(o, a, b) == [op |-> o, old |-> a, new |-> b]
NoCall == Call("none", 0, 0)
Calls ==
    (IF "cas" \in OpKinds THEN {Call("cas", q[1], q[2]) : q \in {r \in Vals \X Vals : r[1] # r[2]}} ELSE {})
    \cup (IF "load" \in OpKinds THEN {Call("load", 0, 0)} ELSE {})
    \cup (IF "store" \in OpKinds THEN {Call("store", 0, b) : b \in Vals} ELSE {})
    \cup (IF "faa" \in OpKinds THEN {Call("faa", 0, 1)} ELSE {})

Abs == INSTANCE DurableRegister

\* The value a store / fetch_add writes when the field holds e.
NewFor(c, e) == IF c.op = "faa" THEN (e + c.new) % NVals ELSE c.new

\* Registers: the call, the six reads of lines 5-11, expected, newVal,
\* before (line 38, or rep_p after a failed line 40), res (line 40), the
\* pair a FLUSH covers, the result to return.
LInit == [call |-> NoCall, pS |-> 0, pV |-> 0, pS2 |-> 0, vS |-> 0, vV |-> 0, vS2 |-> 0,
          exp |-> 0, nw |-> 0, bef |-> NoPair, res |-> FALSE, pwb |-> NoPair, ret |-> 0]
Start(c) == [LInit EXCEPT !.call = c, !.exp = c.old, !.nw = c.new]
\* `continue`: back to line 5; the reads are dead, cleared to keep states few.
Restart(l) == [l EXCEPT !.pS = 0, !.pV = 0, !.pS2 = 0, !.vS = 0, !.vV = 0, !.vS2 = 0,
                        !.bef = NoPair, !.res = FALSE, !.pwb = NoPair]

Entry(c) == CASE c.op = "load" -> "LD"
              [] c.op \in {"store", "faa"} -> "S0"
              [] OTHER -> "L5"

MirrorLabels == {"idle", "S0", "LD", "L5", "L6", "L7", "L9", "L10", "L11", "L21", "L24",
                 "L40", "L42", "L43", "Ret"}

Visible == IF nvS = <<>> THEN nvP ELSE nvS[Len(nvS)]

\* FENCE: the line persists up to the pair a FLUSH recorded, if it is still
\* pending (first occurrence: the weakest choice; pending pairs are distinct
\* in every run the CI models explore, see PendingDistinct).
Fence(p) ==
    IF \E k \in 1 .. Len(nvS) : nvS[k] = p
    THEN LET k == CHOOSE i \in 1 .. Len(nvS) :
                     nvS[i] = p /\ \A j \in 1 .. (i - 1) : nvS[j] # p
         IN /\ nvP' = nvS[k]
            /\ nvS' = SubSeq(nvS, k + 1, Len(nvS))
    ELSE UNCHANGED <<nvP, nvS>>

\* The result an update returns once it took effect.
UpdResult(t) == CASE lc[t].call.op = "cas" -> 1
                  [] lc[t].call.op = "faa" -> lc[t].exp
                  [] OTHER -> 0

\* DWCAS on the DRAM replica, and the linearization point it may be: if it
\* moves DRAM to the NVMM pair nvOwner's line 40 wrote, nvOwner's update
\* takes effect (ghost).  Any other change of DRAM leaves the abstract
\* register alone (AbsIsDram then reports it).
DramCas(expP, newP) ==
    IF dram = expP
    THEN /\ dram' = newP
         /\ IF /\ newP # dram /\ nvOwner # NoThread /\ newP = Visible
               /\ aop[nvOwner] # Abs!NoOp /\ ~aop[nvOwner].effect
            THEN /\ areg' = PVal(newP)
                 /\ aop' = [u \in Threads |->
                              IF u = nvOwner
                              THEN [aop[u] EXCEPT !.effect = TRUE, !.result = UpdResult(u)]
                              ELSE Abs!Seen(aop[u], PVal(newP))]
                 /\ nvOwner' = NoThread
            ELSE UNCHANGED <<areg, aop, nvOwner>>
    ELSE UNCHANGED <<dram, areg, aop, nvOwner>>

SetL(t, l) == lc' = [lc EXCEPT ![t] = l]
Goto(t, p) == pc' = [pc EXCEPT ![t] = p]

-----------------------------------------------------------------------------
(* The steps of one thread.                                                *)

Invoke(t, c) ==
    /\ pc[t] = "idle" /\ done[t] < OpsPerThread
    /\ Goto(t, Entry(c))
    /\ SetL(t, Start(c))
    /\ aop' = [aop EXCEPT ![t] = Abs!NewOp(c, areg)]
    /\ UNCHANGED <<nvP, nvS, dram, done, crashes, areg, alast, nvOwner>>

\* store / fetch_add: expected := load() (the CAS loop's first guess).
S0(t) ==
    /\ pc[t] = "S0"
    /\ SetL(t, [lc[t] EXCEPT !.exp = PVal(dram), !.nw = NewFor(lc[t].call, PVal(dram))])
    /\ Goto(t, "L5")
    /\ UNCHANGED <<nvP, nvS, dram, done, crashes, areg, aop, alast, nvOwner>>

\* load: read DRAM's value; the linearization point.
LD(t) ==
    /\ pc[t] = "LD"
    /\ SetL(t, [lc[t] EXCEPT !.ret = PVal(dram)])
    /\ aop' = [u \in Threads |->
                 IF u = t THEN [aop[t] EXCEPT !.effect = TRUE, !.result = PVal(dram)]
                 ELSE Abs!Seen(aop[u], areg)]
    /\ Goto(t, "Ret")
    /\ UNCHANGED <<nvP, nvS, dram, done, crashes, areg, alast, nvOwner>>

ReadStep(t, from, to, field, val) ==
    /\ pc[t] = from
    /\ SetL(t, [lc[t] EXCEPT ![field] = val])
    /\ Goto(t, to)
    /\ UNCHANGED <<nvP, nvS, dram, done, crashes, areg, aop, alast, nvOwner>>

L5(t) == ReadStep(t, "L5", "L6", "pS", PSeq(Visible))     \* rep_p_seq = rep_p_addr->seq
L6(t) == ReadStep(t, "L6", "L7", "pV", PVal(Visible))     \* rep_p_val = rep_p_addr->val
L7(t) == ReadStep(t, "L7", "L9", "pS2", PSeq(Visible))    \* rep_p_seq_again
L9(t) == ReadStep(t, "L9", "L10", "vS", PSeq(dram))       \* rep_v_seq = this->seq
L10(t) == ReadStep(t, "L10", "L11", "vV", PVal(dram))     \* rep_v_val = this->val

\* The branches of lines 14-35 on registers l (they only compare registers).
Branch(t, l) ==
    /\ CASE l.pS2 # l.pS \/ l.vS2 # l.vS ->          \* lines 14-16: inconsistent, continue
              Goto(t, "L5") /\ SetL(t, Restart(l))
         [] l.pS = Inc(l.vS) ->                       \* line 19: help; line 20 FLUSH
              Goto(t, "L21") /\ SetL(t, [l EXCEPT !.pwb = Visible])
         [] l.pS # l.vS ->                            \* line 29
              Goto(t, "L5") /\ SetL(t, Restart(l))
         [] l.pV # l.exp ->                           \* lines 32-34
              IF l.call.op = "cas"
              THEN Goto(t, "Ret") /\ SetL(t, [l EXCEPT !.ret = 0])
              ELSE \* store/fetch_add: line 33 updates expected, the loop retries
                   /\ Goto(t, "L5")
                   /\ SetL(t, Restart([l EXCEPT !.exp = l.pV, !.nw = NewFor(l.call, l.pV)]))
         [] OTHER ->                                  \* line 38: before = rep_p
              Goto(t, "L40") /\ SetL(t, [l EXCEPT !.bef = <<l.pV, l.pS>>])
    /\ UNCHANGED <<nvP, nvS, dram, done, crashes, areg, aop, alast, nvOwner>>

\* Line 11 (rep_v_seq_again = this->seq) and the branches.
L11(t) ==
    /\ pc[t] = "L11"
    /\ Branch(t, [lc[t] EXCEPT !.vS2 = PSeq(dram)])

\* With SplitReads = FALSE, lines 5-7 are one atomic read of rep_p and
\* lines 9-11 one of rep_v (then the branches).  Sound reduction: the split
\* reads end in a `continue` (lines 14-16) whenever a write falls between
\* two of them, unless the seq returns to the same number in between,
\* which takes SeqMod writes (more than any model here makes); every run
\* that passes the test reads what one atomic read at some moment between
\* would have read.
L5atomic(t) ==
    /\ pc[t] = "L5"
    /\ SetL(t, [lc[t] EXCEPT !.pS = PSeq(Visible), !.pV = PVal(Visible), !.pS2 = PSeq(Visible)])
    /\ Goto(t, "L9")
    /\ UNCHANGED <<nvP, nvS, dram, done, crashes, areg, aop, alast, nvOwner>>

L9atomic(t) ==
    /\ pc[t] = "L9"
    /\ Branch(t, [lc[t] EXCEPT !.vS = PSeq(dram), !.vV = PVal(dram), !.vS2 = PSeq(dram)])

\* Line 21: FENCE of the helping case.
L21(t) ==
    /\ pc[t] = "L21"
    /\ Fence(lc[t].pwb)
    /\ SetL(t, [lc[t] EXCEPT !.pwb = NoPair])
    /\ Goto(t, "L24")
    /\ UNCHANGED <<dram, done, crashes, areg, aop, alast, nvOwner>>

\* Lines 22-25: DWCAS(this, {rep_v_val, rep_v_seq}, {rep_p_val, rep_p_seq}); continue.
L24(t) ==
    LET l == lc[t] IN
    /\ pc[t] = "L24"
    /\ DramCas(<<l.vV, l.vS>>, <<l.pV, l.pS>>)
    /\ SetL(t, Restart(l))
    /\ Goto(t, "L5")
    /\ UNCHANGED <<nvP, nvS, done, crashes, alast>>

\* Line 40: res = DWCAS(rep_p_addr, before, {newVal, rep_p_seq+1}); line 41's
\* FLUSH records the pair visible right after it.
L40(t) ==
    LET l == lc[t]
        new == <<l.nw, Inc(l.pS)>>
        ok == Visible = l.bef
        vis == IF ok THEN new ELSE Visible
    IN
    /\ pc[t] = "L40"
    /\ IF ok THEN /\ nvS' = Append(nvS, new)
                  /\ nvOwner' = t
             ELSE UNCHANGED <<nvS, nvOwner>>
    /\ SetL(t, [l EXCEPT !.res = ok, !.bef = IF ok THEN l.bef ELSE Visible,
                         !.pwb = IF FlushBeforeDram THEN vis ELSE NoPair])
    /\ Goto(t, "L42")
    /\ UNCHANGED <<nvP, dram, done, crashes, areg, aop, alast>>

\* Line 42: FENCE.
L42(t) ==
    /\ pc[t] = "L42"
    /\ Fence(lc[t].pwb)
    /\ SetL(t, [lc[t] EXCEPT !.pwb = NoPair])
    /\ Goto(t, "L43")
    /\ UNCHANGED <<dram, done, crashes, areg, aop, alast, nvOwner>>

\* Lines 43-48.
L43(t) ==
    LET l == lc[t] IN
    /\ pc[t] = "L43"
    /\ IF l.res
       THEN \* line 44: DWCAS(this, before, after); line 49 returns true
            /\ DramCas(<<l.pV, l.pS>>, <<l.nw, Inc(l.pS)>>)
            /\ SetL(t, [l EXCEPT !.ret = UpdResult(t)])
            /\ Goto(t, "Ret")
       ELSE IF PVal(l.bef) = l.exp \/ Line47 = "retry"
            THEN \* line 46: continue (with the fix of Finding M1: always)
                 /\ SetL(t, Restart(l))
                 /\ Goto(t, "L5")
                 /\ UNCHANGED <<dram, areg, aop, nvOwner>>
            ELSE \* line 47: DWCAS(this, {rep_v_val, rep_v_seq}, before); return false
                 /\ DramCas(<<l.vV, l.vS>>, l.bef)
                 /\ IF l.call.op = "cas"
                    THEN SetL(t, [l EXCEPT !.ret = 0]) /\ Goto(t, "Ret")
                    ELSE SetL(t, Restart(l)) /\ Goto(t, "L5")   \* store/faa loop again
    /\ UNCHANGED <<nvP, nvS, done, crashes, alast>>

\* Line 49: the operation returns its result.
Ret(t) ==
    /\ pc[t] = "Ret"
    /\ alast' = [alast EXCEPT ![t] = <<lc[t].call, lc[t].ret>>]
    /\ aop' = [aop EXCEPT ![t] = Abs!NoOp]
    /\ done' = [done EXCEPT ![t] = done[t] + 1]
    /\ SetL(t, LInit)
    /\ Goto(t, "idle")
    /\ UNCHANGED <<nvP, nvS, dram, crashes, areg, nvOwner>>

Step(t) ==
    \/ S0(t) \/ LD(t)
    \/ IF SplitReads THEN L5(t) \/ L6(t) \/ L7(t) \/ L9(t) \/ L10(t) \/ L11(t)
                     ELSE L5atomic(t) \/ L9atomic(t)
    \/ L21(t) \/ L24(t) \/ L40(t) \/ L42(t) \/ L43(t) \/ Ret(t)

-----------------------------------------------------------------------------
(* Crash.                                                                  *)

\* The crash images: any prefix of the line's pending pairs survives.
Images == {nvP} \cup {nvS[k] : k \in 1 .. Len(nvS)}

\* Ghost at a crash that keeps image c: nvOwner's update took effect iff c
\* is the pair it wrote (still the visible one: nothing writes NVMM before
\* DRAM catches up with it).
CrashGhost(c) ==
    /\ areg' = IF /\ nvOwner # NoThread /\ c = Visible
                  /\ aop[nvOwner] # Abs!NoOp /\ ~aop[nvOwner].effect
               THEN PVal(c) ELSE areg
    /\ aop' = [t \in Threads |-> Abs!NoOp]
    /\ nvOwner' = NoThread

\* The threads after a crash: the operation in flight is cut off.
CrashThreads ==
    /\ pc' = [t \in Threads |-> "idle"]
    /\ lc' = [t \in Threads |-> LInit]
    /\ done' = [t \in Threads |-> IF pc[t] = "idle" THEN done[t] ELSE done[t] + 1]

\* A full-system crash, then Mirror's recovery: DRAM := the persisted pair.
Crash ==
    /\ crashes < MaxCrashes
    /\ crashes' = crashes + 1
    /\ \E c \in Images :
         /\ nvP' = c /\ nvS' = <<>>
         /\ dram' = c
         /\ CrashGhost(c)
    /\ CrashThreads
    /\ UNCHANGED alast

Init ==
    /\ nvP = <<InitVal, 0>> /\ nvS = <<>>
    /\ dram = <<InitVal, 0>>
    /\ pc = [t \in Threads |-> "idle"]
    /\ lc = [t \in Threads |-> LInit]
    /\ done = [t \in Threads |-> 0]
    /\ crashes = 0
    /\ Abs!AInit
    /\ nvOwner = NoThread

Next ==
    \/ \E t \in Threads : (\E c \in Calls : Invoke(t, c)) \/ Step(t)
    \/ Crash

Spec == Init /\ [][Next]_mvars

-----------------------------------------------------------------------------
(* Properties.                                                             *)

LocalsOK(l) ==
    /\ l.call \in Calls \cup {NoCall}
    /\ {l.pS, l.pS2, l.vS, l.vS2} \subseteq Seqs /\ {l.pV, l.vV, l.exp, l.nw} \subseteq Vals
    /\ l.bef \in Pairs \cup {NoPair} /\ l.pwb \in Pairs \cup {NoPair}
    /\ l.res \in BOOLEAN /\ l.ret \in Vals

TypeOK ==
    /\ nvP \in Pairs /\ nvS \in Seq(Pairs) /\ dram \in Pairs
    /\ \A t \in Threads : pc[t] \in MirrorLabels /\ LocalsOK(lc[t])
    /\ done \in [Threads -> 0 .. OpsPerThread]
    /\ crashes \in 0 .. MaxCrashes
    /\ areg \in Vals /\ nvOwner \in Threads \cup {NoThread}

\* Mirror's first invariant (Chapter 7): NVMM's seq equals DRAM's or
\* exceeds it by one.
SeqWindow == PSeq(Visible) = PSeq(dram) \/ PSeq(Visible) = Inc(PSeq(dram))

\* "Equal seqs imply equal values" (the sequence number names the content).
EqualSeqsEqualValues == PSeq(Visible) = PSeq(dram) => PVal(Visible) = PVal(dram)

\* Durability of what readers see: DRAM holds the persisted pair or the one
\* before it (NVMM persisted one step ahead), never a pair a crash can lose.
DramDurable == dram = nvP \/ PSeq(nvP) = Inc(PSeq(dram))

\* The abstract register is DRAM's value (the refinement mapping).
AbsIsDram == areg = PVal(dram)

\* Pending pairs of the line are distinct (the Fence above relies on it).
PendingDistinct == \A i, j \in 1 .. Len(nvS) : i # j => nvS[i] # nvS[j]

\* Mirror's second invariant (an action property): NVMM is modified only
\* when the two seqs are equal (crash steps excepted).
NvmmChangesOnlyWhenEqual ==
    [][(crashes' = crashes /\ Visible' # Visible) => PSeq(Visible) = PSeq(dram)]_mvars

\* Refinement of the atomic durable register.
Refinement == Abs!ASpec

\* Reachability witnesses (mutants/MirrorWitness*.cfg must break them, so
\* that the CI model is known to reach these cases): the helping case of
\* line 19 runs; a line-40 DWCAS fails and the thread goes on to line 47's
\* branch; a crash keeps a pair that no fence had persisted yet.
NeverHelps == \A t \in Threads : pc[t] # "L24"
NeverLine40Fails ==
    [][\A t \in Threads : ~(pc[t] = "L40" /\ pc'[t] = "L42" /\ ~lc'[t].res)]_mvars
NeverCrashKeepsUnfenced == [][~(crashes' > crashes /\ nvP' # nvP)]_mvars

Symmetry == Permutations(Threads)
=============================================================================

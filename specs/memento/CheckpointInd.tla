---------------------------- MODULE CheckpointInd ----------------------------
(***************************************************************************)
(* Inductiveness of CHECKPOINT's Stability (issue 20, §4).  Checkpoint.cfg *)
(* checks Stability on the states reachable within its bounds; this module *)
(* states it, strengthened, as an inductive invariant IndInv, and          *)
(* CheckpointInd.cfg checks                                                *)
(*     IndInv /\ [Next]_vars => IndInv'                                    *)
(* with TLC: INIT IndInit is every state of a bounded, type-correct domain *)
(* that satisfies IndInv (not only the reachable ones), NEXT is            *)
(* Checkpoint's own Next, the INVARIANT is IndInv, and the                *)
(* ACTION_CONSTRAINT IndDomain (on the source state only) stops TLC from   *)
(* expanding successors that leave the domain; TLC still checks IndInv on  *)
(* them (a plain CONSTRAINT would not: TLC checks no invariant on a state  *)
(* outside it).  A pass means no IndInv state of the domain has a          *)
(* successor violating IndInv.                                             *)
(*                                                                         *)
(* The layout checked is the CI model's: the loop (Mementos = 1) of Ops =  *)
(* 2 iterations, "sameLine", RecoveryFlush; full-system crashes only       *)
(* (MaxThreadCrashes = 0: a thread crash leaves a checkpoint's stores      *)
(* pending across a re-execution, which the strengthening below does not   *)
(* describe; Checkpoint.cfg and its deep models check that case by         *)
(* exploration only).  Bound: values {1, 2}, timestamps and the clock in    *)
(* 0..ClockMax.  Dead words (DeadWordsCleared: the stale slot's, which no  *)
(* step reads before overwriting them) are NoVal in the domain; a          *)
(* successor with other dead words is checked against IndInv, not expanded.*)
(*                                                                         *)
(* One thread.  Threads share nothing but the clock and the crash: another *)
(* thread's step only increases `clock` (C1), every clock constraint of    *)
(* IndInv is an upper bound that survives that, and a crash acts on each   *)
(* thread's lines, registers and LOCAL separately, as it does here.  The   *)
(* crash counter is 0 in the domain (a state whose crash is used up has    *)
(* the same successors minus Crash).                                       *)
(*                                                                         *)
(* The strengthening, per thread (X = the slot whose persisted timestamp   *)
(* is the latest, as step 1 computes it):                                  *)
(*  - only the slot the thread is writing has pending stores, exactly      *)
(*    step 3's two words (at C5) and then step 5's timestamp (at C6), the  *)
(*    stale one, with a timestamp above both slots';                       *)
(*  - timestamps are distinct unless both 0, and at most the clock;        *)
(*  - X, if its timestamp is not 0, holds a whole value chosen by the      *)
(*    checkpoint its tag names, and no later checkpoint has returned; that *)
(*    checkpoint has returned nothing else; with both timestamps 0 nothing *)
(*    has returned (what returned is durable);                             *)
(*  - a thread about to choose a value (C1 outside an early exit, C5, C6)  *)
(*    for checkpoint i: no checkpoint from i on has returned;              *)
(*  - LOCAL is 0 or X's timestamp (dead outside recovery, so 0 there).    *)
(***************************************************************************)
EXTENDS Checkpoint

CONSTANT ClockMax

T == CHOOSE t \in Threads : TRUE          \* the one thread of the domain
Ln(t, j) == SlotLine(t, 1, j)
P(t, j) == pm[Ln(t, j)].p                 \* the persisted content of slot j
PTs(t, j) == P(t, j).ts.v
PLat(t) == IF PTs(t, 0) < PTs(t, 1) THEN 1 ELSE 0    \* step 1 on persisted contents
X(t) == P(t, PLat(t))
XTs(t) == PTs(t, PLat(t))
XVal(t) == <<X(t).w1, X(t).w2>>

Stores(w) == <<[f |-> "w1", v |-> w], [f |-> "w2", v |-> w]>>
TsStore(x) == [f |-> "ts", v |-> Word(x, 0)]

\* About to choose a value for checkpoint th[t].i (C1 without an early exit).
Writes(t) == th[t].pc = "C1" /\ ~(th[t].rec /\ XTs(t) > local[t])

ThreadInv(t) ==
    /\ \A j \in {0, 1} : P(t, j).ts.op = 0 /\ PTs(t, j) \in 0 .. clock
    /\ PTs(t, 0) = PTs(t, 1) => PTs(t, 0) = 0
    \* pending stores: only on the stale slot the thread is writing
    /\ th[t].pc \in {"C1", "Done"} => \A j \in {0, 1} : pm[Ln(t, j)].s = <<>>
    /\ th[t].pc \in {"C5", "C6"} =>
         /\ th[t].slot = 1 - PLat(t) /\ ~th[t].rec
         /\ pm[Ln(t, PLat(t))].s = <<>>
         /\ pm[Ln(t, th[t].slot)].s = IF th[t].pc = "C5" THEN Stores(th[t].val)
                                      ELSE Stores(th[t].val) \o <<TsStore(th[t].ts)>>
         /\ th[t].val.op = th[t].i /\ <<th[t].val, th[t].val>> \in chosen[t][th[t].i]
         /\ XTs(t) < th[t].ts /\ th[t].ts <= clock
    \* the latest slot: a whole chosen value, the last one returned
    /\ XTs(t) > 0 =>
         /\ X(t).w1 = X(t).w2 /\ X(t).w1.op \in OpIdx
         /\ XVal(t) \in chosen[t][X(t).w1.op]
         /\ ret[t][X(t).w1.op] \subseteq {XVal(t)}
         /\ \A i \in OpIdx : i > X(t).w1.op => ret[t][i] = {}
    /\ XTs(t) = 0 => \A i \in OpIdx : ret[t][i] = {}
    /\ (Writes(t) \/ th[t].pc \in {"C5", "C6"}) => \A i \in OpIdx : i >= th[t].i => ret[t][i] = {}
    /\ local[t] \in {0, XTs(t)}

IndInv ==
    /\ TypeOK
    /\ Stability
    /\ \A t \in Threads : ThreadInv(t)

-----------------------------------------------------------------------------
(* The bounded domain.                                                     *)

Words == {NoVal} \cup {Word(v, i) : v \in Vals, i \in OpIdx}
\* A slot's persisted content in the domain: its two words equal (IndInv
\* wants the latest slot whole, DeadWordsCleared the others NoVal).
WholeContents(cl) == {[w1 |-> w, w2 |-> w, ts |-> Word(x, 0)] : w \in Words, x \in 0 .. cl}
Chosen(i) == {<<Word(v, i), Word(v, i)>> : v \in Vals}
\* Registers of a thread at C1 and Done are in Restart's cleared form.
ThStates(cl) ==
    {[Restart(r) EXCEPT !.i = i] : r \in BOOLEAN, i \in OpIdx}
    \cup {[Restart(FALSE) EXCEPT !.pc = "Done"]}
    \cup {[pc |-> p, i |-> i, rec |-> FALSE, slot |-> j, val |-> Word(v, i), ts |-> x] :
            p \in {"C5", "C6"}, i \in OpIdx, j \in {0, 1}, v \in Vals, x \in 1 .. cl}

\* The words of the stale slot, and of a latest slot with timestamp 0, are
\* dead: step 1 reads only timestamps, step 2 only a latest slot with a
\* timestamp above LOCAL, and a slot gets a timestamp only after step 3 has
\* stored both its words (one line: in this order in every crash image).
\* The domain keeps them NoVal.
DeadWordsCleared(c0, c1) ==
    LET xc == IF c0.ts.v < c1.ts.v THEN c1 ELSE c0
        st == IF c0.ts.v < c1.ts.v THEN c0 ELSE c1
    IN /\ st.w1 = NoVal /\ st.w2 = NoVal
       /\ xc.ts.v = 0 => xc.w1 = NoVal /\ xc.w2 = NoVal

IndDomain ==
    /\ clock <= ClockMax /\ crashes = 0
    /\ \A t \in Threads : th[t] \in ThStates(clock)
    /\ \A t \in Threads : DeadWordsCleared(P(t, 0), P(t, 1))

ChosenSets == {f \in [OpIdx -> SUBSET UNION {Chosen(i) : i \in OpIdx}] :
                  \A i \in OpIdx : f[i] \subseteq Chosen(i)}
Pending(h, j) == IF h.pc \in {"C5", "C6"} /\ j = h.slot
                 THEN IF h.pc = "C5" THEN Stores(h.val) ELSE Stores(h.val) \o <<TsStore(h.ts)>>
                 ELSE <<>>

\* IndInit: every IndInv state of the domain.  Nested, each choice filtered by
\* the parts of IndInv it decides, so TLC never builds the whole product.
IndInit ==
    /\ clock \in 0 .. ClockMax
    /\ crashes = 0 /\ tcrashes = 0
    /\ \E c0 \in WholeContents(clock) : \E c1 \in WholeContents(clock) :
         LET xc == IF c0.ts.v < c1.ts.v THEN c1 ELSE c0 IN
         /\ c0.ts.v = c1.ts.v => c0.ts.v = 0
         /\ xc.ts.v > 0 => xc.w1 = xc.w2 /\ xc.w1 # NoVal
         /\ DeadWordsCleared(c0, c1)
         /\ \E ch \in ChosenSets :
              /\ xc.ts.v > 0 => <<xc.w1, xc.w1>> \in ch[xc.w1.op]
              /\ \E rt \in [OpIdx -> {{}} \cup {{x} : x \in UNION {ch[i] : i \in OpIdx}}] :
                   /\ \A i \in OpIdx : rt[i] \subseteq ch[i]
                   /\ xc.ts.v = 0 => \A i \in OpIdx : rt[i] = {}
                   /\ xc.ts.v > 0 => /\ rt[xc.w1.op] \subseteq {<<xc.w1, xc.w1>>}
                                    /\ \A i \in OpIdx : i > xc.w1.op => rt[i] = {}
                   /\ \E h \in ThStates(clock), lo \in {0, xc.ts.v} :
                        /\ th = [t \in Threads |-> h]
                        /\ local = [t \in Threads |-> lo]
                        /\ chosen = [t \in Threads |-> ch]
                        /\ ret = [t \in Threads |-> rt]
                        /\ pm = [ln \in LineIds |-> [p |-> IF ln[4] = 0 THEN c0 ELSE c1,
                                                     s |-> Pending(h, ln[4])]]
    /\ IndInv
=============================================================================

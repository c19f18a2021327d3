------------------------------- MODULE PtmBase -------------------------------
(***************************************************************************)
(* What RedoPTM.tla and CXPTM.tla share: the object the transactions run   *)
(* on, the workloads, and persistent memory under Px86 (lines, pwb,        *)
(* fences, crash images).                                                  *)
(*                                                                         *)
(* THE OBJECT.  W persistent 64-bit words x[1..W] (a replica of it per     *)
(* Combined instance).  Transactions (each a lambda the construction may   *)
(* run several times, on several replicas, and on other threads):          *)
(*   inc(a)   x[a] := x[a] + 1, returns the old x[a]                       *)
(*   both()   x[1]++ and x[2]++ (two lines), returns the old x[1]          *)
(*   incif()  x[1]++ if x[2] = 0 (stores that depend on the state),        *)
(*            returns the old x[1]                                         *)
(*   get(a)   read-only, returns x[a]                                      *)
(* Results expose the order (every inc returns a distinct count), so the   *)
(* durable-linearizability checks see lost, repeated and reordered         *)
(* transactions.                                                           *)
(*                                                                         *)
(* PERSISTENT MEMORY (../../shared/design/PX86.md).  A line is [p, s]: p   *)
(* the value its mark guarantees, s the stores that became visible since,  *)
(* in order; the visible value is the last.  Memory is a record [cc: the  *)
(* line of curComb, r: [Combs \X Words -> line] (one line per word of     *)
(* every replica: the weakest placement), pwc, pwr: [Threads -> count]].   *)
(* A pwb (clwb/clflushopt) by thread t of a line records how many of its    *)
(* current stores it covers; they persist at t's next fence (a locked RMW, *)
(* also a failed CAS, or psync/sfence).  Until the fence a crash may keep  *)
(* any prefix (the pwb has not taken effect), after it at least the        *)
(* covered stores (it took effect when issued): together every image Px86 *)
(* allows.  A crash keeps, per line independently, any prefix of s.        *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS
    W,          \* words of the object
    Workload,   \* see WorkOf
    TraceWork   \* Workload "trace": [thread -> [i -> Tx]], a recorded run's transactions
                \* (traces/ptm/PtmTraceWork.tla); unused by the other workloads (set it to 0)

Words == 1 .. W

Range(f) == {f[x] : x \in DOMAIN f}
Max(a, b) == IF a >= b THEN a ELSE b
Min2(x) == IF x > 2 THEN 2 ELSE x

-----------------------------------------------------------------------------
(* Transactions and workloads.                                             *)

Tx(o, a) == [op |-> o, a |-> a]
WordFor(t, i) == ((t + i) % W) + 1

\* Transaction i of thread t.  "trace": the transactions an implementation
\* trace ran (its seeded mix), which the trace-validation spec instancing
\* RedoPTM/CXPTM passes in as TraceWork.
WorkOf(t, i) ==
    CASE Workload = "trace"  -> TraceWork[t][i]
      [] Workload = "inc"    -> Tx("inc", WordFor(t, i))
      [] Workload = "incget" -> IF i % 2 = 1 THEN Tx("inc", WordFor(t, i)) ELSE Tx("get", WordFor(t, i))
      [] Workload = "getinc" -> IF i % 2 = 1 THEN Tx("get", WordFor(t, i)) ELSE Tx("inc", WordFor(t, i))
      [] Workload = "mix"    -> IF (t + i) % 2 = 0 THEN Tx("get", WordFor(t, i)) ELSE Tx("inc", WordFor(t, i))
      [] Workload = "both"   -> IF t = 1 /\ i = 1 THEN Tx("both", 1) ELSE Tx("inc", WordFor(t, i))
      [] Workload = "cond"   -> IF t = 1 /\ i = 1 THEN Tx("incif", 1) ELSE Tx("inc", 2)
IsRead(o) == o.op = "get"
ArgsOf(o) == IF o.op \in {"both", "incif"} THEN << >> ELSE <<o.a>>

\* The transaction's code on memory x (Words -> Nat): its stores, in order,
\* and its result.
StoresOf(o, x) ==
    CASE o.op = "inc"   -> << <<o.a, x[o.a] + 1>> >>
      [] o.op = "both"  -> << <<1, x[1] + 1>>, <<2, x[2] + 1>> >>
      [] o.op = "incif" -> IF x[2] = 0 THEN << <<1, x[1] + 1>> >> ELSE << >>
      [] OTHER          -> << >>
ResultOf(o, x) == IF o.op \in {"both", "incif"} THEN x[1] ELSE x[o.a]

RECURSIVE ApplyStores(_, _)
ApplyStores(x, ws) == IF ws = << >> THEN x ELSE ApplyStores([x EXCEPT ![Head(ws)[1]] = Head(ws)[2]], Tail(ws))

\* The sequential object, for DurableLinearizability.tla.
ObjInit == [w \in Words |-> 0]
ObjApply(s, op, args) ==
    LET o == Tx(op, IF args = << >> THEN 1 ELSE args[1]) IN
    <<ApplyStores(s, StoresOf(o, s)), ResultOf(o, s)>>

\* The log entries [addr, oldval, val] of stores ws on memory y, in order.
RECURSIVE LogOf(_, _)
LogOf(y, ws) == IF ws = << >> THEN << >>
                ELSE <<[a |-> Head(ws)[1], old |-> y[Head(ws)[1]], new |-> Head(ws)[2]]>>
                     \o LogOf([y EXCEPT ![Head(ws)[1]] = Head(ws)[2]], Tail(ws))

-----------------------------------------------------------------------------
(* Lines.                                                                  *)

Vis(l) == IF l.s = << >> THEN l.p ELSE l.s[Len(l.s)]
Content(m, c) == [w \in Words |-> Vis(m.r[<<c, w>>])]
StoreR(m, c, w, v) == [m EXCEPT !.r[<<c, w>>].s = Append(@, v)]
RECURSIVE StoreAll(_, _, _)
\* The stores ws (<<word, value>> pairs) to replica c, in order.
StoreAll(m, c, ws) == IF ws = << >> THEN m ELSE StoreAll(StoreR(m, c, Head(ws)[1], Head(ws)[2]), c, Tail(ws))
StoreCC(m, v) == [m EXCEPT !.cc.s = Append(@, v)]

\* pwb by thread t of the lines of words ws of replica c, and of curComb.
PwbR(m, t, c, ws) == [m EXCEPT !.pwr[t] = [ln \in DOMAIN @ |-> IF ln[1] = c /\ ln[2] \in ws
                                                               THEN Len(m.r[ln].s) ELSE @[ln]]]
PwbC(m, t) == [m EXCEPT !.pwc[t] = Len(m.cc.s)]

PersistK(l, k) == IF k = 0 THEN l ELSE [p |-> l.s[k], s |-> SubSeq(l.s, k + 1, Len(l.s))]
Sub(a, b) == IF a > b THEN a - b ELSE 0

\* A fence of thread t (a locked RMW or psync): its pending pwbs take effect.
Fence(m, t) ==
    [cc |-> PersistK(m.cc, m.pwc[t]),
     r |-> [ln \in DOMAIN m.r |-> PersistK(m.r[ln], m.pwr[t][ln])],
     pwc |-> [u \in DOMAIN m.pwc |-> IF u = t THEN 0 ELSE Sub(m.pwc[u], m.pwc[t])],
     pwr |-> [u \in DOMAIN m.pwr |-> [ln \in DOMAIN m.r |->
                 IF u = t THEN 0 ELSE Sub(m.pwr[u][ln], m.pwr[t][ln])]]]

\* A fresh memory: curComb cv, every word 0, nothing pending.
MemInit(cv, Ls, Ts) == [cc |-> [p |-> cv, s |-> << >>], r |-> [ln \in Ls |-> [p |-> 0, s |-> << >>]],
                        pwc |-> [t \in Ts |-> 0], pwr |-> [t \in Ts |-> [ln \in Ls |-> 0]]]

\* Crash images: what a line may hold after a crash (its mark or later),
\* curComb's, and a replica's (each line independently).
LineImages(l) == {l.p} \cup Range(l.s)
CcImages(m) == LineImages(m.cc)
ReplicaImages(m, c) ==
    {x \in [Words -> UNION {LineImages(m.r[<<c, w>>]) : w \in Words}] :
        \A w \in Words : x[w] \in LineImages(m.r[<<c, w>>])}

\* The memory after a crash that kept curComb = cv and replica content x for
\* replica cv.idx; the other replicas' lines are normalised to 0 (they are
\* invalid after null recovery: never read before a copy overwrites them).
MemAfterCrash(m, cv, x) ==
    [cc |-> [p |-> cv, s |-> << >>],
     r |-> [ln \in DOMAIN m.r |-> [p |-> IF ln[1] = cv.idx THEN x[ln[2]] ELSE 0, s |-> << >>]],
     pwc |-> [t \in DOMAIN m.pwc |-> 0],
     pwr |-> [t \in DOMAIN m.pwr |-> [ln \in DOMAIN m.r |-> 0]]]
=============================================================================

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

-----------------------------------------------------------------------------
(* THE QUEUE (Workloads "queue" and "trace" with queue operations):        *)
(* perdure-ptm's ds::queue (impl/perdure-ptm/src/ds/queue.rs), each        *)
(* enqueue and dequeue one transaction, on the region allocator of         *)
(* impl/perdure-pm/src/region.rs, both as the code runs them, store by     *)
(* store.  Offsets are the PTM region's (a replica's: the root table, then *)
(* the allocator's region from QAB, replica.rs ALLOC_BASE); the allocator  *)
(* keeps offsets relative to QAB (bump, free lists, a free block's link),  *)
(* the queue the PTM region's (head, tail, next), as the code.  The queue  *)
(* is created before the run (its header the allocator's first block).     *)
(* The object's words are the words those operations store to, in offset  *)
(* order: QAB + 16 bump, + 24 live bytes, + 32 the free list of 32-byte     *)
(* blocks (class 5); the header payload's head, tail, len (QAB + 536, 544,  *)
(* 552: after its magic); QBlocks 32-byte node blocks from QAB + 576, each  *)
(* its block header word (BLOCK_TAG stripped: 256 + 5 allocated, 5 free, 0  *)
(* never carved), the header's second word, and the payload [value, next]. *)
(* Operations: enq(v) (v >= 1) returns 0; deq() returns the oldest value,   *)
(* 0 if the queue is empty; qlen() (a read) returns len.                   *)

QAB == 512
QBlocks == (W - 6) \div 4
QOffs == << QAB + 16, QAB + 24, QAB + 32, QAB + 536, QAB + 544, QAB + 552 >>
         \o [j \in 1 .. 4 * QBlocks |-> QAB + 576 + 8 * (j - 1)]
\* The word at PTM-region offset off (the queue's words only).
QW(off) == CHOOSE w \in 1 .. Len(QOffs) : QOffs[w] = off
QVal(x, off) == x[QW(off)]
QAllocated == 256 + 5
QFree == 5

\* A transaction's code as a program state: memory x, stores so far ws,
\* and a register p.
QSt(s, off, v) == [s EXCEPT !.x[QW(off)] = v, !.ws = Append(@, <<QW(off), v>>)]
QRun(x) == [x |-> x, ws |-> << >>, p |-> 0]

\* replica.rs tx_alloc = region.rs alloc(16) at QAB: pop the class's free
\* list, or carve from bump; the block header, its second word, the live
\* count; p: the payload's PTM-region offset.
QAlloc(s) ==
    LET head == QVal(s.x, QAB + 32)
        s1 == IF head # 0 THEN [QSt(s, QAB + 32, QVal(s.x, QAB + head)) EXCEPT !.p = QAB + head]
              ELSE [QSt(s, QAB + 16, QVal(s.x, QAB + 16) + 32) EXCEPT !.p = QAB + QVal(s.x, QAB + 16) + 16]
        s2 == QSt(QSt(s1, s1.p - 16, QAllocated), s1.p - 8, 0)
    IN QSt(s2, QAB + 24, QVal(s2.x, QAB + 24) + 32)

\* replica.rs tx_free = region.rs free(n - QAB): link the block into the
\* class's free list, mark it free, the live count.
QFreeBlock(s, n) ==
    LET s1 == QSt(s, n, QVal(s.x, QAB + 32))
        s2 == QSt(QSt(s1, QAB + 32, n - QAB), n - 16, QFree)
    IN QSt(s2, QAB + 24, QVal(s2.x, QAB + 24) - 32)

\* queue.rs enqueue_in.
QEnq(x, v) ==
    LET s1 == QAlloc(QRun(x))
        n == s1.p
        s2 == QSt(QSt(s1, n, v), n + 8, 0)
        tail == QVal(s2.x, QAB + 544)
        s3 == IF tail = 0 THEN QSt(s2, QAB + 536, n) ELSE QSt(s2, tail + 8, n)
        s4 == QSt(s3, QAB + 544, n)
    IN QSt(s4, QAB + 552, QVal(s4.x, QAB + 552) + 1).ws

\* queue.rs dequeue_in.
QDeq(x) ==
    LET n == QVal(x, QAB + 536) IN
    IF n = 0 THEN << >>
    ELSE LET next == QVal(x, n + 8)
             s1 == QSt(QRun(x), QAB + 536, next)
             s2 == IF next = 0 THEN QSt(s1, QAB + 544, 0) ELSE s1
             s3 == QSt(s2, QAB + 552, QVal(s2.x, QAB + 552) - 1)
         IN QFreeBlock(s3, n).ws

\* The created, empty queue: its header block carved, nothing else.
QInit == [w \in Words |-> CASE w = QW(QAB + 16) -> 576 [] w = QW(QAB + 24) -> 64 [] OTHER -> 0]
IsQueueOp(o) == o.op \in {"enq", "deq", "qlen"}

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
      \* the queue: thread 1 enqueues 11, then dequeues; thread 2 dequeues,
      \* then enqueues 22; and so on, alternating
      [] Workload = "queue"  -> IF (t + i) % 2 = 0 THEN Tx("enq", 10 * t + i) ELSE Tx("deq", 0)
IsRead(o) == o.op \in {"get", "qlen"}
ArgsOf(o) == IF o.op \in {"both", "incif", "deq", "qlen"} THEN << >> ELSE <<o.a>>

\* The transaction's code on memory x (Words -> Nat): its stores, in order,
\* and its result.
StoresOf(o, x) ==
    CASE o.op = "inc"   -> << <<o.a, x[o.a] + 1>> >>
      [] o.op = "both"  -> << <<1, x[1] + 1>>, <<2, x[2] + 1>> >>
      [] o.op = "incif" -> IF x[2] = 0 THEN << <<1, x[1] + 1>> >> ELSE << >>
      [] o.op = "enq"   -> QEnq(x, o.a)
      [] o.op = "deq"   -> QDeq(x)
      [] OTHER          -> << >>
ResultOf(o, x) ==
    CASE o.op \in {"both", "incif"} -> x[1]
      [] o.op = "enq"  -> 0
      [] o.op = "deq"  -> IF QVal(x, QAB + 536) = 0 THEN 0 ELSE QVal(x, QVal(x, QAB + 536))
      [] o.op = "qlen" -> QVal(x, QAB + 552)
      [] OTHER         -> x[o.a]

RECURSIVE ApplyStores(_, _)
ApplyStores(x, ws) == IF ws = << >> THEN x ELSE ApplyStores([x EXCEPT ![Head(ws)[1]] = Head(ws)[2]], Tail(ws))

\* The sequential object, for DurableLinearizability.tla (the queue's: the
\* created queue).
QueueObject == \/ Workload = "queue"
               \/ Workload = "trace" /\ \E t \in DOMAIN TraceWork : \E i \in DOMAIN TraceWork[t] :
                                            IsQueueOp(TraceWork[t][i])
ObjInit == IF QueueObject THEN QInit ELSE [w \in Words |-> 0]
ObjApply(s, op, args) ==
    LET o == Tx(op, IF args = << >> THEN (IF op \in {"deq", "qlen"} THEN 0 ELSE 1) ELSE args[1]) IN
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

\* A fresh memory: curComb cv, every word ObjInit's, nothing pending.
MemInit(cv, Ls, Ts) == [cc |-> [p |-> cv, s |-> << >>], r |-> [ln \in Ls |-> [p |-> ObjInit[ln[2]], s |-> << >>]],
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

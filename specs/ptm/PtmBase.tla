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
    TraceWork,  \* Workload "trace": [thread -> [i -> Tx]], a recorded run's transactions
                \* (traces/ptm/PtmTraceWork.tla); unused by the other workloads (set it to 0)
    Reserved    \* bytes of region blocks the construction allocates before the queue or the
                \* hash set (CX-PUC's u64 object: 32; 0 for the others, and in the models)

Words == 1 .. W

Range(f) == {f[x] : x \in DOMAIN f}
Max(a, b) == IF a >= b THEN a ELSE b
Min2(x) == IF x > 2 THEN 2 ELSE x

-----------------------------------------------------------------------------
(* Transactions and workloads.                                             *)

Tx(o, a) == [op |-> o, a |-> a]
WordFor(t, i) == ((t + i) % W) + 1

\* Which object a workload runs: the queue (Workload "queue", or a trace of
\* queue operations), the hash set (a trace of its operations), else the
\* counters.
IsQueueOp(o) == o.op \in {"qnew", "enq", "deq", "qlen"}
IsHashOp(o) == o.op \in {"hnew", "hins", "hdel", "hhas"}
QueueObject == \/ Workload = "queue"
               \/ Workload = "trace" /\ \E t \in DOMAIN TraceWork : \E i \in DOMAIN TraceWork[t] :
                                            IsQueueOp(TraceWork[t][i])
HashObject == Workload = "trace" /\ \E t \in DOMAIN TraceWork : \E i \in DOMAIN TraceWork[t] :
                                       IsHashOp(TraceWork[t][i])
\* An object in the region allocator's blocks (words at Offs).
RegionObject == QueueObject \/ HashObject

-----------------------------------------------------------------------------
(* THE QUEUE (Workloads "queue" and "trace" with queue operations):        *)
(* perdure-ptm's ds::queue (impl/perdure-ptm/src/ds/queue.rs), its create, *)
(* each enqueue and each dequeue one transaction, on the region allocator  *)
(* of impl/perdure-pm/src/region.rs, both as the code runs them, store by  *)
(* store. Offsets are the PTM region's (a replica's: the root table, then  *)
(* the allocator's region from QAB, replica.rs ALLOC_BASE); the allocator  *)
(* keeps offsets relative to QAB (bump, free lists, a free block's link),  *)
(* the queue the PTM region's (root slot, head, tail, next), as the code.  *)
(* The object's words are the words those operations store to, in offset   *)
(* order: root slot 0 (region offset 0); QAB + 16 bump, + 24 live bytes, + *)
(* 32 the free list of 32-byte blocks (class 5); the header block (the     *)
(* allocator's first after Reserved bytes, 64 bytes from QH: its block     *)
(* header word, its second word, then the payload: magic, head, tail,      *)
(* len); QBlocks 32-byte node blocks from QH + 64, each its block header   *)
(* word (BLOCK_TAG stripped: 256 + 5 allocated, 5 free, 0 never carved),   *)
(* the header's second word, and the payload [value, next]. Operations:    *)
(* qnew() (the create: a header in root slot 0 unless there is one)        *)
(* returns 0; enq(v) (v >= 1) returns 0; deq() returns the oldest value, 0 *)
(* if the queue is empty; qlen() (a read) returns len. Workload "queue"    *)
(* starts from the created queue (QCreated), a trace from the formatted    *)
(* region (QFormatted), its first transaction the create.                  *)

QAB == 512
\* The structure's first block: the allocator's first (its blocks start
\* 512 bytes into its region, region.rs BLOCKS_START) after Reserved bytes.
QH == QAB + 512 + Reserved
\* The allocator's words, then n words in a row from QH, then the node
\* blocks' words from QH + nodes.
AllocOffs(n, nodes, blocks) ==
    << 0, QAB + 16, QAB + 24, QAB + 32 >> \o [j \in 1 .. n |-> QH + 8 * (j - 1)]
    \o [j \in 1 .. 4 * blocks |-> QH + nodes + 8 * (j - 1)]
QBlocks == (W - 10) \div 4
QOffs == AllocOffs(6, 64, QBlocks)
\* The hash set's words (below).
HBlocks == (W - 14) \div 4
HOffs == AllocOffs(10, 96, HBlocks)
\* The object's words' offsets (the queue's or the hash set's), and
\* the word at PTM-region offset off (the object's words only).
Offs == IF HashObject THEN HOffs ELSE QOffs
QW(off) == CHOOSE w \in 1 .. Len(Offs) : Offs[w] = off
QVal(x, off) == x[QW(off)]
\* The header's magic ("PDQUEUE1" in the code; a trace maps it to this:
\* TLC's integers have 32 bits).
QMagic == 1
QAllocated(cls) == 256 + cls
QFree == 5

\* A transaction's code as a program state: memory x, stores so far ws,
\* and a register p.
QSt(s, off, v) == [s EXCEPT !.x[QW(off)] = v, !.ws = Append(@, <<QW(off), v>>)]
QRun(x) == [x |-> x, ws |-> << >>, p |-> 0]

\* replica.rs tx_alloc = region.rs alloc at QAB of a block of class cls (5:
\* 32 bytes, a node; 6: 64 bytes, the header, whose free list nothing ever
\* pushes: 0): pop the class's free list, or carve from bump; the block
\* header, its second word, the live count; p: the payload's PTM-region
\* offset.
QAlloc(s, cls) ==
    LET head == IF cls = 5 THEN QVal(s.x, QAB + 32) ELSE 0
        size == IF cls = 5 THEN 32 ELSE 64
        s1 == IF head # 0 THEN [QSt(s, QAB + 32, QVal(s.x, QAB + head)) EXCEPT !.p = QAB + head]
              ELSE [QSt(s, QAB + 16, QVal(s.x, QAB + 16) + size) EXCEPT !.p = QAB + QVal(s.x, QAB + 16) + 16]
        s2 == QSt(QSt(s1, s1.p - 16, QAllocated(cls)), s1.p - 8, 0)
    IN QSt(s2, QAB + 24, QVal(s2.x, QAB + 24) + size)

\* replica.rs tx_free = region.rs free(n - QAB) of a node: link the block
\* into the class's free list, mark it free, the live count.
QFreeBlock(s, n) ==
    LET s1 == QSt(s, n, QVal(s.x, QAB + 32))
        s2 == QSt(QSt(s1, QAB + 32, n - QAB), n - 16, QFree)
    IN QSt(s2, QAB + 24, QVal(s2.x, QAB + 24) - 32)

\* queue.rs create_in = ds/mod.rs create_header(root 0, 4 words): nothing
\* if root slot 0 holds a header; else a header block (class 6), its magic
\* and three zeros, then the root slot.
QNew(x) ==
    IF QVal(x, 0) # 0 THEN << >>
    ELSE LET s1 == QAlloc(QRun(x), 6)
             h == s1.p
             s2 == QSt(QSt(QSt(QSt(s1, h, QMagic), h + 8, 0), h + 16, 0), h + 24, 0)
         IN QSt(s2, 0, h).ws

\* queue.rs enqueue_in.
QEnq(x, v) ==
    LET s1 == QAlloc(QRun(x), 5)
        n == s1.p
        s2 == QSt(QSt(s1, n, v), n + 8, 0)
        tail == QVal(s2.x, QH + 32)
        s3 == IF tail = 0 THEN QSt(s2, QH + 24, n) ELSE QSt(s2, tail + 8, n)
        s4 == QSt(s3, QH + 32, n)
    IN QSt(s4, QH + 40, QVal(s4.x, QH + 40) + 1).ws

\* queue.rs dequeue_in.
QDeq(x) ==
    LET n == QVal(x, QH + 24) IN
    IF n = 0 THEN << >>
    ELSE LET next == QVal(x, n + 8)
             s1 == QSt(QRun(x), QH + 24, next)
             s2 == IF next = 0 THEN QSt(s1, QH + 32, 0) ELSE s1
             s3 == QSt(s2, QH + 40, QVal(s2.x, QH + 40) - 1)
         IN QFreeBlock(s3, n).ws

\* The formatted region (replica.rs format: region.rs format's bump; its
\* magic and length are no words of the object: nothing stores them later),
\* with the construction's Reserved bytes of blocks carved and live.
QFormatted == [w \in Words |-> CASE w = QW(QAB + 16) -> 512 + Reserved
                                 [] w = QW(QAB + 24) -> Reserved
                                 [] OTHER -> 0]
\* The created, empty queue: QNew on QFormatted.
QCreated == [w \in Words |-> CASE w = QW(0) -> QH + 16
                               [] w = QW(QAB + 16) -> 576 + Reserved
                               [] w = QW(QAB + 24) -> 64 + Reserved
                               [] w = QW(QH) -> QAllocated(6)
                               [] w = QW(QH + 16) -> QMagic
                               [] OTHER -> 0]

-----------------------------------------------------------------------------
(* THE HASH SET (Workload "trace" with hash set operations): perdure-ptm's *)
(* ds::hash set (impl/perdure-ptm/src/ds/hash.rs), its create with 2       *)
(* buckets, each insert, remove and contains one transaction, on the same  *)
(* allocator (QAlloc, QFreeBlock), store by store. Its words, in offset    *)
(* order: root slot 0; the allocator's bump, live bytes and class-5 free   *)
(* list; the bucket array (at QH, the structure's first block, 32 bytes:   *)
(* its block header word, second word, the 2 buckets); the header block    *)
(* (64 bytes: block header word, second word, magic, the array's offset,   *)
(* the bucket count, len); HBlocks 32-byte node blocks from QH + 96 (block *)
(* header, second word, key, next). Keys are 1 .. 4: with 2 buckets an     *)
(* insert resizes once len > 4, which 4 keys never reach (the resize is    *)
(* not modelled). The bucket of key k is HBucket[k], SplitMix64's          *)
(* finalizer (ds/mod.rs mix) of k, masked to 2 buckets: TLC's integers     *)
(* cannot compute it, so the table holds it (the producer checks it        *)
(* against the code). Operations: hnew() returns 0; hins(k) 1 if k was     *)
(* added, 0 if present; hdel(k) 1 if k was removed, 0 if absent; hhas(k)   *)
(* (a read) 1 if present.                                                  *)

HBucket == << 1, 0, 1, 0 >>
HKeys == 1 .. Len(HBucket)

\* ds/hash.rs create_table(root 0, 2 buckets): nothing if root slot 0
\* holds a header; else the zeroed bucket array (class 5), the header
\* (class 6): magic, array, count, len; then the root slot.
HNew(x) ==
    IF QVal(x, 0) # 0 THEN << >>
    ELSE LET s1 == QAlloc(QRun(x), 5)
             a == s1.p
             s2 == QSt(QSt(s1, a, 0), a + 8, 0)
             s3 == QAlloc(s2, 6)
             h == s3.p
             s4 == QSt(QSt(QSt(QSt(s3, h, QMagic), h + 8, a), h + 16, 2), h + 24, 0)
         IN QSt(s4, 0, h).ws

\* Table::find: the link to key k's node (the chain's final 0 link if k is
\* absent) and the node (0 if absent), as <<link, node>>; n bounds the walk.
RECURSIVE HWalk(_, _, _, _)
HWalk(x, link, k, n) ==
    LET node == QVal(x, link) IN
    IF node = 0 \/ n = 0 \/ QVal(x, node) = k THEN <<link, node>> ELSE HWalk(x, node + 8, k, n - 1)
HFind(x, k) ==
    LET h == QVal(x, 0) IN HWalk(x, QVal(x, h + 8) + 8 * HBucket[k], k, W)

\* Table::insert of a set (no resize: see above).
HIns(x, k) ==
    LET f == HFind(x, k) IN
    IF f[2] # 0 THEN << >>
    ELSE LET h == QVal(x, 0)
             s1 == QAlloc(QRun(x), 5)
             n == s1.p
             s2 == QSt(QSt(QSt(s1, n, k), n + 8, 0), f[1], n)
         IN QSt(s2, h + 24, QVal(s2.x, h + 24) + 1).ws

\* Table::remove of a set.
HDel(x, k) ==
    LET f == HFind(x, k) IN
    IF f[2] = 0 THEN << >>
    ELSE LET h == QVal(x, 0)
             s1 == QSt(QRun(x), f[1], QVal(x, f[2] + 8))
             s2 == QSt(s1, h + 24, QVal(s1.x, h + 24) - 1)
         IN QFreeBlock(s2, f[2]).ws

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
IsRead(o) == o.op \in {"get", "qlen", "hhas"}
ArgsOf(o) == IF o.op \in {"both", "incif", "qnew", "deq", "qlen", "hnew"} THEN << >> ELSE <<o.a>>

\* The transaction's code on memory x (Words -> Nat): its stores, in order,
\* and its result.
StoresOf(o, x) ==
    CASE o.op = "inc"   -> << <<o.a, x[o.a] + 1>> >>
      [] o.op = "both"  -> << <<1, x[1] + 1>>, <<2, x[2] + 1>> >>
      [] o.op = "incif" -> IF x[2] = 0 THEN << <<1, x[1] + 1>> >> ELSE << >>
      [] o.op = "qnew"  -> QNew(x)
      [] o.op = "enq"   -> QEnq(x, o.a)
      [] o.op = "deq"   -> QDeq(x)
      [] o.op = "hnew"  -> HNew(x)
      [] o.op = "hins"  -> HIns(x, o.a)
      [] o.op = "hdel"  -> HDel(x, o.a)
      [] OTHER          -> << >>
ResultOf(o, x) ==
    CASE o.op \in {"both", "incif"} -> x[1]
      [] o.op \in {"qnew", "enq", "hnew"} -> 0
      [] o.op = "hins" -> IF HFind(x, o.a)[2] = 0 THEN 1 ELSE 0
      [] o.op \in {"hdel", "hhas"} -> IF HFind(x, o.a)[2] = 0 THEN 0 ELSE 1
      [] o.op = "deq"  -> IF QVal(x, QH + 24) = 0 THEN 0 ELSE QVal(x, QVal(x, QH + 24))
      [] o.op = "qlen" -> QVal(x, QH + 40)
      [] OTHER         -> x[o.a]

RECURSIVE ApplyStores(_, _)
ApplyStores(x, ws) == IF ws = << >> THEN x ELSE ApplyStores([x EXCEPT ![Head(ws)[1]] = Head(ws)[2]], Tail(ws))

\* The sequential object, for DurableLinearizability.tla (the queue's:
\* Workload "queue"'s created queue, a trace's formatted region).
ObjInit == IF ~RegionObject THEN [w \in Words |-> 0]
           ELSE IF Workload = "queue" THEN QCreated ELSE QFormatted
ObjApply(s, op, args) ==
    LET o == Tx(op, IF args = << >> THEN (IF op \in {"qnew", "deq", "qlen", "hnew"} THEN 0 ELSE 1) ELSE args[1]) IN
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

\* Cache lines.  A word's line: each word its own for the counters (the
\* weakest placement), the code's 64-byte lines for the queue and the hash set.  A pwb writes
\* back whole lines.
LineOf(w) == IF RegionObject THEN Offs[w] \div 64 ELSE w
LineWords(ws) == {x \in Words : \E w \in ws : LineOf(x) = LineOf(w)}

\* The pwbs of one batch in any order (FALSE), or lowest word first (TRUE).  A pwb
\* only records the line as pending for its thread (PwbR: pwr[t]), which no crash
\* image reads and another thread's fence only re-indexes (to the same value
\* whether the record comes before or after that fence: no other thread stores
\* to the replica t holds); only t's next fence, after the batch, acts on it,
\* and by then the batch's lines are all recorded whatever their order.  So
\* the orders reach the same crash images, histories and fences, and a
\* configuration may fix one order to keep the state space small (a partial-order
\* reduction: `CONSTANT PwInOrder <- PwOneOrder`).  The trace specs match each
\* write-back to its own pending line (PWLine) either way.
PwInOrder == FALSE
PwOneOrder == TRUE
\* The lowest word still pending (the order PwInOrder fixes).
PwNext(pl) == CHOOSE x \in pl : \A y \in pl : x <= y

\* The used prefix of a replica holding x (replica.rs: copies and
\* whole-replica write-backs cover the region up to ALLOC_BASE + bump):
\* words 1 .. UsedN(x), every word for the counters; and the copy of it, as
\* <<word, value>> stores in order.
UsedN(x) == IF RegionObject THEN Cardinality({w \in Words : Offs[w] < QAB + QVal(x, QAB + 16)}) ELSE W
Used(x) == 1 .. UsedN(x)
\* Replica state x holds the object's state y: the two agree on y's used
\* prefix.  A word past y's bump is in no block: the allocator stores to
\* every word of a block it carves before any load of it (QAlloc and the
\* operation's own stores), so a replica may keep there what an older state
\* held (copies and CX-PUC's settle cover the used prefix only), and no
\* execution can tell.  For the counters, every word.
Holds(x, y) == \A w \in Used(y) : x[w] = y[w]
CopyOf(x) == [w \in Used(x) |-> <<w, x[w]>>]

\* The pending write-back by thread t of words ws of replica c: each one's
\* stores so far (PwbR: of the lines of ws, as a pwb; PwbWords: of those
\* words only, as non-temporal stores).
PwbWords(m, t, c, ws) == [m EXCEPT !.pwr[t] = [ln \in DOMAIN @ |-> IF ln[1] = c /\ ln[2] \in ws
                                                                   THEN Len(m.r[ln].s) ELSE @[ln]]]
PwbR(m, t, c, ws) == PwbWords(m, t, c, LineWords(ws))
\* pwb by thread t of curComb's line.
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

\* The memory after a crash that kept curComb = cv and word w of replica c
\* as xs(c, w): every line's mark is that image, no store pending, no pwb
\* outstanding.
MemAfterCrashWith(m, cv, xs(_, _)) ==
    [cc |-> [p |-> cv, s |-> << >>],
     r |-> [ln \in DOMAIN m.r |-> [p |-> xs(ln[1], ln[2]), s |-> << >>]],
     pwc |-> [t \in DOMAIN m.pwc |-> 0],
     pwr |-> [t \in DOMAIN m.pwr |-> [ln \in DOMAIN m.r |-> 0]]]

\* The model's crash: replica content x for replica cv.idx; the other
\* replicas' lines are normalised to 0 (they are invalid after null recovery:
\* a copy overwrites their used prefix before any read, and the allocator
\* writes every word of a block it carves past it).  A trace's crash keeps
\* every replica's image instead (MemAfterCrashWith): the code leaves an
\* invalid replica's words as they were, and an undo log records them.
MemAfterCrash(m, cv, x) ==
    LET Keep(c, w) == IF c = cv.idx THEN x[w] ELSE 0
    IN MemAfterCrashWith(m, cv, Keep)
=============================================================================

------------------------------ MODULE HeapInd2 ------------------------------
(***************************************************************************)
(* HeapInd.tla's inductiveness check for TWO threads (issue 20, §4): the   *)
(* same safety property (NoDoubleAllocation) with the same census          *)
(* (Exclusive, Conservation, ArraysExclusive), strengthened to an          *)
(* inductive invariant IndInv, checked                                     *)
(*     IndInv /\ [Next]_vars => IndInv'                                    *)
(* by TLC as in HeapInd.tla: INIT IndInit is every IndInv state of a       *)
(* bounded domain, NEXT is Heap's own Next, the INVARIANT is IndInv, the   *)
(* ACTION_CONSTRAINT IndDomain (on the source state) keeps TLC from        *)
(* expanding successors that leave the domain (TLC still checks them).     *)
(*                                                                         *)
(* What two threads add to HeapInd's strengthening (CrashSafe: every crash *)
(* image has an exclusive census and no array referenced twice; Pinned:    *)
(* what keeps that so), stated per thread here:                            *)
(*  - the global line's pending stores are those of a subset of the        *)
(*    threads at gpop_fence / don_fence, one each, in some order; each     *)
(*    expects the head the previous one (or the durable head) left: the    *)
(*    popped set at gpop_fence, the pushed set's link at don_fence; a      *)
(*    thread's mark on the line is the position of its own store, 0 once   *)
(*    another thread's pfence made it durable (Fence drops the marks it    *)
(*    covered), and then its label says nothing about the durable head;    *)
(*  - next_chunk's pending stores are the claims above the durable value,  *)
(*    one per thread at chunk_fence, the same way;                         *)
(*  - a slot line's pending stores are its own thread's (j increments, and *)
(*    step 2's two stores at pop_fence), covered by its pwb only: no other *)
(*    thread ever marks another slot's line;                               *)
(*  - what those j increments handed out is still the thread's own: in its *)
(*    caller's hands or its filling set (Handing).  One thread needs no    *)
(*    such clause; with two, without it IndInit has states where t1 holds  *)
(*    (and may publish) an object t2's unfenced carve handed out, whose    *)
(*    crash image hands it out again.  It is the alloc contract: publish   *)
(*    waits for the allocating thread's pfence, and free takes only        *)
(*    published objects or the freeing thread's own (Finding 3);           *)
(*  - every DRAM place (published, each caller's hands, each filling set)  *)
(*    holds objects of no other place (NoDoubleAllocation), and the census *)
(*    counts both threads' alloc sets, stacks, bump chunks, spares and     *)
(*    transfers together with the global stack.                            *)
(* So the check covers, in one step from every such state: a pop by one    *)
(* thread of a set the other donated (its push still pending or already    *)
(* durable), a free of an object the other published, both threads'        *)
(* stores pending on the global line at once, one thread's pfence making   *)
(* the other's store durable, and every step of a thread while the other   *)
(* has unfenced allocations.                                               *)
(*                                                                         *)
(* The bound (HeapInd2.cfg, CI): TWO threads (symmetric), S = 2, 1 chunk   *)
(* of 2 objects, 1 array, MaxHanded = 2, all switches on.  One array holds *)
(* the one set the 2 objects make, so both threads' stores are pending on  *)
(* the global line only as a push and the other thread's pop of that same  *)
(* set.  Crash counter 0 (a state whose crash is used up has the same      *)
(* successors minus Crash), needsFix FALSE (with FixUpBeforeAnyUse the     *)
(* crash step runs the fix-up), the leak flags FALSE (Crash only ORs into  *)
(* them; no other step reads them).  IndInit builds the domain from the    *)
(* durable image, each thread's label, j and transfer, the order of the    *)
(* writers on the global line, the claims on next_chunk, the spares and    *)
(* one DRAM place per object, and derives pend, mem, mark, fresh and       *)
(* leaked (= Lost: Conservation); with Pinned in IndInv that is every      *)
(* IndInv state of the bound.                                              *)
(* Left out: two sets alive at once (2 arrays with S = 1, or 4 objects     *)
(* with S = 2: two pops, a pop and a push of different sets, two pushes    *)
(* pending on the global line; S = 1 with 2 arrays did not finish its      *)
(* initial states in 27 minutes, README.md), two chunks (both threads'     *)
(* claims pending on next_chunk), a stack of two sets (3 arrays), three    *)
(* threads, and the leak invariants (LeakedWereInFlight, LeakBound,        *)
(* HeldBound), explored only by Heap.cfg and its siblings.                 *)
(***************************************************************************)
EXTENDS Heap

\* The census of a crash image d (DRAM lost, every slot idle).
Img(d) == INSTANCE Heap WITH mem <- d, pc <- [t \in Threads |-> "idle"],
            handed <- [t \in Threads |-> {}], filling <- [t \in Threads |-> {}],
            spare <- [t \in Threads |-> NoArray], oldArr <- [t \in Threads |-> NoArray],
            xferSet <- [t \in Threads |-> NoArray], xferChunk <- [t \in Threads |-> 0],
            needsFix <- [t \in Threads |-> FALSE]
\* ... and the census of the PM words alone (nothing published)
PMImg(d) == INSTANCE Heap WITH mem <- d, published <- {}, pc <- [t \in Threads |-> "idle"],
            handed <- [t \in Threads |-> {}], filling <- [t \in Threads |-> {}],
            spare <- [t \in Threads |-> NoArray], oldArr <- [t \in Threads |-> NoArray],
            xferSet <- [t \in Threads |-> NoArray], xferChunk <- [t \in Threads |-> 0],
            needsFix <- [t \in Threads |-> FALSE]

CrashImage(k) ==
    LET d1 == [l \in Lines |-> Apply(dur[l], SubSeq(pend[l], 1, k[l]))]
    IN  [l \in Lines |-> IF l[1] = "slot" THEN FixUpSlot(d1, l[2]) ELSE d1[l]]

CrashSafe == \A k \in PrefixChoices : LET d == CrashImage(k) IN
                Img(d)!Exclusive /\ Img(d)!ArraysExclusive

Referenced(a) ==
    \/ \E t \in Threads : Slot(t).alloc.set = a \/ a \in Range(OwnStack(t)) \/ spare[t] = a
                          \/ oldArr[t] = a \/ xferSet[t] = a
    \/ a \in Range(GlobalStack)

\* at most this many increments of step 1 or 4 are pending on a slot line
J == Max(S, ChunkSize)

\* Thread t's slot stores: j increments of step 1 or step 4 from its durable
\* content sl, then (at pop_fence) step 2's two stores.
Incs(t, sl, j) ==
    IF sl.alloc.set # NoArray
    THEN [i \in 1 .. j |-> St(SlotL(t), "alloc", [set |-> sl.alloc.set, idx |-> sl.alloc.idx + i])]
    ELSE [i \in 1 .. j |-> St(SlotL(t), "bump", [chunk |-> sl.bump.chunk, used |-> sl.bump.used + i])]
\* the objects those j increments handed out
Handing(t, sl, j, arrs) ==
    IF sl.alloc.set # NoArray
    THEN {arrs[sl.alloc.set].ents[sl.alloc.idx + i] : i \in 1 .. j}
    ELSE {Obj(sl.bump.chunk, sl.bump.used + i - 1) : i \in 1 .. j}
PopStores(t, top, arrs) == <<St(SlotL(t), "alloc", [set |-> top, idx |-> 0]),
                             St(SlotL(t), "head", arrs[top].link)>>
SlotStores(t, sl, j, p, arrs) ==
    Incs(t, sl, j) \o (IF p = "pop_fence" THEN PopStores(t, sl.head, arrs) ELSE << >>)

\* The store a thread at gpop_fence / don_fence made to the global line, and
\* the head it read before it (xs: its xferSet; arrs: the array lines).
GStore(p, x, arrs) == St(GlobL, "head", IF p = "gpop_fence" THEN arrs[x].link ELSE x)
GPre(p, x, arrs)   == IF p = "gpop_fence" THEN x ELSE arrs[x].link
GWriter(p) == p \in {"gpop_fence", "don_fence"}

\* the orders in which distinct threads' stores can sit on a line
Orders == UNION {{o \in [1 .. n -> Threads] : \A i, k \in 1 .. n : i # k => o[i] # o[k]}
                 : n \in 0 .. Cardinality(Threads)}
Pos(o, t) == IF \E i \in DOMAIN o : o[i] = t THEN CHOOSE i \in DOMAIN o : o[i] = t ELSE 0

\* The global line's pending stores for the order o of writers, and whether
\* each expects the head the one before it (or the durable head gh) left.
GPend(o, ps, xs, arrs) == [i \in DOMAIN o |-> GStore(ps[o[i]], xs[o[i]], arrs)]
GChained(o, ps, xs, arrs, gh) ==
    \A i \in DOMAIN o :
       GPre(ps[o[i]], xs[o[i]], arrs) = (IF i = 1 THEN gh ELSE GStore(ps[o[i-1]], xs[o[i-1]], arrs).v)

\* next_chunk's pending stores: k claims above the durable value nc
NcPend(nc, k) == [i \in 1 .. k |-> St(NcL, "next", nc + i)]
NcMark(p, c, nc) == IF p = "chunk_fence" /\ c >= nc THEN c - nc + 1 ELSE 0

\* Well-formed words (what every step writes): a set has S sorted entries or
\* none, "no set" has index 0, "no chunk" has used 0.
WordsOK(d) ==
    /\ \A a \in Arrays :
         \/ d[ArrL(a)].ents = << >>
         \/ Len(d[ArrL(a)].ents) = S /\ d[ArrL(a)].ents = SetToSeq(Range(d[ArrL(a)].ents))
    /\ \A t \in Threads :
         /\ d[SlotL(t)].alloc.set = NoArray => d[SlotL(t)].alloc.idx = 0
         /\ d[SlotL(t)].alloc.set # NoArray => d[SlotL(t)].alloc.idx <= Len(d[ArrL(d[SlotL(t)].alloc.set)].ents)
         /\ d[SlotL(t)].bump.chunk = 0 => d[SlotL(t)].bump.used = 0

DurArrs == [a \in Arrays |-> dur[ArrL(a)]]

Pinned ==
    /\ WordsOK(dur) /\ WordsOK(mem)
    /\ \A t \in Threads : Cardinality(filling[t]) < S /\ Cardinality(handed[t]) <= MaxHanded
    /\ \A a \in Arrays : pend[ArrL(a)] = << >>
    \* slot lines: only the owner's stores, covered by its pwb only
    /\ \A t \in Threads :
         /\ \E j \in 0 .. J :
              /\ pend[SlotL(t)] = SlotStores(t, dur[SlotL(t)], j, pc[t], DurArrs)
              \* what a crash may undo is the thread's own: in its caller's hands or
              \* its filling set (publish and free of another's object wait for a pfence)
              /\ Handing(t, dur[SlotL(t)], j, DurArrs) \subseteq handed[t] \cup filling[t]
         /\ \A u \in Threads : mark[u][SlotL(t)] = IF u = t THEN Len(pend[SlotL(t)]) ELSE 0
    /\ \A t \in Threads : \A a \in Arrays : mark[t][ArrL(a)] = 0
    \* the global line: the stores of some writers, in an order, chained
    /\ \E o \in Orders :
         /\ \A i \in DOMAIN o : GWriter(pc[o[i]])
         /\ pend[GlobL] = GPend(o, pc, xferSet, DurArrs)
         /\ GChained(o, pc, xferSet, DurArrs, dur[GlobL].head)
         /\ \A t \in Threads : mark[t][GlobL] = Pos(o, t)
    \* next_chunk: the claims above the durable value, one per thread at chunk_fence
    /\ pend[NcL] = NcPend(dur[NcL].next, mem[NcL].next - dur[NcL].next)
    /\ \A t \in Threads : mark[t][NcL] = NcMark(pc[t], xferChunk[t], dur[NcL].next)
    /\ \A c \in dur[NcL].next .. mem[NcL].next - 1 :
         \E t \in Threads : pc[t] = "chunk_fence" /\ xferChunk[t] = c
    /\ \A t, u \in Threads : t # u /\ pc[t] = "chunk_fence" /\ pc[u] = "chunk_fence"
                             => xferChunk[t] # xferChunk[u]
    /\ \A t \in Threads :
         /\ pc[t] = "chunk_fence" => xferChunk[t] < mem[NcL].next
         /\ (xferSet[t] # NoArray) = GWriter(pc[t])
         /\ (xferChunk[t] # 0) = (pc[t] = "chunk_fence")
         \* step 2 pops only when the alloc set before its stores is exhausted
         /\ pc[t] = "pop_fence" =>
              LET pre == Apply(dur[SlotL(t)], SubSeq(pend[SlotL(t)], 1, Len(pend[SlotL(t)]) - 2))
              IN  pre.alloc.set = NoArray
                  \/ /\ pre.alloc.idx = Len(Arr(pre.alloc.set).ents)
                     /\ pre.alloc.set \notin Range(ChainFrom(pre.head, Cardinality(Arrays) + 1))
         /\ oldArr[t] = CASE pc[t] = "pop_fence" -> dur[SlotL(t)].alloc.set   \* before step 2's stores
                          [] pc[t] = "gpop_fence" -> Slot(t).alloc.set
                          [] OTHER -> NoArray
         /\ ~needsFix[t]
    \* an array is fresh iff never written (every write stores a full set)
    /\ fresh = {a \in Arrays : dur[ArrL(a)].ents = << >>}
    /\ \A a \in fresh : ~Referenced(a) /\ dur[ArrL(a)] = InitLine(ArrL(a))
                       /\ mem[ArrL(a)] = InitLine(ArrL(a))

IndInv ==
    /\ TypeOK
    /\ NoDoubleAllocation /\ Exclusive /\ Conservation /\ ArraysExclusive
    /\ Pinned
    /\ CrashSafe

-----------------------------------------------------------------------------
(* The bounded domain, built from the durable image.                       *)

SortedSets == {SetToSeq(X) : X \in {Y \in SUBSET Objects : Cardinality(Y) = S}}
AllocVals == {NoAlloc} \cup [set : Arrays, idx : 0 .. S]
BumpVals == {NoBump} \cup [chunk : Chunks, used : 0 .. ChunkSize]
ArrVals == {InitLine(ArrL(CHOOSE a \in Arrays : TRUE))} \cup [link : ArrayOrNone, ents : SortedSets]
SlotVals == [alloc : AllocVals, head : ArrayOrNone, bump : BumpVals]

IndDomain == crashes = 0

\* the durable image from its parts
D0(nc, gh, arrs, sls) ==
    [l \in Lines |-> CASE l[1] = "slot" -> sls[l[2]]
                       [] l[1] = "arr" -> arrs[l[2]]
                       [] l[1] = "glob" -> [head |-> gh]
                       [] l[1] = "nc" -> [next |-> nc]]
\* the census of the durable image, as recovery leaves it
DurOK(d) == LET c == [l \in Lines |-> IF l[1] = "slot" THEN FixUpSlot(d, l[2]) ELSE d[l]]
            IN  PMImg(c)!Exclusive /\ PMImg(c)!ArraysExclusive
\* a slot value that is fine on its own (the other slots empty)
Written(arrs, a) == IF a = NoArray THEN TRUE ELSE arrs[a].ents # << >>
SlotOK(nc, gh, arrs, t, sl) ==
    /\ sl.bump.chunk < nc
    /\ Written(arrs, sl.alloc.set) /\ Written(arrs, sl.head)
    /\ sl.alloc.set = NoArray => sl.alloc.idx = 0
    /\ sl.alloc.set # NoArray => sl.alloc.idx <= Len(arrs[sl.alloc.set].ents)
    /\ sl.bump.chunk = 0 => sl.bump.used = 0
    /\ DurOK(D0(nc, gh, arrs, [u \in Threads |-> IF u = t THEN sl ELSE InitLine(SlotL(u))]))

\* a thread's label, pending increments and transfer, on its own
ThreadOK(nc, gh, arrs, sl, p, j, x, c) ==
    /\ sl.alloc.set # NoArray => sl.alloc.idx + j <= Len(arrs[sl.alloc.set].ents)
    /\ sl.alloc.set = NoArray => (sl.bump.chunk # 0 /\ sl.bump.used + j <= ChunkSize) \/ j = 0
    /\ p = "pop_fence" => sl.head # NoArray
    /\ GWriter(p) = (x # NoArray)
    /\ (p = "chunk_fence") = (c # 0)

\* the census's places other than published, hands and filling sets
PMCensusSet ==
    Range(GlobalEntries)
    \cup UNION {InTransfer(t) \cup Range(AllocRem(t)) \cup Range(OwnEntries(t)) \cup Range(BumpRem(t))
               : t \in Threads}

\* a place in DRAM for each object no PM word holds
Places == {<<"none">>, <<"pub">>} \cup ({"hand", "fill"} \X Threads)

IndInit ==
    /\ crashes = 0 /\ dblAlloc = FALSE /\ leakOutside = FALSE /\ leakTooMany = FALSE
    /\ needsFix = [t \in Threads |-> FALSE]
    /\ \E nc \in 1 .. NumChunks + 1, gh \in ArrayOrNone, arrs \in [Arrays -> ArrVals] :
       Written(arrs, gh) /\
       \E sls \in [Threads -> {sl \in SlotVals : \A t \in Threads : SlotOK(nc, gh, arrs, t, sl)}] :
       LET d0 == D0(nc, gh, arrs, sls)
       IN
       /\ DurOK(d0)
       /\ \E ps \in [Threads -> PCs], js \in [Threads -> 0 .. J], xs \in [Threads -> ArrayOrNone],
             cs \in [Threads -> 0 .. NumChunks] :
         /\ \A t \in Threads : ThreadOK(nc, gh, arrs, sls[t], ps[t], js[t], xs[t], cs[t])
         /\ \E o \in Orders, k \in 0 .. NumChunks + 1 - nc :
           /\ \A i \in DOMAIN o : GWriter(ps[o[i]])
           /\ GChained(o, ps, xs, arrs, gh)
           /\ LET pd == [l \in Lines |->
                           CASE l[1] = "slot" -> SlotStores(l[2], sls[l[2]], js[l[2]], ps[l[2]], arrs)
                             [] l[1] = "glob" -> GPend(o, ps, xs, arrs)
                             [] l[1] = "nc" -> NcPend(nc, k)
                             [] OTHER -> << >>]
              IN
              /\ dur = d0
              /\ pend = pd
              /\ mem = [l \in Lines |-> Apply(d0[l], pd[l])]
              /\ mark = [t \in Threads |-> [l \in Lines |->
                           CASE l = SlotL(t) -> Len(pd[l])
                             [] l = GlobL -> Pos(o, t)
                             [] l = NcL -> NcMark(ps[t], cs[t], nc)
                             [] OTHER -> 0]]
              /\ pc = ps
              /\ xferSet = xs
              /\ xferChunk = cs
    /\ oldArr = [t \in Threads |-> CASE pc[t] = "pop_fence" -> dur[SlotL(t)].alloc.set
                                      [] pc[t] = "gpop_fence" -> Slot(t).alloc.set
                                      [] OTHER -> NoArray]
    /\ spare \in [Threads -> ArrayOrNone]
    /\ ArraysExclusive
    /\ fresh = {a \in Arrays : dur[ArrL(a)].ents = << >>}
    /\ \A a \in fresh : ~Referenced(a)
    /\ LET avail == Born \ PMCensusSet
       IN  \E place \in [avail -> Places] :
             /\ published = {o \in avail : place[o] = <<"pub">>}
             /\ handed = [t \in Threads |-> {o \in avail : place[o] = <<"hand", t>>}]
             /\ filling = [t \in Threads |-> {o \in avail : place[o] = <<"fill", t>>}]
    /\ \A t \in Threads : Cardinality(handed[t]) <= MaxHanded /\ Cardinality(filling[t]) < S
    /\ leaked = Lost
    /\ IndInv
=============================================================================

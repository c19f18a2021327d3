------------------------------- MODULE HeapInd -------------------------------
(***************************************************************************)
(* Inductiveness of the heap's safety property (issue 20, §4):             *)
(* NoDoubleAllocation with the census Exclusive, Conservation and          *)
(* ArraysExclusive, strengthened to an inductive invariant IndInv, checked *)
(*     IndInv /\ [Next]_vars => IndInv'                                    *)
(* by TLC as in specs/relax/MirrorInd.tla: INIT IndInit is every IndInv    *)
(* state of a bounded domain, NEXT is Heap's own Next, the INVARIANT is    *)
(* IndInv, the ACTION_CONSTRAINT IndDomain (on the source state) keeps TLC *)
(* from expanding successors that leave the domain (TLC still checks them).*)
(*                                                                         *)
(* The strengthening.  The census holds in the visible image; a crash      *)
(* computes it again on a crash image, so IndInv also says that every      *)
(* image a crash may leave (a prefix of each line's pending stores, then   *)
(* step 2's fix-up) has an exclusive census and no array referenced twice  *)
(* (CrashSafe), and pins what keeps that so (Pinned):                      *)
(*  - every pending store is covered by the thread's pwb (mark = the       *)
(*    line's pending length); array lines have none; the global line has   *)
(*    one exactly at gpop_fence (the pop of xferSet, which the durable     *)
(*    head still names) and at don_fence (the push of xferSet);            *)
(*    next_chunk one exactly at chunk_fence (the claim of xferChunk);      *)
(*  - the slot line's pending stores are j step 1 or step 4 increments of  *)
(*    its durable word, at pop_fence followed by step 2's two stores; the  *)
(*    alloc set before those is exhausted and not on the stack (the fix-up *)
(*    hides that case from CrashSafe, so it is stated);                    *)
(*  - oldArr is that set at pop_fence, the visible alloc set at            *)
(*    gpop_fence, none elsewhere; xferSet and xferChunk are set exactly at *)
(*    their labels; a filling set has fewer than S objects;                *)
(*  - words are well formed (a set has S sorted entries or none); an array *)
(*    is fresh iff never written, and then nothing references it.          *)
(* The leak ghosts (LeakedWereInFlight, LeakBound, HeldBound) are not part *)
(* of IndInv: Heap.cfg checks them by exploration; the domain keeps their  *)
(* flags FALSE (Crash only ORs into them; no other step reads them).       *)
(*                                                                         *)
(* The bound: ONE thread, S = 2, 1 chunk of 2 objects, MaxHanded = 2, all  *)
(* switches on, 1 array (HeapInd.cfg, CI) or 2 (HeapInd_deep.cfg,          *)
(* symmetric), crash counter 0 (a state whose crash is used up has the     *)
(* same successors minus Crash), needsFix FALSE (with FixUpBeforeAnyUse    *)
(* the crash step runs the fix-up).  IndInit builds the domain from the    *)
(* durable image, the label, j and the DRAM sets, and derives pend, mem,   *)
(* mark, fresh and leaked (= Lost: Conservation); with Pinned in IndInv    *)
(* that is every IndInv state of the bound.  Two threads are not covered:  *)
(* other threads' marks and stores on the global line, frees of objects    *)
(* another thread published, pops of sets another thread donated; Heap.cfg *)
(* explores them.                                                          *)
(***************************************************************************)
EXTENDS Heap

T == CHOOSE t \in Threads : TRUE
ArraySymmetry == Permutations(Arrays)   \* (one thread: Symmetry's thread part is trivial)

\* The census of a crash image d (DRAM lost, every slot idle).
Img(d) == INSTANCE Heap WITH mem <- d, pc <- [t \in Threads |-> "idle"],
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

\* The slot's pending stores: j increments of step 1 or step 4 from its
\* durable content sl, then (at pop_fence) step 2's two stores.
Incs(sl, j) ==
    IF sl.alloc.set # NoArray
    THEN [i \in 1 .. j |-> St(SlotL(T), "alloc", [set |-> sl.alloc.set, idx |-> sl.alloc.idx + i])]
    ELSE [i \in 1 .. j |-> St(SlotL(T), "bump", [chunk |-> sl.bump.chunk, used |-> sl.bump.used + i])]
PopStores(top, arrs) == <<St(SlotL(T), "alloc", [set |-> top, idx |-> 0]),
                          St(SlotL(T), "head", arrs[top].link)>>

\* Well-formed words (what every step writes): a set has S sorted entries or
\* none, "no set" has index 0, "no chunk" has used 0.
WordsOK(d) ==
    /\ \A a \in Arrays :
         \/ d[ArrL(a)].ents = << >>
         \/ Len(d[ArrL(a)].ents) = S /\ d[ArrL(a)].ents = SetToSeq(Range(d[ArrL(a)].ents))
    /\ d[SlotL(T)].alloc.set = NoArray => d[SlotL(T)].alloc.idx = 0
    /\ d[SlotL(T)].alloc.set # NoArray => d[SlotL(T)].alloc.idx <= Len(d[ArrL(d[SlotL(T)].alloc.set)].ents)
    /\ d[SlotL(T)].bump.chunk = 0 => d[SlotL(T)].bump.used = 0

Pinned ==
    /\ WordsOK(dur) /\ WordsOK(mem)
    /\ \A t \in Threads : Cardinality(filling[t]) < S
    /\ \A t \in Threads : \A l \in Lines : mark[t][l] = Len(pend[l])
    /\ \A a \in Arrays : pend[ArrL(a)] = << >>
    /\ \E j \in 0 .. MaxHanded :
         pend[SlotL(T)] = Incs(dur[SlotL(T)], j)
                          \o (IF pc[T] = "pop_fence"
                              THEN PopStores(dur[SlotL(T)].head, [a \in Arrays |-> dur[ArrL(a)]])
                              ELSE << >>)
    /\ pend[GlobL] = (IF pc[T] = "gpop_fence" THEN <<St(GlobL, "head", dur[ArrL(xferSet[T])].link)>>
                      ELSE IF pc[T] = "don_fence" THEN <<St(GlobL, "head", xferSet[T])>>
                      ELSE << >>)
    /\ pc[T] = "gpop_fence" => dur[GlobL].head = xferSet[T]
    /\ pend[NcL] = (IF pc[T] = "chunk_fence" THEN <<St(NcL, "next", xferChunk[T] + 1)>> ELSE << >>)
    /\ pc[T] = "chunk_fence" => dur[NcL].next = xferChunk[T]
    /\ (xferSet[T] # NoArray) = (pc[T] \in {"gpop_fence", "don_fence"})
    /\ (xferChunk[T] # 0) = (pc[T] = "chunk_fence")
    \* step 2 pops only when the alloc set before its stores is exhausted
    /\ pc[T] = "pop_fence" =>
         LET pre == Apply(dur[SlotL(T)], SubSeq(pend[SlotL(T)], 1, Len(pend[SlotL(T)]) - 2))
         IN  pre.alloc.set = NoArray
             \/ /\ pre.alloc.idx = Len(Arr(pre.alloc.set).ents)
                /\ pre.alloc.set \notin Range(ChainFrom(pre.head, Cardinality(Arrays) + 1))
    /\ oldArr[T] = CASE pc[T] = "pop_fence" -> dur[SlotL(T)].alloc.set   \* before step 2's stores
                     [] pc[T] = "gpop_fence" -> Slot(T).alloc.set
                     [] OTHER -> NoArray
    /\ \A t \in Threads : ~needsFix[t]
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

Full == SetToSeq(Objects)
AllocVals == {NoAlloc} \cup [set : Arrays, idx : 0 .. S]
BumpVals == {NoBump} \cup [chunk : Chunks, used : 0 .. ChunkSize]
ArrVals == {InitLine(ArrL(CHOOSE a \in Arrays : TRUE))} \cup [link : ArrayOrNone, ents : {Full}]

IndDomain ==
    /\ crashes = 0 /\ Len(pend[SlotL(T)]) <= MaxHanded + 2

\* IndInit: every IndInv state of the domain, each choice filtered by the
\* parts of IndInv it decides (the durable image's own crash image first).
DurOK(d) == LET c == [l \in Lines |-> IF l[1] = "slot" THEN FixUpSlot(d, l[2]) ELSE d[l]]
            IN  Img(c)!Exclusive /\ Img(c)!ArraysExclusive
IndInit ==
    /\ crashes = 0 /\ dblAlloc = FALSE /\ leakOutside = FALSE /\ leakTooMany = FALSE
    /\ needsFix = [t \in Threads |-> FALSE]
    /\ published \in SUBSET Objects
    /\ \E nc \in 1 .. NumChunks + 1, gh \in ArrayOrNone, arrs \in [Arrays -> ArrVals] :
       \E sl \in [alloc : AllocVals, head : ArrayOrNone, bump : BumpVals] :
       LET d0 == [l \in Lines |->
                    CASE l[1] = "slot" -> sl
                      [] l[1] = "arr" -> arrs[l[2]]
                      [] l[1] = "glob" -> [head |-> gh]
                      [] l[1] = "nc" -> [next |-> nc]]
       IN
       /\ sl.bump.chunk < nc
       /\ DurOK(d0)
       /\ \E p \in PCs, j \in 0 .. MaxHanded, x \in ArrayOrNone :
         /\ sl.alloc.set # NoArray => sl.alloc.idx + j <= Len(arrs[sl.alloc.set].ents)
         /\ sl.alloc.set = NoArray => (sl.bump.chunk # 0 /\ sl.bump.used + j <= ChunkSize) \/ j = 0
         /\ p = "pop_fence" => sl.head # NoArray
         /\ p = "gpop_fence" => gh # NoArray /\ x = gh
         /\ p = "don_fence" => x # NoArray /\ arrs[x].link = gh /\ j = 0
         /\ p \notin {"gpop_fence", "don_fence"} => x = NoArray
         /\ p = "chunk_fence" => nc <= NumChunks
         /\ LET pd == [l \in Lines |->
                         CASE l[1] = "slot" -> Incs(sl, j) \o (IF p = "pop_fence" THEN PopStores(sl.head, arrs) ELSE << >>)
                           [] l[1] = "glob" -> (IF p = "gpop_fence" THEN <<St(GlobL, "head", arrs[gh].link)>>
                                                ELSE IF p = "don_fence" THEN <<St(GlobL, "head", x)>>
                                                ELSE << >>)
                           [] l[1] = "nc" -> (IF p = "chunk_fence" THEN <<St(NcL, "next", nc + 1)>> ELSE << >>)
                           [] OTHER -> << >>]
            IN
            /\ dur = d0
            /\ pend = pd
            /\ mem = [l \in Lines |-> Apply(d0[l], pd[l])]
            /\ mark = [t \in Threads |-> [l \in Lines |-> Len(pd[l])]]
            /\ pc = [t \in Threads |-> p]
            /\ xferSet = [t \in Threads |-> x]
            /\ xferChunk = [t \in Threads |-> IF p = "chunk_fence" THEN nc ELSE 0]
    /\ oldArr = [t \in Threads |-> CASE pc[T] = "pop_fence" -> dur[SlotL(T)].alloc.set
                                      [] pc[T] = "gpop_fence" -> Slot(T).alloc.set
                                      [] OTHER -> NoArray]
    /\ \E sp \in ArrayOrNone : spare = [t \in Threads |-> sp]
    /\ ArraysExclusive
    /\ \E h \in SUBSET Objects, f \in SUBSET Objects :
         /\ Cardinality(h) <= MaxHanded /\ Cardinality(f) < S
         /\ handed = [t \in Threads |-> h] /\ filling = [t \in Threads |-> f]
    /\ ArraysExclusive /\ Exclusive /\ NoDoubleAllocation
    /\ fresh = {a \in Arrays : dur[ArrL(a)].ents = << >>}
    /\ leaked = Lost
    /\ IndInv
=============================================================================

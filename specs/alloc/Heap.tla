-------------------------------- MODULE Heap --------------------------------
(***************************************************************************)
(* perdure-pm `heap`: the concurrent persistent heap, one size class.      *)
(*                                                                         *)
(* Follows the "persistent ssmem" design of the RELAX thesis (seed 002,    *)
(* section 6.5.1): per-thread free sets, flushed when completed and kept   *)
(* on durable stacks.  perdure's heap improves on it by making the         *)
(* position in the set being allocated from (`alloc_state`) and in the     *)
(* chunk being carved (`bump`) persistent, so that a crash does not lose   *)
(* them.  The protocol steps 1-7 named in the comments are those listed    *)
(* in specs/alloc/README.md, which impl/perdure-pm/src/heap.rs implements: *)
(*   1 alloc from the current set          5 free / complete a free set    *)
(*   2 pop the slot's own stack (+ fix-up) 6 donate a set to the global    *)
(*   3 pop the global stack                  stack                         *)
(*   4 carve from the bump chunk           7 crash and recovery            *)
(*                                                                         *)
(* Persistency (Px86, see design/PX86.md), line-granular: every PM line    *)
(* has a durable image `dur[l]` and the sequence `pend[l]` of stores that  *)
(* became visible after it (oldest first).  A crash keeps, for every line  *)
(* independently, a prefix of `pend[l]`.  `pwb` by thread t records in     *)
(* `mark[t][l]` how much of `pend[l]` t's next pfence must make durable;   *)
(* `pfence` makes exactly that much durable.  Visibility is sequentially   *)
(* consistent (each action is one atomic step of one thread).  Every store *)
(* of the protocol is followed by a pwb of its line, so `Write` does both. *)
(*                                                                         *)
(* Merged steps.  Consecutive protocol steps of one thread are one action  *)
(* when nothing in them is visible to another thread before their last     *)
(* store: all stores but the last go to private lines (the slot line,      *)
(* which only its owner reads; an array no durable word refers to).  A     *)
(* crash inside such a run leaves a durable state that a crash just before *)
(* or just after the action leaves too (after it, the crash may drop the   *)
(* stores still pending), up to the contents of arrays no durable word     *)
(* refers to, which nothing reads again (after a crash, arrays are reached *)
(* only through durable words; spares are DRAM).  Step 2's two stores,     *)
(* which must be able to persist apart, and the stores of steps 3 and 4 to *)
(* shared lines are each followed by a separate pfence action.             *)
(*                                                                         *)
(* What this module does NOT model: more than one size class (the arrays   *)
(* that hold free sets come from a separate finite pool here; in the       *)
(* implementation they are blocks of the 512-byte class); ABA tags (the    *)
(* global pop is one atomic read-link-and-CAS, which is what the tag       *)
(* guarantees); the SMR grace period before free (free(o) is called when   *)
(* no thread can access o any more); partially filled sets (every set has  *)
(* exactly S entries); TSO store buffers.  Bounds: see the cfgs and        *)
(* README.md, which also lists the mutants (mutants/, each must fail).     *)
(*                                                                         *)
(* Correctness: NoDoubleAllocation (the safety property), the census       *)
(* invariants Exclusive/Conservation/ArraysExclusive, the leak invariants  *)
(* LeakedWereInFlight and LeakBound, and refinement of HeapAbstract (an    *)
(* atomic durable allocator that may leak at most a bounded number of      *)
(* objects per crash).                                                     *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC

CONSTANTS
    Threads,      \* thread ids; each owns one slot (symmetric)
    S,            \* entries in a completed free set
    ChunkSize,    \* objects per chunk
    NumChunks,    \* chunks next_chunk can hand out (ids 1..NumChunks)
    Arrays,       \* the free-set arrays that exist (model values; symmetric)
    NoArray,      \* a model value: "no array" (0 in the implementation)
    MaxHanded,    \* objects a caller holds allocated and unpublished, at most
    MaxCrashes,   \* crashes per behaviour
    \* Protocol switches.  Heap.cfg sets all of them TRUE (the protocol as
    \* designed); each model in mutants/ sets one FALSE and must fail.
    FixUp,              \* step 2's recovery fix-up is performed
    PopAllocFirst,      \* step 2 stores alloc_state before sets_head
    FixUpBeforeAnyUse,  \* the fix-up precedes every use of the slot, including
                        \* the completion of a free set (not only alloc)
    FenceBeforePublish, \* the caller's contract: pfence before publishing
    FreeOwnOrPublished, \* the caller's contract: free only objects that are
                        \* published or that the freeing thread allocated
    DonateLinkFence     \* step 6: set.link is durable before the CAS

ASSUME /\ IsFiniteSet(Threads) /\ Threads # {}
       /\ S \in Nat \ {0} /\ ChunkSize \in Nat \ {0}
       /\ NumChunks \in Nat /\ MaxCrashes \in Nat /\ MaxHanded \in Nat
       /\ IsFiniteSet(Arrays) /\ NoArray \notin Arrays
       /\ \A b \in {FixUp, PopAllocFirst, FixUpBeforeAnyUse, FenceBeforePublish,
                    FreeOwnOrPublished, DonateLinkFence} : b \in BOOLEAN

-----------------------------------------------------------------------------
(* Objects and chunks are numbers (chunk 0: none); arrays model values.   *)

Objects   == 1 .. (NumChunks * ChunkSize)
ArrayOrNone == Arrays \cup {NoArray}
Chunks    == 1 .. NumChunks
Obj(c, i) == (c - 1) * ChunkSize + i + 1      \* object i (from 0) of chunk c
ChunkObjs(c) == IF c = 0 THEN {} ELSE {Obj(c, i) : i \in 0 .. ChunkSize - 1}
Max(a, b) == IF a >= b THEN a ELSE b
Range(sq) == {sq[i] : i \in DOMAIN sq}

\* Per thread, the objects a crash may legitimately leak besides the ones it
\* holds allocated-but-unpublished: a filling set (< S) plus one set (S) or
\* one chunk (ChunkSize) in transfer.
LeakPerThread == (S - 1) + Max(S, ChunkSize)

RECURSIVE SetToSeq(_)
SetToSeq(X) == IF X = {} THEN << >>
               ELSE LET m == CHOOSE x \in X : \A y \in X : x <= y
                    IN  <<m>> \o SetToSeq(X \ {m})

RECURSIVE SumOver(_, _)
SumOver(f(_), X) == IF X = {} THEN 0
                    ELSE LET x == CHOOSE y \in X : TRUE
                         IN  f(x) + SumOver(f, X \ {x})

-----------------------------------------------------------------------------
(* PM lines and their contents.                                            *)
(*   slot line of t: alloc_state = [set, idx] (idx entries handed out),    *)
(*                   sets_head, bump = [chunk, used]                       *)
(*   global line:    head of the global Treiber stack of sets              *)
(*   next_chunk line                                                       *)
(*   array a:        link, ents (entries; count = Len(ents)); one line     *)

SlotL(t) == <<"slot", t>>
ArrL(a)  == <<"arr", a>>
GlobL    == <<"glob", 0>>
NcL      == <<"nc", 0>>
Lines    == {SlotL(t) : t \in Threads} \cup {ArrL(a) : a \in Arrays} \cup {GlobL, NcL}

NoAlloc == [set |-> NoArray, idx |-> 0]
NoBump  == [chunk |-> 0, used |-> 0]

InitLine(l) ==
    CASE l[1] = "slot" -> [alloc |-> NoAlloc, head |-> NoArray, bump |-> NoBump]
      [] l[1] = "arr"  -> [link |-> NoArray, ents |-> << >>]
      [] l[1] = "glob" -> [head |-> NoArray]
      [] l[1] = "nc"   -> [next |-> 1]

St(l, f, v) == [l |-> l, f |-> f, v |-> v]     \* one store: line, field, value

RECURSIVE Apply(_, _)
Apply(val, sts) == IF sts = << >> THEN val
                   ELSE Apply([val EXCEPT ![Head(sts).f] = Head(sts).v], Tail(sts))

VARIABLES
    mem,        \* [Lines -> line content]: the visible image (= dur with pend applied;
                \* kept as a variable only so that reads are cheap)
    dur,        \* [Lines -> line content]: the durable image
    pend,       \* [Lines -> Seq(store)]: visible, not known to be durable
    mark,       \* [Threads -> [Lines -> Nat]]: prefix of pend[l] covered by t's pwbs
    published,  \* objects in use by the data structure (durable; see Publish)
    \* DRAM, per thread (lost at a crash)
    pc,         \* where the thread is inside a multi-step operation
    handed,     \* objects handed to the caller, not yet published or freed
    filling,    \* freed objects not yet in a completed set
    spare,      \* an exhausted array the thread may reuse (or NoArray)
    oldArr,     \* the exhausted array being replaced (spare after the fence)
    xferSet,    \* the array the thread holds in steps 3 and 6 (or NoArray)
    xferChunk,  \* the chunk the thread holds in step 4 (0 = none)
    needsFix,   \* the slot has not been recovered since the last crash
    fresh,      \* arrays never used yet (the array allocator is outside the model)
    \* ghost
    crashes,    \* crashes so far
    leaked,     \* objects leaked by the crashes so far
    dblAlloc,   \* an alloc handed out an object that was in use
    leakOutside,\* a crash leaked an object no thread held in DRAM
    leakTooMany \* a crash leaked more than the per-crash bound

pmVars    == <<mem, dur, pend, mark, published>>
dramVars  == <<pc, handed, filling, spare, oldArr, xferSet, xferChunk, needsFix, fresh>>
ghostVars == <<crashes, leaked, dblAlloc, leakOutside, leakTooMany>>
vars      == <<pmVars, dramVars, ghostVars>>

-----------------------------------------------------------------------------
(* Reading memory: every thread sees the visible value (SC).               *)

Vis(l)   == mem[l]
Slot(t)  == Vis(SlotL(t))
Arr(a)   == Vis(ArrL(a))
GHead    == Vis(GlobL).head
NextChunk == Vis(NcL).next

(* Writing memory.  A memory value r = [v, d, p, m] (visible, durable,     *)
(* pending, marks) is threaded through an action's run of stores and       *)
(* fences.  (The actions bind each intermediate value with \E x \in {..}:  *)
(* that makes TLC compute it once.)                                        *)
Cur == [v |-> mem, d |-> dur, p |-> pend, m |-> mark]

\* pfence by t: the first m[t][l] stores of every line become durable.
Fence(t, r) ==
    [v |-> r.v,
     d |-> [l \in Lines |-> Apply(r.d[l], SubSeq(r.p[l], 1, r.m[t][l]))],
     p |-> [l \in Lines |-> SubSeq(r.p[l], r.m[t][l] + 1, Len(r.p[l]))],
     m |-> [u \in Threads |-> [l \in Lines |->
              IF u = t \/ r.m[u][l] <= r.m[t][l] THEN 0
              ELSE r.m[u][l] - r.m[t][l]]]]

\* store st, followed by a pwb of its line by t
Write1(t, r, st) ==
    [r EXCEPT !.v[st.l] = [@ EXCEPT ![st.f] = st.v],
              !.p[st.l] = Append(@, st),
              !.m[t][st.l] = Len(r.p[st.l]) + 1]

\* stores sts, in order, each followed by a pwb of its line by t
RECURSIVE Write(_, _, _)
Write(t, r, sts) == IF sts = << >> THEN r ELSE Write(t, Write1(t, r, Head(sts)), Tail(sts))

SetMem(r) == mem' = r.v /\ dur' = r.d /\ pend' = r.p /\ mark' = r.m

-----------------------------------------------------------------------------
(* Views of the allocator used by the actions and the invariants.          *)

Exhausted(t) == LET al == Slot(t).alloc
                IN  IF al.set = NoArray THEN TRUE ELSE al.idx = Len(Arr(al.set).ents)

\* sets_head as recovery will leave it (step 2's fix-up, if it is on)
EffHead(t) == LET sl == Slot(t)
              IN  IF needsFix[t] /\ FixUp /\ sl.alloc.set # NoArray /\ sl.head = sl.alloc.set
                  THEN Arr(sl.head).link ELSE sl.head

\* the arrays reachable from a stack head, cut after |Arrays| + 1 (a cycle
\* then shows up as a repeated array)
RECURSIVE ChainFrom(_, _)
ChainFrom(a, n) == IF a = NoArray \/ n = 0 THEN << >>
                   ELSE <<a>> \o ChainFrom(Arr(a).link, n - 1)
OwnStack(t) == ChainFrom(EffHead(t), Cardinality(Arrays) + 1)
GlobalStack == ChainFrom(GHead, Cardinality(Arrays) + 1)

RECURSIVE EntriesOf(_)
EntriesOf(ch) == IF ch = << >> THEN << >> ELSE Arr(Head(ch)).ents \o EntriesOf(Tail(ch))

AllocRem(t) == LET al == Slot(t).alloc
               IN  IF al.set = NoArray THEN << >>
                   ELSE SubSeq(Arr(al.set).ents, al.idx + 1, Len(Arr(al.set).ents))
BumpRem(t)  == LET b == Slot(t).bump
               IN  IF b.chunk = 0 THEN << >>
                   ELSE [i \in 1 .. (ChunkSize - b.used) |-> Obj(b.chunk, b.used + i - 1)]

\* objects of the set/chunk the thread holds in DRAM during a transfer
InHand(t) == (IF xferSet[t] # NoArray THEN Range(Arr(xferSet[t]).ents) ELSE {})
             \cup ChunkObjs(xferChunk[t])
\* ... and as long as no visible PM word refers to them yet
InTransfer(t) == IF pc[t] \in {"gpop_fence", "chunk_fence"}
                 THEN InHand(t) ELSE {}

RECURSIVE ConcatOver(_, _)
ConcatOver(f(_), X) == IF X = {} THEN << >>
                       ELSE LET x == CHOOSE y \in X : TRUE
                            IN  f(x) \o ConcatOver(f, X \ {x})

\* The census: every place an object of a handed-out chunk can be.
\* Published, a caller's hands, a filling set, a transfer, an alloc set's
\* remainder, a stack (as recovery will leave it), the rest of a bump chunk.
\* CensusSize counts every occurrence, CensusSet the distinct objects.
OwnEntries(t) == EntriesOf(OwnStack(t))
GlobalEntries == EntriesOf(GlobalStack)
CensusSize ==
    Cardinality(published) + Len(GlobalEntries)
    + SumOver(LAMBDA t : Cardinality(handed[t]) + Cardinality(filling[t])
                         + Cardinality(InTransfer(t)) + Len(AllocRem(t))
                         + Len(OwnEntries(t)) + Len(BumpRem(t)), Threads)
CensusSet ==
    published \cup Range(GlobalEntries)
    \cup UNION {handed[t] \cup filling[t] \cup InTransfer(t) \cup Range(AllocRem(t))
               \cup Range(OwnEntries(t)) \cup Range(BumpRem(t)) : t \in Threads}

Ind(x, X) == IF x \in X THEN 1 ELSE 0

Born    == 1 .. ((NextChunk - 1) * ChunkSize)     \* the objects of chunks handed out
\* objects nobody holds and no allocator state can hand out any more
Lost    == Born \ CensusSet
InUse   == published \cup UNION {handed[t] \cup filling[t] : t \in Threads}
Held(t) == handed[t] \cup filling[t] \cup InHand(t)

\* every array referenced by an alloc set, a stack, a spare or a transfer,
\* one entry per reference
ArrayCensus ==
    GlobalStack
    \o ConcatOver(LAMBDA t : (IF Slot(t).alloc.set # NoArray THEN <<Slot(t).alloc.set>> ELSE << >>)
                             \o OwnStack(t)
                             \o (IF spare[t] # NoArray THEN <<spare[t]>> ELSE << >>)
                             \o (IF pc[t] = "gpop_fence"
                                 THEN <<xferSet[t]>> ELSE << >>), Threads)

-----------------------------------------------------------------------------
(* Initial state: empty slots, empty global stack, no chunk handed out.    *)

Init ==
    /\ mem = [l \in Lines |-> InitLine(l)]
    /\ dur = [l \in Lines |-> InitLine(l)]
    /\ pend = [l \in Lines |-> << >>]
    /\ mark = [t \in Threads |-> [l \in Lines |-> 0]]
    /\ published = {}
    /\ pc = [t \in Threads |-> "idle"]
    /\ handed = [t \in Threads |-> {}]
    /\ filling = [t \in Threads |-> {}]
    /\ spare = [t \in Threads |-> NoArray]
    /\ oldArr = [t \in Threads |-> NoArray]
    /\ xferSet = [t \in Threads |-> NoArray]
    /\ xferChunk = [t \in Threads |-> 0]
    /\ needsFix = [t \in Threads |-> FALSE]
    /\ fresh = Arrays
    /\ crashes = 0
    /\ leaked = {}
    /\ dblAlloc = FALSE
    /\ leakOutside = FALSE
    /\ leakTooMany = FALSE

\* thread t may start an alloc step: allocs wait for the slot's recovery
\* (needsFix is only ever TRUE in the lazy-fix-up mutant, see Crash), and a
\* caller holds at most MaxHanded unpublished objects (a bound of the model)
Ready(t) == pc[t] = "idle" /\ ~needsFix[t] /\ Cardinality(handed[t]) < MaxHanded

\* hand o to the caller; record it if o was in use
HandOut(t, o) ==
    /\ handed' = [handed EXCEPT ![t] = @ \cup {o}]
    /\ dblAlloc' = (dblAlloc \/ o \in InUse)

\* the exhausted array a may be reused: keep it as the spare, or give it back
\* to the array allocator (outside the model: it is simply not reused)
Retire(t, a) ==
    spare' = IF a # NoArray /\ spare[t] = NoArray THEN [spare EXCEPT ![t] = a] ELSE spare

-----------------------------------------------------------------------------
(* Step 1: alloc from the current set.                                     *)

\* step 1: o = entries[index]; store alloc_state = (set, index+1); pwb, NO fence
AllocFromSet(t) ==
    /\ Ready(t)
    /\ ~Exhausted(t)
    /\ LET al == Slot(t).alloc
           o  == Arr(al.set).ents[al.idx + 1]
       IN  /\ SetMem(Write(t, Cur, <<St(SlotL(t), "alloc", [set |-> al.set, idx |-> al.idx + 1])>>))
           /\ HandOut(t, o)
    /\ UNCHANGED <<published, pc, filling, spare, oldArr, xferSet, xferChunk,
                   needsFix, fresh, crashes, leaked, leakOutside, leakTooMany>>

(* Step 2: pop the slot's own stack.                                       *)

\* step 2: store alloc_state = (top, 0), then sets_head = top.link (same line); pwb
\* (PopAllocFirst = FALSE, a mutant: the two stores in the other order)
PopOwn(t) ==
    /\ Ready(t)
    /\ Exhausted(t)
    /\ Slot(t).head # NoArray
    /\ LET top == Slot(t).head
           s1  == St(SlotL(t), "alloc", [set |-> top, idx |-> 0])
           s2  == St(SlotL(t), "head", Arr(top).link)
       IN  SetMem(Write(t, Cur, IF PopAllocFirst THEN <<s1, s2>> ELSE <<s2, s1>>))
    /\ oldArr' = [oldArr EXCEPT ![t] = Slot(t).alloc.set]
    /\ pc' = [pc EXCEPT ![t] = "pop_fence"]
    /\ UNCHANGED <<published, handed, filling, spare, xferSet, xferChunk,
                   needsFix, fresh, ghostVars>>

\* step 2: pfence; only now the old exhausted array becomes the spare
PopOwnFence(t) ==
    /\ pc[t] = "pop_fence"
    /\ SetMem(Fence(t, Cur))
    /\ Retire(t, oldArr[t])
    /\ oldArr' = [oldArr EXCEPT ![t] = NoArray]
    /\ pc' = [pc EXCEPT ![t] = "idle"]
    /\ UNCHANGED <<published, handed, filling, xferSet, xferChunk,
                   needsFix, fresh, ghostVars>>

(* Step 3: pop the global stack.                                           *)

\* step 3: CAS global_head from g to g.link (one atomic step: the ABA tag makes
\* the read of g.link and the CAS behave as one); pwb(global line)
PopGlobal(t) ==
    /\ Ready(t)
    /\ Exhausted(t)
    /\ Slot(t).head = NoArray
    /\ GHead # NoArray
    /\ LET g == GHead
       IN  /\ SetMem(Write(t, Cur, <<St(GlobL, "head", Arr(g).link)>>))
           /\ xferSet' = [xferSet EXCEPT ![t] = g]
    /\ oldArr' = [oldArr EXCEPT ![t] = Slot(t).alloc.set]
    /\ pc' = [pc EXCEPT ![t] = "gpop_fence"]
    /\ UNCHANGED <<published, handed, filling, spare, xferChunk,
                   needsFix, fresh, ghostVars>>

\* step 3: pfence (the pop is durable); THEN store alloc_state = (g, 0); pwb;
\* pfence; only now the old exhausted array becomes the spare
PopGlobalInstall(t) ==
    /\ pc[t] = "gpop_fence"
    /\ \E r1 \in {Fence(t, Cur)} :
       \E r2 \in {Write(t, r1, <<St(SlotL(t), "alloc", [set |-> xferSet[t], idx |-> 0])>>)} :
          SetMem(Fence(t, r2))
    /\ Retire(t, oldArr[t])
    /\ oldArr' = [oldArr EXCEPT ![t] = NoArray]
    /\ xferSet' = [xferSet EXCEPT ![t] = NoArray]
    /\ pc' = [pc EXCEPT ![t] = "idle"]
    /\ UNCHANGED <<published, handed, filling, xferChunk,
                   needsFix, fresh, ghostVars>>

(* Step 4: carve from the bump chunk.                                      *)

\* step 4: no set anywhere but an exhausted alloc set: store alloc_state = 0;
\* pwb; pfence; only then the exhausted array may be reused
ClearAllocState(t) ==
    /\ Ready(t)
    /\ Slot(t).alloc.set # NoArray
    /\ Exhausted(t)
    /\ Slot(t).head = NoArray
    /\ GHead = NoArray
    /\ \E r1 \in {Write(t, Cur, <<St(SlotL(t), "alloc", NoAlloc)>>)} : SetMem(Fence(t, r1))
    /\ Retire(t, Slot(t).alloc.set)
    /\ UNCHANGED <<published, pc, handed, filling, oldArr, xferSet, xferChunk,
                   needsFix, fresh, ghostVars>>

\* step 4: o = chunk.used; store bump = (chunk, used+1); pwb, NO fence
Carve(t) ==
    /\ Ready(t)
    /\ Slot(t).alloc.set = NoArray
    /\ Slot(t).head = NoArray
    /\ GHead = NoArray
    /\ LET b == Slot(t).bump
       IN  /\ b.chunk # 0 /\ b.used < ChunkSize
           /\ SetMem(Write(t, Cur, <<St(SlotL(t), "bump", [chunk |-> b.chunk, used |-> b.used + 1])>>))
           /\ HandOut(t, Obj(b.chunk, b.used))
    /\ UNCHANGED <<published, pc, filling, spare, oldArr, xferSet, xferChunk,
                   needsFix, fresh, crashes, leaked, leakOutside, leakTooMany>>

\* step 4, chunk full (or none yet): c = next_chunk; next_chunk += 1 (atomic); pwb
ClaimChunk(t) ==
    /\ Ready(t)
    /\ Slot(t).alloc.set = NoArray
    /\ Slot(t).head = NoArray
    /\ GHead = NoArray
    /\ Slot(t).bump.chunk = 0 \/ Slot(t).bump.used = ChunkSize
    /\ NextChunk <= NumChunks
    /\ SetMem(Write(t, Cur, <<St(NcL, "next", NextChunk + 1)>>))
    /\ xferChunk' = [xferChunk EXCEPT ![t] = NextChunk]
    /\ pc' = [pc EXCEPT ![t] = "chunk_fence"]
    /\ UNCHANGED <<published, handed, filling, spare, oldArr, xferSet,
                   needsFix, fresh, ghostVars>>

\* step 4: pfence (next_chunk durable); THEN store bump = (c, 0); pwb; pfence
InstallChunk(t) ==
    /\ pc[t] = "chunk_fence"
    /\ \E r1 \in {Fence(t, Cur)} :
       \E r2 \in {Write(t, r1, <<St(SlotL(t), "bump", [chunk |-> xferChunk[t], used |-> 0])>>)} :
          SetMem(Fence(t, r2))
    /\ xferChunk' = [xferChunk EXCEPT ![t] = 0]
    /\ pc' = [pc EXCEPT ![t] = "idle"]
    /\ UNCHANGED <<published, handed, filling, spare, oldArr, xferSet,
                   needsFix, fresh, ghostVars>>

(* The caller: publish.                                                    *)

\* step 1/4 contract: the caller pfences, then makes o reachable from a
\* persistent root (modelled as durable at once: the worst case for us)
Publish(t, o) ==
    /\ pc[t] = "idle"
    /\ o \in handed[t]
    /\ IF FenceBeforePublish THEN SetMem(Fence(t, Cur)) ELSE UNCHANGED <<mem, dur, pend, mark>>
    /\ published' = published \cup {o}
    /\ handed' = [handed EXCEPT ![t] = @ \ {o}]
    /\ UNCHANGED <<pc, filling, spare, oldArr, xferSet, xferChunk,
                   needsFix, fresh, ghostVars>>

(* Step 5: free.                                                           *)

\* the objects t may free: published ones (durably unlinked by the caller,
\* whichever thread published them), and its own unpublished ones.
\* (FreeOwnOrPublished = FALSE, a mutant: also objects another thread
\* allocated and handed over in DRAM without publishing them.)
Freeable(t) == published \cup handed[t]
               \cup (IF FreeOwnOrPublished THEN {} ELSE UNION {handed[u] : u \in Threads})
\* remove o from whichever caller holds it
Unhand(o) == [u \in Threads |-> handed[u] \ {o}]

\* step 5: free(o), DRAM only: add o to the filling set (not yet S entries)
Free(t, o) ==
    /\ pc[t] = "idle"
    /\ o \in Freeable(t)
    /\ Cardinality(filling[t]) + 1 < S
    /\ published' = published \ {o}
    /\ handed' = Unhand(o)
    /\ filling' = [filling EXCEPT ![t] = @ \cup {o}]
    /\ UNCHANGED <<mem, dur, pend, mark, pc, spare, oldArr, xferSet, xferChunk,
                   needsFix, fresh, ghostVars>>

\* step 5: free(o) fills the set to S entries: complete it.  Take the spare
\* (or a new array), write entries, count, link = sets_head; pwb; pfence;
\* store sets_head = array; pwb; pfence.
FreeAndComplete(t, o) ==
    /\ pc[t] = "idle"     \* (needsFix[t] only in the lazy-fix-up mutant: it does not wait)
    /\ o \in Freeable(t)
    /\ Cardinality(filling[t]) + 1 = S
    /\ \E a \in IF spare[t] # NoArray THEN {spare[t]} ELSE fresh :
          /\ \E r1 \in {Write(t, Cur, <<St(ArrL(a), "ents", SetToSeq(filling[t] \cup {o})),
                                       St(ArrL(a), "link", Slot(t).head)>>)} :
             \E r2 \in {Fence(t, r1)} :
             \E r3 \in {Write(t, r2, <<St(SlotL(t), "head", a)>>)} :
                SetMem(Fence(t, r3))
          /\ spare' = [spare EXCEPT ![t] = NoArray]
          /\ fresh' = fresh \ {a}
    /\ published' = published \ {o}
    /\ handed' = Unhand(o)
    /\ filling' = [filling EXCEPT ![t] = {}]
    /\ UNCHANGED <<pc, oldArr, xferSet, xferChunk, needsFix, ghostVars>>

(* Step 6: donate the top set of the own stack to the global stack.        *)
(* "When the own stack is long" is a policy; any non-empty stack may       *)
(* donate here, which covers every policy.                                 *)

\* step 6: pop own stack durably: store sets_head = set.link; pwb; pfence;
\* then push on the global stack: store set.link = g; pwb; pfence; CAS
\* global_head from g to set; pwb.  One step: the set is private from the
\* pop to the CAS (so reading g and the CAS may as well be atomic: a failed
\* CAS only rewrites set.link), and a crash before the CAS is durable is a
\* crash that drops the CAS from the global line.  DonateLinkFence = FALSE
\* (a mutant): no pfence between set.link and the CAS.
Donate(t) ==
    /\ pc[t] = "idle"     \* (needsFix[t] only in the lazy-fix-up mutant: it does not wait)
    /\ Slot(t).head # NoArray
    /\ LET x  == Slot(t).head
       IN  /\ \E r1 \in {Write(t, Cur, <<St(SlotL(t), "head", Arr(x).link)>>)} :
              \E r2 \in {Fence(t, r1)} :
              \E r3 \in {Write(t, r2, <<St(ArrL(x), "link", GHead)>>)} :
              \E r4 \in {IF DonateLinkFence THEN Fence(t, r3) ELSE r3} :
                 SetMem(Write(t, r4, <<St(GlobL, "head", x)>>))
           /\ xferSet' = [xferSet EXCEPT ![t] = x]
    /\ pc' = [pc EXCEPT ![t] = "don_fence"]
    /\ UNCHANGED <<published, handed, filling, spare, oldArr, xferChunk,
                   needsFix, fresh, ghostVars>>

\* step 6: pfence (the push is durable)
DonateFence(t) ==
    /\ pc[t] = "don_fence"
    /\ SetMem(Fence(t, Cur))
    /\ xferSet' = [xferSet EXCEPT ![t] = NoArray]
    /\ pc' = [pc EXCEPT ![t] = "idle"]
    /\ UNCHANGED <<published, handed, filling, spare, oldArr, xferChunk,
                   needsFix, fresh, ghostVars>>

(* Step 7: crash and recovery.                                             *)

\* for every line with pending stores, how many of them the crash keeps
PrefixChoices ==
    LET PL == {l \in Lines : pend[l] # << >>}
        mx == IF PL = {} THEN 0 ELSE CHOOSE n \in {Len(pend[l]) : l \in PL} :
                                        \A l \in PL : Len(pend[l]) <= n
    IN  {[l \in Lines |-> IF l \in PL THEN k[l] ELSE 0] :
            k \in {f \in [PL -> 0 .. mx] : \A l \in PL : f[l] <= Len(pend[l])}}

\* step 2's RECOVERY FIX-UP on slot line of t in the durable image d: if
\* alloc_state.set # none and sets_head = alloc_state.set then sets_head :=
\* link(sets_head).  FixUp = FALSE (a mutant): recovery does nothing.
FixUpSlot(d, t) ==
    LET sl == d[SlotL(t)]
    IN  IF FixUp /\ sl.alloc.set # NoArray /\ sl.head = sl.alloc.set
        THEN [sl EXCEPT !.head = d[ArrL(sl.head)].link] ELSE sl

\* step 7: crash.  Every line keeps a prefix of its pending stores; DRAM is
\* lost.  Then every slot is recovered before it is used: with
\* FixUpBeforeAnyUse, at once (the fix-up is one store + pwb + pfence to the
\* slot's own line, reading only the slot's own stack, which no other thread
\* touches; it is idempotent, and a crash inside it leaves the state before or
\* after it; so running it here is the same as running it lazily before the
\* slot's first use).  Without it (a mutant), lazily by Recover(t), which only
\* alloc waits for.
\* Ghost: the objects that are now in no place of the census are leaked by
\* this crash; they must be objects the threads held in DRAM, and not more
\* than the bound.
Crash ==
    /\ crashes < MaxCrashes
    /\ \E k \in PrefixChoices :
          LET d1 == [l \in Lines |-> Apply(dur[l], SubSeq(pend[l], 1, k[l]))]
          IN  dur' = IF FixUpBeforeAnyUse
                     THEN [l \in Lines |-> IF l[1] = "slot" THEN FixUpSlot(d1, l[2]) ELSE d1[l]]
                     ELSE d1
    /\ mem' = dur'
    /\ pend' = [l \in Lines |-> << >>]
    /\ mark' = [t \in Threads |-> [l \in Lines |-> 0]]
    /\ UNCHANGED <<published, fresh>>
    /\ pc' = [t \in Threads |-> "idle"]
    /\ handed' = [t \in Threads |-> {}]
    /\ filling' = [t \in Threads |-> {}]
    /\ spare' = [t \in Threads |-> NoArray]
    /\ oldArr' = [t \in Threads |-> NoArray]
    /\ xferSet' = [t \in Threads |-> NoArray]
    /\ xferChunk' = [t \in Threads |-> 0]
    /\ needsFix' = [t \in Threads |-> ~FixUpBeforeAnyUse]
    /\ crashes' = crashes + 1
    /\ dblAlloc' = dblAlloc
    /\ leaked' = Lost'
    /\ LET newLeak == leaked' \ leaked
       IN  /\ leakOutside' = (leakOutside \/ ~(newLeak \subseteq UNION {Held(t) : t \in Threads}))
           /\ leakTooMany' = (leakTooMany \/ Cardinality(newLeak) >
                  SumOver(LAMBDA t : Cardinality(handed[t]) + LeakPerThread, Threads))

\* step 2's RECOVERY FIX-UP, lazily (only when FixUpBeforeAnyUse = FALSE):
\* before the slot's first alloc after a crash: the fix-up above; pwb; pfence.
Recover(t) ==
    /\ needsFix[t]
    /\ pc[t] = "idle"
    /\ LET sl == Slot(t)
       IN  IF FixUp /\ sl.alloc.set # NoArray /\ sl.head = sl.alloc.set
           THEN \E r1 \in {Write(t, Cur, <<St(SlotL(t), "head", Arr(sl.head).link)>>)} :
                   SetMem(Fence(t, r1))
           ELSE UNCHANGED <<mem, dur, pend, mark>>
    /\ needsFix' = [needsFix EXCEPT ![t] = FALSE]
    /\ UNCHANGED <<published, pc, handed, filling, spare, oldArr, xferSet, xferChunk,
                   fresh, ghostVars>>

-----------------------------------------------------------------------------

Next ==
    \/ \E t \in Threads :
          \/ AllocFromSet(t) \/ PopOwn(t) \/ PopOwnFence(t)
          \/ PopGlobal(t) \/ PopGlobalInstall(t)
          \/ ClearAllocState(t) \/ Carve(t) \/ ClaimChunk(t) \/ InstallChunk(t)
          \/ Donate(t) \/ DonateFence(t)
          \/ Recover(t)
          \/ \E o \in Objects : Publish(t, o) \/ Free(t, o) \/ FreeAndComplete(t, o)
    \/ Crash

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* Properties.                                                             *)

PCs == {"idle", "pop_fence", "gpop_fence", "chunk_fence", "don_fence"}

StoreOK(st) ==
    /\ st.l \in Lines
    /\ CASE st.f = "alloc"  -> st.v \in [set : ArrayOrNone, idx : 0 .. S]
         [] st.f = "bump"   -> st.v \in [chunk : 0 .. NumChunks, used : 0 .. ChunkSize]
         [] st.f \in {"head", "link"} -> st.v \in ArrayOrNone
         [] st.f = "ents"   -> st.v \in Seq(Objects)
         [] st.f = "next"   -> st.v \in 1 .. NumChunks + 1
         [] OTHER           -> FALSE

TypeOK ==
    /\ \A l \in Lines : mem[l] = Apply(dur[l], pend[l])
    /\ \A l \in Lines : \A i \in DOMAIN pend[l] : StoreOK(pend[l][i])
    /\ \A t \in Threads :
          /\ Slot(t).alloc \in [set : ArrayOrNone, idx : 0 .. S]
          /\ Slot(t).head \in ArrayOrNone
          /\ Slot(t).bump \in [chunk : 0 .. NumChunks, used : 0 .. ChunkSize]
    /\ \A a \in Arrays : Arr(a).link \in ArrayOrNone /\ Arr(a).ents \in Seq(Objects)
    /\ GHead \in ArrayOrNone
    /\ NextChunk \in 1 .. NumChunks + 1
    /\ mark \in [Threads -> [Lines -> Nat]]
    /\ published \subseteq Objects
    /\ pc \in [Threads -> PCs]
    /\ handed \in [Threads -> SUBSET Objects]
    /\ filling \in [Threads -> SUBSET Objects]
    /\ spare \in [Threads -> ArrayOrNone]
    /\ oldArr \in [Threads -> ArrayOrNone]
    /\ xferSet \in [Threads -> ArrayOrNone]
    /\ xferChunk \in [Threads -> 0 .. NumChunks]
    /\ needsFix \in [Threads -> BOOLEAN]
    /\ fresh \subseteq Arrays
    /\ crashes \in 0 .. MaxCrashes
    /\ leaked \subseteq Objects
    /\ {dblAlloc, leakOutside, leakTooMany} \subseteq BOOLEAN

\* THE safety property: no alloc ever handed out an object that was in use
\* (published, held by a caller, or freed into a filling set), and the
\* objects in use are in one place each.  Crashes included: after a crash
\* only published objects are in use, and recovery must not make any of
\* them allocatable again.
NoDoubleAllocation ==
    /\ ~dblAlloc
    /\ \A o \in Objects :
          Ind(o, published) + SumOver(LAMBDA t : Ind(o, handed[t]) + Ind(o, filling[t]), Threads) <= 1

\* The census, stronger and checked in every state: an object of a handed-out
\* chunk is in at most one place (published / a caller's hands / a filling
\* set / a transfer / an alloc set's remainder / a stack / a bump chunk's
\* rest), so nothing the allocator can hand out is in use or can be handed
\* out twice, whatever the interleaving.
Exclusive == CensusSize = Cardinality(CensusSet) /\ CensusSet \subseteq Born

\* No array is referenced from two places (alloc sets, stacks, spares,
\* transfers); in particular no stack has a cycle or shares a tail.
ArraysExclusive == Len(ArrayCensus) = Cardinality(Range(ArrayCensus))

\* Leaks happen only at crashes, and only to objects some thread held in
\* DRAM at that crash: allocated-but-unpublished objects, a filling set, the
\* set or chunk in transfer (steps 3, 5, 6, 4).  Everything on a durable
\* stack, in an alloc set or in a bump chunk survives.
LeakedWereInFlight == ~leakOutside

\* The count form, per crash: at most, per thread, its allocated-but-
\* unpublished objects plus (S - 1) + max(S, ChunkSize).
LeakBound == ~leakTooMany

\* The DRAM a thread holds never exceeds what the leak bound allows for it.
HeldBound == \A t \in Threads : Cardinality(filling[t] \cup InHand(t)) <= LeakPerThread

\* Nothing is lost except by a crash: the objects in no place of the census
\* are exactly those the crashes so far leaked.
Conservation == Lost = leaked

\* Refinement: the heap implements an atomic durable allocator.
Abstract == INSTANCE HeapAbstract
AbstractSpec == Abstract!Spec

\* symmetry of thread ids and of array addresses
Symmetry == Permutations(Threads) \cup Permutations(Arrays)
=============================================================================

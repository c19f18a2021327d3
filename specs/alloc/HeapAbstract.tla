------------------------------ MODULE HeapAbstract ------------------------------
(***************************************************************************)
(* The atomic durable allocator that Heap.tla refines.                     *)
(*                                                                         *)
(* An object is published (in use by a persistent data structure, survives *)
(* crashes), handed to a thread's caller (allocated, not yet published),   *)
(* leaked, or free.  Alloc hands out only free objects: this is where a    *)
(* double allocation would break the refinement.  A crash drops what the  *)
(* callers held and may leak some objects that were not published: per    *)
(* thread at most its unpublished objects plus LeakPerThread.              *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets

CONSTANTS Threads, Objects, LeakPerThread

VARIABLES published, handed, leaked

vars == <<published, handed, leaked>>

AllHanded == UNION {handed[t] : t \in Threads}
FreeObjs  == Objects \ (published \cup AllHanded \cup leaked)

RECURSIVE SumOver(_, _)
SumOver(f(_), X) == IF X = {} THEN 0
                    ELSE LET x == CHOOSE y \in X : TRUE
                         IN  f(x) + SumOver(f, X \ {x})

Init == published = {} /\ handed = [t \in Threads |-> {}] /\ leaked = {}

Alloc(t, o) ==
    /\ o \in FreeObjs
    /\ handed' = [handed EXCEPT ![t] = @ \cup {o}]
    /\ UNCHANGED <<published, leaked>>

Publish(t, o) ==
    /\ o \in handed[t]
    /\ handed' = [handed EXCEPT ![t] = @ \ {o}]
    /\ published' = published \cup {o}
    /\ UNCHANGED leaked

Free(t, o) ==
    /\ o \in published \cup handed[t]
    /\ published' = published \ {o}
    /\ handed' = [handed EXCEPT ![t] = @ \ {o}]
    /\ UNCHANGED leaked

Crash ==
    /\ handed' = [t \in Threads |-> {}]
    /\ published' = published
    /\ leaked \subseteq leaked'
    /\ leaked' \ leaked \subseteq FreeObjs \cup AllHanded
    /\ Cardinality(leaked' \ leaked)
         <= SumOver(LAMBDA t : Cardinality(handed[t]) + LeakPerThread, Threads)

Next == \E t \in Threads, o \in Objects : Alloc(t, o) \/ Publish(t, o) \/ Free(t, o)
        \/ Crash

Spec == Init /\ [][Next]_vars
=============================================================================

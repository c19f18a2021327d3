----------------------------- MODULE DurableObject -----------------------------
(***************************************************************************)
(* The abstract atomic durable object: the specification a persistent     *)
(* construction refines (STYLE.md: "Correctness is stated as refinement of *)
(* an abstract durable object (INSTANCE ... WITH)"), with its history of   *)
(* invokes, returns, crashes and recovers (Histories.tla) kept in a        *)
(* history variable.                                                       *)
(*                                                                         *)
(* Each operation takes effect atomically at one step between its invoke  *)
(* and its return (TakeEffect, its linearization point) on the object     *)
(* state `obj`, which survives crashes (durability). A crash cuts off the *)
(* operations in flight: each either took effect before the crash or not; *)
(* one that did not may still take effect once later (LateEffect: helped  *)
(* by recovery or by another thread), HISTORY.md's "may take effect at    *)
(* most once, anywhere after its invocation". With Detectable, recovery   *)
(* then reports each cut-off operation exactly once (Recover): its result *)
(* if it took effect, NoEffect if not.                                    *)
(*                                                                         *)
(* Properties (checked by DurableObjectMC.tla): every history is well     *)
(* formed and durably linearizable, and, with Detectable, detectable once *)
(* every cut-off operation has been recovered. That is the soundness of   *)
(* DurableLinearizability.tla on every history this object can produce,   *)
(* up to the bounds; the mutants in mutants/ show that a volatile object, *)
(* a recovery that re-executes, and a recovery that misreports are caught. *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, Histories

CONSTANTS
    Threads,           \* thread ids (naturals: they appear in the history)
    SeqInit,           \* the sequential object (SeqObjects.tla or your own)
    SeqApply(_, _, _),
    Calls,             \* the calls clients make: a set of [op |-> .., args |-> ..]
    MaxOps,            \* bound on invocations
    MaxCrashes,        \* bound on crashes
    Detectable         \* TRUE: recovery reports every cut-off operation

ASSUME Threads \subseteq Nat /\ MaxOps \in Nat /\ MaxCrashes \in Nat /\ Detectable \in BOOLEAN

\* The durable-linearizability operators over this object.
DL == INSTANCE DurableLinearizability

None == [id |-> 0]   \* no operation in flight

VARIABLES
    obj,       \* the object's state (durable)
    inflight,  \* [Threads -> operation record or None]; an operation record
               \* is [id, thread, op, args, effect (taken effect?), result]
    cut,       \* operation records cut off by a crash, not yet recovered
    hist,      \* the history so far (Histories.tla)
    nops,      \* operations invoked so far (ids are 1 .. nops)
    crashes    \* crashes so far

vars == <<obj, inflight, cut, hist, nops, crashes>>

Calling(t) == inflight[t].id # 0

TypeOK ==
    /\ DOMAIN inflight = Threads
    /\ \A t \in Threads :
          \/ ~Calling(t)
          \/ /\ DOMAIN inflight[t] = {"id", "thread", "op", "args", "effect", "result"}
             /\ inflight[t].id \in 1 .. nops /\ inflight[t].thread = t
             /\ inflight[t].effect \in BOOLEAN
    /\ \A o \in cut : o.id \in 1 .. nops /\ o.effect \in BOOLEAN
    /\ \A i \in DOMAIN hist : EventShapeOK(hist[i])
    /\ nops \in 0 .. MaxOps
    /\ crashes \in 0 .. MaxCrashes

Init ==
    /\ obj = SeqInit
    /\ inflight = [t \in Threads |-> None]
    /\ cut = {}
    /\ hist = <<>>
    /\ nops = 0
    /\ crashes = 0

\* A client on thread t invokes a call (HISTORY.md: invoke; a thread has at
\* most one pending operation).
Invoke(t, c) ==
    /\ ~Calling(t) /\ nops < MaxOps
    /\ nops' = nops + 1
    /\ inflight' = [inflight EXCEPT ![t] =
          [id |-> nops + 1, thread |-> t, op |-> c.op, args |-> c.args,
           effect |-> FALSE, result |-> Null]]
    /\ hist' = Append(hist, EvInvoke(nops + 1, t, c.op, c.args))
    /\ UNCHANGED <<obj, cut, crashes>>

\* The linearization point: the operation takes effect, atomically.
TakeEffect(t) ==
    /\ Calling(t) /\ ~inflight[t].effect
    /\ LET r == SeqApply(obj, inflight[t].op, inflight[t].args) IN
       /\ obj' = r[1]
       /\ inflight' = [inflight EXCEPT ![t].effect = TRUE, ![t].result = r[2]]
    /\ UNCHANGED <<cut, hist, nops, crashes>>

\* The operation returns its result (HISTORY.md: return).
Return(t) ==
    /\ Calling(t) /\ inflight[t].effect
    /\ hist' = Append(hist, EvReturn(inflight[t].id, inflight[t].result))
    /\ inflight' = [inflight EXCEPT ![t] = None]
    /\ UNCHANGED <<obj, cut, nops, crashes>>

\* A full-system crash: every operation in flight is cut off; the object's
\* state is durable (HISTORY.md: crash).
Crash ==
    /\ crashes < MaxCrashes
    /\ crashes' = crashes + 1
    /\ hist' = Append(hist, EvCrash)
    /\ cut' = cut \cup {inflight[t] : t \in {u \in Threads : Calling(u)}}
    /\ inflight' = [t \in Threads |-> None]
    /\ UNCHANGED <<obj, nops>>

\* A cut-off operation that had not taken effect takes effect after the
\* crash, once ("anywhere after its invocation").
LateEffect(o) ==
    /\ o \in cut /\ ~o.effect
    /\ LET r == SeqApply(obj, o.op, o.args) IN
       /\ obj' = r[1]
       /\ cut' = (cut \ {o}) \cup {[o EXCEPT !.effect = TRUE, !.result = r[2]]}
    /\ UNCHANGED <<inflight, hist, nops, crashes>>

\* Detectable recovery reports a cut-off operation: "the operation took
\* effect exactly once, with that result", or NoEffect.
Recover(o) ==
    /\ Detectable /\ o \in cut
    /\ hist' = Append(hist, EvRecover(o.id, IF o.effect THEN o.result ELSE NoEffect))
    /\ cut' = cut \ {o}
    /\ UNCHANGED <<obj, inflight, nops, crashes>>

Next ==
    \/ \E t \in Threads : \/ \E c \in Calls : Invoke(t, c)
                          \/ TakeEffect(t)
                          \/ Return(t)
    \/ Crash
    \/ \E o \in cut : LateEffect(o) \/ Recover(o)

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* Properties of the history.                                              *)

HistoryWellFormed == WellFormed(hist)

HistoryDurablyLinearizable == DL!DurablyLinearizable(hist)

\* Once recovery has reported every cut-off operation, the history is
\* detectable (only claimed with Detectable).
HistoryDetectable == (Detectable /\ cut = {}) => DL!Detectable(hist)
=============================================================================

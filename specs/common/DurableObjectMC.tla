----------------------------- MODULE DurableObjectMC -----------------------------
(***************************************************************************)
(* Model of DurableObject.tla over an object of SeqObjects.tla (constant   *)
(* Obj), checking that every history it produces is well formed, durably   *)
(* linearizable and (with Detectable, once recovered) detectable: the      *)
(* soundness of DurableLinearizability.tla on all histories up to the      *)
(* bounds, where the hand-written cases of DurableLinearizabilityMC.tla    *)
(* check chosen ones.                                                      *)
(*                                                                         *)
(* Constant Mutation adds one broken behaviour (the mutants in mutants/):  *)
(*   "volatile"  a crash loses the object's state (back to SeqInit): a    *)
(*               completed operation is lost                              *)
(*   "reexecute" recovery re-executes a cut-off operation that had already *)
(*               taken effect: it takes effect twice                      *)
(*   "misreport" recovery reports NoEffect for an operation that took      *)
(*               effect                                                    *)
(***************************************************************************)
EXTENDS DurableObject, SeqObjects, TLC

CONSTANTS Obj, Mutation

MCInit == ObjectInit(Obj)
MCApply(s, op, args) == ObjectApply(Obj, s, op, args)

Call(op, args) == [op |-> op, args |-> args]
MCCalls ==
    CASE Obj = "counter"  -> {Call("add", <<1>>), Call("get", <<>>)}
      [] Obj = "register" -> {Call("write", <<1>>), Call("cas", <<0, 2>>), Call("read", <<>>)}
      [] Obj = "queue"    -> {Call("enq", <<1>>), Call("enq", <<2>>), Call("deq", <<>>)}
      [] Obj = "stack"    -> {Call("push", <<1>>), Call("push", <<2>>), Call("pop", <<>>)}
      [] Obj = "set"      -> {Call("insert", <<1>>), Call("remove", <<1>>), Call("contains", <<1>>)}
      [] Obj = "map"      -> {Call("put", <<1, 1>>), Call("put", <<1, 2>>), Call("get", <<1>>)}

\* "volatile": the crash of a volatile object.
VolatileCrash ==
    /\ Mutation = "volatile"
    /\ crashes < MaxCrashes
    /\ crashes' = crashes + 1
    /\ hist' = Append(hist, EvCrash)
    /\ cut' = cut \cup {inflight[t] : t \in {u \in Threads : Calling(u)}}
    /\ inflight' = [t \in Threads |-> None]
    /\ obj' = SeqInit
    /\ UNCHANGED nops

\* "reexecute": recovery runs a cut-off operation again.
ReExecute(o) ==
    /\ Mutation = "reexecute"
    /\ o \in cut /\ o.effect
    /\ obj' = SeqApply(obj, o.op, o.args)[1]
    /\ UNCHANGED <<inflight, cut, hist, nops, crashes>>

\* "misreport": recovery says an operation that took effect did not.
Misreport(o) ==
    /\ Mutation = "misreport"
    /\ Detectable /\ o \in cut /\ o.effect
    /\ hist' = Append(hist, EvRecover(o.id, NoEffect))
    /\ cut' = cut \ {o}
    /\ UNCHANGED <<obj, inflight, nops, crashes>>

MCNext == Next \/ VolatileCrash \/ \E o \in cut : ReExecute(o) \/ Misreport(o)
MCSpec == Init /\ [][MCNext]_vars
=============================================================================

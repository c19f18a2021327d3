------------------------- MODULE DetectableCasAbstract -------------------------
(***************************************************************************)
(* The atomic, detectable, durable CAS register that DetectableCAS.tla     *)
(* refines (PROPERTY AbstractSpec there).                                  *)
(*                                                                         *)
(* Each thread runs a fixed number of CAS operations one after the other.  *)
(* An operation, once invoked, is pending until it returns; crashes are    *)
(* invisible here (a memento operation is re-executed after a crash until  *)
(* it returns, so a crash only makes it longer).                           *)
(*                                                                         *)
(*  - Commit(S): the operations of S take effect atomically, each exactly  *)
(*    once, one after the other, each on a location holding its `old`      *)
(*    value (one flush or crash may make several first plain CASes on one  *)
(*    location durable at once, see the refinement mapping in              *)
(*    DetectableCAS.tla).  S is the set of operations whose `acom` the     *)
(*    step sets: this module is written as the refinement target (Next    *)
(*    mentions primed variables in guards), not to be model-checked alone. *)
(*  - Return(t, i, "OK") only for an operation that took effect;          *)
(*    Return(t, i, "Err") only for one that did not, and only if the       *)
(*    register held a value other than `old` at some moment since its      *)
(*    invocation (`afail`: the failed CAS linearizes at that moment).      *)
(*  - An operation returns once: arep[t][i] is the set of results it ever  *)
(*    reported; a re-execution after a crash must report the same result   *)
(*    (then the step is a stutter here), a different one is no step of    *)
(*    this spec.  That is the stability / exactly-once of §2.1 of the seed. *)
(*                                                                         *)
(* The result of a failed CAS is "Err" only; the value it carries is not   *)
(* compared (the seed's recovery at L17 returns a fresh LOADHELP value,    *)
(* not the one the failed CAS saw, see README.md).                         *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets

CONSTANTS Threads, Locs, Vals, NOps, ArgChoices, NoArg

VARIABLES
    areg,    \* [Locs -> Vals]: the register values
    ainv,    \* [Threads -> 0..NOps]: operations invoked so far
    aargs,   \* [Threads -> [1..NOps -> arg]]: [loc, old, new] of each invoked operation
    acom,    \* [Threads -> [1..NOps -> BOOLEAN]]: took effect
    arep,    \* [Threads -> [1..NOps -> SUBSET {"OK", "Err"}]]: results reported
    afail    \* [Threads -> [1..NOps -> BOOLEAN]]: areg[loc] # old at some moment since invoke

avars == <<areg, ainv, aargs, acom, arep, afail>>

Ops == Threads \X (1 .. NOps)
Invoked(o) == o[2] <= ainv[o[1]]
Pending(o) == Invoked(o) /\ arep[o[1]][o[2]] = {}
Arg(o) == aargs[o[1]][o[2]]

\* afail after the register became r (every invoked operation remembers a
\* moment where its location did not hold its old value).
FailAfter(r) ==
    [t \in Threads |-> [i \in 1 .. NOps |->
        afail[t][i] \/ (i <= ainv[t] /\ r[aargs[t][i].loc] # aargs[t][i].old)]]

AInit ==
    /\ areg = [l \in Locs |-> 0]
    /\ ainv = [t \in Threads |-> 0]
    /\ aargs = [t \in Threads |-> [i \in 1 .. NOps |-> NoArg]]
    /\ acom = [t \in Threads |-> [i \in 1 .. NOps |-> FALSE]]
    /\ arep = [t \in Threads |-> [i \in 1 .. NOps |-> {}]]
    /\ afail = [t \in Threads |-> [i \in 1 .. NOps |-> FALSE]]

Invoke(t) ==
    LET i == ainv[t] + 1 IN
    /\ i <= NOps
    /\ i = 1 \/ arep[t][i - 1] # {}
    /\ \E a \in ArgChoices :
         /\ aargs' = [aargs EXCEPT ![t][i] = a]
         /\ afail' = [afail EXCEPT ![t][i] = (areg[a.loc] # a.old)]
    /\ ainv' = [ainv EXCEPT ![t] = i]
    /\ UNCHANGED <<areg, acom, arep>>

\* The operations S take effect, in an order that applies each to its old
\* value: per location, a chain from areg[l] to areg'[l].
RECURSIVE Chain(_, _, _)
Chain(x, y, S) == IF S = {} THEN x = y
                  ELSE \E o \in S : Arg(o).old = x /\ Chain(Arg(o).new, y, S \ {o})

Commit(S) ==
    /\ S # {}
    /\ \A o \in S : Pending(o) /\ ~acom[o[1]][o[2]]
    /\ acom' = [t \in Threads |-> [i \in 1 .. NOps |-> acom[t][i] \/ <<t, i>> \in S]]
    /\ \A l \in Locs : Chain(areg[l], areg'[l], {o \in S : Arg(o).loc = l})
    /\ afail' = FailAfter(areg')
    /\ UNCHANGED <<ainv, aargs, arep>>

Return(t, i, res) ==
    /\ Pending(<<t, i>>)
    /\ res = "OK" => acom[t][i]
    /\ res = "Err" => ~acom[t][i] /\ afail[t][i]
    /\ arep' = [arep EXCEPT ![t][i] = {res}]
    /\ UNCHANGED <<areg, ainv, aargs, acom, afail>>

ANext ==
    \/ \E t \in Threads : Invoke(t)
    \/ /\ acom' # acom   \* (the set S is the operations that took effect)
       /\ Commit({o \in Ops : acom'[o[1]][o[2]] /\ ~acom[o[1]][o[2]]})
    \/ \E t \in Threads, i \in 1 .. NOps, res \in {"OK", "Err"} : Return(t, i, res)

ASpec == AInit /\ [][ANext]_avars
=============================================================================

------------------------ MODULE DurableLinearizability ------------------------
(***************************************************************************)
(* Durable linearizability and detectability of a finite history with      *)
(* crashes (Histories.tla) against a sequential specification, decided by *)
(* brute-force search: the definitions of HISTORY.md, executable by TLC on *)
(* the small histories a model produces.                                   *)
(*                                                                         *)
(* Parameters (instantiate with INSTANCE ... WITH, e.g.                    *)
(*   DLQ == INSTANCE DurableLinearizability                                *)
(*              WITH SeqInit <- QueueInit, SeqApply <- QueueApply          *)
(* with the operators of SeqObjects.tla, or your own):                     *)
(*   SeqInit                  the object's initial state (the header's     *)
(*                            `init`)                                      *)
(*   SeqApply(s, op, args)    <<next state, result>>; deterministic        *)
(*                                                                         *)
(* Definition (HISTORY.md, "Verdicts"; Izraelevitz, Mendes and Scott,      *)
(* DISC 2016, with the detectable operations of Friedman et al., PPoPP     *)
(* 2018): a well-formed history h is durably linearizable iff there are    *)
(*   - a subset S of the operations that were cut off without `recover`   *)
(*     or are pending at the end ("may take effect at most once, anywhere *)
(*     after its invocation, or not at all"), and                          *)
(*   - a total order of Completed(h) \cup Recovered(h) \cup S              *)
(* such that                                                               *)
(*   (1) the order respects real-time order: o1 before o2 whenever         *)
(*       Precedes(h, o1, o2), i.e. o1 returned or was recovered (its       *)
(*       completion point is its `recover` line) before o2 was invoked;    *)
(*   (2) replaying the order through SeqApply from SeqInit gives every     *)
(*       completed operation its returned value and every recovered one    *)
(*       its recovered value ("took effect exactly once, with that result, *)
(*       between its invoke and the recover"); operations in S may have    *)
(*       any result.                                                       *)
(* Operations whose recovery reports NoEffect (Histories.tla) are in no    *)
(* linearization. A crash adds no constraint besides cutting operations    *)
(* off: a completed operation lost by a crash is a violation (this is not *)
(* buffered durable linearizability).                                      *)
(*                                                                         *)
(* The search enumerates, depth-first, the operations that may come next   *)
(* (no unplaced required operation precedes them in real time) and stops  *)
(* as soon as every required operation is placed; it is exponential in    *)
(* the number of concurrent operations and has no memoization. Use it for *)
(* histories of up to ~10 operations; perdure check-history decides large *)
(* ones (and is cross-validated against a brute-force oracle in Rust).     *)
(***************************************************************************)
EXTENDS Histories

CONSTANTS
    SeqInit,          \* initial state of the sequential object
    SeqApply(_, _, _) \* SeqApply(state, op, args) = <<new state, result>>

-----------------------------------------------------------------------------
(* The operations of h, each with what the search needs, computed once.    *)
(* class: "required" (completed, or recovered as having taken effect),    *)
(*        "optional" (cut off without recover, or pending at the end),    *)
(*        "excluded" (recovered as NoEffect: did not take effect).        *)

LOCAL Min(S) == CHOOSE i \in S : \A j \in S : i <= j

\* One pass over the history per operation (the definitions of
\* Histories.tla -- Completed, Recovered, RecoveredNoEffect, EndAt, Result
\* -- computed together; DurableLinearizabilityMC.tla checks they agree).
OpTable(h) ==
    [o \in Ops(h) |->
        LET E   == {i \in Pos(h) : h[i].type # "crash" /\ h[i].id = o}
            inv == Min({i \in E : h[i].type = "invoke"})
            fin == {i \in E : h[i].type \in {"return", "recover"}}
            end == IF fin = {} THEN Never(h) ELSE Min(fin)
            cls == IF fin = {} THEN "optional"
                   ELSE IF h[end].type = "return" THEN "required"
                   ELSE IF SameValue(h[end].value, NoEffect) THEN "excluded"
                   ELSE "required"
        IN [name   |-> h[inv].op,
            args   |-> h[inv].args,
            inv    |-> inv,
            end    |-> end,
            result |-> IF cls = "required" THEN h[end].value ELSE Null,
            class  |-> cls]]

\* The classes by the definitions of Histories.tla.
OpClass(h, o) ==
    IF o \in Completed(h) \cup Recovered(h) THEN "required"
    ELSE IF o \in RecoveredNoEffect(h) THEN "excluded"
    ELSE "optional"

Required(T) == {o \in DOMAIN T : T[o].class = "required"}

\* The operations that may be linearized next, after those in `done`:
\* not excluded, and no unplaced required operation precedes them in real
\* time (rule (1); an optional operation never completes, so it precedes
\* nothing).
Candidates(T, done) ==
    {o \in DOMAIN T \ done :
        /\ T[o].class # "excluded"
        /\ \A p \in Required(T) \ done : ~(T[p].end < T[o].inv)}

\* Placing o next in state st is consistent with rule (2).
Step(T, st, o) == SeqApply(st, T[o].name, T[o].args)
ResultOK(T, st, o) ==
    T[o].class = "optional" \/ SameValue(Step(T, st, o)[2], T[o].result)

\* Is there a linearization of the rest, from state st, with `done` placed?
RECURSIVE Linearizable(_, _, _)
Linearizable(T, st, done) ==
    \/ Required(T) \subseteq done
    \/ \E o \in Candidates(T, done) :
          /\ ResultOK(T, st, o)
          /\ Linearizable(T, Step(T, st, o)[1], done \cup {o})

\* Every linearization of the rest (sequences of operation ids); the same
\* search, collecting instead of stopping at the first. For witnesses and
\* for the test models; exponential.
RECURSIVE LinearizationsFrom(_, _, _)
LinearizationsFrom(T, st, done) ==
    (IF Required(T) \subseteq done THEN {<<>>} ELSE {})
    \cup UNION { { <<o>> \o rest : rest \in LinearizationsFrom(T, Step(T, st, o)[1], done \cup {o}) } :
                 o \in {c \in Candidates(T, done) : ResultOK(T, st, c)} }

-----------------------------------------------------------------------------
(* The verdicts.                                                           *)

\* HISTORY.md: "durably linearizable" -- for well-formed histories only.
DurablyLinearizable(h) == WellFormed(h) /\ Linearizable(OpTable(h), SeqInit, {})

\* Every durable linearization of h (as tuples of operation ids).
Linearizations(h) == IF WellFormed(h) THEN LinearizationsFrom(OpTable(h), SeqInit, {}) ELSE {}

\* What `perdure check-history` prints (and its exit status 0/1/2).
Verdict(h) ==
    IF ~WellFormed(h) THEN "malformed"
    ELSE IF DurablyLinearizable(h) THEN "durably linearizable"
    ELSE "not durably linearizable"

(* Detectability (Friedman, Herlihy, Marathe and Petrank, PPoPP 2018:      *)
(* "detectable execution"; HISTORY.md: "for a detectable operation,        *)
(* reports the outcome of its cut-off operation with recover"): the        *)
(* history is durably linearizable and every operation cut off by a crash *)
(* has its recovery report whether it took effect and with what result:   *)
(* a `recover` with the result (it took effect exactly once, and the      *)
(* linearization must agree) or with NoEffect (it did not take effect,    *)
(* and no linearization may include it). Well-formedness allows at most   *)
(* one `recover` per operation, so each is reported exactly once.         *)
(*                                                                         *)
(* This is a property of a *complete* history, after every recovery has   *)
(* run: a history ending right after a crash, before the recoveries, is   *)
(* durably linearizable but not yet detectable.                           *)

\* Only the operations named in DetOps are detectable (e.g. a read need
\* not be); Detectable(h) makes every operation detectable.
DetectableFor(h, DetOps) ==
    /\ DurablyLinearizable(h)
    /\ \A o \in CutOff(h) : OpName(h, o) \in DetOps => o \in RecoveredAny(h)

Detectable(h) == DurablyLinearizable(h) /\ CutOff(h) \subseteq RecoveredAny(h)
=============================================================================

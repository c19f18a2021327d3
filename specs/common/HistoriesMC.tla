------------------------------ MODULE HistoriesMC ------------------------------
(***************************************************************************)
(* Test model of Histories.tla: the classification of operations          *)
(* (completed, cut off, recovered, recovered as NoEffect, cut off without *)
(* recover, pending at the end), completion points and real-time order,   *)
(* and well-formedness with the first line that breaks a rule, on         *)
(* hand-written histories. One state per case; a failing case is named in *)
(* TLC's trace. Constant WrongCase names a case whose expected CutOff set  *)
(* is deliberately replaced by {} (the mutant in mutants/), "none"         *)
(* otherwise.                                                              *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, Histories

CONSTANT WrongCase

I(id, t, op, args) == EvInvoke(id, t, op, args)
R(id, v) == EvReturn(id, v)
C == EvCrash
V(id, v) == EvRecover(id, v)

\* A well-formed case and its expected classification.
WF(h, ops, completed, cutoff, recovered, noeffect, cutoffNotRecovered, pending, ends, precedes) ==
    [h |-> h, bad |-> 0, ops |-> ops, completed |-> completed, cutoff |-> cutoff,
     recovered |-> recovered, noeffect |-> noeffect, cnr |-> cutoffNotRecovered,
     pending |-> pending, ends |-> ends, precedes |-> precedes]
\* A malformed case: the first line that breaks a rule.
Bad(h, line) ==
    [h |-> h, bad |-> line, ops |-> {}, completed |-> {}, cutoff |-> {}, recovered |-> {},
     noeffect |-> {}, cnr |-> {}, pending |-> {}, ends |-> <<>>, precedes |-> {}]

Cases == [
  \* The example of HISTORY.md.
  history_md |-> WF(
      << I(1, 0, "enq", <<5>>), I(2, 1, "deq", <<>>), R(1, Null), C, V(2, 5),
         I(3, 0, "deq", <<>>), R(3, Null) >>,
      {1, 2, 3}, {1, 3}, {2}, {2}, {}, {}, {},
      <<3, 5, 7>>, {<<1, 3>>, <<2, 3>>}),
  \* Two crashes; a NoEffect recovery; an op cut off by the second crash;
  \* an op pending at the end.
  two_crashes |-> WF(
      << I(1, 0, "write", <<1>>), I(2, 1, "write", <<2>>), C, I(3, 0, "read", <<>>),
         V(2, NoEffect), R(3, 0), I(4, 1, "read", <<>>), C, I(5, 1, "read", <<>>) >>,
      {1, 2, 3, 4, 5}, {3}, {1, 2, 4}, {}, {2}, {1, 4}, {5},
      <<10, 5, 6, 10, 10>>, {<<2, 4>>, <<2, 5>>, <<3, 4>>, <<3, 5>>}),
  \* A recover after the thread started (and finished) a new operation and
  \* after a second crash.
  late_recover |-> WF(
      << I(1, 0, "cas", <<0, 1>>), C, I(2, 0, "read", <<>>), R(2, 0), C, V(1, TRUE) >>,
      {1, 2}, {2}, {1}, {1}, {}, {}, {},
      <<6, 4>>, {}),
  \* Sequential operations of one thread: a chain.
  sequential |-> WF(
      << I(1, 0, "add", <<1>>), R(1, Null), I(2, 0, "add", <<2>>), R(2, Null),
         I(3, 0, "get", <<>>), R(3, 3) >>,
      {1, 2, 3}, {1, 2, 3}, {}, {}, {}, {}, {},
      <<2, 4, 6>>, {<<1, 2>>, <<1, 3>>, <<2, 3>>}),
  empty |-> WF(<<>>, {}, {}, {}, {}, {}, {}, {}, <<>>, {}),
  only_crashes |-> WF(<<C, C>>, {}, {}, {}, {}, {}, {}, {}, <<>>, {}),
  \* The rules of HISTORY.md, each broken once.
  bad_thread_busy |-> Bad(<< I(1, 0, "read", <<>>), I(2, 0, "read", <<>>) >>, 2),
  bad_return_twice |-> Bad(<< I(1, 0, "read", <<>>), R(1, 0), R(1, 0) >>, 3),
  bad_return_unknown |-> Bad(<< R(7, 0) >>, 1),
  bad_return_after_crash |-> Bad(<< I(1, 0, "read", <<>>), C, R(1, 0) >>, 3),
  bad_recover_pending |-> Bad(<< I(1, 0, "read", <<>>), V(1, 0) >>, 2),
  bad_recover_unknown |-> Bad(<< C, V(1, 0) >>, 2),
  bad_recover_twice |-> Bad(<< I(1, 0, "read", <<>>), C, V(1, 0), V(1, 0) >>, 4),
  bad_recover_returned |-> Bad(<< I(1, 0, "read", <<>>), R(1, 0), C, V(1, 0) >>, 4),
  bad_duplicate_id |-> Bad(<< I(1, 0, "read", <<>>), R(1, 0), I(1, 1, "read", <<>>) >>, 3),
  bad_duplicate_id_after_crash |-> Bad(<< I(1, 0, "read", <<>>), C, I(1, 0, "read", <<>>) >>, 3),
  bad_unknown_type |-> Bad(<< [type |-> "header"] >>, 1),
  bad_missing_field |-> Bad(<< [type |-> "invoke", id |-> 1, thread |-> 0, op |-> "read"] >>, 1),
  bad_extra_field |-> Bad(<< I(1, 0, "read", <<>>), [type |-> "return", id |-> 1, value |-> 0, x |-> 1] >>, 2)
]

VARIABLE case
Init == case \in DOMAIN Cases
Next == UNCHANGED case
Spec == Init /\ [][Next]_case

TypeOK == case \in DOMAIN Cases

H == Cases[case].h
E == Cases[case]

ExpectedCutOff == IF case = WrongCase THEN {} ELSE E.cutoff

\* Well-formedness and the first bad line.
WellFormedOK ==
    /\ WellFormed(H) = (E.bad = 0)
    /\ FirstMalformed(H) = E.bad

\* The classification of a well-formed history.
ClassificationOK ==
    E.bad = 0 =>
      /\ Ops(H) = E.ops
      /\ Completed(H) = E.completed
      /\ CutOff(H) = ExpectedCutOff
      /\ Recovered(H) = E.recovered
      /\ RecoveredNoEffect(H) = E.noeffect
      /\ CutOffNotRecovered(H) = E.cnr
      /\ PendingAtEnd(H) = E.pending
      \* every operation is in exactly one class
      /\ \A o \in Ops(H) :
            Cardinality({S \in {Completed(H), Recovered(H), RecoveredNoEffect(H),
                                CutOffNotRecovered(H), PendingAtEnd(H)} : o \in S}) = 1
      /\ \A o \in Ops(H) : EndAt(H, o) = E.ends[o]

\* Real-time order, and that it is a strict partial order consistent with
\* positions.
PrecedesOK ==
    E.bad = 0 =>
      /\ {<<a, b>> \in Ops(H) \X Ops(H) : Precedes(H, a, b)} = E.precedes
      /\ \A a \in Ops(H) : ~Precedes(H, a, a)
      /\ \A a, b, c \in Ops(H) : Precedes(H, a, b) /\ Precedes(H, b, c) => Precedes(H, a, c)

\* Removing the crashes keeps every other event, in order.
WithoutCrashesOK ==
    LET W == WithoutCrashes(H) IN
    /\ \A i \in 1 .. Len(W) : W[i].type # "crash"
    /\ Len(W) = Len(H) - Cardinality({i \in Pos(H) : H[i].type = "crash"})
=============================================================================

------------------------ MODULE DurableLinearizabilityMC ------------------------
(***************************************************************************)
(* Test model of DurableLinearizability.tla: hand-written histories with   *)
(* the verdicts they must get, the same kinds of cases as perdure          *)
(* check-history's unit tests (impl/perdure-check/tests/suite/history_models.rs) *)
(* for all six objects: linearizable histories, a completed operation lost *)
(* by a crash, a cut-off operation taking effect after the crash (allowed) *)
(* or twice (not allowed), recovered results against the state, real-time  *)
(* order, and detectability (every cut-off operation recovered).           *)
(*                                                                         *)
(* One state per case (variable `case`, the case's name, so a failing     *)
(* case is named in TLC's trace); the invariants compare the operators'   *)
(* verdicts with the expected ones. Constants WrongVerdictCase /           *)
(* WrongDetectableCase name a case whose expectation is deliberately       *)
(* flipped (the mutants in mutants/), "none" otherwise.                     *)
(***************************************************************************)
EXTENDS Naturals, Sequences, SeqObjects, Histories

CONSTANTS WrongVerdictCase, WrongDetectableCase

\* Durable linearizability against object `obj` from initial state `init`.
DL(obj, init) == INSTANCE DurableLinearizability
                    WITH SeqInit <- init,
                         SeqApply <- LAMBDA s, op, args : ObjectApply(obj, s, op, args)

\* Shorthand for events (as history_models.rs's `i`, `r`, `c`, `v`).
I(id, t, op, args) == EvInvoke(id, t, op, args)
R(id, v) == EvReturn(id, v)
C == EvCrash
V(id, v) == EvRecover(id, v)

DLin == "durably linearizable"
NotDL == "not durably linearizable"
Bad == "malformed"

\* A case: the object, its initial state, the history, the expected verdict
\* and whether the history is detectable (every cut-off operation recovered,
\* and durably linearizable).
Case(obj, init, h, verdict, det) ==
    [obj |-> obj, init |-> init, h |-> h, verdict |-> verdict, det |-> det]

Cases == [
  (* ---------------------------------------------------------- register *)
  reg_sequential |-> Case("register", 0,
      << I(1, 0, "read", <<>>), R(1, 0), I(2, 0, "write", <<1>>), R(2, Null),
         I(3, 0, "cas", <<1, 2>>), R(3, TRUE), I(4, 0, "cas", <<1, 3>>), R(4, FALSE),
         I(5, 0, "read", <<>>), R(5, 2) >>, DLin, TRUE),
  reg_wrong_initial_read |-> Case("register", 0,
      << I(1, 0, "read", <<>>), R(1, Null) >>, NotDL, FALSE),
  reg_init_given |-> Case("register", 7,
      << I(1, 0, "read", <<>>), R(1, 7) >>, DLin, TRUE),
  \* Real time: write(1) returned before the read was invoked.
  reg_realtime_violation |-> Case("register", 0,
      << I(1, 0, "write", <<1>>), R(1, Null), I(2, 1, "read", <<>>), R(2, 0) >>, NotDL, FALSE),
  \* Overlapping: either order.
  reg_overlap_old |-> Case("register", 0,
      << I(1, 0, "write", <<1>>), I(2, 1, "read", <<>>), R(2, 0), R(1, Null) >>, DLin, TRUE),
  reg_overlap_new |-> Case("register", 0,
      << I(1, 0, "write", <<1>>), I(2, 1, "read", <<>>), R(2, 1), R(1, Null) >>, DLin, TRUE),
  \* A read cannot see a write invoked after it returned.
  reg_read_from_future |-> Case("register", 0,
      << I(2, 1, "read", <<>>), R(2, 1), I(1, 0, "write", <<1>>), R(1, Null) >>, NotDL, FALSE),
  \* A completed write lost by a crash.
  reg_lost_completed_write |-> Case("register", 0,
      << I(1, 0, "write", <<5>>), R(1, Null), C, I(2, 0, "read", <<>>), R(2, 0) >>, NotDL, FALSE),
  reg_completed_write_survives |-> Case("register", 0,
      << I(1, 0, "write", <<5>>), R(1, Null), C, I(2, 0, "read", <<>>), R(2, 5) >>, DLin, TRUE),
  \* A cut-off write may take effect after the crash (allowed) ...
  reg_cutoff_takes_effect_late |-> Case("register", 0,
      << I(1, 0, "write", <<5>>), C, I(2, 0, "read", <<>>), R(2, 0),
         I(3, 1, "read", <<>>), R(3, 5) >>, DLin, FALSE),
  \* ... but only once: nothing brings 0 back.
  reg_cutoff_undone |-> Case("register", 0,
      << I(1, 0, "write", <<5>>), C, I(2, 0, "read", <<>>), R(2, 0),
         I(3, 1, "read", <<>>), R(3, 5), I(4, 1, "read", <<>>), R(4, 0) >>, NotDL, FALSE),
  \* ... or never.
  reg_cutoff_never |-> Case("register", 0,
      << I(1, 0, "write", <<5>>), C, I(2, 0, "read", <<>>), R(2, 0) >>, DLin, FALSE),
  \* A recovered cas result that contradicts the state: cas(0, 1) on 0.
  reg_recovered_cas_contradicts |-> Case("register", 0,
      << I(1, 0, "cas", <<0, 1>>), C, V(1, FALSE) >>, NotDL, FALSE),
  reg_recovered_cas |-> Case("register", 0,
      << I(1, 0, "cas", <<0, 1>>), C, V(1, TRUE), I(2, 0, "read", <<>>), R(2, 1) >>, DLin, TRUE),
  \* A recovered operation took effect before its recover line.
  reg_recovered_not_in_effect |-> Case("register", 0,
      << I(1, 0, "write", <<5>>), C, V(1, Null), I(2, 0, "read", <<>>), R(2, 0) >>, NotDL, FALSE),
  \* ... but it may take effect after the crash, after a read that missed it.
  reg_recovered_after_read |-> Case("register", 0,
      << I(1, 0, "write", <<5>>), C, I(2, 1, "read", <<>>), R(2, 0), V(1, Null),
         I(3, 1, "read", <<>>), R(3, 5) >>, DLin, TRUE),
  \* Recovery reports "did not take effect" (NoEffect, an extension).
  reg_noeffect_respected |-> Case("register", 0,
      << I(1, 0, "write", <<5>>), C, V(1, NoEffect), I(2, 0, "read", <<>>), R(2, 0) >>, DLin, TRUE),
  reg_noeffect_contradicted |-> Case("register", 0,
      << I(1, 0, "write", <<5>>), C, V(1, NoEffect), I(2, 0, "read", <<>>), R(2, 5) >>, NotDL, FALSE),
  \* A pending operation at the end may have taken effect.
  reg_pending_at_end |-> Case("register", 0,
      << I(1, 0, "write", <<1>>), I(2, 1, "read", <<>>), R(2, 1) >>, DLin, TRUE),
  \* Two crashes; the recovery reports after the second one and after the
  \* thread started a new operation.
  reg_late_recover |-> Case("register", 0,
      << I(1, 0, "write", <<5>>), C, I(2, 0, "read", <<>>), R(2, 0), C,
         V(1, Null), I(3, 1, "read", <<>>), R(3, 5) >>, DLin, TRUE),
  (* ----------------------------------------------------------- counter *)
  ctr_concurrent_adds |-> Case("counter", 0,
      << I(1, 0, "add", <<2>>), I(2, 1, "add", <<3>>), R(1, Null), R(2, Null),
         I(3, 0, "get", <<>>), R(3, 5) >>, DLin, TRUE),
  ctr_lost_add |-> Case("counter", 0,
      << I(1, 0, "add", <<2>>), I(2, 1, "add", <<3>>), R(1, Null), R(2, Null),
         I(3, 0, "get", <<>>), R(3, 3) >>, NotDL, FALSE),
  \* A cut-off add taking effect twice.
  ctr_cutoff_twice |-> Case("counter", 0,
      << I(1, 0, "add", <<1>>), C, I(2, 0, "get", <<>>), R(2, 2) >>, NotDL, FALSE),
  ctr_cutoff_once |-> Case("counter", 0,
      << I(1, 0, "add", <<1>>), C, I(2, 0, "get", <<>>), R(2, 1) >>, DLin, FALSE),
  ctr_recovered |-> Case("counter", 10,
      << I(1, 0, "add", <<1>>), C, V(1, Null), I(2, 0, "get", <<>>), R(2, 11) >>, DLin, TRUE),
  (* ------------------------------------------------------------- queue *)
  \* The example of HISTORY.md.
  q_history_md |-> Case("queue", <<>>,
      << I(1, 0, "enq", <<5>>), I(2, 1, "deq", <<>>), R(1, Null), C, V(2, 5),
         I(3, 0, "deq", <<>>), R(3, Null) >>, DLin, TRUE),
  q_fifo |-> Case("queue", <<>>,
      << I(1, 0, "enq", <<1>>), R(1, Null), I(2, 0, "enq", <<2>>), R(2, Null),
         I(3, 1, "deq", <<>>), R(3, 1), I(4, 1, "deq", <<>>), R(4, 2),
         I(5, 1, "deq", <<>>), R(5, Null) >>, DLin, TRUE),
  q_fifo_violation |-> Case("queue", <<>>,
      << I(1, 0, "enq", <<1>>), R(1, Null), I(2, 0, "enq", <<2>>), R(2, Null),
         I(3, 1, "deq", <<>>), R(3, 2) >>, NotDL, FALSE),
  q_init_front_first |-> Case("queue", <<7, 8>>,
      << I(1, 0, "deq", <<>>), R(1, 7) >>, DLin, TRUE),
  \* A cut-off enq taking effect twice.
  q_cutoff_enq_twice |-> Case("queue", <<>>,
      << I(1, 0, "enq", <<5>>), C, I(2, 0, "deq", <<>>), R(2, 5),
         I(3, 0, "deq", <<>>), R(3, 5) >>, NotDL, FALSE),
  q_cutoff_enq_late |-> Case("queue", <<>>,
      << I(1, 0, "enq", <<5>>), C, I(2, 0, "deq", <<>>), R(2, Null),
         I(3, 0, "deq", <<>>), R(3, 5) >>, DLin, FALSE),
  \* A recovered deq result that contradicts the state.
  q_recovered_deq_contradicts |-> Case("queue", <<>>,
      << I(1, 0, "enq", <<5>>), R(1, Null), I(2, 1, "deq", <<>>), C, V(2, 7) >>, NotDL, FALSE),
  \* A completed enq lost by a crash.
  q_lost_enq |-> Case("queue", <<>>,
      << I(1, 0, "enq", <<5>>), R(1, Null), C, I(2, 0, "deq", <<>>), R(2, Null) >>, NotDL, FALSE),
  (* ------------------------------------------------------------- stack *)
  st_lifo |-> Case("stack", <<>>,
      << I(1, 0, "push", <<1>>), R(1, Null), I(2, 0, "push", <<2>>), R(2, Null),
         I(3, 0, "pop", <<>>), R(3, 2), I(4, 0, "pop", <<>>), R(4, 1),
         I(5, 0, "pop", <<>>), R(5, Null) >>, DLin, TRUE),
  st_lifo_violation |-> Case("stack", <<>>,
      << I(1, 0, "push", <<1>>), R(1, Null), I(2, 0, "push", <<2>>), R(2, Null),
         I(3, 0, "pop", <<>>), R(3, 1) >>, NotDL, FALSE),
  st_init_top_first |-> Case("stack", <<7, 8>>,
      << I(1, 0, "pop", <<>>), R(1, 7) >>, DLin, TRUE),
  st_cutoff_pop_recovered |-> Case("stack", <<>>,
      << I(1, 0, "push", <<1>>), R(1, Null), I(2, 1, "pop", <<>>), C, V(2, 1),
         I(3, 0, "pop", <<>>), R(3, Null) >>, DLin, TRUE),
  (* --------------------------------------------------------------- set *)
  set_sequential |-> Case("set", {},
      << I(1, 0, "insert", <<1>>), R(1, TRUE), I(2, 0, "insert", <<1>>), R(2, FALSE),
         I(3, 0, "contains", <<1>>), R(3, TRUE), I(4, 0, "remove", <<1>>), R(4, TRUE),
         I(5, 0, "contains", <<1>>), R(5, FALSE) >>, DLin, TRUE),
  set_double_insert |-> Case("set", {},
      << I(1, 0, "insert", <<1>>), R(1, TRUE), I(2, 1, "insert", <<1>>), R(2, TRUE) >>, NotDL, FALSE),
  set_concurrent_inserts_one_wins |-> Case("set", {},
      << I(1, 0, "insert", <<1>>), I(2, 1, "insert", <<1>>), R(1, FALSE), R(2, TRUE) >>, DLin, TRUE),
  set_lost_insert |-> Case("set", {},
      << I(1, 0, "insert", <<3>>), R(1, TRUE), C, I(2, 0, "contains", <<3>>), R(2, FALSE) >>, NotDL, FALSE),
  (* --------------------------------------------------------------- map *)
  map_sequential |-> Case("map", MapInit,
      << I(1, 0, "put", <<1, 10>>), R(1, Null), I(2, 0, "put", <<1, 20>>), R(2, 10),
         I(3, 0, "get", <<1>>), R(3, 20), I(4, 0, "remove", <<1>>), R(4, 20),
         I(5, 0, "get", <<1>>), R(5, Null) >>, DLin, TRUE),
  map_keys_independent |-> Case("map", MapInit,
      << I(1, 0, "put", <<1, 10>>), I(2, 1, "put", <<2, 20>>), R(2, Null), R(1, Null),
         I(3, 0, "get", <<2>>), R(3, 20), I(4, 1, "get", <<1>>), R(4, 10) >>, DLin, TRUE),
  map_wrong_previous |-> Case("map", MapInit,
      << I(1, 0, "put", <<1, 10>>), R(1, Null), I(2, 0, "put", <<1, 20>>), R(2, Null) >>, NotDL, FALSE),
  map_recovered_put |-> Case("map", MapInit,
      << I(1, 0, "put", <<1, 10>>), C, V(1, Null), I(2, 0, "get", <<1>>), R(2, 10) >>, DLin, TRUE),
  (* --------------------------------------------------------- malformed *)
  bad_thread_busy |-> Case("register", 0,
      << I(1, 0, "write", <<1>>), I(2, 0, "read", <<>>), R(2, 0), R(1, Null) >>, Bad, FALSE),
  bad_duplicate_id |-> Case("register", 0,
      << I(1, 0, "read", <<>>), R(1, 0), I(1, 1, "read", <<>>), R(1, 0) >>, Bad, FALSE),
  bad_return_unknown |-> Case("register", 0, << R(1, 0) >>, Bad, FALSE),
  bad_return_after_crash |-> Case("register", 0,
      << I(1, 0, "write", <<1>>), C, R(1, Null) >>, Bad, FALSE),
  bad_recover_without_crash |-> Case("register", 0,
      << I(1, 0, "write", <<1>>), V(1, Null) >>, Bad, FALSE),
  bad_recover_completed |-> Case("register", 0,
      << I(1, 0, "write", <<1>>), R(1, Null), C, V(1, Null) >>, Bad, FALSE),
  bad_recover_twice |-> Case("register", 0,
      << I(1, 0, "write", <<1>>), C, V(1, Null), V(1, Null) >>, Bad, FALSE),
  bad_return_twice |-> Case("register", 0,
      << I(1, 0, "write", <<1>>), R(1, Null), R(1, Null) >>, Bad, FALSE),
  \* After a crash the thread is free again: a new operation, then the
  \* recovery of the old one, is well-formed.
  ok_thread_free_after_crash |-> Case("register", 0,
      << I(1, 0, "write", <<1>>), C, I(2, 0, "write", <<2>>), R(2, Null), V(1, Null),
         I(3, 0, "read", <<>>), R(3, 1) >>, DLin, TRUE),
  empty |-> Case("queue", <<>>, <<>>, DLin, TRUE)
]

\* Every durable linearization of some cases (tuples of operation ids).
\* A cut-off operation may be left out or placed anywhere after its invoke
\* that is consistent with the results; a NoEffect one is never placed.
ExpectedLins == [
  reg_overlap_old |-> {<<2, 1>>},
  reg_overlap_new |-> {<<1, 2>>},
  reg_cutoff_never |-> {<<2>>, <<2, 1>>},
  reg_cutoff_takes_effect_late |-> {<<2, 1, 3>>},
  reg_recovered_after_read |-> {<<2, 1, 3>>},
  reg_noeffect_respected |-> {<<2>>},
  reg_pending_at_end |-> {<<1, 2>>},
  ctr_cutoff_once |-> {<<1, 2>>},
  q_history_md |-> {<<1, 2, 3>>},
  set_concurrent_inserts_one_wins |-> {<<2, 1>>},
  empty |-> {<<>>}
]

\* The expectations, with the mutants' deliberate flips.
ExpectedVerdict(c) ==
    IF c = WrongVerdictCase
    THEN IF Cases[c].verdict = DLin THEN NotDL ELSE DLin
    ELSE Cases[c].verdict
ExpectedDetectable(c) ==
    IF c = WrongDetectableCase THEN ~Cases[c].det ELSE Cases[c].det

VARIABLE case

Init == case \in DOMAIN Cases
Next == UNCHANGED case
Spec == Init /\ [][Next]_case

TypeOK == case \in DOMAIN Cases

H == Cases[case].h
Ob == Cases[case].obj
In == Cases[case].init

\* The verdict of DurableLinearizability!Verdict is the expected one.
VerdictOK == DL(Ob, In)!Verdict(H) = ExpectedVerdict(case)

\* Detectable(h) is the expected one.
DetectableOK ==
    DL(Ob, In)!Detectable(H) = ExpectedDetectable(case)

\* The linearizations of the cases listed in ExpectedLins are exactly those.
WitnessesOK ==
    case \in DOMAIN ExpectedLins => DL(Ob, In)!Linearizations(H) = ExpectedLins[case]

\* The one-pass operation table agrees with the definitions of Histories.tla.
OpTableAgrees ==
    Cases[case].verdict # Bad =>
      LET T == DL(Ob, In)!OpTable(H) IN
      /\ DOMAIN T = Ops(H)
      /\ \A o \in Ops(H) :
            /\ T[o].class = DL(Ob, In)!OpClass(H, o)
            /\ T[o].inv = InvokeAt(H, o)
            /\ T[o].end = EndAt(H, o)
            /\ T[o].name = OpName(H, o) /\ T[o].args = OpArgs(H, o)
            /\ T[o].class = "required" => SameValue(T[o].result, Result(H, o))

\* The two searches agree: some linearization exists iff the decision
\* procedure says durably linearizable; every linearization found places
\* every required operation once and never an excluded one.
LinearizationsAgree ==
    LET L == DL(Ob, In)!Linearizations(H)
    IN /\ (L # {}) = DL(Ob, In)!DurablyLinearizable(H)
       /\ \A lin \in L :
             /\ \A i, j \in DOMAIN lin : i # j => lin[i] # lin[j]
             /\ (Completed(H) \cup Recovered(H)) \subseteq {lin[i] : i \in DOMAIN lin}
             /\ RecoveredNoEffect(H) \cap {lin[i] : i \in DOMAIN lin} = {}
=============================================================================

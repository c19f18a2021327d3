------------------------ MODULE Px86_clflushopt_sfence ------------------------
(***************************************************************************)
(* PX86.md example clflushopt+sfence                                       *)
(* (modelcheck/litmus/clflushopt+sfence.litmus).                           *)
(*   T0: store x 1; clflushopt x; sfence; store y 1                        *)
(* y=1 visible => the sfence completed => the clflushopt took effect,     *)
(* after x=1 became visible (an older store to its line) => x's mark      *)
(* covers x=1.                                                             *)
(***************************************************************************)
EXTENDS Px86, TLC

COS_Program == 0 :> << Store("x", 1), Clflushopt("x"), Sfence, Store("y", 1) >>
COS_LineOf == [x |-> "Lx", y |-> "Ly"]
COS_Init == [x |-> 0, y |-> 0]

\* forbid x=0 y=1  (PX86.md table: forbid)
Unreachable_x_0_y_1 == NeverPersisted(LitmusOutcome([x |-> 0, y |-> 1], {}))
\* allow x=1 y=0
Unreachable_x_1_y_0 == NeverPersisted(LitmusOutcome([x |-> 1, y |-> 0], {}))
\* allow x=0 y=0
Unreachable_x_0_y_0 == NeverPersisted(LitmusOutcome([x |-> 0, y |-> 0], {}))
\* allow x=1 y=1
Unreachable_x_1_y_1 == NeverPersisted(LitmusOutcome([x |-> 1, y |-> 1], {}))
=============================================================================

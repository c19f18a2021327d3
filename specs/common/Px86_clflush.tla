---------------------------- MODULE Px86_clflush ----------------------------
(***************************************************************************)
(* PX86.md example clflush (modelcheck/litmus/clflush.litmus).             *)
(*   T0: store x 1; clflush x; store y 1                                   *)
(* y=1 persists only after it became visible, which is after the clflush  *)
(* took effect (FIFO), which is after x=1 became visible (FIFO): x's mark *)
(* then covers x=1.                                                        *)
(***************************************************************************)
EXTENDS Px86, TLC

CF_Program == 0 :> << Store("x", 1), Clflush("x"), Store("y", 1) >>
CF_LineOf == [x |-> "Lx", y |-> "Ly"]
CF_Init == [x |-> 0, y |-> 0]

\* forbid x=0 y=1  (PX86.md table: forbid)
Unreachable_x_0_y_1 == NeverPersisted(LitmusOutcome([x |-> 0, y |-> 1], {}))
\* allow x=1 y=0   (crash before the clflush takes effect, or y not persisted)
Unreachable_x_1_y_0 == NeverPersisted(LitmusOutcome([x |-> 1, y |-> 0], {}))
\* allow x=0 y=0
Unreachable_x_0_y_0 == NeverPersisted(LitmusOutcome([x |-> 0, y |-> 0], {}))
\* allow x=1 y=1
Unreachable_x_1_y_1 == NeverPersisted(LitmusOutcome([x |-> 1, y |-> 1], {}))
=============================================================================

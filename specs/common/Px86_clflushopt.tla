--------------------------- MODULE Px86_clflushopt ---------------------------
(***************************************************************************)
(* PX86.md example clflushopt (modelcheck/litmus/clflushopt.litmus).       *)
(*   T0: store x 1; clflushopt x; store y 1                                *)
(* A clflushopt takes effect some time after the older stores to its line;*)
(* younger stores to other lines may become visible before it takes       *)
(* effect: y becomes visible (and persists) while the clflushopt is still *)
(* pending and x's line has kept nothing. The litmus file has no forbid   *)
(* line; Px86_clflushopt.cfg checks the sanity outcome x=2 instead.       *)
(***************************************************************************)
EXTENDS Px86, TLC

CO_Program == 0 :> << Store("x", 1), Clflushopt("x"), Store("y", 1) >>
CO_LineOf == [x |-> "Lx", y |-> "Ly"]
CO_Init == [x |-> 0, y |-> 0]

\* allow x=0 y=1   (PX86.md table: allow)
Unreachable_x_0_y_1 == NeverPersisted(LitmusOutcome([x |-> 0, y |-> 1], {}))
\* allow x=1 y=1
Unreachable_x_1_y_1 == NeverPersisted(LitmusOutcome([x |-> 1, y |-> 1], {}))
\* allow x=0 y=0
Unreachable_x_0_y_0 == NeverPersisted(LitmusOutcome([x |-> 0, y |-> 0], {}))
\* (not in the litmus file) no value that was never stored persists
Unreachable_x_2 == NeverPersisted(LitmusOutcome([x |-> 2], {}))
=============================================================================

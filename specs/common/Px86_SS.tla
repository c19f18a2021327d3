------------------------------ MODULE Px86_SS ------------------------------
(***************************************************************************)
(* PX86.md example SS (modelcheck/litmus/SS.litmus): two plain stores to   *)
(* different cache lines, no flush.                                        *)
(*   T0: store x 1; store y 1                                              *)
(* Each line keeps, independently, a prefix of its visible stores at least *)
(* as long as its mark; without a flush every mark stays 0, so y's line    *)
(* may keep its store while x's keeps none.                                *)
(* One invariant per outcome of the litmus file; Px86_SS.cfg checks the   *)
(* forbidden ones (pass), mutants/Px86_SS_allow_*.cfg one allowed outcome *)
(* each (TLC must report it violated: the outcome is reachable).          *)
(***************************************************************************)
EXTENDS Px86, TLC

SS_Program == 0 :> << Store("x", 1), Store("y", 1) >>
SS_LineOf == [x |-> "Lx", y |-> "Ly"]
SS_Init == [x |-> 0, y |-> 0]

\* allow x=0 y=1   (PX86.md table: allow)
Unreachable_x_0_y_1 == NeverPersisted(LitmusOutcome([x |-> 0, y |-> 1], {}))
\* allow x=1 y=0
Unreachable_x_1_y_0 == NeverPersisted(LitmusOutcome([x |-> 1, y |-> 0], {}))
\* allow x=1 y=1
Unreachable_x_1_y_1 == NeverPersisted(LitmusOutcome([x |-> 1, y |-> 1], {}))
\* allow x=0 y=0   (the crash before anything runs)
Unreachable_x_0_y_0 == NeverPersisted(LitmusOutcome([x |-> 0, y |-> 0], {}))
\* forbid x=2      (a persisted value was stored or is the initial one)
Unreachable_x_2 == NeverPersisted(LitmusOutcome([x |-> 2], {}))
=============================================================================

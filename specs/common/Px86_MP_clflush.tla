--------------------------- MODULE Px86_MP_clflush ---------------------------
(***************************************************************************)
(* PX86.md example MP+clflush (modelcheck/litmus/MP+clflush.litmus):       *)
(* flushing a location another thread wrote.                               *)
(*   T0: store x 1                                                         *)
(*   T1: load r1 x; clflush x; store y 1                                   *)
(* r1=1: x=1 was visible when T1 loaded it; T1's clflush then took effect *)
(* after that (it executes after the load), and before y became visible   *)
(* (FIFO); so x's mark covers x=1 whenever y=1 can persist.               *)
(***************************************************************************)
EXTENDS Px86, TLC

MP_Program == (0 :> << Store("x", 1) >>)
           @@ (1 :> << Load("r1", "x"), Clflush("x"), Store("y", 1) >>)
MP_LineOf == [x |-> "Lx", y |-> "Ly"]
MP_Init == [x |-> 0, y |-> 0]

\* forbid r1=1 x=0 y=1   (PX86.md table: forbid)
Unreachable_r1_1_x_0_y_1 == NeverPersisted(LitmusOutcome([x |-> 0, y |-> 1], {<<1, "r1", 1>>}))
\* allow r1=1 x=1 y=1
Unreachable_r1_1_x_1_y_1 == NeverPersisted(LitmusOutcome([x |-> 1, y |-> 1], {<<1, "r1", 1>>}))
\* allow x=0 y=0         (the crash before anything runs; r1 unconstrained)
Unreachable_x_0_y_0 == NeverPersisted(LitmusOutcome([x |-> 0, y |-> 0], {}))
\* allow r1=0 x=0 y=1    (T1 read x before T0's store was visible; its
\*                        clflush may take effect before x=1 is visible)
Unreachable_r1_0_x_0_y_1 == NeverPersisted(LitmusOutcome([x |-> 0, y |-> 1], {<<1, "r1", 0>>}))
=============================================================================

-------------------------- MODULE Px86_SS_sameline --------------------------
(***************************************************************************)
(* PX86.md example SS+sameline (modelcheck/litmus/SS+sameline.litmus): SS *)
(* with x and y on one cache line.                                         *)
(*   line x y;  T0: store x 1; store y 1                                   *)
(* Stores to one line persist in the order they became visible (the line  *)
(* keeps a prefix of its sequence), and TSO makes x visible before y: the *)
(* sequence is [x=1, y=1], and no prefix has y=1 without x=1.             *)
(***************************************************************************)
EXTENDS Px86, TLC

SSL_Program == 0 :> << Store("x", 1), Store("y", 1) >>
SSL_LineOf == [x |-> "L", y |-> "L"]
SSL_Init == [x |-> 0, y |-> 0]

\* forbid x=0 y=1  (PX86.md table: forbid)
Unreachable_x_0_y_1 == NeverPersisted(LitmusOutcome([x |-> 0, y |-> 1], {}))
\* allow x=1 y=0   (prefix of length 1)
Unreachable_x_1_y_0 == NeverPersisted(LitmusOutcome([x |-> 1, y |-> 0], {}))
\* allow x=1 y=1
Unreachable_x_1_y_1 == NeverPersisted(LitmusOutcome([x |-> 1, y |-> 1], {}))
\* allow x=0 y=0
Unreachable_x_0_y_0 == NeverPersisted(LitmusOutcome([x |-> 0, y |-> 0], {}))
=============================================================================

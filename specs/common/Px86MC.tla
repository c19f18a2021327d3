------------------------------- MODULE Px86MC -------------------------------
(***************************************************************************)
(* A Px86.tla model over a program that uses every instruction: checks    *)
(* TypeOK and the rule invariants of Px86.tla (the PX86.md ordering rules *)
(* restated as state predicates) on every execution and crash.            *)
(*   line x y (L1); z on its own line (L2)                                 *)
(*   T0: store x 1; clflushopt x; ntstore y 2; sfence; faa r0 z 1; clwb z; *)
(*       mfence                                                            *)
(*   T1: xchg r1 z 5; load r2 x; cas r3 y 2 3; clflush y; store x 4;      *)
(*       cas z 0 9                                                         *)
(***************************************************************************)
EXTENDS Px86, TLC

All_Program ==
    (0 :> << Store("x", 1), Clflushopt("x"), NtStore("y", 2), Sfence, Faa("r0", "z", 1),
             Clwb("z"), Mfence >>)
    @@ (1 :> << Xchg("r1", "z", 5), Load("r2", "x"), Cas("r3", "y", 2, 3), Clflush("y"),
                Store("x", 4), Cas(NoReg, "z", 0, 9) >>)
All_LineOf == [x |-> "L1", y |-> "L1", z |-> "L2"]
All_Init == [x |-> 0, y |-> 0, z |-> 0]

\* Rules that are specific to this program:
\* - T0's mfence has executed => T0's stores, flushes and ntstore are all
\*   persisted: x=1 (or a later x) and y's ntstore are covered by the mark.
MfenceMeansPersisted ==
    pc[0] = 8 => \A img \in PersistedStates : img.y # 0
\* - After the sfence left T0's buffer, the clflushopt x has taken effect and
\*   so x=1 is persisted (unless T1 overwrote it later, which it may only
\*   after reading it): x's line cannot lose x=1 in any crash image.
SfenceMeansFlushed ==
    (pc[0] >= 5 /\ ~\E j \in DOMAIN buf[0] : buf[0][j] = 4) =>
        \A img \in PersistedStates : img.x # 0
=============================================================================

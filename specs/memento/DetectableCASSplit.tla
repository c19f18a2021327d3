------------------------- MODULE DetectableCASSplit -------------------------
(***************************************************************************)
(* DetectableCAS.tla with its crashes confined to a phase of the run.     *)
(*                                                                         *)
(* The phase of a state is Invoked, the number of CASes the threads have   *)
(* invoked so far (all threads together, first invocations: ninv).  A      *)
(* crash step (thread or full-system) is a step of SplitSpec only where    *)
(* Invoked is in crashAt; every other step always is.  crashAt is chosen   *)
(* once, in the initial state, from CrashPhases, and never changes.        *)
(*                                                                         *)
(* Two uses:                                                               *)
(*  - A model too large for one TLC run is checked as several cfgs, each  *)
(*    with one phase set (CrashPhases = {P}): each explores every          *)
(*    crash-free state and every crash in P with all that follows it.  A  *)
(*    model with one crash (MaxCrashes + MaxThreadCrashes = 1) whose cfgs' *)
(*    sets P partition 0 .. NOps * Cardinality(Threads) is checked whole  *)
(*    by its parts.  (With two crashes, each part confines both to P: the *)
(*    parts cover only the runs whose crashes both fall in one part.)      *)
(*  - TLC's random simulation picks one enabled step at random; a crash is *)
(*    enabled in almost every state, so unconfined the crashes of a trace *)
(*    happen within its first few steps.  With CrashPhases = {{1}, {2},   *)
(*    ...} each trace draws its phase at random (TLC picks a random        *)
(*    initial state) and crashes in it.                                    *)
(* (OneIdleBeforeCrash, at the end, is a CONSTRAINT for a model that    *)
(* must fail: mutants/AbaOneWord3x3_deep.cfg.)                          *)
(* Invoked is the same for every renaming of the threads, so SYMMETRY     *)
(* stays sound; SplitView is RankView and crashAt.                         *)
(***************************************************************************)
EXTENDS DetectableCAS

CONSTANT CrashPhases   \* a set of sets of values of Invoked

VARIABLE crashAt       \* the run's phase set, one of CrashPhases

RECURSIVE SumOver(_, _)
SumOver(f, S) == IF S = {} THEN 0
                 ELSE LET x == CHOOSE y \in S : TRUE IN f[x] + SumOver(f, S \ {x})

Invoked == SumOver(ninv, Threads)

IsCrash == crashes' # crashes \/ tcrashes' # tcrashes

SplitInit == Init /\ crashAt \in CrashPhases
SplitNext == Next /\ (IsCrash => Invoked \in crashAt) /\ UNCHANGED crashAt
SplitSpec == SplitInit /\ [][SplitNext]_<<vars, crashAt>>

SplitView == <<RankView, crashAt>>

\* For a model that must fail (a mutant): a state CONSTRAINT that keeps one thread (any one:
\* the constraint is symmetric) from starting until the first crash.  It only narrows where TLC
\* looks: a violation it finds is one of the unconstrained model.
OneIdleBeforeCrash ==
    (crashes = 0 /\ tcrashes = 0) => \E t \in Threads : ninv[t] = 0
=============================================================================

-------------------------- MODULE RedoTimedPTMTrace --------------------------
(***************************************************************************)
(* Trace validation of perdure's RedoTimed-PTM (impl/perdure-ptm/src/redo, *)
(* Variant::Timed; seed §5, "Timed variant") against specs/ptm/RedoPTM.tla:*)
(* traces of `perdure trace redo-timed`, replayed by ../PtmTrace.tla with  *)
(* Flavor "redo", exactly as Redo-PTM's (../redo/RedoPTMTrace.tla).  What  *)
(* the variant changes is which Combined step {5} locks (only combs[0] or  *)
(* combs[1] while the window is open, backing off while the one that is    *)
(* not designated is taken; any after it) and that an update may give up   *)
(* an attempt once curComb moves; both show in the trace as Lock steps and *)
(* commits, checked by the same conditions: the Lock condition (no crash   *)
(* image designates the replica: F2), the replica content at each CAS, and *)
(* ExactlyOnce, CompletedDurable, ResultsCorrect.  The producer alternates *)
(* a window that never closes (even seeds) with one closed at once (odd).  *)
(***************************************************************************)
EXTENDS PtmTrace
=============================================================================

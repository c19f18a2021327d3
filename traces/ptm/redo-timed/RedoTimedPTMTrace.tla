-------------------------- MODULE RedoTimedPTMTrace --------------------------
(***************************************************************************)
(* Trace validation of perdure's RedoTimed-PTM (impl/perdure-ptm/src/redo, *)
(* Variant::Timed; seed §5, "Timed variant") through INSTANCE of           *)
(* specs/ptm/RedoPTM.tla, exactly as Redo-PTM's (../redo/RedoPTMTrace.tla: *)
(* every event one action of its SpecPerdure, the code's unreported steps  *)
(* silent steps TLC searches, RedoPTM's invariants after every step).      *)
(* What the variant changes is step {5}: lock_combined tries only          *)
(* combs[0] and combs[1] while its window is open, backs off while the one *)
(* that is not designated is taken, and gives the attempt up once curComb  *)
(* moves; after the window, any replica.  In SpecPerdure that is U18C: a   *)
(* choice among the free replicas (the Lock event names it), or its        *)
(* give-up exit (silent: no Lock event).  The producer alternates a window *)
(* that never closes (even seeds) with one closed at once (odd).  The      *)
(* window and the backoff as time are not modelled.                        *)
(***************************************************************************)
EXTENDS RedoPTMTrace
=============================================================================

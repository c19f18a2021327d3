---------------------------- MODULE RedoPTMTrace ----------------------------
(***************************************************************************)
(* Trace validation of perdure's Redo-PTM (impl/perdure-ptm/src/redo,      *)
(* seed §5, Algorithms 1-3) against specs/ptm/RedoPTM.tla: traces of       *)
(* `perdure trace redo-ptm`, replayed by ../PtmTrace.tla with Flavor       *)
(* "redo": a successful curComb CAS (Algorithm 3 L30) commits the          *)
(* requests the winner's simulation applied (L20-L24, the Apply steps      *)
(* since its last Simulate step), in that order, and advances the seq by  *)
(* one; the replica it designates must hold exactly the state they give.  *)
(* Checked after every step, through INSTANCE RedoPTM (../PtmTrace.tla's *)
(* R, on the trace's state mapped onto RedoPTM's variables): its           *)
(* CurCombConsistent, DurableImageConsistent, ExactlyOnce,                 *)
(* CompletedDurable, ResultsCorrect; at the trace level, the lock          *)
(* discipline of L18/L41 and F2 (a replica a crash could recover to is     *)
(* never locked by a writer).  The steps are the trace's, not RedoPTM's    *)
(* pc-level actions: ../README.md says where the levels differ.            *)
(***************************************************************************)
EXTENDS PtmTrace
=============================================================================

----------------------------- MODULE CXPTMTrace -----------------------------
(***************************************************************************)
(* Trace validation of perdure's CX-PTM (impl/perdure-ptm/src/cx, seed     *)
(* §4) against specs/ptm/CXPTM.tla: traces of `perdure trace cx-ptm`,      *)
(* replayed by ../PtmTrace.tla with Flavor "cx": a successful curComb CAS  *)
(* (§4 step 6) from seq s0 to s1 commits the turn queue's nodes with       *)
(* tickets s0+1..s1 (Enqueue steps), in ticket order; the replica it       *)
(* designates must hold exactly the state they give.  Checked after      *)
(* every step, through INSTANCE CXPTM (../PtmTrace.tla's X, on the trace's *)
(* state mapped onto CXPTM's variables): its CurCombConsistent,            *)
(* DurableImageConsistent, CompletedDurable, ResultsCorrect, and           *)
(* RedoPTM's ExactlyOnce on the commit order; at the trace level, the lock *)
(* discipline of §4 step 2 (only the holder writes a replica; a replica a  *)
(* crash could recover to is never locked by a writer).  The steps are the *)
(* trace's, not CXPTM's pc-level actions: ../README.md says where the      *)
(* levels differ.                                                          *)
(***************************************************************************)
EXTENDS PtmTrace
=============================================================================

----------------------------- MODULE CXPTMTrace -----------------------------
(***************************************************************************)
(* Trace validation of perdure's CX-PTM (impl/perdure-ptm/src/cx, seed     *)
(* §4) against specs/ptm/CXPTM.tla: traces of `perdure trace cx-ptm`,      *)
(* replayed by ../PtmTrace.tla with Flavor "cx": a successful curComb CAS  *)
(* (§4 step 6) from seq s0 to s1 commits the turn queue's nodes with       *)
(* tickets s0+1..s1 (Enqueue steps), in ticket order; the replica it       *)
(* designates must hold exactly the state they give.  Checked at every     *)
(* step: CXPTM's CurCombConsistent, DurableImageConsistent, ExactlyOnce,   *)
(* CompletedDurable, ResultsCorrect, on PtmBase's memory; the lock         *)
(* discipline of §4 step 2 (only the holder writes a replica; a replica a  *)
(* crash could recover to is never locked by a writer).  Not a replay of   *)
(* CXPTM's pc-level actions: ../README.md says where the levels differ.    *)
(***************************************************************************)
EXTENDS PtmTrace
=============================================================================

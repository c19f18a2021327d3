------------------------------ MODULE CXPUCTrace ------------------------------
(***************************************************************************)
(* Trace validation of perdure's CX-PUC (impl/perdure-ptm/src/cx/puc.rs,   *)
(* seed §4 "CX-PUC") against specs/ptm/CXPTM.tla: traces of `perdure trace *)
(* cx-puc` (its annotated Ptm interface over a u64 object), replayed by    *)
(* ../PtmTrace.tla with Flavor "cx", exactly as CX-PTM's                   *)
(* (../cx/CXPTMTrace.tla): the turn queue's tickets decide what a curComb  *)
(* CAS commits.  What CX-PUC changes is how a replica is written: the      *)
(* closures run on a per-thread working copy whose differing words are     *)
(* then stored into the held replica (Store steps), and the whole used     *)
(* part of the replica is written back before the CAS (a PwbR step for     *)
(* every object word's line, whether or not it changed).                   *)
(***************************************************************************)
EXTENDS PtmTrace
=============================================================================

----------------------------- MODULE CXPUCTrace -----------------------------
(***************************************************************************)
(* Trace validation of perdure's CX-PUC (impl/perdure-ptm/src/cx/puc.rs,   *)
(* seed §4 "CX-PUC", through its Ptm interface) through INSTANCE of        *)
(* specs/ptm/CXPTM.tla: ../cx/CXPTMTrace.tla with Puc = TRUE, so every     *)
(* event of a `perdure trace cx-puc` trace is one step of CXPTM's          *)
(* SpecPerdurePuc (SpecPerdure's consensus with a per-thread working copy: *)
(* a node's mutation runs on the copy, a copy loads it, settling stores    *)
(* the differing words into the held replica, the install writes back     *)
(* every object line), the code's unreported steps are silent steps, and   *)
(* CXPTM's invariants hold after every step.  What maps to what, and what  *)
(* the search leaves out: ../cx/CXPTMTrace.tla and ../README.md.           *)
(* CX-PUC's own steps: a node's mutation (X4U) and the copy (X6C) are      *)
(* silent (they touch only the volatile working copy); the Store events    *)
(* are settling's (WS after X7U, or after XEC before leaving: Unlock is    *)
(* then XEU).                                                              *)
(***************************************************************************)
EXTENDS CXPTMTrace
=============================================================================

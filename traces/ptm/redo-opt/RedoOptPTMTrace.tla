--------------------------- MODULE RedoOptPTMTrace ---------------------------
(***************************************************************************)
(* Trace validation of perdure's RedoOpt-PTM (impl/perdure-ptm/src/redo,   *)
(* Variant::Opt; seed §5, "Additional optimizations") against              *)
(* specs/ptm/RedoPTM.tla: traces of `perdure trace redo-opt`, replayed by  *)
(* ../PtmTrace.tla (RedoPTM.tla's invariants at every step), plus one step the *)
(* variant needs: NtStore, the non-temporal stores of a replica copy,      *)
(* which reach persistence without a pwb (modelled as persisted by the     *)
(* copier's next fence, a weaker memory than the simulator's, which        *)
(* persists them at once).  Store and flush aggregation and the full-flush *)
(* switch show as fewer Store steps (a word once per replay) and as PwbR   *)
(* steps of every object word's line (the whole used part written back);  *)
(* DurableImageConsistent at each CAS checks that no dirty line was left   *)
(* out.  The producer's threshold is the second dirty line of a replica,   *)
(* so runs mix per-line write-backs and full flushes.                      *)
(***************************************************************************)
EXTENDS PtmTrace
=============================================================================

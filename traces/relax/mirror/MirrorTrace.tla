---------------------------- MODULE MirrorTrace ----------------------------
(***************************************************************************)
(* Trace validation of Mirror's persistent atomic with Mirror's own eager  *)
(* recovery, as implemented (impl/perdure-relax, src/patomic.rs, with      *)
(* Tracking::Eager): replays a trace of one field (module TraceData, from *)
(* `perdure trace relax --eager`) as a behaviour of                        *)
(* specs/relax/Mirror.tla (Algorithm 4.1 with the fix of Finding M1).      *)
(*                                                                         *)
(* The steps and the values they carry are those of ../RelaxTrace.tla     *)
(* without Algorithm 6.2's (eager recovery runs no recoverField): Begin,  *)
(* Invoke (which must say no recovery), S0, LD, L5, L9, L21, L24, L40,     *)
(* L42, L43, Ret, and Crash{img, dram}, which is Mirror's Crash step: the  *)
(* image must be one of Images, and DRAM after the eager copy must hold   *)
(* it.  Every step except Begin must also be a step of the abstract       *)
(* durable register (Abs!ANext), every step but a crash must respect      *)
(* Mirror's second invariant (NVMM changes only when the seqs are equal), *)
(* and after every step Mirror's state invariants must hold: SeqWindow,   *)
(* EqualSeqsEqualValues, DramDurable (DRAM never holds a pair a crash can *)
(* lose), AbsIsDram (the refinement mapping) and PendingDistinct.  The    *)
(* trace is accepted exactly when some behaviour consumes all of it.      *)
(***************************************************************************)
EXTENDS Mirror, TraceData, Naturals, Sequences, TLC

VARIABLE k   \* the next trace step to replay

traceVars == <<mvars, k>>

TraceInit == Init /\ k = 1

Pair(a) == <<a[1], a[2]>>
CallOf(s) == [op |-> s.op, old |-> s.old, new |-> s.new]

\* A fresh field holding p in both replicas, persisted.
Begin(p) ==
    /\ nvP' = p /\ nvS' = <<>> /\ dram' = p
    /\ pc' = [t \in Threads |-> "idle"]
    /\ lc' = [t \in Threads |-> LInit]
    /\ done' = [t \in Threads |-> 0]
    /\ crashes' = 0
    /\ areg' = p[1]
    /\ aop' = [t \in Threads |-> Abs!NoOp]
    /\ alast' = [t \in Threads |-> Abs!NoRet]
    /\ nvOwner' = NoThread

\* Mirror's Crash with the image the implementation's crash had; its eager
\* copy must have put that image into DRAM.
TCrash(img, d) ==
    /\ img \in Images
    /\ d = img
    /\ crashes' = crashes + 1
    /\ nvP' = img /\ nvS' = <<>>
    /\ dram' = img
    /\ CrashGhost(img)
    /\ CrashThreads
    /\ UNCHANGED alast

Replay(s) ==
    CASE s.action = "Begin" -> Begin(<<s.v, s.s>>)
      [] s.action = "Crash" -> TCrash(Pair(s.img), Pair(s.dram))
      [] s.action = "Invoke" -> ~s.recover /\ Invoke(s.thread, CallOf(s))
      [] s.action = "S0"  -> S0(s.thread) /\ PVal(dram) = s.val
      [] s.action = "LD"  -> LD(s.thread) /\ PVal(dram) = s.val
      [] s.action = "L5"  -> L5atomic(s.thread) /\ Visible = <<s.v, s.s>>
      [] s.action = "L9"  -> L9atomic(s.thread) /\ dram = <<s.v, s.s>>
      [] s.action = "L21" -> L21(s.thread)
      [] s.action = "L24" ->
            L24(s.thread) /\ (dram = <<lc[s.thread].vV, lc[s.thread].vS>>) = s.ok
      [] s.action = "L40" -> L40(s.thread) /\ lc'[s.thread].res = s.ok
      [] s.action = "L42" -> L42(s.thread)
      [] s.action = "L43" ->
            /\ L43(s.thread)
            /\ lc[s.thread].res => ((dram = <<lc[s.thread].pV, lc[s.thread].pS>>) = s.ok)
      [] s.action = "Ret" -> Ret(s.thread) /\ lc[s.thread].ret = s.val
      [] OTHER -> FALSE

Conditions ==
    [SeqWindow |-> SeqWindow, EqualSeqsEqualValues |-> EqualSeqsEqualValues,
     DramDurable |-> DramDurable, AbsIsDram |-> AbsIsDram, PendingDistinct |-> PendingDistinct]

\* Conditions spelled out (the record names them for the rejection pass): TLC evaluates a
\* record whole and caches no LET under a prime, so checking Conditions'[n] for each n
\* evaluated every condition once per field.
Invariants == SeqWindow /\ EqualSeqsEqualValues /\ DramDurable /\ AbsIsDram /\ PendingDistinct

\* The next event as a step of the protocol.
ReplayEvent ==
    /\ k <= Len(Trace)
    /\ Replay(Trace[k])
    /\ k' = k + 1

\* ... a step of the abstract register, and NVMM moves only from DRAM's seq.
Refines ==
    /\ Trace[k].action # "Begin" => [Abs!ANext]_<<areg, aop, alast>>
    /\ Trace[k].action \notin {"Begin", "Crash"} =>
          (Visible' # Visible => PSeq(Visible) = PSeq(dram))

ReplayStep == ReplayEvent /\ Refines /\ Invariants'

\* Why the trace cannot go on from this state: the event is no protocol step
\* here, or the checked conditions every matching step breaks.
\* tools/trace-check.sh adds Diagnosis as an invariant to the run of a case
\* expected to be rejected and reads the lines of the step it was rejected at.
Why == IF ~ENABLED ReplayEvent THEN {"no " \o Trace[k].action \o " step"}
       ELSE IF ~ENABLED (ReplayEvent /\ Refines) THEN {"AbsStep"}
       ELSE {n \in DOMAIN Conditions : ~ENABLED (ReplayEvent /\ Refines /\ Conditions'[n])}
Diagnosis == (k <= Len(Trace) /\ ~ENABLED ReplayStep) => PrintT(<<"trace-stuck", k, Why>>)

TraceSpec == TraceInit /\ [][ReplayStep]_traceVars

\* Violated exactly when the whole trace has been replayed.
NotAccepted == k <= Len(Trace)
=============================================================================

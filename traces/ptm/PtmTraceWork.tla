---------------------------- MODULE PtmTraceWork ----------------------------
(***************************************************************************)
(* A PTM trace's transactions as PtmBase's Workload "trace" (TraceWork),   *)
(* shared by the PTM trace specs (redo/RedoPTMTrace.tla, which            *)
(* redo-timed/ and redo-opt/ extend, and cx/CXPTMTrace.tla), and what     *)
(* each requires of a trace it accepts.                                    *)
(* A trace batches runs (a Begin step starts each) and numbers each       *)
(* thread's transactions 0, 1, ... per run; the specs number them 1 ..     *)
(* NOps per thread.  Transaction i of thread t in run r is the specs'     *)
(* transaction (r - 1) * RunOps + i + 1 of t, RunOps the most any thread  *)
(* runs in a run.  (Each operator reads Trace once, through a LET: TLC     *)
(* evaluates the constant definitions before it caches Trace, so each     *)
(* Trace[x] there would build the whole trace again.)                     *)
(***************************************************************************)
EXTENDS PtmBase, TLC, TraceData

CONSTANT MaxThreads   \* thread ids 1..MaxThreads (0: a thread that is no worker)

TraceShape ==
    LET T == Trace
        inv == {x \in DOMAIN T : T[x].action = "Invoke"}
        begins == {x \in DOMAIN T : T[x].action = "Begin"}
        is == {T[j].i : j \in inv}
        rops == IF is = {} THEN 1 ELSE 1 + (CHOOSE m \in is : \A x \in is : x <= m)
    IN [runOps |-> rops, runs |-> Max(Cardinality(begins), 1),
        invokes |-> {[t |-> T[j].thread, r |-> Cardinality({x \in begins : x <= j}), i |-> T[j].i,
                      tx |-> Tx(T[j].op, T[j].a)] : j \in inv}]
RunOps == TraceShape.runOps
TraceNOps == TraceShape.runs * RunOps
GI(r, i) == (r - 1) * RunOps + i + 1
TraceWorkDef ==
    LET shape == TraceShape IN
    [t \in 1 .. MaxThreads |-> [g \in 1 .. shape.runs * shape.runOps |->
        LET vs == {v \in shape.invokes : v.t = t /\ (v.r - 1) * shape.runOps + v.i + 1 = g} IN
        IF vs = {} THEN Tx("get", 1) ELSE (CHOOSE v \in vs : TRUE).tx]]

\* The object's words (PtmBase's W): the Begin steps' "words" (the counters'
\* 2; the queue's fixed words and the node blocks the trace uses).
TraceW == LET T == Trace IN
          IF T # << >> /\ "words" \in DOMAIN T[1] THEN T[1].words ELSE 2
\* Bytes of region blocks the construction took before the structure
\* (PtmBase's Reserved): the Begin steps' "reserved" (CX-PUC's object).
TraceReserved == LET T == Trace IN
                 IF T # << >> /\ "reserved" \in DOMAIN T[1] THEN T[1].reserved ELSE 0

\* A created pool's memory: memory m (MemInit's) with every line of the
\* replicas of the Begin image img holding the image's word.  The
\* designated replica holds ObjInit (Begin checks it); the code formats no
\* other, and null recovery reads none of them before a copy overwrites it.
BeginMem(m, img) ==
    [m EXCEPT !.r = [ln \in DOMAIN @ |-> IF ln[1] < Len(img) THEN [p |-> img[ln[1] + 1][ln[2]], s |-> << >>]
                                         ELSE @[ln]]]

\* A trace that commits nothing shows nothing of the protocol (an empty
\* trace would be a behaviour of any spec): it is never accepted.
Substantive == LET T == Trace IN \E j \in DOMAIN T : T[j].action = "CasCC"
=============================================================================

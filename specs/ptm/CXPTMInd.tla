------------------------------- MODULE CXPTMInd -------------------------------
(***************************************************************************)
(* Inductiveness of CX-PTM's witness of durable linearizability (issue 20, *)
(* §4), for the algorithm as CXPTM.cfg checks it (Spec: the published      *)
(* code's order, ReturnPersist and FlushBeforeCas on).  CXPTM.cfg checks   *)
(* TypeOK, CurCombConsistent, DurableImageConsistent, CompletedDurable and *)
(* ResultsCorrect on the states reachable within its bounds; this module   *)
(* states them, strengthened, as an inductive invariant IndInv, and        *)
(* CXPTMInd.cfg checks                                                     *)
(*     IndInv /\ [Next]_vars => IndInv'                                    *)
(* with TLC as RedoPTMInd does: INIT IndInit is every state of a bounded,  *)
(* type-correct domain (IndDomain) that satisfies IndInv, not only the     *)
(* reachable ones; NEXT is CXPTM's own Next (Spec's: steps 1-6 as the      *)
(* published code orders them, getCombined's pwb and sharedTryLock as its  *)
(* fence, the CAS a fence, reclamation, Crash); the INVARIANT is IndInv;   *)
(* the ACTION_CONSTRAINT IndDomain (on the source state only) keeps TLC    *)
(* from expanding successors that leave the domain, which it still checks  *)
(* against IndInv.                                                         *)
(*                                                                         *)
(* THE SUB-CONFIGURATION (what this does NOT cover).  RedoPTMInd's: one    *)
(* thread (N = 1), one update transaction (NOps = 1, workload "inc":       *)
(* inc(1)), W = 2 words, 2N = 2 Combined instances and replicas,           *)
(* reclamation on, full crashes.  Its reachable graph from Init has 30     *)
(* states (depth 15).  Everything that needs a second thread is left out:  *)
(* a Combined found locked (X2's "Full", G1's and Y1's failed trylocks),   *)
(* a head at or past our node (XS), getCombined's retry and give-up (XE),  *)
(* a failed CAS and the CAS loop's further iterations (YE), helping (a     *)
(* node applied by another thread), a replica that is behind by nodes it   *)
(* replays, the exits' pwb(curComb) + psync (XS, YE); also reads           *)
(* (applyRead, B1-B3), a second transaction, a node reclaimed (Dispose is  *)
(* never enabled here: the one retired node, the sentinel, stays the head  *)
(* of the first Combined), a second crash, and SpecFine's and              *)
(* SpecPerdure's steps (CXPTM_Fine.cfg, CXPTM_Perdure.cfg).  IndInv says   *)
(* those labels are unreachable here (the thread is only ever at the       *)
(* labels of its one path).  They are checked by exploration only          *)
(* (CXPTM*.cfg).                                                           *)
(*                                                                         *)
(* THE DOMAIN (IndDomain).  Replica words and pending stores in {0, 1}, at *)
(* most MaxPendD (1; 0 in the mutants, to keep them short) pending stores  *)
(* on a line of D, 2 on a line of C, 1 on curComb's; curComb values        *)
(* CV(c, k) with k in 0..1; heads in {null, 0, 1}; the queue empty or the  *)
(* thread's node with a result in {0, 1}; registers pc, i, my, c, mn,      *)
(* copied and dp free.  The ghosts no step reads to decide anything but    *)
(* themselves are at one value: the history empty (hist: only              *)
(* HistoryDurablyLinearizable reads it), the step and fence counters 0 and *)
(* pend FALSE (ns, nf, pend: read only to count, by FenceBound and         *)
(* StepBound), and the crash counter 0 (a state whose crash is used up has *)
(* the same successors minus Crash).  The thread's other registers (gi,    *)
(* li, lci, lh, ri and those only SpecFine's and SpecPerdure's steps use:  *)
(* pw, pl, wnx, pnx, rv, rh, ctk, es, enx, wc, ld) are Idle's: at this     *)
(* bound the values G1, Y1 and Y2 give lci and lh are Idle's defaults      *)
(* (lcomb is replica 0, its head ticket 0).                                *)
(*                                                                         *)
(* THE STRENGTHENING.  At this bound the thread's volatile state is a      *)
(* function of its label (one path: X2, X4 with mn null, G1, G2, X6, X4    *)
(* with mn = 0 (copied), X4 with mn = 1 (applied), X7, Y1, Y2, Y3, Y4,     *)
(* then Idle), and IndInv states it as relations (the registers, the       *)
(* queue with the node's result, the heads and locks per label).  The      *)
(* content is in persistent memory, where IndInv is weaker than the        *)
(* reachable states (D = replica 0, the one curComb designates at the      *)
(* invocation; C = replica 1, the one X2 locks):                           *)
(*  - D is never written: every image of its lines is the state of node 0  *)
(*    (pending stores of that same value allowed), no pwb of the thread;   *)
(*  - C before the copy (X2 .. X6): any persisted values and any pending   *)
(*    stores (its head is null: nothing reads it, and no crash image of it *)
(*    is kept), no pwb of the thread pending;                              *)
(*  - C after the copy: its visible content is what the step computed      *)
(*    (X4 copied: D's content, the state of node 0; from X4 applied on:    *)
(*    the state after node 1), its persisted values and earlier pending    *)
(*    stores anything; every pending store of C is covered by a pending    *)
(*    pwb of the thread, except (X4 applied, X7) on the lines the mutation *)
(*    stored to, which X7's flushDeferredPWBs is about to flush (the       *)
(*    deferred pwbs, dp, are exactly those lines); Y1's trylock, a locked  *)
(*    RMW, completes them, so from Y2 on C holds the new state in every    *)
(*    image before Y2's CAS can designate it (what FlushBeforeCas buys:    *)
(*    DurableImageConsistent);                                             *)
(*  - curComb: before the CAS every image is CV(D, 0); after it (Y3) it is *)
(*    CV(C, 1), with CV(D, 0) still a possible image, and after Y3's psync *)
(*    (Y4, and the returned transaction) CV(C, 1) is persisted (what       *)
(*    ReturnPersist buys: CompletedDurable); every image's replica holds   *)
(*    its node's state (DurableImageConsistent);                           *)
(*  - the ghosts: qs[0] is the state of node 0 and, once the node is       *)
(*    enqueued, qs[1] is inc(1) applied to it; the node's result is inc(1) *)
(*    on qs[0] once X4 applied it; a returned transaction is retired,      *)
(*    durable (retk) and correct (bad empty);                              *)
(*  - after a crash (Idle, not returned, or Idle before the invocation):   *)
(*    null recovery's state at the persisted curComb CV(r, 0): replica r's *)
(*    lines persisted with the recovered state qs[0] (node 0's, or node    *)
(*    1's if r = C, which only a crash after the CAS leaves) and nothing   *)
(*    pending, the other replica invalid (any persisted values), r's head  *)
(*    the sentinel and its lock downgraded, the queue empty.               *)
(*                                                                         *)
(* Not vacuous: mutants/CXPTMIndFlushAfterCas.cfg (FlushBeforeCas = FALSE) *)
(* and mutants/CXPTMIndNoReturnPersist.cfg (ReturnPersist = FALSE) each    *)
(* get a successor breaking IndInv.  Sanity check, by hand (README.md,     *)
(* "Inductiveness"): every state Spec reaches from Init at this bound (30  *)
(* states) satisfies IndInv and, up to the ghosts above, IndDomain, so the *)
(* strengthening is not stronger than the protocol.                        *)
(***************************************************************************)
EXTENDS CXPTM

CONSTANT MaxPendD     \* pending stores on a line of D in the domain (1; the mutants: 0)

ASSUME N = 1 /\ NOps = 1 /\ W = 2 /\ Workload = "inc"   \* the bound IndInit builds

T == 1                                    \* the one thread
D == 0                                    \* the replica curComb designates at the invocation
C == 1                                    \* the replica the thread locks (X2: the lowest free)
S0 == ObjInit                             \* the state of node 0
Op1 == WorkOf(T, 1)                       \* the thread's one transaction: inc(1)
S1 == ApplyStores(S0, StoresOf(Op1, S0))  \* the state after node 1
Res1 == ResultOf(Op1, S0)
Dp1 == {Op1.a}                            \* the lines its mutation stores to
Node1(r) == [t |-> T, i |-> 1, res |-> r]

\* The thread's registers but the counters (ghosts, see the header).
Regs(r) == [r EXCEPT !.ns = 0, !.nf = 0, !.pend = FALSE]

\* The label on the path: X4 is three (before the copy, copied, applied).
Lab ==
    LET h == th[T] IN
    IF h.pc # "X4" THEN h.pc
    ELSE CASE h.mn = NoNode -> "X4a"
           [] h.mn = 0 -> "X4b"
           [] OTHER -> "X4c"

InFlight == {"X2", "X4a", "G1", "G2", "X6", "X4b", "X4c", "X7", "Y1", "Y2", "Y3", "Y4"}
PreCopy == {"X2", "X4a", "G1", "G2", "X6"}
Held == {"X4a", "G1", "G2", "X6", "X4b", "X4c", "X7"}     \* C held exclusively
SharedD == {"G2", "X6", "Y2", "Y3", "Y4"}                 \* D shared-locked by the thread
Copied == {"X4b", "X4c", "X7", "Y1", "Y2", "Y3", "Y4"}
Applied == {"X4c", "X7", "Y1", "Y2", "Y3", "Y4"}          \* node 1 applied to C, its result stored
PostCas == {"Y3", "Y4"}
PreCas == InFlight \ PostCas

\* Between transactions: after the transaction returned (the state Y4
\* leaves), or null recovery's (before the invocation, and after a crash).
IdleRet == th[T].pc = "Idle" /\ th[T].i = 1 /\ retk # {}
IdleRec == th[T].pc = "Idle" /\ ~IdleRet
RecIdx == mem.cc.p.idx                    \* after a crash: the replica recovery designated
RecX(r) == IF r = C THEN S1 ELSE S0       \* ... and the state it holds

LineOK(l, v) == LineImages(l) = {v}       \* every image of the line is v

\* The thread's registers, per label.
ThInv ==
    LET h == th[T]
        p == Lab
    IN
    /\ p \in InFlight \cup {"Idle"}
    /\ Regs(h) = [Idle(h.i) EXCEPT !.pc = h.pc, !.my = h.my, !.c = h.c, !.mn = h.mn,
                                   !.copied = h.copied, !.dp = h.dp]
    /\ p \in InFlight => h.i = 1
    /\ h.my = IF p \in InFlight THEN 1 ELSE 0
    /\ h.c = IF p \in InFlight \ {"X2"} THEN C ELSE NoNode
    /\ h.mn = CASE p \in Applied -> 1
                [] p = "X4b" -> 0
                [] OTHER -> NoNode
    /\ h.copied = (p \in Copied)
    /\ h.dp = IF p \in {"X4c", "X7"} THEN Dp1 ELSE {}

\* The ghosts and the queue (one conjunct per variable: IndInit binds each
\* and checks its conjunct at once).
RetkInv == retk = IF IdleRet THEN {1} ELSE {}
QsInv ==
    /\ qs[0] \in {S0, S1}
    /\ Lab \in InFlight \/ IdleRet \/ th[T].i = 0 => qs[0] = S0
    /\ qs[1] = IF th[T].i = 1 THEN S1 ELSE S0
QInv ==
    q = IF Lab \in InFlight \/ IdleRet
        THEN << Node1(IF Lab \in Applied \/ IdleRet THEN Res1 ELSE 0) >>
        ELSE << >>
RetiredInv == retired = IF IdleRet THEN {0} ELSE {}
GhostInv ==
    /\ RetkInv
    /\ QsInv
    /\ QInv
    /\ RetiredInv
    /\ disposed = {}
    /\ bad = {}

\* curComb's line, per label (m.cc, m.pwc).
CcInv(m) ==
    LET p == Lab IN
    /\ p \in PreCas => CcImages(m) = {CV(D, 0)}
    /\ p = "Y3" =>
         /\ Vis(m.cc) = CV(C, 1) /\ CcImages(m) \subseteq {CV(D, 0), CV(C, 1)}
         /\ m.pwc[T] = 0
    /\ p = "Y4" \/ IdleRet => CcImages(m) = {CV(C, 1)} /\ m.pwc[T] = 0
    /\ IdleRec =>
         /\ m.cc.s = << >> /\ m.pwc[T] = 0
         /\ m.cc.p \in {CV(D, 0), CV(C, 0)}
         /\ m.cc.p.idx = C => th[T].i = 1
         /\ qs[0] = RecX(m.cc.p.idx)

\* Word w of replica c: its line l and the thread's pending pwb count pq on
\* it, per label, with curComb's line ccl.
LineInv(c, w, l, pq, ccl) ==
    LET p == Lab
        RecHolds == ccl.p.idx = c => l.p = RecX(c)[w]
    IN
    IF c = D
    THEN /\ p \in InFlight \/ IdleRet => LineOK(l, S0[w]) /\ pq = 0
         /\ IdleRec => l.s = << >> /\ pq = 0 /\ RecHolds
    ELSE /\ p \in PreCopy => pq = 0
         /\ p = "X4b" => Vis(l) = S0[w] /\ pq = Len(l.s)
         /\ p \in {"X4c", "X7"} => Vis(l) = S1[w] /\ (w \notin th[T].dp => pq = Len(l.s))
         /\ p = "Y1" => Vis(l) = S1[w] /\ pq = Len(l.s)
         /\ p \in {"Y2", "Y3", "Y4"} \/ IdleRet => LineOK(l, S1[w]) /\ pq = 0
         /\ IdleRec => l.s = << >> /\ pq = 0 /\ RecHolds

MemInv ==
    /\ CcInv(mem)
    /\ \A c \in Combs, w \in Words : LineInv(c, w, mem.r[<<c, w>>], mem.pwr[T][<<c, w>>], mem.cc)

\* Volatile memory, per label: the heads and the locks.
HeadAt ==
    LET p == Lab IN
    CASE p \in InFlight ->
           [c \in Combs |-> IF c = D THEN 0
                            ELSE CASE p \in PreCopy -> NoNode
                                   [] p \in {"X4b", "X4c", "X7"} -> 0
                                   [] OTHER -> 1]
      [] IdleRet -> [c \in Combs |-> IF c = D THEN 0 ELSE 1]
      [] OTHER -> [c \in Combs |-> IF c = RecIdx THEN 0 ELSE NoNode]
Lk(ex, sh, dg) == [ex |-> ex, sh |-> sh, dg |-> dg, dl |-> {}]
LkAt ==
    LET p == Lab IN
    CASE p \in InFlight ->
           [c \in Combs |-> IF c = D THEN Lk(0, IF p \in SharedD THEN {T} ELSE {}, TRUE)
                            ELSE CASE p = "X2" -> Lk(0, {}, FALSE)
                                   [] p \in Held -> Lk(T, {}, FALSE)
                                   [] OTHER -> Lk(0, {}, TRUE)]
      [] IdleRet -> [c \in Combs |-> Lk(0, {}, c = C)]
      [] OTHER -> [c \in Combs |-> LkFresh(c = RecIdx)]

VolInv ==
    /\ head = HeadAt
    /\ lk = LkAt

IndInv ==
    /\ TypeOK
    /\ CurCombConsistent
    /\ DurableImageConsistent
    /\ CompletedDurable
    /\ ResultsCorrect
    /\ ThInv
    /\ GhostInv
    /\ MemInv
    /\ VolInv

-----------------------------------------------------------------------------
(* The bounded domain.                                                     *)

Vals01 == 0 .. 1
SeqsUpTo(S, n) == UNION {[1 .. k -> S] : k \in 0 .. n}
\* D's lines: at most MaxPendD pending stores; C's: two (the copy's and the
\* mutation's, on top of what C held).
LineDomD == [p : Vals01, s : SeqsUpTo(Vals01, MaxPendD)]
LineDomC == [p : Vals01, s : SeqsUpTo(Vals01, 2)]
CVs == {CV(c, k) : c \in Combs, k \in 0 .. MaxQ}
CcDom == [p : CVs, s : SeqsUpTo(CVs, 1)]
LkDom == [ex : 0 .. N, sh : SUBSET Threads, dg : BOOLEAN, dl : {{}}]
HeadDom == (0 .. MaxQ) \cup {NoNode}
QDom == {<< >>} \cup {<< Node1(r) >> : r \in Vals01}

\* The registers IndInv leaves open (the others at Idle's, see the header).
ThDom == {[Idle(i) EXCEPT !.pc = p, !.my = my, !.c = c, !.mn = mn, !.copied = cp, !.dp = dp] :
            i \in 0 .. NOps, p \in Pcs, my \in 0 .. MaxQ, c \in {NoNode} \cup Combs,
            mn \in HeadDom, cp \in BOOLEAN, dp \in SUBSET Words}

\* The domain up to the ghosts (what every reachable state satisfies, checked
\* by hand: README.md), and the ghosts at their one value.
DomainShape ==
    /\ \A t \in Threads : Regs(th[t]) \in ThDom
    /\ mem.cc \in CcDom
    /\ \A w \in Words : mem.r[<<D, w>>] \in LineDomD /\ mem.r[<<C, w>>] \in LineDomC
    /\ \A ln \in Lines : mem.pwr[T][ln] <= Len(mem.r[ln].s)
    /\ mem.pwc[T] <= Len(mem.cc.s)
    /\ \A c \in Combs : lk[c] \in LkDom /\ head[c] \in HeadDom
    /\ q \in QDom
    /\ retired \subseteq 0 .. MaxQ /\ disposed \subseteq 0 .. MaxQ /\ retk \subseteq 0 .. MaxQ
    /\ bad \subseteq Threads \X (1 .. NOps)
    /\ qs \in [0 .. MaxQ -> [Words -> Vals01]]
IndDomain ==
    /\ crashes = 0 /\ hist = << >>
    /\ \A t \in Threads : th[t] = Regs(th[t])
    /\ DomainShape

\* Every IndInv state of the domain, built in an order that lets TLC prune:
\* the registers, the ghosts, then memory, then the volatile state.
IndInit ==
    /\ crashes = 0 /\ hist = << >>
    /\ th \in [Threads -> ThDom]
    /\ ThInv
    /\ retk \in SUBSET (0 .. MaxQ) /\ RetkInv
    /\ qs \in [0 .. MaxQ -> [Words -> Vals01]] /\ QsInv
    /\ q \in QDom /\ QInv
    /\ retired \in SUBSET (0 .. MaxQ) /\ RetiredInv
    /\ disposed \in SUBSET (0 .. MaxQ) /\ disposed = {}
    /\ bad \in SUBSET (Threads \X (1 .. NOps)) /\ bad = {}
    /\ \E ccl \in CcDom, pc0 \in 0 .. 1 :
         /\ pc0 <= Len(ccl.s)
         /\ CcInv([cc |-> ccl, pwc |-> [t \in Threads |-> pc0]])
         \* word by word (W = 2): D's lines, then C's
         /\ \E a1 \in LineDomD, qa1 \in 0 .. MaxPendD :
            /\ qa1 <= Len(a1.s) /\ LineInv(D, 1, a1, qa1, ccl)
            /\ \E a2 \in LineDomD, qa2 \in 0 .. MaxPendD :
               /\ qa2 <= Len(a2.s) /\ LineInv(D, 2, a2, qa2, ccl)
               /\ \E b1 \in LineDomC, qb1 \in 0 .. 2 :
                  /\ qb1 <= Len(b1.s) /\ LineInv(C, 1, b1, qb1, ccl)
                  /\ \E b2 \in LineDomC, qb2 \in 0 .. 2 :
                     /\ qb2 <= Len(b2.s) /\ LineInv(C, 2, b2, qb2, ccl)
                     /\ LET rd == <<a1, a2>>
                            qd == <<qa1, qa2>>
                            rc == <<b1, b2>>
                            qc == <<qb1, qb2>>
                        IN mem = [cc |-> ccl, pwc |-> [t \in Threads |-> pc0],
                                  r |-> [ln \in Lines |-> IF ln[1] = D THEN rd[ln[2]] ELSE rc[ln[2]]],
                                  pwr |-> [t \in Threads |->
                                             [ln \in Lines |-> IF ln[1] = D THEN qd[ln[2]] ELSE qc[ln[2]]]]]
    \* (each of these is the domain's set intersected with the one value
    \* VolInv allows, written value first so that TLC does not enumerate)
    /\ head = HeadAt /\ head \in [Combs -> HeadDom]
    /\ lk = LkAt /\ lk \in [Combs -> LkDom]
    /\ IndInv
=============================================================================

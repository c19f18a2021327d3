------------------------------ MODULE RedoPTMInd ------------------------------
(***************************************************************************)
(* Inductiveness of Redo-PTM's witness of durable linearizability (issue  *)
(* 20, §4), for the fixed algorithm (F1-F4 on, every mutant switch off).   *)
(* RedoPTM.cfg checks CurCombConsistent, DurableImageConsistent,           *)
(* CompletedDurable, ResultsCorrect and ExactlyOnce on the states          *)
(* reachable within its bounds; this module states them, strengthened, as *)
(* an inductive invariant IndInv, and RedoPTMInd.cfg checks                *)
(*     IndInv /\ [Next]_vars => IndInv'                                    *)
(* with TLC as DetectableCASInd and CheckpointInd do: INIT IndInit is      *)
(* every state of a bounded, type-correct domain (IndDomain) that          *)
(* satisfies IndInv, not only the reachable ones; NEXT is RedoPTM's own    *)
(* Next (Spec's: Algorithm 3 as the seed writes it, with the fixes, every  *)
(* CAS a fence, and Crash); the INVARIANT is IndInv; the ACTION_CONSTRAINT *)
(* IndDomain (on the source state only) keeps TLC from expanding           *)
(* successors that leave the domain, which it still checks against       *)
(* IndInv.                                                                 *)
(*                                                                         *)
(* THE SUB-CONFIGURATION (what this does NOT cover).  The smallest bound   *)
(* of specs/ptm/README.md: one thread (N = 1), one transaction (NOps = 1,  *)
(* workload "inc": inc(1)), RSIZE = 1, W = 2 words, N+1 = 2 replicas, full *)
(* crashes.  Its reachable graph from Init has 31 states (depth 15).       *)
(* Everything that needs a second thread is left out, i.e. every Finding   *)
(* of the seed: helping the ring (L17, F1), the release order after a CAS  *)
(* (F2), request numbers against a published read (F3), the undo after a   *)
(* failed CAS (F4); also a failed CAS at all (U38), the copy's retry and   *)
(* give-up (M3's else, M2's "applied" exit), applyRedologs (R1: with one   *)
(* transaction no replica is ever behind by a logged transition), the      *)
(* second iteration, U40-U46, reads (Algorithm 2), a State reused, a ring  *)
(* that wraps, and a second crash.  IndInv says those labels are           *)
(* unreachable here (the thread is only ever at the labels of its one      *)
(* path).  They are checked by exploration only (RedoPTM*.cfg).            *)
(*                                                                         *)
(* THE DOMAIN (IndDomain).  Replica words and pending stores in {0, 1}, at *)
(* most MaxPendD (1; 0 in the mutants, to keep them short) pending stores  *)
(* on a line of D, 2 on a line of C, 1 on curComb's; tickets of seq 0..1;  *)
(* States with at most one log entry; the locks' shared sets empty (no     *)
(* reader at this bound); registers pc, i, c, tkt, dp and gops free.  The  *)
(* ghosts no step reads to decide anything but themselves are at one       *)
(* value: the history empty (hist: only HistoryDurablyLinearizable reads   *)
(* it), the step and fence counters 0 and pend FALSE (ns, nf, pend: read   *)
(* only to count, by FenceBound, StepBound and BoundedSteps), and the     *)
(* crash counter 0 (a state whose crash is used up has the same successors *)
(* minus Crash).  The thread's registers that only Spec's other variants   *)
(* use (pw, pl, wnx, init, ds, rq) are Idle's; so are curC, comb, tail,    *)
(* rt, hd, ccv, k, att, iter, ri, res: IndInv says what they hold (the     *)
(* values U8, M1 and U34 read at this bound, which are Idle's defaults).  *)
(*                                                                         *)
(* THE STRENGTHENING.  At this bound the thread's volatile state is a      *)
(* function of its label (one path: U8 U13 U18 M1 M2 M3 U20 U26 U30 U32    *)
(* U34 U31, then Idle), and IndInv states it as relations (the ticket is   *)
(* the tail's seq + 1 with the thread's State index, the State is a copy of *)
(* the tail's until U20 and then holds the simulation's log and result,   *)
(* the held replica's head and lock per step, the ring, announce and req). *)
(* The content is in persistent memory, where IndInv is weaker than the   *)
(* reachable states (D = replica 0, the one curComb designates at the      *)
(* invocation; C = replica 1, the one U18 locks):                          *)
(*  - D is never written: every image of its lines is the state of seq 0  *)
(*    (pending stores of that same value allowed), no pwb of the thread;   *)
(*  - C before the copy (U8-M2): any persisted values and any pending     *)
(*    stores (its head is Invalid: nothing reads it, and no crash image   *)
(*    of it is kept), no pwb of the thread pending until M3;               *)
(*  - C after the copy: its visible content is what the step computed (M3: *)
(*    D's content; U20: the state of seq 0; U26, U30: the state after the *)
(*    transaction), its persisted values and earlier pending stores        *)
(*    anything; from U20 on every pending store of C is covered by a       *)
(*    pending pwb of the thread, except (at U26) on the lines the          *)
(*    simulation stored to, which L26 is about to flush (the deferred      *)
(*    pwbs, dp, are exactly those lines).  So U30's CAS, a fence, leaves C *)
(*    holding the new state in every image before curComb can designate   *)
(*    it (what FlushBeforeCas buys: DurableImageConsistent);               *)
(*  - curComb: before the commit every image is CV(0, D); after it (U32,   *)
(*    U34) it is CV(1, C), with CV(0, D) still a possible image, and after *)
(*    L35's fence (U31, and the completed transaction) CV(1, C) is        *)
(*    persisted (what ReturnPersist buys: CompletedDurable); every image's *)
(*    replica holds its seq's state (DurableImageConsistent);              *)
(*  - the ghosts: committed (ncom = 1) iff past U30, and then sig[1] is    *)
(*    inc(1) applied to sig[0], the result the one of seq 0; a returned    *)
(*    transaction is committed and durable;                                *)
(*  - after a crash (Idle, not returned, or Idle before the invocation):   *)
(*    null recovery's state at the persisted curComb: its replica's lines  *)
(*    persisted with its seq's state and nothing pending, the other        *)
(*    replica invalid (any persisted values), the head, ring and lock of   *)
(*    recovery, fresh States, announce and req 0.                          *)
(*                                                                         *)
(* Not vacuous: mutants/RedoPTMIndFlushAfterCas.cfg (FlushBeforeCas =      *)
(* FALSE) and mutants/RedoPTMIndNoReturnPersist.cfg (ReturnPersist =       *)
(* FALSE) each get a successor breaking IndInv.  Sanity check, by hand     *)
(* (README.md, "Inductiveness"): every state Spec reaches from Init at     *)
(* this bound (31 states) satisfies IndInv and, up to the ghosts above,    *)
(* IndDomain, so the strengthening is not stronger than the protocol.      *)
(***************************************************************************)
EXTENDS RedoPTM

CONSTANT MaxPendD     \* pending stores on a line of D in the domain (1; the mutants: 0)

ASSUME N = 1 /\ NOps = 1 /\ W = 2 /\ RSIZE = 1 /\ Workload = "inc"   \* the bound IndInit builds

T == 1                                    \* the one thread
D == 0                                    \* the replica curComb designates at the invocation
C == 1                                    \* the replica the thread locks (U18: the lowest free)
X0 == ObjInit                             \* the state of seq 0
Op1 == WorkOf(T, 1)                       \* the thread's one transaction
X1 == FoldOps(X0, << <<T, 1>> >>)         \* the state of seq 1, once committed
Res1 == ResultOf(Op1, X0)
Log1 == LogOf(X0, StoresOf(Op1, X0))
Tkt1 == Tk(1, T, 0)
Committed == ncom[T][1] = 1

\* The thread's registers but the counters (ghosts, see the header).
Regs(r) == [r EXCEPT !.ns = 0, !.nf = 0, !.pend = FALSE]

\* The labels of the one path.
InFlight == {"U8", "U13", "U18", "M1", "M2", "M3", "U20", "U26", "U30", "U32", "U34", "U31"}
Ticketed == InFlight \ {"U8"}
Locked == {"M1", "M2", "M3", "U20", "U26"}          \* C held exclusively
Installed == {"U30", "U32", "U34", "U31"}            \* C's head is the ticket, downgraded
PreCommit == {"U8", "U13", "U18", "M1", "M2", "M3", "U20", "U26", "U30"}
PostCommit == {"U32", "U34", "U31"}
Simulated == {"U26", "U30", "U32", "U34", "U31"}

LineOK(l, v) == LineImages(l) = {v}                    \* every image of the line is v

\* The State the thread fills (RSIZE = 1: its only one).
StAt(p) ==
    IF p = "U8" THEN Fresh
    ELSE IF p \in Simulated
    THEN [tkt |-> Tkt1, applied |-> [u \in Threads |-> 1], results |-> [u \in Threads |-> Res1],
          log |-> Log1, lsz |-> IF p = "U26" THEN 0 ELSE Len(Log1)]
    ELSE [Fresh EXCEPT !.tkt = th[T].tkt]

\* The thread's registers, per label.
ThInv ==
    LET h == th[T]
        p == h.pc
    IN
    /\ p \in InFlight \cup {"Idle"}
    /\ Regs(h) = [Idle(h.i) EXCEPT !.pc = p, !.c = h.c, !.tkt = h.tkt, !.dp = h.dp, !.gops = h.gops]
    /\ p \in InFlight => h.i = 1
    /\ h.c = IF p \in Locked \cup Installed THEN C ELSE -1
    /\ h.tkt = IF p \in Ticketed THEN Tk(h.tail.seq + 1, T, 0) ELSE Tk0
    /\ h.gops = IF p \in {"U26", "U30"} THEN << <<T, 1>> >> ELSE << >>
    /\ h.dp = IF p = "U26" THEN {e.a : e \in Range(Log1)} ELSE {}

\* The registers against the rest: what U8 read (curComb, its replica's head:
\* Idle's defaults at this bound) and the ticket it made.
ThLinks ==
    LET h == th[T]
        p == h.pc
    IN
    /\ p \in InFlight => h.curC = CV(0, D) /\ h.comb = D /\ h.tail = head[D]
    /\ p \in Ticketed => h.tkt.idx = lidx[T]

GhostInv ==
    LET h == th[T] IN
    /\ sig[0] = X0
    /\ ncom[T][1] \in {0, 1}
    /\ IF Committed
       THEN sig[1] = X1 /\ oseq[T][1] = 1 /\ exp[T][1] = Res1
       ELSE sig[1] = X0 /\ oseq[T][1] = 0 /\ exp[T][1] = 0 /\ ~ret[T][1]
    /\ h.pc \in PostCommit => Committed
    /\ h.i = 0 \/ h.pc \in PreCommit => ~Committed
    /\ ret[T][1] => h.pc = "Idle" /\ h.i = 1
    /\ bad = {}

\* Between transactions: after the transaction returned (the state L36
\* leaves), or null recovery's (before the invocation, and after a crash).
IdleRet == th[T].pc = "Idle" /\ th[T].i = 1 /\ ret[T][1]
IdleRec == th[T].pc = "Idle" /\ ~IdleRet
RecCV == mem.cc.p                         \* after a crash: what recovery read

\* Volatile memory, per label: what each variable holds.
HeadAt ==
    LET p == th[T].pc IN
    CASE p \in InFlight ->
           [c \in Combs |-> IF c = D THEN Tk0
                            ELSE CASE p \in {"U8", "U13", "U18", "M1", "M2", "M3"} -> Invalid
                                   [] p \in {"U20", "U26"} -> th[T].tail
                                   [] OTHER -> th[T].tkt]
      [] IdleRet -> [c \in Combs |-> IF c = C THEN Tkt1 ELSE Tk0]
      [] OTHER -> [c \in Combs |-> IF c = RecCV.idx THEN Tk(RecCV.seq, 0, 0) ELSE Invalid]
LkAt ==
    LET p == th[T].pc
        L(ex, dg) == [ex |-> ex, sh |-> {}, dg |-> dg]
    IN
    CASE p \in InFlight ->
           [c \in Combs |-> IF c = D THEN L(0, TRUE)
                            ELSE CASE p \in {"U8", "U13", "U18"} -> L(0, FALSE)
                                   [] p \in Locked -> L(T, FALSE)
                                   [] OTHER -> L(0, TRUE)]
      [] IdleRet -> [c \in Combs |-> L(0, c = C)]
      [] OTHER -> [c \in Combs |-> L(0, c = RecCV.idx)]
RingAt ==
    LET p == th[T].pc IN
    CASE p \in InFlight -> [k \in Slots |-> IF p = "U31" THEN th[T].tkt ELSE Tk0]
      [] IdleRet -> [k \in Slots |-> Tkt1]
      [] OTHER -> [k \in Slots |-> IF k = RecCV.seq % RSIZE THEN Tk(RecCV.seq, 0, 0) ELSE Tk0]
StsAt ==
    LET p == th[T].pc IN
    CASE p \in InFlight -> [t \in Threads |-> [j \in Slots |-> StAt(p)]]
      [] IdleRet -> [t \in Threads |-> [j \in Slots |-> StAt("U31")]]
      [] OTHER -> [t \in Threads |-> [j \in Slots |-> Fresh]]
\* announce and req: the request's number and index (1 from the invocation
\* on, 0 after recovery).
ReqN == IF th[T].pc \in InFlight \/ IdleRet THEN 1 ELSE 0

VolInv ==
    /\ lidx[T] = 0
    /\ head = HeadAt
    /\ lk = LkAt
    /\ ring = RingAt
    /\ sts = StsAt
    /\ ann[T] = ReqN /\ req[T] = [n |-> ReqN, i |-> ReqN]

\* curComb's line, per label (m.cc, m.pwc).
CcInv(m) ==
    LET p == th[T].pc IN
    /\ p \in PreCommit => CcImages(m) = {CV(0, D)} /\ Vis(m.cc) = CV(0, D)
    /\ p \in {"U32", "U34"} =>
         /\ Vis(m.cc) = CV(1, C) /\ CcImages(m) \subseteq {CV(0, D), CV(1, C)}
         /\ m.pwc[T] = 0
    /\ p = "U31" => CcImages(m) = {CV(1, C)} /\ m.pwc[T] = 0
    /\ IdleRet => CcImages(m) = {CV(1, C)} /\ m.pwc[T] = 0
    /\ IdleRec =>
         /\ m.cc.s = << >> /\ m.pwc[T] = 0
         /\ m.cc.p \in {CV(0, D), CV(1, C)}
         /\ m.cc.p.seq = 1 => Committed
         /\ th[T].i = 0 => m.cc.p = CV(0, D)

\* Word w of replica c: its line l and the thread's pending pwb count q on
\* it, per label, with curComb's line ccl and word w of D's visible content
\* dw (read at M3).
LineInv(c, w, l, q, ccl, dw) ==
    LET p == th[T].pc
        RecHolds == ccl.p.idx = c => LineOK(l, sig[ccl.p.seq][w])
    IN
    IF c = D
    THEN /\ p \in InFlight \/ IdleRet => LineOK(l, X0[w]) /\ q = 0
         /\ IdleRec => l.s = << >> /\ q = 0 /\ RecHolds
    ELSE /\ p \in {"U8", "U13", "U18", "M1", "M2", "M3"} => q = 0
         /\ p = "M3" => Vis(l) = dw
         /\ p = "U20" => Vis(l) = X0[w] /\ q = Len(l.s)
         /\ p = "U26" => Vis(l) = X1[w] /\ (w \notin th[T].dp => q = Len(l.s))
         /\ p = "U30" => Vis(l) = X1[w] /\ q = Len(l.s)
         /\ p \in PostCommit \/ IdleRet => LineOK(l, X1[w]) /\ q = 0
         /\ IdleRec => l.s = << >> /\ q = 0 /\ RecHolds

MemInv ==
    /\ CcInv(mem)
    /\ \A c \in Combs, w \in Words :
         LineInv(c, w, mem.r[<<c, w>>], mem.pwr[T][<<c, w>>], mem.cc, Vis(mem.r[<<D, w>>]))

IndInv ==
    /\ TypeOK
    /\ ExactlyOnce
    /\ CurCombConsistent
    /\ DurableImageConsistent
    /\ CompletedDurable
    /\ ResultsCorrect
    /\ ThInv
    /\ ThLinks
    /\ GhostInv
    /\ MemInv
    /\ VolInv

-----------------------------------------------------------------------------
(* The bounded domain.                                                     *)

Vals01 == 0 .. 1
SeqsUpTo(S, n) == UNION {[1 .. k -> S] : k \in 0 .. n}
\* D's lines: at most MaxPendD pending stores; C's: two (the copy's and the
\* simulation's, on top of what C held).
LineDomD == [p : Vals01, s : SeqsUpTo(Vals01, MaxPendD)]
LineDomC == [p : Vals01, s : SeqsUpTo(Vals01, 2)]
CVs == {CV(s, c) : s \in 0 .. MaxSeq, c \in Combs}
CcDom == [p : CVs, s : SeqsUpTo(CVs, 1)]
LkDom == [ex : 0 .. N, sh : {{}}, dg : BOOLEAN]
LogDom == {<< >>} \cup {<<e>> : e \in [a : Words, old : Vals01, new : Vals01]}
StDom == {[tkt |-> tk, applied |-> ap, results |-> rs, log |-> lg, lsz |-> z] :
            tk \in Tickets, ap \in [Threads -> Vals01], rs \in [Threads -> Vals01],
            lg \in LogDom, z \in 0 .. 1}

\* The registers IndInv leaves open (the others at Idle's, see the header).
ThDom == {[Idle(i) EXCEPT !.pc = p, !.c = c, !.tkt = tk, !.dp = dp, !.gops = g] :
            i \in 0 .. NOps, p \in Pcs, c \in {-1} \cup Combs, tk \in Tickets,
            dp \in SUBSET Words, g \in {<< >>, << <<T, 1>> >>}}

\* The domain up to the ghosts (what every reachable state satisfies, checked
\* by hand: README.md), and the ghosts at their one value.
DomainShape ==
    /\ \A t \in Threads : Regs(th[t]) \in ThDom
    /\ mem.cc \in CcDom
    /\ \A w \in Words : mem.r[<<D, w>>] \in LineDomD /\ mem.r[<<C, w>>] \in LineDomC
    /\ \A ln \in Lines : mem.pwr[T][ln] <= Len(mem.r[ln].s)
    /\ mem.pwc[T] <= Len(mem.cc.s)
    /\ \A c \in Combs : lk[c] \in LkDom
    /\ sts[T][0] \in StDom
    /\ \A j \in 0 .. MaxSeq : sig[j] \in [Words -> Vals01]
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
    /\ sig \in [0 .. MaxSeq -> [Words -> Vals01]]
    /\ ncom \in [Threads -> [1 .. NOps -> 0 .. 2]]
    /\ oseq \in [Threads -> [1 .. NOps -> 0 .. MaxSeq]]
    /\ ret \in [Threads -> [1 .. NOps -> BOOLEAN]]
    /\ exp \in [Threads -> [1 .. NOps -> Vals01]]
    /\ bad \in SUBSET (Threads \X (1 .. NOps))
    /\ GhostInv
    /\ \E ccl \in CcDom, pc0 \in 0 .. 1 :
         /\ pc0 <= Len(ccl.s)
         /\ CcInv([cc |-> ccl, pwc |-> [t \in Threads |-> pc0]])
         \* word by word (W = 2): D's lines, then C's
         /\ \E a1 \in LineDomD, qa1 \in 0 .. MaxPendD :
            /\ qa1 <= Len(a1.s) /\ LineInv(D, 1, a1, qa1, ccl, 0)
            /\ \E a2 \in LineDomD, qa2 \in 0 .. MaxPendD :
               /\ qa2 <= Len(a2.s) /\ LineInv(D, 2, a2, qa2, ccl, 0)
               /\ \E b1 \in LineDomC, qb1 \in 0 .. 2 :
                  /\ qb1 <= Len(b1.s) /\ LineInv(C, 1, b1, qb1, ccl, Vis(a1))
                  /\ \E b2 \in LineDomC, qb2 \in 0 .. 2 :
                     /\ qb2 <= Len(b2.s) /\ LineInv(C, 2, b2, qb2, ccl, Vis(a2))
                     /\ LET r == <<a1, a2>>
                            q == <<qa1, qa2>>
                            rc == <<b1, b2>>
                            qc == <<qb1, qb2>>
                        IN mem = [cc |-> ccl, pwc |-> [t \in Threads |-> pc0],
                                  r |-> [ln \in Lines |-> IF ln[1] = D THEN r[ln[2]] ELSE rc[ln[2]]],
                                  pwr |-> [t \in Threads |->
                                             [ln \in Lines |-> IF ln[1] = D THEN q[ln[2]] ELSE qc[ln[2]]]]]
                     /\ CurCombConsistent /\ DurableImageConsistent /\ CompletedDurable
    \* (each of these is the domain's set intersected with the one value
    \* VolInv allows, written value first so that TLC does not enumerate)
    /\ head = HeadAt /\ head \in [Combs -> Tickets]
    /\ lk = LkAt /\ lk \in [Combs -> LkDom]
    /\ ring = RingAt /\ ring \in [Slots -> Tickets]
    /\ lidx = [t \in Threads |-> 0]
    /\ ann = [t \in Threads |-> ReqN]
    /\ req = [t \in Threads |-> [n |-> ReqN, i |-> ReqN]]
    /\ sts = StsAt /\ sts \in [Threads -> [Slots -> StDom]]
    /\ IndInv
=============================================================================

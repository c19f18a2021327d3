----------------------------- MODULE RedoPTMIndTx -----------------------------
(***************************************************************************)
(* DRAFT, NOT A ROW (no cfg; README.md, "Inductiveness"): RedoPTMInd.tla  *)
(* generalised to the thread's transactions i = 1..NOps.  Measured by     *)
(* hand with RedoPTMInd.cfg's constants: NOps = 1 passes (26,328 states,   *)
(* 18,408 initial, depth 2, 64 s with 1 worker at load average 7); at     *)
(* NOps = 2 Spec's 115 reachable states satisfy IndInv and DomainShape,   *)
(* but the inductive check did not finish in the session (IndInit had     *)
(* enumerated more than 524,288 states after 13 min with MaxPendD = 1,     *)
(* more than 131,072 after 14 min with MaxPendD = 0; stopped): the domain  *)
(* needs to be made smaller or IndInit faster before it can be a deep     *)
(* row.  The mutants were not run against it.                              *)
(*                                                                         *)
(* Inductiveness of Redo-PTM's witness of durable linearizability (issue  *)
(* 20, §4), for the fixed algorithm (F1-F4 on, every mutant switch off).   *)
(* RedoPTM.cfg checks CurCombConsistent, DurableImageConsistent,           *)
(* CompletedDurable, ResultsCorrect and ExactlyOnce on the states          *)
(* reachable within its bounds; this module states them, strengthened, as *)
(* an inductive invariant IndInv, to be checked as                         *)
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
(* THE SUB-CONFIGURATION (what this does NOT cover).  One thread (N = 1),  *)
(* RSIZE = 1, W = 2 words, N+1 = 2 replicas, workload "inc" (transaction i *)
(* increments word ((1+i) % 2) + 1), full crashes: one transaction       *)
(* (NOps = 1; from Init Spec reaches 31 states, depth 15) or two (NOps =   *)
(* 2; 115 states, depth 29): the second                                    *)
(* transaction reuses the thread's only State and the ring's only slot,    *)
(* finds the other replica behind by one logged transition, whose State   *)
(* it has just reused, so applyRedologs' validity check (R1) sends it to   *)
(* the copy; or it runs after a crash, on null recovery's state.           *)
(* Everything that needs a second thread is left out, i.e. every Finding   *)
(* of the seed: helping the ring (L17, F1), the release order after a CAS  *)
(* (F2), request numbers against a published read (F3), the undo after a   *)
(* failed CAS (F4); also a failed CAS at all (U38), the copy's retry and   *)
(* give-up (M3's else, M2's "applied" exit), a log applied by R1, the      *)
(* second iteration, U40-U46, reads (Algorithm 2), and a second crash.     *)
(* IndInv says those labels are unreachable here (the thread is only ever  *)
(* at the labels of one path).  They are checked by exploration only      *)
(* (RedoPTM*.cfg).                                                         *)
(*                                                                         *)
(* THE DOMAIN (IndDomain = DomainShape /\ DeadPins).  DomainShape, which   *)
(* every reachable state satisfies: replica words and pending stores in    *)
(* {0, 1}; at most MaxPendD (1; 0 in the mutants, to keep them short)      *)
(* pending stores on a line of the designated replica D, at most one on a  *)
(* line of the other one C before the copy and between transactions and   *)
(* two from the copy on (the copy's and the simulation's), one on          *)
(* curComb's; tickets of seq 0..NOps; the locks' shared sets empty (no     *)
(* reader at this bound).  DeadPins: what no step reads before writing it  *)
(* is at one value: the history (only HistoryDurablyLinearizable reads     *)
(* it), the step and fence counters and pend (read only to count: ns, nf,  *)
(* pend), the crash counter (a state whose crash is used up has the same   *)
(* successors minus Crash); sig of a seq curComb's line does not hold (a   *)
(* commit writes it before anything reads it); oseq and exp of a          *)
(* transaction not committed in flight (read at its return; oseq also     *)
(* after it, by CompletedDurable, and kept then); the State's result, log  *)
(* and size before the simulation writes them.                             *)
(*                                                                         *)
(* THE STRENGTHENING.  The thread's volatile state is a function of its    *)
(* label (one path per transaction: U8 U13 U18 [R1] M1 M2 M3 U20 U26 U30   *)
(* U32 U34 U31, then Idle) and of the transaction's context: D, the       *)
(* replica curComb designated when U8 read it, its seq S0 and its head     *)
(* (the thread's ticket of S0 after a transaction that returned, recovery's*)
(* fresh one after a crash), and C's head before the copy (invalid, or its *)
(* ticket of seq S0 - 1 when the previous transaction returned, with that  *)
(* ticket's State reused since: R1 then copies).  IndInv states the       *)
(* registers (RegsOf: the ticket is Tk(S0 + 1), curC and tail what U8      *)
(* read, hd and ccv what M1 read, rt what U32 read), announce and req (the *)
(* request's number counts the invocations since the last crash), the     *)
(* heads, locks, ring and State per label.  The content is in persistent   *)
(* memory, where IndInv is weaker than the reachable states:               *)
(*  - D is never written while designated: every image of its lines is the *)
(*    state of S0 (pending stores of that same value allowed), no pwb of   *)
(*    the thread;                                                          *)
(*  - C before the copy, and between transactions: any persisted values,   *)
(*    any pending stores (nothing reads them: its head is invalid or      *)
(*    behind, no crash image of it is kept), no pwb of the thread;         *)
(*  - C after the copy: its visible content is what the step computed (M3: *)
(*    D's content; U20: the state of S0; U26, U30: the state after the     *)
(*    transaction), its persisted values and earlier pending stores        *)
(*    anything; from U20 on every pending store of C is covered by a       *)
(*    pending pwb of the thread, except (at U26) on the words the          *)
(*    transaction stores to, which L26 is about to flush.  So U30's CAS, a *)
(*    fence, leaves C holding the new state in every image before curComb  *)
(*    can designate it (what FlushBeforeCas buys: DurableImageConsistent); *)
(*  - curComb: before the commit every image is CV(S0, D); after it (U32,  *)
(*    U34) it is CV(S0 + 1, C), with CV(S0, D) still a possible image, and *)
(*    from L35's fence on (U31, and the transaction returned) only         *)
(*    CV(S0 + 1, C) (what ReturnPersist buys: CompletedDurable);           *)
(*  - the ghosts: the transaction in flight is committed (ncom = 1) iff    *)
(*    past U30, and then sig[S0 + 1] is it applied to sig[S0], its         *)
(*    expected result the one of sig[S0]; a later one is untouched; a      *)
(*    returned one is committed (and durable: CompletedDurable).           *)
(*                                                                         *)
(* Sanity check, by hand                                                   *)
(* (README.md, "Inductiveness"): every state Spec reaches from Init at     *)
(* these bounds (31 and 115 states) satisfies IndInv and DomainShape, so   *)
(* the strengthening is not stronger than the protocol.                    *)
(***************************************************************************)
EXTENDS RedoPTM


CONSTANT MaxPendD     \* pending stores on a line of D in the domain (1; the mutants: 0)

ASSUME N = 1 /\ W = 2 /\ RSIZE = 1 /\ Workload = "inc"   \* the bound IndInit builds

T == 1                                    \* the one thread
Regs(r) == [r EXCEPT !.ns = 0, !.nf = 0, !.pend = FALSE]

\* The labels of a transaction's path.
InFlight == {"U8", "U13", "U18", "R1", "M1", "M2", "M3", "U20", "U26", "U30", "U32", "U34", "U31"}
Ticketed == InFlight \ {"U8"}
Held == {"R1", "M1", "M2", "M3", "U20", "U26", "U30", "U32", "U34", "U31"}
Locked == {"R1", "M1", "M2", "M3", "U20", "U26"}
PreCommit == {"U8", "U13", "U18", "R1", "M1", "M2", "M3", "U20", "U26", "U30"}
PostCommit == {"U32", "U34", "U31"}
Simulated == {"U26", "U30", "U32", "U34", "U31"}
BeforeCopy == {"U8", "U13", "U18", "R1", "M1", "M2", "M3"}

\* The words transaction i stores to (inc: one, whatever the state).
DpI(i) == {e[1] : e \in Range(StoresOf(WorkOf(T, i), ObjInit))}

\* The registers at label p of transaction i, which read curComb = cv and
\* its replica's head tl at U8, head[C].seq + 1 = kk at U18 (R1) and the ring
\* slot rtv at U32 (U34); every other register at Idle's.
RegsOf(p, i, cv, tl, kk, rtv) ==
    [Idle(i) EXCEPT !.pc = p,
                    !.c = IF p \in Held THEN 1 - cv.idx ELSE -1,
                    !.tkt = IF p \in Ticketed THEN Tk(cv.seq + 1, T, 0) ELSE Tk0,
                    !.curC = IF p \in Ticketed \cap PreCommit THEN cv ELSE CV(0, 0),
                    !.comb = IF p \in Ticketed THEN cv.idx ELSE 0,
                    !.tail = IF p \in Ticketed \cap PreCommit THEN tl ELSE Tk0,
                    !.k = IF p = "R1" THEN kk ELSE 0,
                    !.hd = IF p \in {"M2", "M3"} THEN tl ELSE Tk0,
                    !.ccv = IF p \in {"M2", "M3"} THEN cv ELSE CV(0, 0),
                    !.rt = IF p = "U34" THEN rtv ELSE Tk0,
                    !.gops = IF p \in {"U26", "U30"} THEN << <<T, i>> >> ELSE << >>,
                    !.dp = IF p = "U26" THEN DpI(i) ELSE {}]

-----------------------------------------------------------------------------
(* The context of the thread's transaction (h = th[T]): D the replica       *)
(* curComb designated when it read curComb (at U8; before U8 and between  *)
(* transactions: the designated one), S0 its seq, C the other replica.     *)
(* After the commit the registers keep D in comb and S0 + 1 in the ticket. *)
(* m: the memory (IndInit passes curComb's line before it builds the rest). *)

DDm(m) == IF th[T].pc \in Ticketed THEN th[T].comb ELSE Vis(m.cc).idx
S0m(m) == IF th[T].pc \in Ticketed THEN th[T].tkt.seq - 1 ELSE Vis(m.cc).seq
DD == DDm(mem)
CC == 1 - DD
S0 == S0m(mem)
XS == sig[S0]                                  \* the state the transaction runs on
XN == FoldOps(XS, << <<T, th[T].i>> >>)          \* the state it commits
ResI == ResultOf(WorkOf(T, th[T].i), XS)
LogI == LogOf(XS, StoresOf(WorkOf(T, th[T].i), XS))
TktI == Tk(S0 + 1, T, 0)
RN == req[T].n                                 \* requests since the last crash

\* Between transactions: returned (req still the last request) or recovered
\* (req reset by the crash; also the initial state).
IdleRet == th[T].pc = "Idle" /\ req[T].n >= 1
IdleRec == th[T].pc = "Idle" /\ req[T].n = 0

LineOK(l, v) == LineImages(l) = {v}                    \* every image of the line is v

\* The thread's registers (with ThLinks below: what they read).
ThInv ==
    LET h == th[T] IN
    /\ h.pc \in InFlight \cup {"Idle"}
    /\ h.pc \in InFlight => h.i >= 1
    /\ Regs(h) = RegsOf(h.pc, h.i, CV(S0, DD), head[DD], head[CC].seq + 1, ring[0])

\* announce and the request.
ReqInv ==
    LET h == th[T] IN
    /\ ann[T] = req[T].n
    /\ h.pc \in InFlight => req[T].n \in 1 .. h.i /\ req[T].i = h.i
    /\ h.pc = "Idle" /\ req[T].n >= 1 => req[T].n <= h.i /\ req[T].i = h.i
    /\ h.pc = "Idle" /\ req[T].n = 0 => req[T].i = 0

\* Ghosts, per transaction j of the thread (i its current one).
GhostInv ==
    LET h == th[T]
        i == h.i
    IN
    /\ bad = {}
    /\ \A j \in 1 .. NOps :
         /\ ncom[T][j] \in {0, 1}
         /\ ret[T][j] => ncom[T][j] = 1 /\ oseq[T][j] >= 1
         /\ j > i => ncom[T][j] = 0 /\ oseq[T][j] = 0 /\ exp[T][j] = 0 /\ ~ret[T][j]
         /\ j = i /\ h.pc \in PreCommit => ncom[T][j] = 0 /\ oseq[T][j] = 0 /\ exp[T][j] = 0 /\ ~ret[T][j]
         /\ j = i /\ h.pc \in PostCommit => ncom[T][j] = 1 /\ ~ret[T][j]
         /\ j = i /\ IdleRet => ret[T][j]

\* The commit's ghosts (after the ghosts' and curComb's values are known).
CommitInv ==
    LET h == th[T] IN
    /\ sig[0] = ObjInit
    /\ h.pc \in PostCommit =>
      /\ sig[S0 + 1] = XN /\ oseq[T][h.i] = S0 + 1 /\ exp[T][h.i] = ResI

\* curComb's line (m.cc, m.pwc).
CcInv(m) ==
    LET p == th[T].pc
        d == DDm(m)
        s0 == S0m(m)
    IN
    /\ p \in PreCommit \cup {"Idle"} => CcImages(m) = {Vis(m.cc)}
    /\ p \in PreCommit => Vis(m.cc) = CV(s0, d)
    /\ p \in PreCommit => s0 < th[T].i
    /\ p = "Idle" => s0 <= th[T].i
    /\ p \in PostCommit =>
         /\ Vis(m.cc) = CV(s0 + 1, 1 - d) /\ CcImages(m) \subseteq {CV(s0, d), CV(s0 + 1, 1 - d)}
         /\ m.pwc[T] = 0
    /\ p = "U31" => CcImages(m) = {CV(s0 + 1, 1 - d)}
    /\ p = "Idle" => m.pwc[T] = 0 /\ m.cc.s \in {<< >>, <<m.cc.p>>}
    /\ p = "Idle" /\ req[T].n = 0 => m.cc.s = << >>

\* Word w of replica c: its line l and the thread's pending pwb count q, with
\* curComb's line ccl and word w of the designated replica's visible content
\* dw (read at M3).
LineInv(c, w, l, q, ccl, dw) ==
    LET p == th[T].pc
        i == th[T].i
        d == DDm([cc |-> ccl])
        s0 == S0m([cc |-> ccl])
        xs == sig[s0]
        xn == FoldOps(xs, << <<T, i>> >>)
    IN
    IF c = d
    THEN /\ LineOK(l, xs[w]) /\ q = 0
         /\ p = "Idle" /\ req[T].n = 0 => l.s = << >>
    ELSE /\ p \in BeforeCopy \cup {"Idle"} => q = 0
         /\ p = "Idle" /\ req[T].n = 0 => l.s = << >>
         /\ p = "M3" => Vis(l) = dw
         /\ p = "U20" => Vis(l) = xs[w] /\ q = Len(l.s)
         /\ p = "U26" => Vis(l) = xn[w] /\ (w \notin DpI(i) => q = Len(l.s))
         /\ p = "U30" => Vis(l) = xn[w] /\ q = Len(l.s)
         /\ p \in PostCommit => LineOK(l, xn[w]) /\ q = 0

MemInv ==
    /\ CcInv(mem)
    /\ \A c \in Combs, w \in Words :
         LineInv(c, w, mem.r[<<c, w>>], mem.pwr[T][<<c, w>>], mem.cc, Vis(mem.r[<<DD, w>>]))

\* The heads.  The designated replica's: its seq's ticket, the thread's
\* State's (a transaction that returned) or recovery's fresh one.  C's:
\* before the copy, invalid or the one C had when it was designated last,
\* one seq before, with the thread's ticket of S0 designated and in the ring
\* (a transaction that returned); then per step.
HeadInv ==
    LET h == th[T]
        p == h.pc
        hd == head[DD]
    IN
    /\ hd \in {Tk(S0, 0, 0), Tk(S0, T, 0)} /\ (hd.tid = T => S0 >= 1)
    /\ IdleRet => hd.tid = T
    /\ p \in {"U8", "U13", "U18", "R1", "M1", "Idle"} =>
         head[CC] = Invalid \/ (head[CC] \in {Tk(S0 - 1, 0, 0), Tk(S0 - 1, T, 0)} /\ hd = Tk(S0, T, 0))
    /\ IdleRec => head[CC] = Invalid
    /\ p = "R1" => head[CC] # Invalid
    /\ p \in {"M2", "M3"} => head[CC] = Invalid
    /\ p \in {"U20", "U26"} => head[CC] = h.tail
    /\ p \in {"U30", "U32", "U34", "U31"} => head[CC] = h.tkt

\* The ring, the locks, the State (its fields no step reads before writing
\* them at their domain values, see DeadPins).
L(ex, dg) == [ex |-> ex, sh |-> {}, dg |-> dg]
RingAt == [k \in Slots |-> IF th[T].pc = "U31" THEN th[T].tkt ELSE head[DD]]
LkAt ==
    LET p == th[T].pc IN
    [c \in Combs |-> IF c = DD THEN L(0, TRUE)
                     ELSE CASE p \in Locked -> L(T, FALSE)
                            [] p \in {"U30", "U32", "U34", "U31"} -> L(0, TRUE)
                            [] OTHER -> L(0, FALSE)]
StDead == [results |-> [u \in Threads |-> 0], log |-> << >>, lsz |-> 0]
StAt ==
    LET p == th[T].pc
        hd == head[DD]
        Mk(tk, ap) == [tkt |-> tk, applied |-> [u \in Threads |-> ap], results |-> StDead.results,
                       log |-> << >>, lsz |-> 0]
    IN
    CASE p = "Idle" /\ RN = 0 -> Fresh
      [] p \in {"Idle", "U8"} ->
           IF hd.tid = 0 THEN Fresh ELSE Mk(hd, IF p = "Idle" THEN RN ELSE RN - 1)
      [] p \in Simulated ->
           [tkt |-> TktI, applied |-> [u \in Threads |-> RN], results |-> [u \in Threads |-> ResI],
            log |-> LogI, lsz |-> IF p = "U26" THEN 0 ELSE Len(LogI)]
      [] OTHER -> Mk(TktI, RN - 1)
\* (equal up to the dead fields)
UpToDead(st) == IF th[T].pc \in Simulated THEN st
                ELSE [st EXCEPT !.results = StDead.results, !.log = << >>, !.lsz = 0]

VolInv ==
    /\ lidx[T] = 0
    /\ HeadInv
    /\ ring = RingAt
    /\ lk = LkAt
    /\ UpToDead(sts[T][0]) = StAt
    /\ th[T].pc = "U8" /\ head[DD].tid = 0 => RN = 1

IndInv ==
    /\ TypeOK
    /\ ExactlyOnce
    /\ CurCombConsistent
    /\ DurableImageConsistent
    /\ CompletedDurable
    /\ ResultsCorrect
    /\ ThInv
    /\ ReqInv
    /\ GhostInv
    /\ CommitInv
    /\ MemInv
    /\ VolInv

-----------------------------------------------------------------------------
(* The bounded domain.                                                     *)

Vals01 == 0 .. 1
SeqsUpTo(S, n) == UNION {[1 .. k -> S] : k \in 0 .. n}
LineDomD == [p : Vals01, s : SeqsUpTo(Vals01, MaxPendD)]
\* The other replica's lines: at most one pending store before the copy
\* and between transactions, two from the copy on (the copy's and the
\* simulation's).
CopyOn == {"M3", "U20", "U26", "U30", "U32", "U34", "U31"}
LineDomC == [p : Vals01, s : SeqsUpTo(Vals01, IF th[T].pc \in CopyOn THEN 2 ELSE 1)]
CVs == {CV(s, c) : s \in 0 .. MaxSeq, c \in Combs}
CcDom == [p : CVs, s : SeqsUpTo(CVs, 1)]
LkDom == [ex : 0 .. N, sh : {{}}, dg : BOOLEAN]

ThCand == {RegsOf(p, i, cv, tl, kk, rtv) :
             p \in InFlight \cup {"Idle"}, i \in 0 .. NOps, cv \in CVs,
             tl \in {Tk(s, x, 0) : s \in 0 .. MaxSeq, x \in {0, T}}, kk \in 0 .. MaxSeq, rtv \in Tickets}

\* What every reachable state satisfies (checked by hand, README.md).
DomainShape ==
    /\ mem.cc \in CcDom
    /\ \A w \in Words : mem.r[<<DD, w>>] \in LineDomD /\ mem.r[<<CC, w>>] \in LineDomC
    /\ \A ln \in Lines : mem.pwr[T][ln] <= Len(mem.r[ln].s)
    /\ mem.pwc[T] <= Len(mem.cc.s)
    /\ \A c \in Combs : lk[c] \in LkDom
    /\ \A j \in 0 .. MaxSeq : sig[j] \in [Words -> Vals01]
\* What no step reads before writing it, at one value: the history, the
\* counters, the crash counter (see the header); sig of the seqs curComb's
\* line does not hold (Commit writes sig[s] before anything reads it); oseq
\* and exp of a transaction that is not committed in flight (read at its
\* return only; oseq also once returned, by CompletedDurable); the State's
\* result, log and size before the simulation writes them.
DeadPins ==
    /\ crashes = 0 /\ hist = << >>
    /\ \A t \in Threads : th[t] = Regs(th[t])
    /\ \A s \in 1 .. MaxSeq : s \notin {cv.seq : cv \in CcImages(mem)} => sig[s] = ObjInit
    /\ \A j \in 1 .. NOps :
         ~(j = th[T].i /\ th[T].pc \in PostCommit) =>
            exp[T][j] = 0 /\ (~ret[T][j] => oseq[T][j] = 0)
    /\ UpToDead(sts[T][0]) = sts[T][0]
IndDomain == DeadPins /\ DomainShape

\* Every IndInv state of the domain, built in an order that lets TLC prune.
IndInit ==
    /\ crashes = 0 /\ hist = << >>
    /\ th \in [Threads -> ThCand]
    /\ th[T].pc \in InFlight => th[T].i >= 1
    /\ req \in [Threads -> [n : 0 .. NOps, i : 0 .. NOps]]
    /\ ann \in [Threads -> 0 .. NOps]
    /\ ReqInv
    /\ ncom \in [Threads -> [1 .. NOps -> 0 .. 1]]
    /\ oseq \in [Threads -> [1 .. NOps -> 0 .. MaxSeq]]
    /\ ret \in [Threads -> [1 .. NOps -> BOOLEAN]]
    /\ exp \in [Threads -> [1 .. NOps -> Vals01]]
    /\ bad = {}
    /\ GhostInv
    /\ lidx = [t \in Threads |-> 0]
    /\ \E ccl \in CcDom, pc0 \in 0 .. 1 :
         /\ pc0 <= Len(ccl.s)
         /\ CcInv([cc |-> ccl, pwc |-> [t \in Threads |-> pc0]])
         /\ sig \in [0 .. MaxSeq -> [Words -> Vals01]]
         /\ sig[0] = ObjInit
         /\ \A s \in 1 .. MaxSeq : s \notin {cv.seq : cv \in LineImages(ccl)} => sig[s] = ObjInit
         /\ LET d == DDm([cc |-> ccl]) IN
            \E a1 \in LineDomD, qa1 \in 0 .. MaxPendD :
            /\ qa1 <= Len(a1.s) /\ LineInv(d, 1, a1, qa1, ccl, 0)
            /\ \E a2 \in LineDomD, qa2 \in 0 .. MaxPendD :
               /\ qa2 <= Len(a2.s) /\ LineInv(d, 2, a2, qa2, ccl, 0)
               /\ \E b1 \in LineDomC, qb1 \in 0 .. 2 :
                  /\ qb1 <= Len(b1.s) /\ LineInv(1 - d, 1, b1, qb1, ccl, Vis(a1))
                  /\ \E b2 \in LineDomC, qb2 \in 0 .. 2 :
                     /\ qb2 <= Len(b2.s) /\ LineInv(1 - d, 2, b2, qb2, ccl, Vis(a2))
                     /\ LET r == <<a1, a2>>
                            q == <<qa1, qa2>>
                            rc == <<b1, b2>>
                            qc == <<qb1, qb2>>
                        IN mem = [cc |-> ccl, pwc |-> [t \in Threads |-> pc0],
                                  r |-> [ln \in Lines |-> IF ln[1] = d THEN r[ln[2]] ELSE rc[ln[2]]],
                                  pwr |-> [t \in Threads |->
                                             [ln \in Lines |-> IF ln[1] = d THEN q[ln[2]] ELSE qc[ln[2]]]]]
                     /\ CurCombConsistent /\ DurableImageConsistent /\ CompletedDurable
    /\ CommitInv
    /\ \A j \in 1 .. NOps :
         ~(j = th[T].i /\ th[T].pc \in PostCommit) =>
            exp[T][j] = 0 /\ (~ret[T][j] => oseq[T][j] = 0)
    /\ \E hd0 \in {Tk(S0, 0, 0), Tk(S0, T, 0)},
          hc0 \in {Invalid, Tk(S0 - 1, 0, 0), Tk(S0 - 1, T, 0), th[T].tail, th[T].tkt} :
         /\ head = [c \in Combs |-> IF c = DD THEN hd0 ELSE hc0]
         /\ head \in [Combs -> Tickets]
         /\ HeadInv
    /\ ring = RingAt
    /\ lk = LkAt
    /\ sts = [t \in Threads |-> [j \in Slots |-> StAt]]
    /\ sts[T][0] \in [tkt : Tickets, applied : [Threads -> 0 .. NOps], results : [Threads -> Vals01],
                      log : SeqsUpTo([a : Words, old : Vals01, new : Vals01], 1), lsz : 0 .. 1]
    /\ IndDomain
    /\ IndInv
=============================================================================

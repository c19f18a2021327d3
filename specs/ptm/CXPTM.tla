-------------------------------- MODULE CXPTM --------------------------------
(***************************************************************************)
(* CX-PTM (seed 000: Correia, Felber, Ramalhete, "Persistent Memory and    *)
(* the Rise of Universal Constructions", EuroSys 2020, §4) under Px86 line *)
(* persistency, with full-system crashes and null recovery.  The seed      *)
(* gives CX's steps in prose (applyUpdate 1-6, applyRead 1-3, "Adding      *)
(* persistence to CX"); where it is silent the model follows the published *)
(* implementation (pramalhe/RedoDB, ptms/cxptm/CXPTM.hpp: getCombined,     *)
(* the CAS loop, the persistence points), and says so.                     *)
(*                                                                         *)
(* WHAT IS MODELLED.  N threads, NOps transactions each (the Workload of   *)
(* PtmBase.tla).  The queue of mutations with its tickets, each node's     *)
(* result; the 2N Combined instances with their heads (a ticket, or null)  *)
(* and strong try reader-writer locks; curComb (in PM) and the 2N replicas *)
(* (one line per word).  Reclamation of queue nodes is abstracted: a node  *)
(* behind curComb's head that no Combined's head holds may be reclaimed    *)
(* (self-linked) at any moment (Reclaim); hazard pointers, which only     *)
(* delay that, are not modelled (more behaviours, not fewer).  A replica   *)
(* whose head is null or reclaimed is invalid and is copied from curComb's *)
(* (getCombined).                                                          *)
(*                                                                         *)
(* THE TURN QUEUE is abstracted to its linearizable wait-free enqueue: a  *)
(* node is appended (and gets the next ticket) in one atomic step.  Its    *)
(* internal announce/turn/helping steps (Ramalhete-Correia, PPoPP 2017     *)
(* poster, the seed's [39]) are not modelled; its wait-freedom is assumed. *)
(*                                                                         *)
(* MEMORY: PtmBase.tla (Px86 lines; a pwb persists at the thread's next    *)
(* locked RMW or psync).  curComb's stored value is [idx, tk]: idx the     *)
(* Combined (the only field the algorithm reads or compares), tk a ghost   *)
(* tag, the head ticket installed with it.  Visibility is sequentially     *)
(* consistent; each access to a shared word is a step, except the merges   *)
(* the comments name.                                                      *)
(*                                                                         *)
(* NULL RECOVERY (§4: curComb "is persisted together with the replica that *)
(* it references"; the published constructor): curComb is what persisted; *)
(* its Combined's head is a fresh sentinel (ticket 0), every other head is *)
(* null; the queue, the locks and every thread's state start afresh;       *)
(* transactions in flight are cut off.                                     *)
(*                                                                         *)
(* SWITCHES (TRUE = the algorithm; FALSE = the issue's mutants):          *)
(*   ReturnPersist   pwb(curComb) + psync before an update returns         *)
(*   FlushBeforeCas  the replica's pwbs before the curComb CAS (FALSE:     *)
(*                   after it)                                             *)
(*                                                                         *)
(* PROPERTIES: as RedoPTM.tla (README.md).  CurCombConsistent,             *)
(* DurableImageConsistent (null recovery), CompletedDurable, ResultsCorrect *)
(* (results are those of the queue order), HistoryDurablyLinearizable,     *)
(* FenceBound, StepBound, WaitFree.                                        *)
(***************************************************************************)
EXTENDS PtmBase, TLC, Histories

CONSTANTS
    N,              \* threads 1..N
    NOps,           \* transactions per thread
    MaxReadTries,   \* MAX_READ_TRIES
    MaxCrashes,     \* full-system crashes
    MaxFences,      \* the claimed bound on persistence fences per transaction
    Reclaim,        \* retired queue nodes may be reclaimed (self-linked)
    ReturnPersist, FlushBeforeCas     \* mutant switches

ASSUME /\ N \in Nat \ {0} /\ W \in Nat \ {0} /\ NOps \in Nat /\ MaxReadTries \in Nat
       /\ MaxCrashes \in Nat /\ MaxFences \in Nat
       /\ {Reclaim, ReturnPersist, FlushBeforeCas} \subseteq BOOLEAN

Threads == 1 .. N
Combs == 0 .. 2 * N - 1        \* 2N Combined instances
Lines == Combs \X Words
MaxQ == N * NOps               \* nodes per epoch: every transaction enqueues at most once
NoNode == -1

DL == INSTANCE DurableLinearizability WITH SeqInit <- ObjInit, SeqApply <- ObjApply
Id(t, i) == (t - 1) * NOps + i

CV(c, k) == [idx |-> c, tk |-> k]

VARIABLES
    mem,       \* PM (PtmBase.tla); curComb values CV(idx, ghost tag)
    head,      \* [Combs -> ticket or NoNode]: Combined.head
    lk,        \* [Combs -> [ex: 0..N, sh: SUBSET Threads, dg: BOOLEAN, dl: SUBSET Words]]:
               \*   rwLock (dg: the shared lock left by a downgrade: the installed one, or a
               \*   failed attempt's), and the dirty lines handed over with the replica (dl)
    q,         \* the queue of mutations: node k (ticket k) = q[k] = [t, i, res]; 0: the sentinel
    retired,   \* tickets behind curComb's head (CX retires them after a successful CAS)
    disposed,  \* reclaimed (self-linked) tickets
    th,        \* [Threads -> registers]
    crashes,
    hist,      \* the history (Histories.tla)
    \* ghosts
    qs,        \* [0..MaxQ -> object state]: the state after node k (this epoch)
    retk,      \* tickets (this epoch) whose state a transaction returned: must be durable
    bad        \* transactions that returned another result than the queue order gives

vars == <<mem, head, lk, q, retired, disposed, th, crashes, hist, qs, retk, bad>>

CurComb == Vis(mem.cc)
DurableTk == mem.cc.p.tk

Idle(i) == [pc |-> "Idle", i |-> i, my |-> 0, c |-> NoNode, mn |-> NoNode, copied |-> FALSE, gi |-> 0,
            li |-> 0, lci |-> 0, lh |-> 0, ri |-> 0, pend |-> FALSE, nf |-> 0, ns |-> 0, dp |-> {},
            pw |-> << >>, pl |-> {}, wnx |-> "Idle", pnx |-> "Idle", rv |-> 0, rh |-> 0,
            ctk |-> 0, es |-> 0, enx |-> "Idle", wc |-> ObjInit, ld |-> FALSE]

Op(t) == WorkOf(t, th[t].i)
NodeOp(k) == WorkOf(q[k].t, q[k].i)

\* A Combined's lock after creation or a crash: free, downgraded (dg) if its
\* replica is designated, no dirty lines handed over (dl: the lines a holder
\* stored and left to the next, XEP).
LkFresh(dg) == [ex |-> 0, sh |-> {}, dg |-> dg, dl |-> {}]

Init ==
    /\ mem = MemInit(CV(0, 0), Lines, Threads)
    /\ head = [c \in Combs |-> IF c = 0 THEN 0 ELSE NoNode]
    /\ lk = [c \in Combs |-> LkFresh(c = 0)]
    /\ q = << >>
    /\ retired = {}
    /\ disposed = {}
    /\ th = [t \in Threads |-> Idle(0)]
    /\ crashes = 0
    /\ hist = << >>
    /\ qs = [k \in 0 .. MaxQ |-> ObjInit]
    /\ retk = {}
    /\ bad = {}

-----------------------------------------------------------------------------
(* Helpers.                                                                *)

Ghosts == <<qs, retk, bad>>
SetTh(t, r) == th' = [th EXCEPT ![t] = [r EXCEPT !.ns = th[t].ns + 1]]
AfterRMW(r) == [r EXCEPT !.nf = @ + (IF r.pend THEN 1 ELSE 0), !.pend = FALSE]
AfterPsync(r) == [r EXCEPT !.nf = @ + 1, !.pend = FALSE]
Free(c) == lk[c].ex = 0 /\ lk[c].sh = {} /\ ~lk[c].dg
Unshare(l, c, t) == [l EXCEPT ![c].sh = @ \ {t}]

\* Enqueue the transaction of thread t (the turn queue's enqueue, atomic):
\* the node gets the next ticket; the ghost qs records the state after it.
Enqueue(t, i) ==
    LET k == Len(q) + 1
        o == WorkOf(t, i)
    IN /\ q' = Append(q, [t |-> t, i |-> i, res |-> 0])
       /\ qs' = [qs EXCEPT ![k] = ApplyStores(qs[k - 1], StoresOf(o, qs[k - 1]))]

\* The transaction returns v, the result of the state after ticket h - 1 (a
\* node: h is its ticket) or of ticket h (a read on a replica: rd).  The
\* state it reflects must be durable (retk, CompletedDurable).
Return(t, v, h, rd) ==
    LET i == th[t].i
        want == ResultOf(Op(t), qs[IF rd THEN h ELSE h - 1])
    IN /\ hist' = Append(hist, EvReturn(Id(t, i), v))
       /\ retk' = retk \cup {h}
       /\ bad' = IF v = want THEN bad ELSE bad \cup {<<t, i>>}
       /\ th' = [th EXCEPT ![t] = Idle(i)]

-----------------------------------------------------------------------------
(* Invocation.                                                             *)

\* An update creates its node and enqueues it (step 1); a read starts its
\* loop (it enqueues only at iteration MAX_READ_TRIES).
Invoke(t) ==
    /\ th[t].pc = "Idle" /\ th[t].i < NOps
    /\ LET i == th[t].i + 1
           o == WorkOf(t, i)
       IN /\ hist' = Append(hist, EvInvoke(Id(t, i), t, o.op, ArgsOf(o)))
          /\ IF IsRead(o)
             THEN /\ th' = [th EXCEPT ![t] = [Idle(i) EXCEPT !.pc = "B1", !.ns = 1]]
                  /\ UNCHANGED <<q, qs>>
             ELSE /\ Enqueue(t, i)
                  /\ th' = [th EXCEPT ![t] = [Idle(i) EXCEPT !.pc = "X2", !.my = Len(q) + 1, !.ns = 1]]
    /\ UNCHANGED <<mem, head, lk, retired, disposed, crashes, retk, bad>>

-----------------------------------------------------------------------------
(* applyUpdate.                                                            *)

\* Step 2: exclusiveTryLock on combs[0..2N-1] in order (one step).  Step 3
\* starts: mn <- newComb.head (private now); if its ticket is already at or
\* past our node, our mutation is applied: unlock and return (XS).  No
\* Combined free: the published code asserts; here the thread stops (pc
\* "Full", no step: WaitFree reports it).
X2(t) ==
    /\ th[t].pc = "X2"
    /\ LET free == {c \in Combs : Free(c)} IN
       IF free = {}
       THEN SetTh(t, [th[t] EXCEPT !.pc = "Full"]) /\ UNCHANGED lk
       ELSE LET c == CHOOSE x \in free : \A y \in free : x <= y
                mn == head[c]
            IN IF mn # NoNode /\ mn >= th[t].my
               THEN SetTh(t, [th[t] EXCEPT !.pc = "XS"]) /\ UNCHANGED lk
               ELSE /\ lk' = [lk EXCEPT ![c].ex = t]
                    /\ SetTh(t, [th[t] EXCEPT !.c = c, !.mn = mn, !.pc = "X4"])
    /\ UNCHANGED <<mem, head, q, retired, disposed, crashes, hist, Ghosts>>

\* Steps 3-4, one node: while mn is not our node: if mn is null or
\* reclaimed (self-linked) the replica is invalid: copy it from curComb's
\* (getCombined, G1), unless we copied once already (then leave: XE).  Else
\* run the next node's mutation on the replica (its stores go to the
\* deferred pwbs) and store its result in the node; mn advances.
X4(t) ==
    /\ th[t].pc = "X4"
    /\ LET mn == th[t].mn
           c == th[t].c
       IN IF mn = th[t].my
          THEN SetTh(t, [th[t] EXCEPT !.pc = "X7"]) /\ UNCHANGED <<mem, q>>
          ELSE IF mn = NoNode \/ mn \in disposed
          THEN SetTh(t, IF th[t].copied THEN [th[t] EXCEPT !.pc = "XE"]
                        ELSE [th[t] EXCEPT !.gi = 0, !.pc = "G1"])
               /\ UNCHANGED <<mem, q>>
          ELSE LET k == mn + 1
                   o == NodeOp(k)
                   x == Content(mem, c)
                   ws == StoresOf(o, x)
               IN /\ mem' = StoreAll(mem, c, ws)
                  /\ q' = [q EXCEPT ![k].res = ResultOf(o, x)]
                  /\ SetTh(t, [th[t] EXCEPT !.mn = k, !.dp = @ \cup {ws[e][1] : e \in DOMAIN ws}])
    /\ UNCHANGED <<head, lk, retired, disposed, crashes, hist, Ghosts>>

\* getCombined, iteration gi (the published code): read curComb; pwb(curComb)
\* ("Ensure curComb is persisted before we use lcomb"); sharedTryLock on its
\* Combined (a locked RMW: the pwb's fence).
G1(t) ==
    /\ th[t].pc = "G1"
    /\ LET lc == CurComb.idx
           m1 == Fence(PwbC(mem, t), t)
           r1 == AfterRMW([th[t] EXCEPT !.pend = TRUE])
       IN /\ mem' = m1
          /\ IF lk[lc].ex = 0
             THEN /\ lk' = [lk EXCEPT ![lc].sh = @ \cup {t}]
                  /\ SetTh(t, [r1 EXCEPT !.lci = lc, !.pc = "G2"])
             ELSE /\ SetTh(t, IF th[t].gi + 1 < N THEN [r1 EXCEPT !.gi = @ + 1, !.pc = "G1"]
                              ELSE [r1 EXCEPT !.gi = 0, !.pc = "XE"])
                  /\ UNCHANGED lk
    /\ UNCHANGED <<head, q, retired, disposed, crashes, hist, Ghosts>>

\* getCombined: lhead <- lcomb.head; usable if before our node and not
\* reclaimed (keep the shared lock, copy: X6).  Else unlock; if its ticket
\* is at or past ours and curComb has not moved, our mutation is applied
\* (return -1: XE); else the next iteration (after N: -1).
G2(t) ==
    /\ th[t].pc = "G2"
    /\ LET lc == th[t].lci
           lh == head[lc]
       IN IF lh # NoNode /\ lh < th[t].my /\ lh \notin disposed
          THEN SetTh(t, [th[t] EXCEPT !.pc = "X6"]) /\ UNCHANGED lk
          ELSE /\ lk' = Unshare(lk, lc, t)
               /\ SetTh(t, IF (lh # NoNode /\ lh >= th[t].my /\ lc = CurComb.idx) \/ th[t].gi + 1 >= N
                           THEN [th[t] EXCEPT !.gi = 0, !.lci = 0, !.pc = "XE"]
                           ELSE [th[t] EXCEPT !.gi = @ + 1, !.lci = 0, !.pc = "G1"])
    /\ UNCHANGED <<mem, head, q, retired, disposed, crashes, hist, Ghosts>>

\* Step 3 (copy): copyFromTo(lcomb, newComb): every word of lcomb's replica
\* (shared-locked: it cannot change) stored into newComb's, each line
\* pwb'd; mn <- lcomb.head; newComb.head <- mn; sharedUnlock.  Back to X4.
X6(t) ==
    /\ th[t].pc = "X6"
    /\ LET lc == th[t].lci
           c == th[t].c
           src == Content(mem, lc)
       IN /\ mem' = PwbR(StoreAll(mem, c, [w \in Words |-> <<w, src[w]>>]), t, c, Words)
          /\ head' = [head EXCEPT ![c] = head[lc]]
          /\ lk' = Unshare(lk, lc, t)
          /\ SetTh(t, [th[t] EXCEPT !.mn = head[lc], !.copied = TRUE, !.pend = TRUE, !.lci = 0,
                                    !.pc = "X4"])
    /\ UNCHANGED <<q, retired, disposed, crashes, hist, Ghosts>>

\* Leaving without installing (getCombined gave -1, or a second copy was
\* needed): newComb.head <- mn (if not null); flushDeferredPWBs();
\* exclusiveUnlock(); then pwb(curComb); psync() (XS), the published order.
\* The replica is released before the psync with stores whose pwbs have
\* not taken effect; harmless: this exit is only reached with mn null or
\* reclaimed, so the head it leaves makes the next user copy every line.
XE(t) ==
    /\ th[t].pc = "XE"
    /\ LET c == th[t].c IN
       /\ head' = IF th[t].mn # NoNode THEN [head EXCEPT ![c] = th[t].mn] ELSE head
       /\ mem' = PwbR(mem, t, c, th[t].dp)
       /\ lk' = [lk EXCEPT ![c].ex = 0]
       /\ SetTh(t, [th[t] EXCEPT !.c = NoNode, !.dp = {}, !.pend = @ \/ th[t].dp # {}, !.pc = "XS"])
    /\ UNCHANGED <<q, retired, disposed, crashes, hist, Ghosts>>

\* pwb(curComb); psync() (ReturnPersist), then return (XR).
XS(t) ==
    /\ th[t].pc = "XS"
    /\ mem' = IF ReturnPersist THEN Fence(PwbC(mem, t), t) ELSE mem
    /\ SetTh(t, [IF ReturnPersist THEN AfterPsync(th[t]) ELSE th[t] EXCEPT !.pc = "XR"])
    /\ UNCHANGED <<head, lk, q, retired, disposed, crashes, hist, Ghosts>>

\* Return myNode.result.
XR(t) ==
    /\ th[t].pc = "XR"
    /\ Return(t, q[th[t].my].res, th[t].my, FALSE)
    /\ UNCHANGED <<mem, head, lk, q, retired, disposed, crashes, qs>>

\* Step 4 done (mn is our node): newComb.head <- mn; step 5: downgrade;
\* flushDeferredPWBs() (FlushBeforeCas; its fence is the next locked RMW).
X7(t) ==
    /\ th[t].pc = "X7"
    /\ LET c == th[t].c IN
       /\ head' = [head EXCEPT ![c] = th[t].my]
       /\ lk' = [lk EXCEPT ![c].ex = 0, ![c].dg = TRUE]
       /\ mem' = IF FlushBeforeCas THEN PwbR(mem, t, c, th[t].dp) ELSE mem
       /\ SetTh(t, [th[t] EXCEPT !.pend = @ \/ (FlushBeforeCas /\ th[t].dp # {}),
                                 !.dp = IF FlushBeforeCas THEN {} ELSE @, !.li = 0, !.pc = "Y1"])
    /\ UNCHANGED <<q, retired, disposed, crashes, hist, Ghosts>>

\* Step 6, iteration li (at most N, the published loop): read curComb;
\* sharedTryLock on its Combined (a locked RMW: the replica's pwbs take
\* effect, the pfence the published code omits).
Y1(t) ==
    /\ th[t].pc = "Y1"
    /\ LET lc == CurComb.idx
           r1 == AfterRMW(th[t])
       IN /\ mem' = Fence(mem, t)
          /\ IF lk[lc].ex = 0
             THEN /\ lk' = [lk EXCEPT ![lc].sh = @ \cup {t}]
                  /\ SetTh(t, [r1 EXCEPT !.lci = lc, !.pc = "Y2"])
             ELSE /\ SetTh(t, IF th[t].li + 1 < N THEN [r1 EXCEPT !.li = @ + 1]
                              ELSE [r1 EXCEPT !.li = 0, !.pc = "YE"])
                  /\ UNCHANGED lk
    /\ UNCHANGED <<head, q, retired, disposed, crashes, hist, Ghosts>>

\* Step 6: with lcomb shared-locked (its head cannot change): a null head:
\* unlock, next; a head at or past our node: unlock; curComb moved: next,
\* else done (YE).  Else CAS curComb from lcomb to newComb (a locked RMW).
\* Failure: unlock, next iteration; success: Y3.
Y2(t) ==
    /\ th[t].pc = "Y2"
    /\ LET lc == th[t].lci
           lh == head[lc]
           nxt == IF th[t].li + 1 < N THEN [th[t] EXCEPT !.li = @ + 1, !.lci = 0, !.pc = "Y1"]
                  ELSE [th[t] EXCEPT !.li = 0, !.lci = 0, !.pc = "YE"]
       IN CASE lh = NoNode ->
                 /\ lk' = Unshare(lk, lc, t) /\ SetTh(t, nxt) /\ UNCHANGED mem
            [] lh >= th[t].my ->
                 /\ lk' = Unshare(lk, lc, t)
                 /\ SetTh(t, IF lc # CurComb.idx THEN nxt
                             ELSE [th[t] EXCEPT !.li = 0, !.lci = 0, !.pc = "YE"])
                 /\ UNCHANGED mem
            [] OTHER ->
                 LET m1 == Fence(mem, t)
                     r1 == AfterRMW(th[t])
                 IN IF Vis(m1.cc).idx = lc
                    THEN /\ mem' = StoreCC(m1, CV(th[t].c, th[t].my))
                         /\ SetTh(t, [r1 EXCEPT !.lh = lh, !.pc = "Y3"])
                         /\ UNCHANGED lk
                    ELSE /\ mem' = m1
                         /\ lk' = Unshare(lk, lc, t)
                         /\ SetTh(t, [nxt EXCEPT !.nf = r1.nf, !.pend = FALSE])
    /\ UNCHANGED <<head, q, retired, disposed, crashes, hist, Ghosts>>

\* After a successful CAS: (mutant: the deferred pwbs only now)
\* pwb(curComb); psync() (ReturnPersist).
Y3(t) ==
    /\ th[t].pc = "Y3"
    /\ LET m0 == IF FlushBeforeCas THEN mem ELSE PwbR(mem, t, th[t].c, th[t].dp) IN
       mem' = IF ReturnPersist THEN Fence(PwbC(m0, t), t) ELSE m0
    /\ SetTh(t, [IF ReturnPersist THEN AfterPsync(th[t]) ELSE th[t]
                 EXCEPT !.dp = {}, !.pend = ~ReturnPersist /\ ~FlushBeforeCas, !.pc = "Y4"])
    /\ UNCHANGED <<head, lk, q, retired, disposed, crashes, hist, Ghosts>>

\* lcomb.setReadUnlock() (the installed one's downgrade lock goes), our
\* sharedUnlock; retire the nodes from lcomb's head up to ours; return
\* myNode.result (merged).
Y4(t) ==
    /\ th[t].pc = "Y4"
    /\ LET lc == th[t].lci IN
       lk' = [lk EXCEPT ![lc].ex = 0, ![lc].sh = @ \ {t}, ![lc].dg = FALSE]
    /\ retired' = retired \cup {k \in th[t].lh .. th[t].my - 1 : k \notin disposed}
    /\ Return(t, q[th[t].my].res, th[t].my, FALSE)
    /\ UNCHANGED <<mem, head, q, disposed, crashes, qs>>

\* After the loop (or its break): newComb.setReadUnlock(); pwb(curComb);
\* psync() (ReturnPersist); then return (XR).
YE(t) ==
    /\ th[t].pc = "YE"
    /\ lk' = [lk EXCEPT ![th[t].c].dg = FALSE]
    /\ mem' = IF ReturnPersist THEN Fence(PwbC(mem, t), t) ELSE mem
    /\ SetTh(t, [IF ReturnPersist THEN AfterPsync(th[t]) ELSE th[t] EXCEPT !.c = NoNode, !.pc = "XR"])
    /\ UNCHANGED <<head, q, retired, disposed, crashes, hist, Ghosts>>

-----------------------------------------------------------------------------
(* applyRead: iterations ri = 0 .. MAX_READ_TRIES + N - 1.                  *)

NextTry(r) == IF r.ri + 1 < MaxReadTries + N THEN [r EXCEPT !.ri = @ + 1, !.lci = 0, !.pc = "B1"]
              ELSE [r EXCEPT !.lci = 0, !.pc = "B3"]

\* Steps 1-3: read curComb; at iteration MAX_READ_TRIES enqueue the read as
\* a mutation; pwb(curComb); sharedTryLock (a locked RMW: the pwb's fence).
B1(t) ==
    /\ th[t].pc = "B1"
    /\ LET lc == CurComb.idx
           enq == th[t].ri = MaxReadTries
           r0 == [th[t] EXCEPT !.my = IF enq THEN Len(q) + 1 ELSE @, !.pend = TRUE]
           r1 == AfterRMW(r0)
       IN /\ IF enq THEN Enqueue(t, th[t].i) ELSE UNCHANGED <<q, qs>>
          /\ mem' = Fence(PwbC(mem, t), t)
          /\ IF lk[lc].ex = 0
             THEN /\ lk' = [lk EXCEPT ![lc].sh = @ \cup {t}]
                  /\ SetTh(t, [r1 EXCEPT !.lci = lc, !.pc = "B2"])
             ELSE /\ SetTh(t, NextTry(r1))
                  /\ UNCHANGED lk
    /\ UNCHANGED <<head, retired, disposed, crashes, hist, retk, bad>>

\* Step 3: if curComb is still lcomb, run the read on its replica, unlock,
\* return (merged); else unlock and try again.
B2(t) ==
    /\ th[t].pc = "B2"
    /\ LET lc == th[t].lci IN
       /\ lk' = Unshare(lk, lc, t)
       /\ IF lc = CurComb.idx
          THEN Return(t, ResultOf(Op(t), Content(mem, lc)), head[lc], TRUE)
          ELSE SetTh(t, NextTry(th[t])) /\ UNCHANGED <<hist, retk, bad>>
    /\ UNCHANGED <<mem, head, q, retired, disposed, crashes, qs>>

\* After the loop: psync(); return myNode.result (XR).
B3(t) ==
    /\ th[t].pc = "B3"
    /\ mem' = Fence(mem, t)
    /\ SetTh(t, [AfterPsync(th[t]) EXCEPT !.pc = "XR"])
    /\ UNCHANGED <<head, lk, q, retired, disposed, crashes, hist, Ghosts>>

-----------------------------------------------------------------------------
(* Reclamation, crash, null recovery.                                      *)

\* A retired node that no Combined's head holds is reclaimed (self-linked).
Dispose(k) ==
    /\ Reclaim
    /\ k \in retired
    /\ \A c \in Combs : head[c] # k
    /\ retired' = retired \ {k}
    /\ disposed' = disposed \cup {k}
    /\ UNCHANGED <<mem, head, lk, q, th, crashes, hist, Ghosts>>

Crash ==
    /\ crashes < MaxCrashes
    /\ \E t \in Threads : th[t].pc # "Idle" \/ th[t].i < NOps
    /\ \E cv \in CcImages(mem) : \E x \in ReplicaImages(mem, cv.idx) :
         /\ mem' = MemAfterCrash(mem, CV(cv.idx, 0), x)
         /\ head' = [c \in Combs |-> IF c = cv.idx THEN 0 ELSE NoNode]
         /\ lk' = [c \in Combs |-> LkFresh(c = cv.idx)]
         /\ qs' = [qs EXCEPT ![0] = x]
    /\ q' = << >>
    /\ retired' = {}
    /\ disposed' = {}
    /\ th' = [t \in Threads |-> Idle(th[t].i)]
    /\ crashes' = crashes + 1
    /\ hist' = Append(hist, EvCrash)
    /\ retk' = {}
    /\ UNCHANGED bad

-----------------------------------------------------------------------------
Step(t) ==
    \/ Invoke(t)
    \/ X2(t) \/ X4(t) \/ G1(t) \/ G2(t) \/ X6(t) \/ XE(t) \/ XS(t) \/ XR(t) \/ X7(t)
    \/ Y1(t) \/ Y2(t) \/ Y3(t) \/ Y4(t) \/ YE(t)
    \/ B1(t) \/ B2(t) \/ B3(t)

Next == (\E t \in Threads : Step(t)) \/ (\E k \in retired : Dispose(k)) \/ Crash

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* Per-word stores and per-line pwbs.  X4 stores a node's mutation, X6 the *)
(* copy of a replica, in one step each, and X6 and X7 issue the pwbs of    *)
(* several lines in one; the code makes one memory event of each word it  *)
(* stores and of each line it writes back (the Sim backend's Store and Pwb *)
(* events).  SpecFine refines those actions into that grain: the coarse    *)
(* action's first step does everything but the stores and pwbs and leaves *)
(* them in the thread's registers (pw: <<word, value>> pairs still to      *)
(* store into newComb, in order; pl: the words of newComb whose lines are  *)
(* still to be written back; wnx: the pc after the stores, "PW" when pwbs  *)
(* follow; pnx: the pc after the pwbs); WS(t) stores the next word, PW(t)  *)
(* writes back any pending line.  newComb is held                         *)
(* exclusively (X4, X6) or downgraded (X7) meanwhile, so no other thread   *)
(* stores to it, and a pending pwb only matters at t's own next fence,     *)
(* after the loop: the coarse action is these steps with other threads'    *)
(* steps interleaved.  X6 reads its source at its first step, as X6 does.  *)
(* CXPTM_Fine.cfg checks SpecFine with the invariants and the refinement   *)
(* of Spec (CXPTMFine.tla: the pending stores and pwbs taken as done).     *)
(* The fine steps leave the step and fence counters alone.  Not refined:  *)
(* XE's pwbs (it releases newComb in the same step) and the mutant's Y3.  *)

WS(t) ==
    /\ th[t].pc = "WS"
    /\ LET wv == Head(th[t].pw) IN
       mem' = StoreR(mem, th[t].c, wv[1], wv[2])
    /\ th' = [th EXCEPT ![t] = IF Len(th[t].pw) = 1
                               THEN [@ EXCEPT !.pw = << >>, !.pc = th[t].wnx, !.wnx = "Idle"]
                               ELSE [@ EXCEPT !.pw = Tail(@)]]
    /\ UNCHANGED <<head, lk, q, retired, disposed, crashes, hist, Ghosts>>

\* The pwb of w's line (and so of every pending word on that line).
PWLine(t, w) ==
    /\ th[t].pc = "PW"
    /\ w \in th[t].pl
    /\ LET ln == LineWords({w})
       IN /\ mem' = PwbR(mem, t, th[t].c, {w})
          /\ th' = [th EXCEPT ![t] = IF th[t].pl \subseteq ln
                                     THEN [@ EXCEPT !.pl = {}, !.pc = th[t].pnx, !.pnx = "Idle"]
                                     ELSE [@ EXCEPT !.pl = @ \ ln]]
    /\ UNCHANGED <<head, lk, q, retired, disposed, crashes, hist, Ghosts>>

\* One pwb of the batch: any line still pending.  The code writes its lines
\* back in no particular order (a distinct set's insertion order, or a list
\* sorted to drop repeats); the pwbs of one batch commute, since only t's next
\* fence, after the batch, orders them (PtmBase's PwInOrder: a configuration
\* may fix one order).
PW(t) == IF PwInOrder THEN PWLine(t, PwNext(th[t].pl)) ELSE \E w \in th[t].pl : PWLine(t, w)

\* Registers r, then the stores ws, the pwbs of lines ls, then pc nxt.
Then(r, ws, ls, nxt) ==
    LET afterS == IF ls = {} THEN nxt ELSE "PW"
        r1 == [r EXCEPT !.pw = ws, !.pl = ls, !.wnx = IF ws = << >> THEN "Idle" ELSE afterS,
                        !.pnx = IF ls = {} THEN "Idle" ELSE nxt]
    IN [r1 EXCEPT !.pc = IF ws # << >> THEN "WS" ELSE afterS]

X4Fine(t) ==
    /\ th[t].pc = "X4"
    /\ LET mn == th[t].mn
           c == th[t].c
       IN IF mn = th[t].my
          THEN SetTh(t, [th[t] EXCEPT !.pc = "X7"]) /\ UNCHANGED q
          ELSE IF mn = NoNode \/ mn \in disposed
          THEN SetTh(t, IF th[t].copied THEN [th[t] EXCEPT !.pc = "XE"]
                        ELSE [th[t] EXCEPT !.gi = 0, !.pc = "G1"])
               /\ UNCHANGED q
          ELSE LET k == mn + 1
                   o == NodeOp(k)
                   x == Content(mem, c)
                   ws == StoresOf(o, x)
               IN /\ q' = [q EXCEPT ![k].res = ResultOf(o, x)]
                  /\ SetTh(t, Then([th[t] EXCEPT !.mn = k, !.dp = @ \cup {ws[e][1] : e \in DOMAIN ws}],
                                   ws, {}, "X4"))
    /\ UNCHANGED <<mem, head, lk, retired, disposed, crashes, hist, Ghosts>>

X6Fine(t) ==
    /\ th[t].pc = "X6"
    /\ LET lc == th[t].lci
           src == Content(mem, lc)
       IN /\ head' = [head EXCEPT ![th[t].c] = head[lc]]
          /\ lk' = Unshare(lk, lc, t)
          /\ SetTh(t, Then([th[t] EXCEPT !.mn = head[lc], !.copied = TRUE, !.pend = TRUE, !.lci = 0],
                           [w \in Words |-> <<w, src[w]>>], Words, "X4"))
    /\ UNCHANGED <<mem, q, retired, disposed, crashes, hist, Ghosts>>

X7Fine(t) ==
    /\ th[t].pc = "X7"
    /\ LET c == th[t].c IN
       /\ head' = [head EXCEPT ![c] = th[t].my]
       /\ lk' = [lk EXCEPT ![c].ex = 0, ![c].dg = TRUE]
       /\ SetTh(t, Then([th[t] EXCEPT !.pend = @ \/ (FlushBeforeCas /\ th[t].dp # {}),
                                      !.dp = IF FlushBeforeCas THEN {} ELSE @, !.li = 0],
                        << >>, IF FlushBeforeCas THEN th[t].dp ELSE {}, "Y1"))
    /\ UNCHANGED <<mem, q, retired, disposed, crashes, hist, Ghosts>>

StepFine(t) ==
    \/ Invoke(t)
    \/ X2(t) \/ X4Fine(t) \/ G1(t) \/ G2(t) \/ X6Fine(t) \/ XE(t) \/ XS(t) \/ XR(t) \/ X7Fine(t)
    \/ WS(t) \/ PW(t)
    \/ Y1(t) \/ Y2(t) \/ Y3(t) \/ Y4(t) \/ YE(t)
    \/ B1(t) \/ B2(t) \/ B3(t)

NextFine == (\E t \in Threads : StepFine(t)) \/ (\E k \in retired : Dispose(k)) \/ Crash
SpecFine == Init /\ [][NextFine]_vars

-----------------------------------------------------------------------------
(* perdure's orders (impl/perdure-ptm/src/cx/core.rs), where they are not  *)
(* the published code's.  SpecPerdure is SpecFine with these:              *)
(*   * the node is enqueued after the invocation, by a step of its own    *)
(*     (X1: publish), so the queue's order is the enqueues', not the       *)
(*     invocations';                                                       *)
(*   * {2} (lock_any): the first free Combined is locked before its head   *)
(*     is read (X2P); a head at or past our node: release it (XU) and      *)
(*     collect; none free: scan again until one is, or until curComb holds *)
(*     our node (then collect);                                            *)
(*   * perdure's curComb carries the installed head's ticket (the spec's   *)
(*     tk) and the code reads it: "curComb holds our node" is tk >= my     *)
(*     (X2P, G1Q);                                                         *)
(*   * getCombined (G1Q, G2Q): read curComb; if it holds our node, leave   *)
(*     (XEP); else sharedTryLock its Combined without pwb(curComb) and no  *)
(*     fence (a failed trylock is tried again), and copy if curComb is     *)
(*     unchanged and its head valid, else unlock and read again; the walk *)
(*     goes back to getCombined at every invalid head, copied or not      *)
(*     (X4P; the seed's X4 leaves after one copy);                         *)
(*   * the copy's lines are not written back at the copy but with the rest *)
(*     at step 5's flush (X6P: they join the deferred pwbs, dp);           *)
(*   * an explicit pfence after that flush (Y0), then the CAS loop with a  *)
(*     shared lock and a CAS that are no fences (Y1P, Y2P: Sim's default,  *)
(*     a locked RMW does not complete write-backs); after a successful CAS *)
(*     pwb(cur_comb) (Y3P) and psync (Y3S) are steps of their own;         *)
(*   * every other exit collects through ensure_durable (ED1, ED2):        *)
(*     pwb(cur_comb), psync -- or nothing when the durability watermark    *)
(*     shows the ticket durable; the watermark is volatile and only raised *)
(*     to a ticket a psync made durable, so the spec may skip whenever the *)
(*     persisted curComb is at that ticket or later (a superset of the     *)
(*     code's skips): after XU, after leaving (XEP), after the CAS loop    *)
(*     ends without installing (YEP), and after a read (B2P);             *)
(*   * a read (read_designated) takes the shared lock with no pwb before  *)
(*     it and no fence (B1P), checks that curComb is still the value it  *)
(*     read and runs on the replica (B2P), unlocks (B2U), then            *)
(*     ensure_durable and returns (B5); a published read that leaves the   *)
(*     loop makes curComb durable with pwb + psync before it returns its   *)
(*     node's result (B3P; perdure's published read keeps trying directly  *)
(*     and collects once curComb holds its node: not modelled).           *)
(* RedoPTM's switch-free F2 order is already CXPTM's (Y3S's psync before   *)
(* Y4's release).  And the replay window, for any window: a thread that   *)
(* has not copied yet may copy instead of applying the next node (X4W).    *)
(* And null recovery writes nothing: the other replicas keep their crash  *)
(* image (CrashP; the seed's Crash sets them to 0).                        *)
(* Not modelled: lines a thread stored and leaves (XEP) are written back   *)
(* by it here; the code leaves them to the replica's next installer (its   *)
(* dirty lines belong to the replica).  CXPTM_Perdure.cfg and               *)
(* CXPTM_PerdureHistory.cfg check it with the invariants (the second with  *)
(* reads and the history).                                                 *)

\* Invoke: an update goes to X1, a read to B1.
InvokeP(t) ==
    /\ th[t].pc = "Idle" /\ th[t].i < NOps
    /\ LET i == th[t].i + 1
           o == WorkOf(t, i)
       IN /\ hist' = Append(hist, EvInvoke(Id(t, i), t, o.op, ArgsOf(o)))
          /\ th' = [th EXCEPT ![t] = [Idle(i) EXCEPT !.pc = IF IsRead(o) THEN "B1" ELSE "X1", !.ns = 1]]
    /\ UNCHANGED <<mem, head, lk, q, retired, disposed, crashes, Ghosts>>

\* Step 1 (publish): the node enqueued, with the next ticket.
X1(t) ==
    /\ th[t].pc = "X1"
    /\ Enqueue(t, th[t].i)
    /\ SetTh(t, [th[t] EXCEPT !.my = Len(q) + 1, !.pc = "X2"])
    /\ UNCHANGED <<mem, head, lk, retired, disposed, crashes, hist, retk, bad>>

\* ensure_durable(s), then pc nxt.
EnsureDurable(r, s, nxt) == [r EXCEPT !.es = s, !.enx = nxt, !.pc = "ED1"]
Collect(r) == EnsureDurable(r, r.my, "XR")

\* The watermark shows s durable (the spec: the persisted curComb is at s or
\* later; it may also sync then): nothing; else pwb(cur_comb).  Without
\* ReturnPersist (the mutant): nothing.
ED1(t) ==
    /\ th[t].pc = "ED1"
    /\ \/ /\ DurableTk >= th[t].es \/ ~ReturnPersist
          /\ SetTh(t, [th[t] EXCEPT !.es = 0, !.pc = th[t].enx, !.enx = "Idle"])
          /\ UNCHANGED mem
       \/ /\ ReturnPersist
          /\ mem' = PwbC(mem, t)
          /\ SetTh(t, [th[t] EXCEPT !.pend = TRUE, !.pc = "ED2"])
    /\ UNCHANGED <<head, lk, q, retired, disposed, crashes, hist, Ghosts>>

\* psync.
ED2(t) ==
    /\ th[t].pc = "ED2"
    /\ mem' = Fence(mem, t)
    /\ SetTh(t, [AfterPsync(th[t]) EXCEPT !.es = 0, !.pc = th[t].enx, !.enx = "Idle"])
    /\ UNCHANGED <<head, lk, q, retired, disposed, crashes, hist, Ghosts>>

\* {2}: the first Combined the strong trylock gives, locked; then its head:
\* at or past our node, it was applied and installed (XU).  None free: no
\* step (the code scans again) unless curComb holds our node: collect.
X2P(t) ==
    /\ th[t].pc = "X2"
    /\ LET free == {c \in Combs : Free(c)} IN
       IF free = {}
       THEN /\ CurComb.tk >= th[t].my
            /\ SetTh(t, Collect(th[t]))
            /\ UNCHANGED lk
       ELSE LET c == CHOOSE x \in free : \A y \in free : x <= y
                mn == head[c]
            IN /\ lk' = [lk EXCEPT ![c].ex = t, ![c].dl = {}]
               /\ SetTh(t, [th[t] EXCEPT !.c = c, !.mn = mn, !.dp = @ \cup lk[c].dl,
                                         !.pc = IF mn # NoNode /\ mn >= th[t].my THEN "XU" ELSE "X4"])
    /\ UNCHANGED <<mem, head, q, retired, disposed, crashes, hist, Ghosts>>

\* exclusiveUnlock of a Combined whose head holds our node; collect.
XU(t) ==
    /\ th[t].pc = "XU"
    /\ lk' = [lk EXCEPT ![th[t].c].ex = 0]
    /\ SetTh(t, Collect([th[t] EXCEPT !.c = NoNode]))
    /\ UNCHANGED <<mem, head, q, retired, disposed, crashes, hist, Ghosts>>

\* Steps 3-4 (X4Fine), but an invalid head always sends the thread to
\* getCombined, a copy made or not.
X4P(t) ==
    /\ th[t].pc = "X4"
    /\ LET mn == th[t].mn
           c == th[t].c
       IN IF mn = th[t].my
          THEN SetTh(t, [th[t] EXCEPT !.pc = "X7"]) /\ UNCHANGED q
          ELSE IF mn = NoNode \/ mn \in disposed
          THEN SetTh(t, [th[t] EXCEPT !.gi = 0, !.pc = "G1"]) /\ UNCHANGED q
          ELSE LET k == mn + 1
                   o == NodeOp(k)
                   x == Content(mem, c)
                   ws == StoresOf(o, x)
               IN /\ q' = [q EXCEPT ![k].res = ResultOf(o, x)]
                  /\ SetTh(t, Then([th[t] EXCEPT !.mn = k, !.dp = @ \cup {ws[e][1] : e \in DOMAIN ws}],
                                   ws, {}, "X4"))
    /\ UNCHANGED <<mem, head, lk, retired, disposed, crashes, hist, Ghosts>>

\* getCombined: read curComb; if it holds our node, leave (XEP); else a
\* sharedTryLock on its Combined (no pwb(curComb), no fence); a failed one
\* is tried again (no step here).
G1Q(t) ==
    /\ th[t].pc = "G1"
    /\ IF CurComb.tk >= th[t].my
       THEN SetTh(t, [th[t] EXCEPT !.pc = "XE"]) /\ UNCHANGED lk
       ELSE LET lc == CurComb.idx IN
            /\ lk[lc].ex = 0
            /\ lk' = [lk EXCEPT ![lc].sh = @ \cup {t}]
            /\ SetTh(t, [th[t] EXCEPT !.lci = lc, !.ctk = CurComb.tk, !.pc = "G2"])
    /\ UNCHANGED <<mem, head, q, retired, disposed, crashes, hist, Ghosts>>

\* Shared-locked: curComb still the value read and its head valid: copy
\* (X6P); else unlock and read curComb again.
G2Q(t) ==
    /\ th[t].pc = "G2"
    /\ LET lc == th[t].lci
           lh == head[lc]
       IN IF CurComb = CV(lc, th[t].ctk) /\ lh # NoNode /\ lh \notin disposed
          THEN SetTh(t, [th[t] EXCEPT !.pc = "X6"]) /\ UNCHANGED lk
          ELSE /\ lk' = Unshare(lk, lc, t)
               /\ SetTh(t, [th[t] EXCEPT !.lci = 0, !.ctk = 0, !.pc = "G1"])
    /\ UNCHANGED <<mem, head, q, retired, disposed, crashes, hist, Ghosts>>

\* The copy (copy_from): every word of the used prefix of lcomb's replica
\* (PtmBase's CopyOf: replica.rs used_len) stored into newComb's
\* (WS), the lines joining the deferred pwbs; then (X6U) mn <- lcomb.head,
\* newComb.head <- mn, sharedUnlock: the source stays shared-locked while
\* it is copied (the seed's X6 unlocks with the copy, in one step).
X6P(t) ==
    /\ th[t].pc = "X6"
    /\ LET lc == th[t].lci
           src == Content(mem, lc)
       IN SetTh(t, Then([th[t] EXCEPT !.mn = head[lc], !.copied = TRUE, !.dp = @ \cup Used(src), !.ctk = 0],
                        CopyOf(src), {}, "X6U"))
    /\ UNCHANGED <<mem, head, lk, q, retired, disposed, crashes, hist, Ghosts>>

X6U(t) ==
    /\ th[t].pc = "X6U"
    /\ head' = [head EXCEPT ![th[t].c] = th[t].mn]
    /\ lk' = Unshare(lk, th[t].lci, t)
    /\ SetTh(t, [th[t] EXCEPT !.lci = 0, !.pc = "X4"])
    /\ UNCHANGED <<mem, q, retired, disposed, crashes, hist, Ghosts>>

\* Leaving without installing (curComb holds our node): newComb.head <- mn;
\* the lines stored are handed over with the replica (the code's session
\* puts its dirty lines back into the Combined's state, cx/ptm.rs Session's
\* drop, and the next holder's session takes them: X2P), not written back:
\* a pwb here would wait for this thread's next fence, which no later
\* installer's fence stands in for (the queue workload found that model of
\* it wrong: CXPTM_PerdureQueue_deep.cfg); exclusiveUnlock; collect.
XEP(t) ==
    /\ th[t].pc = "XE"
    /\ LET c == th[t].c IN
       /\ head' = IF th[t].mn # NoNode THEN [head EXCEPT ![c] = th[t].mn] ELSE head
       /\ lk' = [lk EXCEPT ![c].ex = 0, ![c].dl = @ \cup th[t].dp]
       /\ SetTh(t, Collect([th[t] EXCEPT !.c = NoNode, !.dp = {}]))
    /\ UNCHANGED <<mem, q, retired, disposed, crashes, hist, Ghosts>>

X7P(t) ==
    /\ th[t].pc = "X7"
    /\ LET c == th[t].c IN
       /\ head' = [head EXCEPT ![c] = th[t].my]
       /\ lk' = [lk EXCEPT ![c].ex = 0, ![c].dg = TRUE]
       /\ SetTh(t, Then([th[t] EXCEPT !.pend = @ \/ (FlushBeforeCas /\ th[t].dp # {}),
                                      !.dp = IF FlushBeforeCas THEN {} ELSE @, !.li = 0],
                        << >>, IF FlushBeforeCas THEN th[t].dp ELSE {}, "Y0"))
    /\ UNCHANGED <<mem, q, retired, disposed, crashes, hist, Ghosts>>

\* The pfence before the CAS loop (fence_before_cas).
Y0(t) ==
    /\ th[t].pc = "Y0"
    /\ mem' = Fence(mem, t)
    /\ SetTh(t, [AfterRMW(th[t]) EXCEPT !.pc = "Y1"])
    /\ UNCHANGED <<head, lk, q, retired, disposed, crashes, hist, Ghosts>>

Y1P(t) ==
    /\ th[t].pc = "Y1"
    /\ LET lc == CurComb.idx IN
       IF lk[lc].ex = 0
       THEN /\ lk' = [lk EXCEPT ![lc].sh = @ \cup {t}]
            /\ SetTh(t, [th[t] EXCEPT !.lci = lc, !.pc = "Y2"])
       ELSE /\ SetTh(t, IF th[t].li + 1 < N THEN [th[t] EXCEPT !.li = @ + 1]
                        ELSE [th[t] EXCEPT !.li = 0, !.pc = "YE"])
            /\ UNCHANGED lk
    /\ UNCHANGED <<mem, head, q, retired, disposed, crashes, hist, Ghosts>>

Y2P(t) ==
    /\ th[t].pc = "Y2"
    /\ LET lc == th[t].lci
           lh == head[lc]
           nxt == IF th[t].li + 1 < N THEN [th[t] EXCEPT !.li = @ + 1, !.lci = 0, !.pc = "Y1"]
                  ELSE [th[t] EXCEPT !.li = 0, !.lci = 0, !.pc = "YE"]
       IN CASE lh = NoNode ->
                 /\ lk' = Unshare(lk, lc, t) /\ SetTh(t, nxt) /\ UNCHANGED mem
            [] lh >= th[t].my ->
                 /\ lk' = Unshare(lk, lc, t)
                 /\ SetTh(t, IF lc # CurComb.idx THEN nxt
                             ELSE [th[t] EXCEPT !.li = 0, !.lci = 0, !.pc = "YE"])
                 /\ UNCHANGED mem
            [] OTHER ->
                 IF CurComb.idx = lc
                 THEN /\ mem' = StoreCC(mem, CV(th[t].c, th[t].my))
                      /\ SetTh(t, [th[t] EXCEPT !.lh = lh, !.pc = "Y3"])
                      /\ UNCHANGED lk
                 ELSE /\ lk' = Unshare(lk, lc, t)
                      /\ SetTh(t, nxt)
                      /\ UNCHANGED mem
    /\ UNCHANGED <<head, q, retired, disposed, crashes, hist, Ghosts>>

\* After a successful CAS (mutant: the deferred pwbs only now): pwb(cur_comb)
\* (ReturnPersist), then its psync (Y3S), then Y4.
Y3P(t) ==
    /\ th[t].pc = "Y3"
    /\ LET m0 == IF FlushBeforeCas THEN mem ELSE PwbR(mem, t, th[t].c, th[t].dp) IN
       mem' = IF ReturnPersist THEN PwbC(m0, t) ELSE m0
    /\ SetTh(t, [th[t] EXCEPT !.dp = {}, !.pend = @ \/ ReturnPersist \/ (~FlushBeforeCas /\ th[t].dp # {}),
                              !.pc = IF ReturnPersist THEN "Y3S" ELSE "Y4"])
    /\ UNCHANGED <<head, lk, q, retired, disposed, crashes, hist, Ghosts>>

Y3S(t) ==
    /\ th[t].pc = "Y3S"
    /\ mem' = Fence(mem, t)
    /\ SetTh(t, [AfterPsync(th[t]) EXCEPT !.pc = "Y4"])
    /\ UNCHANGED <<head, lk, q, retired, disposed, crashes, hist, Ghosts>>

\* After the loop (or its break): newComb.setReadUnlock(); collect.
YEP(t) ==
    /\ th[t].pc = "YE"
    /\ lk' = [lk EXCEPT ![th[t].c].dg = FALSE]
    /\ SetTh(t, Collect([th[t] EXCEPT !.c = NoNode]))
    /\ UNCHANGED <<mem, head, q, retired, disposed, crashes, hist, Ghosts>>

B1P(t) ==
    /\ th[t].pc = "B1"
    /\ LET lc == CurComb.idx
           enq == th[t].ri = MaxReadTries
           r0 == [th[t] EXCEPT !.my = IF enq THEN Len(q) + 1 ELSE @]
       IN /\ IF enq THEN Enqueue(t, th[t].i) ELSE UNCHANGED <<q, qs>>
          /\ IF lk[lc].ex = 0
             THEN /\ lk' = [lk EXCEPT ![lc].sh = @ \cup {t}]
                  /\ SetTh(t, [r0 EXCEPT !.lci = lc, !.ctk = CurComb.tk, !.pc = "B2"])
             ELSE /\ SetTh(t, NextTry(r0))
                  /\ UNCHANGED lk
    /\ UNCHANGED <<mem, head, retired, disposed, crashes, hist, retk, bad>>

\* Shared-locked: curComb still the value B1P read: run the read on the
\* replica (it cannot change while the lock is held), then B2U; else unlock
\* and try again.
B2P(t) ==
    /\ th[t].pc = "B2"
    /\ LET lc == th[t].lci IN
       IF CurComb = CV(lc, th[t].ctk)
       THEN SetTh(t, [th[t] EXCEPT !.rv = ResultOf(Op(t), Content(mem, lc)), !.rh = head[lc], !.pc = "B2U"])
            /\ UNCHANGED lk
       ELSE /\ lk' = Unshare(lk, lc, t)
            /\ SetTh(t, NextTry([th[t] EXCEPT !.ctk = 0]))
    /\ UNCHANGED <<mem, head, q, retired, disposed, crashes, hist, Ghosts>>

\* sharedUnlock; ensure_durable of the state read, then B5.
B2U(t) ==
    /\ th[t].pc = "B2U"
    /\ lk' = Unshare(lk, th[t].lci, t)
    /\ SetTh(t, EnsureDurable([th[t] EXCEPT !.lci = 0, !.ctk = 0], th[t].rh, "B5"))
    /\ UNCHANGED <<mem, head, q, retired, disposed, crashes, hist, Ghosts>>

B5(t) ==
    /\ th[t].pc = "B5"
    /\ Return(t, th[t].rv, th[t].rh, TRUE)
    /\ UNCHANGED <<mem, head, lk, q, retired, disposed, crashes, qs>>

\* collect after the published read's loop: pwb(curComb); psync; then XR.
B3P(t) ==
    /\ th[t].pc = "B3"
    /\ mem' = Fence(PwbC(mem, t), t)
    /\ SetTh(t, [AfterPsync(th[t]) EXCEPT !.pc = "XR"])
    /\ UNCHANGED <<head, lk, q, retired, disposed, crashes, hist, Ghosts>>

\* The replay window: perdure copies a replica that is more than
\* replay_window nodes behind our node (before its first copy) instead of
\* applying them.  Any window: whenever X4 would apply a node and no copy
\* was made yet, the thread may copy (getCombined, G1) instead.
X4W(t) ==
    /\ th[t].pc = "X4"
    /\ th[t].mn # th[t].my /\ th[t].mn # NoNode /\ th[t].mn \notin disposed /\ ~th[t].copied
    /\ SetTh(t, [th[t] EXCEPT !.gi = 0, !.pc = "G1"])
    /\ UNCHANGED <<mem, head, lk, q, retired, disposed, crashes, hist, Ghosts>>

\* Null recovery as perdure's (CxPtm::open, CxPuc::open): it writes nothing,
\* so every other replica keeps the words its crash image holds (the seed's
\* Crash sets them to 0); they are invalid (head null) and overwritten before
\* they are read, by a copy (CX-PTM) or by settling (CX-PUC, which stores
\* only the words that differ from them).
RECURSIVE LinePicks(_, _)
\* Every choice of one crash image per line of ls (a set of lines of m).
LinePicks(m, ls) ==
    IF ls = {} THEN {<< >>}
    ELSE LET ln == CHOOSE x \in ls : TRUE IN
         {f @@ (ln :> v) : f \in LinePicks(m, ls \ {ln}), v \in LineImages(m.r[ln])}

\* The crash that keeps curComb cv and every line's pick y (CrashP: some
\* allowed cv and y; a trace's Crash step: its image's).
CrashEnabled == crashes < MaxCrashes /\ \E t \in Threads : th[t].pc # "Idle" \/ th[t].i < NOps
CrashPTo(cv, y) ==
    LET x == [w \in Words |-> y[<<cv.idx, w>>]] IN
    /\ mem' = [MemAfterCrash(mem, CV(cv.idx, 0), x) EXCEPT
                   !.r = [ln \in Lines |-> [p |-> y[ln], s |-> << >>]]]
    /\ head' = [c \in Combs |-> IF c = cv.idx THEN 0 ELSE NoNode]
    /\ lk' = [c \in Combs |-> LkFresh(c = cv.idx)]
    /\ qs' = [qs EXCEPT ![0] = x]
    /\ q' = << >>
    /\ retired' = {}
    /\ disposed' = {}
    /\ th' = [t \in Threads |-> Idle(th[t].i)]
    /\ crashes' = crashes + 1
    /\ hist' = Append(hist, EvCrash)
    /\ retk' = {}
    /\ UNCHANGED bad
CrashP == CrashEnabled /\ \E cv \in CcImages(mem) : \E y \in LinePicks(mem, Lines) : CrashPTo(cv, y)

StepPerdure(t) ==
    \/ InvokeP(t) \/ X1(t)
    \/ X2P(t) \/ XU(t) \/ X4P(t) \/ X4W(t) \/ G1Q(t) \/ G2Q(t) \/ X6P(t) \/ X6U(t) \/ XEP(t) \/ XR(t) \/ X7P(t)
    \/ WS(t) \/ PW(t) \/ Y0(t)
    \/ Y1P(t) \/ Y2P(t) \/ Y3P(t) \/ Y3S(t) \/ Y4(t) \/ YEP(t) \/ ED1(t) \/ ED2(t)
    \/ B1P(t) \/ B2P(t) \/ B2U(t) \/ B3P(t) \/ B5(t)

SpecPerdure == Init /\ [][(\E t \in Threads : StepPerdure(t)) \/ (\E k \in retired : Dispose(k)) \/ CrashP]_vars

-----------------------------------------------------------------------------
(* CX-PUC (impl/perdure-ptm/src/cx/puc.rs) in perdure's orders: CX's      *)
(* consensus as SpecPerdure has it, with a per-thread working copy (wc,    *)
(* valid once loaded, ld) in place of the stores in place:                 *)
(*   * a node's mutation runs on the working copy, which the first node    *)
(*     loads from the held replica (X4U; ensure_loaded);                   *)
(*   * a copy loads the working copy from lcomb's replica, storing nothing *)
(*     into newComb (X6C; copy_from), then X6U;                            *)
(*   * settling stores into the replica every word of the working copy's  *)
(*     used prefix that differs, in word order (WS; settle): before the    *)
(*     install's flush (X7U), and before leaving (XEC, then XEU releases   *)
(*     the replica and collects: no write-back there);                     *)
(*   * the install's flush writes back every used line once the working   *)
(*     copy is loaded (PW; write_back: the whole used part), changed or   *)
(*     not, then the pfence (Y0) and the CAS loop as SpecPerdure's.        *)
(* CXPTM_PerdurePuc.cfg checks it with the invariants (reads, one crash,   *)
(* the history).  No mutant switch reaches these steps (FlushBeforeCas     *)
(* moves the deferred pwbs, dp, which CX-PUC does not use).                *)

\* The words of x's used prefix that differ from the replica's y, in word
\* order, as stores.
Diffs(x, y) == SelectSeq(CopyOf(x), LAMBDA p : p[2] # y[p[1]])

X4U(t) ==
    /\ th[t].pc = "X4"
    /\ LET mn == th[t].mn
           c == th[t].c
       IN IF mn = th[t].my
          THEN SetTh(t, [th[t] EXCEPT !.pc = "X7"]) /\ UNCHANGED q
          ELSE IF mn = NoNode \/ mn \in disposed
          THEN SetTh(t, [th[t] EXCEPT !.gi = 0, !.pc = "G1"]) /\ UNCHANGED q
          ELSE LET k == mn + 1
                   o == NodeOp(k)
                   x == IF th[t].ld THEN th[t].wc ELSE Content(mem, c)
               IN /\ q' = [q EXCEPT ![k].res = ResultOf(o, x)]
                  /\ SetTh(t, [th[t] EXCEPT !.mn = k, !.wc = ApplyStores(x, StoresOf(o, x)), !.ld = TRUE])
    /\ UNCHANGED <<mem, head, lk, retired, disposed, crashes, hist, Ghosts>>

X6C(t) ==
    /\ th[t].pc = "X6"
    /\ LET lc == th[t].lci IN
       SetTh(t, [th[t] EXCEPT !.mn = head[lc], !.copied = TRUE, !.wc = Content(mem, lc), !.ld = TRUE,
                              !.ctk = 0, !.pc = "X6U"])
    /\ UNCHANGED <<mem, head, lk, q, retired, disposed, crashes, hist, Ghosts>>

X7U(t) ==
    /\ th[t].pc = "X7"
    /\ LET c == th[t].c IN
       /\ head' = [head EXCEPT ![c] = th[t].my]
       /\ lk' = [lk EXCEPT ![c].ex = 0, ![c].dg = TRUE]
       /\ SetTh(t, Then([th[t] EXCEPT !.pend = @ \/ th[t].ld, !.li = 0],
                        IF th[t].ld THEN Diffs(th[t].wc, Content(mem, c)) ELSE << >>,
                        IF th[t].ld THEN Used(th[t].wc) ELSE {}, "Y0"))
    /\ UNCHANGED <<mem, q, retired, disposed, crashes, hist, Ghosts>>

XEC(t) ==
    /\ th[t].pc = "XE"
    /\ SetTh(t, Then(th[t], IF th[t].ld THEN Diffs(th[t].wc, Content(mem, th[t].c)) ELSE << >>, {}, "XEU"))
    /\ UNCHANGED <<mem, head, lk, q, retired, disposed, crashes, hist, Ghosts>>

XEU(t) ==
    /\ th[t].pc = "XEU"
    /\ LET c == th[t].c IN
       /\ head' = IF th[t].mn # NoNode THEN [head EXCEPT ![c] = th[t].mn] ELSE head
       /\ lk' = [lk EXCEPT ![c].ex = 0]
       /\ SetTh(t, Collect([th[t] EXCEPT !.c = NoNode]))
    /\ UNCHANGED <<mem, q, retired, disposed, crashes, hist, Ghosts>>

StepPerdurePuc(t) ==
    \/ InvokeP(t) \/ X1(t)
    \/ X2P(t) \/ XU(t) \/ X4U(t) \/ X4W(t) \/ G1Q(t) \/ G2Q(t) \/ X6C(t) \/ X6U(t) \/ XEC(t) \/ XEU(t)
    \/ XR(t) \/ X7U(t)
    \/ WS(t) \/ PW(t) \/ Y0(t)
    \/ Y1P(t) \/ Y2P(t) \/ Y3P(t) \/ Y3S(t) \/ Y4(t) \/ YEP(t) \/ ED1(t) \/ ED2(t)
    \/ B1P(t) \/ B2P(t) \/ B2U(t) \/ B3P(t) \/ B5(t)

SpecPerdurePuc ==
    Init /\ [][(\E t \in Threads : StepPerdurePuc(t)) \/ (\E k \in retired : Dispose(k)) \/ CrashP]_vars

-----------------------------------------------------------------------------
(* Properties.                                                             *)

Pcs == {"Idle", "Full", "X2", "X4", "G1", "G2", "X6", "XE", "XS", "XR", "X7", "Y1", "Y2", "Y3", "Y4",
        "YE", "B1", "B2", "B3", "WS", "PW", "Y0", "B5", "X1", "XU", "Y3S", "ED1", "ED2", "X6U", "XEU", "B2U"}

TypeOK ==
    /\ CurComb \in [idx : Combs, tk : 0 .. MaxQ]
    /\ \A c \in Combs : head[c] \in (0 .. MaxQ) \cup {NoNode} /\ lk[c].ex \in 0 .. N
                        /\ lk[c].sh \subseteq Threads /\ lk[c].dl \subseteq Words
    /\ Len(q) <= MaxQ
    /\ retired \cup disposed \subseteq 0 .. MaxQ
    /\ \A t \in Threads : th[t].pc \in Pcs /\ th[t].i \in 0 .. NOps /\ th[t].my \in 0 .. MaxQ
    /\ crashes \in 0 .. MaxCrashes

\* The replica curComb designates is at the head installed with it and holds
\* the state of the queue up to that node (PtmBase's Holds: on that state's
\* used prefix).
CurCombConsistent ==
    head[CurComb.idx] = CurComb.tk /\ Holds(Content(mem, CurComb.idx), qs[CurComb.tk])

\* NoNode recovery: in every crash image the replica the persisted curComb
\* designates holds the state of the queue up to the node installed with it.
\* (Checked word by word, as RedoPTM.tla's: the same set of states, no
\* product of the lines' images built.)
DurableImageConsistent ==
    \A cv \in CcImages(mem) : \A w \in Used(qs[cv.tk]) : LineImages(mem.r[<<cv.idx, w>>]) \subseteq {qs[cv.tk][w]}

\* Every state a transaction returned (its node's, or the one a read ran on)
\* is in the persisted prefix.
CompletedDurable == \A k \in retk : k <= DurableTk

\* Every transaction returned the result its place in the queue gives (a
\* read on a replica: that replica's state).
ResultsCorrect == bad = {}

AllDone == \A t \in Threads : th[t].pc = "Idle" /\ th[t].i = NOps
HistoryDurablyLinearizable == AllDone => DL!DurablyLinearizable(hist)

\* At most MaxFences persistence fences per transaction (the seed: "just two
\* persistence fences"); at most MaxSteps own steps (the returning step not
\* counted): an update applies at most MaxQ nodes before and after its one
\* copy, getCombined and the CAS loop run at most N iterations of two steps;
\* a read runs at most MAX_READ_TRIES + N tries of two steps.
MaxSteps == Max(2 * MaxQ + 4 * N + 8, 2 * (MaxReadTries + N) + 3)
FenceBound == \A t \in Threads : th[t].nf <= MaxFences
StepBound == \A t \in Threads : th[t].ns <= MaxSteps
WaitFree == \A t \in Threads : th[t].pc # "Idle" => ENABLED Step(t)

ViewNoHist == <<mem, head, lk, q, retired, disposed,
                [t \in Threads |-> [th[t] EXCEPT !.ns = 0, !.nf = 0]], crashes, qs, retk, bad>>
=============================================================================

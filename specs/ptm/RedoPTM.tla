------------------------------- MODULE RedoPTM -------------------------------
(***************************************************************************)
(* Redo-PTM (seed 000: Correia, Felber, Ramalhete, "Persistent Memory and  *)
(* the Rise of Universal Constructions", EuroSys 2020, §5, Algorithms 1-3) *)
(* under Px86 line persistency, with full-system crashes and null          *)
(* recovery.                                                               *)
(*                                                                         *)
(* WHAT IS MODELLED.  N threads, each running NOps transactions of a       *)
(* Workload over an object of W persistent 64-bit words.  Update           *)
(* transactions run applyUpdate (Algorithm 3), read-only ones applyRead    *)
(* (Algorithm 2).  The volatile machinery of Algorithm 1: the announce and *)
(* request arrays (Herlihy's combining consensus), the N+1 Combined        *)
(* instances with their `head` tickets and strong try reader-writer locks, *)
(* the States (ticket, applied[], results[], the physical redo/undo log,   *)
(* its published size) pre-allocated RSIZE per thread (stMatrix), the ring *)
(* of RSIZE tickets, and lastIdx.  In persistent memory: curComb (one      *)
(* line) and the N+1 replicas, one line per word (the weakest placement).  *)
(* Each pc value is the seed's line number: "U<n>" Algorithm 3, "A<n>"     *)
(* Algorithm 2; "R1" applyRedologs and "M1".."M3" the copy, whose         *)
(* pseudo-code the seed does not give (README.md, "Ambiguities").          *)
(*                                                                         *)
(* MEMORY: PtmBase.tla (Px86 lines, one per word; a pwb persists at the   *)
(* thread's next locked RMW -- every CAS, also a failed one -- or psync).  *)
(* Visibility is sequentially consistent (no TSO buffers); every access to *)
(* a shared word is a step of its own, except the merges the comments     *)
(* name; accesses to the thread's own words merge with a neighbour.        *)
(*                                                                         *)
(* NULL RECOVERY (§5 "Recovery", and the published code): after a crash    *)
(* curComb is what persisted; its replica's head is a fresh State at that  *)
(* seq (no request applied), every other replica is invalid (the first     *)
(* update that locks it copies), the ring, the States, announce, req and  *)
(* the locks start afresh; operations in flight are cut off and their     *)
(* threads go on with their next transaction (no recovery function).  The *)
(* sequence numbers are not reset (the published code resets them to 0;   *)
(* with every volatile structure reset the two are the same).  Invalid     *)
(* replicas' contents are normalised to 0: they are never read before a    *)
(* copy overwrites every word.                                             *)
(*                                                                         *)
(* SWITCHES.  Fixes (FALSE = the seed as written; README.md "Findings"):   *)
(*   HelperPwb         F1: Algorithm 3 L17 (help append the tail to the    *)
(*                     ring) issues pwb(curComb) first; the ring CAS, a    *)
(*                     locked RMW, is its fence.                           *)
(*   PersistBeforeRelease  F2: after a successful CAS, L32-L35 (persist    *)
(*                     curComb through the ring) run before L31 (release   *)
(*                     the previous curComb's Combined), not after.        *)
(*   RequestSeq        F3: a request is a (number, function) pair read in *)
(*                     one load; applied[] holds the number last applied   *)
(*                     (Herlihy's toggle bit of the seed breaks when a     *)
(*                     read published at MAX_READ_TRIES completes by       *)
(*                     itself and its thread announces again).             *)
(*   UndoFlush         F4: after a failed CAS, _c is kept (the seed's L18  *)
(*                     `if _c = null`) with the undo's stores in its       *)
(*                     deferred pwbs, flushed by the next L26 or by L44's  *)
(*                     psync before _c is released (the published code     *)
(*                     releases _c and drops those pwbs).                  *)
(* Mutants (TRUE = the algorithm; the issue's list):                       *)
(*   ReturnPersist     L34's pwb(curComb) and L44-L45's pwb+psync          *)
(*   FlushBeforeCas    L26 (flush the replica) before the CAS; FALSE:      *)
(*                     right after a successful CAS                        *)
(*   UndoOnFail        L38 applyUndolog after a failed CAS                 *)
(*   ValidityCheck     applyRedologs checks each ring entry's seq and the  *)
(*                     State's ticket before using its log                 *)
(*                                                                         *)
(* PROPERTIES.  TypeOK; ExactlyOnce (no request is committed twice);       *)
(* CurCombConsistent (the replica curComb designates holds the sequential *)
(* state of its seq); DurableImageConsistent (in every crash image the    *)
(* replica the persisted curComb designates holds the state of that seq:  *)
(* null recovery is correct); CompletedDurable (every transaction that     *)
(* returned is in the persisted prefix); ResultsCorrect (every result is   *)
(* the one the commit order gives).  Together these are a witness of       *)
(* durable linearizability (the commit order linearizes); the history     *)
(* check itself: HistoryDurablyLinearizable (invokes, returns and crashes *)
(* against the sequential object, specs/common/DurableLinearizability;    *)
(* checked once every thread is done, which suffices because a history    *)
(* that is not durably linearizable has no extension that is).  Bounds:   *)
(* FenceBound and StepBound on per-transaction counters, BoundedSteps the *)
(* same bounds as variant functions (an action property, free in states), *)
(* WaitFree (no step waits for another thread).                           *)
(***************************************************************************)
EXTENDS PtmBase, TLC, Histories

CONSTANTS
    N,              \* threads 1..N
    RSIZE,          \* ring slots, and States per thread (stMatrix is N x RSIZE)
    NOps,           \* transactions per thread
    MaxReadTries,   \* MAX_READ_TRIES of Algorithm 2
    MaxCrashes,     \* full-system crashes
    MaxFences,      \* the claimed bound on persistence fences per transaction
    HelperPwb, PersistBeforeRelease, RequestSeq, UndoFlush,    \* fixes
    ReturnPersist, FlushBeforeCas, UndoOnFail, ValidityCheck    \* mutant switches

ASSUME /\ N \in Nat \ {0} /\ W \in Nat \ {0} /\ RSIZE \in Nat \ {0} /\ NOps \in Nat
       /\ MaxReadTries \in Nat /\ MaxCrashes \in Nat /\ MaxFences \in Nat
       /\ {HelperPwb, PersistBeforeRelease, RequestSeq, UndoFlush,
           ReturnPersist, FlushBeforeCas, UndoOnFail, ValidityCheck} \subseteq BOOLEAN

Threads == 1 .. N
Combs == 0 .. N            \* N+1 Combined instances
Lines == Combs \X Words    \* replica lines
Slots == 0 .. RSIZE - 1    \* ring slots and State indices
MaxSeq == N * NOps         \* every committed transition carries an update

-----------------------------------------------------------------------------
(* The object (PtmBase.tla) and its durable linearizability.               *)

DL == INSTANCE DurableLinearizability WITH SeqInit <- ObjInit, SeqApply <- ObjApply

Id(t, i) == (t - 1) * NOps + i

-----------------------------------------------------------------------------
(* Tickets (SeqTidIdx), curComb values, States.                            *)

Tk(s, t, j) == [seq |-> s, tid |-> t, idx |-> j]
Tk0 == Tk(0, 0, 0)
Invalid == Tk(0, 0, 1)        \* a replica that must be copied (tid 0 idx 1 is no State)
CV(s, c) == [seq |-> s, idx |-> c]   \* curComb = {seq, tid, idx}; the tid is not used

\* The State a ticket names: stMatrix[tid].states[idx]; tid 0 is the fresh
\* State of the initial / recovered head (nothing applied, empty log).
Fresh == [tkt |-> Tk0, applied |-> [u \in Threads |-> 0], results |-> [u \in Threads |-> 0],
          log |-> <<>>, lsz |-> 0]

\* A request number: with the seed's toggle (RequestSeq = FALSE) announce and
\* applied are 0/1 bits, with F3 they count the thread's requests.
Flip(b) == 1 - b

-----------------------------------------------------------------------------
VARIABLES
    mem,      \* PM: [cc: line, r: [Lines -> line], pwc: [Threads -> Nat],
              \*      pwr: [Threads -> [Lines -> Nat]]] (lines and pending pwbs)
    head,     \* [Combs -> ticket]: Combined.head (volatile)
    lk,       \* [Combs -> [ex: 0..N, sh: SUBSET Threads, dg: BOOLEAN]]: rwLock
              \*   (dg: held shared by the downgrade of the thread that installed it)
    ring,     \* [Slots -> ticket]
    sts,      \* [Threads -> [Slots -> State]]: stMatrix
    lidx,     \* [Threads -> Slots]: stMatrix[tid].lastIdx
    ann,      \* [Threads -> Nat]: announce[]
    req,      \* [Threads -> [n: Nat, i: Nat]]: reqs[] (the op index of the thread;
              \*   n its request number, used by F3)
    th,       \* [Threads -> registers]
    crashes,
    hist,     \* the history (Histories.tla)
    \* ghosts
    sig,      \* [0..MaxSeq -> object state]: the state committed with each seq
    ncom,     \* [Threads -> [1..NOps -> 0..2]]: times the request was committed
    oseq,     \* [Threads -> [1..NOps -> Nat]]: the seq whose state its result reflects
    ret,      \* [Threads -> [1..NOps -> BOOLEAN]]: returned
    exp,      \* [Threads -> [1..NOps -> Nat]]: its result in the commit order
    bad       \* SUBSET (Threads \X Nat): transactions that returned another result

vars == <<mem, head, lk, ring, sts, lidx, ann, req, th, crashes, hist, sig, ncom, oseq, ret, exp, bad>>

-----------------------------------------------------------------------------
CurComb == Vis(mem.cc)
DurableSeq == mem.cc.p.seq

-----------------------------------------------------------------------------
(* Thread registers.  Idle(i): between transactions, the last one was i.   *)

Idle(i) ==
    [pc |-> "Idle", i |-> i, iter |-> 0, curC |-> CV(0, 0), comb |-> 0, tail |-> Tk0, tkt |-> Tk0,
     c |-> -1, rt |-> Tk0, k |-> 0, att |-> 0, hd |-> Tk0, ccv |-> CV(0, 0), ri |-> 0, res |-> 0,
     pend |-> FALSE, nf |-> 0, ns |-> 0, gops |-> << >>, dp |-> {},
     pw |-> << >>, pl |-> {}, wnx |-> "Idle", init |-> 0, ds |-> 0, rq |-> [n |-> 0, i |-> 0]]

Op(t) == WorkOf(t, th[t].i)
NewSt(t) == sts[t][lidx[t]]
StateOf(tk) == IF tk.tid = 0 THEN Fresh ELSE sts[tk.tid][tk.idx]
\* Is thread u's request, whose announce value is a, still open in State st?
Open(st, u, a) == st.applied[u] # a

Init ==
    /\ mem = MemInit(CV(0, 0), Lines, Threads)
    /\ head = [c \in Combs |-> IF c = 0 THEN Tk0 ELSE Invalid]
    /\ lk = [c \in Combs |-> [ex |-> 0, sh |-> {}, dg |-> c = 0]]
    /\ ring = [k \in Slots |-> Tk0]
    /\ sts = [t \in Threads |-> [j \in Slots |-> Fresh]]
    /\ lidx = [t \in Threads |-> 0]
    /\ ann = [t \in Threads |-> 0]
    /\ req = [t \in Threads |-> [n |-> 0, i |-> 0]]
    /\ th = [t \in Threads |-> Idle(0)]
    /\ crashes = 0
    /\ hist = << >>
    /\ sig = [s \in 0 .. MaxSeq |-> ObjInit]
    /\ ncom = [t \in Threads |-> [i \in 1 .. NOps |-> 0]]
    /\ oseq = [t \in Threads |-> [i \in 1 .. NOps |-> 0]]
    /\ ret = [t \in Threads |-> [i \in 1 .. NOps |-> FALSE]]
    /\ exp = [t \in Threads |-> [i \in 1 .. NOps |-> 0]]
    /\ bad = {}

-----------------------------------------------------------------------------
(* Helpers shared by the steps.                                            *)

Ghosts == <<sig, ncom, oseq, ret, exp, bad>>

\* A step of thread t: its registers become r (step counted).
SetTh(t, r) == th' = [th EXCEPT ![t] = [r EXCEPT !.ns = th[t].ns + 1]]

\* Fence counting: a psync always counts; a locked RMW counts when it has a
\* pending pwb of the thread to complete (then it is the pfence/psync).
AfterRMW(r) == [r EXCEPT !.nf = @ + (IF r.pend THEN 1 ELSE 0), !.pend = FALSE]
AfterPsync(r) == [r EXCEPT !.nf = @ + 1, !.pend = FALSE]

\* The transaction returns v.  os > 0: a read that ran on the replica of
\* seq os - 1 (its result must be that state's); else its result must be the
\* one its commit computed (and it must have been committed).
\* Returned is the ghosts' part (U32P, UR, U46C, A17, A22 take it through
\* Return).
Returned(t, i, v, os) ==
    LET want == IF os > 0 THEN ResultOf(WorkOf(t, i), sig[os - 1]) ELSE exp[t][i]
        ok == v = want /\ (os > 0 \/ ncom[t][i] = 1)
    IN /\ ret' = [ret EXCEPT ![t][i] = TRUE]
       /\ oseq' = IF os = 0 THEN oseq ELSE [oseq EXCEPT ![t][i] = os - 1]
       /\ bad' = IF ok THEN bad ELSE bad \cup {<<t, i>>}
Return(t, v, os) ==
    LET i == th[t].i IN
    /\ hist' = Append(hist, EvReturn(Id(t, i), v))
    /\ Returned(t, i, v, os)
    /\ th' = [th EXCEPT ![t] = Idle(i)]

\* Publish transaction i of thread t (Algorithm 3 L2-L3, Algorithm 2 L4-L5):
\* reqs[tid] <- the function, then announce[tid] flips (F3: takes the
\* request's number; the pair is then read in one load).
Publish(t, i) ==
    LET n == req[t].n + 1 IN
    /\ req' = [req EXCEPT ![t] = [n |-> n, i |-> i]]
    /\ ann' = [ann EXCEPT ![t] = IF RequestSeq THEN n ELSE Flip(@)]

-----------------------------------------------------------------------------
(* Invocation.                                                             *)

\* A client invokes transaction i+1 on thread t.  An update publishes it at
\* once (Algorithm 3, L2-L6: reqs[tid] <- updFunc; announce[tid] flips;
\* _newSt is stMatrix[tid].states[lastIdx]; _c <- null).
Invoke(t) ==
    /\ th[t].pc = "Idle" /\ th[t].i < NOps
    /\ LET i == th[t].i + 1
           o == WorkOf(t, i)
       IN /\ hist' = Append(hist, EvInvoke(Id(t, i), t, o.op, ArgsOf(o)))
          /\ IF IsRead(o)
             THEN /\ th' = [th EXCEPT ![t] = [Idle(i) EXCEPT !.pc = "A2", !.ns = 1]]
                  /\ UNCHANGED <<req, ann>>
             ELSE /\ th' = [th EXCEPT ![t] = [Idle(i) EXCEPT !.pc = "U8", !.ns = 1]]
                  /\ Publish(t, i)
    /\ UNCHANGED <<mem, head, lk, ring, sts, lidx, crashes, Ghosts>>

-----------------------------------------------------------------------------
(* Algorithm 3: applyUpdate.                                               *)
(*                                                                         *)
(* Merged reads (each a step of its own in the seed): L8-L12 (curComb, its *)
(* Combined's head, that State), L13-L16 (curComb again, the ring).  A     *)
(* change of curComb between two merged reads is one the next check (L13,  *)
(* L30) sees anyway.  The simulation loop L20-L24 is one step (it reads    *)
(* announce/reqs of every thread; _c is private under the exclusive lock); *)
(* an applyRedologs entry (ring slot, log, the State's ticket) is one step *)
(* (so a State reused during the copy of its log is not exercised: with   *)
(* RSIZE >= 2 States per thread and 2 transactions per thread no State is  *)
(* reused at all).  Returns are merged into the step before them (a        *)
(* return moved earlier only adds real-time order: a stricter check),      *)
(* never into a step with a fence (FenceBound reads the count before).     *)

\* The registers a new iteration does not need (the deferred pwbs stay:
\* they belong to _c, which F4 keeps).
Fresh8(r) == [r EXCEPT !.curC = CV(0, 0), !.comb = 0, !.tail = Tk0, !.tkt = Tk0, !.rt = Tk0,
                       !.k = 0, !.att = 0, !.hd = Tk0, !.ccv = CV(0, 0), !.gops = << >>]

\* "continue" in Algorithm 3's loop (L7: two iterations), else L40.
NextIter(r) == IF r.iter = 0 THEN [Fresh8(r) EXCEPT !.iter = 1, !.pc = "U8"]
               ELSE [Fresh8(r) EXCEPT !.pc = "U40"]

\* L8-L12: _curC <- curComb; _comb <- combs[_curC.idx]; _tail <- _comb.head;
\* _tkt <- {_tail.seq+1, tid, lastIdx}; cpySt(_tkt, state of _tail):
\* _newSt takes the ticket, that State's applied[] and results[], an empty
\* log.
U8(t) ==
    /\ th[t].pc = "U8"
    /\ LET cc == CurComb
           tl == head[cc.idx]
           src == StateOf(tl)
           tkt == Tk(tl.seq + 1, t, lidx[t])
       IN /\ sts' = [sts EXCEPT ![t][lidx[t]] = [tkt |-> tkt, applied |-> src.applied,
                                                 results |-> src.results, log |-> << >>, lsz |-> 0]]
          /\ SetTh(t, [th[t] EXCEPT !.curC = cc, !.comb = cc.idx, !.tail = tl, !.tkt = tkt, !.pc = "U13"])
    /\ UNCHANGED <<mem, head, lk, ring, lidx, ann, req, crashes, hist, Ghosts>>

\* L13: if _curC # curComb then continue.  L14-L16: _ringtail <-
\* ring[_tail.seq % RSIZE]; if it is not _tail: if its seq is larger,
\* continue, else help (L17).
U13(t) ==
    /\ th[t].pc = "U13"
    /\ LET tl == th[t].tail
           rt == ring[tl.seq % RSIZE]
       IN SetTh(t, CASE th[t].curC # CurComb -> NextIter(th[t])
                     [] rt = tl -> [th[t] EXCEPT !.pc = "U18"]
                     [] rt.seq > tl.seq -> NextIter(th[t])
                     [] OTHER -> [th[t] EXCEPT !.rt = rt, !.pc = "U17"])
    /\ UNCHANGED <<mem, head, lk, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* L17: ring[_tail.seq % RSIZE].cas(_ringtail, _tail), a locked RMW.  F1
\* (HelperPwb): pwb(curComb) first, so that this CAS persists curComb.
U17(t) ==
    /\ th[t].pc = "U17"
    /\ LET tl == th[t].tail
           sl == tl.seq % RSIZE
           r0 == IF HelperPwb THEN [th[t] EXCEPT !.pend = TRUE] ELSE th[t]
           m0 == IF HelperPwb THEN PwbC(mem, t) ELSE mem
       IN /\ mem' = Fence(m0, t)
          /\ ring' = IF ring[sl] = th[t].rt THEN [ring EXCEPT ![sl] = tl] ELSE ring
          /\ SetTh(t, [AfterRMW(r0) EXCEPT !.rt = Tk0, !.pc = "U18"])
    /\ UNCHANGED <<head, lk, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* L18: if _c = null then _c, _idx <- exclusiveTryLock() (the strong try
\* locks of combs[0..N] in order, one step); none free: break (as the
\* published code).  L19 starts: applyRedologs(_c, _tail) brings _c from
\* _c.head to _tail with the ring's redo logs (R1), or copies (M1..M3) when
\* _c is invalid or ahead of _tail (its head is private once locked).
Redo19(r, h) ==
    IF h = Invalid \/ h.seq > r.tail.seq THEN [r EXCEPT !.att = 0, !.pc = "M1"]
    ELSE [r EXCEPT !.k = h.seq + 1, !.pc = "R1"]
U18(t) ==
    /\ th[t].pc = "U18"
    /\ IF th[t].c # -1
       THEN SetTh(t, Redo19(th[t], head[th[t].c])) /\ UNCHANGED lk
       ELSE LET free == {c \in Combs : lk[c].ex = 0 /\ lk[c].sh = {} /\ ~lk[c].dg} IN
            IF free = {} THEN SetTh(t, [th[t] EXCEPT !.pc = "U40"]) /\ UNCHANGED lk
            ELSE LET c == CHOOSE x \in free : \A y \in free : x <= y IN
                 /\ lk' = [lk EXCEPT ![c].ex = t]
                 /\ SetTh(t, Redo19([th[t] EXCEPT !.c = c], head[c]))
    /\ UNCHANGED <<mem, head, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* applyRedologs, entry k (the seed gives no pseudo-code; §5: "A replica
\* reaches an invalidated state when it is no longer possible to apply the
\* physical log in the sequential order ... starting at _c.head"; details
\* as the published apply_redologs): read ring[k % RSIZE]; it must hold
\* seq k (ValidityCheck); apply its State's published log (the `val`s) to
\* _c; the State's ticket must still be the ring's (ValidityCheck), else
\* the State was reused: copy.  Past _tail: _c.head <- _tail, go on (L20).
R1(t) ==
    /\ th[t].pc = "R1"
    /\ LET k == th[t].k
           c == th[t].c
       IN IF k > th[t].tail.seq
          THEN /\ head' = [head EXCEPT ![c] = th[t].tail]
               /\ SetTh(t, [th[t] EXCEPT !.k = 0, !.pc = "U20"])
               /\ UNCHANGED mem
          ELSE LET rt == ring[k % RSIZE]
                   st == StateOf(rt)
                   lg == SubSeq(st.log, 1, st.lsz)
                   ws == [e \in 1 .. Len(lg) |-> <<lg[e].a, lg[e].new>>]
               IN IF ValidityCheck /\ (rt.seq # k \/ (rt.tid # 0 /\ st.tkt # rt))
                  THEN SetTh(t, [th[t] EXCEPT !.k = 0, !.att = 0, !.pc = "M1"]) /\ UNCHANGED <<mem, head>>
                  ELSE /\ mem' = StoreAll(mem, c, ws)
                       /\ SetTh(t, [th[t] EXCEPT !.dp = @ \cup {lg[e].a : e \in 1 .. Len(lg)},
                                                 !.k = k + 1])
                       /\ UNCHANGED head
    /\ UNCHANGED <<lk, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* The copy (§5: "the thread will attempt to perform a copy from the replica
\* referenced by curComb following an optimistic approach.  To perform a
\* successful copy, curComb must not change during the procedure.  After
\* two copy attempts, it is guaranteed ... that the thread's operation was
\* executed by a helper thread"), as the published makeCopy: _c is marked
\* invalid; read curComb and its Combined's head.
M1(t) ==
    /\ th[t].pc = "M1"
    /\ LET cc == CurComb IN
       /\ head' = [head EXCEPT ![th[t].c] = Invalid]
       /\ SetTh(t, [th[t] EXCEPT !.ccv = cc, !.hd = head[cc.idx], !.pc = "M2"])
    /\ UNCHANGED <<mem, lk, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* makeCopy: if that head's State has our request applied, stop: L19
\* returns false (break).  Else copy every word of curComb's replica into
\* _c (the source is not locked; M3's check of curComb validates it).
M2(t) ==
    /\ th[t].pc = "M2"
    /\ IF ~Open(StateOf(th[t].hd), t, ann[t])
       THEN SetTh(t, [th[t] EXCEPT !.att = 0, !.hd = Tk0, !.ccv = CV(0, 0), !.pc = "U40"])
            /\ UNCHANGED mem
       ELSE LET src == Content(mem, th[t].ccv.idx) IN
            /\ mem' = StoreAll(mem, th[t].c, [w \in Words |-> <<w, src[w]>>])
            /\ SetTh(t, [th[t] EXCEPT !.pc = "M3"])
    /\ UNCHANGED <<head, lk, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* makeCopy: curComb unchanged: the copy is good: pwb every line of _c,
\* _c.head <- the head read in M1, go on (L20).  Else a second attempt,
\* then give up (break).
M3(t) ==
    /\ th[t].pc = "M3"
    /\ IF CurComb = th[t].ccv
       THEN /\ mem' = PwbR(mem, t, th[t].c, Words)
            /\ head' = [head EXCEPT ![th[t].c] = th[t].hd]
            /\ SetTh(t, [th[t] EXCEPT !.pend = TRUE, !.att = 0, !.hd = Tk0, !.ccv = CV(0, 0),
                                      !.pc = "U20"])
       ELSE /\ SetTh(t, IF th[t].att = 0
                        THEN [th[t] EXCEPT !.att = 1, !.hd = Tk0, !.ccv = CV(0, 0), !.pc = "M1"]
                        ELSE [th[t] EXCEPT !.att = 0, !.hd = Tk0, !.ccv = CV(0, 0), !.pc = "U40"])
            /\ UNCHANGED <<mem, head>>
    /\ UNCHANGED <<lk, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* L20-L24 (one step): for every thread u whose announce differs from
\* _newSt.applied[u], run reqs[u]() on _c (its stores go to _c, to the log
\* and to the deferred pwbs), record its result, flip applied[u].  With F3
\* the request (number, function) is one load and applied[u] takes its
\* number.
RECURSIVE Simulate(_, _, _, _)
\* Simulate(us, x, st, acc): threads us still to visit, replica content x,
\* the State st, acc = [stores, gops, dp] so far.
Simulate(us, x, st, acc) ==
    IF us = << >> THEN [x |-> x, st |-> st, acc |-> acc]
    ELSE LET u == Head(us)
             a == IF RequestSeq THEN req[u].n ELSE ann[u]
         IN IF ~Open(st, u, a) \/ req[u].i = 0
            THEN Simulate(Tail(us), x, st, acc)
            ELSE LET o == WorkOf(u, req[u].i)
                     ws == StoresOf(o, x)
                 IN Simulate(Tail(us), ApplyStores(x, ws),
                             [st EXCEPT !.log = @ \o LogOf(x, ws),
                                        !.results[u] = ResultOf(o, x),
                                        !.applied[u] = IF RequestSeq THEN a ELSE Flip(st.applied[u])],
                             [stores |-> acc.stores \o ws,
                              gops |-> Append(acc.gops, <<u, req[u].i>>),
                              dp |-> acc.dp \cup {ws[q][1] : q \in DOMAIN ws}])
ThreadSeq == [q \in 1 .. N |-> q]

U20(t) ==
    /\ th[t].pc = "U20"
    /\ LET j == lidx[t]
           sim == Simulate(ThreadSeq, Content(mem, th[t].c), sts[t][j],
                           [stores |-> << >>, gops |-> << >>, dp |-> {}])
       IN /\ mem' = StoreAll(mem, th[t].c, sim.acc.stores)
          /\ sts' = [sts EXCEPT ![t][j] = sim.st]
          /\ SetTh(t, [th[t] EXCEPT !.dp = @ \cup sim.acc.dp, !.gops = sim.acc.gops, !.pc = "U26"])
    /\ UNCHANGED <<head, lk, ring, lidx, ann, req, crashes, hist, Ghosts>>

\* L26-L29: flushDeferredPWBs() (FlushBeforeCas; the mutant flushes after
\* the CAS instead, U30F); pwb(curComb) (L27); _c.head <- _tkt (L28, the
\* log size published just before, as the published code does);
\* _c.rwLock.downgrade() (L29).  Then the CAS (U30), or, with a CAS that is
\* no fence (SpecSimCas below), the pfence before it (U29).
U26Then(t, nxt) ==
    /\ th[t].pc = "U26"
    /\ LET c == th[t].c
           m0 == IF FlushBeforeCas THEN PwbR(mem, t, c, th[t].dp) ELSE mem
       IN /\ mem' = PwbC(m0, t)
          /\ head' = [head EXCEPT ![c] = th[t].tkt]
          /\ sts' = [sts EXCEPT ![t][lidx[t]].lsz = Len(sts[t][lidx[t]].log)]
          /\ lk' = [lk EXCEPT ![c] = [ex |-> 0, sh |-> lk[c].sh, dg |-> TRUE]]
          /\ SetTh(t, [th[t] EXCEPT !.pend = TRUE, !.dp = IF FlushBeforeCas THEN {} ELSE @,
                                    !.pc = nxt])
    /\ UNCHANGED <<ring, lidx, ann, req, crashes, hist, Ghosts>>
U26(t) == U26Then(t, "U30")

\* The ghost object state after the transaction's requests, in its order,
\* and their results.
RECURSIVE FoldOps(_, _), FoldRes(_, _)
FoldOps(x, ops) == IF ops = << >> THEN x
                   ELSE FoldOps(ApplyStores(x, StoresOf(WorkOf(Head(ops)[1], Head(ops)[2]), x)), Tail(ops))
FoldRes(x, ops) == IF ops = << >> THEN << >>
                   ELSE LET o == WorkOf(Head(ops)[1], Head(ops)[2]) IN
                        <<ResultOf(o, x)>> \o FoldRes(ApplyStores(x, StoresOf(o, x)), Tail(ops))

\* What a successful curComb CAS to cv does, on memory m (after its fence,
\* if it is one): curComb takes cv; the requests gops (a sequence of
\* <<thread, transaction>>, in the order the simulation ran them), applied
\* to the state of seq s0 (cv.seq - 1 here), are committed with cv.seq: the
\* state after them, each one's count (a request
\* gops holds twice counts twice; the simulation visits each thread once),
\* its seq, its result.  U30, U30With and U30P take this step.
Commit(m, cv, s0, gops) ==
    LET ops == Range(gops)
        rs == FoldRes(sig[s0], gops)
    IN /\ mem' = StoreCC(m, cv)
       /\ sig' = [sig EXCEPT ![cv.seq] = FoldOps(sig[s0], gops)]
       /\ ncom' = [u \in Threads |-> [i \in 1 .. NOps |->
                     Min2(ncom[u][i] + Cardinality({q \in DOMAIN gops : gops[q] = <<u, i>>}))]]
       /\ oseq' = [u \in Threads |-> [i \in 1 .. NOps |->
                     IF <<u, i>> \in ops THEN cv.seq ELSE oseq[u][i]]]
       /\ exp' = [u \in Threads |-> [i \in 1 .. NOps |->
                    IF <<u, i>> \in ops
                    THEN rs[CHOOSE q \in DOMAIN gops : gops[q] = <<u, i>>]
                    ELSE exp[u][i]]]

\* Where a successful CAS goes next: the mutant's late flush, then L32
\* (F2: persist first) or L31 (the seed: release first).
AfterCas == IF PersistBeforeRelease THEN "U32" ELSE "U31"

\* L30: curComb.cas(_curC, {_tkt.seq, tid, _idx}), a locked RMW: the
\* pending pwbs (the replica's lines, curComb) take effect first (this is
\* the pfence the published code omits for that reason).  Success commits
\* the requests the simulation applied (ghosts); failure: L38.  With
\* fenced = FALSE the CAS is no fence (SpecSimCas below): what was pending
\* stays pending.
U30With(t, fenced) ==
    /\ th[t].pc = "U30"
    /\ LET m1 == IF fenced THEN Fence(mem, t) ELSE mem
           r1 == IF fenced THEN AfterRMW(th[t]) ELSE th[t]
           tk == th[t].tkt
       IN IF Vis(m1.cc) = th[t].curC
          THEN /\ Commit(m1, CV(tk.seq, th[t].c), tk.seq - 1, th[t].gops)
               /\ SetTh(t, [r1 EXCEPT !.gops = << >>, !.curC = CV(0, 0), !.tail = Tk0,
                                      !.pc = IF ~FlushBeforeCas THEN "U30F" ELSE AfterCas])
          ELSE /\ mem' = m1
               /\ SetTh(t, [r1 EXCEPT !.pc = "U38"])
               /\ UNCHANGED <<sig, ncom, oseq, exp>>
    /\ UNCHANGED <<head, lk, ring, sts, lidx, ann, req, crashes, hist, ret, bad>>

U30(t) == U30With(t, TRUE)

\* Mutant FlushBeforeCas = FALSE: L26's flushDeferredPWBs() runs here,
\* after the CAS made the replica curComb.
U30F(t) ==
    /\ th[t].pc = "U30F"
    /\ mem' = PwbR(mem, t, th[t].c, th[t].dp)
    /\ SetTh(t, [th[t] EXCEPT !.pend = TRUE, !.dp = {}, !.pc = AfterCas])
    /\ UNCHANGED <<head, lk, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* L36-L37: lastIdx++; return _newSt.results[tid] (merged into the step
\* before, see above).
Finish36(t) ==
    /\ lidx' = [lidx EXCEPT ![t] = (@ + 1) % RSIZE]
    /\ Return(t, NewSt(t).results[t], 0)

\* L31: _comb.rwLock.downgradeUnlock(): the previous curComb's Combined is
\* released (the shared lock its installer's downgrade left).  With F2 this
\* comes after L32-L35, and L36 follows.
U31(t) ==
    /\ th[t].pc = "U31"
    /\ lk' = [lk EXCEPT ![th[t].comb].dg = FALSE]
    /\ IF PersistBeforeRelease
       THEN Finish36(t)
       ELSE SetTh(t, [th[t] EXCEPT !.pc = "U32"]) /\ UNCHANGED <<lidx, hist, ret, oseq, bad>>
    /\ UNCHANGED <<mem, head, ring, sts, ann, req, crashes, sig, ncom, exp>>

\* L32-L33: _ringTail <- ring[_tkt.seq % RSIZE]; if _ringTail.seq < _tkt.seq
\* then L34-L35, else (the seed) L36 or (F2) L31.
U32(t) ==
    /\ th[t].pc = "U32"
    /\ LET rt == ring[th[t].tkt.seq % RSIZE] IN
       IF rt.seq < th[t].tkt.seq
       THEN SetTh(t, [th[t] EXCEPT !.rt = rt, !.pc = "U34"]) /\ UNCHANGED <<lidx, hist, ret, oseq, bad>>
       ELSE IF PersistBeforeRelease
            THEN SetTh(t, [th[t] EXCEPT !.pc = "U31"]) /\ UNCHANGED <<lidx, hist, ret, oseq, bad>>
            ELSE Finish36(t)
    /\ UNCHANGED <<mem, head, lk, ring, sts, ann, req, crashes, sig, ncom, exp>>

\* L34-L35: pwb(curComb) (ReturnPersist); ring[..].cas(_ringTail, _tkt), a
\* locked RMW: the pwb takes effect (it is the psync).
U34(t) ==
    /\ th[t].pc = "U34"
    /\ LET sl == th[t].tkt.seq % RSIZE
           r0 == IF ReturnPersist THEN [th[t] EXCEPT !.pend = TRUE] ELSE th[t]
           m0 == IF ReturnPersist THEN PwbC(mem, t) ELSE mem
       IN /\ mem' = Fence(m0, t)
          /\ ring' = IF ring[sl] = th[t].rt THEN [ring EXCEPT ![sl] = th[t].tkt] ELSE ring
          /\ SetTh(t, [AfterRMW(r0) EXCEPT !.rt = Tk0,
                                           !.pc = IF PersistBeforeRelease THEN "U31" ELSE "U36"])
    /\ UNCHANGED <<head, lk, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* L36-L37 after L34-L35 (not merged: L35 is a fence).
U36(t) ==
    /\ th[t].pc = "U36"
    /\ Finish36(t)
    /\ UNCHANGED <<mem, head, lk, ring, sts, ann, req, crashes, sig, ncom, exp>>

\* L38-L39 after a failed CAS: applyUndolog(_newSt) (UndoOnFail: the log's
\* oldvals, last entry first); reset(_newSt, _c): _c.head <- _tail.  Then
\* continue.  Without F4 (UndoFlush), as the published code: release _c,
\* _c <- null, drop the deferred pwbs (those of the undo too).  With F4, as
\* the seed's L18 (`if _c = null`) reads: keep _c for the next iteration
\* (still downgraded: nobody else may lock it) with the undone lines in the
\* deferred pwbs; they are flushed by L26 or, if the loop ends first, by
\* L44-L45 before _c is released.
U38(t) ==
    /\ th[t].pc = "U38"
    /\ LET c == th[t].c
           lg == NewSt(t).log
           undo == [e \in 1 .. Len(lg) |-> <<lg[Len(lg) + 1 - e].a, lg[Len(lg) + 1 - e].old>>]
       IN /\ mem' = IF UndoOnFail THEN StoreAll(mem, c, undo) ELSE mem
          /\ head' = [head EXCEPT ![c] = th[t].tail]
          /\ IF UndoFlush
             THEN /\ SetTh(t, [NextIter(th[t]) EXCEPT !.dp = @ \cup {lg[e].a : e \in 1 .. Len(lg)}])
                  /\ UNCHANGED lk
             ELSE /\ lk' = [lk EXCEPT ![c] = [ex |-> 0, sh |-> lk[c].sh, dg |-> FALSE]]
                  /\ SetTh(t, NextIter([th[t] EXCEPT !.c = -1, !.dp = {}]))
    /\ UNCHANGED <<ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* L43-L45: _curC <- curComb; pwb(curComb); psync() (ReturnPersist); with
\* F4 the deferred pwbs of _c are issued first.  L40-L41: if _c # null,
\* release it (after the psync with F4, before it in the seed's order:
\* either way no other thread can see the difference without F4, which
\* has nothing of _c's left to persist).
U40(t) ==
    /\ th[t].pc = "U40"
    /\ LET c == th[t].c
           m0 == IF UndoFlush /\ c # -1 THEN PwbR(mem, t, c, th[t].dp) ELSE mem
       IN /\ lk' = IF c # -1 THEN [lk EXCEPT ![c] = [ex |-> 0, sh |-> lk[c].sh, dg |-> FALSE]] ELSE lk
          /\ mem' = IF ReturnPersist THEN Fence(PwbC(m0, t), t) ELSE m0
    /\ SetTh(t, [IF ReturnPersist THEN AfterPsync(th[t]) ELSE th[t]
                 EXCEPT !.c = -1, !.dp = {}, !.gops = << >>, !.curC = CurComb, !.pc = "U46"])
    /\ UNCHANGED <<head, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* L46-L50 (and Algorithm 2 L22-L27): the State of combs[_curC.idx].head,
\* or of ring[_curC.seq % RSIZE] if that head is not _curC's (the seed's
\* "_comb.seq" read as _curC.seq); its results[tid].
ResultAt(t, cc) ==
    LET tl0 == head[cc.idx]
        tl == IF tl0.seq # cc.seq THEN ring[cc.seq % RSIZE] ELSE tl0
    IN StateOf(tl).results[t]

U46(t) ==
    /\ th[t].pc = "U46"
    /\ Return(t, ResultAt(t, th[t].curC), 0)
    /\ UNCHANGED <<mem, head, lk, ring, sts, lidx, ann, req, crashes, sig, ncom, exp>>

-----------------------------------------------------------------------------
(* Algorithm 2: applyRead.  Iteration ri = 0 .. MAX_READ_TRIES + 1.        *)

\* "continue" in Algorithm 2's loop, else L19.
NextTry(r) == IF r.ri < MaxReadTries + 1
              THEN [r EXCEPT !.ri = @ + 1, !.curC = CV(0, 0), !.comb = 0, !.pc = "A2"]
              ELSE [r EXCEPT !.curC = CV(0, 0), !.comb = 0, !.pc = "A19"]

\* L3-L8: at ri = MAX_READ_TRIES publish the read (L4-L5); _curC <- curComb
\* (L6); _comb <- combs[_curC.idx] (L7); _comb.rwlock.sharedTryLock(tid)
\* (L8: it fails only while a writer holds the lock exclusively).
A2(t) ==
    /\ th[t].pc = "A2"
    /\ IF th[t].ri = MaxReadTries THEN Publish(t, th[t].i) ELSE UNCHANGED <<req, ann>>
    /\ LET cc == CurComb IN
       IF lk[cc.idx].ex = 0
       THEN /\ lk' = [lk EXCEPT ![cc.idx].sh = @ \cup {t}]
            /\ SetTh(t, [th[t] EXCEPT !.curC = cc, !.comb = cc.idx, !.pc = "A9"])
       ELSE /\ SetTh(t, NextTry(th[t]))
            /\ UNCHANGED lk
    /\ UNCHANGED <<mem, head, ring, sts, lidx, crashes, hist, Ghosts>>

\* L9-L11: _tail <- _comb.head; if _curC = curComb, readFunc() on the
\* replica (one step: the shared lock keeps it still); else unlock, retry.
A9(t) ==
    /\ th[t].pc = "A9"
    /\ LET c == th[t].comb IN
       IF th[t].curC = CurComb
       THEN /\ SetTh(t, [th[t] EXCEPT !.tail = head[c], !.res = ResultOf(Op(t), Content(mem, c)), !.pc = "A12"])
            /\ UNCHANGED lk
       ELSE /\ lk' = [lk EXCEPT ![c].sh = @ \ {t}]
            /\ SetTh(t, NextTry(th[t]))
    /\ UNCHANGED <<mem, head, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* L12-L14: sharedUnlock; _ringtail <- ring[_tail.seq % RSIZE]; if its seq
\* is below _tail's, L15-L16, else return _ret (L17, merged), which
\* reflects the state of seq _curC.seq.
A12(t) ==
    /\ th[t].pc = "A12"
    /\ lk' = [lk EXCEPT ![th[t].comb].sh = @ \ {t}]
    /\ IF ring[th[t].tail.seq % RSIZE].seq < th[t].tail.seq
       THEN SetTh(t, [th[t] EXCEPT !.pc = "A15"]) /\ UNCHANGED <<hist, ret, oseq, bad>>
       ELSE Return(t, th[t].res, th[t].curC.seq + 1)
    /\ UNCHANGED <<mem, head, ring, sts, lidx, ann, req, crashes, sig, ncom, exp>>

\* L15-L16: pwb(curComb); psync().
A15(t) ==
    /\ th[t].pc = "A15"
    /\ mem' = Fence(PwbC(mem, t), t)
    /\ SetTh(t, [AfterPsync(th[t]) EXCEPT !.pc = "A17"])
    /\ UNCHANGED <<head, lk, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* L17: return _ret.
A17(t) ==
    /\ th[t].pc = "A17"
    /\ Return(t, th[t].res, th[t].curC.seq + 1)
    /\ UNCHANGED <<mem, head, lk, ring, sts, lidx, ann, req, crashes, sig, ncom, exp>>

\* L19-L21: _curC <- curComb; pwb(curComb); psync().
A19(t) ==
    /\ th[t].pc = "A19"
    /\ mem' = Fence(PwbC(mem, t), t)
    /\ SetTh(t, [AfterPsync(th[t]) EXCEPT !.curC = CurComb, !.pc = "A22"])
    /\ UNCHANGED <<head, lk, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* L22-L27: return the State's results[tid] (as L46-L50).
A22(t) ==
    /\ th[t].pc = "A22"
    /\ Return(t, ResultAt(t, th[t].curC), 0)
    /\ UNCHANGED <<mem, head, lk, ring, sts, lidx, ann, req, crashes, sig, ncom, exp>>

-----------------------------------------------------------------------------
(* Crash and null recovery.                                                *)

CcImg == CcImages(mem)
RepImg(c) == ReplicaImages(mem, c)

\* A full-system crash: curComb keeps any prefix of its line's stores (at
\* least its mark), so does each line of the replica it designates; DRAM is
\* lost.  Null recovery (see the header): curComb's replica's head is a
\* fresh State at its seq (announce and applied all 0), the other replicas
\* are invalid, the ring holds that head, the locks are free but curComb's
\* (read-locked, as the published code's setReadLock).  Transactions in
\* flight are cut off; their threads go on with their next one.
CrashEnabled == crashes < MaxCrashes /\ \E t \in Threads : th[t].pc # "Idle" \/ th[t].i < NOps
\* CrashInto: the crash that keeps curComb cv and leaves the memory m (a
\* trace's Crash: every replica as its image says).
CrashInto(cv, m) ==
    /\ mem' = m
    /\ head' = [c \in Combs |-> IF c = cv.idx THEN Tk(cv.seq, 0, 0) ELSE Invalid]
    /\ lk' = [c \in Combs |-> [ex |-> 0, sh |-> {}, dg |-> c = cv.idx]]
    /\ ring' = [k \in Slots |-> IF k = cv.seq % RSIZE THEN Tk(cv.seq, 0, 0) ELSE Tk0]
    /\ sts' = [t \in Threads |-> [j \in Slots |-> Fresh]]
    /\ lidx' = [t \in Threads |-> 0]
    /\ ann' = [t \in Threads |-> 0]
    /\ req' = [t \in Threads |-> [n |-> 0, i |-> 0]]
    /\ th' = [t \in Threads |-> Idle(th[t].i)]
    /\ crashes' = crashes + 1
    /\ hist' = Append(hist, EvCrash)
    /\ UNCHANGED Ghosts
\* The crash that keeps curComb cv and content x of the replica it names,
\* the others zeroed (MemAfterCrash); Crash: some allowed cv and x.
CrashTo(cv, x) == CrashInto(cv, MemAfterCrash(mem, cv, x))
Crash == CrashEnabled /\ \E cv \in CcImg : \E x \in RepImg(cv.idx) : CrashTo(cv, x)

-----------------------------------------------------------------------------
Step(t) ==
    \/ Invoke(t)
    \/ U8(t) \/ U13(t) \/ U17(t) \/ U18(t) \/ R1(t) \/ M1(t) \/ M2(t) \/ M3(t)
    \/ U20(t) \/ U26(t) \/ U30(t) \/ U30F(t) \/ U31(t) \/ U32(t) \/ U34(t) \/ U36(t)
    \/ U38(t) \/ U40(t) \/ U46(t)
    \/ A2(t) \/ A9(t) \/ A12(t) \/ A15(t) \/ A17(t) \/ A19(t) \/ A22(t)

Next == (\E t \in Threads : Step(t)) \/ Crash

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* A CAS that is no fence.  The model above treats every locked RMW as a   *)
(* fence (x86: a locked instruction completes the thread's write-backs);   *)
(* the Sim backend's default does not, and perdure issues an explicit      *)
(* pfence before the curComb CAS (redo/update.rs, fence_before_cas).       *)
(* SpecSimCas refines L30 into that pfence (U29) and a CAS that is no      *)
(* fence (U30With(t, FALSE)): the coarse U30 is the two with no step of    *)
(* another thread between them, and U29 only completes t's own pending     *)
(* pwbs, which no other thread's step reads or adds to before t's CAS (it  *)
(* moves right past them), so SpecSimCas has the behaviours of Spec up to  *)
(* that reordering and must keep its invariants (RedoPTM_SimCas.cfg checks *)
(* them).  The other locked RMWs the model uses as fences (L17's and L35's *)
(* ring CAS, each after its pwb(curComb)) keep their merged fence: perdure *)
(* issues pwb(cur_comb) and psync there, the same memory step.             *)
(* SpecSimCasNoFence drops U29: the mutant perdure's redo-no-fence-before-  *)
(* cas is (mutants/RedoSimNoFenceBeforeCas.cfg).                           *)

\* The pfence before the CAS: t's pending pwbs take effect.
U29(t) ==
    /\ th[t].pc = "U29"
    /\ mem' = Fence(mem, t)
    /\ SetTh(t, [AfterRMW(th[t]) EXCEPT !.pc = "U30"])
    /\ UNCHANGED <<head, lk, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

StepSim(t, fence) ==
    \/ Invoke(t)
    \/ U8(t) \/ U13(t) \/ U17(t) \/ U18(t) \/ R1(t) \/ M1(t) \/ M2(t) \/ M3(t)
    \/ U20(t) \/ U26Then(t, IF fence THEN "U29" ELSE "U30") \/ U29(t) \/ U30With(t, FALSE)
    \/ U30F(t) \/ U31(t) \/ U32(t) \/ U34(t) \/ U36(t) \/ U38(t) \/ U40(t) \/ U46(t)
    \/ A2(t) \/ A9(t) \/ A12(t) \/ A15(t) \/ A17(t) \/ A19(t) \/ A22(t)

NextSimCas == (\E t \in Threads : StepSim(t, TRUE)) \/ Crash
SpecSimCas == Init /\ [][NextSimCas]_vars
SpecSimCasNoFence == Init /\ [][(\E t \in Threads : StepSim(t, FALSE)) \/ Crash]_vars

-----------------------------------------------------------------------------
(* Per-word stores and per-line pwbs.  The actions above store a whole     *)
(* batch of words in one step (U20's simulation, an applyRedologs entry    *)
(* R1, the copy M2, the undo U38) and issue the pwbs of several lines in  *)
(* one (U26's flushDeferredPWBs, M3's flush of the copy); the code makes  *)
(* one memory event of each word it stores and of each line it writes     *)
(* back (the Sim backend's Store and Pwb events).  SpecFine refines those *)
(* actions of SpecSimCas into that grain: the coarse action's first step   *)
(* does everything but the stores (or pwbs) and leaves them, in order, in *)
(* the thread's registers (pw: <<word, value>> pairs still to store into   *)
(* _c; pl: the words of _c whose lines are still to be written back; wnx:  *)
(* the pc after them); WS(t) stores the next word, PW(t) writes back any  *)
(* pending line, one memory event per step, and the                       *)
(* last one goes on at wnx.  No other thread writes _c meanwhile (it holds *)
(* _c exclusively, or, after U26, downgraded), and a pending pwb only      *)
(* matters at t's next fence, which comes after the loop, so the coarse    *)
(* action is the sequence of these steps with other threads' steps         *)
(* interleaved.  RedoPTM_Fine.cfg checks SpecFine with the invariants and  *)
(* the refinement of SpecSimCas (RedoPTMFine.tla: the pending stores and   *)
(* pwbs taken as done).  The fine steps leave the step and fence counters  *)
(* alone (a loop of them is the one coarse step the counters count).       *)
(* Not refined: U40's pwbs of _c's deferred lines (F4), which its psync   *)
(* follows in the same step.                                               *)

\* Go on with the stores ws into _c, then at pc nxt (r: the registers after
\* the coarse action's other effects).
Stores(r, ws, nxt) == IF ws = << >> THEN [r EXCEPT !.pc = nxt]
                      ELSE [r EXCEPT !.pw = ws, !.wnx = nxt, !.pc = "WS"]
Pwbs(r, ws, nxt) == IF ws = {} THEN [r EXCEPT !.pc = nxt]
                    ELSE [r EXCEPT !.pl = ws, !.wnx = nxt, !.pc = "PW"]

\* One store of the batch: the next word of _c.
WS(t) ==
    /\ th[t].pc = "WS"
    /\ LET wv == Head(th[t].pw) IN
       mem' = StoreR(mem, th[t].c, wv[1], wv[2])
    /\ th' = [th EXCEPT ![t] = IF Len(th[t].pw) = 1
                               THEN [@ EXCEPT !.pw = << >>, !.pc = th[t].wnx, !.wnx = "Idle"]
                               ELSE [@ EXCEPT !.pw = Tail(@)]]
    /\ UNCHANGED <<head, lk, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* The pwb of w's line (and so of every pending word on that line).
PWLine(t, w) ==
    /\ th[t].pc = "PW"
    /\ w \in th[t].pl
    /\ LET ln == LineWords({w})
       IN /\ mem' = PwbR(mem, t, th[t].c, {w})
          /\ th' = [th EXCEPT ![t] = IF th[t].pl \subseteq ln
                                     THEN [@ EXCEPT !.pl = {}, !.pc = th[t].wnx, !.wnx = "Idle"]
                                     ELSE [@ EXCEPT !.pl = @ \ ln]]
    /\ UNCHANGED <<head, lk, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* One pwb of the batch: any line still pending.  The code writes its lines
\* back in no particular order (a distinct set's insertion order, or a list
\* sorted to drop repeats); the pwbs of one batch commute, since only t's next
\* fence, after the batch, orders them (PtmBase's PwInOrder: a configuration
\* may fix one order).
PW(t) == IF PwInOrder THEN PWLine(t, PwNext(th[t].pl)) ELSE \E w \in th[t].pl : PWLine(t, w)

\* R1 with the entry's stores one per step.  replayPwb: the replayed words
\* join the lines the commit writes back (FALSE: RedoDB's RedoOpt, whose
\* copy_redolog stores the entries and records no line, where its Redo's
\* defers a pwb for each).
R1FineWith(t, replayPwb) ==
    /\ th[t].pc = "R1"
    /\ LET k == th[t].k
           c == th[t].c
       IN IF k > th[t].tail.seq
          THEN /\ head' = [head EXCEPT ![c] = th[t].tail]
               /\ SetTh(t, [th[t] EXCEPT !.k = 0, !.pc = "U20"])
          ELSE LET rt == ring[k % RSIZE]
                   st == StateOf(rt)
                   lg == SubSeq(st.log, 1, st.lsz)
                   ws == [e \in 1 .. Len(lg) |-> <<lg[e].a, lg[e].new>>]
               IN IF ValidityCheck /\ (rt.seq # k \/ (rt.tid # 0 /\ st.tkt # rt))
                  THEN SetTh(t, [th[t] EXCEPT !.k = 0, !.att = 0, !.pc = "M1"]) /\ UNCHANGED head
                  ELSE /\ SetTh(t, Stores([th[t] EXCEPT !.dp = IF replayPwb
                                                                THEN @ \cup {lg[e].a : e \in 1 .. Len(lg)}
                                                                ELSE @,
                                                        !.k = k + 1], ws, "R1"))
                       /\ UNCHANGED head
    /\ UNCHANGED <<mem, lk, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>
R1Fine(t) == R1FineWith(t, TRUE)

\* M2 with the copy's stores one per step (the source read at M2, as in M2).
M2Fine(t) ==
    /\ th[t].pc = "M2"
    /\ IF ~Open(StateOf(th[t].hd), t, ann[t])
       THEN SetTh(t, [th[t] EXCEPT !.att = 0, !.hd = Tk0, !.ccv = CV(0, 0), !.pc = "U40"])
       ELSE LET src == Content(mem, th[t].ccv.idx) IN
            SetTh(t, Stores(th[t], [w \in Words |-> <<w, src[w]>>], "M3"))
    /\ UNCHANGED <<mem, head, lk, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* M3 with the copy's pwbs one line per step.
M3Fine(t) ==
    /\ th[t].pc = "M3"
    /\ IF CurComb = th[t].ccv
       THEN /\ head' = [head EXCEPT ![th[t].c] = th[t].hd]
            /\ SetTh(t, Pwbs([th[t] EXCEPT !.pend = TRUE, !.att = 0, !.hd = Tk0, !.ccv = CV(0, 0)],
                             Words, "U20"))
       ELSE /\ SetTh(t, IF th[t].att = 0
                        THEN [th[t] EXCEPT !.att = 1, !.hd = Tk0, !.ccv = CV(0, 0), !.pc = "M1"]
                        ELSE [th[t] EXCEPT !.att = 0, !.hd = Tk0, !.ccv = CV(0, 0), !.pc = "U40"])
            /\ UNCHANGED head
    /\ UNCHANGED <<mem, lk, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* U20 with the simulation's stores one per step.
U20Fine(t) ==
    /\ th[t].pc = "U20"
    /\ LET j == lidx[t]
           sim == Simulate(ThreadSeq, Content(mem, th[t].c), sts[t][j],
                           [stores |-> << >>, gops |-> << >>, dp |-> {}])
       IN /\ sts' = [sts EXCEPT ![t][j] = sim.st]
          /\ SetTh(t, Stores([th[t] EXCEPT !.dp = @ \cup sim.acc.dp, !.gops = sim.acc.gops],
                             sim.acc.stores, "U26"))
    /\ UNCHANGED <<mem, head, lk, ring, lidx, ann, req, crashes, hist, Ghosts>>

\* U26 (L26-L29) with flushDeferredPWBs one line per step, then U29 (the
\* mutant FlushBeforeCas = FALSE keeps them for U30F, as U26 does).
U26Fine(t) ==
    /\ th[t].pc = "U26"
    /\ LET c == th[t].c IN
       /\ mem' = PwbC(mem, t)
       /\ head' = [head EXCEPT ![c] = th[t].tkt]
       /\ sts' = [sts EXCEPT ![t][lidx[t]].lsz = Len(sts[t][lidx[t]].log)]
       /\ lk' = [lk EXCEPT ![c] = [ex |-> 0, sh |-> lk[c].sh, dg |-> TRUE]]
       /\ SetTh(t, IF FlushBeforeCas
                   THEN Pwbs([th[t] EXCEPT !.pend = TRUE, !.dp = {}], th[t].dp, "U29")
                   ELSE [th[t] EXCEPT !.pend = TRUE, !.pc = "U29"])
    /\ UNCHANGED <<ring, lidx, ann, req, crashes, hist, Ghosts>>

\* U38 with the undo's stores one per step (with F4, which keeps _c: the
\* undo's target stays held).
U38Fine(t) ==
    /\ th[t].pc = "U38"
    /\ UndoFlush
    /\ LET c == th[t].c
           lg == NewSt(t).log
           undo == [e \in 1 .. Len(lg) |-> <<lg[Len(lg) + 1 - e].a, lg[Len(lg) + 1 - e].old>>]
           nx == [NextIter(th[t]) EXCEPT !.dp = @ \cup {lg[e].a : e \in 1 .. Len(lg)}]
       IN /\ head' = [head EXCEPT ![c] = th[t].tail]
          /\ SetTh(t, Stores(nx, IF UndoOnFail THEN undo ELSE << >>, nx.pc))
    /\ UNCHANGED <<mem, lk, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

StepFine(t) ==
    \/ Invoke(t)
    \/ U8(t) \/ U13(t) \/ U17(t) \/ U18(t) \/ R1Fine(t) \/ M1(t) \/ M2Fine(t) \/ M3Fine(t)
    \/ U20Fine(t) \/ U26Fine(t) \/ WS(t) \/ PW(t) \/ U29(t) \/ U30With(t, FALSE)
    \/ U30F(t) \/ U31(t) \/ U32(t) \/ U34(t) \/ U36(t) \/ U38Fine(t) \/ U40(t) \/ U46(t)
    \/ A2(t) \/ A9(t) \/ A12(t) \/ A15(t) \/ A17(t) \/ A19(t) \/ A22(t)

NextFine == (\E t \in Threads : StepFine(t)) \/ Crash
SpecFine == Init /\ [][NextFine]_vars

-----------------------------------------------------------------------------
(* perdure's steps (impl/perdure-ptm/src/redo/update.rs, read.rs,         *)
(* core.rs), where they are not the seed's, at the grain of the code's     *)
(* events: traces/ptm/redo/RedoPTMTrace.tla replays every event of the    *)
(* implementation's traces as one of these actions.  SpecPerdure is        *)
(* SpecFine with these:                                                    *)
(*   * step {2} as the code orders it: curComb read, with the exit "two    *)
(*     transitions since the announcement" (U7 reads curComb once after    *)
(*     it) (U8C); the designated replica's head read apart, a head that    *)
(*     is invalid or of another seq giving up the iteration (U9C); then    *)
(*     the State copied at U9C has the request applied: make curComb      *)
(*     durable, release the replica if held, return that State's result   *)
(*     (U13C, UA, UR);                                                     *)
(*   * the helper's ring CAS (L17) persists nothing: no pwb(curComb), no   *)
(*     fence (U17P; F1 is fixed by the committer's own psync, UP1-UP2);    *)
(*   * {5}: any free replica but the designated one (lock_any tries them   *)
(*     in order, and one busy at its try may be free by the end: the spec *)
(*     lets the strong trylock give any free one) (U18C); no free one:     *)
(*     give up; RedoTimed-PTM's lock_combined also gives up once curComb   *)
(*     moved (U18G); the dirty lines earlier holders left on the replica  *)
(*     are taken with it (take_dirty / put_dirty) and flushed at its L26; *)
(*   * {6} bring_up_to_date (U19C): a replica at _tail is used as it is,  *)
(*     one ahead of _tail gives up the iteration (kept), one behind is    *)
(*     replayed (R1, with the seed's validity checks), else copied: the   *)
(*     copy takes the source's shared lock and checks curComb and its head *)
(*     before it copies, not after (M1C), gives up the iteration if they  *)
(*     moved, and the copy's lines join the deferred pwbs (M3C: the seed  *)
(*     writes them back right after the copy);                            *)
(*   * {7} the simulation one request at a time (U20C marks _c invalid,   *)
(*     U21C runs the next open request, U23C records its result): the     *)
(*     code re-reads curComb before each request and abandons the attempt *)
(*     (rolls back, U38) when it moved;                                    *)
(*   * curComb re-read before L26: moved, no CAS, roll back at once, no L27 *)
(*     pwb(curComb) (U26P);                                                *)
(*   * after a successful CAS: pwb(cur_comb) (UP1), psync (UP2), the       *)
(*     superseded replica's release (U31P), then the ring: its slot takes  *)
(*     the ticket if it holds an older one (U32P; read and CAS in one      *)
(*     step, a CAS on DRAM, no fence), then L36 (the seed with F2: the     *)
(*     ring CAS, a locked RMW, is the fence that persists curComb, and it  *)
(*     is skipped when a helper appended the ticket first);                *)
(*   * giving up (L40-L50): release _c if held, leaving its dirty lines on *)
(*     it (U40C), then collect: the result from the State curComb's head  *)
(*     (or the ring) names, once durable (U43C, U46C); a State that does  *)
(*     not show the request applied yet sends the thread back to a new    *)
(*     pair of attempts (apply_update's loop; the seed has none);         *)
(*   * ensure_durable(s) (ED1, ED2): pwb(cur_comb), psync -- or nothing   *)
(*     when the durability watermark already shows seq s durable; the     *)
(*     watermark is volatile and only raised to a seq a psync made         *)
(*     durable, so the spec may skip whenever the persisted curComb is at *)
(*     s or later (a superset of the code's skips); a direct read makes    *)
(*     curComb durable this way after it, whatever the ring says (A12C).   *)
(* RedoPTM_Perdure.cfg and RedoPTM_PerdureHistory.cfg check it with the    *)
(* invariants (the second with reads and the history).  Not modelled      *)
(* here: a published read's own loop (Algorithm 2's published read is the *)
(* seed's, A2-A22), RedoTimed's restricted choice and backoff.  RedoOpt's  *)
(* steps are SpecPerdureOpt's (below).                                     *)

\* The registers after curComb moved under an attempt, as the code's
\* `continue`; the replica, if held, is kept.
U26P(t) ==
    /\ th[t].pc = "U26"
    /\ LET c == th[t].c IN
       IF CurComb # th[t].curC
       THEN SetTh(t, [th[t] EXCEPT !.pc = "U38"]) /\ UNCHANGED <<head, sts, lk>>
       ELSE /\ head' = [head EXCEPT ![c] = th[t].tkt]
            /\ sts' = [sts EXCEPT ![t][lidx[t]].lsz = Len(sts[t][lidx[t]].log)]
            /\ lk' = [lk EXCEPT ![c] = [ex |-> 0, sh |-> lk[c].sh, dg |-> TRUE]]
            /\ SetTh(t, Pwbs([th[t] EXCEPT !.pend = TRUE, !.dp = {}], th[t].dp, "U29"))
    /\ UNCHANGED <<mem, ring, lidx, ann, req, crashes, hist, Ghosts>>

\* Invoke, an update going to U7 (perdure reads curComb once after the
\* announcement: `init`).
InvokeP(t) ==
    /\ th[t].pc = "Idle" /\ th[t].i < NOps
    /\ LET i == th[t].i + 1
           o == WorkOf(t, i)
       IN /\ hist' = Append(hist, EvInvoke(Id(t, i), t, o.op, ArgsOf(o)))
          /\ IF IsRead(o)
             THEN /\ th' = [th EXCEPT ![t] = [Idle(i) EXCEPT !.pc = "A2", !.ns = 1]]
                  /\ UNCHANGED <<req, ann>>
             ELSE /\ th' = [th EXCEPT ![t] = [Idle(i) EXCEPT !.pc = "U7", !.ns = 1]]
                  /\ Publish(t, i)
    /\ UNCHANGED <<mem, head, lk, ring, sts, lidx, crashes, Ghosts>>

U7(t) ==
    /\ th[t].pc = "U7"
    /\ SetTh(t, [th[t] EXCEPT !.init = CurComb.seq, !.pc = "U8"])
    /\ UNCHANGED <<mem, head, lk, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* ensure_durable(s), then pc nxt.  The continuation is kept in wnx (no
\* store or pwb loop is in progress here).
EnsureDurable(r, s, nxt) == [r EXCEPT !.ds = s, !.wnx = nxt, !.pc = "ED1"]

\* The watermark shows s durable (the spec: the persisted curComb is at s or
\* later; it may also sync then): nothing; else pwb(cur_comb).
ED1(t) ==
    /\ th[t].pc = "ED1"
    /\ \/ /\ DurableSeq >= th[t].ds
          /\ SetTh(t, [th[t] EXCEPT !.ds = 0, !.pc = th[t].wnx, !.wnx = "Idle"])
          /\ UNCHANGED mem
       \/ /\ mem' = PwbC(mem, t)
          /\ SetTh(t, [th[t] EXCEPT !.pend = TRUE, !.pc = "ED2"])
    /\ UNCHANGED <<head, lk, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* psync.
ED2(t) ==
    /\ th[t].pc = "ED2"
    /\ mem' = Fence(mem, t)
    /\ SetTh(t, [AfterPsync(th[t]) EXCEPT !.ds = 0, !.pc = th[t].wnx, !.wnx = "Idle"])
    /\ UNCHANGED <<head, lk, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* {2}: cur <- curComb; two transitions since the announcement: give up
\* (the request is applied; collect its result).
U8C(t) ==
    /\ th[t].pc = "U8"
    /\ LET cc == CurComb IN
       SetTh(t, IF cc.seq >= th[t].init + 2 THEN [th[t] EXCEPT !.pc = "U40"]
                ELSE [th[t] EXCEPT !.curC = cc, !.comb = cc.idx, !.pc = "U9"])
    /\ UNCHANGED <<mem, head, lk, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* {2}-{3}: tail <- combs[cur.idx].head (a replica already reused: next
\* iteration); _newSt takes the ticket and that State's applied[] and
\* results[], an empty log (as U8).
U9C(t) ==
    /\ th[t].pc = "U9"
    /\ LET tl == head[th[t].comb] IN
       IF tl = Invalid \/ tl.seq # th[t].curC.seq
       THEN SetTh(t, NextIter(th[t])) /\ UNCHANGED sts
       ELSE LET src == StateOf(tl)
                tkt == Tk(tl.seq + 1, t, lidx[t])
            IN /\ sts' = [sts EXCEPT ![t][lidx[t]] = [tkt |-> tkt, applied |-> src.applied,
                                                      results |-> src.results, log |-> << >>, lsz |-> 0]]
               /\ SetTh(t, [th[t] EXCEPT !.tail = tl, !.tkt = tkt, !.pc = "U13"])
    /\ UNCHANGED <<mem, head, lk, ring, lidx, ann, req, crashes, hist, Ghosts>>

\* The copy validated by curComb (L13); the copied State has the request
\* applied: durable, then return its result (UA, UR); {4}: the ring (L14-L17).
U13C(t) ==
    /\ th[t].pc = "U13"
    /\ LET tl == th[t].tail
           rt == ring[tl.seq % RSIZE]
       IN SetTh(t, CASE th[t].curC # CurComb -> NextIter(th[t])
                     [] ~Open(NewSt(t), t, ann[t]) -> EnsureDurable(th[t], th[t].curC.seq, "UA")
                     [] rt = tl -> [th[t] EXCEPT !.pc = "U18"]
                     [] rt.seq > tl.seq -> NextIter(th[t])
                     [] OTHER -> [th[t] EXCEPT !.rt = rt, !.pc = "U17"])
    /\ UNCHANGED <<mem, head, lk, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* L17 as perdure's step {4}: the helper's ring CAS, with no pwb(curComb)
\* before it and no fence (the ring is DRAM: perdure's committer persists
\* curComb itself, UP1-UP2, and its reads do not trust the ring).
U17P(t) ==
    /\ th[t].pc = "U17"
    /\ LET tl == th[t].tail
           sl == tl.seq % RSIZE
       IN /\ ring' = IF ring[sl] = th[t].rt THEN [ring EXCEPT ![sl] = tl] ELSE ring
          /\ SetTh(t, [th[t] EXCEPT !.rt = Tk0, !.pc = "U18"])
    /\ UNCHANGED <<mem, head, lk, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* The lines a replica's holders left dirty stay with the replica (perdure's
\* take_dirty / put_dirty): a release leaves them on the Combined (a "dirty"
\* field of its lock record); the next holder takes them into its own,
\* flushed at its L26.
Dirty(c) == IF "dirty" \in DOMAIN lk[c] THEN lk[c].dirty ELSE {}
Release(t) ==
    LET c == th[t].c IN
    lk' = IF c # -1 THEN [lk EXCEPT ![c] = [ex |-> 0, sh |-> lk[c].sh, dg |-> FALSE,
                                            dirty |-> th[t].dp]] ELSE lk

\* {5}: a replica held from the previous iteration is kept; else the strong
\* trylock gives any free replica but the designated one (none: give up).
U18C(t) ==
    /\ th[t].pc = "U18"
    /\ IF th[t].c # -1
       THEN SetTh(t, [th[t] EXCEPT !.pc = "U19"]) /\ UNCHANGED lk
       ELSE LET free == {c \in Combs \ {th[t].curC.idx} : lk[c].ex = 0 /\ lk[c].sh = {} /\ ~lk[c].dg} IN
            IF free = {} THEN SetTh(t, [th[t] EXCEPT !.pc = "U40"]) /\ UNCHANGED lk
            ELSE \E c \in free :
                 /\ lk' = [lk EXCEPT ![c] = [ex |-> t, sh |-> @.sh, dg |-> @.dg]]
                 /\ SetTh(t, [th[t] EXCEPT !.c = c, !.dp = @ \cup Dirty(c), !.pc = "U19"])
    /\ UNCHANGED <<mem, head, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* RedoTimed-PTM's {5} (lock_combined): while its window is open it tries
\* only combs[0] and combs[1] (a choice among the free ones: U18C's), backs
\* off while they are taken, and gives the attempt up once curComb has moved
\* from the one the attempt read (U18G).  Redo-PTM's lock_any never takes
\* U18G; the spec allows it to every variant.
U18G(t) ==
    /\ th[t].pc = "U18" /\ th[t].c = -1
    /\ CurComb # th[t].curC
    /\ SetTh(t, [th[t] EXCEPT !.pc = "U40"])
    /\ UNCHANGED <<mem, head, lk, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* {6} bring_up_to_date: at _tail already: simulate; ahead of _tail (it was
\* designated after this attempt read curComb, then released): give up the
\* iteration, keeping it; else mark it invalid, replay the redo logs from
\* its head (R1) if it is behind, else copy (M1C).
U19C(t) ==
    /\ th[t].pc = "U19"
    /\ LET c == th[t].c
           h == head[c]
           tl == th[t].tail
       IN IF h = tl THEN SetTh(t, [th[t] EXCEPT !.pc = "U20"]) /\ UNCHANGED head
          ELSE IF h # Invalid /\ h.seq > tl.seq THEN SetTh(t, NextIter(th[t])) /\ UNCHANGED head
          ELSE /\ head' = [head EXCEPT ![c] = Invalid]
               /\ SetTh(t, IF h # Invalid /\ h.seq < tl.seq
                           THEN [th[t] EXCEPT !.k = h.seq + 1, !.pc = "R1"]
                           ELSE [th[t] EXCEPT !.att = 0, !.pc = "M1"])
    /\ UNCHANGED <<mem, lk, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* copy_designated: the source (curComb's replica as this attempt read it)
\* under a shared lock, curComb and its head checked first; then every word
\* of its used prefix (PtmBase's CopyOf: replica.rs used_len; the stores one
\* per step, WS).  Checks failed: give up the iteration.
M1C(t) ==
    /\ th[t].pc = "M1"
    /\ LET s == th[t].curC.idx IN
       IF lk[s].ex = 0 /\ CurComb = th[t].curC /\ head[s] = th[t].tail
       THEN /\ lk' = [lk EXCEPT ![s].sh = @ \cup {t}]
            /\ SetTh(t, Stores(th[t], CopyOf(Content(mem, s)), "M3"))
       ELSE /\ SetTh(t, NextIter(th[t])) /\ UNCHANGED lk
    /\ UNCHANGED <<mem, head, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* The copy done: the source's shared lock released, _c.head <- _tail, the
\* copied lines in the deferred pwbs.
M3C(t) ==
    /\ th[t].pc = "M3"
    /\ lk' = [lk EXCEPT ![th[t].curC.idx].sh = @ \ {t}]
    /\ head' = [head EXCEPT ![th[t].c] = th[t].tail]
    /\ SetTh(t, [th[t] EXCEPT !.dp = @ \cup Used(Content(mem, th[t].c)), !.pc = "U20"])
    /\ UNCHANGED <<mem, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* {7}: _c.head <- invalid; the simulation visits the threads in order (k).
U20C(t) ==
    /\ th[t].pc = "U20"
    /\ head' = [head EXCEPT ![th[t].c] = Invalid]
    /\ SetTh(t, [th[t] EXCEPT !.k = 1, !.pc = "U21"])
    /\ UNCHANGED <<mem, lk, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* L21-L23 for thread k: its request open in _newSt: curComb re-read
\* (moved: abandon, roll back), then the request runs on _c: its log
\* entries, then its stores one per step (WS), its result kept for U23C.
\* Past the last thread: L26.
U21C(t) ==
    /\ th[t].pc = "U21"
    /\ LET u == th[t].k
           j == lidx[t]
       IN IF u > N THEN SetTh(t, [th[t] EXCEPT !.k = 0, !.pc = "U26"]) /\ UNCHANGED sts
          ELSE LET a == IF RequestSeq THEN req[u].n ELSE ann[u] IN
          IF ~Open(sts[t][j], u, a) \/ req[u].i = 0
          THEN SetTh(t, [th[t] EXCEPT !.k = u + 1]) /\ UNCHANGED sts
          ELSE IF CurComb # th[t].curC
          THEN SetTh(t, [th[t] EXCEPT !.k = 0, !.pc = "U38"]) /\ UNCHANGED sts
          ELSE LET o == WorkOf(u, req[u].i)
                   x == Content(mem, th[t].c)
                   ws == StoresOf(o, x)
               IN /\ sts' = [sts EXCEPT ![t][j].log = @ \o LogOf(x, ws)]
                  /\ SetTh(t, Stores([th[t] EXCEPT !.res = ResultOf(o, x), !.rq = [n |-> a, i |-> req[u].i],
                                                   !.dp = @ \cup {ws[q][1] : q \in DOMAIN ws}],
                                     ws, "U23"))
    /\ UNCHANGED <<mem, head, lk, ring, lidx, ann, req, crashes, hist, Ghosts>>

\* L24: the request's result and number recorded in _newSt; it joins the
\* requests this attempt would commit (gops); next thread.  The request is
\* the one U21C read (rq): its thread may have published its next one since
\* (it returned meanwhile: another thread committed this one).
U23C(t) ==
    /\ th[t].pc = "U23"
    /\ LET u == th[t].k
           j == lidx[t]
       IN /\ sts' = [sts EXCEPT ![t][j].results[u] = th[t].res,
                                ![t][j].applied[u] = IF RequestSeq THEN th[t].rq.n ELSE Flip(@)]
          /\ SetTh(t, [th[t] EXCEPT !.gops = Append(@, <<u, th[t].rq.i>>), !.res = 0, !.k = u + 1,
                                    !.rq = [n |-> 0, i |-> 0], !.pc = "U21"])
    /\ UNCHANGED <<mem, head, lk, ring, lidx, ann, req, crashes, hist, Ghosts>>

U30P(t) ==
    /\ th[t].pc = "U30"
    /\ LET tk == th[t].tkt IN
       IF CurComb = th[t].curC
       THEN /\ Commit(mem, CV(tk.seq, th[t].c), tk.seq - 1, th[t].gops)
            /\ SetTh(t, [th[t] EXCEPT !.gops = << >>, !.curC = CV(0, 0), !.tail = Tk0, !.pc = "UP1"])
       ELSE /\ SetTh(t, [th[t] EXCEPT !.pc = "U38"])
            /\ UNCHANGED <<mem, sig, ncom, oseq, exp>>
    /\ UNCHANGED <<head, lk, ring, sts, lidx, ann, req, crashes, hist, ret, bad>>

\* (ReturnPersist = FALSE, the mutant perdure's redo-no-sync-after-cas is:
\* neither step.)
UP1(t) ==
    /\ th[t].pc = "UP1"
    /\ mem' = IF ReturnPersist THEN PwbC(mem, t) ELSE mem
    /\ SetTh(t, IF ReturnPersist THEN [th[t] EXCEPT !.pend = TRUE, !.pc = "UP2"]
                ELSE [th[t] EXCEPT !.pc = "U31P"])
    /\ UNCHANGED <<head, lk, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

UP2(t) ==
    /\ th[t].pc = "UP2"
    /\ mem' = Fence(mem, t)
    /\ SetTh(t, [AfterPsync(th[t]) EXCEPT !.pc = "U31P"])
    /\ UNCHANGED <<head, lk, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

U31P(t) ==
    /\ th[t].pc = "U31P"
    /\ lk' = [lk EXCEPT ![th[t].comb].dg = FALSE]
    /\ SetTh(t, [th[t] EXCEPT !.pc = "U32P"])
    /\ UNCHANGED <<mem, head, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

U32P(t) ==
    /\ th[t].pc = "U32P"
    /\ LET sl == th[t].tkt.seq % RSIZE IN
       ring' = IF ring[sl].seq < th[t].tkt.seq THEN [ring EXCEPT ![sl] = th[t].tkt] ELSE ring
    /\ Finish36(t)
    /\ UNCHANGED <<mem, head, lk, sts, ann, req, crashes, sig, ncom, exp>>

\* The Applied exit, after ensure_durable: L41, release _c if held (its
\* dirty lines left on it); then return the copied State's result.
UA(t) ==
    /\ th[t].pc = "UA"
    /\ Release(t)
    /\ SetTh(t, [th[t] EXCEPT !.c = -1, !.dp = {}, !.pc = "UR"])
    /\ UNCHANGED <<mem, head, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

UR(t) ==
    /\ th[t].pc = "UR"
    /\ Return(t, NewSt(t).results[t], 0)
    /\ UNCHANGED <<mem, head, lk, ring, sts, lidx, ann, req, crashes, sig, ncom, exp>>

\* Giving up (L40-L41): release _c if held, then collect.
U40C(t) ==
    /\ th[t].pc = "U40"
    /\ Release(t)
    /\ SetTh(t, [th[t] EXCEPT !.c = -1, !.dp = {}, !.gops = << >>, !.pc = "U43"])
    /\ UNCHANGED <<mem, head, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* collect (L43-L50): curComb; the State its replica's head names, or the
\* ring's if that head is of another seq; it shows the request applied:
\* its result, once that seq is durable; else a new pair of attempts.
U43C(t) ==
    /\ th[t].pc = "U43"
    /\ LET cc == CurComb
           h == head[cc.idx]
           tl == IF h = Invalid \/ h.seq # cc.seq THEN ring[cc.seq % RSIZE] ELSE h
           st == StateOf(tl)
       IN SetTh(t, IF tl.seq < cc.seq \/ Open(st, t, ann[t])
                   THEN [Fresh8(th[t]) EXCEPT !.iter = 0, !.pc = "U8"]
                   ELSE EnsureDurable([th[t] EXCEPT !.res = st.results[t]], tl.seq, "U46"))
    /\ UNCHANGED <<mem, head, lk, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

U46C(t) ==
    /\ th[t].pc = "U46"
    /\ Return(t, th[t].res, 0)
    /\ UNCHANGED <<mem, head, lk, ring, sts, lidx, ann, req, crashes, sig, ncom, exp>>

\* A12 as perdure's direct read (try_read_direct): after the read, unlock
\* and ensure_durable (then A17 returns).
A12C(t) ==
    /\ th[t].pc = "A12"
    /\ lk' = [lk EXCEPT ![th[t].comb].sh = @ \ {t}]
    /\ SetTh(t, EnsureDurable(th[t], th[t].curC.seq, "A17"))
    /\ UNCHANGED <<mem, head, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

StepPerdure(t) ==
    \/ InvokeP(t) \/ U7(t)
    \/ U8C(t) \/ U9C(t) \/ U13C(t) \/ U17P(t) \/ U18C(t) \/ U18G(t) \/ U19C(t) \/ R1Fine(t) \/ M1C(t) \/ M3C(t)
    \/ U20C(t) \/ U21C(t) \/ U23C(t) \/ U26P(t) \/ WS(t) \/ PW(t) \/ U29(t) \/ U30P(t)
    \/ UP1(t) \/ UP2(t) \/ U31P(t) \/ U32P(t) \/ U38Fine(t) \/ UA(t) \/ UR(t)
    \/ U40C(t) \/ U43C(t) \/ U46C(t) \/ ED1(t) \/ ED2(t)
    \/ A2(t) \/ A9(t) \/ A12C(t) \/ A17(t) \/ A19(t) \/ A22(t)

SpecPerdure == Init /\ [][(\E t \in Threads : StepPerdure(t)) \/ Crash]_vars

-----------------------------------------------------------------------------
(* RedoOpt-PTM (seed §5, "Additional optimizations", seed file lines      *)
(* 445-453: "Store aggregation", "Flush aggregation", "Copy using          *)
(* ntstore", "Postpone issuing pwbs"; perdure's impl/perdure-ptm/src/redo  *)
(* with Variant::Opt: tx.rs's Writer, state.rs's DirtyLines, variant.rs's  *)
(* copy_words and flush_dirty), at the grain of the code's events.         *)
(* SpecPerdureOpt is SpecPerdure with these:                               *)
(*   * store aggregation ("writing a single time the final value"): the    *)
(*     log of a simulation keeps one entry per word; a later store to a    *)
(*     logged word rewrites that entry's new value, its old value staying  *)
(*     the one before the first store (U21CO, MergeLog).  The replica is   *)
(*     still stored at every store of a request (WS); a replay (R1) stores *)
(*     each logged word once, an undo (U38) restores each word once;       *)
(*   * flush aggregation and the full-flush switch ("Postpone issuing      *)
(*     pwbs": "If the cache line list grows larger than 1/10 the size of   *)
(*     the object, then the Combined instance is marked to do a complete   *)
(*     flush"): L26 writes back each dirty line once (the deferred pwbs    *)
(*     are a set already), and, once more than OptFullAfter distinct lines *)
(*     are dirty, every used line of the replica instead (U26PO: the       *)
(*     lines of PtmBase's Used words, replica.rs used_len);                *)
(*   * the copy with ntstores ("Copy using ntstore": "during the copy of   *)
(*     an object in Algorithm 3"): M1CO stores each word with a            *)
(*     non-temporal store, one per step (NS), and M3CO adds no line to the *)
(*     deferred pwbs.  Px86 (../../shared/design/PX86.md): an ntstore      *)
(*     becomes visible and persisted together at some point before the     *)
(*     thread's next fence or locked RMW completes.  NS models it as the   *)
(*     store and a pwb of its line by the copier, pending until the        *)
(*     copier's next fence (PtmBase's Fence): before it a crash image may  *)
(*     hold the line's earlier value or the new one, after it the new one. *)
(*     (Visible at once: no other thread reads the replica before the      *)
(*     copier's pfence or its release.)  The copier's fences are           *)
(*     SpecPerdure's: the pfence before its CAS (U29), the psyncs of UP2   *)
(*     and ensure_durable (ED2), and, as Px86 has it for ntstores, the     *)
(*     locked RMW that releases the replica (exclusive_unlock's swap: UAO, *)
(*     U40CO), after which another thread may lock it and designate it     *)
(*     without a fence of the copier's.  Without that last one the spec    *)
(*     breaks DurableImageConsistent (SpecPerdureOptNtUnfenced,            *)
(*     mutants/RedoOptNtUnfencedRelease.cfg): where a locked RMW completes *)
(*     no write-back (Sim's default for pwbs), the copy would not be       *)
(*     ordered before another holder's CAS.                                *)
(* RedoPTM_PerdureOpt.cfg checks it with the invariants.                   *)

\* Distinct dirty lines beyond which the whole replica is written back (the
\* traced configuration's dirty_lines_per_replica, 1: the switch at the
\* second distinct line).
OptFullAfter == 1

\* Store aggregation: the log entries es merged into log lg (one entry per
\* word, in the order of each word's first store).
RECURSIVE MergeLog(_, _)
MergeLog(lg, es) ==
    IF es = << >> THEN lg
    ELSE LET e == Head(es)
             at == {p \in DOMAIN lg : lg[p].a = e.a}
         IN MergeLog(IF at = {} THEN Append(lg, e)
                     ELSE [lg EXCEPT ![CHOOSE p \in at : TRUE].new = e.new], Tail(es))

\* U21C with the request's log entries merged into the State's log.
U21CO(t) ==
    /\ th[t].pc = "U21"
    /\ LET u == th[t].k
           j == lidx[t]
       IN IF u > N THEN SetTh(t, [th[t] EXCEPT !.k = 0, !.pc = "U26"]) /\ UNCHANGED sts
          ELSE LET a == IF RequestSeq THEN req[u].n ELSE ann[u] IN
          IF ~Open(sts[t][j], u, a) \/ req[u].i = 0
          THEN SetTh(t, [th[t] EXCEPT !.k = u + 1]) /\ UNCHANGED sts
          ELSE IF CurComb # th[t].curC
          THEN SetTh(t, [th[t] EXCEPT !.k = 0, !.pc = "U38"]) /\ UNCHANGED sts
          ELSE LET o == WorkOf(u, req[u].i)
                   x == Content(mem, th[t].c)
                   ws == StoresOf(o, x)
               IN /\ sts' = [sts EXCEPT ![t][j].log = MergeLog(@, LogOf(x, ws))]
                  /\ SetTh(t, Stores([th[t] EXCEPT !.res = ResultOf(o, x), !.rq = [n |-> a, i |-> req[u].i],
                                                   !.dp = @ \cup {ws[q][1] : q \in DOMAIN ws}],
                                     ws, "U23"))
    /\ UNCHANGED <<mem, head, lk, ring, lidx, ann, req, crashes, hist, Ghosts>>

\* The lines L26 writes back: the dirty ones, or, past the switch, every
\* used line.  FlushShort: the mutant perdure's redo-opt-full-flush-short is
\* (the complete flush drops the tracked lines and writes back only the
\* first part of the replica: here its first word's line).
FlushSet(dp, short, x) ==
    IF Cardinality({LineOf(w) : w \in dp}) > OptFullAfter THEN (IF short THEN {1} ELSE Used(x)) ELSE dp

\* U26P with RedoOpt's flush.
U26POWith(t, short) ==
    /\ th[t].pc = "U26"
    /\ LET c == th[t].c IN
       IF CurComb # th[t].curC
       THEN SetTh(t, [th[t] EXCEPT !.pc = "U38"]) /\ UNCHANGED <<head, sts, lk>>
       ELSE /\ head' = [head EXCEPT ![c] = th[t].tkt]
            /\ sts' = [sts EXCEPT ![t][lidx[t]].lsz = Len(sts[t][lidx[t]].log)]
            /\ lk' = [lk EXCEPT ![c] = [ex |-> 0, sh |-> lk[c].sh, dg |-> TRUE]]
            /\ SetTh(t, Pwbs([th[t] EXCEPT !.pend = TRUE, !.dp = {}], FlushSet(th[t].dp, short, Content(mem, c)), "U29"))
    /\ UNCHANGED <<mem, ring, lidx, ann, req, crashes, hist, Ghosts>>
U26PO(t) == U26POWith(t, FALSE)

\* Go on with the non-temporal stores ws into _c, then at pc nxt.
NtStores(r, ws, nxt) == IF ws = << >> THEN [r EXCEPT !.pc = nxt]
                        ELSE [r EXCEPT !.pw = ws, !.wnx = nxt, !.pc = "NS"]

\* copy_designated with copy_words' non-temporal stores (as M1C otherwise).
M1CO(t) ==
    /\ th[t].pc = "M1"
    /\ LET s == th[t].curC.idx IN
       IF lk[s].ex = 0 /\ CurComb = th[t].curC /\ head[s] = th[t].tail
       THEN /\ lk' = [lk EXCEPT ![s].sh = @ \cup {t}]
            /\ SetTh(t, NtStores(th[t], CopyOf(Content(mem, s)), "M3"))
       ELSE /\ SetTh(t, NextIter(th[t])) /\ UNCHANGED lk
    /\ UNCHANGED <<mem, head, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* One non-temporal store of the copy: the next word of _c, visible, and
\* persisted by t's next fence (a store and a pwb of its line by t).
NS(t) ==
    /\ th[t].pc = "NS"
    /\ LET wv == Head(th[t].pw) IN
       mem' = PwbWords(StoreR(mem, th[t].c, wv[1], wv[2]), t, th[t].c, {wv[1]})
    /\ th' = [th EXCEPT ![t] = IF Len(th[t].pw) = 1
                               THEN [@ EXCEPT !.pw = << >>, !.pc = th[t].wnx, !.wnx = "Idle"]
                               ELSE [@ EXCEPT !.pw = Tail(@)]]
    /\ UNCHANGED <<head, lk, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* The copy done: as M3C, but the copied lines are not deferred pwbs (the
\* non-temporal stores need none).
M3CO(t) ==
    /\ th[t].pc = "M3"
    /\ lk' = [lk EXCEPT ![th[t].curC.idx].sh = @ \ {t}]
    /\ head' = [head EXCEPT ![th[t].c] = th[t].tail]
    /\ SetTh(t, [th[t] EXCEPT !.pc = "U20"])
    /\ UNCHANGED <<mem, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* UA and U40C with the release of _c a locked RMW (exclusive_unlock's swap):
\* Px86 completes t's pending non-temporal stores there.  t's other pending
\* pwbs at a release, if any, are of lines its own earlier fences could have
\* completed as well: after U29 and ED2 none are left; the only ones left
\* are a copy's.  (fenced = FALSE: the mutant, no completion.)
RelMem(t, fenced) == IF fenced /\ th[t].c # -1 THEN mem' = Fence(mem, t) ELSE UNCHANGED mem

UAOWith(t, fenced) ==
    /\ th[t].pc = "UA"
    /\ Release(t)
    /\ RelMem(t, fenced)
    /\ SetTh(t, [th[t] EXCEPT !.c = -1, !.dp = {}, !.pc = "UR"])
    /\ UNCHANGED <<head, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

U40COWith(t, fenced) ==
    /\ th[t].pc = "U40"
    /\ Release(t)
    /\ RelMem(t, fenced)
    /\ SetTh(t, [th[t] EXCEPT !.c = -1, !.dp = {}, !.gops = << >>, !.pc = "U43"])
    /\ UNCHANGED <<head, ring, sts, lidx, ann, req, crashes, hist, Ghosts>>

\* RedoOpt's steps; the mutant switches: short (the complete flush writes
\* back the first line only) and unfenced (the release completes no
\* non-temporal store).
StepPerdureOptWith(t, short, fenced, replayPwb) ==
    \/ InvokeP(t) \/ U7(t)
    \/ U8C(t) \/ U9C(t) \/ U13C(t) \/ U17P(t) \/ U18C(t) \/ U18G(t) \/ U19C(t) \/ R1FineWith(t, replayPwb)
    \/ M1CO(t) \/ NS(t) \/ M3CO(t)
    \/ U20C(t) \/ U21CO(t) \/ U23C(t) \/ U26POWith(t, short) \/ WS(t) \/ PW(t) \/ U29(t) \/ U30P(t)
    \/ UP1(t) \/ UP2(t) \/ U31P(t) \/ U32P(t) \/ U38Fine(t) \/ UAOWith(t, fenced) \/ UR(t)
    \/ U40COWith(t, fenced) \/ U43C(t) \/ U46C(t) \/ ED1(t) \/ ED2(t)
    \/ A2(t) \/ A9(t) \/ A12C(t) \/ A17(t) \/ A19(t) \/ A22(t)
StepPerdureOpt(t) == StepPerdureOptWith(t, FALSE, TRUE, TRUE)

SpecPerdureOpt == Init /\ [][(\E t \in Threads : StepPerdureOpt(t)) \/ Crash]_vars
SpecPerdureOptFullFlushShort ==
    Init /\ [][(\E t \in Threads : StepPerdureOptWith(t, TRUE, TRUE, TRUE)) \/ Crash]_vars
SpecPerdureOptNtUnfenced ==
    Init /\ [][(\E t \in Threads : StepPerdureOptWith(t, FALSE, FALSE, TRUE)) \/ Crash]_vars
SpecPerdureOptNoReplayPwb ==
    Init /\ [][(\E t \in Threads : StepPerdureOptWith(t, FALSE, TRUE, FALSE)) \/ Crash]_vars

-----------------------------------------------------------------------------
(* Properties.                                                             *)

Pcs == {"Idle", "U8", "U13", "U17", "U18", "R1", "M1", "M2", "M3",
        "U20", "U26", "U29", "WS", "PW", "UP1", "UP2", "U31P", "U32P", "U7", "U30", "U30F", "U31", "U32", "U34", "U36", "U38", "U40", "U46",
        "A2", "A9", "A12", "A15", "A17", "A19", "A22",
        "U9", "U19", "U21", "U23", "UA", "UR", "U43", "ED1", "ED2", "NS"}
Tickets == [seq : 0 .. MaxSeq, tid : 0 .. N, idx : Slots \cup {1}]

TypeOK ==
    /\ CurComb \in [seq : 0 .. MaxSeq, idx : Combs]
    /\ \A c \in Combs : head[c] \in Tickets /\ lk[c].ex \in 0 .. N /\ lk[c].sh \subseteq Threads
    /\ \A k \in Slots : ring[k] \in Tickets
    /\ \A t \in Threads :
         /\ th[t].pc \in Pcs /\ th[t].i \in 0 .. NOps /\ th[t].c \in Combs \cup {-1}
         /\ lidx[t] \in Slots
         /\ \A j \in Slots : sts[t][j].tkt \in Tickets
    /\ crashes \in 0 .. MaxCrashes

\* Herlihy's combining consensus commits every request at most once.
ExactlyOnce == \A t \in Threads : \A i \in 1 .. NOps : ncom[t][i] <= 1

\* The replica curComb designates holds the sequential state of its seq
\* (PtmBase's Holds: on that state's used prefix).
CurCombConsistent == Holds(Content(mem, CurComb.idx), sig[CurComb.seq])

\* Null recovery is correct: in every crash image, the replica the
\* persisted curComb designates holds the state committed with its seq
\* (PtmBase's Holds: on that state's used prefix).
\* (Checked word by word: every line has an image, so every x of the
\* product RepImg(cv.idx) is sig[cv.seq] iff each line's images are its
\* word of it; TLC then builds no product, which is exponential in the
\* words with stores pending: the queue's transactions store to a dozen.)
DurableImageConsistent ==
    \A cv \in CcImg : \A w \in Used(sig[cv.seq]) : LineImages(mem.r[<<cv.idx, w>>]) \subseteq {sig[cv.seq][w]}

\* A transaction that returned is in the persisted prefix: no crash image
\* loses it.
CompletedDurable ==
    \A t \in Threads : \A i \in 1 .. NOps : ret[t][i] => oseq[t][i] <= DurableSeq

\* Every transaction that returned returned the result of its place in the
\* commit order (updates and published reads: computed at their commit;
\* reads on a replica: that replica's state), and an update that returned
\* was committed.
ResultsCorrect == bad = {}

AllDone == \A t \in Threads : th[t].pc = "Idle" /\ th[t].i = NOps

\* Durable linearizability of the whole history (see the header for why
\* checking it at the end of every behaviour suffices).
HistoryDurablyLinearizable == AllDone => DL!DurablyLinearizable(hist)

\* No step waits for another thread: every thread in a transaction can move.
WaitFree == \A t \in Threads : th[t].pc # "Idle" => ENABLED Step(t)

-----------------------------------------------------------------------------
(* The same bounds as variant functions, checked on every transition at    *)
(* no cost in states (so a model may leave the counters out of its VIEW):  *)
(* StepRank(r) bounds the steps the transaction in registers r may still   *)
(* take, FenceRank(r) its fences.  Every step of a thread lowers StepRank  *)
(* by at least 1 and FenceRank by at least the fences the step executes,   *)
(* and an invocation starts at most at MaxSteps - 1 and MaxFences.  The     *)
(* ranks are worst cases read off the loops: Algorithm 3 runs at most two  *)
(* iterations, each at most MaxSeq + 19 steps (the applyRedologs loop runs *)
(* at most _tail.seq + 1 entries; two copy attempts of three steps), then  *)
(* L40-L50; Algorithm 2 at most MAX_READ_TRIES + 2 tries of two steps.     *)

IterMax == MaxSeq + 19
Later(r) == IF r.iter = 0 THEN IterMax + 2 ELSE 2
Tries(r) == MaxReadTries + 2 - r.ri

StepRank(r) ==
    CASE r.pc = "Idle" -> 0
      [] r.pc = "U8"   -> IterMax + Later(r)
      [] r.pc = "U13"  -> r.tail.seq + 18 + Later(r)
      [] r.pc = "U17"  -> r.tail.seq + 17 + Later(r)
      [] r.pc = "U18"  -> r.tail.seq + 16 + Later(r)
      [] r.pc = "R1"   -> (r.tail.seq + 2 - r.k) + 14 + Later(r)
      [] r.pc = "M1"   -> (2 - r.att) * 3 + 8 + Later(r)
      [] r.pc = "M2"   -> (2 - r.att) * 3 + 7 + Later(r)
      [] r.pc = "M3"   -> (2 - r.att) * 3 + 6 + Later(r)
      [] r.pc = "U20"  -> 8 + Later(r)
      [] r.pc = "U26"  -> 7 + Later(r)
      [] r.pc = "U30"  -> 6 + Later(r)
      [] r.pc = "U30F" -> 5
      [] r.pc = "U31"  -> IF PersistBeforeRelease THEN 1 ELSE 4
      [] r.pc = "U32"  -> 3
      [] r.pc = "U34"  -> 2
      [] r.pc = "U36"  -> 1
      [] r.pc = "U38"  -> 1 + Later(r)
      [] r.pc = "U40"  -> 2
      [] r.pc = "U46"  -> 1
      [] r.pc = "A2"   -> 2 * Tries(r) + 3
      [] r.pc = "A9"   -> 2 * Tries(r) + 2
      [] r.pc = "A12"  -> 3
      [] r.pc = "A15"  -> 2
      [] r.pc = "A17"  -> 1
      [] r.pc = "A19"  -> 2
      [] r.pc = "A22"  -> 1

\* The claimed bound on a transaction's steps (its invocation included).
MaxSteps == Max(2 * IterMax + 3, 2 * MaxReadTries + 8)

\* Fences a step from registers r executes (as AfterRMW / AfterPsync count).
FencesIn(r) ==
    CASE r.pc = "U17" -> IF HelperPwb \/ r.pend THEN 1 ELSE 0
      [] r.pc = "U30" -> IF r.pend THEN 1 ELSE 0
      [] r.pc = "U34" -> IF ReturnPersist \/ r.pend THEN 1 ELSE 0
      [] r.pc = "U40" -> IF ReturnPersist THEN 1 ELSE 0
      [] r.pc \in {"A15", "A19"} -> 1
      [] OTHER -> 0

F17 == IF HelperPwb THEN 1 ELSE 0                              \* L17's ring CAS
FSucc == IF ReturnPersist \/ ~FlushBeforeCas THEN 1 ELSE 0     \* L35's ring CAS
FFin == IF ReturnPersist THEN 1 ELSE 0                         \* L45's psync
FLater(r) == IF r.iter = 0 THEN F17 + 1 + Max(FSucc, FFin) ELSE FFin
FRest(r) == Max(FSucc, FLater(r))

FenceRank(r) ==
    CASE r.pc = "Idle" -> 0
      [] r.pc \in {"U8", "U13"} -> F17 + 1 + FRest(r)
      [] r.pc = "U17" -> (IF HelperPwb \/ r.pend THEN 1 ELSE 0) + 1 + FRest(r)
      [] r.pc \in {"U18", "R1", "M1", "M2", "M3", "U20", "U26", "U30"} -> 1 + FRest(r)
      [] r.pc \in {"U30F", "U32", "U34"} -> FSucc
      [] r.pc = "U31" -> IF PersistBeforeRelease THEN 0 ELSE FSucc
      [] r.pc = "U36" -> 0
      [] r.pc = "U38" -> FLater(r)
      [] r.pc = "U40" -> FFin
      [] r.pc = "U46" -> 0
      [] r.pc \in {"A2", "A9", "A12", "A15", "A19"} -> 1
      [] r.pc \in {"A17", "A22"} -> 0

\* The action property: each step of thread t (no crash) respects the ranks.
RankStep(t) ==
    IF th[t].pc = "Idle"
    THEN 1 + StepRank(th'[t]) <= MaxSteps /\ FenceRank(th'[t]) <= MaxFences
    ELSE /\ StepRank(th'[t]) < StepRank(th[t])
         /\ FenceRank(th'[t]) + FencesIn(th[t]) <= FenceRank(th[t])
BoundedSteps == [][crashes' = crashes => \A t \in Threads : th'[t] # th[t] => RankStep(t)]_vars

\* The same bounds on the counters, for models that keep them in the state:
\* at most MaxFences persistence fences per transaction so far (the seed:
\* "just two persistence fences (one pfence and one psync)"), and at most
\* MaxSteps steps (the returning step is not counted).
FenceBound == \A t \in Threads : th[t].nf <= MaxFences
StepBound == \A t \in Threads : th[t].ns <= MaxSteps

-----------------------------------------------------------------------------
(* Views: what TLC fingerprints in the larger models.  The history and the *)
(* per-transaction counters only grow with the path; a model that leaves   *)
(* them out checks the properties that do not read them (the witness       *)
(* invariants, BoundedSteps).                                              *)

ViewNoCounters == <<mem, head, lk, ring, sts, lidx, ann, req,
                    [t \in Threads |-> [th[t] EXCEPT !.ns = 0, !.nf = 0]], crashes, hist,
                    sig, ncom, oseq, ret, exp, bad>>
ViewNoHist == <<mem, head, lk, ring, sts, lidx, ann, req,
                [t \in Threads |-> [th[t] EXCEPT !.ns = 0, !.nf = 0]], crashes, sig, ncom, oseq, ret, exp, bad>>
ViewFences == <<mem, head, lk, ring, sts, lidx, ann, req,
                [t \in Threads |-> [th[t] EXCEPT !.ns = 0]], crashes, sig, ncom, oseq, ret, exp, bad>>
=============================================================================

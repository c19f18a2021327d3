----------------------------- MODULE InsDelQueue -----------------------------
(***************************************************************************)
(* Memento's detectable insertion and deletion (seed 001, §4: Algorithm 3  *)
(* LOAD / INSERT / DELETE, Algorithm 4 LOADHELP) used by a Michael-Scott   *)
(* queue: enqueue = INSERT of the thread's node on the last node's `next`, *)
(* dequeue = DELETE on `head` of the current dummy node, whose `repl`      *)
(* field records (tid, new head).  Px86 line persistency, thread crashes   *)
(* and full-system crashes, as in DetectableCAS.tla (each PM word its own *)
(* line [p, s]; clflush synchronous; flushopt pending until the thread's  *)
(* next locked RMW; sequentially consistent visibility).                   *)
(*                                                                         *)
(* Pc values name the seed lines: "I21".."I25" INSERT (Algorithm 3,        *)
(* L21-L25), "D34", "D38" DELETE (L34, L37-L38), "A11" LOADHELP            *)
(* (Algorithm 4, L10-L11), "P11" LOAD's helping (Algorithm 3, L11-L13),   *)
(* "Q1"/"Q2" the queue operations' starts (and their recovery: INSERT L17- *)
(* L19, DELETE L28-L31).                                                   *)
(*                                                                         *)
(* The queue: nodes are the sentinel 0 and one node per enqueue (thread t *)
(* enqueues its node t, value t); each node's value, `next` = NULL and    *)
(* `repl` = Null are persisted before it is inserted (allocation is not    *)
(* modelled).  Each thread runs one enqueue and one dequeue, in an order  *)
(* of Orders (<<"enq", "deq">>: enqueue first).  The tail is not           *)
(* kept: an enqueue finds the last node by traversing from head (the       *)
(* volatile tail hint of §5 only shortens that walk).  The dequeue          *)
(* CHECKPOINTs (Checkpoint.tla) the pair (old head, its next) before       *)
(* DELETE, and an empty result, in a per-thread durable word `dck`: the    *)
(* stable inputs DELETE's recovery needs (§2.3).  DEFERFLUSH(head) and     *)
(* RETIRE (§6) are not modelled (no reclamation: head is simply never      *)
(* flushed by DELETE; a crash may bring an old head back, which LOADHELP   *)
(* then repairs from its `repl`).                                          *)
(*                                                                         *)
(* A crash restarts the thread's current queue operation in recovery mode. *)
(* Recovery of INSERT traverses the queue (Contains) as L18 says; with     *)
(* RecoveryLoad (the fix of Finding 6, README.md) that traversal reads     *)
(* each `next` with LOAD, i.e. persists a link whose persist bit is set.   *)
(*                                                                         *)
(* Properties: TypeOK; LinkAndPersist (a `next` whose persist bit is clear *)
(* holds its persisted value, §4.1); NoDuplicateLink (a node is linked at  *)
(* most once: an enqueue takes effect at most once); and, on a history     *)
(* variable, HistoryDurablyLinearizable against SeqObjects' queue and      *)
(* HistoryDetectable once all operations are over (every operation cut off *)
(* by a crash is recovered with the result it took effect with).           *)
(*                                                                         *)
(* SpecFine (section "The code's grain") refines Spec to the grain of     *)
(* MSQ-mmt-indel (impl/perdure-memento/src/ds/msq.rs): pwb and pfence as   *)
(* steps, and the tail hint; traces/memento/queue/InsDelQueueTrace.tla     *)
(* replays the code's traces through it.                                   *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets, Histories, SeqObjects

CONSTANTS
    NThreads,         \* threads 1..NThreads
    MaxCrashes,       \* full-system crashes
    MaxThreadCrashes, \* thread crashes
    SwapInsertFlush,  \* mutant: INSERT clears the persist bit (L25) before the flush (L24)
    RecoveryLoad,     \* TRUE: the recovery traversal of INSERT uses LOAD (persists links)
    Orders            \* each thread's operations, one of these: <<"enq", "deq">> or <<"deq", "enq">>

Threads == 1 .. NThreads
\* Values for Orders: every thread enqueues first, or either order per thread.
EnqFirst == {<<"enq", "deq">>}
EitherOrder == {<<"enq", "deq">>, <<"deq", "enq">>}
Sentinel == 0
Nodes == 0 .. NThreads
NULL == -1
NoTid == 0

DLQ == INSTANCE DurableLinearizability WITH SeqInit <- QueueInit, SeqApply <- QueueApply

\* Words.
Ptr(p, n) == [p |-> p, ptr |-> n]                 \* a location: persist bit, pointer
Repl(t, n) == [tid |-> t, ptr |-> n]             \* a repl field
NullRepl == Repl(NoTid, NULL)

\* Lines.
HeadLine == <<"head">>
NextLine(n) == <<"next", n>>
ReplLine(n) == <<"repl", n>>
LineIds == {HeadLine} \cup {NextLine(n) : n \in Nodes} \cup {ReplLine(n) : n \in Nodes}

Vis(m, ln) == IF m[ln].s = <<>> THEN m[ln].p ELSE m[ln].s[Len(m[ln].s)]
StoreTo(m, ln, w) == [m EXCEPT ![ln].s = Append(@, w)]
Persist(m, S) == [ln \in DOMAIN m |-> IF ln \in S THEN [p |-> Vis(m, ln), s |-> <<>>] ELSE m[ln]]

VARIABLES
    pm,        \* [LineIds -> [p: word, s: Seq(word)]]
    pfo,       \* [Threads -> SUBSET LineIds]: pending flushopts
    orph,      \* flushopts of crashed threads
    dck,       \* [Threads -> record]: the dequeue's checkpoint (durable)
    th,        \* [Threads -> [pc, i, rec, last, h, nx]]
    crashes, tcrashes,
    hist,      \* the history (Histories.tla)
    cut        \* [Threads -> BOOLEAN]: current operation cut off by a full crash

\* The code's grain (SpecFine, below); Spec leaves them alone.
VARIABLES
    tl,        \* the tail hint (a node)
    fl         \* [Threads -> [pw, fd: SUBSET LineIds]]: lines written back, not yet fenced / fenced

vars == <<pm, pfo, orph, dck, th, crashes, tcrashes, hist, cut>>
fvars == <<tl, fl>>
allvars == <<vars, fvars>>
NoFl == [pw |-> {}, fd |-> {}]

NoDck == [op |-> 0, h |-> NULL, nx |-> NULL]
QOpId(t, i) == (t - 1) * 2 + i
\* Thread t's operation i (its order is th[t].w, one of Orders).
QOpName(t, i) == th[t].w[i]
QOpArgs(t, i) == IF th[t].w[i] = "enq" THEN <<t>> ELSE <<>>
\* The start of the operation t is in: Q1 for an enqueue, Q2 for a dequeue.
Start(t) == IF th[t].w[th[t].i] = "enq" THEN "Q1" ELSE "Q2"

Idle(w, i, rec) == [pc |-> IF w[i] = "enq" THEN "Q1" ELSE "Q2", i |-> i, rec |-> rec,
                    last |-> NULL, h |-> NULL, nx |-> NULL, w |-> w]
\* Thread t's record at the start of its operation i.
IdleOf(t, i, rec) == Idle(th[t].w, i, rec)

\* The empty queue, persisted: head on the sentinel, every link null, no repl set.
InitPm == [ln \in LineIds |->
             [p |-> CASE ln = HeadLine -> Ptr(FALSE, Sentinel)
                      [] ln[1] = "next" -> Ptr(FALSE, NULL)
                      [] OTHER -> NullRepl,
              s |-> <<>>]]

Init ==
    /\ pm = InitPm
    /\ pfo = [t \in Threads |-> {}]
    /\ orph = {}
    /\ dck = [t \in Threads |-> NoDck]
    /\ th \in {[t \in Threads |-> [Idle(ws[t], 1, FALSE) EXCEPT !.pc = "Inv"]] :
                ws \in [Threads -> Orders]}
    /\ crashes = 0 /\ tcrashes = 0
    /\ hist = <<>>
    /\ cut = [t \in Threads |-> FALSE]
    /\ tl = Sentinel
    /\ fl = [t \in Threads |-> NoFl]

\* The nodes reachable from head in memory m, in order (head's node first).
RECURSIVE Walk(_, _, _)
Walk(m, n, k) == IF n = NULL \/ k = 0 THEN <<>>
                 ELSE <<n>> \o Walk(m, Vis(m, NextLine(n)).ptr, k - 1)
Chain(m) == Walk(m, Vis(m, HeadLine).ptr, Cardinality(Nodes) + 1)
LastOf(m) == LET c == Chain(m) IN c[Len(c)]

\* The operation finishes with result v: a return, or a recover if a full
\* crash cut it off.
Finish(t, v) ==
    /\ hist' = Append(hist, IF cut[t] THEN EvRecover(QOpId(t, th[t].i), v)
                            ELSE EvReturn(QOpId(t, th[t].i), v))
    /\ cut' = [cut EXCEPT ![t] = FALSE]
    /\ th' = [th EXCEPT ![t] = IF th[t].i = 1 THEN [IdleOf(t, 2, FALSE) EXCEPT !.pc = "Inv"]
                               ELSE [IdleOf(t, 2, FALSE) EXCEPT !.pc = "Done"]]

\* The thread invokes its next operation.
Invoke(t) ==
    /\ th[t].pc = "Inv"
    /\ hist' = Append(hist, EvInvoke(QOpId(t, th[t].i), t, QOpName(t, th[t].i), QOpArgs(t, th[t].i)))
    /\ th' = [th EXCEPT ![t] = IdleOf(t, th[t].i, FALSE)]
    /\ UNCHANGED <<pm, pfo, orph, dck, crashes, tcrashes, cut>>

-----------------------------------------------------------------------------
(* Enqueue: INSERT(last.next, node t).                                     *)

\* Enqueue start.  The queue is traversed from head with LOAD (Algorithm 3,
\* L1-L14): a link whose persist bit is set is returned only after it is
\* persisted, so the traversal first helps it (P11; or waits for the
\* inserter's L25: no step).  In recovery, Algorithm 3 L17-L19: OK if the
\* node is in the queue (Contains) or its repl is set (it was inserted and
\* dequeued since); else Err, and the enqueue runs normally: find the last
\* node, go to L21.  RecoveryLoad = FALSE: the recovery's Contains reads
\* the links with plain loads (the seed does not say; see README.md,
\* Finding 6).
Q1(t) ==
    /\ th[t].pc = "Q1"
    /\ LET c == Chain(pm)
           setAt == {j \in DOMAIN c : Vis(pm, NextLine(c[j])).p}
           useLoad == ~th[t].rec \/ RecoveryLoad
           found == \E j \in DOMAIN c : c[j] = t
           replSet == Vis(pm, ReplLine(t)) # NullRepl
       IN CASE useLoad /\ setAt # {} ->
                 LET j == CHOOSE x \in setAt : \A y \in setAt : x <= y IN
                 /\ th' = [th EXCEPT ![t] = [@ EXCEPT !.h = c[j], !.pc = "P11"]]
                 /\ UNCHANGED <<hist, cut>>
            [] th[t].rec /\ (found \/ replSet) -> Finish(t, Null)
            [] OTHER ->
                 /\ th' = [th EXCEPT ![t] = [@ EXCEPT !.rec = FALSE, !.last = LastOf(pm), !.pc = "I21"]]
                 /\ UNCHANGED <<hist, cut>>
    /\ UNCHANGED <<pm, pfo, orph, dck, crashes, tcrashes>>

\* Algorithm 3, L21: CASPLAIN(loc, NULL, encode(TRUE, new)); on failure
\* return Err (the enqueue retries: Q1).  Locked: pending flushopts first.
I21(t) ==
    /\ th[t].pc = "I21"
    /\ LET ln == NextLine(th[t].last)
           m1 == Persist(pm, pfo[t])
       IN IF Vis(m1, ln) = Ptr(FALSE, NULL)
          THEN /\ pm' = StoreTo(m1, ln, Ptr(TRUE, t))
               /\ th' = [th EXCEPT ![t].pc = IF SwapInsertFlush THEN "I25" ELSE "I24"]
          ELSE /\ pm' = m1
               /\ th' = [th EXCEPT ![t].pc = "Q1"]
    /\ pfo' = [pfo EXCEPT ![t] = {}]
    /\ UNCHANGED <<orph, dck, crashes, tcrashes, hist, cut>>

\* Algorithm 3, L24: flush loc.
I24(t) ==
    /\ th[t].pc = "I24"
    /\ pm' = Persist(pm, {NextLine(th[t].last)})
    /\ IF SwapInsertFlush
       THEN Finish(t, Null)
       ELSE th' = [th EXCEPT ![t].pc = "I25"] /\ UNCHANGED <<hist, cut>>
    /\ UNCHANGED <<pfo, orph, dck, crashes, tcrashes>>

\* Algorithm 3, L25: CASPLAIN(loc, encode(TRUE, new), encode(FALSE, new))
\* (may fail: someone's LOAD cleared the bit); return OK.
I25(t) ==
    /\ th[t].pc = "I25"
    /\ LET ln == NextLine(th[t].last)
           m1 == Persist(pm, pfo[t])
       IN pm' = IF Vis(m1, ln) = Ptr(TRUE, t) THEN StoreTo(m1, ln, Ptr(FALSE, t)) ELSE m1
    /\ pfo' = [pfo EXCEPT ![t] = {}]
    /\ IF SwapInsertFlush
       THEN th' = [th EXCEPT ![t].pc = "I24"] /\ UNCHANGED <<hist, cut>>
       ELSE Finish(t, Null)
    /\ UNCHANGED <<orph, dck, crashes, tcrashes>>

-----------------------------------------------------------------------------
(* Dequeue: DELETE(head, old, old.next).                                   *)

\* Dequeue start.  In recovery with a checkpoint of this dequeue: an empty
\* result is returned again; otherwise Algorithm 3, L28-L31: if old.repl
\* names this thread, resume at L37 (D38), else Err and retry normally.
\* Normally: h := LOAD(head) via LOADHELP (Algorithm 4): if h's repl is set,
\* help (A11); nx := LOAD(h.next): if its persist bit is set, help (P11);
\* then checkpoint (h, nx) (or "empty") and go to L33-L34.
Q2(t) ==
    /\ th[t].pc = "Q2"
    /\ LET d == dck[t]
           h == Vis(pm, HeadLine).ptr
           nxw == Vis(pm, NextLine(h))
       IN IF th[t].rec /\ d.op = th[t].i
          THEN IF d.h = NULL
               THEN /\ Finish(t, Null)                       \* checkpointed: empty
                    /\ UNCHANGED dck
               ELSE IF Vis(pm, ReplLine(d.h)).tid = t        \* L29-L31
               THEN /\ th' = [th EXCEPT ![t] = [@ EXCEPT !.h = d.h, !.nx = d.nx, !.pc = "D38"]]
                    /\ UNCHANGED <<dck, hist, cut>>
               ELSE /\ th' = [th EXCEPT ![t] = [@ EXCEPT !.rec = FALSE]]   \* L30: Err, retry
                    /\ UNCHANGED <<dck, hist, cut>>
          ELSE CASE Vis(pm, ReplLine(h)) # NullRepl ->        \* Algorithm 4, L3-L5: help
                      /\ th' = [th EXCEPT ![t] = [@ EXCEPT !.rec = FALSE, !.h = h, !.pc = "A11"]]
                      /\ UNCHANGED <<dck, hist, cut>>
                 [] nxw.p ->                                  \* Algorithm 3, L4-L10: help
                      /\ th' = [th EXCEPT ![t] = [@ EXCEPT !.rec = FALSE, !.h = h, !.pc = "P11"]]
                      /\ UNCHANGED <<dck, hist, cut>>
                 [] nxw.ptr = NULL ->                         \* empty: checkpoint it
                      /\ dck' = [dck EXCEPT ![t] = [op |-> th[t].i, h |-> NULL, nx |-> NULL]]
                      /\ Finish(t, Null)
                 [] OTHER ->
                      /\ dck' = [dck EXCEPT ![t] = [op |-> th[t].i, h |-> h, nx |-> nxw.ptr]]
                      /\ th' = [th EXCEPT ![t] = [@ EXCEPT !.rec = FALSE, !.h = h, !.nx = nxw.ptr,
                                                            !.pc = "D34"]]
                      /\ UNCHANGED <<hist, cut>>
    /\ UNCHANGED <<pm, pfo, orph, crashes, tcrashes>>

\* Algorithm 4, L10-L11: flushopt old.repl; CAS(loc, old, o_new) (locked:
\* the flushopt takes effect first); back to the dequeue's start.
A11(t) ==
    /\ th[t].pc = "A11"
    /\ LET h == th[t].h
           m1 == Persist(pm, pfo[t] \cup {ReplLine(h)})
       IN pm' = IF Vis(m1, HeadLine).ptr = h
                THEN StoreTo(m1, HeadLine, Ptr(FALSE, Vis(m1, ReplLine(h)).ptr)) ELSE m1
    /\ pfo' = [pfo EXCEPT ![t] = {}]
    /\ th' = [th EXCEPT ![t] = [@ EXCEPT !.h = NULL, !.pc = "Q2"]]
    /\ UNCHANGED <<orph, dck, crashes, tcrashes, hist, cut>>

\* Algorithm 3, L11-L13 (LOAD of h.next, patience over): flush loc; CAS it
\* to the same pointer with the persist bit clear; back to the operation's
\* start (Q1 or Q2).
P11(t) ==
    /\ th[t].pc = "P11"
    /\ LET ln == NextLine(th[t].h)
           m1 == Persist(Persist(pm, pfo[t]), {ln})
           w == Vis(m1, ln)
       IN pm' = IF w.p THEN StoreTo(m1, ln, Ptr(FALSE, w.ptr)) ELSE m1
    /\ pfo' = [pfo EXCEPT ![t] = {}]
    /\ th' = [th EXCEPT ![t] = [@ EXCEPT !.h = NULL, !.pc = Start(t)]]
    /\ UNCHANGED <<orph, dck, crashes, tcrashes, hist, cut>>

\* Algorithm 3, L33-L34: CASPLAIN(old.repl, Null, encodeR(tid, new)); on
\* failure L35: Err (LOADHELP at the retry, Q2).
D34(t) ==
    /\ th[t].pc = "D34"
    /\ LET ln == ReplLine(th[t].h)
           m1 == Persist(pm, pfo[t])
       IN IF Vis(m1, ln) = NullRepl
          THEN /\ pm' = StoreTo(m1, ln, Repl(t, th[t].nx))
               /\ th' = [th EXCEPT ![t].pc = "D38"]
          ELSE /\ pm' = m1
               /\ th' = [th EXCEPT ![t] = [@ EXCEPT !.h = NULL, !.nx = NULL, !.pc = "Q2"]]
    /\ pfo' = [pfo EXCEPT ![t] = {}]
    /\ UNCHANGED <<orph, dck, crashes, tcrashes, hist, cut>>

\* Algorithm 3, L37-L39: flushopt old.repl; CASPLAIN(loc, old, new) (locked:
\* the flushopt takes effect); DEFERFLUSH and RETIRE not modelled; return
\* the value of the new head (the dequeued node's value = its number).
D38(t) ==
    /\ th[t].pc = "D38"
    /\ LET m1 == Persist(pm, pfo[t] \cup {ReplLine(th[t].h)}) IN
       pm' = IF Vis(m1, HeadLine).ptr = th[t].h
             THEN StoreTo(m1, HeadLine, Ptr(FALSE, th[t].nx)) ELSE m1
    /\ pfo' = [pfo EXCEPT ![t] = {}]
    /\ Finish(t, th[t].nx)
    /\ UNCHANGED <<orph, dck, crashes, tcrashes>>

-----------------------------------------------------------------------------
(* Crashes.                                                                *)

OrphanFlush(ln) ==
    /\ ln \in orph
    /\ pm' = Persist(pm, {ln})
    /\ orph' = orph \ {ln}
    /\ UNCHANGED <<pfo, dck, th, crashes, tcrashes, hist, cut>>

Running(t) == th[t].pc \notin {"Inv", "Done"}

ThreadCrash(t) ==
    /\ tcrashes < MaxThreadCrashes /\ Running(t)
    /\ tcrashes' = tcrashes + 1
    /\ th' = [th EXCEPT ![t] = IdleOf(t, th[t].i, TRUE)]
    /\ orph' = orph \cup pfo[t]
    /\ pfo' = [pfo EXCEPT ![t] = {}]
    /\ UNCHANGED <<pm, dck, crashes, hist, cut>>

Dirty == {ln \in LineIds : pm[ln].s # <<>>}
MaxPending == LET ls == {Len(pm[ln].s) : ln \in LineIds} IN CHOOSE x \in ls : \A y \in ls : y <= x
Images == {c \in [Dirty -> 0 .. MaxPending] : \A ln \in Dirty : c[ln] <= Len(pm[ln].s)}

\* The memory after a crash that keeps c[ln] of line ln's pending stores.
CrashPm(c) == [ln \in LineIds |->
                 IF ln \in Dirty
                 THEN [p |-> IF c[ln] = 0 THEN pm[ln].p ELSE pm[ln].s[c[ln]], s |-> <<>>]
                 ELSE pm[ln]]

Crash ==
    /\ crashes < MaxCrashes /\ \E t \in Threads : th[t].pc # "Done"
    /\ crashes' = crashes + 1
    /\ \E c \in Images : pm' = CrashPm(c)
    /\ hist' = Append(hist, EvCrash)
    /\ cut' = [t \in Threads |-> cut[t] \/ Running(t)]
    /\ th' = [t \in Threads |-> IF Running(t) THEN IdleOf(t, th[t].i, TRUE) ELSE th[t]]
    /\ pfo' = [t \in Threads |-> {}]
    /\ orph' = {}
    /\ UNCHANGED <<dck, tcrashes>>

Next ==
    \/ \E t \in Threads :
         \/ Invoke(t) \/ Q1(t) \/ I21(t) \/ I24(t) \/ I25(t)
         \/ Q2(t) \/ A11(t) \/ P11(t) \/ D34(t) \/ D38(t)
         \/ ThreadCrash(t)
    \/ \E ln \in orph : OrphanFlush(ln)
    \/ Crash

Spec == Init /\ [][Next /\ UNCHANGED fvars]_allvars

-----------------------------------------------------------------------------
(* The code's grain: SpecFine.                                             *)
(*                                                                         *)
(* MSQ-mmt-indel (impl/perdure-memento/src/ds/msq.rs on insdel.rs) makes   *)
(* the seed's lines above in more steps.  SpecFine adds them, each a step  *)
(* that leaves Spec's variables alone, and lets Spec's actions happen only *)
(* where the code's make them: every step of SpecFine is a step of Next or *)
(* leaves `vars` unchanged (CoarseStep, checked by InsDelQueue_Fine.cfg).  *)
(*                                                                         *)
(* * Write-backs: the code's clflush is a pwb and a pfence (Sim, and x86   *)
(*   with clflushopt/clwb), and the flushopt before a locked CAS a pwb and *)
(*   the pfence its RMW needs where RMWs are no fences.  FPwb records the  *)
(*   thread's pwb of a line (`fl[t].pw`), FFence makes them complete       *)
(*   (`fl[t].fd`); I24 is the pfence after loc's pwb, and the CASes that   *)
(*   Spec lets persist a flushopt (P11 with the bit set, A11 on an         *)
(*   unchanged head, D38) need it in `fl[t].fd`.  A code line is a node's  *)
(*   whole line: its pwb covers the node's `next` and `repl` (CodeLine).   *)
(*   Spec's lines still persist when its actions say (I24's clflush, the   *)
(*   locked CASes): between the code's pfence and its CAS the spec's crash *)
(*   images are a superset of the code's.                                  *)
(* * The tail hint (msq.rs, "The tail hint"; §5): `tl`, moved by a CAS to  *)
(*   the successor of the node it names once that link is persisted       *)
(*   (FSwingTail); a dequeue swings it before DELETE when head is the tail *)
(*   (D34 only with tl # h), so it stays reachable from head (TailReachable).*)
(*   After a full crash Msq::recover moves head past the blocks whose      *)
(*   deletion committed (LOADHELP's help, at start-up) and sets tail :=    *)
(*   head: FCrash sets tl to that node.  Q1 still finds the last node from *)
(*   head: the hint only shortens the code's walk (the trace validation    *)
(*   checks each of its loads against the spec's memory).                 *)

\* The spec lines the code's line of node n holds (n = NULL: head's line).
CodeLine(n) == IF n = NULL THEN {HeadLine} ELSE {NextLine(n), ReplLine(n)}

\* The line a thread at pc writes back next (Spec's flush at I24, P11, A11, D38).
FlushDue(t) == CASE th[t].pc = "I24" -> CodeLine(th[t].last)
                 [] th[t].pc \in {"P11", "A11", "D38"} -> CodeLine(th[t].h)
                 [] OTHER -> {}

FPwb(t, L) ==
    /\ fl' = [fl EXCEPT ![t].pw = @ \cup L]
    /\ UNCHANGED <<vars, tl>>

\* pfence: t's pwbs complete; at I24 after loc's pwb, it is I24 (the clflush).
FFence(t) ==
    /\ fl' = [fl EXCEPT ![t] = [pw |-> {}, fd |-> fl[t].fd \cup fl[t].pw]]
    /\ IF th[t].pc = "I24" /\ NextLine(th[t].last) \in fl[t].pw
       THEN I24(t) ELSE UNCHANGED vars
    /\ UNCHANGED tl

\* A locked CAS of Spec: the fenced write-backs were used.
Locked(t, A) == A /\ fl' = [fl EXCEPT ![t].fd = {}] /\ UNCHANGED tl
FI21(t) == Locked(t, I21(t))
FI25(t) == Locked(t, I25(t))
FP11(t) == /\ th[t].pc = "P11"
           /\ Vis(pm, NextLine(th[t].h)).p => NextLine(th[t].h) \in fl[t].fd
           /\ Locked(t, P11(t))
FA11(t) == /\ th[t].pc = "A11"
           /\ Vis(pm, HeadLine).ptr = th[t].h => ReplLine(th[t].h) \in fl[t].fd
           /\ Locked(t, A11(t))
FD34(t) == tl # th[t].h /\ Locked(t, D34(t))
FD38(t) == ReplLine(th[t].h) \in fl[t].fd /\ Locked(t, D38(t))

\* msq.rs swing_tail: tail moves to its node's successor, whose link is persisted.
FSwingTail ==
    LET w == Vis(pm, NextLine(tl)) IN
    /\ w.ptr # NULL /\ ~w.p
    /\ tl' = w.ptr
    /\ UNCHANGED <<vars, fl>>

\* Msq::recover: head past the blocks whose deletion committed, tail := head.
RECURSIVE Helped(_, _, _)
Helped(m, n, k) == IF k = 0 \/ Vis(m, ReplLine(n)) = NullRepl THEN n
                   ELSE Helped(m, Vis(m, ReplLine(n)).ptr, k - 1)
FCrash ==
    /\ Crash
    /\ tl' = Helped(pm', Vis(pm', HeadLine).ptr, Cardinality(Nodes))
    /\ fl' = [t \in Threads |-> NoFl]

FThreadCrash(t) == ThreadCrash(t) /\ fl' = [fl EXCEPT ![t] = NoFl] /\ UNCHANGED tl

FineNext ==
    \/ \E t \in Threads :
         \/ (Invoke(t) \/ Q1(t) \/ Q2(t)) /\ UNCHANGED fvars
         \/ FI21(t) \/ FI25(t) \/ FP11(t) \/ FA11(t) \/ FD34(t) \/ FD38(t)
         \/ FlushDue(t) # {} /\ FPwb(t, FlushDue(t))
         \/ fl[t].pw # {} /\ FFence(t)
         \/ FThreadCrash(t)
    \/ FSwingTail
    \/ (\E ln \in orph : OrphanFlush(ln)) /\ UNCHANGED fvars
    \/ FCrash

SpecFine == Init /\ [][FineNext]_allvars

\* SpecFine refines Spec: each of its steps is a step of Next or leaves Spec's variables alone.
CoarseStep == [][Next]_vars

-----------------------------------------------------------------------------
(* Properties.                                                             *)

TypeOK ==
    /\ \A t \in Threads :
         /\ th[t].pc \in {"Inv", "Done", "Q1", "I21", "I24", "I25", "Q2", "A11", "P11", "D34", "D38"}
         /\ th[t].i \in {1, 2} /\ th[t].rec \in BOOLEAN /\ th[t].w \in Orders
         /\ pfo[t] \subseteq LineIds
    /\ orph \subseteq LineIds
    /\ crashes \in 0 .. MaxCrashes /\ tcrashes \in 0 .. MaxThreadCrashes

\* §4.1 (link-and-persist, David et al.): a location whose persist bit is
\* clear holds its persisted value.
LinkAndPersist ==
    \A n \in Nodes : ~Vis(pm, NextLine(n)).p => pm[NextLine(n)].p.ptr = Vis(pm, NextLine(n)).ptr

\* No node is the successor of two nodes, in memory or in what is persisted:
\* an enqueue's INSERT took effect at most once (and the list has no cycle
\* through an inserted node).
Preds(m, n) == {x \in Nodes : Vis(m, NextLine(x)).ptr = n}
Persisted == [ln \in LineIds |-> [p |-> pm[ln].p, s |-> <<>>]]
NoDuplicateLink ==
    \A n \in Nodes : Cardinality(Preds(pm, n)) <= 1 /\ Cardinality(Preds(Persisted, n)) <= 1

HistoryDurablyLinearizable == DLQ!DurablyLinearizable(hist)

\* Once every thread is done, every operation a crash cut off has been
\* recovered with its result.
HistoryDetectable == (\A t \in Threads : th[t].pc = "Done") => DLQ!Detectable(hist)

\* SpecFine: the tail hint is head's node or reachable from it (msq.rs, §5).
TailReachable == \E j \in DOMAIN Chain(pm) : Chain(pm)[j] = tl
=============================================================================

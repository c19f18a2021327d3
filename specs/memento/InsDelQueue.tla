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
(* modelled).  Each thread runs enqueue then dequeue.  The tail is not    *)
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
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets, Histories, SeqObjects

CONSTANTS
    NThreads,         \* threads 1..NThreads
    MaxCrashes,       \* full-system crashes
    MaxThreadCrashes, \* thread crashes
    SwapInsertFlush,  \* mutant: INSERT clears the persist bit (L25) before the flush (L24)
    RecoveryLoad      \* TRUE: the recovery traversal of INSERT uses LOAD (persists links)

Threads == 1 .. NThreads
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

vars == <<pm, pfo, orph, dck, th, crashes, tcrashes, hist, cut>>

NoDck == [op |-> 0, h |-> NULL, nx |-> NULL]
QOpId(t, i) == (t - 1) * 2 + i
QOpName(i) == IF i = 1 THEN "enq" ELSE "deq"
QOpArgs(t, i) == IF i = 1 THEN <<t>> ELSE <<>>

Idle(i, rec) == [pc |-> IF i = 1 THEN "Q1" ELSE "Q2", i |-> i, rec |-> rec,
                 last |-> NULL, h |-> NULL, nx |-> NULL]

Init ==
    /\ pm = [ln \in LineIds |->
               [p |-> CASE ln = HeadLine -> Ptr(FALSE, Sentinel)
                        [] ln[1] = "next" -> Ptr(FALSE, NULL)
                        [] OTHER -> NullRepl,
                s |-> <<>>]]
    /\ pfo = [t \in Threads |-> {}]
    /\ orph = {}
    /\ dck = [t \in Threads |-> NoDck]
    /\ th = [t \in Threads |-> [Idle(1, FALSE) EXCEPT !.pc = "Inv"]]
    /\ crashes = 0 /\ tcrashes = 0
    /\ hist = <<>>
    /\ cut = [t \in Threads |-> FALSE]

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
    /\ th' = [th EXCEPT ![t] = IF th[t].i = 1 THEN [Idle(2, FALSE) EXCEPT !.pc = "Inv"]
                               ELSE [Idle(2, FALSE) EXCEPT !.pc = "Done"]]

\* The thread invokes its next operation.
Invoke(t) ==
    /\ th[t].pc = "Inv"
    /\ hist' = Append(hist, EvInvoke(QOpId(t, th[t].i), t, QOpName(th[t].i), QOpArgs(t, th[t].i)))
    /\ th' = [th EXCEPT ![t] = Idle(th[t].i, FALSE)]
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
       IN IF th[t].rec /\ d.op = 2
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
                      /\ dck' = [dck EXCEPT ![t] = [op |-> 2, h |-> NULL, nx |-> NULL]]
                      /\ Finish(t, Null)
                 [] OTHER ->
                      /\ dck' = [dck EXCEPT ![t] = [op |-> 2, h |-> h, nx |-> nxw.ptr]]
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
    /\ th' = [th EXCEPT ![t] = [@ EXCEPT !.h = NULL, !.pc = IF th[t].i = 1 THEN "Q1" ELSE "Q2"]]
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
    /\ th' = [th EXCEPT ![t] = Idle(th[t].i, TRUE)]
    /\ orph' = orph \cup pfo[t]
    /\ pfo' = [pfo EXCEPT ![t] = {}]
    /\ UNCHANGED <<pm, dck, crashes, hist, cut>>

Dirty == {ln \in LineIds : pm[ln].s # <<>>}
MaxPending == LET ls == {Len(pm[ln].s) : ln \in LineIds} IN CHOOSE x \in ls : \A y \in ls : y <= x
Images == {c \in [Dirty -> 0 .. MaxPending] : \A ln \in Dirty : c[ln] <= Len(pm[ln].s)}

Crash ==
    /\ crashes < MaxCrashes /\ \E t \in Threads : th[t].pc # "Done"
    /\ crashes' = crashes + 1
    /\ \E c \in Images :
         pm' = [ln \in LineIds |->
                  IF ln \in Dirty
                  THEN [p |-> IF c[ln] = 0 THEN pm[ln].p ELSE pm[ln].s[c[ln]], s |-> <<>>]
                  ELSE pm[ln]]
    /\ hist' = Append(hist, EvCrash)
    /\ cut' = [t \in Threads |-> cut[t] \/ Running(t)]
    /\ th' = [t \in Threads |-> IF Running(t) THEN Idle(th[t].i, TRUE) ELSE th[t]]
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

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* Properties.                                                             *)

TypeOK ==
    /\ \A t \in Threads :
         /\ th[t].pc \in {"Inv", "Done", "Q1", "I21", "I24", "I25", "Q2", "A11", "P11", "D34", "D38"}
         /\ th[t].i \in {1, 2} /\ th[t].rec \in BOOLEAN
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
=============================================================================

--------------------------- MODULE InsDelQueueInd ---------------------------
(***************************************************************************)
(* Inductiveness of the queue's structural safety invariants (issue 20,    *)
(* §4): LinkAndPersist (a `next` whose persist bit is clear holds its      *)
(* persisted value) and NoDuplicateLink (a node is linked at most once,    *)
(* visibly and durably: an enqueue takes effect at most once), stated with *)
(* a strengthening as IndInv.  InsDelQueueInd.cfg checks                   *)
(*     IndInv /\ [Next /\ UNCHANGED fvars]_allvars => IndInv'              *)
(* with TLC: INIT IndInit is every state of a bounded domain that          *)
(* satisfies IndInv (not only the reachable ones), NEXT is Spec's step,    *)
(* the INVARIANT is IndInv, and the ACTION_CONSTRAINT IndDomain (on the    *)
(* source state only) keeps TLC from expanding successors that leave the   *)
(* domain; TLC still checks IndInv on them (a plain CONSTRAINT would not:  *)
(* TLC checks no invariant on a state outside it).                         *)
(*                                                                         *)
(* Not part of IndInv: the history checks (HistoryDurablyLinearizable,     *)
(* HistoryDetectable), the queue's main correctness property, which        *)
(* InsDelQueue.cfg checks by exploration: an inductive form would have to  *)
(* characterise the histories themselves.  `hist` and `cut` are ghosts     *)
(* here: no step reads `hist`, and `cut` only chooses the kind of event    *)
(* Finish appends, so the domain gives them one value.                     *)
(*                                                                         *)
(* Bound: the CI model's algorithm (RecoveryLoad, INSERT flushing before   *)
(* clearing the bit), 2 threads each enqueueing its node then dequeueing,  *)
(* full-system crashes only (MaxThreadCrashes = 0, as InsDelQueue.cfg: no  *)
(* step of Spec adds a pending flushopt, so `pfo` and `orph` stay empty),  *)
(* every arrangement of the 3 nodes' links, of head's pending stores and   *)
(* of the repl fields that IndInv allows, crash counter 0 (a state whose   *)
(* crash is used up has the same successors minus Crash).  Registers a     *)
(* label never reads are NULL (as Idle leaves them): `last` outside        *)
(* I21-I25, `h` and `nx` outside A11, P11, D34, D38.                       *)
(*                                                                         *)
(* The orders of the linked nodes (IndPaths).  InsDelQueueInd_deep.cfg     *)
(* takes all five (Paths); InsDelQueueInd.cfg, the CI row, only <<>>,      *)
(* <<1>> and <<1, 2>> (CanonPaths), and IndDomain keeps TLC from expanding *)
(* a successor in another order.  That loses nothing: the two threads run  *)
(* the same work, thread t on node t, and swapping the threads together   *)
(* with their nodes maps Init, Next (its one CHOOSE picks a position on    *)
(* the path, not a node) and IndInv onto themselves, so a state linked in  *)
(* the order <<2>> or <<2, 1>> has a successor breaking IndInv iff its     *)
(* swapped twin, in the order <<1>> or <<1, 2>>, has one.                  *)
(*                                                                         *)
(* The strengthening (Reach = the nodes on the visible path from the       *)
(* sentinel, Tg(x) = x's visible successor):                               *)
(*  - each `next` line is NULL, or one target n in every word it holds     *)
(*    (persisted and pending): set bit pending, set bit persisted, cleared *)
(*    bit pending over a set one persisted, or cleared bit persisted;      *)
(*  - the linked nodes are exactly Reach minus the sentinel, no node links *)
(*    the sentinel, and a node with a successor has its incoming link      *)
(*    persisted (so every crash image keeps a path from the sentinel);     *)
(*    an unlinked node's `next` and `repl` are untouched;                  *)
(*  - head's words are a path along Reach, persisted one first; every node *)
(*    before the visible head, and before any node whose repl is set, has  *)
(*    its repl persisted; a repl holds (tid, the node's successor), and    *)
(*    the thread tid checkpointed that pair and is dequeuing it or done;   *)
(*  - per thread and label: an enqueuer before I21 outside recovery and at *)
(*    I21 has its node unlinked, and at I21 the last node's incoming link  *)
(*    persisted; at I24/I25 its node is the last node's successor (at I25  *)
(*    persisted); a dequeuer at D34/D38 holds a checkpointed (h, Tg(h)),   *)
(*    at D38 with its repl on h; at A11 h's repl is set.                   *)
(*                                                                         *)
(* Not vacuous: mutants/InsDelQueueIndRecoveryPlainLoad.cfg (RecoveryLoad  *)
(* = FALSE, Finding 6) gets a successor breaking IndInv.                   *)
(***************************************************************************)
EXTENDS InsDelQueue

CONSTANT IndPaths   \* the orders of the linked nodes IndInit builds: Paths, or CanonPaths

Tg(x) == Vis(pm, NextLine(x)).ptr
Reach == LET c == Walk(pm, Sentinel, Cardinality(Nodes) + 1) IN {c[j] : j \in DOMAIN c}
\* Position on the visible path from the sentinel (Reach only).
RECURSIVE PosFrom(_, _, _)
PosFrom(x, n, k) == IF x = n \/ k = 0 THEN 0 ELSE 1 + PosFrom(Tg(x), n, k - 1)
ChainPos(n) == PosFrom(Sentinel, n, Cardinality(Nodes) + 1)
Before(y, x) == y \in Reach /\ x \in Reach /\ ChainPos(y) < ChainPos(x)
Linked(n) == \E x \in Nodes : Tg(x) = n
PersistedLinked(n) == \E x \in Nodes : pm[NextLine(x)].p.ptr = n
ReplVis(x) == Vis(pm, ReplLine(x))
ReplDurable(x) == pm[ReplLine(x)].p # NullRepl /\ pm[ReplLine(x)].s = <<>>
HeadWords == <<pm[HeadLine].p>> \o pm[HeadLine].s
HV == Vis(pm, HeadLine).ptr

NextShapeOK(x) ==
    LET l == pm[NextLine(x)]
        n == Tg(x)
    IN \/ l.p = Ptr(FALSE, NULL) /\ l.s = <<>>
       \/ n \in Nodes \ {Sentinel, x} /\
          \/ l.p = Ptr(FALSE, NULL) /\ l.s = <<Ptr(TRUE, n)>>
          \/ l.p = Ptr(TRUE, n) /\ l.s \in {<<>>, <<Ptr(FALSE, n)>>}
          \/ l.p = Ptr(FALSE, n) /\ l.s = <<>>

ReplShapeOK(x) ==
    LET l == pm[ReplLine(x)] IN
    \/ l.p = NullRepl /\ l.s = <<>>
    \/ /\ Tg(x) # NULL
       /\ \E t \in Threads :
            \/ l.p = NullRepl /\ l.s = <<Repl(t, Tg(x))>>
            \/ l.p = Repl(t, Tg(x)) /\ l.s = <<>>

MemInv ==
    /\ \A x \in Nodes : NextShapeOK(x) /\ ReplShapeOK(x)
    /\ \A n \in Nodes \ {Sentinel} : Linked(n) <=> n \in Reach
    /\ \A n \in Nodes \ Reach : pm[NextLine(n)].p = Ptr(FALSE, NULL) /\ pm[NextLine(n)].s = <<>>
                                /\ pm[ReplLine(n)].p = NullRepl /\ pm[ReplLine(n)].s = <<>>
    /\ \A n \in Reach \ {Sentinel} : Tg(n) # NULL => PersistedLinked(n)
    \* head: a path along Reach, every word with a clear bit
    /\ \A k \in DOMAIN HeadWords : ~HeadWords[k].p /\ HeadWords[k].ptr \in Reach
    /\ \A k \in 1 .. Len(HeadWords) - 1 : HeadWords[k + 1].ptr = Tg(HeadWords[k].ptr)
    \* repl fields
    /\ \A y \in Reach : Before(y, HV) => ReplDurable(y)
    /\ \A x \in Nodes : ReplVis(x) # NullRepl => \A y \in Reach : Before(y, x) => ReplDurable(y)

ThreadOK(t, s, d) ==
    /\ s.w = <<"enq", "deq">>
    /\ s.pc \in {"Q1", "I21", "I24", "I25"} => s.i = 1
    /\ s.pc \in {"Q2", "A11", "D34", "D38", "Done"} => s.i = 2
    /\ s.i = 1 => d = NoDck
    /\ s.i = 2 => PersistedLinked(t)
    /\ s.i = 1 /\ s.pc = "Inv" => ~Linked(t)
    /\ s.i = 1 /\ ~s.rec /\ s.pc \in {"Q1", "P11"} => ~Linked(t)
    /\ s.pc = "I21" => /\ ~s.rec /\ ~Linked(t) /\ s.last \in Reach
                       /\ (s.last = Sentinel \/ PersistedLinked(s.last))
    /\ s.pc \in {"I24", "I25"} => ~s.rec /\ s.last \in Reach /\ Tg(s.last) = t
    /\ s.pc = "I25" => pm[NextLine(s.last)].p # Ptr(FALSE, NULL)
    /\ s.pc \in {"A11", "P11", "D34", "D38"} => s.h \in Reach
    /\ s.pc = "A11" => ~s.rec /\ ReplVis(s.h) # NullRepl
    \* h was head when Q2 read it, and head only moves on (until a crash)
    /\ (s.pc \in {"A11", "D34"} \/ (s.pc = "D38" /\ ~s.rec)) => (s.h = HV \/ Before(s.h, HV))
    /\ s.pc = "D34" => ~s.rec
    /\ s.pc \in {"D34", "D38"} => /\ s.nx = Tg(s.h) /\ s.nx # NULL
                                 /\ d = [op |-> 2, h |-> s.h, nx |-> s.nx]
    /\ s.pc = "D34" => \A x \in Nodes : ReplVis(x).tid # t
    /\ s.pc = "D38" => ReplVis(s.h) = Repl(t, s.nx)
    /\ d # NoDck =>
         /\ d.op = 2
         /\ d.h = NULL => d.nx = NULL /\ s.pc = "Done"
         /\ d.h # NULL => /\ d.h \in Reach /\ d.nx = Tg(d.h) /\ d.nx # NULL
                          /\ pm[NextLine(d.h)].p.ptr = d.nx
    /\ s.pc = "Done" => d # NoDck
    \* the repl fields naming t
    /\ \A x \in Nodes : ReplVis(x) # NullRepl /\ ReplVis(x).tid = t =>
         /\ d = [op |-> 2, h |-> x, nx |-> Tg(x)]
         /\ s.pc \in {"D38", "Done"} \/ (s.pc = "Q2" /\ s.rec)
         /\ s.pc = "D38" => s.h = x

IndNext == Next /\ UNCHANGED fvars

IndInv ==
    /\ TypeOK
    /\ LinkAndPersist
    /\ NoDuplicateLink
    /\ pfo = [t \in Threads |-> {}] /\ orph = {}
    /\ MemInv
    /\ \A t \in Threads : ThreadOK(t, th[t], dck[t])

-----------------------------------------------------------------------------
(* The bounded domain.                                                     *)

W == <<"enq", "deq">>
NodeOrNull == Nodes \cup {NULL}
\* A thread's record, registers NULL where its label never reads them.
ThStates ==
    {[Idle(W, i, FALSE) EXCEPT !.pc = "Inv"] : i \in {1, 2}}
    \cup {[Idle(W, 2, FALSE) EXCEPT !.pc = "Done"]}
    \cup {Idle(W, i, r) : i \in {1, 2}, r \in BOOLEAN}
    \cup {[Idle(W, 1, FALSE) EXCEPT !.pc = p, !.last = l] : p \in {"I21", "I24", "I25"}, l \in Nodes}
    \cup {[Idle(W, i, r) EXCEPT !.pc = "P11", !.h = h] : i \in {1, 2}, r \in BOOLEAN, h \in Nodes}
    \cup {[Idle(W, 2, FALSE) EXCEPT !.pc = "A11", !.h = h] : h \in Nodes}
    \cup {[Idle(W, 2, r) EXCEPT !.pc = p, !.h = h, !.nx = n] :
            p \in {"D34", "D38"}, r \in BOOLEAN, h \in Nodes, n \in Nodes}
Dcks == {NoDck, [op |-> 2, h |-> NULL, nx |-> NULL]}
        \cup {[op |-> 2, h |-> h, nx |-> n] : h \in Nodes, n \in Nodes}

\* Memory: the order the nodes are linked in (a path from the sentinel),
\* each link's shape, head's words, each repl.  (Written for the 3 nodes of
\* NThreads = 2.)
ASSUME NThreads = 2
Paths == {<<>>} \cup {<<n>> : n \in {1, 2}} \cup {<<1, 2>>, <<2, 1>>}
CanonPaths == {<<>>, <<1>>, <<1, 2>>}
NextLines(n) == {[p |-> Ptr(FALSE, NULL), s |-> <<Ptr(TRUE, n)>>], [p |-> Ptr(TRUE, n), s |-> <<>>],
                 [p |-> Ptr(TRUE, n), s |-> <<Ptr(FALSE, n)>>], [p |-> Ptr(FALSE, n), s |-> <<>>]}
NullNext == [p |-> Ptr(FALSE, NULL), s |-> <<>>]
NextChoices(n) == IF n = NULL THEN {NullNext} ELSE NextLines(n)
ReplChoices(n) == {[p |-> NullRepl, s |-> <<>>]}
                  \cup (IF n = NULL THEN {}
                        ELSE UNION {{[p |-> NullRepl, s |-> <<Repl(t, n)>>], [p |-> Repl(t, n), s |-> <<>>]} :
                                    t \in Threads})
\* Head's words: a stretch chain[a..b] of the path from the sentinel.
HeadLines(chain) ==
    {[p |-> Ptr(FALSE, chain[a]), s |-> [k \in 1 .. b - a |-> Ptr(FALSE, chain[a + k])]] :
        a \in DOMAIN chain, b \in DOMAIN chain}
NextOf(chain, x) == IF \E k \in 1 .. Len(chain) - 1 : chain[k] = x
                    THEN chain[(CHOOSE k \in 1 .. Len(chain) - 1 : chain[k] = x) + 1]
                    ELSE NULL

IndDomain ==
    /\ crashes = 0 /\ tcrashes = 0
    /\ Tail(Walk(pm, Sentinel, Cardinality(Nodes) + 1)) \in IndPaths
    /\ hist = <<>> /\ cut = [t \in Threads |-> FALSE] /\ tl = Sentinel /\ fl = [t \in Threads |-> NoFl]
    /\ \A t \in Threads : th[t] \in ThStates

\* The memory part of IndInv that does not read the threads (a filter before
\* the threads are chosen).
MemInvNoThreads ==
    /\ LinkAndPersist /\ NoDuplicateLink
    /\ \A x \in Nodes : NextShapeOK(x) /\ ReplShapeOK(x)
    /\ \A n \in Reach \ {Sentinel} : Tg(n) # NULL => PersistedLinked(n)
    /\ \A y \in Reach : Before(y, HV) => ReplDurable(y)
    /\ \A x \in Nodes : ReplVis(x) # NullRepl => \A y \in Reach : Before(y, x) => ReplDurable(y)

\* A thread's candidate records and checkpoints for the memory just chosen:
\* ThStates and Dcks with `last`, `h` on the path and `nx` = Tg(h) (what
\* ThreadOK asks), filtered by ThreadOK.
Cands(t) ==
    LET R == Reach
        sts == {s \in ThStates : /\ s.last \in R \cup {NULL} /\ s.h \in R \cup {NULL}
                                 /\ s.pc \in {"D34", "D38"} => s.nx = Tg(s.h)}
        dks == {NoDck, [op |-> 2, h |-> NULL, nx |-> NULL]}
               \cup {[op |-> 2, h |-> h, nx |-> Tg(h)] : h \in {x \in R : pm[NextLine(x)].p.ptr # NULL}}
        \* (only the checkpoints ThreadOK can accept for the record: a speed-up)
        dfor(s) == CASE s.i = 1 -> {NoDck}
                     [] s.pc \in {"D34", "D38"} -> {[op |-> 2, h |-> s.h, nx |-> s.nx]}
                     [] OTHER -> dks
    IN {sd \in UNION {{<<s, d>> : d \in dfor(s)} : s \in sts} : ThreadOK(t, sd[1], sd[2])}

\* IndInit: every IndInv state of the domain; each choice filtered as soon as
\* what it decides can be judged.
IndInit ==
    /\ crashes = 0 /\ tcrashes = 0
    /\ hist = <<>> /\ cut = [t \in Threads |-> FALSE]
    /\ tl = Sentinel /\ fl = [t \in Threads |-> NoFl]
    /\ pfo = [t \in Threads |-> {}] /\ orph = {}
    /\ \E path \in IndPaths :
       LET chain == <<Sentinel>> \o path IN
       \E n0 \in NextChoices(NextOf(chain, 0)), n1 \in NextChoices(NextOf(chain, 1)),
          n2 \in NextChoices(NextOf(chain, 2)), hl \in HeadLines(chain),
          r0 \in ReplChoices(NextOf(chain, 0)), r1 \in ReplChoices(NextOf(chain, 1)),
          r2 \in ReplChoices(NextOf(chain, 2)) :
         /\ pm = [ln \in LineIds |-> CASE ln = HeadLine -> hl
                                       [] ln = NextLine(0) -> n0
                                       [] ln = NextLine(1) -> n1
                                       [] ln = NextLine(2) -> n2
                                       [] ln = ReplLine(0) -> r0
                                       [] ln = ReplLine(1) -> r1
                                       [] OTHER -> r2]
         /\ MemInvNoThreads
         /\ MemInv
         /\ \E s1 \in Cands(1), s2 \in Cands(2) :
              /\ th = [t \in Threads |-> IF t = 1 THEN s1[1] ELSE s2[1]]
              /\ dck = [t \in Threads |-> IF t = 1 THEN s1[2] ELSE s2[2]]
\* (Every part of IndInv is decided above: the memory's by MemInvNoThreads and MemInv, each
\* thread's by Cands, TypeOK by construction.  TLC checks IndInv on every initial state as the
\* invariant, so a state built here that broke it would be reported, not skipped.)
=============================================================================

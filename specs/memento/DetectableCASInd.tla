-------------------------- MODULE DetectableCASInd --------------------------
(***************************************************************************)
(* Inductiveness of the detectable CAS's ExactlyOnce (issue 20, §4), in    *)
(* the two-word form the shipped code uses (Form = "twoWord", with the     *)
(* fixes of Findings 1-3).  DetectableCAS.cfg and the TwoWord cfgs check   *)
(* ExactlyOnce on the states reachable within their bounds; this module    *)
(* states it, strengthened, as an inductive invariant IndInv, and          *)
(* DetectableCASInd.cfg checks                                             *)
(*     IndInv /\ [Next]_vars => IndInv'                                    *)
(* with TLC as CheckpointInd does: INIT IndInit is every state of a        *)
(* bounded, type-correct domain that satisfies IndInv (not only the        *)
(* reachable ones), NEXT is DetectableCAS's own Next, the INVARIANT is     *)
(* IndInv, and the ACTION_CONSTRAINT IndDomain (on the source state only)  *)
(* keeps TLC from expanding successors that leave the domain, which it    *)
(* still checks against IndInv.                                            *)
(*                                                                         *)
(* THE SUB-CONFIGURATION (what this does NOT cover).  One thread, one      *)
(* location, values {0, 1}, one root operation of two CASes, workload      *)
(* "flip" (CAS 1: 0 -> 1, CAS 2: 1 -> 0, so CAS 2's annotated word carries *)
(* CAS 1's timestamp as its nonce), thread crashes and full crashes (with  *)
(* orphaned flushopts), the fixed algorithm.  Two threads on distinct      *)
(* locations interact only through the clock (which only grows: every     *)
(* clock constraint below is an upper bound that survives another thread's *)
(* rdtscp) and the full crash (which acts on each thread's lines and DRAM  *)
(* words separately), so the check covers them too.  NOT covered: threads *)
(* sharing a location, i.e. a CAS that fails on another thread's word,     *)
(* LOADHELP, the HELP array and §3.4's HelpInvariant (the two-word         *)
(* location's reason to exist, Finding 4); failed CASes (with "flip" and   *)
(* one thread no CAS fails, and IndInv says so: L30 and LOADHELP's labels  *)
(* are unreachable); the clear between root operations (E0-E3, own_floor,  *)
(* Finding 3's fix).  Those are checked by exploration only                *)
(* (DetectableCAS*.cfg); two threads of one CAS each sharing a location,   *)
(* with a failed CAS, LOADHELP and HELP, by DetectableCASInd2.tla.         *)
(*                                                                         *)
(* THE DOMAIN.  Timestamps and the clock in 0..ClockMax; crash counters 0  *)
(* (a state whose crash is used up has the same successors minus that     *)
(* crash); the ghosts no step reads to decide anything but themselves at   *)
(* one value: afail FALSE (only AbstractSpec reads it), gh empty (read     *)
(* only by HelpInvariant, by the helpers' ghost hn and by Crash's update   *)
(* of gh itself); pfo and orph hold only lines with pending stores (a      *)
(* flushopt of a line with nothing pending changes nothing: the state with *)
(* it dropped has the same successors, up to an orphan flush that is a    *)
(* no-op); registers a label never reads are at ThIdle's values.          *)
(*                                                                         *)
(* THE STRENGTHENING.  The location's words in order of the run are       *)
(* positions 0..4: Clean(0), D(1), Clean(1), D(2), Clean(0), D(i) being    *)
(* CAS i's annotated word (parity i % 2, the thread, new, nonce: 0 for     *)
(* CAS 1, CAS 1's persisted memento timestamp for CAS 2).                  *)
(*  - the location line is position pp persisted and positions pp+1..pv    *)
(*    pending (tagged at D's), at most two, an annotated word only last    *)
(*    (L33 flushes it before anything else is stored); CAS i's first plain *)
(*    CAS has become durable (ncom) iff pp >= 2i-1;                        *)
(*  - memento i holds nothing or a success word of parity i % 2, a pending *)
(*    one only over a persisted 0; a visible success word means CAS i is   *)
(*    durable; a cleaned location (pv >= 2i) means memento i persisted;    *)
(*    memento 2 written means memento 1 persisted with a smaller timestamp;*)
(*  - OWN is 0 or a visible memento word; a memento older than OWN is      *)
(*    persisted and its CAS's location cleaned (what L19 relies on, which *)
(*    returns OK without flushing);                                        *)
(*  - a CAS that returned OK has its memento persisted (its first plain    *)
(*    CAS durable, by the above); nothing returned Err; every CAS before   *)
(*    the current one and before the last invoked returned OK; LOCAL is 0  *)
(*    or the previous CAS's timestamp;                                     *)
(*  - per label: before the first plain CAS (L6 with memento 0, L12, L23,  *)
(*    L26) OWN is the previous CAS's memento word, the one whose parity    *)
(*    and nonce make D(k), and the location is at D(k) or just before it  *)
(*    (just before it at L23/L26); at L33/L34 D(k) is visible (at L34      *)
(*    persisted) and memento k is 0; at L36 memento k holds the thread's   *)
(*    ts; at L38 OWN and ts are memento k's word, memento k is persisted   *)
(*    or pending in pfo, and the word L38 compares with is D(k) whenever   *)
(*    the location holds D(k) (so it cleans exactly its own word).          *)
(*                                                                         *)
(* Not vacuous: mutants/DetectableCASIndNoFlushLoc.cfg (L33's flush        *)
(* removed) gets a successor breaking IndInv.  Sanity check, by hand: every *)
(* state the spec reaches from Init with this thread, 2 full and 2 thread   *)
(* crashes (SPECIFICATION Spec, INVARIANT IndInv) satisfies IndInv (2,874   *)
(* states), so the strengthening is not stronger than the protocol.        *)
(***************************************************************************)
EXTENDS DetectableCAS

CONSTANT ClockMax

T == CHOOSE t \in Threads : TRUE          \* the one thread of the domain
LocL == LocLine(CHOOSE l \in Locs : TRUE)
ML(k) == MmtLine(T, k)
PM(k) == pm[ML(k)].p                      \* memento k, persisted
VM(k) == Vis(pm, ML(k))                   \* memento k, visible
VisLoc == Vis(pm, LocL)
Written(k) == VM(k) # ZeroTs

ParOf(i) == i % 2
NewOf(i) == i % 2
SuccW(i, x) == TsWord(ParOf(i), FALSE, x)
\* n1: CAS 1's persisted memento timestamp (the nonce of CAS 2's word).
NonOfN(i, n1) == IF i = 1 THEN 0 ELSE n1
NonOf(i) == NonOfN(i, PM(1).ts)
DN(i, n1) == LocWordN(ParOf(i), T, NewOf(i), NonOfN(i, n1))
D(i) == DN(i, PM(1).ts)
\* The location's words in the order of the run: Clean(0), D(1), Clean(1), D(2), Clean(0).
WN(pos, n1) == IF pos % 2 = 0 THEN Clean((pos \div 2) % 2) ELSE DN((pos + 1) \div 2, n1)
TagAt(pos) == IF pos % 2 = 1 THEN Tag(T, (pos + 1) \div 2) ELSE NoTag
LocAtN(pp, pv, n1) == [p |-> WN(pp, n1),
                       s |-> [j \in 1 .. pv - pp |-> [w |-> WN(pp + j, n1), tag |-> TagAt(pp + j)]]]
LocAt(pp, pv) == LocAtN(pp, pv, PM(1).ts)
Shape(pp, pv) == pp <= pv /\ pv - pp <= 2 /\ (pv - pp = 2 => pp % 2 = 1)
\* The location's persisted and visible positions, read off its persisted word and the
\* number of pending stores (MemInv: the line is LocAt(PP, PV)).  Clean(0) is both position 0
\* and position 4: memento 1 tells them apart (written iff CAS 1 is durable, and at
\* position 4 persisted).
PosOf(w) == CASE w = Clean(0) -> IF Written(1) THEN 4 ELSE 0
              [] w = Clean(1) -> 2
              [] w.tid = T /\ w.par = 1 -> 1
              [] OTHER -> 3
Pos == <<PosOf(pm[LocL].p), PosOf(pm[LocL].p) + Len(pm[LocL].s)>>
PP == Pos[1]
PV == Pos[2]

MmtOK(k) ==
    /\ \/ PM(k) = ZeroTs
       \/ \E x \in 1 .. clock : PM(k) = SuccW(k, x)
    /\ \/ pm[ML(k)].s = <<>>
       \/ PM(k) = ZeroTs /\ \E x \in 1 .. clock : pm[ML(k)].s = <<[w |-> SuccW(k, x), tag |-> NoTag]>>

MemInv ==
    /\ PV <= 2 * NOps /\ Shape(PP, PV) /\ pm[LocL] = LocAt(PP, PV)
    /\ \A k \in 1 .. NOps : MmtOK(k)
    /\ \A k \in 1 .. NOps :
         /\ Written(k) => PP >= 2 * k - 1
         /\ PV >= 2 * k => PM(k) # ZeroTs /\ pm[ML(k)].s = <<>>
    /\ Written(2) => PM(1) # ZeroTs /\ PM(1).ts < VM(2).ts
    /\ \A ln \in LineIds \ ({LocL} \cup {ML(k) : k \in 1 .. NOps}) : pm[ln].s = <<>>
    /\ \A p \in {0, 1} : pm[HelpLine(p, T)].p = HelpWord(0)
    /\ pm[FloorLine(T)].p = ZeroTs
    /\ pm[RootLine(T)].p \in {RootWord(1, FALSE), RootWord(2, FALSE)}

OwnInv ==
    /\ own[T] = ZeroTs \/ \E k \in 1 .. NOps : Written(k) /\ own[T] = VM(k)
    /\ \A k \in 1 .. NOps : Written(k) /\ own[T].ts > VM(k).ts =>
                              pm[ML(k)].s = <<>> /\ PV >= 2 * k
    /\ pfo[T] \cup orph \subseteq {ML(k) : k \in 1 .. NOps}

GhostInv ==
    /\ \A i \in OpIdx :
         /\ ncom[T][i] = IF PP >= 2 * i - 1 THEN 1 ELSE 0
         /\ rep[T][i] \subseteq {"OK"}
         /\ "OK" \in rep[T][i] => i <= ninv[T] /\ PM(i) # ZeroTs /\ pm[ML(i)].s = <<>>
         /\ args[T][i] = IF i <= ninv[T] THEN [loc |-> LocL[2], old |-> (i - 1) % 2, new |-> i % 2]
                         ELSE NoArg
         /\ PV >= 2 * i - 1 => ninv[T] >= i
         /\ i < ninv[T] => rep[T][i] = {"OK"}

\* The thread, per label (k its current CAS).
Idle(h) == h = [ThIdle(h.rec) EXCEPT !.pc = h.pc, !.r = h.r, !.k = h.k]
BeforeFirst(k) ==
    /\ own[T] = IF k = 1 THEN ZeroTs ELSE TsWord(ParOf(k - 1), FALSE, NonOf(k))
    /\ PV \in {2 * k - 2, 2 * k - 1}
OwnRegs(h) == h.pown = own[T].par /\ h.town = own[T].ts

ThInv ==
    LET h == th[T]
        k == h.k
    IN
    /\ h.pc \in {"L6", "L12", "L23", "L26", "L33", "L34", "L36", "L38", "EF", "Done"}
    /\ h.r = IF h.pc = "Done" THEN 0 ELSE 1
    /\ h.pc \in {"EF", "Done"} =>
         /\ Idle(h) /\ h.k = 0 /\ PV = 2 * NOps
         /\ \A i \in OpIdx : rep[T][i] = {"OK"}
         /\ pm[RootLine(T)].p = IF h.pc = "Done" THEN RootWord(2, FALSE) ELSE RootWord(1, FALSE)
    /\ h.pc \notin {"EF", "Done"} =>
         /\ k \in OpIdx /\ pm[RootLine(T)].p = RootWord(1, FALSE)
         /\ \A j \in 1 .. k - 1 : rep[T][j] = {"OK"}
         /\ local[T] = 0 \/ (k >= 2 /\ local[T] = VM(k - 1).ts)
         /\ ninv[T] >= k - 1
         /\ h.pc # "L6" => ninv[T] >= k
         /\ ninv[T] = k - 1 => PV = 2 * k - 2 /\ ~Written(k)
         /\ h.pc \in {"L6", "L12"} /\ ~Written(k) => BeforeFirst(k)
    /\ h.pc = "L6" => Idle(h)
    /\ h.pc = "L6" /\ ~h.rec => ninv[T] = k - 1
    /\ h.pc \notin {"L6", "EF", "Done"} /\ ~h.rec => ninv[T] = k
    /\ h.pc = "L12" =>
         /\ h.rec /\ OwnRegs(h) /\ h.pt = VM(k) /\ h.tloc = local[T]
         /\ h = [ThIdle(TRUE) EXCEPT !.pc = "L12", !.r = 1, !.k = k, !.pown = h.pown,
                                     !.town = h.town, !.pt = h.pt, !.tloc = h.tloc]
    /\ h.pc \in {"L23", "L26", "L33", "L34", "L36"} =>
         /\ OwnRegs(h) /\ BeforeFirst(k) /\ ninv[T] = k /\ rep[T][k] = {}
         /\ h = [ThIdle(h.rec) EXCEPT !.pc = h.pc, !.r = 1, !.k = k, !.pown = h.pown,
                                      !.town = h.town, !.ts = h.ts]
    /\ h.pc \in {"L23", "L26"} => PV = 2 * k - 2 /\ ~Written(k) /\ h.ts = ZeroTs
    /\ h.pc = "L23" => h.rec
    /\ h.pc = "L26" => ~h.rec
    /\ h.pc \in {"L33", "L34"} => PV = 2 * k - 1 /\ ~Written(k) /\ h.ts = ZeroTs
    /\ h.pc = "L34" => PP = 2 * k - 1
    /\ h.pc = "L36" => PV = 2 * k - 1 /\ PP = 2 * k - 1 /\ Written(k) /\ h.ts = VM(k)
                       /\ (pm[ML(k)].s = <<>> \/ ML(k) \in pfo[T])
    /\ h.pc = "L38" =>
         /\ Written(k) /\ own[T] = VM(k) /\ h.ts = VM(k)
         /\ (pm[ML(k)].s = <<>> \/ ML(k) \in pfo[T])
         /\ Flip(h.pown) = ParOf(k) /\ h.town \in {0} \cup {VM(j).ts : j \in 1 .. NOps}
         /\ PV >= 2 * k - 1
         /\ PV = 2 * k - 1 => h.town = NonOf(k)
         /\ VisLoc = LocWordN(ParOf(k), T, NewOf(k), h.town) => VisLoc = D(k)
         /\ h = [ThIdle(h.rec) EXCEPT !.pc = "L38", !.r = 1, !.k = k, !.pown = h.pown,
                                      !.town = h.town, !.ts = h.ts]

IndInv ==
    /\ TypeOK
    /\ ExactlyOnce
    /\ MemInv
    /\ OwnInv
    /\ GhostInv
    /\ ThInv

-----------------------------------------------------------------------------
(* The bounded domain.                                                     *)

Ghosts0 ==
    /\ afail = [t \in Threads |-> [i \in OpIdx |-> FALSE]]
    /\ gh = [t \in Threads |-> <<>>]

IndDomain ==
    /\ clock <= ClockMax /\ crashes = 0 /\ tcrashes = 0
    /\ Ghosts0
    /\ \A ln \in pfo[T] \cup orph : pm[ln].s # <<>>

MmtChoices(k, cl) ==
    {[p |-> ZeroTs, s |-> <<>>]}
    \cup {[p |-> SuccW(k, x), s |-> <<>>] : x \in 1 .. cl}
    \cup {[p |-> ZeroTs, s |-> <<[w |-> SuccW(k, x), tag |-> NoTag]>>] : x \in 1 .. cl}

\* The thread's registers as IndInv fixes them per label (the rest at ThIdle's values).
ThChoices ==
    LET vk(k) == VM(k)
        R(p, rc, k, pw, tw, ts, pt, tl) ==
            [ThIdle(rc) EXCEPT !.pc = p, !.r = 1, !.k = k, !.pown = pw, !.town = tw, !.ts = ts,
                               !.pt = pt, !.tloc = tl]
    IN {[ThIdle(rc) EXCEPT !.pc = "EF", !.r = 1] : rc \in BOOLEAN}
       \cup {[ThIdle(rc) EXCEPT !.pc = "Done"] : rc \in BOOLEAN}
       \cup {R("L6", rc, k, 0, 0, ZeroTs, ZeroTs, 0) : rc \in BOOLEAN, k \in OpIdx}
       \cup {R("L12", TRUE, k, own[T].par, own[T].ts, ZeroTs, vk(k), local[T]) : k \in OpIdx}
       \cup UNION {{R(p, rc, k, own[T].par, own[T].ts, ts, ZeroTs, 0) : ts \in {ZeroTs, vk(k)}} :
                    p \in {"L23", "L26", "L33", "L34", "L36"}, rc \in BOOLEAN, k \in OpIdx}
       \cup {R("L38", rc, k, pw, tw, vk(k), ZeroTs, 0) :
               rc \in BOOLEAN, k \in OpIdx, pw \in {0, 1}, tw \in {0} \cup {vk(j).ts : j \in OpIdx}}

IndInit ==
    /\ clock \in 0 .. ClockMax
    /\ crashes = 0 /\ tcrashes = 0
    /\ Ghosts0
    /\ \E m1 \in MmtChoices(1, clock), m2 \in MmtChoices(2, clock), pp \in 0 .. 4, pv \in 0 .. 4 :
         /\ Shape(pp, pv)
         /\ pm = [ln \in LineIds |->
                    CASE ln = LocL -> LocAtN(pp, pv, m1.p.ts)
                      [] ln = ML(1) -> m1
                      [] ln = ML(2) -> m2
                      [] ln[1] = "help" -> [p |-> HelpWord(0), s |-> <<>>]
                      [] ln[1] = "root" -> [p |-> RootWord(1, FALSE), s |-> <<>>]
                      [] OTHER -> [p |-> ZeroTs, s |-> <<>>]]
         /\ MemInv
    /\ own \in [Threads -> {ZeroTs} \cup {VM(k) : k \in OpIdx}]
    /\ local \in [Threads -> {0} \cup {VM(k).ts : k \in OpIdx}]
    /\ pfo \in [Threads -> SUBSET {ln \in {ML(k) : k \in OpIdx} : pm[ln].s # <<>>}]
    /\ orph \in SUBSET {ln \in {ML(k) : k \in OpIdx} : pm[ln].s # <<>>}
    /\ OwnInv
    /\ ninv \in [Threads -> 0 .. NOps]
    /\ rep \in [Threads -> [OpIdx -> {{}, {"OK"}}]]
    /\ ncom = [t \in Threads |-> [i \in OpIdx |-> IF PP >= 2 * i - 1 THEN 1 ELSE 0]]
    /\ args = [t \in Threads |-> [i \in OpIdx |->
                 IF i <= ninv[t] THEN [loc |-> LocL[2], old |-> (i - 1) % 2, new |-> i % 2]
                 ELSE NoArg]]
    /\ GhostInv
    /\ th \in [Threads -> ThChoices]
    /\ IndInv
=============================================================================

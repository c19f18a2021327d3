------------------------- MODULE DetectableCASInd2 -------------------------
(***************************************************************************)
(* Inductiveness of the detectable CAS's ExactlyOnce with HELPING (issue   *)
(* 20, §4): two threads whose CASes contend on one location, so that the   *)
(* loser's LOADHELP helps the winner's CAS.  DetectableCASInd.tla checks   *)
(* one thread (no helping); this module states ExactlyOnce, strengthened,  *)
(* as an inductive invariant IndInv of the two-thread sub-configuration    *)
(* below, and DetectableCASInd2.cfg checks                                 *)
(*     IndInv /\ [Next]_vars => IndInv'                                    *)
(* as DetectableCASInd does: INIT IndInit is every state of a bounded,     *)
(* type-correct domain that satisfies IndInv (IndInit builds the states    *)
(* from the parts IndInv relates and filters them by IndInv), NEXT is      *)
(* DetectableCAS's own Next, the INVARIANT is IndInv and the               *)
(* ACTION_CONSTRAINT IndDomain is the domain on the source state.  (TLC    *)
(* 2.18 checks the invariant on a successor outside the domain too, and,   *)
(* the constraint being on the source only, it also expands that           *)
(* successor once: the check covers two steps from the domain, depth 2.)   *)
(* SYMMETRY: the two threads are interchangeable (IndInv, IndDomain and    *)
(* Next are symmetric); IndInit builds only the states whose winner, if    *)
(* any, is T1.                                                             *)
(*                                                                         *)
(* THE SUB-CONFIGURATION.  Two threads, one location, values {0, 1}, each  *)
(* thread one root operation of ONE detectable CAS 0 -> 1 (Workload        *)
(* "flip", OpsPerRoot = 1), the two-word form with the fixes of Findings   *)
(* 1-3, thread and full crashes, orphaned flushopts.  One CAS's first      *)
(* plain CAS wins (the "winner", a), writing D(a) = (1, a, 1, nonce 0);    *)
(* the other's (the loser) fails on D(a) and its LOADHELP (L27) helps it:  *)
(* L4 t_cur, L5 reload, L10 HELP[1][a] below t_cur, flushopt loc, L13 CAS  *)
(* HELP[1][a] to t_cur (its locked RMW persists D(a)) and flushopt it, L18 *)
(* clean to Clean(1) (its locked RMW persists HELP first); the loser then  *)
(* sees 1 # 0 and fails (L29-L31, Err).  The winner, crashed before its    *)
(* memento, recovers through L22-L24: its word is gone, HELP[1][a] > its   *)
(* t_own = 0, so it was helped (L34: memento, OK).  A failed CAS's         *)
(* recovery goes through L15-L17 (LOADHELP, Err); a full crash that drops  *)
(* the pending D(a) lets either thread win afterwards.                     *)
(*                                                                         *)
(* NOT COVERED (by exploration only, DetectableCAS*.cfg): more than one    *)
(* CAS per thread, so a nonzero t_own, the nonce and Finding 4's ABA, L19, *)
(* and §3.4's HelpInvariant over successive CASes of a thread (it reads    *)
(* the ghost gh, which the domain keeps empty); a help of parity 0         *)
(* (HELP[0] stays 0); a CAS that succeeds after being helped out of the    *)
(* way (with values {0, 1} the loser never sees 0 again); three threads;   *)
(* the clear between root operations (E0-E3, own_floor, Finding 3).        *)
(* IndInv says L11, H5's "changed" branch and L13's failure are            *)
(* unreachable here (one helper per word: nobody else moves HELP[1][a]).   *)
(*                                                                         *)
(* THE DOMAIN (IndDomain).  Timestamps and the clock in 0..ClockMax and    *)
(* canonical: every value 0..clock occurs (AllTs = 0 .. clock).  Every     *)
(* state is an order-preserving renaming of a canonical one, and IndInv    *)
(* and Next commute with those renamings (timestamps are only compared and *)
(* rdtscp returns a value above all of them: DetectableCAS's RankView).    *)
(* Crash counters 0 (a state whose crash is used up has the same           *)
(* successors minus that crash).  The ghosts no step reads to decide       *)
(* anything but themselves at one value: afail FALSE, gh empty, a helper's *)
(* hn 0.  At most MaxPendHelp pending stores on a HELP line; at most       *)
(* MaxOrph orphaned flushopts, each of a line with pending stores (an      *)
(* orphan of a line with nothing pending can only persist a later store of *)
(* that line at some moment, the step the domain's states with that store  *)
(* pending and the line orphaned check); a memento line in a thread's pfo  *)
(* only while it has a pending store (it is never stored to again, so the  *)
(* flushopt is a no-op).  Registers no step reads at one value: rec except *)
(* at L6 (with one CAS per root operation only L6 reads it), LOCAL         *)
(* (read only at L6, where IndInv says it is 0), OWN at Done, t_help at    *)
(* L18.  A successor outside the domain is checked against IndInv.         *)
(*                                                                         *)
(* THE STRENGTHENING.                                                      *)
(*  - The location's line is one of LocLineOf(k, a): Clean(0); D(a)        *)
(*    pending; D(a) persisted; Clean(1) pending over D(a); Clean(1)        *)
(*    persisted; a's CAS is durable (ncom) iff k >= 2, the loser's never.  *)
(*  - A memento holds nothing, a success word pending over nothing, or a   *)
(*    persisted success or failure word; success means the CAS is          *)
(*    durable, failure that its word was never in the location; OK was     *)
(*    reported only with the success word persisted, Err iff the memento   *)
(*    holds failure.  OWN is 0 or the success memento, LOCAL 0 or the      *)
(*    memento's timestamp.                                                 *)
(*  - HELP[1][t]: increasing values up to clock, pending ones under the    *)
(*    helper's flushopt (pending or orphaned); nonzero only once t's CAS   *)
(*    is durable (L13's locked RMW persisted the word first).              *)
(*  - The meaning of helping: once t's word is gone from the location      *)
(*    (Clean(1) after D(t), pending or not), t's memento holds success     *)
(*    persisted or HELP[1][t] holds a nonzero value persisted: whatever a  *)
(*    crash keeps, t's recovery finds that its CAS took effect.            *)
(*  - The rdtscp reads still around are distinct (the mementos', HELP's    *)
(*    values, a helper's t_cur before L13 stores it).                      *)
(*  - Per thread and label: before its first plain CAS (L26, L30 and       *)
(*    LOADHELP) the thread's word is not in the line, at L23 not visible;  *)
(*    at L33 it is there, at L34 durable; at L36/L38 the memento holds the *)
(*    success word, its flushopt pending unless persisted; L38 compares    *)
(*    with D(t) (t_own 0) whenever the line shows D(t).  A helper (L4-L18) *)
(*    holds the other thread's word, which is in the line; from L5 to L13  *)
(*    its t_cur is above HELP's values; L13 expects HELP's visible value   *)
(*    and loc's flushopt is pending; at L18 HELP shows t_cur, the word is  *)
(*    durable and HELP's flushopt is pending (so L18's RMW persists it     *)
(*    before it cleans).  LOADHELP entered from L27 or L17: memento empty  *)
(*    or holding failure.                                                  *)
(*                                                                         *)
(* Not vacuous: mutants/DetectableCASInd2NoHelpUpdate.cfg (HelpUpdate =    *)
(* FALSE: L13-L16 skipped) gets a successor breaking IndInv: a helper at   *)
(* L18 about to clean a word whose help it never recorded.  Sanity checks, *)
(* by hand (README.md): every state Spec reaches from Init at this bound   *)
(* with 2 full and 2 thread crashes (986,467) satisfies IndInv, and those  *)
(* of them in the domain (ghosts and crash counters aside, clock <= 3) are *)
(* IndInit states (CoveredReach); every state the inductive check meets    *)
(* that lies in the domain is an IndInit state (Covered).                  *)
(***************************************************************************)
EXTENDS DetectableCAS

CONSTANTS
    ClockMax,       \* the domain: timestamps and the clock in 0 .. ClockMax
    MaxPendHelp,    \* the domain: at most this many pending stores on a HELP line
    MaxOrph         \* the domain: at most this many orphaned flushopts

ASSUME /\ Cardinality(Threads) = 2 /\ Locs = {1} /\ Vals = {0, 1}
       /\ OpsPerRoot = 1 /\ RootOps = 1 /\ OneCasThreads = {} /\ Workload = "flip"
       /\ Form = "twoWord" /\ FailTs = "rdtscp" /\ OwnInit = "floor" /\ RedoSecond = "fixed"

T1 == CHOOSE t \in Threads : TRUE
Other(t) == CHOOSE u \in Threads : u # t
LocL == LocLine(1)
ML(t) == MmtLine(t, 1)                    \* thread t's (only) CAS memento
HL(t) == HelpLine(1, t)                   \* HELP[1][t]: D(t) has parity 1
D(t) == LocWordN(1, t, 1, 0)              \* t's annotated word (nonce: t_own = 0)
Arg1 == [loc |-> 1, old |-> 0, new |-> 1]
Succ(x) == TsWord(1, FALSE, x)            \* L34's memento (parity ~p_own = 1)
FailW(x) == TsWord(Even, TRUE, x)         \* L29's memento
Line(w) == [p |-> w, s |-> <<>>]
Ent(w) == [w |-> w, tag |-> NoTag]
IsSucc(w) == w.ts # 0 /\ ~w.fail
IsFail(w) == w.fail
NoPend(ln) == pm[ln].s = <<>>
VM(t) == Vis(pm, ML(t))
PM(t) == pm[ML(t)].p
HelpVis(t) == Vis(pm, HL(t)).ts           \* the newest of the line's values (they increase)
HelpPers(t) == pm[HL(t)].p.ts
Helping == {"H4", "H5", "H10", "H13", "H18"}

-----------------------------------------------------------------------------
(* The location.  Its line goes through the shapes LocLineOf(k, a), a the  *)
(* thread whose first plain CAS succeeds (the "winner"):                    *)
(*   0: Clean(0) persisted            1: D(a) pending over Clean(0)        *)
(*   2: D(a) persisted                3: Clean(1) pending over D(a)        *)
(*   4: Clean(1) persisted                                                 *)
(* and a's CAS is durable (ncom = 1) iff k >= 2.  Pos(t) is thread t's     *)
(* stage: k if t is the winner, else 0 (D(t) is not in the line).          *)

LocLineOf(k, a) ==
    CASE k = 0 -> Line(Clean(0))
      [] k = 1 -> [p |-> Clean(0), s |-> <<[w |-> D(a), tag |-> Tag(a, 1)]>>]
      [] k = 2 -> Line(D(a))
      [] k = 3 -> [p |-> D(a), s |-> <<Ent(Clean(1))>>]
      [] k = 4 -> Line(Clean(1))

NcomOf(k, a) == [t \in Threads |-> [i \in OpIdx |-> IF k >= 2 /\ t = a THEN 1 ELSE 0]]

\* (The winner, if any, is the thread ncom says is durable or whose word is pending.)
LocInv ==
    LET l == pm[LocL]
        a == IF \E t \in Threads : ncom[t][1] = 1 THEN CHOOSE t \in Threads : ncom[t][1] = 1
             ELSE IF l.s # <<>> /\ l.s[1].w.tid \in Threads THEN l.s[1].w.tid ELSE T1
    IN \E k \in 0 .. 4 : l = LocLineOf(k, a) /\ ncom = NcomOf(k, a)

\* Under LocInv: t's stage.
Pos(t) ==
    LET l == pm[LocL] IN
    IF ncom[t][1] = 1
    THEN IF l.p = Clean(1) THEN 4 ELSE IF l.s = <<>> THEN 2 ELSE 3
    ELSE IF l.s # <<>> /\ l.s[1].w = D(t) THEN 1 ELSE 0

-----------------------------------------------------------------------------
(* A thread's memento and HELP[1][t].                                      *)

MmtChoices(c) ==
    {Line(ZeroTs)}
    \cup {[p |-> ZeroTs, s |-> <<Ent(Succ(x))>>] : x \in 1 .. c}
    \cup {Line(Succ(x)) : x \in 1 .. c}
    \cup {Line(FailW(x)) : x \in 1 .. c}

MmtLineOK(m, c) ==
    \/ m = Line(ZeroTs)
    \/ m.p = ZeroTs /\ Len(m.s) = 1 /\ m.s[1].w.ts \in 1 .. c /\ m.s[1] = Ent(Succ(m.s[1].w.ts))
    \/ m.s = <<>> /\ m.p.ts \in 1 .. c /\ m.p \in {Succ(m.p.ts), FailW(m.p.ts)}

\* HELP[1][t]'s line: a persisted value and pending stores, increasing, all at most c.
HelpLineOK(l, c) ==
    /\ l.p = HelpWord(l.p.ts) /\ l.p.ts \in 0 .. c
    /\ \A j \in 1 .. Len(l.s) :
         /\ l.s[j] = Ent(HelpWord(l.s[j].w.ts)) /\ l.s[j].w.ts \in 1 .. c
         /\ l.s[j].w.ts > (IF j = 1 THEN l.p.ts ELSE l.s[j - 1].w.ts)

\* The lines the domain builds (at most n pending).
HelpChoices(c, n) ==
    UNION {{[p |-> HelpWord(x0), s |-> q] :
              q \in {<<>>}
                    \cup (IF n >= 1 THEN {<<Ent(HelpWord(x))>> : x \in x0 + 1 .. c} ELSE {})
                    \cup (IF n >= 2 THEN UNION {{<<Ent(HelpWord(x)), Ent(HelpWord(y))>> :
                                                   y \in x + 1 .. c} : x \in x0 + 1 .. c}
                          ELSE {})} :
           x0 \in 0 .. c}

\* The memory of thread t's CAS (pos: its stage; m: its memento line, hl: HELP[1][t]'s).
MemOKp(m, hl, pos, c) ==
    LET vm == IF m.s = <<>> THEN m.p ELSE m.s[Len(m.s)].w
        hv == IF hl.s = <<>> THEN hl.p.ts ELSE hl.s[Len(hl.s)].w.ts
    IN /\ MmtLineOK(m, c)
       /\ IsSucc(vm) => pos >= 2          \* a memento records success only once durable
       /\ IsFail(vm) => pos = 0           \* a failed CAS never wrote its word
       /\ HelpLineOK(hl, c)
       /\ hv > 0 => pos >= 2              \* a helper persists the word before HELP
       \* the heart of helping: once t's word is gone from the location, t's recovery
       \* can tell it took effect (memento or HELP, persisted)
       /\ pos >= 3 => IsSucc(m.p) \/ hl.p.ts > 0

MemOK(t) ==
    /\ MemOKp(pm[ML(t)], pm[HL(t)], Pos(t), clock)
    /\ pm[HelpLine(0, t)] = Line(HelpWord(0))
    /\ pm[FloorLine(t)] = Line(ZeroTs)

-----------------------------------------------------------------------------
(* A thread: its registers, OWN, LOCAL, pending flushopts and ghosts, as a *)
(* record e (Env(t) in a state).                                           *)

Regs(pc, rec, pown, town, pt, ts, hold, tcur, hth, hret) ==
    [ThIdle(rec) EXCEPT !.pc = pc, !.r = 1, !.k = 1, !.pown = pown, !.town = town, !.pt = pt,
                        !.ts = ts, !.hold = hold, !.tcur = tcur, !.hth = hth, !.hret = hret]

Env(t) == [th |-> th[t], own |-> own[t], local |-> local[t], rep |-> rep[t][1],
           ninv |-> ninv[t], pfo |-> pfo[t]]

ThOK(t, e) ==
    LET h == e.th
        u == Other(t)
        p == Pos(t)
        vm == VM(t)
        Plain(pc) == Regs(pc, h.rec, 0, 0, ZeroTs, ZeroTs, Clean(0), 0, 0, "none")
        \* hn is a ghost register (the gh entry a helper looks at): not constrained
        hh == [h EXCEPT !.hn = 0]
    IN
    /\ pm[RootLine(t)] = Line(RootWord(IF h.pc = "Done" THEN 2 ELSE 1, FALSE))
    /\ e.ninv \in {0, 1}
    /\ e.rep \in {{}, {"OK"}, {"Err"}}
    /\ e.rep = {"OK"} => IsSucc(PM(t)) /\ NoPend(ML(t))
    /\ (e.rep = {"Err"}) = IsFail(PM(t))
    /\ e.ninv = 0 => p = 0 /\ vm = ZeroTs /\ HelpVis(t) = 0 /\ h.pc = "L6"
    /\ e.own = ZeroTs \/ (IsSucc(vm) /\ e.own = vm)
    /\ e.local = 0 \/ (vm # ZeroTs /\ e.local = vm.ts)
    /\ h.pc \in {"L6", "L12", "L23", "L26", "L30", "L33", "L34", "L36", "L38", "EF", "Done"}
                \cup Helping
    /\ h.pc = "L6" =>
         /\ hh = Plain("L6") /\ e.pfo = {} /\ e.local = 0
         /\ ~h.rec => e.ninv = 0
    /\ h.pc = "L12" =>
         /\ hh = Regs("L12", h.rec, e.own.par, e.own.ts, vm, ZeroTs, Clean(0), 0, 0, "none")
         /\ e.pfo = {} /\ e.ninv = 1
    /\ h.pc \in {"L23", "L26", "L30", "L33", "L34"} =>
         /\ hh = Plain(h.pc) /\ e.pfo = {} /\ e.ninv = 1
         /\ e.own = ZeroTs /\ vm = ZeroTs
    /\ h.pc = "L23" => p \notin {1, 2}
    /\ h.pc \in {"L26", "L30"} => p = 0
    /\ h.pc = "L33" => p >= 1
    /\ h.pc = "L34" => p >= 2
    /\ h.pc \in {"L36", "L38"} =>
         /\ IsSucc(vm) /\ e.ninv = 1 /\ e.pfo \subseteq {ML(t)}
         /\ ~NoPend(ML(t)) => ML(t) \in e.pfo
    /\ h.pc = "L36" =>
         /\ hh = Regs("L36", h.rec, 0, 0, ZeroTs, vm, Clean(0), 0, 0, "none")
         /\ e.own = ZeroTs /\ e.rep = {}
    /\ h.pc = "L38" =>
         /\ hh = Regs("L38", h.rec, 0, h.town, ZeroTs, vm, Clean(0), 0, 0, "none")
         /\ e.own = vm /\ h.town \in {0, vm.ts}
         /\ p = 2 => h.town = 0
    /\ h.pc \in {"EF", "Done"} =>
         /\ hh = [ThIdle(h.rec) EXCEPT !.pc = h.pc, !.r = IF h.pc = "EF" THEN 1 ELSE 0]
         /\ e.pfo = {} /\ e.ninv = 1 /\ e.rep # {}
    /\ h.pc \in Helping =>
         /\ hh = Regs(h.pc, h.rec, 0, 0, h.pt, ZeroTs, D(u), h.tcur, h.hth, h.hret)
         /\ e.own = ZeroTs /\ e.ninv = 1 /\ p = 0 /\ Pos(u) >= 1
         /\ h.hret \in {"L27", "L17"}
         /\ h.hret = "L27" => h.pt = ZeroTs /\ vm = ZeroTs
         /\ h.hret = "L17" => h.pt = vm /\ IsFail(vm)
         /\ h.pc = "H4" => h.tcur = 0 /\ h.hth = 0 /\ e.pfo = {}
         /\ h.pc \in {"H5", "H10", "H13"} => h.tcur \in 1 .. clock /\ h.tcur > HelpVis(u)
         /\ h.pc \in {"H5", "H10"} => h.hth = 0 /\ e.pfo = {}
         /\ h.pc = "H13" => h.hth = HelpVis(u) /\ e.pfo = {LocL}
         /\ h.pc = "H18" => /\ h.tcur \in 1 .. clock /\ HelpVis(u) = h.tcur /\ Pos(u) >= 2
                            /\ e.pfo = {HL(u)}

OrphLines == {LocL} \cup {ML(t) : t \in Threads} \cup {HL(t) : t \in Threads}

OrphInv ==
    /\ orph \subseteq OrphLines
    /\ \A t \in Threads :
         /\ ~NoPend(ML(t)) => ML(t) \in pfo[t] \cup orph
         /\ ML(t) \in pfo[t] \cup orph => IsSucc(VM(t))
         /\ ~NoPend(HL(t)) => HL(t) \in pfo[Other(t)] \cup orph

\* Every timestamp is a copy of one rdtscp read, and no two of the reads still around are the
\* same: the mementos', HELP's values, a helper's t_cur not yet stored.
\* The sets a .. f are pairwise disjoint.
Disjoint(a, b, c, d, e, f) ==
    Cardinality(a \cup b \cup c \cup d \cup e \cup f)
      = Cardinality(a) + Cardinality(b) + Cardinality(c) + Cardinality(d) + Cardinality(e)
        + Cardinality(f)
MTs(t) == IF VM(t).ts = 0 THEN {} ELSE {VM(t).ts}
HVals(t) == ({pm[HL(t)].p.ts} \cup {e.w.ts : e \in Range(pm[HL(t)].s)}) \ {0}
TcOf(t) == IF th[t].pc \in {"H5", "H10", "H13"} THEN {th[t].tcur} ELSE {}
TsInv ==
    LET u == Other(T1) IN
    Disjoint(MTs(T1), MTs(u), HVals(T1), HVals(u), TcOf(T1), TcOf(u))

IndInv ==
    /\ TypeOK
    /\ ExactlyOnce
    /\ LocInv
    /\ \A t \in Threads :
         /\ MemOK(t)
         /\ ThOK(t, Env(t))
         /\ args[t][1] = IF ninv[t] = 1 THEN Arg1 ELSE NoArg
    /\ OrphInv
    /\ TsInv

-----------------------------------------------------------------------------
(* The bounded domain.                                                     *)

Ghosts0 ==
    /\ afail = [t \in Threads |-> [i \in OpIdx |-> FALSE]]
    /\ gh = [t \in Threads |-> <<>>]

IndDomainCore ==
    /\ Cardinality(orph) <= MaxOrph
    /\ \A ln \in orph : ~NoPend(ln)
    /\ \A t \in Threads :
         /\ ML(t) \in pfo[t] => ~NoPend(ML(t))
         /\ th[t].hn = 0
         /\ Len(pm[HL(t)].s) <= MaxPendHelp
         /\ th[t].pc # "L6" => ~th[t].rec
         /\ local[t] = 0
         /\ th[t].pc = "Done" => own[t] = ZeroTs
         /\ th[t].pc = "H18" => th[t].hth = 0
    /\ AllTs = 0 .. clock

IndDomain ==
    /\ clock <= ClockMax /\ crashes = 0 /\ tcrashes = 0
    /\ Ghosts0
    /\ IndDomainCore

\* Thread t's candidate records (the registers IndInv fixes per label computed, the rest chosen;
\* the dead ones at the domain's values).
Cands(t) ==
    LET vm == VM(t)
        u == Other(t)
        owns == {ZeroTs} \cup (IF IsSucc(vm) THEN {vm} ELSE {})
        reps == {{}, {"OK"}, {"Err"}}
        E(h, o, rp, ni, pf) ==
            [th |-> h, own |-> o, local |-> 0, rep |-> rp, ninv |-> ni, pfo |-> pf]
        pfM == IF NoPend(ML(t)) THEN {} ELSE {ML(t)}
        P1(pc, rc) == Regs(pc, rc, 0, 0, ZeroTs, ZeroTs, Clean(0), 0, 0, "none")
        hv == HelpVis(u)
        TC(pc) == CASE pc = "H4" -> {0} [] pc = "H18" -> {hv} [] OTHER -> hv + 1 .. clock
        HH(pc) == IF pc = "H13" THEN hv ELSE 0
        PF(pc) == CASE pc = "H13" -> {LocL} [] pc = "H18" -> {HL(u)} [] OTHER -> {}
    IN
       {E(P1("L6", rc), o, rp, ni, {}) : rc \in BOOLEAN, o \in owns, rp \in reps, ni \in {0, 1}}
       \cup {E(Regs("L12", FALSE, o.par, o.ts, vm, ZeroTs, Clean(0), 0, 0, "none"), o, rp, 1, {}) :
               o \in owns, rp \in reps}
       \cup {E(P1(pc, FALSE), ZeroTs, {}, 1, {}) : pc \in {"L23", "L26", "L30", "L33", "L34"}}
       \cup {E(Regs("L36", FALSE, 0, 0, ZeroTs, vm, Clean(0), 0, 0, "none"), ZeroTs, {}, 1, pfM)}
       \cup {E(Regs("L38", FALSE, 0, tw, ZeroTs, vm, Clean(0), 0, 0, "none"), vm, rp, 1, pfM) :
               tw \in {0, vm.ts}, rp \in {{}, {"OK"}}}
       \cup {E([ThIdle(FALSE) EXCEPT !.pc = "EF", !.r = 1], o, rp, 1, {}) :
               o \in owns, rp \in {{"OK"}, {"Err"}}}
       \cup {E([ThIdle(FALSE) EXCEPT !.pc = "Done"], ZeroTs, rp, 1, {}) : rp \in {{"OK"}, {"Err"}}}
       \cup UNION {{E(Regs(pc, FALSE, 0, 0, IF hr = "L17" THEN vm ELSE ZeroTs, ZeroTs, D(u),
                           tc, HH(pc), hr),
                      ZeroTs, IF hr = "L17" THEN {"Err"} ELSE {}, 1, PF(pc)) : tc \in TC(pc)} :
                   pc \in Helping, hr \in {"L27", "L17"}}

\* The domain's states, built from the parts IndInv relates, then filtered by IndInv.  With
\* symRed, only those in which T1 is the winner when there is one (each state of the domain is
\* such a state or its image under swapping the threads: SYMMETRY makes them one).
IndInitCore(symRed) ==
    \E k \in 0 .. 4, a \in Threads :
       LET T2 == Other(T1)
           PosP(t) == IF k >= 1 /\ t = a THEN k ELSE 0
       IN
       /\ k = 0 \/ symRed => a = T1
       /\ ncom = NcomOf(k, a)
       /\ \E m1 \in MmtChoices(clock), h1 \in HelpChoices(clock, MaxPendHelp) :
          /\ MemOKp(m1, h1, PosP(T1), clock)
          /\ \E m2 \in MmtChoices(clock), h2 \in HelpChoices(clock, MaxPendHelp) :
             /\ MemOKp(m2, h2, PosP(T2), clock)
             /\ \E rt \in [Threads -> {1, 2}] :
                /\ rt[T1] = 2 => m1.p # ZeroTs     \* Done: it returned, its memento says how
                /\ rt[T2] = 2 => m2.p # ZeroTs
                /\ pm = [ln \in LineIds |->
                           CASE ln = LocL -> LocLineOf(k, a)
                             [] ln = ML(T1) -> m1
                             [] ln = ML(T2) -> m2
                             [] ln = HL(T1) -> h1
                             [] ln = HL(T2) -> h2
                             [] ln[1] = "help" -> Line(HelpWord(0))
                             [] ln[1] = "root" -> Line(RootWord(rt[ln[2]], FALSE))
                             [] OTHER -> Line(ZeroTs)]
                /\ Disjoint(MTs(T1), MTs(T2), HVals(T1), HVals(T2), {}, {})
                /\ LET C1 == {e \in Cands(T1) : ThOK(T1, e)}
                       C2 == {e \in Cands(T2) : ThOK(T2, e)}
                   IN \E e1 \in C1, e2 \in C2 :
                      /\ th = [t \in Threads |-> IF t = T1 THEN e1.th ELSE e2.th]
                      /\ own = [t \in Threads |-> IF t = T1 THEN e1.own ELSE e2.own]
                      /\ local = [t \in Threads |-> IF t = T1 THEN e1.local ELSE e2.local]
                      /\ rep = [t \in Threads |->
                                  [i \in OpIdx |-> IF t = T1 THEN e1.rep ELSE e2.rep]]
                      /\ ninv = [t \in Threads |-> IF t = T1 THEN e1.ninv ELSE e2.ninv]
                      /\ pfo = [t \in Threads |-> IF t = T1 THEN e1.pfo ELSE e2.pfo]
                      /\ args = [t \in Threads |-> [i \in OpIdx |->
                                   IF ninv[t] = 1 THEN Arg1 ELSE NoArg]]
                      /\ orph \in {o \in SUBSET {ln \in OrphLines : ~NoPend(ln)} :
                                     Cardinality(o) <= MaxOrph}
                      /\ OrphInv
                      /\ IndDomainCore
                      /\ IndInv

IndInit ==
    /\ clock \in 0 .. ClockMax
    /\ crashes = 0 /\ tcrashes = 0
    /\ Ghosts0
    /\ IndInitCore(TRUE)

\* Sanity (by hand, not in a row): a state of the domain that satisfies IndInv is one IndInit
\* builds (up to the swap of the threads, which IndInitCore(FALSE) does not assume).
Covered == IndDomain /\ IndInv => IndInitCore(FALSE)
\* The same for a reachable state, whose ghosts and crash counters are free.
CoveredReach == clock <= ClockMax /\ IndDomainCore /\ IndInv => IndInitCore(FALSE)

=============================================================================

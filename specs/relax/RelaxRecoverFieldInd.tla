------------------------- MODULE RelaxRecoverFieldInd -------------------------
(***************************************************************************)
(* Inductiveness of Claim 2 (issue 20, §4): MirrorInvariants, "once some   *)
(* recoverField returned, SeqWindow and EqualSeqsEqualValues hold", with    *)
(* AccessAfterRecovery, for RelaxRecoverField.tla (Algorithm 6.2 with the   *)
(* window fix and the fixes of Findings R1, R2, Mirror with M1's).          *)
(* RelaxRecoverField.cfg checks them on the states reachable within its     *)
(* bounds; this module states them, strengthened, as an inductive          *)
(* invariant IndInv, and RelaxRecoverFieldInd.cfg checks                    *)
(*     IndInv /\ [Next]_vars => IndInv'                                    *)
(* with TLC, as MirrorInd.tla does for Mirror: INIT IndInit is every       *)
(* IndInv state of a bounded, type-correct domain, NEXT is                 *)
(* RelaxRecoverField's own Next, the INVARIANT is IndInv, and the          *)
(* ACTION_CONSTRAINT IndDomain (on the source state) keeps TLC from        *)
(* expanding successors that leave the domain; TLC still checks IndInv on  *)
(* them.                                                                   *)
(*                                                                         *)
(* The strengthening.  Before recovery (recovered = FALSE): no thread runs *)
(* Mirror's code; DRAM has not changed since the crash (only a successful  *)
(* line 5 changes it, and that recovers the field), so every attempt read  *)
(* S_D = DRAM; NVMM has at most one pending pair, line 4.1's bump          *)
(* <<V_NV, S_D+1>> of an in-window pair; an attempt past line 2 holds the  *)
(* visible pair, or the pair the bump replaced (then it is in the window  *)
(* and its stall count is at least 1); at lines 4.3/5 it holds the visible *)
(* pair, out of the window, at line 5 persisted.  After recovery: Mirror's *)
(* invariants and MirrorInd's strengthening (MirrorInd!GlobalInv, with     *)
(* DramDurable, and MirrorInd!ThreadInv per Mirror thread), and for a late *)
(* recoverField attempt t (one that read S_D before recovery, or runs     *)
(* again under relaxed tracking):                                          *)
(*  - Budget(t) = StallBound - stall[t] more NVMM modifications can happen *)
(*    before t's attempt ends (the stall bound), each +1 on NVMM's seq     *)
(*    (no line 4.1 succeeds after recovery), and DRAM advances only to     *)
(*    NVMM's pair.  So DRAM can come to hold t's (V_D, S_D) again only if  *)
(*    it does now, or it is the visible pair one ahead, or its seq is      *)
(*    Dist steps ahead of DRAM's with Ahead < Dist <= Ahead + Budget       *)
(*    (DramReach; Dist - Ahead - Budget is unchanged by other threads'     *)
(*    steps, so an unreachable S_D stays unreachable);                     *)
(*  - at line 4.1: NVMM's seq cannot meet S_NV within the budget           *)
(*    (VisAvoids), so the bump fails;                                      *)
(*  - at the re-read (R22), if DRAM can still hold (V_D, S_D): in the      *)
(*    window, NVMM's seq cannot meet S_NV once DRAM got there; out of it,  *)
(*    DRAM holds (V_D, S_D) now and (V_NV, S_NV) is the visible pair one   *)
(*    ahead (t helps a Mirror update in flight);                           *)
(*  - at lines 4.3/5, if DRAM can still hold (V_D, S_D): it does, and      *)
(*    (V_NV, S_NV) is the visible pair one ahead, at line 5 persisted      *)
(*    (Finding R1's fix), so line 5 is a helper's line 24.                 *)
(*                                                                         *)
(* The bound (RelaxRecoverFieldInd.cfg): 2 threads (symmetry set), values  *)
(* {0,1}, operations {cas, load}, 1 op each, SeqMod = 4, StallBound = 1,   *)
(* relaxed tracking (its steps include exact tracking's), all fixes on;    *)
(* DomCalls = "cas01" (the CI cfg) keeps the domain's threads to CAS(0->1), *)
(* "all" (RelaxRecoverFieldInd_deep.cfg) lets them hold any call.           *)
(* Reductions, each sound for this check (MirrorInd.tla argues the first   *)
(* three for Mirror; recoverField's steps commute with the same renamings: *)
(* InWindow depends on seq differences only, and a crash's DRAM ranges     *)
(* over every pair):                                                       *)
(*  - DRAM's pair is fixed at <<0, 1>>: every IndInv state is a renaming   *)
(*    (seq shift modulo 4, value swap) of one with that pair; after        *)
(*    recovery the pairs Mirror's registers and NVMM hold are in seqs 0..2 *)
(*    (at most one behind DRAM), before it NVMM's pair is any pair;        *)
(*  - crashes = 0, done = 0, the refinement's ghosts at one value (no step *)
(*    reads them; AbsMatchesMemory and Refinement are therefore left to    *)
(*    RelaxRecoverField.cfg);                                              *)
(*  - Mirror's dead registers cleared (MirrorInd!Locals); a thread in      *)
(*    recoverField holds Start(call);                                      *)
(*  - a late attempt after recovery whose (V_D, S_D) DRAM cannot hold      *)
(*    again (~DramReach) at R22, R43 or R5 has dead registers: R22 and R5  *)
(*    fail on DRAM # (V_D, S_D) and R43 reads NVMM only; the domain keeps  *)
(*    (V_NV, S_NV) = NoPair and (V_D, S_D) = <<0, 0>> (Dist 3, never       *)
(*    reachable) for it, and at R41 (V_D, S_D) = <<0, 0>> too (R41 reads   *)
(*    it only on a success, which IndInv excludes).                        *)
(* A successor outside the domain is checked against IndInv, not expanded. *)
(***************************************************************************)
EXTENDS RelaxRecoverField

CONSTANT DomCalls   \* "all": threads of the domain hold any call; "cas01": only CAS(0 -> 1)

MI == INSTANCE MirrorInd WITH DomSeqMax <- 2

Pairs == M!Pairs
DramFixed == <<0, 1>>
DeadD == <<0, 0>>    \* a (V_D, S_D) three seqs ahead of DramFixed: never reachable

Max(a, b) == IF a >= b THEN a ELSE b
Ahead == (PSeq(Visible) - PSeq(dram) + SeqMod) % SeqMod
Dist(s) == (s - PSeq(dram) + SeqMod) % SeqMod
Budget(st) == StallBound - st
\* DRAM holds d now or may hold it before an attempt with stall count st ends.
DramReach(d, st) ==
    \/ d = dram
    \/ Ahead = 1 /\ d = Visible
    \/ Dist(PSeq(d)) > Ahead /\ Dist(PSeq(d)) <= Ahead + Budget(st)
\* NVMM's seq does not meet n's in the next lo .. Budget(st) modifications.
VisAvoids(n, lo, st) == \A j \in lo .. Budget(st) : PSeq(n) # (PSeq(Visible) + j) % SeqMod
BumpOf(n, d) == <<PVal(n), Inc(PSeq(d))>>
Helping(d, n) == dram = d /\ n = Visible /\ PSeq(n) = Inc(PSeq(d))

\* Before recovery.
PreGlobal ==
    /\ Len(nvS) <= 1
    /\ nvS # <<>> => nvS[1] = <<PVal(nvP), Inc(PSeq(dram))>> /\ InWindow(PSeq(dram), PSeq(nvP))
PreThread(p, r, st) ==
    LET d == r.d
        n == r.n
    IN
    CASE p \in {"idle", "R1"} -> r = RFInit
      [] p = "R2" -> d = dram /\ n = NoPair
      [] p \in {"R22", "R41"} ->
           /\ d = dram /\ n \in Pairs /\ n # d
           /\ \/ n = Visible /\ (p = "R41" => InWindow(PSeq(d), PSeq(n)))
              \/ InWindow(PSeq(d), PSeq(n)) /\ Visible = BumpOf(n, d) /\ st >= 1
      [] p \in {"R43", "R5"} ->
           /\ d = dram /\ n = Visible /\ n # d /\ ~InWindow(PSeq(d), PSeq(n))
           /\ p = "R5" => nvP = n
      [] OTHER -> FALSE

\* After recovery.
PostThread(p, l, r, st) ==
    LET d == r.d
        n == r.n
    IN
    CASE p \in M!MirrorLabels -> r = RFInit /\ MI!ThreadInv(p, l)
      [] p = "R1" -> r = RFInit
      [] p = "R2" -> d \in Pairs /\ n = NoPair
      [] p = "R22" ->
           DramReach(d, st) =>
              /\ n \in Pairs /\ n # d
              /\ IF InWindow(PSeq(d), PSeq(n))
                 THEN VisAvoids(n, Max(0, Dist(PSeq(d)) - Ahead), st)
                 ELSE Helping(d, n)
      [] p = "R41" -> n \in Pairs /\ VisAvoids(n, 0, st)
      [] p \in {"R43", "R5"} ->
           DramReach(d, st) => Helping(d, n) /\ (p = "R5" => nvP = n)
      [] OTHER -> FALSE

ThreadOK(p, l, r, st) ==
    /\ p \notin {"R2", "R22", "R41", "R43", "R5"} => st = 0
    /\ IF recovered THEN PostThread(p, l, r, st) ELSE PreThread(p, r, st)

IndInv ==
    /\ TypeOK
    /\ MirrorInvariants /\ AccessAfterRecovery
    /\ IF recovered THEN MI!GlobalInv ELSE PreGlobal
    /\ \A t \in Threads : ThreadOK(pc[t], lc[t], rf[t], stall[t])
    /\ \A t \in Threads : pc[t] # "idle" => done[t] < OpsPerThread

-----------------------------------------------------------------------------
(* The bounded domain.                                                     *)

DomCallOK(l) == DomCalls = "all" \/ l.call \in {M!Call("cas", 0, 1), M!NoCall}
StartLocals == {l \in {M!Start(c) : c \in M!Calls} : DomCallOK(l)}
Dead == [d |-> DeadD, n |-> NoPair]
\* The domain's thread states, as a predicate (ThreadDomain) and as a set
\* that covers it (ThreadCover, for IndInit).  After recovery a late
\* attempt's (V_D, S_D) is one DRAM may hold, or the visible pair (line 3
\* then returns), or dead; its registers are dead when DRAM cannot hold it.
\* (A constant-level function: TLC computes it once.)
MirrorLocals == [p \in M!MirrorLabels \ {"L6", "L7", "L10", "L11"} |->
                    {l \in MI!Locals(p) : DomCallOK(l)}]
LiveD(d, st) == d = Visible \/ DramReach(d, st)
ThreadDomain(rec, p, l, r, st) ==
    /\ st \in 0 .. StallBound
    /\ CASE p \in M!MirrorLabels \ {"L6", "L7", "L10", "L11"} ->
              /\ rec \/ p = "idle"
              /\ r = RFInit /\ st = 0 /\ l \in MirrorLocals[p]
         [] p = "R1" -> l \in StartLocals /\ r = RFInit /\ st = 0
         [] p = "R2" -> /\ l \in StartLocals /\ r.n = NoPair
                       /\ IF rec THEN r.d = DeadD \/ (r.d \in Pairs /\ LiveD(r.d, st))
                                 ELSE r.d \in Pairs
         [] p \in {"R22", "R43", "R5"} ->
              /\ l \in StartLocals
              /\ IF rec THEN r = Dead \/ (r.d \in Pairs /\ r.n \in Pairs /\ DramReach(r.d, st))
                        ELSE r.d \in Pairs /\ r.n \in Pairs
         [] p = "R41" ->
              /\ l \in StartLocals /\ r.n \in Pairs
              /\ IF rec THEN r.d = DeadD ELSE r.d \in Pairs
         [] OTHER -> FALSE
ThreadCover ==
    {[pc |-> s.pc, lc |-> s.lc, rf |-> RFInit, st |-> 0] : s \in MI!ThreadStates}
    \cup {[pc |-> p, lc |-> l, rf |-> r, st |-> s] :
            p \in RFLabels, l \in StartLocals, s \in 0 .. StallBound,
            r \in {RFInit} \cup [d : Pairs, n : Pairs \cup {NoPair}]}

GhostsFixed ==
    /\ areg = InitVal /\ aop = [t \in Threads |-> M!Abs!NoOp]
    /\ alast = [t \in Threads |-> M!Abs!NoRet] /\ nvOwner = NoThread

NvPairs(rec) == IF rec THEN MI!DomPairs ELSE Pairs

IndDomain ==
    /\ dram = DramFixed /\ crashes = 0 /\ \A t \in Threads : done[t] = 0
    /\ nvP \in NvPairs(recovered) /\ \A k \in 1 .. Len(nvS) : nvS[k] \in NvPairs(recovered)
    /\ \A t \in Threads : ThreadDomain(recovered, pc[t], lc[t], rf[t], stall[t])
    /\ GhostsFixed

\* IndInit: every IndInv state of the domain (the shared part first, then
\* each thread among the states ThreadOK allows for it).
IndInit ==
    /\ dram = DramFixed
    /\ recovered \in BOOLEAN
    /\ nvP \in NvPairs(recovered)
    /\ nvS \in {<<>>} \cup {<<q>> : q \in NvPairs(recovered)}
    /\ IF recovered THEN MI!GlobalInv ELSE PreGlobal
    /\ crashes = 0
    /\ done = [t \in Threads |-> 0]
    /\ GhostsFixed
    /\ \E ts \in [Threads -> {s \in ThreadCover : /\ ThreadDomain(recovered, s.pc, s.lc, s.rf, s.st)
                                                /\ ThreadOK(s.pc, s.lc, s.rf, s.st)}] :
         /\ pc = [t \in Threads |-> ts[t].pc]
         /\ lc = [t \in Threads |-> ts[t].lc]
         /\ rf = [t \in Threads |-> ts[t].rf]
         /\ stall = [t \in Threads |-> ts[t].st]
    /\ IndInv
=============================================================================

------------------------------ MODULE MirrorInd ------------------------------
(***************************************************************************)
(* Inductiveness of Mirror's safety invariants (issue 20, §4).  Mirror.cfg *)
(* checks SeqWindow, EqualSeqsEqualValues and DramDurable on the states    *)
(* reachable within its bounds; this module states them, strengthened, as  *)
(* an inductive invariant IndInv and MirrorInd.cfg checks                  *)
(*     IndInv /\ [Next]_vars => IndInv'                                    *)
(* with TLC: INIT IndInit is every state of a bounded, type-correct domain *)
(* that satisfies IndInv (not only the reachable ones), NEXT is Mirror's   *)
(* own Next, the INVARIANT is IndInv, and the ACTION_CONSTRAINT IndDomain  *)
(* (on the source state only) stops TLC from expanding successors that     *)
(* leave the domain; TLC still checks IndInv on them.  (A plain CONSTRAINT *)
(* would not do: TLC checks no invariant on a state outside it.)  A pass   *)
(* means no *)
(* IndInv state of the domain has a successor violating IndInv: the        *)
(* invariants hold in every reachable state by induction, not only within  *)
(* a depth bound.                                                          *)
(*                                                                         *)
(* The bound (MirrorInd.cfg): 2 threads, values {0,1}, operations {cas,   *)
(* load} (store and fetch_add run the same lines 5-47; only their S0 and   *)
(* line-33 retry choose `expected`), lines 5-7 and 9-11 atomic,            *)
(* Line47 = "retry",                                                       *)
(* FlushBeforeDram (the CI model's algorithm), SeqMod = 8, every sequence  *)
(* number in 0..DomSeqMax = 0..2, with DRAM's pair fixed at <<0, 1>>, so  *)
(* what a thread remembers is at most 1 behind DRAM.  `Ge`, "not behind   *)
(* modulo SeqMod", is the order of naturals there.                         *)
(*                                                                         *)
(* Reductions that keep the domain enumerable, each sound for this check:  *)
(*  - DRAM's pair is fixed: Next commutes with adding a constant to every  *)
(*    sequence number (modulo SeqMod) and with swapping the values 0 and 1 *)
(*    (the calls are closed under both, IndInv is invariant under both),   *)
(*    so every IndInv state whose registers are at most 1 behind DRAM is   *)
(*    such a renaming of a domain state.                                   *)
(*  - crashes = 0 and done = 0 for every thread: a state with a crash or   *)
(*    an operation used up has the same successors minus Crash or Invoke,  *)
(*    and IndInv does not read either counter beyond its type.            *)
(*  - The ghost variables of the refinement mapping (areg, aop, alast,     *)
(*    nvOwner) take one value: no non-ghost part of any step reads them    *)
(*    (DramCas and CrashGhost only write them), and IndInv does not        *)
(*    mention them, so the non-ghost successors and IndInv' are the same   *)
(*    for every ghost value.  AbsIsDram (the refinement mapping) is        *)
(*    therefore not part of IndInv; Mirror.cfg checks it.                  *)
(*  - Registers a label never reads again are in their cleared form       *)
(*    (as Restart/LInit leave them): at "Ret" all but `call` and `ret`;    *)
(*    after a failed line 40 all but the call's, and `pwb` at "L42".       *)
(* A successor outside the domain (e.g. DRAM moved on, or dead registers   *)
(* not cleared) is still checked against IndInv; it is only not expanded.  *)
(*                                                                         *)
(* The strengthening says, per thread and label, what the thread's         *)
(* registers know: every pair it read or wrote (`Remembered`) is never     *)
(* ahead of the visible NVMM pair it was read from and agrees with NVMM,   *)
(* the persisted mark and DRAM wherever their seqs meet it (a seq names    *)
(* one pair between crashes), and the few implications that make a DWCAS  *)
(* succeed only where Mirror's argument says it can (e.g. line 24's        *)
(* helper finds DRAM unchanged only if its fence persisted rep_p).         *)
(***************************************************************************)
EXTENDS Mirror

CONSTANT DomSeqMax   \* the domain's sequence numbers: 0 .. DomSeqMax

DomSeqs == 0 .. DomSeqMax
DomPairs == Vals \X DomSeqs

\* "seq a is not behind seq b" (modulo SeqMod; within the domain, a >= b):
\* a is at most half the modulus ahead of b.  (RelaxRecoverFieldInd, with
\* SeqMod = 4, needs the half itself: a register 2 behind NVMM is normal.)
Ge(a, b) == (a - b + SeqMod) % SeqMod <= SeqMod \div 2

\* A pair agrees with memory: wherever NVMM's visible pair, its persisted
\* mark or DRAM has the pair's seq, it is that pair.
Agrees(p) ==
    /\ PSeq(Visible) = PSeq(p) => Visible = p
    /\ PSeq(nvP) = PSeq(p) => nvP = p
    /\ PSeq(dram) = PSeq(p) => dram = p

\* The global part: Mirror's invariants and the shape of the line.
GlobalInv ==
    /\ SeqWindow /\ EqualSeqsEqualValues /\ DramDurable
    /\ Len(nvS) <= 1
    /\ nvS # <<>> => PSeq(nvS[1]) = Inc(PSeq(nvP))

\* What thread t's registers l at label p know.
RepP(l) == <<l.pV, l.pS>>                   \* rep_p, read at lines 5-7
RepV(l) == <<l.vV, l.vS>>                   \* rep_v, read at lines 9-11
After(l) == <<l.nw, Inc(l.pS)>>             \* the pair line 40 writes
ThreadInv(p, l) ==
    CASE p \in {"idle", "S0", "LD", "L5", "Ret"} -> TRUE
      [] p = "L9" -> Ge(PSeq(Visible), l.pS) /\ Agrees(RepP(l))
      [] p \in {"L21", "L24"} ->
           /\ l.pS = Inc(l.vS)
           /\ Ge(PSeq(Visible), l.pS) /\ Ge(PSeq(dram), l.vS)
           /\ Agrees(RepP(l)) /\ Agrees(RepV(l))
           /\ p = "L21" => l.pwb = RepP(l)
           /\ p = "L24" => (dram = RepV(l) => nvP = RepP(l))
      [] p = "L40" ->
           /\ l.pS = l.vS /\ l.pV = l.vV /\ l.pV = l.exp /\ l.bef = RepP(l)
           /\ Ge(PSeq(Visible), l.pS) /\ Ge(PSeq(dram), l.pS) /\ Agrees(RepP(l))
      [] p \in {"L42", "L43"} ->
           IF l.res
           THEN /\ l.pS = l.vS /\ l.pV = l.vV /\ l.pV = l.exp /\ l.bef = RepP(l)
                /\ Ge(PSeq(Visible), Inc(l.pS)) /\ Ge(PSeq(dram), l.pS)
                /\ Agrees(RepP(l)) /\ Agrees(After(l))
                /\ dram = RepP(l) => Visible = After(l)
                /\ p = "L42" => l.pwb = After(l)
                /\ p = "L43" => (dram = RepP(l) => nvP = After(l))
           ELSE p = "L42" => Ge(PSeq(Visible), PSeq(l.pwb)) /\ Agrees(l.pwb)
      [] OTHER -> FALSE

IndInv ==
    /\ TypeOK
    /\ GlobalInv
    /\ \A t \in Threads : ThreadInv(pc[t], lc[t])
    /\ \A t \in Threads : pc[t] # "idle" => done[t] < OpsPerThread

-----------------------------------------------------------------------------
(* The bounded domain, label by label, registers in their live form.       *)

CasCalls == {c \in Calls : c.op = "cas"}
UpdCalls == {c \in Calls : c.op \in {"cas", "store"}}
\* Registers at line 5 (Start, or Restart after a retry): cas keeps its
\* old/new, store its new and any `expected` line 33 adopted.
AtL5 == {Start(c) : c \in CasCalls}
        \cup {[Start(c) EXCEPT !.exp = e] : c \in UpdCalls \ CasCalls, e \in Vals}
Locals(p) ==
    CASE p = "idle" -> {LInit}
      [] p = "S0" -> {Start(c) : c \in {c \in Calls : c.op = "store"}}
      [] p = "LD" -> {Start(c) : c \in {c \in Calls : c.op = "load"}}
      [] p = "L5" -> AtL5
      [] p = "L9" -> {[l EXCEPT !.pS = s, !.pS2 = s, !.pV = v] : l \in AtL5, s \in DomSeqs, v \in Vals}
      [] p \in {"L21", "L24"} ->
           {[l EXCEPT !.pS = Inc(s), !.pS2 = Inc(s), !.pV = v, !.vS = s, !.vS2 = s, !.vV = w,
                      !.pwb = IF p = "L21" THEN <<v, Inc(s)>> ELSE NoPair] :
              l \in AtL5, s \in {x \in DomSeqs : Inc(x) \in DomSeqs}, v \in Vals, w \in Vals}
      [] p = "L40" ->
           {[l EXCEPT !.pS = s, !.pS2 = s, !.pV = l.exp, !.vS = s, !.vS2 = s, !.vV = l.exp,
                      !.bef = <<l.exp, s>>] : l \in AtL5, s \in DomSeqs}
      [] p \in {"L42", "L43"} ->
           {[l EXCEPT !.pS = s, !.pS2 = s, !.pV = l.exp, !.vS = s, !.vS2 = s, !.vV = l.exp,
                      !.res = TRUE, !.bef = <<l.exp, s>>,
                      !.pwb = IF p = "L42" THEN <<l.nw, Inc(s)>> ELSE NoPair] :
              l \in AtL5, s \in {x \in DomSeqs : Inc(x) \in DomSeqs}}
           \cup
           (IF p = "L42" THEN {[l EXCEPT !.pwb = q] : l \in AtL5, q \in DomPairs} ELSE AtL5)
      [] p = "Ret" -> {[LInit EXCEPT !.call = c, !.ret = r] : c \in Calls, r \in Vals}

ThreadStates == UNION {{[pc |-> p, lc |-> l] : l \in Locals(p)} : p \in MirrorLabels \ {"L6", "L7", "L10", "L11"}}

\* The ghosts' one value (see the header).
GhostsFixed ==
    /\ areg = InitVal /\ aop = [t \in Threads |-> Abs!NoOp]
    /\ alast = [t \in Threads |-> Abs!NoRet] /\ nvOwner = NoThread

\* The domain as a predicate (the CONSTRAINT): the shared pairs in range,
\* DRAM's fixed, no crash or operation used, every thread's registers in the
\* live form of its label.
DramFixed == <<0, DomSeqMax - 1>>
IndDomain ==
    /\ dram = DramFixed /\ crashes = 0 /\ \A t \in Threads : done[t] = 0
    /\ nvP \in DomPairs /\ \A k \in 1 .. Len(nvS) : nvS[k] \in DomPairs
    /\ \A t \in Threads : lc[t] \in Locals(pc[t])
    /\ GhostsFixed

\* IndInit: every IndInv state of the domain.  The shared pairs first, then
\* each thread's label and registers among those ThreadInv allows for them
\* (TLC evaluates each `\in` set with the variables bound before it).
IndInit ==
    /\ dram = DramFixed
    /\ nvP \in DomPairs
    /\ nvS \in {<<>>} \cup {<<q>> : q \in DomPairs}
    /\ GlobalInv
    /\ crashes = 0
    /\ done = [t \in Threads |-> 0]
    /\ \E ts \in [Threads -> {s \in ThreadStates : ThreadInv(s.pc, s.lc)}] :
         /\ pc = [t \in Threads |-> ts[t].pc]
         /\ lc = [t \in Threads |-> ts[t].lc]
    /\ GhostsFixed
    /\ IndInv
=============================================================================

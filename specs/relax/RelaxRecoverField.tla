-------------------------- MODULE RelaxRecoverField --------------------------
(***************************************************************************)
(* RELAX's lazy recovery of one `patomic` field, seed 002 §6.3:            *)
(* recoverField (Algorithm 6.2) with the sequence-window fix, run by       *)
(* several threads concurrently with Mirror's operations (Mirror.tla,      *)
(* INSTANCEd unchanged: "Mirror's CAS implementation (which RELAX does not *)
(* change)", Chapter 7), after crashes that leave DRAM arbitrary.          *)
(*                                                                         *)
(* The machine is Mirror.tla's, except the crash: NVMM keeps a Px86 image  *)
(* of the line as there, and the DRAM pair becomes an arbitrary (value,    *)
(* seq) from Vals \X (0 .. SeqMod-1) ("we assume the content of the DRAM  *)
(* after a crash is arbitrary", §3.1).  There is no eager copy: every      *)
(* operation first asks the tracking mechanism (§6.4) whether the field   *)
(* was recovered since the crash, and runs recoverField if not.            *)
(*                                                                         *)
(* Tracking is modelled by what Claim 1 guarantees of all five variants,   *)
(* not by any one of them: `recovered` becomes TRUE when some thread       *)
(* returns from recoverField (line 3 or a successful line 5) and is FALSE  *)
(* after a crash; an operation that finds it FALSE runs recoverField, one  *)
(* that finds it TRUE may still run it (a variant may answer "not          *)
(* recovered" again: a marked pointer reached through a second parent,     *)
(* §6.4.3), which is how "subsequent calls" of recoverField after the      *)
(* first are explored.  Claim 1 itself (per variant) is not checked here.  *)
(*                                                                         *)
(* Algorithm 6.2, the pc values its line numbers:                         *)
(*  R1   line 1: read (V_D, S_D) from DRAM (one 16-byte atomic read)       *)
(*  R2   line 2: read (V_NV, S_NV) from NVMM (one 16-byte atomic read), and *)
(*       the tests of lines 3 (equal: return) and 4 (the window           *)
(*       0 < (S_D - S_NV) mod SeqMod <= SeqMod/2)                          *)
(*  R41  line 4.1: CAS(NVMM.seq, S_NV, S_D+1) (an 8-byte CAS of the seq    *)
(*       word; the value word is untouched); on failure goto 1; line 4.2   *)
(*       S_NV := S_D+1 in the same step (a register)                       *)
(*  R5   line 5: DWCAS(DRAM, (V_D, S_D), (V_NV, S_NV)); on failure goto 1  *)
(* recoverField issues no FLUSH or FENCE (§3.1: RELAX's extensions need    *)
(* not persist); line 4.1's store is a store to the NVMM line like any     *)
(* other and persists, or not, as Px86 allows.                             *)
(*                                                                         *)
(* The stall bound (Claim 2's assumption, "no thread is halted during its  *)
(* recovery execution while other threads execute 2^63 modifications of  *)
(* this field"), scaled to SeqMod: `stall[t]` counts the modifications of  *)
(* NVMM by other threads since t's line 1 (a retry from line 1 starts a    *)
(* new count); a step that would modify NVMM while some thread in lines    *)
(* 2-5 has already seen StallBound of them is not taken.  Claim 2 asks for *)
(* fewer than SeqMod/2, i.e. StallBound = SeqMod/2 - 1; README.md reports *)
(* what TLC finds for larger bounds.                                       *)
(*                                                                         *)
(* Switches: WindowFix = FALSE drops lines 4-4.2 altogether (the naive    *)
(* 16-byte-CAS recovery of §6.3.1; RelaxNaiveDWCAS.tla explains Figure    *)
(* 6.2's counterexample); SeqBump = FALSE keeps line 4's test but skips    *)
(* lines 4.1-4.2 (the mutant "drop the sequence bump").  Two fixes of the *)
(* algorithm as written, each found by TLC (README.md, Findings R1, R2):   *)
(* RFFlush adds FLUSH+FENCE of the NVMM pair before line 5 (R43), and      *)
(* Revalidate re-reads DRAM after line 2 (R22).  The CI model runs with    *)
(* both; the mutants run without each.                                     *)
(*                                                                         *)
(* Checked: Mirror's invariants once the field is recovered (Claim 2:      *)
(* SeqWindow, EqualSeqsEqualValues, and NvmmChangesOnlyWhenEqual as an    *)
(* action property), the refinement of DurableRegister with the abstract  *)
(* register equal to NVMM's value until the first recoverField returns    *)
(* and to DRAM's value from then on (AbsMatchesMemory), and the stall      *)
(* bound's bookkeeping.  Not checked: several fields, the tracking         *)
(* variants one by one, the MarkablePatomicPointer recoverField            *)
(* (Algorithm 6.3, which writes a marked value), memory management.       *)
(*                                                                         *)
(* Actions a trace maps to: Mirror.tla's thread steps, and here RInvoke(t, *)
(* c) (with or without a recoverField call), R1(t), R2(t), R41(t), R5(t),  *)
(* RCrash.                                                                 *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets, TLC

CONSTANTS
    Threads, NoThread, Vals, InitVal, SeqMod, OpKinds, OpsPerThread, MaxCrashes,
    FlushBeforeDram, Line47, SplitReads,
    StallBound,   \* most NVMM modifications a thread in recoverField may sit through
    WindowFix,    \* lines 4-4.2 present (FALSE: the naive recovery)
    SeqBump,      \* lines 4.1-4.2 present (FALSE: the mutant without the bump)
    RFFlush,      \* FLUSH+FENCE of the NVMM pair before line 5 (the fix of Finding R1)
    Revalidate,   \* re-read DRAM after line 2, goto 1 if it changed (the fix of Finding R2)
    Tracking      \* "exact": recoverField iff not recovered; "relaxed": also after

ASSUME /\ StallBound \in Nat /\ WindowFix \in BOOLEAN /\ SeqBump \in BOOLEAN
       /\ RFFlush \in BOOLEAN /\ Revalidate \in BOOLEAN /\ Tracking \in {"exact", "relaxed"}

VARIABLES
    nvP, nvS, dram, pc, lc, done, crashes, areg, aop, alast, nvOwner,
    recovered,   \* tracking: some recoverField returned since the last crash
    rf,          \* [Threads -> [d, n]]: recoverField's registers (V_D,S_D), (V_NV,S_NV)
    stall        \* [Threads -> Nat]: NVMM modifications seen during the current attempt

M == INSTANCE Mirror

vars == <<nvP, nvS, dram, pc, lc, done, crashes, areg, aop, alast, nvOwner,
          recovered, rf, stall>>

PVal(p) == p[1]
PSeq(p) == p[2]
Inc(s) == (s + 1) % SeqMod
Visible == M!Visible
NoPair == M!NoPair
RFInit == [d |-> NoPair, n |-> NoPair]
RFLabels == {"R1", "R2", "R22", "R41", "R43", "R5"}

\* Line 4: could S_NV reach S_D in at most SeqMod/2 updates?
InWindow(sd, sn) ==
    LET x == (sd - sn + SeqMod) % SeqMod IN 0 < x /\ x <= SeqMod \div 2

\* After recoverField returns, the operation goes on with Mirror's code.
Resume(t) == pc' = [pc EXCEPT ![t] = M!Entry(lc[t].call)]

RInvoke(t, c) ==
    /\ pc[t] = "idle" /\ done[t] < OpsPerThread
    /\ \E first \in (IF ~recovered THEN {"R1"}
                     ELSE IF Tracking = "exact" THEN {M!Entry(c)}
                     ELSE {"R1", M!Entry(c)}) :
         pc' = [pc EXCEPT ![t] = first]
    /\ lc' = [lc EXCEPT ![t] = M!Start(c)]
    /\ aop' = [aop EXCEPT ![t] = M!Abs!NewOp(c, areg)]
    /\ UNCHANGED <<nvP, nvS, dram, done, crashes, areg, alast, nvOwner, recovered, rf>>

\* Line 1.
R1(t) ==
    /\ pc[t] = "R1"
    /\ rf' = [rf EXCEPT ![t] = [d |-> dram, n |-> NoPair]]
    /\ pc' = [pc EXCEPT ![t] = "R2"]
    /\ UNCHANGED <<nvP, nvS, dram, lc, done, crashes, areg, aop, alast, nvOwner, recovered>>

\* Line 4's test and where it leads (line 4.1, or the fix of Finding R1, or 5).
AfterLine4(t, d, n) ==
    pc' = [pc EXCEPT ![t] =
             IF WindowFix /\ SeqBump /\ InWindow(PSeq(d), PSeq(n)) THEN "R41"
             ELSE IF RFFlush THEN "R43" ELSE "R5"]

\* Line 2, and the test of line 3 (then line 4's, unless the fix of Finding
\* R2 first re-reads DRAM).
R2(t) ==
    LET d == rf[t].d
        n == Visible
    IN
    /\ pc[t] = "R2"
    /\ IF n = d
       THEN \* line 3: return
            /\ recovered' = TRUE
            /\ rf' = [rf EXCEPT ![t] = RFInit]
            /\ Resume(t)
       ELSE /\ rf' = [rf EXCEPT ![t].n = n]
            /\ IF Revalidate THEN pc' = [pc EXCEPT ![t] = "R22"] ELSE AfterLine4(t, d, n)
            /\ UNCHANGED recovered
    /\ UNCHANGED <<nvP, nvS, dram, lc, done, crashes, areg, aop, alast, nvOwner>>

\* The fix of Finding R2 (README.md), between lines 3 and 4: read DRAM again;
\* if it no longer holds (V_D, S_D), goto 1.  Then (V_D, S_D) and
\* (V_NV, S_NV) were both in memory at the moment of line 2, so S_NV is not
\* a value some operation wrote after the field was recovered.
R22(t) ==
    LET d == rf[t].d IN
    /\ pc[t] = "R22"
    /\ IF dram = d
       THEN AfterLine4(t, d, rf[t].n) /\ UNCHANGED rf
       ELSE pc' = [pc EXCEPT ![t] = "R1"] /\ rf' = [rf EXCEPT ![t] = RFInit]
    /\ UNCHANGED <<nvP, nvS, dram, lc, done, crashes, areg, aop, alast, nvOwner, recovered>>

\* Line 4.1: CAS(NVMM(address).seq, S_NV, S_D + 1), fail: goto 1; line 4.2.
R41(t) ==
    LET d == rf[t].d
        n == rf[t].n
    IN
    /\ pc[t] = "R41"
    /\ IF PSeq(Visible) = PSeq(n)
       THEN /\ nvS' = Append(nvS, <<PVal(Visible), Inc(PSeq(d))>>)
            /\ nvOwner' = NoThread
            /\ rf' = [rf EXCEPT ![t].n = <<PVal(n), Inc(PSeq(d))>>]
            /\ pc' = [pc EXCEPT ![t] = IF RFFlush THEN "R43" ELSE "R5"]
       ELSE /\ rf' = [rf EXCEPT ![t] = RFInit]
            /\ pc' = [pc EXCEPT ![t] = "R1"]
            /\ UNCHANGED <<nvS, nvOwner>>
    /\ UNCHANGED <<nvP, dram, lc, done, crashes, areg, aop, alast, recovered>>

\* The fix of Finding R1 (README.md), between lines 4.2 and 5: FLUSH(NVMM(
\* address)); FENCE, so that line 5 never puts into DRAM a pair a crash can
\* still lose (Mirror's helping case does the same at lines 20-21).  FLUSH
\* and FENCE are one step: nothing of this thread lies between them, and a
\* full-system crash between them leaves the same images as one before.
R43(t) ==
    /\ pc[t] = "R43"
    /\ M!Fence(Visible)
    /\ pc' = [pc EXCEPT ![t] = "R5"]
    /\ UNCHANGED <<dram, lc, done, crashes, areg, aop, alast, nvOwner, recovered, rf>>

\* Line 5: DWCAS(DRAM(address), (V_D, S_D), (V_NV, S_NV)), fail: goto 1.
R5(t) ==
    LET d == rf[t].d
        n == rf[t].n
    IN
    /\ pc[t] = "R5"
    /\ M!DramCas(d, n)
    /\ rf' = [rf EXCEPT ![t] = RFInit]
    /\ IF dram = d
       THEN recovered' = TRUE /\ Resume(t)
       ELSE pc' = [pc EXCEPT ![t] = "R1"] /\ UNCHANGED recovered
    /\ UNCHANGED <<nvP, nvS, lc, done, crashes, alast>>

RFStep(t) == R1(t) \/ R2(t) \/ R22(t) \/ R41(t) \/ R43(t) \/ R5(t)

InAttempt(t, p) == p[t] \in {"R2", "R22", "R41", "R43", "R5"}

\* The stall bound: count the NVMM modifications each thread inside lines
\* 2-5 sees, and take no modifying step past StallBound.
StallAccount(t) ==
    LET modified == Visible' # Visible IN
    /\ modified => \A u \in Threads \ {t} : InAttempt(u, pc) => stall[u] < StallBound
    /\ stall' = [u \in Threads |->
                   IF ~InAttempt(u, pc') THEN 0
                   ELSE IF u # t /\ modified /\ InAttempt(u, pc) THEN stall[u] + 1
                   ELSE stall[u]]

\* A full-system crash: NVMM keeps a Px86 image, DRAM becomes arbitrary.
RCrash ==
    /\ crashes < MaxCrashes
    /\ crashes' = crashes + 1
    /\ \E c \in M!Images :
         /\ nvP' = c /\ nvS' = <<>>
         /\ M!CrashGhost(c)
    /\ dram' \in M!Pairs
    /\ M!CrashThreads
    /\ recovered' = FALSE
    /\ rf' = [t \in Threads |-> RFInit]
    /\ stall' = [t \in Threads |-> 0]
    /\ UNCHANGED alast

Init ==
    /\ M!Init
    /\ recovered = TRUE
    /\ rf = [t \in Threads |-> RFInit]
    /\ stall = [t \in Threads |-> 0]

Next ==
    \/ \E t \in Threads :
         /\ \/ \E c \in M!Calls : RInvoke(t, c)
            \/ RFStep(t)
            \/ M!Step(t) /\ UNCHANGED <<recovered, rf>>
         /\ StallAccount(t)
    \/ RCrash

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* Properties.                                                             *)

TypeOK ==
    /\ nvP \in M!Pairs /\ nvS \in Seq(M!Pairs) /\ dram \in M!Pairs
    /\ \A t \in Threads :
         /\ pc[t] \in M!MirrorLabels \cup RFLabels
         /\ M!LocalsOK(lc[t])
         /\ rf[t].d \in M!Pairs \cup {NoPair} /\ rf[t].n \in M!Pairs \cup {NoPair}
    /\ done \in [Threads -> 0 .. OpsPerThread]
    /\ crashes \in 0 .. MaxCrashes
    /\ areg \in Vals /\ nvOwner \in Threads \cup {NoThread}
    /\ recovered \in BOOLEAN
    /\ stall \in [Threads -> 0 .. StallBound]

\* Claim 2: once some recoverField returned, Mirror's invariants hold.
MirrorInvariants == recovered => M!SeqWindow /\ M!EqualSeqsEqualValues

\* Mirror's second invariant, after recovery.
NvmmChangesOnlyWhenEqual ==
    [][(recovered /\ recovered' /\ crashes' = crashes /\ Visible' # Visible)
         => PSeq(Visible) = PSeq(dram)]_vars

\* The refinement mapping: before the first recoverField returns, the
\* register is NVMM's value (the persisted one: recoverField's line 4.1
\* changes only the seq); from then on DRAM's.
AbsMatchesMemory == IF recovered THEN areg = PVal(dram) ELSE areg = PVal(Visible)

\* No thread runs Mirror's code on a field nobody has recovered (Claim 1's
\* consequence, "any access ... happens only after recoverField has
\* completed").
AccessAfterRecovery ==
    \A t \in Threads : pc[t] \in M!MirrorLabels \ {"idle"} => recovered

Refinement == M!Abs!ASpec

-----------------------------------------------------------------------------
(* Reachability witnesses: each is an invariant the CI bounds must break  *)
(* (mutants/RelaxWitness*.cfg), so that a passing CI model is known to     *)
(* reach the cases that matter, not to pass vacuously.                     *)

\* Line 4.1's CAS succeeds (an action property: R41 goes on to R43/R5 only
\* on success).
NeverBumps == [][\A t \in Threads : ~(pc[t] = "R41" /\ pc'[t] \in {"R43", "R5"})]_vars

\* A recoverField runs line 5 on a field another one already recovered,
\* while a Mirror update is in flight (NVMM one ahead of DRAM).
NeverLateRecoverField ==
    ~(\E t \in Threads : pc[t] = "R5" /\ recovered /\ PSeq(Visible) = Inc(PSeq(dram)))

\* Mirror's helping case (line 24) runs after a crash.
NeverHelpsAfterCrash == ~(crashes > 0 /\ \E t \in Threads : pc[t] = "L24")

\* Every operation of every thread finished or was cut off, after a crash.
NeverAllDone == ~(crashes = MaxCrashes /\ \A t \in Threads : done[t] = OpsPerThread)

Symmetry == Permutations(Threads)
=============================================================================

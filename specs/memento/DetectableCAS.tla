---------------------------- MODULE DetectableCAS ----------------------------
(***************************************************************************)
(* Memento's detectable CAS (seed 001, Cho, Jeon, Kang, "Practical         *)
(* Detectability for Persistent Lock-Free Data Structures", §3):           *)
(* Algorithm 1 (CAS with its recovery path, CASMEMENTOCLEAR) and           *)
(* Algorithm 2 (LOADHELP), under Px86 line persistency, with thread        *)
(* crashes and full-system crashes.                                        *)
(*                                                                         *)
(* Every action names the seed line it models; pc values are the line     *)
(* numbers: "L6".."L39" for Algorithm 1, "H4".."H18" for Algorithm 2       *)
(* (LOADHELP's lines; "H" to keep them apart from Algorithm 1's).          *)
(* Algorithm 1's lines 19-24 are garbled in the seed's OCR; the model     *)
(* follows this reconstruction (prose of §3.3, kaist-cp/memento's Rust):   *)
(*   19: if t_mmt # 0 /\ t_mmt < t_own then LOCAL[tid] := pt; return OK   *)
(*   20: if t_mmt # 0 /\ t_mmt >= t_own then ts_succ := pt; goto 38       *)
(*   21: (p_cur, tid_cur, o_cur) := DECODE(cur)                           *)
(*   22: if tid_cur = tid /\ o_cur = new then goto 33                      *)
(*   23: t_help := LOADPLAIN(HELP[~p_own][tid])                           *)
(*   24: if t_own < t_help then goto 34                                    *)
(*                                                                         *)
(* THE WORKLOAD.  Each thread runs RootOps root operations (§2.5), each a  *)
(* sequence of OpsPerRoot detectable CASes, CAS k of every root operation *)
(* using memento k (so mementos are reused by the next root operation,     *)
(* after CASMEMENTOCLEAR, as §6.3 prescribes at the end of every root      *)
(* operation).  The arguments of each CAS (location, old, new = another    *)
(* value) are chosen at its first invocation and are stable across crashes *)
(* (they would be CHECKPOINTed, Checkpoint.tla checks that).  A crash      *)
(* restarts the thread's current root operation in recovery mode; as in    *)
(* kaist-cp/memento, the recovery flag stays on until a CAS falls through  *)
(* its recovery code to the normal path (L25), and is off from then on.   *)
(* Between root operations the thread clears its mementos under §6.3's     *)
(* "clearing" flag (steps E0..E3 below), so a crash during the clear       *)
(* resumes it.                                                             *)
(*                                                                         *)
(* MEMORY.  Each PM word is its own cache line (the weakest placement: a  *)
(* shared line only adds ordering), as a record [p, s]: p the value of the *)
(* persisted prefix (what the line's mark guarantees), s the stores that   *)
(* became visible since, in order; the visible value is the last.  clflush *)
(* ("flush") collapses the line at once; a clflushopt ("flushopt") is      *)
(* pending in pfo[t] and collapses the line when it takes effect: at the   *)
(* thread's next sfence or locked RMW (CASPLAIN), which drains pfo[t]      *)
(* before its own access (PX86.md; taking effect earlier only removes     *)
(* crash images, see FlushoptTiming below).  A full crash keeps, per      *)
(* line independently, any prefix of s (Px86: at least the mark);          *)
(* DRAM (OWN, LOCAL, every thread's registers and pc) is lost.  A thread   *)
(* crash loses that thread's registers, its pending flushopts (never      *)
(* taking effect is the weakest choice) and its LOCAL entry; OWN and all  *)
(* PM survive.  Visibility is sequentially consistent (no TSO store        *)
(* buffers): each action is one atomic step.  Steps that touch only the    *)
(* thread's own words (its mementos, OWN, LOCAL, its root word) are merged *)
(* with the neighbouring step; every access to a shared word (a location,  *)
(* a HELP entry) and every flush of one is a step of its own.             *)
(*                                                                         *)
(* TIMESTAMPS.  rdtscp is a global counter `clock`, incremented by every   *)
(* read (constant and synchronous across cores, §3.1).  It is not reset by *)
(* a full crash: that is the calibration of §2.5 (every later timestamp    *)
(* exceeds every persisted one).  Timestamp 0 is reserved.                 *)
(*                                                                         *)
(* SWITCHES (the seed as written is the first value of each):              *)
(*   FailTs      "zero": L29 stores encodeTs(Fail, 0) in the memento and   *)
(*               LOCAL; "rdtscp": encodeTs(Fail, rdtscp) as in the Rust.   *)
(*   OwnInit     "mementos": after a full crash OWN[tid] is the newest     *)
(*               successful CAS memento of tid (§3.1); "floor": the clear  *)
(*               first persists OWN[tid] in a per-thread PM word           *)
(*               own_floor[tid] (step E0), and OWN is initialised from the *)
(*               newest of own_floor and the mementos.                      *)
(*   RedoSecond  "asWritten": L20 goes to L38 and retries the second plain *)
(*               CAS with new' = encode(~p_own, tid, new) of L8, leaving   *)
(*               OWN alone; "fixed": L20 first sets OWN[tid] := pt,        *)
(*               flushopts mmt again and retries with the memento's        *)
(*               parity, encode(p_mmt, tid, new).                          *)
(* and the mutants' switches, all TRUE in the protocol:                    *)
(*   FlushLoc    L33 (flush loc after the first plain CAS)                 *)
(*   FlushoptMmt L35 (flushopt mmt; FALSE: no write-back of the memento    *)
(*               at all, the memento line persists only if a crash happens *)
(*               to keep it)                                               *)
(*   HelpUpdate  L13-L16 of LOADHELP (CAS HELP and flushopt it); FALSE:    *)
(*               the helper goes from L12 straight to L18                  *)
(*                                                                         *)
(* THE TWO-WORD LOCATION (Form = "twoWord"; README.md, "The two-word     *)
(* location").  Finding 4 (below) is an ABA on the annotated word: CAS n   *)
(* and CAS n+2 of one thread may write the same (parity, tid, new), and a  *)
(* helper holding CAS n's word then helps CAS n+2.  With Form = "twoWord"  *)
(* the location is 16 bytes, written by cmpxchg16b: the seed's word and a  *)
(* nonce, t_own = the timestamp of the thread's previous successful CAS,   *)
(* which the CAS reads from OWN at L6 anyway (0 in a clean word).  No two *)
(* CASes of a thread that both make their first plain CAS use the same     *)
(* t_own (OWN moves past it at L36 before the next one starts), so an      *)
(* annotated word never recurs and a helper's L5 and L18 compare the whole *)
(* 16 bytes: they can only ever see the CAS they first saw.  Recovery      *)
(* re-derives the word where it needs it: L22 (case 7) from OWN, which    *)
(* still holds t_own while the memento is not yet written; L20 (case 6),  *)
(* where OWN may already hold t_n, from the location itself (an annotated  *)
(* word of tid there can only be this CAS's: the thread's earlier ones are *)
(* gone, README.md "Finding 4" and the L38 write-back).  Persistence: the  *)
(* 16 bytes are one line and one locked store, so they persist together   *)
(* (the model keeps a location as one word of its line).                   *)
(*                                                                         *)
(* PROPERTIES.  TypeOK; ExactlyOnce (each CAS's first plain CAS becomes    *)
(* durable at most once, every result it ever reports is the same, "OK"   *)
(* iff that first plain CAS is durable); HelpInvariant (§3.4, over the     *)
(* ghost log `gh` of every thread's successful first plain CASes);         *)
(* OneUndurableFirstCas (a location's line holds at most one first plain   *)
(* CAS that is not yet durable, which is what makes the refinement mapping *)
(* commit one operation per location at a time); and the PROPERTY          *)
(* AbstractSpec: refinement of DetectableCasAbstract (an atomic detectable *)
(* register).  Refinement mapping: the register is the value of the        *)
(* persisted prefix of each location's line; an operation takes effect     *)
(* when its first plain CAS becomes durable (a flush of the line, a        *)
(* helper's flushopt taking effect, or a crash that keeps it).             *)
(*                                                                         *)
(* THE VERDICT: the algorithm as written violates ExactlyOnce; the CI     *)
(* models run the fixed one, mutants/ the seed's versions (README.md,      *)
(* "Findings", has the full traces).  In short:                            *)
(*  1. L20 (mutants/AsWrittenL20.cfg, 1 thread crash): t1's CAS 1 writes *)
(*     its first plain CAS, flushes it, writes its memento; t2 helps it    *)
(*     (HELP[1][t1] = 2); t1 crashes before L36.  Recovery: L20 jumps to   *)
(*     L38, skipping L36: OWN stays (0, 0); CAS 2's recovery reads HELP[1] *)
(*     = 2 > t_own = 0 (L23-L24): "helped", OK without effect.  Also, when *)
(*     OWN already holds this CAS (L36 done, or after a full crash), L38's *)
(*     new' = encode(~p_own, ..) has the wrong parity and fails.  Fix:     *)
(*     OWN := pt, flushopt mmt again (the crashed thread's write-back may  *)
(*     not have happened: a later full crash could lose the memento of a  *)
(*     CAS that returned OK), CAS with encode(p_mmt, tid, new).            *)
(*  2. L29 (mutants/AsWrittenFailTs.cfg, 1 thread crash): t1's CAS 1       *)
(*     succeeds (ts 1), CAS 2 fails (memento (Fail, 0)), t2 restores the   *)
(*     old value, t1 crashes.  Recovery: CAS 1 sets LOCAL = 1, CAS 2 has   *)
(*     t_mmt = 0 < 1 (L14), re-executes and succeeds: it returned Err      *)
(*     before the crash.  Fix: encodeTs(Fail, rdtscp).                     *)
(*  3. OWN (mutants/AsWrittenOwnInit.cfg, 1 full crash): t1's CAS (parity  *)
(*     Odd) is helped (HELP[Odd][t1] = 2), t1 clears its memento (§6.3),   *)
(*     full crash: OWN[t1] = (Even, 0).  The next CAS's recovery reads     *)
(*     HELP[Odd][t1] = 2 > 0 (L23-L24) and returns OK without effect.  Fix:*)
(*     own_floor (OwnInit = "floor").                                      *)
(*  4. ABA (mutants/Aba*.cfg, fixed algorithm): CAS 1 and CAS 3 of t1 write *)
(*     the same word (parity, t1, 1); a helper holding CAS 1's word takes  *)
(*     t_cur before t_2, then sees CAS 3's identical word (L5 = old),      *)
(*     raises HELP below t_2 and cleans CAS 3; t1's crashed CAS 3 then     *)
(*     re-executes and reports Err.  No one-word fix: a precondition (no   *)
(*     same-thread repeat of (parity, new) on a location while a helper    *)
(*     may hold the old word), or the two-word location (Form =           *)
(*     "twoWord", DetectableCAS_TwoWord*.cfg), which removes it.           *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC

CONSTANTS
    Threads,          \* thread ids (model values, symmetric)
    NoTid,            \* the reserved thread id 0
    Locs,             \* locations (naturals)
    Vals,             \* values a location may hold (naturals, 0 the initial one)
    OpsPerRoot,       \* detectable CASes per root operation (= mementos per thread)
    OneCasThreads,    \* threads whose root operations have a single CAS (the helpers of a
                      \* workload whose other threads run OpsPerRoot; {}: none)
    RootOps,          \* root operations per thread
    MaxCrashes,       \* full-system crashes
    MaxThreadCrashes, \* thread crashes (all threads together)
    Workload,         \* "any": each CAS's old value is chosen freely (new = another value);
                      \* "flip": CAS i of every thread is old = (i-1) % 2, new = i % 2;
                      \* "chain": CAS i of every thread is old = i-1, new = i (Vals 0..NOps)
    FailTs, OwnInit, RedoSecond,          \* see the header
    Form,             \* "oneWord": the seed's location word; "twoWord": a 16-byte location
                      \* whose annotation also carries t_own, the timestamp of the thread's
                      \* previous successful CAS (see "THE TWO-WORD LOCATION" in the header)
    FlushLoc, FlushoptMmt, HelpUpdate     \* mutant switches

ASSUME /\ NoTid \notin Threads
       /\ 0 \in Vals /\ Cardinality(Vals) >= 2
       /\ Workload \in {"any", "flip", "chain"}
       /\ FailTs \in {"zero", "rdtscp"}
       /\ OwnInit \in {"mementos", "floor"}
       /\ RedoSecond \in {"asWritten", "fixed"}
       /\ Form \in {"oneWord", "twoWord"}
       /\ OneCasThreads \subseteq Threads
       /\ {FlushLoc, FlushoptMmt, HelpUpdate} \subseteq BOOLEAN

NOps == OpsPerRoot * RootOps
OpIdx == 1 .. NOps
Even == 0
Flip(p) == 1 - p
Min2(x) == IF x > 2 THEN 2 ELSE x
Range(f) == {f[x] : x \in DOMAIN f}

-----------------------------------------------------------------------------
(* Words.                                                                  *)

\* A location word: ENCODE(parity, tid, offset) (§3.1), and the nonce of the
\* two-word form (0 in a clean word and always in the one-word form).
LocWordN(p, t, v, n) == [par |-> p, tid |-> t, val |-> v, nonce |-> n]
LocWord(p, t, v) == LocWordN(p, t, v, 0)
Clean(v) == LocWord(Even, NoTid, v)
\* The nonce a CAS whose L6 read t_own from OWN writes with its first plain CAS.
NonceOf(town) == IF Form = "twoWord" THEN town ELSE 0
\* A memento / OWN / LOCAL word: ENCODETS(parity or Fail, timestamp).
TsWord(p, f, ts) == [par |-> p, fail |-> f, ts |-> ts]
ZeroTs == TsWord(Even, FALSE, 0)
\* A HELP entry.
HelpWord(ts) == [ts |-> ts]
\* The root memento's progress word: root operation r, §6.3's clearing flag.
RootWord(r, c) == [r |-> r, clr |-> c]

\* The arguments of a CAS.
ArgChoices == {a \in [loc : Locs, old : Vals, new : Vals] : a.new # a.old}
ArgsOf(i) == CASE Workload = "any" -> ArgChoices
                [] Workload = "flip" -> {a \in ArgChoices : a.old = (i - 1) % 2 /\ a.new = i % 2}
                [] Workload = "chain" -> {a \in ArgChoices : a.old = i - 1 /\ a.new = i}
NoArg == [loc |-> 0, old |-> 0, new |-> 0]

\* Ghost tag of a store: which CAS's first plain CAS it is (NoTag: another store).
Tag(t, i) == [t |-> t, i |-> i]
NoTag == Tag(NoTid, 0)

-----------------------------------------------------------------------------
(* Cache lines.                                                            *)

LocLine(l) == <<"loc", l>>
MmtLine(t, k) == <<"mmt", t, k>>
HelpLine(p, t) == <<"help", p, t>>
RootLine(t) == <<"root", t>>
FloorLine(t) == <<"floor", t>>

LocLines == {LocLine(l) : l \in Locs}
LineIds ==
    LocLines \cup {MmtLine(t, k) : t \in Threads, k \in 1 .. OpsPerRoot}
    \cup {HelpLine(p, t) : p \in {0, 1}, t \in Threads} \cup {RootLine(t) : t \in Threads}
    \cup (IF OwnInit = "floor" THEN {FloorLine(t) : t \in Threads} ELSE {})

Vis(m, ln) == IF m[ln].s = <<>> THEN m[ln].p ELSE m[ln].s[Len(m[ln].s)].w
StoreTo(m, ln, w, tag) == [m EXCEPT ![ln].s = Append(@, [w |-> w, tag |-> tag])]
\* Flushes taking effect on the lines of S: each line's mark reaches its end.
Persist(m, S) == [ln \in DOMAIN m |-> IF ln \in S THEN [p |-> Vis(m, ln), s |-> <<>>] ELSE m[ln]]

-----------------------------------------------------------------------------
VARIABLES
    pm,       \* [LineIds -> [p: word, s: Seq([w: word, tag: Tag])]]
    pfo,      \* [Threads -> SUBSET LineIds]: pending flushopts
    orph,     \* SUBSET LineIds: flushopts of crashed threads, not yet taken effect
    own,      \* [Threads -> TsWord] (DRAM): OWN
    local,    \* [Threads -> Nat] (DRAM): the timestamp of LOCAL
    clock,    \* rdtscp
    th,       \* [Threads -> thread registers and pc]
    args,     \* [Threads -> [OpIdx -> arg]]: the (stable) arguments of each CAS
    crashes, tcrashes,
    \* ghosts
    ninv,     \* [Threads -> 0..NOps]: CASes invoked so far
    rep,      \* [Threads -> [OpIdx -> SUBSET {"OK", "Err"}]]: results ever reported
    ncom,     \* [Threads -> [OpIdx -> 0..2]]: times its first plain CAS became durable
    afail,    \* [Threads -> [OpIdx -> BOOLEAN]]: the abstract register held another
              \*   value than its old one at some moment since the invocation
    gh        \* [Threads -> Seq(entry)]: the successful first plain CASes, in order

vars == <<pm, pfo, orph, own, local, clock, th, args, crashes, tcrashes, ninv, rep, ncom, afail, gh>>

\* Thread registers.  pc "S": read the root word; "Done": all root operations over.
ThIdle(rec) ==
    [pc |-> "S", r |-> 0, k |-> 0, rec |-> rec,
     pown |-> 0, town |-> 0, pt |-> ZeroTs, cur |-> Clean(0), tloc |-> 0, ts |-> ZeroTs,
     hold |-> Clean(0), tcur |-> 0, hth |-> 0, hret |-> "none", hn |-> 0]

I(t) == (th[t].r - 1) * OpsPerRoot + th[t].k
\* CASes in each of thread t's root operations.
OpsOf(t) == IF t \in OneCasThreads THEN 1 ELSE OpsPerRoot
Op(t) == args[t][I(t)]

Init ==
    /\ pm = [ln \in LineIds |->
               [p |-> CASE ln[1] = "loc" -> Clean(0)
                        [] ln[1] = "help" -> HelpWord(0)
                        [] ln[1] = "root" -> RootWord(1, FALSE)
                        [] OTHER -> ZeroTs,
                s |-> <<>>]]
    /\ pfo = [t \in Threads |-> {}]
    /\ orph = {}
    /\ own = [t \in Threads |-> ZeroTs]
    /\ local = [t \in Threads |-> 0]
    /\ clock = 0
    /\ th = [t \in Threads |-> [ThIdle(FALSE) EXCEPT !.pc = "L6", !.r = 1, !.k = 1]]
    /\ args = [t \in Threads |-> [i \in OpIdx |-> NoArg]]
    /\ crashes = 0 /\ tcrashes = 0
    /\ ninv = [t \in Threads |-> 0]
    /\ rep = [t \in Threads |-> [i \in OpIdx |-> {}]]
    /\ ncom = [t \in Threads |-> [i \in OpIdx |-> 0]]
    /\ afail = [t \in Threads |-> [i \in OpIdx |-> FALSE]]
    /\ gh = [t \in Threads |-> <<>>]

-----------------------------------------------------------------------------
(* Helpers.                                                                *)

SetTh(t, r) == th' = [th EXCEPT ![t] = r]

\* The CAS returns res (L17, L19, L31, L39): the ghost records the report,
\* the thread moves on to its next CAS or to the end of its root operation.
Finish(t, res) ==
    /\ rep' = [rep EXCEPT ![t][I(t)] = @ \cup {res}]
    /\ SetTh(t, IF th[t].k < OpsOf(t)
                THEN [ThIdle(th[t].rec) EXCEPT !.pc = "L6", !.r = th[t].r, !.k = th[t].k + 1]
                ELSE [ThIdle(th[t].rec) EXCEPT !.pc = CASE th[t].r = RootOps -> "EF"
                                                           [] OwnInit = "floor" -> "E0"
                                                           [] OTHER -> "E1",
                                               !.r = th[t].r])

\* The newest entry of gh[u] for the first plain CAS that wrote w to location l
\* (0: none): which CAS a helper is looking at.
EntryOf(u, l, w) ==
    LET ms == {m \in 1 .. Len(gh[u]) : gh[u][m].loc = l /\ gh[u][m].par = w.par
                                       /\ gh[u][m].val = w.val /\ gh[u][m].non = w.nonce}
    IN IF ms = {} THEN 0 ELSE CHOOSE m \in ms : \A m2 \in ms : m2 <= m

\* LOADHELP(loc, old) is entered (L17, L27) or goes back to its L2 with old = w
\* (L11, L14, L19): L3 returns a clean value at once, else L4.  The result of
\* a return goes to the caller: at L27 (L28: retry the CAS if it is old, else
\* L29-L31 fail), at L17 (return Err).
LH2(t, w, ret, thr) ==
    IF w.tid = NoTid
    THEN IF ret = "L27"
         THEN [thr EXCEPT !.pc = IF w.val = Op(t).old THEN "L26" ELSE "L30",
                          !.hold = Clean(0), !.tcur = 0, !.hth = 0, !.hret = "none", !.hn = 0]
         ELSE thr   \* L17: the caller finishes with Err (see LHReturns)
    ELSE [thr EXCEPT !.pc = "H4", !.hold = w, !.hret = ret,
                     !.hn = EntryOf(w.tid, Op(t).loc, w), !.tcur = 0, !.hth = 0]
LHReturns(w, ret) == w.tid = NoTid /\ ret = "L17"

\* A LOADHELP step that ends at its L2 with w: rep and th for both cases.
GoLH2(t, w, ret) ==
    IF LHReturns(w, ret) THEN Finish(t, "Err")
    ELSE /\ SetTh(t, LH2(t, w, ret, th[t]))
         /\ UNCHANGED rep

-----------------------------------------------------------------------------
(* The root operation: start, end, clear (§2.5, §6.3).                     *)

\* The thread (re)starts: it reads its root memento's progress word in m (the
\* monitor of §2.5, after a crash too): all root operations done, a clear to
\* resume, or root operation r to run (in recovery mode after a crash).
Restart(m, t, rec) ==
    LET w == Vis(m, RootLine(t)) IN
    CASE w.r > RootOps -> [ThIdle(rec) EXCEPT !.pc = "Done"]
      [] w.clr -> [ThIdle(rec) EXCEPT !.pc = IF OwnInit = "floor" THEN "E0" ELSE "E1", !.r = w.r]
      [] OTHER -> [ThIdle(rec) EXCEPT !.pc = "L6", !.r = w.r, !.k = 1]

\* Fix (OwnInit = "floor"): before clearing, persist OWN[tid] in own_floor[tid].
E0(t) ==
    /\ th[t].pc = "E0"
    /\ pm' = Persist(StoreTo(pm, FloorLine(t), own[t], NoTag), {FloorLine(t)})
    /\ SetTh(t, [th[t] EXCEPT !.pc = "E1"])
    /\ UNCHANGED <<pfo, own, local, clock, args, crashes, tcrashes, ninv, rep, gh>>

\* §6.3: set the root memento's clearing flag and flush it.
E1(t) ==
    /\ th[t].pc = "E1"
    /\ pm' = Persist(StoreTo(pm, RootLine(t), RootWord(th[t].r, TRUE), NoTag), {RootLine(t)})
    /\ SetTh(t, [th[t] EXCEPT !.pc = "E2"])
    /\ UNCHANGED <<pfo, own, local, clock, args, crashes, tcrashes, ninv, rep, gh>>

\* Algorithm 1, L41-L43: CASMEMENTOCLEAR of every CAS memento of the thread:
\* STOREPLAIN(mmt, encodeTs(Even, 0)); flushopt mmt.
E2(t) ==
    /\ th[t].pc = "E2"
    /\ LET ms == {MmtLine(t, k) : k \in 1 .. OpsPerRoot}
           RECURSIVE ClearAll(_, _)
           ClearAll(m, S) == IF S = {} THEN m
                             ELSE LET ln == CHOOSE x \in S : TRUE
                                  IN ClearAll(StoreTo(m, ln, ZeroTs, NoTag), S \ {ln})
       IN /\ pm' = ClearAll(pm, ms)
          /\ pfo' = [pfo EXCEPT ![t] = @ \cup ms]
    /\ SetTh(t, [th[t] EXCEPT !.pc = "E3"])
    /\ UNCHANGED <<own, local, clock, args, crashes, tcrashes, ninv, rep, gh>>

\* §6.3: sfence (the clears persist), then the root memento moves on to the
\* next root operation with the flag cleared, flushed.
E3(t) ==
    /\ th[t].pc = "E3"
    /\ pm' = Persist(StoreTo(Persist(pm, pfo[t]), RootLine(t), RootWord(th[t].r + 1, FALSE), NoTag),
                     {RootLine(t)})
    /\ pfo' = [pfo EXCEPT ![t] = {}]
    /\ SetTh(t, Restart(pm', t, FALSE))
    /\ UNCHANGED <<own, local, clock, args, crashes, tcrashes, ninv, rep, gh>>

\* The end of the last root operation: the root memento records that it is
\* over (nothing is cleared: no root operation follows).
EF(t) ==
    /\ th[t].pc = "EF"
    /\ pm' = Persist(StoreTo(pm, RootLine(t), RootWord(th[t].r + 1, FALSE), NoTag), {RootLine(t)})
    /\ SetTh(t, [ThIdle(FALSE) EXCEPT !.pc = "Done"])
    /\ UNCHANGED <<pfo, own, local, clock, args, crashes, tcrashes, ninv, rep, gh>>

-----------------------------------------------------------------------------
(* Algorithm 1: CAS(loc, old, new, tid, mmt, recovery).                    *)

\* Algorithm 1, L6-L9: read OWN, encode old' and new' (local); then L10-L13
\* in recovery (the memento and LOCAL are the thread's own words).  The
\* first time, the CAS is invoked: its arguments are chosen. L6(t) chooses
\* them; L6With(t, a) is the step with given arguments a, checked to be among
\* L6's choices (a trace names them: traces/memento checks membership instead
\* of enumerating ArgsOf). L6Args is their common part, the step once a is
\* chosen.
CasArgs(t) == IF I(t) > ninv[t] THEN ArgsOf(I(t)) ELSE {args[t][I(t)]}
L6Args(t, a) ==
    /\ LET i == I(t)
           fresh == i > ninv[t]
       IN /\ args' = [args EXCEPT ![t][i] = a]
          /\ ninv' = [ninv EXCEPT ![t] = IF fresh THEN i ELSE @]
    /\ SetTh(t, IF th[t].rec
                THEN [th[t] EXCEPT !.pown = own[t].par, !.town = own[t].ts,
                                   !.pt = Vis(pm, MmtLine(t, th[t].k)),   \* L10-L11
                                   !.tloc = local[t],                      \* L13
                                   !.pc = "L12"]
                ELSE [th[t] EXCEPT !.pown = own[t].par, !.town = own[t].ts, !.pc = "L26"])
    /\ UNCHANGED <<pm, pfo, own, local, clock, crashes, tcrashes, rep, gh>>
L6(t) == th[t].pc = "L6" /\ \E a \in CasArgs(t) : L6Args(t, a)
L6With(t, a) == th[t].pc = "L6" /\ a \in CasArgs(t) /\ L6Args(t, a)

\* Algorithm 1, L12: cur := LOADPLAIN(loc), then the recovery decisions
\* L14-L22 (local, on the values read).
L12(t) ==
    /\ th[t].pc = "L12"
    /\ LET a == Op(t)
           cur == Vis(pm, LocLine(a.loc))
           ptw == th[t].pt
           tm == ptw.ts
           \* L22; the two-word form compares the whole annotated word, nonce included
           mine == IF Form = "twoWord"
                   THEN cur = LocWordN(Flip(th[t].pown), t, a.new, th[t].town)
                   ELSE cur.tid = t /\ cur.val = a.new
           L22 == IF mine THEN "L33" ELSE "L23"
           thr == [th[t] EXCEPT !.pt = ZeroTs, !.tloc = 0]   \* dead after this step
       IN CASE tm < th[t].tloc ->                              \* L14: goto 21
                 /\ SetTh(t, [thr EXCEPT !.pc = L22])
                 /\ UNCHANGED <<own, local, rep, pfo>>
            [] ptw.fail ->                                      \* L15-L17
                 /\ local' = [local EXCEPT ![t] = tm]          \* L16
                 /\ UNCHANGED <<own, pfo>>
                 /\ GoLH2(t, cur, "L17")                       \* L17: LOADHELP(loc, cur)
            [] tm # 0 /\ tm < th[t].town ->                     \* L19: not the last CAS
                 /\ local' = [local EXCEPT ![t] = tm]
                 /\ UNCHANGED <<own, pfo>>
                 /\ Finish(t, "OK")
            [] tm # 0 /\ tm >= th[t].town ->                    \* L20: the last one
                 /\ IF RedoSecond = "asWritten"
                    THEN /\ SetTh(t, [thr EXCEPT !.ts = ptw, !.pc = "L38"])
                         /\ UNCHANGED <<own, pfo>>
                    ELSE \* fixed: OWN := pt; flushopt mmt (the memento's write-back
                         \* may have died with the crashed thread); second plain CAS
                         \* with the memento's parity
                         /\ own' = [own EXCEPT ![t] = TsWord(ptw.par, FALSE, tm)]
                         /\ pfo' = [pfo EXCEPT ![t] = @ \cup {MmtLine(t, th[t].k)}]
                         \* (two-word: the nonce is t_{n-1}, which OWN no longer holds
                         \* once it is pt; only this CAS can have left an annotated word
                         \* of t in the location, so it is taken from cur when cur's
                         \* first word is this CAS's, and L38's CAS compares both words)
                         /\ SetTh(t, [thr EXCEPT !.ts = ptw, !.pown = Flip(ptw.par), !.pc = "L38",
                                      !.town = IF Form = "twoWord" /\ cur.par = ptw.par
                                                  /\ cur.tid = t /\ cur.val = a.new
                                               THEN cur.nonce ELSE @])
                 /\ UNCHANGED <<local, rep>>
            [] OTHER ->                                         \* L21-L22
                 /\ SetTh(t, [thr EXCEPT !.pc = L22])
                 /\ UNCHANGED <<own, local, rep, pfo>>
    /\ UNCHANGED <<pm, clock, args, crashes, tcrashes, ninv, gh>>

\* Algorithm 1, L23-L24: t_help := LOADPLAIN(HELP[~p_own][tid]); helped if
\* t_own < t_help (goto 34), else L25: the normal path (recovery is over).
L23(t) ==
    /\ th[t].pc = "L23"
    /\ LET thelp == Vis(pm, HelpLine(Flip(th[t].pown), t)).ts IN
       SetTh(t, IF th[t].town < thelp THEN [th[t] EXCEPT !.pc = "L34"]
                ELSE [th[t] EXCEPT !.pc = "L26", !.rec = FALSE])
    /\ UNCHANGED <<pm, pfo, own, local, clock, args, crashes, tcrashes, ninv, rep, gh>>

\* Algorithm 1, L26: first plain CAS, loc from old' = encode(Even, 0, old) to
\* new' = encode(~p_own, tid, new).  A locked RMW: the thread's pending
\* flushopts take effect first.  Failure: L27 LOADHELP(loc, cur).
L26(t) ==
    /\ th[t].pc = "L26"
    /\ LET a == Op(t)
           ln == LocLine(a.loc)
           m1 == Persist(pm, pfo[t])
           cur == Vis(m1, ln)
           nw == LocWordN(Flip(th[t].pown), t, a.new, NonceOf(th[t].town))
       IN IF cur = Clean(a.old)
          THEN /\ pm' = StoreTo(m1, ln, nw, Tag(t, I(t)))
                 \* ghost: a successful first plain CAS (ts set at L34)
               /\ gh' = [gh EXCEPT ![t] = Append(@, [op |-> I(t), loc |-> a.loc, par |-> nw.par,
                                                     val |-> a.new, non |-> nw.nonce,
                                                     ts |-> 0, hts |-> 0])]
               /\ SetTh(t, [th[t] EXCEPT !.pc = "L33"])
               /\ UNCHANGED rep
          ELSE /\ pm' = m1
               /\ UNCHANGED gh
               /\ GoLH2(t, cur, "L27")
    /\ pfo' = [pfo EXCEPT ![t] = {}]
    /\ UNCHANGED <<own, local, clock, args, crashes, tcrashes, ninv>>

\* Algorithm 1, L29-L31 (after L27-L28 found a stable value other than old):
\* STOREPLAIN(mmt, ts_fail); flush mmt; STOREPLAIN(LOCAL[tid], ts_fail);
\* return Err.  ts_fail = encodeTs(Fail, 0) as written (FailTs = "zero").
L30(t) ==
    /\ th[t].pc = "L30"
    /\ LET tsv == IF FailTs = "zero" THEN 0 ELSE clock + 1
           ln == MmtLine(t, th[t].k)
       IN /\ clock' = IF FailTs = "zero" THEN clock ELSE clock + 1
          /\ pm' = Persist(StoreTo(pm, ln, TsWord(Even, TRUE, tsv), NoTag), {ln})
          /\ local' = [local EXCEPT ![t] = tsv]
    /\ Finish(t, "Err")
    /\ UNCHANGED <<pfo, own, args, crashes, tcrashes, ninv, gh>>

\* Algorithm 1, L33: flush loc (clflush: synchronous).
L33(t) ==
    /\ th[t].pc = "L33"
    /\ pm' = IF FlushLoc THEN Persist(pm, {LocLine(Op(t).loc)}) ELSE pm
    /\ SetTh(t, [th[t] EXCEPT !.pc = "L34"])
    /\ UNCHANGED <<pfo, own, local, clock, args, crashes, tcrashes, ninv, rep, gh>>

\* Algorithm 1, L34-L35: ts_succ := encodeTs(~p_own, rdtscp); lfence;
\* STOREPLAIN(mmt, ts_succ); flushopt mmt.
L34(t) ==
    /\ th[t].pc = "L34"
    /\ LET ts == TsWord(Flip(th[t].pown), FALSE, clock + 1)
           ln == MmtLine(t, th[t].k)
           last == {m \in 1 .. Len(gh[t]) : gh[t][m].op = I(t)}
       IN /\ clock' = clock + 1
          /\ pm' = StoreTo(pm, ln, ts, NoTag)
          /\ pfo' = IF FlushoptMmt THEN [pfo EXCEPT ![t] = @ \cup {ln}] ELSE pfo
          /\ SetTh(t, [th[t] EXCEPT !.ts = ts, !.pc = "L36"])
          \* ghost: the timestamp of this CAS's entry
          /\ gh' = IF last = {} THEN gh
                   ELSE LET m == CHOOSE x \in last : \A y \in last : y <= x
                        IN [gh EXCEPT ![t][m].ts = clock + 1]
    /\ UNCHANGED <<own, local, args, crashes, tcrashes, ninv, rep>>

\* Algorithm 1, L36: STOREPLAIN(OWN[tid], ts_succ) (DRAM).
L36(t) ==
    /\ th[t].pc = "L36"
    /\ own' = [own EXCEPT ![t] = th[t].ts]
    /\ SetTh(t, [th[t] EXCEPT !.pc = "L38"])
    /\ UNCHANGED <<pm, pfo, local, clock, args, crashes, tcrashes, ninv, rep, gh>>

\* Algorithm 1, L37-L39: second plain CAS, loc from new' to new'' =
\* encode(Even, 0, new) (a locked RMW: the flushopt of mmt takes effect; if it
\* fails, sfence, which then has nothing left to do); STOREPLAIN(LOCAL[tid],
\* ts_succ); return OK.
L38(t) ==
    /\ th[t].pc = "L38"
    /\ LET a == Op(t)
           ln == LocLine(a.loc)
           m1 == Persist(pm, pfo[t])
           nw == LocWordN(Flip(th[t].pown), t, a.new, NonceOf(th[t].town))
       IN pm' = IF Vis(m1, ln) = nw THEN StoreTo(m1, ln, Clean(a.new), NoTag) ELSE m1
    /\ pfo' = [pfo EXCEPT ![t] = {}]
    /\ local' = [local EXCEPT ![t] = th[t].ts.ts]
    /\ Finish(t, "OK")
    /\ UNCHANGED <<own, clock, args, crashes, tcrashes, ninv, gh>>

-----------------------------------------------------------------------------
(* Algorithm 2: LOADHELP(loc, old), loc the location of the thread's CAS.   *)

\* Algorithm 2, L4: t_cur := rdtscp; lfence.
H4(t) ==
    /\ th[t].pc = "H4"
    /\ clock' = clock + 1
    /\ SetTh(t, [th[t] EXCEPT !.tcur = clock + 1, !.pc = "H5"])
    /\ UNCHANGED <<pm, pfo, own, local, args, crashes, tcrashes, ninv, rep, gh>>

\* Algorithm 2, L5-L9: cur := LOADPLAIN(loc); return it if clean (L7); if it
\* changed, old := cur, goto 4 (L8); else patience (L9) is over -- when it
\* is over is the scheduler's choice: this step may be delayed arbitrarily.
H5(t) ==
    /\ th[t].pc = "H5"
    /\ LET cur == Vis(pm, LocLine(Op(t).loc)) IN
       CASE cur.tid = NoTid -> GoLH2(t, cur, th[t].hret)
         [] cur # th[t].hold ->
              /\ SetTh(t, [th[t] EXCEPT !.hold = cur, !.hn = EntryOf(cur.tid, Op(t).loc, cur),
                                        !.pc = "H4"])
              /\ UNCHANGED rep
         [] OTHER ->  \* ghost: the CAS whose first plain CAS this load saw (the same
                      \* word may belong to a later CAS than the one first seen: ABA)
              /\ SetTh(t, [th[t] EXCEPT !.hn = EntryOf(cur.tid, Op(t).loc, cur), !.pc = "H10"])
              /\ UNCHANGED rep
    /\ UNCHANGED <<pm, pfo, own, local, clock, args, crashes, tcrashes, ninv, gh>>

\* Algorithm 2, L10-L12: t_help := LOADPLAIN(HELP[p_old][tid_old]); if
\* t_cur <= t_help (someone helped already) reload loc (H11) and goto 2.
H10(t) ==
    /\ th[t].pc = "H10"
    /\ LET thelp == Vis(pm, HelpLine(th[t].hold.par, th[t].hold.tid)).ts IN
       IF th[t].tcur <= thelp
       THEN SetTh(t, [th[t] EXCEPT !.pc = "H11"]) /\ UNCHANGED pfo
       ELSE \* Algorithm 2, L12: flushopt loc (it takes effect at the next locked
            \* RMW, L13; with HelpUpdate = FALSE, mutant, L13-L16 are skipped: L18)
            /\ pfo' = [pfo EXCEPT ![t] = @ \cup {LocLine(Op(t).loc)}]
            /\ SetTh(t, [th[t] EXCEPT !.hth = thelp, !.pc = IF HelpUpdate THEN "H13" ELSE "H18"])
    /\ UNCHANGED <<pm, own, local, clock, args, crashes, tcrashes, ninv, rep, gh>>

\* Algorithm 2, L11/L14: old := LOADPLAIN(loc); goto 2.
H11(t) ==
    /\ th[t].pc = "H11"
    /\ GoLH2(t, Vis(pm, LocLine(Op(t).loc)), th[t].hret)
    /\ UNCHANGED <<pm, pfo, own, local, clock, args, crashes, tcrashes, ninv, gh>>

\* Algorithm 2, L13-L16: CASPLAIN(HELP[p_old][tid_old], t_help, t_cur) (a
\* locked RMW: the flushopt of loc takes effect); on failure L14 (H11); on
\* success flushopt HELP[p_old][tid_old] (L16).
H13(t) ==
    /\ th[t].pc = "H13"
    /\ LET hl == HelpLine(th[t].hold.par, th[t].hold.tid)
           m1 == Persist(pm, pfo[t])
           u == th[t].hold.tid
           n == th[t].hn
       IN IF Vis(m1, hl).ts = th[t].hth
          THEN /\ pm' = StoreTo(m1, hl, HelpWord(th[t].tcur), NoTag)
               /\ pfo' = [pfo EXCEPT ![t] = {hl}]
               /\ SetTh(t, [th[t] EXCEPT !.pc = "H18"])
               \* ghost: the CAS this helper saw is helped (first helper's time)
               /\ gh' = IF n = 0 \/ gh[u][n].hts # 0 THEN gh
                        ELSE [gh EXCEPT ![u][n].hts = th[t].tcur]
          ELSE /\ pm' = m1
               /\ pfo' = [pfo EXCEPT ![t] = {}]
               /\ SetTh(t, [th[t] EXCEPT !.pc = "H11"])
               /\ UNCHANGED gh
    /\ UNCHANGED <<own, local, clock, args, crashes, tcrashes, ninv, rep>>

\* Algorithm 2, L17-L21: CASPLAIN(loc, old, encode(Even, 0, o_old)) (a locked
\* RMW: the flushopt of HELP takes effect); success: return it; failure:
\* old := cur, goto 2.
H18(t) ==
    /\ th[t].pc = "H18"
    /\ LET ln == LocLine(Op(t).loc)
           m1 == Persist(pm, pfo[t])
           cur == Vis(m1, ln)
           cln == Clean(th[t].hold.val)
       IN IF cur = th[t].hold
          THEN /\ pm' = StoreTo(m1, ln, cln, NoTag)
               /\ GoLH2(t, cln, th[t].hret)
          ELSE /\ pm' = m1
               /\ GoLH2(t, cur, th[t].hret)
    /\ pfo' = [pfo EXCEPT ![t] = {}]
    /\ UNCHANGED <<own, local, clock, args, crashes, tcrashes, ninv, gh>>

-----------------------------------------------------------------------------
(* Finer steps.  The implementation's persistence steps are finer than     *)
(* some actions above: a clflush is a pwb and a pfence, L34's rdtscp and   *)
(* L35's store and flushopt are three steps, and so are the stores, the    *)
(* write-back and the fence of each step of the clear.  Each group below   *)
(* implements the coarse action it names: run back to back, its steps      *)
(* make the coarse step's change (the only difference is when a thread's   *)
(* own pending flushopt takes effect, which PX86.md allows at any time up  *)
(* to the fence).  They are not in Next: the model checks the coarse       *)
(* spec; traces/memento/DetectableCASTrace.tla replays the code's steps    *)
(* with these (one Sim event each).  FloorLine and RootLine are one line   *)
(* in the code (the status line): E0s-E1f persist them together.          *)

\* L33 (clflush loc) as clflushopt loc ...
L33w(t) ==
    /\ th[t].pc = "L33"
    /\ pfo' = IF FlushLoc THEN [pfo EXCEPT ![t] = @ \cup {LocLine(Op(t).loc)}] ELSE pfo
    /\ SetTh(t, [th[t] EXCEPT !.pc = "L33f"])
    /\ UNCHANGED <<pm, own, local, clock, args, crashes, tcrashes, ninv, rep, gh>>

\* ... and sfence (the flush takes effect).  Also each later sfence of the
\* split actions below (Fence(t, next): the pending flushopts take effect,
\* pc moves on to next).
Fence(t, next) ==
    /\ pm' = Persist(pm, pfo[t])
    /\ pfo' = [pfo EXCEPT ![t] = {}]
    /\ SetTh(t, [th[t] EXCEPT !.pc = next])
    /\ UNCHANGED <<own, local, clock, args, crashes, tcrashes, ninv, rep, gh>>
L33f(t) == th[t].pc = "L33f" /\ Fence(t, "L34")

\* L34: ts_succ := encodeTs(~p_own, rdtscp); lfence (the ghost as in L34).
L34r(t) ==
    /\ th[t].pc = "L34"
    /\ LET ts == TsWord(Flip(th[t].pown), FALSE, clock + 1)
           last == {m \in 1 .. Len(gh[t]) : gh[t][m].op = I(t)}
       IN /\ clock' = clock + 1
          /\ SetTh(t, [th[t] EXCEPT !.ts = ts, !.pc = "L35"])
          /\ gh' = IF last = {} THEN gh
                   ELSE LET m == CHOOSE x \in last : \A y \in last : y <= x
                        IN [gh EXCEPT ![t][m].ts = clock + 1]
    /\ UNCHANGED <<pm, pfo, own, local, args, crashes, tcrashes, ninv, rep>>

\* L35: STOREPLAIN(mmt, ts_succ) ...
L35s(t) ==
    /\ th[t].pc = "L35"
    /\ pm' = StoreTo(pm, MmtLine(t, th[t].k), th[t].ts, NoTag)
    /\ SetTh(t, [th[t] EXCEPT !.pc = "L35w"])
    /\ UNCHANGED <<pfo, own, local, clock, args, crashes, tcrashes, ninv, rep, gh>>

\* ... flushopt mmt.
L35w(t) ==
    /\ th[t].pc = "L35w"
    /\ pfo' = IF FlushoptMmt THEN [pfo EXCEPT ![t] = @ \cup {MmtLine(t, th[t].k)}] ELSE pfo
    /\ SetTh(t, [th[t] EXCEPT !.pc = "L36"])
    /\ UNCHANGED <<pm, own, local, clock, args, crashes, tcrashes, ninv, rep, gh>>

\* L29-L31 as four steps: ts_fail := encodeTs(Fail, rdtscp) (FailTs =
\* "rdtscp"; "zero": no read) ...
L29r(t) ==
    /\ th[t].pc = "L30"
    /\ LET tsv == IF FailTs = "zero" THEN 0 ELSE clock + 1 IN
       /\ clock' = IF FailTs = "zero" THEN clock ELSE clock + 1
       /\ SetTh(t, [th[t] EXCEPT !.ts = TsWord(Even, TRUE, tsv), !.pc = "L30s"])
    /\ UNCHANGED <<pm, pfo, own, local, args, crashes, tcrashes, ninv, rep, gh>>

\* ... STOREPLAIN(mmt, ts_fail) ...
L30s(t) ==
    /\ th[t].pc = "L30s"
    /\ pm' = StoreTo(pm, MmtLine(t, th[t].k), th[t].ts, NoTag)
    /\ SetTh(t, [th[t] EXCEPT !.pc = "L30w"])
    /\ UNCHANGED <<pfo, own, local, clock, args, crashes, tcrashes, ninv, rep, gh>>

\* ... flush mmt (clflushopt, then sfence) ...
L30w(t) ==
    /\ th[t].pc = "L30w"
    /\ pfo' = [pfo EXCEPT ![t] = @ \cup {MmtLine(t, th[t].k)}]
    /\ SetTh(t, [th[t] EXCEPT !.pc = "L30f"])
    /\ UNCHANGED <<pm, own, local, clock, args, crashes, tcrashes, ninv, rep, gh>>

\* ... and STOREPLAIN(LOCAL[tid], ts_fail); return Err.
L30f(t) ==
    /\ th[t].pc = "L30f"
    /\ pm' = Persist(pm, pfo[t])
    /\ pfo' = [pfo EXCEPT ![t] = {}]
    /\ local' = [local EXCEPT ![t] = th[t].ts.ts]
    /\ Finish(t, "Err")
    /\ UNCHANGED <<own, clock, args, crashes, tcrashes, ninv, gh>>

\* E0 and E1 (OwnInit = "floor") as: store own_floor, store the root word
\* with the clearing flag, one flushopt of both, sfence.
E0s(t) ==
    /\ th[t].pc = "E0"
    /\ pm' = StoreTo(pm, FloorLine(t), own[t], NoTag)
    /\ SetTh(t, [th[t] EXCEPT !.pc = "E0b"])
    /\ UNCHANGED <<pfo, own, local, clock, args, crashes, tcrashes, ninv, rep, gh>>
E1s(t) ==
    /\ th[t].pc = "E0b"
    /\ pm' = StoreTo(pm, RootLine(t), RootWord(th[t].r, TRUE), NoTag)
    /\ SetTh(t, [th[t] EXCEPT !.pc = "E1w"])
    /\ UNCHANGED <<pfo, own, local, clock, args, crashes, tcrashes, ninv, rep, gh>>
E1w(t) ==
    /\ th[t].pc = "E1w"
    /\ pfo' = [pfo EXCEPT ![t] = @ \cup {FloorLine(t), RootLine(t)}]
    /\ SetTh(t, [th[t] EXCEPT !.pc = "E1f"])
    /\ UNCHANGED <<pm, own, local, clock, args, crashes, tcrashes, ninv, rep, gh>>
E1f(t) == th[t].pc = "E1f" /\ Fence(t, "E2")

\* E2 and E3 as: the memento clears, their flushopt, sfence; the root word
\* of the next root operation, its flushopt, sfence.
E2s(t) ==
    /\ th[t].pc = "E2"
    /\ LET ms == {MmtLine(t, k) : k \in 1 .. OpsPerRoot}
           RECURSIVE ClearAll(_, _)
           ClearAll(m, S) == IF S = {} THEN m
                             ELSE LET ln == CHOOSE x \in S : TRUE
                                  IN ClearAll(StoreTo(m, ln, ZeroTs, NoTag), S \ {ln})
       IN pm' = ClearAll(pm, ms)
    /\ SetTh(t, [th[t] EXCEPT !.pc = "E2w"])
    /\ UNCHANGED <<pfo, own, local, clock, args, crashes, tcrashes, ninv, rep, gh>>
E2w(t) ==
    /\ th[t].pc = "E2w"
    /\ pfo' = [pfo EXCEPT ![t] = @ \cup {MmtLine(t, k) : k \in 1 .. OpsPerRoot}]
    /\ SetTh(t, [th[t] EXCEPT !.pc = "E2f"])
    /\ UNCHANGED <<pm, own, local, clock, args, crashes, tcrashes, ninv, rep, gh>>
E2f(t) == th[t].pc = "E2f" /\ Fence(t, "E3")
E3s(t) ==
    /\ th[t].pc = "E3"
    /\ pm' = StoreTo(pm, RootLine(t), RootWord(th[t].r + 1, FALSE), NoTag)
    /\ SetTh(t, [th[t] EXCEPT !.pc = "E3w"])
    /\ UNCHANGED <<pfo, own, local, clock, args, crashes, tcrashes, ninv, rep, gh>>
E3w(t) ==
    /\ th[t].pc = "E3w"
    /\ pfo' = [pfo EXCEPT ![t] = @ \cup {RootLine(t)}]
    /\ SetTh(t, [th[t] EXCEPT !.pc = "E3f"])
    /\ UNCHANGED <<pm, own, local, clock, args, crashes, tcrashes, ninv, rep, gh>>
E3f(t) ==
    /\ th[t].pc = "E3f"
    /\ pm' = Persist(pm, pfo[t])
    /\ pfo' = [pfo EXCEPT ![t] = {}]
    /\ SetTh(t, Restart(pm', t, FALSE))
    /\ UNCHANGED <<own, local, clock, args, crashes, tcrashes, ninv, rep, gh>>

\* E3 as Runtime::open finishes a clear a full crash cut (§6.3): as E3, but
\* the next root operation runs in recovery mode, as every thread's first
\* root operation after a crash does in the implementation.  Not a finer
\* E3: the model's E3 runs it normally (TLC checks recovery mode only for a
\* root operation a crash cut); traces/README.md, "Open".
E3r(t) ==
    /\ th[t].pc = "E3"
    /\ pm' = Persist(StoreTo(Persist(pm, pfo[t]), RootLine(t), RootWord(th[t].r + 1, FALSE), NoTag),
                     {RootLine(t)})
    /\ pfo' = [pfo EXCEPT ![t] = {}]
    /\ SetTh(t, Restart(pm', t, TRUE))
    /\ UNCHANGED <<own, local, clock, args, crashes, tcrashes, ninv, rep, gh>>

\* An sfence of the thread's pending flushopts before a locked RMW, where the
\* backend's RMWs do not complete write-backs (the implementation's
\* fence_unless_rmw_fences): they take effect here, before the RMW that
\* drains them in the actions above (FlushoptTiming: PX86.md lets a
\* flushopt take effect any time before the fence that orders it).
Sfence(t) ==
    /\ pfo[t] # {}
    /\ pm' = Persist(pm, pfo[t])
    /\ pfo' = [pfo EXCEPT ![t] = {}]
    /\ UNCHANGED <<own, local, clock, th, args, crashes, tcrashes, ninv, rep, gh>>

\* The finer next-state relation: each coarse action replaced by its group.
FineThreadStep(t) ==
    \/ E0s(t) \/ E1s(t) \/ E1w(t) \/ E1f(t) \/ E2s(t) \/ E2w(t) \/ E2f(t)
    \/ E3s(t) \/ E3w(t) \/ E3f(t) \/ EF(t)
    \/ L6(t) \/ L12(t) \/ L23(t) \/ L26(t) \/ L29r(t) \/ L30s(t) \/ L30w(t) \/ L30f(t)
    \/ L33w(t) \/ L33f(t) \/ L34r(t) \/ L35s(t) \/ L35w(t) \/ L36(t) \/ L38(t)
    \/ H4(t) \/ H5(t) \/ H10(t) \/ H11(t) \/ H13(t) \/ H18(t) \/ Sfence(t)

-----------------------------------------------------------------------------
(* Persistence and crashes.                                                *)

\* An orphaned flushopt (of a crashed thread) takes effect.
OrphanFlush(ln) ==
    /\ ln \in orph
    /\ pm' = Persist(pm, {ln})
    /\ orph' = orph \ {ln}
    /\ UNCHANGED <<pfo, own, local, clock, th, args, crashes, tcrashes, ninv, rep, gh>>

\* FlushoptTiming.  A pending flushopt of thread t takes effect at the latest at the thread's
\* next locked RMW or sfence (each of those actions drains pfo[t] first).  It
\* may take effect earlier on real hardware (PX86.md); that is not a separate
\* action here because it changes nothing visible and only raises a line's
\* mark earlier, i.e. it only removes crash images: every state reachable
\* with an early write-back is reachable without it, and so is every crash
\* image.  (The refinement mapping then sees a helped CAS take effect at the
\* helper's locked RMW rather than a little earlier.)

\* A thread crash (§2.5: the monitor re-creates the thread, which resumes its
\* root operation in recovery mode): registers and LOCAL[tid] are lost; OWN
\* and PM survive.  The crashed thread's flushopts were issued: the hardware
\* still performs them, but no fence of any thread orders them any more
\* (orph: they take effect at any time, or are lost by a full crash).
ThreadCrash(t) ==
    /\ tcrashes < MaxThreadCrashes
    /\ th[t].pc # "Done"
    /\ tcrashes' = tcrashes + 1
    /\ SetTh(t, Restart(pm, t, TRUE))
    /\ pfo' = [pfo EXCEPT ![t] = {}]
    /\ orph' = orph \cup pfo[t]
    /\ local' = [local EXCEPT ![t] = 0]
    /\ UNCHANGED <<pm, own, clock, args, crashes, ninv, rep, gh>>

\* OWN[tid] after a full crash (§3.1): the newest successful CAS memento of
\* tid (and, with the fix, own_floor[tid]); encodeTs(Even, 0) if none.
InitOwn(m, t) ==
    LET ws == {Vis(m, MmtLine(t, k)) : k \in 1 .. OpsPerRoot}
                 \cup (IF OwnInit = "floor" THEN {Vis(m, FloorLine(t))} ELSE {})
        ok == {w \in ws : ~w.fail /\ w.ts > 0}
    IN IF ok = {} THEN ZeroTs
       ELSE LET w == CHOOSE x \in ok : \A y \in ok : y.ts <= x.ts
            IN TsWord(w.par, FALSE, w.ts)

\* The images a full crash may leave: per line a prefix of its unpersisted
\* stores (0: none of them).
Dirty == {ln \in LineIds : pm[ln].s # <<>>}
MaxPending == LET ls == {Len(pm[ln].s) : ln \in LineIds} IN CHOOSE x \in ls : \A y \in ls : y <= x
Images == {c \in [Dirty -> 0 .. MaxPending] : \A ln \in Dirty : c[ln] <= Len(pm[ln].s)}
Keep(c, ln) == IF ln \in Dirty THEN c[ln] ELSE 0
TagsIn(ln, a, b) == {pm[ln].s[j].tag : j \in a .. b} \ {NoTag}

\* A full-system crash: every line keeps a prefix of its stores, DRAM is lost,
\* OWN is re-initialised from the mementos, LOCAL is 0, every thread restarts
\* (§2.5).  Ghosts: first plain CASes kept become durable, the others vanish
\* from gh; a help whose HELP store was lost is no help.
Crash ==
    /\ crashes < MaxCrashes
    /\ \E t \in Threads : th[t].pc # "Done"
    /\ crashes' = crashes + 1
    /\ \E c \in Images :
         LET m1 == [ln \in LineIds |->
                      [p |-> IF Keep(c, ln) = 0 THEN pm[ln].p ELSE pm[ln].s[Keep(c, ln)].w,
                       s |-> <<>>]]
             kept == UNION {TagsIn(ln, 1, Keep(c, ln)) : ln \in LocLines}
             lost == UNION {TagsIn(ln, Keep(c, ln) + 1, Len(pm[ln].s)) : ln \in LocLines}
             Fix(e, u) == IF e.hts # 0 /\ e.hts > Vis(m1, HelpLine(e.par, u)).ts
                          THEN [e EXCEPT !.hts = 0] ELSE e
             Survives(u, m) == Tag(u, gh[u][m].op) \notin lost
                               \/ \E m2 \in m + 1 .. Len(gh[u]) : gh[u][m2].op = gh[u][m].op
         IN /\ pm' = m1
            /\ own' = [t \in Threads |-> InitOwn(m1, t)]
            /\ ncom' = [t \in Threads |-> [i \in OpIdx |->
                          IF Tag(t, i) \in kept THEN Min2(ncom[t][i] + 1) ELSE ncom[t][i]]]
            /\ gh' = [u \in Threads |->
                        LET keepIdx == {m \in 1 .. Len(gh[u]) : Survives(u, m)}
                            RECURSIVE Sel(_)
                            Sel(j) == IF j = 0 THEN <<>>
                                      ELSE IF j \in keepIdx THEN Append(Sel(j - 1), Fix(gh[u][j], u))
                                      ELSE Sel(j - 1)
                        IN Sel(Len(gh[u]))]
    /\ pfo' = [t \in Threads |-> {}]
    /\ orph' = {}
    /\ local' = [t \in Threads |-> 0]
    /\ th' = [t \in Threads |-> IF th[t].pc = "Done" THEN th[t] ELSE Restart(pm', t, TRUE)]
    /\ UNCHANGED <<clock, args, tcrashes, ninv, rep>>

-----------------------------------------------------------------------------
(* The next-state relation, with the ghost updates every step shares.      *)

\* The abstract register: the value of each location's persisted prefix.
AReg(m) == [l \in Locs |-> m[LocLine(l)].p.val]

\* The ghost afail after the step (the abstract register's new value).
FailGhost ==
    afail' = [t \in Threads |-> [i \in OpIdx |->
                afail[t][i] \/ (i <= ninv'[t] /\ AReg(pm')[args'[t][i].loc] # args'[t][i].old)]]

\* Tags of first plain CASes not yet durable.
PendingTags(m) == UNION {{m[ln].s[j].tag : j \in 1 .. Len(m[ln].s)} : ln \in LocLines} \ {NoTag}

\* Outside a crash, a first plain CAS leaves the unpersisted stores only by
\* becoming durable (a line only loses stores by a flush taking effect).
CommitGhost ==
    LET gone == PendingTags(pm) \ PendingTags(pm') IN
    ncom' = [t \in Threads |-> [i \in OpIdx |->
               IF Tag(t, i) \in gone THEN Min2(ncom[t][i] + 1) ELSE ncom[t][i]]]

\* The pcs only the finer steps reach.
FinePcs == {"L33f", "L35", "L35w", "L30s", "L30w", "L30f", "E0b", "E1w", "E1f", "E2w", "E2f",
            "E3w", "E3f"}

ThreadStep(t) ==
    \/ E0(t) \/ E1(t) \/ E2(t) \/ E3(t) \/ EF(t)
    \/ L6(t) \/ L12(t) \/ L23(t) \/ L26(t) \/ L30(t) \/ L33(t) \/ L34(t) \/ L36(t) \/ L38(t)
    \/ H4(t) \/ H5(t) \/ H10(t) \/ H11(t) \/ H13(t) \/ H18(t)

Next ==
    \/ /\ \/ \E t \in Threads : ThreadStep(t) /\ UNCHANGED orph
          \/ \E t \in Threads : ThreadCrash(t)
          \/ \E ln \in orph : OrphanFlush(ln)
       /\ CommitGhost
       /\ FailGhost
    \/ Crash /\ FailGhost

Spec == Init /\ [][Next]_vars

\* The finer spec: the finer steps in place of the coarse thread steps, and
\* E3r wherever a thread is in recovery mode (a superset of the runs in which
\* Runtime::open finishes a clear); DetectableCAS_Fine.cfg checks the
\* invariants and the refinement on it.
FineNext ==
    \/ /\ \/ \E t \in Threads : (FineThreadStep(t) \/ (th[t].rec /\ E3r(t))) /\ UNCHANGED orph
          \/ \E t \in Threads : ThreadCrash(t)
          \/ \E ln \in orph : OrphanFlush(ln)
       /\ CommitGhost
       /\ FailGhost
    \/ Crash /\ FailGhost

FineSpec == Init /\ [][FineNext]_vars

-----------------------------------------------------------------------------
(* Properties.                                                             *)

TypeOK ==
    /\ DOMAIN pm = LineIds
    /\ orph \subseteq LineIds
    /\ \A t \in Threads :
         /\ pfo[t] \subseteq LineIds
         /\ own[t].par \in {0, 1} /\ own[t].ts \in Nat
         /\ local[t] \in Nat
         /\ th[t].pc \in {"Done", "E0", "E1", "E2", "E3", "EF", "L6", "L12", "L23", "L26", "L30",
                          "L33", "L34", "L36", "L38", "H4", "H5", "H10", "H11", "H13", "H18"}
                          \cup FinePcs
         /\ th[t].rec \in BOOLEAN
         /\ ninv[t] \in 0 .. NOps
         /\ \A i \in OpIdx : /\ rep[t][i] \subseteq {"OK", "Err"}
                             /\ ncom[t][i] \in 0 .. 2
                             /\ afail[t][i] \in BOOLEAN
                             /\ i <= ninv[t] => args[t][i] \in ArgChoices
    /\ \A l \in Locs : \A w \in {pm[LocLine(l)].p} \cup {e.w : e \in Range(pm[LocLine(l)].s)} :
         w.par \in {0, 1} /\ w.tid \in Threads \cup {NoTid} /\ w.val \in Vals /\ w.nonce \in Nat
         /\ ((Form = "oneWord" \/ w.tid = NoTid) => w.nonce = 0)
    /\ clock \in Nat /\ crashes \in 0 .. MaxCrashes /\ tcrashes \in 0 .. MaxThreadCrashes

\* Exactly once: each CAS's first plain CAS becomes durable at most once; all
\* its reports agree; it reports OK iff that first plain CAS is durable (it
\* took effect and made the change), Err iff it never will be.
ExactlyOnce ==
    \A t \in Threads : \A i \in OpIdx :
        /\ ncom[t][i] <= 1
        /\ Cardinality(rep[t][i]) <= 1
        /\ "OK" \in rep[t][i] => ncom[t][i] = 1
        /\ "Err" \in rep[t][i] => ncom[t][i] = 0

\* §3.4: for tid's n-th (successful) CAS with parity p_n and timestamp t_n,
\* t_{n-1} < HELP[p_n][tid] iff the n-th or a later CAS with parity p_n was
\* helped (a helper's CAS on HELP for it, L13, whose store survived).
\* t_0 = 0; n is checked once t_{n-1} is known.
HelpInvariant ==
    \A t \in Threads : \A n \in 1 .. Len(gh[t]) :
        LET prev == IF n = 1 THEN 0 ELSE gh[t][n - 1].ts
            p == gh[t][n].par
            hv == Vis(pm, HelpLine(p, t)).ts
        IN (n = 1 \/ prev # 0) =>
             ((prev < hv) <=> \E m \in n .. Len(gh[t]) : gh[t][m].par = p /\ gh[t][m].hts # 0)

\* A location's line holds at most one first plain CAS not yet durable.
OneUndurableFirstCas ==
    \A ln \in LocLines :
        Cardinality({j \in 1 .. Len(pm[ln].s) : pm[ln].s[j].tag # NoTag}) <= 1

\* Refinement of the atomic detectable register.
Abs == INSTANCE DetectableCasAbstract WITH
          areg <- AReg(pm), ainv <- ninv, aargs <- args,
          acom <- [t \in Threads |-> [i \in OpIdx |-> ncom[t][i] > 0]],
          arep <- rep, afail <- afail, NOps <- NOps
AbstractSpec == Abs!ASpec

Symmetry == Permutations(Threads)
\* Where the threads differ (OneCasThreads), only the single-CAS threads are interchangeable.
HelperSymmetry == Permutations(OneCasThreads)

\* Timestamps are only compared (<, <=, =, # 0) and rdtscp returns a value
\* above all of them, so two states that differ by an order-preserving
\* renumbering of their timestamps (0 kept) have the same futures: TLC
\* identifies them (VIEW).  Each timestamp becomes its rank.
TsOf(w) == IF "ts" \in DOMAIN w THEN {w.ts} ELSE IF "nonce" \in DOMAIN w THEN {w.nonce} ELSE {}
AllTs ==
    {0, clock}
    \cup UNION {TsOf(pm[ln].p) \cup UNION {TsOf(e.w) : e \in Range(pm[ln].s)} : ln \in LineIds}
    \cup UNION {{own[t].ts, local[t], th[t].town, th[t].pt.ts, th[t].tloc, th[t].ts.ts,
                 th[t].tcur, th[t].hth, th[t].hold.nonce, th[t].cur.nonce}
                \cup {e.ts : e \in Range(gh[t])} \cup {e.hts : e \in Range(gh[t])}
                \cup {e.non : e \in Range(gh[t])}
                : t \in Threads}
RankView ==
    LET all == AllTs
        R(x) == Cardinality({y \in all : y < x})
        RW(w) == IF "ts" \in DOMAIN w THEN [w EXCEPT !.ts = R(w.ts)]
                 ELSE IF "nonce" \in DOMAIN w THEN [w EXCEPT !.nonce = R(w.nonce)] ELSE w
    IN << [ln \in LineIds |-> [p |-> RW(pm[ln].p),
                               s |-> [j \in DOMAIN pm[ln].s |-> [pm[ln].s[j] EXCEPT !.w = RW(@)]]]],
          pfo, orph, [t \in Threads |-> RW(own[t])], [t \in Threads |-> R(local[t])], R(clock),
          [t \in Threads |-> [th[t] EXCEPT !.town = R(@), !.pt = RW(@), !.tloc = R(@),
                                           !.ts = RW(@), !.tcur = R(@), !.hth = R(@),
                                           !.hold = RW(@), !.cur = RW(@)]],
          args, crashes, tcrashes, ninv, rep, ncom, afail,
          [t \in Threads |-> [m \in DOMAIN gh[t] |-> [gh[t][m] EXCEPT !.ts = R(@), !.hts = R(@),
                                                                  !.non = R(@)]]] >>
=============================================================================

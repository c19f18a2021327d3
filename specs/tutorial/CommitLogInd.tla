----------------------------- MODULE CommitLogInd -----------------------------
(***************************************************************************)
(* Inductiveness of the commit log's CrashInvariant (issue 20, §4).        *)
(* CommitLog.cfg checks CrashInvariant on the states reachable within its  *)
(* bounds; this module states it, strengthened, as an inductive invariant  *)
(* IndInv, and CommitLogInd.cfg checks                                     *)
(*     IndInv /\ [Next]_vars => IndInv'                                    *)
(* with TLC as specs/memento/CheckpointInd.tla does: INIT IndInit is every *)
(* state of a bounded domain (IndDomain) that satisfies IndInv, not only   *)
(* the reachable ones; NEXT is CommitLog's own Next; the INVARIANT is      *)
(* IndInv; the ACTION_CONSTRAINT IndDomain (on the source state only)      *)
(* keeps TLC from expanding successors that leave the domain, which it     *)
(* still checks against IndInv.                                            *)
(*                                                                         *)
(* THE DOMAIN.  CommitLogInd.cfg's threads and records (every value of the *)
(* counters, every set of written and durable records, every thread state  *)
(* IndInv allows); the crash counter 0 (a state whose crashes are used up  *)
(* has the same successors minus Crash); an idle thread's ticket 0 (no     *)
(* step reads it before Reserve writes it).                                *)
(*                                                                         *)
(* THE STRENGTHENING.  CrashInvariant says every record below any commit   *)
(* value a crash may keep is durable; with fcommit <= commit that is every *)
(* record below the visible commit value.  It is kept by Commit because a *)
(* thread reaches "commit" only with its record durable (Fence settled its *)
(* write-back), so IndInv says, per thread and step: an idle thread has no *)
(* write-back pending; a thread holding a ticket holds one below `next`,  *)
(* no other thread holds the same one, and it is at or above `commit`     *)
(* until the thread commits it and below after; its record is written     *)
(* from "flush" on, pending in its write-back set (or durable) at "fence", *)
(* durable at "commit"; a thread's record write-back is pending only at    *)
(* "fence", its commit write-back (at most the visible commit value) only  *)
(* at "sync".  Durable records are written.                                *)
(*                                                                         *)
(* Not vacuous: mutants/CommitLogIndNoFence.cfg (NoRecordFence = TRUE, the *)
(* switch of mutants/CommitLogNoFence.cfg) gets a successor breaking       *)
(* IndInv.                                                                 *)
(***************************************************************************)
EXTENDS CommitLogMC

Holding == {"write", "flush", "fence", "commit", "flushc", "sync"}
PreCommit == {"write", "flush", "fence", "commit"}

ThreadInv(t) ==
    /\ pc[t] = "idle" => pendRec[t] = {} /\ pendCommit[t] = 0
    /\ pc[t] \in Holding =>
         /\ tk[t] < next
         /\ \A u \in Threads \ {t} : pc[u] \in Holding => tk[u] # tk[t]
         /\ pc[t] \in PreCommit => commit <= tk[t]
         /\ pc[t] \notin PreCommit => tk[t] < commit
    /\ pc[t] \in {"flush", "fence", "commit", "flushc", "sync"} => tk[t] \in written
    /\ pc[t] = "fence" => tk[t] \in pendRec[t] \cup durable
    /\ pc[t] = "commit" => tk[t] \in durable
    /\ pc[t] # "fence" => pendRec[t] = {}
    /\ pc[t] # "sync" => pendCommit[t] = 0
    /\ pendRec[t] \subseteq {tk[t]}
    /\ pendCommit[t] <= commit

IndInv ==
    /\ TypeOK
    /\ CrashInvariant
    /\ CommitOrder
    /\ durable \subseteq written
    /\ \A i \in 0 .. commit - 1 : i \in durable
    /\ \A t \in Threads : ThreadInv(t)

-----------------------------------------------------------------------------
(* The bounded domain.                                                     *)

IndDomain ==
    /\ crashes = 0
    /\ \A t \in Threads : pc[t] = "idle" => tk[t] = 0

\* A thread's candidate states (step, ticket, pending write-backs), before IndInv's filter.
ThStates == {<<"idle", 0, {}, 0>>}
            \cup UNION {{<<p, i, pr, pcm>> : p \in Holding, pr \in {{}, {i}}, pcm \in 0 .. NRec} : i \in Rec}

\* ThreadInv of one thread in state f (its parts that read no other thread).
OwnOK(f) ==
    LET p == f[1]  i == f[2]  pr == f[3]  pcm == f[4] IN
    /\ p \in Holding => /\ i < next
                        /\ p \in PreCommit => commit <= i
                        /\ p \notin PreCommit => i < commit
    /\ p \in {"flush", "fence", "commit", "flushc", "sync"} => i \in written
    /\ p = "fence" => i \in pr \cup durable
    /\ p = "commit" => i \in durable
    /\ p # "fence" => pr = {}
    /\ p # "sync" => pcm = 0
    /\ pcm <= commit

\* IndInit: every IndInv state of the domain; each thread's state filtered by OwnOK before the
\* threads are combined.
IndInit ==
    /\ crashes = 0
    /\ next \in 0 .. NRec
    /\ commit \in 0 .. next
    /\ fcommit \in 0 .. commit
    /\ written \in SUBSET Rec
    /\ durable \in SUBSET written
    /\ \A i \in 0 .. commit - 1 : i \in durable
    /\ LET cands == {f \in ThStates : OwnOK(f)} IN
       \E f \in [Threads -> cands] :
         /\ pc = [t \in Threads |-> f[t][1]]
         /\ tk = [t \in Threads |-> f[t][2]]
         /\ pendRec = [t \in Threads |-> f[t][3]]
         /\ pendCommit = [t \in Threads |-> f[t][4]]
         /\ IndInv
=============================================================================

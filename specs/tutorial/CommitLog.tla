----------------------------- MODULE CommitLog -----------------------------
(***************************************************************************)
(* The tutorial commit-marker log of `perdure_pm::commit_log`, as a        *)
(* protocol with crashes.                                                  *)
(*                                                                         *)
(* An append by thread t:                                                  *)
(*   Reserve      take ticket i (fetch-add on the reserved word)           *)
(*   WriteRecord  write record i                                           *)
(*   FlushRecord  pwb(record i)                                            *)
(*   Fence        pfence: the thread's pending write-backs take effect     *)
(*   Commit       once commit = i, store commit := i + 1                   *)
(*   FlushCommit  pwb(commit word)                                         *)
(*   Sync         psync: as Fence; the append is durable                   *)
(*                                                                         *)
(* Px86, line-granular (PX86.md): each record and the commit word sit on   *)
(* lines of their own; a write-back takes effect at the latest at its      *)
(* thread's next fence, and then the line is persisted up to what was      *)
(* visible when the write-back was issued. A crash keeps any record line   *)
(* that was written (persisted or not yet) and any commit value between    *)
(* the last guaranteed-persisted one and the visible one (the commit word  *)
(* only grows, so its line's store sequence is monotone).                  *)
(*                                                                         *)
(* The actions carry the parameters an implementation trace provides, so  *)
(* `traces/tutorial/CommitLogTrace.tla` can replay traces of the Rust code *)
(* through them.                                                           *)
(*                                                                         *)
(* Property: CrashInvariant — every commit value that a crash may persist  *)
(* covers only records guaranteed persisted. With the record fence removed *)
(* (constant NoRecordFence, the mutant in mutants/) TLC finds a violation. *)
(* Not covered: record contents (a record is written or not, as one line), *)
(* the queue-level history (the crash explorer checks that), wrap-around.  *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets

CONSTANTS
    Threads,        \* thread identifiers
    NRec,           \* capacity: records 0 .. NRec-1
    MaxCrashes,     \* bound on crashes (model checking)
    NoRecordFence   \* TRUE: the mutant that skips the Fence after FlushRecord

Rec == 0 .. NRec - 1

VARIABLES
    next,       \* tickets handed out (volatile; reset by recovery)
    commit,     \* the commit word as visible
    fcommit,    \* the commit value guaranteed persisted
    written,    \* records written and visible
    durable,    \* records guaranteed persisted
    pendRec,    \* [Threads -> SUBSET Rec]: record write-backs awaiting a fence
    pendCommit, \* [Threads -> 0..NRec]: commit value covered by a pending write-back
    pc,         \* [Threads -> step]
    tk,         \* [Threads -> ticket]
    crashes     \* crashes so far

vars == <<next, commit, fcommit, written, durable, pendRec, pendCommit, pc, tk, crashes>>

Steps == {"idle", "write", "flush", "fence", "commit", "flushc", "sync"}

TypeOK ==
    /\ next \in 0 .. NRec
    /\ commit \in 0 .. NRec
    /\ fcommit \in 0 .. NRec
    /\ written \subseteq Rec
    /\ durable \subseteq Rec
    /\ pendRec \in [Threads -> SUBSET Rec]
    /\ pendCommit \in [Threads -> 0 .. NRec]
    /\ pc \in [Threads -> Steps]
    /\ tk \in [Threads -> 0 .. NRec]
    /\ crashes \in 0 .. MaxCrashes

Init ==
    /\ next = 0 /\ commit = 0 /\ fcommit = 0
    /\ written = {} /\ durable = {}
    /\ pendRec = [t \in Threads |-> {}]
    /\ pendCommit = [t \in Threads |-> 0]
    /\ pc = [t \in Threads |-> "idle"]
    /\ tk = [t \in Threads |-> 0]
    /\ crashes = 0

Max(a, b) == IF a > b THEN a ELSE b

\* append step 0: ticket i from the reserved word
Reserve(t, i) ==
    /\ pc[t] = "idle" /\ i = next /\ next < NRec
    /\ next' = next + 1
    /\ tk' = [tk EXCEPT ![t] = i]
    /\ pc' = [pc EXCEPT ![t] = "write"]
    /\ UNCHANGED <<commit, fcommit, written, durable, pendRec, pendCommit, crashes>>

\* append step 1: write record i
WriteRecord(t, i) ==
    /\ pc[t] = "write" /\ i = tk[t]
    /\ written' = written \cup {i}
    /\ pc' = [pc EXCEPT ![t] = "flush"]
    /\ UNCHANGED <<next, commit, fcommit, durable, pendRec, pendCommit, tk, crashes>>

\* append step 2a: pwb(record i)
FlushRecord(t, i) ==
    /\ pc[t] = "flush" /\ i = tk[t]
    /\ pendRec' = [pendRec EXCEPT ![t] = @ \cup {i}]
    /\ pc' = [pc EXCEPT ![t] = IF NoRecordFence THEN "commit" ELSE "fence"]
    /\ UNCHANGED <<next, commit, fcommit, written, durable, pendCommit, tk, crashes>>

\* Px86: at a fence, the thread's pending write-backs have taken effect
Settle(t) ==
    /\ durable' = durable \cup pendRec[t]
    /\ fcommit' = Max(fcommit, pendCommit[t])
    /\ pendRec' = [pendRec EXCEPT ![t] = {}]
    /\ pendCommit' = [pendCommit EXCEPT ![t] = 0]

\* append step 2b: pfence
Fence(t) ==
    /\ pc[t] = "fence"
    /\ Settle(t)
    /\ pc' = [pc EXCEPT ![t] = "commit"]
    /\ UNCHANGED <<next, commit, written, tk, crashes>>

\* append step 3: commit in ticket order
Commit(t, n) ==
    /\ pc[t] = "commit" /\ commit = tk[t] /\ n = tk[t] + 1
    /\ commit' = n
    /\ pc' = [pc EXCEPT ![t] = "flushc"]
    /\ UNCHANGED <<next, fcommit, written, durable, pendRec, pendCommit, tk, crashes>>

\* append step 4a: pwb(commit word), covering the value visible now
FlushCommit(t) ==
    /\ pc[t] = "flushc"
    /\ pendCommit' = [pendCommit EXCEPT ![t] = Max(@, commit)]
    /\ pc' = [pc EXCEPT ![t] = "sync"]
    /\ UNCHANGED <<next, commit, fcommit, written, durable, pendRec, tk, crashes>>

\* append step 4b: psync; the append is acknowledged
Sync(t) ==
    /\ pc[t] = "sync"
    /\ Settle(t)
    /\ pc' = [pc EXCEPT ![t] = "idle"]
    /\ UNCHANGED <<next, commit, written, tk, crashes>>

(* A crash keeping commit value c and the records in D, then recovery     *)
(* (null: the persisted commit word says what exists; tickets restart     *)
(* there). Px86 allows exactly: c between the guaranteed and the visible   *)
(* commit value, and D containing every guaranteed record and otherwise   *)
(* only written ones.                                                      *)
CrashAllowed(c, D) ==
    /\ c \in fcommit .. commit
    /\ durable \subseteq D /\ D \subseteq written

Crash(c, D) ==
    /\ crashes < MaxCrashes
    /\ CrashAllowed(c, D)
    /\ next' = c /\ commit' = c /\ fcommit' = c
    /\ written' = D /\ durable' = D
    /\ pendRec' = [t \in Threads |-> {}]
    /\ pendCommit' = [t \in Threads |-> 0]
    /\ pc' = [t \in Threads |-> "idle"]
    /\ tk' = [t \in Threads |-> 0]
    /\ crashes' = crashes + 1

Next ==
    \/ \E t \in Threads :
        \/ \E i \in Rec : Reserve(t, i) \/ WriteRecord(t, i) \/ FlushRecord(t, i)
        \/ Fence(t) \/ FlushCommit(t) \/ Sync(t)
        \/ \E n \in 1 .. NRec : Commit(t, n)
    \/ \E c \in 0 .. NRec, D \in SUBSET Rec : Crash(c, D)

Spec == Init /\ [][Next]_vars

(* Every commit value a crash may persist covers only records that are   *)
(* guaranteed persisted: after any crash, records below the commit word   *)
(* are intact.                                                            *)
CrashInvariant ==
    \A c \in fcommit .. commit : \A i \in 0 .. (c - 1) : i \in durable

\* Sanity: commits happen in ticket order and never pass the tickets.
CommitOrder == commit <= next /\ fcommit <= commit
=============================================================================

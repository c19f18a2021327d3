------------------------------ MODULE Histories ------------------------------
(***************************************************************************)
(* Histories with crashes, as TLA+ values (HISTORY.md).                    *)
(*                                                                         *)
(* A history is a finite sequence of events, each a record mirroring one   *)
(* ndjson line of HISTORY.md (the `header` line is not an event here: the  *)
(* object and its initial state are the sequential specification handed   *)
(* to DurableLinearizability.tla):                                         *)
(*                                                                         *)
(*   EvInvoke(id, t, op, args)  [type |-> "invoke", id, thread, op, args]  *)
(*   EvReturn(id, v)            [type |-> "return", id, value]             *)
(*   EvCrash                    [type |-> "crash"]                         *)
(*   EvRecover(id, v)           [type |-> "recover", id, value]            *)
(*                                                                         *)
(* `args` is a tuple (the JSON array); JSON null is the string Null.       *)
(* Positions in the sequence are the history's lines (1 = the first event  *)
(* after the header); real-time order is the order of positions.           *)
(*                                                                         *)
(* This module gives well-formedness (the rules of HISTORY.md, as          *)
(* `perdure check-history` enforces them) and the classification of       *)
(* operations that durable linearizability and detectability are defined  *)
(* over. It has no constants and no variables: a spec can keep a history  *)
(* in a variable (a history variable) and state properties of it, or a    *)
(* model can check hand-written histories (HistoriesMC.tla).               *)
(*                                                                         *)
(* Extension beyond HISTORY.md's core: a `recover` whose value is NoEffect *)
(* reports that the cut-off operation did NOT take effect (the "whether"   *)
(* of a detectable recovery). `perdure check-history` has no such value;   *)
(* histories without it are classified exactly as the Rust checker does.  *)
(*                                                                         *)
(* Operators are written for clarity, not speed (positions are searched    *)
(* linearly): they are meant for the small histories TLC sees.             *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets
LOCAL INSTANCE TLC   \* ToString

\* JSON null (the `value` of a `return` of enq/write/..., an empty deq/pop).
Null == "null"

\* Equality of two values of possibly different kinds (an integer result
\* against Null, a boolean against an integer, ...). TLC's `=` stops with an
\* error on such pairs ("Attempted to check equality of integer 1 with
\* non-integer"); comparing TLC's printed forms is total and agrees with
\* `=` on the values histories hold (integers, strings, booleans, tuples,
\* records, sets of integers or of strings).
SameValue(a, b) == ToString(a) = ToString(b)

\* The value of a `recover` whose recovery reports "did not take effect"
\* (extension; see the header).
NoEffect == "no-effect"

-----------------------------------------------------------------------------
(* Events (HISTORY.md: one JSON object per line).                          *)

EvInvoke(id, t, op, args) ==
    [type |-> "invoke", id |-> id, thread |-> t, op |-> op, args |-> args]
EvReturn(id, v) == [type |-> "return", id |-> id, value |-> v]
EvCrash == [type |-> "crash"]
EvRecover(id, v) == [type |-> "recover", id |-> id, value |-> v]

EventTypes == {"invoke", "return", "crash", "recover"}

\* The shape of one event: a known type with exactly the fields it needs
\* (ids and threads naturals, `op` a string, `args` a tuple; a `value` is
\* any TLA+ value). A field of the wrong kind (a string id) makes TLC stop
\* with an error rather than yield FALSE: TLC has no total type tests.
EventShapeOK(e) ==
    /\ "type" \in DOMAIN e
    /\ e.type \in EventTypes
    /\ CASE e.type = "invoke" ->
                /\ DOMAIN e = {"type", "id", "thread", "op", "args"}
                /\ e.id \in Nat /\ e.thread \in Nat /\ e.op \in STRING
                /\ DOMAIN e.args = 1 .. Len(e.args)
         [] e.type \in {"return", "recover"} ->
                DOMAIN e = {"type", "id", "value"} /\ e.id \in Nat
         [] e.type = "crash" -> DOMAIN e = {"type"}

-----------------------------------------------------------------------------
(* Positions and operations.                                               *)

Pos(h) == 1 .. Len(h)

\* "Infinity": the end point of an operation that never completes.
Never(h) == Len(h) + 1

IsType(h, i, ty) == h[i].type = ty
IsEvOf(h, i, ty, id) == h[i].type = ty /\ h[i].id = id

\* The operations of h (the ids of its invokes).
Ops(h) == {h[i].id : i \in {j \in Pos(h) : IsType(h, j, "invoke")}}

HasEv(h, ty, id) == \E i \in Pos(h) : IsEvOf(h, i, ty, id)
\* The first line with an event of type ty for operation id (in a
\* well-formed history the only one).
EvAt(h, ty, id) ==
    LET L == {i \in Pos(h) : IsEvOf(h, i, ty, id)}
    IN CHOOSE i \in L : \A j \in L : i <= j

InvokeAt(h, id) == EvAt(h, "invoke", id)

\* The operation's name, arguments and thread.
OpName(h, id) == h[InvokeAt(h, id)].op
OpArgs(h, id) == h[InvokeAt(h, id)].args
OpThread(h, id) == h[InvokeAt(h, id)].thread

\* Status of operation id just before line i.
InvokedBefore(h, id, i) == \E j \in 1 .. (i - 1) : IsEvOf(h, j, "invoke", id)
CompletedBefore(h, id, i) ==
    \E j \in 1 .. (i - 1) : IsEvOf(h, j, "return", id) \/ IsEvOf(h, j, "recover", id)
CrashBetween(h, a, b) == \E k \in (a + 1) .. (b - 1) : IsType(h, k, "crash")

\* Pending just before line i: invoked, not completed, no crash since.
PendingBefore(h, id, i) ==
    /\ InvokedBefore(h, id, i)
    /\ ~CompletedBefore(h, id, i)
    /\ ~CrashBetween(h, InvokeAt(h, id), i)

\* HISTORY.md: "every operation pending at that point [a crash] is cut
\* off". Cut off before line i: some crash after its invoke and before i
\* found it pending (not yet returned).
CutOffBefore(h, id, i) ==
    /\ InvokedBefore(h, id, i)
    /\ \E k \in (InvokeAt(h, id) + 1) .. (i - 1) :
          /\ IsType(h, k, "crash")
          /\ ~\E j \in (InvokeAt(h, id) + 1) .. (k - 1) : IsEvOf(h, j, "return", id)

-----------------------------------------------------------------------------
(* Well-formedness: the rules of HISTORY.md, each checked at its line (the *)
(* names in parentheses are perdure check-history's MalformedReason).     *)

\* "invoke starts operation id on thread. A thread has at most one pending
\* operation." The id is fresh (DuplicateId); the thread has no pending
\* operation (ThreadBusy). An operation cut off by a crash is no longer
\* pending: "After a crash a thread either starts new operations or ...".
InvokeOK(h, i) ==
    /\ ~InvokedBefore(h, h[i].id, i)
    /\ ~\E o \in Ops(h) : PendingBefore(h, o, i) /\ OpThread(h, o) = h[i].thread

\* "return completes a pending operation with value": invoked before
\* (UnknownId), not cut off by a crash (ReturnAfterCrash), not completed
\* already (AlreadyCompleted).
ReturnOK(h, i) == PendingBefore(h, h[i].id, i)

\* "recover completes a cut-off operation after the crash": cut off by a
\* crash before this line (UnknownId if never invoked, RecoverWithoutCrash
\* if still pending), not returned or recovered already (AlreadyCompleted):
\* each cut-off operation is recovered at most once. New operations of the
\* thread and later crashes may come in between (as perdure check-history
\* accepts).
RecoverOK(h, i) ==
    /\ CutOffBefore(h, h[i].id, i)
    /\ ~CompletedBefore(h, h[i].id, i)

EventOK(h, i) ==
    /\ EventShapeOK(h[i])
    /\ CASE h[i].type = "invoke"  -> InvokeOK(h, i)
         [] h[i].type = "return"  -> ReturnOK(h, i)
         [] h[i].type = "recover" -> RecoverOK(h, i)
         [] h[i].type = "crash"   -> TRUE

WellFormed(h) == \A i \in Pos(h) : EventOK(h, i)

\* The first line that breaks a rule (0 if none): what "malformed" reports.
FirstMalformed(h) ==
    IF WellFormed(h) THEN 0
    ELSE CHOOSE i \in Pos(h) : ~EventOK(h, i) /\ \A j \in 1 .. (i - 1) : EventOK(h, j)

-----------------------------------------------------------------------------
(* Classification of the operations of a well-formed history (HISTORY.md,  *)
(* "Verdicts").                                                             *)

\* Returned: took effect exactly once, between its invoke and its return.
Completed(h) == {o \in Ops(h) : HasEv(h, "return", o)}

\* Cut off by a crash (whether or not recovered later).
CutOff(h) == {o \in Ops(h) : CutOffBefore(h, o, Never(h))}

\* Cut off and then reported by a `recover` ...
RecoveredAny(h) == {o \in Ops(h) : HasEv(h, "recover", o)}
\* ... as having taken effect: "the operation took effect exactly once,
\* with that result, between its invoke and the recover".
Recovered(h) == {o \in RecoveredAny(h) : ~SameValue(h[EvAt(h, "recover", o)].value, NoEffect)}
\* ... as not having taken effect (extension, see the header).
RecoveredNoEffect(h) == RecoveredAny(h) \ Recovered(h)

\* Cut off and never recovered: "may take effect at most once, anywhere
\* after its invocation, or not at all".
CutOffNotRecovered(h) == CutOff(h) \ RecoveredAny(h)

\* Pending at the end of the history (no crash after its invoke): treated
\* like a cut-off operation without recover (it may or may not take effect).
PendingAtEnd(h) == {o \in Ops(h) : PendingBefore(h, o, Never(h))}

\* Where an operation completes: its return or recover line; Never(h) for
\* one that has neither.
EndAt(h, o) ==
    IF HasEv(h, "return", o) THEN EvAt(h, "return", o)
    ELSE IF HasEv(h, "recover", o) THEN EvAt(h, "recover", o)
    ELSE Never(h)

\* The result a completed or recovered operation reported.
Result(h, o) == h[EndAt(h, o)].value

\* Real-time order: o1 completed (returned, or was recovered: "a recovered
\* operation's completion point is its recover line") before o2 was
\* invoked. A crash adds no other constraint; an operation that never
\* completes precedes nothing.
Precedes(h, o1, o2) == EndAt(h, o1) < InvokeAt(h, o2)

\* The threads of a history, and the operations of one thread.
HThreads(h) == {h[i].thread : i \in {j \in Pos(h) : IsType(h, j, "invoke")}}
OpsOf(h, t) == {o \in Ops(h) : OpThread(h, o) = t}

\* The history without its crash events ("removing the crash events leaves
\* a linearizable history, where ...").
WithoutCrashes(h) == SelectSeq(h, LAMBDA e : e.type # "crash")
=============================================================================

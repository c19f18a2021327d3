------------------------------ MODULE SeqObjects ------------------------------
(***************************************************************************)
(* The sequential specifications of the six objects of HISTORY.md, in the  *)
(* form DurableLinearizability.tla takes them:                             *)
(*                                                                         *)
(*   <Object>Init                 the initial state (the header's default  *)
(*                                `init`: 0, empty)                        *)
(*   <Object>Apply(s, op, args)   <<next state, result>> of operation op  *)
(*                                with argument tuple args in state s      *)
(*                                                                         *)
(* and, dispatching on the header's object name, ObjectInit(obj) and    *)
(* ObjectApply(obj, s, op, args).                                          *)
(*                                                                         *)
(* Results are as in HISTORY.md's table (and perdure check-history's       *)
(* model.rs): write/enq/push/add return Null; cas/insert/remove/contains   *)
(* return booleans; deq/pop/get/put/remove return Null when there is       *)
(* nothing. An operation the object does not have (or the wrong number of *)
(* arguments) yields the result BadCall and leaves the state unchanged, so *)
(* it never matches a reported result (perdure check-history rejects such *)
(* a history as malformed).                                                *)
(*                                                                         *)
(* Values are compared with SameValue (Histories.tla), so a register may  *)
(* hold Null or a tuple and a cas compare it with an integer.              *)
(*                                                                         *)
(* States: register a value; counter an integer; queue a tuple, front     *)
(* first; stack a tuple, top first (the order of the header's `init` for  *)
(* both); set a set of keys; map a function from keys to values.           *)
(***************************************************************************)
EXTENDS Integers, Sequences
LOCAL INSTANCE Histories   \* Null, SameValue

BadCall == "bad-call"

Unchanged(s, res) == <<s, res>>

\* register: read() -> v, write(v) -> null, cas(old, new) -> bool
RegisterInit == 0
RegisterApply(s, op, args) ==
    CASE op = "read"  /\ Len(args) = 0 -> <<s, s>>
      [] op = "write" /\ Len(args) = 1 -> <<args[1], Null>>
      [] op = "cas"   /\ Len(args) = 2 ->
            IF SameValue(s, args[1]) THEN <<args[2], TRUE>> ELSE <<s, FALSE>>
      [] OTHER -> Unchanged(s, BadCall)

\* counter: add(d) -> null, get() -> v
CounterInit == 0
CounterApply(s, op, args) ==
    CASE op = "add" /\ Len(args) = 1 -> <<s + args[1], Null>>
      [] op = "get" /\ Len(args) = 0 -> <<s, s>>
      [] OTHER -> Unchanged(s, BadCall)

\* queue: enq(v) -> null, deq() -> v or null when empty (front first)
QueueInit == <<>>
QueueApply(s, op, args) ==
    CASE op = "enq" /\ Len(args) = 1 -> <<Append(s, args[1]), Null>>
      [] op = "deq" /\ Len(args) = 0 ->
            IF s = <<>> THEN <<s, Null>> ELSE <<Tail(s), Head(s)>>
      [] OTHER -> Unchanged(s, BadCall)

\* stack: push(v) -> null, pop() -> v or null when empty (top first)
StackInit == <<>>
StackApply(s, op, args) ==
    CASE op = "push" /\ Len(args) = 1 -> <<<<args[1]>> \o s, Null>>
      [] op = "pop"  /\ Len(args) = 0 ->
            IF s = <<>> THEN <<s, Null>> ELSE <<Tail(s), Head(s)>>
      [] OTHER -> Unchanged(s, BadCall)

\* set: insert(k) -> bool (added), remove(k) -> bool (removed),
\*      contains(k) -> bool
SetInit == {}
SetHas(s, k) == \E x \in s : SameValue(x, k)
SetWithout(s, k) == {x \in s : ~SameValue(x, k)}
SetApply(s, op, args) ==
    CASE op = "insert"   /\ Len(args) = 1 ->
            IF SetHas(s, args[1]) THEN <<s, FALSE>> ELSE <<s \cup {args[1]}, TRUE>>
      [] op = "remove"   /\ Len(args) = 1 ->
            IF SetHas(s, args[1]) THEN <<SetWithout(s, args[1]), TRUE>> ELSE <<s, FALSE>>
      [] op = "contains" /\ Len(args) = 1 -> <<s, SetHas(s, args[1])>>
      [] OTHER -> Unchanged(s, BadCall)

\* map: put(k, v) -> previous or null, get(k) -> v or null,
\*      remove(k) -> previous or null
MapInit == [k \in {} |-> Null]
MapGet(m, k) == IF SetHas(DOMAIN m, k) THEN m[CHOOSE x \in DOMAIN m : SameValue(x, k)] ELSE Null
MapWithout(m, k) == [x \in SetWithout(DOMAIN m, k) |-> m[x]]
MapApply(s, op, args) ==
    CASE op = "put" /\ Len(args) = 2 ->
            << [k \in DOMAIN MapWithout(s, args[1]) \cup {args[1]} |->
                    IF SameValue(k, args[1]) THEN args[2] ELSE s[k]],
               MapGet(s, args[1]) >>
      [] op = "get" /\ Len(args) = 1 -> <<s, MapGet(s, args[1])>>
      [] op = "remove" /\ Len(args) = 1 -> <<MapWithout(s, args[1]), MapGet(s, args[1])>>
      [] OTHER -> Unchanged(s, BadCall)

Objects == {"register", "counter", "queue", "stack", "set", "map"}

\* The header's object name to its default initial state and its operations.
ObjectInit(obj) ==
    CASE obj = "register" -> RegisterInit
      [] obj = "counter"  -> CounterInit
      [] obj = "queue"    -> QueueInit
      [] obj = "stack"    -> StackInit
      [] obj = "set"      -> SetInit
      [] obj = "map"      -> MapInit

ObjectApply(obj, s, op, args) ==
    CASE obj = "register" -> RegisterApply(s, op, args)
      [] obj = "counter"  -> CounterApply(s, op, args)
      [] obj = "queue"    -> QueueApply(s, op, args)
      [] obj = "stack"    -> StackApply(s, op, args)
      [] obj = "set"      -> SetApply(s, op, args)
      [] obj = "map"      -> MapApply(s, op, args)
=============================================================================

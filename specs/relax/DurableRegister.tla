--------------------------- MODULE DurableRegister ---------------------------
(***************************************************************************)
(* The atomic durable register that Mirror.tla and RelaxRecoverField.tla   *)
(* refine (PROPERTY Refinement there): a `patomic` field of Chapter 4 of   *)
(* seed 002 as its users see it, with the operations std::atomic offers    *)
(* and Mirror overloads: load, compare_exchange_strong ("cas"), store and  *)
(* fetch_add ("faa").                                                      *)
(*                                                                         *)
(*  - AInvoke(t): thread t starts an operation (at most one at a time).    *)
(*  - ATakeEffect(t): the operation takes effect atomically on `areg`      *)
(*    (its linearization point): a load reads, a store writes, a          *)
(*    fetch_add adds (modulo |Vals|) and returns the old value, a CAS      *)
(*    succeeds only on a register holding its `old` value.                 *)
(*  - AReturn(t): the operation returns the result it took effect with;   *)
(*    a CAS that did not take effect may return false only if the         *)
(*    register held a value other than `old` at some moment since its     *)
(*    invocation (`seen`): a failed CAS is read-only and linearizes at    *)
(*    that moment.  Mirror's CAS that fails at Algorithm 4.1 line 47 has   *)
(*    seen the register change after it read it (it may hold `old` again   *)
(*    when it returns), so a linearization point at the return would be   *)
(*    wrong; this is the same device as memento's DetectableCasAbstract.   *)
(*  - ACrash: every operation in flight is cut off; the register is        *)
(*    durable, and at most one operation in flight may take effect at the  *)
(*    crash (its write was persisted but no thread had yet seen it): that  *)
(*    is "took effect just before the crash", one step here.  A cut-off    *)
(*    operation never takes effect later: Mirror's and RELAX's recoveries  *)
(*    only copy what persisted.                                            *)
(*                                                                         *)
(* This is durable linearizability (Izraelevitz et al., DISC 2016) of a    *)
(* register with the CAS failure rule above.  common/DurableObject.tla is  *)
(* not used because its TakeEffect applies a failed CAS to the current    *)
(* state, which cannot express a failure linearized at an earlier moment.  *)
(*                                                                         *)
(* Results are integers so that TLC never compares values of two kinds:   *)
(* cas 1 (true) / 0 (false), store 0, load and faa the value.              *)
(*                                                                         *)
(* Written as a refinement target (the concrete spec keeps these variables *)
(* as ghosts and TLC checks that every step changes them by one of these   *)
(* actions); ASpec alone is also a well-formed spec.                       *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets

CONSTANTS Threads, Vals, InitVal, Calls, NoCall

VARIABLES
    areg,    \* the register's value
    aop,     \* [Threads -> operation record]: the operation in flight, or NoOp
    alast    \* [Threads -> <<call, result>>]: what each thread returned last

avars == <<areg, aop, alast>>

NVals == Cardinality(Vals)

IsUpdate(c) == c.op \in {"cas", "store", "faa"}

\* <<new register value, result>> of call c on a register holding r (for a
\* CAS: its successful application; Enabled says when it may succeed).
Apply(r, c) ==
    CASE c.op = "load"  -> <<r, r>>
      [] c.op = "cas"   -> <<c.new, 1>>
      [] c.op = "store" -> <<c.new, 0>>
      [] c.op = "faa"   -> <<(r + c.new) % NVals, r>>

Enabled(r, c) == c.op = "cas" => r = c.old

NoOp == [call |-> NoCall, effect |-> FALSE, result |-> 0, seen |-> FALSE]
NoRet == <<NoCall, 0>>

NewOp(c, r) == [call |-> c, effect |-> FALSE, result |-> 0,
                seen |-> (c.op = "cas" /\ r # c.old)]

\* An operation in flight after the register became r.
Seen(o, r) == IF o.call.op = "cas" /\ r # o.call.old THEN [o EXCEPT !.seen = TRUE] ELSE o

AInit ==
    /\ areg = InitVal
    /\ aop = [t \in Threads |-> NoOp]
    /\ alast = [t \in Threads |-> NoRet]

AInvoke(t) ==
    /\ aop[t] = NoOp
    /\ \E c \in Calls : aop' = [aop EXCEPT ![t] = NewOp(c, areg)]
    /\ UNCHANGED <<areg, alast>>

ATakeEffect(t) ==
    LET o == aop[t]
        r == Apply(areg, o.call)
    IN /\ o # NoOp /\ ~o.effect
       /\ Enabled(areg, o.call)
       /\ areg' = r[1]
       /\ aop' = [u \in Threads |->
                    IF u = t THEN [o EXCEPT !.effect = TRUE, !.result = r[2]]
                    ELSE Seen(aop[u], r[1])]
       /\ UNCHANGED alast

AReturn(t) ==
    LET o == aop[t] IN
    /\ o # NoOp
    /\ \/ o.effect /\ alast' = [alast EXCEPT ![t] = <<o.call, o.result>>]
       \/ o.call.op = "cas" /\ ~o.effect /\ o.seen
          /\ alast' = [alast EXCEPT ![t] = <<o.call, 0>>]
    /\ aop' = [aop EXCEPT ![t] = NoOp]
    /\ UNCHANGED areg

ACrash ==
    /\ aop' = [t \in Threads |-> NoOp]
    /\ \/ areg' = areg
       \/ \E t \in Threads :
             LET o == aop[t] IN
             /\ o # NoOp /\ ~o.effect /\ IsUpdate(o.call) /\ Enabled(areg, o.call)
             /\ areg' = Apply(areg, o.call)[1]
    /\ UNCHANGED alast

ANext ==
    \/ \E t \in Threads : AInvoke(t) \/ ATakeEffect(t) \/ AReturn(t)
    \/ ACrash

ASpec == AInit /\ [][ANext]_avars
=============================================================================

----------------------------- MODULE RedoPTMFine -----------------------------
(***************************************************************************)
(* The refinement of RedoPTM's SpecSimCas by its SpecFine (RedoPTM.tla,    *)
(* "Per-word stores and per-line pwbs"): under the mapping below, every    *)
(* step of SpecFine is a step of SpecSimCas or leaves its variables alone. *)
(* The mapping takes a thread's pending stores (WS: th[t].pw, into _c) and *)
(* pending pwbs (PW: th[t].pl, lines of _c) as done, and its pc as the one *)
(* after them (th[t].wnx): the coarse action is the first of its fine      *)
(* steps, the others are stuttering steps.  This holds because no other    *)
(* thread stores to _c while t holds it, a crash image of _c matters only  *)
(* if a persisted curComb designates it (never while it is written: F2),   *)
(* and a pwb's count only at t's own next fence, after the loop.           *)
(* RedoPTM_Fine.cfg checks SpecFine with RedoPTM's invariants and          *)
(* CoarseSpec (every step, but a copy from a replica that stopped being    *)
(* curComb: see CopyFromMoved).                                            *)
(***************************************************************************)
EXTENDS RedoPTM

\* The memory with every thread's pending stores and pwbs done.
RECURSIVE Done(_, _)
Done(m, ts) ==
    IF ts = {} THEN m
    ELSE LET t == CHOOSE x \in ts : TRUE
             r == th[t]
             m1 == CASE r.pc = "WS" -> StoreAll(m, r.c, r.pw)
                     [] r.pc = "PW" -> PwbR(m, t, r.c, r.pl)
                     [] OTHER -> m
         IN Done(m1, ts \ {t})
Busy == {t \in Threads : th[t].pc \in {"WS", "PW"}}
CMem == IF Busy = {} THEN mem ELSE Done(mem, Busy)
CTh == IF Busy = {} THEN th
       ELSE [t \in Threads |->
               IF t \in Busy
               THEN [th[t] EXCEPT !.pc = th[t].wnx, !.pw = << >>, !.pl = {}, !.wnx = "Idle"]
               ELSE th[t]]

Coarse == INSTANCE RedoPTM WITH mem <- CMem, th <- CTh

\* The one exception: the first step of a copy (M2) whose source is no
\* longer curComb.  Its writer may be in the middle of its stores to it,
\* so the copy reads words the mapping counts as stored and the fine copy
\* stores other values than the coarse (atomic) copy of the mapped source
\* would.  Such a copy is never used: M3 finds curComb moved and discards
\* it (_c stays invalid: copied again before it is read).  While the
\* source is curComb nobody writes it and the two copies agree.
CopyFromMoved ==
    \E t \in Threads : /\ th[t].pc = "M2" /\ CurComb # th[t].ccv
                      /\ th'[t].pc \in {"WS", "M3"}
                      /\ M2Fine(t)

\* SpecFine refines SpecSimCas: every step maps to one of its steps or
\* leaves its variables alone (but the copy steps above).
CoarseSpec == Coarse!Init /\ [][Coarse!NextSimCas \/ CopyFromMoved]_(Coarse!vars)
=============================================================================

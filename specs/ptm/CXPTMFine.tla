------------------------------ MODULE CXPTMFine ------------------------------
(***************************************************************************)
(* The refinement of CXPTM's Spec by its SpecFine (CXPTM.tla, "Per-word    *)
(* stores and per-line pwbs"): under the mapping below, every step of      *)
(* SpecFine is a step of Spec or leaves its variables alone.  The mapping  *)
(* takes a thread's pending stores (th[t].pw, into newComb) and pending    *)
(* pwbs (th[t].pl, lines of newComb) as done, and its pc as the one after *)
(* them: the coarse action is the first of its fine steps, the others are  *)
(* stuttering steps.  This holds because no other thread stores to        *)
(* newComb while t holds it (exclusively, or downgraded after X7), a crash *)
(* image of newComb matters only if a persisted curComb designates it, and *)
(* a pwb's count only at t's own next fence, after the loop.               *)
(* CXPTM_Fine.cfg checks SpecFine with CXPTM's invariants and CoarseSpec.  *)
(***************************************************************************)
EXTENDS CXPTM

RECURSIVE Done(_, _)
Done(m, ts) ==
    IF ts = {} THEN m
    ELSE LET t == CHOOSE x \in ts : TRUE
             r == th[t]
             m1 == IF r.pc = "WS" THEN StoreAll(m, r.c, r.pw) ELSE m
         IN Done(PwbR(m1, t, r.c, r.pl), ts \ {t})
Busy == {t \in Threads : th[t].pc \in {"WS", "PW"}}
CMem == IF Busy = {} THEN mem ELSE Done(mem, Busy)
CTh == IF Busy = {} THEN th
       ELSE [t \in Threads |->
          IF t \in Busy
          THEN [th[t] EXCEPT !.pc = IF th[t].pc = "WS" /\ th[t].wnx # "PW" THEN th[t].wnx ELSE th[t].pnx,
                             !.pw = << >>, !.pl = {}, !.wnx = "Idle", !.pnx = "Idle"]
          ELSE th[t]]

Coarse == INSTANCE CXPTM WITH mem <- CMem, th <- CTh
CoarseSpec == Coarse!Spec
=============================================================================

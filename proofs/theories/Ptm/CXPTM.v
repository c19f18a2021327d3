(** * CX-PTM: the queue of mutations, replicas, null recovery

    An abstract model of CX-PTM's update path (seed paper §4, CX's
    [applyUpdate] steps 1–6 and "Adding persistence to CX") with full-system
    crashes and null recovery, as a transition system over [cstate], for any
    number of threads and replicas, any deterministic sequential object
    ([exec] : [Op → St → St * Val]) and any number of crashes.  It justifies,
    for all bounds, the invariants [CurCombConsistent],
    [DurableImageConsistent], [CompletedDurable] and [ResultsCorrect] of
    [specs/ptm/CXPTM.tla], at the level of abstraction stated below.

    The steps ([cstep]), each one atomic:
    - [Enqueue] (step 1): the thread's mutation becomes the next node of the
      queue (the turn queue's enqueue, taken as linearizable, as in the
      TLA+ module);
    - [Lock] (steps 2–3): lock a free Combined; keep its replica if it is
      valid and not past the thread's node, or copy [curComb]'s replica
      ([getCombined] and [copyFromTo]) if [curComb]'s head is not past it;
      if [curComb]'s head is already at or past the node, the mutation has
      been applied by another thread ([Done]; the published code looks at
      the head of the Combined it locked, and that this implies [curComb]'s
      head is that far rests on CX's bounded CAS loop, which the model does
      not contain: this is one of the places TLC checks the code's own
      condition);
    - [Apply] (step 4, one node per step): run the next node's mutation on
      the replica and store its result in the node; [Recopy]: copy
      [curComb]'s replica instead, when the replica cannot go on (its next
      node reclaimed);
    - [Install] (steps 5–6): downgrade, then CAS [curComb] to the replica if
      [curComb]'s head is still before the node (a CAS that fails because
      [curComb] moved is a re-read: the model reads and CASes in one step);
      or find [curComb]'s head at or past the node and finish ([Skip]);
    - [Persist] (pwb(curComb), psync), [Release] (setReadUnlock of the
      replaced Combined, after the persistence, the published order) and
      return the node's result; [Finish] for a thread that did not install:
      unlock, persist, return the node's result;
    - [Evict]: the line of [curComb] is written back spontaneously;
    - [CrashRecover]: a crash and null recovery: the persisted [curComb] and
      its replica survive, its head becomes the sentinel of a new queue,
      every other replica is invalid, queue, locks and threads start
      afresh, nothing is replayed.

    Proved, for every reachable state ([creachable]), from the inductive
    invariant [cinv]:
    - [cx_cur_comb_consistent]: the replica [curComb] designates holds the
      sequential application of every durable operation of earlier epochs
      and of the queue's prefix up to its head; the replica the persisted
      [curComb] designates, that of the prefix up to its own head — null
      recovery is correct (an invariant of every step, crashes included);
    - [cx_results_correct]: every result stored in a node is the one the
      queue order gives (the sequential application of the earlier nodes),
      so a transaction returns the result of its place in the order;
    - [cx_returned_durable]: a thread returns only once the persisted
      [curComb]'s head is at or past its node (no crash loses it);
    - [cx_applied_in_order]: each replica holds the state of a prefix of the
      queue: a mutation is applied to it once, in queue order.

    What the model abstracts away (checked by [specs/ptm/CXPTM.tla] and the
    crash explorer instead): Px86 and the flushes (a replica installed by
    the CAS is taken to be persisted: the published code flushes it before
    the CAS; [curComb]'s persistence is the separate [pidx], advanced by
    [Persist], [Finish] and [Evict]); the turn queue's internals and the
    hazard-pointer reclamation (reclamation only forces copies, which
    [Recopy] and [Lock] allow whenever [curComb] is not behind the
    replica); the bounded retry loops of getCombined and of the CAS (each
    retry re-reads, the model reads atomically); read-only transactions;
    progress.  The histories' durable linearizability is proved for
    Redo-PTM ([RedoPTM.v]); here the witness pieces (results of the queue
    order, returned transactions durable, recovery to the durable prefix)
    are proved, and TLC checks the history itself.

    Superseded for persistence by [CXPTMPx.v], the model on Px86's
    line-granular persistence ([Core/PxPersist.v]): there a replica's line
    persists only through a fenced [pwb], a crash keeps any image Px86
    allows, [DurableImageConsistent] and [CompletedDurable] are proved for
    the published order ([cx_px_durable_image_consistent],
    [cx_px_completed_durable]) and the mutants [CXFlushAfterCas] and
    [CXNoReturnPersist] are refuted by explicit executions.  This file's
    [cx_returned_durable] rests on persistence taken as immediate; its
    results, queue order and replica contents are what [CXPTMPx.v]
    abstracts. *)
From stdpp Require Import base list decidable.
From Coq Require Import Lia.

Section cx.
  Context {St Op Val : Type} `{!Inhabited Val} (exec : Op → St → St * Val) (init : St).
  Context (NR : nat).   (* replicas [0 .. NR-1]: the seed has 2N *)

  Definition upd {A} (f : nat → A) (t : nat) (a : A) : nat → A :=
    λ t', if decide (t' = t) then a else f t'.
  Global Arguments upd : simpl never.
  Lemma upd_eq {A} (f : nat → A) t a : upd f t a t = a.
  Proof. unfold upd. by rewrite decide_True. Qed.
  Lemma upd_ne {A} (f : nat → A) t t' a : t' ≠ t → upd f t a t' = f t'.
  Proof. intros. unfold upd. by rewrite decide_False. Qed.

  Ltac upd_simpl :=
    repeat match goal with
    | H : context [upd ?f ?t ?a ?t] |- _ => rewrite (upd_eq f t a) in H
    | |- context [upd ?f ?t ?a ?t] => rewrite (upd_eq f t a)
    | Hne : ?x ≠ ?t, H : context [upd ?f ?t ?a ?x] |- _ => rewrite (upd_ne f t x a Hne) in H
    | Hne : ?x ≠ ?t |- context [upd ?f ?t ?a ?x] => rewrite (upd_ne f t x a Hne)
    | Hne : ?t ≠ ?x, H : context [upd ?f ?t ?a ?x] |- _ =>
        rewrite (upd_ne f t x a (not_eq_sym Hne)) in H
    | Hne : ?t ≠ ?x |- context [upd ?f ?t ?a ?x] => rewrite (upd_ne f t x a (not_eq_sym Hne))
    end.

  (** ** The queue and its sequential meaning *)

  (** The object after the first [k] operations of [ops], from [σ]. *)
  Fixpoint run (σ : St) (ops : list Op) : St :=
    match ops with [] => σ | op :: ops' => run (exec op σ).1 ops' end.

  Definition qstate (base : St) (q : list Op) (k : nat) : St := run base (take k q).

  (** The result of node [k] (1-based) in the queue order. *)
  Definition qres (base : St) (q : list Op) (k : nat) : Val :=
    from_option (λ op, (exec op (qstate base q (pred k))).2) inhabitant (q !! pred k).

  Lemma run_app σ l1 l2 : run σ (l1 ++ l2) = run (run σ l1) l2.
  Proof. revert σ. induction l1 as [| op l1 IH]; intros σ; [done |]. simpl. apply IH. Qed.

  Lemma qstate_S base q k op :
    q !! k = Some op → qstate base q (S k) = (exec op (qstate base q k)).1.
  Proof.
    intros Hk. unfold qstate. rewrite (take_S_r q k op Hk), run_app. done.
  Qed.

  Lemma qstate_app base q op k : k ≤ length q → qstate base (q ++ [op]) k = qstate base q k.
  Proof. intros Hk. unfold qstate. by rewrite take_app_le. Qed.

  Lemma qres_app base q op k : 1 ≤ k ≤ length q → qres base (q ++ [op]) k = qres base q k.
  Proof.
    intros Hk. unfold qres. rewrite lookup_app_l; [| lia].
    destruct (q !! pred k); simpl; [| done]. rewrite qstate_app; [done | lia].
  Qed.

  (** ** States *)

  Inductive lockst := Free | Owned (t : nat) | Held.
  Global Instance lockst_eq_dec : EqDecision lockst.
  Proof. solve_decision. Defined.

  (** Where a thread is: [my] its node, [r] its replica, [mn] the node its
      replica is at, [o] the Combined it replaced. *)
  Inductive cpc :=
    | CIdle
    | CEnq (my : nat)
    | CApply (my r mn : nat)
    | CCas (my r : nat)
    | CPersist (my o : nat)
    | CRelease (my o : nat)
    | CFinal (my : nat) (own : option nat).

  Record cstate := CState {
    dops : list Op;              (* ghost: the durable operations of earlier epochs *)
    base : St;                   (* the object at the queue's sentinel *)
    q : list Op;                 (* the queue of mutations since recovery, node k+1 = q !! k *)
    nres : nat → option Val;     (* the nodes' result fields *)
    napplied : nat;              (* ghost: the nodes applied so far (by some replica) *)
    cidx : nat;                  (* curComb's Combined *)
    pidx : nat;                  (* the persisted curComb *)
    rep : nat → St;
    rhead : nat → option nat;    (* Combined.head; None: invalid *)
    rlock : nat → lockst;
    pc : nat → cpc;
  }.

  Definition head_of (s : cstate) (r : nat) : nat := from_option id 0 (rhead s r).
  Definition chead (s : cstate) : nat := head_of s (cidx s).
  Definition phead (s : cstate) : nat := head_of s (pidx s).
  Definition qst (s : cstate) (k : nat) : St := qstate (base s) (q s) k.

  Definition owns (p : cpc) : option nat :=
    match p with CApply _ r _ | CCas _ r => Some r | CFinal _ own => own | _ => None end.
  Definition target (p : cpc) : option nat :=
    match p with CPersist _ o | CRelease _ o => Some o | _ => None end.

  Section steps.
    Context (s : cstate).
    Definition with_pc (t : nat) (p : cpc) : cstate :=
      CState (dops s) (base s) (q s) (nres s) (napplied s) (cidx s) (pidx s) (rep s) (rhead s)
        (rlock s) (upd (pc s) t p).
  End steps.

  Inductive cstep : cstate → cstate → Prop :=
    (* step 1 *)
    | Enqueue s t op :
        pc s t = CIdle →
        cstep s (CState (dops s) (base s) (q s ++ [op]) (nres s) (napplied s) (cidx s) (pidx s)
                   (rep s) (rhead s) (rlock s) (upd (pc s) t (CEnq (S (length (q s))))))
    (* steps 2–3: the replica is usable as it is *)
    | LockKeep s t my r h :
        pc s t = CEnq my → r < NR → rlock s r = Free → rhead s r = Some h → h ≤ my →
        cstep s (CState (dops s) (base s) (q s) (nres s) (napplied s) (cidx s) (pidx s)
                   (rep s) (rhead s) (upd (rlock s) r (Owned t)) (upd (pc s) t (CApply my r h)))
    (* steps 2–3: copy curComb's replica *)
    | LockCopy s t my r :
        pc s t = CEnq my → r < NR → rlock s r = Free → chead s ≤ my →
        cstep s (CState (dops s) (base s) (q s) (nres s) (napplied s) (cidx s) (pidx s)
                   (upd (rep s) r (rep s (cidx s))) (upd (rhead s) r (Some (chead s)))
                   (upd (rlock s) r (Owned t)) (upd (pc s) t (CApply my r (chead s))))
    (* steps 2–3: curComb is already at or past the node *)
    | Done s t my :
        pc s t = CEnq my → my ≤ chead s →
        cstep s (with_pc s t (CFinal my None))
    (* step 4, node [S mn] *)
    | Apply s t my r mn op :
        pc s t = CApply my r mn → mn < my → q s !! mn = Some op →
        cstep s (CState (dops s) (base s) (q s) (upd (nres s) (S mn) (Some (exec op (rep s r)).2))
                   (max (napplied s) (S mn)) (cidx s) (pidx s) (upd (rep s) r (exec op (rep s r)).1)
                   (rhead s) (rlock s) (upd (pc s) t (CApply my r (S mn))))
    (* getCombined again: the replica's next node is gone *)
    | Recopy s t my r mn :
        pc s t = CApply my r mn → mn < chead s → chead s ≤ my →
        cstep s (CState (dops s) (base s) (q s) (nres s) (napplied s) (cidx s) (pidx s)
                   (upd (rep s) r (rep s (cidx s))) (rhead s) (rlock s)
                   (upd (pc s) t (CApply my r (chead s))))
    (* step 4 done: newComb.head ← myNode; step 5: downgrade *)
    | Downgrade s t my r :
        pc s t = CApply my r my →
        cstep s (CState (dops s) (base s) (q s) (nres s) (napplied s) (cidx s) (pidx s)
                   (rep s) (upd (rhead s) r (Some my)) (rlock s) (upd (pc s) t (CCas my r)))
    (* step 6: the CAS succeeds *)
    | Install s t my r :
        pc s t = CCas my r → chead s < my →
        cstep s (CState (dops s) (base s) (q s) (nres s) (napplied s) r (pidx s)
                   (rep s) (rhead s) (upd (rlock s) r Held) (upd (pc s) t (CPersist my (cidx s))))
    (* step 6: curComb is at or past the node *)
    | Skip s t my r :
        pc s t = CCas my r → my ≤ chead s →
        cstep s (with_pc s t (CFinal my (Some r)))
    (* pwb(curComb), psync *)
    | Persist s t my o :
        pc s t = CPersist my o →
        cstep s (CState (dops s) (base s) (q s) (nres s) (napplied s) (cidx s) (cidx s)
                   (rep s) (rhead s) (rlock s) (upd (pc s) t (CRelease my o)))
    (* setReadUnlock of the replaced Combined; return the node's result *)
    | Release s t my o :
        pc s t = CRelease my o →
        cstep s (CState (dops s) (base s) (q s) (nres s) (napplied s) (cidx s) (pidx s)
                   (rep s) (rhead s) (upd (rlock s) o Free) (upd (pc s) t CIdle))
    (* unlock, pwb(curComb), psync, return the node's result *)
    | Finish s t my own :
        pc s t = CFinal my own →
        cstep s (CState (dops s) (base s) (q s) (nres s) (napplied s) (cidx s) (cidx s)
                   (rep s) (rhead s)
                   (match own with Some r => upd (rlock s) r Free | None => rlock s end)
                   (upd (pc s) t CIdle))
    | Evict s :
        cstep s (CState (dops s) (base s) (q s) (nres s) (napplied s) (cidx s) (cidx s)
                   (rep s) (rhead s) (rlock s) (pc s))
    | CrashRecover s (garbage : nat → St) :
        cstep s (CState (dops s ++ take (phead s) (q s)) (rep s (pidx s)) [] (λ _, None) 0
                   (pidx s) (pidx s)
                   (λ r, if decide (r = pidx s) then rep s r else garbage r)
                   (λ r, if decide (r = pidx s) then Some 0 else None)
                   (λ r, if decide (r = pidx s) then Held else Free)
                   (λ _, CIdle)).

  Definition cinit : cstate :=
    CState [] init [] (λ _, None) 0 0 0 (λ _, init) (λ _, Some 0)
      (λ r, if decide (r = 0) then Held else Free) (λ _, CIdle).

  Inductive creachable : cstate → Prop :=
    | creachable_init : creachable cinit
    | creachable_step s s' : creachable s → cstep s s' → creachable s'.

  (** ** The invariant *)

  Definition own_ok (s : cstate) (t my : nat) (own : option nat) : Prop :=
    match own with
    | None => True
    | Some r => rlock s r = Owned t ∧ rhead s r = Some my ∧ rep s r = qst s my
    end.

  (** The replaced Combined [o] of a thread that installed node [my]: held
      read-only, behind [my], not [curComb]'s. *)
  Definition old_ok (s : cstate) (my o : nat) : Prop :=
    rlock s o = Held ∧ (∃ ho, rhead s o = Some ho ∧ ho < my) ∧ o ≠ cidx s.

  Definition ctinv (s : cstate) (t : nat) (p : cpc) : Prop :=
    match p with
    | CIdle => True
    | CEnq my => 1 ≤ my ≤ length (q s)
    | CApply my r mn =>
        1 ≤ my ≤ length (q s) ∧ mn ≤ my ∧ mn ≤ napplied s ∧ rep s r = qst s mn ∧
        rlock s r = Owned t
    | CCas my r =>
        1 ≤ my ≤ length (q s) ∧ my ≤ napplied s ∧ rep s r = qst s my ∧ rhead s r = Some my ∧
        rlock s r = Owned t
    | CPersist my o => 1 ≤ my ≤ napplied s ∧ my ≤ chead s ∧ old_ok s my o
    | CRelease my o => 1 ≤ my ≤ napplied s ∧ my ≤ phead s ∧ old_ok s my o
    | CFinal my own => 1 ≤ my ≤ napplied s ∧ my ≤ chead s ∧ own_ok s t my own
    end.

  Record cinv (s : cstate) : Prop := {
    ci_base : base s = run init (dops s);
    ci_applied : napplied s ≤ length (q s);
    ci_res : ∀ k, 1 ≤ k ≤ napplied s → nres s k = Some (qres (base s) (q s) k);
    ci_cur : chead s ≤ napplied s ∧ rhead s (cidx s) = Some (chead s) ∧
             rep s (cidx s) = qst s (chead s) ∧ rlock s (cidx s) = Held;
    ci_per : phead s ≤ chead s ∧ rhead s (pidx s) = Some (phead s) ∧
             rep s (pidx s) = qst s (phead s) ∧ rlock s (pidx s) = Held;
    ci_cons : ∀ r h, (rlock s r = Free ∨ rlock s r = Held) → rhead s r = Some h →
              h ≤ napplied s ∧ rep s r = qst s h;
    ci_owned : ∀ r t, rlock s r = Owned t → owns (pc s t) = Some r;
    ci_owns : ∀ t r, owns (pc s t) = Some r → rlock s r = Owned t;
    ci_threads : ∀ t, ctinv s t (pc s t);
    ci_targets : ∀ t t' o, t ≠ t' → target (pc s t) = Some o → target (pc s t') ≠ Some o;
  }.

  Lemma ctinv_frame s s' t p :
    length (q s) ≤ length (q s') → napplied s ≤ napplied s' →
    (∀ k, k ≤ napplied s → qst s' k = qst s k) → chead s ≤ chead s' → phead s ≤ phead s' →
    (∀ o, target p = Some o → o ≠ cidx s → o ≠ cidx s') →
    (∀ r, owns p = Some r ∨ target p = Some r →
       rlock s' r = rlock s r ∧ rhead s' r = rhead s r ∧ rep s' r = rep s r) →
    ctinv s t p → ctinv s' t p.
  Proof.
    intros Hq Hn Hqs Hc Hp Ho Hr.
    destruct p as [| my | my r mn | my r | my o | my o | my own]; simpl; unfold old_ok; try done.
    - lia.
    - intros (? & ? & ? & Hrep & Hl). destruct (Hr r) as (-> & _ & ->); [by left |].
      rewrite Hrep, Hqs; [| done]. split_and!; try done; lia.
    - intros (? & ? & Hrep & Hh & Hl). destruct (Hr r) as (-> & -> & ->); [by left |].
      rewrite Hrep, Hqs; [| done]. split_and!; try done; lia.
    - intros (? & ? & Hl & (ho & Hh & ?) & Hoc). destruct (Hr o) as (-> & -> & _); [by right |].
      split_and!; try done; try lia; [by exists ho | by apply Ho].
    - intros (? & ? & Hl & (ho & Hh & ?) & Hoc). destruct (Hr o) as (-> & -> & _); [by right |].
      split_and!; try done; try lia; [by exists ho | by apply Ho].
    - intros (? & ? & Hown). split_and!; try lia.
      destruct own as [r |]; [| done]. simpl in *. destruct Hown as (Hl & Hh & Hrep).
      destruct (Hr r) as (-> & -> & ->); [by left |]. rewrite Hrep, Hqs; [done | lia].
  Qed.

  (** Another thread's replica or replaced Combined is not [r], when [r] is
      free or locked by [t]. *)
  Lemma not_others s t t' r :
    cinv s → t' ≠ t → (rlock s r = Free ∨ rlock s r = Owned t) →
    ∀ r', owns (pc s t') = Some r' ∨ target (pc s t') = Some r' → r' ≠ r.
  Proof.
    intros Hinv Hne Hr r' [Ho | Ho] ->.
    - pose proof (ci_owns _ Hinv t' r Ho) as Hl. destruct Hr; congruence.
    - pose proof (ci_threads _ Hinv t') as Ht. destruct (pc s t'); simpl in Ho; try done;
        injection Ho as ->; destruct Ht as (_ & _ & Hl & _); destruct Hr; congruence.
  Qed.

  Lemma owned_not_cur s r t : cinv s → rlock s r = Owned t → r ≠ cidx s ∧ r ≠ pidx s.
  Proof.
    intros Hinv Hr. destruct (ci_cur _ Hinv) as (_ & _ & _ & Hc). destruct (ci_per _ Hinv) as (_ & _ & _ & Hp).
    split; intros ->; congruence.
  Qed.

  Lemma free_not_cur s r : cinv s → rlock s r = Free → r ≠ cidx s ∧ r ≠ pidx s.
  Proof.
    intros Hinv Hr. destruct (ci_cur _ Hinv) as (_ & _ & _ & Hc). destruct (ci_per _ Hinv) as (_ & _ & _ & Hp).
    split; intros ->; congruence.
  Qed.

  Ltac cproj := cbn [dops base q nres napplied cidx pidx rep rhead rlock pc] in *.

  (** *** Steps that change one thread and possibly its replica *)

  Lemma cinv_local s s' t p' r :
    cinv s → (rlock s r = Free ∨ rlock s r = Owned t) →
    (rlock s r = Owned t → owns (pc s t) = Some r) →
    (∀ r', rlock s r' = Owned t → r' = r) →
    target (pc s t) = None → target p' = None →
    dops s' = dops s → base s' = base s → q s' = q s → nres s' = nres s → napplied s' = napplied s →
    cidx s' = cidx s → pidx s' = pidx s →
    (∀ r', r' ≠ r → rep s' r' = rep s r' ∧ rhead s' r' = rhead s r' ∧ rlock s' r' = rlock s r') →
    pc s' t = p' → (∀ t', t' ≠ t → pc s' t' = pc s t') →
    (∀ t', rlock s' r = Owned t' → t' = t) →
    (rlock s' r = Free → ∀ h, rhead s' r = Some h → h ≤ napplied s ∧ rep s' r = qst s h) →
    (rlock s' r ≠ Free → owns p' = Some r ∧ rlock s' r = Owned t) →
    (rlock s' r = Free → owns p' = None) →
    ctinv s' t p' → cinv s'.
  Proof.
    intros Hinv Hr Hown Honly Htg Htg' Hd Hb' Hq Hn Hna Hci Hpi Hrr Hpt Hpo Hlk Hfree Hnf Hf Ht.
    assert (r ≠ cidx s ∧ r ≠ pidx s) as [Hrc Hrp].
    { destruct Hr as [Hr | Hr]; [by eapply free_not_cur | by eapply owned_not_cur]. }
    pose proof Hinv as [Hb Ha Hres Hcur Hper Hcons Howned Howns Hth Htgs].
    assert (∀ k, qst s' k = qst s k) as Hqs by (intros k; unfold qst; by rewrite Hb', Hq).
    assert (chead s' = chead s ∧ phead s' = phead s) as [Hch Hph].
    { unfold chead, phead, head_of. rewrite Hci, Hpi.
      destruct (Hrr (cidx s)) as (_ & -> & _); [done |]. destruct (Hrr (pidx s)) as (_ & -> & _); [done |].
      done. }
    split; rewrite ?Hd, ?Hb', ?Hq, ?Hn, ?Hna, ?Hci, ?Hpi, ?Hch, ?Hph, ?Hqs; try done.
    - destruct (Hrr (cidx s)) as (-> & -> & ->); [done |]. done.
    - destruct (Hrr (pidx s)) as (-> & -> & ->); [done |]. done.
    - intros r' h Hl Hh. destruct (decide (r' = r)) as [-> | Hne].
      + destruct (decide (rlock s' r = Free)) as [Hfr | Hne'].
        * rewrite Hqs. by apply Hfree.
        * destruct Hl as [Hl | Hl]; [done |]. destruct (Hnf Hne') as [_ Heq]. by rewrite Heq in Hl.
      + destruct (Hrr r' Hne) as (-> & Hh' & Hl'). rewrite Hh' in Hh. rewrite Hl' in Hl. rewrite Hqs.
        by apply Hcons.
    - intros r' t' Hl. destruct (decide (r' = r)) as [-> | Hne].
      + pose proof (Hlk t' Hl) as ->. rewrite Hpt.
        destruct (decide (rlock s' r = Free)) as [Hfr | Hne']; [by rewrite Hfr in Hl |].
        by destruct (Hnf Hne').
      + destruct (Hrr r' Hne) as (_ & _ & Hl'). rewrite Hl' in Hl.
        pose proof (Howned r' t' Hl) as Ho. destruct (decide (t' = t)) as [-> | Ht'].
        * exfalso. apply Hne. by apply Honly.
        * by rewrite Hpo.
    - intros t' r' Ho. destruct (decide (t' = t)) as [-> | Ht'].
      + rewrite Hpt in Ho. destruct (decide (rlock s' r = Free)) as [Hfr | Hne'].
        * by rewrite Hf in Ho.
        * destruct (Hnf Hne') as [Ho' Hl]. rewrite Ho' in Ho. by injection Ho as <-.
      + rewrite Hpo in Ho; [| done].
        assert (r' ≠ r) as Hne by (apply (not_others s t t' r Hinv Ht' Hr); by left).
        destruct (Hrr r' Hne) as (_ & _ & ->). by apply Howns.
    - intros t'. destruct (decide (t' = t)) as [-> | Ht']; [by rewrite Hpt |].
      rewrite Hpo; [| done].
      apply (ctinv_frame s); rewrite ?Hq, ?Hna, ?Hch, ?Hph, ?Hci; try done.
      all: try (intros k _; apply Hqs).
      all: try (intros r' Hr'; assert (r' ≠ r) as Hne by (by apply (not_others s t t' r Hinv Ht' Hr));
                destruct (Hrr r' Hne) as (? & ? & ?); done).
      all: try by apply Hth.
    - intros t1 t2 o Hne.
      destruct (decide (t1 = t)) as [-> | H1]; destruct (decide (t2 = t)) as [-> | H2].
      + done.
      + rewrite Hpt, Hpo; [| done]. by rewrite Htg'.
      + rewrite Hpt, Hpo; [| done]. rewrite Htg'. by intros ? ?.
      + rewrite !Hpo; [| done | done]. by apply Htgs.
  Qed.

  Lemma cinv_pc s t p' :
    cinv s → owns p' = owns (pc s t) → target p' = None → target (pc s t) = None →
    ctinv (with_pc s t p') t p' → cinv (with_pc s t p').
  Proof.
    intros Hinv Ho Htg' Htg Ht. pose proof Hinv as [Hb Ha Hres Hcur Hper Hcons Howned Howns Hth Htgs].
    split; unfold with_pc; cbn [dops base q nres napplied cidx pidx rep rhead rlock pc]; try done.
    - intros r t' Hl. destruct (decide (t' = t)) as [-> | Hne]; upd_simpl; [rewrite Ho |]; by apply Howned.
    - intros t' r Hr. destruct (decide (t' = t)) as [-> | Hne]; upd_simpl; [rewrite Ho in Hr |]; by apply Howns.
    - intros t'. destruct (decide (t' = t)) as [-> | Hne]; upd_simpl; [done |].
      apply (ctinv_frame s); try done; try (by intros); by apply Hth.
    - intros t1 t2 o Hne. unfold upd.
      destruct (decide (t1 = t)) as [-> | H1]; destruct (decide (t2 = t)) as [-> | H2];
        [done | by rewrite Htg' | rewrite Htg'; by intros ? ? | by apply Htgs].
  Qed.

  (** The side conditions of [cinv_local]. *)
  Ltac local_tac :=
    cbn [dops base q nres napplied cidx pidx rep rhead rlock pc]; upd_simpl; try done;
    try (by left); try (by right);
    try (intros ? Hne; by upd_simpl);
    try (intros ? [= ->]; done);
    try (intros Hl; by upd_simpl);
    try (intros Hl; split; by upd_simpl).

  Section steps_proofs.
    Context (s : cstate) (Hinv : cinv s).

    Lemma ctinv_of t : ctinv s t (pc s t).
    Proof. apply (ci_threads _ Hinv). Qed.

    Lemma cinv_done t my : pc s t = CEnq my → my ≤ chead s → cinv (with_pc s t (CFinal my None)).
    Proof.
      intros Hp Hle. pose proof (ctinv_of t) as Ht. rewrite Hp in Ht. simpl in Ht.
      pose proof (ci_cur _ Hinv) as (Hc & _).
      apply cinv_pc; rewrite ?Hp; try done.
      simpl. unfold with_pc, chead, head_of. cbn [napplied cidx rhead]. split_and!; try done; lia.
    Qed.

    Lemma cinv_skip t my r : pc s t = CCas my r → my ≤ chead s → cinv (with_pc s t (CFinal my (Some r))).
    Proof.
      intros Hp Hle. pose proof (ctinv_of t) as Ht. rewrite Hp in Ht. simpl in Ht.
      destruct Ht as (? & ? & Hrep & Hh & Hl).
      apply cinv_pc; rewrite ?Hp; try done.
      simpl. unfold with_pc, chead, head_of, qst in *. cbn [napplied cidx rhead rep rlock q base] in *.
      upd_simpl. split_and!; try done; lia.
    Qed.

    Lemma cinv_lockkeep t my r h :
      pc s t = CEnq my → rlock s r = Free → rhead s r = Some h → h ≤ my →
      cinv (CState (dops s) (base s) (q s) (nres s) (napplied s) (cidx s) (pidx s)
              (rep s) (rhead s) (upd (rlock s) r (Owned t)) (upd (pc s) t (CApply my r h))).
    Proof.
      intros Hp Hr Hh Hle. pose proof (ctinv_of t) as Ht. rewrite Hp in Ht. simpl in Ht.
      destruct (ci_cons _ Hinv r h (or_introl Hr) Hh) as [Hn Hrep].
      apply (cinv_local s _ t (CApply my r h) r); rewrite ?Hp; local_tac.
      all: try (intros Hl; congruence).
      all: try (intros r' Hl; pose proof (ci_owned _ Hinv r' t Hl) as Ho; rewrite Hp in Ho; done).
      simpl. unfold qst. cbn [base q rep rlock]. upd_simpl. split_and!; try done; lia.
    Qed.

    Lemma cinv_lockcopy t my r :
      pc s t = CEnq my → rlock s r = Free → chead s ≤ my →
      cinv (CState (dops s) (base s) (q s) (nres s) (napplied s) (cidx s) (pidx s)
              (upd (rep s) r (rep s (cidx s))) (upd (rhead s) r (Some (chead s)))
              (upd (rlock s) r (Owned t)) (upd (pc s) t (CApply my r (chead s)))).
    Proof.
      intros Hp Hr Hle. pose proof (ctinv_of t) as Ht. rewrite Hp in Ht. simpl in Ht.
      pose proof (ci_cur _ Hinv) as (Hc & _ & Hcr & _).
      apply (cinv_local s _ t (CApply my r (chead s)) r); rewrite ?Hp; local_tac.
      all: try (intros Hl; congruence).
      all: try (intros r' Hl; pose proof (ci_owned _ Hinv r' t Hl) as Ho; rewrite Hp in Ho; done).
      simpl. unfold qst in *. cbn [base q rep rlock]. upd_simpl. split_and!; try done; lia.
    Qed.

    Lemma owner_only t r : owns (pc s t) = Some r → ∀ r', rlock s r' = Owned t → r' = r.
    Proof. intros Ho r' Hl. pose proof (ci_owned _ Hinv r' t Hl) as Ho'. congruence. Qed.

    Lemma cinv_recopy t my r mn :
      pc s t = CApply my r mn → mn < chead s → chead s ≤ my →
      cinv (CState (dops s) (base s) (q s) (nres s) (napplied s) (cidx s) (pidx s)
              (upd (rep s) r (rep s (cidx s))) (rhead s) (rlock s)
              (upd (pc s) t (CApply my r (chead s)))).
    Proof.
      intros Hp Hlt Hle. pose proof (ctinv_of t) as Ht. rewrite Hp in Ht. simpl in Ht.
      destruct Ht as (? & ? & ? & Hrep & Hl).
      pose proof (ci_cur _ Hinv) as (Hc & _ & Hcr & _).
      apply (cinv_local s _ t (CApply my r (chead s)) r); rewrite ?Hp; local_tac.
      all: try (by apply (owner_only t r); rewrite Hp).
      all: try (intros t' Hl'; rewrite Hl in Hl'; by injection Hl' as ->).
      all: try (intros Hl'; by rewrite Hl in Hl').
      simpl. unfold qst in *. cbn [base q rep rlock]. upd_simpl. split_and!; try done; lia.
    Qed.

    Lemma cinv_downgrade t my r :
      pc s t = CApply my r my →
      cinv (CState (dops s) (base s) (q s) (nres s) (napplied s) (cidx s) (pidx s)
              (rep s) (upd (rhead s) r (Some my)) (rlock s) (upd (pc s) t (CCas my r))).
    Proof.
      intros Hp. pose proof (ctinv_of t) as Ht. rewrite Hp in Ht. simpl in Ht.
      destruct Ht as (? & ? & ? & Hrep & Hl).
      apply (cinv_local s _ t (CCas my r) r); rewrite ?Hp; local_tac.
      all: try (by apply (owner_only t r); rewrite Hp).
      all: try (intros t' Hl'; rewrite Hl in Hl'; by injection Hl' as ->).
      all: try (intros Hl'; by rewrite Hl in Hl').
      simpl. unfold qst in *. cbn [base q rep rlock rhead]. upd_simpl. split_and!; try done; lia.
    Qed.

    (** Other threads, under a step of [t] that leaves their replicas, the
        queue's prefix up to [napplied] and the heads' order alone. *)
    Lemma others_ok s' t :
      (∀ t', t' ≠ t → pc s' t' = pc s t') →
      length (q s) ≤ length (q s') → napplied s ≤ napplied s' →
      (∀ k, k ≤ napplied s → qst s' k = qst s k) → chead s ≤ chead s' → phead s ≤ phead s' →
      (∀ t' o, t' ≠ t → target (pc s t') = Some o → o ≠ cidx s → o ≠ cidx s') →
      (∀ t' r, t' ≠ t → owns (pc s t') = Some r ∨ target (pc s t') = Some r →
         rlock s' r = rlock s r ∧ rhead s' r = rhead s r ∧ rep s' r = rep s r) →
      ∀ t', t' ≠ t → ctinv s' t' (pc s' t').
    Proof.
      intros Hpc Hq Hn Hqs Hc Hp Ho Hr t' Hne. rewrite Hpc; [| done].
      apply (ctinv_frame s); try done; [| | apply (ci_threads _ Hinv)].
      - intros o. by apply (Ho t').
      - intros r. by apply (Hr t').
    Qed.

    Lemma cinv_apply t my r mn op :
      pc s t = CApply my r mn → mn < my → q s !! mn = Some op →
      cinv (CState (dops s) (base s) (q s) (upd (nres s) (S mn) (Some (exec op (rep s r)).2))
              (max (napplied s) (S mn)) (cidx s) (pidx s) (upd (rep s) r (exec op (rep s r)).1)
              (rhead s) (rlock s) (upd (pc s) t (CApply my r (S mn)))).
    Proof.
      intros Hp Hlt Hop. pose proof (ctinv_of t) as Ht. rewrite Hp in Ht. simpl in Ht.
      destruct Ht as ((Hmy1 & Hmy2) & Hmn & Hmna & Hrep & Hl).
      destruct (owned_not_cur s r t Hinv Hl) as [Hrc Hrp].
      assert ((exec op (rep s r)).1 = qst s (S mn)) as Hnext.
      { unfold qst. rewrite (qstate_S _ _ _ op Hop). by rewrite Hrep. }
      pose proof Hinv as [Hb Ha Hres Hcur Hper Hcons Howned Howns Hth Htgs].
      unfold chead, phead, head_of in *.
      split; cbn [dops base q nres napplied cidx pidx rep rhead rlock pc]; unfold chead, phead, head_of, qst;
        cbn [dops base q nres napplied cidx pidx rep rhead rlock pc]; upd_simpl; try done.
      - lia.
      - intros k Hk. destruct (decide (k = S mn)) as [-> | Hne]; upd_simpl.
        + unfold qres. simpl. rewrite Hop. simpl. rewrite Hrep. done.
        + apply Hres. lia.
      - destruct Hcur as (? & ? & ? & ?). split_and!; try done; lia.
      - intros r' h Hl' Hh. destruct (decide (r' = r)) as [-> | Hne]; [by rewrite Hl in Hl'; destruct Hl' |].
        upd_simpl. destruct (Hcons r' h Hl' Hh). split; [lia | done].
      - intros r' t' Hl'. destruct (decide (t' = t)) as [-> | Hne]; upd_simpl; [| by apply Howned].
        pose proof (Howned r' t Hl') as Ho. rewrite Hp in Ho. done.
      - intros t' r' Ho. destruct (decide (t' = t)) as [-> | Hne]; upd_simpl; [| by apply Howns].
        simpl in Ho. by injection Ho as <-.
      - intros t'. destruct (decide (t' = t)) as [-> | Hne]; upd_simpl.
        + simpl. unfold qst in *. cbn [base q rep rlock]. upd_simpl. split_and!; try done; lia.
        + pose proof (others_ok (CState (dops s) (base s) (q s) (upd (nres s) (S mn) (Some (exec op (rep s r)).2))
              (max (napplied s) (S mn)) (cidx s) (pidx s) (upd (rep s) r (exec op (rep s r)).1)
              (rhead s) (rlock s) (upd (pc s) t (CApply my r (S mn)))) t) as Hoth.
          cbn [dops base q nres napplied cidx pidx rep rhead rlock pc] in Hoth.
          rewrite <- (upd_ne (pc s) t t' (CApply my r (S mn))); [| done]. apply Hoth; try done.
          * intros t'' Hne''. by upd_simpl.
          * lia.
          * intros t'' r' Hne'' Hor. assert (r' ≠ r) by (apply (not_others s t t'' r Hinv Hne''); [by right | done]).
            by upd_simpl.
      - intros t1 t2 o Hne.
        destruct (decide (t1 = t)) as [-> | H1]; destruct (decide (t2 = t)) as [-> | H2]; upd_simpl;
          [done | by intros ? | by intros ? ? | by apply Htgs].
    Qed.

    Lemma cinv_install t my r :
      pc s t = CCas my r → chead s < my →
      cinv (CState (dops s) (base s) (q s) (nres s) (napplied s) r (pidx s)
              (rep s) (rhead s) (upd (rlock s) r Held) (upd (pc s) t (CPersist my (cidx s)))).
    Proof.
      intros Hp Hlt. pose proof (ctinv_of t) as Ht. rewrite Hp in Ht. simpl in Ht.
      destruct Ht as ((Hmy1 & Hmy2) & Hmyn & Hrep & Hh & Hl).
      destruct (owned_not_cur s r t Hinv Hl) as [Hrc Hrp].
      pose proof Hinv as [Hb Ha Hres Hcur Hper Hcons Howned Howns Hth Htgs].
      set (s' := CState (dops s) (base s) (q s) (nres s) (napplied s) r (pidx s)
              (rep s) (rhead s) (upd (rlock s) r Held) (upd (pc s) t (CPersist my (cidx s)))).
      assert (chead s' = my) as Hch by (unfold chead, head_of; simpl; by rewrite Hh).
      assert (phead s' = phead s) as Hph by done.
      destruct Hcur as (Hc1 & Hc2 & Hc3 & Hc4). destruct Hper as (Hp1 & Hp2 & Hp3 & Hp4).
      assert (cidx s ≠ r) by done.
      split; rewrite ?Hch, ?Hph; cbn [dops base q nres napplied cidx pidx rep rhead rlock pc s'];
        upd_simpl; try done.
      - split_and!; try done. lia.
      - intros r' h Hl' Hh'. destruct (decide (r' = r)) as [-> | Hne]; upd_simpl.
        + rewrite Hh in Hh'. injection Hh' as <-. done.
        + by apply Hcons.
      - intros r' t' Hl'. destruct (decide (r' = r)) as [-> | Hne]; upd_simpl; [done |].
        pose proof (Howned r' t' Hl') as Ho. destruct (decide (t' = t)) as [-> | Ht']; upd_simpl; [| done].
        rewrite Hp in Ho. simpl in Ho. congruence.
      - intros t' r' Ho. destruct (decide (t' = t)) as [-> | Ht']; upd_simpl; [done |].
        pose proof (Howns t' r' Ho) as Hl'. assert (r' ≠ r) by congruence. by upd_simpl.
      - intros t'. destruct (decide (t' = t)) as [-> | Ht'].
        + unfold s'. cbn [pc]. upd_simpl. simpl. unfold old_ok, chead, head_of.
          cbn [rlock rhead cidx napplied]. upd_simpl. rewrite Hh. simpl.
          split_and!; try done; try lia. exists (chead s). split; [done | lia].
        + apply (others_ok s' t); cbn [q napplied s']; try done.
          * intros t'' Hne. simpl. by upd_simpl.
          * rewrite Hch. lia.
          * intros t'' o Hne'' Ho Hoc. simpl. intros ->. pose proof (Hth t'') as Ht2.
            destruct (pc s t''); simpl in Ho; try done; injection Ho as ->;
              destruct Ht2 as (_ & _ & Hl2 & _); congruence.
          * intros t'' r' Hne'' Hor. assert (r' ≠ r) by (apply (not_others s t t'' r Hinv Hne''); [by right | done]).
            simpl. by upd_simpl.
      - intros t1 t2 o Hne.
        destruct (decide (t1 = t)) as [-> | H1]; destruct (decide (t2 = t)) as [-> | H2]; upd_simpl;
          [done | | | by apply Htgs]; simpl.
        + intros [= <-] Ho. pose proof (Hth t2) as Ht2.
          destruct (pc s t2); simpl in Ho; try done; injection Ho as ->; destruct Ht2 as (_ & _ & _ & _ & ?); done.
        + intros Ho [= <-]. pose proof (Hth t1) as Ht1.
          destruct (pc s t1); simpl in Ho; try done; injection Ho as ->; destruct Ht1 as (_ & _ & _ & _ & ?); done.
    Qed.

    Lemma cinv_persist t my o :
      pc s t = CPersist my o →
      cinv (CState (dops s) (base s) (q s) (nres s) (napplied s) (cidx s) (cidx s)
              (rep s) (rhead s) (rlock s) (upd (pc s) t (CRelease my o))).
    Proof.
      intros Hp. pose proof (ctinv_of t) as Ht. rewrite Hp in Ht. simpl in Ht.
      destruct Ht as ((Hm1 & Hm2) & Hle & (Ho1 & Ho2 & Ho3)).
      pose proof Hinv as [Hb Ha Hres Hcur Hper Hcons Howned Howns Hth Htgs].
      destruct Hcur as (Hc1 & Hc2 & Hc3 & Hc4). destruct Hper as (Hp1 & Hp2 & Hp3 & Hp4).
      split; unfold chead, phead, head_of in *; cbn [dops base q nres napplied cidx pidx rep rhead rlock pc];
        upd_simpl; try done.
      - intros r' t' Hl'. pose proof (Howned r' t' Hl') as Ho. destruct (decide (t' = t)) as [-> | Ht'];
          upd_simpl; [| done]. by rewrite Hp in Ho.
      - intros t' r' Ho. destruct (decide (t' = t)) as [-> | Ht']; upd_simpl; [done |]. by apply Howns.
      - intros t'. destruct (decide (t' = t)) as [-> | Ht'].
        + upd_simpl. simpl. unfold old_ok in *. cbn [rlock rhead cidx napplied pidx]. unfold phead, head_of.
          cbn [rhead pidx]. rewrite Hc2. simpl. split_and!; try done; lia.
        + rewrite upd_ne; [| done]. apply (ctinv_frame s); try done.
          all: try (unfold phead, chead, head_of; simpl; rewrite Hc2, Hp2; simpl; lia).
          all: try by apply Hth.
      - intros t1 t2 o' Hne.
        destruct (decide (t1 = t)) as [-> | H1]; destruct (decide (t2 = t)) as [-> | H2]; upd_simpl;
          [done | | | by apply Htgs]; simpl.
        + intros Ho. apply (Htgs t t2 o' Hne). by rewrite Hp.
        + intros Ho. pose proof (Htgs t1 t o' Hne Ho) as H'. rewrite Hp in H'. done.
    Qed.

    Lemma cinv_release t my o :
      pc s t = CRelease my o →
      cinv (CState (dops s) (base s) (q s) (nres s) (napplied s) (cidx s) (pidx s)
              (rep s) (rhead s) (upd (rlock s) o Free) (upd (pc s) t CIdle)).
    Proof.
      intros Hp. pose proof (ctinv_of t) as Ht. rewrite Hp in Ht. simpl in Ht.
      destruct Ht as ((Hm1 & Hm2) & Hle & (Ho1 & (ho & Ho2 & Ho3) & Ho4)).
      pose proof Hinv as [Hb Ha Hres Hcur Hper Hcons Howned Howns Hth Htgs].
      destruct Hcur as (Hc1 & Hc2 & Hc3 & Hc4). destruct Hper as (Hp1 & Hp2 & Hp3 & Hp4).
      assert (o ≠ pidx s) as Hop.
      { intros ->. unfold phead, head_of in Hle. rewrite Ho2 in Hle. simpl in Hle. lia. }
      assert (o ≠ cidx s) as Hoc by done.
      split; unfold chead, phead, head_of in *; cbn [dops base q nres napplied cidx pidx rep rhead rlock pc];
        upd_simpl; try done.
      - intros r' h Hl' Hh'. destruct (decide (r' = o)) as [-> | Hne]; upd_simpl.
        + apply Hcons; [by right | done].
        + by apply Hcons.
      - intros r' t' Hl'. destruct (decide (r' = o)) as [-> | Hne]; upd_simpl; [done |].
        pose proof (Howned r' t' Hl') as Ho. destruct (decide (t' = t)) as [-> | Ht']; upd_simpl; [| done].
        by rewrite Hp in Ho.
      - intros t' r' Ho. destruct (decide (t' = t)) as [-> | Ht']; upd_simpl; [done |].
        pose proof (Howns t' r' Ho) as Hl'. assert (r' ≠ o) by congruence. by upd_simpl.
      - intros t'. destruct (decide (t' = t)) as [-> | Ht']; upd_simpl; [done |].
        apply (ctinv_frame s); try done.
        all: try (by apply Hth).
        intros r' Hor. simpl. assert (r' ≠ o).
        { intros ->. destruct Hor as [Hor | Hor].
          - pose proof (Howns t' o Hor). congruence.
          - apply (Htgs t t' o); [done | by rewrite Hp | done]. }
        by upd_simpl.
      - intros t1 t2 o' Hne.
        destruct (decide (t1 = t)) as [-> | H1]; destruct (decide (t2 = t)) as [-> | H2]; upd_simpl;
          [done | by intros ? | by intros ? ? | by apply Htgs].
    Qed.

    Lemma cinv_finish t my own :
      pc s t = CFinal my own →
      cinv (CState (dops s) (base s) (q s) (nres s) (napplied s) (cidx s) (cidx s)
              (rep s) (rhead s) (match own with Some r => upd (rlock s) r Free | None => rlock s end)
              (upd (pc s) t CIdle)).
    Proof.
      intros Hp. pose proof (ctinv_of t) as Ht. rewrite Hp in Ht. simpl in Ht.
      destruct Ht as ((Hm1 & Hm2) & Hle & Hown).
      pose proof Hinv as [Hb Ha Hres Hcur Hper Hcons Howned Howns Hth Htgs].
      destruct Hcur as (Hc1 & Hc2 & Hc3 & Hc4). destruct Hper as (Hp1 & Hp2 & Hp3 & Hp4).
      set (lk' := match own with Some r => upd (rlock s) r Free | None => rlock s end).
      assert (∀ r, own ≠ Some r → lk' r = rlock s r) as Hlk.
      { intros r Hr. unfold lk'. destruct own as [r' |]; [| done]. rewrite upd_ne; [done |].
        intros ->. by apply Hr. }
      assert (∀ r, own = Some r → rlock s r = Owned t) as Hownr.
      { intros r ->. by destruct Hown as (? & ? & ?). }
      assert (∀ r, own = Some r → r ≠ cidx s ∧ r ≠ pidx s) as Hrc.
      { intros r Hr. apply (owned_not_cur s r t Hinv). by apply Hownr. }
      split; unfold chead, phead, head_of in *; cbn [dops base q nres napplied cidx pidx rep rhead rlock pc];
        try done.
      - rewrite Hlk; [done |]. intros Ho. by destruct (Hrc _ Ho).
      - rewrite Hlk; [done |]. intros Ho. by destruct (Hrc _ Ho).
      - intros r' h Hl' Hh'. destruct (decide (own = Some r')) as [Ho | Ho].
        + rewrite Ho in Hown. destruct Hown as (_ & Hh & Hrep). rewrite Hh in Hh'. injection Hh' as <-.
          split; [lia | done].
        + rewrite Hlk in Hl'; [| done]. by apply Hcons.
      - intros r' t' Hl'. destruct (decide (own = Some r')) as [Ho | Ho].
        + unfold lk' in Hl'. rewrite Ho, upd_eq in Hl'. done.
        + rewrite Hlk in Hl'; [| done]. pose proof (Howned r' t' Hl') as Ho'.
          destruct (decide (t' = t)) as [-> | Ht']; upd_simpl; [| done].
          rewrite Hp in Ho'. simpl in Ho'. congruence.
      - intros t' r' Ho. destruct (decide (t' = t)) as [-> | Ht']; upd_simpl; [done |].
        pose proof (Howns t' r' Ho) as Hl'. rewrite Hlk; [done |].
        intros Ho'. pose proof (Hownr r' Ho'). congruence.
      - intros t'. destruct (decide (t' = t)) as [-> | Ht']; upd_simpl; [done |].
        apply (ctinv_frame s); try done.
        all: try (by apply Hth).
        all: try (unfold chead, phead, head_of; simpl; rewrite Hc2, Hp2; simpl; lia).
        intros r' Hor. simpl. split; [| done]. apply Hlk. intros Ho.
          pose proof (Hownr r' Ho) as Hl. destruct Hor as [Hor | Hor].
        + pose proof (Howns t' r' Hor). congruence.
        + pose proof (Hth t') as Ht2. destruct (pc s t'); simpl in Hor; try done;
            injection Hor as ->; destruct Ht2 as (_ & _ & Hl2 & _); congruence.
      - intros t1 t2 o' Hne.
        destruct (decide (t1 = t)) as [-> | H1]; destruct (decide (t2 = t)) as [-> | H2]; upd_simpl;
          [done | | | by apply Htgs]; simpl.
        + by intros ?.
        + intros Ho. pose proof (Htgs t1 t o' Hne Ho) as H'. rewrite Hp in H'. done.
    Qed.

    Lemma cinv_evict :
      cinv (CState (dops s) (base s) (q s) (nres s) (napplied s) (cidx s) (cidx s)
              (rep s) (rhead s) (rlock s) (pc s)).
    Proof.
      pose proof Hinv as [Hb Ha Hres Hcur Hper Hcons Howned Howns Hth Htgs].
      destruct Hcur as (Hc1 & Hc2 & Hc3 & Hc4). destruct Hper as (Hp1 & Hp2 & Hp3 & Hp4).
      split; unfold chead, phead, head_of in *; cbn [dops base q nres napplied cidx pidx rep rhead rlock pc];
        try done.
      intros t. apply (ctinv_frame s); try done.
      all: try (by apply Hth).
      all: try (unfold chead, phead, head_of; simpl; rewrite Hc2, Hp2; simpl; lia).
    Qed.

    Lemma cinv_enqueue t op :
      pc s t = CIdle →
      cinv (CState (dops s) (base s) (q s ++ [op]) (nres s) (napplied s) (cidx s) (pidx s)
              (rep s) (rhead s) (rlock s) (upd (pc s) t (CEnq (S (length (q s)))))).
    Proof.
      intros Hp. pose proof Hinv as [Hb Ha Hres Hcur Hper Hcons Howned Howns Hth Htgs].
      assert (∀ k, k ≤ napplied s → qstate (base s) (q s ++ [op]) k = qst s k) as Hqs.
      { intros k Hk. apply qstate_app. lia. }
      destruct Hcur as (Hc1 & Hc2 & Hc3 & Hc4). destruct Hper as (Hp1 & Hp2 & Hp3 & Hp4).
      split; unfold chead, phead, head_of, qst in *; cbn [dops base q nres napplied cidx pidx rep rhead rlock pc];
        try done.
      - rewrite app_length. simpl. lia.
      - intros k Hk. rewrite qres_app; [by apply Hres | lia].
      - split_and!; try done. rewrite Hqs; [done | lia].
      - split_and!; try done. rewrite Hqs; [done | lia].
      - intros r h Hl Hh. destruct (Hcons r h Hl Hh) as [? ?]. rewrite Hqs; [done | lia].
      - intros r t' Hl. pose proof (Howned r t' Hl) as Ho. destruct (decide (t' = t)) as [-> | Ht'];
          upd_simpl; [| done]. by rewrite Hp in Ho.
      - intros t' r Ho. destruct (decide (t' = t)) as [-> | Ht']; upd_simpl; [done |]. by apply Howns.
      - intros t'. destruct (decide (t' = t)) as [-> | Ht']; upd_simpl.
        + simpl. rewrite app_length. simpl. lia.
        + apply (ctinv_frame s); try done.
          all: try (by apply Hth).
          all: try (simpl; rewrite app_length; lia).
          all: try (intros k Hk; unfold qst; simpl; by apply Hqs).
      - intros t1 t2 o Hne.
        destruct (decide (t1 = t)) as [-> | H1]; destruct (decide (t2 = t)) as [-> | H2]; upd_simpl;
          [done | by intros ? | | by apply Htgs].
        intros Ho. pose proof (Htgs t1 t o Hne Ho) as H'. rewrite Hp in H'. done.
    Qed.

    Lemma cinv_crash (garbage : nat → St) :
      cinv (CState (dops s ++ take (phead s) (q s)) (rep s (pidx s)) [] (λ _, None) 0
              (pidx s) (pidx s)
              (λ r, if decide (r = pidx s) then rep s r else garbage r)
              (λ r, if decide (r = pidx s) then Some 0 else None)
              (λ r, if decide (r = pidx s) then Held else Free)
              (λ _, CIdle)).
    Proof.
      pose proof Hinv as [Hb Ha Hres Hcur Hper Hcons Howned Howns Hth Htgs].
      destruct Hper as (Hp1 & Hp2 & Hp3 & Hp4).
      split; unfold chead, phead, head_of, qst; cbn [dops base q nres napplied cidx pidx rep rhead rlock pc];
        rewrite ?decide_True; try done.
      - rewrite run_app, <- Hb, Hp3. unfold qst, qstate. done.
      - intros k Hk. lia.
      - intros r h Hl Hh. case_decide as Hr; [| done]. subst. injection Hh as <-. split; [lia |].
        done.
      - intros r t Hl. by case_decide.
    Qed.
  End steps_proofs.

  Lemma cinv_init : cinv cinit.
  Proof.
    split; unfold cinit, chead, phead, head_of, qst; cbn [dops base q nres napplied cidx pidx rep rhead rlock pc];
      try done.
    - intros k Hk. lia.
    - intros r h Hl Hh. injection Hh as <-. split; [lia | done].
    - intros r t. by case_decide.
  Qed.

  Lemma cinv_step s s' : cinv s → cstep s s' → cinv s'.
  Proof.
    intros Hinv Hs. destruct Hs as [s t op Hp | s t my r h Hp _ Hr Hh Hle | s t my r Hp _ Hr Hle
      | s t my Hp Hle | s t my r mn op Hp Hlt Hop | s t my r mn Hp Hlt Hle | s t my r Hp
      | s t my r Hp Hlt | s t my r Hp Hle | s t my o Hp | s t my o Hp | s t my own Hp | s | s garbage].
    - by apply cinv_enqueue.
    - by eapply cinv_lockkeep.
    - by eapply cinv_lockcopy.
    - by eapply cinv_done.
    - by eapply cinv_apply.
    - by eapply cinv_recopy.
    - by eapply cinv_downgrade.
    - by eapply cinv_install.
    - by eapply cinv_skip.
    - by eapply cinv_persist.
    - by eapply cinv_release.
    - by eapply cinv_finish.
    - by apply cinv_evict.
    - by apply cinv_crash.
  Qed.

  Lemma cinv_reachable s : creachable s → cinv s.
  Proof. induction 1 as [| s s' _ IH Hs]; [apply cinv_init | by eapply cinv_step]. Qed.

  (** ** The theorems *)

  (** (2) Null recovery: the replica [curComb] designates holds the
      sequential application of every durable operation of earlier epochs
      and of the queue up to its head, and so does the replica the
      persisted [curComb] designates for the queue up to its own head — the
      state a crash recovers. *)
  Theorem cx_cur_comb_consistent s :
    creachable s →
    rep s (cidx s) = run init (dops s ++ take (chead s) (q s)) ∧
    rep s (pidx s) = run init (dops s ++ take (phead s) (q s)) ∧ phead s ≤ chead s.
  Proof.
    intros Hr. pose proof (cinv_reachable s Hr) as Hinv.
    destruct (ci_cur _ Hinv) as (_ & _ & Hc & _). destruct (ci_per _ Hinv) as (Hle & _ & Hp & _).
    rewrite !run_app, <- (ci_base _ Hinv), Hc, Hp. done.
  Qed.

  (** Every result stored in a node is the one the queue order gives. *)
  Theorem cx_results_correct s k :
    creachable s → 1 ≤ k ≤ napplied s → nres s k = Some (qres (base s) (q s) k).
  Proof. intros Hr Hk. by apply (ci_res _ (cinv_reachable s Hr)). Qed.

  (** A thread returns the result of its node, once the persisted
      [curComb] is at or past it ([Release]), or persisting [curComb] in the
      same step, which is at or past it ([Finish]). *)
  Theorem cx_returned_durable s t my :
    creachable s →
    ((∃ o, pc s t = CRelease my o) → my ≤ phead s ∧ nres s my = Some (qres (base s) (q s) my)) ∧
    ((∃ own, pc s t = CFinal my own) → my ≤ chead s ∧ nres s my = Some (qres (base s) (q s) my)).
  Proof.
    intros Hr. pose proof (cinv_reachable s Hr) as Hinv. pose proof (ci_threads _ Hinv t) as Ht.
    split; intros [x Hp]; rewrite Hp in Ht; simpl in Ht; destruct Ht as (Hmy & Hle & _);
      (split; [done | by apply (ci_res _ Hinv)]).
  Qed.

  (** Every valid replica holds the state of a prefix of the queue: the
      mutations are applied to it in order, each once. *)
  Theorem cx_applied_in_order s r h :
    creachable s → rhead s r = Some h → (∀ t, rlock s r ≠ Owned t) →
    h ≤ napplied s ∧ rep s r = qstate (base s) (q s) h.
  Proof.
    intros Hr Hh Hl. pose proof (cinv_reachable s Hr) as Hinv.
    apply (ci_cons _ Hinv); [| done]. destruct (rlock s r) eqn:E; [by left | | by right].
    exfalso. by apply (Hl t).
  Qed.
End cx.

(** * RedoTimed-PTM in the Px86 model: the window as a schedule constraint

    Seed 000 §5, "Timed variant"; [impl/perdure-ptm/src/redo/variant.rs]
    ([RedoPtm::lock_combined], [lock_first_two], the fallback to
    [lock_any] once [now_ns() >= deadline]).  RedoTimed-PTM runs
    Redo-PTM's Algorithm 3 and differs only in which replica an updater
    may lock: while its window is open, [combs[0]] or [combs[1]]; once it
    has closed, any.  Its backoff and its giving up when [curComb] moves are
    steps Redo-PTM's model already allows at any point ([Abandon],
    [GiveUp]).  So RedoTimed-PTM's runs are Redo-PTM's runs under a
    schedule constraint on the lock steps, and its theorems are corollaries
    of [RedoPTMPxLin.v]'s.

    Abstracts: time.  [closed s t] ("thread [t]'s window has closed in
    state [s]") is an arbitrary oracle: the theorems hold for every one,
    so for every clock and every window length. *)
From stdpp Require Import base list list_numbers decidable sets.
From Coq Require Import Lia.
From perdure.Core Require Import History DurableLin Px86 PxPersist.
From perdure.Ptm Require Import RedoPTMPx.
From perdure.Ptm Require Import RedoPTMPx RedoPTMPxLin.

Section redo_timed_px.
  Context {UOp ROp Val : Type} `{!Inhabited Val}.
  Context (W : nat) (uexec : UOp → list nat → list (nat * nat) * Val)
          (rexec : ROp → list nat → Val).
  Context (N NR RS : nat) (NR_pos : 0 < NR).
  Context (line : nat → nat) (NL : nat).
  Context (line_lt : ∀ x, line x < NL) (line_cc : line 1 = line 0).
  Context (line_rep : ∀ r w, r < NR → w < W → line (rloc W r w) ≠ line 0).

  (** The fixed protocol ([F1 = F4 = true]). *)
  Notation rstate := (@rstate UOp ROp Val).
  Notation tstate := (@tstate UOp ROp Val).
  Notation entry := (@entry UOp ROp Val).
  Notation link := (@link UOp ROp Val).
  Notation op := (@op UOp ROp).
  Notation step := (@step UOp ROp Val _ W uexec rexec N NR RS line true true).
  Notation reachable := (@reachable UOp ROp Val _ W uexec rexec N NR RS line NL true true).
  Notation inv1 := (@inv1 UOp ROp Val W uexec rexec N NR line NL).
  Notation tinv1 := (@tinv1 UOp ROp Val W uexec rexec NR line).
  Notation obj_at := (@obj_at UOp ROp Val W).
  Notation res_at := (@res_at UOp ROp Val _).
  Notation app_at := (@app_at UOp ROp Val).
  Notation batch_at := (@batch_at UOp ROp Val).
  Notation content := (content W line).
  Notation ccv := (ccv line).
  Notation adv := (@adv UOp ROp Val N).
  Notation rpts := (@rpts UOp ROp Val N).
  Notation ret := (@ret UOp ROp Val N).
  Notation crash_state := (@crash_state UOp ROp Val N RS line).
  Notation spec := (@spec UOp ROp Val W uexec rexec).
  Notation run_op := (@run_op UOp ROp Val uexec rexec).
  Notation mark_cc := (@mark_cc UOp ROp Val line).
  Notation batch_ok := (@batch_ok UOp ROp Val uexec rexec).
  Notation chain_ok := (@chain_ok UOp ROp Val W uexec rexec NR).
  Notation init_obj := (init_obj W).
  Notation cseq := (@cseq UOp ROp Val).

  Implicit Types (s : rstate) (ch : list link) (e : entry) (p : tstate) (pcs : nat → tstate).

  (** RedoTimed-PTM ([redo/variant.rs] [lock_combined], seed §5 "Timed
      variant") locks, while a thread's window is open, only [combs[0]] or
      [combs[1]] ([lock_first_two]), and any replica once it has closed
      ([lock_any]); it backs off and gives up when [curComb] moves, which
      the model allows at any point ([Abandon], [GiveUp]).  Time is not
      modelled: [closed s t] says that thread [t]'s window has closed in
      state [s], an arbitrary oracle (the code's [now_ns() >= deadline]).
      A step that takes the lock of a free replica [r] for a thread [t]
      ([Prepare], [PrepFail] with no replica kept) is allowed only if
      [r < 2] or [t]'s window has closed. *)
  Definition takes_lock (s s' : rstate) (t r : nat) : Prop :=
    rlock s r = Free ∧ rlock s' r = Owned t.

  Inductive timed_reachable (closed : rstate → nat → Prop) : rstate → Prop :=
    | timed_init : timed_reachable closed (init_state W NL)
    | timed_step s s' :
        timed_reachable closed s → step s s' →
        (∀ t r, takes_lock s s' t r → r < 2 ∨ closed s t) →
        timed_reachable closed s'.

  (** The constraint only removes steps: every state RedoTimed-PTM reaches,
      for any window, Redo-PTM's model reaches. *)
  Lemma timed_reachable_reachable closed s : timed_reachable closed s → reachable s.
  Proof.
    induction 1 as [| s s' _ IH Hs _]; [constructor | by apply (reachable_step _ _ _ _ _ _ _ _ _ _ s s')].
  Qed.

  Theorem redotimed_px_durably_linearizable closed s :
    timed_reachable closed s → durably_linearizable spec (erase (xh s)).
  Proof.
    intros Hr. apply (redo_px_durably_linearizable W uexec rexec N NR RS NR_pos line NL line_lt line_cc line_rep).
    by apply (timed_reachable_reachable closed).
  Qed.

  Theorem redotimed_px_exactly_once closed s k1 k2 e1 e2 :
    timed_reachable closed s → e1 ∈ batch_at (ch s) k1 → e2 ∈ batch_at (ch s) k2 →
    e_id e1 = e_id e2 → k1 = k2 ∧ e1 = e2.
  Proof.
    intros Hr. apply (redo_px_exactly_once W uexec rexec N NR RS NR_pos line NL line_lt line_cc line_rep).
    by apply (timed_reachable_reachable closed).
  Qed.

  Lemma p_load_empty x : p_load line (pmem_empty NL) x = 0.
  Proof.
    unfold p_load, mem_visible, line_hist; simpl.
    destruct (replicate NL [] !! line x) eqn:E; [by apply lookup_replicate in E as [-> _] | done].
  Qed.

  (** Not vacuous: with a window that never closes, thread 0's first update
      takes the lock of replica 1 (one of the first two) and goes on to
      simulate: RedoTimed-PTM's model has runs past the lock. *)
  Lemma redotimed_window_not_vacuous (u : UOp) :
    0 < N → 1 < NR →
    ∃ s, timed_reachable (λ _ _, False) s ∧ rlock s 1 = Owned 0.
  Proof.
    intros HN HNR.
    set (s0 := (init_state W NL : rstate)).
    assert (∀ s s', rlock s' = rlock s → ∀ t r, takes_lock s s' t r → r < 2 ∨ False) as Hkeep.
    { intros s s' Heq t r [Hf Ho]. rewrite Heq, Hf in Ho. done. }
    assert (ccv (mem s0) = (0, 0)) as Hcc.
    { unfold ccv, s0, init_state; simpl. by rewrite !p_load_empty. }
    pose proof (Announce W uexec rexec N NR RS line true true s0 0 u HN eq_refl) as H1.
    set (s1 := RState _ _ _ _ _ _ _ _ _ _ _ _ _ _) in H1.
    pose proof (Snapshot W uexec rexec N NR RS line true true s1 0 0 u None 0 0
                  eq_refl Hcc eq_refl) as H2.
    set (s2 := RState _ _ _ _ _ _ _ _ _ _ _ _ _ _) in H2.
    assert (ccv (mem s2) = (0, 0)) as Hcc2 by exact Hcc.
    pose proof (Prepare W uexec rexec N NR RS line true true s2 0 0 u None 0 0
                  (app_at (ch s0) 0) (res_at (ch s0) 0) 1
                  (map (λ w, (w, p_load line (mem s2) (rloc W 0 w))) (seq 0 W))
                  eq_refl ltac:(unfold s0, init_state, app_at; simpl; lia) (or_intror (conj eq_refl (conj HNR eq_refl)))
                  (or_introl (conj Hcc2 eq_refl))) as H3.
    eexists. split.
    - eapply timed_step; [eapply timed_step; [eapply timed_step; [constructor | exact H1 |] | exact H2 |]
                         | exact H3 |].
      + apply Hkeep. reflexivity.
      + apply Hkeep. reflexivity.
      + intros t r [Hf Ho]. left. destruct (decide (r = 1)) as [-> | Hr]; [lia |].
        exfalso. simpl in Ho. unfold upd in Ho. rewrite decide_False in Ho by done.
        simpl in Hf. rewrite Hf in Ho. done.
    - simpl. unfold upd. by rewrite decide_True.
  Qed.
End redo_timed_px.

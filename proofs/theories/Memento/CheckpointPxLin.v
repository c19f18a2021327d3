(** * Memento's CHECKPOINT on Px86: durably linearizable, detectable histories

    [CheckpointPx.v] proves CHECKPOINT (seed 001, §2.2 steps ①–⑤, §2.3,
    §2.5) detectable on the model's states ([ckpt_px_recovery_image],
    [ckpt_px_detectable], [ckpt_px_stable]).  This file states it over the
    histories of [Core/History.v] and the verdicts of [Core/DurableLin.v],
    as [DetCasPxLin.v] does for the detectable CAS: every run of that model
    ([step N (fixed cr)]: [N] threads, either slot layout, full-system and
    thread crashes, every crash image Px86 allows) is paired with a ghost
    history of invoke, return, crash and recover events with linearization
    points ([gstep]), and those histories are durably linearizable and
    detectable for the sequential specification [ckpt_regs]: one register
    per memento (thread [u]'s operation [u] checkpoints a value, which
    becomes the register's value; every register starts at (0, 0); the
    value itself is what the checkpointed expression [e] computes, so the
    specification leaves it free).

    The operation is the model's root operation (one CHECKPOINT into the
    thread's memento, then the root operation's next write, then its
    commit: [impl/perdure-memento/src/checkpoint.rs]
    [Checkpoint::checkpoint_impl]; [runtime.rs] [Handle::store]'s
    [pay_fence], [Handle::try_run_root]), its result the checkpointed value.
    The history ([gx], built step by step from the model's steps):
    - [Invoke (oid t k) t t] when thread [t] starts root operation [k]
      ([SStart], ① in normal mode); [oid] numbers the pairs [(t, k)];
    - [Return] at the commit ([SCommit]) with the value the root operation
      used, or [Recover] with it if a full crash cut the operation off
      ([gc]); the recovery path is ② ([SRecHit]: the latest slot's
      timestamp is above the committed floor) or a re-execution
      ([SRecMiss]);
    - [Crash] at each full crash ([g_crash]); a thread crash ([STCrash]) is
      no event ([History.v]'s crash is a full-system crash): the operation
      stays pending and its recovery returns it.
    The linearization point ([XL]): the step where the root operation's
    write first uses the checkpointed value ([SEff], the ghost [effv]
    becomes [Some v]): from then on every crash image's latest slot holds
    [v] and every later return of the invocation returns [v]
    ([ckpt_px_recovery_image], [ckpt_px_stable]); before it, a crash may
    lose the attempt and recovery re-executes with a fresh value, which is
    no effect of the operation.  So the register of memento [u] holds the
    value of the in-flight root operation once it took effect, else the
    last committed one ([cur], [g_val]).

    Proved, for the fixed protocol, either layout, every [N], schedule and
    number of crashes:
    - [ckpt_lin_every_run]: the model's reachable states are exactly those
      of the ghost runs ([greach]), each full crash with its [crash] event;
    - [ckpt_lin_durably_linearizable]: every ghost run's history is durably
      linearizable for [ckpt_regs], the ghost points being the witness;
      [ckpt_lin_wf]: the histories are well formed;
    - [ckpt_lin_cut_off_recovered]: every operation a crash cut off is
      recovered (with the value it took effect with: a [recover] follows
      its point, with its value) or is the one its thread is still running;
    - [ckpt_lin_detectable]: once no thread is inside a root operation,
      the history is [detectable] ([DurableLin.v]; it is not prefix-closed,
      hence the premise);
    - [ckpt_lin_results]: a returned or recovered value is the value of an
      attempt (step ⑤) of that invocation, and the in-flight operation has
      a point, with value [v], iff its write used [v] ([effv]): it takes
      effect at most once;
    - [ckpt_lin_register]: the register is what recovery reads: in every
      crash image Px86 allows, memento [u]'s latest slot holds the
      register's value once the in-flight operation took effect; before,
      the register's value or an attempt of the in-flight checkpoint;
    - [ckpt_lin_not_vacuous]: an explicit run (one thread, one-line slot)
      whose history is [invoke; crash; recover (7, 8)], the point before
      the crash: a checkpoint of (7, 8), its write, a crash keeping the
      slot and dropping the write, recovery ② returning (7, 8), the write
      redone, the commit; the history is cut off, recovered, detectable.
    Everything rests on the invariant [ginv] ([ginv_init], [ginv_quiet],
    [ginv_invoke], [ginv_point], [ginv_commit], [ginv_step],
    [greach_ginv]), which uses [CheckpointPx.v]'s [inv] ([reachable_inv],
    its [pcok]) and [ckpt_px_detectable], [ckpt_px_recovery_image], not
    re-proved.  The steps from [ginv] to the theorems that do not depend on
    the model are [DurableLin.v]'s (e), shared with [DetCasPxLin.v] and
    [InsDelPxLin.v]: [current_across_crash] ([ginv_quiet]), [rtc_preserved]
    ([greach_ginv]), [ghost_runs] ([ckpt_lin_every_run]),
    [durably_linearizable_erase], and
    [numbered_cut_off_recovered], [numbered_detectable] for
    [ckpt_lin_cut_off_recovered], [ckpt_lin_detectable] ([greach_numbered]:
    the history's operations are the threads' numbered root operations).

    What the model abstracts: what [CheckpointPx.v] abstracts (SC
    visibility, one global clock, a value of two words, a root operation is
    one CHECKPOINT and one later write, orphaned [pwb]s of a crashed thread
    lost); one memento per thread, reused by all its root operations.  Not
    covered: root operations with several checkpoints or sub-operations
    (the replay of earlier steps of a composite root operation); a
    specification tying the checkpointed value to [e] (the model chooses it
    freely); thread crashes as history events; liveness. *)
From Coq Require Import Lia.
From stdpp Require Import base list relations countable.
From perdure.Core Require Import Px86 PxPersist.
From perdure.Memento Require Import CheckpointPx CheckpointPxBugs.
From perdure.Core Require Import History DurableLin.

(** ** The sequential specification: one register per memento *)

(** Operation [u] is a checkpoint into memento [u] (thread [u]'s); its
    result [v] is the value it checkpoints, which becomes the register's
    value.  The value is the one the checkpointed expression [e] computes,
    any value: the specification does not constrain it. *)
Definition ckpt_step (σ : nat → val2) (u : nat) (v : val2) (σ' : nat → val2) : Prop := σ' = upd σ u v.
Definition ckpt_regs : seq_spec (nat → val2) nat val2 := SeqSpec (λ _, (0, 0)) ckpt_step.

(** The registers after a list of points. *)
Definition regs_of (σ : nat → val2) (l : list (opid * nat * val2)) : nat → val2 :=
  foldl (λ σ p, upd σ p.1.2 p.2) σ l.
Definition regs (xh : list (xevent nat val2)) : nat → val2 := regs_of (λ _, (0, 0)) (points xh).

Lemma runs_ckpt σ (l : list (opid * nat * val2)) : runs ckpt_regs σ (effects l).
Proof.
  revert σ. induction l as [| [[i u] v] l IH]; intros σ; [constructor |].
  econstructor; [reflexivity | apply IH].
Qed.

Lemma regs_snoc_XE l e : regs (l ++ [XE e]) = regs l.
Proof. unfold regs. rewrite points_app. simpl. by rewrite app_nil_r. Qed.
Lemma regs_snoc_XL l i u v : regs (l ++ [XL i u v]) = upd (regs l) u v.
Proof. unfold regs, regs_of. rewrite points_app, foldl_app. done. Qed.
Lemma regs_app_XE l E : (∀ x, x ∈ E → ∃ e, x = XE e) → regs (l ++ E) = regs l.
Proof.
  intros HE. unfold regs. rewrite points_app.
  assert (points E = []) as ->; [| by rewrite app_nil_r].
  induction E as [| x E IH]; [done |]. destruct (HE x (elem_of_list_here _ _)) as [e ->]. simpl.
  apply IH. intros y Hy. apply HE. by right.
Qed.

(** ** The ghost history *)

(* [oid], [oid_inj] (invocation [k] of thread [u]): Core/History.v. *)

(** The thread is inside a root operation (started, not committed). *)
Definition act (T : tst) : bool := match pc T with PIdle => false | _ => true end.
(** The value the memento holds for thread [u]: the in-flight checkpoint's,
    once the root operation's write used it, else the last committed one. *)
Definition cur (T : tst) : val2 := match effv T with Some v => v | None => lastv T end.

(** The events of thread [u] in a step from [s] to [s'] ([c u]: a full
    crash cut the in-flight operation off): the invoke when it starts a
    root operation, the point when the root operation's write first uses
    the checkpointed value, the return (or recover) when it commits. *)
Definition evu (s s' : state) (c : nat → bool) (u : nat) : list (xevent nat val2) :=
  (if negb (act (th s u)) && act (th s' u) then [XE (Invoke (oid u (kk (th s u))) u u)] else []) ++
  (match effv (th s u), effv (th s' u) with None, Some v => [XL (oid u (kk (th s u))) u v] | _, _ => [] end) ++
  (if bool_decide (kk (th s' u) = S (kk (th s u)))
   then [XE (if c u then Recover (oid u (kk (th s u))) (lastv (th s' u))
             else Return (oid u (kk (th s u))) (lastv (th s' u)))] else []).

Record gstate := G { gs : state; gx : list (xevent nat val2); gc : nat → bool }.

Definition crash_st (s : state) (keep : nat → nat) : state :=
  St (crash_mem (pm s) keep) (clock s) (λ u, with_pc (th s u) (crash_pc (pc (th s u)))) (att s).

Section ghost.
  Context (N : nat) (cr : bool).

  Definition ev (s s' : state) (c : nat → bool) : list (xevent nat val2) :=
    mjoin (evu s s' c <$> seq 0 N).

  (** A step of the model with its events, or a full crash with its
      [crash] event (a full crash by [g_step] is a silent one). *)
  Inductive gstep : gstate → gstate → Prop :=
    | g_step g s' : step N (fixed cr) (gs g) s' →
        gstep g (G s' (gx g ++ ev (gs g) s' (gc g)) (λ u, gc g u && act (th s' u)))
    | g_crash g keep : p_crash_ok (pm (gs g)) keep →
        gstep g (G (crash_st (gs g) keep) (gx g ++ [XE Crash]) (λ u, act (th (crash_st (gs g) keep) u))).

  Definition ginit : gstate := G (init N) [] (λ _, false).
  Definition greach (g : gstate) : Prop := rtc gstep ginit g.
End ghost.

(** ** Lists and histories *)

(* [mjoin_nil], [mjoin_single]: Core/History.v. *)


Lemma res_mono (A A' : list (nat * nat * nat * val2)) u k v :
  (∀ e, e ∈ A → e ∈ A') → (∃ Tc, (u, k, Tc, v) ∈ A) → ∃ Tc, (u, k, Tc, v) ∈ A'.
Proof. intros H [Tc ?]. exists Tc. by apply H. Qed.


(** ** What a thread's step does to its root operation *)

(** Nothing the history sees: same root operation, activity, used value
    and committed value. *)
Definition quiet (T T' : tst) : Prop :=
  act T' = act T ∧ kk T' = kk T ∧ effv T' = effv T ∧ lastv T' = lastv T.

(** Quiet, or the start of a root operation, or the first use of the
    checkpointed value by its write, or its commit. *)
Definition tclass (T T' : tst) : Prop :=
  quiet T T' ∨
  (act T = false ∧ act T' = true ∧ kk T' = kk T ∧ effv T = None ∧ effv T' = None ∧ lastv T' = lastv T) ∨
  (∃ v, act T = true ∧ act T' = true ∧ kk T' = kk T ∧ effv T = None ∧ effv T' = Some v ∧ lastv T' = lastv T) ∨
  (act T = true ∧ act T' = false ∧ kk T' = S (kk T) ∧ effv T = Some (lastv T') ∧ effv T' = None).

Lemma act_crash T : act (with_pc T (crash_pc (pc T))) = act T.
Proof. unfold act, with_pc, crash_pc. cbn [pc]. by destruct (pc T). Qed.

Lemma quiet_crash T : quiet T (with_pc T (crash_pc (pc T))).
Proof. split_and!; [apply act_crash | done | done | done]. Qed.

Lemma quiet_with_pc T p : act T = true → (match p with PIdle => false | _ => true end) = true → quiet T (with_pc T p).
Proof. intros H1 H2. unfold quiet, act in *. cbn [with_pc pc kk effv lastv]. split_and!; [by rewrite H1, H2 | done | done | done]. Qed.

Section model.
  Context (N : nat) (cr : bool).
  Notation cfg := (fixed cr).
  Notation step := (step N cfg).
  Notation reachable := (reachable N cfg).

  (** What the history needs of [CheckpointPx.v]'s invariant. *)
  Lemma mfacts s u : reachable s → u < N →
    (act (th s u) = false → effv (th s u) = None) ∧
    (∀ b T0 v, pc (th s u) = PEff b T0 v → effv (th s u) = Some v) ∧
    (∀ b T0 v v', pc (th s u) = PRet b T0 v → effv (th s u) = Some v' → v' = v) ∧
    (∀ v, effv (th s u) = Some v → ∃ Tc, (u, kk (th s u), Tc, v) ∈ att s).
  Proof.
    intros Hr Hu. pose proof (reachable_inv N cr s Hr) as Hi.
    pose proof (t_pc _ _ _ _ _ _ (i_th _ _ _ Hi u Hu)) as Hp. unfold pcok in Hp.
    split_and!.
    - unfold act. intros Ha. destruct (pc (th s u)); try discriminate Ha. by destruct Hp as (_ & _ & ?).
    - intros b T0 v Hpc. rewrite Hpc in Hp. by destruct Hp as (_ & _ & _ & ?).
    - intros b T0 v v' Hpc Hv. rewrite Hpc in Hp. destruct Hp as (_ & _ & _ & Hv'). by destruct (Hv' v' Hv).
    - intros v Hv. destruct (ckpt_px_detectable N cr s u Hr Hu) as [_ Hd].
      destruct (Hd v Hv) as (Tc & _ & Hin & _). by exists Tc.
  Qed.

  (** Every step is one thread's (the others unchanged), of one of the
      classes above, or a full crash; the attempts only grow. *)
  Lemma step_cases s s' : reachable s → step s s' →
    (∃ t, t < N ∧ (∀ u, u ≠ t → th s' u = th s u) ∧ tclass (th s t) (th s' t) ∧ (∀ e, e ∈ att s → e ∈ att s'))
    ∨ (∃ keep, p_crash_ok (pm s) keep ∧ s' = crash_st s keep).
  Proof.
    intros Hr Hs. destruct Hs as [s t v Ht Hpc | s t Ht Hpc T b sl Hfl | s t v Ht Hpc Hfl | s t b v Ht Hpc
      | s t b v Ht Hpc | s t b v Ht Hpc | s t b v Ht Hpc T | s t b T0 v Ht Hpc T | s t b T0 v Ht Hpc T | s t Ht | s keep Hok].
    11: { right. by exists keep. }
    all: left; exists t; split; [done |]; cbn [th setth setpm att]; rewrite ?upd_eq;
      split; [intros u Hne; by apply upd_ne |]; split;
      [| try (intros e He; apply elem_of_app; by left); try (intros e He; exact He)].
    all: destruct (mfacts s t Hr Ht) as (Hidle & Heff & Hret & _).
    all: try (left; apply quiet_with_pc; [unfold act; by rewrite Hpc | done]).
    - (* SStart *) right; left. unfold act. cbn [with_pc pc kk effv lastv]. rewrite Hpc. split_and!; try done.
      all: apply Hidle; unfold act; by rewrite Hpc.
    - (* SEff *) subst T. destruct (effv (th s t)) as [v' |] eqn:E.
      + left. unfold quiet, act. cbn [pc kk effv lastv]. rewrite Hpc, E. by rewrite (Hret b T0 v v' Hpc eq_refl).
      + right; right; left. exists v. unfold act. cbn [pc kk effv lastv]. by rewrite Hpc.
    - (* SCommit *) right; right; right. subst T. unfold act. cbn [pc kk effv lastv]. rewrite Hpc.
      split_and!; try done. by apply (Heff b T0 v).
    - (* STCrash *) left. apply quiet_crash.
  Qed.
End model.

(** ** The invariant of the ghost runs *)
Section ginv.
  Context (N : nat) (cr : bool).
  Notation cfg := (fixed cr).
  Notation step := (step N cfg).
  Notation reachable := (reachable N cfg).

  (** The history with its points is a witness of durable linearizability
      (points well placed, running the registers to the values the mementos
      hold), well formed; each thread's current root operation is invoked
      exactly when the thread is inside it, pending or cut off as [gc] says,
      and has a point iff its write used the checkpointed value; every
      result in the history is an attempt (step ⑤) of its invocation. *)
  Record ginv (g : gstate) : Prop := {
    g_r : reachable (gs g);
    g_ok : prefix_ok point_ok (gx g);
    g_val : ∀ u, u < N → regs (gx g) u = cur (th (gs g) u);
    g_wf : wf (erase (gx g));
    g_inv : ∀ i t o, Invoke i t o ∈ erase (gx g) → t < N ∧ o = t ∧ ∃ k, k ≤ kk (th (gs g) t) ∧ i = oid t k;
    g_old : ∀ u k, u < N → k < kk (th (gs g) u) → finished (erase (gx g)) (oid u k);
    g_act : ∀ u, u < N → act (th (gs g) u) = true →
      Invoke (oid u (kk (th (gs g) u))) u u ∈ erase (gx g) ∧ ¬ finished (erase (gx g)) (oid u (kk (th (gs g) u))) ∧
      (gc g u = false → pending_on (erase (gx g)) u (oid u (kk (th (gs g) u)))) ∧
      (gc g u = true → cut_off (erase (gx g)) (oid u (kk (th (gs g) u))));
    g_idle : ∀ u, u < N → act (th (gs g) u) = false →
      ¬ invoked (erase (gx g)) (oid u (kk (th (gs g) u))) ∧ gc g u = false;
    g_pts : ∀ u o v, u < N → XL (oid u (kk (th (gs g) u))) o v ∈ gx g ↔ o = u ∧ effv (th (gs g) u) = Some v;
    g_pend : ∀ u j, pending_on (erase (gx g)) u j →
      act (th (gs g) u) = true ∧ j = oid u (kk (th (gs g) u)) ∧ gc g u = false;
    g_res : ∀ u k v, Return (oid u k) v ∈ erase (gx g) ∨ Recover (oid u k) v ∈ erase (gx g) →
      ∃ Tc, (u, k, Tc, v) ∈ att (gs g);
  }.

  Lemma ginv_init : ginv (ginit N).
  Proof.
    split; cbn [gs gx gc ginit].
    - apply rtc_refl.
    - apply prefix_ok_nil.
    - intros u _. done.
    - apply wf_nil.
    - intros i t o []%elem_of_nil.
    - intros u k _ Hk. cbn in Hk. lia.
    - intros u _ Hact. done.
    - intros u _ _. split; [intros (? & ? & []%elem_of_nil) | done].
    - intros u o v _. split; [by intros ?%elem_of_nil | by intros [_ ?]].
    - intros u j (h1 & h2 & op & E & _). by destruct h1.
    - intros u k v [[]%elem_of_nil | []%elem_of_nil].
  Qed.

  (** A step in which no thread's root operation changes (a step of one
      thread, or a full crash with or without its [crash] event). *)
  Lemma ginv_quiet g s' (loud : bool) : ginv g → reachable s' →
    (∀ u, u < N → quiet (th (gs g) u) (th s' u)) → (∀ e, e ∈ att (gs g) → e ∈ att s') →
    ginv (G s' (gx g ++ (if loud then [XE Crash] else [])) (λ u, (loud || gc g u) && act (th s' u))).
  Proof.
    intros Hg Hr' Hq Hatt. destruct g as [s l c]. cbn [gs gx gc] in *.
    destruct Hg as [_ Gok Gval Gwf Ginv Gold Gact Gidle Gpts Gpend Gres]. cbn [gs gx gc] in *.
    assert (Herase : erase (l ++ (if loud then [XE Crash] else [])) = erase l ++ (if loud then [Crash] else []))
      by (rewrite erase_app; by destruct loud).
    set (h' := erase l ++ (if loud then [Crash] else [])).
    assert (HinE : ∀ e, e ∈ h' → e ∈ erase l ∨ e = Crash).
    { intros e He. unfold h' in He. apply elem_of_app in He as [? | He]; [by left |].
      destruct loud; [right; by apply elem_of_list_singleton in He | by apply elem_of_nil in He]. }
    split; cbn [gs gx gc]; rewrite ?Herase; fold h'.
    - done.
    - destruct loud; [| by rewrite app_nil_r]. apply prefix_ok_snoc. by split.
    - intros u Hu. rewrite regs_app_XE; [| intros x Hx; destruct loud; [apply elem_of_list_singleton in Hx; by eexists | by apply elem_of_nil in Hx]].
      rewrite Gval by done. destruct (Hq u Hu) as (_ & _ & He & Hl). unfold cur. by rewrite He, Hl.
    - unfold h'. destruct loud; [| by rewrite app_nil_r]. apply wf_snoc. by split.
    - intros i t o [Hin | ?]%HinE; [| done]. destruct (Ginv i t o Hin) as (Ht & -> & k & Hk & ->).
      split_and!; [done | done |]. exists k. split; [| done]. by rewrite (proj1 (proj2 (Hq t Ht))).
    - intros u k Hu Hk. rewrite (proj1 (proj2 (Hq u Hu))) in Hk. unfold h'. apply finished_app. by apply Gold.
    - intros u Hu Ha. destruct (Hq u Hu) as (Ha' & Hk & _). rewrite Hk. rewrite Ha' in Ha |- *.
      destruct (Gact u Hu Ha) as (H1 & H2 & H3 & H4). rewrite Ha, andb_true_r. unfold h'.
      by apply current_across_crash.
    - intros u Hu Ha. destruct (Hq u Hu) as (Ha' & Hk & _). rewrite Hk, Ha, andb_false_r. split; [| done].
      rewrite Ha' in Ha. intros (t & o & [Hin | ?]%HinE); [| done]. apply (proj1 (Gidle u Hu Ha)). by exists t, o.
    - intros u o v Hu. destruct (Hq u Hu) as (_ & Hk & He & _). rewrite Hk, He, <- (Gpts u o v Hu).
      split; [| intros Hin; apply elem_of_app; by left].
      intros [Hin | Hin]%elem_of_app; [done |]. destruct loud; [apply elem_of_list_singleton in Hin | apply elem_of_nil in Hin]; done.
    - intros u j Hp. unfold h' in Hp. destruct loud.
      + apply pending_on_snoc in Hp as [(o & ?) | (_ & ? & _)]; done.
      + rewrite app_nil_r in Hp.
        assert (u < N) as Hu.
        { destruct Hp as (h1 & h2 & o & E & _). apply (Ginv j u o). rewrite E. apply elem_of_app. right. by left. }
        destruct (Gpend u j Hp) as (Ha & -> & Hc). destruct (Hq u Hu) as (Ha' & Hk & _).
        rewrite Ha', Hk, Ha, Hc. done.
    - intros u k v [Hin | Hin]; apply HinE in Hin as [Hin | ?]; try done; apply (res_mono _ _ _ _ _ Hatt), Gres; first [by left | by right].
  Qed.

  (** A thread starts a root operation: its invoke. *)
  Lemma ginv_invoke g s' t : ginv g → reachable s' → t < N → (∀ u, u ≠ t → th s' u = th (gs g) u) →
    (∀ e, e ∈ att (gs g) → e ∈ att s') →
    act (th (gs g) t) = false → act (th s' t) = true → kk (th s' t) = kk (th (gs g) t) →
    effv (th (gs g) t) = None → effv (th s' t) = None → lastv (th s' t) = lastv (th (gs g) t) →
    ginv (G s' (gx g ++ [XE (Invoke (oid t (kk (th (gs g) t))) t t)]) (λ u, gc g u && act (th s' u))).
  Proof.
    intros Hg Hr' Ht Hoth Hatt Ha Ha' Hk He He' Hl. destruct g as [s l c]. cbn [gs gx gc] in *.
    destruct Hg as [_ Gok Gval Gwf Ginv Gold Gact Gidle Gpts Gpend Gres]. cbn [gs gx gc] in *.
    set (i := oid t (kk (th s t))).
    assert (Hni : ¬ invoked (erase l) i) by apply (Gidle t Ht Ha).
    assert (Hc : c t = false) by apply (Gidle t Ht Ha).
    assert (Hsame : ∀ u, u ≠ t → th s' u = th s u) by done.
    split; cbn [gs gx gc]; rewrite ?erase_snoc_XE.
    - done.
    - apply prefix_ok_snoc. by split.
    - intros u Hu. rewrite regs_snoc_XE, Gval by done. destruct (decide (u = t)) as [-> | Hne].
      + unfold cur. by rewrite He, He', Hl.
      + by rewrite Hsame.
    - apply wf_snoc. split; [done |]. split; [done |]. intros (j & Hj).
      destruct (Gpend t j Hj) as (Ha'' & _). congruence.
    - intros i' t' o [Hin | Hin]%elem_of_app.
      + destruct (Ginv i' t' o Hin) as (Ht' & -> & k & Hk' & ->). split_and!; [done | done |]. exists k. split; [| done].
        destruct (decide (t' = t)) as [-> | Hne]; [by rewrite Hk | by rewrite Hsame].
      + apply elem_of_list_singleton in Hin. injection Hin as -> -> ->. split_and!; [done | done |].
        exists (kk (th s t)). by rewrite Hk.
    - intros u k Hu Hk'. apply finished_app, Gold; [done |].
      destruct (decide (u = t)) as [-> | Hne]; [by rewrite <- Hk | by rewrite <- Hsame].
    - intros u Hu Hau. destruct (decide (u = t)) as [-> | Hne].
      + rewrite Hk, Hc. fold i. split_and!.
        * apply elem_of_app. right. by left.
        * intros [Hf | []]%finished_snoc. apply Hni. by apply finished_invoked.
        * intros _. apply pending_on_snoc. left. by eexists.
        * done.
      + rewrite Hsame in Hau |- * by done. rewrite Hau, andb_true_r.
        destruct (Gact u Hu Hau) as (H1 & H2 & H3 & H4). split_and!.
        * apply elem_of_app. by left.
        * intros [Hf | []]%finished_snoc. done.
        * intros Hcu. apply pending_on_snoc. right. split_and!; [by apply H3 | done | done].
        * intros Hcu. by apply cut_off_app, H4.
    - intros u Hu Hau. destruct (decide (u = t)) as [-> | Hne]; [congruence |].
      rewrite Hsame in Hau |- * by done. rewrite Hau, andb_false_r. split; [| done].
      intros [Hinv | (t' & o' & [= Hid _ _])]%invoked_snoc; [by apply (Gidle u Hu Hau) |].
      apply oid_inj in Hid as [? _]. done.
    - intros u o v Hu. destruct (decide (u = t)) as [-> | Hne].
      + rewrite Hk, He'. split; [| by intros [_ ?]].
        intros [Hin | Hin]%elem_of_app; [| by apply elem_of_list_singleton in Hin].
        apply (Gpts t o v Ht) in Hin as [_ ?]. congruence.
      + rewrite Hsame by done. rewrite <- (Gpts u o v Hu). split; [| intros; apply elem_of_app; by left].
        intros [Hin | Hin]%elem_of_app; [done | by apply elem_of_list_singleton in Hin].
    - intros u j [(o & [= <- <- <-]) | (Hp & _ & _)]%pending_on_snoc.
      + by rewrite Hk, Ha', Hc.
      + destruct (Gpend u j Hp) as (Hau & -> & Hcu). destruct (decide (u = t)) as [-> | Hne]; [congruence |].
        rewrite Hsame by done. by rewrite Hau, Hcu.
    - intros u k v Hin. apply (res_mono _ _ _ _ _ Hatt), Gres.
      destruct Hin as [Hin | Hin]; apply elem_of_app in Hin as [Hin | Hin%elem_of_list_singleton]; try first [by left | by right].
  Qed.

  (** The root operation's write first uses the checkpointed value: its point. *)
  Lemma ginv_point g s' t v : ginv g → reachable s' → t < N → (∀ u, u ≠ t → th s' u = th (gs g) u) →
    (∀ e, e ∈ att (gs g) → e ∈ att s') →
    act (th (gs g) t) = true → act (th s' t) = true → kk (th s' t) = kk (th (gs g) t) →
    effv (th (gs g) t) = None → effv (th s' t) = Some v → lastv (th s' t) = lastv (th (gs g) t) →
    ginv (G s' (gx g ++ [XL (oid t (kk (th (gs g) t))) t v]) (λ u, gc g u && act (th s' u))).
  Proof.
    intros Hg Hr' Ht Hoth Hatt Ha Ha' Hk He He' Hl. destruct g as [s l c]. cbn [gs gx gc] in *.
    destruct Hg as [_ Gok Gval Gwf Ginv Gold Gact Gidle Gpts Gpend Gres]. cbn [gs gx gc] in *.
    assert (Hsame : ∀ u, u ≠ t → th s' u = th s u) by done.
    assert (Hall : ∀ u, u < N → act (th s' u) = act (th s u) ∧ kk (th s' u) = kk (th s u)).
    { intros u _. destruct (decide (u = t)) as [-> | Hne]; [by rewrite Ha, Ha', Hk | by rewrite Hsame]. }
    split; cbn [gs gx gc]; rewrite ?erase_snoc_XL.
    - done.
    - apply prefix_ok_snoc. split; [done |]. split.
      + exists t. apply (Gact t Ht Ha).
      + intros o' v' Hin. apply (Gpts t o' v' Ht) in Hin as [_ ?]. congruence.
    - intros u Hu. rewrite regs_snoc_XL. destruct (decide (u = t)) as [-> | Hne].
      + rewrite upd_eq. unfold cur. by rewrite He'.
      + rewrite upd_ne, Gval, Hsame by done. done.
    - done.
    - intros i' t' o Hin. destruct (Ginv i' t' o Hin) as (Ht' & -> & k & Hk' & ->). split_and!; [done | done |].
      exists k. split; [| done]. by rewrite (proj2 (Hall t' Ht')).
    - intros u k Hu Hk'. apply Gold; [done |]. by rewrite <- (proj2 (Hall u Hu)).
    - intros u Hu Hau. destruct (Hall u Hu) as (Hau' & Hku). rewrite Hku, Hau, andb_true_r. rewrite Hau' in Hau.
      by apply Gact.
    - intros u Hu Hau. destruct (Hall u Hu) as (Hau' & Hku). rewrite Hku, Hau, andb_false_r. rewrite Hau' in Hau.
      split; [| done]. by apply Gidle.
    - intros u o v' Hu. destruct (decide (u = t)) as [-> | Hne].
      + rewrite Hk, He'. split.
        * intros [Hin | Hin%elem_of_list_singleton]%elem_of_app.
          -- apply (Gpts t o v' Ht) in Hin as [_ ?]. congruence.
          -- by injection Hin as -> ->.
        * intros [-> [= ->]]. apply elem_of_app. right. by left.
      + rewrite Hsame by done. rewrite <- (Gpts u o v' Hu). split; [| intros; apply elem_of_app; by left].
        intros [Hin | Hin%elem_of_list_singleton]%elem_of_app; [done |].
        injection Hin as Hid _ _. apply oid_inj in Hid as [? _]. done.
    - intros u j Hp. destruct (Gpend u j Hp) as (Hau & -> & Hcu).
      assert (u < N) as Hu.
      { destruct Hp as (h1 & h2 & o & E & _). apply (Ginv (oid u (kk (th s u))) u o). rewrite E.
        apply elem_of_app. right. by left. }
      destruct (Hall u Hu) as (Hau' & Hku). by rewrite Hku, Hau', Hau, Hcu.
    - intros u k v' Hin. by apply (res_mono _ _ _ _ _ Hatt), Gres.
  Qed.

  (** The root operation commits: its return, or its recover if a crash cut
      it off, with the value its write used. *)
  Lemma ginv_commit g s' t : ginv g → reachable s' → t < N → (∀ u, u ≠ t → th s' u = th (gs g) u) →
    (∀ e, e ∈ att (gs g) → e ∈ att s') →
    act (th (gs g) t) = true → act (th s' t) = false → kk (th s' t) = S (kk (th (gs g) t)) →
    effv (th (gs g) t) = Some (lastv (th s' t)) → effv (th s' t) = None →
    ginv (G s' (gx g ++ [XE (if gc g t then Recover (oid t (kk (th (gs g) t))) (lastv (th s' t))
                             else Return (oid t (kk (th (gs g) t))) (lastv (th s' t)))])
            (λ u, gc g u && act (th s' u))).
  Proof.
    intros Hg Hr' Ht Hoth Hatt Ha Ha' Hk He He'. pose proof (g_r _ Hg) as Hr.
    destruct g as [s l c]. cbn [gs gx gc] in *.
    destruct Hg as [_ Gok Gval Gwf Ginv Gold Gact Gidle Gpts Gpend Gres]. cbn [gs gx gc] in *.
    assert (Hsame : ∀ u, u ≠ t → th s' u = th s u) by done.
    set (i := oid t (kk (th s t))). set (v := lastv (th s' t)).
    set (e := if c t then Recover i v else Return i v).
    assert (Hend : ∀ j, ends j e ↔ j = i) by (intros j; unfold e; destruct (c t); simpl; split; by intros ->).
    assert (Hnoinv : ∀ j t' o, e ≠ Invoke j t' o) by (unfold e; by destruct (c t)).
    destruct (Gact t Ht Ha) as (Hinv & Hnf & Hpd & Hcut).
    (* no invoke of the thread's next root operation yet *)
    assert (Hnext : ¬ invoked (erase l) (oid t (S (kk (th s t))))).
    { intros (t' & o & Hin). destruct (Ginv _ t' o Hin) as (_ & _ & k & Hk' & Hid).
      apply oid_inj in Hid as [Ht' Hk0]. subst t'. lia. }
    split; cbn [gs gx gc]; rewrite ?erase_snoc_XE; fold i v e.
    - done.
    - apply prefix_ok_snoc. split; [done |]. assert (XL i t v ∈ l) as Hxl by (apply (Gpts t t v Ht); by split).
      unfold e. destruct (c t); by exists t.
    - intros u Hu. rewrite regs_snoc_XE, Gval by done. destruct (decide (u = t)) as [-> | Hne].
      + unfold cur. by rewrite He, He'.
      + by rewrite Hsame.
    - apply wf_snoc. split; [done |]. unfold e. destruct (c t) eqn:Ec; simpl; split; try done.
      + by apply Hcut.
      + exists t. by apply Hpd.
    - intros i' t' o [Hin | Hin%elem_of_list_singleton]%elem_of_app; [| by destruct (Hnoinv _ _ _ (eq_sym Hin))].
      destruct (Ginv i' t' o Hin) as (Ht' & -> & k & Hk' & ->). split_and!; [done | done |]. exists k. split; [| done].
      destruct (decide (t' = t)) as [-> | Hne]; [rewrite Hk; lia | by rewrite Hsame].
    - intros u k Hu Hk'. destruct (decide (u = t)) as [-> | Hne].
      + rewrite Hk in Hk'. destruct (decide (k = kk (th s t))) as [-> | Hne].
        * apply finished_snoc. right. by apply Hend.
        * apply finished_app, Gold; [done | lia].
      + apply finished_app, Gold; [done |]. by rewrite <- Hsame.
    - intros u Hu Hau. destruct (decide (u = t)) as [-> | Hne]; [congruence |].
      rewrite Hsame in Hau |- * by done. rewrite Hau, andb_true_r.
      destruct (Gact u Hu Hau) as (H1 & H2 & H3 & H4).
      assert (oid u (kk (th s u)) ≠ i) as Hni by (intros Hid; apply oid_inj in Hid as [? _]; done).
      split_and!.
      + apply elem_of_app. by left.
      + intros [Hf | Hf%Hend]%finished_snoc; done.
      + intros Hcu. apply pending_on_snoc. right. split_and!; [by apply H3 | by unfold e; destruct (c t) |].
        intros v' He2. unfold e in He2. destruct (c t); [done |]. injection He2 as ? _. done.
      + intros Hcu. by apply cut_off_app, H4.
    - intros u Hu Hau. rewrite Hau, andb_false_r. split; [| done].
      intros [Hinv' | (t' & o' & ?)]%invoked_snoc; [| by destruct (Hnoinv _ _ _ H)].
      destruct (decide (u = t)) as [-> | Hne].
      + rewrite Hk in Hinv'. by apply Hnext.
      + rewrite Hsame in Hau, Hinv' by done. by apply (Gidle u Hu Hau).
    - intros u o v' Hu. destruct (decide (u = t)) as [-> | Hne].
      + rewrite Hk, He'. split; [| by intros [_ ?]].
        intros [Hin | Hin%elem_of_list_singleton]%elem_of_app; [| done].
        exfalso. apply Hnext. by apply (xl_invoked l _ o v').
      + rewrite Hsame by done. rewrite <- (Gpts u o v' Hu). split; [| intros; apply elem_of_app; by left].
        intros [Hin | Hin%elem_of_list_singleton]%elem_of_app; done.
    - intros u j [(o & ?) | (Hp & _ & Hnr)]%pending_on_snoc; [by destruct (Hnoinv _ _ _ H) |].
      destruct (Gpend u j Hp) as (Hau & -> & Hcu). destruct (decide (u = t)) as [-> | Hne].
      + exfalso. fold i in Hnr. unfold e in Hnr. rewrite Hcu in Hnr. by apply (Hnr v).
      + rewrite Hsame by done. by rewrite Hau, Hcu.
    - intros u k v' Hin.
      destruct Hin as [Hin | Hin]; apply elem_of_app in Hin as [Hin | Hin%elem_of_list_singleton];
        try (apply (res_mono _ _ _ _ _ Hatt), Gres; first [by left | by right]).
      all: unfold e in Hin; destruct (c t); try discriminate Hin; injection Hin as Hid Hv0;
        apply oid_inj in Hid as [Hu0 Hk0]; subst u k v';
        destruct (mfacts N cr s t Hr Ht) as (_ & _ & _ & Hatt'); destruct (Hatt' v He) as [Tc HTc];
        exists Tc; by apply Hatt.
  Qed.
End ginv.

Section steps.
  Context (N : nat) (cr : bool).
  Notation cfg := (fixed cr).
  Notation step := (step N cfg).
  Notation reachable := (reachable N cfg).
  Notation ginv := (ginv N cr).

  Lemma quiet_refl T : quiet T T.
  Proof. done. Qed.

  Lemma evu_quiet s s' c u : quiet (th s u) (th s' u) → evu s s' c u = [].
  Proof.
    intros (Ha & Hk & He & _). unfold evu. rewrite Ha, Hk, He, bool_decide_false by lia.
    destruct (act (th s u)), (effv (th s u)); reflexivity.
  Qed.

  Lemma ginv_step g g' : ginv g → gstep N cr g g' → ginv g'.
  Proof.
    intros Hg Hs. pose proof (g_r _ _ _ Hg) as Hr. destruct Hs as [g s' Hs | g keep Hok].
    - assert (Hr' : reachable s') by (eapply rtc_r; [exact Hr | exact Hs]).
      destruct (step_cases N cr (gs g) s' Hr Hs) as [(t & Ht & Hoth & Hcl & Hatt) | (keep & Hok & ->)].
      + assert (Hev : ev N (gs g) s' (gc g) = evu (gs g) s' (gc g) t).
        { unfold ev. apply mjoin_single; [apply NoDup_seq | apply elem_of_seq; lia |].
          intros u _ Hne. apply evu_quiet. rewrite (Hoth u Hne). apply quiet_refl. }
        rewrite Hev.
        destruct Hcl as [Hq | [(Ha & Ha' & Hk & He & He' & Hl) | [(v & Ha & Ha' & Hk & He & He' & Hl) | (Ha & Ha' & Hk & He & He')]]].
        * rewrite evu_quiet by done.
          pose proof (ginv_quiet N cr g s' false Hg Hr') as H. simpl in H. apply H; [| done].
          intros u _. destruct (decide (u = t)) as [-> | Hne]; [done |]. rewrite (Hoth u Hne). apply quiet_refl.
        * unfold evu. rewrite Ha, Ha', He, He', bool_decide_false by lia. simpl.
          by apply ginv_invoke.
        * unfold evu. rewrite Ha, Ha', He, He', bool_decide_false by lia. simpl.
          by apply ginv_point.
        * unfold evu. rewrite Ha, Ha', He, ?He', bool_decide_true by done. simpl.
          by apply ginv_commit.
      + (* a silent full crash *)
        assert (Hq : ∀ u, quiet (th (gs g) u) (th (crash_st (gs g) keep) u)) by (intros u; apply quiet_crash).
        assert (Hev : ev N (gs g) (crash_st (gs g) keep) (gc g) = []).
        { unfold ev. apply mjoin_nil. intros u _. by apply evu_quiet. }
        rewrite Hev. pose proof (ginv_quiet N cr g (crash_st (gs g) keep) false Hg Hr') as H. simpl in H.
        apply H; [intros u _; apply quiet_crash | intros e He; exact He].
    - assert (Hr' : reachable (crash_st (gs g) keep)) by (eapply rtc_r; [exact Hr | by apply SCrash]).
      pose proof (ginv_quiet N cr g (crash_st (gs g) keep) true Hg Hr') as H. simpl in H.
      apply H; [intros u _; apply quiet_crash | intros e He; exact He].
  Qed.

  Lemma greach_ginv g : greach N cr g → ginv g.
  Proof. apply rtc_preserved; [apply ginv_init | apply ginv_step]. Qed.
End steps.

(** ** The theorems *)
Section theorems.
  Context (N : nat) (cr : bool).
  Notation cfg := (fixed cr).
  Notation reachable := (reachable N cfg).
  Notation greach := (greach N cr).
  Notation ginv := (ginv N cr).

  (** Every run of the model has its history: the ghost runs are the
      model's runs, each full crash with its [crash] event. *)
  Theorem ckpt_lin_every_run s : reachable s ↔ ∃ g, greach g ∧ gs g = s.
  Proof.
    apply (ghost_runs _ _ gs _ (ginit N)); [done | intros g Hg; apply (g_r _ _ _ (greach_ginv N cr g Hg)) |].
    intros g s' _ Hr Hs. destruct (step_cases N cr (gs g) s' Hr Hs) as [_ | (keep & Hok & ->)].
    - eexists. split; [by apply g_step | done].
    - eexists. split; [by apply g_crash | done].
  Qed.

  (** (a) Durable linearizability: the history of every run, with its
      points, is a witness for the registers of [ckpt_regs]. *)
  Theorem ckpt_lin_durably_linearizable g : greach g → durably_linearizable ckpt_regs (erase (gx g)).
  Proof.
    intros Hg. apply durably_linearizable_erase; [apply (g_ok _ _ _ (greach_ginv N cr g Hg)) | apply runs_ckpt].
  Qed.

  (** (b) The histories are well formed. *)
  Theorem ckpt_lin_wf g : greach g → wf (erase (gx g)).
  Proof. intros Hg. apply (g_wf _ _ _ (greach_ginv N cr g Hg)). Qed.

  (** The operations of the history are the threads' root operations,
      numbered ([DurableLin.v]'s [numbered]): from here on, (c) and (d) are
      [DurableLin.v]'s [numbered_cut_off_recovered] and
      [numbered_detectable]. *)
  Lemma greach_numbered g : greach g →
    numbered (λ t, t < N) (λ t, kk (th (gs g) t)) (λ t, act (th (gs g) t)) (erase (gx g)).
  Proof.
    intros Hg. pose proof (greach_ginv N cr g Hg) as Hi. split.
    - apply (g_wf _ _ _ Hi).
    - intros i (t & o & Hin). destruct (g_inv _ _ _ Hi i t o Hin) as (Ht & _ & k & Hle & ->). by exists t, k.
    - apply (g_old _ _ _ Hi).
    - intros u Hu Ha. apply (proj1 (g_idle _ _ _ Hi u Hu Ha)).
  Qed.

  (** (c) Every root operation a crash cut off is recovered (with the value
      it took effect with: a [recover] follows its point, with its value),
      or it is the one its thread is still running (in recovery). *)
  Theorem ckpt_lin_cut_off_recovered g i : greach g → cut_off (erase (gx g)) i →
    recovered (erase (gx g)) i ∨ ∃ t, t < N ∧ act (th (gs g) t) = true ∧ i = oid t (kk (th (gs g) t)).
  Proof. intros Hg. apply (numbered_cut_off_recovered _ _ _ _ i (greach_numbered g Hg)). Qed.

  (** (d) Detectability: once no thread is inside a root operation (every
      recovery has committed), the history is [detectable] for
      [ckpt_regs]: durably linearizable, every cut-off operation recovered. *)
  Theorem ckpt_lin_detectable g : greach g → (∀ t, t < N → act (th (gs g) t) = false) →
    detectable ckpt_regs (erase (gx g)).
  Proof.
    intros Hg. apply (numbered_detectable _ _ _ _ _ (greach_numbered g Hg) (ckpt_lin_durably_linearizable g Hg)).
  Qed.

  (** (e) The results: a root operation returns or is recovered with the
      value of one attempt (step ⑤) of its own checkpoint, and takes effect
      (its point) exactly with the value its write used. *)
  Theorem ckpt_lin_results g t k v : greach g →
    (Return (oid t k) v ∈ erase (gx g) ∨ Recover (oid t k) v ∈ erase (gx g) → ∃ Tc, (t, k, Tc, v) ∈ att (gs g)) ∧
    (t < N → ∀ o, XL (oid t (kk (th (gs g) t))) o v ∈ gx g ↔ o = t ∧ effv (th (gs g) t) = Some v).
  Proof.
    intros Hg. pose proof (greach_ginv N cr g Hg) as Hi. split; [apply (g_res _ _ _ Hi) |].
    intros Ht o. apply (g_pts _ _ _ Hi t o v Ht).
  Qed.

  (** (f) The register is what recovery reads: in every crash image Px86
      allows, thread [u]'s memento recovers the register's value (the last
      value a checkpoint of [u] took effect with), as long as the in-flight
      root operation took effect (has its point); before that, it recovers
      the register's value or the value of an attempt of the in-flight
      checkpoint (which then takes effect with it, if recovery returns it). *)
  Theorem ckpt_lin_register g u keep : greach g → u < N → p_crash_ok (pm (gs g)) keep →
    ((∃ v, XL (oid u (kk (th (gs g) u))) u v ∈ gx g) →
       (CheckpointPx.recovered cfg (rd_img (pm (gs g)) keep) u).2 = regs (gx g) u) ∧
    ((¬ ∃ v, XL (oid u (kk (th (gs g) u))) u v ∈ gx g) →
       (CheckpointPx.recovered cfg (rd_img (pm (gs g)) keep) u).2 = regs (gx g) u ∨
       ∃ Tc v, (u, kk (th (gs g) u), Tc, v) ∈ att (gs g) ∧
         CheckpointPx.recovered cfg (rd_img (pm (gs g)) keep) u = (Tc, v)).
  Proof.
    intros Hg Hu Hok. pose proof (greach_ginv N cr g Hg) as Hi.
    pose proof (g_r _ _ _ Hi) as Hr.
    destruct (ckpt_px_recovery_image N cr (gs g) u keep Hr Hu Hok) as [Himg Heff].
    rewrite (g_val _ _ _ Hi u Hu). unfold cur. split.
    - intros [v Hin]. apply (g_pts _ _ _ Hi u u v Hu) in Hin as [_ Hv]. rewrite Hv.
      destruct (Heff v Hv) as (Tc & _ & Hrec). by rewrite Hrec.
    - intros Hno. destruct (effv (th (gs g) u)) as [v |] eqn:Hv.
      { exfalso. apply Hno. exists v. apply (g_pts _ _ _ Hi u u v Hu). by split. }
      destruct Himg as [Hrec | Hrec]; [left; by rewrite Hrec | by right].
  Qed.
End theorems.

(** ** The theorems are not vacuous *)
Section not_vacuous.
  Tactic Notation "gs_go" uconstr(c) :=
    eapply rtc_l_eq; [apply g_step; apply c; side | norm_state |]; name_state.
  Ltac gcrash_go keep := eapply rtc_l_eq; [apply (g_crash _ _ _ keep); side | norm_state |]; name_state.

  (** One thread, a slot in one line: a checkpoint of (7, 8) persists its
      slot (③–⑤), the root operation's write uses it (its point), a full
      crash keeps the slot and drops the write; recovery (②) finds the
      timestamp above the floor and returns (7, 8), the write is redone,
      the root operation commits: it is recovered with (7, 8). *)
  Lemma ckpt_lin_not_vacuous_run :
    ∃ g, greach 1 false g ∧ (∀ t, t < 1 → act (th (gs g) t) = false) ∧
      gx g = [XE (Invoke (oid 0 0) 0 0); XL (oid 0 0) 0 (7, 8); XE Crash; XE (Recover (oid 0 0) (7, 8))].
  Proof.
    eexists. split; [| split].
    - unfold greach, ginit.
      gs_go (SStart _ _ _ 0 (7, 8)).
      gs_go (S3a _ _ _ 0 true (7, 8)).
      gs_go (S3b _ _ _ 0 true (7, 8)).
      gs_go (S4 _ _ _ 0 true (7, 8)).
      gs_go (S5 _ _ _ 0 true (7, 8)).
      gs_go (SEff _ _ _ 0 true 1 (7, 8)).
      gcrash_go (λ L : nat, if decide (L = 2) then 3 else 0).
      gs_go (SRecHit _ _ _ 0).
      gs_go (SEff _ _ _ 0 true 1 (7, 8)).
      gs_go (SCommit _ _ _ 0 true 1 (7, 8)).
      apply rtc_refl.
    - intros t Ht. destruct t as [| t]; [vm_compute; reflexivity | lia].
    - vm_compute. reflexivity.
  Qed.

  (** A run whose history has a root operation that took effect, was cut
      off by a crash and then recovered with the value it took effect with;
      the history is detectable. *)
  Theorem ckpt_lin_not_vacuous :
    ∃ g, greach 1 false g ∧
      erase (gx g) = [Invoke (oid 0 0) 0 0; Crash; Recover (oid 0 0) (7, 8)] ∧
      XL (oid 0 0) 0 (7, 8) ∈ gx g ∧
      cut_off (erase (gx g)) (oid 0 0) ∧ recovered (erase (gx g)) (oid 0 0) ∧
      detectable ckpt_regs (erase (gx g)).
  Proof.
    destruct ckpt_lin_not_vacuous_run as (g & Hg & Hq & Eh). exists g.
    assert (erase (gx g) = [Invoke (oid 0 0) 0 0; Crash; Recover (oid 0 0) (7, 8)]) as Ee by (rewrite Eh; done).
    split_and!; [done | done | rewrite Eh; right; left | | |].
    - rewrite Ee. exists [], [], [Recover (oid 0 0) (7, 8)], 0, 0. split; [done |].
      intros v Hin. by apply elem_of_nil in Hin.
    - rewrite Ee. exists (7, 8). by right; right; left.
    - by apply (ckpt_lin_detectable 1 false).
  Qed.
End not_vacuous.

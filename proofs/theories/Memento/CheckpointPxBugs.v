(** * Memento's CHECKPOINT on Px86: the as-written steps refuted, and a run of the fixed one

    Explicit runs of the model of [CheckpointPx.v] ([step]) with one step of
    CHECKPOINT as the seed writes it (or as a mutant of
    [impl/perdure-memento/MUTANTS.md] removes it), each checked by
    computation; a full crash keeps an image [p_crash_ok] allows.
    - [cross_no_flush_torn] ([specs/memento/README.md]'s mutant
      [CheckpointCrossLineNoFlush]; the seed's ④ without its flush, the
      code's [if Self::STRIDE > 64 { h.flush(..) }] removed): a slot across
      two lines, 1 thread, 1 full crash, 7 steps: the crash keeps the new
      timestamp and the first word but not the second, and recovery returns
      a value no attempt wrote (torn), against [ckpt_px_detectable].
    - [recovery_no_flush_unstable] (Finding 5, mutant
      [CheckpointAsWrittenRecovery]: ② returns the latest slot without
      flushing it): 1 thread, 1 thread crash and 1 full crash, 14 steps: the
      recovery after the thread crash returns [v] from a timestamp that is
      visible but not durable, the root operation's next write uses [v] and
      persists, the full crash loses the timestamp, and the checkpoint
      returns another value, against [ckpt_px_stable].
    - [no_fence_unstable] (mutant [CheckpointNoFence]: ⑤'s deferred
      [pfence] not paid before the next write): 1 thread, 1 full crash, 12
      steps: the next write persists without the timestamp; same outcome.
    [fixed_recoveries] runs the fixed protocol, two threads, through both
    recovery branches (② returning the value after a thread crash, ②'s
    miss re-executing after a full crash), so the theorems of
    [CheckpointPx.v] are not vacuous. *)
From Coq Require Import Lia.
From perdure.Core Require Import Px86 PxPersist.
From perdure.Memento Require Import CheckpointPx.
From stdpp Require Import base list relations.

Lemma rtc_l_eq {A} (R : relation A) x y y' z : R x y → y = y' → rtc R y' z → rtc R x z.
Proof. intros ? -> ?. by eapply rtc_l. Qed.

(** [norm_state] ([PxPersist.v]) replaces the state a step reaches by its
    normal form, [name_state] binds it for the rest of the run. *)

Ltac side := first [(vm_compute; reflexivity) | (vm_compute; lia)
  | (intros L HL; vm_compute in HL; vm_compute; do 12 (destruct L as [|L]; [simpl; lia|]); lia)].

Tactic Notation "go" uconstr(c) := eapply rtc_l_eq; [apply c; side | norm_state |]; name_state.

(** Step ④ without its flush, a slot across two lines: the timestamp and
    the first word persist, the second word does not. *)
Definition cfg_no4 : config := Cfg true false true true.
Theorem cross_no_flush_torn :
  ∃ s, reachable 1 cfg_no4 s ∧ (1, 0) ∈ rets (th s 0) ∧
       (¬ ∃ Tc, (0, kk (th s 0), Tc, (1, 0)) ∈ att s) ∧ lastv (th s 0) ≠ (1, 0).
Proof.
  eexists. split; [|split; [|split]].
  - unfold reachable.
    go (SStart _ _ _ 0 (1, 1)).
    go (S3a _ _ _ 0 true (1, 1)).
    go (S3b _ _ _ 0 true (1, 1)).
    go (S4 _ _ _ 0 true (1, 1)).
    go (S5 _ _ _ 0 true (1, 1)).
    go (SCrash _ _ _ (λ L : nat, if decide (L = 2) then 2 else 0)).
    go (SRecHit _ _ _ 0).
    apply rtc_refl.
  - vm_compute. right. left.
  - vm_compute. intros [Tc Hin]. apply elem_of_list_singleton in Hin. discriminate.
  - vm_compute. discriminate.
Qed.

(** ② without the recovery's flush (Finding 5). *)
Definition cfg_no_recflush : config := Cfg false true false true.
Theorem recovery_no_flush_unstable :
  ∃ s s', reachable 1 cfg_no_recflush s ∧ step 1 cfg_no_recflush s s' ∧
          effv (th s 0) = Some (1, 1) ∧ rets (th s' 0) = rets (th s 0) ++ [(2, 2)] ∧
          rd_vis (pm s') (xeff 0) = 1.
Proof.
  eexists _, _. split; [|split; [|split; [|split]]].
  - unfold reachable.
    go (SStart _ _ _ 0 (1, 1)).
    go (S3a _ _ _ 0 true (1, 1)).
    go (S3b _ _ _ 0 true (1, 1)).
    go (S4 _ _ _ 0 true (1, 1)).
    go (S5 _ _ _ 0 true (1, 1)).
    go (STCrash _ _ _ 0).
    go (SRecHit _ _ _ 0).
    go (SEff _ _ _ 0 true 1 (1, 1)).
    go (SCrash _ _ _ (λ L : nat, if decide (L = 4) then 1 else 0)).
    go (SRecMiss _ _ _ 0 (2, 2)).
    go (S3a _ _ _ 0 true (2, 2)).
    go (S3b _ _ _ 0 true (2, 2)).
    go (S4 _ _ _ 0 true (2, 2)).
    apply rtc_refl.
  - apply (S5 _ _ _ 0 true (2, 2)); side.
  - vm_compute. reflexivity.
  - vm_compute. reflexivity.
  - vm_compute. reflexivity.
Qed.

(** ⑤'s deferred fence not paid before the root operation's next write
    (mutant [CheckpointNoFence]). *)
Definition cfg_no_fence : config := Cfg false true true false.
Theorem no_fence_unstable :
  ∃ s s', reachable 1 cfg_no_fence s ∧ step 1 cfg_no_fence s s' ∧
          effv (th s 0) = Some (1, 1) ∧ rets (th s' 0) = rets (th s 0) ++ [(2, 2)] ∧
          rd_vis (pm s') (xeff 0) = 1.
Proof.
  eexists _, _. split; [|split; [|split; [|split]]].
  - unfold reachable.
    go (SStart _ _ _ 0 (1, 1)).
    go (S3a _ _ _ 0 true (1, 1)).
    go (S3b _ _ _ 0 true (1, 1)).
    go (S4 _ _ _ 0 true (1, 1)).
    go (S5 _ _ _ 0 true (1, 1)).
    go (SEff _ _ _ 0 true 1 (1, 1)).
    go (SCrash _ _ _ (λ L : nat, if decide (L = 4) then 1 else 0)).
    go (SRecMiss _ _ _ 0 (2, 2)).
    go (S3a _ _ _ 0 true (2, 2)).
    go (S3b _ _ _ 0 true (2, 2)).
    go (S4 _ _ _ 0 true (2, 2)).
    apply rtc_refl.
  - apply (S5 _ _ _ 0 true (2, 2)); side.
  - vm_compute. reflexivity.
  - vm_compute. reflexivity.
  - vm_compute. reflexivity.
Qed.

(** The fixed protocol, two threads, a slot in one line: thread 0's
    checkpoint of (1, 1) is cut by a thread crash after ⑤; its recovery
    finds the timestamp above its floor (②), flushes the slot and returns
    (1, 1); its next write and commit follow.  Thread 1's checkpoint of
    (5, 5) is cut by a full crash after ③'s first store, which the crash
    drops; its recovery finds nothing newer than its floor and re-executes
    with (6, 6).  A later crash image of thread 0 holds its completed
    checkpoint. *)
Theorem fixed_recoveries :
  ∃ s, reachable 2 (fixed false) s ∧
       kk (th s 0) = 1 ∧ lastv (th s 0) = (1, 1) ∧ rets (th s 1) = [(6, 6)] ∧
       recovered (fixed false) (rd_img (pm s) (λ L, mk (pm s) L)) 0 = (lastts (th s 0), (1, 1)).
Proof.
  eexists. split; [|split; [|split; [|split]]].
  - unfold reachable.
    go (SStart _ _ _ 0 (1, 1)).
    go (S3a _ _ _ 0 true (1, 1)).
    go (S3b _ _ _ 0 true (1, 1)).
    go (S4 _ _ _ 0 true (1, 1)).
    go (S5 _ _ _ 0 true (1, 1)).
    go (STCrash _ _ _ 0).
    go (SRecHit _ _ _ 0).
    go (SEff _ _ _ 0 true 1 (1, 1)).
    go (SCommit _ _ _ 0 true 1 (1, 1)).
    go (SStart _ _ _ 1 (5, 5)).
    go (S3a _ _ _ 1 true (5, 5)).
    go (SCrash _ _ _ (λ L : nat, if decide (L = 2) then 3 else if decide (L = 4) then 1 else 0)).
    go (SRecMiss _ _ _ 1 (6, 6)).
    go (S3a _ _ _ 1 true (6, 6)).
    go (S3b _ _ _ 1 true (6, 6)).
    go (S4 _ _ _ 1 true (6, 6)).
    go (S5 _ _ _ 1 true (6, 6)).
    apply rtc_refl.
  - vm_compute. reflexivity.
  - vm_compute. reflexivity.
  - vm_compute. reflexivity.
  - vm_compute. reflexivity.
Qed.

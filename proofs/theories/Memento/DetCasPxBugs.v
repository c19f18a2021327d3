(** * Memento's detectable CAS on Px86: the as-written steps refuted

    Explicit runs of the model of [DetCasPx.v] ([step]) with one step of the
    protocol as the seed writes it (or as a mutant of
    [impl/perdure-pm/src/hooks/mutants.rs] removes it), every first plain CAS
    satisfying (H-ABA) ([h_aba]), that end with an invocation whose returned
    result disagrees with its effect: OK while its first plain CAS is in no
    location's history ([¬ eff]), or ERR while it is ([eff]).  Each run is
    checked by computation; a full crash keeps an image [p_crash_ok] allows.
    - [l33_no_flush_breaks] (mutant [cas-no-flush-loc-L33]): 1 thread, 1
      full crash, 10 steps: OK without effect.
    - [l35_no_flush_breaks] (mutant [cas-no-flush-memento-L35]): 1 thread,
      1 full crash, 13 steps: ERR with its effect persisted.
    - [l38_no_fence_breaks] (the memento's write-back not completed before
      the second plain CAS, [second_cas]'s [fence_unless_rmw_fences]
      removed on a backend whose CAS is no fence): 1 thread, 1 full crash,
      13 steps: ERR with effect.
    - [l38_no_writeback_breaks] (L38 as published, mutant
      [cas-no-flush-loc-L38]): 2 threads, 2 locations, 1 full crash, 28
      steps: OK without effect (the helper's help of an annotated word a
      crash brought back is taken for a later CAS's).
    - [l20_as_written_breaks] (Finding 1 of [specs/memento/README.md]):
      2 threads, 2 thread crashes, 22 steps: OK without effect.
    - [help_update_skipped_breaks] (mutant [loadhelp-skip-help-update]):
      2 threads, 1 full crash, 15 steps: ERR with effect.
    [fixed_crash_recoveries] runs the fixed protocol through two recoveries
    (⑦ returning OK, ④ returning ERR) for contrast.
    The fixed protocol ([fixed]) is proved detectable in [DetCasPx.v]
    ([detcas_px_detectable], [detcas_px_returns]).  The mutant
    [checkpoint-no-fence] concerns CHECKPOINT (§2.2, [checkpoint.rs]), not
    the detectable CAS: it is not modelled here; the CAS's own memento
    checkpoint without its fence is [l38_no_fence_breaks]. *)
From Coq Require Import Lia.
From perdure.Core Require Import Px86 PxPersist.
From perdure.Memento Require Import DetCasPx.
From stdpp Require Import base list relations.

Lemma rtc_l_eq {A} (R : relation A) x y y' z : R x y → y = y' → rtc R y' z → rtc R x z.
Proof. intros ? -> ?. by eapply rtc_l. Qed.

(** [norm_state] ([PxPersist.v]) replaces the state a step reaches by its
    normal form, so that the terms of the run do not grow with its length;
    [name_state] binds it for the rest of the run, so that the kernel checks
    it once instead of at each occurrence (this file: 34 s -> 20 s of CPU). *)

(** (H-ABA) at a first plain CAS of a concrete run: no helper holds a word
    with the same value, parity and tid at the location. *)
Ltac solve_aba :=
  let u := fresh "u" in let Hpc := fresh "Hpc" in let Hh := fresh "Hh" in
  intros u ? ? ? ? Hpc Hh ?; destruct u as [|[|[|u]]]; vm_compute in Hpc;
  try discriminate; injection Hpc as <- <- <-; vm_compute in Hh; injection Hh as <-; vm_compute; congruence.

Ltac side := first [(vm_compute; reflexivity) | (vm_compute; congruence) | (vm_compute; lia) | solve_aba
  | (intros L HL; vm_compute in HL; vm_compute; do 16 (destruct L as [|L]; [simpl; lia|]); lia)].

Tactic Notation "go" uconstr(c) := eapply rtc_l_eq; [apply c; side | norm_state |]; name_state.

(** A full crash keeping [keep L] writes of line [L]: the threads 1 .. N
    take their [reinit] state. *)
Ltac crash_go keep :=
  match goal with |- rtc (step ?N ?NL _ _) ?x _ =>
    let T1 := eval vm_compute in (reinit N NL x keep 1) in
    let T2 := eval vm_compute in (reinit N NL x keep 2) in
    eapply rtc_l_eq; [apply (SCrash _ _ _ _ _ keep (upd (upd (th x) 1 T1) 2 T2));
      [side | (intros u [??]; destruct u as [|[|[|]]]; [lia | | | lia]; vm_compute; reflexivity)
            | (intros u Hu; unfold upd; destruct (decide (u = 2)) as [->|];
               [try (exfalso; apply Hu; unfold tr; lia); vm_compute; reflexivity|];
               destruct (decide (u = 1)); [exfalso; apply Hu; unfold tr; lia|done])]
    | norm_state |]; name_state
  end.

Ltac no_eff := let x := fresh "x" in let i := fresh "i" in let w := fresh "w" in
  intros (x & i & Hx & w & Hw & Hg); do 3 (destruct x as [|x]; [vm_compute in Hw;
    do 8 (destruct i as [|i]; [first [discriminate | (injection Hw as <-; vm_compute in Hg; discriminate)]|]);
    discriminate|]); lia.

Ltac has_eff x i := exists x, i; split; [lia | eexists; split; vm_compute; reflexivity].

(** The location's first plain CAS not flushed (L33 removed): the memento
    persists, the annotated word does not; recovery redoes the second plain
    CAS and returns OK for a CAS with no effect. *)
Definition cfg_no33 : config := Cfg false true true true true true false.
Theorem l33_no_flush_breaks :
  ∃ s, rtc (step 1 1 cfg_no33 h_aba) (init 1 1) s ∧
       res (th s 1) !! 0 = Some true ∧ ¬ eff 1 s 1 0.
Proof.
  eexists. split; [|split].
  - go (SStart _ _ _ _ _ 1 0 0 1).
    go (S26ok _ _ _ _ _ 1 true 0).
    go (S33 _ _ _ _ _ 1 true 0).
    go (S34 _ _ _ _ _ 1 true 0).
    go (S36 _ _ _ _ _ 1 true 1).
    go (S38 _ _ _ _ _ 1 true 1).
    crash_go (λ L : nat, if decide (L = 6) then 1 else 0).
    go (SRec6 _ _ _ _ _ 1).
    go (S38 _ _ _ _ _ 1 true 1).
    go (SCommit _ _ _ _ _ 1 true).
    apply rtc_refl.
  - vm_compute; reflexivity.
  - no_eff.
Qed.

(** The memento not written back (L35's flushopt removed): a full crash
    after the second plain CAS loses the memento and keeps the location's
    clean word; recovery re-executes, fails and reports ERR for a CAS whose
    effect persisted. *)
Definition cfg_no35 : config := Cfg true false true true true true false.
Theorem l35_no_flush_breaks :
  ∃ s, rtc (step 1 1 cfg_no35 h_aba) (init 1 1) s ∧
       res (th s 1) !! 0 = Some false ∧ eff 1 s 1 0.
Proof.
  eexists. split; [|split].
  - go (SStart _ _ _ _ _ 1 0 0 1).
    go (S26ok _ _ _ _ _ 1 true 0).
    go (S33 _ _ _ _ _ 1 true 0).
    go (S34 _ _ _ _ _ 1 true 0).
    go (S36 _ _ _ _ _ 1 true 1).
    go (S38 _ _ _ _ _ 1 true 1).
    crash_go (λ L : nat, if decide (L = 0) then 2 else 0).
    go (SRecH _ _ _ _ _ 1).
    go (SRec9 _ _ _ _ _ 1 true 0).
    go (S26fail _ _ _ _ _ 1 true 0).
    go (SFail _ _ _ _ _ 1 true 0).
    go (SFailF _ _ _ _ _ 1).
    go (SCommit _ _ _ _ _ 1 false).
    apply rtc_refl.
  - vm_compute; reflexivity.
  - has_eff 0 0.
Qed.

(** The second plain CAS not waiting for the memento's write-back (a
    backend whose locked CAS is no fence, without [fence_unless_rmw_fences]
    before L38): the clean word may persist before the memento. *)
Definition cfg_no38f : config := Cfg true true false true true true false.
Theorem l38_no_fence_breaks :
  ∃ s, rtc (step 1 1 cfg_no38f h_aba) (init 1 1) s ∧
       res (th s 1) !! 0 = Some false ∧ eff 1 s 1 0.
Proof.
  eexists. split; [|split].
  - go (SStart _ _ _ _ _ 1 0 0 1).
    go (S26ok _ _ _ _ _ 1 true 0).
    go (S33 _ _ _ _ _ 1 true 0).
    go (S34 _ _ _ _ _ 1 true 0).
    go (S36 _ _ _ _ _ 1 true 1).
    go (S38 _ _ _ _ _ 1 true 1).
    crash_go (λ L : nat, if decide (L = 0) then 2 else 0).
    go (SRecH _ _ _ _ _ 1).
    go (SRec9 _ _ _ _ _ 1 true 0).
    go (S26fail _ _ _ _ _ 1 true 0).
    go (SFail _ _ _ _ _ 1 true 0).
    go (SFailF _ _ _ _ _ 1).
    go (SCommit _ _ _ _ _ 1 false).
    apply rtc_refl.
  - vm_compute; reflexivity.
  - has_eff 0 0.
Qed.

(** L38 as published: the clean word is never written back.  Thread 1's
    CAS 0 (location 0, 0 → 1, parity Odd) and CAS 1 (location 1, parity
    Even) return OK; a full crash keeps CAS 0's annotated word (L33 flushed
    it) but not its clean word; thread 2's LOAD helps it, raising
    HELP[Odd][1] to a timestamp taken after the crash; thread 1's CAS 2
    (parity Odd again), run in recovery mode, finds HELP[Odd][1] above
    OWN's timestamp (L23–L24), takes the help for its own and returns OK
    without effect. *)
Definition cfg_no38wb : config := Cfg true true true false true true false.
Theorem l38_no_writeback_breaks :
  ∃ s, rtc (step 2 2 cfg_no38wb h_aba) (init 2 2) s ∧
       res (th s 1) !! 2 = Some true ∧ ¬ eff 2 s 1 2.
Proof.
  eexists. split; [|split].
  - go (SStart _ _ _ _ _ 1 0 0 1).
    go (S26ok _ _ _ _ _ 1 true 0).
    go (S33 _ _ _ _ _ 1 true 0).
    go (S34 _ _ _ _ _ 1 true 0).
    go (S36 _ _ _ _ _ 1 true 1).
    go (S38 _ _ _ _ _ 1 true 1).
    go (SCommit _ _ _ _ _ 1 true).
    go (SStart _ _ _ _ _ 1 1 0 1).
    go (S26ok _ _ _ _ _ 1 false 1).
    go (S33 _ _ _ _ _ 1 false 1).
    go (S34 _ _ _ _ _ 1 false 1).
    go (S36 _ _ _ _ _ 1 false 3).
    go (S38 _ _ _ _ _ 1 false 3).
    go (SCommit _ _ _ _ _ 1 true).
    crash_go (λ L : nat, if decide (L = 0) then 1 else if decide (L = 1) then 2
                         else if decide (L = 9) then 2 else 0).
    go (SLoad _ _ _ _ _ 2 0).
    go (SH4 _ _ _ _ _ 2 KLoad 0 (LW 1 (Some (true, 1)) 0 (Some (1, 0)))).
    go (SH5same _ _ _ _ _ 2 KLoad 0 (LW 1 (Some (true, 1)) 0 (Some (1, 0))) 5).
    go (SH10go _ _ _ _ _ 2 KLoad 0 (LW 1 (Some (true, 1)) 0 (Some (1, 0))) 5).
    go (SH13ok _ _ _ _ _ 2 KLoad 0 (LW 1 (Some (true, 1)) 0 (Some (1, 0))) 5 0).
    go (SH18ok _ _ _ _ _ 2 KLoad 0 (LW 1 (Some (true, 1)) 0 (Some (1, 0))) 5).
    go (SStartRec _ _ _ _ _ 1 1 1 0).
    go (SRecH _ _ _ _ _ 1).
    go (SRec8 _ _ _ _ _ 1 true 3).
    go (S34 _ _ _ _ _ 1 true 3).
    go (S36 _ _ _ _ _ 1 true 6).
    go (S38 _ _ _ _ _ 1 true 6).
    go (SCommit _ _ _ _ _ 1 true).
    apply rtc_refl.
  - vm_compute; reflexivity.
  - no_eff.
Qed.

(** L20 as written (Finding 1): [goto 38] leaves OWN behind.  Thread 1's
    CAS 0 (parity Odd) checkpoints its memento; thread 2 helps it
    (HELP[Odd][1] := 2); thread 1 crashes before L36; recovery (⑥) redoes
    the second plain CAS and returns OK with OWN still (Even, 0), so the
    commit keeps [own_floor] = (Even, 0) and CAS 1 takes parity Odd again;
    it crashes before its first plain CAS and its recovery takes CAS 0's help
    for its own (L23–L24): OK without effect.  Thread crashes only. *)
Definition cfg_asw20 : config := Cfg true true true true false true false.
Theorem l20_as_written_breaks :
  ∃ s, rtc (step 2 1 cfg_asw20 h_aba) (init 2 1) s ∧
       res (th s 1) !! 1 = Some true ∧ ¬ eff 1 s 1 1.
Proof.
  eexists. split; [|split].
  - go (SStart _ _ _ _ _ 1 0 0 1).
    go (S26ok _ _ _ _ _ 1 true 0).
    go (S33 _ _ _ _ _ 1 true 0).
    go (S34 _ _ _ _ _ 1 true 0).
    go (SLoad _ _ _ _ _ 2 0).
    go (SH4 _ _ _ _ _ 2 KLoad 0 (LW 1 (Some (true, 1)) 0 (Some (1, 0)))).
    go (SH5same _ _ _ _ _ 2 KLoad 0 (LW 1 (Some (true, 1)) 0 (Some (1, 0))) 2).
    go (SH10go _ _ _ _ _ 2 KLoad 0 (LW 1 (Some (true, 1)) 0 (Some (1, 0))) 2).
    go (SH13ok _ _ _ _ _ 2 KLoad 0 (LW 1 (Some (true, 1)) 0 (Some (1, 0))) 2 0).
    go (SH18ok _ _ _ _ _ 2 KLoad 0 (LW 1 (Some (true, 1)) 0 (Some (1, 0))) 2).
    go (STCrash _ _ _ _ _ 1).
    go (SRec6 _ _ _ _ _ 1).
    go (S38 _ _ _ _ _ 1 true 1).
    go (SCommit _ _ _ _ _ 1 true).
    go (SStart _ _ _ _ _ 1 0 1 0).
    go (STCrash _ _ _ _ _ 1).
    go (SRecH _ _ _ _ _ 1).
    go (SRec8 _ _ _ _ _ 1 true 0).
    go (S34 _ _ _ _ _ 1 true 0).
    go (S36 _ _ _ _ _ 1 true 4).
    go (S38 _ _ _ _ _ 1 true 4).
    go (SCommit _ _ _ _ _ 1 true).
    apply rtc_refl.
  - vm_compute; reflexivity.
  - no_eff.
Qed.

(** LOADHELP without L13–L16 (mutant [loadhelp-skip-help-update]): a helper
    cleans the annotated word without raising HELP; the owner crashes before
    its memento; its recovery finds neither the word (L22) nor a help (L24),
    re-executes, fails and reports ERR for a CAS whose effect persisted. *)
Definition cfg_nohelp : config := Cfg true true true true true false false.
Theorem help_update_skipped_breaks :
  ∃ s, rtc (step 2 1 cfg_nohelp h_aba) (init 2 1) s ∧
       res (th s 1) !! 0 = Some false ∧ eff 1 s 1 0.
Proof.
  eexists. split; [|split].
  - go (SStart _ _ _ _ _ 1 0 0 1).
    go (S26ok _ _ _ _ _ 1 true 0).
    go (S33 _ _ _ _ _ 1 true 0).
    go (SLoad _ _ _ _ _ 2 0).
    go (SH4 _ _ _ _ _ 2 KLoad 0 (LW 1 (Some (true, 1)) 0 (Some (1, 0)))).
    go (SH5same _ _ _ _ _ 2 KLoad 0 (LW 1 (Some (true, 1)) 0 (Some (1, 0))) 1).
    go (SH10go _ _ _ _ _ 2 KLoad 0 (LW 1 (Some (true, 1)) 0 (Some (1, 0))) 1).
    go (SH18ok _ _ _ _ _ 2 KLoad 0 (LW 1 (Some (true, 1)) 0 (Some (1, 0))) 1).
    crash_go (λ L : nat, if decide (L = 0) then 2 else 0).
    go (SRecH _ _ _ _ _ 1).
    go (SRec9 _ _ _ _ _ 1 true 0).
    go (S26fail _ _ _ _ _ 1 true 0).
    go (SFail _ _ _ _ _ 1 true 0).
    go (SFailF _ _ _ _ _ 1).
    go (SCommit _ _ _ _ _ 1 false).
    apply rtc_refl.
  - vm_compute; reflexivity.
  - has_eff 0 0.
Qed.

(** The fixed protocol, for contrast (the theorems of [DetCasPx.v] are not
    vacuous): thread 1's CAS 0 (0 → 1) crashes after its first plain CAS,
    which the crash keeps; recovery finds it (⑦), resumes at L33 and returns
    OK; its CAS 1 (0 → 2) fails, checkpoints the failure, crashes before the
    flush with the memento kept; recovery reports ERR (④). *)
Theorem fixed_crash_recoveries :
  ∃ s, rtc (step 1 1 fixed h_aba) (init 1 1) s ∧
       res (th s 1) = [true; false] ∧ eff 1 s 1 0 ∧ ¬ eff 1 s 1 1.
Proof.
  eexists. split; [|split; [|split]].
  - go (SStart _ _ _ _ _ 1 0 0 1).
    go (S26ok _ _ _ _ _ 1 true 0).
    crash_go (λ L : nat, if decide (L = 0) then 1 else 0).
    go (SRec7 _ _ _ _ _ 1).
    go (S33 _ _ _ _ _ 1 true 0).
    go (S34 _ _ _ _ _ 1 true 0).
    go (S36 _ _ _ _ _ 1 true 1).
    go (S38 _ _ _ _ _ 1 true 1).
    go (SCommit _ _ _ _ _ 1 true).
    go (SStart _ _ _ _ _ 1 0 0 2).
    go (S26fail _ _ _ _ _ 1 false 1).
    go (SFail _ _ _ _ _ 1 false 1).
    crash_go (λ L : nat, if decide (L = 0) then 2 else if decide (L = 6) then 2 else 0).
    go (SRec4 _ _ _ _ _ 1).
    go (SCommit _ _ _ _ _ 1 false).
    apply rtc_refl.
  - vm_compute; reflexivity.
  - has_eff 0 0.
  - no_eff.
Qed.

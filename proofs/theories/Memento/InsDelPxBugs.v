(** * Memento's detectable insert and delete on Px86: the as-written steps refuted, a run of the fixed ones

    Explicit runs of the model of [InsDelPx.v] ([step]), each checked by
    computation; a full crash keeps an image [p_crash_ok] allows.
    - [recovery_plain_load_breaks] (Finding 6 of [specs/memento/README.md],
      mutant [InsertRecoveryPlainLoad]: INSERT's recovery finds its block
      through a plain load): 1 thread, 1 thread crash and 1 full crash, 6
      steps: the recovery sees the block through a word whose persist bit is
      set, returns OK, and the full crash loses the insert: OK without
      effect, against [insdel_px_detectable].
    - [no_l37_breaks] (L37's write-back of [repl] removed): 1 thread, 1 full
      crash, 13 steps: the location's null persists (DEFERFLUSH, the commit)
      and [repl] does not: a DELETE returned its block without its effect.
    - [clear_before_flush_breaks] (mutant [ClearBeforeFlushL25] /
      [InsertFlushSwapped]: L25 before L24): 1 thread, 4 steps: a clean word
      naming a block whose insert is not persisted, against §4.1's
      invariant [insdel_px_link_and_persist] (a LOAD returns it; a crash
      loses it).
    [fixed_recoveries] runs the fixed protocol, two threads, through
    INSERT's recovery (LOAD flushing and clearing the persist bit), a
    DELETE's recovery reporting ERR (its [repl] CAS lost by a full crash)
    and one resuming at L37 after a thread crash. *)
From Coq Require Import Lia.
From perdure.Core Require Import Px86 PxPersist.
From perdure.Memento Require Import CheckpointPx InsDelPx.
From stdpp Require Import base list relations.

Lemma rtc_l_eq' {A} (R : relation A) x y y' z : R x y → y = y' → rtc R y' z → rtc R x z.
Proof. intros ? -> ?. by eapply rtc_l. Qed.

(** [norm_state] ([PxPersist.v]) replaces the state a step reaches by its
    normal form, [name_state] binds it for the rest of the run. *)

Ltac side := first [(vm_compute; reflexivity) | (vm_compute; lia) | (vm_compute; congruence)
  | (vm_compute; apply not_elem_of_nil)
  | (intros L HL; vm_compute in HL; vm_compute; do 6 (destruct L as [|L]; [simpl; lia|]); lia)].

Tactic Notation "go" uconstr(c) := eapply rtc_l_eq'; [apply c; side | norm_state |]; name_state.

(** Finding 6: INSERT's recovery with plain loads. *)
Definition cfg_plain : config := Cfg true true false.
Theorem recovery_plain_load_breaks :
  ∃ s, reachable 1 1 cfg_plain s ∧ res (th s 1) = [(Some 1, 1)] ∧ ¬ effI s 1.
Proof.
  eexists. split; [|split].
  - unfold reachable.
    go (SInsStart _ _ _ _ 1 1).
    go (SI21ok _ _ _ _ 1 1).
    go (STCrash _ _ _ _ 1).
    go (SIRecP _ _ _ _ 1 1).
    go (SCommit _ _ _ _ 1 1).
    go (SCrash _ _ _ _ (λ _, 0)).
    apply rtc_refl.
  - vm_compute. reflexivity.
  - unfold effI. vm_compute. apply not_elem_of_nil.
Qed.

(** L37's write-back of [repl] removed. *)
Definition cfg_no37 : config := Cfg true false true.
Theorem no_l37_breaks :
  ∃ s, reachable 1 1 cfg_no37 s ∧ res (th s 1) = [(Some 1, 1); (None, 1)] ∧ ¬ effD s 1 1 1.
Proof.
  eexists. split; [|split].
  - unfold reachable.
    go (SInsStart _ _ _ _ 1 1).
    go (SI21ok _ _ _ _ 1 1).
    go (SI24 _ _ _ _ 1 1).
    go (SI25 _ _ _ _ 1 1).
    go (SI26 _ _ _ _ 1 1).
    go (SCommit _ _ _ _ 1 1).
    go (SDelStart _ _ _ _ 1).
    go (SLclean _ _ _ _ 1 LDel 1).
    go (SD34ok _ _ _ _ 1 1).
    go (SD37 _ _ _ _ 1 1).
    go (SD38 _ _ _ _ 1 1).
    go (SCommit _ _ _ _ 1 1).
    go (SCrash _ _ _ _ (λ L, if decide (L = 0) then 3 else 0)).
    apply rtc_refl.
  - vm_compute. reflexivity.
  - unfold effD. vm_compute. apply not_elem_of_nil.
Qed.

(** L25 before L24: a clean word whose insert is not persisted. *)
Definition cfg_swap : config := Cfg false true true.
Theorem clear_before_flush_breaks :
  ∃ s, reachable 1 1 cfg_swap s ∧ visp (pm s) LOC = (0, 1) ∧ ¬ durI (pm s) 1 ∧
       ∃ keep, p_crash_ok (pm s) keep ∧ visp (crash_mem (pm s) keep) LOC = (0, 0).
Proof.
  eexists. split; [|split; [|split]].
  - unfold reachable.
    go (SInsStart _ _ _ _ 1 1).
    go (SI21ok _ _ _ _ 1 1).
    go (SI24 _ _ _ _ 1 1).
    go (SI25 _ _ _ _ 1 1).
    apply rtc_refl.
  - vm_compute. reflexivity.
  - intros (i & Hi & Hm). vm_compute in Hm. lia.
  - exists (λ _, 0). split; [side | vm_compute; reflexivity].
Qed.

(** The fixed protocol, two threads, one block: thread 1's INSERT is cut
    by a thread crash after L21; its recovery's LOAD flushes and clears the
    persist bit and finds the block: OK.  Thread 2's DELETE writes [repl]
    and a full crash loses it: its recovery reports ERR.  Its next DELETE
    is cut by a thread crash after L34; its recovery finds [repl] naming it,
    resumes at L37 and returns the block. *)
Theorem fixed_recoveries :
  ∃ s, reachable 2 1 fixed s ∧ res (th s 1) = [(Some 1, 1)] ∧ res (th s 2) = [(None, 0); (None, 1)] ∧
       effI s 1 ∧ effD s 2 1 1.
Proof.
  eexists. split; [|split; [|split; [|split]]].
  - unfold reachable.
    go (SInsStart _ _ _ _ 1 1).
    go (SI21ok _ _ _ _ 1 1).
    go (STCrash _ _ _ _ 1).
    go (SLfix _ _ _ _ 1 (LInsRec 1) 1).
    go (SCommit _ _ _ _ 1 1).
    go (SDelStart _ _ _ _ 2).
    go (SLclean _ _ _ _ 2 LDel 1).
    go (SD34ok _ _ _ _ 2 1).
    go (SCrash _ _ _ _ (λ L, if decide (L = 0) then 2 else 0)).
    go (SDRec _ _ _ _ 2).
    go (SCommit _ _ _ _ 2 0).
    go (SDelStart _ _ _ _ 2).
    go (SLclean _ _ _ _ 2 LDel 1).
    go (SD34ok _ _ _ _ 2 1).
    go (STCrash _ _ _ _ 2).
    go (SDRec _ _ _ _ 2).
    go (SD37 _ _ _ _ 2 1).
    go (SD38 _ _ _ _ 2 1).
    go (SCommit _ _ _ _ 2 1).
    apply rtc_refl.
  - vm_compute. reflexivity.
  - vm_compute. reflexivity.
  - unfold effI. vm_compute. left.
  - unfold effD. vm_compute. left.
Qed.

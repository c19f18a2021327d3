(** * The tutorial commit-marker log: its crash invariant

    Justifies [CrashInvariant] (and [CommitOrder]) of
    [specs/tutorial/CommitLog.tla], the protocol of
    [impl/perdure-pm/src/commit_log.rs] ([CommitLog::append], recovery in
    [CommitLog::open]), for every number of threads, every capacity and any
    number of crashes: TLC checks the spec for small bounds, this file for
    all.

    The model is the TLA+ module's, action by action, written as relations
    between a state and the next ([s] and [s'], TLA+'s primed variables):
    [Reserve], [WriteRecord], [FlushRecord], [Fence], [Commit],
    [FlushCommit], [Sync] (with [Settle], the pending write-backs of a
    thread taking effect at its fence) and [Crash] (a crash keeping commit
    value [c] and the records [D], then the null recovery).  Sets of records
    are predicates on [nat]; the thread type [T] is any type with decidable
    equality.  The bound [MaxCrashes] and the counter [crashes] are left
    out: crashes are unbounded here.  The constant [NoRecordFence] is
    [no_record_fence].

    Proved:
    - [crash_invariant_reachable]: in every reachable state, every commit
      value that a crash may persist (between [fcommit] and [commit]) covers
      only records guaranteed persisted ([CrashInvariant]);
    - [commit_order_reachable]: [commit <= next] and [fcommit <= commit];
    both from the inductive invariant [inv] ([inv_init], [inv_next]), which
    strengthens them with: every record below [commit] is durable; no
    pending commit write-back covers more than [commit]; a thread past
    [Reserve] holds a ticket below [next] and its record is written once it
    is past [WriteRecord]; a thread at [Fence] has its record pending or
    durable, one at [Commit] has it durable; durable and pending records are
    written (so a crash always has a choice of [D]).
    - [no_record_fence_violates]: with [no_record_fence] (the mutant of
      [specs/tutorial/mutants/]) a reachable state breaks [CrashInvariant]
      after four steps of one thread, as TLC finds.

    The abstraction gap to the Rust code, not covered here: a record is one
    cache line written as a whole ([written] is a set of indices; the Rust
    record is eight words, and its checksum and sequence number detect a
    torn line, which the model excludes by persisting lines whole); threads
    interleave at the granularity of these actions (the fetch-add of
    [Reserve], the stores of [WriteRecord], the spin-wait and store of
    [Commit] are each atomic here), and [pwb]/[pfence]/[psync] are read with
    the Px86 rules of [Px86.v] summarised as [Settle] (a write-back takes
    effect at the latest at the thread's next fence, and then persists what
    was visible when it was issued); the log being full, wrap-around, record
    contents and the queue-level history (checked by the crash explorer and
    [DurableLin.v]'s definitions) are outside the model. *)
From stdpp Require Import base tactics decidable numbers.
From Coq Require Import Lia.

(** The step an appending thread is at ([Steps] of the TLA+ module). *)
Inductive step_name := Idle | Write | Flush | AtFence | AtCommit | FlushC | AtSync.

Global Instance step_name_eq_dec : EqDecision step_name.
Proof. solve_decision. Defined.

Section commit_log.
  Context {T : Type} `{!EqDecision T}.
  (** Capacity: records [0 .. NRec - 1]; and the mutant switch. *)
  Context (NRec : nat) (no_record_fence : bool).

  Record state := State {
    next : nat;                    (* tickets handed out (volatile) *)
    commit : nat;                  (* the commit word as visible *)
    fcommit : nat;                 (* the commit value guaranteed persisted *)
    written : nat → Prop;          (* records written and visible *)
    durable : nat → Prop;          (* records guaranteed persisted *)
    pend_rec : T → nat → Prop;     (* record write-backs awaiting a fence *)
    pend_commit : T → nat;         (* commit value covered by a pending write-back *)
    pc : T → step_name;
    tk : T → nat;                  (* each thread's ticket *)
  }.

  Definition upd {A} (f : T → A) (t : T) (a : A) : T → A :=
    λ t', if decide (t' = t) then a else f t'.

  Lemma upd_eq {A} (f : T → A) t a : upd f t a t = a.
  Proof. unfold upd. by rewrite decide_True. Qed.
  Lemma upd_ne {A} (f : T → A) t t' a : t' ≠ t → upd f t a t' = f t'.
  Proof. intros. unfold upd. by rewrite decide_False. Qed.

  Implicit Types (s : state) (t : T) (i c n : nat).

  Definition Init s : Prop :=
    next s = 0 ∧ commit s = 0 ∧ fcommit s = 0 ∧
    (∀ i, ¬ written s i) ∧ (∀ i, ¬ durable s i) ∧
    (∀ t i, ¬ pend_rec s t i) ∧ (∀ t, pend_commit s t = 0) ∧
    (∀ t, pc s t = Idle) ∧ (∀ t, tk s t = 0).

  (** append step 0: ticket [i] from the reserved word *)
  Definition Reserve t i s s' : Prop :=
    pc s t = Idle ∧ i = next s ∧ next s < NRec ∧
    next s' = next s + 1 ∧ tk s' = upd (tk s) t i ∧ pc s' = upd (pc s) t Write ∧
    commit s' = commit s ∧ fcommit s' = fcommit s ∧ written s' = written s ∧
    durable s' = durable s ∧ pend_rec s' = pend_rec s ∧ pend_commit s' = pend_commit s.

  (** append step 1: write record [i] *)
  Definition WriteRecord t i s s' : Prop :=
    pc s t = Write ∧ i = tk s t ∧
    written s' = (λ j, written s j ∨ j = i) ∧ pc s' = upd (pc s) t Flush ∧
    next s' = next s ∧ commit s' = commit s ∧ fcommit s' = fcommit s ∧
    durable s' = durable s ∧ pend_rec s' = pend_rec s ∧ pend_commit s' = pend_commit s ∧
    tk s' = tk s.

  (** append step 2a: pwb(record i) *)
  Definition FlushRecord t i s s' : Prop :=
    pc s t = Flush ∧ i = tk s t ∧
    pend_rec s' = upd (pend_rec s) t (λ j, pend_rec s t j ∨ j = i) ∧
    pc s' = upd (pc s) t (if no_record_fence then AtCommit else AtFence) ∧
    next s' = next s ∧ commit s' = commit s ∧ fcommit s' = fcommit s ∧
    written s' = written s ∧ durable s' = durable s ∧ pend_commit s' = pend_commit s ∧
    tk s' = tk s.

  (** Px86: at a fence, the thread's pending write-backs have taken effect *)
  Definition Settle t s s' : Prop :=
    durable s' = (λ j, durable s j ∨ pend_rec s t j) ∧
    fcommit s' = max (fcommit s) (pend_commit s t) ∧
    pend_rec s' = upd (pend_rec s) t (λ _, False) ∧
    pend_commit s' = upd (pend_commit s) t 0.

  (** append step 2b: pfence *)
  Definition Fence t s s' : Prop :=
    pc s t = AtFence ∧ Settle t s s' ∧ pc s' = upd (pc s) t AtCommit ∧
    next s' = next s ∧ commit s' = commit s ∧ written s' = written s ∧ tk s' = tk s.

  (** append step 3: commit in ticket order *)
  Definition Commit t n s s' : Prop :=
    pc s t = AtCommit ∧ commit s = tk s t ∧ n = tk s t + 1 ∧
    commit s' = n ∧ pc s' = upd (pc s) t FlushC ∧
    next s' = next s ∧ fcommit s' = fcommit s ∧ written s' = written s ∧
    durable s' = durable s ∧ pend_rec s' = pend_rec s ∧ pend_commit s' = pend_commit s ∧
    tk s' = tk s.

  (** append step 4a: pwb(commit word), covering the value visible now *)
  Definition FlushCommit t s s' : Prop :=
    pc s t = FlushC ∧
    pend_commit s' = upd (pend_commit s) t (max (pend_commit s t) (commit s)) ∧
    pc s' = upd (pc s) t AtSync ∧
    next s' = next s ∧ commit s' = commit s ∧ fcommit s' = fcommit s ∧
    written s' = written s ∧ durable s' = durable s ∧ pend_rec s' = pend_rec s ∧
    tk s' = tk s.

  (** append step 4b: psync; the append is acknowledged *)
  Definition Sync t s s' : Prop :=
    pc s t = AtSync ∧ Settle t s s' ∧ pc s' = upd (pc s) t Idle ∧
    next s' = next s ∧ commit s' = commit s ∧ written s' = written s ∧ tk s' = tk s.

  (** What Px86 lets a crash keep: a commit value between the guaranteed and
      the visible one, every guaranteed record and otherwise written ones. *)
  Definition CrashAllowed c (D : nat → Prop) s : Prop :=
    fcommit s ≤ c ≤ commit s ∧ (∀ j, durable s j → D j) ∧ (∀ j, D j → written s j).

  (** A crash, then the null recovery. *)
  Definition Crash c (D : nat → Prop) s s' : Prop :=
    CrashAllowed c D s ∧
    next s' = c ∧ commit s' = c ∧ fcommit s' = c ∧ written s' = D ∧ durable s' = D ∧
    (∀ t j, ¬ pend_rec s' t j) ∧ (∀ t, pend_commit s' t = 0) ∧
    (∀ t, pc s' t = Idle) ∧ (∀ t, tk s' t = 0).

  Definition Next s s' : Prop :=
    (∃ t,
      (∃ i, i < NRec ∧ (Reserve t i s s' ∨ WriteRecord t i s s' ∨ FlushRecord t i s s')) ∨
      Fence t s s' ∨ FlushCommit t s s' ∨ Sync t s s' ∨
      (∃ n, 1 ≤ n ≤ NRec ∧ Commit t n s s')) ∨
    (∃ c D, c ≤ NRec ∧ Crash c D s s').

  Inductive reachable : state → Prop :=
    | reachable_init s : Init s → reachable s
    | reachable_next s s' : reachable s → Next s s' → reachable s'.

  (** Every commit value a crash may persist covers only records that are
      guaranteed persisted. *)
  Definition CrashInvariant s : Prop :=
    ∀ c, fcommit s ≤ c ≤ commit s → ∀ i, i < c → durable s i.

  Definition CommitOrder s : Prop := commit s ≤ next s ∧ fcommit s ≤ commit s.

  (** The inductive strengthening. *)
  Record inv s : Prop := {
    inv_commit_next : commit s ≤ next s;
    inv_fcommit_commit : fcommit s ≤ commit s;
    inv_below_commit_durable : ∀ i, i < commit s → durable s i;
    inv_pend_commit : ∀ t, pend_commit s t ≤ commit s;
    inv_ticket : ∀ t, pc s t ≠ Idle → tk s t < next s;
    inv_written : ∀ t, pc s t ≠ Idle → pc s t ≠ Write → written s (tk s t);
    inv_at_fence : ∀ t, pc s t = AtFence → pend_rec s t (tk s t) ∨ durable s (tk s t);
    inv_at_commit : ∀ t, pc s t = AtCommit → durable s (tk s t);
    inv_durable_written : ∀ i, durable s i → written s i;
    inv_pend_written : ∀ t i, pend_rec s t i → written s i;
  }.

  Lemma inv_crash_invariant s : inv s → CrashInvariant s.
  Proof. intros Hinv c [_ Hc] i Hi. apply (inv_below_commit_durable _ Hinv). lia. Qed.

  Lemma inv_commit_order s : inv s → CommitOrder s.
  Proof. intros Hinv. split; [apply Hinv | apply Hinv]. Qed.

  Lemma inv_init s : Init s → inv s.
  Proof.
    intros (Hn & Hc & Hf & Hw & Hd & Hpr & Hpc & Hpcs & Htk).
    split; rewrite ?Hn, ?Hc, ?Hf; try lia.
    - intros t. rewrite Hpc. lia.
    - intros t. by rewrite Hpcs.
    - intros t. by rewrite Hpcs.
    - intros t. by rewrite Hpcs.
    - intros t. by rewrite Hpcs.
    - intros i ?. by destruct (Hd i).
    - intros t i ?. by destruct (Hpr t i).
  Qed.

  (** A thread's own fields after an update at [t], and the others'. *)
  Ltac upd_cases t t' :=
    destruct (decide (t' = t)) as [-> | ?]; rewrite ?upd_eq, ?upd_ne by done.

  Lemma reserve_inv t i s s' : inv s → Reserve t i s s' → inv s'.
  Proof.
    intros Hinv (Hpc & -> & _ & Hn & Htk & Hpc' & Hc & Hf & Hw & Hd & Hpr & Hpcm).
    split; rewrite ?Hn, ?Htk, ?Hpc', ?Hc, ?Hf, ?Hw, ?Hd, ?Hpr, ?Hpcm.
    - pose proof (inv_commit_next _ Hinv). lia.
    - apply Hinv.
    - apply Hinv.
    - apply Hinv.
    - intros t'. upd_cases t t'; intros Hne; [lia |].
      pose proof (inv_ticket _ Hinv t' Hne). lia.
    - intros t'. upd_cases t t'; [done |]. apply Hinv.
    - intros t'. upd_cases t t'; [done |]. apply Hinv.
    - intros t'. upd_cases t t'; [done |]. apply Hinv.
    - apply Hinv.
    - apply Hinv.
  Qed.

  Lemma write_record_inv t i s s' : inv s → WriteRecord t i s s' → inv s'.
  Proof.
    intros Hinv (Hpc & -> & Hw & Hpc' & Hn & Hc & Hf & Hd & Hpr & Hpcm & Htk).
    split; rewrite ?Hn, ?Htk, ?Hpc', ?Hc, ?Hf, ?Hw, ?Hd, ?Hpr, ?Hpcm.
    - apply Hinv.
    - apply Hinv.
    - apply Hinv.
    - apply Hinv.
    - intros t'. upd_cases t t'; [| apply Hinv]. intros _. apply Hinv. by rewrite Hpc.
    - intros t'. upd_cases t t'; [by right |]. intros ??. left. by apply Hinv.
    - intros t'. upd_cases t t'; [done |]. apply Hinv.
    - intros t'. upd_cases t t'; [done |]. apply Hinv.
    - intros j ?. left. by apply Hinv.
    - intros t' j ?. left. by apply (inv_pend_written _ Hinv t').
  Qed.

  Lemma flush_record_inv t i s s' :
    no_record_fence = false → inv s → FlushRecord t i s s' → inv s'.
  Proof.
    intros Hfence Hinv (Hpc & -> & Hpr & Hpc' & Hn & Hc & Hf & Hw & Hd & Hpcm & Htk).
    rewrite Hfence in Hpc'.
    split; rewrite ?Hn, ?Htk, ?Hpc', ?Hc, ?Hf, ?Hw, ?Hd, ?Hpr, ?Hpcm.
    - apply Hinv.
    - apply Hinv.
    - apply Hinv.
    - apply Hinv.
    - intros t'. upd_cases t t'; [| apply Hinv]. intros _. apply Hinv. by rewrite Hpc.
    - intros t'. upd_cases t t'; [| apply Hinv]. intros _ _. apply Hinv; by rewrite Hpc.
    - intros t'. upd_cases t t'; [intros _; left; by right |].
      intros Hat. destruct (inv_at_fence _ Hinv t' Hat); [by left | by right].
    - intros t'. upd_cases t t'; [done |]. apply Hinv.
    - apply Hinv.
    - intros t' j. upd_cases t t'.
      + intros [? | ->]; [by apply (inv_pend_written _ Hinv t) | apply Hinv; by rewrite Hpc].
      + apply Hinv.
  Qed.

  (** [Settle] keeps the invariant's durability facts: it only adds durable
      records that were pending (hence written) and raises [fcommit] to a
      pending commit value (at most [commit]). *)
  Lemma settle_facts t s s' :
    inv s → Settle t s s' →
    fcommit s' ≤ commit s ∧ (∀ j, durable s j → durable s' j) ∧
    (∀ j, durable s' j → written s j) ∧ (∀ t' j, pend_rec s' t' j → pend_rec s t' j) ∧
    (∀ t', pend_commit s' t' ≤ pend_commit s t').
  Proof.
    intros Hinv (Hd & Hf & Hpr & Hpcm). rewrite Hd, Hf, Hpr, Hpcm. split_and!.
    - pose proof (inv_fcommit_commit _ Hinv). pose proof (inv_pend_commit _ Hinv t). lia.
    - intros j ?. by left.
    - intros j [? | ?]; [by apply Hinv | by apply (inv_pend_written _ Hinv t)].
    - intros t' j. by upd_cases t t'.
    - intros t'. upd_cases t t'; lia.
  Qed.

  Lemma fence_inv t s s' : inv s → Fence t s s' → inv s'.
  Proof.
    intros Hinv (Hpc & Hset & Hpc' & Hn & Hc & Hw & Htk).
    destruct (settle_facts t s s' Hinv Hset) as (Hf & Hdur & Hdw & Hpr & Hpcm).
    destruct Hset as (Hd & _ & Hpr' & _).
    split; rewrite ?Hn, ?Htk, ?Hpc', ?Hc, ?Hw.
    - apply Hinv.
    - done.
    - intros i ?. apply Hdur. by apply Hinv.
    - intros t'. pose proof (Hpcm t'). pose proof (inv_pend_commit _ Hinv t'). lia.
    - intros t'. upd_cases t t'; [| apply Hinv]. intros _. apply Hinv. by rewrite Hpc.
    - intros t'. upd_cases t t'; [| apply Hinv]. intros _ _. apply Hinv; by rewrite Hpc.
    - intros t'. upd_cases t t'; [done |].
      intros Hat. rewrite Hpr', upd_ne by done.
      destruct (inv_at_fence _ Hinv t' Hat); [by left | right; by apply Hdur].
    - (* the fence made this thread's pending record durable *)
      intros t'. upd_cases t t'.
      + intros _. rewrite Hd. destruct (inv_at_fence _ Hinv t Hpc); [by right | by left].
      + intros ?. apply Hdur. by apply (inv_at_commit _ Hinv).
    - done.
    - intros t' j ?. by apply (inv_pend_written _ Hinv t'), Hpr.
  Qed.

  Lemma commit_inv t n s s' : inv s → Commit t n s s' → inv s'.
  Proof.
    intros Hinv (Hpc & Hct & -> & Hc' & Hpc' & Hn & Hf & Hw & Hd & Hpr & Hpcm & Htk).
    pose proof (inv_ticket _ Hinv t ltac:(by rewrite Hpc)) as Hlt.
    split; rewrite ?Hn, ?Htk, ?Hpc', ?Hc', ?Hf, ?Hw, ?Hd, ?Hpr, ?Hpcm.
    - lia.
    - pose proof (inv_fcommit_commit _ Hinv). lia.
    - (* the committed record is durable: the thread is past its fence *)
      intros i Hi. destruct (decide (i = tk s t)) as [-> | ?].
      + by apply (inv_at_commit _ Hinv).
      + apply (inv_below_commit_durable _ Hinv). lia.
    - intros t'. pose proof (inv_pend_commit _ Hinv t'). lia.
    - intros t'. upd_cases t t'; [| apply Hinv]. done.
    - intros t'. upd_cases t t'; [| apply Hinv]. intros _ _. apply Hinv; by rewrite Hpc.
    - intros t'. upd_cases t t'; [done |]. apply Hinv.
    - intros t'. upd_cases t t'; [done |]. apply Hinv.
    - apply Hinv.
    - apply Hinv.
  Qed.

  Lemma flush_commit_inv t s s' : inv s → FlushCommit t s s' → inv s'.
  Proof.
    intros Hinv (Hpc & Hpcm & Hpc' & Hn & Hc & Hf & Hw & Hd & Hpr & Htk).
    split; rewrite ?Hn, ?Htk, ?Hpc', ?Hc, ?Hf, ?Hw, ?Hd, ?Hpr, ?Hpcm.
    - apply Hinv.
    - apply Hinv.
    - apply Hinv.
    - intros t'. pose proof (inv_pend_commit _ Hinv t'). upd_cases t t'; lia.
    - intros t'. upd_cases t t'; [| apply Hinv]. intros _. apply Hinv. by rewrite Hpc.
    - intros t'. upd_cases t t'; [| apply Hinv]. intros _ _. apply Hinv; by rewrite Hpc.
    - intros t'. upd_cases t t'; [done |]. apply Hinv.
    - intros t'. upd_cases t t'; [done |]. apply Hinv.
    - apply Hinv.
    - apply Hinv.
  Qed.

  Lemma sync_inv t s s' : inv s → Sync t s s' → inv s'.
  Proof.
    intros Hinv (Hpc & Hset & Hpc' & Hn & Hc & Hw & Htk).
    destruct (settle_facts t s s' Hinv Hset) as (Hf & Hdur & Hdw & Hpr & Hpcm).
    destruct Hset as (Hd & _ & Hpr' & _).
    split; rewrite ?Hn, ?Htk, ?Hpc', ?Hc, ?Hw.
    - apply Hinv.
    - done.
    - intros i ?. apply Hdur. by apply Hinv.
    - intros t'. pose proof (Hpcm t'). pose proof (inv_pend_commit _ Hinv t'). lia.
    - intros t'. upd_cases t t'; [done | apply Hinv].
    - intros t'. upd_cases t t'; [done | apply Hinv].
    - intros t'. upd_cases t t'; [done |].
      intros Hat. rewrite Hpr', upd_ne by done.
      destruct (inv_at_fence _ Hinv t' Hat); [by left | right; by apply Hdur].
    - intros t'. upd_cases t t'; [done |]. intros ?. apply Hdur. by apply (inv_at_commit _ Hinv).
    - done.
    - intros t' j ?. by apply (inv_pend_written _ Hinv t'), Hpr.
  Qed.

  Lemma crash_inv c D s s' : inv s → Crash c D s s' → inv s'.
  Proof.
    intros Hinv (((Hc1 & Hc2) & HdD & HDw) & Hn & Hc & Hf & Hw & Hd & Hpr & Hpcm & Hpcs & Htk).
    split; rewrite ?Hn, ?Hc, ?Hf, ?Hw, ?Hd.
    - done.
    - done.
    - (* what was below the kept commit value was durable, and stays *)
      intros i Hi. apply HdD, Hinv. lia.
    - intros t. rewrite Hpcm. lia.
    - intros t. by rewrite Hpcs.
    - intros t. by rewrite Hpcs.
    - intros t. by rewrite Hpcs.
    - intros t. by rewrite Hpcs.
    - done.
    - intros t j ?. by destruct (Hpr t j).
  Qed.

  Lemma inv_next s s' : no_record_fence = false → inv s → Next s s' → inv s'.
  Proof.
    intros Hfence Hinv
      [(t & [(i & _ & [Ha | [Ha | Ha]]) | [Ha | [Ha | [Ha | (n & _ & Ha)]]]]) | (c & D & _ & Ha)].
    - by eapply reserve_inv.
    - by eapply write_record_inv.
    - by eapply flush_record_inv.
    - by eapply fence_inv.
    - by eapply flush_commit_inv.
    - by eapply sync_inv.
    - by eapply commit_inv.
    - by eapply crash_inv.
  Qed.

  Lemma inv_reachable s : no_record_fence = false → reachable s → inv s.
  Proof.
    intros Hfence. induction 1 as [s Hinit | s s' _ IH Hnext].
    - by apply inv_init.
    - by apply (inv_next s).
  Qed.

  (** [CrashInvariant] of [specs/tutorial/CommitLog.tla], in every
      reachable state. *)
  Theorem crash_invariant_reachable s :
    no_record_fence = false → reachable s → CrashInvariant s.
  Proof. intros Hfence Hr. by apply inv_crash_invariant, inv_reachable. Qed.

  Theorem commit_order_reachable s : no_record_fence = false → reachable s → CommitOrder s.
  Proof. intros Hfence Hr. by apply inv_commit_order, inv_reachable. Qed.

  (** After a crash, the recovered log's records are intact: every record
      below the persisted commit value was written before the crash. *)
  Corollary crash_keeps_committed_records s c D :
    no_record_fence = false → reachable s → CrashAllowed c D s → ∀ i, i < c → D i.
  Proof.
    intros Hfence Hr (Hc & HdD & _) i Hi. apply HdD.
    by apply (crash_invariant_reachable s Hfence Hr c Hc).
  Qed.

  (** ** The mutant: without the record fence, the invariant breaks *)
  Section mutant.
    Context (t0 : T).

    Local Definition mut_s0 : state :=
      State 0 0 0 (λ _, False) (λ _, False) (λ _ _, False) (λ _, 0) (λ _, Idle) (λ _, 0).
    Local Definition mut_s1 : state :=
      State 1 0 0 (written mut_s0) (durable mut_s0) (pend_rec mut_s0) (pend_commit mut_s0)
        (upd (pc mut_s0) t0 Write) (upd (tk mut_s0) t0 0).
    Local Definition mut_s2 : state :=
      State 1 0 0 (λ j, written mut_s1 j ∨ j = 0) (durable mut_s1) (pend_rec mut_s1) (pend_commit mut_s1)
        (upd (pc mut_s1) t0 Flush) (tk mut_s1).
    Local Definition mut_s3 : state :=
      State 1 0 0 (written mut_s2) (durable mut_s2) (upd (pend_rec mut_s2) t0 (λ j, pend_rec mut_s2 t0 j ∨ j = 0))
        (pend_commit mut_s2) (upd (pc mut_s2) t0 (if no_record_fence then AtCommit else AtFence)) (tk mut_s2).
    Local Definition mut_s4 : state :=
      State 1 1 0 (written mut_s3) (durable mut_s3) (pend_rec mut_s3) (pend_commit mut_s3)
        (upd (pc mut_s3) t0 FlushC) (tk mut_s3).

    Local Ltac unfold_mut := unfold mut_s4, mut_s3, mut_s2, mut_s1, mut_s0; cbn.

    (** Reserve, WriteRecord, FlushRecord (no fence), Commit: the commit word
        may persist while record 0 may not. *)
    Theorem no_record_fence_violates :
      no_record_fence = true → 0 < NRec → ∃ s, reachable s ∧ ¬ CrashInvariant s.
    Proof.
      intros Hmut Hcap. exists mut_s4. split.
      - assert (reachable mut_s0) as R0.
        { apply reachable_init. repeat split; unfold_mut; intros; tauto. }
        assert (reachable mut_s1) as R1.
        { apply (reachable_next mut_s0); [done |]. left. exists t0. left. exists 0.
          split; [done |]. left. repeat split; unfold_mut; by rewrite ?upd_eq. }
        assert (reachable mut_s2) as R2.
        { apply (reachable_next mut_s1); [done |]. left. exists t0. left. exists 0.
          split; [done |]. right; left. repeat split; unfold_mut; by rewrite ?upd_eq. }
        assert (reachable mut_s3) as R3.
        { apply (reachable_next mut_s2); [done |]. left. exists t0. left. exists 0.
          split; [done |]. right; right. repeat split; unfold_mut; by rewrite ?upd_eq. }
        apply (reachable_next mut_s3); [done |]. left. exists t0. right; right; right; right.
        exists 1. split; [lia |]. repeat split; unfold_mut; by rewrite ?upd_eq, ?Hmut.
      - intros Hci. pose proof (Hci 1 ltac:(unfold_mut; lia) 0 ltac:(lia)) as Hd.
        revert Hd. unfold_mut. done.
    Qed.
  End mutant.
End commit_log.

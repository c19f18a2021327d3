(** * The strong try reader-writer lock of CX and Redo-PTM, in Iris

    Justifies the lock that protects each [Combined] instance in CX-PTM and
    Redo-PTM (seed paper §4 "strong try reader-writer lock [11]", Algorithm 1
    L4 [rwLock], Algorithm 2 L8/L12 [sharedTryLock]/[sharedUnlock],
    Algorithm 3 L18 [exclusiveTryLock], L29 [downgrade], L31
    [downgradeUnlock], L41 [exclusiveUnlock]); the code is the published
    [StrongTryRIRWLock] of CX (Correia and Ramalhete, "Strong trylocks for
    reader-writer locks", PPoPP'18).

    [impl/perdure-ptm/src/rwlock.rs] implements a variant, which this file
    does not cover: its [exclusive_try_lock] CASes the word it loaded to
    HLOCK of the next sequence also over another writer's HLOCK, and fails
    when that CAS fails, where the published code takes an HLOCK over after
    re-reading it and ignores the outcome of its own NOLOCK→HLOCK CAS; and
    it adds the fences and read-modify-write stores C11 needs.  That variant
    is checked by loom, and transcribed and verified (under SC) in
    [StrongTryRWLockRust.v], which reuses this file's definitions.

    The code, in [heap_lang].  The lock is a triple [(w, ri, N)]:
    - [w], the writer-state word.  The C++ packs a 62-bit sequence and a
      2-bit state; here [w = 4·seq + st] with [st] HLOCK = 0 (a writer is
      trying), WLOCK = 1 (a writer holds it), RLOCK = 2 (the writer has
      downgraded or is unlocking: readers only), NOLOCK = 3.  The C++
      numbers the states NOLOCK 0, HLOCK 1, RLOCK 2, WLOCK 3; the order
      chosen here makes every transition of the published code increase the
      word (NOLOCK→HLOCK starts the next sequence: [4s+3 → 4s+4]; a
      reader's HLOCK→NOLOCK is [4s → 4s+3]), which is the fact the proof
      rests on ([word_step]).  Integers are unbounded (no wrap-around of
      the sequence).
    - [ri], the read indicator [RIStaticPerThread]: one cell per thread
      [tid < N], NOT_READING 0, READING 1, READING+1 2 (a writer's
      [abortRollback] marked the arrival as still valid).
    [shared_try_lock], [shared_unlock], [exclusive_try_lock],
    [exclusive_unlock], [downgrade] and [set_read_unlock] (the seed's
    [downgradeUnlock]) follow the C++ line by line; [ri_is_empty] and
    [ri_abort_rollback] are its two loops over the read indicator.

    The specification, for a fractional resource [R] that the lock protects
    (a writer gets all of it, a reader a fixed share [rq N] of it):
    - [new_lock_spec]: [R 1] goes into the lock; the caller gets the lock and
      one [slot γ i] token per thread [i < N] (the right to use cell [i] of
      the read indicator);
    - [exclusive_try_lock_spec]: on [true], [writer_locked γ ∗ R 1];
    - [exclusive_unlock_spec]: gives [R 1] back;
    - [downgrade_spec]: [writer_locked γ ∗ R 1] becomes
      [downgraded γ ∗ R (1/2)]: readers may enter again (their shares are
      back in the lock), the downgraded writer keeps read access;
    - [set_read_unlock_spec] and [exclusive_unlock_downgraded_spec]: a
      downgraded writer releases the lock (Algorithm 3 L31 on success, L41
      after a failed CAS);
    - [shared_try_lock_spec]: with [slot γ i], on [true],
      [reader_locked γ i ∗ R (rq N)];
    - [shared_unlock_spec]: gives the share back and returns the slot.
    So a writer's [R 1] excludes every reader and every other writer, and
    readers share [R (1/2)] among themselves and a downgraded writer.
    [writer_locked γ] and [downgraded γ] are resources, not thread
    identities: in Redo-PTM the next winner of [curComb] releases the
    previous one's downgraded lock (Algorithm 3 L31), which this allows once
    the token is handed over (e.g. through an invariant on [curComb]).

    Strongness.  The point of this lock ("strong try") is that its try
    operations never fail spuriously; CX's and Redo-PTM's wait-freedom with
    N+1 (2N) replicas rests on it.  This is stated with a log of the lock's
    abstract states (its word and whether any read-indicator cell is
    non-empty): a client takes a snapshot [log_lb γ L0] ([snapshot]) before
    calling, and
    - [exclusive_try_lock] fails only with [busy_since γ L0]: at the
      snapshot or later, another writer held the lock (WLOCK or RLOCK), or a
      reader was inside the lock or inside [shared_try_lock] (its cell was
      non-empty);
    - [shared_try_lock] fails only with [excl_since γ L0]: at the snapshot
      or later, a writer held the lock exclusively (WLOCK).
    A writer may fail because of a reader that is itself about to fail
    (its arrival is visible before it decides); that reader then fails only
    because a writer held the lock — the published lock's notion of
    strongness, stated here for each side.

    Not covered: progress (every operation is a bounded number of steps, a
    fact of the code's shape, not proved here: the WPs are partial
    correctness); the C++ memory orders (heap_lang is sequentially
    consistent; the C++ uses seq_cst except relaxed loads of the word by
    its owner, which read its own last store); the cache-line padding; the
    blocking [sharedLock]/[exclusiveLock] loops and [setReadLock], which
    CX and Redo-PTM do not use.  A Redo-PTM updater that fails its CAS
    applies its undo log while only downgraded (Algorithm 3 L38); that
    write is outside this specification (readers validate [curComb] after
    locking, Algorithm 2 L10, and discard what they read). *)
From iris.algebra Require Import auth gset.
From iris.algebra.lib Require Import mono_list.
From iris.bi.lib Require Import fractional.
From iris.base_logic.lib Require Import invariants ghost_var ghost_map mono_nat.
From iris.heap_lang Require Import proofmode notation.
From iris.prelude Require Import options.

(** ** The code *)

(** Writer states, in the low two bits of the word. *)
Notation HLOCK := 0%Z (only parsing).
Notation WLOCK := 1%Z (only parsing).
Notation RLOCK := 2%Z (only parsing).
Notation NOLOCK := 3%Z (only parsing).

Definition new_lock : val :=
  λ: "n",
    let: "ri" := AllocN "n" #0 in
    let: "w" := ref #NOLOCK in
    ("w", "ri", "n").

(** [RIStaticPerThread::isEmpty]. *)
Definition ri_is_empty : val :=
  rec: "loop" "ri" "n" "i" :=
    if: "i" < "n" then
      if: !("ri" +ₗ "i") = #0 then "loop" "ri" "n" ("i" + #1) else #false
    else #true.

(** [RIStaticPerThread::abortRollback]: READING becomes READING+1. *)
Definition ri_abort_rollback : val :=
  rec: "loop" "ri" "n" "i" :=
    if: "i" < "n" then
      (if: !("ri" +ₗ "i") = #1 then CAS ("ri" +ₗ "i") #1 #2 else #false);;
      "loop" "ri" "n" ("i" + #1)
    else #().

(** [sharedTryLock(tid)]: arrive, then look at the word; an HLOCK (a writer
    still checking for readers) is beaten by a CAS to NOLOCK; a WLOCK
    makes the reader roll its arrival back, unless a writer's
    [abortRollback] marked it (READING+1), in which case the arrival
    stands. *)
Definition shared_try_lock : val :=
  λ: "lk" "tid",
    let: "w" := Fst (Fst "lk") in
    let: "ri" := Snd (Fst "lk") in
    if: ((!"w") `rem` #4) = #WLOCK then #false else
    ("ri" +ₗ "tid") <- #1;;
    let: "ws" := !"w" in
    if: (("ws" `rem` #4) = #HLOCK) && CAS "w" "ws" ("ws" + #3) then #true else
    let: "ws" := if: ("ws" `rem` #4) = #HLOCK then !"w" else "ws" in
    if: ("ws" `rem` #4) = #WLOCK then ~ (FAA ("ri" +ₗ "tid") #(-1) = #1)
    else #true.

(** [sharedUnlock(tid)]: depart. *)
Definition shared_unlock : val :=
  λ: "lk" "tid", (Snd (Fst "lk") +ₗ "tid") <- #0.

(** [exclusiveTryLock()]. *)
Definition exclusive_try_lock : val :=
  λ: "lk",
    let: "w" := Fst (Fst "lk") in
    let: "ri" := Snd (Fst "lk") in
    let: "n" := Snd "lk" in
    let: "ws" := !"w" in
    let: "st" := "ws" `rem` #4 in
    if: ("st" = #WLOCK) || ("st" = #RLOCK) then #false else
    if: ~ (ri_is_empty "ri" "n" #0) then #false else
    if: "st" = #HLOCK then
      (if: "ws" = !"w" then CAS "w" "ws" ("ws" + #1) else #false)
    else
      let: "next" := "ws" + #1 in
      CAS "w" "ws" "next";;
      if: ~ (ri_is_empty "ri" "n" #0) then #false else
      if: (!"w") = "next" then CAS "w" "next" ("next" + #1) else #false.

(** [exclusiveUnlock()]: RLOCK, roll the readers' arrivals forward,
    NOLOCK.  Also the unlock of a downgraded writer (Algorithm 3 L41). *)
Definition exclusive_unlock : val :=
  λ: "lk",
    let: "w" := Fst (Fst "lk") in
    let: "ri" := Snd (Fst "lk") in
    let: "n" := Snd "lk" in
    let: "ws" := !"w" in
    let: "base" := "ws" - ("ws" `rem` #4) in
    "w" <- "base" + #RLOCK;;
    ri_abort_rollback "ri" "n" #0;;
    "w" <- "base" + #NOLOCK.

(** [downgrade()]. *)
Definition downgrade : val :=
  λ: "lk",
    let: "w" := Fst (Fst "lk") in
    let: "ri" := Snd (Fst "lk") in
    let: "n" := Snd "lk" in
    let: "ws" := !"w" in
    "w" <- "ws" - ("ws" `rem` #4) + #RLOCK;;
    ri_abort_rollback "ri" "n" #0.

(** [setReadUnlock()], the seed's [downgradeUnlock]. *)
Definition set_read_unlock : val :=
  λ: "lk",
    let: "w" := Fst (Fst "lk") in
    let: "ws" := !"w" in
    "w" <- "ws" - ("ws" `rem` #4) + #NOLOCK.

(** ** The abstract states *)

(** What a reader is doing with its cell of the read indicator. *)
Inductive phase :=
  | Idle                (* cell NOT_READING *)
  | Arrived             (* arrived, has not looked at the word yet *)
  | CasP (s : nat)      (* saw HLOCK of sequence [s], CASes it to NOLOCK *)
  | Rolling             (* saw WLOCK, rolls its arrival back *)
  | Holding.            (* holds the lock in shared mode *)

Global Instance phase_eq_dec : EqDecision phase.
Proof. solve_decision. Defined.

Definition slot_ok (p : phase) (v : Z) : Prop :=
  match p with Idle => v = 0%Z | _ => v = 1%Z ∨ v = 2%Z end.

(** A log entry: the word, and whether some cell is non-empty. *)
Notation entry := (nat * bool)%type.

Definition present (vs : list Z) : bool := bool_decide (Exists (λ v, v ≠ 0%Z) vs).

(** Another thread is in the lock: a writer holds it (WLOCK or RLOCK) or a
    reader is in or entering it. *)
Definition busy (e : entry) : Prop := e.1 mod 4 = 1 ∨ e.1 mod 4 = 2 ∨ e.2 = true.

(** The transitions of the word: unchanged, one state on (HLOCK→WLOCK,
    WLOCK→RLOCK, RLOCK→NOLOCK, NOLOCK→HLOCK of the next sequence), or a
    reader's HLOCK→NOLOCK. *)
Definition word_step (a b : nat) : Prop := b = a ∨ b = S a ∨ (a mod 4 = 0 ∧ b = a + 3).

(** A log whose consecutive entries are related by [P] (this file's
    [log_ok]; [StrongTryRWLockRust.v]'s [log_ok_rs] with the Rust lock's
    steps). *)
Definition log_rel (P : entry → entry → Prop) (L : list entry) : Prop :=
  ∀ k a b, L !! k = Some a → L !! S k = Some b → P a b.

(** Leaving HLOCK is an acquisition: by a writer (WLOCK) or a reader that
    beat the writers (its cell is non-empty). *)
Definition log_ok (L : list entry) : Prop :=
  log_rel (λ a b, word_step a.1 b.1 ∧ (a.1 mod 4 = 0 → b.1 ≠ a.1 → busy b)) L.

Definition clean_phase (s : nat) (o : option phase) : Prop :=
  o = Some Idle ∨ o = Some Arrived ∨ o = Some (CasP s).

(** The pure part of the lock invariant, for word [n], cells [vs], phases
    [ph], clean witnesses [X] and log [L].  [(s, i) ∈ X]: a writer of
    sequence [s] found cell [i] empty while the word was HLOCK of [s]; as
    long as it still is, that reader has not acquired the lock. *)
Record inv_pure (N n : nat) (vs : list Z) (ph : gmap nat phase)
    (X : gset (nat * nat)) (L : list entry) : Prop := {
  ip_len : length vs = N;
  ip_slots : ∀ i, i < N → ∃ p v, ph !! i = Some p ∧ vs !! i = Some v ∧ slot_ok p v;
  ip_dom : ∀ i p, ph !! i = Some p → i < N;
  ip_wlock : n mod 4 = 1 → ∀ i, ph !! i ≠ Some Holding ∧ vs !! i ≠ Some 2%Z;
  ip_clean : ∀ s i, (s, i) ∈ X →
    4 * s ≤ n ∧ (n = 4 * s → clean_phase s (ph !! i) ∧ vs !! i ≠ Some 2%Z);
  ip_last : last L = Some (n, present vs);
  ip_log : log_ok L;
}.

(** ** Pure lemmas *)

Lemma mod4_cases n : n mod 4 = 0 ∨ n mod 4 = 1 ∨ n mod 4 = 2 ∨ n mod 4 = 3.
Proof. pose proof (Nat.mod_upper_bound n 4). lia. Qed.

Lemma Z_rem4 (n : nat) : (Z.of_nat n `rem` 4)%Z = Z.of_nat (n mod 4).
Proof. rewrite Nat2Z.inj_mod. apply Z.rem_mod_nonneg; lia. Qed.

Lemma val_int_eq (a b : Z) : #a = #b ↔ a = b.
Proof. split; [by intros [=] | by intros ->]. Qed.

Lemma mod4_add k r : (4 * k + r) mod 4 = r mod 4.
Proof. rewrite Nat.add_comm Nat.mul_comm Nat.mod_add; lia. Qed.

Lemma mod4_mul k : (4 * k) mod 4 = 0.
Proof. rewrite Nat.mul_comm Nat.mod_mul; lia. Qed.

Lemma mod4_S n k : n mod 4 = k → (S n) mod 4 = (S k) mod 4.
Proof.
  intros <-. rewrite {1}(Nat.div_mod n 4); [| lia].
  rewrite -Nat.add_succ_r mod4_add. done.
Qed.

Lemma mod4_eq n k : n mod 4 = k → k < 4 → n = 4 * (n `div` 4) + k.
Proof. intros Hk _. rewrite <- Hk. apply Nat.div_mod. lia. Qed.

Lemma present_insert_nonzero vs i v :
  i < length vs → v ≠ 0%Z → present (<[i:=v]> vs) = true.
Proof.
  intros Hi Hv. apply bool_decide_eq_true. apply Exists_exists.
  exists v. split; [| done]. apply elem_of_list_lookup. exists i.
  by apply list_lookup_insert.
Qed.

Lemma present_insert_same vs i v v' :
  vs !! i = Some v → v ≠ 0%Z → v' ≠ 0%Z → present (<[i:=v']> vs) = present vs.
Proof.
  intros Hi Hv Hv'. assert (i < length vs) by (apply lookup_lt_is_Some; by eexists).
  rewrite present_insert_nonzero //. symmetry. apply bool_decide_eq_true, Exists_exists.
  exists v. split; [| done]. apply elem_of_list_lookup. eauto.
Qed.

Lemma log_rel_single (P : entry → entry → Prop) e : log_rel P [e].
Proof. intros [|k] a b; simpl; [done |]. by rewrite lookup_nil. Qed.

Lemma log_rel_snoc (P : entry → entry → Prop) L e e' :
  log_rel P L → last L = Some e → P e e' → log_rel P (L ++ [e']).
Proof.
  intros Hok Hlast Hstep k a b Ha Hb.
  assert (L ≠ []) as Hne by (intros ->; done).
  rewrite last_lookup in Hlast.
  destruct (decide (S k < length L)) as [Hlt | Hge].
  - rewrite lookup_app_l in Ha; [| lia]. rewrite lookup_app_l in Hb; [| done]. by apply (Hok k).
  - apply lookup_lt_Some in Hb as Hb'. rewrite app_length /= in Hb'.
    assert (S k = length L) as Hk by lia.
    rewrite lookup_app_l in Ha; [| lia]. rewrite lookup_app_r in Hb; [| lia].
    rewrite Hk Nat.sub_diag /= in Hb. injection Hb as <-.
    assert (k = pred (length L)) as -> by lia. rewrite Ha in Hlast.
    injection Hlast as <-. done.
Qed.

Lemma log_rel_words_mono (P : entry → entry → Prop) L :
  (∀ a b, P a b → a.1 ≤ b.1) → log_rel P L →
  ∀ k j a b, k ≤ j → L !! k = Some a → L !! j = Some b → a.1 ≤ b.1.
Proof.
  intros HP Hok k j a b Hkj. revert b. induction Hkj as [| j Hkj IH]; intros b Ha Hb.
  - rewrite Ha in Hb. by injection Hb as ->.
  - destruct (lookup_lt_is_Some_2 L j) as [c Hc].
    { apply lookup_lt_Some in Hb. lia. }
    specialize (IH c Ha Hc). specialize (HP c b (Hok j c b Hc Hb)). lia.
Qed.

(** A snapshot [L0] of the log and the log now [L]: their last entries, as
    entries of [L], in order. *)
Lemma log_snapshot (L0 L : list entry) e0 e :
  L0 `prefix_of` L → last L0 = Some e0 → last L = Some e →
  L !! pred (length L0) = Some e0 ∧ L !! pred (length L) = Some e ∧
  pred (length L0) ≤ pred (length L).
Proof.
  intros Hpre H0 H1.
  assert (L0 ≠ []) by (intros ->; done). assert (L ≠ []) by (intros ->; done).
  rewrite last_lookup in H0. rewrite last_lookup in H1.
  split; [by eapply prefix_lookup | split; [done |]].
  apply prefix_length in Hpre. lia.
Qed.

Lemma log_ok_single e : log_ok [e].
Proof. apply log_rel_single. Qed.

Lemma log_ok_snoc L e e' :
  log_ok L → last L = Some e → word_step e.1 e'.1 → (e.1 mod 4 = 0 → e'.1 ≠ e.1 → busy e') →
  log_ok (L ++ [e']).
Proof. intros Hok Hlast Hs Hb. eapply log_rel_snoc; [done.. | split; done]. Qed.

Lemma log_words_mono L : log_ok L → ∀ k j a b, k ≤ j → L !! k = Some a → L !! j = Some b → a.1 ≤ b.1.
Proof. apply log_rel_words_mono. intros a b [Hs _]. unfold word_step in Hs. lia. Qed.

(** Between an index where the word is at most [4s] and a later one where it
    is beyond, the word left an HLOCK: there an acquisition took place. *)
Lemma log_cross L s j0 j1 a0 a1 :
  log_ok L → j0 ≤ j1 → L !! j0 = Some a0 → L !! j1 = Some a1 →
  a0.1 ≤ 4 * s → 4 * s < a1.1 →
  ∃ k e, j0 < k ∧ k ≤ j1 ∧ L !! k = Some e ∧ busy e.
Proof.
  intros Hok Hj. revert a1. induction Hj as [| j1 Hj IH]; intros a1 H0 H1 Ha0 Ha1.
  - rewrite H0 in H1. injection H1 as ->. lia.
  - destruct (lookup_lt_is_Some_2 L j1) as [c Hc].
    { apply lookup_lt_Some in H1. lia. }
    destruct (decide (4 * s < c.1)) as [Hc' | Hc'].
    + destruct (IH c H0 Hc Ha0 Hc') as (k & e & ? & ? & ? & ?). exists k, e. eauto with lia.
    + exists (S j1), a1. split; [lia |]. split; [lia |]. split; [done |].
      destruct (Hok j1 c a1 Hc H1) as [Hs Hb]. unfold word_step in Hs.
      destruct Hs as [Hs | [Hs | [Hm Hs]]]; [lia | |].
      * assert (c.1 = 4 * s) as Heq by lia. apply Hb; [| lia].
        rewrite Heq Nat.mul_comm Nat.mod_mul; lia.
      * apply Hb; [done | lia].
Qed.

(** The writer's argument: the word was at most [4s] at the snapshot [L0]
    and is beyond [4s] now ([L]). *)
Lemma log_busy_after L0 L s e0 e :
  L0 `prefix_of` L → log_ok L → last L0 = Some e0 → last L = Some e →
  e0.1 ≤ 4 * s → 4 * s < e.1 →
  ∃ k b, length L0 ≤ S k ∧ L !! k = Some b ∧ busy b.
Proof.
  intros Hpre Hok H0 H1 Hs0 Hs1.
  destruct (log_snapshot L0 L e0 e Hpre H0 H1) as (H0' & H1' & Hle).
  destruct (log_cross L s _ _ e0 e Hok Hle H0' H1' Hs0 Hs1) as (k & b & ? & ? & ? & ?).
  exists k, b. split; [lia | done].
Qed.

(** *** The transitions preserve [inv_pure] *)
Section transitions.
  Context (N n : nat) (vs : list Z) (ph : gmap nat phase) (X : gset (nat * nat)) (L : list entry).
  Context (Hip : inv_pure N n vs ph X L).
  Local Set Default Proof Using "All".

  Lemma ip_lookup i p : ph !! i = Some p → ∃ v, vs !! i = Some v ∧ slot_ok p v.
  Proof.
    intros Hi. destruct (ip_slots _ _ _ _ _ _ Hip i) as (p' & v & Hp & Hv & Hok).
    { by eapply ip_dom. }
    rewrite Hi in Hp. injection Hp as <-. eauto.
  Qed.

  Lemma ip_vs_lookup i : i < N → ∃ v, vs !! i = Some v.
  Proof. intros Hi. destruct (ip_slots _ _ _ _ _ _ Hip i Hi) as (? & v & _ & ? & _). eauto. Qed.

  Lemma ip_clean_at s i p : ph !! i = Some p → (s, i) ∈ X → n = 4 * s → clean_phase s (Some p).
  Proof. intros Hp Hx Hn. destruct (ip_clean _ _ _ _ _ _ Hip s i Hx) as [_ Hc]. rewrite -Hp. by apply Hc. Qed.

  (** A phase change of reader [i] that leaves its cell alone. *)
  Lemma ip_set_phase i p p' :
    ph !! i = Some p → p ≠ Idle → p' ≠ Idle → (n mod 4 = 1 → p' ≠ Holding) →
    (∀ s, (s, i) ∈ X → n = 4 * s → clean_phase s (Some p')) →
    inv_pure N n vs (<[i:=p']> ph) X L.
  Proof.
    intros Hp Hne Hne' Hw Hc. destruct Hip as [Hlen Hsl Hdom Hwl Hcl Hlast Hlog].
    destruct (ip_lookup i p Hp) as (v & Hv & Hok).
    split; try done.
    - intros j Hj. destruct (decide (j = i)) as [-> | Hji].
      + exists p', v. rewrite lookup_insert. split; [done |]. split; [done |].
        destruct p; simpl in Hok; [done | ..]; destruct p'; simpl; done.
      + rewrite lookup_insert_ne //. by apply Hsl.
    - intros j q. destruct (decide (j = i)) as [-> | Hji].
      + intros _. by eapply Hdom.
      + rewrite lookup_insert_ne //. apply Hdom.
    - intros Hn1 j. destruct (decide (j = i)) as [-> | Hji].
      + rewrite lookup_insert. split; [intros [=]; by apply Hw |]. by apply Hwl.
      + rewrite lookup_insert_ne //. by apply Hwl.
    - intros s j Hx. destruct (Hcl s j Hx) as [Hle Hcj]. split; [done |].
      intros Hn. destruct (decide (j = i)) as [-> | Hji].
      + rewrite lookup_insert. split; [by apply Hc |]. by apply Hcj.
      + rewrite lookup_insert_ne //. by apply Hcj.
  Qed.

  (** A change of reader [i]'s phase and cell, the word unchanged. *)
  Lemma ip_set_slot i p' v' L' :
    i < N → slot_ok p' v' →
    (n mod 4 = 1 → p' ≠ Holding ∧ v' ≠ 2%Z) →
    (∀ s, (s, i) ∈ X → n = 4 * s → clean_phase s (Some p') ∧ v' ≠ 2%Z) →
    L' = L ∨ L' = L ++ [(n, present (<[i:=v']> vs))] →
    present (<[i:=v']> vs) = present vs ∨ L' ≠ L →
    inv_pure N n (<[i:=v']> vs) (<[i:=p']> ph) X L'.
  Proof.
    intros Hi Hok' Hw Hc HL' Hpres. destruct Hip as [Hlen Hsl Hdom Hwl Hcl Hlast Hlog].
    split.
    - by rewrite insert_length.
    - intros j Hj. destruct (decide (j = i)) as [-> | Hji].
      + exists p', v'. rewrite lookup_insert list_lookup_insert //. lia.
      + rewrite lookup_insert_ne // list_lookup_insert_ne //. by apply Hsl.
    - intros j q. destruct (decide (j = i)) as [-> | Hji]; [done |].
      rewrite lookup_insert_ne //. apply Hdom.
    - intros Hn1 j. destruct (decide (j = i)) as [-> | Hji].
      + rewrite lookup_insert list_lookup_insert; [| lia].
        destruct (Hw Hn1). split; congruence.
      + rewrite lookup_insert_ne // list_lookup_insert_ne //. by apply Hwl.
    - intros s j Hx. destruct (Hcl s j Hx) as [Hle Hcj]. split; [done |].
      intros Hn. destruct (decide (j = i)) as [-> | Hji].
      + rewrite lookup_insert list_lookup_insert; [| lia].
        destruct (Hc s Hx Hn). split; congruence.
      + rewrite lookup_insert_ne // list_lookup_insert_ne //. by apply Hcj.
    - destruct HL' as [-> | ->].
      + destruct Hpres as [Hpres | Hne]; [by rewrite Hpres | done].
      + apply last_snoc.
    - destruct HL' as [-> | ->]; [done |].
      apply (log_ok_snoc L (n, present vs)); [done | done | by left |].
      simpl. done.
  Qed.

  (** Reader [i] arrives: its cell becomes READING. *)
  Lemma ip_arrive i :
    ph !! i = Some Idle →
    inv_pure N n (<[i:=1%Z]> vs) (<[i:=Arrived]> ph) X (L ++ [(n, present (<[i:=1%Z]> vs))]).
  Proof.
    intros Hp. assert (i < N) by (by eapply ip_dom).
    apply ip_set_slot; [done | by left | done | | by right | right].
    - intros s Hx Hn. split; [| done]. unfold clean_phase. by right; left.
    - clear. intros Heq. apply (f_equal length) in Heq. rewrite app_length /= in Heq. lia.
  Qed.

  Lemma ip_leave i p :
    ph !! i = Some p → (p = Rolling ∧ vs !! i = Some 1%Z) ∨ p = Holding →
    inv_pure N n (<[i:=0%Z]> vs) (<[i:=Idle]> ph) X (L ++ [(n, present (<[i:=0%Z]> vs))]).
  Proof.
    intros Hp _. assert (i < N) by (by eapply ip_dom).
    apply ip_set_slot; [done | done | done | | by right | right].
    - intros s Hx Hn. split; [| done]. unfold clean_phase. by left.
    - clear. intros Heq. apply (f_equal length) in Heq. rewrite app_length /= in Heq. lia.
  Qed.

  (** A marked arrival (READING+1) rolls back to READING and stands. *)
  Lemma ip_rollback_hold i :
    ph !! i = Some Rolling → vs !! i = Some 2%Z →
    n mod 4 ≠ 1 ∧ inv_pure N n (<[i:=1%Z]> vs) (<[i:=Holding]> ph) X L.
  Proof.
    intros Hp Hv. assert (i < N) by (by eapply ip_dom).
    assert (n mod 4 ≠ 1) as Hn1.
    { intros Hn. by destruct (ip_wlock _ _ _ _ _ _ Hip Hn i) as [_ ?]. }
    split; [done |].
    apply ip_set_slot; [done | by left | done | | by left | left].
    - intros s Hx Hn. destruct (ip_clean_at s i Rolling Hp Hx Hn) as [? | [? | ?]]; done.
    - by apply (present_insert_same vs i 2%Z).
  Qed.

  (** The unlocking writer's [abortRollback] marks an arrival. *)
  Lemma ip_mark i :
    n mod 4 = 2 → vs !! i = Some 1%Z → inv_pure N n (<[i:=2%Z]> vs) ph X L.
  Proof.
    intros Hn Hv. assert (i < N) as Hi.
    { rewrite -(ip_len _ _ _ _ _ _ Hip). apply lookup_lt_is_Some. by eexists. }
    destruct (ip_slots _ _ _ _ _ _ Hip i Hi) as (p & v & Hp & Hv' & Hok).
    rewrite Hv in Hv'. injection Hv' as <-.
    rewrite -(insert_id ph i p) //.
    apply ip_set_slot; [done | | | | by left | left].
    - destruct p; simpl in *; try lia; by right.
    - intros Hn1. lia.
    - intros s _ Hs. rewrite Hs mod4_mul in Hn; lia.
    - by apply (present_insert_same vs i 1%Z).
  Qed.

  (** A writer of sequence [s] finds cell [i] empty while the word is HLOCK
      of [s]. *)
  Lemma ip_clean_add s i :
    n = 4 * s → vs !! i = Some 0%Z → inv_pure N n vs ph (X ∪ {[(s, i)]}) L.
  Proof.
    intros Hn Hv. destruct Hip as [Hlen Hsl Hdom Hwl Hcl Hlast Hlog]. split; try done.
    intros s' j [Hx | Hx%elem_of_singleton]%elem_of_union; [by apply Hcl |].
    injection Hx as -> ->. split; [lia |]. intros Hs.
    assert (i < N) as Hi by (rewrite -Hlen; apply lookup_lt_is_Some; by eexists).
    destruct (Hsl i Hi) as (p & v & Hp & Hv' & Hok). rewrite Hv in Hv'. injection Hv' as <-.
    rewrite Hp. split; [| by rewrite Hv]. destruct p; simpl in Hok; try lia. unfold clean_phase. by left.
  Qed.

  (** A reader wins against an HLOCK writer: [4s → 4s+3]. *)
  Lemma ip_cas_win i s :
    ph !! i = Some (CasP s) → n = 4 * s →
    inv_pure N (4 * s + 3) vs (<[i:=Holding]> ph) X (L ++ [(4 * s + 3, present vs)]).
  Proof.
    intros Hp Hn. destruct (ip_lookup i _ Hp) as (v & Hv & Hok).
    assert (i < N) by (by eapply ip_dom).
    assert (present vs = true) as Hpres.
    { apply bool_decide_eq_true, Exists_exists. exists v. split; [by eapply elem_of_list_lookup_2 |].
      simpl in Hok. lia. }
    destruct Hip as [Hlen Hsl Hdom Hwl Hcl Hlast Hlog]. split; try done.
    - intros j Hj. destruct (decide (j = i)) as [-> | Hji].
      + exists Holding, v. rewrite lookup_insert. done.
      + rewrite lookup_insert_ne //. by apply Hsl.
    - intros j q. destruct (decide (j = i)) as [-> | Hji]; [done |].
      rewrite lookup_insert_ne //. apply Hdom.
    - intros Hn1. exfalso. rewrite mod4_add in Hn1. done.
    - intros s' j Hx. destruct (Hcl s' j Hx) as [Hle _]. split; [lia |]. intros Hs.
      exfalso. assert ((4 * s + 3) mod 4 = (4 * s') mod 4) as Hm by by rewrite Hs.
      rewrite mod4_add mod4_mul in Hm. done.
    - apply last_snoc.
    - apply (log_ok_snoc L (n, present vs)); [done | done | |].
      + unfold word_step. right; right. cbn [fst]. subst n. rewrite mod4_mul. lia.
      + intros _ _. unfold busy. cbn [snd]. by rewrite Hpres; right; right.
  Qed.

  (** A writer's transition of the word, other than acquiring it:
      NOLOCK→HLOCK, WLOCK→RLOCK, RLOCK→NOLOCK. *)
  Lemma ip_word_succ :
    n mod 4 ≠ 0 → inv_pure N (S n) vs ph X (L ++ [(S n, present vs)]).
  Proof.
    intros Hn0. pose proof (mod4_cases n) as Hc.
    assert ((S n) mod 4 ≠ 1) as Hs1.
    { pose proof (Nat.div_mod n 4 ltac:(lia)) as Hn.
      remember (n mod 4) as r. remember (n `div` 4) as q.
      assert (S n = 4 * q + S r) as -> by lia. rewrite mod4_add.
      destruct Hc as [-> | [-> | [-> | ->]]]; [done | ..]; compute; lia. }
    destruct Hip as [Hlen Hsl Hdom Hwl Hcl Hlast Hlog]. split; try done.
    - intros s j Hx. destruct (Hcl s j Hx) as [Hle Hcj]. split; [lia |]. intros Hs.
      exfalso. destruct (decide (n = 4 * s)) as [Heq | Hne]; [| lia].
      rewrite Heq mod4_mul in Hn0. done.
    - apply last_snoc.
    - apply (log_ok_snoc L (n, present vs)); [done | done | by right; left |].
      intros Hm. simpl in Hm. done.
  Qed.

  (** A writer of sequence [s] acquires: [4s → 4s+1], having found every
      cell empty during HLOCK of [s]. *)
  Lemma ip_acquire s :
    n = 4 * s → (∀ i, i < N → (s, i) ∈ X) →
    inv_pure N (4 * s + 1) vs ph X (L ++ [(4 * s + 1, present vs)]) ∧
    (∀ i, ph !! i ≠ Some Holding).
  Proof.
    intros Hn Hall.
    assert (∀ i, ph !! i ≠ Some Holding) as Hnh.
    { intros i Hi. assert (i < N) as HiN by (by eapply ip_dom).
      destruct (ip_clean_at s i Holding Hi (Hall i HiN) Hn) as [? | [? | ?]]; done. }
    split; [| done].
    destruct Hip as [Hlen Hsl Hdom Hwl Hcl Hlast Hlog]. split; try done.
    - intros _ i. split; [apply Hnh |].
      destruct (decide (i < N)) as [HiN | HiN].
      + by destruct (Hcl s i (Hall i HiN)) as [_ [_ ?]].
      + rewrite lookup_ge_None_2 //. lia.
    - intros s' j Hx. destruct (Hcl s' j Hx) as [Hle _]. split; [lia |]. intros Hs.
      exfalso. assert ((4 * s + 1) mod 4 = (4 * s') mod 4) as Hm by by rewrite Hs.
      rewrite mod4_add mod4_mul in Hm. done.
    - apply last_snoc.
    - apply (log_ok_snoc L (n, present vs)); [done | done | |].
      + unfold word_step. right; left. cbn [fst]. lia.
      + intros _ _. left. cbn [fst]. by rewrite mod4_add.
  Qed.
End transitions.

Lemma ip_init N :
  inv_pure N 3 (replicate N 0%Z) (map_seq 0 (replicate N Idle)) ∅ [(3, false)].
Proof.
  split.
  - apply replicate_length.
  - intros i Hi. exists Idle, 0%Z. rewrite lookup_map_seq_0 !lookup_replicate_2 //.
  - intros i p. rewrite lookup_map_seq_0. intros Hp. apply lookup_lt_Some in Hp.
    by rewrite replicate_length in Hp.
  - done.
  - intros s i Hx. by apply not_elem_of_empty in Hx.
  - simpl. f_equal. f_equal. symmetry. apply bool_decide_eq_false.
    intros (v & Hv%elem_of_replicate & Hne)%Exists_exists. lia.
  - apply log_ok_single.
Qed.

Lemma log_last_le L0 L e :
  L0 `prefix_of` L → log_ok L → last L = Some e → L0 ≠ [] → ∃ e0, last L0 = Some e0 ∧ e0.1 ≤ e.1.
Proof.
  intros Hpre Hok Hl Hne. destruct (last L0) as [e0 |] eqn:H0; [| by apply last_None in H0].
  exists e0. split; [done |]. rewrite last_lookup in H0. rewrite last_lookup in Hl.
  eapply (log_words_mono L Hok); [| by eapply prefix_lookup | done].
  apply prefix_length in Hpre. lia.
Qed.

(** ** Ghost state *)

Class rwlockG Σ := RwlockG {
  rwlock_mono_natG :> mono_natG Σ;
  rwlock_cleanG :> inG Σ (authR (gsetUR (nat * nat)));
  rwlock_phaseG :> ghost_mapG Σ nat phase;
  rwlock_writerG :> ghost_varG Σ (option nat);
  rwlock_logG :> inG Σ (mono_listR (leibnizO entry));
}.
Definition rwlockΣ : gFunctors :=
  #[mono_natΣ; GFunctor (authR (gsetUR (nat * nat))); ghost_mapΣ nat phase;
    ghost_varΣ (option nat); GFunctor (mono_listR (leibnizO entry))].
Global Instance subG_rwlockΣ {Σ} : subG rwlockΣ Σ → rwlockG Σ.
Proof. solve_inG. Qed.

(** The ghost names of one lock: the word ([mono_nat]: it only grows), the
    clean witnesses, the readers' phases, the writer's token, the log. *)
Record lock_names := LockNames {
  γ_word : gname; γ_clean : gname; γ_phase : gname; γ_writer : gname; γ_log : gname;
}.

Definition rwN : namespace := nroot .@ "perdure" .@ "strong_try_rwlock".

Definition log_auth (L : list entry) : mono_listR (leibnizO entry) :=
  @mono_list_auth (leibnizO entry) (DfracOwn 1) L.
Definition log_frag (L : list entry) : mono_listR (leibnizO entry) :=
  @mono_list_lb (leibnizO entry) L.

(** A reader's share of [R]: the readers together own [R (1/2)]. *)
Definition rq (N : nat) : Qp := (1/2) / pos_to_Qp (Pos.of_nat N).

Section proof.
  Context `{!heapGS Σ, !rwlockG Σ}.
  Context (R : Qp → iProp Σ) `{!Fractional R}.
  Implicit Types (γ : lock_names) (N n : nat) (L : list entry).
  Local Set Default Proof Using "All".

  Definition share_of N (ph : gmap nat phase) (i : nat) : iProp Σ :=
    if bool_decide (ph !! i = Some Holding) then True%I else R (rq N).

  (** The readers' shares that are in the lock: those of the readers not
      holding it. *)
  Definition shares N (ph : gmap nat phase) : iProp Σ :=
    [∗ list] i ∈ seq 0 N, share_of N ph i.

  (** Who owns what, by the state in the word: free (HLOCK or NOLOCK): the
      lock has the writer's half and the free readers' shares; WLOCK: the
      writer has everything; RLOCK: the writer keeps its half. *)
  Definition writer_part γ N n (ph : gmap nat phase) : iProp Σ :=
    (⌜n mod 4 = 0 ∨ n mod 4 = 3⌝ ∗ ghost_var γ.(γ_writer) 1 None ∗ R (1/2) ∗ shares N ph)
    ∨ (⌜n mod 4 = 1⌝ ∗ ghost_var γ.(γ_writer) (1/2) (Some n))
    ∨ (⌜n mod 4 = 2⌝ ∗ ghost_var γ.(γ_writer) (1/2) (Some n) ∗ shares N ph).

  Definition lock_inv γ (w ri : loc) N : iProp Σ :=
    ∃ n (vs : list Z) (ph : gmap nat phase) (X : gset (nat * nat)) L,
      w ↦ #n ∗ ri ↦∗ ((λ v : Z, #v) <$> vs) ∗
      mono_nat_auth_own γ.(γ_word) 1 n ∗ own γ.(γ_clean) (● X) ∗
      ghost_map_auth γ.(γ_phase) 1 ph ∗ own γ.(γ_log) (log_auth L) ∗
      ⌜inv_pure N n vs ph X L⌝ ∗ writer_part γ N n ph.

  Definition is_rwlock γ (lk : val) N : iProp Σ :=
    ∃ w ri : loc, ⌜lk = (#w, #ri, #N)%V ∧ 0 < N⌝ ∗ inv rwN (lock_inv γ w ri N).

  (** Thread [i]'s right to use its read-indicator cell; the same cell while
      holding the lock in shared mode. *)
  Definition slot γ (i : nat) : iProp Σ := i ↪[γ.(γ_phase)] Idle.
  Definition reader_locked γ (i : nat) : iProp Σ := i ↪[γ.(γ_phase)] Holding.
  Definition writer_locked γ : iProp Σ :=
    ∃ n, ⌜n mod 4 = 1⌝ ∗ ghost_var γ.(γ_writer) (1/2) (Some n).
  Definition downgraded γ : iProp Σ :=
    ∃ n, ⌜n mod 4 = 2⌝ ∗ ghost_var γ.(γ_writer) (1/2) (Some n).

  (** The log of the lock's states: a snapshot, and what a failed try
      guarantees about the states since a snapshot [L0]. *)
  Definition log_lb γ L : iProp Σ := own γ.(γ_log) (log_frag L).
  Definition busy_since γ L0 : iProp Σ :=
    ∃ L1 k e, log_lb γ L1 ∗ ⌜L0 `prefix_of` L1 ∧ length L0 ≤ S k ∧ L1 !! k = Some e ∧ busy e⌝.
  Definition excl_since γ L0 : iProp Σ :=
    ∃ L1 k e, log_lb γ L1 ∗
      ⌜L0 `prefix_of` L1 ∧ length L0 ≤ S k ∧ L1 !! k = Some e ∧ e.1 mod 4 = 1⌝.

  Global Instance is_rwlock_persistent γ lk N : Persistent (is_rwlock γ lk N).
  Proof. apply _. Qed.
  Global Instance log_lb_persistent γ L : Persistent (log_lb γ L).
  Proof. apply _. Qed.
  Global Instance busy_since_persistent γ L : Persistent (busy_since γ L).
  Proof. apply _. Qed.
  Global Instance excl_since_persistent γ L : Persistent (excl_since γ L).
  Proof. apply _. Qed.

  (** *** The log *)
  Lemma log_lb_get γ L : own γ.(γ_log) (log_auth L) -∗ log_lb γ L.
  Proof.
    iIntros "H". rewrite /log_lb /log_auth /log_frag.
    rewrite mono_list_auth_lb_op. iDestruct "H" as "[_ $]".
  Qed.

  Lemma log_prefix γ L L0 : own γ.(γ_log) (log_auth L) -∗ log_lb γ L0 -∗ ⌜L0 `prefix_of` L⌝.
  Proof.
    iIntros "H1 H2". iDestruct (own_valid_2 with "H1 H2") as %Hv.
    iPureIntro. rewrite /log_auth /log_frag in Hv.
    by apply (mono_list_both_valid_L (A:=leibnizO entry)) in Hv.
  Qed.

  Lemma log_append γ L e : own γ.(γ_log) (log_auth L) ==∗ own γ.(γ_log) (log_auth (L ++ [e])).
  Proof. iApply own_update. apply mono_list_update. by apply prefix_app_r. Qed.

  Lemma busy_since_weaken γ L0 L0' : L0 `prefix_of` L0' → busy_since γ L0' -∗ busy_since γ L0.
  Proof.
    iIntros (Hp) "(%L1 & %k & %e & H & %Hp' & %Hk & %He & %Hb)".
    iExists L1, k, e. iFrame. iPureIntro. apply prefix_length in Hp as Hlen.
    split; [by trans L0' |]. split; [lia | done].
  Qed.

  (** The current state is busy: witness at the last entry. *)
  Lemma busy_now γ L0 L e :
    L0 `prefix_of` L → last L = Some e → busy e → log_lb γ L -∗ busy_since γ L0.
  Proof.
    iIntros (Hp Hl Hb) "H". iExists L, (pred (length L)), e. iFrame. iPureIntro.
    rewrite last_lookup in Hl. apply prefix_length in Hp as Hlen.
    split; [done |]. split; [| done]. destruct L; [done |]. simpl in *. lia.
  Qed.

  (** *** Clean witnesses *)
  Lemma clean_add γ X x : own γ.(γ_clean) (● X) ==∗ own γ.(γ_clean) (● (X ∪ {[x]})) ∗ own γ.(γ_clean) (◯ {[x]}).
  Proof.
    iIntros "H". iMod (own_update with "H") as "[$ H]".
    { apply auth_update_alloc, (gset_local_update X ∅ (X ∪ {[x]})). set_solver. }
    rewrite -gset_op auth_frag_op. iDestruct "H" as "[_ $]". done.
  Qed.

  Lemma clean_elem γ X x : own γ.(γ_clean) (● X) -∗ own γ.(γ_clean) (◯ {[x]}) -∗ ⌜x ∈ X⌝.
  Proof.
    iIntros "H1 H2". iDestruct (own_valid_2 with "H1 H2") as %[Hv _]%auth_both_valid_discrete.
    iPureIntro. by apply gset_included, singleton_subseteq_l in Hv.
  Qed.

  (** *** Shares *)
  Lemma R_halves : R 1 ⊣⊢ R (1/2) ∗ R (1/2).
  Proof. by rewrite -{1}Qp.half_half fractional. Qed.

  Lemma rq_sum N a :
    0 < N → R (1/2) ⊣⊢ [∗ list] _ ∈ seq a N, R (rq N).
  Proof.
    intros HN. destruct N as [| k]; [lia |]. clear HN.
    assert (∀ q a, ([∗ list] _ ∈ seq a (S k), R q) ⊣⊢ R (q * pos_to_Qp (Pos.of_succ_nat k))%Qp)
      as Hgen.
    { clear a. induction k as [| k IH]; intros q a.
      - simpl. rewrite Qp.mul_1_r. iSplit; [iIntros "[$ _]" | iIntros "$"].
      - rewrite seq_S big_sepL_app IH /=.
        rewrite -Pos.add_1_r -pos_to_Qp_add Qp.mul_add_distr_l Qp.mul_1_r fractional.
        iSplit; [iIntros "[$ [$ _]]" | iIntros "[$ $]"]. }
    rewrite Hgen /rq -Pos.of_nat_succ Qp.mul_div_l. done.
  Qed.

  Lemma shares_split N ph i :
    i < N → shares N ph ⊣⊢ share_of N ph i ∗
      [∗ list] k ↦ j ∈ seq 0 N, if decide (k = i) then emp else share_of N ph j.
  Proof.
    intros Hi. rewrite /shares (big_sepL_delete (λ _ j, share_of N ph j) (seq 0 N) i i) //.
    apply lookup_seq. lia.
  Qed.

  Lemma shares_insert N ph i p :
    i < N → shares N (<[i:=p]> ph) ⊣⊢
      (if bool_decide (p = Holding) then True%I else R (rq N)) ∗
      [∗ list] k ↦ j ∈ seq 0 N, if decide (k = i) then emp else share_of N ph j.
  Proof.
    intros Hi. rewrite shares_split //. f_equiv.
    - rewrite /share_of lookup_insert. by repeat case_bool_decide; simplify_eq.
    - apply big_sepL_proper. intros k j [-> _]%lookup_seq. simpl.
      case_decide; [done |]. rewrite /share_of lookup_insert_ne //.
  Qed.

  (** Reader [i] takes its share. *)
  Lemma shares_take N ph i p :
    i < N → ph !! i = Some p → p ≠ Holding →
    shares N ph -∗ R (rq N) ∗ shares N (<[i:=Holding]> ph).
  Proof.
    iIntros (Hi Hp Hne) "H". rewrite shares_split // shares_insert //.
    rewrite /share_of Hp. rewrite bool_decide_false; [| congruence].
    rewrite bool_decide_true //. iDestruct "H" as "[$ $]".
  Qed.

  (** Reader [i] gives its share back. *)
  Lemma shares_give N ph i p :
    i < N → ph !! i = Some Holding → p ≠ Holding →
    R (rq N) -∗ shares N ph -∗ shares N (<[i:=p]> ph).
  Proof.
    iIntros (Hi Hp Hne) "HR H". rewrite shares_split // shares_insert //.
    rewrite /share_of Hp bool_decide_true // bool_decide_false //.
    iDestruct "H" as "[_ $]". done.
  Qed.

  (** A phase change between phases other than [Holding]. *)
  Lemma shares_other N ph i p p' :
    i < N → ph !! i = Some p → p ≠ Holding → p' ≠ Holding →
    shares N ph -∗ shares N (<[i:=p']> ph).
  Proof.
    iIntros (Hi Hp Hne Hne') "H". rewrite shares_split // shares_insert //.
    rewrite /share_of Hp !bool_decide_false //; congruence.
  Qed.

  Lemma shares_all N ph :
    (∀ i, ph !! i ≠ Some Holding) → shares N ph ⊣⊢ [∗ list] _ ∈ seq 0 N, R (rq N).
  Proof.
    intros Hnh. apply big_sepL_proper. intros k j _. rewrite /share_of bool_decide_false //.
  Qed.

  Lemma writer_part_agree γ N n ph m :
    writer_part γ N n ph -∗ ghost_var γ.(γ_writer) (1/2) (Some m) -∗ ⌜n = m⌝.
  Proof.
    iIntros "Hwp Hg". iDestruct "Hwp" as "[(_ & Hg' & _) | [(_ & Hg') | (_ & Hg' & _)]]".
    - iDestruct (ghost_var_valid_2 with "Hg' Hg") as %[Hq _].
      exfalso. by apply (Qp.not_add_le_l 1 (1/2)), Qp.lt_le_incl.
    - by iDestruct (ghost_var_agree with "Hg' Hg") as %[= ->].
    - by iDestruct (ghost_var_agree with "Hg' Hg") as %[= ->].
  Qed.

  (** Reader [i]'s phase changes, between phases other than [Holding]. *)
  Lemma writer_part_other γ N n ph i p p' :
    i < N → ph !! i = Some p → p ≠ Holding → p' ≠ Holding →
    writer_part γ N n ph -∗ writer_part γ N n (<[i:=p']> ph).
  Proof.
    iIntros (Hi Hp Hne Hne') "[(% & Hg & HR & Hs) | [(% & Hg) | (% & Hg & Hs)]]".
    - iLeft. iFrame. iSplit; [done |]. by iApply (shares_other with "Hs").
    - iRight; iLeft. by iFrame.
    - iRight; iRight. iFrame. iSplit; [done |]. by iApply (shares_other with "Hs").
  Qed.

  (** Reader [i] acquires: the word is not WLOCK, so its share is in the lock. *)
  Lemma writer_part_take γ N n ph i p :
    i < N → ph !! i = Some p → p ≠ Holding → n mod 4 ≠ 1 →
    writer_part γ N n ph -∗ R (rq N) ∗ writer_part γ N n (<[i:=Holding]> ph).
  Proof.
    iIntros (Hi Hp Hne Hn1) "[(% & Hg & HR & Hs) | [(% & Hg) | (% & Hg & Hs)]]".
    - iDestruct (shares_take with "Hs") as "[$ Hs]"; [done.. |].
      iLeft. iFrame. done.
    - done.
    - iDestruct (shares_take with "Hs") as "[$ Hs]"; [done.. |].
      iRight; iRight. iFrame. done.
  Qed.

  (** Reader [i] releases. *)
  Lemma writer_part_give γ N n ph i p :
    i < N → ph !! i = Some Holding → p ≠ Holding → n mod 4 ≠ 1 →
    R (rq N) -∗ writer_part γ N n ph -∗ writer_part γ N n (<[i:=p]> ph).
  Proof.
    iIntros (Hi Hp Hne Hn1) "HR [(% & Hg & HR' & Hs) | [(% & Hg) | (% & Hg & Hs)]]".
    - iLeft. iFrame. iSplit; [done |]. by iApply (shares_give with "HR Hs").
    - done.
    - iRight; iRight. iFrame. iSplit; [done |]. by iApply (shares_give with "HR Hs").
  Qed.

  Lemma slots_init γp j k :
    ([∗ map] i ↦ p ∈ map_seq j (replicate k Idle), i ↪[γp] p) -∗
    [∗ list] i ∈ seq j k, i ↪[γp] Idle.
  Proof.
    iInduction k as [| k] "IH" forall (j); [by iIntros |].
    rewrite replicate_S map_seq_cons big_sepM_insert; [| apply map_seq_cons_disjoint].
    change (seq j (S k)) with (j :: seq (S j) k). rewrite big_sepL_cons.
    iIntros "[$ H]". by iApply "IH".
  Qed.

  (** The invariant, opened: the pattern every proof step uses. *)
  (* Closing the invariant, [iFrame] names the hypotheses that go back, in
     the invariant's order: a bare [iFrame] tries every spatial hypothesis,
     the most recent first, against the whole invariant, failing slowly on
     those that stay (up to 1.5 s a call). *)
  Local Ltac open_inv :=
    iInv rwN as (?n ?vs ?ph ?X ?L) "(>Hw & >Hri & >Hn & >HX & >Hph & >HL & >%Hip & Hwp)".

  Lemma new_lock_spec N :
    0 < N →
    {{{ R 1 }}} new_lock #N
    {{{ lk γ, RET lk; is_rwlock γ lk N ∗ ([∗ list] i ∈ seq 0 N, slot γ i) ∗ log_lb γ [(3, false)] }}}.
  Proof.
    iIntros (HN Φ) "HR HΦ". wp_lam.
    wp_apply wp_allocN; [lia | done |]. iIntros (ri) "[Hri _]".
    wp_alloc w as "Hw". wp_pures.
    iMod (mono_nat_own_alloc 3) as (γn) "[Hn _]".
    iMod (own_alloc (● (∅ : gset (nat * nat)))) as (γX) "HX"; [by apply auth_auth_valid |].
    iMod (ghost_map_alloc (map_seq 0 (replicate N Idle))) as (γp) "[Hph Hslots]".
    iMod (ghost_var_alloc (None : option nat)) as (γw) "Hg".
    iMod (own_alloc (log_auth [(3, false)])) as (γl) "HL"; [apply mono_list_auth_valid |].
    set γ := LockNames γn γX γp γw γl.
    iDestruct (log_lb_get γ with "HL") as "#Hlb".
    iMod (inv_alloc rwN _ (lock_inv γ w ri N) with "[-HΦ Hslots]") as "#Hinv".
    { iNext. iExists 3, (replicate N 0%Z), (map_seq 0 (replicate N Idle)), ∅, [(3, false)].
      iFrame "Hw Hn HX Hph HL".
      rewrite fmap_replicate Nat2Z.id. iFrame "Hri". iSplit; [iPureIntro; apply ip_init |].
      iLeft. iSplit; [iPureIntro; by right |]. iFrame.
      rewrite R_halves. iDestruct "HR" as "[$ HR]".
      rewrite shares_all; [by rewrite -rq_sum |].
      intros i. rewrite lookup_map_seq_0. intros Hi. apply elem_of_list_lookup_2 in Hi.
      by apply elem_of_replicate in Hi as [? _]. }
    iModIntro. iApply "HΦ". iFrame "Hlb". iSplit.
    - iExists w, ri. iFrame "Hinv". done.
    - by iApply slots_init.
  Qed.

  (** After a snapshot, whatever a try operation reports is relative to it. *)
  Lemma snapshot γ lk N E :
    ↑rwN ⊆ E → is_rwlock γ lk N ={E}=∗ ∃ L0, log_lb γ L0.
  Proof.
    iIntros (HE) "(%w & %ri & _ & #Hinv)". open_inv.
    iDestruct (log_lb_get with "HL") as "#Hlb".
    iModIntro. iSplitL. { iNext. iExists _, _, _, _, _. iFrame "Hw Hri Hn HX Hph HL Hwp". done. }
    iModIntro. by iExists _.
  Qed.

  Lemma shared_unlock_spec γ lk N i :
    {{{ is_rwlock γ lk N ∗ reader_locked γ i ∗ R (rq N) }}}
      shared_unlock lk #i
    {{{ RET #(); slot γ i }}}.
  Proof.
    iIntros (Φ) "((%w & %ri & [-> %HN] & #Hinv) & Hslot & HR) HΦ".
    wp_lam. wp_pures. open_inv.
    iDestruct (ghost_map_lookup with "Hph Hslot") as %Hpi.
    assert (i < N) as Hi by (by eapply ip_dom).
    destruct (ip_lookup _ _ _ _ _ _ Hip i _ Hpi) as (v & Hv & Hok).
    iDestruct (update_array ri _ _ i #v with "Hri") as "[Hri_i Hri_close]".
    { by rewrite list_lookup_fmap Hv. }
    wp_store. iDestruct ("Hri_close" with "Hri_i") as "Hri".
    rewrite -(list_fmap_insert (λ v : Z, #v) vs i 0%Z).
    assert (n mod 4 ≠ 1) as Hn1.
    { intros Hn. by destruct (ip_wlock _ _ _ _ _ _ Hip Hn i) as [? _]. }
    iDestruct (writer_part_give _ _ _ _ i Idle with "HR Hwp") as "Hwp"; [done.. |].
    iMod (ghost_map_update Idle with "Hph Hslot") as "[Hph Hslot]".
    iMod (log_append _ _ (n, present (<[i:=0%Z]> vs)) with "HL") as "HL".
    iModIntro. iSplitR "HΦ Hslot".
    { iNext. iExists n, _, _, X, _.
      iFrame "Hw Hri Hn HX Hph HL Hwp". iPureIntro. apply (ip_leave _ _ _ _ _ _ Hip i Holding); auto. }
    by iApply "HΦ".
  Qed.

  (** The roll-back of an arrival after seeing WLOCK: it stands if a
      writer's [abortRollback] marked it meanwhile. *)
  Lemma rollback_spec γ w ri N i L0 :
    {{{ inv rwN (lock_inv γ w ri N) ∗ i ↪[γ.(γ_phase)] Rolling ∗ excl_since γ L0 }}}
      FAA #(ri +ₗ (i : Z)) #(-1)
    {{{ (v : Z), RET #v; (⌜v = 1%Z⌝ ∗ slot γ i ∗ excl_since γ L0) ∨
                         (⌜v ≠ 1%Z⌝ ∗ reader_locked γ i ∗ R (rq N)) }}}.
  Proof.
    iIntros (Φ) "(#Hinv & Hslot & #Hex) HΦ". open_inv.
    iDestruct (ghost_map_lookup with "Hph Hslot") as %Hpi.
    assert (i < N) as Hi by (by eapply ip_dom).
    destruct (ip_lookup _ _ _ _ _ _ Hip i _ Hpi) as (v & Hv & Hok).
    iDestruct (update_array ri _ _ i #v with "Hri") as "[Hri_i Hri_close]".
    { by rewrite list_lookup_fmap Hv. }
    wp_faa. iDestruct ("Hri_close" with "Hri_i") as "Hri".
    rewrite -(list_fmap_insert (λ v : Z, #v) vs i (v + -1)%Z).
    destruct Hok as [-> | ->].
    - iMod (ghost_map_update Idle with "Hph Hslot") as "[Hph Hslot]".
      iMod (log_append _ _ (n, present (<[i:=0%Z]> vs)) with "HL") as "HL".
      iDestruct (writer_part_other _ _ _ _ i Rolling Idle with "Hwp") as "Hwp"; [done.. |].
      iModIntro. iSplitR "HΦ Hslot".
      { iNext. iExists n, _, _, X, _. iFrame "Hw Hri Hn HX Hph HL Hwp". iPureIntro.
        apply (ip_leave _ _ _ _ _ _ Hip i Rolling); auto. }
      iApply "HΦ". iLeft. iSplit; [done |]. by iFrame.
    - destruct (ip_rollback_hold _ _ _ _ _ _ Hip i Hpi Hv) as [Hn1 Hip'].
      iMod (ghost_map_update Holding with "Hph Hslot") as "[Hph Hslot]".
      iDestruct (writer_part_take _ _ _ _ i Rolling with "Hwp") as "[HR Hwp]"; [done.. |].
      iModIntro. iSplitR "HΦ Hslot HR".
      { iNext. iExists n, _, _, X, _. iFrame "Hw Hri Hn HX Hph HL Hwp". done. }
      iApply "HΦ". iRight. by iFrame.
  Qed.

  (** The reader's decision after seeing word [n]: WLOCK means roll back. *)
  Lemma excl_now γ L0 L n b :
    L0 `prefix_of` L → last L = Some (n, b) → n mod 4 = 1 → log_lb γ L -∗ excl_since γ L0.
  Proof.
    iIntros (Hp Hl Hb) "H". iExists L, (pred (length L)), (n, b). iFrame. iPureIntro.
    rewrite last_lookup in Hl. apply prefix_length in Hp as Hlen.
    split; [done |]. split; [| done]. destruct L; [done |]. simpl in *. lia.
  Qed.

  Lemma shared_try_lock_spec γ lk N (i : nat) L0 :
    {{{ is_rwlock γ lk N ∗ slot γ i ∗ log_lb γ L0 }}}
      shared_try_lock lk #i
    {{{ (b : bool), RET #b;
        if b then reader_locked γ i ∗ R (rq N) else slot γ i ∗ excl_since γ L0 }}}.
  Proof.
    iIntros (Φ) "((%w & %ri & [-> %HN] & #Hinv) & Hslot & #HL0) HΦ".
    wp_lam. wp_pures.
    (* [if (wstate.load().state == WLOCK) return false] *)
    wp_bind (! _)%E. open_inv. wp_load.
    iDestruct (log_prefix with "HL HL0") as %Hpre.
    iDestruct (log_lb_get with "HL") as "#HL1".
    iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp".
    { iNext. iExists n, vs, ph, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp". done. }
    wp_pures. rewrite Z_rem4. case_bool_decide as Hb; rewrite val_int_eq in Hb.
    { wp_pures. iApply "HΦ". iFrame "Hslot". iApply (excl_now _ _ L n with "HL1"); [done | | lia].
      apply (ip_last _ _ _ _ _ _ Hip). }
    wp_pures.
    (* [ri.arrive(tid)] *)
    wp_bind (_ <- _)%E. iClear "HL1". clear dependent n vs ph X L. open_inv.
    iDestruct (ghost_map_lookup with "Hph Hslot") as %Hpi.
    assert (i < N) as Hi by (by eapply ip_dom).
    destruct (ip_lookup _ _ _ _ _ _ Hip i _ Hpi) as (v & Hv & Hok).
    iDestruct (update_array ri _ _ i #v with "Hri") as "[Hri_i Hri_close]".
    { by rewrite list_lookup_fmap Hv. }
    wp_store. iDestruct ("Hri_close" with "Hri_i") as "Hri".
    rewrite -(list_fmap_insert (λ v : Z, #v) vs i 1%Z).
    iMod (ghost_map_update Arrived with "Hph Hslot") as "[Hph Hslot]".
    iMod (log_append _ _ (n, present (<[i:=1%Z]> vs)) with "HL") as "HL".
    iDestruct (writer_part_other _ _ _ _ i Idle Arrived with "Hwp") as "Hwp"; [done.. |].
    iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp".
    { iNext. iExists n, _, _, X, _. iFrame "Hw Hri Hn HX Hph HL Hwp". iPureIntro. by apply ip_arrive. }
    wp_pures.
    (* [ws = wstate.load()] *)
    wp_bind (! _)%E. clear dependent n vs ph X L v. open_inv. wp_load.
    iDestruct (ghost_map_lookup with "Hph Hslot") as %Hpi.
    iDestruct (log_prefix with "HL HL0") as %Hpre.
    iDestruct (log_lb_get with "HL") as "#HL1".
    iDestruct (mono_nat_lb_own_get with "Hn") as "#Hlb".
    destruct (mod4_cases n) as [H0 | [H1 | H23]].
    - (* HLOCK: try to beat the writer *)
      set (s := n `div` 4). assert (n = 4 * s) as Hns by (pose proof (mod4_eq n 0 H0); unfold s; lia).
      iMod (ghost_map_update (CasP s) with "Hph Hslot") as "[Hph Hslot]".
      iDestruct (writer_part_other _ _ _ _ i Arrived (CasP s) with "Hwp") as "Hwp"; [done.. |].
      iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp".
      { iNext. iExists n, vs, _, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp". iPureIntro.
        apply (ip_set_phase _ _ _ _ _ _ Hip i Arrived); [done | done | done | lia |].
        intros s' _ Hs'. assert (s' = s) as -> by lia. by right; right. }
      wp_pures. rewrite Z_rem4 H0. wp_pures.
      wp_bind (CmpXchg _ _ _). iClear "HL1". clear dependent vs ph X L. open_inv.
      iDestruct (ghost_map_lookup with "Hph Hslot") as %Hpi.
      destruct (decide (n0 = n)) as [-> | Hne].
      + (* the reader wins: HLOCK → NOLOCK *)
        wp_cmpxchg_suc.
        iDestruct (writer_part_take _ _ _ _ i (CasP s) with "Hwp") as "[HR Hwp]"; [done | done | done | lia |].
        iMod (ghost_map_update Holding with "Hph Hslot") as "[Hph Hslot]".
        iMod (mono_nat_own_update (4 * s + 3) with "Hn") as "[Hn _]"; [lia |].
        iMod (log_append _ _ (4 * s + 3, present vs) with "HL") as "HL".
        iDestruct "Hwp" as "[(_ & Hg & HRw & Hs) | [(%Hbad & _) | (%Hbad & _)]]"; [| lia | lia].
        iModIntro. iSplitR "HΦ Hslot HR".
        { iNext. iExists (4 * s + 3), vs, (<[i:=Holding]> ph), X,
          (L ++ [(4 * s + 3, present vs)]). rewrite Hns.
          replace (Z.of_nat (4 * s) + 3)%Z with (Z.of_nat (4 * s + 3)) by lia. iFrame "Hw Hri Hn HX Hph HL".
          iSplit. { iPureIntro. apply (ip_cas_win _ _ _ _ _ _ Hip i s Hpi Hns). }
          iLeft. iFrame. iPureIntro. rewrite mod4_add. by right. }
        wp_pures. iApply "HΦ". by iFrame.
      + (* the CAS failed: the word has moved on; look again *)
        wp_cmpxchg_fail; [intros [=]; lia |].
        iDestruct (mono_nat_lb_own_valid with "Hn Hlb") as %[_ Hle].
        iDestruct (mono_nat_lb_own_get with "Hn") as "#Hlb'".
        iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp".
        { iNext. iExists n0, vs, ph, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp". done. }
        wp_pures. rewrite Z_rem4 H0. wp_pures.
        wp_bind (! _)%E. clear dependent vs ph X L. open_inv. wp_load.
        iDestruct (ghost_map_lookup with "Hph Hslot") as %Hpi.
        iDestruct (mono_nat_lb_own_valid with "Hn Hlb'") as %[_ Hle'].
        iDestruct (log_prefix with "HL HL0") as %Hpre.
        iDestruct (log_lb_get with "HL") as "#HL2".
        assert (∀ s', (s', i) ∈ X → n1 = 4 * s' → False) as Hnc.
        { intros s' Hx Hs'. destruct (ip_clean_at _ _ _ _ _ _ Hip s' i (CasP s) Hpi Hx Hs')
            as [? | [? | ?]]; simplify_eq; lia. }
        destruct (decide (n1 mod 4 = 1)) as [Hn1 | Hn1].
        * iMod (ghost_map_update Rolling with "Hph Hslot") as "[Hph Hslot]".
          iDestruct (writer_part_other _ _ _ _ i (CasP s) Rolling with "Hwp") as "Hwp"; [done.. |].
          iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp".
          { iNext. iExists n1, vs, _, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp". iPureIntro.
            apply (ip_set_phase _ _ _ _ _ _ Hip i (CasP s)); try done.
            intros s' Hx Hs'. by destruct (Hnc s' Hx Hs'). }
          iAssert (excl_since γ L0) as "#Hex".
          { iApply (excl_now _ _ L n1 with "HL2"); [done | apply (ip_last _ _ _ _ _ _ Hip) | done]. }
          wp_pures. rewrite Z_rem4 Hn1. wp_pures.
          wp_apply (rollback_spec with "[$Hinv $Hslot $Hex]").
          iIntros (v) "[(-> & Hslot & _) | (% & Hslot & HR)]".
          -- wp_pures. iApply "HΦ". by iFrame.
          -- wp_pures. rewrite bool_decide_false; [| by intros [=]].
             iApply "HΦ". by iFrame.
        * iDestruct (writer_part_take _ _ _ _ i (CasP s) with "Hwp") as "[HR Hwp]"; [done.. |].
          iMod (ghost_map_update Holding with "Hph Hslot") as "[Hph Hslot]".
          iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp".
          { iNext. iExists n1, vs, _, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp". iPureIntro.
            apply (ip_set_phase _ _ _ _ _ _ Hip i (CasP s)); try done.
            intros s' Hx Hs'. by destruct (Hnc s' Hx Hs'). }
          wp_pures. rewrite Z_rem4. case_bool_decide as Hb; rewrite val_int_eq in Hb; [lia |].
          wp_pures. iApply "HΦ". by iFrame.
    - (* WLOCK: roll back *)
      iMod (ghost_map_update Rolling with "Hph Hslot") as "[Hph Hslot]".
      iDestruct (writer_part_other _ _ _ _ i Arrived Rolling with "Hwp") as "Hwp"; [done.. |].
      iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp".
      { iNext. iExists n, vs, _, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp". iPureIntro.
        apply (ip_set_phase _ _ _ _ _ _ Hip i Arrived); try done.
        intros s' _ Hs'. rewrite Hs' mod4_mul in H1. done. }
      iAssert (excl_since γ L0) as "#Hex".
      { iApply (excl_now _ _ L n with "HL1"); [done | apply (ip_last _ _ _ _ _ _ Hip) | done]. }
      wp_pures. rewrite Z_rem4 H1. wp_pures. rewrite Z_rem4 H1. wp_pures.
      rewrite Z_rem4 H1. wp_pures. wp_apply (rollback_spec with "[$Hinv $Hslot $Hex]").
      iIntros (v) "[(-> & Hslot & _) | (% & Hslot & HR)]".
      + wp_pures. iApply "HΦ". by iFrame.
      + wp_pures. rewrite bool_decide_false; [| by intros [=]].
        iApply "HΦ". by iFrame.
    - (* RLOCK or NOLOCK: the reader is in *)
      iDestruct (writer_part_take _ _ _ _ i Arrived with "Hwp") as "[HR Hwp]"; [done | done | done | lia |].
      iMod (ghost_map_update Holding with "Hph Hslot") as "[Hph Hslot]".
      iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp".
      { iNext. iExists n, vs, _, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp". iPureIntro.
        apply (ip_set_phase _ _ _ _ _ _ Hip i Arrived); try done; [lia |].
        intros s' _ Hs'. rewrite Hs' mod4_mul in H23. lia. }
      wp_pures. rewrite Z_rem4 bool_decide_false; [| rewrite val_int_eq; lia]. wp_pures.
      rewrite Z_rem4 bool_decide_false; [| rewrite val_int_eq; lia]. wp_pures.
      rewrite Z_rem4 bool_decide_false; [| rewrite val_int_eq; lia]. wp_pures.
      iApply "HΦ". by iFrame.
  Qed.

  (** *** The writer *)

  (** What a writer's scan learns about cell [j], having seen the word at
      [m] or beyond: nothing if [m] is not HLOCK; else that [j] was empty
      while the word was still [m], or that the word has left [m]. *)
  Definition cop γ (m j : nat) : iProp Σ :=
    ⌜m mod 4 ≠ 0⌝ ∨ own γ.(γ_clean) (◯ {[(m `div` 4, j)]}) ∨ mono_nat_lb_own γ.(γ_word) (S m).

  Global Instance cop_persistent γ m j : Persistent (cop γ m j).
  Proof. apply _. Qed.

  Lemma ri_is_empty_spec γ w ri N m L0 (i : nat) :
    {{{ inv rwN (lock_inv γ w ri N) ∗ mono_nat_lb_own γ.(γ_word) m ∗ log_lb γ L0 ∗
        ⌜i ≤ N⌝ ∗ [∗ list] j ∈ seq 0 i, cop γ m j }}}
      ri_is_empty #ri #N #i
    {{{ (b : bool), RET #b; if b then [∗ list] j ∈ seq 0 N, cop γ m j else busy_since γ L0 }}}.
  Proof.
    iIntros (Φ) "(#Hinv & #Hm & #HL0 & %Hle & Hcops) HΦ".
    iLöb as "IH" forall (i Hle).
    wp_rec. wp_pures. case_bool_decide as Hi; wp_pures.
    - assert (i < N) as HiN by lia.
      wp_bind (! _)%E. open_inv.
      destruct (ip_vs_lookup _ _ _ _ _ _ Hip i HiN) as [v Hv].
      iDestruct (update_array ri _ _ i #v with "Hri") as "[Hri_i Hri_close]".
      { by rewrite list_lookup_fmap Hv. }
      wp_load. iDestruct ("Hri_close" with "Hri_i") as "Hri".
      rewrite list_insert_id; [| by rewrite list_lookup_fmap Hv].
      iDestruct (log_prefix with "HL HL0") as %Hpre.
      iDestruct (log_lb_get with "HL") as "#HL1".
      destruct (decide (v = 0%Z)) as [-> | Hv0].
      + (* empty: a clean witness, or the word has moved on *)
        iDestruct (mono_nat_lb_own_valid with "Hn Hm") as %[_ Hmn].
        iDestruct (mono_nat_lb_own_get with "Hn") as "#Hlbn".
        iAssert (|==> ∃ X', own γ.(γ_clean) (● X') ∗ ⌜inv_pure N n vs ph X' L⌝ ∗ cop γ m i)%I
          with "[HX]" as ">(%X' & HX & %Hip' & #Hc)".
        { destruct (decide (m mod 4 = 0)) as [Hm0 | Hm0].
          2: { iModIntro. iExists X. iFrame. iSplit; [done | by iLeft]. }
          destruct (decide (n = m)) as [-> | Hne].
          - iMod (clean_add _ X (m `div` 4, i) with "HX") as "[HX Hc]".
            iModIntro. iExists _. iSplitL "HX"; [done |]. iSplit; [| iRight; by iLeft].
            iPureIntro. apply ip_clean_add; [done | | done].
            pose proof (mod4_eq m 0 Hm0). lia.
          - iModIntro. iExists X. iFrame. iSplit; [done |]. iRight; iRight.
            iApply (mono_nat_lb_own_le with "Hlbn"). lia. }
        iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp".
        { iNext. iExists n, vs, ph, X', L. iFrame "Hw Hri Hn HX Hph HL Hwp". done. }
        wp_op. wp_if. wp_op.
        replace (Z.of_nat i + 1)%Z with (Z.of_nat (S i)) by lia.
        iApply ("IH" $! (S i) with "[%] [Hcops] HΦ"); [lia |].
        rewrite seq_S big_sepL_app /=. by iFrame "Hcops Hc".
      + iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp".
        { iNext. iExists n, vs, ph, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp". done. }
        wp_pures. rewrite bool_decide_false; [| rewrite val_int_eq; lia]. wp_pures.
        iApply "HΦ". iApply (busy_now _ L0 L (n, present vs) Hpre (ip_last _ _ _ _ _ _ Hip) with "HL1").
        right; right. apply bool_decide_eq_true, Exists_exists. exists v.
        split; [by eapply elem_of_list_lookup_2 | done].
    - assert (i = N) as -> by lia. iApply "HΦ". done.
  Qed.
  (** [abortRollback], by the writer that has just stored RLOCK ([m]). *)
  Lemma ri_abort_rollback_spec γ w ri N m (i : nat) :
    m mod 4 = 2 →
    {{{ inv rwN (lock_inv γ w ri N) ∗ ghost_var γ.(γ_writer) (1/2) (Some m) }}}
      ri_abort_rollback #ri #N #i
    {{{ RET #(); ghost_var γ.(γ_writer) (1/2) (Some m) }}}.
  Proof.
    iIntros (Hm Φ) "(#Hinv & Hg) HΦ".
    iLöb as "IH" forall (i).
    wp_rec. wp_pures. case_bool_decide as Hi; wp_pures; [| by iApply "HΦ"].
    assert (i < N) as HiN by lia.
    wp_bind (! _)%E. open_inv.
    destruct (ip_vs_lookup _ _ _ _ _ _ Hip i HiN) as [v Hv].
    iDestruct (update_array ri _ _ i #v with "Hri") as "[Hri_i Hri_close]".
    { by rewrite list_lookup_fmap Hv. }
    wp_load. iDestruct ("Hri_close" with "Hri_i") as "Hri".
    rewrite list_insert_id; [| by rewrite list_lookup_fmap Hv].
    iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp".
    { iNext. iExists n, vs, ph, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp". done. }
    clear dependent n vs ph X L.
    wp_op. case_bool_decide; wp_if.
    - wp_bind (CmpXchg _ _ _). wp_pures. open_inv.
      destruct (ip_vs_lookup _ _ _ _ _ _ Hip i HiN) as [v' Hv].
      iDestruct (update_array ri _ _ i #v' with "Hri") as "[Hri_i Hri_close]".
      { by rewrite list_lookup_fmap Hv. }
      destruct (decide (v' = 1%Z)) as [-> | Hne].
      + wp_cmpxchg_suc. iDestruct (writer_part_agree with "Hwp Hg") as %->.
        iDestruct ("Hri_close" with "Hri_i") as "Hri".
        rewrite -(list_fmap_insert (λ v : Z, #v) vs i 2%Z).
        iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp".
        { iNext. iExists m, _, ph, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp". iPureIntro. by apply ip_mark. }
        wp_proj. wp_seq. wp_op. replace (Z.of_nat i + 1)%Z with (Z.of_nat (S i)) by lia.
        by iApply ("IH" with "Hg HΦ").
      + wp_cmpxchg_fail. iDestruct ("Hri_close" with "Hri_i") as "Hri".
        rewrite list_insert_id; [| by rewrite list_lookup_fmap Hv].
        iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp".
        { iNext. iExists n, vs, ph, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp". done. }
        wp_proj. wp_seq. wp_op. replace (Z.of_nat i + 1)%Z with (Z.of_nat (S i)) by lia.
        by iApply ("IH" with "Hg HΦ").
    - wp_seq. wp_op. replace (Z.of_nat i + 1)%Z with (Z.of_nat (S i)) by lia.
      by iApply ("IH" with "Hg HΦ").
  Qed.

  (** The holder reads the word: it is its own. *)
  Lemma load_own_spec γ w ri N (m : nat) :
    {{{ inv rwN (lock_inv γ w ri N) ∗ ghost_var γ.(γ_writer) (1/2) (Some m) }}}
      ! #w
    {{{ RET #m; ghost_var γ.(γ_writer) (1/2) (Some m) }}}.
  Proof.
    iIntros (Φ) "(#Hinv & Hg) HΦ". open_inv.
    wp_load. iDestruct (writer_part_agree with "Hwp Hg") as %->.
    iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp".
    { iNext. iExists m, vs, ph, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp". done. }
    by iApply "HΦ".
  Qed.

  (** WLOCK → RLOCK ([exclusiveUnlock], [downgrade]): the readers' shares go
      back into the lock, the writer keeps its half. *)
  Lemma rlock_spec γ w ri N m :
    0 < N → m mod 4 = 1 →
    {{{ inv rwN (lock_inv γ w ri N) ∗ ghost_var γ.(γ_writer) (1/2) (Some m) ∗ R 1 }}}
      #w <- #(S m)
    {{{ RET #(); ghost_var γ.(γ_writer) (1/2) (Some (S m)) ∗ R (1/2) }}}.
  Proof.
    iIntros (HN Hm Φ) "(#Hinv & Hg & HR) HΦ". open_inv.
    wp_store. iDestruct (writer_part_agree with "Hwp Hg") as %->.
    iDestruct "Hwp" as "[(%Hbad & _) | [(_ & Hg') | (%Hbad & _)]]"; [lia | | lia].
    iMod (ghost_var_update_halves (Some (S m)) with "Hg Hg'") as "[Hg Hg']".
    iMod (mono_nat_own_update (S m) with "Hn") as "[Hn _]"; [lia |].
    iMod (log_append _ _ (S m, present vs) with "HL") as "HL".
    rewrite R_halves. iDestruct "HR" as "[HR HRr]".
    iModIntro. iSplitR "HΦ Hg HR".
    { iNext. iExists (S m), vs, ph, X, (L ++ [(S m, present vs)]). iFrame "Hw Hri Hn HX Hph HL". iSplit.
      { iPureIntro. apply ip_word_succ; [done | lia]. }
      iRight; iRight. iFrame. iSplit.
      { iPureIntro. by rewrite (mod4_S m 1). }
      rewrite shares_all; [by rewrite -rq_sum; [| lia] |].
      intros i. by destruct (ip_wlock _ _ _ _ _ _ Hip Hm i). }
    iApply "HΦ". by iFrame.
  Qed.

  (** RLOCK → NOLOCK ([exclusiveUnlock], [setReadUnlock]). *)
  Lemma release_spec γ w ri N m :
    m mod 4 = 2 →
    {{{ inv rwN (lock_inv γ w ri N) ∗ ghost_var γ.(γ_writer) (1/2) (Some m) ∗ R (1/2) }}}
      #w <- #(S m)
    {{{ RET #(); True }}}.
  Proof.
    iIntros (Hm Φ) "(#Hinv & Hg & HR) HΦ". open_inv.
    wp_store. iDestruct (writer_part_agree with "Hwp Hg") as %->.
    iDestruct "Hwp" as "[(%Hbad & _) | [(%Hbad & _) | (_ & Hg' & Hs)]]"; [lia | lia |].
    iMod (ghost_var_update_halves None with "Hg Hg'") as "[Hg Hg']".
    iCombine "Hg Hg'" as "Hg".
    iMod (mono_nat_own_update (S m) with "Hn") as "[Hn _]"; [lia |].
    iMod (log_append _ _ (S m, present vs) with "HL") as "HL".
    iModIntro. iSplitR "HΦ".
    { iNext. iExists (S m), vs, ph, X, (L ++ [(S m, present vs)]). iFrame "Hw Hri Hn HX Hph HL". iSplit.
      { iPureIntro. apply ip_word_succ; [done | lia]. }
      iLeft. iFrame. iPureIntro. right.
      by rewrite (mod4_S m 2). }
    by iApply "HΦ".
  Qed.

  (** The writer looks at the word again: unchanged, or an acquisition has
      happened since the snapshot [L1] (whose word was at most [m]). *)
  Lemma reload_spec γ w ri N m L1 :
    m mod 4 = 0 →
    {{{ inv rwN (lock_inv γ w ri N) ∗ mono_nat_lb_own γ.(γ_word) m ∗ log_lb γ L1 ∗
        ⌜∃ e, last L1 = Some e ∧ e.1 ≤ m⌝ }}}
      ! #w
    {{{ (n : nat), RET #n; ⌜n = m⌝ ∨ (⌜n ≠ m⌝ ∗ busy_since γ L1) }}}.
  Proof.
    iIntros (Hm Φ) "(#Hinv & #Hlb & #HL1 & %He) HΦ". open_inv. wp_load.
    iDestruct (mono_nat_lb_own_valid with "Hn Hlb") as %[_ Hle].
    iDestruct (log_prefix with "HL HL1") as %Hpre.
    iDestruct (log_lb_get with "HL") as "#HL2".
    iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp".
    { iNext. iExists n, vs, ph, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp". done. }
    iApply "HΦ". destruct (decide (n = m)) as [-> | Hne]; [by iLeft |].
    iRight. iSplit; [done |].
    destruct He as (e0 & H0 & He0).
    destruct (log_busy_after L1 L (m `div` 4) e0 (n, present vs) Hpre (ip_log _ _ _ _ _ _ Hip)
      H0 (ip_last _ _ _ _ _ _ Hip)) as (k & b & ? & ? & ?);
      [pose proof (mod4_eq m 0 Hm); lia | cbn [fst]; pose proof (mod4_eq m 0 Hm); lia |].
    iExists L, k, b. by iFrame "HL2".
  Qed.

  (** NOLOCK → HLOCK of the next sequence; whether this CAS or another
      writer's did it, the word is at least HLOCK afterwards. *)
  Lemma hlock_spec γ w ri N n0 :
    n0 mod 4 = 3 →
    {{{ inv rwN (lock_inv γ w ri N) ∗ mono_nat_lb_own γ.(γ_word) n0 }}}
      CmpXchg #w #n0 #(n0 + 1)
    {{{ v (b : bool), RET (v, #b)%V; mono_nat_lb_own γ.(γ_word) (S n0) }}}.
  Proof.
    iIntros (Hm Φ) "(#Hinv & #Hlb) HΦ". open_inv.
    iDestruct (mono_nat_lb_own_valid with "Hn Hlb") as %[_ Hle].
    destruct (decide (n = n0)) as [-> | Hne].
    - wp_cmpxchg_suc.
      iMod (mono_nat_own_update (S n0) with "Hn") as "[Hn #Hlb']"; [lia |].
      iMod (log_append _ _ (S n0, present vs) with "HL") as "HL".
      iModIntro. iSplitR "HΦ".
      { iNext. iExists (S n0), vs, ph, X, _.
        replace (Z.of_nat n0 + 1)%Z with (Z.of_nat (S n0)) by lia. iFrame "Hw Hri Hn HX Hph HL". iSplit.
        { iPureIntro. apply ip_word_succ; [done | lia]. }
        iDestruct "Hwp" as "[(_ & Hg & HR & Hs) | [(%Hbad & _) | (%Hbad & _)]]"; [| lia | lia].
        iLeft. iFrame. iPureIntro. left. by rewrite (mod4_S n0 3). }
      by iApply "HΦ".
    - wp_cmpxchg_fail; [intros [=]; lia |].
      iDestruct (mono_nat_lb_own_get with "Hn") as "#Hlb'".
      iModIntro. iSplitR "HΦ".
      { iNext. iExists n, vs, ph, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp". done. }
      iApply "HΦ". iApply (mono_nat_lb_own_le with "Hlb'"). lia.
  Qed.

  (** HLOCK → WLOCK: the writer acquires, having found every cell empty
      while the word was this HLOCK ([n0 = 4s]). *)
  Lemma acquire_spec γ w ri N n0 s L1 :
    n0 = 4 * s → 0 < N →
    {{{ inv rwN (lock_inv γ w ri N) ∗ ([∗ list] j ∈ seq 0 N, cop γ n0 j) ∗
        mono_nat_lb_own γ.(γ_word) n0 ∗ log_lb γ L1 ∗ ⌜∃ e, last L1 = Some e ∧ e.1 ≤ n0⌝ }}}
      CmpXchg #w #n0 #(n0 + 1)
    {{{ v (b : bool), RET (v, #b)%V; if b then writer_locked γ ∗ R 1 else busy_since γ L1 }}}.
  Proof.
    iIntros (Hn0 HN Φ) "(#Hinv & #Hcops & #Hlb & #HL1 & %He) HΦ". open_inv.
    iDestruct (mono_nat_lb_own_valid with "Hn Hlb") as %[_ Hle].
    assert (n0 mod 4 = 0) as Hm0 by (rewrite Hn0; apply mod4_mul).
    destruct (decide (n = n0)) as [-> | Hne].
    - wp_cmpxchg_suc.
      iAssert (⌜∀ j, j < N → (s, j) ∈ X⌝)%I as %Hall.
      { iIntros (j Hj).
        iDestruct (big_sepL_forall with "Hcops") as "Hf".
        iDestruct ("Hf" $! j j with "[%]") as "[%Hbad | [Hc | Hc]]".
        { apply lookup_seq. lia. }
        - done.
        - assert (n0 `div` 4 = s) as Hs by (rewrite Hn0 (Nat.mul_comm 4 s) Nat.div_mul; lia).
          rewrite Hs. by iApply (clean_elem with "HX Hc").
        - iDestruct (mono_nat_lb_own_valid with "Hn Hc") as %[_ ?]. lia. }
      destruct (ip_acquire _ _ _ _ _ _ Hip s Hn0 Hall) as [Hip' Hnh].
      replace (4 * s + 1) with (S n0) in Hip' by lia.
      iDestruct "Hwp" as "[(_ & Hg & HR & Hs) | [(%Hbad & _) | (%Hbad & _)]]"; [| lia | lia].
      iMod (ghost_var_update (Some (S n0)) with "Hg") as "Hg".
      iEval (rewrite -Qp.half_half) in "Hg". iDestruct "Hg" as "[Hg Hg']".
      iMod (mono_nat_own_update (S n0) with "Hn") as "[Hn _]"; [lia |].
      iMod (log_append _ _ (S n0, present vs) with "HL") as "HL".
      rewrite shares_all // -rq_sum //.
      assert ((S n0) mod 4 = 1) as HS1 by (by rewrite (mod4_S n0 0)).
      iModIntro. iSplitR "HΦ Hg HR Hs".
      { iNext. iExists (S n0), vs, ph, X, (L ++ [(S n0, present vs)]).
        replace (Z.of_nat n0 + 1)%Z with (Z.of_nat (S n0)) by lia.
        iFrame "Hw Hri Hn HX Hph HL". iSplit; [done |].
        iRight; iLeft. by iFrame. }
      iApply "HΦ". iSplitL "Hg".
      + iExists (S n0). by iFrame.
      + rewrite R_halves. iFrame.
    - wp_cmpxchg_fail; [intros [=]; lia |].
      iDestruct (log_prefix with "HL HL1") as %Hpre.
      iDestruct (log_lb_get with "HL") as "#HL2".
      iModIntro. iSplitR "HΦ".
      { iNext. iExists n, vs, ph, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp". done. }
      iApply "HΦ". destruct He as (e0 & H0 & He0).
      destruct (log_busy_after L1 L s e0 (n, present vs) Hpre (ip_log _ _ _ _ _ _ Hip)
        H0 (ip_last _ _ _ _ _ _ Hip)) as (k & b & ? & ? & ?); [lia | cbn [fst]; lia |].
      iExists L, k, b. by iFrame "HL2".
  Qed.

  Lemma exclusive_try_lock_spec γ lk N L0 :
    {{{ is_rwlock γ lk N ∗ log_lb γ L0 }}}
      exclusive_try_lock lk
    {{{ (b : bool), RET #b; if b then writer_locked γ ∗ R 1 else busy_since γ L0 }}}.
  Proof.
    iIntros (Φ) "((%w & %ri & [-> %HN] & #Hinv) & #HL0) HΦ".
    wp_lam. wp_pures.
    wp_bind (! _)%E. open_inv. wp_load.
    iDestruct (log_prefix with "HL HL0") as %Hpre.
    iDestruct (log_lb_get with "HL") as "#HL1".
    iDestruct (mono_nat_lb_own_get with "Hn") as "#Hlb".
    pose proof (ip_last _ _ _ _ _ _ Hip) as Hlast.
    iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp".
    { iNext. iExists n, vs, ph, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp". done. }
    wp_pures. rewrite Z_rem4.
    destruct (mod4_cases n) as [H0 | [H1 | [H2 | H3]]].
    - (* HLOCK: another writer is trying; take its attempt over *)
      rewrite H0. wp_pures.
      wp_apply (ri_is_empty_spec _ _ _ _ n L 0 with "[$Hinv $Hlb $HL1]"); [iSplit; [iPureIntro; lia | done] |].
      iIntros ([]) "Hcops"; wp_pures; last first.
      { iApply "HΦ". by iApply (busy_since_weaken with "Hcops"). }
      set (s := n `div` 4). assert (n = 4 * s) as Hns by (pose proof (mod4_eq n 0 H0); unfold s; lia).
      wp_apply (reload_spec _ _ _ _ n L with "[$Hinv $HL1 $Hlb]"); [done | |].
      { iPureIntro. exists (n, present vs). split; [done | cbn [fst]; lia]. }
      iIntros (n1) "[-> | [%Hne Hb]]".
      + wp_pures. rewrite bool_decide_true //. wp_pures.
        iDestruct "Hcops" as "#Hcops".
        wp_apply (acquire_spec _ _ _ _ n s L with "[$Hinv $HL1 $Hlb $Hcops]"); [done | done | |].
        { iPureIntro. exists (n, present vs). split; [done | cbn [fst]; lia]. }
        iIntros (v [|]) "H"; wp_pures; iApply "HΦ"; [done |].
        by iApply (busy_since_weaken with "H").
      + wp_pures. rewrite bool_decide_false; [| rewrite val_int_eq; lia]. wp_pures.
        iApply "HΦ". by iApply (busy_since_weaken with "Hb").
    - (* WLOCK *)
      rewrite H1. wp_pures. iApply "HΦ".
      iApply (busy_now _ L0 L (n, present vs) Hpre Hlast with "HL1"). by left.
    - (* RLOCK *)
      rewrite H2. wp_pures. iApply "HΦ".
      iApply (busy_now _ L0 L (n, present vs) Hpre Hlast with "HL1"). by right; left.
    - (* NOLOCK: announce HLOCK of the next sequence, check for readers *)
      rewrite H3. wp_pures.
      wp_apply (ri_is_empty_spec _ _ _ _ n L0 0 with "[$Hinv $Hlb $HL0]"); [iSplit; [iPureIntro; lia | done] |].
      iIntros ([]) "Hb"; wp_pures; last first.
      { iApply "HΦ". done. }
      iClear "Hb".
      wp_apply (hlock_spec with "[$Hinv $Hlb]"); [done |]. iIntros (v b) "#Hlb'". wp_pures.
      replace (Z.of_nat n + 1)%Z with (Z.of_nat (S n)) by lia.
      wp_apply (ri_is_empty_spec _ _ _ _ (S n) L0 0 with "[$Hinv $Hlb' $HL0]"); [iSplit; [iPureIntro; lia | done] |].
      iIntros ([]) "Hcops"; wp_pures; last first.
      { iApply "HΦ". done. }
      assert ((S n) mod 4 = 0) as HS0.
      { by rewrite (mod4_S n 3). }
      set (s := (S n) `div` 4). assert (S n = 4 * s) as Hns by (pose proof (mod4_eq (S n) 0 HS0); unfold s; lia).
      wp_apply (reload_spec _ _ _ _ (S n) L with "[$Hinv $HL1 $Hlb']"); [done | |].
      { iPureIntro. exists (n, present vs). split; [done | cbn [fst]; lia]. }
      iIntros (n1) "[-> | [%Hne Hb]]".
      + wp_pures. rewrite bool_decide_true //. wp_pures.
        iDestruct "Hcops" as "#Hcops".
        wp_apply (acquire_spec _ _ _ _ (S n) s L with "[$Hinv $HL1 $Hlb' $Hcops]"); [done | done | |].
        { iPureIntro. exists (n, present vs). split; [done | cbn [fst]; lia]. }
        iIntros (v' [|]) "H"; wp_pures; iApply "HΦ"; [done |].
        by iApply (busy_since_weaken with "H").
      + wp_pures. rewrite bool_decide_false; [| rewrite val_int_eq; lia]. wp_pures.
        iApply "HΦ". by iApply (busy_since_weaken with "Hb").
  Qed.

  Lemma exclusive_unlock_spec γ lk N :
    {{{ is_rwlock γ lk N ∗ writer_locked γ ∗ R 1 }}}
      exclusive_unlock lk
    {{{ RET #(); True }}}.
  Proof.
    iIntros (Φ) "((%w & %ri & [-> %HN] & #Hinv) & (%m & %Hm & Hg) & HR) HΦ".
    wp_lam. wp_pures.
    wp_apply (load_own_spec with "[$Hinv $Hg]"). iIntros "Hg". wp_pures.
    rewrite Z_rem4 Hm. replace (Z.of_nat m - Z.of_nat 1 + 2)%Z with (Z.of_nat (S m)) by lia.
    wp_apply (rlock_spec with "[$Hinv $Hg $HR]"); [done | done |]. iIntros "[Hg HR]". wp_pures.
    assert ((S m) mod 4 = 2) as Hm2 by (by rewrite (mod4_S m 1)).
    wp_apply (ri_abort_rollback_spec _ _ _ _ _ 0 with "[$Hinv $Hg]"); [done |]. iIntros "Hg". wp_pures.
    replace (Z.of_nat m - Z.of_nat 1 + 3)%Z with (Z.of_nat (S (S m))) by lia.
    wp_apply (release_spec with "[$Hinv $Hg $HR]"); [done |]. done.
  Qed.

  Lemma downgrade_spec γ lk N :
    {{{ is_rwlock γ lk N ∗ writer_locked γ ∗ R 1 }}}
      downgrade lk
    {{{ RET #(); downgraded γ ∗ R (1/2) }}}.
  Proof.
    iIntros (Φ) "((%w & %ri & [-> %HN] & #Hinv) & (%m & %Hm & Hg) & HR) HΦ".
    wp_lam. wp_pures.
    wp_apply (load_own_spec with "[$Hinv $Hg]"). iIntros "Hg". wp_pures.
    rewrite Z_rem4 Hm. replace (Z.of_nat m - Z.of_nat 1 + 2)%Z with (Z.of_nat (S m)) by lia.
    wp_apply (rlock_spec with "[$Hinv $Hg $HR]"); [done | done |]. iIntros "[Hg HR]". wp_pures.
    assert ((S m) mod 4 = 2) as Hm2 by (by rewrite (mod4_S m 1)).
    wp_apply (ri_abort_rollback_spec _ _ _ _ _ 0 with "[$Hinv $Hg]"); [done |]. iIntros "Hg".
    iApply "HΦ". iFrame. by iExists (S m); iFrame.
  Qed.

  (** A downgraded writer releases: [downgradeUnlock] (Algorithm 3 L31). *)
  Lemma set_read_unlock_spec γ lk N :
    {{{ is_rwlock γ lk N ∗ downgraded γ ∗ R (1/2) }}}
      set_read_unlock lk
    {{{ RET #(); True }}}.
  Proof.
    iIntros (Φ) "((%w & %ri & [-> %HN] & #Hinv) & (%m & %Hm & Hg) & HR) HΦ".
    wp_lam. wp_pures.
    wp_apply (load_own_spec with "[$Hinv $Hg]"). iIntros "Hg". wp_pures.
    rewrite Z_rem4 Hm. replace (Z.of_nat m - Z.of_nat 2 + 3)%Z with (Z.of_nat (S m)) by lia.
    by wp_apply (release_spec with "[$Hinv $Hg $HR]").
  Qed.

  (** A downgraded writer releases with [exclusiveUnlock] (Algorithm 3 L41,
      after a failed CAS): storing RLOCK again changes nothing. *)
  Lemma exclusive_unlock_downgraded_spec γ lk N :
    {{{ is_rwlock γ lk N ∗ downgraded γ ∗ R (1/2) }}}
      exclusive_unlock lk
    {{{ RET #(); True }}}.
  Proof.
    iIntros (Φ) "((%w & %ri & [-> %HN] & #Hinv) & (%m & %Hm & Hg) & HR) HΦ".
    wp_lam. wp_pures.
    wp_apply (load_own_spec with "[$Hinv $Hg]"). iIntros "Hg". wp_pures.
    rewrite Z_rem4 Hm. replace (Z.of_nat m - Z.of_nat 2 + 2)%Z with (Z.of_nat m) by lia.
    wp_bind (_ <- _)%E. open_inv.
    wp_store. iDestruct (writer_part_agree with "Hwp Hg") as %->.
    iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp".
    { iNext. iExists m, vs, ph, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp". done. }
    wp_pures.
    wp_apply (ri_abort_rollback_spec _ _ _ _ _ 0 with "[$Hinv $Hg]"); [done |]. iIntros "Hg". wp_pures.
    replace (Z.of_nat m - Z.of_nat 2 + 3)%Z with (Z.of_nat (S m)) by lia.
    by wp_apply (release_spec with "[$Hinv $Hg $HR]").
  Qed.

End proof.

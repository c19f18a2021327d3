(** * The strong try reader-writer lock as the Rust code runs it, in Iris

    [impl/perdure-ptm/src/rwlock.rs] ([StrongTryRwLock]) is the lock that
    protects every [Combined] instance of perdure's CX and Redo-PTM.  It is
    a variant of the published C++ lock that [StrongTryRWLock.v] verifies:
    its [exclusive_try_lock] always announces its own attempt with a CAS of
    the word it loaded to HLOCK of the *next* sequence, also over another
    writer's HLOCK ("renewal"), fails when that CAS fails, and then scans
    the read indicator once more before its CAS to WLOCK (the C++ takes an
    HLOCK it finds over as it is and ignores the outcome of its own
    NOLOCK→HLOCK CAS); its [shared_try_lock] uses the value a failed CAS
    returns instead of loading the word again.  This file transcribes the
    Rust functions the PTMs call and proves for them the specifications
    [StrongTryRWLock.v] proves for the C++, reusing its code-independent
    definitions and lemmas (phases, the pure invariant of the read
    indicator, the fractional shares, the log and its witnesses).

    The code, in [heap_lang]; every step names the line of [rwlock.rs] it
    transcribes.  The encoding is [StrongTryRWLock.v]'s: the lock is a triple
    [(w, ri, N)]; the word is [w = 4·seq + st] with HLOCK 0, WLOCK 1,
    RLOCK 2, NOLOCK 3 (the Rust numbers them NOLOCK 0, HLOCK 1, RLOCK 2,
    WLOCK 3; [pack(seq, st)] is [4·seq + st] up to that renaming, and
    [seq_of]/[state_of] are [`quot` 4] and [`rem` 4]).  With this order every
    transition of the Rust lock increases the word, except [set_read_lock]
    (NOLOCK(0) → RLOCK(0)), which the PTMs call only at start-up, before
    the lock is shared: it is transcribed as part of the constructor
    [rs_new_lock_read_locked] ([new] then [set_read_lock], as
    [redo/core.rs] and [cx/core.rs] do).  The renewal HLOCK(s) → HLOCK(s+1)
    is the new transition: [4s → 4s+4].

    What the transcription abstracts:
    - memory orders and fences: [heap_lang] is sequentially consistent, so
      the [SeqCst] accesses, the writers' [fence(SeqCst)] (L260, L277,
      L287), the reader's loom-only [reader_fence] (L189) and the
      [Release] store of [shared_unlock] (L220) are all plain SC steps (the
      fences are omitted); loom and GenMC check the C11 side;
    - a [swap] whose result is ignored (L188, L276, L279, L286, L303, L310)
      is a store ([heap_lang] 4.0 has no exchange; under SC the two are the
      same step);
    - the 62-bit sequence does not wrap ([wrapping_add], [SEQ_MASK]):
      integers are unbounded;
    - the cache-line padding, [state()], [threads()], [Debug];
    - [downgrade_unlock]'s [debug_assert_eq!] (L296–L300) is the
      precondition [downgraded γ] of its specification.

    The specification has the shape of [StrongTryRWLock.v]'s, for a
    fractional resource [R] the lock protects:
    - [rs_new_lock_spec], [rs_new_lock_read_locked_spec]: the lock, one
      [slot γ i] per thread [i < N], a first log snapshot; the second also
      gives [downgraded γ ∗ R (1/2)] (the replica [cur_comb] designates);
    - [rs_exclusive_try_lock_spec]: on [true], [writer_locked γ ∗ R 1];
    - [rs_exclusive_unlock_spec], [rs_downgrade_spec],
      [rs_downgrade_unlock_spec], [rs_exclusive_unlock_downgraded_spec];
    - [rs_shared_try_lock_spec] (on [true], [reader_locked γ i ∗ R (rq N)])
      and [rs_shared_unlock_spec].

    Strongness.  As in [StrongTryRWLock.v], relative to a log snapshot
    [log_lb γ L0] the client takes before the call:
    - [rs_shared_try_lock] fails only with [excl_since γ L0] (a writer held
      the lock exclusively at the snapshot or later): the same statement as
      for the C++;
    - [rs_exclusive_try_lock] fails only with [busy_since γ L0] (another
      writer held it, WLOCK or RLOCK, or a reader was in it or entering it)
      or with [rival_since γ L0 c]: at the snapshot or later the word was
      HLOCK of a sequence announced by a writer whose identity is not the
      caller's [c].  The second case is what the Rust adds ("a writer that
      loses this race fails: the winner is still trying"): a Rust writer
      also fails because another writer was in the middle of taking the
      lock.  Identities are ghost: [wid γ c] is an exclusive token
      ([rs_wid_alloc] makes one; a client gives each thread one), which the
      call needs and returns, and the lock records, for every HLOCK
      sequence, the identity of the writer whose CAS announced it
      ([s ↪[γ_auth]□ c']).  So an attempt the call itself announced never
      counts as a reason for its failure.

    Not covered, as in [StrongTryRWLock.v]: progress (every method is a
    bounded number of steps, a fact of the code's shape; the WPs are
    partial correctness); the C11 orders (above); the blocking variants
    (the Rust has none). *)
From iris.algebra Require Import auth gset.
From iris.algebra.lib Require Import mono_list.
From iris.bi.lib Require Import fractional.
From iris.base_logic.lib Require Import invariants ghost_var ghost_map mono_nat.
From iris.heap_lang Require Import proofmode notation.
From perdure.Ptm Require Import StrongTryRWLock.
From iris.prelude Require Import options.

(** ** The code *)

(** [StrongTryRwLock::new(threads)] (L150–L157): the word
    [pack(0, NOLOCK)] (L152), one NOT_READING cell per thread (L153–L155). *)
Definition rs_new_lock : val :=
  λ: "n",
    let: "ri" := AllocN "n" #0 in
    let: "w" := ref #NOLOCK in
    ("w", "ri", "n").

(** [set_read_lock] (L308–L311): NOLOCK → RLOCK of the same sequence. *)
Definition rs_set_read_lock : val :=
  λ: "lk",
    let: "w" := Fst (Fst "lk") in
    let: "ws" := !"w" in                              (* L309: load *)
    "w" <- "ws" - ("ws" `rem` #4) + #RLOCK.           (* L310: swap(pack(seq, RLOCK)) *)

(** The start-up of the replica [cur_comb] designates: [new] then
    [set_read_lock] ([redo/core.rs] L163, [cx/core.rs] L162), before the
    lock is shared. *)
Definition rs_new_lock_read_locked : val :=
  λ: "n",
    let: "lk" := rs_new_lock "n" in
    rs_set_read_lock "lk";;
    "lk".

(** [readers_empty] (L223–L225): every slot NOT_READING. *)
Definition rs_readers_empty : val :=
  rec: "loop" "ri" "n" "i" :=
    if: "i" < "n" then
      if: !("ri" +ₗ "i") = #0 then "loop" "ri" "n" ("i" + #1) else #false   (* L224 *)
    else #true.

(** [abort_rollback] (L229–L236): READING becomes READING + 1. *)
Definition rs_abort_rollback : val :=
  rec: "loop" "ri" "n" "i" :=
    if: "i" < "n" then
      (if: !("ri" +ₗ "i") = #1                       (* L231: load == READING *)
       then CAS ("ri" +ₗ "i") #1 #2 else #false);;   (* L232: compare_exchange(1, 2) *)
      "loop" "ri" "n" ("i" + #1)
    else #().

(** The end of [shared_try_lock] (L202–L207), on the word [ws] it last saw
    (loaded at L190, or returned by the failed CAS at L199). *)
Definition rs_shared_settle : val :=
  λ: "ri" "tid" "ws",
    if: ("ws" `rem` #4) = #WLOCK                     (* L202: state_of(ws) != WLOCK *)
    then ~ (FAA ("ri" +ₗ "tid") #(-1) = #1)          (* L207: fetch_sub(1) != READING *)
    else #true.                                      (* L203 *)

(** [shared_try_lock(tid)] (L184–L208). *)
Definition rs_shared_try_lock : val :=
  λ: "lk" "tid",
    let: "w" := Fst (Fst "lk") in
    let: "ri" := Snd (Fst "lk") in
    if: ((!"w") `rem` #4) = #WLOCK then #false else  (* L185–L187 *)
    ("ri" +ₗ "tid") <- #1;;                          (* L188: swap(READING); L189 fence omitted *)
    let: "ws" := !"w" in                             (* L190 *)
    if: ("ws" `rem` #4) = #HLOCK then                (* L191 *)
      let: "r" := CmpXchg "w" "ws" ("ws" + #3) in    (* L193–L196: HLOCK(seq) → NOLOCK(seq) *)
      if: Snd "r" then #true                         (* L198: Ok(_) => return true *)
      else rs_shared_settle "ri" "tid" (Fst "r")     (* L199: Err(now) => ws = now *)
    else rs_shared_settle "ri" "tid" "ws".

(** [shared_unlock(tid)] (L211–L221): a [Release] store of NOT_READING (L220). *)
Definition rs_shared_unlock : val :=
  λ: "lk" "tid", (Snd (Fst "lk") +ₗ "tid") <- #0.

(** [exclusive_try_lock()] (L240–L270). *)
Definition rs_exclusive_try_lock : val :=
  λ: "lk",
    let: "w" := Fst (Fst "lk") in
    let: "ri" := Snd (Fst "lk") in
    let: "n" := Snd "lk" in
    let: "ws" := !"w" in                                      (* L241 *)
    let: "st" := "ws" `rem` #4 in                             (* L242 *)
    if: ("st" = #WLOCK) || ("st" = #RLOCK) then #false else   (* L243–L245 *)
    if: ~ (rs_readers_empty "ri" "n" #0) then #false else     (* L246–L248 *)
    let: "next" := "ws" - "st" + #4 in                        (* L251: pack(seq_of(ws)+1, HLOCK) *)
    if: ~ (Snd (CmpXchg "w" "ws" "next")) then #false else    (* L252–L259; L260 fence omitted *)
    if: ~ (rs_readers_empty "ri" "n" #0) then #false else     (* L263–L265 *)
    Snd (CmpXchg "w" "next" ("next" + #1)).                   (* L266–L269: → pack(seq, WLOCK) *)

(** [exclusive_unlock()] (L274–L280): RLOCK, confirm waiting readers,
    NOLOCK.  Also the release of a downgraded lock. *)
Definition rs_exclusive_unlock : val :=
  λ: "lk",
    let: "w" := Fst (Fst "lk") in
    let: "ri" := Snd (Fst "lk") in
    let: "n" := Snd "lk" in
    let: "ws" := !"w" in                            (* L275: load *)
    let: "base" := "ws" - ("ws" `rem` #4) in        (* L275: seq_of, packed back *)
    "w" <- "base" + #RLOCK;;                        (* L276: swap(pack(seq, RLOCK)); L277 fence omitted *)
    rs_abort_rollback "ri" "n" #0;;                 (* L278 *)
    "w" <- "base" + #NOLOCK.                        (* L279: swap(pack(seq, NOLOCK)) *)

(** [downgrade()] (L284–L289): WLOCK → RLOCK, confirm waiting readers. *)
Definition rs_downgrade : val :=
  λ: "lk",
    let: "w" := Fst (Fst "lk") in
    let: "ri" := Snd (Fst "lk") in
    let: "n" := Snd "lk" in
    let: "ws" := !"w" in                            (* L285 *)
    "w" <- "ws" - ("ws" `rem` #4) + #RLOCK;;        (* L286: swap; L287 fence omitted *)
    rs_abort_rollback "ri" "n" #0.                  (* L288 *)

(** [downgrade_unlock()] (L294–L304): RLOCK → NOLOCK. *)
Definition rs_downgrade_unlock : val :=
  λ: "lk",
    let: "w" := Fst (Fst "lk") in
    let: "ws" := !"w" in                            (* L295; L296–L300 debug_assert *)
    "w" <- "ws" - ("ws" `rem` #4) + #NOLOCK.        (* L303: swap(pack(seq_of(ws), NOLOCK)) *)

(** ** The abstract states *)

(** The transitions of the word: those of the C++ ([word_step]) and a
    writer's renewal of an HLOCK, [4s → 4s+4]. *)
Definition word_step_rs (a b : nat) : Prop := word_step a b ∨ (a mod 4 = 0 ∧ b = a + 4).

(** Leaving HLOCK is an acquisition (by a writer, or by a reader whose cell
    is non-empty) or a renewal (the word is HLOCK again). *)
Definition log_ok_rs (L : list entry) : Prop :=
  ∀ k a b, L !! k = Some a → L !! S k = Some b →
    word_step_rs a.1 b.1 ∧ (a.1 mod 4 = 0 → b.1 ≠ a.1 → busy b ∨ b.1 mod 4 = 0).

(** The pure invariant: [StrongTryRWLock.v]'s for the current state (with a
    one-entry log), and the log of the Rust lock. *)
Record inv_rs (N n : nat) (vs : list Z) (ph : gmap nat phase) (X : gset (nat * nat))
    (L : list entry) : Prop := {
  ir_base : inv_pure N n vs ph X [(n, present vs)];
  ir_last : last L = Some (n, present vs);
  ir_log : log_ok_rs L;
}.

(** Who announced which HLOCK: [A !! s = Some c] if the writer with identity
    [c] announced HLOCK of sequence [s]; [HW !! c] bounds the sequences [c]
    announced.  Every sequence [s ≥ 1] the word has reached was announced
    (a sequence starts only with a writer's HLOCK). *)
Definition authors_ok (n : nat) (A HW : gmap nat nat) : Prop :=
  (∀ s, 1 ≤ s → 4 * s ≤ n → is_Some (A !! s)) ∧
  (∀ s c, A !! s = Some c → ∃ h, HW !! c = Some h ∧ s ≤ h) ∧
  (∀ c h, HW !! c = Some h → 4 * h ≤ n).

(** ** Pure lemmas *)

Lemma word_step_rs_le a b : word_step_rs a b → a ≤ b.
Proof. unfold word_step_rs, word_step. lia. Qed.

Lemma log_ok_rs_single e : log_ok_rs [e].
Proof. intros [|k] a b; simpl; [done |]. by rewrite lookup_nil. Qed.

Lemma log_ok_rs_snoc L e e' :
  log_ok_rs L → last L = Some e → word_step_rs e.1 e'.1 →
  (e.1 mod 4 = 0 → e'.1 ≠ e.1 → busy e' ∨ e'.1 mod 4 = 0) →
  log_ok_rs (L ++ [e']).
Proof.
  intros Hok Hlast Hstep Hbusy k a b Ha Hb.
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

Lemma log_rs_words_mono L :
  log_ok_rs L → ∀ k j a b, k ≤ j → L !! k = Some a → L !! j = Some b → a.1 ≤ b.1.
Proof.
  intros Hok k j a b Hkj. revert b. induction Hkj as [| j Hkj IH]; intros b Ha Hb.
  - rewrite Ha in Hb. by injection Hb as ->.
  - destruct (lookup_lt_is_Some_2 L j) as [c Hc].
    { apply lookup_lt_Some in Hb. lia. }
    specialize (IH c Ha Hc). destruct (Hok j c b Hc Hb) as [Hs _].
    apply word_step_rs_le in Hs. lia.
Qed.

(** Between an index where the word is at most [m] (an HLOCK or a NOLOCK)
    and a later one where it is beyond, an entry is busy or is an HLOCK
    beyond [m]. *)
Lemma log_cross_rs L m j0 j1 a0 a1 :
  log_ok_rs L → m mod 4 = 0 ∨ m mod 4 = 3 → j0 ≤ j1 → L !! j0 = Some a0 → L !! j1 = Some a1 →
  a0.1 ≤ m → m < a1.1 →
  ∃ k e, j0 < k ∧ k ≤ j1 ∧ L !! k = Some e ∧ (busy e ∨ (e.1 mod 4 = 0 ∧ m < e.1)).
Proof.
  intros Hok Hm Hj. revert a1. induction Hj as [| j1 Hj IH]; intros a1 H0 H1 Ha0 Ha1.
  - rewrite H0 in H1. injection H1 as ->. lia.
  - destruct (lookup_lt_is_Some_2 L j1) as [c Hc].
    { apply lookup_lt_Some in H1. lia. }
    destruct (decide (m < c.1)) as [Hc' | Hc'].
    + destruct (IH c H0 Hc Ha0 Hc') as (k & e & ? & ? & ? & ?). exists k, e. eauto with lia.
    + exists (S j1), a1. split; [lia |]. split; [lia |]. split; [done |].
      destruct (Hok j1 c a1 Hc H1) as [Hs Hb].
      destruct (decide (c.1 mod 4 = 0)) as [Hc0 | Hc0].
      * destruct (Hb Hc0 ltac:(lia)) as [? | ?]; [by left | right; split; [done | lia]].
      * destruct Hs as [[Hs | [Hs | [Hs _]]] | [Hs _]]; [lia | | done | done].
        assert (c.1 = m) as Heq by lia. rewrite Heq in Hc0. right. split; [| lia].
        destruct Hm as [Hm | Hm]; [done |].
        rewrite Hs Heq (mod4_S m 3); done.
Qed.

(** The writer's argument: the word was at most [m] at the snapshot [L0]
    and is beyond [m] now ([L]). *)
Lemma log_busy_after_rs L0 L m e0 e :
  L0 `prefix_of` L → log_ok_rs L → last L0 = Some e0 → last L = Some e →
  m mod 4 = 0 ∨ m mod 4 = 3 → e0.1 ≤ m → m < e.1 →
  ∃ k b, length L0 ≤ S k ∧ L !! k = Some b ∧ (busy b ∨ (b.1 mod 4 = 0 ∧ m < b.1)).
Proof.
  intros Hpre Hok H0 H1 Hm Hs0 Hs1.
  assert (L0 ≠ []) by (intros ->; done). assert (L ≠ []) by (intros ->; done).
  rewrite last_lookup in H0. rewrite last_lookup in H1.
  assert (L !! pred (length L0) = Some e0) as H0'.
  { by eapply prefix_lookup. }
  assert (pred (length L0) ≤ pred (length L)).
  { apply prefix_length in Hpre. lia. }
  destruct (log_cross_rs L m _ _ e0 e Hok Hm ltac:(done) H0' H1 Hs0 Hs1) as (k & b & ? & ? & ? & ?).
  exists k, b. split; [lia | done].
Qed.

(** A state of the base invariant with a one-entry log. *)
Lemma ip_reset N n vs ph X L : inv_pure N n vs ph X L → inv_pure N n vs ph X [(n, present vs)].
Proof. intros []. split; [done.. | apply log_ok_single]. Qed.

(** A writer renews an HLOCK: [4s → 4s+4]. *)
Lemma ip_renew N n vs ph X L :
  inv_pure N n vs ph X L → n mod 4 = 0 → inv_pure N (n + 4) vs ph X [(n + 4, present vs)].
Proof.
  intros [Hlen Hsl Hdom Hwl Hcl Hlast Hlog] Hn0.
  pose proof (mod4_eq n 0 Hn0 ltac:(lia)) as Hq.
  split; [done | done | done | | | done | apply log_ok_single].
  - intros Hn1. exfalso. replace (n + 4) with (4 * (n `div` 4 + 1)) in Hn1 by lia.
    rewrite mod4_mul in Hn1. done.
  - intros s j Hx. destruct (Hcl s j Hx) as [Hle _]. split; [lia |]. intros Hs. lia.
Qed.

Lemma ir_same N n vs ph X L vs' ph' X' L' :
  inv_rs N n vs ph X L → inv_pure N n vs' ph' X' L' → present vs' = present vs →
  inv_rs N n vs' ph' X' L.
Proof. intros [_ Hl Hlog] Hip Hp. split; [by eapply ip_reset | by rewrite Hp | done]. Qed.

Lemma ir_step N n vs ph X L n' vs' ph' X' L' :
  inv_rs N n vs ph X L → inv_pure N n' vs' ph' X' L' →
  word_step_rs n n' → (n mod 4 = 0 → n' ≠ n → busy (n', present vs') ∨ n' mod 4 = 0) →
  inv_rs N n' vs' ph' X' (L ++ [(n', present vs')]).
Proof.
  intros [_ Hl Hlog] Hip Hs Hb. split; [by eapply ip_reset | apply last_snoc |].
  by apply (log_ok_rs_snoc L (n, present vs)).
Qed.

Lemma ir_cells N n vs ph X L vs' ph' X' L' :
  inv_rs N n vs ph X L → inv_pure N n vs' ph' X' L' →
  inv_rs N n vs' ph' X' (L ++ [(n, present vs')]).
Proof.
  intros Hi Hip. eapply ir_step; [exact Hi | exact Hip | by left; left |].
  intros _ Hne. congruence.
Qed.

Lemma ip_init_rlocked N :
  inv_pure N 2 (replicate N 0%Z) (map_seq 0 (replicate N Idle)) ∅ [(2, false)].
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

Lemma present_replicate_0 N : present (replicate N 0%Z) = false.
Proof.
  apply bool_decide_eq_false. intros (v & Hv%elem_of_replicate & Hne)%Exists_exists. lia.
Qed.

Lemma ir_init N : inv_rs N 3 (replicate N 0%Z) (map_seq 0 (replicate N Idle)) ∅ [(3, false)].
Proof.
  split.
  - rewrite present_replicate_0. apply ip_init.
  - by rewrite present_replicate_0.
  - apply log_ok_rs_single.
Qed.

Lemma ir_init_rlocked N :
  inv_rs N 2 (replicate N 0%Z) (map_seq 0 (replicate N Idle)) ∅ [(2, false)].
Proof.
  split.
  - rewrite present_replicate_0. apply ip_init_rlocked.
  - by rewrite present_replicate_0.
  - apply log_ok_rs_single.
Qed.

(** *** Authors *)

Lemma authors_ok_init n : n < 4 → authors_ok n ∅ ∅.
Proof.
  intros Hn. split; [| split].
  - intros s Hs Hs'. lia.
  - intros s c. by rewrite lookup_empty.
  - intros c h. by rewrite lookup_empty.
Qed.

Lemma authors_ok_mono n n' A HW :
  authors_ok n A HW → n ≤ n' → (∀ s, 1 ≤ s → 4 * s ≤ n' → 4 * s ≤ n) → authors_ok n' A HW.
Proof.
  intros (Ha & Hh & Hl) Hle Hs. split; [| split].
  - intros s H1 H2. apply Ha; [done | by apply Hs].
  - done.
  - intros c h Hc. specialize (Hl c h Hc). lia.
Qed.

Lemma authors_ok_announce n t c h A HW :
  authors_ok n A HW → HW !! c = Some h → n < 4 * t → 4 * t ≤ n + 4 →
  A !! t = None ∧ authors_ok (4 * t) (<[t:=c]> A) (<[c:=t]> HW).
Proof.
  intros (Ha & Hh & Hl) Hc Hn Hn'.
  assert (4 * h ≤ n) as Hhn by (by apply (Hl c h)).
  split.
  { destruct (A !! t) as [c' |] eqn:Ht; [| done].
    destruct (Hh t c' Ht) as (h' & Hh' & Hth'). specialize (Hl c' h' Hh'). lia. }
  split; [| split].
  - intros s H1 H2. destruct (decide (s = t)) as [-> | Hst].
    + rewrite lookup_insert. by eexists.
    + rewrite lookup_insert_ne //. apply Ha; [done | lia].
  - intros s c' Hs. destruct (decide (s = t)) as [-> | Hst].
    + rewrite lookup_insert in Hs. injection Hs as <-. exists t. by rewrite lookup_insert.
    + rewrite lookup_insert_ne // in Hs. destruct (Hh s c' Hs) as (h' & Hh' & Hsh').
      destruct (decide (c' = c)) as [-> | Hcc].
      * rewrite Hc in Hh'. injection Hh' as <-. exists t. rewrite lookup_insert. split; [done | lia].
      * exists h'. by rewrite lookup_insert_ne.
  - intros c' h' Hc'. destruct (decide (c' = c)) as [-> | Hcc].
    + rewrite lookup_insert in Hc'. injection Hc' as <-. lia.
    + rewrite lookup_insert_ne // in Hc'. specialize (Hl c' h' Hc'). lia.
Qed.

Lemma authors_ok_rival n c h A HW s :
  authors_ok n A HW → HW !! c = Some h → 1 ≤ s → 4 * s ≤ n → h < s →
  ∃ c', A !! s = Some c' ∧ c' ≠ c.
Proof.
  intros (Ha & Hh & Hl) Hc H1 H2 Hhs. destruct (Ha s H1 H2) as [c' Hc'].
  exists c'. split; [done |]. intros ->.
  destruct (Hh s c Hc') as (h' & Hh' & Hsh'). rewrite Hc in Hh'. injection Hh' as <-. lia.
Qed.

Lemma authors_ok_alloc n A HW c :
  authors_ok n A HW → HW !! c = None → authors_ok n A (<[c:=0]> HW).
Proof.
  intros (Ha & Hh & Hl) Hc. split; [done | split].
  - intros s c' Hs. destruct (Hh s c' Hs) as (h' & Hh' & ?).
    exists h'. rewrite lookup_insert_ne; [done |]. intros ->. congruence.
  - intros c' h' Hc'. destruct (decide (c' = c)) as [-> | Hcc].
    + rewrite lookup_insert in Hc'. injection Hc' as <-. lia.
    + rewrite lookup_insert_ne // in Hc'. by apply (Hl c').
Qed.

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
  log_rel (λ a b, word_step_rs a.1 b.1 ∧ (a.1 mod 4 = 0 → b.1 ≠ a.1 → busy b ∨ b.1 mod 4 = 0)) L.

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
Proof. apply log_rel_single. Qed.

Lemma log_ok_rs_snoc L e e' :
  log_ok_rs L → last L = Some e → word_step_rs e.1 e'.1 →
  (e.1 mod 4 = 0 → e'.1 ≠ e.1 → busy e' ∨ e'.1 mod 4 = 0) →
  log_ok_rs (L ++ [e']).
Proof. intros Hok Hlast Hs Hb. eapply log_rel_snoc; [done.. | split; done]. Qed.

Lemma log_rs_words_mono L :
  log_ok_rs L → ∀ k j a b, k ≤ j → L !! k = Some a → L !! j = Some b → a.1 ≤ b.1.
Proof. apply log_rel_words_mono. intros a b [Hs _]. by apply word_step_rs_le. Qed.

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
  destruct (log_snapshot L0 L e0 e Hpre H0 H1) as (H0' & H1' & Hle).
  destruct (log_cross_rs L m _ _ e0 e Hok Hm Hle H0' H1' Hs0 Hs1) as (k & b & ? & ? & ? & ?).
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

(** A reader that is not idle has a non-empty cell. *)
Lemma ip_present N n vs ph X L i p :
  inv_pure N n vs ph X L → ph !! i = Some p → p ≠ Idle → present vs = true.
Proof.
  intros Hip Hp Hne. destruct (ip_lookup _ _ _ _ _ _ Hip i p Hp) as (v & Hv & Hok).
  apply bool_decide_eq_true, Exists_exists. exists v. split; [by eapply elem_of_list_lookup_2 |].
  destruct p; simpl in Hok; [done | ..]; lia.
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

(** ** Ghost state *)

Class rwlockRsG Σ := RwlockRsG {
  rwlock_rs_baseG :> rwlockG Σ;
  rwlock_rs_mapG :> ghost_mapG Σ nat nat;
}.
Definition rwlockRsΣ : gFunctors := #[rwlockΣ; ghost_mapΣ nat nat].
Global Instance subG_rwlockRsΣ {Σ} : subG rwlockRsΣ Σ → rwlockRsG Σ.
Proof. solve_inG. Qed.

(** The ghost names of [StrongTryRWLock.v] and two maps: the authors of the
    HLOCK sequences, and every writer identity's bound. *)
Record lock_names_rs := LockNamesRs { rs_base :> lock_names; γ_auth : gname; γ_hw : gname }.

Definition rwRsN : namespace := nroot .@ "perdure" .@ "strong_try_rwlock_rs".

Section proof.
  Context `{!heapGS Σ, !rwlockRsG Σ}.
  Context (R : Qp → iProp Σ) `{!Fractional R}.
  Implicit Types (γ : lock_names_rs) (N n : nat) (L : list entry).
  Local Set Default Proof Using "All".

  Definition authors_at γ n : iProp Σ :=
    ∃ A HW, ghost_map_auth γ.(γ_auth) 1 A ∗ ([∗ map] s ↦ c ∈ A, s ↪[γ.(γ_auth)]□ c) ∗
            ghost_map_auth γ.(γ_hw) 1 HW ∗ ⌜authors_ok n A HW⌝.

  Definition lock_inv_rs γ (w ri : loc) N : iProp Σ :=
    ∃ n (vs : list Z) (ph : gmap nat phase) (X : gset (nat * nat)) L,
      w ↦ #n ∗ ri ↦∗ ((λ v : Z, #v) <$> vs) ∗
      mono_nat_auth_own γ.(γ_word) 1 n ∗ own γ.(γ_clean) (● X) ∗
      ghost_map_auth γ.(γ_phase) 1 ph ∗ own γ.(γ_log) (log_auth L) ∗
      ⌜inv_rs N n vs ph X L⌝ ∗ writer_part R γ N n ph ∗ authors_at γ n.

  Definition is_rwlock_rs γ (lk : val) N : iProp Σ :=
    ∃ w ri : loc, ⌜lk = (#w, #ri, #N)%V ∧ 0 < N⌝ ∗ inv rwRsN (lock_inv_rs γ w ri N).

  (** A writer identity. *)
  Definition wid γ (c : nat) : iProp Σ := ∃ h, c ↪[γ.(γ_hw)] h.

  (** At the snapshot [L0] or later, the word was HLOCK of a sequence [s]
      that the writer with identity [c' ≠ c] announced. *)
  Definition rival_since γ L0 (c : nat) : iProp Σ :=
    ∃ L1 k (e : entry) (s c' : nat), log_lb γ L1 ∗ s ↪[γ.(γ_auth)]□ c' ∗
      ⌜L0 `prefix_of` L1 ∧ length L0 ≤ S k ∧ L1 !! k = Some e ∧ e.1 = (4 * s)%nat ∧ c' ≠ c⌝.

  Global Instance is_rwlock_rs_persistent γ lk N : Persistent (is_rwlock_rs γ lk N).
  Proof. apply _. Qed.
  Global Instance rival_since_persistent γ L c : Persistent (rival_since γ L c).
  Proof. apply _. Qed.

  (** *** Authors *)
  Lemma authors_mono γ n n' :
    n ≤ n' → (∀ s, 1 ≤ s → 4 * s ≤ n' → 4 * s ≤ n) → authors_at γ n -∗ authors_at γ n'.
  Proof.
    iIntros (Hle Hs) "(%A & %HW & HA & HAs & HHW & %Hok)". iExists A, HW. iFrame.
    iPureIntro. by eapply authors_ok_mono.
  Qed.

  Lemma authors_hw γ n c h : authors_at γ n -∗ c ↪[γ.(γ_hw)] h -∗ ⌜4 * h ≤ n⌝.
  Proof.
    iIntros "(%A & %HW & HA & HAs & HHW & %Hok) Hc".
    iDestruct (ghost_map_lookup with "HHW Hc") as %Hc. iPureIntro. by apply Hok in Hc.
  Qed.

  Lemma authors_announce γ n t c h :
    n < 4 * t → 4 * t ≤ n + 4 →
    authors_at γ n -∗ c ↪[γ.(γ_hw)] h ==∗ authors_at γ (4 * t) ∗ c ↪[γ.(γ_hw)] t.
  Proof.
    iIntros (H1 H2) "(%A & %HW & HA & #HAs & HHW & %Hok) Hc".
    iDestruct (ghost_map_lookup with "HHW Hc") as %Hc.
    destruct (authors_ok_announce n t c h A HW Hok Hc H1 H2) as [Ht Hok'].
    iMod (ghost_map_insert_persist t c with "HA") as "[HA #Ht]"; [done |].
    iMod (ghost_map_update t with "HHW Hc") as "[HHW Hc]".
    iModIntro. iFrame "Hc". iExists _, _. iFrame. iSplit; [| done].
    rewrite big_sepM_insert //. by iFrame "Ht HAs".
  Qed.

  Lemma authors_rival γ n c h s :
    1 ≤ s → 4 * s ≤ n → h < s →
    authors_at γ n -∗ c ↪[γ.(γ_hw)] h -∗
    authors_at γ n ∗ c ↪[γ.(γ_hw)] h ∗ ∃ c', s ↪[γ.(γ_auth)]□ c' ∗ ⌜c' ≠ c⌝.
  Proof.
    iIntros (H1 H2 H3) "(%A & %HW & HA & #HAs & HHW & %Hok) Hc".
    iDestruct (ghost_map_lookup with "HHW Hc") as %Hc.
    destruct (authors_ok_rival n c h A HW s Hok Hc H1 H2 H3) as (c' & Hs & Hne).
    iDestruct (big_sepM_lookup with "HAs") as "#Hs"; [done |].
    iFrame "Hc". iSplitL; [iExists A, HW; by iFrame "∗ #" |].
    iExists c'. by iFrame "Hs".
  Qed.

  Lemma authors_alloc γ n : authors_at γ n ==∗ authors_at γ n ∗ ∃ c, wid γ c.
  Proof.
    iIntros "(%A & %HW & HA & HAs & HHW & %Hok)".
    set (c := fresh (dom HW)).
    assert (HW !! c = None) as Hc.
    { apply stdpp.fin_map_dom.not_elem_of_dom. apply is_fresh. }
    iMod (ghost_map_insert c 0 with "HHW") as "[HHW Hc]"; [done |].
    iModIntro. iSplitR "Hc"; [| iExists c, 0; done].
    iExists A, _. iFrame. iPureIntro. by apply authors_ok_alloc.
  Qed.

  (** The invariant, opened: the pattern every proof step uses. *)
  (* Closing the invariant, [iFrame] names the hypotheses that go back, in
     the invariant's order: a bare [iFrame] tries every spatial hypothesis,
     the most recent first, against the whole invariant, failing slowly on
     those that stay (up to 1.5 s a call). *)
  Local Ltac open_inv :=
    iInv rwRsN as (?n ?vs ?ph ?X ?L) "(>Hw & >Hri & >Hn & >HX & >Hph & >HL & >%Hir & Hwp & >Hau)";
    lazymatch goal with H : inv_rs _ _ _ _ _ _ |- _ => pose proof (ir_base _ _ _ _ _ _ H) as Hip end.

  Lemma rs_wid_alloc γ lk N E :
    ↑rwRsN ⊆ E → is_rwlock_rs γ lk N ={E}=∗ ∃ c, wid γ c.
  Proof.
    iIntros (HE) "(%w & %ri & _ & #Hinv)". open_inv.
    iMod (authors_alloc with "Hau") as "[Hau Hc]".
    iModIntro. iSplitR "Hc". { iNext. iExists n, vs, ph, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp Hau". done. }
    done.
  Qed.

  (** After a snapshot, whatever a try operation reports is relative to it. *)
  Lemma rs_snapshot γ lk N E :
    ↑rwRsN ⊆ E → is_rwlock_rs γ lk N ={E}=∗ ∃ L0, log_lb γ L0.
  Proof.
    iIntros (HE) "(%w & %ri & _ & #Hinv)". open_inv.
    iDestruct (log_lb_get with "HL") as "#Hlb".
    iModIntro. iSplitL. { iNext. iExists n, vs, ph, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp Hau". done. }
    iModIntro. by iExists _.
  Qed.


  (** *** Construction *)
  Lemma rs_new_lock_spec N :
    0 < N →
    {{{ R 1 }}} rs_new_lock #N
    {{{ lk γ, RET lk; is_rwlock_rs γ lk N ∗ ([∗ list] i ∈ seq 0 N, slot γ i) ∗
        log_lb γ [(3, false)] }}}.
  Proof.
    iIntros (HN Φ) "HR HΦ". wp_lam.
    wp_apply wp_allocN; [lia | done |]. iIntros (ri) "[Hri _]".
    wp_alloc w as "Hw". wp_pures.
    iMod (mono_nat_own_alloc 3) as (γn) "[Hn _]".
    iMod (own_alloc (● (∅ : gset (nat * nat)))) as (γX) "HX"; [by apply auth_auth_valid |].
    iMod (ghost_map_alloc (map_seq 0 (replicate N Idle))) as (γp) "[Hph Hslots]".
    iMod (ghost_var_alloc (None : option nat)) as (γw) "Hg".
    iMod (own_alloc (log_auth [(3, false)])) as (γl) "HL"; [apply mono_list_auth_valid |].
    iMod (ghost_map_alloc_empty (K:=nat) (V:=nat)) as (γa) "HA".
    iMod (ghost_map_alloc_empty (K:=nat) (V:=nat)) as (γh) "HHW".
    set γ := LockNamesRs (LockNames γn γX γp γw γl) γa γh.
    iDestruct (log_lb_get R γ with "HL") as "#Hlb".
    iMod (inv_alloc rwRsN _ (lock_inv_rs γ w ri N) with "[-HΦ Hslots]") as "#Hinv".
    { iNext. iExists 3, (replicate N 0%Z), (map_seq 0 (replicate N Idle)), ∅, [(3, false)].
      iFrame "Hw Hn HX Hph HL".
      rewrite fmap_replicate Nat2Z.id. iFrame "Hri". iSplit; [iPureIntro; apply ir_init |].
      iSplitR "HA HHW".
      - iLeft. iSplit; [iPureIntro; by right |]. iFrame.
        rewrite (R_halves R). iDestruct "HR" as "[$ HR]".
        rewrite (shares_all R); [by rewrite -(rq_sum R) |].
        intros i. rewrite lookup_map_seq_0. intros Hi. apply elem_of_list_lookup_2 in Hi.
        by apply elem_of_replicate in Hi as [? _].
      - iExists ∅, ∅. iFrame. rewrite big_sepM_empty. iSplit; [done |].
        iPureIntro. apply authors_ok_init. lia. }
    iModIntro. iApply "HΦ". iFrame "Hlb". iSplit.
    - iExists w, ri. iFrame "Hinv". done.
    - by iApply (slots_init R).
  Qed.

  (** [new] then [set_read_lock], at start-up: the lock is read-only
      ([RLOCK] of sequence 0) and its creator holds it as a downgraded
      writer. *)
  Lemma rs_new_lock_read_locked_spec N :
    0 < N →
    {{{ R 1 }}} rs_new_lock_read_locked #N
    {{{ lk γ, RET lk; is_rwlock_rs γ lk N ∗ ([∗ list] i ∈ seq 0 N, slot γ i) ∗
        downgraded γ ∗ R (1/2) ∗ log_lb γ [(2, false)] }}}.
  Proof.
    iIntros (HN Φ) "HR HΦ". wp_lam. wp_lam.
    wp_apply wp_allocN; [lia | done |]. iIntros (ri) "[Hri _]".
    wp_alloc w as "Hw". wp_pures. wp_lam. wp_pures. wp_load. wp_pures. wp_store.
    iMod (mono_nat_own_alloc 2) as (γn) "[Hn _]".
    iMod (own_alloc (● (∅ : gset (nat * nat)))) as (γX) "HX"; [by apply auth_auth_valid |].
    iMod (ghost_map_alloc (map_seq 0 (replicate N Idle))) as (γp) "[Hph Hslots]".
    iMod (ghost_var_alloc (Some 2 : option nat)) as (γw) "Hg".
    iEval (rewrite -Qp.half_half) in "Hg". iDestruct "Hg" as "[Hg Hg']".
    iMod (own_alloc (log_auth [(2, false)])) as (γl) "HL"; [apply mono_list_auth_valid |].
    iMod (ghost_map_alloc_empty (K:=nat) (V:=nat)) as (γa) "HA".
    iMod (ghost_map_alloc_empty (K:=nat) (V:=nat)) as (γh) "HHW".
    set γ := LockNamesRs (LockNames γn γX γp γw γl) γa γh.
    iDestruct (log_lb_get R γ with "HL") as "#Hlb".
    rewrite (R_halves R). iDestruct "HR" as "[HR HRc]".
    iMod (inv_alloc rwRsN _ (lock_inv_rs γ w ri N) with "[-HΦ Hslots Hg HRc]") as "#Hinv".
    { iNext. iExists 2, (replicate N 0%Z), (map_seq 0 (replicate N Idle)), ∅, [(2, false)].
      iFrame "Hw Hn HX Hph HL".
      rewrite fmap_replicate Nat2Z.id. iFrame "Hri". iSplit; [iPureIntro; apply ir_init_rlocked |].
      iSplitR "HA HHW".
      - iRight; iRight. iSplit; [done |]. iFrame.
        rewrite (shares_all R); [by rewrite -(rq_sum R) |].
        intros i. rewrite lookup_map_seq_0. intros Hi. apply elem_of_list_lookup_2 in Hi.
        by apply elem_of_replicate in Hi as [? _].
      - iExists ∅, ∅. iFrame. rewrite big_sepM_empty. iSplit; [done |].
        iPureIntro. apply authors_ok_init. lia. }
    iModIntro. iApply "HΦ". iFrame "Hlb HRc". iSplit; [| iSplitL "Hslots"].
    - iExists w, ri. iFrame "Hinv". done.
    - by iApply (slots_init R).
    - iExists 2. by iFrame.
  Qed.

  (** *** Readers *)
  Lemma rs_shared_unlock_spec γ lk N i :
    {{{ is_rwlock_rs γ lk N ∗ reader_locked γ i ∗ R (rq N) }}}
      rs_shared_unlock lk #i
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
    iDestruct (writer_part_give R _ _ _ _ i Idle with "HR Hwp") as "Hwp"; [done.. |].
    iMod (ghost_map_update Idle with "Hph Hslot") as "[Hph Hslot]".
    iMod (log_append R _ _ (n, present (<[i:=0%Z]> vs)) with "HL") as "HL".
    iModIntro. iSplitR "HΦ Hslot".
    { iNext. iExists n, _, _, X, _. iFrame "Hw Hri Hn HX Hph HL Hwp Hau". iPureIntro.
      eapply ir_cells; [exact Hir |]. apply (ip_leave _ _ _ _ _ _ Hip i Holding); auto. }
    by iApply "HΦ".
  Qed.

  (** The roll-back of an arrival after seeing WLOCK (L207): it stands if a
      writer's [abort_rollback] confirmed it meanwhile. *)
  Lemma rs_rollback_spec γ w ri N i L0 :
    {{{ inv rwRsN (lock_inv_rs γ w ri N) ∗ i ↪[γ.(γ_phase)] Rolling ∗ excl_since γ L0 }}}
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
      iMod (log_append R _ _ (n, present (<[i:=0%Z]> vs)) with "HL") as "HL".
      iDestruct (writer_part_other R _ _ _ _ i Rolling Idle with "Hwp") as "Hwp"; [done.. |].
      iModIntro. iSplitR "HΦ Hslot".
      { iNext. iExists n, _, _, X, _. iFrame "Hw Hri Hn HX Hph HL Hwp Hau". iPureIntro.
        eapply ir_cells; [exact Hir |]. apply (ip_leave _ _ _ _ _ _ Hip i Rolling); auto. }
      iApply "HΦ". iLeft. iSplit; [done |]. by iFrame.
    - destruct (ip_rollback_hold _ _ _ _ _ _ Hip i Hpi Hv) as [Hn1 Hip'].
      iMod (ghost_map_update Holding with "Hph Hslot") as "[Hph Hslot]".
      iDestruct (writer_part_take R _ _ _ _ i Rolling with "Hwp") as "[HR Hwp]"; [done.. |].
      iModIntro. iSplitR "HΦ Hslot HR".
      { iNext. iExists n, _, _, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp Hau". iPureIntro.
        eapply ir_same; [exact Hir | exact Hip' |]. by apply (present_insert_same vs i 2%Z). }
      iApply "HΦ". iRight. by iFrame.
  Qed.

  Lemma shared_settle_spec γ w ri N (i ws : nat) L0 :
    {{{ inv rwRsN (lock_inv_rs γ w ri N) ∗
        ((⌜ws mod 4 = 1⌝ ∗ i ↪[γ.(γ_phase)] Rolling ∗ excl_since γ L0) ∨
         (⌜ws mod 4 ≠ 1⌝ ∗ reader_locked γ i ∗ R (rq N))) }}}
      rs_shared_settle #ri #i #ws
    {{{ (b : bool), RET #b;
        if b then reader_locked γ i ∗ R (rq N) else slot γ i ∗ excl_since γ L0 }}}.
  Proof.
    iIntros (Φ) "(#Hinv & [(%Hws & Hslot & #Hex) | (%Hws & Hslot & HR)]) HΦ";
      wp_lam; wp_pures; rewrite Z_rem4.
    - rewrite Hws. wp_pures.
      wp_apply (rs_rollback_spec with "[$Hinv $Hslot $Hex]").
      iIntros (v) "[(-> & Hslot & _) | (% & Hslot & HR)]".
      + wp_pures. iApply "HΦ". by iFrame.
      + wp_pures. rewrite bool_decide_false; [| by intros [=]].
        iApply "HΦ". by iFrame.
    - rewrite bool_decide_false; [| rewrite val_int_eq; lia]. wp_pures.
      iApply "HΦ". by iFrame.
  Qed.

  Lemma rs_shared_try_lock_spec γ lk N (i : nat) L0 :
    {{{ is_rwlock_rs γ lk N ∗ slot γ i ∗ log_lb γ L0 }}}
      rs_shared_try_lock lk #i
    {{{ (b : bool), RET #b;
        if b then reader_locked γ i ∗ R (rq N) else slot γ i ∗ excl_since γ L0 }}}.
  Proof.
    iIntros (Φ) "((%w & %ri & [-> %HN] & #Hinv) & Hslot & #HL0) HΦ".
    wp_lam. wp_pures.
    (* L185: [if state_of(load) == WLOCK return false] *)
    wp_bind (! _)%E. open_inv. wp_load.
    iDestruct (log_prefix R with "HL HL0") as %Hpre.
    iDestruct (log_lb_get R with "HL") as "#HL1".
    iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp Hau".
    { iNext. iExists n, vs, ph, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp Hau". done. }
    wp_pures. rewrite Z_rem4. case_bool_decide as Hb; rewrite val_int_eq in Hb.
    { wp_pures. iApply "HΦ". iFrame "Hslot". iApply (excl_now R _ _ L n with "HL1"); [done | | lia].
      apply (ir_last _ _ _ _ _ _ Hir). }
    wp_pures.
    (* L188: arrive *)
    wp_bind (_ <- _)%E. iClear "HL1". clear dependent n vs ph X L. open_inv.
    iDestruct (ghost_map_lookup with "Hph Hslot") as %Hpi.
    assert (i < N) as Hi by (by eapply ip_dom).
    destruct (ip_lookup _ _ _ _ _ _ Hip i _ Hpi) as (v & Hv & Hok).
    iDestruct (update_array ri _ _ i #v with "Hri") as "[Hri_i Hri_close]".
    { by rewrite list_lookup_fmap Hv. }
    wp_store. iDestruct ("Hri_close" with "Hri_i") as "Hri".
    rewrite -(list_fmap_insert (λ v : Z, #v) vs i 1%Z).
    iMod (ghost_map_update Arrived with "Hph Hslot") as "[Hph Hslot]".
    iMod (log_append R _ _ (n, present (<[i:=1%Z]> vs)) with "HL") as "HL".
    iDestruct (writer_part_other R _ _ _ _ i Idle Arrived with "Hwp") as "Hwp"; [done.. |].
    iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp Hau".
    { iNext. iExists n, (<[i:=1%Z]> vs), (<[i:=Arrived]> ph), X,
        (L ++ [(n, present (<[i:=1%Z]> vs))]). iFrame "Hw Hri Hn HX Hph HL Hwp Hau". iPureIntro.
      eapply ir_cells; [exact Hir |]. by apply ip_arrive. }
    wp_pures.
    (* L190: [ws = wstate.load()] *)
    wp_bind (! _)%E. clear dependent n vs ph X L v. open_inv. wp_load.
    iDestruct (ghost_map_lookup with "Hph Hslot") as %Hpi.
    iDestruct (log_prefix R with "HL HL0") as %Hpre.
    iDestruct (log_lb_get R with "HL") as "#HL1".
    iDestruct (mono_nat_lb_own_get with "Hn") as "#Hlb".
    destruct (mod4_cases n) as [H0 | [H1 | H23]].
    - (* HLOCK: try to beat the writer (L191–L199) *)
      set (s := n `div` 4). assert (n = 4 * s) as Hns by (pose proof (mod4_eq n 0 H0); unfold s; lia).
      iMod (ghost_map_update (CasP s) with "Hph Hslot") as "[Hph Hslot]".
      iDestruct (writer_part_other R _ _ _ _ i Arrived (CasP s) with "Hwp") as "Hwp"; [done.. |].
      iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp Hau".
      { iNext. iExists n, vs, (<[i:=CasP s]> ph), X, L. iFrame "Hw Hri Hn HX Hph HL Hwp Hau". iPureIntro.
        eapply ir_same; [exact Hir | | done].
        apply (ip_set_phase _ _ _ _ _ _ Hip i Arrived); [done | done | done | lia |].
        intros s' _ Hs'. assert (s' = s) as -> by lia. by right; right. }
      wp_pures. rewrite Z_rem4 H0. wp_pures.
      wp_bind (CmpXchg _ _ _). iClear "HL1". clear dependent vs ph X L. open_inv.
      iDestruct (ghost_map_lookup with "Hph Hslot") as %Hpi.
      destruct (decide (n0 = n)) as [-> | Hne].
      + (* the reader wins (L198): HLOCK → NOLOCK *)
        wp_cmpxchg_suc.
        assert (present vs = true) as Hpres by (eapply ip_present; [exact Hip | exact Hpi | done]).
        iDestruct (writer_part_take R _ _ _ _ i (CasP s) with "Hwp") as "[HR Hwp]"; [done | done | done | lia |].
        iMod (ghost_map_update Holding with "Hph Hslot") as "[Hph Hslot]".
        iMod (mono_nat_own_update (n + 3) with "Hn") as "[Hn _]"; [lia |].
        iMod (log_append R _ _ (n + 3, present vs) with "HL") as "HL".
        iDestruct "Hwp" as "[(_ & Hg & HRw & Hs) | [(%Hbad & _) | (%Hbad & _)]]"; [| lia | lia].
        iModIntro. iSplitR "HΦ Hslot HR".
        { iNext. iExists (n + 3), vs, (<[i:=Holding]> ph), X, (L ++ [(n + 3, present vs)]).
          replace (Z.of_nat n + 3)%Z with (Z.of_nat (n + 3)) by lia. iFrame "Hw Hri Hn HX Hph HL".
          iSplit.
          { iPureIntro. eapply ir_step; [exact Hir | | left; right; right; split; [done | lia] |].
            - replace (n + 3) with (4 * s + 3) by lia. apply (ip_cas_win _ _ _ _ _ _ Hip i s Hpi Hns).
            - intros _ _. left. unfold busy. simpl. by right; right. }
          iSplitR "Hau".
          { iLeft. iFrame. iPureIntro. right. rewrite Hns mod4_add. done. }
          iApply (authors_mono with "Hau"); lia. }
        wp_pures. iApply "HΦ". by iFrame.
      + (* the CAS failed (L199): settle on the word it returned *)
        wp_cmpxchg_fail; [intros [=]; lia |].
        iDestruct (mono_nat_lb_own_valid with "Hn Hlb") as %[_ Hle].
        iDestruct (log_prefix R with "HL HL0") as %Hpre'.
        iDestruct (log_lb_get R with "HL") as "#HL2".
        assert (∀ s', (s', i) ∈ X → n0 = 4 * s' → False) as Hnc.
        { intros s' Hx Hs'. destruct (ip_clean_at _ _ _ _ _ _ Hip s' i (CasP s) Hpi Hx Hs')
            as [? | [? | ?]]; simplify_eq; lia. }
        destruct (decide (n0 mod 4 = 1)) as [Hn1 | Hn1].
        * iMod (ghost_map_update Rolling with "Hph Hslot") as "[Hph Hslot]".
          iDestruct (writer_part_other R _ _ _ _ i (CasP s) Rolling with "Hwp") as "Hwp"; [done.. |].
          iAssert (excl_since γ L0) as "#Hex".
          { iApply (excl_now R _ _ L n0 with "HL2"); [done | apply (ir_last _ _ _ _ _ _ Hir) | done]. }
          iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp Hau".
          { iNext. iExists n0, vs, (<[i:=Rolling]> ph), X, L.
            iFrame "Hw Hri Hn HX Hph HL Hwp Hau". iPureIntro.
            eapply ir_same; [exact Hir | | done].
            apply (ip_set_phase _ _ _ _ _ _ Hip i (CasP s)); try done.
            intros s' Hx Hs'. by destruct (Hnc s' Hx Hs'). }
          wp_pures.
          wp_apply (shared_settle_spec _ _ _ _ i n0 L0 with "[$Hinv Hslot]"); [iLeft; by iFrame "Hslot Hex" |].
          iIntros (b) "Hb". by iApply "HΦ".
        * iDestruct (writer_part_take R _ _ _ _ i (CasP s) with "Hwp") as "[HR Hwp]"; [done.. |].
          iMod (ghost_map_update Holding with "Hph Hslot") as "[Hph Hslot]".
          iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp Hau".
          { iNext. iExists n0, vs, (<[i:=Holding]> ph), X, L.
            iFrame "Hw Hri Hn HX Hph HL Hwp Hau". iPureIntro.
            eapply ir_same; [exact Hir | | done].
            apply (ip_set_phase _ _ _ _ _ _ Hip i (CasP s)); try done.
            intros s' Hx Hs'. by destruct (Hnc s' Hx Hs'). }
          wp_pures.
          wp_apply (shared_settle_spec _ _ _ _ i n0 L0 with "[$Hinv Hslot HR]"); [iRight; by iFrame |].
          iIntros (b) "Hb". by iApply "HΦ".
    - (* WLOCK: roll back (L202, L207) *)
      iMod (ghost_map_update Rolling with "Hph Hslot") as "[Hph Hslot]".
      iDestruct (writer_part_other R _ _ _ _ i Arrived Rolling with "Hwp") as "Hwp"; [done.. |].
      iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp Hau".
      { iNext. iExists n, vs, (<[i:=Rolling]> ph), X, L. iFrame "Hw Hri Hn HX Hph HL Hwp Hau". iPureIntro.
        eapply ir_same; [exact Hir | | done].
        apply (ip_set_phase _ _ _ _ _ _ Hip i Arrived); try done.
        intros s' _ Hs'. rewrite Hs' mod4_mul in H1. done. }
      iAssert (excl_since γ L0) as "#Hex".
      { iApply (excl_now R _ _ L n with "HL1"); [done | apply (ir_last _ _ _ _ _ _ Hir) | done]. }
      wp_pures. rewrite Z_rem4 H1. wp_pures.
      wp_apply (shared_settle_spec _ _ _ _ i n L0 with "[$Hinv Hslot]"); [iLeft; by iFrame "Hslot Hex" |].
      iIntros (b) "Hb". by iApply "HΦ".
    - (* RLOCK or NOLOCK: the reader is in (L202–L203) *)
      iDestruct (writer_part_take R _ _ _ _ i Arrived with "Hwp") as "[HR Hwp]"; [done | done | done | lia |].
      iMod (ghost_map_update Holding with "Hph Hslot") as "[Hph Hslot]".
      iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp Hau".
      { iNext. iExists n, vs, (<[i:=Holding]> ph), X, L. iFrame "Hw Hri Hn HX Hph HL Hwp Hau". iPureIntro.
        eapply ir_same; [exact Hir | | done].
        apply (ip_set_phase _ _ _ _ _ _ Hip i Arrived); try done; [lia |].
        intros s' _ Hs'. rewrite Hs' mod4_mul in H23. lia. }
      wp_pures. rewrite Z_rem4 bool_decide_false; [| rewrite val_int_eq; lia]. wp_pures.
      wp_apply (shared_settle_spec _ _ _ _ i n L0 with "[$Hinv Hslot HR]"); [iRight; iFrame; iPureIntro; lia |].
      iIntros (b) "Hb". by iApply "HΦ".
  Qed.

  (** *** Writers *)

  Lemma rs_readers_empty_spec γ w ri N m L0 (i : nat) :
    {{{ inv rwRsN (lock_inv_rs γ w ri N) ∗ mono_nat_lb_own γ.(γ_word) m ∗ log_lb γ L0 ∗
        ⌜i ≤ N⌝ ∗ [∗ list] j ∈ seq 0 i, cop γ m j }}}
      rs_readers_empty #ri #N #i
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
      iDestruct (log_prefix R with "HL HL0") as %Hpre.
      iDestruct (log_lb_get R with "HL") as "#HL1".
      destruct (decide (v = 0%Z)) as [-> | Hv0].
      + (* empty: a clean witness, or the word has moved on *)
        iDestruct (mono_nat_lb_own_valid with "Hn Hm") as %[_ Hmn].
        iDestruct (mono_nat_lb_own_get with "Hn") as "#Hlbn".
        iAssert (|==> ∃ X', own γ.(γ_clean) (● X') ∗ ⌜inv_rs N n vs ph X' L⌝ ∗ cop γ m i)%I
          with "[HX]" as ">(%X' & HX & %Hir' & #Hc)".
        { destruct (decide (m mod 4 = 0)) as [Hm0 | Hm0].
          2: { iModIntro. iExists X. iFrame. iSplit; [done | by iLeft]. }
          destruct (decide (n = m)) as [-> | Hne].
          - iMod (clean_add R _ X (m `div` 4, i) with "HX") as "[HX Hc]".
            iModIntro. iExists _. iSplitL "HX"; [done |]. iSplit; [| iRight; by iLeft].
            iPureIntro. eapply ir_same; [exact Hir | | done].
            apply (ip_clean_add _ _ _ _ _ _ Hip); [| done].
            pose proof (mod4_eq m 0 Hm0). lia.
          - iModIntro. iExists X. iFrame. iSplit; [done |]. iRight; iRight.
            iApply (mono_nat_lb_own_le with "Hlbn"). lia. }
        iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp Hau".
        { iNext. iExists n, vs, ph, X', L. iFrame "Hw Hri Hn HX Hph HL Hwp Hau". done. }
        wp_op. wp_if. wp_op.
        replace (Z.of_nat i + 1)%Z with (Z.of_nat (S i)) by lia.
        iApply ("IH" $! (S i) with "[%] [Hcops] HΦ"); [lia |].
        rewrite seq_S big_sepL_app /=. by iFrame "Hcops Hc".
      + iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp Hau".
        { iNext. iExists n, vs, ph, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp Hau". done. }
        wp_pures. rewrite bool_decide_false; [| rewrite val_int_eq; lia]. wp_pures.
        iApply "HΦ". iApply (busy_now R _ L0 L (n, present vs) Hpre (ir_last _ _ _ _ _ _ Hir) with "HL1").
        right; right. apply bool_decide_eq_true, Exists_exists. exists v.
        split; [by eapply elem_of_list_lookup_2 | done].
    - assert (i = N) as -> by lia. iApply "HΦ". done.
  Qed.

  (** [abort_rollback], by the writer that has just stored RLOCK ([m]). *)
  Lemma rs_abort_rollback_spec γ w ri N m (i : nat) :
    m mod 4 = 2 →
    {{{ inv rwRsN (lock_inv_rs γ w ri N) ∗ ghost_var γ.(γ_writer) (1/2) (Some m) }}}
      rs_abort_rollback #ri #N #i
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
    iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp Hau".
    { iNext. iExists n, vs, ph, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp Hau". done. }
    clear dependent n vs ph X L.
    wp_op. case_bool_decide; wp_if.
    - wp_bind (CmpXchg _ _ _). wp_pures. open_inv.
      destruct (ip_vs_lookup _ _ _ _ _ _ Hip i HiN) as [v' Hv].
      iDestruct (update_array ri _ _ i #v' with "Hri") as "[Hri_i Hri_close]".
      { by rewrite list_lookup_fmap Hv. }
      destruct (decide (v' = 1%Z)) as [-> | Hne].
      + wp_cmpxchg_suc. iDestruct (writer_part_agree R with "Hwp Hg") as %->.
        iDestruct ("Hri_close" with "Hri_i") as "Hri".
        rewrite -(list_fmap_insert (λ v : Z, #v) vs i 2%Z).
        iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp Hau".
        { iNext. iExists m, (<[i:=2%Z]> vs), ph, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp Hau". iPureIntro.
          eapply ir_same; [exact Hir | by apply ip_mark |]. by apply (present_insert_same vs i 1%Z). }
        wp_proj. wp_seq. wp_op. replace (Z.of_nat i + 1)%Z with (Z.of_nat (S i)) by lia.
        by iApply ("IH" with "Hg HΦ").
      + wp_cmpxchg_fail. iDestruct ("Hri_close" with "Hri_i") as "Hri".
        rewrite list_insert_id; [| by rewrite list_lookup_fmap Hv].
        iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp Hau".
        { iNext. iExists n, vs, ph, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp Hau". done. }
        wp_proj. wp_seq. wp_op. replace (Z.of_nat i + 1)%Z with (Z.of_nat (S i)) by lia.
        by iApply ("IH" with "Hg HΦ").
    - wp_seq. wp_op. replace (Z.of_nat i + 1)%Z with (Z.of_nat (S i)) by lia.
      by iApply ("IH" with "Hg HΦ").
  Qed.

  (** The holder reads the word: it is its own. *)
  Lemma rs_load_own_spec γ w ri N (m : nat) :
    {{{ inv rwRsN (lock_inv_rs γ w ri N) ∗ ghost_var γ.(γ_writer) (1/2) (Some m) }}}
      ! #w
    {{{ RET #m; ghost_var γ.(γ_writer) (1/2) (Some m) }}}.
  Proof.
    iIntros (Φ) "(#Hinv & Hg) HΦ". open_inv.
    wp_load. iDestruct (writer_part_agree R with "Hwp Hg") as %->.
    iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp Hau".
    { iNext. iExists m, vs, ph, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp Hau". done. }
    by iApply "HΦ".
  Qed.

  (** WLOCK → RLOCK ([exclusive_unlock] L276, [downgrade] L286). *)
  Lemma rs_rlock_spec γ w ri N m :
    0 < N → m mod 4 = 1 →
    {{{ inv rwRsN (lock_inv_rs γ w ri N) ∗ ghost_var γ.(γ_writer) (1/2) (Some m) ∗ R 1 }}}
      #w <- #(S m)
    {{{ RET #(); ghost_var γ.(γ_writer) (1/2) (Some (S m)) ∗ R (1/2) }}}.
  Proof.
    iIntros (HN Hm Φ) "(#Hinv & Hg & HR) HΦ". open_inv.
    wp_store. iDestruct (writer_part_agree R with "Hwp Hg") as %->.
    iDestruct "Hwp" as "[(%Hbad & _) | [(_ & Hg') | (%Hbad & _)]]"; [lia | | lia].
    iMod (ghost_var_update_halves (Some (S m)) with "Hg Hg'") as "[Hg Hg']".
    iMod (mono_nat_own_update (S m) with "Hn") as "[Hn _]"; [lia |].
    iMod (log_append R _ _ (S m, present vs) with "HL") as "HL".
    rewrite (R_halves R). iDestruct "HR" as "[HR HRr]".
    iModIntro. iSplitR "HΦ Hg HR".
    { iNext. iExists (S m), vs, ph, X, (L ++ [(S m, present vs)]). iFrame "Hw Hri Hn HX Hph HL". iSplit.
      { iPureIntro. eapply ir_step; [exact Hir | apply ip_word_succ; [done | lia] | by left; right; left |].
        intros Hm0. exfalso. lia. }
      iSplitR "Hau".
      - iRight; iRight. iFrame. iSplit.
        { iPureIntro. by rewrite (mod4_S m 1). }
        rewrite (shares_all R); [by rewrite -(rq_sum R); [| lia] |].
        intros i. by destruct (ip_wlock _ _ _ _ _ _ Hip Hm i).
      - iApply (authors_mono with "Hau"); [lia |]. intros s' _ Hs'.
        pose proof (mod4_eq m 1 Hm). lia. }
    iApply "HΦ". by iFrame.
  Qed.

  (** RLOCK → NOLOCK ([exclusive_unlock] L279, [downgrade_unlock] L303). *)
  Lemma rs_release_spec γ w ri N m :
    m mod 4 = 2 →
    {{{ inv rwRsN (lock_inv_rs γ w ri N) ∗ ghost_var γ.(γ_writer) (1/2) (Some m) ∗ R (1/2) }}}
      #w <- #(S m)
    {{{ RET #(); True }}}.
  Proof.
    iIntros (Hm Φ) "(#Hinv & Hg & HR) HΦ". open_inv.
    wp_store. iDestruct (writer_part_agree R with "Hwp Hg") as %->.
    iDestruct "Hwp" as "[(%Hbad & _) | [(%Hbad & _) | (_ & Hg' & Hs)]]"; [lia | lia |].
    iMod (ghost_var_update_halves None with "Hg Hg'") as "[Hg Hg']".
    iCombine "Hg Hg'" as "Hg".
    iMod (mono_nat_own_update (S m) with "Hn") as "[Hn _]"; [lia |].
    iMod (log_append R _ _ (S m, present vs) with "HL") as "HL".
    iModIntro. iSplitR "HΦ".
    { iNext. iExists (S m), vs, ph, X, (L ++ [(S m, present vs)]). iFrame "Hw Hri Hn HX Hph HL". iSplit.
      { iPureIntro. eapply ir_step; [exact Hir | apply ip_word_succ; [done | lia] | by left; right; left |].
        intros Hm0. exfalso. lia. }
      iSplitR "Hau".
      - iLeft. iFrame. iPureIntro. right. by rewrite (mod4_S m 2).
      - iApply (authors_mono with "Hau"); [lia |]. intros s' _ Hs'.
        pose proof (mod4_eq m 2 Hm). lia. }
    by iApply "HΦ".
  Qed.

  (** A writer's failure after it saw the word at [m] (an HLOCK or a
      NOLOCK), the word being beyond [m] now: a busy state, or the HLOCK of
      a sequence beyond [m], which the writer [c] did not announce (it has
      announced none beyond [h], [4h ≤ m]). *)
  Lemma conflict_since γ L0 L1 L e0 m c h n pv :
    L0 `prefix_of` L1 → last L1 = Some e0 → e0.1 ≤ m → m mod 4 = 0 ∨ m mod 4 = 3 →
    4 * h ≤ m → log_ok_rs L → last L = Some (n, pv) → m < n →
    own γ.(γ_log) (log_auth L) -∗ log_lb γ L1 -∗ authors_at γ n -∗ c ↪[γ.(γ_hw)] h -∗
    own γ.(γ_log) (log_auth L) ∗ authors_at γ n ∗ c ↪[γ.(γ_hw)] h ∗
      (busy_since γ L0 ∨ rival_since γ L0 c).
  Proof.
    iIntros (Hp01 Hl1 He0 Hm Hh Hok Hl Hn) "HL #HL1 Hau Hc".
    iDestruct (log_prefix R with "HL HL1") as %Hp1.
    iDestruct (log_lb_get R with "HL") as "#HL2".
    apply prefix_length in Hp01 as Hlen.
    destruct (log_busy_after_rs L1 L m e0 (n, pv) Hp1 Hok Hl1 Hl Hm He0 Hn)
      as (k & b & Hk & Hb & [Hbusy | [Hb0 Hbm]]).
    - iFrame. iLeft. iExists L, k, b. iFrame "HL2". iPureIntro.
      split; [by trans L1 |]. split; [lia | done].
    - set (s := b.1 `div` 4).
      assert (b.1 = 4 * s) as Hbs by (pose proof (mod4_eq b.1 0 Hb0); unfold s; lia).
      assert (b.1 ≤ n).
      { rewrite last_lookup in Hl.
        apply (log_rs_words_mono L Hok k (pred (length L)) b (n, pv)); [| done | done].
        apply lookup_lt_Some in Hb. lia. }
      iDestruct (authors_rival _ _ c h s with "Hau Hc") as "(Hau & Hc & %c' & #Hs & %Hne)";
        [lia | lia | lia |].
      iFrame. iRight. iExists L, k, b, s, c'. iFrame "HL2 Hs". iPureIntro.
      split; [by trans L1 |]. split; [lia |]. done.
  Qed.

  (** L252–L259: the CAS of the word the writer loaded ([n0], an HLOCK or a
      NOLOCK) to HLOCK of the next sequence, [nx = 4t]. *)
  Lemma announce_spec γ w ri N n0 nx t c h L0 L1 e1 :
    n0 mod 4 = 0 ∨ n0 mod 4 = 3 → t = n0 `div` 4 + 1 → nx = 4 * t → 4 * h ≤ n0 →
    L0 `prefix_of` L1 → last L1 = Some e1 → e1.1 = n0 →
    {{{ inv rwRsN (lock_inv_rs γ w ri N) ∗ mono_nat_lb_own γ.(γ_word) n0 ∗ log_lb γ L1 ∗
        c ↪[γ.(γ_hw)] h }}}
      CmpXchg #w #n0 #nx
    {{{ v (b : bool), RET (v, #b)%V;
        if b then c ↪[γ.(γ_hw)] t ∗ mono_nat_lb_own γ.(γ_word) nx ∗
          ∃ L2 e2, log_lb γ L2 ∗ ⌜L0 `prefix_of` L2 ∧ last L2 = Some e2 ∧ e2.1 = nx⌝
        else c ↪[γ.(γ_hw)] h ∗ (busy_since γ L0 ∨ rival_since γ L0 c) }}}.
  Proof.
    iIntros (H03 Ht Hnx Hh Hp01 Hl1 He1 Φ) "(#Hinv & #Hlb & #HL1 & Hc) HΦ". open_inv.
    iDestruct (mono_nat_lb_own_valid with "Hn Hlb") as %[_ Hle].
    pose proof (Nat.div_mod n0 4 ltac:(lia)) as Hq.
    assert (n0 < 4 * t ∧ 4 * t ≤ n0 + 4) as [Ht1 Ht2] by (subst t; destruct H03; lia).
    destruct (decide (n = n0)) as [-> | Hne].
    - wp_cmpxchg_suc.
      iMod (authors_announce _ _ t with "Hau Hc") as "[Hau Hc]"; [lia | lia |].
      rewrite -Hnx.
      iMod (mono_nat_own_update nx with "Hn") as "[Hn #Hlb']"; [lia |].
      iMod (log_append R _ _ (nx, present vs) with "HL") as "HL".
      iDestruct (log_lb_get R with "HL") as "#HL2".
      iDestruct (log_prefix R with "HL HL1") as %Hp12.
      iDestruct "Hwp" as "[(_ & Hg & HR & Hs) | [(%Hbad & _) | (%Hbad & _)]]";
        [| destruct H03; lia | destruct H03; lia].
      iModIntro. iSplitR "HΦ Hc".
      { iNext. iExists nx, vs, ph, X, (L ++ [(nx, present vs)]). iFrame "Hw Hri Hn HX Hph HL Hau". iSplit.
        { iPureIntro. destruct H03 as [H0 | H3].
          - eapply ir_step; [exact Hir | | right; split; [done | lia] |].
            + replace nx with (n0 + 4) by lia. by apply (ip_renew _ _ _ _ _ _ Hip).
            + intros _ _. right. rewrite Hnx. apply mod4_mul.
          - eapply ir_step; [exact Hir | | left; right; left; lia |].
            + replace nx with (S n0) by lia. apply ip_word_succ; [done | lia].
            + intros Hc0. exfalso. lia. }
        iLeft. iFrame. iPureIntro. left. rewrite Hnx. apply mod4_mul. }
      iApply "HΦ". iFrame "Hc Hlb'". iExists _, _. iFrame "HL2". iPureIntro.
      split; [| split; [apply last_snoc | done]].
      by trans L1.
    - wp_cmpxchg_fail; [intros [=]; lia |].
      iDestruct (conflict_since _ L0 L1 L e1 n0 c h n (present vs) with "HL HL1 Hau Hc")
        as "(HL & Hau & Hc & Hres)";
        [done | done | lia | done | done | apply (ir_log _ _ _ _ _ _ Hir) | apply (ir_last _ _ _ _ _ _ Hir) | lia |].
      iModIntro. iSplitR "HΦ Hc Hres".
      { iNext. iExists n, vs, ph, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp Hau". done. }
      iApply "HΦ". iFrame.
  Qed.

  (** L266–L269: HLOCK → WLOCK, having found every cell empty while the
      word was the writer's own HLOCK ([4t]). *)
  Lemma acquire_rs_spec γ w ri N nx t c L0 L2 e2 :
    nx = 4 * t → 0 < N → L0 `prefix_of` L2 → last L2 = Some e2 → e2.1 = nx →
    {{{ inv rwRsN (lock_inv_rs γ w ri N) ∗ ([∗ list] j ∈ seq 0 N, cop γ nx j) ∗
        mono_nat_lb_own γ.(γ_word) nx ∗ log_lb γ L2 ∗ c ↪[γ.(γ_hw)] t }}}
      CmpXchg #w #nx #(nx + 1)
    {{{ v (b : bool), RET (v, #b)%V; c ↪[γ.(γ_hw)] t ∗
        if b then writer_locked γ ∗ R 1 else busy_since γ L0 ∨ rival_since γ L0 c }}}.
  Proof.
    iIntros (Hnx HN Hp02 Hl2 He2 Φ) "(#Hinv & #Hcops & #Hlb & #HL2 & Hc) HΦ". open_inv.
    iDestruct (mono_nat_lb_own_valid with "Hn Hlb") as %[_ Hle].
    assert (nx mod 4 = 0) as Hm0 by (rewrite Hnx; apply mod4_mul).
    destruct (decide (n = nx)) as [-> | Hne].
    - wp_cmpxchg_suc.
      iAssert (⌜∀ j, j < N → (t, j) ∈ X⌝)%I as %Hall.
      { iIntros (j Hj).
        iDestruct (big_sepL_forall with "Hcops") as "Hf".
        iDestruct ("Hf" $! j j with "[%]") as "[%Hbad | [Hc' | Hc']]".
        { apply lookup_seq. lia. }
        - done.
        - assert (nx `div` 4 = t) as Hs by (rewrite Hnx (Nat.mul_comm 4 t) Nat.div_mul; lia).
          rewrite Hs. by iApply (clean_elem R with "HX Hc'").
        - iDestruct (mono_nat_lb_own_valid with "Hn Hc'") as %[_ ?]. lia. }
      destruct (ip_acquire _ _ _ _ _ _ Hip t Hnx Hall) as [Hip' Hnh].
      replace (4 * t + 1) with (nx + 1) in Hip' by lia.
      iDestruct "Hwp" as "[(_ & Hg & HR & Hs) | [(%Hbad & _) | (%Hbad & _)]]"; [| lia | lia].
      iMod (ghost_var_update (Some (nx + 1)) with "Hg") as "Hg".
      iEval (rewrite -Qp.half_half) in "Hg". iDestruct "Hg" as "[Hg Hg']".
      iMod (mono_nat_own_update (nx + 1) with "Hn") as "[Hn _]"; [lia |].
      iMod (log_append R _ _ (nx + 1, present vs) with "HL") as "HL".
      rewrite (shares_all R) // -(rq_sum R) //.
      assert ((nx + 1) mod 4 = 1) as HS1 by (by rewrite Hnx mod4_add).
      iModIntro. iSplitR "HΦ Hg HR Hs Hc".
      { iNext. iExists (nx + 1), vs, ph, X, _.
        replace (Z.of_nat nx + 1)%Z with (Z.of_nat (nx + 1)) by lia. iFrame "Hw Hri Hn HX Hph HL".
        iSplit.
        { iPureIntro. eapply ir_step; [exact Hir | exact Hip' | left; right; left; lia |].
          intros _ _. left. by left. }
        iSplitR "Hau".
        - iRight; iLeft. by iFrame.
        - iApply (authors_mono with "Hau"); lia. }
      iApply "HΦ". iFrame "Hc". iSplitL "Hg".
      + iExists (nx + 1). by iFrame.
      + rewrite (R_halves R). iFrame.
    - wp_cmpxchg_fail; [intros [=]; lia |].
      iDestruct (conflict_since _ L0 L2 L e2 nx c t n (present vs) with "HL HL2 Hau Hc")
        as "(HL & Hau & Hc & Hres)";
        [done | done | lia | by left | lia | apply (ir_log _ _ _ _ _ _ Hir) | apply (ir_last _ _ _ _ _ _ Hir) | lia |].
      iModIntro. iSplitR "HΦ Hc Hres".
      { iNext. iExists n, vs, ph, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp Hau". done. }
      iApply "HΦ". iFrame.
  Qed.

  Lemma rs_exclusive_try_lock_spec γ lk N L0 c :
    {{{ is_rwlock_rs γ lk N ∗ log_lb γ L0 ∗ wid γ c }}}
      rs_exclusive_try_lock lk
    {{{ (b : bool), RET #b; wid γ c ∗
        if b then writer_locked γ ∗ R 1 else busy_since γ L0 ∨ rival_since γ L0 c }}}.
  Proof.
    iIntros (Φ) "((%w & %ri & [-> %HN] & #Hinv) & #HL0 & [%h Hc]) HΦ".
    wp_lam. wp_pures.
    (* L241: load *)
    wp_bind (! _)%E. open_inv. wp_load.
    iDestruct (log_prefix R with "HL HL0") as %Hpre.
    iDestruct (log_lb_get R with "HL") as "#HL1".
    iDestruct (mono_nat_lb_own_get with "Hn") as "#Hlb".
    iDestruct (authors_hw with "Hau Hc") as %Hh.
    pose proof (ir_last _ _ _ _ _ _ Hir) as Hlast.
    iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp Hau".
    { iNext. iExists n, vs, ph, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp Hau". done. }
    wp_pures. rewrite Z_rem4.
    remember (n mod 4) as st eqn:Hst.
    destruct (decide (st = 1 ∨ st = 2)) as [Hwr | Hwr].
    { (* L243–L245: WLOCK or RLOCK *)
      iAssert (busy_since γ L0) as "#Hb".
      { iApply (busy_now R _ L0 L (n, present vs) Hpre Hlast with "HL1").
        unfold busy. cbn [fst]. rewrite -Hst. tauto. }
      destruct Hwr as [-> | ->]; wp_pures; iApply "HΦ";
        (iSplitL "Hc"; [by iExists h | by iLeft]). }
    assert (n mod 4 = 0 ∨ n mod 4 = 3) as H03 by (pose proof (mod4_cases n); lia).
    rewrite bool_decide_false; [| rewrite val_int_eq; lia]. wp_pures.
    rewrite bool_decide_false; [| rewrite val_int_eq; lia]. wp_pures.
    (* L246–L248: the first scan *)
    wp_apply (rs_readers_empty_spec _ _ _ _ n L0 0 with "[$Hinv $Hlb $HL0]");
      [iSplit; [iPureIntro; lia | done] |].
    iIntros ([]) "Hb"; wp_pures; last first.
    { iApply "HΦ". iSplitL "Hc"; [by iExists h | by iLeft]. }
    iClear "Hb".
    (* L251–L259: announce HLOCK of the next sequence *)
    remember (n `div` 4 + 1) as t eqn:Ht.
    remember (4 * t) as nx eqn:Hnx.
    replace (Z.of_nat n - Z.of_nat st + 4)%Z with (Z.of_nat nx)
      by (pose proof (Nat.div_mod n 4 ltac:(lia)); lia).
    wp_apply (announce_spec _ _ _ _ n nx t c h L0 L with "[$Hinv $Hlb $HL1 $Hc]");
      [done | done | done | lia | done | done | done |].
    iIntros (v [|]) "H"; wp_pures; last first.
    { iDestruct "H" as "[Hc Hres]". iApply "HΦ". iFrame "Hres". by iExists h. }
    iDestruct "H" as "(Hc & #Hlb' & %L2 & %e2 & #HL2 & %Hp2 & %Hl2 & %He2)".
    (* L263–L265: the second scan, under the writer's own HLOCK *)
    wp_apply (rs_readers_empty_spec _ _ _ _ nx L0 0 with "[$Hinv $Hlb' $HL0]");
      [iSplit; [iPureIntro; lia | done] |].
    iIntros ([]) "Hcops"; wp_pures; last first.
    { iApply "HΦ". iSplitL "Hc"; [by iExists _ | by iLeft]. }
    iDestruct "Hcops" as "#Hcops".
    (* L266–L269: HLOCK → WLOCK *)
    wp_apply (acquire_rs_spec _ _ _ _ nx t c L0 L2 e2 with "[$Hinv $Hcops $Hlb' $HL2 $Hc]");
      [done | done | done | done | done |].
    iIntros (v' b) "[Hc H]". wp_pures. iApply "HΦ". iFrame "H". by iExists _.
  Qed.

  Lemma rs_exclusive_unlock_spec γ lk N :
    {{{ is_rwlock_rs γ lk N ∗ writer_locked γ ∗ R 1 }}}
      rs_exclusive_unlock lk
    {{{ RET #(); True }}}.
  Proof.
    iIntros (Φ) "((%w & %ri & [-> %HN] & #Hinv) & (%m & %Hm & Hg) & HR) HΦ".
    wp_lam. wp_pures.
    wp_apply (rs_load_own_spec with "[$Hinv $Hg]"). iIntros "Hg". wp_pures.
    rewrite Z_rem4 Hm. replace (Z.of_nat m - Z.of_nat 1 + 2)%Z with (Z.of_nat (S m)) by lia.
    wp_apply (rs_rlock_spec with "[$Hinv $Hg $HR]"); [done | done |]. iIntros "[Hg HR]". wp_pures.
    assert ((S m) mod 4 = 2) as Hm2 by (by rewrite (mod4_S m 1)).
    wp_apply (rs_abort_rollback_spec _ _ _ _ _ 0 with "[$Hinv $Hg]"); [done |]. iIntros "Hg". wp_pures.
    replace (Z.of_nat m - Z.of_nat 1 + 3)%Z with (Z.of_nat (S (S m))) by lia.
    wp_apply (rs_release_spec with "[$Hinv $Hg $HR]"); [done |]. done.
  Qed.

  Lemma rs_downgrade_spec γ lk N :
    {{{ is_rwlock_rs γ lk N ∗ writer_locked γ ∗ R 1 }}}
      rs_downgrade lk
    {{{ RET #(); downgraded γ ∗ R (1/2) }}}.
  Proof.
    iIntros (Φ) "((%w & %ri & [-> %HN] & #Hinv) & (%m & %Hm & Hg) & HR) HΦ".
    wp_lam. wp_pures.
    wp_apply (rs_load_own_spec with "[$Hinv $Hg]"). iIntros "Hg". wp_pures.
    rewrite Z_rem4 Hm. replace (Z.of_nat m - Z.of_nat 1 + 2)%Z with (Z.of_nat (S m)) by lia.
    wp_apply (rs_rlock_spec with "[$Hinv $Hg $HR]"); [done | done |]. iIntros "[Hg HR]". wp_pures.
    assert ((S m) mod 4 = 2) as Hm2 by (by rewrite (mod4_S m 1)).
    wp_apply (rs_abort_rollback_spec _ _ _ _ _ 0 with "[$Hinv $Hg]"); [done |]. iIntros "Hg".
    iApply "HΦ". iFrame. by iExists (S m); iFrame.
  Qed.

  (** A downgraded lock is released by [downgrade_unlock], whoever
      downgraded it (Redo-PTM: the next winner of [cur_comb]). *)
  Lemma rs_downgrade_unlock_spec γ lk N :
    {{{ is_rwlock_rs γ lk N ∗ downgraded γ ∗ R (1/2) }}}
      rs_downgrade_unlock lk
    {{{ RET #(); True }}}.
  Proof.
    iIntros (Φ) "((%w & %ri & [-> %HN] & #Hinv) & (%m & %Hm & Hg) & HR) HΦ".
    wp_lam. wp_pures.
    wp_apply (rs_load_own_spec with "[$Hinv $Hg]"). iIntros "Hg". wp_pures.
    rewrite Z_rem4 Hm. replace (Z.of_nat m - Z.of_nat 2 + 3)%Z with (Z.of_nat (S m)) by lia.
    by wp_apply (rs_release_spec with "[$Hinv $Hg $HR]").
  Qed.

  (** ... or by [exclusive_unlock]: storing RLOCK again changes nothing. *)
  Lemma rs_exclusive_unlock_downgraded_spec γ lk N :
    {{{ is_rwlock_rs γ lk N ∗ downgraded γ ∗ R (1/2) }}}
      rs_exclusive_unlock lk
    {{{ RET #(); True }}}.
  Proof.
    iIntros (Φ) "((%w & %ri & [-> %HN] & #Hinv) & (%m & %Hm & Hg) & HR) HΦ".
    wp_lam. wp_pures.
    wp_apply (rs_load_own_spec with "[$Hinv $Hg]"). iIntros "Hg". wp_pures.
    rewrite Z_rem4 Hm. replace (Z.of_nat m - Z.of_nat 2 + 2)%Z with (Z.of_nat m) by lia.
    wp_bind (_ <- _)%E. open_inv.
    wp_store. iDestruct (writer_part_agree R with "Hwp Hg") as %->.
    iModIntro. iSplitL "Hw Hri Hn HX Hph HL Hwp Hau".
    { iNext. iExists m, vs, ph, X, L. iFrame "Hw Hri Hn HX Hph HL Hwp Hau". done. }
    wp_pures.
    wp_apply (rs_abort_rollback_spec _ _ _ _ _ 0 with "[$Hinv $Hg]"); [done |]. iIntros "Hg". wp_pures.
    replace (Z.of_nat m - Z.of_nat 2 + 3)%Z with (Z.of_nat (S m)) by lia.
    by wp_apply (rs_release_spec with "[$Hinv $Hg $HR]").
  Qed.

End proof.

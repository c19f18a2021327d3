(** * Line-granular persistence with [pwb]/[pfence], for the protocol models

    The persistence rules of [Px86.v] ([mem]: per cache line the writes
    that became visible, in order, and the mark; a crash keeps of each line
    a prefix at least as long as its mark) packaged for models whose steps
    are sequentially consistent, as the simulator [Sim] runs the
    implementation ([impl/perdure-pm/src/sim.rs] and [LineHistory] in
    [impl/perdure-pm/src/px86.rs]): a store is visible, and appended to its
    line, when it executes ([p_write]); a [pwb] of thread [t] records its
    line and the line's length at issue ([p_pwb]); [t]'s [pfence] raises
    the mark of each line [t] wrote back to at least that length
    ([p_fence], [mem_flush_upto]: taking effect at issue is the least
    constraining point Px86 allows).  So a write persists for sure only
    through a [pwb] its thread issued after it and later fenced; before
    that a crash may or may not keep it (an arbitrary eviction), but only
    with every earlier write of its line.

    Proved: marks never fall and lines only grow ([p_write_mark],
    [p_pwb_mark], [p_fence_mark_mono], [p_write_hist]); a fence covers the
    thread's write-backs ([p_fence_covers]); what a crash keeps then
    ([crash_keeps_prefix], [crash_keeps_write]: a write covered by the
    mark is in every crash image's prefix of its line); and the bookkeeping
    invariant that a recorded length never exceeds its line ([p_wf]).

    Not proved here: that a protocol model's sequentially consistent steps
    are Px86 executions (the models of issue 20 §1 state their own
    correspondence). *)
From stdpp Require Import base list list_numbers relations.
From Coq Require Import Lia.
From perdure.Core Require Import Px86.

(** The memory, and the write-backs issued and not yet fenced:
    (thread, line, length of the line at the [pwb]). *)
Record pmem := PMem {
  p_mem : mem;
  p_pwbs : list (nat * nat * nat);
}.

(** [nlines] lines, nothing written, nothing pending. *)
Definition pmem_empty (nlines : nat) : pmem := PMem (mem_empty nlines) [].

Section pmem.
  Context (line : loc → nat).

  (** A write (one location, or two of one line for a 16-byte CAS that
      persists atomically) becomes visible: appended to line [L]. *)
  Definition p_write (p : pmem) (L : nat) (w : write) : pmem :=
    PMem (mem_write (p_mem p) L w) (p_pwbs p).

  Definition p_store (p : pmem) (x : loc) (v : val) : pmem := p_write p (line x) [(x, v)].

  (** The visible value of [x]. *)
  Definition p_load (p : pmem) (x : loc) : val := mem_visible line (p_mem p) x.

  (** Thread [t] issues a write-back of [x]'s line. *)
  Definition p_pwb (p : pmem) (t : nat) (x : loc) : pmem :=
    PMem (p_mem p) ((t, line x, length (line_hist (p_mem p) (line x))) :: p_pwbs p).

  Definition fence_one (t : nat) (pw : nat * nat * nat) (m : mem) : mem :=
    let '(t', L, n) := pw in if decide (t' = t) then mem_flush_upto m L n else m.

  (** Thread [t] fences: its write-backs have taken effect. *)
  Definition p_fence (p : pmem) (t : nat) : pmem :=
    PMem (foldr (fence_one t) (p_mem p) (p_pwbs p)) (filter (λ pw, pw.1.1 ≠ t) (p_pwbs p)).

  (** A crash: each line keeps [keep L] writes (at least its mark); the
      persisted value of every location. *)
  Definition p_crash_ok (p : pmem) (keep : nat → nat) : Prop := crash_ok (p_mem p) keep.
  Definition p_image (p : pmem) (keep : nat → nat) : loc → val := persisted line (p_mem p) keep.

  (** ** Marks never fall, lines only grow *)

  Lemma mem_write_lines m L w : length (m_lines (mem_write m L w)) = length (m_lines m).
  Proof. simpl. by rewrite insert_length. Qed.

  Lemma mem_flush_upto_lines m L n : m_lines (mem_flush_upto m L n) = m_lines m.
  Proof. done. Qed.

  Lemma mem_write_mark m L w L' : mark (mem_write m L w) L' = mark m L'.
  Proof. done. Qed.

  Lemma mem_write_hist m L w L' :
    line_hist m L' `prefix_of` line_hist (mem_write m L w) L'.
  Proof.
    unfold line_hist, mem_write; simpl. destruct (decide (L = L')) as [<- | Hne].
    - destruct (decide (L < length (m_lines m))) as [Hlt | Hge].
      + rewrite list_lookup_insert by done. simpl. by exists [w].
      + rewrite list_insert_ge by lia. done.
    - by rewrite list_lookup_insert_ne.
  Qed.

  Lemma mem_flush_upto_mark_mono m L n L' : mark m L' ≤ mark (mem_flush_upto m L n) L'.
  Proof.
    unfold mark, mem_flush_upto; simpl. destruct (decide (L = L')) as [<- | Hne].
    - destruct (decide (L < length (m_marks m))) as [Hlt | Hge].
      + rewrite list_lookup_insert by done. simpl. unfold mark. lia.
      + rewrite list_insert_ge by lia. done.
    - by rewrite list_lookup_insert_ne.
  Qed.

  Lemma mem_flush_upto_mark m L n :
    L < length (m_marks m) → n ≤ length (line_hist m L) → n ≤ mark (mem_flush_upto m L n) L.
  Proof.
    intros HL Hn. unfold mark at 1, mem_flush_upto; simpl.
    rewrite list_lookup_insert by done. simpl. lia.
  Qed.

  Lemma p_write_mark p L w L' : mark (p_mem (p_write p L w)) L' = mark (p_mem p) L'.
  Proof. done. Qed.

  Lemma p_write_hist p L w L' :
    line_hist (p_mem p) L' `prefix_of` line_hist (p_mem (p_write p L w)) L'.
  Proof. apply mem_write_hist. Qed.

  Lemma p_pwb_mark p t x L : mark (p_mem (p_pwb p t x)) L = mark (p_mem p) L.
  Proof. done. Qed.

  Lemma fence_one_mark_mono t pw m L : mark m L ≤ mark (fence_one t pw m) L.
  Proof.
    destruct pw as [[t' L'] n]; simpl. case_decide; [apply mem_flush_upto_mark_mono | done].
  Qed.

  Lemma fence_one_lines t pw m : m_lines (fence_one t pw m) = m_lines m.
  Proof. destruct pw as [[t' L'] n]; simpl. by case_decide. Qed.

  Lemma fence_one_marks_length t pw m : length (m_marks (fence_one t pw m)) = length (m_marks m).
  Proof. destruct pw as [[t' L'] n]; simpl. case_decide; [unfold mem_flush_upto; simpl; by rewrite insert_length | done]. Qed.

  Lemma foldr_fence_lines t pws m : m_lines (foldr (fence_one t) m pws) = m_lines m.
  Proof. induction pws as [| pw pws IH]; simpl; [done |]. by rewrite fence_one_lines. Qed.

  Lemma foldr_fence_marks_length t pws m :
    length (m_marks (foldr (fence_one t) m pws)) = length (m_marks m).
  Proof. induction pws as [| pw pws IH]; simpl; [done |]. by rewrite fence_one_marks_length. Qed.

  Lemma foldr_fence_mark_mono t pws m L : mark m L ≤ mark (foldr (fence_one t) m pws) L.
  Proof.
    induction pws as [| pw pws IH]; simpl; [done |].
    etrans; [exact IH | apply fence_one_mark_mono].
  Qed.

  Lemma p_fence_mark_mono p t L : mark (p_mem p) L ≤ mark (p_mem (p_fence p t)) L.
  Proof. apply foldr_fence_mark_mono. Qed.

  Lemma p_fence_hist p t L : line_hist (p_mem (p_fence p t)) L = line_hist (p_mem p) L.
  Proof. unfold line_hist. simpl. by rewrite foldr_fence_lines. Qed.

  (** ** A fence covers its thread's write-backs *)

  (** Lines and marks cover the same lines, a mark is at most its line's
      length, and so is every recorded length. *)
  Definition p_wf (p : pmem) : Prop :=
    length (m_marks (p_mem p)) = length (m_lines (p_mem p)) ∧
    (∀ L, mark (p_mem p) L ≤ length (line_hist (p_mem p) L)) ∧
    Forall (λ pw, pw.2 ≤ length (line_hist (p_mem p) pw.1.2)) (p_pwbs p).

  Lemma pmem_empty_wf nlines : p_wf (pmem_empty nlines).
  Proof.
    split; [simpl; by rewrite !replicate_length |]. split; [| constructor].
    intros L. unfold mark. simpl. destruct (decide (L < nlines)).
    - rewrite lookup_replicate_2 by done. simpl. lia.
    - rewrite (proj1 (lookup_replicate_None _ _ _)) by lia. simpl. lia.
  Qed.

  Lemma p_write_wf p L w : p_wf p → p_wf (p_write p L w).
  Proof.
    intros (Hlen & Hmark & HF). split; [simpl; by rewrite insert_length |]. split.
    - intros L'. rewrite p_write_mark. etrans; [apply Hmark |]. apply prefix_length, p_write_hist.
    - eapply Forall_impl; [exact HF |]. intros [[t L'] n] Hn; simpl in *.
      etrans; [exact Hn |]. apply prefix_length, mem_write_hist.
  Qed.

  Lemma p_pwb_wf p t x : p_wf p → p_wf (p_pwb p t x).
  Proof. intros (Hlen & Hmark & HF). do 2 (split; [done |]). constructor; [simpl; lia | done]. Qed.

  Lemma fence_one_marks_le t pw m :
    (∀ L, mark m L ≤ length (line_hist m L)) →
    ∀ L, mark (fence_one t pw m) L ≤ length (line_hist (fence_one t pw m) L).
  Proof.
    intros Hmark L'. destruct pw as [[t' L] n]; simpl. case_decide; [| apply Hmark].
    unfold mark at 1, mem_flush_upto. unfold line_hist at 1. simpl. fold (line_hist m L').
    destruct (decide (L = L')) as [<- | Hne].
    - destruct (decide (L < length (m_marks m))) as [Hlt | Hge].
      + rewrite list_lookup_insert by done. simpl. specialize (Hmark L). unfold line_hist in *. simpl in *. lia.
      + rewrite list_insert_ge by lia. unfold line_hist in *; simpl in *; apply Hmark.
    - rewrite list_lookup_insert_ne by done. unfold line_hist in *; simpl in *; apply Hmark.
  Qed.

  Lemma foldr_fence_marks_le t pws m :
    (∀ L, mark m L ≤ length (line_hist m L)) →
    ∀ L, mark (foldr (fence_one t) m pws) L ≤ length (line_hist (foldr (fence_one t) m pws) L).
  Proof.
    intros Hmark. induction pws as [| pw pws IH]; simpl; [done |]. by apply fence_one_marks_le.
  Qed.

  Lemma p_fence_wf p t : p_wf p → p_wf (p_fence p t).
  Proof.
    intros (Hlen & Hmark & HF). split; [| split].
    - simpl. by rewrite foldr_fence_marks_length, foldr_fence_lines.
    - by apply foldr_fence_marks_le.
    - simpl. apply Forall_forall. intros pw [_ Hpw]%elem_of_list_filter.
      rewrite Forall_forall in HF. specialize (HF pw Hpw).
      unfold line_hist in *. by rewrite foldr_fence_lines.
  Qed.

  Lemma foldr_fence_covers t pws m L n :
    length (m_marks m) = length (m_lines m) →
    Forall (λ pw, pw.2 ≤ length (line_hist m pw.1.2)) pws →
    (t, L, n) ∈ pws → L < length (m_lines m) → n ≤ mark (foldr (fence_one t) m pws) L.
  Proof.
    intros Hlen HF Hin HL. induction pws as [| pw pws IH]; [by apply elem_of_nil in Hin |].
    inversion HF as [| ? ? Hpw HF']; subst.
    apply elem_of_cons in Hin as [<- | Hin].
    - simpl. rewrite decide_True by done. apply mem_flush_upto_mark.
      + by rewrite foldr_fence_marks_length, Hlen.
      + unfold line_hist. rewrite foldr_fence_lines. exact Hpw.
    - etrans; [by apply IH | apply fence_one_mark_mono].
  Qed.

  (** After thread [t] fences, each line it wrote back is persisted for sure
      up to the length it had at the [pwb]. *)
  Lemma p_fence_covers p t L n :
    p_wf p → (t, L, n) ∈ p_pwbs p → L < length (m_lines (p_mem p)) →
    n ≤ mark (p_mem (p_fence p t)) L.
  Proof. intros (Hlen & _ & HF) Hin HL. by eapply foldr_fence_covers. Qed.

  (** A [pwb] of [x] by [t], then [t]'s fence: the writes of [x]'s line
      visible at the [pwb] persist for sure. *)
  Lemma p_pwb_fence_covers p t x :
    p_wf p → line x < length (m_lines (p_mem p)) →
    length (line_hist (p_mem p) (line x)) ≤ mark (p_mem (p_fence (p_pwb p t x) t)) (line x).
  Proof.
    intros Hwf HL. apply p_fence_covers; [by apply p_pwb_wf | by left | done].
  Qed.

  (** ** What a crash keeps *)

  (** The first [n] writes of a line whose mark is at least [n] are in
      every crash image. *)
  Lemma crash_keeps_prefix m keep L n :
    crash_ok m keep → L < length (m_lines m) → n ≤ mark m L →
    take n (line_hist m L) `prefix_of` take (keep L) (line_hist m L).
  Proof.
    intros Hok HL Hn. specialize (Hok L HL).
    replace (take n (line_hist m L)) with (take n (take (keep L) (line_hist m L))).
    - eexists. symmetry. apply take_drop.
    - rewrite take_take. f_equal. lia.
  Qed.

  (** In particular the [i]-th write of a line whose mark is above [i]. *)
  Lemma crash_keeps_write m keep L i w :
    crash_ok m keep → L < length (m_lines m) → i < mark m L →
    line_hist m L !! i = Some w → take (keep L) (line_hist m L) !! i = Some w.
  Proof.
    intros Hok HL Hi Hw. specialize (Hok L HL). rewrite lookup_take by lia. done.
  Qed.

  (** Keeping every write is always a crash image (no eviction lost). *)
  Lemma p_crash_ok_all p : p_wf p → p_crash_ok p (λ L, length (line_hist (p_mem p) L)).
  Proof. intros (_ & Hmark & _) L HL. split; [apply Hmark | done]. Qed.

  (** Keeping exactly the marks is always a crash image (nothing evicted). *)
  Lemma p_crash_ok_marks p : p_wf p → p_crash_ok p (λ L, mark (p_mem p) L).
  Proof. intros (_ & Hmark & _) L HL. split; [done | apply Hmark]. Qed.
End pmem.

(** ** Views of a persistent memory and the memory a crash leaves

    Shared by the protocol models built on [pmem] ([Memento/CheckpointPx.v],
    [Ptm/CXPTMPx.v]): line [L]'s history and mark, the line count, and the
    memory after a crash keeping [keep L] writes of each line. *)

Definition hist (p : pmem) (L : nat) : list write := line_hist (p_mem p) L.
Definition mk (p : pmem) (L : nat) : nat := mark (p_mem p) L.
Definition nlines (p : pmem) : nat := length (m_lines (p_mem p)).

(** What a crash keeping [keep] leaves: each line cut to its image, the
    image persisted, no write-back pending. *)
Definition crash_mem (p : pmem) (keep : nat → nat) : pmem :=
  PMem (Mem ((λ L, take (keep L) (hist p L)) <$> seq 0 (nlines p))
            (keep <$> seq 0 (nlines p))) [].

Lemma wf_mk_le p L : p_wf p → mk p L ≤ length (hist p L).
Proof. intros (_ & H & _). apply H. Qed.

Lemma crash_hist p keep L : L < nlines p → hist (crash_mem p keep) L = take (keep L) (hist p L).
Proof.
  intros HL. unfold hist at 1, line_hist, crash_mem; simpl.
  rewrite list_lookup_fmap, lookup_seq_lt by done. reflexivity.
Qed.

Lemma crash_mk p keep L : L < nlines p → mk (crash_mem p keep) L = keep L.
Proof.
  intros HL. unfold mk, mark, crash_mem; simpl. rewrite list_lookup_fmap, lookup_seq_lt by done. reflexivity.
Qed.

Lemma crash_nlines p keep : nlines (crash_mem p keep) = nlines p.
Proof. unfold nlines, crash_mem; simpl. by rewrite fmap_length, seq_length. Qed.

Lemma crash_wf p keep : p_crash_ok p keep → p_wf (crash_mem p keep).
Proof.
  intros Hok. split; [unfold crash_mem; simpl; by rewrite !fmap_length|]. split; [|constructor].
  intros L. destruct (decide (L < nlines p)) as [HL|HL].
  - fold (mk (crash_mem p keep) L) (hist (crash_mem p keep) L). rewrite crash_mk, crash_hist by done.
    rewrite take_length. destruct (Hok L HL). unfold hist. lia.
  - unfold mark, crash_mem; simpl. rewrite list_lookup_fmap, lookup_seq_ge by lia. simpl. lia.
Qed.

(** ** Explicit runs

    The models' non-vacuity runs and refutations are explicit step
    sequences, each state reached replaced by its normal form
    ([norm_state]), so that the terms of a run do not grow with its
    length.  A model's thread map is a function, [upd (th s) t T] is
    [λ u, if decide (u = t) then T else th s u]; under that [λ]
    [vm_compute] unfolds [decide (u = t)] to [Nat.eq_dec]'s body, a [fix]
    with its correctness proofs (about 2 kB), once per [upd] of the run
    so far, and every state of a run repeats those of the states before it
    (likewise [Nat.add]'s [fix] under a map [λ u, .. + ..]).  [norm_term]
    puts the functions back in place of their unfoldings (so the result is
    convertible), leaving the kernel a term that grows with the run's
    thread updates, not with their proofs ([CheckpointPxBugs.v]:
    44 s -> 14 s of CPU). *)

(** The function whose normal form is that of [c]: a [fix], possibly
    behind η-expansions. *)
Ltac fix_of c :=
  let D := eval vm_compute in c in
  lazymatch D with
  | (fun x y => ?F x y) => F
  | (fun x => ?F x) => F
  | _ => D
  end.

(** The normal form of [t], [nat]'s decision procedures for equality
    ([decide (u = t)]) and order ([le_lt_dec], which [decide (u ≤ t)] and
    [decide (u < t)] unfold to) and its addition folded back: their [fix]es
    abstracted in one pass, the functions put in their place. *)
Ltac norm_term t :=
  let t := eval vm_compute in t in
  let E := fix_of (λ x y : nat, decide (x = y)) in
  let L := fix_of le_lt_dec in
  let A := fix_of Nat.add in
  lazymatch eval pattern E, L, A in t with
  | ?g _ _ _ => eval cbv beta in (g (λ x y : nat, decide (x = y)) le_lt_dec Nat.add)
  end.

(** On a goal [a = ?b]: [?b] := [a]'s normal form ([norm_term]); the
    equation is left to the kernel, which checks it with the VM (as it
    would the cast [vm_compute] leaves). *)
Ltac norm_state :=
  match goal with |- ?a = ?b => let a' := norm_term a in unify b a';
    vm_cast_no_check (@eq_refl _ a') end.

(** For a run built forwards ([pose proof (step .. R ..) as R']): the type
    of hypothesis [R] replaced by its normal form ([norm_term]), through a
    cast the kernel checks with the VM ([<:]). *)
Ltac norm_hyp R :=
  let T := type of R in
  let T' := norm_term T in
  let R' := fresh in pose proof (R <: T') as R'; clear R; rename R' into R.

(** After a step, the rest of the run starts from a local definition of
    the state reached ([let s := .. in ..] in the proof term), so that the
    kernel checks its normal form once instead of at each occurrence
    ([CheckpointPxLin.v]'s run: its Qed 17 s -> 7 s of CPU; [DetCasPxBugs.v]:
    34 s -> 20 s; the runs of [CheckpointPxBugs.v] and [InsDelPxBugs.v],
    after [norm_term]'s folding: about 2 s and 1 s). *)
Ltac name_state := match goal with |- rtc ?R ?x ?z => refine (let s := x in (_ : rtc R s z)) end.

(** * Size classes of the region allocator

    Justifies [class_for] and the bump-pointer check of [RegionAlloc::alloc]
    in [impl/perdure-pm/src/region.rs] (segregated power-of-two size classes,
    a 16-byte block header, classes [5 ..= 63]).  There is no TLA+ module for
    it: the arithmetic is all there is.

    A request of [size] bytes (a 64-bit unsigned number) gets the class
    [k = max 5 (ceil_log2 (size + 16))], valid iff [k <= 63]; the block is
    [2^k] bytes.  We prove
    - [class_fits]: the block holds the request and its header;
    - [class_minimal]: no smaller class (of at least 32 bytes) would;
    - [class_valid_iff]: the class is valid iff [size + 16 <= 2^63];
    - [class_impl_spec]: the implementation's formula
      ([need = max (size + 16) 32] with a checked add, then
      [64 - leading_zeros (need - 1)], i.e. the bit length [N.size] of
      [need - 1]) computes exactly this class, and [None] iff it is invalid;
    - [bump_check_iff] and [bump_check_in_range]: the implementation's
      overflow-free test [2^k <= len.saturating_sub(bump)] is equivalent to
      the mathematical [bump + 2^k <= len], every value it computes is below
      [2^64], and so is the new bump pointer when the test passes;
      [naive_bump_check_overflows] shows why the subtraction form is needed.

    Not covered: that the Rust code's [u64] operations are what [N] models
    (no wrap-around happens in the values proved below [2^64], which is the
    point, but the correspondence itself is by reading); alignment; the free
    lists. *)
From Coq Require Import NArith Lia.
Local Open Scope N_scope.

Definition header : N := 16.
Definition min_shift : N := 5.
Definition max_shift : N := 63.
Definition word_bound : N := 2 ^ 64.

(** The class of a request (mathematical definition). *)
Definition class_of (size : N) : N := N.max min_shift (N.log2_up (size + header)).
Definition class_valid (size : N) : Prop := class_of size <= max_shift.

(** The implementation: [size.checked_add(16)?.max(1 << 5)], then
    [64 - (need - 1).leading_zeros()] (the bit length of [need - 1], which
    is [N.size]), then [(shift <= 63).then_some(shift)]. *)
Definition class_impl (size : N) : option N :=
  if size + header <? word_bound then
    let need := N.max (size + header) (2 ^ min_shift) in
    let shift := N.size (need - 1) in
    if shift <=? max_shift then Some shift else None
  else None.

Lemma pow2_pos (k : N) : 0 < 2 ^ k.
Proof. apply N.neq_0_lt_0, N.pow_nonzero. lia. Qed.

(** (a) The block of the class holds the request and its header (valid or
    not; [class_fits_valid] is the statement as asked). *)
Lemma class_fits (size : N) : size + header <= 2 ^ class_of size.
Proof.
  unfold class_of.
  transitivity (2 ^ N.log2_up (size + header)).
  - apply N.log2_up_le_pow2; unfold header; lia.
  - apply N.pow_le_mono_r; lia.
Qed.

Corollary class_fits_valid (size : N) :
  class_valid size -> size + header <= 2 ^ class_of size.
Proof. intros _. apply class_fits. Qed.

(** (b) Minimality: the class is the smallest one, or the next smaller
    block would be too small. *)
Lemma class_minimal (size : N) :
  class_of size = min_shift \/ 2 ^ (class_of size - 1) < size + header.
Proof.
  unfold class_of.
  destruct (N.max_spec min_shift (N.log2_up (size + header))) as [[Hlt ->] | [_ ->]].
  - right. rewrite N.sub_1_r.
    apply N.log2_up_spec. unfold header. lia.
  - left. reflexivity.
Qed.

(** ... equivalently: every smaller class of at least [2^5] bytes is too
    small. *)
Lemma class_minimal_all (size j : N) :
  min_shift <= j < class_of size -> 2 ^ j < size + header.
Proof.
  intros [Hmin Hj].
  destruct (class_minimal size) as [Heq | Hlt]; [lia |].
  eapply N.le_lt_trans; [| exact Hlt].
  apply N.pow_le_mono_r; lia.
Qed.

(** (c) Validity. *)
Lemma class_valid_iff (size : N) :
  class_valid size <-> size + header <= 2 ^ max_shift.
Proof.
  unfold class_valid, class_of.
  rewrite (N.log2_up_le_pow2 (size + header) max_shift) by (unfold header; lia).
  unfold min_shift, max_shift. lia.
Qed.

(** The implementation's bit-length formula is [ceil_log2] for [need >= 2]. *)
Lemma size_pred_log2_up (need : N) : 1 < need -> N.size (need - 1) = N.log2_up need.
Proof.
  intros H.
  rewrite N.log2_up_eqn by exact H.
  rewrite N.size_log2 by lia.
  rewrite N.sub_1_r. reflexivity.
Qed.

Lemma log2_up_max_min (a : N) :
  N.log2_up (N.max a (2 ^ min_shift)) = N.max min_shift (N.log2_up a).
Proof.
  rewrite <- (N.max_monotone N.log2_up).
  - rewrite N.log2_up_pow2 by lia. apply N.max_comm.
  - intros x y Hxy. apply N.log2_up_le_mono. exact Hxy.
Qed.

Lemma class_impl_shift (size : N) :
  N.size (N.max (size + header) (2 ^ min_shift) - 1) = class_of size.
Proof.
  rewrite size_pred_log2_up.
  - apply log2_up_max_min.
  - unfold min_shift. simpl. lia.
Qed.

(** The implementation returns the class exactly when it is valid. *)
Theorem class_impl_spec (size k : N) :
  class_impl size = Some k <-> class_valid size /\ k = class_of size.
Proof.
  unfold class_impl. rewrite class_impl_shift.
  pose proof (class_valid_iff size) as Hv.
  unfold class_valid in *.
  destruct (N.ltb_spec (size + header) word_bound) as [Hw | Hw].
  - destruct (N.leb_spec (class_of size) max_shift) as [Hc | Hc]; split.
    + intros [= <-]. auto.
    + intros [_ ->]. reflexivity.
    + discriminate.
    + lia.
  - split; [discriminate |].
    intros [Hc _]. apply Hv in Hc. unfold word_bound, max_shift in *.
    assert (2 ^ 63 < 2 ^ 64) by (apply N.pow_lt_mono_r; lia). lia.
Qed.

Corollary class_impl_none (size : N) :
  class_impl size = None <-> ~ class_valid size.
Proof.
  split.
  - intros E Hv.
    pose proof (proj2 (class_impl_spec size (class_of size)) (conj Hv eq_refl)).
    congruence.
  - intros Hnv. destruct (class_impl size) as [k |] eqn:E; [| reflexivity].
    apply class_impl_spec in E as [Hv _]. contradiction.
Qed.

(** (d) The bump check.  [len - bump] in [N] truncates at 0, as Rust's
    [saturating_sub] does, so no hypothesis [bump <= len] is needed. *)
Lemma bump_check_iff (bump len k : N) :
  2 ^ k <= len - bump <-> bump + 2 ^ k <= len.
Proof. pose proof (pow2_pos k). lia. Qed.

(** Every value the implementation computes is a 64-bit value: the block
    size [2^k], the available space [len - bump], and, when the check passes,
    the new bump pointer [bump + 2^k]. *)
Lemma bump_check_in_range (bump len k : N) :
  len < word_bound -> k <= max_shift ->
  2 ^ k < word_bound /\ len - bump < word_bound /\
  (2 ^ k <= len - bump -> bump + 2 ^ k < word_bound).
Proof.
  intros Hlen Hk. unfold word_bound, max_shift in *.
  assert (2 ^ k < 2 ^ 64) by (apply N.pow_lt_mono_r; lia).
  repeat split; lia.
Qed.

(** The naive form needs the sum [bump + 2^k], which can be [2^64] even for
    a valid class and an in-range region, and would wrap around in [u64]. *)
Lemma naive_bump_check_overflows :
  exists bump len k, len < word_bound /\ bump <= len /\ k <= max_shift /\
                     word_bound <= bump + 2 ^ k.
Proof.
  exists (2 ^ 63), (2 ^ 63), 63.
  unfold word_bound, max_shift. vm_compute. repeat split; discriminate.
Qed.

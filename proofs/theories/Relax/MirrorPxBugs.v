(** * Mirror's published line 47 is not linearizable: finding M1 in the Px model

    Seed 002 (the RELAX thesis), Algorithm 4.1, Mirror's
    [compare_exchange_strong] (seed file lines 184–233; line [Ln] of the
    listing is file line [183 + n]): L40 (file line 223) is the NVMM DWCAS
    from the pair [before = (rep_p_val, rep_p_seq)] read at L5–L7 to
    [(newVal, rep_p_seq + 1)]; on failure [before] receives NVMM's current
    pair; L41–L42 (224–225) write the line back and fence; L46 (229)
    [if (before.val == expected) continue;]; L47 (230)
    [DWCAS(this, {rep_v_val, rep_v_seq}, before)], a DRAM DWCAS from the
    DRAM pair read at L9–L11 (192–194) to NVMM's current pair; L49 (232)
    [return res], i.e. false.  Finding M1 ([specs/relax/README.md],
    "### M1", TLC's 20-state trace of [specs/relax/mutants/MirrorAsWrittenLine47.cfg],
    no crash): if DRAM moved on since L9, L47's help fails, DRAM may still
    hold [expected], and the CAS has returned false although the register
    never held another value during it: a later load returns [expected].

    The model: [Relax/MirrorPxLin.v]'s, unchanged (its state [st], its
    step relation [step], its history [hist], its register [reg]), with
    L46–L47 as published instead of the code's retry.  [step_aw] is every
    [step] except the retry after a failed L40 ([s_l40_fail]) when NVMM's
    current value is not the expected one (the published L46 retries only
    when it is), plus [aw_l47]: a failed L40 whose NVMM value is another
    value runs L41–L42 (the thread's write-back and fence: the line's mark
    rises to its length), then L47 (DRAM DWCAS from the L9 pair [d] that
    [PL40] keeps, to NVMM's current pair; if DRAM is [d] it takes the
    write in flight, as the helper's L24 does in [step]), and is about to
    return the value L40 found (Rust: [Err(av)], i.e. [false]), as one
    atomic step ([sl47]).  Fusing L40's failure, L41, L42 and L47 into one
    step only removes interleavings, so every run of [reach_aw] is a run
    of the published algorithm: the refutation is sound.  Rust: the
    mutant [Line47AsWritten] of [impl/perdure-relax/src/patomic.rs]
    [Space::mirror_cas] (the [Err(actual) if mutant!(Line47AsWritten)]
    arm, L466–L474); the code runs the fix, retry from the top (the next
    [Err(_)] arm, L475–L482), which [step]'s [s_l40_fail] models.

    Proved:
    - [m1_run]: an explicit run of [reach_aw 0], 2 threads, 26 steps, no
      crash (TLC's trace, after the recovery the model starts with):
      thread 0 invokes CAS(0, 1), its [recover_field] finds DRAM equal to
      NVMM [(0, 0)] (line 3), it reads [(0, 0)] twice and stops before L40;
      thread 1's store(0) (a CAS loop that writes the value the field
      holds) moves NVMM to [(0, 1)], writes back, fences, moves DRAM to
      [(0, 1)] and returns; thread 1's CAS(0, 1) writes NVMM [(1, 2)] and
      stops before its write-back; thread 0's L40 fails, finding [(1, 2)],
      its L47 expects DRAM [(0, 0)], finds [(0, 1)], fails, and the CAS
      returns 1 (false); thread 0's load then returns 0 (DRAM still
      [(0, 1)]).  Its history is [m1_hist]; each step is checked by
      [vm_compute].
    - [m1_hist_not_durably_linearizable]: [m1_hist] is not durably
      linearizable ([Core/DurableLin.v]) for [reg 0], MirrorPxLin.v's
      register (CAS returns the value it found): the CAS's false needs a
      point of the pending CAS(0, 1) before its own, after the store's (the
      store returned before that CAS was invoked), so the register is 1 at
      the failed CAS's point and stays 1 (no store follows), yet the load,
      invoked after the failed CAS returned, returns 0.  By case analysis
      on the points' order ([sts], the register's value after [k] points).
    - [mirror_px_l47_as_written_not_durably_linearizable]: the two together:
      a reachable state of the published algorithm whose history is not
      durably linearizable.
    - [m1_hist_unreachable_in_code]: with the code's retry the history
      cannot happen: no [reach 0] state has it (from
      [mirror_px_durably_linearizable]).
    The fixed protocol: [Relax/MirrorPxLin.v]'s
    [mirror_px_durably_linearizable] (every run of [step], any number of
    threads and crashes, is durably linearizable for [reg v0]).

    Not here: finding M2 (the published L44, a single DRAM DWCAS from the
    L9 pair, which fails when a recovery mark on a pointer field was set or
    cleared in DRAM between L9 and L44, Algorithms 6.3/6.4: the CAS returns
    true while DRAM keeps the old pointer).  In MirrorPxLin.v's data field
    DRAM changes only by a sequence step, so after a failed L44 DRAM is
    never at L9's sequence and M2's [Space::finish_dram_half] is modelled
    but never needed (MirrorCode.v shows its DWCAS unreachable); refuting
    L44 needs a mark bit on the pair and Algorithm 6.4's unmarking load,
    which [MirrorMarksPx.v] models (one pointer field, no crashes): it
    refutes L44 there and proves [finish_dram_half]'s fix.  Shuttle finds
    it on the implementation too ([impl/perdure-relax/tests/mutants_relax.rs],
    mutant [Line44Once]).
    What MirrorPxLin.v abstracts is abstracted here too (one field in its
    line, unbounded sequence numbers, SC steps, atomic 16-byte reads and
    DWCAS). *)
From stdpp Require Import base list.
From Coq Require Import Lia.
From perdure.Core Require Import History DurableLin.
From perdure.Relax Require Import MirrorPxLin.

(** ** The published L46–L47 *)

(** A failed L40 whose NVMM value is not the expected one: L41–L42 (the
    thread's write-back and fence), then L47's DRAM DWCAS from the L9 pair
    [d] to NVMM's current pair; then about to return ([x]). *)
Definition sl47 (s : st) (t : nat) (x : tst) (d : pair) : st :=
  let s1 := St (ws s) (mk s `max` length (ws s)) (upd (pw s) t 0) (dr s) (rec s) (th s) (nid s) (xh s)
               (infl s) (gd s) in
  if decide (dr s = d) then scopy s1 t x (nv s) else sth s1 t x.

(** The published algorithm: the code's steps, except the retry after a
    failed L40 on another value, and the published L47. *)
Inductive step_aw : st → st → Prop :=
  | aw_code s s' :
      step s s' →
      (∀ t i op e p d, th s t = TOp i op (PL40 e p d) → th s' t = TOp i op (PL5 e) → (nv s).1 = e) →
      step_aw s s'
  | aw_l47 s t i op e p d :
      th s t = TOp i op (PL40 e p d) → nv s ≠ p → (nv s).1 ≠ e →
      step_aw s (sl47 s t (TOp i op (PRet (nv s).1)) d).

Inductive reach_aw (v0 : nat) : st → Prop :=
  | raw_init q0 d : reach_aw v0 (init v0 q0 d)
  | raw_step s s' : reach_aw v0 s → step_aw s s' → reach_aw v0 s'.

(** ** The run *)

Ltac cur_aw R := match type of R with reach_aw _ ?x => x end.
Ltac norm_aw R := match type of R with reach_aw ?v ?x => let y := eval vm_compute in x in change (reach_aw v y) in R end.
(** A code step moves no thread from L40 back to L5 (no thread's L40 fails
    in these steps). *)
Ltac no_retry :=
  let t := fresh "t" in let H1 := fresh "H" in let H2 := fresh "H" in
  intros t ????? H1 H2; destruct t as [|[|t]]; vm_compute in H1, H2; congruence.

(** Thread 0's CAS(0, 1) (op 0) returns 1 (false); thread 1's store(0)
    (op 1) returns; thread 1's CAS(0, 1) (op 2) is pending; thread 0's load
    (op 3) returns 0. *)
Definition m1_hist : history mop nat :=
  [Invoke 0 0 (OCas 0 1); Invoke 1 1 (OStore 0); Return 1 0; Invoke 2 1 (OCas 0 1); Return 0 1;
   Invoke 3 0 OLoad; Return 3 0].

Lemma m1_run : ∃ s, reach_aw 0 s ∧ hist s = m1_hist ∧ ws s = [(0, 0); (0, 1); (1, 2)] ∧ dr s = (0, 1).
Proof.
  pose proof (raw_init 0 0 (0, 0)) as R.
  (* thread 0 invokes CAS(0, 1); its recover_field finds DRAM = NVMM = (0, 0) (line 3) *)
  let x := cur_aw R in pose proof (raw_step _ _ _ R (aw_code x _ (s_invoke x 0 (OCas 0 1) eq_refl) ltac:(no_retry))) as R1. clear R. norm_aw R1.
  let x := cur_aw R1 in pose proof (raw_step _ _ _ R1 (aw_code x _ (s_late1 x 0 0 (OCas 0 1) eq_refl) ltac:(no_retry))) as R. clear R1. norm_aw R.
  let x := cur_aw R in pose proof (raw_step _ _ _ R (aw_code x _ (s_late2 x 0 0 (OCas 0 1) (0, 0) eq_refl) ltac:(no_retry))) as R1. clear R. norm_aw R1.
  let x := cur_aw R1 in pose proof (raw_step _ _ _ R1 (aw_code x _ (s_late3 x 0 0 (OCas 0 1) (0, 0) (0, 0) eq_refl eq_refl) ltac:(no_retry))) as R. clear R1. norm_aw R.
  (* its CAS: L5 reads NVMM (0, 0), L9 DRAM (0, 0); it stops before L40 *)
  let x := cur_aw R in pose proof (raw_step _ _ _ R (aw_code x _ (s_cas0 x 0 0 0 1 eq_refl eq_refl) ltac:(no_retry))) as R1. clear R. norm_aw R1.
  let x := cur_aw R1 in pose proof (raw_step _ _ _ R1 (aw_code x _ (s_l5 x 0 0 (OCas 0 1) 0 eq_refl) ltac:(no_retry))) as R. clear R1. norm_aw R.
  let x := cur_aw R in pose proof (raw_step _ _ _ R (aw_code x _ (s_l9_go x 0 0 (OCas 0 1) 0 (0, 0) eq_refl eq_refl eq_refl) ltac:(no_retry))) as R1. clear R. norm_aw R1.
  (* thread 1's store(0): NVMM (0, 1), write-back, fence, DRAM (0, 1), return *)
  let x := cur_aw R1 in pose proof (raw_step _ _ _ R1 (aw_code x _ (s_invoke x 1 (OStore 0) eq_refl) ltac:(no_retry))) as R. clear R1. norm_aw R.
  let x := cur_aw R in pose proof (raw_step _ _ _ R (aw_code x _ (s_store0 x 1 1 0 eq_refl eq_refl) ltac:(no_retry))) as R1. clear R. norm_aw R1.
  let x := cur_aw R1 in pose proof (raw_step _ _ _ R1 (aw_code x _ (s_l5 x 1 1 (OStore 0) 0 eq_refl) ltac:(no_retry))) as R. clear R1. norm_aw R.
  let x := cur_aw R in pose proof (raw_step _ _ _ R (aw_code x _ (s_l9_go x 1 1 (OStore 0) 0 (0, 0) eq_refl eq_refl eq_refl) ltac:(no_retry))) as R1. clear R. norm_aw R1.
  let x := cur_aw R1 in pose proof (raw_step _ _ _ R1 (aw_code x _ (s_l40_ok x 1 1 (OStore 0) 0 (0, 0) (0, 0) eq_refl eq_refl) ltac:(no_retry))) as R. clear R1. norm_aw R.
  let x := cur_aw R in pose proof (raw_step _ _ _ R (aw_code x _ (s_wpwb x 1 1 (OStore 0) 0 (0, 0) (0, 1) eq_refl) ltac:(no_retry))) as R1. clear R. norm_aw R1.
  let x := cur_aw R1 in pose proof (raw_step _ _ _ R1 (aw_code x _ (s_wfence x 1 1 (OStore 0) 0 (0, 0) (0, 1) eq_refl) ltac:(no_retry))) as R. clear R1. norm_aw R.
  let x := cur_aw R in pose proof (raw_step _ _ _ R (aw_code x _ (s_l44_ok x 1 1 (OStore 0) 0 (0, 0) (0, 1) eq_refl eq_refl) ltac:(no_retry))) as R1. clear R. norm_aw R1.
  let x := cur_aw R1 in pose proof (raw_step _ _ _ R1 (aw_code x _ (s_ret x 1 1 (OStore 0) 0 eq_refl) ltac:(no_retry))) as R. clear R1. norm_aw R.
  (* thread 1's CAS(0, 1): NVMM (1, 2); it stops before its write-back *)
  let x := cur_aw R in pose proof (raw_step _ _ _ R (aw_code x _ (s_invoke x 1 (OCas 0 1) eq_refl) ltac:(no_retry))) as R1. clear R. norm_aw R1.
  let x := cur_aw R1 in pose proof (raw_step _ _ _ R1 (aw_code x _ (s_cas0 x 1 2 0 1 eq_refl eq_refl) ltac:(no_retry))) as R. clear R1. norm_aw R.
  let x := cur_aw R in pose proof (raw_step _ _ _ R (aw_code x _ (s_l5 x 1 2 (OCas 0 1) 0 eq_refl) ltac:(no_retry))) as R1. clear R. norm_aw R1.
  let x := cur_aw R1 in pose proof (raw_step _ _ _ R1 (aw_code x _ (s_l9_go x 1 2 (OCas 0 1) 0 (0, 1) eq_refl eq_refl eq_refl) ltac:(no_retry))) as R. clear R1. norm_aw R.
  let x := cur_aw R in pose proof (raw_step _ _ _ R (aw_code x _ (s_l40_ok x 1 2 (OCas 0 1) 0 (0, 1) (0, 1) eq_refl eq_refl) ltac:(no_retry))) as R1. clear R. norm_aw R1.
  (* thread 0's L40 fails on (1, 2); L41, L42; L47 expects DRAM (0, 0), finds (0, 1): fails; return 1 *)
  let x := cur_aw R1 in pose proof (raw_step _ _ _ R1 (aw_l47 x 0 0 (OCas 0 1) 0 (0, 0) (0, 0) eq_refl
                                      ltac:(vm_compute; congruence) ltac:(vm_compute; congruence))) as R. clear R1. norm_aw R.
  let x := cur_aw R in pose proof (raw_step _ _ _ R (aw_code x _ (s_ret x 0 0 (OCas 0 1) 1 eq_refl) ltac:(no_retry))) as R1. clear R. norm_aw R1.
  (* thread 0 loads DRAM's 0 *)
  let x := cur_aw R1 in pose proof (raw_step _ _ _ R1 (aw_code x _ (s_invoke x 0 OLoad eq_refl) ltac:(no_retry))) as R. clear R1. norm_aw R.
  let x := cur_aw R in pose proof (raw_step _ _ _ R (aw_code x _ (s_load x 0 3 eq_refl eq_refl) ltac:(no_retry))) as R1. clear R. norm_aw R1.
  let x := cur_aw R1 in pose proof (raw_step _ _ _ R1 (aw_code x _ (s_ret x 0 3 OLoad 0 eq_refl) ltac:(no_retry))) as R. clear R1. norm_aw R.
  eexists. split; [exact R |]. split_and!; vm_compute; reflexivity.
Qed.

(** ** The history is not durably linearizable *)

(** The register's value after the first [k] operations of [l] from [σ]. *)
Fixpoint sts (σ : nat) (l : list (mop * nat)) (k : nat) {struct k} : nat :=
  match k with
  | 0 => σ
  | S k => match l with [] => σ | (op, _) :: l => sts (post σ op) l k end
  end.

Lemma runs_at v0 σ l k op r :
  runs (reg v0) σ l → l !! k = Some (op, r) → r = ret (sts σ l k) op ∧ sts σ l (S k) = post (sts σ l k) op.
Proof.
  intros Hr. revert k op r. induction Hr as [σ | σ op' r' σ' l Hs Hr IH]; intros k op r Hk; [done |].
  destruct Hs as [Hr' Hσ']. subst σ'. destruct k as [|k]; simpl in Hk |- *.
  - injection Hk as -> ->. by subst r.
  - by apply IH.
Qed.

(** A point's operation is the one its invoke names. *)
Lemma xl_op (xh : list (xevent mop nat)) i op v :
  prefix_ok point_ok xh → XL i op v ∈ xh → ∃ t, Invoke i t op ∈ erase xh.
Proof.
  intros Hok (a & b & E)%elem_of_list_split. destruct (Hok _ _ _ E) as [[t Ht] _].
  exists t. rewrite E, erase_app. apply elem_of_app. by left.
Qed.

(** An operation has at most one point: one index in [points xh]. *)
Lemma pt_index (xh : list (xevent mop nat)) k k' i op op' v v' :
  prefix_ok point_ok xh → points xh !! k = Some (i, op, v) → points xh !! k' = Some (i, op', v') → k = k'.
Proof.
  intros Hok Hk Hk'. eapply NoDup_lookup; [exact (points_nodup xh Hok) | |].
  - by rewrite !list_lookup_fmap, Hk.
  - by rewrite !list_lookup_fmap, Hk'.
Qed.

(** Real time: if [i] returned [v] before [j] was invoked, [i]'s point
    comes before [j]'s. *)
Lemma rt_lt (xh : list (xevent mop nat)) h1 h2 i v j ki kj opi vi opj vj :
  prefix_ok point_ok xh → erase xh = h1 ++ Return i v :: h2 → ¬ invoked h1 j →
  points xh !! ki = Some (i, opi, vi) → points xh !! kj = Some (j, opj, vj) → ki < kj.
Proof.
  intros Hok Eh Hj Hki Hkj.
  destruct (erase_eq_app_cons _ _ _ _ Eh) as (b1 & b2 & -> & Eb1 & _).
  destruct (Hok _ _ _ eq_refl) as [op Hop]. simpl in Hop.
  apply elem_of_points, elem_of_list_lookup in Hop as (k & Hk).
  assert (points (b1 ++ XE (Return i v) :: b2) !! k = Some (i, op, v)) as Hk'.
  { rewrite points_app. by apply lookup_app_l_Some. }
  pose proof (pt_index _ _ _ _ _ _ _ _ Hok Hki Hk') as ->.
  pose proof (lookup_lt_Some _ _ _ Hk).
  destruct (decide (kj < length (points b1))) as [Hlt|]; [| lia]. exfalso.
  rewrite points_app, lookup_app_l in Hkj by done.
  apply elem_of_list_lookup_2, elem_of_points, elem_of_list_split in Hkj as (c1 & c2 & ->).
  destruct (Hok c1 (XL j opj vj) (c2 ++ XE (Return i v) :: b2)) as [[t Ht] _].
  { by rewrite <- app_assoc. }
  apply Hj. exists t, opj. rewrite <- Eb1, erase_app. apply elem_of_app. by left.
Qed.

Theorem m1_hist_not_durably_linearizable : ¬ durably_linearizable (reg 0) m1_hist.
Proof.
  intros (xh & [Herase Hok Hacc]).
  set (pl := points xh).
  (* the operations of the points *)
  assert (Hid : ∀ k i op v, pl !! k = Some (i, op, v) →
            (i = 0 ∧ op = OCas 0 1) ∨ (i = 1 ∧ op = OStore 0) ∨ (i = 2 ∧ op = OCas 0 1) ∨ (i = 3 ∧ op = OLoad)).
  { intros k i op v Hk. apply elem_of_list_lookup_2, elem_of_points in Hk.
    destruct (xl_op _ _ _ _ Hok Hk) as [t Ht]. rewrite Herase in Ht.
    apply elem_of_list_In in Ht. simpl in Ht. naive_solver. }
  (* a returned operation has a point with its value *)
  assert (Hret : ∀ i v, Return i v ∈ m1_hist → ∃ k op, pl !! k = Some (i, op, v)).
  { intros i v Hin. rewrite <- Herase in Hin. apply elem_of_erase, elem_of_list_split in Hin as (a & b & E).
    destruct (Hok _ _ _ E) as [op Hop]. apply elem_of_points, elem_of_list_lookup in Hop as (k & Hk).
    exists k, op. unfold pl. rewrite E, points_app. by apply lookup_app_l_Some. }
  assert (Hacc' : runs (reg 0) 0 (effects pl)) by exact Hacc.
  assert (Hat : ∀ k i op v, pl !! k = Some (i, op, v) →
            v = ret (sts 0 (effects pl) k) op ∧ sts 0 (effects pl) (S k) = post (sts 0 (effects pl) k) op).
  { intros k i op v Hk. apply (runs_at 0); [done |]. unfold effects. by rewrite list_lookup_fmap, Hk. }
  destruct (Hret 0 1) as (n0 & o0 & H0); [apply elem_of_list_In; simpl; tauto |].
  destruct (Hret 1 0) as (n1 & o1 & H1); [apply elem_of_list_In; simpl; tauto |].
  destruct (Hret 3 0) as (n3 & o3 & H3); [apply elem_of_list_In; simpl; tauto |].
  assert (o0 = OCas 0 1) as -> by (destruct (Hid _ _ _ _ H0) as [[_ ?]|[[? _]|[[? _]|[? _]]]]; congruence).
  assert (o1 = OStore 0) as -> by (destruct (Hid _ _ _ _ H1) as [[? _]|[[_ ?]|[[? _]|[? _]]]]; congruence).
  assert (o3 = OLoad) as -> by (destruct (Hid _ _ _ _ H3) as [[? _]|[[? _]|[[? _]|[_ ?]]]]; congruence).
  (* real time: the store returned before op 2 was invoked, the failed CAS before the load *)
  assert (H12 : ∀ k op v, pl !! k = Some (2, op, v) → n1 < k).
  { intros k op v Hk.
    apply (rt_lt xh [Invoke 0 0 (OCas 0 1); Invoke 1 1 (OStore 0)]
             [Invoke 2 1 (OCas 0 1); Return 0 1; Invoke 3 0 OLoad; Return 3 0] 1 0 2 n1 k (OStore 0) 0 op v Hok);
      try done.
    intros (t & op' & Hin). apply elem_of_list_In in Hin. simpl in Hin. naive_solver. }
  assert (H03 : n0 < n3).
  { apply (rt_lt xh [Invoke 0 0 (OCas 0 1); Invoke 1 1 (OStore 0); Return 1 0; Invoke 2 1 (OCas 0 1)]
             [Invoke 3 0 OLoad; Return 3 0] 0 1 3 n0 n3 (OCas 0 1) 1 OLoad 0 Hok); try done.
    intros (t & op' & Hin). apply elem_of_list_In in Hin. simpl in Hin. naive_solver. }
  pose proof (lookup_lt_Some _ _ _ H3) as Hlen.
  destruct (Hat _ _ _ _ H0) as [Hv0 Hs0]. simpl in Hv0.
  (* the register is 1 at the failed CAS's point: some point of op 2 precedes it *)
  assert (∃ n2 o2 v2, n2 < n0 ∧ pl !! n2 = Some (2, o2, v2)) as (n2 & o2 & v2 & Hn20 & H2).
  { assert (∀ k, k ≤ n0 → (∃ n2 o2 v2, n2 < k ∧ pl !! n2 = Some (2, o2, v2)) ∨ sts 0 (effects pl) k = 0)
      as Hz.
    { induction k as [|k IH]; intros Hk; [by right |].
      destruct IH as [(n2 & o2 & v2 & ? & ?)|IH]; [lia | left; exists n2, o2, v2; split; [lia | done] |].
      destruct (lookup_lt_is_Some_2 pl k ltac:(lia)) as [[[i op] v] Hpk].
      destruct (Hat _ _ _ _ Hpk) as [_ Hsk].
      destruct (Hid _ _ _ _ Hpk) as [[-> ->]|[[-> ->]|[[-> ->]|[-> ->]]]].
      - pose proof (pt_index _ _ _ _ _ _ _ _ Hok Hpk H0). lia.
      - right. by rewrite Hsk, IH.
      - left. exists k, (OCas 0 1), v. split; [lia | done].
      - pose proof (pt_index _ _ _ _ _ _ _ _ Hok Hpk H3). lia. }
    destruct (Hz n0 ltac:(lia)) as [(n2 & o2 & v2 & ? & ?)|Hz0]; [by exists n2, o2, v2 |].
    rewrite Hz0 in Hv0. done. }
  pose proof (H12 _ _ _ H2).
  (* from the failed CAS's point to the load's, only loads: the register stays 1 *)
  assert (∀ k, n0 < k → k ≤ n3 → sts 0 (effects pl) k = 1) as Hone.
  { induction k as [|k IH]; intros Hk Hk3; [lia |].
    destruct (decide (k = n0)) as [->|Hne].
    - rewrite Hs0, <- Hv0. done.
    - destruct (lookup_lt_is_Some_2 pl k ltac:(lia)) as [[[i op] v] Hpk].
      destruct (Hat _ _ _ _ Hpk) as [_ ->]. rewrite IH by lia.
      destruct (Hid _ _ _ _ Hpk) as [[-> ->]|[[-> ->]|[[-> ->]|[-> ->]]]].
      + pose proof (pt_index _ _ _ _ _ _ _ _ Hok Hpk H0). lia.
      + pose proof (pt_index _ _ _ _ _ _ _ _ Hok Hpk H1). lia.
      + pose proof (pt_index _ _ _ _ _ _ _ _ Hok Hpk H2). lia.
      + done. }
  destruct (Hat _ _ _ _ H3) as [Hv3 _]. simpl in Hv3. rewrite Hone in Hv3 by lia. done.
Qed.

(** The published L47 breaks Mirror's register: a reachable state of the
    published algorithm whose history is not durably linearizable. *)
Theorem mirror_px_l47_as_written_not_durably_linearizable :
  ∃ s, reach_aw 0 s ∧ hist s = m1_hist ∧ ¬ durably_linearizable (reg 0) (hist s).
Proof.
  destruct m1_run as (s & Hr & Hh & _). exists s. split_and!; [done | done |].
  rewrite Hh. apply m1_hist_not_durably_linearizable.
Qed.

(** With the code's retry (M1's fix), no run has this history. *)
Theorem m1_hist_unreachable_in_code : ∀ s, reach 0 s → hist s ≠ m1_hist.
Proof.
  intros s Hr Hh. apply m1_hist_not_durably_linearizable. rewrite <- Hh.
  by apply mirror_px_durably_linearizable.
Qed.

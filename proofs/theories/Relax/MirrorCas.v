(** * Mirror's CAS over two replicas: a logically atomic specification

    Justifies the crash-free behaviour of Mirror's [compare_exchange_strong]
    (thesis, Chapter 4, Algorithm 4.1, as published, line 47 included:
    TLC showed that line wrong (finding M1), and [impl/perdure-relax]'s
    [Space::mirror_cas] in [patomic.rs] runs the fixed retry instead, which
    this file does not model) against any number of concurrent CASes that help each
    other, i.e. the normal-execution part of [specs/relax/Mirror.tla].  It is
    kept as the published algorithm; the code's algorithm (fixes M1 and M2),
    with loads and stores, is [Relax/MirrorCode.v].

    The code ([mirror_cas], [new_mirror]) is heap_lang.  Each replica of the
    field, the NVMM pair at [p] and the DRAM pair at [d], is one location
    holding the 16-byte (value, sequence) pair as one word
    [enc v s = s·2^64 + v] (heap_lang's [CmpXchg] compares only unboxed
    values, so a pair value cannot be CASed; one word read and CASed at
    once is what the 16-byte loads and DWCAS do); values are in
    [[0, 2^64)], sequence numbers are unbounded naturals (no wrap-around:
    with 64-bit sequences a wrap needs 2^64 writes).  Flushes and fences
    are no-ops here.

    Proved, in Iris 4.0 with [iris.program_logic.atomic] (closed, no
    [Admitted]):
    - [mirror_cas_spec] (for [0 ≤ new < 2^64]):
        <<< ∀∀ v, mirror_val γ v >>> mirror_cas #p #d #e #new @ ↑N
        <<< mirror_val γ (if bool_decide (v = e) then new else v),
            RET #(bool_decide (v = e)) >>>
      the abstract value is the NVMM replica's value; a successful CAS
      linearizes at its DWCAS on NVMM (line 40), a failing one at its read
      of NVMM when the sequence numbers agree and the value differs
      (lines 26–29) or at its failed DWCAS on NVMM when the value there
      differs (line 46); helping DWCASes on DRAM (lines 19–24, 44, 47)
      never change the abstract value;
    - [new_mirror_spec]: allocating both replicas of (v, 0);
    - [mirror_inv_replicas]: what the invariant says of the replicas;
    - the invariant [mirror_inv_body] that every step keeps: NVMM holds
      version [n] of a history [m] of values, DRAM holds version [dn] with
      [dn = n ∨ dn + 1 = n] (Mirror's first invariant), both replicas hold
      the history's value for their version (so equal sequence numbers
      imply equal values), NVMM changes only by a DWCAS from a pair read
      when the sequence numbers agreed and raises the sequence by one
      (Mirror's second invariant), DRAM's version never goes back.

    Deviations from Algorithm 4.1, none of which changes what is written:
    each replica is read with one 16-byte load (the seed reads seq, value,
    seq again and restarts on a torn read, lines 5–17), and DRAM is read
    before NVMM (the seed reads NVMM first).  With the seed's order a
    failing CAS's linearization point is its NVMM read only if the DRAM
    read that follows confirms equal sequence numbers: that needs a
    prophecy variable, which this proof does not use.  [mirror_cas]
    retries by recursion where the seed has [continue].

    What the Iris proof covers and what it does not: it covers every
    interleaving of concurrent CASes on one field without crashes and with
    unbounded sequence numbers.  Persistence is outside heap_lang: flushes,
    the Px86 order in which the NVMM pair reaches persistent memory, crashes
    and recovery are not modelled here; [Relax/RecoverField.v] covers what
    happens after a crash (garbage DRAM, concurrent [recover_field], sequence
    numbers modulo 2^k), with Mirror's writes as single atomic steps, and
    [specs/relax/Mirror.tla] the persistence order.  Loads (Mirror reads the
    DRAM replica only) are not covered: with the NVMM value as the abstract
    state a DRAM load is not atomic when a CAS is between its two DWCASes.
    Termination/lock-freedom is not covered (the WPs are partial). *)
From iris.base_logic.lib Require Import invariants ghost_var ghost_map mono_nat.
From iris.program_logic Require Import atomic.
From iris.heap_lang Require Import proofmode notation.
From iris.prelude Require Import options.
Local Open Scope Z_scope.

(** ** The 16-byte pair as one word *)
Definition B : Z := 2 ^ 64.

Lemma B_pos : 0 < B.
Proof. unfold B. reflexivity. Qed.

Definition enc (v s : Z) : Z := s * B + v.

Lemma enc_nonneg v s : 0 ≤ v < B → 0 ≤ s → 0 ≤ enc v s.
Proof. intros ??. pose proof B_pos. unfold enc. nia. Qed.

Lemma enc_rem v s : 0 ≤ v < B → 0 ≤ s → enc v s `rem` B = v.
Proof.
  intros ??. pose proof B_pos. rewrite Z.rem_mod_nonneg; [|by apply enc_nonneg|lia].
  unfold enc. rewrite Z.add_comm Z.mod_add; [|lia]. apply Z.mod_small. lia.
Qed.

Lemma enc_quot v s : 0 ≤ v < B → 0 ≤ s → enc v s `quot` B = s.
Proof.
  intros ??. pose proof B_pos. rewrite Z.quot_div_nonneg; [|by apply enc_nonneg|lia].
  unfold enc. rewrite Z.add_comm Z.div_add; [|lia]. rewrite Z.div_small; lia.
Qed.

Lemma enc_inj v s v' s' :
  0 ≤ v < B → 0 ≤ s → 0 ≤ v' < B → 0 ≤ s' → enc v s = enc v' s' → v = v' ∧ s = s'.
Proof.
  intros ???? Heq. split.
  - rewrite -(enc_rem v s) // -(enc_rem v' s') // Heq //.
  - rewrite -(enc_quot v s) // -(enc_quot v' s') // Heq //.
Qed.

(** ** The code *)

(** Algorithm 4.1.  [wv], [wp]: the DRAM and NVMM pairs read; [sv], [sp]
    their sequence numbers. *)
Definition mirror_cas : val :=
  rec: "cas" "p" "d" "e" "new" :=
    let: "wv" := !"d" in
    let: "wp" := !"p" in
    let: "sv" := "wv" `quot` #B in
    let: "sp" := "wp" `quot` #B in
    if: "sp" = "sv" + #1 then
      (* lines 19–24: help the pending write: copy NVMM to DRAM *)
      CmpXchg "d" "wv" "wp";; "cas" "p" "d" "e" "new"
    else if: "sp" = "sv" then
      if: "wp" `rem` #B = "e" then
        (* line 40: DWCAS on NVMM *)
        let: "r" := CmpXchg "p" "wp" (("sp" + #1) * #B + "new") in
        if: Snd "r" then
          (* line 44: DWCAS on DRAM *)
          CmpXchg "d" "wp" (("sp" + #1) * #B + "new");; #true
        else if: (Fst "r") `rem` #B = "e" then "cas" "p" "d" "e" "new"
        else
          (* line 47: help the write that won, then fail *)
          CmpXchg "d" "wv" (Fst "r");; #false
      else #false                    (* lines 26–29 *)
    else "cas" "p" "d" "e" "new".    (* line 16: the versions differ *)

(** Both replicas of (v, 0). *)
Definition new_mirror : val := λ: "v", (ref "v", ref "v").

(** ** Ghost state *)
Class mirrorG Σ := MirrorG {
  mirror_ghost_varG :> ghost_varG Σ Z;
  mirror_histG :> ghost_mapG Σ nat Z;
  mirror_mono_natG :> mono_natG Σ
}.
Definition mirrorΣ : gFunctors := #[ghost_varΣ Z; ghost_mapΣ nat Z; mono_natΣ].
Global Instance subG_mirrorΣ {Σ} : subG mirrorΣ Σ → mirrorG Σ.
Proof. solve_inG. Qed.

Record mirror_name := MirrorName {
  γ_val : gname;    (* the abstract value: NVMM's *)
  γ_hist : gname;   (* version i ↦ value of NVMM's i-th pair *)
  γ_dram : gname    (* DRAM's version, monotone *)
}.

Section spec.
  Context `{!heapGS Σ, !mirrorG Σ} (N : namespace).

  Definition mirror_inv_body (γ : mirror_name) (p d : loc) : iProp Σ :=
    ∃ (m : gmap nat Z) (n dn : nat) (vn vd : Z),
      p ↦ #(enc vn (Z.of_nat n)) ∗ d ↦ #(enc vd (Z.of_nat dn)) ∗
      ghost_map_auth (γ_hist γ) 1 m ∗ ([∗ map] i ↦ v ∈ m, i ↪[γ_hist γ]□ v) ∗
      mono_nat_auth_own (γ_dram γ) 1 dn ∗ ghost_var (γ_val γ) (1/2) vn ∗
      ⌜m !! n = Some vn ∧ m !! dn = Some vd ∧ (dn = n ∨ S dn = n) ∧
       (∀ i, is_Some (m !! i) → (i ≤ n)%nat) ∧ map_Forall (λ _ v, 0 ≤ v < B) m⌝.

  Definition is_mirror (γ : mirror_name) (p d : loc) : iProp Σ :=
    inv N (mirror_inv_body γ p d).

  (** The client's half of the abstract value. *)
  Definition mirror_val (γ : mirror_name) (v : Z) : iProp Σ := ghost_var (γ_val γ) (1/2) v.

  Global Instance is_mirror_persistent γ p d : Persistent (is_mirror γ p d).
  Proof. apply _. Qed.

  (** What the invariant says of the two replicas: Mirror's first
      invariant (NVMM's sequence number is DRAM's or DRAM's plus one) and
      equal sequence numbers imply equal values. *)
  Lemma mirror_inv_replicas γ p d :
    mirror_inv_body γ p d -∗
    ∃ (n dn : nat) (vn vd : Z), p ↦ #(enc vn (Z.of_nat n)) ∗ d ↦ #(enc vd (Z.of_nat dn)) ∗
      ⌜(dn = n ∨ S dn = n) ∧ (dn = n → vd = vn)⌝.
  Proof.
    iIntros "(%m & %n & %dn & %vn & %vd & Hp & Hd & _ & _ & _ & _ & %Hmn & %Hmd & %Hdn & _)".
    iExists n, dn, vn, vd. iFrame. iPureIntro. split; [exact Hdn|].
    intros ->. rewrite Hmn in Hmd. by injection Hmd.
  Qed.

  Lemma new_mirror_spec (v : Z) :
    0 ≤ v < B →
    {{{ True }}} new_mirror #v {{{ γ (p d : loc), RET (#p, #d); is_mirror γ p d ∗ mirror_val γ v }}}.
  Proof.
    iIntros (Hv Φ) "_ HΦ". wp_lam. wp_alloc d as "Hd". wp_alloc p as "Hp". wp_pures.
    iMod (ghost_var_alloc v) as (γv) "[Hv1 Hv2]".
    iMod (ghost_map_alloc_empty (K:=nat) (V:=Z)) as (γh) "Hm".
    iMod (ghost_map_insert_persist 0%nat v with "Hm") as "[Hm #H0]"; first done.
    iMod (mono_nat_own_alloc 0) as (γd) "[Hdn _]".
    set (γ := MirrorName γv γh γd).
    iMod (inv_alloc N _ (mirror_inv_body γ p d) with "[Hp Hd Hm Hdn Hv1]") as "#Hinv".
    { iNext. iExists {[0%nat := v]}, 0%nat, 0%nat, v, v.
      assert (enc v (Z.of_nat 0) = v) as -> by (unfold enc; lia).
      iFrame "Hp Hd Hm Hdn Hv1". iSplitL.
      - rewrite big_sepM_singleton. done.
      - iPureIntro. split_and!; [by rewrite lookup_singleton|by rewrite lookup_singleton|by left| |].
        + intros i [x Hi]. apply lookup_singleton_Some in Hi as [<- _]. lia.
        + by apply map_Forall_singleton. }
    iModIntro. iApply "HΦ". iFrame "Hinv". done.
  Qed.

  (* Closing the invariant, [iFrame] names the hypotheses that go back, in
     its order: [iFrame "∗ #"] tried every hypothesis, the persistent ones
     too, against the whole body (0.2-0.3 s a call). *)

  (** Facts every opening of the invariant gives. *)
  Local Ltac pure_inv H :=
    let Hn := fresh "Hmn" in let Hd := fresh "Hmd" in let Hdn := fresh "Hdn" in
    let Hdom := fresh "Hdom" in let Hr := fresh "Hrange" in
    destruct H as (Hn & Hd & Hdn & Hdom & Hr).

  (** A DWCAS on DRAM from the pair of version [dn] to NVMM's pair of a
      later version [t] succeeded (lines 19–24, 44, 47): DRAM was at [dn],
      so NVMM is at [dn] or [dn + 1], hence at [t = dn + 1], and the
      invariant holds again with DRAM at [t]. *)
  Lemma mirror_inv_dram_catch_up γ p d m n dn vn vd t vt :
    m !! n = Some vn → m !! dn = Some vd → (dn = n ∨ S dn = n) →
    (∀ i, is_Some (m !! i) → (i ≤ n)%nat) → map_Forall (λ _ v, 0 ≤ v < B) m →
    (dn < t)%nat →
    t ↪[γ_hist γ]□ vt -∗ p ↦ #(enc vn (Z.of_nat n)) -∗ d ↦ #(enc vt (Z.of_nat t)) -∗
    ghost_map_auth (γ_hist γ) 1 m -∗ ([∗ map] i ↦ v ∈ m, i ↪[γ_hist γ]□ v) -∗
    mono_nat_auth_own (γ_dram γ) 1 dn -∗ ghost_var (γ_val γ) (1/2) vn ==∗
    mirror_inv_body γ p d.
  Proof.
    iIntros (Hmn Hmd Hdn Hdom Hrange Hlt) "#Ht Hp Hd Hm #Hfr Hdn Hv".
    iDestruct (ghost_map_lookup with "Hm Ht") as %Hl.
    assert (t ≤ n)%nat as Hle by (apply Hdom; eauto).
    assert (t = n) as -> by lia.
    rewrite Hmn in Hl. injection Hl as ->.
    iMod (mono_nat_own_update n with "Hdn") as "[Hdn _]"; first lia.
    iModIntro. iExists m, n, n, vt, vt. iFrame "Hp Hd Hm Hfr Hdn Hv". iPureIntro. split_and!; try done. by left.
  Qed.

  (** A helping DWCAS on DRAM from a pair of version [dn] to NVMM's pair
      of a later version [t] (lines 19–24, 44, 47) keeps the invariant,
      whether it succeeds or not. *)
  Lemma dram_help_spec γ p d (dn t : nat) (vx vt : Z) :
    0 ≤ vx < B → (dn < t)%nat →
    {{{ is_mirror γ p d ∗ t ↪[γ_hist γ]□ vt }}}
      CmpXchg #d #(enc vx (Z.of_nat dn)) #(enc vt (Z.of_nat t))
    {{{ w, RET w; True }}}.
  Proof.
    iIntros (Hvx Hlt Φ) "[#Hinv #Ht] HΦ".
    iInv "Hinv" as (m n dn' vn vd) "(>Hp & >Hd & >Hm & >#Hfr & >Hdn & >Hv & >%Hpure)".
    pure_inv Hpure.
    destruct (decide (enc vd (Z.of_nat dn') = enc vx (Z.of_nat dn))) as [Heq|Hneq].
    - rewrite Heq. wp_cmpxchg_suc.
      assert (0 ≤ vd < B) as Hvd by exact (Hrange _ _ Hmd).
      destruct (enc_inj vd (Z.of_nat dn') vx (Z.of_nat dn) Hvd ltac:(lia) Hvx ltac:(lia) Heq)
        as [-> Hdn'].
      assert (dn' = dn) as -> by lia.
      iMod (mirror_inv_dram_catch_up _ _ _ _ _ _ _ _ _ _ Hmn Hmd Hdn Hdom Hrange
              with "Ht Hp Hd Hm Hfr Hdn Hv") as "Hi"; first lia.
      iModIntro. iSplitL "Hi"; first by iNext. by iApply "HΦ".
    - wp_cmpxchg_fail. iModIntro. iSplitL "Hp Hd Hm Hdn Hv".
      { iNext. iExists m, n, dn', vn, vd. iFrame "Hp Hd Hm Hfr Hdn Hv". iPureIntro. done. }
      by iApply "HΦ".
  Qed.

  Lemma mirror_cas_spec γ (p d : loc) (e nw : Z) :
    0 ≤ nw < B →
    is_mirror γ p d -∗
    <<< ∀∀ v : Z, mirror_val γ v >>> mirror_cas #p #d #e #nw @ ↑N
    <<< mirror_val γ (if bool_decide (v = e) then nw else v), RET #(bool_decide (v = e)) >>>.
  Proof.
    iIntros (Hnw) "#Hinv". iIntros (Φ) "AU". pose proof B_pos as HB. iLöb as "IH".
    wp_rec. wp_pures.
    (* line 1: read DRAM *)
    wp_bind (!_)%E.
    iInv "Hinv" as (m0 n0 dn vn0 vd) "(>Hp & >Hd & >Hm & >#Hfr0 & >Hdn & >Hv & >%Hpure)".
    wp_load. pure_inv Hpure.
    iDestruct (mono_nat_lb_own_get with "Hdn") as "#Hdlb".
    assert (0 ≤ vd < B) as Hvd by exact (Hrange _ _ Hmd).
    iModIntro. iSplitL "Hp Hd Hm Hdn Hv".
    { iNext. iExists m0, n0, dn, vn0, vd. iFrame "Hp Hd Hm Hfr0 Hdn Hv". iPureIntro. done. }
    clear Hmn Hmd Hdn Hdom Hrange.
    wp_pures.
    (* read NVMM *)
    wp_bind (!_)%E.
    iInv "Hinv" as (m n2 dn2 vn2 vd2) "(>Hp & >Hd & >Hm & >#Hfr & >Hdn & >Hv & >%Hpure)".
    wp_load. pure_inv Hpure.
    iDestruct (big_sepM_lookup with "Hfr") as "#Hfn"; first exact Hmn.
    assert (0 ≤ vn2 < B) as Hvn2 by exact (Hrange _ _ Hmn).
    destruct (decide (n2 = dn ∧ vn2 ≠ e)) as [[-> Hne]|Hnlp].
    { (* lines 26–29: the versions agree and the value is not [e]: the
         failure's linearization point *)
      iMod "AU" as (v) "[Hv' [_ Hcommit]]".
      iDestruct (ghost_var_agree with "Hv Hv'") as %<-.
      iMod ("Hcommit" with "[Hv']") as "HΦ"; first by rewrite bool_decide_false.
      rewrite (bool_decide_false (vn2 = e)) //.
      iModIntro. iSplitL "Hp Hd Hm Hdn Hv".
      { iNext. iExists m, dn, dn2, vn2, vd2. iFrame "Hp Hd Hm Hfr Hdn Hv". iPureIntro. done. }
      wp_pures. rewrite !enc_quot //; try lia.
      rewrite bool_decide_false; last (intros [= ?]; lia). wp_pures.
      rewrite bool_decide_true //. wp_pures. rewrite enc_rem; [|done|lia].
      rewrite bool_decide_false; last (intros [= ?]; done). wp_pures. done. }
    iModIntro. iSplitL "Hp Hd Hm Hdn Hv".
    { iNext. iExists m, n2, dn2, vn2, vd2. iFrame "Hp Hd Hm Hfr Hdn Hv". iPureIntro. done. }
    clear Hmn Hmd Hdn Hdom Hrange.
    wp_pures. rewrite !enc_quot //; try lia.
    destruct (decide (n2 = S dn)) as [->|Hhelp].
    { (* lines 19–24: help the pending write *)
      rewrite bool_decide_true; last (do 2 f_equal; lia). wp_pures.
      wp_apply (dram_help_spec _ _ _ dn (S dn) vd vn2 Hvd ltac:(lia) with "[$Hinv $Hfn]").
      iIntros (w) "_". wp_pures. iApply ("IH" with "AU"). }
    rewrite bool_decide_false; last (intros [= ?]; lia). wp_pures.
    destruct (decide (n2 = dn)) as [->|Hdiff]; last first.
    { (* line 16: the versions differ: retry *)
      rewrite bool_decide_false; last (intros [= ?]; lia). wp_pures. iApply ("IH" with "AU"). }
    assert (vn2 = e) as -> by (destruct (decide (vn2 = e)); [done|exfalso; apply Hnlp; done]).
    rewrite bool_decide_true //. wp_pures. rewrite enc_rem; [|done|lia].
    rewrite bool_decide_true //. wp_pures.
    assert (((Z.of_nat dn + 1) * B + nw) = enc nw (Z.of_nat (S dn))) as -> by (unfold enc; lia).
    (* line 40: DWCAS on NVMM *)
    wp_bind (CmpXchg _ _ _).
    iInv "Hinv" as (m3 n3 dn3 vn3 vd3) "(>Hp & >Hd & >Hm & >#Hfr3 & >Hdn & >Hv & >%Hpure)".
    pure_inv Hpure.
    iDestruct (ghost_map_lookup with "Hm Hfn") as %Hle.
    assert (dn ≤ n3)%nat as Hdn_n3 by (apply Hdom; eauto).
    assert (0 ≤ vn3 < B) as Hvn3 by exact (Hrange _ _ Hmn).
    destruct (decide (enc vn3 (Z.of_nat n3) = enc e (Z.of_nat dn))) as [Heq|Hneq].
    - (* success: the linearization point *)
      rewrite Heq. wp_cmpxchg_suc.
      destruct (enc_inj vn3 (Z.of_nat n3) e (Z.of_nat dn) Hvn3 ltac:(lia) Hvn2 ltac:(lia) Heq) as [-> Hn3].
      assert (n3 = dn) as -> by lia.
      iDestruct (mono_nat_lb_own_valid with "Hdn Hdlb") as %[_ Hdd].
      assert (dn3 = dn) as -> by lia.
      iMod "AU" as (v) "[Hv' [_ Hcommit]]".
      iDestruct (ghost_var_agree with "Hv Hv'") as %<-.
      iMod (ghost_var_update_2 nw with "Hv Hv'") as "[Hv Hv']"; first by rewrite Qp.half_half.
      assert (m3 !! S dn = None) as Hfree.
      { destruct (m3 !! S dn) eqn:E; [|done]. exfalso. assert (S dn ≤ dn)%nat by (apply Hdom; eauto). lia. }
      iMod (ghost_map_insert_persist (S dn) nw with "Hm") as "[Hm #Hnew]"; first exact Hfree.
      iMod ("Hcommit" with "[Hv']") as "HΦ"; first by rewrite bool_decide_true.
      iModIntro. iSplitL "Hp Hd Hm Hdn Hv".
      { iNext. iExists (<[S dn := nw]> m3), (S dn), dn, nw, vd3. iFrame "Hp Hd Hm Hdn Hv".
        rewrite big_sepM_insert //. iFrame "Hnew Hfr3". iPureIntro. split_and!.
        - by rewrite lookup_insert.
        - rewrite lookup_insert_ne //; lia.
        - by right.
        - intros i [x Hi]. destruct (decide (i = S dn)) as [->|Hi']; [lia|].
          rewrite lookup_insert_ne in Hi; [|done]. assert (i ≤ dn)%nat by (apply Hdom; eauto). lia.
        - by apply map_Forall_insert_2. }
      rewrite bool_decide_true //. wp_pures.
      replace ((Z.of_nat dn + 1) * B + nw) with (enc nw (Z.of_nat (S dn))) by (unfold enc; lia).
      (* line 44: DWCAS on DRAM *)
      wp_apply (dram_help_spec _ _ _ dn (S dn) e nw Hvn2 ltac:(lia) with "[$Hinv $Hnew]").
      iIntros (w) "_". wp_pures. done.
    - (* the DWCAS on NVMM fails: NVMM moved on *)
      wp_cmpxchg_fail.
      assert (n3 ≠ dn) as Hn3.
      { intros ->. apply Hneq. rewrite Hmn in Hle. injection Hle as ->. done. }
      iDestruct (big_sepM_lookup with "Hfr3") as "#Hfn3"; first exact Hmn.
      destruct (decide (vn3 = e)) as [->|Hne3].
      + (* the value is still [e]: retry (line 46's continue) *)
        iModIntro. iSplitL "Hp Hd Hm Hdn Hv".
        { iNext. iExists m3, n3, dn3, e, vd3. iFrame "Hp Hd Hm Hfr3 Hdn Hv". iPureIntro. done. }
        wp_pures. rewrite enc_rem; [|done|lia]. rewrite bool_decide_true //. wp_pures.
        iApply ("IH" with "AU").
      + (* the failure's linearization point *)
        iMod "AU" as (v) "[Hv' [_ Hcommit]]".
        iDestruct (ghost_var_agree with "Hv Hv'") as %<-.
        iMod ("Hcommit" with "[Hv']") as "HΦ"; first by rewrite bool_decide_false.
        rewrite (bool_decide_false (vn3 = e)) //.
        iModIntro. iSplitL "Hp Hd Hm Hdn Hv".
        { iNext. iExists m3, n3, dn3, vn3, vd3. iFrame "Hp Hd Hm Hfr3 Hdn Hv". iPureIntro. done. }
        wp_pures. rewrite enc_rem; [|done|lia]. rewrite bool_decide_false; last (intros [= ?]; done).
        wp_pures.
        (* line 47: help the write that won *)
        wp_apply (dram_help_spec _ _ _ dn n3 vd vn3 Hvd ltac:(lia) with "[$Hinv $Hfn3]").
        iIntros (w) "_". wp_pures. done.
  Qed.
End spec.

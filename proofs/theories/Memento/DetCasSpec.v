(** * Memento's detectable CAS, crash-free: a logically atomic specification

    Justifies the crash-free behaviour of detectable CAS (seed paper §3,
    Algorithm 1 LOAD and CAS with [recovery] false, Algorithm 2 LOADHELP)
    against concurrent helpers, i.e. the normal-execution part of the TLA+
    module [specs/memento/DetectableCAS.tla] and of
    [impl/perdure-memento/src/cas.rs] ([DetectableCasAtomic::load],
    [DetectableCasAtomic::cas] outside recovery,
    [DetectableCasAtomic::load_help]).

    The code ([load_help], [load], [det_cas]) is heap_lang.  A location
    holds one integer word [enc v p t = v·1024 + p·512 + t]: the value
    [v ≥ 0], the parity bit [p], the tid [t < 512] (0: stable, then
    parity Even); decoded with [quot]/[rem] as the seed's DECODE.  rdtscp
    is a global counter incremented with FAA; HELP[p][tid] is the cell
    [hlp +ₗ (2·tid + p)]; OWN, LOCAL and the memento are locations of the
    thread.  Flushes are no-ops (no crash here).

    Proved, in Iris 4.0 with [iris.program_logic.atomic] (all closed, no
    [Admitted]):
    - [load_help_spec], [load_spec]:
        <<< ∀∀ v, loc_val γ v >>> load #clk #hlp #l @ ↑N <<< loc_val γ v, RET #v >>>
      the linearization point is the load that sees a stable word, or the
      helper's CAS that removes an annotation;
    - [det_cas_spec] (for [0 ≤ old], [0 ≤ new], [0 < tid < 512]):
        <<< ∀∀ v, loc_val γ v >>>
          det_cas #clk #hlp #own #lcl #mmt #l #old #new #tid @ ↑N
        <<< loc_val γ (if bool_decide (v = old) then new else v),
            RET #(bool_decide (v = old)) >>>
      i.e. it atomically replaces the abstract value [old] by [new] and
      returns true (linearization point: the first plain CAS, L26), or
      returns false with the abstract value ≠ [old] (linearization point:
      LOADHELP's, inside L27) -- while any number of other threads run
      [load_help] concurrently and remove its annotation (L17–L18) before
      its own second plain CAS (L38), which then fails harmlessly;
    - [new_loc_spec]: allocating a location with a stable word.
    The abstract value is the word's value stripped of parity and tid
    ([is_loc]: an invariant holding the physical word and half of a ghost
    variable with its value; the client holds the other half, [loc_val]).
    Annotating (L26) changes the abstract value; every other write
    (removing the annotation, by the owner or a helper) leaves it.

    Deviations from the seed's code, none of which changes what is read or
    written: LOADHELP starts with its own load (so LOAD is LOADHELP) and
    every retry re-loads the location instead of reusing the value of the
    failed load or CAS; PATIENCE (L9) is left out (a spin loop); the
    failure path returns false rather than (ERR cur); the failure
    checkpoint carries a fresh timestamp (as in [DetCas.v]).

    Not covered: crashes and recovery (L9–L25: see [DetCas.v]), the
    persistence order of the flushes (see [Core/Px86.v] and the TLA+
    module), the value of HELP and of the memento (the spec does not
    depend on them: they only matter for recovery), the environment's
    setup ([env_inv]: the clock and the HELP cells are assumed allocated,
    as at application start), termination/lock-freedom (only partial
    correctness: the WPs are not total), and tids ≥ 512 or negative
    values (outside the encoding). *)
From iris.base_logic.lib Require Import invariants ghost_var.
From iris.program_logic Require Import atomic.
From iris.heap_lang Require Import proofmode notation.
From iris.prelude Require Import options.
Local Open Scope Z_scope.

(** ** The word encoding: value · parity · tid *)
Definition enc (v p t : Z) : Z := v * 1024 + p * 512 + t.

(** A word of a location: a value ≥ 0, a parity bit, a tid < 512; a
    stable word (tid 0) has parity Even (0). *)
Definition word_ok (w v p t : Z) : Prop :=
  w = enc v p t ∧ 0 ≤ v ∧ (p = 0 ∨ p = 1) ∧ 0 ≤ t < 512 ∧ (t = 0 → p = 0).

Section enc.
  Context (v p t : Z).

  Lemma enc_tid : 0 ≤ v → (p = 0 ∨ p = 1) → 0 ≤ t < 512 → enc v p t `rem` 512 = t.
  Proof.
    intros Hv Hp Ht. rewrite Z.rem_mod_nonneg; [|rewrite /enc; lia|lia].
    symmetry. apply (Z.mod_unique _ _ (v * 2 + p)); [lia|rewrite /enc; lia].
  Qed.

  Lemma enc_val : 0 ≤ v → (p = 0 ∨ p = 1) → 0 ≤ t < 512 → enc v p t `quot` 1024 = v.
  Proof.
    intros Hv Hp Ht. rewrite Z.quot_div_nonneg; [|rewrite /enc; lia|lia].
    symmetry. apply (Z.div_unique _ _ _ (p * 512 + t)); [lia|rewrite /enc; lia].
  Qed.

  Lemma enc_par : 0 ≤ v → (p = 0 ∨ p = 1) → 0 ≤ t < 512 → (enc v p t `quot` 512) `rem` 2 = p.
  Proof.
    intros Hv Hp Ht. assert (enc v p t `quot` 512 = v * 2 + p) as ->.
    { rewrite Z.quot_div_nonneg; [|rewrite /enc; lia|lia].
      symmetry. apply (Z.div_unique _ _ _ t); [lia|rewrite /enc; lia]. }
    rewrite Z.rem_mod_nonneg; [|lia|lia].
    symmetry. apply (Z.mod_unique _ _ v); lia.
  Qed.
End enc.

Lemma enc_inj v p t v' p' t' :
  0 ≤ v → (p = 0 ∨ p = 1) → 0 ≤ t < 512 →
  0 ≤ v' → (p' = 0 ∨ p' = 1) → 0 ≤ t' < 512 →
  enc v p t = enc v' p' t' → v = v' ∧ p = p' ∧ t = t'.
Proof.
  intros ?????? Heq. split_and!.
  - rewrite -(enc_val v p t) // -(enc_val v' p' t') // Heq //.
  - rewrite -(enc_par v p t) // -(enc_par v' p' t') // Heq //.
  - rewrite -(enc_tid v p t) // -(enc_tid v' p' t') // Heq //.
Qed.

Lemma clean_enc v : v * 1024 = enc v 0 0.
Proof. rewrite /enc. lia. Qed.

(** ** The code *)

(** LOADHELP (Algorithm 2), entered at L2 with [old] freshly loaded (so that
    [LOAD] is [load_help] itself): a stable word is returned (L3, L7); an
    annotated one is re-read after a timestamp (L4–L8), HELP[p][tid] is
    raised to the timestamp by a CAS (L10–L16), and the annotation is
    removed by a CAS from the word read (L17–L21); every retry starts over
    with a fresh load.  PATIENCE (L9) and the flushes (L12, L16) are
    omitted: they do not change the values read or written. *)
Definition load_help : val :=
  rec: "lh" "clk" "hlp" "l" :=
    let: "w" := !"l" in
    if: "w" `rem` #512 = #0 then "w" `quot` #1024 else
    let: "tcur" := FAA "clk" #1 in
    let: "w2" := !"l" in
    if: "w2" = "w" then
      let: "hp" := "hlp" +ₗ (#2 * ("w" `rem` #512) + ("w" `quot` #512) `rem` #2) in
      let: "th" := !"hp" in
      if: "tcur" ≤ "th" then "lh" "clk" "hlp" "l" else
      if: CAS "hp" "th" "tcur" then
        (if: CAS "l" "w" (("w" `quot` #1024) * #1024) then "w" `quot` #1024
         else "lh" "clk" "hlp" "l")
      else "lh" "clk" "hlp" "l"
    else "lh" "clk" "hlp" "l".

(** LOAD (Algorithm 1, L1–L4). *)
Definition load : val := λ: "clk" "hlp" "l", load_help "clk" "hlp" "l".

(** CAS (Algorithm 1, L5–L40) in normal execution ([recovery] false).  OWN
    holds (parity, timestamp) of the thread's last successful CAS, the
    memento (parity, fail, timestamp); flushes are no-ops. *)
Definition det_cas : val :=
  rec: "cas" "clk" "hlp" "own" "lcl" "mmt" "l" "old" "new" "tid" :=
    let: "pown" := Fst !"own" in
    let: "np" := #1 - "pown" in
    let: "old'" := "old" * #1024 in
    let: "new'" := "new" * #1024 + "np" * #512 + "tid" in
    if: CAS "l" "old'" "new'" then
      let: "t" := FAA "clk" #1 in
      "mmt" <- ("np", #false, "t");;
      "own" <- ("np", "t");;
      CAS "l" "new'" ("new" * #1024);;
      "lcl" <- "t";;
      #true
    else
      let: "cur" := load_help "clk" "hlp" "l" in
      if: "cur" = "old" then "cas" "clk" "hlp" "own" "lcl" "mmt" "l" "old" "new" "tid"
      else
        let: "t" := FAA "clk" #1 in
        "mmt" <- (#0, #true, "t");;
        "lcl" <- "t";;
        #false.

(** ** The specification *)
Class detcasG Σ := DetCasG { detcas_ghost_varG :> ghost_varG Σ Z }.
Definition detcasΣ : gFunctors := #[ghost_varΣ Z].
Global Instance subG_detcasΣ {Σ} : subG detcasΣ Σ → detcasG Σ.
Proof. solve_inG. Qed.

Section spec.
  Context `{!heapGS Σ, !detcasG Σ} (N Nenv : namespace).

  (** The abstract value of a location: its word's value, stripped of parity
      and tid.  The client holds half of the ghost variable. *)
  Definition loc_val (γ : gname) (v : Z) : iProp Σ := ghost_var γ (1/2) v.

  Definition is_loc (γ : gname) (l : loc) : iProp Σ :=
    inv N (∃ w v p t : Z, l ↦ #w ∗ ⌜word_ok w v p t⌝ ∗ ghost_var γ (1/2) v).

  (** The global clock (rdtscp) and HELP[p][tid] at [hlp +ₗ (2 tid + p)]. *)
  Definition env_inv (clk hlp : loc) : iProp Σ :=
    inv (Nenv .@ "clock") (∃ n : Z, clk ↦ #n) ∗
    □ (∀ i : Z, ⌜0 ≤ i < 1024⌝ → inv (Nenv .@ "help" .@ i) (∃ x : Z, (hlp +ₗ i) ↦ #x)).

  (** The thread's OWN, LOCAL and memento: their contents do not matter for
      crash-free executions, only that OWN's parity is a bit. *)
  Definition thread_inv (own lcl mmt : loc) : iProp Σ :=
    inv (Nenv .@ "own") (∃ p t : Z, own ↦ (#p, #t) ∗ ⌜p = 0 ∨ p = 1⌝) ∗
    inv (Nenv .@ "local") (∃ x, lcl ↦ x) ∗
    inv (Nenv .@ "mmt") (∃ x, mmt ↦ x).

  Global Instance is_loc_persistent γ l : Persistent (is_loc γ l).
  Proof. apply _. Qed.
  Global Instance env_inv_persistent clk hlp : Persistent (env_inv clk hlp).
  Proof. apply _. Qed.
  Global Instance thread_inv_persistent own lcl mmt : Persistent (thread_inv own lcl mmt).
  Proof. apply _. Qed.

  Lemma new_loc_spec (v : Z) :
    0 ≤ v →
    {{{ True }}} ref #(v * 1024) {{{ γ l, RET #l; is_loc γ l ∗ loc_val γ v }}}.
  Proof.
    iIntros (Hv Φ) "_ HΦ". wp_alloc l as "Hl".
    iMod (ghost_var_alloc v) as (γ) "[Hg1 Hg2]".
    iMod (inv_alloc N _ (∃ w v p t : Z, l ↦ #w ∗ ⌜word_ok w v p t⌝ ∗ ghost_var γ (1/2) v)%I
      with "[Hl Hg1]") as "#Hinv".
    { iNext. iExists _, v, 0, 0. iFrame. iPureIntro. rewrite /word_ok clean_enc. lia. }
    iModIntro. iApply "HΦ". iFrame "Hinv Hg2".
  Qed.

  (** LOADHELP and LOAD return the abstract value atomically: at a load
      that sees a stable word, or at the helping CAS that removes an
      annotation (which does not change the abstract value). *)
  Lemma load_help_spec γ clk hlp (l : loc) :
    is_loc γ l -∗ env_inv clk hlp -∗
    <<< ∀∀ v : Z, loc_val γ v >>> load_help #clk #hlp #l @ ↑N <<< loc_val γ v, RET #v >>>.
  Proof.
    iIntros "#Hl #[Hclk Hhelp]" (Φ) "AU". iLöb as "IH".
    wp_rec. wp_pures.
    wp_bind (!_)%E. iInv "Hl" as (w v p t) "(>Hw & >%Hok & >Hg)".
    destruct Hok as (-> & Hv & Hp & Ht & Ht0).
    iMod "AU" as (v') "[Hv' Hclose]".
    iDestruct (ghost_var_agree with "Hg Hv'") as %<-.
    wp_load.
    destruct (decide (t = 0)) as [->|Htne].
    - (* a stable word: the linearization point *)
      iDestruct "Hclose" as "[_ Hcommit]". iMod ("Hcommit" with "Hv'") as "HΦ".
      repeat iModIntro. iSplitL "Hw Hg".
      { iNext. iExists _, v, p, 0. iFrame. iPureIntro. rewrite /word_ok. lia. }
      wp_pures. rewrite enc_tid //. wp_pures. rewrite enc_val //.
    - iDestruct "Hclose" as "[Habort _]". iMod ("Habort" with "Hv'") as "AU".
      repeat iModIntro. iSplitL "Hw Hg".
      { iNext. iExists _, v, p, t. iFrame. iPureIntro. rewrite /word_ok. lia. }
      wp_pures. rewrite enc_tid //. rewrite bool_decide_false; last (intros [=]; lia).
      wp_pures.
      wp_bind (FAA _ _). iInv "Hclk" as (n) ">Hc". wp_faa. iModIntro.
      iSplitL "Hc"; first by iExists _. wp_pures.
      wp_bind (!_)%E. iInv "Hl" as (w2 v2 p2 t2) "(>Hw & >%Hok2 & >Hg)". wp_load.
      iModIntro. iSplitL "Hw Hg"; first by iExists _, _, _, _; iFrame.
      wp_pures. case_bool_decide as Hw2; wp_pures; last by iApply ("IH" with "AU").
      rewrite enc_tid // enc_par //.
      iPoseProof ("Hhelp" $! (2 * t + p) with "[%]") as "Hcell"; first lia.
      wp_bind (!_)%E. iInv "Hcell" as (x) ">Hx". wp_load. iModIntro.
      iSplitL "Hx"; first by iExists _. wp_pures.
      case_bool_decide; wp_pures; first by iApply ("IH" with "AU").
      wp_bind (CmpXchg _ _ _). iInv "Hcell" as (x') ">Hx".
      destruct (decide (x' = x)) as [->|Hne].
      + wp_cmpxchg_suc. iModIntro. iSplitL "Hx"; first by iExists _. wp_pures.
        rewrite enc_val //.
        wp_bind (CmpXchg _ _ _). iInv "Hl" as (w3 v3 p3 t3) "(>Hw & >%Hok3 & >Hg)".
        iMod "AU" as (v'') "[Hv'' Hclose]".
        iDestruct (ghost_var_agree with "Hg Hv''") as %<-.
        destruct (decide (w3 = enc v p t)) as [->|Hne3].
        * (* the helping CAS: the linearization point *)
          wp_cmpxchg_suc.
          destruct Hok3 as (Henc & ? & ? & ? & ?).
          destruct (enc_inj v p t v3 p3 t3) as (<- & _ & _); [lia..|done|].
          iDestruct "Hclose" as "[_ Hcommit]". iMod ("Hcommit" with "Hv''") as "HΦ".
          repeat iModIntro. iSplitL "Hw Hg".
          { iNext. iExists _, v, 0, 0. iFrame. iPureIntro. rewrite /word_ok clean_enc. lia. }
          wp_pures. rewrite enc_val //.
        * wp_cmpxchg_fail.
          iDestruct "Hclose" as "[Habort _]". iMod ("Habort" with "Hv''") as "AU".
          repeat iModIntro. iSplitL "Hw Hg"; first by iExists _, _, _, _; iFrame.
          wp_pures. by iApply ("IH" with "AU").
      + wp_cmpxchg_fail. iModIntro. iSplitL "Hx"; first by iExists _.
        wp_pures. by iApply ("IH" with "AU").
  Qed.

  Lemma load_spec γ clk hlp (l : loc) :
    is_loc γ l -∗ env_inv clk hlp -∗
    <<< ∀∀ v : Z, loc_val γ v >>> load #clk #hlp #l @ ↑N <<< loc_val γ v, RET #v >>>.
  Proof.
    iIntros "#Hl #Henv" (Φ) "AU". wp_lam. wp_pures.
    iApply (load_help_spec with "Hl Henv AU").
  Qed.

  (** Detectable CAS is logically atomic: it replaces the abstract value
      [old] by [new] and returns true, or returns false with the abstract
      value ≠ [old], at one point between its call and return -- the first
      plain CAS (L26) for a success, the linearization point of LOADHELP
      (L27) for a failure -- while helpers may remove its annotation at any
      time. *)
  Lemma det_cas_spec γ clk hlp own lcl mmt (l : loc) (old new tid : Z) :
    0 ≤ old → 0 ≤ new → 0 < tid < 512 →
    is_loc γ l -∗ env_inv clk hlp -∗ thread_inv own lcl mmt -∗
    <<< ∀∀ v : Z, loc_val γ v >>>
      det_cas #clk #hlp #own #lcl #mmt #l #old #new #tid @ ↑N
    <<< loc_val γ (if bool_decide (v = old) then new else v), RET #(bool_decide (v = old)) >>>.
  Proof.
    iIntros (Hold Hnew Htid) "#Hl #Henv #(Hown & Hlcl & Hmmt)". iIntros (Φ) "AU".
    iDestruct "Henv" as "#[Hclk Hhelp]".
    iLöb as "IH". wp_rec. wp_pures.
    wp_bind (!_)%E. iInv "Hown" as (po to) "[>Ho >%Hpo]". wp_load. iModIntro.
    iSplitL "Ho"; first by iExists _, _; iFrame. wp_pures.
    wp_bind (CmpXchg _ _ _). iInv "Hl" as (w v p t) "(>Hw & >%Hok & >Hg)".
    iMod "AU" as (v') "[Hv' Hclose]".
    iDestruct (ghost_var_agree with "Hg Hv'") as %<-.
    destruct Hok as (-> & Hv & Hp & Ht & Ht0).
    destruct (decide (enc v p t = old * 1024)) as [Heq|Hne].
    - (* the first plain CAS succeeds: the linearization point *)
      rewrite Heq. wp_cmpxchg_suc.
      rewrite clean_enc in Heq.
      destruct (enc_inj v p t old 0 0) as (-> & -> & ->); [lia..|done|].
      iMod (ghost_var_update_2 new with "Hg Hv'") as "[Hg Hv']"; first by rewrite Qp.half_half.
      iDestruct "Hclose" as "[_ Hcommit]".
      iMod ("Hcommit" with "[Hv']") as "HΦ"; first by rewrite bool_decide_true.
      repeat iModIntro. iSplitL "Hw Hg".
      { iNext. iExists _, new, (1 - po), tid. iFrame. iPureIntro.
        split; [rewrite /enc; lia|]. lia. }
      rewrite bool_decide_true //. wp_pures.
      wp_bind (FAA _ _). iInv "Hclk" as (n) ">Hc". wp_faa. iModIntro.
      iSplitL "Hc"; first by iExists _. wp_pures.
      wp_bind (_ <- _)%E. iInv "Hmmt" as (x) ">Hm". wp_store. iModIntro.
      iSplitL "Hm"; first by iExists _. wp_pures.
      wp_bind (_ <- _)%E. iInv "Hown" as (po' to') "[>Ho _]". wp_store. iModIntro.
      iSplitL "Ho". { iNext. iExists (1 - po), n. iFrame. iPureIntro. lia. }
      wp_pures.
      (* the second plain CAS: removes the annotation, or a helper did *)
      wp_bind (CmpXchg _ _ _). iInv "Hl" as (w2 v2 p2 t2) "(>Hw & >%Hok2 & >Hg)".
      destruct Hok2 as (-> & Hv2 & Hp2 & Ht2 & Ht20).
      destruct (decide (enc v2 p2 t2 = new * 1024 + (1 - po) * 512 + tid)) as [Heq2|Hne2].
      + rewrite Heq2. wp_cmpxchg_suc.
        assert (new * 1024 + (1 - po) * 512 + tid = enc new (1 - po) tid) as Hre by (rewrite /enc; lia).
        rewrite Hre in Heq2.
        destruct (enc_inj v2 p2 t2 new (1 - po) tid) as (-> & _ & _); [lia..|done|].
        iModIntro. iSplitL "Hw Hg".
        { iNext. iExists _, new, 0, 0. iFrame. iPureIntro. rewrite /word_ok clean_enc. lia. }
        wp_pures. wp_bind (_ <- _)%E. iInv "Hlcl" as (xl) ">Hx". wp_store. iModIntro.
        iSplitL "Hx"; first by iExists _. wp_pures. done.
      + wp_cmpxchg_fail. iModIntro. iSplitL "Hw Hg".
        { iNext. iExists _, v2, p2, t2. iFrame. iPureIntro. rewrite /word_ok. lia. }
        wp_pures. wp_bind (_ <- _)%E. iInv "Hlcl" as (xl) ">Hx". wp_store. iModIntro.
        iSplitL "Hx"; first by iExists _. wp_pures. done.
    - (* the first plain CAS fails: not a linearization point *)
      wp_cmpxchg_fail. iDestruct "Hclose" as "[Habort _]". iMod ("Habort" with "Hv'") as "AU".
      repeat iModIntro. iSplitL "Hw Hg".
      { iNext. iExists _, v, p, t. iFrame. iPureIntro. rewrite /word_ok. lia. }
      wp_pures.
      awp_apply (load_help_spec with "Hl [$Hclk $Hhelp]").
      iApply (aacc_aupd with "AU"); first done.
      iIntros (v') "Hv'". iAaccIntro with "Hv'"; first by eauto with iFrame.
      iIntros "Hv'". iModIntro.
      destruct (decide (v' = old)) as [->|Hne'].
      + (* LOADHELP saw [old] (the failure was only an annotation): retry *)
        iLeft. iFrame. iIntros "AU". iModIntro. wp_pures.
        rewrite bool_decide_true //. wp_pures. by iApply ("IH" with "AU").
      + (* LOADHELP's linearization point is the failure's *)
        iRight. rewrite bool_decide_false //. iFrame. iIntros "HΦ". iModIntro.
        wp_pures. rewrite bool_decide_false; last (intros [= ?]; done). wp_pures.
        wp_bind (FAA _ _). iInv "Hclk" as (n) ">Hc". wp_faa. iModIntro.
        iSplitL "Hc"; first by iExists _. wp_pures.
        wp_bind (_ <- _)%E. iInv "Hmmt" as (x) ">Hm". wp_store. iModIntro.
        iSplitL "Hm"; first by iExists _. wp_pures.
        wp_bind (_ <- _)%E. iInv "Hlcl" as (xl) ">Hx". wp_store. iModIntro.
        iSplitL "Hx"; first by iExists _. wp_pures. done.
  Qed.
End spec.

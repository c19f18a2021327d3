(** * Memento's detectable CAS on the two-word location: detectability in every run

    [DetCasPx.v] proves detectability of the detectable CAS for the runs
    that satisfy the premise H-ABA ([h_aba]: no first plain CAS writes a
    word a helper holds).  The location the crate ships by default
    ([impl/perdure-memento/src/cas.rs], [DetectableCasAtomic::at], the
    [TwoWord] form) needs no such premise: it is 16 bytes, the seed's word
    and a nonce ([CasPair]), written with [cmpxchg16b]; the first plain CAS
    (L26, [DetectableCasAtomic::cas]: [new_w = F::encode(annotation(p_new),
    own.ts)]) writes as nonce t_own, the timestamp of the thread's last
    successful CAS, read from OWN at L6; every clean word has nonce 0
    ([TwoWord::encode]); LOADHELP ([load_help]) compares whole locations
    (L5 after PATIENCE, L8, L18).  This file proves the theorems of
    [DetCasPx.v] for that location over ALL runs.

    The model is [DetCasPx.v]'s [step] with [fixedw true] ([fixed2]): the
    fixed protocol, whose L26 writes the nonce [town] (the OWN timestamp of
    the invocation, [P26 p town]), whose helper steps compare [phys2]
    (word and nonce: [SH5chg], [SH5same], [SH18ok], [SH18fail]), and with
    the premise at L26 [any_run] (always true): [reachable2 N NL] is the
    set of states every run reaches, for any [N], [NL], schedule, number
    of full-system and thread crashes.

    Proved:
    - [nonce_inv] (invariant [nonce_ok]): every annotated word ever written
      by invocation [k] of thread [u] carries the OWN timestamp [u] had
      during [k]: equal to its committed [own_floor] while [k] runs,
      strictly below it once [k] returned OK (OWN then moved to [k]'s own
      success timestamp, which is newer); every clean word has nonce 0;
    - [tw_h_aba2]: hence at every first plain CAS of a run, no helper holds
      a location (word and nonce) equal to the one written: a helper holds
      a word of the location's history ([DetCasPx.v]'s [lhok]), which is
      not this invocation's (it has no effect yet, L26 runs only then) and
      so is an earlier successful invocation's, whose nonce is older;
    - [tw_reachable_inv]: so every run of the two-word model is a run of the
      model under [h_aba2], whose invariant [inv] [DetCasPx.v] proves
      ([reachable_inv_w]);
    - [detcas_px2_detectable], [detcas_px2_returns], [detcas_px2_at_most_once],
      [detcas_px2_first_cas_not_taken], [detcas_px2_no_future_effect]: the
      statements of [DetCasPx.v]'s theorems over [reachable2], without any
      premise;
    - [tw_l26_compare], [tw_l38_compare], [tw_rec7_compare]: the model's
      L26, L38 and ⑦ (L21–L22) compare the word only; the code compares the
      whole location, with nonce 0 (L26: [old_w]) or the invocation's t_own
      ([new_w] at L38 in normal execution and at ⑦): on every reachable
      state the two comparisons agree;
    - [one_word_phys2]: in the one-word instance ([c2w] false: [fixed] and
      the mutants of [DetCasPxBugs.v]) every nonce is 0, so LOADHELP's
      whole-location comparisons are the word comparisons [DetCasPx.v]
      made before it had nonces;
    - [tw_finding4_run]: the theorems cover runs H-ABA excludes: Finding 4's
      schedule is a run of the two-word model (explicit, with
      [DetCasPxBugs.v]'s tactics).

    What the model abstracts (besides what [DetCasPx.v]'s header lists:
    SC, each word its own line, one CAS per root operation, ...):
    - the 16-byte location is one word of the model written atomically (a
      [cmpxchg16b] writes one line in one locked instruction; the crate's
      one platform assumption: it persists atomically);
    - LOADHELP's PATIENCE wait watches the first word and, when patience
      runs out, loads the whole location once more ([F::widen]); the model
      compares the whole location at L5 (the same outcome: a change of the
      nonce alone is a change of the word's owner invocation, which
      [SH5chg] treats as the code's L8 does, starting again from it);
    - the nonce is t_own, a natural number (the code's 64-bit timestamp;
      no wrap-around); the two-word form's values are the model's naturals
      (the code's 54 bits);
    - LOAD's first 8-byte read ([load]: a clean first word returns its
      value) is a whole-location read.
    - at ⑥ (L20) the code's second plain CAS compares the location with
      the pair it read at L12 when that pair's word is this CAS's annotated
      word, else with [(word, OWN's timestamp)]; the model's L38 compares the
      word at the time of the CAS.  Argued, not proved: only the thread
      itself writes annotated words of its tid, and helpers only clean them,
      so the location holds the pair read at L12 or a clean word, or never
      held the annotated word; both comparisons agree.
    Not covered: as in [DetCasPx.v] (history-level durable linearizability,
    loads and failed CASes' linearizability, multi-CAS root operations,
    memento clearing, liveness). *)
From Coq Require Import Lia.
From perdure.Core Require Import Px86 PxPersist.
From perdure.Memento Require Import DetCasPx DetCasPxBugs.
From stdpp Require Import base list relations.

(** The two-word location ([cas.rs] [TwoWord], [DetectableCasAtomic::at]):
    the fixed protocol whose L26 writes the nonce t_own. *)
Definition fixed2 : config := fixedw true.
(** No premise at L26 ([DetectableCasAtomic::at] is safe: no [# Safety]
    contract, unlike [at_unique]): every run. *)
Definition any_run : state → nat → lword → Prop := λ _ _ _, True.
(** The states of every run of [DetectableCasAtomic::cas], [load] and their
    recovery on two-word locations, with crashes. *)
Definition reachable2 (N NL : nat) (s : state) : Prop := reachable N NL fixed2 any_run s.

Section nonce.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation inv := (inv N NL).
  Notation step := (step N NL fixed2 any_run).
  Notation eff := (eff NL).

  (** The nonces of the location words ever written ([wt], the table of all
      contents, survives crashes): a clean word's is 0 ([TwoWord::encode]
      zeroes it); the annotated word of invocation [k] of thread [u] holds
      the OWN timestamp of [k] (L6: [own.ts]), which is [u]'s committed
      [own_floor] while [k] runs, and is older than it once [k] returned OK. *)
  Definition nonce_ok (s : state) : Prop :=
    (∀ n w, wt s !! n = Some (CLoc w) → la w = None → lnc w = 0) ∧
    (∀ n w u k, wt s !! n = Some (CLoc w) → lg w = Some (u, k) → tr u →
      k ≤ kk (th s u) ∧ (k = kk (th s u) → lnc w = (ofl (th s u)).2) ∧
      (k < kk (th s u) → res (th s u) !! k = Some true → lnc w < (ofl (th s u)).2)).

  Lemma nonce_init : nonce_ok (init N NL).
  Proof. split; intros n; cbn; rewrite lookup_nil; discriminate. Qed.

  (** A step that writes no annotated word and leaves every thread's
      invocation index, [own_floor] and results alone. *)
  Lemma nonce_frame s s' :
    nonce_ok s →
    (∀ u, tr u → kk (th s' u) = kk (th s u) ∧ ofl (th s' u) = ofl (th s u) ∧ res (th s' u) = res (th s u)) →
    (∀ n w, wt s' !! n = Some (CLoc w) → wt s !! n = Some (CLoc w) ∨ (la w = None ∧ lnc w = 0 ∧ lg w = None)) →
    nonce_ok s'.
  Proof.
    intros [Hc Hg] Hth Hwt. split.
    - intros n w Hn Hla. destruct (Hwt n w Hn) as [Ho | (_ & ? & _)]; [by eapply Hc | done].
    - intros n w u k Hn Hlg Hu. destruct (Hwt n w Hn) as [Ho | (_ & _ & Hn')]; [| congruence].
      destruct (Hth u Hu) as (-> & -> & ->). by eapply Hg.
  Qed.

  Lemma wt_snoc_clean (l : list cont) c n w :
    (∀ w', c = CLoc w' → la w' = None ∧ lnc w' = 0 ∧ lg w' = None) →
    (l ++ [c]) !! n = Some (CLoc w) → l !! n = Some (CLoc w) ∨ (la w = None ∧ lnc w = 0 ∧ lg w = None).
  Proof.
    intros Hc Hn. apply lookup_app_Some in Hn as [Hn | [Hle Hn]]; [by left | right].
    apply list_lookup_singleton_Some in Hn as [_ Hn]. by apply Hc.
  Qed.

  (** A word of a location's history that carries a ghost tag is in [wt]. *)
  Lemma hx_wt s x i a : hx s x !! i = Some a → lg a ≠ None → ∃ n, wt s !! n = Some (CLoc a).
  Proof.
    unfold hx, hc. intros Ha Hg.
    apply list_lookup_fmap_inv in Ha as (c & -> & Hc). apply list_lookup_fmap_inv in Hc as (n & -> & _).
    exists n. unfold lw_of in Hg |- *. destruct (wt s !! n) as [[w | w | w] |]; simpl in *; done.
  Qed.

  Ltac th_tac t :=
    let u := fresh "u" in let Hu := fresh "Hu" in
    intros u Hu; rewrite ?th_setth; first [destruct (decide (u = t)) as [-> |] | idtac];
    cbn [th pwrite pfence ppwb tick drop_pwbs with_pc with_own kk ofl res]; repeat split.

  Ltac wt_tac :=
    let n := fresh "n" in let w := fresh "w" in let Hw := fresh "Hw" in let Hc := fresh "Hc" in
    intros n w Hw; cbn [wt setth pwrite pfence ppwb tick drop_pwbs] in Hw;
    first [by left
          | (apply wt_snoc_clean in Hw; [exact Hw | intros ? Hc; first [discriminate Hc | injection Hc as <-; cbn; repeat split]])].

  (** L26 writes invocation [kk]'s annotated word with nonce t_own, the
      [own_floor] ([P26 p town]: [town] is [own_floor]'s timestamp). *)
  Lemma nonce_26ok s t p town : inv s → nonce_ok s → tr t → pc (th s t) = P26 p town →
    nonce_ok (setth (pwrite (pfence s t) (LX (ax (th s t)))
                       (CLoc (LW (an (th s t)) (Some (p, t)) town (Some (t, kk (th s t)))))) t
                (with_pc (th s t) (P33 p town))).
  Proof.
    intros Hi [Hc Hg] Ht Hpc. pose proof (pcok_of N NL s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct Hp as (_ & Htown & _). split.
    - intros n w Hw Hla. cbn [wt setth pwrite pfence] in Hw.
      apply lookup_app_Some in Hw as [Hw | [_ Hw]]; [by eapply Hc |].
      apply list_lookup_singleton_Some in Hw as [_ Hw]. injection Hw as <-. discriminate.
    - intros n w u k Hw Hlg Hu. rewrite th_setth. cbn [wt setth pwrite pfence] in Hw.
      apply lookup_app_Some in Hw as [Hw | [_ Hw]].
      + destruct (decide (u = t)) as [-> |]; cbn [th pfence pwrite with_pc kk ofl res]; by eapply Hg.
      + apply list_lookup_singleton_Some in Hw as [_ Hw]. injection Hw as <-. cbn in Hlg.
        injection Hlg as <- <-. rewrite decide_True by done. cbn [with_pc kk ofl res].
        split_and!; [done | intros _; done | lia].
  Qed.

  (** At the commit, OWN is not older than [own_floor], and newer after a
      success (its timestamp is the memento's, newer than the floor). *)
  Lemma own_commit s t r : inv s → tr t → pc (th s t) = PCommit r →
    (ofl (th s t)).2 ≤ (own (th s t)).2 ∧ (r = true → (ofl (th s t)).2 < (own (th s t)).2).
  Proof.
    intros Hi Ht Hpc. pose proof (pcok_of N NL s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct (i_clock _ _ _ Hi t Ht) as (_ & Hfl & _).
    destruct r.
    - destruct Hp as (_ & _ & (w & Hl & Hg & Ho) & _).
      pose proof Hl as Hl'. rewrite last_lookup in Hl'.
      destruct (i_mmt _ _ _ Hi t _ w Ht Hl') as [(_ & Hlt & _) | (Hk & _)].
      + rewrite Ho. cbn. lia.
      + specialize (Hk _ Hg). lia.
    - destruct Hp as (_ & _ & Ho & _). rewrite Ho. split; [lia | discriminate].
  Qed.

  Lemma nonce_commit s t r : inv s → nonce_ok s → tr t → pc (th s t) = PCommit r →
    let T := th s t in
    nonce_ok (setth (tick (pfence s t)) t
               (TS PIdle (S (kk T)) (ax T) (ao T) (an T) (clock s) (own T) (own T) (res T ++ [r]))).
  Proof.
    intros Hi [Hc Hg] Ht Hpc T. subst T. destruct (own_commit s t r Hi Ht Hpc) as [Hle Hlt].
    destruct (i_clock _ _ _ Hi t Ht) as (_ & _ & Hlen).
    split.
    - intros n w Hw Hla. cbn [wt setth tick pfence] in Hw. by eapply Hc.
    - intros n w u k Hw Hlg Hu. cbn [wt setth tick pfence] in Hw. rewrite th_setth.
      destruct (decide (u = t)) as [-> | Hne].
      + cbn [kk ofl res]. destruct (Hg n w t k Hw Hlg Hu) as (Hk & Heq & Hlt').
        split_and!; [lia | intros; lia |]. intros Hk' Hres.
        destruct (decide (k = kk (th s t))) as [-> | Hne'].
        * rewrite lookup_app_r in Hres by lia. rewrite Hlen, Nat.sub_diag in Hres. injection Hres as ->.
          rewrite Heq by done. by apply Hlt.
        * rewrite lookup_app_l in Hres by lia. specialize (Hlt' ltac:(lia) Hres). lia.
      + cbn [th tick pfence]. by apply (Hg n w u k).
  Qed.

  Lemma nonce_step s s' : inv s → nonce_ok s → step s s' → nonce_ok s'.
  Proof.
    intros Hi Hn Hs. destruct Hs.
    all: try (eapply nonce_frame; [exact Hn | th_tac t | wt_tac]; fail).
    - by eapply nonce_26ok.
    - unfold s2, s1 in *. cbn [c38wb c38f fixed2 fixedw]. destruct (decide _).
      all: eapply nonce_frame; [exact Hn | th_tac t | wt_tac].
    - by eapply nonce_commit.
    - cbn [c20 fixed2 fixedw]. eapply nonce_frame; [exact Hn | th_tac t | wt_tac].
    - eapply nonce_frame; [exact Hn | | wt_tac].
      intros u Hu. cbn [th]. rewrite H0 by done. unfold reinit. cbn [with_own with_pc kk ofl res]. done.
  Qed.

  (** A thread outside 1..N never moves. *)
  Lemma step_th_out s s' u : step s s' → ¬ tr u → th s' u = th s u.
  Proof.
    intros Hs Hu. destruct Hs.
    all: try (unfold s2, s1 in *); cbn [c20 c38wb c38f c33 c35 chelp c2w fixed2 fixedw].
    all: try (rewrite th_setth, decide_False by (intros ->; contradiction); repeat case_decide; reflexivity).
    - cbn [th]. auto.
  Qed.

  (** (H-ABA) on whole locations holds at every first plain CAS of the
      two-word model: a helper holding a location of this thread's with the
      same word would hold an annotated word of the location's history
      ([lhok]); not the running invocation's (it has no effect at L26), so
      an earlier one that returned OK, whose nonce is older than t_own. *)
  Lemma tw_h_aba2 s t p town : inv s → nonce_ok s → (∀ u, ¬ tr u → pc (th s u) = PIdle) →
    tr t → pc (th s t) = P26 p town →
    h_aba2 s (ax (th s t)) (LW (an (th s t)) (Some (p, t)) town (Some (t, kk (th s t)))).
  Proof.
    intros Hi [Hc Hg] Hout Ht Hpc u c y h a Hpcu Hh Hy Heq.
    pose proof (pcok_of N NL s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct Hp as (_ & Htown & (Hne & _ & _) & _).
    destruct (decide (tr u)) as [Hu | Hu]; [| by rewrite Hout in Hpcu].
    pose proof (pcok_of N NL s u Hi Hu) as Hq. unfold pcok in Hq. rewrite Hpcu in Hq.
    destruct Hq as [_ [Hy' Hl]]. rewrite Hh in Hl. destruct Hl as (i & p' & u' & k & Ha & Hla & Hlg & _).
    unfold phys2, phys in Heq. cbn in Heq. injection Heq as _ Hla' Hn.
    rewrite Hla in Hla'. injection Hla' as -> ->.
    destruct (hx_wt s y i a Ha ltac:(congruence)) as [n Hn'].
    destruct (Hg n a t k Hn' Hlg Ht) as (Hk & Heqk & Hltk).
    assert (eff s t k) as He by (exists y, i; split; [done | by exists a]).
    destruct (decide (k = kk (th s t))) as [-> | Hk'].
    - by apply Hne.
    - apply (i_res _ _ _ Hi t k Ht ltac:(lia)) in He. specialize (Hltk ltac:(lia) He). lia.
  Qed.

  (** So every step of the two-word model is a step of the model under
      [h_aba2]. *)
  Lemma tw_step s s' : inv s → nonce_ok s → (∀ u, ¬ tr u → pc (th s u) = PIdle) →
    step s s' → DetCasPx.step N NL fixed2 h_aba2 s s'.
  Proof.
    intros Hi Hn Hout Hs. step_same_rule Hs; eauto.
    by apply (tw_h_aba2 s t p town).
  Qed.

  (** Every state of every run of the two-word model satisfies [DetCasPx.v]'s
      invariant and the nonces' one. *)
  Lemma nonce_inv s : reachable2 N NL s → inv s ∧ nonce_ok s ∧ (∀ u, ¬ tr u → pc (th s u) = PIdle).
  Proof.
    unfold reachable2, reachable. intros Hr.
    assert (∀ s1 s2, rtc step s1 s2 → inv s1 ∧ nonce_ok s1 ∧ (∀ u, ¬ tr u → pc (th s1 u) = PIdle) →
              inv s2 ∧ nonce_ok s2 ∧ (∀ u, ¬ tr u → pc (th s2 u) = PIdle)) as Hgen.
    { intros s1 s2 H. induction H as [| s1 s1' s2 Hs _ IH]; [done |]. intros (Hi & Hn & Ho). apply IH.
      split_and!.
      - eapply (step_inv_w N NL true); [done |]. by apply tw_step.
      - by eapply nonce_step.
      - intros u Hu. rewrite (step_th_out s1 s1' u Hs Hu). by apply Ho. }
    apply (Hgen (init N NL)); [done |]. split_and!; [apply inv_init | apply nonce_init | done].
  Qed.

  Lemma tw_reachable_inv s : reachable2 N NL s → inv s.
  Proof. intros Hr. by destruct (nonce_inv s Hr). Qed.
End nonce.

(** ** The model's word-only comparisons are the code's whole-location ones *)
Section compare.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation inv := (inv N NL).
  Notation vism := (vism N NL).

  Lemma hx_wt_any s x i a : hx s x !! i = Some a → a = lw0 ∨ ∃ n, wt s !! n = Some (CLoc a).
  Proof.
    unfold hx, hc. intros Ha.
    apply list_lookup_fmap_inv in Ha as (c & -> & Hc). apply list_lookup_fmap_inv in Hc as (n & -> & _).
    unfold lw_of. destruct (wt s !! n) as [[w | w | w] |] eqn:E; [right; by exists n | left; done ..].
  Qed.

  (** The visible word's nonce: 0 if clean; t_own of the running invocation
      of its tid if annotated. *)
  Lemma visx_nonce s x : reachable2 N NL s → x < NL →
    (la (visx s x) = None → lnc (visx s x) = 0) ∧
    (∀ p u, la (visx s x) = Some (p, u) → lnc (visx s x) = (ofl (th s u)).2).
  Proof.
    intros Hr Hx. destruct (nonce_inv N NL s Hr) as (Hi & [Hc Hg] & _). split.
    - intros Hla. unfold visx in *. destruct (last (hx s x)) as [w |] eqn:E; [| done]. simpl in *.
      rewrite last_lookup in E. destruct (hx_wt_any s x _ w E) as [-> | [n Hn]]; [done |]. by eapply Hc.
    - intros p u Hla. pose proof (visx_ann s x p u Hla) as Hl.
      destruct (vis_own_ann N NL s x (visx s x) p u Hi Hx Hl Hla) as (Hu & Hlg & _).
      pose proof Hl as Hl'. rewrite last_lookup in Hl'.
      destruct (hx_wt_any s x _ _ Hl') as [Heq | [n Hn]]; [rewrite Heq in Hla; discriminate |].
      by apply (Hg n _ u (kk (th s u)) Hn Hlg Hu).
  Qed.

  (** L26 ([h.cas(self.off, old_w, new_w)], [old_w = F::encode(stable(old), 0)]):
      comparing the word with [(ao, clean)] is comparing the location with
      [old_w]. *)
  Lemma tw_l26_compare s x v : reachable2 N NL s → x < NL →
    phys (visx s x) = (v, None) ↔ phys2 (visx s x) = ((v, None), 0).
  Proof.
    intros Hr Hx. unfold phys2, phys. split; [intros [= H1 H2] | intros [= H1 H2 _]; by rewrite H1, H2].
    by rewrite H1, H2, (proj1 (visx_nonce s x Hr Hx) H2).
  Qed.

  (** L38 in normal execution ([second_cas(h, new_w, new)]: [new_w]'s nonce
      is t_own, the OWN timestamp read at L6, i.e. [own_floor]'s during the
      invocation): comparing the word is comparing the whole location. *)
  Lemma tw_l38_compare s t p ts : reachable2 N NL s → tr t → pc (th s t) = P38 p ts →
    let T := th s t in
    phys (visx s (ax T)) = (an T, Some (p, t)) ↔ phys2 (visx s (ax T)) = ((an T, Some (p, t)), (ofl T).2).
  Proof.
    intros Hr Ht Hpc T. subst T.
    pose proof (i_pc _ _ _ (tw_reachable_inv N NL s Hr) t Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct Hp as (_ & _ & _ & _ & _ & Hax).
    unfold phys2, phys. split; [intros [= H1 H2] | intros [= H1 H2 _]; by rewrite H1, H2].
    by rewrite H1, H2, (proj2 (visx_nonce s _ Hr Hax) p t H2).
  Qed.

  (** Recovery's ⑦–⑨ branch (the memento not newer than LOCAL): OWN is the
      committed [own_floor] there. *)
  Lemma rec_own_ofl s t : inv s → tr t → mts (vism s t) ≤ fl (th s t) → own (th s t) = ofl (th s t).
  Proof.
    intros Hi Ht Hle. destruct (i_own _ _ _ Hi t Ht) as [? | (w & Hl & Hg & _)]; [done | exfalso].
    unfold vism in Hle. rewrite Hl in Hle. simpl in Hle.
    pose proof Hl as Hl'. rewrite last_lookup in Hl'.
    destruct (i_mmt _ _ _ Hi t _ w Ht Hl') as [(_ & Hlt & _) | (Hk & _)]; [lia |].
    specialize (Hk _ Hg). lia.
  Qed.

  (** L21–L22 (⑦: [cur == new_w], [new_w]'s nonce OWN's timestamp): comparing
      the word is comparing the whole location. *)
  Lemma tw_rec7_compare s t : reachable2 N NL s → tr t → pc (th s t) = PRec → mts (vism s t) ≤ fl (th s t) →
    let T := th s t in
    phys (visx s (ax T)) = (an T, Some (negb (own T).1, t)) ↔
    phys2 (visx s (ax T)) = ((an T, Some (negb (own T).1, t)), (own T).2).
  Proof.
    intros Hr Ht Hpc Hle T. subst T. pose proof (tw_reachable_inv N NL s Hr) as Hi.
    pose proof (i_pc _ _ _ Hi t Ht) as Hax. unfold pcok in Hax. rewrite Hpc in Hax.
    unfold phys2, phys. split; [intros [= H1 H2] | intros [= H1 H2 _]; by rewrite H1, H2].
    rewrite H1, H2, (proj2 (visx_nonce s _ Hr Hax) _ t H2). by rewrite (rec_own_ofl s t Hi Ht Hle).
  Qed.
End compare.

(** ** Detectability of the two-word location, in every run *)
Section theorems.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation inv := (inv N NL).
  Notation eff := (eff NL).
  Notation durable := (durable NL).
  Notation step := (step N NL fixed2 any_run).

  (** (a) Each committed invocation returned OK iff its first plain CAS is
      in its location's history as the crashes left it, ERR iff not; an OK's
      effect is under its line's mark. *)
  Theorem detcas_px2_detectable s t k : reachable2 N NL s → tr t → k < kk (th s t) →
    (res (th s t) !! k = Some true ↔ eff s t k) ∧ (res (th s t) !! k = Some false ↔ ¬ eff s t k) ∧
    (eff s t k → durable s t k).
  Proof. intros Hr. apply inv_detectable, (tw_reachable_inv N NL s Hr). Qed.

  (** (b) An invocation's first plain CAS is at most once in the histories. *)
  Theorem detcas_px2_at_most_once s t k x i x' i' : reachable2 N NL s → x < NL → x' < NL →
    tookat s t k x i → tookat s t k x' i' → x = x' ∧ i = i'.
  Proof. intros Hr. by apply (i_once _ _ _ (tw_reachable_inv N NL s Hr)). Qed.

  (** (c) L26 runs only while its invocation has no effect. *)
  Theorem detcas_px2_first_cas_not_taken s t p town : reachable2 N NL s → tr t →
    pc (th s t) = P26 p town → ¬ eff s t (kk (th s t)).
  Proof. intros Hr. apply inv_first_cas_not_taken, (tw_reachable_inv N NL s Hr). Qed.

  Theorem detcas_px2_no_future_effect s t k : reachable2 N NL s → tr t → eff s t k → k ≤ kk (th s t).
  Proof. intros Hr. apply inv_no_future_effect, (tw_reachable_inv N NL s Hr). Qed.

  (** (d) At the step where a thread returns, the result is the one its
      invocation took effect with, and an OK's effect is in every crash
      image Px86 allows. *)
  Theorem detcas_px2_returns s s' t r : reachable2 N NL s → step s s' → tr t →
    res (th s' t) = res (th s t) ++ [r] →
    (r = true ↔ eff s' t (kk (th s t))) ∧
    (r = true → ∃ x i, x < NL ∧ tookat s' t (kk (th s t)) x i ∧
                      ∀ keep, p_crash_ok (pm s') keep → i < keep (LX x)).
  Proof.
    intros Hr Hs. apply inv_returns; [apply (tw_reachable_inv N NL s Hr) |].
    apply (tw_reachable_inv N NL). eapply rtc_r; [exact Hr | exact Hs].
  Qed.
End theorems.

(** ** The one-word instance: every nonce is 0

    With [c2w cfg = false] (the one-word location, [fixed] and the mutants
    of [DetCasPxBugs.v]), every location word written and every word a
    helper holds has nonce 0, so the whole-location comparisons [phys2] of
    [DetCasPx.v]'s LOADHELP steps are comparisons of the words ([phys]): the
    nonce changes nothing in the one-word model. *)
Section one_word.
  Context (N NL : nat) (cfg : config) (aba : state → nat → lword → Prop).

  (** [OneWord::encode] ignores the nonce: every word written and every word
      a helper holds ([load_help]'s [old]) has nonce 0. *)
  Definition zero_nonces (s : state) : Prop :=
    (∀ n w, wt s !! n = Some (CLoc w) → lnc w = 0) ∧
    (∀ u c y h a, pc (th s u) = PLH c y h → held h = Some a → lnc a = 0).

  Lemma visx_zero s x : zero_nonces s → lnc (visx s x) = 0.
  Proof.
    intros [Hz _]. unfold visx. destruct (last (hx s x)) as [w |] eqn:E; [| done]. simpl.
    rewrite last_lookup in E. destruct (hx_wt_any s x _ w E) as [-> | [n Hn]]; [done |]. by eapply Hz.
  Qed.

  Lemma zero_nonces_step s s' : c2w cfg = false → zero_nonces s → step N NL cfg aba s s' → zero_nonces s'.
  Proof.
    intros H2 Hz Hs. assert (Hv : ∀ x, lnc (visx s x) = 0) by (intros x; by apply visx_zero).
    assert (Hv' : ∀ t x, lnc (visx (pfence s t) x) = 0)
      by (intros t x; apply visx_zero; split; [apply Hz | apply Hz]).
    destruct Hz as [Hz Hp].
    destruct Hs; try (unfold s2, s1 in * ); try (unfold w in * ); try (unfold T in * ).
    all: try (rewrite H2; cbn iota).
    all: repeat match goal with |- context [if ?b then _ else _] =>
           lazymatch b with true => fail | false => fail | _ => destruct b end end.
    all: split; [intros n0 w0 Hw; cbn [wt setth pwrite pfence ppwb tick drop_pwbs] in Hw;
                 first [by eapply Hz
                       | apply lookup_app_Some in Hw as [Hw | [_ Hw]];
                         [by eapply Hz
                         | apply list_lookup_singleton_Some in Hw as [_ Hw];
                           first [discriminate Hw | injection Hw as <-; cbn; by rewrite ?H2]]] |].
    all: intros u c' y' h' a' Hpc' Hh'; cbn [th setth pwrite pfence ppwb tick drop_pwbs] in Hpc'.
    all: try (unfold upd in Hpc'; destruct (decide (u = t)) as [-> | Hne];
              [cbn [with_pc with_own pc] in Hpc' | by eapply Hp]).
    all: try (unfold lh_enter, lh_ret in Hpc'; repeat case_match; simplify_eq; cbn in Hh'; simplify_eq;
              first [by apply Hv | by apply Hv' | by eapply Hp | done]).
    - unfold tcrash_pc, crash_pc in Hpc'. repeat case_match; simplify_eq; cbn in Hh'; simplify_eq.
    - destruct (decide (tr N u)) as [Hu | Hu].
      + rewrite H0 in Hpc' by done. unfold reinit in Hpc'. cbn [with_own with_pc pc crash_pc] in Hpc'.
        unfold crash_pc in Hpc'. repeat case_match; simplify_eq.
      + rewrite H1 in Hpc' by done. by eapply Hp.
  Qed.

  Lemma one_word_nonce_zero s : c2w cfg = false → rtc (step N NL cfg aba) (init N NL) s → zero_nonces s.
  Proof.
    intros H2 Hr. assert (∀ s1 s2, rtc (step N NL cfg aba) s1 s2 → zero_nonces s1 → zero_nonces s2) as Hgen.
    { intros s1 s2 H. induction H as [| s1 s1' s2 Hs _ IH]; [done |]. intros Hz. apply IH.
      by eapply zero_nonces_step. }
    apply (Hgen (init N NL)); [done |]. split; [intros n w; cbn; rewrite lookup_nil; discriminate |].
    intros u c y h a Hpc. discriminate.
  Qed.

  (** So in the one-word model LOADHELP's comparisons of whole locations
      are comparisons of words. *)
  Theorem one_word_phys2 s u c y h a x : c2w cfg = false → rtc (step N NL cfg aba) (init N NL) s →
    pc (th s u) = PLH c y h → held h = Some a → (phys2 (visx s x) = phys2 a ↔ phys (visx s x) = phys a).
  Proof.
    intros H2 Hr Hpc Hh. pose proof (one_word_nonce_zero s H2 Hr) as Hz.
    pose proof (visx_zero s x Hz) as H1. destruct Hz as [_ Hp]. pose proof (Hp u c y h a Hpc Hh) as Ha.
    unfold phys2. rewrite H1, Ha. split; [intros [= H3 H4]; unfold phys; by rewrite H3, H4 | by intros ->].
  Qed.
End one_word.

(** ** Finding 4's schedule is a run of the two-word model

    The theorems above cover runs that [DetCasPx.v]'s premise excludes:
    thread 1 CASes location 0 from 0 to 1, 1 to 0, 0 to 1 (CAS 0 and CAS 2
    both write the word (1, parity Odd, tid 1)); thread 2's LOAD reads CAS
    0's annotated word and takes its L4 timestamp before CAS 1.  When CAS 2
    is at L26 thread 2 still holds CAS 0's word: H-ABA fails ([h_aba]); the
    locations differ in the nonce (0 and 4, t_own of CAS 0 and CAS 2), so
    once CAS 2 has written its word, thread 2's L5 finds another location
    (L8) instead of helping CAS 2 with its old timestamp (Finding 4). *)
Section finding4.
  Tactic Notation "go2" uconstr(c) := eapply rtc_l_eq; [apply c; first [exact I | side] | norm_state |].

  Theorem tw_finding4_run :
    ∃ s, reachable2 2 1 s ∧ pc (th s 1) = P26 true 4 ∧
         pc (th s 2) = PLH KLoad 0 (H5 (LW 1 (Some (true, 1)) 0 (Some (1, 0))) 1) ∧
         ¬ h_aba s 0 (LW 1 (Some (true, 1)) 4 (Some (1, 2))) ∧
         ∃ s', step 2 1 fixed2 any_run s s' ∧
               phys (visx s' 0) = phys (LW 1 (Some (true, 1)) 0 (Some (1, 0))) ∧
               phys2 (visx s' 0) ≠ phys2 (LW 1 (Some (true, 1)) 0 (Some (1, 0))).
  Proof.
    eexists. unfold reachable2, reachable. split; [| split; [| split; [| split]]].
    - go2 (SStart _ _ _ _ _ 1 0 0 1).
      go2 (S26ok _ _ _ _ _ 1 true 0).
      go2 (SLoad _ _ _ _ _ 2 0).
      go2 (SH4 _ _ _ _ _ 2 KLoad 0 (LW 1 (Some (true, 1)) 0 (Some (1, 0)))).
      go2 (S33 _ _ _ _ _ 1 true 0).
      go2 (S34 _ _ _ _ _ 1 true 0).
      go2 (S36 _ _ _ _ _ 1 true 2).
      go2 (S38 _ _ _ _ _ 1 true 2).
      go2 (SCommit _ _ _ _ _ 1 true).
      go2 (SStart _ _ _ _ _ 1 0 1 0).
      go2 (S26ok _ _ _ _ _ 1 false 2).
      go2 (S33 _ _ _ _ _ 1 false 2).
      go2 (S34 _ _ _ _ _ 1 false 2).
      go2 (S36 _ _ _ _ _ 1 false 4).
      go2 (S38 _ _ _ _ _ 1 false 4).
      go2 (SCommit _ _ _ _ _ 1 true).
      go2 (SStart _ _ _ _ _ 1 0 0 1).
      apply rtc_refl.
    - vm_compute; reflexivity.
    - vm_compute; reflexivity.
    - intros H. apply (H 2 KLoad 0 (H5 (LW 1 (Some (true, 1)) 0 (Some (1, 0))) 1) (LW 1 (Some (true, 1)) 0 (Some (1, 0))));
        vm_compute; reflexivity.
    - eexists. split; [apply (S26ok _ _ _ _ _ 1 true 4); first [exact I | side] |].
      split; vm_compute; [reflexivity | congruence].
  Qed.
End finding4.

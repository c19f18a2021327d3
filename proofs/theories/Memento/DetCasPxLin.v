(** * Memento's detectable CAS (two-word location): detectable histories

    HEADER PLACEHOLDER *)
From Coq Require Import Lia.
From stdpp Require Import base list relations countable.
From perdure.Core Require Import Px86 PxPersist.
From perdure.Memento Require Import DetCasPx DetCasPxBugs DetCasPxTwoWord.
From perdure.Core Require Import History DurableLin.
From stdpp Require Import list.

(** ** The sequential specification: CAS registers *)

(** A CAS register: [CAS(old, new)] returns [true] and installs [new] iff
    the value is [old], else returns [false] and changes nothing. *)
Definition cas_step (σ : nat) (on : nat * nat) (b : bool) (σ' : nat) : Prop :=
  if b then σ = on.1 ∧ σ' = on.2 else σ ≠ on.1 ∧ σ' = σ.
Definition cas_reg : seq_spec nat (nat * nat) bool := SeqSpec 0 cas_step.

(** The locations side by side: operation [(x, (old, new))] is
    [CAS(old, new)] on location [x] (every location starts at 0). *)
Notation cop := (nat * (nat * nat))%type.
Definition cas_regs : seq_spec (nat → nat) cop bool := prod_spec (λ _ : nat, cas_reg).

(** A register's run, computed: [Some] final value, or [None] if a step is
    not the specification's. *)
Fixpoint cfin (σ : nat) (l : list ((nat * nat) * bool)) : option nat :=
  match l with
  | [] => Some σ
  | (on, b) :: l' =>
      if b then (if decide (σ = on.1) then cfin on.2 l' else None)
      else (if decide (σ = on.1) then None else cfin σ l')
  end.

Lemma cfin_runs σ l σ' : cfin σ l = Some σ' → runs cas_reg σ l.
Proof.
  revert σ. induction l as [| [[o n] b] l IH]; intros σ H; [constructor |].
  simpl in H. destruct b; case_decide; try done.
  - econstructor; [| by apply IH]. simpl. by split.
  - econstructor; [| by apply IH]. simpl. by split.
Qed.

Lemma cfin_app σ l1 l2 : cfin σ (l1 ++ l2) = cfin σ l1 ≫= λ σ1, cfin σ1 l2.
Proof.
  revert σ. induction l1 as [| [[o n] b] l1 IH]; intros σ; [done |]. simpl.
  destruct b; case_decide; simpl; by rewrite ?IH.
Qed.

(** The operations' effects on location [x], in order. *)
Definition locx (x : nat) (l : list (xevent cop bool)) : list ((nat * nat) * bool) :=
  strip x (effects (points l)).

Lemma locx_app x l1 l2 : locx x (l1 ++ l2) = locx x l1 ++ locx x l2.
Proof. unfold locx, strip. by rewrite points_app, effects_app, omap_app. Qed.
Lemma locx_XE x e : locx x [XE e] = [].
Proof. done. Qed.
Lemma locx_XL x i op v : locx x [XL i op v] = if decide (op.1 = x) then [(op.2, v)] else [].
Proof. unfold locx, strip. simpl. by case_decide. Qed.
Lemma locx_nil x : locx x [] = [].
Proof. done. Qed.
Lemma locx_cons x e l : locx x (e :: l) = locx x [e] ++ locx x l.
Proof. by rewrite <- locx_app. Qed.

(** The points of a history run the registers when each location's do. *)
Lemma accepts_locx xh : (∀ x, ∃ v, cfin 0 (locx x xh) = Some v) → accepts cas_regs (effects (points xh)).
Proof.
  intros Hx. unfold accepts, cas_regs. apply runs_prod. intros x. simpl.
  destruct (Hx x) as [v Hv]. by eapply cfin_runs.
Qed.

(** Removing failed CASes (they change nothing) keeps a run's result. *)
Lemma cfin_filter x σ σ' (P : xevent cop bool → Prop) `{∀ e, Decision (P e)} l :
  (∀ i op v, ¬ P (XL i op v) → v = false) → (∀ e, P (XE e)) →
  cfin σ (locx x l) = Some σ' → cfin σ (locx x (filter P l)) = Some σ'.
Proof.
  intros Hfl He. revert σ. induction l as [| e l IH]; intros σ Hl; [done |].
  rewrite filter_cons. rewrite locx_cons in Hl. case_decide as HP.
  - rewrite locx_cons. destruct e as [e | i op v].
    + rewrite locx_XE in Hl |- *. by apply IH.
    + rewrite locx_XL in Hl |- *. rewrite cfin_app in Hl |- *.
      destruct (cfin σ (if decide (op.1 = x) then [(op.2, v)] else [])) as [σ1 |]; [| done].
      simpl in *. by apply IH.
  - destruct e as [e | i op v]; [by destruct (HP (He e)) |].
    rewrite (Hfl i op v HP) in Hl. rewrite locx_XL, cfin_app in Hl.
    case_decide; simpl in Hl; [| by apply IH].
    destruct op as [y [o n]]. simpl in *. case_decide; [done |]. by apply IH.
Qed.

(** ** Operations, their ids, and what the ghost history reads of a state *)

(** The operation of an invocation: its location and arguments, chosen at
    its start and stable until it returns ([DetCasPx.v]). *)
Definition opof (T : tstate) : cop := (ax T, (ao T, an T)).
(** The id of invocation [k] of thread [u]. *)
Definition oid (u k : nat) : opid := encode_nat (u, k).
Lemma oid_inj u k u' k' : oid u k = oid u' k' → u = u' ∧ k = k'.
Proof.
  unfold oid. intros H. apply (f_equal (decode_nat (A:=nat * nat))) in H.
  rewrite !decode_encode_nat in H. by injection H.
Qed.

(** The thread is inside a detectable CAS (started, not committed); a LOAD
    is not a history operation. *)
Definition activeb (p : tpc) : bool :=
  match p with PIdle => false | PLH KLoad _ _ => false | _ => true end.
Definition isfail (p : tpc) : bool := match p with PFail _ _ => true | _ => false end.

Section views.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation hm := (hm N NL).
  Notation inv := (inv N NL).
  Notation eff := (eff NL).
  Notation durable := (durable NL).

  (** The current invocation decided to fail: L28 found another value
      ([PFail]) or its failure memento is the thread's last (L30 on): what
      recovery returns ERR from (④). *)
  Definition lastmf (s : state) (u : nat) : bool :=
    match last (hm s u) with Some w => bool_decide (mg w = Some (kk (th s u))) && mfail w | None => false end.
  Definition dec (s : state) (u : nat) : bool := isfail (pc (th s u)) || lastmf s u.

  (** The durable part of location [x]'s history and its value: the
      abstract value of the register ([dval]; 0 if nothing is durable). *)
  Definition dp (s : state) (x : nat) : list lword := take (mk s (LX x)) (hx s x).
  Definition lvl (l : list lword) : nat := match last l with Some w => lv w | None => 0 end.
  Definition dval (s : state) (x : nat) : nat := lvl (dp s x).
  Definition aval (s : state) (x : nat) : nat := if decide (x < NL) then dval s x else 0.

  (** Two facts of the memory the invariant of [DetCasPx.v] leaves out: a
      clean word follows an annotated word with its value (only a second
      plain CAS writes clean words); an annotated word of an invocation in
      flight follows a word holding the invocation's [old] (L26 compared
      it), or is the location's first write and [old] is 0. *)
  Record ms (s : state) : Prop := {
    ms_clean : ∀ x j w, x < NL → hx s x !! j = Some w → la w = None →
      ∃ j' a, j = S j' ∧ hx s x !! j' = Some a ∧ la a ≠ None ∧ lv a = lv w;
    ms_prev : ∀ x j a u, x < NL → hx s x !! j = Some a → la a ≠ None → lg a = Some (u, kk (th s u)) → tr u →
      (j = 0 → ao (th s u) = 0) ∧ (∀ j' w, j = S j' → hx s x !! j' = Some w → lv w = ao (th s u));
  }.

  Lemma mk_le_len s x : inv s → mk s (LX x) ≤ length (hx s x).
  Proof.
    intros Hi. unfold hx, hc, ids, mk. rewrite !fmap_length.
    apply (proj1 (proj2 (i_wf _ _ _ Hi))).
  Qed.

  Lemma lvl_take l n w : l !! n = Some w → lvl (take (S n) l) = lv w.
  Proof. intros Hn. unfold lvl. by rewrite (take_S_r _ _ _ Hn), last_snoc. Qed.

  (** The durable effect of invocation [(u, k)] is at its index. *)
  Lemma durable_at s u k x j : inv s → x < NL → durable s u k → tookat s u k x j → j < mk s (LX x).
  Proof.
    intros Hi Hx (x' & j' & Hx' & Ht' & Hlt) Ht.
    destruct (i_once _ _ _ Hi u k x j x' j' Hx Hx' Ht Ht') as [-> ->]. done.
  Qed.

  (** An annotated word followed by another write is durable. *)
  Lemma ann_next_durable s x j a w : inv s → x < NL → hx s x !! j = Some a → la a ≠ None →
    hx s x !! S j = Some w → j < mk s (LX x).
  Proof.
    intros Hi Hx Ha Hla Hw.
    destruct (i_loc _ _ _ Hi x j a Hx Ha) as [[? _] | (p & u & k & Hla' & Hlg & Hu & Hk & _ & _ & Hold)];
      [done |].
    assert (tookat s u k x j) as Ht by (by exists a).
    destruct (decide (k = kk (th s u))) as [-> | Hne]; [| specialize (Hold ltac:(lia)); lia].
    assert (S j < length (hx s x)) as Hlen by (apply lookup_lt_Some in Hw; done).
    destruct (i_cl _ _ _ Hi u x j Hu Hx Ht Hlen) as [[_ (m & Hm & Hmg & Hmf)] | Hh].
    - rewrite last_lookup in Hm.
      destruct (i_mmt _ _ _ Hi u _ m Hu Hm) as [(_ & _ & _ & Hd & _) | (Hlt & _)].
      + by apply (durable_at s u (kk (th s u)) x j Hi Hx (proj2 (Hd Hmf))).
      + specialize (Hlt _ Hmg). lia.
    - unfold hmk, hval in Hh. destruct (last (take (mk s (LHl NL (par (th s u)) u)) (hh NL s (par (th s u)) u)))
        as [h |] eqn:E; simpl in Hh; [| lia].
      rewrite last_lookup in E. apply lookup_take_Some in E as [E _].
      apply elem_of_list_lookup_2 in E.
      destruct (i_help _ _ _ Hi (par (th s u)) u Hu) as [_ Hw'].
      destruct (Hw' h E) as (k' & _ & (x' & j' & a' & Hx' & Ha' & _ & Hlg' & Hj') & Hk').
      destruct Hk' as [-> | [_ Hle]]; [| specialize (Hle eq_refl); lia].
      destruct (i_once _ _ _ Hi u (kk (th s u)) x j x' j' Hx Hx' Ht ltac:(by exists a')) as [-> ->].
      done.
  Qed.

  (** Where the visible word is clean, the register's value is its value. *)
  Lemma dval_clean s x : inv s → ms s → x < NL → la (visx s x) = None → dval s x = lv (visx s x).
  Proof.
    intros Hi Hm Hx Hla. unfold dval, dp, visx in *.
    pose proof (mk_le_len s x Hi) as Hle.
    destruct (last (hx s x)) as [w |] eqn:E; simpl in *.
    - pose proof E as E'. rewrite last_lookup in E'.
      destruct (ms_clean _ Hm x _ w Hx E' Hla) as (j' & a & Hj & Ha & Hla' & Hlv).
      pose proof (ann_next_durable s x j' a w Hi Hx Ha Hla' ltac:(by rewrite <- Hj)) as Hd.
      assert (length (hx s x) = S (S j')) as Hlen.
      { apply lookup_lt_Some in E'. lia. }
      destruct (decide (mk s (LX x) = S j')) as [-> | Hne].
      + by rewrite (lvl_take _ _ _ Ha).
      + rewrite take_ge by lia. unfold lvl. by rewrite E.
    - apply last_None in E. rewrite E, take_nil. done.
  Qed.
End views.

(** ** The memory facts [ms] hold in every run *)
Section ms_proof.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation hm := (hm N NL).
  Notation inv := (inv N NL).
  Notation eff := (eff NL).
  Notation ms := (ms N NL).
  Notation step := (step N NL fixed2 any_run).

  Lemma hx_tick s x : hx (tick s) x = hx s x.
  Proof. done. Qed.
  Lemma hm_tick s u : hm (tick s) u = hm s u.
  Proof. done. Qed.
  Lemma mk_tick s L : mk (tick s) L = mk s L.
  Proof. done. Qed.
  Lemma hx_drop s t x : hx (drop_pwbs s t) x = hx s x.
  Proof. done. Qed.
  Lemma hm_drop s t u : hm (drop_pwbs s t) u = hm s u.
  Proof. done. Qed.
  Lemma mk_drop s t L : mk (drop_pwbs s t) L = mk s L.
  Proof. done. Qed.

  Lemma ids_ok_pfence s t : ids_ok s → ids_ok (pfence s t).
  Proof. intros H L n. rewrite ids_pfence. apply H. Qed.
  Lemma nl_ok_pfence s t : nl_ok N NL s → nl_ok N NL (pfence s t).
  Proof. unfold nl_ok. by rewrite pfence_lines. Qed.

  Lemma hx_pw_other s L c x : ids_ok s → L < length (m_lines (p_mem (pm s))) → L ≠ LX x →
    hx (pwrite s L c) x = hx s x.
  Proof.
    intros Hok HL Hne. unfold hx. rewrite hc_pwrite by done. rewrite decide_False by done.
    by rewrite app_nil_r.
  Qed.
  Lemma hm_pw_other s L c u : ids_ok s → L < length (m_lines (p_mem (pm s))) → L ≠ LMl N NL u →
    hm (pwrite s L c) u = hm s u.
  Proof.
    intros Hok HL Hne. unfold hm. rewrite hc_pwrite by done. rewrite decide_False by done.
    by rewrite app_nil_r.
  Qed.

  Lemma LM_LX x u : x < NL → LMl N NL u ≠ LX x.
  Proof. intros Hx E. symmetry in E. revert E. by apply LX_LM. Qed.
  Lemma LH_LX x p u : x < NL → LHl NL p u ≠ LX x.
  Proof. intros Hx E. symmetry in E. revert E. by apply LX_LH. Qed.

  Lemma hx_wx s x0 c x : ids_ok s → nl_ok N NL s → x0 < NL →
    hx (pwrite s (LX x0) c) x = hx s x ++ (if decide (x = x0) then [lw_of (Some c)] else []).
  Proof. intros. by apply (hx_wloc N NL). Qed.

  (** A step that writes no location word and changes no [kk]/[ao] of a
      thread whose new current invocation has a word. *)
  Lemma ms_frame s s' : inv s → ms s → (∀ x, x < NL → hx s' x = hx s x) →
    (∀ u x j a, tr u → x < NL → hx s x !! j = Some a → lg a = Some (u, kk (th s' u)) →
       kk (th s' u) = kk (th s u) ∧ ao (th s' u) = ao (th s u)) → ms s'.
  Proof.
    intros Hi Hm Hx Hth. split.
    - intros x j w Hx0 Hw Hla. rewrite Hx in Hw |- * by done. by apply (ms_clean _ _ _ Hm x j w).
    - intros x j a u Hx0 Ha Hla Hlg Hu. rewrite Hx in Ha by done.
      destruct (Hth u x j a Hu Hx0 Ha Hlg) as [Hk Ho]. rewrite Hk in Hlg. rewrite Ho.
      setoid_rewrite Hx; [| done]. by apply (ms_prev _ _ _ Hm x j a u).
  Qed.

  (** A step that appends one word [w] to location [x0]. *)
  Lemma ms_append s s' x0 w : ms s → x0 < NL →
    (∀ x, x < NL → hx s' x = hx s x ++ (if decide (x = x0) then [w] else [])) →
    (∀ u, tr u → kk (th s' u) = kk (th s u) ∧ ao (th s' u) = ao (th s u)) →
    (la w = None → ∃ a, last (hx s x0) = Some a ∧ la a ≠ None ∧ lv a = lv w) →
    (∀ u, la w ≠ None → lg w = Some (u, kk (th s u)) → tr u →
       (hx s x0 = [] → ao (th s u) = 0) ∧ (∀ a, last (hx s x0) = Some a → lv a = ao (th s u))) →
    ms s'.
  Proof.
    intros Hm Hx0 Hx Hth Hcl Hpr. split.
    - intros x j w' Hx' Hw Hla. rewrite Hx in Hw |- * by done.
      apply lookup_app_Some in Hw as [Hw | [Hle Hw]].
      + destruct (ms_clean _ _ _ Hm x j w' Hx' Hw Hla) as (j' & a & -> & Ha & Hla' & Hlv).
        exists j', a. split_and!; [done | by apply lookup_app_l_Some | done | done].
      + case_decide; [subst x | by rewrite lookup_nil in Hw].
        apply list_lookup_singleton_Some in Hw as [Hj ->].
        destruct (Hcl Hla) as (a & Ha & Hla' & Hlv). pose proof Ha as Ha'. rewrite last_lookup in Ha'.
        assert (hx s x0 ≠ []) as Hne by (intros E; rewrite E in Ha; done).
        destruct (hx s x0) as [| b l] eqn:E; [done |]. simpl in Hj, Ha'.
        exists (length l), a. split_and!; [simpl in Hle; lia | | done | done].
        apply lookup_app_l_Some. exact Ha'.
    - intros x j a u Hx' Ha Hla Hlg Hu. destruct (Hth u Hu) as [Hk Ho].
      rewrite Hk in Hlg. rewrite Ho. rewrite Hx in Ha by done.
      setoid_rewrite Hx; [| done].
      apply lookup_app_Some in Ha as [Ha | [Hle Ha]].
      + destruct (ms_prev _ _ _ Hm x j a u Hx' Ha Hla Hlg Hu) as [H0 Hp]. split; [done |].
        intros j' w' -> Hw'. apply (Hp j' w' eq_refl).
        apply lookup_app_Some in Hw' as [? | [? _]]; [done |]. apply lookup_lt_Some in Ha. lia.
      + case_decide; [subst x | by rewrite lookup_nil in Ha].
        apply list_lookup_singleton_Some in Ha as [Hj ->].
        destruct (Hpr u Hla Hlg Hu) as [H0 Hp]. split.
        * intros ->. apply H0. destruct (hx s x0); [done | simpl in Hle; lia].
        * intros j' w' -> Hw'. apply Hp. rewrite last_lookup.
          apply lookup_app_Some in Hw' as [Hw' | [Hle' Hw']]; [| lia].
          by replace (pred (length (hx s x0))) with j' by lia.
  Qed.

  Lemma ms_init : ms (init N NL).
  Proof.
    assert (∀ x, hx (init N NL) x = []) as Hx.
    { intros x. unfold hx, hc. by rewrite ids_init. }
    split.
    - intros x j w _ Hj. by rewrite Hx, lookup_nil in Hj.
    - intros x j a u _ Hj. by rewrite Hx, lookup_nil in Hj.
  Qed.

  Ltac vnorm := repeat (progress rewrite ?hx_setth, ?hm_setth, ?mk_setth, ?hx_ppwb, ?hm_ppwb, ?mk_ppwb,
    ?hx_pfence, ?hm_pfence, ?hx_tick, ?hm_tick, ?mk_tick, ?hx_drop, ?hm_drop, ?mk_drop, ?mk_pwrite).

  Lemma ms_step s s' : inv s → ms s → step s s' → ms s'.
  Proof.
    intros Hi Hm Hs. pose proof (i_ids _ _ _ Hi) as Hids. pose proof (i_nl _ _ _ Hi) as Hnl.
    assert (Hsame : ∀ t T, tr t → kk T = kk (th s t) → ao T = ao (th s t) →
              ∀ u, tr u → kk (th (setth s t T) u) = kk (th s u) ∧ ao (th (setth s t T) u) = ao (th s u)).
    { intros t T Ht Hk Ho u Hu. rewrite th_setth. case_decide; subst; done. }
    assert (Hsame' : ∀ s1 t T, th s1 = th s → tr t → kk T = kk (th s t) → ao T = ao (th s t) →
              ∀ u x j a, tr u → x < NL → hx s x !! j = Some a → lg a = Some (u, kk (th (setth s1 t T) u)) →
              kk (th (setth s1 t T) u) = kk (th s u) ∧ ao (th (setth s1 t T) u) = ao (th s u)).
    { intros s1 t T E Ht Hk Ho u x j a Hu _ _ _. rewrite th_setth, E. case_decide; subst; done. }
    destruct Hs; try (unfold s2 in * ); try (unfold s1 in * ); try (unfold w in * ); try (unfold T in * );
      try (unfold m in * ); try (unfold thv in * );
      cbn [c33 c35 c38f c38wb c20 chelp c2w fixed2 fixedw] in *.
    (* SStart, SStartRec: the new invocation has no word yet *)
    1, 2: apply (ms_frame s); [done | done | intros; by vnorm |];
      intros u x' j a Hu Hx Ha Hlg; rewrite th_setth in Hlg |- *; case_decide as E; [subst u | done];
      exfalso; pose proof (pcok_of N NL s t Hi H) as Hp; unfold pcok in Hp; rewrite H0 in Hp;
      destruct Hp as (Hne & _); apply Hne; exists x', j; split; [done | by exists a].
    (* S26ok: appends the annotated word *)
    2: { apply (ms_append s _ (ax (th s t)) (LW (an (th s t)) (Some (p, t)) town (Some (t, kk (th s t))))); [done | | | | | ].
         - pose proof (pcok_of N NL s t Hi H) as Hp. unfold pcok in Hp. rewrite H0 in Hp. apply Hp.
         - intros x Hx. vnorm. rewrite hx_wx; [by vnorm | by apply ids_ok_pfence | by apply nl_ok_pfence |].
           pose proof (pcok_of N NL s t Hi H) as Hp. unfold pcok in Hp. rewrite H0 in Hp. apply Hp.
         - apply Hsame; done.
         - intros Hla. done.
         - intros u _ Hlg Hu. injection Hlg as <- _. unfold visx, phys in H1. rewrite hx_pfence in H1. destruct (last (hx s (ax (th s t)))) as [b |] eqn:E; simpl in H1.
           + split; [intros E'; by rewrite E' in E |]. intros a Ha. injection Ha as ->.
             by injection H1.
           + split; [intros _; by injection H1 | intros a Ha; done]. }
    (* SH18ok: appends a clean word after the annotated word it cleans *)
    12: { pose proof (pcok_of N NL s t Hi H) as Hp. unfold pcok in Hp. rewrite H0 in Hp.
          destruct Hp as [_ [Hy (i & p & u & k & Ha & Hla & _)]].
          apply (ms_append s _ y (LW (lv a) None 0 None)); [done | done | | | | ].
          - intros x Hx. vnorm. rewrite hx_wx by (try apply ids_ok_pfence; try apply nl_ok_pfence; done). by vnorm.
          - apply Hsame; done.
          - intros _. unfold visx in H1. rewrite hx_pfence in H1. fold (visx s y) in H1. unfold phys2, phys in H1. injection H1 as Hv Ha' _.
            assert (la (visx s y) ≠ None) as Hn by (rewrite Ha', Hla; done).
            exists (visx s y). split_and!; [by apply visx_ann' | done | done].
          - intros u' Hn. done. }
    (* S38: may append the clean word *)
    18: { destruct (decide _) as [Heq | Hneq].
          - pose proof (pcok_of N NL s t Hi H) as Hp. unfold pcok in Hp. rewrite H0 in Hp.
            destruct Hp as (_ & _ & _ & _ & _ & Hax).
            apply (ms_append s _ (ax (th s t)) (LW (an (th s t)) None 0 None)); [done | done | | | | ].
            + intros x Hx. vnorm. rewrite hx_wx by (try apply ids_ok_pfence; try apply nl_ok_pfence; done). by vnorm.
            + apply Hsame; done.
            + intros _. unfold visx in Heq. rewrite hx_pfence in Heq. fold (visx s (ax (th s t))) in Heq. unfold phys in Heq. injection Heq as Hv Ha'.
              assert (la (visx s (ax (th s t))) ≠ None) as Hn by (rewrite Ha'; done).
              exists (visx s (ax (th s t))). split_and!; [by apply visx_ann' | done | done].
            + intros u' Hn. done.
          - apply (ms_frame s); [done | done | intros; by vnorm |]. apply Hsame'; done. }
    (* SCommit: the next invocation has no word *)
    18: { apply (ms_frame s); [done | done | intros; by vnorm |].
          intros u x j a Hu Hx Ha Hlg. rewrite th_setth in Hlg |- *. case_decide as E; [subst u | done].
          exfalso. cbn [kk] in Hlg. pose proof (inv_no_future_effect N NL s t (S (kk (th s t))) Hi H) as Hf.
          assert (eff s t (S (kk (th s t)))) as He by (exists x, j; split; [done | by exists a]).
          specialize (Hf He). lia. }
    (* the crash: every location keeps a prefix *)
    26: { assert (Hhx : ∀ x, hx (St (crash_pm (pm s) keep) (wt s) (clock s) f) x = take (keep (LX x)) (hx s x)).
          { intros x. unfold hx, hc, ids. cbn [pm crash_pm p_mem]. rewrite crash_hist. by rewrite !fmap_take. }
          assert (Hth : ∀ u, tr u → kk (f u) = kk (th s u) ∧ ao (f u) = ao (th s u)) by (intros u Hu; by rewrite H0).
          split; cbn [th].
          - intros x j w Hx Hw Hla. rewrite Hhx in Hw |- *. apply lookup_take_Some in Hw as [Hw Hj].
            destruct (ms_clean _ _ _ Hm x j w Hx Hw Hla) as (j' & a & -> & Ha & Hla' & Hlv).
            exists j', a. split_and!; [done | | done | done]. apply lookup_take_Some. split; [done | lia].
          - intros x j a u Hx Ha Hla Hlg Hu. destruct (Hth u Hu) as [Hk Ho]. rewrite Hk in Hlg. rewrite Ho.
            rewrite Hhx in Ha. apply lookup_take_Some in Ha as [Ha Hj].
            destruct (ms_prev _ _ _ Hm x j a u Hx Ha Hla Hlg Hu) as [H0' Hp]. split; [done |].
            intros j' w' -> Hw'. rewrite Hhx in Hw'. apply lookup_take_Some in Hw' as [Hw' _].
            by apply (Hp j' w' eq_refl). }
    (* every other step writes no location word, and changes no invocation's [kk] or [ao] *)
    all: apply (ms_frame s); [done | done | | apply Hsame'; done].
    all: intros x Hx; vnorm; try reflexivity.
    (* writes to a memento or a HELP entry *)
    all: try (rewrite hx_pw_other; [by vnorm | by vnorm | rewrite ?pfence_lines, Hnl; apply LM_lt; unfold DetCasPx.tr in *; lia
             | by apply LM_LX]).
    pose proof (pcok_of N NL s t Hi H) as Hp. unfold pcok in Hp. rewrite H0 in Hp.
    destruct Hp as [_ [Hy (i & p & u & k & Ha & Hla & _)]].
    unfold hline. rewrite Hla. rewrite hx_pw_other; [by vnorm | by apply ids_ok_pfence | |].
    - rewrite pfence_lines, Hnl. apply LH_lt. pose proof (held_tr N NL s y i a p u Hi Hy Ha Hla). unfold DetCasPx.tr in *. lia.
    - by apply LH_LX.
  Qed.
End ms_proof.

Lemma ms_reach N NL s : reachable2 N NL s → ms N NL s.
Proof.
  unfold reachable2, reachable. intros Hr. revert s Hr. apply (rtc_ind_r _ (init N NL)); [apply ms_init |].
  intros s1 s2 Hr Hs IH. apply (ms_step N NL s1); [| done | done]. by apply (tw_reachable_inv N NL).
Qed.

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

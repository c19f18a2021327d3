(** * Memento's detectable CAS (two-word location, and one-word under H-ABA): detectable histories

    [DetCasPxTwoWord.v] proves the detectable CAS of the seed paper (seed
    001, §3, Algorithms 1 and 2) detectable on the model's states, for the
    location the crate ships by default ([impl/perdure-memento/src/cas.rs],
    [DetectableCasAtomic::at], [TwoWord]), in every run, without a premise
    ([detcas_px2_detectable]).  This file states it over the histories of
    [Core/History.v] and the verdicts of [Core/DurableLin.v]: every run of
    that model ([step N NL fixed2 any_run]: [N] threads, [NL] locations,
    helping, full-system and thread crashes) is paired with a ghost history
    of invoke, return, crash and recover events with linearization points
    ([gstep]), and those histories are durably linearizable and detectable
    for the sequential specification of [NL] CAS registers ([cas_regs]: the
    operation [(x, (old, new))] is CAS(old, new) on location [x], returning
    [true] iff the register held [old]; every register starts at 0).

    The history ([gx], built step by step from the model's steps; Rust:
    [cas.rs] [DetectableCasAtomic::cas] and its recovery, [runtime.rs]
    [Handle::try_run_root], [Runtime::open]):
    - [Invoke (oid t k) t (x, (old, new))] when thread [t] starts its
      invocation [k] (L5–L8, or L9 in recovery mode: [SStart],
      [SStartRec]); [oid] numbers the pairs [(t, k)];
    - [Return] when the invocation commits ([SCommit], [try_run_root]'s
      commit) with the result it commits, or [Recover] if a full crash cut
      it off ([gc]): the result recovery returned (④ ERR, ⑤–⑨ OK);
    - [Crash] at each full crash ([g_crash]); a thread crash ([STCrash]) is
      no event ([History.v]'s crash is a full-system crash): the operation
      stays pending, its recovery runs in the same thread, and it returns;
    - LOAD is not an operation of the history (its value is not modelled).
    The linearization points ([XL]):
    - a success at the step where its first plain CAS (L26) becomes
      durable: L33's flush, a helper's fence before L18 (L12–L13), or a
      full crash whose image keeps it ([sp]: the words that step brings
      under their line's mark).  Not at L26 itself: a crash may drop an
      unflushed L26, and recovery (⑨) then runs the CAS again.  In between
      nothing else happens to the register: an annotated word not under the
      mark is the last write of its location (a clean word after it needs
      it durable, [ann_next_durable]) and no failure decides on an annotated
      word;
    - a failure at the step where L28 decides it (LOADHELP returned a clean
      value other than [old]: [S26fail], [SH5clean], [SH11], [SH18ok],
      [SH18fail]); the register then holds that clean word's value
      ([dval_clean]).  If the decision is dropped -- a thread crash before
      the failure memento (L29–L30), or a full crash whose image loses the
      memento -- recovery runs the CAS again (⑨), and the point is removed
      ([rm]): a failure changes no register, so the points still run the
      specification ([cfin_filter]).
    A register's value is that of the last durable word of its location
    ([dval]: the durable part of the location's history, [dp]); besides
    [DetCasPx.v]'s invariant [inv], two facts of the memory are proved here
    ([ms], [ms_reach]): a clean word follows an annotated word with its
    value (only a second plain CAS writes clean words), and an annotated
    word of an invocation in flight follows a word holding the invocation's
    [old] (L26 compared it).

    Proved, for every [N], [NL], schedule and number of crashes:
    - [detcas_lin_every_run]: the model's reachable states ([reachable2],
      [DetCasPxTwoWord.v]) are exactly those of the ghost runs ([greach]),
      each full crash with its [crash] event: every run has its history;
    - [detcas_lin_durably_linearizable]: every ghost run's history is
      durably linearizable for [cas_regs], the ghost points being the
      witness; [detcas_lin_per_location]: each location's projection is
      durably linearizable for one CAS register ([DurableLin.v]'s
      locality); [detcas_lin_wf]: the histories are well formed;
    - [detcas_lin_cut_off_recovered]: every operation a crash cut off is
      recovered -- with the result it took effect with: a [recover] comes
      after the operation's point, with its value -- or is the operation
      its thread is still running (its recovery has not returned yet);
    - [detcas_lin_detectable]: once no thread is inside a detectable CAS
      (every recovery returned), the history is [detectable]
      ([DurableLin.v]: durably linearizable and every cut-off operation
      recovered); [DurableLin.v]'s [detectable] is meant for histories that
      end after the recoveries (it is not prefix-closed), hence the
      premise;
    - [detcas_lin_results]: the result with which the history returns or
      recovers an operation is the one its invocation committed in the
      model, so, by [DetCasPxTwoWord.v]'s [detcas_px2_detectable], it is
      [true] iff the invocation's first plain CAS is in its location's
      history as the crashes left it;
    - [detcas_lin_not_vacuous]: an explicit run (one thread, one location)
      whose history is [invoke; crash; recover]: a CAS that fails, writes
      its failure memento and writes it back, a crash keeping the memento,
      recovery returning ERR; it is cut off, recovered and detectable (a
      recovered success, 9 steps through ⑦, takes about 14 s more for
      the kernel to check, so the run kept here is the failure's).
    - the one-word form under H-ABA: the same statements
      ([detcas_lin1_every_run], [detcas_lin1_durably_linearizable],
      [detcas_lin1_per_location], [detcas_lin1_wf],
      [detcas_lin1_cut_off_recovered], [detcas_lin1_detectable],
      [detcas_lin1_results], [detcas_lin1_not_vacuous]) for the seed's
      one-word location ([DetCasPx.v]'s [step N NL fixed h_aba]: every first
      plain CAS satisfies the premise [h_aba], the precondition of
      [UniqueCasAtomic::at_unique] worded as the crate's docs word it).  The
      proofs are one: from [Section lin] to [End lin] they hold for any word
      form [tw] and premise [aba] whose reachable states satisfy
      [DetCasPx.v]'s [inv] ([Hreach_inv]); the two-word form discharges it
      by [DetCasPxTwoWord.v]'s [tw_reachable_inv], the one-word form under
      H-ABA by [DetCasPx.v]'s [reachable_inv].
    Everything rests on the invariant [ginv] ([ginv_init], [ginv_nc] for a
    step of one thread, [ginv_crash] for a full crash, [greach_ginv]),
    derived from [DetCasPx.v]'s [inv] ([Hreach_inv]: its
    [i_once], [i_loc], [i_cl], [i_mmt], [i_help], [pcok]), not re-proved.
    The steps from [ginv] to the theorems that do not depend on the model
    are [DurableLin.v]'s (e), shared with [CheckpointPxLin.v] and
    [InsDelPxLin.v]: [current_across_crash] ([ginv_crash]),
    [rtc_preserved] ([greach_ginv]), [ghost_runs]
    ([detcas_linw_every_run]), [durably_linearizable_erase], and
    [numbered_cut_off_recovered], [numbered_detectable] for the
    [..._cut_off_recovered], [..._detectable] theorems ([greach_numbered]:
    the history's operations are the threads' numbered invocations).

    What the model abstracts: what [DetCasPx.v] and [DetCasPxTwoWord.v]
    abstract (SC steps, each word its own line, each detectable CAS a root
    operation of its own, no memento clearing, values naturals, the 16-byte
    location one atomic word); the history is a ghost of the model's steps
    (an invocation is invoked at its start, L5–L8, and returns at its
    commit); thread crashes are not events; LOAD is not linearized; the
    registers' initial value is 0.  Not covered: multi-CAS root operations
    (the replay of ⑤), loads; liveness. *)
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
(* [oid], [oid_inj] (invocation [k] of thread [u]): Core/History.v. *)

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

(** ** The word form and the premise

    Everything from here to [End lin] holds for the model [step N NL
    (fixedw tw) aba] of either word form ([tw]: the two-word location when
    true, the seed's one word when false) under a premise [aba] at L26 (a
    first plain CAS of thread [t] writing [w] to [x] in state [s] runs only
    if [aba s x w]), provided every state it reaches satisfies
    [DetCasPx.v]'s invariant [inv] ([Hreach_inv]).  The two instances after
    [End lin]: the two-word form in every run ([any_run]; [Hreach_inv] is
    [DetCasPxTwoWord.v]'s [tw_reachable_inv]) and the one-word form under
    H-ABA ([h_aba], worded as the crate's docs word it; [Hreach_inv] is
    [DetCasPx.v]'s [reachable_inv]). *)
Section lin.
  Context (tw : bool) (aba : state → nat → lword → Prop).
  Context (Hreach_inv : ∀ N NL s, reachable N NL (fixedw tw) aba s → inv N NL s).
  Local Notation fixed2 := (fixedw tw).
  Local Notation any_run := aba.
  Local Notation reachable2 N NL := (reachable N NL (fixedw tw) aba).
  Local Notation tw_reachable_inv := Hreach_inv.

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
      cbn [c33 c35 c38f c38wb c20 chelp c2w fixedw] in *.
    (* SStart, SStartRec: the new invocation has no word yet *)
    1, 2: apply (ms_frame s); [done | done | intros; by vnorm |];
      intros u x' j a Hu Hx Ha Hlg; rewrite th_setth in Hlg |- *; case_decide as E; [subst u | done];
      exfalso; pose proof (pcok_of N NL s t Hi H) as Hp; unfold pcok in Hp; rewrite H0 in Hp;
      destruct Hp as (Hne & _); apply Hne; exists x', j; split; [done | by exists a].
    (* S26ok: appends the annotated word *)
    2: { apply (ms_append s _ (ax (th s t)) (LW (an (th s t)) (Some (p, t)) (if tw then town else 0) (Some (t, kk (th s t))))); [done | | | | | ].
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
  unfold reachable. intros Hr. revert s Hr. apply (rtc_ind_r _ (init N NL)); [apply ms_init |].
  intros s1 s2 Hr Hs IH. apply (ms_step N NL s1); [| done | done]. by apply (tw_reachable_inv N NL).
Qed.

(** ** What a step does, seen from the history *)
Section summary.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation hm := (hm N NL).
  Notation inv := (inv N NL).
  Notation eff := (eff NL).
  Notation dec := (dec N NL).
  Notation step := (step N NL fixed2 any_run).

  Definition same_op (s s' : state) (t : nat) : Prop :=
    kk (th s' t) = kk (th s t) ∧ opof (th s' t) = opof (th s t) ∧ res (th s' t) = res (th s t).

  (** The step of thread [t], for its operation: inside it (its decision to
      fail may be taken, L28, or dropped by a thread crash before the
      failure memento), its start, or its commit. *)
  Definition cls (s s' : state) (t : nat) : Prop :=
    (same_op s s' t ∧ activeb (pc (th s' t)) = activeb (pc (th s t)) ∧
       (dec s' t = dec s t ∨
        (dec s t = false ∧ dec s' t = true ∧ la (visx s' (ax (th s t))) = None ∧
           lv (visx s' (ax (th s t))) ≠ ao (th s t)) ∨
        (dec s t = true ∧ dec s' t = false)))
    ∨ (activeb (pc (th s t)) = false ∧ activeb (pc (th s' t)) = true ∧ kk (th s' t) = kk (th s t) ∧
       res (th s' t) = res (th s t) ∧ dec s' t = false ∧ ¬ eff s' t (kk (th s' t)))
    ∨ (∃ r, pc (th s t) = PCommit r ∧ kk (th s' t) = S (kk (th s t)) ∧ res (th s' t) = res (th s t) ++ [r] ∧
       activeb (pc (th s' t)) = false ∧ dec s' t = false ∧ ¬ eff s' t (kk (th s' t))).

  (** A step of thread [t] other than a full crash. *)
  Record nc (s s' : state) (t : nat) : Prop := {
    nc_t : tr t;
    nc_th : ∀ u, u ≠ t → th s' u = th s u;
    nc_hm : ∀ u, tr u → u ≠ t → hm s' u = hm s u;
    nc_hx : ∀ x, x < NL → hx s x `prefix_of` hx s' x;
    nc_mk : ∀ x, x < NL → mk s (LX x) ≤ mk s' (LX x) ∧ mk s' (LX x) ≤ length (hx s x);
    nc_cls : cls s s' t;
  }.

  Lemma dec_eq s s' t : hm s' t = hm s t → kk (th s' t) = kk (th s t) →
    isfail (pc (th s' t)) = isfail (pc (th s t)) → dec s' t = dec s t.
  Proof. intros Hm Hk Hf. unfold dec, lastmf. by rewrite Hm, Hk, Hf. Qed.

  Lemma cls_pc s s' t p' : th s' t = with_pc (th s t) p' ∨ (∃ o, th s' t = with_own (with_pc (th s t) p') o) →
    hm s' t = hm s t → activeb p' = activeb (pc (th s t)) → isfail p' = isfail (pc (th s t)) → cls s s' t.
  Proof.
    intros Ht Hm Ha Hf. left.
    assert (kk (th s' t) = kk (th s t) ∧ opof (th s' t) = opof (th s t) ∧ res (th s' t) = res (th s t) ∧
            pc (th s' t) = p') as (Hk & Ho & Hr & Hp) by (destruct Ht as [Ht | [o Ht]]; by rewrite Ht).
    split; [by split_and! |]. rewrite Hp. split; [done |]. left. apply dec_eq; [done | done | by rewrite Hp].
  Qed.

  (** No memento of the current invocation: not decided. *)
  Lemma lastmf_nokm s t : nokm N NL s t → lastmf N NL s t = false.
  Proof.
    intros Hn. unfold lastmf. destruct (last (hm s t)) as [w |] eqn:E; [| done].
    rewrite bool_decide_false; [done |]. apply Hn. rewrite last_lookup in E. by eapply elem_of_list_lookup_2.
  Qed.

  (** LOADHELP returns [v] to its caller. *)
  Lemma cls_lhret s s' t c y v : (∀ p town, c = KL27 p town → lhpre N NL s t c y) →
    activeb (pc (th s t)) = activeb (PLH c y H11) →
    isfail (pc (th s t)) = false →
    th s' t = with_pc (th s t) (lh_ret (th s t) c v) → hm s' t = hm s t →
    la (visx s' y) = None → lv (visx s' y) = v → cls s s' t.
  Proof.
    intros Hpre Ha Hf Ht Hm Hla Hv. destruct c as [p town | |]; cbn [lh_ret] in Ht.
    - destruct (Hpre p town eq_refl) as [(_ & _ & (_ & Hnk & _) & _) ->].
      destruct (decide (v = ao (th s t))) as [-> | Hne].
      + apply (cls_pc s s' t (P26 p town)); [by left | done | by rewrite Ha | by rewrite Hf].
      + left. unfold same_op. rewrite Ht. split; [by split_and! |]. split; [by rewrite Ha |]. right; left.
        split_and!.
        * unfold dec. by rewrite Hf, lastmf_nokm.
        * unfold dec. by rewrite Ht.
        * done.
        * by rewrite Hv.
    - apply (cls_pc s s' t (PCommit false)); [by left | done | by rewrite Ha | by rewrite Hf].
    - apply (cls_pc s s' t PIdle); [by left | done | by rewrite Ha | by rewrite Hf].
  Qed.

  Lemma cls_lhenter s s' t c y w : (∀ p town, c = KL27 p town → lhpre N NL s t c y) →
    activeb (pc (th s t)) = activeb (PLH c y H11) →
    isfail (pc (th s t)) = false →
    th s' t = with_pc (th s t) (lh_enter (th s t) c y w) → hm s' t = hm s t →
    (la w = None → la (visx s' y) = None ∧ lv (visx s' y) = lv w) → cls s s' t.
  Proof.
    intros Hpre Ha Hf Ht Hm Hw. unfold lh_enter in Ht. destruct (la w) as [pu |] eqn:E.
    - apply (cls_pc s s' t (PLH c y (H4 w))); [by left | done | by rewrite Ha; destruct c | by rewrite Hf].
    - destruct (Hw eq_refl). by apply (cls_lhret s s' t c y (lv w)).
  Qed.

  Lemma lastmf_eq s s' t : hm s' t = hm s t → kk (th s' t) = kk (th s t) → lastmf N NL s' t = lastmf N NL s t.
  Proof. intros Hm Hk. unfold lastmf. by rewrite Hm, Hk. Qed.
  Lemma act_crash_pc p : activeb (crash_pc p) = activeb p.
  Proof. destruct p; try destruct c; reflexivity. Qed.
  Lemma isfail_crash_pc p : isfail (crash_pc p) = false.
  Proof. destruct p; try destruct c; reflexivity. Qed.

  Lemma act_PLH c y h y' h' : activeb (PLH c y h) = activeb (PLH c y' h').
  Proof. by destruct c. Qed.

  Lemma mk_le s x : p_wf (pm s) → mk s (LX x) ≤ length (hx s x).
  Proof. intros Hwf. unfold hx, hc, ids, mk. rewrite !fmap_length. apply (proj1 (proj2 Hwf)). Qed.
  Lemma mk_pf_le s t x : p_wf (pm s) → mk (pfence s t) (LX x) ≤ length (hx s x).
  Proof. intros Hwf. rewrite <- (hx_pfence s t x). apply mk_le. by apply p_fence_wf. Qed.

  Ltac vnorm := repeat (progress rewrite ?hx_setth, ?hm_setth, ?mk_setth, ?hx_ppwb, ?hm_ppwb, ?mk_ppwb,
    ?hx_pfence, ?hm_pfence, ?hx_tick, ?hm_tick, ?mk_tick, ?hx_drop, ?hm_drop, ?mk_drop, ?mk_pwrite).

  (** Every step is a step of one thread or a full crash. *)
  Lemma step_nc s s' : inv s → step s s' →
    (∃ t, nc s s' t) ∨
    (∃ keep f, p_crash_ok (pm s) keep ∧ (∀ u, tr u → f u = reinit N NL s keep u) ∧
       (∀ u, ¬ tr u → f u = th s u) ∧ s' = St (crash_pm (pm s) keep) (wt s) (clock s) f).
  Proof.
    intros Hi Hs. pose proof (i_ids _ _ _ Hi) as Hids. pose proof (i_nl _ _ _ Hi) as Hnl.
    pose proof (i_wf _ _ _ Hi) as Hwf.
    destruct Hs;
      try (unfold s2 in * ); try (unfold s1 in * ); try (unfold w in * ); try (unfold T in * );
      try (unfold m in * ); try (unfold thv in * );
      cbn [c33 c35 c38f c38wb c20 chelp c2w fixedw] in *;
      [left; exists t .. | right; by exists keep, f].
    all: try (pose proof (pcok_of N NL s t Hi H) as Hp; unfold pcok in Hp; rewrite H0 in Hp).
    all: assert (Ht : t ≤ N) by (unfold DetCasPx.tr in H; lia).
    (* the location written, if any, is below [NL] *)
    all: assert (∀ x0 c0, x0 < NL → ∀ u, hm (pwrite (pfence s t) (LX x0) c0) u = hm s u) as Hwx
      by (intros x0 c0 Hx0 u; rewrite hm_pw_other; [by vnorm | by apply ids_ok_pfence
          | rewrite pfence_lines, Hnl; by apply LX_lt | by apply LX_LM]).
    all: repeat match goal with |- context [if decide ?P then _ else _] => destruct (decide P) end.
    all: split; [done | intros u Hu; rewrite th_setth, decide_False by done; reflexivity | | | |].
    (* [nc_hm] *)
    all: try (intros u Hu Hne; vnorm; first [reflexivity | rewrite Hwx; [done | by apply Hp]
      | rewrite hm_pw_other; [done | done | rewrite Hnl; by apply LM_lt | intros E%LM_inj; done]]; fail).
    (* [nc_hx], [nc_mk] *)
    all: try (intros x' Hx'; vnorm; first [reflexivity | rewrite (hx_wx N NL); [apply prefix_app_r; by vnorm
      | by apply ids_ok_pfence | by apply (nl_ok_pfence N NL)
      | first [by destruct Hp as (_&_&_&?) | by destruct Hp as (_&_&_&_&_&?) | by destruct Hp as [_ [? _]]]]]; fail).
    all: try (intros x' Hx'; vnorm; split; [first [lia | apply mk_pfence] | first [by apply mk_le | by apply mk_pf_le]]; fail).
    (* L13 writes HELP of the annotated word it holds *)
    all: try (match goal with H0 : pc (th _ _) = PLH _ _ (H13 _ _ _) |- _ => idtac end;
      destruct Hp as [_ [Hy (i & p & u & k & Ha & Hla & _)]];
      assert (u ≤ N) as Hu by (pose proof (held_tr N NL s y i a p u Hi Hy Ha Hla); unfold DetCasPx.tr in *; lia);
      unfold hline; rewrite Hla;
      first [intros u' Hu' Hne; vnorm; rewrite hm_pw_other; [by vnorm | by apply ids_ok_pfence
               | rewrite pfence_lines, Hnl; by apply LH_lt | by apply LH_LM]
            | intros x' Hx'; vnorm; rewrite hx_pw_other; [vnorm; reflexivity | by apply ids_ok_pfence
               | rewrite pfence_lines, Hnl; by apply LH_lt | by apply LH_LX]]; fail).
    (* L30, L34 write the memento *)
    all: try (intros x' Hx'; vnorm; rewrite hx_pw_other; [reflexivity | done | rewrite Hnl; by apply LM_lt
      | by apply (LM_LX N NL)]; fail).
    (* L33's flush *)
    all: try (intros x' Hx'; vnorm; split;
      [etrans; [| apply mk_pfence]; by vnorm | etrans; [apply mk_pf_le; by apply p_pwb_wf |]; by vnorm]; fail).
    (* [nc_cls] *)
    all: assert (Htt : ∀ X T, th (setth X t T) t = T) by (intros; by rewrite th_setth, decide_True).
    (* a step inside the operation that moves the program counter only *)
    all: try (eapply cls_pc; [first [left; rewrite Htt; reflexivity | right; eexists; rewrite Htt; reflexivity]
      | vnorm; first [reflexivity | rewrite Hwx; [done | by apply Hp] | rewrite Hwx; [done | by destruct Hp as (_&_&_&?)]
                     | rewrite Hwx; [done | by destruct Hp as (_&_&_&_&_&?)]
                     | match goal with |- hm (pwrite _ (LHl _ _ _) _) _ = _ => idtac end;
                       destruct Hp as [_ [Hy (i & p' & u & k & Ha & Hla & _)]]; rewrite hm_pw_other;
                       [by vnorm | by apply ids_ok_pfence | rewrite pfence_lines, Hnl; apply LH_lt;
                          pose proof (held_tr N NL s y i a p' u Hi Hy Ha Hla); unfold DetCasPx.tr in *; lia
                       | by apply LH_LM]]
      | rewrite H0; first [reflexivity | apply act_PLH]
      | rewrite H0; first [reflexivity | by destruct c]]; fail).
    (* LOADHELP returns to its caller *)
    all: try (eapply cls_lhenter; [| | | rewrite Htt; reflexivity | |];
      [first [by intros ?? [=] | intros ?? [= <- <-]; split; [exact Hp | done] | intros; by destruct Hp]
      | rewrite H0; first [reflexivity | apply act_PLH] | by rewrite H0 | by vnorm
      | intros Hw; split; [exact Hw | reflexivity]]; fail).
    all: try (eapply cls_lhret; [| | | rewrite Htt; reflexivity | | |];
      [intros; by destruct Hp | rewrite H0; apply act_PLH | by rewrite H0 | by vnorm | exact H1 | reflexivity]; fail).
    (* L13's HELP write *)
    all: try (match goal with H0 : pc (th _ _) = PLH _ _ (H13 _ _ _) |- _ => idtac end;
      destruct Hp as [Hpre [Hy (i & p' & u & k & Ha & Hla & _)]];
      assert (u ≤ N) as Hu by (pose proof (held_tr N NL s y i a p' u Hi Hy Ha Hla); unfold DetCasPx.tr in *; lia);
      eapply cls_pc; [left; rewrite Htt; reflexivity | | rewrite H0; apply act_PLH | by rewrite H0];
      vnorm; unfold hline; rewrite Hla; rewrite hm_pw_other;
      [by vnorm | by apply ids_ok_pfence | rewrite pfence_lines, Hnl; by apply LH_lt | by apply LH_LM]; fail).
    (* L18's successful second plain CAS *)
    all: try (match goal with H0 : pc (th _ _) = PLH _ _ (H18 _ _) |- _ => idtac end;
      destruct Hp as [Hpre [Hy Hlh]];
      assert (Hv : visx (pwrite (pfence s t) (LX y) (CLoc (LW (lv a) None 0 None))) y = LW (lv a) None 0 None)
        by (unfold visx; rewrite (hx_wx N NL) by (try apply ids_ok_pfence; try apply (nl_ok_pfence N NL); done);
            by rewrite decide_True, last_snoc);
      eapply cls_lhret; [| | | rewrite Htt; reflexivity | | |];
      [intros; exact Hpre | rewrite H0; apply act_PLH | by rewrite H0 | vnorm; by rewrite Hwx
      | change (la (visx (pwrite (pfence s t) (LX y) (CLoc (LW (lv a) None 0 None))) y) = None); by rewrite Hv
      | change (lv (visx (pwrite (pfence s t) (LX y) (CLoc (LW (lv a) None 0 None))) y) = lv a); by rewrite Hv]; fail).
    (* the start of an invocation *)
    all: try (match goal with H0 : pc (th _ _) = PIdle |- _ => idtac end;
      right; left; rewrite !Htt; cbn [pc kk res activeb]; rewrite H0; split_and!; try reflexivity;
      [unfold dec; rewrite Htt; cbn [pc isfail orb]; rewrite (lastmf_eq s); [apply lastmf_nokm; by destruct Hp as (_ & ? & _)
         | by vnorm | by rewrite Htt]
      | intros He; by apply (proj1 Hp)]; fail).
    (* L30, L34: the memento *)
    all: try (match goal with H0 : pc (th _ _) = PFail _ _ |- _ => idtac end;
      left; split; [unfold same_op; by rewrite Htt |]; rewrite Htt; cbn [pc activeb]; rewrite H0; split; [reflexivity |];
      left; unfold dec, lastmf; rewrite Htt, H0; cbn [pc isfail orb kk]; vnorm;
      rewrite (hm_wm N NL) by (done || lia); rewrite decide_True by done; rewrite last_snoc; cbn;
      by rewrite bool_decide_true).
    all: try (match goal with H0 : pc (th _ _) = P34 _ _ |- _ => idtac end;
      left; split; [unfold same_op; by rewrite Htt |]; rewrite Htt; cbn [pc activeb]; rewrite H0; split; [reflexivity |];
      left; unfold dec; rewrite Htt, H0; cbn [pc isfail orb]; rewrite (lastmf_nokm s t) by (by destruct Hp as (_&_&_&?&_));
      unfold lastmf; vnorm; rewrite (hm_wm N NL) by (done || lia); rewrite decide_True by done; rewrite last_snoc; cbn;
      by rewrite andb_false_r).
    (* the commit *)
    all: try (match goal with H0 : pc (th _ _) = PCommit _ |- _ => idtac end;
      right; right; eexists; rewrite !Htt; cbn [pc kk res activeb]; split_and!; [exact H0 | reflexivity .. | |];
      [unfold dec, lastmf; rewrite Htt; cbn [pc kk isfail orb]; vnorm;
       destruct (last (hm s t)) as [w' |] eqn:E; [| done]; rewrite bool_decide_false; [done |];
       intros Hg; rewrite last_lookup in E;
       destruct (i_mmt _ _ _ Hi t _ w' H E) as [(Hg' & _) | (Hk & _)];
       [rewrite Hg' in Hg; injection Hg; lia | specialize (Hk _ Hg); lia]
      | intros (x' & i & Hx' & w' & Hw & Hg); vnorm; rewrite hx_setth, hx_tick, hx_pfence in Hw;
        assert (S (kk (th s t)) ≤ kk (th s t)) by
          (apply (inv_no_future_effect N NL s t _ Hi H); exists x', i; split; [done | by exists w']); lia]; fail).
    (* a thread crash *)
    destruct (isfail (pc (th s t))) eqn:Ef.
    - destruct (pc (th s t)) eqn:E; try discriminate Ef. pose proof (pcok_of N NL s t Hi H) as Hq.
      unfold pcok in Hq. rewrite E in Hq.
      left. split; [unfold same_op; by rewrite Htt |]. rewrite Htt. cbn [pc]. rewrite E. split; [reflexivity |].
      right; right. unfold dec. rewrite Htt, E. cbn [pc isfail crash_pc orb]. split; [done |].
      rewrite (lastmf_eq s); [| by vnorm | by rewrite Htt]. apply lastmf_nokm. by destruct Hq as (_ & _ & (_ & ? & _) & _).
    - apply (cls_pc _ _ _ (crash_pc (pc (th s t)))); [left; by rewrite Htt | by vnorm | apply act_crash_pc |].
      by rewrite isfail_crash_pc.
  Qed.
End summary.

(** ** The durable parts of the locations across a step *)
Section durable_parts.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation hm := (hm N NL).
  Notation inv := (inv N NL).
  Notation ms := (ms N NL).
  Notation eff := (eff NL).
  Notation durable := (durable NL).

  Lemma durable_dp s u k : durable s u k ↔ ∃ x a, x < NL ∧ a ∈ dp s x ∧ lg a = Some (u, k).
  Proof.
    unfold DetCasPxLin.dp. split.
    - intros (x & j & Hx & (a & Ha & Hg) & Hj). exists x, a. split_and!; [done | | done].
      apply elem_of_list_lookup. exists j. by apply lookup_take_Some.
    - intros (x & a & Hx & Ha & Hg). apply elem_of_list_lookup in Ha as [j Ha].
      apply lookup_take_Some in Ha as [Ha Hj]. exists x, j. split_and!; [done | by exists a | done].
  Qed.

  (** A word of location [x] at or above the mark: an annotated one is the
      last write; a clean one is right at the mark, after an annotated word
      under it. *)
  Lemma ann_last s x j a : inv s → x < NL → hx s x !! j = Some a → la a ≠ None → mk s (LX x) ≤ j →
    S j = length (hx s x).
  Proof.
    intros Hi Hx Ha Hla Hj. pose proof (lookup_lt_Some _ _ _ Ha) as Hlt.
    destruct (decide (S j = length (hx s x))) as [| Hne]; [done | exfalso].
    destruct (lookup_lt_is_Some_2 (hx s x) (S j)) as [w Hw]; [lia |].
    pose proof (ann_next_durable N NL s x j a w Hi Hx Ha Hla Hw). lia.
  Qed.

  Lemma clean_at s x j w : inv s → ms s → x < NL → hx s x !! j = Some w → la w = None → mk s (LX x) ≤ j →
    j = mk s (LX x) ∧ ∃ j' a, j = S j' ∧ hx s x !! j' = Some a ∧ la a ≠ None ∧ lv a = lv w.
  Proof.
    intros Hi Hm Hx Hw Hla Hj. destruct (ms_clean _ _ _ Hm x j w Hx Hw Hla) as (j' & a & -> & Ha & Hla' & Hlv).
    split; [| by exists j', a].
    destruct (decide (mk s (LX x) ≤ j')) as [Hle | Hlt]; [| lia].
    pose proof (ann_last s x j' a Hi Hx Ha Hla' Hle). apply lookup_lt_Some in Hw. lia.
  Qed.

  (** How the durable part of a location grows in a step: to a longer prefix
      of the location's history before the step. *)
  Definition dgrow (s s' : state) : Prop :=
    ∀ x, x < NL → ∃ m', mk s (LX x) ≤ m' ∧ m' ≤ length (hx s x) ∧ dp s' x = take m' (hx s x).

  Lemma lvl_take_0 l : lvl (take 0 l) = 0.
  Proof. done. Qed.

  Lemma dval_take s x : dval s x = lvl (take (mk s (LX x)) (hx s x)).
  Proof. done. Qed.

  (** No annotated word became durable at [x]: the value stays. *)
  Lemma dval_same s s' x : inv s → ms s → dgrow s s' → x < NL →
    (∀ j a, mk s (LX x) ≤ j → j < length (dp s' x) → hx s x !! j = Some a → la a = None) →
    dval s' x = dval s x.
  Proof.
    intros Hi Hm Hg Hx Hno. destruct (Hg x Hx) as (m' & Hle & Hlen & Hd).
    unfold DetCasPxLin.dval. rewrite Hd. unfold DetCasPxLin.dp.
    assert (length (take m' (hx s x)) = m') as Hl' by (rewrite take_length; lia).
    rewrite Hd, Hl' in Hno.
    destruct (decide (m' = mk s (LX x))) as [-> | Hne]; [done |].
    destruct (lookup_lt_is_Some_2 (hx s x) (mk s (LX x))) as [w Hw]; [lia |].
    pose proof (Hno (mk s (LX x)) w ltac:(lia) ltac:(lia) Hw) as Hla.
    destruct (clean_at s x _ w Hi Hm Hx Hw Hla ltac:(lia)) as [_ (j' & a & Hj & Ha & Hla' & Hlv)].
    destruct (decide (m' = S (mk s (LX x)))) as [-> | Hne'].
    - rewrite (lvl_take _ _ _ Hw), Hj, (lvl_take _ _ _ Ha). done.
    - exfalso. destruct (lookup_lt_is_Some_2 (hx s x) (S (mk s (LX x)))) as [w' Hw']; [lia |].
      pose proof (Hno (S (mk s (LX x))) w' ltac:(lia) ltac:(lia) Hw') as Hla''.
      destruct (clean_at s x _ w' Hi Hm Hx Hw' Hla'' ltac:(lia)). lia.
  Qed.

  (** An annotated word became durable at [x]: the register goes from the
      invocation's [old] to its [new]. *)
  Lemma dval_ann s s' x j a u k : inv s → ms s → dgrow s s' → x < NL →
    mk s (LX x) ≤ j → j < length (dp s' x) → hx s x !! j = Some a → la a ≠ None → lg a = Some (u, k) →
    k = kk (th s u) ∧ tr u ∧ x = ax (th s u) ∧ dval s x = ao (th s u) ∧ dval s' x = an (th s u).
  Proof.
    intros Hi Hm Hg Hx Hj Hjl Ha Hla Hlg. destruct (Hg x Hx) as (m' & Hle & Hlen & Hd).
    assert (length (dp s' x) = m') as Hl' by (rewrite Hd, take_length; lia). rewrite Hl' in Hjl.
    destruct (i_loc _ _ _ Hi x j a Hx Ha) as [[? _] | (p & u' & k' & Hla' & Hlg' & Hu & Hk & _ & Hcur & Hold)];
      [done |].
    rewrite Hlg in Hlg'. injection Hlg' as <- <-.
    assert (k = kk (th s u)) as ->.
    { destruct (decide (k < kk (th s u))) as [Hlt | Hge]; [specialize (Hold Hlt) | lia].
      pose proof (ann_last s x j a Hi Hx Ha Hla Hj). lia. }
    destruct (Hcur eq_refl) as (Hxa & Hlv & _).
    pose proof (ann_last s x j a Hi Hx Ha Hla Hj) as Hlast.
    split_and!; [done | done | done | |].
    - destruct (ms_prev _ _ _ Hm x j a u Hx Ha Hla Hlg Hu) as [H0 Hp].
      unfold DetCasPxLin.dval, DetCasPxLin.dp. destruct j as [| j'].
      + assert (mk s (LX x) = 0) as -> by lia. rewrite H0 by done. done.
      + destruct (lookup_lt_is_Some_2 (hx s x) j') as [w Hw]; [lia |].
        destruct (decide (mk s (LX x) = S j')) as [-> | Hne].
        * rewrite (lvl_take _ _ _ Hw). by apply (Hp j' w).
        * (* the word before [a] is clean, at the mark *)
          assert (la w = None) as Hlaw.
          { destruct (la w) eqn:E; [| done]. exfalso.
            pose proof (ann_last s x j' w Hi Hx Hw ltac:(congruence) ltac:(lia)). lia. }
          destruct (clean_at s x j' w Hi Hm Hx Hw Hlaw ltac:(lia)) as [Hmj (j'' & b & Hj'' & Hb & _ & Hlvb)].
          rewrite <- Hmj, Hj'', (lvl_take _ _ _ Hb), Hlvb. by apply (Hp j' w).
    - unfold DetCasPxLin.dval. rewrite Hd. assert (m' = S j) as -> by lia. by rewrite (lvl_take _ _ _ Ha).
  Qed.
End durable_parts.

(** ** The history: the model's steps with a ghost history *)

(** The model's state, the history with its linearization points, and for
    each thread whether a crash cut its operation off. *)
Record gstate := G { gs : state; gx : list (xevent cop bool); gc : nat → bool }.

Section ghost.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation hm := (hm N NL).
  Notation inv := (inv N NL).
  Notation ms := (ms N NL).
  Notation eff := (eff NL).
  Notation durable := (durable NL).
  Notation dec := (dec N NL).
  Notation aval := (aval NL).
  Notation step := (step N NL fixed2 any_run).

  Definition durb (s : state) (u k : nat) : bool :=
    existsb (λ x, existsb (λ a, bool_decide (lg a = Some (u, k))) (dp s x)) (seq 0 NL).
  Lemma durb_spec s u k : durb s u k = true ↔ durable s u k.
  Proof.
    rewrite durable_dp. unfold durb. rewrite existsb_exists. split.
    - intros (x & Hx%elem_of_list_In%elem_of_seq & Ha). apply existsb_exists in Ha as (a & Ha%elem_of_list_In & Hg).
      apply bool_decide_eq_true in Hg. exists x, a. split_and!; [lia | done | done].
    - intros (x & a & Hx & Ha & Hg). exists x. split; [apply elem_of_list_In, elem_of_seq; lia |].
      apply existsb_exists. exists a. split; [by apply elem_of_list_In | by apply bool_decide_eq_true].
  Qed.

  (** The points of the invocations whose first plain CAS became durable in
      the step (they took effect, and no crash can undo it). *)
  Definition spg (s s' : state) (u : nat) : option (opid * cop * bool) :=
    if durb s' u (kk (th s u)) && negb (durb s u (kk (th s u)))
    then Some (oid u (kk (th s u)), opof (th s u), true) else None.
  Definition spl (s s' : state) : list (opid * cop * bool) := omap (spg s s') (seq 1 N).
  Definition sp (s s' : state) : list (xevent cop bool) := map to_xl (spl s s').

  (** The events of thread [u]'s step: its invocation, its decision to fail
      (a point), its return ([c u]: after a crash, a [recover]). *)
  Definition evu (s s' : state) (c : nat → bool) (u : nat) : list (xevent cop bool) :=
    (if negb (activeb (pc (th s u))) && activeb (pc (th s' u))
     then [XE (Invoke (oid u (kk (th s' u))) u (opof (th s' u)))] else []) ++
    (if negb (dec s u) && dec s' u then [XL (oid u (kk (th s' u))) (opof (th s' u)) false] else []) ++
    (if bool_decide (kk (th s' u) = S (kk (th s u)))
     then [XE ((if c u then Recover else Return) (oid u (kk (th s u))) (default false (last (res (th s' u)))))]
     else []).
  Definition ev (s s' : state) (c : nat → bool) : list (xevent cop bool) := mjoin (evu s s' c <$> seq 1 N).

  (** A failure point whose decision the step dropped (a crash lost the
      failure memento, or came before it): the invocation will run again. *)
  Definition stale (s' : state) (e : xevent cop bool) : bool :=
    match e with
    | XL i _ false => existsb (λ u, bool_decide (i = oid u (kk (th s' u))) && negb (dec s' u)) (seq 1 N)
    | _ => false
    end.
  Definition rm (s' : state) (l : list (xevent cop bool)) : list (xevent cop bool) :=
    filter (λ e, stale s' e = false) l.

  (** The steps: each step of the model ([g_step]), or a full crash with its
      [crash] event ([g_crash]; [g_step] also takes a crash, silently). *)
  Inductive gstep : gstate → gstate → Prop :=
  | g_step g s' : step (gs g) s' →
      gstep g (G s' (rm s' (gx g ++ sp (gs g) s' ++ ev (gs g) s' (gc g)))
                 (λ u, gc g u && activeb (pc (th s' u))))
  | g_crash g keep f : p_crash_ok (pm (gs g)) keep →
      (∀ u, tr u → f u = reinit N NL (gs g) keep u) → (∀ u, ¬ tr u → f u = th (gs g) u) →
      gstep g (G (St (crash_pm (pm (gs g)) keep) (wt (gs g)) (clock (gs g)) f)
                 (rm (St (crash_pm (pm (gs g)) keep) (wt (gs g)) (clock (gs g)) f)
                    (gx g ++ sp (gs g) (St (crash_pm (pm (gs g)) keep) (wt (gs g)) (clock (gs g)) f) ++ [XE Crash]))
                 (λ u, activeb (pc (f u)))).

  Definition ginit : gstate := G (init N NL) [] (λ _, false).
  Definition greach (g : gstate) : Prop := rtc gstep ginit g.

  (** *** Removing dropped failure points *)
  Lemma erase_rm s' l : erase (rm s' l) = erase l.
  Proof.
    induction l as [| e l IH]; [done |]. unfold rm. rewrite filter_cons. fold (rm s' l).
    case_decide as Hs; destruct e as [e | i op v]; simpl; rewrite ?IH; done.
  Qed.

  Lemma elem_of_rm s' l e : e ∈ rm s' l ↔ e ∈ l ∧ stale s' e = false.
  Proof. unfold rm. rewrite elem_of_list_filter. tauto. Qed.

  Lemma stale_spec s' i op : stale s' (XL i op false) = true ↔ ∃ u, tr u ∧ i = oid u (kk (th s' u)) ∧ dec s' u = false.
  Proof.
    simpl. rewrite existsb_exists. split.
    - intros (u & Hu%elem_of_list_In%elem_of_seq & Hb). apply andb_true_iff in Hb as [Hi Hd].
      apply bool_decide_eq_true in Hi. exists u. split_and!; [unfold DetCasPx.tr; lia | done | by destruct (dec s' u)].
    - intros (u & Hu & Hi & Hd). exists u. split; [apply elem_of_list_In, elem_of_seq; unfold DetCasPx.tr in Hu; lia |].
      rewrite Hd. apply andb_true_iff. split; [by apply bool_decide_eq_true | done].
  Qed.

  Lemma prefix_ok_rm s' l : prefix_ok point_ok l →
    (∀ i op, stale s' (XL i op false) = true → ∀ v, XE (Return i v) ∉ l ∧ XE (Recover i v) ∉ l) →
    prefix_ok point_ok (rm s' l).
  Proof.
    intros Hok Hst m1 x m2 Hm. unfold rm in Hm.
    destruct (filter_eq_app_cons _ _ _ _ _ Hm) as (l1 & l2 & El & <- & _).
    assert (x ∈ rm s' l) as Hx by (unfold rm; rewrite Hm; apply elem_of_app; right; by left).
    apply elem_of_rm in Hx as [_ Hxs].
    pose proof (Hok l1 x l2 El) as Hp. fold (rm s' l1).
    destruct x as [[i t op | i v | | i v] | i op v]; simpl in Hp |- *; try done.
    - destruct Hp as [op Hin]. exists op. apply elem_of_rm. split; [done |].
      destruct v; [done |]. destruct (stale s' (XL i op false)) eqn:E; [exfalso | done].
      apply (proj1 (Hst i op E false)). rewrite El. apply elem_of_app. right. by left.
    - destruct Hp as [op Hin]. exists op. apply elem_of_rm. split; [done |].
      destruct v; [done |]. destruct (stale s' (XL i op false)) eqn:E; [exfalso | done].
      apply (proj2 (Hst i op E false)). rewrite El. apply elem_of_app. right. by left.
    - destruct Hp as [[t Hinv] Hno]. split.
      + exists t. by rewrite erase_rm.
      + intros op' v' Hin. apply (Hno op' v'). by apply elem_of_rm in Hin as [? _].
  Qed.

  Lemma cfin_rm x σ σ' s' l : cfin σ (locx x l) = Some σ' → cfin σ (locx x (rm s' l)) = Some σ'.
  Proof.
    apply cfin_filter.
    - intros i op v Hs. destruct v; [done |]. done.
    - intros e. done.
  Qed.
End ghost.

Lemma omap_omap {A B C} (f : A → option B) (g : B → option C) (l : list A) :
  omap g (omap f l) = omap (λ a, f a ≫= g) l.
Proof.
  induction l as [| a l IH]; [done |]. simpl. destruct (f a) as [b |]; simpl; [destruct (g b); simpl; [f_equal |] |];
    exact IH.
Qed.

Lemma omap_none {A B} (h : A → option B) (l : list A) : (∀ a, a ∈ l → h a = None) → omap h l = [].
Proof. induction l as [| a l IH]; intros Hn; [done |]. simpl. rewrite Hn by (by left). apply IH. intros ??. apply Hn. by right. Qed.

(** A list map with at most one image. *)
Lemma omap_single {A B} (h : A → option B) (l : list A) a b :
  NoDup l → a ∈ l → h a = Some b → (∀ a', a' ∈ l → h a' ≠ None → a' = a) → omap h l = [b].
Proof.
  induction l as [| c l IH]; intros Hnd Ha Hb Hu; [by apply elem_of_nil in Ha |].
  apply NoDup_cons in Hnd as [Hc Hnd]. simpl. destruct (h c) as [b' |] eqn:E.
  - assert (c = a) as <- by (apply Hu; [by left | congruence]). rewrite Hb in E. injection E as ->.
    f_equal. apply omap_none. intros a' Ha'. destruct (h a') eqn:E'; [| done]. exfalso.
    assert (a' = c) as -> by (apply Hu; [by right | congruence]). done.
  - apply IH; [done | | done |].
    + apply elem_of_cons in Ha as [-> | ?]; [congruence | done].
    + intros a' Ha' Hn. apply Hu; [by right | done].
Qed.

Lemma locx_map_to_xl x (ps : list (opid * cop * bool)) :
  locx x (map to_xl ps) = omap (λ p, if decide (p.1.2.1 = x) then Some (p.1.2.2, p.2) else None) ps.
Proof.
  induction ps as [| [[i [y on]] v] ps IH]; [done |]. cbn [map]. rewrite locx_cons, IH.
  unfold to_xl. cbn [fst snd]. rewrite locx_XL. cbn [fst snd]. simpl. by case_decide.
Qed.

Section facts.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation hm := (hm N NL).
  Notation inv := (inv N NL).
  Notation ms := (ms N NL).
  Notation eff := (eff NL).
  Notation durable := (durable NL).
  Notation dec := (dec N NL).
  Notation aval := (aval NL).
  Notation dgrow := (dgrow NL).
  Notation sp := (sp N NL).
  Notation spl := (spl N NL).

  Lemma erase_sp s s' : erase (sp s s') = [].
  Proof. apply erase_to_xl. Qed.

  Lemma elem_of_spl s s' p : p ∈ spl s s' ↔ ∃ u, tr u ∧ p = (oid u (kk (th s u)), opof (th s u), true) ∧
    durable s' u (kk (th s u)) ∧ ¬ durable s u (kk (th s u)).
  Proof.
    unfold spl. rewrite elem_of_list_omap. setoid_rewrite elem_of_seq. unfold spg. split.
    - intros (u & Hu & Hg). destruct (durb NL s' u _ && negb (durb NL s u _)) eqn:E; [| done]. injection Hg as <-.
      apply andb_true_iff in E as [E1 E2]. exists u. split_and!; [unfold DetCasPx.tr; lia | done | by apply durb_spec |].
      intros Hd. apply durb_spec in Hd. by rewrite Hd in E2.
    - intros (u & Hu & -> & H1 & H2). exists u. split; [unfold DetCasPx.tr in Hu; lia |].
      apply durb_spec in H1. rewrite H1. destruct (durb NL s u _) eqn:E; [apply durb_spec in E; done | done].
  Qed.

  Lemma elem_of_sp s s' e : e ∈ sp s s' ↔ ∃ i op v, e = XL i op v ∧ (i, op, v) ∈ spl s s'.
  Proof.
    unfold sp. induction (spl s s') as [| [[i op] v] ps IH]; simpl.
    - split; [by intros ?%elem_of_nil | intros (? & ? & ? & _ & ?%elem_of_nil); done].
    - rewrite elem_of_cons, IH. setoid_rewrite elem_of_cons. unfold to_xl. simpl. naive_solver.
  Qed.

  Lemma spl_nodup s s' : NoDup ((spl s s').*1.*1).
  Proof.
    unfold spl. assert (NoDup (seq 1 N)) as Hnd by apply NoDup_seq. revert Hnd.
    generalize (seq 1 N). intros l Hnd. induction l as [| u l IH]; [constructor |].
    apply NoDup_cons in Hnd as [Hu Hnd]. simpl. unfold spg at 1.
    destruct (durb NL s' u _ && negb (durb NL s u _)); simpl; [| by apply IH].
    constructor; [| by apply IH]. intros Hin. apply elem_of_list_fmap in Hin as ([i' op'] & Hi & Hin).
    apply elem_of_list_fmap in Hin as ([[i'' op''] v''] & Hi' & Hin). simpl in *. simplify_eq.
    apply elem_of_list_omap in Hin as (u' & Hu' & Hg). unfold spg in Hg.
    destruct (_ && _); [| done]. injection Hg as Hid _ _. apply oid_inj in Hid as [-> _]. done.
  Qed.

  Lemma durable_mono s s' u k : dgrow s s' → durable s u k → durable s' u k.
  Proof.
    intros Hg (x & a & Hx & Ha & Hl)%durable_dp. apply durable_dp. exists x, a. split_and!; [done | | done].
    destruct (Hg x Hx) as (m' & Hle & _ & Hd). rewrite Hd. unfold DetCasPxLin.dp in Ha.
    apply elem_of_list_lookup in Ha as [j Ha]. apply lookup_take_Some in Ha as [Ha Hj].
    apply elem_of_list_lookup. exists j. apply lookup_take_Some. split; [done | lia].
  Qed.

  (** A first plain CAS that became durable in the step: a word at or
      above the mark before it, below it after. *)
  Lemma newly_at s s' u k : dgrow s s' → durable s' u k → ¬ durable s u k →
    ∃ x j a, x < NL ∧ mk s (LX x) ≤ j ∧ j < length (dp s' x) ∧ hx s x !! j = Some a ∧ lg a = Some (u, k).
  Proof.
    intros Hg (x & a & Hx & Ha & Hl)%durable_dp Hn. destruct (Hg x Hx) as (m' & Hle & Hlen & Hd).
    apply elem_of_list_lookup in Ha as [j Ha]. pose proof (lookup_lt_Some _ _ _ Ha) as Hjl.
    rewrite Hd in Ha. apply lookup_take_Some in Ha as [Ha Hj].
    exists x, j, a. split_and!; try done.
    destruct (decide (mk s (LX x) ≤ j)) as [| Hlt]; [done | exfalso]. apply Hn, durable_dp.
    exists x, a. split_and!; [done | | done]. apply elem_of_list_lookup. exists j. apply lookup_take_Some. split; [done | lia].
  Qed.

  Lemma dec_facts s u : inv s → tr u → dec s u = true →
    ¬ eff s u (kk (th s u)) ∧ activeb (pc (th s u)) = true.
  Proof.
    intros Hi Hu Hd. pose proof (pcok_of N NL s u Hi Hu) as Hp. unfold pcok in Hp.
    unfold DetCasPxLin.dec in Hd. apply orb_true_iff in Hd as [Hf | Hl].
    - destruct (pc (th s u)) eqn:E; try discriminate Hf. destruct Hp as (_ & _ & (? & _) & _). done.
    - unfold lastmf in Hl. destruct (last (hm s u)) as [w |] eqn:E; [| done].
      apply andb_true_iff in Hl as [Hg Hf]. apply bool_decide_eq_true in Hg.
      pose proof E as E'. rewrite last_lookup in E'.
      destruct (i_mmt _ _ _ Hi u _ w Hu E') as [(_ & _ & _ & _ & Hne) | (Hk & _)]; [| specialize (Hk _ Hg); lia].
      split; [by apply Hne |].
      assert (nokm N NL s u → False) as Hnk.
      { intros Hn. apply (Hn w); [| done]. by eapply elem_of_list_lookup_2. }
      destruct (pc (th s u)) as [| | c y h | | | | | | | | |]; try done; [exfalso; apply Hnk, Hp |].
      destruct c; try done. exfalso. apply Hnk, Hp.
  Qed.

  Lemma durable_act s u : inv s → tr u → durable s u (kk (th s u)) → activeb (pc (th s u)) = true.
  Proof.
    intros Hi Hu (x & j & Hx & Ht & _). pose proof (pcok_of N NL s u Hi Hu) as Hp. unfold pcok in Hp.
    assert (idleok N NL s u → False) as Hn by (intros [He _]; apply He; by exists x, j).
    destruct (activeb (pc (th s u))) eqn:E; [done | exfalso]. apply Hn.
    destruct (pc (th s u)) as [| | c y h | | | | | | | | |]; try discriminate E; [exact Hp |].
    destruct c; try discriminate E. apply Hp.
  Qed.
End facts.

(** ** The durable part grows; the points of a step run the registers *)
Section grow.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation hm := (hm N NL).
  Notation inv := (inv N NL).
  Notation ms := (ms N NL).
  Notation eff := (eff NL).
  Notation durable := (durable NL).
  Notation dec := (dec N NL).
  Notation aval := (aval NL).
  Notation dgrow := (dgrow NL).
  Notation sp := (sp N NL).
  Notation spl := (spl N NL).

  Lemma nc_dgrow s s' t : nc N NL s s' t → dgrow s s'.
  Proof.
    intros Hn x Hx. destruct (nc_mk _ _ _ _ _ Hn x Hx) as [H1 H2]. exists (mk s' (LX x)). split_and!; [done | done |].
    unfold dp. destruct (nc_hx _ _ _ _ _ Hn x Hx) as [k Hk]. rewrite Hk. by rewrite take_app_le.
  Qed.

  Definition cst (s : state) (keep : nat → nat) (f : nat → tstate) : state :=
    St (crash_pm (pm s) keep) (wt s) (clock s) f.

  Lemma crash_hx s keep f x : hx (cst s keep f) x = take (keep (LX x)) (hx s x).
  Proof. unfold hx, hc, ids, cst. cbn [pm crash_pm p_mem]. rewrite crash_hist. by rewrite !fmap_take. Qed.
  Lemma crash_hm s keep f u : hm (cst s keep f) u = take (keep (LMl N NL u)) (hm s u).
  Proof. unfold DetCasPx.hm, hc, ids, cst. cbn [pm crash_pm p_mem]. rewrite crash_hist. by rewrite !fmap_take. Qed.

  Lemma crash_dgrow s keep f : inv s → p_crash_ok (pm s) keep → dgrow s (cst s keep f).
  Proof.
    intros Hi Hok x Hx. pose proof (i_nl _ _ _ Hi) as Hnl. unfold nl_ok in Hnl.
    assert (LX x < length (m_lines (p_mem (pm s)))) as HL by (rewrite Hnl; by apply LX_lt).
    pose proof (Hok (LX x) HL) as [Hk1 Hk2].
    exists (keep (LX x)). split_and!.
    - unfold mk. lia.
    - unfold hx, hc, ids. rewrite !fmap_length. lia.
    - unfold dp. rewrite crash_hx. unfold mk, cst. cbn [pm crash_pm p_mem]. rewrite crash_mark by done.
      by rewrite take_take, Nat.min_id.
  Qed.

  Lemma lg_ann s x j a u k : inv s → x < NL → hx s x !! j = Some a → lg a = Some (u, k) → la a ≠ None.
  Proof.
    intros Hi Hx Ha Hg. destruct (i_loc _ _ _ Hi x j a Hx Ha) as [[_ Hg'] | (p & u' & k' & Hla & _)];
      [congruence | by rewrite Hla].
  Qed.

  (** The points a step adds, location by location, take the register from
      its value before the step to its value after it. *)
  Lemma sp_run s s' x : inv s → ms s → dgrow s s' → cfin (aval s x) (locx x (sp s s')) = Some (aval s' x).
  Proof.
    intros Hi Hm Hg. unfold sp. rewrite locx_map_to_xl. unfold spl. rewrite omap_omap.
    set (h := λ u, spg NL s s' u ≫= λ p : opid * cop * bool,
                     if decide (p.1.2.1 = x) then Some (p.1.2.2, p.2) else None).
    assert (Hh : ∀ u, h u ≠ None → durable s' u (kk (th s u)) ∧ ¬ durable s u (kk (th s u)) ∧
                   ax (th s u) = x ∧ h u = Some ((ao (th s u), an (th s u)), true)).
    { intros u. unfold h, spg. destruct (durb NL s' u _ && negb (durb NL s u _)) eqn:E; simpl; [| done].
      case_decide; [| done]. intros _. apply andb_true_iff in E as [E1 E2]. split_and!; [by apply durb_spec | | done | done].
      intros Hd. apply durb_spec in Hd. by rewrite Hd in E2. }
    (* the point of an invocation that became durable is on its location *)
    assert (Hat : ∀ u, durable s' u (kk (th s u)) → ¬ durable s u (kk (th s u)) →
              ∃ j a, ax (th s u) < NL ∧ mk s (LX (ax (th s u))) ≤ j ∧ j < length (dp s' (ax (th s u))) ∧
                hx s (ax (th s u)) !! j = Some a ∧ la a ≠ None ∧ lg a = Some (u, kk (th s u)) ∧ tr u ∧
                dval s (ax (th s u)) = ao (th s u) ∧ dval s' (ax (th s u)) = an (th s u)).
    { intros u Hd Hnd. destruct (newly_at NL s s' u _ Hg Hd Hnd) as (x' & j & a & Hx' & Hj & Hjl & Ha & Hla).
      pose proof (lg_ann s x' j a u _ Hi Hx' Ha Hla) as Hann.
      destruct (dval_ann N NL s s' x' j a u _ Hi Hm Hg Hx' Hj Hjl Ha Hann Hla) as (_ & Hu & Hxa & Hv & Hv').
      subst x'. exists j, a. done. }
    destruct (decide (x < NL)) as [Hx | Hx].
    2: { unfold aval. rewrite !decide_False by done. rewrite omap_none; [done |].
         intros u _. destruct (h u) eqn:E; [exfalso | done].
         destruct (Hh u ltac:(congruence)) as (H1 & H2 & Hax & _).
         destruct (Hat u H1 H2) as (j & a & Hxa & _). lia. }
    unfold aval. rewrite !decide_True by done.
    (* the last word of the location, if annotated and newly durable *)
    destruct (hx s x !! pred (length (hx s x))) as [a |] eqn:Ea;
      [destruct (decide (la a ≠ None ∧ mk s (LX x) ≤ pred (length (hx s x)) ∧
                          pred (length (hx s x)) < length (dp s' x))) as [(Hla & Hj & Hjl) | Hno] |].
    - destruct (la a) as [[p u0] |] eqn:Hla'; [| done].
      destruct (i_loc _ _ _ Hi x _ a Hx Ea) as [[? _] | (p' & u' & k' & Hla'' & Hlg & _)]; [congruence |].
      rewrite Hla' in Hla''. injection Hla'' as <- <-.
      destruct (dval_ann N NL s s' x _ a u0 k' Hi Hm Hg Hx Hj Hjl Ea ltac:(congruence) Hlg) as (-> & Hu & Hxa & Hv & Hv').
      assert (durable s' u0 (kk (th s u0))) as Hd'.
      { apply durable_dp. destruct (Hg x Hx) as (m' & _ & _ & Hd). exists x, a. split_and!; [done | | done].
        rewrite Hd. apply elem_of_list_lookup. exists (pred (length (hx s x))). apply lookup_take_Some.
        split; [done |]. rewrite Hd, take_length in Hjl. lia. }
      assert (¬ durable s u0 (kk (th s u0))) as Hnd.
      { intros (x' & j' & Hx' & Ht' & Hj').
        destruct (i_once _ _ _ Hi u0 _ x _ x' j' Hx Hx' ltac:(by exists a) Ht') as [<- <-]. lia. }
      rewrite (omap_single h (seq 1 N) u0 ((ao (th s u0), an (th s u0)), true)).
      + simpl. rewrite Hv, decide_True by done. by rewrite Hv'.
      + apply NoDup_seq.
      + apply elem_of_seq. unfold DetCasPx.tr in Hu. lia.
      + unfold h, spg. apply durb_spec in Hd'. rewrite Hd'.
        destruct (durb NL s u0 _) eqn:E; [apply durb_spec in E; done |]. simpl. rewrite decide_True by done. done.
      + intros u _ Hn. destruct (Hh u Hn) as (H1 & H2 & Hax & _).
        destruct (Hat u H1 H2) as (j & b & _ & Hjb & Hjlb & Hb & Hlab & Hlgb & _). rewrite Hax in *.
        pose proof (ann_last N NL s x j b Hi Hx Hb Hlab Hjb) as Hl1.
        assert (j = pred (length (hx s x))) as -> by lia. rewrite Ea in Hb. injection Hb as <-.
        rewrite Hlg in Hlgb. by injection Hlgb.
    - (* no annotated word became durable at [x] *)
      assert (Hcl : ∀ j b, mk s (LX x) ≤ j → j < length (dp s' x) → hx s x !! j = Some b → la b = None).
      { intros j b Hj Hjl Hb. destruct (la b) eqn:E; [exfalso | done].
        pose proof (ann_last N NL s x j b Hi Hx Hb ltac:(congruence) Hj) as Hl1.
        assert (j = pred (length (hx s x))) as -> by lia. rewrite Ea in Hb. injection Hb as <-.
        apply Hno. split_and!; [congruence | done | done]. }
      rewrite (dval_same N NL s s' x Hi Hm Hg Hx Hcl). rewrite omap_none; [done |].
      intros u _. destruct (h u) eqn:E; [exfalso | done].
      destruct (Hh u ltac:(congruence)) as (H1 & H2 & Hax & _).
      destruct (Hat u H1 H2) as (j & b & _ & Hjb & Hjlb & Hb & Hlab & _). rewrite Hax in *.
      apply Hlab. by apply (Hcl j b).
    - (* the location has no write *)
      assert (Hcl : ∀ j b, mk s (LX x) ≤ j → j < length (dp s' x) → hx s x !! j = Some b → la b = None).
      { intros j b _ _ Hb. exfalso. apply lookup_ge_None in Ea. pose proof (lookup_lt_Some _ _ _ Hb). lia. }
      rewrite (dval_same N NL s s' x Hi Hm Hg Hx Hcl). rewrite omap_none; [done |].
      intros u _. destruct (h u) eqn:E; [exfalso | done].
      destruct (Hh u ltac:(congruence)) as (H1 & H2 & Hax & _).
      destruct (Hat u H1 H2) as (j & b & _ & Hjb & Hjlb & Hb & Hlab & _). rewrite Hax in *.
      apply Hlab. by apply (Hcl j b).
  Qed.
End grow.

(* [mjoin_nil], [mjoin_single]: Core/History.v. *)

Section ginv.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation hm := (hm N NL).
  Notation inv := (inv N NL).
  Notation ms := (ms N NL).
  Notation eff := (eff NL).
  Notation durable := (durable NL).
  Notation dec := (dec N NL).
  Notation aval := (aval NL).
  Notation dgrow := (dgrow NL).
  Notation sp := (sp N NL).
  Notation spl := (spl N NL).
  Notation ev := (ev N NL).
  Notation evu := (evu N NL).
  Notation rm := (rm N NL).
  Notation stale := (stale N NL).
  Notation step := (step N NL fixed2 any_run).

  (** The invariant: the history with its points is a witness of durable
      linearizability (points well placed, running the registers to their
      durable values), well formed; each thread's current invocation is
      invoked exactly when the thread is inside it, pending or cut off as
      [gc] says, and has a success point iff its first plain CAS is durable,
      a failure point iff it decided to fail. *)
  Record ginv (g : gstate) : Prop := {
    g_r : reachable2 N NL (gs g);
    g_ok : prefix_ok point_ok (gx g);
    g_run : ∀ x, cfin 0 (locx x (gx g)) = Some (aval (gs g) x);
    g_wf : wf (erase (gx g));
    g_ids : ∀ i, invoked (erase (gx g)) i → ∃ u k, tr u ∧ k ≤ kk (th (gs g) u) ∧ i = oid u k;
    g_old : ∀ u k, tr u → k < kk (th (gs g) u) → finished (erase (gx g)) (oid u k);
    g_act : ∀ u, tr u → activeb (pc (th (gs g) u)) = true →
      Invoke (oid u (kk (th (gs g) u))) u (opof (th (gs g) u)) ∈ erase (gx g) ∧
      ¬ finished (erase (gx g)) (oid u (kk (th (gs g) u))) ∧
      (gc g u = false → pending_on (erase (gx g)) u (oid u (kk (th (gs g) u)))) ∧
      (gc g u = true → cut_off (erase (gx g)) (oid u (kk (th (gs g) u))));
    g_idle : ∀ u, tr u → activeb (pc (th (gs g) u)) = false →
      ¬ invoked (erase (gx g)) (oid u (kk (th (gs g) u))) ∧ gc g u = false;
    g_pts : ∀ u (op : cop) (v : bool), tr u → XL (oid u (kk (th (gs g) u))) op v ∈ gx g ↔
      op = opof (th (gs g) u) ∧ (if v then durable (gs g) u (kk (th (gs g) u)) else dec (gs g) u = true);
    g_pend : ∀ u j, pending_on (erase (gx g)) u j →
      tr u ∧ activeb (pc (th (gs g) u)) = true ∧ j = oid u (kk (th (gs g) u)) ∧ gc g u = false;
  }.

  Lemma hx_init x : hx (init N NL) x = [].
  Proof. unfold hx, hc. by rewrite ids_init. Qed.
  Lemma hm_init u : hm (init N NL) u = [].
  Proof. unfold DetCasPx.hm, hc. by rewrite ids_init. Qed.

  Lemma ginv_init : ginv (ginit N NL).
  Proof.
    split; cbn [gs gx gc ginit].
    - apply rtc_refl.
    - apply prefix_ok_nil.
    - intros x. unfold aval, dval, dp. rewrite hx_init, take_nil. by case_decide.
    - apply wf_nil.
    - intros i (? & ? & []%elem_of_nil).
    - intros u k _ Hk. cbn in Hk. lia.
    - intros u _ Hact. done.
    - intros u _ _. split; [intros (? & ? & []%elem_of_nil) | done].
    - intros u op v _. split; [by intros ?%elem_of_nil |]. intros [_ Hv]. destruct v.
      + destruct Hv as (x & j & _ & (a & Ha & _) & _). by rewrite hx_init in Ha.
      + unfold dec, lastmf in Hv. rewrite hm_init in Hv. done.
    - intros u j (h1 & h2 & op & E & _). by destruct h1.
  Qed.
End ginv.

Section pres.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation hm := (hm N NL).
  Notation inv := (inv N NL).
  Notation ms := (ms N NL).
  Notation eff := (eff NL).
  Notation durable := (durable NL).
  Notation dec := (dec N NL).
  Notation aval := (aval NL).
  Notation dgrow := (dgrow NL).
  Notation sp := (sp N NL).
  Notation spl := (spl N NL).
  Notation ev := (ev N NL).
  Notation evu := (evu N NL).
  Notation rm := (rm N NL).
  Notation stale := (stale N NL).
  Notation step := (step N NL fixed2 any_run).
  Notation ginv := (ginv N NL).


  Lemma stale_u s' u op : tr u → stale s' (XL (oid u (kk (th s' u))) op false) = negb (dec s' u).
  Proof.
    intros Hu. destruct (stale s' _) eqn:E.
    - apply stale_spec in E as (u' & Hu' & Hi & Hd). apply oid_inj in Hi as [<- _]. by rewrite Hd.
    - destruct (dec s' u) eqn:Ed; [done | exfalso]. assert (stale s' (XL (oid u (kk (th s' u))) op false) = true) as E'.
      { apply stale_spec. by exists u. }
      congruence.
  Qed.

  Lemma act_ax s u : inv s → tr u → activeb (pc (th s u)) = true → ax (th s u) < NL.
  Proof.
    intros Hi Hu Ha. pose proof (pcok_of N NL s u Hi Hu) as Hp. unfold pcok in Hp.
    destruct (pc (th s u)) as [| | c y h | | | | | | | [|] | |]; try discriminate Ha;
      try (destruct c; try discriminate Ha); unfold lhpre, pre26, failok in Hp;
      repeat match goal with H : _ ∧ _ |- _ => destruct H end; subst; try assumption.
  Qed.

  Lemma eff_act s u : inv s → tr u → eff s u (kk (th s u)) → activeb (pc (th s u)) = true.
  Proof.
    intros Hi Hu He. pose proof (pcok_of N NL s u Hi Hu) as Hp. unfold pcok in Hp.
    assert (idleok N NL s u → False) as Hn by (intros [Hne _]; by apply Hne).
    destruct (activeb (pc (th s u))) eqn:E; [done | exfalso]. apply Hn.
    destruct (pc (th s u)) as [| | c y h | | | | | | | | |]; try discriminate E; [exact Hp |].
    destruct c; try discriminate E. apply Hp.
  Qed.

  Lemma commit_point s t r : inv s → tr t → pc (th s t) = PCommit r →
    if r then durable s t (kk (th s t)) else dec s t = true.
  Proof.
    intros Hi Ht Hpc. pose proof (pcok_of N NL s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp. destruct r.
    - destruct Hp as (_ & [_ (w & Hl & Hg & Hf)] & _). rewrite last_lookup in Hl.
      destruct (i_mmt _ _ _ Hi t _ w Ht Hl) as [(_ & _ & _ & Hd & _) | (Hk & _)]; [by apply Hd | specialize (Hk _ Hg); lia].
    - destruct Hp as (_ & (w & Hl & Hg & Hf) & _). unfold dec, lastmf. rewrite Hl, Hf, bool_decide_true by done.
      apply orb_true_r.
  Qed.

  (** The points of the invocations a step starts, decides, or keeps. *)
  Lemma pts_keep s s' l E u : inv s → dgrow s s' → tr u →
    kk (th s' u) = kk (th s u) → opof (th s' u) = opof (th s u) →
    (∀ op (v : bool), XL (oid u (kk (th s u))) op v ∈ l ↔ op = opof (th s u) ∧ (if v then durable s u (kk (th s u)) else dec s u = true)) →
    (∀ op v, XL (oid u (kk (th s u))) op v ∈ E ↔ v = false ∧ op = opof (th s u) ∧ dec s u = false ∧ dec s' u = true) →
    ∀ op (v : bool), XL (oid u (kk (th s' u))) op v ∈ rm s' (l ++ sp s s' ++ E) ↔
      op = opof (th s' u) ∧ (if v then durable s' u (kk (th s' u)) else dec s' u = true).
  Proof.
    intros Hi Hg Hu Hk Ho Hl HE op v. rewrite elem_of_rm, !elem_of_app, Hk, Ho, elem_of_sp.
    assert (Hsp : (∃ i op' v', XL (oid u (kk (th s u))) op v = XL i op' v' ∧ (i, op', v') ∈ spl s s') ↔
              v = true ∧ op = opof (th s u) ∧ durable s' u (kk (th s u)) ∧ ¬ durable s u (kk (th s u))).
    { split.
      - intros (i & op' & v' & [= <- <- <-] & Hin). apply elem_of_spl in Hin as (u' & Hu' & [= Hid -> ->] & Hd & Hnd).
        apply oid_inj in Hid as [<- _]. done.
      - intros (-> & -> & Hd & Hnd). exists (oid u (kk (th s u))), (opof (th s u)), true. split; [done |].
        apply elem_of_spl. by exists u. }
    rewrite Hsp, Hl, HE. destruct v.
    - cbn [stale]. split.
      + intros [[[-> Hd] | [(_ & -> & Hd & _) | (? & _)]] _]; [| by split | done].
        split; [done | by apply (durable_mono NL s s')].
      + intros [-> Hd]. split; [| done]. destruct (durb NL s u (kk (th s u))) eqn:Ed.
        * left. split; [done | by apply durb_spec].
        * right; left. split_and!; [done | done | done |]. intros Hd'. apply durb_spec in Hd'. congruence.
    - rewrite <- Hk, (stale_u s' u op Hu), Hk. split.
      + intros [[[-> Hd] | [(? & _) | (_ & -> & _ & Hd')]] Hs].
        * split; [done |]. by destruct (dec s' u).
        * done.
        * done.
      + intros [-> Hd']. split; [| by rewrite Hd'].
        destruct (dec s u) eqn:Ed; [left; done | right; right; done].
  Qed.

  (** The stale failure points belong to invocations that have not
      finished. *)
  Lemma stale_ok s' (l E : list (xevent cop bool)) : (∀ u, tr u → ¬ finished (erase l ++ erase E) (oid u (kk (th s' u)))) →
    ∀ i op, stale s' (XL i op false) = true → ∀ v, XE (Return i v) ∉ l ++ E ∧ XE (Recover i v) ∉ l ++ E.
  Proof.
    intros Hnf i op Hs v. apply stale_spec in Hs as (u & Hu & -> & _). specialize (Hnf u Hu).
    split; intros Hin; apply Hnf; rewrite <- erase_app; apply elem_of_erase in Hin; [left | right]; by exists v.
  Qed.

  (** The history of the points before the step and those it makes durable. *)
  Lemma ok_sp g s' : ginv g → reachable2 N NL s' → dgrow (gs g) s' → prefix_ok point_ok (gx g ++ sp (gs g) s').
  Proof.
    intros Hg Hr' Hgr. pose proof (tw_reachable_inv N NL _ (g_r _ _ _ Hg)) as Hi.
    apply prefix_ok_to_xl; [apply (g_ok _ _ _ Hg) | |].
    - intros p (u & Hu & -> & Hd & Hnd)%elem_of_spl. cbn [fst snd].
      destruct (newly_at NL _ _ u _ Hgr Hd Hnd) as (x & j & a & Hx & _ & _ & Ha & Hla).
      assert (activeb (pc (th (gs g) u)) = true) as Hact by (apply (eff_act _ u Hi Hu); exists x, j; split; [done | by exists a]).
      exists u. apply (g_act _ _ _ Hg u Hu Hact).
    - rewrite !fmap_app. apply NoDup_app. split_and!; [by apply points_nodup, (g_ok _ _ _ Hg) | | apply spl_nodup].
      intros i Hi1 Hi2. apply elem_of_point_ids in Hi1 as (op & v & Hin).
      apply elem_of_list_fmap in Hi2 as ([i' op'] & Hi' & Hi2). apply elem_of_list_fmap in Hi2 as ([[i'' op''] v''] & Hi'' & Hin2).
      simpl in *. simplify_eq. apply elem_of_spl in Hin2 as (u & Hu & [= -> -> ->] & Hd & Hnd).
      apply (g_pts _ _ _ Hg u op v Hu) in Hin as [_ Hv]. destruct v; [done |].
      destruct (dec_facts N NL _ u Hi Hu Hv) as [Hne _]. apply Hne.
      destruct (newly_at NL _ _ u _ Hgr Hd Hnd) as (x & j & a & Hx & _ & _ & Ha & Hla).
      exists x, j. split; [done | by exists a].
  Qed.

  Lemma run_sp g s' : ginv g → dgrow (gs g) s' → ∀ x, cfin 0 (locx x (gx g ++ sp (gs g) s')) = Some (aval s' x).
  Proof.
    intros Hg Hgr x. pose proof (g_r _ _ _ Hg) as Hr.
    rewrite locx_app, cfin_app, (g_run _ _ _ Hg x). simpl.
    apply sp_run; [by apply (tw_reachable_inv N NL) | by apply ms_reach | done].
  Qed.


  Lemma durable_eff s u k : durable s u k → eff s u k.
  Proof. intros (x & j & Hx & Ht & _). by exists x, j. Qed.

  (** A step of one thread. *)
  Lemma ginv_nc g s' t : ginv g → step (gs g) s' → nc N NL (gs g) s' t →
    ginv (G s' (rm s' (gx g ++ sp (gs g) s' ++ ev (gs g) s' (gc g))) (λ u, gc g u && activeb (pc (th s' u)))).
  Proof.
    intros Hg Hs Hn. pose proof (ok_sp g s') as Hok1. pose proof (run_sp g s') as Hrun1.
    destruct g as [s l c]. cbn [gs gx gc] in *.
    pose proof (g_r _ _ _ Hg) as Hr. pose proof (tw_reachable_inv N NL s Hr) as Hi.
    assert (Hr' : reachable2 N NL s') by (eapply rtc_r; [exact Hr | exact Hs]).
    pose proof (tw_reachable_inv N NL s' Hr') as Hi'. pose proof (ms_reach N NL s' Hr') as Hm'.
    pose proof (nc_dgrow N NL s s' t Hn) as Hgr.
    specialize (Hok1 Hg Hr' Hgr). specialize (Hrun1 Hg Hgr).
    destruct Hn as [Ht Hth Hhm _ _ Hcls].
    destruct Hg as [_ Gok Grun Hwf Gids Gold Gact Gidle Gpts Gpend]. cbn [gs gx gc] in *.
    assert (Hoth : ∀ u, u ≠ t → tr u → activeb (pc (th s' u)) = activeb (pc (th s u)) ∧ kk (th s' u) = kk (th s u) ∧
              opof (th s' u) = opof (th s u) ∧ dec s' u = dec s u).
    { intros u Hne Hu. rewrite (Hth u Hne). split_and!; try done.
      apply (dec_eq N NL); [by apply Hhm | by rewrite Hth | by rewrite Hth]. }
    assert (Hev : ev s s' c = evu s s' c t).
    { unfold ev. apply mjoin_single; [apply NoDup_seq | apply elem_of_seq; unfold DetCasPx.tr in Ht; lia |].
      intros u Hu%elem_of_seq Hne. destruct (Hoth u Hne ltac:(unfold DetCasPx.tr; lia)) as (Ha & Hk & _ & Hd).
      unfold evu. rewrite Ha, Hk, Hd, bool_decide_false by lia. destruct (activeb (pc (th s u))), (dec s u); reflexivity. }
    rewrite Hev. clear Hev.
    (* the other threads keep their invocations and their points *)
    assert (Hpo : ∀ E, (∀ e, e ∈ E → (∃ i, e = XE i) ∨ ∃ k op v, e = XL (oid t k) op v) →
              ∀ u, tr u → u ≠ t → ∀ op (v : bool), XL (oid u (kk (th s' u))) op v ∈ rm s' (l ++ sp s s' ++ E) ↔
                op = opof (th s' u) ∧ (if v then durable s' u (kk (th s' u)) else dec s' u = true)).
    { intros E HE u Hu Hne. destruct (Hoth u Hne Hu) as (_ & Hk & Ho & Hd).
      apply (pts_keep s s' l E u Hi Hgr Hu Hk Ho (λ op v, Gpts u op v Hu)).
      intros op v. split; [| intros (_ & _ & H1 & H2); congruence].
      intros Hin. destruct (HE _ Hin) as [[i ?] | (k & op' & v' & [= Hid _ _])]; [done |].
      apply oid_inj in Hid as [? _]. done. }
    destruct Hcls as [[Hso [Hact Hdc]] | [(Hia & Hia' & Hk & Hres & Hd' & Hne') | (r & Hpc & Hk & Hres & Hia' & Hd' & Hne')]].
    - (* inside the operation: at most a failure point *)
      destruct Hso as (Hk & Ho & Hres).
      assert (Hall : ∀ u, tr u → activeb (pc (th s' u)) = activeb (pc (th s u)) ∧ kk (th s' u) = kk (th s u) ∧
                opof (th s' u) = opof (th s u)).
      { intros u Hu. destruct (decide (u = t)) as [-> | Hne]; [done |]. by destruct (Hoth u Hne Hu) as (? & ? & ? & _). }
      set (E := if negb (dec s t) && dec s' t then [XL (oid t (kk (th s' t))) (opof (th s' t)) false] else []).
      assert (evu s s' c t = E) as ->.
      { unfold evu, E. rewrite Hact, Hk, bool_decide_false by lia. destruct (activeb (pc (th s t))); simpl; by rewrite app_nil_r. }
      assert (erase E = []) as HeE by (unfold E; by destruct (negb (dec s t) && dec s' t)).
      assert (Herase : erase (rm s' (l ++ sp s s' ++ E)) = erase l) by (by rewrite erase_rm, !erase_app, erase_sp, HeE, app_nil_r).
      assert (Hact' : ∀ u, tr u → activeb (pc (th s' u)) = true →
        Invoke (oid u (kk (th s' u))) u (opof (th s' u)) ∈ erase l ∧ ¬ finished (erase l) (oid u (kk (th s' u))) ∧
        (c u && activeb (pc (th s' u)) = false → pending_on (erase l) u (oid u (kk (th s' u)))) ∧
        (c u && activeb (pc (th s' u)) = true → cut_off (erase l) (oid u (kk (th s' u))))).
      { intros u Hu Ha. destruct (Hall u Hu) as (Ha' & Hk' & Ho'). rewrite Hk', Ho', Ha, andb_true_r.
        apply (Gact u Hu). by rewrite <- Ha'. }
      assert (Hidle' : ∀ u, tr u → activeb (pc (th s' u)) = false →
        ¬ invoked (erase l) (oid u (kk (th s' u))) ∧ c u && activeb (pc (th s' u)) = false).
      { intros u Hu Ha. destruct (Hall u Hu) as (Ha' & Hk' & _). rewrite Hk', Ha, andb_false_r.
        split; [| done]. apply (Gidle u Hu). by rewrite <- Ha'. }
      split; cbn [gs gx gc]; rewrite ?Herase.
      + done.
      + apply prefix_ok_rm.
        * rewrite app_assoc. unfold E. destruct (negb (dec s t) && dec s' t) eqn:Edec; [| by rewrite app_nil_r].
          apply andb_true_iff in Edec as [Ed1 Ed2]. apply negb_true_iff in Ed1.
          destruct (dec_facts N NL s' t Hi' Ht Ed2) as [Hne'' Ha'].
          apply prefix_ok_snoc. split; [done |]. rewrite Hk, Ho. split.
          -- exists t. rewrite erase_app, erase_sp, app_nil_r. apply (Gact t Ht). by rewrite <- Hact.
          -- intros op' v' [Hin | Hin]%elem_of_app.
             ++ apply (Gpts t op' v' Ht) in Hin as [_ Hv]. destruct v'; [| congruence].
                apply Hne''. rewrite Hk. apply (durable_mono NL s s' t _ Hgr) in Hv. destruct Hv as (x & j & Hx & Ht' & _).
                by exists x, j.
             ++ apply elem_of_sp in Hin as (i & op'' & v'' & [= <- <- <-] & Hin).
                apply elem_of_spl in Hin as (u & Hu & [= Hid _ _] & Hd & _). apply oid_inj in Hid as [<- _].
                apply Hne''. rewrite Hk. destruct Hd as (x & j & Hx & Ht' & _). by exists x, j.
        * apply stale_ok. intros u Hu. rewrite erase_app, erase_sp, HeE, !app_nil_r. destruct (activeb (pc (th s' u))) eqn:Ea.
          -- apply (Hact' u Hu Ea).
          -- intros Hf. apply (proj1 (Hidle' u Hu Ea)). by apply finished_invoked.
      + intros x. apply cfin_rm. rewrite app_assoc, locx_app, cfin_app, Hrun1. simpl.
        unfold E. destruct (negb (dec s t) && dec s' t) eqn:Edec; [| done].
        apply andb_true_iff in Edec as [Ed1 Ed2]. apply negb_true_iff in Ed1.
        destruct Hdc as [Hdc | [(_ & _ & Hla & Hlv) | (Hdc & _)]]; [congruence | | congruence].
        rewrite locx_XL, Ho. unfold opof at 1 2. cbn [fst snd]. case_decide as Hx; [| done]. subst x.
        destruct (dec_facts N NL s' t Hi' Ht Ed2) as [_ Ha'].
        pose proof (act_ax s' t Hi' Ht Ha') as Hax.
        assert (ax (th s' t) = ax (th s t)) as Hax' by (unfold opof in Ho; by injection Ho).
        rewrite Hax' in Hax. simpl. unfold aval. rewrite !(decide_True _ _ Hax).
        rewrite (dval_clean N NL s' _ Hi' Hm' Hax Hla). case_decide; [| done]. congruence.
      + done.
      + intros i Hin. destruct (Gids i Hin) as (u & k & Hu & Hle & ->). exists u, k.
        split_and!; [done | | done]. by rewrite (proj1 (proj2 (Hall u Hu))).
      + intros u k Hu Hlt. apply (Gold u k Hu). by rewrite <- (proj1 (proj2 (Hall u Hu))).
      + done.
      + done.
      + intros u op v Hu. destruct (decide (u = t)) as [-> | Hne]; [| apply Hpo; try done].
        * apply (pts_keep s s' l E t Hi Hgr Ht Hk Ho (λ op v, Gpts t op v Ht)). intros op' v'. unfold E.
          destruct (negb (dec s t) && dec s' t) eqn:Edec.
          -- rewrite elem_of_list_singleton, Hk, Ho. apply andb_true_iff in Edec as [Ed1 Ed2]. apply negb_true_iff in Ed1.
             split; [intros [= -> ->]; done | intros (-> & -> & _); done].
          -- split; [by intros ?%elem_of_nil |]. intros (_ & _ & H1 & H2). by rewrite H1, H2 in Edec.
        * unfold E. destruct (negb (dec s t) && dec s' t); [| by intros ? ?%elem_of_nil]. intros ? ->%elem_of_list_singleton.
          right. by eexists _, _, _.
      + intros u j Hp. destruct (Gpend u j Hp) as (Hu & Ha & -> & Hc). destruct (Hall u Hu) as (Ha' & Hk' & _).
        split_and!; [done | by rewrite Ha' | by rewrite Hk' | by rewrite Hc].
    - (* the start of an invocation *)
      set (i0 := oid t (kk (th s t))). set (op0 := opof (th s' t)).
      set (E := [XE (Invoke (Val:=bool) i0 t op0)]).
      assert (evu s s' c t = E) as ->.
      { unfold evu, E, i0, op0. rewrite Hia, Hia', Hd', Hk, bool_decide_false by lia. simpl. by rewrite andb_false_r. }
      assert (Herase : erase (rm s' (l ++ sp s s' ++ E)) = erase l ++ [Invoke i0 t op0])
        by (by rewrite erase_rm, !erase_app, erase_sp).
      destruct (Gidle t Ht Hia) as [Hni Hc].
      assert (Hall : ∀ u, u ≠ t → tr u → activeb (pc (th s' u)) = activeb (pc (th s u)) ∧ kk (th s' u) = kk (th s u) ∧
                opof (th s' u) = opof (th s u)).
      { intros u Hne Hu. by destruct (Hoth u Hne Hu) as (? & ? & ? & _). }
      assert (Hact' : ∀ u, tr u → activeb (pc (th s' u)) = true →
        Invoke (oid u (kk (th s' u))) u (opof (th s' u)) ∈ erase l ++ [Invoke i0 t op0] ∧
        ¬ finished (erase l ++ [Invoke i0 t op0]) (oid u (kk (th s' u))) ∧
        (c u && activeb (pc (th s' u)) = false → pending_on (erase l ++ [Invoke i0 t op0]) u (oid u (kk (th s' u)))) ∧
        (c u && activeb (pc (th s' u)) = true → cut_off (erase l ++ [Invoke i0 t op0]) (oid u (kk (th s' u))))).
      { intros u Hu Ha. destruct (decide (u = t)) as [-> | Hne].
        - rewrite Hk. fold i0 op0. split_and!.
          + apply elem_of_app. right. by left.
          + intros [Hf | []]%finished_snoc. apply Hni. by apply finished_invoked.
          + intros _. apply pending_on_snoc. left. by eexists.
          + rewrite Hc. done.
        - destruct (Hall u Hne Hu) as (Ha' & Hk' & Ho'). rewrite Hk', Ho', Ha, andb_true_r. rewrite Ha' in Ha.
          destruct (Gact u Hu Ha) as (H1 & H2 & H3 & H4). split_and!.
          + apply elem_of_app. by left.
          + intros [Hf | Hf]%finished_snoc; [done | done].
          + intros Hcu. apply pending_on_snoc. right. split_and!; [by apply H3 | done | done].
          + intros Hcu. by apply cut_off_app, H4. }
      assert (Hidle' : ∀ u, tr u → activeb (pc (th s' u)) = false →
        ¬ invoked (erase l ++ [Invoke i0 t op0]) (oid u (kk (th s' u))) ∧ c u && activeb (pc (th s' u)) = false).
      { intros u Hu Ha. destruct (decide (u = t)) as [-> | Hne]; [congruence |].
        destruct (Hall u Hne Hu) as (Ha' & Hk' & _). rewrite Hk', Ha, andb_false_r. split; [| done].
        rewrite Ha' in Ha. intros [Hinv | (t' & op' & [= Hid _ _])]%invoked_snoc.
        - by apply (Gidle u Hu Ha).
        - apply oid_inj in Hid as [? _]. done. }
      assert (Hwf' : wf (erase l ++ [Invoke i0 t op0])).
      { apply wf_snoc. split; [done |]. split; [done |]. intros (j & Hp). destruct (Gpend t j Hp) as (_ & Ha & _). congruence. }
      split; cbn [gs gx gc]; rewrite ?Herase.
      + done.
      + apply prefix_ok_rm.
        * rewrite app_assoc. apply prefix_ok_snoc. by split.
        * apply stale_ok. intros u Hu. rewrite erase_app, erase_sp. cbn [app erase omap]. simpl.
          destruct (activeb (pc (th s' u))) eqn:Ea.
          -- apply (Hact' u Hu Ea).
          -- intros Hf. apply (proj1 (Hidle' u Hu Ea)). by apply finished_invoked.
      + intros x. apply cfin_rm. rewrite app_assoc, locx_app, cfin_app, Hrun1. reflexivity.
      + done.
      + intros i [Hin | (t' & op' & [= <- <- <-])]%invoked_snoc.
        * destruct (Gids i Hin) as (u & k & Hu & Hle & ->). exists u, k. split_and!; [done | | done].
          destruct (decide (u = t)) as [-> | Hne]; [by rewrite Hk | by rewrite (proj1 (proj2 (Hall u Hne Hu)))].
        * exists t, (kk (th s t)). split_and!; [done | lia | done].
      + intros u k Hu Hlt. apply finished_app, (Gold u k Hu).
        destruct (decide (u = t)) as [-> | Hne]; [by rewrite <- Hk | by rewrite <- (proj1 (proj2 (Hall u Hne Hu)))].
      + done.
      + done.
      + intros u op v Hu. destruct (decide (u = t)) as [-> | Hne].
        * split.
          -- intros [Hin Hst]%elem_of_rm. exfalso. apply elem_of_app in Hin as [Hin | [Hin | Hin]%elem_of_app].
             ++ rewrite Hk in Hin. apply (Gpts t op v Ht) in Hin as [_ Hv]. destruct v.
                ** pose proof (durable_act N NL s t Hi Ht Hv). congruence.
                ** destruct (dec_facts N NL s t Hi Ht Hv) as [_ ?]. congruence.
             ++ apply elem_of_sp in Hin as (i & op' & v' & [= <- <- <-] & Hin).
                apply elem_of_spl in Hin as (u & Hu' & [= Hid _ _] & Hd & _). apply oid_inj in Hid as [<- Hkk].
                apply Hne'. rewrite Hkk. by apply (durable_eff s' t).
             ++ by apply elem_of_list_singleton in Hin.
          -- intros [_ Hv]. exfalso. destruct v; [by apply Hne', durable_eff | congruence].
        * apply Hpo; [| done | done]. intros e ->%elem_of_list_singleton. left. by eexists.
      + intros u j [(o & [= <- <- <-]) | (Hp & _ & _)]%pending_on_snoc.
        * split_and!; [done | done | by rewrite Hk | by rewrite Hc].
        * destruct (Gpend u j Hp) as (Hu & Ha & -> & Hcu). destruct (decide (u = t)) as [-> | Hne]; [congruence |].
          destruct (Hall u Hne Hu) as (Ha' & Hk' & _). split_and!; [done | by rewrite Ha' | by rewrite Hk' | by rewrite Hcu].
    - (* the commit *)
      assert (activeb (pc (th s t)) = true) as Hia by (by rewrite Hpc).
      set (i0 := oid t (kk (th s t))). set (Ev := (if c t then @Recover cop bool else @Return cop bool) i0 r).
      set (E := [XE Ev]).
      assert (evu s s' c t = E) as ->.
      { unfold evu, E, Ev, i0. rewrite Hia, Hia', Hd', Hk, bool_decide_true by done. rewrite Hres, last_snoc.
        simpl. by rewrite andb_false_r. }
      assert (Herase : erase (rm s' (l ++ sp s s' ++ E)) = erase l ++ [Ev])
        by (by rewrite erase_rm, !erase_app, erase_sp).
      destruct (Gact t Ht Hia) as (Hinv0 & Hnf0 & Hpend0 & Hcut0). fold i0 in Hinv0, Hnf0, Hpend0, Hcut0.
      assert (HnEv : ∀ j t' o, Ev ≠ Invoke j t' o) by (unfold Ev; by destruct (c t)).
      assert (HcEv : Ev ≠ Crash) by (unfold Ev; by destruct (c t)).
      assert (HendEv : ∀ j, ends j Ev ↔ j = i0) by (unfold Ev; destruct (c t); simpl; naive_solver).
      assert (Hnew : ¬ invoked (erase l) (oid t (S (kk (th s t))))).
      { intros Hin. destruct (Gids _ Hin) as (u & k & Hu & Hle & Hid). apply oid_inj in Hid as [<- <-]. lia. }
      assert (Hall : ∀ u, u ≠ t → tr u → activeb (pc (th s' u)) = activeb (pc (th s u)) ∧ kk (th s' u) = kk (th s u) ∧
                opof (th s' u) = opof (th s u)).
      { intros u Hne Hu. by destruct (Hoth u Hne Hu) as (? & ? & ? & _). }
      assert (Hact' : ∀ u, tr u → activeb (pc (th s' u)) = true →
        Invoke (oid u (kk (th s' u))) u (opof (th s' u)) ∈ erase l ++ [Ev] ∧
        ¬ finished (erase l ++ [Ev]) (oid u (kk (th s' u))) ∧
        (c u && activeb (pc (th s' u)) = false → pending_on (erase l ++ [Ev]) u (oid u (kk (th s' u)))) ∧
        (c u && activeb (pc (th s' u)) = true → cut_off (erase l ++ [Ev]) (oid u (kk (th s' u))))).
      { intros u Hu Ha. destruct (decide (u = t)) as [-> | Hne]; [congruence |].
        destruct (Hall u Hne Hu) as (Ha' & Hk' & Ho'). rewrite Hk', Ho', Ha, andb_true_r. rewrite Ha' in Ha.
        destruct (Gact u Hu Ha) as (H1 & H2 & H3 & H4). split_and!.
        + apply elem_of_app. by left.
        + intros [Hf | Hf]%finished_snoc; [done |]. apply HendEv in Hf. apply oid_inj in Hf as [? _]. done.
        + intros Hcu. apply pending_on_snoc. right. split_and!; [by apply H3 | done |].
          intros v E'. unfold Ev in E'. destruct (c t); [done |]. injection E' as Hid _. apply oid_inj in Hid as [? _]. done.
        + intros Hcu. by apply cut_off_app, H4. }
      assert (Hidle' : ∀ u, tr u → activeb (pc (th s' u)) = false →
        ¬ invoked (erase l ++ [Ev]) (oid u (kk (th s' u))) ∧ c u && activeb (pc (th s' u)) = false).
      { intros u Hu Ha. rewrite Ha, andb_false_r. split; [| done].
        intros [Hinv | (t' & op' & HE)]%invoked_snoc; [| by apply (HnEv _ _ _ HE)].
        destruct (decide (u = t)) as [-> | Hne]; [rewrite Hk in Hinv; by apply Hnew |].
        destruct (Hall u Hne Hu) as (Ha' & Hk' & _). rewrite Hk' in Hinv. rewrite Ha' in Ha. by apply (Gidle u Hu Ha). }
      assert (Hwf' : wf (erase l ++ [Ev])).
      { apply wf_snoc. split; [done |]. unfold Ev. destruct (c t) eqn:Ec; simpl; split; [by apply Hcut0 | done | | done].
        exists t. by apply Hpend0. }
      pose proof (commit_point s t r Hi Ht Hpc) as Hpt.
      split; cbn [gs gx gc]; rewrite ?Herase.
      + done.
      + apply prefix_ok_rm.
        * rewrite app_assoc. apply prefix_ok_snoc. split; [done |].
          assert (∃ op, XL i0 op r ∈ l ++ sp s s') as Hx.
          { exists (opof (th s t)). apply elem_of_app. left. apply (Gpts t _ r Ht). by split. }
          unfold Ev. by destruct (c t).
        * apply stale_ok. intros u Hu. rewrite erase_app, erase_sp. simpl.
          destruct (activeb (pc (th s' u))) eqn:Ea.
          -- apply (Hact' u Hu Ea).
          -- intros Hf. apply (proj1 (Hidle' u Hu Ea)). by apply finished_invoked.
      + intros x. apply cfin_rm. rewrite app_assoc, locx_app, cfin_app, Hrun1. reflexivity.
      + done.
      + intros i [Hin | (t' & op' & HE)]%invoked_snoc; [| by destruct (HnEv _ _ _ HE)].
        destruct (Gids i Hin) as (u & k & Hu & Hle & ->). exists u, k. split_and!; [done | | done].
        destruct (decide (u = t)) as [-> | Hne]; [rewrite Hk; lia | by rewrite (proj1 (proj2 (Hall u Hne Hu)))].
      + intros u k Hu Hlt. destruct (decide (u = t)) as [-> | Hne].
        * rewrite Hk in Hlt. destruct (decide (k = kk (th s t))) as [-> | Hnk].
          -- apply finished_snoc. right. by apply HendEv.
          -- apply finished_app, (Gold t k Ht). lia.
        * apply finished_app, (Gold u k Hu). by rewrite <- (proj1 (proj2 (Hall u Hne Hu))).
      + done.
      + done.
      + intros u op v Hu. destruct (decide (u = t)) as [-> | Hne].
        * rewrite Hk. split.
          -- intros [Hin Hst]%elem_of_rm. exfalso. apply elem_of_app in Hin as [Hin | [Hin | Hin]%elem_of_app].
             ++ apply Hnew. by apply (xl_invoked l _ op v).
             ++ apply elem_of_sp in Hin as (i & op' & v' & [= <- <- <-] & Hin).
                apply elem_of_spl in Hin as (u & Hu' & [= Hid _ _] & Hd & _). apply oid_inj in Hid as [<- Hkk]. lia.
             ++ by apply elem_of_list_singleton in Hin.
          -- intros [_ Hv]. exfalso. destruct v.
             ++ apply Hne'. rewrite Hk. by apply durable_eff.
             ++ congruence.
        * apply Hpo; [| done | done]. intros e ->%elem_of_list_singleton. left. by eexists.
      + intros u j [(o & HE) | (Hp & _ & Hret)]%pending_on_snoc; [by destruct (HnEv _ _ _ HE) |].
        destruct (Gpend u j Hp) as (Hu & Ha & -> & Hcu). destruct (decide (u = t)) as [-> | Hne].
        * exfalso. unfold Ev in Hret. rewrite Hcu in Hret. by apply (Hret r).
        * destruct (Hall u Hne Hu) as (Ha' & Hk' & _). split_and!; [done | by rewrite Ha' | by rewrite Hk' | by rewrite Hcu].
  Qed.
End pres.

Section crash.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation hm := (hm N NL).
  Notation inv := (inv N NL).
  Notation ms := (ms N NL).
  Notation eff := (eff NL).
  Notation durable := (durable NL).
  Notation dec := (dec N NL).
  Notation aval := (aval NL).
  Notation dgrow := (dgrow NL).
  Notation sp := (sp N NL).
  Notation spl := (spl N NL).
  Notation ev := (ev N NL).
  Notation evu := (evu N NL).
  Notation rm := (rm N NL).
  Notation stale := (stale N NL).
  Notation step := (step N NL fixed2 any_run).
  Notation ginv := (ginv N NL).

  (** A thread across a full crash: same invocation, arguments and results;
      back in recovery; a decision to fail survives only with its memento. *)
  Lemma crash_th s keep f u : (∀ u, tr u → f u = reinit N NL s keep u) → tr u →
    kk (f u) = kk (th s u) ∧ opof (f u) = opof (th s u) ∧ res (f u) = res (th s u) ∧
    activeb (pc (f u)) = activeb (pc (th s u)) ∧ isfail (pc (f u)) = false.
  Proof.
    intros Hf Hu. rewrite (Hf u Hu). unfold reinit. cbn [with_own with_pc kk ax ao an res pc].
    split_and!; try done; [apply act_crash_pc | apply isfail_crash_pc].
  Qed.

  Lemma crash_dec s keep f u : inv s → (∀ u, tr u → f u = reinit N NL s keep u) → tr u →
    dec (cst s keep f) u = true → dec s u = true.
  Proof.
    intros Hi Hf Hu Hd. destruct (crash_th s keep f u Hf Hu) as (Hk & _ & _ & _ & Hfl).
    unfold DetCasPxLin.dec in Hd |- *. cbn [th cst] in Hd. rewrite Hfl in Hd. simpl in Hd.
    unfold lastmf in Hd |- *. rewrite crash_hm in Hd. cbn [th cst] in Hd. rewrite Hk in Hd.
    destruct (last (take _ (hm s u))) as [w |] eqn:E; [| done].
    apply andb_true_iff in Hd as [Hg Hm]. apply bool_decide_eq_true in Hg.
    rewrite last_lookup in E. apply lookup_take_Some in E as [E _].
    destruct (i_mmt _ _ _ Hi u _ w Hu E) as [(_ & _ & Hlen & _) | (Hlt & _)]; [| specialize (Hlt _ Hg); lia].
    assert (last (hm s u) = Some w) as ->.
    { rewrite last_lookup. rewrite <- E. f_equal. rewrite !take_length in Hlen |- *. lia. }
    rewrite Hg, Hm, bool_decide_true by done. apply orb_true_r.
  Qed.

  Lemma crash_ev s keep f c : inv s → (∀ u, tr u → f u = reinit N NL s keep u) → ev s (cst s keep f) c = [].
  Proof.
    intros Hi Hf. unfold ev. apply mjoin_nil. intros u Hu%elem_of_seq.
    assert (tr u) as Hu' by (unfold DetCasPx.tr; lia).
    destruct (crash_th s keep f u Hf Hu') as (Hk & _ & _ & Ha & _).
    unfold evu. cbn [th cst]. rewrite Hk, Ha, bool_decide_false by lia.
    destruct (dec (cst s keep f) u) eqn:E.
    - rewrite (crash_dec s keep f u Hi Hf Hu' E). destruct (activeb (pc (th s u))); reflexivity.
    - destruct (activeb (pc (th s u))), (dec s u); reflexivity.
  Qed.

  (** A full crash, with its [crash] event ([loud]) or silent. *)
  Lemma ginv_crash g keep f (loud : bool) : ginv g → p_crash_ok (pm (gs g)) keep →
    (∀ u, tr u → f u = reinit N NL (gs g) keep u) → (∀ u, ¬ tr u → f u = th (gs g) u) →
    ginv (G (cst (gs g) keep f) (rm (cst (gs g) keep f) (gx g ++ sp (gs g) (cst (gs g) keep f) ++
            (if loud then [XE Crash] else [])))
            (λ u, (loud || gc g u) && activeb (pc (th (cst (gs g) keep f) u)))).
  Proof.
    intros Hg Hok Hf Hf'. pose proof (g_r _ _ _ Hg) as Hr. pose proof (tw_reachable_inv N NL _ Hr) as Hi.
    set (s' := cst (gs g) keep f).
    assert (Hr' : reachable2 N NL s') by (eapply rtc_r; [exact Hr | by apply SCrash]).
    pose proof (crash_dgrow N NL (gs g) keep f Hi Hok) as Hgr.
    pose proof (ok_sp N NL g s' Hg Hr' Hgr) as Hok1. pose proof (run_sp N NL g s' Hg Hgr) as Hrun1.
    destruct g as [s l c]. cbn [gs gx gc] in *.
    destruct Hg as [_ Gok Grun Hwf Gids Gold Gact Gidle Gpts Gpend]. cbn [gs gx gc] in *.
    set (E := if loud then [XE (Val:=bool) Crash] else []).
    set (h' := erase l ++ erase E).
    assert (Herase : erase (rm s' (l ++ sp s s' ++ E)) = h') by (by rewrite erase_rm, !erase_app, erase_sp).
    assert (Hth : ∀ u, tr u → kk (th s' u) = kk (th s u) ∧ opof (th s' u) = opof (th s u) ∧
              activeb (pc (th s' u)) = activeb (pc (th s u))).
    { intros u Hu. destruct (crash_th s keep f u Hf Hu) as (? & ? & _ & ? & _). done. }
    assert (HinvE : ∀ i, invoked h' i → invoked (erase l) i).
    { intros i Hin. unfold h', E in Hin. destruct loud; simpl in Hin; [| by rewrite app_nil_r in Hin].
      by apply invoked_snoc in Hin as [? | (? & ? & ?)]. }
    assert (Hact' : ∀ u, tr u → activeb (pc (th s' u)) = true →
      Invoke (oid u (kk (th s' u))) u (opof (th s' u)) ∈ h' ∧ ¬ finished h' (oid u (kk (th s' u))) ∧
      ((loud || c u) && activeb (pc (th s' u)) = false → pending_on h' u (oid u (kk (th s' u)))) ∧
      ((loud || c u) && activeb (pc (th s' u)) = true → cut_off h' (oid u (kk (th s' u))))).
    { intros u Hu Ha. destruct (Hth u Hu) as (Hk & Ho & Ha'). rewrite Hk, Ho, Ha, andb_true_r. rewrite Ha' in Ha.
      destruct (Gact u Hu Ha) as (H1 & H2 & H3 & H4).
      replace h' with (erase l ++ if loud then [Crash] else []) by (unfold h', E; by destruct loud).
      by apply current_across_crash. }
    assert (Hidle' : ∀ u, tr u → activeb (pc (th s' u)) = false →
      ¬ invoked h' (oid u (kk (th s' u))) ∧ (loud || c u) && activeb (pc (th s' u)) = false).
    { intros u Hu Ha. destruct (Hth u Hu) as (Hk & _ & Ha'). rewrite Hk, Ha, andb_false_r. split; [| done].
      rewrite Ha' in Ha. intros Hin. by apply (Gidle u Hu Ha), HinvE. }
    split; cbn [gs gx gc]; rewrite ?Herase.
    - done.
    - apply prefix_ok_rm.
      + rewrite app_assoc. unfold E. destruct loud; [| by rewrite app_nil_r]. apply prefix_ok_snoc. by split.
      + apply stale_ok. intros u Hu. rewrite erase_app, erase_sp. fold h'.
        destruct (activeb (pc (th s' u))) eqn:Ea.
        * apply (Hact' u Hu Ea).
        * intros Hfi. apply (proj1 (Hidle' u Hu Ea)). apply finished_invoked; [| done].
          unfold h', E. destruct loud; simpl; [| by rewrite app_nil_r]. apply wf_snoc. by split.
    - intros x. apply cfin_rm. rewrite app_assoc, locx_app, cfin_app, Hrun1. unfold E. by destruct loud.
    - unfold h', E. destruct loud; simpl; [| by rewrite app_nil_r]. apply wf_snoc. by split.
    - intros i Hin%HinvE. destruct (Gids i Hin) as (u & k & Hu & Hle & ->). exists u, k.
      split_and!; [done | | done]. by rewrite (proj1 (Hth u Hu)).
    - intros u k Hu Hlt. unfold h'. apply finished_app, (Gold u k Hu). by rewrite <- (proj1 (Hth u Hu)).
    - done.
    - done.
    - intros u op v Hu. destruct (Hth u Hu) as (Hk & Ho & _).
      apply (pts_keep N NL s s' l E u Hi Hgr Hu Hk Ho (λ op v, Gpts u op v Hu)).
      intros op' v'. split.
      + unfold E. destruct loud; [| by intros ?%elem_of_nil]. by intros ?%elem_of_list_singleton.
      + intros (_ & _ & H1 & H2). apply (crash_dec s keep f u Hi Hf Hu) in H2. congruence.
    - intros u j Hp. unfold h', E in Hp. destruct loud; simpl in Hp.
      + apply pending_on_snoc in Hp as [(o & ?) | (_ & ? & _)]; done.
      + rewrite app_nil_r in Hp. destruct (Gpend u j Hp) as (Hu & Ha & -> & Hc).
        destruct (Hth u Hu) as (Hk & _ & Ha'). split_and!; [done | by rewrite Ha' | by rewrite Hk | by rewrite Hc].
  Qed.

  (** The invariant holds in every state of every run with its history. *)
  Lemma ginv_step g g' : ginv g → gstep N NL g g' → ginv g'.
  Proof.
    intros Hg Hs. destruct Hs as [g s' Hs | g keep f Hok Hf Hf'].
    - pose proof (tw_reachable_inv N NL _ (g_r _ _ _ Hg)) as Hi.
      destruct (step_nc N NL (gs g) s' Hi Hs) as [[t Hn] | (keep & f & Hok & Hf & Hf' & ->)].
      + exact (ginv_nc N NL g s' t Hg Hs Hn).
      + change (St (crash_pm (pm (gs g)) keep) (wt (gs g)) (clock (gs g)) f) with (cst (gs g) keep f).
        rewrite (crash_ev (gs g) keep f (gc g) Hi Hf), app_nil_r.
        pose proof (ginv_crash g keep f false Hg Hok Hf Hf') as H. rewrite app_nil_r in H. exact H.
    - exact (ginv_crash g keep f true Hg Hok Hf Hf').
  Qed.

  Lemma greach_ginv g : greach N NL g → ginv g.
  Proof. apply rtc_preserved; [apply ginv_init | apply ginv_step]. Qed.
End crash.

(** ** The theorems *)
Section theorems.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation greach := (greach N NL).
  Notation ginv := (ginv N NL).

  (** Every run of the two-word model has its history: the ghost runs are
      the model's runs, each full crash with its [crash] event. *)
  Theorem detcas_linw_every_run s : reachable2 N NL s ↔ ∃ g, greach g ∧ gs g = s.
  Proof.
    apply (ghost_runs _ _ gs _ (ginit N NL)); [done | intros g Hg; apply (g_r _ _ _ (greach_ginv N NL g Hg)) |].
    intros g s' _ Hr Hs.
    destruct (step_nc N NL (gs g) s' (tw_reachable_inv N NL _ Hr) Hs) as [_ | (keep & f & Hok & Hf & Hf' & ->)].
    - eexists. split; [by apply g_step | done].
    - eexists. split; [by apply g_crash | done].
  Qed.

  (** (a) Durable linearizability: the history of every run, with its
      points, is a witness for the CAS registers. *)
  Theorem detcas_linw_durably_linearizable g : greach g → durably_linearizable cas_regs (erase (gx g)).
  Proof.
    intros Hg. pose proof (greach_ginv N NL g Hg) as Hi. apply durably_linearizable_erase; [apply (g_ok _ _ _ Hi) |].
    apply accepts_locx. intros x. eexists. apply (g_run _ _ _ Hi).
  Qed.

  (** (b) The histories are well formed (what [perdure check-history]
      accepts). *)
  Theorem detcas_linw_wf g : greach g → wf (erase (gx g)).
  Proof. intros Hg. apply (g_wf _ _ _ (greach_ginv N NL g Hg)). Qed.

  (** The operations of the history are the threads' invocations, numbered
      ([DurableLin.v]'s [numbered]): (c) and (d) are [DurableLin.v]'s
      [numbered_cut_off_recovered] and [numbered_detectable]. *)
  Lemma greach_numbered g : greach g →
    numbered tr (λ t, kk (th (gs g) t)) (λ t, activeb (pc (th (gs g) t))) (erase (gx g)).
  Proof.
    intros Hg. pose proof (greach_ginv N NL g Hg) as Hi.
    split; [apply (g_wf _ _ _ Hi) | apply (g_ids _ _ _ Hi) | apply (g_old _ _ _ Hi) |].
    intros u Hu Ha. apply (proj1 (g_idle _ _ _ Hi u Hu Ha)).
  Qed.

  (** (c) Every operation a crash cut off is recovered, with the result it
      took effect with (a [recover] follows its point), or it is the
      operation its thread is still running (in recovery). *)
  Theorem detcas_linw_cut_off_recovered g i : greach g → cut_off (erase (gx g)) i →
    recovered (erase (gx g)) i ∨
    ∃ t, tr t ∧ activeb (pc (th (gs g) t)) = true ∧ i = oid t (kk (th (gs g) t)).
  Proof. intros Hg. apply (numbered_cut_off_recovered _ _ _ _ i (greach_numbered g Hg)). Qed.

  (** (d) Detectability: once no thread is inside a detectable CAS (every
      recovery has returned), the history is [detectable] for the CAS
      registers: durably linearizable, every cut-off operation recovered. *)
  Theorem detcas_linw_detectable g : greach g → (∀ t, tr t → activeb (pc (th (gs g) t)) = false) →
    detectable cas_regs (erase (gx g)).
  Proof.
    intros Hg. apply (numbered_detectable _ _ _ _ _ (greach_numbered g Hg) (detcas_linw_durably_linearizable g Hg)).
  Qed.

  (** (e) Location by location: each location's projection is durably
      linearizable for one CAS register ([DurableLin.v]'s locality). *)
  Theorem detcas_linw_per_location g x : greach g →
    durably_linearizable (obj_spec (λ _ : nat, cas_reg) x) (erase (gx g) |_ x).
  Proof.
    intros Hg. apply (durably_linearizable_local (λ _ : nat, cas_reg)); [by apply detcas_linw_wf |].
    by apply detcas_linw_durably_linearizable.
  Qed.
End theorems.

(** ** The results in the history are the model's *)
Section results.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation greach := (greach N NL).
  Notation step := (step N NL fixed2 any_run).

  (** A step leaves a thread's results alone, or (its commit) appends one. *)
  Lemma step_res s s' u : inv N NL s → step s s' → tr u →
    (kk (th s' u) = kk (th s u) ∧ res (th s' u) = res (th s u)) ∨
    (kk (th s' u) = S (kk (th s u)) ∧ ∃ r, res (th s' u) = res (th s u) ++ [r]).
  Proof.
    intros Hi Hs Hu. destruct (step_nc N NL s s' Hi Hs) as [[t Hn] | (keep & f & _ & Hf & _ & ->)].
    - destruct (decide (u = t)) as [-> | Hne].
      + destruct (nc_cls _ _ _ _ _ Hn) as [[(Hk & _ & Hr) _] | [(_ & _ & Hk & Hr & _) | (r & _ & Hk & Hr & _)]].
        * by left.
        * by left.
        * right. split; [done | by exists r].
      + left. by rewrite (nc_th _ _ _ _ _ Hn u Hne).
    - left. cbn [th]. rewrite (Hf u Hu). done.
  Qed.

  Lemma ev_ret s s' c i (v : bool) : Return i v ∈ erase (ev N NL s s' c) ∨ Recover i v ∈ erase (ev N NL s s' c) →
    ∃ u, tr u ∧ i = oid u (kk (th s u)) ∧ kk (th s' u) = S (kk (th s u)) ∧ v = default false (last (res (th s' u))).
  Proof.
    intros Hin. assert (∃ e, (e = Return i v ∨ e = Recover i v) ∧ XE e ∈ ev N NL s s' c) as (e & He & Hin').
    { destruct Hin as [Hin | Hin]; apply elem_of_erase in Hin; eexists; split; [by left | done | by right | done]. }
    unfold ev in Hin'. apply elem_of_list_join in Hin' as (l & Hin' & Hl). apply elem_of_list_fmap in Hl as (u & -> & Hu).
    apply elem_of_seq in Hu. exists u. unfold evu in Hin'. rewrite !elem_of_app in Hin'.
    destruct Hin' as [Hin' | [Hin' | Hin']].
    - destruct (negb (activeb (pc (th s u))) && activeb (pc (th s' u))); [| by apply elem_of_nil in Hin'].
      apply elem_of_list_singleton in Hin'. injection Hin' as ->. by destruct He.
    - destruct (negb (dec N NL s u) && dec N NL s' u); [| by apply elem_of_nil in Hin'].
      by apply elem_of_list_singleton in Hin'.
    - destruct (bool_decide _) eqn:E; [| by apply elem_of_nil in Hin']. apply bool_decide_eq_true in E.
      apply elem_of_list_singleton in Hin'. injection Hin' as ->.
      assert (i = oid u (kk (th s u)) ∧ v = default false (last (res (th s' u)))) as [-> ->]
        by (destruct (c u), He as [He | He]; first [discriminate He | injection He as H1 H2; by split]).
      split_and!; [unfold DetCasPx.tr; lia | done | done | done].
  Qed.

  Lemma greach_res g : greach g → ∀ u k (v : bool), tr u →
    Return (oid u k) v ∈ erase (gx g) ∨ Recover (oid u k) v ∈ erase (gx g) → res (th (gs g) u) !! k = Some v.
  Proof.
    unfold greach. intros Hr. revert g Hr. refine (rtc_ind_r _ (ginit N NL) _ _).
    { intros u k v _ [H | H]; cbn in H; by apply elem_of_nil in H. }
    intros g1 g2 Hr1 Hs IH u k v Hu Hin.
    pose proof (tw_reachable_inv N NL _ (g_r _ _ _ (greach_ginv N NL g1 Hr1))) as Hi.
    pose proof (i_clock _ _ _ Hi u Hu) as (_ & _ & Hlen).
    destruct Hs as [g s' Hs | g keep f Hok Hf Hf']; cbn [gs gx] in *.
    - rewrite erase_rm, !erase_app, erase_sp in Hin. cbn [app] in Hin. rewrite !elem_of_app in Hin.
      destruct (step_res (gs g) s' u Hi Hs Hu) as [[Hk Hres] | [Hk [r Hres]]].
      + rewrite Hres. destruct Hin as [[Hin | Hin] | [Hin | Hin]]; [by apply IH; auto | | by apply IH; auto |].
        all: destruct (ev_ret (gs g) s' (gc g) (oid u k) v ltac:(by auto)) as (u' & Hu' & Hid & Hk' & _).
        all: apply oid_inj in Hid as [<- _]; lia.
      + rewrite Hres. destruct (decide (k = kk (th (gs g) u))) as [-> | Hne].
        * assert (v = r) as ->.
          { destruct Hin as [[Hin | Hin] | [Hin | Hin]].
            1, 3: exfalso; pose proof (IH u (kk (th (gs g) u)) v Hu ltac:(by auto)) as Hl; apply lookup_lt_Some in Hl; lia.
            all: destruct (ev_ret (gs g) s' (gc g) (oid u (kk (th (gs g) u))) v ltac:(by auto)) as (u' & Hu' & Hid & Hk' & ->).
            all: apply oid_inj in Hid as [<- _]; by rewrite Hres, last_snoc. }
          rewrite lookup_app_r by lia. by rewrite Hlen, Nat.sub_diag.
        * apply lookup_app_l_Some. destruct Hin as [[Hin | Hin] | [Hin | Hin]]; [by apply IH; auto | | by apply IH; auto |].
          all: destruct (ev_ret (gs g) s' (gc g) (oid u k) v ltac:(by auto)) as (u' & Hu' & Hid & Hk' & _).
          all: apply oid_inj in Hid as [<- ?]; lia.
    - rewrite erase_rm, !erase_app, erase_sp in Hin. cbn [app] in Hin.
      assert (Return (oid u k) v ∈ erase (gx g) ∨ Recover (oid u k) v ∈ erase (gx g)) as Hin'.
      { destruct Hin as [Hin | Hin]; apply elem_of_app in Hin as [Hin | Hin]; try by auto;
          simpl in Hin; by apply elem_of_list_singleton in Hin. }
      cbn [th]. rewrite (Hf u Hu). cbn [reinit with_own with_pc res]. by apply IH.
  Qed.

  (** (f) The result an operation returned or was recovered with, in the
      history, is the one its invocation committed in the model; so
      ([detcas_px2_detectable]) it is [true] iff the invocation's first
      plain CAS is in its location's history as the crashes left it. *)
  Theorem detcas_linw_results g t k v : greach g → tr t →
    Return (oid t k) v ∈ erase (gx g) ∨ Recover (oid t k) v ∈ erase (gx g) →
    res (th (gs g) t) !! k = Some v ∧ (v = true ↔ eff NL (gs g) t k).
  Proof.
    intros Hg Ht Hin. pose proof (greach_res g Hg t k v Ht Hin) as Hres. split; [done |].
    pose proof (g_r _ _ _ (greach_ginv N NL g Hg)) as Hr.
    pose proof (i_clock _ _ _ (tw_reachable_inv N NL _ Hr) t Ht) as (_ & _ & Hlen).
    assert (k < kk (th (gs g) t)) as Hk by (apply lookup_lt_Some in Hres; lia).
    destruct (inv_detectable N NL (gs g) t k (tw_reachable_inv N NL _ Hr) Ht Hk) as (Hok & Herr & _).
    rewrite Hres in Hok, Herr. destruct v; split; intros H; try done.
    - by apply Hok.
    - exfalso. by apply (proj1 Herr eq_refl).
  Qed.
End results.
End lin.

(** ** The two instances *)

(** The two-word location (the crate's default, [TwoWord]) in every run;
    and the seed's one-word location under H-ABA ([h_aba], the
    precondition of [cas.rs]'s [UniqueCasAtomic::at_unique], worded as the
    crate's docs word it), whose states satisfy the invariant by
    [DetCasPx.v]'s [reachable_inv]. *)
Lemma reach2_inv N NL s : reachable N NL (fixedw true) any_run s → inv N NL s.
Proof. apply tw_reachable_inv. Qed.
Lemma reach1_inv N NL s : reachable N NL (fixedw false) h_aba s → inv N NL s.
Proof. apply reachable_inv. Qed.

Section instances.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation greach2 := (greach true any_run N NL).
  Notation greach1 := (greach false h_aba N NL).

  (** The two-word location, every run: every run has its history, which
      is well formed, durably linearizable for the CAS registers (and per
      location), every cut-off operation recovered or still running, and
      detectable once no CAS runs; a returned or recovered result is the
      committed one, [true] iff the first plain CAS took effect. *)
  Theorem detcas_lin_every_run s : reachable2 N NL s ↔ ∃ g, greach2 g ∧ gs g = s.
  Proof. apply (detcas_linw_every_run true any_run reach2_inv). Qed.
  Theorem detcas_lin_durably_linearizable g : greach2 g → durably_linearizable cas_regs (erase (gx g)).
  Proof. apply (detcas_linw_durably_linearizable true any_run reach2_inv). Qed.
  Theorem detcas_lin_wf g : greach2 g → wf (erase (gx g)).
  Proof. apply (detcas_linw_wf true any_run reach2_inv). Qed.
  Theorem detcas_lin_cut_off_recovered g i : greach2 g → cut_off (erase (gx g)) i →
    recovered (erase (gx g)) i ∨
    ∃ t, tr t ∧ activeb (pc (th (gs g) t)) = true ∧ i = oid t (kk (th (gs g) t)).
  Proof. apply (detcas_linw_cut_off_recovered true any_run reach2_inv). Qed.
  Theorem detcas_lin_detectable g : greach2 g → (∀ t, tr t → activeb (pc (th (gs g) t)) = false) →
    detectable cas_regs (erase (gx g)).
  Proof. apply (detcas_linw_detectable true any_run reach2_inv). Qed.
  Theorem detcas_lin_per_location g x : greach2 g →
    durably_linearizable (obj_spec (λ _ : nat, cas_reg) x) (erase (gx g) |_ x).
  Proof. apply (detcas_linw_per_location true any_run reach2_inv). Qed.
  Theorem detcas_lin_results g t k v : greach2 g → tr t →
    Return (oid t k) v ∈ erase (gx g) ∨ Recover (oid t k) v ∈ erase (gx g) →
    res (th (gs g) t) !! k = Some v ∧ (v = true ↔ eff NL (gs g) t k).
  Proof. apply (detcas_linw_results true any_run reach2_inv). Qed.

  (** The one-word location under H-ABA: the same statements over the runs
      in which every first plain CAS satisfies the premise. *)
  Theorem detcas_lin1_every_run s : reachable N NL fixed h_aba s ↔ ∃ g, greach1 g ∧ gs g = s.
  Proof. apply (detcas_linw_every_run false h_aba reach1_inv). Qed.
  Theorem detcas_lin1_durably_linearizable g : greach1 g → durably_linearizable cas_regs (erase (gx g)).
  Proof. apply (detcas_linw_durably_linearizable false h_aba reach1_inv). Qed.
  Theorem detcas_lin1_wf g : greach1 g → wf (erase (gx g)).
  Proof. apply (detcas_linw_wf false h_aba reach1_inv). Qed.
  Theorem detcas_lin1_cut_off_recovered g i : greach1 g → cut_off (erase (gx g)) i →
    recovered (erase (gx g)) i ∨
    ∃ t, tr t ∧ activeb (pc (th (gs g) t)) = true ∧ i = oid t (kk (th (gs g) t)).
  Proof. apply (detcas_linw_cut_off_recovered false h_aba reach1_inv). Qed.
  Theorem detcas_lin1_detectable g : greach1 g → (∀ t, tr t → activeb (pc (th (gs g) t)) = false) →
    detectable cas_regs (erase (gx g)).
  Proof. apply (detcas_linw_detectable false h_aba reach1_inv). Qed.
  Theorem detcas_lin1_per_location g x : greach1 g →
    durably_linearizable (obj_spec (λ _ : nat, cas_reg) x) (erase (gx g) |_ x).
  Proof. apply (detcas_linw_per_location false h_aba reach1_inv). Qed.
  Theorem detcas_lin1_results g t k v : greach1 g → tr t →
    Return (oid t k) v ∈ erase (gx g) ∨ Recover (oid t k) v ∈ erase (gx g) →
    res (th (gs g) t) !! k = Some v ∧ (v = true ↔ eff NL (gs g) t k).
  Proof. apply (detcas_linw_results false h_aba reach1_inv). Qed.
End instances.

Section not_vacuous.
  Tactic Notation "gs_go" uconstr(c) :=
    eapply rtc_l_eq; [apply g_step; apply c; first [exact I | side] | norm_state |].

  (** A full crash of thread 1's only model ([N = 1]) keeping [keep L]
      writes of line [L]. *)
  Ltac gcrash_go keep :=
    match goal with |- rtc (gstep ?tw ?aba ?N ?NL) ?g _ =>
      let x := eval vm_compute in (gs g) in
      let T1 := eval vm_compute in (reinit N NL x keep 1) in
      eapply rtc_l_eq; [apply (g_crash tw aba N NL g keep (upd (th x) 1 T1));
        [side | (intros u [??]; destruct u as [|[|]]; [lia | vm_compute; reflexivity | lia])
              | (intros u Hu; unfold upd; destruct (decide (u = 1)) as [->|];
                 [exfalso; apply Hu; unfold DetCasPx.tr; lia | done])]
       | norm_state |]
    end.

  (** One thread, one location holding 0: CAS(0, 5, 1) fails (L26, L28:
      its failure point), writes its failure memento (L30) and writes it
      back; a full crash keeps the memento; recovery (④) returns ERR. *)
  Lemma detcas_lin_not_vacuous_run (tw : bool) (aba : state → nat → lword → Prop) :
    ∃ g, greach tw aba 1 1 g ∧ (∀ t, tr 1 t → activeb (pc (th (gs g) t)) = false) ∧
      erase (gx g) = [Invoke (oid 1 0) 1 (0, (5, 1)); Crash; Recover (oid 1 0) false].
  Proof.
    destruct tw; (eexists; split; [| split];
      [ unfold greach, ginit;
        gs_go (SStart _ _ _ _ _ 1 0 5 1);
        gs_go (S26fail _ _ _ _ _ 1 true 0);
        gs_go (SFail _ _ _ _ _ 1 true 0);
        gs_go (SFailF _ _ _ _ _ 1);
        gcrash_go (λ L : nat, match L with 6 => 1 | _ => 0 end);
        gs_go (SRec4 _ _ _ _ _ 1);
        gs_go (SCommit _ _ _ _ _ 1 false);
        apply rtc_refl
      | intros t [??]; destruct t as [|[|]]; [lia | vm_compute; reflexivity | lia]
      | vm_compute; reflexivity ]).
  Qed.

  (** The theorems are not about an empty set of histories: a run whose
      history has an operation cut off by a crash and then recovered (with
      the result it took effect with), detectable. *)
  Theorem detcas_lin_not_vacuous :
    ∃ g, greach true any_run 1 1 g ∧
      erase (gx g) = [Invoke (oid 1 0) 1 (0, (5, 1)); Crash; Recover (oid 1 0) false] ∧
      cut_off (erase (gx g)) (oid 1 0) ∧ recovered (erase (gx g)) (oid 1 0) ∧
      detectable cas_regs (erase (gx g)).
  Proof.
    destruct (detcas_lin_not_vacuous_run true any_run) as (g & Hg & Hq & Eh). exists g. split_and!; [done | done | | |].
    - rewrite Eh. exists [], [], [Recover (oid 1 0) false], 1, (0, (5, 1)). split; [done |].
      intros v Hin. by apply elem_of_nil in Hin.
    - rewrite Eh. exists false. by right; right; left.
    - by apply (detcas_lin_detectable 1 1).
  Qed.

  (** The same run in the one-word model under H-ABA (the run has no
      successful first plain CAS, so the premise constrains nothing). *)
  Theorem detcas_lin1_not_vacuous :
    ∃ g, greach false h_aba 1 1 g ∧
      erase (gx g) = [Invoke (oid 1 0) 1 (0, (5, 1)); Crash; Recover (oid 1 0) false] ∧
      recovered (erase (gx g)) (oid 1 0) ∧ detectable cas_regs (erase (gx g)).
  Proof.
    destruct (detcas_lin_not_vacuous_run false h_aba) as (g & Hg & Hq & Eh). exists g. split_and!; [done | done | |].
    - rewrite Eh. exists false. by right; right; left.
    - by apply (detcas_lin1_detectable 1 1).
  Qed.
End not_vacuous.

(** * Memento's detectable CAS (two-word location, and one-word under H-ABA): detectable histories

    [DetCasPxTwoWord.v] proves the detectable CAS of the seed paper (seed
    001, §3, Algorithms 1 and 2) detectable on the model's states, for the
    location the crate ships by default ([impl/perdure-memento/src/cas.rs],
    [DetectableCasAtomic::at], [TwoWord]), in every run, without a premise
    ([detcas_px2_detectable]).  This file states it over the histories of
    [Core/History.v] and the verdicts of [Core/DurableLin.v]: every run of
    that model ([step N NL fixed2 any_run]: [N] threads, [NL] locations,
    helping, full-system and thread crashes, loads) is paired with a ghost
    history of invoke, return, crash and recover events with linearization
    points ([gstep]), and those histories are durably linearizable for the
    sequential specification of [NL] CAS registers with loads ([cas_regs]:
    the operation [(x, CAS old new)] is CAS(old, new) on location [x],
    returning [RB true] iff the register held [old]; [(x, LOAD)] returns
    the register's value, [RV v]; every register starts at 0), and
    detectable for their CASes (a LOAD is not detectable, in the seed as in
    the code: a LOAD a crash cut off is not recovered).

    The history ([gx], built step by step from the model's steps; Rust:
    [cas.rs] [DetectableCasAtomic::cas] and its recovery,
    [DetectableCasAtomic::load], [runtime.rs] [Handle::try_run_root],
    [Runtime::open]):
    - [Invoke (oid t k) t (x, CAS old new)] when thread [t] starts its
      invocation [k] (L5–L8, or L9 in recovery mode: [SStart],
      [SStartRec]); [oid] numbers the pairs [(t, k)];
    - [Return] when the invocation commits ([SCommit], [try_run_root]'s
      commit) with the result it commits, or [Recover] if a full crash cut
      it off ([gc]): the result recovery returned (④ ERR, ⑤–⑨ OK);
    - [Invoke (lid t n) t (y, LOAD)] when thread [t] starts its LOAD of [y]
      (Algorithm 1 L1, [SLoad]; [lid] numbers a thread's LOADs apart from
      its CASes, [gl] is the ghost's count); [Return (lid t n) (RV v)] when
      LOAD returns the value [v] LOADHELP returned ([SLoadRet]);
    - [Crash] at each full crash ([g_crash]); a thread crash ([STCrash]) is
      no event ([History.v]'s crash is a full-system crash): the operation
      stays pending, its recovery runs in the same thread, and it returns;
      a LOAD runs again from its first load ([DetCasPx.v]'s [tcrash_pc]);
      a full crash cuts a LOAD off for good (the thread is idle after it).
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
      specification ([cfin_filter]);
    - a LOAD at the step where LOADHELP returns the clean value [v] (L3 in
      [SLoad], L7 in [SH5clean], L11/L14 in [SH11], L21 in [SH18ok], L19 in
      [SH18fail]): the location's visible word is then clean and holds [v],
      so the register holds [v] ([dval_clean], [lp_run]).  If a thread crash
      drops the value before LOAD returns, the LOAD loads again and its
      point is removed ([rm]): a LOAD changes no register.
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
    - [detcas_lin_durably_linearizable]: every ghost run's history, CASes
      and LOADs, is durably linearizable for [cas_regs], the ghost points
      being the witness: a LOAD returns the value its register holds at its
      point; [detcas_lin_per_location]: each location's projection is
      durably linearizable for one CAS register ([DurableLin.v]'s
      locality); [detcas_lin_wf]: the histories are well formed;
    - [detcas_lin_cut_off_recovered]: every CAS ([cas_op]: invoked as a
      CAS) a crash cut off is recovered -- with the result it took effect
      with: a [recover] comes after the operation's point, with its value --
      or is the operation its thread is still running (its recovery has not
      returned yet);
    - [detcas_lin_detectable]: once no thread is inside a detectable CAS
      (every recovery returned), the history is [detectable_for] its CASes
      ([DurableLin.v]: durably linearizable, for the registers with their
      loads, and every cut-off CAS recovered; a cut-off LOAD need not be);
      [DurableLin.v]'s [detectable_for] is meant for histories that end
      after the recoveries (it is not prefix-closed), hence the premise;
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
      the kernel to check, so the run kept here is the failure's);
    - [detcas_lin_load_not_vacuous]: an explicit run (two threads, one
      location) whose history has a LOAD: thread 1's CAS(0, 5) takes effect
      and cleans the location, thread 2 LOADs it and returns 5 (its point
      after the CAS's), then thread 1 returns OK; detectable.
    - the one-word form under H-ABA: the same statements
      ([detcas_lin1_every_run], [detcas_lin1_durably_linearizable],
      [detcas_lin1_per_location], [detcas_lin1_wf],
      [detcas_lin1_cut_off_recovered], [detcas_lin1_detectable],
      [detcas_lin1_results], [detcas_lin1_not_vacuous],
      [detcas_lin1_load_not_vacuous]) for the seed's
      one-word location ([DetCasPx.v]'s [step N NL fixed h_aba]: every first
      plain CAS satisfies the premise [h_aba], the precondition of
      [UniqueCasAtomic::at_unique] worded as the crate's docs word it).  The
      proofs are one: from [Section lin] to [End lin] they hold for any word
      form [tw] and premise [aba] whose reachable states satisfy
      [DetCasPx.v]'s [inv] ([Hreach_inv]); the two-word form discharges it
      by [DetCasPxTwoWord.v]'s [tw_reachable_inv], the one-word form under
      H-ABA by [DetCasPx.v]'s [reachable_inv].
    Everything rests on the invariant [ginv] ([ginv_init], [ginv_nc] for a
    step of one thread -- [ginv_cas] if it moves no LOAD, [ginv_load] if it
    does ([lcls]: how a step moves a LOAD) --, [ginv_crash] for a full
    crash, [greach_ginv]; [linv]: what the history says of the LOADs),
    derived from [DetCasPx.v]'s [inv] ([Hreach_inv]: its
    [i_once], [i_loc], [i_cl], [i_mmt], [i_help], [pcok]), not re-proved.
    The steps from [ginv] to the theorems that do not depend on the model
    are [DurableLin.v]'s (e), shared with [CheckpointPxLin.v] and
    [InsDelPxLin.v]: [current_across_crash] ([ginv_crash]),
    [rtc_preserved] ([greach_ginv]), [ghost_runs]
    ([detcas_linw_every_run]), [durably_linearizable_erase], and
    [numbered_for_cut_off_recovered], [numbered_for_detectable] for the
    [..._cut_off_recovered], [..._detectable] theorems ([greach_numbered]:
    the history's operations other than LOADs are the threads' numbered
    invocations).

    What the model abstracts: what [DetCasPx.v] and [DetCasPxTwoWord.v]
    abstract (SC steps, each word its own line, each detectable CAS a root
    operation of its own, no memento clearing, values naturals, the 16-byte
    location one atomic word; a LOAD an operation of its own, outside the
    CASes' root operations, run again after a thread crash); the history is
    a ghost of the model's steps (an invocation is invoked at its start,
    L5–L8, and returns at its commit; a LOAD is invoked at L1 and returns
    the value LOADHELP returned); the LOADs' ids are the ghost's ([lid],
    the code has none); thread crashes are not events; the registers'
    initial value is 0.  Not covered: multi-CAS root operations (the replay
    of ⑤); the value returned with ERR (a failed CAS's [Err(v)]); liveness. *)
From Coq Require Import Lia.
From stdpp Require Import base list relations countable.
From perdure.Core Require Import Px86 PxPersist.
From perdure.Memento Require Import DetCasPx DetCasPxBugs DetCasPxTwoWord.
From perdure.Core Require Import History DurableLin.
From stdpp Require Import list.

(** ** The sequential specification: CAS registers with loads *)

(** The operations on a register: [CAS old new] and [LOAD]; their results:
    a CAS's OK or ERR ([RB true], [RB false]), a LOAD's value ([RV v]). *)
Inductive rop := CAS (old new : nat) | LOAD.
Inductive rval := RB (ok : bool) | RV (v : nat).
Global Instance rop_eq_dec : EqDecision rop.
Proof. solve_decision. Defined.
Global Instance rval_eq_dec : EqDecision rval.
Proof. solve_decision. Defined.

(** A CAS register: [CAS old new] returns [true] and installs [new] iff the
    value is [old], else returns [false] and changes nothing; [LOAD]
    returns the value. *)
Definition reg_step (σ : nat) (o : rop) (r : rval) (σ' : nat) : Prop :=
  match o, r with
  | CAS old new, RB b => if b then σ = old ∧ σ' = new else σ ≠ old ∧ σ' = σ
  | LOAD, RV v => v = σ ∧ σ' = σ
  | _, _ => False
  end.
Definition cas_reg : seq_spec nat rop rval := SeqSpec 0 reg_step.

(** The locations side by side: operation [(x, CAS old new)] is
    [CAS(old, new)] on location [x], [(x, LOAD)] a load of [x] (every
    location starts at 0). *)
Notation cop := (nat * rop)%type.
Definition cas_regs : seq_spec (nat → nat) cop rval := prod_spec (λ _ : nat, cas_reg).

(** A register's run, computed: [Some] final value, or [None] if a step is
    not the specification's. *)
Fixpoint cfin (σ : nat) (l : list (rop * rval)) : option nat :=
  match l with
  | [] => Some σ
  | (CAS o n, RB b) :: l' =>
      if b then (if decide (σ = o) then cfin n l' else None)
      else (if decide (σ = o) then None else cfin σ l')
  | (LOAD, RV v) :: l' => if decide (v = σ) then cfin σ l' else None
  | _ :: _ => None
  end.

Lemma cfin_runs σ l σ' : cfin σ l = Some σ' → runs cas_reg σ l.
Proof.
  revert σ. induction l as [| [[o n |] [b | v]] l IH]; intros σ H; [constructor | | done | done |].
  - simpl in H. destruct b; case_decide; try done.
    + econstructor; [| by apply IH]. simpl. by split.
    + econstructor; [| by apply IH]. simpl. by split.
  - simpl in H. case_decide; [| done]. econstructor; [| by apply IH]. simpl. by split.
Qed.

Lemma cfin_app σ l1 l2 : cfin σ (l1 ++ l2) = cfin σ l1 ≫= λ σ1, cfin σ1 l2.
Proof.
  revert σ. induction l1 as [| [[o n |] [b | v]] l1 IH]; intros σ; [done | | done | done |]; simpl.
  - destruct b; case_decide; simpl; by rewrite ?IH.
  - case_decide; simpl; by rewrite ?IH.
Qed.

(** The operations' effects on location [x], in order. *)
Definition locx (x : nat) (l : list (xevent cop rval)) : list (rop * rval) :=
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

(** A point that changes no register: a failed CAS or a load. *)
Definition readonly (op : cop) (v : rval) : Prop := v = RB false ∨ op.2 = LOAD.

(** Removing points that change no register keeps a run's result. *)
Lemma cfin_filter x σ σ' (P : xevent cop rval → Prop) `{∀ e, Decision (P e)} l :
  (∀ i op v, ¬ P (XL i op v) → readonly op v) → (∀ e, P (XE e)) →
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
    pose proof (Hfl i op v HP) as Hro. rewrite locx_XL, cfin_app in Hl.
    case_decide; simpl in Hl; [| by apply IH].
    destruct op as [y [o n |]], Hro as [-> | Hro]; simpl in *; try done.
    + case_decide; [done |]. by apply IH.
    + destruct v as [b | w]; [done |]. case_decide; [subst; by apply IH | done].
Qed.

(** ** Operations, their ids, and what the ghost history reads of a state *)

(** The operation of an invocation: its location and arguments, chosen at
    its start and stable until it returns ([DetCasPx.v]). *)
Definition opof (T : tstate) : cop := (ax T, CAS (ao T) (an T)).
(* [oid], [oid_inj] (invocation [k] of thread [u]): Core/History.v. *)

(** The thread is inside a detectable CAS (started, not committed). *)
Definition activeb (p : tpc) : bool :=
  match p with PIdle | PLH KLoad _ _ | PLoad _ _ => false | _ => true end.
Definition isfail (p : tpc) : bool := match p with PFail _ _ => true | _ => false end.

(** The thread is inside a LOAD of [y]: running LOADHELP ([None]) or holding
    the value [v] it returns ([Some v]). *)
Definition ldv (p : tpc) : option (nat * option nat) :=
  match p with PLH KLoad y _ => Some (y, None) | PLoad y v => Some (y, Some v) | _ => None end.

(** The id of thread [u]'s LOAD number [n]: numbered apart from the
    invocations of detectable CASes ([oid u k], [u] a thread, so [u ≥ 1]). *)
Definition lid (u n : nat) : opid := oid 0 (oid u n).
Definition is_lid (i : opid) : Prop := ∃ u n, i = lid u n.
Lemma lid_inj u n u' n' : lid u n = lid u' n' → u = u' ∧ n = n'.
Proof. unfold lid. intros H. apply oid_inj in H as [_ H]. by apply oid_inj in H. Qed.
Lemma lid_oid u n u' k : 1 ≤ u' → lid u n ≠ oid u' k.
Proof. unfold lid. intros Hu H. apply oid_inj in H as [<- _]. lia. Qed.
Lemma oid_not_lid u k : 1 ≤ u → ¬ is_lid (oid u k).
Proof. intros Hu (u' & n & E). symmetry in E. by apply (lid_oid u' n u k Hu). Qed.
Lemma lid_is_lid u n : is_lid (lid u n).
Proof. by exists u, n. Qed.

(** The operations of a history invoked as detectable CASes (its
    detectable operations: LOADs are not). *)
Definition cas_op (h : history cop rval) (i : opid) : Prop := ∃ t x o n, Invoke i t (x, CAS o n) ∈ h.

(** A point of a LOAD has a value, a point of a CAS a result. *)
Definition xl_ok (e : xevent cop rval) : Prop :=
  match e with
  | XL i _ v => (is_lid i ∧ ∃ w, v = RV w) ∨ (¬ is_lid i ∧ ∃ b, v = RB b)
  | XE _ => True
  end.

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
    3: { apply (ms_append s _ (ax (th s t)) (LW (an (th s t)) (Some (p, t)) (if tw then town else 0) (Some (t, kk (th s t))))); [done | | | | | ].
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
    13: { pose proof (pcok_of N NL s t Hi H) as Hp. unfold pcok in Hp. rewrite H0 in Hp.
          destruct Hp as [_ [Hy (i & p & u & k & Ha & Hla & _)]].
          apply (ms_append s _ y (LW (lv a) None 0 None)); [done | done | | | | ].
          - intros x Hx. vnorm. rewrite hx_wx by (try apply ids_ok_pfence; try apply nl_ok_pfence; done). by vnorm.
          - apply Hsame; done.
          - intros _. unfold visx in H1. rewrite hx_pfence in H1. fold (visx s y) in H1. unfold phys2, phys in H1. injection H1 as Hv Ha' _.
            assert (la (visx s y) ≠ None) as Hn by (rewrite Ha', Hla; done).
            exists (visx s y). split_and!; [by apply visx_ann' | done | done].
          - intros u' Hn. done. }
    (* S38: may append the clean word *)
    19: { destruct (decide _) as [Heq | Hneq].
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
    19: { apply (ms_frame s); [done | done | intros; by vnorm |].
          intros u x j a Hu Hx Ha Hlg. rewrite th_setth in Hlg |- *. case_decide as E; [subst u | done].
          exfalso. cbn [kk] in Hlg. pose proof (inv_no_future_effect N NL s t (S (kk (th s t))) Hi H) as Hf.
          assert (eff s t (S (kk (th s t)))) as He by (exists x, j; split; [done | by exists a]).
          specialize (Hf He). lia. }
    (* the crash: every location keeps a prefix *)
    27: { assert (Hhx : ∀ x, hx (St (crash_pm (pm s) keep) (wt s) (clock s) f) x = take (keep (LX x)) (hx s x)).
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
    th s' t = with_pc (th s t) (lh_ret (th s t) c y v) → hm s' t = hm s t →
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
    - apply (cls_pc s s' t (PLoad y v)); [by left | done | by rewrite Ha | by rewrite Hf].
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
  Lemma act_tcrash_pc p : activeb (tcrash_pc p) = activeb p.
  Proof. destruct p; try destruct c; reflexivity. Qed.
  Lemma isfail_tcrash_pc p : isfail (tcrash_pc p) = false.
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
    (* the location written, if any, is below [NL] *)
    assert (∀ t x0 c0, x0 < NL → ∀ u, hm (pwrite (pfence s t) (LX x0) c0) u = hm s u) as Hwx
      by (intros t x0 c0 Hx0 u; rewrite hm_pw_other; [by vnorm | by apply ids_ok_pfence
          | rewrite pfence_lines, Hnl; by apply LX_lt | by apply LX_LM]).
    destruct Hs;
      try (unfold s2 in * ); try (unfold s1 in * ); try (unfold w in * ); try (unfold T in * );
      try (unfold m in * ); try (unfold thv in * );
      cbn [c33 c35 c38f c38wb c20 chelp c2w fixedw] in *;
      [left; exists t .. | right; by exists keep, f].
    all: try (pose proof (pcok_of N NL s t Hi H) as Hp; unfold pcok in Hp; rewrite H0 in Hp).
    all: assert (Ht : t ≤ N) by (unfold DetCasPx.tr in H; lia).
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
      right; right. unfold dec. rewrite Htt, E. cbn [pc isfail tcrash_pc crash_pc orb]. split; [done |].
      rewrite (lastmf_eq s); [| by vnorm | by rewrite Htt]. apply lastmf_nokm. by destruct Hq as (_ & _ & (_ & ? & _) & _).
    - apply (cls_pc _ _ _ (tcrash_pc (pc (th s t)))); [left; by rewrite Htt | by vnorm | apply act_tcrash_pc |].
      by rewrite isfail_tcrash_pc.
  Qed.

  (** How a step moves thread [t]'s LOAD: not at all; its start ([SLoad]);
      LOADHELP's return of a clean value [v] (at once in [SLoad], or in
      [SH5clean], [SH11], [SH18ok], [SH18fail]), after which the location's
      visible word is clean and holds [v]; LOAD's return ([SLoadRet]), or a
      thread crash that runs it again from its first load ([STCrash]). *)
  Definition lcls (s s' : state) (t : nat) : Prop :=
    ldv (pc (th s' t)) = ldv (pc (th s t)) ∨
    (pc (th s t) = PIdle ∧ ∃ y, y < NL ∧ ldv (pc (th s' t)) = Some (y, None)) ∨
    (∃ y v, (pc (th s t) = PIdle ∨ ldv (pc (th s t)) = Some (y, None)) ∧ pc (th s' t) = PLoad y v ∧ y < NL ∧
       la (visx s' y) = None ∧ lv (visx s' y) = v) ∨
    (∃ y v, pc (th s t) = PLoad y v ∧ (pc (th s' t) = PIdle ∨ ldv (pc (th s' t)) = Some (y, None))).

  (** A full crash: what [step_nc] and [step_lcls] set apart. *)
  Definition full_crash (s s' : state) : Prop :=
    ∃ keep f, p_crash_ok (pm s) keep ∧ (∀ u, tr u → f u = reinit N NL s keep u) ∧
      (∀ u, ¬ tr u → f u = th s u) ∧ s' = St (crash_pm (pm s) keep) (wt s) (clock s) f.

  Lemma step_lcls s s' : inv s → step s s' → (∀ u, lcls s s' u) ∨ full_crash s s'.
  Proof.
    intros Hi Hs. pose proof (i_ids _ _ _ Hi) as Hids. pose proof (i_nl _ _ _ Hi) as Hnl.
    destruct Hs;
      try (unfold s2 in * ); try (unfold s1 in * ); try (unfold w in * ); try (unfold T in * );
      try (unfold m in * ); try (unfold thv in * );
      cbn [c33 c35 c38f c38wb c20 chelp c2w fixedw] in *;
      [left .. | right; by exists keep, f].
    all: repeat match goal with |- context [if decide ?P then _ else _] => destruct (decide P) end.
    all: intros u; unfold lcls; rewrite ?th_setth; destruct (decide (u = t)) as [-> | Hne]; [| left; reflexivity].
    (* steps that leave the LOAD alone *)
    all: try (left; cbn [with_pc with_own pc]; rewrite H0; first [reflexivity | destruct c; reflexivity]; fail).
    all: try (left; cbn [with_pc with_own pc]; rewrite H0; unfold lh_enter; destruct (la _); cbn [lh_ret ldv];
              try case_decide; reflexivity; fail).
    (* LOAD returns, or a thread crash restarts it *)
    all: try (right; right; right; do 2 eexists; split; [exact H0 | left; reflexivity]; fail).
    all: try (cbn [with_pc pc]; destruct (pc (th s t)) as [| | [] y h | | | | | | | | | | y v]; cbn [tcrash_pc crash_pc];
              first [left; reflexivity | right; right; right; exists y, v; split; [reflexivity | right; reflexivity]]; fail).
    (* LOAD's start *)
    all: try (cbn [with_pc pc]; unfold lh_enter; destruct (la (visx s y)) eqn:E; cbn [lh_ret];
              [right; left; split; [done | exists y; split; [done | reflexivity]]
              | right; right; left; exists y, (lv (visx s y)); split_and!; [by left | reflexivity | done | exact E | reflexivity]];
              fail).
    (* LOADHELP's returns *)
    all: pose proof (pcok_of N NL s t Hi H) as Hp; unfold pcok in Hp; rewrite H0 in Hp; destruct Hp as [_ [Hy _]].
    all: cbn [with_pc pc]; rewrite H0; destruct c as [p town | |]; cbn [lh_enter lh_ret ldv];
      try (try (unfold lh_enter; destruct (la _)); cbn [lh_ret]; try case_decide; left; reflexivity; fail).
    - right; right; left. exists y, (lv (visx s y)). split_and!; [by right | reflexivity | done | exact H1 | reflexivity].
    - unfold lh_enter. destruct (la (visx s y)) eqn:E; cbn [lh_ret]; [left; reflexivity |].
      right; right; left. exists y, (lv (visx s y)). split_and!; [by right | reflexivity | done | exact E | reflexivity].
    - assert (Hv : visx (pwrite (pfence s t) (LX y) (CLoc (LW (lv a) None 0 None))) y = LW (lv a) None 0 None)
        by (unfold visx; rewrite (hx_wx N NL) by (try apply ids_ok_pfence; try apply (nl_ok_pfence N NL); done);
            by rewrite decide_True, last_snoc).
      right; right; left. exists y, (lv a). split_and!; [by right | reflexivity | done | | ];
        change (visx (setth (pwrite (pfence s t) (LX y) (CLoc (LW (lv a) None 0 None))) t
                  (with_pc (th s t) (PLoad y (lv a)))) y) with (visx (pwrite (pfence s t) (LX y) (CLoc (LW (lv a) None 0 None))) y);
        by rewrite Hv.
    - unfold lh_enter. destruct (la (visx (pfence s t) y)) eqn:E; cbn [lh_ret]; [left; reflexivity |].
      right; right; left. exists y, (lv (visx (pfence s t) y)). split_and!; [by right | reflexivity | done | exact E | reflexivity].
  Qed.

  (** Every step is a step of one thread, with its LOAD's move, or a full
      crash. *)
  Lemma step_ncl s s' : inv s → step s s' → (∃ t, nc s s' t ∧ lcls s s' t) ∨ full_crash s s'.
  Proof.
    intros Hi Hs. destruct (step_lcls s s' Hi Hs) as [Hl | Hc]; [| by right].
    destruct (step_nc s s' Hi Hs) as [[t Hn] | Hc]; [left; by exists t | right; exact Hc].
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

(** The model's state, the history with its linearization points, for
    each thread whether a crash cut its operation off, and the number of
    its current (or next) LOAD. *)
Record gstate := G { gs : state; gx : list (xevent cop rval); gc : nat → bool; gl : nat → nat }.

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
  Definition spg (s s' : state) (u : nat) : option (opid * cop * rval) :=
    if durb s' u (kk (th s u)) && negb (durb s u (kk (th s u)))
    then Some (oid u (kk (th s u)), opof (th s u), RB true) else None.
  Definition spl (s s' : state) : list (opid * cop * rval) := omap (spg s s') (seq 1 N).
  Definition sp (s s' : state) : list (xevent cop rval) := map to_xl (spl s s').

  (** The events of thread [u]'s step: its invocation, its decision to fail
      (a point), its return ([c u]: after a crash, a [recover]). *)
  Definition evu (s s' : state) (c : nat → bool) (u : nat) : list (xevent cop rval) :=
    (if negb (activeb (pc (th s u))) && activeb (pc (th s' u))
     then [XE (Invoke (oid u (kk (th s' u))) u (opof (th s' u)))] else []) ++
    (if negb (dec s u) && dec s' u then [XL (oid u (kk (th s' u))) (opof (th s' u)) (RB false)] else []) ++
    (if bool_decide (kk (th s' u) = S (kk (th s u)))
     then [XE ((if c u then Recover else Return) (oid u (kk (th s u))) (RB (default false (last (res (th s' u))))))]
     else []).
  (** The events of thread [u]'s LOAD ([l u]: its number): its invocation,
      its point where LOADHELP returns the clean value [v] (the register
      then holds [v]), its return. *)
  Definition evl (s s' : state) (l : nat → nat) (u : nat) : list (xevent cop rval) :=
    (match ldv (pc (th s u)), ldv (pc (th s' u)) with
     | None, Some (y, _) => [XE (Invoke (lid u (l u)) u (y, LOAD))] | _, _ => [] end) ++
    (match ldv (pc (th s u)), ldv (pc (th s' u)) with
     | Some (_, Some _), _ => [] | _, Some (y, Some v) => [XL (lid u (l u)) (y, LOAD) (RV v)] | _, _ => [] end) ++
    (match ldv (pc (th s u)), ldv (pc (th s' u)) with
     | Some (_, Some v), None => [XE (Return (lid u (l u)) (RV v))] | _, _ => [] end).
  Definition ev (s s' : state) (c : nat → bool) (l : nat → nat) : list (xevent cop rval) :=
    mjoin ((λ u, evu s s' c u ++ evl s s' l u) <$> seq 1 N).
  (** The number of thread [u]'s LOAD after the step: the next one once its
      LOAD ended (returned, or cut off by a full crash).  (A sum, not a
      [match] around [l u]: an explicit run's normal form stays small.) *)
  Definition lnext (s s' : state) (l : nat → nat) (u : nat) : nat :=
    l u + match ldv (pc (th s u)), ldv (pc (th s' u)) with Some _, None => 1 | _, _ => 0 end.

  (** The thread holds its LOAD's value. *)
  Definition lval (p : tpc) : bool := match p with PLoad _ _ => true | _ => false end.

  (** A point whose decision the step dropped, to be taken again: a failure
      (a crash lost the failure memento, or came before it: the invocation
      will run again), or a LOAD's (a thread crash lost its value: it loads
      again). *)
  Definition stale (s' : state) (l : nat → nat) (e : xevent cop rval) : bool :=
    match e with
    | XL i _ (RB false) => existsb (λ u, bool_decide (i = oid u (kk (th s' u))) && negb (dec s' u)) (seq 1 N)
    | XL i (_, LOAD) (RV _) => existsb (λ u, bool_decide (i = lid u (l u)) && negb (lval (pc (th s' u)))) (seq 1 N)
    | _ => false
    end.
  Definition rm (s' : state) (l : nat → nat) (xs : list (xevent cop rval)) : list (xevent cop rval) :=
    filter (λ e, stale s' l e = false) xs.

  (** The steps: each step of one thread of the model ([g_step]), or a
      full crash with its [crash] event ([g_crash]). *)
  Inductive gstep : gstate → gstate → Prop :=
  | g_step g s' t : step (gs g) s' → nc N NL (gs g) s' t → lcls NL (gs g) s' t →
      gstep g (G s' (rm s' (lnext (gs g) s' (gl g)) (gx g ++ sp (gs g) s' ++ ev (gs g) s' (gc g) (gl g)))
                 (λ u, gc g u && activeb (pc (th s' u))) (lnext (gs g) s' (gl g)))
  | g_crash g keep f : p_crash_ok (pm (gs g)) keep →
      (∀ u, tr u → f u = reinit N NL (gs g) keep u) → (∀ u, ¬ tr u → f u = th (gs g) u) →
      gstep g (G (St (crash_pm (pm (gs g)) keep) (wt (gs g)) (clock (gs g)) f)
                 (rm (St (crash_pm (pm (gs g)) keep) (wt (gs g)) (clock (gs g)) f)
                    (lnext (gs g) (St (crash_pm (pm (gs g)) keep) (wt (gs g)) (clock (gs g)) f) (gl g))
                    (gx g ++ sp (gs g) (St (crash_pm (pm (gs g)) keep) (wt (gs g)) (clock (gs g)) f) ++ [XE Crash]))
                 (λ u, activeb (pc (f u)))
                 (lnext (gs g) (St (crash_pm (pm (gs g)) keep) (wt (gs g)) (clock (gs g)) f) (gl g))).

  Definition ginit : gstate := G (init N NL) [] (λ _, false) (λ _, 0).
  Definition greach (g : gstate) : Prop := rtc gstep ginit g.

  (** *** Removing dropped points *)
  Lemma erase_rm s' l xs : erase (rm s' l xs) = erase xs.
  Proof.
    induction xs as [| e xs IH]; [done |]. unfold rm. rewrite filter_cons. fold (rm s' l xs).
    case_decide as Hs; destruct e as [e | i op v]; simpl; rewrite ?IH; done.
  Qed.

  Lemma elem_of_rm s' l xs e : e ∈ rm s' l xs ↔ e ∈ xs ∧ stale s' l e = false.
  Proof. unfold rm. rewrite elem_of_list_filter. tauto. Qed.

  Lemma stale_spec s' l i op : stale s' l (XL i op (RB false)) = true ↔
    ∃ u, tr u ∧ i = oid u (kk (th s' u)) ∧ dec s' u = false.
  Proof.
    assert (stale s' l (XL i op (RB false)) =
              existsb (λ u, bool_decide (i = oid u (kk (th s' u))) && negb (dec s' u)) (seq 1 N)) as ->
      by (by destruct op as [y []]).
    rewrite existsb_exists. split.
    - intros (u & Hu%elem_of_list_In%elem_of_seq & Hb). apply andb_true_iff in Hb as [Hi Hd].
      apply bool_decide_eq_true in Hi. exists u. split_and!; [unfold DetCasPx.tr; lia | done | by destruct (dec s' u)].
    - intros (u & Hu & Hi & Hd). exists u. split; [apply elem_of_list_In, elem_of_seq; unfold DetCasPx.tr in Hu; lia |].
      rewrite Hd. apply andb_true_iff. split; [by apply bool_decide_eq_true | done].
  Qed.

  Lemma stale_lspec s' l i y w : stale s' l (XL i (y, LOAD) (RV w)) = true ↔
    ∃ u, tr u ∧ i = lid u (l u) ∧ lval (pc (th s' u)) = false.
  Proof.
    cbn [stale]. rewrite existsb_exists. split.
    - intros (u & Hu%elem_of_list_In%elem_of_seq & Hb). apply andb_true_iff in Hb as [Hi Hd].
      apply bool_decide_eq_true in Hi. exists u. split_and!; [unfold DetCasPx.tr; lia | done | by destruct (lval _)].
    - intros (u & Hu & Hi & Hd). exists u. split; [apply elem_of_list_In, elem_of_seq; unfold DetCasPx.tr in Hu; lia |].
      rewrite Hd. apply andb_true_iff. split; [by apply bool_decide_eq_true | done].
  Qed.

  (** A stale point is a failure's or a LOAD's (it changes no register). *)
  Lemma stale_readonly s' l i op v : stale s' l (XL i op v) = true → readonly op v.
  Proof.
    intros H. destruct op as [y [o n |]], v as [[] | w]; cbn in H; try discriminate H; unfold readonly;
      first [by left | by right].
  Qed.

  Lemma prefix_ok_rm s' l xs : prefix_ok point_ok xs →
    (∀ i op v, stale s' l (XL i op v) = true → ∀ v', XE (Return i v') ∉ xs ∧ XE (Recover i v') ∉ xs) →
    prefix_ok point_ok (rm s' l xs).
  Proof.
    intros Hok Hst m1 x m2 Hm. unfold rm in Hm.
    destruct (filter_eq_app_cons _ _ _ _ _ Hm) as (l1 & l2 & El & <- & _).
    assert (x ∈ rm s' l xs) as Hx by (unfold rm; rewrite Hm; apply elem_of_app; right; by left).
    apply elem_of_rm in Hx as [_ Hxs].
    pose proof (Hok l1 x l2 El) as Hp. fold (rm s' l l1).
    destruct x as [[i t op | i v | | i v] | i op v]; simpl in Hp |- *; try done.
    - destruct Hp as [op Hin]. exists op. apply elem_of_rm. split; [done |].
      destruct (stale s' l (XL i op v)) eqn:E; [exfalso | done].
      apply (proj1 (Hst i op v E v)). rewrite El. apply elem_of_app. right. by left.
    - destruct Hp as [op Hin]. exists op. apply elem_of_rm. split; [done |].
      destruct (stale s' l (XL i op v)) eqn:E; [exfalso | done].
      apply (proj2 (Hst i op v E v)). rewrite El. apply elem_of_app. right. by left.
    - destruct Hp as [[t Hinv] Hno]. split.
      + exists t. by rewrite erase_rm.
      + intros op' v' Hin. apply (Hno op' v'). by apply elem_of_rm in Hin as [? _].
  Qed.

  Lemma cfin_rm x σ σ' s' l xs : cfin σ (locx x xs) = Some σ' → cfin σ (locx x (rm s' l xs)) = Some σ'.
  Proof.
    apply cfin_filter.
    - intros i op v Hs. apply (stale_readonly s' l i). by destruct (stale s' l (XL i op v)).
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

Lemma locx_map_to_xl x (ps : list (opid * cop * rval)) :
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

  Lemma elem_of_spl s s' p : p ∈ spl s s' ↔ ∃ u, tr u ∧ p = (oid u (kk (th s u)), opof (th s u), RB true) ∧
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
      destruct (pc (th s u)) as [| | c y h | | | | | | | | | |]; try done; [exfalso; apply Hnk, Hp | | exfalso; apply Hnk, Hp].
      destruct c; try done. exfalso. apply Hnk, Hp.
  Qed.

  Lemma durable_act s u : inv s → tr u → durable s u (kk (th s u)) → activeb (pc (th s u)) = true.
  Proof.
    intros Hi Hu (x & j & Hx & Ht & _). pose proof (pcok_of N NL s u Hi Hu) as Hp. unfold pcok in Hp.
    assert (idleok N NL s u → False) as Hn by (intros [He _]; apply He; by exists x, j).
    destruct (activeb (pc (th s u))) eqn:E; [done | exfalso]. apply Hn.
    destruct (pc (th s u)) as [| | c y h | | | | | | | | | |]; try discriminate E; [exact Hp | | apply Hp].
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
    set (h := λ u, spg NL s s' u ≫= λ p : opid * cop * rval,
                     if decide (p.1.2.1 = x) then Some (p.1.2.2, p.2) else None).
    assert (Hh : ∀ u, h u ≠ None → durable s' u (kk (th s u)) ∧ ¬ durable s u (kk (th s u)) ∧
                   ax (th s u) = x ∧ h u = Some (CAS (ao (th s u)) (an (th s u)), RB true)).
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
      rewrite (omap_single h (seq 1 N) u0 (CAS (ao (th s u0)) (an (th s u0)), RB true)).
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

  (** What the history says of the threads' LOADs ([n u]: thread [u]'s
      current or next LOAD): the current one is invoked, pending, exactly
      while the thread is inside it, and has a point exactly while the
      thread holds its value, with that value; a LOAD's invocation is a
      [LOAD]. *)
  Record linv (s : state) (l : list (xevent cop rval)) (n : nat → nat) : Prop := {
    l_op : ∀ i t op, Invoke i t op ∈ erase l → is_lid i → op.2 = LOAD;
    l_act : ∀ u y o, tr u → ldv (pc (th s u)) = Some (y, o) →
      Invoke (lid u (n u)) u (y, LOAD) ∈ erase l ∧ ¬ finished (erase l) (lid u (n u)) ∧
      pending_on (erase l) u (lid u (n u));
    l_idle : ∀ u, tr u → ldv (pc (th s u)) = None → ¬ invoked (erase l) (lid u (n u));
    l_pts : ∀ u op v, tr u → XL (lid u (n u)) op v ∈ l ↔ ∃ y w, pc (th s u) = PLoad y w ∧ op = (y, LOAD) ∧ v = RV w;
  }.

  (** The invariant: the history with its points is a witness of durable
      linearizability (points well placed, running the registers to their
      durable values), well formed; its operations are the threads'
      invocations of detectable CASes and their LOADs; each thread's current
      invocation is invoked exactly when the thread is inside it, pending or
      cut off as [gc] says, and has a success point iff its first plain CAS
      is durable, a failure point iff it decided to fail; a pending
      operation is its thread's current invocation or LOAD ([linv]). *)
  Record ginv (g : gstate) : Prop := {
    g_r : reachable2 N NL (gs g);
    g_ok : prefix_ok point_ok (gx g);
    g_run : ∀ x, cfin 0 (locx x (gx g)) = Some (aval (gs g) x);
    g_wf : wf (erase (gx g));
    g_ids : ∀ i, invoked (erase (gx g)) i →
      (∃ u k, tr u ∧ k ≤ kk (th (gs g) u) ∧ i = oid u k) ∨ (∃ u k, tr u ∧ k ≤ gl g u ∧ i = lid u k);
    g_old : ∀ u k, tr u → k < kk (th (gs g) u) → finished (erase (gx g)) (oid u k);
    g_act : ∀ u, tr u → activeb (pc (th (gs g) u)) = true →
      Invoke (oid u (kk (th (gs g) u))) u (opof (th (gs g) u)) ∈ erase (gx g) ∧
      ¬ finished (erase (gx g)) (oid u (kk (th (gs g) u))) ∧
      (gc g u = false → pending_on (erase (gx g)) u (oid u (kk (th (gs g) u)))) ∧
      (gc g u = true → cut_off (erase (gx g)) (oid u (kk (th (gs g) u))));
    g_idle : ∀ u, tr u → activeb (pc (th (gs g) u)) = false →
      ¬ invoked (erase (gx g)) (oid u (kk (th (gs g) u))) ∧ gc g u = false;
    g_pts : ∀ u (op : cop) (v : bool), tr u → XL (oid u (kk (th (gs g) u))) op (RB v) ∈ gx g ↔
      op = opof (th (gs g) u) ∧ (if v then durable (gs g) u (kk (th (gs g) u)) else dec (gs g) u = true);
    g_pend : ∀ u j, pending_on (erase (gx g)) u j →
      (tr u ∧ activeb (pc (th (gs g) u)) = true ∧ j = oid u (kk (th (gs g) u)) ∧ gc g u = false) ∨
      (tr u ∧ ldv (pc (th (gs g) u)) ≠ None ∧ j = lid u (gl g u));
    g_xl : Forall xl_ok (gx g);
    g_ld : linv (gs g) (gx g) (gl g);
  }.

  Lemma hx_init x : hx (init N NL) x = [].
  Proof. unfold hx, hc. by rewrite ids_init. Qed.
  Lemma hm_init u : hm (init N NL) u = [].
  Proof. unfold DetCasPx.hm, hc. by rewrite ids_init. Qed.

  Lemma ginv_init : ginv (ginit N NL).
  Proof.
    split; cbn [gs gx gc gl ginit].
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
    - constructor.
    - split; cbn [erase omap].
      + by intros ??? ?%elem_of_nil.
      + intros u y o _ Hl. cbn in Hl. discriminate Hl.
      + by intros u _ _ (? & ? & ?%elem_of_nil).
      + intros u op v _. split; [by intros ?%elem_of_nil |]. intros (y & w & Hp & _). cbn in Hp. discriminate Hp.
  Qed.
End ginv.

(** Appending events to a history: what stays pending, what finishes. *)
Lemma pending_on_app {Op Val} (h E : history Op Val) t j :
  pending_on h t j → Crash ∉ E → (∀ v, Return j v ∉ E) → pending_on (h ++ E) t j.
Proof.
  intros (h1 & h2 & op & -> & Hc & Hr) HcE HrE. exists h1, (h2 ++ E), op. split_and!.
  - by rewrite <- app_assoc.
  - intros [? | ?]%elem_of_app; [by apply Hc | by apply HcE].
  - intros v [? | ?]%elem_of_app; [by apply (Hr v) | by apply (HrE v)].
Qed.

Lemma pending_on_app_inv {Op Val} (h E : history Op Val) t j :
  pending_on (h ++ E) t j → (∃ op, Invoke j t op ∈ E) ∨ (pending_on h t j ∧ Crash ∉ E ∧ ∀ v, Return j v ∉ E).
Proof.
  induction E as [| e E IH] using rev_ind; intros Hp.
  - right. rewrite app_nil_r in Hp. split_and!; [done | by intros ?%elem_of_nil | by intros v ?%elem_of_nil].
  - rewrite app_assoc in Hp. apply pending_on_snoc in Hp as [(o & ->) | (Hp & Hc & Hr)].
    + left. exists o. apply elem_of_app. right. by left.
    + destruct (IH Hp) as [(o & Hin) | (Hp' & HcE & HrE)].
      * left. exists o. apply elem_of_app. by left.
      * right. split_and!; [done | |].
        -- intros [? | ?%elem_of_list_singleton]%elem_of_app; [done | by subst].
        -- intros v [? | ?%elem_of_list_singleton]%elem_of_app; [by apply (HrE v) | subst; by apply (Hr v)].
Qed.

Lemma finished_app_inv {Op Val} (h E : history Op Val) j : finished (h ++ E) j → finished h j ∨ ∃ e, e ∈ E ∧ ends j e.
Proof.
  intros [[v Hin] | [v Hin]]; apply elem_of_app in Hin as [Hin | Hin].
  - left. left. by exists v.
  - right. by exists (Return j v).
  - left. right. by exists v.
  - right. by exists (Recover j v).
Qed.

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
  Notation linv := (linv N).


  Lemma stale_u s' n u op : tr u → stale s' n (XL (oid u (kk (th s' u))) op (RB false)) = negb (dec s' u).
  Proof.
    intros Hu. destruct (stale s' n _) eqn:E.
    - apply stale_spec in E as (u' & Hu' & Hi & Hd). apply oid_inj in Hi as [<- _]. by rewrite Hd.
    - destruct (dec s' u) eqn:Ed; [done | exfalso]. assert (stale s' n (XL (oid u (kk (th s' u))) op (RB false)) = true) as E'.
      { apply stale_spec. by exists u. }
      congruence.
  Qed.

  Lemma act_ax s u : inv s → tr u → activeb (pc (th s u)) = true → ax (th s u) < NL.
  Proof.
    intros Hi Hu Ha. pose proof (pcok_of N NL s u Hi Hu) as Hp. unfold pcok in Hp.
    destruct (pc (th s u)) as [| | c y h | | | | | | | [|] | | |]; try discriminate Ha;
      try (destruct c; try discriminate Ha); unfold lhpre, pre26, failok in Hp;
      repeat match goal with H : _ ∧ _ |- _ => destruct H end; subst; try assumption.
  Qed.

  Lemma eff_act s u : inv s → tr u → eff s u (kk (th s u)) → activeb (pc (th s u)) = true.
  Proof.
    intros Hi Hu He. pose proof (pcok_of N NL s u Hi Hu) as Hp. unfold pcok in Hp.
    assert (idleok N NL s u → False) as Hn by (intros [Hne _]; by apply Hne).
    destruct (activeb (pc (th s u))) eqn:E; [done | exfalso]. apply Hn.
    destruct (pc (th s u)) as [| | c y h | | | | | | | | | |]; try discriminate E; [exact Hp | | apply Hp].
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
  Lemma pts_keep s s' n l E u : inv s → dgrow s s' → tr u →
    kk (th s' u) = kk (th s u) → opof (th s' u) = opof (th s u) →
    (∀ op (v : bool), XL (oid u (kk (th s u))) op (RB v) ∈ l ↔ op = opof (th s u) ∧ (if v then durable s u (kk (th s u)) else dec s u = true)) →
    (∀ op (v : bool), XL (oid u (kk (th s u))) op (RB v) ∈ E ↔ v = false ∧ op = opof (th s u) ∧ dec s u = false ∧ dec s' u = true) →
    ∀ op (v : bool), XL (oid u (kk (th s' u))) op (RB v) ∈ rm s' n (l ++ sp s s' ++ E) ↔
      op = opof (th s' u) ∧ (if v then durable s' u (kk (th s' u)) else dec s' u = true).
  Proof.
    intros Hi Hg Hu Hk Ho Hl HE op v. rewrite elem_of_rm, !elem_of_app, Hk, Ho, elem_of_sp.
    assert (Hsp : (∃ i op' v', XL (oid u (kk (th s u))) op (RB v) = XL i op' v' ∧ (i, op', v') ∈ spl s s') ↔
              v = true ∧ op = opof (th s u) ∧ durable s' u (kk (th s u)) ∧ ¬ durable s u (kk (th s u))).
    { split.
      - intros (i & op' & v' & [= <- <- <-] & Hin). apply elem_of_spl in Hin as (u' & Hu' & [= Hid -> ->] & Hd & Hnd).
        apply oid_inj in Hid as [<- _]. done.
      - intros (-> & -> & Hd & Hnd). exists (oid u (kk (th s u))), (opof (th s u)), (RB true). split; [done |].
        apply elem_of_spl. by exists u. }
    rewrite Hsp, Hl, HE. destruct v.
    - cbn [stale]. split.
      + intros [[[-> Hd] | [(_ & -> & Hd & _) | (? & _)]] _]; [| by split | done].
        split; [done | by apply (durable_mono NL s s')].
      + intros [-> Hd]. split; [| done]. destruct (durb NL s u (kk (th s u))) eqn:Ed.
        * left. split; [done | by apply durb_spec].
        * right; left. split_and!; [done | done | done |]. intros Hd'. apply durb_spec in Hd'. congruence.
    - rewrite <- Hk, (stale_u s' n u op Hu), Hk. split.
      + intros [[[-> Hd] | [(? & _) | (_ & -> & _ & Hd')]] Hs].
        * split; [done |]. by destruct (dec s' u).
        * done.
        * done.
      + intros [-> Hd']. split; [| by rewrite Hd'].
        destruct (dec s u) eqn:Ed; [left; done | right; right; done].
  Qed.

  (** The stale points belong to invocations and LOADs that have not
      finished. *)
  Lemma stale_ok s' n (l E : list (xevent cop rval)) :
    (∀ u, tr u → ¬ finished (erase l ++ erase E) (oid u (kk (th s' u))) ∧ ¬ finished (erase l ++ erase E) (lid u (n u))) →
    ∀ i op v, stale s' n (XL i op v) = true → ∀ v', XE (Return i v') ∉ l ++ E ∧ XE (Recover i v') ∉ l ++ E.
  Proof.
    intros Hnf i op v Hs v'.
    assert (∃ u, tr u ∧ (i = oid u (kk (th s' u)) ∨ i = lid u (n u))) as (u & Hu & Hi).
    { destruct op as [y [o m |]], v as [[] | w]; try discriminate Hs.
      - apply stale_spec in Hs as (u & Hu & -> & _). exists u. by split; [| left].
      - apply stale_spec in Hs as (u & Hu & -> & _). exists u. by split; [| left].
      - apply stale_lspec in Hs as (u & Hu & -> & _). exists u. by split; [| right]. }
    assert (¬ finished (erase l ++ erase E) i) as Hn by (destruct Hi as [-> | ->]; apply (Hnf u Hu)).
    split; intros Hin; apply Hn; rewrite <- erase_app; apply elem_of_erase in Hin; [left | right]; by exists v'.
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
      destruct (proj1 (Forall_forall _ _) (g_xl _ _ _ Hg) _ Hin) as [(Hl & _) | (_ & b & ->)];
        [exact (oid_not_lid u _ (proj1 Hu) Hl) |].
      apply (g_pts _ _ _ Hg u op b Hu) in Hin as [_ Hv]. destruct b; [done |].
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

  Lemma Forall_rm (P : xevent cop rval → Prop) s' n xs : Forall P xs → Forall P (rm s' n xs).
  Proof. rewrite !Forall_forall. intros H e [He _]%elem_of_rm. by apply H. Qed.

  Lemma sp_xl_ok s s' : Forall xl_ok (sp s s').
  Proof.
    apply Forall_forall. intros e (i & op & v & -> & Hin)%elem_of_sp.
    apply elem_of_spl in Hin as (u & Hu & [= -> -> ->] & _). right. split; [exact (oid_not_lid u _ (proj1 Hu)) | by exists true].
  Qed.

  (** An event of a detectable CAS's, or of no operation's, but not a
      crash: not a LOAD's. *)
  Definition no_load_ev (e : xevent cop rval) : Prop :=
    match e with
    | XE (Invoke i _ _) | XE (Return i _) | XE (Recover i _) | XL i _ _ => ¬ is_lid i
    | XE Crash => False
    end.

  Lemma sp_no_load s s' : Forall no_load_ev (sp s s').
  Proof.
    apply Forall_forall. intros e (i & op & v & -> & Hin)%elem_of_sp.
    apply elem_of_spl in Hin as (u & Hu & [= -> -> ->] & _). exact (oid_not_lid u _ (proj1 Hu)).
  Qed.

  Lemma ldv_PLoad p y w : ldv p = Some (y, Some w) ↔ p = PLoad y w.
  Proof. destruct p as [| | [] | | | | | | | | | |]; cbn; split; congruence. Qed.

  Lemma act_ldv p : activeb p = true → ldv p = None.
  Proof. by destruct p as [| | [] | | | | | | | | | |]. Qed.

  Lemma evl_same s s' n u : ldv (pc (th s' u)) = ldv (pc (th s u)) → evl s s' n u = [].
  Proof.
    unfold evl. intros ->. destruct (ldv (pc (th s u))) as [[y [v |]] |]; reflexivity.
  Qed.

  (** The current LOAD of a thread (or its next) is not finished. *)
  Lemma load_not_finished s l n E u : wf (erase l) → linv s l n → tr u → Forall no_load_ev E →
    ¬ finished (erase l ++ erase E) (lid u (n u)).
  Proof.
    intros Hwf Hl Hu HE [Hf | (e & Hin & Hend)]%finished_app_inv.
    - destruct (ldv (pc (th s u))) as [[y o] |] eqn:El.
      + by apply (l_act _ _ _ _ Hl u y o Hu El).
      + apply (l_idle _ _ _ _ Hl u Hu El). by apply finished_invoked.
    - apply elem_of_erase in Hin. rewrite Forall_forall in HE. specialize (HE _ Hin).
      destruct e as [? ? ? | ? ? | | ? ?]; simpl in Hend, HE; try done; subst; apply HE, lid_is_lid.
  Qed.

  (** The success points a step makes are no LOAD's. *)
  Lemma linv_sp s s0 s' l n : linv s l n → linv s (l ++ sp s0 s') n.
  Proof.
    intros Hl. split; rewrite ?erase_app, ?erase_sp, ?app_nil_r; [apply Hl.. |].
    intros u op v Hu. rewrite elem_of_app, (l_pts _ _ _ _ Hl u op v Hu). split; [| by left].
    intros [? | (i & op' & v' & [= Hi0 _ _] & Hin)%elem_of_sp]; [done | exfalso].
    apply elem_of_spl in Hin as (u' & Hu' & [= Hi1 _ _] & _). subst i. exact (lid_oid u (n u) u' _ (proj1 Hu') Hi1).
  Qed.

  (** The LOADs' part of the invariant across a step that moves no LOAD and
      adds no event of a LOAD ([n']: the same numbers). *)
  Lemma linv_keep s s' l n n' E : linv s l n → (∀ u, ldv (pc (th s' u)) = ldv (pc (th s u))) →
    (∀ u, n' u = n u) → Forall no_load_ev E → linv s' (rm s' n' (l ++ E)) n'.
  Proof.
    intros [Lop Lact Lidle Lpts] Hld Hn HE. rewrite Forall_forall in HE.
    assert (Herase : erase (rm s' n' (l ++ E)) = erase l ++ erase E) by (by rewrite erase_rm, erase_app).
    assert (HinvE : ∀ i t op, Invoke i t op ∈ erase E → ¬ is_lid i) by (intros i t op Hin%elem_of_erase; apply (HE _ Hin)).
    assert (HendE : ∀ u k e, e ∈ erase E → ¬ ends (lid u k) e).
    { intros u k e Hin%elem_of_erase Hend. pose proof (HE _ Hin) as Hne.
      destruct e as [i ? ? | i v | | i v]; simpl in Hend, Hne; try done; subst; apply Hne, lid_is_lid. }
    split; rewrite ?Herase.
    - intros i t op [Hin | Hin]%elem_of_app Hl; [by apply (Lop i t) | by destruct (HinvE i t op Hin Hl)].
    - intros u y o Hu Hl. rewrite (Hld u), Hn in *. destruct (Lact u y o Hu Hl) as (H1 & H2 & H3). split_and!.
      + apply elem_of_app. by left.
      + intros [Hf | (e & Hin & He)]%finished_app_inv; [done | by apply (HendE u (n u) e Hin)].
      + apply pending_on_app; [done | |].
        * intros Hin. apply elem_of_erase in Hin. apply (HE _ Hin).
        * intros v Hin. by apply (HendE u (n u) (Return (lid u (n u)) v) Hin).
    - intros u Hu Hl. rewrite (Hld u), Hn in *. intros [Hin | (t & op & Hin)]%invoked_app; [by apply (Lidle u Hu Hl) |].
      apply (HinvE _ _ _ Hin), lid_is_lid.
    - intros u op v Hu. rewrite elem_of_rm, elem_of_app, Hn.
      assert (Hpl : ∀ y w, pc (th s' u) = PLoad y w ↔ pc (th s u) = PLoad y w).
      { intros y w. by rewrite <- !ldv_PLoad, (Hld u). }
      split.
      + intros [[Hin | Hin] _]; [| exfalso; apply (HE _ Hin), lid_is_lid].
        apply (Lpts u op v Hu) in Hin as (y & w & Hp & -> & ->). exists y, w. split; [by apply Hpl | done].
      + intros (y & w & Hp & -> & ->). split.
        * left. apply (Lpts u _ _ Hu). exists y, w. split; [by apply Hpl | done].
        * destruct (stale s' n' _) eqn:Es; [| done]. apply stale_lspec in Es as (u' & Hu' & Hi & Hv).
          rewrite Hn in Hi. apply lid_inj in Hi as [<- _]. by rewrite Hp in Hv.
  Qed.

  (** *** A step that moves a LOAD *)

  Lemma quiet_dec s u : inv s → tr u → activeb (pc (th s u)) = false → dec s u = false.
  Proof.
    intros Hi Hu Ha. pose proof (pcok_of N NL s u Hi Hu) as Hp. unfold pcok in Hp. unfold dec.
    destruct (pc (th s u)) as [| | [] | | | | | | | | | |]; try discriminate Ha; cbn [isfail orb]; apply lastmf_nokm.
    - by destruct Hp as (_ & ? & _).
    - by destruct Hp as [(_ & ? & _) _].
    - by destruct Hp as [(_ & ? & _) _].
  Qed.

  Lemma quiet_pc p : p = PIdle ∨ ldv p ≠ None → activeb p = false.
  Proof. intros [-> | H]; [done |]. destruct p as [| | [] | | | | | | | | | |]; cbn in *; try reflexivity; by destruct H. Qed.

  Lemma lval_ldv p : lval p = true ↔ ∃ y w, ldv p = Some (y, Some w).
  Proof. destruct p as [| | [] | | | | | | | | | |]; cbn; split; try done; try naive_solver. Qed.

  (** What [evl] adds: events of the thread's current LOAD. *)
  Definition load_ev (e : xevent cop rval) : Prop :=
    match e with XE (Invoke i _ _) | XE (Return i _) | XL i _ _ => is_lid i | _ => False end.
  Definition ev_of (i : opid) (e : xevent cop rval) : Prop :=
    match e with XE (Invoke j _ _) | XE (Return j _) | XL j _ _ => j = i | _ => False end.

  Ltac evl_cases s s' u :=
    unfold evl; destruct (ldv (pc (th s u))) as [[? [? |]] |] eqn:?, (ldv (pc (th s' u))) as [[? [? |]] |] eqn:?; cbn.

  Lemma evl_ev_of s s' n u : Forall (λ e, ev_of (lid u (n u)) e) (evl s s' n u).
  Proof. evl_cases s s' u; repeat constructor. Qed.
  Lemma evl_load s s' n u : Forall load_ev (evl s s' n u).
  Proof. evl_cases s s' u; repeat constructor; apply lid_is_lid. Qed.
  Lemma evl_xl_ok s s' n u : Forall xl_ok (evl s s' n u).
  Proof.
    evl_cases s s' u; rewrite ?Forall_cons, ?Forall_nil; cbn; repeat split;
      try (left; split; [apply lid_is_lid | by eexists]).
  Qed.
  Lemma evl_inv s s' n u i t0 op : Invoke i t0 op ∈ erase (evl s s' n u) →
    i = lid u (n u) ∧ t0 = u ∧ ldv (pc (th s u)) = None ∧ ∃ y o, ldv (pc (th s' u)) = Some (y, o) ∧ op = (y, LOAD).
  Proof.
    evl_cases s s' u; rewrite ?elem_of_cons, ?elem_of_nil; intros Hin; try naive_solver.
  Qed.
  Lemma evl_ret s s' n u i v : Return i v ∈ erase (evl s s' n u) →
    i = lid u (n u) ∧ ldv (pc (th s' u)) = None ∧ ∃ y w, ldv (pc (th s u)) = Some (y, Some w).
  Proof.
    evl_cases s s' u; rewrite ?elem_of_cons, ?elem_of_nil; intros Hin; try naive_solver.
  Qed.
  Lemma evl_ret_rv s s' n u i v : Return i v ∈ erase (evl s s' n u) → ∃ w, v = RV w.
  Proof. evl_cases s s' u; rewrite ?elem_of_cons, ?elem_of_nil; intros Hin; naive_solver. Qed.
  Lemma evl_ret_of s s' n u y w : ldv (pc (th s u)) = Some (y, Some w) → ldv (pc (th s' u)) = None →
    Return (lid u (n u)) (RV w) ∈ erase (evl s s' n u).
  Proof. intros H1 H2. unfold evl. rewrite H1, H2. cbn. by left. Qed.
  Lemma evl_nocrash s s' n u : Crash ∉ erase (evl s s' n u) ∧ ∀ i v, Recover i v ∉ erase (evl s s' n u).
  Proof.
    evl_cases s s' u; (split; [intros Hin | intros i v Hin]); rewrite ?elem_of_cons, ?elem_of_nil in Hin; naive_solver.
  Qed.
  Lemma evl_ends s s' n u e i : e ∈ erase (evl s s' n u) → ends i e → i = lid u (n u).
  Proof.
    intros Hin Hend. destruct e as [? ? ? | j v | | j v]; simpl in Hend; try done; subst j.
    - by destruct (evl_ret s s' n u i v Hin).
    - by destruct (proj2 (evl_nocrash s s' n u) i v).
  Qed.

  (** The point a LOAD takes: the register holds the value LOADHELP
      returned ([dval_clean]). *)
  Lemma lp_run s' x i y v : inv s' → ms s' → y < NL → la (visx s' y) = None → lv (visx s' y) = v →
    cfin (aval s' x) (locx x [XL i (y, LOAD) (RV v)]) = Some (aval s' x).
  Proof.
    intros Hi Hm Hy Hla Hlv. rewrite locx_XL. cbn [fst snd]. case_decide as Hx; [subst x | done]. cbn.
    assert (aval s' y = v) as ->.
    { unfold aval. rewrite decide_True by done. by rewrite (dval_clean N NL s' y Hi Hm Hy Hla), Hlv. }
    by rewrite decide_True.
  Qed.

  Lemma load_nf s l n u : wf (erase l) → linv s l n → tr u → ¬ finished (erase l) (lid u (n u)).
  Proof.
    intros Hwf Hl Hu Hf. destruct (ldv (pc (th s u))) as [[y o] |] eqn:El.
    - by apply (l_act _ _ _ _ Hl u y o Hu El).
    - apply (l_idle _ _ _ _ Hl u Hu El). by apply finished_invoked.
  Qed.

  (** The LOADs' part of the invariant across a step of thread [t] that
      adds events of [t]'s current LOAD: the other threads' stay. *)
  Lemma linv_step s s' l n n' E t : linv s l n → tr t →
    (∀ u, u ≠ t → ldv (pc (th s' u)) = ldv (pc (th s u)) ∧ n' u = n u) →
    Forall (ev_of (lid t (n t))) E →
    (∀ i t0 op, Invoke i t0 op ∈ erase E → is_lid i → op.2 = LOAD) →
    (∀ y o, ldv (pc (th s' t)) = Some (y, o) →
       Invoke (lid t (n' t)) t (y, LOAD) ∈ erase l ++ erase E ∧ ¬ finished (erase l ++ erase E) (lid t (n' t)) ∧
       pending_on (erase l ++ erase E) t (lid t (n' t))) →
    (ldv (pc (th s' t)) = None → ¬ invoked (erase l ++ erase E) (lid t (n' t))) →
    (∀ op v, XL (lid t (n' t)) op v ∈ rm s' n' (l ++ E) ↔ ∃ y w, pc (th s' t) = PLoad y w ∧ op = (y, LOAD) ∧ v = RV w) →
    linv s' (rm s' n' (l ++ E)) n'.
  Proof.
    intros [Lop Lact Lidle Lpts] Ht Hoth HE Hop Hact Hidle Hpts. rewrite Forall_forall in HE.
    assert (Herase : erase (rm s' n' (l ++ E)) = erase l ++ erase E) by (by rewrite erase_rm, erase_app).
    assert (HE' : ∀ u k e, u ≠ t → e ∈ E → ¬ ev_of (lid u k) e).
    { intros u k e Hne Hin Hev. pose proof (HE e Hin) as Hev'.
      destruct e as [[i ? ? | i ? | | i ?] | i ? ?]; simpl in Hev, Hev'; try done; subst;
        apply lid_inj in Hev' as [? _]; done. }
    split; rewrite ?Herase.
    - intros i t0 op [Hin | Hin]%elem_of_app Hl; [by apply (Lop i t0) | by apply (Hop i t0)].
    - intros u y o Hu Hl. destruct (decide (u = t)) as [-> | Hnt]; [by apply (Hact y o) |].
      destruct (Hoth u Hnt) as [Hld Hn]. rewrite Hld in Hl. rewrite Hn. destruct (Lact u y o Hu Hl) as (H1 & H2 & H3).
      split_and!.
      + apply elem_of_app. by left.
      + intros [Hf | (e & Hin & He)]%finished_app_inv; [done |]. apply elem_of_erase in Hin.
        destruct e as [i ? ? | i ? | | i ?]; simpl in He; subst; try done; [by apply (HE' u (n u) _ Hnt Hin) |].
        by destruct (HE _ Hin).
      + apply pending_on_app; [done | |].
        * intros Hin%elem_of_erase. by destruct (HE _ Hin).
        * intros v Hin%elem_of_erase. by apply (HE' u (n u) _ Hnt Hin).
    - intros u Hu Hl. destruct (decide (u = t)) as [-> | Hnt]; [by apply Hidle |].
      destruct (Hoth u Hnt) as [Hld Hn]. rewrite Hld in Hl. rewrite Hn.
      intros [Hin | (t0 & op & Hin)]%invoked_app; [by apply (Lidle u Hu Hl) |].
      apply elem_of_erase in Hin. by apply (HE' u (n u) _ Hnt Hin).
    - intros u op v Hu. destruct (decide (u = t)) as [-> | Hnt]; [apply Hpts |].
      destruct (Hoth u Hnt) as [Hld Hn]. rewrite elem_of_rm, elem_of_app, Hn.
      assert (Hpl : ∀ y w, pc (th s' u) = PLoad y w ↔ pc (th s u) = PLoad y w).
      { intros y w. by rewrite <- !ldv_PLoad, Hld. }
      split.
      + intros [[Hin | Hin] _]; [| by destruct (HE' u (n u) _ Hnt Hin)].
        apply (Lpts u op v Hu) in Hin as (y & w & Hp & -> & ->). exists y, w. split; [by apply Hpl | done].
      + intros (y & w & Hp & -> & ->). split.
        * left. apply (Lpts u _ _ Hu). exists y, w. split; [by apply Hpl | done].
        * destruct (stale s' n' _) eqn:Es; [| done]. apply stale_lspec in Es as (u' & Hu' & Hi & Hv).
          apply lid_inj in Hi as [<- _]. by rewrite Hp in Hv.
  Qed.

  (** The detectable CASes' part of the invariant across a step that moves
      no detectable CAS and adds only events of LOADs. *)
  Lemma cas_keep s s' l c n' E : inv s → dgrow s s' →
    (∀ u, tr u → activeb (pc (th s' u)) = activeb (pc (th s u)) ∧ kk (th s' u) = kk (th s u) ∧
       opof (th s' u) = opof (th s u) ∧ dec s' u = dec s u) →
    (∀ u k, tr u → k < kk (th s u) → finished (erase l) (oid u k)) →
    (∀ u, tr u → activeb (pc (th s u)) = true →
      Invoke (oid u (kk (th s u))) u (opof (th s u)) ∈ erase l ∧ ¬ finished (erase l) (oid u (kk (th s u))) ∧
      (c u = false → pending_on (erase l) u (oid u (kk (th s u)))) ∧ (c u = true → cut_off (erase l) (oid u (kk (th s u))))) →
    (∀ u, tr u → activeb (pc (th s u)) = false → ¬ invoked (erase l) (oid u (kk (th s u))) ∧ c u = false) →
    (∀ u (op : cop) (v : bool), tr u → XL (oid u (kk (th s u))) op (RB v) ∈ l ↔
      op = opof (th s u) ∧ (if v then durable s u (kk (th s u)) else dec s u = true)) →
    Forall load_ev E →
    (∀ u k, tr u → k < kk (th s' u) → finished (erase l ++ erase E) (oid u k)) ∧
    (∀ u, tr u → activeb (pc (th s' u)) = true →
      Invoke (oid u (kk (th s' u))) u (opof (th s' u)) ∈ erase l ++ erase E ∧
      ¬ finished (erase l ++ erase E) (oid u (kk (th s' u))) ∧
      (c u && activeb (pc (th s' u)) = false → pending_on (erase l ++ erase E) u (oid u (kk (th s' u)))) ∧
      (c u && activeb (pc (th s' u)) = true → cut_off (erase l ++ erase E) (oid u (kk (th s' u))))) ∧
    (∀ u, tr u → activeb (pc (th s' u)) = false →
      ¬ invoked (erase l ++ erase E) (oid u (kk (th s' u))) ∧ c u && activeb (pc (th s' u)) = false) ∧
    (∀ u (op : cop) (v : bool), tr u → XL (oid u (kk (th s' u))) op (RB v) ∈ rm s' n' (l ++ sp s s' ++ E) ↔
      op = opof (th s' u) ∧ (if v then durable s' u (kk (th s' u)) else dec s' u = true)).
  Proof.
    intros Hi Hgr Hall Gold Gact Gidle Gpts HE. rewrite Forall_forall in HE.
    assert (HnE : ∀ u k, tr u → (∀ t o, Invoke (oid u k) t o ∉ erase E) ∧ (∀ e, e ∈ erase E → ¬ ends (oid u k) e) ∧
                   Crash ∉ erase E).
    { intros u k Hu. split_and!.
      - intros t o Hin%elem_of_erase. apply (oid_not_lid u k (proj1 Hu)), (HE _ Hin).
      - intros e Hin%elem_of_erase Hend. specialize (HE _ Hin).
        destruct e as [i ? ? | i v | | i v]; simpl in Hend, HE; try done; subst; exact (oid_not_lid u k (proj1 Hu) HE).
      - intros Hin%elem_of_erase. apply (HE _ Hin). }
    split_and!.
    - intros u k Hu Hlt. apply finished_app, (Gold u k Hu). by rewrite <- (proj1 (proj2 (Hall u Hu))).
    - intros u Hu Ha. destruct (Hall u Hu) as (Ha' & Hk & Ho & _). rewrite Hk, Ho, Ha, andb_true_r. rewrite Ha' in Ha.
      destruct (Gact u Hu Ha) as (H1 & H2 & H3 & H4). destruct (HnE u (kk (th s u)) Hu) as (_ & Hend & Hc).
      split_and!.
      + apply elem_of_app. by left.
      + intros [Hf | (e & Hin & He)]%finished_app_inv; [done | by apply (Hend e Hin)].
      + intros Hcu. apply pending_on_app; [by apply H3 | done |]. intros v Hin. by apply (Hend _ Hin).
      + intros Hcu. by apply cut_off_app, H4.
    - intros u Hu Ha. destruct (Hall u Hu) as (Ha' & Hk & _). rewrite Hk, Ha, andb_false_r. rewrite Ha' in Ha.
      split; [| done]. intros [Hin | (t & o & Hin)]%invoked_app; [by apply (Gidle u Hu Ha) |].
      by apply (proj1 (HnE u (kk (th s u)) Hu) t o).
    - intros u op v Hu. destruct (Hall u Hu) as (_ & Hk & Ho & Hd).
      apply (pts_keep s s' n' l E u Hi Hgr Hu Hk Ho (λ op v, Gpts u op v Hu)).
      intros op' v'. split; [| intros (_ & _ & H1 & H2); congruence].
      intros Hin. exfalso. exact (oid_not_lid u _ (proj1 Hu) (HE _ Hin)).
  Qed.

  (** A step of one thread that moves no LOAD. *)
  Lemma ginv_cas g s' t : ginv g → step (gs g) s' → nc N NL (gs g) s' t →
    ldv (pc (th s' t)) = ldv (pc (th (gs g) t)) →
    ginv (G s' (rm s' (lnext (gs g) s' (gl g)) (gx g ++ sp (gs g) s' ++ ev (gs g) s' (gc g) (gl g)))
            (λ u, gc g u && activeb (pc (th s' u))) (lnext (gs g) s' (gl g))).
  Proof.
    intros Hg Hs Hn Hlt0. pose proof (ok_sp g s') as Hok1. pose proof (run_sp g s') as Hrun1.
    destruct g as [s l c n]. cbn [gs gx gc gl] in *.
    pose proof (g_r _ _ _ Hg) as Hr. pose proof (tw_reachable_inv N NL s Hr) as Hi.
    assert (Hr' : reachable2 N NL s') by (eapply rtc_r; [exact Hr | exact Hs]).
    pose proof (tw_reachable_inv N NL s' Hr') as Hi'. pose proof (ms_reach N NL s' Hr') as Hm'.
    pose proof (nc_dgrow N NL s s' t Hn) as Hgr.
    specialize (Hok1 Hg Hr' Hgr). specialize (Hrun1 Hg Hgr).
    destruct Hn as [Ht Hth Hhm _ _ Hcls].
    destruct Hg as [_ Gok Grun Hwf Gids Gold Gact Gidle Gpts Gpend Gxl Gld]. cbn [gs gx gc gl] in *.
    (* no LOAD moves: same numbers, no stale LOAD point, no LOAD event *)
    assert (Hlall : ∀ u, ldv (pc (th s' u)) = ldv (pc (th s u))).
    { intros u. destruct (decide (u = t)) as [-> | Hne]; [exact Hlt0 | by rewrite Hth]. }
    assert (Hln : ∀ u, lnext s s' n u = n u) by (intros u; unfold lnext; rewrite Hlall; destruct (ldv (pc (th s u))); lia).
    set (n' := lnext s s' n).
    assert (Hlnf : ∀ E, Forall no_load_ev E → ∀ u, tr u → ¬ finished (erase l ++ erase E) (lid u (n' u))).
    { intros E HE u Hu. unfold n'. rewrite Hln. by apply (load_not_finished s). }
    assert (Hoth : ∀ u, u ≠ t → tr u → activeb (pc (th s' u)) = activeb (pc (th s u)) ∧ kk (th s' u) = kk (th s u) ∧
              opof (th s' u) = opof (th s u) ∧ dec s' u = dec s u).
    { intros u Hne Hu. rewrite (Hth u Hne). split_and!; try done.
      apply (dec_eq N NL); [by apply Hhm | by rewrite Hth | by rewrite Hth]. }
    assert (Hev : ev s s' c n = evu s s' c t).
    { unfold ev. rewrite (mjoin_single _ _ t); [by rewrite evl_same, app_nil_r | apply NoDup_seq
        | apply elem_of_seq; unfold DetCasPx.tr in Ht; lia |].
      intros u Hu%elem_of_seq Hne. destruct (Hoth u Hne ltac:(unfold DetCasPx.tr; lia)) as (Ha & Hk & _ & Hd).
      rewrite evl_same by done.
      unfold evu. rewrite Ha, Hk, Hd, bool_decide_false by lia. destruct (activeb (pc (th s u))), (dec s u); reflexivity. }
    rewrite Hev. clear Hev.
    (* the other threads keep their invocations and their points *)
    assert (Hpo : ∀ E, (∀ e, e ∈ E → (∃ i, e = XE i) ∨ ∃ k op v, e = XL (oid t k) op v) →
              ∀ u, tr u → u ≠ t → ∀ op (v : bool), XL (oid u (kk (th s' u))) op (RB v) ∈ rm s' n' (l ++ sp s s' ++ E) ↔
                op = opof (th s' u) ∧ (if v then durable s' u (kk (th s' u)) else dec s' u = true)).
    { intros E HE u Hu Hne. destruct (Hoth u Hne Hu) as (_ & Hk & Ho & Hd).
      apply (pts_keep s s' n' l E u Hi Hgr Hu Hk Ho (λ op v, Gpts u op v Hu)).
      intros op v. split; [| intros (_ & _ & H1 & H2); congruence].
      intros Hin. destruct (HE _ Hin) as [[i ?] | (k & op' & v' & [= Hid _ _])]; [done |].
      apply oid_inj in Hid as [? _]. done. }
    destruct Hcls as [[Hso [Hact Hdc]] | [(Hia & Hia' & Hk & Hres & Hd' & Hne') | (r & Hpc & Hk & Hres & Hia' & Hd' & Hne')]].
    - (* inside the operation: at most a failure point *)
      destruct Hso as (Hk & Ho & Hres).
      assert (Hall : ∀ u, tr u → activeb (pc (th s' u)) = activeb (pc (th s u)) ∧ kk (th s' u) = kk (th s u) ∧
                opof (th s' u) = opof (th s u)).
      { intros u Hu. destruct (decide (u = t)) as [-> | Hne]; [done |]. by destruct (Hoth u Hne Hu) as (? & ? & ? & _). }
      set (E := if negb (dec s t) && dec s' t then [XL (oid t (kk (th s' t))) (opof (th s' t)) (RB false)] else []).
      assert (evu s s' c t = E) as ->.
      { unfold evu, E. rewrite Hact, Hk, bool_decide_false by lia. destruct (activeb (pc (th s t))); simpl; by rewrite app_nil_r. }
      assert (erase E = []) as HeE by (unfold E; by destruct (negb (dec s t) && dec s' t)).
      assert (Herase : erase (rm s' n' (l ++ sp s s' ++ E)) = erase l) by (by rewrite erase_rm, !erase_app, erase_sp, HeE, app_nil_r).
      assert (HnlE : Forall no_load_ev (sp s s' ++ E)).
      { apply Forall_app. split; [apply sp_no_load |]. unfold E. destruct (_ && _); [| constructor].
        apply Forall_singleton. exact (oid_not_lid t _ (proj1 Ht)). }
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
      split; cbn [gs gx gc gl]; rewrite ?Herase.
      + done.
      + apply prefix_ok_rm.
        * rewrite app_assoc. unfold E. destruct (negb (dec s t) && dec s' t) eqn:Edec; [| by rewrite app_nil_r].
          apply andb_true_iff in Edec as [Ed1 Ed2]. apply negb_true_iff in Ed1.
          destruct (dec_facts N NL s' t Hi' Ht Ed2) as [Hne'' Ha'].
          apply prefix_ok_snoc. split; [done |]. rewrite Hk, Ho. split.
          -- exists t. rewrite erase_app, erase_sp, app_nil_r. apply (Gact t Ht). by rewrite <- Hact.
          -- intros op' v' [Hin | Hin]%elem_of_app.
             ++ destruct (proj1 (Forall_forall _ _) Gxl _ Hin) as [(Hl & _) | (_ & b & ->)];
                  [by destruct (oid_not_lid t _ (proj1 Ht) Hl) |].
                apply (Gpts t op' b Ht) in Hin as [_ Hv]. destruct b; [| congruence].
                apply Hne''. rewrite Hk. apply (durable_mono NL s s' t _ Hgr) in Hv. destruct Hv as (x & j & Hx & Ht' & _).
                by exists x, j.
             ++ apply elem_of_sp in Hin as (i & op'' & v'' & [= <- <- <-] & Hin).
                apply elem_of_spl in Hin as (u & Hu & [= Hid _ _] & Hd & _). apply oid_inj in Hid as [<- _].
                apply Hne''. rewrite Hk. destruct Hd as (x & j & Hx & Ht' & _). by exists x, j.
        * apply stale_ok. intros u Hu. split; [| by apply Hlnf].
          rewrite erase_app, erase_sp, HeE, !app_nil_r. destruct (activeb (pc (th s' u))) eqn:Ea.
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
      + intros i Hin. destruct (Gids i Hin) as [(u & k & Hu & Hle & ->) | (u & k & Hu & Hle & ->)]; [left | right];
          exists u, k; (split_and!; [done | | done]); [by rewrite (proj1 (proj2 (Hall u Hu))) | unfold n'; by rewrite Hln].
      + intros u k Hu Hlt. apply (Gold u k Hu). by rewrite <- (proj1 (proj2 (Hall u Hu))).
      + done.
      + done.
      + intros u op v Hu. destruct (decide (u = t)) as [-> | Hne]; [| apply Hpo; try done].
        * apply (pts_keep s s' n' l E t Hi Hgr Ht Hk Ho (λ op v, Gpts t op v Ht)). intros op' v'. unfold E.
          destruct (negb (dec s t) && dec s' t) eqn:Edec.
          -- rewrite elem_of_list_singleton, Hk, Ho. apply andb_true_iff in Edec as [Ed1 Ed2]. apply negb_true_iff in Ed1.
             split; [intros [= -> ->]; done | intros (-> & -> & _); done].
          -- split; [by intros ?%elem_of_nil |]. intros (_ & _ & H1 & H2). by rewrite H1, H2 in Edec.
        * unfold E. destruct (negb (dec s t) && dec s' t); [| by intros ? ?%elem_of_nil]. intros ? ->%elem_of_list_singleton.
          right. by eexists _, _, _.
      + intros u j Hp. destruct (Gpend u j Hp) as [(Hu & Ha & -> & Hc) | (Hu & Hl & ->)]; [left | right].
        * destruct (Hall u Hu) as (Ha' & Hk' & _). split_and!; [done | by rewrite Ha' | by rewrite Hk' | by rewrite Hc].
        * split_and!; [done | by rewrite Hlall | unfold n'; by rewrite Hln].
      + apply Forall_rm. rewrite app_assoc. apply Forall_app. split; [apply Forall_app; split; [done | apply sp_xl_ok] |].
        unfold E. destruct (_ && _); [| constructor]. apply Forall_singleton. right.
        split; [exact (oid_not_lid t _ (proj1 Ht)) | by eexists].
      + rewrite app_assoc. apply (linv_keep s s' (l ++ sp s s') n n' E); [| done | done |].
        * by apply linv_sp.
        * unfold E. destruct (_ && _); [| constructor]. apply Forall_singleton. exact (oid_not_lid t _ (proj1 Ht)).
    - (* the start of an invocation *)
      set (i0 := oid t (kk (th s t))). set (op0 := opof (th s' t)).
      set (E := [XE (Invoke (Val:=rval) i0 t op0)]).
      assert (evu s s' c t = E) as ->.
      { unfold evu, E, i0, op0. rewrite Hia, Hia', Hd', Hk, bool_decide_false by lia. simpl. by rewrite andb_false_r. }
      assert (Herase : erase (rm s' n' (l ++ sp s s' ++ E)) = erase l ++ [Invoke i0 t op0])
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
      { apply wf_snoc. split; [done |]. split; [done |]. intros (j & Hp). destruct (Gpend t j Hp) as [(_ & Ha & _) | (_ & Hl & _)]; [congruence |].
        apply Hl. rewrite <- Hlall. by apply act_ldv. }
      split; cbn [gs gx gc gl]; rewrite ?Herase.
      + done.
      + apply prefix_ok_rm.
        * rewrite app_assoc. apply prefix_ok_snoc. by split.
        * apply stale_ok. intros u Hu.
          split; [| apply Hlnf; [| done]; apply Forall_app; split; [apply sp_no_load | apply Forall_singleton; exact (oid_not_lid t _ (proj1 Ht))]].
          rewrite erase_app, erase_sp. cbn [app erase omap]. simpl.
          destruct (activeb (pc (th s' u))) eqn:Ea.
          -- apply (Hact' u Hu Ea).
          -- intros Hf. apply (proj1 (Hidle' u Hu Ea)). by apply finished_invoked.
      + intros x. apply cfin_rm. rewrite app_assoc, locx_app, cfin_app, Hrun1. reflexivity.
      + done.
      + intros i [Hin | (t' & op' & [= <- <- <-])]%invoked_snoc.
        * destruct (Gids i Hin) as [(u & k & Hu & Hle & ->) | (u & k & Hu & Hle & ->)];
            [left | right; exists u, k; split_and!; [done | unfold n'; by rewrite Hln | done]].
          exists u, k. split_and!; [done | | done].
          destruct (decide (u = t)) as [-> | Hne]; [by rewrite Hk | by rewrite (proj1 (proj2 (Hall u Hne Hu)))].
        * left. exists t, (kk (th s t)). split_and!; [done | lia | done].
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
        * left. split_and!; [done | done | by rewrite Hk | by rewrite Hc].
        * destruct (Gpend u j Hp) as [(Hu & Ha & -> & Hcu) | (Hu & Hl & ->)]; [left | right].
          -- destruct (decide (u = t)) as [-> | Hne]; [congruence |].
             destruct (Hall u Hne Hu) as (Ha' & Hk' & _). split_and!; [done | by rewrite Ha' | by rewrite Hk' | by rewrite Hcu].
          -- split_and!; [done | by rewrite Hlall | unfold n'; by rewrite Hln].
      + apply Forall_rm. rewrite app_assoc. apply Forall_app.
        split; [apply Forall_app; split; [done | apply sp_xl_ok] | by apply Forall_singleton].
      + rewrite app_assoc. apply (linv_keep s s' (l ++ sp s s') n n' E); [by apply linv_sp | done | done |].
        apply Forall_singleton. exact (oid_not_lid t _ (proj1 Ht)).
    - (* the commit *)
      assert (activeb (pc (th s t)) = true) as Hia by (by rewrite Hpc).
      set (i0 := oid t (kk (th s t))). set (Ev := (if c t then @Recover cop rval else @Return cop rval) i0 (RB r)).
      set (E := [XE Ev]).
      assert (evu s s' c t = E) as ->.
      { unfold evu, E, Ev, i0. rewrite Hia, Hia', Hd', Hk, bool_decide_true by done. rewrite Hres, last_snoc.
        simpl. by rewrite andb_false_r. }
      assert (Herase : erase (rm s' n' (l ++ sp s s' ++ E)) = erase l ++ [Ev])
        by (by rewrite erase_rm, !erase_app, erase_sp).
      destruct (Gact t Ht Hia) as (Hinv0 & Hnf0 & Hpend0 & Hcut0). fold i0 in Hinv0, Hnf0, Hpend0, Hcut0.
      assert (HnEv : ∀ j t' o, Ev ≠ Invoke j t' o) by (unfold Ev; by destruct (c t)).
      assert (HcEv : Ev ≠ Crash) by (unfold Ev; by destruct (c t)).
      assert (HendEv : ∀ j, ends j Ev ↔ j = i0) by (intros j; unfold Ev; destruct (c t); cbn [ends]; split; intros ->; done).
      assert (Hnew : ¬ invoked (erase l) (oid t (S (kk (th s t))))).
      { intros Hin. destruct (Gids _ Hin) as [(u & k & Hu & Hle & Hid) | (u & k & Hu & Hle & Hid)].
        - apply oid_inj in Hid as [<- <-]. lia.
        - symmetry in Hid. exact (lid_oid u k t _ (proj1 Ht) Hid). }
      assert (HEnl : Forall no_load_ev (sp s s' ++ E)).
      { apply Forall_app. split; [apply sp_no_load |]. apply Forall_singleton. unfold Ev.
        destruct (c t); exact (oid_not_lid t _ (proj1 Ht)). }
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
      split; cbn [gs gx gc gl]; rewrite ?Herase.
      + done.
      + apply prefix_ok_rm.
        * rewrite app_assoc. apply prefix_ok_snoc. split; [done |].
          assert (∃ op, XL i0 op (RB r) ∈ l ++ sp s s') as Hx.
          { exists (opof (th s t)). apply elem_of_app. left. apply (Gpts t _ r Ht). by split. }
          unfold Ev. by destruct (c t).
        * apply stale_ok. intros u Hu. split; [| by apply Hlnf].
          rewrite erase_app, erase_sp. simpl.
          destruct (activeb (pc (th s' u))) eqn:Ea.
          -- apply (Hact' u Hu Ea).
          -- intros Hf. apply (proj1 (Hidle' u Hu Ea)). by apply finished_invoked.
      + intros x. apply cfin_rm. rewrite app_assoc, locx_app, cfin_app, Hrun1. reflexivity.
      + done.
      + intros i [Hin | (t' & op' & HE)]%invoked_snoc; [| by destruct (HnEv _ _ _ HE)].
        destruct (Gids i Hin) as [(u & k & Hu & Hle & ->) | (u & k & Hu & Hle & ->)];
          [left | right; exists u, k; split_and!; [done | unfold n'; by rewrite Hln | done]].
        exists u, k. split_and!; [done | | done].
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
             ++ apply Hnew. by apply (xl_invoked l _ op (RB v)).
             ++ apply elem_of_sp in Hin as (i & op' & v' & [= <- <- <-] & Hin).
                apply elem_of_spl in Hin as (u & Hu' & [= Hid _ _] & Hd & _). apply oid_inj in Hid as [<- Hkk]. lia.
             ++ by apply elem_of_list_singleton in Hin.
          -- intros [_ Hv]. exfalso. destruct v.
             ++ apply Hne'. rewrite Hk. by apply durable_eff.
             ++ congruence.
        * apply Hpo; [| done | done]. intros e ->%elem_of_list_singleton. left. by eexists.
      + intros u j [(o & HE) | (Hp & _ & Hret)]%pending_on_snoc; [by destruct (HnEv _ _ _ HE) |].
        destruct (Gpend u j Hp) as [(Hu & Ha & -> & Hcu) | (Hu & Hl & ->)]; [left | right].
        * destruct (decide (u = t)) as [-> | Hne].
          -- exfalso. unfold Ev in Hret. rewrite Hcu in Hret. by apply (Hret (RB r)).
          -- destruct (Hall u Hne Hu) as (Ha' & Hk' & _). split_and!; [done | by rewrite Ha' | by rewrite Hk' | by rewrite Hcu].
        * split_and!; [done | by rewrite Hlall | unfold n'; by rewrite Hln].
      + apply Forall_rm. rewrite app_assoc. apply Forall_app.
        split; [apply Forall_app; split; [done | apply sp_xl_ok] | by apply Forall_singleton].
      + rewrite app_assoc. apply (linv_keep s s' (l ++ sp s s') n n' E); [by apply linv_sp | done | done |].
        apply Forall_singleton. unfold Ev. destruct (c t); exact (oid_not_lid t _ (proj1 Ht)).
  Qed.

  (** A step of one thread that moves its LOAD: its invocation, its point
      (LOADHELP's return of a clean value), its return, or a thread crash
      that drops its point (it will load again). *)
  Lemma ginv_load g s' t : ginv g → step (gs g) s' → nc N NL (gs g) s' t → lcls NL (gs g) s' t →
    ldv (pc (th s' t)) ≠ ldv (pc (th (gs g) t)) →
    ginv (G s' (rm s' (lnext (gs g) s' (gl g)) (gx g ++ sp (gs g) s' ++ ev (gs g) s' (gc g) (gl g)))
            (λ u, gc g u && activeb (pc (th s' u))) (lnext (gs g) s' (gl g))).
  Proof.
    intros Hg Hs Hn Hlc Hmv. pose proof (ok_sp g s') as Hok1. pose proof (run_sp g s') as Hrun1.
    destruct g as [s l c n]. cbn [gs gx gc gl] in *.
    pose proof (g_r _ _ _ Hg) as Hr. pose proof (tw_reachable_inv N NL s Hr) as Hi.
    assert (Hr' : reachable2 N NL s') by (eapply rtc_r; [exact Hr | exact Hs]).
    pose proof (tw_reachable_inv N NL s' Hr') as Hi'. pose proof (ms_reach N NL s' Hr') as Hm'.
    pose proof (nc_dgrow N NL s s' t Hn) as Hgr.
    specialize (Hok1 Hg Hr' Hgr). specialize (Hrun1 Hg Hgr).
    destruct Hn as [Ht Hth Hhm _ _ Hcls].
    destruct Hg as [_ Gok Grun Hwf Gids Gold Gact Gidle Gpts Gpend Gxl Gld]. cbn [gs gx gc gl] in *.
    (* thread [t] is idle or in its LOAD before and after the step *)
    assert (Hq : (pc (th s t) = PIdle ∨ ldv (pc (th s t)) ≠ None) ∧ (pc (th s' t) = PIdle ∨ ldv (pc (th s' t)) ≠ None)).
    { destruct Hlc as [? | [(Hp & y & _ & Hp') | [(y & v & Hp & Hp' & _) | (y & v & Hp & Hp')]]]; [done | | |].
      - split; [by left | right; by rewrite Hp'].
      - split; [destruct Hp as [? | Hp]; [by left | right; by rewrite Hp] | right; by rewrite Hp'].
      - split; [right; by rewrite Hp |]. destruct Hp' as [? | Hp']; [by left | right; by rewrite Hp']. }
    destruct Hq as [Hq Hq']. apply quiet_pc in Hq, Hq'.
    assert (Hso : same_op s s' t).
    { destruct Hcls as [[? _] | [(_ & Ha & _) | (r & Hpc & _)]]; [done | congruence | by rewrite Hpc in Hq]. }
    assert (Hall : ∀ u, tr u → activeb (pc (th s' u)) = activeb (pc (th s u)) ∧ kk (th s' u) = kk (th s u) ∧
              opof (th s' u) = opof (th s u) ∧ dec s' u = dec s u).
    { intros u Hu. destruct (decide (u = t)) as [-> | Hne].
      - destruct Hso as (Hk & Ho & _). rewrite Hq, Hq', Hk, Ho, (quiet_dec s t Hi Ht Hq), (quiet_dec s' t Hi' Ht Hq').
        done.
      - rewrite (Hth u Hne). split_and!; try done. apply (dec_eq N NL); [by apply Hhm | by rewrite Hth | by rewrite Hth]. }
    assert (Hev : ev s s' c n = evl s s' n t).
    { unfold ev. rewrite (mjoin_single _ _ t); [| apply NoDup_seq | apply elem_of_seq; unfold DetCasPx.tr in Ht; lia |].
      - unfold evu. destruct (Hall t Ht) as (Ha & Hk & _ & Hd). rewrite Ha, Hk, Hd, bool_decide_false by lia.
        destruct (activeb (pc (th s t))), (dec s t); reflexivity.
      - intros u Hu%elem_of_seq Hne. rewrite evl_same by (by rewrite Hth).
        destruct (Hall u ltac:(unfold DetCasPx.tr; lia)) as (Ha & Hk & _ & Hd).
        unfold evu. rewrite Ha, Hk, Hd, bool_decide_false by lia. destruct (activeb (pc (th s u))), (dec s u); reflexivity. }
    rewrite Hev. clear Hev.
    set (n' := lnext s s' n).
    assert (Hnoth : ∀ u, u ≠ t → ldv (pc (th s' u)) = ldv (pc (th s u)) ∧ n' u = n u).
    { intros u Hne. rewrite (Hth u Hne). split; [done |]. unfold n', lnext. rewrite (Hth u Hne).
      destruct (ldv (pc (th s u))); lia. }
    assert (Hnge : ∀ u, n u ≤ n' u).
    { intros u. unfold n', lnext. destruct (ldv (pc (th s u))), (ldv (pc (th s' u))); lia. }
    assert (Hnt : ldv (pc (th s' t)) ≠ None → n' t = n t).
    { unfold n', lnext. destruct (ldv (pc (th s' t))); [intros _; destruct (ldv (pc (th s t))); lia | done]. }
    (* a LOAD that had no value has one after the step, or still runs *)
    assert (Hnone : ∀ y, ldv (pc (th s t)) = Some (y, None) → ldv (pc (th s' t)) ≠ None).
    { intros y Hl. destruct Hlc as [Hl' | [(Hp & _) | [(y' & v & _ & Hp' & _) | (y' & v & Hp & _)]]].
      - by rewrite Hl', Hl.
      - by rewrite Hp in Hl.
      - by rewrite Hp'.
      - by rewrite Hp in Hl. }
    destruct (cas_keep s s' l c n' (evl s s' n t) Hi Hgr Hall Gold Gact Gidle Gpts (evl_load s s' n t))
      as (Hold' & Hact' & Hidle' & Hpts').
    assert (Herase : erase (rm s' n' (l ++ sp s s' ++ evl s s' n t)) = erase l ++ erase (evl s s' n t))
      by (by rewrite erase_rm, !erase_app, erase_sp).
    pose proof (linv_sp s s s' l n Gld) as Gld1.
    assert (HeL1 : erase (l ++ sp s s') = erase l) by (by rewrite erase_app, erase_sp, app_nil_r).
    (* no thread's current LOAD is finished *)
    assert (Hlnf : ∀ u, tr u → ¬ finished (erase l ++ erase (evl s s' n t)) (lid u (n' u))).
    { intros u Hu [Hf | (e & Hin & Hend)]%finished_app_inv.
      - assert (n' u = n u) as Heq.
        { destruct (Gids _ (finished_invoked _ _ Hwf Hf)) as [(u' & k & Hu' & _ & Hid) | (u' & k & _ & Hle & Hid)].
          - exfalso. exact (lid_oid _ _ u' k (proj1 Hu') Hid).
          - apply lid_inj in Hid as [<- Hk]. specialize (Hnge u). lia. }
        rewrite Heq in Hf. by apply (load_nf s l n u Hwf Gld Hu).
      - pose proof (evl_ends s s' n t e _ Hin Hend) as Hid. apply lid_inj in Hid as [-> Hid].
        destruct e as [? ? ? | i v | | i v]; simpl in Hend; try done; subst i.
        + destruct (evl_ret s s' n t _ v Hin) as (_ & Hl' & y & w & Hl).
          unfold n', lnext in Hid. rewrite Hl, Hl' in Hid. lia.
        + exfalso. exact (proj2 (evl_nocrash s s' n t) _ v Hin). }
    assert (Hstale : ∀ i op v, stale s' n' (XL i op v) = true →
              ∀ v', XE (Return i v') ∉ l ++ sp s s' ++ evl s s' n t ∧ XE (Recover i v') ∉ l ++ sp s s' ++ evl s s' n t).
    { apply stale_ok. intros u Hu. rewrite erase_app, erase_sp, app_nil_l. split; [| by apply Hlnf].
      destruct (activeb (pc (th s' u))) eqn:Ea; [apply (Hact' u Hu Ea) |].
      intros [Hf | (e & Hin & Hend)]%finished_app_inv.
      - apply (proj1 (Hidle' u Hu Ea)). apply invoked_app. left. by apply finished_invoked.
      - pose proof (evl_ends s s' n t e _ Hin Hend) as Hid. symmetry in Hid. exact (lid_oid _ _ u _ (proj1 Hu) Hid). }
    assert (Hids' : ∀ i, invoked (erase l ++ erase (evl s s' n t)) i →
      (∃ u k, tr u ∧ k ≤ kk (th s' u) ∧ i = oid u k) ∨ (∃ u k, tr u ∧ k ≤ n' u ∧ i = lid u k)).
    { intros i [Hin | (t0 & op & Hin)]%invoked_app.
      - destruct (Gids i Hin) as [(u & k & Hu & Hle & ->) | (u & k & Hu & Hle & ->)]; [left | right]; exists u, k;
          split_and!; try done; [by rewrite (proj1 (proj2 (Hall u Hu))) | specialize (Hnge u); lia].
      - destruct (evl_inv s s' n t _ _ _ Hin) as (-> & _). right. exists t, (n t). split_and!; [done | apply Hnge | done]. }
    assert (Hpend' : ∀ u j, pending_on (erase l ++ erase (evl s s' n t)) u j →
      (tr u ∧ activeb (pc (th s' u)) = true ∧ j = oid u (kk (th s' u)) ∧ c u && activeb (pc (th s' u)) = false) ∨
      (tr u ∧ ldv (pc (th s' u)) ≠ None ∧ j = lid u (n' u))).
    { intros u j [(o & Hin) | (Hp & _ & Hnr)]%pending_on_app_inv.
      - destruct (evl_inv s s' n t _ _ _ Hin) as (-> & -> & _ & y & o' & Hl & _). right.
        split_and!; [done | by rewrite Hl | by rewrite Hnt by (by rewrite Hl)].
      - destruct (Gpend u j Hp) as [(Hu & Ha & -> & Hcu) | (Hu & Hl & ->)].
        + left. destruct (Hall u Hu) as (Ha' & Hk & _). rewrite Ha', Hk, Hcu. by split_and!.
        + right. destruct (decide (u = t)) as [-> | Hne].
          * assert (ldv (pc (th s' t)) ≠ None) as Hl'.
            { intros Hn0. destruct (ldv (pc (th s t))) as [[y [w |]] |] eqn:El; [| | done].
              - apply (Hnr (RV w)). by apply (evl_ret_of s s' n t y w).
              - by apply (Hnone y). }
            split_and!; [done | done | by rewrite Hnt].
          * destruct (Hnoth u Hne) as [Hl' Hn']. split_and!; [done | by rewrite Hl' | by rewrite Hn']. }
    (* what the step adds, case by case *)
    assert (Hcase : prefix_ok point_ok ((l ++ sp s s') ++ evl s s' n t) ∧
                    (∀ x, cfin (aval s' x) (locx x (evl s s' n t)) = Some (aval s' x)) ∧
                    wf (erase l ++ erase (evl s s' n t)) ∧
                    linv s' (rm s' n' ((l ++ sp s s') ++ evl s s' n t)) n').
    { assert (Hgen : ∀ (E : list (xevent cop rval)), evl s s' n t = E →
        (∀ y o, ldv (pc (th s' t)) = Some (y, o) →
           Invoke (lid t (n' t)) t (y, LOAD) ∈ erase l ++ erase E ∧ pending_on (erase l ++ erase E) t (lid t (n' t))) →
        (ldv (pc (th s' t)) = None → ¬ invoked (erase l ++ erase E) (lid t (n' t))) →
        (∀ op v, XL (lid t (n' t)) op v ∈ rm s' n' ((l ++ sp s s') ++ E) ↔
           ∃ y w, pc (th s' t) = PLoad y w ∧ op = (y, LOAD) ∧ v = RV w) →
        linv s' (rm s' n' ((l ++ sp s s') ++ evl s s' n t)) n').
      { intros E HE Hact Hidle Hpts. pose proof (Hlnf t Ht) as Hnf. rewrite HE in Hnf |- *.
        apply (linv_step s s' (l ++ sp s s') n n' E t Gld1 Ht Hnoth); rewrite ?HeL1.
        - rewrite <- HE. apply evl_ev_of.
        - rewrite <- HE. intros i t0 op Hin _. by destruct (evl_inv s s' n t _ _ _ Hin) as (_ & _ & _ & y & o & _ & ->).
        - intros y o Hl. destruct (Hact y o Hl). by split_and!.
        - done.
        - done. }
      (* the XL of the current LOAD in the history before the step *)
      assert (Hxl1 : ∀ op v, XL (lid t (n t)) op v ∈ l ++ sp s s' ↔ ∃ y w, pc (th s t) = PLoad y w ∧ op = (y, LOAD) ∧ v = RV w).
      { intros op v. apply (l_pts _ _ _ _ Gld1 t op v Ht). }
      assert (Hnst : ∀ y v, pc (th s' t) = PLoad y v → stale s' n' (XL (lid t (n' t)) (y, LOAD) (RV v)) = false).
      { intros y v Hp. destruct (stale _ _ _) eqn:Es; [| done]. apply stale_lspec in Es as (u' & Hu' & Hid & Hv).
        apply lid_inj in Hid as [<- _]. by rewrite Hp in Hv. }
      destruct Hlc as [Hl' | [(Hp & y & Hy & Hp') | [(y & v & Hp & Hp' & Hy & Hla & Hlv) | (y & v & Hp & Hp')]]];
        [done | | destruct Hp as [Hp | Hp] | destruct Hp' as [Hp' | Hp']].
      - (* the LOAD starts *)
        assert (HE : evl s s' n t = [XE (Invoke (lid t (n t)) t (y, LOAD))]) by (unfold evl; by rewrite Hp, Hp').
        assert (Hn't : n' t = n t) by (apply Hnt; by rewrite Hp').
        assert (Hli : ldv (pc (th s t)) = None) by (by rewrite Hp).
        split_and!.
        + rewrite HE. apply prefix_ok_snoc. by split.
        + intros x. by rewrite HE.
        + rewrite HE. cbn [erase omap xe_event]. apply wf_snoc. split; [done |]. split.
          * by apply (l_idle _ _ _ _ Gld t Ht Hli).
          * intros (j & Hj). destruct (Gpend t j Hj) as [(_ & Ha & _) | (_ & Hl & _)]; [congruence | done].
        + apply (Hgen _ HE).
          * intros y' o Hl. rewrite Hp' in Hl. injection Hl as <- <-. rewrite Hn't. cbn [erase omap xe_event]. split.
            -- apply elem_of_app. right. by left.
            -- apply pending_on_snoc. left. by eexists.
          * by rewrite Hp'.
          * intros op v. rewrite elem_of_rm, elem_of_app, Hn't, Hxl1. split.
            -- intros [[(y' & w & Hw & _) | Hin] _]; [by rewrite Hp in Hw | by apply elem_of_list_singleton in Hin].
            -- intros (y' & w & Hw & _). rewrite <- ldv_PLoad, Hp' in Hw. discriminate Hw.
      - (* the LOAD starts and LOADHELP returns at once *)
        assert (HE : evl s s' n t = [XE (Invoke (lid t (n t)) t (y, LOAD)); XL (lid t (n t)) (y, LOAD) (RV v)])
          by (unfold evl; by rewrite Hp, Hp').
        assert (Hn't : n' t = n t) by (apply Hnt; by rewrite Hp').
        assert (Hli : ldv (pc (th s t)) = None) by (by rewrite Hp).
        split_and!.
        + rewrite HE. change [XE (Invoke (lid t (n t)) t (y, LOAD)); XL (lid t (n t)) (y, LOAD) (RV v)]
            with ([XE (Invoke (lid t (n t)) t (y, LOAD))] ++ [XL (Val:=rval) (lid t (n t)) (y, LOAD) (RV v)]).
          rewrite app_assoc. apply prefix_ok_snoc. split; [apply prefix_ok_snoc; by split |]. split.
          * exists t. rewrite erase_app. apply elem_of_app. right. by left.
          * intros op' v' [Hin | Hin]%elem_of_app.
            -- apply Hxl1 in Hin as (y' & w & Hw & _). by rewrite Hp in Hw.
            -- by apply elem_of_list_singleton in Hin.
        + intros x. rewrite HE, locx_cons, locx_XE. by apply (lp_run s' x (lid t (n t)) y v).
        + rewrite HE. cbn [erase omap xe_event]. apply wf_snoc. split; [done |]. split.
          * by apply (l_idle _ _ _ _ Gld t Ht Hli).
          * intros (j & Hj). destruct (Gpend t j Hj) as [(_ & Ha & _) | (_ & Hl & _)]; [congruence | done].
        + apply (Hgen _ HE).
          * intros y' o Hl. rewrite Hp' in Hl. injection Hl as <- <-. rewrite Hn't. cbn [erase omap xe_event]. split.
            -- apply elem_of_app. right. by left.
            -- apply pending_on_snoc. left. by eexists.
          * by rewrite Hp'.
          * intros op w'. rewrite elem_of_rm, elem_of_app, Hn't, Hxl1. split.
            -- intros [[(y' & w & Hw & _) | Hin] _]; [by rewrite Hp in Hw |].
               rewrite elem_of_cons, elem_of_list_singleton in Hin. destruct Hin as [Hin | [= -> ->]]; [done |].
               by exists y, v.
            -- intros (y' & w & Hw & -> & ->). rewrite Hp' in Hw. injection Hw as <- <-. split.
               ++ right. rewrite elem_of_cons, elem_of_list_singleton. by right.
               ++ rewrite <- Hn't. by apply Hnst.
      - (* LOADHELP returns the clean value *)
        assert (HE : evl s s' n t = [XL (lid t (n t)) (y, LOAD) (RV v)]) by (unfold evl; by rewrite Hp, Hp').
        assert (Hn't : n' t = n t) by (apply Hnt; by rewrite Hp').
        destruct (l_act _ _ _ _ Gld t y None Ht Hp) as (Hinv & _ & Hpd).
        split_and!.
        + rewrite HE. apply prefix_ok_snoc. split; [done |]. split.
          * exists t. by rewrite HeL1.
          * intros op' v' Hin. apply Hxl1 in Hin as (y' & w & Hw & _). by rewrite <- ldv_PLoad, Hp in Hw.
        + intros x. rewrite HE. by apply (lp_run s' x (lid t (n t)) y v).
        + rewrite HE. cbn [erase omap xe_event]. by rewrite app_nil_r.
        + apply (Hgen _ HE).
          * intros y' o Hl. rewrite Hp' in Hl. cbn in Hl. injection Hl as <- _. rewrite Hn't. cbn [erase omap xe_event].
            rewrite app_nil_r. by split.
          * by rewrite Hp'.
          * intros op w'. rewrite elem_of_rm, elem_of_app, Hn't, Hxl1. split.
            -- intros [[(y' & w & Hw & _) | Hin] _]; [by rewrite <- ldv_PLoad, Hp in Hw |].
               apply elem_of_list_singleton in Hin. injection Hin as -> ->. by exists y, v.
            -- intros (y' & w & Hw & -> & ->). rewrite Hp' in Hw. injection Hw as <- <-. split.
               ++ right. by apply elem_of_list_singleton.
               ++ rewrite <- Hn't. by apply Hnst.
      - (* LOAD returns *)
        assert (HE : evl s s' n t = [XE (Return (lid t (n t)) (RV v))]) by (unfold evl; by rewrite Hp, Hp').
        assert (Hn't : n' t = S (n t)) by (unfold n', lnext; rewrite Hp, Hp'; cbn; lia).
        assert (Hnew : ¬ invoked (erase l) (lid t (S (n t)))).
        { intros Hin. destruct (Gids _ Hin) as [(u' & k & Hu' & _ & Hid) | (u' & k & _ & Hle & Hid)].
          - exact (lid_oid _ _ u' k (proj1 Hu') Hid).
          - apply lid_inj in Hid as [<- Hk]. lia. }
        destruct (l_act _ _ _ _ Gld t y (Some v) Ht ltac:(by rewrite Hp)) as (Hinv & Hnf & Hpd).
        split_and!.
        + rewrite HE. apply prefix_ok_snoc. split; [done |]. exists (y, LOAD). apply Hxl1. by exists y, v.
        + intros x. by rewrite HE.
        + rewrite HE. cbn [erase omap xe_event]. apply wf_snoc. split; [done |]. split; [by exists t | done].
        + apply (Hgen _ HE).
          * intros y' o Hl. by rewrite Hp' in Hl.
          * intros _. rewrite Hn't. cbn [erase omap xe_event]. by intros [? | (? & ? & ?)]%invoked_snoc.
          * intros op w'. rewrite elem_of_rm, elem_of_app, Hn't. split.
            -- intros [[Hin | Hin] _]; [| by apply elem_of_list_singleton in Hin].
               exfalso. apply Hnew. rewrite <- HeL1. by apply (xl_invoked _ _ op w').
            -- intros (y' & w & Hw & _). by rewrite Hp' in Hw.
      - (* a thread crash drops the LOAD's value: it loads again *)
        assert (HE : evl s s' n t = []) by (unfold evl; by rewrite Hp, Hp').
        assert (Hn't : n' t = n t) by (apply Hnt; by rewrite Hp').
        destruct (l_act _ _ _ _ Gld t y (Some v) Ht ltac:(by rewrite Hp)) as (Hinv & _ & Hpd).
        split_and!.
        + rewrite HE, app_nil_r. done.
        + intros x. by rewrite HE.
        + rewrite HE. cbn [erase omap]. by rewrite app_nil_r.
        + apply (Hgen _ HE).
          * intros y' o Hl. rewrite Hp' in Hl. injection Hl as <- _. rewrite Hn't. cbn [erase omap].
            rewrite app_nil_r. by split.
          * by rewrite Hp'.
          * intros op w'. rewrite elem_of_rm, app_nil_r, Hn't. split.
            -- intros [Hin Hns]. apply Hxl1 in Hin as (y' & w & Hw & -> & ->). rewrite Hp in Hw. injection Hw as <- <-.
               exfalso. cut (stale s' n' (XL (lid t (n t)) (y, LOAD) (RV v)) = true); [by rewrite Hns |].
               apply stale_lspec. exists t. split_and!; [done | by rewrite Hn't |].
               destruct (lval (pc (th s' t))) eqn:Ev; [| done]. apply lval_ldv in Ev as (? & ? & Ev). by rewrite Hp' in Ev.
            -- intros (y' & w & Hw & _). rewrite <- ldv_PLoad, Hp' in Hw. discriminate Hw. }
    destruct Hcase as (Hok' & Hrun' & Hwf' & Hld').
    split; cbn [gs gx gc gl]; rewrite ?Herase.
    - done.
    - apply prefix_ok_rm; [by rewrite app_assoc | exact Hstale].
    - intros x. apply cfin_rm. rewrite app_assoc, locx_app, cfin_app, Hrun1. apply Hrun'.
    - exact Hwf'.
    - exact Hids'.
    - exact Hold'.
    - exact Hact'.
    - exact Hidle'.
    - exact Hpts'.
    - exact Hpend'.
    - apply Forall_rm. apply Forall_app. split; [exact Gxl |]. apply Forall_app. split; [apply sp_xl_ok | apply evl_xl_ok].
    - by rewrite app_assoc.
  Qed.

  (** A step of one thread. *)
  Lemma ginv_nc g s' t : ginv g → step (gs g) s' → nc N NL (gs g) s' t → lcls NL (gs g) s' t →
    ginv (G s' (rm s' (lnext (gs g) s' (gl g)) (gx g ++ sp (gs g) s' ++ ev (gs g) s' (gc g) (gl g)))
            (λ u, gc g u && activeb (pc (th s' u))) (lnext (gs g) s' (gl g))).
  Proof.
    intros Hg Hs Hn Hl. destruct (decide (ldv (pc (th s' t)) = ldv (pc (th (gs g) t)))) as [Heq | Hne].
    - by apply (ginv_cas g s' t).
    - by apply (ginv_load g s' t).
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

  (** A full crash, with its [crash] event: every LOAD in flight is cut off
      (the thread is idle after it; its next LOAD has the next number). *)
  Lemma ginv_crash g keep f : ginv g → p_crash_ok (pm (gs g)) keep →
    (∀ u, tr u → f u = reinit N NL (gs g) keep u) → (∀ u, ¬ tr u → f u = th (gs g) u) →
    ginv (G (cst (gs g) keep f)
            (rm (cst (gs g) keep f) (lnext (gs g) (cst (gs g) keep f) (gl g))
               (gx g ++ sp (gs g) (cst (gs g) keep f) ++ [XE Crash]))
            (λ u, activeb (pc (f u))) (lnext (gs g) (cst (gs g) keep f) (gl g))).
  Proof.
    intros Hg Hok Hf Hf'. pose proof (g_r _ _ _ Hg) as Hr. pose proof (tw_reachable_inv N NL _ Hr) as Hi.
    set (s' := cst (gs g) keep f).
    assert (Hr' : reachable2 N NL s') by (eapply rtc_r; [exact Hr | by apply SCrash]).
    pose proof (crash_dgrow N NL (gs g) keep f Hi Hok) as Hgr.
    pose proof (ok_sp N NL g s' Hg Hr' Hgr) as Hok1. pose proof (run_sp N NL g s' Hg Hgr) as Hrun1.
    destruct g as [s l c n]. cbn [gs gx gc gl] in *.
    destruct Hg as [_ Gok Grun Hwf Gids Gold Gact Gidle Gpts Gpend Gxl Gld]. cbn [gs gx gc gl] in *.
    set (n' := lnext s s' n).
    set (E := [XE (Val:=rval) (Op:=cop) Crash]).
    set (h' := erase l ++ [Crash]).
    assert (Herase : erase (rm s' n' (l ++ sp s s' ++ E)) = h') by (by rewrite erase_rm, !erase_app, erase_sp).
    assert (Hth : ∀ u, tr u → kk (th s' u) = kk (th s u) ∧ opof (th s' u) = opof (th s u) ∧
              activeb (pc (th s' u)) = activeb (pc (th s u))).
    { intros u Hu. destruct (crash_th s keep f u Hf Hu) as (? & ? & _ & ? & _). done. }
    assert (HinvE : ∀ i, invoked h' i → invoked (erase l) i).
    { intros i Hin. unfold h' in Hin. by apply invoked_snoc in Hin as [? | (? & ? & ?)]. }
    (* no thread is inside a LOAD after the crash *)
    assert (Hnl : ∀ u, tr u → ldv (pc (th s' u)) = None).
    { intros u Hu. cbn [s' cst th]. rewrite (Hf u Hu). unfold reinit. cbn [with_own with_pc pc].
      by destruct (pc (th s u)) as [| | [] | | | | | | | | | |]. }
    (* the number of each thread's next LOAD is not invoked *)
    assert (Hnotinv : ∀ u, tr u → ¬ invoked (erase l) (lid u (n' u))).
    { intros u Hu. unfold n', lnext. rewrite (Hnl u Hu). destruct (ldv (pc (th s u))) as [[y o] |] eqn:El.
      - intros Hin. destruct (Gids _ Hin) as [(u' & k & Hu' & _ & Hid) | (u' & k & _ & Hle & Hid)].
        + exact (lid_oid _ _ u' k (proj1 Hu') Hid).
        + apply lid_inj in Hid as [<- Hk]. lia.
      - rewrite Nat.add_0_r. by apply (l_idle _ _ _ _ Gld u Hu El). }
    assert (Hact' : ∀ u, tr u → activeb (pc (th s' u)) = true →
      Invoke (oid u (kk (th s' u))) u (opof (th s' u)) ∈ h' ∧ ¬ finished h' (oid u (kk (th s' u))) ∧
      (activeb (pc (th s' u)) = false → pending_on h' u (oid u (kk (th s' u)))) ∧
      (activeb (pc (th s' u)) = true → cut_off h' (oid u (kk (th s' u))))).
    { intros u Hu Ha. destruct (Hth u Hu) as (Hk & Ho & Ha'). rewrite Hk, Ho, Ha. rewrite Ha' in Ha.
      destruct (Gact u Hu Ha) as (H1 & H2 & H3 & H4).
      destruct (current_across_crash (erase l) true (c u) u _ _ H1 H2 H3 H4) as (J1 & J2 & _ & J4).
      split_and!; [exact J1 | exact J2 | done | intros _; by apply J4]. }
    assert (Hidle' : ∀ u, tr u → activeb (pc (th s' u)) = false →
      ¬ invoked h' (oid u (kk (th s' u))) ∧ activeb (pc (th s' u)) = false).
    { intros u Hu Ha. destruct (Hth u Hu) as (Hk & _ & Ha'). rewrite Hk, Ha. split; [| done].
      rewrite Ha' in Ha. intros Hin. by apply (Gidle u Hu Ha), HinvE. }
    assert (Hwf' : wf h') by (apply wf_snoc; by split).
    split; cbn [gs gx gc gl]; rewrite ?Herase.
    - done.
    - apply prefix_ok_rm.
      + rewrite app_assoc. apply prefix_ok_snoc. by split.
      + apply stale_ok. intros u Hu. rewrite erase_app, erase_sp. fold h'. split.
        * destruct (activeb (pc (th s' u))) eqn:Ea.
          -- apply (Hact' u Hu Ea).
          -- intros Hfi. apply (proj1 (Hidle' u Hu Ea)). by apply finished_invoked.
        * intros Hfi. apply (Hnotinv u Hu), HinvE. by apply finished_invoked.
    - intros x. apply cfin_rm. rewrite app_assoc, locx_app, cfin_app, Hrun1. done.
    - done.
    - intros i Hin%HinvE. destruct (Gids i Hin) as [(u & k & Hu & Hle & ->) | (u & k & Hu & Hle & ->)]; [left | right];
        exists u, k; (split_and!; [done | | done]); [by rewrite (proj1 (Hth u Hu)) |].
      unfold n', lnext. destruct (ldv (pc (th s u))), (ldv (pc (th s' u))); lia.
    - intros u k Hu Hlt. unfold h'. apply finished_app, (Gold u k Hu). by rewrite <- (proj1 (Hth u Hu)).
    - intros u Hu Ha. destruct (Hact' u Hu Ha) as (H1 & H2 & H3 & H4). cbn [s' cst th] in *. split_and!; done.
    - intros u Hu Ha. destruct (Hidle' u Hu Ha) as (H1 & H2). cbn [s' cst th] in *. split_and!; done.
    - intros u op v Hu. destruct (Hth u Hu) as (Hk & Ho & _).
      apply (pts_keep N NL s s' n' l E u Hi Hgr Hu Hk Ho (λ op v, Gpts u op v Hu)).
      intros op' v'. split.
      + unfold E. by intros ?%elem_of_list_singleton.
      + intros (_ & _ & H1 & H2). apply (crash_dec s keep f u Hi Hf Hu) in H2. congruence.
    - intros u j Hp. unfold h' in Hp. by apply pending_on_snoc in Hp as [(o & ?) | (_ & ? & _)].
    - apply Forall_rm. apply Forall_app. split; [done |]. apply Forall_app. split; [apply sp_xl_ok |].
      by apply Forall_singleton.
    - split; rewrite ?Herase.
      + intros i t op Hin Hl. unfold h' in Hin. apply elem_of_app in Hin as [Hin | Hin%elem_of_list_singleton];
          [by apply (l_op _ _ _ _ Gld i t) | done].
      + intros u y o Hu Hl. by rewrite Hnl in Hl.
      + intros u Hu _ Hin. by apply (Hnotinv u Hu), HinvE.
      + intros u op v Hu. split.
        * intros [Hin _]%elem_of_rm. exfalso. rewrite app_assoc in Hin. apply elem_of_app in Hin as [Hin | Hin].
          -- apply (Hnotinv u Hu). pose proof (xl_invoked _ _ op v Hok1 Hin) as Hv.
             by rewrite erase_app, erase_sp, app_nil_r in Hv.
          -- by apply elem_of_list_singleton in Hin.
        * intros (y & w & Hw & _). pose proof (Hnl u Hu) as Hn0. by rewrite Hw in Hn0.
  Qed.

  (** The invariant holds in every state of every run with its history. *)
  Lemma ginv_step g g' : ginv g → gstep N NL g g' → ginv g'.
  Proof.
    intros Hg Hs. destruct Hs as [g s' t Hs Hn Hl | g keep f Hok Hf Hf'].
    - exact (ginv_nc N NL g s' t Hg Hs Hn Hl).
    - exact (ginv_crash g keep f Hg Hok Hf Hf').
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
    destruct (step_ncl N NL (gs g) s' (tw_reachable_inv N NL _ Hr) Hs) as [(t & Hn & Hl) | (keep & f & Hok & Hf & Hf' & ->)].
    - eexists. split; [by eapply g_step | done].
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

  (** The operations of the history other than LOADs are the threads'
      invocations of detectable CASes, numbered ([DurableLin.v]'s
      [numbered_for]): (c) and (d) are [DurableLin.v]'s
      [numbered_for_cut_off_recovered] and [numbered_for_detectable]. *)
  Lemma greach_numbered g : greach g →
    numbered_for tr (λ t, kk (th (gs g) t)) (λ t, activeb (pc (th (gs g) t))) (λ i, ¬ is_lid i) (erase (gx g)).
  Proof.
    intros Hg. pose proof (greach_ginv N NL g Hg) as Hi.
    split; [apply (g_wf _ _ _ Hi) | | apply (g_old _ _ _ Hi) |].
    - intros i Hin Hnl. destruct (g_ids _ _ _ Hi i Hin) as [? | (u & k & _ & _ & ->)]; [done |].
      by destruct Hnl; exists u, k.
    - intros u Hu Ha. apply (proj1 (g_idle _ _ _ Hi u Hu Ha)).
  Qed.

  (** An operation invoked as a CAS is not a LOAD. *)
  Lemma cas_op_not_lid g i : greach g → cas_op (erase (gx g)) i → ¬ is_lid i.
  Proof.
    intros Hg (t & x & o & n' & Hin) Hl. pose proof (greach_ginv N NL g Hg) as Hi.
    by pose proof (l_op _ _ _ _ (g_ld _ _ _ Hi) i t _ Hin Hl).
  Qed.

  (** (c) Every detectable CAS a crash cut off is recovered, with the result
      it took effect with (a [recover] follows its point), or it is the
      operation its thread is still running (in recovery).  (A LOAD cut off
      is not recovered: it is not detectable.) *)
  Theorem detcas_linw_cut_off_recovered g i : greach g → cut_off (erase (gx g)) i → cas_op (erase (gx g)) i →
    recovered (erase (gx g)) i ∨
    ∃ t, tr t ∧ activeb (pc (th (gs g) t)) = true ∧ i = oid t (kk (th (gs g) t)).
  Proof.
    intros Hg Hc Hcas. apply (numbered_for_cut_off_recovered _ _ _ _ _ i (greach_numbered g Hg) Hc).
    by apply (cas_op_not_lid g).
  Qed.

  (** (d) Detectability: once no thread is inside a detectable CAS (every
      recovery has returned), the history is detectable for its CASes
      ([detectable_for]): durably linearizable for the registers with
      their loads, every cut-off CAS recovered. *)
  Theorem detcas_linw_detectable g : greach g → (∀ t, tr t → activeb (pc (th (gs g) t)) = false) →
    detectable_for (cas_op (erase (gx g))) cas_regs (erase (gx g)).
  Proof.
    intros Hg Hq.
    destruct (numbered_for_detectable _ _ _ _ _ _ (greach_numbered g Hg) (detcas_linw_durably_linearizable g Hg) Hq)
      as [Hdl Hrec].
    split; [done |]. intros i Hc Hcas. apply Hrec; [done |]. by apply (cas_op_not_lid g).
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

  Lemma ev_ret s s' c l i (v : bool) :
    Return i (RB v) ∈ erase (ev N NL s s' c l) ∨ Recover i (RB v) ∈ erase (ev N NL s s' c l) →
    ∃ u, tr u ∧ i = oid u (kk (th s u)) ∧ kk (th s' u) = S (kk (th s u)) ∧ v = default false (last (res (th s' u))).
  Proof.
    intros Hin. assert (∃ e, (e = Return i (RB v) ∨ e = Recover i (RB v)) ∧ XE e ∈ ev N NL s s' c l) as (e & He & Hin').
    { destruct Hin as [Hin | Hin]; apply elem_of_erase in Hin; eexists; split; [by left | done | by right | done]. }
    unfold ev in Hin'. apply elem_of_list_join in Hin' as (l' & Hin' & Hl). apply elem_of_list_fmap in Hl as (u & -> & Hu).
    apply elem_of_seq in Hu. exists u. apply elem_of_app in Hin' as [Hin' | Hin'].
    2: { exfalso. apply elem_of_erase in Hin'. destruct He as [-> | ->].
         - destruct (evl_ret_rv s s' l u i (RB v) Hin') as [w ?]. done.
         - by apply (proj2 (evl_nocrash s s' l u) i (RB v)). }
    unfold evu in Hin'. rewrite !elem_of_app in Hin'.
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
    Return (oid u k) (RB v) ∈ erase (gx g) ∨ Recover (oid u k) (RB v) ∈ erase (gx g) → res (th (gs g) u) !! k = Some v.
  Proof.
    unfold greach. intros Hr. revert g Hr. refine (rtc_ind_r _ (ginit N NL) _ _).
    { intros u k v _ [H | H]; cbn in H; by apply elem_of_nil in H. }
    intros g1 g2 Hr1 Hs IH u k v Hu Hin.
    pose proof (tw_reachable_inv N NL _ (g_r _ _ _ (greach_ginv N NL g1 Hr1))) as Hi.
    pose proof (i_clock _ _ _ Hi u Hu) as (_ & _ & Hlen).
    destruct Hs as [g s' t Hs _ _ | g keep f Hok Hf Hf']; cbn [gs gx] in *.
    - rewrite erase_rm, !erase_app, erase_sp in Hin. cbn [app] in Hin. rewrite !elem_of_app in Hin.
      destruct (step_res (gs g) s' u Hi Hs Hu) as [[Hk Hres] | [Hk [r Hres]]].
      + rewrite Hres. destruct Hin as [[Hin | Hin] | [Hin | Hin]]; [by apply IH; auto | | by apply IH; auto |].
        all: destruct (ev_ret (gs g) s' (gc g) (gl g) (oid u k) v ltac:(by auto)) as (u' & Hu' & Hid & Hk' & _).
        all: apply oid_inj in Hid as [<- _]; lia.
      + rewrite Hres. destruct (decide (k = kk (th (gs g) u))) as [-> | Hne].
        * assert (v = r) as ->.
          { destruct Hin as [[Hin | Hin] | [Hin | Hin]].
            1, 3: exfalso; pose proof (IH u (kk (th (gs g) u)) v Hu ltac:(by auto)) as Hl; apply lookup_lt_Some in Hl; lia.
            all: destruct (ev_ret (gs g) s' (gc g) (gl g) (oid u (kk (th (gs g) u))) v ltac:(by auto)) as (u' & Hu' & Hid & Hk' & ->).
            all: apply oid_inj in Hid as [<- _]; by rewrite Hres, last_snoc. }
          rewrite lookup_app_r by lia. by rewrite Hlen, Nat.sub_diag.
        * apply lookup_app_l_Some. destruct Hin as [[Hin | Hin] | [Hin | Hin]]; [by apply IH; auto | | by apply IH; auto |].
          all: destruct (ev_ret (gs g) s' (gc g) (gl g) (oid u k) v ltac:(by auto)) as (u' & Hu' & Hid & Hk' & _).
          all: apply oid_inj in Hid as [<- ?]; lia.
    - rewrite erase_rm, !erase_app, erase_sp in Hin. cbn [app] in Hin.
      assert (Return (oid u k) (RB v) ∈ erase (gx g) ∨ Recover (oid u k) (RB v) ∈ erase (gx g)) as Hin'.
      { destruct Hin as [Hin | Hin]; apply elem_of_app in Hin as [Hin | Hin]; try by auto;
          simpl in Hin; by apply elem_of_list_singleton in Hin. }
      cbn [th]. rewrite (Hf u Hu). cbn [reinit with_own with_pc res]. by apply IH.
  Qed.

  (** (f) The result an operation returned or was recovered with, in the
      history, is the one its invocation committed in the model; so
      ([detcas_px2_detectable]) it is [true] iff the invocation's first
      plain CAS is in its location's history as the crashes left it. *)
  Theorem detcas_linw_results g t k v : greach g → tr t →
    Return (oid t k) (RB v) ∈ erase (gx g) ∨ Recover (oid t k) (RB v) ∈ erase (gx g) →
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

(** ** Explicit runs: a step of one thread, taken from a state of a ghost run *)
Section runs.
  Context (N NL : nat).
  Notation greach := (greach N NL).
  Notation gstep := (gstep N NL).
  Notation step := (step N NL fixed2 any_run).

  (** A full crash takes each thread's program counter to [crash_pc]. *)
  Lemma full_crash_pc s s' u : full_crash N NL s s' → DetCasPx.tr N u → pc (th s' u) = crash_pc (pc (th s u)).
  Proof. intros (keep & f & _ & Hf & _ & ->) Hu. cbn [th]. by rewrite Hf. Qed.

  (** A step that is not a full crash is a step of one thread
      ([step_ncl]): the ghost takes it. *)
  Lemma g_step_thread g s' : greach g → step (gs g) s' → ¬ full_crash N NL (gs g) s' →
    gstep g (G s' (rm N NL s' (lnext (gs g) s' (gl g)) (gx g ++ sp N NL (gs g) s' ++ ev N NL (gs g) s' (gc g) (gl g)))
               (λ u, gc g u && activeb (pc (th s' u))) (lnext (gs g) s' (gl g))).
  Proof.
    intros Hg Hs Hnc. pose proof (tw_reachable_inv N NL _ (g_r _ _ _ (greach_ginv N NL g Hg))) as Hi.
    destruct (step_ncl N NL (gs g) s' Hi Hs) as [(t & Hn & Hl) | Hc]; [by eapply g_step | done].
  Qed.

  (** A run whose every step is a ghost step from a state of a ghost run. *)
  Lemma greach_guarded g : rtc (λ g1 g2, greach g1 → gstep g1 g2) (ginit N NL) g → greach g.
  Proof.
    intros H. assert (∀ g0 g1, rtc (λ g1 g2, greach g1 → gstep g1 g2) g0 g1 → greach g0 → greach g1) as Hgen.
    { intros g0 g1 Hr. induction Hr as [x | x y z Hxy _ IH]; intros Hx; [done |].
      apply IH. eapply rtc_r; [exact Hx | by apply Hxy]. }
    apply (Hgen _ _ H), rtc_refl.
  Qed.
End runs.
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
      is well formed, durably linearizable for the CAS registers with their
      loads (and per location), every cut-off CAS recovered or still
      running, and detectable for its CASes once no CAS runs; a returned or
      recovered result is the committed one, [true] iff the first plain CAS
      took effect. *)
  Theorem detcas_lin_every_run s : reachable2 N NL s ↔ ∃ g, greach2 g ∧ gs g = s.
  Proof. apply (detcas_linw_every_run true any_run reach2_inv). Qed.
  Theorem detcas_lin_durably_linearizable g : greach2 g → durably_linearizable cas_regs (erase (gx g)).
  Proof. apply (detcas_linw_durably_linearizable true any_run reach2_inv). Qed.
  Theorem detcas_lin_wf g : greach2 g → wf (erase (gx g)).
  Proof. apply (detcas_linw_wf true any_run reach2_inv). Qed.
  Theorem detcas_lin_cut_off_recovered g i : greach2 g → cut_off (erase (gx g)) i → cas_op (erase (gx g)) i →
    recovered (erase (gx g)) i ∨
    ∃ t, tr t ∧ activeb (pc (th (gs g) t)) = true ∧ i = oid t (kk (th (gs g) t)).
  Proof. apply (detcas_linw_cut_off_recovered true any_run reach2_inv). Qed.
  Theorem detcas_lin_detectable g : greach2 g → (∀ t, tr t → activeb (pc (th (gs g) t)) = false) →
    detectable_for (cas_op (erase (gx g))) cas_regs (erase (gx g)).
  Proof. apply (detcas_linw_detectable true any_run reach2_inv). Qed.
  Theorem detcas_lin_per_location g x : greach2 g →
    durably_linearizable (obj_spec (λ _ : nat, cas_reg) x) (erase (gx g) |_ x).
  Proof. apply (detcas_linw_per_location true any_run reach2_inv). Qed.
  Theorem detcas_lin_results g t k v : greach2 g → tr t →
    Return (oid t k) (RB v) ∈ erase (gx g) ∨ Recover (oid t k) (RB v) ∈ erase (gx g) →
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
  Theorem detcas_lin1_cut_off_recovered g i : greach1 g → cut_off (erase (gx g)) i → cas_op (erase (gx g)) i →
    recovered (erase (gx g)) i ∨
    ∃ t, tr t ∧ activeb (pc (th (gs g) t)) = true ∧ i = oid t (kk (th (gs g) t)).
  Proof. apply (detcas_linw_cut_off_recovered false h_aba reach1_inv). Qed.
  Theorem detcas_lin1_detectable g : greach1 g → (∀ t, tr t → activeb (pc (th (gs g) t)) = false) →
    detectable_for (cas_op (erase (gx g))) cas_regs (erase (gx g)).
  Proof. apply (detcas_linw_detectable false h_aba reach1_inv). Qed.
  Theorem detcas_lin1_per_location g x : greach1 g →
    durably_linearizable (obj_spec (λ _ : nat, cas_reg) x) (erase (gx g) |_ x).
  Proof. apply (detcas_linw_per_location false h_aba reach1_inv). Qed.
  Theorem detcas_lin1_results g t k v : greach1 g → tr t →
    Return (oid t k) (RB v) ∈ erase (gx g) ∨ Recover (oid t k) (RB v) ∈ erase (gx g) →
    res (th (gs g) t) !! k = Some v ∧ (v = true ↔ eff NL (gs g) t k).
  Proof. apply (detcas_linw_results false h_aba reach1_inv). Qed.
End instances.

Section not_vacuous.
  (** A step of thread 1 or 2 of the run, with the proof that it is no
      full crash: a thread whose program counter after the step is not
      what a crash makes of it ([crash_pc]). *)
  Ltac not_crash :=
    let Hc := fresh "Hc" in let Hpc := fresh "Hpc" in
    intros Hc;
    first [ pose proof (full_crash_pc _ _ _ _ 1 Hc ltac:(unfold DetCasPx.tr; lia)) as Hpc; lazy in Hpc; discriminate Hpc
          | pose proof (full_crash_pc _ _ _ _ 2 Hc ltac:(unfold DetCasPx.tr; lia)) as Hpc; lazy in Hpc; discriminate Hpc ].

  Tactic Notation "gs_go" constr(RI) uconstr(c) :=
    eapply rtc_l_eq; [let Hgr := fresh "Hgr" in intros Hgr; eapply (g_step_thread _ _ RI _ _ _ _ Hgr);
                      [apply c; first [exact I | side
                                       | match goal with H : ∀ s x w, h_aba s x w → _ |- _ => apply H; solve_aba end]
                      | not_crash]
                     | norm_state |]; name_state.

  (** A full crash of thread 1's only model ([N = 1]) keeping [keep L]
      writes of line [L]. *)
  Ltac gcrash_go keep :=
    match goal with |- rtc (λ _ _, _ → gstep ?tw ?aba ?N ?NL _ _) ?g _ =>
      let x := eval vm_compute in (gs g) in
      let T1 := eval vm_compute in (reinit N NL x keep 1) in
      eapply rtc_l_eq; [intros _; apply (g_crash tw aba N NL g keep (upd (th x) 1 T1));
        [side | (intros u [??]; destruct u as [|[|]]; [lia | vm_compute; reflexivity | lia])
              | (intros u Hu; unfold upd; destruct (decide (u = 1)) as [->|];
                 [exfalso; apply Hu; unfold DetCasPx.tr; lia | done])]
       | norm_state |]; name_state
    end.

  (** One thread, one location holding 0: CAS(0, 5, 1) fails (L26, L28:
      its failure point), writes its failure memento (L30) and writes it
      back; a full crash keeps the memento; recovery (④) returns ERR. *)
  Lemma detcas_lin_not_vacuous_run (tw : bool) (aba : state → nat → lword → Prop)
      (RI : ∀ N NL s, reachable N NL (fixedw tw) aba s → inv N NL s) :
    ∃ g, greach tw aba 1 1 g ∧ (∀ t, tr 1 t → activeb (pc (th (gs g) t)) = false) ∧
      erase (gx g) = [Invoke (oid 1 0) 1 (0, CAS 5 1); Crash; Recover (oid 1 0) (RB false)].
  Proof.
    destruct tw; (eexists; split; [| split];
      [ apply greach_guarded; unfold ginit;
        gs_go RI (SStart _ _ _ _ _ 1 0 5 1);
        gs_go RI (S26fail _ _ _ _ _ 1 true 0);
        gs_go RI (SFail _ _ _ _ _ 1 true 0);
        gs_go RI (SFailF _ _ _ _ _ 1);
        gcrash_go (λ L : nat, match L with 6 => 1 | _ => 0 end);
        gs_go RI (SRec4 _ _ _ _ _ 1);
        gs_go RI (SCommit _ _ _ _ _ 1 false);
        apply rtc_refl
      | intros t [??]; destruct t as [|[|]]; [lia | vm_compute; reflexivity | lia]
      | vm_compute; reflexivity ]).
  Qed.

  (** The theorems are not about an empty set of histories: a run whose
      history has an operation cut off by a crash and then recovered (with
      the result it took effect with), detectable. *)
  Theorem detcas_lin_not_vacuous :
    ∃ g, greach true any_run 1 1 g ∧
      erase (gx g) = [Invoke (oid 1 0) 1 (0, CAS 5 1); Crash; Recover (oid 1 0) (RB false)] ∧
      cut_off (erase (gx g)) (oid 1 0) ∧ recovered (erase (gx g)) (oid 1 0) ∧
      detectable_for (cas_op (erase (gx g))) cas_regs (erase (gx g)).
  Proof.
    destruct (detcas_lin_not_vacuous_run true any_run reach2_inv) as (g & Hg & Hq & Eh). exists g.
    split_and!; [done | done | | |].
    - rewrite Eh. exists [], [], [Recover (oid 1 0) (RB false)], 1, (0, CAS 5 1). split; [done |].
      intros v Hin. by apply elem_of_nil in Hin.
    - rewrite Eh. exists (RB false). by right; right; left.
    - by apply (detcas_lin_detectable 1 1).
  Qed.

  (** The same run in the one-word model under H-ABA (the run has no
      successful first plain CAS, so the premise constrains nothing). *)
  Theorem detcas_lin1_not_vacuous :
    ∃ g, greach false h_aba 1 1 g ∧
      erase (gx g) = [Invoke (oid 1 0) 1 (0, CAS 5 1); Crash; Recover (oid 1 0) (RB false)] ∧
      recovered (erase (gx g)) (oid 1 0) ∧ detectable_for (cas_op (erase (gx g))) cas_regs (erase (gx g)).
  Proof.
    destruct (detcas_lin_not_vacuous_run false h_aba reach1_inv) as (g & Hg & Hq & Eh). exists g.
    split_and!; [done | done | |].
    - rewrite Eh. exists (RB false). by right; right; left.
    - by apply (detcas_lin1_detectable 1 1).
  Qed.

  (** Two threads, one location holding 0: thread 1's CAS(0, 5) takes
      effect (L26), is flushed (L33: its point), checkpoints (L34–L36),
      cleans the location (L37–L38); thread 2 then LOADs the location: the
      clean word 5 (its point: the register holds 5) and returns 5; thread 1
      commits OK. *)
  Lemma detcas_lin_load_run (tw : bool) (aba : state → nat → lword → Prop)
      (RI : ∀ N NL s, reachable N NL (fixedw tw) aba s → inv N NL s)
      (Haba : ∀ s x w, h_aba s x w → aba s x w) :
    ∃ g, greach tw aba 2 1 g ∧ (∀ t, tr 2 t → activeb (pc (th (gs g) t)) = false) ∧
      erase (gx g) = [Invoke (oid 1 0) 1 (0, CAS 0 5); Invoke (lid 2 0) 2 (0, LOAD);
                      Return (lid 2 0) (RV 5); Return (oid 1 0) (RB true)].
  Proof.
    destruct tw; (eexists; split; [| split];
      [ apply greach_guarded; unfold ginit;
        gs_go RI (SStart _ _ _ _ _ 1 0 0 5);
        gs_go RI (S26ok _ _ _ _ _ 1 true 0);
        gs_go RI (S33 _ _ _ _ _ 1 true 0);
        gs_go RI (S34 _ _ _ _ _ 1 true 0);
        gs_go RI (S36 _ _ _ _ _ 1 true 1);
        gs_go RI (S38 _ _ _ _ _ 1 true 1);
        gs_go RI (SLoad _ _ _ _ _ 2 0);
        gs_go RI (SLoadRet _ _ _ _ _ 2 0 5);
        gs_go RI (SCommit _ _ _ _ _ 1 true);
        apply rtc_refl
      | intros t [??]; destruct t as [|[|[|]]]; [lia | vm_compute; reflexivity | vm_compute; reflexivity | lia]
      | vm_compute; reflexivity ]).
  Qed.

  (** A LOAD in a history: it returns the new value of a CAS that took
      effect before it (its point comes after the CAS's), and the history is
      durably linearizable for the registers with their loads and
      detectable for its CASes. *)
  Theorem detcas_lin_load_not_vacuous :
    ∃ g, greach true any_run 2 1 g ∧
      erase (gx g) = [Invoke (oid 1 0) 1 (0, CAS 0 5); Invoke (lid 2 0) 2 (0, LOAD);
                      Return (lid 2 0) (RV 5); Return (oid 1 0) (RB true)] ∧
      detectable_for (cas_op (erase (gx g))) cas_regs (erase (gx g)).
  Proof.
    destruct (detcas_lin_load_run true any_run reach2_inv ltac:(done)) as (g & Hg & Hq & Eh). exists g.
    split_and!; [done | done |]. by apply (detcas_lin_detectable 2 1).
  Qed.

  Theorem detcas_lin1_load_not_vacuous :
    ∃ g, greach false h_aba 2 1 g ∧
      erase (gx g) = [Invoke (oid 1 0) 1 (0, CAS 0 5); Invoke (lid 2 0) 2 (0, LOAD);
                      Return (lid 2 0) (RV 5); Return (oid 1 0) (RB true)] ∧
      detectable_for (cas_op (erase (gx g))) cas_regs (erase (gx g)).
  Proof.
    destruct (detcas_lin_load_run false h_aba reach1_inv ltac:(done)) as (g & Hg & Hq & Eh). exists g.
    split_and!; [done | done |]. by apply (detcas_lin1_detectable 2 1).
  Qed.
End not_vacuous.

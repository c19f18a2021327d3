(** * Durable linearizability, detectability and linearizability

    The verdicts of [/work/shared/design/HISTORY.md] (what
    [perdure check-history] decides, and what
    [specs/common/DurableLinearizability.tla] states for TLC) over the
    histories of [History.v], for a sequential specification given as a
    possibly nondeterministic relation [spec_step σ op v σ'].

    Definitions.
    - [durably_linearizable S h]: there is an extended history [xh] — [h]
      with linearization points [XL i op v] inserted ([lin_points]) — such
      that, read left to right ([point_ok]):
      + a point of [i] comes after the invoke of [i] (with the same [op]) and
        is the only point of [i];
      + a [return] or [recover] of [i] with value [v] comes after a point of
        [i] with value [v];
      + the points, in order, are a run of [S] from its initial state.
      Crash events impose nothing beyond that ("removing the crash events
      leaves a linearizable history"). So a completed operation takes
      effect exactly once, between its invoke and its return; a recovered
      one exactly once, between its invoke and its [recover], with the
      recovered value; a cut-off operation without [recover] (or one pending
      at the end) at most once, anywhere after its invocation, with any
      value ([lin_points_finished_between], [lin_points_once]).  A completed
      operation lost by a crash is a violation: this is not buffered durable
      linearizability.
    - [detectable S h]: durably linearizable, and every cut-off operation
      is recovered.  Choice: HISTORY.md's [recover] always means "took
      effect, with this result", so on a detectable object every cut-off
      operation took effect exactly once, before its [recover]
      ([detectable_cut_off_took_effect]); the [NoEffect] recover of
      [Histories.tla] is not modelled.  The definition applies to histories
      that end after the recoveries: it is not prefix-closed (a history that
      ends right after a crash is not detectable yet).
    - [linearizable S h]: the classic order-based definition (Herlihy and
      Wing; the one [DurableLinearizability.tla] and the checker search for):
      a sequence of distinct operations with values, containing every
      returned operation with its returned value and only invoked ones,
      that respects real-time order ([precedes]) and is a run of [S].

    Theorems.
    - (a) locality, both directions: [durably_linearizable_local]: a
      well-formed multi-object history is durably linearizable for the
      product of the objects' specifications ([prod_spec]) iff each
      projection [h |_ o] is durably linearizable for its object's
      specification.  The hard direction merges the objects' extended
      histories ([merge]): each object's points go right after the event of
      [h] that precedes them in the object's projection.
    - (b) [detectable_durably_linearizable].
    - (c) [durably_linearizable_iff_linearizable]: on a well-formed
      crash-free history the two coincide; from points to an order is
      direct, from an order to points inserts each operation's point as
      early as its invoke and its predecessors in the order allow ([build]).
    - (d) [durably_linearizable_nil], [durably_linearizable_prefix]
      (prefix-closure).

    Not covered: per-key independence of sets and maps (P-compositionality,
    a variant of (a) for keys instead of objects); the decision procedure of
    the checker and its memoization; objects whose states have different
    types (the product takes one state type [St]; use a sum type). *)
From stdpp Require Import base list decidable.
From perdure.Core Require Import History.

(** ** Sequential specifications *)

Record seq_spec (St Op Val : Type) := SeqSpec {
  spec_init : St;
  spec_step : St → Op → Val → St → Prop;
}.
Global Arguments SeqSpec {_ _ _} _ _.
Global Arguments spec_init {_ _ _} _.
Global Arguments spec_step {_ _ _} _ _ _ _ _.

Section runs.
  Context {St Op Val : Type} (S : seq_spec St Op Val).

  (** [runs σ l]: the operations and values [l] are, in order, steps of [S]
      from [σ]. *)
  Inductive runs : St → list (Op * Val) → Prop :=
    | runs_nil σ : runs σ []
    | runs_cons σ op v σ' l : spec_step S σ op v σ' → runs σ' l → runs σ ((op, v) :: l).

  Definition accepts (l : list (Op * Val)) : Prop := runs (spec_init S) l.

  Lemma runs_app_inv_l σ l1 l2 : runs σ (l1 ++ l2) → runs σ l1.
  Proof.
    revert σ. induction l1 as [| [op v] l1 IH]; intros σ Hr; [constructor |].
    inversion Hr; subst. econstructor; [done |]. by apply IH.
  Qed.
End runs.

(** ** Extended histories: a history with linearization points *)

Inductive xevent (Op Val : Type) :=
  | XE (e : event Op Val)            (* an event of the history *)
  | XL (i : opid) (op : Op) (v : Val). (* operation [i] takes effect, with result [v] *)
Global Arguments XE {_ _} _.
Global Arguments XL {_ _} _ _ _.

Section dl.
  Context {Op Val : Type}.
  Implicit Types (h : history Op Val) (xh : list (xevent Op Val)).

  Definition xe_event (x : xevent Op Val) : option (event Op Val) :=
    match x with XE e => Some e | XL _ _ _ => None end.
  Definition xl_point (x : xevent Op Val) : option (opid * Op * Val) :=
    match x with XE _ => None | XL i op v => Some (i, op, v) end.

  (** The history without its points. *)
  Definition erase xh : history Op Val := omap xe_event xh.
  (** The points without the history: a linearization. *)
  Definition points xh : list (opid * Op * Val) := omap xl_point xh.
  (** What a linearization asks of the sequential specification. *)
  Definition effects (lin : list (opid * Op * Val)) : list (Op * Val) :=
    map (λ p, (p.1.2, p.2)) lin.

  (** The rule for [x] after the extended events [pre]. *)
  Definition point_ok (pre : list (xevent Op Val)) (x : xevent Op Val) : Prop :=
    match x with
    | XL i op v => (∃ t, Invoke i t op ∈ erase pre) ∧ ∀ op' v', XL i op' v' ∉ pre
    | XE (Return i v) | XE (Recover i v) => ∃ op, XL i op v ∈ pre
    | XE _ => True
    end.

  Record lin_points {St} (S : seq_spec St Op Val) h xh : Prop := {
    lp_erase : erase xh = h;
    lp_ok : prefix_ok point_ok xh;
    lp_accepts : accepts S (effects (points xh));
  }.

  Definition durably_linearizable {St} (S : seq_spec St Op Val) h : Prop :=
    ∃ xh, lin_points S h xh.

  Definition detectable {St} (S : seq_spec St Op Val) h : Prop :=
    durably_linearizable S h ∧ ∀ i, cut_off h i → recovered h i.

  (** Linearizability of a (crash-free) history: a total order of
      operations with values. *)
  Record linearization {St} (S : seq_spec St Op Val) h (lin : list (opid * Op * Val)) : Prop := {
    ln_nodup : NoDup (lin.*1.*1);
    ln_invoked : ∀ i op v, (i, op, v) ∈ lin → ∃ t, Invoke i t op ∈ h;
    ln_returns : ∀ i v, Return i v ∈ h → ∃ op, (i, op, v) ∈ lin;
    ln_real_time : ∀ l1 p l2 j, lin = l1 ++ p :: l2 → j ∈ l2.*1.*1 → ¬ precedes h j p.1.1;
    ln_accepts : accepts S (effects lin);
  }.

  Definition linearizable {St} (S : seq_spec St Op Val) h : Prop :=
    ∃ lin, linearization S h lin.

  (** *** Erasing and points *)

  Lemma erase_app xh1 xh2 : erase (xh1 ++ xh2) = erase xh1 ++ erase xh2.
  Proof. apply omap_app. Qed.
  Lemma points_app xh1 xh2 : points (xh1 ++ xh2) = points xh1 ++ points xh2.
  Proof. apply omap_app. Qed.
  Lemma effects_app l1 l2 : effects (l1 ++ l2) = effects l1 ++ effects l2.
  Proof. apply map_app. Qed.

  Lemma elem_of_erase xh e : e ∈ erase xh ↔ XE e ∈ xh.
  Proof.
    unfold erase. rewrite elem_of_list_omap. split.
    - intros ([] & ? & ?); simplify_eq/=. done.
    - intros ?. by exists (XE e).
  Qed.

  Lemma elem_of_points xh i op v : (i, op, v) ∈ points xh ↔ XL i op v ∈ xh.
  Proof.
    unfold points. rewrite elem_of_list_omap. split.
    - intros ([] & ? & ?); simplify_eq/=. done.
    - intros ?. by exists (XL i op v).
  Qed.

  Lemma elem_of_point_ids xh i : i ∈ (points xh).*1.*1 ↔ ∃ op v, XL i op v ∈ xh.
  Proof.
    rewrite elem_of_list_fmap. setoid_rewrite elem_of_list_fmap. split.
    - intros ([i' op] & -> & [[i'' op'] v] & ? & Hin); simplify_eq/=.
      exists op', v. by apply elem_of_points.
    - intros (op & v & Hin). exists (i, op). split; [done |].
      exists (i, op, v). split; [done |]. by apply elem_of_points.
  Qed.

  (** Lifting a split of the history or of the linearization to the
      extended history. *)
  Lemma erase_eq_app_cons xh h1 e h2 :
    erase xh = h1 ++ e :: h2 →
    ∃ xh1 xh2, xh = xh1 ++ XE e :: xh2 ∧ erase xh1 = h1 ∧ erase xh2 = h2.
  Proof.
    intros (xh1 & x & xh2 & -> & Hx & ? & ?)%omap_eq_app_cons.
    destruct x; simplify_eq/=. by exists xh1, xh2.
  Qed.

  Lemma points_eq_app_cons xh l1 p l2 :
    points xh = l1 ++ p :: l2 →
    ∃ xh1 xh2, xh = xh1 ++ XL p.1.1 p.1.2 p.2 :: xh2 ∧ points xh1 = l1 ∧ points xh2 = l2.
  Proof.
    intros (xh1 & x & xh2 & -> & Hx & ? & ?)%omap_eq_app_cons.
    destruct x; simplify_eq/=. by exists xh1, xh2.
  Qed.

  (** *** What a witness says, in the words of HISTORY.md *)

  (** Every operation has at most one point. *)
  Lemma lin_points_once xh xh1 xh2 i op v :
    prefix_ok point_ok xh → xh = xh1 ++ XL i op v :: xh2 →
    ∀ op' v', XL i op' v' ∉ xh1 ++ xh2.
  Proof.
    intros Hok Eh op' v' [Hin | Hin]%elem_of_app.
    - by apply (proj2 (Hok _ _ _ Eh) op' v').
    - apply elem_of_list_split in Hin as (k1 & k2 & ->).
      apply (proj2 (Hok (xh1 ++ XL i op v :: k1) (XL i op' v') k2 ltac:(by rewrite <- app_assoc)) op v).
      apply elem_of_app. right. by left.
  Qed.

  (** A returned or recovered operation takes effect, with its value, after
      its invoke and before its [return] or [recover]. *)
  Lemma lin_points_finished_between xh xh1 e xh2 i v :
    prefix_ok point_ok xh → xh = xh1 ++ XE e :: xh2 → e = Return i v ∨ e = Recover i v →
    ∃ k1 k2 t op, xh1 = k1 ++ XL i op v :: k2 ∧ XE (Invoke i t op) ∈ k1.
  Proof.
    intros Hok Eh He. assert (∃ op, XL i op v ∈ xh1) as [op Hin].
    { pose proof (Hok _ _ _ Eh) as Hp. by destruct He as [-> | ->]. }
    apply elem_of_list_split in Hin as (k1 & k2 & ->).
    destruct (Hok k1 (XL i op v) (k2 ++ XE e :: xh2)) as [[t Hinv] _].
    { by rewrite Eh, <- app_assoc. }
    exists k1, k2, t, op. split; [done |]. by apply elem_of_erase.
  Qed.

  (** *** (b) Detectability *)

  Lemma detectable_durably_linearizable {St} (S : seq_spec St Op Val) h :
    detectable S h → durably_linearizable S h.
  Proof. by intros [? _]. Qed.

  Lemma detectable_cut_off_took_effect {St} (S : seq_spec St Op Val) h xh i :
    detectable S h → lin_points S h xh → cut_off h i → ∃ op v, XL i op v ∈ xh.
  Proof.
    intros [_ Hrec] [Herase Hok _] Hcut. destruct (Hrec i Hcut) as [v Hin].
    rewrite <- Herase in Hin. apply elem_of_erase, elem_of_list_split in Hin as (xh1 & xh2 & Eh).
    destruct (lin_points_finished_between xh xh1 _ xh2 i v Hok Eh) as (k1 & k2 & t & op & -> & _);
      [by right |].
    exists op, v. rewrite Eh. apply elem_of_app. left. apply elem_of_app. right. by left.
  Qed.

  (** *** (d) The empty history; prefix-closure *)

  Lemma durably_linearizable_nil {St} (S : seq_spec St Op Val) : durably_linearizable S [].
  Proof. exists []. split; [done | apply prefix_ok_nil | constructor]. Qed.

  Lemma durably_linearizable_prefix {St} (S : seq_spec St Op Val) h1 h2 :
    durably_linearizable S (h1 ++ h2) → durably_linearizable S h1.
  Proof.
    intros [xh [Herase Hok Hacc]].
    destruct (omap_eq_app _ _ _ _ Herase) as (xh1 & xh2 & -> & E1 & _).
    exists xh1. split; [done | by eapply prefix_ok_app_inv_l |].
    rewrite points_app, effects_app in Hacc. by eapply runs_app_inv_l.
  Qed.

  Lemma linearizable_nil {St} (S : seq_spec St Op Val) : linearizable S [].
  Proof.
    exists []. split; [constructor | | | | constructor].
    - by intros ??? ?%elem_of_nil.
    - by intros ?? ?%elem_of_nil.
    - intros l1 p l2 j Hl. by destruct l1.
  Qed.

  (** *** (c) Crash-free histories: durable linearizability is linearizability *)

  Lemma points_nodup xh : prefix_ok point_ok xh → NoDup ((points xh).*1.*1).
  Proof.
    induction xh as [| x xh IH] using rev_ind; [constructor |].
    intros [Hok Hx]%prefix_ok_snoc. rewrite points_app, !fmap_app.
    apply NoDup_app. split; [by apply IH |]. destruct x as [e | i op v]; simpl.
    - split; [intros ?? Hin; by apply elem_of_nil in Hin | constructor].
    - split; [| apply NoDup_singleton].
      intros j Hj ->%elem_of_list_singleton.
      apply elem_of_point_ids in Hj as (op' & v' & Hin). by apply (proj2 Hx op' v').
  Qed.

  (** From points to an order: the points in their order. *)
  Lemma lin_points_linearization {St} (S : seq_spec St Op Val) h xh :
    wf h → lin_points S h xh → linearization S h (points xh).
  Proof.
    intros Hwf [Herase Hok Hacc]. split; [by apply points_nodup | | | | done].
    - intros i op v (xh1 & xh2 & Eh)%elem_of_points%elem_of_list_split.
      destruct (Hok _ _ _ Eh) as [[t Hin] _]. exists t. rewrite <- Herase, Eh, erase_app.
      apply elem_of_app. by left.
    - intros i v Hin. rewrite <- Herase in Hin.
      apply elem_of_erase, elem_of_list_split in Hin as (xh1 & xh2 & Eh).
      destruct (Hok _ _ _ Eh) as [op Hop]. exists op. apply elem_of_points.
      rewrite Eh. apply elem_of_app. by left.
    - intros l1 [[i op] v] l2 j Hlin Hj (h1 & e & h2 & Eh & Hend & Hinv). simpl in Hinv.
      destruct (points_eq_app_cons _ _ _ _ Hlin) as (a1 & a2 & Ea & _ & Ea2). simpl in Ea.
      rewrite <- Ea2 in Hj. apply elem_of_point_ids in Hj as (opj & vj & Hj).
      rewrite <- Herase in Eh. destruct (erase_eq_app_cons _ _ _ _ Eh) as (b1 & b2 & Eb & Eb1 & Eb2).
      (* [e] ends [j], so [j]'s point is before [e] *)
      assert (∃ op' w, XL j op' w ∈ b1) as (opj' & w & Hjb).
      { pose proof (Hok _ _ _ Eb) as He. destruct e; simpl in Hend, He; subst; naive_solver. }
      destruct (Hok _ _ _ Ea) as [[t Hinvi] _].
      rewrite Ea in Eb.
      destruct (app_cons_split_cases _ _ _ _ _ _ Eb) as [(_ & ? & _) | [(m & -> & Em) | (m & -> & Em)]];
        [done | |].
      + (* the point of [i] before [e]: [i] is invoked before [e] and after it *)
        apply (wf_invoked_twice h h1 (e :: h2) i Hwf); [by rewrite <- Herase | |].
        * exists t, op. rewrite <- Eb1, erase_app. apply elem_of_app. by left.
        * apply invoked_cons. by right.
      + (* [e] before the point of [i]: [j] has a point before and one after *)
        apply elem_of_list_split in Hj as (c1 & c2 & ->).
        apply (lin_points_once xh (b1 ++ XE e :: m ++ XL i op v :: c1) c2 j opj vj Hok
                 ltac:(rewrite Ea; by simplify_list_eq) opj' w).
        apply elem_of_app. left. apply elem_of_app. by left.
  Qed.

  (** From an order to points: after each event of the history, insert the
      longest prefix of the remaining order whose operations are invoked. *)
  Definition to_xl (p : opid * Op * Val) : xevent Op Val := XL p.1.1 p.1.2 p.2.

  Definition inv_ids h : list opid :=
    omap (λ e, match e with Invoke i _ _ => Some i | _ => None end) h.

  Fixpoint ready (seen : list opid) (lin : list (opid * Op * Val)) : list (opid * Op * Val) :=
    match lin with
    | p :: l => if decide (p.1.1 ∈ seen) then p :: ready seen l else []
    | [] => []
    end.
  Fixpoint blocked (seen : list opid) (lin : list (opid * Op * Val)) : list (opid * Op * Val) :=
    match lin with
    | p :: l => if decide (p.1.1 ∈ seen) then blocked seen l else lin
    | [] => []
    end.

  Fixpoint build (acc : list (xevent Op Val)) h (lin : list (opid * Op * Val)) :
      list (xevent Op Val) :=
    match h with
    | [] => acc ++ map to_xl lin
    | e :: h' =>
        let seen := inv_ids (erase (acc ++ [XE e])) in
        build ((acc ++ [XE e]) ++ map to_xl (ready seen lin)) h' (blocked seen lin)
    end.

  Lemma elem_of_inv_ids h i : i ∈ inv_ids h ↔ invoked h i.
  Proof.
    unfold inv_ids, invoked. rewrite elem_of_list_omap. split.
    - intros ([] & ? & ?); simplify_eq/=. eauto.
    - intros (t & op & ?). by exists (Invoke i t op).
  Qed.

  Lemma ready_blocked seen lin : ready seen lin ++ blocked seen lin = lin.
  Proof. induction lin as [| p l IH]; simpl; [done |]. case_decide; simpl; by f_equal. Qed.

  Lemma ready_seen seen lin p : p ∈ ready seen lin → p.1.1 ∈ seen.
  Proof.
    induction lin as [| q l IH]; simpl; [by intros ?%elem_of_nil |].
    case_decide; [| by intros ?%elem_of_nil]. rewrite elem_of_cons. naive_solver.
  Qed.

  Lemma blocked_head seen lin p l : blocked seen lin = p :: l → p.1.1 ∉ seen.
  Proof.
    induction lin as [| q l' IH]; simpl; [done |]. case_decide; [done |]. naive_solver.
  Qed.

  Lemma erase_to_xl ps : erase (map to_xl ps) = [].
  Proof. by induction ps. Qed.
  Lemma points_to_xl ps : points (map to_xl ps) = ps.
  Proof. induction ps as [| [[]] ps IH]; simpl; by f_equal. Qed.

  (** Appending points of invoked operations that have no point yet. *)
  Lemma prefix_ok_to_xl acc ps :
    prefix_ok point_ok acc →
    (∀ p, p ∈ ps → ∃ t, Invoke p.1.1 t p.1.2 ∈ erase acc) →
    NoDup ((points acc ++ ps).*1.*1) →
    prefix_ok point_ok (acc ++ map to_xl ps).
  Proof.
    revert acc. induction ps as [| p ps IH]; intros acc Hok Hinv Hnd; [by rewrite app_nil_r |].
    replace (acc ++ map to_xl (p :: ps)) with ((acc ++ [to_xl p]) ++ map to_xl ps)
      by by rewrite <- app_assoc.
    apply IH.
    - apply prefix_ok_snoc. split; [done |]. split.
      + apply Hinv. by left.
      + intros op' v' Hin. apply elem_of_points in Hin.
        rewrite !fmap_app, !fmap_cons in Hnd. apply NoDup_app in Hnd as (_ & Hnd & _).
        apply (Hnd p.1.1); [| by left]. apply elem_of_list_fmap.
        exists (p.1.1, op'). split; [done |]. apply elem_of_list_fmap. by exists (p.1.1, op', v').
    - intros q Hq. rewrite erase_app, app_nil_r. apply Hinv. by right.
    - destruct p as [[??]?]. by rewrite points_app, <- app_assoc.
  Qed.

  Section build.
    Context {St} (S : seq_spec St Op Val) (H : history Op Val) (LIN : list (opid * Op * Val)).
    Context (Hwf : wf H) (Hcf : crash_free H) (Hlin : linearization S H LIN).

    (** The op of an invoked operation in [LIN] is that of its invoke. *)
    Lemma lin_invoke_op p t op : p ∈ LIN → Invoke p.1.1 t op ∈ H → op = p.1.2.
    Proof.
      intros Hp Hin. destruct p as [[i op'] v].
      destruct (ln_invoked _ _ _ Hlin i op' v Hp) as [t' Hin'].
      by destruct (wf_invoke_agree H i t op t' op' Hwf Hin Hin').
    Qed.

    Lemma build_lin_points h acc lin :
      erase acc ++ h = H → points acc ++ lin = LIN → prefix_ok point_ok acc →
      (∀ p l, lin = p :: l → ¬ invoked (erase acc) p.1.1) →
      lin_points S H (build acc h lin).
    Proof.
      revert acc lin. induction h as [| e h IH]; intros acc lin EH ELIN Hok Hblk; simpl.
      - rewrite app_nil_r in EH. split.
        + by rewrite erase_app, erase_to_xl, app_nil_r.
        + apply prefix_ok_to_xl; [done | | rewrite ELIN; apply (ln_nodup _ _ _ Hlin)].
          intros [[i op] v] Hp. simpl. rewrite EH.
          apply (ln_invoked _ _ _ Hlin i op v). rewrite <- ELIN. apply elem_of_app. by right.
        + rewrite points_app, points_to_xl, ELIN. apply (ln_accepts _ _ _ Hlin).
      - set (seen := inv_ids (erase (acc ++ [XE e]))).
        assert (prefix_ok point_ok (acc ++ [XE e])) as Hok1.
        { apply prefix_ok_snoc. split; [done |].
          destruct e as [i t op | i v | | i v]; simpl; try done.
          - (* a return: its operation's point is already in [acc] *)
            destruct (ln_returns _ _ _ Hlin i v) as [op Hp].
            { rewrite <- EH. apply elem_of_app. right. by left. }
            rewrite <- ELIN in Hp. apply elem_of_app in Hp as [Hp | Hp].
            { exists op. by apply elem_of_points. }
            exfalso. destruct lin as [| q l]; [by apply elem_of_nil in Hp |].
            pose proof (Hblk q l eq_refl) as Hq.
            assert (invoked (erase acc) i) as Hi.
            { by apply (wf_ends_invoked H (erase acc) (Return i v) h i Hwf). }
            apply elem_of_cons in Hp as [<- | Hp]; [done |].
            (* [i] returned before [q] was invoked, yet [q] is first *)
            apply (ln_real_time _ _ _ Hlin (points acc) q l i (eq_sym ELIN)).
            { apply elem_of_list_fmap. exists (i, op). split; [done |].
              apply elem_of_list_fmap. by exists (i, op, v). }
            exists (erase acc), (Return i v), h. split; [done |]. split; [done |].
            destruct q as [[k opk] vk]. simpl in *.
            destruct (ln_invoked _ _ _ Hlin k opk vk) as [tk Hk].
            { rewrite <- ELIN. apply elem_of_app. right. by left. }
            rewrite <- EH, elem_of_app, elem_of_cons in Hk.
            destruct Hk as [Hk | [? | Hk]]; [| done |]; [by destruct Hq; exists tk, opk |].
            by exists tk, opk.
          - (* no [recover] in a crash-free history *)
            exfalso. apply (wf_crash_free_no_recover H i v Hwf Hcf). rewrite <- EH.
            apply elem_of_app. right. by left. }
        assert (erase (acc ++ [XE e]) ++ h = H) as EH1.
        { by rewrite erase_app, <- app_assoc. }
        apply IH.
        + by rewrite erase_app, erase_to_xl, app_nil_r.
        + by rewrite points_app, points_to_xl, points_app, app_nil_r, <- app_assoc, ready_blocked.
        + apply prefix_ok_to_xl; [done | |].
          * intros p Hp. pose proof (ready_seen _ _ _ Hp) as Hi. apply elem_of_inv_ids in Hi.
            destruct Hi as (t & op & Hi). exists t.
            replace p.1.2 with op; [done |].
            apply (lin_invoke_op p t op).
            -- rewrite <- ELIN, <- (ready_blocked seen lin). apply elem_of_app. right.
               apply elem_of_app. by left.
            -- rewrite <- EH1. apply elem_of_app. by left.
          * rewrite points_app, app_nil_r.
            assert (NoDup ((points acc ++ ready seen lin) ++ blocked seen lin).*1.*1) as Hnd.
            { rewrite <- app_assoc, ready_blocked, ELIN. apply (ln_nodup _ _ _ Hlin). }
            rewrite !fmap_app in Hnd. rewrite !fmap_app. by apply NoDup_app in Hnd as [? _].
        + intros p l Hb. rewrite erase_app, erase_to_xl, app_nil_r.
          rewrite <- elem_of_inv_ids. by apply blocked_head in Hb.
    Qed.
  End build.

  Lemma linearization_lin_points {St} (S : seq_spec St Op Val) h lin :
    wf h → crash_free h → linearization S h lin → lin_points S h (build [] h lin).
  Proof.
    intros Hwf Hcf Hlin. apply (build_lin_points S h lin); try done.
    - apply prefix_ok_nil.
    - intros p l _ (t & op & Hin). by apply elem_of_nil in Hin.
  Qed.

  (** (c) On crash-free histories, durable linearizability is
      linearizability. *)
  Theorem durably_linearizable_iff_linearizable {St} (S : seq_spec St Op Val) h :
    wf h → crash_free h → durably_linearizable S h ↔ linearizable S h.
  Proof.
    intros Hwf Hcf. split.
    - intros [xh Hxh]. exists (points xh). by apply lin_points_linearization.
    - intros [lin Hlin]. exists (build [] h lin). by apply linearization_lin_points.
  Qed.
End dl.

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
      value.  A completed
      operation lost by a crash is a violation: this is not buffered durable
      linearizability.  The definitions do not include well-formedness
      ([History.wf]): the checker answers "malformed" instead, and the
      theorems assume it where they need it.
    - [detectable_for P S h]: durably linearizable, and every cut-off
      operation in [P] (the detectable ones) is recovered;
      [detectable S h] takes every operation, and [detectable_objects D h]
      the operations of the detectable objects [D] of a multi-object
      history.  Choices: HISTORY.md's [recover] always means "took effect,
      with this result", so a cut-off detectable operation took effect
      exactly once, before its [recover]
      ([detectable_cut_off_took_effect]); the [NoEffect] recover of
      [Histories.tla] ("did not take effect") is not modelled.  A
      [recover] may come after later crashes and after new operations of
      its thread, as [wf] allows.  The definition is meant for histories
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
    - (b) [detectable_durably_linearizable] (and
      [detectable_for_durably_linearizable]).
    - (c) [durably_linearizable_iff_linearizable]: on a well-formed
      crash-free history the two coincide; from points to an order is
      direct, from an order to points inserts each operation's point as
      early as its invoke and its predecessors in the order allow ([build]).
    - (d) [durably_linearizable_nil], [durably_linearizable_prefix]
      (prefix-closure), [linearizable_nil].
    - The witness says what HISTORY.md says: [lin_points_once] (at most one
      point per operation), [lin_points_finished_between] (a returned or
      recovered operation's point lies between its invoke and its
      [return]/[recover], with its value).
    - (e) What the models' history proofs share
      ([Memento/CheckpointPxLin.v], [DetCasPxLin.v], [InsDelPxLin.v]: each
      run of a model paired with a ghost history, an invariant of the ghost
      runs), proved once: [rtc_preserved] (an invariant of a transition
      system: each file's [greach_ginv]); [ghost_runs] (if every ghost
      run's state is reachable and every step of the model from it is
      matched by a ghost step, the reachable states are exactly the ghost
      runs' states: [..._every_run]); [durably_linearizable_erase] (points
      that are well placed and run the specification are a witness:
      [..._durably_linearizable]); [numbered h] (every operation of [h] is
      an invocation [oid u k] of a thread [u], the thread's invocations
      before its current one [K u] finished, the current one invoked only
      while the thread is inside it, [act u]; [h] well formed), from which
      every operation a crash cut off is recovered or is the current
      invocation of a thread still inside it
      ([numbered_cut_off_recovered]), and a durably linearizable such
      history is [detectable] once no thread is inside an invocation
      ([numbered_detectable]): [..._cut_off_recovered], [..._detectable];
      the same for the operations [P] of a history that has others
      ([numbered_for], [numbered_for_cut_off_recovered],
      [numbered_for_detectable]: [detectable_for P], [DetCasPxLin.v]);
      [current_across_crash] (a thread's current operation across a step
      that appends a crash or nothing: the invariants' crash steps).

    Not covered: per-key independence of sets and maps (P-compositionality,
    a variant of (a) for keys instead of objects); the decision procedure of
    the checker and its memoization; objects whose states have different
    types (the product takes one state type [St]; use a sum type). *)
From stdpp Require Import base list decidable relations.
From Coq Require Import Lia.
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

  (** Detectability of the operations [P] (e.g. those of the detectable
      objects of a multi-object history, [detectable_objects]). *)
  Definition detectable_for {St} (P : opid → Prop) (S : seq_spec St Op Val) h : Prop :=
    durably_linearizable S h ∧ ∀ i, cut_off h i → P i → recovered h i.

  Definition detectable {St} (S : seq_spec St Op Val) h : Prop :=
    detectable_for (λ _, True) S h.

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
  Lemma erase_snoc_XE xh e : erase (xh ++ [XE e]) = erase xh ++ [e].
  Proof. by rewrite erase_app. Qed.
  Lemma erase_snoc_XL xh i op v : erase (xh ++ [XL i op v]) = erase xh.
  Proof. rewrite erase_app. simpl. by rewrite app_nil_r. Qed.
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
  (** A point's operation was invoked before it. *)
  Lemma xl_invoked xh i op v : prefix_ok point_ok xh → XL i op v ∈ xh → invoked (erase xh) i.
  Proof.
    intros Hok (l1 & l2 & El)%elem_of_list_split. destruct (Hok _ _ _ El) as [[t Hin] _].
    exists t, op. rewrite El, erase_app. apply elem_of_app. by left.
  Qed.

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

  Lemma detectable_for_durably_linearizable {St} P (S : seq_spec St Op Val) h :
    detectable_for P S h → durably_linearizable S h.
  Proof. by intros [? _]. Qed.

  Lemma detectable_durably_linearizable {St} (S : seq_spec St Op Val) h :
    detectable S h → durably_linearizable S h.
  Proof. apply detectable_for_durably_linearizable. Qed.

  Lemma detectable_for_cut_off_took_effect {St} P (S : seq_spec St Op Val) h xh i :
    detectable_for P S h → lin_points S h xh → cut_off h i → P i → ∃ op v, XL i op v ∈ xh.
  Proof.
    intros [_ Hrec] [Herase Hok _] Hcut HP. destruct (Hrec i Hcut HP) as [v Hin].
    rewrite <- Herase in Hin. apply elem_of_erase, elem_of_list_split in Hin as (xh1 & xh2 & Eh).
    destruct (lin_points_finished_between xh xh1 _ xh2 i v Hok Eh) as (k1 & k2 & t & op & -> & _);
      [by right |].
    exists op, v. rewrite Eh. apply elem_of_app. left. apply elem_of_app. right. by left.
  Qed.

  Lemma detectable_cut_off_took_effect {St} (S : seq_spec St Op Val) h xh i :
    detectable S h → lin_points S h xh → cut_off h i → ∃ op v, XL i op v ∈ xh.
  Proof. intros Hd Hxh Hcut. by apply (detectable_for_cut_off_took_effect _ S h xh i Hd Hxh Hcut). Qed.

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

(** ** (a) Locality *)

(** Finitely many choices need no axiom of choice. *)
Lemma finite_choice {A X : Type} `{!EqDecision A} (P : A → X → Prop) (d : X) (os : list A) :
  (∀ o, o ∈ os → ∃ x, P o x) → ∃ g : A → X, ∀ o, o ∈ os → P o (g o).
Proof.
  induction os as [| o os IH]; intros Hex.
  { exists (λ _, d). by intros ? ?%elem_of_nil. }
  destruct (Hex o) as [x Hx]; [by left |].
  destruct IH as [g Hg]; [intros o' ?; apply Hex; by right |].
  exists (λ o', if decide (o' = o) then x else g o').
  intros o' [-> | Ho']%elem_of_cons; case_decide; subst; auto; congruence.
Qed.

Section locality.
  Context {Obj Op Val St : Type} `{!EqDecision Obj}.
  Context (S : Obj → seq_spec St Op Val).
  Implicit Types (h : history (Obj * Op) Val) (xh : list (xevent (Obj * Op) Val)).

  (** The objects side by side: a step of object [o] changes [o]'s state
      only. *)
  Definition prod_spec : seq_spec (Obj → St) (Obj * Op) Val :=
    SeqSpec (λ o, spec_init (S o))
      (λ σ oop v σ', spec_step (S oop.1) (σ oop.1) oop.2 v (σ' oop.1) ∧
                     ∀ o', o' ≠ oop.1 → σ' o' = σ o').

  (** Object [o] alone, for its projection (whose events all name [o]). *)
  Definition obj_spec (o : Obj) : seq_spec St (Obj * Op) Val :=
    SeqSpec (spec_init (S o)) (λ σ oop v σ', spec_step (S o) σ oop.2 v σ').

  Definition strip (o : Obj) (l : list ((Obj * Op) * Val)) : list (Op * Val) :=
    omap (λ p, if decide (p.1.1 = o) then Some (p.1.2, p.2) else None) l.
  Definition unlabel (l : list ((Obj * Op) * Val)) : list (Op * Val) :=
    map (λ p, (p.1.2, p.2)) l.

  Lemma runs_obj_spec o σ l : runs (obj_spec o) σ l ↔ runs (S o) σ (unlabel l).
  Proof.
    revert σ. induction l as [| [oop v] l IH]; intros σ; simpl.
    - split; intros _; constructor.
    - split; intros Hr; inversion Hr as [| ? ? ? σ' ? Hs Hr']; subst;
        (econstructor; [exact Hs | by apply IH]).
  Qed.

  (** A run of the product is a run of every object. *)
  Lemma runs_prod σ l : runs prod_spec σ l ↔ ∀ o, runs (S o) (σ o) (strip o l).
  Proof.
    split.
    - induction 1 as [σ | σ [o op] v σ' l [Hstep Hframe] _ IH]; intros o'; [constructor |].
      simpl in *. unfold strip; simpl. case_decide as Ho; simpl.
      + subst o'. econstructor; [done | apply IH].
      + rewrite <- (Hframe o') by done. apply IH.
    - revert σ. induction l as [| [[o op] v] l IH]; intros σ Hall; [constructor |].
      pose proof (Hall o) as Ho. unfold strip in Ho; simpl in Ho.
      rewrite decide_True in Ho by done. inversion Ho as [| ? ? ? s' ? Hstep Hrest]; subst.
      set (σ' := λ o', if decide (o' = o) then s' else σ o').
      apply (runs_cons _ σ (o, op) v σ').
      + split; simpl; unfold σ'; [by rewrite decide_True |].
        intros o' Ho'. by rewrite decide_False.
      + apply IH. intros o'. unfold σ'. case_decide; [by subst |].
        pose proof (Hall o') as Ho'. unfold strip in Ho'; simpl in Ho'.
        by rewrite decide_False in Ho' by congruence.
  Qed.

  (** *** Projecting extended histories *)

  Definition xin_obj (f : opid → option Obj) (o : Obj) (x : xevent (Obj * Op) Val) : Prop :=
    match x with XE e => in_obj f o e | XL i _ _ => f i = Some o end.
  Global Instance xin_obj_dec f o x : Decision (xin_obj f o x).
  Proof. destruct x; simpl; apply _. Defined.

  Definition xproject f o xh : list (xevent (Obj * Op) Val) := filter (xin_obj f o) xh.

  Lemma xproject_app f o xh1 xh2 : xproject f o (xh1 ++ xh2) = xproject f o xh1 ++ xproject f o xh2.
  Proof. apply stdpp.list.filter_app. Qed.

  Lemma elem_of_xproject f o xh x : x ∈ xproject f o xh ↔ xin_obj f o x ∧ x ∈ xh.
  Proof. apply elem_of_list_filter. Qed.

  Lemma erase_xproject f o xh : erase (xproject f o xh) = project_with f o (erase xh).
  Proof.
    induction xh as [| [e | i op v] xh IH]; [done | |]; unfold xproject in *;
      rewrite filter_cons; case_decide as Hk; simpl; try apply IH.
    - unfold project_with. rewrite filter_cons_True by done. f_equal. apply IH.
    - unfold project_with. rewrite filter_cons_False by done. apply IH.
  Qed.

  Lemma strip_points f o xh :
    (∀ i oop v, XL i oop v ∈ xh → f i = Some oop.1) →
    strip o (effects (points xh)) = unlabel (effects (points (xproject f o xh))).
  Proof.
    induction xh as [| [e | i [o' op] v] xh IH]; intros Hf; [done | |].
    - unfold xproject. rewrite filter_cons. case_decide; simpl; apply IH;
        intros i' oop' v' Hin; apply (Hf i' oop' v'); by right.
    - assert (f i = Some o') as Hi by (apply (Hf i (o', op) v); by left).
      unfold xproject. rewrite filter_cons. unfold strip. simpl.
      case_decide as Ho; case_decide as Ho'; simpl in *; simplify_eq; try congruence.
      + f_equal. apply IH. intros i' oop' v' Hin. apply (Hf i' oop' v'). by right.
      + apply IH. intros i' oop' v' Hin. apply (Hf i' oop' v'). by right.
  Qed.

  Lemma point_ok_xproject f o l x :
    xin_obj f o x → point_ok l x → point_ok (xproject f o l) x.
  Proof.
    intros Hx Hok. destruct x as [[i t op | i v | | i v] | i op v]; simpl in *; try done.
    - destruct Hok as [op Hin]. exists op. by apply elem_of_xproject.
    - destruct Hok as [op Hin]. exists op. by apply elem_of_xproject.
    - destruct Hok as [[t Hin] Hnot]. split.
      + exists t. rewrite erase_xproject. by apply elem_of_project_with.
      + intros op' v' [_ ?]%elem_of_xproject. by apply (Hnot op' v').
  Qed.

  Lemma point_ok_of_xproject f o l x :
    xin_obj f o x → point_ok (xproject f o l) x → point_ok l x.
  Proof.
    intros Hx Hok. destruct x as [[i t op | i v | | i v] | i op v]; simpl in *; try done.
    - destruct Hok as [op [_ Hin]%elem_of_xproject]. by exists op.
    - destruct Hok as [op [_ Hin]%elem_of_xproject]. by exists op.
    - destruct Hok as [[t Hin] Hnot]. split.
      + exists t. rewrite erase_xproject in Hin. by apply elem_of_project_with in Hin as [_ ?].
      + intros op' v' Hin'. apply (Hnot op' v'). by apply elem_of_xproject.
  Qed.

  (** In a witness for a well-formed history, every point names the object
      of its operation. *)
  Lemma lin_points_obj h xh i oop v :
    wf h → erase xh = h → prefix_ok point_ok xh → XL i oop v ∈ xh → obj_of h i = Some oop.1.
  Proof.
    intros Hwf Herase Hok (l1 & l2 & Eh)%elem_of_list_split.
    destruct (Hok _ _ _ Eh) as [[t Hin] _]. destruct oop as [o op].
    apply (obj_of_invoke h i t o op Hwf). rewrite <- Herase, Eh, erase_app.
    apply elem_of_app. by left.
  Qed.

  (** *** Whole to parts *)

  Lemma lin_points_project h xh o :
    wf h → lin_points prod_spec h xh →
    lin_points (obj_spec o) (h |_ o) (xproject (obj_of h) o xh).
  Proof.
    intros Hwf Hxh. pose proof Hxh as [Herase Hok Hacc]. split.
    - by rewrite erase_xproject, Herase.
    - intros m1 x m2 Hm. destruct (filter_eq_app_cons _ _ _ _ _ Hm) as (l1 & l2 & Eh & <- & _).
      apply point_ok_xproject; [| by apply (Hok _ _ _ Eh)].
      apply (elem_of_xproject (obj_of h) o xh). rewrite Hm. apply elem_of_app. right. by left.
    - unfold accepts. apply runs_obj_spec. simpl.
      rewrite <- (strip_points (obj_of h)); [| intros ???; by apply lin_points_obj].
      by apply (runs_prod (λ o, spec_init (S o))).
  Qed.

  (** *** Parts to whole: merging the objects' extended histories *)

  Fixpoint lead xh : list (xevent (Obj * Op) Val) :=
    match xh with XL i op v :: xh' => XL i op v :: lead xh' | _ => [] end.
  Fixpoint rest xh : list (xevent (Obj * Op) Val) :=
    match xh with XL _ _ _ :: xh' => rest xh' | _ => xh end.

  Lemma lead_rest xh : lead xh ++ rest xh = xh.
  Proof. induction xh as [| [] xh IH]; simpl; by f_equal. Qed.
  Lemma erase_lead xh : erase (lead xh) = [].
  Proof. induction xh as [| [] xh IH]; by simpl. Qed.
  Lemma erase_rest xh : erase (rest xh) = erase xh.
  Proof. induction xh as [| [] xh IH]; by simpl. Qed.
  Lemma rest_subseteq xh x : x ∈ rest xh → x ∈ xh.
  Proof. induction xh as [| [] xh IH]; simpl; [done | done |]. intros ?. right. auto. Qed.
  Lemma lead_subseteq xh x : x ∈ lead xh → x ∈ xh.
  Proof. rewrite <- (lead_rest xh) at 2. intros ?. apply elem_of_app. by left. Qed.
  Lemma lead_XL xh x : x ∈ lead xh → ∃ i op v, x = XL i op v.
  Proof.
    induction xh as [| [|i op v] xh IH]; simpl; try by intros ?%elem_of_nil.
    intros [-> | ?]%elem_of_cons; eauto.
  Qed.
  Lemma rest_erase_cons xh e l :
    erase xh = e :: l → rest xh = XE e :: tail (rest xh) ∧ erase (tail (rest xh)) = l.
  Proof. induction xh as [| [e' | i op v] xh IH]; simpl; [done | intros; by simplify_eq | exact IH]. Qed.
  Lemma erase_nil_XL xh x : erase xh = [] → x ∈ xh → ∃ i op v, x = XL i op v.
  Proof.
    induction xh as [| [e | i op v] xh IH]; simpl; [by intros _ ?%elem_of_nil | done |].
    intros Hn [-> | ?]%elem_of_cons; eauto.
  Qed.

  Lemma elem_of_concat_map {A} (k : Obj → list A) (os : list Obj) x :
    x ∈ concat (map k os) ↔ ∃ o, o ∈ os ∧ x ∈ k o.
  Proof.
    induction os as [| o os IH]; simpl.
    - split; [by intros ?%elem_of_nil | by intros (? & ?%elem_of_nil & _)].
    - rewrite elem_of_app, IH. setoid_rewrite elem_of_cons. naive_solver.
  Qed.

  Lemma xproject_cons_in f o x xh : xin_obj f o x → xproject f o (x :: xh) = x :: xproject f o xh.
  Proof. apply filter_cons_True. Qed.

  Lemma points_nil xh : (∀ i op v, XL i op v ∉ xh) → points xh = [].
  Proof.
    induction xh as [| [e | i op v] xh IH]; intros Hno; [done | |].
    - apply IH. intros i op v ?. apply (Hno i op v). by right.
    - exfalso. apply (Hno i op v). by left.
  Qed.

  Lemma xproject_all f o xh : (∀ x, x ∈ xh → xin_obj f o x) → xproject f o xh = xh.
  Proof.
    induction xh as [| x xh IH]; intros Hall; [done |]. unfold xproject.
    rewrite filter_cons_True by (apply Hall; by left). f_equal.
    apply IH. intros y ?. apply Hall. by right.
  Qed.

  Lemma xproject_nil f o xh : (∀ x, x ∈ xh → ¬ xin_obj f o x) → xproject f o xh = [].
  Proof.
    induction xh as [| x xh IH]; intros Hno; [done |]. unfold xproject.
    rewrite filter_cons_False by (apply Hno; by left). apply IH. intros y ?. apply Hno. by right.
  Qed.

  (** Projecting the concatenation of the objects' pieces to [o] keeps [o]'s
      piece, when every piece holds only its object's events. *)
  Lemma xproject_concat_map f (os : list Obj) (k : Obj → list (xevent (Obj * Op) Val)) o :
    NoDup os → o ∈ os →
    (∀ o', o' ∈ os → o' ≠ o → xproject f o (k o') = []) →
    xproject f o (concat (map k os)) = xproject f o (k o).
  Proof.
    induction os as [| o1 os IH]; intros Hnd Ho Hother; [by apply elem_of_nil in Ho |].
    apply stdpp.list.NoDup_cons in Hnd as [Hnin Hnd]. simpl. rewrite xproject_app.
    destruct (decide (o1 = o)) as [-> | Hne].
    - assert (xproject f o (concat (map k os)) = []) as ->; [| by rewrite app_nil_r].
      apply xproject_nil. intros x (o' & Ho' & Hx)%elem_of_concat_map Hxo.
      assert (xproject f o (k o') = []) as Hnil by (apply Hother; [by right | congruence]).
      assert (x ∈ xproject f o (k o')) as Hin by by apply elem_of_xproject.
      rewrite Hnil in Hin. by apply elem_of_nil in Hin.
    - rewrite Hother by (by left || done). simpl. apply IH; [done | | ].
      + apply elem_of_cons in Ho as [? | ?]; [congruence | done].
      + intros o' ? ?. apply Hother; [by right | done].
  Qed.

  Section merge.
    Context (f : opid → option Obj) (os : list Obj) (Hnd : NoDup os).

    (** Before each event of [h], the points that each object's extended
        history has before that event; after it, the rest. *)
    Fixpoint merge h (g : Obj → list (xevent (Obj * Op) Val)) : list (xevent (Obj * Op) Val) :=
      match h with
      | [] => concat (map g os)
      | e :: h' =>
          concat (map (λ o, lead (g o)) os) ++ XE e ::
            merge h' (λ o, if decide (in_obj f o e) then tail (rest (g o)) else rest (g o))
      end.

    Definition pieces_ok h (g : Obj → list (xevent (Obj * Op) Val)) : Prop :=
      ∀ o, o ∈ os → erase (g o) = project_with f o h ∧ ∀ x, x ∈ g o → xin_obj f o x.

    Lemma pieces_ok_cons e h g :
      pieces_ok (e :: h) g →
      pieces_ok h (λ o, if decide (in_obj f o e) then tail (rest (g o)) else rest (g o)).
    Proof.
      intros Hg o Ho. destruct (Hg o Ho) as [Herase Hin]. case_decide.
      - unfold project_with in Herase. rewrite filter_cons_True in Herase by done.
        destruct (rest_erase_cons _ _ _ Herase) as [Hr Htl]. split; [done |].
        intros x Hx. apply Hin, rest_subseteq. rewrite Hr. by right.
      - unfold project_with in Herase. rewrite filter_cons_False in Herase by done.
        split; [by rewrite erase_rest |]. intros x ?. by apply Hin, rest_subseteq.
    Qed.

    Lemma erase_concat_map_nil (k : Obj → list (xevent (Obj * Op) Val)) :
      (∀ o, o ∈ os → erase (k o) = []) → erase (concat (map k os)) = [].
    Proof.
      clear Hnd. induction os as [| o os' IH]; intros Hk; [done |]. simpl.
      rewrite erase_app, Hk by (by left). apply IH. intros o' ?. apply Hk. by right.
    Qed.

    Lemma erase_merge h g : pieces_ok h g → erase (merge h g) = h.
    Proof.
      revert g. induction h as [| e h IH]; intros g Hg; simpl.
      - apply erase_concat_map_nil. intros o Ho. apply (Hg o Ho).
      - rewrite erase_app, erase_concat_map_nil by (intros; apply erase_lead). simpl.
        f_equal. by apply IH, pieces_ok_cons.
    Qed.

    (** Every point of the merge comes from some object's piece. *)
    Lemma merge_points_obj h g i op v :
      pieces_ok h g → XL i op v ∈ merge h g → ∃ o, o ∈ os ∧ f i = Some o.
    Proof.
      revert g. induction h as [| e h IH]; intros g Hg; simpl.
      - intros (o & Ho & Hin)%elem_of_concat_map. exists o. split; [done |].
        apply (proj2 (Hg o Ho) (XL i op v) Hin).
      - intros [(o & Ho & Hin)%elem_of_concat_map | [? | Hin]%elem_of_cons]%elem_of_app;
          [| done |].
        + exists o. split; [done |]. apply (proj2 (Hg o Ho) (XL i op v)). by apply lead_subseteq.
        + by apply (IH _ (pieces_ok_cons _ _ _ Hg)).
    Qed.

    (** Projecting the merge to an object gives back its piece. *)
    Lemma xproject_merge h g o : pieces_ok h g → o ∈ os → xproject f o (merge h g) = g o.
    Proof.
      revert g. induction h as [| e h IH]; intros g Hg Ho; simpl.
      - rewrite (xproject_concat_map f os g o Hnd Ho).
        + apply xproject_all. apply (proj2 (Hg o Ho)).
        + intros o' Ho' Hne. apply xproject_nil. intros x Hx Hxo.
          destruct (erase_nil_XL (g o') x) as (i & op & v & ->); [by apply (Hg o' Ho') | done |].
          pose proof (proj2 (Hg o' Ho') _ Hx). simpl in *. congruence.
      - rewrite xproject_app, (xproject_concat_map f os (λ o, lead (g o)) o Hnd Ho).
        2: { intros o' Ho' Hne. apply xproject_nil. intros x Hx Hxo.
             destruct (lead_XL _ _ Hx) as (i & op & v & ->).
             pose proof (proj2 (Hg o' Ho') _ (lead_subseteq _ _ Hx)). simpl in *. congruence. }
        pose proof (IH _ (pieces_ok_cons _ _ _ Hg) Ho) as IHo.
        assert (xproject f o (lead (g o)) = lead (g o)) as ->.
        { apply xproject_all. intros x Hx. apply (proj2 (Hg o Ho)). by apply lead_subseteq. }
        destruct (Hg o Ho) as [Herase _]. unfold xproject in IHo |- *. rewrite filter_cons.
        case_decide as He; simpl in *; rewrite IHo.
        + rewrite decide_True by done.
          unfold project_with in Herase. rewrite filter_cons_True in Herase by done.
          destruct (rest_erase_cons _ _ _ Herase) as [Hr _].
          rewrite <- Hr. apply lead_rest.
        + rewrite decide_False by done. apply lead_rest.
    Qed.
  End merge.

  Definition objects h : list Obj :=
    omap (λ e, match e with Invoke _ _ oop => Some oop.1 | _ => None end) h.

  Lemma obj_of_objects h i o : obj_of h i = Some o → o ∈ objects h.
  Proof.
    intros (t & op & Hin)%obj_of_Some. apply elem_of_list_omap. by exists (Invoke i t (o, op)).
  Qed.

  Lemma lin_points_merge h (g : Obj → list (xevent (Obj * Op) Val)) :
    wf h → (∀ o, o ∈ objects h → lin_points (obj_spec o) (h |_ o) (g o)) →
    lin_points prod_spec h (merge (obj_of h) (remove_dups (objects h)) h g).
  Proof.
    intros Hwf Hg. set (f := obj_of h). set (os := remove_dups (objects h)).
    assert (NoDup os) as Hnd by apply NoDup_remove_dups.
    assert (∀ o, o ∈ os ↔ o ∈ objects h) as Hos by (intros; apply elem_of_remove_dups).
    assert (pieces_ok f os h g) as Hpieces.
    { intros o Ho%Hos. destruct (Hg o Ho) as [Herase Hok _]. split; [done |].
      intros x (l1 & l2 & Ex)%elem_of_list_split.
      assert (∀ e, e ∈ erase l1 → in_obj f o e) as Hl1.
      { intros e He. apply (elem_of_project_with f o h e).
        change (project_with f o h) with (h |_ o). rewrite <- Herase, Ex, erase_app.
        by apply elem_of_app; left. }
      destruct x as [e | i op v].
      - apply (elem_of_project_with f o h e).
        change (project_with f o h) with (h |_ o). rewrite <- Herase, Ex, erase_app.
        apply elem_of_app. right. by left.
      - destruct (Hok _ _ _ Ex) as [[t Hin] _]. apply (Hl1 _ Hin). }
    set (xh := merge f os h g).
    assert (erase xh = h) as Herase by by apply erase_merge.
    (* a point, or a [return]/[recover], of an operation of object [o] is
       checked in [o]'s piece *)
    assert (∀ o l1 x l2, o ∈ os → xin_obj f o x → xh = l1 ++ x :: l2 → point_ok l1 x) as Hvia.
    { intros o l1 x l2 Ho Hx Ex. apply (point_ok_of_xproject f o); [done |].
      destruct (Hg o (proj1 (Hos o) Ho)) as [_ Hok _].
      rewrite <- (xproject_merge f os Hnd h g o Hpieces Ho) in Hok. fold xh in Hok.
      rewrite Ex, xproject_app, xproject_cons_in in Hok by done.
      by apply (Hok (xproject f o l1) x (xproject f o l2)). }
    assert (∀ i, invoked h i → ∃ o, o ∈ os ∧ f i = Some o) as Hinv_obj.
    { intros i (t & [o op] & Hin). exists o. split.
      - apply Hos. apply (obj_of_objects h i o). by apply (obj_of_invoke h i t o op).
      - by apply (obj_of_invoke h i t o op). }
    assert (prefix_ok point_ok xh) as Hok.
    { intros l1 x l2 Ex. assert (x ∈ xh) as Hx by (rewrite Ex; apply elem_of_app; right; by left).
      destruct x as [[i t op | i v | | i v] | i op v]; try done.
      - destruct (Hinv_obj i) as (o & Ho & Hi).
        { apply (wf_return_invoked h i v Hwf). rewrite <- Herase. by apply elem_of_erase. }
        by apply (Hvia o l1 _ l2).
      - destruct (Hinv_obj i) as (o & Ho & Hi).
        { apply (wf_recover_invoked h i v Hwf). rewrite <- Herase. by apply elem_of_erase. }
        by apply (Hvia o l1 _ l2).
      - destruct (merge_points_obj f os h g i op v Hpieces Hx) as (o & Ho & Hi).
        by apply (Hvia o l1 _ l2). }
    split; [done | done |].
    unfold accepts. apply (runs_prod (λ o, spec_init (S o))). intros o.
    rewrite (strip_points f o); [| intros ???; by apply lin_points_obj].
    destruct (decide (o ∈ os)) as [Ho | Ho].
    - unfold xh. rewrite (xproject_merge f os Hnd h g o Hpieces Ho).
      apply runs_obj_spec. by destruct (Hg o (proj1 (Hos o) Ho)).
    - rewrite points_nil; [constructor |].
      intros i op v [Hi Hin]%elem_of_xproject. simpl in Hi.
      destruct (merge_points_obj f os h g i op v Hpieces Hin) as (o' & Ho' & Hi').
      apply Ho. congruence.
  Qed.

  (** Detectability of the objects [D] of a multi-object history. *)
  Definition detectable_objects (D : Obj → Prop) h : Prop :=
    detectable_for (λ i, ∃ o, obj_of h i = Some o ∧ D o) prod_spec h.

  (** (a) Durable linearizability is local. *)
  Theorem durably_linearizable_local h :
    wf h →
    durably_linearizable prod_spec h ↔ ∀ o, durably_linearizable (obj_spec o) (h |_ o).
  Proof.
    intros Hwf. split.
    - intros [xh Hxh] o. eexists. by apply lin_points_project.
    - intros Hall.
      destruct (finite_choice (λ o xh, lin_points (obj_spec o) (h |_ o) xh) [] (objects h))
        as [g Hg].
      { intros o _. apply Hall. }
      eexists. by apply lin_points_merge.
  Qed.
End locality.

(** ** (e) Ghost runs of a model

    A model's runs paired with ghost histories ([CheckpointPxLin.v],
    [DetCasPxLin.v], [InsDelPxLin.v]): the steps of their proofs that do not
    depend on the model. *)

(** An invariant of a transition system: what [x] satisfies and every step
    keeps holds in every state reachable from [x]. *)
Lemma rtc_preserved {A} (R : relation A) (P : A → Prop) x :
  P x → (∀ y z, P y → R y z → P z) → ∀ y, rtc R x y → P y.
Proof. intros Hx Hs. apply (rtc_ind_r _ x); [done |]. intros y z _ Hyz Hy. by apply (Hs y z). Qed.

(** The ghost runs ([GR] from [b0], on states that [π] maps to the
    model's) are the model's runs ([R] from [a0]), if the ghost runs reach
    only reachable states and each step of the model from a ghost run's
    state is matched by a ghost step. *)
Lemma ghost_runs {A B} (R : relation A) (GR : relation B) (π : B → A) (a0 : A) (b0 : B) :
  π b0 = a0 →
  (∀ b, rtc GR b0 b → rtc R a0 (π b)) →
  (∀ b a', rtc GR b0 b → rtc R a0 (π b) → R (π b) a' → ∃ b', GR b b' ∧ π b' = a') →
  ∀ a, rtc R a0 a ↔ ∃ b, rtc GR b0 b ∧ π b = a.
Proof.
  intros H0 Hback Hfwd a. split.
  - revert a. apply (rtc_ind_r _ a0).
    + exists b0. split; [apply rtc_refl | done].
    + intros a1 a2 Hr1 Hs (b & Hb & <-). destruct (Hfwd b a2 Hb Hr1 Hs) as (b' & Hs' & <-).
      exists b'. split; [by eapply rtc_r | done].
  - intros (b & Hb & <-). by apply Hback.
Qed.

(** Points that are well placed and run the specification are a witness. *)
Lemma durably_linearizable_erase {St Op Val} (S : seq_spec St Op Val) (xh : list (xevent Op Val)) :
  prefix_ok point_ok xh → accepts S (effects (points xh)) → durably_linearizable S (erase xh).
Proof. intros Hok Hacc. by exists xh. Qed.

(** A thread's current operation across a step that appends a crash
    ([loud]) or nothing: still invoked and unfinished; pending, or cut off
    if it was or if the crash cut it off ([c]: it was cut off). *)
Lemma current_across_crash {Op Val} (h : history Op Val) (loud c : bool) u i op :
  Invoke i u op ∈ h → ¬ finished h i → (c = false → pending_on h u i) → (c = true → cut_off h i) →
  Invoke i u op ∈ h ++ (if loud then [Crash] else []) ∧ ¬ finished (h ++ (if loud then [Crash] else [])) i ∧
  ((loud || c) = false → pending_on (h ++ (if loud then [Crash] else [])) u i) ∧
  ((loud || c) = true → cut_off (h ++ (if loud then [Crash] else [])) i).
Proof.
  intros H1 H2 H3 H4. split_and!.
  - apply elem_of_app. by left.
  - destruct loud; [intros [? | []]%finished_snoc; done | by rewrite app_nil_r].
  - destruct loud; [done |]. rewrite app_nil_r. apply H3.
  - destruct loud; [| rewrite app_nil_r; apply H4]. intros _.
    destruct c; [by apply cut_off_app, H4 |]. by apply (cut_off_crash _ u), H3.
Qed.

Section numbered.
  Context {Op Val : Type} (tr : nat → Prop) (K : nat → nat) (act : nat → bool).

  (** The operations of [h] are the invocations [oid u k] of the threads
      [tr], [k] up to thread [u]'s current one [K u]; the earlier ones are
      finished, and the current one is invoked only while the thread is
      inside it ([act u]). *)
  Record numbered (h : history Op Val) : Prop := {
    nb_wf : wf h;
    nb_ids : ∀ i, invoked h i → ∃ u k, tr u ∧ k ≤ K u ∧ i = oid u k;
    nb_old : ∀ u k, tr u → k < K u → finished h (oid u k);
    nb_idle : ∀ u, tr u → act u = false → ¬ invoked h (oid u (K u));
  }.

  (** The same for the operations [P] of [h] only: [h] may have other
      operations, numbered otherwise (e.g. [DetCasPxLin.v]'s loads, which are
      not detectable). *)
  Record numbered_for (P : opid → Prop) (h : history Op Val) : Prop := {
    nbf_wf : wf h;
    nbf_ids : ∀ i, invoked h i → P i → ∃ u k, tr u ∧ k ≤ K u ∧ i = oid u k;
    nbf_old : ∀ u k, tr u → k < K u → finished h (oid u k);
    nbf_idle : ∀ u, tr u → act u = false → ¬ invoked h (oid u (K u));
  }.

  Lemma numbered_for_all h : numbered h → numbered_for (λ _, True) h.
  Proof. intros [Hwf Hids Hold Hidle]. split; [done | intros i Hi _; by apply Hids | done | done]. Qed.

  (** Every operation of [P] a crash cut off is recovered, or it is the
      current invocation of a thread still inside it (in recovery). *)
  Lemma numbered_for_cut_off_recovered P h i : numbered_for P h → cut_off h i → P i →
    recovered h i ∨ ∃ t, tr t ∧ act t = true ∧ i = oid t (K t).
  Proof.
    intros [Hwf Hids Hold Hidle] Hc HP.
    destruct (Hids i (cut_off_invoked _ _ Hc) HP) as (u & k & Hu & Hle & ->).
    destruct (decide (k = K u)) as [-> | Hne].
    - destruct (act u) eqn:Ea; [right; by exists u |].
      exfalso. apply (Hidle u Hu Ea). by apply cut_off_invoked.
    - left. destruct (Hold u k Hu ltac:(lia)) as [Hcomp | Hrec]; [| done].
      exfalso. by apply (completed_not_cut_off _ _ Hwf Hcomp).
  Qed.

  (** Every operation a crash cut off is recovered, or it is the current
      invocation of a thread still inside it (in recovery). *)
  Lemma numbered_cut_off_recovered h i : numbered h → cut_off h i →
    recovered h i ∨ ∃ t, tr t ∧ act t = true ∧ i = oid t (K t).
  Proof. intros Hn Hc. by apply (numbered_for_cut_off_recovered _ h i (numbered_for_all h Hn) Hc). Qed.

  (** Once no thread is inside an invocation (every recovery has
      returned), such a history, durably linearizable, is detectable for
      [P]. *)
  Lemma numbered_for_detectable {St} P (S : seq_spec St Op Val) h :
    numbered_for P h → durably_linearizable S h → (∀ t, tr t → act t = false) → detectable_for P S h.
  Proof.
    intros Hn Hdl Hq. split; [done |]. intros i Hc HP.
    destruct (numbered_for_cut_off_recovered P h i Hn Hc HP) as [? | (t & Ht & Ha & _)]; [done |].
    by rewrite Hq in Ha.
  Qed.

  Lemma numbered_detectable {St} (S : seq_spec St Op Val) h :
    numbered h → durably_linearizable S h → (∀ t, tr t → act t = false) → detectable S h.
  Proof. intros Hn. apply numbered_for_detectable, numbered_for_all, Hn. Qed.
End numbered.

(** * Histories with crashes

    The histories of [/work/shared/design/HISTORY.md] (the ndjson format that
    [perdure check-history] reads) and of [specs/common/Histories.tla], over
    an abstract type [Op] of operations (name and arguments) and [Val] of
    values:
    - [event]: [Invoke i t op], [Return i v], [Crash], [Recover i v];
    - [wf]: well-formedness, the rules of HISTORY.md checked at each event
      against the events before it ([event_ok]): an [invoke] has a fresh id
      and a thread without a pending operation; a [return] completes a
      pending operation; a [recover] completes an operation that a crash cut
      off, at most once, possibly after later crashes and after new
      operations of its thread (as [Histories.tla] and the checker accept);
    - the operations of a history and their status: [invoked], [completed]
      (returned), [pending] (at the end), [cut_off], [recovered]; every
      invoked operation is completed, pending or cut off ([op_status]), and
      on a well-formed history never two of them
      ([completed_not_cut_off], [pending_not_cut_off],
      [completed_not_pending]); how they change when one event is appended
      ([pending_on_snoc], [finished_snoc], [invoked_snoc], [cut_off_crash],
      [cut_off_app], [finished_app]), for the models that build their
      histories event by event;
    - real-time order [precedes]: one operation returned or was recovered
      before the other was invoked; a strict partial order on well-formed
      histories ([precedes_irrefl], [precedes_trans]);
    - multi-object histories: histories over [Obj * Op], the object of an
      operation ([obj_of]) and the projection [h |_ o] to one object, which
      keeps the crashes (a crash is a full-system crash) and preserves
      well-formedness ([wf_project]);
    - the threads' current operations ([cur_ops], [counted_ops]): the
      well-formedness argument of the models whose threads run one operation
      at a time, proved once for the four kinds of step that keep it (no
      event, an invoke, a return, a crash; [counted_ops_step]).

    A single-object history is a history over [Op] itself; the ndjson
    [header] line (the object and its initial state) is the sequential
    specification of [DurableLin.v], not an event.

    Not covered: the concrete JSON syntax and the models' value types
    (checked by [perdure-check::history]); the [NoEffect] recover value of
    [Histories.tla] (an extension outside HISTORY.md's core); positions as
    numbers (splits [h = h1 ++ e :: h2] stand for them). *)
From stdpp Require Import base list decidable countable.
From Coq Require Import Lia.

(** ** Lists: splits through [filter] and [omap], prefix-local properties *)

Section lists.
  Context {A B : Type}.
  Implicit Types l k : list A.

  (** Two splits of one list around single elements: the same split, or one
      element lies before the other. *)
  Lemma app_cons_split_cases l1 x l2 k1 y k2 :
    l1 ++ x :: l2 = k1 ++ y :: k2 →
    (l1 = k1 ∧ x = y ∧ l2 = k2) ∨
    (∃ m, k1 = l1 ++ x :: m ∧ l2 = m ++ y :: k2) ∨
    (∃ m, l1 = k1 ++ y :: m ∧ k2 = m ++ x :: l2).
  Proof.
    intros Heq. destruct (app_eq_app _ _ _ _ Heq) as [m [[-> Hm] | [-> Hm]]].
    - destruct m as [| z m]; simpl in *.
      + rewrite app_nil_r. simplify_eq. by left.
      + simplify_eq. right; right. by exists m.
    - destruct m as [| z m]; simpl in *.
      + rewrite app_nil_r. simplify_eq. by left.
      + simplify_eq. right; left. by exists m.
  Qed.

  Lemma filter_eq_app_cons (P : A → Prop) `{∀ x, Decision (P x)} l m1 x m2 :
    filter P l = m1 ++ x :: m2 →
    ∃ l1 l2, l = l1 ++ x :: l2 ∧ filter P l1 = m1 ∧ filter P l2 = m2.
  Proof.
    revert m1. induction l as [| a l IH]; intros m1 Hf; [by destruct m1 |].
    rewrite filter_cons in Hf. case_decide.
    - destruct m1 as [| b m1]; simpl in Hf; injection Hf as <- Hf.
      + by exists [], l.
      + destruct (IH m1 Hf) as (l1 & l2 & -> & <- & <-).
        exists (a :: l1), l2. by rewrite filter_cons_True.
    - destruct (IH m1 Hf) as (l1 & l2 & -> & <- & <-).
      exists (a :: l1), l2. by rewrite filter_cons_False.
  Qed.

  Lemma omap_eq_app (f : A → option B) l m1 m2 :
    omap f l = m1 ++ m2 → ∃ l1 l2, l = l1 ++ l2 ∧ omap f l1 = m1 ∧ omap f l2 = m2.
  Proof.
    revert m1. induction l as [| a l IH]; intros m1 Hf.
    { symmetry in Hf. apply app_eq_nil in Hf as [-> ->]. by exists [], []. }
    simpl in Hf. destruct (f a) as [b |] eqn:Ha.
    - destruct m1 as [| b' m1]; simpl in Hf.
      + exists [], (a :: l). simpl. by rewrite Ha.
      + injection Hf as <- Hf. destruct (IH m1 Hf) as (l1 & l2 & -> & <- & <-).
        exists (a :: l1), l2. simpl. by rewrite Ha.
    - destruct (IH m1 Hf) as (l1 & l2 & -> & <- & <-).
      exists (a :: l1), l2. simpl. by rewrite Ha.
  Qed.

  Lemma omap_eq_app_cons (f : A → option B) l m1 y m2 :
    omap f l = m1 ++ y :: m2 →
    ∃ l1 x l2, l = l1 ++ x :: l2 ∧ f x = Some y ∧ omap f l1 = m1 ∧ omap f l2 = m2.
  Proof.
    revert m1. induction l as [| a l IH]; intros m1 Hf; [by destruct m1 |].
    simpl in Hf. destruct (f a) as [b |] eqn:Ha.
    - destruct m1 as [| b' m1]; simpl in Hf; injection Hf as <- Hf.
      + by exists [], a, l.
      + destruct (IH m1 Hf) as (l1 & x & l2 & -> & Hx & <- & <-).
        exists (a :: l1), x, l2. simpl. by rewrite Ha.
    - destruct (IH m1 Hf) as (l1 & x & l2 & -> & Hx & <- & <-).
      exists (a :: l1), x, l2. simpl. by rewrite Ha.
  Qed.

  (** [prefix_ok ok l]: every element of [l] is [ok] with respect to the
      elements before it.  Well-formedness of a history and the conditions
      on linearization points ([DurableLin.v]) have this shape. *)
  Definition prefix_ok (ok : list A → A → Prop) (l : list A) : Prop :=
    ∀ l1 x l2, l = l1 ++ x :: l2 → ok l1 x.

  Lemma prefix_ok_nil ok : prefix_ok ok [].
  Proof. intros l1 x l2 Hl. by destruct l1. Qed.

  Lemma prefix_ok_snoc ok l x : prefix_ok ok (l ++ [x]) ↔ prefix_ok ok l ∧ ok l x.
  Proof.
    split.
    - intros Hok. split; [| by apply (Hok l x [])].
      intros l1 y l2 ->. apply (Hok l1 y (l2 ++ [x])). by rewrite <- app_assoc.
    - intros [Hok Hx] l1 y l2 Hl.
      destruct l2 as [| z l2 _] using rev_ind.
      + apply app_inj_tail in Hl as [-> ->]. done.
      + rewrite app_comm_cons, app_assoc in Hl. apply app_inj_tail in Hl as [-> ->].
        by apply (Hok l1 y l2).
  Qed.

  Lemma prefix_ok_app_inv_l ok l k : prefix_ok ok (l ++ k) → prefix_ok ok l.
  Proof. intros Hok l1 x l2 ->. apply (Hok l1 x (l2 ++ k)). by rewrite <- app_assoc. Qed.

  Lemma prefix_ok_app ok l k :
    prefix_ok ok l → (∀ k1 x k2, k = k1 ++ x :: k2 → ok (l ++ k1) x) →
    prefix_ok ok (l ++ k).
  Proof.
    intros Hl Hk. induction k as [| x k IH] using rev_ind; [by rewrite app_nil_r |].
    rewrite app_assoc. apply prefix_ok_snoc. split.
    - apply IH. intros k1 y k2 ->. apply (Hk k1 y (k2 ++ [x])). by rewrite <- app_assoc.
    - by apply (Hk k x []).
  Qed.

  Lemma prefix_ok_weaken (ok1 ok2 : list A → A → Prop) l :
    (∀ l1 x l2, l = l1 ++ x :: l2 → ok1 l1 x → ok2 l1 x) →
    prefix_ok ok1 l → prefix_ok ok2 l.
  Proof. intros Himp Hok l1 x l2 Hl. eapply Himp; [done |]. by eapply Hok. Qed.
End lists.

(** ** Events and histories *)

(** Operation ids and threads are numbers, as in the ndjson format. *)
Notation opid := nat (only parsing).
Notation thread := nat (only parsing).

Inductive event (Op Val : Type) :=
  | Invoke (i : opid) (t : thread) (op : Op)
  | Return (i : opid) (v : Val)
  | Crash
  | Recover (i : opid) (v : Val).
Global Arguments Invoke {_ _} _ _ _.
Global Arguments Return {_ _} _ _.
Global Arguments Crash {_ _}.
Global Arguments Recover {_ _} _ _.

(** A history: its events in real-time order (the lines after the header). *)
Notation history Op Val := (list (event Op Val)).

Section history.
  Context {Op Val : Type}.
  Implicit Types (h : history Op Val) (e : event Op Val).

  (** *** The operations of a history *)

  Definition invoked h (i : opid) : Prop := ∃ t op, Invoke i t op ∈ h.

  (** Returned: "took effect exactly once, between its invoke and its return". *)
  Definition completed h (i : opid) : Prop := ∃ v, Return i v ∈ h.

  Definition recovered h (i : opid) : Prop := ∃ v, Recover i v ∈ h.

  (** Finished: returned or recovered (a [recover] line is the operation's
      completion point). *)
  Definition finished h (i : opid) : Prop := completed h i ∨ recovered h i.

  (** Pending on thread [t] at the end of [h]: invoked, not returned, no
      crash since. *)
  Definition pending_on h (t : thread) (i : opid) : Prop :=
    ∃ h1 h2 op, h = h1 ++ Invoke i t op :: h2 ∧ Crash ∉ h2 ∧ ∀ v, Return i v ∉ h2.

  Definition pending h (i : opid) : Prop := ∃ t, pending_on h t i.

  (** Cut off: a crash came after its invoke while it had not returned
      ("every operation pending at that point is cut off"); it may be
      recovered later. *)
  Definition cut_off h (i : opid) : Prop :=
    ∃ h1 h2 h3 t op,
      h = h1 ++ Invoke i t op :: h2 ++ Crash :: h3 ∧ ∀ v, Return i v ∉ h2.

  Definition crash_free h : Prop := Crash ∉ h.

  (** *** Well-formedness *)

  (** The rule for event [e] after the events [h] (HISTORY.md; in brackets
      the [MalformedReason] of [perdure check-history]). *)
  Definition event_ok h e : Prop :=
    match e with
    | Invoke i t _ =>
        ¬ invoked h i                  (* [DuplicateId] *)
        ∧ ¬ ∃ j, pending_on h t j      (* [ThreadBusy] *)
    | Return i _ =>
        pending h i                    (* [UnknownId], [ReturnAfterCrash] *)
        ∧ ¬ finished h i               (* [AlreadyCompleted] *)
    | Recover i _ =>
        cut_off h i                    (* [UnknownId], [RecoverWithoutCrash] *)
        ∧ ¬ finished h i               (* [AlreadyCompleted] *)
    | Crash => True
    end.

  Definition wf h : Prop := prefix_ok event_ok h.

  (** *** Real-time order *)

  (** [e] completes operation [i]. *)
  Definition ends (i : opid) e : Prop :=
    match e with Return j _ | Recover j _ => j = i | _ => False end.

  (** [i] finished before [j] was invoked.  A crash adds no other
      constraint; an operation that never finishes precedes nothing. *)
  Definition precedes h (i j : opid) : Prop :=
    ∃ h1 e h2, h = h1 ++ e :: h2 ∧ ends i e ∧ invoked h2 j.

  (** *** Lemmas *)

  Lemma invoked_app h1 h2 i : invoked (h1 ++ h2) i ↔ invoked h1 i ∨ invoked h2 i.
  Proof. unfold invoked. setoid_rewrite elem_of_app. naive_solver. Qed.

  Lemma invoked_cons e h i :
    invoked (e :: h) i ↔ (∃ t op, e = Invoke i t op) ∨ invoked h i.
  Proof. unfold invoked. setoid_rewrite elem_of_cons. naive_solver. Qed.

  Lemma wf_nil : wf [].
  Proof. apply prefix_ok_nil. Qed.

  Lemma wf_app_inv_l h1 h2 : wf (h1 ++ h2) → wf h1.
  Proof. apply prefix_ok_app_inv_l. Qed.

  Lemma wf_snoc h e : wf (h ++ [e]) ↔ wf h ∧ event_ok h e.
  Proof. apply prefix_ok_snoc. Qed.

  (** An operation is invoked once. *)
  Lemma wf_invoke_once h h1 h2 i t op :
    wf h → h = h1 ++ Invoke i t op :: h2 → ¬ invoked h2 i.
  Proof.
    intros Hwf -> (t' & op' & Hin). apply elem_of_list_split in Hin as (k1 & k2 & ->).
    destruct (Hwf (h1 ++ Invoke i t op :: k1) (Invoke i t' op') k2) as [Hni _];
      [by rewrite <- app_assoc |].
    apply Hni, invoked_app. right. exists t, op. by left.
  Qed.

  Lemma wf_invoked_twice h h1 h2 i : wf h → h = h1 ++ h2 → invoked h1 i → invoked h2 i → False.
  Proof.
    intros Hwf -> (t & op & Hin) Hinv. apply elem_of_list_split in Hin as (k1 & k2 & ->).
    eapply (wf_invoke_once _ k1 (k2 ++ h2) i t op Hwf); [by rewrite <- app_assoc |].
    apply invoked_app. by right.
  Qed.

  Lemma wf_invoke_agree h i t op t' op' :
    wf h → Invoke i t op ∈ h → Invoke i t' op' ∈ h → t = t' ∧ op = op'.
  Proof.
    intros Hwf Hin Hin'. apply elem_of_list_split in Hin as (h1 & h2 & Eh).
    rewrite Eh, elem_of_app, elem_of_cons in Hin'.
    destruct Hin' as [Hin' | [? | Hin']]; [| by simplify_eq |].
    - apply elem_of_list_split in Hin' as (k1 & k2 & ->).
      exfalso. eapply (wf_invoke_once h k1 (k2 ++ Invoke i t op :: h2)); [done | |].
      + rewrite Eh, <- app_assoc. done.
      + exists t, op. apply elem_of_app. right. by left.
    - exfalso. eapply (wf_invoke_once h h1 h2); [done | done |]. by exists t', op'.
  Qed.

  (** A [return] or [recover] comes after the operation's invoke. *)
  Lemma pending_on_invoked h t i : pending_on h t i → invoked h i.
  Proof. intros (h1 & h2 & op & -> & _). exists t, op. apply elem_of_app. right. by left. Qed.

  Lemma cut_off_invoked h i : cut_off h i → invoked h i.
  Proof. intros (h1 & h2 & h3 & t & op & -> & _). exists t, op. apply elem_of_app. right. by left. Qed.

  Lemma wf_ends_invoked h h1 e h2 i : wf h → h = h1 ++ e :: h2 → ends i e → invoked h1 i.
  Proof.
    intros Hwf Eh Hend. specialize (Hwf h1 e h2 Eh).
    destruct e; simpl in Hend, Hwf; subst; try done.
    - destruct Hwf as [[t Hp] _]. by eapply pending_on_invoked.
    - destruct Hwf as [Hc _]. by apply cut_off_invoked.
  Qed.

  Lemma wf_return_invoked h i v : wf h → Return i v ∈ h → invoked h i.
  Proof.
    intros Hwf Hin. apply elem_of_list_split in Hin as (h1 & h2 & Eh).
    pose proof (wf_ends_invoked h h1 (Return i v) h2 i Hwf Eh eq_refl).
    subst h. apply invoked_app. by left.
  Qed.

  Lemma wf_recover_invoked h i v : wf h → Recover i v ∈ h → invoked h i.
  Proof.
    intros Hwf Hin. apply elem_of_list_split in Hin as (h1 & h2 & Eh).
    pose proof (wf_ends_invoked h h1 (Recover i v) h2 i Hwf Eh eq_refl).
    subst h. apply invoked_app. by left.
  Qed.

  Lemma finished_invoked h i : wf h → finished h i → invoked h i.
  Proof. intros Hwf [[v Hv] | [v Hv]]; [by eapply wf_return_invoked | by eapply wf_recover_invoked]. Qed.

  (** A crash-free well-formed history has no [recover]. *)
  Lemma wf_crash_free_no_recover h i v : wf h → crash_free h → Recover i v ∉ h.
  Proof.
    intros Hwf Hcf Hin. apply elem_of_list_split in Hin as (h1 & h2 & Eh).
    destruct (Hwf h1 _ h2 Eh) as [(k1 & k2 & k3 & t & op & -> & _) _].
    apply Hcf. rewrite Eh. apply elem_of_app. left.
    apply elem_of_app. right. apply elem_of_cons. right. apply elem_of_app. right. by left.
  Qed.

  (** Real-time order is irreflexive. *)
  Lemma precedes_irrefl h i : wf h → ¬ precedes h i i.
  Proof.
    intros Hwf (h1 & e & h2 & Eh & Hend & Hinv).
    pose proof (wf_ends_invoked h h1 e h2 i Hwf Eh Hend) as (t & op & Hin).
    apply elem_of_list_split in Hin as (k1 & k2 & ->).
    eapply (wf_invoke_once h k1 (k2 ++ e :: h2)); [done | | ].
    - rewrite Eh, <- app_assoc. done.
    - apply invoked_app. right. apply invoked_cons. by right.
  Qed.

  (** A [return] of [i] somewhere in a list of events is decidable. *)
  Definition returns (i : opid) e : Prop :=
    match e with Return j _ => j = i | _ => False end.
  Global Instance returns_dec i e : Decision (returns i e).
  Proof. destruct e; simpl; apply _. Defined.

  Lemma has_return_dec h i : {∃ v, Return i v ∈ h} + {∀ v, Return i v ∉ h}.
  Proof.
    destruct (decide (Exists (returns i) h)) as [Hex | Hno].
    - left. apply stdpp.list.Exists_exists in Hex as ([j t op | j v | | j v] & Hin & Hr);
        simpl in Hr; try done.
      subst j. by exists v.
    - right. intros v Hin. apply Hno, stdpp.list.Exists_exists. by exists (Return i v).
  Qed.

  Lemma crash_dec h : {Crash ∈ h} + {Crash ∉ h}.
  Proof.
    induction h as [| e h [IH | IH]].
    - right. apply not_elem_of_nil.
    - left. by right.
    - destruct e; [right | right | left; by left | right];
        rewrite elem_of_cons; by intros [? | ?].
  Qed.

  (** ... and transitive: a strict partial order. *)
  Lemma precedes_trans h i j k : wf h → precedes h i j → precedes h j k → precedes h i k.
  Proof.
    intros Hwf (a1 & ei & a2 & Ea & Hei & Hj) (b1 & ej & b2 & Eb & Hej & Hk).
    pose proof (wf_ends_invoked h b1 ej b2 j Hwf Eb Hej) as Hjb.
    rewrite Ea in Eb.
    destruct (app_cons_split_cases _ _ _ _ _ _ Eb) as [(Eab & Ee & Eab2) | [(m & -> & Em) | (m & -> & Em)]].
    - (* one event ends both: [i = j] *)
      subst ej b2. assert (i = j) as ->.
      { destruct ei; simpl in Hei, Hej; try contradiction; congruence. }
      by exists a1, ei, a2.
    - (* [i] ends before [j] ends: [k], invoked after [j] ends, is invoked after [i] ends *)
      exists a1, ei, a2. split; [done |]. split; [done |].
      rewrite Em. apply invoked_app. right. apply invoked_cons. by right.
    - (* [j] ends before [i] ends: [j] would be invoked before and after [i]'s end *)
      exfalso. apply (wf_invoked_twice h b1 (ej :: m ++ ei :: a2) j Hwf); [| done |].
      + by rewrite Ea, <- app_assoc.
      + apply invoked_cons. right. apply invoked_app. right. apply invoked_cons. by right.
  Qed.

  (** Every invoked operation is completed (it returned), pending at the end,
      or cut off by a crash. *)
  Lemma op_status h i : invoked h i → completed h i ∨ pending h i ∨ cut_off h i.
  Proof.
    intros (t & op & Hin). apply elem_of_list_split in Hin as (h1 & h2 & Eh).
    destruct (has_return_dec h2 i) as [[v Hv] | Hnr].
    { left. exists v. rewrite Eh. apply elem_of_app. right. by right. }
    destruct (crash_dec h2) as [Hc | Hc].
    - right; right. apply elem_of_list_split in Hc as (k1 & k2 & ->).
      exists h1, k1, k2, t, op. split; [done |].
      intros v Hv. apply (Hnr v). apply elem_of_app. by left.
    - right; left. exists t, h1, h2, op. done.
  Qed.

  (** An invoke comes before every event of its operation. *)
  Lemma wf_invoke_first h h1 h2 i t op :
    wf h → h = h1 ++ Invoke i t op :: h2 → ¬ invoked h1 i.
  Proof. intros Hwf Eh. by destruct (Hwf _ _ _ Eh). Qed.

  (** ... and never two of these at once (on well-formed histories). *)
  Lemma completed_not_pending h i : wf h → completed h i → ¬ pending h i.
  Proof.
    intros Hwf [v Hret] [t (h1 & h2 & op & Eh & Hnc & Hnr)].
    rewrite Eh, elem_of_app, elem_of_cons in Hret.
    destruct Hret as [Hret | [? | Hret]]; [| done | by apply (Hnr v)].
    apply elem_of_list_split in Hret as (k1 & k2 & Ek).
    apply (wf_invoke_first h h1 h2 i t op Hwf Eh).
    subst h1. apply invoked_app. left.
    apply (wf_ends_invoked h k1 (Return i v) (k2 ++ Invoke i t op :: h2)); [done | | done].
    by rewrite Eh, <- app_assoc.
  Qed.

  Lemma pending_not_cut_off h i : wf h → pending h i → ¬ cut_off h i.
  Proof.
    intros Hwf [t (k1 & k2 & op' & Ek & Hnc & Hnr)] (h1 & h2 & h3 & t' & op & Eh & Hnr').
    rewrite Ek in Eh.
    destruct (app_cons_split_cases _ _ _ _ _ _ Eh) as [(-> & ? & Ek2) | [(m & -> & Em) | (m & -> & Em)]].
    - apply Hnc. rewrite Ek2. apply elem_of_app. right. by left.
    - eapply (wf_invoke_once h k1 _ i t op'); [done | done |].
      exists t', op. rewrite Em. apply elem_of_app. right. by left.
    - eapply (wf_invoke_once h h1 _ i t' op); [done | by rewrite Ek, Eh |].
      exists t, op'. rewrite Em. apply elem_of_app. right. by left.
  Qed.

  Lemma completed_not_cut_off h i : wf h → completed h i → ¬ cut_off h i.
  Proof.
    intros Hwf [v Hret] (h1 & h2 & h3 & t & op & Eh & Hnr).
    apply elem_of_list_split in Hret as (k1 & k2 & Ek).
    (* the return is pending-checked against the events before it *)
    destruct (Hwf k1 _ k2 Ek) as [[t' (a1 & a2 & op' & Ea & Hnc & _)] _].
    rewrite Ea, <- app_assoc, <- app_comm_cons in Ek. rewrite Ek in Eh.
    destruct (app_cons_split_cases _ _ _ _ _ _ Eh) as [(-> & ? & Ea2) | [(m & -> & Em) | (m & -> & Em)]].
    - destruct (app_cons_split_cases _ _ _ _ _ _ Ea2) as [(_ & ? & _) | [(m & -> & _) | (m & -> & _)]].
      + done.
      + apply (Hnr v). apply elem_of_app. right. by left.
      + apply Hnc. apply elem_of_app. right. by left.
    - eapply (wf_invoke_once h a1 _ i t' op'); [done | by rewrite Ek |].
      exists t, op. rewrite Em. apply elem_of_app. right. by left.
    - eapply (wf_invoke_once h h1 (m ++ _) i t op); [done | by rewrite Ek, <- app_assoc |].
      exists t', op'. apply elem_of_app. right. by left.
  Qed.

  (** *** Appending one event

      How the status of an operation changes when one event is appended (the
      protocol files build their histories event by event). *)

  Lemma pending_on_snoc h e t j :
    pending_on (h ++ [e]) t j ↔ (∃ o, e = Invoke j t o) ∨ (pending_on h t j ∧ e ≠ Crash ∧ ∀ v, e ≠ Return j v).
  Proof.
    unfold pending_on. split.
    - intros (h1 & h2 & o & Eh & Hc & Hr). destruct h2 as [|x h2 _] using rev_ind.
      + apply app_inj_tail in Eh as [_ ->]. left. by exists o.
      + rewrite app_comm_cons, app_assoc in Eh. apply app_inj_tail in Eh as [Eh <-]. right. split_and!.
        * exists h1, h2, o. split_and!; [done| |].
          -- intros Hin. apply Hc. apply elem_of_app. by left.
          -- intros v Hin. apply (Hr v). apply elem_of_app. by left.
        * intros ->. apply Hc. apply elem_of_app. right. by left.
        * intros v ->. apply (Hr v). apply elem_of_app. right. by left.
    - intros [(o & ->) | ((h1 & h2 & o & -> & Hc & Hr) & Hne & Hnr)].
      + exists h, [], o. split_and!; [done | by intros ?%elem_of_nil | by intros v ?%elem_of_nil].
      + exists h1, (h2 ++ [e]), o. split_and!; [by rewrite <- app_assoc | |].
        * intros [? | ?%elem_of_list_singleton]%elem_of_app; [done | by apply Hne].
        * intros v [? | ?%elem_of_list_singleton]%elem_of_app; [by apply (Hr v) | by apply (Hnr v)].
  Qed.

  Lemma finished_snoc h e j : finished (h ++ [e]) j ↔ finished h j ∨ ends j e.
  Proof.
    split.
    - intros [[v Hin] | [v Hin]]; apply elem_of_app in Hin as [Hin | <-%elem_of_list_singleton].
      + left. left. by exists v.
      + by right.
      + left. right. by exists v.
      + by right.
    - intros [[[v Hin] | [v Hin]] | He].
      + left. exists v. apply elem_of_app. by left.
      + right. exists v. apply elem_of_app. by left.
      + destruct e; simpl in He; try done; subst; [left | right]; exists v; apply elem_of_app; right; by left.
  Qed.

  Lemma finished_app h E j : finished h j → finished (h ++ E) j.
  Proof. intros [[v Hin] | [v Hin]]; [left | right]; exists v; apply elem_of_app; by left. Qed.

  Lemma cut_off_app h E i : cut_off h i → cut_off (h ++ E) i.
  Proof.
    intros (h1 & h2 & h3 & t & op & -> & Hr). exists h1, h2, (h3 ++ E), t, op.
    split; [by rewrite <- !app_assoc, <- app_comm_cons, <- app_assoc | done].
  Qed.

  Lemma cut_off_crash h t i : pending_on h t i → cut_off (h ++ [Crash]) i.
  Proof.
    intros (h1 & h2 & op & -> & _ & Hr). exists h1, h2, [], t, op.
    split; [by rewrite <- app_assoc, <- app_comm_cons | done].
  Qed.

  Lemma invoked_snoc h e i : invoked (h ++ [e]) i ↔ invoked h i ∨ ∃ t op, e = Invoke i t op.
  Proof.
    rewrite invoked_app. unfold invoked. setoid_rewrite elem_of_list_singleton. naive_solver.
  Qed.
End history.

(** ** Multi-object histories and projection *)

(** A multi-object history is a history over [Obj * Op]: every invoke names
    its object. *)
Section objects.
  Context {Obj Op Val : Type} `{!EqDecision Obj}.
  Implicit Types (h : history (Obj * Op) Val) (e : event (Obj * Op) Val).

  (** The object of operation [i]: that of its (first) invoke. *)
  Fixpoint obj_of h (i : opid) : option Obj :=
    match h with
    | [] => None
    | Invoke j _ (o, _) :: h' => if decide (j = i) then Some o else obj_of h' i
    | _ :: h' => obj_of h' i
    end.

  (** [e] belongs to object [o], given the objects [f] of the operations.
      A crash belongs to every object: it is a full-system crash. *)
  Definition in_obj (f : opid → option Obj) (o : Obj) e : Prop :=
    match e with
    | Invoke i _ _ | Return i _ | Recover i _ => f i = Some o
    | Crash => True
    end.
  Global Instance in_obj_dec f o e : Decision (in_obj f o e).
  Proof. destruct e; simpl; apply _. Defined.

  Definition project_with (f : opid → option Obj) (o : Obj) h : history (Obj * Op) Val :=
    filter (in_obj f o) h.

  (** [h |_ o]: the events of object [o] and all crashes. *)
  Definition project (o : Obj) h : history (Obj * Op) Val := project_with (obj_of h) o h.

  Lemma obj_of_Some h i o : obj_of h i = Some o → ∃ t op, Invoke i t (o, op) ∈ h.
  Proof.
    induction h as [| [j t [o' op] | j v | | j v] h IH]; simpl; try done;
      try (intros Hi; destruct (IH Hi) as (t' & op' & ?); exists t', op'; by right).
    case_decide; intros Hi.
    - simplify_eq. exists t, op. by left.
    - destruct (IH Hi) as (t' & op' & ?). exists t', op'. by right.
  Qed.

  Lemma obj_of_None h i t o op : Invoke i t (o, op) ∈ h → is_Some (obj_of h i).
  Proof.
    induction h as [| [j t' [o' op'] | j v | | j v] h IH]; simpl;
      rewrite ?elem_of_nil, ?elem_of_cons; try naive_solver.
    case_decide; [by eexists |]. naive_solver.
  Qed.

  (** In a well-formed history, [obj_of] is the object of the invoke. *)
  Lemma obj_of_invoke h i t o op : wf h → Invoke i t (o, op) ∈ h → obj_of h i = Some o.
  Proof.
    intros Hwf Hin. destruct (obj_of_None h i t o op Hin) as [o' Ho'].
    destruct (obj_of_Some h i o' Ho') as (t' & op' & Hin').
    destruct (wf_invoke_agree h i t (o, op) t' (o', op') Hwf Hin Hin') as [_ ?].
    by simplify_eq.
  Qed.

  Lemma project_with_app f o h1 h2 :
    project_with f o (h1 ++ h2) = project_with f o h1 ++ project_with f o h2.
  Proof. apply stdpp.list.filter_app. Qed.

  Lemma project_with_cons_in f o e h :
    in_obj f o e → project_with f o (e :: h) = e :: project_with f o h.
  Proof. apply filter_cons_True. Qed.

  Lemma elem_of_project_with f o h e : e ∈ project_with f o h ↔ in_obj f o e ∧ e ∈ h.
  Proof. apply elem_of_list_filter. Qed.

  Lemma invoked_project_with f o h i : invoked (project_with f o h) i → invoked h i.
  Proof. intros (t & op & Hin). apply elem_of_project_with in Hin as [_ ?]. by exists t, op. Qed.

  Lemma finished_project_with f o h i : finished (project_with f o h) i → finished h i.
  Proof.
    intros [[v Hin] | [v Hin]]; apply elem_of_project_with in Hin as [_ Hin];
      [left | right]; by exists v.
  Qed.

  (** Projection keeps well-formedness: each kept event sees, before it, a
      subset of the events it saw in [h], with every crash and every event of
      its own operation. *)
  Lemma wf_project_with f o h : wf h → wf (project_with f o h).
  Proof.
    intros Hwf m1 e m2 Hm.
    destruct (filter_eq_app_cons _ _ _ _ _ Hm) as (l1 & l2 & Eh & <- & _).
    assert (in_obj f o e) as Hkeep.
    { apply (elem_of_project_with f o h). rewrite Hm. apply elem_of_app. right. by left. }
    pose proof (Hwf l1 e l2 Eh) as Hok. clear Hm.
    change (filter (in_obj f o) l1) with (project_with f o l1).
    (* the events of [i]'s operation are kept when [f i = Some o] *)
    assert (∀ i (k : history (Obj * Op) Val) v, f i = Some o → Return i v ∈ k →
              Return i v ∈ project_with f o k) as Hret.
    { intros i k v Hi Hin. by apply elem_of_project_with. }
    assert (∀ k : history (Obj * Op) Val, Crash ∈ k → Crash ∈ project_with f o k) as Hcrash.
    { intros k Hin. by apply elem_of_project_with. }
    destruct e as [i t op | i v | | i v]; cbn [event_ok in_obj] in Hkeep, Hok |- *; [| | done |].
    - destruct Hok as [Hni Hnp]. split; [by intros ?%invoked_project_with |].
      intros (j & n1 & n2 & op' & En & Hnc & Hnr). apply Hnp. exists j.
      destruct (filter_eq_app_cons _ _ _ _ _ En) as (p1 & p2 & -> & _ & <-).
      assert (f j = Some o) as Hj.
      { apply (elem_of_project_with f o (p1 ++ Invoke j t op' :: p2) (Invoke j t op')).
        rewrite En. apply elem_of_app. right. by left. }
      exists p1, p2, op'. split; [done |]. split.
      + intros ?. by apply Hnc, Hcrash.
      + intros w ?. by apply (Hnr w), Hret.
    - destruct Hok as [[t (p1 & p2 & op & -> & Hnc & Hnr)] Hnf].
      split; [| by intros ?%finished_project_with].
      exists t, (project_with f o p1), (project_with f o p2), op.
      rewrite project_with_app. split; [by rewrite project_with_cons_in |]. split.
      + intros ?%elem_of_project_with. naive_solver.
      + intros w ?%elem_of_project_with. naive_solver.
    - destruct Hok as [(p1 & p2 & p3 & t & op & -> & Hnr) Hnf].
      split; [| by intros ?%finished_project_with].
      exists (project_with f o p1), (project_with f o p2), (project_with f o p3), t, op.
      rewrite !project_with_app, project_with_cons_in by done. split.
      + by rewrite project_with_app, project_with_cons_in.
      + intros w ?%elem_of_project_with. naive_solver.
  Qed.

  Lemma wf_project o h : wf h → wf (project o h).
  Proof. apply wf_project_with. Qed.
End objects.

Notation "h |_ o" := (project o h) (at level 20, format "h  |_  o").

(** ** Lists of per-thread events

    A run's history is often the concatenation of each thread's events
    ([mjoin (f <$> l)]): if every thread adds none, it adds none; if one
    thread [t] of a duplicate-free [l] adds events and the others none, it
    adds [t]'s. *)
Lemma mjoin_nil {A} (f : nat → list A) (l : list nat) : (∀ u, u ∈ l → f u = []) → mjoin (f <$> l) = [].
Proof. induction l as [| u l IH]; intros Hn; [done |]. simpl. rewrite Hn by (by left). apply IH. intros ??. apply Hn. by right. Qed.

Lemma mjoin_single {A} (f : nat → list A) (l : list nat) t :
  NoDup l → t ∈ l → (∀ u, u ∈ l → u ≠ t → f u = []) → mjoin (f <$> l) = f t.
Proof.
  induction l as [| u l IH]; intros Hnd Ht Hn; [by apply elem_of_nil in Ht |].
  apply stdpp.list.NoDup_cons in Hnd as [Hu Hnd]. simpl. destruct (decide (u = t)) as [-> | Hne].
  - rewrite mjoin_nil; [by rewrite app_nil_r |]. intros u' Hu'. apply Hn; [by right |]. by intros ->.
  - rewrite Hn by (by left || done). simpl. apply IH; [done | by apply elem_of_cons in Ht as [? | ?] | ].
    intros u' ??. apply Hn; [by right | done].
Qed.

(** The id of invocation [k] of thread [u], one per pair, for models that
    number each thread's invocations. *)
Definition oid (u k : nat) : opid := encode_nat (u, k).
Lemma oid_inj u k u' k' : oid u k = oid u' k' → u = u' ∧ k = k'.
Proof.
  unfold oid. intros H. apply (f_equal (decode_nat (A:=nat * nat))) in H.
  rewrite !decode_encode_nat in H. by injection H.
Qed.

(** ** Threads and their current operations

    Models whose operations are not detectable ([MirrorPxLin.v],
    [MirrorMarksPxCrash.v], [CXPTMPxLin.v]) keep, per thread, the id of its
    current operation ([cur t]; [None]: the thread is idle) and build their
    history event by event, each step of one of four kinds: it adds no event; an idle thread invokes a
    fresh id; a thread returns its current operation; a full crash ends every
    thread's operation.  [cur_ops]: the history is well formed and its pending
    operations are exactly the threads' current ones; each kind of step keeps
    it ([cur_ops_same], [cur_ops_invoke], [cur_ops_return], [cur_ops_crash]).
    [counted_ops] adds the models' counter of fresh ids and the absence of
    [recover] (their operations are not detectable); every [ops_step] keeps
    it ([counted_ops_step]).  Two threads never share a current operation
    ([cur_ops_unique]): the history has one invoke per id. *)
Section cur_ops.
  Context {Op Val : Type}.
  Implicit Types (h : history Op Val) (cur : thread → option opid).

  Record cur_ops h cur : Prop := {
    co_wf : wf h;
    co_pend : ∀ t j, pending_on h t j → cur t = Some j;
    co_cur : ∀ t i, cur t = Some i → pending_on h t i ∧ ¬ finished h i;
  }.

  Lemma cur_ops_nil cur : (∀ t, cur t = None) → cur_ops [] cur.
  Proof.
    intros Hcur. split; [apply wf_nil | | intros t i; by rewrite Hcur].
    intros t j (h1 & h2 & op & Eh & _). by destruct h1.
  Qed.

  Lemma pending_on_elem_of h t i : pending_on h t i → ∃ op, Invoke i t op ∈ h.
  Proof. intros (h1 & h2 & op & -> & _). exists op. apply elem_of_app. right. by left. Qed.

  Lemma cur_ops_unique h cur t t' i : cur_ops h cur → cur t = Some i → cur t' = Some i → t' = t.
  Proof.
    intros [Hwf _ Hcur] Ht Ht'.
    destruct (pending_on_elem_of h t i (proj1 (Hcur t i Ht))) as [op Hin].
    destruct (pending_on_elem_of h t' i (proj1 (Hcur t' i Ht'))) as [op' Hin'].
    by destruct (wf_invoke_agree h i t op t' op' Hwf Hin Hin').
  Qed.

  Lemma cur_ops_same h cur cur' : cur_ops h cur → (∀ t, cur' t = cur t) → cur_ops h cur'.
  Proof.
    intros [Hwf Hp Hc] Hcur. split; [done | |].
    - intros t j ?. rewrite Hcur. by apply Hp.
    - intros t i. rewrite Hcur. apply Hc.
  Qed.

  (** Idle thread [t] invokes [i], an id the history has not invoked. *)
  Lemma cur_ops_invoke h cur cur' t i op :
    cur_ops h cur → cur t = None → ¬ invoked h i →
    cur' t = Some i → (∀ u, u ≠ t → cur' u = cur u) →
    cur_ops (h ++ [Invoke i t op]) cur'.
  Proof.
    intros [Hwf Hp Hc] Ht Hfresh Ht' Hoth. split.
    - apply wf_snoc. split; [done |]. split; [done |]. intros [j ?%Hp]. congruence.
    - intros u j [(op' & ?) | (Hj & _ & _)]%pending_on_snoc; [simplify_eq; done |].
      destruct (decide (u = t)) as [-> | Hne]; [apply Hp in Hj; congruence |].
      rewrite Hoth by done. by apply Hp.
    - intros u j Hj. destruct (decide (u = t)) as [-> | Hne].
      + rewrite Ht' in Hj. injection Hj as <-. split.
        * apply pending_on_snoc. left. by exists op.
        * intros [Hf | Hf]%finished_snoc; [| done]. by apply Hfresh, finished_invoked.
      + rewrite Hoth in Hj by done. destruct (Hc u j Hj) as [Hpj Hf]. split.
        * apply pending_on_snoc. right. by split_and!.
        * by intros [? | ?]%finished_snoc.
  Qed.

  (** Thread [t] returns its current operation [i]. *)
  Lemma cur_ops_return h cur cur' t i v :
    cur_ops h cur → cur t = Some i →
    cur' t = None → (∀ u, u ≠ t → cur' u = cur u) →
    cur_ops (h ++ [Return i v]) cur'.
  Proof.
    intros Hco Ht Ht' Hoth. pose proof Hco as [Hwf Hp Hc].
    destruct (Hc t i Ht) as [Hpi Hfi]. split.
    - apply wf_snoc. split; [done |]. split; [by exists t | done].
    - intros u j [(? & ?) | (Hj & _ & Hr)]%pending_on_snoc; [done |].
      destruct (decide (u = t)) as [-> | Hne].
      + apply Hp in Hj. rewrite Ht in Hj. injection Hj as ->. by destruct (Hr v).
      + rewrite Hoth by done. by apply Hp.
    - intros u j Hj. destruct (decide (u = t)) as [-> | Hne]; [congruence |].
      rewrite Hoth in Hj by done. destruct (Hc u j Hj) as [Hpj Hf].
      assert (j ≠ i) by (intros ->; by apply Hne, (cur_ops_unique h cur t u i)).
      split.
      + apply pending_on_snoc. right. split_and!; [done | done | congruence].
      + intros [? | Hend]%finished_snoc; [done |]. simpl in Hend. congruence.
  Qed.

  (** A full crash: every thread's operation ends. *)
  Lemma cur_ops_crash h cur cur' : cur_ops h cur → (∀ t, cur' t = None) → cur_ops (h ++ [Crash]) cur'.
  Proof.
    intros [Hwf _ _] Hcur'. split.
    - apply wf_snoc. by split.
    - intros t j [(? & ?) | (_ & ? & _)]%pending_on_snoc; done.
    - intros t i. by rewrite Hcur'.
  Qed.

  (** Ids drawn from a counter [n] (the next fresh id), no [recover]. *)
  Record counted_ops h (n : nat) cur : Prop := {
    cn_wf : wf h;
    cn_fresh : ∀ j, invoked h j → j < n;
    cn_pend : ∀ t j, pending_on h t j → cur t = Some j;
    cn_cur : ∀ t i, cur t = Some i → pending_on h t i ∧ ∀ v, Return i v ∉ h;
    cn_norec : ∀ i v, Recover i v ∉ h;
  }.

  Lemma counted_ops_nil n cur : (∀ t, cur t = None) → counted_ops [] n cur.
  Proof.
    intros Hcur. split; [apply wf_nil | by intros j (? & ? & ?%elem_of_nil) | | | by intros i v ?%elem_of_nil].
    - intros t j (h1 & h2 & op & Eh & _). by destruct h1.
    - intros t i. by rewrite Hcur.
  Qed.

  (** The four kinds of step, [cur'] updating [cur] at the moving thread. *)
  Inductive ops_step h n cur : history Op Val → nat → (thread → option opid) → Prop :=
    | ops_step_same cur' :
        (∀ u, cur' u = cur u) → ops_step h n cur h n cur'
    | ops_step_invoke t op cur' :
        cur t = None → (∀ u, cur' u = if Nat.eqb u t then Some n else cur u) →
        ops_step h n cur (h ++ [Invoke n t op]) (S n) cur'
    | ops_step_return t i v cur' :
        cur t = Some i → (∀ u, cur' u = if Nat.eqb u t then None else cur u) →
        ops_step h n cur (h ++ [Return i v]) n cur'
    | ops_step_crash cur' :
        (∀ u, cur' u = None) → ops_step h n cur (h ++ [Crash]) n cur'.

  Lemma counted_ops_step h n cur h' n' cur' :
    counted_ops h n cur → ops_step h n cur h' n' cur' → counted_ops h' n' cur'.
  Proof.
    intros [Hwf Hfresh Hp Hc Hnorec] Hs.
    assert (Hco : cur_ops h cur).
    { split; [done | done |]. intros t i Hi. destruct (Hc t i Hi) as [? Hr]. split; [done |].
      intros [[v ?] | [v ?]]; [by apply (Hr v) | by apply (Hnorec i v)]. }
    (* the counter and the absence of [recover]; then [cur_ops] gives the rest *)
    cut (cur_ops h' cur' ∧ (∀ j, invoked h' j → j < n') ∧ ∀ i v, Recover i v ∉ h').
    { intros [[Hwf' Hp' Hc'] [Hfresh' Hnorec']]. split; [done | done | done | | done].
      intros t i Hi. destruct (Hc' t i Hi) as [? Hf]. split; [done |]. intros v ?. apply Hf. left. by exists v. }
    assert (Hupd : ∀ t x u, u ≠ t → (if Nat.eqb u t then x else cur u) = cur u)
      by (intros t x u Hne; apply Nat.eqb_neq in Hne; by rewrite Hne).
    destruct Hs as [cur' Hs | t op cur' Ht Hs | t i v cur' Ht Hs | cur' Hs]; split_and!.
    - by apply (cur_ops_same h cur).
    - done.
    - done.
    - apply (cur_ops_invoke h cur); [done | done | intros ?%Hfresh; lia | by rewrite Hs, Nat.eqb_refl |].
      intros u ?. by rewrite Hs, Hupd.
    - intros j [?%Hfresh | (t' & op' & ?)]%invoked_snoc; [lia | simplify_eq; lia].
    - intros i v [? | ?%elem_of_list_singleton]%elem_of_app; [by apply (Hnorec i v) | done].
    - apply (cur_ops_return h cur _ t); [done | done | by rewrite Hs, Nat.eqb_refl |].
      intros u ?. by rewrite Hs, Hupd.
    - intros j [?%Hfresh | (t' & op' & ?)]%invoked_snoc; done.
    - intros i' v' [? | ?%elem_of_list_singleton]%elem_of_app; [by apply (Hnorec i' v') | done].
    - by apply (cur_ops_crash h cur).
    - intros j [?%Hfresh | (t' & op' & ?)]%invoked_snoc; done.
    - intros i v [? | ?%elem_of_list_singleton]%elem_of_app; [by apply (Hnorec i v) | done].
  Qed.
End cur_ops.

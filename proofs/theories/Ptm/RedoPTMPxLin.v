(** * Redo-PTM on Px86: durable linearizability, update and read-only transactions

    For [RedoPTMPx.v]'s model with both fixes ([F1 = F4 = true]: the
    protocol the code runs), any object in [W] words, any number of threads
    [N], of replicas [NR > 0] and of ring slots, any placement of the words
    in lines off [curComb]'s, and any number of crashes, every reachable
    state's history — invocations, returns and crashes of update
    transactions (Algorithm 3) and read-only ones (Algorithm 2: direct
    reads of the designated replica, and published reads a combiner runs)
    — is durably linearizable in the sense of [Core/DurableLin.v]:
    - [redo_px_durably_linearizable]: [durably_linearizable spec (erase
      (xh s))], the witness being the model's ghost history with its
      linearization points ([xh]);
    - [redo_px_exactly_once] ([ExactlyOnce]): a transaction is in one
      transition at most, once;
    - [redo_px_returned_durable] ([CompletedDurable] as TLC checks it): an
      update transaction that returned [v] was committed with result [v] in
      a transition every crash image Px86 allows keeps.

    Where the points are ([RedoPTMPx.v]'s [adv], [ret], [crash_state]):
    lazily, when a transaction returns or a crash happens, up to the seq it
    returned (made durable first: [ensure_durable], or its own [psync]) or
    the crash recovered, so a crash never loses a transaction that has a
    point.  The points of seq [k] are its transition's transactions in the
    order the combiner ran them, then the direct reads of the replica of
    seq [k]; a direct read that happens when the points are at its seq gets
    its point at once.  A published read takes its point where a combiner
    ran it or at its direct read, as the prophecy [PublishRead] made says
    ([e_pt]: the other runs of it are no points; every run of the code has
    a run of the model that prophesied right).

    The invariant [inv2] (with [RedoPTMPx.v]'s [inv1]): the history with
    points is [prefix_ok point_ok] and its points run the object to the
    seq they reach ([j_ok], [j_run]); the points stop at or before the mark
    of [curComb]'s line ([j_plm]); invocation ids are fresh and unique; each
    State's [applied[t]]/[results[t]] are [t]'s last transaction in the
    transitions since the last crash ([j_app]); a published request is
    invoked, and committed or its thread still waits for it ([j_req]); a
    point is a transition's transaction up to the points or a read
    ([j_xl]); a linearized transaction in a transition above the points
    belongs to a thread still running it ([j_pend]); and per thread
    ([tinv2]): the transaction it runs has a point exactly when the points
    reach it, a combiner's simulation is its snapshot's State plus the
    requests it ran ([sim_ok]), a direct read's value is its seq's object.

    Not covered here: finding F3 (the model numbers requests, the code's
    fix; the toggle is [RedoPTM.v]'s), progress, and what [RedoPTMPx.v]'s
    header lists as abstracted. *)
From stdpp Require Import base list list_numbers decidable sets.
From Coq Require Import Lia.
From perdure.Core Require Import History DurableLin Px86 PxPersist.
From perdure.Ptm Require Import RedoPTMPx.

Section redo_px_lin.
  Context {UOp ROp Val : Type} `{!Inhabited Val}.
  Context (W : nat) (uexec : UOp → list nat → list (nat * nat) * Val)
          (rexec : ROp → list nat → Val).
  Context (N NR RS : nat) (NR_pos : 0 < NR).
  Context (line : nat → nat) (NL : nat).
  Context (line_lt : ∀ x, line x < NL) (line_cc : line 1 = line 0).
  Context (line_rep : ∀ r w, r < NR → w < W → line (rloc W r w) ≠ line 0).

  (** The fixed protocol ([F1 = F4 = true]). *)
  Notation rstate := (@rstate UOp ROp Val).
  Notation tstate := (@tstate UOp ROp Val).
  Notation entry := (@entry UOp ROp Val).
  Notation link := (@link UOp ROp Val).
  Notation op := (@op UOp ROp).
  Notation step := (@step UOp ROp Val _ W uexec rexec N NR RS line true true).
  Notation reachable := (@reachable UOp ROp Val _ W uexec rexec N NR RS line NL true true).
  Notation inv1 := (@inv1 UOp ROp Val W uexec rexec N NR line NL).
  Notation tinv1 := (@tinv1 UOp ROp Val W uexec rexec NR line).
  Notation obj_at := (@obj_at UOp ROp Val W).
  Notation res_at := (@res_at UOp ROp Val _).
  Notation app_at := (@app_at UOp ROp Val).
  Notation batch_at := (@batch_at UOp ROp Val).
  Notation content := (content W line).
  Notation ccv := (ccv line).
  Notation adv := (@adv UOp ROp Val N).
  Notation rpts := (@rpts UOp ROp Val N).
  Notation ret := (@ret UOp ROp Val N).
  Notation crash_state := (@crash_state UOp ROp Val N RS line).
  Notation spec := (@spec UOp ROp Val W uexec rexec).
  Notation run_op := (@run_op UOp ROp Val uexec rexec).
  Notation mark_cc := (@mark_cc UOp ROp Val line).
  Notation batch_ok := (@batch_ok UOp ROp Val uexec rexec).
  Notation chain_ok := (@chain_ok UOp ROp Val W uexec rexec NR).
  Notation init_obj := (init_obj W).
  Notation cseq := (@cseq UOp ROp Val).

  Implicit Types (s : rstate) (ch : list link) (e : entry) (p : tstate) (pcs : nat → tstate).

  (** ** Runs of the sequential specification, with their last state *)

  Inductive runs_to : list nat → list (op * Val) → list nat → Prop :=
    | runs_to_nil σ : runs_to σ [] σ
    | runs_to_cons σ o v l σ' :
        (run_op o σ).2 = v → runs_to (apply_ws (run_op o σ).1 σ) l σ' → runs_to σ ((o, v) :: l) σ'.

  Lemma runs_to_app σ l1 σ1 l2 σ2 : runs_to σ l1 σ1 → runs_to σ1 l2 σ2 → runs_to σ (l1 ++ l2) σ2.
  Proof. induction 1; simpl; [done |]. intros. econstructor; [done |]. auto. Qed.

  Lemma runs_to_runs σ l σ' : runs_to σ l σ' → runs spec σ l.
  Proof. induction 1; econstructor; [| done]. simpl. split; [done | reflexivity]. Qed.

  Lemma runs_to_rd σ q v : v = rexec q σ → runs_to σ [(Rd q, v)] σ.
  Proof. intros ->. econstructor; [done |]. constructor. Qed.

  Definition is_rd (o : op) : Prop := match o with Rd _ => True | Upd _ => False end.

  (** The linearized operations of a transition: its operations less the
      read-only ones linearized elsewhere. *)
  Lemma batch_runs σ bat ws σ' :
    batch_ok σ bat ws σ' → (∀ e, e ∈ bat → e_pt e = false → is_rd (e_op e)) →
    runs_to σ (map (λ e, (e_op e, e_val e)) (filter (λ e, e_pt e = true) bat)) σ'.
  Proof.
    induction 1 as [σ | σ e bat ws σ' He Hb IH]; intros Hrd; [constructor |].
    rewrite filter_cons. destruct (e_pt e) eqn:Ept.
    - simpl. econstructor; [done |]. apply IH. intros e' ?. apply Hrd. by right.
    - destruct (e_op e) as [u | q] eqn:Eo; [by specialize (Hrd e (elem_of_list_here _ _) Ept); rewrite Eo in Hrd |].
      simpl in IH |- *. apply IH. intros e' ?. apply Hrd. by right.
  Qed.

  (** ** The points a return or a crash places ([adv]) *)

  Lemma elem_of_bpts ch k x :
    x ∈ bpts ch k ↔ ∃ e, e ∈ batch_at ch k ∧ e_pt e = true ∧ x = XL (e_id e) (e_op e) (e_val e).
  Proof. unfold bpts. rewrite elem_of_list_fmap. setoid_rewrite elem_of_list_filter. naive_solver. Qed.

  Lemma elem_of_rpt k p x : x ∈ rpt k p ↔ ∃ i o v, p = TDur i o k v true ∧ x = XL i o v.
  Proof.
    destruct p as [| | | | | | | | i o c v [|]]; simpl; try (split; [by intros ?%elem_of_nil | naive_solver]).
    case_decide; [subst c | split; [by intros ?%elem_of_nil | naive_solver]].
    rewrite elem_of_list_singleton. naive_solver.
  Qed.

  Lemma elem_of_rpts pcs k x : x ∈ rpts pcs k ↔ ∃ t i o v, t < N ∧ pcs t = TDur i o k v true ∧ x = XL i o v.
  Proof.
    unfold rpts. rewrite elem_of_list_join. split.
    - intros (l & Hx & Hl). apply elem_of_list_fmap in Hl as (t & -> & Ht). apply elem_of_seq in Ht.
      apply elem_of_rpt in Hx as (i & o & v & Hp & ->). exists t, i, o, v. split_and!; [lia | done | done].
    - intros (t & i & o & v & Ht & Hp & ->). exists (rpt k (pcs t)). split.
      + apply elem_of_rpt. eauto.
      + apply elem_of_list_fmap. exists t. split; [done |]. apply elem_of_seq. lia.
  Qed.

  Lemma elem_of_adv s b x :
    x ∈ adv s b ↔ ∃ k, pl s < k ≤ b ∧ (x ∈ bpts (ch s) k ∨ x ∈ rpts (pc s) k).
  Proof.
    unfold adv. rewrite elem_of_list_join. split.
    - intros (l & Hx & Hl). apply elem_of_list_fmap in Hl as (k & -> & Hk). apply elem_of_seq in Hk.
      exists k. split; [lia |]. by apply elem_of_app.
    - intros (k & Hk & Hx). exists (bpts (ch s) k ++ rpts (pc s) k). split; [by apply elem_of_app |].
      apply elem_of_list_fmap. exists k. split; [done |]. apply elem_of_seq. lia.
  Qed.

  Lemma adv_S s b : pl s ≤ b → adv s (S b) = adv s b ++ bpts (ch s) (S b) ++ rpts (pc s) (S b).
  Proof.
    intros Hb. unfold adv. replace (S b - pl s) with (S (b - pl s)) by lia.
    rewrite seq_S, map_app, join_app'. simpl. rewrite app_nil_r.
    by replace (S (pl s + (b - pl s))) with (S b) by lia.
  Qed.

  Lemma adv_le s b : b ≤ pl s → adv s b = [].
  Proof. intros Hb. unfold adv. by replace (b - pl s) with 0 by lia. Qed.

  Lemma adv_xl s b x : x ∈ adv s b → ∃ i o v, x = XL i o v.
  Proof.
    intros (k & _ & [Hx | Hx])%elem_of_adv.
    - apply elem_of_bpts in Hx as (e & _ & _ & ->). eauto.
    - apply elem_of_rpts in Hx as (t & i & o & v & _ & _ & ->). eauto.
  Qed.

  Lemma erase_xls (l : list (xevent op Val)) : (∀ x, x ∈ l → ∃ i o v, x = XL i o v) → erase l = [].
  Proof.
    induction l as [| x l IH]; intros Hl; [done |].
    destruct (Hl x (elem_of_list_here _ _)) as (i & o & v & ->). simpl. apply IH.
    intros y ?. apply Hl. by right.
  Qed.

  Lemma xls_to_xl (l : list (xevent op Val)) :
    (∀ x, x ∈ l → ∃ i o v, x = XL i o v) → l = map to_xl (points l).
  Proof.
    induction l as [| x l IH]; intros Hl; [done |].
    destruct (Hl x (elem_of_list_here _ _)) as (i & o & v & ->). simpl. f_equal. apply IH.
    intros y ?. apply Hl. by right.
  Qed.

  Lemma erase_adv s b : erase (adv s b) = [].
  Proof. apply erase_xls, adv_xl. Qed.

  Lemma effects_bpts ch k :
    effects (points (bpts ch k)) = map (λ e, (e_op e, e_val e)) (filter (λ e, e_pt e = true) (batch_at ch k)).
  Proof. unfold bpts. induction (filter _ _) as [| e l IH]; simpl; [done |]. by rewrite IH. Qed.

  (** Reads of a state keep it. *)
  Lemma runs_to_reads σ (l : list (xevent op Val)) :
    (∀ x, x ∈ l → ∃ i q v, x = XL i (Rd q) v ∧ v = rexec q σ) → runs_to σ (effects (points l)) σ.
  Proof.
    induction l as [| x l IH]; intros Hl; [constructor |].
    destruct (Hl x (elem_of_list_here _ _)) as (i & q & v & -> & ->). simpl.
    econstructor; [done |]. apply IH. intros y ?. apply Hl. by right.
  Qed.

  (** The points of seqs [pl+1 .. b] run the object from seq [pl] to [b]. *)
  Lemma adv_runs s b :
    pl s ≤ b →
    (∀ k, pl s < k ≤ b →
       runs_to (obj_at (ch s) (pred k)) (map (λ e, (e_op e, e_val e)) (filter (λ e, e_pt e = true) (batch_at (ch s) k)))
         (obj_at (ch s) k)) →
    (∀ t i o c v, t < N → pc s t = TDur i o c v true → pl s < c ≤ b → ∃ q, o = Rd q ∧ v = rexec q (obj_at (ch s) c)) →
    runs_to (obj_at (ch s) (pl s)) (effects (points (adv s b))) (obj_at (ch s) b).
  Proof.
    intros Hb Hbat Hrd. induction Hb as [| b Hb IH].
    - rewrite adv_le by done. constructor.
    - rewrite adv_S by done. rewrite !points_app, !effects_app. eapply runs_to_app.
      { apply IH; [intros; apply Hbat; lia | intros; eapply Hrd; eauto; lia]. }
      eapply runs_to_app; [rewrite effects_bpts; apply (Hbat (S b)); lia |].
      apply runs_to_reads. intros x (t & i & o & v & Ht & Hp & ->)%elem_of_rpts.
      destruct (Hrd t i o (S b) v Ht Hp ltac:(lia)) as (q & -> & ->). eauto.
  Qed.

  Lemma NoDup_map_filter {A B} (f : A → B) (P : A → Prop) `{∀ x, Decision (P x)} l :
    NoDup (map f l) → NoDup (map f (filter P l)).
  Proof.
    induction l as [| x l IH]; [done |]. simpl. intros [Hx Hl]%NoDup_cons. rewrite filter_cons.
    case_decide; [| by apply IH]. simpl. apply NoDup_cons. split; [| by apply IH].
    intros Hin. apply Hx. apply elem_of_list_In, in_map_iff in Hin as (y & <- & Hy).
    apply elem_of_list_In, in_map_iff. exists y. split; [done |].
    apply elem_of_list_In in Hy. apply elem_of_list_In. by apply elem_of_list_filter in Hy as [_ ?].
  Qed.

  Definition pids (l : list (xevent op Val)) : list opid := (points l).*1.*1.

  Lemma elem_of_pids l i : i ∈ pids l ↔ ∃ o v, XL i o v ∈ l.
  Proof. apply elem_of_point_ids. Qed.

  Lemma pids_app l1 l2 : pids (l1 ++ l2) = pids l1 ++ pids l2.
  Proof. unfold pids. by rewrite points_app, !fmap_app. Qed.

  Lemma nodup_bpts ch k : NoDup (map e_id (batch_at ch k)) → NoDup (pids (bpts ch k)).
  Proof.
    intros Hnd. unfold pids, bpts. apply (NoDup_map_filter e_id (λ e, e_pt e = true)) in Hnd.
    induction (filter _ _) as [| e l IH]; [constructor |]. simpl in *.
    apply NoDup_cons in Hnd as [Hx Hl]. apply NoDup_cons. split; [| by apply IH].
    intros Hin. apply Hx. clear -Hin. induction l as [| e' l IH]; simpl in *; [by apply elem_of_nil in Hin |].
    apply elem_of_cons in Hin as [-> | Hin]; [by left | right; by apply IH].
  Qed.

  Lemma nodup_rpts_from pcs k (ts : list nat) :
    NoDup ts → (∀ t1 t2 i o1 o2 c1 c2 v1 v2 d1 d2, pcs t1 = TDur i o1 c1 v1 d1 → pcs t2 = TDur i o2 c2 v2 d2 → t1 = t2) →
    NoDup (pids (mjoin (map (λ t, rpt k (pcs t)) ts))).
  Proof.
    intros Hts Hu. induction ts as [| t ts IH]; [constructor |]. simpl.
    apply NoDup_cons in Hts as [Ht Hts]. rewrite pids_app. apply NoDup_app. split_and!.
    - destruct (pcs t) as [| | | | | | | | i o c v [|]]; simpl; try constructor.
      case_decide; simpl; [apply NoDup_singleton | constructor].
    - intros i Hi Hi'. apply elem_of_pids in Hi as (o & v & Hx). apply elem_of_rpt in Hx as (i' & o' & v' & Hp & [= <- <- <-]).
      apply elem_of_pids in Hi' as (o2 & v2 & Hx). apply elem_of_list_join in Hx as (l & Hx & Hl).
      apply elem_of_list_fmap in Hl as (t2 & -> & Ht2). apply elem_of_rpt in Hx as (i2 & o3 & v3 & Hp2 & [= <- <- <-]).
      pose proof (Hu t t2 i o o2 k k v v2 true true Hp Hp2) as ->. done.
    - by apply IH.
  Qed.

  (** ** The linearization invariant *)

  Definition pid (p : tstate) : option opid :=
    match p with
    | TIdle => None
    | TAnn i _ _ | THave i _ _ _ _ _ _ | TSim i _ _ _ _ _ _ _ _ _ _ | TPersist i _ _ _ | TRelease i _ _ _
    | TCollect i _ | TRead i _ _ | TDur i _ _ _ _ => Some i
    end.

  (** A transaction the consensus has not committed for its thread yet. *)
  Definition waiting (p : tstate) : Prop :=
    match p with
    | TAnn _ _ _ | THave _ _ _ _ _ _ _ | TSim _ _ _ _ _ _ _ _ _ _ _ | TCollect _ _ => True
    | _ => False
    end.
  (** A transaction linearized where a transition runs it (not a direct read). *)
  Definition by_entry (p : tstate) : Prop :=
    match p with TIdle | TRead _ _ _ | TDur _ _ _ _ true => False | _ => True end.

  (** The ghost fields the invariant reads. *)
  Record view := View {
    vx : list (xevent op Val); vch : list link; vpl : nat; vep : nat; vreq : nat → option (@request UOp ROp);
  }.
  Definition vw s : view := View (xh s) (ch s) (pl s) (ep s) (req s).
  Definition vcseq (V : view) : nat := pred (length (vch V)).

  (** Entry [e] of transaction [i] at seq [k], linearized there. *)
  Definition fent ch k i e : Prop := e ∈ batch_at ch k ∧ e_id e = i ∧ e_pt e = true.
  (** An entry of the transitions [lo+1 .. hi]. *)
  Definition ein ch lo hi e : Prop := ∃ k, lo < k ≤ hi ∧ e ∈ batch_at ch k.

  (** [applied[t]] and [results[t]] of a State, from the entries [P] before
      it: [t]'s last transaction. *)
  Definition app_res_ok (P : entry → Prop) (t a : nat) (r : Val) : Prop :=
    (a = 0 ∧ ∀ e, P e → e_th e ≠ t) ∨
    (∃ e, P e ∧ e_th e = t ∧ a = S (e_id e) ∧ r = e_val e ∧ ∀ e', P e' → e_th e' = t → e_id e' ≤ e_id e).

  Definition req_is (V : view) t o i fl : Prop := vreq V t = Some (Req o i fl).
  Definition latest (V : view) t i : Prop := ∀ i' o, Invoke i' t o ∈ erase (vx V) → i' ≤ i.
  Definition no_pt (V : view) i : Prop := ∀ o v, XL i o v ∉ vx V.
  (** [i] is linearized by its transition once the points reach it. *)
  Definition ent_pt (V : view) i : Prop :=
    (∀ k e, k ≤ vpl V → fent (vch V) k i e → XL i (e_op e) (e_val e) ∈ vx V) ∧
    ((∀ k e, fent (vch V) k i e → vpl V < k) → no_pt V i).
  (** No transition linearizes [i]. *)
  Definition no_fent (V : view) i : Prop :=
    ∀ e, ein (vch V) 0 (vcseq V) e → e_id e = i → e_pt e = false.

  Definition upd_ok (V : view) t i o : Prop :=
    Invoke i t o ∈ erase (vx V) ∧ latest V t i ∧ req_is V t o i true ∧ ent_pt V i.

  (** A combiner at index [j] of its simulation, from the State of seq [s0]. *)
  Definition sim_ok (V : view) t i (s0 : nat) (ap : nat → nat) (rs : nat → Val) j (bat : list entry) : Prop :=
    j ≤ N ∧ (t < j → S i ≤ ap t) ∧ (j ≤ t → ap t < S i) ∧
    (∀ x, j ≤ x → ap x = app_at (vch V) s0 x ∧ rs x = res_at (vch V) s0 x) ∧
    (∀ x, x < j → app_res_ok (λ e, ein (vch V) (vep V) s0 e ∨ e ∈ bat) x (ap x) (rs x)) ∧
    NoDup (map e_th bat) ∧
    ∀ e, e ∈ bat →
      e_th e < j ∧ Invoke (e_id e) (e_th e) (e_op e) ∈ erase (vx V) ∧
      app_at (vch V) s0 (e_th e) < S (e_id e) ∧ (e_pt e = false → is_rd (e_op e)) ∧
      (∀ k e', k ≤ vep V → e' ∈ batch_at (vch V) k → e_id e' ≠ e_id e) ∧
      (∃ o' i' fl', req_is V (e_th e) o' i' fl' ∧ e_id e ≤ i') ∧
      (∀ o fl, req_is V (e_th e) o (e_id e) fl → o = e_op e ∧ fl = e_pt e) ∧
      (e_pt e = true → req_is V (e_th e) (e_op e) (e_id e) true ∨
                       S (e_id e) ≤ app_at (vch V) (vcseq V) (e_th e)).

  Definition tinv2 (V : view) t (p : tstate) : Prop :=
    match p with
    | TIdle => True
    | TAnn i u own => upd_ok V t i (Upd u)
    | THave i u own s0 c0 ap rs =>
        upd_ok V t i (Upd u) ∧ vep V ≤ s0 ∧ ap = app_at (vch V) s0 ∧ rs = res_at (vch V) s0
    | TSim i u r s0 c0 ap rs j bat ws lg =>
        upd_ok V t i (Upd u) ∧ vep V ≤ s0 ∧ app_at (vch V) s0 t < S i ∧ sim_ok V t i s0 ap rs j bat
    | TCollect i o => upd_ok V t i o
    | TPersist i s1 c0 v | TRelease i s1 c0 v =>
        ∃ o e, Invoke i t o ∈ erase (vx V) ∧ latest V t i ∧ req_is V t o i true ∧ ent_pt V i ∧
          vep V < s1 ∧ fent (vch V) s1 i e ∧ e_op e = o ∧ e_val e = v
    | TDur i o c v false =>
        Invoke i t o ∈ erase (vx V) ∧ latest V t i ∧ req_is V t o i true ∧ ent_pt V i ∧
        ∃ k e, vep V < k ≤ c ∧ fent (vch V) k i e ∧ e_op e = o ∧ e_val e = v
    | TDur i o c v true =>
        (∃ q, o = Rd q ∧ v = rexec q (obj_at (vch V) c)) ∧ Invoke i t o ∈ erase (vx V) ∧ latest V t i ∧
        vep V ≤ c ∧ no_fent V i ∧ (c ≤ vpl V → XL i o v ∈ vx V) ∧ (vpl V < c → no_pt V i) ∧
        (∀ o' fl, req_is V t o' i fl → fl = false)
    | TRead i q pub =>
        Invoke i t (Rd q) ∈ erase (vx V) ∧ latest V t i ∧ no_fent V i ∧ no_pt V i ∧
        if pub then req_is V t (Rd q) i false
        else (∀ o' i' fl, req_is V t o' i' fl → i' < i) ∧ ∀ e, ein (vch V) 0 (vcseq V) e → e_id e ≠ i
    end.

  (** What a published request is. *)
  Definition req_ok s t o i fl : Prop :=
    t < N ∧ Invoke i t o ∈ erase (xh s) ∧ (∀ k e, k ≤ ep s → e ∈ batch_at (ch s) k → e_id e ≠ i) ∧
    (∀ e, ein (ch s) 0 (cseq s) e → e_id e = i → e_pt e = fl) ∧ (fl = false → is_rd o) ∧
    (fl = true → S i ≤ app_at (ch s) (cseq s) t ∨ pid (pc s t) = Some i ∧ waiting (pc s t)).

  Record inv2 s : Prop := {
    j_ok : prefix_ok point_ok (xh s);
    j_run : runs_to init_obj (effects (points (xh s))) (obj_at (ch s) (pl s));
    j_ep : ep s ≤ pl s;
    j_plm : pl s ≤ mark_cc s;
    j_b0 : batch_at (ch s) 0 = [];
    j_fresh : ∀ i t o, Invoke i t o ∈ erase (xh s) → i < nid s;
    j_uniq : ∀ i t o t' o', Invoke i t o ∈ erase (xh s) → Invoke i t' o' ∈ erase (xh s) → t = t' ∧ o = o';
    j_ent : ∀ e, ein (ch s) 0 (cseq s) e →
      Invoke (e_id e) (e_th e) (e_op e) ∈ erase (xh s) ∧ (e_pt e = false → is_rd (e_op e));
    j_nodup : ∀ k, NoDup (map e_id (batch_at (ch s) k));
    j_once : ∀ k1 k2 e1 e2, e1 ∈ batch_at (ch s) k1 → e2 ∈ batch_at (ch s) k2 → e_id e1 = e_id e2 → k1 = k2;
    j_eth : ∀ e, ein (ch s) (ep s) (cseq s) e → e_th e < N;
    j_app : ∀ k t, ep s ≤ k ≤ cseq s → t < N →
      app_res_ok (ein (ch s) (ep s) k) t (app_at (ch s) k t) (res_at (ch s) k t);
    j_req : ∀ t o i fl, req s t = Some (Req o i fl) → req_ok s t o i fl;
    j_xl : ∀ i o v, XL i o v ∈ xh s → is_rd o ∨ ∃ k e, k ≤ pl s ∧ fent (ch s) k i e ∧ e_op e = o ∧ e_val e = v;
    j_pend : ∀ k e, pl s < k → e ∈ batch_at (ch s) k → e_pt e = true →
      e_th e < N ∧ pid (pc s (e_th e)) = Some (e_id e) ∧ by_entry (pc s (e_th e));
    j_thr : ∀ t, t < N → tinv2 (vw s) t (pc s t);
  }.

  (** ** Lemmas on the bookkeeping *)

  Lemma app_res_ok_le P t a r e : app_res_ok P t a r → P e → e_th e = t → S (e_id e) ≤ a.
  Proof.
    intros [[-> Hn] | (e0 & _ & _ & -> & _ & Hmax)] He Ht; [by destruct (Hn e He) |].
    specialize (Hmax e He Ht). lia.
  Qed.

  Lemma app_res_ok_applied P t a r i :
    app_res_ok P t a r → S i ≤ a → (∀ e, P e → e_th e = t → e_id e ≤ i) →
    ∃ e, P e ∧ e_th e = t ∧ e_id e = i ∧ r = e_val e.
  Proof.
    intros [[-> _] | (e & He & Ht & -> & -> & _)] Ha Hle; [lia |].
    exists e. split_and!; try done. specialize (Hle e He Ht). lia.
  Qed.

  Lemma app_res_ok_weaken (P Q : entry → Prop) t a r :
    app_res_ok P t a r → (∀ e, P e → Q e) → (∀ e, Q e → e_th e = t → P e) → app_res_ok Q t a r.
  Proof.
    intros [[-> Hn] | (e & He & Ht & -> & -> & Hmax)] HPQ HQP.
    - left. split; [done |]. intros e He Ht. by apply (Hn e); [apply HQP |].
    - right. exists e. split_and!; try done; [by apply HPQ |]. intros e' He' Ht'. apply Hmax; [| done].
      by apply HQP.
  Qed.

  Lemma ein_mono ch lo hi lo' hi' e : lo' ≤ lo → hi ≤ hi' → ein ch lo hi e → ein ch lo' hi' e.
  Proof. intros ?? (k & ? & ?). exists k. split; [lia | done]. Qed.

  Lemma batch_at_app ch l k : k < length ch → batch_at (ch ++ l) k = batch_at ch k.
  Proof. intros Hk. unfold batch_at. by rewrite lookup_app_l. Qed.
  Lemma batch_at_snoc ch l : batch_at (ch ++ [l]) (length ch) = l_batch l.
  Proof. unfold batch_at. rewrite lookup_app_r by lia. by rewrite Nat.sub_diag. Qed.
  Lemma batch_at_ge ch k : length ch ≤ k → batch_at ch k = [].
  Proof. intros Hk. unfold batch_at. by rewrite lookup_ge_None_2. Qed.

  (** A new transition: its entries join the others. *)
  Lemma ein_snoc ch l lo e :
    0 < length ch → lo < length ch →
    ein (ch ++ [l]) lo (length ch) e ↔ ein ch lo (pred (length ch)) e ∨ e ∈ l_batch l.
  Proof.
    intros Hl Hlo. split.
    - intros (k & Hk & He). destruct (decide (k = length ch)) as [-> | Hne].
      + right. by rewrite batch_at_snoc in He.
      + left. exists k. rewrite batch_at_app in He by lia. split; [lia | done].
    - intros [(k & Hk & He) | He].
      + exists k. rewrite batch_at_app by lia. split; [lia | done].
      + exists (length ch). rewrite batch_at_snoc. split; [lia | done].
  Qed.

  Lemma ein_app_le ch l lo hi e : hi < length ch → ein (ch ++ l) lo hi e ↔ ein ch lo hi e.
  Proof.
    intros Hhi. unfold ein. split; intros (k & Hk & He); exists k; (split; [done |]);
      [by rewrite batch_at_app in He by lia | by rewrite batch_at_app by lia].
  Qed.

  Lemma obj_at_app' ch l k : k < length ch → obj_at (ch ++ l) k = obj_at ch k.
  Proof. intros Hk. unfold RedoPTMPx.obj_at. by rewrite lookup_app_l. Qed.
  Lemma app_at_app' ch l k : k < length ch → app_at (ch ++ l) k = app_at ch k.
  Proof. intros Hk. unfold RedoPTMPx.app_at. by rewrite lookup_app_l. Qed.
  Lemma res_at_app' ch l k : k < length ch → res_at (ch ++ l) k = res_at ch k.
  Proof. intros Hk. unfold RedoPTMPx.res_at. by rewrite lookup_app_l. Qed.

  (** The last transaction of [t] does not go back. *)
  Lemma app_mono s k k' t :
    inv2 s → t < N → ep s ≤ k → k ≤ k' → k' ≤ cseq s → app_at (ch s) k t ≤ app_at (ch s) k' t.
  Proof.
    intros Hinv Ht Hk Hkk Hk'. pose proof (j_app s Hinv k t ltac:(lia) Ht) as H1.
    pose proof (j_app s Hinv k' t ltac:(lia) Ht) as H2.
    destruct H1 as [[-> _] | (e & He & Het & -> & _ & _)]; [lia |].
    apply (app_res_ok_le _ _ _ _ e H2); [| done]. by apply (ein_mono _ (ep s) k).
  Qed.

  (** Invocations: every transaction's thread and operation are those of
      its [Invoke]. *)
  Lemma inv_same s i t o t' o' :
    inv2 s → Invoke i t o ∈ erase (xh s) → Invoke i t' o' ∈ erase (xh s) → t = t' ∧ o = o'.
  Proof. intros Hinv. apply (j_uniq s Hinv). Qed.

  (** A thread's last transaction is the newest one it invoked. *)
  Lemma entry_le_latest s t i e :
    inv2 s → latest (vw s) t i → ein (ch s) 0 (cseq s) e → e_th e = t → e_id e ≤ i.
  Proof.
    intros Hinv Hl He <-. apply (Hl (e_id e) (e_op e)). by apply (j_ent s Hinv).
  Qed.

  (** The State of seq [k] shows [t]'s transaction [i] applied: it is
      committed at [k] or before, with that State's result. *)
  Lemma applied_entry s t i o k :
    inv2 s → t < N → ep s ≤ k ≤ cseq s → latest (vw s) t i → req s t = Some (Req o i true) →
    S i ≤ app_at (ch s) k t →
    ∃ k' e, ep s < k' ≤ k ∧ fent (ch s) k' i e ∧ e_op e = o ∧ e_val e = res_at (ch s) k t.
  Proof.
    intros Hinv Ht Hk Hl Hr Ha.
    destruct (app_res_ok_applied _ t _ _ i (j_app s Hinv k t Hk Ht) Ha) as (e & He & Het & Hid & Hv).
    { intros e He Het. apply (entry_le_latest s t); [done | done | | done].
      by apply (ein_mono _ (ep s) k); [lia | lia |]. }
    destruct (j_req s Hinv t o i true Hr) as (_ & Hinvk & _ & Hfl & _).
    assert (ein (ch s) 0 (cseq s) e) as He0 by (by apply (ein_mono _ (ep s) k); [lia | lia |]).
    pose proof (Hfl e He0 Hid) as Hpt.
    destruct He as (k' & Hk' & Hb). exists k', e.
    destruct (j_ent s Hinv e He0) as [Hi _]. rewrite Hid, Het in Hi.
    destruct (inv_same s i t o t (e_op e) Hinv Hinvk Hi) as [_ Ho].
    split_and!; try done; lia.
  Qed.

  (** ** Steps of one thread that leave the history and the transitions alone *)

  Lemma inv2_pc s s' t p :
    inv2 s → t < N → vw s' = vw s → nid s' = nid s → mark_cc s ≤ mark_cc s' →
    pc s' = upd (pc s) t p → pid p = pid (pc s t) → (by_entry (pc s t) → by_entry p) →
    (∀ o i fl, req s t = Some (Req o i fl) → fl = true → S i ≤ app_at (ch s) (cseq s) t ∨ waiting p) →
    tinv2 (vw s) t p → inv2 s'.
  Proof.
    intros Hinv Ht Hv Hn Hm Hpc Hpid Hbe Hw Hp. pose proof Hv as Hv'.
    injection Hv as Hx Hch Hpl Hep Hrq.
    assert (cseq s' = cseq s) as Hcs by (unfold cseq, RedoPTMPx.cseq; by rewrite Hch).
    destruct Hinv as [Hok Hrun Hepl Hplm Hb0 Hfr Hun Hent Hnd Hon Heth Happ Hreq Hxl Hpend Hthr].
    split; rewrite ?Hx, ?Hch, ?Hpl, ?Hep, ?Hn, ?Hcs; try done.
    - lia.
    - intros t' o i fl Hr. rewrite Hrq in Hr. destruct (Hreq t' o i fl Hr) as (H1 & H2 & H3 & H4 & H5 & H6).
      unfold req_ok. rewrite Hx, Hep, Hch, Hcs. split_and!; try done.
      intros Hfl. rewrite (pc_upd s s' t p t') by done.
      case_decide as Heq; [subst t' | by apply H6].
      destruct (Hw o i fl Hr Hfl) as [? | Hwp]; [by left |].
      destruct (H6 Hfl) as [? | [Hp' _]]; [by left | right]. by rewrite Hpid.
    - intros k e Hk He Hpt. destruct (Hpend k e Hk He Hpt) as (Het & Hpi & Hby).
      rewrite (pc_upd s s' t p (e_th e)) by done. case_decide as Heq; [| done].
      rewrite Heq in Hpi, Hby |- *. split_and!; [done | by rewrite Hpid | by apply Hbe].
    - intros t' Ht'. rewrite Hv', (pc_upd s s' t p t') by done. case_decide; [by subst t' | by apply Hthr].
  Qed.

  Lemma inv1_ep_cseq s : inv1 s → inv2 s → ep s ≤ cseq s.
  Proof.
    intros H1 H2. pose proof (j_ep s H2). pose proof (j_plm s H2).
    pose proof (inv1_mark W uexec rexec N NR line NL s H1). lia.
  Qed.

  Lemma inv1_ccv' s : inv1 s → ccv (mem s) = (cseq s, rep_at (ch s) (cseq s)).
  Proof. apply (inv1_ccv W uexec rexec N NR line NL line_cc). Qed.


  (** ** A combiner's simulation *)

  Lemma sim_ok_skip V t i (s0 : nat) ap rs j bat :
    sim_ok V t i s0 ap rs j bat → j < N → (j = t → S i ≤ ap j) →
    app_res_ok (ein (vch V) (vep V) s0) j (app_at (vch V) s0 j) (res_at (vch V) s0 j) →
    sim_ok V t i s0 ap rs (S j) bat.
  Proof.
    intros (Hj & Hlt & Hge & Hrest & Hdone & Hnd & Hbat) HjN Ht Happ. split_and!.
    - lia.
    - intros Htj. destruct (decide (t = j)) as [-> | Hne]; [by apply Ht | apply Hlt; lia].
    - intros Htj. apply Hge. lia.
    - intros x Hx. apply Hrest. lia.
    - intros x Hx. destruct (decide (x = j)) as [-> | Hne]; [| apply Hdone; lia].
      destruct (Hrest j (le_n _)) as [-> ->]. apply (app_res_ok_weaken _ _ _ _ _ Happ); [by left |].
      intros e [He | He] Het; [done |]. destruct (Hbat e He) as (Hlt' & _). lia.
    - done.
    - intros e He. destruct (Hbat e He) as (? & Hrest'). split; [lia | done].
  Qed.

  Lemma sim_ok_run V t i (s0 : nat) ap rs j bat o i' fl v :
    sim_ok V t i s0 ap rs j bat → j < N → req_is V j o i' fl → ap j < S i' → (j = t → i' = i) →
    Invoke i' j o ∈ erase (vx V) → (fl = false → is_rd o) →
    (∀ k e', k ≤ vep V → e' ∈ batch_at (vch V) k → e_id e' ≠ i') →
    app_res_ok (ein (vch V) (vep V) s0) j (app_at (vch V) s0 j) (res_at (vch V) s0 j) →
    sim_ok V t i s0 (upd ap j (S i')) (upd rs j v) (S j) (bat ++ [Entry i' j o v fl]).
  Proof.
    intros (Hj & Hlt & Hge & Hrest & Hdone & Hnd & Hbat) HjN Hreq Hap Hti Hinvk Hrd Hpre Happ.
    destruct (Hrest j (le_n _)) as [Hapj Hrsj].
    assert (∀ e, e ∈ bat ++ [Entry i' j o v fl] ↔ e ∈ bat ∨ e = Entry i' j o v fl) as Hin.
    { intros e. rewrite elem_of_app, elem_of_list_singleton. done. }
    split_and!.
    - lia.
    - intros Htj. destruct (decide (t = j)) as [-> | Hne].
      + rewrite upd_eq. rewrite (Hti eq_refl). lia.
      + rewrite upd_ne by done. apply Hlt. lia.
    - intros Htj. rewrite upd_ne by lia. apply Hge. lia.
    - intros x Hx. rewrite !upd_ne by lia. apply Hrest. lia.
    - intros x Hx. destruct (decide (x = j)) as [-> | Hne].
      + rewrite !upd_eq. right. exists (Entry i' j o v fl). simpl. split_and!; try done.
        * right. apply elem_of_app. right. by left.
        * intros e' [He' | He'%Hin] Het.
          -- pose proof (app_res_ok_le _ _ _ _ e' Happ He' Het) as Hle. lia.
          -- destruct He' as [He' | ->]; [| done]. destruct (Hbat e' He') as (Hl & _). lia.
      + rewrite !upd_ne by done. apply (app_res_ok_weaken _ _ _ _ _ (Hdone x ltac:(lia))).
        * intros e [He | He]; [by left | right; apply Hin; by left].
        * intros e [He | [He | ->]%Hin] Het; [by left | by right | simpl in Het; lia].
    - rewrite map_app. simpl. apply NoDup_app. split_and!; [done | | apply NoDup_singleton].
      intros x Hx ->%elem_of_list_singleton. apply elem_of_list_fmap in Hx as (e & Hx & He).
      destruct (Hbat e He) as (Hl & _). lia.
    - intros e [He | ->]%Hin.
      + destruct (Hbat e He) as (? & Hrest'). split; [lia | done].
      + simpl. split_and!; try done; [lia | | | |].
        * rewrite <- Hapj. done.
        * exists o, i', fl. split; [done | lia].
        * intros o' fl' Hr. unfold req_is in Hr, Hreq. rewrite Hreq in Hr. by injection Hr as -> ->.
        * intros ->. by left.
  Qed.

  Lemma fent_thread s k i e t o :
    inv2 s → fent (ch s) k i e → 0 < k ≤ cseq s → Invoke i t o ∈ erase (xh s) → e_th e = t ∧ e_op e = o.
  Proof.
    intros Hinv (He & <- & _) Hk Hi. destruct (j_ent s Hinv e) as [Hi' _]; [exists k; split; [lia | done] |].
    destruct (inv_same s (e_id e) t o (e_th e) (e_op e) Hinv Hi Hi') as [-> ->]. done.
  Qed.

  (** A thread's transaction linearized at seq [k]: its State shows it. *)
  Lemma fent_applied s k i e t o :
    inv2 s → fent (ch s) k i e → ep s < k ≤ cseq s → Invoke i t o ∈ erase (xh s) → t < N →
    S i ≤ app_at (ch s) (cseq s) t.
  Proof.
    intros Hinv Hf Hk Hi Ht. destruct (fent_thread s k i e t o Hinv Hf ltac:(lia) Hi) as [Het _].
    destruct Hf as (He & <- & _).
    apply (app_res_ok_le _ t _ _ e (j_app s Hinv (cseq s) t ltac:(lia) Ht)); [| done].
    exists k. split; [lia | done].
  Qed.

  Lemma mark_set_rep s t r (pm : pmem) ws hd d q :
    mark_cc (set_pc (set_rep s t r (rstores W line pm r ws) hd d) t q) = mark (p_mem pm) (LC line).
  Proof. unfold RedoPTMPx.mark_cc. cbn. apply rstores_mark. Qed.

  Lemma mark_flush (pm : pmem) t xs : mark (p_mem pm) (LC line) ≤ mark (p_mem (p_flush line pm t xs)) (LC line).
  Proof. apply flush_mark. Qed.


  (** ** The points placed by a return or a crash *)

  Lemma tinv2_ent_pt V t p i : by_entry p → pid p = Some i → tinv2 V t p → ent_pt V i.
  Proof.
    destruct p as [| i' u own | i' u own s0 c0 ap rs | i' u r s0 c0 ap rs j bat ws lg | i' s1 c0 v | i' s1 c0 v
                  | i' o | i' q pub | i' o c v [|]]; simpl; try done; intros _ [= <-]; unfold upd_ok; naive_solver.
  Qed.

  Lemma tinv2_invoke V t p i : pid p = Some i → tinv2 V t p → ∃ o, Invoke i t o ∈ erase (vx V).
  Proof.
    destruct p as [| i' u own | i' u own s0 c0 ap rs | i' u r s0 c0 ap rs j bat ws lg | i' s1 c0 v | i' s1 c0 v
                  | i' o | i' q pub | i' o c v [|]]; simpl; try done; intros [= <-]; unfold upd_ok; naive_solver.
  Qed.

  (** Two threads run different transactions. *)
  Lemma pid_unique s t1 t2 i :
    inv1 s → inv2 s → pid (pc s t1) = Some i → pid (pc s t2) = Some i → t1 = t2.
  Proof.
    intros H1 H2 Hp1 Hp2.
    assert (t1 < N) as Ht1.
    { apply (inv1_busy W uexec rexec N NR NR_pos line NL line_cc s t1 H1). by intros Hi; rewrite Hi in Hp1. }
    assert (t2 < N) as Ht2.
    { apply (inv1_busy W uexec rexec N NR NR_pos line NL line_cc s t2 H1). by intros Hi; rewrite Hi in Hp2. }
    destruct (tinv2_invoke _ _ _ i Hp1 (j_thr s H2 t1 Ht1)) as (o1 & Hi1).
    destruct (tinv2_invoke _ _ _ i Hp2 (j_thr s H2 t2 Ht2)) as (o2 & Hi2).
    by destruct (inv_same s i t1 o1 t2 o2 H2 Hi1 Hi2).
  Qed.

  Lemma busy_lt s t : inv1 s → pc s t ≠ TIdle → t < N.
  Proof. apply (inv1_busy W uexec rexec N NR NR_pos line NL line_cc s t). Qed.

  (** Where a placed point comes from. *)
  Definition adv_src s b i o v : Prop :=
    (∃ k e, pl s < k ≤ b ∧ fent (ch s) k i e ∧ o = e_op e ∧ v = e_val e) ∨
    (∃ t c, t < N ∧ pc s t = TDur i o c v true ∧ pl s < c ≤ b).

  Lemma adv_src_of s b i o v : XL i o v ∈ adv s b ↔ adv_src s b i o v.
  Proof.
    rewrite elem_of_adv. split.
    - intros (k & Hk & [Hx | Hx]).
      + apply elem_of_bpts in Hx as (e & He & Hpt & [= -> -> ->]). left. exists k, e. done.
      + apply elem_of_rpts in Hx as (t & i' & o' & v' & Ht & Hp & [= -> -> ->]). right. by exists t, k.
    - intros [(k & e & Hk & (He & <- & Hpt) & -> & ->) | (t & c & Ht & Hp & Hc)].
      + exists k. split; [done |]. left. apply elem_of_bpts. by exists e.
      + exists c. split; [done |]. right. apply elem_of_rpts. by exists t, i, o, v.
  Qed.

  (** A placed point's transaction has no point yet, and was invoked. *)
  Lemma adv_fresh s b i o v :
    inv1 s → inv2 s → b ≤ cseq s → adv_src s b i o v → (∃ t, Invoke i t o ∈ erase (xh s)) ∧ no_pt (vw s) i.
  Proof.
    intros H1 H2 Hb [(k & e & Hk & Hf & -> & ->) | (t & c & Ht & Hp & Hc)].
    - pose proof Hf as (He & Hid & Hpt).
      destruct (j_pend s H2 k e ltac:(lia) He Hpt) as (Ht & Hpid & Hby).
      split.
      + exists (e_th e). rewrite <- Hid. refine (proj1 (j_ent s H2 e _)). exists k. split; [| done].
        destruct (decide (k = 0)) as [-> | ?]; [rewrite (j_b0 s H2) in He; by apply elem_of_nil in He | lia].
      + rewrite Hid in Hpid. pose proof (j_thr s H2 (e_th e) Ht) as Htt.
        destruct (tinv2_ent_pt _ _ _ i Hby Hpid Htt) as [_ Hno]. apply Hno.
        intros k' e' (He' & Hid' & _). rewrite <- Hid' in Hid.
        pose proof (j_once s H2 k k' e e' He He' Hid) as <-. cbn. lia.
    - pose proof (j_thr s H2 t Ht) as Htt. rewrite Hp in Htt.
      destruct Htt as (_ & Hi & _ & _ & _ & _ & Hno & _). split; [eauto | apply Hno; cbn; lia].
  Qed.

  Lemma adv_nodup s b : inv1 s → inv2 s → b ≤ cseq s → NoDup (pids (adv s b)).
  Proof.
    intros H1 H2 Hb. destruct (decide (b ≤ pl s)) as [Hle | Hgt]; [rewrite adv_le by done; constructor |].
    assert (∀ t1 t2 i o1 o2 c1 c2 v1 v2 d1 d2, pc s t1 = TDur i o1 c1 v1 d1 → pc s t2 = TDur i o2 c2 v2 d2 → t1 = t2)
      as Hu.
    { intros t1 t2 i o1 o2 c1 c2 v1 v2 d1 d2 Hp1 Hp2. apply (pid_unique s t1 t2 i H1 H2); by rewrite ?Hp1, ?Hp2. }
    (* a direct read's transaction is no transition's *)
    assert (∀ t i o c v k e, t < N → pc s t = TDur i o c v true → k ≤ cseq s → fent (ch s) k i e → False) as Hde.
    { intros t i o c v k e Ht Hp Hk (He & Hid & Hpt). pose proof (j_thr s H2 t Ht) as Htt. rewrite Hp in Htt.
      destruct Htt as (_ & _ & _ & _ & Hnf & _). cbn in Hnf.
      destruct (decide (k = 0)) as [-> | Hk0]; [rewrite (j_b0 s H2) in He; by apply elem_of_nil in He |].
      rewrite (Hnf e) in Hpt; [done | | done]. exists k.
      split; [unfold vcseq; cbn; unfold RedoPTMPx.cseq in Hk; lia | done]. }
    induction b as [| b IH]; [lia |].
    destruct (decide (b ≤ pl s)) as [Hle | Hgt'].
    - assert (b = pl s) as -> by lia. rewrite adv_S, adv_le by done. simpl. rewrite pids_app.
      apply NoDup_app. split_and!.
      + apply nodup_bpts, (j_nodup s H2).
      + intros i Hi1 Hi2. apply elem_of_pids in Hi1 as (o1 & v1 & Hx1). apply elem_of_pids in Hi2 as (o2 & v2 & Hx2).
        apply elem_of_bpts in Hx1 as (e & He & Hpt & [= -> -> ->]).
        apply elem_of_rpts in Hx2 as (t & i' & o' & v' & Ht & Hp & [= <- -> ->]).
        apply (Hde t (e_id e) o' (S (pl s)) v' (S (pl s)) e Ht Hp); [lia | done].
      + apply nodup_rpts_from; [apply NoDup_seq | done].
    - rewrite adv_S by lia. rewrite !pids_app. apply NoDup_app. split_and!.
      + apply IH; lia.
      + intros i Hi1 Hi2. apply elem_of_pids in Hi1 as (o1 & v1 & Hx1). apply adv_src_of in Hx1.
        apply elem_of_app in Hi2 as [Hi2 | Hi2]; apply elem_of_pids in Hi2 as (o2 & v2 & Hx2).
        * apply elem_of_bpts in Hx2 as (e & He & Hpt & [= -> -> ->]).
          destruct Hx1 as [(k & e' & Hk & (He' & Hid' & _) & _ & _) | (t & c & Ht & Hp & Hc)].
          -- pose proof (j_once s H2 k (S b) e' e He' He Hid'). lia.
          -- apply (Hde t (e_id e) o1 c v1 (S b) e Ht Hp); [lia | done].
        * apply elem_of_rpts in Hx2 as (t & i' & o' & v' & Ht & Hp & [= <- -> ->]).
          destruct Hx1 as [(k & e' & Hk & Hf & _ & _) | (t' & c & Ht' & Hp' & Hc)].
          -- apply (Hde t i o' (S b) v' k e' Ht Hp); [lia | done].
          -- pose proof (Hu t t' i o' o1 (S b) c v' v1 true true Hp Hp') as <-. rewrite Hp in Hp'.
             injection Hp' as <- <- <-. lia.
      + apply NoDup_app. split_and!.
        * apply nodup_bpts, (j_nodup s H2).
        * intros i Hi1 Hi2. apply elem_of_pids in Hi1 as (o1 & v1 & Hx1).
          apply elem_of_pids in Hi2 as (o2 & v2 & Hx2).
          apply elem_of_bpts in Hx1 as (e & He & Hpt & [= -> -> ->]).
          apply elem_of_rpts in Hx2 as (t & i' & o' & v' & Ht & Hp & [= <- -> ->]).
          apply (Hde t (e_id e) o' (S b) v' (S b) e Ht Hp); [lia | done].
        * apply nodup_rpts_from; [apply NoDup_seq | done].
  Qed.

  (** The history with the points of seqs [pl+1 .. b] placed. *)
  Lemma adv_prefix_ok s b :
    inv1 s → inv2 s → b ≤ cseq s → prefix_ok point_ok (xh s ++ adv s b).
  Proof.
    intros H1 H2 Hb. rewrite (xls_to_xl (adv s b)) by apply adv_xl.
    apply prefix_ok_to_xl; [apply (j_ok s H2) | |].
    - intros [[i o] v] Hp. simpl. apply (elem_of_points (adv s b)) in Hp. apply adv_src_of in Hp.
      by destruct (adv_fresh s b i o v H1 H2 Hb Hp) as [Hi _].
    - rewrite <- points_app. change (NoDup (pids (xh s ++ adv s b))). rewrite pids_app.
      apply NoDup_app. split_and!.
      + apply points_nodup, (j_ok s H2).
      + intros i Hi1 Hi2. apply elem_of_pids in Hi1 as (o1 & v1 & Hx1). apply elem_of_pids in Hi2 as (o2 & v2 & Hx2).
        apply adv_src_of in Hx2. destruct (adv_fresh s b i o2 v2 H1 H2 Hb Hx2) as [_ Hno]. by apply (Hno o1 v1).
      + by apply adv_nodup.
  Qed.

  Lemma adv_runs_ok s b :
    inv1 s → inv2 s → pl s ≤ b → b ≤ cseq s →
    runs_to init_obj (effects (points (xh s ++ adv s b))) (obj_at (ch s) b).
  Proof.
    intros H1 H2 Hpb Hb. rewrite points_app, effects_app. eapply runs_to_app; [apply (j_run s H2) |].
    apply adv_runs; [done | |].
    - intros k Hk.
      destruct (i_chain W uexec rexec N NR line NL s H1) as (_ & _ & Hs).
      destruct (lookup_lt_is_Some_2 (ch s) k) as [lb Hlb].
      { pose proof (inv1_cseq W uexec rexec N NR NR_pos line NL line_cc s H1). unfold RedoPTMPx.cseq in *. lia. }
      destruct (lookup_lt_is_Some_2 (ch s) (pred k)) as [la Hla]; [apply lookup_lt_Some in Hlb; lia |].
      apply (batch_runs _ _ (l_ws lb)).
      + unfold RedoPTMPx.obj_at, batch_at. rewrite Hla, Hlb. simpl.
        replace k with (S (pred k)) in Hlb by lia. by apply (Hs (pred k)).
      + intros e He Hpt. apply (j_ent s H2); [| done]. exists k. split; [lia | done].
    - intros t i o c v Ht Hp Hc. pose proof (j_thr s H2 t Ht) as Htt. rewrite Hp in Htt. apply Htt.
  Qed.


  (** The other threads, after the points up to [b] and events [x'] (a
      return or a crash, no invocation, no point) are appended. *)
  Lemma tinv2_adv s b x' t :
    inv1 s → inv2 s → pl s ≤ b → b ≤ cseq s → t < N →
    (∀ i o v, XL i o v ∉ x') → (∀ i t' o, Invoke i t' o ∉ erase x') →
    tinv2 (vw s) t (pc s t) → tinv2 (View (xh s ++ adv s b ++ x') (ch s) b (ep s) (req s)) t (pc s t).
  Proof.
    intros H1 H2 Hpb Hb Ht Hnx Hni Htt.
    set (V' := View (xh s ++ adv s b ++ x') (ch s) b (ep s) (req s)).
    assert (erase (vx V') = erase (xh s) ++ erase x') as Her.
    { unfold V'. cbn [vx]. by rewrite !erase_app, erase_adv. }
    assert (∀ i t' o, Invoke i t' o ∈ erase (xh s) → Invoke i t' o ∈ erase (vx V')) as Hinv'.
    { intros i t' o Hi. rewrite Her. apply elem_of_app. by left. }
    assert (∀ i, latest (vw s) t i → latest V' t i) as Hlat.
    { intros i Hl i' o Hi. rewrite Her in Hi. apply elem_of_app in Hi as [Hi | Hi]; [by apply (Hl i' o) |].
      by apply Hni in Hi. }
    assert (∀ i o v, XL i o v ∈ vx V' ↔ XL i o v ∈ xh s ∨ adv_src s b i o v) as Hxl.
    { intros i o v. unfold V'. cbn [vx]. rewrite !elem_of_app, adv_src_of. split; [| naive_solver].
      intros [? | [? | Hx]]; [by left | by right | by apply Hnx in Hx]. }
    assert (∀ i, by_entry (pc s t) → pid (pc s t) = Some i → ent_pt V' i) as Hent.
    { intros i Hby Hpid. destruct (tinv2_ent_pt _ _ _ i Hby Hpid Htt) as [Hp1 Hp2]. split.
      - intros k e Hk Hf. unfold V' in Hk, Hf. cbn [vpl vch] in Hk, Hf. apply Hxl. destruct (decide (k ≤ pl s)); [left; by apply (Hp1 k e) |].
        right. left. exists k, e. split_and!; [lia | lia | done | done | done].
      - intros Hall o v Hx%Hxl. destruct Hx as [Hx | [(k & e & Hk & Hf & _) | (t'' & c & Ht'' & Hp'' & Hc)]].
        + apply Hp2 in Hx; [done |]. intros k e Hf. pose proof (Hall k e Hf) as Hk'. unfold V' in Hk'. cbn in *. lia.
        + pose proof (Hall k e Hf) as Hk'. unfold V' in Hk'. cbn in *. lia.
        + assert (t'' = t) as -> by (apply (pid_unique s t'' t i H1 H2); [by rewrite Hp'' | done]).
          by rewrite Hp'' in Hby. }
    (* a direct read's or unpublished read's transaction gets no point but its own *)
    assert (∀ i, no_fent (vw s) i → no_pt (vw s) i → pid (pc s t) = Some i →
              (∀ o c v, pc s t = TDur i o c v true → b < c) → no_pt V' i) as Hnop.
    { intros i Hnf Hno Hpid Hc o v Hx%Hxl. destruct Hx as [Hx | [(k & e & Hk & (He & Hid & Hpt) & _) | (t'' & c & Ht'' & Hp'' & Hcb)]].
      - by apply (Hno o v).
      - rewrite (Hnf e) in Hpt; [done | | done]. exists k. split; [| done]. unfold vcseq. cbn.
        unfold RedoPTMPx.cseq in Hb. lia.
      - assert (t'' = t) as -> by (apply (pid_unique s t'' t i H1 H2); [by rewrite Hp'' | done]).
        specialize (Hc o c v Hp''). lia. }
    destruct (pc s t) as [| i u own | i u own s0 c0 ap rs | i u r s0 c0 ap rs j bat ws lg | i s1 c0 v | i s1 c0 v
                         | i o | i q pub | i o c v [|]] eqn:Hp; cbn [tinv2] in Htt |- *; unfold upd_ok in *;
      subst V'; cbn [vw vx vch vpl vep vreq] in *; try done.
    - destruct Htt as (Hi & Hl & Hr & _). split_and!; [by apply Hinv' | by apply Hlat | done | by apply Hent].
    - destruct Htt as ((Hi & Hl & Hr & _) & Hep0 & Hap & Hrs).
      split_and!; [by apply Hinv' | by apply Hlat | done | by apply Hent | done..].
    - destruct Htt as ((Hi & Hl & Hr & _) & Hep0 & Hlt0 & Hsim).
      split_and!; [by apply Hinv' | by apply Hlat | done | by apply Hent | done | done |].
      destruct Hsim as (? & ? & ? & ? & ? & ? & Hbat). split_and!; try done.
      intros e He. destruct (Hbat e He) as (? & Hie & ? & ? & ? & ? & ? & ?). split_and!; try done. by apply Hinv'.
    - destruct Htt as (o & e & Hi & Hl & Hr & _ & Hs1 & Hf & Ho & Hv). exists o, e.
      split_and!; [by apply Hinv' | by apply Hlat | done | by apply Hent | done..].
    - destruct Htt as (o & e & Hi & Hl & Hr & _ & Hs1 & Hf & Ho & Hv). exists o, e.
      split_and!; [by apply Hinv' | by apply Hlat | done | by apply Hent | done..].
    - destruct Htt as (Hi & Hl & Hr & _). split_and!; [by apply Hinv' | by apply Hlat | done | by apply Hent].
    - destruct Htt as (Hi & Hl & Hnf & Hno & Hpub). split_and!; [by apply Hinv' | by apply Hlat | done | | done].
      apply Hnop; [done | done | done |]. intros ???; done.
    - destruct Htt as (Hq & Hi & Hl & Hep0 & Hnf & Hin & Hno & Hreq). split_and!; [done | by apply Hinv' | by apply Hlat | done | done | | | done].
      + intros Hcb. apply Hxl. destruct (decide (c ≤ pl s)); [left; by apply Hin |].
        right. right. exists t, c. split_and!; [done | done | lia | lia].
      + intros Hcb. apply Hnop; [done | | done |].
        * apply Hno. lia.
        * intros o' c' v' [= <- <- <-]. done.
    - destruct Htt as (Hi & Hl & Hr & _ & Hrest). split_and!; [by apply Hinv' | by apply Hlat | done | by apply Hent | done].
  Qed.


  Lemma adv_ext s s' b : ch s' = ch s → pl s' = pl s → pc s' = pc s → adv s' b = adv s b.
  Proof. intros Hch Hpl Hpc. unfold RedoPTMPx.adv, RedoPTMPx.rpts. by rewrite Hch, Hpl, Hpc. Qed.

  (** A thread returns the result of seq [c]: the points up to [c] are
      placed, then its return. *)
  Lemma inv2_ret s s0 t i c v :
    inv1 s → inv2 s → t < N →
    xh s0 = xh s → ch s0 = ch s → pl s0 = pl s → ep s0 = ep s → req s0 = req s → pc s0 = pc s →
    nid s0 = nid s → mark_cc s ≤ mark_cc s0 → c ≤ mark_cc s0 → c ≤ cseq s →
    ((∃ (s1 c0 : nat), pc s t = TRelease i s1 c0 v ∧ c = s1) ∨ (∃ o dir, pc s t = TDur i o c v dir)) →
    inv2 (ret s0 t i c v).
  Proof.
    intros H1 H2 Ht Hx Hch Hpl Hep Hrq Hpc Hn Hm Hcm Hcc Hst.
    set (b := pl s `max` c).
    assert (pl s ≤ mark_cc s) as Hplm by apply (j_plm s H2).
    pose proof (inv1_mark W uexec rexec N NR line NL s H1) as Hmk.
    assert (b ≤ cseq s) as Hb by lia.
    assert (adv s0 (pl s0 `max` c) = adv s b) as Hadv by (rewrite Hpl; by apply adv_ext).
    (* the returning transaction has its point before its return *)
    assert (∃ o, XL i o v ∈ xh s ++ adv s b) as [o0 Hxl0].
    { pose proof (j_thr s H2 t Ht) as Htt.
      destruct Hst as [(s1 & c0 & Hp & ->) | (o & [|] & Hp)]; rewrite Hp in Htt; cbn [tinv2 vw vx vch vpl vep vreq] in Htt.
      - destruct Htt as (o & e & _ & _ & _ & [Hp1 _] & _ & Hf & _ & <-). exists (e_op e).
        apply elem_of_app. destruct (decide (s1 ≤ pl s)); [left; by apply (Hp1 s1 e) | right].
        apply adv_src_of. left. exists s1, e. split_and!; try done; lia.
      - destruct Htt as (Hq & _ & _ & _ & _ & Hin & _). exists o. apply elem_of_app.
        destruct (decide (c ≤ pl s)); [left; by apply Hin | right].
        apply adv_src_of. right. exists t, c. split_and!; try done; lia.
      - destruct Htt as (_ & _ & _ & [Hp1 _] & k & e & Hk & Hf & Ho & <-). exists (e_op e).
        apply elem_of_app. destruct (decide (k ≤ pl s)); [left; by apply (Hp1 k e) | right].
        apply adv_src_of. left. exists k, e. split_and!; try done; lia. }
    (* no entry of the returning transaction after seq [b] *)
    assert (∀ k e, b < k → e ∈ batch_at (ch s) k → e_pt e = true → e_th e = t → False) as Hnone.
    { intros k e Hk He Hpt Het. destruct (j_pend s H2 k e ltac:(lia) He Hpt) as (_ & Hpid & Hby).
      rewrite Het in Hpid, Hby. pose proof (j_thr s H2 t Ht) as Htt.
      destruct Hst as [(s1 & c0 & Hp & ->) | (o & [|] & Hp)]; rewrite Hp in Hpid, Hby, Htt;
        cbn [tinv2 vw vx vch vpl vep vreq] in Htt; [| done |]; injection Hpid as Hid.
      - destruct Htt as (o & e' & _ & _ & _ & _ & _ & (He' & Hid' & _) & _).
        rewrite Hid in Hid'. pose proof (j_once s H2 _ _ _ _ He' He Hid'). lia.
      - destruct Htt as (_ & _ & _ & _ & k' & e' & Hk' & (He' & Hid' & _) & _).
        rewrite Hid in Hid'. pose proof (j_once s H2 _ _ _ _ He' He Hid'). lia. }
    unfold RedoPTMPx.ret. rewrite Hadv, Hx, Hch, Hpl, Hep, Hrq, Hpc, Hn. fold b.
    pose proof H2 as [Hok Hrun Hepl _ Hb0 Hfr Hun Hent Hnd Hon Heth Happ Hreq Hxl Hpend Hthr].
    assert (erase (xh s ++ adv s b ++ [XE (Return i v)]) = erase (xh s) ++ [Return i v]) as Her.
    { by rewrite !erase_app, erase_adv. }
    split; cbn [mem req ch rhead rlock dirty ring wm pc xh nid pl ep done].
    - rewrite app_assoc. apply prefix_ok_snoc. split; [by apply adv_prefix_ok |]. simpl. by exists o0.
    - rewrite app_assoc, points_app, effects_app. simpl. rewrite app_nil_r. by apply adv_runs_ok; [| | lia |].
    - lia.
    - unfold RedoPTMPx.mark_cc in *. cbn. lia.
    - done.
    - intros i' t' o' Hi. rewrite Her in Hi. apply elem_of_app in Hi as [Hi | Hi]; [by apply (Hfr i' t' o') |].
      by apply elem_of_list_singleton in Hi.
    - intros i' t1 o1 t2 o2 Hi1 Hi2. rewrite Her in Hi1, Hi2.
      apply elem_of_app in Hi1 as [Hi1 | Hi1]; [| by apply elem_of_list_singleton in Hi1].
      apply elem_of_app in Hi2 as [Hi2 | Hi2]; [| by apply elem_of_list_singleton in Hi2]. by apply (Hun i').
    - intros e He. rewrite Her. destruct (Hent e He) as [Hi Hrd]. split; [apply elem_of_app; by left | done].
    - done.
    - done.
    - done.
    - done.
    - intros t' o i' fl Hr. destruct (Hreq t' o i' fl Hr) as (Ht' & Hi & Hpre & Hfl & Hrd & Hw).
      unfold req_ok. cbn [mem req ch rhead rlock dirty ring wm pc xh nid pl ep done].
      split_and!; try done.
      + rewrite Her. apply elem_of_app. by left.
      + intros Hfl'. destruct (Hw Hfl') as [? | [Hpid Hwt]]; [by left |].
        destruct (decide (t' = t)) as [-> | Hne].
        * exfalso. destruct Hst as [(s1 & c0 & Hp & ->) | (o' & dir & Hp)]; by rewrite Hp in Hwt.
        * right. by rewrite upd_ne.
    - intros i' o v' Hx'. rewrite app_assoc in Hx'. apply elem_of_app in Hx' as [Hx' | Hx'];
        [| by apply elem_of_list_singleton in Hx'].
      apply elem_of_app in Hx' as [Hx' | Hx'].
      + destruct (Hxl i' o v' Hx') as [? | (k & e & Hk & He)]; [by left | right]. exists k, e. split; [lia | done].
      + apply adv_src_of in Hx' as [(k & e & Hk & Hf & -> & ->) | (t' & c' & Ht' & Hp' & Hc')].
        * right. exists k, e. split_and!; try done. lia.
        * left. pose proof (Hthr t' Ht') as Htt. rewrite Hp' in Htt. by destruct Htt as ((q & -> & _) & _).
    - intros k e Hk He Hpt. destruct (Hpend k e ltac:(lia) He Hpt) as (Het & Hpid & Hby).
      destruct (decide (e_th e = t)) as [Heq | Hne]; [exfalso; by apply (Hnone k e) |].
      by rewrite upd_ne.
    - intros t' Ht'. destruct (decide (t' = t)) as [-> | Hne]; [by rewrite upd_eq |]. rewrite upd_ne by done.
      apply (tinv2_adv s b [XE (Return i v)] t' H1 H2); [lia | done | done | | | by apply Hthr].
      + intros i' o v' ?%elem_of_list_singleton. done.
      + intros i' t'' o ?%elem_of_list_singleton. done.
  Qed.


  (** Another thread's invariant, when thread [t] invokes or publishes. *)
  Lemma tinv2_transfer_gen (V V' : view) t t' q :
    t' ≠ t → vch V' = vch V → vpl V' = vpl V → vep V' = vep V →
    (∀ i t'' o, Invoke i t'' o ∈ erase (vx V) → Invoke i t'' o ∈ erase (vx V')) →
    (∀ i' o, Invoke i' t' o ∈ erase (vx V') → Invoke i' t' o ∈ erase (vx V)) →
    (∀ i o v, XL i o v ∈ vx V → XL i o v ∈ vx V') →
    (∀ i o v, pid q = Some i → XL i o v ∈ vx V' → XL i o v ∈ vx V) →
    (∀ t'', t'' ≠ t → vreq V' t'' = vreq V t'') →
    (∀ e, e_th e = t → Invoke (e_id e) t (e_op e) ∈ erase (vx V) →
       (∃ o' i' fl', req_is V t o' i' fl' ∧ e_id e ≤ i') →
       (∀ o fl, req_is V t o (e_id e) fl → o = e_op e ∧ fl = e_pt e) →
       (e_pt e = true → req_is V t (e_op e) (e_id e) true ∨ S (e_id e) ≤ app_at (vch V) (vcseq V) t) →
       (∃ o' i' fl', req_is V' t o' i' fl' ∧ e_id e ≤ i') ∧
       (∀ o fl, req_is V' t o (e_id e) fl → o = e_op e ∧ fl = e_pt e) ∧
       (e_pt e = true → req_is V' t (e_op e) (e_id e) true ∨ S (e_id e) ≤ app_at (vch V) (vcseq V) t)) →
    tinv2 V t' q → tinv2 V' t' q.
  Proof.
    intros Hne Hch Hpl Hep Hinv Hinv' Hxl HxlB Hrq Hbt.
    assert (∀ i, latest V t' i → latest V' t' i) as Hlat.
    { intros i Hl i' o Hi. apply (Hl i' o). by apply Hinv'. }
    assert (∀ i, pid q = Some i → no_pt V i → no_pt V' i) as Hnop.
    { intros i Hq Hno o v Hx. apply (Hno o v). by apply HxlB. }
    assert (∀ i, pid q = Some i → ent_pt V i → ent_pt V' i) as Hent.
    { intros i Hq [Hp1 Hp2]. split.
      - intros k e Hk Hf. apply Hxl. rewrite Hpl in Hk. rewrite Hch in Hf. by apply (Hp1 k e).
      - intros Hall. apply Hnop; [done |]. apply Hp2. intros k e Hf. rewrite <- Hpl. apply (Hall k e).
        by rewrite Hch. }
    assert (∀ o i fl, req_is V t' o i fl → req_is V' t' o i fl) as Hreq.
    { intros o i fl. unfold req_is. by rewrite (Hrq t'). }
    assert (∀ o i fl, req_is V' t' o i fl → req_is V t' o i fl) as Hreq'.
    { intros o i fl. unfold req_is. by rewrite (Hrq t'). }
    assert (vcseq V' = vcseq V) as Hcs by (unfold vcseq; by rewrite Hch).
    assert (∀ i, no_fent V i → no_fent V' i) as Hnf.
    { intros i Hn e He. rewrite Hcs, Hch in He. by apply Hn. }
    destruct q as [| i u own | i u own s0 c0 ap rs | i u r s0 c0 ap rs j bat ws lg | i s1 c0 v | i s1 c0 v
                  | i o | i q pub | i o c v [|]]; cbn [tinv2]; unfold upd_ok; rewrite ?Hch, ?Hpl, ?Hep, ?Hcs;
      try done.
    - intros (Hi & Hl & Hr & He). split_and!; auto.
    - intros ((Hi & Hl & Hr & He) & Hrest). split_and!; auto; apply Hrest.
    - intros ((Hi & Hl & Hr & He) & Hep0 & Hlt0 & (Hj & Hlt & Hge & Hrest & Hdone & Hnd & Hbat)).
      split_and!; auto. unfold sim_ok. rewrite ?Hch, ?Hpl, ?Hep, ?Hcs. split_and!; auto.
      intros e Heb. destruct (Hbat e Heb) as (Hth & Hie & Happ & Hrd & Hpre & Hr1 & Hr2 & Hr3).
      split_and!; auto.
      + destruct (decide (e_th e = t)) as [Heq | Hne'].
        * rewrite Heq in Hie, Hr1, Hr2, Hr3 |- *. by destruct (Hbt e Heq Hie Hr1 Hr2 Hr3) as (? & _ & _).
        * destruct Hr1 as (o' & i' & fl' & Hr1 & Hle). exists o', i', fl'. split; [| done].
          unfold req_is in *. by rewrite Hrq.
      + destruct (decide (e_th e = t)) as [Heq | Hne'].
        * rewrite Heq in Hie, Hr1, Hr2, Hr3 |- *. by destruct (Hbt e Heq Hie Hr1 Hr2 Hr3) as (_ & ? & _).
        * intros o fl Hrr. apply Hr2. unfold req_is in *. by rewrite <- Hrq.
      + destruct (decide (e_th e = t)) as [Heq | Hne'].
        * rewrite Heq in Hie, Hr1, Hr2, Hr3 |- *. by destruct (Hbt e Heq Hie Hr1 Hr2 Hr3) as (_ & _ & ?).
        * intros Hpt. destruct (Hr3 Hpt) as [Hrr | ?]; [left | by right]. unfold req_is in *. by rewrite Hrq.
    - intros (o & e & Hi & Hl & Hr & He & Hrest). exists o, e. split_and!; auto; apply Hrest.
    - intros (o & e & Hi & Hl & Hr & He & Hrest). exists o, e. split_and!; auto; apply Hrest.
    - intros (Hi & Hl & Hr & He). split_and!; auto.
    - intros (Hi & Hl & Hnf' & Hno & Hpub). split_and!; auto. destruct pub; [auto |].
      destruct Hpub as [Hp1 Hp2]. split; [| exact Hp2]. intros o' i' fl Hrr. apply (Hp1 o' i' fl). auto.
    - intros (Hq & Hi & Hl & Hep0 & Hnf' & Hin & Hno & Hreq0). split_and!; auto.
      intros o' fl Hr. apply (Hreq0 o' fl). auto.
    - intros (Hi & Hl & Hr & He & Hrest). split_and!; auto.
  Qed.

  Lemma xl_lt_nid s i o v : inv2 s → XL i o v ∈ xh s → i < nid s.
  Proof.
    intros Hinv Hx. apply elem_of_list_split in Hx as (l1 & l2 & Hxh).
    pose proof (j_ok s Hinv) as Hok. rewrite Hxh in Hok.
    replace (l1 ++ XL i o v :: l2) with ((l1 ++ [XL i o v]) ++ l2) in Hok by (by rewrite <- app_assoc).
    apply prefix_ok_app_inv_l, prefix_ok_snoc in Hok as [_ [(t & Ht) _]].
    apply (j_fresh s Hinv i t o). rewrite Hxh, erase_app. apply elem_of_app. by left.
  Qed.


  Lemma entry_lt_nid s e : inv2 s → ein (ch s) 0 (cseq s) e → e_id e < nid s.
  Proof. intros H2 He. apply (j_fresh s H2 (e_id e) (e_th e) (e_op e)). by apply (j_ent s H2). Qed.

  (** An idle thread's last request is committed. *)
  Lemma idle_req s t o i fl :
    inv2 s → pc s t = TIdle ∨ (∃ i' q, pc s t = TRead i' q false) ∨ (∃ i' o' c v, pc s t = TDur i' o' c v true) →
    req s t = Some (Req o i fl) → fl = true → S i ≤ app_at (ch s) (cseq s) t.
  Proof.
    intros H2 Hp Hr Hfl. destruct (j_req s H2 t o i fl Hr) as (_ & _ & _ & _ & _ & Hw).
    destruct (Hw Hfl) as [? | [_ Hwt]]; [done |].
    destruct Hp as [Hp | [(i' & q & Hp) | (i' & o' & c & v & Hp)]]; by rewrite Hp in Hwt.
  Qed.

  (** A new transaction: its invocation (and, for an update, its request). *)
  Lemma inv2_invoke s t o :
    inv1 s → inv2 s → t < N → pc s t = TIdle →
    let i := nid s in
    let rq := match o with Upd _ => upd (req s) t (Some (Req o i true)) | Rd _ => req s end in
    let p := match o with Upd u => TAnn i u None | Rd q => TRead i q false end in
    inv2 (RState (mem s) rq (ch s) (rhead s) (rlock s) (dirty s) (ring s) (wm s) (upd (pc s) t p)
            (xh s ++ [XE (Invoke i t o)]) (S i) (pl s) (ep s) (done s)).
  Proof.
    intros H1 H2 Ht Hp i rq p.
    set (s' := RState (mem s) rq (ch s) (rhead s) (rlock s) (dirty s) (ring s) (wm s) (upd (pc s) t p)
            (xh s ++ [XE (Invoke i t o)]) (S i) (pl s) (ep s) (done s)).
    assert (erase (xh s') = erase (xh s) ++ [Invoke i t o]) as Her by (cbn [s' xh]; by rewrite erase_app).
    assert (∀ i' o' v', XL i' o' v' ∈ xh s' ↔ XL i' o' v' ∈ xh s) as Hxl'.
    { intros i' o' v'. cbn [s' xh]. rewrite elem_of_app, elem_of_list_singleton. naive_solver. }
    assert (∀ i' t' o', Invoke i' t' o' ∈ erase (xh s) → i' < i) as Hfr by apply (j_fresh s H2).
    assert (pid p = Some i) as Hpid by (by destruct o).
    assert (∀ o1 i1 fl, req s t = Some (Req o1 i1 fl) → fl = true → S i1 ≤ app_at (ch s) (cseq s) t) as Hold.
    { intros ???. apply idle_req; [done | by left]. }
    assert (∀ t', t' ≠ t → rq t' = req s t') as Hrq by (intros t' Hne; unfold rq; destruct o; [by rewrite upd_ne | done]).
    pose proof H2 as [Hok Hrun Hepl Hplm Hb0 Hfresh Hun Hent Hnd Hon Heth Happ Hreq Hxl Hpend Hthr].
    split; cbn [s' mem req ch rhead rlock dirty ring wm pc xh nid pl ep done].
    - apply prefix_ok_snoc. done.
    - by rewrite points_app, app_nil_r.
    - done.
    - done.
    - done.
    - intros i' t' o'. rewrite erase_app. intros [Hi | [= -> _ _]%elem_of_list_singleton]%elem_of_app.
      + pose proof (Hfresh i' t' o' Hi). lia.
      + lia.
    - intros i' t1 o1 t2 o2. rewrite erase_app.
      intros [Hi1 | Hi1%elem_of_list_singleton]%elem_of_app [Hi2 | Hi2%elem_of_list_singleton]%elem_of_app.
      + by apply (Hun i').
      + injection Hi2 as -> _ _. pose proof (Hfresh _ _ _ Hi1). lia.
      + injection Hi1 as -> _ _. pose proof (Hfresh _ _ _ Hi2). lia.
      + injection Hi1 as -> -> ->. by injection Hi2 as -> ->.
    - intros e He. rewrite erase_app. destruct (Hent e He) as [? ?]. split; [apply elem_of_app; by left | done].
    - done.
    - done.
    - done.
    - done.
    - intros t' o1 i1 fl Hr. unfold req_ok. cbn [s' mem req ch rhead rlock dirty ring wm pc xh nid pl ep done].
      rewrite erase_app. destruct (decide (t' = t)) as [-> | Hne].
      + destruct o as [u | q].
        * unfold rq in Hr. cbn in Hr. rewrite upd_eq in Hr. injection Hr as <- <- <-. split_and!; [done | | | | done |].
          -- apply elem_of_app. right. by left.
          -- intros k e Hk He Hid. assert (e_id e < i); [| lia]. apply (entry_lt_nid s e H2).
             exists k. split; [| done]. destruct (decide (k = 0)) as [-> | ?]; [rewrite Hb0 in He; by apply elem_of_nil in He |].
             split; [lia |]. pose proof (inv1_ep_cseq s H1 H2). lia.
          -- intros e He Hid. pose proof (entry_lt_nid s e H2 He). lia.
          -- intros _. right. rewrite upd_eq. done.
        * cbn in Hr. destruct (Hreq t o1 i1 fl Hr) as (? & ? & ? & ? & ? & Hw). split_and!; try done.
          -- apply elem_of_app. by left.
          -- intros Hfl. left. by apply (Hold o1 i1 fl).
      + rewrite (Hrq t' Hne) in Hr. destruct (Hreq t' o1 i1 fl Hr) as (? & ? & ? & ? & ? & Hw).
        split_and!; try done.
        * apply elem_of_app. by left.
        * rewrite upd_ne by done. done.
    - intros i' o' v' Hx. apply Hxl. by apply Hxl'.
    - intros k e Hk He Hpt. destruct (Hpend k e Hk He Hpt) as (Het & Hpi & Hby).
      destruct (decide (e_th e = t)) as [Heq | Hne]; [by rewrite Heq, Hp in Hpi |]. by rewrite upd_ne.
    - intros t' Ht'. destruct (decide (t' = t)) as [-> | Hne].
      + rewrite upd_eq. unfold p, s'. destruct o as [u | q]; cbn [tinv2]; unfold upd_ok; cbn [vw vx vch vpl vep vreq mem req ch rhead rlock dirty ring wm pc xh nid pl ep done].
        * split_and!.
          -- rewrite erase_app. apply elem_of_app. right. by left.
          -- intros i' o' Hi. cbn [vw vx xh] in Hi. rewrite erase_app in Hi. apply elem_of_app in Hi as [Hi | [= -> _]%elem_of_list_singleton];
               [pose proof (Hfresh _ _ _ Hi); lia | lia].
          -- unfold req_is, rq. cbn. by rewrite upd_eq.
          -- split.
             ++ intros k e Hk (He & Hid & _). cbn in Hk, He. exfalso. pose proof (entry_lt_nid s e H2) as Hlt.
                destruct (decide (k = 0)) as [-> | ?]; [rewrite Hb0 in He; by apply elem_of_nil in He |].
                assert (e_id e < i); [apply Hlt; exists k; split; [| done] | lia].
                split; [lia |]. pose proof (j_plm s H2). pose proof (inv1_mark W uexec rexec N NR line NL s H1). lia.
             ++ intros _ o' v' Hx%Hxl'. pose proof (xl_lt_nid s i o' v' H2 Hx). lia.
        * split_and!.
          -- rewrite erase_app. apply elem_of_app. right. by left.
          -- intros i' o' Hi. cbn [vw vx xh] in Hi. rewrite erase_app in Hi. apply elem_of_app in Hi as [Hi | [= -> _]%elem_of_list_singleton];
               [pose proof (Hfresh _ _ _ Hi); lia | lia].
          -- intros e He Hid. pose proof (entry_lt_nid s e H2 He). lia.
          -- intros o' v' Hx%Hxl'. pose proof (xl_lt_nid s i o' v' H2 Hx). lia.
          -- intros o' i' fl Hr. unfold req_is, rq in Hr. cbn in Hr.
             destruct (Hreq t o' i' fl Hr) as (_ & Hi & _). by apply Hfr in Hi.
          -- intros e He Hid. pose proof (entry_lt_nid s e H2 He). lia.
      + rewrite upd_ne by done.
        apply (tinv2_transfer_gen (vw s) _ t t' (pc s t') Hne); unfold s'; cbn [vw vx vch vpl vep vreq mem req ch rhead rlock dirty ring wm pc xh nid pl ep done]; try done.
        * intros i' t'' o' Hi. rewrite erase_app. apply elem_of_app. by left.
        * intros i' o' Hi. rewrite erase_app in Hi. apply elem_of_app in Hi as [? | [= _ ? _]%elem_of_list_singleton]; done.
        * intros i' o' v' Hx. apply elem_of_app. by left.
        * intros i' o' v' _ Hx. by apply Hxl'.
        * intros e Het Hie Hr1 Hr2 Hr3. destruct o as [u | q]; [| done]. split_and!.
          -- exists (Upd u), i, true. unfold req_is, rq. cbn. rewrite upd_eq. split; [done |].
             pose proof (Hfresh _ _ _ Hie). lia.
          -- intros o' fl. unfold req_is, rq. cbn. rewrite upd_eq. intros [= _ Hid _]. pose proof (Hfresh _ _ _ Hie). lia.
          -- intros Hpt. right. destruct (Hr3 Hpt) as [Hr | ?]; [| done]. by apply (Hold (e_op e) (e_id e) true).
        * by apply Hthr.
  Qed.

  Ltac thr2 Hinv2 t Ht Hp H :=
    pose proof (j_thr _ Hinv2 t Ht) as H; rewrite Hp in H; cbn [tinv2] in H; cbn [vw vep vx vch vpl vreq] in H.


  (** Algorithm 2 L3–L5: a read publishes its request. *)
  Lemma inv2_publish s t i q way :
    inv1 s → inv2 s → t < N → pc s t = TRead i q false →
    inv2 (RState (mem s) (upd (req s) t (Some (Req (Rd q) i way))) (ch s) (rhead s) (rlock s)
            (dirty s) (ring s) (wm s) (upd (pc s) t (if way then TCollect i (Rd q) else TRead i q true))
            (xh s) (nid s) (pl s) (ep s) (done s)).
  Proof.
    intros H1 H2 Ht Hp.
    set (p := if way then TCollect i (Rd q) else TRead i q true).
    set (s' := RState (mem s) (upd (req s) t (Some (Req (Rd q) i way))) (ch s) (rhead s) (rlock s)
            (dirty s) (ring s) (wm s) (upd (pc s) t p) (xh s) (nid s) (pl s) (ep s) (done s)).
    thr2 H2 t Ht Hp Htt. destruct Htt as (Hi & Hl & Hnf & Hno & Hold & Hnoe).
    assert (∀ o1 i1 fl, req s t = Some (Req o1 i1 fl) → i1 < i) as Hlt by (intros ???; apply Hold).
    assert (∀ o1 i1 fl, req s t = Some (Req o1 i1 fl) → fl = true → S i1 ≤ app_at (ch s) (cseq s) t) as Hcom.
    { intros ???. apply idle_req; [done | right; left; by exists i, q]. }
    assert (∀ k e, e ∈ batch_at (ch s) k → e_id e ≠ i) as Hnone.
    { intros k e He Hid. destruct (decide (k = 0)) as [-> | Hk0]; [rewrite (j_b0 s H2) in He; by apply elem_of_nil in He |].
      destruct (decide (k ≤ cseq s)) as [Hk | Hk].
      - apply (Hnoe e); [| done]. exists k. unfold vcseq. cbn. unfold RedoPTMPx.cseq in Hk. split; [lia | done].
      - rewrite batch_at_ge in He; [by apply elem_of_nil in He |]. unfold RedoPTMPx.cseq in Hk. lia. }
    pose proof H2 as [Hok Hrun Hepl Hplm Hb0 Hfresh Hun Hent Hnd Hon Heth Happ Hreq Hxl Hpend Hthr].
    split; cbn [s' mem req ch rhead rlock dirty ring wm pc xh nid pl ep done]; try done.
    - intros t' o1 i1 fl Hr. unfold req_ok. cbn [s' mem req ch rhead rlock dirty ring wm pc xh nid pl ep done].
      destruct (decide (t' = t)) as [-> | Hne].
      + rewrite upd_eq in Hr. injection Hr as <- <- <-. split_and!; try done.
        * intros k e _ He. by apply (Hnone k e).
        * intros e (k & _ & He) Hid. by destruct (Hnone k e He).
        * intros Hw. right. unfold p. rewrite upd_eq, Hw. done.
      + rewrite upd_ne in Hr by done. destruct (Hreq t' o1 i1 fl Hr) as (? & ? & ? & ? & ? & Hw).
        split_and!; try done. rewrite upd_ne by done. done.
    - intros k e Hk He Hpt. destruct (Hpend k e Hk He Hpt) as (Het & Hpi & Hby).
      destruct (decide (e_th e = t)) as [Heq | Hne]; [by rewrite Heq, Hp in Hby |]. by rewrite upd_ne.
    - intros t' Ht'. destruct (decide (t' = t)) as [-> | Hne].
      + rewrite upd_eq. unfold p, s'. destruct way; cbn [tinv2]; unfold upd_ok;
          cbn [vw vx vch vpl vep vreq mem req ch rhead rlock dirty ring wm pc xh nid pl ep done].
        * split_and!; try done.
          -- unfold req_is. cbn. by rewrite upd_eq.
          -- split.
             ++ intros k e _ (He & Hid & _). by destruct (Hnone k e He).
             ++ intros _. done.
        * split_and!; try done. unfold req_is. cbn. by rewrite upd_eq.
      + rewrite upd_ne by done.
        apply (tinv2_transfer_gen (vw s) _ t t' (pc s t') Hne); unfold s';
          cbn [vw vx vch vpl vep vreq mem req ch rhead rlock dirty ring wm pc xh nid pl ep done]; try done.
        * intros t'' Hne'. by rewrite upd_ne.
        * intros e Het Hie Hr1 Hr2 Hr3. destruct Hr1 as (o1 & i1 & fl1 & Hr1 & Hle).
          pose proof (Hlt o1 i1 fl1 Hr1) as Hi1. split_and!.
          -- exists (Rd q), i, way. unfold req_is. cbn. rewrite upd_eq. split; [done | lia].
          -- intros o' fl. unfold req_is. cbn. rewrite upd_eq. intros [= _ Hid _]. lia.
          -- intros Hpt. right. destruct (Hr3 Hpt) as [Hr | ?]; [| done]. by apply (Hcom (e_op e) (e_id e) true).
        * by apply Hthr.
  Qed.


  Lemma inv1_cur_content s : inv1 s → content (mem s) (rep_at (ch s) (cseq s)) = obj_at (ch s) (cseq s).
  Proof.
    intros H1. destruct (i_cand W uexec rexec N NR line NL s H1 (cseq s)) as (_ & _ & Hst).
    { pose proof (inv1_mark W uexec rexec N NR line NL s H1). lia. }
    apply (stable_content W NR NR_pos line NL line_cc); [apply (i_pm W uexec rexec N NR line NL s H1) | | done].
    apply (chain_obj_length W uexec rexec NR), (i_chain W uexec rexec N NR line NL s H1).
  Qed.

  (** Algorithm 2 L6–L11: a direct read of the replica [curComb]
      designates; linearized there if the points have reached its seq, else
      once they do. *)
  Lemma inv2_direct s t i q pub c c0 :
    inv1 s → inv2 s → t < N → pc s t = TRead i q pub → ccv (mem s) = (c, c0) →
    inv2 (RState (mem s) (req s) (ch s) (rhead s) (rlock s) (dirty s) (ring s) (wm s)
            (upd (pc s) t (TDur i (Rd q) c (rexec q (content (mem s) c0)) true))
            (if decide (pl s = c) then xh s ++ [XL i (Rd q) (rexec q (content (mem s) c0))] else xh s)
            (nid s) (pl s) (ep s) (done s)).
  Proof.
    intros H1 H2 Ht Hp Hcc. rewrite (inv1_ccv' s H1) in Hcc. injection Hcc as <- <-.
    rewrite inv1_cur_content by done. set (v := rexec q (obj_at (ch s) (cseq s))).
    pose proof (inv1_ep_cseq s H1 H2) as Hepc. pose proof (j_plm s H2) as Hplm.
    pose proof (inv1_mark W uexec rexec N NR line NL s H1) as Hmk.
    thr2 H2 t Ht Hp Htt. destruct Htt as (Hi & Hl & Hnf & Hno & Hpub).
    assert (∀ o' fl, req_is (vw s) t o' i fl → fl = false) as Hrf.
    { intros o' fl Hr. destruct pub.
      - unfold req_is in Hr, Hpub. cbn in Hr, Hpub. rewrite Hpub in Hr. by injection Hr as _ <-.
      - destruct Hpub as [Hlt _]. apply Hlt in Hr. lia. }
    assert (∀ o1 i1 fl, req s t = Some (Req o1 i1 fl) → fl = true → S i1 ≤ app_at (ch s) (cseq s) t) as Hcom.
    { intros o1 i1 fl Hr Hfl. destruct pub.
      - unfold req_is in Hpub. cbn in Hpub. rewrite Hpub in Hr. injection Hr as _ _ <-. done.
      - apply (idle_req s t o1 i1 fl); [done | | done | done]. right; left. by exists i, q. }
    destruct (decide (pl s = cseq s)) as [Hpc | Hpc].
    - (* the point is placed now *)
      idtac.
      set (s' := RState (mem s) (req s) (ch s) (rhead s) (rlock s) (dirty s) (ring s) (wm s)
            (upd (pc s) t (TDur i (Rd q) (cseq s) v true)) (xh s ++ [XL i (Rd q) v]) (nid s) (pl s) (ep s) (done s)).
      assert (erase (xh s') = erase (xh s)) as Her by (cbn [s' xh]; by rewrite erase_app, app_nil_r).
      assert (∀ i' o' v', XL i' o' v' ∈ xh s' ↔ XL i' o' v' ∈ xh s ∨ (i', o', v') = (i, Rd q, v)) as Hxl'.
      { intros i' o' v'. cbn [s' xh]. rewrite elem_of_app, elem_of_list_singleton. naive_solver. }
      pose proof H2 as [Hok Hrun Hepl Hplm' Hb0 Hfresh Hun Hent Hnd Hon Heth Happ Hreq Hxl Hpend Hthr].
      unfold s' in *. split; cbn [mem req ch rhead rlock dirty ring wm pc xh nid pl ep done]; try done.
      + apply prefix_ok_snoc. split; [done |]. split; [by exists t |]. intros o' v'. apply Hno.
      + rewrite points_app, effects_app. eapply runs_to_app; [done |]. simpl. rewrite Hpc. by apply runs_to_rd.
      + intros i' t' o'. rewrite erase_app, app_nil_r. apply Hfresh.
      + intros i' t1 o1 t2 o2. rewrite erase_app, app_nil_r. apply Hun.
      + intros e He. rewrite erase_app, app_nil_r. by apply Hent.
      + intros t' o1 i1 fl Hr. unfold req_ok. cbn [mem req ch rhead rlock dirty ring wm pc xh nid pl ep done].
        rewrite erase_app, app_nil_r. destruct (Hreq t' o1 i1 fl Hr) as (? & ? & ? & ? & ? & Hw).
        split_and!; try done. intros Hfl. destruct (decide (t' = t)) as [-> | Hne].
        * left. by apply (Hcom o1 i1 fl).
        * rewrite upd_ne by done. by apply Hw.
      + intros i' o' v' [Hx | [= -> -> ->]]%Hxl'; [by apply Hxl | by left].
      + intros k e Hk He Hpt. destruct (Hpend k e Hk He Hpt) as (Het & Hpi & Hby).
        destruct (decide (e_th e = t)) as [Heq | Hne]; [by rewrite Heq, Hp in Hby |]. by rewrite upd_ne.
      + intros t' Ht'. destruct (decide (t' = t)) as [-> | Hne].
        * rewrite upd_eq. cbn [tinv2 vw vx vch vpl vep vreq mem req ch rhead rlock dirty ring wm pc xh nid pl ep done]. split_and!; try done.
          -- by exists q.
          -- rewrite erase_app, app_nil_r. done.
          -- intros i' o' Hi'. cbn [vx vw xh] in Hi'. rewrite erase_app, app_nil_r in Hi'. by apply (Hl i' o').
          -- intros _. apply elem_of_app. right. by left.
          -- intros Hlt. lia.
        * rewrite upd_ne by done.
          apply (tinv2_transfer_gen (vw s) _ t t' (pc s t') Hne);
            cbn [vw vx vch vpl vep vreq mem req ch rhead rlock dirty ring wm pc xh nid pl ep done]; try done.
          -- intros i' t'' o' Hi'. by rewrite erase_app, app_nil_r.
          -- intros i' o' Hi'. by rewrite erase_app, app_nil_r in Hi'.
          -- intros i' o' v' Hx. apply elem_of_app. by left.
          -- intros i' o' v' Hpid Hx. apply elem_of_app in Hx as [Hx | Hx%elem_of_list_singleton]; [done |].
             injection Hx as -> _ _. exfalso. apply Hne. apply (pid_unique s t' t i H1 H2); [done | by rewrite Hp].
          -- by apply Hthr.
    - (* the point waits for the points to reach seq [c] *)
      refine (inv2_pc s _ t (TDur i (Rd q) (cseq s) v true) H2 Ht _ _ _ _ _ _ _ _).
      + done.
      + done.
      + done.
      + done.
      + by rewrite Hp.
      + by rewrite Hp.
      + intros o1 i1 fl Hr Hfl. left. by apply (Hcom o1 i1 fl).
      + cbn [tinv2 vw vx vch vpl vep vreq]. split_and!; try done.
        * by exists q.
        * intros Hle. lia.
  Qed.


  (** The seq a thread's state refers to is committed. *)
  Definition tseq_ok (V : view) (q : tstate) : Prop :=
    match q with
    | THave _ _ _ s0 _ _ _ | TSim _ _ _ s0 _ _ _ _ _ _ _ => s0 ≤ vcseq V
    | TPersist _ s1 _ _ | TRelease _ s1 _ _ => s1 ≤ vcseq V
    | TDur _ _ c _ _ => c ≤ vcseq V
    | _ => True
    end.

  Lemma tseq_ok_of s t : inv1 s → t < N → tseq_ok (vw s) (pc s t).
  Proof.
    intros H1 Ht. pose proof (i_thr W uexec rexec N NR line NL s H1 t Ht) as Htt.
    destruct (pc s t); cbn in Htt |- *; unfold rel_ok, RedoPTMPx.cseq, vcseq in *; cbn; try done; try lia;
      try (destruct Htt as [? ?]; lia); try (destruct Htt as (? & ? & _); lia).
  Qed.

  (** Another thread's invariant when a transition [l] is installed. *)
  Lemma tinv2_snoc (V V' : view) t' q l :
    vx V' = vx V → vpl V' = vpl V → vep V' = vep V → vreq V' = vreq V → vch V' = vch V ++ [l] →
    0 < length (vch V) → vpl V ≤ vcseq V → vep V ≤ vcseq V → tseq_ok V q →
    (∀ x, x < N → app_at (vch V) (vcseq V) x ≤ app_at (vch V') (vcseq V') x) →
    (∀ e, e ∈ l_batch l → pid q = Some (e_id e) →
       by_entry q ∨ e_pt e = false ∧ ∀ i q', q ≠ TRead i q' false) →
    tinv2 V t' q → tinv2 V' t' q.
  Proof.
    intros Hx Hpl Hep Hrq Hch Hlen Hplc Hepc Hsq Hmono Hnew.
    assert (vcseq V' = S (vcseq V)) as Hcs.
    { unfold vcseq. rewrite Hch, app_length. simpl. lia. }
    assert (∀ k, k ≤ vcseq V → batch_at (vch V') k = batch_at (vch V) k) as Hb.
    { intros k Hk. rewrite Hch. apply batch_at_app. unfold vcseq in Hk. lia. }
    assert (batch_at (vch V') (S (vcseq V)) = l_batch l) as Hbn.
    { rewrite Hch. replace (S (vcseq V)) with (length (vch V)) by (unfold vcseq; lia). apply batch_at_snoc. }
    assert (∀ k, k ≤ vcseq V → obj_at (vch V') k = obj_at (vch V) k ∧ app_at (vch V') k = app_at (vch V) k ∧
              res_at (vch V') k = res_at (vch V) k) as Hat.
    { intros k Hk. rewrite Hch. unfold vcseq in Hk. split_and!; [apply obj_at_app' | apply app_at_app' | apply res_at_app']; lia. }
    assert (∀ lo hi e, hi ≤ vcseq V → ein (vch V') lo hi e ↔ ein (vch V) lo hi e) as Hein.
    { intros lo hi e Hhi. rewrite Hch. apply ein_app_le. unfold vcseq in Hhi. lia. }
    assert (∀ k i e, fent (vch V) k i e → k ≤ vcseq V → fent (vch V') k i e) as Hfent.
    { intros k i e (He & ? & ?) Hk. split; [by rewrite Hb | done]. }
    assert (∀ k i e, fent (vch V') k i e → k ≤ vcseq V → fent (vch V) k i e) as Hfent'.
    { intros k i e (He & ? & ?) Hk. split; [by rewrite <- Hb | done]. }
    (* entries of the new transition are above the points *)
    assert (∀ i, ent_pt V i → ent_pt V' i) as Hent.
    { intros i [Hp1 Hp2]. split.
      - intros k e Hk Hf. rewrite Hx. rewrite Hpl in Hk. apply (Hp1 k e); [done |]. apply Hfent'; [done | lia].
      - intros Hall o v. rewrite Hx. apply Hp2. intros k e Hf.
        destruct (decide (k ≤ vcseq V)) as [Hk | Hk].
        + rewrite <- Hpl. apply (Hall k e). by apply Hfent.
        + lia. }
    assert (∀ i, latest V t' i → latest V' t' i) as Hlat by (intros i; unfold latest; by rewrite Hx).
    assert (∀ t'' o i fl, req_is V t'' o i fl → req_is V' t'' o i fl) as Hreq by (intros ????; unfold req_is; by rewrite Hrq).
    assert (∀ i, no_pt V i → no_pt V' i) as Hnop by (intros i; unfold no_pt; by rewrite Hx).
    (* a direct read's transaction gets no linearized entry *)
    assert (∀ i, pid q = Some i → ¬ by_entry q → no_fent V i → no_fent V' i) as Hnf.
    { intros i Hpid Hby Hn e He Hid. rewrite Hcs in He. destruct He as (k & Hk & He).
      destruct (decide (k ≤ vcseq V)) as [Hk' | Hk'].
      - apply Hn; [| done]. exists k. split; [lia |]. by rewrite <- Hb.
      - assert (k = S (vcseq V)) as -> by lia. rewrite Hbn in He. subst i.
        destruct (Hnew e He Hpid) as [? | [? _]]; done. }
    destruct q as [| i u own | i u own s0 c0 ap rs | i u r s0 c0 ap rs j bat ws lg | i s1 c0 v | i s1 c0 v
                  | i o | i q pub | i o c v [|]]; cbn [tinv2 tseq_ok] in *; unfold upd_ok in *;
      rewrite ?Hx, ?Hep; try done.
    - intros (Hi & Hl & Hr & He). split_and!; auto.
    - intros ((Hi & Hl & Hr & He) & Hep0 & -> & ->). destruct (Hat s0 Hsq) as (_ & -> & ->). split_and!; auto.
    - intros ((Hi & Hl & Hr & He) & Hep0 & Hlt0 & (Hj & Hlt & Hge & Hrest & Hdone & Hnd & Hbat)).
      destruct (Hat s0 Hsq) as (_ & Happ & Hres). rewrite Happ. split_and!; auto.
      unfold sim_ok. rewrite Happ, Hres, Hep, Hx. split_and!; try done.
      + intros x Hx'. apply (app_res_ok_weaken _ _ _ _ _ (Hdone x Hx')).
        * intros e [He1 | He1]; [left; by apply Hein | by right].
        * intros e [He1 | He1] _; [left; by apply (Hein _ s0) | by right].
      + intros e He1. destruct (Hbat e He1) as (Hth & Hie & Happ' & Hrd & Hpre & Hr1 & Hr2 & Hr3).
        split_and!; try done.
        * intros k e' Hk He'. apply (Hpre k e' Hk). rewrite <- Hb; [done | lia].
        * destruct Hr1 as (o' & i' & fl' & ? & ?). exists o', i', fl'. split; [| done]. by apply Hreq.
        * intros o fl Hrr. apply Hr2. unfold req_is in *. by rewrite <- Hrq.
        * intros Hpt. destruct (Hr3 Hpt) as [Hrr | Ha]; [left; by apply Hreq | right].
          etrans; [apply Ha |]. apply Hmono. lia.
    - intros (o & e & Hi & Hl & Hr & He & Hep1 & Hf & Ho & Hv). exists o, e. split_and!; auto; apply Hfent; auto.
    - intros (o & e & Hi & Hl & Hr & He & Hep1 & Hf & Ho & Hv). exists o, e. split_and!; auto; apply Hfent; auto.
    - intros (Hi & Hl & Hr & He). split_and!; auto.
    - intros (Hi & Hl & Hnf' & Hno & Hpub). split_and!; auto.
      destruct pub; [by apply Hreq |]. destruct Hpub as [Hp1 Hp2]. split.
      + intros o' i' fl Hrr. apply (Hp1 o' i' fl). unfold req_is in *. by rewrite <- Hrq.
      + intros e He Hid. rewrite Hcs in He. destruct He as (k & Hk & He).
        destruct (decide (k ≤ vcseq V)) as [Hk' | Hk'].
        * apply (Hp2 e); [| done]. exists k. split; [lia |]. by rewrite <- Hb.
        * assert (k = S (vcseq V)) as -> by lia. rewrite Hbn in He. subst i.
          destruct (Hnew e He eq_refl) as [? | [_ Hnt]]; [done |]. by apply (Hnt (e_id e) q).
    - intros (Hq & Hi & Hl & Hep0 & Hnf' & Hin & Hno & Hreq0). destruct (Hat c Hsq) as (Hobj & _ & _).
      rewrite Hobj, Hpl. split_and!; auto.
      intros o' fl Hrr. apply (Hreq0 o' fl). unfold req_is in *. by rewrite <- Hrq.
    - intros (Hi & Hl & Hr & He & k & e & Hk & Hf & Ho & Hv). split_and!; auto. exists k, e.
      split_and!; try done; [lia | lia | apply Hfent; [done | lia]].
  Qed.


  Lemma nodup_map_inj {A B} (f : A → B) (l : list A) x y :
    NoDup (map f l) → x ∈ l → y ∈ l → f x = f y → x = y.
  Proof.
    induction l as [| z l IH]; [by intros _ ?%elem_of_nil |]. simpl. intros [Hz Hl]%NoDup_cons Hx Hy Hf.
    apply elem_of_cons in Hx as [-> | Hx]; apply elem_of_cons in Hy as [-> | Hy]; try done.
    - exfalso. apply Hz. rewrite Hf. apply elem_of_list_In, in_map, elem_of_list_In, Hy.
    - exfalso. apply Hz. rewrite <- Hf. apply elem_of_list_In, in_map, elem_of_list_In, Hx.
    - by apply IH.
  Qed.

  (** L26–L30: the CAS installs the combiner's transition. *)
  Lemma inv2_cassucc s t i u r (s0 c0 : nat) ap rs bat ws lg :
    inv1 s → inv2 s → t < N → pc s t = TSim i u r s0 c0 ap rs N bat ws lg → ccv (mem s) = (s0, c0) →
    inv2 (RState (p_write (cas_flush W line true s t r) (LC line) (cc_write (S s0) r)) (req s)
                  (ch s ++ [Link (content (mem s) r) ap rs bat ws r])
                  (upd (rhead s) r (Some (S s0))) (upd (rlock s) r Held) (upd (dirty s) r [])
                  (ring s) (wm s) (upd (pc s) t (TPersist i (S s0) c0 (rs t)))
                  (xh s) (nid s) (pl s) (ep s) (done s)).
  Proof.
    intros H1 H2 Ht Hp Hcc. rewrite (inv1_ccv' s H1) in Hcc. injection Hcc as <- <-.
    set (nl := Link (content (mem s) r) ap rs bat ws r).
    set (ch' := ch s ++ [nl]).
    pose proof (inv1_ep_cseq s H1 H2) as Hepc. pose proof (j_plm s H2) as Hplm.
    pose proof (inv1_mark W uexec rexec N NR line NL s H1) as Hmk.
    pose proof (inv1_len W uexec rexec N NR NR_pos line NL line_cc s H1) as Hlen0.
    assert (length (ch s) = S (cseq s)) as Hlen by (unfold RedoPTMPx.cseq; lia).
    assert (∀ k, k ≤ cseq s → batch_at ch' k = batch_at (ch s) k) as Hb by (intros k Hk; apply batch_at_app; lia).
    assert (batch_at ch' (S (cseq s)) = bat) as Hbn.
    { unfold ch'. rewrite <- Hlen. apply batch_at_snoc. }
    assert (∀ k, S (cseq s) < k → batch_at ch' k = []) as Hbg.
    { intros k Hk. apply batch_at_ge. unfold ch'. rewrite app_length. simpl. lia. }
    assert (∀ lo e, lo ≤ cseq s → ein ch' lo (S (cseq s)) e ↔ ein (ch s) lo (cseq s) e ∨ e ∈ bat) as Hein.
    { intros lo e Hlo. unfold ch'. rewrite <- Hlen. rewrite ein_snoc by lia. rewrite Hlen. done. }
    assert (∀ lo hi e, hi ≤ cseq s → ein ch' lo hi e ↔ ein (ch s) lo hi e) as Hein_le.
    { intros lo hi e Hhi. apply ein_app_le. lia. }
    assert (RedoPTMPx.cseq (RState (p_write (cas_flush W line true s t r) (LC line) (cc_write (S (cseq s)) r)) (req s) ch'
                  (upd (rhead s) r (Some (S (cseq s)))) (upd (rlock s) r Held) (upd (dirty s) r [])
                  (ring s) (wm s) (upd (pc s) t (TPersist i (S (cseq s)) (rep_at (ch s) (cseq s)) (rs t)))
                  (xh s) (nid s) (pl s) (ep s) (done s)) = S (cseq s)) as Hcs'.
    { unfold RedoPTMPx.cseq. cbn. unfold ch'. rewrite app_length. simpl. lia. }
    assert (app_at ch' (S (cseq s)) = ap ∧ res_at ch' (S (cseq s)) = rs) as [Hapn Hrsn].
    { unfold RedoPTMPx.app_at, RedoPTMPx.res_at, ch'. rewrite lookup_app_r by lia. rewrite Hlen, Nat.sub_diag. done. }
    thr2 H2 t Ht Hp Htt. destruct Htt as ((Hi & Hl & Hr & Hpt) & Hep0 & Hlt0 & Hsim).
    destruct Hsim as (_ & Hlt & _ & _ & Hdone & Hndb & Hbat).
    unfold req_is, latest, vcseq in *. cbn [vw vx vch vpl vep vreq] in *.
    (* every entry of the new transition was open *)
    assert (∀ e, e ∈ bat → app_at (ch s) (cseq s) (e_th e) < S (e_id e)) as D1.
    { intros e He. by destruct (Hbat e He) as (_ & _ & ? & _). }
    assert (∀ e, e ∈ bat → e_th e < N) as Dth.
    { intros e He. by destruct (Hbat e He) as (? & _). }
    assert (∀ e k e', e ∈ bat → e' ∈ batch_at (ch s) k → e_id e' ≠ e_id e) as D2.
    { intros e k e' He He' Hid. destruct (Hbat e He) as (Hth & Hie & Happ & _ & Hpre & _).
      destruct (decide (k ≤ ep s)) as [Hk | Hk]; [by apply (Hpre k e') |].
      destruct (decide (k ≤ cseq s)) as [Hk' | Hk'].
      - assert (ein (ch s) (ep s) (cseq s) e') as Hin by (exists k; split; [lia | done]).
        destruct (j_ent s H2 e') as [Hie' _]; [by apply (ein_mono _ (ep s) (cseq s)); [lia | lia |] |].
        rewrite Hid in Hie'. destruct (inv_same s (e_id e) (e_th e') (e_op e') (e_th e) (e_op e) H2 Hie' Hie) as [Hth' _].
        pose proof (app_res_ok_le _ _ _ _ e' (j_app s H2 (cseq s) (e_th e) ltac:(lia) ltac:(lia)) Hin Hth').
        rewrite Hid in *. lia.
      - rewrite batch_at_ge in He' by lia. by apply elem_of_nil in He'. }
    assert (∀ e, e ∈ bat → e_pt e = true → pid (pc s (e_th e)) = Some (e_id e) ∧ waiting (pc s (e_th e))) as D3.
    { intros e He Hpe. destruct (Hbat e He) as (Hth & _ & Happ & _ & _ & _ & _ & Hr3).
      specialize (D1 e He). destruct (Hr3 Hpe) as [Hrq | Ha]; [| unfold RedoPTMPx.cseq in D1; lia].
      destruct (j_req s H2 (e_th e) (e_op e) (e_id e) true Hrq) as (_ & _ & _ & _ & _ & Hw).
      destruct (Hw eq_refl) as [? | ?]; [lia | done]. }
    assert (∃ e, e ∈ bat ∧ e_id e = i ∧ e_th e = t ∧ e_val e = rs t ∧ e_op e = Upd u ∧ e_pt e = true) as D4.
    { destruct (Hdone t Ht) as [[Ha _] | (e & [He | He] & Het & Ha & Hv & Hmax)].
      - specialize (Hlt Ht). lia.
      - exfalso. pose proof (app_res_ok_le _ _ _ _ e (j_app s H2 (cseq s) t ltac:(lia) Ht) He Het).
        specialize (Hlt Ht). assert (e_id e ≤ i); [| lia].
        apply (entry_le_latest s t i e H2 Hl); [by apply (ein_mono _ (ep s) (cseq s)); [lia | lia |] | done].
      - destruct (Hbat e He) as (Hth & Hie & _ & _ & _ & _ & Hr2 & _).
        assert (e_id e = i) as Hid.
        { specialize (Hlt Ht). rewrite Het in Hie. pose proof (Hl (e_id e) (e_op e) Hie). lia. }
        rewrite Het, Hid in Hie. destruct (inv_same s i t (e_op e) t (Upd u) H2 Hie Hi) as [_ Ho].
        rewrite Het, Hid in Hr2. destruct (Hr2 (Upd u) true Hr) as [_ Hpte].
        exists e. split_and!; done. }
    assert (∀ x, x < N → app_at (ch s) (cseq s) x ≤ ap x) as D5.
    { intros x Hx. destruct (j_app s H2 (cseq s) x ltac:(lia) Hx) as [[-> _] | (e & He & Het & -> & _ & _)]; [lia |].
      apply (app_res_ok_le _ _ _ _ e (Hdone x Hx)); [by left | done]. }
    assert (pred (length ch') = S (cseq s)) as Hlen'.
    { unfold ch'. rewrite app_length. simpl. lia. }
    assert (∀ e1 e2, e1 ∈ bat → e2 ∈ bat → e_id e1 = e_id e2 → e1 = e2) as Dinj.
    { intros e1 e2 He1 He2 Hid. destruct (Hbat e1 He1) as (_ & Hi1 & _). destruct (Hbat e2 He2) as (_ & Hi2 & _).
      rewrite Hid in Hi1. destruct (inv_same s (e_id e2) (e_th e1) (e_op e1) (e_th e2) (e_op e2) H2 Hi1 Hi2) as [Hth _].
      by apply (nodup_map_inj e_th bat). }
    assert (pl s ≤ cseq s) as Hplc by lia.
    pose proof H2 as [Hok Hrun Hepl _ Hb0 Hfresh Hun Hent Hnd Hon Heth Happ Hreq Hxl Hpend Hthr].
    split; unfold RedoPTMPx.cseq; cbn [mem req ch rhead rlock dirty ring wm pc xh nid pl ep done]; rewrite ?Hlen'.
    - done.
    - unfold ch'. rewrite obj_at_app' by lia. done.
    - done.
    - unfold RedoPTMPx.mark_cc in *. cbn [mem]. rewrite p_write_mark. unfold cas_flush.
      pose proof (mark_flush (mem s) t (map (rloc W r) (dirty s r) ++ [])). lia.
    - rewrite Hb by lia. done.
    - done.
    - done.
    - intros e He. apply Hein in He as [He | He]; [by apply Hent | | lia].
      destruct (Hbat e He) as (_ & Hie & _ & Hrd & _). done.
    - intros k. destruct (decide (k ≤ cseq s)) as [Hk | Hk]; [rewrite Hb by done; apply Hnd |].
      destruct (decide (k = S (cseq s))) as [-> | Hk']; [| rewrite Hbg by lia; constructor].
      rewrite Hbn. apply NoDup_fmap_2_strong; [intros ?????; by apply Dinj |].
      by apply (NoDup_fmap_1 e_th).
    - intros k1 k2 e1 e2 He1 He2 Hid.
      assert (∀ k e, e ∈ batch_at ch' k → k ≤ cseq s ∧ e ∈ batch_at (ch s) k ∨ k = S (cseq s) ∧ e ∈ bat) as Hwhere.
      { intros k e He. destruct (decide (k ≤ cseq s)) as [Hk | Hk]; [left; by rewrite Hb in He |].
        destruct (decide (k = S (cseq s))) as [-> | Hk']; [right; by rewrite Hbn in He |].
        rewrite Hbg in He by lia. by apply elem_of_nil in He. }
      destruct (Hwhere k1 e1 He1) as [[Hk1 He1'] | [-> He1']];
        destruct (Hwhere k2 e2 He2) as [[Hk2 He2'] | [-> He2']]; try done.
      + by apply (Hon k1 k2 e1 e2).
      + exfalso. by apply (D2 e2 k1 e1).
      + exfalso. by apply (D2 e1 k2 e2 He1' He2').
    - intros e He. apply Hein in He as [He | He]; [by apply Heth | by apply Dth | lia].
    - intros k t' Hk Ht'. destruct (decide (k ≤ cseq s)) as [Hk' | Hk'].
      + unfold ch'. rewrite app_at_app', res_at_app' by lia.
        apply (app_res_ok_weaken _ _ _ _ _ (Happ k t' ltac:(lia) Ht')).
        * intros e He. by apply Hein_le.
        * intros e He _. by apply (Hein_le (ep s) k e).
      + assert (k = S (cseq s)) as -> by lia. rewrite Hapn, Hrsn.
        apply (app_res_ok_weaken _ _ _ _ _ (Hdone t' Ht')).
        * intros e He. by apply Hein; [lia |].
        * intros e He _. by apply Hein in He; [| lia].
    - intros t' o i' fl Hr'. destruct (Hreq t' o i' fl Hr') as (Ht'' & Hi' & Hpre & Hfl & Hrd & Hw).
      unfold req_ok. unfold RedoPTMPx.cseq. cbn [mem req ch rhead rlock dirty ring wm pc xh nid pl ep done].
      rewrite Hlen'. split_and!; try done.
      + intros k e Hk He. apply (Hpre k e Hk). rewrite <- Hb by lia. done.
      + intros e He Hid. apply Hein in He as [He | He]; [by apply Hfl | | lia].
        destruct (Hbat e He) as (_ & Hie & _ & _ & _ & _ & Hr2 & _). rewrite Hid in Hie.
        destruct (inv_same s i' (e_th e) (e_op e) t' o H2 Hie Hi') as [Het _].
        rewrite Het, Hid in Hr2. by destruct (Hr2 o fl Hr').
      + intros Hfl'. rewrite Hapn. destruct (Hw Hfl') as [Ha | [Hpid Hwt]].
        * left. etrans; [apply Ha | by apply D5].
        * destruct (decide (t' = t)) as [-> | Hne].
          -- left. rewrite Hp in Hpid. injection Hpid as <-. by apply Hlt.
          -- right. by rewrite upd_ne.
    - intros i' o v Hx. destruct (Hxl i' o v Hx) as [? | (k & e & Hk & (He & Hid & Hpe) & Ho & Hv)]; [by left | right].
      exists k, e. split_and!; try done. split; [rewrite Hb by lia; done | done].
    - intros k e Hk He Hpe. destruct (decide (k ≤ cseq s)) as [Hk' | Hk'].
      + rewrite Hb in He by done. destruct (Hpend k e Hk He Hpe) as (Het & Hpid & Hby).
        split; [done |]. destruct (decide (e_th e = t)) as [Heq | Hne].
        * rewrite Heq, upd_eq. rewrite Heq, Hp in Hpid. done.
        * by rewrite upd_ne.
      + destruct (decide (k = S (cseq s))) as [-> | Hk'']; [| rewrite Hbg in He by lia; by apply elem_of_nil in He].
        rewrite Hbn in He. destruct (D3 e He Hpe) as [Hpid Hwt]. split; [by apply Dth |].
        destruct (decide (e_th e = t)) as [Heq | Hne].
        * rewrite Heq, upd_eq. rewrite Heq, Hp in Hpid. done.
        * rewrite upd_ne by done. split; [done |]. by destruct (pc s (e_th e)).
    - intros t' Ht'. destruct (decide (t' = t)) as [-> | Hne].
      + rewrite upd_eq. cbn [tinv2 vw vx vch vpl vep vreq]. destruct D4 as (e & He & Hid & Het & Hv & Ho & Hpe).
        exists (Upd u), e. unfold latest, req_is. split_and!; try done.
        * destruct Hpt as [Hp1 Hp2]. split.
          -- intros k e' Hk Hf. apply (Hp1 k e'); [done |]. destruct Hf as (Hf & ? & ?). split; [| done].
             cbn in Hk. rewrite Hb in Hf by lia. done.
          -- intros Hall. apply Hp2. intros k e' (Hf & ? & ?). apply (Hall k e'). split; [| done].
             destruct (decide (k ≤ cseq s)); [by rewrite Hb |]. cbn in Hf. rewrite batch_at_ge in Hf by lia. by apply elem_of_nil in Hf.
        * cbn. lia.
        * cbn [ch]. change (S (pred (length (ch s)))) with (S (cseq s)). split; [rewrite Hbn; done | done].
      + rewrite upd_ne by done.
        apply (tinv2_snoc (vw s) _ t' (pc s t') nl); cbn [vw vx vch vpl vep vreq]; try done; unfold vcseq; cbn.
        * by apply tseq_ok_of.
        * intros x Hx. rewrite Hlen'. rewrite Hapn. by apply D5.
        * intros e He Hpid. cbn in He. destruct (e_pt e) eqn:Hpe.
          -- left. destruct (D3 e He Hpe) as [Hpid' Hwt].
             assert (e_th e = t') as <- by (apply (pid_unique s _ _ (e_id e) H1 H2); done).
             by destruct (pc s (e_th e)).
          -- right. split; [done |]. intros i1 q1 Hq1.
             pose proof (Hthr t' Ht') as Htt. rewrite Hq1 in Htt. cbn [tinv2] in Htt.
             destruct Htt as (Hi1 & _ & _ & _ & Hlt1 & _). rewrite Hq1 in Hpid. injection Hpid as Hid1.
             rewrite Hid1 in Hi1.
             destruct (Hbat e He) as (_ & Hie & _ & _ & _ & (o' & i' & fl' & Hr1 & Hle) & _).
             destruct (inv_same s (e_id e) (e_th e) (e_op e) t' (Rd q1) H2 Hie Hi1) as [Het _].
             rewrite Het in Hr1. pose proof (Hlt1 o' i' fl' Hr1). lia.
        * by apply Hthr.
  Qed.


  (** A crash: the points up to the recovered seq are placed, then the
      crash; every transaction in flight is cut off. *)
  Lemma inv2_crash s keep : inv1 s → inv2 s → p_crash_ok (mem s) keep → inv2 (crash_state s keep).
  Proof.
    intros H1 H2 Hok.
    destruct (inv1_image W uexec rexec N NR NR_pos line NL line_lt line_cc s keep H1 Hok) as (Hk0 & Hk1 & Hmk).
    set (k := keep (LC line)). fold k in Hk0, Hk1, Hmk.
    pose proof (j_plm s H2) as Hplm. pose proof (j_ep s H2) as Hepl.
    pose proof (inv1_cseq W uexec rexec N NR NR_pos line NL line_cc s H1) as Hcl.
    destruct (lookup_lt_is_Some_2 (ch s) k) as [l Hl]; [unfold RedoPTMPx.cseq in *; lia |].
    set (ch' := take k (ch s) ++ [fresh_link l]).
    assert (∀ j, batch_at ch' j = if decide (j ≤ k) then batch_at (ch s) j else []) as Hb.
    { intros j. unfold batch_at, ch'. destruct (decide (j < k)) as [Hj | Hj].
      - rewrite decide_True by lia. rewrite lookup_app_l by (rewrite take_length; lia). by rewrite lookup_take.
      - rewrite lookup_app_r by (rewrite take_length; lia). rewrite take_length, Nat.min_l by lia.
        destruct (decide (j = k)) as [-> | Hne].
        + rewrite decide_True, Nat.sub_diag, Hl by done. done.
        + rewrite decide_False by lia. destruct (j - k) as [| m] eqn:E; [lia |]. simpl. by destruct m. }
    assert (obj_at ch' k = obj_at (ch s) k ∧ app_at ch' k = λ _, 0) as [Hobj Happ0].
    { unfold RedoPTMPx.obj_at, RedoPTMPx.app_at, ch'.
      rewrite lookup_app_r by (rewrite take_length; lia). rewrite take_length, Nat.min_l, Nat.sub_diag by lia.
      rewrite Hl. done. }
    assert (pred (length ch') = k) as Hlen'.
    { unfold ch'. rewrite app_length, take_length. simpl. lia. }
    assert (∀ lo hi e, hi ≤ k → ein ch' lo hi e ↔ ein (ch s) lo hi e) as Hein.
    { intros lo hi e Hhi. unfold ein. split; intros (j & Hj & He); exists j; rewrite Hb in *;
        rewrite decide_True in * by lia; done. }
    unfold RedoPTMPx.crash_state. rewrite Hk0, Hk1. fold k.
    assert (take k (ch s) ++ from_option (λ l, [fresh_link l]) [] (ch s !! k) = ch') as -> by (by rewrite Hl).
    pose proof H2 as [Hok2 Hrun Hepl' _ Hb0 Hfresh Hun Hent Hnd Hon Heth Happ Hreq Hxl Hpend Hthr].
    assert (erase (xh s ++ adv s k ++ [XE History.Crash]) = erase (xh s) ++ [History.Crash]) as Her.
    { by rewrite !erase_app, erase_adv. }
    split; unfold RedoPTMPx.cseq; cbn [mem req ch rhead rlock dirty ring wm pc xh nid pl ep done]; rewrite ?Hlen'.
    - rewrite app_assoc. apply prefix_ok_snoc. split; [| done]. apply adv_prefix_ok; [done | done |].
      unfold RedoPTMPx.cseq in *. lia.
    - rewrite app_assoc, points_app, effects_app. simpl. rewrite app_nil_r, Hobj.
      apply adv_runs_ok; [done | done | lia | unfold RedoPTMPx.cseq in *; lia].
    - lia.
    - unfold RedoPTMPx.mark_cc. cbn [mem]. rewrite (after_mark NR NR_pos line NL line_cc); [lia | | apply line_lt].
      apply (i_pm W uexec rexec N NR line NL s H1).
    - rewrite Hb. rewrite decide_True by lia. done.
    - intros i t o. rewrite Her. intros [Hi | Hi%elem_of_list_singleton]%elem_of_app; [by apply (Hfresh i t o) | done].
    - intros i t1 o1 t2 o2. rewrite Her.
      intros [Hi1 | Hi1%elem_of_list_singleton]%elem_of_app [Hi2 | Hi2%elem_of_list_singleton]%elem_of_app; try done.
      by apply (Hun i).
    - intros e He. apply Hein in He; [| done]. rewrite Her. destruct (Hent e) as [? ?].
      { eapply ein_mono; [| | done]; [lia | unfold RedoPTMPx.cseq in *; lia]. }
      split; [apply elem_of_app; by left | done].
    - intros j. rewrite Hb. case_decide; [apply Hnd | constructor].
    - intros k1 k2 e1 e2 He1 He2 Hid. rewrite Hb in He1, He2.
      destruct (decide (k1 ≤ k)); [| by apply elem_of_nil in He1].
      destruct (decide (k2 ≤ k)); [| by apply elem_of_nil in He2]. by apply (Hon k1 k2 e1 e2).
    - intros e (j & Hj & _). lia.
    - intros j t Hj Ht. assert (j = k) as -> by lia. rewrite Happ0. left. split; [done |].
      intros e (j & Hj' & _). lia.
    - done.
    - intros i o v Hx. rewrite app_assoc in Hx. apply elem_of_app in Hx as [Hx | Hx%elem_of_list_singleton]; [| done].
      apply elem_of_app in Hx as [Hx | Hx].
      + destruct (Hxl i o v Hx) as [? | (j & e & Hj & (He & Hid & Hpt) & Ho & Hv)]; [by left | right].
        exists j, e. split_and!; try done; [lia |]. split; [| done]. rewrite Hb, decide_True by lia. done.
      + apply adv_src_of in Hx as [(j & e & Hj & (He & Hid & Hpt) & Ho & Hv) | (t & c & Ht & Hp & Hc)].
        * right. exists j, e. split_and!; try done; [lia |]. split; [| done]. rewrite Hb, decide_True by lia. done.
        * left. pose proof (Hthr t Ht) as Htt. rewrite Hp in Htt. by destruct Htt as ((q & -> & _) & _).
    - intros j e Hj He. rewrite Hb, decide_False in He by lia. by apply elem_of_nil in He.
    - intros t Ht. done.
  Qed.

  Lemma inv2_step s s' : inv1 s → inv2 s → step s s' → inv2 s'.
  Proof.
    intros Hinv1 Hinv Hs. pose proof (inv1_ccv' s Hinv1) as Hccv.
    pose proof (inv1_ep_cseq s Hinv1 Hinv) as Hepc.
    pose proof (i_pm W uexec rexec N NR line NL s Hinv1) as Hpm.
    destruct Hs as [s t u Ht Hp | s t q Ht Hp | s t i u own s0 c0 Hp Hcc Hh
      | s t i u own s0 c0 ap rs Hp Hap | s t i u own s0 c0 ap rs r ws0 Hp Hap Hown Hws
      | s t i u own s0 c0 ap rs r gs Hp Hown | s t i u own s0 c0 ap rs Hp | s t i u own Hp
      | s t i u r s0 c0 ap rs j bat ws lg o i' fl Hp Hj Hreq Hap
      | s t i u r s0 c0 ap rs j bat ws lg Hp Hj Hskip
      | s t i u r s0 c0 ap rs j bat ws lg Hp
      | s t i u r s0 c0 ap rs bat ws lg Hp Hcc
      | s t i u r s0 c0 ap rs bat ws lg Hp Hcc
      | s t i s1 c0 v HF Hp | s t i s1 c0 v HF Hp Hr | s t i s1 c0 v HF Hp Hr
      | s t i s1 c0 v Hp
      | s t i o c c0 Hp Hcc Happ | s t i u c c0 Hp Hcc Happ
      | s t i o c v dir HF Hp Hc | s t i o c v dir HF Hp
      | s t i q pub c c0 Hp Hcc Hh | s t i q way Hp | s keep Hok];
      try (assert (t < N) as Ht by (apply (inv1_busy W uexec rexec N NR NR_pos line NL line_cc s t Hinv1); by rewrite Hp)).
    - (* Announce *)
      pose proof (inv2_invoke s t (Upd u) Hinv1 Hinv Ht Hp) as H. exact H.
    - (* BeginRead *)
      pose proof (inv2_invoke s t (Rd q) Hinv1 Hinv Ht Hp) as H. exact H.
    - (* Snapshot *)
      thr2 Hinv t Ht Hp H2. rewrite Hccv in Hcc. injection Hcc as <- <-.
      refine (inv2_pc s _ t (THave i u own (cseq s) (rep_at (ch s) (cseq s)) (app_at (ch s) (cseq s))
                                  (res_at (ch s) (cseq s))) Hinv Ht _ _ _ _ _ _ _ _);
        [done | done | done | done | by rewrite Hp | by rewrite Hp | intros; by right |].
      done.
    - (* Applied *)
      thr2 Hinv t Ht Hp H2. destruct H2 as ((Hi & Hl & Hr & Hpt) & Hep0 & -> & ->).
      pose proof (i_thr W uexec rexec N NR line NL s Hinv1 t Ht) as H1. rewrite Hp in H1. destruct H1 as [_ Hs0].
      refine (inv2_pc s _ t (TDur i (Upd u) s0 (res_at (ch s) s0 t) false) Hinv Ht _ _ _ _ _ _ _ _);
        [by destruct own | by destruct own | by destruct own | by destruct own | by rewrite Hp
        | by rewrite Hp | | ].
      + intros o i1 fl Hr1 _. left. unfold req_is in Hr. cbn in Hr. rewrite Hr in Hr1. injection Hr1 as <- <- <-.
        etrans; [apply Hap |]. apply (app_mono s s0 (cseq s) t); done || lia.
      + cbn [tinv2 vw vep vx vch vpl vreq]. split_and!; try done.
        destruct (applied_entry s t i (Upd u) s0 Hinv Ht ltac:(lia) Hl Hr Hap) as (k & e & Hk & He & Ho & Hv).
        exists k, e. split_and!; try done; lia.
    - (* Prepare *)
      thr2 Hinv t Ht Hp H2. destruct H2 as (Hu & Hep0 & -> & ->).
      refine (inv2_pc s _ t (TSim i u r s0 c0 (app_at (ch s) s0) (res_at (ch s) s0) 0 [] [] []) Hinv Ht
                _ _ _ _ _ _ _ _); [done | done | by rewrite mark_set_rep | done | by rewrite Hp
        | by rewrite Hp | intros; by right |].
      cbn [tinv2 vw vep vx vch vpl vreq]. split_and!; [done | done | done |]. unfold sim_ok. split_and!.
      + lia.
      + intros. lia.
      + intros. done.
      + intros x _. done.
      + intros x Hx. lia.
      + constructor.
      + intros e He. by apply elem_of_nil in He.
    - (* PrepFail *)
      thr2 Hinv t Ht Hp H2. destruct H2 as (Hu & _).
      refine (inv2_pc s _ t (TAnn i u (Some r)) Hinv Ht _ _ _ _ _ _ _ _);
        [done | done | by rewrite mark_set_rep | done | by rewrite Hp | by rewrite Hp | intros; by right | done].
    - (* Abandon *)
      thr2 Hinv t Ht Hp H2. destruct H2 as (Hu & _).
      refine (inv2_pc s _ t (TAnn i u own) Hinv Ht _ _ _ _ _ _ _ _);
        [done | done | done | done | by rewrite Hp | by rewrite Hp | intros; by right | done].
    - (* GiveUp *)
      thr2 Hinv t Ht Hp H2.
      refine (inv2_pc s _ t (TCollect i (Upd u)) Hinv Ht _ _ _ _ _ _ _ _);
        [by destruct own | by destruct own | by destruct own | by destruct own | by rewrite Hp
        | by rewrite Hp | intros; by right | done].
    - (* ScanRun *)
      thr2 Hinv t Ht Hp H2. destruct H2 as ((Hi & Hl & Hr & Hpt) & Hep0 & Hlt0 & Hsim).
      pose proof (i_thr W uexec rexec N NR line NL s Hinv1 t Ht) as H1. rewrite Hp in H1.
      destruct H1 as (_ & Hs0 & _).
      destruct (j_req s Hinv j o i' fl Hreq) as (_ & Hinvk & Hpre & _ & Hrd & _).
      refine (inv2_pc s _ t _ Hinv Ht _ _ _ _ _ _ _ _); [done | done | by rewrite mark_set_rep | done
        | by rewrite Hp | by rewrite Hp | intros; by right |].
      cbn [tinv2 vw vep vx vch vpl vreq]. split_and!; try done.
      apply (sim_ok_run (vw s)); try done.
      + intros ->. unfold req_is in Hr. cbn in Hr. rewrite Hr in Hreq. by injection Hreq as _ ->.
      + apply (j_app s Hinv s0 j); [lia | done].
    - (* ScanSkip *)
      thr2 Hinv t Ht Hp H2. destruct H2 as ((Hi & Hl & Hr & Hpt) & Hep0 & Hlt0 & Hsim).
      pose proof (i_thr W uexec rexec N NR line NL s Hinv1 t Ht) as H1. rewrite Hp in H1.
      destruct H1 as (_ & Hs0 & _).
      refine (inv2_pc s _ t _ Hinv Ht _ _ _ _ _ _ _ _); [done | done | done | done
        | by rewrite Hp | by rewrite Hp | intros; by right |].
      cbn [tinv2 vw vep vx vch vpl vreq]. split_and!; try done.
      apply (sim_ok_skip (vw s)); try done.
      + intros ->. by apply (Hskip (Upd u) i true).
      + apply (j_app s Hinv s0 j); [lia | done].
    - (* Rollback *)
      thr2 Hinv t Ht Hp H2. destruct H2 as (Hu & _).
      refine (inv2_pc s _ t (TAnn i u (Some r)) Hinv Ht _ _ _ _ _ _ _ _);
        [done | done | by rewrite mark_set_rep | done | by rewrite Hp | by rewrite Hp | intros; by right | done].
    - (* CasSucc *)
      by apply (inv2_cassucc s t i u r s0 c0 ap rs bat ws lg).
    - (* CasFail *)
      thr2 Hinv t Ht Hp H2. destruct H2 as (Hu & _).
      refine (inv2_pc s _ t (TAnn i u (Some r)) Hinv Ht _ _ _ _ _ _ _ _);
        [done | done | | done | by rewrite Hp | by rewrite Hp | intros; by right | done].
      rewrite mark_set_rep. apply mark_flush.
    - (* PersistFix *)
      thr2 Hinv t Ht Hp H2.
      refine (inv2_pc s _ t (TRelease i s1 c0 v) Hinv Ht _ _ _ _ _ _ _ _);
        [done | done | apply mark_flush | done | by rewrite Hp | by rewrite Hp | | done].
      intros o i1 fl Hr1 _. left. destruct H2 as (o' & e & Hi & _ & Hr & _ & Hep1 & He & _).
      unfold req_is in Hr. cbn in Hr. rewrite Hr in Hr1. injection Hr1 as <- <- <-.
      pose proof (i_thr W uexec rexec N NR line NL s Hinv1 t Ht) as H1. rewrite Hp in H1.
      destruct H1 as (Hs1 & _). apply (fent_applied s s1 i e t o'); [done | done | lia | done | done].
    - discriminate HF.
    - discriminate HF.
    - (* Release *)
      pose proof (i_thr W uexec rexec N NR line NL s Hinv1 t Ht) as H1. rewrite Hp in H1.
      destruct H1 as ((Hs1 & _) & Hsm).
      apply (inv2_ret s _ t i s1 v Hinv1 Hinv Ht); try done; [lia | left; by exists s1, c0].
    - (* Collect *)
      thr2 Hinv t Ht Hp H2. destruct H2 as (Hi & Hl & Hr & Hpt). rewrite Hccv in Hcc. injection Hcc as <- _.
      refine (inv2_pc s _ t _ Hinv Ht _ _ _ _ _ _ _ _); [done | done | done | done | by rewrite Hp
        | by rewrite Hp | | ].
      + intros o1 i1 fl Hr1 _. left. unfold req_is in Hr. cbn in Hr. rewrite Hr in Hr1.
        by injection Hr1 as <- <- <-.
      + cbn [tinv2 vw vep vx vch vpl vreq]. split_and!; try done.
        destruct (applied_entry s t i o (cseq s) Hinv Ht ltac:(lia) Hl Hr Happ) as (k & e & Hk & He & Ho & Hv).
        exists k, e. split_and!; try done; lia.
    - (* CollectRetry *)
      thr2 Hinv t Ht Hp H2.
      refine (inv2_pc s _ t (TAnn i u None) Hinv Ht _ _ _ _ _ _ _ _);
        [done | done | done | done | by rewrite Hp | by rewrite Hp | intros; by right | done].
    - (* DurableSkip *)
      pose proof (i_thr W uexec rexec N NR line NL s Hinv1 t Ht) as H1. rewrite Hp in H1.
      pose proof (i_wm W uexec rexec N NR line NL s Hinv1).
      apply (inv2_ret s s t i c v Hinv1 Hinv Ht); try done; [lia | right; by exists o, dir].
    - (* DurableSync *)
      pose proof (i_thr W uexec rexec N NR line NL s Hinv1 t Ht) as H1. rewrite Hp in H1.
      pose proof (inv1_sync_mark W uexec rexec N NR line NL line_lt s t Hinv1) as Hsm.
      apply (inv2_ret s _ t i c v Hinv1 Hinv Ht); try done.
      + apply mark_flush.
      + unfold RedoPTMPx.mark_cc. cbn [mem]. cbn in H1. lia.
      + right. by exists o, dir.
    - (* DirectRead *)
      by apply (inv2_direct s t i q pub c c0).
    - (* PublishRead *)
      by apply inv2_publish.
    - (* Crash *)
      by apply inv2_crash.
  Qed.

  Lemma inv2_init : inv2 (init_state W NL).
  Proof.
    assert (∀ k, batch_at [link0 W] k = []) as Hb by (intros [| [|]]; done).
    split; cbn [init_state mem req ch rhead rlock dirty ring wm pc xh nid pl ep done].
    - apply prefix_ok_nil.
    - constructor.
    - done.
    - lia.
    - done.
    - intros i t o Hi. by apply elem_of_nil in Hi.
    - intros i t o t' o' Hi. by apply elem_of_nil in Hi.
    - intros e (k & _ & He). rewrite Hb in He; by apply elem_of_nil in He.
    - intros k. rewrite Hb. constructor.
    - intros k1 k2 e1 e2 He1. rewrite Hb in He1; by apply elem_of_nil in He1.
    - intros e (k & _ & He). rewrite Hb in He; by apply elem_of_nil in He.
    - intros k t Hk Ht. left. split; [by assert (k = 0) as -> by (unfold RedoPTMPx.cseq in Hk; simpl in Hk; lia) |].
      intros e (k' & _ & He). rewrite Hb in He; by apply elem_of_nil in He.
    - done.
    - intros i o v Hx. by apply elem_of_nil in Hx.
    - intros k e _ He. rewrite Hb in He; by apply elem_of_nil in He.
    - done.
  Qed.

  Lemma inv12_reachable s : reachable s → inv1 s ∧ inv2 s.
  Proof.
    induction 1 as [| s s' _ [IH1 IH2] Hs].
    - split; [apply (inv1_init W uexec rexec N NR NR_pos line NL line_cc) | apply inv2_init].
    - split; [| by apply (inv2_step s s')].
      by apply (inv1_step W uexec rexec N NR RS NR_pos line NL line_lt line_cc line_rep true true s).
  Qed.

  (** ** The theorems *)

  (** The histories of Redo-PTM (the fixed protocol), update and read-only
      transactions, crashes and null recovery included, are durably
      linearizable ([Core/DurableLin.v]) for the sequential specification
      of the object. *)
  Theorem redo_px_durably_linearizable s :
    reachable s → durably_linearizable spec (erase (xh s)).
  Proof.
    intros Hr. destruct (inv12_reachable s Hr) as [_ H2]. exists (xh s). split; [done | apply H2 |].
    apply (runs_to_runs _ _ _ (j_run s H2)).
  Qed.

  (** [ExactlyOnce]: a transaction is in one transition at most, once. *)
  Theorem redo_px_exactly_once s k1 k2 e1 e2 :
    reachable s → e1 ∈ batch_at (ch s) k1 → e2 ∈ batch_at (ch s) k2 → e_id e1 = e_id e2 → k1 = k2 ∧ e1 = e2.
  Proof.
    intros Hr He1 He2 Hid. destruct (inv12_reachable s Hr) as [_ H2].
    pose proof (j_once s H2 k1 k2 e1 e2 He1 He2 Hid) as <-. split; [done |].
    by apply (nodup_map_inj e_id (batch_at (ch s) k1)); [apply H2 | | |].
  Qed.

  (** [CompletedDurable], as TLC checks it: an update transaction that
      returned [v] was committed, with result [v], in a transition every
      crash image keeps. *)
  Theorem redo_px_returned_durable s keep i t u v :
    reachable s → Return i v ∈ erase (xh s) → Invoke i t (Upd u) ∈ erase (xh s) → p_crash_ok (mem s) keep →
    ∃ k e, k ≤ img line s keep 0 ∧ e ∈ batch_at (ch s) k ∧ e_id e = i ∧ e_op e = Upd u ∧ e_val e = v.
  Proof.
    intros Hr Hret Hinv Hok. destruct (inv12_reachable s Hr) as [H1 H2].
    apply elem_of_erase, elem_of_list_split in Hret as (l1 & l2 & Hxh).
    pose proof (j_ok s H2) as Hpo. rewrite Hxh in Hpo.
    replace (l1 ++ XE (Return i v) :: l2) with ((l1 ++ [XE (Return i v)]) ++ l2) in Hpo by (by rewrite <- app_assoc).
    apply prefix_ok_app_inv_l, prefix_ok_snoc in Hpo as [Hpo (o & Hx)].
    apply elem_of_list_split in Hx as (m1 & m2 & Hl1).
    assert (prefix_ok point_ok (m1 ++ [XL i o v])) as Hpo'.
    { rewrite Hl1 in Hpo. replace (m1 ++ XL i o v :: m2) with ((m1 ++ [XL i o v]) ++ m2) in Hpo by (by rewrite <- app_assoc).
      by apply prefix_ok_app_inv_l in Hpo. }
    apply prefix_ok_snoc in Hpo' as [_ [(t' & Hi') _]].
    assert (Invoke i t' o ∈ erase (xh s)) as Hi2.
    { rewrite Hxh, Hl1, !erase_app. apply elem_of_app. left. apply elem_of_app. by left. }
    destruct (inv_same s i t' o t (Upd u) H2 Hi2 Hinv) as [_ ->].
    assert (XL i (Upd u) v ∈ xh s) as Hx.
    { rewrite Hxh, Hl1. apply elem_of_app. left. apply elem_of_app. right. by left. }
    destruct (j_xl s H2 i (Upd u) v Hx) as [[] | (k & e & Hk & (He & Hid & _) & Ho & Hv)].
    exists k, e. split_and!; try done.
    destruct (inv1_image W uexec rexec N NR NR_pos line NL line_lt line_cc s keep H1 Hok) as (H0 & _ & Hm).
    unfold img. rewrite H0. pose proof (j_plm s H2). lia.
  Qed.
  (** ** RedoTimed-PTM: the window as a schedule constraint

      Its theorems are corollaries of the ones above: the constraint only
      removes steps.  Time is abstracted: the window's closing is an
      arbitrary oracle, so they hold for every clock and window length. *)

  (** RedoTimed-PTM ([redo/variant.rs] [lock_combined], seed §5 "Timed
      variant") locks, while a thread's window is open, only [combs[0]] or
      [combs[1]] ([lock_first_two]), and any replica once it has closed
      ([lock_any]); it backs off and gives up when [curComb] moves, which
      the model allows at any point ([Abandon], [GiveUp]).  Time is not
      modelled: [closed s t] says that thread [t]'s window has closed in
      state [s], an arbitrary oracle (the code's [now_ns() >= deadline]).
      A step that takes the lock of a free replica [r] for a thread [t]
      ([Prepare], [PrepFail] with no replica kept) is allowed only if
      [r < 2] or [t]'s window has closed. *)
  Definition takes_lock (s s' : rstate) (t r : nat) : Prop :=
    rlock s r = Free ∧ rlock s' r = Owned t.

  Inductive timed_reachable (closed : rstate → nat → Prop) : rstate → Prop :=
    | timed_init : timed_reachable closed (init_state W NL)
    | timed_step s s' :
        timed_reachable closed s → step s s' →
        (∀ t r, takes_lock s s' t r → r < 2 ∨ closed s t) →
        timed_reachable closed s'.

  (** The constraint only removes steps: every state RedoTimed-PTM reaches,
      for any window, Redo-PTM's model reaches. *)
  Lemma timed_reachable_reachable closed s : timed_reachable closed s → reachable s.
  Proof.
    induction 1 as [| s s' _ IH Hs _]; [constructor | by eapply reachable_step].
  Qed.

  Theorem redotimed_px_durably_linearizable closed s :
    timed_reachable closed s → durably_linearizable spec (erase (xh s)).
  Proof.
    intros Hr. by apply redo_px_durably_linearizable, (timed_reachable_reachable closed).
  Qed.

  Theorem redotimed_px_exactly_once closed s k1 k2 e1 e2 :
    timed_reachable closed s → e1 ∈ batch_at (ch s) k1 → e2 ∈ batch_at (ch s) k2 →
    e_id e1 = e_id e2 → k1 = k2 ∧ e1 = e2.
  Proof.
    intros Hr. by apply redo_px_exactly_once, (timed_reachable_reachable closed).
  Qed.

  Lemma p_load_empty x : p_load line (pmem_empty NL) x = 0.
  Proof.
    unfold p_load, mem_visible, line_hist; simpl.
    destruct (replicate NL [] !! line x) eqn:E; [by apply lookup_replicate in E as [-> _] | done].
  Qed.

  (** Not vacuous: with a window that never closes, thread 0's first update
      takes the lock of replica 1 (one of the first two) and goes on to
      simulate: RedoTimed-PTM's model has runs past the lock. *)
  Lemma redotimed_window_not_vacuous (u : UOp) :
    0 < N → 1 < NR →
    ∃ s, timed_reachable (λ _ _, False) s ∧ rlock s 1 = Owned 0.
  Proof.
    intros HN HNR.
    set (s0 := (init_state W NL : rstate)).
    assert (∀ s s', rlock s' = rlock s → ∀ t r, takes_lock s s' t r → r < 2 ∨ False) as Hkeep.
    { intros s s' Heq t r [Hf Ho]. rewrite Heq, Hf in Ho. done. }
    assert (ccv (mem s0) = (0, 0)) as Hcc.
    { unfold ccv, s0, init_state; simpl. by rewrite !p_load_empty. }
    pose proof (Announce W uexec rexec N NR RS line true true s0 0 u HN eq_refl) as H1.
    set (s1 := RState _ _ _ _ _ _ _ _ _ _ _ _ _ _) in H1.
    pose proof (Snapshot W uexec rexec N NR RS line true true s1 0 0 u None 0 0
                  eq_refl Hcc eq_refl) as H2.
    set (s2 := RState _ _ _ _ _ _ _ _ _ _ _ _ _ _) in H2.
    assert (ccv (mem s2) = (0, 0)) as Hcc2 by exact Hcc.
    pose proof (Prepare W uexec rexec N NR RS line true true s2 0 0 u None 0 0
                  (app_at (ch s0) 0) (res_at (ch s0) 0) 1
                  (map (λ w, (w, p_load line (mem s2) (rloc W 0 w))) (seq 0 W))
                  eq_refl ltac:(unfold s0, init_state, app_at; simpl; lia) (or_intror (conj eq_refl (conj HNR eq_refl)))
                  (or_introl (conj Hcc2 eq_refl))) as H3.
    eexists. split.
    - eapply timed_step; [eapply timed_step; [eapply timed_step; [constructor | exact H1 |] | exact H2 |]
                         | exact H3 |].
      + apply Hkeep. reflexivity.
      + apply Hkeep. reflexivity.
      + intros t r [Hf Ho]. left. destruct (decide (r = 1)) as [-> | Hr]; [lia |].
        exfalso. simpl in Ho. unfold upd in Ho. rewrite decide_False in Ho by done.
        simpl in Hf. rewrite Hf in Ho. done.
    - simpl. unfold upd. by rewrite decide_True.
  Qed.
End redo_px_lin.

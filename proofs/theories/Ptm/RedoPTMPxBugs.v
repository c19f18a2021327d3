(** * Redo-PTM as written loses durability: findings F1 and F4 in the Px model

    Two executions of [RedoPTMPx.v]'s model, each with the other finding's
    fix on, replayed step by step by [frun] (every step is a [step], by
    [fstep_sound]) and checked by computation, each ending in a state one
    of whose crash images Px86 allows breaks a durability property TLC
    checks ([specs/ptm/RedoPTM.tla]; the counterexamples of
    [specs/ptm/mutants/RedoAsWrittenHelperRing.cfg] and
    [RedoAsWrittenUndoPwbs.cfg], [specs/ptm/README.md] "Findings").  The
    fixed protocol keeps both properties in every execution
    ([redo_px_completed_durable], [redo_px_durable_image_consistent]).

    The instance: 2 threads, 3 replicas, 2 ring slots, 2 words [x0], [x1];
    [Inc w] ([x_w]++, returns the old value), [IncIf] ([x0]++ if [x1 = 0]:
    its stores depend on the state, returns the old [x0]), [Get w]; every
    word of every replica in its own line, [curComb] in line 0.

    - [redo_px_f1_as_written_loses_return] (F1, Algorithm 3 L17 and
      L32–L33): thread 0 commits [Inc 0] at seq 1 (L30); thread 1 reads
      [curComb] and puts seq 1 in the ring (L17, no [pwb]); thread 0 finds
      the ring holding seq 1 (L33), skips L34–L35 and returns 0.  The
      crash image that keeps [curComb]'s line at its mark recovers seq 0:
      the returned transaction is lost ([CompletedDurable]).
    - [redo_px_f4_as_written_image_inconsistent] (F4, L38): thread 1
      commits [Inc 1] (seq 1, replica 2) while thread 0 simulates [IncIf]
      and [Inc 1] on replica 1 ([x0 := 1], written back by L26 and fenced by
      the CAS); thread 0's CAS fails and L38 undoes both stores, neither
      written back; thread 0 replays seq 1 into replica 1, where [IncIf]
      now stores nothing, and installs it (seq 2).  The crash image that
      keeps [curComb] at seq 2 and replica 1's [x0] line at its mark holds
      [x0 = 1]; seq 2's object has [x0 = 0] ([DurableImageConsistent]).
    - [redo_px_f1_as_written_not_durably_linearizable] (F1 in the history):
      after that crash, thread 0 runs [Inc 0] again on the recovered state
      and it also returns 0.  The model's history ([Invoke]s of [Inc 0] by
      ops 0 and 1, [Return 0 0], [Crash], [Invoke 2], [Return 2 0]) has no
      linearization in [Core/DurableLin.v]'s sense: two [Inc 0]s that both
      return 0 fit no sequential order. *)
From stdpp Require Import base list list_numbers decidable sets.
From Coq Require Import Lia.
From perdure.Core Require Import History DurableLin Px86 PxPersist.
From perdure.Ptm Require Import RedoPTMPx.

(** ** The instance *)

Inductive cop := Inc (w : nat) | IncIf.
Inductive gop := Get (w : nat).

Definition word (σ : list nat) (w : nat) : nat := default 0 (σ !! w).

Definition cexec (u : cop) (σ : list nat) : list (nat * nat) * nat :=
  match u with
  | Inc w => ([(w, S (word σ w))], word σ w)
  | IncIf => if decide (word σ 1 = 0) then ([(0, S (word σ 0))], word σ 0) else ([], word σ 0)
  end.
Definition cread (q : gop) (σ : list nat) : nat := match q with Get w => word σ w end.

(** Locations 0 and 1 ([curComb]) in line 0, each replica word (2 .. 7) in
    a line of its own. *)
Definition cline (x : nat) : nat := if decide (x < 2) then 0 else if decide (x < 8) then x - 1 else 1.

Notation W := 2 (only parsing).
Notation NT := 2 (only parsing).
Notation NR := 3 (only parsing).
Notation RS := 2 (only parsing).
Notation NL := 7 (only parsing).

Lemma cline_lt x : cline x < NL.
Proof. unfold cline. repeat case_decide; lia. Qed.
Lemma cline_cc : cline 1 = cline 0.
Proof. done. Qed.
Lemma cline_rep r w : r < NR → w < W → cline (rloc W r w) ≠ cline 0.
Proof. unfold cline, rloc. intros. repeat case_decide; lia. Qed.

Definition creach (F1 F4 : bool) : rstate → Prop := reachable W cexec cread NT NR RS cline NL F1 F4.
Definition crun (F1 F4 : bool) : rstate → list label → option rstate := frun W cexec cread NT NR RS cline F1 F4.
Definition cinit : rstate := init_state (UOp := cop) (ROp := gop) (Val := nat) W NL.

Lemma crun_reachable F1 F4 ls s : crun F1 F4 cinit ls = Some s → creach F1 F4 s.
Proof. intros H. eapply frun_reachable; [lia | done | apply reachable_init | exact H]. Qed.

(** From a reachable state (stated on [crun] itself, so that the kernel never
    unfolds a concrete run). *)
Lemma crun_reachable_from F1 F4 s ls s' :
  crun F1 F4 s ls = Some s' → creach F1 F4 s → creach F1 F4 s'.
Proof. intros H Hs. eapply frun_reachable; [lia | done | exact Hs | exact H]. Qed.

(** A crash choice is checked by computation. *)
Definition crash_okb (p : pmem) (keep : nat → nat) : bool :=
  forallb (λ L, bool_decide (mark (p_mem p) L ≤ keep L ≤ length (line_hist (p_mem p) L)))
    (seq 0 (length (m_lines (p_mem p)))).

Lemma crash_okb_sound p keep : crash_okb p keep = true → p_crash_ok p keep.
Proof.
  intros H L HL. unfold crash_okb in H. rewrite forallb_forall in H.
  apply (bool_decide_eq_true _), H. apply elem_of_list_In, elem_of_seq. lia.
Qed.

(** ** F1: a helper's ring CAS is taken as a persisted [curComb] *)

Definition f1_trace : list (label (UOp := cop) (ROp := gop)) :=
  [ LInvoke 0 (Inc 0); LSnapshot 0; LPrepare 0 1 true; LScan 0; LScan 0; LCas 0;   (* L2–L30 *)
    LInvoke 1 (Inc 0); LSnapshot 1;                                              (* L8–L17 *)
    LPersist 0; LRelease 0 ].                                                    (* L32–L33, L36–L37 *)

Definition f1_final : rstate := default cinit (crun false true cinit f1_trace).

Lemma f1_run : crun false true cinit f1_trace = Some f1_final.
Proof. by vm_compute. Qed.

(** The crash that keeps every line at its mark. *)
Definition f1_keep (L : nat) : nat := mark (p_mem (mem f1_final)) L.

Theorem redo_px_f1_as_written_loses_return :
  creach false true f1_final ∧ p_crash_ok (mem f1_final) f1_keep ∧
  XE (Return 0 0) ∈ xh f1_final ∧ (0, 1) ∈ done f1_final ∧
  (∃ e, e ∈ batch_at (ch f1_final) 1 ∧ e_id e = 0) ∧
  img cline f1_final f1_keep 0 = 0 ∧ img cline f1_final f1_keep 1 = 0.
Proof.
  split; [by eapply crun_reachable, f1_run |]. split; [apply crash_okb_sound; by vm_compute |].
  split_and!.
  - vm_compute. set_solver.
  - vm_compute. set_solver.
  - vm_compute. eexists. split; [left | done].
  - by vm_compute.
  - by vm_compute.
Qed.

(** ** F4: the undo's stores are never written back *)

Definition f4_trace : list (label (UOp := cop) (ROp := gop)) :=
  [ LInvoke 1 (Inc 1); LSnapshot 1; LPrepare 1 2 true; LScan 1;                    (* thread 1 *)
    LInvoke 0 IncIf; LSnapshot 0; LPrepare 0 1 true; LScan 0; LScan 0;             (* thread 0 *)
    LScan 1; LCas 1;                                                               (* seq 1 *)
    LCas 0;                                                                        (* L30 fails, L38 *)
    LPersist 1; LRelease 1;
    LSnapshot 0; LPrepare 0 1 false; LScan 0; LScan 0; LCas 0 ].                   (* seq 2 *)

Definition f4_final : rstate := default cinit (crun true false cinit f4_trace).

Lemma f4_run : crun true false cinit f4_trace = Some f4_final.
Proof. by vm_compute. Qed.

(** The crash that keeps replica 1's [x0] line (line 3) at its mark and every
    other line whole. *)
Definition f4_keep (L : nat) : nat :=
  if decide (L = cline (rloc W 1 0)) then mark (p_mem (mem f4_final)) L
  else length (line_hist (p_mem (mem f4_final)) L).

Theorem redo_px_f4_as_written_image_inconsistent :
  creach true false f4_final ∧ p_crash_ok (mem f4_final) f4_keep ∧
  img cline f4_final f4_keep 0 = 2 ∧ img cline f4_final f4_keep 1 = 1 ∧
  img_content W cline f4_final f4_keep 1 = [1; 1] ∧ obj_at W (ch f4_final) 2 = [0; 1].
Proof.
  split; [by eapply crun_reachable, f4_run |]. split; [apply crash_okb_sound; by vm_compute |].
  split_and!; by vm_compute.
Qed.

(** ** F1 in the history: the lost return, a crash, and a repeated result *)

(** After [f1_final], the crash that keeps every line at its mark recovers
    seq 0; thread 0 runs [Inc 0] again and it returns 0 too. *)
Definition f1h_start : rstate := crash_state NT RS cline f1_final f1_keep.
Definition f1h_trace : list (label (UOp := cop) (ROp := gop)) :=
  [ LInvoke 0 (Inc 0); LSnapshot 0; LPrepare 0 1 true; LScan 0; LScan 0; LCas 0; LPersist 0; LRelease 0 ].
Definition f1h_final : rstate := default cinit (crun false true f1h_start f1h_trace).

Lemma f1h_run : crun false true f1h_start f1h_trace = Some f1h_final.
Proof. by vm_compute. Qed.

Lemma f1h_history :
  erase (xh f1h_final) =
    [Invoke 0 0 (Upd (Inc 0)); Invoke 1 1 (Upd (Inc 0)); Return 0 0; History.Crash;
     Invoke 2 0 (Upd (Inc 0)); Return 2 0].
Proof. by vm_compute. Qed.

Notation cspec := (spec W cexec cread).

(** In a run of [Inc 0]s, the [n]-th returns the initial [x0] plus [n]. *)
Lemma runs_inc0 σ l :
  length σ = 2 → runs cspec σ l → (∀ p, p ∈ l → p.1 = Upd (Inc 0)) →
  ∀ n o v, l !! n = Some (o, v) → v = word σ 0 + n.
Proof.
  intros Hlen Hr. revert Hlen. induction Hr as [σ | σ o v σ' l Hs Hr IH]; intros Hlen Hall n o' v' Hn;
    [done |].
  assert (o = Upd (Inc 0)) as -> by (apply (Hall (o, v)); by left).
  destruct Hs as [Hv ->]. simpl in Hv. subst v.
  destruct n as [| n]; simpl in Hn.
  - injection Hn as _ <-. lia.
  - assert (word (apply_ws [(0, S (word σ 0))] σ) 0 = S (word σ 0)) as Hw.
    { unfold word, apply_ws. simpl. rewrite list_lookup_insert by lia. done. }
    rewrite (IH ltac:(unfold apply_ws; simpl; by rewrite insert_length) ltac:(intros p Hp; apply Hall; by right) n o' v' Hn).
    change (run_op cexec cread (Upd (Inc 0)) σ) with ([(0, S (word σ 0))], word σ 0).
    cbn [fst]. rewrite Hw. lia.
Qed.

(** F1 as written: a reachable execution whose history is not durably
    linearizable (Core/DurableLin.v's [durably_linearizable] against the
    model's sequential specification). *)
Theorem redo_px_f1_as_written_not_durably_linearizable :
  creach false true f1h_final ∧ ¬ durably_linearizable cspec (erase (xh f1h_final)).
Proof.
  split.
  { apply (crun_reachable_from _ _ _ _ _ f1h_run).
    eapply reachable_step; [by eapply crun_reachable, f1_run |].
    apply Crash, crash_okb_sound. by vm_compute. }
  rewrite f1h_history. intros (xh' & [Herase Hok Hacc]).
  set (h := [Invoke 0 0 (Upd (Inc 0)); Invoke 1 1 (Upd (Inc 0)); Return 0 0; History.Crash;
             Invoke 2 0 (Upd (Inc 0)); Return 2 0] : history (op (UOp := cop) (ROp := gop)) nat) in *.
  (* every point's operation is invoked: an [Inc 0] *)
  assert (∀ i o v, XL i o v ∈ xh' → o = Upd (Inc 0)) as Hop.
  { intros i o v Hin. apply elem_of_list_split in Hin as (a & b & Ha).
    pose proof Hok as Hok'. rewrite Ha in Hok'.
    replace (a ++ XL i o v :: b) with ((a ++ [XL i o v]) ++ b) in Hok' by (by rewrite <- app_assoc).
    apply prefix_ok_app_inv_l, prefix_ok_snoc in Hok' as [_ [(t & Ht) _]].
    assert (Invoke i t o ∈ h) as Hh.
    { rewrite <- Herase, Ha, erase_app. apply elem_of_app. by left. }
    unfold h in Hh. repeat (apply elem_of_cons in Hh as [Hh | Hh]; [by inversion Hh |]). by apply elem_of_nil in Hh. }
  (* every return has a point with its value *)
  assert (∀ i v, Return i v ∈ h → ∃ o, XL i o v ∈ xh') as Hpt.
  { intros i v Hin. rewrite <- Herase in Hin. apply elem_of_erase, elem_of_list_split in Hin as (a & b & Ha).
    pose proof Hok as Hok'. rewrite Ha in Hok'.
    replace (a ++ XE (Return i v) :: b) with ((a ++ [XE (Return i v)]) ++ b) in Hok' by (by rewrite <- app_assoc).
    apply prefix_ok_app_inv_l, prefix_ok_snoc in Hok' as [_ (o & Ho)]. exists o. rewrite Ha.
    apply elem_of_app. by left. }
  destruct (Hpt 0 0) as (o0 & H0); [unfold h; apply elem_of_list_In; simpl; intuition |].
  destruct (Hpt 2 0) as (o2 & H2); [unfold h; apply elem_of_list_In; simpl; intuition |].
  apply elem_of_points, elem_of_list_lookup in H0 as (n0 & Hn0).
  apply elem_of_points, elem_of_list_lookup in H2 as (n2 & Hn2).
  assert (∀ p, p ∈ effects (points xh') → p.1 = Upd (Inc 0)) as Hall.
  { intros p Hp. apply elem_of_list_fmap in Hp as ([[i o] v] & -> & Hp). simpl.
    apply elem_of_points in Hp. by apply (Hop i o v). }
  assert (∀ n i o v, points xh' !! n = Some (i, o, v) → v = n) as Hval.
  { intros n i o v Hn. pose proof (runs_inc0 (init_obj W) _ eq_refl Hacc Hall n o v) as Hv.
    rewrite Hv; [done |]. unfold effects. rewrite list_lookup_fmap, Hn. done. }
  pose proof (Hval _ _ _ _ Hn0) as <-. pose proof (Hval _ _ _ _ Hn2) as <-.
  rewrite Hn0 in Hn2. by injection Hn2.
Qed.

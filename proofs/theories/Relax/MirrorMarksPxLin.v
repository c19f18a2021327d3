(** * Mirror's pointer field with recovery marks and the M2 fix: durably linearizable

    [MirrorMarksPx.v] models ONE pointer field of RELAX's
    [MarkablePatomicPointer] (seed 002: Mirror's CAS, Algorithm 4.1, with
    the M1 retry; Algorithm 6.4's unmarking load; Algorithm 6.3's
    [recoverField] with its recovery marks), refutes finding M2 there (the
    printed L44 and the code's L44-once) and proves state-level facts of
    the fixed mode [Fix] (L44, then [Space::finish_dram_half]).  This file
    proves the fixed mode durably linearizable over histories: every run of
    [kstep Fix] from [kinit v0 q0 m0] (right after the field's recovery:
    NVMM [(v0, q0)], DRAM the same pair, marked or not) is paired with a
    ghost history with linearization points ([gstep]), and those histories
    are durably linearizable ([Core/DurableLin.v]) for [MirrorPxLin.v]'s
    register [reg v0] (load returns the value; CAS(e, n) returns the value
    it found and installs [n] iff it was [e]; the model has no store).
    Rust: [impl/perdure-relax/src/patomic.rs] [Space::mirror_cas],
    [Space::finish_dram_half], [Space::load_ptr],
    [Space::recover_field_ptr], as [MirrorMarksPx.v]'s header maps them.

    The ghost ([gst]): the model's state [gs], the history with its points
    [gx], and [gin], the CAS whose NVMM write (L40) DRAM does not show yet,
    with the point it will take.  [gnext g s' t] is what a step of thread
    [t] to [s'] appends ([gstep]: [t] is the only thread the step changes):
    - the step's history event, [Invoke] or [Return] ([khist]'s new tail);
    - a load's point where its result is fixed (Algorithm 6.4's line 1 on
      an unmarked pointer, or line 2.3's successful unmarking DWCAS): DRAM's
      pointer, which the DWCAS does not change;
    - a failed CAS's point at its L9–L11 read (L30–L33): DRAM then has the
      sequence of the NVMM pair read at L5–L7 ([MirrorMarksPx.v]'s [kinv]),
      so the value it returns is DRAM's pointer;
    - a successful CAS's point when DRAM's sequence reaches its NVMM write:
      its own L44 or [finish_dram_half]'s L501 DWCAS, a helper's L24, or
      line 4 of a [recover_field_ptr] call that read NVMM's pair after the
      L40 (Algorithm 6.3 copies [(mark(V_NV), S_NV)]): whichever DWCAS moves
      DRAM's sequence, [gin] names the writer.  A DWCAS that changes only
      DRAM's mark (Algorithm 6.4's line 2.3, a late line 4 on a recovered
      pair) is no point: the register is DRAM's pointer, without the mark.
    The register's value is DRAM's pointer ([m_run]).  M2 is where this
    needs the fix: a CAS whose L44 fails because a load unmarked DRAM (or a
    late line 4 re-marked it) has not taken effect yet, and only
    [finish_dram_half] (L497–L505) installs its pair before it returns; a
    CAS returns only once DRAM's sequence passed its write ([lpc]'s second
    case, from [kinv]).

    Proved, for every [v0], [q0], [m0], number of threads and schedule:
    - [m2_fix_every_run]: the model's runs from [kinit v0 q0 m0] are exactly
      the ghost runs' ([DurableLin.v]'s [ghost_runs]);
    - [m2_fix_lin_points]: in every ghost run the points are a witness
      ([lin_points]) for the history [khist] and [reg v0];
    - [m2_fix_durably_linearizable]: every run's history is durably
      linearizable for [reg v0] (crash-free here: [durably_linearizable]
      is then linearizability, [DurableLin.v]'s
      [durably_linearizable_iff_linearizable]);
      [m2_fix_reach_durably_linearizable] the same for [MirrorMarksPx.v]'s
      [kreach Fix] (for the run's initial pointer);
    - [m2_fix_not_vacuous]: the schedule of [MirrorMarksPx.v]'s
      [m2_once_not_durably_linearizable] (shuttle's
      [m2_cas_success_then_stale_load]) in the fixed mode, 16 steps:
      thread 0's CAS(1, 2) reads DRAM [(mark 1, 0)] and writes NVMM
      [(2, 1)]; thread 1's load unmarks DRAM and returns 1 (its point
      first); thread 0's L44 fails, [finish_dram_half] re-reads DRAM
      [(1, 0)] and installs [(2, 1)] (the CAS's point), the CAS returns 1;
      thread 1's next load returns 2.
    Everything rests on the invariant [minv] ([minv_init], [minv_step],
    [greach_minv]), which uses [MirrorMarksPx.v]'s [kinv] ([kinv_reach]:
    Mirror's first invariant, each replica's pointer the one its sequence
    was written with, what each thread read) and [hinv] ([hinv_reach]: a
    running operation is invoked, ids unique), not re-proved.  The steps
    that do not depend on the model are [DurableLin.v]'s (e):
    [rtc_preserved] ([greach_minv]), [ghost_runs] ([m2_fix_every_run]),
    [durably_linearizable_erase].

    Abstracts: what [MirrorMarksPx.v] abstracts (one field, no crash after
    the field's recovery, SC atomic steps, unbounded sequence numbers, no
    persistence, no stores or [fetch_add], the failure path's re-load,
    [recover_node]'s effect on other fields, [PATIENCE], liveness).
    [MirrorMarksPxCrash.v] has the same field with full crashes, Algorithm
    6.3's recovery and line-granular persistence. *)
From stdpp Require Import base list relations.
From Coq Require Import Lia.
From perdure.Core Require Import History DurableLin.
From perdure.Relax Require Import MirrorPxLin MirrorMarksPx.

(** ** The ghost *)

Record gst : Type := GSt {
  gs : kst;                             (* the model's state *)
  gx : list (xevent mop nat);           (* the history with its points *)
  gin : option (opid * mop * nat);      (* the write in NVMM not yet in DRAM, its point *)
}.

(** A CAS's expected value: what it returns on success. *)
Definition cas_e (op : mop) : nat := match op with OCas e _ => e | _ => 0 end.

(** The point a step of a thread fixes: a load's result or a failed CAS's
    (the thread moves to a return without a write). *)
Definition fix_pt (x x' : ktst) : list (xevent mop nat) :=
  match x, x' with
  | KOp i op pc, KOp _ _ (KRet r None) => match pc with KRet _ _ => [] | _ => [XL i op r] end
  | _, _ => []
  end.

(** L40's success names the write in flight. *)
Definition new_infl (x x' : ktst) (o : option (opid * mop * nat)) : option (opid * mop * nat) :=
  match x, x' with
  | KOp i op (K40 _ _ _), KOp _ _ (K44 _ _ _) => Some (i, op, cas_e op)
  | _, _ => o
  end.

(** DRAM's sequence moved: it now shows the write in flight. *)
Definition copied (s s' : kst) : bool := bool_decide (ds (kdr s') = S (ds (kdr s))).

(** What a step of thread [t] from [gs g] to [s'] does to the ghost. *)
Definition gnext (g : gst) (s' : kst) (t : nat) : gst :=
  GSt s' (gx g ++ (if copied (gs g) s' then ins (gin g) else []) ++ fix_pt (kth (gs g) t) (kth s' t)
             ++ map XE (drop (length (khist (gs g))) (khist s')))
      (if copied (gs g) s' then None else new_infl (kth (gs g) t) (kth s' t) (gin g)).

(** A ghost step: a step of the model that changes thread [t] only. *)
Inductive gstep : gst → gst → Prop :=
  | g_step g s' t : kstep Fix (gs g) s' → (∀ u, u ≠ t → kth s' u = kth (gs g) u) → gstep g (gnext g s' t).

Definition ginit (v0 q0 : nat) (m0 : bool) : gst := GSt (kinit v0 q0 m0) [] None.

(** Every step changes one thread. *)
Lemma kstep_thread md s s' : kstep md s s' → ∃ t, ∀ u, u ≠ t → kth s' u = kth s u.
Proof.
  destruct 1; eexists; intros u Hu; repeat case_decide; simpl; by rewrite upd_other.
Qed.

Lemma fix_pt_same x : fix_pt x x = [].
Proof. by destruct x as [|? ? [| | | | | | |? []| | |]|]. Qed.
Lemma new_infl_same x o : new_infl x x o = o.
Proof. by destruct x as [|? ? [| | | | | | | | | |]|]. Qed.

(** The ghost does not depend on which unchanged thread a step names. *)
Lemma gnext_thread g s' t t' :
  (∀ u, u ≠ t → kth s' u = kth (gs g) u) → (∀ u, u ≠ t' → kth s' u = kth (gs g) u) →
  gnext g s' t = gnext g s' t'.
Proof.
  intros H H'. destruct (decide (t = t')) as [<-|Hne]; [done |].
  unfold gnext. rewrite (H' t Hne), (H t' (not_eq_sym Hne)), !fix_pt_same, !new_infl_same. done.
Qed.

Lemma rtc_kreach md v0 q0 m0 s : rtc (kstep md) (kinit v0 q0 m0) s → kreach md s.
Proof.
  revert s. apply (rtc_ind_r (kreach md) (kinit v0 q0 m0)); [constructor | intros ?? _ ??; by eapply kr_step].
Qed.

Lemma kreach_rtc md s : kreach md s → ∃ v0 q0 m0, rtc (kstep md) (kinit v0 q0 m0) s.
Proof.
  induction 1 as [v0 q0 m0|s s' _ (v0 & q0 & m0 & IH) Hs]; [exists v0, q0, m0; apply rtc_refl |].
  exists v0, q0, m0. by eapply rtc_r.
Qed.

(** ** The invariant *)

Section inv.
  Context (v0 q0 : nat) (m0 : bool).

  (** No point of [i] yet. *)
  Definition gnopt (g : gst) (i : opid) : Prop := ∀ op r, XL i op r ∉ gx g.
  (** Before its point, and not the write in flight. *)
  Definition pre (g : gst) (i : opid) : Prop := gnopt g i ∧ ∀ op r, gin g ≠ Some (i, op, r).

  (** What a thread running operation [i] at [pc] has done to the ghost:
      nothing before L40 (and a failed CAS and a load nothing before their
      result); past L40, either its write is the one in flight and DRAM is
      at the sequence it read, or its point is placed and DRAM is past its
      write; a thread about to return has its point. *)
  Definition lpc (g : gst) (i : opid) (op : mop) (pc : kpc) : Prop :=
    match pc with
    | K5 | K9 _ _ | K24 _ _ _ | KLd | KLd2 _ | KLd3 _ _ => pre g i
    | K40 pv _ _ => pre g i ∧ cas_e op = pv
    | K44 _ ps _ | KF _ ps | KFc _ _ ps =>
        (gin g = Some (i, op, cas_e op) ∧ ds (kdr (gs g)) = ps) ∨
        (XL i op (cas_e op) ∈ gx g ∧ S ps ≤ ds (kdr (gs g)))
    | KRet r _ => XL i op r ∈ gx g
    end.

  (** The write in flight: NVMM one write ahead of DRAM, a CAS from DRAM's
      pointer, invoked, without a point yet; none: NVMM and DRAM at the same
      sequence. *)
  Definition gin_ok (g : gst) : Prop :=
    match gin g with
    | None => (knv (gs g)).2 = ds (kdr (gs g))
    | Some (i, op, r) => ∃ n, op = OCas r n ∧ r = dv (kdr (gs g)) ∧ knv (gs g) = (n, S (ds (kdr (gs g)))) ∧
        gnopt g i ∧ ∃ t, Invoke i t op ∈ khist (gs g)
    end.

  Record minv (g : gst) : Prop := {
    m_r : rtc (kstep Fix) (kinit v0 q0 m0) (gs g);
    m_erase : erase (gx g) = khist (gs g);
    m_ok : prefix_ok point_ok (gx g);
    m_run : rfin v0 (effects (points (gx g))) = Some (dv (kdr (gs g)));
    m_in : gin_ok g;
    m_th : ∀ t i op pc, kth (gs g) t = KOp i op pc → lpc g i op pc;
  }.

  Lemma minv_init : minv (ginit v0 q0 m0).
  Proof.
    split; simpl; try done. apply prefix_ok_nil.
  Qed.

  (** The threads other than the moving one keep their facts. *)
  Lemma lpc_frame g g' i op pc :
    lpc g i op pc → (∀ x, x ∈ gx g → x ∈ gx g') → (gnopt g i → gnopt g' i) →
    (∀ o, gin g = Some o → gin g' = Some o) → (∀ op r, gin g' = Some (i, op, r) → gin g = Some (i, op, r)) →
    ds (kdr (gs g)) ≤ ds (kdr (gs g')) → (gin g = Some (i, op, cas_e op) → ds (kdr (gs g')) = ds (kdr (gs g))) →
    lpc g' i op pc.
  Proof.
    intros Hl Hx Hn Hin1 Hin2 Hd Hd'. unfold lpc, pre in *.
    assert (Hpre : gnopt g i ∧ (∀ op r, gin g ≠ Some (i, op, r)) → gnopt g' i ∧ ∀ op r, gin g' ≠ Some (i, op, r)).
    { intros [H1 H2]. split; [auto |]. intros op' r' E. by apply (H2 op' r'), Hin2. }
    destruct pc; try by apply Hpre.
    - destruct Hl. split; [by apply Hpre | done].
    - destruct Hl as [[E Hq]|[Hxl Hq]]; [left; split; [by apply Hin1 | rewrite Hd'; done] | right; split; [auto | lia]].
    - destruct Hl as [[E Hq]|[Hxl Hq]]; [left; split; [by apply Hin1 | rewrite Hd'; done] | right; split; [auto | lia]].
    - destruct Hl as [[E Hq]|[Hxl Hq]]; [left; split; [by apply Hin1 | rewrite Hd'; done] | right; split; [auto | lia]].
    - auto.
  Qed.

  Lemma rfin_snoc_pt (l : list (xevent mop nat)) i op r σ :
    rfin v0 (effects (points l)) = Some σ →
    rfin v0 (effects (points (l ++ [XL i op r]))) = if decide (r = ret σ op) then Some (post σ op) else None.
  Proof. intros H. rewrite eff_app, rfin_app, H. simpl. by case_decide. Qed.

  (** A step of thread [t] that leaves NVMM and DRAM's pointer and
      sequence alone and appends its history event or its own point. *)
  Lemma minv_local g s' t x l :
    minv g → kstep Fix (gs g) s' →
    knv s' = knv (gs g) → ds (kdr s') = ds (kdr (gs g)) → dv (kdr s') = dv (kdr (gs g)) →
    kth s' = upd (kth (gs g)) t x → khist s' = khist (gs g) ++ erase l →
    prefix_ok point_ok (gx g ++ l) →
    rfin (dv (kdr (gs g))) (effects (points l)) = Some (dv (kdr (gs g))) →
    (∀ i op r, XL i op r ∈ l → ∃ op' pc, kth (gs g) t = KOp i op' pc ∧ pre g i) →
    (∀ i op pc, x = KOp i op pc → lpc (GSt s' (gx g ++ l) (gin g)) i op pc) →
    minv (GSt s' (gx g ++ l) (gin g)).
  Proof.
    intros [Hr He Hok Hrun Hin Hth] Hs Hnv Hds Hdv Eth Eh Hok' Hrl Hl Hx.
    pose proof (hinv_reach _ _ (rtc_kreach _ _ _ _ _ Hr)) as [G1 G2 G3 G4].
    split; simpl.
    - by eapply rtc_r.
    - by rewrite erase_app, He, Eh.
    - done.
    - by rewrite eff_app, rfin_app, Hrun, Hdv; simpl.
    - unfold gin_ok in *. simpl. destruct (gin g) as [[[j op] r]|] eqn:Eg; [| by rewrite Hnv, Hds].
      destruct Hin as (n & Hop & Hr' & Hn & Hno & tj & Hinv). exists n. rewrite Hnv, Hds, Hdv.
      split_and!; try done.
      + intros op' r' [Hin|Hin]%elem_of_app; [by eapply Hno |].
        destruct (Hl _ _ _ Hin) as (? & ? & _ & _ & Hne). exact (Hne op r Eg).
      + exists tj. rewrite Eh. apply elem_of_app. by left.
    - intros u i op pc Hu. rewrite Eth in Hu. destruct (decide (u = t)) as [->|Hne].
      + rewrite upd_same in Hu. by apply Hx.
      + rewrite upd_other in Hu by done. apply (lpc_frame g); simpl.
        * exact (Hth _ _ _ _ Hu).
        * intros y Hy. apply elem_of_app. by left.
        * intros Hn op' r' [Hx1|Hx1]%elem_of_app; [by eapply Hn |].
          destruct (Hl _ _ _ Hx1) as (op'' & pc' & Ht & _).
          destruct (G1 _ _ _ _ Hu) as (Hi1 & _). destruct (G1 _ _ _ _ Ht) as (Hi2 & _).
          destruct (G3 _ _ _ _ _ Hi1 Hi2). done.
        * done.
        * done.
        * rewrite Hds. lia.
        * by rewrite Hds.
  Qed.

  (** A step that moves DRAM to NVMM's sequence: the write in flight takes
      effect. *)
  Lemma minv_copy g s' t x :
    minv g → kstep Fix (gs g) s' →
    knv s' = knv (gs g) → kvals s' = kvals (gs g) → ds (kdr s') = S (ds (kdr (gs g))) →
    kth s' = upd (kth (gs g)) t x → khist s' = khist (gs g) →
    (∀ i op pc, x = KOp i op pc → lpc (GSt s' (gx g ++ ins (gin g)) None) i op pc) →
    minv (GSt s' (gx g ++ ins (gin g)) None).
  Proof.
    intros [Hr He Hok Hrun Hin Hth] Hs Hnv Hkv Hds Eth Eh Hx.
    assert (Hr' : rtc (kstep Fix) (kinit v0 q0 m0) s') by (by eapply rtc_r).
    pose proof (kinv_reach _ (rtc_kreach _ _ _ _ _ Hr)) as [I1 I2 I3 I4 I5 I6].
    pose proof (kinv_reach _ (rtc_kreach _ _ _ _ _ Hr')) as [J1 J2 J3 J4 J5 J6].
    unfold gin_ok in Hin. destruct (gin g) as [[[j op] r]|] eqn:Eg; [| rewrite Hnv in J1; lia].
    destruct Hin as (n & -> & Hr1 & Hn & Hno & tj & Hinv).
    assert (Hdv : dv (kdr s') = n).
    { rewrite J3, Hds, Hkv. rewrite Hn in I2. simpl in I2. by rewrite I2. }
    split; simpl.
    - done.
    - rewrite erase_app, He, Eh. simpl. by rewrite app_nil_r.
    - apply prefix_ok_snoc. split; [done |]. split; [| done]. exists tj. by rewrite He.
    - rewrite (rfin_snoc_pt _ _ _ _ _ Hrun). simpl. rewrite decide_True by done.
      rewrite decide_True by done. by rewrite Hdv.
    - unfold gin_ok. simpl. rewrite Hnv, Hn, Hds. done.
    - intros u i op pc Hu. rewrite Eth in Hu. destruct (decide (u = t)) as [->|Hne].
      + rewrite upd_same in Hu. by apply Hx.
      + rewrite upd_other in Hu by done. pose proof (Hth _ _ _ _ Hu) as Hl. unfold lpc, pre in Hl |- *. simpl.
        rewrite Eg, Hds in *.
        assert (Hpre : gnopt g i ∧ (∀ op1 r1, Some (j, OCas r n, r) ≠ Some (i, op1, r1)) →
                  gnopt (GSt s' (gx g ++ [XL j (OCas r n) r]) None) i ∧
                  ∀ op1 r1, @None (opid * mop * nat) ≠ Some (i, op1, r1)).
        { intros [H1 H2]. split; [| done]. intros op' r' [Hin|Hin%elem_of_list_singleton]%elem_of_app; [by eapply H1 |].
          injection Hin as -> _ _. by apply (H2 (OCas r n) r). }
        destruct pc; try by apply Hpre.
        all: try (destruct Hl as [Hl1 Hl2]; split; [by apply Hpre | done]).
        all: try (destruct Hl as [[E Hq]|[Hxl Hq]];
          [injection E as -> -> <-; right; split; [apply elem_of_app; right; by left | lia]
          | right; split; [apply elem_of_app; by left | lia]]).
        apply elem_of_app. by left.
  Qed.
End inv.

Section step.
  Context (v0 q0 : nat) (m0 : bool).
  Notation minv := (minv v0 q0 m0).

  (** L40's success: the CAS's write is in flight. *)
  Lemma minv_l40 g t i e n pv ps d :
    minv g → kth (gs g) t = KOp i (OCas e n) (K40 pv ps d) → knv (gs g) = (pv, ps) →
    minv (GSt (kl40 (gs g) t (KOp i (OCas e n) (K44 pv ps d)) n (S ps)) (gx g ++ []) (Some (i, OCas e n, e))).
  Proof.
    intros Hm Ht Hnv. pose proof Hm as [Hr He Hok Hrun Hin Hth].
    pose proof (kinv_reach _ (rtc_kreach _ _ _ _ _ Hr)) as [I1 I2 I3 I4 I5 I6].
    pose proof (hinv_reach _ _ (rtc_kreach _ _ _ _ _ Hr)) as [G1 G2 G3 G4].
    pose proof (I6 t) as Hk. rewrite Ht in Hk. destruct Hk as [[Hq Hv] [[Hd Hdv] Hps]].
    destruct (Hth _ _ _ _ Ht) as [[Hno Hni] Hpv]. simpl in Hpv. subst pv.
    rewrite Hnv in I1. simpl in I1.
    assert (Hds : ds (kdr (gs g)) = ps) by lia.
    assert (Hdv' : dv (kdr (gs g)) = e) by (rewrite I3, Hds; done).
    assert (Hg0 : gin g = None).
    { unfold gin_ok in Hin. destruct (gin g) as [[[j op] r]|]; [| done].
      destruct Hin as (? & _ & _ & Hn & _). rewrite Hnv in Hn. injection Hn. lia. }
    destruct (G1 _ _ _ _ Ht) as (Hinv & _).
    split; simpl.
    - eapply rtc_r; [exact Hr | by apply k_l40_ok].
    - by rewrite app_nil_r.
    - by rewrite app_nil_r.
    - by rewrite app_nil_r.
    - unfold gin_ok. simpl. exists n. split_and!; try done.
      + by rewrite Hds.
      + intros op r. rewrite app_nil_r. apply Hno.
      + by exists t.
    - intros u j op pc Hu. destruct (decide (u = t)) as [->|Hne].
      + rewrite upd_same in Hu. injection Hu as <- <- <-. simpl. left. by split.
      + rewrite upd_other in Hu by done. apply (lpc_frame g); simpl.
        * exact (Hth _ _ _ _ Hu).
        * intros y Hy. apply elem_of_app. by left.
        * intros Hn op' r'. rewrite app_nil_r. apply Hn.
        * by rewrite Hg0.
        * intros op' r' E. injection E as -> _ _. destruct (G1 _ _ _ _ Hu) as (Hi' & _).
          destruct (G3 _ _ _ _ _ Hinv Hi'). done.
        * done.
        * by rewrite Hg0.
  Qed.

  (** A fresh invocation is before its point. *)
  Lemma pre_fresh g l : minv g → (∀ op r, XL (knid (gs g)) op r ∉ l) → pre (GSt (gs g) (gx g ++ l) (gin g)) (knid (gs g)).
  Proof.
    intros [Hr He Hok Hrun Hin Hth] Hl.
    pose proof (hinv_reach _ _ (rtc_kreach _ _ _ _ _ Hr)) as [G1 G2 G3 G4]. split.
    - intros op r [Hx|Hx]%elem_of_app; [| by apply (Hl op r)].
      destruct (xl_invoked _ _ _ _ Hok Hx) as (t & op' & Hi). rewrite He in Hi. apply G2 in Hi. lia.
    - intros op r E. simpl in E. unfold gin_ok in Hin. rewrite E in Hin.
      destruct Hin as (? & _ & _ & _ & _ & t & Hi). apply G2 in Hi. lia.
  Qed.

  Lemma pre_nil g s' i : pre g i → pre (GSt s' (gx g ++ []) (gin g)) i.
  Proof. intros [H1 H2]. split; [| done]. intros op r. rewrite app_nil_r. apply H1. Qed.

  Lemma pre_pt g s' i l : pre g i → (∀ op r, XL i op r ∉ l) → pre (GSt s' (gx g ++ l) (gin g)) i.
  Proof. intros [H1 H2] Hl. split; [| done]. intros op r [?|?]%elem_of_app; [by eapply H1 | by eapply Hl]. Qed.

  Lemma pre_copy g s' i : pre g i → pre (GSt s' (gx g ++ ins (gin g)) None) i.
  Proof.
    intros [H1 H2]. split; [| done]. intros op r [?|Hx]%elem_of_app; [by eapply H1 |].
    destruct (gin g) as [[[j op'] r']|] eqn:E; simpl in Hx; [| by apply elem_of_nil in Hx].
    apply elem_of_list_singleton in Hx. injection Hx as Hj _ _. subst j. exact (H2 op' r' eq_refl).
  Qed.

  Lemma in_snoc_r {A} (l : list A) x : x ∈ l ++ [x].
  Proof. apply elem_of_app. right. by left. Qed.

  Ltac to_thread g tg t Ho :=
    rewrite (gnext_thread g _ tg t Ho);
    [| intros u Hu; simpl; repeat case_decide; simpl; by rewrite upd_other].
  Ltac gcomp Ht :=
    unfold gnext, copied; simpl; rewrite ?upd_same, ?Ht; simpl; rewrite ?drop_all, ?drop_app; simpl.
  Ltac loc Hm Hs := eapply (minv_local _ _ _ _ _ _ _ _ Hm Hs); try reflexivity; try done;
    try (simpl; rewrite ?app_nil_r; done).

  Lemma minv_step g s' tg :
    minv g → kstep Fix (gs g) s' → (∀ u, u ≠ tg → kth s' u = kth (gs g) u) → minv (gnext g s' tg).
  Proof.
    intros Hm Hs Ho. pose proof Hm as [Hr He Hok Hrun Hin Hth].
    pose proof (kinv_reach _ (rtc_kreach _ _ _ _ _ Hr)) as I. pose proof I as [I1 I2 I3 I4 I5 I6].
    pose proof (hinv_reach _ _ (rtc_kreach _ _ _ _ _ Hr)) as [G1 G2 G3 G4].
    destruct g as [s xh io]. simpl in *. pose proof Hs as Hs0. revert Hs0 Ho.
    destruct Hs as [s t e n Ht|s t Ht|s t i e n Ht|s t i e n pv ps Ht Hp|s t i e n pv ps Ht Hp Hp'
                   |s t i e n pv ps Ht Hp Hpv|s t i e n pv ps Ht Hp Hpv|s t i e n pv ps d Ht
                   |s t i e n pv ps d Ht Hnv|s t i e n pv ps d Ht Hnv|s t i e n pv ps d Ht
                   |s t i e n d ps Ht|s t i e n d now ps Ht|s t i Ht|s t i v Ht|s t i v q Ht
                   |s t i op r w Ht|s t Ht|s t Ht|s t d Ht|s t d vn sn Ht|s t d vn sn m Ht];
      intros Hs0 Ho; pose proof (I6 t) as Hk; rewrite Ht in Hk; simpl in Hk.
    - (* invoke a CAS *)
      to_thread (GSt s xh io) tg t Ho. gcomp Ht. rewrite bool_decide_false by lia; simpl. loc Hm Hs0.
      + by apply prefix_ok_snoc.
      + intros ??? ?%elem_of_list_singleton; discriminate.
      + intros ??? [= <- <- <-]. apply (pre_fresh (GSt s xh io)); [done |]. by intros ?? ?%elem_of_list_singleton.
    - (* invoke a load *)
      to_thread (GSt s xh io) tg t Ho. gcomp Ht. rewrite bool_decide_false by lia; simpl. loc Hm Hs0.
      + by apply prefix_ok_snoc.
      + intros ??? ?%elem_of_list_singleton; discriminate.
      + intros ??? [= <- <- <-]. apply (pre_fresh (GSt s xh io)); [done |]. by intros ?? ?%elem_of_list_singleton.
    - (* L5 *)
      to_thread (GSt s xh io) tg t Ho. gcomp Ht. rewrite bool_decide_false by lia; simpl. loc Hm Hs0.
      + by intros ??? ?%elem_of_nil.
      + intros ??? [= <- <- <-]. apply pre_nil, (Hth _ _ _ _ Ht).
    - (* L9: help *)
      to_thread (GSt s xh io) tg t Ho. gcomp Ht. rewrite bool_decide_false by lia; simpl. loc Hm Hs0.
      + by intros ??? ?%elem_of_nil.
      + intros ??? [= <- <- <-]. apply pre_nil, (Hth _ _ _ _ Ht).
    - (* L27 *)
      to_thread (GSt s xh io) tg t Ho. gcomp Ht. rewrite bool_decide_false by lia; simpl. loc Hm Hs0.
      + by intros ??? ?%elem_of_nil.
      + intros ??? [= <- <- <-]. apply pre_nil, (Hth _ _ _ _ Ht).
    - (* L30–L33: the CAS fails, its point *)
      destruct Hk as [Hq Hv]. assert (Hpd : pv = dv (kdr s)) by (rewrite I3, <- Hp; done).
      pose proof (Hth _ _ _ _ Ht) as Hpre. destruct (G1 _ _ _ _ Ht) as (Hinv & _).
      to_thread (GSt s xh io) tg t Ho. gcomp Ht. rewrite bool_decide_false by lia; simpl. loc Hm Hs0.
      + apply prefix_ok_snoc. split; [done |]. split; [exists t; simpl; by rewrite He | apply Hpre].
      + simpl. rewrite decide_True by done. simpl. rewrite decide_False by congruence. done.
      + intros ??? [= -> -> ->]%elem_of_list_singleton. eauto.
      + intros ??? [= <- <- <-]. apply in_snoc_r.
    - (* L30: on to L37 *)
      to_thread (GSt s xh io) tg t Ho. gcomp Ht. rewrite bool_decide_false by lia; simpl. loc Hm Hs0.
      + by intros ??? ?%elem_of_nil.
      + intros ??? [= <- <- <-]. split; [apply pre_nil, (Hth _ _ _ _ Ht) | done].
    - (* L24 *)
      destruct Hk as [[Hq Hv] [[Hd Hdv] Hps]].
      destruct (decide (kdr s = d)) as [<-|Hne].
      + to_thread (GSt s xh io) tg t Ho. gcomp Ht. rewrite bool_decide_true by lia. rewrite app_nil_r.
        eapply (minv_copy _ _ _ _ _ _ _ Hm Hs0); try reflexivity; simpl; [lia |].
        intros ??? [= <- <- <-]. apply (pre_copy (GSt s xh io)), (Hth _ _ _ _ Ht).
      + to_thread (GSt s xh io) tg t Ho. gcomp Ht. rewrite bool_decide_false by lia; simpl. loc Hm Hs0.
        * by intros ??? ?%elem_of_nil.
        * intros ??? [= <- <- <-]. apply pre_nil, (Hth _ _ _ _ Ht).
    - (* L40 succeeds *)
      to_thread (GSt s xh io) tg t Ho. gcomp Ht. rewrite bool_decide_false by lia; simpl.
      by apply (minv_l40 (GSt s xh io)).
    - (* L40 fails: retry (M1) *)
      to_thread (GSt s xh io) tg t Ho. gcomp Ht. rewrite bool_decide_false by lia; simpl. loc Hm Hs0.
      + by intros ??? ?%elem_of_nil.
      + intros ??? [= <- <- <-]. apply pre_nil. apply (Hth _ _ _ _ Ht).
    - (* L44 *)
      destruct Hk as [[Hd Hdv] [Hps [Hq Hv]]]. pose proof (Hth _ _ _ _ Ht) as Hl. simpl in Hl.
      change (l44_exp Fix pv ps d) with d in Hs0, Ho |- *. change (l44_fail Fix e n ps d) with (KF d ps) in Hs0, Ho |- *.
      destruct (decide (kdr s = d)) as [<-|Hne].
      + to_thread (GSt s xh io) tg t Ho. gcomp Ht. rewrite bool_decide_true by lia. rewrite app_nil_r.
        eapply (minv_copy _ _ _ _ _ _ _ Hm Hs0); try reflexivity; simpl; [lia |].
        intros ??? [= <- <- <-]. simpl. destruct Hl as [[-> _]|[_ Hq']]; [apply in_snoc_r | lia].
      + to_thread (GSt s xh io) tg t Ho. gcomp Ht. rewrite bool_decide_false by lia; simpl. loc Hm Hs0.
        * by intros ??? ?%elem_of_nil.
        * intros ??? [= <- <- <-]. simpl. destruct Hl as [[? ?]|[? ?]]; [left | right]; split; try done.
          apply elem_of_app. by left.
    - (* finish_dram_half: L497–L500 *)
      destruct Hk as [[Hd Hdv] [Hps [Hq Hv]]]. pose proof (Hth _ _ _ _ Ht) as Hl. simpl in Hl.
      destruct (decide (ds (kdr s) = ds d ∧ dv (kdr s) = dv d)) as [Hc|Hc];
        to_thread (GSt s xh io) tg t Ho; gcomp Ht; rewrite bool_decide_false by lia; simpl; loc Hm Hs0.
      + by intros ??? ?%elem_of_nil.
      + intros ??? [= <- <- <-]. simpl.
        destruct Hl as [[? ?]|[? ?]]; [left | right]; split; try done. apply elem_of_app. by left.
      + by intros ??? ?%elem_of_nil.
      + intros ??? [= <- <- <-]. simpl.
        destruct Hl as [[? Hq']|[? ?]]; [| apply elem_of_app; by left].
        exfalso. apply Hc. split; [lia |]. rewrite I3, Hdv. congruence.
    - (* finish_dram_half: L501–L507 *)
      destruct Hk as [[Hd Hdv] [Hps [[Hd' Hdv'] [Hps' [Hq Hv]]]]]. pose proof (Hth _ _ _ _ Ht) as Hl. simpl in Hl.
      destruct (decide (kdr s = now)) as [<-|Hne].
      + to_thread (GSt s xh io) tg t Ho. gcomp Ht. rewrite bool_decide_true by lia. rewrite app_nil_r.
        eapply (minv_copy _ _ _ _ _ _ _ Hm Hs0); try reflexivity; simpl; [lia |].
        intros ??? [= <- <- <-]. simpl. destruct Hl as [[-> _]|[_ Hq']]; [apply in_snoc_r | lia].
      + to_thread (GSt s xh io) tg t Ho. gcomp Ht. rewrite bool_decide_false by lia; simpl. loc Hm Hs0.
        * by intros ??? ?%elem_of_nil.
        * intros ??? [= <- <- <-]. simpl. destruct Hl as [[? ?]|[? ?]]; [left | right]; split; try done.
          apply elem_of_app. by left.
    - (* Algorithm 6.4, line 1 *)
      pose proof (Hth _ _ _ _ Ht) as Hpre. destruct (G1 _ _ _ _ Ht) as (Hinv & _).
      destruct (dm (kdr s)) eqn:Em.
      + to_thread (GSt s xh io) tg t Ho. gcomp Ht. rewrite bool_decide_false by lia; simpl. loc Hm Hs0.
        * by intros ??? ?%elem_of_nil.
        * intros ??? [= <- <- <-]. by apply pre_nil.
      + to_thread (GSt s xh io) tg t Ho. gcomp Ht. rewrite bool_decide_false by lia; simpl. loc Hm Hs0.
        * apply prefix_ok_snoc. split; [done |]. split; [exists t; simpl; by rewrite He | apply Hpre].
        * simpl. by rewrite decide_True.
        * intros ??? [= -> -> ->]%elem_of_list_singleton. eauto.
        * intros ??? [= <- <- <-]. apply in_snoc_r.
    - (* line 2.1 *)
      to_thread (GSt s xh io) tg t Ho. gcomp Ht. rewrite bool_decide_false by lia; simpl. loc Hm Hs0.
      + by intros ??? ?%elem_of_nil.
      + intros ??? [= <- <- <-]. apply pre_nil, (Hth _ _ _ _ Ht).
    - (* lines 2.3–2.4 *)
      pose proof (Hth _ _ _ _ Ht) as Hpre. destruct (G1 _ _ _ _ Ht) as (Hinv & _).
      destruct (decide (kdr s = DP v true q)) as [Ed|Hne].
      + to_thread (GSt s xh io) tg t Ho. gcomp Ht. rewrite Ed. simpl. rewrite bool_decide_false by lia; simpl. loc Hm Hs0.
        * simpl. by rewrite Ed.
        * simpl. by rewrite Ed.
        * apply prefix_ok_snoc. split; [done |]. split; [exists t; simpl; by rewrite He | apply Hpre].
        * simpl. rewrite Ed. simpl. by rewrite decide_True.
        * intros ??? [= -> -> ->]%elem_of_list_singleton. eauto.
        * intros ??? [= <- <- <-]. apply in_snoc_r.
      + to_thread (GSt s xh io) tg t Ho. gcomp Ht. rewrite bool_decide_false by lia; simpl. loc Hm Hs0.
        * by intros ??? ?%elem_of_nil.
        * intros ??? [= <- <- <-]. by apply pre_nil.
    - (* the return *)
      pose proof (Hth _ _ _ _ Ht) as Hl. simpl in Hl.
      to_thread (GSt s xh io) tg t Ho. gcomp Ht. rewrite bool_decide_false by lia; simpl. loc Hm Hs0.
      + apply prefix_ok_snoc. split; [done |]. by exists op.
      + by intros ??? ?%elem_of_list_singleton.
    - (* Algorithm 6.3 *)
      to_thread (GSt s xh io) tg t Ho. gcomp Ht. rewrite bool_decide_false by lia; simpl. loc Hm Hs0.
      + by intros ??? ?%elem_of_nil.
    - to_thread (GSt s xh io) tg t Ho. gcomp Ht. rewrite bool_decide_false by lia; simpl. loc Hm Hs0.
      + by intros ??? ?%elem_of_nil.
    - to_thread (GSt s xh io) tg t Ho. gcomp Ht. rewrite bool_decide_false by lia; simpl. loc Hm Hs0.
      + by intros ??? ?%elem_of_nil.
    - to_thread (GSt s xh io) tg t Ho. gcomp Ht. rewrite bool_decide_false by lia; simpl. loc Hm Hs0.
      + by intros ??? ?%elem_of_nil.
    - (* line 4 *)
      destruct Hk as [[Hd Hdv] [[Hq Hv] Hle]].
      destruct (decide (kdr s = d)) as [<-|Hne].
      + destruct (decide (sn = ds (kdr s))) as [->|Hsn].
        * to_thread (GSt s xh io) tg t Ho. gcomp Ht. rewrite bool_decide_false by lia; simpl. loc Hm Hs0.
          -- simpl. by rewrite Hv, <- I3.
          -- by intros ??? ?%elem_of_nil.
        * to_thread (GSt s xh io) tg t Ho. gcomp Ht. rewrite bool_decide_true by lia. rewrite app_nil_r.
          eapply (minv_copy _ _ _ _ _ _ _ Hm Hs0); try reflexivity; simpl; [lia |].
          by intros ??? ?.
      + to_thread (GSt s xh io) tg t Ho. gcomp Ht. rewrite bool_decide_false by lia; simpl. loc Hm Hs0.
        * by intros ??? ?%elem_of_nil.
  Qed.
End step.

(** ** The theorems *)
Section theorems.
  Context (v0 q0 : nat) (m0 : bool).
  Notation greach := (rtc gstep (ginit v0 q0 m0)).

  Lemma greach_minv g : greach g → minv v0 q0 m0 g.
  Proof.
    apply rtc_preserved; [apply minv_init |]. intros ?? Hg Hs. destruct Hs. by apply minv_step.
  Qed.

  (** Every run of the fixed model has its history: the ghost runs are the
      model's runs. *)
  Theorem m2_fix_every_run s : rtc (kstep Fix) (kinit v0 q0 m0) s ↔ ∃ g, greach g ∧ gs g = s.
  Proof.
    apply (ghost_runs _ _ gs _ (ginit v0 q0 m0)); [done | intros g Hg; apply (m_r _ _ _ _ (greach_minv g Hg)) |].
    intros g s' _ _ Hs. destruct (kstep_thread _ _ _ Hs) as [t Ht].
    exists (gnext g s' t). split; [by constructor | done].
  Qed.

  (** The ghost points are a witness for the history. *)
  Theorem m2_fix_lin_points g : greach g → lin_points (reg v0) (khist (gs g)) (gx g).
  Proof.
    intros Hg. destruct (greach_minv g Hg) as [_ He Hok Hrun _ _]. split; [done | done |].
    by eapply rfin_runs.
  Qed.

  (** Mirror's pointer field with recovery marks, Algorithm 6.4's load and
      the M2 fix: every run's history is durably linearizable. *)
  Theorem m2_fix_durably_linearizable s :
    rtc (kstep Fix) (kinit v0 q0 m0) s → durably_linearizable (reg v0) (khist s).
  Proof.
    intros (g & Hg & <-)%m2_fix_every_run. exists (gx g). by apply m2_fix_lin_points.
  Qed.
End theorems.

(** The same for [MirrorMarksPx.v]'s reachable states, for the pointer the
    run started from. *)
Theorem m2_fix_reach_durably_linearizable s :
  kreach Fix s → ∃ v0 q0 m0, rtc (kstep Fix) (kinit v0 q0 m0) s ∧ durably_linearizable (reg v0) (khist s).
Proof.
  intros (v0 & q0 & m0 & Hr)%kreach_rtc. exists v0, q0, m0. split; [done |].
  by apply (m2_fix_durably_linearizable v0 q0 m0).
Qed.

(** ** The theorem is not vacuous: M2's schedule, fixed *)

Ltac gcur R := match type of R with rtc _ _ ?x => x end.
Ltac gnorm R := match type of R with rtc ?r ?a ?x => let y := eval vm_compute in x in change (rtc r a y) in R end.
Ltac ggo R t p :=
  let x := gcur R in
  let R' := fresh "R" in
  pose proof (rtc_r _ _ _ R (g_step x _ t p
    ltac:(intros u Hu; simpl; repeat case_decide; simpl; by rewrite upd_other))) as R';
  clear R; rename R' into R; gnorm R.

(** The history of [MirrorMarksPx.v]'s [m2_once_not_durably_linearizable]
    run, fixed: the second load returns the CAS's value. *)
Definition m2_fix_hist : history mop nat :=
  [Invoke 0 0 (OCas 1 2); Invoke 1 1 OLoad; Return 1 1; Return 0 1; Invoke 2 1 OLoad; Return 2 2].

(** From [kinit 1 0 true] (right after the field's recovery copied
    [mark(1)]): thread 0's CAS(1, 2) reads NVMM [(1, 0)] (L5), DRAM
    [(mark 1, 0)] (L9), writes NVMM [(2, 1)] (L40); thread 1's load unmarks
    DRAM to [(1, 0)] (Algorithm 6.4, lines 1, 2.1, 2.3) and returns 1;
    thread 0's L44 expects [(mark 1, 0)] and fails; [finish_dram_half]
    reads DRAM [(1, 0)] (L497: L9's sequence and pointer), its L501 DWCAS
    installs [(2, 1)]: the CAS's point; the CAS returns 1 (success); thread
    1's next load reads 2.  16 steps; the witness puts the load's point
    before the CAS's. *)
Lemma m2_fix_run : ∃ g, rtc gstep (ginit 1 0 true) g ∧ khist (gs g) = m2_fix_hist ∧
  gx g = [XE (Invoke 0 0 (OCas 1 2)); XE (Invoke 1 1 OLoad); XL 1 OLoad 1; XE (Return 1 1);
          XL 0 (OCas 1 2) 1; XE (Return 0 1); XE (Invoke 2 1 OLoad); XL 2 OLoad 2; XE (Return 2 2)].
Proof.
  pose proof (rtc_refl gstep (ginit 1 0 true)) as R. gnorm R.
  let x := gcur R in ggo R 0 (k_inv_cas Fix (gs x) 0 1 2 eq_refl).
  let x := gcur R in ggo R 0 (k_l5 Fix (gs x) 0 0 1 2 eq_refl).
  let x := gcur R in ggo R 0 (k_l9_go Fix (gs x) 0 0 1 2 1 0 eq_refl eq_refl eq_refl).
  let x := gcur R in ggo R 0 (k_l40_ok Fix (gs x) 0 0 1 2 1 0 (DP 1 true 0) eq_refl eq_refl).
  let x := gcur R in ggo R 1 (k_inv_load Fix (gs x) 1 eq_refl).
  let x := gcur R in ggo R 1 (k_ld1 Fix (gs x) 1 1 eq_refl).
  let x := gcur R in ggo R 1 (k_ld2 Fix (gs x) 1 1 1 eq_refl).
  let x := gcur R in ggo R 1 (k_ld3 Fix (gs x) 1 1 1 0 eq_refl).
  let x := gcur R in ggo R 1 (k_ret Fix (gs x) 1 1 OLoad 1 None eq_refl).
  let x := gcur R in ggo R 0 (k_l44 Fix (gs x) 0 0 1 2 1 0 (DP 1 true 0) eq_refl).
  let x := gcur R in ggo R 0 (k_fin Fix (gs x) 0 0 1 2 (DP 1 true 0) 0 eq_refl).
  let x := gcur R in ggo R 0 (k_fin_cas Fix (gs x) 0 0 1 2 (DP 1 true 0) (DP 1 false 0) 0 eq_refl).
  let x := gcur R in ggo R 0 (k_ret Fix (gs x) 0 0 (OCas 1 2) 1 (Some (2, 1)) eq_refl).
  let x := gcur R in ggo R 1 (k_inv_load Fix (gs x) 1 eq_refl).
  let x := gcur R in ggo R 1 (k_ld1 Fix (gs x) 1 2 eq_refl).
  let x := gcur R in ggo R 1 (k_ret Fix (gs x) 1 2 OLoad 2 None eq_refl).
  eexists. split; [exact R |]. split; vm_compute; reflexivity.
Qed.

(** A reachable state of the fixed model whose history interleaves a CAS
    and two loads as M2's refuted run does, and is durably linearizable;
    the same schedule without [finish_dram_half] ([Once]) is not
    ([m2_once_not_durably_linearizable]). *)
Theorem m2_fix_not_vacuous :
  ∃ s, rtc (kstep Fix) (kinit 1 0 true) s ∧ khist s = m2_fix_hist ∧ durably_linearizable (reg 1) (khist s).
Proof.
  destruct m2_fix_run as (g & Hg & Hh & _). exists (gs g). split_and!.
  - apply (m2_fix_every_run 1 0 true). by exists g.
  - done.
  - exists (gx g). by apply (m2_fix_lin_points 1 0 true).
Qed.

(** * Mirror's pointer field under a tracking variant: MirrorMarksPxCrash.v's gate composed with Tracking.v

    [Relax/MirrorMarksPxCrash.v] models one pointer field with recovery
    marks, crashes and persistence; there an operation's first access
    ([c_start_cas], [c_start_load]) waits until some [recover_field_ptr]
    (Algorithm 6.3, run by any idle thread at any time) returned since the
    last crash ([crec]): tracking as a gate.  As [MirrorPxTracked.v] does
    for [MirrorPxLin.v]'s data field, this file runs that model in
    lock-step with a tracking variant of [Relax/Tracking.v] (generic over
    the variant, instantiated for the five), the gate replaced by the
    variant's query:

    - the state ([cpst]): [MirrorMarksPxCrash.v]'s state [cms],
      Tracking.v's ghost [ctg] and the variant's state [ctx], and [rid t]:
      the tracking thread of thread [t]'s current recover call.  The field
      is the tracked object [o]; operation [i] is tracking thread [i]; a
      recover call uses an idle tracking thread of its choice;
    - [cp_mirror]: every step of [MirrorMarksPxCrash.v] other than a
      crash, a call's start ([c_qstart], the only step from [CIdle] to
      [CRec Q1]) and a tracking decision ([cdeciding]: at [CStart], or at
      line 4 with DRAM still the pair read at line 1, where the call
      returns); the tracking state stays;
    - [cp_qstart]: an idle thread calls [recover_field_ptr] (Algorithm 6.3
      line 1; in the code [Space::recover_tracked] calling
      [Space::recover_field_ptr] or [recover_node] from [Space::load_ptr]
      L2.2); Tracking.v's [st_call];
    - [cp_q4]: line 4's DWCAS succeeds and the call returns (the
      [Attempt::Copy] branch of [Space::recover_field_ptr]); the variant's
      [on_return]; Tracking.v's [st_return];
    - [cp_vstep]: the variant's own steps, by any tracking thread
      (setting the bit after the call returned, the unmarking DWCAS of
      Algorithm 6.4 L2.3 in the tracking state, ...); [st_track];
    - [cp_start_cas], [cp_start_load]: the first access, as
      [c_start_cas], [c_start_load] but when the query ([Space::load_ptr]'s
      L1 mark test, or [Space::track_field]'s bit test) answers
      "recovered" instead of [crec = true]; [st_load];
    - [cp_crash]: a crash of both ([c_crash], [st_crash]).

    Proved, for every variant with Claim 1: [marks_tracked_simulation]
    (every reachable product state is reachable in
    [MirrorMarksPxCrash.v]'s gated model and in Tracking.v's, and the
    ghost's [ret o] implies [crec]; [fresh o] stays false);
    [marks_tracked_yes_gate]; [marks_tracked_durably_linearizable];
    [mirror_marks_px_tracked_durably_linearizable] (the five variants by
    name); [mirror_marks_px_tracked_not_vacuous] (under [bitset]: thread
    0's load finds the field not recovered and waits; thread 1's
    recover_field_ptr returns at line 4, sets the bit; thread 0's query
    then answers "recovered" and its load returns).

    Still abstracted: as [MirrorMarksPxCrash.v] and Tracking.v; the field
    is the tracked object (for the node variants the code's query is about
    the node the pointer leads to; here that is the field itself: one
    object); the variants' own steps are free-standing (not tied to the
    Mirror steps that make them in the code); in the code an operation
    that finds its object unrecovered recovers it itself
    ([recover_tracked]), here (as in [MirrorMarksPxCrash.v]) it waits for
    an idle thread's call. *)
From stdpp Require Import base list relations.
From Coq Require Import Lia.
From perdure.Core Require Import History DurableLin.
From perdure.Relax Require Import MirrorPxLin MirrorMarksPx MirrorMarksPxCrash.
From perdure.Relax Require Tracking MirrorPxTracked.

Definition cdeciding (s : cst) (x : ctst) : Prop :=
  match x with
  | COp _ _ CStart => True
  | CRec (Q4 d _) => cdr s = d
  | _ => False
  end.

Section product.
  Context (V : Tracking.variant) (o : nat) (v0 q0 : nat) (d0 : dpair).

  Record cpst : Type := CPSt {
    cms : cst;
    ctg : Tracking.ghost;
    ctx : Tracking.tstate V;
    rid : nat → nat
  }.

  Notation tset := MirrorPxTracked.tset.

  Inductive cpstep : cpst → cpst → Prop :=
  | cp_mirror s s' g x r :
      cstep s s' → chist s' ≠ chist s ++ [Crash] →
      (∀ t, cdeciding s (cth s t) → cth s' t = cth s t) →
      (∀ t, cth s t = CIdle → cth s' t ≠ CRec Q1) →
      cpstep (CPSt s g x r) (CPSt s' g x r)
  | cp_qstart s g x r t j :
      cth s t = CIdle → Tracking.pc g j = Tracking.TIdle →
      cpstep (CPSt s g x r) (CPSt (cset s t (CRec Q1)) (tset g j (Tracking.TRec o)) x (upd r t j))
  | cp_q4 s g x x' r t d n m :
      cth s t = CRec (Q4 d n) → cdr s = d →
      Tracking.pc g (r t) = Tracking.TRec o → Tracking.on_return V o x x' →
      cpstep (CPSt s g x r)
        (CPSt (cq4 s t (DP n.1 m n.2) (bool_decide (n.2 = ds d)))
              (Tracking.G (Tracking.bset (Tracking.ret g) o) (Tracking.fresh g)
                 (Tracking.fset (Tracking.pc g) (r t) (Tracking.TDone o))) x' r)
  | cp_vstep s g x x' r j p' :
      Tracking.tstep V (Tracking.pc g j) x p' x' →
      cpstep (CPSt s g x r) (CPSt s (tset g j p') x' r)
  | cp_start_cas s g x r t i e n :
      cth s t = COp i (OCas e n) CStart →
      Tracking.pc g i = Tracking.TIdle → Tracking.query V x o = true →
      cpstep (CPSt s g x r) (CPSt (cset s t (COp i (OCas e n) C5)) (tset g i (Tracking.THold o)) x r)
  | cp_start_load s g x r t i :
      cth s t = COp i OLoad CStart →
      Tracking.pc g i = Tracking.TIdle → Tracking.query V x o = true →
      cpstep (CPSt s g x r) (CPSt (cset s t (COp i OLoad CLd)) (tset g i (Tracking.THold o)) x r)
  | cp_crash s s' g x x' r :
      cstep s s' → chist s' = chist s ++ [Crash] → Tracking.crashed V x' →
      cpstep (CPSt s g x r)
        (CPSt s' (Tracking.G (λ _, false) (λ _, false) (λ _, Tracking.TIdle)) x' r).

  Inductive cpreach : cpst → Prop :=
  | cpreach_init x r :
      Tracking.crashed V x →
      cpreach (CPSt (cinit v0 q0 d0) (Tracking.G (λ _, false) (λ _, false) (λ _, Tracking.TIdle)) x r)
  | cpreach_step p p' : cpreach p → cpstep p p' → cpreach p'.

  Record clinked (p : cpst) : Prop := {
    cl_ret : Tracking.ret (ctg p) o = true → crec (cms p) = true;
    cl_fresh : Tracking.fresh (ctg p) o = false;
  }.

  Lemma cstep_rec s s' : cstep s s' → chist s' ≠ chist s ++ [Crash] → crec s = true → crec s' = true.
  Proof.
    destruct 1; intros Hc Hr;
      try (exfalso; apply Hc; unfold chist; simpl; rewrite !erase_app;
           case_decide; simpl; rewrite ?erase_ins; done);
      unfold cset, cxs, cpwb, cfence, ccopy, cinvoke, cnvw, cq4, cloc; simpl;
      repeat case_decide; simpl; try done.
    destruct (dm (cdr s)); done.
  Qed.

  Lemma bset_o (f : nat → bool) : Tracking.bset f o o = true.
  Proof. unfold Tracking.bset. by rewrite Nat.eqb_refl. Qed.

  Section sim.
    Context (C1 : MirrorPxTracked.claim1 V).

    Theorem marks_tracked_simulation p :
      cpreach p → rtc cstep (cinit v0 q0 d0) (cms p) ∧ Tracking.reachable V (ctg p, ctx p) ∧ clinked p.
    Proof.
      induction 1 as [x r Hx | p p' _ (Hm & Ht & Hl) Hst].
      - split_and!; [apply rtc_refl | by apply Tracking.reach_init | split; simpl; done].
      - destruct Hl as [Hr Hf].
        destruct Hst as [s s' g x r Hs Hc Hd Hq|s g x r t j Hth Hpc|s g x x' r t d n m Hth Hd Hpc Hret
          |s g x x' r j p' Htr|s g x r t i e n Hth Hpc Hq|s g x r t i Hth Hpc Hq|s s' g x x' r Hs Hc Hx];
          simpl in *.
        + split_and!; [by eapply rtc_r | done |]. split; simpl; [| done].
          intros H. apply (cstep_rec s s'); auto.
        + split_and!.
          * eapply rtc_r; [exact Hm |]. by apply c_qstart.
          * eapply Tracking.reach_step; [exact Ht |]. by apply Tracking.st_call.
          * by split.
        + split_and!.
          * eapply rtc_r; [exact Hm |]. pose proof (c_q4 s t d n m Hth) as H.
            rewrite decide_True in H by done. exact H.
          * eapply Tracking.reach_step; [exact Ht |]. by apply Tracking.st_return.
          * split; simpl; [done | done].
        + split_and!; [done | | by split].
          eapply Tracking.reach_step; [exact Ht |]. by apply Tracking.st_track.
        + assert (crec s = true).
          { apply Hr. destruct (C1 _ _ _ Ht Hq) as [H|H]; [done | congruence]. }
          split_and!; [| | by split].
          * eapply rtc_r; [exact Hm |]. by apply c_start_cas.
          * eapply Tracking.reach_step; [exact Ht |]. by apply Tracking.st_load.
        + assert (crec s = true).
          { apply Hr. destruct (C1 _ _ _ Ht Hq) as [H|H]; [done | congruence]. }
          split_and!; [| | by split].
          * eapply rtc_r; [exact Hm |]. by apply c_start_load.
          * eapply Tracking.reach_step; [exact Ht |]. by apply Tracking.st_load.
        + split_and!; [by eapply rtc_r | | by split].
          eapply Tracking.reach_step; [exact Ht |]. by apply Tracking.st_crash.
    Qed.

    Theorem marks_tracked_yes_gate p : cpreach p → Tracking.query V (ctx p) o = true → crec (cms p) = true.
    Proof.
      intros Hp Hq. destruct (marks_tracked_simulation p Hp) as (_ & Ht & [Hr Hf]).
      apply Hr. destruct (C1 _ _ _ Ht Hq) as [H|H]; [done | congruence].
    Qed.

    Theorem marks_tracked_durably_linearizable p :
      cpreach p → durably_linearizable (reg v0) (chist (cms p)).
    Proof. intros Hp. eapply m2_fix_px_durably_linearizable, (marks_tracked_simulation p Hp). Qed.
  End sim.
End product.

Theorem mirror_marks_px_tracked_durably_linearizable o v0 q0 d0 :
  (∀ p, cpreach Tracking.bitset o v0 q0 d0 p → durably_linearizable (reg v0) (chist (cms _ p))) ∧
  (∀ p, cpreach Tracking.markable o v0 q0 d0 p → durably_linearizable (reg v0) (chist (cms _ p))) ∧
  (∀ p, cpreach Tracking.hybrid o v0 q0 d0 p → durably_linearizable (reg v0) (chist (cms _ p))) ∧
  (∀ p, cpreach Tracking.zmarkable o v0 q0 d0 p → durably_linearizable (reg v0) (chist (cms _ p))) ∧
  (∀ p, cpreach Tracking.pseudo_bitset o v0 q0 d0 p → durably_linearizable (reg v0) (chist (cms _ p))).
Proof.
  split_and!; apply marks_tracked_durably_linearizable.
  - exact Tracking.claim1_bitset.
  - exact Tracking.claim1_markable.
  - exact Tracking.claim1_hybrid.
  - exact Tracking.claim1_zmarkable.
  - exact Tracking.claim1_pseudo_bitset.
Qed.

(** ** Not vacuous *)

Lemma cplain_one s s' t x' :
  cth s' = upd (cth s) t x' → ¬ cdeciding s (cth s t) → (cth s t = CIdle → x' ≠ CRec Q1) →
  (∀ u, cdeciding s (cth s u) → cth s' u = cth s u) ∧ (∀ u, cth s u = CIdle → cth s' u ≠ CRec Q1).
Proof.
  intros E Hn Hq. rewrite E. split; intros u Hu; (destruct (decide (u = t)) as [->|Hne];
    [| rewrite upd_other by done]); try done.
  - rewrite upd_same. by apply Hq.
  - by rewrite Hu.
Qed.

Ltac ccur R := match type of R with cpreach _ _ _ _ _ ?x => x end.
Ltac cnorm R := match type of R with cpreach ?V ?o ?v ?q ?d ?x =>
  let y := eval vm_compute in x in change (cpreach V o v q d y) in R end.
Ltac cgo R H := let R' := fresh in
  pose proof (cpreach_step _ _ _ _ _ _ _ R H) as R'; clear R; rename R' into R; cnorm R.
Ltac cm R H t := let p := ccur R in
  let V := match type of R with cpreach ?V _ _ _ _ _ => V end in
  let o := match type of R with cpreach _ ?o _ _ _ _ => o end in
  let s := match type of H with cstep ?s _ => s end in
  let s' := match type of H with cstep _ ?s' => s' end in
  let H3 := fresh in
  pose proof (cplain_one s s' t _ eq_refl ltac:(vm_compute; first [tauto | intros Hx; discriminate Hx])
                ltac:(vm_compute; first [intros _ Hx; discriminate Hx | intros Hx; discriminate Hx])) as H3;
  let H4 := fresh in
  pose proof (cp_mirror V o s s' (ctg _ p) (ctx _ p) (rid _ p) H ltac:(intros Hh; vm_compute in Hh; discriminate)
                (proj1 H3) (proj2 H3)) as H4; clear H3;
  cgo R H4; clear H4.

Definition cnvt_hist : history mop nat := [Invoke 0 0 OLoad; Return 0 3].

(** Under [bitset], the field [0], the crash image [(3, 1)] and DRAM
    holding it unmarked: thread 0 invokes a load and its query answers
    "not recovered" (the table is empty after the crash), so it waits;
    thread 1 calls [recover_field_ptr] (tracking thread 100), which reads
    DRAM and NVMM, is outside line 3's window, writes back and fences
    (R1) and returns at line 4; its tracking thread sets the bit; thread
    0's query now answers "recovered" and its load returns 3. *)
Theorem mirror_marks_px_tracked_not_vacuous :
  ∃ p, cpreach Tracking.bitset 0 3 1 (DP 3 false 1) p ∧ chist (cms _ p) = cnvt_hist ∧
    durably_linearizable (reg 3) cnvt_hist ∧
    Tracking.query Tracking.bitset MirrorPxTracked.arr0 0 = false ∧
    Tracking.pc (ctg _ p) 0 = Tracking.THold 0 ∧ Tracking.ret (ctg _ p) 0 = true.
Proof.
  pose proof (cpreach_init Tracking.bitset 0 3 1 (DP 3 false 1) MirrorPxTracked.arr0 (λ _, 0) eq_refl) as R.
  let p := ccur R in cm R (c_inv_load (cms _ p) 0 eq_refl) 0.
  let p := ccur R in cgo R (cp_qstart _ 0 (cms _ p) (ctg _ p) (ctx _ p) (rid _ p) 1 100 eq_refl eq_refl).
  let p := ccur R in cm R (c_q1 (cms _ p) 1 eq_refl) 1.
  let p := ccur R in cm R (c_q2 (cms _ p) 1 (DP 3 false 1) eq_refl) 1.
  let p := ccur R in cm R (c_q22_go (cms _ p) 1 (DP 3 false 1) (3, 1) eq_refl eq_refl ltac:(simpl; lia)) 1.
  let p := ccur R in cm R (c_qpwb (cms _ p) 1 (DP 3 false 1) (3, 1) eq_refl) 1.
  let p := ccur R in cm R (c_qfence (cms _ p) 1 (DP 3 false 1) (3, 1) eq_refl) 1.
  let p := ccur R in cgo R (cp_q4 _ 0 (cms _ p) (ctg _ p) (ctx _ p) (ctx _ p) (rid _ p) 1 (DP 3 false 1) (3, 1) false
                                eq_refl eq_refl eq_refl eq_refl).
  let p := ccur R in cgo R (cp_vstep _ 0 (cms _ p) (ctg _ p) (ctx _ p) _ (rid _ p) 100 Tracking.TIdle
                                (Tracking.bitset_mark (ctx _ p) 0)).
  let p := ccur R in cgo R (cp_start_load _ 0 (cms _ p) (ctg _ p) (ctx _ p) (rid _ p) 0 0 eq_refl eq_refl eq_refl).
  let p := ccur R in cm R (c_ld1 (cms _ p) 0 0 eq_refl) 0.
  let p := ccur R in cm R (c_ret (cms _ p) 0 0 OLoad 3 eq_refl) 0.
  let p := ccur R in
  assert (Hh : chist (cms _ p) = cnvt_hist) by (vm_compute; reflexivity);
  exists p; split; [exact R |]; split; [exact Hh |]; split;
  [rewrite <- Hh; exact (marks_tracked_durably_linearizable _ _ _ _ _ Tracking.claim1_bitset p R)
  | split_and!; vm_compute; reflexivity].
Qed.

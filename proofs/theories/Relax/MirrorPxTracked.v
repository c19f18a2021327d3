(** * Mirror's field under a tracking variant: the gate of MirrorPxLin.v composed with Tracking.v

    [Relax/MirrorPxLin.v] lets an operation make its first access to the
    field only once [rec] holds (some [recover_field] on the field
    returned since the last crash): tracking as a gate.  [Relax/Tracking.v]
    proves Claim 1 for the five tracking variants of §6.4: a query that
    answers "recovered" for an object implies [rf g o] (a recover call on
    it returned since the last crash, or it was allocated since then).
    Here the two are run in lock-step, generic over the variant [V], and
    the gate is replaced by what the code does:

    - the state ([pst]): MirrorPxLin.v's state [ms] (the field, its
      threads and its ghost history), Tracking.v's ghost [tg] (its [ret]
      and [fresh], and the program counter [pc] of each tracking thread)
      and the variant's tracking state [tx], and [own i]: operation [i]
      returned from its own recover call since the last crash (the code's
      control flow: [Space::recover_tracked] returns to [track_field],
      which returns to the operation).  The field is the tracked object
      [o]; operation [i] is tracking thread [i] (operation ids are fresh,
      so each operation has a tracking thread of its own);
    - [p_mirror]: every Mirror step other than a crash and other than a
      tracking decision: no thread that is at the tracking step ([PStart])
      or about to return from its recover call (line 3 with equal pairs,
      line 5's DWCAS about to succeed) moves ([deciding]).  These steps do
      not read [rec] (only [s_load], [s_cas0], [s_store0] do, all from
      [PStart]: [p_mirror_keeps_start]); the tracking state stays;
    - [p_query_no]: [Space::track_field] (patomic.rs, [needed]) or
      Algorithm 6.4's L1 ([Space::load_ptr]) queries the variant
      ([Tracking.query]) and the answer is "not recovered": the thread
      calls [recover_field] (Algorithm 6.2 line 1, [Space::recover_tracked]
      calling [Space::recover_field]); Tracking.v's [st_call];
    - [p_retry]: the call's goto 1 (Algorithm 6.2, the [continue] of
      [Space::recover_field]'s loop): line 1 again, inside the same call;
    - [p_return3], [p_return5]: the call returns, at line 3 (equal pairs)
      or at line 5 (its DRAM DWCAS succeeded); the variant's [on_return]
      (zeroed-DRAM variants: line 5 writes the sequence word); Tracking.v's
      [st_return]; [own] records it for the operation;
    - [p_vstep]: the variant's own steps ([Tracking.tstep]), by any
      tracking thread, at any time: setting the recovered mark after the
      call returned ([recover_tracked]'s [b.set(slot)] for [Bitset] and
      [Hybrid]; Algorithm 6.4 L2.3's unmarking DWCAS in [load_ptr] for the
      pointer variants), re-marking, a holder's writes; Tracking.v's
      [st_track];
    - [p_load], [p_cas0], [p_store0]: the first access, as MirrorPxLin.v's
      [s_load], [s_cas0], [s_store0] but with [pass] instead of
      [rec = true]: either the query answers "recovered" (track_field's
      [needed] false, or Algorithm 6.4's L3; Tracking.v's [st_load]), or
      the operation's own recover call returned ([own]; the code goes on
      without asking again);
    - [p_crash]: a crash of both: MirrorPxLin.v's [s_crash] (the only step
      that appends [Crash] to the history) and Tracking.v's [st_crash]
      (threads die, the ghost is reset, the tracking state becomes any
      state the variant allows after a crash: [Tracking.crashed]).
    A run ([preach]) starts from MirrorPxLin.v's [init] and a crashed
    tracking state.

    Proved, for every variant whose Claim 1 holds (hypothesis [claim1]):
    - [tracked_simulation]: in every reachable product state the Mirror
      part is reachable in MirrorPxLin.v's gated model ([reach]), the
      tracking part is reachable in Tracking.v's model ([reachable]), and
      they are linked ([linked]: an operation's [own] implies the ghost's
      [ret o], which implies [rec]; nothing allocates [o], so [fresh o]
      stays false).  The step that matters: a query that answers
      "recovered" gives [rf g o] by Claim 1, hence [ret g o] (not fresh),
      hence [rec] (the link), which is the gate [s_load], [s_cas0],
      [s_store0] require;
    - [tracked_yes_gate]: a "recovered" answer only where the gate holds;
    - [tracked_durably_linearizable], [tracked_wf]: every run's history is
      durably linearizable for the register [reg v0], and well formed;
    - [mirror_px_tracked_durably_linearizable]: the five variants by name
      (Tracking.v's [bitset], [markable], [hybrid], [zmarkable],
      [pseudo_bitset], by their [claim1_*]), each for every tracked object
      id;
    - [mirror_px_tracked_not_vacuous] ([mirror_px_tracked_not_vacuous_pseudo]
      under [pseudo_bitset], recovering through line 5): under [bitset], an explicit run in
      which operation 0 finds the field not recovered (the table is
      empty after the crash), calls [recover_field] (returning at line 3),
      sets the bit and loads; operation 1 then finds the bit set and loads
      without calling [recover_field].

    What is still abstracted (beyond MirrorPxLin.v's and Tracking.v's own
    lists): one field, which is the tracked object itself; for the node
    variants ([Markable], [Hybrid], [ZMarkable]) the code queries the node
    through the pointer that leads to it ([load_ptr]) and recovers it with
    [recover_node], which recovers the node's fields one by one: here the
    node is the field and its [recover_node] is the field's
    [recover_field]; the variants' pointer and sequence-word steps
    ([p_vstep]) are free-standing tracking steps, not tied to the Mirror
    writes that make them in the code (more runs, not fewer); allocation
    is not modelled (the field exists at the run's start); the Rust's
    [Tracking::Markable]/[Hybrid]/[ZMarkable] [track_field] does not
    query a data field (its node was queried before).  The Mirror steps
    themselves, and what recover_field does to the replicas, are
    MirrorPxLin.v's. *)
From stdpp Require Import base list.
From Coq Require Import Lia.
From perdure.Core Require Import History DurableLin.
From perdure.Relax Require Import MirrorPxLin.
From perdure.Relax Require Tracking.

(** A tracking thread's pc set to [p] (the ghost's [ret], [fresh] unchanged). *)
Definition tset (g : Tracking.ghost) (i : nat) (p : Tracking.tpc) : Tracking.ghost :=
  Tracking.G (Tracking.ret g) (Tracking.fresh g) (Tracking.fset (Tracking.pc g) i p).

(** A thread at a tracking decision: at the tracking step, or about to
    return from its recover call (line 3 with equal pairs, or line 5 with
    DRAM still the pair read at line 1). *)
Definition deciding (s : st) (x : tst) : Prop :=
  match x with
  | TOp _ _ PStart => True
  | TOp _ _ (PRc3 d n) => n = d
  | TOp _ _ (PR5 d _) => dr s = d
  | _ => False
  end.

Section product.
  Context (V : Tracking.variant) (o : nat) (v0 : nat).

  Record pst : Type := PSt {
    ms : st;                      (* MirrorPxLin.v's state *)
    tg : Tracking.ghost;          (* Tracking.v's ghost: ret, fresh (ghost), each tracking thread's pc *)
    tx : Tracking.tstate V;       (* the variant's tracking state *)
    own : nat → bool              (* operation i's own recover call returned since the last crash *)
  }.

  (** The first access may happen: the query answers "recovered"
      (Tracking.v's [st_load]: the tracking thread then holds [o]), or the
      operation's own recover call returned. *)
  Definition pass (g : Tracking.ghost) (x : Tracking.tstate V) (w : nat → bool) (i : nat)
      (g' : Tracking.ghost) : Prop :=
    (Tracking.pc g i = Tracking.TIdle ∧ Tracking.query V x o = true ∧ g' = tset g i (Tracking.THold o)) ∨
    (w i = true ∧ g' = g).

  Inductive pstep : pst → pst → Prop :=
  (* every Mirror step but a crash, by a thread not at a tracking decision *)
  | p_mirror s s' g x w :
      step s s' → hist s' ≠ hist s ++ [Crash] →
      (∀ t, deciding s (th s t) → th s' t = th s t) →
      pstep (PSt s g x w) (PSt s' g x w)
  (* track_field / load_ptr L1: the query answers "not recovered"; call recover_field (line 1) *)
  | p_query_no s g x w t i op :
      th s t = TOp i op PStart → Tracking.pc g i = Tracking.TIdle → Tracking.query V x o = false →
      pstep (PSt s g x w) (PSt (sth s t (TOp i op (PRc2 (dr s)))) (tset g i (Tracking.TRec o)) x w)
  (* recover_field's goto 1: line 1 again, inside the same call *)
  | p_retry s g x w t i op :
      th s t = TOp i op PStart → Tracking.pc g i = Tracking.TRec o →
      pstep (PSt s g x w) (PSt (sth s t (TOp i op (PRc2 (dr s)))) g x w)
  (* line 3: equal pairs, the call returns *)
  | p_return3 s g x x' w t i op d n :
      th s t = TOp i op (PRc3 d n) → n = d →
      Tracking.pc g i = Tracking.TRec o → Tracking.on_return V o x x' →
      pstep (PSt s g x w)
        (PSt (St (ws s) (mk s) (pw s) (dr s) true (upd (th s) t (TOp i op PStart)) (nid s) (xh s) (infl s) (gd s))
             (Tracking.G (Tracking.bset (Tracking.ret g) o) (Tracking.fresh g)
                (Tracking.fset (Tracking.pc g) i (Tracking.TDone o))) x' (upd w i true))
  (* line 5: the DRAM DWCAS succeeds, the call returns *)
  | p_return5 s g x x' w t i op d n :
      th s t = TOp i op (PR5 d n) → dr s = d →
      Tracking.pc g i = Tracking.TRec o → Tracking.on_return V o x x' →
      pstep (PSt s g x w)
        (PSt (St (ws s) (mk s) (pw s) n true (upd (th s) t (TOp i op PStart)) (nid s) (xh s ++ ins (infl s)) None (gd s))
             (Tracking.G (Tracking.bset (Tracking.ret g) o) (Tracking.fresh g)
                (Tracking.fset (Tracking.pc g) i (Tracking.TDone o))) x' (upd w i true))
  (* the variant's own steps (recover_tracked's b.set, load_ptr's unmarking DWCAS, ...) *)
  | p_vstep s g x x' w j p' :
      Tracking.tstep V (Tracking.pc g j) x p' x' →
      pstep (PSt s g x w) (PSt s (tset g j p') x' w)
  (* the first access: PAtomic::load (tracked_val) *)
  | p_load s g x w g' t i :
      th s t = TOp i OLoad PStart → pass g x w i g' →
      pstep (PSt s g x w) (PSt (sxh (sth s t (TOp i OLoad (PRet (dr s).1))) [XL i OLoad (dr s).1]) g' x w)
  (* PAtomic::compare_exchange *)
  | p_cas0 s g x w g' t i e n :
      th s t = TOp i (OCas e n) PStart → pass g x w i g' →
      pstep (PSt s g x w) (PSt (sth s t (TOp i (OCas e n) (PL5 e))) g' x w)
  (* PAtomic::store (expected) *)
  | p_store0 s g x w g' t i v :
      th s t = TOp i (OStore v) PStart → pass g x w i g' →
      pstep (PSt s g x w) (PSt (sth s t (TOp i (OStore v) (PL5 (dr s).1))) g' x w)
  (* a crash of both *)
  | p_crash s s' g x x' w :
      step s s' → hist s' = hist s ++ [Crash] → Tracking.crashed V x' →
      pstep (PSt s g x w)
        (PSt s' (Tracking.G (λ _, false) (λ _, false) (λ _, Tracking.TIdle)) x' (λ _, false)).

  Inductive preach : pst → Prop :=
  | preach_init q0 d x :
      Tracking.crashed V x →
      preach (PSt (init v0 q0 d) (Tracking.G (λ _, false) (λ _, false) (λ _, Tracking.TIdle)) x (λ _, false))
  | preach_step p p' : preach p → pstep p p' → preach p'.

  (** The link between the two models' notions of "recovered". *)
  Record linked (p : pst) : Prop := {
    l_own : ∀ i, own p i = true → Tracking.ret (tg p) o = true;
    l_ret : Tracking.ret (tg p) o = true → rec (ms p) = true;
    l_fresh : Tracking.fresh (tg p) o = false;
  }.

  (** Claim 1 of the variant, as Tracking.v proves it for each. *)
  Definition claim1 : Prop :=
    ∀ g x o', Tracking.reachable V (g, x) → Tracking.query V x o' = true → Tracking.rf g o'.

  (** A Mirror step other than a crash keeps the field recovered. *)
  Lemma step_rec s s' : step s s' → hist s' ≠ hist s ++ [Crash] → rec s = true → rec s' = true.
  Proof.
    destruct 1; simpl; try done.
    intros Hc _. exfalso. apply Hc. unfold hist. simpl. rewrite !erase_app.
    case_decide; simpl; rewrite ?erase_ins; done.
  Qed.

  (** [p_mirror] never moves a thread from the tracking step, so none of
      its steps is one of the three Mirror steps that read [rec]
      ([s_load], [s_cas0], [s_store0], all from [PStart]). *)
  Lemma p_mirror_keeps_start s s' :
    (∀ t, deciding s (th s t) → th s' t = th s t) →
    ∀ t i op, th s t = TOp i op PStart → th s' t = TOp i op PStart.
  Proof. intros H t i op E. rewrite H; [done |]. by rewrite E. Qed.

  Lemma bset_o (f : nat → bool) : Tracking.bset f o o = true.
  Proof. unfold Tracking.bset. by rewrite Nat.eqb_refl. Qed.

  Section sim.
    Context (C1 : claim1).

    Lemma pass_rec p g' i :
      Tracking.reachable V (tg p, tx p) → linked p → pass (tg p) (tx p) (own p) i g' → rec (ms p) = true.
    Proof.
      intros Hr [Ho Hret Hf] [(_ & Hq & _)|(Hw & _)].
      - apply Hret. destruct (C1 _ _ _ Hr Hq) as [H|H]; [done | congruence].
      - by apply Hret, (Ho i).
    Qed.

    Lemma pass_track p g' i :
      pass (tg p) (tx p) (own p) i g' → Tracking.reachable V (tg p, tx p) →
      Tracking.reachable V (g', tx p) ∧ Tracking.ret g' = Tracking.ret (tg p) ∧
      Tracking.fresh g' = Tracking.fresh (tg p).
    Proof.
      intros [(Hpc & Hq & ->)|(_ & ->)] Hr; [| done].
      split_and!; [| done | done]. destruct p as [s g x w]. simpl in *.
      eapply Tracking.reach_step; [exact Hr |]. by apply Tracking.st_load.
    Qed.

    Theorem tracked_simulation p :
      preach p → reach v0 (ms p) ∧ Tracking.reachable V (tg p, tx p) ∧ linked p.
    Proof.
      induction 1 as [q0 d x Hx | p p' _ (Hm & Ht & Hl) Hst].
      - split_and!; [apply reach_init | by apply Tracking.reach_init | split; simpl; done].
      - destruct Hst as [s s' g x w Hs Hc Hd|s g x w t i op Hth Hpc Hq|s g x w t i op Hth Hpc
          |s g x x' w t i op d n Hth Hn Hpc Hret|s g x x' w t i op d n Hth Hn Hpc Hret
          |s g x x' w j p' Htr|s g x w g' t i Hth Hp|s g x w g' t i e n Hth Hp|s g x w g' t i v Hth Hp
          |s s' g x x' w Hs Hc Hx]; simpl in *.
        + split_and!; [by eapply reach_step | done |].
          destruct Hl as [Ho Hr Hf]. split; simpl; try done. intros H. apply (step_rec s s'); auto.
        + split_and!.
          * eapply reach_step; [exact Hm |]. by apply s_late1.
          * eapply Tracking.reach_step; [exact Ht |]. by apply Tracking.st_call.
          * destruct Hl as [Ho Hr Hf]. by split.
        + split_and!; [| done | destruct Hl; by split]. eapply reach_step; [exact Hm |]. by apply s_late1.
        + split_and!.
          * eapply reach_step; [exact Hm |]. by eapply s_late3.
          * eapply Tracking.reach_step; [exact Ht |]. by apply Tracking.st_return.
          * destruct Hl as [Ho Hr Hf]. split; simpl; try done. intros; apply bset_o.
        + split_and!.
          * eapply reach_step; [exact Hm |]. subst d. by eapply s_late5_ok.
          * eapply Tracking.reach_step; [exact Ht |]. by apply Tracking.st_return.
          * destruct Hl as [Ho Hr Hf]. split; simpl; try done. intros; apply bset_o.
        + split_and!; [done | | by destruct Hl].
          eapply Tracking.reach_step; [exact Ht |]. by apply Tracking.st_track.
        + pose proof (pass_rec (PSt s g x w) g' i Ht Hl Hp) as Hrec.
          destruct (pass_track (PSt s g x w) g' i Hp Ht) as (Ht' & Er & Ef).
          split_and!; [| done |].
          * eapply reach_step; [exact Hm |]. by apply s_load.
          * destruct Hl as [Ho Hr Hf]. split; simpl in *; rewrite ?Er, ?Ef; done.
        + pose proof (pass_rec (PSt s g x w) g' i Ht Hl Hp) as Hrec.
          destruct (pass_track (PSt s g x w) g' i Hp Ht) as (Ht' & Er & Ef).
          split_and!; [| done |].
          * eapply reach_step; [exact Hm |]. by apply s_cas0.
          * destruct Hl as [Ho Hr Hf]. split; simpl in *; rewrite ?Er, ?Ef; done.
        + pose proof (pass_rec (PSt s g x w) g' i Ht Hl Hp) as Hrec.
          destruct (pass_track (PSt s g x w) g' i Hp Ht) as (Ht' & Er & Ef).
          split_and!; [| done |].
          * eapply reach_step; [exact Hm |]. by apply s_store0.
          * destruct Hl as [Ho Hr Hf]. split; simpl in *; rewrite ?Er, ?Ef; done.
        + split_and!; [by eapply reach_step | | by split].
          eapply Tracking.reach_step; [exact Ht |]. by apply Tracking.st_crash.
    Qed.

    (** The query answers "recovered" only where MirrorPxLin.v's gate holds. *)
    Theorem tracked_yes_gate p : preach p → Tracking.query V (tx p) o = true → rec (ms p) = true.
    Proof.
      intros Hp Hq. destruct (tracked_simulation p Hp) as (_ & Ht & [_ Hr Hf]).
      apply Hr. destruct (C1 _ _ _ Ht Hq) as [H|H]; [done | congruence].
    Qed.

    Theorem tracked_durably_linearizable p : preach p → durably_linearizable (reg v0) (hist (ms p)).
    Proof. intros Hp. apply mirror_px_durably_linearizable, (tracked_simulation p Hp). Qed.

    Theorem tracked_wf p : preach p → wf (hist (ms p)).
    Proof. intros Hp. eapply mirror_px_wf, (tracked_simulation p Hp). Qed.
  End sim.
End product.

(** ** The five variants *)
Theorem mirror_px_tracked_durably_linearizable o v0 :
  (∀ p, preach Tracking.bitset o v0 p → durably_linearizable (reg v0) (hist (ms _ p))) ∧
  (∀ p, preach Tracking.markable o v0 p → durably_linearizable (reg v0) (hist (ms _ p))) ∧
  (∀ p, preach Tracking.hybrid o v0 p → durably_linearizable (reg v0) (hist (ms _ p))) ∧
  (∀ p, preach Tracking.zmarkable o v0 p → durably_linearizable (reg v0) (hist (ms _ p))) ∧
  (∀ p, preach Tracking.pseudo_bitset o v0 p → durably_linearizable (reg v0) (hist (ms _ p))).
Proof.
  split_and!; apply tracked_durably_linearizable.
  - exact Tracking.claim1_bitset.
  - exact Tracking.claim1_markable.
  - exact Tracking.claim1_hybrid.
  - exact Tracking.claim1_zmarkable.
  - exact Tracking.claim1_pseudo_bitset.
Qed.

(** ** Not vacuous *)

(** A Mirror step of one thread that is not at a tracking decision is a
    [p_mirror] step. *)
Lemma plain_one s s' t x' :
  th s' = upd (th s) t x' → ¬ deciding s (th s t) → ∀ u, deciding s (th s u) → th s' u = th s u.
Proof.
  intros E Hn u Hu. rewrite E. destruct (decide (u = t)) as [->|Hne]; [done |]. by apply upd_other.
Qed.

Ltac pcur R := match type of R with preach _ _ _ ?x => x end.
Ltac pnorm R := match type of R with preach ?V ?o ?v ?x =>
  let y := eval vm_compute in x in change (preach V o v y) in R end.
(** Extend the run [R] by the product step [H]. *)
Ltac pgo R H := let R' := fresh in
  pose proof (preach_step _ _ _ _ _ R H) as R'; clear R; rename R' into R; pnorm R.
(** Extend the run [R] by the Mirror step [H] (of one thread, not at a tracking decision). *)
Ltac pm R H := let p := pcur R in
  let V := match type of R with preach ?V _ _ _ => V end in
  let o := match type of R with preach _ ?o _ _ => o end in
  let H' := fresh in pose proof (p_mirror V o _ _ (tg _ p) (tx _ p) (own _ p) H) as H';
  let H'' := fresh in
  pose proof (H' ltac:(intros Hh; vm_compute in Hh; discriminate)
                ltac:(eapply plain_one; [reflexivity | vm_compute; first [tauto | intros Hx; discriminate Hx]])) as H'';
  clear H'; pgo R H''; clear H''.

(** The bit table right after a crash: garbage, and no cell initialised. *)
Definition arr0 : Tracking.arr := Tracking.Arr (λ _, true) (λ _, 0) (λ _, 0) 0.

Definition nvt_hist : history mop nat := [Invoke 0 0 OLoad; Return 0 3; Invoke 1 0 OLoad; Return 1 3].

(** Under [bitset], the field [0], and the crash image [(3, 1)] (DRAM
    holding the same pair): operation 0 (a load by thread 0) queries the
    table, which answers "not recovered" (the table is empty after the
    crash); it calls [recover_field], which returns at line 3; it sets the
    bit ([recover_tracked]'s [b.set]) and loads 3.  Operation 1 (another
    load by thread 0) queries the table, which answers "recovered": it
    loads 3 without a recover call.  In the final state: operation 0's own
    call returned and its tracking thread is idle again (the bit is set);
    operation 1's tracking thread holds the field (only a "recovered"
    answer, [st_load], makes it hold it) and operation 1 made no recover
    call; one recover call returned since the crash. *)
Theorem mirror_px_tracked_not_vacuous :
  ∃ p, preach Tracking.bitset 0 3 p ∧ hist (ms _ p) = nvt_hist ∧
    durably_linearizable (reg 3) nvt_hist ∧
    Tracking.query Tracking.bitset arr0 0 = false ∧
    own _ p 0 = true ∧ Tracking.pc (tg _ p) 0 = Tracking.TIdle ∧
    own _ p 1 = false ∧ Tracking.pc (tg _ p) 1 = Tracking.THold 0 ∧
    Tracking.ret (tg _ p) 0 = true.
Proof.
  pose proof (preach_init Tracking.bitset 0 3 1 (3, 1) arr0 eq_refl) as R.
  (* operation 0 invokes a load; the query answers no; recover_field: line 1, line 2, line 3 *)
  let p := pcur R in pm R (s_invoke (ms _ p) 0 OLoad eq_refl).
  let p := pcur R in pgo R (p_query_no _ 0 (ms _ p) (tg _ p) (tx _ p) (own _ p) 0 0 OLoad eq_refl eq_refl eq_refl).
  let p := pcur R in pm R (s_late2 (ms _ p) 0 0 OLoad (3, 1) eq_refl).
  let p := pcur R in pgo R (p_return3 _ 0 (ms _ p) (tg _ p) (tx _ p) (tx _ p) (own _ p) 0 0 OLoad (3, 1) (3, 1)
                                eq_refl eq_refl eq_refl eq_refl).
  (* recover_tracked sets the bit *)
  let p := pcur R in pgo R (p_vstep _ 0 (ms _ p) (tg _ p) (tx _ p) _ (own _ p) 0 Tracking.TIdle
                                (Tracking.bitset_mark (tx _ p) 0)).
  (* the load reads DRAM and returns *)
  let p := pcur R in pgo R (p_load _ 0 (ms _ p) (tg _ p) (tx _ p) (own _ p) (tg _ p) 0 0 eq_refl
                                (or_intror (conj eq_refl eq_refl))).
  let p := pcur R in pm R (s_ret (ms _ p) 0 0 OLoad 3 eq_refl).
  (* operation 1: the query answers yes; the load reads DRAM and returns *)
  let p := pcur R in pm R (s_invoke (ms _ p) 0 OLoad eq_refl).
  let p := pcur R in pgo R (p_load _ 0 (ms _ p) (tg _ p) (tx _ p) (own _ p) _ 0 1 eq_refl
                                (or_introl (conj eq_refl (conj eq_refl eq_refl)))).
  let p := pcur R in pm R (s_ret (ms _ p) 0 1 OLoad 3 eq_refl).
  let p := pcur R in
  assert (Hh : hist (ms _ p) = nvt_hist) by (vm_compute; reflexivity);
  exists p; split; [exact R |]; split; [exact Hh |]; split;
  [rewrite <- Hh; exact (tracked_durably_linearizable _ _ _ Tracking.claim1_bitset p R)
  | split_and!; vm_compute; reflexivity].
Qed.

(** Under [pseudo_bitset] (zeroed DRAM: the DRAM pair [(0, 0)], the
    sequence word's MSB clear), the field [0], and the crash image
    [(3, 1)]: operation 0's query answers "not recovered"; its
    [recover_field] reads DRAM's [(0, 0)] (line 1) and NVMM's [(3, 1)]
    (line 2), is outside line 4's window, writes back and fences (R1) and
    returns at line 5, whose DWCAS writes the sequence word with its MSB
    set ([on_return]); the load returns 3.  Operation 1's query answers
    "recovered" and it loads 3 without a recover call. *)
Theorem mirror_px_tracked_not_vacuous_pseudo :
  ∃ p, preach Tracking.pseudo_bitset 0 3 p ∧ hist (ms _ p) = nvt_hist ∧
    durably_linearizable (reg 3) nvt_hist ∧
    Tracking.query Tracking.pseudo_bitset (λ _, 0%Z) 0 = false ∧
    own _ p 0 = true ∧ own _ p 1 = false ∧ Tracking.pc (tg _ p) 1 = Tracking.THold 0.
Proof.
  pose proof (preach_init Tracking.pseudo_bitset 0 3 1 (0, 0) (λ _, 0%Z) (λ _, eq_refl)) as R.
  let p := pcur R in pm R (s_invoke (ms _ p) 0 OLoad eq_refl).
  let p := pcur R in pgo R (p_query_no _ 0 (ms _ p) (tg _ p) (tx _ p) (own _ p) 0 0 OLoad eq_refl eq_refl eq_refl).
  let p := pcur R in pm R (s_late2 (ms _ p) 0 0 OLoad (0, 0) eq_refl).
  let p := pcur R in pm R (s_late4 (ms _ p) 0 0 OLoad (0, 0) (3, 1) eq_refl ltac:(discriminate) eq_refl ltac:(simpl; lia)).
  let p := pcur R in pm R (s_late_pwb (ms _ p) 0 0 OLoad (0, 0) (3, 1) eq_refl).
  let p := pcur R in pm R (s_late_fence (ms _ p) 0 0 OLoad (0, 0) (3, 1) eq_refl).
  let p := pcur R in pgo R (p_return5 _ 0 (ms _ p) (tg _ p) (tx _ p) _ (own _ p) 0 0 OLoad (0, 0) (3, 1)
                                eq_refl eq_refl eq_refl (Tracking.word_line5 _ 0 (tx _ p) 1%Z)).
  let p := pcur R in pgo R (p_load _ 0 (ms _ p) (tg _ p) (tx _ p) (own _ p) (tg _ p) 0 0 eq_refl
                                (or_intror (conj eq_refl eq_refl))).
  let p := pcur R in pm R (s_ret (ms _ p) 0 0 OLoad 3 eq_refl).
  let p := pcur R in pm R (s_invoke (ms _ p) 0 OLoad eq_refl).
  let p := pcur R in pgo R (p_load _ 0 (ms _ p) (tg _ p) (tx _ p) (own _ p) _ 0 1 eq_refl
                                (or_introl (conj eq_refl (conj eq_refl eq_refl)))).
  let p := pcur R in pm R (s_ret (ms _ p) 0 1 OLoad 3 eq_refl).
  let p := pcur R in
  assert (Hh : hist (ms _ p) = nvt_hist) by (vm_compute; reflexivity);
  exists p; split; [exact R |]; split; [exact Hh |]; split;
  [rewrite <- Hh; exact (tracked_durably_linearizable _ _ _ Tracking.claim1_pseudo_bitset p R)
  | split_and!; vm_compute; reflexivity].
Qed.

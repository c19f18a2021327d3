(** * Memento's detectable insert and delete on Px86: durably linearizable, detectable histories

    [InsDelPx.v] proves detectable insertion and deletion (seed 001, §4:
    Algorithm 3's LOAD L1–L15, INSERT L16–L26, DELETE L27–L40, Algorithm
    4's LOADHELP; [impl/perdure-memento/src/insdel.rs] [InsDelAtomic::insert],
    [delete], [load], [load_help]) detectable on the model's states
    ([insdel_px_detectable]).  This file states it over the histories of
    [Core/History.v] and the verdicts of [Core/DurableLin.v], as
    [CheckpointPxLin.v] does for CHECKPOINT: every run of that model
    ([step N NB fixed]: [N] threads, [NB] blocks, helping, full-system and
    thread crashes, every crash image Px86 allows) is paired with a ghost
    history of invoke, return, crash and recover events with linearization
    points ([gstep]), and those histories are durably linearizable and
    detectable for the sequential specification [slot_spec]: a one-block
    slot (0: empty) where INSERT [n] into an empty slot returns OK (1) and
    fills it, DELETE of a full slot returns its block and empties it, and
    either may return ERR (0) without effect in any state -- the seed's
    ERR means "retry": a recovered operation that did not take effect
    returns it, and an INSERT fails on a persist-bit word whose insert is
    visible but not yet durable.

    The history ([gx], built step by step from the model's steps):
    - [Invoke (oid t k) t o] when thread [t] starts root operation [k]
      ([SInsStart]: [o = IIns n]; [SDelStart]: [o = IDel]);
    - [Return] at the commit ([SCommit]) with the committed result, or
      [Recover] with it if a full crash cut the operation off ([gc]);
    - [Crash] at each full crash ([g_crash]); a thread crash ([STCrash]) is
      no event ([History.v]'s crash is a full-system crash): the operation
      stays pending and its recovery returns it.
    The linearization points ([XL], [pts]): where an operation's effect
    becomes durable, in whichever thread's step that happens:
    - INSERT [n]: the step where its persist-bit write [(1, n)] in [LOC]
      falls under [LOC]'s mark (its own L24 write-back and the fence of
      L25's CAS, another thread's LOAD L11–L13, any thread's fence covering
      an earlier [pwb] of [LOC]), or the full crash whose image keeps it;
    - DELETE of [b]: the step where its [repl] write (L34) falls under
      [b]'s mark (its own L37–L38, another thread's LOADHELP L10–L11 or
      failed L35), or the full crash whose image keeps it;
    - an operation that commits ERR: at its commit.
    Before its point, a crash may drop the effect (then the recovery
    returns ERR and the point is the commit's); after it, no crash undoes
    it.  At most one effect is undurable at any time ([ue_unique]), so a
    step makes at most one point.

    Proved, for the fixed protocol, every [N], [NB], schedule and number of
    crashes:
    - [insdel_lin_every_run]: the model's reachable states are exactly
      those of the ghost runs ([greach]);
    - [insdel_lin_durably_linearizable]: every ghost run's history is
      durably linearizable for [slot_spec], the ghost points being the
      witness; [insdel_lin_wf]: the histories are well formed;
    - [insdel_lin_cut_off_recovered]: every operation a crash cut off is
      recovered, or is the one its thread is still running;
    - [insdel_lin_detectable]: once no thread is inside a root operation,
      the history is [detectable];
    - [insdel_lin_slot]: the specification's slot is what the memory
      holds durably: the block whose insert is under [LOC]'s mark and whose
      [repl] word is not under its own, or empty ([slot_is]);
    - [insdel_lin_points]: an in-flight operation has a point iff its
      effect is durable, with the result recovery computes from it;
    - [insdel_lin_not_vacuous]: an explicit run (one thread, one block)
      whose history is [invoke; crash; recover OK]: an INSERT whose write a
      crash keeps by eviction, before any write-back, recovered as OK.
    Everything rests on the invariant [ginv] ([hinv] on the threads and
    memory of a reachable state), which uses [InsDelPx.v]'s [inv]
    ([reachable_inv]: a deleted block's insert persisted, [m_B]; a block
    that left [LOC] has its deletion persisted, [m_C]; the threads'
    [pcok], [t_ins], [t_tag], [t_done]), not re-proved.  The steps from
    [ginv] to the theorems that do not depend on the model are
    [DurableLin.v]'s (e), shared with [CheckpointPxLin.v] and
    [DetCasPxLin.v]: [current_across_crash] ([hinv_quiet]),
    [rtc_preserved] ([greach_ginv]), [ghost_runs]
    ([insdel_lin_every_run]), [durably_linearizable_erase], and
    [numbered_cut_off_recovered], [numbered_detectable] for
    [insdel_lin_cut_off_recovered], [insdel_lin_detectable]
    ([greach_numbered]: the history's operations are the threads' numbered
    root operations).

    What the model abstracts: what [InsDelPx.v] abstracts (SC visibility,
    atomic steps, one location with DELETE's [new] null, DEFERFLUSH as a
    [pwb] fenced at the commit, no reclamation, the dequeue's checkpoint of
    [old] atomic and durable, orphaned [pwb]s of a crashed thread lost).
    Not covered: a specification in which INSERT fails only on a full slot
    (false here: see ERR above); thread crashes as history events;
    liveness. *)
From Coq Require Import Lia.
From stdpp Require Import base list relations countable.
From perdure.Core Require Import Px86 PxPersist.
From perdure.Memento Require Import CheckpointPx InsDelPx InsDelPxBugs.
From perdure.Core Require Import History DurableLin.

(** ** The sequential specification: a one-block slot *)

Inductive iop := IIns (n : nat) | IDel.
Global Instance iop_eq_dec : EqDecision iop.
Proof. solve_decision. Defined.

(** INSERT [n]: OK (1) into an empty slot, or ERR (0) with no effect;
    DELETE: the slot's block [v ≠ 0], emptying it, or ERR (0). *)
Definition slot_step (σ : nat) (o : iop) (v : nat) (σ' : nat) : Prop :=
  match o with
  | IIns n => (v = 1 ∧ σ = 0 ∧ σ' = n) ∨ (v = 0 ∧ σ' = σ)
  | IDel => (v ≠ 0 ∧ σ = v ∧ σ' = 0) ∨ (v = 0 ∧ σ' = σ)
  end.
Definition slot_spec : seq_spec nat iop nat := SeqSpec 0 slot_step.

(** The step as a function (the specification is deterministic). *)
Definition sapply (σ : nat) (e : iop * nat) : nat :=
  match e.1 with
  | IIns n => if decide (e.2 = 1) then n else σ
  | IDel => if decide (e.2 = 0) then σ else 0
  end.
Definition sfin (σ : nat) (l : list (iop * nat)) : nat := foldl sapply σ l.

Lemma slot_step_sapply σ o v σ' : slot_step σ o v σ' → σ' = sapply σ (o, v).
Proof.
  unfold sapply. destruct o; simpl; intros [(? & ? & ?) | (? & ?)]; subst; repeat case_decide; try lia; done.
Qed.

Lemma runs_slot_snoc σ l o v σ' : runs slot_spec σ l → slot_step (sfin σ l) o v σ' →
  runs slot_spec σ (l ++ [(o, v)]).
Proof.
  intros Hr. revert σ'. induction Hr as [σ | σ o0 v0 σ1 l Hs Hr IH]; intros σ' Hst; simpl.
  - econstructor; [exact Hst | constructor].
  - econstructor; [exact Hs |]. apply (IH σ'). unfold sfin in Hst |- *. simpl in Hst.
    by rewrite <- (slot_step_sapply _ _ _ _ Hs) in Hst.
Qed.

(** The slot after the points of [xh]. *)
Definition sval (xh : list (xevent iop nat)) : nat := sfin 0 (effects (points xh)).

Lemma sval_app_XE l E : (∀ x, x ∈ E → ∃ e, x = XE e) → sval (l ++ E) = sval l.
Proof.
  intros HE. unfold sval. rewrite points_app.
  assert (points E = []) as ->; [| by rewrite app_nil_r].
  induction E as [| x E IH]; [done |]. destruct (HE x (elem_of_list_here _ _)) as [e ->]. simpl.
  apply IH. intros y Hy. apply HE. by right.
Qed.
Lemma sval_snoc_XL l i o v : sval (l ++ [XL i o v]) = sapply (sval l) (o, v).
Proof. unfold sval, sfin. rewrite points_app, effects_app, foldl_app. done. Qed.
Lemma accepts_snoc_XL l i o v σ' : accepts slot_spec (effects (points l)) → slot_step (sval l) o v σ' →
  accepts slot_spec (effects (points (l ++ [XL i o v]))).
Proof. intros Ha Hs. unfold accepts. rewrite points_app, effects_app. by apply (runs_slot_snoc _ _ o v σ'). Qed.
Lemma accepts_app_XE l E : (∀ x, x ∈ E → ∃ e, x = XE e) → accepts slot_spec (effects (points l)) →
  accepts slot_spec (effects (points (l ++ E))).
Proof.
  intros HE Ha. rewrite points_app.
  assert (points E = []) as ->; [| by rewrite app_nil_r].
  induction E as [| x E IH]; [done |]. destruct (HE x (elem_of_list_here _ _)) as [e ->]. simpl.
  apply IH. intros y Hy. apply HE. by right.
Qed.

(** ** Durable effects *)

Global Instance durI_dec p n : Decision (durI p n).
Proof.
  destruct (decide ([(1, n)] ∈ take (mk p LOC) (hist p LOC))) as [H | H]; [left | right];
    unfold durI; rewrite <- elem_of_take; done.
Defined.
Global Instance durD_dec p b : Decision (durD p b).
Proof. unfold durD, dur. apply _. Defined.

(** The block in the slot: inserted durably, its deletion not durable. *)
Definition live (p : pmem) (b : nat) : Prop := durI p b ∧ ¬ durD p b.
Definition slot_is (NB : nat) (p : pmem) (σ : nat) : Prop :=
  (σ = 0 ∧ ∀ b, 1 ≤ b ≤ NB → ¬ live p b) ∨ (1 ≤ σ ≤ NB ∧ live p σ).

(** Effects not yet durable: an insert write, a [repl] write. *)
Definition ueI (p : pmem) (n : nat) : Prop := [(1, n)] ∈ hist p LOC ∧ ¬ durI p n.
Definition ueD (NB : nat) (p : pmem) (b : nat) : Prop := 1 ≤ b ≤ NB ∧ hist p b ≠ [] ∧ ¬ durD p b.

(** The owner of block [n]'s insert, and of [b]'s [repl] write. *)
Definition ownr (A : list (nat * nat * nat)) (n : nat) : opid :=
  match list_find (λ e : nat * nat * nat, e.1.1 = n) A with Some (_, (_, t, k)) => oid t k | None => 0 end.
Definition delid (p : pmem) (b : nat) : opid := let '(k, t) := visp p b in oid t k.

Lemma ownr_spec A n t k : NoDup (blk A) → (n, t, k) ∈ A → ownr A n = oid t k.
Proof.
  intros Hnd Hin. unfold ownr.
  destruct (list_find (λ e : nat * nat * nat, e.1.1 = n) A) as [[i [[n' t'] k']] |] eqn:E.
  - apply list_find_Some in E as (Hi & Hn' & _). simpl in Hn'. subst n'.
    apply elem_of_list_lookup_2 in Hi. destruct (nd_unique A n t k t' k' Hnd Hin Hi) as [-> ->]. done.
  - exfalso. apply list_find_None in E. rewrite List.Forall_forall in E. apply (E _ (proj1 (elem_of_list_In _ _) Hin)). done.
Qed.

Section memory.
  Context (NB : nat).
  Notation minv := (minv NB).

  Lemma loc_ins p A n : minv p A → [(1, n)] ∈ hist p LOC → 1 ≤ n ≤ NB ∧ n ∈ blk A.
  Proof.
    intros Hm Hin. destruct (m_shape _ _ _ Hm _ Hin) as (q & b & [= <- <-] & Hb & Hq).
    destruct (Hq eq_refl). split; [lia | done].
  Qed.

  (** Of two insert writes in [LOC], the earlier block's deletion is
      durable (it left [LOC]), hence its insert too. *)
  Lemma first_dead p A i j a b : minv p A → hist p LOC !! i = Some [(1, a)] → hist p LOC !! j = Some [(1, b)] →
    i < j → a ≠ b → durD p a ∧ durI p a.
  Proof.
    intros Hm Hi Hj Hij Hab. assert (Hd : durD p a) by (apply (m_C _ _ _ Hm i j a [(1, b)]); simpl; done).
    split; [done |]. destruct (loc_ins p A a Hm) as [Ha _]; [by eapply elem_of_list_lookup_2 |].
    apply (m_B _ _ _ Hm a Ha). apply Hd.
  Qed.

  Lemma two_ins p A a b : minv p A → [(1, a)] ∈ hist p LOC → [(1, b)] ∈ hist p LOC → a ≠ b →
    (durD p a ∧ durI p a) ∨ (durD p b ∧ durI p b).
  Proof.
    intros Hm Ha Hb Hab. apply elem_of_list_lookup_1 in Ha as [i Hi], Hb as [j Hj].
    destruct (decide (i < j)) as [Hlt | Hge].
    - left. by apply (first_dead p A i j a b).
    - right. assert (i ≠ j) by (intros ->; rewrite Hi in Hj; injection Hj; done).
      apply (first_dead p A j i b a); try done; lia.
  Qed.

  Lemma durI_in p n : durI p n → [(1, n)] ∈ hist p LOC.
  Proof. intros (i & Hi & _). by eapply elem_of_list_lookup_2. Qed.

  (** At most one effect is not durable. *)
  Lemma ue_unique p A : minv p A →
    (∀ n n', ueI p n → ueI p n' → n = n') ∧ (∀ n b, ueI p n → ¬ ueD NB p b) ∧
    (∀ b b', ueD NB p b → ueD NB p b' → b = b').
  Proof.
    intros Hm. split_and!.
    - intros n n' [Hn Hnd] [Hn' Hnd']. destruct (decide (n = n')) as [| Hne]; [done | exfalso].
      destruct (two_ins p A n n' Hm Hn Hn' Hne) as [[_ ?] | [_ ?]]; done.
    - intros n b [Hn Hnd] (Hb & Hne & Hbd). assert (HbI : durI p b) by (by apply (m_B _ _ _ Hm b)).
      assert (n ≠ b) by (intros ->; done).
      destruct (two_ins p A n b Hm Hn (durI_in p b HbI)) as [[_ ?] | [? _]]; done.
    - intros b b' (Hb & Hne & Hbd) (Hb' & Hne' & Hbd'). destruct (decide (b = b')) as [| Hbb]; [done | exfalso].
      assert (HbI : durI p b) by (by apply (m_B _ _ _ Hm b)).
      assert (HbI' : durI p b') by (by apply (m_B _ _ _ Hm b')).
      destruct (two_ins p A b b' Hm (durI_in p b HbI) (durI_in p b' HbI') Hbb) as [[? _] | [? _]]; done.
  Qed.

  Lemma live_unique p A a b : minv p A → live p a → live p b → a = b.
  Proof.
    intros Hm [Ha Had] [Hb Hbd]. destruct (decide (a = b)) as [| Hne]; [done | exfalso].
    destruct (two_ins p A a b Hm (durI_in p a Ha) (durI_in p b Hb) Hne) as [[? _] | [? _]]; done.
  Qed.

  Lemma live_bound p A b : minv p A → live p b → 1 ≤ b ≤ NB.
  Proof. intros Hm [Hb _]. by apply (loc_ins p A b Hm), durI_in. Qed.

  (** What a step does to the durable effects: those of [p] stay, those of
      [p'] were written in [p], a durable [repl] word is unchanged. *)
  Definition mgrow (p p' : pmem) : Prop :=
    (∀ n, durI p n → durI p' n) ∧ (∀ b, 1 ≤ b ≤ NB → durD p b → durD p' b) ∧
    (∀ n, durI p' n → [(1, n)] ∈ hist p LOC) ∧
    (∀ b, 1 ≤ b ≤ NB → durD p' b → hist p b ≠ [] ∧ hist p' b = hist p b).

  Lemma prefix_single_eq {X} (l l' : list X) : l `prefix_of` l' → length l' ≤ 1 → l ≠ [] → l' = l.
  Proof.
    intros [k ->] Hl Hne. destruct l as [| x [| y l]]; [done | | simpl in Hl; lia].
    destruct k; [done | simpl in Hl; lia].
  Qed.

  (** A step that fences, then writes: every line's new mark is within its
      old length. *)
  Lemma fw_mgrow p p' A A' : minv p A → minv p' A' →
    (∀ L, hist p L `prefix_of` hist p' L) → (∀ L, mk p L ≤ mk p' L) → (∀ L, mk p' L ≤ length (hist p L)) →
    mgrow p p'.
  Proof.
    intros Hm Hm' Hpre Hmk Hle.
    assert (Hsame : ∀ b, 1 ≤ b ≤ NB → hist p b ≠ [] → hist p' b = hist p b).
    { intros b Hb Hne. apply prefix_single_eq; [done | by apply (m_r1 _ _ _ Hm') | done]. }
    split_and!.
    - intros n. by apply durI_mono.
    - intros b Hb [Hne Hd]. split; [by rewrite Hsame|]. unfold dur in *. rewrite Hsame by done.
      specialize (Hmk b). specialize (Hle b). lia.
    - intros n (i & Hi & Hlt). specialize (Hle LOC).
      assert (Hi' : hist p LOC !! i = Some [(1, n)]).
      { destruct (lookup_lt_is_Some_2 (hist p LOC) i) as [w Hw]; [lia |].
        rewrite (prefix_lookup _ _ _ _ Hw (Hpre LOC)) in Hi. by rewrite Hw. }
      by eapply elem_of_list_lookup_2.
    - intros b Hb [Hne Hd]. assert (hist p b ≠ []) as Hne0.
      { intros He. unfold dur in Hd. specialize (Hle b). rewrite He in Hle. simpl in Hle.
        apply Hne. apply length_zero_iff_nil. lia. }
      split; [done | by apply Hsame].
  Qed.

  Lemma crash_mgrow p A keep : minv p A → p_crash_ok p keep → mgrow p (crash_mem p keep).
  Proof.
    intros Hm Hok. pose proof (m_nl _ _ _ Hm) as Hnl.
    assert (HL : LOC < nlines p) by (unfold LOC; lia).
    split_and!.
    - intros n. by apply durI_crash.
    - intros b Hb. apply durD_crash; [done | lia].
    - intros n Hd. apply durI_in in Hd. rewrite crash_hist in Hd by done.
      apply elem_of_take in Hd as (i & Hi & _). by eapply elem_of_list_lookup_2.
    - intros b Hb [Hne _]. rewrite crash_hist in Hne |- * by lia.
      assert (hist p b ≠ []) as Hne0 by (intros He; apply Hne; rewrite He; apply take_nil).
      split; [done |]. pose proof (m_r1 _ _ _ Hm b Hb) as Hl.
      destruct (hist p b) as [| w [| w' l]]; [done | | simpl in Hl; lia].
      destruct (keep b); simpl in *; [by exfalso; apply Hne | by rewrite take_nil].
  Qed.
End memory.

(** ** What a step does to the memory *)

(** Fences and write-backs (marks rise, within the lines), then writes
    and write-backs (lines grow, marks stay). *)
Definition Fm (p p' : pmem) : Prop := p_wf p' ∧ (∀ L, hist p' L = hist p L) ∧ (∀ L, mk p L ≤ mk p' L).
Definition Wm (p p' : pmem) : Prop := (∀ L, hist p L `prefix_of` hist p' L) ∧ (∀ L, mk p' L = mk p L).

Lemma Fm_refl p : p_wf p → Fm p p.
Proof. done. Qed.
Lemma Fm_fence p t : p_wf p → Fm p (p_fence p t).
Proof. intros Hwf. split_and!; [by apply p_fence_wf | intros; apply hist_fence | intros; apply mk_fence]. Qed.
Lemma Fm_pwb_fence p t L : p_wf p → Fm p (p_fence (p_pwb id p t L) t).
Proof.
  intros Hwf. split_and!; [by apply p_fence_wf, p_pwb_wf | intros; by rewrite hist_fence | ].
  intros L'. pose proof (mk_fence (p_pwb id p t L) t L'). done.
Qed.
Lemma Wm_refl p : Wm p p.
Proof. done. Qed.
Lemma Wm_trans p1 p2 p3 : Wm p1 p2 → Wm p2 p3 → Wm p1 p3.
Proof.
  intros [H1 H2] [G1 G2]. split; [intros L; by trans (hist p2 L) | intros L; by rewrite G2, H2].
Qed.
Lemma Wm_write p L w : L < nlines p → Wm p (p_write p L w).
Proof.
  intros HL. split; [| intros; apply mk_write]. intros L'. rewrite hist_write by done.
  case_decide; subst; [by exists [w] | done].
Qed.
Lemma Wm_cas_null p b : LOC < nlines p → Wm p (cas_null p b).
Proof. intros HL. unfold cas_null. case_decide; [by apply Wm_write | apply Wm_refl]. Qed.
Lemma Wm_pwb p t L : Wm p (p_pwb id p t L).
Proof. done. Qed.
Lemma Wm_drop p t : Wm p (drop_pwbs p t).
Proof. done. Qed.

Lemma FW_facts p p1 p' : Fm p p1 → Wm p1 p' →
  (∀ L, hist p L `prefix_of` hist p' L) ∧ (∀ L, mk p L ≤ mk p' L) ∧ (∀ L, mk p' L ≤ length (hist p L)).
Proof.
  intros (Hwf & Hh & Hm) [Gh Gm]. split_and!.
  - intros L. rewrite <- Hh. apply Gh.
  - intros L. rewrite Gm. apply Hm.
  - intros L. rewrite Gm, <- Hh. by apply wf_mk_le.
Qed.

(** ** The thread's root operation, as the history sees it *)

Definition act (T : tst) : bool := match pc T with PIdle => false | _ => true end.
Definition opof (T : tst) : iop := match op T with Some n => IIns n | None => IDel end.
Definition rof (T : tst) : nat := match pc T with PCommit r => r | _ => 0 end.

(** Nothing the history sees changes. *)
Definition quiet (T T' : tst) : Prop := act T' = act T ∧ kk T' = kk T ∧ op T' = op T.

Lemma quiet_with_pc T P : act T = true → P ≠ PIdle → quiet T (with_pc T P).
Proof. intros Ha HP. unfold quiet, act in *. cbn [with_pc pc kk op]. destruct (pc T), P; done. Qed.

Lemma quiet_crash T : quiet T (with_pc T (crash_pc fixed T)).
Proof. unfold quiet, act, crash_pc. cbn [with_pc pc kk op crl fixed]. destruct (pc T), (op T); done. Qed.

Lemma quiet_lcont p T c v : pc T = PL c → quiet T (lcont p T c v).
Proof.
  intros Hpc. unfold quiet, act, lcont. rewrite Hpc.
  destruct c; repeat case_decide; cbn [with_pc pc kk op]; done.
Qed.

(** The effect of thread [u]'s current operation is durable, with result [v]. *)
Definition cureff (NB : nat) (p : pmem) (u : nat) (T : tst) (o : iop) (v : nat) : Prop :=
  act T = true ∧ match op T with
                 | Some n => o = IIns n ∧ v = 1 ∧ durI p n
                 | None => o = IDel ∧ 1 ≤ v ≤ NB ∧ hist p v = [[(kk T, u)]] ∧ durD p v
                 end.

Lemma cureff_quiet NB p u T T' o v : quiet T T' → cureff NB p u T' o v ↔ cureff NB p u T o v.
Proof. intros (Ha & Hk & Ho). unfold cureff. by rewrite Ha, Hk, Ho. Qed.

(** ** The ghost history *)

(** The events of thread [u] in a step from [s] to [s'] ([c u]: a full
    crash cut its operation off): the invoke when it starts a root
    operation; at its commit, the point if it commits ERR (an effect's
    point comes from [pts]), then the return or recover. *)
Definition evu (s s' : state) (c : nat → bool) (u : nat) : list (xevent iop nat) :=
  (if negb (act (th s u)) && act (th s' u) then [XE (Invoke (oid u (kk (th s u))) u (opof (th s' u)))] else []) ++
  (if bool_decide (kk (th s' u) = S (kk (th s u))) then
     (if bool_decide (rof (th s u) = 0) then [XL (oid u (kk (th s u))) (opof (th s u)) 0] else []) ++
     [XE (if c u then Recover (oid u (kk (th s u))) (rof (th s u)) else Return (oid u (kk (th s u))) (rof (th s u)))]
   else []).

(** The points of the effects that became durable at block [b] in a step
    from [s] to [s']: [b]'s insert, [b]'s deletion. *)
Definition ptsu (s s' : state) (b : nat) : list (xevent iop nat) :=
  (if bool_decide (durI (pm s') b) && negb (bool_decide (durI (pm s) b)) then [XL (ownr (ins s') b) (IIns b) 1] else []) ++
  (if bool_decide (durD (pm s') b) && negb (bool_decide (durD (pm s) b)) then [XL (delid (pm s') b) IDel b] else []).

Record gstate := G { gs : state; gx : list (xevent iop nat); gc : nat → bool }.

Section ghost.
  Context (N NB : nat).

  Definition pts (s s' : state) : list (xevent iop nat) := mjoin (ptsu s s' <$> seq 1 NB).
  Definition ev (s s' : state) (c : nat → bool) : list (xevent iop nat) :=
    pts s s' ++ mjoin (evu s s' c <$> seq 1 N).

  (** [SCrash]'s state. *)
  Definition crash_st (s : state) (keep : nat → nat) : state :=
    St (crash_mem (pm s) keep) (λ u, if decide (tr N u) then with_pc (th s u) (crash_pc fixed (th s u)) else th s u)
       (ins s).

  (** A step of the model with its events, or a full crash with the points
      of the effects its image keeps and its [crash] event (a full crash
      by [g_step] is a silent one). *)
  Inductive gstep : gstate → gstate → Prop :=
    | g_step g s' : step N NB fixed (gs g) s' →
        gstep g (G s' (gx g ++ ev (gs g) s' (gc g)) (λ u, gc g u && act (th s' u)))
    | g_crash g keep : p_crash_ok (pm (gs g)) keep →
        gstep g (G (crash_st (gs g) keep) (gx g ++ pts (gs g) (crash_st (gs g) keep) ++ [XE Crash])
                   (λ u, act (th (crash_st (gs g) keep) u))).

  Definition ginit : gstate := G (init NB) [] (λ _, false).
  Definition greach (g : gstate) : Prop := rtc gstep ginit g.
End ghost.

(** ** Every step is one thread's, or a full crash *)
Section steps.
  Context (N NB : nat).
  Notation step := (step N NB fixed).
  Notation inv := (inv N NB).

  Lemma step_mem s s' : inv s → step s s' →
    (∃ p1, Fm (pm s) p1 ∧ Wm p1 (pm s')) ∨ (∃ keep, p_crash_ok (pm s) keep ∧ pm s' = crash_mem (pm s) keep).
  Proof.
    intros Hi Hs. pose proof (m_wf _ _ _ (i_m _ _ _ Hi)) as Hwf. pose proof (m_nl _ _ _ (i_m _ _ _ Hi)) as Hnl.
    assert (HL : ∀ L, L ≤ NB → L < nlines (pm s)) by (intros; lia).
    assert (HLf : ∀ t L, L ≤ NB → L < nlines (p_fence (pm s) t)) by (intros; rewrite nlines_fence; lia).
    assert (HLpf : ∀ t L L', L ≤ NB → L < nlines (p_fence (p_pwb id (pm s) t L') t)) by (intros; rewrite nlines_fence, nlines_pwb; lia).
    destruct Hs as [s t n Ht Hpc Hn Hf | s t Ht Hpc | s t n Ht Hpc Hv | s t n Ht Hpc Hv | s t n Ht Hpc
      | s t n Ht Hpc | s t n Ht Hpc | s t c v Ht Hpc Hv | s t c v Ht Hpc Hv | s t b Ht Hpc | s t b Ht Hpc Hv
      | s t b Ht Hpc Hv | s t b Ht Hpc | s t b Ht Hpc | s t Ht Hpc | s t n Ht Hpc | s t r Ht Hpc | s t Ht | s keep Hok].
    19: { right. by exists keep. }
    all: left; cbn [setpt setth pm c24 c37 fixed].
    all: try (exists (pm s); split; [by apply Fm_refl | apply Wm_refl]; fail).
    - (* SI21ok *) exists (p_fence (pm s) t). split; [by apply Fm_fence | apply Wm_write, HLf; unfold LOC; lia].
    - (* SI21fail *) exists (p_fence (pm s) t). split; [by apply Fm_fence | apply Wm_refl].
    - (* SI24 *) eexists. split; [by apply Fm_pwb_fence | apply Wm_refl].
    - (* SI25 *) exists (p_fence (pm s) t). split; [by apply Fm_fence |].
      case_decide; [apply Wm_write, HLf; unfold LOC; lia | apply Wm_refl].
    - (* SLfix *) eexists. split; [by apply Fm_pwb_fence | apply Wm_write, HLpf; unfold LOC; lia].
    - (* SHelp *) eexists. split; [by apply Fm_pwb_fence | apply Wm_cas_null, HLpf; unfold LOC; lia].
    - (* SD34ok *) pose proof (t_pc _ _ _ _ _ (i_th _ _ _ Hi t Ht)) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
      destruct Hp as (_ & _ & Hb & _).
      exists (p_fence (pm s) t). split; [by apply Fm_fence | apply Wm_write, HLf; lia].
    - (* SD34fail *) eexists. split; [by apply Fm_pwb_fence | apply Wm_cas_null, HLpf; unfold LOC; lia].
    - (* SD37 *) exists (pm s). split; [by apply Fm_refl | apply Wm_pwb].
    - (* SD38 *) exists (p_fence (pm s) t). split; [by apply Fm_fence |].
      eapply Wm_trans; [apply Wm_cas_null, HLf; unfold LOC; lia | apply Wm_pwb].
    - (* SCommit *) exists (p_fence (pm s) t). split; [by apply Fm_fence | apply Wm_refl].
    - (* STCrash *) exists (pm s). split; [by apply Fm_refl | apply Wm_drop].
  Qed.

  Lemma step_mgrow s s' : inv s → inv s' → step s s' → mgrow NB (pm s) (pm s').
  Proof.
    intros Hi Hi' Hs. destruct (step_mem s s' Hi Hs) as [(p1 & HF & HW) | (keep & Hok & ->)].
    - destruct (FW_facts _ _ _ HF HW) as (H1 & H2 & H3).
      by apply (fw_mgrow NB _ _ (ins s) (ins s') (i_m _ _ _ Hi) (i_m _ _ _ Hi')).
    - by apply (crash_mgrow NB _ (ins s) keep (i_m _ _ _ Hi)).
  Qed.

  (** Every step is one thread's (the others unchanged): quiet, the start
      of a root operation (no memory change), or its commit (a fence); or
      a full crash. *)
  Lemma step_cases s s' : inv s → step s s' →
    (∃ t, tr N t ∧ (∀ u, u ≠ t → th s' u = th s u) ∧ (∀ e, e ∈ ins s → e ∈ ins s') ∧
      (quiet (th s t) (th s' t) ∨
       (act (th s t) = false ∧ act (th s' t) = true ∧ kk (th s' t) = kk (th s t) ∧ pm s' = pm s ∧
        ∀ o v, ¬ cureff NB (pm s') t (th s' t) o v) ∨
       (act (th s t) = true ∧ act (th s' t) = false ∧ kk (th s' t) = S (kk (th s t)) ∧
        pc (th s t) = PCommit (rof (th s t)) ∧ pm s' = p_fence (pm s) t ∧
        res (th s' t) = res (th s t) ++ [(op (th s t), rof (th s t))]))) ∨
    (∃ keep, p_crash_ok (pm s) keep ∧ s' = crash_st N s keep).
  Proof.
    intros Hi Hs.
    destruct Hs as [s t n Ht Hpc Hn Hf | s t Ht Hpc | s t n Ht Hpc Hv | s t n Ht Hpc Hv | s t n Ht Hpc
      | s t n Ht Hpc | s t n Ht Hpc | s t c v Ht Hpc Hv | s t c v Ht Hpc Hv | s t b Ht Hpc | s t b Ht Hpc Hv
      | s t b Ht Hpc Hv | s t b Ht Hpc | s t b Ht Hpc | s t Ht Hpc | s t n Ht Hpc | s t r Ht Hpc | s t Ht | s keep Hok].
    19: { right. by exists keep. }
    all: repeat match goal with x := _ |- _ => subst x end.
    all: left; exists t; split; [done |]; cbn [th setth setpt pm ins]; rewrite ?upd_here;
      split; [intros u Hne; by apply upd_same |]; split;
      [try (intros e He; apply elem_of_app; by left); try (intros e He; exact He) |].
    all: try (left; apply quiet_with_pc; [unfold act; by rewrite Hpc | done]; fail).
    - (* SInsStart *) right; left. unfold act. cbn [pc kk]. rewrite Hpc. split_and!; try done.
      unfold cureff. cbn [op pc]. intros o v (_ & _ & _ & Hd). apply Hf.
      apply (loc_ins NB (pm s) (ins s) n (i_m _ _ _ Hi)). by apply durI_in.
    - (* SDelStart *) right; left. unfold act. cbn [pc kk with_pc]. rewrite Hpc. split_and!; try done.
      unfold cureff. cbn [op pc kk]. intros o v (_ & _ & Hv & Hh & _).
      pose proof (i_th _ _ _ Hi t Ht) as Hti. pose proof (t_pc _ _ _ _ _ Hti) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
      destruct (t_tag _ _ _ _ _ Hti v (kk (th s t)) Hv) as [? | [_ Hmo]]; [rewrite Hh; by left | lia | congruence].
    - (* SLclean *) left. by apply quiet_lcont.
    - (* SLfix *) left. by apply quiet_lcont.
    - (* SDRec *) left. apply quiet_with_pc; [unfold act; by rewrite Hpc |]. by destruct (mold (th s t)); [case_decide|].
    - (* SCommit *) right; right. unfold act, rof. cbn [pc kk res]. rewrite Hpc. done.
    - (* STCrash *) left. apply quiet_crash.
  Qed.
End steps.

(** ** Lists and histories *)


(** What [InsDelPx.v]'s invariant says of a thread's position. *)
Lemma mold_del NB p A t T b : pcok NB p A t T → mold T = Some b → op T = None ∧ act T = true.
Proof.
  unfold pcok, act. intros Hp Hm. destruct (pc T) as [| n | n | n | n | [n | |] | b' | b' | b' | b' | | n | r];
    try (destruct (op T) eqn:?); naive_solver.
Qed.

Lemma ins_cur NB p A t T m : pcok NB p A t T → act T = true → op T = Some m → (m, t, kk T) ∈ A.
Proof.
  unfold pcok, act. intros Hp Ha Ho. destruct (pc T) as [| n | n | n | n | [n | |] | b' | b' | b' | b' | | n | r];
    try (rewrite Ho in Hp); naive_solver.
Qed.

(** ** The points of a step *)
Section pts.
  Context (N NB : nat).
  Notation inv := (inv N NB).

  Lemma ptsu_none s s' b : (durI (pm s') b → durI (pm s) b) → (durD (pm s') b → durD (pm s) b) → ptsu s s' b = [].
  Proof. intros H1 H2. unfold ptsu. repeat case_bool_decide; simpl; first [done | exfalso; tauto]. Qed.

  (** No effect became durable; or one insert; or one deletion. *)
  Lemma pts_cases s s' : inv s → inv s' → mgrow NB (pm s) (pm s') → (∀ e, e ∈ ins s → e ∈ ins s') →
    (pts NB s s' = [] ∧ (∀ n, durI (pm s') n ↔ durI (pm s) n) ∧ (∀ b, 1 ≤ b ≤ NB → durD (pm s') b ↔ durD (pm s) b)) ∨
    (∃ n t k, (n, t, k) ∈ ins s ∧ ueI (pm s) n ∧ durI (pm s') n ∧ pts NB s s' = [XL (oid t k) (IIns n) 1] ∧
       (∀ m, m ≠ n → durI (pm s') m ↔ durI (pm s) m) ∧ (∀ b, 1 ≤ b ≤ NB → durD (pm s') b ↔ durD (pm s) b)) ∨
    (∃ b k t, 1 ≤ b ≤ NB ∧ hist (pm s) b = [[(k, t)]] ∧ ¬ durD (pm s) b ∧ durD (pm s') b ∧
       pts NB s s' = [XL (oid t k) IDel b] ∧
       (∀ m, durI (pm s') m ↔ durI (pm s) m) ∧ (∀ b', 1 ≤ b' ≤ NB → b' ≠ b → durD (pm s') b' ↔ durD (pm s) b')).
  Proof.
    intros Hi Hi' (G1 & G2 & G3 & G4) HA.
    pose proof (i_m _ _ _ Hi) as Hm. pose proof (i_m _ _ _ Hi') as Hm'.
    destruct (ue_unique NB (pm s) (ins s) Hm) as (U1 & U2 & U3).
    assert (HIin : ∀ n, durI (pm s') n → 1 ≤ n ≤ NB) by (intros n Hn; apply (loc_ins NB (pm s) (ins s) n Hm), G3, Hn).
    assert (Hseq : ∀ x, x ∈ seq 1 NB ↔ 1 ≤ x ≤ NB) by (intros x; rewrite elem_of_seq; lia).
    destruct (decide (Exists (λ n, durI (pm s') n ∧ ¬ durI (pm s) n) (seq 1 NB))) as [HI | HnI].
    - apply stdpp.list.Exists_exists in HI as (n & _ & Hn' & Hn).
      assert (Hue : ueI (pm s) n) by (split; [by apply G3 | done]).
      assert (HoI : ∀ m, m ≠ n → durI (pm s') m ↔ durI (pm s) m).
      { intros m Hmn. split; [| apply G1]. intros Hm1. destruct (decide (durI (pm s) m)) as [| Hm0]; [done | exfalso].
        apply Hmn, (U1 m n); [split; [by apply G3 | done] | done]. }
      assert (HoD : ∀ b, 1 ≤ b ≤ NB → durD (pm s') b ↔ durD (pm s) b).
      { intros b Hb. split; [| apply G2, Hb]. intros Hd1. destruct (decide (durD (pm s) b)) as [| Hd0]; [done | exfalso].
        apply (U2 n b Hue). split; [done | split; [apply (proj1 (G4 b Hb Hd1)) | done]]. }
      destruct (loc_ins NB (pm s) (ins s) n Hm (G3 n Hn')) as [Hnb Hblk].
      apply elem_of_list_fmap in Hblk as ([[n' t] k] & Hn0 & Hin). simpl in Hn0. subst n'.
      right; left. exists n, t, k. split_and!; try done.
      unfold pts. rewrite (mjoin_single _ _ n); [| apply NoDup_seq | by apply Hseq |].
      + unfold ptsu. rewrite (bool_decide_true _ Hn'), (bool_decide_false _ Hn). simpl.
        rewrite (ownr_spec (ins s') n t k (m_nd _ _ _ Hm') (HA _ Hin)).
        destruct (decide (durD (pm s') n)) as [Hd | Hd].
        * rewrite (bool_decide_true _ Hd), (bool_decide_true _ (proj1 (HoD n Hnb) Hd)). done.
        * rewrite (bool_decide_false _ Hd). done.
      + intros u Hu Hun. apply ptsu_none; [apply HoI, Hun | apply HoD, Hseq, Hu].
    - assert (HoI : ∀ m, durI (pm s') m ↔ durI (pm s) m).
      { intros m. split; [| apply G1]. intros Hm1. destruct (decide (durI (pm s) m)) as [| Hm0]; [done | exfalso].
        apply HnI, stdpp.list.Exists_exists. exists m. split; [apply Hseq, HIin, Hm1 | done]. }
      destruct (decide (Exists (λ b, durD (pm s') b ∧ ¬ durD (pm s) b) (seq 1 NB))) as [HD | HnD].
      + apply stdpp.list.Exists_exists in HD as (b & Hbs & Hb' & Hb). apply Hseq in Hbs.
        destruct (G4 b Hbs Hb') as [Hne Hsame].
        assert (Hue : ueD NB (pm s) b) by done.
        assert (HoD : ∀ b', 1 ≤ b' ≤ NB → b' ≠ b → durD (pm s') b' ↔ durD (pm s) b').
        { intros b' Hb1 Hbb. split; [| apply G2, Hb1]. intros Hd1. destruct (decide (durD (pm s) b')) as [| Hd0]; [done | exfalso].
          apply Hbb, (U3 b' b); [split; [done | split; [apply (proj1 (G4 b' Hb1 Hd1)) | done]] | done]. }
        destruct (repl_single NB (pm s) (ins s) b Hm Hbs Hne) as (k & t & Hh & Hv & _).
        right; right. exists b, k, t. split_and!; try done; try lia.
        unfold pts. rewrite (mjoin_single _ _ b); [| apply NoDup_seq | by apply Hseq |].
        * unfold ptsu. rewrite (bool_decide_true _ Hb'), (bool_decide_false _ Hb).
          assert (Hdl : delid (pm s') b = oid t k).
          { unfold delid, visp. rewrite Hsame. fold (visp (pm s) b). by rewrite Hv. }
          rewrite Hdl. destruct (decide (durI (pm s') b)) as [Hd | Hd].
          -- rewrite (bool_decide_true _ Hd), (bool_decide_true _ (proj1 (HoI b) Hd)). done.
          -- rewrite (bool_decide_false _ Hd). done.
        * intros u Hu Hub. apply ptsu_none; [apply HoI | apply HoD; [by apply Hseq | done]].
      + left. split_and!; [| done |].
        * unfold pts. apply mjoin_nil. intros u Hu. apply ptsu_none; [apply HoI |].
          intros Hd1. destruct (decide (durD (pm s) u)) as [| Hd0]; [done | exfalso].
          apply HnD, stdpp.list.Exists_exists. exists u. done.
        * intros b Hb. split; [| apply G2, Hb]. intros Hd1. destruct (decide (durD (pm s) b)) as [| Hd0]; [done | exfalso].
          apply HnD, stdpp.list.Exists_exists. exists b. split; [by apply Hseq | done].
  Qed.
End pts.

(** ** The invariant of the ghost runs, on given threads and memory *)
Section hinv.
  Context (N NB : nat).
  Notation tr := (tr N).

  (** The history with its points is a witness of durable linearizability
      (points well placed, a run of the slot ending in the block the memory
      holds durably), well formed; each thread's current root operation is
      invoked exactly when the thread is inside it, pending or cut off as
      [c] says, and has a point iff its effect is durable. *)
  Record hinv (th : nat → tst) (p : pmem) (l : list (xevent iop nat)) (c : nat → bool) : Prop := {
    h_ok : prefix_ok point_ok l;
    h_acc : accepts slot_spec (effects (points l));
    h_val : slot_is NB p (sval l);
    h_wf : wf (erase l);
    h_inv : ∀ i t o, Invoke i t o ∈ erase l →
      tr t ∧ ∃ k, k ≤ kk (th t) ∧ i = oid t k ∧ (k = kk (th t) → o = opof (th t));
    h_old : ∀ u k, tr u → k < kk (th u) → finished (erase l) (oid u k);
    h_act : ∀ u, tr u → act (th u) = true →
      Invoke (oid u (kk (th u))) u (opof (th u)) ∈ erase l ∧ ¬ finished (erase l) (oid u (kk (th u))) ∧
      (c u = false → pending_on (erase l) u (oid u (kk (th u)))) ∧
      (c u = true → cut_off (erase l) (oid u (kk (th u))));
    h_idle : ∀ u, tr u → act (th u) = false → ¬ invoked (erase l) (oid u (kk (th u))) ∧ c u = false;
    h_pts : ∀ u o v, tr u → XL (oid u (kk (th u))) o v ∈ l ↔ cureff NB p u (th u) o v;
    h_pend : ∀ u j, pending_on (erase l) u j → tr u ∧ act (th u) = true ∧ j = oid u (kk (th u)) ∧ c u = false;
  }.

  Lemma hinv_init : hinv (λ _, TS PIdle 0 None None []) (pmem_empty (S NB)) [] (λ _, false).
  Proof.
    assert (He : ∀ L, hist (pmem_empty (S NB)) L = []) by apply hist_empty.
    split.
    - apply prefix_ok_nil.
    - constructor.
    - left. split; [done |]. intros b _ [(i & Hi & _) _]. rewrite He in Hi. by rewrite lookup_nil in Hi.
    - apply wf_nil.
    - intros i t o []%elem_of_nil.
    - intros u k _ Hk. simpl in Hk. lia.
    - intros u _ Hact. done.
    - intros u _ _. split; [intros (? & ? & []%elem_of_nil) | done].
    - intros u o v _. split; [by intros ?%elem_of_nil | by intros [? _]].
    - intros u j (h1 & h2 & o & E & _). by destruct h1.
  Qed.

  (** A step in which no thread's root operation changes (a thread's
      step, or a full crash with or without its [crash] event). *)
  Lemma hinv_quiet th th' p l c (loud : bool) : hinv th p l c → (∀ u, tr u → quiet (th u) (th' u)) →
    hinv th' p (l ++ (if loud then [XE Crash] else [])) (λ u, (loud || c u) && act (th' u)).
  Proof.
    intros [Gok Gacc Gval Gwf Ginv Gold Gact Gidle Gpts Gpend] Hq.
    assert (HE : ∀ x, x ∈ (if loud then [@XE iop nat Crash] else []) → ∃ e, x = XE e).
    { intros x Hx. destruct loud; [apply elem_of_list_singleton in Hx; by eexists | by apply elem_of_nil in Hx]. }
    assert (Herase : erase (l ++ (if loud then [@XE iop nat Crash] else [])) = erase l ++ (if loud then [@Crash iop nat] else []))
      by (rewrite erase_app; by destruct loud).
    set (h' := erase l ++ (if loud then [@Crash iop nat] else [])).
    assert (HinE : ∀ e, e ∈ h' → e ∈ erase l ∨ e = Crash).
    { intros e He. unfold h' in He. apply elem_of_app in He as [? | He]; [by left |].
      destruct loud; [right; by apply elem_of_list_singleton in He | by apply elem_of_nil in He]. }
    split; rewrite ?Herase; fold h'.
    - destruct loud; [| by rewrite app_nil_r]. apply prefix_ok_snoc. by split.
    - by apply accepts_app_XE.
    - by rewrite sval_app_XE.
    - unfold h'. destruct loud; [| by rewrite app_nil_r]. apply wf_snoc. by split.
    - intros i t o [Hin | ?]%HinE; [| done]. destruct (Ginv i t o Hin) as (Ht & k & Hk & -> & Ho).
      destruct (Hq t Ht) as (Ha & Hkk & Hop). split; [done |]. exists k. rewrite Hkk. split_and!; [done | done |].
      intros Hk'. rewrite (Ho Hk'). unfold opof. by rewrite Hop.
    - intros u k Hu Hk. rewrite (proj1 (proj2 (Hq u Hu))) in Hk. unfold h'. apply finished_app. by apply Gold.
    - intros u Hu Ha. destruct (Hq u Hu) as (Ha' & Hk & Hop). rewrite Hk. rewrite Ha' in Ha |- *.
      assert (Eo : opof (th' u) = opof (th u)) by (unfold opof; by rewrite Hop). rewrite Eo.
      destruct (Gact u Hu Ha) as (H1 & H2 & H3 & H4). rewrite Ha, andb_true_r. unfold h'.
      by apply current_across_crash.
    - intros u Hu Ha. destruct (Hq u Hu) as (Ha' & Hk & _). rewrite Hk, Ha, andb_false_r. split; [| done].
      rewrite Ha' in Ha. intros (t & o & [Hin | ?]%HinE); [| done]. apply (proj1 (Gidle u Hu Ha)). by exists t, o.
    - intros u o v Hu. destruct (Hq u Hu) as (Ha & Hk & Hop).
      rewrite Hk, (cureff_quiet NB p u (th u) (th' u) o v (Hq u Hu)), <- (Gpts u o v Hu).
      split; [| intros Hin; apply elem_of_app; by left].
      intros [Hin | Hin]%elem_of_app; [done |]. destruct loud; [apply elem_of_list_singleton in Hin | apply elem_of_nil in Hin]; done.
    - intros u j Hp. unfold h' in Hp. destruct loud.
      + apply pending_on_snoc in Hp as [(o & ?) | (_ & ? & _)]; done.
      + rewrite app_nil_r in Hp. destruct (Gpend u j Hp) as (Hu & Ha & -> & Hc). destruct (Hq u Hu) as (Ha' & Hk & _).
        rewrite Ha', Hk, Ha, Hc. done.
  Qed.

  (** A thread starts a root operation: its invoke. *)
  Lemma hinv_invoke th th' p l c t : hinv th p l c → tr t → (∀ u, u ≠ t → th' u = th u) →
    act (th t) = false → act (th' t) = true → kk (th' t) = kk (th t) → (∀ o v, ¬ cureff NB p t (th' t) o v) →
    hinv th' p (l ++ [XE (Invoke (oid t (kk (th t))) t (opof (th' t)))]) (λ u, c u && act (th' u)).
  Proof.
    intros [Gok Gacc Gval Gwf Ginv Gold Gact Gidle Gpts Gpend] Ht Hsame Ha Ha' Hk Hno.
    assert (Hni : ¬ invoked (erase l) (oid t (kk (th t)))) by apply (Gidle t Ht Ha).
    assert (Hc : c t = false) by apply (Gidle t Ht Ha).
    assert (HE : ∀ x : xevent iop nat, x ∈ [XE (Invoke (oid t (kk (th t))) t (opof (th' t)))] → ∃ e, x = XE e)
      by (intros x ?%elem_of_list_singleton; by eexists).
    split; rewrite ?erase_snoc_XE.
    - apply prefix_ok_snoc. by split.
    - by apply accepts_app_XE.
    - by rewrite sval_app_XE.
    - apply wf_snoc. split; [done |]. split; [done |]. intros (j & Hj).
      destruct (Gpend t j Hj) as (_ & Ha'' & _). congruence.
    - intros i' t' o [Hin | Hin]%elem_of_app.
      + destruct (Ginv i' t' o Hin) as (Ht' & k & Hk' & -> & Ho). split; [done |]. exists k.
        destruct (decide (t' = t)) as [-> | Hne].
        * rewrite Hk. split_and!; [done | done |]. intros ->. exfalso. apply Hni. by exists t, o.
        * rewrite Hsame by done. done.
      + apply elem_of_list_singleton in Hin. injection Hin as -> -> ->. split; [done |].
        exists (kk (th t)). rewrite Hk. done.
    - intros u k Hu Hk'. apply finished_app, Gold; [done |].
      destruct (decide (u = t)) as [-> | Hne]; [by rewrite <- Hk | by rewrite <- Hsame].
    - intros u Hu Hau. destruct (decide (u = t)) as [-> | Hne].
      + rewrite Hk, Hc. split_and!.
        * apply elem_of_app. right. by left.
        * intros [Hf | []]%finished_snoc. apply Hni. by apply finished_invoked.
        * intros _. apply pending_on_snoc. left. by eexists.
        * done.
      + rewrite Hsame in Hau |- * by done. rewrite Hau, andb_true_r.
        destruct (Gact u Hu Hau) as (H1 & H2 & H3 & H4). split_and!.
        * apply elem_of_app. by left.
        * intros [Hf | []]%finished_snoc. done.
        * intros Hcu. apply pending_on_snoc. right. split_and!; [by apply H3 | done | done].
        * intros Hcu. by apply cut_off_app, H4.
    - intros u Hu Hau. destruct (decide (u = t)) as [-> | Hne]; [congruence |].
      rewrite (Hsame u Hne) in Hau |- *. rewrite Hau, andb_false_r. split; [| done].
      intros [Hinv | (t' & o' & [= Hid _ _])]%invoked_snoc; [by apply (Gidle u Hu Hau) |].
      apply oid_inj in Hid as [? _]. done.
    - intros u o v Hu. destruct (decide (u = t)) as [-> | Hne].
      + rewrite Hk. split; [| by intros ?%Hno].
        intros [Hin | Hin]%elem_of_app; [| by apply elem_of_list_singleton in Hin].
        exfalso. apply Hni. by apply (xl_invoked l _ o v).
      + rewrite Hsame by done. rewrite <- (Gpts u o v Hu). split; [| intros; apply elem_of_app; by left].
        intros [Hin | Hin]%elem_of_app; [done | by apply elem_of_list_singleton in Hin].
    - intros u j [(o & [= <- <- <-]) | (Hp & _ & _)]%pending_on_snoc.
      + rewrite Hk, Ha', Hc. done.
      + destruct (Gpend u j Hp) as (Hu & Hau & -> & Hcu). destruct (decide (u = t)) as [-> | Hne]; [congruence |].
        rewrite Hsame by done. by rewrite Hau, Hcu.
  Qed.

  (** The root operation commits: its point if it commits ERR (an effect's
      point came earlier, from [pts]), then its return, or its recover if a
      crash cut it off, with the committed result. *)
  Lemma hinv_commit th th' p l c t : hinv th p l c → tr t → (∀ u, u ≠ t → th' u = th u) →
    act (th t) = true → act (th' t) = false → kk (th' t) = S (kk (th t)) →
    (rof (th t) ≠ 0 → cureff NB p t (th t) (opof (th t)) (rof (th t))) →
    (rof (th t) = 0 → ∀ o v, ¬ cureff NB p t (th t) o v) →
    hinv th' p (l ++ ((if bool_decide (rof (th t) = 0) then [XL (oid t (kk (th t))) (opof (th t)) 0] else []) ++
                      [XE (if c t then Recover (oid t (kk (th t))) (rof (th t))
                           else Return (oid t (kk (th t))) (rof (th t)))]))
         (λ u, c u && act (th' u)).
  Proof.
    intros Hh Ht Hsame Ha Ha' Hk Hr1 Hr0. pose proof Hh as [Gok Gacc Gval Gwf Ginv Gold Gact Gidle Gpts Gpend].
    set (i := oid t (kk (th t))). set (r := rof (th t)).
    set (l1 := l ++ (if bool_decide (r = 0) then [XL i (opof (th t)) 0] else [])).
    rewrite app_assoc. fold l1.
    set (e := if c t then Recover i r else Return i r).
    destruct (Gact t Ht Ha) as (Hinv & Hnf & Hpd & Hcut).
    assert (Hnext : ¬ invoked (erase l) (oid t (S (kk (th t))))).
    { intros (t' & o & Hin). destruct (Ginv _ t' o Hin) as (_ & k & Hk' & Hid & _).
      apply oid_inj in Hid as [Ht0 Hk0]. subst t'. lia. }
    assert (E1 : erase l1 = erase l).
    { unfold l1. case_bool_decide; [apply erase_snoc_XL | by rewrite app_nil_r]. }
    assert (Ok1 : prefix_ok point_ok l1).
    { unfold l1. case_bool_decide as Hr; [| by rewrite app_nil_r]. apply prefix_ok_snoc. split; [done |]. split.
      - by exists t.
      - intros o' v' Hin. apply (Gpts t o' v' Ht) in Hin. by apply (Hr0 Hr o' v'). }
    assert (Acc1 : accepts slot_spec (effects (points l1)) ∧ sval l1 = sval l).
    { unfold l1. case_bool_decide as Hr; [| by rewrite app_nil_r]. split.
      - apply (accepts_snoc_XL _ _ _ _ (sval l)); [done |]. destruct (opof (th t)); by right.
      - rewrite sval_snoc_XL. unfold sapply. simpl. destruct (opof (th t)); simpl; repeat case_decide; done. }
    assert (Pt1 : ∃ o, XL i o r ∈ l1).
    { unfold l1. case_bool_decide as Hr.
      - exists (opof (th t)). rewrite Hr. apply elem_of_app. right. by left.
      - exists (opof (th t)). rewrite app_nil_r. apply (Gpts t _ _ Ht). by apply Hr1. }
    assert (Pts1 : ∀ u o v, u ≠ t → XL (oid u (kk (th u))) o v ∈ l1 ↔ XL (oid u (kk (th u))) o v ∈ l).
    { intros u o v Hne. unfold l1. case_bool_decide; [| by rewrite app_nil_r]. split; [| intros; apply elem_of_app; by left].
      intros [? | Hin%elem_of_list_singleton]%elem_of_app; [done |]. injection Hin as Hid _ _.
      apply oid_inj in Hid as [? _]. done. }
    assert (Nx1 : ∀ o v, XL (oid t (S (kk (th t)))) o v ∉ l1).
    { intros o v Hin. unfold l1 in Hin. apply elem_of_app in Hin as [Hin | Hin].
      - apply Hnext. by apply (xl_invoked l _ o v).
      - case_bool_decide; [apply elem_of_list_singleton in Hin | by apply elem_of_nil in Hin].
        injection Hin as Hid _ _. apply oid_inj in Hid as [_ ?]. lia. }
    assert (HE : ∀ x : xevent iop nat, x ∈ [XE e] → ∃ e', x = XE e') by (intros x ?%elem_of_list_singleton; by eexists).
    split; rewrite ?erase_snoc_XE, ?E1.
    - apply prefix_ok_snoc. split; [done |]. unfold e. destruct (c t); done.
    - apply accepts_app_XE; [done | apply Acc1].
    - rewrite sval_app_XE by done. by rewrite (proj2 Acc1).
    - apply wf_snoc. split; [done |]. unfold e. destruct (c t) eqn:Ec; simpl; split; try done.
      + by apply Hcut.
      + exists t. by apply Hpd.
    - intros i' t' o [Hin | Hin%elem_of_list_singleton]%elem_of_app; [| unfold e in Hin; by destruct (c t)].
      destruct (Ginv i' t' o Hin) as (Ht' & k & Hk' & -> & Ho). split; [done |]. exists k.
      destruct (decide (t' = t)) as [-> | Hne].
      + rewrite Hk. split_and!; [lia | done | lia].
      + rewrite Hsame by done. done.
    - intros u k Hu Hk'. destruct (decide (u = t)) as [-> | Hne].
      + rewrite Hk in Hk'. destruct (decide (k = kk (th t))) as [-> | Hne].
        * apply finished_snoc. right. unfold e. by destruct (c t).
        * apply finished_app, Gold; [done | lia].
      + apply finished_app, Gold; [done |]. by rewrite <- Hsame.
    - intros u Hu Hau. destruct (decide (u = t)) as [-> | Hne]; [congruence |].
      rewrite Hsame in Hau |- * by done. rewrite Hau, andb_true_r.
      destruct (Gact u Hu Hau) as (H1 & H2 & H3 & H4).
      assert (oid u (kk (th u)) ≠ i) as Hni by (intros Hid; apply oid_inj in Hid as [? _]; done).
      split_and!.
      + apply elem_of_app. by left.
      + intros [Hf | Hf]%finished_snoc; [done |]. unfold e in Hf. destruct (c t); simpl in Hf; done.
      + intros Hcu. apply pending_on_snoc. right. split_and!; [by apply H3 | unfold e; by destruct (c t) |].
        intros v' He2. unfold e in He2. destruct (c t); [done |]. injection He2 as ? _. done.
      + intros Hcu. by apply cut_off_app, H4.
    - intros u Hu Hau. rewrite Hau, andb_false_r. split; [| done].
      intros [Hinv' | (t' & o' & He')]%invoked_snoc; [| unfold e in He'; by destruct (c t)].
      destruct (decide (u = t)) as [-> | Hne].
      + rewrite Hk in Hinv'. by apply Hnext.
      + rewrite Hsame in Hau, Hinv' by done. by apply (Gidle u Hu Hau).
    - intros u o v Hu. destruct (decide (u = t)) as [-> | Hne].
      + rewrite Hk. split; [| intros [Ha'' _]; congruence].
        intros [Hin | Hin%elem_of_list_singleton]%elem_of_app; [by apply Nx1 in Hin | done].
      + rewrite Hsame by done. rewrite <- (Gpts u o v Hu), <- (Pts1 u o v Hne).
        split; [| intros; apply elem_of_app; by left].
        intros [Hin | Hin%elem_of_list_singleton]%elem_of_app; done.
    - intros u j [(o & He') | (Hp & _ & Hnr)]%pending_on_snoc; [unfold e in He'; by destruct (c t) |].
      destruct (Gpend u j Hp) as (Hu & Hau & -> & Hcu). destruct (decide (u = t)) as [-> | Hne].
      + exfalso. unfold e in Hnr. rewrite Hcu in Hnr. by apply (Hnr r).
      + rewrite Hsame by done. by rewrite Hau, Hcu.
  Qed.
End hinv.

Lemma cureff_mem NB p p' u T o v :
  (∀ n, act T = true → op T = Some n → durI p' n ↔ durI p n) →
  (∀ b, 1 ≤ b ≤ NB → act T = true → op T = None →
     (hist p' b = [[(kk T, u)]] ∧ durD p' b ↔ hist p b = [[(kk T, u)]] ∧ durD p b)) →
  cureff NB p' u T o v ↔ cureff NB p u T o v.
Proof.
  intros H1 H2. unfold cureff. destruct (op T) as [n |] eqn:Eo.
  - split; intros (Ha & -> & -> & Hd); (split; [done |]); (split; [done |]); (split; [done |]);
      by apply (H1 n Ha eq_refl).
  - split; intros (Ha & -> & Hv & Hhd); (split; [done |]); (split; [done |]); (split; [done |]);
      by apply (H2 v Hv Ha eq_refl).
Qed.

(** Another thread's point appended: thread [u]'s points are as they were,
    and so is its effect if the memory change does not touch it. *)
Lemma cureff_mem_other NB p p' u T o v (l : list (xevent iop nat)) t0 k0 o0 v0 :
  u ≠ t0 → (XL (oid u (kk T)) o v ∈ l ↔ cureff NB p u T o v) →
  (∀ n, act T = true → op T = Some n → durI p' n ↔ durI p n) →
  (∀ b, 1 ≤ b ≤ NB → act T = true → op T = None →
     (hist p' b = [[(kk T, u)]] ∧ durD p' b ↔ hist p b = [[(kk T, u)]] ∧ durD p b)) →
  XL (oid u (kk T)) o v ∈ l ++ [XL (oid t0 k0) o0 v0] ↔ cureff NB p' u T o v.
Proof.
  intros Hne Hpts H1 H2. rewrite (cureff_mem NB p p' u T o v H1 H2), <- Hpts.
  split; [| intros; apply elem_of_app; by left].
  intros [? | Hin%elem_of_list_singleton]%elem_of_app; [done |].
  injection Hin as Hid _ _. by apply oid_inj in Hid as [? _].
Qed.

(** A [repl] word not crossing the mark in a step: durable with the same
    contents after it iff before it. *)
Lemma durable_repl_same NB p p' b h : mgrow NB p p' → 1 ≤ b ≤ NB → (durD p' b ↔ durD p b) →
  (hist p' b = h ∧ durD p' b ↔ hist p b = h ∧ durD p b).
Proof.
  intros (_ & G2 & _ & G4) Hb HD. split; intros [Hh Hd].
  - split; [by rewrite <- (proj2 (G4 b Hb Hd)) | by apply HD].
  - assert (Hd2 : durD p' b) by (by apply G2). split; [by rewrite (proj2 (G4 b Hb Hd2)) | done].
Qed.

(** ** The ghost runs keep the invariant *)
Section ginv.
  Context (N NB : nat).
  Notation inv := (inv N NB).
  Notation tr := (tr N).
  Notation hinv := (hinv N NB).
  Notation step := (step N NB fixed).
  Notation reachable := (reachable N NB fixed).

  (** The points of a step (made from the threads' positions before it),
      on the memory after it. *)
  Lemma pts_hinv s s' l c : inv s → inv s' → mgrow NB (pm s) (pm s') → (∀ e, e ∈ ins s → e ∈ ins s') →
    hinv (th s) (pm s) l c → hinv (th s) (pm s') (l ++ pts NB s s') c.
  Proof.
    intros Hi Hi' Hg HA Hh. pose proof Hg as (G1 & G2 & G3 & G4).
    pose proof (i_m _ _ _ Hi) as Hm.
    destruct Hh as [Gok Gacc Gval Gwf Ginv Gold Gact Gidle Gpts Gpend].
    destruct (pts_cases N NB s s' Hi Hi' Hg HA) as
      [(Hp & HoI & HoD) | [(n & t0 & k0 & Hin & Hue & Hn' & Hp & HoI & HoD) | (b & k0 & t0 & Hb & Hh0 & Hnd & Hd' & Hp & HoI & HoD)]];
      rewrite Hp.
    - (* no effect became durable *)
      rewrite app_nil_r. split; try done.
      + destruct Gval as [(-> & Hno) | (Hb & Hl)]; [left; split; [done |] | right; split; [done |]].
        * intros b Hb [Hb1 Hb2]. apply (Hno b Hb). split; [by apply HoI | by rewrite <- HoD].
        * destruct Hl as [Hl1 Hl2]. split; [by apply HoI | by rewrite HoD].
      + intros u o v Hu. rewrite (Gpts u o v Hu). symmetry. apply cureff_mem.
        * intros n _ _. apply HoI.
        * intros b Hb _ _. apply (durable_repl_same NB); [exact Hg | done | by apply HoD].
    - (* INSERT [n]'s write became durable: its point *)
      assert (Ht0 : tr t0) by apply (i_ins _ _ _ Hi n t0 k0 Hin).
      pose proof (i_th _ _ _ Hi t0 Ht0) as Hti.
      assert (Hcur : k0 = kk (th s t0) ∧ op (th s t0) = Some n ∧ act (th s t0) = true).
      { destruct (t_ins _ _ _ _ _ Hti n k0 Hin) as [[Hlt [r Hr]] | (-> & Hop & Hpc)].
        - exfalso. pose proof (t_done _ _ _ _ _ Hti k0 (Some n) r Hr) as Hd. simpl in Hd.
          destruct Hue as [Hin' Hnd]. destruct Hd as (_ & [[_ Hd] | [_ Hn]] & _); done.
        - split_and!; [done | done |]. unfold act. by destruct (pc (th s t0)). }
      destruct Hcur as (-> & Hop & Ha0).
      assert (Hnot : ∀ o v, XL (oid t0 (kk (th s t0))) o v ∉ l).
      { intros o v Hin'. apply (Gpts t0 o v Ht0) in Hin' as [_ Hc]. rewrite Hop in Hc.
        destruct Hc as (_ & _ & Hd). by destruct Hue. }
      destruct (loc_ins NB (pm s) (ins s) n Hm (proj1 Hue)) as [Hnb _].
      assert (Hσ : sval l = 0).
      { destruct Gval as [[-> _] | (_ & Hl1 & Hl2)]; [done | exfalso].
        assert (sval l ≠ n) by (intros E; rewrite E in Hl1; by destruct Hue).
        destruct (two_ins NB (pm s) (ins s) (sval l) n Hm (durI_in _ _ Hl1) (proj1 Hue)) as [[? _] | [_ ?]];
          [done | done | by destruct Hue]. }
      assert (Hnd' : ¬ durD (pm s') n).
      { intros Hd. apply (proj2 Hue). apply (m_B _ _ _ Hm n Hnb). apply (proj1 (G4 n Hnb Hd)). }
      split; rewrite ?erase_snoc_XL; try done.
      + apply prefix_ok_snoc. split; [done |]. split; [| intros o' v'; apply Hnot].
        exists t0. destruct (Gact t0 Ht0 Ha0) as (Hinv & _). unfold opof in Hinv. by rewrite Hop in Hinv.
      + apply (accepts_snoc_XL _ _ _ _ n); [done |]. rewrite Hσ. by left.
      + rewrite sval_snoc_XL, Hσ. unfold sapply. simpl. repeat case_decide; try lia.
        right. split; [done |]. split; [done | done].
      + intros u o v Hu. destruct (decide (u = t0)) as [-> | Hne].
        * unfold cureff. rewrite Hop. split.
          -- intros [Hin' | Hin'%elem_of_list_singleton]%elem_of_app; [by apply Hnot in Hin' |].
             injection Hin' as <- <-. done.
          -- intros (_ & -> & -> & _). apply elem_of_app. right. by left.
        * apply (cureff_mem_other _ (pm s)); [done | by apply Gpts | |].
          -- intros m Ha Ho. apply HoI. intros ->.
             pose proof (ins_cur NB _ _ _ _ n (t_pc _ _ _ _ _ (i_th _ _ _ Hi u Hu)) Ha Ho) as Hin2.
             destruct (nd_unique _ n t0 (kk (th s t0)) u (kk (th s u)) (m_nd _ _ _ Hm) Hin Hin2). done.
          -- intros b Hb _ _. apply (durable_repl_same NB); [exact Hg | done | by apply HoD].
    - (* a DELETE's [repl] write became durable: its point *)
      assert (Htag0 : [(k0, t0)] ∈ hist (pm s) b) by (rewrite Hh0; by left).
      assert (Ht0 : tr t0) by apply (i_tag _ _ _ Hi b k0 t0 Hb Htag0).
      pose proof (i_th _ _ _ Hi t0 Ht0) as Hti.
      assert (Hcur : k0 = kk (th s t0) ∧ mold (th s t0) = Some b).
      { destruct (t_tag _ _ _ _ _ Hti b k0 Hb Htag0) as [Hlt | [-> Hmo]]; [| done].
        exfalso. destruct (lookup_lt_is_Some_2 (res (th s t0)) k0) as [[o r] Hr]; [rewrite (t_len _ _ _ _ _ Hti); lia |].
        pose proof (t_done _ _ _ _ _ Hti k0 o r Hr) as Hd. destruct o as [n |]; simpl in Hd.
        - destruct Hd as (_ & _ & Hnt). by apply (Hnt b Hb).
        - destruct Hd as [Hr1 Hr0']. assert (r = b) as -> by (by apply Hr1).
          destruct (Hr0' ltac:(lia)) as (_ & _ & Hdd). done. }
      destruct Hcur as (-> & Hmo).
      destruct (mold_del NB _ _ _ _ b (t_pc _ _ _ _ _ Hti) Hmo) as [Hop Ha0].
      assert (Hone : ∀ v, 1 ≤ v ≤ NB → hist (pm s) v = [[(kk (th s t0), t0)]] → v = b).
      { intros v Hv Hhv. destruct (t_tag _ _ _ _ _ Hti v (kk (th s t0)) Hv) as [? | [_ Hmo']];
          [rewrite Hhv; by left | lia | congruence]. }
      assert (Hnot : ∀ o v, XL (oid t0 (kk (th s t0))) o v ∉ l).
      { intros o v Hin'. apply (Gpts t0 o v Ht0) in Hin' as [_ Hc]. rewrite Hop in Hc.
        destruct Hc as (_ & Hv & Hhv & Hdv). rewrite (Hone v Hv Hhv) in Hdv. done. }
      assert (Hlive : live (pm s) b) by (split; [apply (m_B _ _ _ Hm b Hb); by rewrite Hh0 | done]).
      assert (Hσ : sval l = b).
      { destruct Gval as [[-> Hno] | (_ & Hl)]; [by destruct (Hno b Hb Hlive) | by apply (live_unique NB (pm s) (ins s))]. }
      split; rewrite ?erase_snoc_XL; try done.
      + apply prefix_ok_snoc. split; [done |]. split; [| intros o' v'; apply Hnot].
        exists t0. destruct (Gact t0 Ht0 Ha0) as (Hinv & _). unfold opof in Hinv. by rewrite Hop in Hinv.
      + apply (accepts_snoc_XL _ _ _ _ 0); [done |]. rewrite Hσ. left. split_and!; [lia | done | done].
      + rewrite sval_snoc_XL, Hσ. unfold sapply. simpl. repeat case_decide; try lia. left. split; [done |].
        intros b' Hb' [Hb1 Hb2]. destruct (decide (b' = b)) as [-> | Hne]; [done |].
        apply HoI in Hb1. rewrite (HoD b' Hb' Hne) in Hb2. apply Hne.
        by apply (live_unique NB (pm s) (ins s)).
      + intros u o v Hu. destruct (decide (u = t0)) as [-> | Hne].
        * unfold cureff. rewrite Hop. split.
          -- intros [Hin' | Hin'%elem_of_list_singleton]%elem_of_app; [by apply Hnot in Hin' |].
             injection Hin' as -> ->. split_and!; try done; try lia. by rewrite (proj2 (G4 b Hb Hd')).
          -- intros (_ & -> & Hv & Hhv & Hdv).
             rewrite (proj2 (G4 v Hv Hdv)) in Hhv. rewrite (Hone v Hv Hhv).
             apply elem_of_app. right. by left.
        * apply (cureff_mem_other _ (pm s)); [done | by apply Gpts | |].
          -- intros m _ _. apply HoI.
          -- intros b' Hb' _ _. destruct (decide (b' = b)) as [-> | Hbb].
             ++ split; intros [Hh' Hd]; [exfalso | done].
                rewrite (proj2 (G4 b Hb Hd)), Hh0 in Hh'. injection Hh' as _ Hu0. congruence.
             ++ apply (durable_repl_same NB); [exact Hg | done | by apply HoD].
  Qed.
End ginv.

(** ** Assembly: every ghost run keeps the invariant *)
Section assembly.
  Context (N NB : nat).
  Notation inv := (inv N NB).
  Notation tr := (tr N).
  Notation hinv := (hinv N NB).
  Notation step := (step N NB fixed).
  Notation reachable := (reachable N NB fixed).

  Lemma evu_quiet s s' c u : quiet (th s u) (th s' u) → evu s s' c u = [].
  Proof.
    intros (Ha & Hk & _). unfold evu. rewrite Ha, Hk, bool_decide_false by lia.
    destruct (act (th s u)); reflexivity.
  Qed.

  Lemma pts_same s s' : pm s' = pm s → pts NB s s' = [].
  Proof. intros E. unfold pts. apply mjoin_nil. intros u _. apply ptsu_none; rewrite E; done. Qed.

  (** At its commit, the operation's effect is durable with the committed
      result, or it has none. *)
  Lemma commit_cur s p' t r : inv s → tr t → pc (th s t) = PCommit r → mgrow NB (pm s) p' →
    (r ≠ 0 → cureff NB p' t (th s t) (opof (th s t)) r) ∧ (r = 0 → ∀ o v, ¬ cureff NB p' t (th s t) o v).
  Proof.
    intros Hi Ht Hpc (G1 & G2 & G3 & G4). pose proof (i_th _ _ _ Hi t Ht) as Hti.
    pose proof (t_pc _ _ _ _ _ Hti) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    assert (Ha : act (th s t) = true) by (unfold act; by rewrite Hpc).
    unfold cureff, opof. destruct (op (th s t)) as [n |] eqn:Eo.
    - destruct Hp as (Hin & Hmo & [[-> Hd] | [-> Hn]]).
      + split; [intros _; split_and!; [done | done | done | by apply G1] | done].
      + split; [done |]. intros _ o v (_ & _ & _ & Hd). by apply Hn, G3.
    - destruct Hp as [[-> Hm0] | (Hb & Hmo & Hd & Hh & Hdd)].
      + split; [done |]. intros _ o v (_ & _ & Hv & Hh & Hdv).
        rewrite (proj2 (G4 v Hv Hdv)) in Hh.
        destruct (t_tag _ _ _ _ _ Hti v (kk (th s t)) Hv) as [? | [_ Hmo]]; [rewrite Hh; by left | lia |].
        destruct Hm0 as [Hm0 | (b' & Hm0 & _ & _ & Hnt)]; rewrite Hm0 in Hmo; [done |].
        injection Hmo as ->. apply (Hnt (kk (th s t))); [lia | rewrite Hh; by left].
      + split; [| intros; lia]. intros _. split_and!; try done; try lia.
        * by rewrite (proj2 (G4 r Hb (G2 r Hb Hdd))).
        * by apply G2.
  Qed.

  Lemma crash_quiet_any s keep u : quiet (th s u) (th (crash_st N s keep) u).
  Proof. unfold crash_st. cbn [th]. case_decide; [apply quiet_crash | done]. Qed.

  Definition ginv (g : gstate) : Prop := reachable (gs g) ∧ hinv (th (gs g)) (pm (gs g)) (gx g) (gc g).

  Lemma ginv_init : ginv (ginit NB).
  Proof. split; [apply rtc_refl | apply hinv_init]. Qed.

  Lemma ginv_step g g' : ginv g → gstep N NB g g' → ginv g'.
  Proof.
    intros [Hr Hh] Hs. pose proof (reachable_inv N NB _ Hr) as Hi.
    destruct Hs as [g s' Hs | g keep Hok].
    - assert (Hr' : reachable s') by (eapply rtc_r; [exact Hr | exact Hs]).
      pose proof (reachable_inv N NB _ Hr') as Hi'.
      pose proof (step_mgrow N NB _ _ Hi Hi' Hs) as Hg.
      split; [done |]. cbn [gs gx gc]. unfold ev. rewrite app_assoc.
      destruct (step_cases N NB (gs g) s' Hi Hs) as [(t & Ht & Hoth & HA & Hcl) | (keep & Hok & ->)].
      + assert (Hev : mjoin (evu (gs g) s' (gc g) <$> seq 1 N) = evu (gs g) s' (gc g) t).
        { apply mjoin_single; [apply NoDup_seq | apply elem_of_seq; unfold tr in Ht; lia |].
          intros u _ Hne. apply evu_quiet. rewrite (Hoth u Hne). done. }
        rewrite Hev.
        pose proof (pts_hinv N NB _ _ _ _ Hi Hi' Hg HA Hh) as Hp.
        destruct Hcl as [Hq | [(Ha & Ha' & Hk & Hpm & Hno) | (Ha & Ha' & Hk & Hpc & Hpm & Hres)]].
        * rewrite evu_quiet, app_nil_r by done.
          pose proof (hinv_quiet N NB _ (th s') _ _ _ false Hp) as H. cbn [orb] in H. rewrite app_nil_r in H.
          apply H. intros u _. destruct (decide (u = t)) as [-> | Hne]; [done | rewrite (Hoth u Hne); done].
        * rewrite (pts_same _ _ Hpm), app_nil_r in Hp |- *.
          assert (Hevt : evu (gs g) s' (gc g) t = [XE (Invoke (oid t (kk (th (gs g) t))) t (opof (th s' t)))]).
          { unfold evu. rewrite Ha, Ha', Hk, bool_decide_false by lia. done. }
          rewrite Hevt. by apply (hinv_invoke N NB (th (gs g)) (th s') (pm s') _ (gc g) t).
        * assert (Hevt : evu (gs g) s' (gc g) t =
            (if bool_decide (rof (th (gs g) t) = 0) then [XL (oid t (kk (th (gs g) t))) (opof (th (gs g) t)) 0] else []) ++
            [XE (if gc g t then Recover (oid t (kk (th (gs g) t))) (rof (th (gs g) t))
                 else Return (oid t (kk (th (gs g) t))) (rof (th (gs g) t)))]).
          { unfold evu. rewrite Ha, Ha', (bool_decide_true _ Hk). done. }
          rewrite Hevt. destruct (commit_cur (gs g) (pm s') t _ Hi Ht Hpc Hg) as [Hr1 Hr0].
          by apply (hinv_commit N NB (th (gs g)) (th s') (pm s') _ (gc g) t).
      + (* a silent full crash *)
        rewrite mjoin_nil by (intros u _; apply evu_quiet, crash_quiet_any). rewrite app_nil_r.
        pose proof (pts_hinv N NB _ _ _ _ Hi Hi' Hg (λ e He, He) Hh) as Hp.
        pose proof (hinv_quiet N NB _ (th (crash_st N (gs g) keep)) _ _ _ false Hp) as H. cbn [orb] in H.
        rewrite app_nil_r in H. apply H. intros u _. apply crash_quiet_any.
    - assert (Hr' : reachable (crash_st N (gs g) keep)) by (eapply rtc_r; [exact Hr | by apply SCrash]).
      pose proof (reachable_inv N NB _ Hr') as Hi'.
      pose proof (step_mgrow N NB _ _ Hi Hi' (SCrash N NB fixed (gs g) keep Hok)) as Hg.
      split; [done |]. cbn [gs gx gc]. rewrite app_assoc.
      pose proof (pts_hinv N NB _ _ _ _ Hi Hi' Hg (λ e He, He) Hh) as Hp.
      pose proof (hinv_quiet N NB _ (th (crash_st N (gs g) keep)) _ _ _ true Hp) as H. cbn [orb andb] in H.
      apply H. intros u _. apply crash_quiet_any.
  Qed.

  Lemma greach_ginv g : greach N NB g → ginv g.
  Proof. apply rtc_preserved; [apply ginv_init | apply ginv_step]. Qed.
End assembly.

(** ** The theorems *)
Section theorems.
  Context (N NB : nat).
  Notation reachable := (reachable N NB fixed).
  Notation greach := (greach N NB).

  (** Every run of the model has its history: the ghost runs are the
      model's runs. *)
  Theorem insdel_lin_every_run s : reachable s ↔ ∃ g, greach g ∧ gs g = s.
  Proof.
    apply (ghost_runs _ _ gs _ (ginit NB)); [done | intros g Hg; apply (proj1 (greach_ginv N NB g Hg)) |].
    intros g s' _ _ Hs. eexists. split; [by apply g_step | done].
  Qed.

  (** (a) Durable linearizability: the history of every run, with its
      points, is a witness for the slot of [slot_spec]. *)
  Theorem insdel_lin_durably_linearizable g : greach g → durably_linearizable slot_spec (erase (gx g)).
  Proof. intros Hg. destruct (greach_ginv N NB g Hg) as [_ [Hok Hacc]]. by apply durably_linearizable_erase. Qed.

  (** (b) The histories are well formed. *)
  Theorem insdel_lin_wf g : greach g → wf (erase (gx g)).
  Proof. intros Hg. destruct (greach_ginv N NB g Hg) as [_ Hh]. by destruct Hh. Qed.

  (** The operations of the history are the threads' root operations,
      numbered ([DurableLin.v]'s [numbered]): (c) and (d) are
      [DurableLin.v]'s [numbered_cut_off_recovered] and
      [numbered_detectable]. *)
  Lemma greach_numbered g : greach g →
    numbered (tr N) (λ t, kk (th (gs g) t)) (λ t, act (th (gs g) t)) (erase (gx g)).
  Proof.
    intros Hg. destruct (greach_ginv N NB g Hg) as [_ [_ _ _ Gwf Ginv Gold _ Gidle _ _]].
    split; [exact Gwf | | exact Gold |].
    - intros i (t & o & Hin). destruct (Ginv i t o Hin) as (Ht & k & Hle & -> & _). by exists t, k.
    - intros u Hu Ha. apply (proj1 (Gidle u Hu Ha)).
  Qed.

  (** (c) Every operation a crash cut off is recovered (with the result it
      took effect with: a [recover] follows its point, with its value), or
      it is the one its thread is still running (in recovery). *)
  Theorem insdel_lin_cut_off_recovered g i : greach g → cut_off (erase (gx g)) i →
    recovered (erase (gx g)) i ∨ ∃ t, tr N t ∧ act (th (gs g) t) = true ∧ i = oid t (kk (th (gs g) t)).
  Proof. intros Hg. apply (numbered_cut_off_recovered _ _ _ _ i (greach_numbered g Hg)). Qed.

  (** (d) Detectability: once no thread is inside a root operation (every
      recovery has committed), the history is [detectable] for
      [slot_spec]: durably linearizable, every cut-off operation recovered. *)
  Theorem insdel_lin_detectable g : greach g → (∀ t, tr N t → act (th (gs g) t) = false) →
    detectable slot_spec (erase (gx g)).
  Proof.
    intros Hg. apply (numbered_detectable _ _ _ _ _ (greach_numbered g Hg) (insdel_lin_durably_linearizable g Hg)).
  Qed.

  (** (e) The specification's slot is what the memory holds durably: the
      block whose insert is under [LOC]'s mark and whose [repl] word is not
      under its own (at most one), or empty if there is none. *)
  Theorem insdel_lin_slot g : greach g → slot_is NB (pm (gs g)) (sval (gx g)).
  Proof. intros Hg. destruct (greach_ginv N NB g Hg) as [_ Hh]. by destruct Hh. Qed.

  (** (f) An in-flight operation has a point iff its effect is durable:
      INSERT [n] with OK once its persist-bit write is under the mark, a
      DELETE with the block whose [repl] word it wrote once that is under
      the mark; it takes effect at most once. *)
  Theorem insdel_lin_points g t o v : greach g → tr N t →
    XL (oid t (kk (th (gs g) t))) o v ∈ gx g ↔ cureff NB (pm (gs g)) t (th (gs g) t) o v.
  Proof. intros Hg Ht. destruct (greach_ginv N NB g Hg) as [_ Hh]. destruct Hh as [_ _ _ _ _ _ _ _ Gpts _]. by apply Gpts. Qed.
End theorems.

(** ** The theorems are not vacuous *)
Section not_vacuous.
  Tactic Notation "gs_go" uconstr(c) := eapply rtc_l_eq'; [apply g_step; apply c; side | norm_state |].
  Ltac gcrash_go keep := eapply rtc_l_eq'; [apply (g_crash _ _ _ keep); side | norm_state |].

  (** One thread, one block: INSERT 1 writes its persist bit (L21); a
      full crash keeps that write by eviction, before any write-back (the
      point, placed at the crash); recovery's LOAD finds the persist bit,
      flushes and clears it (L11–L14), and returns OK. *)
  Lemma insdel_lin_not_vacuous_run :
    ∃ g, greach 1 1 g ∧ (∀ t, tr 1 t → act (th (gs g) t) = false) ∧
      gx g = [XE (Invoke (oid 1 0) 1 (IIns 1)); XL (oid 1 0) (IIns 1) 1; XE Crash; XE (Recover (oid 1 0) 1)].
  Proof.
    eexists. split; [| split].
    - unfold greach, ginit.
      gs_go (SInsStart _ _ _ _ 1 1).
      gs_go (SI21ok _ _ _ _ 1 1).
      gcrash_go (λ L : nat, if decide (L = 0) then 1 else 0).
      gs_go (SLfix _ _ _ _ 1 (LInsRec 1) 1).
      gs_go (SCommit _ _ _ _ 1 1).
      apply rtc_refl.
    - intros t Ht. unfold tr in Ht. assert (t = 1) as -> by lia. vm_compute. reflexivity.
    - vm_compute. reflexivity.
  Qed.

  (** A run whose history has an INSERT that took effect, was cut off by a
      crash, and was recovered with OK; the history is detectable. *)
  Theorem insdel_lin_not_vacuous :
    ∃ g, greach 1 1 g ∧
      erase (gx g) = [Invoke (oid 1 0) 1 (IIns 1); Crash; Recover (oid 1 0) 1] ∧
      XL (oid 1 0) (IIns 1) 1 ∈ gx g ∧
      cut_off (erase (gx g)) (oid 1 0) ∧ recovered (erase (gx g)) (oid 1 0) ∧
      detectable slot_spec (erase (gx g)).
  Proof.
    destruct insdel_lin_not_vacuous_run as (g & Hg & Hq & Eh). exists g.
    assert (erase (gx g) = [Invoke (oid 1 0) 1 (IIns 1); Crash; Recover (oid 1 0) 1]) as Ee by (rewrite Eh; done).
    split_and!; [done | done | rewrite Eh; right; left | | |].
    - rewrite Ee. exists [], [], [Recover (oid 1 0) 1], 1, (IIns 1). split; [done |].
      intros v Hin. by apply elem_of_nil in Hin.
    - rewrite Ee. exists 1. by right; right; left.
    - by apply (insdel_lin_detectable 1 1).
  Qed.
End not_vacuous.

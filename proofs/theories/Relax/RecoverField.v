(** * RELAX's recoverField on one Mirror field: Claim 2, and where it fails

    A transition system for one [patomic] field P of RELAX (thesis, Chapter
    6, §6.3.1, Algorithm 6.2 [RecoverField]) after a crash: its NVMM pair
    [nv] and DRAM pair [dr], each (value, sequence number) with sequence
    numbers modulo [M = 2^k] for any [k ≥ 2]; any number of threads running
    [recover_field] on P concurrently ([rs t] is thread [t]'s program
    counter and the values it read); Mirror's writers (Algorithm 4.1)
    interleaved with them once some [recover_field] has returned.  It
    justifies the invariants of [specs/relax/RelaxRecoverField.tla] and the
    sequence-number arithmetic of [recover_field] in [impl/perdure-relax].

    Superseded by [RecoverFieldPx.v] as the model of [recover_field]: this
    model takes persistence as immediate (an NVMM pair counts as persisted
    when written), so Finding R1 of [specs/relax/README.md] cannot even be
    stated in it.  [RecoverFieldPx.v] re-founds it on Px86's line-granular
    persistence ([Core/PxPersist.v]), proves Findings R1 and R2 and the
    fixed protocol there, and reuses this file's Claim 2 through a
    simulation of this model.

    The steps ([step]), each one atomic:
    - [s_line1]: Algorithm 6.2 line 1, read the DRAM pair (one 16-byte load);
    - [s_line2]: line 2, read the NVMM pair (one 16-byte load);
    - [s_revalidate_fail] (only when [validate] is true, see below): the DRAM
      pair is read again and differs from line 1's: goto 1;
    - [s_line3]: line 3, the pairs are equal: return;
    - [s_line4] / [s_line4_skip]: line 4's window test
      [0 < (S_D − S_NV) mod 2^k ≤ wtop] ([window]), true / false, where the
      end point [wtop] is [2^(k−1)] as in Algorithm 6.2 ([strict] false) or
      [2^(k−1) − 1], i.e. [< 2^63] as in the Chapter 7 text ([strict]
      true); every theorem below is for either unless it says otherwise;
    - [s_line41_ok] / [s_line41_fail]: line 4.1, CAS of the NVMM sequence
      number from [S_NV] to [S_D + 1] (the value is left), then line 4.2 /
      goto 1;
    - [s_line5_ok] / [s_line5_fail]: line 5, DWCAS of the DRAM pair from
      [(V_D, S_D)] to [(V_NV, S_NV)]: return / goto 1;
    - [s_write]: a Mirror CAS's successful DWCAS on the NVMM pair (Algorithm
      4.1, line 40), enabled when the sequence numbers are equal (its reads
      on lines 5–29 found them equal; here read and DWCAS are one step);
    - [s_help]: a Mirror DWCAS copying the NVMM pair to DRAM (lines 19–24 and
      44), enabled when NVMM's sequence number is DRAM's plus one.
    Writers run only once [recovered] holds, i.e. after the first
    [recover_field] on P returned (the tracking mechanism's job, Claim 1,
    see [Relax/Tracking.v]).  The initial state ([init]) is any state right
    after a crash: any NVMM pair, any DRAM pair (arbitrary garbage), no
    thread inside [recover_field]; a later crash starts the system again
    from such a state, so the theorems hold across any number of crashes.

    The stall bound (the hypothesis of Claim 2) is a restriction on the
    schedule: a thread takes a step of [recover_field] only while fewer
    than [2^(k−1)] modifications of P's NVMM pair happened since its last
    line-1 read ([mods s − t0 < half]); for [k = 64] this is the thesis's
    "no thread is halted while others execute 2^63 modifications".  A
    schedule that breaks it is simply not a behaviour of the model.

    Ghost state (read by no guard, only by the proofs): [mods] counts NVMM
    modifications; [d0], [n0] are the DRAM and NVMM pairs right after the
    crash; after the first return, [mrec] is [mods] at that moment, [hist i]
    the value of the [i]-th NVMM version, [base + i] (mod [M]) its
    sequence number, and [dv] the version DRAM holds.

    Proved:
    - [claim2_mirror_invariants]: with [validate] true, in every reachable
      state in which some [recover_field] has returned, Mirror's first
      invariant (NVMM seq = DRAM seq or DRAM seq + 1, mod 2^k) and the
      equal-seqs-equal-values invariant hold;
    - [claim2_nvmm_changes_only_when_seqs_equal]: Mirror's second
      invariant: after the first return, every step that changes the NVMM
      pair starts from a state with equal sequence numbers;
    - [claim2_line41_fails_after_recovery]: after the first return no line
      4.1 CAS succeeds (recover_field never writes NVMM again).
    - [claim2_fails_for_algorithm_6_2]: with [validate] false, i.e.
      Algorithm 6.2 exactly as published, for every [k ≥ 2] and either end
      point of the window, a reachable state breaks Mirror's first
      invariant although no thread stalled for more than one
      modification.  The schedule: right after the crash NVMM = (0, 0) and
      DRAM = (1, wtop+1) (garbage just outside the window); threads u and
      t read DRAM; u reads NVMM, skips line 4.1 and copies (0, 0) to DRAM
      (recovered); a writer stores (5, 1) in both replicas; t reads NVMM =
      (5, 1), finds [(wtop+1) − 1 = wtop] inside the window and its line
      4.1 CAS sets NVMM's seq to wtop+2, while DRAM holds seq 1.  The
      thesis's argument (Chapter 7) covers a thread that read the
      post-crash DRAM and NVMM, and one that read both after recovery, but
      not one that read the post-crash DRAM before and NVMM after the
      first recovery.
    - [claim2_inclusive_window_fails_at_the_bound]: with [validate] false
      and no garbage at all (DRAM after the crash equal to NVMM), for every
      [k ≥ 2]: a thread reads DRAM = (0, 0) after the first return, stalls
      while [2^(k−1) − 1] further writes complete (within the stall bound),
      reads NVMM's seq [2^(k−1)], which Algorithm 6.2's inclusive test
      ([≤ 2^63]) puts inside the window, and its line 4.1 CAS sets NVMM's
      seq back to 1 while DRAM holds [2^(k−1)].  With the strict test
      ([strict] true) this schedule's line 4 test is false; the previous
      counterexample holds for both end points.
    The fix proved here ([validate] true): after line 2, read the DRAM pair
    again and go to line 1 if it changed since line 1 (as Mirror's own CAS
    re-reads before it acts).  With it the thesis's stall bound (fewer
    than [2^(k−1)] modifications) suffices, with either end point of the
    window.

    Not covered: the values of fields other than P (each field is
    independent: P's steps touch only P's two pairs); Mirror's CAS itself
    (its reads and DWCASes as separate steps, helping, the expected-value
    test: see [Relax/MirrorCas.v] for a crash-free logically atomic proof;
    here a writer's read and DWCAS are one step); Px86 persistence (the
    NVMM pair is taken to be persisted when written: see
    [RecoverFieldPx.v]); [k = 1] (the window test
    degenerates); liveness (the stall bound is a safety restriction only). *)
From Coq Require Import ZArith Lia.
Open Scope Z_scope.

Section recover_field.
  Context (k : Z) (Hk : 2 <= k) (strict : bool).

  (** ** Sequence numbers modulo [M = 2^k] *)
  Definition M : Z := 2 ^ k.
  Definition half : Z := 2 ^ (k - 1).

  Lemma M_is_twice_half : M = 2 * half.
  Proof.
    unfold M, half. rewrite <- Z.pow_succ_r by lia. f_equal. lia.
  Qed.

  Lemma half_ge_2 : 2 <= half.
  Proof.
    unfold half. change 2 with (2 ^ 1) at 1. apply Z.pow_le_mono_r; lia.
  Qed.

  Lemma M_pos : 0 < M.
  Proof. pose proof M_is_twice_half. pose proof half_ge_2. lia. Qed.

  Lemma mod_in_range x : 0 <= x mod M < M.
  Proof. apply Z.mod_pos_bound, M_pos. Qed.

  Lemma mod_small_id x : 0 <= x < M -> x mod M = x.
  Proof. apply Z.mod_small. Qed.

  (** Two numbers less than [M] apart that are equal modulo [M] are equal:
      the fact the stall bound buys. *)
  Lemma mod_eq_close a b : 0 <= b - a < M -> a mod M = b mod M -> a = b.
  Proof.
    intros Hr He. pose proof M_pos.
    assert ((b - a) mod M = 0) as H0.
    { rewrite Zminus_mod, He, Z.sub_diag. apply Z.mod_0_l. lia. }
    rewrite Z.mod_small in H0 by lia. lia.
  Qed.

  Lemma mod_minus_one : (-1) mod M = M - 1.
  Proof.
    pose proof M_pos. symmetry. apply (Z.mod_unique _ _ (-1)); lia.
  Qed.

  (** Line 4's test: [0 < (S_D − S_NV) mod 2^k ≤ wtop], with [wtop] the
      end point: [2^(k−1)] as in Algorithm 6.2 ([strict] false), or
      [2^(k−1) − 1], i.e. [< 2^(k−1)] as in the Chapter 7 text ([strict]
      true). *)
  Definition wtop : Z := if strict then half - 1 else half.

  Lemma wtop_bounds : half - 1 <= wtop <= half.
  Proof. unfold wtop. destruct strict; lia. Qed.

  Definition window (sd sn : Z) : Prop := 0 < (sd - sn) mod M <= wtop.

  Lemma no_window_same x : ~ window x x.
  Proof. unfold window. rewrite Z.sub_diag, Z.mod_0_l; [lia|pose proof M_pos; lia]. Qed.

  Lemma no_window_succ x : ~ window x ((x + 1) mod M).
  Proof.
    unfold window. rewrite Zminus_mod_idemp_r.
    replace (x - (x + 1)) with (-1) by lia. rewrite mod_minus_one.
    pose proof M_is_twice_half. pose proof half_ge_2. pose proof wtop_bounds. lia.
  Qed.

  Lemma succ_mod_neq x : (x + 1) mod M <> x mod M.
  Proof.
    intros H. symmetry in H. apply mod_eq_close in H; [lia|].
    pose proof half_ge_2. pose proof M_is_twice_half. lia.
  Qed.

  (** ** The model *)

  (** A replica of P: (value, sequence number). *)
  Definition cell : Type := (Z * Z)%type.

  (** A thread's position in [recover_field] and what it read: [t0] is the
      ghost count of NVMM modifications at its line-1 read. *)
  Inductive rstate : Type :=
  | RIdle                           (* outside recover_field (or at line 1) *)
  | RL2 (vd sd t0 : Z)              (* line 1 done: DRAM read *)
  | RV (vd sd vn sn t0 : Z)         (* line 2 done: NVMM read *)
  | RL41 (vd sd vn sn t0 : Z)       (* about to CAS line 4.1 *)
  | RL5 (vd sd vn sn t0 : Z).       (* about to DWCAS line 5 *)

  Record state : Type := St {
    nv : cell;                (* NVMM(P) *)
    dr : cell;                (* DRAM(P) *)
    recovered : bool;         (* some recover_field on P has returned *)
    rs : nat -> rstate;       (* the recovering threads *)
    (* ghost *)
    mods : Z; d0 : cell; n0 : cell; mrec : Z; base : Z; dv : Z; hist : Z -> Z
  }.

  Definition upd (f : nat -> rstate) (t : nat) (r : rstate) : nat -> rstate :=
    fun t' => if Nat.eqb t' t then r else f t'.

  Definition set_rs (s : state) (t : nat) (r : rstate) : state :=
    St (nv s) (dr s) (recovered s) (upd (rs s) t r)
       (mods s) (d0 s) (n0 s) (mrec s) (base s) (dv s) (hist s).

  (** The first return fixes the ghost numbering of NVMM versions: the
      current one, [mods], is [c]. *)
  Definition first_recovery (s : state) (c : cell) : state :=
    St (nv s) c true (rs s) (mods s) (d0 s) (n0 s)
       (mods s) (snd c - mods s) (mods s) (fun _ => fst c).

  (** Line 3's return. *)
  Definition ret (s : state) : state :=
    if recovered s then s else first_recovery s (dr s).

  (** Line 5's successful DWCAS writes [c] to DRAM. *)
  Definition dram_write (s : state) (c : cell) : state :=
    if recovered s then
      St (nv s) c true (rs s) (mods s) (d0 s) (n0 s) (mrec s) (base s)
         (if (base s + mods s) mod M =? snd c then mods s else mods s - 1) (hist s)
    else first_recovery s c.

  (** Line 4.1's successful CAS: NVMM's seq becomes [sq]. *)
  Definition nvmm_seq_write (s : state) (sq : Z) : state :=
    St (fst (nv s), sq) (dr s) (recovered s) (rs s) (mods s + 1) (d0 s) (n0 s)
       (mrec s) (base s) (dv s) (hist s).

  Definition hist_upd (h : Z -> Z) (i v : Z) : Z -> Z :=
    fun j => if Z.eq_dec j i then v else h j.

  (** [validate]: whether line 2 is followed by a re-read of DRAM (the fix);
      [false] is Algorithm 6.2 as published. *)
  Inductive step (validate : bool) : state -> state -> Prop :=
  | s_line1 s t :
      rs s t = RIdle ->
      step validate s (set_rs s t (RL2 (fst (dr s)) (snd (dr s)) (mods s)))
  | s_line2 s t vd sd t0 :
      rs s t = RL2 vd sd t0 -> mods s - t0 < half ->
      step validate s (set_rs s t (RV vd sd (fst (nv s)) (snd (nv s)) t0))
  | s_revalidate_fail s t vd sd vn sn t0 :
      validate = true -> rs s t = RV vd sd vn sn t0 -> mods s - t0 < half ->
      dr s <> (vd, sd) ->
      step validate s (set_rs s t RIdle)
  | s_line3 s t vd sd vn sn t0 :
      rs s t = RV vd sd vn sn t0 -> mods s - t0 < half ->
      (validate = true -> dr s = (vd, sd)) ->
      (vn, sn) = (vd, sd) ->
      step validate s (ret (set_rs s t RIdle))
  | s_line4 s t vd sd vn sn t0 :
      rs s t = RV vd sd vn sn t0 -> mods s - t0 < half ->
      (validate = true -> dr s = (vd, sd)) ->
      (vn, sn) <> (vd, sd) -> window sd sn ->
      step validate s (set_rs s t (RL41 vd sd vn sn t0))
  | s_line4_skip s t vd sd vn sn t0 :
      rs s t = RV vd sd vn sn t0 -> mods s - t0 < half ->
      (validate = true -> dr s = (vd, sd)) ->
      (vn, sn) <> (vd, sd) -> ~ window sd sn ->
      step validate s (set_rs s t (RL5 vd sd vn sn t0))
  | s_line41_ok s t vd sd vn sn t0 :
      rs s t = RL41 vd sd vn sn t0 -> mods s - t0 < half ->
      snd (nv s) = sn ->
      step validate s
        (nvmm_seq_write (set_rs s t (RL5 vd sd vn ((sd + 1) mod M) t0)) ((sd + 1) mod M))
  | s_line41_fail s t vd sd vn sn t0 :
      rs s t = RL41 vd sd vn sn t0 -> mods s - t0 < half ->
      snd (nv s) <> sn ->
      step validate s (set_rs s t RIdle)
  | s_line5_ok s t vd sd vn sn t0 :
      rs s t = RL5 vd sd vn sn t0 -> mods s - t0 < half ->
      dr s = (vd, sd) ->
      step validate s (dram_write (set_rs s t RIdle) (vn, sn))
  | s_line5_fail s t vd sd vn sn t0 :
      rs s t = RL5 vd sd vn sn t0 -> mods s - t0 < half ->
      dr s <> (vd, sd) ->
      step validate s (set_rs s t RIdle)
  | s_write s v :
      recovered s = true -> snd (nv s) = snd (dr s) ->
      step validate s
        (St (v, (snd (nv s) + 1) mod M) (dr s) true (rs s) (mods s + 1) (d0 s) (n0 s)
            (mrec s) (base s) (dv s) (hist_upd (hist s) (mods s + 1) v))
  | s_help s :
      recovered s = true -> snd (nv s) = (snd (dr s) + 1) mod M ->
      step validate s
        (St (nv s) (nv s) true (rs s) (mods s) (d0 s) (n0 s) (mrec s) (base s) (mods s) (hist s)).

  Definition in_range (x : Z) : Prop := 0 <= x < M.

  (** Right after a crash: any pairs (sequence numbers are k-bit words). *)
  Definition init (s : state) : Prop :=
    recovered s = false /\ (forall t, rs s t = RIdle) /\ mods s = 0 /\
    d0 s = dr s /\ n0 s = nv s /\ in_range (snd (nv s)) /\ in_range (snd (dr s)).

  Inductive reachable (validate : bool) : state -> Prop :=
  | reach_init s : init s -> reachable validate s
  | reach_step s s' : reachable validate s -> step validate s s' -> reachable validate s'.

  (** Mirror's first invariant and the equal-seqs-equal-values invariant. *)
  Definition mirror_inv (s : state) : Prop :=
    (snd (nv s) = snd (dr s) \/ snd (nv s) = (snd (dr s) + 1) mod M) /\
    (snd (nv s) = snd (dr s) -> fst (nv s) = fst (dr s)).

  (** ** The inductive invariant *)

  (** NVMM after a successful line 4.1 before the first return. *)
  Definition bumped (s : state) : cell := (fst (n0 s), (snd (d0 s) + 1) mod M).

  (** Before the first return: DRAM is untouched, NVMM is the post-crash
      pair or that pair with the sequence bumped once. *)
  Definition pre_ok (s : state) (r : rstate) : Prop :=
    match r with
    | RIdle => True
    | RL2 vd sd t0 => (vd, sd) = d0 s /\ 0 <= t0 <= mods s
    | RV vd sd vn sn t0 =>
        (vd, sd) = d0 s /\ 0 <= t0 <= mods s /\
        ((vn, sn) = n0 s /\ t0 = 0 \/ (vn, sn) = bumped s /\ nv s = bumped s)
    | RL41 vd sd vn sn t0 =>
        (vd, sd) = d0 s /\ (vn, sn) = n0 s /\ window (snd (d0 s)) (snd (n0 s)) /\ t0 = 0
    | RL5 vd sd vn sn t0 =>
        (vd, sd) = d0 s /\ (vn, sn) = nv s /\ (vn, sn) <> d0 s /\
        (~ window sd sn \/ sn = (sd + 1) mod M) /\ 0 <= t0 <= mods s
    end.

  Definition pre_inv (s : state) : Prop :=
    dr s = d0 s /\
    (nv s = n0 s /\ mods s = 0 \/
     nv s = bumped s /\ window (snd (d0 s)) (snd (n0 s)) /\ mods s = 1) /\
    forall t, pre_ok s (rs s t).

  (** After the first return: the [i]-th NVMM version. *)
  Definition rcell (s : state) (i : Z) : cell := (hist s i, (base s + i) mod M).

  (** A thread that read the post-crash DRAM before the first return, when
      that pair is not the one recovered. *)
  Definition stale (s : state) (vd sd t0 : Z) : Prop :=
    (vd, sd) = d0 s /\ d0 s <> rcell s (mrec s) /\ t0 <= mrec s.

  Definition post_ok (s : state) (r : rstate) : Prop :=
    match r with
    | RIdle => True
    | RL2 vd sd t0 =>
        (exists d, (vd, sd) = rcell s d /\ mrec s <= d <= dv s /\ t0 <= d + 1) \/
        stale s vd sd t0
    | RV vd sd vn sn t0 =>
        (exists d dn c, (vd, sd) = rcell s d /\ (vn, sn) = rcell s c /\
           mrec s <= d <= dn /\ dn <= dv s /\ dn <= c <= dn + 1 /\ c <= mods s /\
           t0 <= d + 1) \/
        stale s vd sd t0
    | RL41 vd sd vn sn t0 =>
        (vd, sd) = d0 s /\ (vn, sn) = n0 s /\ window (snd (d0 s)) (snd (n0 s)) /\ t0 = 0 /\
        mrec s = 1 /\ (base s + 1) mod M = (snd (d0 s) + 1) mod M
    | RL5 vd sd vn sn t0 =>
        (exists d c, (vd, sd) = rcell s d /\ (vn, sn) = rcell s c /\
           mrec s <= d <= dv s /\ d <= c <= d + 1 /\ c <= mods s /\ t0 <= d + 1) \/
        stale s vd sd t0
    end.

  Definition post_inv (s : state) : Prop :=
    nv s = rcell s (mods s) /\ dr s = rcell s (dv s) /\
    mrec s <= dv s <= mods s /\ mods s <= dv s + 1 /\
    (d0 s <> rcell s (mrec s) ->
       forall j, 0 < j < half -> (base s + mrec s + j) mod M <> snd (d0 s)) /\
    forall t, post_ok s (rs s t).

  Definition inv (s : state) : Prop :=
    in_range (snd (d0 s)) /\ in_range (snd (n0 s)) /\ 0 <= mods s /\
    (if recovered s then post_inv s else pre_inv s).


  (** ** Bookkeeping lemmas *)

  Lemma upd_same f t r : upd f t r t = r.
  Proof. unfold upd. rewrite Nat.eqb_refl. reflexivity. Qed.

  Lemma upd_other f t r t' : t' <> t -> upd f t r t' = f t'.
  Proof. intros H. unfold upd. apply Nat.eqb_neq in H. rewrite H. reflexivity. Qed.

  Lemma pair_eta (c : cell) : (fst c, snd c) = c.
  Proof. destruct c; reflexivity. Qed.

  Lemma pre_ok_frame s s' r :
    d0 s' = d0 s -> n0 s' = n0 s -> nv s' = nv s -> mods s <= mods s' ->
    pre_ok s r -> pre_ok s' r.
  Proof.
    intros H1 H2 H3 H4. unfold pre_ok, bumped. rewrite H1, H2, H3.
    destruct r; intuition lia.
  Qed.

  Lemma post_ok_frame s s' r :
    d0 s' = d0 s -> n0 s' = n0 s -> mrec s' = mrec s -> base s' = base s ->
    dv s <= dv s' -> mods s <= mods s' -> mrec s <= dv s <= mods s ->
    (forall i, i <= mods s -> hist s' i = hist s i) ->
    post_ok s r -> post_ok s' r.
  Proof.
    intros H1 H2 H3 H4 H5 H6 H7 H8.
    unfold post_ok, stale, rcell. rewrite H1, H2, H3, H4, (H8 (mrec s)) by lia.
    destruct r; try tauto.
    - intros [(d & E & ?)|?]; [left|right; assumption].
      exists d. rewrite H8 by lia. split; [assumption|lia].
    - intros [(d & dn & c & E1 & E2 & ?)|?]; [left|right; assumption].
      exists d, dn, c. rewrite !H8 by lia. split; [assumption|split; [assumption|lia]].
    - intros [(d & c & E1 & E2 & ?)|?]; [left|right; assumption].
      exists d, c. rewrite !H8 by lia. split; [assumption|split; [assumption|lia]].
  Qed.

  (** Changing only a thread's program counter. *)
  Lemma inv_set_rs s t r :
    inv s -> (if recovered s then post_ok s r else pre_ok s r) -> inv (set_rs s t r).
  Proof.
    unfold inv. simpl. intros (Hd & Hn & Hm & Hi) Hr. do 3 (split; [assumption|]).
    destruct (recovered s).
    - destruct Hi as (H1 & H2 & H3 & H4 & H5 & H6). unfold post_inv. simpl.
      do 5 (split; [assumption|]).
      intros t'. unfold upd. destruct (Nat.eqb t' t); [exact Hr|exact (H6 t')].
    - destruct Hi as (H1 & H2 & H3). unfold pre_inv. simpl. do 2 (split; [assumption|]).
      intros t'. unfold upd. destruct (Nat.eqb t' t); [exact Hr|exact (H3 t')].
  Qed.

  Lemma bumped_not_d0 s : in_range (snd (d0 s)) -> bumped s <> d0 s.
  Proof.
    intros Hr E. apply (f_equal snd) in E. simpl in E.
    apply (succ_mod_neq (snd (d0 s))). rewrite E. symmetry. apply Z.mod_small. exact Hr.
  Qed.

  Lemma hist_upd_same h i v : hist_upd h i v i = v.
  Proof. unfold hist_upd. destruct (Z.eq_dec i i); congruence. Qed.

  Lemma hist_upd_other h i v j : j <> i -> hist_upd h i v j = h j.
  Proof. intros H. unfold hist_upd. destruct (Z.eq_dec j i); congruence. Qed.

  (** After the first return, a thread that read a post-recovery DRAM pair
      and finds DRAM equal to it again finds the very same version: fewer
      than [M] versions went by (the stall bound). *)
  Lemma post_fresh_version s vd sd d t0 :
    post_inv s -> (vd, sd) = rcell s d -> d <= dv s -> t0 <= d + 1 -> mods s - t0 < half ->
    dr s = (vd, sd) -> dv s = d.
  Proof.
    intros (Hnv & Hdr & Hb1 & Hb2 & _) E Hd Ht Hg Hdr'.
    rewrite Hdr, E in Hdr'. unfold rcell in Hdr'. injection Hdr' as _ Hs.
    assert (base s + d = base s + dv s) as He; [|lia].
    apply mod_eq_close; [|congruence].
    pose proof M_is_twice_half. pose proof half_ge_2. lia.
  Qed.

  (** A thread that read the post-crash DRAM before the first return never
      finds it in DRAM again within the stall bound. *)
  Lemma post_stale_dram_differs s vd sd t0 :
    post_inv s -> stale s vd sd t0 -> mods s - t0 < half -> dr s <> (vd, sd).
  Proof.
    intros (Hnv & Hdr & Hb1 & Hb2 & Hsafe & _) (E & Hne & Ht) Hg Hdr'.
    rewrite Hdr' in Hdr. rewrite E in Hdr.
    destruct (Z.eq_dec (dv s) (mrec s)) as [Heq|Hne'].
    - apply Hne. rewrite Hdr, Heq. reflexivity.
    - apply (Hsafe Hne (dv s - mrec s)); [lia|].
      rewrite Hdr. unfold rcell. simpl. f_equal. lia.
  Qed.

  (** After the first return, a line 4.1 CAS pending from before it fails:
      NVMM's sequence would have to go round by at least [2^(k−1)]. *)
  Lemma post_line41_fails s vd sd vn sn t0 :
    post_inv s -> post_ok s (RL41 vd sd vn sn t0) -> mods s - t0 < half -> snd (nv s) <> sn.
  Proof.
    intros (Hnv & _ & Hb1 & Hb2 & _) (E1 & E2 & Hw & -> & Hm & Hb) Hg Hsn.
    pose proof M_is_twice_half. pose proof half_ge_2.
    rewrite Hnv in Hsn. unfold rcell in Hsn. simpl in Hsn.
    assert (sn = snd (n0 s)) as Hsn' by (rewrite <- E2; reflexivity).
    assert ((base s + mods s) mod M = (snd (d0 s) + mods s) mod M) as Hx.
    { replace (base s + mods s) with ((base s + 1) + (mods s - 1)) by lia.
      replace (snd (d0 s) + mods s) with ((snd (d0 s) + 1) + (mods s - 1)) by lia.
      rewrite <- (Zplus_mod_idemp_l (base s + 1)), Hb, Zplus_mod_idemp_l. reflexivity. }
    unfold window in Hw. rewrite <- Hsn', <- Hsn, Hx, Zminus_mod_idemp_r in Hw.
    replace (snd (d0 s) - (snd (d0 s) + mods s)) with (- mods s) in Hw by lia.
    assert ((- mods s) mod M = M - mods s) as Hr.
    { symmetry. apply (Z.mod_unique _ _ (-1)); lia. }
    rewrite Hr in Hw. pose proof wtop_bounds. lia.
  Qed.

  (** The sequence number recovered by the first line 5 is followed, for
      fewer than [2^(k−1)] increments, by none equal to the post-crash
      DRAM's. *)
  Lemma recovered_seq_avoids_post_crash sd sn j :
    in_range sd -> (~ window sd sn \/ sn = (sd + 1) mod M) -> 0 < j < half ->
    (sn + j) mod M <> sd.
  Proof.
    intros Hsd Hw Hj Heq. pose proof M_is_twice_half. unfold in_range in Hsd.
    destruct Hw as [Hw| ->].
    - apply Hw. unfold window. rewrite <- Heq, Zminus_mod_idemp_l.
      replace (sn + j - sn) with j by lia. rewrite Z.mod_small by lia. pose proof wtop_bounds. lia.
    - rewrite Zplus_mod_idemp_l in Heq.
      assert (sd mod M = (sd + 1 + j) mod M) as He by (rewrite Heq; apply Z.mod_small; lia).
      apply mod_eq_close in He; lia.
  Qed.

  Lemma post_inv_mirror s : post_inv s -> mirror_inv s.
  Proof.
    intros (Hnv & Hdr & Hb1 & Hb2 & _). unfold mirror_inv. rewrite Hnv, Hdr. unfold rcell. simpl.
    destruct (Z.eq_dec (dv s) (mods s)) as [->|Hne].
    - split; [left; reflexivity|reflexivity].
    - assert (dv s = mods s - 1) as -> by lia. split.
      + right. rewrite Zplus_mod_idemp_l. f_equal. lia.
      + intros Heq. exfalso. apply (succ_mod_neq (base s + (mods s - 1))).
        replace (base s + (mods s - 1) + 1) with (base s + mods s) by lia. exact Heq.
  Qed.

  Lemma rcell_first_recovery_now s c :
    in_range (snd c) -> rcell (first_recovery s c) (mods s) = c.
  Proof.
    intros Hc. unfold rcell. simpl. replace (snd c - mods s + mods s) with (snd c) by lia.
    rewrite Z.mod_small by exact Hc. apply pair_eta.
  Qed.

  Lemma inv_first_recovery s c :
    in_range (snd (d0 s)) -> in_range (snd (n0 s)) -> 0 <= mods s ->
    nv s = c -> in_range (snd c) ->
    (d0 s <> c -> forall j, 0 < j < half -> (snd c + j) mod M <> snd (d0 s)) ->
    (forall t, post_ok (first_recovery s c) (rs s t)) ->
    inv (first_recovery s c).
  Proof.
    intros Hd Hn Hm Hnv Hc Hsafe Hok. unfold inv. do 3 (split; [assumption|]).
    change (recovered (first_recovery s c)) with true. cbv iota.
    unfold post_inv. change (mods (first_recovery s c)) with (mods s).
    change (mrec (first_recovery s c)) with (mods s).
    change (dv (first_recovery s c)) with (mods s).
    rewrite rcell_first_recovery_now by exact Hc.
    split; [exact Hnv|]. split; [reflexivity|]. split; [lia|]. split; [lia|]. split.
    - intros Hne j Hj. simpl. replace (snd c - mods s + mods s + j) with (snd c + j) by lia.
      exact (Hsafe Hne j Hj).
    - exact Hok.
  Qed.


  (** ** Every step keeps the invariant (with the fix) *)
  Lemma inv_step s s' : inv s -> step true s s' -> inv s'.
  Proof.
    intros Hinv Hstep. pose proof M_is_twice_half as HM. pose proof half_ge_2 as Hh.
    pose proof Hinv as (Hd0 & Hn0 & Hm & Hi). unfold in_range in Hd0, Hn0.
    destruct Hstep as
      [s t Ht|s t vd sd t0 Ht Hg|s t vd sd vn sn t0 _ Ht Hg Hne
      |s t vd sd vn sn t0 Ht Hg Hval Heq|s t vd sd vn sn t0 Ht Hg Hval Hne Hw
      |s t vd sd vn sn t0 Ht Hg Hval Hne Hw|s t vd sd vn sn t0 Ht Hg Hsn
      |s t vd sd vn sn t0 Ht Hg Hsn|s t vd sd vn sn t0 Ht Hg Hdr'
      |s t vd sd vn sn t0 Ht Hg Hdr'|s v Hr Hseq|s Hr Hseq].
    - (* line 1 *)
      apply inv_set_rs; [exact Hinv|]. destruct (recovered s).
      + destruct Hi as (Hnv & Hdr & Hb1 & Hb2 & _). simpl. left. exists (dv s).
        rewrite pair_eta. split; [exact Hdr|lia].
      + destruct Hi as (Hdr & _). simpl. rewrite pair_eta. split; [exact Hdr|lia].
    - (* line 2 *)
      apply inv_set_rs; [exact Hinv|]. destruct (recovered s).
      + destruct Hi as (Hnv & Hdr & Hb1 & Hb2 & _ & Hok). specialize (Hok t). rewrite Ht in Hok.
        simpl in Hok |- *. destruct Hok as [(d & E & Hd)|Hst]; [left|right; exact Hst].
        exists d, (dv s), (mods s). rewrite pair_eta.
        split; [exact E|]. split; [exact Hnv|]. lia.
      + destruct Hi as (Hdr & Hnvs & Hok). specialize (Hok t). rewrite Ht in Hok.
        simpl in Hok |- *. destruct Hok as (E & Ht0). split; [exact E|]. split; [lia|].
        rewrite pair_eta. destruct Hnvs as [(Hnv & Hm0)|(Hnv & _ & _)].
        * left. split; [exact Hnv|lia].
        * right. split; exact Hnv.
    - (* validation fails: goto 1 *)
      apply inv_set_rs; [exact Hinv|]. destruct (recovered s); exact I.
    - (* line 3: return *)
      specialize (Hval eq_refl). unfold ret.
      change (recovered (set_rs s t RIdle)) with (recovered s).
      destruct (recovered s) eqn:Hr.
      + apply inv_set_rs; [exact Hinv|]. rewrite Hr. exact I.
      + destruct Hi as (Hdr & Hnvs & Hok). pose proof (Hok t) as Hu. rewrite Ht in Hu. simpl in Hu.
        destruct Hu as (E & Ht0 & Hread).
        assert (n0 s = d0 s) as Hnd.
        { destruct Hread as [(E2 & _)|(E2 & _)].
          - rewrite <- E2, <- E. exact Heq.
          - exfalso. apply (bumped_not_d0 s); [exact Hd0|]. rewrite <- E2, <- E. exact Heq. }
        assert (nv s = n0 s /\ mods s = 0) as [Hnv Hm0].
        { destruct Hnvs as [H|(_ & Hw & _)]; [exact H|].
          rewrite Hnd in Hw. exfalso. exact (no_window_same _ Hw). }
        change (dr (set_rs s t RIdle)) with (dr s).
        apply inv_first_recovery; simpl.
        * exact Hd0.
        * exact Hn0.
        * lia.
        * congruence.
        * rewrite Hdr. exact Hd0.
        * intros Hne. exfalso. exact (Hne (eq_sym Hdr)).
        * intros t'. unfold upd. destruct (Nat.eqb t' t); [exact I|].
          specialize (Hok t'). destruct (rs s t') as [|vd' sd' t0'|vd' sd' vn' sn' t0'
            |vd' sd' vn' sn' t0'|vd' sd' vn' sn' t0']; simpl in Hok |- *.
          -- exact I.
          -- left. exists 0. unfold rcell. simpl. rewrite Hm0, Hdr.
             replace (snd (d0 s) - 0 + 0) with (snd (d0 s)) by lia.
             rewrite Z.mod_small by lia. rewrite pair_eta. split; [apply Hok|lia].
          -- left. exists 0, 0, 0. unfold rcell. simpl. rewrite Hm0, Hdr.
             replace (snd (d0 s) - 0 + 0) with (snd (d0 s)) by lia.
             rewrite Z.mod_small by lia. rewrite pair_eta.
             destruct Hok as (E1 & Ht1 & [(E2 & _)|(E2 & Hb)]).
             ++ split; [exact E1|]. split; [congruence|]. lia.
             ++ exfalso. apply (bumped_not_d0 s); [exact Hd0|]. congruence.
          -- exfalso. destruct Hok as (_ & _ & Hw & _). rewrite Hnd in Hw.
             exact (no_window_same _ Hw).
          -- exfalso. destruct Hok as (_ & E2 & Hne & _). apply Hne. congruence.
    - (* line 4 true: impossible after recovery *)
      apply inv_set_rs; [exact Hinv|]. specialize (Hval eq_refl). destruct (recovered s).
      + pose proof Hi as (Hnv & Hdr & Hb1 & Hb2 & _ & Hok). specialize (Hok t). rewrite Ht in Hok.
        simpl in Hok. exfalso. destruct Hok as [(d & dn & c & E1 & E2 & Hd)|Hst].
        * assert (dv s = d) as Hdv.
          { apply (post_fresh_version s vd sd d t0 Hi E1); [lia|lia|exact Hg|exact Hval]. }
          unfold rcell in E1, E2. injection E1 as -> ->. injection E2 as -> ->.
          assert (c = d \/ c = d + 1) as [->| ->] by lia.
          -- exact (no_window_same _ Hw).
          -- apply (no_window_succ ((base s + d) mod M)). rewrite Zplus_mod_idemp_l.
             replace (base s + d + 1) with (base s + (d + 1)) by lia. exact Hw.
        * exact (post_stale_dram_differs s vd sd t0 Hi Hst Hg Hval).
      + destruct Hi as (Hdr & Hnvs & Hok). specialize (Hok t). rewrite Ht in Hok.
        simpl in Hok |- *.
        destruct Hok as (E & Ht0 & [(E2 & ->)|(E2 & Hnvb)]).
        * assert (sd = snd (d0 s)) as Hsd by (rewrite <- E; reflexivity).
          assert (sn = snd (n0 s)) as Hsn by (rewrite <- E2; reflexivity).
          split; [exact E|]. split; [exact E2|]. split; [|reflexivity].
          rewrite <- Hsd, <- Hsn. exact Hw.
        * exfalso.
          assert (sd = snd (d0 s)) as Hsd by (rewrite <- E; reflexivity).
          assert (sn = (snd (d0 s) + 1) mod M) as Hsn by (change sn with (snd (vn, sn)); rewrite E2; reflexivity).
          rewrite Hsd, Hsn in Hw. exact (no_window_succ _ Hw).
    - (* line 4 false: to line 5 *)
      apply inv_set_rs; [exact Hinv|]. specialize (Hval eq_refl). destruct (recovered s).
      + pose proof Hi as (Hnv & Hdr & Hb1 & Hb2 & _ & Hok). specialize (Hok t). rewrite Ht in Hok.
        simpl in Hok |- *. destruct Hok as [(d & dn & c & E1 & E2 & Hd)|Hst]; [left|right; exact Hst].
        assert (dv s = d) as Hdv.
        { apply (post_fresh_version s vd sd d t0 Hi E1); [lia|lia|exact Hg|exact Hval]. }
        exists d, c. split; [exact E1|]. split; [exact E2|]. lia.
      + destruct Hi as (Hdr & Hnvs & Hok). specialize (Hok t). rewrite Ht in Hok.
        simpl in Hok |- *.
        assert (sd = snd (d0 s)) as Hsd by (destruct Hok as (E & _); rewrite <- E; reflexivity).
        destruct Hok as (E & Ht0 & Hread). split; [exact E|]. split.
        * destruct Hread as [(E2 & _)|(E2 & Hnvb)]; [|congruence].
          destruct Hnvs as [(Hnv & _)|(_ & Hw' & _)]; [congruence|].
          exfalso. apply Hw. rewrite Hsd. replace sn with (snd (n0 s)) by (rewrite <- E2; reflexivity).
          exact Hw'.
        * split; [congruence|]. split; [left; exact Hw|lia].
    - (* line 4.1 succeeds: only before the first return *)
      destruct (recovered s) eqn:Hr.
      + exfalso. pose proof Hi as (_ & _ & _ & _ & _ & Hok). specialize (Hok t). rewrite Ht in Hok.
        exact (post_line41_fails s vd sd vn sn t0 Hi Hok Hg Hsn).
      + destruct Hi as (Hdr & Hnvs & Hok). pose proof (Hok t) as Hu. rewrite Ht in Hu. simpl in Hu.
        destruct Hu as (E & E2 & Hw & ->).
        assert (sd = snd (d0 s)) as Hsd by (rewrite <- E; reflexivity).
        assert (sn = snd (n0 s)) as Hsn' by (rewrite <- E2; reflexivity).
        assert (vn = fst (n0 s)) as Hvn by (rewrite <- E2; reflexivity).
        assert (nv s = n0 s /\ mods s = 0) as [Hnv Hm0].
        { destruct Hnvs as [H|(Hb & _ & _)]; [exact H|exfalso].
          rewrite Hb in Hsn. unfold bumped in Hsn. simpl in Hsn. rewrite Hsn' in Hsn.
          rewrite <- Hsn in Hw. exact (no_window_succ _ Hw). }
        unfold inv, nvmm_seq_write, set_rs. simpl. rewrite Hr.
        split; [exact Hd0|]. split; [exact Hn0|]. split; [lia|].
        split; [exact Hdr|]. split.
        { right. unfold bumped. rewrite Hnv, Hsd. split; [reflexivity|]. split; [exact Hw|cbn; lia]. }
        intros t'. simpl. destruct (Nat.eq_dec t' t) as [->|Htt]; [rewrite upd_same|rewrite upd_other by exact Htt].
        * simpl. split; [exact E|]. split; [rewrite Hnv, Hvn; reflexivity|].
          split; [|split; [right; reflexivity|lia]].
          intros He. apply (f_equal snd) in He. simpl in He. rewrite Hsd in He.
          apply (succ_mod_neq (snd (d0 s))). rewrite He. symmetry. apply Z.mod_small. exact Hd0.
        * specialize (Hok t'). destruct (rs s t') as [|vd' sd' t0'|vd' sd' vn' sn' t0'
            |vd' sd' vn' sn' t0'|vd' sd' vn' sn' t0']; simpl in Hok |- *.
          -- exact I.
          -- split; [apply Hok|lia].
          -- destruct Hok as (E1 & Ht1 & Hread). split; [exact E1|]. split; [lia|].
             destruct Hread as [H|(H & _)]; [left; exact H|right].
             unfold bumped in H |- *. simpl in H |- *. rewrite Hnv, Hsd. split; [exact H|reflexivity].
          -- exact Hok.
          -- exfalso. destruct Hok as (E1 & E3 & _ & Hw' & _).
             assert (sd' = snd (d0 s)) as Hsd' by (rewrite <- E1; reflexivity).
             assert (sn' = snd (n0 s)) as Hsn'' by (change sn' with (snd (vn', sn')); rewrite E3, Hnv; reflexivity).
             rewrite Hsd', Hsn'' in Hw'. destruct Hw' as [Hw'|Hw']; [exact (Hw' Hw)|].
             rewrite Hw' in Hw. exact (no_window_succ _ Hw).
    - (* line 4.1 fails: goto 1 *)
      apply inv_set_rs; [exact Hinv|]. destruct (recovered s); exact I.
    - (* line 5 succeeds *)
      destruct (recovered s) eqn:Hr.
      + pose proof Hi as (Hnv & Hdr & Hb1 & Hb2 & Hsafe & Hok). pose proof (Hok t) as Hu.
        rewrite Ht in Hu. simpl in Hu.
        destruct Hu as [(d & c & E1 & E2 & Hd)|Hst];
          [|exfalso; exact (post_stale_dram_differs s vd sd t0 Hi Hst Hg Hdr')].
        assert (dv s = d) as Hdv.
        { apply (post_fresh_version s vd sd d t0 Hi E1); [lia|lia|exact Hg|exact Hdr']. }
        assert (sn = (base s + c) mod M) as Hsn by (change sn with (snd (vn, sn)); rewrite E2; reflexivity).
        assert ((if (base s + mods s) mod M =? sn then mods s else mods s - 1) = c) as Hdv'.
        { destruct (Z.eqb_spec ((base s + mods s) mod M) sn) as [He|He].
          - destruct (Z.eq_dec c (mods s)) as [->|Hc]; [reflexivity|exfalso].
            assert (c = mods s - 1) as Hc' by lia. rewrite Hsn, Hc' in He.
            apply (succ_mod_neq (base s + (mods s - 1))).
            replace (base s + (mods s - 1) + 1) with (base s + mods s) by lia. exact He.
          - destruct (Z.eq_dec c (mods s)) as [->|Hc]; [exfalso; exact (He (eq_sym Hsn))|lia]. }
        unfold inv, dram_write. change (recovered (set_rs s t RIdle)) with (recovered s). rewrite Hr.
        simpl. split; [exact Hd0|]. split; [exact Hn0|]. split; [exact Hm|].
        unfold post_inv. simpl. rewrite Hdv'.
        split; [exact Hnv|]. split; [exact E2|]. split; [lia|]. split; [lia|]. split; [exact Hsafe|].
        intros t'. unfold upd. destruct (Nat.eqb t' t); [exact I|].
        apply (post_ok_frame s); simpl; try reflexivity; try lia. apply Hok.
      + destruct Hi as (Hdr & Hnvs & Hok). pose proof (Hok t) as Hu. rewrite Ht in Hu. simpl in Hu.
        destruct Hu as (E & E2 & Hne & Hwin & Ht0).
        assert (sd = snd (d0 s)) as Hsd by (rewrite <- E; reflexivity).
        assert (in_range sn) as Hsnr.
        { change sn with (snd (vn, sn)). rewrite E2.
          destruct Hnvs as [(-> & _)|(-> & _)]; [exact Hn0|apply mod_in_range]. }
        unfold dram_write. change (recovered (set_rs s t RIdle)) with (recovered s). rewrite Hr.
        apply inv_first_recovery; simpl; try assumption.
        * symmetry. exact E2.
        * intros _ j Hj. rewrite <- Hsd. apply recovered_seq_avoids_post_crash; [|exact Hwin|exact Hj].
          rewrite Hsd. exact Hd0.
        * intros t'. unfold upd. destruct (Nat.eqb t' t); [exact I|].
          assert (rcell (first_recovery (set_rs s t RIdle) (vn, sn)) (mods s) = (vn, sn)) as Hrc.
          { apply (rcell_first_recovery_now (set_rs s t RIdle)). exact Hsnr. }
          specialize (Hok t'). destruct (rs s t') as [|vd' sd' t0'|vd' sd' vn' sn' t0'
            |vd' sd' vn' sn' t0'|vd' sd' vn' sn' t0']; simpl in Hok.
          -- exact I.
          -- right. unfold stale. simpl. rewrite Hrc.
             split; [apply Hok|]. split; [congruence|lia].
          -- right. unfold stale. simpl. rewrite Hrc.
             split; [apply Hok|]. split; [congruence|lia].
          -- destruct Hok as (E1 & E3 & Hw & ->). simpl.
             assert (nv s = bumped s /\ mods s = 1) as [Hnvb Hm1].
             { destruct Hnvs as [(Hnv & _)|(Hnv & _ & Hm1)]; [exfalso|split; assumption].
               assert (sn = snd (n0 s)) as Hsn by (change sn with (snd (vn, sn)); rewrite E2, Hnv; reflexivity).
               rewrite <- Hsd, <- Hsn in Hw. destruct Hwin as [Hwin|Hwin]; [exact (Hwin Hw)|].
               rewrite Hwin in Hw. exact (no_window_succ _ Hw). }
             split; [exact E1|]. split; [exact E3|]. split; [exact Hw|]. split; [reflexivity|].
             split; [exact Hm1|].
             assert (sn = (snd (d0 s) + 1) mod M) as Hsn
               by (change sn with (snd (vn, sn)); rewrite E2, Hnvb; reflexivity).
             rewrite Hm1. replace (sn - 1 + 1) with sn by lia. rewrite Hsn. apply Z.mod_mod. lia.
          -- right. unfold stale. simpl. rewrite Hrc.
             split; [apply Hok|]. split; [congruence|lia].
    - (* line 5 fails: goto 1 *)
      apply inv_set_rs; [exact Hinv|]. destruct (recovered s); exact I.
    - (* a Mirror write to NVMM *)
      rewrite Hr in Hi. pose proof Hi as (Hnv & Hdr & Hb1 & Hb2 & Hsafe & Hok).
      assert (dv s = mods s) as Hdv.
      { rewrite Hnv, Hdr in Hseq. unfold rcell in Hseq. simpl in Hseq.
        assert (base s + dv s = base s + mods s) as He; [|lia].
        apply mod_eq_close; [lia|congruence]. }
      unfold inv. simpl. split; [exact Hd0|]. split; [exact Hn0|]. split; [lia|].
      unfold post_inv, rcell. simpl.
      rewrite hist_upd_same, !hist_upd_other by lia.
      split.
      { rewrite Hnv. unfold rcell. simpl. rewrite Zplus_mod_idemp_l. f_equal. f_equal. lia. }
      split; [exact Hdr|]. split; [lia|]. split; [lia|]. split; [exact Hsafe|].
      intros t'. apply (post_ok_frame s); simpl; try reflexivity; try lia; [|apply Hok].
      intros i Hi'. apply hist_upd_other. lia.
    - (* a Mirror DWCAS copying NVMM to DRAM *)
      rewrite Hr in Hi. pose proof Hi as (Hnv & Hdr & Hb1 & Hb2 & Hsafe & Hok).
      unfold inv. simpl. split; [exact Hd0|]. split; [exact Hn0|]. split; [lia|].
      unfold post_inv. simpl.
      split; [exact Hnv|]. split; [exact Hnv|]. split; [lia|]. split; [lia|]. split; [exact Hsafe|].
      intros t'. apply (post_ok_frame s); simpl; try reflexivity; try lia. apply Hok.
  Qed.


  Lemma inv_init s : init s -> inv s.
  Proof.
    intros (Hr & Hrs & Hm & Hd & Hn & Hnr & Hdr). unfold inv, pre_inv.
    rewrite Hd, Hn, Hr. split; [exact Hdr|]. split; [exact Hnr|]. split; [lia|].
    split; [auto|]. split; [left; split; [reflexivity|exact Hm]|].
    intros t. rewrite Hrs. exact I.
  Qed.

  Lemma inv_reachable s : reachable true s -> inv s.
  Proof.
    induction 1 as [s Hi|s s' _ IH Hs]; [exact (inv_init s Hi)|exact (inv_step s s' IH Hs)].
  Qed.

  (** ** Claim 2, for the validating [recover_field] *)

  (** Mirror's first invariant and equal-seqs-equal-values hold in every
      reachable state once a [recover_field] on P has returned. *)
  Lemma reachable_post_inv s : reachable true s -> recovered s = true -> post_inv s.
  Proof.
    intros Hs Hr. destruct (inv_reachable s Hs) as (_ & _ & _ & Hi). rewrite Hr in Hi. exact Hi.
  Qed.

  Theorem claim2_mirror_invariants s :
    reachable true s -> recovered s = true -> mirror_inv s.
  Proof. intros Hs Hr. exact (post_inv_mirror s (reachable_post_inv s Hs Hr)). Qed.

  (** After the first return no line 4.1 CAS succeeds. *)
  Theorem claim2_line41_fails_after_recovery s t vd sd vn sn t0 :
    reachable true s -> recovered s = true -> rs s t = RL41 vd sd vn sn t0 ->
    mods s - t0 < half -> snd (nv s) <> sn.
  Proof.
    intros Hs Hr Ht Hg. pose proof (reachable_post_inv s Hs Hr) as Hi.
    pose proof Hi as (_ & _ & _ & _ & _ & Hok). specialize (Hok t). rewrite Ht in Hok.
    exact (post_line41_fails s vd sd vn sn t0 Hi Hok Hg).
  Qed.

  (** Mirror's second invariant: after the first return, a step that
      changes NVMM starts from equal sequence numbers (it is a Mirror
      write; [recover_field] no longer writes NVMM). *)
  Theorem claim2_nvmm_changes_only_when_seqs_equal s s' :
    reachable true s -> recovered s = true -> step true s s' -> nv s' <> nv s ->
    snd (nv s) = snd (dr s).
  Proof.
    intros Hs Hr Hstep Hne. destruct Hstep; simpl in Hne; try (exfalso; apply Hne; reflexivity).
    - unfold ret in Hne. simpl in Hne. rewrite Hr in Hne. exfalso. apply Hne. reflexivity.
    - exfalso. eapply claim2_line41_fails_after_recovery; eauto.
    - unfold dram_write in Hne. simpl in Hne. rewrite Hr in Hne. exfalso. apply Hne. reflexivity.
    - assumption.
  Qed.

  Ltac cur R := match type of R with reachable _ ?x => x end.

  (** ** Algorithm 6.2 as published breaks Mirror's first invariant *)
  Theorem claim2_fails_for_algorithm_6_2 :
    exists s, reachable false s /\ recovered s = true /\ mods s = 2 /\ ~ mirror_inv s.
  Proof.
    pose proof M_is_twice_half as HM. pose proof half_ge_2 as Hh. pose proof wtop_bounds as Hwt.
    set (s0 := St (0, 0) (1, wtop + 1) false (fun _ => RIdle) 0 (1, wtop + 1) (0, 0)
                  0 0 0 (fun _ => 0)).
    assert (R0 : reachable false s0).
    { apply reach_init. unfold init, in_range. simpl. repeat split; lia. }
    (* u = 0 and t = 1 read the post-crash DRAM (line 1) *)
    let x := cur R0 in pose proof (reach_step false _ _ R0 (s_line1 false x 0 eq_refl)) as R1.
    let x := cur R1 in pose proof (reach_step false _ _ R1 (s_line1 false x 1 eq_refl)) as R2. cbn in R2.
    (* u reads NVMM (line 2); (wtop+1) - 0 is outside the window: line 5 *)
    let x := cur R2 in pose proof (reach_step false _ _ R2 (s_line2 false x 0 1 (wtop + 1) 0 eq_refl ltac:(cbn; lia))) as R3.
    cbn in R3.
    assert (Hw0 : ~ window (wtop + 1) 0).
    { unfold window. rewrite Z.sub_0_r, Z.mod_small by lia. lia. }
    let x := cur R3 in pose proof (reach_step false _ _ R3 (s_line4_skip false x 0 1 (wtop + 1) 0 0 0 eq_refl
                  ltac:(cbn; lia) ltac:(discriminate) ltac:(intros [=]) Hw0)) as R4.
    cbn in R4.
    let x := cur R4 in pose proof (reach_step false _ _ R4 (s_line5_ok false x 0 1 (wtop + 1) 0 0 0 eq_refl
                  ltac:(cbn; lia) eq_refl)) as R5.
    cbn in R5.
    (* a writer stores (5, 1) in NVMM, then in DRAM *)
    let x := cur R5 in pose proof (reach_step false _ _ R5 (s_write false x 5 eq_refl eq_refl)) as R6. cbn in R6.
    assert (H1 : 1 mod M = 1) by (apply Z.mod_small; lia).
    rewrite H1 in R6.
    let x := cur R6 in pose proof (reach_step false _ _ R6 (s_help false x eq_refl ltac:(cbn; rewrite H1; reflexivity))) as R7.
    cbn in R7.
    (* t reads NVMM = (5, 1): (wtop+1) - 1 = wtop is inside the window *)
    let x := cur R7 in pose proof (reach_step false _ _ R7 (s_line2 false x 1 1 (wtop + 1) 0 eq_refl ltac:(cbn; lia))) as R8.
    cbn in R8.
    assert (Hw1 : window (wtop + 1) 1).
    { unfold window. replace (wtop + 1 - 1) with wtop by lia. rewrite Z.mod_small by lia. lia. }
    let x := cur R8 in pose proof (reach_step false _ _ R8 (s_line4 false x 1 1 (wtop + 1) 5 1 0 eq_refl
                  ltac:(cbn; lia) ltac:(discriminate) ltac:(intros [=]) Hw1)) as R9.
    cbn in R9.
    let x := cur R9 in pose proof (reach_step false _ _ R9 (s_line41_ok false x 1 1 (wtop + 1) 5 1 0 eq_refl
                  ltac:(cbn; lia) eq_refl)) as R10.
    cbn in R10.
    eexists. split; [exact R10|]. cbn. split; [reflexivity|]. split; [reflexivity|].
    unfold mirror_inv. cbn. intros [[H|H] _].
    - assert (wtop + 1 + 1 = M \/ wtop + 1 + 1 < M) as [He|He] by lia.
      + rewrite He, Z_mod_same_full in H. lia.
      + rewrite Z.mod_small in H by lia. lia.
    - rewrite (Z.mod_small (1 + 1)) in H by lia.
      assert (wtop + 1 + 1 = M \/ wtop + 1 + 1 < M) as [He|He] by lia.
      + rewrite He, Z_mod_same_full in H. lia.
      + rewrite Z.mod_small in H by lia. lia.
  Qed.


  (** [j] Mirror writes, each copied to DRAM, after some [recover_field]
      returned. *)
  Lemma writer_rounds validate s j :
    reachable validate s -> recovered s = true -> nv s = dr s -> 0 <= snd (nv s) < M ->
    exists s', reachable validate s' /\ recovered s' = true /\ rs s' = rs s /\ nv s' = dr s' /\
      snd (nv s') = (snd (nv s) + Z.of_nat j) mod M /\ mods s' = mods s + Z.of_nat j /\
      d0 s' = d0 s /\ n0 s' = n0 s.
  Proof.
    intros Hs Hr He Hrange. induction j as [|j IH].
    - exists s. simpl Z.of_nat. rewrite !Z.add_0_r, Z.mod_small by exact Hrange. repeat split; auto.
    - destruct IH as (s' & Hs' & Hr' & Hrs & He' & Hseq & Hm & Hd & Hn).
      pose proof (reach_step validate _ _ Hs' (s_write validate s' 0 Hr' (f_equal snd He'))) as R1.
      set (s1 := St (0, (snd (nv s') + 1) mod M) (dr s') true (rs s') (mods s' + 1) (d0 s') (n0 s')
                    (mrec s') (base s') (dv s') (hist_upd (hist s') (mods s' + 1) 0)) in R1.
      assert (Hh : snd (nv s1) = (snd (dr s1) + 1) mod M) by (simpl; rewrite He'; reflexivity).
      pose proof (reach_step validate _ _ R1 (s_help validate s1 eq_refl Hh)) as R2.
      eexists. split; [exact R2|]. simpl. split; [reflexivity|]. split; [exact Hrs|].
      split; [reflexivity|]. split.
      + rewrite Hseq, Zplus_mod_idemp_l. f_equal. lia.
      + split; [lia|split; assumption].
  Qed.

  (** Even with no garbage at all (DRAM after the crash equals NVMM),
      Algorithm 6.2's inclusive window lets a thread that read DRAM after
      the first return, and then stalled for [2^(k−1) − 1] modifications
      (within the stall bound), CAS NVMM's sequence number back. *)
  Theorem claim2_inclusive_window_fails_at_the_bound :
    strict = false ->
    exists s, reachable false s /\ recovered s = true /\ d0 s = n0 s /\ ~ mirror_inv s.
  Proof.
    intros Hstrict.
    pose proof M_is_twice_half as HM. pose proof half_ge_2 as Hh.
    set (s0 := St (0, 0) (0, 0) false (fun _ => RIdle) 0 (0, 0) (0, 0) 0 0 0 (fun _ => 0)).
    assert (R0 : reachable false s0).
    { apply reach_init. unfold init, in_range. simpl. repeat split; lia. }
    (* u = 0 reads both replicas, finds them equal and returns (line 3) *)
    let x := cur R0 in pose proof (reach_step false _ _ R0 (s_line1 false x 0 eq_refl)) as R1.
    let x := cur R1 in pose proof (reach_step false _ _ R1 (s_line2 false x 0 0 0 0 eq_refl ltac:(cbn; lia))) as R2.
    let x := cur R2 in pose proof (reach_step false _ _ R2
      (s_line3 false x 0 0 0 0 0 0 eq_refl ltac:(cbn; lia) ltac:(discriminate) eq_refl)) as R3.
    cbn in R3.
    (* a writer stores (0, 1) in NVMM; t = 1 reads DRAM = (0, 0); the writer copies NVMM to DRAM *)
    let x := cur R3 in pose proof (reach_step false _ _ R3 (s_write false x 0 eq_refl eq_refl)) as R4.
    cbn in R4.
    assert (H1 : 1 mod M = 1) by (apply Z.mod_small; lia). rewrite H1 in R4.
    let x := cur R4 in pose proof (reach_step false _ _ R4 (s_line1 false x 1 eq_refl)) as R5.
    cbn in R5.
    let x := cur R5 in pose proof (reach_step false _ _ R5
      (s_help false x eq_refl ltac:(cbn; rewrite H1; reflexivity))) as R6.
    cbn in R6.
    (* 2^(k−1) − 1 more writes, each copied to DRAM *)
    destruct (writer_rounds false _ (Z.to_nat (half - 1)) R6 eq_refl eq_refl ltac:(cbn; lia))
      as (s7 & R7 & Hr7 & Hrs7 & He7 & Hseq7 & Hm7 & Hd7 & Hn7).
    cbn [nv snd fst mods d0 n0 rs] in Hrs7, Hseq7, Hm7, Hd7, Hn7. rewrite Z2Nat.id in Hseq7, Hm7 by lia.
    replace (1 + (half - 1)) with half in Hseq7 by lia. rewrite Z.mod_small in Hseq7 by lia.
    (* t reads NVMM = (_, 2^(k−1)): 0 − 2^(k−1) is inside the inclusive window *)
    assert (Ht7 : rs s7 1 = RL2 0 0 1) by (rewrite Hrs7; reflexivity).
    pose proof (reach_step false _ _ R7 (s_line2 false s7 1 0 0 1 Ht7 ltac:(lia))) as R8.
    rewrite Hseq7 in R8.
    assert (Hw : window 0 half).
    { unfold window, wtop. rewrite Hstrict, Z.sub_0_l.
      assert ((- half) mod M = half) as -> by (symmetry; apply (Z.mod_unique _ _ (-1)); lia). lia. }
    let x := cur R8 in pose proof (reach_step false _ _ R8 (s_line4 false x 1 0 0 (fst (nv s7)) half 1
                  eq_refl ltac:(cbn; lia) ltac:(discriminate)
                  ltac:(intros [= _ ?]; lia) Hw)) as R9.
    let x := cur R9 in pose proof (reach_step false _ _ R9 (s_line41_ok false x 1 0 0 (fst (nv s7)) half 1
                  eq_refl ltac:(cbn; lia) ltac:(cbn; exact Hseq7))) as R10.
    eexists. split; [exact R10|]. cbn. split; [exact Hr7|]. split; [rewrite Hd7, Hn7; reflexivity|].
    unfold mirror_inv. cbn. rewrite <- He7, Hseq7. rewrite (Z.mod_small (0 + 1)) by lia.
    intros [[H|H] _]; [lia|]. rewrite Z.mod_small in H by lia. lia.
  Qed.

End recover_field.

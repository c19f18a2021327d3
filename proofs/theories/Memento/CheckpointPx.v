(** * Memento's CHECKPOINT on Px86's line-granular persistence: N threads, full and thread crashes

    A model of CHECKPOINT (seed 001, Cho, Jeon, Kang, §2.2, steps ①–⑤, with
    §2.3's stable values and §2.5's monitor and timestamps) as
    [impl/perdure-memento/src/checkpoint.rs] runs it
    ([Checkpoint::checkpoint_impl]; [runtime.rs]: [Handle::defer_fence],
    [Handle::store]'s [pay_fence], the root operation's commit in
    [Handle::try_run_root]), for any number [N] of threads (tids [0 .. N-1]),
    each running root operations made of one CHECKPOINT into its memento
    (reused by every root operation, invalidated by the commit's timestamp
    floor) followed by the root operation's next write to the pool, with
    full-system and thread crashes, on the persistence layer of
    [Core/PxPersist.v]: every cache line holds the sequence of its visible
    writes and a mark; a store is appended to its line ([p_store]); a write
    persists for sure only through a [pwb] its thread issued after it and
    later fenced ([p_pwb], [p_fence]), or by an arbitrary eviction: a full
    crash ([SCrash]) keeps of each line any prefix at least as long as its
    mark ([p_crash_ok]), i.e. every image Px86 allows.  It supersedes, for
    persistence, the abstract model [Checkpoint.v] (which takes "the value
    persists before the timestamp" as given).

    Layout ([config]'s [cross]): a slot is a timestamp and two value words.
    [cross = false]: a slot is one line (the code's [N ≤ 7] words, [STRIDE =
    64]); [cross = true]: the timestamp and the first word on one line, the
    second word on the next (the code's [STRIDE > 64]: words 7.. on the
    following lines), the layout of [specs/memento/Checkpoint.tla]'s
    "crossLine".  Each thread's memento is two slots ([LA], [LB]) and its
    root operation's next write goes to a line of its own ([LE]).

    The steps ([step]), with the seed's step and the Rust line:
    - [SStart] (① in normal mode): read both timestamps ([h.load(ts_off)]),
      the larger is the latest (slot 0 on a tie: [if t0 >= t1]); the value
      [e] computes is chosen (any value: [e] is non-deterministic);
    - [SRecHit] (②, recovery: [t_latest > h.local()], LOCAL being the
      thread's committed floor): the fix of Finding 5
      ([specs/memento/README.md]: [h.flush(ts_off(latest), STRIDE)], every
      line of the slot) then return the latest slot's value;
      [SRecMiss] (② otherwise: [h.set_rec(false)]): leave recovery mode and
      run the normal path with a fresh value;
    - [S3a], [S3b] (③: [h.store_private(val_off(stale, i), v)], one store
      per word);
    - [S4] (④: [h.flush(val_off(stale, 0), 8 * N)] when [STRIDE > 64]: a
      [pwb] of each line of the words, then a [pfence]);
    - [S5] (⑤: [ts = h.now()], [h.store_private(ts_off(stale), ts)],
      [h.pwb(ts_off(stale), 8)], [h.defer_fence()]): the checkpoint returns;
    - [SEff]: the root operation's next write to the pool ([Handle::store]
      / [Handle::cas] pay the deferred [pfence] first: [pay_fence]);
    - [SCommit]: the root operation's commit ([try_run_root]: the deferred
      fence, then the floor [:= now] and the next index persisted at once);
    - [STCrash] (§2.5 (3): the thread's registers and its issued write-backs
      lost, the operation re-run in recovery mode), [SCrash] (a full crash:
      any image Px86 allows becomes the memory; every operation cut off is
      re-run in recovery mode).
    The switches ([config]): [c4] (step ④'s flush), [crf] (the recovery's
    flush, Finding 5's fix), [cfe] (the deferred fence paid before the next
    write, mutant [CheckpointNoFence]); [fixed] is the code.

    Proved, for the fixed protocol, either layout, any [N], on every
    reachable state (any schedule, any number of full and thread crashes):
    - [ckpt_px_recovery_image]: in every crash image Px86 allows, the slot
      that recovery reads (the latest one) holds, whole, either the value of
      the thread's last completed checkpoint with its timestamp, or the
      value and timestamp of an attempt of the in-flight checkpoint — never
      a torn or mixed value; and once the in-flight checkpoint's value [v]
      has been used by a write of its root operation, every image holds [v];
    - [ckpt_px_detectable]: every value a checkpoint returns (normal path or
      recovery) is the value of an attempt of that invocation whose
      timestamp is in the memento's history; once the root operation wrote
      after it, that timestamp is under the mark (no crash undoes it) and
      every later return of the invocation returns the same value
      ([ckpt_px_stable]);
    - [ckpt_px_at_most_once]: at most one timestamp write of the in-flight
      invocation is in the thread's memento lines (a checkpoint takes effect
      at most once);
    Everything rests on the inductive invariant [inv] ([inv_init],
    [step_inv], [reachable_inv]).  The as-written steps are refuted by
    explicit runs in [CheckpointPxBugs.v].

    What the model abstracts:
    - visibility is sequentially consistent (no TSO store buffers); each
      step is atomic; one global rdtscp clock never reset (§2.5's
      calibration); LOCAL in recovery is the committed floor;
    - a value is two words; a [pwb] issued in the same step as its store
      (⑤) records a line no longer than the code's;
    - on a thread crash the thread's issued write-backs never take effect
      (the weakest choice for an orphaned [pwb]);
    - a root operation is one CHECKPOINT and one later write ([SEff]): the
      replay of earlier sub-operations of a composite root operation is not
      modelled; the write's value is not derived from the checkpointed one
      (the ghost [effv] records the value it used);
    - detectability is stated on the model's states here;
      [CheckpointPxLin.v] states it over [Core/DurableLin.v]'s histories. *)
From Coq Require Import Lia.
From stdpp Require Import base list relations.
From perdure.Core Require Import Px86 PxPersist.

(** ** Line-granular memory: views and changes *)

(** Everything visible in line [L] is persisted for sure. *)
Definition dur (p : pmem) (L : nat) : Prop := mk p L = length (hist p L).

(** A thread crash: its write-backs never take effect. *)
Definition drop_pwbs (p : pmem) (t : nat) : pmem :=
  PMem (p_mem p) (filter (λ pw, pw.1.1 ≠ t) (p_pwbs p)).

Lemma mjoin_snoc1 (ws : list write) (w : write) : mjoin (ws ++ [w]) = mjoin ws ++ w.
Proof. induction ws as [|w' ws IH]; simpl; [by rewrite app_nil_r|]. by rewrite IH, app_assoc. Qed.

Lemma seq_val_snoc1 x ws y v :
  seq_val x (ws ++ [[(y, v)]]) = if decide (y = x) then v else seq_val x ws.
Proof. unfold seq_val. rewrite mjoin_snoc1, foldl_app. simpl. done. Qed.

(** Every value [seq_val] can give is the initial 0 or a written one. *)
Lemma seq_val_bound (P : nat → Prop) x ws :
  P 0 → (∀ w v, w ∈ ws → (x, v) ∈ w → P v) → P (seq_val x ws).
Proof.
  intros H0 Hw. unfold seq_val.
  assert (Hall : ∀ st, st ∈ mjoin ws → st.1 = x → P st.2).
  { intros [y v] Hin Hy. simpl in *. subst y. apply elem_of_list_join in Hin as (w & Hin & Hw').
    by eapply Hw. }
  revert Hall. generalize (mjoin ws) as l. intros l. revert H0. generalize 0 as acc.
  induction l as [|st l IH]; intros acc Hacc Hall; simpl; [done|].
  apply IH; [| intros st' Hin; apply Hall; by right].
  case_decide; [apply Hall; [by left | done] | done].
Qed.

Lemma seq_val_take_bound (P : nat → Prop) x ws n :
  P 0 → (∀ w v, w ∈ ws → (x, v) ∈ w → P v) → P (seq_val x (take n ws)).
Proof.
  intros H0 Hw. apply seq_val_bound; [done|]. intros w v Hin. apply (Hw w v).
  apply elem_of_take in Hin as (i & Hi & _). by eapply elem_of_list_lookup_2.
Qed.

Section mem.
  Context (line : loc → nat).

  Lemma hist_write_same p L w : L < nlines p → hist (p_write p L w) L = hist p L ++ [w].
  Proof.
    intros HL. unfold hist, nlines, line_hist, p_write, mem_write in *; simpl.
    rewrite list_lookup_insert by done. reflexivity.
  Qed.

  Lemma hist_write_other p L L' w : L' ≠ L → hist (p_write p L w) L' = hist p L'.
  Proof.
    intros Hne. unfold hist, line_hist, p_write, mem_write; simpl.
    by rewrite list_lookup_insert_ne by done.
  Qed.

  Lemma hist_write p L w L' : L < nlines p →
    hist (p_write p L w) L' = if decide (L' = L) then hist p L ++ [w] else hist p L'.
  Proof. intros. case_decide; subst; [by apply hist_write_same | by apply hist_write_other]. Qed.

  Lemma nlines_write p L w : nlines (p_write p L w) = nlines p.
  Proof. apply mem_write_lines. Qed.
  Lemma mk_write p L w L' : mk (p_write p L w) L' = mk p L'.
  Proof. done. Qed.
  Lemma hist_pwb p t x L : hist (p_pwb line p t x) L = hist p L.
  Proof. done. Qed.
  Lemma mk_pwb p t x L : mk (p_pwb line p t x) L = mk p L.
  Proof. done. Qed.
  Lemma nlines_pwb p t x : nlines (p_pwb line p t x) = nlines p.
  Proof. done. Qed.
  Lemma hist_fence p t L : hist (p_fence p t) L = hist p L.
  Proof. apply p_fence_hist. Qed.
  Lemma nlines_fence p t : nlines (p_fence p t) = nlines p.
  Proof. unfold nlines, p_fence; simpl. by rewrite foldr_fence_lines. Qed.
  Lemma mk_fence p t L : mk p L ≤ mk (p_fence p t) L.
  Proof. apply p_fence_mark_mono. Qed.
  Lemma hist_drop p t L : hist (drop_pwbs p t) L = hist p L.
  Proof. done. Qed.
  Lemma mk_drop p t L : mk (drop_pwbs p t) L = mk p L.
  Proof. done. Qed.
  Lemma nlines_drop p t : nlines (drop_pwbs p t) = nlines p.
  Proof. done. Qed.

  Lemma drop_wf p t : p_wf p → p_wf (drop_pwbs p t).
  Proof.
    intros (H1 & H2 & H3). split; [done|]. split; [done|]. simpl.
    apply Forall_forall. intros pw [_ Hpw]%elem_of_list_filter. rewrite Forall_forall in H3. by apply H3.
  Qed.

  (** Durable lines. *)
  Lemma dur_fence p t L : p_wf p → dur p L → dur (p_fence p t) L.
  Proof.
    intros Hwf Hd. unfold dur in *. pose proof (mk_fence p t L).
    pose proof (wf_mk_le (p_fence p t) L (p_fence_wf p t Hwf)). rewrite hist_fence in *. lia.
  Qed.

  Lemma dur_write_other p L L' w : L' ≠ L → dur p L' → dur (p_write p L w) L'.
  Proof. unfold dur. intros. by rewrite mk_write, hist_write_other. Qed.

  Lemma dur_crash p keep L : p_crash_ok p keep → L < nlines p → dur p L →
    dur (crash_mem p keep) L ∧ hist (crash_mem p keep) L = hist p L.
  Proof.
    intros Hok HL Hd. destruct (Hok L HL) as [H1 H2]. fold (mk p L) (hist p L) in H1, H2.
    unfold dur in *. rewrite crash_mk, crash_hist by done. rewrite take_ge by lia.
    split; [lia | done].
  Qed.

  (** A [pwb] of [t] recorded at the line's current length, then [t]'s fence. *)
  Lemma dur_fence_pwb p t L : p_wf p → L < nlines p → (t, L, length (hist p L)) ∈ p_pwbs p →
    dur (p_fence p t) L.
  Proof.
    intros Hwf HL Hin. unfold dur. pose proof (p_fence_covers p t L _ Hwf Hin HL).
    pose proof (wf_mk_le (p_fence p t) L (p_fence_wf p t Hwf)). rewrite hist_fence in *.
    fold (mk (p_fence p t) L) in *. lia.
  Qed.

  Lemma pwb_in p t x : (t, line x, length (hist p (line x))) ∈ p_pwbs (p_pwb line p t x).
  Proof. left. Qed.
End mem.

(** ** The model *)

Notation val2 := (nat * nat)%type.

(** The steps that differ between the seed as written (or a mutant) and the
    code, and the layout. *)
Record config := Cfg {
  cross : bool;  (* the slot spans two lines (STRIDE > 64) *)
  c4 : bool;     (* ④: flush the value words before the timestamp when cross *)
  crf : bool;    (* ②: the recovery flushes the slot it returns (Finding 5's fix) *)
  cfe : bool;    (* the deferred fence of ⑤ paid before the next write *)
}.
Definition fixed (cr : bool) : config := Cfg cr true true true.

(** The lines and locations of thread [u] (3 words a line: location [x] is
    in line [x / 3]). *)
Definition cline (x : nat) : nat := x / 3.
Definition LA (u : nat) (b : bool) : nat := 5 * u + (if b then 2 else 0).
Definition LB (u : nat) (b : bool) : nat := S (LA u b).
Definition LE (u : nat) : nat := 5 * u + 4.
Definition xts (u : nat) (b : bool) : nat := 3 * LA u b.
Definition xw0 (u : nat) (b : bool) : nat := 3 * LA u b + 1.
Definition xeff (u : nat) : nat := 3 * LE u.

Inductive pcs :=
  | PIdle | PRec
  | P3a (b : bool) (v : val2) | P3b (b : bool) (v : val2) | P4 (b : bool) (v : val2) | P5 (b : bool) (v : val2)
  | PRet (b : bool) (T : nat) (v : val2) | PEff (b : bool) (T : nat) (v : val2).

(** A thread: its position, its root operation's index, its committed floor
    (LOCAL in recovery); ghost: the slot, timestamp and value of its last
    completed checkpoint, the values the in-flight checkpoint returned, the
    value the root operation's next write used. *)
Record tst := TS {
  pc : pcs; kk : nat; fl : nat;
  lastb : bool; lastts : nat; lastv : val2;
  rets : list val2; effv : option val2;
}.
Definition with_pc (T : tst) (p : pcs) : tst :=
  TS p (kk T) (fl T) (lastb T) (lastts T) (lastv T) (rets T) (effv T).

(** The memory, the clock, the threads; ghost: the attempts (thread,
    invocation, timestamp, value) of step ⑤. *)
Record state := St { pm : pmem; clock : nat; th : nat → tst; att : list (nat * nat * nat * val2) }.

Definition upd {A} (f : nat → A) (t : nat) (a : A) : nat → A :=
  λ u, if decide (u = t) then a else f u.
Definition setth (s : state) (t : nat) (T : tst) : state := St (pm s) (clock s) (upd (th s) t T) (att s).
Definition setpm (s : state) (p : pmem) : state := St p (clock s) (th s) (att s).

(** Reading the memento: the visible memory, or a crash image. *)
Definition rd_vis (p : pmem) (x : nat) : nat := seq_val x (hist p (cline x)).
Definition rd_img (p : pmem) (keep : nat → nat) (x : nat) : nat :=
  seq_val x (take (keep (cline x)) (hist p (cline x))).
(** ①: the latest slot is slot 0 iff [t0 >= t1]. *)
Definition latest_of (t0 t1 : nat) : bool := bool_decide (t0 < t1).

Definition crash_pc (p : pcs) : pcs := match p with PIdle => PIdle | _ => PRec end.

Section steps.
  Context (N : nat) (cfg : config).

  Definition xw1 (u : nat) (b : bool) : nat := if cross cfg then 3 * LB u b else 3 * LA u b + 2.
  Definition slot_of (rd : nat → nat) (u : nat) (b : bool) : nat * val2 :=
    (rd (xts u b), (rd (xw0 u b), rd (xw1 u b))).
  Definition latest_b (rd : nat → nat) (u : nat) : bool := latest_of (rd (xts u false)) (rd (xts u true)).
  (** What recovery reads: the latest slot. *)
  Definition recovered (rd : nat → nat) (u : nat) : nat * val2 := slot_of rd u (latest_b rd u).

  Inductive step : state → state → Prop :=
  (** ① in normal mode ([checkpoint_impl]'s step 1, then [e(h)]): the stale
      slot is the other one than the latest. *)
  | SStart s t v : t < N → pc (th s t) = PIdle →
      step s (setth s t (with_pc (th s t) (P3a (negb (latest_b (rd_vis (pm s)) t)) v)))
  (** ② in recovery mode, [t_latest > h.local()]: (fixed) flush the slot,
      then return its value; LOCAL := t_latest. *)
  | SRecHit s t : t < N → pc (th s t) = PRec →
      let T := th s t in
      let b := latest_b (rd_vis (pm s)) t in
      let sl := slot_of (rd_vis (pm s)) t b in
      fl T < sl.1 →
      step s (St (if crf cfg then p_fence (p_pwb cline (p_pwb cline (pm s) t (xts t b)) t (xw1 t b)) t else pm s)
                 (clock s)
                 (upd (th s) t (TS (PRet b sl.1 sl.2) (kk T) (fl T) (lastb T) (lastts T) (lastv T)
                                   (rets T ++ [sl.2]) (effv T)))
                 (att s))
  (** ② otherwise: [h.set_rec(false)], then [e(h)] and the normal path. *)
  | SRecMiss s t v : t < N → pc (th s t) = PRec →
      (slot_of (rd_vis (pm s)) t (latest_b (rd_vis (pm s)) t)).1 ≤ fl (th s t) →
      step s (setth s t (with_pc (th s t) (P3a (negb (latest_b (rd_vis (pm s)) t)) v)))
  (** ③: [h.store_private(val_off(stale, 0), v0)]. *)
  | S3a s t b v : t < N → pc (th s t) = P3a b v →
      step s (setth (setpm s (p_store cline (pm s) (xw0 t b) v.1)) t (with_pc (th s t) (P3b b v)))
  (** ③: [h.store_private(val_off(stale, 1), v1)]. *)
  | S3b s t b v : t < N → pc (th s t) = P3b b v →
      step s (setth (setpm s (p_store cline (pm s) (xw1 t b) v.2)) t (with_pc (th s t) (P4 b v)))
  (** ④: [if STRIDE > 64 { h.flush(val_off(stale, 0), 8 * N) }]. *)
  | S4 s t b v : t < N → pc (th s t) = P4 b v →
      step s (setth (setpm s (if cross cfg && c4 cfg
                              then p_fence (p_pwb cline (p_pwb cline (pm s) t (xw0 t b)) t (xw1 t b)) t
                              else pm s)) t (with_pc (th s t) (P5 b v)))
  (** ⑤: [ts = h.now()]; [h.store_private(ts_off(stale), ts)];
      [h.pwb(ts_off(stale), 8)]; [h.defer_fence()]; return [value]. *)
  | S5 s t b v : t < N → pc (th s t) = P5 b v →
      let T := th s t in
      step s (St (p_pwb cline (p_store cline (pm s) (xts t b) (clock s)) t (xts t b)) (S (clock s))
                 (upd (th s) t (TS (PRet b (clock s) v) (kk T) (fl T) (lastb T) (lastts T) (lastv T)
                                   (rets T ++ [v]) (effv T)))
                 (att s ++ [(t, kk T, clock s, v)]))
  (** The root operation's next write ([Handle::store]: [pay_fence], the
      deferred [pfence], then the store), here to the thread's line [LE]. *)
  | SEff s t b T0 v : t < N → pc (th s t) = PRet b T0 v →
      let T := th s t in
      step s (setth (setpm s (p_store cline (if cfe cfg then p_fence (pm s) t else pm s) (xeff t) (S (kk T)))) t
                    (TS (PEff b T0 v) (kk T) (fl T) (lastb T) (lastts T) (lastv T) (rets T) (Some v)))
  (** The root operation's commit ([try_run_root]): the deferred fence, then
      the floor and the next index, persisted at once. *)
  | SCommit s t b T0 v : t < N → pc (th s t) = PEff b T0 v →
      let T := th s t in
      step s (St (p_fence (pm s) t) (S (clock s))
                 (upd (th s) t (TS PIdle (S (kk T)) (clock s) b T0 v [] None)) (att s))
  (** A thread crash. *)
  | STCrash s t : t < N →
      step s (setth (setpm s (drop_pwbs (pm s) t)) t (with_pc (th s t) (crash_pc (pc (th s t)))))
  (** A full crash: any image Px86 allows. *)
  | SCrash s keep : p_crash_ok (pm s) keep →
      step s (St (crash_mem (pm s) keep) (clock s) (λ u, with_pc (th s u) (crash_pc (pc (th s u)))) (att s)).

  Definition init : state :=
    St (pmem_empty (5 * N)) 1 (λ _, TS PIdle 0 0 false 0 (0, 0) [] None) [].

  Definition reachable (s : state) : Prop := rtc step init s.
End steps.

(** ** Lines and locations *)

Lemma cline_3 L : cline (3 * L) = L.
Proof. unfold cline. rewrite Nat.mul_comm. apply Nat.div_mul. lia. Qed.
Lemma cline_of L o : o < 3 → cline (3 * L + o) = L.
Proof.
  intros Ho. unfold cline. rewrite Nat.mul_comm, Nat.div_add_l by lia. rewrite Nat.div_small by lia. lia.
Qed.
Lemma cline_xts u b : cline (xts u b) = LA u b.
Proof. apply cline_3. Qed.
Lemma cline_xw0 u b : cline (xw0 u b) = LA u b.
Proof. apply cline_of. lia. Qed.
Lemma cline_xeff u : cline (xeff u) = LE u.
Proof. apply cline_3. Qed.

(** Thread [u]'s memento lines. *)
Definition own_line (u L : nat) : Prop := ∃ b, L = LA u b ∨ L = LB u b.

Ltac lines := unfold own_line, LB, LE, xts, xw0, xeff in *; unfold LA in *;
  repeat match goal with
  | |- context [if ?b then _ else _] => destruct b
  | H : context [if ?b then _ else _] |- _ => destruct b end; lia.

Section inv.
  Context (N : nat) (cr : bool).
  Notation cfg := (fixed cr).
  Notation xw1 := (xw1 cfg).
  Notation step := (step N cfg).

  Definition LW1 (u : nat) (b : bool) : nat := if cr then LB u b else LA u b.
  Lemma cline_xw1 u b : cline (xw1 u b) = LW1 u b.
  Proof. unfold xw1, LW1. cbn [cross fixed]. destruct cr; [apply cline_3 | apply cline_of; lia]. Qed.
  Lemma xw1_ts u b : xw1 u b ≠ xts u b.
  Proof. unfold xw1. cbn [cross fixed]. lines. Qed.
  Lemma xw1_w0 u b : xw1 u b ≠ xw0 u b.
  Proof. unfold xw1. cbn [cross fixed]. lines. Qed.
  Lemma LW1_own u b : own_line u (LW1 u b).
  Proof. unfold LW1. exists b. destruct cr; auto. Qed.

  Definition tsw (x : nat) (ws : list write) (P : nat → Prop) : Prop :=
    ∀ w v, w ∈ ws → (x, v) ∈ w → P v.

  (** The second word of an attempt's value: on its own durable line
      (cross), or in the line before the timestamp. *)
  Definition w1ok (p : pmem) (u : nat) (b : bool) (H : list write) (v1 : nat) : Prop :=
    if cr then dur p (LB u b) ∧ rd_vis p (xw1 u b) = v1 else seq_val (xw1 u b) H = v1.

  (** The target slot (the one the in-flight checkpoint writes, the other
      than the last completed one's) holds no timestamp of the in-flight
      invocation, only older ones ... *)
  Definition tgt_none (p : pmem) (u : nat) (T : tst) : Prop :=
    tsw (xts u (negb (lastb T))) (hist p (LA u (negb (lastb T)))) (λ v, v < lastts T).

  (** ... or exactly one, its line's last write, after the whole value of
      the attempt it belongs to. *)
  Definition tgt_some (p : pmem) (A : list (nat * nat * nat * val2)) (u : nat) (T : tst) (Tc : nat) (v : val2)
    : Prop :=
    let b := negb (lastb T) in
    ∃ H, hist p (LA u b) = H ++ [[(xts u b, Tc)]] ∧ tsw (xts u b) H (λ v, v < lastts T) ∧
      fl T < Tc ∧ (u, kk T, Tc, v) ∈ A ∧ seq_val (xw0 u b) H = v.1 ∧ w1ok p u b H v.2.

  Definition pcok (p : pmem) (A : list (nat * nat * nat * val2)) (u : nat) (T : tst) : Prop :=
    let b := negb (lastb T) in
    match pc T with
    | PIdle => tgt_none p u T ∧ rets T = [] ∧ effv T = None
    | PRec => ∀ v, effv T = Some v → (∃ Tc, tgt_some p A u T Tc v) ∧ dur p (LA u b)
    | P3a b' v => b' = b ∧ tgt_none p u T ∧ effv T = None
    | P3b b' v => b' = b ∧ tgt_none p u T ∧ effv T = None ∧ rd_vis p (xw0 u b) = v.1
    | P4 b' v => b' = b ∧ tgt_none p u T ∧ effv T = None ∧ rd_vis p (xw0 u b) = v.1 ∧
                 rd_vis p (xw1 u b) = v.2
    | P5 b' v => b' = b ∧ tgt_none p u T ∧ effv T = None ∧ rd_vis p (xw0 u b) = v.1 ∧
                 rd_vis p (xw1 u b) = v.2 ∧ (cr = true → dur p (LB u b))
    | PRet b' Tc v => b' = b ∧ tgt_some p A u T Tc v ∧
        (dur p (LA u b) ∨ (u, LA u b, length (hist p (LA u b))) ∈ p_pwbs p) ∧
        (∀ v', effv T = Some v' → v' = v ∧ dur p (LA u b))
    | PEff b' Tc v => b' = b ∧ tgt_some p A u T Tc v ∧ dur p (LA u b) ∧ effv T = Some v
    end.

  (** The last completed checkpoint's slot [b] is durable and holds its
      timestamp [ts] and value [v], and no newer timestamp. *)
  Record lastok (p : pmem) (u : nat) (b : bool) (ts : nat) (v : val2) : Prop := {
    l_durA : dur p (LA u b);
    l_durW : dur p (LW1 u b);
    l_ts : rd_vis p (xts u b) = ts;
    l_w0 : rd_vis p (xw0 u b) = v.1;
    l_w1 : rd_vis p (xw1 u b) = v.2;
    l_old : tsw (xts u b) (hist p (LA u b)) (λ v, v ≤ ts);
  }.

  (** Thread [u]'s invariant: the last completed checkpoint's slot as above,
      the target slot holds nothing of the in-flight invocation or exactly
      one whole attempt. *)
  Record tinv (p : pmem) (clk : nat) (A : list (nat * nat * nat * val2)) (u : nat) (T : tst) : Prop := {
    t_fl : fl T < clk;
    t_last_fl : lastts T ≤ fl T;
    t_last0 : lastts T = 0 → lastb T = false;
    t_last : lastok p u (lastb T) (lastts T) (lastv T);
    t_tgt : tgt_none p u T ∨ ∃ Tc v, tgt_some p A u T Tc v;
    t_rets : ∀ v, v ∈ rets T → ∃ Tc, (u, kk T, Tc, v) ∈ A;
    t_pc : pcok p A u T;
  }.

  Record inv (s : state) : Prop := {
    i_wf : p_wf (pm s);
    i_nl : nlines (pm s) = 5 * N;
    i_att : ∀ e, e ∈ att s → e.1.2 < clock s;
    i_nodup : NoDup ((λ e : nat * nat * nat * val2, e.1.2) <$> att s);
    i_th : ∀ u, u < N → tinv (pm s) (clock s) (att s) u (th s u);
  }.
End inv.

(** ** Frames: what a step of another thread leaves alone *)

Definition agrees (p p' : pmem) (u : nat) : Prop :=
  ∀ L, own_line u L → hist p' L = hist p L ∧ mk p L ≤ mk p' L.
Definition keeps_pwbs (p p' : pmem) (u : nat) : Prop :=
  ∀ L n, (u, L, n) ∈ p_pwbs p → (u, L, n) ∈ p_pwbs p'.

Lemma agrees_refl p u : agrees p p u.
Proof. intros L _. done. Qed.
Lemma agrees_trans p1 p2 p3 u : agrees p1 p2 u → agrees p2 p3 u → agrees p1 p3 u.
Proof. intros H1 H2 L HL. destruct (H1 L HL), (H2 L HL). split; [congruence | lia]. Qed.
Lemma agrees_write p L w u : ¬ own_line u L → agrees p (p_write p L w) u.
Proof. intros Hn L' HL'. split; [apply hist_write_other; intros ->; by apply Hn | done]. Qed.
Lemma agrees_pwb p t x u : agrees p (p_pwb cline p t x) u.
Proof. intros L _. done. Qed.
Lemma agrees_fence p t u : agrees p (p_fence p t) u.
Proof. intros L _. split; [apply hist_fence | apply mk_fence]. Qed.
Lemma agrees_drop p t u : agrees p (drop_pwbs p t) u.
Proof. intros L _. done. Qed.

Lemma keeps_refl p u : keeps_pwbs p p u.
Proof. by intros ??. Qed.
Lemma keeps_trans p1 p2 p3 u : keeps_pwbs p1 p2 u → keeps_pwbs p2 p3 u → keeps_pwbs p1 p3 u.
Proof. intros H1 H2 L n H. by apply H2, H1. Qed.
Lemma keeps_write p L w u : keeps_pwbs p (p_write p L w) u.
Proof. by intros ??. Qed.
Lemma keeps_pwb p t x u : keeps_pwbs p (p_pwb cline p t x) u.
Proof. intros ?? H. by right. Qed.
Lemma keeps_fence p t u : t ≠ u → keeps_pwbs p (p_fence p t) u.
Proof. intros Hne L n H. simpl. apply elem_of_list_filter. simpl. done. Qed.
Lemma keeps_drop p t u : t ≠ u → keeps_pwbs p (drop_pwbs p t) u.
Proof. intros Hne L n H. simpl. apply elem_of_list_filter. simpl. done. Qed.

Lemma own_LA u b : own_line u (LA u b).
Proof. exists b. by left. Qed.
Lemma own_LB u b : own_line u (LB u b).
Proof. exists b. by right. Qed.

Lemma rd_vis_agree p p' u x : agrees p p' u → own_line u (cline x) → rd_vis p' x = rd_vis p x.
Proof. intros Ha Ho. unfold rd_vis. by rewrite (proj1 (Ha _ Ho)). Qed.

Lemma dur_agree p p' u L : p_wf p' → agrees p p' u → own_line u L → dur p L → dur p' L.
Proof.
  intros Hwf Ha Ho Hd. destruct (Ha L Ho) as [Hh Hm]. unfold dur in *.
  pose proof (wf_mk_le p' L Hwf). rewrite Hh in *. lia.
Qed.

Lemma tsw_app x l1 l2 (P : nat → Prop) : tsw x (l1 ++ l2) P ↔ tsw x l1 P ∧ tsw x l2 P.
Proof.
  unfold tsw. split.
  - intros H. split; intros w v Hw; apply H; apply elem_of_app; auto.
  - intros [H1 H2] w v [Hw|Hw]%elem_of_app; [by apply H1 | by apply H2].
Qed.
Lemma tsw_other x y v (P : nat → Prop) : x ≠ y → tsw x [[(y, v)]] P.
Proof. intros Hne w v' ->%elem_of_list_singleton Hin%elem_of_list_singleton. congruence. Qed.
Lemma tsw_one x v (P : nat → Prop) : P v → tsw x [[(x, v)]] P.
Proof. intros HP w v' ->%elem_of_list_singleton Hin. apply elem_of_list_singleton in Hin. by injection Hin as ->. Qed.
Lemma tsw_take x l n (P : nat → Prop) : tsw x l P → tsw x (take n l) P.
Proof.
  intros H w v Hw. apply elem_of_take in Hw as (i & Hi & _). apply H. by eapply elem_of_list_lookup_2.
Qed.
Lemma tsw_impl x l (P Q : nat → Prop) : (∀ v, P v → Q v) → tsw x l P → tsw x l Q.
Proof. intros HPQ H w v Hw Hv. apply HPQ. by eapply H. Qed.

Lemma own_xw1_any c u b : own_line u (cline (xw1 c u b)).
Proof. unfold xw1. destruct (cross c); [rewrite cline_3; apply own_LB | rewrite cline_of by lia; apply own_LA]. Qed.

Section proofs.
  Context (N : nat) (cr : bool).
  Notation cfg := (fixed cr).
  Notation xw1 := (xw1 cfg).
  Notation LW1 := (LW1 cr).
  Notation tinv := (tinv cr).
  Notation tgt_some := (tgt_some cr).
  Notation w1ok := (w1ok cr).
  Notation pcok := (pcok cr).
  Notation inv := (inv N cr).
  Notation slot_of := (slot_of cfg).
  Notation step := (step N cfg).

  Lemma own_xts u b : own_line u (cline (xts u b)).
  Proof. rewrite cline_xts. apply own_LA. Qed.
  Lemma own_xw0 u b : own_line u (cline (xw0 u b)).
  Proof. rewrite cline_xw0. apply own_LA. Qed.
  Lemma own_xw1 u b : own_line u (cline (xw1 u b)).
  Proof. apply own_xw1_any. Qed.

  Lemma w1ok_agree p p' u b H v1 : p_wf p' → agrees p p' u → w1ok p u b H v1 → w1ok p' u b H v1.
  Proof.
    unfold w1ok. destruct cr; [|done]. intros Hwf Ha [Hd Hr]. split.
    - eapply (dur_agree p p' u); [done | done | apply own_LB | done].
    - rewrite (rd_vis_agree p p' u); [done | done | apply own_xw1_any].
  Qed.

  Lemma tgt_none_agree p p' u T : agrees p p' u → tgt_none p u T → tgt_none p' u T.
  Proof. unfold tgt_none. intros Ha. by rewrite (proj1 (Ha _ (own_LA _ _))). Qed.

  Lemma tgt_some_agree p p' A A' u T Tc v : p_wf p' → agrees p p' u → (∀ e, e ∈ A → e ∈ A') →
    tgt_some p A u T Tc v → tgt_some p' A' u T Tc v.
  Proof.
    unfold tgt_some. intros Hwf Ha HA (H & Hh & Hts & Hfl & Hat & Hw0 & Hw1).
    exists H. rewrite (proj1 (Ha _ (own_LA _ _))). split_and!; try done; [by apply HA|].
    by eapply w1ok_agree.
  Qed.

  Lemma pcok_agree p p' A A' u T : p_wf p' → agrees p p' u → (∀ e, e ∈ A → e ∈ A') → keeps_pwbs p p' u →
    pcok p A u T → pcok p' A' u T.
  Proof.
    intros Hwf Ha HA Hk. unfold pcok.
    assert (Hr : ∀ x, own_line u (cline x) → rd_vis p' x = rd_vis p x) by (intros; by eapply (rd_vis_agree p p' u)).
    rewrite !Hr by (apply own_xw0 || apply own_xw1).
    assert (HdA : ∀ b, dur p (LA u b) → dur p' (LA u b)) by (intros; eapply (dur_agree p p' u); eauto using own_LA).
    assert (HdB : ∀ b, dur p (LB u b) → dur p' (LB u b)) by (intros; eapply (dur_agree p p' u); eauto using own_LB).
    destruct (pc T).
    - intros (? & ? & ?). split_and!; [by eapply tgt_none_agree | done | done].
    - intros H v Hv. destruct (H v Hv) as [[Tc HT] Hd]. split; [exists Tc; by eapply tgt_some_agree | auto].
    - intros (? & ? & ?). split_and!; [done | by eapply tgt_none_agree | done].
    - intros (? & ? & ? & ?). split_and!; [done | by eapply tgt_none_agree | done | done].
    - intros (? & ? & ? & ? & ?). split_and!; [done | by eapply tgt_none_agree | done | done | done].
    - intros (? & ? & ? & ? & ? & Hd). split_and!; [done | by eapply tgt_none_agree | done | done | done | auto].
    - intros (? & HT & Hp & He). split_and!; [done | by eapply tgt_some_agree | | ].
      + rewrite (proj1 (Ha _ (own_LA _ _))). destruct Hp as [Hp|Hp]; [left; auto | right; by apply Hk].
      + intros v' Hv'. destruct (He v' Hv'). auto.
    - intros (? & HT & Hd & He). split_and!; [done | by eapply tgt_some_agree | auto | done].
  Qed.

  Lemma tinv_agree p p' clk clk' A A' u T : p_wf p' → agrees p p' u → clk ≤ clk' →
    (∀ e, e ∈ A → e ∈ A') → keeps_pwbs p p' u →
    tinv p clk A u T → tinv p' clk' A' u T.
  Proof.
    intros Hwf Ha Hc HA Hk [H1 H2 H3 [H4 H5 H6 H7 H8 H9] H10 H11 H12].
    assert (Hr : ∀ x, own_line u (cline x) → rd_vis p' x = rd_vis p x) by (intros; by eapply (rd_vis_agree p p' u)).
    constructor; try done.
    - lia.
    - constructor.
      + eapply (dur_agree p p' u); eauto using own_LA.
      + eapply (dur_agree p p' u); eauto using LW1_own.
      + rewrite Hr; [done | apply own_xts].
      + rewrite Hr; [done | apply own_xw0].
      + rewrite Hr; [done | apply own_xw1].
      + by rewrite (proj1 (Ha _ (own_LA _ _))).
    - destruct H10 as [H10 | (Tc & v & H10)]; [left; by eapply tgt_none_agree | right; exists Tc, v; by eapply tgt_some_agree].
    - intros v Hv. destruct (H11 v Hv) as [Tc HTc]. exists Tc. by apply HA.
    - by eapply pcok_agree.
  Qed.
End proofs.

Lemma nodup_fmap_inj {A B} (f : A → B) (l : list A) a b :
  NoDup (f <$> l) → a ∈ l → b ∈ l → f a = f b → a = b.
Proof.
  intros Hnd Ha Hb Hf. apply elem_of_list_lookup_1 in Ha as [i Hi], Hb as [j Hj].
  assert ((f <$> l) !! i = Some (f a)) as Hi' by (rewrite list_lookup_fmap, Hi; done).
  assert ((f <$> l) !! j = Some (f a)) as Hj' by (rewrite list_lookup_fmap, Hj, Hf; done).
  pose proof (NoDup_lookup _ _ _ _ Hnd Hi' Hj') as ->. congruence.
Qed.

Lemma not_own_LA u t b : u ≠ t → ¬ own_line u (LA t b).
Proof. intros Hne (b' & [H|H]); revert H; lines. Qed.
Lemma not_own_LB u t b : u ≠ t → ¬ own_line u (LB t b).
Proof. intros Hne (b' & [H|H]); revert H; lines. Qed.
Lemma not_own_LE u t : ¬ own_line u (LE t).
Proof. intros (b' & [H|H]); revert H; lines. Qed.

Lemma latest_of_last (t0 t1 : nat) (b : bool) (ts : nat) :
  (if b then t1 else t0) = ts → ((if b then t0 else t1) < ts ∨ (if b then t0 else t1) = 0) →
  (ts = 0 → b = false) → latest_of t0 t1 = b.
Proof.
  unfold latest_of. intros H1 H2 H3. destruct b.
  - apply bool_decide_eq_true. destruct H2; [lia|]. destruct (decide (ts = 0)); [by specialize (H3 e)|lia].
  - apply bool_decide_eq_false. lia.
Qed.

Lemma latest_of_tgt (t0 t1 : nat) (b : bool) :
  (if b then t1 else t0) < (if b then t0 else t1) → latest_of t0 t1 = negb b.
Proof. unfold latest_of. destruct b; intros H; simpl; [apply bool_decide_eq_false | apply bool_decide_eq_true]; lia. Qed.

Section proofs2.
  Context (N : nat) (cr : bool).
  Notation cfg := (fixed cr).
  Notation xw1 := (xw1 cfg).
  Notation LW1 := (LW1 cr).
  Notation tinv := (tinv cr).
  Notation lastok := (lastok cr).
  Notation tgt_some := (tgt_some cr).
  Notation w1ok := (w1ok cr).
  Notation pcok := (pcok cr).
  Notation inv := (inv N cr).
  Notation slot_of := (slot_of cfg).
  Notation recovered := (recovered cfg).
  Notation step := (step N cfg).

  Lemma latest_last rd u b ts : rd (xts u b) = ts → (rd (xts u (negb b)) < ts ∨ rd (xts u (negb b)) = 0) →
    (ts = 0 → b = false) → latest_b rd u = b.
  Proof. intros. unfold latest_b. apply latest_of_last with ts; destruct b; done. Qed.

  Lemma latest_tgt rd u b : rd (xts u b) < rd (xts u (negb b)) → latest_b rd u = negb b.
  Proof. intros. unfold latest_b. apply latest_of_tgt. destruct b; done. Qed.

  Lemma not_own_LW1 u t b : u ≠ t → ¬ own_line u (LW1 t b).
  Proof. unfold LW1. destruct cr; [apply not_own_LB | apply not_own_LA]. Qed.

  Lemma diff_lines u b : LA u (negb b) ≠ LA u b ∧ LA u (negb b) ≠ LW1 u b ∧
                         LW1 u (negb b) ≠ LA u b ∧ LW1 u (negb b) ≠ LW1 u b.
  Proof. unfold LW1. destruct cr, b; simpl; split_and!; lines. Qed.

  Lemma LA_lt u b : u < N → LA u b < 5 * N.
  Proof. lines. Qed.
  Lemma LW1_lt u b : u < N → LW1 u b < 5 * N.
  Proof. unfold LW1. destruct cr; lines. Qed.
  Lemma LE_lt u : u < N → LE u < 5 * N.
  Proof. lines. Qed.

  (** Reading a line through a durable prefix. *)
  Lemma rd_img_dur p keep x : p_crash_ok p keep → cline x < nlines p → dur p (cline x) →
    rd_img p keep x = rd_vis p x.
  Proof.
    intros Hok HL Hd. unfold rd_img, rd_vis. destruct (Hok _ HL) as [H1 H2].
    fold (mk p (cline x)) (hist p (cline x)) in *. unfold dur in Hd. rewrite take_ge; [done | lia].
  Qed.

  Lemma lastok_agree p p' u b ts v : p_wf p' →
    (∀ L, L = LA u b ∨ L = LW1 u b → hist p' L = hist p L ∧ mk p L ≤ mk p' L) →
    lastok p u b ts v → lastok p' u b ts v.
  Proof.
    intros Hwf Ha [H1 H2 H3 H4 H5 H6].
    assert (HdA : dur p' (LA u b)).
    { destruct (Ha (LA u b) (or_introl eq_refl)). unfold dur in *. pose proof (wf_mk_le p' (LA u b) Hwf). rewrite H in *. lia. }
    assert (HdW : dur p' (LW1 u b)).
    { destruct (Ha (LW1 u b) (or_intror eq_refl)). unfold dur in *. pose proof (wf_mk_le p' (LW1 u b) Hwf). rewrite H in *. lia. }
    constructor; try done; unfold rd_vis in *.
    - rewrite cline_xts in *. by rewrite (proj1 (Ha _ (or_introl eq_refl))).
    - rewrite cline_xw0 in *. by rewrite (proj1 (Ha _ (or_introl eq_refl))).
    - rewrite cline_xw1 in *. by rewrite (proj1 (Ha _ (or_intror eq_refl))).
    - by rewrite (proj1 (Ha _ (or_introl eq_refl))).
  Qed.

  (** The target slot's timestamp when it holds nothing of the in-flight
      invocation, through any prefix of its line. *)
  Lemma tgt_none_ts p u T n : tgt_none p u T →
    seq_val (xts u (negb (lastb T))) (take n (hist p (LA u (negb (lastb T))))) < lastts T ∨
    seq_val (xts u (negb (lastb T))) (take n (hist p (LA u (negb (lastb T))))) = 0.
  Proof.
    intros H. apply (seq_val_take_bound (λ v, v < lastts T ∨ v = 0)); [by right|].
    intros w v Hw Hv. left. by eapply H.
  Qed.

  Lemma tgt_none_vis p u T : tgt_none p u T →
    rd_vis p (xts u (negb (lastb T))) < lastts T ∨ rd_vis p (xts u (negb (lastb T))) = 0.
  Proof.
    intros H. unfold rd_vis. rewrite cline_xts.
    rewrite <- (take_ge (hist p _) (length (hist p (LA u (negb (lastb T)))))) by done.
    by apply tgt_none_ts.
  Qed.

  Lemma w1ok_read p u b H v1 Tc keep : p_crash_ok p keep → LW1 u b < nlines p →
    hist p (LA u b) = H ++ [[(xts u b, Tc)]] → keep (LA u b) = length (hist p (LA u b)) →
    w1ok p u b H v1 → rd_img p keep (xw1 u b) = v1 ∧ rd_vis p (xw1 u b) = v1.
  Proof.
    intros Hok HL Hh Hk Hw. unfold w1ok in Hw. unfold rd_img, rd_vis. rewrite cline_xw1 in *.
    unfold LW1, xw1 in *. cbn [cross fixed] in *. destruct cr.
    - destruct Hw as [Hd Hr]. unfold rd_vis in Hr. rewrite cline_3 in Hr.
      destruct (Hok _ HL) as [H1 H2]. fold (mk p (LB u b)) (hist p (LB u b)) in *. unfold dur in Hd.
      rewrite take_ge by lia. done.
    - rewrite Hk, take_ge by done. rewrite Hh, seq_val_snoc1. rewrite decide_False by lines. done.
  Qed.

  Lemma tgt_some_read p A u T Tc v keep : p_crash_ok p keep → u < N → nlines p = 5 * N →
    tgt_some p A u T Tc v → keep (LA u (negb (lastb T))) = length (hist p (LA u (negb (lastb T)))) →
    slot_of (rd_img p keep) u (negb (lastb T)) = (Tc, v) ∧ slot_of (rd_vis p) u (negb (lastb T)) = (Tc, v).
  Proof.
    intros Hok Hu Hnl (H & Hh & Hts & Hfl & Hat & Hw0 & Hw1) Hk.
    destruct (w1ok_read p u _ H v.2 Tc keep Hok ltac:(rewrite Hnl; by apply LW1_lt) Hh Hk Hw1) as [Hi1 Hv1].
    unfold slot_of, rd_img, rd_vis. rewrite cline_xts, cline_xw0. rewrite Hk, take_ge by done.
    fold (rd_img p keep (xw1 u (negb (lastb T)))) (rd_vis p (xw1 u (negb (lastb T)))).
    rewrite Hi1, Hv1, Hh, !seq_val_snoc1. rewrite decide_True by done. rewrite decide_False by lines.
    rewrite Hw0. by destruct v.
  Qed.

  Lemma tgt_some_unique p A u T Tc v Tc' v' : NoDup ((λ e : nat * nat * nat * val2, e.1.2) <$> A) →
    tgt_some p A u T Tc v → tgt_some p A u T Tc' v' → Tc = Tc' ∧ v = v'.
  Proof.
    intros Hnd (H & Hh & _ & _ & Hat & _) (H' & Hh' & _ & _ & Hat' & _).
    rewrite Hh in Hh'. apply app_inj_tail in Hh' as [_ Hw]. injection Hw as <-.
    pose proof (nodup_fmap_inj _ _ _ _ Hnd Hat Hat' eq_refl) as He. by injection He.
  Qed.

  (** Once the root operation wrote after the checkpoint, its attempt is
      durable. *)
  Lemma effv_tgt p A u T v : pcok p A u T → effv T = Some v →
    (∃ Tc, tgt_some p A u T Tc v) ∧ dur p (LA u (negb (lastb T))).
  Proof.
    unfold pcok. destruct (pc T); try (intros Hp He; destruct_and? Hp; congruence).
    - intros Hp He. by apply Hp.
    - intros (-> & HT & _ & Hd) He. destruct (Hd v He) as [-> Hd']. eauto.
    - intros (-> & HT & Hd & He') He. rewrite He in He'. injection He' as ->. eauto.
  Qed.

  (** ** The slot recovery reads, in every crash image *)
  Lemma tinv_image p clk A u T keep : p_wf p → nlines p = 5 * N → u < N → p_crash_ok p keep →
    NoDup ((λ e : nat * nat * nat * val2, e.1.2) <$> A) →
    tinv p clk A u T →
    (recovered (rd_img p keep) u = (lastts T, lastv T) ∨
     ∃ Tc v, (u, kk T, Tc, v) ∈ A ∧ recovered (rd_img p keep) u = (Tc, v)) ∧
    (∀ v, effv T = Some v → ∃ Tc, (u, kk T, Tc, v) ∈ A ∧ recovered (rd_img p keep) u = (Tc, v)).
  Proof.
    intros Hwf Hnl Hu Hok Hnd [Hfl Hlf Hl0 [HdA HdW Hts Hw0 Hw1 Hold] Htg Hrets Hpc].
    assert (HLA : ∀ b, LA u b < nlines p) by (intros; rewrite Hnl; by apply LA_lt).
    assert (HLW : ∀ b, LW1 u b < nlines p) by (intros; rewrite Hnl; by apply LW1_lt).
    assert (Hlast : rd_img p keep (xts u (lastb T)) = lastts T →
                    latest_b (rd_img p keep) u = lastb T → recovered (rd_img p keep) u = (lastts T, lastv T)).
    { intros H1 H2. unfold recovered. rewrite H2. unfold slot_of. rewrite H1.
      rewrite !rd_img_dur; [| done | rewrite cline_xw1; auto | rewrite cline_xw1; auto
                              | done | rewrite cline_xw0; auto | rewrite cline_xw0; auto].
      rewrite Hw0, Hw1. by destruct (lastv T). }
    assert (Hts' : rd_img p keep (xts u (lastb T)) = lastts T).
    { rewrite rd_img_dur; [done | done | rewrite cline_xts; auto | rewrite cline_xts; auto]. }
    assert (Hsome : ∀ Tc v, tgt_some p A u T Tc v → keep (LA u (negb (lastb T))) = length (hist p (LA u (negb (lastb T)))) →
               recovered (rd_img p keep) u = (Tc, v)).
    { intros Tc v HT Hk. destruct (tgt_some_read p A u T Tc v keep Hok Hu Hnl HT Hk) as [Hs _].
      unfold recovered. rewrite (latest_tgt _ u (lastb T)); [done|].
      rewrite Hts'. unfold slot_of in Hs. injection Hs as ->. destruct HT as (? & _ & _ & ? & _). lia. }
    assert (Hnone : ∀ n, n ≤ length (hist p (LA u (negb (lastb T)))) → keep (LA u (negb (lastb T))) = n →
               tsw (xts u (negb (lastb T))) (take n (hist p (LA u (negb (lastb T))))) (λ v, v < lastts T) →
               recovered (rd_img p keep) u = (lastts T, lastv T)).
    { intros n Hn Hk Htw. apply Hlast; [done|]. apply (latest_last _ u (lastb T) (lastts T)); [done | | done].
      unfold rd_img. rewrite cline_xts, Hk.
      rewrite <- (take_ge (take n _) (length (take n (hist p (LA u (negb (lastb T))))))) by done.
      apply (seq_val_take_bound (λ v, v < lastts T ∨ v = 0)); [by right|]. intros w v Hw Hv. left. by eapply Htw. }
    destruct (Hok _ (HLA (negb (lastb T)))) as [Hk1 Hk2]. fold (mk p (LA u (negb (lastb T)))) (hist p (LA u (negb (lastb T)))) in *.
    split.
    - destruct Htg as [Hn | (Tc & v & HT)].
      + left. eapply Hnone; [exact Hk2 | done | by apply tsw_take].
      + destruct (decide (keep (LA u (negb (lastb T))) = length (hist p (LA u (negb (lastb T)))))) as [Hk|Hk].
        * right. exists Tc, v. split; [by destruct HT as (? & _ & _ & _ & ? & _) | by apply Hsome].
        * left. apply (Hnone (keep (LA u (negb (lastb T))))); [done | done |].
          destruct HT as (H & Hh & Htw & _). rewrite Hh, app_length in Hk, Hk2. simpl in Hk, Hk2.
          rewrite Hh, take_app_le by lia. by apply tsw_take.
    - intros v He. destruct (effv_tgt p A u T v Hpc He) as [[Tc HT] Hd]. exists Tc.
      split; [by destruct HT as (? & _ & _ & _ & ? & _) |]. apply Hsome; [done|]. unfold dur in Hd. lia.
  Qed.
End proofs2.

(** ** The invariant is inductive *)

Lemma hist_empty n L : hist (pmem_empty n) L = [].
Proof.
  unfold hist, line_hist, pmem_empty, mem_empty. simpl.
  destruct (replicate n [] !! L) as [l|] eqn:E; simpl; [| done]. by apply lookup_replicate in E as [-> _].
Qed.

Section proofs3.
  Context (N : nat) (cr : bool).
  Notation cfg := (fixed cr).
  Notation xw1 := (xw1 cfg).
  Notation LW1 := (LW1 cr).
  Notation tinv := (tinv cr).
  Notation lastok := (lastok cr).
  Notation tgt_some := (tgt_some cr).
  Notation w1ok := (w1ok cr).
  Notation pcok := (pcok cr).
  Notation inv := (inv N cr).
  Notation slot_of := (slot_of cfg).
  Notation recovered := (recovered cfg).
  Notation step := (step N cfg).
  Notation reachable := (reachable N cfg).

  Lemma w1ok_tr p p' u b H v1 : p_wf p' →
    (cr = true → dur p (LB u b) → hist p' (LB u b) = hist p (LB u b) ∧ mk p (LB u b) ≤ mk p' (LB u b)) →
    w1ok p u b H v1 → w1ok p' u b H v1.
  Proof.
    intros Hwf Ha. unfold w1ok, rd_vis, xw1. cbn [cross fixed]. destruct cr; [|done].
    rewrite !cline_3. intros [Hd Hr]. destruct (Ha eq_refl Hd) as [Hh Hm]. split.
    - unfold dur in *. pose proof (wf_mk_le p' (LB u b) Hwf). rewrite Hh in *. lia.
    - by rewrite Hh.
  Qed.

  Lemma w1ok_dur p u b H v1 : w1ok p u b H v1 → dur p (LA u b) → dur p (LW1 u b).
  Proof. unfold w1ok, LW1. destruct cr; [intros [? _] _; done | auto]. Qed.

  Lemma w1ok_of p p' u b v1 Tc : p_wf p' → rd_vis p (xw1 u b) = v1 → (cr = true → dur p (LB u b)) →
    hist p' (LA u b) = hist p (LA u b) ++ [[(xts u b, Tc)]] →
    (cr = true → hist p' (LB u b) = hist p (LB u b) ∧ mk p (LB u b) ≤ mk p' (LB u b)) →
    w1ok p' u b (hist p (LA u b)) v1.
  Proof.
    intros Hwf. unfold w1ok, rd_vis, xw1. cbn [cross fixed]. destruct cr.
    - rewrite !cline_3. intros Hr Hd _ Ha. destruct (Ha eq_refl) as [Hh Hm]. specialize (Hd eq_refl). split.
      + unfold dur in *. pose proof (wf_mk_le p' (LB u b) Hwf). rewrite Hh in *. lia.
      + by rewrite Hh.
    - rewrite cline_of by lia. intros Hr _ _ _. done.
  Qed.

  Lemma inv_init : inv (init N).
  Proof.
    unfold init. constructor; cbn [pm clock att th].
    - apply pmem_empty_wf.
    - unfold nlines. simpl. by rewrite replicate_length.
    - intros e He. by apply elem_of_nil in He.
    - constructor.
    - intros u Hu. assert (Hd : ∀ L, dur (pmem_empty (5 * N)) L).
      { intros L. unfold dur. pose proof (wf_mk_le _ L (pmem_empty_wf (5 * N))). rewrite hist_empty in *. simpl in *. lia. }
      assert (Hr : ∀ x, rd_vis (pmem_empty (5 * N)) x = 0) by (intros; unfold rd_vis; by rewrite hist_empty).
      assert (Ht : ∀ x L P, tsw x (hist (pmem_empty (5 * N)) L) P).
      { intros x L P w v Hw. rewrite hist_empty in Hw. by apply elem_of_nil in Hw. }
      constructor; cbn [fl lastts lastb lastv rets pc effv kk]; try lia; try done.
      + left. apply Ht.
      + intros v Hv. by apply elem_of_nil in Hv.
      + split_and!; [apply Ht | done | done].
  Qed.

  (** Composition: the stepping thread's invariant, the frames of the others. *)
  Lemma inv_thread s s' t : inv s → t < N → p_wf (pm s') → nlines (pm s') = 5 * N →
    (∀ e, e ∈ att s' → e.1.2 < clock s') → NoDup ((λ e : nat * nat * nat * val2, e.1.2) <$> att s') →
    clock s ≤ clock s' → (∀ e, e ∈ att s → e ∈ att s') →
    (∀ u, u ≠ t → th s' u = th s u ∧ agrees (pm s) (pm s') u ∧ keeps_pwbs (pm s) (pm s') u) →
    tinv (pm s') (clock s') (att s') t (th s' t) → inv s'.
  Proof.
    intros Hi Ht Hwf Hnl Hatt Hnd Hc HA Ho Htt. constructor; try done.
    intros u Hu. destruct (decide (u = t)) as [->|Hne]; [done|].
    destruct (Ho u Hne) as (-> & Ha & Hk). eapply tinv_agree; eauto. by apply (i_th _ _ _ Hi).
  Qed.

  Lemma upd_eq {A} (f : nat → A) t a : upd f t a t = a.
  Proof. unfold upd. by rewrite decide_True. Qed.
  Lemma upd_ne {A} (f : nat → A) t u a : u ≠ t → upd f t a u = f u.
  Proof. intros. unfold upd. by rewrite decide_False. Qed.

  Lemma lines_lt s u b : inv s → u < N → LA u b < nlines (pm s) ∧ LW1 u b < nlines (pm s) ∧ LB u b < nlines (pm s) ∧ LE u < nlines (pm s).
  Proof. intros Hi Hu. rewrite (i_nl _ _ _ Hi). split_and!; [by apply LA_lt | by apply LW1_lt | lines | by apply LE_lt]. Qed.

  (** The latest visible slot when the target holds nothing of the
      in-flight invocation. *)
  Lemma latest_none p clk A u T : tinv p clk A u T → tgt_none p u T → latest_b (rd_vis p) u = lastb T.
  Proof.
    intros Hi Hn. apply (latest_last _ u (lastb T) (lastts T)).
    - apply (l_ts _ _ _ _ _ _ (t_last _ _ _ _ _ _ Hi)).
    - by apply tgt_none_vis.
    - apply (t_last0 _ _ _ _ _ _ Hi).
  Qed.

  Lemma latest_some p clk A u T Tc v : p_wf p → nlines p = 5 * N → u < N → tinv p clk A u T → tgt_some p A u T Tc v →
    latest_b (rd_vis p) u = negb (lastb T) ∧ slot_of (rd_vis p) u (negb (lastb T)) = (Tc, v).
  Proof.
    intros Hwf Hnl Hu Hi HT.
    destruct (tgt_some_read N cr p A u T Tc v (λ L, length (hist p L)) (p_crash_ok_all p Hwf) Hu Hnl HT eq_refl) as [_ Hs].
    split; [| done]. apply latest_tgt. rewrite (l_ts _ _ _ _ _ _ (t_last _ _ _ _ _ _ Hi)).
    unfold slot_of in Hs. injection Hs as ->. destruct HT as (? & _ & _ & ? & _).
    pose proof (t_last_fl _ _ _ _ _ _ Hi). lia.
  Qed.

  Ltac ti Hi u := pose proof (i_th _ _ _ Hi u ltac:(done)) as [?Hfl ?Hlf ?Hl0 ?Hlast ?Htg ?Hrets ?Hpc].

  (** Steps that change neither the memory nor the ghost: a new position
      with the same [pcok] premises. *)
  Lemma step_pc_only s t P : inv s → t < N →
    pcok (pm s) (att s) t (with_pc (th s t) P) → inv (setth s t (with_pc (th s t) P)).
  Proof.
    intros Hi Ht Hp. ti Hi t. apply (inv_thread s _ t); cbn [setth pm clock att th]; try done;
      [apply (i_wf _ _ _ Hi) | apply (i_nl _ _ _ Hi) | apply (i_att _ _ _ Hi) | apply (i_nodup _ _ _ Hi) | |].
    - intros u Hu. rewrite upd_ne by done. split_and!; [done | apply agrees_refl | apply keeps_refl].
    - rewrite upd_eq. by constructor.
  Qed.

  Lemma step_start s t v : inv s → t < N → pc (th s t) = PIdle →
    inv (setth s t (with_pc (th s t) (P3a (negb (latest_b (rd_vis (pm s)) t)) v))).
  Proof.
    intros Hi Ht Hpc. ti Hi t. apply step_pc_only; [done | done |].
    unfold pcok in Hpc0 |- *. rewrite Hpc in Hpc0. destruct Hpc0 as (Hn & Hr & He). cbn.
    rewrite (latest_none (pm s) (clock s) (att s) t (th s t)); [done | by apply (i_th _ _ _ Hi) | done].
  Qed.

  (** In recovery, a target holding an attempt is the latest slot. *)
  Lemma rec_some s t Tc v : inv s → t < N → tgt_some (pm s) (att s) t (th s t) Tc v →
    latest_b (rd_vis (pm s)) t = negb (lastb (th s t)) ∧ slot_of (rd_vis (pm s)) t (negb (lastb (th s t))) = (Tc, v) ∧
    fl (th s t) < Tc.
  Proof.
    intros Hi Ht HT. destruct (latest_some (pm s) (clock s) (att s) t (th s t) Tc v) as [H1 H2];
      [apply (i_wf _ _ _ Hi) | apply (i_nl _ _ _ Hi) | done | by apply (i_th _ _ _ Hi) | done |].
    split_and!; [done | done |]. by destruct HT as (? & _ & _ & ? & _).
  Qed.

  Lemma step_recmiss s t v : inv s → t < N → pc (th s t) = PRec →
    (slot_of (rd_vis (pm s)) t (latest_b (rd_vis (pm s)) t)).1 ≤ fl (th s t) →
    inv (setth s t (with_pc (th s t) (P3a (negb (latest_b (rd_vis (pm s)) t)) v))).
  Proof.
    intros Hi Ht Hpc Hle. ti Hi t.
    assert (Hn : tgt_none (pm s) t (th s t)).
    { destruct Htg as [Hn | (Tc & v' & HT)]; [done | exfalso].
      destruct (rec_some s t Tc v' Hi Ht HT) as (H1 & H2 & H3). rewrite H1, H2 in Hle. simpl in Hle. lia. }
    apply step_pc_only; [done | done |].
    unfold pcok in Hpc0 |- *. rewrite Hpc in Hpc0. cbn.
    rewrite (latest_none (pm s) (clock s) (att s) t (th s t)); [| by apply (i_th _ _ _ Hi) | done].
    split_and!; [done | done |]. destruct (effv (th s t)) as [v'|] eqn:E; [exfalso | done].
    destruct (Hpc0 v' eq_refl) as [[Tc HT] _]. destruct (rec_some s t Tc v' Hi Ht HT) as (H1 & H2 & H3).
    rewrite H1, H2 in Hle. simpl in Hle. lia.
  Qed.

  Lemma step_rechit s t : inv s → t < N → pc (th s t) = PRec →
    let T := th s t in
    let b := latest_b (rd_vis (pm s)) t in
    let sl := slot_of (rd_vis (pm s)) t b in
    fl T < sl.1 →
    inv (St (if crf cfg then p_fence (p_pwb cline (p_pwb cline (pm s) t (xts t b)) t (xw1 t b)) t else pm s)
            (clock s)
            (upd (th s) t (TS (PRet b sl.1 sl.2) (kk T) (fl T) (lastb T) (lastts T) (lastv T)
                              (rets T ++ [sl.2]) (effv T)))
            (att s)).
  Proof.
    intros Hi Ht Hpc T b sl Hgt. subst T b sl. ti Hi t. set (T := th s t) in *. cbn [crf fixed].
    assert (∃ Tc v, tgt_some (pm s) (att s) t T Tc v) as (Tc & v & HT).
    { destruct Htg as [Hn | HT]; [exfalso | done].
      rewrite (latest_none (pm s) (clock s) (att s) t T) in Hgt; [| by apply (i_th _ _ _ Hi) | done].
      unfold slot_of in Hgt. simpl in Hgt. rewrite (l_ts _ _ _ _ _ _ Hlast) in Hgt. lia. }
    destruct (rec_some s t Tc v Hi Ht HT) as (Hb & Hsl & Hfl').
    rewrite Hb, Hsl. cbn [fst snd].
    set (p1 := p_pwb cline (pm s) t (xts t (negb (lastb T)))).
    set (p2 := p_pwb cline p1 t (xw1 t (negb (lastb T)))).
    assert (Hwf2 : p_wf p2) by (apply p_pwb_wf, p_pwb_wf, (i_wf _ _ _ Hi)).
    assert (Hwf3 : p_wf (p_fence p2 t)) by (by apply p_fence_wf).
    assert (Ha : ∀ u, agrees (pm s) (p_fence p2 t) u).
    { intros u. eapply agrees_trans; [apply agrees_pwb|]. eapply agrees_trans; [apply agrees_pwb | apply agrees_fence]. }
    apply (inv_thread s _ t); cbn [setth pm clock att th]; try done;
      [rewrite nlines_fence; apply (i_nl _ _ _ Hi) | apply (i_att _ _ _ Hi) | apply (i_nodup _ _ _ Hi) | |].
    - intros u Hu. rewrite upd_ne by done. split_and!; [done | done |].
      eapply keeps_trans; [apply keeps_pwb|]. eapply keeps_trans; [apply keeps_pwb | by apply keeps_fence].
    - rewrite upd_eq. assert (HT' : tgt_some (p_fence p2 t) (att s) t T Tc v) by (eapply tgt_some_agree; eauto).
      constructor; cbn [fl lastts lastb lastv rets pc effv kk]; try done.
      + eapply (lastok_agree cr); [exact Hwf3 | | done]. intros L HL. apply (Ha t).
        destruct HL as [-> | ->]; [apply own_LA | apply LW1_own].
      + right. by exists Tc, v.
      + intros v' [Hv'|Hv'%elem_of_list_singleton]%elem_of_app; [by apply Hrets | subst v'].
        exists Tc. by destruct HT as (? & _ & _ & _ & ? & _).
      + unfold pcok. cbn [pc lastb effv]. split_and!; [done | done | |].
        * left. apply dur_fence_pwb; [done | rewrite (nlines_pwb cline), (nlines_pwb cline); by apply (lines_lt s t (negb (lastb T))) |].
          subst p2 p1. right. rewrite !(hist_pwb cline). rewrite <- (cline_xts t). apply pwb_in.
        * intros v' He. unfold pcok in Hpc0. rewrite Hpc in Hpc0. destruct (Hpc0 v' He) as [[Tc' HT2] _].
          destruct (tgt_some_unique cr _ _ _ _ _ _ _ _ (i_nodup _ _ _ Hi) HT HT2) as [_ ->].
          split; [done|]. apply dur_fence_pwb; [done | rewrite (nlines_pwb cline), (nlines_pwb cline); by apply (lines_lt s t (negb (lastb T))) |].
          subst p2 p1. right. rewrite !(hist_pwb cline). rewrite <- (cline_xts t). apply pwb_in.
  Qed.

  Lemma step_own s t p' T' : inv s → t < N → p_wf p' → nlines p' = 5 * N →
    (∀ u, u ≠ t → agrees (pm s) p' u ∧ keeps_pwbs (pm s) p' u) → tinv p' (clock s) (att s) t T' →
    inv (St p' (clock s) (upd (th s) t T') (att s)).
  Proof.
    intros Hi Ht Hwf Hnl Ho Htt. apply (inv_thread s _ t); cbn [pm clock att th]; try done;
      [apply (i_att _ _ _ Hi) | apply (i_nodup _ _ _ Hi) | | by rewrite upd_eq].
    intros u Hu. rewrite upd_ne by done. destruct (Ho u Hu). done.
  Qed.

  Lemma lastok_write s t b L w : inv s → t < N → L ≠ LA t b → L ≠ LW1 t b →
    lastok (pm s) t b (lastts (th s t)) (lastv (th s t)) → b = lastb (th s t) →
    lastok (p_write (pm s) L w) t b (lastts (th s t)) (lastv (th s t)).
  Proof.
    intros Hi Ht H1 H2 Hl ->. eapply (lastok_agree cr); [apply p_write_wf, (i_wf _ _ _ Hi) | | done].
    intros L' [-> | ->]; rewrite mk_write, hist_write_other; auto.
  Qed.

  Lemma step_3a s t b v : inv s → t < N → pc (th s t) = P3a b v →
    inv (setth (setpm s (p_store cline (pm s) (xw0 t b) v.1)) t (with_pc (th s t) (P3b b v))).
  Proof.
    intros Hi Ht Hpc. ti Hi t. set (T := th s t) in *.
    unfold pcok in Hpc0. rewrite Hpc in Hpc0. destruct Hpc0 as (-> & Hn & He).
    unfold setth, setpm, p_store. cbn [pm clock att th]. rewrite cline_xw0.
    destruct (lines_lt s t (negb (lastb T)) Hi Ht) as (HLA & _). destruct (diff_lines cr t (lastb T)) as (D1 & D2 & D3 & D4).
    apply step_own; [done | done | apply p_write_wf, (i_wf _ _ _ Hi) | rewrite nlines_write; apply (i_nl _ _ _ Hi) | |].
    - intros u Hu. split; [apply agrees_write, not_own_LA, Hu | apply keeps_write].
    - assert (Hn' : tgt_none (p_write (pm s) (LA t (negb (lastb T))) [(xw0 t (negb (lastb T)), v.1)]) t T).
      { unfold tgt_none in *. rewrite hist_write_same by done. apply tsw_app. split; [done | apply tsw_other; lines]. }
      constructor; cbn [with_pc fl lastts lastb lastv rets pc effv kk]; try done.
      + by apply lastok_write.
      + by left.
      + unfold pcok. cbn [pc lastb effv with_pc]. split_and!; try done.
        unfold rd_vis. rewrite cline_xw0, hist_write_same by done. rewrite seq_val_snoc1, decide_True; done.
  Qed.

  Lemma step_3b s t b v : inv s → t < N → pc (th s t) = P3b b v →
    inv (setth (setpm s (p_store cline (pm s) (xw1 t b) v.2)) t (with_pc (th s t) (P4 b v))).
  Proof.
    intros Hi Ht Hpc. ti Hi t. set (T := th s t) in *.
    unfold pcok in Hpc0. rewrite Hpc in Hpc0. destruct Hpc0 as (-> & Hn & He & Hw0).
    unfold setth, setpm, p_store. cbn [pm clock att th]. rewrite cline_xw1.
    destruct (lines_lt s t (negb (lastb T)) Hi Ht) as (HLA & HLW & _). destruct (diff_lines cr t (lastb T)) as (D1 & D2 & D3 & D4).
    set (p' := p_write (pm s) (LW1 t (negb (lastb T))) [(xw1 t (negb (lastb T)), v.2)]).
    assert (HA : hist p' (LA t (negb (lastb T))) = hist (pm s) (LA t (negb (lastb T))) ∨
                 hist p' (LA t (negb (lastb T))) = hist (pm s) (LA t (negb (lastb T))) ++ [[(xw1 t (negb (lastb T)), v.2)]]).
    { subst p'. rewrite hist_write by done. case_decide as E; [right; by rewrite E | by left]. }
    apply step_own; [done | done | apply p_write_wf, (i_wf _ _ _ Hi) | unfold p'; rewrite nlines_write; apply (i_nl _ _ _ Hi) | |].
    - intros u Hu. split; [apply agrees_write, not_own_LW1, Hu | apply keeps_write].
    - assert (Hn' : tgt_none p' t T).
      { unfold tgt_none in *. destruct HA as [-> | ->]; [done|]. apply tsw_app. split; [done | apply tsw_other; apply not_eq_sym, (xw1_ts cr)]. }
      constructor; cbn [with_pc fl lastts lastb lastv rets pc effv kk]; try done.
      + by apply lastok_write.
      + by left.
      + unfold pcok. cbn [pc lastb effv with_pc]. split_and!; try done.
        * unfold rd_vis in *. rewrite cline_xw0 in *. destruct HA as [-> | ->]; [done|].
          rewrite seq_val_snoc1, decide_False; [done | apply (xw1_w0 cr)].
        * unfold rd_vis. rewrite cline_xw1. subst p'. rewrite hist_write_same by done.
          rewrite seq_val_snoc1, decide_True; done.
  Qed.

  Lemma step_4 s t b v : inv s → t < N → pc (th s t) = P4 b v →
    inv (setth (setpm s (if cross cfg && c4 cfg
                         then p_fence (p_pwb cline (p_pwb cline (pm s) t (xw0 t b)) t (xw1 t b)) t
                         else pm s)) t (with_pc (th s t) (P5 b v))).
  Proof.
    intros Hi Ht Hpc. ti Hi t. set (T := th s t) in *.
    unfold pcok in Hpc0. rewrite Hpc in Hpc0. destruct Hpc0 as (-> & Hn & He & Hw0 & Hw1).
    unfold setth, setpm. cbn [pm clock att th cross c4 fixed].
    destruct (lines_lt s t (negb (lastb T)) Hi Ht) as (HLA & HLW & HLB & _).
    destruct (cr && true) eqn:Hcr.
    - apply andb_true_iff in Hcr as [Hcr _].
      set (p2 := p_pwb cline (p_pwb cline (pm s) t (xw0 t (negb (lastb T)))) t (xw1 t (negb (lastb T)))).
      assert (Hwf2 : p_wf p2) by (apply p_pwb_wf, p_pwb_wf, (i_wf _ _ _ Hi)).
      assert (Hwf3 : p_wf (p_fence p2 t)) by (by apply p_fence_wf).
      assert (Ha : ∀ u, agrees (pm s) (p_fence p2 t) u).
      { intros u. eapply agrees_trans; [apply agrees_pwb|]. eapply agrees_trans; [apply agrees_pwb | apply agrees_fence]. }
      apply step_own; [done | done | done | rewrite nlines_fence; apply (i_nl _ _ _ Hi) | |].
      + intros u Hu. split; [done|].
        eapply keeps_trans; [apply keeps_pwb|]. eapply keeps_trans; [apply keeps_pwb | by apply keeps_fence].
      + constructor; cbn [with_pc fl lastts lastb lastv rets pc effv kk]; try done.
        * eapply (lastok_agree cr); [exact Hwf3 | | done]. intros L HL. apply (Ha t).
          destruct HL as [-> | ->]; [apply own_LA | apply LW1_own].
        * left. by eapply tgt_none_agree.
        * unfold pcok. cbn [pc lastb effv with_pc]. split_and!; try done.
          -- by eapply tgt_none_agree.
          -- rewrite (rd_vis_agree (pm s) _ t); [done | done | apply own_xw0].
          -- rewrite (rd_vis_agree (pm s) _ t); [done | done | apply own_xw1].
          -- intros _. assert (HB : LB t (negb (lastb T)) = cline (xw1 t (negb (lastb T)))).
             { rewrite cline_xw1. unfold LW1. by rewrite Hcr. }
             rewrite HB. apply dur_fence_pwb; [done | rewrite <- HB; exact HLB | exact (pwb_in cline (p_pwb cline (pm s) t (xw0 t (negb (lastb T)))) t _)].
    - assert (Hcr' : cr = false) by (by destruct cr).
      apply step_own; [done | done | apply (i_wf _ _ _ Hi) | apply (i_nl _ _ _ Hi) | |].
      + intros u Hu. split; [apply agrees_refl | apply keeps_refl].
      + constructor; cbn [with_pc fl lastts lastb lastv rets pc effv kk]; try done.
        unfold pcok. cbn [pc lastb effv with_pc]. split_and!; try done. intros Hc. congruence.
  Qed.

  Lemma step_5 s t b v : inv s → t < N → pc (th s t) = P5 b v →
    let T := th s t in
    inv (St (p_pwb cline (p_store cline (pm s) (xts t b) (clock s)) t (xts t b)) (S (clock s))
            (upd (th s) t (TS (PRet b (clock s) v) (kk T) (fl T) (lastb T) (lastts T) (lastv T)
                              (rets T ++ [v]) (effv T)))
            (att s ++ [(t, kk T, clock s, v)])).
  Proof.
    intros Hi Ht Hpc T. ti Hi t. fold T in Hfl, Hlf, Hl0, Hlast, Htg, Hrets, Hpc0, Hpc.
    unfold pcok in Hpc0. rewrite Hpc in Hpc0. destruct Hpc0 as (-> & Hn & He & Hw0 & Hw1 & HdB).
    unfold p_store. rewrite cline_xts.
    destruct (lines_lt s t (negb (lastb T)) Hi Ht) as (HLA & HLW & HLB & _). destruct (diff_lines cr t (lastb T)) as (D1 & D2 & D3 & D4).
    set (tb := negb (lastb T)) in *.
    set (p1 := p_write (pm s) (LA t tb) [(xts t tb, clock s)]).
    set (p' := p_pwb cline p1 t (xts t tb)).
    set (A' := att s ++ [(t, kk T, clock s, v)]).
    assert (Hwf' : p_wf p') by (apply p_pwb_wf, p_write_wf, (i_wf _ _ _ Hi)).
    assert (HhA : hist p' (LA t tb) = hist (pm s) (LA t tb) ++ [[(xts t tb, clock s)]]).
    { unfold p', p1. rewrite (hist_pwb cline). by apply hist_write_same. }
    assert (Hoth : ∀ L, L ≠ LA t tb → hist p' L = hist (pm s) L ∧ mk (pm s) L ≤ mk p' L).
    { intros L HL. unfold p', p1. rewrite (hist_pwb cline), (mk_pwb cline), mk_write, hist_write_other by done. done. }
    assert (HA' : ∀ e, e ∈ att s → e ∈ A') by (intros e He'; apply elem_of_app; by left).
    assert (Hin : (t, kk T, clock s, v) ∈ A') by (apply elem_of_app; right; by left).
    assert (HT : tgt_some p' A' t T (clock s) v).
    { exists (hist (pm s) (LA t tb)). split_and!; try done.
      - unfold rd_vis in Hw0. by rewrite cline_xw0 in Hw0.
      - apply (w1ok_of (pm s) p' t tb v.2 (clock s)); try done.
        intros _. apply Hoth. subst tb. lines. }
    apply (inv_thread s _ t); cbn [pm clock att th]; try done.
    - unfold p', p1. rewrite (nlines_pwb cline), nlines_write. apply (i_nl _ _ _ Hi).
    - unfold A'. intros e [He'|He'%elem_of_list_singleton]%elem_of_app; [pose proof (i_att _ _ _ Hi e He'); lia | subst e; simpl; lia].
    - unfold A'. rewrite fmap_app. apply NoDup_app. split_and!; [apply (i_nodup _ _ _ Hi) | | apply NoDup_singleton].
      intros x Hx Hx'. simpl in Hx'. apply elem_of_list_singleton in Hx'. subst x.
      apply elem_of_list_fmap in Hx as (e & He1 & He2). pose proof (i_att _ _ _ Hi e He2). lia.
    - lia.
    - intros u Hu. rewrite upd_ne by done. split_and!; [done | |].
      + eapply agrees_trans; [apply agrees_write, not_own_LA, Hu | apply agrees_pwb].
      + eapply keeps_trans; [apply keeps_write | apply keeps_pwb].
    - rewrite upd_eq. constructor; cbn [fl lastts lastb lastv rets pc effv kk]; try done; try lia.
      + eapply (lastok_agree cr); [exact Hwf' | | done]. intros L [-> | ->]; apply Hoth; done.
      + right. by exists (clock s), v.
      + intros v' [Hv'|Hv'%elem_of_list_singleton]%elem_of_app; [| subst v'; by exists (clock s)].
        destruct (Hrets v' Hv') as [Tc HTc]. exists Tc. by apply HA'.
      + unfold pcok. cbn [pc lastb effv]. split_and!; [done | done | |].
        * right. rewrite <- (cline_xts t). exact (pwb_in cline p1 t (xts t tb)).
        * intros v' Hv'. rewrite He in Hv'. discriminate.
  Qed.

  Lemma step_eff s t b T0 v : inv s → t < N → pc (th s t) = PRet b T0 v →
    let T := th s t in
    inv (setth (setpm s (p_store cline (if cfe cfg then p_fence (pm s) t else pm s) (xeff t) (S (kk T)))) t
               (TS (PEff b T0 v) (kk T) (fl T) (lastb T) (lastts T) (lastv T) (rets T) (Some v))).
  Proof.
    intros Hi Ht Hpc T. ti Hi t. fold T in Hfl, Hlf, Hl0, Hlast, Htg, Hrets, Hpc0, Hpc.
    unfold pcok in Hpc0. rewrite Hpc in Hpc0. destruct Hpc0 as (-> & HT & Hdp & Hev).
    unfold setth, setpm, p_store. cbn [pm clock att th cfe fixed]. rewrite cline_xeff.
    destruct (lines_lt s t (negb (lastb T)) Hi Ht) as (HLA & HLW & HLB & HLE).
    set (tb := negb (lastb T)) in *.
    set (p' := p_write (p_fence (pm s) t) (LE t) [(xeff t, S (kk T))]).
    assert (Hwf' : p_wf p') by (apply p_write_wf, p_fence_wf, (i_wf _ _ _ Hi)).
    assert (Ha : ∀ u, agrees (pm s) p' u) by (intros u; eapply agrees_trans; [apply agrees_fence | apply agrees_write, not_own_LE]).
    apply step_own; [done | done | done | unfold p'; rewrite nlines_write, nlines_fence; apply (i_nl _ _ _ Hi) | |].
    - intros u Hu. split; [done | eapply keeps_trans; [by apply keeps_fence | apply keeps_write]].
    - constructor; cbn [fl lastts lastb lastv rets pc effv kk]; try done.
      + eapply (lastok_agree cr); [exact Hwf' | | done]. intros L HL. apply (Ha t).
        destruct HL as [-> | ->]; [apply own_LA | apply LW1_own].
      + right. exists T0, v. by eapply tgt_some_agree.
      + unfold pcok. cbn [pc lastb effv]. split_and!; [done | by eapply tgt_some_agree | |done].
        apply dur_write_other; [lines|]. destruct Hdp as [Hd | Hpw].
        * apply dur_fence; [apply (i_wf _ _ _ Hi) | done].
        * apply dur_fence_pwb; [apply (i_wf _ _ _ Hi) | done | done].
  Qed.

  Lemma step_commit s t b T0 v : inv s → t < N → pc (th s t) = PEff b T0 v →
    let T := th s t in
    inv (St (p_fence (pm s) t) (S (clock s)) (upd (th s) t (TS PIdle (S (kk T)) (clock s) b T0 v [] None)) (att s)).
  Proof.
    intros Hi Ht Hpc T. ti Hi t. fold T in Hfl, Hlf, Hl0, Hlast, Htg, Hrets, Hpc0, Hpc.
    unfold pcok in Hpc0. rewrite Hpc in Hpc0. destruct Hpc0 as (-> & HT & Hd & Hev).
    destruct (latest_some (pm s) (clock s) (att s) t T T0 v) as [_ Hsl];
      [apply (i_wf _ _ _ Hi) | apply (i_nl _ _ _ Hi) | done | by apply (i_th _ _ _ Hi) | done |].
    pose proof HT as (H & Hh & Hts & Hfl0 & Hat & _ & Hw1).
    pose proof (i_att _ _ _ Hi _ Hat) as HT0. simpl in HT0.
    set (tb := negb (lastb T)) in *.
    assert (Hwf' : p_wf (p_fence (pm s) t)) by (apply p_fence_wf, (i_wf _ _ _ Hi)).
    assert (Ha : ∀ u, agrees (pm s) (p_fence (pm s) t) u) by (intros; apply agrees_fence).
    apply (inv_thread s _ t); cbn [pm clock att th]; try done.
    - rewrite nlines_fence. apply (i_nl _ _ _ Hi).
    - intros e He. pose proof (i_att _ _ _ Hi e He). lia.
    - apply (i_nodup _ _ _ Hi).
    - lia.
    - intros u Hu. rewrite upd_ne by done. split_and!; [done | done | by apply keeps_fence].
    - rewrite upd_eq. unfold slot_of in Hsl. injection Hsl as Hts0 Hwv.
      constructor; cbn [fl lastts lastb lastv rets pc effv kk]; try done; try lia.
      + constructor.
        * apply dur_fence; [apply (i_wf _ _ _ Hi) | done].
        * apply dur_fence; [apply (i_wf _ _ _ Hi) | by eapply w1ok_dur].
        * rewrite (rd_vis_agree (pm s) _ t); [done | done | apply own_xts].
        * rewrite (rd_vis_agree (pm s) _ t); [by rewrite <- Hwv | done | apply own_xw0].
        * rewrite (rd_vis_agree (pm s) _ t); [by rewrite <- Hwv | done | apply own_xw1].
        * rewrite hist_fence, Hh. apply tsw_app. split; [| by apply tsw_one].
          eapply tsw_impl; [| exact Hts]. simpl. intros; lia.
      + left. unfold tgt_none. cbn [lastb lastts]. subst tb. rewrite negb_involutive, hist_fence.
        eapply tsw_impl; [| apply (l_old _ _ _ _ _ _ Hlast)]. simpl. intros; lia.
      + intros v' Hv'. by apply elem_of_nil in Hv'.
      + unfold pcok. cbn [pc lastb effv rets]. split_and!; [| done | done].
        unfold tgt_none. cbn [lastb lastts]. subst tb. rewrite negb_involutive, hist_fence.
        eapply tsw_impl; [| apply (l_old _ _ _ _ _ _ Hlast)]. simpl. intros; lia.
  Qed.

  Lemma step_tcrash s t : inv s → t < N →
    inv (setth (setpm s (drop_pwbs (pm s) t)) t (with_pc (th s t) (crash_pc (pc (th s t))))).
  Proof.
    intros Hi Ht. ti Hi t. set (T := th s t) in *.
    assert (Hwf' : p_wf (drop_pwbs (pm s) t)) by (apply drop_wf, (i_wf _ _ _ Hi)).
    assert (Ha : agrees (pm s) (drop_pwbs (pm s) t) t) by apply agrees_drop.
    unfold setth, setpm. cbn [pm clock att th]. apply step_own; [done | done | done | apply (i_nl _ _ _ Hi) | |].
    - intros u Hu. split; [apply agrees_drop | by apply keeps_drop].
    - constructor; cbn [with_pc fl lastts lastb lastv rets pc effv kk]; try done.
      + eapply (lastok_agree cr); [exact Hwf' | | done]. intros L HL. apply Ha.
        destruct HL as [-> | ->]; [apply own_LA | apply LW1_own].
      + unfold pcok. cbn [with_pc pc effv lastb]. destruct (pc T) eqn:E; cbn [crash_pc].
        1: { unfold pcok in Hpc. rewrite E in Hpc. destruct Hpc as (Hn & Hr & He). split_and!; [by eapply tgt_none_agree | done | done]. }
        all: intros v' Hv; destruct (effv_tgt cr _ _ _ _ _ Hpc Hv) as [[Tc HT] Hd];
            (split; [exists Tc; by eapply tgt_some_agree | eapply (dur_agree (pm s) _ t); [done | done | apply own_LA | done]]).
  Qed.

  Lemma crash_line p keep L : p_crash_ok p keep → L < nlines p → dur p L →
    hist (crash_mem p keep) L = hist p L ∧ mk p L ≤ mk (crash_mem p keep) L.
  Proof.
    intros Hok HL Hd. destruct (dur_crash p keep L Hok HL Hd) as [Hd' Hh]. split; [done|].
    rewrite crash_mk by done. destruct (Hok L HL). unfold mk. lia.
  Qed.

  Lemma tgt_some_crash p A u T Tc v keep : p_crash_ok p keep → nlines p = 5 * N → u < N →
    tgt_some p A u T Tc v → keep (LA u (negb (lastb T))) = length (hist p (LA u (negb (lastb T)))) →
    tgt_some (crash_mem p keep) A u T Tc v.
  Proof.
    intros Hok Hnl Hu (H & Hh & Hts & Hfl & Hat & Hw0 & Hw1) Hk.
    assert (HL : LA u (negb (lastb T)) < nlines p) by (rewrite Hnl; by apply LA_lt).
    exists H. split_and!; try done.
    - rewrite crash_hist, Hk, take_ge by done. done.
    - eapply w1ok_tr; [by apply crash_wf | | done]. intros _ Hd. apply crash_line; [done | rewrite Hnl; lines | done].
  Qed.

  Lemma tgt_crash p A u T keep : p_crash_ok p keep → nlines p = 5 * N → u < N →
    tgt_none p u T ∨ (∃ Tc v, tgt_some p A u T Tc v) →
    tgt_none (crash_mem p keep) u T ∨ (∃ Tc v, tgt_some (crash_mem p keep) A u T Tc v).
  Proof.
    intros Hok Hnl Hu Htg. assert (HL : LA u (negb (lastb T)) < nlines p) by (rewrite Hnl; by apply LA_lt).
    destruct (Hok _ HL) as [Hk1 Hk2]. fold (mk p (LA u (negb (lastb T)))) (hist p (LA u (negb (lastb T)))) in *.
    destruct Htg as [Hn | (Tc & v & HT)].
    - left. unfold tgt_none in *. rewrite crash_hist by done. by apply tsw_take.
    - destruct (decide (keep (LA u (negb (lastb T))) = length (hist p (LA u (negb (lastb T)))))) as [Hk|Hk].
      + right. exists Tc, v. by apply tgt_some_crash.
      + left. destruct HT as (H & Hh & Hts & _). unfold tgt_none. rewrite crash_hist by done.
        rewrite Hh, app_length in Hk, Hk2. simpl in Hk, Hk2. rewrite Hh, take_app_le by lia. by apply tsw_take.
  Qed.

  Lemma step_crash s keep : inv s → p_crash_ok (pm s) keep →
    inv (St (crash_mem (pm s) keep) (clock s) (λ u, with_pc (th s u) (crash_pc (pc (th s u)))) (att s)).
  Proof.
    intros Hi Hok. pose proof (i_nl _ _ _ Hi) as Hnl.
    constructor; cbn [pm clock att th]; [by apply crash_wf | by rewrite crash_nlines | apply (i_att _ _ _ Hi) | apply (i_nodup _ _ _ Hi) |].
    intros u Hu. ti Hi u. set (T := th s u) in *.
    assert (Hwf' : p_wf (crash_mem (pm s) keep)) by (by apply crash_wf).
    constructor; cbn [with_pc fl lastts lastb lastv rets pc effv kk]; try done.
    - eapply (lastok_agree cr); [exact Hwf' | | done]. intros L HL. apply crash_line; [done | |].
      + rewrite Hnl. destruct HL as [-> | ->]; [by apply LA_lt | by apply LW1_lt].
      + destruct HL as [-> | ->]; [apply (l_durA _ _ _ _ _ _ Hlast) | apply (l_durW _ _ _ _ _ _ Hlast)].
    - by apply tgt_crash.
    - unfold pcok. cbn [with_pc pc effv lastb]. destruct (pc T) eqn:E; cbn [crash_pc].
      1: { unfold pcok in Hpc. rewrite E in Hpc. destruct Hpc as (Hn & Hr & He). split_and!; [| done | done].
        unfold tgt_none in *. rewrite crash_hist by (rewrite Hnl; by apply LA_lt). by apply tsw_take. }
      all: intros v' Hv; destruct (effv_tgt cr _ _ _ _ _ Hpc Hv) as [[Tc HT] Hd].
        all: assert (HL : LA u (negb (lastb T)) < nlines (pm s)) by (rewrite Hnl; by apply LA_lt).
        all: split; [exists Tc; apply tgt_some_crash; [done | done | done | done |] | apply (proj1 (dur_crash _ _ _ Hok HL Hd))].
        all: cbn [with_pc lastb]; destruct (Hok _ HL); unfold dur in Hd; unfold mk, hist in *; lia.
  Qed.

  Lemma step_inv s s' : inv s → step s s' → inv s'.
  Proof.
    intros Hi Hs. destruct Hs.
    - by apply step_start.
    - by apply step_rechit.
    - by apply step_recmiss.
    - by apply step_3a.
    - by apply step_3b.
    - by apply step_4.
    - by apply step_5.
    - by apply step_eff.
    - by apply step_commit.
    - by apply step_tcrash.
    - by apply step_crash.
  Qed.

  Lemma reachable_inv s : reachable s → inv s.
  Proof.
    unfold reachable. intros Hr. assert (∀ s1 s2, rtc step s1 s2 → inv s1 → inv s2) as Hgen.
    { intros s1 s2 H. induction H as [| s1 s1' s2 Hs _ IH]; [done |]. intros Hi. apply IH. by eapply step_inv. }
    apply (Hgen (init N)); [done | apply inv_init].
  Qed.
End proofs3.

(** ** Theorems *)
Section theorems.
  Context (N : nat) (cr : bool).
  Notation cfg := (fixed cr).
  Notation step := (step N cfg).
  Notation reachable := (reachable N cfg).
  Notation recovered := (recovered cfg).
  Notation inv := (inv N cr).

  (** (a) After any crash, the slot recovery reads is whole: in every crash
      image Px86 allows of every reachable state, thread [u]'s latest slot
      holds the timestamp and value of its last completed checkpoint, or the
      timestamp and value of one attempt (step ⑤) of its in-flight
      checkpoint, never a torn or mixed one; and once the root operation
      wrote after the checkpoint with value [v] ([effv]), every image holds
      [v]. *)
  Theorem ckpt_px_recovery_image s u keep : reachable s → u < N → p_crash_ok (pm s) keep →
    let T := th s u in
    (recovered (rd_img (pm s) keep) u = (lastts T, lastv T) ∨
     ∃ Tc v, (u, kk T, Tc, v) ∈ att s ∧ recovered (rd_img (pm s) keep) u = (Tc, v)) ∧
    (∀ v, effv T = Some v → ∃ Tc, (u, kk T, Tc, v) ∈ att s ∧ recovered (rd_img (pm s) keep) u = (Tc, v)).
  Proof.
    intros Hr Hu Hok T. pose proof (reachable_inv N cr s Hr) as Hi.
    apply (tinv_image N cr (pm s) (clock s)); try done;
      [apply (i_wf _ _ _ Hi) | apply (i_nl _ _ _ Hi) | apply (i_nodup _ _ _ Hi) | by apply (i_th _ _ _ Hi)].
  Qed.

  (** (b) Detectability: every value a checkpoint returns (normal path or
      recovery, after any number of crashes) is the whole value of an
      attempt of that invocation; once the root operation used the value
      [v], the attempt's timestamp is in the memento's history under its
      line's mark, so every crash image keeps it and recovery returns [v]. *)
  Theorem ckpt_px_detectable s u : reachable s → u < N →
    let T := th s u in
    (∀ v, v ∈ rets T → ∃ Tc, (u, kk T, Tc, v) ∈ att s) ∧
    (∀ v, effv T = Some v → ∃ Tc b, (u, kk T, Tc, v) ∈ att s ∧
       [(xts u b, Tc)] ∈ hist (pm s) (LA u b) ∧ dur (pm s) (LA u b) ∧
       ∀ keep, p_crash_ok (pm s) keep → recovered (rd_img (pm s) keep) u = (Tc, v)).
  Proof.
    intros Hr Hu T. subst T. pose proof (reachable_inv N cr s Hr) as Hi.
    pose proof (i_th _ _ _ Hi u Hu) as Ht. split; [apply (t_rets _ _ _ _ _ _ Ht)|].
    intros v Hv. destruct (effv_tgt cr _ _ _ _ _ (t_pc _ _ _ _ _ _ Ht) Hv) as [[Tc HT] Hd].
    exists Tc, (negb (lastb (th s u))). pose proof HT as (H & Hh & _ & _ & Hat & _).
    split_and!; [done | rewrite Hh; apply elem_of_app; right; by left | done |].
    intros keep Hok. pose proof (i_nl _ _ _ Hi) as Hnl.
    assert (HL : LA u (negb (lastb (th s u))) < nlines (pm s)) by (rewrite Hnl; by apply LA_lt).
    assert (Hk : keep (LA u (negb (lastb (th s u)))) = length (hist (pm s) (LA u (negb (lastb (th s u)))))).
    { destruct (Hok _ HL). unfold dur in Hd. unfold mk, hist in *. lia. }
    destruct (tgt_some_read N cr (pm s) (att s) u (th s u) Tc v keep Hok Hu Hnl HT Hk) as [Hs _].
    unfold recovered. rewrite (latest_tgt _ u (lastb (th s u))); [done|].
    unfold slot_of in Hs. injection Hs as Hts _. rewrite Hts.
    pose proof (t_last _ _ _ _ _ _ Ht) as Hl.
    rewrite rd_img_dur; [| done | rewrite cline_xts; rewrite Hnl; by apply LA_lt | rewrite cline_xts; apply (l_durA _ _ _ _ _ _ Hl)].
    rewrite (l_ts _ _ _ _ _ _ Hl). destruct HT as (? & _ & _ & ? & _). pose proof (t_last_fl _ _ _ _ _ _ Ht). lia.
  Qed.
End theorems.

Section theorems2.
  Context (N : nat) (cr : bool).
  Notation cfg := (fixed cr).
  Notation step := (step N cfg).
  Notation reachable := (reachable N cfg).
  Notation inv := (inv N cr).

  Lemma snoc_neq {A} (l : list A) x : l ≠ l ++ [x].
  Proof. intros H. apply (f_equal length) in H. rewrite app_length in H. simpl in H. lia. Qed.

  (** (c) Stability: once the root operation wrote after the checkpoint
      with value [v] ([effv]), every later return of the invocation — by
      any step, in particular a recovery after any crash — returns [v]. *)
  Theorem ckpt_px_stable s s' u v v' : reachable s → step s s' → u < N →
    effv (th s u) = Some v → rets (th s' u) = rets (th s u) ++ [v'] → v' = v.
  Proof.
    intros Hr Hs Hu Hv Hret. pose proof (reachable_inv N cr s Hr) as Hi.
    pose proof (i_th _ _ _ Hi u Hu) as Ht.
    destruct Hs; cbn [setth setpm th with_pc rets] in Hret; unfold upd in Hret;
      try (destruct (decide (u = t)) as [->|Hne]; cbn [with_pc rets] in Hret); try by (exfalso; by eapply snoc_neq).
    - (* SRecHit *)
      apply app_inj_tail in Hret as [_ <-].
      destruct (effv_tgt cr _ _ _ _ _ (t_pc _ _ _ _ _ _ Ht) Hv) as [[Tc HT] _].
      destruct (rec_some N cr s t Tc v Hi H HT) as (Hb & Hsl & _). subst sl b. rewrite Hb, Hsl. done.
    - (* S5: no return while the root operation's write is done *)
      exfalso. pose proof (t_pc _ _ _ _ _ _ Ht) as Hp. unfold pcok in Hp. rewrite H0 in Hp.
      destruct Hp as (_ & _ & He & _). congruence.
    - (* SCommit *) exfalso. by apply app_cons_not_nil in Hret.
  Qed.

  Lemma cur_write s u b i w Tc : inv s → u < N →
    hist (pm s) (LA u b) !! i = Some w → (xts u b, Tc) ∈ w → fl (th s u) < Tc →
    b = negb (lastb (th s u)) ∧ S i = length (hist (pm s) (LA u b)) ∧ w = [(xts u b, Tc)].
  Proof.
    intros Hi Hu Hw Hin Hlt. pose proof (i_th _ _ _ Hi u Hu) as Ht.
    pose proof (t_last_fl _ _ _ _ _ _ Ht) as Hlf.
    destruct (decide (b = lastb (th s u))) as [->|Hne].
    - exfalso. pose proof (l_old _ _ _ _ _ _ (t_last _ _ _ _ _ _ Ht) w Tc (elem_of_list_lookup_2 _ _ _ Hw) Hin). cbv beta in *. lia.
    - assert (b = negb (lastb (th s u))) as -> by (destruct b, (lastb (th s u)); done).
      destruct (t_tgt _ _ _ _ _ _ Ht) as [Hn | (Tc0 & v & H & Hh & Hts & Hfl0 & _)].
      + exfalso. pose proof (Hn w Tc (elem_of_list_lookup_2 _ _ _ Hw) Hin). cbv beta in *. lia.
      + rewrite Hh in Hw |- *. rewrite app_length. simpl.
        destruct (decide (i < length H)) as [Hi'|Hi'].
        * exfalso. rewrite lookup_app_l in Hw by done. pose proof (Hts w Tc (elem_of_list_lookup_2 _ _ _ Hw) Hin). cbv beta in *. lia.
        * rewrite lookup_app_r in Hw by lia. apply list_lookup_singleton_Some in Hw as [Hi0 <-].
          apply elem_of_list_singleton in Hin. injection Hin as ->. split_and!; [done | lia | done].
  Qed.

  (** (d) At most once: at most one timestamp write of the in-flight
      invocation (newer than the committed floor) is in thread [u]'s memento
      lines. *)
  Theorem ckpt_px_at_most_once s u b b' i i' w w' Tc Tc' : reachable s → u < N →
    hist (pm s) (LA u b) !! i = Some w → (xts u b, Tc) ∈ w → fl (th s u) < Tc →
    hist (pm s) (LA u b') !! i' = Some w' → (xts u b', Tc') ∈ w' → fl (th s u) < Tc' →
    b = b' ∧ i = i' ∧ Tc = Tc'.
  Proof.
    intros Hr Hu Hw Hin Hlt Hw' Hin' Hlt'. pose proof (reachable_inv N cr s Hr) as Hi.
    destruct (cur_write s u b i w Tc Hi Hu Hw Hin Hlt) as (-> & Hl & ->).
    destruct (cur_write s u b' i' w' Tc' Hi Hu Hw' Hin' Hlt') as (-> & Hl' & ->).
    assert (i = i') as <- by lia. rewrite Hw in Hw'. injection Hw' as ->. done.
  Qed.
End theorems2.

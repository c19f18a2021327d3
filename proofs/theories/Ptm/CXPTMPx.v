(** * CX-PTM on Px86's line-granular persistence: durable image, completed updates durable

    A model of CX-PTM's persistence (seed paper §4, CX's [applyUpdate]
    steps 1–6 and "Adding persistence to CX") founded on
    [Core/PxPersist.v]: [curComb] is one 8-byte word (ticket [TK] and
    replica index [IDX], [sti::pack]) alone in line 0; replica [r]'s region
    is line [r + 1], a location [OBJ r]; a write persists for sure only
    through a [pwb] its thread later fences, and a crash ([x_crash]) keeps
    of every line any prefix at least as long as its mark ([p_crash_ok]:
    every image Px86 allows).  It justifies [DurableImageConsistent] and
    [CompletedDurable] of [specs/ptm/CXPTM.tla] and the order of
    [Cx::update_on], [Cx::install] and [Cx::ensure_durable] in
    [impl/perdure-ptm/src/cx/core.rs], for any number of threads, any
    number [NR] of replicas (the seed has 2N) and any number of crashes.
    For persistence it supersedes [CXPTM.v], which takes a replica
    installed by the CAS to be persisted and so cannot state the mutants;
    [CXPTM.v] keeps the queue order, the results and the replicas'
    contents, which this model abstracts.

    A replica's content is written as the ticket of the last queue node
    applied to it: [CXPTM.v] ([cx_applied_in_order]) proves that a replica
    holds the sequential application of a prefix of the queue, so the
    ticket determines it.  A replica is consistent in a crash image when
    the ticket its region's image holds is the ticket [curComb]'s image
    names.

    The steps ([xstep]), each atomic, each with the seed's step and the Rust
    function (file:function, all in [cx/core.rs] unless named) it abstracts:
    - [x_enqueue]: step 1, the node gets the next ticket ([Cx::publish]);
    - [x_lock]: step 2, a free Combined locked exclusively while
      [curComb]'s ticket is before the node ([Cx::lock_any] from
      [Cx::apply_update]);
    - [x_done]: [curComb]'s ticket at or past the node: another thread
      applied it ([Cx::apply_update]'s scan / [Cx::update_on]'s first test,
      then [Cx::collect]);
    - [x_apply]: steps 3–4, any write to the locked replica: a copy from
      [curComb]'s replica or the mutations from its head on ([F::copy_from],
      [F::run] in [Cx::update_on]);
    - [x_settle]: step 4's end, the replica holds the node's ticket
      ([c.update_head(my)], [F::settle]);
    - [x_pwbrep]: the replica's [pwb]s ([F::write_back], the seed's "flushed
      with corresponding calls to pwb before attempting to transition
      curComb"); with [fac] (mutant [CXFlushAfterCas], Rust
      [mutant!(CxFlushAfterCas)]) it comes after the CAS ([x_late]);
    - [x_fence]: step 5's downgrade and the [pfence] before the CAS
      ([Cx::update_on]: [c.lock.downgrade()], [self.pool.pfence()]);
    - [x_cas] / [x_cas_fail]: step 6, the CAS of [curComb] to the replica
      when [curComb]'s ticket is before the node, else give up the replica
      ([Cx::install]: [compare_exchange], or [break] then
      [c.lock.downgrade_unlock()] and [Cx::collect]); a CAS that fails
      because [curComb] moved is a re-read (one step here);
    - [x_pwbcc], [x_sync]: [pwb(curComb)], [psync] after the CAS
      ([Cx::install]: [self.pool.pwb(self.cur_comb_off, 8)],
      [self.pool.psync()]); with [nrp] (mutant [CXNoReturnPersist],
      [mutant!(CxNoSyncAfterCas)]) they do nothing;
    - [x_ret]: release the replaced Combined and return ([Cx::install]:
      [lc.lock.downgrade_unlock()], [retire_range], the result);
    - [x_fin], [x_finsync]: the exit of a thread that did not install:
      [pwb(curComb)], [psync], return ([Cx::collect] via
      [Cx::ensure_durable]); with [nrp] they do nothing but return;
    - [x_crash]: a full-system crash and null recovery: every line keeps an
      image Px86 allows, the image of [curComb] designates the replica that
      is the state, every other Combined is free, the queue starts again
      after [curComb]'s ticket, no thread is running, nothing is replayed
      ([cx/ptm.rs:CxPtm::open], [Cx::build]).

    Proved:
    - [cx_px_flush_after_cas_breaks_image] (mutant [CXFlushAfterCas], two
      replicas, one thread): an execution of 5 steps after which a crash
      image Px86 allows names replica 1 at ticket 1 while the replica's
      image is empty (TLA+ [DurableImageConsistent] fails);
    - [cx_px_no_return_persist_loses_completed] (mutant
      [CXNoReturnPersist]): an execution of 9 steps after which ticket 1
      returned and a crash image of [curComb] is at ticket 0 (TLA+
      [CompletedDurable] fails).

    Not proved yet (issue 20 §2 for CX-PTM, left open): that the model
    with both switches off keeps [DurableImageConsistent] (in every crash
    image, the replica [curComb]'s image designates holds the ticket it
    names) and [CompletedDurable] (a returned ticket is at or before every
    crash image's ticket).  The intended inductive invariant: [p_wf], the
    mark of line 0 at least 1, every [curComb] write a crash may keep names
    a held replica whose line is persisted in full and holds the write's
    ticket, every returned ticket at or before those writes' tickets, and
    per thread: a replica's write-back pending or covered before its CAS,
    and after a CAS or at [Cx::collect] a position of line 0 from which on
    every write names neither its replaced Combined nor a ticket before its
    own, with its [pwb(curComb)] pending or covered after the [pwb].
    Until it is proved, [CXPTM.v]'s [cx_returned_durable] (persistence
    taken as immediate) and TLC's runs of [specs/ptm/CXPTM.tla] are what
    stands for the fixed protocol.

    What the model abstracts:
    - the object: a replica's content is the ticket of the last node applied
      to it (the queue order, the mutations and the results are
      [CXPTM.v]'s); a replica region is one cache line (the argument is
      the same for many: every line written is written back before the
      fence); the node's result is not modelled;
    - the queue (tickets handed out in order), the turn queue's internals,
      hazard pointers and reclamation (they only force copies, which
      [x_apply] allows at any time), read-only transactions;
    - the locks: [XHeld] stands for the shared hold of the designated and
      the replaced Combined (the strong try-lock's internals are
      [StrongTryRWLock.v]'s); the bounded retry loops of [getCombined] and
      the CAS (each retry re-reads; the model reads and CASes in one step);
    - the durable watermark of [Cx::ensure_durable] (a shortcut that skips
      the [pwb]/[psync] once another thread's psync covered the ticket):
      the model always writes back and fences;
    - sequentially consistent steps (every shared write is a locked RMW or
      followed by the thread's fence before anything depends on it); a
      [pwb] records its line's length at issue and has taken effect by the
      thread's next fence ([PxPersist.v]'s reading);
    - durable linearizability of the histories (issue 20 §3) is not proved
      here; the witness pieces are: results of the queue order
      ([CXPTM.v]), completed updates durable and recovery to a consistent
      durable prefix (here);
    - liveness. *)
From stdpp Require Import base list decidable.
From Coq Require Import Lia.
From perdure.Core Require Import Px86 PxPersist.

(** ** Locations and lines *)

(** [curComb]'s ticket and replica index (one word, line 0), and replica
    [r]'s region (line [r + 1]). *)
Definition TK : nat := 0.
Definition IDX : nat := 1.
Definition OBJ (r : nat) : nat := S (S r).
Definition cline (x : nat) : nat := pred x.

Lemma mjoin_snoc_w (ws : list write) (w : write) : mjoin (ws ++ [w]) = mjoin ws ++ w.
Proof. induction ws as [|w' ws IH]; simpl; [by rewrite app_nil_r|]. by rewrite IH, app_assoc. Qed.

Lemma seq_val_snoc_w x ws w :
  seq_val x (ws ++ [w]) = foldl (λ acc st, if decide (st.1 = x) then st.2 else acc) (seq_val x ws) w.
Proof. unfold seq_val. by rewrite mjoin_snoc_w, foldl_app. Qed.

(** The ticket and index [curComb] shows after the first [n] writes of its
    line. *)
Definition ccl (h : list write) (n : nat) : nat * nat :=
  (seq_val TK (take n h), seq_val IDX (take n h)).

Lemma ccl_app h w n : n ≤ length h → ccl (h ++ [w]) n = ccl h n.
Proof. intros Hn. unfold ccl. by rewrite take_app_le. Qed.

Lemma ccl_snoc h a b : ccl (h ++ [[(TK, a); (IDX, b)]]) (S (length h)) = (a, b).
Proof.
  unfold ccl. rewrite take_ge by (rewrite app_length; simpl; lia).
  rewrite !seq_val_snoc_w. reflexivity.
Qed.

Lemma seq_val_obj ws r v : seq_val (OBJ r) (ws ++ [[(OBJ r, v)]]) = v.
Proof. rewrite seq_val_snoc_w. simpl. by rewrite decide_True. Qed.

(** ** Memory facts *)

Definition hist (p : pmem) (L : nat) : list write := line_hist (p_mem p) L.
Definition mk (p : pmem) (L : nat) : nat := mark (p_mem p) L.
Definition nlines (p : pmem) : nat := length (m_lines (p_mem p)).

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

Lemma nlines_write p L w : nlines (p_write p L w) = nlines p.
Proof. apply mem_write_lines. Qed.

Lemma mk_write p L w L' : mk (p_write p L w) L' = mk p L'.
Proof. done. Qed.

Lemma hist_fence p t L : hist (p_fence p t) L = hist p L.
Proof. apply p_fence_hist. Qed.

Lemma nlines_fence p t : nlines (p_fence p t) = nlines p.
Proof. unfold nlines, p_fence; simpl. by rewrite foldr_fence_lines. Qed.

Lemma mk_fence p t L : mk p L ≤ mk (p_fence p t) L.
Proof. apply p_fence_mark_mono. Qed.

Lemma wf_mk_le p L : p_wf p → mk p L ≤ length (hist p L).
Proof. intros (_ & H & _). apply H. Qed.

(** A write-back of [t] still pending, or covered by the mark. *)
Definition pending (p : pmem) (t L n : nat) : Prop := (t, L, n) ∈ p_pwbs p ∨ n ≤ mk p L.

Lemma pending_fence_own p t L n :
  p_wf p → L < nlines p → pending p t L n → n ≤ mk (p_fence p t) L.
Proof.
  intros Hwf HL [Hin | Hn]; [by apply p_fence_covers |].
  etrans; [exact Hn | apply mk_fence].
Qed.

Lemma pending_fence_any p t t' L n :
  p_wf p → L < nlines p → pending p t L n → pending (p_fence p t') t L n.
Proof.
  intros Hwf HL Hp. destruct (decide (t = t')) as [-> | Hne].
  - right. by apply pending_fence_own.
  - destruct Hp as [Hin | Hn].
    + left. unfold p_fence; simpl. apply elem_of_list_filter. done.
    + right. etrans; [exact Hn | apply mk_fence].
Qed.

Lemma pending_pwb p t t' x L n : pending p t L n → pending (p_pwb cline p t' x) t L n.
Proof. intros [Hin | Hn]; [left; by right | by right]. Qed.

Lemma pending_write p t L L' w n : pending p t L n → pending (p_write p L' w) t L n.
Proof. done. Qed.

(** ** The model *)

Inductive xlock := XFree | XOwned (t : nat) | XHeld.

Global Instance xlock_eq_dec : EqDecision xlock.
Proof. solve_decision. Defined.

(** Where a thread is: [my] its node's ticket, [r] the replica it holds
    exclusively, [o] the Combined it replaced and holds until its psync. *)
Inductive xpc :=
  | XIdle
  | XEnq (my : nat)
  | XApply (my r : nat)
  | XPwbRep (my r : nat)
  | XFence (my r : nat)
  | XCas (my r : nat)
  | XLate (my r o : nat)
  | XPwbCC (my o : nat)
  | XSync (my o : nat)
  | XRet (my o : nat)
  | XFin (my : nat)
  | XFinSync (my : nat).

Record xstate := XState {
  xm : pmem;               (* curComb's line and the replicas' lines *)
  tkt : nat;               (* the last ticket handed out *)
  lk : nat → xlock;        (* the Combined instances' rwlocks *)
  pcs : nat → xpc;
  done : list nat;         (* ghost: the tickets of the updates that returned *)
}.

Definition updf {A} (f : nat → A) (t : nat) (a : A) : nat → A :=
  λ t', if decide (t' = t) then a else f t'.

Lemma updf_eq {A} (f : nat → A) t a : updf f t a t = a.
Proof. unfold updf. by rewrite decide_True. Qed.
Lemma updf_ne {A} (f : nat → A) t t' a : t' ≠ t → updf f t a t' = f t'.
Proof. intros. unfold updf. by rewrite decide_False. Qed.

Definition len0 (p : pmem) : nat := length (hist p 0).
(** The visible [curComb]: ticket and index. *)
Definition ccv (p : pmem) : nat * nat := ccl (hist p 0) (len0 p).
Definition chead (s : xstate) : nat := (ccv (xm s)).1.
Definition cidx (s : xstate) : nat := (ccv (xm s)).2.
(** The visible content of replica [r]. *)
Definition objv (p : pmem) (r : nat) : nat := seq_val (OBJ r) (hist p (S r)).

(** What a crash keeping [keep] leaves: each line cut to its image, the
    image persisted, no write-back pending. *)
Definition crash_mem (p : pmem) (keep : nat → nat) : pmem :=
  PMem (Mem (map (λ L, take (keep L) (hist p L)) (seq 0 (nlines p)))
            (map keep (seq 0 (nlines p)))) [].

(** The state after a crash keeping [keep]: null recovery. *)
Definition recover (s : xstate) (keep : nat → nat) : xstate :=
  let c := ccl (hist (xm s) 0) (keep 0) in
  XState (crash_mem (xm s) keep) c.1 (λ r, if decide (r = c.2) then XHeld else XFree)
    (λ _, XIdle) (done s).

Section model.
  Context (NR : nat).

  (** [fac]: mutant [CXFlushAfterCas]; [nrp]: mutant [CXNoReturnPersist].
      Both false is CX-PTM as published and as [cx/core.rs] runs it. *)
  Inductive xstep (fac nrp : bool) : xstate → xstate → Prop :=
    (* step 1 (Cx::publish) *)
    | x_enqueue s t :
        pcs s t = XIdle →
        xstep fac nrp s (XState (xm s) (S (tkt s)) (lk s) (updf (pcs s) t (XEnq (S (tkt s)))) (done s))
    (* step 2 (Cx::lock_any) *)
    | x_lock s t my r :
        pcs s t = XEnq my → r < NR → lk s r = XFree → chead s < my →
        xstep fac nrp s (XState (xm s) (tkt s) (updf (lk s) r (XOwned t)) (updf (pcs s) t (XApply my r)) (done s))
    (* curComb at or past the node (Cx::apply_update, Cx::collect) *)
    | x_done s t my :
        pcs s t = XEnq my → my ≤ chead s →
        xstep fac nrp s (XState (xm s) (tkt s) (lk s) (updf (pcs s) t (XFin my)) (done s))
    (* steps 3–4: a copy or a mutation writes the replica (F::copy_from, F::run) *)
    | x_apply s t my r v :
        pcs s t = XApply my r →
        xstep fac nrp s (XState (p_store cline (xm s) (OBJ r) v) (tkt s) (lk s) (pcs s) (done s))
    (* step 4's end: the replica at the node (update_head(my), F::settle) *)
    | x_settle s t my r :
        pcs s t = XApply my r →
        xstep fac nrp s (XState (p_store cline (xm s) (OBJ r) my) (tkt s) (lk s)
                   (updf (pcs s) t (if fac then XFence my r else XPwbRep my r)) (done s))
    (* the replica's pwbs (F::write_back) *)
    | x_pwbrep s t my r :
        pcs s t = XPwbRep my r →
        xstep fac nrp s (XState (p_pwb cline (xm s) t (OBJ r)) (tkt s) (lk s) (updf (pcs s) t (XFence my r)) (done s))
    (* step 5: downgrade, pfence (Cx::update_on) *)
    | x_fence s t my r :
        pcs s t = XFence my r →
        xstep fac nrp s (XState (p_fence (xm s) t) (tkt s) (lk s) (updf (pcs s) t (XCas my r)) (done s))
    (* step 6: the CAS of curComb succeeds (Cx::install) *)
    | x_cas s t my r :
        pcs s t = XCas my r → chead s < my →
        xstep fac nrp s (XState (p_write (xm s) 0 [(TK, my); (IDX, r)]) (tkt s) (updf (lk s) r XHeld)
                   (updf (pcs s) t (if fac then XLate my r (cidx s) else XPwbCC my (cidx s))) (done s))
    (* step 6: curComb at or past the node: unlock (Cx::install's break) *)
    | x_cas_fail s t my r :
        pcs s t = XCas my r → my ≤ chead s →
        xstep fac nrp s (XState (xm s) (tkt s) (updf (lk s) r XFree) (updf (pcs s) t (XFin my)) (done s))
    (* mutant CXFlushAfterCas: the replica's pwbs after the CAS *)
    | x_late s t my r o :
        pcs s t = XLate my r o →
        xstep fac nrp s (XState (p_pwb cline (xm s) t (OBJ r)) (tkt s) (lk s) (updf (pcs s) t (XPwbCC my o)) (done s))
    (* pwb(curComb) (Cx::install) *)
    | x_pwbcc s t my o :
        pcs s t = XPwbCC my o →
        xstep fac nrp s (XState (if nrp then xm s else p_pwb cline (xm s) t TK) (tkt s) (lk s)
                   (updf (pcs s) t (XSync my o)) (done s))
    (* psync (Cx::install) *)
    | x_sync s t my o :
        pcs s t = XSync my o →
        xstep fac nrp s (XState (if nrp then xm s else p_fence (xm s) t) (tkt s) (lk s)
                   (updf (pcs s) t (XRet my o)) (done s))
    (* release the replaced Combined, return (Cx::install) *)
    | x_ret s t my o :
        pcs s t = XRet my o →
        xstep fac nrp s (XState (xm s) (tkt s) (updf (lk s) o XFree) (updf (pcs s) t XIdle) (my :: done s))
    (* pwb(curComb) (Cx::collect, Cx::ensure_durable) *)
    | x_fin s t my :
        pcs s t = XFin my →
        xstep fac nrp s (XState (if nrp then xm s else p_pwb cline (xm s) t TK) (tkt s) (lk s)
                   (updf (pcs s) t (XFinSync my)) (done s))
    (* psync, return (Cx::ensure_durable, Cx::collect) *)
    | x_finsync s t my :
        pcs s t = XFinSync my →
        xstep fac nrp s (XState (if nrp then xm s else p_fence (xm s) t) (tkt s) (lk s)
                   (updf (pcs s) t XIdle) (my :: done s))
    (* a crash and null recovery (CxPtm::open, Cx::build) *)
    | x_crash s keep :
        p_crash_ok (xm s) keep → xstep fac nrp s (recover s keep).

  (** The first run: curComb at ticket 0 names replica 0, whose region is
      empty (ticket 0's state); no write-back pending. *)
  Definition xinit : xstate :=
    XState (PMem (Mem ([[(TK, 0); (IDX, 0)]] :: replicate NR []) (1 :: replicate NR 0)) []) 0
      (λ r, if decide (r = 0) then XHeld else XFree) (λ _, XIdle) [].

  Inductive xreachable (fac nrp : bool) : xstate → Prop :=
    | xreach_init : xreachable fac nrp xinit
    | xreach_step s s' : xreachable fac nrp s → xstep fac nrp s s' → xreachable fac nrp s'.
End model.

(** ** The mutants as written: explicit executions *)

Ltac xlt := vm_compute; lia.
Ltac cur R := match type of R with xreachable _ _ _ ?x => x end.

(** [CXFlushAfterCas]: thread 0 takes replica 1, brings it to ticket 1 and
    CASes [curComb] to it before the replica's [pwb]: a crash that keeps
    [curComb]'s line (an eviction) and not the replica's names replica 1 at
    ticket 1 with the replica's image empty (ticket 0's state, or
    whatever the region held). *)
Theorem cx_px_flush_after_cas_breaks_image :
  ∃ s keep, xreachable 2 true false s ∧ p_crash_ok (xm s) keep ∧
    p_image cline (xm s) keep (OBJ (p_image cline (xm s) keep IDX)) ≠ p_image cline (xm s) keep TK.
Proof.
  pose proof (xreach_init 2 true false) as R.
  let x := cur R in pose proof (xreach_step _ _ _ _ _ R (x_enqueue 2 true false x 0 eq_refl)) as R0. vm_compute in R0.
  let x := cur R0 in pose proof (xreach_step _ _ _ _ _ R0 (x_lock 2 true false x 0 1 1 eq_refl ltac:(lia) eq_refl ltac:(xlt))) as R1. vm_compute in R1.
  let x := cur R1 in pose proof (xreach_step _ _ _ _ _ R1 (x_settle 2 true false x 0 1 1 eq_refl)) as R2. vm_compute in R2.
  let x := cur R2 in pose proof (xreach_step _ _ _ _ _ R2 (x_fence 2 true false x 0 1 1 eq_refl)) as R3. vm_compute in R3.
  let x := cur R3 in pose proof (xreach_step _ _ _ _ _ R3 (x_cas 2 true false x 0 1 1 eq_refl ltac:(xlt))) as R4. vm_compute in R4.
  eexists _, (λ L, if decide (L = 0) then 2 else 0). split; [exact R4|]. split.
  - intros L HL. vm_compute in HL. destruct L as [|[|[|L]]]; vm_compute; lia.
  - vm_compute. lia.
Qed.

(** [CXNoReturnPersist]: thread 0 installs replica 1 at ticket 1 and
    returns without [pwb(curComb)] and [psync]: a crash that keeps
    [curComb]'s line at its mark recovers ticket 0. *)
Theorem cx_px_no_return_persist_loses_completed :
  ∃ s keep, xreachable 2 false true s ∧ 1 ∈ done s ∧ p_crash_ok (xm s) keep ∧
    p_image cline (xm s) keep TK < 1.
Proof.
  pose proof (xreach_init 2 false true) as R.
  let x := cur R in pose proof (xreach_step _ _ _ _ _ R (x_enqueue 2 false true x 0 eq_refl)) as R0. vm_compute in R0.
  let x := cur R0 in pose proof (xreach_step _ _ _ _ _ R0 (x_lock 2 false true x 0 1 1 eq_refl ltac:(lia) eq_refl ltac:(xlt))) as R1. vm_compute in R1.
  let x := cur R1 in pose proof (xreach_step _ _ _ _ _ R1 (x_settle 2 false true x 0 1 1 eq_refl)) as R2. vm_compute in R2.
  let x := cur R2 in pose proof (xreach_step _ _ _ _ _ R2 (x_pwbrep 2 false true x 0 1 1 eq_refl)) as R3. vm_compute in R3.
  let x := cur R3 in pose proof (xreach_step _ _ _ _ _ R3 (x_fence 2 false true x 0 1 1 eq_refl)) as R4. vm_compute in R4.
  let x := cur R4 in pose proof (xreach_step _ _ _ _ _ R4 (x_cas 2 false true x 0 1 1 eq_refl ltac:(xlt))) as R5. vm_compute in R5.
  let x := cur R5 in pose proof (xreach_step _ _ _ _ _ R5 (x_pwbcc 2 false true x 0 1 0 eq_refl)) as R6. vm_compute in R6.
  let x := cur R6 in pose proof (xreach_step _ _ _ _ _ R6 (x_sync 2 false true x 0 1 0 eq_refl)) as R7. vm_compute in R7.
  let x := cur R7 in pose proof (xreach_step _ _ _ _ _ R7 (x_ret 2 false true x 0 1 0 eq_refl)) as R8. vm_compute in R8.
  eexists _, (λ L, if decide (L = 1) then 0 else 1). split; [exact R8|]. split; [left|]. split.
  - intros L HL. vm_compute in HL. destruct L as [|[|[|L]]]; vm_compute; lia.
  - vm_compute. lia.
Qed.

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
    number [NR ≥ 1] of replicas (the seed has 2N) and any number of crashes.
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

    Proved, for every [NR ≥ 1], any number of threads and any number of
    crashes, for every state reachable with both switches off
    ([xreachable NR false false]), from the inductive invariant [xinv]
    ([xinv_init], [xinv_step], [xinv_crash]):
    - [cx_px_durable_image_consistent]: in every crash image Px86 allows,
      the replica [curComb]'s image designates holds the ticket [curComb]'s
      image names (TLA+ [DurableImageConsistent]): null recovery finds a
      consistent state;
    - [cx_px_completed_durable]: every update that returned (in this or an
      earlier epoch) has a ticket at or before the ticket of every crash
      image of [curComb] (TLA+ [CompletedDurable]);
    - [cx_px_flush_after_cas_breaks_image] (mutant [CXFlushAfterCas], two
      replicas, one thread): an execution of 5 steps after which a crash
      image Px86 allows names replica 1 at ticket 1 while the replica's
      image is empty ([DurableImageConsistent] fails);
    - [cx_px_no_return_persist_loses_completed] (mutant
      [CXNoReturnPersist]): an execution of 9 steps after which ticket 1
      returned and a crash image of [curComb] is at ticket 0
      ([CompletedDurable] fails);
    - [cx_px_published_completes]: the same 9 steps in the published order
      return ticket 1 with [curComb]'s line persisted through it
      ([cx_px_durable_image_consistent] and [cx_px_completed_durable] are
      not vacuous).

    The invariant: the memory is well formed, line 0's mark is at least 1;
    every [curComb] write a crash may keep (from the mark on) names a held
    replica whose line is persisted in full and holds that write's ticket,
    and is at or after every returned ticket; per thread, a replica's
    write-back pending or covered between its [pwb] and the CAS; after a
    CAS or on the way out of [Cx::collect], a position of line 0 from which
    on no write names the replaced Combined or a ticket before the
    thread's, its [pwb(curComb)] pending or covered after the [pwb], and
    covered after the [psync]; the replaced Combined is held, by one thread
    only, until then.

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
From stdpp Require Import base list list_numbers decidable.
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

(** ** The invariant of the fixed protocol *)

Section inv.
  Context (NR : nat) (HNR : 0 < NR).

  Definition ccn (p : pmem) (n : nat) : nat * nat := ccl (hist p 0) n.

  (** From position [n] of [curComb]'s line on, no write names [o] or a
      ticket before [my]. *)
  Definition above (p : pmem) (o : option nat) (my n : nat) : Prop :=
    ∀ n', n ≤ n' → n' ≤ len0 p → Some (ccn p n').2 ≠ o ∧ my ≤ (ccn p n').1.

  (** A [curComb] a crash may keep names a held replica persisted in full
      at its ticket. *)
  Definition des_ok (lkf : nat → xlock) (p : pmem) (c : nat * nat) : Prop :=
    c.2 < NR ∧ lkf c.2 = XHeld ∧ length (hist p (S c.2)) ≤ mk p (S c.2) ∧ objv p c.2 = c.1.

  Definition owns (c : xpc) : option nat :=
    match c with XApply _ r | XPwbRep _ r | XFence _ r | XCas _ r => Some r | _ => None end.
  Definition target (c : xpc) : option nat :=
    match c with XPwbCC _ o | XSync _ o | XRet _ o => Some o | _ => None end.

  Definition xtinv (p : pmem) (t : nat) (c : xpc) : Prop :=
    match c with
    | XIdle | XEnq _ => True
    | XApply _ r => r < NR
    | XPwbRep my r => r < NR ∧ objv p r = my
    | XFence my r => r < NR ∧ objv p r = my ∧ pending p t (S r) (length (hist p (S r)))
    | XCas my r => r < NR ∧ objv p r = my ∧ length (hist p (S r)) ≤ mk p (S r)
    | XLate _ _ _ => False
    | XPwbCC my o => ∃ n, n ≤ len0 p ∧ above p (Some o) my n
    | XSync my o => ∃ n, n ≤ len0 p ∧ above p (Some o) my n ∧ pending p t 0 n
    | XRet my o => above p (Some o) my (mk p 0)
    | XFin my => ∃ n, n ≤ len0 p ∧ above p None my n
    | XFinSync my => ∃ n, n ≤ len0 p ∧ above p None my n ∧ pending p t 0 n
    end.

  Record xinv (s : xstate) : Prop := {
    xi_wf : p_wf (xm s);
    xi_lines : nlines (xm s) = S NR;
    xi_mark0 : 1 ≤ mk (xm s) 0;
    xi_des : ∀ n, mk (xm s) 0 ≤ n → n ≤ len0 (xm s) → des_ok (lk s) (xm s) (ccn (xm s) n);
    xi_done : ∀ k, k ∈ done s → ∀ n, mk (xm s) 0 ≤ n → n ≤ len0 (xm s) → k ≤ (ccn (xm s) n).1;
    xi_owns : ∀ t r, owns (pcs s t) = Some r → lk s r = XOwned t;
    xi_targets : ∀ t o, target (pcs s t) = Some o →
                 lk s o = XHeld ∧ ∀ t', t' ≠ t → target (pcs s t') ≠ Some o;
    xi_threads : ∀ t, xtinv (xm s) t (pcs s t);
  }.

  Lemma xinv_init : xinv (xinit NR).
  Proof.
    split; cbn [xm lk pcs done xinit].
    - split; [simpl; by rewrite !replicate_length|]. split; [|constructor].
      intros [|L]; unfold mark, line_hist; simpl; [lia|].
      destruct (decide (L < NR)).
      + rewrite !lookup_replicate_2 by done. simpl. lia.
      + rewrite (proj1 (lookup_replicate_None _ _ _)) by lia. simpl. lia.
    - unfold nlines. simpl. by rewrite replicate_length.
    - unfold mk, mark. simpl. lia.
    - intros n Hn1 Hn2. unfold mk, len0, hist, line_hist, mark in *. simpl in *.
      assert (n = 1) as -> by lia. unfold des_ok, ccn, ccl, hist, mk, objv, line_hist, mark. simpl.
      change (seq_val IDX [[(TK, 0); (IDX, 0)]]) with 0. change (seq_val TK [[(TK, 0); (IDX, 0)]]) with 0.
      destruct NR as [|N]; [lia|]. unfold hist, line_hist. simpl. split; [lia|]. split; [done|]. split; [lia|done].
    - intros k Hk. by apply elem_of_nil in Hk.
    - done.
    - done.
    - intros t. done.
  Qed.

  Lemma above_mono p o my n n2 : above p o my n → n ≤ n2 → above p o my n2.
  Proof. intros H Hn n' ? ?. apply H; lia. Qed.

  Lemma above_same p p' o my n : hist p' 0 = hist p 0 → above p o my n → above p' o my n.
  Proof. intros E H n'. unfold above, ccn, len0 in *. rewrite E. apply H. Qed.

  (** Another thread's invariant under a step that leaves line 0 alone. *)
  Lemma xtinv_frame p p' t c :
    hist p' 0 = hist p 0 → mk p 0 ≤ mk p' 0 →
    (∀ r, owns c = Some r → hist p' (S r) = hist p (S r) ∧ mk p (S r) ≤ mk p' (S r)) →
    (∀ L n, L < S NR → pending p t L n → pending p' t L n) →
    xtinv p t c → xtinv p' t c.
  Proof.
    intros H0 Hm0 Hr Hp. destruct c as [|my|my r|my r|my r|my r|my r o|my o|my o|my o|my|my]; simpl; try done.
    - intros [? Ho]. destruct (Hr r eq_refl) as [E _]. unfold objv. rewrite E. done.
    - intros (? & Ho & Hq). destruct (Hr r eq_refl) as [E _]. unfold objv. rewrite E. split_and!; try done.
      apply Hp; [lia|done].
    - intros (? & Ho & Hq). destruct (Hr r eq_refl) as [E Hm]. unfold objv. rewrite E. split_and!; try done. lia.
    - intros (n & Hn & Ha). exists n. unfold len0 in *. rewrite H0. split; [done|]. by apply (above_same p).
    - intros (n & Hn & Ha & Hq). exists n. unfold len0 in *. rewrite H0. split_and!; [done| by apply (above_same p) | apply Hp; [lia|done]].
    - intros Ha. apply (above_mono _ _ _ (mk p 0)); [by apply (above_same p)|done].
    - intros (n & Hn & Ha). exists n. unfold len0 in *. rewrite H0. split; [done|]. by apply (above_same p).
    - intros (n & Hn & Ha & Hq). exists n. unfold len0 in *. rewrite H0. split_and!; [done| by apply (above_same p) | apply Hp; [lia|done]].
  Qed.

  (** Another thread's invariant under a CAS of [curComb] to [(my', r')]. *)
  Lemma xtinv_cas p t c my' r' :
    p_wf p → 0 < nlines p → (ccn p (len0 p)).1 < my' →
    (∀ o, target c = Some o → o ≠ r') →
    xtinv p t c → xtinv (p_write p 0 [(TK, my'); (IDX, r')]) t c.
  Proof.
    intros Hwf Hl Hlt Ho.
    set (p' := p_write p 0 [(TK, my'); (IDX, r')]).
    assert (E : hist p' 0 = hist p 0 ++ [[(TK, my'); (IDX, r')]]) by (by apply hist_write_same).
    assert (Hlen : len0 p' = S (len0 p)) by (unfold len0; rewrite E, app_length; simpl; lia).
    assert (Hab : ∀ o my n, Some r' ≠ o → n ≤ len0 p → above p o my n → above p' o my n).
    { intros o my n Hr Hn Ha n' H1 H2. unfold ccn. rewrite E.
      destruct (decide (n' ≤ len0 p)).
      - rewrite ccl_app by done. by apply Ha.
      - assert (n' = S (length (hist p 0))) as -> by (unfold len0 in *; lia). rewrite ccl_snoc. simpl.
        split; [done|]. destruct (Ha (len0 p)) as [_ Hm]; [lia|lia|]. lia. }
    assert (Hobj : ∀ r, objv p' r = objv p r) by (intros r; unfold objv, p'; by rewrite hist_write_other).
    assert (Hh : ∀ r, hist p' (S r) = hist p (S r)) by (intros r; unfold p'; by rewrite hist_write_other).
    assert (Hpw : p_pwbs p' = p_pwbs p) by reflexivity.
    assert (Hmk : ∀ L, mk p' L = mk p L) by reflexivity.
    destruct c as [|my|my r|my r|my r|my r|my r o|my o|my o|my o|my|my]; simpl; unfold pending;
      rewrite ?Hobj, ?Hh, ?Hpw, ?Hmk; try done.
    - intros (n & Hn & Ha). exists n. split; [lia|]. apply Hab; [by intros [= ?]; apply (Ho o)|done|done].
    - intros (n & Hn & Ha & Hq). exists n. split; [lia|]. split; [apply Hab; [by intros [= ?]; apply (Ho o)|done|done]|].
      done.
    - intros Ha. apply Hab; [by intros [= ?]; apply (Ho o)|by apply wf_mk_le|done].
    - intros (n & Hn & Ha). exists n. split; [lia|]. by apply Hab.
    - intros (n & Hn & Ha & Hq). exists n. split; [lia|]. split; [by apply Hab|done].
  Qed.

  Lemma des_frame lkf lkf' p p' c :
    (lkf c.2 = XHeld → lkf' c.2 = XHeld) → hist p' (S c.2) = hist p (S c.2) → mk p (S c.2) ≤ mk p' (S c.2) →
    des_ok lkf p c → des_ok lkf' p' c.
  Proof. intros Hl Hh Hm (? & ? & ? & ?). unfold des_ok, objv in *. rewrite Hh in *. split_and!; auto; lia. Qed.

  (** The invariant after a step of thread [t] (or of no thread), from
      what the step does to [t], the memory and the locks. *)
  Lemma xinv_gen s s' t :
    xinv s →
    p_wf (xm s') → nlines (xm s') = S NR → 1 ≤ mk (xm s') 0 →
    (∀ n, mk (xm s') 0 ≤ n → n ≤ len0 (xm s') → des_ok (lk s') (xm s') (ccn (xm s') n)) →
    (∀ k, k ∈ done s' → ∀ n, mk (xm s') 0 ≤ n → n ≤ len0 (xm s') → k ≤ (ccn (xm s') n).1) →
    (∀ t', t' ≠ t → pcs s' t' = pcs s t') →
    (∀ t' r, t' ≠ t → owns (pcs s t') = Some r → lk s' r = lk s r) →
    (∀ t' o, t' ≠ t → target (pcs s t') = Some o → lk s' o = lk s o ∧ target (pcs s' t) ≠ Some o) →
    (∀ r, owns (pcs s' t) = Some r → lk s' r = XOwned t) →
    (∀ o, target (pcs s' t) = Some o → lk s' o = XHeld) →
    (∀ t', t' ≠ t → xtinv (xm s) t' (pcs s t') → xtinv (xm s') t' (pcs s t')) →
    xtinv (xm s') t (pcs s' t) →
    xinv s'.
  Proof.
    intros Hi Hwf Hln Hm0 Hdes Hdone Hpc Hown Htg Hown_t Htg_t Hth Hth_t.
    split; try done.
    - intros t' r Ho. destruct (decide (t' = t)) as [-> | Hne]; [by apply Hown_t |].
      rewrite (Hpc t') in Ho by done. rewrite (Hown t') by done. by apply (xi_owns _ Hi).
    - intros t' o Ho. destruct (decide (t' = t)) as [-> | Hne].
      + split; [by apply Htg_t |]. intros t'' Hne'' Ho''. rewrite (Hpc t'') in Ho'' by done.
        destruct (Htg t'' o Hne'' Ho'') as [_ Hn]. by apply Hn.
      + rewrite (Hpc t') in Ho by done. destruct (Htg t' o Hne Ho) as [Hl Hn]. rewrite Hl.
        destruct (xi_targets _ Hi t' o Ho) as [Hh Hu]. split; [done |].
        intros t'' Hne''. destruct (decide (t'' = t)) as [-> | Hne3]; [done |].
        rewrite (Hpc t'') by done. by apply Hu.
    - intros t'. destruct (decide (t' = t)) as [-> | Hne]; [done |].
      rewrite (Hpc t') by done. apply Hth; [done | apply (xi_threads _ Hi)].
  Qed.

  Lemma updf_held (lkf : nat → xlock) r v x : lkf r ≠ XHeld → lkf x = XHeld → updf lkf r v x = XHeld.
  Proof. intros Hr Hx. unfold updf. case_decide; [subst; done | done]. Qed.

  Lemma held_not_owned (lkf : nat → xlock) r x t : lkf r = XOwned t → lkf x = XHeld → x ≠ r.
  Proof. intros H1 H2 ->. congruence. Qed.

  Lemma target_not_cidx p t c o :
    p_wf p → xtinv p t c → target c = Some o → (ccn p (len0 p)).2 ≠ o.
  Proof.
    intros Hwf Ht Ho. destruct c; simpl in Ho; try done; injection Ho as <-; simpl in Ht.
    - destruct Ht as (n & Hn & Ha). intros E. destruct (Ha (len0 p)) as [Hne _]; [lia|lia|]. congruence.
    - destruct Ht as (n & Hn & Ha & _). intros E. destruct (Ha (len0 p)) as [Hne _]; [lia|lia|]. congruence.
    - intros E. destruct (Ht (len0 p)) as [Hne _]; [by apply wf_mk_le|lia|]. congruence.
  Qed.

  Lemma xinv_crash s keep : xinv s → p_crash_ok (xm s) keep → xinv (recover s keep).
  Proof.
    intros Hi Hok. pose proof Hi as [Hwf Hln Hm0 Hdes Hdone Howns Htg Hth].
    assert (Hl0 : 0 < nlines (xm s)) by lia.
    destruct (Hok 0 Hl0) as [Hk1 Hk2].
    assert (Hlen0 : len0 (crash_mem (xm s) keep) = keep 0).
    { unfold len0. rewrite crash_hist by done. rewrite take_length. unfold hist. lia. }
    assert (Hc : ∀ n, n ≤ keep 0 → ccn (crash_mem (xm s) keep) n = ccn (xm s) n).
    { intros n Hn. unfold ccn, ccl. rewrite crash_hist by done. rewrite take_take. by replace (n `min` keep 0) with n by lia. }
    destruct (Hdes (keep 0) Hk1 Hk2) as (Hr & Hh & Hfull & Hobj).
    set (r := (ccn (xm s) (keep 0)).2) in *.
    assert (HrL : S r < nlines (xm s)) by lia.
    destruct (Hok (S r) HrL) as [Hk3 Hk4].
    split; unfold recover; cbn [xm lk pcs done tkt].
    - by apply crash_wf.
    - by rewrite crash_nlines.
    - rewrite crash_mk by done. unfold mk in *. lia.
    - intros n Hn1 Hn2. rewrite crash_mk in Hn1 by done. rewrite Hlen0 in Hn2.
      assert (n = keep 0) as -> by lia. rewrite Hc by lia. fold r.
      split_and!; [done| by rewrite decide_True | ..].
      all: try (rewrite crash_mk, crash_hist by done; rewrite take_length; unfold mk, hist in *; lia).
      all: change (ccn (xm s) (keep 0)).2 with r; rewrite <- Hobj.
      all: unfold objv; rewrite (crash_hist (xm s) keep (S r) HrL); rewrite take_ge by (unfold mk, hist in *; lia).
      all: done.
    - intros k Hk n Hn1 Hn2. rewrite crash_mk in Hn1 by done. rewrite Hlen0 in Hn2.
      assert (n = keep 0) as -> by lia. rewrite Hc by lia. by apply Hdone.
    - done.
    - done.
    - done.
  Qed.

  Ltac same_pc := let t' := fresh "t'" in let Hne := fresh "Hne" in intros t' Hne; by rewrite updf_ne.
  Ltac none_tac := let x := fresh "x" in let Hx := fresh "Hx" in
    intros x; rewrite updf_eq; simpl; intros Hx; discriminate.

  Lemma xinv_rep s t r w pcs' :
    xinv s → lk s r = XOwned t → r < NR →
    (∀ t', t' ≠ t → pcs' t' = pcs s t') → owns (pcs' t) = Some r → target (pcs' t) = None →
    xtinv (p_write (xm s) (S r) w) t (pcs' t) →
    xinv (XState (p_write (xm s) (S r) w) (tkt s) (lk s) pcs' (done s)).
  Proof.
    intros Hi Hown Hr Hpc Ho Htg' Ht. pose proof Hi as [Hwf Hln Hm0 Hdes Hdone Howns Htg Hth].
    set (p' := p_write (xm s) (S r) w).
    assert (H0 : hist p' 0 = hist (xm s) 0) by (by apply hist_write_other).
    assert (Hl : len0 p' = len0 (xm s)) by (unfold len0; by rewrite H0).
    assert (Hc : ∀ n, ccn p' n = ccn (xm s) n) by (intros n; unfold ccn; by rewrite H0).
    eapply (xinv_gen s _ t Hi); cbn [xm lk pcs done tkt];
      [by apply p_write_wf | unfold p'; rewrite nlines_write; exact Hln | exact Hm0 | | | exact Hpc | done | | | | | exact Ht].
    - intros n H1 H2. rewrite Hc. rewrite Hl in H2. pose proof (Hdes n H1 H2) as HD.
      apply (des_frame (lk s) (lk s) (xm s) p'); [done| |apply Nat.le_refl|done].
      apply hist_write_other. destruct HD as (_ & Hh & _). intros Heq.
      assert ((ccn (xm s) n).2 = r) as E by (injection Heq as E'; exact E'). rewrite E in Hh. congruence.
    - intros k Hk n H1 H2. rewrite Hc. rewrite Hl in H2. by apply Hdone.
    - intros t' o Hne Ho'. split; [done|]. by rewrite Htg'.
    - intros r' Hr'. rewrite Ho in Hr'. by injection Hr' as <-.
    - intros o. by rewrite Htg'.
    - intros t' Hne Ht'. apply (xtinv_frame (xm s)); [exact H0|apply Nat.le_refl| |by intros|exact Ht'].
      intros r' Ho'. pose proof (Howns t' r' Ho') as Hl'. split; [|apply Nat.le_refl].
      apply hist_write_other. intros [= ->]. congruence.
  Qed.

  Lemma xinv_step s s' : xinv s → xstep NR false false s s' → xinv s'.
  Proof.
    intros Hi Hs. pose proof Hi as [Hwf Hln Hm0 Hdes Hdone Howns Htg Hth].
    assert (Hl0 : 0 < nlines (xm s)) by lia.
    assert (Hml : mk (xm s) 0 ≤ len0 (xm s)) by (by apply wf_mk_le).
    destruct Hs as [s t Hp | s t my r Hp Hr Hlk Hlt | s t my Hp Hle | s t my r v Hp | s t my r Hp
      | s t my r Hp | s t my r Hp | s t my r Hp Hlt | s t my r Hp Hle | s t my r o Hp | s t my o Hp
      | s t my o Hp | s t my o Hp | s t my Hp | s t my Hp | s keep Hok]; cbv iota.
    - (* enqueue *)
      eapply (xinv_gen s _ t Hi); cbn [xm lk pcs done tkt];
        [done|done|done|exact Hdes|exact Hdone|same_pc|done| |none_tac|none_tac|intros ? ? H; exact H|by rewrite updf_eq].
      intros t' o Hne Ho. split; [done| by rewrite updf_eq].
    - (* lock *)
      eapply (xinv_gen s _ t Hi); cbn [xm lk pcs done tkt];
        [done|done|done| |exact Hdone|same_pc| | | |none_tac|intros ? ? H; exact H|by rewrite !updf_eq].
      + intros n H1 H2. apply (des_frame (lk s) _ (xm s) (xm s)); [|done|apply Nat.le_refl|by apply Hdes].
        intros Hh. apply updf_held; [congruence|done].
      + intros t' r' Hne Ho. apply updf_ne. intros ->. pose proof (Howns t' r Ho). congruence.
      + intros t' o Hne Ho. destruct (Htg t' o Ho) as [Hh _].
        split; [apply updf_ne; intros ->; congruence| by rewrite updf_eq].
      + intros r'. rewrite updf_eq. intros [= <-]. by rewrite updf_eq.
    - (* curComb already past the node *)
      eapply (xinv_gen s _ t Hi); cbn [xm lk pcs done tkt];
        [done|done|done|exact Hdes|exact Hdone|same_pc|done| |none_tac|none_tac|intros ? ? H; exact H|].
      + intros t' o Hne Ho. split; [done| by rewrite updf_eq].
      + rewrite updf_eq. exists (len0 (xm s)). split; [lia|]. intros n' H1 H2.
        assert (n' = len0 (xm s)) as -> by lia. split; [done|exact Hle].
    - (* a write to the replica *)
      pose proof (Hth t) as Ht. rewrite Hp in Ht. simpl in Ht.
      change (p_store cline (xm s) (OBJ r) v) with (p_write (xm s) (S r) [(OBJ r, v)]).
      apply (xinv_rep s t r); [done|apply Howns; by rewrite Hp|done|done|by rewrite Hp|by rewrite Hp|by rewrite Hp].
    - (* settle *)
      pose proof (Hth t) as Ht. rewrite Hp in Ht. simpl in Ht.
      change (p_store cline (xm s) (OBJ r) my) with (p_write (xm s) (S r) [(OBJ r, my)]).
      apply (xinv_rep s t r); [done|apply Howns; by rewrite Hp|done|same_pc|by rewrite updf_eq|by rewrite updf_eq|].
      rewrite updf_eq. simpl. split; [done|]. unfold objv. rewrite hist_write_same by lia. apply seq_val_obj.
    - (* the replica's pwbs *)
      pose proof (Hth t) as Ht. rewrite Hp in Ht. simpl in Ht. destruct Ht as [Hr Hobj].
      eapply (xinv_gen s _ t Hi); cbn [xm lk pcs done tkt];
        [by apply p_pwb_wf|exact Hln|exact Hm0|exact Hdes|exact Hdone|same_pc|done| | |none_tac| |].
      + intros t' o Hne Ho. split; [done| by rewrite updf_eq].
      + rewrite updf_eq. intros r' [= <-]. apply Howns. by rewrite Hp.
      + intros t' Hne Ht'. apply (xtinv_frame (xm s)); [done|apply Nat.le_refl| |intros L n _ Hq; by apply pending_pwb|exact Ht'].
        intros r' _. split; [done|apply Nat.le_refl].
      + rewrite updf_eq. simpl. split_and!; [done|done|]. left. apply elem_of_cons. left. reflexivity.
    - (* pfence before the CAS *)
      pose proof (Hth t) as Ht. rewrite Hp in Ht. simpl in Ht. destruct Ht as (Hr & Hobj & Hq).
      set (p' := p_fence (xm s) t).
      assert (H0 : hist p' 0 = hist (xm s) 0) by apply hist_fence.
      assert (Hl : len0 p' = len0 (xm s)) by (unfold len0; by rewrite H0).
      assert (Hc : ∀ n, ccn p' n = ccn (xm s) n) by (intros n; unfold ccn; by rewrite H0).
      assert (Hm : mk (xm s) 0 ≤ mk p' 0) by apply mk_fence.
      eapply (xinv_gen s _ t Hi); cbn [xm lk pcs done tkt];
        [by apply p_fence_wf|unfold p'; rewrite nlines_fence; exact Hln|lia| | |same_pc|done| | |none_tac| |].
      + intros n H1 H2. rewrite Hc. rewrite Hl in H2. apply (des_frame (lk s) _ (xm s)); [done|apply hist_fence|apply mk_fence|].
        apply Hdes; lia.
      + intros k Hk n H1 H2. rewrite Hc. rewrite Hl in H2. apply Hdone; [done|lia|lia].
      + intros t' o Hne Ho. split; [done| by rewrite updf_eq].
      + rewrite updf_eq. intros r' [= <-]. apply Howns. by rewrite Hp.
      + intros t' Hne Ht'. apply (xtinv_frame (xm s)); [exact H0|exact Hm| | |exact Ht'].
        * intros r' _. split; [apply hist_fence|apply mk_fence].
        * intros L n HL Hq'. apply pending_fence_any; [done|lia|done].
      + rewrite updf_eq. simpl. split_and!; [done| |].
        * unfold objv. unfold p'. by rewrite hist_fence.
        * unfold p'. rewrite hist_fence. apply pending_fence_own; [done|lia|done].
    - (* the CAS succeeds *)
      pose proof (Hth t) as Ht. rewrite Hp in Ht. simpl in Ht. destruct Ht as (Hr & Hobj & Hfull).
      assert (Hown : lk s r = XOwned t) by (apply Howns; by rewrite Hp).
      change (chead s) with (ccn (xm s) (len0 (xm s))).1 in Hlt.
      change (cidx s) with (ccn (xm s) (len0 (xm s))).2.
      set (p' := p_write (xm s) 0 [(TK, my); (IDX, r)]).
      assert (E : hist p' 0 = hist (xm s) 0 ++ [[(TK, my); (IDX, r)]]) by (by apply hist_write_same).
      assert (Hl : len0 p' = S (len0 (xm s))) by (unfold len0; rewrite E, app_length; simpl; lia).
      assert (Hc : ∀ n, n ≤ len0 (xm s) → ccn p' n = ccn (xm s) n) by (intros n Hn; unfold ccn; rewrite E; by apply ccl_app).
      assert (Hnew : ccn p' (S (len0 (xm s))) = (my, r)) by (unfold ccn; rewrite E; apply ccl_snoc).
      assert (Hh : ∀ r', hist p' (S r') = hist (xm s) (S r')) by (intros r'; by apply hist_write_other).
      pose proof (Hdes (len0 (xm s)) Hml (le_n _)) as (_ & Hcur & _).
      eapply (xinv_gen s _ t Hi); cbn [xm lk pcs done tkt];
        [by apply p_write_wf|unfold p'; rewrite nlines_write; exact Hln|exact Hm0| | |same_pc| | |none_tac| | |].
      + intros n H1 H2. change (mk p' 0) with (mk (xm s) 0) in H1. rewrite Hl in H2.
        destruct (decide (n ≤ len0 (xm s))) as [Hn|Hn].
        * rewrite Hc by done. apply (des_frame (lk s) _ (xm s)); [|apply Hh|apply Nat.le_refl|by apply Hdes].
          intros Hh'. unfold updf. by case_decide.
        * assert (n = S (len0 (xm s))) as -> by lia. rewrite Hnew. unfold des_ok; simpl.
          split_and!; [done|by rewrite updf_eq| |].
          -- rewrite Hh. exact Hfull.
          -- unfold objv. rewrite Hh. exact Hobj.
      + intros k Hk n H1 H2. change (mk p' 0) with (mk (xm s) 0) in H1. rewrite Hl in H2.
        destruct (decide (n ≤ len0 (xm s))) as [Hn|Hn].
        * rewrite Hc by done. by apply Hdone.
        * assert (n = S (len0 (xm s))) as -> by lia. rewrite Hnew. simpl.
          pose proof (Hdone k Hk (len0 (xm s)) Hml (le_n _)). lia.
      + intros t' r' Hne Ho. apply updf_ne. intros ->. pose proof (Howns t' r Ho). congruence.
      + intros t' o Hne Ho. destruct (Htg t' o Ho) as [Hh' _].
        split; [apply updf_ne; intros ->; congruence|]. rewrite updf_eq. simpl. intros [= Eo].
        by apply (target_not_cidx (xm s) t' (pcs s t') o Hwf (Hth t') Ho).
      + intros o. rewrite updf_eq. simpl. intros [= <-]. unfold updf. by case_decide.
      + intros t' Hne Ht'. apply xtinv_cas; [done|done|exact Hlt| |exact Ht'].
        intros o Ho. destruct (Htg t' o Ho) as [Hh' _]. intros ->. congruence.
      + rewrite updf_eq. simpl. exists (len0 p'). split; [lia|]. intros n' H1 H2.
        assert (n' = S (len0 (xm s))) as -> by lia. rewrite Hnew. simpl. split; [|lia].
        intros Heq. assert (r = (ccn (xm s) (len0 (xm s))).2) as Er by (injection Heq as E'; exact E').
        rewrite Er in Hown. congruence.
    - (* the CAS finds curComb at or past the node *)
      assert (Hown : lk s r = XOwned t) by (apply Howns; by rewrite Hp).
      eapply (xinv_gen s _ t Hi); cbn [xm lk pcs done tkt];
        [done|done|done| |exact Hdone|same_pc| | |none_tac|none_tac|intros ? ? H; exact H|].
      + intros n H1 H2. apply (des_frame (lk s) _ (xm s) (xm s)); [|done|apply Nat.le_refl|by apply Hdes].
        intros Hh. apply updf_held; [congruence|done].
      + intros t' r' Hne Ho. apply updf_ne. intros ->. pose proof (Howns t' r Ho). congruence.
      + intros t' o Hne Ho. destruct (Htg t' o Ho) as [Hh _].
        split; [apply updf_ne; intros ->; congruence| by rewrite updf_eq].
      + rewrite updf_eq. exists (len0 (xm s)). split; [lia|]. intros n' H1 H2.
        assert (n' = len0 (xm s)) as -> by lia. split; [done|exact Hle].
    - (* mutant CXFlushAfterCas only *)
      pose proof (Hth t) as Ht. rewrite Hp in Ht. done.
    - (* pwb(curComb) *)
      pose proof (Hth t) as Ht. rewrite Hp in Ht. simpl in Ht. destruct Ht as (n & Hn & Ha).
      destruct (Htg t o) as [Ho Hu]; [by rewrite Hp|].
      eapply (xinv_gen s _ t Hi); cbn [xm lk pcs done tkt];
        [by apply p_pwb_wf|exact Hln|exact Hm0|exact Hdes|exact Hdone|same_pc|done| |none_tac| | |].
      + intros t' o' Hne Ho'. split; [done|]. rewrite updf_eq. simpl. intros [= Eo].
        apply (Hu t' Hne). by rewrite Ho', Eo.
      + intros o'. rewrite updf_eq. simpl. by intros [= <-].
      + intros t' Hne Ht'. apply (xtinv_frame (xm s)); [done|apply Nat.le_refl| |intros L n' _ Hq; by apply pending_pwb|exact Ht'].
        intros r' _. split; [done|apply Nat.le_refl].
      + rewrite updf_eq. simpl. exists (len0 (xm s)). split; [apply Nat.le_refl|]. split.
        * apply (above_mono _ _ _ n); [exact Ha|exact Hn].
        * left. apply elem_of_cons. left. reflexivity.
    - (* psync *)
      pose proof (Hth t) as Ht. rewrite Hp in Ht. simpl in Ht. destruct Ht as (n & Hn & Ha & Hq).
      destruct (Htg t o) as [Ho Hu]; [by rewrite Hp|].
      set (p' := p_fence (xm s) t).
      assert (H0 : hist p' 0 = hist (xm s) 0) by apply hist_fence.
      assert (Hl : len0 p' = len0 (xm s)) by (unfold len0; by rewrite H0).
      assert (Hc : ∀ n, ccn p' n = ccn (xm s) n) by (intros n'; unfold ccn; by rewrite H0).
      assert (Hm : mk (xm s) 0 ≤ mk p' 0) by apply mk_fence.
      eapply (xinv_gen s _ t Hi); cbn [xm lk pcs done tkt];
        [by apply p_fence_wf|unfold p'; rewrite nlines_fence; exact Hln|lia| | |same_pc|done| |none_tac| | |].
      + intros n' H1 H2. rewrite Hc. rewrite Hl in H2. apply (des_frame (lk s) _ (xm s)); [done|apply hist_fence|apply mk_fence|].
        apply Hdes; lia.
      + intros k Hk n' H1 H2. rewrite Hc. rewrite Hl in H2. apply Hdone; [done|lia|lia].
      + intros t' o' Hne Ho'. split; [done|]. rewrite updf_eq. simpl. intros [= Eo].
        apply (Hu t' Hne). by rewrite Ho', Eo.
      + intros o'. rewrite updf_eq. simpl. by intros [= <-].
      + intros t' Hne Ht'. apply (xtinv_frame (xm s)); [exact H0|exact Hm| | |exact Ht'].
        * intros r' _. split; [apply hist_fence|apply mk_fence].
        * intros L n' HL Hq'. apply pending_fence_any; [done|lia|done].
      + rewrite updf_eq. simpl. apply (above_mono _ _ _ n); [by apply (above_same (xm s))|].
        apply pending_fence_own; [done|lia|done].
    - (* release the replaced Combined, return *)
      pose proof (Hth t) as Ht. rewrite Hp in Ht. simpl in Ht.
      destruct (Htg t o) as [Ho Hu]; [by rewrite Hp|].
      eapply (xinv_gen s _ t Hi); cbn [xm lk pcs done tkt];
        [done|done|done| | |same_pc| | |none_tac|none_tac|intros ? ? H; exact H|by rewrite updf_eq].
      + intros n H1 H2. apply (des_frame (lk s) _ (xm s) (xm s)); [|done|apply Nat.le_refl|by apply Hdes].
        intros Hh. rewrite updf_ne; [done|]. intros E. destruct (Ht n H1 H2) as [Hne _]. apply Hne. by rewrite E.
      + intros k Hk n H1 H2. apply elem_of_cons in Hk as [-> | Hk]; [by destruct (Ht n H1 H2)|by apply Hdone].
      + intros t' r' Hne Ho'. apply updf_ne. intros ->. pose proof (Howns t' o Ho'). congruence.
      + intros t' o' Hne Ho'. split; [|by rewrite updf_eq]. apply updf_ne. intros ->. by apply (Hu t').
    - (* pwb(curComb) on the way out *)
      pose proof (Hth t) as Ht. rewrite Hp in Ht. simpl in Ht. destruct Ht as (n & Hn & Ha).
      eapply (xinv_gen s _ t Hi); cbn [xm lk pcs done tkt];
        [by apply p_pwb_wf|exact Hln|exact Hm0|exact Hdes|exact Hdone|same_pc|done| |none_tac|none_tac| |].
      + intros t' o' Hne Ho'. split; [done|]. by rewrite updf_eq.
      + intros t' Hne Ht'. apply (xtinv_frame (xm s)); [done|apply Nat.le_refl| |intros L n' _ Hq; by apply pending_pwb|exact Ht'].
        intros r' _. split; [done|apply Nat.le_refl].
      + rewrite updf_eq. simpl. exists (len0 (xm s)). split; [apply Nat.le_refl|]. split.
        * apply (above_mono _ _ _ n); [exact Ha|exact Hn].
        * left. apply elem_of_cons. left. reflexivity.
    - (* psync, return *)
      pose proof (Hth t) as Ht. rewrite Hp in Ht. simpl in Ht. destruct Ht as (n & Hn & Ha & Hq).
      set (p' := p_fence (xm s) t).
      assert (H0 : hist p' 0 = hist (xm s) 0) by apply hist_fence.
      assert (Hl : len0 p' = len0 (xm s)) by (unfold len0; by rewrite H0).
      assert (Hc : ∀ n, ccn p' n = ccn (xm s) n) by (intros n'; unfold ccn; by rewrite H0).
      assert (Hm : mk (xm s) 0 ≤ mk p' 0) by apply mk_fence.
      assert (Hcov : n ≤ mk p' 0) by (apply pending_fence_own; [done|lia|done]).
      eapply (xinv_gen s _ t Hi); cbn [xm lk pcs done tkt];
        [by apply p_fence_wf|unfold p'; rewrite nlines_fence; exact Hln|lia| | |same_pc|done| |none_tac|none_tac| |by rewrite updf_eq].
      + intros n' H1 H2. rewrite Hc. rewrite Hl in H2. apply (des_frame (lk s) _ (xm s)); [done|apply hist_fence|apply mk_fence|].
        apply Hdes; lia.
      + intros k Hk n' H1 H2. rewrite Hc. rewrite Hl in H2. apply elem_of_cons in Hk as [-> | Hk].
        * destruct (Ha n') as [_ Hmy]; [lia|lia|done].
        * apply Hdone; [done|lia|lia].
      + intros t' o' Hne Ho'. split; [done|]. by rewrite updf_eq.
      + intros t' Hne Ht'. apply (xtinv_frame (xm s)); [exact H0|exact Hm| | |exact Ht'].
        * intros r' _. split; [apply hist_fence|apply mk_fence].
        * intros L n' HL Hq'. apply pending_fence_any; [done|lia|done].
    - (* a crash *)
      by apply xinv_crash.
  Qed.

  Lemma xinv_reachable s : xreachable NR false false s → xinv s.
  Proof. induction 1 as [|s s' _ IH Hs]; [apply xinv_init|by eapply xinv_step]. Qed.

  Lemma durable_image_consistent_of s keep :
    xinv s → p_crash_ok (xm s) keep →
    p_image cline (xm s) keep IDX < NR ∧
    p_image cline (xm s) keep (OBJ (p_image cline (xm s) keep IDX)) = p_image cline (xm s) keep TK.
  Proof.
    intros Hi Hok. pose proof (Hok 0 ltac:(pose proof (xi_lines _ Hi); unfold nlines in *; lia)) as [H1 H2].
    destruct (xi_des _ Hi (keep 0) H1 H2) as (Hr & _ & Hfull & Hobj).
    change (p_image cline (xm s) keep IDX) with (ccn (xm s) (keep 0)).2.
    change (p_image cline (xm s) keep TK) with (ccn (xm s) (keep 0)).1.
    split; [done|]. set (r := (ccn (xm s) (keep 0)).2) in *.
    pose proof (Hok (S r) ltac:(pose proof (xi_lines _ Hi); unfold nlines in *; lia)) as [H3 H4].
    unfold p_image, persisted. change (cline (OBJ r)) with (S r).
    fold (hist (xm s) (S r)). rewrite take_ge; [done|]. unfold mk, hist in *. lia.
  Qed.

  Lemma completed_durable_of s keep k :
    xinv s → k ∈ done s → p_crash_ok (xm s) keep → k ≤ p_image cline (xm s) keep TK.
  Proof.
    intros Hi Hk Hok. pose proof (Hok 0 ltac:(pose proof (xi_lines _ Hi); unfold nlines in *; lia)) as [H1 H2].
    change (p_image cline (xm s) keep TK) with (ccn (xm s) (keep 0)).1. by apply (xi_done _ Hi).
  Qed.
  (** [DurableImageConsistent]: in every crash image Px86 allows, the
      replica [curComb]'s image designates holds the ticket it names, so
      null recovery ([CxPtm::open]) finds a consistent state. *)
  Theorem cx_px_durable_image_consistent s keep :
    xreachable NR false false s → p_crash_ok (xm s) keep →
    p_image cline (xm s) keep IDX < NR ∧
    p_image cline (xm s) keep (OBJ (p_image cline (xm s) keep IDX)) = p_image cline (xm s) keep TK.
  Proof. intros Hr. by apply durable_image_consistent_of, xinv_reachable. Qed.

  (** [CompletedDurable]: an update that returned, in this epoch or an
      earlier one, is at or before the ticket of every crash image of
      [curComb]. *)
  Theorem cx_px_completed_durable s keep k :
    xreachable NR false false s → k ∈ done s → p_crash_ok (xm s) keep →
    k ≤ p_image cline (xm s) keep TK.
  Proof. intros Hr. by apply completed_durable_of, xinv_reachable. Qed.
End inv.

(** ** The mutants as written: explicit executions *)

(** The runs below are built forwards: each step's reachability hypothesis
    gets the normal form of the state it reaches ([norm_hyp], [PxPersist.v]). *)
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
  let x := cur R in pose proof (xreach_step _ _ _ _ _ R (x_enqueue 2 true false x 0 eq_refl)) as R0. norm_hyp R0.
  let x := cur R0 in pose proof (xreach_step _ _ _ _ _ R0 (x_lock 2 true false x 0 1 1 eq_refl ltac:(lia) eq_refl ltac:(xlt))) as R1. norm_hyp R1.
  let x := cur R1 in pose proof (xreach_step _ _ _ _ _ R1 (x_settle 2 true false x 0 1 1 eq_refl)) as R2. norm_hyp R2.
  let x := cur R2 in pose proof (xreach_step _ _ _ _ _ R2 (x_fence 2 true false x 0 1 1 eq_refl)) as R3. norm_hyp R3.
  let x := cur R3 in pose proof (xreach_step _ _ _ _ _ R3 (x_cas 2 true false x 0 1 1 eq_refl ltac:(xlt))) as R4. norm_hyp R4.
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
  let x := cur R in pose proof (xreach_step _ _ _ _ _ R (x_enqueue 2 false true x 0 eq_refl)) as R0. norm_hyp R0.
  let x := cur R0 in pose proof (xreach_step _ _ _ _ _ R0 (x_lock 2 false true x 0 1 1 eq_refl ltac:(lia) eq_refl ltac:(xlt))) as R1. norm_hyp R1.
  let x := cur R1 in pose proof (xreach_step _ _ _ _ _ R1 (x_settle 2 false true x 0 1 1 eq_refl)) as R2. norm_hyp R2.
  let x := cur R2 in pose proof (xreach_step _ _ _ _ _ R2 (x_pwbrep 2 false true x 0 1 1 eq_refl)) as R3. norm_hyp R3.
  let x := cur R3 in pose proof (xreach_step _ _ _ _ _ R3 (x_fence 2 false true x 0 1 1 eq_refl)) as R4. norm_hyp R4.
  let x := cur R4 in pose proof (xreach_step _ _ _ _ _ R4 (x_cas 2 false true x 0 1 1 eq_refl ltac:(xlt))) as R5. norm_hyp R5.
  let x := cur R5 in pose proof (xreach_step _ _ _ _ _ R5 (x_pwbcc 2 false true x 0 1 0 eq_refl)) as R6. norm_hyp R6.
  let x := cur R6 in pose proof (xreach_step _ _ _ _ _ R6 (x_sync 2 false true x 0 1 0 eq_refl)) as R7. norm_hyp R7.
  let x := cur R7 in pose proof (xreach_step _ _ _ _ _ R7 (x_ret 2 false true x 0 1 0 eq_refl)) as R8. norm_hyp R8.
  eexists _, (λ L, if decide (L = 1) then 0 else 1). split; [exact R8|]. split; [left|]. split.
  - intros L HL. vm_compute in HL. destruct L as [|[|[|L]]]; vm_compute; lia.
  - vm_compute. lia.
Qed.

(** The published order is not vacuous: the same thread, with the
    [pwb(curComb)] and [psync], returns ticket 1, and then every crash image
    is at ticket 1 ([cx_px_completed_durable]). *)
Theorem cx_px_published_completes :
  ∃ s, xreachable 2 false false s ∧ 1 ∈ done s ∧ mk (xm s) 0 = 2.
Proof.
  pose proof (xreach_init 2 false false) as R.
  let x := cur R in pose proof (xreach_step _ _ _ _ _ R (x_enqueue 2 false false x 0 eq_refl)) as R0. norm_hyp R0.
  let x := cur R0 in pose proof (xreach_step _ _ _ _ _ R0 (x_lock 2 false false x 0 1 1 eq_refl ltac:(lia) eq_refl ltac:(xlt))) as R1. norm_hyp R1.
  let x := cur R1 in pose proof (xreach_step _ _ _ _ _ R1 (x_settle 2 false false x 0 1 1 eq_refl)) as R2. norm_hyp R2.
  let x := cur R2 in pose proof (xreach_step _ _ _ _ _ R2 (x_pwbrep 2 false false x 0 1 1 eq_refl)) as R3. norm_hyp R3.
  let x := cur R3 in pose proof (xreach_step _ _ _ _ _ R3 (x_fence 2 false false x 0 1 1 eq_refl)) as R4. norm_hyp R4.
  let x := cur R4 in pose proof (xreach_step _ _ _ _ _ R4 (x_cas 2 false false x 0 1 1 eq_refl ltac:(xlt))) as R5. norm_hyp R5.
  let x := cur R5 in pose proof (xreach_step _ _ _ _ _ R5 (x_pwbcc 2 false false x 0 1 0 eq_refl)) as R6. norm_hyp R6.
  let x := cur R6 in pose proof (xreach_step _ _ _ _ _ R6 (x_sync 2 false false x 0 1 0 eq_refl)) as R7. norm_hyp R7.
  let x := cur R7 in pose proof (xreach_step _ _ _ _ _ R7 (x_ret 2 false false x 0 1 0 eq_refl)) as R8. norm_hyp R8.
  eexists. split; [exact R8|]. split; [left|]. vm_compute. reflexivity.
Qed.

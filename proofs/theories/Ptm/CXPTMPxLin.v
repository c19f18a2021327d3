(** * CX-PTM on Px86: durable linearizability of update and read-only transactions

    [CXPTMPx.v]'s model of CX-PTM on line-granular Px86 persistence
    ([Core/PxPersist.v]), with both mutant switches off (the published
    order, as [impl/perdure-ptm/src/cx/core.rs] runs it), extended with the
    operations and their history: any deterministic sequential object
    ([uexec : UOp → St → St * Val] for update transactions, [rexec : ROp →
    St → Val] for read-only ones), threads [0 .. N-1] for any [N], any
    number [NR ≥ 1] of replicas and any number of crashes; read-only
    transactions both ways the code runs them (direct tries, and a node
    published after them).  For every reachable state ([creachable]) the
    history of invocations, returns and crashes is durably linearizable in
    the sense of [Core/DurableLin.v]:
    - [cx_px_durably_linearizable]: [durably_linearizable spec (erase (xh
      s))], the witness being the model's ghost history with its
      linearization points ([xh]);
    - [cx_px_returned_durable]: an update transaction that returned [v] is
      the node of some ticket [k] of the queue, [v] is the result the queue
      order gives it, and every crash image Px86 allows of [curComb] is at
      ticket [k] or later (so null recovery keeps it);
    - [cx_px_wf]: the histories are well formed ([History.wf], what
      [perdure check-history] accepts), so [cx_px_linearizable_crash_free]:
      a crash-free history is linearizable in the classic sense
      ([DurableLin.v]'s [linearizable], by
      [durably_linearizable_iff_linearizable]);
    - [cx_px_lin_not_vacuous]: the theorems are not about an empty set of
      histories: for a counter, two threads and two replicas, an explicit
      run of 20 steps where an update returns after its CAS and [psync], a
      direct read and a published read return the value it wrote, and a
      crash follows.

    The model ([cstep]): a state is [CXPTMPx.v]'s [xstate] ([cx]) plus
    ghost state: the nodes of the queue in ticket order ([cq]: the node of
    ticket [S j] at [j], an update or a published read, cut at the
    recovered ticket by a crash), each thread's operation ([gp]), the
    history with points ([xh]), the next operation id and the ticket the
    points reach ([pl]).  The steps, with the seed's lines
    ([/work/shared/seeds/000_f4454436cd5ee45b.txt]) and the Rust functions
    (files of [impl/perdure-ptm/src/cx/]):
    - [c_invoke]: an update transaction is invoked ([ptm.rs]
      [CxPtm::update_with], [core.rs] [Cx::apply_update]);
    - [c_enqueue]: step 1 (seed l. 132), its node gets the next ticket
      ([CXPTMPx.v]'s [x_enqueue]; [Cx::publish]);
    - [c_mid]: every other step of [CXPTMPx.v]'s [xstep] that keeps a
      thread whose node is its point inside its operation: steps 2–6
      (l. 133–137) and the exits' [pwb(curComb)] (l. 159–161) — [x_lock],
      [x_done], [x_apply], [x_settle], [x_pwbrep], [x_fence], [x_cas],
      [x_cas_fail], [x_pwbcc], [x_sync], [x_fin], whose Rust functions
      [CXPTMPx.v] lists ([Cx::lock_any], [Cx::update_on], [Cx::install],
      [Cx::collect]);
    - [c_ret]: return after the thread's own CAS and [psync] ([x_ret];
      [Cx::install]'s return of the node's result); [c_finsync]: return
      after another thread installed the node, once [curComb] is synced
      ([x_finsync]; [Cx::collect], [Cx::ensure_durable]);
    - [c_rinvoke], [c_read]: a read-only transaction is invoked ([ptm.rs]
      [CxPtm::read_with], [core.rs] [Cx::apply_read]); a direct try reads
      [curComb], takes the shared lock of the [Combined] it names, finds
      [curComb] unchanged and runs on its replica (R{1}, R{3},
      l. 141–143; [Cx::read_designated], [ptm.rs] [read_on]), in one step
      (the failed tries change nothing and are not steps);
    - [c_publish]: R{2} (l. 142, 145), after its direct tries the read
      publishes a node, which gets the next ticket ([x_enqueue];
      [Cx::apply_published_read], [Cx::publish]); its [way] says how it
      will return: with the node's result ([Cx::collect], the node is its
      linearization point and the thread then follows the update path's
      [c_mid] and [c_finsync]) or with a later direct try's ([c_read]; the
      node is no point).  [way] is a prophecy, as Redo-PTM's
      [PublishRead] in [RedoPTMPx.v]: every run of the code has a run of
      the model that prophesied right;
    - [c_rpwb], [c_rsync]: a direct read's [pwb(curComb)], [psync] and
      return ([Cx::read_designated]'s [Cx::ensure_durable(seq(cur))]); the
      thread's [xstate] is [XIdle] or, for a published read, [XEnq], and
      these two steps are [ystep]'s [y_pwb], [y_fence] (which returns
      the thread to [XIdle]);
    - [c_crash]: [CXPTMPx.v]'s [x_crash], a crash keeping any image Px86
      allows and null recovery ([ptm.rs] [CxPtm::open], [Cx::build]).

    Where the points are: lazily, when an operation returns or a crash
    happens, up to the ticket the operation returned with (made durable
    first: its own [psync] after the CAS, or [Cx::ensure_durable]) or the
    ticket the crash recovered ([adv]).  The points of ticket [k] are its
    node's, if the node is a point (an update, or a published read that
    collects), with the result of the queue order, then the direct reads
    that read the replica of ticket [k]; a read of the ticket the points
    are at gets its point at once ([c_read]).  A crash never loses a point:
    [pl] is at or before the ticket of every crash image of [curComb]
    ([j_pl]).

    The invariant: [CXPTMPx.v]'s [xinv], for the steps of [ystep] (its
    [xstep], and a reader's [pwb]/[fence] of line 0 from outside any
    replica, [xinv_pwb], [xinv_fence]); [xaux]: the tickets on line 0 grow
    and were handed out, a thread's ticket was handed out; and [inv2]: the
    history with points is [prefix_ok point_ok] and its points run the
    object to the state of ticket [pl] ([j_ok], [j_run]); the queue holds
    one node per ticket handed out ([j_len]); ids are fresh, unique, and
    each invoked once ([j_nid], [j_inv1], [j_qnd], [j_qinv]); the nodes
    that are points before [pl] have their points with their queue-order
    results, those after none ([j_qpt], [j_qnpt]); [pl] is at or before
    every crash image of [curComb] ([j_pl]); per thread ([ginv]): a thread
    whose node is its point is at its ticket's node; a read's value is its
    ticket's state, it has a point exactly when [pl] reached its ticket,
    its ticket is at or before [curComb]'s, its node if published is no
    point, and after its [pwb(curComb)] the write-back covers a position
    of line 0 at or after its ticket; [j_xl]: an update's point is its
    node's, before [pl], with its queue-order result.  For [cx_px_wf],
    [inv3]: a thread's operation is exactly its pending one in the history,
    not finished ([History.v]'s [cur_ops], kept by its lemmas).

    What the model abstracts (beyond [CXPTMPx.v]'s list: a replica's
    content is a ticket, one cache line per replica, the turn queue, hazard
    pointers and reclamation, the locks' internals and retry loops,
    sequentially consistent steps):
    - values: the result a node's operation returns is the one the queue
      order gives it ([resq]); that the node holds it is [CXPTM.v]'s
      [cx_results_correct], in that model (for update nodes), not here; a
      direct read's value is the state of the ticket its replica holds
      ([objv]; that a replica at ticket [k] holds the state of the first
      [k] nodes is [CXPTM.v]'s [cx_applied_in_order]);
    - the durable watermark of [Cx::ensure_durable] (which skips the
      [pwb]/[psync] when another thread's [psync] covered the ticket): the
      model always writes back and fences;
    - [c_finsync] and [c_rsync] make a [psync] and the return after it
      one step (as [CXPTMPx.v]'s [x_finsync]); a direct read is one step
      (the shared lock and the re-check of [curComb] keep the replica
      still while it runs); a thread whose published read collects may in
      the model also take the update path's steps (lock, apply, CAS),
      which the code's [Cx::apply_published_read] does not: more runs;
    - a panicking closure; liveness. *)
From stdpp Require Import base list list_numbers decidable.
From Coq Require Import Lia.
From perdure.Core Require Import History DurableLin Px86 PxPersist.
From perdure.Ptm Require Import CXPTMPx.

(** ** The ticket a thread of [CXPTMPx.v] works for *)

Definition tick (c : xpc) : option nat :=
  match c with
  | XIdle => None
  | XEnq my | XApply my _ | XPwbRep my _ | XFence my _ | XCas my _ | XLate my _ _
  | XPwbCC my _ | XSync my _ | XRet my _ | XFin my | XFinSync my => Some my
  end.

(** ** Line 0 only grows, its mark only rises, a pending write-back stays *)

Definition mem_frame (p p' : pmem) : Prop :=
  hist p 0 `prefix_of` hist p' 0 ∧ mk p 0 ≤ mk p' 0 ∧ nlines p' = nlines p ∧
  ∀ t n, pending p t 0 n → pending p' t 0 n.

Lemma mf_refl p : mem_frame p p.
Proof. split_and!; done. Qed.

Lemma mf_store p r v : mem_frame p (p_store cline p (OBJ r) v).
Proof.
  split_and!.
  - unfold p_store. change (cline (OBJ r)) with (S r). by rewrite hist_write_other.
  - done.
  - apply nlines_write.
  - intros t n Hp. by apply pending_write.
Qed.

Lemma mf_write0 p w : 0 < nlines p → mem_frame p (p_write p 0 w).
Proof.
  intros Hl. split_and!.
  - rewrite hist_write_same by done. by eexists.
  - done.
  - apply nlines_write.
  - intros t n Hp. by apply pending_write.
Qed.

Lemma mf_pwb p t x : mem_frame p (p_pwb cline p t x).
Proof. split_and!; [done | done | done |]. intros t' n Hp. by apply pending_pwb. Qed.

Lemma mf_fence p t : p_wf p → 0 < nlines p → mem_frame p (p_fence p t).
Proof.
  intros Hwf Hl. split_and!.
  - by rewrite hist_fence.
  - apply mk_fence.
  - apply nlines_fence.
  - intros t' n Hp. by apply pending_fence_any.
Qed.

Lemma ccn_prefix p p' n : hist p 0 `prefix_of` hist p' 0 → n ≤ len0 p → ccn p' n = ccn p n.
Proof.
  intros [l Hl] Hn. unfold ccn, ccl. rewrite Hl. unfold len0 in Hn. by rewrite take_app_le.
Qed.

Lemma len0_prefix p p' : hist p 0 `prefix_of` hist p' 0 → len0 p ≤ len0 p'.
Proof. intros Hp. by apply prefix_length. Qed.

Lemma ccn_crash p keep n : 0 < nlines p → n ≤ keep 0 → ccn (crash_mem p keep) n = ccn p n.
Proof.
  intros Hl Hn. unfold ccn, ccl. rewrite crash_hist by done. rewrite take_take.
  by replace (n `min` keep 0) with n by lia.
Qed.

Lemma len0_crash p keep : 0 < nlines p → keep 0 ≤ len0 p → len0 (crash_mem p keep) = keep 0.
Proof. intros Hl Hk. unfold len0. rewrite crash_hist by done. rewrite take_length. unfold len0 in Hk. lia. Qed.

(** A thread outside any replica: idle, or its node enqueued and nothing
    locked (a published read that reads directly). *)
Definition outside (c : xpc) : Prop := c = XIdle ∨ ∃ my, c = XEnq my.

Lemma outside_owns c : outside c → owns c = None.
Proof. by intros [-> | [my ->]]. Qed.
Lemma outside_target c : outside c → target c = None.
Proof. by intros [-> | [my ->]]. Qed.
Lemma outside_xtinv NR p t c : outside c → xtinv NR p t c.
Proof. by intros [-> | [my ->]]. Qed.

Section ymodel.
  Context (NR : nat) (HNR : 0 < NR).

  (** ** The steps of [CXPTMPx.v], and the write-back and fence of a thread
      outside an update (a read-only transaction's [Cx::ensure_durable]) *)

  Inductive ystep : xstate → xstate → Prop :=
    | y_x x x' : xstep NR false false x x' → ystep x x'
    | y_pwb x t : outside (pcs x t) →
        ystep x (XState (p_pwb cline (xm x) t TK) (tkt x) (lk x) (pcs x) (done x))
    | y_fence x t : outside (pcs x t) →
        ystep x (XState (p_fence (xm x) t) (tkt x) (lk x) (updf (pcs x) t XIdle) (done x)).

  Inductive yreach : xstate → Prop :=
    | yr_init : yreach (xinit NR)
    | yr_step x x' : yreach x → ystep x x' → yreach x'.

  Lemma xinv_pwb x t :
    xinv NR x → outside (pcs x t) →
    xinv NR (XState (p_pwb cline (xm x) t TK) (tkt x) (lk x) (pcs x) (done x)).
  Proof.
    intros Hi Hp. pose proof Hi as [Hwf Hln Hm0 Hdes Hdone Howns Htg Hth].
    eapply (xinv_gen NR x _ t Hi); cbn [xm lk pcs done tkt];
      [by apply p_pwb_wf|exact Hln|exact Hm0|exact Hdes|exact Hdone|done|done| | | | |].
    - intros t' o Hne Ho. split; [done|]. by rewrite outside_target.
    - by rewrite outside_owns.
    - by rewrite outside_target.
    - intros t' Hne Ht'. apply (xtinv_frame NR HNR (xm x));
        [done|apply Nat.le_refl| |intros L n' _ Hq; by apply pending_pwb|exact Ht'].
      intros r' _. split; [done|apply Nat.le_refl].
    - by apply outside_xtinv.
  Qed.

  Lemma xinv_fence x t :
    xinv NR x → outside (pcs x t) →
    xinv NR (XState (p_fence (xm x) t) (tkt x) (lk x) (updf (pcs x) t XIdle) (done x)).
  Proof.
    intros Hi Hp. pose proof Hi as [Hwf Hln Hm0 Hdes Hdone Howns Htg Hth].
    assert (Hl0 : 0 < nlines (xm x)) by lia.
    set (p' := p_fence (xm x) t).
    assert (H0 : hist p' 0 = hist (xm x) 0) by apply hist_fence.
    assert (Hl : len0 p' = len0 (xm x)) by (unfold len0; by rewrite H0).
    assert (Hc : ∀ n, ccn p' n = ccn (xm x) n) by (intros n'; unfold ccn; by rewrite H0).
    assert (Hm : mk (xm x) 0 ≤ mk p' 0) by apply mk_fence.
    eapply (xinv_gen NR x _ t Hi); cbn [xm lk pcs done tkt];
      [by apply p_fence_wf|unfold p'; rewrite nlines_fence; exact Hln|lia| | | | | | | | |].
    - intros n' H1 H2. rewrite Hc. rewrite Hl in H2.
      apply (des_frame NR HNR (lk x) _ (xm x)); [done|apply hist_fence|apply mk_fence|].
      apply Hdes; lia.
    - intros k Hk n' H1 H2. rewrite Hc. rewrite Hl in H2. apply Hdone; [done|lia|lia].
    - intros t' Hne. by rewrite updf_ne.
    - done.
    - intros t' o Hne Ho. split; [done|]. by rewrite updf_eq.
    - by rewrite updf_eq.
    - by rewrite updf_eq.
    - intros t' Hne Ht'. apply (xtinv_frame NR HNR (xm x)); [exact H0|exact Hm| | |exact Ht'].
      + intros r' _. split; [apply hist_fence|apply mk_fence].
      + intros L n' HL Hq'. apply pending_fence_any; [done|lia|done].
    - by rewrite updf_eq.
  Qed.

  Lemma xinv_ystep x x' : xinv NR x → ystep x x' → xinv NR x'.
  Proof.
    intros Hi Hs. destruct Hs as [x0 x1 Hs | x0 t Hp | x0 t Hp].
    - by apply (xinv_step NR HNR x0).
    - by apply xinv_pwb.
    - by apply xinv_fence.
  Qed.

  Lemma xinv_yreach x : yreach x → xinv NR x.
  Proof. induction 1; [apply (xinv_init NR HNR) | by eapply xinv_ystep]. Qed.

  (** Every step but a crash keeps [mem_frame]. *)
  Lemma ystep_mem x x' :
    xinv NR x → ystep x x' →
    (∃ keep, p_crash_ok (xm x) keep ∧ x' = recover x keep) ∨ mem_frame (xm x) (xm x').
  Proof.
    intros Hi Hs. pose proof (xi_wf _ _ Hi) as Hwf.
    assert (Hl0 : 0 < nlines (xm x)) by (pose proof (xi_lines _ _ Hi); lia).
    destruct Hs as [x x' Hs | x t Hp | x t Hp]; cbn [xm]; [| right; apply mf_pwb | right; by apply mf_fence].
    destruct Hs as [s t Hp | s t my r Hp Hr Hlk Hlt | s t my Hp Hle | s t my r v Hp | s t my r Hp
      | s t my r Hp | s t my r Hp | s t my r Hp Hlt | s t my r Hp Hle | s t my r o Hp | s t my o Hp
      | s t my o Hp | s t my o Hp | s t my Hp | s t my Hp | s keep Hok]; cbn [xm];
      try (right; apply mf_refl); try (right; apply mf_store); try (right; apply mf_pwb);
      try (right; by apply mf_fence).
    - right. by apply mf_write0.
    - left. by exists keep.
  Qed.

  (** ** Tickets on line 0 grow and were handed out *)

  Record xaux (x : xstate) : Prop := {
    xa_mono : ∀ n1 n2, n1 ≤ n2 → n2 ≤ len0 (xm x) → (ccn (xm x) n1).1 ≤ (ccn (xm x) n2).1;
    xa_tkt : ∀ n, n ≤ len0 (xm x) → (ccn (xm x) n).1 ≤ tkt x;
    xa_thr : ∀ t my, tick (pcs x t) = Some my → my ≤ tkt x;
  }.

  Lemma xaux_init : xaux (xinit NR).
  Proof.
    split; cbn [xm tkt pcs xinit].
    - intros n1 n2 H1 H2. unfold len0, hist, line_hist in H2. simpl in H2.
      destruct n1 as [|[]], n2 as [|[]]; try lia; vm_compute; lia.
    - intros n Hn. unfold len0, hist, line_hist in Hn. simpl in Hn.
      destruct n as [|[]]; try lia; vm_compute; lia.
    - done.
  Qed.

  Lemma xaux_frame x x' :
    xaux x → hist (xm x') 0 = hist (xm x) 0 → tkt x ≤ tkt x' →
    (∀ t my, tick (pcs x' t) = Some my → my ≤ tkt x') → xaux x'.
  Proof.
    intros [Hm Ht _] Hh Hk Hthr. split; [| | done]; unfold len0, ccn; rewrite Hh; [done |].
    intros n Hn. etrans; [by apply Ht | done].
  Qed.

  Lemma tick_updf (f : nat → xpc) t c t' my :
    tick (updf f t c t') = Some my → (t' = t ∧ tick c = Some my) ∨ tick (f t') = Some my.
  Proof. unfold updf. case_decide; [subst; by left | by right]. Qed.

  Lemma xaux_step x x' : xinv NR x → xaux x → ystep x x' → xaux x'.
  Proof.
    intros Hi Ha Hs. pose proof (xi_wf _ _ Hi) as Hwf.
    assert (Hl0 : 0 < nlines (xm x)) by (pose proof (xi_lines _ _ Hi); lia).
    pose proof Ha as [Hmono Htkt Hthr].
    destruct Hs as [x x' Hs | x t Hp | x t Hp];
      [| apply (xaux_frame x); [done|done|done|exact Hthr]
       | apply (xaux_frame x); [done|apply hist_fence|done|]].
    2: { intros t' my [[_ [=]] | Hmy]%tick_updf. by apply (Hthr t'). }
    (* a thread's next pc has the same ticket, or none *)
    assert (∀ t c, (∀ my, tick c = Some my → tick (pcs x t) = Some my) →
              ∀ t' my, tick (updf (pcs x) t c t') = Some my → my ≤ tkt x) as Hupd.
    { intros t c Hc t' my [[-> Hmy] | Hmy]%tick_updf; [apply (Hthr t); by apply Hc | by apply (Hthr t')]. }
    destruct Hs as [s t Hp | s t my r Hp Hr Hlk Hlt | s t my Hp Hle | s t my r v Hp | s t my r Hp
      | s t my r Hp | s t my r Hp | s t my r Hp Hlt | s t my r Hp Hle | s t my r o Hp | s t my o Hp
      | s t my o Hp | s t my o Hp | s t my Hp | s t my Hp | s keep Hok]; cbn [xm tkt pcs].
    - (* enqueue *)
      apply (xaux_frame s); cbn [xm tkt pcs]; [done|done|simpl; lia|]. intros t' my [[-> [= <-]] | Hmy]%tick_updf; [done|].
      apply Hthr in Hmy. simpl. lia.
    - apply (xaux_frame s); cbn [xm tkt pcs]; [done|done|done|]. apply (Hupd t). rewrite Hp. done.
    - apply (xaux_frame s); cbn [xm tkt pcs]; [done|done|done|]. apply (Hupd t). rewrite Hp. done.
    - apply (xaux_frame s); cbn [xm tkt pcs]; [done| |done|exact Hthr].
      unfold p_store. change (cline (OBJ r)) with (S r). by rewrite hist_write_other.
    - apply (xaux_frame s); cbn [xm tkt pcs]; [done| |done|]; [unfold p_store; change (cline (OBJ r)) with (S r); by rewrite hist_write_other|].
      apply (Hupd t). rewrite Hp. done.
    - apply (xaux_frame s); cbn [xm tkt pcs]; [done|done|done|]. apply (Hupd t). rewrite Hp. done.
    - apply (xaux_frame s); cbn [xm tkt pcs]; [done|apply hist_fence|done|]. apply (Hupd t). rewrite Hp. done.
    - (* the CAS: a ticket after curComb's, handed out *)
      assert (Hmy : my ≤ tkt s) by (apply (Hthr t); by rewrite Hp).
      change (chead s) with (ccn (xm s) (len0 (xm s))).1 in Hlt.
      set (p' := p_write (xm s) 0 [(TK, my); (IDX, r)]).
      assert (E : hist p' 0 = hist (xm s) 0 ++ [[(TK, my); (IDX, r)]]) by (by apply hist_write_same).
      assert (Hl : len0 p' = S (len0 (xm s))) by (unfold len0; rewrite E, app_length; simpl; lia).
      assert (Hc : ∀ n, n ≤ len0 (xm s) → ccn p' n = ccn (xm s) n)
        by (intros n Hn; unfold ccn; rewrite E; by apply ccl_app).
      assert (Hnew : ccn p' (S (len0 (xm s))) = (my, r)) by (unfold ccn; rewrite E; apply ccl_snoc).
      split; cbn [xm tkt pcs]; fold p'.
      + intros n1 n2 H1 H2. rewrite Hl in H2.
        destruct (decide (n2 ≤ len0 (xm s))).
        * rewrite !Hc by lia. by apply Hmono.
        * assert (n2 = S (len0 (xm s))) as -> by lia. rewrite Hnew. cbn [fst].
          destruct (decide (n1 ≤ len0 (xm s))); [| assert (n1 = S (len0 (xm s))) as -> by lia; rewrite Hnew; cbn [fst]; lia].
          rewrite Hc by done. pose proof (Hmono n1 (len0 (xm s)) ltac:(done) ltac:(done)). lia.
      + intros n Hn. rewrite Hl in Hn. destruct (decide (n ≤ len0 (xm s))).
        * rewrite Hc by done. by apply Htkt.
        * assert (n = S (len0 (xm s))) as -> by lia. rewrite Hnew. done.
      + apply (Hupd t). rewrite Hp. done.
    - apply (xaux_frame s); cbn [xm tkt pcs]; [done|done|done|]. apply (Hupd t). rewrite Hp. done.
    - apply (xaux_frame s); cbn [xm tkt pcs]; [done|done|done|]. apply (Hupd t). rewrite Hp. done.
    - apply (xaux_frame s); cbn [xm tkt pcs]; [done|done|done|]. apply (Hupd t). rewrite Hp. done.
    - apply (xaux_frame s); cbn [xm tkt pcs]; [done|apply hist_fence|done|]. apply (Hupd t). rewrite Hp. done.
    - apply (xaux_frame s); cbn [xm tkt pcs]; [done|done|done|]. apply (Hupd t). rewrite Hp. done.
    - apply (xaux_frame s); cbn [xm tkt pcs]; [done|done|done|]. apply (Hupd t). rewrite Hp. done.
    - apply (xaux_frame s); cbn [xm tkt pcs]; [done|apply hist_fence|done|]. apply (Hupd t). rewrite Hp. done.
    - (* a crash: line 0 cut at [keep 0], tickets restart from its ticket *)
      destruct (Hok 0 Hl0) as [Hk1 Hk2]. fold (mk (xm s) 0) in Hk1. fold (hist (xm s) 0) (len0 (xm s)) in Hk2.
      unfold recover. split; cbn [xm tkt pcs].
      + intros n1 n2 H1 H2. rewrite len0_crash in H2 by done. rewrite !ccn_crash by (done || lia).
        apply Hmono; lia.
      + intros n Hn. rewrite len0_crash in Hn by done. rewrite ccn_crash by done.
        change (ccl (hist (xm s) 0) (keep 0)) with (ccn (xm s) (keep 0)). apply Hmono; lia.
      + done.
  Qed.

  Lemma yreach_inv x : yreach x → xinv NR x ∧ xaux x.
  Proof.
    induction 1 as [|x x' _ [IH1 IH2] Hs].
    - split; [apply (xinv_init NR HNR) | apply xaux_init].
    - split; [by eapply xinv_ystep | by eapply xaux_step].
  Qed.

  (** A step of [CXPTMPx.v] inside one thread's update: no ticket handed
      out, no update returned, every thread keeps its ticket. *)
  Lemma mid_step x x' t :
    xstep NR false false x x' → pcs x t ≠ XIdle → pcs x' t ≠ XIdle →
    (∀ t', t' ≠ t → pcs x' t' = pcs x t') →
    tkt x' = tkt x ∧ done x' = done x ∧
    ∀ t', tick (pcs x' t') = tick (pcs x t') ∧ (pcs x' t' = XIdle ↔ pcs x t' = XIdle).
  Proof.
    intros Hs Hn Hn' Hoth.
    assert (∀ (f : nat → xpc) t0 c, f t0 ≠ XIdle → c ≠ XIdle → tick c = tick (f t0) →
              ∀ t', tick (updf f t0 c t') = tick (f t') ∧ (updf f t0 c t' = XIdle ↔ f t' = XIdle)) as Hupd.
    { intros f t0 c H1 H2 H3 t'. unfold updf. case_decide; [subst; split; [done | split; done] | done]. }
    destruct Hs as [s t0 Hp | s t0 my r Hp Hr Hlk Hlt | s t0 my Hp Hle | s t0 my r v Hp | s t0 my r Hp
      | s t0 my r Hp | s t0 my r Hp | s t0 my r Hp Hlt | s t0 my r Hp Hle | s t0 my r o Hp | s t0 my o Hp
      | s t0 my o Hp | s t0 my o Hp | s t0 my Hp | s t0 my Hp | s keep Hok]; cbn [tkt done pcs] in *;
      try (split; [done | split; [done | apply Hupd; [by rewrite Hp | done | by rewrite Hp]]]).
    - (* enqueue *)
      exfalso. destruct (decide (t0 = t)) as [-> | Hne]; [done |].
      specialize (Hoth t0 Hne). rewrite updf_eq in Hoth. congruence.
    - done.
    - (* return *)
      exfalso. destruct (decide (t0 = t)) as [-> | Hne]; [by rewrite updf_eq in Hn' |].
      specialize (Hoth t0 Hne). rewrite updf_eq in Hoth. congruence.
    - exfalso. destruct (decide (t0 = t)) as [-> | Hne]; [by rewrite updf_eq in Hn' |].
      specialize (Hoth t0 Hne). rewrite updf_eq in Hoth. congruence.
    - (* a crash *)
      done.
  Qed.
End ymodel.

(** ** The operations: update and read-only transactions *)

Inductive cop (UOp ROp : Type) := Upd (u : UOp) | Rd (r : ROp).
Global Arguments Upd {_ _} _.
Global Arguments Rd {_ _} _.

Section cx_px_lin.
  Context {St UOp ROp Val : Type}.
  Context (init : St) (uexec : UOp → St → St * Val) (rexec : ROp → St → Val).
  Context (N NR : nat) (HNR : 0 < NR).

  Notation op := (cop UOp ROp).

  (** The sequential specification: an update transaction's result and
      next state, a read-only one's result. *)
  Definition op_step (σ : St) (o : op) (v : Val) (σ' : St) : Prop :=
    match o with Upd u => uexec u σ = (σ', v) | Rd r => σ' = σ ∧ v = rexec r σ end.
  Definition spec : seq_spec St op Val := SeqSpec init op_step.

  Inductive runs_to : St → list (op * Val) → St → Prop :=
    | runs_to_nil σ : runs_to σ [] σ
    | runs_to_cons σ o v l σ1 σ' : op_step σ o v σ1 → runs_to σ1 l σ' → runs_to σ ((o, v) :: l) σ'.

  Lemma runs_to_app σ l1 σ1 l2 σ2 : runs_to σ l1 σ1 → runs_to σ1 l2 σ2 → runs_to σ (l1 ++ l2) σ2.
  Proof. induction 1; simpl; [done |]. intros. econstructor; [done |]. auto. Qed.

  Lemma runs_to_runs σ l σ' : runs_to σ l σ' → runs spec σ l.
  Proof. induction 1; econstructor; done. Qed.

  (** ** The queue: node [j] (ticket [S j]) and the state after [k] nodes *)

  (** A node: an update transaction, or a published read-only one; [pt]:
      whether the node is the read's linearization point (it returns the
      node's result, [Cx::collect]) or not (it returns what a direct read
      gives, [Cx::read_designated]). *)
  Inductive qop := QU (u : UOp) | QR (r : ROp) (pt : bool).

  Definition qop_op (e : qop) : op := match e with QU u => Upd u | QR r _ => Rd r end.
  Definition qpt (e : qop) : bool := match e with QU _ => true | QR _ b => b end.
  Definition qstep (e : qop) (σ : St) : St := match e with QU u => (uexec u σ).1 | QR _ _ => σ end.

  Definition runq (σ : St) (q : list (opid * qop)) : St := foldl (λ σ e, qstep e.2 σ) σ q.
  Definition stq (q : list (opid * qop)) (k : nat) : St := runq init (take k q).
  (** The result of node [j], [e], in the queue order ([CXPTM.v]'s
      [cx_results_correct]: the result its node holds). *)
  Definition resq (q : list (opid * qop)) (j : nat) (e : qop) : Val :=
    match e with QU u => (uexec u (stq q j)).2 | QR r _ => rexec r (stq q j) end.

  Lemma stq_S q j i e : q !! j = Some (i, e) → stq q (S j) = qstep e (stq q j).
  Proof. intros Hj. unfold stq, runq. rewrite (take_S_r _ _ _ Hj), foldl_app. done. Qed.

  Lemma stq_app q l k : k ≤ length q → stq (q ++ l) k = stq q k.
  Proof. intros Hk. unfold stq. by rewrite take_app_le. Qed.

  Lemma stq_take q c k : k ≤ c → stq (take c q) k = stq q k.
  Proof. intros Hk. unfold stq. rewrite take_take. by replace (k `min` c) with k by lia. Qed.

  Lemma resq_take q c j e : j ≤ c → resq (take c q) j e = resq q j e.
  Proof. intros Hj. unfold resq. by rewrite stq_take. Qed.

  Lemma resq_app q l j e : j ≤ length q → resq (q ++ l) j e = resq q j e.
  Proof. intros Hj. unfold resq. by rewrite stq_app. Qed.

  Lemma qop_step q j i e : q !! j = Some (i, e) → op_step (stq q j) (qop_op e) (resq q j e) (stq q (S j)).
  Proof.
    intros Hj. rewrite (stq_S _ _ _ _ Hj). destruct e as [u | r b]; simpl; [apply surjective_pairing | done].
  Qed.

  (** ** The threads' operations (ghost) *)

  Inductive gpc :=
    | GNone
    (** an update transaction invoked, its node not yet enqueued *)
    | GInv (i : opid) (u : UOp)
    (** its node [e] enqueued, the point of its operation ([qpt e]): its
        ticket is the [CXPTMPx.v] thread's *)
    | GUpd (i : opid) (e : qop)
    (** a read-only transaction invoked (its direct tries) *)
    | GRInv (i : opid) (r : ROp)
    (** it published a node that is not its point, and reads directly *)
    | GPub (i : opid) (r : ROp)
    (** it read [v] on the replica of ticket [c]; [sy]: the position of
        line 0 at its [pwb(curComb)], once issued *)
    | GRd (i : opid) (r : ROp) (c : nat) (v : Val) (sy : option nat).

  Record cstate := CState {
    cx : xstate;                    (* CXPTMPx.v's state *)
    cq : list (opid * qop);         (* ghost: the nodes of the queue, ticket [S j] at [j] *)
    gp : nat → gpc;                 (* ghost: each thread's operation *)
    xh : list (xevent op Val);      (* ghost: the history with linearization points *)
    nid : nat;                      (* the next operation id *)
    pl : nat;                       (* the points reach the state of this ticket *)
  }.

  (** A read-only transaction that has read, with its ticket. *)
  Definition rd_at (g : gpc) : option (opid * ROp * nat * Val) :=
    match g with GRd i r c v _ => Some (i, r, c, v) | _ => None end.

  (** ** The points a return or a crash places: for each ticket from
      [pl + 1] on, its node if it is a point, then the direct reads of its
      replica *)

  Definition upt (q : list (opid * qop)) (j : nat) : list (opid * op * Val) :=
    match q !! j with Some (i, e) => if qpt e then [(i, qop_op e, resq q j e)] else [] | None => [] end.
  Definition rpt (c : nat) (g : gpc) : list (opid * op * Val) :=
    match rd_at g with Some (i, r, c', v) => if decide (c' = c) then [(i, Rd r, v)] else [] | None => [] end.
  Definition rpts (g : nat → gpc) (c : nat) : list (opid * op * Val) :=
    mjoin ((λ t, rpt c (g t)) <$> seq 0 N).
  Definition advl (s : cstate) (b : nat) : list (opid * op * Val) :=
    mjoin ((λ j, upt (cq s) j ++ rpts (gp s) (S j)) <$> seq (pl s) (b - pl s)).
  Definition to_xl (p : opid * op * Val) : xevent op Val := XL p.1.1 p.1.2 p.2.
  Definition adv (s : cstate) (b : nat) : list (xevent op Val) := to_xl <$> advl s b.

  (** ** The steps *)

  Inductive cstep : cstate → cstate → Prop :=
    (* an update transaction is invoked (ptm.rs CxPtm::update_with) *)
    | c_invoke s t u :
        t < N → gp s t = GNone →
        cstep s (CState (cx s) (cq s) (updf (gp s) t (GInv (nid s) u))
                   (xh s ++ [XE (Invoke (nid s) t (Upd u))]) (S (nid s)) (pl s))
    (* step 1: its node gets the next ticket (x_enqueue; Cx::publish) *)
    | c_enqueue s t i u :
        gp s t = GInv i u → pcs (cx s) t = XIdle →
        cstep s (CState (XState (xm (cx s)) (S (tkt (cx s))) (lk (cx s))
                            (updf (pcs (cx s)) t (XEnq (S (tkt (cx s))))) (done (cx s)))
                   (cq s ++ [(i, QU u)]) (updf (gp s) t (GUpd i (QU u))) (xh s) (nid s) (pl s))
    (* steps 2–6 and the exits' persistence of a thread whose node is its
       point: every other step of CXPTMPx.v's [xstep] that keeps the thread
       inside its operation (x_lock, x_done, x_apply, x_settle, x_pwbrep,
       x_fence, x_cas, x_cas_fail, x_pwbcc, x_sync, x_fin; their seed steps
       and Rust functions are listed in CXPTMPx.v) *)
    | c_mid s t x' i e :
        gp s t = GUpd i e →
        xstep NR false false (cx s) x' → pcs (cx s) t ≠ XIdle → pcs x' t ≠ XIdle →
        (∀ t', t' ≠ t → pcs x' t' = pcs (cx s) t') →
        cstep s (CState x' (cq s) (gp s) (xh s) (nid s) (pl s))
    (* return after installing (x_ret; Cx::install's return of the node's result) *)
    | c_ret s t my o i e :
        pcs (cx s) t = XRet my o → gp s t = GUpd i e →
        cstep s (CState (XState (xm (cx s)) (tkt (cx s)) (updf (lk (cx s)) o XFree)
                            (updf (pcs (cx s)) t XIdle) (my :: done (cx s)))
                   (cq s) (updf (gp s) t GNone)
                   (xh s ++ adv s (pl s `max` my) ++ [XE (Return i (resq (cq s) (pred my) e))])
                   (nid s) (pl s `max` my))
    (* return after another thread installed the node (x_finsync; Cx::collect) *)
    | c_finsync s t my i e :
        pcs (cx s) t = XFinSync my → gp s t = GUpd i e →
        cstep s (CState (XState (p_fence (xm (cx s)) t) (tkt (cx s)) (lk (cx s))
                            (updf (pcs (cx s)) t XIdle) (my :: done (cx s)))
                   (cq s) (updf (gp s) t GNone)
                   (xh s ++ adv s (pl s `max` my) ++ [XE (Return i (resq (cq s) (pred my) e))])
                   (nid s) (pl s `max` my))
    (* a read-only transaction is invoked (ptm.rs CxPtm::read_with, Cx::apply_read) *)
    | c_rinvoke s t r :
        t < N → gp s t = GNone →
        cstep s (CState (cx s) (cq s) (updf (gp s) t (GRInv (nid s) r))
                   (xh s ++ [XE (Invoke (nid s) t (Rd r))]) (S (nid s)) (pl s))
    (* R{2}: after its direct tries, it publishes its read as a node
       (x_enqueue; Cx::apply_published_read, Cx::publish); [way]: whether
       it will return the node's result (the node is its point: from then
       on it is a thread of the update path, [Cx::collect]) or a direct
       read's (a prophecy: every run of the code has a run of the model
       that prophesied right) *)
    | c_publish s t i r (way : bool) :
        gp s t = GRInv i r → pcs (cx s) t = XIdle →
        cstep s (CState (XState (xm (cx s)) (S (tkt (cx s))) (lk (cx s))
                            (updf (pcs (cx s)) t (XEnq (S (tkt (cx s))))) (done (cx s)))
                   (cq s ++ [(i, QR r way)]) (updf (gp s) t (if way then GUpd i (QR r true) else GPub i r))
                   (xh s) (nid s) (pl s))
    (* R{1}, R{3}: read curComb, shared-lock its Combined, check curComb, run
       the read on its replica (Cx::read_designated, ptm.rs read_on), in
       one step; a direct try or a published read's *)
    | c_read s t i r :
        gp s t = GRInv i r ∨ gp s t = GPub i r →
        cstep s (CState (cx s) (cq s)
                   (updf (gp s) t (GRd i r (chead (cx s))
                      (rexec r (stq (cq s) (objv (xm (cx s)) (cidx (cx s))))) None))
                   (if decide (pl s = chead (cx s))
                    then xh s ++ [XL i (Rd r) (rexec r (stq (cq s) (objv (xm (cx s)) (cidx (cx s)))))]
                    else xh s)
                   (nid s) (pl s))
    (* pwb(curComb) (Cx::read_designated -> Cx::ensure_durable) *)
    | c_rpwb s t i r c v :
        gp s t = GRd i r c v None →
        cstep s (CState (XState (p_pwb cline (xm (cx s)) t TK) (tkt (cx s)) (lk (cx s)) (pcs (cx s)) (done (cx s)))
                   (cq s) (updf (gp s) t (GRd i r c v (Some (len0 (xm (cx s)))))) (xh s) (nid s) (pl s))
    (* psync, return the value read (Cx::ensure_durable, Cx::apply_read,
       Cx::apply_published_read) *)
    | c_rsync s t i r c v n :
        gp s t = GRd i r c v (Some n) →
        cstep s (CState (XState (p_fence (xm (cx s)) t) (tkt (cx s)) (lk (cx s)) (updf (pcs (cx s)) t XIdle)
                            (done (cx s)))
                   (cq s) (updf (gp s) t GNone)
                   (xh s ++ adv s (pl s `max` c) ++ [XE (Return i v)]) (nid s) (pl s `max` c))
    (* a crash and null recovery (x_crash; CxPtm::open, Cx::build): the
       queue keeps the nodes up to the recovered ticket *)
    | c_crash s keep :
        p_crash_ok (xm (cx s)) keep →
        cstep s (CState (recover (cx s) keep) (take (ccn (xm (cx s)) (keep 0)).1 (cq s)) (λ _, GNone)
                   (xh s ++ adv s (ccn (xm (cx s)) (keep 0)).1 ++ [XE Crash]) (nid s)
                   (ccn (xm (cx s)) (keep 0)).1).

  Definition cinit : cstate := CState (xinit NR) [] (λ _, GNone) [] 0 0.

  Inductive creachable : cstate → Prop :=
    | cr_init : creachable cinit
    | cr_step s s' : creachable s → cstep s s' → creachable s'.

  (** ** The invariant *)

  Definition nopt (s : cstate) (i : opid) : Prop := ∀ o v, XL i o v ∉ xh s.

  (** Where a read runs: idle after direct tries, or at its published node
      (which is not its point). *)
  Definition rdq (s : cstate) (t i : nat) (r : ROp) : Prop :=
    (pcs (cx s) t = XIdle ∧ i ∉ (cq s).*1) ∨
    (∃ my, pcs (cx s) t = XEnq my ∧ 1 ≤ my ∧ cq s !! pred my = Some (i, QR r false)).

  Definition ginv (s : cstate) (t : nat) (g : gpc) : Prop :=
    match g with
    | GNone => pcs (cx s) t = XIdle
    | GInv i u => pcs (cx s) t = XIdle ∧ Invoke i t (Upd u) ∈ erase (xh s) ∧ i ∉ (cq s).*1 ∧ nopt s i
    | GUpd i e => ∃ my, tick (pcs (cx s) t) = Some my ∧ 1 ≤ my ∧ cq s !! pred my = Some (i, e) ∧
                   qpt e = true ∧ Invoke i t (qop_op e) ∈ erase (xh s)
    | GRInv i r => pcs (cx s) t = XIdle ∧ Invoke i t (Rd r) ∈ erase (xh s) ∧ i ∉ (cq s).*1 ∧ nopt s i
    | GPub i r => (∃ my, pcs (cx s) t = XEnq my ∧ 1 ≤ my ∧ cq s !! pred my = Some (i, QR r false)) ∧
                   Invoke i t (Rd r) ∈ erase (xh s) ∧ nopt s i
    | GRd i r c v sy => rdq s t i r ∧ Invoke i t (Rd r) ∈ erase (xh s) ∧
        v = rexec r (stq (cq s) c) ∧ (c ≤ pl s → XL i (Rd r) v ∈ xh s) ∧ (pl s < c → nopt s i) ∧
        c ≤ chead (cx s) ∧
        match sy with
        | None => True
        | Some n => n ≤ len0 (xm (cx s)) ∧ c ≤ (ccn (xm (cx s)) n).1 ∧ pending (xm (cx s)) t 0 n
        end
    end.

  Record inv2 (s : cstate) : Prop := {
    j_ok : prefix_ok point_ok (xh s);
    j_run : runs_to init (effects (points (xh s))) (stq (cq s) (pl s));
    j_len : length (cq s) = tkt (cx s);
    j_pl : ∀ n, mk (xm (cx s)) 0 ≤ n → n ≤ len0 (xm (cx s)) → pl s ≤ (ccn (xm (cx s)) n).1;
    j_nid : ∀ i t o, Invoke i t o ∈ erase (xh s) → i < nid s;
    j_inv1 : ∀ i t o t' o', Invoke i t o ∈ erase (xh s) → Invoke i t' o' ∈ erase (xh s) → t = t' ∧ o = o';
    j_qnd : NoDup (cq s).*1;
    j_qinv : ∀ j i e, cq s !! j = Some (i, e) → ∃ t, Invoke i t (qop_op e) ∈ erase (xh s);
    j_qpt : ∀ j i e, cq s !! j = Some (i, e) → j < pl s → qpt e = true →
              XL i (qop_op e) (resq (cq s) j e) ∈ xh s;
    j_qnpt : ∀ j i e, cq s !! j = Some (i, e) → pl s ≤ j → qpt e = true → nopt s i;
    j_thr : ∀ t, ginv s t (gp s t);
    j_N : ∀ t, gp s t ≠ GNone → t < N;
    j_xl : ∀ i u v, XL i (Upd u) v ∈ xh s →
             ∃ j, j < pl s ∧ cq s !! j = Some (i, QU u) ∧ v = resq (cq s) j (QU u);
  }.

  (** ** Facts of the invariant *)

  Lemma xl_invoked s i o v : inv2 s → XL i o v ∈ xh s → ∃ t, Invoke i t o ∈ erase (xh s).
  Proof.
    intros Hi (l1 & l2 & Eh)%elem_of_list_split. destruct (j_ok s Hi _ _ _ Eh) as [[t Ht] _].
    exists t. rewrite Eh, erase_app. apply elem_of_app. by left.
  Qed.

  Lemma rd_at_Some g i r c v : rd_at g = Some (i, r, c, v) → ∃ sy, g = GRd i r c v sy.
  Proof. destruct g; simpl; try done. intros [= -> -> -> ->]. eauto. Qed.

  Lemma rd_invoked s t i r c v : inv2 s → rd_at (gp s t) = Some (i, r, c, v) → Invoke i t (Rd r) ∈ erase (xh s).
  Proof. intros Hi (sy & Hg)%rd_at_Some. pose proof (j_thr s Hi t) as Ht. rewrite Hg in Ht. apply Ht. Qed.

  Lemma q_nodup_eq (q : list (opid * qop)) j j' i u u' :
    NoDup q.*1 → q !! j = Some (i, u) → q !! j' = Some (i, u') → j = j'.
  Proof.
    intros Hnd H1 H2. apply (NoDup_lookup (q.*1) j j' i Hnd); by rewrite list_lookup_fmap, ?H1, ?H2.
  Qed.

  Lemma q_id_in (q : list (opid * qop)) j i u : q !! j = Some (i, u) → i ∈ q.*1.
  Proof. intros Hj. apply elem_of_list_fmap. exists (i, u). split; [done|]. by eapply elem_of_list_lookup_2. Qed.

  (** A read that has read is not a node that is a point. *)
  Lemma rdq_not_pt s t i r j e : inv2 s → rdq s t i r → cq s !! j = Some (i, e) → qpt e = false.
  Proof.
    intros Hi [[_ Hn] | (my & _ & _ & Hq)] Hj; [by destruct Hn; apply (q_id_in _ j i e) |].
    pose proof (q_nodup_eq _ _ _ _ _ _ (j_qnd s Hi) Hj Hq) as ->. rewrite Hq in Hj. by simplify_eq.
  Qed.

  Lemma rd_rdq s t i r c v : inv2 s → rd_at (gp s t) = Some (i, r, c, v) → rdq s t i r.
  Proof. intros Hi (sy & Hg)%rd_at_Some. pose proof (j_thr s Hi t) as Ht. rewrite Hg in Ht. apply Ht. Qed.

  Lemma upd_rd_ne s j i e t i' r c v :
    inv2 s → cq s !! j = Some (i, e) → qpt e = true → rd_at (gp s t) = Some (i', r, c, v) → i ≠ i'.
  Proof.
    intros Hi Hj Hpt Hr ->. pose proof (rdq_not_pt s t i' r j e Hi (rd_rdq s t i' r c v Hi Hr) Hj). congruence.
  Qed.

  Lemma rd_rd_eq s t t' i r c v r' c' v' :
    inv2 s → rd_at (gp s t) = Some (i, r, c, v) → rd_at (gp s t') = Some (i, r', c', v') → t = t'.
  Proof.
    intros Hi H1 H2. apply (j_inv1 s Hi i t (Rd r) t' (Rd r')); by eapply rd_invoked.
  Qed.

  (** ** The points of [adv] *)

  Lemma elem_of_upt q j p :
    p ∈ upt q j ↔ ∃ i e, q !! j = Some (i, e) ∧ qpt e = true ∧ p = (i, qop_op e, resq q j e).
  Proof.
    unfold upt. destruct (q !! j) as [[i e]|] eqn:E.
    - destruct (qpt e) eqn:Ep.
      + rewrite elem_of_list_singleton. split; [intros ->; eauto | intros (i' & e' & [= <- <-] & _ & ->); done].
      + split; [by intros ?%elem_of_nil | intros (i' & e' & [= <- <-] & Hp & _); congruence].
    - split; [by intros ?%elem_of_nil | intros (i' & e' & ? & _); done].
  Qed.

  Lemma elem_of_rpt c g p : p ∈ rpt c g ↔ ∃ i r v, rd_at g = Some (i, r, c, v) ∧ p = (i, Rd r, v).
  Proof.
    unfold rpt. destruct (rd_at g) as [[[[i r] c'] v]|] eqn:E.
    - case_decide; [subst c'; rewrite elem_of_list_singleton; naive_solver|].
      split; [by intros ?%elem_of_nil | naive_solver].
    - split; [by intros ?%elem_of_nil | naive_solver].
  Qed.

  Lemma elem_of_rpts g c p :
    p ∈ rpts g c ↔ ∃ t i r v, t < N ∧ rd_at (g t) = Some (i, r, c, v) ∧ p = (i, Rd r, v).
  Proof.
    unfold rpts. rewrite elem_of_list_join. split.
    - intros (l & Hp & (t & -> & Ht)%elem_of_list_fmap). apply elem_of_seq in Ht.
      apply elem_of_rpt in Hp as (i & r & v & ? & ->). exists t, i, r, v. split_and!; [lia|done|done].
    - intros (t & i & r & v & Ht & Hr & ->). exists (rpt c (g t)). split.
      + apply elem_of_rpt. eauto.
      + apply elem_of_list_fmap. exists t. split; [done|]. apply elem_of_seq. lia.
  Qed.

  Lemma elem_of_advl s b p :
    p ∈ advl s b ↔ ∃ j, pl s ≤ j < b ∧ (p ∈ upt (cq s) j ∨ p ∈ rpts (gp s) (S j)).
  Proof.
    unfold advl. rewrite elem_of_list_join. split.
    - intros (l & Hp & (j & -> & Hj)%elem_of_list_fmap). apply elem_of_seq in Hj.
      exists j. split; [lia|]. by apply elem_of_app.
    - intros (j & Hj & Hp). exists (upt (cq s) j ++ rpts (gp s) (S j)). split; [by apply elem_of_app|].
      apply elem_of_list_fmap. exists j. split; [done|]. apply elem_of_seq. lia.
  Qed.

  (** Where a point of [adv] comes from: a node after [pl] that is a
      point, or a read of a ticket after [pl]. *)
  Definition src (s : cstate) (b : nat) (p : opid * op * Val) : Prop :=
    (∃ j i e, pl s ≤ j < b ∧ cq s !! j = Some (i, e) ∧ qpt e = true ∧ p = (i, qop_op e, resq (cq s) j e)) ∨
    (∃ t i r c v, pl s < c ≤ b ∧ t < N ∧ rd_at (gp s t) = Some (i, r, c, v) ∧ p = (i, Rd r, v)).

  Lemma advl_src s b p : p ∈ advl s b → src s b p.
  Proof.
    intros (j & Hj & [Hp | Hp])%elem_of_advl.
    - apply elem_of_upt in Hp as (i & e & Hq & Hpt & ->). left. exists j, i, e. done.
    - apply elem_of_rpts in Hp as (t & i & r & v & Ht & Hr & ->). right. exists t, i, r, (S j), v.
      split_and!; [lia|lia|lia|done|done].
  Qed.

  Lemma src_advl s b p : src s b p → p ∈ advl s b.
  Proof.
    intros [(j & i & e & Hj & Hq & Hpt & ->) | (t & i & r & c & v & Hc & Ht & Hr & ->)]; apply elem_of_advl.
    - exists j. split; [done|]. left. apply elem_of_upt. eauto.
    - exists (pred c). split; [lia|]. right. apply elem_of_rpts. replace (S (pred c)) with c by lia. eauto 10.
  Qed.

  Lemma src_invoked s b p : inv2 s → src s b p → ∃ t, Invoke p.1.1 t p.1.2 ∈ erase (xh s).
  Proof.
    intros Hi [(j & i & e & Hj & Hq & Hpt & ->) | (t & i & r & c & v & Hc & Ht & Hr & ->)]; simpl.
    - by apply (j_qinv s Hi j).
    - exists t. by eapply rd_invoked.
  Qed.

  Lemma src_nopt s b p : inv2 s → src s b p → nopt s p.1.1.
  Proof.
    intros Hi [(j & i & e & Hj & Hq & Hpt & ->) | (t & i & r & c & v & Hc & Ht & Hr & ->)]; simpl.
    - apply (j_qnpt s Hi j i e Hq); [lia | done].
    - apply rd_at_Some in Hr as [sy Hg]. pose proof (j_thr s Hi t) as Hth. rewrite Hg in Hth.
      destruct Hth as (_ & _ & _ & _ & Hn & _). apply Hn. lia.
  Qed.

  (** Two points of [adv] with one id are one. *)
  Lemma src_same_id s b p p' :
    inv2 s → src s b p → src s b p' → p.1.1 = p'.1.1 → p = p'.
  Proof.
    intros Hi [(j & i & e & Hj & Hq & Hpt & ->) | (t & i & r & c & v & Hc & Ht & Hr & ->)]
      [(j' & i' & e' & Hj' & Hq' & Hpt' & ->) | (t' & i' & r' & c' & v' & Hc' & Ht' & Hr' & ->)]; simpl; intros <-.
    - pose proof (q_nodup_eq (cq s) j j' i e e' (j_qnd s Hi) Hq Hq') as <-. by rewrite Hq in Hq'; simplify_eq.
    - by destruct (upd_rd_ne s j i e t' i r' c' v' Hi Hq Hpt Hr').
    - by destruct (upd_rd_ne s j' i e' t i r c v Hi Hq' Hpt' Hr).
    - pose proof (rd_rd_eq s t t' i r c v r' c' v' Hi Hr Hr') as <-. by rewrite Hr in Hr'; simplify_eq.
  Qed.

  Lemma NoDup_fmap_join {A B C} (f : B → C) (g : A → list B) (l : list A) :
    NoDup l → (∀ a, a ∈ l → NoDup (f <$> g a)) →
    (∀ a a' b b', a ∈ l → a' ∈ l → b ∈ g a → b' ∈ g a' → f b = f b' → a = a') →
    NoDup (f <$> mjoin (g <$> l)).
  Proof.
    induction l as [|a l IH]; intros Hnd Hg Hx; simpl; [constructor|].
    apply stdpp.list.NoDup_cons in Hnd as [Hna Hnd]. rewrite fmap_app. apply NoDup_app. split; [apply Hg; by left|]. split.
    - intros c Hc1 Hc2. apply elem_of_list_fmap in Hc1 as (b & -> & Hb).
      apply elem_of_list_fmap in Hc2 as (b' & Heq & Hb').
      apply elem_of_list_join in Hb' as (l' & Hb' & (a' & -> & Ha')%elem_of_list_fmap).
      apply Hna. rewrite (Hx a a' b b'); [done | by left | by right | done | done | done].
    - apply IH; [done | intros; apply Hg; by right |]. intros; eapply Hx; eauto; by right.
  Qed.

  Definition pid3 (p : opid * op * Val) : opid := p.1.1.

  Lemma advl_nodup s b : inv2 s → NoDup (pid3 <$> advl s b).
  Proof.
    intros Hi. unfold advl. apply NoDup_fmap_join; [apply NoDup_seq | |].
    - intros j Hj. apply elem_of_seq in Hj. rewrite fmap_app. apply NoDup_app. split_and!.
      + unfold upt. destruct (cq s !! j) as [[i e]|]; [destruct (qpt e)|]; simpl;
          [apply NoDup_singleton | constructor | constructor].
      + intros x Hx1 Hx2. apply elem_of_list_fmap in Hx1 as (p & -> & Hp).
        apply elem_of_list_fmap in Hx2 as (p' & Heq & Hp').
        apply elem_of_upt in Hp as (i & e & Hq & Hpt & ->). apply elem_of_rpts in Hp' as (t & i' & r & v & _ & Hr & ->).
        by apply (upd_rd_ne s j i e t i' r (S j) v Hi Hq Hpt Hr).
      + unfold rpts. apply NoDup_fmap_join; [apply NoDup_seq | |].
        * intros t _. unfold rpt. destruct (rd_at (gp s t)) as [[[[]]]|]; [case_decide|]; simpl;
            [apply NoDup_singleton | constructor | constructor].
        * intros t t' p p' _ _ Hp Hp' Heq. apply elem_of_rpt in Hp as (i & r & v & Hr & ->).
          apply elem_of_rpt in Hp' as (i' & r' & v' & Hr' & ->). unfold pid3 in Heq. simpl in Heq. subst i'.
          by apply (rd_rd_eq s t t' i r (S j) v r' (S j) v').
    - intros j j' p p' Hj Hj' Hp Hp' Heq. apply elem_of_seq in Hj, Hj'.
      assert (p ∈ advl s (j `max` j' + 1) ∧ p' ∈ advl s (j `max` j' + 1)) as [Ha Ha'].
      { split; apply elem_of_advl; [exists j | exists j']; (split; [lia | by apply elem_of_app]). }
      pose proof (src_same_id s _ p p' Hi (advl_src _ _ _ Ha) (advl_src _ _ _ Ha') Heq) as <-.
      apply elem_of_app in Hp as [Hp | Hp]; apply elem_of_app in Hp' as [Hp' | Hp'].
      + apply elem_of_upt in Hp as (i & e & Hq & _ & ->). apply elem_of_upt in Hp' as (i' & e' & Hq' & _ & ?).
        simplify_eq. by apply (q_nodup_eq (cq s) j j' i' e e' (j_qnd s Hi)).
      + apply elem_of_upt in Hp as (i & e & Hq & Hpt & ->). apply elem_of_rpts in Hp' as (t & i' & r & v & _ & Hr & Heq2).
        injection Heq2 as Hii _ _. subst i'. by destruct (upd_rd_ne s j i e t i r (S j') v Hi Hq Hpt Hr).
      + apply elem_of_rpts in Hp as (t & i & r & v & _ & Hr & ->). apply elem_of_upt in Hp' as (i' & e & Hq & Hpt & Heq2).
        injection Heq2 as Hii _ _. subst i'. by destruct (upd_rd_ne s j' i e t i r (S j) v Hi Hq Hpt Hr).
      + apply elem_of_rpts in Hp as (t & i & r & v & _ & Hr & ->). apply elem_of_rpts in Hp' as (t' & i' & r' & v' & _ & Hr' & ?).
        simplify_eq. pose proof (rd_rd_eq s t t' i' r' (S j) v' r' (S j') v' Hi Hr Hr') as <-.
        rewrite Hr in Hr'. simplify_eq. done.
  Qed.

  Lemma points_to_xl (l : list (opid * op * Val)) : points (to_xl <$> l) = l.
  Proof. induction l as [|[[i o] v] l IH]; [done|]. rewrite fmap_cons. unfold points in *. simpl. by f_equal. Qed.

  Lemma erase_to_xl (l : list (opid * op * Val)) : erase (to_xl <$> l) = [].
  Proof. induction l as [|p l IH]; simpl; done. Qed.

  Lemma elem_of_adv s b i o v : XL i o v ∈ adv s b ↔ (i, o, v) ∈ advl s b.
  Proof.
    unfold adv. rewrite elem_of_list_fmap. split.
    - intros ([[i' o'] v'] & Heq & Hp). unfold to_xl in Heq. simpl in Heq. by simplify_eq.
    - intros Hp. by exists (i, o, v).
  Qed.

  Lemma adv_prefix_ok s b : inv2 s → prefix_ok point_ok (xh s ++ adv s b).
  Proof.
    intros Hi. apply prefix_ok_app; [apply (j_ok s Hi)|]. intros k1 x k2 Hk.
    unfold adv in Hk. apply fmap_app_inv in Hk as (l1 & l' & -> & Hl' & Hl).
    symmetry in Hl'. apply fmap_cons_inv in Hl' as (p & l2 & -> & -> & ->).
    assert (Hp : p ∈ advl s b) by (rewrite Hl; apply elem_of_app; right; by left).
    pose proof (advl_src s b p Hp) as Hs.
    pose proof (advl_nodup s b Hi) as Hnd. rewrite Hl, fmap_app, fmap_cons in Hnd.
    apply NoDup_app in Hnd as (_ & Hdis & _).
    destruct p as [[i o] v]. unfold to_xl. cbn [fst snd point_ok]. split.
    - destruct (src_invoked s b _ Hi Hs) as [t Ht]. exists t. rewrite erase_app. apply elem_of_app. by left.
    - intros o' v' [Hin | Hin]%elem_of_app.
      + by apply (src_nopt s b _ Hi Hs o' v').
      + apply elem_of_list_fmap in Hin as ([[i' o''] v''] & Heq & Hin). unfold to_xl in Heq. simpl in Heq. simplify_eq.
        apply (Hdis i'); [apply elem_of_list_fmap; by exists (i', o'', v'') | left].
  Qed.

  Lemma mjoin_app {A} (l1 l2 : list (list A)) : mjoin (l1 ++ l2) = mjoin l1 ++ mjoin l2.
  Proof. induction l1 as [|l l1 IH]; simpl; [done|]. by rewrite IH, app_assoc. Qed.

  Lemma advl_S s b : pl s ≤ b → advl s (S b) = advl s b ++ upt (cq s) b ++ rpts (gp s) (S b).
  Proof.
    intros Hb. unfold advl. replace (S b - pl s) with (S (b - pl s)) by lia.
    rewrite seq_S, fmap_app, mjoin_app. simpl. rewrite app_nil_r.
    by replace (pl s + (b - pl s)) with b by lia.
  Qed.

  Lemma advl_le s b : b ≤ pl s → advl s b = [].
  Proof. intros Hb. unfold advl. by replace (b - pl s) with 0 by lia. Qed.

  Lemma effects_app' (l1 l2 : list (opid * op * Val)) : effects (l1 ++ l2) = effects l1 ++ effects l2.
  Proof. apply effects_app. Qed.

  Lemma runs_to_reads σ (l : list (opid * op * Val)) :
    (∀ p, p ∈ l → ∃ r, p.1.2 = Rd r ∧ p.2 = rexec r σ) → runs_to σ (effects l) σ.
  Proof.
    induction l as [|[[i o] v] l IH]; intros Hl; [constructor|].
    destruct (Hl (i, o, v) ltac:(by left)) as (r & Ho & Hv). simpl in Ho, Hv. subst o v.
    simpl. econstructor; [done|]. apply IH. intros p Hp. apply Hl. by right.
  Qed.

  Lemma adv_runs s b :
    inv2 s → pl s ≤ b → b ≤ length (cq s) →
    runs_to (stq (cq s) (pl s)) (effects (advl s b)) (stq (cq s) b).
  Proof.
    intros Hi Hb Hlen. induction Hb as [| b Hb IH].
    - rewrite advl_le by done. constructor.
    - rewrite advl_S by done. rewrite !effects_app'. apply (runs_to_app _ _ (stq (cq s) b)); [apply IH; lia|].
      destruct (lookup_lt_is_Some_2 (cq s) b ltac:(lia)) as [[i e] Hq].
      apply (runs_to_app _ _ (stq (cq s) (S b))).
      + unfold upt. rewrite Hq. destruct (qpt e) eqn:Ept.
        * simpl. econstructor; [|constructor]. by apply (qop_step _ _ i).
        * rewrite (stq_S _ _ _ _ Hq). destruct e as [u | r pt]; [done|]. simpl. constructor.
      + apply runs_to_reads. intros p (t & i' & r & v & _ & Hr & ->)%elem_of_rpts.
        exists r. split; [done|]. simpl. apply rd_at_Some in Hr as [sy Hg].
        pose proof (j_thr s Hi t) as Ht. rewrite Hg in Ht. apply Ht.
  Qed.

  Lemma adv_qpt s b j i e :
    inv2 s → cq s !! j = Some (i, e) → j < b → qpt e = true →
    XL i (qop_op e) (resq (cq s) j e) ∈ xh s ++ adv s b.
  Proof.
    intros Hi Hq Hj Hpt. apply elem_of_app. destruct (decide (j < pl s)).
    - left. by apply (j_qpt s Hi j).
    - right. apply elem_of_adv, src_advl. left. exists j, i, e. split_and!; [lia|lia|done|done|done].
  Qed.

  Lemma adv_qnpt s b j i e :
    inv2 s → cq s !! j = Some (i, e) → b ≤ j → pl s ≤ j → qpt e = true → ∀ o v, XL i o v ∉ xh s ++ adv s b.
  Proof.
    intros Hi Hq Hb Hp Hpt o v [Hin | Hin%elem_of_adv%advl_src]%elem_of_app; [by apply (j_qnpt s Hi j i e Hq Hp Hpt o v)|].
    destruct Hin as [(j' & i' & e' & Hj' & Hq' & Hpt' & Heq) | (t & i' & r & c & v' & Hc & Ht & Hr & Heq)];
      injection Heq as Hii _ _; subst i'.
    - pose proof (q_nodup_eq _ _ _ _ _ _ (j_qnd s Hi) Hq Hq'). lia.
    - by apply (upd_rd_ne s j i e t i r c v' Hi Hq Hpt Hr).
  Qed.

  (** Another thread's invariant across a step that appends [ext] to the
      history (points of [adv], or of the stepping thread's operation). *)
  Lemma ginv_transfer s s' t' ext :
    inv2 s → xaux (cx s') →
    cq s' = cq s → xh s' = xh s ++ ext → pl s ≤ pl s' →
    (∀ i o v, XL i o v ∈ ext → src s (pl s') (i, o, v) ∨ ∃ t'' o', t'' ≠ t' ∧ Invoke i t'' o' ∈ erase (xh s)) →
    (∀ i r c v, rd_at (gp s t') = Some (i, r, c, v) → pl s < c ≤ pl s' → XL i (Rd r) v ∈ ext) →
    mem_frame (xm (cx s)) (xm (cx s')) →
    pcs (cx s') t' = pcs (cx s) t' ∨
      ((∃ i e, gp s t' = GUpd i e) ∧ ∀ my, tick (pcs (cx s) t') = Some my → tick (pcs (cx s') t') = Some my) →
    ginv s t' (gp s t') → ginv s' t' (gp s t').
  Proof.
    intros Hi Ha' Hq Hx Hpl Hext Hrd (Hpre & Hmk & Hnl & Hpend) Hpc Hg.
    assert (Her : ∀ e, e ∈ erase (xh s) → e ∈ erase (xh s')).
    { intros e He. rewrite Hx, erase_app. apply elem_of_app. by left. }
    (* an id of [t'] that has no point before gets none in [ext], unless it
       is a node that is a point or a read of [t'] that [adv] reaches *)
    assert (Hnew : ∀ i o, Invoke i t' o ∈ erase (xh s) →
              (∀ j e, cq s !! j = Some (i, e) → qpt e = true → False) →
              (∀ r c v, rd_at (gp s t') = Some (i, r, c, v) → pl s' < c) →
              nopt s i → nopt s' i).
    { intros i o Hinv Hnq Hnr Hn o' v'. rewrite Hx. intros [Hin | Hin]%elem_of_app; [by apply (Hn o' v')|].
      destruct (Hext i o' v' Hin) as [[(j & i1 & e & _ & Hq' & Hpt & Heq) | (t'' & i1 & r & c & v1 & Hc & _ & Hr & Heq)]
        | (t'' & o'' & Hne & Hinv')].
      - injection Heq as Hii _ _. subst i1. by apply (Hnq j e).
      - injection Heq as Hii _ _. subst i1. pose proof (rd_invoked s t'' i r c v1 Hi Hr) as Hinv''.
        destruct (j_inv1 s Hi i t' o t'' (Rd r) Hinv Hinv'') as [<- _].
        specialize (Hnr r c v1 Hr). lia.
      - by destruct (j_inv1 s Hi i t' o t'' o'' Hinv Hinv'). }
    assert (Hnotin : ∀ i, i ∉ (cq s).*1 → ∀ j e, cq s !! j = Some (i, e) → qpt e = true → False).
    { intros i Hni j e Hj _. by apply Hni, (q_id_in _ j i e). }
    assert (Hsame : (∀ i e, gp s t' ≠ GUpd i e) → pcs (cx s') t' = pcs (cx s) t').
    { intros Hne. destruct Hpc as [? | [(i & e & He) _]]; [done | by destruct (Hne i e)]. }
    destruct (gp s t') as [| i u | i e | i r | i r | i r c v sy] eqn:Eg; cbv beta iota delta [ginv] in Hg |- *;
      try (rewrite Hsame by done).
    - done.
    - destruct Hg as (Hp & Hinv & Hnq & Hn). rewrite Hq. split_and!; [done|by apply Her|done|].
      apply (Hnew i (Upd u) Hinv); [by apply Hnotin | done | done].
    - destruct Hg as (my & Htk & Hmy & Hj & Hpt & Hinv). exists my. rewrite Hq. split_and!; [|done|done|done|by apply Her].
      destruct Hpc as [-> | [_ Htick]]; [done | by apply Htick].
    - destruct Hg as (Hp & Hinv & Hnq & Hn). rewrite Hq. split_and!; [done|by apply Her|done|].
      apply (Hnew i (Rd r) Hinv); [by apply Hnotin | done | done].
    - destruct Hg as ((my & Hp & Hmy & Hj) & Hinv & Hn). rewrite Hq. split_and!; [by exists my|by apply Her|].
      apply (Hnew i (Rd r) Hinv); [| done | done].
      intros j e Hj' Hpt. pose proof (q_nodup_eq _ _ _ _ _ _ (j_qnd s Hi) Hj Hj') as <-.
      rewrite Hj in Hj'. by simplify_eq.
    - destruct Hg as (Hrq & Hinv & Hv & Hle & Hgt & Hch & Hsy). rewrite Hq. split_and!.
      + unfold rdq. by rewrite Hq, Hsame.
      + by apply Her.
      + done.
      + intros Hc. rewrite Hx. apply elem_of_app. destruct (decide (c ≤ pl s)); [left; by apply Hle|].
        right. apply (Hrd i r c v); [done|lia].
      + intros Hc. apply (Hnew i (Rd r) Hinv); [| | apply Hgt; lia].
        * intros j e Hj Hpt. pose proof (rdq_not_pt s t' i r j e Hi Hrq Hj). congruence.
        * intros r' c' v' [= <- <- <-]. done.
      + unfold chead, ccv. fold (ccn (xm (cx s')) (len0 (xm (cx s')))).
        etrans; [exact Hch|]. unfold chead, ccv. fold (ccn (xm (cx s)) (len0 (xm (cx s)))).
        rewrite <- (ccn_prefix (xm (cx s)) (xm (cx s')) (len0 (xm (cx s)))) by done.
        apply (xa_mono _ Ha'); [by apply len0_prefix | done].
      + destruct sy as [n|]; [|done]. destruct Hsy as (Hn & Hcn & Hpn). split_and!.
        * etrans; [exact Hn | by apply len0_prefix].
        * by rewrite (ccn_prefix (xm (cx s)) (xm (cx s'))).
        * by apply Hpend.
  Qed.

  (** ** The invariant is inductive *)

  Lemma chead_le_len s : inv2 s → xinv NR (cx s) → xaux (cx s) → chead (cx s) ≤ length (cq s).
  Proof.
    intros Hi Hx Ha. rewrite (j_len s Hi). unfold chead, ccv.
    fold (ccn (xm (cx s)) (len0 (xm (cx s)))). by apply (xa_tkt _ Ha).
  Qed.

  Lemma pl_le_chead s : inv2 s → xinv NR (cx s) → pl s ≤ chead (cx s).
  Proof.
    intros Hi Hx. unfold chead, ccv. fold (ccn (xm (cx s)) (len0 (xm (cx s)))).
    apply (j_pl s Hi); [by apply wf_mk_le, (xi_wf _ _ Hx) | done].
  Qed.

  (** Where the crash images of line 0 can be after a step that keeps
      [mem_frame], the points can stay. *)
  Lemma pl_frame s x' :
    inv2 s → xinv NR (cx s) → xaux x' → mem_frame (xm (cx s)) (xm x') →
    ∀ n, mk (xm x') 0 ≤ n → n ≤ len0 (xm x') → pl s ≤ (ccn (xm x') n).1.
  Proof.
    intros Hi Hx Ha (Hpre & Hmk & _) n H1 H2.
    pose proof (wf_mk_le _ 0 (xi_wf _ _ Hx)) as Hml.
    etrans; [apply (j_pl s Hi (mk (xm (cx s)) 0)); [done|exact Hml]|].
    rewrite <- (ccn_prefix (xm (cx s)) (xm x')) by done. apply (xa_mono _ Ha); lia.
  Qed.

  Lemma erase_adv_ev s b (e : event op Val) :
    erase (xh s ++ adv s b ++ [XE e]) = erase (xh s) ++ [e].
  Proof. rewrite !erase_app. unfold adv. by rewrite erase_to_xl. Qed.

  Lemma points_adv_ev s b (e : event op Val) :
    points (xh s ++ adv s b ++ [XE e]) = points (xh s) ++ advl s b.
  Proof. rewrite !points_app. unfold adv. rewrite points_to_xl. simpl. by rewrite app_nil_r. Qed.

  Lemma qop_op_upd e u : qop_op e = Upd u → e = QU u.
  Proof. destruct e; simpl; congruence. Qed.

  (** An update point of [adv] is its node's. *)
  Lemma adv_upd s b i u v :
    XL i (Upd u) v ∈ adv s b → ∃ j, pl s ≤ j < b ∧ cq s !! j = Some (i, QU u) ∧ v = resq (cq s) j (QU u).
  Proof.
    intros Hin. apply elem_of_adv, advl_src in Hin as [(j & i1 & e & Hj & Hq' & _ & Heq) | (t' & i1 & r & c & v1 & _ & _ & _ & Heq)];
      injection Heq as Hii Ho Hv; [|done]. subst i1 v. symmetry in Ho. apply qop_op_upd in Ho as ->. by exists j.
  Qed.

  (** A return: the points reach [b], then [Return i v]. *)
  Lemma inv2_ret s s' t i v b :
    inv2 s → xaux (cx s') →
    cq s' = cq s → nid s' = nid s → pl s' = b → gp s' = updf (gp s) t GNone →
    xh s' = xh s ++ adv s b ++ [XE (Return i v)] →
    pl s ≤ b → b ≤ length (cq s) →
    (∃ o, XL i o v ∈ xh s ++ adv s b) →
    tkt (cx s') = tkt (cx s) →
    mem_frame (xm (cx s)) (xm (cx s')) →
    pcs (cx s') t = XIdle → (∀ t', t' ≠ t → pcs (cx s') t' = pcs (cx s) t') →
    (∀ n, mk (xm (cx s')) 0 ≤ n → n ≤ len0 (xm (cx s')) → b ≤ (ccn (xm (cx s')) n).1) →
    inv2 s'.
  Proof.
    intros Hi Ha' Hq Hn Hpl Hg Hx Hb Hbl Hpt Htk Hmf Hid Hoth Hdur.
    assert (HinvE : ∀ i' t' o', Invoke i' t' o' ∈ erase (xh s') → Invoke i' t' o' ∈ erase (xh s)).
    { intros i' t' o'. rewrite Hx, erase_adv_ev. intros [? | ?%elem_of_list_singleton]%elem_of_app; done. }
    assert (HinvE' : ∀ e, e ∈ erase (xh s) → e ∈ erase (xh s')).
    { intros e He. rewrite Hx, erase_adv_ev. apply elem_of_app. by left. }
    split.
    - rewrite Hx, app_assoc. apply prefix_ok_snoc. split; [by apply adv_prefix_ok | exact Hpt].
    - rewrite Hx, points_adv_ev, effects_app, Hq, Hpl.
      apply (runs_to_app _ _ (stq (cq s) (pl s))); [apply (j_run s Hi) | by apply adv_runs].
    - rewrite Hq, Htk. apply (j_len s Hi).
    - rewrite Hpl. exact Hdur.
    - intros i' t' o' H. rewrite Hn. by apply HinvE, (j_nid s Hi) in H.
    - intros i' t1 o1 t2 o2 H1 H2. apply HinvE in H1, H2. by apply (j_inv1 s Hi i').
    - rewrite Hq. apply (j_qnd s Hi).
    - rewrite Hq. intros j i' u Hj. destruct (j_qinv s Hi j i' u Hj) as [t' Ht']. exists t'. by apply HinvE'.
    - rewrite Hq, Hpl. intros j i' u Hj Hjb Hpt'. rewrite Hx, app_assoc. apply elem_of_app. left. by apply adv_qpt.
    - rewrite Hq, Hpl. intros j i' u Hj Hjb Hpt' o v'. rewrite Hx, app_assoc.
      intros [Hin | Hin%elem_of_list_singleton]%elem_of_app; [|done].
      by apply (adv_qnpt s b j i' u Hi Hj Hjb ltac:(lia) Hpt' o v').
    - intros t'. rewrite Hg. destruct (decide (t' = t)) as [-> | Hne]; [rewrite updf_eq; exact Hid|].
      rewrite updf_ne by done.
      apply (ginv_transfer s s' t' (adv s b ++ [XE (Return i v)])); [done|done|done|done|lia| | |done| |apply (j_thr s Hi)].
      + intros i' o' v' [Hin | Hin%elem_of_list_singleton]%elem_of_app; [|done]. left. rewrite Hpl.
        by apply advl_src, elem_of_adv.
      + intros i' r c v' Hr Hc. apply elem_of_app. left. apply elem_of_adv, src_advl. right.
        exists t', i', r, c, v'. split_and!; [lia|lia| |done|done].
        apply (j_N s Hi). intros E. by rewrite E in Hr.
      + left. by rewrite Hoth.
    - intros t' Ht'. rewrite Hg in Ht'. destruct (decide (t' = t)) as [-> | Hne]; [by rewrite updf_eq in Ht'|].
      rewrite updf_ne in Ht' by done. by apply (j_N s Hi).
    - rewrite Hx, Hq, Hpl. intros i' u v' [Hin | [Hin | Hin%elem_of_list_singleton]%elem_of_app]%elem_of_app; [| |done].
      + destruct (j_xl s Hi i' u v' Hin) as (j & Hj & Hq' & Hv). exists j. split_and!; [lia|done|done].
      + destruct (adv_upd s b i' u v' Hin) as (j & Hj & Hq' & Hv). exists j. split_and!; [lia|done|done].
  Qed.

  Lemma inv2_crash s keep :
    inv2 s → xinv NR (cx s) → xaux (cx s) → p_crash_ok (xm (cx s)) keep →
    inv2 (CState (recover (cx s) keep) (take (ccn (xm (cx s)) (keep 0)).1 (cq s)) (λ _, GNone)
            (xh s ++ adv s (ccn (xm (cx s)) (keep 0)).1 ++ [XE Crash]) (nid s) (ccn (xm (cx s)) (keep 0)).1).
  Proof.
    intros Hi Hx Ha Hok. set (c := (ccn (xm (cx s)) (keep 0)).1).
    assert (Hl0 : 0 < nlines (xm (cx s))) by (pose proof (xi_lines _ _ Hx); lia).
    destruct (Hok 0 Hl0) as [Hk1 Hk2]. fold (mk (xm (cx s)) 0) in Hk1. fold (hist (xm (cx s)) 0) (len0 (xm (cx s))) in Hk2.
    assert (Hpc : pl s ≤ c) by (by apply (j_pl s Hi)).
    assert (Hcl : c ≤ length (cq s)) by (rewrite (j_len s Hi); by apply (xa_tkt _ Ha)).
    assert (HinvE : ∀ i' t' o', Invoke i' t' o' ∈ erase (xh s ++ adv s c ++ [XE Crash]) → Invoke i' t' o' ∈ erase (xh s)).
    { intros i' t' o'. rewrite erase_adv_ev. intros [? | ?%elem_of_list_singleton]%elem_of_app; done. }
    split; cbn [xh cq pl gp nid cx].
    - rewrite app_assoc. apply prefix_ok_snoc. split; [by apply adv_prefix_ok | done].
    - rewrite points_adv_ev, effects_app, stq_take by done.
      apply (runs_to_app _ _ (stq (cq s) (pl s))); [apply (j_run s Hi) | by apply adv_runs].
    - rewrite take_length_le by done. done.
    - unfold recover. cbn [xm]. rewrite crash_mk, len0_crash by done. intros n H1 H2.
      assert (n = keep 0) as -> by lia. rewrite ccn_crash by done. done.
    - intros i' t' o' H. by apply HinvE, (j_nid s Hi) in H.
    - intros i' t1 o1 t2 o2 H1 H2. apply HinvE in H1, H2. by apply (j_inv1 s Hi i').
    - pose proof (j_qnd s Hi) as Hnd. rewrite <- (take_drop c (cq s)), fmap_app in Hnd.
      rewrite fmap_take. rewrite <- fmap_take. by apply NoDup_app in Hnd as [? _].
    - intros j i' u Hj. destruct (decide (j < c)); [|by rewrite lookup_take_ge in Hj by lia].
      rewrite lookup_take in Hj by done. destruct (j_qinv s Hi j i' u Hj) as [t' Ht']. exists t'.
      rewrite erase_adv_ev. apply elem_of_app. by left.
    - intros j i' u Hj Hjc Hpt. rewrite lookup_take in Hj by done. rewrite app_assoc. apply elem_of_app. left.
      rewrite resq_take by lia. by apply adv_qpt.
    - intros j i' u Hj Hjc. by rewrite lookup_take_ge in Hj.
    - intros t'. done.
    - intros t' Ht'. done.
    - intros i' u v' [Hin | [Hin | Hin%elem_of_list_singleton]%elem_of_app]%elem_of_app; [| |done].
      + destruct (j_xl s Hi i' u v' Hin) as (j & Hj & Hq' & Hv). exists j.
        rewrite lookup_take, resq_take by lia. split_and!; [lia|done|done].
      + destruct (adv_upd s c i' u v' Hin) as (j & Hj & Hq' & Hv). exists j.
        rewrite lookup_take, resq_take by lia. split_and!; [lia|done|done].
  Qed.

  Lemma inv2_invoke s t o g :
    inv2 s → xaux (cx s) → t < N → gp s t = GNone →
    (∃ u, o = Upd u ∧ g = GInv (nid s) u) ∨ (∃ r, o = Rd r ∧ g = GRInv (nid s) r) →
    inv2 (CState (cx s) (cq s) (updf (gp s) t g) (xh s ++ [XE (Invoke (nid s) t o)]) (S (nid s)) (pl s)).
  Proof.
    intros Hi Ha Ht Hg Hog. set (s' := CState (cx s) (cq s) (updf (gp s) t g) (xh s ++ [XE (Invoke (nid s) t o)]) (S (nid s)) (pl s)).
    assert (Her : erase (xh s') = erase (xh s) ++ [Invoke (nid s) t o]) by (simpl; by rewrite erase_app).
    assert (HinvE : ∀ e, e ∈ erase (xh s) → e ∈ erase (xh s')) by (intros e He; rewrite Her; apply elem_of_app; by left).
    assert (Hxl : ∀ i' o' v', XL i' o' v' ∈ xh s' → XL i' o' v' ∈ xh s).
    { intros i' o' v'. simpl. intros [? | ?%elem_of_list_singleton]%elem_of_app; done. }
    assert (Hfresh : ∀ i' t' o', Invoke i' t' o' ∈ erase (xh s) → i' ≠ nid s).
    { intros i' t' o' H ->. apply (j_nid s Hi) in H. lia. }
    assert (Hn : nopt s' (nid s)).
    { intros o' v' Hin%Hxl. destruct (xl_invoked s _ _ _ Hi Hin) as [t' Ht']. by apply (Hfresh _ _ _ Ht'). }
    assert (Hinv : Invoke (nid s) t o ∈ erase (xh s')) by (rewrite Her; apply elem_of_app; right; by left).
    assert (Htr : ∀ t', t' ≠ t → ginv s' t' (gp s t')).
    { intros t' Hne. apply (ginv_transfer s s' t' [XE (Invoke (nid s) t o)] Hi Ha eq_refl eq_refl (le_n _));
        [| | apply mf_refl | by left | apply (j_thr s Hi)].
      - intros ? ? ? ?%elem_of_list_singleton. done.
      - intros. simpl in *. lia. }
    assert (Hnq : nid s ∉ (cq s).*1).
    { intros ([i' u'] & Heq & Hin)%elem_of_list_fmap. simpl in Heq. subst i'.
      apply elem_of_list_lookup_1 in Hin as [j Hj]. destruct (j_qinv s Hi j (nid s) u' Hj) as [t' Ht'].
      by apply (Hfresh _ _ _ Ht'). }
    subst s'. split; cbn [xh cq pl gp nid cx] in *.
    - apply prefix_ok_snoc. split; [apply (j_ok s Hi) | done].
    - rewrite points_app. simpl. rewrite app_nil_r. apply (j_run s Hi).
    - apply (j_len s Hi).
    - apply (j_pl s Hi).
    - intros i' t' o'. rewrite erase_app. intros [H | H%elem_of_list_singleton]%elem_of_app.
      + apply (j_nid s Hi) in H. lia.
      + simplify_eq. lia.
    - intros i' t1 o1 t2 o2. rewrite erase_app.
      intros [H1 | H1%elem_of_list_singleton]%elem_of_app [H2 | H2%elem_of_list_singleton]%elem_of_app; simplify_eq.
      + by apply (j_inv1 s Hi i').
      + by destruct (Hfresh _ _ _ H1).
      + by destruct (Hfresh _ _ _ H2).
      + done.
    - apply (j_qnd s Hi).
    - intros j i' u Hj. destruct (j_qinv s Hi j i' u Hj) as [t' Ht']. exists t'. by apply HinvE.
    - intros j i' u Hj Hjp Hpt. apply elem_of_app. left. by apply (j_qpt s Hi j).
    - intros j i' u Hj Hjp Hpt o' v' Hin. by apply (j_qnpt s Hi j i' u Hj Hjp Hpt o' v'), Hxl.
    - intros t'. destruct (decide (t' = t)) as [-> | Hne].
      + rewrite updf_eq. pose proof (j_thr s Hi t) as Ht0. rewrite Hg in Ht0.
        destruct Hog as [(u & -> & ->) | (r & -> & ->)]; cbv beta iota delta [ginv]; cbn [xh cq pl gp nid cx].
        * split_and!; [done|exact Hinv|exact Hnq|exact Hn].
        * split_and!; [done|exact Hinv|exact Hnq|exact Hn].
      + rewrite updf_ne by done. by apply Htr.
    - intros t'. destruct (decide (t' = t)) as [-> | Hne]; [done|]. rewrite updf_ne by done. apply (j_N s Hi).
    - intros i' u v' Hin. apply (j_xl s Hi). by apply Hxl.
  Qed.

  (** A node enqueued (an update's, or a published read's) by a thread
      [t] with operation [i] and no point yet; [t] then works for it
      ([GUpd]) or reads directly ([GPub]). *)
  Lemma inv2_enqueue s t i e g :
    inv2 s → xinv NR (cx s) → xaux (cx s) → pcs (cx s) t = XIdle → gp s t ≠ GNone →
    Invoke i t (qop_op e) ∈ erase (xh s) → i ∉ (cq s).*1 → nopt s i →
    (qpt e = true ∧ g = GUpd i e) ∨ (∃ r, e = QR r false ∧ g = GPub i r) →
    inv2 (CState (XState (xm (cx s)) (S (tkt (cx s))) (lk (cx s))
                     (updf (pcs (cx s)) t (XEnq (S (tkt (cx s))))) (done (cx s)))
            (cq s ++ [(i, e)]) (updf (gp s) t g) (xh s) (nid s) (pl s)).
  Proof.
    intros Hi Hx Ha Hp Hgt Hinv Hnq Hn Hg.
    pose proof (pl_le_chead s Hi Hx) as Hpc. pose proof (chead_le_len s Hi Hx Ha) as Hcl.
    pose proof (j_len s Hi) as Hlen.
    assert (Hnew : (cq s ++ [(i, e)]) !! pred (S (tkt (cx s))) = Some (i, e))
      by (simpl; rewrite <- Hlen; by apply list_lookup_middle).
    assert (Hold : ∀ j i' e', cq s !! j = Some (i', e') → (cq s ++ [(i, e)]) !! j = Some (i', e')).
    { intros j i' e' Hj. rewrite lookup_app_l; [done|]. by apply lookup_lt_Some in Hj. }
    assert (Hnq' : ∀ t' i' o', t' ≠ t → Invoke i' t' o' ∈ erase (xh s) → i' ∉ (cq s).*1 →
                     i' ∉ (cq s ++ [(i, e)]).*1).
    { intros t' i' o' Hne Hinv' Hn' Hin. rewrite fmap_app in Hin. apply elem_of_app in Hin as [Hin | Hin]; [done|].
      apply elem_of_list_singleton in Hin. simpl in Hin. subst i'.
      by destruct (j_inv1 s Hi i t' o' t (qop_op e) Hinv' Hinv). }
    split; cbn [xh cq pl gp nid cx xm tkt pcs].
    - apply (j_ok s Hi).
    - rewrite stq_app by lia. apply (j_run s Hi).
    - rewrite app_length, Hlen. simpl. lia.
    - apply (j_pl s Hi).
    - apply (j_nid s Hi).
    - apply (j_inv1 s Hi).
    - rewrite fmap_app. apply NoDup_app. split_and!; [apply (j_qnd s Hi)| |apply NoDup_singleton].
      intros x Hx1 ->%elem_of_list_singleton. done.
    - intros j i' e' [Hj | [Hge Hj]]%lookup_app_Some; [by apply (j_qinv s Hi j)|].
      destruct (j - length (cq s)); simplify_eq/=. by exists t.
    - intros j i' e' Hj Hjp Hpt. rewrite lookup_app_l in Hj by lia. rewrite resq_app by lia.
      by apply (j_qpt s Hi j).
    - intros j i' e' [Hj | [Hge Hj]]%lookup_app_Some Hjp Hpt; [by apply (j_qnpt s Hi j i' e')|].
      destruct (j - length (cq s)); simplify_eq/=. exact Hn.
    - intros t'. destruct (decide (t' = t)) as [-> | Hne].
      + rewrite updf_eq. destruct Hg as [[Hpt ->] | (r & -> & ->)]; cbv beta iota delta [ginv];
          cbn [xh cq pl gp nid cx xm tkt pcs]; rewrite updf_eq.
        * exists (S (tkt (cx s))). split_and!; [done|lia|done|done|done].
        * split_and!; [|done|done]. exists (S (tkt (cx s))). split_and!; [done|lia|done].
      + rewrite updf_ne by done. pose proof (j_thr s Hi t') as Ht'.
        destruct (gp s t') as [| i' u' | i' e' | i' r | i' r | i' r c v sy]; cbv beta iota delta [ginv rdq] in Ht' |- *;
          cbn [xh cq pl gp nid cx xm tkt pcs]; rewrite ?updf_ne by done.
        * done.
        * destruct Ht' as (Hp' & Hinv' & Hnq'' & Hn'). split_and!; [done|done| |done]. by apply (Hnq' t' i' (Upd u')).
        * destruct Ht' as (my & Htk & Hmy & Hj & Hpt & Hinv'). exists my. split_and!; [done|done| |done|done].
          by apply Hold.
        * destruct Ht' as (Hp' & Hinv' & Hnq'' & Hn'). split_and!; [done|done| |done]. by apply (Hnq' t' i' (Rd r)).
        * destruct Ht' as ((my & Hp' & Hmy & Hj) & Hinv' & Hn'). split_and!; [|done|done].
          exists my. split_and!; [done|done|by apply Hold].
        * destruct Ht' as (Hrq & Hinv' & Hv & Hle & Hgt' & Hch & Hsy). split_and!; try done.
          -- destruct Hrq as [[Hp' Hnq''] | (my & Hp' & Hmy & Hj)].
             ++ left. split; [done|]. by apply (Hnq' t' i' (Rd r)).
             ++ right. exists my. split_and!; [done|done|by apply Hold].
          -- rewrite stq_app; [done | lia].
    - intros t'. destruct (decide (t' = t)) as [-> | Hne].
      + intros _. by apply (j_N s Hi).
      + rewrite updf_ne by done. apply (j_N s Hi).
    - intros i' u' v' Hin. destruct (j_xl s Hi i' u' v' Hin) as (j & Hj & Hq & Hv). exists j.
      rewrite lookup_app_l, resq_app by lia. split_and!; [done|done|done].
  Qed.

  Lemma inv2_mid s t x' i e :
    inv2 s → xinv NR (cx s) → xaux x' → gp s t = GUpd i e →
    xstep NR false false (cx s) x' → pcs (cx s) t ≠ XIdle → pcs x' t ≠ XIdle →
    (∀ t', t' ≠ t → pcs x' t' = pcs (cx s) t') →
    inv2 (CState x' (cq s) (gp s) (xh s) (nid s) (pl s)).
  Proof.
    intros Hi Hx Ha' Hg Hs Hn Hn' Hoth.
    destruct (mid_step NR (cx s) x' t Hs Hn Hn' Hoth) as (Htk & _ & Hticks).
    destruct (ystep_mem NR HNR (cx s) x' Hx (y_x NR _ _ Hs)) as [(keep & _ & ->) | Hmf];
      [by unfold recover in Hn'; simpl in Hn'|].
    split; cbn [xh cq pl gp nid cx]; try apply Hi.
    - rewrite Htk. apply (j_len s Hi).
    - by apply (pl_frame s x').
    - intros t'. apply (ginv_transfer s (CState x' (cq s) (gp s) (xh s) (nid s) (pl s)) t' [] Hi Ha' eq_refl (eq_sym (app_nil_r _)) (le_n _));
        [by intros ? ? ? ?%elem_of_nil | intros; simpl in *; lia | done | | apply (j_thr s Hi)].
      destruct (decide (t' = t)) as [-> | Hne]; [right | left; by apply Hoth].
      split; [by exists i, e|]. intros my Hmy. cbn [cx]. by rewrite (proj1 (Hticks t)).
  Qed.

  Lemma inv2_read s t i r :
    inv2 s → xinv NR (cx s) → xaux (cx s) → gp s t = GRInv i r ∨ gp s t = GPub i r →
    inv2 (CState (cx s) (cq s)
            (updf (gp s) t (GRd i r (chead (cx s)) (rexec r (stq (cq s) (objv (xm (cx s)) (cidx (cx s))))) None))
            (if decide (pl s = chead (cx s))
             then xh s ++ [XL i (Rd r) (rexec r (stq (cq s) (objv (xm (cx s)) (cidx (cx s)))))]
             else xh s)
            (nid s) (pl s)).
  Proof.
    intros Hi Hx Ha Hg.
    assert (Hgn : gp s t ≠ GNone) by (by destruct Hg as [-> | ->]).
    assert (rdq s t i r ∧ Invoke i t (Rd r) ∈ erase (xh s) ∧ nopt s i) as (Hrq & Hinv & Hn).
    { pose proof (j_thr s Hi t) as Ht. destruct Hg as [Hg | Hg]; rewrite Hg in Ht.
      - destruct Ht as (Hp & Hinv & Hnq & Hn). split_and!; [left; by split | done | done].
      - destruct Ht as (Hq & Hinv & Hn). split_and!; [by right | done | done]. }
    set (c := chead (cx s)).
    assert (Hobj : objv (xm (cx s)) (cidx (cx s)) = c).
    { pose proof (wf_mk_le _ 0 (xi_wf _ _ Hx)) as Hml.
      destruct (xi_des _ _ Hx (len0 (xm (cx s))) Hml (le_n _)) as (_ & _ & _ & Ho). exact Ho. }
    rewrite Hobj. set (v := rexec r (stq (cq s) c)).
    pose proof (pl_le_chead s Hi Hx) as Hpc. fold c in Hpc.
    set (ext := (if decide (pl s = c) then [XL i (Rd r) v] else []) : list (xevent op Val)).
    assert (Hx' : (if decide (pl s = c) then xh s ++ [XL i (Rd r) v] else xh s) = xh s ++ ext)
      by (unfold ext; case_decide; [done | by rewrite app_nil_r]).
    rewrite Hx'.
    assert (Hext : ∀ i' o' v', XL i' o' v' ∈ ext → i' = i ∧ o' = Rd r ∧ v' = v ∧ pl s = c).
    { intros i' o' v'. unfold ext. case_decide; [|by intros ?%elem_of_nil].
      intros [= -> -> ->]%elem_of_list_singleton. done. }
    assert (Her : erase (xh s ++ ext) = erase (xh s)).
    { rewrite erase_app. unfold ext. case_decide; simpl; by rewrite app_nil_r. }
    assert (Hnq : ∀ j e, cq s !! j = Some (i, e) → qpt e = true → False).
    { intros j e Hj Hpt. pose proof (rdq_not_pt s t i r j e Hi Hrq Hj). congruence. }
    split; cbn [xh cq pl gp nid cx]; rewrite ?Her.
    - unfold ext. case_decide; [|rewrite app_nil_r; apply (j_ok s Hi)].
      apply prefix_ok_snoc. split; [apply (j_ok s Hi)|]. split; [by exists t | exact Hn].
    - unfold ext. case_decide as Hpl; [|rewrite app_nil_r; apply (j_run s Hi)].
      rewrite points_app, effects_app. apply (runs_to_app _ _ (stq (cq s) (pl s))); [apply (j_run s Hi)|].
      simpl. econstructor; [|constructor]. simpl. unfold v. by rewrite Hpl.
    - apply (j_len s Hi).
    - apply (j_pl s Hi).
    - apply (j_nid s Hi).
    - apply (j_inv1 s Hi).
    - apply (j_qnd s Hi).
    - apply (j_qinv s Hi).
    - intros j i' u Hj Hjp Hpt. apply elem_of_app. left. by apply (j_qpt s Hi j).
    - intros j i' u Hj Hjp Hpt o' v' [Hin | Hin]%elem_of_app; [by apply (j_qnpt s Hi j i' u Hj Hjp Hpt o' v')|].
      destruct (Hext _ _ _ Hin) as (-> & _). by apply (Hnq j u).
    - intros t'. destruct (decide (t' = t)) as [-> | Hne].
      + rewrite updf_eq. cbv beta iota delta [ginv]. cbn [xh cq pl gp nid cx]. rewrite Her.
        split_and!; [exact Hrq|done|done| | |lia|done].
        * intros Hle. apply elem_of_app. right. unfold ext. rewrite decide_True by lia. by left.
        * intros Hlt o' v' [Hin | Hin]%elem_of_app; [by apply (Hn o' v')|].
          destruct (Hext _ _ _ Hin) as (_ & _ & _ & ?). lia.
      + rewrite updf_ne by done.
        apply (ginv_transfer s (CState (cx s) (cq s) (updf (gp s) t (GRd i r c v None)) (xh s ++ ext) (nid s) (pl s))
          t' ext Hi Ha eq_refl eq_refl (le_n _)); [| |apply mf_refl|by left|apply (j_thr s Hi)].
        * intros i' o' v' Hin. destruct (Hext _ _ _ Hin) as (-> & _). right. exists t, (Rd r). done.
        * intros. simpl in *. lia.
    - intros t'. destruct (decide (t' = t)) as [-> | Hne].
      + intros _. by apply (j_N s Hi).
      + rewrite updf_ne by done. apply (j_N s Hi).
    - intros i' u v' [Hin | Hin]%elem_of_app; [by apply (j_xl s Hi)|].
      by destruct (Hext _ _ _ Hin) as (_ & ? & _).
  Qed.

  Lemma inv2_rpwb s t i r c v :
    inv2 s → xinv NR (cx s) → xaux (cx s) → gp s t = GRd i r c v None →
    inv2 (CState (XState (p_pwb cline (xm (cx s)) t TK) (tkt (cx s)) (lk (cx s)) (pcs (cx s)) (done (cx s)))
            (cq s) (updf (gp s) t (GRd i r c v (Some (len0 (xm (cx s)))))) (xh s) (nid s) (pl s)).
  Proof.
    intros Hi Hx Ha Hg. pose proof (j_thr s Hi t) as Ht. rewrite Hg in Ht.
    destruct Ht as (Hp & Hinv & Hv & Hle & Hgt & Hch & _).
    set (x' := XState (p_pwb cline (xm (cx s)) t TK) (tkt (cx s)) (lk (cx s)) (pcs (cx s)) (done (cx s))).
    assert (Ha' : xaux x') by (apply (xaux_frame (cx s)); [done|done|done|apply (xa_thr _ Ha)]).
    split; cbn [xh cq pl gp nid cx]; try apply Hi.
    - intros t'. destruct (decide (t' = t)) as [-> | Hne].
      + rewrite updf_eq. cbv beta iota delta [ginv]. cbn [xh cq pl gp nid cx].
        split_and!; try exact Hp; try done. left. by left.
      + rewrite updf_ne by done.
        apply (ginv_transfer s (CState x' (cq s) (updf (gp s) t (GRd i r c v (Some (len0 (xm (cx s)))))) (xh s) (nid s) (pl s))
          t' [] Hi Ha' eq_refl (eq_sym (app_nil_r _)) (le_n _));
          [by intros ? ? ? ?%elem_of_nil | intros; simpl in *; lia | apply mf_pwb | by left | apply (j_thr s Hi)].
    - intros t'. destruct (decide (t' = t)) as [-> | Hne].
      + intros _. apply (j_N s Hi). by rewrite Hg.
      + rewrite updf_ne by done. apply (j_N s Hi).
  Qed.

  (** An update returns, after its CAS ([x_ret]) or [Cx::collect] ([x_finsync]). *)
  Lemma inv2_upd_ret s x' t my i u :
    inv2 s → xinv NR (cx s) → xaux (cx s) → xinv NR x' → xaux x' →
    tick (pcs (cx s) t) = Some my → gp s t = GUpd i u →
    tkt x' = tkt (cx s) → my ∈ done x' → mem_frame (xm (cx s)) (xm x') →
    pcs x' t = XIdle → (∀ t', t' ≠ t → pcs x' t' = pcs (cx s) t') →
    inv2 (CState x' (cq s) (updf (gp s) t GNone)
            (xh s ++ adv s (pl s `max` my) ++ [XE (Return i (resq (cq s) (pred my) u))])
            (nid s) (pl s `max` my)).
  Proof.
    intros Hi Hx Ha Hx' Ha' Htk Hg Htkt Hmy Hmf Hid Hoth.
    pose proof (j_thr s Hi t) as Ht. rewrite Hg in Ht. destruct Ht as (my' & Htk' & H1 & Hj & Hpt & Hinv).
    rewrite Htk in Htk'. injection Htk' as <-.
    pose proof (pl_le_chead s Hi Hx) as Hpc. pose proof (chead_le_len s Hi Hx Ha) as Hcl.
    pose proof (xa_thr _ Ha t my Htk) as Hmt. rewrite <- (j_len s Hi) in Hmt.
    apply (inv2_ret s _ t i (resq (cq s) (pred my) u) (pl s `max` my)); try done; cbn [cx]; [lia|lia| |].
    - exists (qop_op u). apply (adv_qpt s _ (pred my) i u Hi Hj); [lia | done].
    - intros n Hn1 Hn2. apply Nat.max_lub; [by apply (pl_frame s x')|].
      by apply (xi_done _ _ Hx' my Hmy n).
  Qed.

  Lemma inv2_rsync s t i r c v n :
    inv2 s → xinv NR (cx s) → xaux (cx s) → gp s t = GRd i r c v (Some n) →
    inv2 (CState (XState (p_fence (xm (cx s)) t) (tkt (cx s)) (lk (cx s)) (updf (pcs (cx s)) t XIdle) (done (cx s)))
            (cq s) (updf (gp s) t GNone)
            (xh s ++ adv s (pl s `max` c) ++ [XE (Return i v)]) (nid s) (pl s `max` c)).
  Proof.
    intros Hi Hx Ha Hg. pose proof (j_thr s Hi t) as Ht. rewrite Hg in Ht.
    destruct Ht as (Hp & Hinv & Hv & Hle & Hgt & Hch & Hn & Hcn & Hpn).
    pose proof (pl_le_chead s Hi Hx) as Hpc. pose proof (chead_le_len s Hi Hx Ha) as Hcl.
    pose proof (xi_wf _ _ Hx) as Hwf.
    assert (Hl0 : 0 < nlines (xm (cx s))) by (pose proof (xi_lines _ _ Hx); lia).
    set (x' := XState (p_fence (xm (cx s)) t) (tkt (cx s)) (lk (cx s)) (updf (pcs (cx s)) t XIdle) (done (cx s))).
    assert (Hmf : mem_frame (xm (cx s)) (xm x')) by (by apply mf_fence).
    assert (Ha' : xaux x').
    { apply (xaux_frame (cx s)); [done|apply hist_fence|done|].
      intros t' my [[_ [=]] | Hmy]%tick_updf. by apply (xa_thr _ Ha t'). }
    apply (inv2_ret s _ t i v (pl s `max` c)); try done; cbn [cx x' pcs]; [lia|lia| | | |];
      [| by rewrite updf_eq | intros t' Hne; by rewrite updf_ne |].
    - exists (Rd r). apply elem_of_app. destruct (decide (c ≤ pl s)); [left; by apply Hle|right].
      apply elem_of_adv, src_advl. right. exists t, i, r, c, v. split_and!; [lia|lia| |by rewrite Hg|done].
      apply (j_N s Hi). by rewrite Hg.
    - intros n' Hn1 Hn2. apply Nat.max_lub; [by apply (pl_frame s x')|].
      destruct Hmf as (Hpre & _ & _ & _).
      assert (Hcov : n ≤ mk (xm x') 0) by (by apply pending_fence_own).
      etrans; [exact Hcn|]. rewrite <- (ccn_prefix (xm (cx s)) (xm x')) by done.
      apply (xa_mono _ Ha'); lia.
  Qed.

  (** A step of the model is one of [ystep], or leaves [CXPTMPx.v]'s state. *)
  Lemma rdq_outside s t i r : rdq s t i r → outside (pcs (cx s) t).
  Proof. intros [[-> _] | (my & -> & _)]; [by left | right; by exists my]. Qed.

  Lemma rd_outside s t i r c v sy : inv2 s → gp s t = GRd i r c v sy → outside (pcs (cx s) t).
  Proof. intros Hi Hg. pose proof (j_thr s Hi t) as Ht. rewrite Hg in Ht. by eapply rdq_outside, Ht. Qed.

  (** A step of the model is one of [ystep], or leaves [CXPTMPx.v]'s state. *)
  Lemma cstep_y s s' : inv2 s → cstep s s' → ystep NR (cx s) (cx s') ∨ cx s' = cx s.
  Proof.
    intros Hi Hs. destruct Hs as [s t u Ht Hg | s t i u Hg Hp | s t x' i e Hg Hs Hn Hn' Hoth
      | s t my o i e Hp Hg | s t my i e Hp Hg | s t r Ht Hg | s t i r way Hg Hp | s t i r Hg
      | s t i r c v Hg | s t i r c v n Hg | s keep Hok]; cbn [cx]; try (by right).
    - left. apply y_x. by apply x_enqueue.
    - left. by apply y_x.
    - left. apply y_x. by apply x_ret.
    - left. apply y_x. by apply (x_finsync NR false false (cx s) t my).
    - left. apply y_x. by apply x_enqueue.
    - left. apply y_pwb. by eapply rd_outside.
    - left. apply y_fence. by eapply rd_outside.
    - left. apply y_x. by apply x_crash.
  Qed.

  Lemma inv2_init : inv2 cinit.
  Proof.
    split; cbn [cinit xh cq pl gp nid cx].
    - apply prefix_ok_nil.
    - constructor.
    - done.
    - intros. lia.
    - intros i t o Hin. by apply elem_of_nil in Hin.
    - intros i t o t' o' Hin. by apply elem_of_nil in Hin.
    - constructor.
    - intros j i u Hj. by rewrite lookup_nil in Hj.
    - intros j i u Hj. by rewrite lookup_nil in Hj.
    - intros j i u Hj. by rewrite lookup_nil in Hj.
    - intros t. done.
    - intros t Ht. done.
    - intros i u v Hin. by apply elem_of_nil in Hin.
  Qed.

  Lemma creach_inv s : creachable s → yreach NR (cx s) ∧ inv2 s.
  Proof.
    induction 1 as [| s s' _ [Hy Hi] Hs].
    - split; [apply yr_init | apply inv2_init].
    - destruct (yreach_inv NR HNR _ Hy) as [Hx Ha].
      assert (Hy' : yreach NR (cx s')).
      { destruct (cstep_y s s' Hi Hs) as [Hys | ->]; [by eapply yr_step | done]. }
      destruct (yreach_inv NR HNR _ Hy') as [Hx' Ha']. split; [done|].
      destruct Hs as [s t u Ht Hg | s t i u Hg Hp | s t x' i e Hg Hs Hn Hn' Hoth
        | s t my o i e Hp Hg | s t my i e Hp Hg | s t r Ht Hg | s t i r way Hg Hp | s t i r Hg
        | s t i r c v Hg | s t i r c v n Hg | s keep Hok].
      + apply inv2_invoke; [done|done|done|done|]. left. by exists u.
      + pose proof (j_thr s Hi t) as Ht. rewrite Hg in Ht. destruct Ht as (_ & Hinv & Hnq & Hn).
        apply (inv2_enqueue s t i (QU u)); try done; [by rewrite Hg | by left].
      + by apply (inv2_mid s t x' i e).
      + apply (inv2_upd_ret s _ t my i e); try done; cbn [tkt done xm pcs];
          first [by rewrite Hp | by left | apply mf_refl | by rewrite updf_eq | (intros t' Hne; by rewrite updf_ne)].
      + pose proof (xi_wf _ _ Hx) as Hwf.
        assert (Hl0 : 0 < nlines (xm (cx s))) by (pose proof (xi_lines _ _ Hx); lia).
        apply (inv2_upd_ret s _ t my i e); try done; cbn [tkt done xm pcs];
          first [by rewrite Hp | by left | by apply mf_fence | by rewrite updf_eq | (intros t' Hne; by rewrite updf_ne)].
      + apply inv2_invoke; [done|done|done|done|]. right. by exists r.
      + pose proof (j_thr s Hi t) as Ht. rewrite Hg in Ht. destruct Ht as (_ & Hinv & Hnq & Hn).
        destruct way.
        * apply (inv2_enqueue s t i (QR r true)); try done; [by rewrite Hg | by left].
        * apply (inv2_enqueue s t i (QR r false)); try done; [by rewrite Hg | right; by exists r].
      + by apply inv2_read.
      + by apply inv2_rpwb.
      + by apply (inv2_rsync s t i r c v n).
      + by apply inv2_crash.
  Qed.

  (** ** The histories are well formed *)

  Definition gid (g : gpc) : option opid :=
    match g with GNone => None | GInv i _ | GUpd i _ | GRInv i _ | GPub i _ | GRd i _ _ _ _ => Some i end.

  Lemma gid_invoked s t i : inv2 s → gid (gp s t) = Some i → ∃ o, Invoke i t o ∈ erase (xh s).
  Proof.
    intros Hi Hg. pose proof (j_thr s Hi t) as Ht.
    destruct (gp s t) as [| i' u | i' u | i' r | i' r | i' r c v sy]; simplify_eq/=.
    - destruct Ht as (_ & Ht & _). eauto.
    - destruct Ht as (my & _ & _ & _ & _ & Ht). eauto.
    - destruct Ht as (_ & Ht & _). eauto.
    - destruct Ht as (_ & Ht & _). eauto.
    - destruct Ht as (_ & Ht & _). eauto.
  Qed.

  Record inv3 (s : cstate) : Prop := {
    w_wf : wf (erase (xh s));
    w_pend : ∀ t j, pending_on (erase (xh s)) t j → gid (gp s t) = Some j;
    w_gid : ∀ t j, gid (gp s t) = Some j → pending_on (erase (xh s)) t j ∧ ¬ finished (erase (xh s)) j;
  }.

  (** [inv3] is [History.v]'s [cur_ops]: each step keeps it by its lemmas. *)
  Lemma inv3_cur_ops s : inv3 s ↔ cur_ops (erase (xh s)) (λ t, gid (gp s t)).
  Proof. split; intros []; by split. Qed.

  Lemma inv3_same s s' : inv3 s → erase (xh s') = erase (xh s) → (∀ t, gid (gp s' t) = gid (gp s t)) → inv3 s'.
  Proof. intros Hs%inv3_cur_ops He Hid. apply inv3_cur_ops. rewrite He. by apply (cur_ops_same _ _ _ Hs). Qed.

  Lemma inv3_invoke s t o g :
    inv2 s → inv3 s → gp s t = GNone → gid g = Some (nid s) →
    inv3 (CState (cx s) (cq s) (updf (gp s) t g) (xh s ++ [XE (Invoke (nid s) t o)]) (S (nid s)) (pl s)).
  Proof.
    intros Hi Hs%inv3_cur_ops Hgt Hgid. apply inv3_cur_ops. cbn [xh gp]. rewrite erase_app.
    apply (cur_ops_invoke _ _ _ _ _ _ Hs); [by rewrite Hgt | | by rewrite updf_eq | intros u ?; by rewrite updf_ne].
    intros (t' & o' & H). apply (j_nid s Hi) in H. lia.
  Qed.

  Lemma inv3_ret s s' t i v b :
    inv2 s → inv3 s → gid (gp s t) = Some i → gp s' = updf (gp s) t GNone →
    xh s' = xh s ++ adv s b ++ [XE (Return i v)] → inv3 s'.
  Proof.
    intros _ Hs%inv3_cur_ops Hgt Hgs Hx. apply inv3_cur_ops. rewrite Hgs, Hx, erase_adv_ev.
    apply (cur_ops_return _ _ _ _ _ _ Hs Hgt); [by rewrite updf_eq | intros u ?; by rewrite updf_ne].
  Qed.

  Lemma inv3_crash s keep :
    inv2 s → inv3 s →
    inv3 (CState (recover (cx s) keep) (take (ccn (xm (cx s)) (keep 0)).1 (cq s)) (λ _, GNone)
            (xh s ++ adv s (ccn (xm (cx s)) (keep 0)).1 ++ [XE Crash]) (nid s) (ccn (xm (cx s)) (keep 0)).1).
  Proof.
    intros _ Hs%inv3_cur_ops. apply inv3_cur_ops. cbn [xh gp]. rewrite erase_adv_ev.
    by apply (cur_ops_crash _ _ _ Hs).
  Qed.

  Lemma inv3_init : inv3 cinit.
  Proof. apply inv3_cur_ops, cur_ops_nil. done. Qed.

  Lemma creach_inv3 s : creachable s → inv3 s.
  Proof.
    induction 1 as [| s s' Hr IH Hs]; [apply inv3_init|].
    destruct (creach_inv s Hr) as [_ Hi].
    destruct Hs as [s t u Ht Hg | s t i u Hg Hp | s t x' i e Hg Hs Hn Hn' Hoth
      | s t my o i e Hp Hg | s t my i e Hp Hg | s t r Ht Hg | s t i r way Hg Hp | s t i r Hg
      | s t i r c v Hg | s t i r c v n Hg | s keep Hok].
    - by apply inv3_invoke.
    - apply (inv3_same s); [done|done|]. intros t'. cbn [gp]. unfold updf. case_decide; [subst; by rewrite Hg|done].
    - by apply (inv3_same s).
    - by apply (inv3_ret s _ t i (resq (cq s) (pred my) e) (pl s `max` my)); [| |rewrite Hg|..].
    - by apply (inv3_ret s _ t i (resq (cq s) (pred my) e) (pl s `max` my)); [| |rewrite Hg|..].
    - by apply inv3_invoke.
    - apply (inv3_same s); [done|done|]. intros t'. cbn [gp]. unfold updf.
      case_decide; [subst; rewrite Hg; by destruct way|done].
    - apply (inv3_same s); [done| |].
      + cbn [xh]. case_decide; [|done]. rewrite erase_app. simpl. by rewrite app_nil_r.
      + intros t'. cbn [gp]. unfold updf. case_decide; [subst; by destruct Hg as [-> | ->]|done].
    - apply (inv3_same s); [done|done|]. intros t'. cbn [gp]. unfold updf. case_decide; [subst; by rewrite Hg|done].
    - by apply (inv3_ret s _ t i v (pl s `max` c)); [| |rewrite Hg|..].
    - by apply inv3_crash.
  Qed.

  (** A step of [CXPTMPx.v] that moves one thread inside its update. *)
  Lemma c_mid_upd s t x' c i e :
    gp s t = GUpd i e →
    xstep NR false false (cx s) x' → pcs (cx s) t ≠ XIdle → pcs x' = updf (pcs (cx s)) t c → c ≠ XIdle →
    cstep s (CState x' (cq s) (gp s) (xh s) (nid s) (pl s)).
  Proof.
    intros Hg Hs Hn Hp Hc. apply (c_mid s t x' i e Hg Hs Hn); rewrite Hp; [by rewrite updf_eq|].
    intros t' Hne. by rewrite updf_ne.
  Qed.

  (** ** The theorems *)

  (** The histories of CX-PTM on Px86 — update transactions and direct
      read-only transactions of any number of threads, crashes and null
      recovery included — are durably linearizable ([Core/DurableLin.v])
      for the sequential specification of the object. *)
  Theorem cx_px_durably_linearizable s :
    creachable s → durably_linearizable spec (erase (xh s)).
  Proof.
    intros Hr. destruct (creach_inv s Hr) as [_ Hi]. exists (xh s). split; [done | apply (j_ok s Hi) |].
    apply (runs_to_runs _ _ _ (j_run s Hi)).
  Qed.

  (** The histories are well formed ([History.wf]: what [perdure
      check-history] accepts), and a crash-free one is linearizable in the
      classic sense (Herlihy and Wing; [DurableLin.v]'s [linearizable]). *)
  Theorem cx_px_wf s : creachable s → wf (erase (xh s)).
  Proof. intros Hr. apply (w_wf s (creach_inv3 s Hr)). Qed.

  Theorem cx_px_linearizable_crash_free s :
    creachable s → crash_free (erase (xh s)) → linearizable spec (erase (xh s)).
  Proof.
    intros Hr Hcf. apply durably_linearizable_iff_linearizable; [by apply cx_px_wf | done |].
    by apply cx_px_durably_linearizable.
  Qed.

  (** [CompletedDurable] with the values: an update transaction that
      returned [v] is the node of ticket [S j] of the queue, [v] is the
      result the queue order gives it, and every crash image Px86 allows of
      [curComb] is at that ticket or later. *)
  Theorem cx_px_returned_durable s i t u v :
    creachable s → Return i v ∈ erase (xh s) → Invoke i t (Upd u) ∈ erase (xh s) →
    ∃ j, cq s !! j = Some (i, QU u) ∧ v = resq (cq s) j (QU u) ∧
      ∀ keep, p_crash_ok (xm (cx s)) keep → S j ≤ p_image cline (xm (cx s)) keep TK.
  Proof.
    intros Hr Hret Hinv. destruct (creach_inv s Hr) as [Hy Hi]. destruct (yreach_inv NR HNR _ Hy) as [Hx _].
    apply elem_of_erase, elem_of_list_split in Hret as (l1 & l2 & Eh).
    destruct (j_ok s Hi _ _ _ Eh) as [o Ho].
    assert (Hxl : XL i o v ∈ xh s) by (rewrite Eh; apply elem_of_app; by left).
    destruct (xl_invoked s i o v Hi Hxl) as [t' Ht'].
    destruct (j_inv1 s Hi i t' o t (Upd u) Ht' Hinv) as [_ ->].
    destruct (j_xl s Hi i u v Hxl) as (j & Hj & Hq & Hv). exists j. split_and!; [done|done|].
    intros keep Hok. assert (Hl0 : 0 < nlines (xm (cx s))) by (pose proof (xi_lines _ _ Hx); lia).
    destruct (Hok 0 Hl0) as [Hk1 Hk2].
    change (p_image cline (xm (cx s)) keep TK) with (ccn (xm (cx s)) (keep 0)).1.
    pose proof (j_pl s Hi (keep 0) Hk1 Hk2). lia.
  Qed.
End cx_px_lin.

(** ** Not vacuous: an update returns, a read sees it, a crash keeps it *)

(** A counter: an update increments it and returns the old value, a read
    returns it. *)
Definition ex_uexec (_ : unit) (σ : nat) : nat * nat := (S σ, σ).
Definition ex_rexec (_ : unit) (σ : nat) : nat := σ.

(** The run below is built forwards: each step's reachability hypothesis
    gets the normal form of the state it reaches ([norm_hyp], [PxPersist.v]). *)
Ltac cur R := match type of R with creachable _ _ _ _ _ ?x => x end.
Ltac nidle := let H := fresh in intros H; vm_compute in H; discriminate H.
Ltac xlt := vm_compute; lia.

(** Thread 0 increments (and returns 0) through its own CAS and [psync];
    thread 1 reads the replica [curComb] names (1), writes [curComb] back,
    fences and returns; thread 0 publishes a read as a node (ticket 2),
    reads directly (1) and returns; then a crash that keeps every line: the
    history every [cx_px_*] theorem speaks of. *)
Theorem cx_px_lin_not_vacuous :
  ∃ s, creachable 0 ex_uexec ex_rexec 2 2 s ∧
    erase (xh s) = [Invoke 0 0 (Upd tt); Return 0 0; Invoke 1 1 (Rd tt); Return 1 1;
                    Invoke 2 0 (Rd tt); Return 2 1; Crash].
Proof.
  pose proof (cr_init 0 ex_uexec ex_rexec 2 2) as R.
  let s := cur R in pose proof (cr_step _ _ _ _ _ _ _ R (c_invoke _ _ _ 2 2 s 0 tt ltac:(lia) eq_refl)) as R1.
  norm_hyp R1.
  let s := cur R1 in pose proof (cr_step _ _ _ _ _ _ _ R1 (c_enqueue _ _ _ 2 2 s 0 0 tt eq_refl eq_refl)) as R2.
  norm_hyp R2.
  let s := cur R2 in pose proof (cr_step _ _ _ _ _ _ _ R2 (c_mid_upd _ _ _ 2 2 s 0 _ _ 0 (QU tt) eq_refl
    (x_lock 2 false false (cx s) 0 1 1 eq_refl ltac:(lia) eq_refl ltac:(xlt)) ltac:(nidle) eq_refl ltac:(nidle))) as R3.
  norm_hyp R3.
  let s := cur R3 in pose proof (cr_step _ _ _ _ _ _ _ R3 (c_mid_upd _ _ _ 2 2 s 0 _ _ 0 (QU tt) eq_refl
    (x_settle 2 false false (cx s) 0 1 1 eq_refl) ltac:(nidle) eq_refl ltac:(nidle))) as R4.
  norm_hyp R4.
  let s := cur R4 in pose proof (cr_step _ _ _ _ _ _ _ R4 (c_mid_upd _ _ _ 2 2 s 0 _ _ 0 (QU tt) eq_refl
    (x_pwbrep 2 false false (cx s) 0 1 1 eq_refl) ltac:(nidle) eq_refl ltac:(nidle))) as R5.
  norm_hyp R5.
  let s := cur R5 in pose proof (cr_step _ _ _ _ _ _ _ R5 (c_mid_upd _ _ _ 2 2 s 0 _ _ 0 (QU tt) eq_refl
    (x_fence 2 false false (cx s) 0 1 1 eq_refl) ltac:(nidle) eq_refl ltac:(nidle))) as R6.
  norm_hyp R6.
  let s := cur R6 in pose proof (cr_step _ _ _ _ _ _ _ R6 (c_mid_upd _ _ _ 2 2 s 0 _ _ 0 (QU tt) eq_refl
    (x_cas 2 false false (cx s) 0 1 1 eq_refl ltac:(xlt)) ltac:(nidle) eq_refl ltac:(nidle))) as R7.
  norm_hyp R7.
  let s := cur R7 in pose proof (cr_step _ _ _ _ _ _ _ R7 (c_mid_upd _ _ _ 2 2 s 0 _ _ 0 (QU tt) eq_refl
    (x_pwbcc 2 false false (cx s) 0 1 0 eq_refl) ltac:(nidle) eq_refl ltac:(nidle))) as R8.
  norm_hyp R8.
  let s := cur R8 in pose proof (cr_step _ _ _ _ _ _ _ R8 (c_mid_upd _ _ _ 2 2 s 0 _ _ 0 (QU tt) eq_refl
    (x_sync 2 false false (cx s) 0 1 0 eq_refl) ltac:(nidle) eq_refl ltac:(nidle))) as R9.
  norm_hyp R9.
  let s := cur R9 in pose proof (cr_step _ _ _ _ _ _ _ R9 (c_ret _ _ _ 2 2 s 0 1 0 0 (QU tt) eq_refl eq_refl)) as R10.
  norm_hyp R10.
  let s := cur R10 in pose proof (cr_step _ _ _ _ _ _ _ R10 (c_rinvoke _ _ _ 2 2 s 1 tt ltac:(lia) eq_refl)) as R11.
  norm_hyp R11.
  let s := cur R11 in pose proof (cr_step _ _ _ _ _ _ _ R11 (c_read _ _ _ 2 2 s 1 1 tt (or_introl eq_refl))) as R12.
  norm_hyp R12.
  let s := cur R12 in pose proof (cr_step _ _ _ _ _ _ _ R12 (c_rpwb _ _ _ 2 2 s 1 1 tt 1 1 eq_refl)) as R13.
  norm_hyp R13.
  let s := cur R13 in pose proof (cr_step _ _ _ _ _ _ _ R13 (c_rsync _ _ _ 2 2 s 1 1 tt 1 1 2 eq_refl)) as R14.
  norm_hyp R14.
  let s := cur R14 in pose proof (cr_step _ _ _ _ _ _ _ R14 (c_rinvoke _ _ _ 2 2 s 0 tt ltac:(lia) eq_refl)) as R15.
  norm_hyp R15.
  let s := cur R15 in pose proof (cr_step _ _ _ _ _ _ _ R15 (c_publish _ _ _ 2 2 s 0 2 tt false eq_refl eq_refl)) as R16.
  norm_hyp R16.
  let s := cur R16 in pose proof (cr_step _ _ _ _ _ _ _ R16 (c_read _ _ _ 2 2 s 0 2 tt (or_intror eq_refl))) as R17.
  norm_hyp R17.
  let s := cur R17 in pose proof (cr_step _ _ _ _ _ _ _ R17 (c_rpwb _ _ _ 2 2 s 0 2 tt 1 1 eq_refl)) as R18.
  norm_hyp R18.
  let s := cur R18 in pose proof (cr_step _ _ _ _ _ _ _ R18 (c_rsync _ _ _ 2 2 s 0 2 tt 1 1 2 eq_refl)) as R19.
  norm_hyp R19.
  let s := cur R19 in pose proof (cr_step _ _ _ _ _ _ _ R19 (c_crash _ _ _ 2 2 s (λ L, match L with 0 => 2 | 1 => 0 | _ => 1 end)
    ltac:(intros L HL; vm_compute in HL; destruct L as [|[|[|L]]]; vm_compute; lia))) as R20.
  norm_hyp R20.
  eexists. split; [exact R20 | reflexivity].
Qed.

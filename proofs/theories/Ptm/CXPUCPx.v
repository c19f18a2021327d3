(** * CX-PUC on Px86: durable linearizability, the whole used part written back

    CX-PUC ([impl/perdure-ptm/src/cx/puc.rs], seed paper §4 "CX-PUC") runs
    the same consensus as CX-PTM ([impl/perdure-ptm/src/cx/core.rs]: turn
    queue, combining, the [cur_comb] CAS, [Cx::ensure_durable]); what
    differs is its [Flavor] ([Plainly]): an updater's closures run on a
    per-thread working copy of the replica ([WorkingCopy], volatile), and
    before the CAS the updater settles the working copy into the replica
    ([Plainly::settle]: every used word of a dirty line that differs is
    stored, in word order) and writes back the whole used part
    ([Plainly::write_back]: [pool.pwb(base, used)], a [pwb] of every line
    up to the allocator's bump).  [CXPTMPx.v] takes a replica to be one
    cache line, where both write-backs are the same [pwb]; this file models
    CX-PUC's replicas word by word on their lines and proves that the
    settle and the whole-part write-back make [CXPTMPxLin.v]'s abstraction
    sound for them.

    The model ([pstep]) is a product: [CXPTMPxLin.v]'s state ([ab]: the
    consensus, the queue's nodes and the history, with its [cstep]s), the
    replicas' persistent memory word by word ([cm], on [Core/PxPersist.v]:
    word [i] of replica [r] is location [wloc r i], 8 words a line as
    [LINE_WORDS], [LPR] lines a replica, line [rline r (i / 8)]), and each
    thread's progress in its settle or write-back ([pr]).  The replica of
    ticket [k] holds the words [ser (stq q k)]: the serialization [ser]
    (any function with at most [LPR * 8] words: the used part) of the
    state after the first [k] nodes of the queue.  The steps, with the Rust
    function each abstracts ([puc.rs] unless named):
    - [u_settle]: [Plainly::settle], one word: the word [pr t] of the used
      part is loaded and, if it differs from the working copy's (the state
      of the thread's node, [ser (stq q my)]), stored ([w.load] /
      [w.store(v)]);
    - [u_store]: any store to the held replica while the thread applies
      nodes: what an abandoned session leaves ([Cx::update_on]'s
      [get_combined] [None] path: [F::settle] without [F::write_back],
      then [exclusive_unlock]); the settle restarts;
    - [u_wb]: [Plainly::write_back], one line: [pwb] of line [pr t] of the
      used part ([s.pool.pwb(s.base, s.used)] issues one per line);
    - [u_lock], [u_settled], [u_written], [u_fenced]: [CXPTMPx.v]'s
      [x_lock] (a session starts: [Plainly::begin], [ensure_loaded]),
      [x_settle] once the settle has gone through the used part,
      [x_pwbrep] once the write-back has gone through it, and [x_fence],
      which fences the replica's memory too ([Cx::update_on]:
      [F::settle], [F::write_back], [c.lock.downgrade()],
      [self.pool.pfence()]), each in [CXPTMPxLin.v]'s [c_mid];
    - [u_crash]: [CXPTMPxLin.v]'s [c_crash] with a crash of the replicas'
      memory keeping any image Px86 allows ([CxPuc::open], [Cx::build]);
    - [u_calm]: every other step of [CXPTMPxLin.v] ([cstep]) that puts no
      thread into one of the four phases above; the replicas' memory does
      not change (runs and copies work on the working copy:
      [Plainly::run], [Plainly::copy_from]; reads load it:
      [CxPuc::run_read]).

    Proved, for any number of threads, [NR ≥ 1] replicas, [LPR] lines a
    replica, any serialization and any number of crashes:
    - [cxpuc_px_durably_linearizable]: every reachable state's history is
      durably linearizable ([Core/DurableLin.v]) for the object's
      sequential specification (through [cx_px_durably_linearizable]:
      every run of the product is a run of [CXPTMPxLin.v]'s model,
      [preach_creach]); [cxpuc_px_wf]: the histories are well formed;
    - [cxpuc_px_durable_image]: if the first run's memory holds, persisted,
      the initial state's words in replica 0 ([init_ok]: what
      [CxPuc::create] leaves through [layout::create]), then in every crash
      image Px86 allows of [curComb] and of the replicas, the replica
      [curComb]'s image names holds, word by word in its whole used part,
      [ser] of the state of the ticket [curComb]'s image names;
    - [cxpuc_px_recovers_linearized]: after such a crash ([u_crash]) the
      replica null recovery designates holds, persisted in full, [ser σ]
      where [σ] is the state the history's linearization points run the
      object to ([CXPTMPxLin.v]'s [j_run]): the durable linearization of
      [cxpuc_px_durably_linearizable] and the recovered object agree;
    - [cxpuc_px_designated_full]: the replica the visible [curComb] names
      holds [ser] of the state of its ticket, every used line persisted in
      full (what a reader loads, [CxPuc::run_read]);
    - [cxpuc_px_not_vacuous]: for a counter of one word, two replicas of
      one line and one thread, [init_ok] holds of the empty memory, and an
      explicit run of 13 steps where an update settles its word (a store:
      it differs), writes its line back, fences, installs, syncs and
      returns 0, then a crash keeping exactly the marks, after which the
      recovered replica 1 shows the counter's new value 1.

    The invariant ([kinv]): the replicas' memory is well formed; a held
    [Combined]'s replica holds, persisted in full (every used line's
    history within its mark), [ser] of the state of the ticket its
    [CXPTMPx.v] line holds, at most the queue's length; per thread, while
    it settles, the words it has settled hold its node's state; while it
    writes back, the whole used part holds it and each line written back
    has its [pwb] pending or covered at its current length; after the
    fence, all of it is persisted.  The whole-part write-back is what makes
    a replica durable whatever earlier sessions stored and did not write
    back (an abandoned session's [u_store]s, or a word the settle found
    equal and did not store: its line's earlier stores are covered by the
    line's [pwb]).

    What the model abstracts (beyond [CXPTMPx.v]'s and [CXPTMPxLin.v]'s
    lists, whose steps it keeps):
    - the working copy's contents: at the settle it holds the state of the
      thread's node, serialized ([CXPTM.v]'s [cx_applied_in_order] for the
      sequential application; the line bitmaps [present], [dirty],
      [saved] and the undo of a panicking closure not modelled); the
      settle is modelled over every used word (the code skips lines no job
      made dirty, which hold the replica's words already: the same
      stores);
    - the used length is the serialization's length (the code reads the
      allocator's bump, [Cx::used_len]; words past it are not state);
    - a line is 8 words and the replica's lines are its own; the region
      past [LPR] lines, [curComb]'s line (in [CXPTMPx.v]'s memory) and
      the header are not in this memory;
    - fences other than the one before the CAS leave the replicas' memory
      alone (a thread has no replica write-back pending then);
    - an abandoned session ([Cx::update_on]'s [None] path) goes on in the
      model through the settle, write-back and fence before giving the
      replica up ([CXPTMPx.v]'s [x_cas_fail]), which the code skips. *)
From stdpp Require Import base list list_numbers decidable.
From Coq Require Import Lia Arith.
From perdure.Core Require Import History DurableLin Px86 PxPersist.
From perdure.Ptm Require Import CXPTMPx CXPTMPxLin.

(** ** Words and lines of the replicas *)

(** Word [i] of replica [r], and the line of a location: 8 words a line
    ([LINE_WORDS] in [puc.rs]), [LPR] lines a replica. *)
Definition wloc (LPR r i : nat) : loc := r * (LPR * 8) + i.
Definition wline (x : loc) : nat := x / 8.
Definition rline (LPR r j : nat) : nat := r * LPR + j.
(** The number of lines a used part of [n] words spans. *)
Definition nlu (n : nat) : nat := (n + 7) / 8.

Lemma wline_wloc LPR r i : wline (wloc LPR r i) = rline LPR r (i / 8).
Proof.
  unfold wline, wloc, rline. replace (r * (LPR * 8) + i) with (i + r * LPR * 8) by lia.
  rewrite Nat.div_add by lia. lia.
Qed.

Lemma wline_line LPR r j : wline (wloc LPR r (j * 8)) = rline LPR r j.
Proof.
  unfold wline, wloc, rline. replace (r * (LPR * 8) + j * 8) with ((r * LPR + j) * 8) by lia.
  by rewrite Nat.div_mul.
Qed.

Lemma div8_lt i n : i < n * 8 → i / 8 < n.
Proof. intros. apply Nat.div_lt_upper_bound; lia. Qed.

Lemma nlu_lt i n : i < n → i / 8 < nlu n.
Proof.
  intros Hi. unfold nlu. pose proof (Nat.div_mod i 8 ltac:(lia)).
  apply Nat.lt_le_trans with (S (i / 8)); [lia|]. apply Nat.div_le_lower_bound; lia.
Qed.

Lemma nlu_le n L : n ≤ L * 8 → nlu n ≤ L.
Proof. intros. unfold nlu. assert ((n + 7) / 8 < S L) by (apply Nat.div_lt_upper_bound; lia). lia. Qed.

Lemma rline_inj LPR r r' j j' : j < LPR → j' < LPR → rline LPR r j = rline LPR r' j' → r = r' ∧ j = j'.
Proof. unfold rline. intros Hj Hj' E. destruct (decide (r = r')) as [-> | Hne]; [lia|]. exfalso. nia. Qed.

Lemma wloc_inj LPR r i i' : wloc LPR r i = wloc LPR r i' → i = i'.
Proof. unfold wloc. lia. Qed.

Lemma seq_val_other x y v ws : y ≠ x → seq_val x (ws ++ [[(y, v)]]) = seq_val x ws.
Proof. intros Hne. rewrite seq_val_snoc_w. simpl. by rewrite decide_False. Qed.

Lemma seq_val_same x v ws : seq_val x (ws ++ [[(x, v)]]) = v.
Proof. rewrite seq_val_snoc_w. simpl. by rewrite decide_True. Qed.

Section puc.
  Context {St UOp ROp Val : Type}.
  Context (init : St) (uexec : UOp → St → St * Val) (rexec : ROp → St → Val).
  Context (N NR : nat) (HNR : 0 < NR).
  (** [LPR] lines a replica; [ser σ]: the used words of a replica holding
      state [σ]. *)
  Context (LPR : nat) (ser : St → list nat) (Hser : ∀ σ, length (ser σ) ≤ LPR * 8).

  Notation cst := (@cstate UOp ROp Val).
  Notation cstep := (cstep init uexec rexec N NR).
  Notation creachable := (creachable init uexec rexec N NR).

  (** The words of the replica of ticket [k]. *)
  Definition sq (q : list (opid * @qop UOp ROp)) (k : nat) : list nat := ser (@stq St UOp ROp Val init uexec q k).

  (** The visible word [i] of replica [r]. *)
  Definition wv (p : pmem) (r i : nat) : val := p_load wline p (wloc LPR r i).

  (** Replica [r] holds [ws] (visible), every used line persisted in full,
      every used line written back by [t] at its current length. *)
  Definition holds (p : pmem) (r : nat) (ws : list nat) : Prop :=
    ∀ i, i < length ws → wv p r i = nth i ws 0.
  Definition durable (p : pmem) (r : nat) (ws : list nat) : Prop :=
    ∀ j, j < nlu (length ws) → length (hist p (rline LPR r j)) ≤ mk p (rline LPR r j).
  Definition full (p : pmem) (r : nat) (ws : list nat) : Prop := holds p r ws ∧ durable p r ws.
  Definition wbk (p : pmem) (t r n : nat) : Prop :=
    ∀ j, j < n → pending p t (rline LPR r j) (length (hist p (rline LPR r j))).

  (** ** The product model *)

  Record pstate := PState {
    ab : cst;        (* CXPTMPxLin.v's state: the consensus, the queue, the history *)
    cm : pmem;       (* the replicas' words *)
    pr : nat → nat;  (* per thread: the next word to settle or line to write back *)
  }.

  Definition phase (c : xpc) : bool :=
    match c with XApply _ _ | XPwbRep _ _ | XFence _ _ | XCas _ _ => true | _ => false end.

  (** A step of [CXPTMPxLin.v] that puts no thread into a phase. *)
  Definition calm (s s' : cst) : Prop := ∀ t, pcs (cx s') t = pcs (cx s) t ∨ phase (pcs (cx s') t) = false.

  Definition mid (s : cst) (x' : xstate) : cst := CState x' (cq s) (gp s) (xh s) (nid s) (pl s).

  Definition crash_of (s : cst) (keep : nat → nat) : cst :=
    CState (recover (cx s) keep) (take (ccn (xm (cx s)) (keep 0)).1 (cq s)) (λ _, GNone)
      (xh s ++ adv init uexec rexec N s (ccn (xm (cx s)) (keep 0)).1 ++ [XE Crash]) (nid s)
      (ccn (xm (cx s)) (keep 0)).1.

  (** [Plainly::settle], one word: store it if it differs. *)
  Definition settle_word (p : pmem) (r i v : nat) : pmem :=
    if decide (wv p r i = v) then p else p_store wline p (wloc LPR r i) v.

  Inductive pstep : pstate → pstate → Prop :=
    (* Plainly::settle: word [pr t] of the used part, stored if it differs *)
    | u_settle ps t my r :
        pcs (cx (ab ps)) t = XApply my r → pr ps t < length (sq (cq (ab ps)) my) →
        pstep ps (PState (ab ps) (settle_word (cm ps) r (pr ps t) (nth (pr ps t) (sq (cq (ab ps)) my) 0))
                    (updf (pr ps) t (S (pr ps t))))
    (* any store to the held replica (an abandoned session's settle); the settle restarts *)
    | u_store ps t my r i v :
        pcs (cx (ab ps)) t = XApply my r → i < LPR * 8 →
        pstep ps (PState (ab ps) (p_store wline (cm ps) (wloc LPR r i) v) (updf (pr ps) t 0))
    (* Plainly::write_back: pwb of line [pr t] of the used part *)
    | u_wb ps t my r :
        pcs (cx (ab ps)) t = XPwbRep my r → pr ps t < nlu (length (sq (cq (ab ps)) my)) →
        pstep ps (PState (ab ps) (p_pwb wline (cm ps) t (wloc LPR r (pr ps t * 8))) (updf (pr ps) t (S (pr ps t))))
    (* x_lock: a session starts (Cx::lock_any, Plainly::begin) *)
    | u_lock ps t my r i e :
        gp (ab ps) t = GUpd i e → pcs (cx (ab ps)) t = XEnq my → r < NR → lk (cx (ab ps)) r = XFree →
        chead (cx (ab ps)) < my →
        pstep ps (PState (mid (ab ps) (XState (xm (cx (ab ps))) (tkt (cx (ab ps))) (updf (lk (cx (ab ps))) r (XOwned t))
                                           (updf (pcs (cx (ab ps))) t (XApply my r)) (done (cx (ab ps)))))
                    (cm ps) (updf (pr ps) t 0))
    (* x_settle, once the settle went through the used part *)
    | u_settled ps t my r i e :
        gp (ab ps) t = GUpd i e → pcs (cx (ab ps)) t = XApply my r → pr ps t = length (sq (cq (ab ps)) my) →
        pstep ps (PState (mid (ab ps) (XState (p_store cline (xm (cx (ab ps))) (OBJ r) my) (tkt (cx (ab ps)))
                                           (lk (cx (ab ps))) (updf (pcs (cx (ab ps))) t (XPwbRep my r)) (done (cx (ab ps)))))
                    (cm ps) (updf (pr ps) t 0))
    (* x_pwbrep, once the write-back went through the used part *)
    | u_written ps t my r i e :
        gp (ab ps) t = GUpd i e → pcs (cx (ab ps)) t = XPwbRep my r →
        pr ps t = nlu (length (sq (cq (ab ps)) my)) →
        pstep ps (PState (mid (ab ps) (XState (p_pwb cline (xm (cx (ab ps))) t (OBJ r)) (tkt (cx (ab ps)))
                                           (lk (cx (ab ps))) (updf (pcs (cx (ab ps))) t (XFence my r)) (done (cx (ab ps)))))
                    (cm ps) (pr ps))
    (* x_fence: the pfence before the CAS fences the replica's write-backs *)
    | u_fenced ps t my r i e :
        gp (ab ps) t = GUpd i e → pcs (cx (ab ps)) t = XFence my r →
        pstep ps (PState (mid (ab ps) (XState (p_fence (xm (cx (ab ps))) t) (tkt (cx (ab ps)))
                                           (lk (cx (ab ps))) (updf (pcs (cx (ab ps))) t (XCas my r)) (done (cx (ab ps)))))
                    (p_fence (cm ps) t) (pr ps))
    (* c_crash, the replicas' memory crashing too (CxPuc::open, Cx::build) *)
    | u_crash ps keep keepc :
        p_crash_ok (xm (cx (ab ps))) keep → p_crash_ok (cm ps) keepc →
        pstep ps (PState (crash_of (ab ps) keep) (crash_mem (cm ps) keepc) (pr ps))
    (* every other step of CXPTMPxLin.v *)
    | u_calm ps s' : cstep (ab ps) s' → calm (ab ps) s' → pstep ps (PState s' (cm ps) (pr ps)).

  (** The first run's replicas' memory: well formed, replica 0 holds the
      initial state, persisted ([CxPuc::create]). *)
  Definition init_ok (p : pmem) : Prop := p_wf p ∧ nlines p = NR * LPR ∧ full p 0 (ser init).

  Inductive preach (cm0 : pmem) : pstate → Prop :=
    | pr_init : preach cm0 (PState (cinit NR) cm0 (λ _, 0))
    | pr_step ps ps' : preach cm0 ps → pstep ps ps' → preach cm0 ps'.

  (** ** Every run is one of [CXPTMPxLin.v]'s model *)

  Lemma pstep_c ps ps' : pstep ps ps' → cstep (ab ps) (ab ps') ∨ ab ps' = ab ps.
  Proof.
    destruct 1 as [ps t my r Hp Hi | ps t my r i v Hp Hi | ps t my r Hp Hj | ps t my r i e Hg Hp Hr Hl Hlt
      | ps t my r i e Hg Hp Hn | ps t my r i e Hg Hp Hn | ps t my r i e Hg Hp | ps keep keepc Hok Hokc
      | ps s' Hs Hc]; cbn [ab]; try (by right); left.
    - apply (c_mid_upd init uexec rexec N NR (ab ps) t _ (XApply my r) i e); [done| |by rewrite Hp|done|done].
      by apply x_lock.
    - apply (c_mid_upd init uexec rexec N NR (ab ps) t _ (XPwbRep my r) i e); [done| |by rewrite Hp|done|done].
      by apply (x_settle NR false false).
    - apply (c_mid_upd init uexec rexec N NR (ab ps) t _ (XFence my r) i e); [done| |by rewrite Hp|done|done].
      by apply x_pwbrep.
    - apply (c_mid_upd init uexec rexec N NR (ab ps) t _ (XCas my r) i e); [done| |by rewrite Hp|done|done].
      by apply x_fence.
    - by apply c_crash.
    - done.
  Qed.

  Lemma preach_creach cm0 ps : preach cm0 ps → creachable (ab ps).
  Proof.
    induction 1 as [|ps ps' _ IH Hs]; [apply cr_init|].
    destruct (pstep_c ps ps' Hs) as [H | ->]; [by eapply cr_step | done].
  Qed.

  (** ** The invariant *)

  Definition kt (p : pmem) (q : list (opid * @qop UOp ROp)) (t n : nat) (c : xpc) : Prop :=
    match c with
    | XApply my r => r < NR ∧ my ≤ length q ∧ n ≤ length (sq q my) ∧ ∀ i, i < n → wv p r i = nth i (sq q my) 0
    | XPwbRep my r => r < NR ∧ my ≤ length q ∧ n ≤ nlu (length (sq q my)) ∧ holds p r (sq q my) ∧ wbk p t r n
    | XFence my r => r < NR ∧ my ≤ length q ∧ holds p r (sq q my) ∧ wbk p t r (nlu (length (sq q my)))
    | XCas my r => r < NR ∧ my ≤ length q ∧ full p r (sq q my)
    | _ => True
    end.

  Record kinv (ps : pstate) : Prop := {
    k_wf : p_wf (cm ps);
    k_lines : nlines (cm ps) = NR * LPR;
    k_held : ∀ r, lk (cx (ab ps)) r = XHeld →
      r < NR ∧ objv (xm (cx (ab ps))) r ≤ length (cq (ab ps)) ∧
      full (cm ps) r (sq (cq (ab ps)) (objv (xm (cx (ab ps))) r));
    k_thr : ∀ t, kt (cm ps) (cq (ab ps)) t (pr ps t) (pcs (cx (ab ps)) t);
  }.

  (** ** Memory facts *)

  Lemma sq_len (q : list (opid * @qop UOp ROp)) k : length (sq q k) ≤ LPR * 8.
  Proof. apply Hser. Qed.

  Lemma rline_lt p r j : nlines p = NR * LPR → r < NR → j < LPR → rline LPR r j < nlines p.
  Proof. intros -> Hr Hj. unfold rline. nia. Qed.

  Lemma used_line (ws : list nat) i : length ws ≤ LPR * 8 → i < length ws → i / 8 < LPR ∧ i / 8 < nlu (length ws).
  Proof. intros Hl Hi. split; [apply div8_lt; lia | by apply nlu_lt]. Qed.

  Lemma wv_hist p p' r i : hist p' (rline LPR r (i / 8)) = hist p (rline LPR r (i / 8)) → wv p' r i = wv p r i.
  Proof. intros E. unfold wv, p_load, mem_visible. rewrite wline_wloc. fold (hist p' (rline LPR r (i / 8))). by rewrite E. Qed.

  (** A store to word [i] of replica [r]: that word becomes [v], every
      other word keeps its value. *)
  Lemma wv_store_same p r i v : nlines p = NR * LPR → r < NR → i < LPR * 8 →
    wv (p_store wline p (wloc LPR r i) v) r i = v.
  Proof.
    intros Hn Hr Hi. unfold wv, p_load, mem_visible, p_store. rewrite wline_wloc.
    fold (hist (p_write p (rline LPR r (i / 8)) [(wloc LPR r i, v)]) (rline LPR r (i / 8))).
    rewrite hist_write_same; [apply seq_val_same|]. apply rline_lt; [done|done|by apply div8_lt].
  Qed.

  Lemma wv_store_other p r i v r' i' : nlines p = NR * LPR → r < NR → i < LPR * 8 → (r, i) ≠ (r', i') →
    i' < LPR * 8 → wv (p_store wline p (wloc LPR r i) v) r' i' = wv p r' i'.
  Proof.
    intros Hn Hr Hi Hne Hi'. unfold wv, p_load, mem_visible, p_store. rewrite !wline_wloc.
    fold (hist p (rline LPR r' (i' / 8))).
    fold (hist (p_write p (rline LPR r (i / 8)) [(wloc LPR r i, v)]) (rline LPR r' (i' / 8))).
    destruct (decide (rline LPR r' (i' / 8) = rline LPR r (i / 8))) as [E | E].
    - rewrite E, hist_write_same by (apply rline_lt; [done|done|by apply div8_lt]).
      apply rline_inj in E as [<- E]; [|by apply div8_lt..]. rewrite <- E. apply seq_val_other.
      intros Hw. apply wloc_inj in Hw. congruence.
    - by rewrite hist_write_other.
  Qed.

  (** A write to a line of no replica but [r] leaves the others alone. *)
  Definition off_replica (L r' : nat) : Prop := ∀ j, j < LPR → L ≠ rline LPR r' j.

  Lemma full_write_other p L w r' (ws : list nat) : off_replica L r' → length ws ≤ LPR * 8 →
    full p r' ws → full (p_write p L w) r' ws.
  Proof.
    intros Hoff Hl [Hh Hd]. split.
    - intros i Hi. destruct (used_line ws i Hl Hi) as [H1 _].
      rewrite (wv_hist p); [by apply Hh|]. apply hist_write_other. intros E. by apply (Hoff (i / 8)).
    - intros j Hj. rewrite hist_write_other; [apply Hd, Hj|]. intros E. apply (Hoff j); [|done].
      pose proof (nlu_le (length ws) LPR Hl). lia.
  Qed.

  Lemma pending_write_line p t L L' w n : L' ≠ L → pending p t L' n → pending (p_write p L w) t L' n.
  Proof. intros _ H. exact H. Qed.

  Lemma kt_write_other p (q : list (opid * @qop UOp ROp)) t n c L w :
    (∀ r', owns c = Some r' → off_replica L r') → kt p q t n c → kt (p_write p L w) q t n c.
  Proof.
    intros Hoff. destruct c as [|my|my r|my r|my r|my r|my r o|my o|my o|my o|my|my]; simpl; try done.
    - intros (Hr & Hm & Hn & Hw). specialize (Hoff r eq_refl). split_and!; [done|done|done|].
      intros i Hi. assert (i < LPR * 8) by (pose proof (sq_len q my); lia).
      rewrite (wv_hist p); [by apply Hw|]. apply hist_write_other. intros E. by apply (Hoff (i / 8)); [apply div8_lt|].
    - intros (Hr & Hm & Hn & Hh & Hb). specialize (Hoff r eq_refl). pose proof (sq_len q my) as Hl.
      pose proof (nlu_le _ LPR Hl). split_and!; [done|done|done| |].
      + intros i Hi. destruct (used_line _ i Hl Hi) as [H1 _].
        rewrite (wv_hist p); [by apply Hh|]. apply hist_write_other. intros E. by apply (Hoff (i / 8)).
      + intros j Hj. rewrite hist_write_other by (intros E; apply (Hoff j); [lia|done]). apply Hb, Hj.
    - intros (Hr & Hm & Hh & Hb). specialize (Hoff r eq_refl). pose proof (sq_len q my) as Hl.
      pose proof (nlu_le _ LPR Hl). split_and!; [done|done| |].
      + intros i Hi. destruct (used_line _ i Hl Hi) as [H1 _].
        rewrite (wv_hist p); [by apply Hh|]. apply hist_write_other. intros E. by apply (Hoff (i / 8)).
      + intros j Hj. rewrite hist_write_other by (intros E; apply (Hoff j); [lia|done]). apply Hb, Hj.
    - intros (Hr & Hm & Hf). split_and!; [done|done|]. apply full_write_other; [by apply Hoff|apply sq_len|done].
  Qed.

  (** A [pwb] or a fence changes no line; a fence only raises marks and
      keeps a write-back pending or covered. *)
  Lemma full_fence p t r (ws : list nat) : p_wf p → nlines p = NR * LPR → r < NR → length ws ≤ LPR * 8 →
    full p r ws → full (p_fence p t) r ws.
  Proof.
    intros Hwf Hn Hr Hl [Hh Hd]. split.
    - intros i Hi. rewrite (wv_hist p); [by apply Hh|apply hist_fence].
    - intros j Hj. rewrite hist_fence. etrans; [apply Hd, Hj|apply mk_fence].
  Qed.

  Lemma kt_fence p (q : list (opid * @qop UOp ROp)) t t' n c : p_wf p → nlines p = NR * LPR → kt p q t' n c → kt (p_fence p t) q t' n c.
  Proof.
    intros Hwf Hn. assert (Hv : ∀ r i, wv (p_fence p t) r i = wv p r i) by (intros r i; apply wv_hist, hist_fence).
    assert (Hb : ∀ r m, r < NR → m ≤ LPR → wbk p t' r m → wbk (p_fence p t) t' r m).
    { intros r m Hr Hm Hb j Hj. rewrite hist_fence. apply pending_fence_any; [done| |by apply Hb].
      apply rline_lt; [done|done|lia]. }
    destruct c as [|my|my r|my r|my r|my r|my r o|my o|my o|my o|my|my]; simpl; try done.
    - intros (? & ? & ? & Hw). split_and!; [done|done|done|]. intros i Hi. rewrite Hv. by apply Hw.
    - intros (? & ? & Hn' & Hh & Hw). pose proof (nlu_le _ LPR (sq_len q my)).
      split_and!; [done|done|done| |apply Hb; [done|lia|done]]. intros i Hi. rewrite Hv. by apply Hh.
    - intros (? & ? & Hh & Hw). pose proof (nlu_le _ LPR (sq_len q my)).
      split_and!; [done|done| |apply Hb; [done|done|done]]. intros i Hi. rewrite Hv. by apply Hh.
    - intros (? & ? & Hf). split_and!; [done|done|]. apply full_fence; [done|done|done|apply sq_len|done].
  Qed.

  Lemma pending_pwbw p t t' x L n : pending p t L n → pending (p_pwb wline p t' x) t L n.
  Proof. intros [Hin | Hn]; [left; by right | by right]. Qed.

  Lemma kt_pwb p (q : list (opid * @qop UOp ROp)) t t' n c x : kt p q t' n c → kt (p_pwb wline p t x) q t' n c.
  Proof.
    assert (Hb : ∀ r m, wbk p t' r m → wbk (p_pwb wline p t x) t' r m).
    { intros r m Hb j Hj. by apply pending_pwbw, Hb. }
    destruct c as [|my|my r|my r|my r|my r|my r o|my o|my o|my o|my|my]; simpl; try done.
    - intros (? & ? & ? & ? & Hw). split_and!; try done. by apply Hb.
    - intros (? & ? & ? & Hw). split_and!; try done. by apply Hb.
  Qed.

  Lemma kt_app p (q l : list (opid * @qop UOp ROp)) t n c : kt p q t n c → kt p (q ++ l) t n c.
  Proof.
    assert (E : ∀ my, my ≤ length q → sq (q ++ l) my = sq q my) by (intros my Hm; unfold sq; by rewrite stq_app).
    destruct c as [|my|my r|my r|my r|my r|my r o|my o|my o|my o|my|my]; simpl; try done;
      rewrite app_length; intros (Hr & Hm & H); (split; [done|]); (split; [lia|]); by rewrite E.
  Qed.

  Lemma kt_nophase p (q : list (opid * @qop UOp ROp)) t n c : phase c = false → kt p q t n c.
  Proof. by destruct c. Qed.

  (** ** The invariant under a step that leaves the replicas' memory alone *)

  Lemma kinv_frame ps s' pr' :
    kinv ps →
    (∀ r, lk (cx s') r = XHeld →
          (lk (cx (ab ps)) r = XHeld ∧ objv (xm (cx s')) r = objv (xm (cx (ab ps))) r) ∨
          (∃ t my, pcs (cx (ab ps)) t = XCas my r ∧ objv (xm (cx s')) r = my)) →
    (∃ l, cq s' = cq (ab ps) ++ l) →
    (∀ t, (pcs (cx s') t = pcs (cx (ab ps)) t ∧ pr' t = pr ps t) ∨ kt (cm ps) (cq s') t (pr' t) (pcs (cx s') t)) →
    kinv (PState s' (cm ps) pr').
  Proof.
    intros [Hwf Hln Hheld Hthr] Hl [l Hq] Ht. split; cbn [cm pr ab]; [done|done| |].
    - intros r Hr. rewrite Hq, app_length. destruct (Hl r Hr) as [[Hh ->] | (t & my & Hp & ->)].
      + destruct (Hheld r Hh) as (? & Hm & Hf). split_and!; [done|lia|]. unfold sq. by rewrite stq_app.
      + pose proof (Hthr t) as Hk. rewrite Hp in Hk. destruct Hk as (? & Hm & Hf).
        split_and!; [done|lia|]. unfold sq. by rewrite stq_app.
    - intros t. destruct (Ht t) as [[-> ->] | H]; [|done]. rewrite Hq. apply kt_app, Hthr.
  Qed.

  (** ** The abstract invariants the proof uses *)

  Lemma abs_inv s : creachable s → xinv NR (cx s) ∧ xaux (cx s) ∧ length (cq s) = tkt (cx s).
  Proof.
    intros Hr. destruct (creach_inv init uexec rexec N NR HNR s Hr) as [Hy Hi].
    destruct (yreach_inv NR HNR _ Hy) as [Hx Ha]. split_and!; [done|done|]. by apply (j_len init uexec rexec N).
  Qed.

  Lemma owned_other x t r t' c r' :
    xinv NR x → pcs x t = c → owns c = Some r → t' ≠ t → owns (pcs x t') = Some r' → r' ≠ r.
  Proof.
    intros Hx Hp Ho Hne Ho' ->. pose proof (xi_owns _ _ Hx t r) as H1. pose proof (xi_owns _ _ Hx t' r Ho') as H2.
    rewrite Hp in H1. specialize (H1 Ho). congruence.
  Qed.

  Lemma owned_not_held x t r c : xinv NR x → pcs x t = c → owns c = Some r → lk x r ≠ XHeld.
  Proof. intros Hx Hp Ho. rewrite (xi_owns _ _ Hx t r); [done|by rewrite Hp]. Qed.

  Lemma off_other_replica r r' i : r ≠ r' → i < LPR → off_replica (rline LPR r i) r'.
  Proof. intros Hne Hi j Hj E. apply rline_inj in E as [? _]; [congruence|done|done]. Qed.

  (** ** The crash *)

  Lemma full_crash p keep r (ws : list nat) : p_crash_ok p keep → nlines p = NR * LPR → r < NR → length ws ≤ LPR * 8 →
    full p r ws → full (crash_mem p keep) r ws.
  Proof.
    intros Hok Hn Hr Hl [Hh Hd].
    assert (Hline : ∀ j, j < nlu (length ws) → hist (crash_mem p keep) (rline LPR r j) = hist p (rline LPR r j) ∧
                      length (hist p (rline LPR r j)) ≤ mk (crash_mem p keep) (rline LPR r j)).
    { intros j Hj. pose proof (nlu_le _ LPR Hl). assert (HL : rline LPR r j < nlines p) by (apply rline_lt; [done|done|lia]).
      destruct (Hok _ HL) as [H1 H2]. fold (mk p (rline LPR r j)) in H1. pose proof (Hd j Hj).
      rewrite crash_hist, crash_mk by done. rewrite take_ge by lia. split; [done|lia]. }
    split.
    - intros i Hi. destruct (used_line ws i Hl Hi) as [_ H2]. rewrite (wv_hist p); [by apply Hh|]. by apply Hline.
    - intros j Hj. destruct (Hline j Hj) as [-> H]. done.
  Qed.

  Lemma kinv_crash ps keep cm' pr' :
    creachable (ab ps) → kinv ps → p_crash_ok (xm (cx (ab ps))) keep →
    p_wf cm' → nlines cm' = NR * LPR → (∀ r ws, r < NR → length ws ≤ LPR * 8 → full (cm ps) r ws → full cm' r ws) →
    kinv (PState (crash_of (ab ps) keep) cm' pr').
  Proof.
    intros Hr [Hwf Hln Hheld Hthr] Hok Hwf' Hln' Hfull. destruct (abs_inv _ Hr) as (Hx & _ & _).
    assert (Hl0 : 0 < nlines (xm (cx (ab ps)))) by (pose proof (xi_lines _ _ Hx); lia).
    destruct (Hok 0 Hl0) as [Hk1 Hk2]. fold (mk (xm (cx (ab ps))) 0) in Hk1. fold (hist (xm (cx (ab ps))) 0) (len0 (xm (cx (ab ps)))) in Hk2.
    destruct (xi_des _ _ Hx (keep 0) Hk1 Hk2) as (Hrn & Hh & Hd & Hobj).
    set (c := ccn (xm (cx (ab ps))) (keep 0)) in *.
    assert (HrL : S c.2 < nlines (xm (cx (ab ps)))) by (pose proof (xi_lines _ _ Hx); lia).
    destruct (Hok _ HrL) as [Hk3 Hk4].
    split; cbn [cm pr ab crash_of recover cx xm lk pcs cq]; [done|done| |by intros t].
    intros r Hr'. case_decide as E; [|done]. change (ccl (hist (xm (cx (ab ps))) 0) (keep 0)) with c in E. subst r.
    assert (Ho : objv (crash_mem (xm (cx (ab ps))) keep) c.2 = c.1).
    { rewrite <- Hobj. unfold objv. rewrite (crash_hist _ keep (S c.2) HrL).
      rewrite take_ge by (unfold mk, hist in *; lia). done. }
    change (ccl (hist (xm (cx (ab ps))) 0) (keep 0)) with c. rewrite Ho.
    destruct (Hheld c.2 Hh) as (_ & Hm & Hf). rewrite Hobj in Hm, Hf.
    rewrite take_length. fold c. split_and!; [done|lia|]. unfold sq. rewrite (stq_take init uexec NR HNR) by lia.
    apply Hfull; [done|apply sq_len|exact Hf].
  Qed.

  (** ** Every step keeps the invariant *)

  Ltac kf := match goal with |- kinv (PState (CState _ ?q ?g ?h ?n ?l) ?c ?p) =>
    match goal with Hk : kinv (PState (CState ?s0 q g h n l) c p) |- _ =>
      apply (kinv_frame (PState (CState s0 q g h n l) c p)); [done| |by exists []; rewrite app_nil_r|done];
      cbn [cx mid xm lk ab] end end.

  Ltac nocalm t0 :=
    exfalso; match goal with Hc : calm _ _ |- _ =>
      destruct (Hc t0) as [E | E]; cbn [cx mid pcs] in E; rewrite updf_eq in E; simpl in E; congruence end.

  Lemma kinv_calm ps s' : creachable (ab ps) → kinv ps → cstep (ab ps) s' → calm (ab ps) s' →
    kinv (PState s' (cm ps) (pr ps)).
  Proof.
    destruct ps as [s0 cm0 pr0]. cbn [ab cm pr]. intros Hr Hk Hs Hc. destruct (abs_inv _ Hr) as (Hx & Ha & Hlen).
    pose proof (k_thr _ Hk) as Hthr. cbn [ab cm pr] in Hthr.
    (* a thread that moved is out of the phases *)
    assert (Hmove : ∀ t', (pcs (cx s') t' = pcs (cx s0) t' ∧ pr0 t' = pr0 t') ∨
                          kt cm0 (cq s') t' (pr0 t') (pcs (cx s') t')).
    { intros t'. destruct (Hc t') as [E | E]; [by left | right; by apply kt_nophase]. }
    destruct Hs as [s t u Ht Hg | s t i u Hg Hp | s t x' i e Hg Hs Hn Hn' Hoth
      | s t my o i e Hp Hg | s t my i e Hp Hg | s t r Ht Hg | s t i r way Hg Hp | s t i r Hg
      | s t i r c v Hg | s t i r c v n Hg | s keep Hok].
    - apply (kinv_frame (PState s cm0 pr0)); [done| |by exists []; rewrite app_nil_r|done]. intros r Hr'. by left.
    - apply (kinv_frame (PState s cm0 pr0)); [done| |by eexists|done]. intros r Hr'. by left.
    - (* CXPTMPx.v's steps inside an update *)
      destruct s as [x0 q0 g0 h0 n0 pl0]. cbn [cx cq gp xh nid pl mid] in *.
      destruct Hs as [s0 t0 Hp | s0 t0 my r Hp Hr0 Hlk Hlt | s0 t0 my Hp Hle | s0 t0 my r v Hp | s0 t0 my r Hp
        | s0 t0 my r Hp | s0 t0 my r Hp | s0 t0 my r Hp Hlt | s0 t0 my r Hp Hle | s0 t0 my r o Hp | s0 t0 my o Hp
        | s0 t0 my o Hp | s0 t0 my o Hp | s0 t0 my Hp | s0 t0 my Hp | s0 keep Hok]; cbn [xm lk pcs] in *.
      + (* x_enqueue *) kf. intros r' Hr'. left. done.
      + (* x_lock: a phase *) nocalm t0.
      + (* x_done *) kf. intros r' Hr'. left. done.
      + (* x_apply: the owned replica's line *)
        kf. intros r' Hr'. left. split; [done|]. unfold objv, p_store. rewrite hist_write_other; [done|].
        intros E. assert (r' = r) as -> by (unfold cline, OBJ in E; simpl in E; lia).
        exact (owned_not_held _ t0 r _ Hx Hp eq_refl Hr').
      + (* x_settle *) nocalm t0.
      + (* x_pwbrep *) nocalm t0.
      + (* x_fence *) nocalm t0.
      + (* x_cas: the replica becomes designated *)
        kf. intros r' Hr'. unfold objv. rewrite hist_write_other by done. fold (objv (xm s0) r').
        destruct (decide (r' = r)) as [-> | Hne].
        * right. exists t0, my. split; [done|]. pose proof (xi_threads _ _ Hx t0) as Ht0. rewrite Hp in Ht0. apply Ht0.
        * left. rewrite updf_ne in Hr' by done. done.
      + (* x_cas_fail *) kf. intros r' Hr'. left. unfold updf in Hr'. case_decide; [done|]. done.
      + (* x_late *) kf. intros r' Hr'. left. done.
      + (* x_pwbcc *) kf. intros r' Hr'. left. done.
      + (* x_sync *) kf. intros r' Hr'. left. split; [done|]. unfold objv. cbv iota. by rewrite hist_fence.
      + (* x_ret *) kf. intros r' Hr'. left. unfold updf in Hr'. case_decide; [done|]. done.
      + (* x_fin *) kf. intros r' Hr'. left. done.
      + (* x_finsync *) kf. intros r' Hr'. left. split; [done|]. unfold objv. cbv iota. by rewrite hist_fence.
      + (* x_crash inside an update: no thread is inside one afterwards *)
        exfalso. apply Hn'. done.
    - (* c_ret *)
      apply (kinv_frame (PState s cm0 pr0)); [done| |by exists []; rewrite app_nil_r|done]. cbn [cx xm lk].
      intros r' Hr'. left. unfold updf in Hr'. case_decide; [done|]. done.
    - (* c_finsync *)
      apply (kinv_frame (PState s cm0 pr0)); [done| |by exists []; rewrite app_nil_r|done]. cbn [cx xm lk].
      intros r' Hr'. left. split; [done|]. unfold objv. by rewrite hist_fence.
    - apply (kinv_frame (PState s cm0 pr0)); [done| |by exists []; rewrite app_nil_r|done]. intros r' Hr'. by left.
    - apply (kinv_frame (PState s cm0 pr0)); [done| |by eexists|done]. intros r' Hr'. by left.
    - apply (kinv_frame (PState s cm0 pr0)); [done| |by exists []; rewrite app_nil_r|done]. intros r' Hr'. by left.
    - apply (kinv_frame (PState s cm0 pr0)); [done| |by exists []; rewrite app_nil_r|done]. intros r' Hr'. by left.
    - apply (kinv_frame (PState s cm0 pr0)); [done| |by exists []; rewrite app_nil_r|done]. cbn [cx xm lk].
      intros r' Hr'. left. split; [done|]. unfold objv. by rewrite hist_fence.
    - (* c_crash, the replicas' memory unchanged (a crash that keeps every write) *)
      apply (kinv_crash (PState s cm0 pr0) keep cm0 pr0); [done|done|done|apply Hk|apply Hk|].
      intros r ws _ _ H. exact H.
  Qed.

  (** A store to the replica a thread holds exclusively. *)
  Lemma kinv_store ps t my r i v pr' :
    creachable (ab ps) → kinv ps → pcs (cx (ab ps)) t = XApply my r → i < LPR * 8 →
    (∀ t', t' ≠ t → pr' t' = pr ps t') →
    kt (p_store wline (cm ps) (wloc LPR r i) v) (cq (ab ps)) t (pr' t) (XApply my r) →
    kinv (PState (ab ps) (p_store wline (cm ps) (wloc LPR r i) v) pr').
  Proof.
    intros Hr [Hwf Hln Hheld Hthr] Hp Hi Hpr Ht. destruct (abs_inv _ Hr) as (Hx & _ & _).
    pose proof (Hthr t) as Hkt. rewrite Hp in Hkt. destruct Hkt as (Hrn & _).
    assert (E : p_store wline (cm ps) (wloc LPR r i) v = p_write (cm ps) (rline LPR r (i / 8)) [(wloc LPR r i, v)])
      by (unfold p_store; by rewrite wline_wloc).
    assert (Hd : i / 8 < LPR) by (by apply div8_lt).
    split; cbn [cm pr ab]; rewrite ?E.
    - by apply p_write_wf.
    - by rewrite nlines_write.
    - intros r' Hr'. destruct (Hheld r' Hr') as (? & ? & Hf). split_and!; [done|done|].
      apply full_write_other; [|apply sq_len|done]. apply off_other_replica; [|done].
      intros ->. exact (owned_not_held _ t r' _ Hx Hp eq_refl Hr').
    - intros t'. destruct (decide (t' = t)) as [-> | Hne]; [rewrite Hp; by rewrite <- E|].
      rewrite Hpr by done. apply kt_write_other; [|apply Hthr].
      intros r' Ho'. apply off_other_replica; [|done]. intros ->.
      by apply (owned_other _ t r' t' _ r' Hx Hp eq_refl Hne Ho').
  Qed.

  Lemma kinv_step ps ps' : creachable (ab ps) → kinv ps → pstep ps ps' → kinv ps'.
  Proof.
    intros Hr Hk Hs. pose proof Hk as [Hwf Hln Hheld Hthr]. destruct (abs_inv _ Hr) as (Hx & Ha & Hlen).
    destruct Hs as [ps t my r Hp Hi | ps t my r i v Hp Hi | ps t my r Hp Hj | ps t my r i e Hg Hp Hr0 Hl Hlt
      | ps t my r i e Hg Hp Hn | ps t my r i e Hg Hp Hn | ps t my r i e Hg Hp | ps keep keepc Hok Hokc
      | ps s' Hs Hc].
    - (* settle one word *)
      pose proof (Hthr t) as Hkt. rewrite Hp in Hkt. destruct Hkt as (Hrn & Hm & Hn & Hw).
      pose proof (sq_len (cq (ab ps)) my) as Hl.
      set (v := nth (pr ps t) (sq (cq (ab ps)) my) 0).
      assert (Hkt' : ∀ p, (∀ i, i < pr ps t → wv p r i = nth i (sq (cq (ab ps)) my) 0) → wv p r (pr ps t) = v →
                kt p (cq (ab ps)) t (updf (pr ps) t (S (pr ps t)) t) (XApply my r)).
      { intros p Hw' Hv. rewrite updf_eq. split_and!; [done|done|lia|]. intros i' Hi'.
        destruct (decide (i' = pr ps t)) as [-> | Hne]; [done|]. apply Hw'. lia. }
      unfold settle_word. case_decide as Heq.
      + split; cbn [cm pr ab]; [done|done|done|]. intros t'. destruct (decide (t' = t)) as [-> | Hne].
        * rewrite Hp. by apply Hkt'.
        * rewrite updf_ne by done. apply Hthr.
      + apply (kinv_store ps t my r); [done|done|done|lia|by intros t' Hne; rewrite updf_ne|].
        apply Hkt'.
        * intros i' Hi'. rewrite wv_store_other; [by apply Hw|done|done|lia|intros [= E]; lia|lia].
        * apply wv_store_same; [done|done|lia].
    - (* any store: the settle restarts *)
      pose proof (Hthr t) as Hkt. rewrite Hp in Hkt. destruct Hkt as (Hrn & Hm & _).
      apply (kinv_store ps t my r); [done|done|done|done|by intros t' Hne; rewrite updf_ne|].
      rewrite updf_eq. split_and!; [done|done|lia|]. intros; lia.
    - (* pwb of a used line *)
      pose proof (Hthr t) as Hkt. rewrite Hp in Hkt. destruct Hkt as (Hrn & Hm & Hn & Hh & Hb).
      split; cbn [cm pr ab].
      + by apply p_pwb_wf.
      + done.
      + intros r' Hr'. exact (Hheld r' Hr').
      + intros t'. destruct (decide (t' = t)) as [-> | Hne].
        * rewrite Hp, updf_eq. split_and!; [done|done|lia|exact Hh|]. intros j Hj'.
          destruct (decide (j = pr ps t)) as [-> | Hne'].
          -- left. unfold p_pwb. cbn [p_pwbs]. rewrite wline_line. apply elem_of_cons. left. reflexivity.
          -- apply pending_pwbw, Hb. lia.
        * rewrite updf_ne by done. apply kt_pwb, Hthr.
    - (* x_lock *)
      apply (kinv_frame ps); [done| |by exists []; rewrite app_nil_r|]; cbn [mid cx lk xm pcs cq].
      + intros r' Hr'. left. unfold updf in Hr'. case_decide; [done|]. done.
      + intros t'. destruct (decide (t' = t)) as [-> | Hne].
        * right. rewrite !updf_eq. simpl. split_and!; [done| |lia|intros; lia].
          rewrite Hlen. apply (xa_thr _ Ha t). by rewrite Hp.
        * left. by rewrite !updf_ne.
    - (* x_settle once settled *)
      pose proof (Hthr t) as Hkt. rewrite Hp in Hkt. destruct Hkt as (Hrn & Hm & _ & Hw).
      apply (kinv_frame ps); [done| |by exists []; rewrite app_nil_r|]; cbn [mid cx lk xm pcs cq].
      + intros r' Hr'. left. split; [done|]. unfold objv, p_store. rewrite hist_write_other; [done|].
        intros E. assert (r' = r) as -> by (unfold cline, OBJ in E; simpl in E; lia).
        exact (owned_not_held _ t r _ Hx Hp eq_refl Hr').
      + intros t'. destruct (decide (t' = t)) as [-> | Hne].
        * right. rewrite !updf_eq. simpl. split_and!; [done|done|lia| |intros j Hj; lia].
          intros i' Hi'. apply Hw. lia.
        * left. by rewrite !updf_ne.
    - (* x_pwbrep once written back *)
      pose proof (Hthr t) as Hkt. rewrite Hp in Hkt. destruct Hkt as (Hrn & Hm & _ & Hh & Hb).
      apply (kinv_frame ps); [done| |by exists []; rewrite app_nil_r|]; cbn [mid cx lk xm pcs cq].
      + intros r' Hr'. left. done.
      + intros t'. destruct (decide (t' = t)) as [-> | Hne].
        * right. rewrite updf_eq. simpl. split_and!; [done|done|done|]. by rewrite <- Hn.
        * left. by rewrite updf_ne.
    - (* x_fence: the replica's lines persisted *)
      pose proof (Hthr t) as Hkt. rewrite Hp in Hkt. destruct Hkt as (Hrn & Hm & Hh & Hb).
      split; cbn [cm pr ab mid cx xm lk pcs cq].
      + by apply p_fence_wf.
      + by rewrite nlines_fence.
      + intros r' Hr'. destruct (Hheld r' Hr') as (? & ? & Hf). unfold objv. rewrite hist_fence. fold (objv (xm (cx (ab ps))) r').
        split_and!; [done|done|]. apply full_fence; [done|done|done|apply sq_len|done].
      + intros t'. destruct (decide (t' = t)) as [-> | Hne].
        * rewrite updf_eq. simpl. split_and!; [done|done|]. split.
          -- intros i' Hi'. rewrite (wv_hist (cm ps)); [by apply Hh|apply hist_fence].
          -- intros j Hj. rewrite hist_fence. apply pending_fence_own; [done| |by apply Hb].
             apply rline_lt; [done|done|]. pose proof (nlu_le _ LPR (sq_len (cq (ab ps)) my)). lia.
        * rewrite updf_ne by done. apply kt_fence; [done|done|apply Hthr].
    - (* a crash of both memories *)
      apply (kinv_crash ps keep); [done|done|done|by apply crash_wf|by rewrite crash_nlines|].
      intros r' ws Hr' Hl Hf. by apply full_crash.
    - by apply kinv_calm.
  Qed.

  Lemma preach_kinv cm0 ps : init_ok cm0 → preach cm0 ps → kinv ps.
  Proof.
    intros (Hwf & Hln & Hf). induction 1 as [|ps ps' Hr IH Hs].
    - split; cbn [cm pr ab cinit cx xinit lk pcs xm cq]; [done|done| |done].
      intros r Hr. case_decide as E; [subst r|done].
      destruct NR as [|NR']; [lia|]. unfold objv, hist, line_hist. simpl. split_and!; [lia|done|exact Hf].
    - apply (kinv_step ps); [by eapply preach_creach|done|done].
  Qed.

  (** ** The theorems *)

  (** The histories of CX-PUC on Px86 — update transactions and read-only
      ones, any number of threads, crashes and null recovery — are durably
      linearizable ([Core/DurableLin.v]) for the object's sequential
      specification, and well formed. *)
  Theorem cxpuc_px_durably_linearizable cm0 ps :
    preach cm0 ps → durably_linearizable (spec init uexec rexec) (erase (xh (ab ps))).
  Proof. intros Hr. apply (cx_px_durably_linearizable init uexec rexec N NR HNR). by eapply preach_creach. Qed.

  Theorem cxpuc_px_wf cm0 ps : preach cm0 ps → wf (erase (xh (ab ps))).
  Proof. intros Hr. apply (cx_px_wf init uexec rexec N NR HNR). by eapply preach_creach. Qed.

  (** In every crash image Px86 allows of [curComb] and of the replicas'
      memory, the replica [curComb]'s image names holds, word by word in
      its whole used part, the serialized state of the ticket it names
      (null recovery, [CxPuc::open], finds a consistent object). *)
  Theorem cxpuc_px_durable_image cm0 ps keep keepc :
    init_ok cm0 → preach cm0 ps → p_crash_ok (xm (cx (ab ps))) keep → p_crash_ok (cm ps) keepc →
    p_image cline (xm (cx (ab ps))) keep IDX < NR ∧
    ∀ i, i < length (sq (cq (ab ps)) (p_image cline (xm (cx (ab ps))) keep TK)) →
      p_image wline (cm ps) keepc (wloc LPR (p_image cline (xm (cx (ab ps))) keep IDX) i) =
      nth i (sq (cq (ab ps)) (p_image cline (xm (cx (ab ps))) keep TK)) 0.
  Proof.
    intros H0 Hr Hok Hokc. pose proof (preach_kinv cm0 ps H0 Hr) as [Hwf Hln Hheld Hthr].
    destruct (abs_inv _ (preach_creach cm0 ps Hr)) as (Hx & _ & _).
    assert (Hl0 : 0 < nlines (xm (cx (ab ps)))) by (pose proof (xi_lines _ _ Hx); lia).
    destruct (Hok 0 Hl0) as [Hk1 Hk2].
    destruct (xi_des _ _ Hx (keep 0) Hk1 Hk2) as (Hrn & Hh & _ & Hobj).
    change (p_image cline (xm (cx (ab ps))) keep IDX) with (ccn (xm (cx (ab ps))) (keep 0)).2.
    change (p_image cline (xm (cx (ab ps))) keep TK) with (ccn (xm (cx (ab ps))) (keep 0)).1.
    set (c := ccn (xm (cx (ab ps))) (keep 0)) in *.
    split; [done|]. destruct (Hheld c.2 Hh) as (_ & _ & [Hv Hd]). rewrite Hobj in Hv, Hd.
    intros i Hi. pose proof (sq_len (cq (ab ps)) c.1) as Hl. destruct (used_line _ i Hl Hi) as [H1 H2].
    rewrite <- (Hv i Hi). unfold p_image, persisted, wv, p_load, mem_visible. rewrite wline_wloc.
    assert (HL : rline LPR c.2 (i / 8) < nlines (cm ps)) by (by apply rline_lt).
    destruct (Hokc _ HL) as [Hk3 Hk4]. pose proof (Hd (i / 8) H2) as Hd'. unfold hist, mk in Hd'.
    rewrite take_ge by lia. done.
  Qed.

  (** The replica the visible [curComb] names holds the serialized state
      of its ticket, every used line persisted in full: what a reader
      loads ([CxPuc::run_read]), and what a crash keeps. *)
  Theorem cxpuc_px_designated_full cm0 ps :
    init_ok cm0 → preach cm0 ps →
    cidx (cx (ab ps)) < NR ∧ full (cm ps) (cidx (cx (ab ps))) (sq (cq (ab ps)) (chead (cx (ab ps)))).
  Proof.
    intros H0 Hr. pose proof (preach_kinv cm0 ps H0 Hr) as [Hwf Hln Hheld Hthr].
    destruct (abs_inv _ (preach_creach cm0 ps Hr)) as (Hx & _ & _).
    assert (Hm : mk (xm (cx (ab ps))) 0 ≤ len0 (xm (cx (ab ps)))) by (apply wf_mk_le, (xi_wf _ _ Hx)).
    destruct (xi_des _ _ Hx _ Hm (le_n _)) as (Hrn & Hh & _ & Hobj).
    change (cidx (cx (ab ps))) with (ccn (xm (cx (ab ps))) (len0 (xm (cx (ab ps))))).2.
    change (chead (cx (ab ps))) with (ccn (xm (cx (ab ps))) (len0 (xm (cx (ab ps))))).1.
    split; [done|]. destruct (Hheld _ Hh) as (_ & _ & Hf). by rewrite Hobj in Hf.
  Qed.

  (** After a crash, the replica null recovery designates holds, persisted
      in full, the serialized state the history's linearization points run
      the object to: the durable linearization and the recovered object
      agree. *)
  Theorem cxpuc_px_recovers_linearized cm0 ps keep keepc :
    init_ok cm0 → preach cm0 ps → p_crash_ok (xm (cx (ab ps))) keep → p_crash_ok (cm ps) keepc →
    ∃ σ, runs_to uexec rexec init (effects (points (xh (crash_of (ab ps) keep)))) σ ∧
      full (crash_mem (cm ps) keepc) (cidx (cx (crash_of (ab ps) keep))) (ser σ).
  Proof.
    intros H0 Hr Hok Hokc.
    assert (Hr' : preach cm0 (PState (crash_of (ab ps) keep) (crash_mem (cm ps) keepc) (pr ps)))
      by (eapply pr_step; [exact Hr|by apply u_crash]).
    destruct (cxpuc_px_designated_full cm0 _ H0 Hr') as [_ Hf]. cbn [ab cm] in Hf.
    destruct (creach_inv init uexec rexec N NR HNR _ (preach_creach cm0 _ Hr')) as [_ Hi].
    pose proof (j_run init uexec rexec N _ Hi) as Hrun. cbn [ab] in Hrun.
    exists (stq init uexec (cq (crash_of (ab ps) keep)) (pl (crash_of (ab ps) keep))). split; [exact Hrun|].
    destruct (abs_inv _ (preach_creach cm0 ps Hr)) as (Hx & _ & _).
    assert (Hl0 : 0 < nlines (xm (cx (ab ps)))) by (pose proof (xi_lines _ _ Hx); lia).
    destruct (Hok 0 Hl0) as [_ Hk2].
    assert (E : chead (cx (crash_of (ab ps) keep)) = pl (crash_of (ab ps) keep)).
    { unfold chead, ccv. cbn [crash_of cx recover xm pl].
      rewrite len0_crash by done. fold (ccn (crash_mem (xm (cx (ab ps))) keep) (keep 0)).
      by rewrite ccn_crash. }
    rewrite <- E. exact Hf.
  Qed.
End puc.

(** ** Not vacuous: an update settles, writes back, installs, returns; a crash keeps it *)

(** The counter of [CXPTMPxLin.v] ([ex_uexec], [ex_rexec]), serialized as
    one word. *)
Definition ex_ser (σ : nat) : list nat := [σ].

Ltac pcur R := match type of R with preach _ _ _ _ _ _ _ _ ?x => x end.
Ltac calm_tac := intros ?t'; cbn [cx pcs ab]; unfold updf; repeat case_decide;
  first [left; reflexivity | right; reflexivity].
(** A step of the run below: [f] builds it from the current state; the
    state reached is normalised ([norm_hyp], [PxPersist.v]). *)
Ltac pgo R f R' :=
  let s := pcur R in let st := f s in pose proof (pr_step _ _ _ _ _ _ _ _ _ _ R st) as R'; norm_hyp R'.
(** A step of thread 0's update ([c_mid]): [xs] builds the [CXPTMPx.v]
    step from the current state. *)
Ltac pmid R xs R' :=
  pgo R ltac:(fun s => let st := xs (cx (ab s)) in
    open_constr:(u_calm _ _ _ 1 2 1 ex_ser s _ (c_mid_upd _ _ _ 1 2 (ab s) 0 _ _ 0 (QU tt) eq_refl st ltac:(nidle) eq_refl ltac:(nidle))
      ltac:(calm_tac))) R'.

(** Thread 0 increments the counter: its node (ticket 1) is applied to
    replica 1, whose word is settled (stored: it differs), its line written
    back and fenced; the CAS, [pwb(curComb)] and [psync] follow and the
    update returns 0; then a crash keeping exactly the marks (nothing
    evicted) recovers replica 1, whose word is 1: every [cxpuc_px_*]
    theorem speaks of this run, from a first memory [init_ok] accepts. *)
Theorem cxpuc_px_not_vacuous :
  init_ok 0 2 1 ex_ser (pmem_empty 2) ∧
  ∃ ps, preach 0 ex_uexec ex_rexec 1 2 1 ex_ser (pmem_empty 2) ps ∧
    erase (xh (ab ps)) = [Invoke 0 0 (Upd tt); Return 0 0; Crash] ∧
    cidx (cx (ab ps)) = 1 ∧ wv 1 (cm ps) 1 0 = 1.
Proof.
  split.
  { split_and!; [apply pmem_empty_wf|done|]. split.
    - intros i Hi. simpl in Hi. assert (i = 0) as -> by lia. reflexivity.
    - intros j Hj. vm_compute in Hj. assert (j = 0) as -> by lia. vm_compute. lia. }
  pose proof (pr_init 0 ex_uexec ex_rexec 1 2 1 ex_ser (pmem_empty 2)) as R.
  pgo R ltac:(fun s => open_constr:(u_calm _ _ _ 1 2 1 ex_ser s _ (c_invoke _ _ _ 1 2 (ab s) 0 tt ltac:(lia) eq_refl)
    ltac:(calm_tac))) R1.
  pgo R1 ltac:(fun s => open_constr:(u_calm _ _ _ 1 2 1 ex_ser s _ (c_enqueue _ _ _ 1 2 (ab s) 0 0 tt eq_refl eq_refl)
    ltac:(calm_tac))) R2.
  pgo R2 ltac:(fun s => open_constr:(u_lock _ _ _ 1 2 1 ex_ser s 0 1 1 0 (QU tt) eq_refl eq_refl ltac:(lia) eq_refl
    ltac:(vm_compute; lia))) R3.
  pgo R3 ltac:(fun s => open_constr:(u_settle _ _ _ 1 2 1 ex_ser s 0 1 1 eq_refl ltac:(vm_compute; lia))) R4.
  pgo R4 ltac:(fun s => open_constr:(u_settled _ _ _ 1 2 1 ex_ser s 0 1 1 0 (QU tt) eq_refl eq_refl eq_refl)) R5.
  pgo R5 ltac:(fun s => open_constr:(u_wb _ _ _ 1 2 1 ex_ser s 0 1 1 eq_refl ltac:(vm_compute; lia))) R6.
  pgo R6 ltac:(fun s => open_constr:(u_written _ _ _ 1 2 1 ex_ser s 0 1 1 0 (QU tt) eq_refl eq_refl eq_refl)) R7.
  pgo R7 ltac:(fun s => open_constr:(u_fenced _ _ _ 1 2 1 ex_ser s 0 1 1 0 (QU tt) eq_refl eq_refl)) R8.
  pmid R8 ltac:(fun x => open_constr:(x_cas 2 false false x 0 1 1 eq_refl ltac:(vm_compute; lia))) R9.
  pmid R9 ltac:(fun x => open_constr:(x_pwbcc 2 false false x 0 1 0 eq_refl)) R10.
  pmid R10 ltac:(fun x => open_constr:(x_sync 2 false false x 0 1 0 eq_refl)) R11.
  pgo R11 ltac:(fun s => open_constr:(u_calm _ _ _ 1 2 1 ex_ser s _ (c_ret _ _ _ 1 2 (ab s) 0 1 0 0 (QU tt) eq_refl eq_refl)
    ltac:(calm_tac))) R12.
  pgo R12 ltac:(fun s => open_constr:(u_crash _ _ _ 1 2 1 ex_ser s (λ L, match L with 0 => 2 | 1 => 0 | _ => 1 end)
    (λ L, mk (cm s) L)
    ltac:(intros L HL; vm_compute in HL; destruct L as [|[|[|L]]]; vm_compute; lia)
    ltac:(apply p_crash_ok_marks; vm_compute; split_and!; [reflexivity| |repeat constructor];
          intros [|[|L]]; vm_compute; lia))) R13.
  eexists. split; [exact R13|]. split_and!; reflexivity.
Qed.

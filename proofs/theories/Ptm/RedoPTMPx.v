(** * Redo-PTM on Px86's line-granular persistence, with null recovery

    A model of Redo-PTM (seed 000, §5, Algorithms 1–3) whose persistent
    memory is [Core/PxPersist.v]: [curComb] (one line: its seq and replica
    written by one CAS) and every word of every replica are locations of
    cache lines; a store is appended to its line; a write persists for sure
    only through a [pwb] its thread later fences; a crash keeps, of each
    line independently, any prefix at least as long as its mark ([Crash],
    [p_crash_ok]).  Null recovery is the seed's and the code's
    ([impl/perdure-ptm/src/redo/open.rs] [RedoPtm::open], [core.rs]
    [build]): [curComb] is what persisted, its replica's head a fresh
    State at that seq, every other replica invalid and left as the crash
    left it, nothing written, nothing replayed.  It supersedes the
    immediate-persistence model [RedoPTM.v] for everything about
    persistence; [specs/ptm/RedoPTM.tla] is the TLA+ counterpart.

    For any sequential object held in [W] words ([uexec], [rexec]), any
    number of threads [N], of replicas [NR > 0] and of ring slots [RS], any
    placement of the words in cache lines that keeps them off [curComb]'s
    line, and any number of crashes.

    The steps ([step]), each atomic, with the seed's lines (Algorithm 3
    unless stated) and the code's functions (files of
    [impl/perdure-ptm/src/redo/]):
    - [Announce] L2–L6, [update.rs] [publish], [apply_update]: [req[t]] takes
      the transaction (its number: see below);
    - [BeginRead] Algorithm 2 L1, [read.rs] [apply_read];
    - [Snapshot] L8–L17, [update.rs] [attempt_update] {2}–{4}: read
      [curComb] and the head of its replica, copy its State ([cpySt]; the
      re-check of L13 makes the reads one snapshot), help the ring (L14–L17:
      a CAS without [pwb], as the code's);
    - [Applied] [update.rs] [attempt_update] (the State read has the request
      applied: collect its result, [core.rs] [ensure_durable]);
    - [Prepare] L18–L19, [update.rs] [lock_any], [bring_up_to_date],
      [replay], [copy_designated]: lock a free replica (or keep [_c]) and
      bring it to the snapshot by its redo logs or by copying [curComb]'s
      replica, its words joining the replica's dirty words;
      [PrepFail]: [bring_up_to_date] gives up after writing part of a replay
      or copy (the head is invalid); [Abandon] L13/L16 [continue];
      [GiveUp] L18 (none free), L40–L42: release [_c];
    - [ScanRun]/[ScanSkip] L20–L24, one index per step, [update.rs]
      [simulate], [execute]: run an open request on the replica, log its
      stores (redo) and their old values (undo), record its result;
      [Rollback]: [simulate] found [curComb] moved: L38–L39 ([tx.rs]
      [undo_to]);
    - [CasSucc]/[CasFail] L26–L30, L38–L39, [variant.rs] [flush_dirty],
      [fence_before_cas], the CAS in [attempt_update], [tx.rs] [undo_to]:
      [pwb] of the replica's dirty words (and, as written, L27's
      [pwb(curComb)]), the fence, the CAS; on failure the undo;
    - [PersistFix] the code after the CAS: [pwb(cur_comb)], [psync],
      [note_durable]; as written [PersistRing] L32–L35 ([pwb(curComb)], the
      ring CAS as fence) or [PersistSkip] L33 (the ring holds the seq);
    - [Release] L31 after the persistence (finding F2's fix), L36–L37, and
      the code's ring CAS;
    - [Collect]/[CollectRetry] L43–L50, Algorithm 2 L19–L27, [update.rs]
      [collect] (the code returns only a result whose State shows the
      request applied, and else tries again);
    - [DurableSkip]/[DurableSync] [core.rs] [ensure_durable]; L44–L45,
      Algorithm 2 L15–L16, L20–L21: return, once the seq read is durable;
    - [DirectRead] Algorithm 2 L6–L11, [read.rs] [try_read_direct];
      [PublishRead] Algorithm 2 L3–L5;
    - [Crash]: a crash, then null recovery ([crash_state]).

    The switches ([F1], [F4]; [specs/ptm/README.md], "Findings"):
    - [F1 = true] is the code's fix of finding F1: the committer always
      persists [curComb] after its CAS ([PersistFix]), and a transaction
      that returns a result of seq [c] makes [c] durable unless the
      watermark shows it ([ensure_durable]).  [F1 = false] is Algorithm 3
      as written: L32–L33 take "the ring holds the seq" as "persisted", but
      L17 lets any thread put it there without persisting [curComb] (in
      this mode every [ensure_durable] persists, as L44–L45 do).
    - [F4 = true] is the code's fix of finding F4: after a failed CAS the
      undo's stores join the replica's dirty words ([tx.rs] [undo_to]),
      which travel with the replica ([state.rs] [take_dirty], [put_dirty])
      and are written back before the replica's next install.  [F4 = false]
      is the seed: the undo's stores are never written back.

    Proved here, for the fixed protocol ([F1 = F4 = true]), from the
    invariant [inv1] ([inv1_init], [inv1_step]):
    - [redo_px_cur_comb_consistent] ([CurCombConsistent]);
    - [redo_px_durable_image_consistent] ([DurableImageConsistent]): in every
      crash image Px86 allows, [curComb] is a transition from its line's
      mark on, and the replica it designates holds that transition's object
      ([redo_px_obj_at_runs]: the committed operations run in order);
    - [redo_px_completed_durable] ([CompletedDurable]): a transaction that
      returned with the state of seq [k] (the transition it committed, or
      whose State or replica it read) is in every crash image.
    [RedoPTMPxLin.v] proves the histories durably linearizable (update and
    read-only transactions, [Core/DurableLin.v]), [ExactlyOnce] and
    [CompletedDurable] in TLC's form; [RedoPTMPxBugs.v] refutes the
    as-written protocol (F1, F4) by explicit executions.

    What the model abstracts, and where it is checked instead:
    - Visibility is sequentially consistent, as the simulator [Sim] runs
      the code; a [pwb] and the fence of its thread are one step when no
      step of the thread comes between them (L26–L30: [flush_dirty], the
      head store, the downgrade, the fence and the CAS are one step; the
      head and lock changes in between are private to the holder); a store
      of a step is appended when the step runs.  The simulation, a replay,
      a copy and an undo write their words in the step that runs them
      (the replica is the holder's alone; a crash image of a half-written
      replica is an image of the written one, its unfenced lines kept short).
    - Cache lines: any placement with the replicas off [curComb]'s line.
      A copy and a [pwb] of a replica cover its [W] words (the code covers
      the used prefix, [replica.rs] [used_len]).
    - The States and the ring: the redo logs of every transition are kept
      (the ghost [ch]); a replica whose logs are gone is copied or given up
      ([Prepare], [PrepFail] allow either at any time), so the ring serves
      only as the seed's durability witness (L17, L33).
    - A request's number (the code's [Request::seq], Herlihy's announce
      bit of the seed) is [S] of its transaction's id: per thread both
      grow with each request, and only their order against [applied[]] is
      used ([F3] is thus fixed; the toggle is [RedoPTM.v]'s).
    - A published read's way out — the result a combiner computes, or a
      later direct read — is chosen when it publishes ([PublishRead]'s
      [way], a prophecy for the linearization points): every run of the
      code has a run of the model that chose right.
    - The strong try RW lock is abstract ([lockst]); its specification is
      [StrongTryRWLock.v].  A direct read takes the shared lock, checks
      [curComb] and runs in one step (the lock keeps the replica still).
    - Progress: the two attempts of L7, the two copies and the bounds are
      not modelled (a thread may continue or give up at any point the code
      may); TLC checks [WaitFree] and the step bounds.
    - RedoTimed-PTM's and RedoOpt-PTM's variants, panicking closures, the
      log's overflow. *)
From stdpp Require Import base list list_numbers decidable sets.
From Coq Require Import Lia.
From perdure.Core Require Import History DurableLin Px86 PxPersist.

Section redo_px.
  (** ** The object, the machine, the switches *)

  (** The object: [W] persistent words (a replica's region); an update
      transaction ([UOp]) gives, from the words, the stores it makes and its
      result; a read-only one ([ROp]) its result.  Any sequential object a
      Redo-PTM region can hold is of this form. *)
  Context {UOp ROp Val : Type} `{!Inhabited Val}.
  Context (W : nat) (uexec : UOp → list nat → list (nat * nat) * Val)
          (rexec : ROp → list nat → Val).
  (** Threads [0 .. N-1], replicas [0 .. NR-1] (the seed has [NR = N + 1];
      any positive number here), ring slots [RS] (RSIZE). *)
  Context (N NR RS : nat) (NR_pos : 0 < NR).
  (** Persistent memory: [curComb] is locations 0 (its seq) and 1 (its
      replica), one line, written together by the CAS (one write of the
      line, as the packed 64-bit word of the code); word [w] of replica [r]
      is location [rloc r w].  The placement of locations in cache lines is
      any map into [NL] lines that keeps the replicas off [curComb]'s line;
      replicas may share lines with each other. *)
  Context (line : nat → nat) (NL : nat).
  Context (line_lt : ∀ x, line x < NL) (line_cc : line 1 = line 0).
  Definition rloc (r w : nat) : nat := 2 + r * W + w.
  Context (line_rep : ∀ r w, r < NR → w < W → line (rloc r w) ≠ line 0).
  (** The switches: [F1] fixed (the code: the committer always persists
      [curComb] after its CAS, the ring is no durability witness, a
      watermark is) or as written (L32–L33 and L17 of Algorithm 3); [F4]
      fixed (the undo's stores join the replica's dirty lines) or as
      written (they are never flushed). *)
  Context (F1 F4 : bool).

  Definition LC : nat := line 0.

  (** ** Operations, their sequential specification *)

  Inductive op := Upd (u : UOp) | Rd (q : ROp).

  (** Stores applied to the words (a store past the region changes nothing). *)
  Definition apply_ws (ws : list (nat * nat)) (σ : list nat) : list nat :=
    foldl (λ σ st, <[st.1 := st.2]> σ) σ ws.

  (** What a transaction does on the words: its stores and its result. *)
  Definition run_op (o : op) (σ : list nat) : list (nat * nat) * Val :=
    match o with Upd u => uexec u σ | Rd q => ([], rexec q σ) end.

  Definition init_obj : list nat := replicate W 0.

  Definition spec : seq_spec (list nat) op Val :=
    SeqSpec init_obj (λ σ o v σ', (run_op o σ).2 = v ∧ σ' = apply_ws (run_op o σ).1 σ).

  (** ** Transitions of [curComb] (ghost) *)

  (** An operation a combiner ran: its id, its thread, the operation, its
      result, and whether it is linearized there ([e_pt]: false for a
      published read-only transaction that returns by a direct read). *)
  Record entry := Entry { e_id : opid; e_th : nat; e_op : op; e_val : Val; e_pt : bool }.

  (** A transition of [curComb]: the object after it, its State
      ([applied[]], [results[]]), the operations it ran, its redo log (the
      stores, in order) and the replica it installed. *)
  Record link := Link {
    l_obj : list nat; l_app : nat → nat; l_res : nat → Val;
    l_batch : list entry; l_ws : list (nat * nat); l_rep : nat;
  }.

  (** [batch_ok σ bat ws σ']: running [bat] from [σ] stores [ws] and gives
      [σ'], each operation with its result. *)
  Inductive batch_ok : list nat → list entry → list (nat * nat) → list nat → Prop :=
    | batch_ok_nil σ : batch_ok σ [] [] σ
    | batch_ok_cons σ e bat ws σ' :
        (run_op (e_op e) σ).2 = e_val e →
        batch_ok (apply_ws (run_op (e_op e) σ).1 σ) bat ws σ' →
        batch_ok σ (e :: bat) ((run_op (e_op e) σ).1 ++ ws) σ'.

  Definition link0 : link := Link init_obj (λ _, 0) (λ _, inhabitant) [] [] 0.

  Definition obj_at (ch : list link) (k : nat) : list nat := from_option l_obj init_obj (ch !! k).
  Definition app_at (ch : list link) (k : nat) : nat → nat := from_option l_app (λ _, 0) (ch !! k).
  Definition res_at (ch : list link) (k : nat) : nat → Val :=
    from_option l_res (λ _, inhabitant) (ch !! k).
  Definition rep_at (ch : list link) (k : nat) : nat := from_option l_rep 0 (ch !! k).
  Definition batch_at (ch : list link) (k : nat) : list entry := from_option l_batch [] (ch !! k).

  (** The redo logs of transitions [h+1 .. s] ([applyRedologs]). *)
  Definition redo_ws (ch : list link) (h s : nat) : list (nat * nat) :=
    mjoin (map l_ws (drop (S h) (take (S s) ch))).

  (** The undo log of stores [ws] made on [σ]: each word with the value it
      had before the store (L38 applies it last entry first). *)
  Fixpoint undo_log (σ : list nat) (ws : list (nat * nat)) : list (nat * nat) :=
    match ws with
    | [] => []
    | st :: ws' => (st.1, default 0 (σ !! st.1)) :: undo_log (<[st.1 := st.2]> σ) ws'
    end.

  (** ** Persistent memory *)

  Definition cc_write (k r : nat) : list (nat * nat) := [(0, k); (1, r)].

  (** The visible [curComb]: (seq, replica). *)
  Definition ccv (p : pmem) : nat * nat := (p_load line p 0, p_load line p 1).

  (** A store of a transaction to replica [r] (the code's bounds check
      rejects a word past the region). *)
  Definition rstore (p : pmem) (r : nat) (st : nat * nat) : pmem :=
    if decide (st.1 < W) then p_store line p (rloc r st.1) st.2 else p.
  Definition rstores (p : pmem) (r : nat) (ws : list (nat * nat)) : pmem :=
    foldl (λ p st, rstore p r st) p ws.

  (** The visible words of replica [r]. *)
  Definition content (p : pmem) (r : nat) : list nat := map (λ w, p_load line p (rloc r w)) (seq 0 W).

  (** Thread [t]'s [pwb]s of the locations [xs], then its fence ([psync],
      or the locked RMW that follows them). *)
  Definition p_flush (p : pmem) (t : nat) (xs : list nat) : pmem :=
    p_fence (foldl (λ p x, p_pwb line p t x) p xs) t.

  (** [pwb(curComb); psync()]. *)
  Definition p_sync (p : pmem) (t : nat) : pmem := p_flush p t [0].

  (** The memory after a crash that kept [keep L] writes of each line: what
      persisted, persisted for sure. *)
  Definition p_after (p : pmem) (keep : nat → nat) : pmem :=
    PMem (Mem (imap (λ L ws, take (keep L) ws) (m_lines (p_mem p)))
              (imap (λ L _, keep L) (m_marks (p_mem p)))) [].

  (** ** States *)

  Inductive lockst := Free | Owned (t : nat) | Held.
  Global Instance lockst_eq_dec : EqDecision lockst.
  Proof. solve_decision. Defined.

  (** A published request ([req[t]]): the operation, and (ghost) its id and
      whether it is linearized where it is run.  Its number (the code's
      [Request::seq], compared with [applied[]]) is [S] of its id: per
      thread both grow with each request, and only their order against
      [applied[]] is used. *)
  Record request := Req { rq_op : op; rq_id : opid; rq_pt : bool }.

  (** Where a thread is.  [i] the id of its transaction, [own] the replica
      it holds ([_c], [Held]), [s0]/[c0] the [curComb] of its snapshot,
      [ap]/[rs] its State ([_newSt]: [applied[]], [results[]]), [j] the next
      index of the simulation, [bat] the requests it ran, [ws] their stores,
      [lg] the undo log, [s1] the seq it installed, [c0] (there) the replica
      it superseded, [c] the seq whose State or replica its result [v] comes
      from, [dir] whether [v] came from a direct read. *)
  Inductive tstate :=
    | TIdle
    | TAnn (i : opid) (u : UOp) (own : option nat)
    | THave (i : opid) (u : UOp) (own : option nat) (s0 c0 : nat) (ap : nat → nat) (rs : nat → Val)
    | TSim (i : opid) (u : UOp) (r s0 c0 : nat) (ap : nat → nat) (rs : nat → Val) (j : nat)
        (bat : list entry) (ws lg : list (nat * nat))
    | TPersist (i : opid) (s1 c0 : nat) (v : Val)
    | TRelease (i : opid) (s1 c0 : nat) (v : Val)
    | TCollect (i : opid) (o : op)
    | TRead (i : opid) (q : ROp) (pub : bool)
    | TDur (i : opid) (o : op) (c : nat) (v : Val) (dir : bool).

  Definition owns (p : tstate) : option nat :=
    match p with
    | TAnn _ _ own | THave _ _ own _ _ _ _ => own
    | TSim _ _ r _ _ _ _ _ _ _ _ => Some r
    | _ => None
    end.

  Record rstate := RState {
    mem : pmem;                    (* curComb and the replicas *)
    req : nat → option request;    (* req[] (and announce[]) *)
    ch : list link;                (* ghost: the transitions of curComb, the States, the redo logs *)
    rhead : nat → option nat;      (* Combined.head's seq; None: invalid *)
    rlock : nat → lockst;          (* rwLock *)
    dirty : nat → list nat;        (* each replica's words stored since their pwb (DirtyLines) *)
    ring : nat → nat;              (* the ring: the seq each slot holds *)
    wm : nat;                      (* the durability watermark (core.rs durable) *)
    pc : nat → tstate;
    xh : list (xevent op Val);     (* ghost: the history with linearization points *)
    nid : nat;                     (* ghost: the next transaction id *)
    pl : nat;                      (* ghost: the points are placed up to this seq *)
    ep : nat;                      (* ghost: the seq recovered by the last crash *)
    done : list (opid * nat);      (* ghost: returned transactions, with the seq they returned at *)
  }.

  Definition cseq (s : rstate) : nat := pred (length (ch s)).
  Definition mark_cc (s : rstate) : nat := mark (p_mem (mem s)) LC.

  Definition upd {A} (f : nat → A) (t : nat) (a : A) : nat → A :=
    λ t', if decide (t' = t) then a else f t'.
  Global Arguments upd : simpl never.

  Lemma upd_eq {A} (f : nat → A) t a : upd f t a t = a.
  Proof. unfold upd. by rewrite decide_True. Qed.
  Lemma upd_ne {A} (f : nat → A) t t' a : t' ≠ t → upd f t a t' = f t'.
  Proof. intros. unfold upd. by rewrite decide_False. Qed.

  (** Field updates. *)
  Definition set_pc (s : rstate) (t : nat) (p : tstate) : rstate :=
    RState (mem s) (req s) (ch s) (rhead s) (rlock s) (dirty s) (ring s) (wm s) (upd (pc s) t p)
      (xh s) (nid s) (pl s) (ep s) (done s).
  Definition set_mem (s : rstate) (m : pmem) : rstate :=
    RState m (req s) (ch s) (rhead s) (rlock s) (dirty s) (ring s) (wm s) (pc s)
      (xh s) (nid s) (pl s) (ep s) (done s).
  (** A step of thread [t] on the replica [r] it holds: memory, head, dirty
      words. *)
  Definition set_rep (s : rstate) (t r : nat) (m : pmem) (hd : option nat) (d : list nat) : rstate :=
    RState m (req s) (ch s) (upd (rhead s) r hd) (upd (rlock s) r (Owned t)) (upd (dirty s) r d)
      (ring s) (wm s) (pc s) (xh s) (nid s) (pl s) (ep s) (done s).
  Definition set_lock (s : rstate) (r : nat) (l : lockst) : rstate :=
    RState (mem s) (req s) (ch s) (rhead s) (upd (rlock s) r l) (dirty s) (ring s) (wm s) (pc s)
      (xh s) (nid s) (pl s) (ep s) (done s).
  Definition release (s : rstate) (own : option nat) : rstate :=
    match own with Some r => set_lock s r Free | None => s end.

  (** ** Linearization points (ghost) *)

  (** The points of transition [k]'s operations. *)
  Definition bpts (ch : list link) (k : nat) : list (xevent op Val) :=
    map (λ e, XL (e_id e) (e_op e) (e_val e)) (filter (λ e, e_pt e = true) (batch_at ch k)).
  (** The point of a direct read that read the replica of seq [k]. *)
  Definition rpt (k : nat) (p : tstate) : list (xevent op Val) :=
    match p with TDur i o c v true => if decide (c = k) then [XL i o v] else [] | _ => [] end.
  Definition rpts (pcs : nat → tstate) (k : nat) : list (xevent op Val) :=
    mjoin (map (λ t, rpt k (pcs t)) (seq 0 N)).
  (** The points of seqs [pl+1 .. b], in order: each transition's
      operations, then the direct reads of its replica. *)
  Definition adv (s : rstate) (b : nat) : list (xevent op Val) :=
    mjoin (map (λ k, bpts (ch s) k ++ rpts (pc s) k) (seq (S (pl s)) (b - pl s))).

  (** Transaction [i] of thread [t] returns [v], having read or committed
      the state of seq [c]: the points up to [c] are placed first. *)
  Definition ret (s : rstate) (t i : opid) (c : nat) (v : Val) : rstate :=
    RState (mem s) (req s) (ch s) (rhead s) (rlock s) (dirty s) (ring s) (wm s) (upd (pc s) t TIdle)
      (xh s ++ adv s (pl s `max` c) ++ [XE (Return i v)]) (nid s) (pl s `max` c) (ep s)
      (done s ++ [(i, c)]).

  (** ** Null recovery *)

  (** The recovered State: nothing applied. *)
  Definition fresh_link (l : link) : link :=
    Link (l_obj l) (λ _, 0) (l_res l) (l_batch l) (l_ws l) (l_rep l).

  (** A crash keeps [keep L] writes of each line; null recovery (open.rs,
      core.rs [build]): [curComb] is what persisted, its replica's head a
      fresh State at its seq, read-locked; every other replica invalid
      (its words as the crash left them), free; the ring holds the
      recovered seq, the watermark is it; the announce and request arrays,
      the States and the threads start afresh; nothing is written. *)
  Definition crash_state (s : rstate) (keep : nat → nat) : rstate :=
    let k := p_image line (mem s) keep 0 in
    let r := p_image line (mem s) keep 1 in
    RState (p_after (mem s) keep) (λ _, None)
      (take k (ch s) ++ from_option (λ l, [fresh_link l]) [] (ch s !! k))
      (λ r', if decide (r' = r) then Some k else None)
      (λ r', if decide (r' = r) then Held else Free)
      (λ _, []) (λ sl, if decide (sl = k `mod` RS) then k else 0) k (λ _, TIdle)
      (xh s ++ adv s k ++ [XE Crash]) (nid s) k k (done s).

  (** ** Steps *)

  (** [flushDeferredPWBs] (and, as written, L27's [pwb(curComb)]), then the
      fence before the CAS. *)
  Definition cas_flush (s : rstate) (t r : nat) : pmem :=
    p_flush (mem s) t (map (rloc r) (dirty s r) ++ if F1 then [] else [0]).

  (** L32–L35 in the code: the ring slot takes the ticket if it holds an
      older one. *)
  Definition ring_put (rg : nat → nat) (s1 : nat) : nat → nat :=
    if decide (rg (s1 `mod` RS) < s1) then upd rg (s1 `mod` RS) s1 else rg.

  Inductive step : rstate → rstate → Prop :=
    (* Algorithm 3 L2–L6 (update.rs publish, apply_update) *)
    | Announce s t u :
        t < N → pc s t = TIdle →
        step s (RState (mem s) (upd (req s) t (Some (Req (Upd u) (nid s) true))) (ch s) (rhead s)
                  (rlock s) (dirty s) (ring s) (wm s) (upd (pc s) t (TAnn (nid s) u None))
                  (xh s ++ [XE (Invoke (nid s) t (Upd u))]) (S (nid s)) (pl s) (ep s) (done s))
    (* Algorithm 2 L1 (read.rs apply_read) *)
    | BeginRead s t q :
        t < N → pc s t = TIdle →
        step s (RState (mem s) (req s) (ch s) (rhead s) (rlock s) (dirty s) (ring s) (wm s)
                  (upd (pc s) t (TRead (nid s) q false))
                  (xh s ++ [XE (Invoke (nid s) t (Rd q))]) (S (nid s)) (pl s) (ep s) (done s))
    (* Algorithm 3 L8–L17 (update.rs attempt_update {2}–{4}) *)
    | Snapshot s t i u own s0 c0 :
        pc s t = TAnn i u own → ccv (mem s) = (s0, c0) → rhead s c0 = Some s0 →
        step s (RState (mem s) (req s) (ch s) (rhead s) (rlock s) (dirty s) (ring_put (ring s) s0)
                  (wm s) (upd (pc s) t (THave i u own s0 c0 (app_at (ch s) s0) (res_at (ch s) s0)))
                  (xh s) (nid s) (pl s) (ep s) (done s))
    (* update.rs attempt_update: the request is applied in the State read *)
    | Applied s t i u own s0 c0 ap rs :
        pc s t = THave i u own s0 c0 ap rs → S i ≤ ap t →
        step s (set_pc (release s own) t (TDur i (Upd u) s0 (rs t) false))
    (* Algorithm 3 L18–L19 (update.rs lock_any, bring_up_to_date: replay or copy) *)
    | Prepare s t i u own s0 c0 ap rs r ws0 :
        pc s t = THave i u own s0 c0 ap rs → ap t < S i →
        (own = Some r ∨ own = None ∧ r < NR ∧ rlock s r = Free) →
        (ccv (mem s) = (s0, c0) ∧ ws0 = map (λ w, (w, p_load line (mem s) (rloc c0 w))) (seq 0 W) ∨
         ∃ h, rhead s r = Some h ∧ h ≤ s0 ∧ ws0 = redo_ws (ch s) h s0) →
        step s (set_pc (set_rep s t r (rstores (mem s) r ws0) (Some s0) (dirty s r ++ map fst ws0)) t
                  (TSim i u r s0 c0 ap rs 0 [] [] []))
    (* update.rs bring_up_to_date gives up after a partial replay or copy *)
    | PrepFail s t i u own s0 c0 ap rs r gs :
        pc s t = THave i u own s0 c0 ap rs →
        (own = Some r ∨ own = None ∧ r < NR ∧ rlock s r = Free) →
        step s (set_pc (set_rep s t r (rstores (mem s) r gs) None (dirty s r ++ map fst gs)) t
                  (TAnn i u (Some r)))
    (* Algorithm 3 L13/L16 continue *)
    | Abandon s t i u own s0 c0 ap rs :
        pc s t = THave i u own s0 c0 ap rs → step s (set_pc s t (TAnn i u own))
    (* Algorithm 3 L18 (none free), L40–L42 (update.rs end of attempt_update) *)
    | GiveUp s t i u own :
        pc s t = TAnn i u own → step s (set_pc (release s own) t (TCollect i (Upd u)))
    (* Algorithm 3 L20–L24, index j (update.rs simulate, execute) *)
    | ScanRun s t i u r s0 c0 ap rs j bat ws lg o i' fl :
        pc s t = TSim i u r s0 c0 ap rs j bat ws lg → j < N →
        req s j = Some (Req o i' fl) → ap j < S i' →
        step s (set_pc (set_rep s t r (rstores (mem s) r (run_op o (content (mem s) r)).1) (rhead s r)
                          (dirty s r ++ map fst (run_op o (content (mem s) r)).1)) t
                  (TSim i u r s0 c0 (upd ap j (S i')) (upd rs j (run_op o (content (mem s) r)).2) (S j)
                     (bat ++ [Entry i' j o (run_op o (content (mem s) r)).2 fl])
                     (ws ++ (run_op o (content (mem s) r)).1)
                     (lg ++ undo_log (content (mem s) r) (run_op o (content (mem s) r)).1)))
    | ScanSkip s t i u r s0 c0 ap rs j bat ws lg :
        pc s t = TSim i u r s0 c0 ap rs j bat ws lg → j < N →
        (∀ o i' fl, req s j = Some (Req o i' fl) → S i' ≤ ap j) →
        step s (set_pc s t (TSim i u r s0 c0 ap rs (S j) bat ws lg))
    (* update.rs attempt_update: the simulation gave up (curComb moved): L38–L39 *)
    | Rollback s t i u r s0 c0 ap rs j bat ws lg :
        pc s t = TSim i u r s0 c0 ap rs j bat ws lg →
        step s (set_pc (set_rep s t r (rstores (mem s) r (reverse lg)) (Some s0) (dirty s r ++ map fst lg)) t
                  (TAnn i u (Some r)))
    (* Algorithm 3 L26–L30 (update.rs flush_dirty, fence_before_cas, the CAS) *)
    | CasSucc s t i u r s0 c0 ap rs bat ws lg :
        pc s t = TSim i u r s0 c0 ap rs N bat ws lg → ccv (mem s) = (s0, c0) →
        step s (RState (p_write (cas_flush s t r) LC (cc_write (S s0) r)) (req s)
                  (ch s ++ [Link (content (mem s) r) ap rs bat ws r])
                  (upd (rhead s) r (Some (S s0))) (upd (rlock s) r Held) (upd (dirty s) r [])
                  (ring s) (wm s) (upd (pc s) t (TPersist i (S s0) c0 (rs t)))
                  (xh s) (nid s) (pl s) (ep s) (done s))
    (* Algorithm 3 L26–L30, L38–L39 (tx.rs undo_to) *)
    | CasFail s t i u r s0 c0 ap rs bat ws lg :
        pc s t = TSim i u r s0 c0 ap rs N bat ws lg → ccv (mem s) ≠ (s0, c0) →
        step s (set_pc (set_rep s t r (rstores (cas_flush s t r) r (reverse lg)) (Some s0)
                          (if F4 then map fst lg else [])) t (TAnn i u (Some r)))
    (* update.rs after the CAS: pwb(cur_comb), psync, note_durable *)
    | PersistFix s t i s1 c0 v :
        F1 = true → pc s t = TPersist i s1 c0 v →
        step s (RState (p_sync (mem s) t) (req s) (ch s) (rhead s) (rlock s) (dirty s) (ring s)
                  (wm s `max` (ccv (mem s)).1) (upd (pc s) t (TRelease i s1 c0 v))
                  (xh s) (nid s) (pl s) (ep s) (done s))
    (* Algorithm 3 L32–L35: pwb(curComb), the ring CAS as fence *)
    | PersistRing s t i s1 c0 v :
        F1 = false → pc s t = TPersist i s1 c0 v → ring s (s1 `mod` RS) < s1 →
        step s (RState (p_sync (mem s) t) (req s) (ch s) (rhead s) (rlock s) (dirty s)
                  (upd (ring s) (s1 `mod` RS) s1) (wm s) (upd (pc s) t (TRelease i s1 c0 v))
                  (xh s) (nid s) (pl s) (ep s) (done s))
    (* Algorithm 3 L33: the ring holds the seq: taken as persisted *)
    | PersistSkip s t i s1 c0 v :
        F1 = false → pc s t = TPersist i s1 c0 v → s1 ≤ ring s (s1 `mod` RS) →
        step s (set_pc s t (TRelease i s1 c0 v))
    (* Algorithm 3 L31 (after the persistence: F2's fix), L36–L37; the
       code's ring CAS (update.rs attempt_update) *)
    | Release s t i s1 c0 v :
        pc s t = TRelease i s1 c0 v →
        step s (ret (RState (mem s) (req s) (ch s) (rhead s) (upd (rlock s) c0 Free) (dirty s)
                       (if F1 then ring_put (ring s) s1 else ring s) (wm s) (pc s)
                       (xh s) (nid s) (pl s) (ep s) (done s)) t i s1 v)
    (* Algorithm 3 L43–L50 (update.rs collect); Algorithm 2 L19–L27 *)
    | Collect s t i o c c0 :
        pc s t = TCollect i o → ccv (mem s) = (c, c0) → S i ≤ app_at (ch s) c t →
        step s (set_pc s t (TDur i o c (res_at (ch s) c t) false))
    (* update.rs apply_update: the State collected does not have the
       request applied: two more attempts *)
    | CollectRetry s t i u c c0 :
        pc s t = TCollect i (Upd u) → ccv (mem s) = (c, c0) → app_at (ch s) c t < S i →
        step s (set_pc s t (TAnn i u None))
    (* core.rs ensure_durable: the watermark shows seq c durable *)
    | DurableSkip s t i o c v dir :
        F1 = true → pc s t = TDur i o c v dir → c ≤ wm s →
        step s (ret s t i c v)
    (* core.rs ensure_durable; Algorithm 3 L44–L45, L50; Algorithm 2
       L15–L17, L20–L21, L27 *)
    | DurableSync s t i o c v dir :
        (F1 = false ∨ wm s < c) → pc s t = TDur i o c v dir →
        step s (ret (RState (p_sync (mem s) t) (req s) (ch s) (rhead s) (rlock s) (dirty s) (ring s)
                       (if F1 then wm s `max` (ccv (mem s)).1 else wm s) (pc s)
                       (xh s) (nid s) (pl s) (ep s) (done s)) t i c v)
    (* Algorithm 2 L6–L11 (read.rs try_read_direct) *)
    | DirectRead s t i q pub c c0 :
        pc s t = TRead i q pub → ccv (mem s) = (c, c0) → rhead s c0 = Some c →
        step s (RState (mem s) (req s) (ch s) (rhead s) (rlock s) (dirty s) (ring s) (wm s)
                  (upd (pc s) t (TDur i (Rd q) c (rexec q (content (mem s) c0)) true))
                  (if decide (pl s = c) then xh s ++ [XL i (Rd q) (rexec q (content (mem s) c0))]
                   else xh s) (nid s) (pl s) (ep s) (done s))
    (* Algorithm 2 L3–L5 (read.rs apply_read's publish); [way]: whether the
       read will return the result a combiner computes (collect) or by a
       direct read (a prophecy, see the header) *)
    | PublishRead s t i q way :
        pc s t = TRead i q false →
        step s (RState (mem s) (upd (req s) t (Some (Req (Rd q) i way))) (ch s) (rhead s) (rlock s)
                  (dirty s) (ring s) (wm s)
                  (upd (pc s) t (if way then TCollect i (Rd q) else TRead i q true))
                  (xh s) (nid s) (pl s) (ep s) (done s))
    (* a full-system crash and null recovery (open.rs, core.rs build) *)
    | Crash s keep :
        p_crash_ok (mem s) keep → step s (crash_state s keep).

  Definition init_state : rstate :=
    RState (pmem_empty NL) (λ _, None) [link0] (λ r, if decide (r = 0) then Some 0 else None)
      (λ r, if decide (r = 0) then Held else Free) (λ _, []) (λ _, 0) 0 (λ _, TIdle) [] 0 0 0 [].

  Inductive reachable : rstate → Prop :=
    | reachable_init : reachable init_state
    | reachable_step s s' : reachable s → step s s' → reachable s'.

  (** ** Lemmas: persistent memory *)

  Definition val_at (p : pmem) (x k : nat) : nat := seq_val x (take k (line_hist (p_mem p) (line x))).
  Definition llen (p : pmem) (x : nat) : nat := length (line_hist (p_mem p) (line x)).

  (** Location [x] holds [v] in every crash image: from its line's mark to
      its end, [v]. *)
  Definition stable (p : pmem) (x v : nat) : Prop :=
    ∀ k, mark (p_mem p) (line x) ≤ k ≤ llen p x → val_at p x k = v.
  (** Every crash image keeps the visible value of [x]. *)
  Definition clean (p : pmem) (x : nat) : Prop := stable p x (p_load line p x).
  Definition stable_rep (p : pmem) (r : nat) (σ : list nat) : Prop :=
    ∀ w v, σ !! w = Some v → stable p (rloc r w) v.

  (** The memory's bookkeeping: [NL] lines, marks within them, no [pwb]
      pending between steps (a step's fence follows its [pwb]s). *)
  Definition pm_ok (p : pmem) : Prop :=
    p_wf p ∧ length (m_lines (p_mem p)) = NL ∧ p_pwbs p = [].

  Lemma join_app' {A} (l1 l2 : list (list A)) : mjoin (l1 ++ l2) = mjoin l1 ++ mjoin l2.
  Proof. induction l1 as [| a l1 IH]; simpl; [done |]. by rewrite IH, app_assoc. Qed.

  Lemma seq_val_snoc x ws w :
    seq_val x (ws ++ [w]) = foldl (λ acc st, if decide (st.1 = x) then st.2 else acc) (seq_val x ws) w.
  Proof. unfold seq_val. rewrite join_app', foldl_app. simpl. by rewrite app_nil_r. Qed.

  Lemma foldl_other x (w : list (nat * nat)) a :
    x ∉ w.*1 → foldl (λ acc st, if decide (st.1 = x) then st.2 else acc) a w = a.
  Proof.
    revert a. induction w as [| [y v] w IH]; intros a Hx; simpl; [done |].
    rewrite decide_False; [| set_solver]. apply IH. set_solver.
  Qed.

  Lemma seq_val_snoc_other x ws w : x ∉ w.*1 → seq_val x (ws ++ [w]) = seq_val x ws.
  Proof. intros Hx. rewrite seq_val_snoc. by apply foldl_other. Qed.

  Lemma seq_val_snoc_store x ws v : seq_val x (ws ++ [[(x, v)]]) = v.
  Proof. rewrite seq_val_snoc. simpl. by rewrite decide_True. Qed.

  Lemma seq_val_snoc_cc0 ws k r : seq_val 0 (ws ++ [cc_write k r]) = k.
  Proof. rewrite seq_val_snoc. simpl. done. Qed.
  Lemma seq_val_snoc_cc1 ws k r : seq_val 1 (ws ++ [cc_write k r]) = r.
  Proof. rewrite seq_val_snoc. simpl. done. Qed.

  (** A write of line [L]. *)
  Lemma hist_write m L w L' :
    line_hist (mem_write m L w) L' =
      if decide (L = L' ∧ L < length (m_lines m)) then line_hist m L ++ [w] else line_hist m L'.
  Proof.
    unfold line_hist, mem_write; simpl. case_decide as H.
    - destruct H as [<- HL]. rewrite list_lookup_insert by done. done.
    - destruct (decide (L = L')) as [<- | Hne].
      + rewrite list_insert_ge; [done |]. lia.
      + by rewrite list_lookup_insert_ne.
  Qed.

  Lemma lines_write m L w : length (m_lines (mem_write m L w)) = length (m_lines m).
  Proof. simpl. by rewrite insert_length. Qed.

  Lemma p_load_val_at p x : p_load line p x = val_at p x (llen p x).
  Proof. unfold p_load, mem_visible, val_at, llen. by rewrite take_ge. Qed.

  Lemma pm_ok_mark p x : pm_ok p → mark (p_mem p) (line x) ≤ llen p x.
  Proof. intros ((_ & Hm & _) & _ & _). apply Hm. Qed.

  Lemma stable_load p x v : pm_ok p → stable p x v → p_load line p x = v.
  Proof. intros Hp Hs. rewrite p_load_val_at. apply Hs. pose proof (pm_ok_mark p x Hp). lia. Qed.

  (** A write of other locations leaves a location's images alone. *)
  Lemma val_at_write p L w x k :
    x ∉ w.*1 → k ≤ llen p x →
    val_at (p_write p L w) x k = val_at p x k ∧ val_at (p_write p L w) x (llen (p_write p L w) x) = val_at p x (llen p x).
  Proof.
    intros Hx Hk. unfold val_at, llen, p_write in *; simpl in *. rewrite !hist_write.
    case_decide as H; [| by split]. destruct H as [-> _].
    rewrite take_app_le by done. split; [done |]. rewrite !take_ge by (rewrite ?app_length; lia).
    by apply seq_val_snoc_other.
  Qed.

  Lemma llen_write p L w x : llen p x ≤ llen (p_write p L w) x.
  Proof.
    unfold llen, p_write; simpl. rewrite hist_write.
    case_decide as H; [destruct H as [-> _]; rewrite app_length; simpl; lia | lia].
  Qed.

  Lemma stable_write_other p L w x v : pm_ok p → x ∉ w.*1 → stable p x v → stable (p_write p L w) x v.
  Proof.
    intros Hp Hx Hs k Hk. pose proof (pm_ok_mark p x Hp) as Hm. rewrite p_write_mark in Hk.
    destruct (decide (k ≤ llen p x)) as [Hle | Hgt].
    - rewrite (proj1 (val_at_write p L w x k Hx Hle)). apply Hs. lia.
    - assert (k = llen (p_write p L w) x) as ->.
      { unfold llen, p_write in *; simpl in *. rewrite hist_write in *.
        case_decide as H; [destruct H as [-> _]; rewrite app_length in *; simpl in *; lia | lia]. }
      rewrite (proj2 (val_at_write p L w x 0 Hx ltac:(lia))). apply Hs.
      pose proof (llen_write p L w x). lia.
  Qed.

  Lemma p_load_write_other p L w x : x ∉ w.*1 → p_load line (p_write p L w) x = p_load line p x.
  Proof.
    intros Hx. rewrite !p_load_val_at. apply (val_at_write p L w x 0 Hx). lia.
  Qed.

  Lemma clean_write_other p L w x : pm_ok p → x ∉ w.*1 → clean p x → clean (p_write p L w) x.
  Proof. intros Hp Hx Hc. unfold clean. rewrite p_load_write_other by done. by apply stable_write_other. Qed.

  Lemma pm_ok_write p L w : pm_ok p → pm_ok (p_write p L w).
  Proof.
    intros (Hwf & Hn & Hpw). split_and!; [by apply p_write_wf | unfold p_write; simpl; by rewrite insert_length | done].
  Qed.

  (** Fences and write-backs: lines unchanged, marks only rise. *)
  Lemma pwbs_hist p t xs L : line_hist (p_mem (foldl (λ p x, p_pwb line p t x) p xs)) L = line_hist (p_mem p) L.
  Proof. revert p. induction xs as [| x xs IH]; intros p; simpl; [done |]. by rewrite IH. Qed.
  Lemma pwbs_mark p t xs L : mark (p_mem (foldl (λ p x, p_pwb line p t x) p xs)) L = mark (p_mem p) L.
  Proof. revert p. induction xs as [| x xs IH]; intros p; simpl; [done |]. by rewrite IH. Qed.
  Lemma pwbs_lines p t xs : m_lines (p_mem (foldl (λ p x, p_pwb line p t x) p xs)) = m_lines (p_mem p).
  Proof. revert p. induction xs as [| x xs IH]; intros p; simpl; [done |]. by rewrite IH. Qed.
  Lemma pwbs_wf p t xs : p_wf p → p_wf (foldl (λ p x, p_pwb line p t x) p xs).
  Proof. revert p. induction xs as [| x xs IH]; intros p Hp; simpl; [done |]. apply IH. by apply p_pwb_wf. Qed.
  Lemma pwbs_in p t xs x :
    x ∈ xs → (t, line x, length (line_hist (p_mem p) (line x))) ∈ p_pwbs (foldl (λ p x, p_pwb line p t x) p xs).
  Proof.
    revert p. induction xs as [| y xs IH]; intros p Hx; [by apply elem_of_nil in Hx |]. simpl.
    assert (∀ pw q, pw ∈ p_pwbs q → pw ∈ p_pwbs (foldl (λ p x, p_pwb line p t x) q xs)) as Hkeep.
    { clear. induction xs as [| z xs IH]; intros pw q Hq; simpl; [done |]. apply IH. simpl. by right. }
    apply elem_of_cons in Hx as [-> | Hx].
    - apply Hkeep. simpl. by left.
    - apply (IH (p_pwb line p t y)) in Hx. exact Hx.
  Qed.
  Lemma pwbs_pwbs p t xs : ∀ pw, pw ∈ p_pwbs (foldl (λ p x, p_pwb line p t x) p xs) → pw ∈ p_pwbs p ∨ pw.1.1 = t.
  Proof.
    revert p. induction xs as [| y xs IH]; intros p pw Hpw; simpl in *; [by left |].
    apply IH in Hpw as [Hpw | Hpw]; [| by right]. simpl in Hpw. apply elem_of_cons in Hpw as [-> | Hpw]; [by right | by left].
  Qed.

  Lemma flush_hist p t xs L : line_hist (p_mem (p_flush p t xs)) L = line_hist (p_mem p) L.
  Proof. unfold p_flush. by rewrite p_fence_hist, pwbs_hist. Qed.
  Lemma flush_mark p t xs L : mark (p_mem p) L ≤ mark (p_mem (p_flush p t xs)) L.
  Proof. unfold p_flush. etrans; [| apply p_fence_mark_mono]. by rewrite pwbs_mark. Qed.
  Lemma flush_lines p t xs : length (m_lines (p_mem (p_flush p t xs))) = length (m_lines (p_mem p)).
  Proof. unfold p_flush, p_fence; simpl. by rewrite foldr_fence_lines, pwbs_lines. Qed.
  Lemma flush_covers p t xs x :
    pm_ok p → x ∈ xs → llen p x ≤ mark (p_mem (p_flush p t xs)) (line x).
  Proof.
    intros (Hwf & Hn & _) Hx. unfold p_flush, llen.
    rewrite <- (pwbs_hist p t xs). apply p_fence_covers.
    - by apply pwbs_wf.
    - rewrite pwbs_hist. by apply pwbs_in.
    - rewrite pwbs_lines, Hn. apply line_lt.
  Qed.
  Lemma pm_ok_flush p t xs : pm_ok p → pm_ok (p_flush p t xs).
  Proof.
    intros (Hwf & Hn & Hpw). split_and!.
    - apply p_fence_wf, pwbs_wf, Hwf.
    - by rewrite flush_lines.
    - unfold p_flush, p_fence; simpl.
      destruct (filter _ _) as [| pw l] eqn:E; [done | exfalso].
      assert (pw ∈ filter (λ pw, pw.1.1 ≠ t) (p_pwbs (foldl (λ p x, p_pwb line p t x) p xs))) as Hin
        by (rewrite E; by left).
      apply elem_of_list_filter in Hin as [Hne Hin].
      apply pwbs_pwbs in Hin as [Hin | Hin]; [rewrite Hpw in Hin; by apply elem_of_nil in Hin | done].
  Qed.

  (** Stores of transactions to replica [r]. *)
  Lemma rloc_inj r w r' w' : w < W → w' < W → rloc r w = rloc r' w' → r = r' ∧ w = w'.
  Proof.
    unfold rloc. intros Hw Hw' Heq. destruct (decide (r = r')) as [-> | Hne]; [lia |].
    exfalso. destruct (decide (r < r')) as [Hlt | Hge].
    - assert (r * W + W ≤ r' * W) by nia. lia.
    - assert (r' * W + W ≤ r * W) by nia. lia.
  Qed.

  Lemma p_load_store p x v y :
    pm_ok p → p_load line (p_store line p x v) y = if decide (x = y) then v else p_load line p y.
  Proof.
    intros (_ & Hn & _). case_decide as Hxy.
    - subst y. unfold p_load, p_store, mem_visible, p_write; simpl. rewrite hist_write.
      rewrite decide_True by (split; [done | rewrite Hn; apply line_lt]). apply seq_val_snoc_store.
    - apply p_load_write_other. simpl. rewrite elem_of_list_singleton. done.
  Qed.

  Lemma rstores_cons p r st ws : rstores p r (st :: ws) = rstores (rstore p r st) r ws.
  Proof. done. Qed.

  Lemma pm_ok_rstores p r ws : pm_ok p → pm_ok (rstores p r ws).
  Proof.
    revert p. induction ws as [| st ws IH]; intros p Hp; [done |]. rewrite rstores_cons. apply IH.
    unfold rstore. case_decide; [by apply pm_ok_write | done].
  Qed.

  Lemma rstores_mark p r ws L : mark (p_mem (rstores p r ws)) L = mark (p_mem p) L.
  Proof.
    revert p. induction ws as [| st ws IH]; intros p; [done |]. rewrite rstores_cons, IH.
    unfold rstore. by case_decide.
  Qed.

  (** A location outside replica [r]'s words. *)
  Definition off_rep (r x : nat) : Prop := ∀ w, w < W → rloc r w ≠ x.

  Lemma rstores_load_other p r ws x :
    pm_ok p → off_rep r x → p_load line (rstores p r ws) x = p_load line p x.
  Proof.
    revert p. induction ws as [| [w v] ws IH]; intros p Hp Hx; [done |]. rewrite rstores_cons.
    unfold rstore at 1; simpl. case_decide as Hw.
    - rewrite IH by (done || by apply pm_ok_write). rewrite p_load_store by done.
      rewrite decide_False; [done |]. by apply Hx.
    - by apply IH.
  Qed.

  Lemma rstores_stable_other p r ws x v :
    pm_ok p → off_rep r x → stable p x v → stable (rstores p r ws) x v.
  Proof.
    revert p. induction ws as [| [w u] ws IH]; intros p Hp Hx Hs; [done |]. rewrite rstores_cons.
    unfold rstore at 1; simpl. case_decide as Hw; [| by apply IH].
    apply IH; [by apply pm_ok_write | done |]. apply stable_write_other; [done | | done].
    simpl. rewrite elem_of_list_singleton. intros Heq. by apply (Hx w).
  Qed.

  Lemma rstores_clean_other p r ws x : pm_ok p → off_rep r x → clean p x → clean (rstores p r ws) x.
  Proof.
    intros Hp Hx Hc. unfold clean. rewrite rstores_load_other by done. by apply rstores_stable_other.
  Qed.

  Lemma off_rep_ne r r' w : w < W → r ≠ r' → off_rep r (rloc r' w).
  Proof. intros Hw Hne w' Hw' Heq. apply rloc_inj in Heq as [? _]; [done | done | done]. Qed.

  Lemma off_rep_cc r x : x < 2 → off_rep r x.
  Proof. intros Hx w _. unfold rloc. lia. Qed.

  Lemma rstores_hist_cc p r ws : r < NR → line_hist (p_mem (rstores p r ws)) LC = line_hist (p_mem p) LC.
  Proof.
    intros Hr. revert p. induction ws as [| [w v] ws IH]; intros p; [done |].
    rewrite rstores_cons, IH. unfold rstore; simpl. case_decide as Hw; [| done].
    unfold p_store, p_write; simpl. rewrite hist_write. rewrite decide_False; [done |].
    intros [Heq _]. by apply (line_rep r w).
  Qed.

  Lemma rstores_val_at_cc p r ws x k :
    r < NR → line x = LC → val_at (rstores p r ws) x k = val_at p x k.
  Proof. intros Hr Hx. unfold val_at. rewrite Hx. by rewrite rstores_hist_cc. Qed.

  Lemma content_lookup p r w :
    content p r !! w = if decide (w < W) then Some (p_load line p (rloc r w)) else None.
  Proof.
    unfold content. rewrite list_lookup_fmap. case_decide as Hw.
    - by rewrite lookup_seq_lt.
    - by rewrite lookup_seq_ge by lia.
  Qed.

  Lemma content_length p r : length (content p r) = W.
  Proof. unfold content. by rewrite fmap_length, seq_length. Qed.

  Lemma apply_ws_length ws σ : length (apply_ws ws σ) = length σ.
  Proof.
    revert σ. induction ws as [| st ws IH]; intros σ; simpl; [done |]. by rewrite IH, insert_length.
  Qed.

  Lemma apply_ws_app ws1 ws2 σ : apply_ws (ws1 ++ ws2) σ = apply_ws ws2 (apply_ws ws1 σ).
  Proof. unfold apply_ws. by rewrite foldl_app. Qed.

  Lemma content_rstores p r ws :
    pm_ok p → content (rstores p r ws) r = apply_ws ws (content p r).
  Proof.
    revert p. induction ws as [| [w v] ws IH]; intros p Hp; [done |]. rewrite rstores_cons.
    assert (pm_ok (rstore p r (w, v))) as Hp'.
    { unfold rstore. case_decide; [by apply pm_ok_write | done]. }
    rewrite IH by done. change (apply_ws ((w, v) :: ws) (content p r)) with (apply_ws ws (<[w:=v]> (content p r))).
    f_equal. apply list_eq. intros w'. rewrite (content_lookup (rstore p r (w, v))).
    unfold rstore; simpl. destruct (decide (w < W)) as [Hw | Hw].
    - destruct (decide (w' < W)) as [Hw' | Hw'].
      + rewrite p_load_store by done. destruct (decide (rloc r w = rloc r w')) as [Heq | Hne].
        * apply rloc_inj in Heq as [_ <-]; [| done | done].
          rewrite list_lookup_insert; [done | by rewrite content_length].
        * rewrite list_lookup_insert_ne by (intros ->; done). rewrite content_lookup.
          by rewrite decide_True by done.
      + rewrite list_lookup_insert_ne by lia. rewrite content_lookup. by rewrite decide_False by done.
    - rewrite list_insert_ge by (rewrite content_length; lia). by rewrite content_lookup.
  Qed.

  Lemma content_rstores_other p r ws r' :
    pm_ok p → r ≠ r' → content (rstores p r ws) r' = content p r'.
  Proof.
    intros Hp Hne. unfold content. apply map_ext_in. intros w Hw%elem_of_list_In.
    apply elem_of_seq in Hw. apply rstores_load_other; [done |]. by apply off_rep_ne; [lia |].
  Qed.

  Lemma content_write_other p L w r :
    (∀ x, x ∈ w.*1 → x < 2) → content (p_write p L w) r = content p r.
  Proof.
    intros Hw. unfold content. apply map_ext_in. intros w' _. apply p_load_write_other.
    intros Hin. apply Hw in Hin. unfold rloc in Hin. lia.
  Qed.

  Lemma content_flush p t xs r : content (p_flush p t xs) r = content p r.
  Proof.
    unfold content. apply map_ext_in. intros w _. unfold p_load, mem_visible. by rewrite flush_hist.
  Qed.

  Lemma stable_content p r σ : pm_ok p → length σ = W → stable_rep p r σ → content p r = σ.
  Proof.
    intros Hp Hl Hs. apply list_eq. intros w. rewrite content_lookup. case_decide as Hw.
    - destruct (lookup_lt_is_Some_2 σ w) as [v Hv]; [lia |]. rewrite Hv. f_equal.
      apply stable_load; [done |]. by apply Hs.
    - symmetry. apply lookup_ge_None_2. lia.
  Qed.

  (** Fences keep what was stable (marks only rise). *)
  Lemma stable_flush p t xs x v : stable p x v → stable (p_flush p t xs) x v.
  Proof.
    intros Hs k Hk. unfold val_at, llen in *. rewrite flush_hist in *. apply Hs. unfold llen.
    pose proof (flush_mark p t xs (line x)). lia.
  Qed.

  Lemma clean_flush p t xs x : clean p x → clean (p_flush p t xs) x.
  Proof.
    unfold clean. intros Hc. assert (p_load line (p_flush p t xs) x = p_load line p x) as ->.
    { unfold p_load, mem_visible. by rewrite flush_hist. }
    by apply stable_flush.
  Qed.

  (** A location whose line was written back and fenced is clean. *)
  Lemma clean_flushed p t xs x : pm_ok p → x ∈ xs → clean (p_flush p t xs) x.
  Proof.
    intros Hp Hx k Hk. pose proof (flush_covers p t xs x Hp Hx) as Hc.
    unfold llen in *. rewrite flush_hist in Hk.
    assert (k = length (line_hist (p_mem p) (line x))) as -> by lia.
    unfold val_at, p_load, mem_visible. rewrite flush_hist. by rewrite take_ge.
  Qed.

  (** The crash image, as the memory after the crash. *)
  Lemma after_hist p keep L : line_hist (p_mem (p_after p keep)) L = take (keep L) (line_hist (p_mem p) L).
  Proof.
    unfold line_hist, p_after; simpl. rewrite list_lookup_imap.
    destruct (m_lines (p_mem p) !! L); simpl; [done |]. by rewrite take_nil.
  Qed.

  Lemma after_mark p keep L :
    pm_ok p → L < NL → mark (p_mem (p_after p keep)) L = keep L.
  Proof.
    intros ((Hlen & _) & Hn & _) HL. unfold mark, p_after; simpl. rewrite list_lookup_imap.
    destruct (lookup_lt_is_Some_2 (m_marks (p_mem p)) L) as [m Hm]; [lia |]. by rewrite Hm.
  Qed.

  Lemma after_load p keep x : p_load line (p_after p keep) x = p_image line p keep x.
  Proof. unfold p_load, mem_visible, p_image, persisted. by rewrite after_hist. Qed.

  Lemma pm_ok_after p keep : pm_ok p → p_crash_ok p keep → pm_ok (p_after p keep).
  Proof.
    intros Hp Hok. pose proof Hp as ((Hlen & Hm & _) & Hn & _).
    unfold pm_ok, p_wf. split_and!; [| | by constructor | | done].
    - unfold p_after; simpl. by rewrite !imap_length.
    - intros L. destruct (decide (L < NL)) as [HL | HL].
      + rewrite after_mark by done. rewrite after_hist.
        specialize (Hok L ltac:(lia)). rewrite take_length. lia.
      + unfold mark, p_after; simpl. rewrite list_lookup_imap.
        rewrite (lookup_ge_None_2 (m_marks (p_mem p)) L); [simpl; lia | lia].
    - unfold p_after; simpl. by rewrite imap_length.
  Qed.

  Lemma clean_after p keep x : pm_ok p → p_crash_ok p keep → clean (p_after p keep) x.
  Proof.
    intros Hp Hok k Hk. unfold llen in Hk. rewrite after_mark, after_hist in Hk by (done || apply line_lt).
    pose proof (Hok (line x)) as Hx. destruct Hp as (_ & Hn & _). rewrite Hn in Hx.
    specialize (Hx (line_lt x)). rewrite take_length in Hk.
    assert (k = keep (line x)) as -> by lia.
    unfold val_at, p_load, mem_visible. rewrite !after_hist. by rewrite take_take, Nat.min_id.
  Qed.

  Lemma after_val_at p keep x k :
    k ≤ keep (line x) → val_at (p_after p keep) x k = val_at p x k.
  Proof. intros Hk. unfold val_at. rewrite after_hist, take_take. f_equal. f_equal. lia. Qed.

  (** ** Lemmas: logs and transitions *)

  Lemma elem_of_map_fst_reverse (w : nat) (lg : list (nat * nat)) : w ∈ map fst (reverse lg) ↔ w ∈ map fst lg.
  Proof.
    rewrite !elem_of_list_In, !in_map_iff. setoid_rewrite <- elem_of_list_In.
    setoid_rewrite elem_of_reverse. done.
  Qed.

  Lemma undo_log_ok σ ws : apply_ws (reverse (undo_log σ ws)) (apply_ws ws σ) = σ.
  Proof.
    revert σ. induction ws as [| [w v] ws IH]; intros σ; [done |].
    cbn [undo_log]. rewrite reverse_cons, apply_ws_app. simpl. rewrite IH. simpl.
    destruct (decide (w < length σ)) as [Hw | Hw].
    - destruct (lookup_lt_is_Some_2 σ w Hw) as [x Hx]. rewrite Hx. simpl.
      rewrite list_insert_insert. by apply list_insert_id.
    - rewrite list_insert_ge by (rewrite insert_length; lia). by rewrite list_insert_ge by lia.
  Qed.

  Lemma batch_ok_apply σ bat ws σ' : batch_ok σ bat ws σ' → apply_ws ws σ = σ'.
  Proof. induction 1 as [| σ e bat ws σ' He Hb IH]; [done |]. by rewrite apply_ws_app. Qed.

  Lemma batch_ok_snoc σ bat ws σ1 e :
    batch_ok σ bat ws σ1 → (run_op (e_op e) σ1).2 = e_val e →
    batch_ok σ (bat ++ [e]) (ws ++ (run_op (e_op e) σ1).1) (apply_ws (run_op (e_op e) σ1).1 σ1).
  Proof.
    induction 1 as [σ | σ e' bat ws σ' He' Hb IH]; intros He; simpl.
    - pose proof (batch_ok_cons σ e [] [] _ He (batch_ok_nil _)) as H. by rewrite app_nil_r in H.
    - rewrite <- app_assoc. constructor; [done |]. by apply IH.
  Qed.

  Definition chain_ok (ch : list link) : Prop :=
    (∃ l0, ch !! 0 = Some l0 ∧ l_obj l0 = init_obj ∧ l_rep l0 = 0) ∧
    (∀ k l, ch !! k = Some l → length (l_obj l) = W ∧ l_rep l < NR) ∧
    (∀ k a b, ch !! k = Some a → ch !! S k = Some b → batch_ok (l_obj a) (l_batch b) (l_ws b) (l_obj b)).

  Lemma chain_obj_length ch k : chain_ok ch → length (obj_at ch k) = W.
  Proof.
    intros (_ & Hl & _). unfold obj_at. destruct (ch !! k) as [l |] eqn:E; simpl.
    - by apply (Hl k l).
    - unfold init_obj. by rewrite replicate_length.
  Qed.

  Lemma chain_rep_lt ch k : chain_ok ch → rep_at ch k < NR.
  Proof.
    intros (_ & Hl & _). unfold rep_at. destruct (ch !! k) as [l |] eqn:E; simpl; [| done].
    by apply (Hl k l).
  Qed.

  (** [applyRedologs]: the logs of [h+1 .. s0] bring the object at [h] to
      the object at [s0]. *)
  Lemma redo_ws_ok ch h s0 :
    chain_ok ch → h ≤ s0 → s0 < length ch → apply_ws (redo_ws ch h s0) (obj_at ch h) = obj_at ch s0.
  Proof.
    intros Hc Hh. induction Hh as [| s0 Hh IH]; intros Hs.
    - unfold redo_ws. rewrite drop_ge; [done | rewrite take_length; lia].
    - destruct (lookup_lt_is_Some_2 ch (S s0) Hs) as [b Hb].
      destruct (lookup_lt_is_Some_2 ch s0 ltac:(lia)) as [a Ha].
      unfold redo_ws in *. rewrite (take_S_r ch (S s0) b Hb), drop_app_le.
      2: { rewrite take_length_le; lia. }
      rewrite map_app, join_app', apply_ws_app, IH by lia. simpl. rewrite app_nil_r.
      unfold obj_at. rewrite Ha, Hb. simpl. apply (batch_ok_apply _ (l_batch b)). by apply (proj2 (proj2 Hc) s0).
  Qed.

  (** ** The persistence invariant (the fixed protocol: [F1], [F4]) *)

  Definition rel_of (p : tstate) : option (nat * nat) :=
    match p with TPersist _ s1 c0 _ | TRelease _ s1 c0 _ => Some (s1, c0) | _ => None end.

  (** A replica a thread holds between its attempts holds its head's object. *)
  Definition own_ok (s : rstate) (own : option nat) : Prop :=
    match own with
    | None => True
    | Some r => r < NR ∧ ∀ h, rhead s r = Some h → h ≤ cseq s ∧ content (mem s) r = obj_at (ch s) h
    end.

  (** A thread that installed seq [s1] and is to release [c0], the replica
      of seq [s1 - 1]: read-locked, and installed by no later transition. *)
  Definition rel_ok (s : rstate) (s1 c0 : nat) : Prop :=
    1 ≤ s1 ≤ cseq s ∧ c0 = rep_at (ch s) (pred s1) ∧ rlock s c0 = Held ∧
    ∀ k, s1 ≤ k ≤ cseq s → rep_at (ch s) k ≠ c0.

  Definition tinv1 (s : rstate) (p : tstate) : Prop :=
    match p with
    | TIdle | TCollect _ _ | TRead _ _ _ => True
    | TAnn _ _ own => own_ok s own
    | THave _ _ own s0 _ _ _ => own_ok s own ∧ s0 ≤ cseq s
    | TSim _ _ r s0 _ _ _ _ bat ws lg =>
        r < NR ∧ s0 ≤ cseq s ∧ rhead s r = Some s0 ∧
        batch_ok (obj_at (ch s) s0) bat ws (content (mem s) r) ∧
        apply_ws (reverse lg) (content (mem s) r) = obj_at (ch s) s0
    | TPersist _ s1 c0 _ => rel_ok s s1 c0
    | TRelease _ s1 c0 _ => rel_ok s s1 c0 ∧ s1 ≤ mark_cc s
    | TDur _ _ c _ _ => c ≤ cseq s
    end.

  Record inv1 (s : rstate) : Prop := {
    i_pm : pm_ok (mem s);
    i_chain : chain_ok (ch s);
    (* curComb's line: the installs, in order *)
    i_cclen : length (line_hist (p_mem (mem s)) LC) = cseq s;
    i_cc : ∀ k, k ≤ cseq s → val_at (mem s) 0 k = k ∧ val_at (mem s) 1 k = rep_at (ch s) k;
    i_wm : wm s ≤ mark_cc s;
    i_done : ∀ i k, (i, k) ∈ done s → k ≤ mark_cc s;
    (* every curComb a crash may keep designates a read-locked replica
       that holds its object in every crash image *)
    i_cand : ∀ k, mark_cc s ≤ k ≤ cseq s →
      rlock s (rep_at (ch s) k) = Held ∧ rhead s (rep_at (ch s) k) = Some k ∧
      stable_rep (mem s) (rep_at (ch s) k) (obj_at (ch s) k);
    i_held : ∀ r, r < NR → rlock s r = Held →
      ∃ k, k ≤ cseq s ∧ rhead s r = Some k ∧ stable_rep (mem s) r (obj_at (ch s) k);
    i_free : ∀ r h, r < NR → rlock s r = Free → rhead s r = Some h →
      h ≤ cseq s ∧ content (mem s) r = obj_at (ch s) h;
    (* a word of a replica not among its dirty words is in every crash
       image as it is visible *)
    i_dirty : ∀ r w, r < NR → w < W → w ∈ dirty s r ∨ clean (mem s) (rloc r w);
    i_owned : ∀ r t, rlock s r = Owned t → t < N ∧ owns (pc s t) = Some r;
    i_owns : ∀ t r, t < N → owns (pc s t) = Some r → rlock s r = Owned t;
    i_thr : ∀ t, t < N → tinv1 s (pc s t);
    i_idle : ∀ t, N ≤ t → pc s t = TIdle;
    i_rel : ∀ t1 t2 a b, t1 ≠ t2 → rel_of (pc s t1) = Some a → rel_of (pc s t2) = Some b → a.1 ≠ b.1;
  }.

  (** Memory changed by fences only. *)
  Definition fenced (p p' : pmem) : Prop :=
    pm_ok p' ∧ (∀ L, line_hist (p_mem p') L = line_hist (p_mem p) L) ∧
    (∀ L, mark (p_mem p) L ≤ mark (p_mem p') L).

  Lemma fenced_refl p : pm_ok p → fenced p p.
  Proof. done. Qed.
  Lemma fenced_flush p t xs : pm_ok p → fenced p (p_flush p t xs).
  Proof. intros Hp. split_and!; [by apply pm_ok_flush | apply flush_hist | apply flush_mark]. Qed.
  Lemma fenced_load p p' x : fenced p p' → p_load line p' x = p_load line p x.
  Proof. intros (_ & Hh & _). unfold p_load, mem_visible. by rewrite Hh. Qed.
  Lemma fenced_val_at p p' x k : fenced p p' → val_at p' x k = val_at p x k.
  Proof. intros (_ & Hh & _). unfold val_at. by rewrite Hh. Qed.
  Lemma fenced_stable p p' x v : fenced p p' → stable p x v → stable p' x v.
  Proof.
    intros Hf Hs k Hk. rewrite (fenced_val_at p p') by done. apply Hs.
    destruct Hf as (_ & Hh & Hm). unfold llen in *. rewrite Hh in Hk. specialize (Hm (line x)). lia.
  Qed.
  Lemma fenced_clean p p' x : fenced p p' → clean p x → clean p' x.
  Proof. intros Hf Hc. unfold clean. rewrite (fenced_load p p') by done. by apply (fenced_stable p). Qed.
  Lemma fenced_content p p' r : fenced p p' → content p' r = content p r.
  Proof. intros Hf. unfold content. apply map_ext. intros w. by apply fenced_load. Qed.
  Lemma fenced_trans p1 p2 p3 : fenced p1 p2 → fenced p2 p3 → fenced p1 p3.
  Proof.
    intros (_ & H1 & M1) (Hp & H2 & M2). split_and!; [done | intros L; by rewrite H2, H1 |].
    intros L. etrans; [apply M1 | apply M2].
  Qed.

  Lemma stable_rep_fenced p p' r σ : fenced p p' → stable_rep p r σ → stable_rep p' r σ.
  Proof. intros Hf Hs w v Hw. apply (fenced_stable p); [done |]. by apply Hs. Qed.

  (** [curComb] is the last install. *)
  Lemma inv1_ccv s : inv1 s → ccv (mem s) = (cseq s, rep_at (ch s) (cseq s)).
  Proof.
    intros Hinv. unfold ccv. rewrite !p_load_val_at.
    assert (llen (mem s) 0 = cseq s) as -> by apply (i_cclen s Hinv).
    assert (llen (mem s) 1 = cseq s) as -> by (unfold llen; rewrite line_cc; apply (i_cclen s Hinv)).
    by destruct (i_cc s Hinv (cseq s) (le_n _)) as [-> ->].
  Qed.

  Lemma inv1_mark s : inv1 s → mark_cc s ≤ cseq s.
  Proof.
    intros Hinv. rewrite <- (i_cclen s Hinv). unfold mark_cc.
    pose proof (pm_ok_mark (mem s) 0 (i_pm s Hinv)) as H. by unfold llen in H.
  Qed.

  Lemma inv1_len s : inv1 s → 0 < length (ch s).
  Proof. intros Hinv. destruct (i_chain s Hinv) as [(l0 & H0 & _) _]. apply lookup_lt_Some in H0. lia. Qed.

  Lemma inv1_cseq s : inv1 s → cseq s < length (ch s).
  Proof.
    intros Hinv. destruct (i_chain s Hinv) as [(l0 & H0 & _) _]. apply lookup_lt_Some in H0.
    unfold cseq. lia.
  Qed.

  Lemma lookup_app_prefix (ch l : list link) k : k < length ch → (ch ++ l) !! k = ch !! k.
  Proof. intros Hk. by apply lookup_app_l. Qed.
  Lemma obj_at_app ch l k : k < length ch → obj_at (ch ++ l) k = obj_at ch k.
  Proof. intros Hk. unfold obj_at. by rewrite lookup_app_prefix. Qed.
  Lemma rep_at_app ch l k : k < length ch → rep_at (ch ++ l) k = rep_at ch k.
  Proof. intros Hk. unfold rep_at. by rewrite lookup_app_prefix. Qed.
  Lemma app_at_app ch l k : k < length ch → app_at (ch ++ l) k = app_at ch k.
  Proof. intros Hk. unfold app_at. by rewrite lookup_app_prefix. Qed.
  Lemma res_at_app ch l k : k < length ch → res_at (ch ++ l) k = res_at ch k.
  Proof. intros Hk. unfold res_at. by rewrite lookup_app_prefix. Qed.

  (** What a thread's invariant depends on: the replica it holds, the
      transitions so far (new ones may come), the lock of the replica it is
      to release, the mark of [curComb]'s line. *)
  Lemma tinv1_transfer s s' l q :
    tinv1 s q → 0 < length (ch s) → ch s' = ch s ++ l →
    (∀ r, owns q = Some r → content (mem s') r = content (mem s) r ∧ rhead s' r = rhead s r) →
    (∀ s1 c0, rel_of q = Some (s1, c0) →
       rlock s' c0 = Held ∧ ∀ k, cseq s < k ≤ cseq s' → rep_at (ch s') k ≠ c0) →
    mark_cc s ≤ mark_cc s' → tinv1 s' q.
  Proof.
    intros Hq Hlen Hch Hown Hrel Hm.
    assert (cseq s ≤ cseq s') as Hcs by (unfold cseq; rewrite Hch, app_length; lia).
    assert (∀ k, k ≤ cseq s → obj_at (ch s') k = obj_at (ch s) k) as Hobj.
    { intros k Hk. rewrite Hch. apply obj_at_app. unfold cseq in Hk. lia. }
    assert (∀ k, k ≤ cseq s → rep_at (ch s') k = rep_at (ch s) k) as Hrep.
    { intros k Hk. rewrite Hch. apply rep_at_app. unfold cseq in Hk. lia. }
    assert (∀ own, own_ok s own → (∀ r, own = Some r → content (mem s') r = content (mem s) r ∧ rhead s' r = rhead s r) →
              own_ok s' own) as Hown'.
    { intros [r |] Ho Hc; [| done]. destruct (Hc r eq_refl) as [Hct Hh]. destruct Ho as [Hr Ho].
      split; [done |]. intros h. rewrite Hh, Hct. intros Hh'. destruct (Ho h Hh') as [Hle Heq].
      rewrite Hobj by done. split; [lia | done]. }
    destruct q as [| i u own | i u own s0 c0 ap rs | i u r s0 c0 ap rs j bat ws lg | i s1 c0 v | i s1 c0 v
                  | i o | i q pub | i o c v dir]; simpl in *; try done.
    - by apply Hown'.
    - destruct Hq as [Hq Hs0]. split; [by apply Hown' | lia].
    - destruct (Hown r eq_refl) as [Hc Hh]. rewrite Hh, Hc, Hobj by lia.
      destruct Hq as (? & ? & ? & ? & ?). split_and!; try done. lia.
    - destruct (Hrel s1 c0 eq_refl) as [Hl Hk']. unfold rel_ok in *.
      destruct Hq as (Hs1 & Hc0 & _ & Hk). split; [lia |]. split; [rewrite Hrep by lia; done |].
      split; [done |]. intros k Hk2. destruct (decide (k ≤ cseq s)); [rewrite Hrep by done; apply Hk; lia |].
      apply Hk'. lia.
    - destruct (Hrel s1 c0 eq_refl) as [Hl Hk']. unfold rel_ok in *.
      destruct Hq as [(Hs1 & Hc0 & _ & Hk) Hle]. split; [| lia]. split; [lia |].
      split; [rewrite Hrep by lia; done |].
      split; [done |]. intros k Hk2. destruct (decide (k ≤ cseq s)); [rewrite Hrep by done; apply Hk; lia |].
      apply Hk'. lia.
    - lia.
  Qed.

  Lemma tinv1_rel s q s1 c0 : tinv1 s q → rel_of q = Some (s1, c0) → rel_ok s s1 c0.
  Proof. destruct q; simpl; try done; intros Hq [= <- <-]; apply Hq. Qed.

  Lemma pc_upd s s' t p t' : pc s' = upd (pc s) t p → pc s' t' = if decide (t' = t) then p else pc s t'.
  Proof. intros ->. unfold upd. done. Qed.

  Lemma rel_of_upd s s' t p t' a :
    pc s' = upd (pc s) t p → (rel_of p = None ∨ rel_of p = rel_of (pc s t)) →
    rel_of (pc s' t') = Some a → rel_of (pc s t') = Some a.
  Proof.
    intros Hpc Hrel. rewrite (pc_upd s s' t p t') by done. case_decide; [subst t' |]; [| done].
    destruct Hrel as [-> | ->]; done.
  Qed.

  (** A step that changes no replica, no lock and no transition, and whose
      fences only raise marks. *)
  Lemma inv1_gen s s' t p :
    inv1 s → t < N →
    fenced (mem s) (mem s') → ch s' = ch s → rhead s' = rhead s → rlock s' = rlock s → dirty s' = dirty s →
    wm s' ≤ mark_cc s' → (∀ i k, (i, k) ∈ done s' → k ≤ mark_cc s') →
    pc s' = upd (pc s) t p → owns p = owns (pc s t) → (rel_of p = None ∨ rel_of p = rel_of (pc s t)) →
    tinv1 s' p → inv1 s'.
  Proof.
    intros Hinv Ht Hf Hch Hhd Hlk Hd Hwm Hdone Hpc Hown Hrel Hp.
    assert (mark_cc s ≤ mark_cc s') as Hm by (destruct Hf as (_ & _ & Hm); apply Hm).
    assert (cseq s' = cseq s) as Hcs by (unfold cseq; by rewrite Hch).
    destruct Hinv as [Hpm Hc Hcl Hcc Hwm0 Hdn Hcand Hheld Hfree Hdirty Howned Howns Hthr Hidle Hrl].
    split; rewrite ?Hch, ?Hhd, ?Hlk, ?Hd, ?Hcs; try done.
    - apply Hf.
    - unfold LC. destruct Hf as (_ & Hh & _). by rewrite Hh.
    - intros k Hk. rewrite !(fenced_val_at (mem s) (mem s')) by done. by apply Hcc.
    - intros k Hk. destruct (Hcand k) as (? & ? & ?); [lia |]. split_and!; try done.
      by apply (stable_rep_fenced (mem s)).
    - intros r Hr Hl. destruct (Hheld r Hr Hl) as (k & ? & ? & ?). exists k. split_and!; try done.
      by apply (stable_rep_fenced (mem s)).
    - intros r h Hr Hl Hh. rewrite (fenced_content (mem s)) by done. by apply Hfree.
    - intros r w Hr Hw. destruct (Hdirty r w Hr Hw) as [? | ?]; [by left | right]. by apply (fenced_clean (mem s)).
    - intros r t' Hl. destruct (Howned r t' Hl) as [Ht' Ho]. split; [done |].
      rewrite (pc_upd s s' t p t') by done. case_decide; [subst t'; by rewrite Hown | done].
    - intros t' r Ht' Ho. rewrite (pc_upd s s' t p t') in Ho by done.
      case_decide; [subst t'; rewrite Hown in Ho |]; by apply Howns.
    - intros t' Ht'. rewrite (pc_upd s s' t p t') by done. case_decide; [by subst t' |].
      apply (tinv1_transfer s s' []); [by apply Hthr | by apply inv1_len | by rewrite Hch, app_nil_r | | | done].
      + intros r _. rewrite (fenced_content (mem s)) by done. by rewrite Hhd.
      + intros s1 c0 Hq. rewrite Hlk. split; [apply (tinv1_rel s _ s1 c0 (Hthr t' Ht') Hq) | lia].
    - intros t' Ht'. rewrite (pc_upd s s' t p t') by done. rewrite decide_False by lia. by apply Hidle.
    - intros t1 t2 a b Hne H1 H2. apply (rel_of_upd s s' t p) in H1, H2; try done. by apply (Hrl t1 t2).
  Qed.

  Lemma owns_rel_of p r : owns p = Some r → rel_of p = None.
  Proof. by destruct p. Qed.

  Lemma fenced_rstores_mark p p' r ws L : fenced p p' → mark (p_mem p) L ≤ mark (p_mem (rstores p' r ws)) L.
  Proof. intros (_ & _ & Hm). rewrite rstores_mark. apply Hm. Qed.

  (** A step of thread [t] on the replica [r] it holds (or locks): stores to
      [r], after fences that only raise marks. *)
  Lemma inv1_write s t r p' ws hd d p :
    inv1 s → t < N → r < NR →
    (owns (pc s t) = Some r ∨ owns (pc s t) = None ∧ rlock s r = Free) →
    fenced (mem s) p' → owns p = Some r →
    (∀ w, w < W → w ∈ d ∨ clean (rstores p' r ws) (rloc r w)) →
    tinv1 (set_pc (set_rep s t r (rstores p' r ws) hd d) t p) p →
    inv1 (set_pc (set_rep s t r (rstores p' r ws) hd d) t p).
  Proof.
    intros Hinv Ht Hr Hown Hf Hp Hdr Htp.
    set (s' := set_pc (set_rep s t r (rstores p' r ws) hd d) t p) in *.
    assert (rlock s r = Owned t ∨ rlock s r = Free) as Hlr.
    { destruct Hown as [Ho | [_ Hl]]; [left; by apply (i_owns s Hinv) | by right]. }
    assert (rlock s r ≠ Held) as Hnh by (destruct Hlr as [-> | ->]; done).
    assert (pm_ok p') as Hp' by apply Hf.
    assert (mark_cc s ≤ mark_cc s') as Hm by apply (fenced_rstores_mark (mem s) p' r ws LC Hf).
    assert (∀ x v, off_rep r x → stable (mem s) x v → stable (mem s') x v) as Hst.
    { intros x v Hx Hs. apply rstores_stable_other; [done | done |]. by apply (fenced_stable (mem s)). }
    assert (∀ x, off_rep r x → clean (mem s) x → clean (mem s') x) as Hcln.
    { intros x Hx Hc. apply rstores_clean_other; [done | done |]. by apply (fenced_clean (mem s)). }
    assert (∀ r', r' ≠ r → content (mem s') r' = content (mem s) r') as Hct.
    { intros r' Hne. simpl. rewrite content_rstores_other by done. by apply fenced_content. }
    assert (∀ r' σ, r' ≠ r → length σ = W → stable_rep (mem s) r' σ → stable_rep (mem s') r' σ) as Hsr.
    { intros r' σ Hne Hl Hs w v Hw. apply Hst; [| by apply Hs].
      apply off_rep_ne; [| done]. apply lookup_lt_Some in Hw. lia. }
    assert (∀ t' r', t' ≠ t → owns (pc s t') = Some r' → r' ≠ r) as Hother.
    { intros t' r' Hne Ho ->. destruct (decide (t' < N)) as [Ht' | Ht'].
      - pose proof (i_owns s Hinv t' r Ht' Ho) as Hl. destruct Hlr as [Hl' | Hl']; congruence.
      - rewrite (i_idle s Hinv t') in Ho by lia. done. }
    assert (∀ k, rlock s (rep_at (ch s) k) = Held → rep_at (ch s) k ≠ r) as Hheldne.
    { intros k Hk Heq. rewrite Heq in Hk. done. }
    pose proof Hinv as [Hpm Hc Hcl Hcc Hwm0 Hdn Hcand Hheld Hfree Hdirty Howned Howns Hthr Hidle Hrl].
    assert (ch s' = ch s) as Hch by done. assert (cseq s' = cseq s) as Hcs by done.
    subst s'. split.
    - apply pm_ok_rstores, Hp'.
    - done.
    - rewrite Hcs. simpl. unfold LC. rewrite rstores_hist_cc by done. destruct Hf as (_ & Hh & _).
      rewrite Hh. apply Hcl.
    - rewrite Hcs. intros k Hk. simpl.
      rewrite !rstores_val_at_cc by (done || apply line_cc || done).
      rewrite !(fenced_val_at (mem s) p') by done. by apply Hcc.
    - simpl. etrans; [apply Hwm0 | apply Hm].
    - simpl. intros i k Hik. etrans; [by apply (Hdn i) | apply Hm].
    - rewrite Hcs. intros k Hk. destruct (Hcand k) as (Hl & Hh & Hs); [lia |].
      pose proof (Hheldne k Hl) as Hne. simpl. rewrite !upd_ne by done.
      split_and!; [done | done |]. apply Hsr; [done | by apply chain_obj_length, Hinv | done].
    - intros r' Hr' Hl. simpl in Hl. destruct (decide (r' = r)) as [-> | Hne]; [by rewrite upd_eq in Hl |].
      rewrite upd_ne in Hl by done. destruct (Hheld r' Hr' Hl) as (k & Hk & Hh & Hs). exists k.
      simpl. rewrite upd_ne by done. split_and!; [done | done |].
      apply Hsr; [done | by apply chain_obj_length, Hinv | done].
    - intros r' h Hr' Hl Hh. simpl in Hl, Hh. destruct (decide (r' = r)) as [-> | Hne]; [by rewrite upd_eq in Hl |].
      rewrite upd_ne in Hl by done. rewrite upd_ne in Hh by done. rewrite Hct by done. by apply Hfree.
    - intros r' w Hr' Hw. simpl. destruct (decide (r' = r)) as [-> | Hne].
      + rewrite upd_eq. by apply Hdr.
      + rewrite upd_ne by done. destruct (Hdirty r' w Hr' Hw) as [? | ?]; [by left | right].
        apply Hcln; [| done]. by apply off_rep_ne.
    - intros r' t' Hl. simpl in Hl. destruct (decide (r' = r)) as [-> | Hne].
      + rewrite upd_eq in Hl. injection Hl as <-. simpl. rewrite upd_eq. done.
      + rewrite upd_ne in Hl by done. destruct (Howned r' t' Hl) as [Ht' Ho]. split; [done |].
        simpl. destruct (decide (t' = t)) as [-> | Htne].
        * exfalso. destruct Hown as [Ho' | [Ho' _]]; rewrite Ho' in Ho; congruence.
        * by rewrite upd_ne.
    - intros t' r' Ht' Ho. simpl in Ho |- *. destruct (decide (t' = t)) as [-> | Htne].
      + rewrite upd_eq, Hp in Ho. injection Ho as <-. by rewrite upd_eq.
      + rewrite upd_ne in Ho by done. rewrite upd_ne by (by apply (Hother t')). by apply Howns.
    - intros t' Ht'. simpl. destruct (decide (t' = t)) as [-> | Htne]; [by rewrite upd_eq |].
      rewrite upd_ne by done.
      apply (tinv1_transfer s _ []); [by apply Hthr | by apply inv1_len | by rewrite app_nil_r | | | done].
      + intros r' Ho. pose proof (Hother t' r' Htne Ho) as Hne. rewrite Hct by done. simpl.
        by rewrite upd_ne.
      + intros s1 c0 Hq. pose proof (tinv1_rel s _ s1 c0 (Hthr t' Ht') Hq) as (_ & _ & Hl & _).
        simpl. rewrite upd_ne; [split; [done | unfold cseq; simpl; lia] |]. intros ->. done.
    - intros t' Ht'. simpl. rewrite upd_ne by lia. by apply Hidle.
    - intros t1 t2 a b Hne H1 H2. simpl in H1, H2.
      assert (∀ t' a, rel_of (upd (pc s) t p t') = Some a → rel_of (pc s t') = Some a) as Hup.
      { intros t' a' H. destruct (decide (t' = t)) as [-> | Htne].
        - rewrite upd_eq, (owns_rel_of p r Hp) in H. done.
        - by rewrite upd_ne in H. }
      apply Hup in H1, H2. by apply (Hrl t1 t2).
  Qed.

  Lemma chain_ok_snoc ch l :
    chain_ok ch → 0 < length ch → length (l_obj l) = W → l_rep l < NR →
    batch_ok (obj_at ch (pred (length ch))) (l_batch l) (l_ws l) (l_obj l) → chain_ok (ch ++ [l]).
  Proof.
    intros (H0 & Hl & Hs) Hlen Hw Hr Hb. split_and!.
    - destruct H0 as (l0 & H0 & ?). exists l0. rewrite lookup_app_l; [done | lia].
    - intros k l' Hk. destruct (decide (k < length ch)).
      + rewrite lookup_app_l in Hk by done. by apply (Hl k).
      + rewrite lookup_app_r in Hk by lia. destruct (k - length ch) as [| ?]; simpl in Hk; [| done].
        by injection Hk as <-.
    - intros k a b Ha Hb'. destruct (decide (S k < length ch)).
      + rewrite lookup_app_l in Ha by lia. rewrite lookup_app_l in Hb' by done. by apply (Hs k).
      + apply lookup_lt_Some in Hb' as Hlt. rewrite app_length in Hlt. simpl in Hlt.
        assert (S k = length ch) as Hk by lia.
        rewrite lookup_app_l in Ha by lia. rewrite lookup_app_r in Hb' by lia.
        rewrite Hk, Nat.sub_diag in Hb'. injection Hb' as <-.
        unfold obj_at in Hb. replace (pred (length ch)) with k in Hb by lia. by rewrite Ha in Hb.
  Qed.

  Lemma chain_ok_crash ch k l :
    chain_ok ch → ch !! k = Some l → chain_ok (take k ch ++ [fresh_link l]).
  Proof.
    intros (H0 & Hl & Hs) Hk. apply lookup_lt_Some in Hk as Hlt.
    assert (length (take k ch) = k) as Htk by (rewrite take_length; lia).
    assert (∀ j, (take k ch ++ [fresh_link l]) !! j =
              if decide (j = k) then Some (fresh_link l) else if decide (j < k) then ch !! j else None) as Hlk.
    { intros j. destruct (decide (j < k)) as [Hj | Hj].
      - rewrite decide_False by lia. rewrite lookup_app_l by lia. by rewrite lookup_take.
      - rewrite lookup_app_r by lia. rewrite Htk. destruct (decide (j = k)) as [-> | Hne].
        + by rewrite Nat.sub_diag.
        + destruct (j - k) as [| m] eqn:E; [lia |]. simpl. by destruct m. }
    split_and!.
    - destruct H0 as (l0 & H0 & ? & ?). rewrite Hlk. destruct (decide (0 = k)) as [<- | Hne].
      + rewrite Hk in H0. injection H0 as ->. by exists (fresh_link l0).
      + rewrite decide_True by lia. by exists l0.
    - intros j l' Hj. rewrite Hlk in Hj. case_decide; [injection Hj as <-; by apply (Hl k l) |].
      case_decide; [by apply (Hl j) | done].
    - intros j a b Ha Hb. rewrite Hlk in Ha, Hb.
      destruct (decide (j = k)) as [-> | H1]; [by rewrite !decide_False in Hb by lia |].
      destruct (decide (j < k)) as [Hjk | Hjk]; [| done].
      destruct (decide (S j = k)) as [H2 | H2].
      + injection Hb as <-. subst k. simpl. by apply (Hs j).
      + rewrite decide_True in Hb by lia. by apply (Hs j).
  Qed.

  Lemma apply_ws_copy σ f : length σ = W → apply_ws (map (λ w, (w, f w)) (seq 0 W)) σ = map f (seq 0 W).
  Proof.
    intros Hl. apply list_eq. intros w.
    assert (∀ n σ', length σ' = W → n ≤ W →
      apply_ws (map (λ w, (w, f w)) (seq 0 n)) σ' !! w = if decide (w < n) then Some (f w) else σ' !! w) as Hgen.
    { induction n as [| n IH]; intros σ' Hl' Hn; [by rewrite decide_False by lia |].
      rewrite seq_S, map_app, apply_ws_app. simpl. destruct (decide (w = n)) as [-> | Hne].
      - rewrite list_lookup_insert by (rewrite apply_ws_length; lia). by rewrite decide_True by lia.
      - rewrite list_lookup_insert_ne by done. rewrite IH by (done || lia).
        case_decide; case_decide; try done; lia. }
    rewrite Hgen by done. rewrite list_lookup_fmap. case_decide.
    - by rewrite lookup_seq_lt.
    - rewrite lookup_seq_ge by lia. apply lookup_ge_None_2. lia.
  Qed.

  Lemma rstores_clean_notin p r ws w :
    pm_ok p → w < W → w ∉ map fst ws → clean p (rloc r w) → clean (rstores p r ws) (rloc r w).
  Proof.
    intros Hp Hw Hn Hc. revert p Hp Hc. induction ws as [| [w' v] ws IH]; intros p Hp Hc; [done |].
    rewrite rstores_cons. simpl in Hn. apply not_elem_of_cons in Hn as [Hne Hn].
    apply IH; [done | unfold rstore; simpl; case_decide; [by apply pm_ok_write | done] |].
    unfold rstore; simpl. case_decide as Hw'; [| done].
    apply clean_write_other; [done | | done]. simpl. rewrite elem_of_list_singleton.
    intros Heq. apply rloc_inj in Heq as [_ ?]; [| done | done]. congruence.
  Qed.

  (** The dirty words after stores to [r]: the stored ones join them. *)
  Lemma dirty_after_stores p r ws (d0 d : list nat) w :
    pm_ok p → w < W → (w ∈ d0 ∨ clean p (rloc r w)) → (∀ w, w ∈ d0 → w ∈ d) →
    (∀ w, w ∈ map fst ws → w ∈ d) → w ∈ d ∨ clean (rstores p r ws) (rloc r w).
  Proof.
    intros Hp Hw [Hd | Hc] Hd0 Hws; [left; by apply Hd0 |].
    destruct (decide (w ∈ map fst ws)) as [Hin | Hnin]; [left; by apply Hws | right].
    by apply rstores_clean_notin.
  Qed.

  (** A thread releases the replica it held between its attempts. *)
  Lemma inv1_release_own s t own p :
    inv1 s → t < N → owns (pc s t) = own → own_ok s own → owns p = None → rel_of p = None →
    tinv1 (set_pc (release s own) t p) p → inv1 (set_pc (release s own) t p).
  Proof.
    intros Hinv Ht Hown Hok Hp Hrp Htp. destruct own as [r |].
    2: { apply (inv1_gen s _ t p); try done; simpl.
         - by apply fenced_refl, Hinv.
         - apply Hinv. - apply Hinv. - by rewrite Hp. - by left. }
    destruct Hok as [Hr Hok]. pose proof (i_owns s Hinv t r Ht Hown) as Hlr.
    assert (∀ t' r', t' ≠ t → owns (pc s t') = Some r' → r' ≠ r) as Hother.
    { intros t' r' Hne Ho ->. destruct (decide (t' < N)) as [Ht' | Ht'].
      - pose proof (i_owns s Hinv t' r Ht' Ho) as Hl. congruence.
      - rewrite (i_idle s Hinv t') in Ho by lia. done. }
    pose proof Hinv as [Hpm Hc Hcl Hcc Hwm0 Hdn Hcand Hheld Hfree Hdirty Howned Howns Hthr Hidle Hrl].
    split; simpl; try done.
    - intros k Hk. destruct (Hcand k Hk) as (Hl & ? & ?). rewrite upd_ne; [done |]. intros Heq.
      rewrite Heq in Hl. congruence.
    - intros r' Hr' Hl. destruct (decide (r' = r)) as [-> | Hne]; [by rewrite upd_eq in Hl |].
      rewrite upd_ne in Hl by done. by apply Hheld.
    - intros r' h Hr' Hl Hh. destruct (decide (r' = r)) as [-> | Hne]; [by apply Hok |].
      rewrite upd_ne in Hl by done. by apply Hfree.
    - intros r' t' Hl. destruct (decide (r' = r)) as [-> | Hne]; [by rewrite upd_eq in Hl |].
      rewrite upd_ne in Hl by done. destruct (Howned r' t' Hl) as [Ht' Ho]. split; [done |].
      destruct (decide (t' = t)) as [-> | Htne]; [congruence |]. by rewrite upd_ne.
    - intros t' r' Ht' Ho. destruct (decide (t' = t)) as [-> | Htne]; [by rewrite upd_eq, Hp in Ho |].
      rewrite upd_ne in Ho by done. rewrite upd_ne by (by apply (Hother t')). by apply Howns.
    - intros t' Ht'. destruct (decide (t' = t)) as [-> | Htne]; [by rewrite upd_eq |].
      rewrite upd_ne by done.
      apply (tinv1_transfer s _ []); [by apply Hthr | by apply inv1_len | by rewrite app_nil_r | done | | done].
      intros s1 c0 Hq. pose proof (tinv1_rel s _ s1 c0 (Hthr t' Ht') Hq) as (_ & _ & Hl & _).
      simpl. rewrite upd_ne; [split; [done | unfold cseq; simpl; lia] |]. intros ->. congruence.
    - intros t' Ht'. rewrite upd_ne by lia. by apply Hidle.
    - intros t1 t2 a b Hne H1 H2.
      assert (∀ t' a, rel_of (upd (pc s) t p t') = Some a → rel_of (pc s t') = Some a) as Hup.
      { intros t' a' H. destruct (decide (t' = t)) as [-> | Htne]; [by rewrite upd_eq, Hrp in H |].
        by rewrite upd_ne in H. }
      apply Hup in H1, H2. by apply (Hrl t1 t2).
  Qed.

  (** [curComb]'s line after the CAS writes it. *)
  Lemma cc_write_hist p k r L :
    pm_ok p → line_hist (p_mem (p_write p LC (cc_write k r))) L =
      if decide (LC = L) then line_hist (p_mem p) LC ++ [cc_write k r] else line_hist (p_mem p) L.
  Proof.
    intros (_ & Hn & _). unfold p_write; simpl. rewrite hist_write.
    destruct (decide (LC = L)) as [<- | Hne].
    - rewrite decide_True; [done |]. split; [done |]. rewrite Hn. apply line_lt.
    - rewrite decide_False; [done |]. intros [? _]; done.
  Qed.

  Lemma cc_val_at_write p k r x j :
    pm_ok p → line x = LC → j ≤ length (line_hist (p_mem p) LC) →
    val_at (p_write p LC (cc_write k r)) x j = val_at p x j.
  Proof.
    intros Hp Hx Hj. unfold val_at. rewrite Hx, cc_write_hist, decide_True by done.
    by rewrite take_app_le.
  Qed.

  Lemma cc_val_at_write_top p k r :
    pm_ok p →
    val_at (p_write p LC (cc_write k r)) 0 (S (length (line_hist (p_mem p) LC))) = k ∧
    val_at (p_write p LC (cc_write k r)) 1 (S (length (line_hist (p_mem p) LC))) = r.
  Proof.
    intros Hp. unfold val_at. rewrite line_cc. fold LC. rewrite cc_write_hist, decide_True by done.
    rewrite take_ge by (rewrite app_length; simpl; lia).
    by rewrite seq_val_snoc_cc0, seq_val_snoc_cc1.
  Qed.

  Lemma off_cc_write k r x : 2 ≤ x → x ∉ (cc_write k r).*1.
  Proof. intros Hx. simpl. rewrite !elem_of_cons, elem_of_nil. lia. Qed.

  Lemma rloc_ge2 r w : 2 ≤ rloc r w.
  Proof. unfold rloc. lia. Qed.

  (** L26–L30: the CAS installs the replica the thread simulated on. *)
  Lemma inv1_cassucc s t i u r s0 c0 ap rs bat ws lg :
    F1 = true → inv1 s → t < N → pc s t = TSim i u r s0 c0 ap rs N bat ws lg → ccv (mem s) = (s0, c0) →
    inv1 (RState (p_write (cas_flush s t r) LC (cc_write (S s0) r)) (req s)
                  (ch s ++ [Link (content (mem s) r) ap rs bat ws r])
                  (upd (rhead s) r (Some (S s0))) (upd (rlock s) r Held) (upd (dirty s) r [])
                  (ring s) (wm s) (upd (pc s) t (TPersist i (S s0) c0 (rs t)))
                  (xh s) (nid s) (pl s) (ep s) (done s)).
  Proof.
    intros HF1 Hinv Ht Hpc Hcc. rewrite (inv1_ccv s Hinv) in Hcc. injection Hcc as Hs0 Hc0.
    rewrite Hs0 in Hc0. subst c0.
    pose proof (i_thr s Hinv t Ht) as Htt. rewrite Hpc in Htt. simpl in Htt.
    destruct Htt as (Hr & _ & Hhd & Hb & _).
    pose proof (i_owns s Hinv t r Ht ltac:(by rewrite Hpc)) as Hlr.
    set (p1 := cas_flush s t r). set (m' := p_write p1 LC (cc_write (S s0) r)).
    set (nl := Link (content (mem s) r) ap rs bat ws r).
    assert (pm_ok (mem s)) as Hpm by apply Hinv.
    assert (fenced (mem s) p1) as Hf1 by (apply fenced_flush, Hpm).
    assert (pm_ok p1) as Hp1 by apply Hf1.
    assert (pm_ok m') as Hm' by (by apply pm_ok_write).
    assert (∀ x v, 2 ≤ x → stable (mem s) x v → stable m' x v) as Hst.
    { intros x v Hx Hs. apply stable_write_other; [done | by apply off_cc_write |]. by apply (fenced_stable (mem s)). }
    assert (∀ x, 2 ≤ x → p_load line m' x = p_load line (mem s) x) as Hld.
    { intros x Hx. unfold m'. rewrite p_load_write_other by (by apply off_cc_write). by apply fenced_load. }
    assert (∀ r', content m' r' = content (mem s) r') as Hct.
    { intros r'. unfold m'. rewrite content_write_other.
      - by apply fenced_content.
      - intros x. simpl. rewrite !elem_of_cons, elem_of_nil. lia. }
    assert (∀ x, 2 ≤ x → clean (mem s) x → clean m' x) as Hcln.
    { intros x Hx Hc. unfold clean. rewrite Hld by done. by apply Hst. }
    assert (mark_cc s ≤ mark (p_mem m') LC) as Hm.
    { unfold m', mark_cc. rewrite p_write_mark. apply Hf1. }
    assert (length (ch s) = S s0) as Hlen by (pose proof (inv1_len s Hinv); unfold cseq in Hs0; lia).
    assert (∀ k, k ≤ s0 → obj_at (ch s ++ [nl]) k = obj_at (ch s) k) as Hobj.
    { intros k Hk. apply obj_at_app. lia. }
    assert (∀ k, k ≤ s0 → rep_at (ch s ++ [nl]) k = rep_at (ch s) k) as Hrep.
    { intros k Hk. apply rep_at_app. lia. }
    assert ((ch s ++ [nl]) !! S s0 = Some nl) as Hnl.
    { rewrite lookup_app_r by lia. by rewrite Hlen, Nat.sub_diag. }
    assert (obj_at (ch s ++ [nl]) (S s0) = content (mem s) r) as Hobjn by (unfold obj_at; by rewrite Hnl).
    assert (rep_at (ch s ++ [nl]) (S s0) = r) as Hrepn by (unfold rep_at; by rewrite Hnl).
    assert (∀ w, w < W → clean m' (rloc r w)) as Hrclean.
    { intros w Hw. apply clean_write_other; [done | apply off_cc_write, rloc_ge2 |].
      destruct (i_dirty s Hinv r w Hr Hw) as [Hd | Hc].
      - unfold p1, cas_flush. rewrite HF1, app_nil_r. apply clean_flushed; [done |].
        by apply elem_of_list_fmap_1.
      - by apply (fenced_clean (mem s)). }
    assert (stable_rep m' r (content (mem s) r)) as Hrst.
    { intros w v Hw. apply lookup_lt_Some in Hw as Hlt. rewrite content_length in Hlt.
      rewrite content_lookup, decide_True in Hw by done. injection Hw as <-.
      rewrite <- (Hld (rloc r w)) by apply rloc_ge2. by apply Hrclean. }
    assert (∀ k, rlock s (rep_at (ch s) k) = Held → rep_at (ch s) k ≠ r) as Hheldne.
    { intros k Hk Heq. rewrite Heq, Hlr in Hk. done. }
    assert (∀ t' r', t' ≠ t → owns (pc s t') = Some r' → r' ≠ r) as Hother.
    { intros t' r' Hne Ho ->. destruct (decide (t' < N)) as [Ht' | Ht'].
      - pose proof (i_owns s Hinv t' r Ht' Ho) as Hl. congruence.
      - rewrite (i_idle s Hinv t') in Ho by lia. done. }
    assert (∀ r' σ, 2 ≤ 2 → stable_rep (mem s) r' σ → stable_rep m' r' σ) as Hsr.
    { intros r' σ _ Hs w v Hw. apply Hst; [apply rloc_ge2 | by apply Hs]. }
    pose proof Hinv as [_ Hc Hcl Hcc Hwm0 Hdn Hcand Hheld Hfree Hdirty Howned Howns Hthr Hidle Hrl].
    assert (mark_cc s ≤ cseq s) as Hmk by (by apply inv1_mark).
    split; unfold cseq, mark_cc; cbn [mem req ch rhead rlock dirty ring wm pc xh nid pl ep done];
      rewrite ?app_length; cbn [length]; replace (pred (length (ch s) + 1)) with (S s0) by lia.
    - done.
    - apply chain_ok_snoc; [done | lia | apply content_length | done |]. simpl.
      replace (pred (length (ch s))) with s0 by lia. done.
    - unfold m'. rewrite cc_write_hist, decide_True by done. rewrite app_length. simpl.
      destruct Hf1 as (_ & Hh & _). rewrite Hh. unfold cseq in Hcl, Hs0. unfold LC in *. lia.
    - assert (length (line_hist (p_mem p1) LC) = s0) as Hl1.
      { destruct Hf1 as (_ & Hh & _). rewrite Hh, Hcl. done. }
      intros k Hk. destruct (decide (k = S s0)) as [-> | Hne].
      + rewrite Hrepn. pose proof (cc_val_at_write_top p1 (S s0) r Hp1) as Htop.
        rewrite Hl1 in Htop. exact Htop.
      + rewrite Hrep by lia. destruct (Hcc k) as [H0 H1]; [rewrite Hs0; lia |].
        unfold m'. rewrite !cc_val_at_write by (done || lia || apply line_cc).
        rewrite !(fenced_val_at (mem s) p1) by done. by split.
    - lia.
    - intros i' k Hik. etrans; [by apply (Hdn i') | done].
    - intros k Hk. destruct (decide (k = S s0)) as [-> | Hne].
      + rewrite Hrepn, !upd_eq, Hobjn. done.
      + rewrite Hrep, Hobj by lia. destruct (Hcand k) as (Hl & Hh & Hs); [unfold mark_cc in *; rewrite Hs0; lia |].
        pose proof (Hheldne k Hl) as Hne'. rewrite !upd_ne by done. split_and!; [done | done |]. by apply Hsr.
    - intros r' Hr' Hl. destruct (decide (r' = r)) as [-> | Hne].
      + exists (S s0). rewrite upd_eq, Hobjn. done.
      + rewrite upd_ne in Hl by done. destruct (Hheld r' Hr' Hl) as (k & Hk & Hh & Hs).
        exists k. rewrite upd_ne by done. rewrite Hobj by lia.
        split_and!; [lia | done | by apply Hsr].
    - intros r' h Hr' Hl Hh. destruct (decide (r' = r)) as [-> | Hne]; [by rewrite upd_eq in Hl |].
      rewrite upd_ne in Hl by done. rewrite upd_ne in Hh by done. destruct (Hfree r' h Hr' Hl Hh) as [Hle Hct'].
      rewrite Hs0 in Hle. rewrite Hct, Hobj by lia. split; [lia | done].
    - intros r' w Hr' Hw. destruct (decide (r' = r)) as [-> | Hne]; [right; by apply Hrclean |].
      rewrite upd_ne by done. destruct (Hdirty r' w Hr' Hw) as [? | Hcc']; [by left | right].
      apply Hcln; [apply rloc_ge2 | done].
    - intros r' t' Hl. destruct (decide (r' = r)) as [-> | Hne]; [by rewrite upd_eq in Hl |].
      rewrite upd_ne in Hl by done. destruct (Howned r' t' Hl) as [Ht' Ho]. split; [done |].
      destruct (decide (t' = t)) as [-> | Htne]; [rewrite Hpc in Ho; simpl in Ho; congruence |].
      by rewrite upd_ne.
    - intros t' r' Ht' Ho. destruct (decide (t' = t)) as [-> | Htne]; [by rewrite upd_eq in Ho |].
      rewrite upd_ne in Ho by done. rewrite upd_ne by (by apply (Hother t')). by apply Howns.
    - intros t' Ht'. destruct (decide (t' = t)) as [-> | Htne].
      + rewrite upd_eq. simpl. unfold rel_ok, cseq. simpl. rewrite app_length. simpl.
        replace (pred (length (ch s) + 1)) with (S s0) by lia.
        assert (rep_at (ch s) s0 ≠ r) as Hc0r.
        { apply Hheldne. apply (Hcand s0). unfold mark_cc in *. lia. }
        split; [lia |]. rewrite Hrep by lia. split; [done |]. split.
        * rewrite upd_ne by done. apply (Hcand s0). unfold mark_cc in *. lia.
        * intros k Hk. assert (k = S s0) as -> by lia. rewrite Hrepn. done.
      + rewrite upd_ne by done.
        apply (tinv1_transfer s _ [nl]); [by apply Hthr | by apply inv1_len | done | | | simpl; done].
        * intros r' Ho. pose proof (Hother t' r' Htne Ho) as Hne. simpl. rewrite Hct. by rewrite upd_ne.
        * intros s1 c0 Hq. pose proof (tinv1_rel s _ s1 c0 (Hthr t' Ht') Hq) as (_ & _ & Hl & _).
          simpl. rewrite upd_ne; [| intros ->; congruence]. split; [done |].
          intros k Hk. unfold cseq in Hk. simpl in Hk. rewrite app_length in Hk. simpl in Hk.
          assert (k = S s0) as -> by (unfold cseq in *; lia). rewrite Hrepn. intros ->. congruence.
    - intros t' Ht'. rewrite upd_ne by lia. by apply Hidle.
    - intros t1 t2 a b Hne H1 H2.
      assert (∀ t', t' ≠ t → ∀ a, rel_of (pc s t') = Some a → a.1 ≤ s0) as Hle.
      { intros t' Htne a' Ha'. destruct (decide (t' < N)) as [Ht' | Ht'].
        - destruct a' as [s1 c0']. pose proof (tinv1_rel s _ s1 c0' (Hthr t' Ht') Ha') as (? & _). simpl.
          lia.
        - rewrite (i_idle s Hinv t') in Ha' by lia. done. }
      destruct (decide (t1 = t)) as [-> | H1t]; destruct (decide (t2 = t)) as [-> | H2t]; [done | | |].
      + rewrite upd_eq in H1. injection H1 as <-. rewrite upd_ne in H2 by done. simpl.
        pose proof (Hle t2 H2t b H2). lia.
      + rewrite upd_eq in H2. injection H2 as <-. rewrite upd_ne in H1 by done. simpl.
        pose proof (Hle t1 H1t a H1). lia.
      + rewrite upd_ne in H1, H2 by done. by apply (Hrl t1 t2).
  Qed.

  (** L31 after the persistence: the superseded replica is released once
      no crash can recover to it. *)
  Lemma inv1_release s t i s1 c0 v rg :
    inv1 s → t < N → pc s t = TRelease i s1 c0 v →
    inv1 (ret (RState (mem s) (req s) (ch s) (rhead s) (upd (rlock s) c0 Free) (dirty s) rg (wm s) (pc s)
                 (xh s) (nid s) (pl s) (ep s) (done s)) t i s1 v).
  Proof.
    intros Hinv Ht Hpc. pose proof (i_thr s Hinv t Ht) as Htt. rewrite Hpc in Htt.
    destruct Htt as [(Hs1 & Hc0 & Hl0 & Hk0) Hsm].
    pose proof Hinv as [Hpm Hc Hcl Hcc Hwm0 Hdn Hcand Hheld Hfree Hdirty Howned Howns Hthr Hidle Hrl].
    assert (∀ t' s2 c2, t' ≠ t → rel_of (pc s t') = Some (s2, c2) → c2 ≠ c0) as Hother.
    { intros t' s2 c2 Hne H2 ->. destruct (decide (t' < N)) as [Ht' | Ht'].
      2: { rewrite (Hidle t') in H2 by lia. done. }
      pose proof (Hrl t t' (s1, c0) (s2, c0) ltac:(done) ltac:(by rewrite Hpc) H2) as Hne'. simpl in Hne'.
      pose proof (tinv1_rel s _ s2 c0 (Hthr t' Ht') H2) as (Hs2 & Hc2 & _ & Hk2).
      destruct (decide (s1 < s2)) as [Hlt | Hge].
      - apply (Hk0 (pred s2)); [lia | done].
      - apply (Hk2 (pred s1)); [lia | done]. }
    assert (rep_at (ch s) (pred s1) = c0) as Hrep0 by done.
    assert (c0 < NR) as Hc0r by (rewrite <- Hrep0; by apply chain_rep_lt).
    unfold mark_cc, cseq in *.
    split; unfold mark_cc, cseq; cbn [ret mem req ch rhead rlock dirty ring wm pc xh nid pl ep done]; try done.
    - intros i' k Hik. apply elem_of_app in Hik as [Hik | Hik]; [by apply (Hdn i') |].
      apply elem_of_list_singleton in Hik. injection Hik as <- <-. done.
    - intros k Hk. destruct (Hcand k Hk) as (Hl & ? & ?). rewrite upd_ne; [done |].
      intros Heq. apply (Hk0 k); [lia | done].
    - intros r Hr Hl. destruct (decide (r = c0)) as [-> | Hne]; [by rewrite upd_eq in Hl |].
      rewrite upd_ne in Hl by done. by apply Hheld.
    - intros r h Hr Hl Hh. destruct (decide (r = c0)) as [-> | Hne].
      + destruct (Hheld c0 Hr Hl0) as (k & Hk & Hh' & Hs). rewrite Hh in Hh'. injection Hh' as <-.
        split; [done |]. apply stable_content; [done | by apply chain_obj_length, Hinv | done].
      + rewrite upd_ne in Hl by done. by apply Hfree.
    - intros r t' Hl. destruct (decide (r = c0)) as [-> | Hne]; [by rewrite upd_eq in Hl |].
      rewrite upd_ne in Hl by done. destruct (Howned r t' Hl) as [Ht' Ho]. split; [done |].
      destruct (decide (t' = t)) as [-> | Htne]; [by rewrite Hpc in Ho | by rewrite upd_ne].
    - intros t' r Ht' Ho. destruct (decide (t' = t)) as [-> | Htne]; [by rewrite upd_eq in Ho |].
      rewrite upd_ne in Ho by done. pose proof (Howns t' r Ht' Ho) as Hl.
      rewrite upd_ne; [done |]. intros ->. congruence.
    - intros t' Ht'. destruct (decide (t' = t)) as [-> | Htne]; [by rewrite upd_eq |].
      rewrite upd_ne by done.
      apply (tinv1_transfer s _ []); [by apply Hthr | by apply inv1_len | by rewrite app_nil_r | done | | done].
      intros s2 c2 Hq. pose proof (tinv1_rel s _ s2 c2 (Hthr t' Ht') Hq) as (_ & _ & Hl & _).
      cbn [ret rlock]. rewrite upd_ne by (by apply (Hother t' s2)). split; [done |].
      unfold cseq; cbn [ret ch]. lia.
    - intros t' Ht'. rewrite upd_ne by lia. by apply Hidle.
    - intros t1 t2 a b Hne H1 H2.
      destruct (decide (t1 = t)) as [-> | H1t]; [by rewrite upd_eq in H1 |].
      destruct (decide (t2 = t)) as [-> | H2t]; [by rewrite upd_eq in H2 |].
      rewrite upd_ne in H1, H2 by done. by apply (Hrl t1 t2).
  Qed.

  (** What a crash keeps of [curComb]: a transition from the mark on. *)
  Lemma inv1_image s keep :
    inv1 s → p_crash_ok (mem s) keep →
    p_image line (mem s) keep 0 = keep LC ∧ p_image line (mem s) keep 1 = rep_at (ch s) (keep LC) ∧
    mark_cc s ≤ keep LC ≤ cseq s.
  Proof.
    intros Hinv Hok. destruct (i_pm s Hinv) as (_ & Hn & _).
    pose proof (Hok LC ltac:(rewrite Hn; apply line_lt)) as Hk. rewrite (i_cclen s Hinv) in Hk.
    destruct (i_cc s Hinv (keep LC)) as [H0 H1]; [lia |].
    unfold p_image, persisted. rewrite line_cc. fold LC. split_and!; [done | | | lia].
    - unfold val_at in H1. rewrite line_cc in H1. done.
    - unfold mark_cc. lia.
  Qed.

  (** A crash and null recovery. *)
  Lemma inv1_crash s keep : inv1 s → p_crash_ok (mem s) keep → inv1 (crash_state s keep).
  Proof.
    intros Hinv Hok. destruct (inv1_image s keep Hinv Hok) as (Hk & Hr & Hmk).
    set (k := keep LC). fold k in Hk, Hr, Hmk.
    pose proof Hinv as [Hpm Hc Hcl Hcc Hwm0 Hdn Hcand Hheld Hfree Hdirty Howned Howns Hthr Hidle Hrl].
    destruct (lookup_lt_is_Some_2 (ch s) k) as [l Hl]; [pose proof (inv1_cseq s Hinv); lia |].
    pose proof (lookup_lt_Some _ _ _ Hl) as Hkl.
    set (ch' := take k (ch s) ++ [fresh_link l]).
    assert (length ch' = S k) as Hlen'.
    { unfold ch'. rewrite app_length, take_length. apply lookup_lt_Some in Hl. simpl. lia. }
    assert (∀ j, j < k → ch' !! j = ch s !! j) as Hlk.
    { intros j Hj. unfold ch'. rewrite lookup_app_l by (rewrite take_length; lia). by rewrite lookup_take. }
    assert (ch' !! k = Some (fresh_link l)) as Hlk'.
    { unfold ch'. rewrite lookup_app_r by (rewrite take_length; lia).
      rewrite take_length, Nat.min_l, Nat.sub_diag by (apply lookup_lt_Some in Hl; lia). done. }
    assert (∀ j, j ≤ k → obj_at ch' j = obj_at (ch s) j ∧ rep_at ch' j = rep_at (ch s) j) as Hat.
    { intros j Hj. unfold obj_at, rep_at. destruct (decide (j = k)) as [-> | Hne].
      - by rewrite Hlk', Hl.
      - rewrite Hlk by lia. done. }
    assert (mark (p_mem (p_after (mem s) keep)) LC = k) as Hmk'.
    { apply after_mark; [done | apply line_lt]. }
    assert (pm_ok (p_after (mem s) keep)) as Hpm' by (by apply pm_ok_after).
    destruct (Hcand k) as (Hlr & Hhr & Hsr); [done |].
    unfold crash_state. rewrite Hk, Hr. fold k.
    assert (take k (ch s) ++ from_option (λ l, [fresh_link l]) [] (ch s !! k) = ch') as -> by (by rewrite Hl).
    assert (∀ x, val_at (p_after (mem s) keep) x (llen (p_after (mem s) keep) x) = p_image line (mem s) keep x)
      as Hld.
    { intros x. rewrite <- p_load_val_at. apply after_load. }
    split; unfold cseq, mark_cc; cbn [mem req ch rhead rlock dirty ring wm pc xh nid pl ep done];
      rewrite ?Hlen', ?Hmk'; simpl pred.
    - done.
    - by apply (chain_ok_crash (ch s) k l).
    - rewrite after_hist, take_length. destruct (i_pm s Hinv) as (_ & Hn & _).
      pose proof (Hok LC ltac:(rewrite Hn; apply line_lt)) as Hk2. fold k in Hk2. lia.
    - intros j Hj. destruct (Hat j Hj) as [_ ->]. rewrite !after_val_at; [by apply Hcc; lia | |].
      + rewrite line_cc. fold LC. done.
      + done.
    - done.
    - intros i j Hij. pose proof (Hdn i j Hij). unfold mark_cc in *. lia.
    - intros j Hj. assert (j = k) as -> by lia. destruct (Hat k (le_n _)) as [-> ->].
      destruct (decide (rep_at (ch s) k = rep_at (ch s) k)) as [_ | Hne]; [| done].
      split_and!; [done | done |].
      intros w v Hw. pose proof (clean_after (mem s) keep (rloc (rep_at (ch s) k) w) Hpm Hok) as Hcl'.
      unfold clean in Hcl'. rewrite after_load in Hcl'.
      assert (p_image line (mem s) keep (rloc (rep_at (ch s) k) w) = v) as <-; [| done].
      unfold p_image, persisted. apply (Hsr w v Hw). destruct (i_pm s Hinv) as (_ & Hn & _).
      pose proof (Hok (line (rloc (rep_at (ch s) k) w)) ltac:(rewrite Hn; apply line_lt)) as Hkw.
      unfold llen. lia.
    - intros r Hr' Hl'. case_decide as He; [subst r | done]. exists k.
      destruct (Hat k (le_n _)) as [-> _].
      destruct (decide (rep_at (ch s) k = rep_at (ch s) k)) as [_ | Hne]; [| done].
      split_and!; [done | done |].
      intros w v Hw. pose proof (clean_after (mem s) keep (rloc (rep_at (ch s) k) w) Hpm Hok) as Hcl'.
      unfold clean in Hcl'. rewrite after_load in Hcl'.
      assert (p_image line (mem s) keep (rloc (rep_at (ch s) k) w) = v) as <-; [| done].
      unfold p_image, persisted. apply (Hsr w v Hw). destruct (i_pm s Hinv) as (_ & Hn & _).
      pose proof (Hok (line (rloc (rep_at (ch s) k) w)) ltac:(rewrite Hn; apply line_lt)) as Hkw.
      unfold llen. lia.
    - intros r h Hr' Hl' Hh. case_decide; [done | done].
    - intros r w _ _. right. by apply clean_after.
    - intros r t Hl'. case_decide; done.
    - done.
    - done.
    - done.
    - done.
  Qed.

  Lemma inv1_init : inv1 init_state.
  Proof.
    assert (pm_ok (pmem_empty NL)) as Hpm.
    { split_and!; [apply pmem_empty_wf | simpl; by rewrite replicate_length | done]. }
    assert (∀ L, line_hist (p_mem (pmem_empty NL)) L = []) as Hh.
    { intros L. unfold line_hist; simpl. destruct (decide (L < NL)).
      - by rewrite lookup_replicate_2.
      - by rewrite (proj1 (lookup_replicate_None _ _ _)) by lia. }
    assert (∀ x, clean (pmem_empty NL) x) as Hcl.
    { intros x k Hk. unfold llen in Hk. rewrite Hh in Hk. simpl in Hk.
      unfold val_at, p_load, mem_visible. rewrite Hh. assert (k = 0) as -> by lia. done. }
    split; unfold cseq, mark_cc; cbn [init_state mem req ch rhead rlock dirty ring wm pc xh nid pl ep done];
      simpl length; simpl pred.
    - done.
    - split_and!.
      + by exists link0.
      + intros k l Hk. destruct k as [| [|]]; simpl in Hk; try done. injection Hk as <-.
        simpl. unfold init_obj. by rewrite replicate_length.
      + intros k a b _ Hb. destruct k; simpl in Hb; [done | by destruct k].
    - by rewrite Hh.
    - intros k Hk. assert (k = 0) as -> by lia. unfold val_at. rewrite !Hh. done.
    - lia.
    - intros i k Hik. by apply elem_of_nil in Hik.
    - intros k Hk. assert (k = 0) as -> by lia. unfold rep_at, obj_at; simpl.
      split_and!; [done | done |]. intros w v Hw. unfold init_obj in Hw.
      apply lookup_replicate in Hw as [-> _]. intros j Hj. unfold llen in Hj. rewrite Hh in Hj. simpl in Hj.
      assert (j = 0) as -> by lia. unfold val_at. rewrite Hh. done.
    - intros r Hr Hl. case_decide as H0; [subst r | done]. exists 0. unfold obj_at; simpl.
      split_and!; [done | done |]. intros w v Hw. unfold init_obj in Hw.
      apply lookup_replicate in Hw as [-> _]. intros j Hj. unfold llen in Hj. rewrite Hh in Hj. simpl in Hj.
      assert (j = 0) as -> by lia. unfold val_at. rewrite Hh. done.
    - intros r h _ Hl Hh'. case_decide; done.
    - intros r w _ _. right. apply Hcl.
    - intros r t Hl. case_decide; done.
    - done.
    - done.
    - done.
    - done.
  Qed.

  Lemma inv1_busy s t : inv1 s → pc s t ≠ TIdle → t < N.
  Proof. intros Hinv Hp. destruct (decide (t < N)) as [| Ht]; [done |]. by rewrite (i_idle s Hinv t) in Hp by lia. Qed.

  Lemma inv1_sync_mark s t : inv1 s → cseq s ≤ mark (p_mem (p_sync (mem s) t)) LC.
  Proof.
    intros Hinv. pose proof (flush_covers (mem s) t [0] 0 (i_pm s Hinv) ltac:(by left)) as H.
    unfold llen in H. change (line 0) with LC in H. by rewrite (i_cclen s Hinv) in H.
  Qed.

  Lemma own_ok_of s own : (∀ r, own = Some r → r < NR ∧ ∀ h, rhead s r = Some h → h ≤ cseq s ∧ content (mem s) r = obj_at (ch s) h) → own_ok s own.
  Proof. destruct own as [r |]; [| done]. intros H. by apply H. Qed.

  Ltac gen_tac Hinv :=
    try done; try (by apply fenced_refl; apply i_pm); try (by left); try (by apply (i_wm _ Hinv));
    try (by intros ??; apply (i_done _ Hinv)).

  (** Every step keeps the persistence invariant. *)
  Lemma inv1_step s s' : F1 = true → F4 = true → inv1 s → step s s' → inv1 s'.
  Proof.
    intros HF1 HF4 Hinv Hs. pose proof (i_pm s Hinv) as Hpm.
    pose proof (inv1_ccv s Hinv) as Hccv.
    destruct Hs as [s t u Ht Hp | s t q Ht Hp | s t i u own s0 c0 Hp Hcc Hh
      | s t i u own s0 c0 ap rs Hp Hap | s t i u own s0 c0 ap rs r ws0 Hp Hap Hown Hws
      | s t i u own s0 c0 ap rs r gs Hp Hown | s t i u own s0 c0 ap rs Hp | s t i u own Hp
      | s t i u r s0 c0 ap rs j bat ws lg o i' fl Hp Hj Hreq Hap
      | s t i u r s0 c0 ap rs j bat ws lg Hp Hj Hskip
      | s t i u r s0 c0 ap rs j bat ws lg Hp
      | s t i u r s0 c0 ap rs bat ws lg Hp Hcc
      | s t i u r s0 c0 ap rs bat ws lg Hp Hcc
      | s t i s1 c0 v HF Hp | s t i s1 c0 v HF Hp Hr | s t i s1 c0 v HF Hp Hr
      | s t i s1 c0 v Hp
      | s t i o c c0 Hp Hcc Happ | s t i u c c0 Hp Hcc Happ
      | s t i o c v dir HF Hp Hc | s t i o c v dir HF Hp
      | s t i q pub c c0 Hp Hcc Hh | s t i q way Hp | s keep Hok].
    - (* Announce *)
      apply (inv1_gen s _ t (TAnn (nid s) u None)); gen_tac Hinv. by rewrite Hp.
    - (* BeginRead *)
      apply (inv1_gen s _ t (TRead (nid s) q false)); gen_tac Hinv. by rewrite Hp.
    - (* Snapshot *)
      assert (t < N) as Ht by (apply (inv1_busy s t Hinv); by rewrite Hp).
      pose proof (i_thr s Hinv t Ht) as Htt. rewrite Hp in Htt.
      apply (inv1_gen s _ t (THave i u own s0 c0 (app_at (ch s) s0) (res_at (ch s) s0))); gen_tac Hinv.
      + by rewrite Hp.
      + split; [exact Htt |]. rewrite Hccv in Hcc. injection Hcc as <- _. done.
    - (* Applied *)
      assert (t < N) as Ht by (apply (inv1_busy s t Hinv); by rewrite Hp).
      pose proof (i_thr s Hinv t Ht) as Htt. rewrite Hp in Htt. destruct Htt as [Hown Hs0].
      apply (inv1_release_own s t own); try done. by rewrite Hp.
      destruct own; done.
    - (* Prepare *)
      assert (t < N) as Ht by (apply (inv1_busy s t Hinv); by rewrite Hp).
      pose proof (i_thr s Hinv t Ht) as Htt. rewrite Hp in Htt. destruct Htt as [Hok Hs0].
      assert (r < NR) as Hr by (destruct Hown as [-> | (_ & ? & _)]; [apply Hok | done]).
      apply (inv1_write s t r (mem s) ws0); gen_tac Hinv.
      + destruct Hown as [-> | (-> & _ & Hl)]; rewrite Hp; [by left | by right].
      + intros w Hw. apply (dirty_after_stores _ _ _ (dirty s r)); [done | done | by apply (i_dirty s Hinv) | |].
        * intros w' Hw'. apply elem_of_app. by left.
        * intros w' Hw'. apply elem_of_app. by right.
      + cbn [tinv1 set_pc set_rep mem ch rhead]. rewrite upd_eq, content_rstores by done.
        assert (apply_ws ws0 (content (mem s) r) = obj_at (ch s) s0) as ->; [| split_and!; try done; constructor].
        destruct Hws as [[Hcc ->] | (h & Hh & Hhs & ->)].
        * rewrite Hccv in Hcc. injection Hcc as <- <-. rewrite apply_ws_copy by apply content_length.
          change (map (λ w, p_load line (mem s) (rloc (rep_at (ch s) (cseq s)) w)) (seq 0 W))
            with (content (mem s) (rep_at (ch s) (cseq s))).
          destruct (i_cand s Hinv (cseq s)) as (_ & _ & Hst); [pose proof (inv1_mark s Hinv); lia |].
          apply stable_content; [done | by apply chain_obj_length, Hinv | done].
        * assert (content (mem s) r = obj_at (ch s) h) as ->.
          { destruct Hown as [-> | (-> & _ & Hl)].
            - by apply Hok.
            - by apply (i_free s Hinv r h). }
          apply redo_ws_ok; [apply Hinv | done |]. pose proof (inv1_cseq s Hinv). lia.
    - (* PrepFail *)
      assert (t < N) as Ht by (apply (inv1_busy s t Hinv); by rewrite Hp).
      pose proof (i_thr s Hinv t Ht) as Htt. rewrite Hp in Htt. destruct Htt as [Hok Hs0].
      assert (r < NR) as Hr by (destruct Hown as [-> | (_ & ? & _)]; [apply Hok | done]).
      apply (inv1_write s t r (mem s) gs); gen_tac Hinv.
      + destruct Hown as [-> | (-> & _ & Hl)]; rewrite Hp; [by left | by right].
      + intros w Hw. apply (dirty_after_stores _ _ _ (dirty s r)); [done | done | by apply (i_dirty s Hinv) | |].
        * intros w' Hw'. apply elem_of_app. by left.
        * intros w' Hw'. apply elem_of_app. by right.
      + split; [done |]. cbn [set_pc set_rep rhead]. by rewrite upd_eq.
    - (* Abandon *)
      assert (t < N) as Ht by (apply (inv1_busy s t Hinv); by rewrite Hp).
      pose proof (i_thr s Hinv t Ht) as Htt. rewrite Hp in Htt.
      apply (inv1_gen s _ t (TAnn i u own)); gen_tac Hinv. by rewrite Hp. apply Htt.
    - (* GiveUp *)
      assert (t < N) as Ht by (apply (inv1_busy s t Hinv); by rewrite Hp).
      pose proof (i_thr s Hinv t Ht) as Htt. rewrite Hp in Htt.
      apply (inv1_release_own s t own); try done. by rewrite Hp.
    - (* ScanRun *)
      assert (t < N) as Ht by (apply (inv1_busy s t Hinv); by rewrite Hp).
      pose proof (i_thr s Hinv t Ht) as Htt. rewrite Hp in Htt. destruct Htt as (Hr & Hs0 & Hh & Hb & Hu).
      apply (inv1_write s t r (mem s)); gen_tac Hinv.
      + left. by rewrite Hp.
      + intros w Hw. apply (dirty_after_stores _ _ _ (dirty s r)); [done | done | by apply (i_dirty s Hinv) | |].
        * intros w' Hw'. apply elem_of_app. by left.
        * intros w' Hw'. apply elem_of_app. by right.
      + cbn [set_pc set_rep mem ch rhead tinv1]. rewrite upd_eq, content_rstores by done.
        split_and!; try done.
        * by apply (batch_ok_snoc _ _ _ _ (Entry i' j o (run_op o (content (mem s) r)).2 fl)).
        * rewrite reverse_app, apply_ws_app, undo_log_ok. done.
    - (* ScanSkip *)
      assert (t < N) as Ht by (apply (inv1_busy s t Hinv); by rewrite Hp).
      pose proof (i_thr s Hinv t Ht) as Htt. rewrite Hp in Htt.
      apply (inv1_gen s _ t (TSim i u r s0 c0 ap rs (S j) bat ws lg)); gen_tac Hinv. by rewrite Hp.
    - (* Rollback *)
      assert (t < N) as Ht by (apply (inv1_busy s t Hinv); by rewrite Hp).
      pose proof (i_thr s Hinv t Ht) as Htt. rewrite Hp in Htt. destruct Htt as (Hr & Hs0 & Hh & Hb & Hu).
      apply (inv1_write s t r (mem s)); gen_tac Hinv.
      + left. by rewrite Hp.
      + intros w Hw. apply (dirty_after_stores _ _ _ (dirty s r)); [done | done | by apply (i_dirty s Hinv) | |].
        * intros w' Hw'. apply elem_of_app. by left.
        * intros w' Hw'. apply elem_of_app. right. by apply elem_of_map_fst_reverse.
      + split; [done |]. cbn [set_pc set_rep mem ch rhead]. rewrite upd_eq, content_rstores by done.
        intros h [= <-]. done.
    - (* CasSucc *)
      assert (t < N) as Ht by (apply (inv1_busy s t Hinv); by rewrite Hp).
      by apply (inv1_cassucc s t i u r s0 c0 ap rs bat ws lg).
    - (* CasFail *)
      assert (t < N) as Ht by (apply (inv1_busy s t Hinv); by rewrite Hp).
      pose proof (i_thr s Hinv t Ht) as Htt. rewrite Hp in Htt. destruct Htt as (Hr & Hs0 & Hh & Hb & Hu).
      assert (fenced (mem s) (cas_flush s t r)) as Hf by (by apply fenced_flush).
      rewrite HF4. apply (inv1_write s t r (cas_flush s t r)); gen_tac Hinv.
      + left. by rewrite Hp.
      + intros w Hw. destruct (decide (w ∈ map fst lg)) as [Hin | Hnin]; [by left | right].
        apply rstores_clean_notin; [apply Hf | done | | ].
        * by rewrite elem_of_map_fst_reverse.
        * destruct (i_dirty s Hinv r w Hr Hw) as [Hd | Hc].
          -- unfold cas_flush. rewrite HF1, app_nil_r. apply clean_flushed; [done |].
             by apply elem_of_list_fmap_1.
          -- by apply (fenced_clean (mem s)).
      + split; [done |]. cbn [set_pc set_rep mem ch rhead]. rewrite upd_eq, content_rstores by apply Hf.
        rewrite (fenced_content (mem s)) by done. intros h [= <-]. done.
    - (* PersistFix *)
      assert (t < N) as Ht by (apply (inv1_busy s t Hinv); by rewrite Hp).
      pose proof (i_thr s Hinv t Ht) as Htt. rewrite Hp in Htt.
      pose proof (inv1_sync_mark s t Hinv) as Hsm. pose proof (i_wm s Hinv) as Hwm.
      pose proof (flush_mark (mem s) t [0] LC) as Hmm.
      apply (inv1_gen s _ t (TRelease i s1 c0 v)); gen_tac Hinv.
      + by apply fenced_flush.
      + unfold mark_cc, p_sync in *. cbn [mem wm]. rewrite Hccv. cbn [fst]. lia.
      + intros i' k Hik. pose proof (i_done s Hinv i' k Hik). unfold mark_cc, p_sync in *. cbn [mem]. lia.
      + by rewrite Hp.
      + right. by rewrite Hp.
      + split; [exact Htt |]. unfold mark_cc. cbn [mem]. destruct Htt as (? & _). lia.
    - by rewrite HF1 in HF.
    - by rewrite HF1 in HF.
    - (* Release *)
      assert (t < N) as Ht by (apply (inv1_busy s t Hinv); by rewrite Hp).
      by apply (inv1_release s t i s1 c0 v).
    - (* Collect *)
      assert (t < N) as Ht by (apply (inv1_busy s t Hinv); by rewrite Hp).
      apply (inv1_gen s _ t (TDur i o c (res_at (ch s) c t) false)); gen_tac Hinv.
      + by rewrite Hp.
      + rewrite Hccv in Hcc. injection Hcc as <- _. simpl. unfold cseq. simpl. lia.
    - (* CollectRetry *)
      assert (t < N) as Ht by (apply (inv1_busy s t Hinv); by rewrite Hp).
      apply (inv1_gen s _ t (TAnn i u None)); gen_tac Hinv. by rewrite Hp.
    - (* DurableSkip *)
      assert (t < N) as Ht by (apply (inv1_busy s t Hinv); by rewrite Hp).
      apply (inv1_gen s _ t TIdle); gen_tac Hinv.
      + intros i' k Hik. cbn [ret done] in Hik. apply elem_of_app in Hik as [Hik | Hik]; [by apply (i_done s Hinv i') |].
        apply elem_of_list_singleton in Hik. injection Hik as <- <-. pose proof (i_wm s Hinv). unfold mark_cc in *. simpl. lia.
      + by rewrite Hp.
    - (* DurableSync *)
      assert (t < N) as Ht by (apply (inv1_busy s t Hinv); by rewrite Hp).
      pose proof (i_thr s Hinv t Ht) as Htt. rewrite Hp in Htt.
      pose proof (inv1_sync_mark s t Hinv) as Hsm. pose proof (i_wm s Hinv) as Hwm.
      pose proof (flush_mark (mem s) t [0] LC) as Hmm.
      apply (inv1_gen s _ t TIdle); gen_tac Hinv.
      + by apply fenced_flush.
      + unfold mark_cc, p_sync in *. cbn [ret mem wm]. rewrite HF1, Hccv. cbn [fst]. lia.
      + intros i' k Hik. cbn [ret done] in Hik. apply elem_of_app in Hik as [Hik | Hik].
        * pose proof (i_done s Hinv i' k Hik). unfold mark_cc, p_sync in *. cbn [ret mem]. lia.
        * apply elem_of_list_singleton in Hik. injection Hik as <- <-. unfold mark_cc, p_sync in *. cbn [ret mem].
          simpl in Htt. lia.
      + by rewrite Hp.
    - (* DirectRead *)
      assert (t < N) as Ht by (apply (inv1_busy s t Hinv); by rewrite Hp).
      apply (inv1_gen s _ t (TDur i (Rd q) c (rexec q (content (mem s) c0)) true)); gen_tac Hinv.
      + by rewrite Hp.
      + rewrite Hccv in Hcc. injection Hcc as <- _. simpl. unfold cseq. simpl. lia.
    - (* PublishRead *)
      assert (t < N) as Ht by (apply (inv1_busy s t Hinv); by rewrite Hp).
      destruct way; [apply (inv1_gen s _ t (TCollect i (Rd q))) | apply (inv1_gen s _ t (TRead i q true))];
        gen_tac Hinv; by rewrite ?Hp.
    - (* Crash *)
      by apply inv1_crash.
  Qed.

  Lemma inv1_reachable s : F1 = true → F4 = true → reachable s → inv1 s.
  Proof.
    intros HF1 HF4. induction 1 as [| s s' _ IH Hs]; [apply inv1_init |]. by apply (inv1_step s).
  Qed.

  (** ** The durability theorems (the fixed protocol) *)

  (** What a crash keeps of location [x]. *)
  Definition img (s : rstate) (keep : nat → nat) (x : nat) : nat := p_image line (mem s) keep x.
  (** The words of replica [r] a crash keeps. *)
  Definition img_content (s : rstate) (keep : nat → nat) (r : nat) : list nat :=
    map (λ w, img s keep (rloc r w)) (seq 0 W).

  (** [CurCombConsistent]: the replica [curComb] designates holds the object
      of its transition. *)
  Theorem redo_px_cur_comb_consistent s :
    F1 = true → F4 = true → reachable s →
    ccv (mem s) = (cseq s, rep_at (ch s) (cseq s)) ∧
    content (mem s) (rep_at (ch s) (cseq s)) = obj_at (ch s) (cseq s).
  Proof.
    intros HF1 HF4 Hr. pose proof (inv1_reachable s HF1 HF4 Hr) as Hinv.
    split; [by apply inv1_ccv |].
    destruct (i_cand s Hinv (cseq s)) as (_ & _ & Hst); [pose proof (inv1_mark s Hinv); lia |].
    apply stable_content; [apply Hinv | by apply chain_obj_length, Hinv | done].
  Qed.

  (** [DurableImageConsistent] (null recovery is correct): in every crash
      image Px86 allows, [curComb] is one of its transitions, from the one
      its line's mark guarantees on, and the replica it designates holds
      that transition's object. *)
  Theorem redo_px_durable_image_consistent s keep :
    F1 = true → F4 = true → reachable s → p_crash_ok (mem s) keep →
    mark_cc s ≤ img s keep 0 ≤ cseq s ∧ img s keep 1 = rep_at (ch s) (img s keep 0) ∧
    img_content s keep (img s keep 1) = obj_at (ch s) (img s keep 0).
  Proof.
    intros HF1 HF4 Hr Hok. pose proof (inv1_reachable s HF1 HF4 Hr) as Hinv.
    destruct (inv1_image s keep Hinv Hok) as (H0 & H1 & Hk). unfold img. rewrite H0, H1.
    split_and!; [lia | lia | done |].
    destruct (i_cand s Hinv (keep LC) Hk) as (_ & _ & Hst).
    apply list_eq. intros w. unfold img_content, img. rewrite list_lookup_fmap.
    pose proof (chain_obj_length (ch s) (keep LC) (i_chain s Hinv)) as Hlen.
    destruct (decide (w < W)) as [Hw | Hw].
    - rewrite lookup_seq_lt by done. simpl.
      destruct (lookup_lt_is_Some_2 (obj_at (ch s) (keep LC)) w ltac:(lia)) as [v Hv]. rewrite Hv. f_equal.
      apply (Hst w v Hv). destruct (i_pm s Hinv) as (_ & Hn & _).
      pose proof (Hok (line (rloc (rep_at (ch s) (keep LC)) w)) ltac:(rewrite Hn; apply line_lt)).
      unfold llen. lia.
    - rewrite lookup_seq_ge by lia. symmetry. apply lookup_ge_None_2. lia.
  Qed.

  (** [CompletedDurable]: a transaction that returned, with the state of seq
      [k] (the transition it committed, or whose State or replica it read),
      is in every crash image: [curComb] persists at [k] or later. *)
  Theorem redo_px_completed_durable s keep i k :
    F1 = true → F4 = true → reachable s → p_crash_ok (mem s) keep → (i, k) ∈ done s →
    k ≤ img s keep 0.
  Proof.
    intros HF1 HF4 Hr Hok Hik. pose proof (inv1_reachable s HF1 HF4 Hr) as Hinv.
    destruct (inv1_image s keep Hinv Hok) as (H0 & _ & Hk). unfold img. rewrite H0.
    pose proof (i_done s Hinv i k Hik). lia.
  Qed.

  (** The object at seq [k] is the committed operations of transitions
      [1 .. k] run in order from the initial object. *)
  Theorem redo_px_obj_at_runs ch k :
    chain_ok ch → k < length ch → obj_at ch k = apply_ws (redo_ws ch 0 k) init_obj.
  Proof.
    intros Hc Hk. rewrite <- (redo_ws_ok ch 0 k Hc ltac:(lia) Hk). f_equal.
    destruct Hc as [(l0 & H0 & Hi & _) _]. unfold obj_at. by rewrite H0.
  Qed.

  (** ** A step function, to check executions by computation *)

  (** The choices a step makes. *)
  Inductive label :=
    | LInvoke (t : nat) (u : UOp) | LInvokeRead (t : nat) (q : ROp)
    | LSnapshot (t : nat) | LApplied (t : nat) | LPrepare (t r : nat) (copy : bool)
    | LPrepFail (t r : nat) (gs : list (nat * nat)) | LAbandon (t : nat) | LGiveUp (t : nat)
    | LScan (t : nat) | LRollback (t : nat) | LCas (t : nat) | LPersist (t : nat) | LRelease (t : nat)
    | LCollect (t : nat) | LDurable (t : nat) | LDirectRead (t : nat) | LPublish (t : nat) (way : bool).

  Definition lock_ok (s : rstate) (own : option nat) (r : nat) : bool :=
    match own with
    | Some r' => bool_decide (r' = r)
    | None => bool_decide (r < NR) && bool_decide (rlock s r = Free)
    end.

  Definition fstep (s : rstate) (l : label) : option rstate :=
    match l with
    | LInvoke t u =>
        match pc s t with
        | TIdle => if decide (t < N) then
            Some (RState (mem s) (upd (req s) t (Some (Req (Upd u) (nid s) true))) (ch s) (rhead s)
                    (rlock s) (dirty s) (ring s) (wm s) (upd (pc s) t (TAnn (nid s) u None))
                    (xh s ++ [XE (Invoke (nid s) t (Upd u))]) (S (nid s)) (pl s) (ep s) (done s))
            else None
        | _ => None
        end
    | LInvokeRead t q =>
        match pc s t with
        | TIdle => if decide (t < N) then
            Some (RState (mem s) (req s) (ch s) (rhead s) (rlock s) (dirty s) (ring s) (wm s)
                    (upd (pc s) t (TRead (nid s) q false))
                    (xh s ++ [XE (Invoke (nid s) t (Rd q))]) (S (nid s)) (pl s) (ep s) (done s))
            else None
        | _ => None
        end
    | LSnapshot t =>
        match pc s t with
        | TAnn i u own =>
            let '(s0, c0) := ccv (mem s) in
            if decide (rhead s c0 = Some s0) then
              Some (RState (mem s) (req s) (ch s) (rhead s) (rlock s) (dirty s) (ring_put (ring s) s0)
                      (wm s) (upd (pc s) t (THave i u own s0 c0 (app_at (ch s) s0) (res_at (ch s) s0)))
                      (xh s) (nid s) (pl s) (ep s) (done s))
            else None
        | _ => None
        end
    | LApplied t =>
        match pc s t with
        | THave i u own s0 c0 ap rs =>
            if decide (S i ≤ ap t) then Some (set_pc (release s own) t (TDur i (Upd u) s0 (rs t) false))
            else None
        | _ => None
        end
    | LPrepare t r copy =>
        match pc s t with
        | THave i u own s0 c0 ap rs =>
            if decide (ap t < S i) then
              if lock_ok s own r then
                let ws0 :=
                  if copy then map (λ w, (w, p_load line (mem s) (rloc c0 w))) (seq 0 W)
                  else match rhead s r with Some h => redo_ws (ch s) h s0 | None => [] end in
                let ok :=
                  if copy then bool_decide (ccv (mem s) = (s0, c0))
                  else match rhead s r with Some h => bool_decide (h ≤ s0) | None => false end in
                if ok then
                  Some (set_pc (set_rep s t r (rstores (mem s) r ws0) (Some s0) (dirty s r ++ map fst ws0)) t
                          (TSim i u r s0 c0 ap rs 0 [] [] []))
                else None
              else None
            else None
        | _ => None
        end
    | LPrepFail t r gs =>
        match pc s t with
        | THave i u own s0 c0 ap rs =>
            if lock_ok s own r then
              Some (set_pc (set_rep s t r (rstores (mem s) r gs) None (dirty s r ++ map fst gs)) t
                      (TAnn i u (Some r)))
            else None
        | _ => None
        end
    | LAbandon t =>
        match pc s t with THave i u own _ _ _ _ => Some (set_pc s t (TAnn i u own)) | _ => None end
    | LGiveUp t =>
        match pc s t with TAnn i u own => Some (set_pc (release s own) t (TCollect i (Upd u))) | _ => None end
    | LScan t =>
        match pc s t with
        | TSim i u r s0 c0 ap rs j bat ws lg =>
            if decide (j < N) then
              match req s j with
              | Some (Req o i' fl) =>
                  if decide (ap j < S i') then
                    let σ := content (mem s) r in
                    Some (set_pc (set_rep s t r (rstores (mem s) r (run_op o σ).1) (rhead s r)
                                    (dirty s r ++ map fst (run_op o σ).1)) t
                            (TSim i u r s0 c0 (upd ap j (S i')) (upd rs j (run_op o σ).2) (S j)
                               (bat ++ [Entry i' j o (run_op o σ).2 fl]) (ws ++ (run_op o σ).1)
                               (lg ++ undo_log σ (run_op o σ).1)))
                  else Some (set_pc s t (TSim i u r s0 c0 ap rs (S j) bat ws lg))
              | None => Some (set_pc s t (TSim i u r s0 c0 ap rs (S j) bat ws lg))
              end
            else None
        | _ => None
        end
    | LRollback t =>
        match pc s t with
        | TSim i u r s0 c0 ap rs j bat ws lg =>
            Some (set_pc (set_rep s t r (rstores (mem s) r (reverse lg)) (Some s0) (dirty s r ++ map fst lg)) t
                    (TAnn i u (Some r)))
        | _ => None
        end
    | LCas t =>
        match pc s t with
        | TSim i u r s0 c0 ap rs j bat ws lg =>
            if decide (j = N) then
              if decide (ccv (mem s) = (s0, c0)) then
                Some (RState (p_write (cas_flush s t r) LC (cc_write (S s0) r)) (req s)
                        (ch s ++ [Link (content (mem s) r) ap rs bat ws r])
                        (upd (rhead s) r (Some (S s0))) (upd (rlock s) r Held) (upd (dirty s) r [])
                        (ring s) (wm s) (upd (pc s) t (TPersist i (S s0) c0 (rs t)))
                        (xh s) (nid s) (pl s) (ep s) (done s))
              else
                Some (set_pc (set_rep s t r (rstores (cas_flush s t r) r (reverse lg)) (Some s0)
                                (if F4 then map fst lg else [])) t (TAnn i u (Some r)))
            else None
        | _ => None
        end
    | LPersist t =>
        match pc s t with
        | TPersist i s1 c0 v =>
            if F1 then
              Some (RState (p_sync (mem s) t) (req s) (ch s) (rhead s) (rlock s) (dirty s) (ring s)
                      (wm s `max` (ccv (mem s)).1) (upd (pc s) t (TRelease i s1 c0 v))
                      (xh s) (nid s) (pl s) (ep s) (done s))
            else if decide (ring s (s1 `mod` RS) < s1) then
              Some (RState (p_sync (mem s) t) (req s) (ch s) (rhead s) (rlock s) (dirty s)
                      (upd (ring s) (s1 `mod` RS) s1) (wm s) (upd (pc s) t (TRelease i s1 c0 v))
                      (xh s) (nid s) (pl s) (ep s) (done s))
            else Some (set_pc s t (TRelease i s1 c0 v))
        | _ => None
        end
    | LRelease t =>
        match pc s t with
        | TRelease i s1 c0 v =>
            Some (ret (RState (mem s) (req s) (ch s) (rhead s) (upd (rlock s) c0 Free) (dirty s)
                         (if F1 then ring_put (ring s) s1 else ring s) (wm s) (pc s)
                         (xh s) (nid s) (pl s) (ep s) (done s)) t i s1 v)
        | _ => None
        end
    | LCollect t =>
        match pc s t with
        | TCollect i o =>
            let '(c, c0) := ccv (mem s) in
            if decide (S i ≤ app_at (ch s) c t) then Some (set_pc s t (TDur i o c (res_at (ch s) c t) false))
            else match o with Upd u => Some (set_pc s t (TAnn i u None)) | Rd _ => None end
        | _ => None
        end
    | LDurable t =>
        match pc s t with
        | TDur i o c v dir =>
            if F1 && bool_decide (c ≤ wm s) then Some (ret s t i c v)
            else Some (ret (RState (p_sync (mem s) t) (req s) (ch s) (rhead s) (rlock s) (dirty s) (ring s)
                              (if F1 then wm s `max` (ccv (mem s)).1 else wm s) (pc s)
                              (xh s) (nid s) (pl s) (ep s) (done s)) t i c v)
        | _ => None
        end
    | LDirectRead t =>
        match pc s t with
        | TRead i q pub =>
            let '(c, c0) := ccv (mem s) in
            if decide (rhead s c0 = Some c) then
              Some (RState (mem s) (req s) (ch s) (rhead s) (rlock s) (dirty s) (ring s) (wm s)
                      (upd (pc s) t (TDur i (Rd q) c (rexec q (content (mem s) c0)) true))
                      (if decide (pl s = c) then xh s ++ [XL i (Rd q) (rexec q (content (mem s) c0))]
                       else xh s) (nid s) (pl s) (ep s) (done s))
            else None
        | _ => None
        end
    | LPublish t way =>
        match pc s t with
        | TRead i q false =>
            Some (RState (mem s) (upd (req s) t (Some (Req (Rd q) i way))) (ch s) (rhead s) (rlock s)
                    (dirty s) (ring s) (wm s)
                    (upd (pc s) t (if way then TCollect i (Rd q) else TRead i q true))
                    (xh s) (nid s) (pl s) (ep s) (done s))
        | _ => None
        end
    end.

  Lemma lock_ok_sound s own r :
    lock_ok s own r = true → own = Some r ∨ own = None ∧ r < NR ∧ rlock s r = Free.
  Proof.
    destruct own as [r' |]; simpl.
    - intros ->%bool_decide_eq_true. by left.
    - intros [?%bool_decide_eq_true ?%bool_decide_eq_true]%andb_prop. by right.
  Qed.

  Lemma fstep_sound s l s' : fstep s l = Some s' → step s s'.
  Proof.
    destruct l as [t u | t q | t | t | t r copy | t r gs | t | t | t | t | t | t | t | t | t | t | t way];
      simpl; intros H.
    - destruct (pc s t) eqn:Hp; try done. case_decide; [| done]. injection H as <-. by apply Announce.
    - destruct (pc s t) eqn:Hp; try done. case_decide; [| done]. injection H as <-. by apply BeginRead.
    - destruct (pc s t) eqn:Hp; try done. destruct (ccv (mem s)) as [s0 c0] eqn:Hc.
      case_decide; [| done]. injection H as <-. by eapply Snapshot.
    - destruct (pc s t) eqn:Hp; try done. case_decide; [| done]. injection H as <-. by eapply Applied.
    - destruct (pc s t) eqn:Hp; try done. case_decide; [| done].
      destruct (lock_ok s own r) eqn:Hl; [| done]. apply lock_ok_sound in Hl.
      destruct copy.
      + case_bool_decide; [| done]. injection H as <-. eapply Prepare; [done | done | done |]. by left.
      + destruct (rhead s r) as [h |] eqn:Hh; [| done]. case_bool_decide; [| done].
        injection H as <-. eapply Prepare; [done | done | done |]. right. by exists h.
    - destruct (pc s t) eqn:Hp; try done. destruct (lock_ok s own r) eqn:Hl; [| done].
      apply lock_ok_sound in Hl. injection H as <-. by eapply PrepFail.
    - destruct (pc s t) eqn:Hp; try done. injection H as <-. by eapply Abandon.
    - destruct (pc s t) eqn:Hp; try done. injection H as <-. by eapply GiveUp.
    - destruct (pc s t) eqn:Hp; try done. case_decide; [| done].
      destruct (req s j) as [[o i' fl] |] eqn:Hq.
      + case_decide.
        * injection H as <-. by eapply ScanRun.
        * injection H as <-. eapply ScanSkip; [done | done |]. intros o' i'' fl'. rewrite Hq.
          intros [= <- <- <-]. lia.
      + injection H as <-. eapply ScanSkip; [done | done |]. intros o' i'' fl'. by rewrite Hq.
    - destruct (pc s t) eqn:Hp; try done. injection H as <-. by eapply Rollback.
    - destruct (pc s t) eqn:Hp; try done. case_decide as Hj; [subst j | done]. case_decide.
      + injection H as <-. by eapply CasSucc.
      + injection H as <-. by eapply CasFail.
    - destruct (pc s t) eqn:Hp; try done. destruct F1 eqn:HF.
      + injection H as <-. by eapply PersistFix.
      + case_decide.
        * injection H as <-. by eapply PersistRing.
        * injection H as <-. eapply PersistSkip; [done | done | lia].
    - destruct (pc s t) eqn:Hp; try done. injection H as <-. by eapply Release.
    - destruct (pc s t) eqn:Hp; try done. destruct (ccv (mem s)) as [c c0] eqn:Hc. case_decide.
      + injection H as <-. by eapply Collect.
      + destruct o as [u | q]; [| done]. injection H as <-. eapply (CollectRetry _ _ _ _ (p_load line (mem s) 0) (p_load line (mem s) 1)); [done | done | lia].
    - destruct (pc s t) eqn:Hp; try done. destruct (F1 && bool_decide (c ≤ wm s)) eqn:Hb.
      + apply andb_prop in Hb as [HF ?%bool_decide_eq_true]. injection H as <-. by eapply DurableSkip.
      + injection H as <-. eapply DurableSync; [| done]. destruct F1; [| by left].
        right. simpl in Hb. apply bool_decide_eq_false in Hb. lia.
    - destruct (pc s t) eqn:Hp; try done. destruct (ccv (mem s)) as [c c0] eqn:Hc.
      case_decide; [| done]. injection H as <-. by eapply DirectRead.
    - destruct (pc s t) eqn:Hp; try done. destruct pub; [done |]. injection H as <-. by eapply PublishRead.
  Qed.

  (** A sequence of steps. *)
  Fixpoint frun (s : rstate) (ls : list label) : option rstate :=
    match ls with [] => Some s | l :: ls' => fstep s l ≫= λ s', frun s' ls' end.

  Lemma frun_reachable s ls s' : reachable s → frun s ls = Some s' → reachable s'.
  Proof.
    revert s. induction ls as [| l ls IH]; intros s Hs; simpl; [by intros [= <-] |].
    destruct (fstep s l) as [s1 |] eqn:E; [| done]. simpl. intros Hr. apply (IH s1); [| done].
    eapply reachable_step; [done |]. by apply (fstep_sound s l).
  Qed.
End redo_px.

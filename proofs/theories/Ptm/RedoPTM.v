(** * Redo-PTM: Herlihy's combining consensus, replicas, null recovery

    Superseded for persistence by [RedoPTMPx.v], which models Px86's
    line-granular persistence (lines, [pwb]s, fences, every crash image),
    proves the fixed protocol durable there and refutes findings F1 and F4
    ([RedoPTMPxBugs.v]).  This model takes a replica installed by the CAS
    as persisted, so F1 and F4 cannot be stated in it; it stays for
    Herlihy's toggle bit and the bound of two iterations ([redo_helped]),
    which [RedoPTMPx.v] does not model.

    An abstract model of Redo-PTM's update path (seed paper §5, Algorithms 1
    and 3) with full-system crashes and null recovery, as a transition
    system over [rstate], for any number of threads [N], any number of
    replicas, any deterministic sequential object ([exec] : [Op → St → St *
    Val]) and any number of crashes.  It justifies, for all bounds, the
    invariants [ExactlyOnce], [CurCombConsistent],
    [DurableImageConsistent], [CompletedDurable], [ResultsCorrect] and
    [HistoryDurablyLinearizable] that [specs/ptm/RedoPTM.tla] checks with
    TLC for small ones, at the level of abstraction stated below.

    The steps ([step]), each one atomic, named by the seed's lines of
    Algorithm 3:
    - [Announce] (L2–L3): [req[t] ← op], [announce[t] ← ¬announce[t]];
    - [Snapshot] (L8–L17): read [curComb] and copy the [State] it heads
      ([cpySt]; the re-check of L13 makes the read and the copy one
      atomic snapshot);
    - [Prepare] (L18–L19): lock a free replica if the thread holds none
      ([exclusiveTryLock]), and bring it up to the snapshot: by replaying the
      logs of the transitions since its head ([applyRedologs]) or, if
      [curComb] has not moved, by copying [curComb]'s replica;
    - [Abandon] (L13/L16 [continue]: [curComb] moved since the snapshot) and
      [Break] (L19 [break]: [applyRedologs] gives up, which the seed's
      copy does only after [curComb] moved twice);
    - [Scan] (L20–L24, one index per step): if [applied[j] ≠ announce[j]],
      run [req[j]] on the replica, record its result and log it;
    - [CasSucc] / [CasFail] (L26–L30, L38–L39): install the replica and its
      State as the next transition, or undo the simulated stores (the undo
      log) and try again;
    - [Persist] (L32–L35) then [Release] (L31, after the persistence:
      finding F2's fix) and return the result (L37);
    - [Final] (L40–L50): unlock, persist [curComb], return the result the
      State [curComb] heads holds for the thread;
    - [Evict]: the line of [curComb] is written back spontaneously;
    - [CrashRecover], a crash and null recovery: the persisted [curComb] and the replica it
      designates survive; every other replica is invalid (arbitrary
      contents, no head), the locks, announce array, States and threads
      start afresh, nothing is replayed.

    Proved, for every reachable state ([reachable]), from the inductive
    invariant [rinv] ([rinv_init], [rinv_step]: one lemma per step):
    - [redo_exactly_once]: every operation in the committed transitions was
      announced (its [Invoke] is in the history, with that thread and that
      request), and no operation is committed twice ([NoDup]);
    - [redo_returned_applied_once]: an operation that returned [v] is
      committed exactly once, durably (in the persisted prefix), with
      result [v];
    - [redo_helped]: Herlihy's bound: an operation announced when [curComb]
      was at [a] is committed once [curComb] reaches [a + 2], whoever
      installed it — the reason two iterations of L7 suffice, and why the
      result [Final] reads after them is the thread's own;
    - [redo_cur_comb_consistent]: the replica [curComb] designates holds the
      sequential application of the committed operations, and the replica
      the persisted [curComb] designates that of the persisted prefix — an
      invariant of every step, crash and null recovery included
      ([DurableImageConsistent]);
    - [redo_durably_linearizable]: the history of invocations, returns and
      crashes is durably linearizable ([Core/DurableLin.v]) for the
      sequential specification [exec].

    What the model abstracts away, and where it is checked instead:
    - Px86 and the flushes.  Replica contents are values of [St], not
      cache lines: a replica installed by a CAS is taken to be persisted
      (the seed's L26 flush before the CAS, a locked RMW, and finding F4's
      fix for the undo's stores); [curComb]'s persistence is the separate
      variable [pseq]/[pidx], advanced by [Persist], [Final] and [Evict].
      The ring of tickets and its use as a persistence witness (L14–L17,
      L33, finding F1) is abstracted to "persisting [curComb] makes the
      current value durable".  [specs/ptm/RedoPTM.tla] models lines, pwbs,
      fences and crash images.
    - The ring's reuse of [State]s: the redo logs of every transition are
      kept ([ch]); a replica whose logs are gone is copied instead, which
      [Prepare] allows whenever [curComb] has not moved (either choice is
      allowed nondeterministically).
    - Physical logs.  A transition's redo log is modelled by the
      operations it ran ([replay] re-executes them, [l_batch]); the undo log
      by the replica's content before the simulation ([pre]).  With [St] a
      memory and operations given by their stores these are the write-set
      replays and restorations of the seed's logs.
    - Read-only transactions (Algorithm 2) are not modelled; with them the
      seed's announce toggle is not enough (finding F3 of
      [specs/ptm/README.md]); this model has update transactions only,
      for which the toggle is correct.
    - Reading [announce[j]] and [req[j]] (L22–L23) is one step, as in the
      TLA+ module.  The strong try lock is abstract ([lockst]: free, owned
      by an updater, held read-only for [curComb]); its specification is
      [StrongTryRWLock.v].
    - Progress (wait-freedom, step bounds) is not proved here ([redo_helped]
      is the combining consensus's half of it); TLC checks [WaitFree] and
      [StepBound]. *)
From stdpp Require Import base list decidable.
From Coq Require Import Lia.
From perdure.Core Require Import History DurableLin.

Section redo.
  Context {St Op Val : Type} `{!Inhabited Val} (exec : Op → St → St * Val) (init : St).
  (** Threads [0 .. N-1]; replicas [0 .. NR-1] (the seed has [NR = N + 1];
      any number is allowed here). *)
  Context (N NR : nat).

  (** The sequential specification the operations are linearized against. *)
  Definition spec : seq_spec St Op Val := SeqSpec init (λ σ op v σ', exec op σ = (σ', v)).

  (** ** Transitions of [curComb] *)

  (** An applied operation: its id, its thread, the request, its result. *)
  Notation entry := (opid * nat * Op * Val)%type.
  Definition e_id (e : entry) : opid := e.1.1.1.
  Definition e_th (e : entry) : nat := e.1.1.2.
  Definition e_op (e : entry) : Op := e.1.2.
  Definition e_val (e : entry) : Val := e.2.

  (** What a transition of [curComb] leaves: the replica's content after it,
      the State ([applied[]], [results[]]) and the operations it ran, in
      order (its redo log). *)
  Record link := Link {
    l_obj : St;
    l_app : nat → bool;
    l_res : nat → Val;
    l_batch : list entry;
  }.

  Implicit Types (ch : list link) (bat : list entry).

  (** Running [bat] from [σ] gives [σ'], each operation with its result. *)
  Inductive batch_ok : St → list entry → St → Prop :=
    | batch_ok_nil σ : batch_ok σ [] σ
    | batch_ok_cons σ σ1 σ2 e bat :
        exec (e_op e) σ = (σ1, e_val e) → batch_ok σ1 bat σ2 → batch_ok σ (e :: bat) σ2.

  (** The committed transitions: link 0 is the initial object; each next
      link is its batch run on the previous one. *)
  Definition chain_ok (ch : list link) : Prop :=
    (∃ l0, ch !! 0 = Some l0 ∧ l_obj l0 = init ∧ l_batch l0 = []) ∧
    ∀ k a b, ch !! k = Some a → ch !! S k = Some b → batch_ok (l_obj a) (l_batch b) (l_obj b).

  Definition entries (ch : list link) : list entry := concat (map l_batch ch).
  Definition ids (l : list entry) : list opid := map e_id l.

  (** Replay the operations of links [h+1 .. s] ([applyRedologs]). *)
  Definition replay (ch : list link) (h s : nat) (σ : St) : St :=
    foldl (λ σ e, (exec (e_op e) σ).1) σ (entries (drop (S h) (take (S s) ch))).

  (** ** States *)

  Inductive lockst := Free | Owned (t : nat) | Held.

  (** Where thread [t] is.  [i] its operation's id, [op] the request, [a]
      the sequence number of [curComb] when it announced, [k] the iteration
      (0 or 1) of L7, [own] the replica it has locked ([_c]), [s] its
      snapshot's sequence number, [ap]/[rs] its State ([_newSt]), [pre] the
      replica before its simulation (the undo log), [j] the next index of
      the scan, [bat] the operations run so far, [o] the replica of the
      [curComb] it replaced, [v] its result. *)
  Inductive tstate :=
    | TIdle
    | TAnn (i : opid) (op : Op) (a k : nat) (own : option nat)
    | THave (i : opid) (op : Op) (a k : nat) (own : option nat) (s : nat)
        (ap : nat → bool) (rs : nat → Val)
    | TSim (i : opid) (op : Op) (a k : nat) (r s : nat) (ap : nat → bool) (rs : nat → Val)
        (pre : St) (j : nat) (bat : list entry)
    | TPersist (i : opid) (op : Op) (s o : nat) (v : Val)
    | TRelease (i : opid) (op : Op) (s o : nat) (v : Val)
    | TFinal (i : opid) (op : Op) (a : nat) (own : option nat).

  Definition pid (p : tstate) : option opid :=
    match p with
    | TIdle => None
    | TAnn i _ _ _ _ | THave i _ _ _ _ _ _ _ | TSim i _ _ _ _ _ _ _ _ _ _
    | TPersist i _ _ _ _ | TRelease i _ _ _ _ | TFinal i _ _ _ => Some i
    end.
  Definition pop (p : tstate) : option Op :=
    match p with
    | TIdle => None
    | TAnn _ op _ _ _ | THave _ op _ _ _ _ _ _ | TSim _ op _ _ _ _ _ _ _ _ _
    | TPersist _ op _ _ _ | TRelease _ op _ _ _ | TFinal _ op _ _ => Some op
    end.
  (** The announce-time sequence number, for operations not yet known to
      be committed. *)
  Definition paseq (p : tstate) : option nat :=
    match p with
    | TAnn _ _ a _ _ | THave _ _ a _ _ _ _ _ | TSim _ _ a _ _ _ _ _ _ _ _ | TFinal _ _ a _ => Some a
    | _ => None
    end.
  Definition owns (p : tstate) : option nat :=
    match p with
    | TAnn _ _ _ _ own | THave _ _ _ _ own _ _ _ | TFinal _ _ _ own => own
    | TSim _ _ _ _ r _ _ _ _ _ _ => Some r
    | _ => None
    end.

  Record rstate := RState {
    ann : nat → bool;            (* announce[] *)
    req : nat → Op;              (* req[] *)
    ch : list link;              (* the committed transitions (ghost; the States and redo logs) *)
    cidx : nat;                  (* curComb's replica; its seq is [cseq] *)
    pseq : nat; pidx : nat;      (* the persisted curComb *)
    rep : nat → St;              (* the replicas' contents *)
    rhead : nat → option nat;    (* Combined.head's seq; None: invalid *)
    rlock : nat → lockst;        (* rwLock *)
    pc : nat → tstate;
    xh : list (xevent Op Val);   (* ghost: the history with its linearization points *)
    nid : nat;                   (* ghost: the next operation id *)
  }.

  Definition cseq (s : rstate) : nat := pred (length (ch s)).
  Definition link_at (s : rstate) (h : nat) : option link := ch s !! h.
  Definition obj_at (s : rstate) (h : nat) : St := from_option l_obj init (ch s !! h).
  Definition app_at (s : rstate) (h : nat) : nat → bool :=
    from_option l_app (λ _, false) (ch s !! h).
  Definition res_at (s : rstate) (h : nat) (x : nat) : Val :=
    from_option (λ l, l_res l x) inhabitant (ch s !! h).

  (** The State null recovery puts at the head of the recovered replica:
      nothing applied. *)
  Definition fresh_link (l : link) : link := Link (l_obj l) (λ _, false) (l_res l) (l_batch l).
  Definition dlink : link := Link init (λ _, false) (λ _, inhabitant) [].

  Definition upd {A} (f : nat → A) (t : nat) (a : A) : nat → A :=
    λ t', if decide (t' = t) then a else f t'.

  Global Arguments upd : simpl never.

  Lemma upd_eq {A} (f : nat → A) t a : upd f t a t = a.
  Proof. unfold upd. by rewrite decide_True. Qed.
  Lemma upd_ne {A} (f : nat → A) t t' a : t' ≠ t → upd f t a t' = f t'.
  Proof. intros. unfold upd. by rewrite decide_False. Qed.

  (** Rewrites [upd f t a x] where [x = t] or a hypothesis says [x ≠ t]. *)
  Ltac upd_simpl :=
    repeat match goal with
    | H : context [upd ?f ?t ?a ?t] |- _ => rewrite (upd_eq f t a) in H
    | |- context [upd ?f ?t ?a ?t] => rewrite (upd_eq f t a)
    | Hne : ?x ≠ ?t, H : context [upd ?f ?t ?a ?x] |- _ => rewrite (upd_ne f t x a Hne) in H
    | Hne : ?x ≠ ?t |- context [upd ?f ?t ?a ?x] => rewrite (upd_ne f t x a Hne)
    | Hne : ?t ≠ ?x, H : context [upd ?f ?t ?a ?x] |- _ =>
        rewrite (upd_ne f t x a (not_eq_sym Hne)) in H
    | Hne : ?t ≠ ?x |- context [upd ?f ?t ?a ?x] => rewrite (upd_ne f t x a (not_eq_sym Hne))
    end.

  (** The point of an applied operation, and the new points when [curComb]
      persists from [p] to [q]. *)
  Definition pt (e : entry) : xevent Op Val := XL (e_id e) (e_op e) (e_val e).
  Definition epoint (e : entry) : opid * Op * Val := (e_id e, e_op e, e_val e).
  Definition durable (ch : list link) (p : nat) : list entry := entries (take (S p) ch).
  Definition fresh_points (ch : list link) (p q : nat) : list (xevent Op Val) :=
    map pt (entries (drop (S p) (take (S q) ch))).

  (** ** Steps *)
  Section steps.
    Context (s : rstate).

    Definition st_pc (t : nat) (p : tstate) : rstate :=
      RState (ann s) (req s) (ch s) (cidx s) (pseq s) (pidx s) (rep s) (rhead s) (rlock s)
        (upd (pc s) t p) (xh s) (nid s).
  End steps.

  (** A step of thread [t] on its replica [r]: its content, head and lock. *)
  Definition own_step (s : rstate) (t : nat) (p' : tstate) (r : nat) (σ : St) (hd : option nat) :
      rstate :=
    RState (ann s) (req s) (ch s) (cidx s) (pseq s) (pidx s) (upd (rep s) r σ) (upd (rhead s) r hd)
      (upd (rlock s) r (Owned t)) (upd (pc s) t p') (xh s) (nid s).

  Inductive step : rstate → rstate → Prop :=
    (* L2–L3 *)
    | Announce s t op :
        t < N → pc s t = TIdle →
        step s (RState (upd (ann s) t (negb (ann s t))) (upd (req s) t op) (ch s) (cidx s)
                  (pseq s) (pidx s) (rep s) (rhead s) (rlock s)
                  (upd (pc s) t (TAnn (nid s) op (cseq s) 0 None))
                  (xh s ++ [XE (Invoke (nid s) t op)]) (S (nid s)))
    (* L8–L17 *)
    | Snapshot s t i op a k own :
        pc s t = TAnn i op a k own →
        step s (st_pc s t (THave i op a k own (cseq s) (app_at s (cseq s)) (res_at s (cseq s))))
    (* L18–L19 *)
    | Prepare s t i op a k own s0 ap rs r σ :
        pc s t = THave i op a k own s0 ap rs →
        (own = Some r ∨ (own = None ∧ r < NR ∧ rlock s r = Free)) →
        ((cseq s = s0 ∧ σ = rep s (cidx s)) ∨
         (∃ h, rhead s r = Some h ∧ h ≤ s0 ∧ σ = replay (ch s) h s0 (rep s r))) →
        step s (RState (ann s) (req s) (ch s) (cidx s) (pseq s) (pidx s)
                  (upd (rep s) r σ) (upd (rhead s) r (Some s0)) (upd (rlock s) r (Owned t))
                  (upd (pc s) t (TSim i op a k r s0 ap rs σ 0 [])) (xh s) (nid s))
    (* L13/L16 [continue] *)
    | Abandon s t i op a k own s0 ap rs :
        pc s t = THave i op a k own s0 ap rs → cseq s ≠ s0 →
        step s (st_pc s t (if decide (k = 0) then TAnn i op a 1 own else TFinal i op a own))
    (* L19 [break] *)
    | Break s t i op a k own s0 ap rs :
        pc s t = THave i op a k own s0 ap rs → s0 + 2 ≤ cseq s →
        step s (st_pc s t (TFinal i op a own))
    (* L20–L24, index j *)
    | Scan s t i op a k r s0 ap rs pre j bat :
        pc s t = TSim i op a k r s0 ap rs pre j bat → j < N →
        step s (if decide (ap j = ann s j) then st_pc s t (TSim i op a k r s0 ap rs pre (S j) bat)
                else
                  let σv := exec (req s j) (rep s r) in
                  own_step s t (TSim i op a k r s0 (upd ap j (ann s j)) (upd rs j σv.2) pre (S j)
                                  (bat ++ [(from_option id 0 (pid (pc s j)), j, req s j, σv.2)]))
                    r σv.1 (rhead s r))
    (* L26–L30, L32 *)
    | CasSucc s t i op a k r s0 ap rs pre bat :
        pc s t = TSim i op a k r s0 ap rs pre N bat → cseq s = s0 →
        step s (RState (ann s) (req s) (ch s ++ [Link (rep s r) ap rs bat]) r (pseq s) (pidx s)
                  (rep s) (upd (rhead s) r (Some (S s0))) (upd (rlock s) r Held)
                  (upd (pc s) t (TPersist i op s0 (cidx s) (rs t))) (xh s) (nid s))
    (* L26–L30, L38–L39 *)
    | CasFail s t i op a k r s0 ap rs pre bat :
        pc s t = TSim i op a k r s0 ap rs pre N bat → cseq s ≠ s0 →
        step s (own_step s t (if decide (k = 0) then TAnn i op a 1 (Some r) else TFinal i op a (Some r))
                  r pre (Some s0))
    (* L33–L35: pwb(curComb) and the ring CAS as fence, or nothing when
       curComb is already persisted this far *)
    | Persist s t i op s0 o v :
        pc s t = TPersist i op s0 o v →
        step s (if decide (S s0 ≤ pseq s) then st_pc s t (TRelease i op s0 o v)
                else RState (ann s) (req s) (ch s) (cidx s) (cseq s) (cidx s) (rep s) (rhead s)
                       (rlock s) (upd (pc s) t (TRelease i op s0 o v))
                       (xh s ++ fresh_points (ch s) (pseq s) (cseq s)) (nid s))
    (* L31 (after the persistence) and L37 *)
    | Release s t i op s0 o v :
        pc s t = TRelease i op s0 o v →
        step s (RState (ann s) (req s) (ch s) (cidx s) (pseq s) (pidx s) (rep s) (rhead s)
                  (upd (rlock s) o Free) (upd (pc s) t TIdle) (xh s ++ [XE (Return i v)]) (nid s))
    (* L40–L50 *)
    | Final s t i op a own :
        pc s t = TFinal i op a own →
        step s (RState (ann s) (req s) (ch s) (cidx s) (cseq s) (cidx s) (rep s) (rhead s)
                  (match own with Some r => upd (rlock s) r Free | None => rlock s end)
                  (upd (pc s) t TIdle)
                  (xh s ++ fresh_points (ch s) (pseq s) (cseq s) ++
                   [XE (Return i (res_at s (cseq s) t))])
                  (nid s))
    (* a write-back of curComb's line *)
    | Evict s :
        step s (RState (ann s) (req s) (ch s) (cidx s) (cseq s) (cidx s) (rep s) (rhead s)
                  (rlock s) (pc s) (xh s ++ fresh_points (ch s) (pseq s) (cseq s)) (nid s))
    (* a full-system crash, then null recovery *)
    | CrashRecover s (garbage : nat → St) :
        step s (RState (λ _, false) (req s)
                  (take (pseq s) (ch s) ++ [fresh_link (from_option id dlink (ch s !! pseq s))])
                  (pidx s) (pseq s) (pidx s)
                  (λ r, if decide (r = pidx s) then rep s r else garbage r)
                  (λ r, if decide (r = pidx s) then Some (pseq s) else None)
                  (λ r, if decide (r = pidx s) then Held else Free)
                  (λ _, TIdle) (xh s ++ [XE Crash]) (nid s)).

  (** ** The initial state and reachability *)

  Definition link0 : link := Link init (λ _, false) (λ _, inhabitant) [].

  Definition init_state (req0 : nat → Op) : rstate :=
    RState (λ _, false) req0 [link0] 0 0 0 (λ _, init) (λ _, Some 0)
      (λ r, if decide (r = 0) then Held else Free) (λ _, TIdle) [] 0.

  Inductive reachable : rstate → Prop :=
    | reachable_init req0 : reachable (init_state req0)
    | reachable_step s s' : reachable s → step s s' → reachable s'.

  (** ** The invariant *)

  (** Thread [t] has announced [i] ([op]) when [curComb] was at [a]: the
      announce bit says whether [i] is committed (the combining consensus's
      toggle), it is committed two transitions later at the latest, and the
      State [curComb] heads holds its result. *)
  Definition pend_ok (s : rstate) (t : nat) (i : opid) (op : Op) (a : nat) : Prop :=
    Invoke i t op ∈ erase (xh s) ∧ req s t = op ∧ a ≤ cseq s ∧
    (app_at s (cseq s) t = ann s t ↔ i ∈ ids (entries (ch s))) ∧
    (a + 2 ≤ cseq s → i ∈ ids (entries (ch s))) ∧
    (∀ e, e ∈ entries (ch s) → e_id e = i → e_th e = t ∧ e_op e = op ∧ res_at s (cseq s) t = e_val e).

  (** Thread [t] installed transition [S s0]; [i] ran, with result [v], in
      it or before it. *)
  Definition done_ok (s : rstate) (t : nat) (i : opid) (op : Op) (s0 : nat) (v : Val) : Prop :=
    Invoke i t op ∈ erase (xh s) ∧ req s t = op ∧ app_at s (cseq s) t = ann s t ∧
    S s0 ≤ cseq s ∧ (i, t, op, v) ∈ durable (ch s) (S s0) ∧
    (∀ e, e ∈ entries (ch s) → e_id e = i → e_th e = t ∧ e_op e = op ∧ res_at s (cseq s) t = e_val e).

  (** A replica locked by a thread between its iterations is consistent
      with its head. *)
  Definition own_ok (s : rstate) (own : option nat) : Prop :=
    match own with
    | None => True
    | Some r => ∀ h, rhead s r = Some h → h ≤ cseq s ∧ rep s r = obj_at s h
    end.

  (** A combiner whose snapshot is still [curComb] ([s0 = cseq]), at index
      [j] of its scan. *)
  Definition sim_ok (s : rstate) (t s0 : nat) (ap : nat → bool) (rs : nat → Val) (j : nat)
      (bat : list entry) : Prop :=
    (∀ x, x < j → (ap x = ann s x ↔
       match pid (pc s x) with
       | None => True
       | Some i' => i' ∈ ids (entries (ch s)) ∨ i' ∈ ids bat
       end)) ∧
    (∀ x, x < j → (x = t ∨ ∃ a', paseq (pc s x) = Some a' ∧ a' < s0) →
       pid (pc s x) ≠ None → ap x = ann s x) ∧
    (∀ x, j ≤ x → ap x = app_at s s0 x) ∧
    (∀ x, x ∉ map e_th bat → rs x = res_at s s0 x) ∧
    (∀ e, e ∈ bat → e_th e < j ∧ pid (pc s (e_th e)) = Some (e_id e) ∧
       pop (pc s (e_th e)) = Some (e_op e) ∧ rs (e_th e) = e_val e ∧
       e_id e ∉ ids (entries (ch s))) ∧
    NoDup (map e_th bat).

  Definition tinv (s : rstate) (t : nat) (p : tstate) : Prop :=
    match p with
    | TIdle => app_at s (cseq s) t = ann s t
    | TAnn i op a k own => pend_ok s t i op a ∧ a + k ≤ cseq s ∧ k ≤ 1 ∧ own_ok s own
    | THave i op a k own s0 ap rs =>
        pend_ok s t i op a ∧ a + k ≤ s0 ∧ s0 ≤ cseq s ∧ k ≤ 1 ∧ own_ok s own ∧
        ap = app_at s s0 ∧ rs = res_at s s0
    | TSim i op a k r s0 ap rs pre j bat =>
        pend_ok s t i op a ∧ a + k ≤ s0 ∧ s0 ≤ cseq s ∧ k ≤ 1 ∧ pre = obj_at s s0 ∧
        batch_ok pre bat (rep s r) ∧ j ≤ N ∧ (s0 = cseq s → sim_ok s t s0 ap rs j bat)
    | TPersist i op s0 o v => done_ok s t i op s0 v ∧ rlock s o = Held ∧ rhead s o = Some s0
    | TRelease i op s0 o v =>
        done_ok s t i op s0 v ∧ rlock s o = Held ∧ rhead s o = Some s0 ∧ S s0 ≤ pseq s
    | TFinal i op a own => pend_ok s t i op a ∧ a + 2 ≤ cseq s ∧ own_ok s own
    end.

  (** The replica a thread is to release (L31). *)
  Definition target (p : tstate) : option nat :=
    match p with TPersist _ _ _ o _ | TRelease _ _ _ o _ => Some o | _ => None end.

  Record rinv (s : rstate) : Prop := {
    ri_chain : chain_ok (ch s);
    ri_nodup : NoDup (ids (entries (ch s)));
    ri_invoked : ∀ e, e ∈ entries (ch s) → Invoke (e_id e) (e_th e) (e_op e) ∈ erase (xh s);
    ri_fresh : ∀ i t op, Invoke i t op ∈ erase (xh s) → i < nid s;
    ri_pseq : pseq s ≤ cseq s;
    ri_points : points (xh s) = map epoint (durable (ch s) (pseq s));
    ri_ok : prefix_ok point_ok (xh s);
    ri_cur : rep s (cidx s) = obj_at s (cseq s) ∧ rhead s (cidx s) = Some (cseq s) ∧
             rlock s (cidx s) = Held;
    ri_per : rep s (pidx s) = obj_at s (pseq s) ∧ rhead s (pidx s) = Some (pseq s) ∧
             rlock s (pidx s) = Held;
    ri_cons : ∀ r h, (rlock s r = Free ∨ rlock s r = Held) → rhead s r = Some h →
              h ≤ cseq s ∧ rep s r = obj_at s h;
    ri_owned : ∀ r t, rlock s r = Owned t → t < N ∧ owns (pc s t) = Some r;
    ri_owns : ∀ t r, t < N → owns (pc s t) = Some r → rlock s r = Owned t;
    ri_threads : ∀ t, t < N → tinv s t (pc s t);
    ri_idle : ∀ t, N ≤ t → pc s t = TIdle;
    ri_ids : ∀ t t' i, t ≠ t' → pid (pc s t) = Some i → pid (pc s t') ≠ Some i;
    ri_targets : ∀ t t' o, t ≠ t' → target (pc s t) = Some o → target (pc s t') ≠ Some o;
  }.

  (** ** Lemmas on transitions *)

  Lemma entries_app ch1 ch2 : entries (ch1 ++ ch2) = entries ch1 ++ entries ch2.
  Proof. unfold entries. by rewrite map_app, concat_app. Qed.

  Lemma entries_snoc ch l : entries (ch ++ [l]) = entries ch ++ l_batch l.
  Proof. rewrite entries_app. unfold entries. simpl. by rewrite app_nil_r. Qed.

  Lemma batch_ok_snoc σ bat σ1 e σ2 :
    batch_ok σ bat σ1 → exec (e_op e) σ1 = (σ2, e_val e) → batch_ok σ (bat ++ [e]) σ2.
  Proof.
    induction 1 as [σ | σ σa σb e' bat' He' Hb IH]; intros He; simpl.
    - econstructor; [done | constructor].
    - econstructor; [done |]. by apply IH.
  Qed.

  Lemma batch_ok_foldl σ bat σ' :
    batch_ok σ bat σ' → foldl (λ σ e, (exec (e_op e) σ).1) σ bat = σ'.
  Proof. induction 1 as [| σ σ1 σ2 e bat He Hb IH]; [done |]. simpl. by rewrite He. Qed.

  Lemma chain_ok_snoc ch a l :
    chain_ok ch → ch !! pred (length ch) = Some a → batch_ok (l_obj a) (l_batch l) (l_obj l) →
    chain_ok (ch ++ [l]).
  Proof.
    intros [(l0 & H0 & Hi & Hb) Hs] Ha Hl. split.
    - exists l0. rewrite lookup_app_l; [done |]. apply lookup_lt_Some in H0. lia.
    - intros k a' b Hk Hk'. apply lookup_lt_Some in Ha as Hlen.
      destruct (decide (S k < length ch)) as [Hlt | Hge].
      + rewrite lookup_app_l in Hk; [| lia]. rewrite lookup_app_l in Hk'; [| lia]. by eapply Hs.
      + apply lookup_lt_Some in Hk' as Hk''. rewrite app_length in Hk''. simpl in Hk''.
        assert (S k = length ch) as Hkl by lia.
        rewrite lookup_app_l in Hk; [| lia]. rewrite lookup_app_r in Hk'; [| lia].
        rewrite Hkl, Nat.sub_diag in Hk'. simpl in Hk'. injection Hk' as <-.
        assert (k = pred (length ch)) as -> by lia. rewrite Ha in Hk. by injection Hk as <-.
  Qed.

  Lemma chain_ok_take ch n : chain_ok ch → 0 < n → chain_ok (take n ch).
  Proof.
    intros [(l0 & H0 & Hi & Hb) Hs] Hn. split.
    - exists l0. rewrite lookup_take; [done | lia].
    - intros k a b Hk Hk'. apply lookup_lt_Some in Hk' as Hlt. rewrite take_length in Hlt.
      rewrite lookup_take in Hk; [| lia]. rewrite lookup_take in Hk'; [| lia]. by eapply Hs.
  Qed.

  Lemma drop_take_snoc ch h s0 b :
    h ≤ s0 → ch !! S s0 = Some b →
    drop (S h) (take (S (S s0)) ch) = drop (S h) (take (S s0) ch) ++ [b].
  Proof.
    intros Hh Hb. rewrite (take_S_r ch (S s0) b Hb), drop_app_le; [done |].
    rewrite take_length_le; [lia |]. apply lookup_lt_Some in Hb. lia.
  Qed.

  (** Replaying the logs of [h+1 .. s0] on the state at [h] gives the state
      at [s0]: [applyRedologs] brings a valid replica up to date. *)
  Lemma replay_ok ch h s0 a :
    chain_ok ch → h ≤ s0 → ch !! s0 = Some a →
    replay ch h s0 (from_option l_obj init (ch !! h)) = l_obj a.
  Proof.
    intros Hc Hh. revert a. induction Hh as [| s0 Hh IH]; intros a Ha.
    - unfold replay. rewrite drop_ge; [| rewrite take_length; lia]. simpl. by rewrite Ha.
    - destruct (lookup_lt_is_Some_2 ch s0) as [b Hb].
      { apply lookup_lt_Some in Ha. lia. }
      unfold replay in *. rewrite (drop_take_snoc ch h s0 a Hh Ha), entries_snoc, foldl_app.
      rewrite (IH b Hb). apply batch_ok_foldl. by apply (proj2 Hc s0).
  Qed.

  (** The durable prefix grows by the fresh points. *)
  Lemma durable_split ch p q :
    p ≤ q → durable ch q = durable ch p ++ entries (drop (S p) (take (S q) ch)).
  Proof.
    intros Hpq. unfold durable. rewrite <- entries_app.
    rewrite <- (take_drop (S p) (take (S q) ch)) at 1. rewrite take_take.
    do 3 f_equal. lia.
  Qed.

  Lemma points_map_pt l : points (map pt l) = map epoint l.
  Proof. induction l as [| e l IH]; [done |]. simpl. by f_equal. Qed.

  Lemma erase_map_pt l : erase (map pt l) = [].
  Proof. induction l as [| e l IH]; [done |]. simpl. done. Qed.

  (** The operations of a batch, then [rest], are a run of the
      specification. *)
  Lemma runs_batch σ bat σ' rest :
    batch_ok σ bat σ' → runs spec σ' rest → runs spec σ (effects (map epoint bat) ++ rest).
  Proof.
    induction 1 as [| σ σ1 σ2 e bat He Hb IH]; intros Hr; [done |].
    simpl. eapply runs_cons; [exact He | by apply IH].
  Qed.

  Lemma runs_chain ch q a rest :
    chain_ok ch → ch !! q = Some a → runs spec (l_obj a) rest →
    runs spec init (effects (map epoint (entries (take (S q) ch))) ++ rest).
  Proof.
    intros Hc. revert a rest. induction q as [| q IH]; intros a rest Ha Hr.
    - destruct Hc as [(l0 & H0 & Hi & Hb) _]. rewrite H0 in Ha. injection Ha as <-.
      destruct ch as [| l ch]; [done |]. simpl in H0. injection H0 as ->.
      unfold entries. simpl. rewrite Hb. simpl. by rewrite <- Hi.
    - destruct (lookup_lt_is_Some_2 ch q) as [b Hb].
      { apply lookup_lt_Some in Ha. lia. }
      rewrite (take_S_r ch (S q) a Ha), entries_snoc, map_app. unfold effects.
      rewrite map_app, <- app_assoc.
      apply (IH b); [done |]. apply runs_batch with (l_obj a); [| done].
      by apply (proj2 Hc q).
  Qed.

  Lemma NoDup_map_inj {A B} (f : A → B) l x y :
    NoDup (map f l) → x ∈ l → y ∈ l → f x = f y → x = y.
  Proof.
    induction l as [| z l IH]; [by intros _ ?%elem_of_nil |].
    intros Hnd' Hx Hy Hf. simpl in Hnd'. apply stdpp.list.NoDup_cons in Hnd' as [Hz Hnd].
    apply elem_of_cons in Hx, Hy.
    destruct Hx as [-> | Hx], Hy as [-> | Hy]; [done | | | by apply IH].
    - exfalso. apply Hz. rewrite Hf. by apply elem_of_list_fmap_1.
    - exfalso. apply Hz. rewrite <- Hf. by apply elem_of_list_fmap_1.
  Qed.

  (** ** Frames: the other threads' invariants under a step *)

  (** The pending operations of [s'] are those of [s], except operations
      already committed that returned. *)
  Definition pend_sim (s s' : rstate) : Prop :=
    ∀ x, (pid (pc s' x) = pid (pc s x) ∧ pop (pc s' x) = pop (pc s x) ∧
          paseq (pc s' x) = paseq (pc s x)) ∨
         (pc s' x = TIdle ∧ ∃ i, pid (pc s x) = Some i ∧ i ∈ ids (entries (ch s))).

  Lemma sim_ok_frame s s' t s0 ap rs j bat :
    ch s' = ch s → ann s' = ann s → pend_sim s s' →
    sim_ok s t s0 ap rs j bat → sim_ok s' t s0 ap rs j bat.
  Proof.
    intros Hch Hann Hps (H1 & H2 & H3 & H4 & H5 & H6).
    unfold sim_ok, app_at, res_at. rewrite Hch, Hann.
    split; [| split; [| split; [| split; [| split]]]].
    - intros x Hx. destruct (Hps x) as [(-> & _ & _) | (-> & i & Hi & Hin)]; [by apply H1 |].
      split; [done |]. intros _. apply H1; [done |]. rewrite Hi. by left.
    - intros x Hx Hc Hnn. destruct (Hps x) as [(Hp & _ & Ha) | (Hp & i & Hi & Hin)].
      + apply H2; [done | | by rewrite <- Hp]. destruct Hc as [-> | (a' & Ha' & ?)]; [by left |].
        right. exists a'. by rewrite <- Ha.
      + rewrite Hp in Hnn. done.
    - apply H3.
    - apply H4.
    - intros e He. destruct (H5 e He) as (Hj & Hp & Ho & Hr & Hn).
      destruct (Hps (e_th e)) as [(Hp' & Ho' & _) | (_ & i & Hi & Hin)].
      + rewrite Hp', Ho'. done.
      + exfalso. rewrite Hp in Hi. injection Hi as <-. done.
    - done.
  Qed.

  Lemma pend_ok_frame s s' t i op a :
    ch s' = ch s → ann s' = ann s → req s' = req s →
    (∀ e, e ∈ erase (xh s) → e ∈ erase (xh s')) →
    pend_ok s t i op a → pend_ok s' t i op a.
  Proof.
    intros Hch Hann Hreq Hxh (H1 & H2 & H3 & H4 & H5 & H6).
    unfold pend_ok, cseq, app_at, res_at. rewrite Hch, Hann, Hreq. split_and!; auto.
  Qed.

  Lemma done_ok_frame s s' t i op s0 v :
    ch s' = ch s → ann s' = ann s → req s' = req s →
    (∀ e, e ∈ erase (xh s) → e ∈ erase (xh s')) →
    done_ok s t i op s0 v → done_ok s' t i op s0 v.
  Proof.
    intros Hch Hann Hreq Hxh (H1 & H2 & H3 & H4 & H5 & H6).
    unfold done_ok, cseq, app_at, res_at. rewrite Hch, Hann, Hreq. unfold durable in *. split_and!; auto.
  Qed.

  Lemma own_ok_frame s s' own :
    ch s' = ch s → (∀ r, own = Some r → rhead s' r = rhead s r ∧ rep s' r = rep s r) →
    own_ok s own → own_ok s' own.
  Proof.
    intros Hch Hr. destruct own as [r |]; [| done]. simpl.
    destruct (Hr r eq_refl) as [-> ->]. unfold cseq, obj_at. by rewrite Hch.
  Qed.

  Lemma tinv_frame s s' t p :
    ch s' = ch s → ann s' = ann s → req s' = req s →
    (∀ e, e ∈ erase (xh s) → e ∈ erase (xh s')) → pseq s ≤ pseq s' → pend_sim s s' →
    (∀ r, owns p = Some r ∨ target p = Some r →
       rlock s' r = rlock s r ∧ rhead s' r = rhead s r ∧ rep s' r = rep s r) →
    tinv s t p → tinv s' t p.
  Proof.
    intros Hch Hann Hreq Hxh Hp Hps Hr.
    assert (∀ i op a, pend_ok s t i op a → pend_ok s' t i op a) as Hpend.
    { intros. by eapply pend_ok_frame. }
    assert (∀ own, (∀ r, own = Some r → owns p = Some r) → own_ok s own → own_ok s' own) as Hown.
    { intros own Ho. apply own_ok_frame; [done |]. intros r Hor.
      destruct (Hr r) as (_ & ? & ?); [left; by apply Ho | done]. }
    destruct p as [| i op a k own | i op a k own s0 ap rs | i op a k r s0 ap rs pre j bat
                   | i op s0 o v | i op s0 o v | i op a own]; simpl.
    - unfold cseq, app_at. by rewrite Hch, Hann.
    - intros (? & ? & ? & ?). unfold cseq. rewrite Hch. split_and!; auto.
    - intros (? & ? & ? & ? & ? & -> & ->). unfold cseq, app_at, res_at. rewrite Hch.
      split_and!; auto.
    - intros (? & ? & ? & ? & -> & Hb & ? & Hsim).
      destruct (Hr r) as (_ & _ & Hrep); [by left |].
      unfold cseq, obj_at. rewrite Hch, Hrep. split_and!; auto.
      intros Hs0. apply (sim_ok_frame s); [done | done | done |]. apply Hsim. unfold cseq.
      done.
    - intros (? & Hl & Hh). destruct (Hr o) as (Hl' & Hh' & _); [by right |].
      rewrite Hl', Hh'. split_and!; auto. by eapply done_ok_frame.
    - intros (? & Hl & Hh & Hps0). destruct (Hr o) as (Hl' & Hh' & _); [by right |].
      rewrite Hl', Hh'. split_and!; auto; [by eapply done_ok_frame | lia].
    - intros (? & ? & ?). unfold cseq. rewrite Hch. split_and!; auto.
  Qed.

  Lemma elem_of_durable ch p e : e ∈ durable ch p → e ∈ entries ch.
  Proof.
    unfold durable. intros He. rewrite <- (take_drop (S p) ch), entries_app.
    apply elem_of_app. by left.
  Qed.

  (** ** Consequences of the invariant *)
  Section consequences.
    Context (s : rstate) (Hinv : rinv s).

    Lemma busy_lt_N t : pc s t ≠ TIdle → t < N.
    Proof.
      intros Hp. destruct (decide (t < N)) as [? | Hge]; [done |].
      exfalso. apply Hp. apply (ri_idle _ Hinv). lia.
    Qed.

    Lemma pid_lt_N t i : pid (pc s t) = Some i → t < N.
    Proof. intros Hp. apply busy_lt_N. intros Hi. by rewrite Hi in Hp. Qed.

    (** The combining consensus's toggle, for every thread. *)
    Lemma pend_status t i :
      pid (pc s t) = Some i →
      (app_at s (cseq s) t = ann s t ↔ i ∈ ids (entries (ch s))) ∧ pop (pc s t) = Some (req s t) ∧
      (∃ op, pop (pc s t) = Some op ∧ Invoke i t op ∈ erase (xh s)) ∧
      ∀ e, e ∈ entries (ch s) → e_id e = i → e_th e = t ∧ Some (e_op e) = pop (pc s t) ∧
        res_at s (cseq s) t = e_val e.
    Proof.
      intros Hp. pose proof (ri_threads _ Hinv t (pid_lt_N t i Hp)) as Ht.
      destruct (pc s t) as [| i' op a k own | i' op a k own s0 ap rs | i' op a k r s0 ap rs pre j bat
                           | i' op s0 o v | i' op s0 o v | i' op a own];
        simpl in Hp; try done; injection Hp as <-; simpl in Ht |- *.
      all: try (destruct Ht as [(Hinv' & Hreq & _ & H1 & _ & H3) _];
                split; [done | split; [by rewrite Hreq | split; [by eauto |]]];
                intros e He Hi; destruct (H3 e He Hi) as (? & -> & ?); done).
      all: destruct Ht as [(Hinv' & Hreq & Happ & _ & Hdur & H3) _];
           split; [split; [intros _ | done] | split; [by rewrite Hreq | split; [by eauto |]]];
           [| intros e He Hi; destruct (H3 e He Hi) as (? & -> & ?); done].
      all: apply elem_of_list_fmap; exists (i', t, op, v); split; [done |];
           by apply elem_of_durable in Hdur.
    Qed.

    Lemma idle_status t : t < N → pc s t = TIdle → app_at s (cseq s) t = ann s t.
    Proof. intros Ht Hp. pose proof (ri_threads _ Hinv t Ht) as Hi. by rewrite Hp in Hi. Qed.

    Lemma owned_not_cur r t : rlock s r = Owned t → r ≠ cidx s ∧ r ≠ pidx s.
    Proof.
      intros Hr. destruct (ri_cur _ Hinv) as (_ & _ & Hc). destruct (ri_per _ Hinv) as (_ & _ & Hp).
      split; intros ->; congruence.
    Qed.
  End consequences.

  (** ** Preservation, step by step *)

  (** A step of thread [t] that only moves its program counter. *)
  Lemma rinv_st_pc s t p' :
    rinv s → pc s t ≠ TIdle →
    pid p' = pid (pc s t) → pop p' = pop (pc s t) → paseq p' = paseq (pc s t) →
    owns p' = owns (pc s t) → target p' = target (pc s t) →
    tinv (st_pc s t p') t p' → rinv (st_pc s t p').
  Proof.
    intros Hinv Hbusy Hpid Hpop Hpa Hown Htg Ht. pose proof (busy_lt_N s Hinv t Hbusy) as HtN.
    destruct Hinv as [Hc Hnd Hinvk Hfr Hps Hpts Hok Hcur Hper Hcons Howned Howns Hth Hidle Hids Htgs].
    assert (pend_sim s (st_pc s t p')) as Hsim.
    { intros x. left. simpl. destruct (decide (x = t)) as [-> | Hx].
      - by rewrite upd_eq, Hpid, Hpop, Hpa.
      - by rewrite upd_ne. }
    split; simpl; try done.
    - intros r t' Hr. destruct (Howned r t' Hr) as [? Ho]. split; [done |].
      destruct (decide (t' = t)) as [-> | Hne]; [by rewrite upd_eq, Hown | by rewrite upd_ne].
    - intros t' r Ht' Ho. apply Howns; [done |].
      destruct (decide (t' = t)) as [-> | Hne]; [by rewrite upd_eq, Hown in Ho | by rewrite upd_ne in Ho].
    - intros t' Ht'. destruct (decide (t' = t)) as [-> | Hne]; [by rewrite upd_eq |].
      rewrite upd_ne; [| done]. apply (tinv_frame s); try done. by apply Hth.
    - intros t' Ht'. rewrite upd_ne; [by apply Hidle | lia].
    - intros t1 t2 i Hne. unfold upd.
      destruct (decide (t1 = t)) as [-> | H1]; destruct (decide (t2 = t)) as [-> | H2];
        [done | rewrite Hpid; by apply Hids | rewrite Hpid; by apply Hids | by apply Hids].
    - intros t1 t2 o Hne. unfold upd.
      destruct (decide (t1 = t)) as [-> | H1]; destruct (decide (t2 = t)) as [-> | H2];
        [done | rewrite Htg; by apply Htgs | rewrite Htg; by apply Htgs | by apply Htgs].
  Qed.

  Lemma rinv_snapshot s t i op a k own :
    rinv s → pc s t = TAnn i op a k own →
    rinv (st_pc s t (THave i op a k own (cseq s) (app_at s (cseq s)) (res_at s (cseq s)))).
  Proof.
    intros Hinv Hp. pose proof (ri_threads _ Hinv t) as Ht.
    assert (t < N) as HtN by (apply (busy_lt_N s Hinv); by rewrite Hp).
    specialize (Ht HtN). rewrite Hp in Ht. destruct Ht as (Hpend & Hak & Hk & Hown).
    apply rinv_st_pc; rewrite ?Hp; try done.
    all: simpl; split_and!; try done; try lia; [by eapply pend_ok_frame | by eapply own_ok_frame].
  Qed.

  (** A step of thread [t] that works on its replica [r] (locked by it, or
      free and locked now). *)
  Lemma rinv_own_step s t p' r σ hd :
    rinv s → pc s t ≠ TIdle →
    (rlock s r = Owned t ∨ (rlock s r = Free ∧ owns (pc s t) = None)) →
    pid p' = pid (pc s t) → pop p' = pop (pc s t) → paseq p' = paseq (pc s t) →
    owns p' = Some r → target p' = None → target (pc s t) = None →
    tinv (own_step s t p' r σ hd) t p' → rinv (own_step s t p' r σ hd).
  Proof.
    intros Hinv Hbusy Hr Hpid Hpop Hpa Hown Htg Htg0 Ht.
    pose proof (busy_lt_N s Hinv t Hbusy) as HtN.
    assert (r ≠ cidx s ∧ r ≠ pidx s) as [Hrc Hrp].
    { destruct (ri_cur _ Hinv) as (_ & _ & Hc). destruct (ri_per _ Hinv) as (_ & _ & Hp).
      split; intros ->; destruct Hr as [? | [? _]]; congruence. }
    (* the replicas of the other threads are not [r] *)
    assert (∀ t' r', t' ≠ t → t' < N → (owns (pc s t') = Some r' ∨ target (pc s t') = Some r') →
              r' ≠ r) as Hother.
    { intros t' r' Hne Ht' [Ho | Ho] ->.
      - pose proof (ri_owns _ Hinv t' r Ht' Ho) as Hl.
        destruct Hr as [Hr | [Hr _]]; rewrite Hl in Hr; congruence.
      - pose proof (ri_threads _ Hinv t' Ht') as Hti.
        destruct (pc s t'); simpl in Ho; try done; injection Ho as ->; destruct Hti as (_ & Hl & _);
          destruct Hr as [Hr | [Hr _]]; congruence. }
    destruct Hinv as [Hc Hnd Hinvk Hfr Hps Hpts Hok Hcur Hper Hcons Howned Howns Hth Hidle Hids Htgs].
    assert (pend_sim s (own_step s t p' r σ hd)) as Hsim.
    { intros x. left. simpl. destruct (decide (x = t)) as [-> | Hx].
      - by rewrite upd_eq, Hpid, Hpop, Hpa.
      - by rewrite upd_ne. }
    split; simpl; try done.
    - by rewrite !upd_ne.
    - by rewrite !upd_ne.
    - intros r' h Hl Hh. destruct (decide (r' = r)) as [-> | Hne].
      + rewrite upd_eq in Hl. by destruct Hl.
      + upd_simpl. by apply Hcons.
    - intros r' t' Hl. destruct (decide (r' = r)) as [-> | Hne].
      + rewrite upd_eq in Hl. injection Hl as <-. split; [done |]. by rewrite upd_eq.
      + rewrite upd_ne in Hl; [| done]. destruct (Howned r' t' Hl) as [? Ho]. split; [done |].
        destruct (decide (t' = t)) as [-> | Hne']; [| by rewrite upd_ne].
        exfalso. destruct Hr as [Hr | [_ Hr]].
        * destruct (Howned r t Hr) as [_ Ho']. congruence.
        * congruence.
    - intros t' r' Ht' Ho. destruct (decide (t' = t)) as [-> | Hne].
      + rewrite upd_eq, Hown in Ho. injection Ho as <-. by rewrite upd_eq.
      + rewrite upd_ne in Ho; [| done]. rewrite upd_ne; [by apply Howns | ].
        apply (Hother t' r'); auto.
    - intros t' Ht'. destruct (decide (t' = t)) as [-> | Hne]; [by rewrite upd_eq |].
      rewrite upd_ne; [| done]. apply (tinv_frame s); try done; [| by apply Hth].
      intros r' Hr'. simpl. assert (r' ≠ r) by (apply (Hother t' r'); auto).
      by rewrite !upd_ne.
    - intros t' Ht'. rewrite upd_ne; [by apply Hidle | lia].
    - intros t1 t2 i Hne. unfold upd.
      destruct (decide (t1 = t)) as [-> | H1]; destruct (decide (t2 = t)) as [-> | H2];
        [done | rewrite Hpid; by apply Hids | rewrite Hpid; by apply Hids | by apply Hids].
    - intros t1 t2 o Hne. unfold upd.
      destruct (decide (t1 = t)) as [-> | H1]; destruct (decide (t2 = t)) as [-> | H2];
        [done | by rewrite Htg | by rewrite Htg | by apply Htgs].
  Qed.

  (** The thread invariant of [t] after a step of [t] that changes nothing
      it depends on but its program counter. *)
  Lemma pend_ok_st_pc s t t' p i op a :
    pend_ok s t' i op a → pend_ok (st_pc s t p) t' i op a.
  Proof. by apply pend_ok_frame. Qed.
  Lemma own_ok_st_pc s t p own : own_ok s own → own_ok (st_pc s t p) own.
  Proof. by apply own_ok_frame. Qed.

  Lemma tinv_of s t : rinv s → pc s t ≠ TIdle → tinv s t (pc s t).
  Proof. intros Hinv Hb. apply (ri_threads _ Hinv), (busy_lt_N s Hinv t Hb). Qed.

  Lemma rinv_abandon s t i op a k own s0 ap rs :
    rinv s → pc s t = THave i op a k own s0 ap rs → cseq s ≠ s0 →
    rinv (st_pc s t (if decide (k = 0) then TAnn i op a 1 own else TFinal i op a own)).
  Proof.
    intros Hinv Hp Hs0. pose proof (tinv_of s t Hinv) as Ht. rewrite Hp in Ht.
    destruct (Ht ltac:(done)) as (Hpend & Hak & Hs & Hk & Hown & _).
    case_decide; (apply rinv_st_pc; rewrite ?Hp; try done);
      simpl; split_and!; try apply pend_ok_st_pc; try apply own_ok_st_pc; try done;
      unfold cseq in *; simpl; lia.
  Qed.

  Lemma rinv_break s t i op a k own s0 ap rs :
    rinv s → pc s t = THave i op a k own s0 ap rs → s0 + 2 ≤ cseq s →
    rinv (st_pc s t (TFinal i op a own)).
  Proof.
    intros Hinv Hp Hs0. pose proof (tinv_of s t Hinv) as Ht. rewrite Hp in Ht.
    destruct (Ht ltac:(done)) as (Hpend & Hak & Hs & Hk & Hown & _).
    apply rinv_st_pc; rewrite ?Hp; try done.
    simpl. split_and!; try apply pend_ok_st_pc; try apply own_ok_st_pc; try done.
    unfold cseq in *; simpl; lia.
  Qed.

  Lemma rinv_prepare s t i op a k own s0 ap rs r σ :
    rinv s → pc s t = THave i op a k own s0 ap rs →
    (own = Some r ∨ (own = None ∧ r < NR ∧ rlock s r = Free)) →
    ((cseq s = s0 ∧ σ = rep s (cidx s)) ∨
     (∃ h, rhead s r = Some h ∧ h ≤ s0 ∧ σ = replay (ch s) h s0 (rep s r))) →
    rinv (own_step s t (TSim i op a k r s0 ap rs σ 0 []) r σ (Some s0)).
  Proof.
    intros Hinv Hp Hr Hσ. pose proof (tinv_of s t Hinv) as Ht. rewrite Hp in Ht.
    destruct (Ht ltac:(done)) as (Hpend & Hak & Hs & Hk & Hown & Hap & Hrs).
    assert (rlock s r = Owned t ∨ (rlock s r = Free ∧ owns (pc s t) = None)) as Hlk.
    { destruct Hr as [-> | (-> & _ & Hf)]; [left | right; by rewrite Hp].
      apply (ri_owns _ Hinv); [apply (busy_lt_N s Hinv); by rewrite Hp | by rewrite Hp]. }
    (* the replica is consistent with its head *)
    assert (∀ h, rhead s r = Some h → h ≤ cseq s ∧ rep s r = obj_at s h) as Hrc.
    { destruct Hr as [-> | (-> & _ & Hf)]; [done |]. intros h Hh. apply (ri_cons _ Hinv); auto. }
    assert (σ = obj_at s s0) as Hσ0.
    { destruct Hσ as [[<- ->] | (h & Hh & Hle & ->)]; [apply (ri_cur _ Hinv) |].
      destruct (Hrc h Hh) as [_ ->]. destruct (lookup_lt_is_Some_2 (ch s) s0) as [l Hl].
      { unfold cseq in Hs. destruct (ri_chain _ Hinv) as [(l0 & H0 & _) _].
        apply lookup_lt_Some in H0. lia. }
      unfold obj_at. rewrite Hl. simpl. by apply replay_ok; [apply (ri_chain _ Hinv) | |]. }
    rewrite Hp in Hlk. apply rinv_own_step; rewrite ?Hp; try done.
    unfold own_step. simpl. rewrite upd_eq. split_and!; try done; try lia.
    all: try match goal with |- batch_ok _ [] _ => constructor end.
    intros _. split_and!; try done.
    - intros x Hx. lia.
    - intros x Hx. lia.
    - intros x _. by rewrite Hap.
    - intros x _. by rewrite Hrs.
    - intros e He. by apply elem_of_nil in He.
    - constructor.
  Qed.

  Lemma sim_ok_skip s t s0 ap rs j bat :
    rinv s → s0 = cseq s → j < N → ap j = ann s j →
    sim_ok s t s0 ap rs j bat → sim_ok s t s0 ap rs (S j) bat.
  Proof.
    intros Hinv -> Hj Heq (H1 & H2 & H3 & H4 & H5 & H6). split_and!; try done.
    - intros x Hx. destruct (decide (x = j)) as [-> | Hne]; [| apply H1; lia].
      split; [| intros _; done]. intros _. destruct (pid (pc s j)) as [i' |] eqn:Hp; [| done].
      left. apply (pend_status s Hinv j i' Hp). rewrite <- (H3 j); [done | lia].
    - intros x Hx Hc Hnn. destruct (decide (x = j)) as [-> | Hne]; [done |].
      apply H2; [lia | done | done].
    - intros x Hx. apply H3. lia.
    - intros e He. destruct (H5 e He) as (? & ?). split; [lia | done].
  Qed.

  Lemma sim_ok_apply s t s0 ap rs j bat i' v :
    rinv s → s0 = cseq s → j < N → ap j ≠ ann s j → pid (pc s j) = Some i' →
    sim_ok s t s0 ap rs j bat →
    sim_ok s t s0 (upd ap j (ann s j)) (upd rs j v) (S j) (bat ++ [(i', j, req s j, v)]).
  Proof.
    intros Hinv -> Hj Hne Hp (H1 & H2 & H3 & H4 & H5 & H6).
    destruct (pend_status s Hinv j i' Hp) as (Hst & Hpop & _ & _).
    assert (i' ∉ ids (entries (ch s))) as Hni.
    { intros Hin. apply Hne. rewrite H3; [| done]. by apply Hst. }
    unfold sim_ok. split_and!.
    - intros x Hx. unfold ids at 2. rewrite map_app.
      destruct (decide (x = j)) as [-> | Hxj]; upd_simpl.
      + rewrite Hp. split; [intros _; right; apply elem_of_app; right; by left | done].
      + rewrite (H1 x); [| lia]. destruct (pid (pc s x)) as [i'' |] eqn:Hpx; [| done].
        split; intros [? | Hin]; [by left | right; apply elem_of_app; by left | by left |].
        apply elem_of_app in Hin as [? | Hin%elem_of_list_singleton]; [by right |].
        subst i''. exfalso. by apply (ri_ids _ Hinv x j i' Hxj Hpx).
    - intros x Hx Hc Hnn. destruct (decide (x = j)) as [-> | Hxj]; upd_simpl; [done |].
      apply H2; [lia | done | done].
    - intros x Hx. assert (x ≠ j) by lia. upd_simpl. apply H3. lia.
    - intros x Hx. rewrite map_app in Hx. assert (x ≠ j).
      { intros ->. apply Hx. apply elem_of_app. right. by left. }
      upd_simpl. apply H4. intros ?. apply Hx. apply elem_of_app. by left.
    - intros e [He | He%elem_of_list_singleton]%elem_of_app.
      + destruct (H5 e He) as (Hlt & ? & ? & Hr & ?). assert (e_th e ≠ j) by lia.
        upd_simpl. split_and!; try done. lia.
      + subst e. unfold e_th, e_id, e_op, e_val. simpl. upd_simpl. split_and!; try done. lia.
    - rewrite map_app. apply NoDup_app. split_and!; [done | | apply NoDup_singleton].
      intros x Hx Hin. apply elem_of_list_singleton in Hin.
      apply elem_of_list_fmap in Hx as (e & Hxe & He). destruct (H5 e He) as (? & _).
      unfold e_th in Hin. simpl in Hin. unfold e_th in *. lia.
  Qed.

  Lemma rinv_scan s t i op a k r s0 ap rs pre j bat :
    rinv s → pc s t = TSim i op a k r s0 ap rs pre j bat → j < N →
    rinv (if decide (ap j = ann s j) then st_pc s t (TSim i op a k r s0 ap rs pre (S j) bat)
          else
            let σv := exec (req s j) (rep s r) in
            own_step s t (TSim i op a k r s0 (upd ap j (ann s j)) (upd rs j σv.2) pre (S j)
                            (bat ++ [(from_option id 0 (pid (pc s j)), j, req s j, σv.2)]))
              r σv.1 (rhead s r)).
  Proof.
    intros Hinv Hp Hj. pose proof (tinv_of s t Hinv) as Ht. rewrite Hp in Ht.
    destruct (Ht ltac:(done)) as (Hpend & Hak & Hs & Hk & Hpre & Hb & HjN & Hsim).
    assert (t < N) as HtN by (apply (busy_lt_N s Hinv); by rewrite Hp).
    case_decide as Heq.
    - apply rinv_st_pc; rewrite ?Hp; try done.
      simpl. split_and!; try done; try lia.
      intros Hs0. apply (sim_ok_frame s); try done.
      + intros x. left. simpl. destruct (decide (x = t)) as [-> | Hx]; upd_simpl; [by rewrite Hp |].
        done.
      + apply sim_ok_skip; try done. by apply Hsim.
    - assert (rlock s r = Owned t) as Hr by (apply (ri_owns _ Hinv); [done | by rewrite Hp]).
      apply rinv_own_step; rewrite ?Hp; try done; [by left |].
      unfold own_step. simpl. upd_simpl. split_and!; try done; try lia.
      + eapply batch_ok_snoc; [done |]. unfold e_op, e_val. simpl. by destruct (exec _ _).
      + intros Hs0. apply (sim_ok_frame s); try done.
        * intros x. left. simpl. destruct (decide (x = t)) as [-> | Hx]; upd_simpl; [by rewrite Hp |].
          done.
        * destruct (pid (pc s j)) as [i' |] eqn:Hpj.
          -- apply sim_ok_apply; try done. by apply Hsim.
          -- exfalso. apply Heq. destruct (Hsim Hs0) as (_ & _ & H3 & _).
             rewrite H3; [| done]. rewrite Hs0. apply (idle_status s Hinv j Hj).
             by destruct (pc s j).
  Qed.

  Lemma rinv_casfail s t i op a k r s0 ap rs pre bat :
    rinv s → pc s t = TSim i op a k r s0 ap rs pre N bat → cseq s ≠ s0 →
    rinv (own_step s t (if decide (k = 0) then TAnn i op a 1 (Some r) else TFinal i op a (Some r))
            r pre (Some s0)).
  Proof.
    intros Hinv Hp Hs0. pose proof (tinv_of s t Hinv) as Ht. rewrite Hp in Ht.
    destruct (Ht ltac:(done)) as (Hpend & Hak & Hs & Hk & Hpre & Hb & HjN & Hsim).
    assert (t < N) as HtN by (apply (busy_lt_N s Hinv); by rewrite Hp).
    assert (rlock s r = Owned t) as Hr by (apply (ri_owns _ Hinv); [done | by rewrite Hp]).
    assert (own_ok (own_step s t (TAnn i op a 1 (Some r)) r pre (Some s0)) (Some r) ∧
            own_ok (own_step s t (TFinal i op a (Some r)) r pre (Some s0)) (Some r)) as [Ho1 Ho2].
    { unfold own_step, own_ok, cseq, obj_at in *. simpl. upd_simpl.
      split; intros h [= <-]; split; [lia | done | lia | done]. }
    case_decide; (apply rinv_own_step; rewrite ?Hp; try done; [by left |]);
      simpl; split_and!; try done; unfold cseq in *; simpl; lia.
  Qed.

  (** *** Persisting [curComb] *)

  Lemma chain_len s : rinv s → length (ch s) = S (cseq s).
  Proof.
    intros Hinv. destruct (ri_chain _ Hinv) as [(l0 & H0 & _) _]. apply lookup_lt_Some in H0.
    unfold cseq. lia.
  Qed.

  Lemma durable_all s : rinv s → durable (ch s) (cseq s) = entries (ch s).
  Proof. intros Hinv. unfold durable. rewrite take_ge; [done |]. rewrite (chain_len s Hinv). lia. Qed.

  Lemma durable_nodup s q : rinv s → NoDup (ids (durable (ch s) q)).
  Proof.
    intros Hinv. pose proof (ri_nodup _ Hinv) as Hnd. unfold durable, ids in *.
    rewrite <- (take_drop (S q) (ch s)), entries_app, map_app in Hnd.
    by apply NoDup_app in Hnd as [? _].
  Qed.

  Lemma durable_mono ch p q e : p ≤ q → e ∈ durable ch p → e ∈ durable ch q.
  Proof. intros Hpq He. rewrite (durable_split ch p q Hpq). apply elem_of_app. by left. Qed.

  Lemma erase_fresh ch p q : erase (fresh_points ch p q) = [].
  Proof. apply erase_map_pt. Qed.

  Lemma points_persist s :
    rinv s →
    points (xh s ++ fresh_points (ch s) (pseq s) (cseq s)) = map epoint (durable (ch s) (cseq s)).
  Proof.
    intros Hinv. unfold fresh_points. rewrite points_app, points_map_pt, (ri_points _ Hinv).
    rewrite (durable_split (ch s) (pseq s) (cseq s) (ri_pseq _ Hinv)). by rewrite map_app.
  Qed.

  Lemma ok_persist s :
    rinv s → prefix_ok point_ok (xh s ++ fresh_points (ch s) (pseq s) (cseq s)).
  Proof.
    intros Hinv. apply prefix_ok_app; [apply (ri_ok _ Hinv) |].
    intros k1 x k2 Hk. unfold fresh_points in Hk.
    apply (f_equal (λ l, l)) in Hk. symmetry in Hk.
    destruct (map_eq_app _ _ _ _ (eq_sym Hk)) as (l1 & l2 & Hl & Hm1 & Hm2).
    destruct l2 as [| e l2]; [by simpl in Hm2 |]. simpl in Hm2. injection Hm2 as <- Hm2.
    subst k1. simpl. pose proof (durable_split (ch s) (pseq s) (cseq s) (ri_pseq _ Hinv)) as Hsp.
    pose proof (durable_nodup s (cseq s) Hinv) as Hnd. rewrite Hsp, Hl in Hnd.
    assert (e ∈ entries (ch s)) as He.
    { rewrite <- (durable_all s Hinv), Hsp, Hl. apply elem_of_app. right.
      apply elem_of_app. right. by left. }
    split.
    - exists (e_th e). rewrite erase_app, erase_map_pt, app_nil_r. by apply (ri_invoked _ Hinv).
    - intros op' v' Hin. apply elem_of_app in Hin as [Hin | Hin].
      + apply elem_of_points in Hin. rewrite (ri_points _ Hinv) in Hin.
        apply elem_of_list_fmap in Hin as (e' & He'1 & He').
        unfold ids in Hnd. rewrite !map_app in Hnd. simpl in Hnd.
        apply NoDup_app in Hnd as (_ & Hdis & _). apply (Hdis (e_id e')).
        * by apply elem_of_list_fmap_1.
        * unfold epoint in He'1. injection He'1 as <- _ _. apply elem_of_app. right. by left.
      + apply elem_of_list_fmap in Hin as (e' & He'1 & He'). unfold pt in He'1.
        injection He'1 as Hid _ _.
        unfold ids in Hnd. rewrite !map_app in Hnd. simpl in Hnd.
        apply NoDup_app in Hnd as (_ & _ & Hnd). apply NoDup_app in Hnd as (_ & Hdis & _).
        apply (Hdis (e_id e')); [by apply elem_of_list_fmap_1 | rewrite <- Hid; by left].
  Qed.

  (** The persisted [curComb] catches up with [curComb]; pc changes as
      given. *)
  Definition persisted (s : rstate) (pc' : nat → tstate) (lk' : nat → lockst)
      (ret : list (xevent Op Val)) : rstate :=
    RState (ann s) (req s) (ch s) (cidx s) (cseq s) (cidx s) (rep s) (rhead s) lk' pc'
      (xh s ++ fresh_points (ch s) (pseq s) (cseq s) ++ ret) (nid s).

  Lemma rinv_evict s :
    rinv s →
    rinv (RState (ann s) (req s) (ch s) (cidx s) (cseq s) (cidx s) (rep s) (rhead s)
            (rlock s) (pc s) (xh s ++ fresh_points (ch s) (pseq s) (cseq s)) (nid s)).
  Proof.
    intros Hinv. pose proof (points_persist s Hinv) as Hpts. pose proof (ok_persist s Hinv) as Hok.
    pose proof (ri_pseq _ Hinv) as Hps.
    destruct Hinv as [Hc Hnd Hinvk Hfr _ _ _ Hcur Hper Hcons Howned Howns Hth Hidle Hids Htgs].
    split; simpl; try done.
    - intros e He. rewrite erase_app, erase_fresh, app_nil_r. by apply Hinvk.
    - intros i t op. rewrite erase_app, erase_fresh, app_nil_r. apply Hfr.
    - intros t Ht. apply (tinv_frame s); try done.
      all: try (intros e; simpl; by rewrite erase_app, erase_fresh, app_nil_r).
      all: try (simpl; unfold cseq in *; lia).
      all: try (intros x; by left).
      by apply Hth.
  Qed.

  Lemma rinv_persist s t i op s0 o v :
    rinv s → pc s t = TPersist i op s0 o v →
    rinv (if decide (S s0 ≤ pseq s) then st_pc s t (TRelease i op s0 o v)
          else RState (ann s) (req s) (ch s) (cidx s) (cseq s) (cidx s) (rep s) (rhead s)
                 (rlock s) (upd (pc s) t (TRelease i op s0 o v))
                 (xh s ++ fresh_points (ch s) (pseq s) (cseq s)) (nid s)).
  Proof.
    intros Hinv Hp. pose proof (tinv_of s t Hinv) as Ht. rewrite Hp in Ht.
    destruct (Ht ltac:(done)) as (Hdone & Hl & Hh).
    pose proof Hdone as (_ & _ & _ & Hs0c & _).
    assert (t < N) as HtN by (apply (busy_lt_N s Hinv); by rewrite Hp).
    case_decide as Hle.
    - apply rinv_st_pc; rewrite ?Hp; try done;
        try (simpl; split_and!; try done; by apply done_ok_frame).
    - pose proof (rinv_evict s Hinv) as Hev. destruct Hev as [Hc Hnd Hinvk Hfr Hps Hpts Hok Hcur Hper
        Hcons Howned Howns Hth Hidle Hids Htgs].
      cbn [ann req ch cidx pseq pidx rep rhead rlock pc xh nid] in *.
      split; simpl; try done.
      + intros r t' Hr. destruct (Howned r t' Hr) as [? Ho]. split; [done |].
        destruct (decide (t' = t)) as [-> | Hne]; upd_simpl; [by rewrite Hp in Ho | done].
      + intros t' r Ht' Ho. destruct (decide (t' = t)) as [-> | Hne]; upd_simpl; [done |].
        by apply Howns.
      + intros t' Ht'. destruct (decide (t' = t)) as [-> | Hne]; upd_simpl.
        * simpl. split_and!; try done; try (unfold cseq in *; simpl; lia).
          all: apply (done_ok_frame s); try done.
          intros e. simpl. by rewrite erase_app, erase_fresh, app_nil_r.
        * apply (tinv_frame (RState (ann s) (req s) (ch s) (cidx s) (cseq s) (cidx s) (rep s)
             (rhead s) (rlock s) (pc s) (xh s ++ fresh_points (ch s) (pseq s) (cseq s)) (nid s)));
            try done; [| by apply Hth].
          intros x. left. simpl. destruct (decide (x = t)) as [-> | Hx]; upd_simpl; [by rewrite Hp |].
          done.
      + intros t' Ht'. assert (t' ≠ t) by lia. upd_simpl. by apply Hidle.
      + intros t1 t2 i' Hne. unfold upd.
        destruct (decide (t1 = t)) as [-> | H1]; destruct (decide (t2 = t)) as [-> | H2];
          rewrite ?Hp; try (by apply Hids); [done | | ];
          [specialize (Hids t t2 i' Hne) | specialize (Hids t1 t i' Hne)]; rewrite Hp in Hids; done.
      + intros t1 t2 o' Hne. unfold upd.
        destruct (decide (t1 = t)) as [-> | H1]; destruct (decide (t2 = t)) as [-> | H2];
          try (by apply Htgs); [done | | ];
          [specialize (Htgs t t2 o' Hne) | specialize (Htgs t1 t o' Hne)]; rewrite Hp in Htgs; done.
  Qed.

  (** *** Returning *)

  (** Other threads, when [t] returns an operation that is committed. *)
  Lemma tinv_others_return s s' t i :
    rinv s → pid (pc s t) = Some i → i ∈ ids (entries (ch s)) →
    ch s' = ch s → ann s' = ann s → req s' = req s →
    (∀ e, e ∈ erase (xh s) → e ∈ erase (xh s')) → pseq s ≤ pseq s' →
    pc s' = upd (pc s) t TIdle →
    (∀ t' r, t' ≠ t → t' < N → (owns (pc s t') = Some r ∨ target (pc s t') = Some r) →
       rlock s' r = rlock s r ∧ rhead s' r = rhead s r ∧ rep s' r = rep s r) →
    ∀ t', t' < N → t' ≠ t → tinv s' t' (pc s' t').
  Proof.
    intros Hinv Hp Hi Hch Hann Hreq Hxh Hps Hpc Hr t' Ht' Hne. rewrite Hpc. upd_simpl.
    pose proof (ri_threads _ Hinv t' Ht') as Htt.
    apply (tinv_frame s); try done.
    - intros x. rewrite Hpc. destruct (decide (x = t)) as [-> | Hx]; upd_simpl; [| by left].
      right. split; [done |]. by exists i.
    - intros r Hr'. by apply (Hr t').
  Qed.

  Lemma rinv_release s t i op s0 o v :
    rinv s → pc s t = TRelease i op s0 o v →
    rinv (RState (ann s) (req s) (ch s) (cidx s) (pseq s) (pidx s) (rep s) (rhead s)
            (upd (rlock s) o Free) (upd (pc s) t TIdle) (xh s ++ [XE (Return i v)]) (nid s)).
  Proof.
    intros Hinv Hp. pose proof (tinv_of s t Hinv) as Ht. rewrite Hp in Ht.
    destruct (Ht ltac:(done)) as ((Hinvk & Hreq & Happ & Hs0c & Hdur & H3) & Hl & Hh & Hps0).
    assert (t < N) as HtN by (apply (busy_lt_N s Hinv); by rewrite Hp).
    assert (o ≠ cidx s ∧ o ≠ pidx s) as [Hoc Hop].
    { destruct (ri_cur _ Hinv) as (_ & Hc & _). destruct (ri_per _ Hinv) as (_ & Hpp & _).
      split; intros ->; [rewrite Hc in Hh | rewrite Hpp in Hh]; injection Hh; lia. }
    assert (i ∈ ids (entries (ch s))) as Hin.
    { apply elem_of_list_fmap. exists (i, t, op, v). split; [done |]. by eapply elem_of_durable. }
    assert (XL i op v ∈ xh s) as Hpt.
    { apply elem_of_points. rewrite (ri_points _ Hinv). apply elem_of_list_fmap.
      exists (i, t, op, v). split; [done |]. by apply (durable_mono _ (S s0)). }
    pose proof Hinv as Hinv'.
    destruct Hinv' as [Hc Hnd Hinvk' Hfr Hps Hpts Hok Hcur Hper Hcons Howned Howns Hth Hidle Hids Htgs].
    split; cbn [ann req ch cidx pseq pidx rep rhead rlock pc xh nid]; try done.
    - intros e He. rewrite erase_app. apply elem_of_app. left. by apply Hinvk'.
    - intros i' t' op'. rewrite erase_app. simpl. intros [? | Hin']%elem_of_app; [by eapply Hfr |].
      apply elem_of_list_singleton in Hin'. done.
    - by rewrite points_app, Hpts, app_nil_r.
    - apply prefix_ok_snoc. split; [done |]. by exists op.
    - by upd_simpl.
    - by upd_simpl.
    - intros r h Hlk Hrh. destruct (decide (r = o)) as [-> | Hro]; upd_simpl.
      + apply Hcons; [by right | done].
      + by apply Hcons.
    - intros r t' Hlk. destruct (decide (r = o)) as [-> | Hro]; upd_simpl; [done |].
      destruct (Howned r t' Hlk) as [? Ho]. split; [done |].
      destruct (decide (t' = t)) as [-> | Hne]; upd_simpl; [by rewrite Hp in Ho | done].
    - intros t' r Ht' Ho. destruct (decide (t' = t)) as [-> | Hne]; upd_simpl; [done |].
      pose proof (Howns t' r Ht' Ho) as Hlk. assert (r ≠ o) by (intros ->; congruence).
      by upd_simpl.
    - intros t' Ht'. destruct (decide (t' = t)) as [-> | Hne]; [by upd_simpl |].
      apply (tinv_others_return s (RState (ann s) (req s) (ch s) (cidx s) (pseq s) (pidx s) (rep s)
        (rhead s) (upd (rlock s) o Free) (upd (pc s) t TIdle) (xh s ++ [XE (Return i v)]) (nid s)) t i);
        cbn [ann req ch cidx pseq pidx rep rhead rlock pc xh nid]; try done.
      + rewrite Hp. done.
      + intros e He. rewrite erase_app. apply elem_of_app. by left.
      + intros t'' r Hne' Ht'' [Ho | Ho]; simpl.
        * pose proof (Howns t'' r Ht'' Ho) as Hlk. assert (r ≠ o) by (intros ->; congruence).
          by upd_simpl.
        * assert (r ≠ o).
          { intros ->. apply (Htgs t t'' o); [done | by rewrite Hp | done]. }
          by upd_simpl.
    - intros t' Ht'. assert (t' ≠ t) by lia. upd_simpl. by apply Hidle.
    - intros t1 t2 i' Hne. unfold upd.
      destruct (decide (t1 = t)) as [-> | H1]; destruct (decide (t2 = t)) as [-> | H2];
        [done | done | | by apply Hids]. intros _. done.
    - intros t1 t2 o' Hne. unfold upd.
      destruct (decide (t1 = t)) as [-> | H1]; destruct (decide (t2 = t)) as [-> | H2];
        [done | done | | by apply Htgs]. intros _. done.
  Qed.

  Lemma rinv_final s t i op a own :
    rinv s → pc s t = TFinal i op a own →
    rinv (RState (ann s) (req s) (ch s) (cidx s) (cseq s) (cidx s) (rep s) (rhead s)
            (match own with Some r => upd (rlock s) r Free | None => rlock s end)
            (upd (pc s) t TIdle)
            (xh s ++ fresh_points (ch s) (pseq s) (cseq s) ++ [XE (Return i (res_at s (cseq s) t))])
            (nid s)).
  Proof.
    intros Hinv Hp. pose proof (tinv_of s t Hinv) as Ht. rewrite Hp in Ht.
    destruct (Ht ltac:(done)) as ((Hinvk & Hreq & Ha & HP1 & HP2 & HP3) & Ha2 & Hown).
    assert (t < N) as HtN by (apply (busy_lt_N s Hinv); by rewrite Hp).
    assert (i ∈ ids (entries (ch s))) as Hin by (apply HP2; lia).
    apply elem_of_list_fmap in Hin as (e & Hei & He).
    destruct (HP3 e He (eq_sym Hei)) as (Het & Heo & Hres).
    set (lk' := match own with Some r => upd (rlock s) r Free | None => rlock s end).
    (* the lock of every replica but the thread's own is unchanged *)
    assert (∀ r, own ≠ Some r → lk' r = rlock s r) as Hlk.
    { intros r Hr. unfold lk'. destruct own as [r' |]; [| done]. rewrite upd_ne; [done |].
      intros ->. by apply Hr. }
    assert (∀ r, own = Some r → rlock s r = Owned t) as Hownr.
    { intros r ->. apply (ri_owns _ Hinv); [done | by rewrite Hp]. }
    pose proof (points_persist s Hinv) as Hpts'. pose proof (ok_persist s Hinv) as Hok'.
    pose proof Hinv as Hinv'.
    destruct Hinv' as [Hc Hnd Hinvk' Hfr Hps Hpts Hok Hcur Hper Hcons Howned Howns Hth Hidle Hids Htgs].
    assert (∀ r, rlock s r = Held → lk' r = Held) as Hheld.
    { intros r Hr. rewrite Hlk; [done |]. intros Ho. pose proof (Hownr r Ho). congruence. }
    split; cbn [ann req ch cidx pseq pidx rep rhead rlock pc xh nid]; try done.
    - intros e' He'. rewrite !erase_app. apply elem_of_app. left. by apply Hinvk'.
    - intros i' t' op'. rewrite !erase_app, erase_fresh. simpl.
      intros Hin'. apply elem_of_app in Hin' as [? | Hin']; [by eapply Hfr |].
      by apply elem_of_list_singleton in Hin'.
    - by rewrite app_assoc, points_app, Hpts', app_nil_r.
    - rewrite app_assoc. apply prefix_ok_snoc. split; [done |]. exists op.
      apply elem_of_points. rewrite Hpts'. rewrite (durable_all s Hinv). apply elem_of_list_fmap.
      exists e. split; [| done]. unfold epoint. rewrite Hei, Heo, Hres. done.
    - destruct Hcur as (? & ? & ?). split_and!; try done. by apply Hheld.
    - destruct Hcur as (? & ? & ?). split_and!; try done. by apply Hheld.
    - intros r h Hl Hrh. destruct (decide (own = Some r)) as [Ho | Ho].
      + rewrite Ho in Hown. by apply Hown.
      + rewrite Hlk in Hl; [| done]. by apply Hcons.
    - intros r t' Hl. destruct (decide (own = Some r)) as [Ho | Ho].
      + unfold lk' in Hl. rewrite Ho, upd_eq in Hl. done.
      + rewrite Hlk in Hl; [| done]. destruct (Howned r t' Hl) as [? Ho']. split; [done |].
        destruct (decide (t' = t)) as [-> | Hne]; upd_simpl; [| done].
        rewrite Hp in Ho'. simpl in Ho'. congruence.
    - intros t' r Ht' Ho. destruct (decide (t' = t)) as [-> | Hne]; upd_simpl; [done |].
      pose proof (Howns t' r Ht' Ho) as Hl. rewrite Hlk; [done |].
      intros Ho'. pose proof (Hownr r Ho'). congruence.
    - intros t' Ht'. destruct (decide (t' = t)) as [-> | Hne].
      + upd_simpl. simpl. apply HP1. rewrite Hei. by apply elem_of_list_fmap_1.
      + apply (tinv_others_return s (RState (ann s) (req s) (ch s) (cidx s) (cseq s) (cidx s)
          (rep s) (rhead s) lk' (upd (pc s) t TIdle)
          (xh s ++ fresh_points (ch s) (pseq s) (cseq s) ++ [XE (Return i (res_at s (cseq s) t))])
          (nid s)) t i); cbn [ann req ch cidx pseq pidx rep rhead rlock pc xh nid]; try done.
        * by rewrite Hp.
        * rewrite Hei. by apply elem_of_list_fmap_1.
        * intros e' He'. rewrite erase_app. apply elem_of_app. by left.
        * intros t'' r Hne' Ht'' Hor. split; [| done]. apply Hlk. intros Ho.
          pose proof (Hownr r Ho) as Hl.
          destruct Hor as [Hor | Hor].
          -- pose proof (Howns t'' r Ht'' Hor). congruence.
          -- pose proof (Hth t'' Ht'') as Ht2. destruct (pc s t''); simpl in Hor; try done;
               injection Hor as ->; destruct Ht2 as (_ & Hl2 & _); congruence.
    - intros t' Ht'. assert (t' ≠ t) by lia. upd_simpl. by apply Hidle.
    - intros t1 t2 i' Hne. unfold upd.
      destruct (decide (t1 = t)) as [-> | H1]; destruct (decide (t2 = t)) as [-> | H2];
        [done | done | | by apply Hids]. intros _. done.
    - intros t1 t2 o' Hne. unfold upd.
      destruct (decide (t1 = t)) as [-> | H1]; destruct (decide (t2 = t)) as [-> | H2];
        [done | done | | by apply Htgs]. intros _. done.
  Qed.

  (** *** Installing a transition (L30) *)

  Lemma NoDup_map_via {A B C} (f : A → B) (g : A → C) (l : list A) :
    NoDup (map g l) → (∀ x y, x ∈ l → y ∈ l → f x = f y → g x = g y) → NoDup (map f l).
  Proof.
    induction l as [| z l IH]; intros Hnd Hfg; [constructor |]. simpl in *.
    apply stdpp.list.NoDup_cons in Hnd as [Hz Hnd]. apply stdpp.list.NoDup_cons. split.
    - intros (y & Hy & Hyl)%elem_of_list_fmap. apply Hz. apply elem_of_list_fmap.
      exists y. split; [| done]. apply Hfg; [by left | by right | done].
    - apply IH; [done |]. intros x y ? ? ?. apply Hfg; [by right | by right | done].
  Qed.

  Section commit.
    Local Set Default Proof Using "All".
    Context (s : rstate) (Hinv : rinv s) (t r : nat) (ap : nat → bool) (rs : nat → Val)
      (bat : list entry) (Hsim : sim_ok s t (cseq s) ap rs N bat).
    Let L := Link (rep s r) ap rs bat.
    Context (s' : rstate) (Hch : ch s' = ch s ++ [L]) (Hann : ann s' = ann s) (Hreq : req s' = req s)
      (Hxh : xh s' = xh s) (Hpseq : pseq s' = pseq s).

    Lemma cseq_commit : cseq s' = S (cseq s).
    Proof. unfold cseq. rewrite Hch, app_length, (chain_len s Hinv). simpl. lia. Qed.

    Lemma lookup_commit h : h ≤ cseq s → ch s' !! h = ch s !! h.
    Proof. intros Hh. rewrite Hch. apply lookup_app_l. rewrite (chain_len s Hinv). lia. Qed.

    Lemma top_commit : ch s' !! cseq s' = Some L.
    Proof.
      rewrite cseq_commit, Hch, lookup_app_r; rewrite (chain_len s Hinv); [| lia].
      by rewrite Nat.sub_diag.
    Qed.

    Lemma obj_at_commit h : h ≤ cseq s → obj_at s' h = obj_at s h.
    Proof. intros. unfold obj_at. by rewrite lookup_commit. Qed.
    Lemma app_at_commit h : h ≤ cseq s → app_at s' h = app_at s h.
    Proof. intros. unfold app_at. by rewrite lookup_commit. Qed.
    Lemma res_at_commit h : h ≤ cseq s → res_at s' h = res_at s h.
    Proof. intros. unfold res_at. by rewrite lookup_commit. Qed.
    Lemma app_top_commit : app_at s' (cseq s') = ap.
    Proof. unfold app_at. by rewrite top_commit. Qed.
    Lemma res_top_commit x : res_at s' (cseq s') x = rs x.
    Proof. unfold res_at. by rewrite top_commit. Qed.

    Lemma entries_commit : entries (ch s') = entries (ch s) ++ bat.
    Proof. rewrite Hch. apply entries_snoc. Qed.

    Lemma nodup_commit : NoDup (ids (entries (ch s'))).
    Proof.
      destruct Hsim as (_ & _ & _ & _ & H5 & H6).
      rewrite entries_commit. unfold ids. rewrite map_app. apply NoDup_app. split_and!.
      - apply (ri_nodup _ Hinv).
      - intros i Hi Hb. apply elem_of_list_fmap in Hb as (e & -> & He).
        by destruct (H5 e He) as (_ & _ & _ & _ & Hn).
      - apply (NoDup_map_via e_id e_th); [done |]. intros e e' He He' Hid.
        destruct (H5 e He) as (_ & Hp & _). destruct (H5 e' He') as (_ & Hp' & _).
        destruct (decide (e_th e = e_th e')) as [? | Hne]; [done |].
        exfalso. apply (ri_ids _ Hinv _ _ _ Hne Hp). by rewrite Hp', Hid.
    Qed.

    (** The toggle and the results after the transition. *)
    Lemma pend_commit x i' :
      x < N → pid (pc s x) = Some i' →
      (app_at s' (cseq s') x = ann s' x ↔ i' ∈ ids (entries (ch s'))) ∧
      ∀ e, e ∈ entries (ch s') → e_id e = i' →
        e_th e = x ∧ Some (e_op e) = pop (pc s x) ∧ res_at s' (cseq s') x = e_val e.
    Proof.
      intros Hx Hp. destruct Hsim as (H1 & H2 & H3 & H4 & H5 & H6).
      destruct (pend_status s Hinv x i' Hp) as (Hst & Hpop & _ & HP3).
      rewrite app_top_commit, res_top_commit, Hann, entries_commit. split.
      - rewrite (H1 x Hx), Hp. unfold ids. rewrite map_app, elem_of_app. done.
      - intros e He Hid. apply elem_of_app in He as [He | He].
        + destruct (HP3 e He Hid) as (Hth & Hop & Hres). split_and!; try done.
          rewrite H4; [by rewrite Hres |]. intros Hxb. apply elem_of_list_fmap in Hxb as (e' & -> & He').
          destruct (H5 e' He') as (_ & Hp' & _ & _ & Hn). rewrite Hp in Hp'. injection Hp' as Hp'.
          apply Hn. rewrite <- Hp', <- Hid. by apply elem_of_list_fmap_1.
        + destruct (H5 e He) as (_ & Hp' & Hop & Hres & _).
          assert (e_th e = x) as Hex.
          { destruct (decide (e_th e = x)) as [? | Hne]; [done |].
            exfalso. apply (ri_ids _ Hinv _ _ _ Hne Hp'). by rewrite Hp, Hid. }
          rewrite <- Hex. split_and!; [done | by rewrite Hop | done].
    Qed.

    Lemma idle_commit x : x < N → pc s x = TIdle → app_at s' (cseq s') x = ann s' x.
    Proof.
      intros Hx Hp. destruct Hsim as (H1 & _). rewrite app_top_commit, Hann.
      apply (H1 x Hx). by rewrite Hp.
    Qed.

    Lemma helped_commit x i' a' :
      x < N → pid (pc s x) = Some i' → paseq (pc s x) = Some a' → a' + 2 ≤ cseq s' →
      i' ∈ ids (entries (ch s')).
    Proof.
      intros Hx Hp Ha Ha2. rewrite cseq_commit in Ha2. destruct Hsim as (H1 & H2 & _).
      assert (ap x = ann s x) as Heq.
      { apply (H2 x Hx); [| by rewrite Hp]. right. exists a'. split; [done | lia]. }
      pose proof (proj1 (H1 x Hx) Heq) as Hor. rewrite Hp in Hor.
      rewrite entries_commit. unfold ids. rewrite map_app, elem_of_app. done.
    Qed.

    Lemma pend_ok_commit x i' op' a' :
      x < N → pid (pc s x) = Some i' → pop (pc s x) = Some op' → paseq (pc s x) = Some a' →
      pend_ok s x i' op' a' → pend_ok s' x i' op' a'.
    Proof.
      intros Hx Hp Hpo Hpa (Hinvk & Hrq & Ha & _ & _ & _).
      destruct (pend_commit x i' Hx Hp) as [HP1 HP3].
      unfold pend_ok. rewrite Hxh, Hreq, cseq_commit. split_and!; try done; [lia | | |].
      - by rewrite <- cseq_commit.
      - intros Ha2. apply (helped_commit x i' a'); [done | done | done | by rewrite cseq_commit].
      - intros e He Hid. destruct (HP3 e He Hid) as (? & Hop & ?). rewrite Hpo in Hop.
        injection Hop as ->. rewrite <- cseq_commit. done.
    Qed.

    Lemma done_ok_commit x i' op' s0 v :
      x < N → pid (pc s x) = Some i' → pop (pc s x) = Some op' →
      done_ok s x i' op' s0 v → done_ok s' x i' op' s0 v.
    Proof.
      intros Hx Hp Hpo (Hinvk & Hrq & Happ & Hs0 & Hdur & _).
      destruct (pend_commit x i' Hx Hp) as [HP1 HP3].
      assert (i' ∈ ids (entries (ch s))) as Hin.
      { apply elem_of_list_fmap. exists (i', x, op', v). split; [done |]. by eapply elem_of_durable. }
      unfold done_ok. rewrite Hxh, Hreq, cseq_commit. split_and!; try done; [| lia | |].
      - rewrite <- cseq_commit. apply HP1. rewrite entries_commit. unfold ids. rewrite map_app.
        apply elem_of_app. by left.
      - unfold durable. rewrite Hch, take_app_le; [done |]. rewrite (chain_len s Hinv). lia.
      - intros e He Hid. destruct (HP3 e He Hid) as (? & Hop & ?). rewrite Hpo in Hop.
        injection Hop as ->. rewrite <- cseq_commit. done.
    Qed.

    Lemma own_ok_commit own :
      (∀ r', own = Some r' → rhead s' r' = rhead s r' ∧ rep s' r' = rep s r') →
      own_ok s own → own_ok s' own.
    Proof.
      intros Hr'. destruct own as [r' |]; [| done]. simpl. destruct (Hr' r' eq_refl) as [-> ->].
      intros Ho h Hh. destruct (Ho h Hh) as [Hle Hrep]. rewrite cseq_commit, obj_at_commit; [| done].
      split; [lia | done].
    Qed.

    (** Every thread but the installer. *)
    Lemma tinv_commit x :
      x < N → x ≠ t → pc s' x = pc s x →
      (∀ r', (owns (pc s x) = Some r' ∨ target (pc s x) = Some r') →
         rlock s' r' = rlock s r' ∧ rhead s' r' = rhead s r' ∧ rep s' r' = rep s r') →
      tinv s' x (pc s' x).
    Proof.
      intros Hx Hxt Hpc Hr'. rewrite Hpc. pose proof (ri_threads _ Hinv x Hx) as Ht.
      destruct (pc s x) as [| i' op' a' k' own | i' op' a' k' own s0 ap' rs' | i' op' a' k' r' s0 ap' rs' pre j bat'
                           | i' op' s0 o v | i' op' s0 o v | i' op' a' own] eqn:Hpx; simpl in Ht |- *.
      - by apply idle_commit.
      - destruct Ht as (Hp & Hak & Hk & Ho). split_and!.
        + apply pend_ok_commit; by rewrite ?Hpx.
        + rewrite cseq_commit. lia.
        + done.
        + apply own_ok_commit; [| done]. intros r0 ->. destruct (Hr' r0) as (_ & ? & ?); auto.
      - destruct Ht as (Hp & Hak & Hs0 & Hk & Ho & -> & ->). split_and!.
        + apply pend_ok_commit; by rewrite ?Hpx.
        + done.
        + rewrite cseq_commit. lia.
        + done.
        + apply own_ok_commit; [| done]. intros r0 ->. destruct (Hr' r0) as (_ & ? & ?); auto.
        + by rewrite app_at_commit.
        + by rewrite res_at_commit.
      - destruct Ht as (Hp & Hak & Hs0 & Hk & -> & Hb & Hj & _). split_and!.
        + apply pend_ok_commit; by rewrite ?Hpx.
        + done.
        + rewrite cseq_commit. lia.
        + done.
        + by rewrite obj_at_commit.
        + destruct (Hr' r') as (_ & _ & ->); [by left |]. done.
        + done.
        + rewrite cseq_commit. lia.
      - destruct Ht as (Hd & Hl & Hh). destruct (Hr' o) as (-> & -> & _); [by right |].
        split_and!; try done. apply done_ok_commit; by rewrite ?Hpx.
      - destruct Ht as (Hd & Hl & Hh & Hps). destruct (Hr' o) as (-> & -> & _); [by right |].
        split_and!; try done; [apply done_ok_commit; by rewrite ?Hpx |]. by rewrite Hpseq.
      - destruct Ht as (Hp & Ha2 & Ho). split_and!.
        + apply pend_ok_commit; by rewrite ?Hpx.
        + rewrite cseq_commit. lia.
        + apply own_ok_commit; [| done]. intros r0 ->. destruct (Hr' r0) as (_ & ? & ?); auto.
    Qed.
  End commit.

  Lemma entry_eq e i t op v : e_id e = i → e_th e = t → e_op e = op → e_val e = v → e = (i, t, op, v).
  Proof. destruct e as [[[??]?]?]. unfold e_id, e_th, e_op, e_val. simpl. intros -> -> -> ->. done. Qed.

  Lemma rinv_cassucc s t i op a k r s0 ap rs pre bat :
    rinv s → pc s t = TSim i op a k r s0 ap rs pre N bat → cseq s = s0 →
    rinv (RState (ann s) (req s) (ch s ++ [Link (rep s r) ap rs bat]) r (pseq s) (pidx s)
            (rep s) (upd (rhead s) r (Some (S s0))) (upd (rlock s) r Held)
            (upd (pc s) t (TPersist i op s0 (cidx s) (rs t))) (xh s) (nid s)).
  Proof.
    intros Hinv Hp Hs0. pose proof (tinv_of s t Hinv) as Ht. rewrite Hp in Ht.
    destruct (Ht ltac:(done)) as ((Hinvk & Hreq & Ha & HP1 & HP2 & HP3) & Hak & Hs & Hk & Hpre & Hb & _ & Hsim).
    assert (t < N) as HtN by (apply (busy_lt_N s Hinv); by rewrite Hp).
    specialize (Hsim (eq_sym Hs0)). subst s0.
    assert (rlock s r = Owned t) as Hr by (apply (ri_owns _ Hinv); [done | by rewrite Hp]).
    destruct (owned_not_cur s Hinv r t Hr) as [Hrc Hrp].
    pose (s' := RState (ann s) (req s) (ch s ++ [Link (rep s r) ap rs bat]) r (pseq s) (pidx s)
            (rep s) (upd (rhead s) r (Some (S (cseq s)))) (upd (rlock s) r Held)
            (upd (pc s) t (TPersist i op (cseq s) (cidx s) (rs t))) (xh s) (nid s)).
    assert (ch s' = ch s ++ [Link (rep s r) ap rs bat]) as Hch by done.
    assert (ann s' = ann s ∧ req s' = req s ∧ xh s' = xh s ∧ pseq s' = pseq s) as (Ha' & Hr' & Hx' & Hp'')
      by done.
    (* the facts about the new transition, from [Section commit] *)
    pose proof (cseq_commit s Hinv t r ap rs bat Hsim s' Hch Ha' Hr' Hx' Hp'') as Hcs.
    pose proof (entries_commit s Hinv t r ap rs bat Hsim s' Hch Ha' Hr' Hx' Hp'') as Hent.
    pose proof (nodup_commit s Hinv t r ap rs bat Hsim s' Hch Ha' Hr' Hx' Hp'') as Hnd'.
    pose proof (top_commit s Hinv t r ap rs bat Hsim s' Hch Ha' Hr' Hx' Hp'') as Htop.
    pose proof (obj_at_commit s Hinv t r ap rs bat Hsim s' Hch Ha' Hr' Hx' Hp'') as Hobj.
    pose proof (app_top_commit s Hinv t r ap rs bat Hsim s' Hch Ha' Hr' Hx' Hp'') as Happ'.
    pose proof (res_top_commit s Hinv t r ap rs bat Hsim s' Hch Ha' Hr' Hx' Hp'') as Hres'.
    pose proof (tinv_commit s Hinv t r ap rs bat Hsim s' Hch Ha' Hr' Hx' Hp'') as Htc.
    destruct Hsim as (H1 & H2 & H3 & H4 & H5 & H6).
    (* the installer's own operation is in the new transition or before it *)
    assert (ap t = ann s t) as Hapt.
    { apply (H2 t HtN); [by left | by rewrite Hp]. }
    assert ((i, t, op, rs t) ∈ entries (ch s')) as Hmine.
    { rewrite Hent. pose proof (proj1 (H1 t HtN) Hapt) as Hor. rewrite Hp in Hor.
      destruct Hor as [Hin | Hin].
      - apply elem_of_list_fmap in Hin as (e & Hei & He).
        destruct (HP3 e He (eq_sym Hei)) as (Het & Heo & Hres).
        assert (t ∉ map e_th bat) as Hnb.
        { intros (e' & Ht' & He')%elem_of_list_fmap. destruct (H5 e' He') as (_ & Hp' & _ & _ & Hn).
          rewrite <- Ht', Hp in Hp'. injection Hp' as Hp'. apply Hn. rewrite <- Hp', Hei.
          by apply elem_of_list_fmap_1. }
        rewrite (H4 t Hnb), Hres. apply elem_of_app. left.
        by rewrite <- (entry_eq e i t op (e_val e)).
      - apply elem_of_list_fmap in Hin as (e & Hei & He).
        destruct (H5 e He) as (_ & Hp' & Hop & Hres & _).
        assert (e_th e = t) as Het.
        { destruct (decide (e_th e = t)) as [? | Hne]; [done |].
          exfalso. apply (ri_ids _ Hinv _ _ _ Hne Hp'). by rewrite Hp, Hei. }
        rewrite Het in Hres. rewrite Het, Hp in Hop. simpl in Hop. assert (e_op e = op) as Heo by congruence.
        apply elem_of_app. right. rewrite Hres.
        by rewrite <- (entry_eq e i t op (e_val e)). }
    pose proof Hinv as Hinv'.
    destruct Hinv' as [Hc Hnd Hinvk' Hfr Hps Hpts Hok Hcur Hper Hcons Howned Howns Hth Hidle Hids Htgs].
    destruct Hcur as (Hcur1 & Hcur2 & Hcur3).
    unfold s' in *. cbn [ann req ch cidx pseq pidx rep rhead rlock pc xh nid] in *.
    split; cbn [ann req ch cidx pseq pidx rep rhead rlock pc xh nid]; try done.
    - destruct (lookup_lt_is_Some_2 (ch s) (pred (length (ch s)))) as [l Hl].
      { rewrite (chain_len s Hinv). lia. }
      apply (chain_ok_snoc _ l); [done | done |]. simpl. rewrite Hpre in Hb.
      unfold obj_at, cseq in Hb. by rewrite Hl in Hb.
    - intros e. rewrite entries_snoc. intros [He | He]%elem_of_app; [by apply Hinvk' |].
      destruct (H5 e He) as (_ & Hp' & Hop & _).
      destruct (pend_status s Hinv (e_th e) (e_id e) Hp') as (_ & _ & (op' & Hop' & Hinv'') & _).
      rewrite Hop in Hop'. by injection Hop' as ->.
    - rewrite Hcs. lia.
    - rewrite Hpts. unfold durable. rewrite take_app_le; [done |]. rewrite (chain_len s Hinv). lia.
    - split_and!.
      + unfold obj_at. cbn [ch]. by rewrite Htop.
      + rewrite upd_eq. by rewrite <- Hcs.
      + by rewrite upd_eq.
    - destruct Hper as (? & ? & ?). upd_simpl. rewrite Hobj; [| done]. done.
    - intros r' h Hl Hh. destruct (decide (r' = r)) as [-> | Hne]; upd_simpl.
      + injection Hh as <-. split; [by rewrite Hcs |].
        unfold obj_at. cbn [ch]. by rewrite <- Hcs, Htop.
      + destruct (Hcons r' h Hl Hh) as [Hle Hrep]. split; [rewrite Hcs; lia |].
        by rewrite Hobj.
    - intros r' t' Hl. destruct (decide (r' = r)) as [-> | Hne]; upd_simpl; [done |].
      destruct (Howned r' t' Hl) as [? Ho]. split; [done |].
      destruct (decide (t' = t)) as [-> | Hne']; upd_simpl; [| done].
      rewrite Hp in Ho. simpl in Ho. congruence.
    - intros t' r' Ht' Ho. destruct (decide (t' = t)) as [-> | Hne]; upd_simpl; [done |].
      pose proof (Howns t' r' Ht' Ho) as Hl. assert (r' ≠ r) by (intros ->; congruence).
      by upd_simpl.
    - intros t' Ht'. destruct (decide (t' = t)) as [-> | Hne].
      + upd_simpl. simpl. split_and!.
        * rewrite Hcs in Happ', Hres'. unfold done_ok. rewrite Hcs. split_and!; try done.
          -- by rewrite Happ'.
          -- unfold durable. rewrite take_ge; [done |]. cbn [ch]. rewrite app_length, (chain_len s Hinv).
             simpl. lia.
          -- intros e He Hid.
             assert (e = (i, t, op, rs t)) as ->.
             { eapply NoDup_map_inj; [exact Hnd' | exact He | exact Hmine | done]. }
             split_and!; try done. by rewrite Hres'.
        * assert (cidx s ≠ r) by done. by upd_simpl.
        * assert (cidx s ≠ r) by done. by upd_simpl.
      + apply Htc; try done.
        * simpl. by upd_simpl.
        * intros r' Hor. simpl. assert (r' ≠ r).
          { intros ->. destruct Hor as [Ho | Ho].
            - pose proof (Howns t' r Ht' Ho). congruence.
            - pose proof (Hth t' Ht') as Ht2. destruct (pc s t'); simpl in Ho; try done;
                injection Ho as ->; destruct Ht2 as (_ & Hl2 & _); congruence. }
          by upd_simpl.
    - intros t' Ht'. assert (t' ≠ t) by lia. upd_simpl. by apply Hidle.
    - intros t1 t2 i' Hne. unfold upd.
      destruct (decide (t1 = t)) as [-> | H1']; destruct (decide (t2 = t)) as [-> | H2'];
        [done | | | by apply Hids];
        [specialize (Hids t t2 i' Hne) | specialize (Hids t1 t i' Hne)]; rewrite Hp in Hids; done.
    - intros t1 t2 o' Hne. unfold upd.
      (* the new target is [cidx], whose head is [cseq]; the others' are older *)
      assert (∀ t'', t'' ≠ t → t'' < N → target (pc s t'') ≠ Some (cidx s)) as Hnew.
      { intros t'' Hne'' Ht'' Ho. pose proof (Hth t'' Ht'') as Ht2.
        destruct (pc s t''); simpl in Ho; try done; injection Ho as Ho;
          first [destruct Ht2 as ((_ & _ & _ & Hs0' & _) & _ & Hh'' & _)
                |destruct Ht2 as ((_ & _ & _ & Hs0' & _) & _ & Hh'')];
          rewrite Ho, Hcur2 in Hh''; injection Hh'' as Heq; lia. }
      destruct (decide (t1 = t)) as [-> | H1']; destruct (decide (t2 = t)) as [-> | H2'];
        [done | | | by apply Htgs]; simpl.
      + intros [= <-]. destruct (decide (t2 < N)) as [? | Hge]; [by apply Hnew |].
        rewrite (Hidle t2); [done | lia].
      + intros Ho [= <-]. destruct (decide (t1 < N)) as [? | Hge]; [by apply (Hnew t1) |].
        rewrite (Hidle t1) in Ho; [done | lia].
  Qed.

  (** *** Announcing (L2–L3) *)

  Lemma ids_fresh s i : rinv s → i ∈ ids (entries (ch s)) → i < nid s.
  Proof.
    intros Hinv (e & -> & He)%elem_of_list_fmap. eapply (ri_fresh _ Hinv). by apply (ri_invoked _ Hinv).
  Qed.

  Lemma pid_fresh s x i : rinv s → pid (pc s x) = Some i → i < nid s.
  Proof.
    intros Hinv Hp. destruct (pend_status s Hinv x i Hp) as (_ & _ & (op & _ & Hin) & _).
    by eapply (ri_fresh _ Hinv).
  Qed.

  Section announce.
    Context (s : rstate) (Hinv : rinv s) (t : nat) (op : Op) (HtN : t < N) (Hidle : pc s t = TIdle).
    Let s' := RState (upd (ann s) t (negb (ann s t))) (upd (req s) t op) (ch s) (cidx s)
                (pseq s) (pidx s) (rep s) (rhead s) (rlock s)
                (upd (pc s) t (TAnn (nid s) op (cseq s) 0 None))
                (xh s ++ [XE (Invoke (nid s) t op)]) (S (nid s)).

    Lemma erase_announce e : e ∈ erase (xh s) → e ∈ erase (xh s').
    Proof. intros He. simpl. rewrite erase_app. apply elem_of_app. by left. Qed.

    Lemma pend_ok_announce x i op' a : x ≠ t → pend_ok s x i op' a → pend_ok s' x i op' a.
    Proof.
      intros Hx (H1 & H2 & H3 & H4 & H5 & H6). unfold pend_ok, cseq, app_at, res_at in *. simpl.
      upd_simpl. split_and!; auto. by apply erase_announce.
    Qed.

    Lemma done_ok_announce x i op' s0 v : x ≠ t → done_ok s x i op' s0 v → done_ok s' x i op' s0 v.
    Proof.
      intros Hx (H1 & H2 & H3 & H4 & H5 & H6). unfold done_ok, cseq, app_at, res_at in *. simpl.
      upd_simpl. split_and!; auto. by apply erase_announce.
    Qed.

    Lemma sim_ok_announce x s0 ap rs j bat :
      x ≠ t → s0 = cseq s → sim_ok s x s0 ap rs j bat → sim_ok s' x s0 ap rs j bat.
    Proof.
      intros Hx -> (H1 & H2 & H3 & H4 & H5 & H6). unfold sim_ok. simpl. split_and!; try done.
      - intros y Hy. destruct (decide (y = t)) as [-> | Hyt]; upd_simpl.
        + simpl. assert (ap t = ann s t) as Heq by (apply (H1 t Hy); by rewrite Hidle).
          rewrite Heq. split; [by destruct (ann s t) |]. intros [Hin | Hin].
          * apply ids_fresh in Hin; [lia | done].
          * apply elem_of_list_fmap in Hin as (e & He & Hb). destruct (H5 e Hb) as (_ & Hp & _).
            apply (pid_fresh s) in Hp; [lia | done].
        + by apply H1.
      - intros y Hy Hc Hnn. destruct (decide (y = t)) as [-> | Hyt]; upd_simpl.
        + exfalso. simpl in Hc. destruct Hc as [-> | (a' & [= <-] & ?)]; [done | lia].
        + by apply H2.
      - intros e He. destruct (H5 e He) as (Hj & Hp & Ho & Hr & Hn).
        assert (e_th e ≠ t) by (intros Heq; rewrite Heq, Hidle in Hp; done).
        upd_simpl. done.
    Qed.

    Lemma tinv_announce x : x < N → x ≠ t → tinv s x (pc s x) → tinv s' x (pc s' x).
    Proof.
      intros HxN Hx Ht. simpl. upd_simpl.
      destruct (pc s x) as [| i op' a k own | i op' a k own s0 ap rs | i op' a k r s0 ap rs pre j bat
                           | i op' s0 o v | i op' s0 o v | i op' a own]; simpl in Ht |- *.
      - unfold app_at, cseq in *. simpl. by upd_simpl.
      - destruct Ht as (? & ? & ? & ?). split_and!; try done. by apply pend_ok_announce.
      - destruct Ht as (? & ? & ? & ? & ? & ? & ?). split_and!; try done. by apply pend_ok_announce.
      - destruct Ht as (? & ? & ? & ? & ? & ? & ? & Hsim). split_and!; try done.
        + by apply pend_ok_announce.
        + intros Hs0. apply sim_ok_announce; [done | done |]. by apply Hsim.
      - destruct Ht as (? & ? & ?). split_and!; try done. by apply done_ok_announce.
      - destruct Ht as (? & ? & ? & ?). split_and!; try done. by apply done_ok_announce.
      - destruct Ht as (? & ? & ?). split_and!; try done. by apply pend_ok_announce.
    Qed.

    Lemma rinv_announce : rinv s'.
    Proof.
      pose proof Hinv as Hinv'.
      destruct Hinv' as [Hc Hnd Hinvk Hfr Hps Hpts Hok Hcur Hper Hcons Howned Howns Hth Hidl Hids Htgs].
      unfold s'. split; cbn [ann req ch cidx pseq pidx rep rhead rlock pc xh nid]; try done.
      - intros e He. apply erase_announce. by apply Hinvk.
      - intros i t' op'. rewrite erase_app. simpl. intros [Hin | Hin]%elem_of_app.
        + apply Hfr in Hin. lia.
        + apply elem_of_list_singleton in Hin. injection Hin as -> _ _. lia.
      - by rewrite points_app, Hpts, app_nil_r.
      - by apply prefix_ok_snoc.
      - intros r t' Hl. destruct (Howned r t' Hl) as [? Ho]. split; [done |].
        destruct (decide (t' = t)) as [-> | Hne]; upd_simpl; [by rewrite Hidle in Ho | done].
      - intros t' r Ht' Ho. destruct (decide (t' = t)) as [-> | Hne]; upd_simpl; [done |].
        by apply Howns.
      - intros t' Ht'. destruct (decide (t' = t)) as [-> | Hne].
        + upd_simpl. simpl. unfold pend_ok, own_ok, app_at, res_at, cseq.
          cbn [ann req ch cidx pseq pidx rep rhead rlock pc xh nid]. upd_simpl.
          pose proof (idle_status s Hinv t HtN Hidle) as Hst. unfold app_at, cseq in Hst.
          split_and!; try done; try lia.
          * rewrite erase_app. apply elem_of_app. right. by left.
          * rewrite Hst. split; [by destruct (ann s t) |].
            intros Hin. apply ids_fresh in Hin; [lia | done].
          * intros e He Hid. exfalso. apply (Nat.lt_irrefl (nid s)).
            apply (ids_fresh s (nid s) Hinv). rewrite <- Hid. by apply elem_of_list_fmap_1.
        + apply tinv_announce; [done | done | by apply Hth].
      - intros t' Ht'. assert (t' ≠ t) by lia. upd_simpl. by apply Hidl.
      - intros t1 t2 i Hne. unfold upd.
        destruct (decide (t1 = t)) as [-> | H1]; destruct (decide (t2 = t)) as [-> | H2];
          [done | | | by apply Hids]; simpl.
        + intros [= <-] Hp. apply (pid_fresh s) in Hp; [lia | done].
        + intros Hp [= <-]. apply (pid_fresh s) in Hp; [lia | done].
      - intros t1 t2 o Hne. unfold upd.
        destruct (decide (t1 = t)) as [-> | H1]; destruct (decide (t2 = t)) as [-> | H2];
          [done | done | | by apply Htgs]. intros _. done.
    Qed.
  End announce.

  (** *** Crash and null recovery *)

  Lemma chain_ok_replace_last ch0 l l' :
    chain_ok (ch0 ++ [l]) → l_obj l' = l_obj l → l_batch l' = l_batch l → chain_ok (ch0 ++ [l']).
  Proof.
    intros [(l0 & H0 & Hi & Hb) Hs] Ho Hbt.
    assert (∀ k, (ch0 ++ [l']) !! k = (λ x, if decide (k = length ch0) then l' else x) <$> (ch0 ++ [l]) !! k)
      as Hlk.
    { intros k. destruct (decide (k < length ch0)) as [Hk | Hk].
      - rewrite !lookup_app_l; [| done | done].
        destruct (ch0 !! k); simpl; [| done]. rewrite decide_False; [done | lia].
      - rewrite !lookup_app_r; [| lia | lia]. destruct (decide (k = length ch0)) as [-> | Hne].
        + by rewrite Nat.sub_diag.
        + destruct (k - length ch0) as [| m] eqn:Hm; [lia |]. simpl. by destruct m. }
    split.
    - destruct ch0 as [| c ch0]; simpl in *.
      + injection H0 as <-. exists l'. split_and!; congruence.
      + exists l0. injection H0 as <-. done.
    - intros k a b Ha Hb'. rewrite Hlk in Ha, Hb'.
      destruct ((ch0 ++ [l]) !! k) as [a0 |] eqn:Ha0; [| done].
      destruct ((ch0 ++ [l]) !! S k) as [b0 |] eqn:Hb0; [| done]. simpl in Ha, Hb'.
      injection Ha as <-. injection Hb' as <-. pose proof (Hs k a0 b0 Ha0 Hb0) as Hab.
      assert (k ≠ length ch0) as Hk.
      { intros ->. apply lookup_lt_Some in Hb0. rewrite app_length in Hb0. simpl in Hb0. lia. }
      rewrite decide_False; [| done].
      case_decide as Hkk; [| done]. rewrite Ho, Hbt. assert (b0 = l) as ->; [| done].
      rewrite lookup_app_r in Hb0; [| lia]. rewrite Hkk, Nat.sub_diag in Hb0. simpl in Hb0. congruence.
  Qed.

  Lemma rinv_crash s (garbage : nat → St) :
    rinv s →
    rinv (RState (λ _, false) (req s)
            (take (pseq s) (ch s) ++ [fresh_link (from_option id dlink (ch s !! pseq s))])
            (pidx s) (pseq s) (pidx s)
            (λ r, if decide (r = pidx s) then rep s r else garbage r)
            (λ r, if decide (r = pidx s) then Some (pseq s) else None)
            (λ r, if decide (r = pidx s) then Held else Free)
            (λ _, TIdle) (xh s ++ [XE Crash]) (nid s)).
  Proof.
    intros Hinv. pose proof (ri_pseq _ Hinv) as Hps.
    destruct (lookup_lt_is_Some_2 (ch s) (pseq s)) as [l Hl].
    { rewrite (chain_len s Hinv). lia. }
    rewrite Hl. simpl.
    assert (take (S (pseq s)) (ch s) = take (pseq s) (ch s) ++ [l]) as Htake by (by apply take_S_r).
    set (ch' := take (pseq s) (ch s) ++ [fresh_link l]).
    assert (length ch' = S (pseq s)) as Hlen.
    { unfold ch'. rewrite app_length, take_length_le; [simpl; lia |]. rewrite (chain_len s Hinv). lia. }
    assert (entries ch' = durable (ch s) (pseq s)) as Hent.
    { unfold ch', durable. rewrite Htake, !entries_snoc. done. }
    assert (ch' !! pseq s = Some (fresh_link l)) as Hlast.
    { unfold ch'. assert (length (take (pseq s) (ch s)) = pseq s) as Ht.
      { rewrite take_length_le; [done |]. rewrite (chain_len s Hinv). lia. }
      rewrite lookup_app_r; [| lia]. rewrite Ht, Nat.sub_diag. done. }
    pose proof Hinv as Hinv'.
    destruct Hinv' as [Hc Hnd Hinvk Hfr _ Hpts Hok Hcur Hper Hcons Howned Howns Hth Hidl Hids Htgs].
    destruct Hper as (Hper1 & Hper2 & Hper3).
    split; cbn [ann req ch cidx pseq pidx rep rhead rlock pc xh nid]; fold ch'.
    all: unfold cseq, obj_at, app_at; cbn [ch]; fold ch'; try rewrite Hlen; try done.
    - unfold ch'. apply (chain_ok_replace_last _ l); [| done | done]. rewrite <- Htake.
      apply chain_ok_take; [done | lia].
    - rewrite Hent. by apply durable_nodup.
    - intros e. rewrite Hent. intros He%elem_of_durable. rewrite erase_app. apply elem_of_app.
      left. by apply Hinvk.
    - intros i t op. rewrite erase_app. simpl. intros [Hin | Hin]%elem_of_app; [by eapply Hfr |].
      by apply elem_of_list_singleton in Hin.
    - assert (durable ch' (pseq s) = durable (ch s) (pseq s)) as Hd.
      { unfold durable at 1. rewrite take_ge; [exact Hent | lia]. }
      rewrite Hd, points_app, Hpts. simpl. by rewrite app_nil_r.
    - by apply prefix_ok_snoc.
    - rewrite !decide_True; [| done | done | done]. simpl. rewrite Hlast, Hper1.
      unfold obj_at. by rewrite Hl.
    - rewrite !decide_True; [| done | done | done]. rewrite Hlast, Hper1. unfold obj_at. by rewrite Hl.
    - intros r h _ Hh. case_decide as Hr; [| done]. injection Hh as <-. subst r.
      rewrite Hlast, Hper1. unfold obj_at. rewrite Hl. simpl. split; [lia | done].
    - intros r t Hl'. by case_decide.
    - intros t Ht. unfold tinv. cbn [pc]. unfold app_at, cseq. cbn [ch ann]. fold ch'.
      rewrite Hlen. simpl pred. rewrite Hlast. done.
  Qed.

  Lemma rinv_init req0 : rinv (init_state req0).
  Proof.
    split; cbn [init_state ann req ch cidx pseq pidx rep rhead rlock pc xh nid]; try done.
    - split; [by exists link0 |]. intros k a b Ha Hb. destruct k; simpl in Hb; [done |].
      by destruct k.
    - constructor.
    - intros e He. by apply elem_of_nil in He.
    - intros i t op He. by apply elem_of_nil in He.
    - apply prefix_ok_nil.
    - intros r h Hl Hh. injection Hh as <-. split; [done |]. unfold obj_at. done.
    - intros r t. by case_decide.
  Qed.

  (** ** The invariant holds in every reachable state *)

  Lemma rinv_step s s' : rinv s → step s s' → rinv s'.
  Proof.
    intros Hinv Hs. destruct Hs as [s t op HtN Hp | s t i op a k own Hp
      | s t i op a k own s0 ap rs r σ Hp Hr Hσ | s t i op a k own s0 ap rs Hp Hs0
      | s t i op a k own s0 ap rs Hp Hs0 | s t i op a k r s0 ap rs pre j bat Hp Hj
      | s t i op a k r s0 ap rs pre bat Hp Hs0 | s t i op a k r s0 ap rs pre bat Hp Hs0
      | s t i op s0 o v Hp | s t i op s0 o v Hp | s t i op a own Hp | s | s garbage].
    - by apply rinv_announce.
    - by eapply rinv_snapshot.
    - by eapply rinv_prepare.
    - by eapply rinv_abandon.
    - by eapply rinv_break.
    - by eapply rinv_scan.
    - by eapply rinv_cassucc.
    - by eapply rinv_casfail.
    - by eapply rinv_persist.
    - by eapply rinv_release.
    - by eapply rinv_final.
    - by apply rinv_evict.
    - by apply rinv_crash.
  Qed.

  Lemma rinv_reachable s : reachable s → rinv s.
  Proof.
    induction 1 as [req0 | s s' _ IH Hs]; [apply rinv_init |]. by eapply rinv_step.
  Qed.

  (** ** The theorems *)

  (** The object's state after the operations [l], run in order. *)
  Definition seq_state (l : list entry) : St := foldl (λ σ e, (exec (e_op e) σ).1) init l.

  Lemma obj_at_seq ch h l :
    chain_ok ch → ch !! h = Some l → l_obj l = seq_state (entries (take (S h) ch)).
  Proof.
    intros Hc. revert l. induction h as [| h IH]; intros l Hl.
    - destruct Hc as [(l0 & H0 & Hi & Hb) _]. rewrite H0 in Hl. injection Hl as <-.
      destruct ch as [| l1 ch]; [done |]. simpl in H0. injection H0 as ->.
      unfold seq_state, entries. simpl. by rewrite Hb.
    - destruct (lookup_lt_is_Some_2 ch h) as [l' Hl'].
      { apply lookup_lt_Some in Hl. lia. }
      rewrite (take_S_r ch (S h) l Hl), entries_snoc. unfold seq_state. rewrite foldl_app.
      fold (seq_state (entries (take (S h) ch))). rewrite <- (IH l' Hl').
      symmetry. apply batch_ok_foldl. by apply (proj2 Hc h).
  Qed.

  (** (1) The combining consensus commits every announced operation at most
      once: the committed transitions hold no operation twice, and only
      announced ones, each with the request its thread announced. *)
  Theorem redo_exactly_once s :
    reachable s →
    NoDup (ids (entries (ch s))) ∧
    ∀ e, e ∈ entries (ch s) → Invoke (e_id e) (e_th e) (e_op e) ∈ erase (xh s).
  Proof. intros Hr. pose proof (rinv_reachable s Hr) as Hinv. split; [apply Hinv | apply Hinv]. Qed.

  (** An operation that returned [v] is committed exactly once, in the
      persisted prefix, with result [v]. *)
  Theorem redo_returned_applied_once s i v :
    reachable s → Return i v ∈ erase (xh s) →
    ∃ e, e ∈ durable (ch s) (pseq s) ∧ e_id e = i ∧ e_val e = v ∧
      ∀ e', e' ∈ entries (ch s) → e_id e' = i → e' = e.
  Proof.
    intros Hr Hin. pose proof (rinv_reachable s Hr) as Hinv.
    apply elem_of_erase, elem_of_list_split in Hin as (l1 & l2 & Hxh).
    destruct (ri_ok _ Hinv l1 _ l2 Hxh) as [op Hpt].
    assert ((i, op, v) ∈ points (xh s)) as Hp.
    { apply elem_of_points. rewrite Hxh. apply elem_of_app. by left. }
    rewrite (ri_points _ Hinv) in Hp. apply elem_of_list_fmap in Hp as (e & He & Hd).
    unfold epoint in He. injection He as Hi Ho Hv.
    exists e. split_and!; try done. intros e' He' Hid. rewrite Hi in Hid.
    eapply NoDup_map_inj; [apply (ri_nodup _ Hinv) | done | by eapply elem_of_durable | done].
  Qed.

  (** Herlihy's bound: an operation announced when [curComb] was at [a] is
      committed once [curComb] is at [a + 2]. *)
  Theorem redo_helped s t i a :
    reachable s → pid (pc s t) = Some i → paseq (pc s t) = Some a → a + 2 ≤ cseq s →
    i ∈ ids (entries (ch s)).
  Proof.
    intros Hr Hp Ha Ha2. pose proof (rinv_reachable s Hr) as Hinv.
    pose proof (tinv_of s t Hinv) as Ht.
    destruct (pc s t) as [| i' op a' k own | i' op a' k own s0 ap rs | i' op a' k r s0 ap rs pre j bat
                         | i' op s0 o v | i' op s0 o v | i' op a' own];
      simpl in Hp, Ha; try done; injection Hp as <-; injection Ha as <-;
      specialize (Ht ltac:(done)); simpl in Ht; destruct Ht as [(_ & _ & _ & _ & HP2 & _) _]; auto.
  Qed.

  (** (2) Null recovery: the replica [curComb] designates holds the
      sequential application of the committed operations, and the replica
      the persisted [curComb] designates — the one a crash recovers — that
      of the persisted ones; in every reachable state, crashes included. *)
  Theorem redo_cur_comb_consistent s :
    reachable s →
    rep s (cidx s) = seq_state (entries (ch s)) ∧ rhead s (cidx s) = Some (cseq s) ∧
    rep s (pidx s) = seq_state (durable (ch s) (pseq s)) ∧ rhead s (pidx s) = Some (pseq s).
  Proof.
    intros Hr. pose proof (rinv_reachable s Hr) as Hinv.
    destruct (ri_cur _ Hinv) as (Hc1 & Hc2 & _). destruct (ri_per _ Hinv) as (Hp1 & Hp2 & _).
    destruct (lookup_lt_is_Some_2 (ch s) (cseq s)) as [lc Hlc].
    { rewrite (chain_len s Hinv). lia. }
    destruct (lookup_lt_is_Some_2 (ch s) (pseq s)) as [lp Hlp].
    { rewrite (chain_len s Hinv). pose proof (ri_pseq _ Hinv). lia. }
    split_and!; try done.
    - rewrite Hc1. unfold obj_at. rewrite Hlc. simpl. rewrite (obj_at_seq _ _ _ (ri_chain _ Hinv) Hlc).
      rewrite take_ge; [done |]. rewrite (chain_len s Hinv). lia.
    - rewrite Hp1. unfold obj_at. rewrite Hlp. simpl. by rewrite (obj_at_seq _ _ _ (ri_chain _ Hinv) Hlp).
  Qed.

  (** The histories of Redo-PTM are durably linearizable: the committed
      operations, in commit order, linearize every history (points are
      placed when [curComb] persists past them). *)
  Theorem redo_durably_linearizable s :
    reachable s → durably_linearizable spec (erase (xh s)).
  Proof.
    intros Hr. pose proof (rinv_reachable s Hr) as Hinv. exists (xh s). split; [done | apply Hinv |].
    unfold accepts. rewrite (ri_points _ Hinv). simpl.
    destruct (lookup_lt_is_Some_2 (ch s) (pseq s)) as [lp Hlp].
    { rewrite (chain_len s Hinv). pose proof (ri_pseq _ Hinv). lia. }
    rewrite <- (app_nil_r (effects _)). eapply runs_chain; [apply Hinv | done | constructor].
  Qed.
End redo.

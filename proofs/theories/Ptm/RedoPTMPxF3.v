(** * Redo-PTM's announce toggle bit (finding F3): the seed refuted, request numbers proved

    A model of Redo-PTM's combining consensus (seed 000, §5, Algorithms
    1–3) with read-only transactions, for any sequential object
    ([uexec], [rexec]), any number of threads [N] and any MAX_READ_TRIES
    [MRT], with a switch [announce]: [toggle] is the seed as written
    (Herlihy's announce and applied bits), [numbered] the code's fix
    (a request carries its number; [applied[i]] holds the number of the
    last request of thread [i] applied).  [RedoPTMPx.v] and
    [RedoPTMPxLin.v] number requests, so F3 cannot be stated there; TLC's
    counterexample is [specs/ptm/mutants/RedoAsWrittenToggle.cfg]
    ([specs/ptm/RedoPTM.tla] with [RequestSeq = FALSE], workload [mix];
    [specs/ptm/README.md], "F3: the announce toggle bit breaks when a
    published read completes by itself").

    The state: [curComb]'s seq [cc]; the State ([applied[]], [results[]])
    and the object of every committed transition ([hst], [hobj]);
    [announce[]] ([ann]); [req[]] (each request with its number, which
    with [toggle] is a ghost that no step reads); per thread its position
    ([pc]); ghosts: the requests the committed transitions ran ([glog], in
    commit order, each with the state it ran on and its result) and the
    returns.  The steps ([fstep], one label each; seed lines of
    Algorithm 3 unless stated, code in [impl/perdure-ptm/src/redo/]):
    - [LInvoke]: an update publishes at once, L2 [req[tid] ← updFunc], L3
      [announce[tid] ← ¬announce[tid]] ([update.rs] [publish],
      [apply_update]: [req[tid]] takes a [Request] whose [seq] is the
      number, [announce[tid]] the number); a read starts Algorithm 2;
    - [LRTry]: Algorithm 2 L3–L5 (at iteration MAX_READ_TRIES, publish the
      read the same way), L6 [_curC ← curComb] ([read.rs] [apply_read]);
    - [LRDirect]: Algorithm 2 L8–L11, L17: the shared lock taken and [_curC = curComb]:
      the read runs on the designated replica and returns, its request, if
      published, still open ([read.rs] [try_read_direct]);
    - [LRFail]: Algorithm 2 L8 or L10 fails: the next iteration, or L19
      after MAX_READ_TRIES + 2; [LRFinal]: L19–L27, [results[tid]] of
      [curComb]'s State ([update.rs] [collect]);
    - [LSnap]: L8–L12, [_curC ← curComb], its head's State copied into
      [_newSt] ([cpySt]; [update.rs] [attempt_update] {2}–{3},
      [state.rs] [State::copy_from]), the replica [_c] brought to that
      state (L14–L19: the ring, the lock, [applyRedologs] or the copy, one
      step, [LPrepDone]);
    - [LCopyApplied]: L19's copy path as the published [makeCopy] has it
      ([RedoPTM.tla]'s M1–M2): [curComb]'s State shows the request
      applied: L19 returns false, break to L40 (in the code, the check
      [mine >= my_seq] right after [copy_from] in [attempt_update],
      returning [Attempt::Applied]); [LAbandon]: L13/L16 [continue];
      [LBreak]: L18 finds no free replica, or the copy gives up: break;
    - [LScan]: L20–L24, one index [i] per step: L21–L22 skip [i] if
      [_newSt.applied[i] = announce[i]] (toggle) or if its request's
      number is at most [applied[i]] (numbered, [update.rs] [simulate]),
      else L23 run [req[i]] on [_c], record its result, L24 flip
      [applied[i]] (toggle) or set it to the number;
    - [LCas]: L26–L30 the CAS of [curComb] from the snapshot; success
      commits the transition (L31–L37: return [_newSt.results[tid]]),
      failure L38–L39 and the second iteration of L7, or L40;
    - [LFinal]: L40–L50, [results[tid]] of [curComb]'s State ([collect]).

    Proved:
    - [redo_f3_toggle_returns_unapplied] (F3): an explicit run of the
      [toggle] model, 2 threads, MAX_READ_TRIES = 1, 16 steps, TLC's
      counterexample: thread 0's [get(1)] fails once (thread 1's [inc(1)]
      committed meanwhile), publishes itself (L4–L5), succeeds directly
      and returns; its [inc(2)] announces (L3 toggles [announce[0]] back
      to [applied[0]]), L19's copy path finds it "applied" and breaks, and
      L40–L50 return 0, [results[0]] of a State in which it never ran.  The
      final state violates [results_correct] (TLC's [ResultsCorrect]):
      [Inc 2] returned 0, which it returns on no state, and no committed
      transition ran it.
    - [redo_f3_numbered_results_correct]: in every reachable state of the
      [numbered] model (any object, [N], [MRT]), every update that
      returned [v] was run by exactly one committed transition, with
      result [v], on the state the log before it gives;
      [redo_f3_numbered_reads_correct]: every read that returned (directly
      or collected after a combiner ran it) returned its function's result
      on the object after some prefix of the log;
      [redo_f3_numbered_log_sequential]: the log is a sequential run from
      the initial state and [curComb]'s object is its end.  All from the
      invariant [ginv] ([ginv_init], [ginv_step]).
    - [redo_f3_numbered_same_schedule]: the same schedule in the
      [numbered] model: the copy path's check does not pass, and the
      simulation runs [inc(2)], which commits and returns 1.

    What the model abstracts:
    - Persistence and crashes: F3 is a bug of the volatile state (no crash
      in TLC's counterexample).  No [pwb]/[psync], ring, durability
      witness, crash or null recovery (those are [RedoPTMPx.v]'s).
    - Replicas, the lock and the logs: a committed transition's object is
      kept by seq ([hobj]); a thread's replica [_c] is brought to its
      snapshot's object in one step (replay or copy, L14–L19) and is
      private; the undo (L38) is implicit, the next iteration snapshots
      again.  States are kept per transition ([hst]): [stMatrix], the
      ring and State reuse are not modelled.  [curComb]'s CAS compares the
      seq, which only grows (no ABA).  The shared and exclusive locks are
      abstract: a direct read may fail at any time ([LRFail]), an update
      may find no replica ([LBreak]).
    - The seed reads [announce[i]] and [req[i]] in two loads (L22, L23);
      the model reads them in one step, as [RedoPTM.tla] does (the other
      race of F3, a combiner running the next request under the read's
      announce bit, is not modelled).  The code's [simulate] reads
      [announce[i]] first and skips when it is at most [applied[i]]; a
      publication caught between its two stores is then skipped, which is
      the model's scan step taken before [LInvoke].
    - L40–L50 and Algorithm 2 L19–L27 return in the model only once the
      State shows the request applied (the code's [collect]; else the code
      tries again, [LFinal] back to L8, and a published read waits).  The
      seed returns without that check; the [toggle] run passes it, so it
      is a run of the seed.
    - The copy path's check reads [curComb]'s State at [LCopyApplied];
      the code reads the snapshot's State right after [copy_from], which
      is [LSnap] followed at once by [LCopyApplied].
    - Progress: a published read waits at [LRFinal], and an update tries
      again from [LFinal], until a State shows their request applied, as
      the code's [collect] loops do; the seed's bound (Herlihy's "applied after two
      transitions") is not proved here.  Panicking closures. *)
From stdpp Require Import base list decidable.
From Coq Require Import Lia.

(** The switch: the seed's announce toggle bit, or the code's request
    numbers (finding F3's fix). *)
Inductive announce := toggle | numbered.

(** A function of the thread index with one value changed. *)
Definition fupd {A} (f : nat → A) (i : nat) (x : A) : nat → A :=
  λ j, if decide (j = i) then x else f j.

Lemma fupd_eq {A} (f : nat → A) i x : fupd f i x i = x.
Proof. unfold fupd. by rewrite decide_True. Qed.
Lemma fupd_ne {A} (f : nat → A) i x j : j ≠ i → fupd f i x j = f j.
Proof. intros. unfold fupd. by rewrite decide_False. Qed.

Lemma nodup_cons_inv {A} (x : A) l : NoDup (x :: l) → x ∉ l ∧ NoDup l.
Proof. intros H. by inversion H. Qed.

Section f3.
  (** ** The object, the machine *)

  (** Any sequential object: an update transaction ([UOp]) gives the next
      state and its result, a read-only one ([ROp]) its result.  [σ0] is
      the initial state, [v0] the initial [results[]] entry. *)
  Context {UOp ROp Obj Val : Type}.
  Context (uexec : UOp → Obj → Obj * Val) (rexec : ROp → Obj → Val).
  Context (σ0 : Obj) (v0 : Val).
  (** Threads [0 .. N-1]; [MRT] is Algorithm 2's MAX_READ_TRIES. *)
  Context (N MRT : nat).

  (** A request: the function [req[tid]] holds. *)
  Inductive op := Upd (u : UOp) | Rd (q : ROp).

  Definition exec (o : op) (σ : Obj) : Obj * Val :=
    match o with Upd u => uexec u σ | Rd q => (σ, rexec q σ) end.

  (** A State (Algorithm 1, class State): [applied[N]] and [results[N]]
      (the ticket and the physical log are abstracted, see the header). *)
  Record St := mkSt { s_app : nat → nat; s_res : nat → Val }.

  (** A request applied by a simulation (ghost): its thread, its number
      (the code's [Request::seq]; with the toggle a ghost count of the
      thread's publications), the function, the state it ran on, its
      result. *)
  Record entry := mkE { e_t : nat; e_n : nat; e_op : op; e_pre : Obj; e_v : Val }.

  (** A thread's position.  [m] is the number of its published request
      ([my_seq] in the code), [it] the iteration of Algorithm 3's loop
      (L7), [k] the seq of the snapshot, [st] its [_newSt], [w] its
      replica [_c], [j] the index L20 is at, [gl] the requests the
      simulation ran (ghost). *)
  Inductive pc :=
  | Idle
  | RTry (q : ROp) (ri m : nat)
  | RCheck (q : ROp) (ri m k : nat)
  | RFinal (q : ROp) (m : nat)
  | USnap (u : UOp) (m it : nat)
  | UPrep (u : UOp) (m it k : nat) (st : St) (w : Obj)
  | UScan (u : UOp) (m it k : nat) (st : St) (w : Obj) (j : nat) (gl : list entry)
  | UCas (u : UOp) (m it k : nat) (st : St) (w : Obj) (gl : list entry)
  | UFinal (u : UOp) (m : nat).

  (** The state: [cc] is [curComb]'s seq; [hst k] and [hobj k] the State
      and the replica's object of the transition with seq [k] (the
      committed transitions, [k ≤ cc]); [ann] is [announce[]], [req] is
      [req[]] (with the request's number); ghosts: [glog] the requests the
      committed transitions ran, in commit order; [urets], [rrets] the
      returns (thread, request number, update, value) and (thread, read,
      value). *)
  Record state := mkS {
    cc : nat; hst : nat → St; hobj : nat → Obj;
    ann : nat → nat; req : nat → option (nat * op);
    th : nat → pc;
    glog : list entry;
    urets : list (nat * nat * UOp * Val);
    rrets : list (nat * ROp * Val) }.

  Definition st0 : St := mkSt (λ _, 0) (λ _, v0).
  Definition init : state :=
    mkS 0 (λ _, st0) (λ _, σ0) (λ _, 0) (λ _, None) (λ _, Idle) [] [] [].

  (** The number of thread [i]'s last published request (0: none). *)
  Definition rnum (s : state) (i : nat) : nat :=
    match req s i with Some (n, _) => n | None => 0 end.

  Definition set_th (s : state) (t : nat) (p : pc) : state :=
    mkS (cc s) (hst s) (hobj s) (ann s) (req s) (fupd (th s) t p) (glog s) (urets s) (rrets s).

  (** Algorithm 3 L2–L3, Algorithm 2 L4–L5 ([update.rs] [publish]):
      [req[tid] ← f]; [announce[tid] ← ¬announce[tid]] (toggle), or the
      request's number (numbered). *)
  Definition publish (md : announce) (s : state) (t : nat) (o : op) : state :=
    let n := S (rnum s t) in
    mkS (cc s) (hst s) (hobj s)
        (fupd (ann s) t (match md with toggle => 1 - ann s t | numbered => n end))
        (fupd (req s) t (Some (n, o))) (th s) (glog s) (urets s) (rrets s).

  (** "Thread [t]'s request [m] is applied in State [st]": the toggle reads
      [applied[t] = announce[t]] (Algorithm 3 L22 negated); the code,
      [m ≤ applied[t]] ([update.rs] [attempt_update]'s [mine >= my_seq],
      [collect]'s [applied < my_seq]). *)
  Definition applied (md : announce) (s : state) (st : St) (t m : nat) : bool :=
    match md with
    | toggle => bool_decide (s_app st t = ann s t)
    | numbered => bool_decide (m ≤ s_app st t)
    end.

  (** L21–L22: the request of thread [j] that L23 runs, if any: the toggle
      runs [req[j]] when [applied[j] ≠ announce[j]]; the code
      ([update.rs] [simulate]) when the request's number exceeds
      [applied[j]]. *)
  Definition runs (md : announce) (s : state) (st : St) (j : nat) : option (nat * op) :=
    match req s j with
    | Some (n, o) =>
        if match md with
           | toggle => bool_decide (s_app st j ≠ ann s j)
           | numbered => bool_decide (s_app st j < n)
           end then Some (n, o) else None
    | None => None
    end.

  (** L24: [applied[j] ← ¬applied[j]] (toggle), or the request's number. *)
  Definition flip (md : announce) (a n : nat) : nat :=
    match md with toggle => 1 - a | numbered => n end.

  (** L38–L40: a failed iteration continues (L7's second iteration) or
      ends the loop (L40). *)
  Definition next_iter (u : UOp) (m it : nat) : pc :=
    if decide (it = 0) then USnap u m 1 else UFinal u m.

  (** L30 succeeds, L31–L37: the transition [cc + 1] with State [st] and
      object [w]; the requests it ran join the log; [t] returns
      [_newSt.results[tid]]. *)
  Definition commit (s : state) (t : nat) (u : UOp) (m : nat) (st : St) (w : Obj)
      (gl : list entry) : state :=
    mkS (S (cc s)) (fupd (hst s) (S (cc s)) st) (fupd (hobj s) (S (cc s)) w) (ann s) (req s)
        (fupd (th s) t Idle) (glog s ++ gl) (urets s ++ [(t, m, u, s_res st t)]) (rrets s).

  Definition add_rret (s : state) (x : nat * ROp * Val) : state :=
    mkS (cc s) (hst s) (hobj s) (ann s) (req s) (th s) (glog s) (urets s) (rrets s ++ [x]).
  Definition add_uret (s : state) (x : nat * nat * UOp * Val) : state :=
    mkS (cc s) (hst s) (hobj s) (ann s) (req s) (th s) (glog s) (urets s ++ [x]) (rrets s).

  (** ** The steps *)

  Inductive label :=
  | LInvoke (t : nat) (o : op)
  | LRTry (t : nat) | LRDirect (t : nat) | LRFail (t : nat) | LRFinal (t : nat)
  | LSnap (t : nat) | LPrepDone (t : nat) | LCopyApplied (t : nat) | LAbandon (t : nat)
  | LBreak (t : nat) | LScan (t : nat) | LCas (t : nat) | LFinal (t : nat).

  Definition fstep (md : announce) (l : label) (s : state) : option state :=
    match l with
    (* A client invokes: an update announces at once (L2–L6); a read starts
       Algorithm 2's loop. *)
    | LInvoke t o =>
        if decide (t < N) then
          match th s t with
          | Idle =>
              match o with
              | Upd u => Some (set_th (publish md s t (Upd u)) t (USnap u (S (rnum s t)) 0))
              | Rd q => Some (set_th s t (RTry q 0 0))
              end
          | _ => None
          end
        else None
    (* Algorithm 2 L3–L7: at iteration MAX_READ_TRIES publish (L4–L5);
       [_curC ← curComb]. *)
    | LRTry t =>
        match th s t with
        | RTry q ri m =>
            if decide (ri = MRT)
            then Some (set_th (publish md s t (Rd q)) t (RCheck q ri (S (rnum s t)) (cc s)))
            else Some (set_th s t (RCheck q ri m (cc s)))
        | _ => None
        end
    (* L8–L11, L17: the shared lock taken and [_curC = curComb]: the read
       runs on the designated replica and returns, its request (if it
       published) left open. *)
    | LRDirect t =>
        match th s t with
        | RCheck q ri m k =>
            if decide (k = cc s)
            then Some (add_rret (set_th s t Idle) (t, q, rexec q (hobj s k)))
            else None
        | _ => None
        end
    (* L8/L10 fail (a writer holds the lock, or [curComb] moved): the next
       iteration, or L19 after MAX_READ_TRIES + 2. *)
    | LRFail t =>
        match th s t with
        | RCheck q ri m k =>
            Some (set_th s t (if decide (ri < S MRT) then RTry q (S ri) m else RFinal q m))
        | _ => None
        end
    (* L19–L27: [results[tid]] of [curComb]'s State, once it shows the
       request applied ([update.rs] [collect]). *)
    | LRFinal t =>
        match th s t with
        | RFinal q m =>
            let L := hst s (cc s) in
            if applied md s L t m then Some (add_rret (set_th s t Idle) (t, q, s_res L t))
            else None
        | _ => None
        end
    (* L8–L17: [_curC ← curComb], its head's State copied into [_newSt]
       (cpySt), the replica brought to it (L18–L19, abstracted). *)
    | LSnap t =>
        match th s t with
        | USnap u m it => Some (set_th s t (UPrep u m it (cc s) (hst s (cc s)) (hobj s (cc s))))
        | _ => None
        end
    | LPrepDone t =>
        match th s t with
        | UPrep u m it k st w => Some (set_th s t (UScan u m it k st w 0 []))
        | _ => None
        end
    (* L19's copy path: [curComb]'s State has our request applied: L19
       returns false, break (L40). *)
    | LCopyApplied t =>
        match th s t with
        | UPrep u m it k st w =>
            if applied md s (hst s (cc s)) t m then Some (set_th s t (UFinal u m)) else None
        | _ => None
        end
    (* L13/L16 [continue]. *)
    | LAbandon t =>
        match th s t with
        | UPrep u m it k st w => Some (set_th s t (next_iter u m it))
        | _ => None
        end
    (* L18 (no free replica), the copy's give-up: break. *)
    | LBreak t =>
        match th s t with
        | UPrep u m it k st w => Some (set_th s t (UFinal u m))
        | _ => None
        end
    (* L20–L24, one index per step. *)
    | LScan t =>
        match th s t with
        | UScan u m it k st w j gl =>
            if decide (j < N) then
              match runs md s st j with
              | Some (n, o) =>
                  let r := exec o w in
                  Some (set_th s t (UScan u m it k
                    (mkSt (fupd (s_app st) j (flip md (s_app st j) n)) (fupd (s_res st) j r.2))
                    r.1 (S j) (gl ++ [mkE j n o w r.2])))
              | None => Some (set_th s t (UScan u m it k st w (S j) gl))
              end
            else Some (set_th s t (UCas u m it k st w gl))
        | _ => None
        end
    (* L26–L30: the CAS; success L31–L37, failure L38–L39. *)
    | LCas t =>
        match th s t with
        | UCas u m it k st w gl =>
            if decide (k = cc s) then Some (commit s t u m st w gl)
            else Some (set_th s t (next_iter u m it))
        | _ => None
        end
    (* L40–L50: [results[tid]] of [curComb]'s State, once it shows the
       request applied ([collect]; else [apply_update] tries again). *)
    | LFinal t =>
        match th s t with
        | UFinal u m =>
            let L := hst s (cc s) in
            if applied md s L t m then Some (add_uret (set_th s t Idle) (t, m, u, s_res L t))
            else Some (set_th s t (USnap u m 0))
        | _ => None
        end
    end.

  Inductive reach (md : announce) : state → Prop :=
  | reach_init : reach md init
  | reach_step s l s' : reach md s → fstep md l s = Some s' → reach md s'.

  Fixpoint frun (md : announce) (ls : list label) (s : state) : option state :=
    match ls with
    | [] => Some s
    | l :: ls => match fstep md l s with Some s' => frun md ls s' | None => None end
    end.

  Lemma frun_reach md ls s s' : reach md s → frun md ls s = Some s' → reach md s'.
  Proof.
    revert s. induction ls as [| l ls IH]; intros s Hs H; simpl in H.
    - by injection H as <-.
    - destruct (fstep md l s) as [s1 |] eqn:E; [| done]. apply (IH s1); [| done].
      by eapply reach_step.
  Qed.

  (** ** The property: each returned update ran once, in the commit order *)

  Fixpoint run_from (σ : Obj) (l : list entry) : Obj :=
    match l with [] => σ | e :: l => run_from (exec (e_op e) σ).1 l end.

  (** [l] is a sequential run from [σ]: each entry ran on the state the
      entries before it leave, with the result its function gives there. *)
  Fixpoint seq_ok (σ : Obj) (l : list entry) : Prop :=
    match l with
    | [] => True
    | e :: l => e_pre e = σ ∧ e_v e = (exec (e_op e) σ).2 ∧ seq_ok (exec (e_op e) σ).1 l
    end.

  (** TLC's [ResultsCorrect] for updates: an update [u] (request [m] of
      thread [t]) that returned [v] was run by exactly one committed
      transition, with result [v], on the state the log before it gives. *)
  Definition results_correct (s : state) : Prop :=
    ∀ t m u v, (t, m, u, v) ∈ urets s →
      ∃ e, filter (λ e, (e_t e, e_n e) = (t, m)) (glog s) = [e] ∧
           e_op e = Upd u ∧ e_v e = v ∧
           (∃ l1 l2, glog s = l1 ++ e :: l2 ∧ e_pre e = run_from σ0 l1) ∧
           v = (uexec u (e_pre e)).2.

  (** ** The numbered protocol: the invariant *)

  Lemma run_from_app σ l1 l2 : run_from σ (l1 ++ l2) = run_from (run_from σ l1) l2.
  Proof. revert σ. induction l1; intros σ; simpl; auto. Qed.

  Lemma seq_ok_app σ l1 l2 : seq_ok σ (l1 ++ l2) ↔ seq_ok σ l1 ∧ seq_ok (run_from σ l1) l2.
  Proof. revert σ. induction l1 as [| e l1 IH]; intros σ; simpl; [tauto |]. rewrite IH. tauto. Qed.

  Lemma seq_ok_in σ l e :
    seq_ok σ l → e ∈ l →
    ∃ l1 l2, l = l1 ++ e :: l2 ∧ e_pre e = run_from σ l1 ∧ e_v e = (exec (e_op e) (e_pre e)).2.
  Proof.
    revert σ. induction l as [| e' l IH]; intros σ Hok Hin; [by apply elem_of_nil in Hin |].
    destruct Hok as (Hp & Hv & Hok). apply elem_of_cons in Hin as [-> | Hin].
    - exists [], l. simpl. rewrite Hp. auto.
    - destruct (IH _ Hok Hin) as (l1 & l2 & -> & Hpre & Hv'). exists (e' :: l1), l2. simpl. auto.
  Qed.

  Definition set_e (st : St) (e : entry) : St :=
    mkSt (fupd (s_app st) (e_t e) (e_n e)) (fupd (s_res st) (e_t e) (e_v e)).
  Definition apply_gl (st : St) (gl : list entry) : St := foldl set_e st gl.

  Lemma apply_gl_snoc st gl e : apply_gl st (gl ++ [e]) = set_e (apply_gl st gl) e.
  Proof. unfold apply_gl. by rewrite foldl_app. Qed.

  Lemma apply_gl_notin st gl i :
    i ∉ map e_t gl → s_app (apply_gl st gl) i = s_app st i ∧ s_res (apply_gl st gl) i = s_res st i.
  Proof.
    revert st. induction gl as [| e gl IH]; intros st Hi; [done |]. simpl in Hi.
    apply not_elem_of_cons in Hi as [Hne Hi]. unfold apply_gl in *. simpl.
    destruct (IH (set_e st e) Hi) as [-> ->]. unfold set_e. simpl. by rewrite !fupd_ne.
  Qed.

  Lemma apply_gl_in st gl e :
    NoDup (map e_t gl) → e ∈ gl →
    s_app (apply_gl st gl) (e_t e) = e_n e ∧ s_res (apply_gl st gl) (e_t e) = e_v e.
  Proof.
    revert st. induction gl as [| e' gl IH]; intros st Hnd Hin; [by apply elem_of_nil in Hin |].
    simpl in Hnd. apply nodup_cons_inv in Hnd as [Hn Hnd]. unfold apply_gl in *. simpl.
    apply elem_of_cons in Hin as [<- | Hin].
    - destruct (apply_gl_notin (set_e st e) gl (e_t e) Hn) as [H1 H2]. unfold apply_gl in H1, H2.
      rewrite H1, H2. unfold set_e. simpl. by rewrite !fupd_eq.
    - by apply IH.
  Qed.

  Lemma in_map_t gl e : e ∈ gl → e_t e ∈ map e_t gl.
  Proof. intros. apply elem_of_list_fmap. eauto. Qed.

  Lemma map_t_in gl i : i ∈ map e_t gl → ∃ e, e ∈ gl ∧ e_t e = i.
  Proof. intros H. apply elem_of_list_fmap in H as (e & -> & He). eauto. Qed.

  Definition eid (e : entry) : nat * nat := (e_t e, e_n e).

  Lemma nodup_eid gl : NoDup (map e_t gl) → NoDup (map eid gl).
  Proof.
    induction gl as [| e gl IH]; simpl; [constructor |]. intros Hnd.
    apply nodup_cons_inv in Hnd as [Hn Hnd]. constructor; [| by apply IH].
    intros Hin. apply elem_of_list_fmap in Hin as (e' & Heq & He'). apply Hn.
    unfold eid in Heq. injection Heq as Ht _. rewrite Ht. by apply in_map_t.
  Qed.

  Lemma filter_unique (l : list entry) e :
    NoDup (map eid l) → e ∈ l → filter (λ x, (e_t x, e_n x) = (e_t e, e_n e)) l = [e].
  Proof.
    induction l as [| x l IH]; intros Hnd Hin; [by apply elem_of_nil in Hin |].
    simpl in Hnd. apply nodup_cons_inv in Hnd as [Hn Hnd]. rewrite filter_cons.
    apply elem_of_cons in Hin as [-> | Hin].
    - rewrite decide_True by done. f_equal. clear IH Hnd. induction l as [| y l IHl]; [done |].
      simpl in Hn. apply not_elem_of_cons in Hn as [Hy Hn].
      rewrite filter_cons_False; [by apply IHl |].
      intros Heq. apply Hy. unfold eid. by rewrite Heq.
    - rewrite decide_False; [by apply IH |]. intros Heq. apply Hn. apply elem_of_list_fmap.
      exists e. split; [| done]. unfold eid. by rewrite Heq.
  Qed.

  Section inv.
  Notation md := numbered.

  (** Thread [t] runs update [u] as its request [m]. *)
  Definition own (s : state) (t : nat) (u : UOp) (m : nat) : Prop :=
    req s t = Some (m, Upd u) ∧ 0 < m.
  (** Thread [t]'s read [q] is published as its request [m]. *)
  Definition rown (s : state) (t : nat) (q : ROp) (m : nat) : Prop :=
    req s t = Some (m, Rd q) ∧ 0 < m.

  (** The requests [gl] a simulation on the snapshot [k] ran: a sequential
      run from [k]'s object, one per thread, each open in [k]'s State and
      the thread's current request or an older one. *)
  Definition gl_ok (s : state) (k : nat) (gl : list entry) : Prop :=
    seq_ok (hobj s k) gl ∧ NoDup (map e_t gl) ∧
    ∀ e, e ∈ gl → s_app (hst s k) (e_t e) < e_n e ∧ e_n e ≤ rnum s (e_t e) ∧
                  (e_n e = rnum s (e_t e) → req s (e_t e) = Some (e_n e, e_op e)).

  (** While [curComb] is still the snapshot, thread [t]'s own request is in
      the log or in [gl], with the result [_newSt] holds for it. *)
  Definition mine (s : state) (t : nat) (u : UOp) (m k : nat) (st : St) (gl : list entry) : Prop :=
    cc s = k → ∃ e, e ∈ glog s ++ gl ∧ e_t e = t ∧ e_n e = m ∧ e_op e = Upd u ∧ e_v e = s_res st t.

  Definition linv (s : state) (t : nat) (p : pc) : Prop :=
    match p with
    | Idle => True
    | RTry q ri m => t < N ∧ ri ≤ S MRT ∧ (MRT < ri → rown s t q m)
    | RCheck q ri m _ => t < N ∧ ri ≤ S MRT ∧ (MRT ≤ ri → rown s t q m)
    | RFinal q m => t < N ∧ rown s t q m
    | USnap u m _ | UFinal u m => t < N ∧ own s t u m
    | UPrep u m _ k st w => t < N ∧ own s t u m ∧ k ≤ cc s ∧ st = hst s k ∧ w = hobj s k
    | UScan u m _ k st w j gl =>
        t < N ∧ own s t u m ∧ k ≤ cc s ∧ st = apply_gl (hst s k) gl ∧
        w = run_from (hobj s k) gl ∧ gl_ok s k gl ∧ (∀ e, e ∈ gl → e_t e < j) ∧
        (t < j → mine s t u m k st gl)
    | UCas u m _ k st w gl =>
        t < N ∧ own s t u m ∧ k ≤ cc s ∧ st = apply_gl (hst s k) gl ∧
        w = run_from (hobj s k) gl ∧ gl_ok s k gl ∧ mine s t u m k st gl
    end.

  Record ginv (s : state) : Prop := {
    g_seq : seq_ok σ0 (glog s);
    g_obj : hobj s (cc s) = run_from σ0 (glog s);
    g_app_ub : ∀ e, e ∈ glog s → e_n e ≤ s_app (hst s (cc s)) (e_t e);
    g_app_req : ∀ i, s_app (hst s (cc s)) i ≤ rnum s i;
    g_app_res : ∀ i, 0 < s_app (hst s (cc s)) i →
      ∃ e, e ∈ glog s ∧ e_t e = i ∧ e_n e = s_app (hst s (cc s)) i ∧ e_v e = s_res (hst s (cc s)) i;
    g_req : ∀ e, e ∈ glog s → e_n e ≤ rnum s (e_t e) ∧
      (e_n e = rnum s (e_t e) → req s (e_t e) = Some (e_n e, e_op e));
    g_nodup : NoDup (map eid (glog s));
    g_rets : ∀ t m u v, (t, m, u, v) ∈ urets s →
      ∃ e, e ∈ glog s ∧ e_t e = t ∧ e_n e = m ∧ e_op e = Upd u ∧ e_v e = v;
    g_th : ∀ t, linv s t (th s t);
    g_rrets : ∀ t q v, (t, q, v) ∈ rrets s →
      ∃ l1 l2, glog s = l1 ++ l2 ∧ v = rexec q (run_from σ0 l1)
  }.

  Lemma ginv_init : ginv init.
  Proof.
    constructor; simpl.
    - done.
    - done.
    - intros e He. by apply elem_of_nil in He.
    - intros i. unfold rnum. simpl. lia.
    - intros i Hi. simpl in Hi. lia.
    - intros e He. by apply elem_of_nil in He.
    - constructor.
    - intros t m u v Hin. by apply elem_of_nil in Hin.
    - done.
    - intros t q v Hin. by apply elem_of_nil in Hin.
  Qed.

  (** What a thread's invariant reads does not change, or [curComb] moved
      past every snapshot. *)
  Lemma linv_ext s s' t p :
    cc s ≤ cc s' → (∀ k, k ≤ cc s → hst s' k = hst s k ∧ hobj s' k = hobj s k) →
    req s' = req s → (cc s' = cc s → glog s' = glog s) →
    linv s t p → linv s' t p.
  Proof.
    intros Hcc Hk Hreq Hg. unfold linv, own, rown, gl_ok, mine, rnum. rewrite Hreq.
    destruct p; try tauto.
    - intros (? & [? ?] & ? & -> & ->). destruct (Hk k) as [-> ->]; [done |]. split_and!; auto; lia.
    - intros (? & [? ?] & ? & -> & -> & (Hs & Hnd & Hgl) & Hj & Hm).
      destruct (Hk k) as [-> ->]; [done |]. split_and!; auto; [lia |].
      intros Htj Hk'. destruct (decide (cc s' = cc s)) as [Heq |]; [| lia].
      rewrite Hg by done. apply Hm; [done | lia].
    - intros (? & [? ?] & ? & -> & -> & (Hs & Hnd & Hgl) & Hm).
      destruct (Hk k) as [-> ->]; [done |]. split_and!; auto; [lia |].
      intros Hk'. destruct (decide (cc s' = cc s)) as [Heq |]; [| lia].
      rewrite Hg by done. apply Hm. lia.
  Qed.

  Lemma linv_set_th s t p t' q : linv s t' q → linv (set_th s t p) t' q.
  Proof. apply linv_ext; simpl; auto. Qed.

  Lemma ginv_set_th s t p : ginv s → linv s t p → ginv (set_th s t p).
  Proof.
    intros G Hp. destruct G. constructor; try done.
    intros t'. simpl. unfold fupd. case_decide; subst; apply linv_set_th; auto.
  Qed.

  Lemma ginv_add_rret s t q v :
    ginv s → (∃ l1 l2, glog s = l1 ++ l2 ∧ v = rexec q (run_from σ0 l1)) →
    ginv (add_rret s (t, q, v)).
  Proof.
    intros G Hv. destruct G as [G1 G2 G3 G4 G5 G6 G7 G8 G9 G10]. constructor; try done.
    intros t' q' v' Hin. simpl in Hin. apply elem_of_app in Hin as [Hin | Hin]; [exact (G10 _ _ _ Hin) |].
    apply elem_of_list_singleton in Hin. injection Hin as <- <- <-. done.
  Qed.

  Lemma rnum_publish s t o i :
    rnum (publish md s t o) i = if decide (i = t) then S (rnum s t) else rnum s i.
  Proof. unfold rnum at 1. simpl. unfold fupd. by case_decide. Qed.

  Lemma linv_publish s t o t' p : t' ≠ t → linv s t' p → linv (publish md s t o) t' p.
  Proof.
    intros Hne. unfold linv, own, rown, gl_ok, mine.
    assert (req (publish md s t o) t' = req s t') as Hr by (simpl; by apply fupd_ne).
    assert (∀ e, e_n e ≤ rnum s (e_t e) →
      e_n e ≤ rnum (publish md s t o) (e_t e) ∧
      ((e_n e = rnum s (e_t e) → req s (e_t e) = Some (e_n e, e_op e)) →
       e_n e = rnum (publish md s t o) (e_t e) → req (publish md s t o) (e_t e) = Some (e_n e, e_op e)))
      as Hpub.
    { intros e He. rewrite rnum_publish. simpl. unfold fupd.
      case_decide as Heq; [rewrite Heq in He; split; [lia | intros _ ?; lia] |].
      split; [lia | auto]. }
    destruct p; cbv beta iota; rewrite ?Hr; try tauto.
    - intros (? & [? ?] & ? & ? & ? & (Hs & Hnd & Hgl) & Hj & Hm). split_and!; auto.
      intros e He. destruct (Hgl e He) as (Ha & Hb & Hc). destruct (Hpub e Hb). split_and!; auto.
    - intros (? & [? ?] & ? & ? & ? & (Hs & Hnd & Hgl) & Hm). split_and!; auto.
      intros e He. destruct (Hgl e He) as (Ha & Hb & Hc). destruct (Hpub e Hb). split_and!; auto.
  Qed.

  Lemma ginv_publish s t o p :
    ginv s → (th s t = Idle ∨ ∃ q m, th s t = RTry q MRT m) →
    linv (publish md s t o) t p → ginv (set_th (publish md s t o) t p).
  Proof.
    intros G Hth Hp. apply ginv_set_th; [| done]. destruct G as [G1 G2 G3 G4 G5 G6 G7 G8 G9 G10].
    constructor; try done.
    - intros i. rewrite rnum_publish. specialize (G4 i).
      change (s_app (hst s (cc s)) i ≤ if decide (i = t) then S (rnum s t) else rnum s i).
      case_decide; subst; lia.
    - intros e He. destruct (G6 e He) as [H1 H2]. rewrite !rnum_publish.
      change (req (publish md s t o)) with (fupd (req s) t (Some (S (rnum s t), o))). unfold fupd.
      case_decide as Heq; [rewrite Heq in H1; split; [lia | intros ?; lia] | auto].
    - intros t'. destruct (decide (t' = t)) as [-> |].
      + change (th (publish md s t o) t) with (th s t). pose proof (G9 t) as H9.
        destruct Hth as [Hi | (q & m' & Hi)]; rewrite Hi in H9 |- *; simpl in *; [done |].
        split_and!; [tauto | lia | intros; exfalso; lia].
      + apply linv_publish; [done | apply G9].
  Qed.

  (** A request the latest State shows applied is in the log, with the
      State's result. *)
  Lemma applied_entry_op s t o m :
    ginv s → req s t = Some (m, o) → 0 < m → m ≤ s_app (hst s (cc s)) t →
    ∃ e, e ∈ glog s ∧ e_t e = t ∧ e_n e = m ∧ e_op e = o ∧ e_v e = s_res (hst s (cc s)) t.
  Proof.
    intros G Hr Hm Hle.
    assert (s_app (hst s (cc s)) t ≤ m) as Hge.
    { pose proof (g_app_req _ G t) as H. unfold rnum in H. by rewrite Hr in H. }
    destruct (g_app_res _ G t) as (e & He & Ht & Hn & Hv); [lia |].
    assert (e_n e = m) as Hem by lia.
    destruct (g_req _ G e He) as [_ Hq]. rewrite Ht in Hq. unfold rnum in Hq. rewrite Hr in Hq.
    specialize (Hq Hem). rewrite Hem in Hq. injection Hq as Hq.
    exists e. split_and!; auto.
  Qed.

  Lemma applied_entry s t u m :
    ginv s → own s t u m → m ≤ s_app (hst s (cc s)) t →
    ∃ e, e ∈ glog s ∧ e_t e = t ∧ e_n e = m ∧ e_op e = Upd u ∧ e_v e = s_res (hst s (cc s)) t.
  Proof. intros G [Hr Hm] Hle. by apply applied_entry_op. Qed.

  Lemma nodup_snoc_t gl e :
    NoDup (map e_t gl) → (∀ e', e' ∈ gl → e_t e' < e_t e) → NoDup (map e_t (gl ++ [e])).
  Proof.
    intros Hnd Hlt. rewrite map_app. apply (proj2 (stdpp.list.NoDup_app _ _)). split_and!; [done | | ].
    - intros x Hx Hx'. apply elem_of_list_singleton in Hx'. subst x.
      apply elem_of_list_fmap in Hx as (e' & Heq & He'). specialize (Hlt e' He'). lia.
    - simpl. constructor; [apply not_elem_of_nil | constructor].
  Qed.

  Lemma ginv_commit s t u m it k st w gl :
    ginv s → th s t = UCas u m it k st w gl → k = cc s → ginv (commit s t u m st w gl).
  Proof.
    intros G Hth ->. pose proof (g_th _ G t) as Ht. rewrite Hth in Ht.
    destruct Ht as (HN & Hown & _ & Hst & Hw & (Hs & Hnd & Hgl) & Hm).
    destruct G as [G1 G2 G3 G4 G5 G6 G7 G8 G9 G10].
    assert (hst (commit s t u m st w gl) (cc (commit s t u m st w gl)) = st) as HL.
    { simpl. apply fupd_eq. }
    assert (hobj (commit s t u m st w gl) (cc (commit s t u m st w gl)) = w) as HO.
    { simpl. apply fupd_eq. }
    constructor.
    - simpl. apply seq_ok_app. split; [done |]. by rewrite <- G2.
    - rewrite HO. simpl. by rewrite run_from_app, <- G2.
    - rewrite HL. intros e He. simpl in He. apply elem_of_app in He as [He | He].
      + destruct (decide (e_t e ∈ map e_t gl)) as [Hin | Hnin].
        * destruct (map_t_in _ _ Hin) as (e' & He' & Ht'). rewrite <- Ht', Hst.
          rewrite (proj1 (apply_gl_in _ _ _ Hnd He')). destruct (Hgl e' He') as (Ha & _ & _).
          rewrite Ht' in Ha. specialize (G3 e He). lia.
        * rewrite Hst, (proj1 (apply_gl_notin _ _ _ Hnin)). by apply G3.
      + rewrite Hst, (proj1 (apply_gl_in _ _ _ Hnd He)). done.
    - rewrite HL. intros i. change (rnum (commit s t u m st w gl) i) with (rnum s i).
      destruct (decide (i ∈ map e_t gl)) as [Hin | Hnin].
      + destruct (map_t_in _ _ Hin) as (e' & He' & <-).
        rewrite Hst, (proj1 (apply_gl_in _ _ _ Hnd He')). apply (Hgl e' He').
      + rewrite Hst, (proj1 (apply_gl_notin _ _ _ Hnin)). apply G4.
    - rewrite HL. intros i Hi.
      destruct (decide (i ∈ map e_t gl)) as [Hin | Hnin].
      + destruct (map_t_in _ _ Hin) as (e' & He' & <-). exists e'.
        rewrite Hst, (proj1 (apply_gl_in _ _ _ Hnd He')), (proj2 (apply_gl_in _ _ _ Hnd He')).
        split_and!; auto. simpl. apply elem_of_app. by right.
      + rewrite Hst in Hi |- *. rewrite (proj1 (apply_gl_notin _ _ _ Hnin)) in Hi |- *.
        rewrite (proj2 (apply_gl_notin _ _ _ Hnin)).
        destruct (G5 i Hi) as (e & He & ?). exists e. split; [| done]. simpl. apply elem_of_app. by left.
    - intros e He. simpl in He. change (rnum (commit s t u m st w gl)) with (rnum s).
      change (req (commit s t u m st w gl)) with (req s).
      apply elem_of_app in He as [He | He]; [by apply G6 | apply (Hgl e He)].
    - simpl. rewrite map_app. apply (proj2 (stdpp.list.NoDup_app _ _)).
      split_and!; [done | | by apply nodup_eid].
      intros x Hx1 Hx2. apply elem_of_list_fmap in Hx1 as (e1 & -> & He1).
      apply elem_of_list_fmap in Hx2 as (e2 & Heq & He2). unfold eid in Heq. injection Heq as Ht Hn.
      specialize (G3 e1 He1). destruct (Hgl e2 He2) as (Ha & _). rewrite <- Ht in Ha. lia.
    - intros t' m' u' v' Hin. simpl in Hin. apply elem_of_app in Hin as [Hin | Hin].
      + destruct (G8 _ _ _ _ Hin) as (e & He & ?). exists e. split; [| done].
        simpl. apply elem_of_app. by left.
      + apply elem_of_list_singleton in Hin. injection Hin as -> -> -> ->.
        destruct (Hm eq_refl) as (e & He & ?). exists e. split; [| done]. done.
    - intros t'. simpl. unfold fupd at 1. case_decide; [done |].
      apply (linv_ext s); simpl; auto.
      + intros k' Hk. rewrite !fupd_ne by lia. done.
      + intros; lia.
    - intros t' q' v' Hin. destruct (G10 _ _ _ Hin) as (l1 & l2 & Hl & Hv). exists l1, (l2 ++ gl).
      simpl. rewrite Hl, app_assoc. done.
  Qed.

  Lemma ginv_add_uret s t m u v :
    ginv s → (∃ e, e ∈ glog s ∧ e_t e = t ∧ e_n e = m ∧ e_op e = Upd u ∧ e_v e = v) →
    ginv (add_uret s (t, m, u, v)).
  Proof.
    intros G He. destruct G as [G1 G2 G3 G4 G5 G6 G7 G8 G9 G10]. constructor; try done.
    intros t' m' u' v' Hin. simpl in Hin. apply elem_of_app in Hin as [Hin | Hin]; [by apply G8 |].
    apply elem_of_list_singleton in Hin. injection Hin as <- <- <- <-. done.
  Qed.

  Lemma ginv_step s l s' : ginv s → fstep md l s = Some s' → ginv s'.
  Proof.
    intros G H. pose proof (g_th _ G) as Gth.
    destruct l as [t o | t | t | t | t | t | t | t | t | t | t | t | t]; cbn [fstep] in H.
    - (* LInvoke *)
      destruct (decide (t < N)) as [HN |]; [| discriminate].
      destruct (th s t) eqn:Hth; try discriminate. destruct o as [u | q]; injection H as <-.
      + apply ginv_publish; [done | by left |]. split; [done |]. split; [| lia].
        simpl. by rewrite fupd_eq.
      + apply ginv_set_th; [done |]. simpl. split_and!; [done | lia | intros; exfalso; lia].
    - (* LRTry *)
      destruct (th s t) eqn:Hth; try discriminate. specialize (Gth t). rewrite Hth in Gth.
      destruct Gth as (HN & Hri & Hown). destruct (decide (ri = MRT)) as [-> | Hne]; injection H as <-.
      + apply ginv_publish; [done | right; eauto |]. simpl. split_and!; [done | lia |].
        intros _. split; [exact (fupd_eq (req s) t _) | lia].
      + apply ginv_set_th; [done |]. simpl. split_and!; [done | lia |]. intros ?. apply Hown. lia.
    - (* LRDirect *)
      destruct (th s t) eqn:Hth; try discriminate.
      destruct (decide (k = cc s)) as [-> |]; [| discriminate]. injection H as <-.
      apply ginv_add_rret; [apply ginv_set_th; [done | simpl; done] |].
      exists (glog s), []. rewrite app_nil_r. split; [done |]. simpl. by rewrite (g_obj _ G).
    - (* LRFail *)
      destruct (th s t) eqn:Hth; try discriminate. specialize (Gth t). rewrite Hth in Gth.
      destruct Gth as (HN & Hri & Hown).
      injection H as <-. apply ginv_set_th; [done |]. case_decide; simpl.
      + split_and!; [done | lia |]. intros ?. apply Hown. lia.
      + split; [done |]. apply Hown. lia.
    - (* LRFinal *)
      destruct (th s t) eqn:Hth; try discriminate. specialize (Gth t). rewrite Hth in Gth.
      destruct Gth as (HN & Hr & Hm0).
      destruct (applied md s (hst s (cc s)) t m) eqn:Ha; [| discriminate]. injection H as <-.
      apply ginv_add_rret; [apply ginv_set_th; [done | simpl; done] |].
      unfold applied in Ha. apply bool_decide_eq_true in Ha.
      destruct (applied_entry_op s t (Rd q) m G Hr Hm0 Ha) as (e & He & _ & _ & Hop & Hv).
      destruct (seq_ok_in _ _ _ (g_seq _ G) He) as (l1 & l2 & Hl & Hpre & Hev).
      exists l1, (e :: l2). split; [done |]. rewrite <- Hv, Hev, Hop, Hpre. done.
    - (* LSnap *)
      destruct (th s t) eqn:Hth; try discriminate. specialize (Gth t). rewrite Hth in Gth.
      injection H as <-. apply ginv_set_th; [done |]. destruct Gth. simpl. split_and!; auto.
    - (* LPrepDone *)
      destruct (th s t) eqn:Hth; try discriminate. specialize (Gth t). rewrite Hth in Gth.
      injection H as <-. apply ginv_set_th; [done |].
      destruct Gth as (? & ? & ? & -> & ->). simpl. unfold gl_ok. split_and!; auto.
      all: try (intros e He; by apply elem_of_nil in He).
      all: try (intros ?; lia).
      all: constructor.
    - (* LCopyApplied *)
      destruct (th s t) eqn:Hth; try discriminate. specialize (Gth t). rewrite Hth in Gth.
      destruct (applied md s (hst s (cc s)) t m); [| discriminate]. injection H as <-.
      apply ginv_set_th; [done |]. destruct Gth as (? & ? & _). simpl. auto.
    - (* LAbandon *)
      destruct (th s t) eqn:Hth; try discriminate. specialize (Gth t). rewrite Hth in Gth.
      injection H as <-. apply ginv_set_th; [done |]. destruct Gth as (? & ? & _).
      unfold next_iter. case_decide; simpl; auto.
    - (* LBreak *)
      destruct (th s t) eqn:Hth; try discriminate. specialize (Gth t). rewrite Hth in Gth.
      injection H as <-. apply ginv_set_th; [done |]. destruct Gth as (? & ? & _). simpl. auto.
    - (* LScan *)
      destruct (th s t) eqn:Hth; try discriminate. specialize (Gth t). rewrite Hth in Gth.
      destruct Gth as (HN & Hown & Hk & Hst & Hw & (Hs & Hnd & Hgl) & Hj & Hm).
      assert (j ∉ map e_t gl) as Hjn.
      { intros Hin. destruct (map_t_in _ _ Hin) as (e & He & Het). specialize (Hj e He). lia. }
      destruct (decide (j < N)).
      + destruct (runs md s st j) as [[n o] |] eqn:Hrun; injection H as <-;
          apply ginv_set_th; try done.
        * unfold runs in Hrun. destruct (req s j) as [[n' o'] |] eqn:Hreq; [| discriminate].
          case_bool_decide as Hlt; [| discriminate]. injection Hrun as -> ->.
          set (e := mkE j n o w (exec o w).2).
          assert (s_app st j = s_app (hst s k) j ∧ s_res st j = s_res (hst s k) j) as [Ha Hr]
            by (rewrite Hst; by apply apply_gl_notin).
          unfold linv, gl_ok. split_and!; auto.
          -- rewrite apply_gl_snoc, <- Hst. done.
          -- rewrite run_from_app, <- Hw. done.
          -- apply seq_ok_app. split; [done |]. rewrite <- Hw. simpl. auto.
          -- by apply nodup_snoc_t.
          -- intros e' He'. apply elem_of_app in He' as [He' | He']; [by apply Hgl |].
             apply elem_of_list_singleton in He'. subst e'. simpl. unfold rnum. rewrite Hreq.
             split_and!; [lia | lia | auto].
          -- intros e' He'. apply elem_of_app in He' as [He' | He'].
             ++ specialize (Hj e' He'). lia.
             ++ apply elem_of_list_singleton in He'. subst e'. simpl. lia.
          -- intros Htj Hcc. destruct (decide (t = j)) as [-> | Hne].
             ++ destruct Hown as [Hown _]. rewrite Hreq in Hown. injection Hown as -> ->.
                exists e. split_and!; auto.
                ** apply elem_of_app. right. apply elem_of_app. right. by left.
                ** simpl. by rewrite fupd_eq.
             ++ destruct (Hm ltac:(lia) Hcc) as (e0 & He0 & ? & ? & ? & Hv0). exists e0.
                split_and!; auto.
                ** rewrite app_assoc. apply elem_of_app. by left.
                ** simpl. rewrite fupd_ne by done. done.
        * unfold linv, gl_ok. split_and!; auto.
          -- intros e' He'. specialize (Hj e' He'). lia.
          -- intros Htj Hcc. destruct (decide (t = j)) as [-> | Hne].
             ++ destruct Hown as [Hr0 Hm0]. unfold runs in Hrun. rewrite Hr0 in Hrun.
                case_bool_decide as Hlt; [discriminate |].
                assert (s_app st j = s_app (hst s k) j ∧ s_res st j = s_res (hst s k) j) as [Ha Hr]
                  by (rewrite Hst; by apply apply_gl_notin).
                subst k. destruct (applied_entry s j u m G (conj Hr0 Hm0) ltac:(lia))
                  as (e & He & ? & ? & ? & Hv). exists e. split_and!; auto.
                ** apply elem_of_app. by left.
                ** by rewrite Hr.
             ++ apply Hm; [lia | done].
      + injection H as <-. apply ginv_set_th; [done |]. unfold linv, gl_ok. split_and!; auto.
        apply Hm. lia.
    - (* LCas *)
      destruct (th s t) eqn:Hth; try discriminate.
      destruct (decide (k = cc s)); injection H as <-; [by eapply ginv_commit |].
      specialize (Gth t). rewrite Hth in Gth. apply ginv_set_th; [done |].
      destruct Gth as (? & ? & _). unfold next_iter. case_decide; simpl; auto.
    - (* LFinal *)
      destruct (th s t) eqn:Hth; try discriminate. specialize (Gth t). rewrite Hth in Gth.
      destruct (applied md s (hst s (cc s)) t m) eqn:Ha; injection H as <-.
      + apply ginv_add_uret; [apply ginv_set_th; [done | simpl; done] |].
        unfold applied in Ha. apply bool_decide_eq_true in Ha.
        destruct Gth as [_ Hown]. exact (applied_entry s t u m G Hown Ha).
      + apply ginv_set_th; [done | simpl; done].
  Qed.

  Lemma reach_ginv s : reach md s → ginv s.
  Proof. induction 1; [apply ginv_init | by eapply ginv_step]. Qed.

  (** ** The theorems for the numbered protocol *)

  (** The committed log is a sequential run of the object from [σ0], and
      [curComb]'s replica holds its end. *)
  Theorem redo_f3_numbered_log_sequential s :
    reach md s → seq_ok σ0 (glog s) ∧ hobj s (cc s) = run_from σ0 (glog s).
  Proof. intros Hr. pose proof (reach_ginv s Hr) as G. split; apply G. Qed.

  (** TLC's [ResultsCorrect] for read-only transactions: a read that
      returned [v] (directly, or collected from a State after a combiner
      ran it) returned its function's result on a state of the commit
      order, the object after some prefix of the log. *)
  Definition reads_correct (s : state) : Prop :=
    ∀ t q v, (t, q, v) ∈ rrets s → ∃ l1 l2, glog s = l1 ++ l2 ∧ v = rexec q (run_from σ0 l1).

  Theorem redo_f3_numbered_reads_correct s : reach md s → reads_correct s.
  Proof. intros Hr. exact (g_rrets _ (reach_ginv s Hr)). Qed.

  (** TLC's [ResultsCorrect] for updates, in every reachable state, for any
      object, any number of threads and any MAX_READ_TRIES. *)
  Theorem redo_f3_numbered_results_correct s : reach md s → results_correct s.
  Proof.
    intros Hr. pose proof (reach_ginv s Hr) as G. intros t m u v Hin.
    destruct (g_rets _ G _ _ _ _ Hin) as (e & He & Ht & Hn & Hu & Hv).
    destruct (seq_ok_in _ _ _ (g_seq _ G) He) as (l1 & l2 & Hl & Hpre & Hev).
    exists e. split_and!; eauto.
    - rewrite <- Ht, <- Hn. apply filter_unique; [apply G | done].
    - rewrite Hu in Hev. simpl in Hev. congruence.
  Qed.
  End inv.
End f3.

(** ** F3 as written: an explicit run *)

(** The instance: two words [x1], [x2] (a pair); [Inc w] increments [x_w]
    and returns its new value (never 0); [Get w] reads [x_w]; 2 threads,
    MAX_READ_TRIES = 1, as [specs/ptm/mutants/RedoAsWrittenToggle.cfg]. *)
Inductive cop := Inc (w : nat).
Inductive gop := Get (w : nat).

Definition cexec (u : cop) (x : nat * nat) : (nat * nat) * nat :=
  match u with
  | Inc w => if decide (w = 1) then ((S x.1, x.2), S x.1) else ((x.1, S x.2), S x.2)
  end.
Definition cread (q : gop) (x : nat * nat) : nat :=
  match q with Get w => if decide (w = 1) then x.1 else x.2 end.

Notation cstate := (@state cop gop (nat * nat) nat).
Notation clabel := (@label cop gop).
Definition creach (md : announce) : cstate → Prop := reach cexec cread (0, 0) 0 2 1 md.
Definition crun (md : announce) : list clabel → cstate → option cstate := frun cexec cread 2 1 md.
Definition cinit : cstate := init (0, 0) 0.

Lemma crun_reach md ls s : crun md ls cinit = Some s → creach md s.
Proof. intros H. eapply frun_reach; [apply reach_init | exact H]. Qed.

(** TLC's counterexample ([RedoAsWrittenToggle.cfg], 27 states), here 16
    steps; thread 0 is TLC's t1, thread 1 its t2. *)
Definition f3_trace : list clabel :=
  [ LInvoke 0 (Rd (Get 1)); LRTry 0;                    (* t1's get(1): try 0 reads curComb = 0 *)
    LInvoke 1 (Upd (Inc 1)); LSnap 1; LPrepDone 1;      (* t2's inc(1): L2-L19 *)
    LScan 1; LScan 1; LScan 1; LCas 1;                  (* L20-L24 (runs inc(1)), L30: seq 1 *)
    LRFail 0;                                           (* L10: curComb moved *)
    LRTry 0; LRDirect 0;                                (* try 1: publish (L4-L5), succeed, return *)
    LInvoke 0 (Upd (Inc 2)); LSnap 0;                   (* t1's inc(2): L2-L3 toggles back *)
    LCopyApplied 0; LFinal 0 ].                         (* L19 breaks, L40-L50 return *)

Definition f3_final : cstate := default cinit (crun toggle f3_trace cinit).

Lemma f3_run : crun toggle f3_trace cinit = Some f3_final.
Proof.
  unfold f3_final. destruct (crun toggle f3_trace cinit) eqn:E; [done |].
  vm_compute in E. discriminate.
Qed.


(** F3 as written: thread 0's [inc(2)] (its second request) returns 0, a
    value [Inc 2] returns on no state, and no committed transition ran it:
    the state breaks [results_correct] (TLC's [ResultsCorrect]). *)
Theorem redo_f3_toggle_returns_unapplied :
  creach toggle f3_final ∧
  (0, 2, Inc 2, 0) ∈ urets f3_final ∧
  filter (λ e, (e_t e, e_n e) = (0, 2)) (glog f3_final) = [] ∧
  (∀ x, (cexec (Inc 2) x).2 ≠ 0) ∧
  ¬ results_correct cexec cread (0, 0) f3_final.
Proof.
  assert ((0, 2, Inc 2, 0) ∈ urets f3_final) as Hin.
  { assert (urets f3_final = [(1, 1, Inc 1, 1); (0, 2, Inc 2, 0)]) as -> by (vm_compute; reflexivity).
    apply elem_of_list_further, elem_of_list_here. }
  assert (filter (λ e, (e_t e, e_n e) = (0, 2)) (glog f3_final) = []) as Hf.
  { by vm_compute. }
  split_and!; [| done | done | |].
  - exact (crun_reach _ _ _ f3_run).
  - intros [a b]. vm_compute. lia.
  - intros Hrc. destruct (Hrc 0 2 (Inc 2) 0 Hin) as (e & He & _). rewrite Hf in He. discriminate.
Qed.

(** The same schedule with the fix: the copy path's check does not pass
    ([LCopyApplied] is not enabled), and the simulation runs [inc(2)],
    which commits seq 2 and returns 1. *)
Definition f3_prefix : list clabel := take 14 f3_trace.
Definition f3_fixed_trace : list clabel :=
  f3_prefix ++ [LPrepDone 0; LScan 0; LScan 0; LScan 0; LCas 0].
Definition f3_fixed_final : cstate := default cinit (crun numbered f3_fixed_trace cinit).

Lemma f3_fixed_run : crun numbered f3_fixed_trace cinit = Some f3_fixed_final.
Proof.
  unfold f3_fixed_final. destruct (crun numbered f3_fixed_trace cinit) eqn:E; [done |].
  vm_compute in E. discriminate.
Qed.

Theorem redo_f3_numbered_same_schedule :
  crun numbered (f3_prefix ++ [LCopyApplied 0]) cinit = None ∧
  creach numbered f3_fixed_final ∧ (0, 2, Inc 2, 1) ∈ urets f3_fixed_final ∧
  cc f3_fixed_final = 2.
Proof.
  split_and!.
  - by vm_compute.
  - exact (crun_reach _ _ _ f3_fixed_run).
  - assert (urets f3_fixed_final = [(1, 1, Inc 1, 1); (0, 2, Inc 2, 1)]) as -> by (vm_compute; reflexivity).
    apply elem_of_list_further, elem_of_list_here.
  - by vm_compute.
Qed.

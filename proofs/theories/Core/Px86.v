(** * Px86, line-granular: an operational semantics and the six examples

    The operational reading of [/work/shared/design/PX86.md], as the litmus
    engine [impl/perdure-check/src/litmus] implements it (and with the
    persistence rules of [impl/perdure-pm/src/px86.rs]):
    - per thread a program, a FIFO buffer of executed [store], [clflush],
      [clflushopt] and [sfence] entries ([entry]), and registers;
    - per cache line the sequence of stores that became visible to it, and a
      mark: how much of the sequence is guaranteed persisted;
    - an entry takes effect (leaves the buffer, [step_drain]) when every
      older entry of its thread lets it pass ([overtakes]):
      + a store passes only older [clflushopt]s of other lines ("younger
        stores (to other lines) may become visible before it");
      + a [clflush] is ordered like a store (it passes only [clflushopt]s,
        which it is not ordered with);
      + a [clflushopt x] passes older stores of other lines, [clflush]es and
        [clflushopt]s, but no older [sfence] and no older store to
        [line x] ("after all older stores of the thread to line(x) ... and
        all older fences");
      + an [sfence] passes nothing: it leaves the buffer when it is the
        oldest entry, so no younger store becomes visible before the older
        [clflushopt]s took effect;
      a store, when it takes effect, is appended to its line's sequence; a
      [clflush]/[clflushopt x] raises the mark of [line x] to the length of
      the sequence;
    - [load r x] reads the newest own buffered store to [x], else the visible
      value ([step_issue]);
    - a crash may come in any reachable state; each line independently
      persists a prefix of its sequence at least as long as its mark
      ([crash_ok], [persisted]).
    This is the litmus engine's machine with its buffer of stores, clflushes
    and sfences and its set of pending clflushopts merged into one buffer,
    where the pass rules say who may leave it first.

    Instruction set: [store], [load], [clflush], [clflushopt] (which covers
    [clwb], same semantics here) and [sfence] — what the six examples use.
    Not modelled: [mfence], locked RMWs ([cas]/[xchg]/[faa]) and [ntstore]
    (the litmus engine and its 60-test suite cover them); values of more than
    one location per store.

    Proved, for the six examples of PX86.md ([litmus] outcomes over the
    persisted locations, and registers):
    - SS [store x 1; store y 1], x=0 y=1: allowed ([ss_allowed]);
    - SS+sameline, x=0 y=1: forbidden ([ss_sameline_forbidden]);
    - clflush [store x 1; clflush x; store y 1], x=0 y=1: forbidden
      ([clflush_forbidden]);
    - clflushopt [store x 1; clflushopt x; store y 1], x=0 y=1: allowed
      ([clflushopt_allowed]);
    - clflushopt+sfence [store x 1; clflushopt x; sfence; store y 1],
      x=0 y=1: forbidden ([clflushopt_sfence_forbidden]);
    - MP+clflush [store x 1 ‖ load r1 x; clflush x; store y 1],
      r1=1 x=0 y=1: forbidden ([mp_clflush_forbidden]);
    and, so that no forbidden result is vacuous, an allowed outcome of each
    forbidden test (e.g. [ss_sameline_x1_y0_allowed], and the two [allow]
    lines of MP+clflush in PX86.md).

    Method.  An allowed outcome is shown by a schedule ([exec], checked by
    computation and turned into steps by [exec_steps]) and a crash choice.
    A forbidden outcome is shown by an inductive invariant found by
    computation: a finite set of states that contains the initial state and
    is closed under every step ([closed], decided by [vm_compute]; every
    step is among the enumerated successors, [step_succs]) and none of whose
    crash images ([images], complete by [crash_ok_images]) matches the
    outcome.  The set is computed by a search ([explore]) that need not be
    trusted: only its closure is used. *)
From stdpp Require Import base list decidable relations.
From Coq Require Import Lia.

Notation loc := nat (only parsing).
Notation val := nat (only parsing).
Notation reg := nat (only parsing).

Inductive instr :=
  | IStore (x : loc) (v : val)
  | ILoad (r : reg) (x : loc)
  | IClflush (x : loc)
  | IClflushopt (x : loc)
  | ISfence.

(** Executed, not yet taken effect. *)
Inductive entry :=
  | EStore (x : loc) (v : val)
  | EClflush (x : loc)
  | EClflushopt (x : loc)
  | ESfence.

Record tstate := TState {
  t_prog : list instr;       (* still to execute *)
  t_buf : list entry;        (* oldest first *)
  t_regs : list (reg * val); (* newest first *)
}.

Record state := State {
  s_threads : list tstate;
  s_lines : list (list (loc * val)); (* per line: the stores that became visible, in order *)
  s_marks : list nat;                (* per line: how many of them are persisted for sure *)
}.

Global Instance instr_eq_dec : EqDecision instr.
Proof. solve_decision. Defined.
Global Instance entry_eq_dec : EqDecision entry.
Proof. solve_decision. Defined.
Global Instance tstate_eq_dec : EqDecision tstate.
Proof. solve_decision. Defined.
Global Instance state_eq_dec : EqDecision state.
Proof. solve_decision. Defined.

(** The value of [x] after a sequence of stores (0 initially). *)
Definition seq_val (x : loc) (sts : list (loc * val)) : val :=
  foldl (λ acc st, if decide (st.1 = x) then st.2 else acc) 0 sts.

(** The newest buffered store to [x]. *)
Definition buf_val (x : loc) (b : list entry) : option val :=
  foldl (λ acc e, match e with EStore y v => if decide (y = x) then Some v else acc | _ => acc end)
    None b.

Fixpoint reg_val (regs : list (reg * val)) (r : reg) : option val :=
  match regs with
  | [] => None
  | (r', v) :: regs' => if decide (r' = r) then Some v else reg_val regs' r
  end.

Section model.
  (** The cache line of each location. *)
  Context (line : loc → nat).

  Definition line_of (s : state) (L : nat) : list (loc * val) := default [] (s_lines s !! L).
  Definition mark_of (s : state) (L : nat) : nat := default 0 (s_marks s !! L).

  (** The visible value of [x]. *)
  Definition visible (s : state) (x : loc) : val := seq_val x (line_of s (line x)).

  (** [overtakes e older]: [e] may take effect before the older entry. *)
  Definition overtakes (e older : entry) : Prop :=
    match e, older with
    | EStore x _, EClflushopt y => line y ≠ line x
    | EClflush _, EClflushopt _ => True
    | EClflushopt x, EStore y _ => line y ≠ line x
    | EClflushopt _, (EClflush _ | EClflushopt _) => True
    | _, _ => False
    end.
  Global Instance overtakes_dec e older : Decision (overtakes e older).
  Proof. destruct e, older; simpl; apply _. Defined.

  (** Executing the next instruction of a thread. *)
  Definition exec_instr (s : state) (i : instr) (th : tstate) : tstate :=
    match i with
    | IStore x v => TState (t_prog th) (t_buf th ++ [EStore x v]) (t_regs th)
    | IClflush x => TState (t_prog th) (t_buf th ++ [EClflush x]) (t_regs th)
    | IClflushopt x => TState (t_prog th) (t_buf th ++ [EClflushopt x]) (t_regs th)
    | ISfence => TState (t_prog th) (t_buf th ++ [ESfence]) (t_regs th)
    | ILoad r x =>
        let v := match buf_val x (t_buf th) with Some v => v | None => visible s x end in
        TState (t_prog th) (t_buf th) ((r, v) :: t_regs th)
    end.

  (** An entry taking effect on the lines and marks. *)
  Definition take_effect (e : entry) (s : state) : list (list (loc * val)) * list nat :=
    match e with
    | EStore x v => (<[line x := line_of s (line x) ++ [(x, v)]]> (s_lines s), s_marks s)
    | EClflush x | EClflushopt x =>
        (s_lines s, <[line x := length (line_of s (line x))]> (s_marks s))
    | ESfence => (s_lines s, s_marks s)
    end.

  Inductive step : state → state → Prop :=
    | step_issue s t th i p :
        s_threads s !! t = Some th → t_prog th = i :: p →
        step s (State (<[t := exec_instr s i (TState p (t_buf th) (t_regs th))]> (s_threads s))
                      (s_lines s) (s_marks s))
    | step_drain s t th b1 e b2 :
        s_threads s !! t = Some th → t_buf th = b1 ++ e :: b2 → Forall (overtakes e) b1 →
        step s (State (<[t := TState (t_prog th) (b1 ++ b2) (t_regs th)]> (s_threads s))
                      (take_effect e s).1 (take_effect e s).2).

  (** A crash keeps, of each line [L], the first [keep L] stores: at least
      the mark, at most all. *)
  Definition crash_ok (s : state) (keep : nat → nat) : Prop :=
    ∀ L, L < length (s_lines s) → mark_of s L ≤ keep L ≤ length (line_of s L).

  Definition persisted (s : state) (keep : nat → nat) (x : loc) : val :=
    seq_val x (take (keep (line x)) (line_of s (line x))).

  (** ** Outcomes *)

  (** Persisted location values, and register values [(thread, reg, val)]
      at the crash. *)
  Record outcome := Outcome { o_locs : list (loc * val); o_regs : list (nat * reg * val) }.

  Definition thread_reg (s : state) (t : nat) (r : reg) : option val :=
    th ← s_threads s !! t; reg_val (t_regs th) r.

  Definition matches (s : state) (keep : nat → nat) (O : outcome) : Prop :=
    Forall (λ xv, persisted s keep xv.1 = xv.2) (o_locs O) ∧
    Forall (λ trv, thread_reg s trv.1.1 trv.1.2 = Some trv.2) (o_regs O).

  Definition init (nlines : nat) (progs : list (list instr)) : state :=
    State (map (λ p, TState p [] []) progs) (replicate nlines []) (replicate nlines 0).

  (** Some execution and crash point yield outcome [O] ([allow O] of the
      litmus format); [forbid O] is its negation. *)
  Definition observable (nlines : nat) (progs : list (list instr)) (O : outcome) : Prop :=
    ∃ s keep, rtc step (init nlines progs) s ∧ crash_ok s keep ∧ matches s keep O.

  (** ** Schedules: exhibiting executions *)

  Inductive choice := Issue (t : nat) | Drain (t k : nat).

  Definition exec_choice (s : state) (c : choice) : option state :=
    match c with
    | Issue t =>
        th ← s_threads s !! t;
        match t_prog th with
        | [] => None
        | i :: p => Some (State (<[t := exec_instr s i (TState p (t_buf th) (t_regs th))]> (s_threads s))
                                (s_lines s) (s_marks s))
        end
    | Drain t k =>
        th ← s_threads s !! t;
        e ← t_buf th !! k;
        if decide (Forall (overtakes e) (take k (t_buf th))) then
          Some (State (<[t := TState (t_prog th) (take k (t_buf th) ++ drop (S k) (t_buf th)) (t_regs th)]>
                         (s_threads s)) (take_effect e s).1 (take_effect e s).2)
        else None
    end.

  Fixpoint exec (s : state) (cs : list choice) : option state :=
    match cs with
    | [] => Some s
    | c :: cs' => s' ← exec_choice s c; exec s' cs'
    end.

  Lemma exec_choice_step s c s' : exec_choice s c = Some s' → step s s'.
  Proof.
    destruct c as [t | t k]; simpl.
    - destruct (s_threads s !! t) as [th |] eqn:Hth; simpl; [| done].
      destruct (t_prog th) as [| i p] eqn:Hp; [done |]. intros [= <-].
      by eapply step_issue.
    - destruct (s_threads s !! t) as [th |] eqn:Hth; simpl; [| done].
      destruct (t_buf th !! k) as [e |] eqn:He; simpl; [| done].
      case_decide as Hpass; [intros [= <-] | done].
      eapply step_drain; [done | | done].
      symmetry. by apply take_drop_middle.
  Qed.

  Lemma exec_steps s cs s' : exec s cs = Some s' → rtc step s s'.
  Proof.
    revert s. induction cs as [| c cs IH]; simpl; intros s.
    - intros [= <-]. apply rtc_refl.
    - destruct (exec_choice s c) as [s1 |] eqn:Hc; simpl; [| done].
      intros Hexec. eapply rtc_l; [by apply (exec_choice_step s c) | by apply IH].
  Qed.

  (** ** Successors: every step, enumerated *)

  Fixpoint splits {A} (l : list A) : list (list A * A * list A) :=
    match l with
    | [] => []
    | x :: l' => ([], x, l') :: ((λ '(b1, y, b2), (x :: b1, y, b2)) <$> splits l')
    end.

  Lemma elem_of_splits {A} (l : list A) b1 x b2 : l = b1 ++ x :: b2 → (b1, x, b2) ∈ splits l.
  Proof.
    revert l. induction b1 as [| y b1 IH]; intros l ->; simpl; [by left |].
    right. apply elem_of_list_fmap. exists (b1, x, b2). split; [done |]. by apply IH.
  Qed.

  Definition thread_succs (s : state) (t : nat) (th : tstate) : list state :=
    match t_prog th with
    | [] => []
    | i :: p => [State (<[t := exec_instr s i (TState p (t_buf th) (t_regs th))]> (s_threads s))
                       (s_lines s) (s_marks s)]
    end ++
    omap (λ '(b1, e, b2),
            if decide (Forall (overtakes e) b1) then
              Some (State (<[t := TState (t_prog th) (b1 ++ b2) (t_regs th)]> (s_threads s))
                          (take_effect e s).1 (take_effect e s).2)
            else None)
      (splits (t_buf th)).

  Definition succs (s : state) : list state :=
    seq 0 (length (s_threads s)) ≫= λ t,
      match s_threads s !! t with Some th => thread_succs s t th | None => [] end.

  Lemma step_succs s s' : step s s' → s' ∈ succs s.
  Proof.
    intros Hstep. unfold succs. apply elem_of_list_bind.
    destruct Hstep as [s t th i p Hth Hp | s t th b1 e b2 Hth Hb Hpass];
      exists t; (split; [| apply elem_of_seq; apply lookup_lt_Some in Hth; lia]);
      rewrite Hth; unfold thread_succs.
    - rewrite Hp. apply elem_of_app. left. by left.
    - apply elem_of_app. right. apply elem_of_list_omap. exists (b1, e, b2). split.
      + apply elem_of_splits. done.
      + by rewrite decide_True.
  Qed.

  (** ** Invariants from closed sets of states *)

  Definition closed (S : list state) : Prop := Forall (λ s, Forall (λ s', s' ∈ S) (succs s)) S.

  Lemma closed_reachable S s0 s : closed S → s0 ∈ S → rtc step s0 s → s ∈ S.
  Proof.
    intros Hcl Hs0 Hr. induction Hr as [s | s1 s2 s3 H12 _ IH]; [done |].
    apply IH. unfold closed in Hcl. rewrite Forall_forall in Hcl.
    pose proof (Hcl s1 Hs0) as Hsucc. rewrite Forall_forall in Hsucc.
    by apply Hsucc, step_succs.
  Qed.

  (** A search for the reachable states (with fuel); only the closure of its
      result is used, checked separately. *)
  Fixpoint explore (fuel : nat) (todo seen : list state) : list state :=
    match fuel with
    | 0 => seen
    | S fuel' =>
        match todo with
        | [] => seen
        | s :: todo' =>
            if decide (s ∈ seen) then explore fuel' todo' seen
            else explore fuel' (succs s ++ todo') (s :: seen)
        end
    end.

  (** ** Crash images, enumerated *)

  Fixpoint product (rs : list (list nat)) : list (list nat) :=
    match rs with
    | [] => [[]]
    | r :: rs' => r ≫= λ k, (k ::.) <$> product rs'
    end.

  Lemma elem_of_product rs kl : Forall2 (λ k r, k ∈ r) kl rs → kl ∈ product rs.
  Proof.
    induction 1 as [| k r kl rs Hk _ IH]; simpl; [by left |].
    apply elem_of_list_bind. exists k. split; [| done].
    apply elem_of_list_fmap. by exists kl.
  Qed.

  Lemma product_elem_of rs kl : kl ∈ product rs → Forall2 (λ k r, k ∈ r) kl rs.
  Proof.
    revert kl. induction rs as [| r rs IH]; simpl; intros kl.
    - intros ->%elem_of_list_singleton. constructor.
    - intros (k & Hkl & Hk)%elem_of_list_bind. apply elem_of_list_fmap in Hkl as (kl' & -> & ?).
      constructor; [done |]. by apply IH.
  Qed.

  (** The crash choices of [s], as lists indexed by line. *)
  Definition images (s : state) : list (list nat) :=
    product ((λ L, seq (mark_of s L) (S (length (line_of s L)) - mark_of s L)) <$>
               seq 0 (length (s_lines s))).

  Definition keep_of (kl : list nat) : nat → nat := λ L, default 0 (kl !! L).

  Lemma images_crash_ok s kl : kl ∈ images s → crash_ok s (keep_of kl).
  Proof.
    intros Hkl%product_elem_of L HL. unfold keep_of.
    destruct (Forall2_lookup_r _ _ _ L (seq (mark_of s L) (S (length (line_of s L)) - mark_of s L)) Hkl)
      as (k & -> & Hk).
    { rewrite list_lookup_fmap, lookup_seq_lt; [done | exact HL]. }
    apply elem_of_seq in Hk. simpl. lia.
  Qed.

  (** Every crash choice agrees, on the persisted values, with one of the
      enumerated images. *)
  Lemma crash_ok_images s keep :
    crash_ok s keep → ∃ kl, kl ∈ images s ∧ ∀ x, persisted s keep x = persisted s (keep_of kl) x.
  Proof.
    intros Hok. exists (keep <$> seq 0 (length (s_lines s))). split.
    - apply elem_of_product.
      assert (∀ Ls, (∀ L, L ∈ Ls → L < length (s_lines s)) →
        Forall2 (λ k r, k ∈ r) (keep <$> Ls)
          ((λ L, seq (mark_of s L) (S (length (line_of s L)) - mark_of s L)) <$> Ls)) as HF.
      { induction Ls as [| L Ls IH]; intros HLs; simpl; constructor.
        - apply elem_of_seq. specialize (Hok L (HLs L ltac:(by left))). lia.
        - apply IH. intros L' ?. apply HLs. by right. }
      apply HF. intros L ?%elem_of_seq. lia.
    - intros x. unfold persisted, keep_of. f_equal.
      destruct (decide (line x < length (s_lines s))) as [Hlt | Hge].
      + by rewrite list_lookup_fmap, lookup_seq_lt.
      + unfold line_of. rewrite (lookup_ge_None_2 (s_lines s)) by lia. simpl. by rewrite !take_nil.
  Qed.

  Global Instance matches_dec s keep O : Decision (matches s keep O).
  Proof. apply _. Defined.

  (** [O] is not observable if a closed set containing the initial state has
      no crash image matching it. *)
  Lemma forbidden_by_invariant nlines progs O S :
    init nlines progs ∈ S → closed S →
    Forall (λ s, Forall (λ kl, ¬ matches s (keep_of kl) O) (images s)) S →
    ¬ observable nlines progs O.
  Proof.
    intros Hinit Hcl Hno (s & keep & Hr & Hok & Hm).
    pose proof (closed_reachable S _ s Hcl Hinit Hr) as Hs.
    rewrite Forall_forall in Hno. specialize (Hno s Hs). rewrite Forall_forall in Hno.
    destruct (crash_ok_images s keep Hok) as (kl & Hkl & Hsame).
    apply (Hno kl Hkl). destruct Hm as [Hlocs Hregs]. split; [| done].
    eapply Forall_impl; [exact Hlocs |]. intros xv Hxv. simpl in *. by rewrite <- Hsame.
  Qed.

  Lemma allowed_by_schedule nlines progs O cs s kl :
    exec (init nlines progs) cs = Some s → kl ∈ images s → matches s (keep_of kl) O →
    observable nlines progs O.
  Proof.
    intros Hexec Hkl Hm. exists s, (keep_of kl). split; [by eapply exec_steps |].
    split; [by apply images_crash_ok | done].
  Qed.
End model.

(** ** The six examples of PX86.md *)

(** Locations; [x] and [y] on lines 0 and 1, or both on line 0. *)
Definition x : loc := 0.
Definition y : loc := 1.
Definition r1 : reg := 1.
Definition two_lines (l : loc) : nat := l.
Definition same_line (l : loc) : nat := 0.

Definition x0_y1 : outcome := Outcome [(x, 0); (y, 1)] [].

(** Decides the closure and the absence of the outcome by computation. *)
Ltac forbid_by_search fuel :=
  match goal with
  | |- ¬ observable ?line ?n ?progs ?O =>
      apply (forbidden_by_invariant line n progs O (explore line fuel [init n progs] []));
      [apply (bool_decide_unpack _); vm_compute; reflexivity
      | apply (bool_decide_unpack _); vm_compute; reflexivity
      | apply (bool_decide_unpack _); vm_compute; reflexivity]
  end.

Ltac allow_by_schedule cs kl :=
  match goal with
  | |- observable ?line ?n ?progs ?O =>
      let r := eval vm_compute in (exec line (init n progs) cs) in
      match r with
      | Some ?s =>
          apply (allowed_by_schedule line n progs O cs s kl);
          [vm_compute; reflexivity | apply (bool_decide_unpack _); vm_compute; reflexivity
          | apply (bool_decide_unpack _); vm_compute; reflexivity]
      end
  end.

(** SS: [store x 1; store y 1], x and y on different lines. *)
Definition ss : list (list instr) := [[IStore x 1; IStore y 1]].

Theorem ss_allowed : observable two_lines 2 ss x0_y1.
Proof. allow_by_schedule [Issue 0; Issue 0; Drain 0 0; Drain 0 0] [0; 1]. Qed.

(** SS+sameline: the same program, x and y on one line: its stores persist
    in the order they became visible. *)
Theorem ss_sameline_forbidden : ¬ observable same_line 1 ss x0_y1.
Proof. forbid_by_search 1000. Qed.

Theorem ss_sameline_x1_y0_allowed : observable same_line 1 ss (Outcome [(x, 1); (y, 0)] []).
Proof. allow_by_schedule [Issue 0; Issue 0; Drain 0 0; Drain 0 0] [1]. Qed.

(** clflush: [store x 1; clflush x; store y 1]. *)
Definition clflush_prog : list (list instr) := [[IStore x 1; IClflush x; IStore y 1]].

Theorem clflush_forbidden : ¬ observable two_lines 2 clflush_prog x0_y1.
Proof. forbid_by_search 1000. Qed.

Theorem clflush_x1_y0_allowed :
  observable two_lines 2 clflush_prog (Outcome [(x, 1); (y, 0)] []).
Proof. allow_by_schedule [Issue 0; Issue 0; Issue 0; Drain 0 0; Drain 0 0] [1; 0]. Qed.

(** clflushopt: [store x 1; clflushopt x; store y 1]: the store to y may
    become visible, and persist, before the clflushopt takes effect. *)
Definition clflushopt_prog : list (list instr) := [[IStore x 1; IClflushopt x; IStore y 1]].

Theorem clflushopt_allowed : observable two_lines 2 clflushopt_prog x0_y1.
Proof.
  (* store x visible; store y passes the clflushopt of the other line *)
  allow_by_schedule [Issue 0; Issue 0; Issue 0; Drain 0 0; Drain 0 1] [0; 1].
Qed.

(** clflushopt+sfence: [store x 1; clflushopt x; sfence; store y 1]. *)
Definition clflushopt_sfence_prog : list (list instr) :=
  [[IStore x 1; IClflushopt x; ISfence; IStore y 1]].

Theorem clflushopt_sfence_forbidden : ¬ observable two_lines 2 clflushopt_sfence_prog x0_y1.
Proof. forbid_by_search 1000. Qed.

Theorem clflushopt_sfence_x1_y0_allowed :
  observable two_lines 2 clflushopt_sfence_prog (Outcome [(x, 1); (y, 0)] []).
Proof. allow_by_schedule [Issue 0; Issue 0; Drain 0 0] [1; 0]. Qed.

(** MP+clflush: [store x 1 ‖ load r1 x; clflush x; store y 1]: thread 1
    saw x=1, so its clflush covers thread 0's store. *)
Definition mp_clflush_prog : list (list instr) :=
  [[IStore x 1]; [ILoad r1 x; IClflush x; IStore y 1]].

Definition r1_1_x0_y1 : outcome := Outcome [(x, 0); (y, 1)] [(1, r1, 1)].

Theorem mp_clflush_forbidden : ¬ observable two_lines 2 mp_clflush_prog r1_1_x0_y1.
Proof. forbid_by_search 1000. Qed.

(** The two [allow] lines of MP+clflush in PX86.md. *)
Theorem mp_clflush_r1_1_x1_y1_allowed :
  observable two_lines 2 mp_clflush_prog (Outcome [(x, 1); (y, 1)] [(1, r1, 1)]).
Proof.
  allow_by_schedule [Issue 0; Drain 0 0; Issue 1; Issue 1; Issue 1; Drain 1 0; Drain 1 0] [1; 1].
Qed.

Theorem mp_clflush_x0_y0_allowed :
  observable two_lines 2 mp_clflush_prog (Outcome [(x, 0); (y, 0)] []).
Proof. allow_by_schedule (@nil choice) [0; 0]. Qed.
